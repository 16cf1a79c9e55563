/*
 * version.c - PEP 440 versions: parsing with normalisation, ordering, and
 * version specifiers.
 *
 * The accepted grammar is exactly pypa/packaging's VERSION_PATTERN in its
 * possessive form (the one pip uses on current CPython), so envbuild and pip
 * agree on what is a version: for instance "1.0a-" and "1.0.dev." are valid
 * while "1.0." and "1.0_1" are not.  Specifier matching follows packaging's
 * range semantics (26.x), which is where pip's answers come from.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pin/version.h"
#include "util/alloc.h"
#include "util/buf.h"

#define VERSION_HINT "PEP 440 versions look like '1.2.3', '2.0rc1', '1.0.post1' or '1!2.0+local.1'"

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_sep(char c)
{
	return c == '.' || c == '-' || c == '_';
}

static char to_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Length of the lower-case word w if s[i..end) starts with it in any case,
 * else 0. */
static size_t match_word(const char *s, size_t i, size_t end, const char *w)
{
	size_t n = strlen(w), k;

	if (end - i < n)
		return 0;
	for (k = 0; k < n; k++)
		if (to_lower(s[i + k]) != w[k])
			return 0;
	return n;
}

/* The first word of `words` (longest spellings first) that s[i..] starts
 * with; returns its index and sets *n to its length, or -1. */
static int match_any(const char *s, size_t i, size_t end, const char *const *words, size_t *n)
{
	int k;

	for (k = 0; words[k]; k++) {
		*n = match_word(s, i, end, words[k]);
		if (*n)
			return k;
	}
	return -1;
}

/* Digits at s[*i..end) into *out.  Returns 0, -1 when there is no digit, or
 * -2 when the number does not fit (then *i still moves past it). */
