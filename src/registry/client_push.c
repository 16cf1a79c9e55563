/*
 * client_push.c - the push half of the registry client (see client.h):
 * what to send (the targets, their documents and blobs, walked from the
 * top descriptors), the blobs on a pool of threads with mount, resumable
 * chunked uploads and recovery (client.c's "Retry policy"), then the
 * manifests, indexes and tags.  The mirrors file, pulls and the client
 * itself are client.c (client_internal.h between them).
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

/* The first failure waits the base delay, each further one twice as long
 * (with jitter, so that the pool's threads do not come back in step). */
static long backoff(const struct eb_registry *r, unsigned failures, long retry_after_ms)
{
	return eb_http_backoff(r->backoff_ms, r->backoff_max_ms, failures ? failures - 1 : 0,
			       retry_after_ms);
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
		const char *hdr = eb_client__sha256_header(&resp);
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
			const char *hdr = eb_client__sha256_header(&resp);
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
				rc = eb_client__propagate(err, e, rc);
				goto done;
			}
		} else if (rc != -EB_ENET) {
			/* not the network's failure: the file, a cap */
			eb_http_response_release(&resp);
			rc = eb_client__propagate(err, e, rc);
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
			eb_client__propagate(err, e, rc);
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
		eps = eb_client__endpoints_for(p->r, &s->ref, &n);
		for (size_t e = 0; e < n && !tried; e++) {
			if (strcasecmp(eps[e].registry, t->registry) != 0 ||
			    strcmp(eps[e].repository, t->repository) == 0)
				continue;
			tried = 1;
			rc = try_mount(p, t, j->digest, eps[e].repository, &mounted, err);
		}
		eb_client__endpoints_free(eps, n);
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
		eps = eb_client__endpoints_for(p->r, &s->ref, &n);
		rc = eb_client__fetch_blob_any(p->r, eps, n, 0, &d, p->bs, &e);
		eb_client__endpoints_free(eps, n);
		if (rc < 0 && !kept) {
			kept = e;
			kept_rc = rc;
		} else {
			eb_error_free(e);
		}
	}
	if (!eb_blobstore_has(p->bs, j->digest, j->size)) {
		if (kept)
			return eb_client__propagate(err, kept, kept_rc);
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
			return eb_client__propagate(err, eb_steal_ptr(&p->blobs[i].err), p->blobs[i].rc);
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
		const char *hdr = eb_client__sha256_header(&resp);
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
		rc = eb_client__parse_ref(&p.sources[i].ref, sources[i].repository_ref, err);
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
		rc = eb_client__parse_ref(&ir, img->repository_ref, err);
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
