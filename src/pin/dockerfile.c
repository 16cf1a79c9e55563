/*
 * dockerfile.c - reading FROM lines and pip installs out of a Dockerfile
 * (see dockerfile.h).
 *
 * Three layers:
 *   1. lines: parser directives, comments and continuations are resolved
 *      into logical lines, keeping the source position of every byte;
 *   2. words: one lexer serves both the Dockerfile level (FROM, ARG, ENV:
 *      quotes, the directive's escape character, $VAR substitution) and the
 *      shell level of RUN (operators, redirections, `\`, $(...));
 *   3. instructions: FROM and ARG build the stage list, RUN is split into
 *      simple commands and each pip install is taken apart (RUN, the
 *      installs and the -r FILE bookkeeping are dockerfile_run.c).
 *
 * This is a reader for checks, not a builder: where docker would fail
 * (unknown instruction, bad reference) a finding is reported and reading
 * goes on, and where the shell would need to run something ($(...), a
 * variable the file does not define) the text is kept as written and
 * flagged as unresolved.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pin/dockerfile.h"
#include "pin/dockerfile_internal.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/buf.h"

#define RULE_MALFORMED "EB303"

/* ---- strings with positions ---------------------------------------- */

void eb_dockerfile__pstr_add(struct pstr *p, char c, struct lpos at)
{
	size_t cap = p->cap;

	EB_ALLOC_GROW(p->s, p->len + 2, p->cap);
	if (cap != p->cap)
		p->pos = eb_xreallocarray(p->pos, p->cap, sizeof(*p->pos));
	p->s[p->len] = c;
	p->pos[p->len] = at;
	p->s[++p->len] = '\0';
}

static void pstr_release(struct pstr *p)
{
	free(p->s);
	free(p->pos);
	memset(p, 0, sizeof(*p));
}

const char *eb_dockerfile__pstr_str(const struct pstr *p)
{
	return p->len ? p->s : "";
}

/* ---- variables ----------------------------------------------------- */

static struct var *scope_find(const struct scope *sc, const char *name, size_t len)
{
	for (size_t i = sc->n; i-- > 0;)
		if (strlen(sc->v[i].name) == len && memcmp(sc->v[i].name, name, len) == 0)
			return &sc->v[i];
	return NULL;
}

static void scope_set(struct scope *sc, const char *name, const char *value, int is_env)
{
	struct var *v = scope_find(sc, name, strlen(name));
	char *copy = value ? eb_xstrdup(value) : NULL; /* value may be v's own */

	if (!v) {
		EB_ALLOC_GROW(sc->v, sc->n + 1, sc->cap);
		v = &sc->v[sc->n++];
		v->name = eb_xstrdup(name);
	} else {
		free(v->value);
	}
	v->value = copy;
	v->is_env = is_env;
}

static void scope_release(struct scope *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		free(sc->v[i].name);
		free(sc->v[i].value);
	}
	free(sc->v);
	memset(sc, 0, sizeof(*sc));
}

/* ---- words --------------------------------------------------------- */

void eb_dockerfile__word_release(struct word *w)
{
	pstr_release(&w->t);
	free(w->var);
	memset(w, 0, sizeof(*w));
}

struct word *eb_dockerfile__wordvec_push(struct wordvec *v)
{
	EB_ALLOC_GROW(v->w, v->n + 1, v->cap);
	memset(&v->w[v->n], 0, sizeof(v->w[0]));
	return &v->w[v->n++];
}

void eb_dockerfile__wordvec_clear(struct wordvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		eb_dockerfile__word_release(&v->w[i]);
	v->n = 0;
}

void eb_dockerfile__wordvec_release(struct wordvec *v)
{
	eb_dockerfile__wordvec_clear(v);
	free(v->w);
	memset(v, 0, sizeof(*v));
}

/* Position of byte i of a word's text (one past the end for i == len). */
struct lpos eb_dockerfile__word_pos(const struct word *w, size_t i)
{
	struct lpos p;

	if (i < w->t.len)
		return w->t.pos[i];
	if (w->t.len == 0)
		return w->start;
	p = w->t.pos[w->t.len - 1];
	p.col++;
	return p;
}

/* ---- the lexer ----------------------------------------------------- */

int eb_dockerfile__is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* strchr(set, c) without matching the terminator when c is '\0' */
int eb_dockerfile__in_set(const char *set, char c)
{
	return c != '\0' && strchr(set, c) != NULL;
}

int eb_dockerfile__is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

int eb_dockerfile__is_name_char(char c)
{
	return eb_dockerfile__is_name_start(c) || (c >= '0' && c <= '9');
}

static void add_raw(struct lexer *lx, struct word *w, size_t b, size_t e)
{
	for (size_t k = b; k < e; k++)
		eb_dockerfile__pstr_add(&w->t, lx->src->s[k], lx->src->pos[k]);
}

static void mark_unresolved(struct word *w, const char *name, size_t len, int declared,
			    struct lpos at)
{
	if (!w->unresolved) {
		w->var = name ? eb_xstrndup(name, len) : NULL;
		w->var_pos = at;
	}
	w->unresolved = 1;
	if (!declared)
		w->undeclared = 1;
}

/* Index of the '}' closing a ${...} whose body starts at i, or SIZE_MAX. */
static size_t find_close(const struct lexer *lx, size_t i, size_t end)
{
	const char *s = lx->src->s;
	int depth = 0;

	while (i < end) {
		if (s[i] == lx->esc) {
			i += 2;
		} else if (s[i] == '\'' || s[i] == '"') {
			char q = s[i++];
			while (i < end && s[i] != q)
				i += (q == '"' && s[i] == lx->esc) ? 2 : 1;
			i++;
		} else if (s[i] == '$' && i + 1 < end && s[i + 1] == '{') {
			depth++;
			i += 2;
		} else if (s[i] == '}') {
			if (depth-- == 0)
				return i;
			i++;
		} else {
			i++;
		}
	}
	return SIZE_MAX;
}

