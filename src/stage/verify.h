/*
 * verify.h - `envbuild verify`: prove, or refute, that a pushed image is
 * what its commit's lock builds.
 *
 * Steps, each of which can refute: the image (a tag is resolved to its
 * digest; the bytes are checked against it); with a key, a cosign
 * signature by that key on every platform manifest and on the index; a
 * provenance (DSSE, signed by the key when one is given) naming each
 * platform manifest as its subject, all naming the same commit, spec and
 * target; that commit checked out into a local clone of the repository;
 * its envbuild.lock; a --frozen build of the target from it (blobs from
 * the cache or their registries, no index or tag lookups); the rebuilt
 * inputs equal to the provenance's resolvedDependencies; and per platform
 * the rebuilt manifest digest equal to the pushed one.  A difference names
 * the first differing layer and the first differing path inside it.
 *
 * What it trusts is in specs/attestations.md: the key, the repository's
 * history, envbuild itself and the locked inputs' sha256.
 *
 * Layering (stage floor).  Ownership: results are freed by
 * eb_verify_release().
 */
#ifndef EB_STAGE_VERIFY_H
#define EB_STAGE_VERIFY_H

#include "registry/client.h"
#include "trust/sign.h"
#include "util/error.h"

struct eb_verify {
	/* in */
	const char *ref;               /* REF or REF@DIGEST */
	const struct eb_sign_key *key; /* NULL: signatures are not checked */
	const char *repo_dir;          /* a directory in the git repository */
	const char *cache_dir;         /* NULL: the default */
	struct eb_registry *registry;

	/* out */
	char *digest;   /* what was verified */
	char *target;
	char *commit;
	int verified;   /* 1: proven */
	char *reason;   /* when not: the first difference */
	unsigned signatures; /* signatures checked */
	unsigned platforms;  /* platform manifests rebuilt and compared */
};

/* 0 with verified or reason set; negative for what stops the check
 * itself (no registry, no repository, I/O). */
int eb_stage_verify(struct eb_verify *v, struct eb_error **err);
void eb_verify_release(struct eb_verify *v);

#endif
