/*
 * attest.h - what `envbuild push` attaches to the images it pushed, and
 * what `envbuild sbom` prints: cosign simple-signing signatures (tag
 * `sha256-<hex>.sig`) for every platform manifest and the index, and per
 * platform manifest a CycloneDX and an SPDX SBOM and an SLSA provenance
 * statement in a DSSE envelope, as OCI referrers (registry/referrers.h).
 * Nothing goes inside the image index.
 *
 * The SBOM lists the base (reference, digest), the base's Debian packages
 * (its final dpkg status) and Python distributions (dist-info directories
 * of its Python), the `apt:` .debs and the wheels envbuild installed, with
 * sha256 and source URL from the build (the lock's record).  The base's
 * packages an apt pin or a wheel replaced are not listed.
 *
 * Re-attaching is idempotent: a signature whose payload is already signed
 * by the same key is not added again, and a provenance whose statement is
 * already attached (annotation EB_ATTEST_STATEMENT_ANNOTATION) is not
 * attached again; SBOMs have fixed bytes, so their artifacts are the same
 * manifests.
 *
 * Layering (stage floor): may use assemble/, debian/, registry/, trust/ and
 * below.  Ownership: options borrowed; results the caller's.
 */
#ifndef EB_STAGE_ATTEST_H
#define EB_STAGE_ATTEST_H

#include <stddef.h>

#include "oci/blobstore.h"
#include "stage/stage.h"
#include "trust/sign.h"
#include "util/buf.h"

#define EB_ATTEST_TARGET_ANNOTATION "envbuild.target"
#define EB_ATTEST_PLATFORM_ANNOTATION "envbuild.platform"
#define EB_ATTEST_STATEMENT_ANNOTATION "envbuild.statement.digest"
#define EB_ATTEST_TITLE_ANNOTATION "org.opencontainers.image.title"

enum eb_sbom_format { EB_SBOM_CYCLONEDX = 0, EB_SBOM_SPDX };

struct eb_attest_options {
	const char *repository;         /* where the images went ("host/ml/churn") */
	const struct eb_sign_key *key;  /* NULL: no signatures, unsigned DSSE */
	int attest;                     /* SBOMs and provenance */
	const char *commit;             /* git HEAD, or NULL */
};

struct eb_attest_result {
	unsigned signatures;      /* signatures added */
	unsigned signatures_kept; /* already there */
	unsigned artifacts;       /* referrers newly listed (SBOMs, provenance) */
	int used_api;             /* the registry had the referrers API */
};

/* The SBOM of platform q of built target t (s's report), in format. */
int eb_attest_sbom(struct eb_stage *s, size_t t, size_t q, enum eb_sbom_format format,
		   const char *repository, struct eb_blobstore *bs, struct eb_buf *out,
		   struct eb_error **err);

/* The provenance statement (in-toto, unsigned) of platform q of target t. */
void eb_attest_statement(struct eb_stage *s, size_t t, size_t q, const char *repository,
			 const char *commit, struct eb_buf *out);

/* Sign and attach for every target of s->rep (pushed to o->repository). */
int eb_attest_push(struct eb_stage *s, const struct eb_attest_options *o, struct eb_blobstore *bs,
		   struct eb_attest_result *res, struct eb_error **err);

/* The cosign signature tag of a digest: "sha256-<hex>.sig" (caller frees). */
char *eb_attest_sig_tag(const char *digest);

#endif