/* End (exclusive) of a $(...) or $((...)) starting at i ('$'). */
static size_t skip_cmdsubst(const struct lexer *lx, size_t i, size_t end)
{
	const char *s = lx->src->s;
	int depth = 0;

	for (i++; i < end; i++) {
		if (s[i] == '\\') {
			i++;
		} else if (s[i] == '\'') {
			while (i + 1 < end && s[++i] != '\'')
				;
		} else if (s[i] == '(') {
			depth++;
		} else if (s[i] == ')' && --depth == 0) {
			return i + 1;
		}
	}
	return end;
}

static void scan(struct lexer *lx, struct word *w, size_t end, int split);

/* A variable's value, all of it at the position of its '$'. */
static void add_value(struct word *w, const char *value, struct lpos at, int in_dq)
{
	at.split = !in_dq;
	for (const char *c = value; *c; c++)
		eb_dockerfile__pstr_add(&w->t, *c, at);
}

/* Substitute the variable reference at lx->i ('$'). */
static void expand(struct lexer *lx, struct word *w, size_t end, int in_dq)
{
	const char *s = lx->src->s;
	size_t i = lx->i, nb, ne, close;
	struct lpos at = lx->src->pos[i];
	const struct var *v;
	int colon, set, known;
	char op;

	if (i + 1 >= end) {
		eb_dockerfile__pstr_add(&w->t, '$', at);
		lx->i++;
		return;
	}
	if (lx->shell && (s[i + 1] == '(')) {
		lx->i = skip_cmdsubst(lx, i, end);
		/* $(command): its commands run too ($((arithmetic)) has none) */
		if (lx->p && lx->depth < 4 && i + 2 < end && s[i + 2] != '(' && lx->i > i + 2)
			eb_dockerfile__run_script(lx->p, lx->src, i + 2,
				   s[lx->i - 1] == ')' ? lx->i - 1 : lx->i, 0, lx->depth + 1);
		add_raw(lx, w, i, lx->i);
		mark_unresolved(w, NULL, 0, 1, at);
		return;
	}
	if (lx->shell && (eb_dockerfile__in_set("@*#?$!-", s[i + 1]) || (s[i + 1] >= '0' && s[i + 1] <= '9'))) {
		add_raw(lx, w, i, i + 2);
		mark_unresolved(w, s + i + 1, 1, 1, at);
		lx->i = i + 2;
		return;
	}
	if (eb_dockerfile__is_name_start(s[i + 1])) {
		nb = i + 1;
		for (ne = nb; ne < end && eb_dockerfile__is_name_char(s[ne]); ne++)
			;
		v = scope_find(lx->scope, s + nb, ne - nb);
		if (v && v->value) {
			add_value(w, v->value, at, in_dq);
		} else {
			add_raw(lx, w, i, ne);
			mark_unresolved(w, s + nb, ne - nb, v != NULL, at);
		}
		lx->i = ne;
		return;
	}
	if (s[i + 1] != '{') {
		/* a lone '$' is literal */
		eb_dockerfile__pstr_add(&w->t, '$', at);
		lx->i++;
		return;
	}

	nb = i + 2;
	for (ne = nb; ne < end && eb_dockerfile__is_name_char(s[ne]); ne++)
		;
	close = find_close(lx, nb, end);
	if (close == SIZE_MAX) {
		add_raw(lx, w, i, end);
		mark_unresolved(w, s + nb, ne - nb, 1, at);
		lx->i = end;
		return;
	}
	if (ne == nb || !eb_dockerfile__is_name_start(s[nb])) {
		/* ${#x}, ${1}, ${}: nothing we evaluate */
		add_raw(lx, w, i, close + 1);
		mark_unresolved(w, NULL, 0, 1, at);
		lx->i = close + 1;
		return;
	}
	v = scope_find(lx->scope, s + nb, ne - nb);
	/* A variable the file does not declare is unset at the Dockerfile
	 * level; in a RUN it may come from the base image, so it is unknown. */
	known = v || lx->df;
	set = v && v->value;
	colon = s[ne] == ':';
	op = s[ne + colon];
	if (colon && set && !v->value[0])
		set = 0;

	if (ne == close) {
		op = 0;
	} else if (!eb_dockerfile__in_set("-+?", op) || ne + colon == close) {
		/* ${x#pat}, ${x/a/b}, ${x:1}, ...: not evaluated */
		add_raw(lx, w, i, close + 1);
		mark_unresolved(w, s + nb, ne - nb, v != NULL, at);
		lx->i = close + 1;
		return;
	}

	if (op == '-' && known && !set) {
		lx->i = ne + colon + 1;
		scan(lx, w, close, 0);
	} else if (op == '+' && known) {
		if (set) {
			lx->i = ne + colon + 1;
			scan(lx, w, close, 0);
		}
	} else if (set) {
		add_value(w, v->value, at, in_dq);
	} else {
		add_raw(lx, w, i, close + 1);
		mark_unresolved(w, s + nb, ne - nb, v != NULL, at);
	}
	lx->i = close + 1;
}

/* `...` command substitution starting at lx->i: kept as written. */
static void backtick(struct lexer *lx, struct word *w, size_t end)
{
	size_t i = lx->i + 1;

	while (i < end && lx->src->s[i] != '`')
		i += lx->src->s[i] == '\\' ? 2 : 1;
	if (lx->p && lx->depth < 4 && i > lx->i + 1)
		eb_dockerfile__run_script(lx->p, lx->src, lx->i + 1, i < end ? i : end, 0, lx->depth + 1);
	if (i < end)
		i++;
	if (i > end)
		i = end;
	add_raw(lx, w, lx->i, i);
	mark_unresolved(w, NULL, 0, 1, lx->src->pos[lx->i]);
	lx->i = i;
}

/* Append word text from lx->i up to end, or (split) up to an unquoted
 * blank or shell operator. */
