/*
 * unpack.h - an image's filesystem as a directory: layers extracted
 * oldest first, OCI whiteouts applied, for a program of the image to run
 * on (src/sandbox/).  Not an image and never packed again: owners are the
 * invoker's, device nodes and fifos are left out, and an entry that would
 * leave the directory (an absolute or ".." path, or a path through a
 * symlink: libarchive's secure-extraction checks) is skipped, not written.
 *
 * Uses libarchive, oci/layerin and util/ only; writes only under dir.
 * Ownership: the caller removes dir (eb_fs_remove_tree).
 */
#ifndef EB_OCI_UNPACK_H
#define EB_OCI_UNPACK_H

#include <stddef.h>

#include "util/error.h"

/* Extract layers[0..n) (blob paths, any compression; diff_ids[i] checked
 * when given and non-empty) into the existing, empty directory dir, then
 * make sure dir has /tmp, /proc and /dev (mount points for the sandbox)
 * and is searchable by everyone (mode 0755).  Honours Ctrl-C. */
int eb_oci_unpack(const char *dir, const char *const *layers, const char *const *diff_ids,
		  size_t n, struct eb_error **err) EB_WUR;

#endif
