/*
 * resolver_explain.c - the failure report of the PubGrub resolver (see
 * resolver.h): version sets written back as specifiers, each
 * incompatibility as a sentence, and the derivation tree walked into
 * numbered lines, as pub and uv word it.  The solver itself is resolver.c
 * (resolver_internal.h between them).
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

/* ---- explanation ---------------------------------------------------------- */

/* A set of versions as specifiers: runs of listed versions become ==v,
 * >=lo, <hi (the next listed version above the run) or >=lo,<hi; several
 * runs are joined with " | ".  Empty for "any version". */
static void set_str(struct eb_buf *b, const struct package *p, const uint64_t *bits)
{
	const struct project *pr = p->proj;
	size_t n = pr ? pr->n : 0, cnt = 0, missing_i = SIZE_MAX;
	int first = 1;

	for (size_t i = 0; i < n; i++) {
		if (eb_resolver__bit_get(bits, i))
			cnt++;
		else
			missing_i = i;
	}
	if (cnt == n)
		return;
	if (cnt + 1 == n && missing_i > 0 && missing_i + 1 < n) {
		(void)eb_buf_addf(b, "!=%s", pr->vers[missing_i].raw);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t j;
		if (!eb_resolver__bit_get(bits, i)) {
			i++;
			continue;
		}
		for (j = i; j + 1 < n && eb_resolver__bit_get(bits, j + 1); j++)
			;
		if (!first)
			(void)eb_buf_adds(b, " | ");
		first = 0;
		if (i == j)
			(void)eb_buf_addf(b, "==%s", pr->vers[i].raw);
		else if (i == 0)
			(void)eb_buf_addf(b, "<%s", pr->vers[j + 1].raw);
		else if (j == n - 1)
			(void)eb_buf_addf(b, ">=%s", pr->vers[i].raw);
		else
			(void)eb_buf_addf(b, ">=%s,<%s", pr->vers[i].raw, pr->vers[j + 1].raw);
		i = j + 1;
	}
}

static void pkg_name(struct eb_buf *b, const struct eb_resolver *r, const struct package *p)
{
	(void)r;
	if (p->kind == PKG_ROOT) {
		(void)eb_buf_adds(b, "the requirements");
		return;
	}
	(void)eb_buf_adds(b, p->proj->name);
	if (p->extra)
		(void)eb_buf_addf(b, "[%s]", p->extra);
}

static void pkg_suffix(struct eb_buf *b, const struct eb_resolver *r, const struct package *p)
{
	if (p->kind == PKG_ENV && r->nenvs > 1)
		(void)eb_buf_addf(b, " (%s)", r->envs[p->env].label);
	else if (p->kind == PKG_SHARED)
		(void)eb_buf_adds(b, " (shared)");
}

/* The term as a positive statement about the versions in bits (the
 * "not selected" bit ignored). */
static void range_str(struct eb_buf *b, const struct eb_resolver *r, size_t pkg,
		      const uint64_t *bits)
{
	const struct package *p = &r->pkgs[pkg];
	pkg_name(b, r, p);
	if (p->kind != PKG_ROOT)
		set_str(b, p, bits);
	pkg_suffix(b, r, p);
}

static void term_str(struct eb_buf *b, const struct eb_resolver *r, const struct term *t,
		     int inverse)
{
	const struct package *p = &r->pkgs[t->pkg];
	int pos = eb_resolver__term_positive(p, t->bits);
	uint64_t *inv = eb_resolver__bits_dup(p, t->bits);

	eb_resolver__bits_not(p, inv);
	if (inverse)
		pos = !pos;
	if (!pos)
		(void)eb_buf_adds(b, "not ");
	range_str(b, r, t->pkg, pos == eb_resolver__term_positive(p, t->bits) ? t->bits : inv);
	free(inv);
}

/* After "x requires <dep as written>": the environment, and why the
 * range is empty when it is. */
static void dep_tail(struct eb_buf *b, const struct eb_resolver *r, const struct term *t)
{
	const struct package *p = &r->pkgs[t->pkg];

	pkg_suffix(b, r, p);
	if (p->proj->missing)
		(void)eb_buf_adds(b, ", which no index has");
	else if (eb_resolver__term_vacuous(p, t->bits))
		(void)eb_buf_adds(b, ", which matches no version");
}

