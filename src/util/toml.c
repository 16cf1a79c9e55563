/*
 * toml.c - TOML 1.0 into jansson, with positions.
 *
 * A hand-written recursive-descent reader over the whole buffer.  The rules
 * about defining tables follow tomli's model: a table named by a [header]
 * is "explicit" and cannot be named again; tables made by dotted keys can be
 * extended only within the section (header) that made them; inline tables
 * and arrays written as values are frozen, with everything under them.
 * Those flags live in the side table next to each container's position.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/nodetab.h"
#include "util/toml.h"

#define MAX_DEPTH 128

enum {
	F_EXPLICIT = 1, /* named by a [header] */
	F_DOTTED = 2,   /* made by a dotted key, in section `section` */
	F_FROZEN = 4,   /* inline table or static array */
	F_AOT = 8,      /* array of tables ([[header]]) */
};

/* What the side table (nodetab.h) keeps for each value, by entry id. */
struct tinfo {
	struct eb_toml_pos pos;
	unsigned flags;
	unsigned section;
};

struct eb_toml_doc {
	json_t *root;
	struct eb_nodetab tab;
	struct tinfo *info; /* by entry id */
	size_t infocap;
};

struct tp {
	struct eb_toml_doc *doc;
	const char *file;
	const char *p, *end, *line_start;
	unsigned line;
	unsigned section;
	struct eb_error **err;
};

struct keypart {
	char *s;
	unsigned line, col;
};

struct key {
	struct keypart *v;
	size_t n, cap;
};

/* ---- side table ---------------------------------------------------------- */

/* Tables and arrays are found by node too (their flags and where they were
 * first named); scalars share jansson's singletons, so only by slot. */
static void add_entry(struct eb_toml_doc *doc, const json_t *parent, const char *key,
		      size_t index, const json_t *node, const struct eb_toml_pos *pos)
{
	size_t id = eb_nodetab_add(&doc->tab, parent, key, index);

	EB_ALLOC_GROW(doc->info, id + 1, doc->infocap);
	memset(&doc->info[id], 0, sizeof(doc->info[id]));
	doc->info[id].pos = *pos;
	eb_nodetab_commit(&doc->tab, id, node,
			  pos->type == EB_TOML_TABLE || pos->type == EB_TOML_ARRAY);
}

static struct tinfo *find_node(const struct eb_toml_doc *doc, const json_t *node)
{
	size_t id = eb_nodetab_find_node(&doc->tab, node);

	return id ? &doc->info[id - 1] : NULL;
}

/* ---- lexing helpers ------------------------------------------------------- */

static unsigned col_of(const struct tp *t, const char *at)
{
	return (unsigned)(at - t->line_start) + 1;
}

static int fail_at(struct tp *t, const char *at, const char *fmt, ...) EB_PRINTF(3, 4);
static int fail_at(struct tp *t, const char *at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return eb_error_set_at(t->err, EB_EINVALID, t->file, t->line, col_of(t, at), "%s", msg);
}

static int fail_key(struct tp *t, const struct keypart *k, const char *fmt, ...) EB_PRINTF(3, 4);
static int fail_key(struct tp *t, const struct keypart *k, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return eb_error_set_at(t->err, EB_EINVALID, t->file, k->line, k->col, "%s", msg);
}

static void skip_ws(struct tp *t)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

static int at_newline(const struct tp *t)
{
	return t->p < t->end &&
	       (*t->p == '\n' || (*t->p == '\r' && t->p + 1 < t->end && t->p[1] == '\n'));
}

static void take_newline(struct tp *t)
{
	t->p += *t->p == '\r' ? 2 : 1;
	t->line++;
	t->line_start = t->p;
}

/* A comment from '#' to the end of the line: control characters other
 * than tab are not allowed in it. */
static int skip_comment(struct tp *t)
{
	if (t->p >= t->end || *t->p != '#')
		return 0;
	for (t->p++; t->p < t->end && *t->p != '\n'; t->p++) {
		unsigned char c = (unsigned char)*t->p;
		if (c == '\r' && t->p + 1 < t->end && t->p[1] == '\n')
			break;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail_at(t, t->p, "control character U+%04X in a comment", c);
	}
	return 0;
}

