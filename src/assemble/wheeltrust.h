/*
 * wheeltrust.h - what ties a locked wheel to an authority under --frozen,
 * when nothing is asked of the index: a sha256 the requirements file pins
 * (--hash, or a direct URL's #sha256=), or, for a pin without hashes, a
 * note this machine's cache wrote when the index served that file with
 * that sha256 (a build or lock that took it from the index).  The lock
 * alone is no authority: a pull request can edit it.
 *
 * Notes are local files, <cache>/pyserved/<sha256 hex> holding the file
 * names served under that hash, one a line; never offered to the shared
 * cache (whoever may write there could vouch for anything).
 *
 * Layering: assemble/ (uses oci/blobstore for the root, pin/ for the
 * requirement, util/).  Never prints.
 */
#ifndef EB_ASSEMBLE_WHEELTRUST_H
#define EB_ASSEMBLE_WHEELTRUST_H

#include "pin/requirement.h"
#include "util/error.h"

struct eb_blobstore;

/* Note that the index served filename with sha256 (hex); failures are
 * ignored (a missing note costs a --locked run, not a wrong image). */
void eb_wheeltrust_note(struct eb_blobstore *bs, const char *sha256, const char *filename);
/* 0 when the lock's sha256 (hex) of filename is pinned by req or was
 * noted as served; else -EB_EINVALID (a pin's hashes differ: the lock was
 * edited) or -EB_EFAIL (nothing vouches for it here), saying which. */
int eb_wheeltrust_check(struct eb_blobstore *bs, const struct eb_requirement *req,
			const char *sha256, const char *filename, struct eb_error **err);

#endif
