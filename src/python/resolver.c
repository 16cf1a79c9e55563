/*
 * resolver.c - PubGrub over bitset version sets (see resolver.h).
 *
 * A term is a set over a package's listed versions plus one extra bit that
 * stands for "not selected": a positive term ("a>=1") never has that bit,
 * a negative one ("not a>=1") always has it.  With that, intersection,
 * union, complement and the subset tests PubGrub needs are word-wise
 * bit operations, and positive/negative terms need no special cases.
 *
 * The structure follows pub's solver (the reference PubGrub): unit
 * propagation over the incompatibilities that mention a changed package,
 * conflict resolution that walks back the satisfiers and learns the prior
 * cause, decisions in pip's order (a package with one version left, then
 * the shallowest, then by name: see better()), and a failure report built
 * from the derivation tree (resolver_explain.c).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pin/requirement.h"
#include "pin/version.h"
#include "python/resolver.h"
#include "python/resolver_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/interrupt.h"

/* ---- provider result helpers ------------------------------------------- */

void eb_resolver_versions_add(struct eb_resolver_versions *v, const char *version, int yanked)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->versions = eb_xreallocarray(v->versions, v->cap, sizeof(*v->versions));
		v->yanked = eb_xreallocarray(v->yanked, v->cap, sizeof(*v->yanked));
	}
	v->versions[v->n] = eb_xstrdup(version);
	v->yanked[v->n] = yanked;
	v->n++;
}

static void versions_release(struct eb_resolver_versions *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->versions[i]);
	free(v->versions);
	free(v->yanked);
	memset(v, 0, sizeof(*v));
}

void eb_resolver_deps_add(struct eb_resolver_deps *d, const char *requirement)
{
	EB_ALLOC_GROW(d->requires, d->n + 1, d->cap);
	d->requires[d->n++] = eb_xstrdup(requirement);
}

void eb_resolver_deps_unavailable(struct eb_resolver_deps *d, const char *fmt, ...)
{
	struct eb_buf b;
	va_list ap;

	eb_buf_init(&b, 0);
	va_start(ap, fmt);
	(void)eb_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(d->unavailable);
	d->unavailable = eb_buf_detach(&b, NULL);
}

static void deps_release(struct eb_resolver_deps *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->requires[i]);
	free(d->requires);
	free(d->unavailable);
	free(d->requires_python);
	memset(d, 0, sizeof(*d));
}

/* ---- bitsets ------------------------------------------------------------ */

static uint64_t last_mask(const struct package *p)
{
	size_t nbits = p->nver + 1, r = nbits % 64;
	return r ? ((uint64_t)1 << r) - 1 : ~(uint64_t)0;
}

static uint64_t *bits_new(const struct package *p, int full)
{
	uint64_t *b = eb_xcalloc(p->nwords, sizeof(*b));
	if (full) {
		memset(b, 0xff, p->nwords * sizeof(*b));
		b[p->nwords - 1] &= last_mask(p);
	}
	return b;
}

uint64_t *eb_resolver__bits_dup(const struct package *p, const uint64_t *src)
{
	uint64_t *b = eb_xmalloc(p->nwords * sizeof(*b));
	memcpy(b, src, p->nwords * sizeof(*b));
	return b;
}

static void bit_set(uint64_t *b, size_t i)
{
	b[i / 64] |= (uint64_t)1 << (i % 64);
}

int eb_resolver__bit_get(const uint64_t *b, size_t i)
{
	return (b[i / 64] >> (i % 64)) & 1;
}

void eb_resolver__bits_not(const struct package *p, uint64_t *b)
{
	for (size_t i = 0; i < p->nwords; i++)
		b[i] = ~b[i];
	b[p->nwords - 1] &= last_mask(p);
}

static int bits_subset(const struct package *p, const uint64_t *a, const uint64_t *b)
{
	for (size_t i = 0; i < p->nwords; i++)
		if (a[i] & ~b[i])
			return 0;
	return 1;
}

static int bits_disjoint(const struct package *p, const uint64_t *a, const uint64_t *b)
{
	for (size_t i = 0; i < p->nwords; i++)
		if (a[i] & b[i])
			return 0;
	return 1;
}

static int bits_empty(const struct package *p, const uint64_t *a)
{
	for (size_t i = 0; i < p->nwords; i++)
		if (a[i])
			return 0;
	return 1;
}

static size_t bits_count_versions(const struct package *p, const uint64_t *a)
{
	size_t c = 0;
	for (size_t i = 0; i < p->nwords; i++)
		c += (size_t)__builtin_popcountll(a[i]);
	return c - (size_t)eb_resolver__bit_get(a, p->nver);
}

/* A term that holds whatever is selected (a dependency on a range
 * without versions is "not selected" and so the whole universe): it adds
 * nothing to an incompatibility and has no satisfier. */
int eb_resolver__term_vacuous(const struct package *p, const uint64_t *b)
{
	for (size_t i = 0; i + 1 < p->nwords; i++)
		if (b[i] != ~(uint64_t)0)
			return 0;
	return b[p->nwords - 1] == last_mask(p);
}

int eb_resolver__term_positive(const struct package *p, const uint64_t *b)
{
	return !eb_resolver__bit_get(b, p->nver);
}

static uint64_t *tmp_bits(struct eb_resolver *r, const struct package *p)
{
	if (r->tmpwords < p->nwords) {
		free(r->tmp);
		r->tmp = eb_xcalloc(p->nwords, sizeof(*r->tmp));
		r->tmpwords = p->nwords;
	}
	return r->tmp;
}

/* ---- projects and packages ---------------------------------------------- */

