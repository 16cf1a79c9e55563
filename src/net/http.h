/*
 * http.h - the HTTP layer: a thin, careful wrapper over libcurl that the
 * registry operations (registry/client.c), the token flow (registry/auth.c)
 * and the package index (python/) use.
 *
 * Layering (core floor): net/ may use util/ only.  It never knows how
 * credentials or tokens are found: a registry request asks the
 * struct eb_http_auth hooks of its client (registry/auth.c provides them)
 * for the Authorization value to send.
 *
 * What it does for every request:
 *   - endpoints: "docker.io" talks to registry-1.docker.io; HTTPS with the
 *     system CAs plus an optional CA file (global or per registry) and the
 *     certs.d/<host[:port]>/ directories of containers and Docker.  TLS
 *     verification is never switched off.  Plain HTTP only for loopback
 *     hosts (localhost, 127.0.0.0/8, ::1) and hosts configured insecure;
 *     for those, the client finds out once what the host speaks with a
 *     TLS handshake alone (no request sent, no CA store loaded: the real
 *     request checks the certificate) and remembers it; should that say
 *     nothing, an https attempt that finds a plain-HTTP server falls back
 *     to http;
 *   - redirects followed by hand (at most EB_HTTP_MAX_REDIRECTS), dropping
 *     Authorization when the redirect leaves the origin (blob downloads
 *     redirect to storage);
 *   - registry auth: a 401 with a challenge makes the auth hooks find
 *     credentials and a token, and the request is sent again;
 *   - retries with exponential backoff and jitter on 408/429/500/502/503/504
 *     and on connection errors, honouring Retry-After, when the request body
 *     can be sent again; a streamed download that broke off after handing
 *     out bytes is reported, not retried (the caller restarts it);
 *   - size caps on buffered bodies, a low-speed timeout per transfer, a
 *     bounded retry budget, and User-Agent "envbuild/<version>".
 *
 * An HTTP status is not an error: eb_http_request returns 0 with whatever
 * status the server finally gave (after auth and retries), and the caller
 * decides; eb_http_response_error() turns an unexpected one into a message.
 * A negative return is a failure to get an answer at all (transport, TLS,
 * policy, auth token server, size cap, the caller's callbacks).
 *
 * Thread safety: one client may be used from many threads at once; each
 * request uses its own easy handle and shares connections, DNS and TLS
 * sessions through the client.
 *
 * Ownership: the client is freed with eb_http_client_free() after every
 * request using it has returned.  The auth hooks' state passed in the
 * options is borrowed and must outlive the client.  A response's strings and body are
 * owned by the response and freed by eb_http_response_release().  Strings
 * returned by eb_http_url_* are the caller's (free()).  Error messages name
 * hosts and paths but never query strings (storage URLs carry signatures)
 * or credentials.
 */
#ifndef EB_NET_HTTP_H
#define EB_NET_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/buf.h"
#include "util/error.h"

#define EB_HTTP_MAX_REDIRECTS 5
/* Cap on a body kept for error reporting (non-2xx answers). */
#define EB_HTTP_ERROR_BODY_MAX (64 * 1024)

struct eb_http_client;
struct eb_http_client;

/*
 * The 401 round trip of a registry request, as hooks (registry/auth.c:
 * eb_auth_http_hooks()).  A scope set is a NULL-terminated array of scope
 * strings (eb_http_scope()).
 *
 * prepare: the Authorization value to send for these scopes from what is
 * already known, or *out NULL when nothing is known yet.
 *
 * challenged: the registry answered 401 with this WWW-Authenticate value
 * (NULL when it had none); *out is the value to send next, or NULL when
 * nothing more can be tried.
 *
 * Values set in *out are the client's (it wipes and frees them).
 */
struct eb_http_auth {
	void *state;
	int (*prepare)(void *state, struct eb_http_client *http, const char *registry,
		       const char *const *scopes, char **out, struct eb_error **err);
	int (*challenged)(void *state, struct eb_http_client *http, const char *registry,
			  const char *const *scopes, const char *www_authenticate, char **out,
			  struct eb_error **err);
};

/* Settings for one registry, matched by "host[:port]" as written in image
 * references (an entry without a port matches every port of the host). */