/* Whitespace, newlines and comments (inside arrays). */
static int skip_ws_nl(struct tp *t)
{
	for (;;) {
		skip_ws(t);
		if (t->p < t->end && *t->p == '#') {
			if (skip_comment(t) < 0)
				return -1;
		} else if (at_newline(t)) {
			take_newline(t);
		} else {
			return 0;
		}
	}
}

/* After a key/value pair or a header: only a comment may follow. */
static int end_of_line(struct tp *t)
{
	skip_ws(t);
	if (skip_comment(t) < 0)
		return -1;
	if (t->p >= t->end)
		return 0;
	if (at_newline(t)) {
		take_newline(t);
		return 0;
	}
	if (*t->p == '\r')
		return fail_at(t, t->p, "carriage return without a line feed");
	return fail_at(t, t->p, "expected the end of the line, found '%c'", *t->p);
}

static int utf8_check(const unsigned char *s, size_t len, size_t *bad)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i], n, cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			goto bad;
		for (unsigned k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				goto bad;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			goto bad;
		i += n + 1;
	}
	return 0;
bad:
	*bad = i;
	return -1;
}

static void put_utf8(struct eb_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	}
	eb_buf_add(b, u, n);
}

/* ---- strings -------------------------------------------------------------- */

static int is_ctrl(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

static int escape(struct tp *t, struct eb_buf *b)
{
	const char *at = t->p; /* the backslash */
	char c;
	unsigned n = 0;
	unsigned long cp = 0;

	if (t->p + 1 >= t->end)
		return fail_at(t, at, "unterminated string");
	c = t->p[1];
	t->p += 2;
	switch (c) {
	case 'b': eb_buf_addc(b, '\b'); return 0;
	case 't': eb_buf_addc(b, '\t'); return 0;
	case 'n': eb_buf_addc(b, '\n'); return 0;
	case 'f': eb_buf_addc(b, '\f'); return 0;
	case 'r': eb_buf_addc(b, '\r'); return 0;
	case '"': eb_buf_addc(b, '"'); return 0;
	case '\\': eb_buf_addc(b, '\\'); return 0;
	case 'u': n = 4; break;
	case 'U': n = 8; break;
	default:
		return fail_at(t, at, "invalid escape sequence '\\%c'", c > 0x20 && c < 0x7f ? c : '?');
	}
	for (unsigned i = 0; i < n; i++) {
		char h = t->p < t->end ? *t->p : 0;
		int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 :
			h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
		if (v < 0)
			return fail_at(t, at, "\\%c needs %u hexadecimal digits", c, n);
		cp = cp * 16 + (unsigned)v;
		t->p++;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return fail_at(t, at, "\\%c escape is not a Unicode scalar value", c);
	put_utf8(b, cp);
	return 0;
}

/* The string at t->p (a quote); its value into b. */
static int string(struct tp *t, struct eb_buf *b)
{
	const char *start = t->p;
	char q = *t->p;
	int multi = t->end - t->p >= 3 && t->p[1] == q && t->p[2] == q;

	if (!multi) {
		for (t->p++;; ) {
			unsigned char c;
			if (t->p >= t->end || *t->p == '\n' || *t->p == '\r')
				return fail_at(t, start, "unterminated string");
			c = (unsigned char)*t->p;
			if (c == (unsigned char)q) {
				t->p++;
				return 0;
			}
			if (q == '"' && c == '\\') {
				if (escape(t, b) < 0)
					return -1;
				continue;
			}
			if (is_ctrl(c))
				return fail_at(t, t->p, "control character U+%04X in a string", c);
			eb_buf_addc(b, (char)c);
			t->p++;
		}
	}
	t->p += 3;
	if (at_newline(t))
		take_newline(t);
	for (;;) {
		unsigned char c;
		if (t->p >= t->end)
			return fail_at(t, start, "unterminated multi-line string");
		c = (unsigned char)*t->p;
		if (c == (unsigned char)q) {
			size_t run = 0;
			while (t->p + run < t->end && t->p[run] == q)
				run++;
			if (run >= 3) {
				if (run > 5)
					return fail_at(t, t->p, "too many quotes at the end of a string");
				for (size_t i = 0; i < run - 3; i++)
					eb_buf_addc(b, q);
				t->p += run;
				return 0;
			}
			eb_buf_add(b, t->p, run);
			t->p += run;
			continue;
		}
		if (at_newline(t)) {
			eb_buf_addc(b, '\n');
			take_newline(t);
			continue;
		}
		if (q == '"' && c == '\\') {
			const char *s = t->p + 1;
			while (s < t->end && (*s == ' ' || *s == '\t'))
				s++;
			if (s < t->end && (*s == '\n' || (*s == '\r' && s + 1 < t->end && s[1] == '\n'))) {
				/* line-ending backslash: drop whitespace up to the
				 * next non-whitespace character */
				t->p = s;
				for (;;) {
					skip_ws(t);
					if (!at_newline(t))
						break;
					take_newline(t);
				}
				continue;
			}
			if (escape(t, b) < 0)
				return -1;
			continue;
		}
		if (is_ctrl(c))
			return fail_at(t, t->p, "control character U+%04X in a string", c);
		eb_buf_addc(b, (char)c);
		t->p++;
	}
}

/* ---- keys ----------------------------------------------------------------- */

static int is_bare(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static void key_release(struct key *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].s);
	free(k->v);
	memset(k, 0, sizeof(*k));
}

static int parse_key(struct tp *t, struct key *k)
{
	for (;;) {
		struct keypart kp;
		skip_ws(t);
		kp.line = t->line;
		kp.col = col_of(t, t->p);
		if (t->p < t->end && (*t->p == '"' || *t->p == '\'')) {
			struct eb_buf b;
			eb_buf_init(&b, 0);
			if (t->end - t->p >= 3 && t->p[1] == *t->p && t->p[2] == *t->p) {
				eb_buf_release(&b);
				return fail_at(t, t->p, "a multi-line string cannot be a key");
			}
			if (string(t, &b) < 0) {
				eb_buf_release(&b);
				return -1;
			}
			if (memchr(b.ptr, '\0', b.len)) {
				eb_buf_release(&b);
				return fail_at(t, t->p, "a key containing U+0000 is not supported");
			}
			kp.s = eb_xstrndup(b.ptr, b.len);
			eb_buf_release(&b);
		} else {
			const char *s = t->p;
			while (t->p < t->end && is_bare(*t->p))
				t->p++;
			if (t->p == s) {
				if (t->p >= t->end || at_newline(t))
					return fail_at(t, t->p, "expected a key");
				return fail_at(t, t->p, "invalid character '%c' in a key",
					       (unsigned char)*t->p >= 0x20 && *t->p != 0x7f ? *t->p : '?');
			}
			kp.s = eb_xstrndup(s, (size_t)(t->p - s));
		}
		EB_ALLOC_GROW(k->v, k->n + 1, k->cap);
		k->v[k->n++] = kp;
		skip_ws(t);
		if (t->p < t->end && *t->p == '.') {
			t->p++;
			continue;
		}
		return 0;
	}
}

/* ---- numbers and date-times ------------------------------------------------ */

static int digits_ok(const char *s, size_t n, int (*isdig)(char))
{
	/* digits with single underscores between them */
	if (!n || !isdig(s[0]) || !isdig(s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_') {
			if (!isdig(s[i + 1]) || !isdig(s[i - 1]))
				return 0;
		} else if (!isdig(s[i])) {
			return 0;
		}
	}
	return 1;
}

static int isdec(char c) { return c >= '0' && c <= '9'; }
static int ishex(char c)
{
	return isdec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int isoct(char c) { return c >= '0' && c <= '7'; }
static int isbin(char c) { return c == '0' || c == '1'; }

static char *strip_underscores(const char *s, size_t n)
{
	char *o = eb_xmalloc(n + 1), *q = o;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '_')
			*q++ = s[i];
	*q = '\0';
	return o;
}

static int two(const char *s, int *v)
{
	if (!isdec(s[0]) || !isdec(s[1]))
		return 0;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 1;
}

/* Length of a valid HH:MM:SS(.frac)? at s, or 0. */
static size_t time_len(const char *s, size_t n)
{
	int h, m, sec;
	size_t i = 8;

	if (n < 8 || !two(s, &h) || s[2] != ':' || !two(s + 3, &m) || s[5] != ':' ||
	    !two(s + 6, &sec))
		return 0;
	if (h > 23 || m > 59 || sec > 60)
		return 0;
	if (i < n && s[i] == '.') {
		i++;
		if (i >= n || !isdec(s[i]))
			return 0;
		while (i < n && isdec(s[i]))
			i++;
	}
	return i;
}

/* Classify a date-time token; 0 when it is not one. */
static enum eb_toml_type datetime(const char *s, size_t n, int *bad)
{
	int y, mo, d, oh, om;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	size_t i;

	*bad = 0;
	if (n >= 3 && isdec(s[0]) && isdec(s[1]) && s[2] == ':') {
		i = time_len(s, n);
		if (!i || i != n)
			*bad = 1;
		return EB_TOML_TIME_LOCAL;
	}
	if (!(n >= 5 && isdec(s[0]) && isdec(s[1]) && isdec(s[2]) && isdec(s[3]) && s[4] == '-'))
		return 0;
	*bad = 1;
	if (n < 10 || !two(s + 5, &mo) || s[7] != '-' || !two(s + 8, &d))
		return EB_TOML_DATE_LOCAL;
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1])
		return EB_TOML_DATE_LOCAL;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return EB_TOML_DATE_LOCAL;
	if (n == 10) {
		*bad = 0;
		return EB_TOML_DATE_LOCAL;
	}
	if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
		return EB_TOML_DATE_LOCAL;
	i = time_len(s + 11, n - 11);
	if (!i)
		return EB_TOML_DATETIME_LOCAL;
	i += 11;
	if (i == n) {
		*bad = 0;
		return EB_TOML_DATETIME_LOCAL;
	}
	if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == n) {
		*bad = 0;
		return EB_TOML_DATETIME;
	}
	if ((s[i] == '+' || s[i] == '-') && n - i == 6 && two(s + i + 1, &oh) && s[i + 3] == ':' &&
	    two(s + i + 4, &om) && oh <= 23 && om <= 59)
		*bad = 0;
	return EB_TOML_DATETIME;
}

