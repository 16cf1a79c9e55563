/*
 * client.c - registry operations on top of http.c/auth.c: the mirrors and
 * registries file, pulling documents and blobs (verified) into the blob
 * store, and pushing images: blobs on a pool of threads, then manifests,
 * then indexes, then tags (the push is client_push.c).
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
#include "registry/client_internal.h"
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

/* ---- small helpers ------------------------------------------------------- */

/* Move a local error into *err (keeping one already there) and return rc. */
int eb_client__propagate(struct eb_error **err, struct eb_error *e, int rc)
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
const char *eb_client__sha256_header(const struct eb_http_response *resp)
{
	const char *d = eb_http_response_header(resp, "Docker-Content-Digest");

	if (d && strncmp(d, "sha256:", 7) == 0 && eb_digest_valid(d))
		return d;
	return NULL;
}

int eb_client__parse_ref(struct eb_imageref *out, const char *ref, struct eb_error **err)
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

void eb_client__endpoints_free(struct endpoint *eps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(eps[i].registry);
		free(eps[i].repository);
	}
	free(eps);
}

/* Where a repository can be pulled from: its registry's mirrors in the
 * order the file lists them, then the registry itself. */
struct endpoint *eb_client__endpoints_for(const struct eb_registry *r, const struct eb_imageref *ref,
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
	return eb_client__propagate(err, eb_steal_ptr(&t->kept), t->kept_rc ? t->kept_rc : -EB_ENET);
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
	hdr = eb_client__sha256_header(&resp);
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
	rc = eb_client__parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = eb_client__endpoints_for(r, &ir, &n);
	rc = fetch_doc_any(r, eps, n, 0, ir.digest ? ir.digest : ir.tag ? ir.tag : "latest",
			   ir.digest, out, NULL, err);
	eb_client__endpoints_free(eps, n);
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
	hdr = resp.status == 200 ? eb_client__sha256_header(&resp) : NULL;
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
	rc = eb_client__parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = eb_client__endpoints_for(r, &ir, &n);
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
	eb_client__endpoints_free(eps, n);
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
			eb_client__propagate(err, e, rc);
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

int eb_client__fetch_blob_any(struct eb_registry *r, const struct endpoint *eps, size_t n,
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

	rc = eb_client__parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = eb_client__endpoints_for(r, &ir, &n);
	rc = eb_client__fetch_blob_any(r, eps, n, 0, d, bs, err);
	eb_client__endpoints_free(eps, n);
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
	rc = eb_client__parse_ref(&ir, ref, err);
	if (rc < 0)
		return rc;
	eps = eb_client__endpoints_for(r, &ir, &n);
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
	rc = eb_client__fetch_blob_any(r, eps, n, used, &out->manifest.config, bs, err);
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
		rc = eb_client__fetch_blob_any(r, eps, n, used, &out->manifest.layers[i], bs, err);
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
	eb_client__endpoints_free(eps, n);
	eb_imageref_release(&ir);
	return rc;
}