struct eb_http_registry {
	const char *host;
	/* CA bundle (PEM) trusted for this host, in addition to the system
	 * CAs; NULL for none. */
	const char *ca_file;
	/* Allow plain http to this host.  It does not turn off certificate
	 * checks when the host speaks https. */
	int insecure;
};

/* Zero means "default" for every field. */
struct eb_http_options {
	/* CA bundle trusted for every host in addition to the system CAs. */
	const char *ca_file;
	/* certs.d root searched before /etc/containers/certs.d and
	 * /etc/docker/certs.d; NULL: $ENVBUILD_CERTS_D, if set. */
	const char *certs_d;
	const struct eb_http_registry *registries;
	size_t nregistries;
	/* Tries per request, first one included; 0: $ENVBUILD_HTTP_ATTEMPTS,
	 * else 5.  1 disables retries. */
	int max_attempts;
	/* First backoff; it doubles each retry.  0: $ENVBUILD_HTTP_BACKOFF_MS,
	 * else 500. */
	long backoff_ms;
	/* Cap on one wait, Retry-After included; 0: 30000. */
	long backoff_max_ms;
	/* No retry starts once a request has run this long; 0: 600000. */
	long retry_budget_ms;
	/* 0: 30000. */
	long connect_timeout_ms;
	/* A transfer slower than min(min_speed, 1024) bytes/s for this long
	 * is abandoned (and retried); 0: 60. */
	long low_speed_time_s;
	/* Each transfer's deadline: deadline_base_s plus its size (expected
	 * or announced) at min_speed bytes/s; past it the request fails with
	 * EB_EFAIL, not retried.  0: $ENVBUILD_HTTP_DEADLINE_S, else 120;
	 * $ENVBUILD_HTTP_MIN_SPEED, else 65536. */
	long deadline_base_s;
	long min_speed;
	/* NULL: "envbuild/" ENVBUILD_VERSION. */
	const char *user_agent;
	/* Credentials and tokens for registry requests (copied; the state is
	 * borrowed).  No hooks: registry requests go out anonymous and a 401
	 * is the answer. */
	struct eb_http_auth auth;
};

enum eb_http_body_kind {
	EB_HTTP_BODY_NONE = 0,
	EB_HTTP_BODY_MEM,    /* body/body_len; rewindable */
	EB_HTTP_BODY_FILE,   /* body_fd from body_offset for body_length bytes;
			      * read with pread, so the fd may be shared between
			      * threads; rewindable */
	EB_HTTP_BODY_STREAM, /* body_read until it returns 0; size unknown, sent
			      * chunked; never retried or re-sent after a 401 */
};

struct eb_http_request {
	const char *method; /* "GET", "HEAD", "PUT", "POST", "PATCH", "DELETE" */
	/* The registry the request is for ("docker.io", "localhost:5000"),
	 * which turns on its auth; NULL for a plain URL request. */
	const char *registry;
	/* A path ("/v2/library/python/manifests/3.11", with a query if
	 * wanted) sent to the registry, or an absolute URL (a Location
	 * header).  Absolute URLs get the registry's Authorization only when
	 * they point at the registry itself. */
	const char *url;

	/* The token scopes asked for: repository:<repository>:pull, or
	 * :pull,push when push is set, plus repository:<mount_from>:pull for a
	 * cross-repository mount.  repository NULL: no scope (GET /v2/). */
	const char *repository;
	int push;
	const char *mount_from;

	/* Extra request headers, NULL-terminated ("Content-Type: x").  A
	 * header "Authorization: ..." given here is dropped on redirects that
	 * leave the origin. */
	const char *const *headers;

	enum eb_http_body_kind body_kind;
	const void *body;
	size_t body_len;
	int body_fd;
	uint64_t body_offset;
	uint64_t body_length;
	/* Fill buf with up to n bytes; return the count, 0 at the end, or
	 * (size_t)-1 to abort (the request then fails). */
	size_t (*body_read)(void *userdata, void *buf, size_t n);
	void *body_userdata;

	/* A 2xx body is buffered into the response, failing with
	 * -EB_ETOOBIG past max_body bytes (0: 1 MiB) ... */
	size_t max_body;
	/* ... unless on_data is set: then a 2xx body is handed to it as it
	 * arrives.  It returns 0, or a negative eb_code with *err set to
	 * abort the request (eb_http_request then returns that code). */
	int (*on_data)(void *userdata, const void *data, size_t len, struct eb_error **err);
	void *data_userdata;