static int pver_cmp(const void *a, const void *b)
{
	const struct pver *x = a, *y = b;
	int c = eb_version_cmp(&x->v, &y->v);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int project_get(struct eb_resolver *r, const char *name, struct project **out,
		       struct eb_error **err)
{
	struct eb_resolver_versions vs = { 0 };
	struct project *pr;
	int rc;

	for (size_t i = 0; i < r->nprojects; i++) {
		if (strcmp(r->projects[i]->name, name) == 0) {
			*out = r->projects[i];
			return 0;
		}
	}
	pr = eb_xcalloc(1, sizeof(*pr));
	pr->name = eb_xstrdup(name);
	rc = r->prov.versions(r->prov.ctx, name, &vs, err);
	if (rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		pr->missing = 1;
		rc = 0;
	}
	if (rc < 0) {
		versions_release(&vs);
		free(pr->name);
		free(pr);
		return eb_error_wrap(err, "listing the versions of '%s'", name);
	}
	pr->vers = eb_xcalloc(vs.n ? vs.n : 1, sizeof(*pr->vers));
	for (size_t i = 0; i < vs.n; i++) {
		struct pver pv = { 0 };
		struct eb_error *e = NULL;

		if ((i & 4095) == 0 && eb_interrupted())
			break; /* said by the caller's next check */
		/* Versions that are not PEP 440 cannot be compared: pip
		 * skips them too. */
		if (eb_version_parse(&pv.v, vs.versions[i], strlen(vs.versions[i]), &e) < 0) {
			eb_error_free(e);
			continue;
		}
		pv.raw = eb_xstrdup(vs.versions[i]);
		pv.yanked = vs.yanked[i];
		pv.pre = eb_version_is_prerelease(&pv.v);
		pv.seq = i;
		pr->vers[pr->n++] = pv;
	}
	versions_release(&vs);
	/* sorted, then equal versions merged (a page of 300,000 files was
	 * quadratic compared pairwise): one file not yanked makes the
	 * version usable */
	eb_sort(pr->vers, pr->n, sizeof(*pr->vers), pver_cmp);
	{
		size_t u = 0;
		for (size_t i = 0; i < pr->n; i++) {
			if (u && eb_version_cmp(&pr->vers[u - 1].v, &pr->vers[i].v) == 0) {
				pr->vers[u - 1].yanked &= pr->vers[i].yanked;
				eb_version_release(&pr->vers[i].v);
				free(pr->vers[i].raw);
				continue;
			}
			pr->vers[u++] = pr->vers[i];
		}
		pr->n = u;
	}
	pr->deps = eb_xcalloc(r->nenvs * (pr->n ? pr->n : 1), sizeof(*pr->deps));
	pr->fetched = eb_xcalloc(r->nenvs * (pr->n ? pr->n : 1), 1);
	for (size_t i = 0; i < r->nprefs; i++)
		if (strcmp(r->prefs[i].name, name) == 0)
			pr->prefer = r->prefs[i].version;
	EB_ALLOC_GROW(r->projects, r->nprojects + 1, r->capprojects);
	r->projects[r->nprojects++] = pr;
	*out = pr;
	return 0;
}

static size_t package_add(struct eb_resolver *r, enum pkg_kind kind, size_t env,
			  struct project *pr, const char *extra)
{
	struct package *p;

	EB_ALLOC_GROW(r->pkgs, r->npkgs + 1, r->cappkgs);
	p = &r->pkgs[r->npkgs];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->env = env;
	p->proj = pr;
	p->extra = extra ? eb_xstrdup(extra) : NULL;
	p->nver = pr ? pr->n : 1;
	p->nwords = (p->nver + 1 + 63) / 64;
	p->acc = bits_new(p, 1);
	p->depth = kind == PKG_ROOT ? 0 : SIZE_MAX;
	return r->npkgs++;
}

static int package_get(struct eb_resolver *r, enum pkg_kind kind, size_t env, const char *name,
		       const char *extra, size_t *out, struct eb_error **err)
{
	struct project *pr = NULL;
	int rc;

	for (size_t i = 0; i < r->npkgs; i++) {
		struct package *p = &r->pkgs[i];
		if (p->kind == kind && kind != PKG_ROOT && (kind != PKG_ENV || p->env == env) &&
		    strcmp(p->proj->name, name) == 0 &&
		    ((!extra && !p->extra) || (extra && p->extra && strcmp(extra, p->extra) == 0))) {
			*out = i;
			return 0;
		}
	}
	rc = project_get(r, name, &pr, err);
	if (rc < 0)
		return rc;
	*out = package_add(r, kind, env, pr, extra);
	return 0;
}

/* ---- incompatibilities -------------------------------------------------- */

/* Take ownership of terms (merging terms of one package by intersection,
 * dropping a positive root term from a derived incompatibility of several
 * terms). */
static size_t inc_new(struct eb_resolver *r, enum inc_kind kind, struct term *terms, size_t n,
		      char *text, size_t c1, size_t c2)
{
	struct incompat *inc;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < m; j++) {
			if (terms[j].pkg == terms[i].pkg) {
				const struct package *p = &r->pkgs[terms[i].pkg];
				for (size_t w = 0; w < p->nwords; w++)
					terms[j].bits[w] &= terms[i].bits[w];
				free(terms[i].bits);
				break;
			}
		}
		if (j == m)
			terms[m++] = terms[i];
	}
	if (kind == INC_DERIVED) {
		size_t k = 0;
		for (size_t i = 0; i < m; i++) {
			const struct package *p = &r->pkgs[terms[i].pkg];
			if (eb_resolver__term_vacuous(p, terms[i].bits) ||
			    (m > 1 && p->kind == PKG_ROOT && eb_resolver__term_positive(p, terms[i].bits))) {
				free(terms[i].bits);
				continue;
			}
			terms[k++] = terms[i];
		}
		m = k;
	}
	EB_ALLOC_GROW(r->incs, r->nincs + 1, r->capincs);
	inc = &r->incs[r->nincs];
	memset(inc, 0, sizeof(*inc));
	inc->kind = kind;
	inc->terms = terms;
	inc->n = m;
	inc->text = text;
	inc->cause1 = c1;
	inc->cause2 = c2;
	r->stats.incompatibilities++;
	return r->nincs++;
}

static void inc_register(struct eb_resolver *r, size_t id)
{
	struct incompat *inc = &r->incs[id];

	if (inc->registered)
		return;
	inc->registered = 1;
	for (size_t i = 0; i < inc->n; i++) {
		struct package *p = &r->pkgs[inc->terms[i].pkg];
		EB_ALLOC_GROW(p->incs, p->ninc + 1, p->capinc);
		p->incs[p->ninc++] = id;
	}
}

/* {pkg in set} */
static size_t inc_single(struct eb_resolver *r, enum inc_kind kind, size_t pkg, uint64_t *bits,
			 char *text)
{
	struct term *t = eb_xmalloc(sizeof(*t));
	size_t id;

	t->pkg = pkg;
	t->bits = bits;
	id = inc_new(r, kind, t, 1, text, 0, 0);
	inc_register(r, id);
	return id;
}

