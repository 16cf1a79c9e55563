/*
 * basedrift.h - is the lock's base digest still what the spec's `base:`
 * names?  A lock is an input of the pull request too: a digest swapped for
 * another image of the same repository, or a tag that moved since the
 * lock was written, is drift, reported with both digests.  A `base:` with
 * `@sha256:` is the way to accept a digest for good (then the lock must
 * say the same).
 *
 * Layering: assemble/ (uses ref/ and registry/ for the tag lookup).
 * Never prints.  Strings returned are the caller's.
 */
#ifndef EB_ASSEMBLE_BASEDRIFT_H
#define EB_ASSEMBLE_BASEDRIFT_H

#include "util/error.h"

struct eb_registry;

/* 0 when locked (the lock's digest of spec_base) agrees with spec_base:
 * its own @digest when it has one, else (reg non-NULL) the digest its
 * tag resolves to now.  1 and *why (naming both digests) on drift; < 0
 * when the tag cannot be looked up.  reg NULL: only the @digest check. */
int eb_base_drift(struct eb_registry *reg, const char *spec_base, const char *locked, char **why,
		  struct eb_error **err);

#endif
