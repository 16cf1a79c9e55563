/*
 * client_internal.h - what client.c (the registries file, pulls, the
 * client) shares with client_push.c (pushes): the client struct, the
 * endpoints and a few helpers.  Not an API: only those two files include
 * it.
 *
 * Layering (service floor): registry/ may use net/, oci/, ref/ and util/;
 * never python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_REGISTRY_CLIENT_INTERNAL_H
#define EB_REGISTRY_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "registry/client.h"

/* Indexes of indexes followed before giving up (as layout.c). */
#define MAX_NESTING 4

struct eb_registry {
	struct eb_http_client *http;
	struct eb_auth *auth; /* ours when the options gave no auth hooks */
	struct reg_conf *regs;
	size_t nregs;
	int concurrency;
	uint64_t chunk_size;
	int max_attempts;
	long backoff_ms;
	long backoff_max_ms;
	void (*on_event)(void *userdata, const struct eb_push_event *ev);
	void *event_userdata;
	pthread_mutex_t lock; /* events and push counters */
};

/* A place a repository can be pulled from: a mirror or the origin. */
struct endpoint {
	char *registry;   /* "127.0.0.1:5000" */
	char *repository; /* "library/python", or "<prefix>/library/python" */
	int mirror;
};

struct endpoint *eb_client__endpoints_for(const struct eb_registry *r, const struct eb_imageref *ref,
			       size_t *n);
void eb_client__endpoints_free(struct endpoint *eps, size_t n);
int eb_client__fetch_blob_any(struct eb_registry *r, const struct endpoint *eps, size_t n,
		   size_t start, const struct eb_descriptor *d, struct eb_blobstore *bs,
		   struct eb_error **err);
int eb_client__parse_ref(struct eb_imageref *out, const char *ref, struct eb_error **err);
int eb_client__propagate(struct eb_error **err, struct eb_error *e, int rc);
const char *eb_client__sha256_header(const struct eb_http_response *resp);

#endif