/* {pkg == ver, not dep in set} */
static size_t inc_dep(struct eb_resolver *r, enum inc_kind kind, size_t pkg, size_t ver,
		      size_t dep, uint64_t *depbits, char *text)
{
	struct term *t = eb_xcalloc(2, sizeof(*t));
	size_t id;

	t[0].pkg = pkg;
	t[0].bits = bits_new(&r->pkgs[pkg], 0);
	bit_set(t[0].bits, ver);
	t[1].pkg = dep;
	eb_resolver__bits_not(&r->pkgs[dep], depbits);
	t[1].bits = depbits;
	id = inc_new(r, kind, t, 2, text, 0, 0);
	inc_register(r, id);
	return id;
}

/* ---- partial solution --------------------------------------------------- */

static void assign(struct eb_resolver *r, size_t pkg, uint64_t *bits, int decision, size_t cause)
{
	struct package *p = &r->pkgs[pkg];
	struct assignment *a;

	if (decision)
		r->level++;
	EB_ALLOC_GROW(r->as, r->nas + 1, r->capas);
	a = &r->as[r->nas++];
	a->pkg = pkg;
	a->bits = bits;
	a->decision = decision;
	a->level = r->level;
	a->cause = cause;
	for (size_t w = 0; w < p->nwords; w++)
		p->acc[w] &= bits[w];
	if (decision) {
		p->decided = 1;
		for (size_t i = 0; i < p->nver; i++)
			if (eb_resolver__bit_get(bits, i))
				p->decided_ver = i;
		r->stats.decisions++;
	}
}

static void backtrack(struct eb_resolver *r, size_t level)
{
	while (r->nas > 0 && r->as[r->nas - 1].level > level) {
		struct assignment *a = &r->as[--r->nas];
		struct package *p = &r->pkgs[a->pkg];
		if (a->decision)
			p->decided = 0;
		free(a->bits);
		/* Recompute from what is left. */
		free(p->acc);
		p->acc = bits_new(p, 1);
		for (size_t i = 0; i < r->nas; i++) {
			if (r->as[i].pkg != a->pkg)
				continue;
			for (size_t w = 0; w < p->nwords; w++)
				p->acc[w] &= r->as[i].bits[w];
		}
	}
	r->level = level;
	r->stats.backtracks++;
}

/* Index of the earliest assignment after which the accumulated term of
 * t's package is a subset of t; r->nas when it never is. */
static size_t satisfier(struct eb_resolver *r, size_t pkg, const uint64_t *t)
{
	const struct package *p = &r->pkgs[pkg];
	uint64_t *acc = tmp_bits(r, p);

	for (size_t w = 0; w < p->nwords; w++)
		acc[w] = ~(uint64_t)0;
	acc[p->nwords - 1] &= last_mask(p);
	for (size_t i = 0; i < r->nas; i++) {
		if (r->as[i].pkg != pkg)
			continue;
		for (size_t w = 0; w < p->nwords; w++)
			acc[w] &= r->as[i].bits[w];
		if (bits_subset(p, acc, t))
			return i;
	}
	return r->nas;
}

enum rel { REL_SATISFIED, REL_CONTRADICTED, REL_ALMOST, REL_INCONCLUSIVE };

static enum rel relation(struct eb_resolver *r, size_t id, size_t *unsat)
{
	const struct incompat *inc = &r->incs[id];
	size_t found = (size_t)-1;

	for (size_t i = 0; i < inc->n; i++) {
		const struct package *p = &r->pkgs[inc->terms[i].pkg];
		if (bits_subset(p, p->acc, inc->terms[i].bits))
			continue;
		if (bits_disjoint(p, p->acc, inc->terms[i].bits))
			return REL_CONTRADICTED;
		if (found != (size_t)-1)
			return REL_INCONCLUSIVE;
		found = i;
	}
	if (found == (size_t)-1)
		return REL_SATISFIED;
	*unsat = found;
	return REL_ALMOST;
}

static int inc_is_failure(struct eb_resolver *r, size_t id)
{
	const struct incompat *inc = &r->incs[id];
	size_t n = 0, last = 0;

	for (size_t i = 0; i < inc->n; i++) {
		if (!eb_resolver__term_vacuous(&r->pkgs[inc->terms[i].pkg], inc->terms[i].bits)) {
			n++;
			last = i;
		}
	}
	if (n == 0)
		return 1;
	if (n > 1)
		return 0;
	return r->pkgs[inc->terms[last].pkg].kind == PKG_ROOT &&
	       eb_resolver__term_positive(&r->pkgs[inc->terms[last].pkg], inc->terms[last].bits);
}

/* pub's _resolveConflict.  Returns the incompatibility to derive from
 * (>= 0) or -EB_EFAIL when the root is reached (no solution). */
