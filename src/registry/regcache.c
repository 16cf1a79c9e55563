/*
 * regcache.c - the shared build cache in a registry repository: cache
 * records as OCI artifacts, one tag per key (see regcache.h).
 */
#include "config.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/cache.h"
#include "oci/image.h"
#include "registry/client.h"
#include "registry/regcache.h"
#include "util/alloc.h"
#include "util/digest.h"

/* The OCI empty descriptor: an artifact with no config of its own. */
#define EMPTY_MEDIA "application/vnd.oci.empty.v1+json"
#define EMPTY_DIGEST "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
#define ANN_KIND "dev.envbuild.cache.kind"
#define ANN_KEY "dev.envbuild.cache.key"

struct pending {
	char *kind;
	char *key;
	json_t *rec;
};

struct regcache {
	struct eb_registry *r;
	struct eb_blobstore *bs; /* the store this backend sits behind */
	char *from, *to;
	struct eb_regcache_stats *stats, own;
	pthread_mutex_t mu; /* the queue, the known blobs, the counters */
	struct pending *q;
	size_t nq;
	/* blobs the from repository holds: layers of records it answered */
	char **known;
	int64_t *known_size;
	size_t nknown;
};

static char *tag_for(const char *kind, const char *key)
{
	return eb_xasprintf("%s-%s", kind, eb_digest_hex(key));
}

static int rc_has(void *self, const char *digest, int64_t size)
{
	struct regcache *c = self;
	int found = 0;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->nknown && !found; i++)
		found = strcmp(c->known[i], digest) == 0 && (size < 0 || c->known_size[i] == size);
	pthread_mutex_unlock(&c->mu);
	return found;
}

/* The registry client verifies the blob (digest and size) while it
 * streams it into the store, so nothing goes through the writer. */
static int rc_get(void *self, const char *digest, int64_t size, struct eb_blob_writer *w,
		  struct eb_error **err)
{
	struct regcache *c = self;
	struct eb_descriptor d = { 0 };

	(void)w;
	if (!c->from)
		return -EB_ENOTFOUND;
	/* a caller that knows only the digest: the size this side learnt */
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->nknown && size < 0; i++)
		if (strcmp(c->known[i], digest) == 0)
			size = c->known_size[i];
	pthread_mutex_unlock(&c->mu);
	if (size < 0)
		return -EB_ENOTFOUND;
	d.digest = (char *)digest;
	d.size = size;
	return eb_registry_fetch_blob(c->r, c->from, &d, c->bs, err);
}

static void count(struct regcache *c, unsigned *field)
{
	pthread_mutex_lock(&c->mu);
	(*field)++;
	pthread_mutex_unlock(&c->mu);
}

static json_t *record_of(const void *data, size_t len, const char *kind, const char *key,
			 const char **digest, int64_t *size);

static int str_is(const json_t *j, const char *s)
{
	return json_is_string(j) && strcmp(json_string_value(j), s) == 0;
}

int eb_regcache_record_parse(const void *data, size_t len, const char *kind, const char *key,
			     json_t **out)
{
	const char *digest;
	int64_t size;

	*out = record_of(data, len, kind, key, &digest, &size);
	return *out != NULL;
}

/* The record an artifact carries, when it is a well-formed record of
 * kind/key whose blob is the artifact's layer; NULL otherwise. */
static json_t *record_of(const void *data, size_t len, const char *kind, const char *key,
			 const char **digest, int64_t *size)
{
	json_t *m = json_loadb(data, len, 0, NULL);
	json_t *layers = json_object_get(m, "layers"), *ann = json_object_get(m, "annotations");
	json_t *layer = json_array_get(layers, 0), *rec = NULL;
	const char *at = json_string_value(json_object_get(m, "artifactType"));
	const char *text = json_string_value(json_object_get(ann, EB_REGCACHE_RECORD_ANNOTATION));
	const char *ld = json_string_value(json_object_get(layer, "digest"));
	const json_t *ls = json_object_get(layer, "size");
	const json_t *rd, *rs, *rk;

	if (!m || !at || strcmp(at, EB_REGCACHE_ARTIFACT_TYPE) != 0 || json_array_size(layers) != 1 ||
	    !text || !ld || !json_is_integer(ls) ||
	    !str_is(json_object_get(ann, ANN_KIND), kind) || !str_is(json_object_get(ann, ANN_KEY), key))
		goto bad;
	rec = json_loads(text, 0, NULL);
	rd = json_object_get(rec, "digest");
	rs = json_object_get(rec, "size");
	rk = json_object_get(rec, "key");
	/* the record names exactly the blob the registry holds for it */
	if (!json_is_object(rec) || !json_is_string(rd) || strcmp(json_string_value(rd), ld) != 0 ||
	    !eb_digest_valid(ld) || !json_is_integer(rs) ||
	    json_integer_value(rs) != json_integer_value(ls) || json_integer_value(ls) < 0 ||
	    (rk && !(json_is_string(rk) && strcmp(json_string_value(rk), key) == 0)))
		goto bad;
	*digest = json_string_value(rd);
	*size = (int64_t)json_integer_value(rs);
	json_decref(m);
	return rec;
bad:
	json_decref(rec);
	json_decref(m);
	return NULL;
}

