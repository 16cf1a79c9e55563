/*
 * dfinstr.c - Dockerfile instructions and shell words for `envbuild
 * import` (stage/dfinstr.h).
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stage/dfinstr.h"
#include "util/alloc.h"
#include "util/buf.h"

struct acc {
	struct eb_buf b;
	unsigned *lines, *cols;
	size_t cap;
};

static void acc_put(struct acc *a, char ch, unsigned line, unsigned col)
{
	if (a->b.len + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 128;
		a->lines = eb_xreallocarray(a->lines, a->cap, sizeof(*a->lines));
		a->cols = eb_xreallocarray(a->cols, a->cap, sizeof(*a->cols));
	}
	a->lines[a->b.len] = line;
	a->cols[a->b.len] = col;
	eb_buf_put(&a->b, &ch, 1);
}

/* The physical lines: [start, end) without the newline. */
struct pline {
	const char *s;
	size_t n;
};

static int blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

static int is_comment(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < n && s[i] == '#';
}

/* The line ends with the escape character (trailing blanks allowed). */
static int continues(const char *s, size_t n, char esc)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return n > 0 && s[n - 1] == esc;
}

/* "<<EOF", "<<-EOF", "<<'EOF'", "<<\"EOF\"" in args: the terminator word */
static char *heredoc_word(const char *args)
{
	const char *p = strstr(args, "<<");
	size_t n = 0;

	if (!p)
		return NULL;
	p += 2;
	if (*p == '-')
		p++;
	if (*p == '\'' || *p == '"')
		p++;
	while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_'))
		n++;
	return n ? eb_xstrndup(p, n) : NULL;
}

int eb_dfinstr_parse(struct eb_dfinstrs *out, const char *text, size_t len)
{
	struct pline *pl = NULL;
	size_t npl = 0, cap = 0, i = 0, capi = 0, nfrom = 0;
	int directives = 1;

	memset(out, 0, sizeof(*out));
	out->escape = '\\';
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		/* a UTF-8 byte order mark: not part of the first keyword */
		text += 3;
		len -= 3;
	}
	for (size_t at = 0; at <= len;) {
		const char *nl = at < len ? memchr(text + at, '\n', len - at) : NULL;
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		EB_ALLOC_GROW(pl, npl + 1, cap);
		pl[npl].s = text + at;
		pl[npl++].n = n;
		if (!nl)
			break;
		at += n + 1;
	}
	while (i < npl) {
		const char *s = pl[i].s;
		size_t n = pl[i].n, k = 0, kw0;
		struct acc a = { EB_BUF_INIT, NULL, NULL, 0 };
		struct eb_dfinstr *in;
		char *hd;

		if (directives && is_comment(s, n)) {
			/* parser directives: "# escape=`" before anything else */
			const char *e = s;
			while (e < s + n && (*e == '#' || *e == ' ' || *e == '\t'))
				e++;
			if ((size_t)(s + n - e) >= 8 && strncasecmp(e, "escape=", 7) == 0 &&
			    (e[7] == '`' || e[7] == '\\'))
				out->escape = e[7];
			i++;
			continue;
		}
		directives = 0;
		if (blank(s, n) || is_comment(s, n)) {
			i++;
			continue;
		}
		while (k < n && isspace((unsigned char)s[k]))
			k++;
		kw0 = k;
		while (k < n && !isspace((unsigned char)s[k]))
			k++;
		EB_ALLOC_GROW(out->v, out->n + 1, capi);
		in = &out->v[out->n++];
		memset(in, 0, sizeof(*in));
		in->kw = eb_xstrndup(s + kw0, k - kw0);
		for (char *c = in->kw; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		in->line = (unsigned)i + 1;
		in->col = (unsigned)kw0 + 1;
		if (strcmp(in->kw, "FROM") == 0)
			nfrom++;
		in->stage = nfrom ? nfrom - 1 : SIZE_MAX;
		while (k < n && (s[k] == ' ' || s[k] == '\t'))
			k++;
		/* the arguments, over continuation lines */
		for (;;) {
			size_t end = n;
			int more = continues(s, n, out->escape);
			if (more) {
				while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r'))
					end--;
				end--; /* the escape */
			} else if (end > 0 && s[end - 1] == '\r') {
				end--;
			}
			for (; k < end; k++)
				acc_put(&a, s[k], (unsigned)i + 1, (unsigned)k + 1);
			i++;
			if (!more)
				break;
			/* comment and empty lines inside an instruction are dropped */
			while (i < npl && (is_comment(pl[i].s, pl[i].n) || blank(pl[i].s, pl[i].n)))
				i++;
			if (i >= npl)
				break;
			s = pl[i].s;
			n = pl[i].n;
			k = 0;
		}
		acc_put(&a, '\0', (unsigned)i, 1);
		a.b.len--;
		in->args = eb_buf_detach(&a.b, NULL);
		in->lines = a.lines;
		in->cols = a.cols;
		if ((strcmp(in->kw, "RUN") == 0 || strcmp(in->kw, "COPY") == 0 ||
		     strcmp(in->kw, "ADD") == 0) && (hd = heredoc_word(in->args)) != NULL) {
			/* the body runs up to a line that is the word alone */
			in->heredoc = 1;
			while (i < npl) {
				const char *b = pl[i].s;
				size_t bn = pl[i].n;
				while (bn && (b[bn - 1] == '\r'))
					bn--;
				while (bn && *b == '\t')
					b++, bn--;
				i++;
				if (bn == strlen(hd) && memcmp(b, hd, bn) == 0)
					break;
			}
			free(hd);
		}
	}
	free(pl);
	return 0;
}

