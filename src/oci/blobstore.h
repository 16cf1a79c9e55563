/*
 * blobstore.h - a content-addressed blob cache: <root>/blobs/sha256/<hex>.
 *
 * The same directory shape as an OCI image layout's blobs/.  A layout is
 * filled with copies or reflinks from the cache (eb_blobstore_export),
 * never hard links: an edited output must not change the cache that every
 * other project shares.  Every blob enters
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
/* Frees the store after eb_blobstore_sync(). */
void eb_blobstore_free(struct eb_blobstore *bs);

/* Makes every blob committed so far durable (one syncfs() for all) and
 * only then stamps them as verified.  Commits do not fsync each blob;
 * call this before anything outside the cache depends on those bytes
 * surviving a power cut.  Freeing the store calls it. */
void eb_blobstore_sync(struct eb_blobstore *bs);
const char *eb_blobstore_root(const struct eb_blobstore *bs);
/* Path of a blob (whether or not it exists); caller frees. */
char *eb_blobstore_path(const struct eb_blobstore *bs, const char *digest);
/* 1 when the blob is present (size matches when size >= 0) and sound: the
 * first time a process asks about a digest the blob is re-hashed, unless
 * its stamp (<root>/stamps/<hex>: device, inode, size, mtime, ctime when
 * it was last written or hashed; a blob under 64 KiB has none, as
 * re-hashing it costs less) still matches, and a blob that does not
 * match its name is removed (evicted) and reported absent, so that the
 * caller fetches or rebuilds it.  Later calls trust the name (the blobs
 * this process wrote or verified).  eb_blobstore_verify(), _read() and
 * _verify_all() always re-hash (and stamp what matched). */
int eb_blobstore_has(const struct eb_blobstore *bs, const char *digest, int64_t size);
/* 1 when a file of that name (and size, when >= 0) is there, without
 * re-hashing it: for callers that may not need the bytes (a push whose
 * registry already has the blob); whoever reads them asks
 * eb_blobstore_has() first. */
int eb_blobstore_present(const struct eb_blobstore *bs, const char *digest, int64_t size);
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

/* Put a copy of a blob at dst (a new file, mode 0644): a reflink (FICLONE)
 * where the file system shares extents, else a copy, hashed on the way
 * (or before, for a reflink of a blob not yet verified).  A blob whose size
 * differs from size (when >= 0) or whose bytes do not match its digest is
 * evicted from the store and nothing is left at dst (-EB_EINVALID).  The
 * copy is written and its write-back started, not yet durable: the caller
 * makes it so, with one sync for all the files it exports (a layout's
 * syncfs, oci/layout.c). */
int eb_blobstore_export(const struct eb_blobstore *bs, const char *digest, int64_t size,
			const char *dst, struct eb_error **err);

/* A staging directory <root>/tmp/<prefix>XXXXXX, held locked through
 * *lock_fd (close it after removing the directory) so that
 * eb_blobstore_open() in another process never sweeps it while it lives.
 * prefix is one of those the sweep knows: "pystage-" or "stage-". */
int eb_blobstore_mkdtemp(const struct eb_blobstore *bs, const char *prefix, char **path_out,
			 int *lock_fd, struct eb_error **err);

/* Called per blob by the maintenance walks: digest, its size, and why it
 * was reported (verify: the mismatch; prune: NULL). */
typedef void (*eb_blobstore_visit_fn)(void *ud, const char *digest, uint64_t size,
				      const char *why);

/* Re-hash every blob; each one that does not match its name is evicted and
 * reported to fn.  Returns the number of bad blobs, or a negative code. */
int eb_blobstore_verify_all(const struct eb_blobstore *bs, eb_blobstore_visit_fn fn, void *ud,
			    struct eb_error **err);

struct eb_prune_options {
	int64_t older_than; /* seconds since last use; < 0: no age limit */
	int64_t max_size;   /* bytes the blobs may keep; < 0: no size limit */
	int dry_run;        /* report, remove nothing */
};
struct eb_prune_result {
	size_t removed, kept;
	uint64_t removed_bytes, kept_bytes;
};
/* Remove blobs unused for longer than older_than, then the least recently
 * used until the rest fit in max_size; sweeps dead temporaries first.
 * Records naming a removed blob become misses: the next build makes or
 * fetches it again. */
int eb_blobstore_prune(const struct eb_blobstore *bs, const struct eb_prune_options *po,
		       eb_blobstore_visit_fn fn, void *ud, struct eb_prune_result *res,
		       struct eb_error **err);

#endif