static int rc_record_get(void *self, const char *kind, const char *key, json_t **out,
			 struct eb_error **err)
{
	struct regcache *c = self;
	eb_autofree char *tag = NULL, *ref = NULL;
	struct eb_remote_doc doc;
	const char *digest = NULL;
	int64_t size = 0;
	json_t *rec;

	(void)err;
	*out = NULL;
	if (!c->from)
		return 0;
	tag = tag_for(kind, key);
	ref = eb_xasprintf("%s:%s", c->from, tag);
	/* any answer but a record is a miss: it is only a cache */
	if (eb_registry_get_manifest(c->r, ref, &doc, NULL) < 0) {
		count(c, &c->stats->misses);
		return 0;
	}
	rec = record_of(doc.data.ptr, doc.data.len, kind, key, &digest, &size);
	eb_remote_doc_release(&doc);
	if (!rec) {
		count(c, &c->stats->rejected);
		return 0;
	}
	pthread_mutex_lock(&c->mu);
	c->known = eb_xreallocarray(c->known, c->nknown + 1, sizeof(*c->known));
	c->known_size = eb_xreallocarray(c->known_size, c->nknown + 1, sizeof(*c->known_size));
	c->known[c->nknown] = eb_xstrdup(digest);
	c->known_size[c->nknown++] = size;
	c->stats->hits++;
	pthread_mutex_unlock(&c->mu);
	*out = rec;
	return 1;
}

static int rc_record_put(void *self, const char *kind, const char *key, const json_t *rec,
			 struct eb_error **err)
{
	struct regcache *c = self;

	(void)err;
	if (!c->to)
		return 0;
	pthread_mutex_lock(&c->mu);
	c->q = eb_xreallocarray(c->q, c->nq + 1, sizeof(*c->q));
	c->q[c->nq].kind = eb_xstrdup(kind);
	c->q[c->nq].key = eb_xstrdup(key);
	c->q[c->nq].rec = json_deep_copy(rec);
	c->nq++;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* The artifact of one record, put in the store; its descriptor in top. */
static int artifact_put(struct regcache *c, const struct pending *p, struct eb_descriptor *top)
{
	const char *digest = json_string_value(json_object_get(p->rec, "digest"));
	json_int_t size = json_integer_value(json_object_get(p->rec, "size"));
	const char *media = json_string_value(json_object_get(p->rec, "media_type"));
	char dg[EB_DIGEST_STR_LEN + 1];
	char *rtext, *mtext;
	json_t *m;
	int r;

	if (!media)
		media = json_string_value(json_object_get(p->rec, "mediaType"));
	if (!digest)
		return -EB_EINVALID;
	rtext = json_dumps(p->rec, JSON_SORT_KEYS | JSON_COMPACT);
	m = json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:i}, s:[{s:s, s:s, s:I}], s:{s:s, s:s, s:s}}",
		      "schemaVersion", 2, "mediaType", EB_MEDIA_OCI_MANIFEST, "artifactType",
		      EB_REGCACHE_ARTIFACT_TYPE, "config", "mediaType", EMPTY_MEDIA, "digest",
		      EMPTY_DIGEST, "size", 2, "layers", "mediaType",
		      media ? media : "application/octet-stream", "digest", digest, "size", size,
		      "annotations", ANN_KIND, p->kind, ANN_KEY, p->key,
		      EB_REGCACHE_RECORD_ANNOTATION, rtext ? rtext : "");
	free(rtext);
	mtext = m ? json_dumps(m, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(m);
	if (!mtext)
		return -EB_EINVALID;
	r = eb_blobstore_put(c->bs, mtext, strlen(mtext), dg, NULL);
	if (r == 0) {
		top->media_type = eb_xstrdup(EB_MEDIA_OCI_MANIFEST);
		top->digest = eb_xstrdup(dg);
		top->size = (int64_t)strlen(mtext);
	}
	free(mtext);
	return r;
}

/* Push the queued records: their blobs (mounted from the from repository
 * when they are only there), the artifacts, then the tags. */