void eb_dfinstr_free(struct eb_dfinstrs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].kw);
		free(l->v[i].args);
		free(l->v[i].lines);
		free(l->v[i].cols);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* $NAME, ${NAME}, ${NAME:-x}, ${NAME-x}, ${NAME:+x}: appended to b;
 * returns the bytes consumed after '$' (0: a lone '$'). */
static size_t var_at(const char *p, eb_dfvar_fn lookup, void *ud, struct eb_buf *b, int *unknown)
{
	size_t n = 0;
	const char *v;

	if (*p == '{') {
		const char *close = strchr(p, '}');
		size_t nl = 0;
		if (!close)
			return 0;
		while (p[1 + nl] && (isalnum((unsigned char)p[1 + nl]) || p[1 + nl] == '_'))
			nl++;
		v = lookup && nl ? lookup(ud, p + 1, nl) : NULL;
		if (p[1 + nl] == ':' || p[1 + nl] == '-' || p[1 + nl] == '+') {
			const char *m = p + 1 + nl;
			int colon = *m == ':';
			char op = colon ? m[1] : m[0];
			const char *word = m + (colon ? 2 : 1);
			if (op == '-') {
				if (v && (!colon || *v))
					eb_buf_put(b, v, strlen(v));
				else if (v || lookup)
					eb_buf_put(b, word, (size_t)(close - word));
			} else if (op == '+') {
				if (v && (!colon || *v))
					eb_buf_put(b, word, (size_t)(close - word));
			} else {
				eb_buf_put(b, "$", 1);
				eb_buf_put(b, p, (size_t)(close - p + 1));
				*unknown = 1;
			}
		} else if (v) {
			eb_buf_put(b, v, strlen(v));
		} else {
			eb_buf_put(b, "$", 1);
			eb_buf_put(b, p, (size_t)(close - p + 1));
			*unknown = 1;
		}
		return (size_t)(close - p + 1);
	}
	while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_'))
		n++;
	if (!n) {
		if (*p == '(')
			*unknown = 1;
		return 0;
	}
	v = lookup ? lookup(ud, p, n) : NULL;
	if (v) {
		eb_buf_put(b, v, strlen(v));
	} else {
		eb_buf_put(b, "$", 1);
		eb_buf_put(b, p, n);
		*unknown = 1;
	}
	return n;
}

void eb_dfinstr_words(const char *s, char escape, eb_dfvar_fn lookup, void *ud,
		      struct eb_dfwords *out)
{
	size_t cap = 0, i = 0, len = strlen(s);

	(void)escape; /* RUN's text is sh: a backslash is sh's */
	memset(out, 0, sizeof(*out));
	while (i < len) {
		struct eb_buf b = EB_BUF_INIT;
		struct eb_dfword w = { 0 };
		char q = 0;

		while (i < len && isspace((unsigned char)s[i]))
			i++;
		if (i >= len)
			break;
		if (s[i] == '#')
			break; /* a comment to the end */
		w.off = i;
		if (strchr(";&|", s[i])) {
			size_t n = (s[i] != ';' && s[i + 1] == s[i]) ? 2 : 1;
			w.s = eb_xstrndup(s + i, n);
			w.op = 1;
			i += n;
			EB_ALLOC_GROW(out->v, out->n + 1, cap);
			out->v[out->n++] = w;
			continue;
		}
		while (i < len) {
			char ch = s[i];
			if (!q && (isspace((unsigned char)ch) || strchr(";&|", ch)))
				break;
			if (!q && (ch == '\'' || ch == '"')) {
				q = ch;
				w.quoted = 1;
				i++;
				continue;
			}
			if (q && ch == q) {
				q = 0;
				i++;
				continue;
			}
			if (ch == '\\' && q != '\'' && i + 1 < len) {
				eb_buf_put(&b, s + i + 1, 1);
				i += 2;
				continue;
			}
			if (ch == '$' && q != '\'') {
				size_t used = var_at(s + i + 1, lookup, ud, &b, &w.has_var);
				if (used) {
					i += 1 + used;
					continue;
				}
			}
			if (ch == '`')
				w.has_var = 1;
			eb_buf_put(&b, &ch, 1);
			i++;
		}
		w.s = eb_buf_detach(&b, NULL);
		EB_ALLOC_GROW(out->v, out->n + 1, cap);
		out->v[out->n++] = w;
	}
}

void eb_dfwords_free(struct eb_dfwords *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].s);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

char *eb_dfinstr_expand(const char *s, char escape, eb_dfvar_fn lookup, void *ud, int *has_var)
{
	struct eb_buf b = EB_BUF_INIT;
	char q = 0;
	int unknown = 0;

	for (size_t i = 0; s[i];) {
		char ch = s[i];
		if (!q && (ch == '\'' || ch == '"')) {
			q = ch;
			i++;
			continue;
		}
		if (q && ch == q) {
			q = 0;
			i++;
			continue;
		}
		if (ch == escape && s[i + 1] && q != '\'') {
			eb_buf_put(&b, s + i + 1, 1);
			i += 2;
			continue;
		}
		if (ch == '$' && q != '\'') {
			size_t used = var_at(s + i + 1, lookup, ud, &b, &unknown);
			if (used) {
				i += 1 + used;
				continue;
			}
		}
		eb_buf_put(&b, &ch, 1);
		i++;
	}
	if (has_var)
		*has_var = unknown;
	return eb_buf_detach(&b, NULL);
}
