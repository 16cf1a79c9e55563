/*
 * referrers.h - OCI 1.1 referrers: artifacts (SBOMs, attestations) that
 * name an image manifest as their `subject`, listed by the registry's
 * referrers API (GET /v2/<name>/referrers/<digest>) or, on a registry
 * without it, by the referrers tag schema of the distribution spec: an
 * image index tagged `sha256-<hex>` (the subject's digest) whose entries
 * are the artifacts' descriptors with their `artifactType` and
 * `annotations` copied from the artifact manifests.
 *
 * A registry that answers the referrers request with 404 has no API
 * (the spec forbids that answer from one that has it).  The fallback
 * index is read, the artifacts not yet listed are appended (an artifact
 * already listed is not listed twice: attaching again changes nothing),
 * and it is put back only when it changed.  Two writers at once can lose
 * one's entry (the spec's schema has no compare-and-swap); the next attach
 * puts it back.
 *
 * Layering (service floor): may use net/, oci/, ref/, util/; calls the
 * client's public functions only.  Ownership: results are the caller's.
 */
#ifndef EB_REGISTRY_REFERRERS_H
#define EB_REGISTRY_REFERRERS_H

#include <stddef.h>

#include <jansson.h>

#include "oci/blobstore.h"
#include "registry/client.h"
#include "util/error.h"

#define EB_MEDIA_OCI_EMPTY "application/vnd.oci.empty.v1+json"
#define EB_OCI_EMPTY_DIGEST "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

/* Push the artifact manifests (descriptors; their bytes and blobs in bs)
 * that subject_digest's referrers do not list yet to repository_ref
 * ("127.0.0.1:5000/ml/churn"), and list them: the registry does with the
 * referrers API, else the fallback tag's index gets them (written only
 * when something was added).  *used_api (may be NULL) is set to 1 when
 * the registry has the referrers API, 0 when the fallback tag was
 * maintained; *added (may be NULL) gets how many were not listed yet. */
int eb_referrers_attach(struct eb_registry *r, const char *repository_ref,
			const char *subject_digest, const struct eb_descriptor *artifacts,
			size_t n, struct eb_blobstore *bs, int *used_api, size_t *added,
			struct eb_error **err);

/* The referrers of subject_digest as an image index (json_t, new
 * reference; empty "manifests" when there are none), from the API or the
 * fallback tag. */
int eb_referrers_list(struct eb_registry *r, const char *repository_ref, const char *subject_digest,
		      json_t **index_out, int *used_api, struct eb_error **err);

/* PUT a manifest or index document under a tag (or a digest). */
int eb_registry_put_doc(struct eb_registry *r, const char *repository_ref, const char *tag,
			const char *media_type, const void *data, size_t len,
			struct eb_error **err);

#endif