static int scan_number(const char *s, size_t *i, size_t end, unsigned long *out)
{
	unsigned long v = 0;
	size_t j = *i;
	int over = 0;

	if (j >= end || !is_digit(s[j]))
		return -1;
	for (; j < end && is_digit(s[j]); j++) {
		unsigned long d = (unsigned long)(s[j] - '0');
		if (v > (ULONG_MAX - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	*i = j;
	*out = v;
	return over ? -2 : 0;
}

struct vparse {
	const char *s;
	size_t tb, te; /* the trimmed text, for messages */
	struct eb_error **err;
};

static int fail_at(struct vparse *p, size_t at)
{
	eb_error_set_at(p->err, EB_EINVALID, NULL, 0, (unsigned)at + 1, "invalid version '%.*s'",
			(int)(p->te - p->tb), p->s + p->tb);
	eb_error_hint(p->err, "%s", VERSION_HINT);
	return -EB_EINVALID;
}

static int fail_big(struct vparse *p, size_t at, size_t to)
{
	return eb_error_set_at(p->err, EB_EINVALID, NULL, 0, (unsigned)at + 1,
			       "version number '%.*s' in '%.*s' is too large", (int)(to - at),
			       p->s + at, (int)(p->te - p->tb), p->s + p->tb);
}

/* Number after a pre/post/dev label: optional, 0 when absent. */
static int scan_label_number(struct vparse *p, size_t *i, size_t end, unsigned long *out)
{
	size_t at = *i;
	int r = scan_number(p->s, i, end, out);

	if (r == -1)
		*out = 0;
	else if (r == -2)
		return fail_big(p, at, *i);
	return 0;
}

/* Local label "+abc-1_2" from s[*i..end) (after the '+'), normalised to
 * "abc.1.2" with numeric segments stripped of leading zeros, as packaging
 * compares them as integers. */
static int scan_local(struct vparse *p, size_t *i, size_t end, char **out)
{
	struct eb_buf b;
	size_t j = *i;

	eb_buf_init(&b, 0);
	for (;;) {
		size_t seg = j, k;
		int numeric = 1;

		while (j < end && is_alnum(p->s[j])) {
			if (!is_digit(p->s[j]))
				numeric = 0;
			j++;
		}
		if (j == seg) {
			eb_buf_release(&b);
			return fail_at(p, j);
		}
		if (numeric) {
			while (seg + 1 < j && p->s[seg] == '0')
				seg++;
		}
		for (k = seg; k < j; k++)
			eb_buf_putc(&b, to_lower(p->s[k]));
		/* A separator belongs to the label only when a segment follows. */
		if (j + 1 < end && is_sep(p->s[j]) && is_alnum(p->s[j + 1])) {
			eb_buf_putc(&b, '.');
			j++;
			continue;
		}
		break;
	}
	*i = j;
	*out = eb_buf_detach(&b, NULL);
	return 0;
}

/* Parse s[start..end) (column numbers count from s). */
static int parse_version(struct eb_version *out, const char *s, size_t start, size_t end,
			 struct eb_error **err)
{
	static const char *const pre_words[] = { "preview", "alpha", "beta", "pre", "rc",
						 "a",       "b",     "c",    NULL };
	static const enum eb_pre_kind pre_kinds[] = { EB_PRE_RC, EB_PRE_A, EB_PRE_B, EB_PRE_RC,
						      EB_PRE_RC, EB_PRE_A, EB_PRE_B, EB_PRE_RC };
	static const char *const post_words[] = { "post", "rev", "r", NULL };
	static const char *const dev_words[] = { "dev", NULL };
	struct eb_version v;
	struct vparse p;
	size_t i = start, j, at, n, cap = 0;
	unsigned long num;
	int r, k;

	memset(&v, 0, sizeof(v));
	while (i < end && is_ws(s[i]))
		i++;
	while (end > i && is_ws(s[end - 1]))
		end--;
	p.s = s;
	p.tb = i;
	p.te = end;
	p.err = err;
	if (i == end)
		return eb_error_set_at(err, EB_EINVALID, NULL, 0, (unsigned)i + 1, "empty version");

	if (s[i] == 'v' || s[i] == 'V')
		i++;
	at = i;
	r = scan_number(s, &i, end, &num);
	if (r == -1)
		return fail_at(&p, i);
	if (r == -2)
		return fail_big(&p, at, i);
	if (i < end && s[i] == '!') {
		v.epoch = num;
		i++;
		at = i;
		r = scan_number(s, &i, end, &num);
		if (r == -1)
			return fail_at(&p, i);
		if (r == -2)
			return fail_big(&p, at, i);
	}
	for (;;) {
		EB_ALLOC_GROW(v.release, v.nrelease + 1, cap);
		v.release[v.nrelease++] = num;
		if (!(i + 1 < end && s[i] == '.' && is_digit(s[i + 1])))
			break;
		at = ++i;
		if (scan_number(s, &i, end, &num) == -2) {
			r = fail_big(&p, at, i);
			goto fail;
		}
	}

	/* pre-release: [-_.]? label [-_.]? N? */
	j = i;
	if (j < end && is_sep(s[j]))
		j++;
	k = match_any(s, j, end, pre_words, &n);
	if (k >= 0) {
		j += n;
		if (j < end && is_sep(s[j]))
			j++;
		v.pre = pre_kinds[k];
		if ((r = scan_label_number(&p, &j, end, &v.pre_n)) < 0)
			goto fail;
		i = j;
	}

	/* post-release: -N, or [-_.]? label [-_.]? N? */
	j = i;
	if (j + 1 < end && s[j] == '-' && is_digit(s[j + 1])) {
		j++;
		v.has_post = 1;
		if ((r = scan_label_number(&p, &j, end, &v.post)) < 0)
			goto fail;
		i = j;
	} else {
		if (j < end && is_sep(s[j]))
			j++;
		if (match_any(s, j, end, post_words, &n) >= 0) {
			j += n;
			if (j < end && is_sep(s[j]))
				j++;
			v.has_post = 1;
			if ((r = scan_label_number(&p, &j, end, &v.post)) < 0)
				goto fail;
			i = j;
		}
	}

	/* dev-release: [-_.]? dev [-_.]? N? */
	j = i;
	if (j < end && is_sep(s[j]))
		j++;
	if (match_any(s, j, end, dev_words, &n) >= 0) {
		j += n;
		if (j < end && is_sep(s[j]))
			j++;
		v.has_dev = 1;
		if ((r = scan_label_number(&p, &j, end, &v.dev)) < 0)
			goto fail;
		i = j;
	}

	if (i < end && s[i] == '+') {
		i++;
		if ((r = scan_local(&p, &i, end, &v.local)) < 0)
			goto fail;
	}
	if (i != end) {
		r = fail_at(&p, i);
		goto fail;
	}
	*out = v;
	return 0;
fail:
	eb_version_release(&v);
	return r;
}

int eb_version_parse(struct eb_version *out, const char *s, size_t len, struct eb_error **err)
{
	return parse_version(out, s, 0, len, err);
}

void eb_version_release(struct eb_version *v)
{
	free(v->release);
	free(v->local);
	v->release = NULL;
	v->local = NULL;
	v->nrelease = 0;
}

void eb_version_copy(struct eb_version *dst, const struct eb_version *src)
{
	*dst = *src;
	dst->release = NULL;
	if (src->nrelease) {
		dst->release = eb_xreallocarray(NULL, src->nrelease, sizeof(*src->release));
		memcpy(dst->release, src->release, src->nrelease * sizeof(*src->release));
	}
	dst->local = src->local ? eb_xstrdup(src->local) : NULL;
}

static int cmp_ul(unsigned long a, unsigned long b)
{
	return a < b ? -1 : a > b;
}

/* Release segments compare zero-padded: 1.0 == 1.0.0. */
static int cmp_release(const unsigned long *a, size_t na, const unsigned long *b, size_t nb)
{
	size_t i, n = na > nb ? na : nb;

	for (i = 0; i < n; i++) {
		int c = cmp_ul(i < na ? a[i] : 0, i < nb ? b[i] : 0);
		if (c)
			return c;
	}
	return 0;
}

/* A dev-only release (1.0.dev0) sorts before every pre-release of 1.0, a
 * final release after all of them. */
static int pre_rank(const struct eb_version *v)
{
	if (v->pre == EB_PRE_NONE)
		return (!v->has_post && v->has_dev) ? -1 : 3;
	return (int)v->pre - 1;
}

static int cmp_public(const struct eb_version *a, const struct eb_version *b)
{
	int c;

	if ((c = cmp_ul(a->epoch, b->epoch)))
		return c;
	if ((c = cmp_release(a->release, a->nrelease, b->release, b->nrelease)))
		return c;
	if ((c = pre_rank(a) - pre_rank(b)))
		return c < 0 ? -1 : 1;
	if (a->pre != EB_PRE_NONE && (c = cmp_ul(a->pre_n, b->pre_n)))
		return c;
	if ((c = a->has_post - b->has_post))
		return c;
	if (a->has_post && (c = cmp_ul(a->post, b->post)))
		return c;
	/* no dev segment sorts after any dev segment */
	if ((c = b->has_dev - a->has_dev))
		return c;
	if (a->has_dev && (c = cmp_ul(a->dev, b->dev)))
		return c;
	return 0;
}

static int seg_numeric(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return 0;
	return 1;
}

/* PEP 440 local ordering: segment by segment, numbers numerically and above
 * strings, strings lexicographically; when one label is a prefix of the
 * other the longer one wins. */
static int cmp_local(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	for (;;) {
		size_t la, lb;
		int na, nb, c;

		if (!*a || !*b)
			return (*a != '\0') - (*b != '\0');
		la = strcspn(a, ".");
		lb = strcspn(b, ".");
		na = seg_numeric(a, la);
		nb = seg_numeric(b, lb);
		if (na && nb) {
			const char *pa = a, *pb = b;
			size_t ma = la, mb = lb;
			while (ma > 1 && *pa == '0')
				pa++, ma--;
			while (mb > 1 && *pb == '0')
				pb++, mb--;
			c = ma != mb ? (ma < mb ? -1 : 1) : memcmp(pa, pb, ma);
		} else if (na != nb) {
			c = na ? 1 : -1;
		} else {
			c = memcmp(a, b, la < lb ? la : lb);
			if (!c)
				c = la < lb ? -1 : la > lb;
		}
		if (c)
			return c < 0 ? -1 : 1;
		a += la;
		b += lb;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
	}
}

int eb_version_cmp(const struct eb_version *a, const struct eb_version *b)
{
	int c = cmp_public(a, b);

	return c ? c : cmp_local(a->local, b->local);
}

char *eb_version_to_string(const struct eb_version *v)
{
	static const char *const pre_str[] = { "", "a", "b", "rc" };
	struct eb_buf b;
	size_t i;

	eb_buf_init(&b, 0);
	if (v->epoch)
		eb_buf_putf(&b, "%lu!", v->epoch);
	for (i = 0; i < v->nrelease; i++)
		eb_buf_putf(&b, i ? ".%lu" : "%lu", v->release[i]);
	if (v->pre != EB_PRE_NONE)
		eb_buf_putf(&b, "%s%lu", pre_str[v->pre], v->pre_n);
	if (v->has_post)
		eb_buf_putf(&b, ".post%lu", v->post);
	if (v->has_dev)
		eb_buf_putf(&b, ".dev%lu", v->dev);
	if (v->local)
		eb_buf_putf(&b, "+%s", v->local);
	return eb_buf_detach(&b, NULL);
}

int eb_version_is_prerelease(const struct eb_version *v)
{
	return v->pre != EB_PRE_NONE || v->has_dev;
}

/* --- specifiers --------------------------------------------------------- */

const char *eb_op_str(enum eb_op op)
{
	switch (op) {
	case EB_OP_EQ:
		return "==";
	case EB_OP_NE:
		return "!=";
	case EB_OP_LT:
		return "<";
	case EB_OP_LE:
		return "<=";
	case EB_OP_GT:
		return ">";
	case EB_OP_GE:
		return ">=";
	case EB_OP_COMPAT:
		return "~=";
	case EB_OP_ARBITRARY:
		return "===";
	}
	return "?";
}

static int is_op_char(char c)
{
	return c == '=' || c == '!' || c == '<' || c == '>' || c == '~';
}

/* Operator at s[*i]; longest spelling first so "===" is not read as "==". */
static int scan_op(const char *s, size_t *i, size_t end, enum eb_op *op)
{
	static const struct {
		const char *text;
		enum eb_op op;
	} ops[] = {
		{ "===", EB_OP_ARBITRARY }, { "==", EB_OP_EQ }, { "!=", EB_OP_NE },
		{ "~=", EB_OP_COMPAT },     { "<=", EB_OP_LE }, { ">=", EB_OP_GE },
		{ "<", EB_OP_LT },          { ">", EB_OP_GT },
	};
	size_t k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].text);
		if (end - *i >= n && memcmp(s + *i, ops[k].text, n) == 0) {
			*op = ops[k].op;
			*i += n;
			return 0;
		}
	}
	return -1;
}

