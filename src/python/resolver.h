/*
 * resolver.h - a PubGrub dependency resolver for Python packages: loose
 * top-level requirements in, one exact version per project out, for one or
 * several target environments at once.
 *
 * The algorithm is PubGrub (Weizenbaum 2018, as in uv, poetry and pub):
 * incompatibilities, unit propagation, conflict resolution that learns new
 * incompatibilities and backjumps, and, when there is no solution, a
 * derivation-tree explanation in the words uv and poetry use ("Because a
 * 1.0 depends on b>=2.0 and ..., a==1.0 is forbidden").  Version sets are
 * bitsets over the versions the provider lists for a project (plus a bit
 * for "not selected"), so every PEP 440 specifier (!=, ~=, wildcards, local
 * labels) is exact and set algebra is cheap.
 *
 * The resolver knows PEP 440/508 (pin/version.h, pin/marker.h,
 * pin/requirement.h) but nothing of indexes, wheels or the network: a
 * provider lists a project's versions and gives the Requires-Dist and
 * Requires-Python of one version for one environment, or says why that
 * version cannot be used there (no wheel for the platform).  The resolver
 * evaluates markers (with `extra` for extras), Requires-Python, yanking
 * (PEP 592: a yanked version only for an exact == pin) and PEP 440's
 * pre-release rule (pre-releases when asked for, by a specifier that names
 * one or by the caller, or when nothing else fits, as pip does).
 *
 * Choice order: the version the caller prefers (an existing pin, for
 * minimal change) when it fits, else the newest.  Several environments
 * (training and inference, or the platforms of one image) resolve jointly
 * with parity: a project needed by several environments gets one version,
 * and when that is impossible the explanation names the requirement that
 * forces the split.  Each environment's projects are separate packages
 * ("train: numpy") tied to a shared one ("numpy") by an exact dependency.
 *
 * Ownership: the resolver owns everything it allocates and frees it in
 * eb_resolver_free(); strings it returns point into it and live until then.
 * Providers fill a struct eb_resolver_deps / eb_resolver_versions with the
 * _add functions below; the resolver frees what they add.
 *
 * Errors: no solution is -EB_EFAIL with the message "no solution ..." and
 * the explanation available from eb_resolver_explanation(); a provider's
 * error is passed up wrapped with the project it was about; a top-level
 * requirement that cannot be parsed or is not a named one is -EB_EINVALID.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_RESOLVER_H
#define EB_PYTHON_RESOLVER_H

#include <stddef.h>

#include "pin/marker.h"
#include "util/error.h"

/* One environment to resolve for. */
struct eb_resolver_env {
	const char *label;              /* "train", "train linux/arm64" (borrowed) */
	struct eb_marker_env markers;   /* borrowed strings; extra is ignored */
	const char *python_full;        /* "3.11.4", for Requires-Python */
};

/* What a provider says about the versions of a project. */
struct eb_resolver_versions {
	char **versions; /* as listed (any order, duplicates allowed) */
	int *yanked;
	size_t n, cap;
};
void eb_resolver_versions_add(struct eb_resolver_versions *v, const char *version, int yanked);

/* What a provider says about one version in one environment. */
struct eb_resolver_deps {
	/* Why the version cannot be used in this environment ("has no wheel
	 * for cp311 manylinux_2_36_x86_64"), or NULL. */
	char *unavailable;
	char *requires_python; /* or NULL */
	char **requires;       /* Requires-Dist lines, markers included */
	size_t n, cap;
};
void eb_resolver_deps_add(struct eb_resolver_deps *d, const char *requirement);
void eb_resolver_deps_unavailable(struct eb_resolver_deps *d, const char *fmt, ...)
	EB_PRINTF(2, 3);

struct eb_resolver_provider {
	/* Every version of the PEP 503-normalised project name the index
	 * lists (for any environment).  -EB_ENOTFOUND when the project does
	 * not exist: the resolver turns that into "no versions". */
	int (*versions)(void *ctx, const char *name, struct eb_resolver_versions *out,
			struct eb_error **err);
	/* Requires-Python and Requires-Dist of name==version as the file
	 * chosen for environment env (its index in the resolver) says, or
	 * why none can be used.  Called at most once per (env, name,
	 * version). */
	int (*dependencies)(void *ctx, size_t env, const char *name, const char *version,
			    struct eb_resolver_deps *out, struct eb_error **err);
	/* Optional (NULL): the projects about to be asked for, so the
	 * provider can fetch them in parallel.  A hint: failures are the
	 * provider's to drop (the calls that follow report them). */
	void (*prefetch)(void *ctx, size_t env, const char *const *names, size_t n);
	void *ctx;
};

struct eb_resolver;

/* envs are copied (their strings stay borrowed); nenvs >= 1. */
struct eb_resolver *eb_resolver_new(const struct eb_resolver_provider *p,
				    const struct eb_resolver_env *envs, size_t nenvs);
void eb_resolver_free(struct eb_resolver *r);

/* A top-level requirement of environment env ("numpy>=1.24", markers
 * allowed).  origin labels it in explanations and `# via` lines
 * ("requirements-train.in"); NULL: "the requirements". */
int eb_resolver_require(struct eb_resolver *r, size_t env, const char *requirement,
			const char *origin, struct eb_error **err);
/* A constraint (pip's -c): limits the versions of a project if something
 * needs it, installs nothing by itself.  Extras are ignored. */
int eb_resolver_constrain(struct eb_resolver *r, size_t env, const char *requirement,
			  const char *origin, struct eb_error **err);
/* Prefer this version of a project (an existing pin) when it fits. */
void eb_resolver_prefer(struct eb_resolver *r, const char *name, const char *version);
/* Allow pre-releases of every project (pip --pre). */
void eb_resolver_allow_prereleases(struct eb_resolver *r, int allow);
/* Resolve.  0 on success; -EB_EFAIL with an explanation when there is no
 * solution; a provider's error otherwise. */
int eb_resolver_run(struct eb_resolver *r, struct eb_error **err);
/* After a failed run: the multi-line derivation ("Because ...\n"), or NULL. */
const char *eb_resolver_explanation(const struct eb_resolver *r);

/* One pinned project of one environment's solution. */
struct eb_resolver_pin {
	const char *name;    /* normalised */
	const char *version; /* as listed by the provider */
	const char **extras; /* extras some requirement asked for, sorted */
	size_t nextras;
	/* What needs it, sorted: "-r <origin>" for a top-level requirement,
	 * else the normalised names of the projects that depend on it. */
	const char **via;
	size_t nvia;
};
/* The solution for environment env, sorted by name.  Valid after a
 * successful run until the resolver is freed. */
const struct eb_resolver_pin *eb_resolver_solution(const struct eb_resolver *r, size_t env,
						   size_t *n);
/* Counters for benchmarks and tests. */
struct eb_resolver_stats {
	size_t decisions, conflicts, incompatibilities, backtracks;
};
void eb_resolver_stats(const struct eb_resolver *r, struct eb_resolver_stats *out);

#endif
