/*
 * cache.h - the cache seam: one interface over everything envbuild keeps
 * between runs.  Two kinds of entry:
 *
 *  - blobs, content-addressed (put/get/has/verify: oci/blobstore.h), and
 *  - records, input key -> descriptor: "the layer made from these inputs
 *    is this blob".  A record is a small JSON object with at least
 *    "digest" and "size" of the blob it names, plus fields of the cache
 *    that wrote it (a layer's diff_id, a media type).  Its kind names
 *    the cache: "layers" (files layers, oci/layer.c), "pylayers" (package
 *    layers, assemble/pyinstall.c), "pytarget" (base detection, whose result
 *    is itself a blob), "basefs" (a base's file tree from its tar
 *    headers, oci/basefs.c).
 *
 * The local directory (the blob store, oci/blobstore.c) is the first
 * implementation and always the front: records live at
 * <root>/<kind>/<key hex>.json next to blobs/sha256/.  A record is only a
 * hit when the blob it names is in the store and sound (re-hashed once
 * per process, evicted on a mismatch), so a record can never hand out
 * bytes that differ from what it says.
 *
 * Further implementations plug in behind the local one as backends
 * (struct eb_cache_backend), e.g. a registry-backed cache in registry/:
 * on a local miss the store asks each backend in turn and copies a hit's
 * blob in (through a blob writer, which checks the digest, or by the
 * backend's own verified path into the store), so that bad bytes are a
 * miss; a lazy store (eb_cache_set_lazy: a push, which mounts blobs
 * instead of moving them) takes a hit whose blob the backend says it
 * holds (has) without the bytes, copied in only when someone needs them
 * (eb_cache_fetch).  Records put locally are offered to backends that
 * take writes.  oci/ calls the functions below and never knows the
 * network.
 *
 * May use: util/, jansson.  Never: network, printing.
 *
 * Ownership: records returned are the caller's (json_decref); a backend's
 * self is handed to the store with eb_cache_attach() and freed by the
 * backend's free() when the store is freed.
 */
#ifndef EB_OCI_CACHE_H
#define EB_OCI_CACHE_H

#include <jansson.h>
#include <stdint.h>

#include "util/error.h"

/* The local store and its writer are oci/blobstore.h, which implements
 * this header (a forward declaration keeps the include one way). */
struct eb_blobstore;
struct eb_blob_writer;

/* A cache implementation behind the local directory.  Any function may be
 * NULL: that operation is not offered (a read-only cache has no put). */
struct eb_cache_backend {
	const char *name; /* for messages: "registry registry.example.com/ml/cache" */
	/* 1 when the backend holds the blob (size when >= 0). */
	int (*has)(void *self, const char *digest, int64_t size);
	/* Write the blob's bytes to w (eb_blob_writer_write); the store
	 * commits with the expected digest, so a lying backend stores
	 * nothing.  A backend with a verified path into the store of its
	 * own may write nothing to w and put the blob there itself.
	 * -EB_ENOTFOUND when it does not hold it. */
	int (*get)(void *self, const char *digest, int64_t size, struct eb_blob_writer *w,
		   struct eb_error **err);
	/* Take a copy of the local blob at path. */
	int (*put)(void *self, const char *digest, int64_t size, const char *path,
		   struct eb_error **err);
	/* 1 and *out (the caller's) on a hit, 0 on a miss, < 0 on failure. */
	int (*record_get)(void *self, const char *kind, const char *key, json_t **out,
			  struct eb_error **err);
	int (*record_put)(void *self, const char *kind, const char *key, const json_t *rec,
			  struct eb_error **err);
	void (*free)(void *self);
};

/* Add a backend behind the local directory (asked in the order added). */
void eb_cache_attach(struct eb_blobstore *bs, const struct eb_cache_backend *be, void *self);

/* The record of key (a digest string: "sha256:<hex>") in kind: 1 and *out
 * when it names a blob that is in the store and sound, or, in a lazy
 * store, that a backend holds (then eb_cache_fetch() before reading the
 * bytes); 0 on a miss.  Any trouble with a
 * record is a miss: it is only a cache. */
int eb_cache_record_get(struct eb_blobstore *bs, const char *kind, const char *key,
			json_t **out);
/* What became of a record a backend (the shared cache) answered: used
 * with its blob fetched and its diff_id (if any) checked against the
 * bytes; used without the bytes (lazy: a push mounts them); or refused
 * (the layer does not have the record's diff_id: a miss). */
enum eb_cache_shared {
	EB_CACHE_SHARED_VERIFIED,
	EB_CACHE_SHARED_UNVERIFIED,
	EB_CACHE_SHARED_REJECTED,
};
typedef void (*eb_cache_shared_fn)(void *ud, const char *kind, const char *key,
				   const json_t *rec, enum eb_cache_shared how);
/* Call fn for every record a backend answered (serialised: one call at a
 * time, from any thread), so the caller can say which records came from
 * the shared cache. */
void eb_cache_on_shared(struct eb_blobstore *bs, eb_cache_shared_fn fn, void *ud);

/* lazy = 1: a backend's hit needs no local copy of its blob (see above). */
void eb_cache_set_lazy(struct eb_blobstore *bs, int lazy);

/* How a layer record a backend gives is checked before it is used: 1 when
 * the local blob decompresses to diff_id (oci/diffcheck.h's
 * eb_diffcheck_layer, set by whoever attaches a backend: a hook, so the
 * store itself needs no decompressor).  Without one, a backend's record
 * that names a diff_id is refused as a lie would be (fail closed). */
typedef int (*eb_cache_layer_check_fn)(const struct eb_blobstore *bs, const char *digest,
				       const char *diff_id);
void eb_cache_set_layer_check(struct eb_blobstore *bs, eb_cache_layer_check_fn fn);

/* 1 when backends are attached: a local hint that something was never
 * seen here ("no record of this shape") does not rule out a hit. */
int eb_cache_has_backends(const struct eb_blobstore *bs);

/* Record key -> rec in kind (rec must have "digest" and "size"); written
 * atomically, then offered to the backends.  A failure is returned, but a
 * caller may ignore it: a missing record only costs a rebuild. */
int eb_cache_record_put(struct eb_blobstore *bs, const char *kind, const char *key,
			const json_t *rec, struct eb_error **err);

/* Make sure the blob is in the local store: 0 when it is (sound) or a
 * backend had it, -EB_ENOTFOUND when nobody has it. */
int eb_cache_fetch(struct eb_blobstore *bs, const char *digest, int64_t size,
		   struct eb_error **err);

#endif
