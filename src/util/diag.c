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

void eb_diag_list_merge(struct eb_diag_list *dst, const struct eb_diag_list *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct eb_diag *s = &src->items[i];
		struct eb_diag *d = eb_diag_add(dst, s->severity, s->file, s->line, s->col, s->rule,
						"%s", s->msg);
		if (s->hint)
			eb_diag_hint(d, "%s", s->hint);
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
	/* drop exact duplicates (a file included twice reports once) */
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (w > 0 && cmp(&l->items[w - 1], &l->items[i]) == 0 &&
		    strcmp(l->items[w - 1].rule, l->items[i].rule) == 0 &&
		    strcmp(l->items[w - 1].msg, l->items[i].msg) == 0) {
			diag_free(&l->items[i]);
			continue;
		}
		l->items[w++] = l->items[i];
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