/* Does v match "==<prefix>.*" where prefix is epoch!rel[0..n)?  The range
 * [prefix.dev0, next-prefix.dev0) is exactly "same epoch and the release,
 * zero-padded, starts with prefix", whatever pre/post/dev/local v has. */
static int prefix_match(const struct eb_version *v, unsigned long epoch,
			const unsigned long *rel, size_t n)
{
	size_t i;

	if (v->epoch != epoch)
		return 0;
	for (i = 0; i < n; i++)
		if ((i < v->nrelease ? v->release[i] : 0) != rel[i])
			return 0;
	return 1;
}

/* Same epoch, release (padded) and pre-release: v is V itself, a local or
 * post release of V, or a dev release of one of those. */
static int same_through_pre(const struct eb_version *a, const struct eb_version *b)
{
	return a->epoch == b->epoch &&
	       cmp_release(a->release, a->nrelease, b->release, b->nrelease) == 0 &&
	       a->pre == b->pre && (a->pre == EB_PRE_NONE || a->pre_n == b->pre_n);
}

static int trimmed_ieq(const char *a, const char *b)
{
	size_t la, lb, k;

	while (is_ws(*a))
		a++;
	while (is_ws(*b))
		b++;
	la = strlen(a);
	lb = strlen(b);
	while (la && is_ws(a[la - 1]))
		la--;
	while (lb && is_ws(b[lb - 1]))
		lb--;
	if (la != lb)
		return 0;
	for (k = 0; k < la; k++)
		if (to_lower(a[k]) != to_lower(b[k]))
			return 0;
	return 1;
}

