/*
 * depends.c - relationship field parser (see depends.h), after dpkg's
 * lib/dpkg/fields.c f_dependency(): whitespace is free between tokens,
 * names are lower-case package names, versions are taken up to ')'.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "debian/depends.h"
#include "util/alloc.h"
#include "util/buf.h"

int eb_debian_name_valid(const char *name, size_t len)
{
	if (len < 2)
		return 0;
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (size_t i = 1; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' ||
		      c == '.'))
			return 0;
	}
	return 1;
}

static void dep_release(struct eb_debdep *d)
{
	free(d->name);
	free(d->archq);
	free(d->version);
}

void eb_debdeps_release(struct eb_debdeps *d)
{
	for (size_t i = 0; i < d->n; i++) {
		for (size_t j = 0; j < d->groups[i].n; j++)
			dep_release(&d->groups[i].alt[j]);
		free(d->groups[i].alt);
	}
	free(d->groups);
	d->groups = NULL;
	d->n = 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int bad(struct eb_error **err, const char *s, const char *at, const char *what)
{
	return eb_error_set_at(err, EB_EINVALID, NULL, 0, (unsigned)(at - s) + 1,
			       "invalid relationship field: %s", what);
}

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '-' || c == '.';
}

/* one alternative at *pp; advances *pp past it and trailing whitespace */
static int parse_alt(struct eb_debdep *d, const char *s, const char **pp, struct eb_error **err)
{
	const char *p = *pp, *start;

	memset(d, 0, sizeof(*d));
	start = p;
	while (name_char(*p))
		p++;
	if (p == start)
		return bad(err, s, p, "expected a package name");
	if (!eb_debian_name_valid(start, (size_t)(p - start)))
		return bad(err, s, start, "invalid package name");
	d->name = eb_xstrndup(start, (size_t)(p - start));
	if (*p == ':') {
		start = ++p;
		while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')
			p++;
		if (p == start)
			return bad(err, s, p, "empty architecture qualifier");
		d->archq = eb_xstrndup(start, (size_t)(p - start));
	}
	while (is_space(*p))
		p++;
	if (*p == '(') {
		p++;
		while (is_space(*p))
			p++;
		if (p[0] == '<' && p[1] == '<')
			d->rel = EB_REL_LT, p += 2;
		else if (p[0] == '<' && p[1] == '=')
			d->rel = EB_REL_LE, p += 2;
		else if (p[0] == '>' && p[1] == '>')
			d->rel = EB_REL_GT, p += 2;
		else if (p[0] == '>' && p[1] == '=')
			d->rel = EB_REL_GE, p += 2;
		else if (p[0] == '=')
			d->rel = EB_REL_EQ, p += 1;
		else if (p[0] == '<') /* obsolete: dpkg reads '<' as '<=' */
			d->rel = EB_REL_LE, p += 1;
		else if (p[0] == '>')
			d->rel = EB_REL_GE, p += 1;
		else
			return bad(err, s, p, "expected a relation (<< <= = >= >>)");
		while (is_space(*p))
			p++;
		start = p;
		while (*p && *p != ')' && !is_space(*p))
			p++;
		if (p == start)
			return bad(err, s, p, "missing version");
		d->version = eb_xstrndup(start, (size_t)(p - start));
		struct eb_debver v;
		if (eb_debver_parse(&v, d->version, NULL) < 0)
			return bad(err, s, start, "invalid version");
		eb_debver_release(&v);
		while (is_space(*p))
			p++;
		if (*p != ')')
			return bad(err, s, p, "expected ')'");
		p++;
		while (is_space(*p))
			p++;
	}
	if (*p == '[')
		return bad(err, s, p, "architecture restrictions belong to source packages");
	if (*p == '<')
		return bad(err, s, p, "build profiles belong to source packages");
	*pp = p;
	return 0;
}

int eb_debdeps_parse(struct eb_debdeps *out, const char *s, int allow_alternatives,
		     struct eb_error **err)
{
	struct eb_debdeps d = EB_DEBDEPS_INIT;
	size_t gcap = 0;
	const char *p = s ? s : "";
	int rc;

	*out = d;
	while (is_space(*p))
		p++;
	if (!*p)
		return 0;
	for (;;) {
		struct eb_debdep_group g = { NULL, 0 };
		size_t acap = 0;

		for (;;) {
			while (is_space(*p))
				p++;
			EB_ALLOC_GROW(g.alt, g.n + 1, acap);
			rc = parse_alt(&g.alt[g.n], s, &p, err);
			g.n++;
			if (rc < 0) {
				EB_ALLOC_GROW(d.groups, d.n + 1, gcap);
				d.groups[d.n++] = g;
				goto fail;
			}
			if (*p != '|')
				break;
			if (!allow_alternatives) {
				EB_ALLOC_GROW(d.groups, d.n + 1, gcap);
				d.groups[d.n++] = g;
				rc = bad(err, s, p, "alternatives are not allowed in this field");
				goto fail;
			}
			p++;
		}
		EB_ALLOC_GROW(d.groups, d.n + 1, gcap);
		d.groups[d.n++] = g;
		if (!*p)
			break;
		if (*p != ',') {
			rc = bad(err, s, p, "expected ',' or '|'");
			goto fail;
		}
		p++;
		while (is_space(*p))
			p++;
		if (!*p)
			break; /* dpkg tolerates a trailing comma */
	}
	*out = d;
	return 0;
fail:
	eb_debdeps_release(&d);
	return rc;
}

char *eb_debdep_to_string(const struct eb_debdep *d)
{
	if (d->rel == EB_REL_ANY)
		return eb_xasprintf("%s%s%s", d->name, d->archq ? ":" : "", d->archq ? d->archq : "");
	return eb_xasprintf("%s%s%s (%s %s)", d->name, d->archq ? ":" : "",
			    d->archq ? d->archq : "", eb_debrel_str(d->rel), d->version);
}

char *eb_debdeps_to_string(const struct eb_debdeps *d)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < d->n; i++) {
		if (i)
			(void)eb_buf_adds(&b, ", ");
		for (size_t j = 0; j < d->groups[i].n; j++) {
			char *one = eb_debdep_to_string(&d->groups[i].alt[j]);
			if (j)
				(void)eb_buf_adds(&b, " | ");
			(void)eb_buf_adds(&b, one);
			free(one);
		}
	}
	return eb_buf_detach(&b, NULL);
}
