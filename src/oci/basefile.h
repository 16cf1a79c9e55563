/*
 * basefile.h - the bytes of one regular file of a base image, found
 * through its file-tree view (oci/basefs.h): the bytes the view keeps
 * (/etc/passwd, /etc/group, /etc/login.defs, dpkg's status), or else the
 * layer and entry the view names, opened and read up to there.  For the
 * few files a build must read of its base.
 *
 * Uses libarchive (through oci/layerin.h), oci/basefs.h and util/ only;
 * never writes.  Ownership: the caller owns *out (an eb_buf).
 */
#ifndef EB_OCI_BASEFILE_H
#define EB_OCI_BASEFILE_H

#include <stddef.h>

#include "oci/basefs.h"
#include "util/buf.h"
#include "util/error.h"

/* Read `path` of the base (symlinks followed as a chroot would) into out,
 * at most max bytes (-EB_ETOOBIG beyond).  layers[i] is the blob path of
 * the view's layer i.  Returns 1 when read, 0 when the base has no
 * regular file there (out left empty), <0 on error. */
int eb_basefile_read(const struct eb_basefs *fs, const char *const *layers, size_t nlayers,
		     const char *path, size_t max, struct eb_buf *out, struct eb_error **err);

#endif
