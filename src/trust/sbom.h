/*
 * sbom.h - software bills of materials for one platform manifest, as
 * CycloneDX 1.6 JSON and SPDX 2.3 JSON, from what the caller says the
 * image holds: the base (reference and digest), the base's Debian
 * packages and Python distributions, the `apt:` .debs and the wheels
 * envbuild installed.
 *
 * Deterministic bytes: components sorted (kind, name, version, arch,
 * origin), keys sorted, no clock (the caller gives `created`, the
 * commit's time, or none: CycloneDX then has no timestamp and SPDX, which
 * requires one, says 1970-01-01T00:00:00Z), the serial number and the SPDX
 * namespace derived from the manifest digest.  Nothing but the fields
 * below goes in: no environment, no credentials.
 *
 * Layering (core floor): uses util/, OpenSSL and jansson only.
 * Ownership: inputs are borrowed; output goes into the caller's buffer.
 */
#ifndef EB_TRUST_SBOM_H
#define EB_TRUST_SBOM_H

#include <stddef.h>

#include "util/buf.h"

#define EB_SBOM_CYCLONEDX_TYPE "application/vnd.cyclonedx+json"
#define EB_SBOM_SPDX_TYPE "application/spdx+json"

enum eb_sbom_kind { EB_SBOM_DEB = 0, EB_SBOM_PYPI };

struct eb_sbom_component {
	enum eb_sbom_kind kind;
	const char *origin;  /* "base", "apt" or "wheel" */
	const char *name;    /* Debian package; normalised Python project */
	const char *version;
	const char *arch;    /* Debian architecture ("amd64", "all"), or NULL */
	const char *sha256;  /* "sha256:<hex>" of the .deb or wheel, or NULL */
	const char *url;     /* where it was fetched from, or NULL */
	/* as the metadata states it, or NULL: CycloneDX license name, SPDX
	 * licenseComments (licenseDeclared stays NOASSERTION: free text is no
	 * SPDX expression) */
	const char *license;
};

struct eb_sbom_image {
	const char *repository;  /* "registry.example.com/ml/churn" */
	const char *target;
	const char *digest;      /* the platform manifest's */
	const char *platform;    /* "linux/amd64" */
	const char *base_ref;    /* "docker.io/library/python:3.11-slim", NULL: scratch */
	const char *base_digest; /* the base manifest's, or NULL */
	const char *created;     /* "2026-01-02T03:04:05Z", or NULL */
	const struct eb_sbom_component *components;
	size_t ncomponents;
};

/* The package URL of c ("pkg:deb/debian/bash@5.2.15-2%2Bb2?arch=amd64",
 * "pkg:pypi/numpy@1.26.4"); the caller frees. */
char *eb_sbom_purl(const struct eb_sbom_component *c);
void eb_sbom_cyclonedx(struct eb_buf *out, const struct eb_sbom_image *img);
void eb_sbom_spdx(struct eb_buf *out, const struct eb_sbom_image *img);

#endif
