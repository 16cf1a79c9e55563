/*
 * referrers.c - the referrers API and its tag-schema fallback, on the
 * client's public functions plus two plain requests (the referrers GET
 * and a document PUT under a tag).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "net/http.h"
#include "oci/image.h"
#include "ref/imageref.h"
#include "registry/referrers.h"
#include "util/alloc.h"
#include "util/digest.h"

static int parse_repo(struct eb_imageref *ir, const char *repository_ref, struct eb_error **err)
{
	int rc = eb_imageref_parse(ir, repository_ref, err);

	if (rc < 0)
		return rc;
	if (ir->tag || ir->digest) {
		eb_imageref_release(ir);
		return eb_error_set(err, EB_EINVALID, "'%s' must name a repository, without a tag "
				    "or digest", repository_ref);
	}
	return 0;
}

int eb_registry_put_doc(struct eb_registry *r, const char *repository_ref, const char *tag,
			const char *media_type, const void *data, size_t len,
			struct eb_error **err)
{
	struct eb_imageref ir;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	char *path, *ct, *what;
	const char *headers[2];
	int rc;

	if ((rc = parse_repo(&ir, repository_ref, err)) < 0)
		return rc;
	path = eb_xasprintf("/v2/%s/manifests/%s", ir.path, tag);
	ct = eb_xasprintf("Content-Type: %s", media_type);
	what = eb_xasprintf("putting '%s:%s'", repository_ref, tag);
	headers[0] = ct;
	headers[1] = NULL;
	req.method = "PUT";
	req.registry = ir.domain;
	req.url = path;
	req.repository = ir.path;
	req.push = 1;
	req.headers = headers;
	req.body_kind = EB_HTTP_BODY_MEM;
	req.body = data;
	req.body_len = len;
	rc = eb_http_request(eb_registry_http(r), &req, &resp, err);
	if (rc < 0)
		eb_error_wrap(err, "%s", what);
	else if (resp.status < 200 || resp.status > 299)
		rc = eb_http_response_error(&resp, what, err);
	eb_http_response_release(&resp);
	free(what);
	free(ct);
	free(path);
	eb_imageref_release(&ir);
	return rc;
}

/* GET the referrers API: 1 and *index when the registry has it, 0 when it
 * answers 404 (no API). */
static int api_get(struct eb_registry *r, const char *repository_ref, const char *subject,
		   json_t **index, struct eb_error **err)
{
	struct eb_imageref ir;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	const char *headers[] = { "Accept: " EB_MEDIA_OCI_INDEX, NULL };
	char *path, *what;
	int rc;

	*index = NULL;
	if ((rc = parse_repo(&ir, repository_ref, err)) < 0)
		return rc;
	path = eb_xasprintf("/v2/%s/referrers/%s", ir.path, subject);
	what = eb_xasprintf("listing the referrers of '%s@%s'", repository_ref, subject);
	req.method = "GET";
	req.registry = ir.domain;
	req.url = path;
	req.repository = ir.path;
	req.headers = headers;
	req.max_body = EB_IMAGE_DOC_MAX;
	rc = eb_http_request(eb_registry_http(r), &req, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", what);
	} else if (resp.status == 404) {
		rc = 0;
	} else if (resp.status != 200) {
		rc = eb_http_response_error(&resp, what, err);
	} else {
		*index = json_loadb(resp.body.ptr, resp.body.len, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_array(json_object_get(*index, "manifests"))) {
			json_decref(*index);
			*index = NULL;
			rc = eb_error_set(err, EB_ENET, "%s: the answer is not an image index", what);
		} else {
			rc = 1;
		}
	}
	eb_http_response_release(&resp);
	free(what);
	free(path);
	eb_imageref_release(&ir);
	return rc;
}

/* The fallback index (a fresh empty one when the tag does not exist). */
static int tag_get(struct eb_registry *r, const char *repository_ref, const char *subject,
		   json_t **index, struct eb_error **err)
{
	char *ref = eb_xasprintf("%s:sha256-%s", repository_ref, eb_digest_hex(subject));
	struct eb_remote_doc doc = { 0 };
	int rc = eb_registry_get_manifest(r, ref, &doc, err);

	*index = NULL;
	if (rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		*index = json_pack("{s:i, s:s, s:[]}", "schemaVersion", 2, "mediaType",
				   EB_MEDIA_OCI_INDEX, "manifests");
		rc = 0;
	} else if (rc == 0) {
		*index = json_loadb(doc.data.ptr, doc.data.len, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_array(json_object_get(*index, "manifests"))) {
			json_decref(*index);
			*index = NULL;
			rc = eb_error_set(err, EB_EINVALID, "'%s' is not an image index: it cannot be "
					  "a referrers list", ref);
		}
	}
	eb_remote_doc_release(&doc);
	free(ref);
	return rc;
}