static int is_tokch(char c)
{
	return is_bare(c) || c == '+' || c == '.' || c == ':';
}

static json_t *scalar_token(struct tp *t, enum eb_toml_type *type)
{
	const char *s = t->p, *e = t->p;
	size_t n;
	int bad;
	enum eb_toml_type dt;
	const char *d;

	while (e < t->end && is_tokch(*e))
		e++;
	/* a date, a space, then a time: one local or offset date-time */
	if (e - s == 10 && e + 3 < t->end && *e == ' ' && isdec(e[1]) && isdec(e[2]) && e[3] == ':' &&
	    datetime(s, 10, &bad) == EB_TOML_DATE_LOCAL && !bad) {
		e++;
		while (e < t->end && is_tokch(*e))
			e++;
	}
	n = (size_t)(e - s);
	if (n == 0) {
		fail_at(t, s, "expected a value, found %s",
			s >= t->end ? "the end of the file" : at_newline(t) ? "the end of the line" : "an invalid character");
		return NULL;
	}
	dt = datetime(s, n, &bad);
	if (dt) {
		if (bad) {
			fail_at(t, s, "invalid date or time '%.*s'", (int)(n > 40 ? 40 : n), s);
			return NULL;
		}
		*type = dt;
		t->p = e;
		return json_stringn(s, n);
	}
	if ((n == 4 && strncmp(s, "true", 4) == 0) || (n == 5 && strncmp(s, "false", 5) == 0)) {
		*type = EB_TOML_BOOL;
		t->p = e;
		return json_boolean(n == 4);
	}
	d = s;
	if (*d == '+' || *d == '-')
		d++;
	if ((size_t)(e - d) == 3 && (strncmp(d, "inf", 3) == 0 || strncmp(d, "nan", 3) == 0)) {
		*type = EB_TOML_FLOAT;
		t->p = e;
		return json_stringn(s, n);
	}
	if (e - d > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'o' || d[1] == 'b')) {
		int base = d[1] == 'x' ? 16 : d[1] == 'o' ? 8 : 2;
		int (*isd)(char) = base == 16 ? ishex : base == 8 ? isoct : isbin;
		char *clean;
		unsigned long long v;
		if (d != s || !digits_ok(d + 2, (size_t)(e - d - 2), isd)) {
			fail_at(t, s, "invalid integer '%.*s'", (int)(n > 40 ? 40 : n), s);
			return NULL;
		}
		clean = strip_underscores(d + 2, (size_t)(e - d - 2));
		errno = 0;
		v = strtoull(clean, NULL, base);
		free(clean);
		if (errno || v > INT64_MAX) {
			fail_at(t, s, "integer '%.*s' does not fit in 64 bits", (int)(n > 40 ? 40 : n), s);
			return NULL;
		}
		*type = EB_TOML_INTEGER;
		t->p = e;
		return json_integer((json_int_t)v);
	}
	{
		/* decimal: int part, then optional .frac and exponent */
		const char *ip = d, *ie = d, *fs = NULL, *fe = NULL, *xs = NULL, *xe = NULL, *q;
		char *clean;
		while (ie < e && (isdec(*ie) || *ie == '_'))
			ie++;
		q = ie;
		if (q < e && *q == '.') {
			fs = ++q;
			while (q < e && (isdec(*q) || *q == '_'))
				q++;
			fe = q;
		}
		if (q < e && (*q == 'e' || *q == 'E')) {
			q++;
			if (q < e && (*q == '+' || *q == '-'))
				q++;
			xs = q;
			while (q < e && (isdec(*q) || *q == '_'))
				q++;
			xe = q;
		}
		if (q != e || !digits_ok(ip, (size_t)(ie - ip), isdec) ||
		    (ie - ip > 1 && ip[0] == '0') || (fs && !digits_ok(fs, (size_t)(fe - fs), isdec)) ||
		    (xs && !digits_ok(xs, (size_t)(xe - xs), isdec))) {
			fail_at(t, s, "invalid value '%.*s'", (int)(n > 40 ? 40 : n), s);
			return NULL;
		}
		clean = strip_underscores(s, n);
		t->p = e;
		if (fs || xs) {
			double v = strtod(clean, NULL);
			free(clean);
			if (!isfinite(v)) {
				/* jansson holds no infinity; 1e999 is out of binary64's range */
				t->p = s;
				fail_at(t, s, "float '%.*s' is out of range", (int)(n > 40 ? 40 : n), s);
				return NULL;
			}
			*type = EB_TOML_FLOAT;
			return json_real(v);
		} else {
			long long v;
			errno = 0;
			v = strtoll(clean, NULL, 10);
			free(clean);
			if (errno) {
				t->p = s;
				fail_at(t, s, "integer '%.*s' does not fit in 64 bits", (int)(n > 40 ? 40 : n), s);
				return NULL;
			}
			*type = EB_TOML_INTEGER;
			return json_integer((json_int_t)v);
		}
	}
}

