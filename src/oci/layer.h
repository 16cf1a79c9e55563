/*
 * layer.h - build one image layer deterministically and stream it into the
 * blob store.
 *
 * A builder collects entries (files from disk or memory, directories,
 * symlinks, hardlinks, whole trees); eb_layer_write() then emits them as a
 * tar in one pass, hashing the tar (diff_id), compressing it (gzip, zstd or
 * none, on every core: see oci/compress.h), hashing the compressed bytes
 * (digest) and writing them to a blob writer; tar, both hashes and the
 * write run in the caller's thread while worker threads compress.  Memory stays bounded: file contents are read from disk in chunks
 * while the tar is written, never held whole.
 *
 * The output depends only on the entries and the options, never on the
 * host: entries are sorted bytewise by path, every missing parent
 * directory is emitted (mode 0755, owner 0:0) before its children, every
 * mtime is options.epoch, atime/ctime/xattrs/uname/gname are not written,
 * uid/gid of added entries come from the options (or from
 * eb_layer_set_last_owner()), and permission bits are
 * options.chmod when set, else normalised (directories
 * 0755; files 0755 when any execute bit is set, else 0644; symlinks 0777)
 * unless options.keep_modes is set.  The tar is libarchive's restricted pax
 * (ustar unless a long path, a big file or a non-ASCII name needs a pax
 * record); gzip output is a multi-member stream of independent 1 MiB
 * chunks, each member with MTIME 0, no name and OS 255 (oci/compress.h),
 * identical whatever the thread count.
 *
 * Paths inside the layer are given with or without a leading '/'; "//" and
 * "." are collapsed; any ".." component is rejected.  Adding a path that is
 * already in the builder REPLACES the earlier entry (as a later COPY does),
 * whatever the types.  A hardlink names another path of the layer; at write
 * time each group of hardlinked paths is emitted as one regular file at the
 * bytewise-first path with hardlinks to it from the others, so tar readers
 * always meet the file before its links.
 *
 * Ownership: eb_layer_builder_new() returns a builder freed with
 * eb_layer_builder_free(); add functions copy their arguments.  Results are
 * plain values (media_type points to a static string).
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_LAYER_H
#define EB_OCI_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "oci/blobstore.h"
#include "util/digest.h"
#include "util/error.h"

#define EB_MEDIA_LAYER_TAR "application/vnd.oci.image.layer.v1.tar"
#define EB_MEDIA_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define EB_MEDIA_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"

/* Bumped whenever the bytes eb_layer_write() emits for the same input may
 * change; part of every cache key. */
#define EB_LAYER_FORMAT_VERSION 1

enum eb_layer_compression {
	EB_LAYER_GZIP = 0,
	EB_LAYER_ZSTD = 1,
	EB_LAYER_NONE = 2,
};

struct eb_layer_options {
	enum eb_layer_compression compression;
	int level;       /* 0 = default: gzip 6 (1..9), zstd 3 (1..19) */
	int64_t epoch;   /* mtime of every entry, >= 0 (SOURCE_DATE_EPOCH) */
	uint32_t uid;    /* owner of every entry */
	uint32_t gid;
	int keep_modes;  /* 1: keep permission bits (07777) as given/found */
	/* Non-zero: the permission bits of every file and directory added
	 * (COPY --chmod); implicit parents and symlinks are not affected. */
	unsigned chmod;
	/* Compression threads, 0 = the online CPUs (at most 8).  Never
	 * shapes a byte: the output is the same for any count. */
	unsigned threads;
	/* Called from the writing thread as the tar is written: bytes done
	 * and the total expected (file contents and headers; an estimate).
	 * Never shapes a byte, nor a cache key.  NULL: none. */
	void (*on_progress)(void *ud, uint64_t done, uint64_t total);
	void *progress_ud;
};

#define EB_LAYER_OPTIONS_INIT { EB_LAYER_GZIP, 0, 0, 0, 0, 0, 0, 0, NULL, NULL }

struct eb_layer_result {
	char digest[EB_DIGEST_STR_LEN + 1];  /* of the blob (compressed) */
	char diff_id[EB_DIGEST_STR_LEN + 1]; /* of the uncompressed tar */
	uint64_t size;                       /* blob size in bytes */
	uint64_t diff_size;                  /* uncompressed tar size */
	const char *media_type;              /* EB_MEDIA_LAYER_* (static) */
	char compressor[48];                 /* e.g. "gzip/libdeflate-1.14/chunk-1m/6": what made the bytes */
	size_t nentries;                     /* tar entries, implicit parents included */
	int cached;                          /* 1: taken from the layer cache, nothing compressed */
};

