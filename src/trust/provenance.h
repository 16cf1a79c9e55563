/*
 * provenance.h - SLSA provenance v1 as an in-toto Statement v1: which
 * commit, spec, target and platform a manifest was built from, by which
 * envbuild, from which locked inputs (every base, wheel and .deb by
 * digest).
 *
 * Only what is listed below goes in: never env values, build secrets or
 * credentials (a source URL's user and password are dropped here, whatever
 * the caller passes).  Deterministic bytes: no clock, keys sorted,
 * dependencies in the caller's order.
 *
 * Layering (core floor): uses util/ and jansson only.
 * Ownership: inputs are borrowed; output goes into the caller's buffer.
 */
#ifndef EB_TRUST_PROVENANCE_H
#define EB_TRUST_PROVENANCE_H

#include <stddef.h>

#include "util/buf.h"

#define EB_SLSA_PREDICATE_TYPE "https://slsa.dev/provenance/v1"
#define EB_INTOTO_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define EB_PROVENANCE_BUILD_TYPE "urn:envbuild:build:v1"
#define EB_PROVENANCE_BUILDER_ID "urn:envbuild:builder:cli"

struct eb_prov_dep {
	const char *name;   /* "base", "wheel:numpy", "deb:libgomp1" */
	const char *uri;    /* reference or URL, or NULL */
	const char *digest; /* "sha256:<hex>" */
};

struct eb_provenance {
	const char *subject_name;   /* the repository */
	const char *subject_digest; /* the manifest's */
	const char *spec_path;      /* relative to the repository root */
	const char *target;
	const char *platform;
	const char *source_uri;     /* git origin, or NULL */
	const char *commit;         /* git HEAD, or NULL */
	const char *lock_digest;    /* sha256 of envbuild.lock as pushed, or NULL */
	const struct eb_prov_dep *deps;
	size_t ndeps;
};

/* Strip "user:password@" from a URL; the caller frees. */
char *eb_provenance_clean_uri(const char *uri);
void eb_provenance_statement(struct eb_buf *out, const struct eb_provenance *p);

#endif