static void scan(struct lexer *lx, struct word *w, size_t end, int split)
{
	const char *s = lx->src->s;
	const struct lpos *pos = lx->src->pos;

	while (lx->i < end) {
		char c = s[lx->i];

		if (split && eb_dockerfile__is_blank(c))
			break;
		if (split && lx->shell && eb_dockerfile__in_set(";&|()<>", c))
			break;
		if (c == lx->esc) {
			if (lx->i + 1 >= end) {
				eb_dockerfile__pstr_add(&w->t, c, pos[lx->i++]);
			} else {
				if (s[lx->i + 1] != '\n')
					eb_dockerfile__pstr_add(&w->t, s[lx->i + 1], pos[lx->i + 1]);
				lx->i += 2;
				w->quoted = 1;
			}
		} else if (c == '\'') {
			lx->i++;
			while (lx->i < end && s[lx->i] != '\'') {
				eb_dockerfile__pstr_add(&w->t, s[lx->i], pos[lx->i]);
				lx->i++;
			}
			if (lx->i < end)
				lx->i++;
			w->quoted = 1;
		} else if (c == '"') {
			lx->i++;
			while (lx->i < end && s[lx->i] != '"') {
				char d = s[lx->i];
				if (d == lx->esc && lx->i + 1 < end &&
				    (eb_dockerfile__in_set("\"$\n", s[lx->i + 1]) || s[lx->i + 1] == lx->esc ||
				     (lx->shell && s[lx->i + 1] == '`'))) {
					if (s[lx->i + 1] != '\n')
						eb_dockerfile__pstr_add(&w->t, s[lx->i + 1], pos[lx->i + 1]);
					lx->i += 2;
				} else if (d == '$') {
					expand(lx, w, end, 1);
				} else if (lx->shell && d == '`') {
					backtick(lx, w, end);
				} else {
					eb_dockerfile__pstr_add(&w->t, d, pos[lx->i++]);
				}
			}
			if (lx->i < end)
				lx->i++;
			w->quoted = 1;
		} else if (c == '$') {
			expand(lx, w, end, 0);
		} else if (lx->shell && c == '`') {
			backtick(lx, w, end);
		} else {
			eb_dockerfile__pstr_add(&w->t, c, pos[lx->i++]);
		}
	}
}

static void skip_blanks(struct lexer *lx)
{
	const char *s = lx->src->s;

	for (;;) {
		if (lx->i < lx->end && eb_dockerfile__is_blank(s[lx->i]) && !(lx->shell && s[lx->i] == '\n'))
			lx->i++;
		else if (lx->shell && lx->i + 1 < lx->end && s[lx->i] == '\\' && s[lx->i + 1] == '\n')
			lx->i += 2;
		else
			return;
	}
}

/* A redirection at lx->i ("<", ">>", "2>&1" after its fd, "<<EOF", "&>"):
 * skip the operator and its target word. */
static void skip_redirect(struct lexer *lx)
{
	const char *s = lx->src->s;
	struct word target = { 0 };

	if (s[lx->i] == '&')
		lx->i++;
	if (lx->i < lx->end && s[lx->i] == '<') {
		lx->i++;
		if (lx->i < lx->end && s[lx->i] == '<') {
			lx->i++;
			if (lx->i < lx->end && (s[lx->i] == '-' || s[lx->i] == '<'))
				lx->i++;
		} else if (lx->i < lx->end && (s[lx->i] == '&' || s[lx->i] == '>')) {
			lx->i++;
		}
	} else if (lx->i < lx->end && s[lx->i] == '>') {
		lx->i++;
		if (lx->i < lx->end && eb_dockerfile__in_set(">&|", s[lx->i]))
			lx->i++;
	}
	skip_blanks(lx);
	if (lx->i < lx->end && !eb_dockerfile__in_set(";&|()<>\n", s[lx->i]))
		scan(lx, &target, lx->end, 1);
	eb_dockerfile__word_release(&target);
}

static int all_digits(const struct pstr *p)
{
	if (p->len == 0)
		return 0;
	for (size_t i = 0; i < p->len; i++)
		if (p->s[i] < '0' || p->s[i] > '9')
			return 0;
	return 1;
}

/* Next token: a word into *w (which must be empty), or an operator. */
enum tok eb_dockerfile__lex_next(struct lexer *lx, struct word *w)
{
	const char *s = lx->src->s;

	for (;;) {
		skip_blanks(lx);
		if (lx->i >= lx->end)
			return TOK_EOF;
		if (lx->shell) {
			char c = s[lx->i];
			if (c == '#') {
				while (lx->i < lx->end && s[lx->i] != '\n')
					lx->i++;
				continue;
			}
			if (c == '<' || c == '>' ||
			    (c == '&' && lx->i + 1 < lx->end && s[lx->i + 1] == '>')) {
				skip_redirect(lx);
				continue;
			}
			if (eb_dockerfile__in_set(";&|()\n", c)) {
				/* &&, ||, |&, ;; or a single character */
				if (lx->i + 1 < lx->end && c != '(' && c != ')' && c != '\n' &&
				    (s[lx->i + 1] == c || (c == '|' && s[lx->i + 1] == '&')))
					lx->i++;
				lx->i++;
				return TOK_OP;
			}
		}
		w->src_begin = lx->i;
		w->start = lx->src->pos[lx->i];
		scan(lx, w, lx->end, 1);
		w->src_end = lx->i;
		if (lx->shell && lx->i < lx->end && (s[lx->i] == '<' || s[lx->i] == '>') &&
		    !w->quoted && all_digits(&w->t)) {
			/* "2>file": the word was a file descriptor */
			eb_dockerfile__word_release(w);
			skip_redirect(lx);
			continue;
		}
		return TOK_WORD;
	}
}

/* ---- the parser state ---------------------------------------------- */

/* The platform ARGs BuildKit defines in the global scope; their values
 * depend on the build, so they are declared without one. */
static const char *const automatic_args[] = {
	"BUILDPLATFORM", "BUILDOS", "BUILDARCH", "BUILDVARIANT",
	"TARGETPLATFORM", "TARGETOS", "TARGETARCH", "TARGETVARIANT", NULL,
};

static struct eb_diag *malformed(struct parser *p, struct lpos at, const char *fmt, ...)
	EB_PRINTF(3, 4);

