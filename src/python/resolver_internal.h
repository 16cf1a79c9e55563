/*
 * resolver_internal.h - what resolver.c (the PubGrub solver) shares with
 * resolver_explain.c (its failure report): the solver's data and the
 * bitset helpers.  Not an API: only those two files include it.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_RESOLVER_INTERNAL_H
#define EB_PYTHON_RESOLVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pin/requirement.h"
#include "pin/version.h"
#include "python/resolver.h"

/* ---- data --------------------------------------------------------------- */

struct pver {
	char *raw;
	struct eb_version v;
	int yanked;
	int pre;
	int exact; /* some requirement pins exactly this version (yanked allowed) */
	size_t seq; /* order on the page: of equal versions the first is kept */
};

struct project {
	char *name;
	struct pver *vers; /* ascending */
	size_t n;
	int missing;   /* the provider does not know the project */
	int allow_pre; /* a specifier named a pre-release */
	char *prefer;  /* preferred version (raw), or NULL */
	/* Per environment and version: fetched dependencies. */
	struct eb_resolver_deps *deps; /* [nenvs * n] */
	unsigned char *fetched;        /* [nenvs * n] */
};

enum pkg_kind { PKG_ROOT, PKG_ENV, PKG_SHARED };

struct package {
	enum pkg_kind kind;
	size_t env;
	struct project *proj; /* NULL for the root */
	char *extra;          /* normalised, or NULL */
	size_t nver;          /* versions; bit nver is "not selected" */
	size_t nwords;
	uint64_t *acc;        /* intersection of the assignments' terms */
	int decided;
	size_t decided_ver;
	size_t *incs; /* incompatibilities that mention the package */
	size_t ninc, capinc;
	size_t depth; /* fewest dependency edges from the root (pip's inferred depth) */
};

struct term {
	size_t pkg;
	uint64_t *bits;
};

enum inc_kind {
	INC_NOT_ROOT,    /* the root must be selected */
	INC_ROOT_DEP,    /* a top-level requirement */
	INC_DEP,         /* a version depends on a range */
	INC_PARITY,      /* an environment's version is the shared one */
	INC_EXTRA_BASE,  /* name[x]==v needs name==v */
	INC_NO_VERSIONS, /* nothing listed in a range */
	INC_UNAVAILABLE, /* a version cannot be used (reason in text) */
	INC_CONSTRAINT,  /* a -c line: versions outside it are forbidden */
	INC_DERIVED,
};

struct incompat {
	enum inc_kind kind;
	struct term *terms;
	size_t n;
	char *text;       /* ROOT_DEP: origin; DEP: the dependency as written
			   * without marker; UNAVAILABLE: the reason */
	char *dep;        /* ROOT_DEP: the requirement without marker */
	size_t cause1, cause2;
	int registered;
	/* Reporting. */
	int derivations;
	int line;
};

struct assignment {
	size_t pkg;
	uint64_t *bits;
	int decision;
	size_t level;
	size_t cause; /* incompat index for derivations */
};

struct root_req {
	size_t env;
	struct eb_requirement req;
	char *origin;
	int constraint;
};

struct solution {
	struct eb_resolver_pin *pins;
	size_t n;
};

struct eb_resolver {
	struct eb_resolver_provider prov;
	struct eb_resolver_env *envs;
	size_t nenvs;
	int allow_pre;

	struct project **projects;
	size_t nprojects, capprojects;
	struct package *pkgs;
	size_t npkgs, cappkgs;
	struct incompat *incs;
	size_t nincs, capincs;
	struct assignment *as;
	size_t nas, capas;
	size_t level;

	struct root_req *roots;
	size_t nroots, caproots;

	struct { char *name, *version; } *prefs;
	size_t nprefs, capprefs;

	char *explanation;
	struct solution *solutions; /* [nenvs] */
	char **strings;             /* owned strings solutions point at */
	size_t nstrings, capstrings;
	struct eb_resolver_stats stats;
	uint64_t *tmp;
	size_t tmpwords;
};

int eb_resolver__bit_get(const uint64_t *b, size_t i);
uint64_t *eb_resolver__bits_dup(const struct package *p, const uint64_t *src);
void eb_resolver__bits_not(const struct package *p, uint64_t *b);
void eb_resolver__explain(struct eb_resolver *r, size_t failure);
int eb_resolver__term_positive(const struct package *p, const uint64_t *b);
int eb_resolver__term_vacuous(const struct package *p, const uint64_t *b);

#endif