struct eb_layer_builder;

/* Defaults, then SOURCE_DATE_EPOCH from the environment when set (it must
 * be a non-negative decimal integer, else -EB_EINVALID). */
int eb_layer_options_from_env(struct eb_layer_options *o, struct eb_error **err);
/* Parse "gzip", "zstd" or "none". */
int eb_layer_compression_parse(const char *s, enum eb_layer_compression *out,
			       struct eb_error **err);
const char *eb_layer_media_type(enum eb_layer_compression c);
/* "gzip", "zstd" or "none": the name parse accepts and the lock records. */
const char *eb_layer_compression_name(enum eb_layer_compression c);
/* What makes the bytes for these options, e.g. "gzip/libdeflate-1.14/chunk-1m/6"
 * (oci/compress.h); part of every layer cache key and recorded in the lock. */
void eb_layer_compressor_id(const struct eb_layer_options *o, char out[48]);

struct eb_basefs;

struct eb_layer_builder *eb_layer_builder_new(void);
/* Place entries as Docker's COPY does over the base image fs (borrowed;
 * NULL = none, the default): every entry's parent components are resolved
 * through the base's symlinks (a directory's own path too), parent
 * directories that the base has (and the directory a tree is copied into)
 * are written with the base's mode and owner, those it lacks are created
 * 0755 0:0.  Writing fails when an entry would replace a base file with a
 * directory, or a base directory with a non-directory. */
void eb_layer_builder_set_base(struct eb_layer_builder *b, const struct eb_basefs *base);
void eb_layer_builder_free(struct eb_layer_builder *b);
/* Number of entries added (after replacements; implicit parents not counted). */
size_t eb_layer_builder_count(const struct eb_layer_builder *b);

/* Give the entry added last its own owner (numeric, as every owner here)
 * instead of the options' uid/gid: for sources whose entries carry one,
 * such as a .deb's data.  No-op on an empty builder. */
void eb_layer_set_last_owner(struct eb_layer_builder *b, uint32_t uid, uint32_t gid);

/* A regular file whose content is read from src when the layer is written.
 * src is lstat'ed now: it must be a regular file (a symlink is not
 * followed), and it must still have this size when written. */
int eb_layer_add_file(struct eb_layer_builder *b, const char *path, const char *src,
		      struct eb_error **err);
/* The same with the given permission bits instead of src's (a file in the
 * blob store, whose own mode says nothing of the entry's). */
int eb_layer_add_file_as(struct eb_layer_builder *b, const char *path, const char *src,
			 unsigned mode, struct eb_error **err);
/* A regular file of size bytes kept compressed in src, at [offset, offset
 * + csize), raw deflate or stored (oci/inflate.h: a zip member's data),
 * whose content has the sha256 digest ("sha256:<hex>"): decompressed when
 * the layer is written, and the write fails unless the bytes have that
 * digest.  src must stay as it is until then. */
int eb_layer_add_member(struct eb_layer_builder *b, const char *path, const char *src,
			uint64_t offset, uint64_t csize, int method, uint64_t size,
			const char *digest, unsigned mode, struct eb_error **err) EB_WUR;
/* A regular file with the given content (copied) and permission bits. */
int eb_layer_add_bytes(struct eb_layer_builder *b, const char *path, const void *data,
		       size_t len, unsigned mode, struct eb_error **err);
int eb_layer_add_dir(struct eb_layer_builder *b, const char *path, unsigned mode,
		     struct eb_error **err);
/* target is stored verbatim (it may be relative or absolute). */
int eb_layer_add_symlink(struct eb_layer_builder *b, const char *path, const char *target,
			 struct eb_error **err);
/* target is another path of this layer; it must be a regular file (or a
 * hardlink to one) when the layer is written. */
int eb_layer_add_hardlink(struct eb_layer_builder *b, const char *path, const char *target,
			  struct eb_error **err);
/*
 * Add src (a directory, walked recursively, or a single file) at
 * dest_prefix ("" or "/" = the layer root).  A single file goes to
 * dest_prefix itself, or into it when dest_prefix ends in '/' or is
 * empty (as COPY does).  src itself is resolved with
 * stat(2); inside the walk symlinks are never followed and are kept as
 * symlinks.  Files sharing (dev, ino) become one file and hardlinks to it.
 * Devices, sockets and fifos are refused with an error naming the file.
 *
 * excludes are util/glob patterns matched against the path relative to
 * src ('*' does not cross '/', "**" matches any number of components,
 * none included; a leading '/' anchors to src, which relative patterns are
 * anyway); a pattern without '/' matches any basename; a pattern ending in
 * '/' matches only directories; an excluded directory excludes its whole
 * subtree.  A malformed pattern fails with EB_EINVALID.  They do not apply
 * when src is a file.
 */