static struct eb_diag *malformed(struct parser *p, struct lpos at, const char *fmt, ...)
{
	struct eb_diag *d;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	d = eb_diag_add(p->diags, EB_SEV_ERROR, p->path, at.line, at.col, RULE_MALFORMED, "%s",
			msg);
	free(msg);
	return d;
}

static const char *build_arg(const struct parser *p, const char *name)
{
	size_t n = strlen(name);

	if (!p->build_args)
		return NULL;
	for (const char *const *a = p->build_args; *a; a++)
		if (strncmp(*a, name, n) == 0 && (*a)[n] == '=')
			return *a + n + 1;
	return NULL;
}

struct scope *eb_dockerfile__current_scope(struct parser *p)
{
	return p->df->nfroms ? &p->stages[p->df->nfroms - 1] : &p->global;
}

void eb_dockerfile__lexer_init(struct lexer *lx, const struct pstr *src, size_t b, size_t e, char esc,
		int shell, const struct scope *scope)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = src;
	lx->i = b;
	lx->end = e;
	lx->esc = esc;
	lx->shell = shell;
	lx->scope = scope;
	lx->df = !shell;
}

/* ---- FROM ---------------------------------------------------------- */

static int valid_stage_name(const char *s)
{
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (s++; *s; s++)
		if (!eb_dockerfile__is_name_char(*s) && *s != '-' && *s != '.')
			return 0;
	return 1;
}

/* Offset of the tag inside a valid reference string, or -1. */
static long tag_offset(const char *s)
{
	const char *at = strchr(s, '@');
	size_t end = at ? (size_t)(at - s) : strlen(s);
	const char *colon = NULL;

	for (size_t i = 0; i < end; i++) {
		if (s[i] == '/')
			colon = NULL;
		else if (s[i] == ':')
			colon = s + i;
	}
	return colon ? (long)(colon - s) + 1 : -1;
}

static void add_from(struct parser *p, struct eb_dockerfile_from *f)
{
	struct eb_dockerfile *df = p->df;
	struct scope *sc;

	EB_ALLOC_GROW(df->froms, df->nfroms + 1, p->froms_cap);
	EB_ALLOC_GROW(p->stages, df->nfroms + 1, p->stages_cap);
	df->froms[df->nfroms] = *f;
	sc = &p->stages[df->nfroms];
	memset(sc, 0, sizeof(*sc));
	/* A stage built on another stage inherits its environment (it is part
	 * of the image config), not its ARGs. */
	if (f->is_stage_ref) {
		const struct scope *base = &p->stages[f->stage_ref];
		for (size_t i = 0; i < base->n; i++)
			if (base->v[i].is_env)
				scope_set(sc, base->v[i].name, base->v[i].value, 1);
	}
	df->nfroms++;
}

static void do_from(struct parser *p, const struct pstr *ll, size_t a, struct lpos kw)
{
	struct eb_dockerfile_from f = { 0 };
	struct wordvec words = { 0 };
	struct lexer lx;
	struct word *img;
	struct eb_error *perr = NULL;
	int flags_done = 0;

	f.line = kw.line;
	f.col = kw.col;
	eb_dockerfile__lexer_init(&lx, ll, a, ll->len, p->esc, 0, &p->global);
	for (;;) {
		struct word *w = eb_dockerfile__wordvec_push(&words);
		if (eb_dockerfile__lex_next(&lx, w) != TOK_WORD) {
			words.n--;
			break;
		}
		if (!flags_done && w->t.len > 2 && memcmp(w->t.s, "--", 2) == 0) {
			const char *eq = strchr(w->t.s, '=');
			size_t nlen = eq ? (size_t)(eq - w->t.s) : w->t.len;
			if (nlen == 10 && memcmp(w->t.s, "--platform", 10) == 0) {
				if (eq && eq[1]) {
					free(f.platform);
					f.platform = eb_xstrdup(eq + 1);
				} else {
					struct eb_diag *d =
						malformed(p, w->start, "flag '--platform' needs a value");
					eb_diag_hint(d, "write --platform=linux/amd64");
				}
			} else {
				malformed(p, w->start, "unknown flag '%.*s' for 'FROM'", (int)nlen,
					  w->t.s);
			}
			eb_dockerfile__word_release(w);
			words.n--;
			continue;
		}
		flags_done = 1;
	}

	if (words.n == 0) {
		struct eb_diag *d = malformed(p, kw, "'FROM' needs an image");
		eb_diag_hint(d, "write FROM IMAGE:TAG, e.g. FROM python:3.11-slim-bookworm");
		f.malformed = 1;
		add_from(p, &f);
		goto done;
	}
	if (words.n == 2 || words.n > 3 ||
	    (words.n == 3 && strcasecmp(eb_dockerfile__pstr_str(&words.w[1].t), "as") != 0)) {
		struct eb_diag *d = malformed(p, words.w[1].start,
					      "'FROM' takes an image and an optional 'AS name'");
		eb_diag_hint(d, "write FROM IMAGE[:TAG] [AS NAME]");
		f.malformed = 1;
	}
	if (words.n == 3) {
		const char *name = eb_dockerfile__pstr_str(&words.w[2].t);
		if (!valid_stage_name(name)) {
			struct eb_diag *d = malformed(p, words.w[2].start, "invalid stage name '%s'", name);
			eb_diag_hint(d, "start with a letter; use letters, digits, '-', '_' and '.'");
		} else {
			for (size_t i = 0; i < p->df->nfroms; i++) {
				const char *o = p->df->froms[i].stage_name;
				if (o && strcasecmp(o, name) == 0) {
					malformed(p, words.w[2].start, "duplicate stage name '%s'", name);
					break;
				}
			}
		}
		f.stage_name = eb_xstrdup(name);
	}

	img = &words.w[0];
	f.raw = eb_xstrndup(ll->s + img->src_begin, img->src_end - img->src_begin);
	f.image = eb_xstrdup(eb_dockerfile__pstr_str(&img->t));
	f.image_line = img->start.line;
	f.image_col = img->start.col;
	if (img->unresolved) {
		f.unresolved_var = 1;
		f.unresolved_name = img->var ? eb_xstrdup(img->var) : NULL;
		f.var_line = img->var_pos.line;
		f.var_col = img->var_pos.col;
		if (img->undeclared && img->var) {
			struct eb_diag *d = malformed(
				p, img->var_pos,
				"variable '%s' in 'FROM' is not declared by an ARG before the first FROM",
				img->var);
			eb_diag_hint(d, "add 'ARG %s=<value>' before the first FROM", img->var);
			f.malformed = 1;
		}
		add_from(p, &f);
		goto done;
	}
	/* A FROM naming an earlier stage (case-insensitively, as BuildKit
	 * does) builds on it rather than pulling an image. */
	for (size_t i = 0; i < p->df->nfroms; i++) {
		const char *o = p->df->froms[i].stage_name;
		if (o && strcasecmp(o, f.image) == 0) {
			f.is_stage_ref = 1;
			f.stage_ref = i;
		}
	}
	if (!f.is_stage_ref && eb_imageref_is_scratch(f.image))
		f.is_scratch = 1;
	if (!f.is_stage_ref && !f.is_scratch) {
		if (eb_imageref_parse(&f.ref, f.image, &perr) < 0) {
			struct lpos at = eb_dockerfile__word_pos(img, perr->col ? perr->col - 1 : 0);
			struct eb_diag *d = malformed(p, at, "invalid image reference '%s': %s",
						      f.image, perr->msg);
			if (perr->hint)
				eb_diag_hint(d, "%s", perr->hint);
			eb_error_free(perr);
			f.malformed = 1;
		} else {
			long t = tag_offset(f.image);
			f.has_ref = 1;
			if (t >= 0) {
				struct lpos at = eb_dockerfile__word_pos(img, (size_t)t);
				f.tag_line = at.line;
				f.tag_col = at.col;
			}
		}
	}
	add_from(p, &f);
done:
	eb_dockerfile__wordvec_release(&words);
}