int eb_referrers_list(struct eb_registry *r, const char *repository_ref, const char *subject_digest,
		      json_t **index_out, int *used_api, struct eb_error **err)
{
	int rc = api_get(r, repository_ref, subject_digest, index_out, err);

	if (rc < 0)
		return rc;
	if (used_api)
		*used_api = rc;
	if (rc == 1)
		return 0;
	return tag_get(r, repository_ref, subject_digest, index_out, err);
}

/* The fallback entry of an artifact: its descriptor with artifactType
 * and annotations copied from the manifest (the spec's MUST). */
static int entry_for(const struct eb_descriptor *d, struct eb_blobstore *bs, json_t **out,
		     struct eb_error **err)
{
	struct eb_buf data;
	json_t *m, *e, *v;
	int rc;

	*out = NULL;
	eb_buf_init(&data, 0);
	rc = eb_blobstore_read(bs, d->digest, &data, EB_IMAGE_DOC_MAX, err);
	if (rc < 0) {
		eb_buf_release(&data);
		return rc;
	}
	m = json_loadb(data.ptr, data.len, 0, NULL);
	e = json_pack("{s:s, s:s, s:I}", "mediaType",
		      d->media_type ? d->media_type : EB_MEDIA_OCI_MANIFEST, "digest", d->digest,
		      "size", (json_int_t)data.len);
	if ((v = json_object_get(m, "artifactType")) && json_is_string(v))
		json_object_set(e, "artifactType", v);
	else if ((v = json_object_get(json_object_get(m, "config"), "mediaType")))
		json_object_set(e, "artifactType", v); /* the spec's rule without artifactType */
	if ((v = json_object_get(m, "annotations")) && json_is_object(v) && json_object_size(v))
		json_object_set(e, "annotations", v);
	json_decref(m);
	eb_buf_release(&data);
	*out = e;
	return 0;
}

/* 1 when the index's manifests name digest. */
static int listed(const json_t *list, const char *digest)
{
	for (size_t k = 0; k < json_array_size(list); k++) {
		const char *d = json_string_value(json_object_get(json_array_get(list, k), "digest"));
		if (d && strcmp(d, digest) == 0)
			return 1;
	}
	return 0;
}

int eb_referrers_attach(struct eb_registry *r, const char *repository_ref,
			const char *subject_digest, const struct eb_descriptor *artifacts,
			size_t n, struct eb_blobstore *bs, int *used_api, size_t *added,
			struct eb_error **err)
{
	struct eb_push_image *imgs = eb_xcalloc(n ? n : 1, sizeof(*imgs));
	static const char *const no_tags[] = { NULL };
	json_t *index = NULL, *list;
	size_t *missing = eb_xcalloc(n ? n : 1, sizeof(*missing));
	size_t nmissing = 0;
	int rc, api;

	/* what the subject already has first: a re-push of the same image
	 * sends no artifact again, and no index */
	if ((rc = api_get(r, repository_ref, subject_digest, &index, err)) < 0)
		goto done;
	api = rc;
	if (used_api)
		*used_api = api;
	if (!api && (rc = tag_get(r, repository_ref, subject_digest, &index, err)) < 0)
		goto done;
	list = json_object_get(index, "manifests");
	for (size_t i = 0; i < n; i++)
		if (!listed(list, artifacts[i].digest))
			missing[nmissing++] = i;
	for (size_t i = 0; i < nmissing; i++) {
		imgs[i].repository_ref = repository_ref;
		imgs[i].top = &artifacts[missing[i]];
		imgs[i].tags = no_tags;
	}
	if (nmissing && (rc = eb_registry_push(r, imgs, nmissing, NULL, 0, bs, NULL, err)) < 0)
		goto done;
	/* with the API the registry lists a manifest with a subject itself;
	 * else the fallback tag's index gets the new entries */
	if (!api && nmissing) {
		for (size_t i = 0; i < nmissing; i++) {
			json_t *e = NULL;
			if ((rc = entry_for(&artifacts[missing[i]], bs, &e, err)) < 0)
				goto done;
			json_array_append_new(list, e);
		}
		char *sj = json_dumps(index, JSON_COMPACT);
		char *tag = eb_xasprintf("sha256-%s", eb_digest_hex(subject_digest));
		const char *mt = json_string_value(json_object_get(index, "mediaType"));
		rc = eb_registry_put_doc(r, repository_ref, tag, mt ? mt : EB_MEDIA_OCI_INDEX, sj,
					 strlen(sj), err);
		free(tag);
		free(sj);
	}
done:
	json_decref(index);
	free(imgs);
	free(missing);
	if (rc >= 0 && added)
		*added = nmissing;
	return rc < 0 ? rc : 0;
}
