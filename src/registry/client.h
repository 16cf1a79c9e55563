/*
 * client.h - registry operations on top of http.h/auth.h: resolve a
 * reference to a digest, pull an image's documents and blobs into the blob
 * store, and push images (blobs, manifests, indexes, then tags).
 *
 * Pull verifies everything: a manifest's digest over its bytes (and
 * against the digest asked for), every blob's digest and size while it is
 * streamed into the blob store; responses are capped (documents at
 * EB_IMAGE_DOC_MAX).  Both OCI and Docker schema 2 documents are accepted,
 * single manifests and indexes/manifest lists.
 *
 * Push order makes an incomplete image unreachable: every blob of every
 * image first (HEAD; cross-repository mount when the blob is known to live
 * in another repository of the same registry, falling back to upload on any
 * answer but 201; else POST + monolithic PUT, or chunked PATCH for blobs
 * above the chunk size, resuming from the registry's Range after a broken
 * transfer), each distinct blob once per repository even when several
 * images share it, several at a time; then image manifests, then indexes
 * — by digest — and the tags last, only when everything they point to is
 * in.  Docker-Content-Digest answers are checked against our digests.
 *
 * Ownership: eb_registry_new() returns a client freed with
 * eb_registry_free(); results are released with their _release function;
 * the blob store is borrowed.
 *
 * Layering (service floor): registry/ may use net/, oci/, ref/ and util/;
 * never python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_REGISTRY_CLIENT_H
#define EB_REGISTRY_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "net/http.h"
#include "util/error.h"

struct eb_registry;

enum eb_push_event_kind {
	EB_PUSH_BLOB_EXISTS,   /* HEAD found it: nothing sent */
	EB_PUSH_BLOB_MOUNTED,  /* cross-repository mount answered 201 */
	EB_PUSH_BLOB_START,    /* upload starts (size known) */
	EB_PUSH_BLOB_PROGRESS, /* bytes sent so far */
	EB_PUSH_BLOB_DONE,     /* upload committed (201, digest checked) */
	EB_PUSH_BLOB_RETRY,    /* a transfer broke; resuming or restarting */
	EB_PUSH_MANIFEST,      /* a manifest or index was put (by digest) */
	EB_PUSH_TAG,           /* a tag was put */
};

struct eb_push_event {
	enum eb_push_event_kind kind;
	const char *repository; /* "ml/churn" */
	const char *digest;
	const char *tag;        /* EB_PUSH_TAG only */
	uint64_t size;          /* blob size */
	uint64_t done;          /* bytes sent (PROGRESS, DONE) */
};

struct eb_registry_options {
	struct eb_http_options http; /* TLS, CA files, insecure hosts, retries */
	/* Blobs uploaded at once (default 4). */
	int concurrency;
	/* Blobs larger than this go up in PATCH chunks of this size; 0: always
	 * monolithic (the most widely supported path). */
	uint64_t chunk_size;
	/* Pull mirrors file (see specs/registries.md), or NULL: $ENVBUILD_MIRRORS. */
	const char *mirrors_file;
	/* Called from upload threads (serialised by the client). */
	void (*on_event)(void *userdata, const struct eb_push_event *ev);
	void *event_userdata;
};

int eb_registry_new(struct eb_registry **out, const struct eb_registry_options *o,
		    struct eb_error **err);
void eb_registry_free(struct eb_registry *r);
struct eb_http_client *eb_registry_http(struct eb_registry *r);

/* The top document a reference names (tag or digest), verified. */
struct eb_remote_doc {
	char *media_type;
	char digest[EB_DIGEST_STR_LEN + 1];
	struct eb_buf data;
};
void eb_remote_doc_release(struct eb_remote_doc *d);

/* GET the manifest or index `ref` names ("python:3.11-slim", "reg/x@sha256:..")
 * with an Accept of every OCI and Docker type; when ref has a digest the
 * bytes must hash to it. */
int eb_registry_get_manifest(struct eb_registry *r, const char *ref, struct eb_remote_doc *out,
			     struct eb_error **err);
/* HEAD only: the digest (Docker-Content-Digest, else by GET) and media
 * type; cheaper for "did the tag move?". */
int eb_registry_resolve(struct eb_registry *r, const char *ref,
			char digest[EB_DIGEST_STR_LEN + 1], char **media_type, struct eb_error **err);

/* Pull the image `ref` for `platform` (NULL: the only one): the top
 * document, the platform's manifest and the config into the blob store;
 * the layers too when fetch_layers is set.  Fills out like a layout read
 * (top = what the reference names, manifest_desc = the platform's). */
int eb_registry_pull(struct eb_registry *r, const char *ref, const struct eb_platform *platform,
		     struct eb_blobstore *bs, int fetch_layers, struct eb_layout_image *out,
		     struct eb_error **err);
/* Fetch one blob of repository `ref` into the blob store (verified). */
int eb_registry_fetch_blob(struct eb_registry *r, const char *ref, const struct eb_descriptor *d,
			   struct eb_blobstore *bs, struct eb_error **err);

/* One image to push: the top descriptor (a manifest or an index; its bytes
 * and those of everything it references are in the blob store, except
 * blobs listed in `sources`) and the tags to put on it. */
struct eb_push_image {
	const char *repository_ref; /* "127.0.0.1:5000/ml/churn" (no tag) */
	const struct eb_descriptor *top;
	const char *const *tags;    /* NULL-terminated; may be empty */
};

/* Where a blob that is not in the blob store can be had: a repository
 * reference ("docker.io/library/python") it can be mounted from (same
 * registry) or fetched from (any registry) — base image layers. */
struct eb_blob_source {
	const char *digest;
	const char *repository_ref;
};

struct eb_push_result {
	unsigned blobs_uploaded;
	unsigned blobs_mounted;
	unsigned blobs_existing;
	uint64_t bytes_uploaded;
	unsigned manifests;
	unsigned tags;
};

int eb_registry_push(struct eb_registry *r, const struct eb_push_image *images, size_t n,
		     const struct eb_blob_source *sources, size_t nsources, struct eb_blobstore *bs,
		     struct eb_push_result *res, struct eb_error **err);

#endif