/* ---- ARG and ENV --------------------------------------------------- */

static void do_arg(struct parser *p, const struct pstr *ll, size_t a, struct lpos kw)
{
	struct scope *sc = eb_dockerfile__current_scope(p);
	struct lexer lx;
	struct word w = { 0 };
	int n = 0;

	eb_dockerfile__lexer_init(&lx, ll, a, ll->len, p->esc, 0, sc);
	while (eb_dockerfile__lex_next(&lx, &w) == TOK_WORD) {
		const char *text = eb_dockerfile__pstr_str(&w.t);
		const char *eq = strchr(text, '=');
		char *name = eb_xstrndup(text, eq ? (size_t)(eq - text) : strlen(text));
		const char *value = build_arg(p, name);

		n++;
		if (!name[0]) {
			malformed(p, w.start, "'ARG' needs a name before '='");
		} else {
			if (!value && eq && !w.unresolved)
				value = eq + 1;
			if (!value && !eq && p->df->nfroms) {
				/* ARG NAME in a stage takes the global default */
				const struct var *g = scope_find(&p->global, name, strlen(name));
				value = g ? g->value : NULL;
			}
			scope_set(sc, name, value, 0);
		}
		free(name);
		eb_dockerfile__word_release(&w);
	}
	eb_dockerfile__word_release(&w);
	if (n == 0) {
		struct eb_diag *d = malformed(p, kw, "'ARG' needs a name");
		eb_diag_hint(d, "write ARG NAME or ARG NAME=DEFAULT");
	}
}

static void do_env(struct parser *p, const struct pstr *ll, size_t a, struct lpos kw)
{
	struct scope *sc = eb_dockerfile__current_scope(p);
	struct wordvec words = { 0 };
	struct lexer lx;

	eb_dockerfile__lexer_init(&lx, ll, a, ll->len, p->esc, 0, sc);
	for (;;) {
		struct word *w = eb_dockerfile__wordvec_push(&words);
		if (eb_dockerfile__lex_next(&lx, w) != TOK_WORD) {
			words.n--;
			break;
		}
		/* NAME=VALUE pairs: each assignment sees the earlier ones */
		if (strchr(eb_dockerfile__pstr_str(&words.w[0].t), '=')) {
			const char *text = eb_dockerfile__pstr_str(&w->t);
			const char *eq = strchr(text, '=');
			char *name;
			if (!eq || eq == text) {
				malformed(p, w->start, "expected NAME=VALUE in 'ENV', got '%s'", text);
				continue;
			}
			name = eb_xstrndup(text, (size_t)(eq - text));
			scope_set(sc, name, w->unresolved ? NULL : eq + 1, 1);
			free(name);
		}
	}
	if (words.n == 0) {
		malformed(p, kw, "'ENV' needs a name and a value");
	} else if (!strchr(eb_dockerfile__pstr_str(&words.w[0].t), '=')) {
		/* the old form: ENV NAME value with spaces */
		struct eb_buf v;
		int unresolved = 0;
		if (words.n < 2) {
			malformed(p, words.w[0].start, "'ENV %s' needs a value", eb_dockerfile__pstr_str(&words.w[0].t));
		} else {
			eb_buf_init(&v, 0);
			for (size_t i = 1; i < words.n; i++) {
				if (i > 1)
					eb_buf_addc(&v, ' ');
				eb_buf_adds(&v, eb_dockerfile__pstr_str(&words.w[i].t));
				unresolved |= words.w[i].unresolved;
			}
			scope_set(sc, eb_dockerfile__pstr_str(&words.w[0].t), unresolved ? NULL : v.ptr, 1);
			eb_buf_release(&v);
		}
	}
	eb_dockerfile__wordvec_release(&words);
}

/* ---- instructions -------------------------------------------------- */

static const char *const instructions[] = {
	"ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
	"MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR", NULL,
};

/* The instruction in ll at b; returns 1 if it takes heredocs (RUN, COPY,
 * ADD), so the caller skips their bodies. */