static long resolve_conflict(struct eb_resolver *r, size_t id)
{
	int created = 0;

	r->stats.conflicts++;
	for (;;) {
		if (eb_interrupted())
			return -EB_EINTR; /* Ctrl-C in a long conflict search */
		struct incompat *inc = &r->incs[id];
		size_t sat_i = 0, sat_term = 0, prev_level = 1;
		int have = 0;
		uint64_t *diff = NULL;

		if (inc_is_failure(r, id)) {
			eb_resolver__explain(r, id);
			return -EB_EFAIL;
		}
		for (size_t i = 0; i < inc->n; i++) {
			size_t s;
			if (eb_resolver__term_vacuous(&r->pkgs[inc->terms[i].pkg], inc->terms[i].bits))
				continue;
			s = satisfier(r, inc->terms[i].pkg, inc->terms[i].bits);
			if (!have) {
				sat_i = s;
				sat_term = i;
				have = 1;
			} else if (sat_i < s) {
				if (r->as[sat_i].level > prev_level)
					prev_level = r->as[sat_i].level;
				sat_i = s;
				sat_term = i;
				free(diff);
				diff = NULL;
			} else if (r->as[s].level > prev_level) {
				prev_level = r->as[s].level;
			}
			if (sat_term == i) {
				const struct package *p = &r->pkgs[inc->terms[i].pkg];
				free(diff);
				diff = eb_resolver__bits_dup(p, r->as[sat_i].bits);
				for (size_t w = 0; w < p->nwords; w++)
					diff[w] &= ~inc->terms[i].bits[w];
				if (bits_empty(p, diff)) {
					free(diff);
					diff = NULL;
				} else {
					uint64_t *inv = eb_resolver__bits_dup(p, diff);
					size_t s2;
					eb_resolver__bits_not(p, inv);
					s2 = satisfier(r, inc->terms[i].pkg, inv);
					free(inv);
					if (s2 < r->nas && r->as[s2].level > prev_level)
						prev_level = r->as[s2].level;
				}
			}
		}
		if (prev_level < r->as[sat_i].level || r->as[sat_i].decision) {
			free(diff);
			backtrack(r, prev_level);
			if (created)
				inc_register(r, id);
			return (long)id;
		}
		{
			const struct assignment *sat = &r->as[sat_i];
			const struct incompat *cause = &r->incs[sat->cause];
			size_t n = 0, cap = inc->n + cause->n + 1;
			struct term *terms = eb_xcalloc(cap, sizeof(*terms));
			size_t cause_id = sat->cause, satpkg = sat->pkg;

			for (size_t i = 0; i < inc->n; i++) {
				if (i == sat_term)
					continue;
				terms[n].pkg = inc->terms[i].pkg;
				terms[n++].bits = eb_resolver__bits_dup(&r->pkgs[inc->terms[i].pkg],
							   inc->terms[i].bits);
			}
			for (size_t i = 0; i < cause->n; i++) {
				if (cause->terms[i].pkg == satpkg)
					continue;
				terms[n].pkg = cause->terms[i].pkg;
				terms[n++].bits = eb_resolver__bits_dup(&r->pkgs[cause->terms[i].pkg],
							   cause->terms[i].bits);
			}
			if (diff) {
				eb_resolver__bits_not(&r->pkgs[satpkg], diff);
				terms[n].pkg = satpkg;
				terms[n++].bits = diff;
				diff = NULL;
			}
			id = inc_new(r, INC_DERIVED, terms, n, NULL, id, cause_id);
			created = 1;
		}
	}
}

static int propagate(struct eb_resolver *r, size_t start)
{
	size_t *stack = eb_xmalloc(sizeof(*stack)), nstack = 1, capstack = 1;

	stack[0] = start;
	while (nstack > 0) {
		size_t pkg = stack[--nstack];
		struct package *p = &r->pkgs[pkg];

		for (size_t k = p->ninc; k-- > 0;) {
			size_t id = p->incs[k], unsat = 0, tp;
			enum rel rel = relation(r, id, &unsat);
			int conflict = 0;
			uint64_t *b;

			if (rel == REL_SATISFIED) {
				long root = resolve_conflict(r, id);
				if (root < 0) {
					free(stack);
					return (int)root;
				}
				id = (size_t)root;
				rel = relation(r, id, &unsat);
				if (rel != REL_ALMOST) {
					/* PubGrub guarantees the learned
					 * incompatibility is almost satisfied
					 * after backjumping. */
					abort();
				}
				nstack = 0;
				conflict = 1;
			}
			if (rel != REL_ALMOST)
				continue;
			tp = r->incs[id].terms[unsat].pkg;
			b = eb_resolver__bits_dup(&r->pkgs[tp], r->incs[id].terms[unsat].bits);
			eb_resolver__bits_not(&r->pkgs[tp], b);
			assign(r, tp, b, 0, id);
			EB_ALLOC_GROW(stack, nstack + 1, capstack);
			stack[nstack++] = tp;
			p = &r->pkgs[pkg];
			if (conflict)
				break; /* restart from the package just derived */
		}
	}
	free(stack);
	return 0;
}

/* ---- requirements to terms ---------------------------------------------- */

static void bits_for_specs(struct eb_resolver *r, size_t pkg, struct project *pr,
			   const struct eb_specifier_set *specs, uint64_t **out)
{
	const struct package *p = &r->pkgs[pkg];
	uint64_t *b = bits_new(p, 0);
	int exact = specs->n == 1 && ((specs->items[0].op == EB_OP_EQ && !specs->items[0].wildcard) ||
				      specs->items[0].op == EB_OP_ARBITRARY);

	if (eb_specifier_set_allows_prereleases(specs))
		pr->allow_pre = 1;
	for (size_t i = 0; i < pr->n; i++) {
		if (eb_specifier_set_contains(specs, &pr->vers[i].v, pr->vers[i].raw)) {
			bit_set(b, i);
			if (exact)
				pr->vers[i].exact = 1;
		}
	}
	*out = b;
}

static char *req_display(const struct eb_requirement *req)
{
	char *specs = eb_specifier_set_to_string(&req->specs);
	struct eb_buf b;

	eb_buf_init(&b, 0);
	(void)eb_buf_adds(&b, req->norm_name);
	for (size_t i = 0; i < req->nextras; i++)
		(void)eb_buf_addf(&b, "%s%s", i ? "," : "[", req->extras[i]);
	if (req->nextras)
		(void)eb_buf_addc(&b, ']');
	(void)eb_buf_adds(&b, specs);
	free(specs);
	return eb_buf_detach(&b, NULL);
}

/* dep is required by pkg: one edge deeper than pkg at most. */
static void depth_lower(struct eb_resolver *r, size_t dep, size_t pkg)
{
	if (r->pkgs[pkg].depth != SIZE_MAX && r->pkgs[pkg].depth + 1 < r->pkgs[dep].depth)
		r->pkgs[dep].depth = r->pkgs[pkg].depth + 1;
}

/* Add {pkg==ver, not req} for the base project and each extra of req. */
static int add_requirement(struct eb_resolver *r, enum inc_kind kind, size_t pkg, size_t ver,
			   size_t env, const struct eb_requirement *req, const char *origin,
			   struct eb_error **err)
{
	size_t dep, id;
	uint64_t *b;
	int rc;