int eb_specifier_contains(const struct eb_specifier *sp, const struct eb_version *v,
			  const char *raw_version)
{
	const struct eb_version *V = &sp->version;
	struct eb_version bound;
	int r;

	switch (sp->op) {
	case EB_OP_ARBITRARY:
		if (raw_version)
			return trimmed_ieq(raw_version, sp->raw);
		{
			char *s = eb_version_to_string(v);
			r = trimmed_ieq(s, sp->raw);
			free(s);
			return r;
		}
	case EB_OP_EQ:
	case EB_OP_NE:
		if (sp->wildcard)
			r = prefix_match(v, V->epoch, V->release, V->nrelease);
		else if (V->local)
			r = eb_version_cmp(v, V) == 0;
		else
			r = cmp_public(v, V) == 0;
		return sp->op == EB_OP_EQ ? r : !r;
	case EB_OP_LE:
		return cmp_public(v, V) <= 0;
	case EB_OP_GE:
		return eb_version_cmp(v, V) >= 0;
	case EB_OP_LT:
		/* "<V" must not admit V's own pre-releases (<3.1 rejects
		 * 3.1.dev0) unless V is one: compare against V.dev0. */
		bound = *V;
		if (!eb_version_is_prerelease(V)) {
			bound.has_dev = 1;
			bound.dev = 0;
		}
		bound.local = NULL;
		return eb_version_cmp(v, &bound) < 0;
	case EB_OP_GT:
		if (eb_version_cmp(v, V) <= 0)
			return 0;
		/* ">V" excludes V's local versions, and unless V is a dev or post
		 * release also V's post releases (>1.0 rejects 1.0.post1). */
		if (V->has_dev || V->has_post)
			return cmp_public(v, V) != 0;
		return !same_through_pre(v, V);
	case EB_OP_COMPAT:
		/* ~=1.4.5 is >=1.4.5,==1.4.* */
		return eb_version_cmp(v, V) >= 0 &&
		       prefix_match(v, V->epoch, V->release, V->nrelease ? V->nrelease - 1 : 0);
	}
	return 0;
}