static int instruction(struct parser *p, const struct pstr *ll, size_t b, int onbuild)
{
	size_t e = b, a;
	struct lpos kw = ll->pos[b];
	char name[16];
	size_t n;
	int known = 0;

	while (e < ll->len && !eb_dockerfile__is_blank(ll->s[e]))
		e++;
	for (a = e; a < ll->len && eb_dockerfile__is_blank(ll->s[a]);)
		a++;
	n = e - b;
	if (n < sizeof(name)) {
		for (size_t i = 0; i < n; i++)
			name[i] = (char)((ll->s[b + i] >= 'a' && ll->s[b + i] <= 'z')
						 ? ll->s[b + i] - 'a' + 'A'
						 : ll->s[b + i]);
		name[n] = '\0';
		known = eb_dockerfile__is_one_of(name, instructions);
	}
	if (!known) {
		struct eb_diag *d = malformed(p, kw, "unknown instruction '%.*s'", (int)n, ll->s + b);
		if (onbuild)
			eb_diag_hint(d, "ONBUILD takes an instruction, e.g. ONBUILD RUN ...");
		return 0;
	}
	if (onbuild) {
		if (strcmp(name, "FROM") == 0 || strcmp(name, "ONBUILD") == 0 ||
		    strcmp(name, "MAINTAINER") == 0)
			malformed(p, kw, "'ONBUILD %s' is not allowed", name);
		else if (strcmp(name, "RUN") == 0)
			eb_dockerfile__do_run(p, ll, a);
		/* other triggers run in child images and change nothing here */
		return strcmp(name, "RUN") == 0 || strcmp(name, "COPY") == 0 ||
		       strcmp(name, "ADD") == 0;
	}

	if (!p->first.line)
		p->first = kw;
	if (strcmp(name, "FROM") == 0) {
		for (size_t i = 0; i < p->nearly && p->df->nfroms == 0; i++) {
			struct eb_diag *d = malformed(p, p->early[i].at,
						      "instruction '%s' before the first FROM",
						      p->early[i].name);
			eb_diag_hint(d, "only ARG may come before the first FROM");
		}
		p->nearly = 0;
		eb_dockerfile__copies_reset(p);
		do_from(p, ll, a, kw);
		return 0;
	}
	if (strcmp(name, "ARG") == 0) {
		do_arg(p, ll, a, kw);
		return 0;
	}
	if (p->df->nfroms == 0) {
		EB_ALLOC_GROW(p->early, p->nearly + 1, p->early_cap);
		p->early[p->nearly].at = kw;
		memcpy(p->early[p->nearly++].name, name, sizeof(name));
	}
	if (strcmp(name, "COPY") == 0 || strcmp(name, "ADD") == 0)
		eb_dockerfile__do_copy(p, ll, a);
	else if (strcmp(name, "WORKDIR") == 0)
		eb_dockerfile__do_workdir(p, ll, a);
	if (strcmp(name, "ENV") == 0)
		do_env(p, ll, a, kw);
	else if (strcmp(name, "RUN") == 0)
		eb_dockerfile__do_run(p, ll, a);
	else if (strcmp(name, "ONBUILD") == 0) {
		if (a >= ll->len) {
			malformed(p, kw, "'ONBUILD' needs an instruction");
			return 0;
		}
		return instruction(p, ll, a, 1);
	}
	return strcmp(name, "RUN") == 0 || strcmp(name, "COPY") == 0 || strcmp(name, "ADD") == 0;
}

/* ---- lines --------------------------------------------------------- */

struct heredoc {
	char *word;
	int strip_tabs; /* <<- */
	size_t mb, me;  /* the marker "<<-'EOF'" in the instruction line */
	struct pstr body; /* its lines, each ending in '\n', with positions */
};

/* Heredoc delimiters of a RUN/COPY/ADD line ("<<EOF", "<<-'EOF'"). */
static size_t find_heredocs(const struct pstr *ll, struct heredoc *out, size_t max)
{
	const char *s = eb_dockerfile__pstr_str(ll);
	size_t n = 0;
	char q = 0;

	for (size_t i = 0; i < ll->len && n < max; i++) {
		size_t b, e;
		int strip = 0;
		char wq = 0;

		if (q) {
			if (s[i] == q)
				q = 0;
			continue;
		}
		if (s[i] == '\'' || s[i] == '"') {
			q = s[i];
			continue;
		}
		if (s[i] != '<' || s[i + 1] != '<' || s[i + 2] == '<')
			continue;
		b = i + 2;
		if (s[b] == '-') {
			strip = 1;
			b++;
		}
		if (s[b] == '\'' || s[b] == '"')
			wq = s[b++];
		for (e = b; e < ll->len && (eb_dockerfile__is_name_char(s[e]) || s[e] == '-' || s[e] == '.'); e++)
			;
		if (e == b || !eb_dockerfile__is_name_start(s[b]) || (wq && s[e] != wq))
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].word = eb_xstrndup(s + b, e - b);
		out[n].strip_tabs = strip;
		out[n].mb = i;
		out[n].me = wq ? e + 1 : e;
		n++;
		i = wq ? e : e - 1;
	}
	return n;
}

struct cursor {
	const char *text;
	size_t len, i;
	unsigned line;
};

/* Next physical line [*b, *e) without its newline or '\r'; 0 at the end. */
static int next_line(struct cursor *c, size_t *b, size_t *e)
{
	const char *nl;

	if (c->i >= c->len)
		return 0;
	*b = c->i;
	nl = memchr(c->text + c->i, '\n', c->len - c->i);
	*e = nl ? (size_t)(nl - c->text) : c->len;
	c->i = nl ? *e + 1 : c->len;
	if (*e > *b && c->text[*e - 1] == '\r')
		(*e)--;
	c->line++;
	return 1;
}

/* Read the bodies into h[k].body; returns the index of a heredoc the
 * file ends inside, or n when all are terminated. */
