/*
 * rootfs.h - an image's filesystem unpacked into a directory, for the
 * confined runner (sandbox/) to mount read-only as /: the layers applied
 * oldest first with their OCI whiteouts.
 *
 * Made once per set of layers and kept in the cache directory
 * (<cache>/rootfs/<key>/, key: the sha256 of the layers' digests), so a
 * second build step on the same image unpacks nothing.  The tree is
 * written under a temporary name and renamed into place whole, by
 * oci/unpack.h: owners are not restored (the runner's user reads the
 * tree; modes are kept); devices, fifos and sockets are skipped; no entry
 * is written through a symlink, above the directory, or at an absolute
 * path.
 *
 * Uses oci/unpack.h, the blob store and util/ only.  Ownership: the path
 * returned is the caller's.
 */
#ifndef EB_OCI_ROOTFS_H
#define EB_OCI_ROOTFS_H

#include <stddef.h>

#include "oci/blobstore.h"
#include "util/error.h"

/* The tree of layers[0..n) (paths of layer blobs of bs, named by their
 * digest; oldest first) in *dir, unpacked now or found from an earlier
 * run. */
int eb_rootfs_get(struct eb_blobstore *bs, const char *const *layers, size_t n, char **dir,
		  struct eb_error **err);

#endif
