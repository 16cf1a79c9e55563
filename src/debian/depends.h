/*
 * depends.h - Debian relationship fields (Depends, Pre-Depends, Conflicts,
 * Breaks, Provides): "a (>= 1) | b:any, c".
 *
 * A field is a conjunction of groups; a group is a disjunction of
 * alternatives; an alternative is a package name, an optional architecture
 * qualifier (":any", ":native", ":amd64") and an optional relation
 * (<< <= = >= >>, and the obsolete < > that dpkg reads as <= >=).
 * Architecture restriction lists "[amd64]" and build profiles "<!nocheck>"
 * belong to source packages only and are rejected here.
 *
 * Uses util/ and debian/version only.  Ownership: eb_debdeps owns every
 * string and array in it; release with eb_debdeps_release.  Errors are
 * EB_EINVALID with `col` the 1-based column inside the field value.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_DEPENDS_H
#define EB_DEBIAN_DEPENDS_H

#include <stddef.h>

#include "debian/version.h"
#include "util/error.h"

struct eb_debdep {
	char *name;    /* owned */
	char *archq;   /* "any", "native", an architecture, or NULL (owned) */
	enum eb_debrel rel;
	char *version; /* NULL when rel == EB_REL_ANY (owned) */
};

struct eb_debdep_group {
	struct eb_debdep *alt; /* owned */
	size_t n;
};

struct eb_debdeps {
	struct eb_debdep_group *groups; /* owned */
	size_t n;
};

#define EB_DEBDEPS_INIT { NULL, 0 }

/* Parse a relationship field; s may be NULL or empty (no relations).
 * `allow_alternatives` = 0 for Provides, Conflicts and Breaks (dpkg
 * rejects '|' there). */
int eb_debdeps_parse(struct eb_debdeps *out, const char *s, int allow_alternatives,
		     struct eb_error **err);
void eb_debdeps_release(struct eb_debdeps *d);
/* "name:archq (rel version)" of one alternative; caller frees. */
char *eb_debdep_to_string(const struct eb_debdep *d);
/* The whole field in dpkg's canonical spelling; caller frees. */
char *eb_debdeps_to_string(const struct eb_debdeps *d);
/* 1 when `name` is a valid Debian package name (policy 5.6.1: [a-z0-9][a-z0-9+.-]+). */
int eb_debian_name_valid(const char *name, size_t len);

#endif