int eb_specifier_set_contains(const struct eb_specifier_set *set, const struct eb_version *v,
			      const char *raw_version)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (!eb_specifier_contains(&set->items[i], v, raw_version))
			return 0;
	return 1;
}

struct sparse {
	const char *s;
	struct eb_error **err;
};

static int spec_fail(struct sparse *p, size_t at, const char *hint, const char *fmt, ...)
	EB_PRINTF(4, 5);

static int spec_fail(struct sparse *p, size_t at, const char *hint, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = eb_error_vset_col(p->err, EB_EINVALID, (unsigned)at + 1, hint, fmt, ap);
	va_end(ap);
	return r;
}

/* One specifier from s[i..end) (end = the next comma or the end). */
static int parse_one(struct sparse *p, size_t i, size_t end, struct eb_specifier *out)
{
	const char *s = p->s;
	struct eb_specifier sp;
	size_t opat, vb, ve, k;
	int r;

	memset(&sp, 0, sizeof(sp));
	while (i < end && is_ws(s[i]))
		i++;
	while (end > i && is_ws(s[end - 1]))
		end--;
	opat = i;
	if (scan_op(s, &i, end, &sp.op) < 0) {
		if (i < end && is_op_char(s[i]))
			return spec_fail(p, i, "operators are ==, !=, <, <=, >, >=, ~= and ===",
					 "unknown version operator in '%.*s'", (int)(end - opat),
					 s + opat);
		return spec_fail(p, i, "write '==1.0' to pin, '>=1.0' for a minimum",
				 "missing version operator before '%.*s'", (int)(end - opat),
				 s + opat);
	}
	sp.col = (unsigned)opat + 1;
	while (i < end && is_ws(s[i]))
		i++;
	vb = i;
	ve = end;
	if (vb == ve)
		return spec_fail(p, vb, NULL, "missing version after '%s'", eb_op_str(sp.op));
	/* "1.0 <2" is a forgotten comma, worth saying so rather than "invalid
	 * version". */
	for (k = vb; k < ve; k++) {
		if (!is_ws(s[k]))
			continue;
		while (k < ve && is_ws(s[k]))
			k++;
		if (is_op_char(s[k]))
			return spec_fail(p, k, NULL, "missing ',' before '%.*s'", (int)(ve - k),
					 s + k);
		if (sp.op == EB_OP_ARBITRARY)
			return spec_fail(p, k, NULL, "whitespace in arbitrary version '%.*s'",
					 (int)(ve - vb), s + vb);
		break;
	}
	sp.raw = eb_xstrndup(s + vb, ve - vb);

	if (sp.op == EB_OP_ARBITRARY) {
		for (k = vb; k < ve; k++)
			if (s[k] == ';' || s[k] == ')') {
				r = spec_fail(p, k, NULL, "unexpected '%c' in arbitrary version '%s'",
					      s[k], sp.raw);
				goto fail;
			}
		*out = sp;
		return 0;
	}

	if (ve - vb >= 2 && s[ve - 2] == '.' && s[ve - 1] == '*') {
		sp.wildcard = 1;
		if (sp.op != EB_OP_EQ && sp.op != EB_OP_NE) {
			r = spec_fail(p, ve - 2, "prefix matching works only with '==' and '!='",
				      "'.*' not allowed with '%s'", eb_op_str(sp.op));
			goto fail;
		}
		ve -= 2;
		if (ve > vb && is_ws(s[ve - 1])) {
			r = spec_fail(p, ve - 1, NULL, "unexpected space before '.*' in '%s%s'",
				      eb_op_str(sp.op), sp.raw);
			goto fail;
		}
	}
	if ((r = parse_version(&sp.version, s, vb, ve, p->err)) < 0)
		goto fail;

	if (sp.wildcard) {
		const char *what = NULL;
		if (sp.version.local)
			what = "a local version label";
		else if (sp.version.has_dev)
			what = "a dev release";
		else if (sp.version.has_post)
			what = "a post release";
		else if (sp.version.pre != EB_PRE_NONE)
			what = "a pre-release";
		if (what) {
			r = spec_fail(p, ve, "use '.*' right after the release numbers, as in '==1.0.*'",
				      "'.*' cannot follow %s in '%s%s'", what,
				      eb_op_str(sp.op), sp.raw);
			goto fail;
		}
	}
	if (sp.version.local && sp.op != EB_OP_EQ && sp.op != EB_OP_NE) {
		const char *plus = memchr(s + vb, '+', ve - vb);
		r = spec_fail(p, plus ? (size_t)(plus - s) : vb,
			      "local labels such as '+cu118' work only with '==', '!=' and '==='",
			      "local version label not allowed with '%s'", eb_op_str(sp.op));
		goto fail;
	}
	if (sp.op == EB_OP_COMPAT && sp.version.nrelease < 2) {
		r = spec_fail(p, vb, "write '~=1.0' (meaning >=1.0,==1.*), not '~=1'",
			      "'~=' needs at least two release numbers, got '%s'", sp.raw);
		goto fail;
	}
	*out = sp;
	return 0;
fail:
	eb_version_release(&sp.version);
	free(sp.raw);
	return r;
}