static void inc_str(struct eb_buf *b, const struct eb_resolver *r, size_t id)
{
	const struct incompat *inc = &r->incs[id];
	const struct term *t = inc->terms;

	switch (inc->kind) {
	case INC_NOT_ROOT:
		(void)eb_buf_adds(b, "the requirements must be met");
		return;
	case INC_ROOT_DEP:
		(void)eb_buf_addf(b, "%s requires %s", inc->text, inc->dep);
		dep_tail(b, r, &t[1]);
		return;
	case INC_DEP:
		range_str(b, r, t[0].pkg, t[0].bits);
		(void)eb_buf_addf(b, " depends on %s", inc->text);
		dep_tail(b, r, &t[1]);
		return;
	case INC_EXTRA_BASE: {
		uint64_t *inv = eb_resolver__bits_dup(&r->pkgs[t[1].pkg], t[1].bits);
		eb_resolver__bits_not(&r->pkgs[t[1].pkg], inv);
		range_str(b, r, t[0].pkg, t[0].bits);
		(void)eb_buf_adds(b, " depends on ");
		range_str(b, r, t[1].pkg, inv);
		free(inv);
		return;
	}
	case INC_PARITY:
		range_str(b, r, t[0].pkg, t[0].bits);
		(void)eb_buf_adds(b, " must be the version every target uses");
		return;
	case INC_NO_VERSIONS:
		if (r->pkgs[t[0].pkg].proj->missing) {
			(void)eb_buf_adds(b, "no index has a project named ");
			pkg_name(b, r, &r->pkgs[t[0].pkg]);
		} else {
			(void)eb_buf_adds(b, "there is no version of ");
			range_str(b, r, t[0].pkg, t[0].bits);
		}
		return;
	case INC_UNAVAILABLE:
		range_str(b, r, t[0].pkg, t[0].bits);
		(void)eb_buf_addf(b, " %s", inc->text);
		return;
	case INC_CONSTRAINT:
		(void)eb_buf_addf(b, "%s constrains %s", inc->text, inc->dep);
		pkg_suffix(b, r, &r->pkgs[t[0].pkg]);
		return;
	case INC_DERIVED:
		break;
	}
	if (inc->n == 0 || (inc->n == 1 && r->pkgs[t[0].pkg].kind == PKG_ROOT)) {
		(void)eb_buf_adds(b, "the requirements are unsatisfiable");
		return;
	}
	if (inc->n == 1) {
		int pos = eb_resolver__term_positive(&r->pkgs[t[0].pkg], t[0].bits);
		term_str(b, r, &t[0], !pos);
		(void)eb_buf_adds(b, pos ? " is forbidden" : " is required");
		return;
	}
	if (inc->n == 2) {
		int p0 = eb_resolver__term_positive(&r->pkgs[t[0].pkg], t[0].bits);
		int p1 = eb_resolver__term_positive(&r->pkgs[t[1].pkg], t[1].bits);
		if (p0 && p1) {
			term_str(b, r, &t[0], 0);
			(void)eb_buf_adds(b, " and ");
			term_str(b, r, &t[1], 0);
			(void)eb_buf_adds(b, " are incompatible");
			return;
		}
		if (p0 != p1) {
			const struct term *pt = p0 ? &t[0] : &t[1], *nt = p0 ? &t[1] : &t[0];
			term_str(b, r, pt, 0);
			(void)eb_buf_adds(b, " requires ");
			term_str(b, r, nt, 1);
			return;
		}
		(void)eb_buf_adds(b, "either ");
		term_str(b, r, &t[0], 1);
		(void)eb_buf_adds(b, " or ");
		term_str(b, r, &t[1], 1);
		return;
	}
	{
		int npos = 0, nneg = 0, first;
		for (size_t i = 0; i < inc->n; i++) {
			if (eb_resolver__term_positive(&r->pkgs[t[i].pkg], t[i].bits))
				npos++;
			else
				nneg++;
		}
		if (npos && nneg)
			(void)eb_buf_adds(b, "if ");
		else if (npos)
			(void)eb_buf_adds(b, "one of ");
		else
			(void)eb_buf_adds(b, "one of ");
		first = 1;
		for (size_t i = 0; i < inc->n; i++) {
			if (!eb_resolver__term_positive(&r->pkgs[t[i].pkg], t[i].bits))
				continue;
			if (!first)
				(void)eb_buf_adds(b, npos && nneg ? " and " : ", ");
			first = 0;
			term_str(b, r, &t[i], 0);
		}
		if (npos && nneg)
			(void)eb_buf_adds(b, " then ");
		first = 1;
		for (size_t i = 0; i < inc->n; i++) {
			if (eb_resolver__term_positive(&r->pkgs[t[i].pkg], t[i].bits))
				continue;
			if (!first)
				(void)eb_buf_adds(b, npos && nneg ? " or " : ", ");
			first = 0;
			term_str(b, r, &t[i], 1);
		}
		if (npos && !nneg)
			(void)eb_buf_adds(b, " must be false");
		else if (!npos)
			(void)eb_buf_adds(b, " must be true");
	}
}

struct report {
	struct eb_resolver *r;
	struct eb_buf out;
	int nlines;
};

static int is_derived(const struct eb_resolver *r, size_t id)
{
	return r->incs[id].kind == INC_DERIVED;
}

static void count_derivations(struct eb_resolver *r, size_t id)
{
	struct incompat *inc = &r->incs[id];

	if (inc->derivations++ > 0)
		return;
	if (is_derived(r, id)) {
		count_derivations(r, inc->cause1);
		count_derivations(r, inc->cause2);
	}
}

static void and_str(struct eb_buf *b, struct eb_resolver *r, size_t a, int aline, size_t c,
		    int cline)
{
	inc_str(b, r, a);
	if (aline)
		(void)eb_buf_addf(b, " (%d)", aline);
	(void)eb_buf_adds(b, " and ");
	inc_str(b, r, c);
	if (cline)
		(void)eb_buf_addf(b, " (%d)", cline);
}