/* ---- values and tables ---------------------------------------------------- */

static json_t *value(struct tp *t, struct eb_toml_pos *pos, int depth);
static int keyval(struct tp *t, json_t *table, int depth);

static unsigned flags_of(const struct eb_toml_doc *doc, const json_t *node, unsigned *section)
{
	const struct tinfo *e = find_node(doc, node);
	if (section)
		*section = e ? e->section : 0;
	return e ? e->flags : 0;
}

static void set_flags(struct eb_toml_doc *doc, const json_t *node, unsigned flags, unsigned section)
{
	struct tinfo *e = find_node(doc, node);
	if (e) {
		e->flags |= flags;
		if (flags & F_DOTTED)
			e->section = section;
	}
}

static json_t *array(struct tp *t, int depth)
{
	json_t *a = json_array();
	size_t i = 0;

	t->p++; /* [ */
	for (;;) {
		struct eb_toml_pos pos;
		json_t *v;
		if (skip_ws_nl(t) < 0)
			goto fail;
		if (t->p < t->end && *t->p == ']') {
			t->p++;
			return a;
		}
		v = value(t, &pos, depth + 1);
		if (!v)
			goto fail;
		json_array_append_new(a, v);
		add_entry(t->doc, a, NULL, i++, v, &pos);
		if (pos.type == EB_TOML_TABLE || pos.type == EB_TOML_ARRAY)
			set_flags(t->doc, v, F_FROZEN, 0);
		if (skip_ws_nl(t) < 0)
			goto fail;
		if (t->p < t->end && *t->p == ',') {
			t->p++;
			continue;
		}
		if (t->p < t->end && *t->p == ']') {
			t->p++;
			return a;
		}
		fail_at(t, t->p, t->p >= t->end ? "unterminated array" : "expected ',' or ']' in an array");
		goto fail;
	}
fail:
	json_decref(a);
	return NULL;
}

