/*
 * control.c - deb822 paragraph reader (see control.h).  The rules are
 * dpkg's (lib/dpkg/parse.c): field names are printable ASCII without ':'
 * and never start with '-' or '#', a field appears once per paragraph, a
 * continuation line needs a field before it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "debian/control.h"
#include "util/alloc.h"
#include "util/buf.h"

void eb_deb822_init(struct eb_deb822 *r, const char *data, size_t len, const char *file)
{
	r->p = data;
	r->end = data + len;
	r->file = file;
	r->line = 0;
}

void eb_deb822_para_release(struct eb_deb822_para *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->fields[i].name);
		free(p->fields[i].value);
	}
	free(p->fields);
	p->fields = NULL;
	p->n = p->cap = 0;
	p->line = 0;
}

const struct eb_deb822_field *eb_deb822_field(const struct eb_deb822_para *p,
					      const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcasecmp(p->fields[i].name, name))
			return &p->fields[i];
	return NULL;
}

const char *eb_deb822_get(const struct eb_deb822_para *p, const char *name)
{
	const struct eb_deb822_field *f = eb_deb822_field(p, name);
	return f ? f->value : NULL;
}

static int is_blank(const char *s, const char *e)
{
	for (; s < e; s++)
		if (*s != ' ' && *s != '\t' && *s != '\r')
			return 0;
	return 1;
}

/* end of the text on a line, trailing spaces, tabs and CR removed */
static const char *rtrim(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	return e;
}

static int fail(struct eb_deb822 *r, struct eb_error **err, const char *what)
{
	if (r->file)
		return eb_error_set_at(err, EB_EINVALID, r->file, r->line, 1, "%s", what);
	return eb_error_set(err, EB_EINVALID, "line %u: %s", r->line, what);
}

/* move the value collected in `val` into the last field */
static void close_field(struct eb_deb822_para *para, struct eb_buf *val)
{
	if (para->n && !para->fields[para->n - 1].value)
		para->fields[para->n - 1].value = eb_buf_detach(val, NULL);
}

int eb_deb822_next(struct eb_deb822 *r, struct eb_deb822_para *out, struct eb_error **err)
{
	struct eb_deb822_para para = EB_DEB822_PARA_INIT;
	struct eb_buf val;
	int rc;

	eb_deb822_para_release(out);
	eb_buf_init(&val, 0);
	while (r->p < r->end) {
		const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
		const char *s = r->p, *e = nl ? nl : r->end;

		r->p = nl ? nl + 1 : r->end;
		r->line++;
		if (memchr(s, '\0', (size_t)(e - s))) {
			rc = fail(r, err, "NUL byte in control data");
			goto fail;
		}
		if (is_blank(s, e)) {
			if (para.n)
				break;
			continue;
		}
		if (*s == ' ' || *s == '\t') {
			if (!para.n) {
				rc = fail(r, err, "continuation line without a field");
				goto fail;
			}
			/* the open field's value grows in `val` (linear, not
			 * quadratic, for the long hash lists of a Release) */
			e = rtrim(s, e);
			if (eb_buf_addc(&val, '\n') < 0 || eb_buf_add(&val, s, (size_t)(e - s)) < 0) {
				rc = fail(r, err, "field too long");
				goto fail;
			}
			continue;
		}
		if (*s == '#')
			continue; /* deb822 comment (sources.list.d, debian/control) */
		const char *colon = memchr(s, ':', (size_t)(e - s));
		if (!colon || colon == s) {
			rc = fail(r, err, colon ? "empty field name" : "line is not 'Name: value'");
			goto fail;
		}
		if (*s == '-') {
			rc = fail(r, err, "field name starts with '-'");
			goto fail;
		}
		for (const char *c = s; c < colon; c++)
			if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 127) {
				rc = fail(r, err, "invalid character in field name");
				goto fail;
			}
		char *name = eb_xstrndup(s, (size_t)(colon - s));
		if (eb_deb822_field(&para, name)) {
			free(name);
			rc = fail(r, err, "duplicate field in paragraph");
			goto fail;
		}
		const char *v = colon + 1;
		while (v < e && (*v == ' ' || *v == '\t'))
			v++;
		e = rtrim(v, e);
		close_field(&para, &val);
		EB_ALLOC_GROW(para.fields, para.n + 1, para.cap);
		para.fields[para.n].name = name;
		para.fields[para.n].value = NULL;
		(void)eb_buf_add(&val, v, (size_t)(e - v));
		para.fields[para.n].line = r->line;
		if (!para.n)
			para.line = r->line;
		para.n++;
	}
	close_field(&para, &val);
	eb_buf_release(&val);
	*out = para;
	return para.n ? 1 : 0;
fail:
	close_field(&para, &val);
	eb_buf_release(&val);
	eb_deb822_para_release(&para);
	return rc;
}
