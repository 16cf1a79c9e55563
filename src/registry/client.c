/*
 * client.c - registry operations on top of http.c/auth.c: the mirrors and
 * registries file, pulling documents and blobs (verified) into the blob
 * store, and pushing images: blobs on a pool of threads, then manifests,
 * then indexes, then tags.
 *
 * Retry policy.  http.c already retries requests whose body it can send
 * again.  Blob uploads are different: a PUT or PATCH that broke off half-way
 * may have left bytes in the upload session, and sending the same request
 * again would append to them (the registry then refuses the digest, or,
 * like distribution, cancels the session because its `_state` no longer
 * matches).  So upload requests that carry blob bytes are sent with
 * no_retry and this file recovers itself: ask the session how far it got
 * (GET <location> -> Range) and go on from there, or open a new session.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ref/imageref.h"
#include "registry/auth.h"
#include "registry/client.h"
#include "util/yamljson.h"
#include "util/alloc.h"
#include "util/sys.h"
#include "util/diag.h"
#include "util/fs.h"

/* Every manifest type we read: distribution answers 404 for an OCI
 * manifest fetched by tag unless the OCI type is accepted. */
#define ACCEPT_MANIFESTS                                                            \
	"Accept: " EB_MEDIA_OCI_INDEX ", " EB_MEDIA_OCI_MANIFEST ", " EB_MEDIA_DOCKER_LIST \
	", " EB_MEDIA_DOCKER_MANIFEST

/* Indexes of indexes followed before giving up (as layout.c). */
#define MAX_NESTING 4
#define DEFAULT_CONCURRENCY 4
#define MAX_CONCURRENCY 64
#define DEFAULT_ATTEMPTS 5
#define DEFAULT_BACKOFF_MS 500L
#define DEFAULT_BACKOFF_MAX_MS 30000L
/* The registries file is a handful of lines. */
#define CONF_FILE_MAX ((size_t)1 << 20)

/* One registry's entry in the registries file. */
struct reg_conf {
	char *host;      /* normalised: "docker.io", "127.0.0.1:5000" */
	char **mirrors;  /* "host[:port][/prefix]", tried in order */
	size_t nmirrors;
	char *ca_file;   /* absolute, or relative to the working directory */
	int insecure;
};

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

/* ---- small helpers ------------------------------------------------------- */

/* Move a local error into *err (keeping one already there) and return rc. */
static int propagate(struct eb_error **err, struct eb_error *e, int rc)
{
	if (e && err && !*err)
		*err = e;
	else
		eb_error_free(e);
	return rc;
}

/* Content-Type without parameters ("; charset=utf-8"); caller frees. */
static char *media_type_of(const char *content_type)
{
	size_t n;

	if (!content_type)
		return NULL;
	n = strcspn(content_type, ";");
	while (n && (content_type[n - 1] == ' ' || content_type[n - 1] == '\t'))
		n--;
	return eb_xstrndup(content_type, n);
}

/* The digest a registry named in Docker-Content-Digest, when it names a
 * sha256 one (the only kind we can compare). */
static const char *sha256_header(const struct eb_http_response *resp)
{
	const char *d = eb_http_response_header(resp, "Docker-Content-Digest");

	if (d && strncmp(d, "sha256:", 7) == 0 && eb_digest_valid(d))
		return d;
	return NULL;
}

static int parse_ref(struct eb_imageref *out, const char *ref, struct eb_error **err)
{
	int rc = eb_imageref_parse(out, ref, err);

	if (rc < 0)
		return eb_error_wrap(err, "invalid image reference '%s'", ref);
	/* Only sha256 is hashed here; a sha512 reference could not be
	 * verified, and unverified content is not accepted. */
	if (out->digest && strncmp(out->digest, "sha256:", 7) != 0) {
		eb_imageref_release(out);
		return eb_error_set(err, EB_EINVALID,
				    "unsupported digest algorithm in '%s': only sha256 is supported", ref);
	}
	return 0;
}

/* ---- the registries file --------------------------------------------------- */

static void reg_conf_release(struct reg_conf *c)
{
	free(c->host);
	for (size_t i = 0; i < c->nmirrors; i++)
		free(c->mirrors[i]);
	free(c->mirrors);
	free(c->ca_file);
	memset(c, 0, sizeof(*c));
}

struct conf_ctx {
	const char *file;
	struct eb_yj_doc *doc;
	struct eb_error **err;
};

static int conf_bad(struct conf_ctx *c, const struct eb_yj_pos *p, const char *fmt, ...)
	EB_PRINTF(3, 4);
static int conf_bad(struct conf_ctx *c, const struct eb_yj_pos *p, const char *fmt, ...)
{
	struct eb_buf b;
	va_list ap;
	int rc;

	eb_buf_init(&b, 0);
	va_start(ap, fmt);
	if (eb_buf_vaddf(&b, fmt, ap) < 0)
		abort();
	va_end(ap);
	rc = eb_error_set_at(c->err, EB_EINVALID, c->file, p ? p->line : 0, p ? p->col : 0, "%s",
			     b.ptr);
	eb_buf_release(&b);
	return rc;
}

/* A registry host as written in image references: "name", "name:port",
 * "[v6]:port"; no scheme, no path. */
static int host_valid(const char *s, size_t n)
{
	if (n == 0 || n > 255)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == ':' || ch == '[' ||
		      ch == ']'))
			return 0;
	}
	return s[0] != '.' && s[0] != '-' && s[0] != ':';
}

/* A repository path prefix on a mirror: components of [a-z0-9._-]. */
static int prefix_valid(const char *s)
{
	const char *p = s;

	if (!*p)
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 0)
			return 0;
		for (size_t i = 0; i < n; i++) {
			char ch = p[i];
			if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
			      ch == '_' || ch == '-'))
				return 0;
		}
		p += n;
		if (*p == '/') {
			p++;
			if (!*p)
				return 0;
		}
	}
	return 1;
}

/* Normalise a registry key: lower case, Docker Hub's aliases to
 * "docker.io". */
static char *host_normalise(const char *s)
{
	char *h = eb_xstrdup(s);

	for (char *p = h; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (strcmp(h, "index.docker.io") == 0 || strcmp(h, "registry-1.docker.io") == 0) {
		free(h);
		h = eb_xstrdup("docker.io");
	}
	return h;
}

static int conf_mirror(struct conf_ctx *c, const json_t *list, size_t i, struct reg_conf *rc)
{
	const json_t *v = json_array_get(list, i);
	const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, list, NULL, i);
	const char *s, *slash;
	eb_autofree char *host = NULL;

	if (!json_is_string(v))
		return conf_bad(c, p, "mirror must be a string (host[:port][/prefix])");
	s = json_string_value(v);
	if (strstr(s, "://")) {
		int r = conf_bad(c, p, "mirror '%s' must not have a scheme", s);
		eb_error_hint(c->err, "write it as host[:port][/prefix]; plain http is for loopback "
				      "and registries marked 'insecure: true'");
		return r;
	}
	slash = strchr(s, '/');
	if (!host_valid(s, slash ? (size_t)(slash - s) : strlen(s)) ||
	    (slash && !prefix_valid(slash + 1)))
		return conf_bad(c, p, "invalid mirror '%s': expected host[:port][/prefix]", s);
	host = eb_xstrndup(s, slash ? (size_t)(slash - s) : strlen(s));
	rc->mirrors = eb_xreallocarray(rc->mirrors, rc->nmirrors + 1, sizeof(*rc->mirrors));
	{
		char *h = host_normalise(host);
		rc->mirrors[rc->nmirrors++] =
			slash ? eb_xasprintf("%s/%s", h, slash + 1) : eb_xstrdup(h);
		free(h);
	}
	return 0;
}

static int conf_registry(struct conf_ctx *c, const json_t *regs, const char *key,
			 struct reg_conf *out)
{
	const json_t *obj = json_object_get(regs, key);
	const char *k;
	const json_t *v;

	memset(out, 0, sizeof(*out));
	if (!host_valid(key, strlen(key)))
		return conf_bad(c, eb_yj_key_pos(c->doc, regs, key),
				"invalid registry '%s': expected host[:port]", key);
	if (!json_is_object(obj))
		return conf_bad(c, eb_yj_value_pos(c->doc, regs, key, 0),
				"registry '%s' must be a mapping", key);
	out->host = host_normalise(key);
	json_object_foreach ((json_t *)obj, k, v) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, obj, k, 0);
		if (strcmp(k, "mirrors") == 0) {
			if (!json_is_array(v))
				return conf_bad(c, p, "'mirrors' of '%s' must be a list", key);
			for (size_t i = 0; i < json_array_size(v); i++)
				if (conf_mirror(c, v, i, out) < 0)
					return -EB_EINVALID;
		} else if (strcmp(k, "insecure") == 0) {
			if (!json_is_boolean(v))
				return conf_bad(c, p, "'insecure' of '%s' must be true or false", key);
			out->insecure = json_is_true(v);
		} else if (strcmp(k, "ca_file") == 0) {
			eb_autofree char *dir = NULL;
			if (!json_is_string(v) || !*json_string_value(v))
				return conf_bad(c, p, "'ca_file' of '%s' must be a path", key);
			/* Relative to the file that names it, like every
			 * path in envbuild's files. */
			dir = eb_path_dirname(c->file);
			out->ca_file = eb_path_join(dir, json_string_value(v));
			if (access(out->ca_file, R_OK) < 0)
				return conf_bad(c, p, "cannot read 'ca_file' of '%s': '%s': %s", key,
						out->ca_file, strerror(errno));
		} else {
			int r = conf_bad(c, eb_yj_key_pos(c->doc, obj, k),
					 "unknown key '%s' in registry '%s'", k, key);
			eb_error_hint(c->err, "a registry takes 'mirrors', 'insecure' and 'ca_file'");
			return r;
		}
	}
	return 0;
}