	rc = package_get(r, PKG_ENV, env, req->norm_name, NULL, &dep, err);
	if (rc < 0)
		return rc;
	depth_lower(r, dep, pkg);
	bits_for_specs(r, dep, r->pkgs[dep].proj, &req->specs, &b);
	if (dep == pkg) {
		/* A project that depends on itself: fine at this version, else
		 * the version cannot be used. */
		if (!eb_resolver__bit_get(b, ver)) {
			memset(b, 0, r->pkgs[pkg].nwords * sizeof(*b));
			bit_set(b, ver);
			inc_single(r, INC_UNAVAILABLE, pkg, b,
				   eb_xasprintf("depends on itself as %s", req->text));
		} else {
			free(b);
		}
		return 0;
	}
	id = inc_dep(r, kind, pkg, ver, dep, b,
		     kind == INC_ROOT_DEP ? eb_xstrdup(origin) : req_display(req));
	if (kind == INC_ROOT_DEP)
		r->incs[id].dep = req_display(req);
	for (size_t i = 0; i < req->nextras; i++) {
		rc = package_get(r, PKG_ENV, env, req->norm_name, req->extras[i], &dep, err);
		if (rc < 0)
			return rc;
		depth_lower(r, dep, pkg);
		bits_for_specs(r, dep, r->pkgs[dep].proj, &req->specs, &b);
		id = inc_dep(r, kind, pkg, ver, dep, b,
			     kind == INC_ROOT_DEP ? eb_xstrdup(origin) : req_display(req));
		if (kind == INC_ROOT_DEP)
			r->incs[id].dep = req_display(req);
	}
	return 0;
}

/* ---- decisions ---------------------------------------------------------- */

/* Tell the provider which projects the next calls will ask for (those the
 * resolver has not listed yet), so it can fetch them at once. */
static void prefetch(struct eb_resolver *r, size_t env, const struct eb_requirement *reqs,
		     size_t n)
{
	const char **names;
	size_t m = 0;

	if (!r->prov.prefetch || n == 0)
		return;
	names = eb_xcalloc(n, sizeof(*names));
	for (size_t i = 0; i < n; i++) {
		size_t k;
		if (!reqs[i].norm_name)
			continue;
		for (k = 0; k < r->nprojects; k++)
			if (strcmp(r->projects[k]->name, reqs[i].norm_name) == 0)
				break;
		if (k == r->nprojects)
			names[m++] = reqs[i].norm_name;
	}
	if (m)
		r->prov.prefetch(r->prov.ctx, env, names, m);
	free(names);
}

static int python_ok(const struct eb_resolver *r, size_t env, const char *rp)
{
	struct eb_specifier_set set = EB_SPECIFIER_SET_INIT;
	struct eb_version v;
	struct eb_error *e = NULL;
	int ok = 1;

	if (!rp || !*rp || !r->envs[env].python_full)
		return 1;
	if (eb_specifier_set_parse(&set, rp, strlen(rp), &e) < 0) {
		/* pip ignores a Requires-Python it cannot parse. */
		eb_error_free(e);
		return 1;
	}
	if (eb_version_parse(&v, r->envs[env].python_full, strlen(r->envs[env].python_full), &e) ==
	    0) {
		ok = eb_specifier_set_contains(&set, &v, NULL);
		eb_version_release(&v);
	} else {
		eb_error_free(e);
	}
	eb_specifier_set_release(&set);
	return ok;
}

static int fetch_deps(struct eb_resolver *r, struct project *pr, size_t env, size_t ver,
		      struct eb_resolver_deps **out, struct eb_error **err)
{
	size_t k = env * pr->n + ver;
	int rc;

	if (!pr->fetched[k]) {
		rc = r->prov.dependencies(r->prov.ctx, env, pr->name, pr->vers[ver].raw, &pr->deps[k],
					  err);
		if (rc < 0) {
			deps_release(&pr->deps[k]);
			return eb_error_wrap(err, "reading the dependencies of %s==%s", pr->name,
					     pr->vers[ver].raw);
		}
		pr->fetched[k] = 1;
	}
	*out = &pr->deps[k];
	return 0;
}

/* Add the dependencies of pkg==ver.  *usable = 0 when the version cannot
 * be used (an incompatibility says why). */
static int add_dependencies(struct eb_resolver *r, size_t pkg, size_t ver, int *usable,
			    struct eb_error **err)
{
	struct package *p = &r->pkgs[pkg];
	struct project *pr = p->proj;
	struct eb_resolver_deps *d = NULL;
	struct eb_requirement *reqs = NULL;
	struct eb_marker_env menv;
	size_t env = p->env, dep, first = r->nincs, nreqs = 0;
	uint64_t *b;
	int rc = 0;