int eb_layer_add_tree(struct eb_layer_builder *b, const char *src, const char *dest_prefix,
		      const char *const *excludes, size_t nexcludes, struct eb_error **err);
/* Return 1 to leave out rel (relative to the walked src; is_dir: a
 * directory, whose subtree then goes too). */
typedef int (*eb_layer_filter_fn)(void *ud, const char *rel, int is_dir);
/* The same, with filter asked about every node the excludes keep (the
 * build's project rules: .git, the output, the lock, ignore files). */
int eb_layer_add_tree_filtered(struct eb_layer_builder *b, const char *src,
			       const char *dest_prefix, const char *const *excludes,
			       size_t nexcludes, eb_layer_filter_fn filter, void *filter_ud,
			       struct eb_error **err);

/* Write the layer into bs; fills *res (res->cached = 0).  Fails when a
 * file cannot be read or changed since it was added (size, or content
 * when the cache key was computed), when a path sits under a non-directory,
 * or when a hardlink target is missing; nothing is stored then. */
int eb_layer_write(struct eb_layer_builder *b, const struct eb_layer_options *o,
		   struct eb_blobstore *bs, struct eb_layer_result *res, struct eb_error **err);

/* sha256 over a canonical description of the layer: EB_LAYER_FORMAT_VERSION,
 * the libarchive version, the compressor (name, library version, level),
 * epoch, and every entry in
 * output order (path, type, normalised mode, uid/gid, link target, sha256
 * of file content).  Reads and hashes every file; the hashes are kept, so
 * a later eb_layer_write() fails if a file changed in between. */
int eb_layer_cache_key(struct eb_layer_builder *b, const struct eb_layer_options *o,
		       char key_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err);

/* Like eb_layer_write(), but first look the cache key up in
 * <root>/layers/<hex>.json: when found and the blob is still in bs (right
 * size), return that result with res->cached = 1 and compress nothing.
 * Otherwise write the layer and record it.  key_out may be NULL; it is
 * filled on success.
 *
 * File contents are not read to make the key when they need not be: the
 * file-hash cache, <root>/filehash/<hex>.bin (one per set of disk sources:
 * tree + excludes, single files), maps each file's (path, device, inode,
 * size, mtime, ctime, mode) to the sha256 of its content, as git's index
 * does.  A file whose stat, as seen when it was added, matches a record
 * is not read, unless the record is racy: mtime or ctime not 2 s older
 * than when the recorded content was read, where a later change could
 * have kept both.  So an unchanged tree costs the lstat calls of
 * eb_layer_add_tree() and no read.
 *
 * When some content is unknown, the layer's shape (the key with file sizes
 * for digests) decides: if a layer of that shape was ever recorded
 * (<root>/layers/<hex>.shape), the unknown files are hashed first and the
 * key looked up, so touched files or a fresh checkout of the same files
 * still hit.  Otherwise the layer is not in the cache (a cold build, an
 * edit that changed a size; an index recorded without its shape, as by an
 * older envbuild, only costs one rebuild): it is written straight away,
 * each unknown file hashed from the very bytes put into the tar, and the
 * key made and recorded afterwards, so every file is read once.  Content
 * already hashed (from the cache or before) is checked while it is
 * written; a mismatch fails as eb_layer_write() does.  Cache files are
 * replaced atomically; a damaged one is ignored. */
int eb_layer_write_cached(struct eb_layer_builder *b, const struct eb_layer_options *o,
			  struct eb_blobstore *bs, struct eb_layer_result *res,
			  char key_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err);

/* ---- test instrumentation, not for production callers ---- */

/* Regular files whose content this process has opened for reading through
 * this module (to hash or to write them), across all builders and threads:
 * lets a test prove that a path read nothing, even as root. */
uint64_t eb_layer_test_files_read(void);
/* Move the clock that stamps file-hash records this many seconds ahead
 * (0 = the real clock), so a test can make files it has just written look
 * old, or racy, without sleeping. */
void eb_layer_test_set_clock_skew(int64_t seconds);

#endif