	/* Cap on one attempt, ms; 0: none (the low-speed limit and the
	 * deadline still apply). */
	long timeout_ms;
	/* Bytes the body is known to be (a blob's descriptor size), for the
	 * deadline before the server says; 0: unknown. */
	uint64_t expected_size;
	/* Never retry this request (the auth round trip still happens). */
	int no_retry;
};

struct eb_http_header {
	char *name;  /* as sent by the server */
	char *value; /* trimmed */
};

struct eb_http_response {
	long status; /* 0 when no answer came */
	/* The 2xx body when not streamed, or the start of a non-2xx body
	 * (at most EB_HTTP_ERROR_BODY_MAX bytes, for messages). */
	struct eb_buf body;
	struct eb_http_header *headers; /* of the final answer, in order */
	size_t nheaders;
	char *url;         /* the URL that gave the final answer (resolve a
			    * relative Location against it) */
	uint64_t streamed; /* bytes handed to on_data */
	unsigned attempts; /* transfers made, auth and redirects included */
	unsigned retries;  /* retries after failures (408/429/5xx/transport) */
};

/* Create a client; opts may be NULL (all defaults). */
int eb_http_client_new(struct eb_http_client **out, const struct eb_http_options *opts,
		       struct eb_error **err);
void eb_http_client_free(struct eb_http_client *c);

/* Send req and wait for the final answer.  resp need not be initialised; it
 * is always initialised on return, so eb_http_response_release() is safe
 * either way.  On a negative return resp still tells what is known
 * (attempts, streamed bytes). */
int eb_http_request(struct eb_http_client *c, const struct eb_http_request *req,
		    struct eb_http_response *resp, struct eb_error **err);

/* First header with this name (case-insensitive), or NULL. */
const char *eb_http_response_header(const struct eb_http_response *r, const char *name);
void eb_http_response_release(struct eb_http_response *r);

/* Make an error from an unexpected answer to `what` ("pushing manifest
 * 'x'"), using the registry's {"errors":[{code,message}]} body when there
 * is one: "pushing manifest 'x': registry answered 404: MANIFEST_UNKNOWN:
 * manifest unknown".  Codes: 404 EB_ENOTFOUND, 401/403 EB_EFAIL (with a
 * hint about credentials), 413 EB_ETOOBIG, others EB_ENET.  Returns the
 * negative code. */
int eb_http_response_error(const struct eb_http_response *r, const char *what,
			   struct eb_error **err);

/* The token scope of a repository: "repository:<repo>:pull" or
 * "repository:<repo>:pull,push".  Caller frees. */
char *eb_http_scope(const char *repository, int push);
/* Resolve ref (absolute, or relative like a Location header) against the
 * absolute URL base, keeping ref's query.  NULL if either is invalid. */
char *eb_http_url_resolve(const char *base, const char *ref);
/* "host[:port]/path" for messages: no scheme, userinfo or query (storage
 * URLs carry signatures in their queries); "(invalid url)" if unparsable. */
char *eb_http_url_display(const char *url);
/* The host a registry name is served from: "docker.io" and
 * "index.docker.io" -> "registry-1.docker.io"; others unchanged.  The
 * result is the caller's. */
char *eb_http_registry_host(const char *registry);
/* 1 if host ("name", "name:port", "[v6]:port") is loopback: localhost,
 * *.localhost, 127.0.0.0/8, ::1. */
int eb_http_host_is_loopback(const char *host);
/* 1 if plain http to host is allowed: loopback or configured insecure. */
int eb_http_plain_allowed(const struct eb_http_client *c, const char *host);
/* Parse a Retry-After value (delta-seconds or an HTTP-date) relative to
 * now into a wait in ms (0 for a date in the past); -1 when malformed. */
long eb_http_parse_retry_after(const char *value, time_t now);
/* The wait in ms before a retry: retry_after_ms when >= 0, else base_ms
 * doubled `doublings` times; capped at max_ms either way, and a computed
 * wait gets jitter (between half and all of it) so that threads failing
 * together do not come back in step.  http.c's retries and the registry
 * client's upload recovery share it. */
long eb_http_backoff(long base_ms, long max_ms, unsigned doublings, long retry_after_ms);

#endif