static size_t skip_heredoc_bodies(struct cursor *c, struct heredoc *h, size_t n)
{
	size_t b, e;

	for (size_t k = 0; k < n; k++) {
		size_t wl = strlen(h[k].word), b0;
		int found = 0;
		while (!found && next_line(c, &b, &e)) {
			b0 = b;
			if (h[k].strip_tabs)
				while (b < e && c->text[b] == '\t')
					b++;
			found = e - b == wl && memcmp(c->text + b, h[k].word, wl) == 0;
			if (!found) {
				struct lpos at = { .line = c->line };
				for (size_t q = b; q < e; q++) {
					at.col = (unsigned)(q - b0) + 1;
					eb_dockerfile__pstr_add(&h[k].body, c->text[q], at);
				}
				at.col = (unsigned)(e - b0) + 1;
				eb_dockerfile__pstr_add(&h[k].body, '\n', at);
			}
		}
		if (!found)
			return k;
	}
	return n;
}

/* Is the body of the heredoc whose marker is s[mb..me) a shell script?
 * Yes when the command it feeds is empty (`RUN <<EOF`: BuildKit runs the
 * body) or a shell without -c (`RUN <<EOF bash -ex`); not for `python3
 * <<EOF` or `cat <<EOF > file`.  The command is the simple command around
 * the marker, other heredoc markers and redirections left out. */
static int heredoc_is_script(const char *s, size_t len, size_t start, size_t mb, size_t me)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "zsh", "ksh", NULL };
	size_t b = start, e = len, i;
	char q = 0, word[32];
	size_t wl = 0;
	int saw_c = 0, first = 1;

	for (i = start; i < len; i++) {
		if (q) {
			if (s[i] == q)
				q = 0;
			continue;
		}
		if (s[i] == '\'' || s[i] == '"') {
			q = s[i];
		} else if (s[i] == ';' || s[i] == '|' || (s[i] == '&' && i + 1 < len && s[i + 1] == '&')) {
			if (i < mb)
				b = i + 1 + (s[i + 1] == s[i]);
			else if (i >= me && e == len)
				e = i;
		}
	}
	for (i = b; i < e;) {
		size_t ws;
		while (i < e && eb_dockerfile__is_blank(s[i]))
			i++;
		if (i >= e)
			break;
		ws = i;
		if (s[i] == '<' || s[i] == '>' || (s[i] >= '0' && s[i] <= '9' && i + 1 < e &&
						   (s[i + 1] == '<' || s[i + 1] == '>'))) {
			/* a redirection or heredoc marker, with its target */
			while (i < e && (s[i] == '<' || s[i] == '>' || s[i] == '-' || s[i] == '&' ||
					 (s[i] >= '0' && s[i] <= '9')))
				i++;
			while (i < e && eb_dockerfile__is_blank(s[i]))
				i++;
			while (i < e && !eb_dockerfile__is_blank(s[i]))
				i++;
			continue;
		}
		while (i < e && !eb_dockerfile__is_blank(s[i]))
			i++;
		if (first) {
			const char *bn = s + ws;
			for (size_t k = ws; k < i; k++)
				if (s[k] == '/')
					bn = s + k + 1;
			wl = (size_t)(s + i - bn);
			if (wl >= sizeof(word))
				return 0;
			memcpy(word, bn, wl);
			word[wl] = '\0';
			first = 0;
		} else if (s[ws] == '-' && memchr(s + ws, 'c', i - ws) && s[ws + 1] != '-') {
			saw_c = 1;
		}
	}
	if (first)
		return 1;
	return eb_dockerfile__is_one_of(word, shells) && !saw_c;
}

/* "# name=value" at the top of the file.  Returns 1 if the line was a
 * directive; 0 ends the directive section. */
