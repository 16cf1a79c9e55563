/*
 * pyprovider.h - the resolver's provider (python/resolver.h) over real
 * package indexes (python/index.h): versions from project pages, and for
 * one version in one target environment the wheel that environment would
 * install (python/tags.h's choice), whose Requires-Dist come from its PEP
 * 658 metadata file (verified against the page's hash) or, only when the
 * index offers none, from the wheel's own METADATA (the wheel downloaded
 * verified into the blob store).  A version without a fitting wheel is
 * unavailable for that environment, with the reason; one with only sdists
 * is listed (so the reason is "has only an sdist", not "no versions").
 *
 * It also answers what a pin file needs: the sha256 of every wheel of a
 * version that fits a set of environments.
 *
 * Every call into the index API is in pyprovider.c, so renames there touch
 * one file.  Pages and metadata are fetched once per run and kept.
 *
 * Ownership: the provider borrows the index set, the blob store and the
 * environment strings; eb_pyprovider_free() frees the rest.  Strings in
 * arrays it returns are the caller's (free each, then the array).
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_PYPROVIDER_H
#define EB_PYTHON_PYPROVIDER_H

#include <stddef.h>

#include "python/resolver.h"
#include "util/digest.h"
#include "util/error.h"

struct eb_pyindex_set;
struct eb_blobstore;

/* One target environment. */
struct eb_pyprovider_env {
	const char *label;          /* "train", "train linux/arm64" */
	const char *python_version; /* "3.11" or "3.11.4" */
	const char *platform;       /* "linux/amd64" */
	const char *libc;           /* "glibc 2.36", "musl 1.2" */
};

struct eb_pyprovider;

/* EB_EINVALID when an environment is not one envbuild has wheels for. */
int eb_pyprovider_new(struct eb_pyprovider **out, struct eb_pyindex_set *idx,
		      struct eb_blobstore *bs, const struct eb_pyprovider_env *envs, size_t nenvs,
		      struct eb_error **err);
void eb_pyprovider_free(struct eb_pyprovider *p);

/* The provider and the environments to give eb_resolver_new(); both live
 * as long as p. */
void eb_pyprovider_resolver(struct eb_pyprovider *p, struct eb_resolver_provider *out);
const struct eb_resolver_env *eb_pyprovider_envs(const struct eb_pyprovider *p);

/* "sha256:<hex>" of each wheel of name==version that fits at least one of
 * the environments envs[0..n) (their indexes), sorted, without duplicates.
 * *count may be 0 (the index lists no sha256). */
int eb_pyprovider_hashes(struct eb_pyprovider *p, const size_t *envs, size_t n,
			 const char *name, const char *version, char ***out, size_t *count,
			 struct eb_error **err);

/* After a failed resolution: "name==version is only an sdist (the index
 * has: f.tar.gz)"
 * for the first version found to have only sdists, or NULL. */
const char *eb_pyprovider_sdist_only(const struct eb_pyprovider *p);

/* After a resolution: the [build-system] requires of name==version when
 * it was an sdist-only version whose dependencies were read (borrowed,
 * live as long as p), else NULL with *n = 0. */
const char **eb_pyprovider_build_requires(const struct eb_pyprovider *p, const char *name,
					  const char *version, size_t *n);

/* After a resolution: the blob (in the provider's store) and index file
 * name of the sdist of name==version read as above: 1, or 0 when none
 * was (borrowed, live as long as p). */
int eb_pyprovider_sdist(const struct eb_pyprovider *p, const char *name, const char *version,
			const char **digest, const char **filename);

/* The wheel of name==version that environment env installs, downloaded
 * verified into the store (once: a blob already there is not fetched
 * again); digest gets its "sha256:<hex>".  EB_ENOTFOUND without one. */
int eb_pyprovider_wheel(struct eb_pyprovider *p, size_t env, const char *name,
			const char *version, char digest[EB_DIGEST_STR_LEN + 1],
			struct eb_error **err);

struct eb_pyprovider_stats {
	size_t pages, metadata_files, wheels_read;
};
void eb_pyprovider_stats(const struct eb_pyprovider *p, struct eb_pyprovider_stats *out);

#endif
