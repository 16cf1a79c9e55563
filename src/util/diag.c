/*
 * diag.c - the findings list of diag.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

struct eb_diag *eb_diag_add(struct eb_diag_list *l, enum eb_severity sev, const char *file,
			    unsigned line, unsigned col, const char *rule, const char *fmt, ...)
{
	struct eb_diag *d;
	va_list ap;

	EB_ALLOC_GROW(l->items, l->n + 1, l->cap);
	d = &l->items[l->n++];
	memset(d, 0, sizeof(*d));
	d->severity = sev;
	d->file = eb_xstrdup(file ? file : "");
	d->line = line;
	d->col = col;
	d->rule = eb_xstrdup(rule ? rule : "");
	va_start(ap, fmt);
	d->msg = vfmt(fmt, ap);
	va_end(ap);
	return d;
}

void eb_diag_hint(struct eb_diag *d, const char *fmt, ...)
{
	va_list ap;

	free(d->hint);
	va_start(ap, fmt);
	d->hint = vfmt(fmt, ap);
	va_end(ap);
}

void eb_diag_target(struct eb_diag *d, const char *target)
{
	for (size_t i = 0; i < d->ntargets; i++)
		if (strcmp(d->targets[i], target) == 0)
			return;
	d->targets = eb_xreallocarray(d->targets, d->ntargets + 1, sizeof(*d->targets));
	d->targets[d->ntargets++] = eb_xstrdup(target);
}

void eb_diag_list_merge(struct eb_diag_list *dst, const struct eb_diag_list *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct eb_diag *s = &src->items[i];
		struct eb_diag *d = eb_diag_add(dst, s->severity, s->file, s->line, s->col, s->rule,
						"%s", s->msg);
		if (s->hint)
			eb_diag_hint(d, "%s", s->hint);
		for (size_t k = 0; k < s->ntargets; k++)
			eb_diag_target(d, s->targets[k]);
	}
}

static int cmp(const struct eb_diag *a, const struct eb_diag *b)
{
	int r = strcmp(a->file, b->file);
	if (r)
		return r;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return 0;
}

static void diag_free(struct eb_diag *d)
{
	free(d->file);
	free(d->rule);
	free(d->msg);
	free(d->hint);
	for (size_t i = 0; i < d->ntargets; i++)
		free(d->targets[i]);
	free(d->targets);
}

/* The same finding but perhaps for its targets. */
static int same_finding(const struct eb_diag *a, const struct eb_diag *b)
{
	return cmp(a, b) == 0 && a->severity == b->severity && strcmp(a->rule, b->rule) == 0 &&
	       strcmp(a->msg, b->msg) == 0 &&
	       ((!a->hint && !b->hint) || (a->hint && b->hint && strcmp(a->hint, b->hint) == 0)) &&
	       (a->ntargets > 0) == (b->ntargets > 0);
}

void eb_diag_list_sort(struct eb_diag_list *l)
{
	/* insertion sort keeps equal positions in the order they were found
	 * (lists are short and mostly sorted already) */
	for (size_t i = 1; i < l->n; i++) {
		struct eb_diag t = l->items[i];
		size_t j = i;
		while (j > 0 && cmp(&l->items[j - 1], &t) > 0) {
			l->items[j] = l->items[j - 1];
			j--;
		}
		l->items[j] = t;
	}
	/* drop exact duplicates (a file included twice reports once), and
	 * fold a finding made for several targets into one naming them all;
	 * equal positions are adjacent now, so only their run is searched */
	size_t w = 0, run = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct eb_diag *d = &l->items[i];
		size_t k;

		if (w > 0 && cmp(&l->items[w - 1], d) != 0)
			run = w;
		for (k = run; k < w; k++)
			if (same_finding(&l->items[k], d) ||
			    (cmp(&l->items[k], d) == 0 && strcmp(l->items[k].rule, d->rule) == 0 &&
			     strcmp(l->items[k].msg, d->msg) == 0 && !d->ntargets &&
			     !l->items[k].ntargets))
				break;
		if (k < w) {
			for (size_t t = 0; t < d->ntargets; t++)
				eb_diag_target(&l->items[k], d->targets[t]);
			diag_free(d);
			continue;
		}
		l->items[w++] = *d;
	}
	l->n = w;
}

size_t eb_diag_list_count(const struct eb_diag_list *l, enum eb_severity sev)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].severity == sev)
			n++;
	return n;
}

void eb_diag_list_release(struct eb_diag_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		diag_free(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = l->cap = 0;
}