	*usable = 1;
	if (p->kind == PKG_ROOT) {
		for (size_t e = 0; e < r->nenvs; e++) {
			struct eb_requirement *rr = eb_xcalloc(r->nroots + 1, sizeof(*rr));
			size_t m = 0;
			for (size_t i = 0; i < r->nroots; i++)
				if (r->roots[i].env == e && !r->roots[i].constraint)
					rr[m++] = r->roots[i].req; /* shallow: names only */
			prefetch(r, e, rr, m);
			free(rr);
		}
		for (size_t i = 0; i < r->nroots; i++) {
			struct root_req *rr = &r->roots[i];
			if (rr->constraint)
				continue;
			if (rr->req.marker) {
				int ok = 0;
				menv = r->envs[rr->env].markers;
				menv.extra = "";
				rc = eb_marker_eval(rr->req.marker, &menv, &ok, err);
				if (rc < 0)
					return rc;
				if (!ok)
					continue;
			}
			rc = add_requirement(r, INC_ROOT_DEP, pkg, 0, rr->env, &rr->req, rr->origin, err);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (p->kind == PKG_SHARED)
		return 0;

	rc = fetch_deps(r, pr, env, ver, &d, err);
	if (rc < 0)
		return rc;
	p = &r->pkgs[pkg];
	if (d->unavailable || !python_ok(r, env, d->requires_python)) {
		b = bits_new(p, 0);
		bit_set(b, ver);
		inc_single(r, INC_UNAVAILABLE, pkg, b,
			   d->unavailable ? eb_xstrdup(d->unavailable)
					  : eb_xasprintf("requires Python %s", d->requires_python));
		*usable = 0;
		return 0;
	}
	if (p->extra) {
		rc = package_get(r, PKG_ENV, env, pr->name, NULL, &dep, err);
		if (rc < 0)
			return rc;
		b = bits_new(&r->pkgs[dep], 0);
		bit_set(b, ver);
		inc_dep(r, INC_EXTRA_BASE, pkg, ver, dep, b, NULL);
	} else if (r->nenvs > 1) {
		rc = package_get(r, PKG_SHARED, 0, pr->name, NULL, &dep, err);
		if (rc < 0)
			return rc;
		b = bits_new(&r->pkgs[dep], 0);
		bit_set(b, ver);
		inc_dep(r, INC_PARITY, pkg, ver, dep, b, NULL);
	}
	reqs = eb_xcalloc(d->n + 1, sizeof(*reqs));
	for (size_t i = 0; i < d->n; i++) {
		struct eb_requirement *req = &reqs[nreqs];
		struct eb_error *e = NULL;
		int ok = 1;

		if (eb_requirement_parse(req, d->requires[i], strlen(d->requires[i]), &e) < 0 ||
		    req->kind != EB_REQ_NAMED) {
			eb_requirement_release(req);
			eb_error_free(e);
			b = bits_new(&r->pkgs[pkg], 0);
			bit_set(b, ver);
			inc_single(r, INC_UNAVAILABLE, pkg, b,
				   eb_xasprintf("has a dependency envbuild cannot resolve: %s",
						d->requires[i]));
			*usable = 0;
			goto out;
		}
		p = &r->pkgs[pkg];
		menv = r->envs[env].markers;
		menv.extra = p->extra ? p->extra : "";
		if (req->marker) {
			int uses_extra = (eb_marker_vars_used(req->marker) & EB_MARKER_VAR_EXTRA) != 0;
			if (p->extra && !uses_extra)
				ok = 0; /* the base package brings it */
			else if (eb_marker_eval(req->marker, &menv, &ok, &e) < 0) {
				eb_error_free(e);
				ok = 0;
			}
		} else if (p->extra) {
			ok = 0;
		}
		if (ok)
			nreqs++;
		else
			eb_requirement_release(req);
	}
	prefetch(r, env, reqs, nreqs);
	for (size_t i = 0; i < nreqs; i++) {
		rc = add_requirement(r, INC_DEP, pkg, ver, env, &reqs[i], NULL, err);
		if (rc < 0)
			goto out;
	}
	/* Deciding would conflict at once when every other term of a new
	 * incompatibility is already satisfied: let propagation see it. */
	for (size_t id = first; id < r->nincs; id++) {
		const struct incompat *inc = &r->incs[id];
		int all = 1;
		for (size_t t = 0; t < inc->n && all; t++) {
			const struct package *q = &r->pkgs[inc->terms[t].pkg];
			if (inc->terms[t].pkg == pkg)
				continue;
			if (!bits_subset(q, q->acc, inc->terms[t].bits))
				all = 0;
		}
		if (all)
			*usable = 0;
	}
out:
	for (size_t i = 0; i < nreqs; i++)
		eb_requirement_release(&reqs[i]);
	free(reqs);
	return rc;
}

/* The next version to try for p, best first: the preferred version (an
 * existing pin, or the version another environment chose), then the
 * newest final release, then the newest pre-release when nothing else
 * fits.  SIZE_MAX when acc holds no version. */
static size_t pick_version(struct eb_resolver *r, const struct package *p)
{
	const struct project *pr = p->proj;
	const struct package *shared = NULL;
	size_t best = SIZE_MAX;
	int allow_pre;

	if (p->kind == PKG_ROOT)
		return 0;
	allow_pre = r->allow_pre || pr->allow_pre;
	/* Another environment settled the shared version already (decided,
	 * or derived to a range): stay inside it rather than learn, one
	 * version at a time, that nothing else is allowed. */
	if (p->kind == PKG_ENV && r->nenvs > 1 && !p->extra)
		for (size_t i = 0; i < r->npkgs && !shared; i++)
			if (r->pkgs[i].kind == PKG_SHARED && r->pkgs[i].proj == pr &&
			    eb_resolver__term_positive(&r->pkgs[i], r->pkgs[i].acc))
				shared = &r->pkgs[i];
	if (pr->prefer) {
		for (size_t i = 0; i < pr->n; i++)
			if (strcmp(pr->vers[i].raw, pr->prefer) == 0 && eb_resolver__bit_get(p->acc, i) &&
			    (!shared || eb_resolver__bit_get(shared->acc, i)))
				return i;
	}
	for (int pass = shared ? 0 : 1; pass < 2; pass++) {
		for (size_t i = pr->n; i-- > 0;) {
			if (!eb_resolver__bit_get(p->acc, i) || (pass == 0 && !eb_resolver__bit_get(shared->acc, i)))
				continue;
			if (pr->vers[i].pre && !allow_pre) {
				if (best == SIZE_MAX)
					best = i;
				continue;
			}
			return i;
		}
		if (best != SIZE_MAX)
			return best;
	}
	return best;
}

/* Which undecided package to decide first.  A package with one version
 * left (or none) first: nothing to choose.  Then pip's order (its
 * provider's get_preference): the shallowest (fewest dependency edges
 * from the top-level requirements), then by name.  Where backtracking
 * leaves a choice, deciding in pip's order gives pip's answer more often
 * than PubGrub's usual fewest-versions-first. */
static int better(const struct eb_resolver *r, size_t i, size_t ci, size_t best, size_t cbest)
{
	const struct package *a = &r->pkgs[i], *b;
	int c;

	if (best == SIZE_MAX)
		return 1;
	b = &r->pkgs[best];
	if ((ci <= 1) != (cbest <= 1))
		return ci <= 1;
	if (a->depth != b->depth)
		return a->depth < b->depth;
	if (!a->proj || !b->proj)
		return !a->proj;
	c = strcmp(a->proj->name, b->proj->name);
	return c < 0;
}

/* Returns the package to propagate next, SIZE_MAX when every package is
 * decided (a solution), or sets *rc. */
static size_t decide(struct eb_resolver *r, int *rc, struct eb_error **err)
{
	size_t best = SIZE_MAX, best_count = SIZE_MAX, ver;
	struct package *p;
	int usable;

	*rc = 0;
	for (size_t i = 0; i < r->npkgs; i++) {
		const struct package *q = &r->pkgs[i];
		size_t c;
		if (q->decided || !eb_resolver__term_positive(q, q->acc))
			continue;
		c = bits_count_versions(q, q->acc);
		if (better(r, i, c, best, best_count)) {
			best = i;
			best_count = c;
		}
	}
	if (best == SIZE_MAX)
		return SIZE_MAX;
	p = &r->pkgs[best];
	ver = pick_version(r, p);
	if (ver == SIZE_MAX) {
		uint64_t *b = eb_resolver__bits_dup(p, p->acc);
		inc_single(r, INC_NO_VERSIONS, best, b, NULL);
		return best;
	}
	if (p->kind != PKG_ROOT && p->proj->vers[ver].yanked && !p->proj->vers[ver].exact) {
		uint64_t *b = bits_new(p, 0);
		bit_set(b, ver);
		inc_single(r, INC_UNAVAILABLE, best, b,
			   eb_xstrdup("was yanked (only an exact == pin may use it)"));
		return best;
	}
	*rc = add_dependencies(r, best, ver, &usable, err);
	if (*rc < 0)
		return SIZE_MAX;
	if (usable) {
		uint64_t *b = bits_new(&r->pkgs[best], 0);
		bit_set(b, ver);
		assign(r, best, b, 1, 0);
	}
	return best;
}

/* ---- the public API ------------------------------------------------------ */

struct eb_resolver *eb_resolver_new(const struct eb_resolver_provider *p,
				    const struct eb_resolver_env *envs, size_t nenvs)
{
	struct eb_resolver *r = eb_xcalloc(1, sizeof(*r));

	r->prov = *p;
	r->nenvs = nenvs;
	r->envs = eb_xcalloc(nenvs, sizeof(*r->envs));
	memcpy(r->envs, envs, nenvs * sizeof(*envs));
	/* The root: one version, "". */
	package_add(r, PKG_ROOT, 0, NULL, NULL);
	return r;
}

void eb_resolver_allow_prereleases(struct eb_resolver *r, int allow)
{
	r->allow_pre = allow;
}

void eb_resolver_prefer(struct eb_resolver *r, const char *name, const char *version)
{
	char *n = eb_pep503_normalize(name, strlen(name));

	for (size_t i = 0; i < r->nprefs; i++) {
		if (strcmp(r->prefs[i].name, n) == 0) {
			free(r->prefs[i].version);
			r->prefs[i].version = eb_xstrdup(version);
			free(n);
			return;
		}
	}
	EB_ALLOC_GROW(r->prefs, r->nprefs + 1, r->capprefs);
	r->prefs[r->nprefs].name = n;
	r->prefs[r->nprefs].version = eb_xstrdup(version);
	r->nprefs++;
}

static int add_root(struct eb_resolver *r, size_t env, const char *requirement,
		    const char *origin, int constraint, struct eb_error **err)
{
	struct root_req rr = { 0 };
	int rc;

	rr.env = env;
	rr.constraint = constraint;
	rc = eb_requirement_parse(&rr.req, requirement, strlen(requirement), err);
	if (rc < 0)
		return eb_error_wrap(err, "requirement '%s'", requirement);
	if (rr.req.kind != EB_REQ_NAMED || rr.req.editable) {
		eb_requirement_release(&rr.req);
		return eb_error_set(err, EB_EINVALID,
				    "requirement '%s': only named requirements can be resolved",
				    requirement);
	}
	rr.origin = eb_xstrdup(origin ? origin : "the requirements");
	EB_ALLOC_GROW(r->roots, r->nroots + 1, r->caproots);
	r->roots[r->nroots++] = rr;
	return 0;
}

int eb_resolver_require(struct eb_resolver *r, size_t env, const char *requirement,
			const char *origin, struct eb_error **err)
{
	return add_root(r, env, requirement, origin, 0, err);
}

int eb_resolver_constrain(struct eb_resolver *r, size_t env, const char *requirement,
			  const char *origin, struct eb_error **err)
{
	return add_root(r, env, requirement, origin, 1, err);
}

/* Before the first decision: {name in versions outside the constraint}
 * for each constraint whose marker holds. */
static int add_constraints(struct eb_resolver *r, struct eb_error **err)
{
	for (size_t i = 0; i < r->nroots; i++) {
		struct root_req *rr = &r->roots[i];
		struct eb_marker_env menv;
		size_t pkg, id;
		uint64_t *b;
		int ok = 1, rc;

		if (!rr->constraint)
			continue;
		if (rr->req.marker) {
			menv = r->envs[rr->env].markers;
			menv.extra = "";
			if ((rc = eb_marker_eval(rr->req.marker, &menv, &ok, err)) < 0)
				return rc;
			if (!ok)
				continue;
		}
		if ((rc = package_get(r, PKG_ENV, rr->env, rr->req.norm_name, NULL, &pkg, err)) < 0)
			return rc;
		bits_for_specs(r, pkg, r->pkgs[pkg].proj, &rr->req.specs, &b);
		eb_resolver__bits_not(&r->pkgs[pkg], b);
		b[r->pkgs[pkg].nver / 64] &= ~((uint64_t)1 << (r->pkgs[pkg].nver % 64));
		if (bits_empty(&r->pkgs[pkg], b)) {
			free(b); /* allows every listed version */
			continue;
		}
		id = inc_single(r, INC_CONSTRAINT, pkg, b, eb_xstrdup(rr->origin));
		r->incs[id].dep = req_display(&rr->req);
	}
	return 0;
}

static const char *keep(struct eb_resolver *r, char *s)
{
	EB_ALLOC_GROW(r->strings, r->nstrings + 1, r->capstrings);
	r->strings[r->nstrings++] = s;
	return s;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int pin_cmp(const void *a, const void *b)
{
	return strcmp(((const struct eb_resolver_pin *)a)->name,
		      ((const struct eb_resolver_pin *)b)->name);
}

static void add_unique(const char ***arr, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*arr)[i], s) == 0)
			return;
	*arr = eb_xreallocarray(*arr, *n + 1, sizeof(**arr));
	(*arr)[(*n)++] = s;
}