static int conf_load(struct eb_registry *r, const char *path, struct eb_error **err)
{
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct conf_ctx c = { path, NULL, err };
	struct eb_buf text;
	const json_t *root, *regs, *v;
	const char *k;
	int rc;

	eb_buf_init(&text, 0);
	rc = eb_fs_read_file(&text, path, CONF_FILE_MAX, err);
	if (rc < 0) {
		eb_buf_release(&text);
		return eb_error_wrap(err, "reading the registries file");
	}
	rc = eb_yj_load(&c.doc, path, text.ptr, text.len, &diags, err);
	eb_buf_release(&text);
	if (rc < 0)
		goto done;
	for (size_t i = 0; i < diags.n; i++) {
		const struct eb_diag *d = &diags.items[i];
		if (d->severity == EB_SEV_ERROR) {
			rc = eb_error_set_at(err, EB_EINVALID, path, d->line, d->col, "%s", d->msg);
			goto done;
		}
	}
	root = eb_yj_root(c.doc);
	if (json_is_null(root) || (json_is_object(root) && json_object_size(root) == 0))
		goto done; /* an empty file configures nothing */
	if (!json_is_object(root)) {
		rc = conf_bad(&c, eb_yj_node_pos(c.doc, root), "the registries file must be a mapping");
		goto done;
	}
	json_object_foreach ((json_t *)root, k, v) {
		if (strcmp(k, "version") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) != 1) {
				rc = conf_bad(&c, eb_yj_value_pos(c.doc, root, k, 0),
					      "unsupported registries file version (only 1 is known)");
				goto done;
			}
		} else if (strcmp(k, "registries") != 0) {
			rc = conf_bad(&c, eb_yj_key_pos(c.doc, root, k), "unknown key '%s'", k);
			eb_error_hint(err, "the registries file has 'version' and 'registries'");
			goto done;
		}
	}
	regs = json_object_get(root, "registries");
	if (!regs || json_is_null(regs))
		goto done;
	if (!json_is_object(regs)) {
		rc = conf_bad(&c, eb_yj_value_pos(c.doc, root, "registries", 0),
			      "'registries' must be a mapping of host to settings");
		goto done;
	}
	json_object_foreach ((json_t *)regs, k, v) {
		struct reg_conf one;
		(void)v;
		rc = conf_registry(&c, regs, k, &one);
		if (rc < 0) {
			reg_conf_release(&one);
			goto done;
		}
		/* "index.docker.io" and "docker.io" are one registry: the
		 * later entry wins, like a duplicate key. */
		for (size_t i = 0; i < r->nregs; i++) {
			if (strcmp(r->regs[i].host, one.host) == 0) {
				reg_conf_release(&r->regs[i]);
				r->regs[i] = one;
				one.host = NULL;
				break;
			}
		}
		if (one.host) {
			r->regs = eb_xreallocarray(r->regs, r->nregs + 1, sizeof(*r->regs));
			r->regs[r->nregs++] = one;
		}
	}
done:
	eb_yj_free(c.doc);
	eb_diag_list_release(&diags);
	return rc < 0 ? rc : 0;
}

static const struct reg_conf *conf_find(const struct eb_registry *r, const char *host)
{
	eb_autofree char *h = host_normalise(host);

	for (size_t i = 0; i < r->nregs; i++)
		if (strcmp(r->regs[i].host, h) == 0)
			return &r->regs[i];
	return NULL;
}

/* ---- the client -------------------------------------------------------------- */

int eb_registry_new(struct eb_registry **out, const struct eb_registry_options *o,
		    struct eb_error **err)
{
	static const struct eb_registry_options defaults;
	struct eb_http_options hopts;
	struct eb_http_registry *hregs = NULL;
	struct eb_registry *r;
	const char *conf;
	size_t nh = 0;
	int rc;