static int directive(struct parser *p, const char *s, size_t n, unsigned line)
{
	size_t i = 0, kb, ke, vb, ve;

	if (n == 0 || s[0] != '#')
		return 0;
	for (i = 1; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	kb = i;
	while (i < n && (eb_dockerfile__is_name_char(s[i])))
		i++;
	ke = i;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (ke == kb || i >= n || s[i] != '=')
		return 0;
	for (i++; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	vb = i;
	for (ve = n; ve > vb && (s[ve - 1] == ' ' || s[ve - 1] == '\t'); ve--)
		;
	if (ke - kb == 6 && strncasecmp(s + kb, "escape", 6) == 0) {
		struct lpos at = { .line = line, .col = (unsigned)vb + 1 };
		if (p->seen_escape) {
			malformed(p, at, "duplicate 'escape' parser directive");
		} else if (ve - vb == 1 && (s[vb] == '\\' || s[vb] == '`')) {
			p->esc = s[vb];
		} else {
			struct eb_diag *d = malformed(p, at, "invalid escape character '%.*s'",
						      (int)(ve - vb), s + vb);
			eb_diag_hint(d, "use '\\' or '`'");
		}
		p->seen_escape = 1;
		return 1;
	}
	if ((ke - kb == 6 && strncasecmp(s + kb, "syntax", 6) == 0) ||
	    (ke - kb == 5 && strncasecmp(s + kb, "check", 5) == 0))
		return 1;
	return 0;
}

static void parse_lines(struct parser *p, const char *text, size_t len)
{
	struct cursor c = { text, len, 0, 0 };
	struct pstr ll = { 0 };
	int directives = 1, in_cont = 0;
	size_t b, e;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		c.i = 3;
	for (;;) {
		int more = next_line(&c, &b, &e);
		size_t k, t, copy_end;
		int cont;

		if (more && memchr(text + b, '\0', e - b)) {
			const char *nul = memchr(text + b, '\0', e - b);
			struct lpos at = { .line = c.line, .col = (unsigned)(nul - (text + b)) + 1 };
			malformed(p, at, "NUL byte in Dockerfile");
			break;
		}
		if (more && directives) {
			if (directive(p, text + b, e - b, c.line))
				continue;
			directives = 0;
		}
		if (!more) {
			if (in_cont && ll.len)
				instruction(p, &ll, 0, 0);
			break;
		}
		for (k = b; k < e && eb_dockerfile__is_blank(text[k]); k++)
			;
		/* comments and blank lines vanish, also inside a continuation */
		if (k == e || text[k] == '#')
			continue;
		if (!in_cont)
			ll.len = 0;
		for (t = e; t > k && eb_dockerfile__is_blank(text[t - 1]); t--)
			;
		cont = text[t - 1] == p->esc;
		copy_end = cont ? t - 1 : e;
		for (size_t q = in_cont ? b : k; q < copy_end; q++) {
			struct lpos at = { .line = c.line, .col = (unsigned)(q - b) + 1 };
			eb_dockerfile__pstr_add(&ll, text[q], at);
		}
		if (cont) {
			in_cont = 1;
			continue;
		}
		in_cont = 0;
		if (ll.len == 0)
			continue;
		p->run_args = SIZE_MAX;
		if (instruction(p, &ll, 0, 0)) {
			struct heredoc h[8];
			size_t nh = find_heredocs(&ll, h, sizeof(h) / sizeof(h[0]));
			size_t open_doc = skip_heredoc_bodies(&c, h, nh);
			if (open_doc < nh) {
				struct eb_diag *d = malformed(p, ll.pos[0], "heredoc '%s' is not terminated",
							      h[open_doc].word);
				eb_diag_hint(d, "end it with a line holding only %s", h[open_doc].word);
			}
			for (size_t i = 0; i < nh; i++) {
				/* RUN heredocs that are scripts are checked as shell */
				if (p->run_args != SIZE_MAX && i < open_doc && h[i].body.len &&
				    heredoc_is_script(eb_dockerfile__pstr_str(&ll), ll.len, p->run_args, h[i].mb, h[i].me))
					eb_dockerfile__run_script(p, &h[i].body, 0, h[i].body.len, 0, 0);
				pstr_release(&h[i].body);
				free(h[i].word);
			}
		}
	}
	pstr_release(&ll);
}

/* ---- API ----------------------------------------------------------- */

int eb_dockerfile_parse_args(struct eb_dockerfile **out, const char *path, const char *text,
			     size_t len, const char *const *build_args, struct eb_diag_list *diags,
			     struct eb_error **err)
{
	struct parser p;

	(void)err; /* nothing here fails except on bad input, which is a finding */
	memset(&p, 0, sizeof(p));
	p.path = path;
	p.diags = diags;
	p.build_args = build_args;
	p.esc = '\\';
	p.df = eb_xcalloc(1, sizeof(*p.df));
	for (const char *const *a = automatic_args; *a; a++)
		scope_set(&p.global, *a, build_arg(&p, *a), 0);

	parse_lines(&p, text, len);
	if (p.df->nfroms == 0) {
		/* a fragment (included by a template): its RUN lines were
		 * checked; one finding where its first instruction is */
		struct lpos top = { .line = 1, .col = 1 };
		struct eb_diag *d = malformed(&p, p.first.line ? p.first : top,
					      "no FROM instruction");
		eb_diag_hint(d, "a Dockerfile starts its first stage with FROM IMAGE:TAG");
	}
	free(p.early);
	eb_dockerfile__copies_reset(&p);
	free(p.copies);
	free(p.cwd);
	p.df->escape = p.esc;

	scope_release(&p.global);
	for (size_t i = 0; i < p.df->nfroms; i++)
		scope_release(&p.stages[i]);
	free(p.stages);
	*out = p.df;
	return 0;
}

int eb_dockerfile_parse(struct eb_dockerfile **out, const char *path, const char *text, size_t len,
			struct eb_diag_list *diags, struct eb_error **err)
{
	return eb_dockerfile_parse_args(out, path, text, len, NULL, diags, err);
}

void eb_dockerfile_free(struct eb_dockerfile *df)
{
	if (!df)
		return;
	for (size_t i = 0; i < df->nfroms; i++) {
		struct eb_dockerfile_from *f = &df->froms[i];
		free(f->raw);
		free(f->image);
		free(f->platform);
		free(f->stage_name);
		free(f->unresolved_name);
		eb_imageref_release(&f->ref);
	}
	for (size_t i = 0; i < df->npip_args; i++) {
		free(df->pip_args[i].text);
		free(df->pip_args[i].context_path);
	}
	for (size_t i = 0; i < df->npip_options; i++) {
		free(df->pip_options[i].name);
		free(df->pip_options[i].value);
	}
	free(df->froms);
	free(df->pips);
	free(df->pip_args);
	free(df->pip_options);
	free(df);
}

void eb_dockerfile_check_from(const struct eb_dockerfile *df, const char *path,
			      struct eb_diag_list *diags)
{
	for (size_t i = 0; i < df->nfroms; i++) {
		const struct eb_dockerfile_from *f = &df->froms[i];
		struct eb_diag *d;

		if (f->malformed || f->is_stage_ref || f->is_scratch || !f->image)
			continue;
		if (f->unresolved_var) {
			d = eb_diag_add(diags, EB_SEV_WARNING, path, f->var_line, f->var_col, "EB304",
					"cannot check image '%s': variable '%s' has no value", f->image,
					f->unresolved_name ? f->unresolved_name : "?");
			if (f->unresolved_name && eb_dockerfile__is_one_of(f->unresolved_name, automatic_args))
				eb_diag_hint(d, "'%s' is set by the builder for each platform; name the "
					     "image of each platform instead", f->unresolved_name);
			else if (f->unresolved_name)
				eb_diag_hint(d, "give it a default before the first FROM: ARG %s=<value>",
					     f->unresolved_name);
			continue;
		}
		if (!f->has_ref)
			continue;
		if (!f->ref.tag && !f->ref.digest) {
			d = eb_diag_add(diags, EB_SEV_ERROR, path, f->image_line, f->image_col, "EB300",
					"image '%s' has no tag or digest", f->image);
			eb_diag_hint(d, "pin a tag, e.g. python:3.11-slim-bookworm");
		} else if (f->ref.tag && !f->ref.digest && strcmp(f->ref.tag, "latest") == 0) {
			d = eb_diag_add(diags, EB_SEV_ERROR, path, f->tag_line, f->tag_col, "EB301",
					"image '%s' uses the tag 'latest' without a digest", f->image);
			eb_diag_hint(d, "'latest' moves; pin a version tag, e.g. python:3.11-slim-bookworm, "
					     "or add a digest");
		}
	}
}