static void build_solutions(struct eb_resolver *r)
{
	size_t *pinof = eb_xcalloc(r->npkgs + 1, sizeof(*pinof));

	r->solutions = eb_xcalloc(r->nenvs, sizeof(*r->solutions));
	for (size_t e = 0; e < r->nenvs; e++) {
		struct solution *s = &r->solutions[e];
		for (size_t i = 0; i < r->npkgs; i++) {
			const struct package *p = &r->pkgs[i];
			if (p->kind != PKG_ENV || p->env != e || p->extra || !p->decided)
				continue;
			s->pins = eb_xreallocarray(s->pins, s->n + 1, sizeof(*s->pins));
			memset(&s->pins[s->n], 0, sizeof(s->pins[s->n]));
			s->pins[s->n].name = p->proj->name;
			s->pins[s->n].version = p->proj->vers[p->decided_ver].raw;
			s->n++;
		}
		if (s->n)
			eb_sort(s->pins, s->n, sizeof(*s->pins), pin_cmp);
		/* Which pin each decided package of the environment is (an extra
		 * package is its project's pin): one pass over the edges. */
		for (size_t i = 0; i < r->npkgs; i++) {
			const struct package *p = &r->pkgs[i];
			pinof[i] = SIZE_MAX;
			if (p->kind != PKG_ENV || p->env != e || !p->decided)
				continue;
			for (size_t k = 0; k < s->n; k++)
				if (s->pins[k].name == p->proj->name)
					pinof[i] = k;
			if (p->extra && pinof[i] != SIZE_MAX)
				add_unique(&s->pins[pinof[i]].extras, &s->pins[pinof[i]].nextras,
					   p->extra);
		}
		for (size_t id = 0; id < r->nincs; id++) {
			const struct incompat *inc = &r->incs[id];
			const struct package *from;
			struct eb_resolver_pin *pin;
			if ((inc->kind != INC_DEP && inc->kind != INC_ROOT_DEP) || inc->n != 2 ||
			    pinof[inc->terms[1].pkg] == SIZE_MAX)
				continue;
			from = &r->pkgs[inc->terms[0].pkg];
			pin = &s->pins[pinof[inc->terms[1].pkg]];
			if (!from->decided || !eb_resolver__bit_get(inc->terms[0].bits, from->decided_ver))
				continue;
			if (inc->kind == INC_ROOT_DEP)
				add_unique(&pin->via, &pin->nvia, keep(r, eb_xasprintf("-r %s", inc->text)));
			else if (strcmp(from->proj->name, pin->name) != 0)
				add_unique(&pin->via, &pin->nvia, from->proj->name);
		}
		for (size_t k = 0; k < s->n; k++) {
			struct eb_resolver_pin *pin = &s->pins[k];
			if (pin->nextras)
				eb_sort(pin->extras, pin->nextras, sizeof(char *), str_cmp);
			if (pin->nvia)
				eb_sort(pin->via, pin->nvia, sizeof(char *), str_cmp);
		}
	}
	free(pinof);
}