static json_t *inline_table(struct tp *t, int depth)
{
	json_t *o = json_object();
	int first = 1;

	t->p++; /* { */
	/* the inline table must be in the side table before its keys are set,
	 * for their flags: the caller's entry comes after, so add a
	 * placeholder keyed by nothing */
	for (;;) {
		skip_ws(t);
		if (first && t->p < t->end && *t->p == '}') {
			t->p++;
			return o;
		}
		if (t->p >= t->end || at_newline(t)) {
			fail_at(t, t->p, "an inline table must be on one line");
			goto fail;
		}
		if (keyval(t, o, depth + 1) < 0)
			goto fail;
		first = 0;
		skip_ws(t);
		if (t->p < t->end && *t->p == ',') {
			t->p++;
			skip_ws(t);
			if (t->p < t->end && *t->p == '}') {
				fail_at(t, t->p, "trailing comma in an inline table");
				goto fail;
			}
			continue;
		}
		if (t->p < t->end && *t->p == '}') {
			t->p++;
			return o;
		}
		fail_at(t, t->p, "expected ',' or '}' in an inline table");
		goto fail;
	}
fail:
	json_decref(o);
	return NULL;
}

static json_t *value(struct tp *t, struct eb_toml_pos *pos, int depth)
{
	memset(pos, 0, sizeof(*pos));
	pos->line = t->line;
	pos->col = col_of(t, t->p);
	if (depth > MAX_DEPTH) {
		fail_at(t, t->p, "values nested deeper than %d", MAX_DEPTH);
		return NULL;
	}
	if (t->p >= t->end) {
		fail_at(t, t->p, "expected a value, found the end of the file");
		return NULL;
	}
	switch (*t->p) {
	case '"':
	case '\'': {
		struct eb_buf b;
		json_t *s;
		eb_buf_init(&b, 0);
		if (string(t, &b) < 0) {
			eb_buf_release(&b);
			return NULL;
		}
		s = json_stringn(b.ptr, b.len);
		eb_buf_release(&b);
		pos->type = EB_TOML_STRING;
		return s;
	}
	case '[':
		pos->type = EB_TOML_ARRAY;
		return array(t, depth);
	case '{':
		pos->type = EB_TOML_TABLE;
		return inline_table(t, depth);
	default:
		return scalar_token(t, &pos->type);
	}
}

