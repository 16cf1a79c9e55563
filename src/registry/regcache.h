/*
 * regcache.h - a build cache shared through a registry: a backend behind
 * the local cache directory (oci/cache.h) that keeps each cache record as
 * an OCI artifact in one repository, so that a fresh CI runner finds the
 * layers another runner built.
 *
 * One record per key: the artifact tagged "<kind>-<key hex>" (artifactType
 * EB_REGCACHE_ARTIFACT_TYPE) whose only layer is the blob the record names
 * and whose annotation EB_REGCACHE_RECORD_ANNOTATION holds the record.
 * Per-key records make concurrent runners safe: the last writer of a key
 * wins, and no writer can drop another key's record.  A record read back
 * is checked before it is believed: its kind and key are the ones asked
 * for, and its digest and size are those of the artifact's layer, which
 * the registry only accepts when it holds that blob.  The blob's bytes are
 * checked against the digest whenever they are fetched (blob store), so a
 * tampered record can make envbuild use a blob it did not build, but never
 * bytes that differ from what the record says (specs/envbuild-yaml.md).
 *
 * Records written during a build are queued and pushed when the blob store
 * is freed, in one push (blobs in parallel, then the manifests, then the
 * tags); a failure to push costs another runner a rebuild, never this
 * build.  Hits are lazy: the blob stays in the registry until something
 * needs its bytes (eb_cache_fetch), so a push mounts it instead.
 *
 * May use: registry/client.h, oci/, util/.  Never prints.
 *
 * Ownership: the registry client is borrowed and must outlive the blob
 * store; the backend is freed with the blob store.
 */
#ifndef EB_REGISTRY_REGCACHE_H
#define EB_REGISTRY_REGCACHE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/blobstore.h"
#include "util/error.h"

#define EB_REGCACHE_ARTIFACT_TYPE "application/vnd.envbuild.cache.record.v1+json"
#define EB_REGCACHE_RECORD_ANNOTATION "dev.envbuild.cache.record"

struct eb_registry;

/* Attach the repository from_ref (read; NULL: none) and to_ref (written;
 * NULL: none) as the shared cache behind bs.  Both are repository
 * references without tag ("127.0.0.1:5000/ml/cache").  Counters of what
 * the cache did go to stats when non-NULL (it must outlive bs). */
struct eb_regcache_stats {
	unsigned hits, misses, rejected, records_pushed;
	/* records this run meant to push and could not: another runner
	 * builds those layers again; push_error says why (the first) */
	unsigned records_failed;
	char push_error[256];
	uint64_t bytes_uploaded; /* blob bytes the records' push sent */
	/* the records used from the shared cache, for the run-time note:
	 * [{"kind", "digest", "checked": bool}] (owned; json_decref), filled
	 * by the build (assemble/build.c) */
	json_t *used;
};
int eb_regcache_attach(struct eb_blobstore *bs, struct eb_registry *r, const char *from_ref,
		       const char *to_ref, struct eb_regcache_stats *stats, struct eb_error **err);

/* The record in a cache artifact's manifest bytes (untrusted: from the
 * registry): 1 and *out (the caller's) when it is an artifact of our type
 * for kind/key whose record names exactly its one layer; else 0. */
int eb_regcache_record_parse(const void *data, size_t len, const char *kind, const char *key,
			     json_t **out);

/* Blobs (a base image's layers) that repo_ref holds, fetched into bs
 * (verified) only when something asks for their bytes (eb_cache_fetch):
 * a fresh runner whose detection and base view come from the shared
 * cache never downloads them. */
struct eb_descriptor;
void eb_regcache_attach_blobs(struct eb_blobstore *bs, struct eb_registry *r,
			      const char *repo_ref, const struct eb_descriptor *blobs, size_t n);

#endif