int eb_resolver_run(struct eb_resolver *r, struct eb_error **err)
{
	size_t next = 0;
	uint64_t *b;
	int rc = 0;

	if (r->solutions || r->explanation)
		return eb_error_set(err, EB_EFAIL, "the resolver has run already");
	b = bits_new(&r->pkgs[0], 0);
	bit_set(b, 1); /* "not selected" */
	inc_single(r, INC_NOT_ROOT, 0, b, NULL);
	if ((rc = add_constraints(r, err)) < 0)
		return rc;
	for (;;) {
		if ((rc = eb_interrupt_check(err)) < 0)
			break;
		rc = propagate(r, next);
		if (rc == -EB_EINTR && !(err && *err))
			rc = eb_interrupt_check(err);
		if (rc < 0)
			break;
		next = decide(r, &rc, err);
		if (rc < 0)
			break;
		if (next == SIZE_MAX)
			break;
	}
	if (rc == -EB_EFAIL && r->explanation && !(err && *err))
		return eb_error_set(err, EB_EFAIL, "no solution: the requirements conflict");
	if (rc < 0)
		return rc;
	build_solutions(r);
	return 0;
}

const char *eb_resolver_explanation(const struct eb_resolver *r)
{
	return r->explanation;
}

const struct eb_resolver_pin *eb_resolver_solution(const struct eb_resolver *r, size_t env,
						   size_t *n)
{
	if (!r->solutions || env >= r->nenvs) {
		*n = 0;
		return NULL;
	}
	*n = r->solutions[env].n;
	return r->solutions[env].pins;
}

void eb_resolver_stats(const struct eb_resolver *r, struct eb_resolver_stats *out)
{
	*out = r->stats;
}

void eb_resolver_free(struct eb_resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprojects; i++) {
		struct project *pr = r->projects[i];
		for (size_t k = 0; k < r->nenvs * pr->n; k++)
			deps_release(&pr->deps[k]);
		for (size_t k = 0; k < pr->n; k++) {
			free(pr->vers[k].raw);
			eb_version_release(&pr->vers[k].v);
		}
		free(pr->vers);
		free(pr->deps);
		free(pr->fetched);
		free(pr->name);
		free(pr);
	}
	free(r->projects);
	for (size_t i = 0; i < r->npkgs; i++) {
		free(r->pkgs[i].extra);
		free(r->pkgs[i].acc);
		free(r->pkgs[i].incs);
	}
	free(r->pkgs);
	for (size_t i = 0; i < r->nincs; i++) {
		for (size_t t = 0; t < r->incs[i].n; t++)
			free(r->incs[i].terms[t].bits);
		free(r->incs[i].terms);
		free(r->incs[i].text);
		free(r->incs[i].dep);
	}
	free(r->incs);
	for (size_t i = 0; i < r->nas; i++)
		free(r->as[i].bits);
	free(r->as);
	for (size_t i = 0; i < r->nroots; i++) {
		eb_requirement_release(&r->roots[i].req);
		free(r->roots[i].origin);
	}
	free(r->roots);
	for (size_t i = 0; i < r->nprefs; i++) {
		free(r->prefs[i].name);
		free(r->prefs[i].version);
	}
	free(r->prefs);
	if (r->solutions) {
		for (size_t e = 0; e < r->nenvs; e++) {
			for (size_t k = 0; k < r->solutions[e].n; k++) {
				free(r->solutions[e].pins[k].extras);
				free(r->solutions[e].pins[k].via);
			}
			free(r->solutions[e].pins);
		}
		free(r->solutions);
	}
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->explanation);
	free(r->tmp);
	free(r->envs);
	free(r);
}

