/*
 * blobstore.h - a content-addressed blob cache: <root>/blobs/sha256/<hex>.
 *
 * The same directory shape as an OCI image layout's blobs/, so a layout can
 * be filled by hard-linking (or copying) from the cache.  Every blob enters
 * through a writer that hashes what it is given, writes a temp file in
 * <root>/tmp/, fsyncs and renames it into place: a blob's bytes always match
 * its name, and a crash leaves at most a temp file, never a bad blob.  A
 * reader that finds a blob whose bytes do not match (disk corruption, a
 * foreign writer) removes it and reports it missing.
 *
 * Default root: $XDG_CACHE_HOME/envbuild, else $HOME/.cache/envbuild.
 *
 * Ownership: eb_blobstore_open() returns a store freed with
 * eb_blobstore_free(); a writer is freed by commit or abort; strings
 * returned are the caller's.
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_BLOBSTORE_H
#define EB_OCI_BLOBSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/digest.h"
#include "util/error.h"

struct eb_blobstore;
struct eb_blob_writer;

/* root NULL = the default cache directory; created when missing. */
int eb_blobstore_open(struct eb_blobstore **out, const char *root, struct eb_error **err);
void eb_blobstore_free(struct eb_blobstore *bs);
const char *eb_blobstore_root(const struct eb_blobstore *bs);
/* Path of a blob (whether or not it exists); caller frees. */
char *eb_blobstore_path(const struct eb_blobstore *bs, const char *digest);
/* 1 when the blob is present (size matches when size >= 0); no re-hash. */
int eb_blobstore_has(const struct eb_blobstore *bs, const char *digest, int64_t size);
/* Re-hash a present blob; a mismatch removes it and returns -EB_EINVALID. */
int eb_blobstore_verify(const struct eb_blobstore *bs, const char *digest, struct eb_error **err);

/* Streaming writer: bytes are hashed as they are written. */
int eb_blob_writer_open(struct eb_blob_writer **out, struct eb_blobstore *bs,
			struct eb_error **err);
int eb_blob_writer_write(struct eb_blob_writer *w, const void *data, size_t len,
			 struct eb_error **err);
uint64_t eb_blob_writer_size(const struct eb_blob_writer *w);
/* Finish: when expected is non-NULL the digest must equal it (else
 * -EB_EINVALID, nothing stored).  The digest goes to digest_out.  Frees w
 * in every case. */
int eb_blob_writer_commit(struct eb_blob_writer *w, const char *expected,
			  char digest_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err);
void eb_blob_writer_abort(struct eb_blob_writer *w);
/* Convenience: store a buffer. */
int eb_blobstore_put(struct eb_blobstore *bs, const void *data, size_t len,
		     char digest_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err);

/* ---- added after the first version of this contract ---- */

struct eb_buf;
/* Read a whole blob into out (appending), re-hashing it on the way: a
 * mismatch removes the blob and fails with -EB_EINVALID, leaving out as it
 * was; a missing blob is -EB_ENOTFOUND; more than max bytes (0 = no cap) is
 * -EB_ETOOBIG.  For manifests and configs, not for layers.
 *
 * Notes on the functions above: only sha256 blobs are stored, so
 * eb_blobstore_path() returns NULL for any other (or malformed) digest and
 * eb_blobstore_has() returns 0.  Committed blobs are mode 0444. */
int eb_blobstore_read(const struct eb_blobstore *bs, const char *digest, struct eb_buf *out,
		      size_t max, struct eb_error **err);

#endif