int eb_specifier_set_parse(struct eb_specifier_set *out, const char *s, size_t len,
			   struct eb_error **err)
{
	struct eb_specifier_set set = EB_SPECIFIER_SET_INIT;
	struct sparse p = { s, err };
	size_t i = 0;
	int r;

	while (i < len && is_ws(s[i]))
		i++;
	if (i == len) {
		*out = set;
		return 0;
	}
	for (;;) {
		size_t end = i, k;
		struct eb_specifier sp;

		while (end < len && s[end] != ',')
			end++;
		for (k = i; k < end && is_ws(s[k]); k++)
			;
		if (k == end) {
			r = spec_fail(&p, k < len ? k : i, NULL, "empty version specifier");
			goto fail;
		}
		if ((r = parse_one(&p, i, end, &sp)) < 0)
			goto fail;
		EB_ALLOC_GROW(set.items, set.n + 1, set.cap);
		set.items[set.n++] = sp;
		if (end == len)
			break;
		i = end + 1;
		/* one trailing comma is allowed (PEP 508, 2024) */
		for (k = i; k < len && is_ws(s[k]); k++)
			;
		if (k == len)
			break;
	}
	*out = set;
	return 0;
fail:
	eb_specifier_set_release(&set);
	return r;
}

void eb_specifier_set_release(struct eb_specifier_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		eb_version_release(&set->items[i].version);
		free(set->items[i].raw);
	}
	free(set->items);
	set->items = NULL;
	set->n = set->cap = 0;
}

char *eb_specifier_set_to_string(const struct eb_specifier_set *set)
{
	struct eb_buf b;
	size_t i;

	eb_buf_init(&b, 0);
	for (i = 0; i < set->n; i++)
		eb_buf_putf(&b, "%s%s%s", i ? "," : "", eb_op_str(set->items[i].op),
				  set->items[i].raw);
	return eb_buf_detach(&b, NULL);
}

int eb_specifier_set_allows_prereleases(const struct eb_specifier_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		const struct eb_specifier *sp = &set->items[i];
		if (sp->op == EB_OP_NE || sp->op == EB_OP_ARBITRARY || sp->wildcard)
			continue;
		if (eb_version_is_prerelease(&sp->version))
			return 1;
	}
	return 0;
}