/* Dotted key = value into table (a [header] table, the root or an inline
 * table). */
static int keyval(struct tp *t, json_t *table, int depth)
{
	struct key k = { 0 };
	json_t *cur = table, *v;
	struct eb_toml_pos pos;
	const struct keypart *stem;
	int r = -1;

	if (parse_key(t, &k) < 0)
		goto done;
	if (t->p >= t->end || *t->p != '=') {
		fail_at(t, t->p, "expected '=' after a key");
		goto done;
	}
	t->p++;
	skip_ws(t);
	for (size_t i = 0; i + 1 < k.n; i++) {
		json_t *child = json_object_get(cur, k.v[i].s);
		unsigned sec, fl;
		if (!child) {
			struct eb_toml_pos tp = { k.v[i].line, k.v[i].col, k.v[i].line, k.v[i].col,
						  EB_TOML_TABLE };
			child = json_object();
			json_object_set_new(cur, k.v[i].s, child);
			add_entry(t->doc, cur, k.v[i].s, 0, child, &tp);
			set_flags(t->doc, child, F_DOTTED, t->section);
		} else if (!json_is_object(child)) {
			fail_key(t, &k.v[i], "key '%s' is already defined as a value", k.v[i].s);
			goto done;
		} else {
			fl = flags_of(t->doc, child, &sec);
			if (fl & F_FROZEN) {
				fail_key(t, &k.v[i], "cannot add keys to the inline table '%s'", k.v[i].s);
				goto done;
			}
			if ((fl & F_EXPLICIT) || ((fl & F_DOTTED) && sec != t->section)) {
				fail_key(t, &k.v[i], "table '%s' is already defined", k.v[i].s);
				goto done;
			}
		}
		cur = child;
	}
	stem = &k.v[k.n - 1];
	if (json_object_get(cur, stem->s)) {
		fail_key(t, stem, "duplicate key '%s'", stem->s);
		goto done;
	}
	v = value(t, &pos, depth);
	if (!v)
		goto done;
	pos.key_line = stem->line;
	pos.key_col = stem->col;
	json_object_set_new(cur, stem->s, v);
	add_entry(t->doc, cur, stem->s, 0, v, &pos);
	if (pos.type == EB_TOML_TABLE || pos.type == EB_TOML_ARRAY)
		set_flags(t->doc, v, F_FROZEN, 0);
	r = 0;
done:
	key_release(&k);
	return r;
}