static void flush(struct regcache *c)
{
	struct eb_push_image *images;
	struct eb_descriptor *tops;
	char **tags;
	const char **tagv;
	struct eb_blob_source *sources;
	struct eb_push_result res = { 0 };
	struct eb_error *e = NULL;
	size_t n = 0, ns = 0;

	if (!c->nq || !c->to)
		return;
	if (eb_blobstore_put(c->bs, "{}", 2, (char[EB_DIGEST_STR_LEN + 1]){ 0 }, NULL) < 0)
		return;
	images = eb_xcalloc(c->nq, sizeof(*images));
	tops = eb_xcalloc(c->nq, sizeof(*tops));
	tags = eb_xcalloc(c->nq, sizeof(*tags));
	tagv = eb_xcalloc(2 * c->nq, sizeof(*tagv));
	sources = eb_xcalloc(c->nq, sizeof(*sources));
	for (size_t i = 0; i < c->nq; i++) {
		const char *digest = json_string_value(json_object_get(c->q[i].rec, "digest"));
		if (artifact_put(c, &c->q[i], &tops[n]) < 0) {
			c->stats->records_failed++;
			continue;
		}
		tags[n] = tag_for(c->q[i].kind, c->q[i].key);
		tagv[2 * n] = tags[n];
		images[n].repository_ref = c->to;
		images[n].top = &tops[n];
		images[n].tags = &tagv[2 * n];
		if (c->from && strcmp(c->from, c->to) != 0) {
			sources[ns].digest = digest;
			sources[ns++].repository_ref = c->from;
		}
		n++;
	}
	/* a failure costs another runner a rebuild, never this build */
	if (n && eb_registry_push(c->r, images, n, sources, ns, c->bs, &res, &e) == 0) {
		c->stats->records_pushed += (unsigned)n;
	} else if (n) {
		c->stats->records_failed += (unsigned)n;
		if (!c->stats->push_error[0])
			snprintf(c->stats->push_error, sizeof(c->stats->push_error), "%s",
				 e && e->msg ? e->msg : "the push failed");
		eb_error_free(e);
	}
	c->stats->bytes_uploaded += res.bytes_uploaded;
	for (size_t i = 0; i < n; i++) {
		eb_descriptor_release(&tops[i]);
		free(tags[i]);
	}
	free(images);
	free(tops);
	free(tags);
	free(tagv);
	free(sources);
}

static void rc_free(void *self)
{
	struct regcache *c = self;

	flush(c);
	for (size_t i = 0; i < c->nq; i++) {
		free(c->q[i].kind);
		free(c->q[i].key);
		json_decref(c->q[i].rec);
	}
	free(c->q);
	for (size_t i = 0; i < c->nknown; i++)
		free(c->known[i]);
	free(c->known);
	free(c->known_size);
	free(c->from);
	free(c->to);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static const struct eb_cache_backend regcache_ops = {
	.name = "registry",
	.has = rc_has,
	.get = rc_get,
	.record_get = rc_record_get,
	.record_put = rc_record_put,
	.free = rc_free,
};

/* Only blobs, from a repository: a base image's layers. */
static const struct eb_cache_backend blobs_ops = {
	.name = "registry blobs",
	.has = rc_has,
	.get = rc_get,
	.free = rc_free,
};

void eb_regcache_attach_blobs(struct eb_blobstore *bs, struct eb_registry *r,
			      const char *repo_ref, const struct eb_descriptor *blobs, size_t n)
{
	struct regcache *c = eb_xcalloc(1, sizeof(*c));

	c->r = r;
	c->bs = bs;
	c->from = eb_xstrdup(repo_ref);
	c->stats = &c->own;
	pthread_mutex_init(&c->mu, NULL);
	c->known = eb_xcalloc(n + 1, sizeof(*c->known));
	c->known_size = eb_xcalloc(n + 1, sizeof(*c->known_size));
	for (size_t i = 0; i < n; i++) {
		c->known[i] = eb_xstrdup(blobs[i].digest);
		c->known_size[i] = blobs[i].size;
	}
	c->nknown = n;
	eb_cache_attach(bs, &blobs_ops, c);
}

int eb_regcache_attach(struct eb_blobstore *bs, struct eb_registry *r, const char *from_ref,
		       const char *to_ref, struct eb_regcache_stats *stats, struct eb_error **err)
{
	struct regcache *c;

	if (!r)
		return eb_error_set(err, EB_EUSAGE, "a registry cache needs a registry client");
	if ((!from_ref || !*from_ref) && (!to_ref || !*to_ref))
		return 0;
	c = eb_xcalloc(1, sizeof(*c));
	c->r = r;
	c->bs = bs;
	c->from = from_ref && *from_ref ? eb_xstrdup(from_ref) : NULL;
	c->to = to_ref && *to_ref ? eb_xstrdup(to_ref) : NULL;
	c->stats = stats ? stats : &c->own;
	pthread_mutex_init(&c->mu, NULL);
	eb_cache_attach(bs, &regcache_ops, c);
	return 0;
}