	*out = NULL;
	if (!o)
		o = &defaults;
	r = eb_xcalloc(1, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->concurrency = o->concurrency > 0 ? o->concurrency : DEFAULT_CONCURRENCY;
	if (r->concurrency > MAX_CONCURRENCY)
		r->concurrency = MAX_CONCURRENCY;
	r->chunk_size = o->chunk_size;
	r->max_attempts = o->http.max_attempts > 0
				  ? o->http.max_attempts
				  : (int)eb_env_long("ENVBUILD_HTTP_ATTEMPTS", DEFAULT_ATTEMPTS);
	r->backoff_ms = o->http.backoff_ms > 0 ? o->http.backoff_ms
					       : eb_env_long("ENVBUILD_HTTP_BACKOFF_MS", DEFAULT_BACKOFF_MS);
	r->backoff_max_ms = o->http.backoff_max_ms > 0 ? o->http.backoff_max_ms
						       : DEFAULT_BACKOFF_MAX_MS;
	r->on_event = o->on_event;
	r->event_userdata = o->event_userdata;

	conf = o->mirrors_file ? o->mirrors_file : getenv("ENVBUILD_MIRRORS");
	if (conf && *conf) {
		rc = conf_load(r, conf, err);
		if (rc < 0) {
			eb_registry_free(r);
			return rc;
		}
	}

	/* The caller's registry settings first: an exact host:port entry
	 * wins anyway, and between two entries for one host the first. */
	hopts = o->http;
	hregs = eb_xcalloc(o->http.nregistries + r->nregs + 1, sizeof(*hregs));
	for (size_t i = 0; i < o->http.nregistries; i++)
		hregs[nh++] = o->http.registries[i];
	for (size_t i = 0; i < r->nregs; i++) {
		if (!r->regs[i].ca_file && !r->regs[i].insecure)
			continue;
		hregs[nh].host = r->regs[i].host;
		hregs[nh].ca_file = r->regs[i].ca_file;
		hregs[nh].insecure = r->regs[i].insecure;
		nh++;
	}
	hopts.registries = hregs;
	hopts.nregistries = nh;
	if (!hopts.auth.prepare) {
		/* credentials from the environment (auth.h) */
		r->auth = eb_auth_new(NULL);
		hopts.auth = eb_auth_http_hooks(r->auth);
	}
	rc = eb_http_client_new(&r->http, &hopts, err);
	free(hregs);
	if (rc < 0) {
		eb_registry_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void eb_registry_free(struct eb_registry *r)
{
	if (!r)
		return;
	eb_http_client_free(r->http);
	eb_auth_free(r->auth);
	for (size_t i = 0; i < r->nregs; i++)
		reg_conf_release(&r->regs[i]);
	free(r->regs);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

struct eb_http_client *eb_registry_http(struct eb_registry *r)
{
	return r->http;
}

void eb_remote_doc_release(struct eb_remote_doc *d)
{
	if (!d)
		return;
	free(d->media_type);
	eb_buf_release(&d->data);
	memset(d, 0, sizeof(*d));
}

/* ---- endpoints ------------------------------------------------------------- */

static void endpoints_free(struct endpoint *eps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(eps[i].registry);
		free(eps[i].repository);
	}
	free(eps);
}

/* Where a repository can be pulled from: its registry's mirrors in the
 * order the file lists them, then the registry itself. */
static struct endpoint *endpoints_for(const struct eb_registry *r, const struct eb_imageref *ref,
				      size_t *n)
{
	const struct reg_conf *c = conf_find(r, ref->domain);
	size_t nm = c ? c->nmirrors : 0;
	struct endpoint *eps = eb_xcalloc(nm + 1, sizeof(*eps));

	for (size_t i = 0; i < nm; i++) {
		const char *m = c->mirrors[i];
		const char *slash = strchr(m, '/');
		if (slash) {
			eps[i].registry = eb_xstrndup(m, (size_t)(slash - m));
			eps[i].repository = eb_xasprintf("%s/%s", slash + 1, ref->path);
		} else {
			eps[i].registry = eb_xstrdup(m);
			eps[i].repository = eb_xstrdup(ref->path);
		}
		eps[i].mirror = 1;
	}
	eps[nm].registry = eb_xstrdup(ref->domain);
	eps[nm].repository = eb_xstrdup(ref->path);
	*n = nm + 1;
	return eps;
}

/* Try endpoints starting at `start`, then the others in order; keeps the
 * origin's error when every one fails (a mirror's is less telling). */
struct try_state {
	size_t n, start, k;
	struct eb_error *kept;
	int kept_rc;
};

static int try_next(struct try_state *t, size_t *i)
{
	if (t->k >= t->n)
		return 0;
	if (t->k == 0)
		*i = t->start;
	else
		*i = t->k - 1 < t->start ? t->k - 1 : t->k;
	t->k++;
	return 1;
}

static void try_failed(struct try_state *t, const struct endpoint *ep, struct eb_error *e, int rc)
{
	if (!t->kept || !ep->mirror) {
		eb_error_free(t->kept);
		t->kept = e;
		t->kept_rc = rc;
	} else {
		eb_error_free(e);
	}
}

static int try_finish(struct try_state *t, struct eb_error **err)
{
	return propagate(err, eb_steal_ptr(&t->kept), t->kept_rc ? t->kept_rc : -EB_ENET);
}

/* ---- documents --------------------------------------------------------------- */

/* The media type of a fetched document: the Content-Type when it is one
 * we know, else the document's own mediaType, else what its shape says. */
static int doc_media_type(char **out, const char *content_type, const struct eb_buf *data,
			  struct eb_error **err)
{
	eb_autofree char *ct = media_type_of(content_type);
	enum eb_doc_kind kind;
	json_auto_t *root = NULL;
	const char *mt;
	int rc;

	rc = eb_image_doc_kind(&kind, ct, data->ptr, data->len, err);
	if (rc < 0)
		return rc;
	if (ct && (eb_media_type_is_manifest(ct) || eb_media_type_is_index(ct))) {
		*out = eb_steal_ptr(&ct);
		return 0;
	}
	root = json_loadb(data->ptr, data->len, 0, NULL);
	mt = json_string_value(json_object_get(root, "mediaType"));
	if (mt && (eb_media_type_is_manifest(mt) || eb_media_type_is_index(mt)))
		*out = eb_xstrdup(mt);
	else
		*out = eb_xstrdup(kind == EB_DOC_INDEX ? EB_MEDIA_OCI_INDEX : EB_MEDIA_OCI_MANIFEST);
	return 0;
}

/* GET a manifest or index from one endpoint and verify it: the bytes hash
 * to want_digest (when given) and to the registry's Docker-Content-Digest
 * (when it sends one). */
static int fetch_doc(struct eb_registry *r, const struct endpoint *ep, const char *reference,
		     const char *want_digest, struct eb_remote_doc *out, struct eb_error **err)
{
	const char *headers[] = { ACCEPT_MANIFESTS, NULL };
	eb_autofree char *path = eb_xasprintf("/v2/%s/manifests/%s", ep->repository, reference);
	eb_autofree char *what = eb_xasprintf("fetching manifest '%s/%s%s%s'", ep->registry,
					      ep->repository, want_digest ? "@" : ":", reference);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	char got[EB_DIGEST_STR_LEN + 1];
	const char *hdr;
	int rc;

	memset(out, 0, sizeof(*out));
	req.method = "GET";
	req.registry = ep->registry;
	req.url = path;
	req.repository = ep->repository;
	req.headers = headers;
	req.max_body = EB_IMAGE_DOC_MAX;
	rc = eb_http_request(r->http, &req, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", what);
		goto done;
	}
	if (resp.status != 200) {
		rc = eb_http_response_error(&resp, what, err);
		goto done;
	}
	eb_sha256_digest(resp.body.ptr, resp.body.len, got);
	if (want_digest && strcmp(got, want_digest) != 0) {
		rc = eb_error_set(err, EB_EINVALID, "%s: the bytes hash to '%s'", what, got);
		goto done;
	}
	hdr = sha256_header(&resp);
	if (hdr && strcmp(hdr, got) != 0) {
		rc = eb_error_set(err, EB_EINVALID,
				  "%s: the registry says its digest is '%s' but the bytes hash to '%s'",
				  what, hdr, got);
		goto done;
	}
	rc = doc_media_type(&out->media_type, eb_http_response_header(&resp, "Content-Type"),
			    &resp.body, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", what);
		goto done;
	}
	memcpy(out->digest, got, sizeof(got));
	out->data = resp.body;
	eb_buf_init(&resp.body, 0);
done:
	eb_http_response_release(&resp);
	return rc;
}

/* fetch_doc over the endpoints; *used gets the one that answered. */
static int fetch_doc_any(struct eb_registry *r, const struct endpoint *eps, size_t n, size_t start,
			 const char *reference, const char *want_digest, struct eb_remote_doc *out,
			 size_t *used, struct eb_error **err)
{
	struct try_state t = { n, start, 0, NULL, 0 };
	size_t i;

	while (try_next(&t, &i)) {
		struct eb_error *e = NULL;
		int rc = fetch_doc(r, &eps[i], reference, want_digest, out, &e);
		if (rc == 0) {
			eb_error_free(t.kept);
			if (used)
				*used = i;
			return 0;
		}
		try_failed(&t, &eps[i], e, rc);
	}
	return try_finish(&t, err);
}

int eb_registry_get_manifest(struct eb_registry *r, const char *ref, struct eb_remote_doc *out,
			     struct eb_error **err)
{
	struct eb_imageref ir;
	struct endpoint *eps;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = endpoints_for(r, &ir, &n);
	rc = fetch_doc_any(r, eps, n, 0, ir.digest ? ir.digest : ir.tag ? ir.tag : "latest",
			   ir.digest, out, NULL, err);
	endpoints_free(eps, n);
	eb_imageref_release(&ir);
	return rc;
}

/* HEAD one endpoint; GET when the answer lacks the digest or a known
 * media type. */
static int resolve_one(struct eb_registry *r, const struct endpoint *ep, const struct eb_imageref *ir,
		       char digest[EB_DIGEST_STR_LEN + 1], char **media_type, struct eb_error **err)
{
	const char *headers[] = { ACCEPT_MANIFESTS, NULL };
	const char *reference = ir->digest ? ir->digest : ir->tag ? ir->tag : "latest";
	eb_autofree char *path = eb_xasprintf("/v2/%s/manifests/%s", ep->repository, reference);
	eb_autofree char *what = eb_xasprintf("resolving '%s/%s%s%s'", ep->registry,
					      ep->repository, ir->digest ? "@" : ":", reference);
	eb_autofree char *ct = NULL;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	const char *hdr;
	int rc;

	req.method = "HEAD";
	req.registry = ep->registry;
	req.url = path;
	req.repository = ep->repository;
	req.headers = headers;
	rc = eb_http_request(r->http, &req, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", what);
		goto done;
	}
	hdr = resp.status == 200 ? sha256_header(&resp) : NULL;
	ct = resp.status == 200 ? media_type_of(eb_http_response_header(&resp, "Content-Type")) : NULL;
	if (ir->digest && hdr && strcmp(hdr, ir->digest) != 0) {
		rc = eb_error_set(err, EB_EINVALID, "%s: the registry answered for '%s'", what, hdr);
		goto done;
	}
	if (resp.status == 200 && (hdr || ir->digest) && ct &&
	    (eb_media_type_is_manifest(ct) || eb_media_type_is_index(ct))) {
		memcpy(digest, ir->digest ? ir->digest : hdr, EB_DIGEST_STR_LEN + 1);
		if (media_type)
			*media_type = eb_steal_ptr(&ct);
	} else {
		/* An old registry without the header, or one that does not
		 * do HEAD: hash the document.  A HEAD error has no body, so
		 * the GET also gives the registry's reason for a 404. */
		struct eb_remote_doc doc;
		rc = fetch_doc(r, ep, reference, ir->digest, &doc, err);
		if (rc < 0)
			goto done;
		memcpy(digest, doc.digest, EB_DIGEST_STR_LEN + 1);
		if (media_type)
			*media_type = eb_steal_ptr(&doc.media_type);
		eb_remote_doc_release(&doc);
	}
done:
	eb_http_response_release(&resp);
	return rc;
}

int eb_registry_resolve(struct eb_registry *r, const char *ref,
			char digest[EB_DIGEST_STR_LEN + 1], char **media_type, struct eb_error **err)
{
	struct eb_imageref ir;
	struct endpoint *eps;
	struct try_state t = { 0, 0, 0, NULL, 0 };
	size_t n, i;
	int rc;

	if (media_type)
		*media_type = NULL;
	rc = parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = endpoints_for(r, &ir, &n);
	t.n = n;
	rc = -1;
	while (try_next(&t, &i)) {
		struct eb_error *e = NULL;
		rc = resolve_one(r, &eps[i], &ir, digest, media_type, &e);
		if (rc == 0)
			break;
		try_failed(&t, &eps[i], e, rc);
	}
	if (rc == 0)
		eb_error_free(t.kept);
	else
		rc = try_finish(&t, err);
	endpoints_free(eps, n);
	eb_imageref_release(&ir);
	return rc;
}

/* ---- blobs ------------------------------------------------------------------- */

struct sink {
	struct eb_blob_writer *w;
	const char *digest;
	uint64_t max;
	uint64_t n;
};

static int sink_data(void *userdata, const void *data, size_t len, struct eb_error **err)
{
	struct sink *s = userdata;

	if (s->n + len > s->max)
		return eb_error_set(err, EB_ETOOBIG, "blob '%s' is larger than the %" PRIu64
				    " bytes its descriptor says", s->digest, s->max);
	s->n += len;
	return eb_blob_writer_write(s->w, data, len, err);
}

/* Stream one blob from an endpoint into the blob store, checking size and
 * digest; a download that breaks off is started again (the store has no
 * partial blobs to resume from). */
static int fetch_blob_ep(struct eb_registry *r, const struct endpoint *ep,
			 const struct eb_descriptor *d, struct eb_blobstore *bs, struct eb_error **err)
{
	eb_autofree char *path = eb_xasprintf("/v2/%s/blobs/%s", ep->repository, d->digest);
	eb_autofree char *what = eb_xasprintf("fetching blob '%s' from '%s/%s'", d->digest,
					      ep->registry, ep->repository);
	int rc = 0;

	if (d->size < 0 || strncmp(d->digest, "sha256:", 7) != 0 || !eb_digest_valid(d->digest))
		return eb_error_set(err, EB_EINVALID, "%s: only sha256 blobs of a known size can "
				    "be fetched", what);
	for (int attempt = 1;; attempt++) {
		struct eb_http_request req = { 0 };
		struct eb_http_response resp;
		struct sink s = { NULL, d->digest, (uint64_t)d->size, 0 };
		struct eb_error *e = NULL;

		rc = eb_blob_writer_open(&s.w, bs, err);
		if (rc < 0)
			return rc;
		req.method = "GET";
		req.registry = ep->registry;
		req.url = path;
		req.repository = ep->repository;
		req.on_data = sink_data;
		req.data_userdata = &s;
		req.expected_size = (uint64_t)d->size;
		rc = eb_http_request(r->http, &req, &resp, &e);
		if (rc < 0) {
			eb_blob_writer_abort(s.w);
			if (rc == -EB_ENET && resp.streamed > 0 && attempt < r->max_attempts) {
				eb_http_response_release(&resp);
				eb_error_free(e);
				continue;
			}
			eb_http_response_release(&resp);
			propagate(err, e, rc);
			return eb_error_wrap(err, "%s", what);
		}
		if (resp.status != 200) {
			eb_blob_writer_abort(s.w);
			rc = eb_http_response_error(&resp, what, err);
			eb_http_response_release(&resp);
			return rc;
		}
		eb_http_response_release(&resp);
		if (s.n != (uint64_t)d->size) {
			eb_blob_writer_abort(s.w);
			return eb_error_set(err, EB_EINVALID, "%s: got %" PRIu64 " bytes, the "
					    "descriptor says %" PRId64, what, s.n, d->size);
		}
		rc = eb_blob_writer_commit(s.w, d->digest, NULL, err);
		if (rc < 0)
			return eb_error_wrap(err, "%s", what);
		return 0;
	}
}

static int fetch_blob_any(struct eb_registry *r, const struct endpoint *eps, size_t n,
			  size_t start, const struct eb_descriptor *d, struct eb_blobstore *bs,
			  struct eb_error **err)
{
	struct try_state t = { n, start, 0, NULL, 0 };
	size_t i;

	if (eb_blobstore_has(bs, d->digest, d->size))
		return 0;
	while (try_next(&t, &i)) {
		struct eb_error *e = NULL;
		int rc = fetch_blob_ep(r, &eps[i], d, bs, &e);
		if (rc == 0) {
			eb_error_free(t.kept);
			return 0;
		}
		try_failed(&t, &eps[i], e, rc);
	}
	return try_finish(&t, err);
}

int eb_registry_fetch_blob(struct eb_registry *r, const char *ref, const struct eb_descriptor *d,
			   struct eb_blobstore *bs, struct eb_error **err)
{
	struct eb_imageref ir;
	struct endpoint *eps;
	size_t n;
	int rc;

	rc = parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = endpoints_for(r, &ir, &n);
	rc = fetch_blob_any(r, eps, n, 0, d, bs, err);
	endpoints_free(eps, n);
	eb_imageref_release(&ir);
	return rc;
}

/* ---- pull -------------------------------------------------------------------- */

/* An index's manifest without a wanted platform: fine only when there is
 * one real one (attestations say "unknown/unknown"). */
int eb_registry_pull(struct eb_registry *r, const char *ref, const struct eb_platform *platform,
		     struct eb_blobstore *bs, int fetch_layers, struct eb_layout_image *out,
		     struct eb_error **err)
{
	struct eb_imageref ir;
	struct endpoint *eps = NULL;
	struct eb_remote_doc doc = { 0 };
	struct eb_descriptor cur = { 0 };
	struct eb_index idx = { 0 };
	struct eb_buf cfg;
	size_t n = 0, used = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	eb_buf_init(&cfg, 0);
	rc = parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = endpoints_for(r, &ir, &n);
	rc = fetch_doc_any(r, eps, n, 0, ir.digest ? ir.digest : ir.tag ? ir.tag : "latest",
			   ir.digest, &doc, &used, err);
	if (rc < 0)
		goto done;
	out->top.media_type = eb_xstrdup(doc.media_type);
	out->top.digest = eb_xstrdup(doc.digest);
	out->top.size = (int64_t)doc.data.len;
	eb_descriptor_copy(&cur, &out->top);

	/* Follow indexes down to the platform's manifest, every document
	 * fetched by the digest its parent names. */
	for (int depth = 0;; depth++) {
		enum eb_doc_kind kind;
		size_t pos = 0;

		if (!eb_blobstore_has(bs, doc.digest, (int64_t)doc.data.len)) {
			rc = eb_blobstore_put(bs, doc.data.ptr, doc.data.len, NULL, err);
			if (rc < 0)
				goto done;
		}
		rc = eb_image_doc_kind(&kind, doc.media_type, doc.data.ptr, doc.data.len, err);
		if (rc < 0)
			goto wrap;
		if (kind == EB_DOC_MANIFEST)
			break;
		if (depth >= MAX_NESTING) {
			rc = eb_error_set(err, EB_EINVALID, "indexes nest too deep");
			goto wrap;
		}
		rc = eb_index_parse(&idx, doc.data.ptr, doc.data.len, err);
		if (rc < 0)
			goto wrap;
		if (platform) {
			rc = eb_index_select(&idx, platform, &pos, err);
		} else {
			eb_autofree char *what = eb_xasprintf("image index '%s'", cur.digest);
			rc = eb_index_select_only(&idx, what, &pos, err);
		}
		if (rc < 0)
			goto wrap;
		eb_descriptor_release(&cur);
		eb_descriptor_copy(&cur, &idx.manifests[pos]);
		eb_index_release(&idx);
		eb_remote_doc_release(&doc);
		rc = fetch_doc_any(r, eps, n, used, cur.digest, cur.digest, &doc, &used, err);
		if (rc < 0)
			goto done;
		if ((int64_t)doc.data.len != cur.size) {
			rc = eb_error_set(err, EB_EINVALID, "manifest '%s' is %zu bytes, its index says "
					  "%" PRId64, cur.digest, doc.data.len, cur.size);
			goto done;
		}
	}

	rc = eb_manifest_parse(&out->manifest, doc.data.ptr, doc.data.len, err);
	if (rc < 0)
		goto wrap;
	if (out->manifest.config.size < 0 || (uint64_t)out->manifest.config.size > EB_IMAGE_DOC_MAX) {
		rc = eb_error_set(err, EB_ETOOBIG, "config '%s' is over the %zu-byte limit",
				  out->manifest.config.digest, EB_IMAGE_DOC_MAX);
		goto done;
	}
	rc = fetch_blob_any(r, eps, n, used, &out->manifest.config, bs, err);
	if (rc < 0)
		goto done;
	rc = eb_blobstore_read(bs, out->manifest.config.digest, &cfg, EB_IMAGE_DOC_MAX, err);
	if (rc < 0)
		goto done;
	rc = eb_config_parse(&out->config, cfg.ptr, cfg.len, err);
	if (rc < 0) {
		eb_error_wrap(err, "reading config '%s' of '%s'", out->manifest.config.digest, ref);
		goto done;
	}
	if (platform && !eb_platform_matches(platform, &out->config.platform)) {
		eb_autofree char *want = eb_platform_format(platform);
		eb_autofree char *have = eb_platform_format(&out->config.platform);
		rc = eb_error_set(err, EB_ENOTFOUND, "image '%s' is for '%s', not '%s'", ref, have,
				  want);
		goto done;
	}
	for (size_t i = 0; fetch_layers && i < out->manifest.n_layers; i++) {
		rc = fetch_blob_any(r, eps, n, used, &out->manifest.layers[i], bs, err);
		if (rc < 0)
			goto done;
	}
	out->manifest_desc = cur;
	memset(&cur, 0, sizeof(cur));
	goto done;
wrap:
	eb_error_wrap(err, "reading '%s' of '%s'", cur.digest, ref);
done:
	if (rc < 0)
		eb_layout_image_release(out);
	eb_buf_release(&cfg);
	eb_index_release(&idx);
	eb_descriptor_release(&cur);
	eb_remote_doc_release(&doc);
	endpoints_free(eps, n);
	eb_imageref_release(&ir);
	return rc;
}

/* ---- push: what to send -------------------------------------------------------- */

/* A repository pushed to. */
struct target {
	char *registry;   /* "127.0.0.1:5000" */
	char *repository; /* "ml/churn" */
	char *name;       /* "127.0.0.1:5000/ml/churn", for messages */
};

/* A manifest or index read from the blob store, with what it references. */
struct pdoc {
	char *digest;
	char *media_type; /* the Content-Type it is put with */
	int is_index;
	struct eb_buf data;
	struct eb_descriptor *refs; /* index: its manifests; manifest: config, layers */
	size_t nrefs;
};

/* One (repository, blob) pair to make present; filled in by a worker. */
struct bjob {
	size_t target;
	char *digest;
	int64_t size;
	int rc;
	struct eb_error *err;
};

/* One (repository, document) pair to put by digest. */
struct djob {
	size_t target;
	size_t doc;
};

struct psource {
	const char *digest;
	struct eb_imageref ref;
};

struct push {
	struct eb_registry *r;
	struct eb_blobstore *bs;
	struct eb_push_result *res;
	struct target *targets;
	size_t ntargets;
	struct pdoc *docs;
	size_t ndocs;
	struct bjob *blobs;
	size_t nblobs;
	struct djob *djobs;
	size_t ndjobs;
	struct psource *sources;
	size_t nsources;
	/* the upload pool */
	pthread_mutex_t lock;
	size_t next;
	int stop;
};

static void push_release(struct push *p)
{
	for (size_t i = 0; i < p->ntargets; i++) {
		free(p->targets[i].registry);
		free(p->targets[i].repository);
		free(p->targets[i].name);
	}
	free(p->targets);
	for (size_t i = 0; i < p->ndocs; i++) {
		free(p->docs[i].digest);
		free(p->docs[i].media_type);
		eb_buf_release(&p->docs[i].data);
		for (size_t k = 0; k < p->docs[i].nrefs; k++)
			eb_descriptor_release(&p->docs[i].refs[k]);
		free(p->docs[i].refs);
	}
	free(p->docs);
	for (size_t i = 0; i < p->nblobs; i++) {
		free(p->blobs[i].digest);
		eb_error_free(p->blobs[i].err);
	}
	free(p->blobs);
	free(p->djobs);
	for (size_t i = 0; i < p->nsources; i++)
		eb_imageref_release(&p->sources[i].ref);
	free(p->sources);
	pthread_mutex_destroy(&p->lock);
}

/* Report an event and count it, one at a time whatever thread we are on. */
static void emit(struct push *p, enum eb_push_event_kind kind, const struct target *t,
		 const char *digest, const char *tag, uint64_t size, uint64_t done)
{
	struct eb_push_event ev = { kind, t->repository, digest, tag, size, done };

	pthread_mutex_lock(&p->r->lock);
	switch (kind) {
	case EB_PUSH_BLOB_EXISTS:
		p->res->blobs_existing++;
		break;
	case EB_PUSH_BLOB_MOUNTED:
		p->res->blobs_mounted++;
		break;
	case EB_PUSH_BLOB_DONE:
		p->res->blobs_uploaded++;
		p->res->bytes_uploaded += size;
		break;
	case EB_PUSH_MANIFEST:
		p->res->manifests++;
		break;
	case EB_PUSH_TAG:
		p->res->tags++;
		break;
	default:
		break;
	}
	if (p->r->on_event)
		p->r->on_event(p->r->event_userdata, &ev);
	pthread_mutex_unlock(&p->r->lock);
}

static size_t target_add(struct push *p, const struct eb_imageref *ir)
{
	struct target *t;

	for (size_t i = 0; i < p->ntargets; i++)
		if (strcasecmp(p->targets[i].registry, ir->domain) == 0 &&
		    strcmp(p->targets[i].repository, ir->path) == 0)
			return i;
	p->targets = eb_xreallocarray(p->targets, p->ntargets + 1, sizeof(*p->targets));
	t = &p->targets[p->ntargets];
	t->registry = eb_xstrdup(ir->domain);
	t->repository = eb_xstrdup(ir->path);
	t->name = eb_xasprintf("%s/%s", ir->domain, ir->path);
	return p->ntargets++;
}

static void blob_add(struct push *p, size_t target, const struct eb_descriptor *d)
{
	for (size_t i = 0; i < p->nblobs; i++)
		if (p->blobs[i].target == target && strcmp(p->blobs[i].digest, d->digest) == 0)
			return;
	p->blobs = eb_xreallocarray(p->blobs, p->nblobs + 1, sizeof(*p->blobs));
	memset(&p->blobs[p->nblobs], 0, sizeof(*p->blobs));
	p->blobs[p->nblobs].target = target;
	p->blobs[p->nblobs].digest = eb_xstrdup(d->digest);
	p->blobs[p->nblobs].size = d->size;
	p->nblobs++;
}

/* The config and layers of a manifest.  Read with jansson rather than
 * eb_manifest_parse, which refuses artifacts: an index may well list an
 * attestation manifest next to the images, and it is pushed as it is. */
static int manifest_refs(struct pdoc *doc, struct eb_error **err)
{
	json_auto_t *root = json_loadb(doc->data.ptr, doc->data.len, 0, NULL);
	const json_t *cfg, *layers;
	size_t n;
	int rc;

	if (!json_is_object(root))
		return eb_error_set(err, EB_EINVALID, "manifest '%s' is not a JSON object",
				    doc->digest);
	cfg = json_object_get(root, "config");
	layers = json_object_get(root, "layers");
	if (!json_is_object(cfg))
		return eb_error_set(err, EB_EINVALID, "manifest '%s' has no 'config'", doc->digest);
	if (layers && !json_is_array(layers))
		return eb_error_set(err, EB_EINVALID, "'layers' of manifest '%s' is not a list",
				    doc->digest);
	n = 1 + json_array_size(layers);
	doc->refs = eb_xcalloc(n, sizeof(*doc->refs));
	rc = eb_descriptor_from_json(&doc->refs[0], cfg, "manifest", "config", err);
	if (rc < 0)
		return rc;
	doc->nrefs = 1;
	for (size_t i = 0; i + 1 < n; i++) {
		char path[32];
		snprintf(path, sizeof(path), "layers[%zu]", i);
		rc = eb_descriptor_from_json(&doc->refs[i + 1], json_array_get(layers, i), "manifest",
					     path, err);
		if (rc < 0)
			return rc;
		doc->nrefs++;
	}
	return 0;
}

/* Read the document d names from the blob store (once per push). */
static int doc_load(struct push *p, const struct eb_descriptor *d, size_t *out,
		    struct eb_error **err)
{
	struct pdoc doc = { 0 };
	enum eb_doc_kind kind;
	json_auto_t *root = NULL;
	const char *own;
	int rc;

	for (size_t i = 0; i < p->ndocs; i++) {
		if (strcmp(p->docs[i].digest, d->digest) == 0) {
			*out = i;
			return 0;
		}
	}
	doc.digest = eb_xstrdup(d->digest);
	eb_buf_init(&doc.data, 0);
	rc = eb_blobstore_read(p->bs, d->digest, &doc.data, EB_IMAGE_DOC_MAX, err);
	if (rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		rc = eb_error_set(err, EB_ENOTFOUND, "document '%s' is not in the blob store",
				  d->digest);
	}
	if (rc < 0)
		goto fail;
	if (d->size >= 0 && (uint64_t)d->size != doc.data.len) {
		rc = eb_error_set(err, EB_EINVALID, "document '%s' is %zu bytes, its descriptor says "
				  "%" PRId64, d->digest, doc.data.len, d->size);
		goto fail;
	}
	rc = eb_image_doc_kind(&kind, d->media_type, doc.data.ptr, doc.data.len, err);
	if (rc < 0)
		goto fail;
	doc.is_index = kind == EB_DOC_INDEX;
	/* The registry picks its parser by Content-Type and checks it
	 * against the document's own mediaType: send that when there is
	 * one. */
	root = json_loadb(doc.data.ptr, doc.data.len, 0, NULL);
	own = json_string_value(json_object_get(root, "mediaType"));
	if (own && (eb_media_type_is_manifest(own) || eb_media_type_is_index(own)))
		doc.media_type = eb_xstrdup(own);
	else if (d->media_type &&
		 (doc.is_index ? eb_media_type_is_index(d->media_type)
			       : eb_media_type_is_manifest(d->media_type)))
		doc.media_type = eb_xstrdup(d->media_type);
	else
		doc.media_type = eb_xstrdup(doc.is_index ? EB_MEDIA_OCI_INDEX : EB_MEDIA_OCI_MANIFEST);
	if (doc.is_index) {
		struct eb_index idx;
		rc = eb_index_parse(&idx, doc.data.ptr, doc.data.len, err);
		if (rc < 0)
			goto fail;
		doc.refs = eb_steal_ptr(&idx.manifests);
		doc.nrefs = idx.n_manifests;
		idx.n_manifests = 0;
		eb_index_release(&idx);
	} else {
		rc = manifest_refs(&doc, err);
		if (rc < 0)
			goto fail;
	}
	p->docs = eb_xreallocarray(p->docs, p->ndocs + 1, sizeof(*p->docs));
	p->docs[p->ndocs] = doc;
	*out = p->ndocs++;
	return 0;
fail:
	free(doc.digest);
	free(doc.media_type);
	eb_buf_release(&doc.data);
	for (size_t k = 0; k < doc.nrefs; k++)
		eb_descriptor_release(&doc.refs[k]);
	free(doc.refs);
	return rc;
}

/* Collect what pushing d to a target takes: blobs, and documents in an
 * order where every document comes after those it references. */
static int walk(struct push *p, size_t target, const struct eb_descriptor *d, int depth,
		struct eb_error **err)
{
	size_t di = 0;
	int rc;

	if (depth > MAX_NESTING)
		return eb_error_set(err, EB_EINVALID, "indexes nest too deep at '%s'", d->digest);
	rc = doc_load(p, d, &di, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < p->ndjobs; i++)
		if (p->djobs[i].target == target && p->djobs[i].doc == di)
			return 0;
	/* p->docs moves as documents are added: index it afresh. */
	for (size_t i = 0; i < p->docs[di].nrefs; i++) {
		const struct eb_descriptor *ref = &p->docs[di].refs[i];
		if (!p->docs[di].is_index) {
			blob_add(p, target, ref);
		} else if (eb_media_type_is_manifest(ref->media_type) ||
			   eb_media_type_is_index(ref->media_type)) {
			struct eb_descriptor child;
			eb_descriptor_copy(&child, ref);
			rc = walk(p, target, &child, depth + 1, err);
			eb_descriptor_release(&child);
			if (rc < 0)
				return rc;
		} else {
			return eb_error_set(err, EB_EINVALID, "index '%s' lists '%s' of type '%s', "
					    "which is not a manifest or an index",
					    p->docs[di].digest, ref->digest, ref->media_type);
		}
	}
	p->djobs = eb_xreallocarray(p->djobs, p->ndjobs + 1, sizeof(*p->djobs));
	p->djobs[p->ndjobs].target = target;
	p->djobs[p->ndjobs].doc = di;
	p->ndjobs++;
	return 0;
}

/* ---- push: blobs --------------------------------------------------------------- */

static long backoff(const struct eb_registry *r, unsigned failures, long retry_after_ms)
{
	long d = r->backoff_ms;
	unsigned int rnd = 0;

	if (retry_after_ms >= 0)
		return retry_after_ms < r->backoff_max_ms ? retry_after_ms : r->backoff_max_ms;
	for (unsigned i = 1; i < failures && d < r->backoff_max_ms; i++)
		d *= 2;
	if (d > r->backoff_max_ms)
		d = r->backoff_max_ms;
	/* Jitter, so that the pool's threads do not come back in step. */
	if (RAND_bytes((unsigned char *)&rnd, sizeof(rnd)) != 1)
		rnd = 0;
	return d / 2 + (d > 1 ? (long)(rnd % (unsigned long)(d / 2 + 1)) : 0);
}

/* HEAD the blob in the target repository: *exists 1 on 200, 0 on 404. */
static int blob_exists(struct push *p, const struct target *t, const char *digest, int *exists,
		       struct eb_error **err)
{
	eb_autofree char *path = eb_xasprintf("/v2/%s/blobs/%s", t->repository, digest);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	int rc;

	*exists = 0;
	req.method = "HEAD";
	req.registry = t->registry;
	req.url = path;
	req.repository = t->repository;
	req.push = 1; /* one token for every request of the push */
	rc = eb_http_request(p->r->http, &req, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "checking blob '%s' in '%s'", digest, t->name);
	} else if (resp.status == 200) {
		*exists = 1;
	} else if (resp.status != 404) {
		eb_autofree char *what = eb_xasprintf("checking blob '%s' in '%s'", digest, t->name);
		rc = eb_http_response_error(&resp, what, err);
	}
	eb_http_response_release(&resp);
	return rc;
}

/* Cancel an upload session; a registry that will not is left to expire
 * it, so failures do not matter. */
static void session_delete(struct push *p, const struct target *t, const char *loc)
{
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *e = NULL;

	req.method = "DELETE";
	req.registry = t->registry;
	req.url = loc;
	req.repository = t->repository;
	req.push = 1;
	req.no_retry = 1;
	eb_http_request(p->r->http, &req, &resp, &e);
	eb_http_response_release(&resp);
	eb_error_free(e);
}

/* Mount the blob from another repository of the same registry.  *mounted
 * is 1 on a 201; any other answer (202 with a session, 401/403 from
 * registries that refuse cross-repository access, 404) means upload it. */
static int try_mount(struct push *p, const struct target *t, const char *digest,
		     const char *from, int *mounted, struct eb_error **err)
{
	eb_autofree char *path =
		eb_xasprintf("/v2/%s/blobs/uploads/?mount=%s&from=%s", t->repository, digest, from);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *e = NULL;
	int rc = 0;

	*mounted = 0;
	req.method = "POST";
	req.registry = t->registry;
	req.url = path;
	req.repository = t->repository;
	req.push = 1;
	req.mount_from = from;
	if (eb_http_request(p->r->http, &req, &resp, &e) < 0) {
		eb_error_free(e);
	} else if (resp.status == 201) {
		const char *hdr = sha256_header(&resp);
		if (hdr && strcmp(hdr, digest) != 0)
			rc = eb_error_set(err, EB_ENET, "mounting blob '%s' into '%s': the registry "
					  "answered for '%s'", digest, t->name, hdr);
		else
			*mounted = 1;
	} else if (resp.status == 202 && eb_http_response_header(&resp, "Location")) {
		eb_autofree char *loc =
			eb_http_url_resolve(resp.url, eb_http_response_header(&resp, "Location"));
		if (loc)
			session_delete(p, t, loc);
	}
	eb_http_response_release(&resp);
	return rc;
}

/* One blob upload in progress. */
struct upload {
	struct push *p;
	const struct target *t;
	const char *digest;
	uint64_t size;
	int fd;
	int chunked;
	uint64_t chunk;  /* PATCH size */
	char *loc;       /* the newest Location of the session; NULL: none */
	uint64_t offset; /* bytes the session holds */
	char *what;      /* "pushing blob 'x' to 'reg/repo'" */
};

static int up_request(struct upload *u, const char *method, const char *url,
		      const char *const *headers, int with_body, uint64_t off, uint64_t len,
		      struct eb_http_response *resp, struct eb_error **err)
{
	struct eb_http_request req = { 0 };

	req.method = method;
	req.registry = u->t->registry;
	req.url = url;
	req.repository = u->t->repository;
	req.push = 1;
	req.headers = headers;
	if (with_body) {
		req.body_kind = EB_HTTP_BODY_FILE;
		req.body_fd = u->fd;
		req.body_offset = off;
		req.body_length = len;
		/* Resent blindly, these bytes would be appended to what
		 * already arrived: recovery is upload_blob's. */
		req.no_retry = 1;
	}
	return eb_http_request(u->p->r->http, &req, resp, err);
}

static void up_take_location(struct upload *u, const struct eb_http_response *resp)
{
	const char *l = eb_http_response_header(resp, "Location");
	char *abs;

	if (!l)
		return;
	abs = eb_http_url_resolve(resp->url, l);
	if (abs) {
		free(u->loc);
		u->loc = abs;
	}
}

/* Bytes an upload session holds by its Range header: "0-<last>", or
 * "bytes=0-<last>" as old Docker documents it.  "0-0" stands for both
 * 0 and 1 byte; read as 0 (a PATCH from 0 then gets 416 and the session is
 * started again).  -1 when there is no usable header. */
static int64_t range_received(const struct eb_http_response *resp)
{
	const char *v = eb_http_response_header(resp, "Range");
	unsigned long long a, b;
	char *end;

	if (!v)
		return -1;
	if (strncasecmp(v, "bytes=", 6) == 0)
		v += 6;
	errno = 0;
	a = strtoull(v, &end, 10);
	if (errno || end == v || *end != '-' || a != 0)
		return -1;
	v = end + 1;
	b = strtoull(v, &end, 10);
	if (errno || end == v || *end || b >= INT64_MAX)
		return -1;
	return b == 0 ? 0 : (int64_t)b + 1;
}

/* Open an upload session (a bodiless POST: http.c retries it). */
static int up_start(struct upload *u, struct eb_error **err)
{
	eb_autofree char *path = eb_xasprintf("/v2/%s/blobs/uploads/", u->t->repository);
	struct eb_http_response resp;
	const char *min;
	int rc;

	rc = up_request(u, "POST", path, NULL, 0, 0, 0, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", u->what);
	} else if (resp.status != 202 || !eb_http_response_header(&resp, "Location")) {
		rc = resp.status == 202 ? eb_error_set(err, EB_ENET, "%s: the registry opened an "
						       "upload without a Location", u->what)
					: eb_http_response_error(&resp, u->what, err);
	} else {
		up_take_location(u, &resp);
		u->offset = 0;
		/* Chunks below the registry's minimum would be refused. */
		min = eb_http_response_header(&resp, "OCI-Chunk-Min-Length");
		if (u->chunked && min) {
			unsigned long long m = strtoull(min, NULL, 10);
			if (m > u->chunk && m < ((uint64_t)1 << 40))
				u->chunk = m;
		}
		if (!u->loc)
			rc = eb_error_set(err, EB_ENET, "%s: invalid upload Location", u->what);
	}
	eb_http_response_release(&resp);
	return rc;
}

static char *with_digest(const char *loc, const char *digest)
{
	/* Keep the Location's query: distribution carries its upload
	 * state (_state) there. */
	return eb_xasprintf("%s%sdigest=%s", loc, strchr(loc, '?') ? "&" : "?", digest);
}

/* Send what the session lacks: PATCH chunks from u->offset (chunked), then
 * the closing PUT; or the whole blob in one PUT.  resp is the answer to the
 * last request sent (a failed PATCH, or the PUT). */
static int up_send(struct upload *u, struct eb_http_response *resp, struct eb_error **err)
{
	static const char *const octet[] = { "Content-Type: application/octet-stream", NULL };
	eb_autofree char *final = NULL;
	int rc;

	if (!u->chunked) {
		final = with_digest(u->loc, u->digest);
		return up_request(u, "PUT", final, octet, 1, 0, u->size, resp, err);
	}
	while (u->offset < u->size) {
		uint64_t len = u->size - u->offset < u->chunk ? u->size - u->offset : u->chunk;
		char range[80];
		const char *headers[] = { octet[0], range, NULL };
		int64_t got;

		/* start-end, inclusive, without "bytes " (distribution-spec) */
		snprintf(range, sizeof(range), "Content-Range: %" PRIu64 "-%" PRIu64, u->offset,
			 u->offset + len - 1);
		rc = up_request(u, "PATCH", u->loc, headers, 1, u->offset, len, resp, err);
		/* ECR answers a chunk with 201: still only a chunk, the PUT
		 * below commits. */
		if (rc < 0 || (resp->status != 202 && resp->status != 201))
			return rc;
		up_take_location(u, resp);
		got = range_received(resp);
		u->offset = got > (int64_t)u->offset && (uint64_t)got <= u->size ? (uint64_t)got
										   : u->offset + len;
		eb_http_response_release(resp);
		emit(u->p, EB_PUSH_BLOB_PROGRESS, u->t, u->digest, NULL, u->size, u->offset);
	}
	final = with_digest(u->loc, u->digest);
	return up_request(u, "PUT", final, NULL, 0, 0, 0, resp, err);
}

/* After a failure: learn how far a chunked session got (GET <location>
 * -> 204 with Range and a fresh Location), or give the session up. */
static void up_recover(struct upload *u, long failed_status)
{
	if (u->chunked && u->loc && failed_status != 416) {
		struct eb_http_response resp;
		struct eb_error *e = NULL;
		int rc = up_request(u, "GET", u->loc, NULL, 0, 0, 0, &resp, &e);
		eb_error_free(e);
		if (rc == 0 && (resp.status == 204 || resp.status == 200)) {
			int64_t got = range_received(&resp);
			up_take_location(u, &resp);
			u->offset = got > 0 && (uint64_t)got <= u->size ? (uint64_t)got : 0;
			eb_http_response_release(&resp);
			return;
		}
		eb_http_response_release(&resp);
	}
	if (u->loc)
		session_delete(u->p, u->t, u->loc);
	free(u->loc);
	u->loc = NULL;
	u->offset = 0;
}

/* Answers after which the upload is tried again: the usual transient
 * ones, and those saying the session lost track (bytes that half-arrived,
 * a session the registry dropped). */
static int up_retryable(const struct eb_http_response *resp)
{
	long s = resp->status;
	const char *body = resp->body.ptr ? resp->body.ptr : "";

	if (s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504 || s == 416)
		return 1;
	if (s == 400)
		return strstr(body, "DIGEST_INVALID") || strstr(body, "BLOB_UPLOAD_INVALID") ||
		       strstr(body, "SIZE_INVALID");
	if (s == 404)
		return strstr(body, "BLOB_UPLOAD_UNKNOWN") != NULL;
	return 0;
}

static int upload_blob(struct push *p, const struct target *t, const char *digest, uint64_t size,
		       struct eb_error **err)
{
	struct upload u = { 0 };
	eb_autofree char *path = eb_blobstore_path(p->bs, digest);
	unsigned failures = 0;
	uint64_t best = 0;
	int rc;

	u.p = p;
	u.t = t;
	u.digest = digest;
	u.size = size;
	u.chunk = p->r->chunk_size;
	u.chunked = u.chunk && size > u.chunk;
	u.what = eb_xasprintf("pushing blob '%s' to '%s'", digest, t->name);
	u.fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (u.fd < 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot open blob '%s'",
					path ? path : digest);
		goto done;
	}
	emit(p, EB_PUSH_BLOB_START, t, digest, NULL, size, 0);
	for (;;) {
		struct eb_http_response resp;
		struct eb_error *e = NULL;
		long retry_after = -1, status;
		int exists = 0;

		if (!u.loc) {
			rc = up_start(&u, err);
			if (rc < 0)
				goto done;
		}
		rc = up_send(&u, &resp, &e);
		status = resp.status;
		if (rc == 0 && status == 201) {
			const char *hdr = sha256_header(&resp);
			if (hdr && strcmp(hdr, digest) != 0) {
				rc = eb_error_set(err, EB_ENET, "%s: the registry stored '%s'", u.what,
						  hdr);
			} else {
				emit(p, EB_PUSH_BLOB_DONE, t, digest, NULL, size, size);
			}
			eb_http_response_release(&resp);
			eb_error_free(e);
			goto done;
		}
		if (rc == 0) {
			int again = up_retryable(&resp);
			retry_after = eb_http_parse_retry_after(
				eb_http_response_header(&resp, "Retry-After"), time(NULL));
			rc = eb_http_response_error(&resp, u.what, &e);
			if (!again) {
				eb_http_response_release(&resp);
				rc = propagate(err, e, rc);
				goto done;
			}
		} else if (rc != -EB_ENET) {
			/* not the network's failure: the file, a cap */
			eb_http_response_release(&resp);
			rc = propagate(err, e, rc);
			goto done;
		}
		eb_http_response_release(&resp);

		/* Progress since the last failure earns a fresh set of
		 * attempts: a long upload over a flaky link still ends. */
		if (u.offset > best) {
			best = u.offset;
			failures = 0;
		}
		if (++failures >= (unsigned)p->r->max_attempts) {
			propagate(err, e, rc);
			eb_error_hint(err, "the upload was tried %u times", failures);
			goto done;
		}
		eb_error_free(e);
		emit(p, EB_PUSH_BLOB_RETRY, t, digest, NULL, size, u.offset);
		eb_sleep_ms(backoff(p->r, failures, retry_after));

		/* A commit whose answer was lost has done its job. */
		e = NULL;
		if (blob_exists(p, t, digest, &exists, &e) == 0 && exists) {
			eb_error_free(e);
			emit(p, EB_PUSH_BLOB_DONE, t, digest, NULL, size, size);
			rc = 0;
			goto done;
		}
		eb_error_free(e);
		up_recover(&u, status);
	}
done:
	if (rc < 0 && u.loc)
		session_delete(p, t, u.loc);
	if (u.fd >= 0)
		close(u.fd);
	free(u.loc);
	free(u.what);
	return rc;
}

/* Make one blob present in one repository: there already, mounted from a
 * source on the same registry, or uploaded (after fetching it from a
 * source when the blob store lacks it). */
static int push_blob(struct push *p, const struct bjob *j, struct eb_error **err)
{
	const struct target *t = &p->targets[j->target];
	struct eb_descriptor d = { 0 };
	struct eb_error *kept = NULL;
	int rc, exists, kept_rc = 0;

	rc = blob_exists(p, t, j->digest, &exists, err);
	if (rc < 0)
		return rc;
	if (exists) {
		emit(p, EB_PUSH_BLOB_EXISTS, t, j->digest, NULL, (uint64_t)j->size, 0);
		return 0;
	}
	/* A mount moves no bytes, so it beats an upload even when the blob
	 * is in the store.  The source may live on this registry directly or
	 * through a mirror (docker.io mirrored to the registry we push to). */
	for (size_t i = 0; i < p->nsources; i++) {
		const struct psource *s = &p->sources[i];
		struct endpoint *eps;
		size_t n;
		int mounted = 0, tried = 0;

		if (strcmp(s->digest, j->digest) != 0)
			continue;
		eps = endpoints_for(p->r, &s->ref, &n);
		for (size_t e = 0; e < n && !tried; e++) {
			if (strcasecmp(eps[e].registry, t->registry) != 0 ||
			    strcmp(eps[e].repository, t->repository) == 0)
				continue;
			tried = 1;
			rc = try_mount(p, t, j->digest, eps[e].repository, &mounted, err);
		}
		endpoints_free(eps, n);
		if (tried && rc < 0)
			return rc;
		if (mounted) {
			emit(p, EB_PUSH_BLOB_MOUNTED, t, j->digest, NULL, (uint64_t)j->size, 0);
			return 0;
		}
		if (tried)
			break; /* one refusal is enough: copy it instead */
	}
	if (eb_blobstore_has(p->bs, j->digest, j->size))
		return upload_blob(p, t, j->digest, (uint64_t)j->size, err);

	/* Fetch it from a source, then upload it like our own. */
	d.digest = j->digest;
	d.size = j->size;
	for (size_t i = 0; i < p->nsources && !eb_blobstore_has(p->bs, j->digest, j->size); i++) {
		const struct psource *s = &p->sources[i];
		struct endpoint *eps;
		struct eb_error *e = NULL;
		size_t n;
		if (strcmp(s->digest, j->digest) != 0)
			continue;
		eps = endpoints_for(p->r, &s->ref, &n);
		rc = fetch_blob_any(p->r, eps, n, 0, &d, p->bs, &e);
		endpoints_free(eps, n);
		if (rc < 0 && !kept) {
			kept = e;
			kept_rc = rc;
		} else {
			eb_error_free(e);
		}
	}
	if (!eb_blobstore_has(p->bs, j->digest, j->size)) {
		if (kept)
			return propagate(err, kept, kept_rc);
		return eb_error_set(err, EB_ENOTFOUND, "blob '%s' for '%s' is neither in the blob "
				    "store nor in the registry, and no source has it", j->digest,
				    t->name);
	}
	eb_error_free(kept);
	return upload_blob(p, t, j->digest, (uint64_t)j->size, err);
}

/* Push the next blob; 0 when none is left (or the push stopped). */
static int push_next(struct push *p)
{
	struct eb_error *e = NULL;
	size_t i;
	int rc;

	pthread_mutex_lock(&p->lock);
	if (p->stop || p->next >= p->nblobs) {
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	i = p->next++;
	pthread_mutex_unlock(&p->lock);
	rc = push_blob(p, &p->blobs[i], &e);
	if (rc < 0) {
		/* Let the running uploads finish, start no more. */
		p->blobs[i].rc = rc;
		p->blobs[i].err = e;
		pthread_mutex_lock(&p->lock);
		p->stop = 1;
		pthread_mutex_unlock(&p->lock);
	} else {
		eb_error_free(e);
	}
	return 1;
}

static void *push_worker(void *arg)
{
	struct push *p = arg;

	while (push_next(p))
		;
	return NULL;
}

static int push_blobs(struct push *p, struct eb_error **err)
{
	size_t nthreads = (size_t)p->r->concurrency, started = 0;
	pthread_t *th;

	if (nthreads > p->nblobs)
		nthreads = p->nblobs;
	th = eb_xcalloc(nthreads ? nthreads : 1, sizeof(*th));
	/* The first blob alone: it learns what the registry speaks (https,
	 * or plain http on loopback) and gets the push token, which the
	 * client remembers; threads started at once would each try TLS
	 * against a plain registry and each ask for a token. */
	if (nthreads > 1)
		(void)push_next(p);
	for (; started < nthreads; started++)
		if (pthread_create(&th[started], NULL, push_worker, p) != 0)
			break;
	if (started == 0)
		push_worker(p);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	for (size_t i = 0; i < p->nblobs; i++)
		if (p->blobs[i].rc < 0)
			return propagate(err, eb_steal_ptr(&p->blobs[i].err), p->blobs[i].rc);
	return 0;
}

/* ---- push: documents and tags ---------------------------------------------------- */

/* PUT a document by digest, or under a tag (tag non-NULL). */
static int put_doc(struct push *p, const struct target *t, const struct pdoc *d, const char *tag,
		   struct eb_error **err)
{
	eb_autofree char *path =
		eb_xasprintf("/v2/%s/manifests/%s", t->repository, tag ? tag : d->digest);
	eb_autofree char *ct = eb_xasprintf("Content-Type: %s", d->media_type);
	eb_autofree char *what = tag ? eb_xasprintf("tagging '%s:%s'", t->name, tag)
				     : eb_xasprintf("pushing %s '%s' to '%s'",
						    d->is_index ? "index" : "manifest", d->digest,
						    t->name);
	const char *headers[] = { ct, NULL };
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	int rc;

	req.method = "PUT";
	req.registry = t->registry;
	req.url = path;
	req.repository = t->repository;
	req.push = 1;
	req.headers = headers;
	req.body_kind = EB_HTTP_BODY_MEM;
	req.body = d->data.ptr;
	req.body_len = d->data.len;
	rc = eb_http_request(p->r->http, &req, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", what);
	} else if (resp.status < 200 || resp.status > 299) {
		rc = eb_http_response_error(&resp, what, err);
	} else {
		const char *hdr = sha256_header(&resp);
		if (hdr && strcmp(hdr, d->digest) != 0)
			rc = eb_error_set(err, EB_ENET, "%s: the registry stored it as '%s'", what,
					  hdr);
		else
			emit(p, tag ? EB_PUSH_TAG : EB_PUSH_MANIFEST, t, d->digest, tag, d->data.len,
			     d->data.len);
	}
	eb_http_response_release(&resp);
	return rc;
}

static int tag_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > EB_IMAGEREF_TAG_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int w = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			c == '_';
		if (!w && (i == 0 || (c != '.' && c != '-')))
			return 0;
	}
	return 1;
}