/* [a.b] or [[a.b]] at t->p; *table becomes the table its keys go to. */
static int header(struct tp *t, json_t **table)
{
	const char *start = t->p;
	int aot = t->end - t->p >= 2 && t->p[1] == '[';
	struct key k = { 0 };
	json_t *cur = t->doc->root, *child;
	const struct keypart *last;
	struct eb_toml_pos pos = { t->line, col_of(t, start), 0, 0, EB_TOML_TABLE };
	int r = -1;

	t->p += aot ? 2 : 1;
	if (parse_key(t, &k) < 0)
		goto done;
	if (t->p >= t->end || *t->p != ']' || (aot && (t->end - t->p < 2 || t->p[1] != ']'))) {
		fail_at(t, t->p, aot ? "expected ']]' to close the table header" :
				       "expected ']' to close the table header");
		goto done;
	}
	t->p += aot ? 2 : 1;
	t->section++;
	for (size_t i = 0; i + 1 < k.n; i++) {
		child = json_object_get(cur, k.v[i].s);
		if (!child) {
			struct eb_toml_pos tp = { k.v[i].line, k.v[i].col, k.v[i].line, k.v[i].col,
						  EB_TOML_TABLE };
			child = json_object();
			json_object_set_new(cur, k.v[i].s, child);
			add_entry(t->doc, cur, k.v[i].s, 0, child, &tp);
		} else if (json_is_array(child) && (flags_of(t->doc, child, NULL) & F_AOT)) {
			child = json_array_get(child, json_array_size(child) - 1);
		} else if (!json_is_object(child) || (flags_of(t->doc, child, NULL) & F_FROZEN)) {
			fail_key(t, &k.v[i], "'%s' is not a table that can take more keys", k.v[i].s);
			goto done;
		}
		cur = child;
	}
	last = &k.v[k.n - 1];
	pos.key_line = last->line;
	pos.key_col = last->col;
	child = json_object_get(cur, last->s);
	if (!aot) {
		if (child) {
			unsigned fl = flags_of(t->doc, child, NULL);
			if (!json_is_object(child) || (fl & (F_EXPLICIT | F_DOTTED | F_FROZEN))) {
				fail_key(t, last, "table '%s' is already defined", last->s);
				goto done;
			}
			set_flags(t->doc, child, F_EXPLICIT, 0);
		} else {
			child = json_object();
			json_object_set_new(cur, last->s, child);
			add_entry(t->doc, cur, last->s, 0, child, &pos);
			set_flags(t->doc, child, F_EXPLICIT, 0);
		}
		*table = child;
	} else {
		json_t *elem = json_object();
		if (child) {
			if (!json_is_array(child) || !(flags_of(t->doc, child, NULL) & F_AOT)) {
				json_decref(elem);
				fail_key(t, last, "'%s' is already defined and is not an array of tables",
					 last->s);
				goto done;
			}
		} else {
			child = json_array();
			json_object_set_new(cur, last->s, child);
			pos.type = EB_TOML_ARRAY;
			add_entry(t->doc, cur, last->s, 0, child, &pos);
			set_flags(t->doc, child, F_AOT, 0);
			pos.type = EB_TOML_TABLE;
		}
		json_array_append_new(child, elem);
		pos.key_line = pos.key_col = 0;
		add_entry(t->doc, child, NULL, json_array_size(child) - 1, elem, &pos);
		set_flags(t->doc, elem, F_EXPLICIT, 0);
		*table = elem;
	}
	r = 0;
done:
	key_release(&k);
	return r;
}

int eb_toml_load(struct eb_toml_doc **out, const char *file, const char *text, size_t len,
		 struct eb_error **err)
{
	struct eb_toml_doc *doc = eb_xcalloc(1, sizeof(*doc));
	struct tp t = { 0 };
	struct eb_toml_pos rootpos = { 1, 1, 0, 0, EB_TOML_TABLE };
	json_t *table;
	size_t bad;

