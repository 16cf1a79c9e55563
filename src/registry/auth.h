/*
 * auth.h - registry credentials and the auth flows: WWW-Authenticate
 * parsing (RFC 7235), Basic, the Bearer token flow (GET with service and
 * scopes, OAuth2 refresh_token POST for identity tokens), a token cache per
 * (registry, scope set), and credential lookup in auth files, docker
 * config.json and docker-credential-* helpers.
 *
 * net/http.c calls into this layer, through the hooks of
 * eb_auth_http_hooks(), when a registry answers 401, so registry
 * operations never deal with auth themselves; eb_auth_set_credentials() is
 * how a command passes credentials given on its command line.
 *
 * Secrets: passwords, identity tokens and bearer tokens never appear in
 * error messages, hints or anything else this layer writes.  Parse errors
 * in auth files give a position only, since the text around it may be a
 * secret.
 *
 * Thread safety: one struct eb_auth may be used from many threads (it
 * locks its caches).
 *
 * Ownership: struct eb_auth is freed by eb_auth_free().  Challenges and
 * credentials filled in by these functions own their strings (release with
 * eb_auth_challenges_free() / eb_auth_creds_release(), which also wipes
 * secrets); returned strings are the caller's (free()).
 *
 * Layering (service floor): registry/ may use net/, oci/, ref/ and util/;
 * never python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_REGISTRY_AUTH_H
#define EB_REGISTRY_AUTH_H

#include <stddef.h>

#include "net/http.h"
#include "util/error.h"

/* ---- challenges ------------------------------------------------------ */

struct eb_auth_param {
	char *name; /* lower-cased */
	char *value;
};

struct eb_auth_challenge {
	char *scheme;  /* lower-cased: "bearer", "basic", ... */
	char *token68; /* "Negotiate abc==" form, or NULL */
	struct eb_auth_param *params;
	size_t nparams;
};

/* Parse a WWW-Authenticate value (several headers may be joined with ", ")
 * into *out (n entries).  Returns -EB_EINVALID for a malformed value (the
 * message gives the column, not the text). */
int eb_auth_parse_challenges(struct eb_auth_challenge **out, size_t *n, const char *value,
			     struct eb_error **err);
void eb_auth_challenges_free(struct eb_auth_challenge *c, size_t n);
/* Value of a parameter (name case-insensitive), or NULL. */
const char *eb_auth_challenge_param(const struct eb_auth_challenge *c, const char *name);
/* The challenge to answer: Bearer over Basic; NULL if neither is there. */
const struct eb_auth_challenge *eb_auth_pick_challenge(const struct eb_auth_challenge *c,
						       size_t n);

/* ---- credentials ----------------------------------------------------- */

struct eb_auth_creds {
	char *username;       /* NULL: anonymous */
	char *password;       /* NULL with an identity token */
	char *identity_token; /* OAuth2 refresh token ("identitytoken") */
	char *registry_token; /* bearer token to send as is ("registrytoken") */
};

void eb_auth_creds_release(struct eb_auth_creds *c);
/* 1 when there is nothing to authenticate with. */
int eb_auth_creds_empty(const struct eb_auth_creds *c);

/* The key a registry has in auth files: scheme, path and a trailing slash
 * stripped, lower-cased; docker.io, registry-1.docker.io and
 * index.docker.io give "index.docker.io".  Caller frees. */
char *eb_auth_normalize_key(const char *key);

/* Look the registry up in one config file (docker config.json or
 * containers auth.json): credHelpers[host], then credsStore, then auths.
 * Returns 0 with *out filled (all NULL: nothing for it, or a helper said
 * "credentials not found"), -EB_ENOTFOUND if the file does not exist, or
 * another negative code on a broken file or a failing helper. */
int eb_auth_lookup_file(struct eb_auth_creds *out, const char *path, const char *registry,
			struct eb_error **err);
/* Look the registry up where docker and podman keep credentials:
 * $REGISTRY_AUTH_FILE, then $DOCKER_CONFIG/config.json (else
 * ~/.docker/config.json).  The first file with something for the registry
 * wins; nothing anywhere gives empty *out and 0. */
int eb_auth_lookup(struct eb_auth_creds *out, const char *registry, struct eb_error **err);
/* Run docker-credential-<helper> get for server_url (found on PATH). */
int eb_auth_run_helper(struct eb_auth_creds *out, const char *helper, const char *server_url,
		       struct eb_error **err);

/* ---- Basic values ---------------------------------------------------- */

/* Split a decoded "user:pass" auth value at the first ':' (password
 * trimmed of NULs, as docker does).  Returns -EB_EINVALID without a ':' or
 * with an empty user. */
int eb_auth_decode_basic(const char *b64, char **user, char **pass, struct eb_error **err);

/* ---- the auth state used by http.c ----------------------------------- */

struct eb_auth_options {
	/* Use only this auth file, not the environment's lookup. */
	const char *auth_file;
	/* Never look credentials up (explicit ones still apply). */
	int anonymous;
	/* OAuth2 client_id; NULL: "envbuild". */
	const char *client_id;
};

struct eb_auth;

/* opts may be NULL. */
struct eb_auth *eb_auth_new(const struct eb_auth_options *opts);
void eb_auth_free(struct eb_auth *a);
/* Use these credentials for registry instead of looking them up (copied). */
void eb_auth_set_credentials(struct eb_auth *a, const char *registry,
			     const struct eb_auth_creds *creds);
/* Number of token requests made so far (tests and diagnostics). */
unsigned eb_auth_token_requests(struct eb_auth *a);

/*
 * For http.c.  A scope set is a NULL-terminated array of scope strings.
 *
 * eb_auth__prepare: the Authorization value to send to a registry for
 * these scopes from what is already known (a cached token, a fresh one
 * fetched when the registry's challenge is known, or Basic), or *out NULL
 * when nothing is known yet.
 *
 * eb_auth__challenged: the registry answered 401 with this WWW-Authenticate
 * value (NULL when it had none: the last known challenge is reused).  Gets
 * credentials and a new token (never from the cache) for the scopes plus
 * any scope the challenge names, and sets *out to the value to send, or
 * NULL when nothing more can be tried (no usable challenge, Basic without
 * credentials).  Fails when the token server cannot be used.
 */
int eb_auth__prepare(struct eb_auth *a, struct eb_http_client *http, const char *registry,
		     const char *const *scopes, char **out, struct eb_error **err);
int eb_auth__challenged(struct eb_auth *a, struct eb_http_client *http, const char *registry,
			const char *const *scopes, const char *www_authenticate, char **out,
			struct eb_error **err);
/* The hooks an HTTP client calls on a registry request (net/http.h), with
 * a as their state: put them in struct eb_http_options.auth. */
struct eb_http_auth eb_auth_http_hooks(struct eb_auth *a);

#endif