int eb_registry_push(struct eb_registry *r, const struct eb_push_image *images, size_t n,
		     const struct eb_blob_source *sources, size_t nsources, struct eb_blobstore *bs,
		     struct eb_push_result *res, struct eb_error **err)
{
	struct eb_push_result scratch;
	struct push p = { 0 };
	size_t *image_target = NULL;
	int rc = 0;

	if (!res)
		res = &scratch;
	memset(res, 0, sizeof(*res));
	p.r = r;
	p.bs = bs;
	p.res = res;
	pthread_mutex_init(&p.lock, NULL);

	p.sources = eb_xcalloc(nsources ? nsources : 1, sizeof(*p.sources));
	for (size_t i = 0; i < nsources; i++) {
		if (!sources[i].digest || !eb_digest_valid(sources[i].digest) ||
		    !sources[i].repository_ref) {
			rc = eb_error_set(err, EB_EINVALID, "invalid blob source for '%s'",
					  sources[i].digest ? sources[i].digest : "(null)");
			goto done;
		}
		rc = parse_ref(&p.sources[i].ref, sources[i].repository_ref, err);
		if (rc < 0)
			goto done;
		p.sources[i].digest = sources[i].digest;
		p.nsources++;
	}

	/* Everything to send, before anything is sent: a broken document
	 * fails the push while the registry is untouched. */
	image_target = eb_xcalloc(n ? n : 1, sizeof(*image_target));
	for (size_t i = 0; i < n; i++) {
		const struct eb_push_image *img = &images[i];
		struct eb_imageref ir;
		if (!img->repository_ref || !img->top || !img->top->digest) {
			rc = eb_error_set(err, EB_EINVALID, "image %zu to push has no repository or "
					  "no top descriptor", i + 1);
			goto done;
		}
		rc = parse_ref(&ir, img->repository_ref, err);
		if (rc < 0)
			goto done;
		if (ir.tag || ir.digest) {
			eb_imageref_release(&ir);
			rc = eb_error_set(err, EB_EINVALID, "'%s' must name a repository, without a "
					  "tag or digest", img->repository_ref);
			goto done;
		}
		image_target[i] = target_add(&p, &ir);
		eb_imageref_release(&ir);
		for (const char *const *tag = img->tags; tag && *tag; tag++) {
			if (!tag_valid(*tag)) {
				rc = eb_error_set(err, EB_EINVALID, "invalid tag '%s' for '%s'", *tag,
						  img->repository_ref);
				goto done;
			}
		}
		rc = walk(&p, image_target[i], img->top, 0, err);
		if (rc < 0) {
			eb_error_wrap(err, "pushing '%s'", img->repository_ref);
			goto done;
		}
	}

	rc = push_blobs(&p, err);
	if (rc < 0)
		goto done;

	/* Image manifests, then indexes (children before parents: walk()
	 * listed them so), all by digest. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p.ndjobs; i++) {
			const struct pdoc *d = &p.docs[p.djobs[i].doc];
			if (d->is_index != pass)
				continue;
			rc = put_doc(&p, &p.targets[p.djobs[i].target], d, NULL, err);
			if (rc < 0)
				goto done;
		}
	}
	/* The tags last: only now is everything they lead to in place. */
	for (size_t i = 0; i < n; i++) {
		size_t di = 0;
		for (size_t k = 0; k < p.ndocs; k++)
			if (strcmp(p.docs[k].digest, images[i].top->digest) == 0)
				di = k;
		for (const char *const *tag = images[i].tags; tag && *tag; tag++) {
			rc = put_doc(&p, &p.targets[image_target[i]], &p.docs[di], *tag, err);
			if (rc < 0)
				goto done;
		}
	}
done:
	free(image_target);
	push_release(&p);
	return rc;
}