	*out = NULL;
	doc->root = json_object();
	add_entry(doc, NULL, NULL, 0, doc->root, &rootpos);
	t.doc = doc;
	t.file = file;
	t.p = t.line_start = text;
	t.end = text + len;
	t.line = 1;
	t.err = err;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		t.p += 3;
	if (utf8_check((const unsigned char *)text, len, &bad) < 0) {
		const char *at = text + bad;
		for (const char *c = text; c < at; c++)
			if (*c == '\n')
				t.line++, t.line_start = c + 1;
		fail_at(&t, at, "invalid UTF-8");
		goto fail;
	}
	table = doc->root;
	while (t.p < t.end) {
		skip_ws(&t);
		if (t.p >= t.end)
			break;
		if (*t.p == '#' || at_newline(&t) || *t.p == '\r') {
			if (end_of_line(&t) < 0)
				goto fail;
			continue;
		}
		if (*t.p == '[') {
			if (header(&t, &table) < 0)
				goto fail;
		} else if (keyval(&t, table, 0) < 0) {
			goto fail;
		}
		if (end_of_line(&t) < 0)
			goto fail;
	}
	*out = doc;
	return 0;
fail:
	eb_toml_free(doc);
	return err && *err ? -(*err)->code : -EB_EINVALID;
}

json_t *eb_toml_root(const struct eb_toml_doc *doc)
{
	return doc->root;
}

const struct eb_toml_pos *eb_toml_value_pos(const struct eb_toml_doc *doc, const json_t *parent,
					    const char *key, size_t index)
{
	size_t id = eb_nodetab_find(&doc->tab, parent, key, index);
	return id ? &doc->info[id - 1].pos : NULL;
}

const struct eb_toml_pos *eb_toml_node_pos(const struct eb_toml_doc *doc, const json_t *node)
{
	const struct tinfo *e = find_node(doc, node);
	return e ? &e->pos : NULL;
}

static const char *type_name(enum eb_toml_type t)
{
	switch (t) {
	case EB_TOML_STRING: return "string";
	case EB_TOML_INTEGER: return "integer";
	case EB_TOML_FLOAT: return "float";
	case EB_TOML_BOOL: return "bool";
	case EB_TOML_DATETIME: return "datetime";
	case EB_TOML_DATETIME_LOCAL: return "datetime-local";
	case EB_TOML_DATE_LOCAL: return "date-local";
	case EB_TOML_TIME_LOCAL: return "time-local";
	default: return "?";
	}
}

static json_t *tagged(const struct eb_toml_doc *doc, const json_t *node, enum eb_toml_type type)
{
	char num[64];

	if (json_is_object(node)) {
		json_t *o = json_object();
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)node, k, v) {
			const struct eb_toml_pos *p = eb_toml_value_pos(doc, node, k, 0);
			json_object_set_new(o, k, tagged(doc, v, p ? p->type : EB_TOML_STRING));
		}
		return o;
	}
	if (json_is_array(node)) {
		json_t *a = json_array();
		for (size_t i = 0; i < json_array_size(node); i++) {
			const struct eb_toml_pos *p = eb_toml_value_pos(doc, node, NULL, i);
			json_array_append_new(a, tagged(doc, json_array_get(node, i),
							p ? p->type : EB_TOML_STRING));
		}
		return a;
	}
	if (json_is_string(node))
		return json_pack("{s:s, s:s%}", "type", type_name(type), "value",
				 json_string_value(node), json_string_length(node));
	if (json_is_integer(node))
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(node));
	else if (json_is_real(node))
		snprintf(num, sizeof(num), "%.17g", json_real_value(node));
	else
		snprintf(num, sizeof(num), "%s", json_is_true(node) ? "true" : "false");
	return json_pack("{s:s, s:s}", "type", type_name(type), "value", num);
}

json_t *eb_toml_tagged(const struct eb_toml_doc *doc)
{
	return tagged(doc, doc->root, EB_TOML_TABLE);
}

void eb_toml_free(struct eb_toml_doc *doc)
{
	if (!doc)
		return;
	eb_nodetab_release(&doc->tab);
	free(doc->info);
	json_decref(doc->root);
	free(doc);
}