static void write_line(struct report *rep, size_t id, struct eb_buf *msg, int numbered)
{
	if (numbered) {
		rep->r->incs[id].line = ++rep->nlines;
		(void)eb_buf_addf(&rep->out, "%s (%d)\n", msg->ptr, rep->nlines);
	} else {
		(void)eb_buf_addf(&rep->out, "%s\n", msg->ptr);
	}
	eb_buf_release(msg);
}

static void visit(struct report *rep, size_t id, int conclusion)
{
	struct eb_resolver *r = rep->r;
	struct incompat *inc = &r->incs[id];
	int numbered = conclusion || inc->derivations > 1;
	const char *conj = conclusion ? "So," : "And";
	size_t c1 = inc->cause1, c2 = inc->cause2;
	struct eb_buf m, self;

	eb_buf_init(&m, 0);
	eb_buf_init(&self, 0);
	inc_str(&self, r, id);
	if (is_derived(r, c1) && is_derived(r, c2)) {
		int l1 = r->incs[c1].line, l2 = r->incs[c2].line;
		if (l1 && l2) {
			(void)eb_buf_adds(&m, "Because ");
			and_str(&m, r, c1, l1, c2, l2);
			(void)eb_buf_addf(&m, ", %s.", self.ptr);
		} else if (l1 || l2) {
			size_t with = l1 ? c1 : c2, without = l1 ? c2 : c1;
			visit(rep, without, 0);
			(void)eb_buf_addf(&m, "%s because ", conj);
			inc_str(&m, r, with);
			(void)eb_buf_addf(&m, " (%d), %s.", r->incs[with].line, self.ptr);
		} else {
			int single1 = !is_derived(r, r->incs[c1].cause1) &&
				      !is_derived(r, r->incs[c1].cause2);
			int single2 = !is_derived(r, r->incs[c2].cause1) &&
				      !is_derived(r, r->incs[c2].cause2);
			if (single1 || single2) {
				size_t first = single2 ? c1 : c2, second = single2 ? c2 : c1;
				visit(rep, first, 0);
				visit(rep, second, 0);
				(void)eb_buf_addf(&m, "Thus, %s.", self.ptr);
			} else {
				visit(rep, c1, 1);
				(void)eb_buf_adds(&rep->out, "\n");
				visit(rep, c2, 0);
				(void)eb_buf_addf(&m, "%s because ", conj);
				inc_str(&m, r, c1);
				(void)eb_buf_addf(&m, " (%d), %s.", r->incs[c1].line, self.ptr);
			}
		}
	} else if (is_derived(r, c1) || is_derived(r, c2)) {
		size_t derived = is_derived(r, c1) ? c1 : c2, ext = is_derived(r, c1) ? c2 : c1;
		const struct incompat *d = &r->incs[derived];
		if (d->line) {
			(void)eb_buf_adds(&m, "Because ");
			and_str(&m, r, ext, 0, derived, d->line);
			(void)eb_buf_addf(&m, ", %s.", self.ptr);
		} else if (d->derivations <= 1 && (is_derived(r, d->cause1) != is_derived(r, d->cause2)) &&
			   !r->incs[is_derived(r, d->cause1) ? d->cause1 : d->cause2].line) {
			size_t cd = is_derived(r, d->cause1) ? d->cause1 : d->cause2;
			size_t ce = is_derived(r, d->cause1) ? d->cause2 : d->cause1;
			visit(rep, cd, 0);
			(void)eb_buf_addf(&m, "%s because ", conj);
			and_str(&m, r, ce, 0, ext, 0);
			(void)eb_buf_addf(&m, ", %s.", self.ptr);
		} else {
			visit(rep, derived, 0);
			(void)eb_buf_addf(&m, "%s because ", conj);
			inc_str(&m, r, ext);
			(void)eb_buf_addf(&m, ", %s.", self.ptr);
		}
	} else {
		(void)eb_buf_adds(&m, "Because ");
		and_str(&m, r, c1, 0, c2, 0);
		(void)eb_buf_addf(&m, ", %s.", self.ptr);
	}
	eb_buf_release(&self);
	write_line(rep, id, &m, numbered);
}

void eb_resolver__explain(struct eb_resolver *r, size_t failure)
{
	struct report rep = { r, EB_BUF_INIT, 0 };

	eb_buf_init(&rep.out, 0);
	if (!is_derived(r, failure)) {
		(void)eb_buf_adds(&rep.out, "Because ");
		inc_str(&rep.out, r, failure);
		(void)eb_buf_adds(&rep.out, ", the requirements are unsatisfiable.\n");
	} else {
		count_derivations(r, failure);
		visit(&rep, failure, 1);
	}
	free(r->explanation);
	r->explanation = eb_buf_detach(&rep.out, NULL);
	if (rep.nlines == 1) {
		/* One numbered line is never referred to: drop its number. */
		char *s = strstr(r->explanation, " (1)\n");
		if (s)
			memmove(s, s + 4, strlen(s + 4) + 1);
	}
}
