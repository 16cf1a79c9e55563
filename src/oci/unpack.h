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

/* Which entries of a layer to write: keep(rel, type, ctx) is asked for
 * every entry but directories and whiteouts (always applied) of layers
 * from index `from` on; 0 leaves the entry out.  rel is normalised
 * ("usr/lib/x.so"), type an AE_IF* file type. */
struct eb_unpack_filter {
	size_t from;
	int (*keep)(const char *rel, unsigned type, void *ctx);
	void *ctx;
};
/* eb_oci_unpack() with a filter (NULL: everything). */
int eb_oci_unpack_filtered(const char *dir, const char *const *layers,
			   const char *const *diff_ids, size_t n,
			   const struct eb_unpack_filter *filter, struct eb_error **err) EB_WUR;

#endif
