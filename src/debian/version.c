/*
 * version.c - Debian version parsing and dpkg's comparison (see version.h).
 * The comparison is verrevcmp() and order() of dpkg's lib/dpkg/version.c,
 * kept line for line so the two can be read side by side.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "debian/version.h"
#include "util/alloc.h"

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* dpkg: digits sort as 0 (handled apart), letters first, '~' before
 * everything including the end of the string, other characters after
 * letters. */
static int order(int c)
{
	if (is_digit(c))
		return 0;
	else if (is_alpha(c))
		return c;
	else if (c == '~')
		return -1;
	else if (c)
		return c + 256;
	else
		return 0;
}

static int verrevcmp(const char *a, const char *b)
{
	while (*a || *b) {
		int first_diff = 0;

		while ((*a && !is_digit(*a)) || (*b && !is_digit(*b))) {
			int ac = order((unsigned char)*a);
			int bc = order((unsigned char)*b);

			if (ac != bc)
				return ac - bc;
			a++;
			b++;
		}
		while (*a == '0')
			a++;
		while (*b == '0')
			b++;
		while (is_digit(*a) && is_digit(*b)) {
			if (!first_diff)
				first_diff = *a - *b;
			a++;
			b++;
		}
		if (is_digit(*a))
			return 1;
		if (is_digit(*b))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
}

int eb_debver_cmp(const struct eb_debver *a, const struct eb_debver *b)
{
	int r;

	if (a->epoch > b->epoch)
		return 1;
	if (a->epoch < b->epoch)
		return -1;
	r = verrevcmp(a->upstream, b->upstream);
	if (r)
		return r;
	return verrevcmp(a->revision, b->revision);
}

void eb_debver_release(struct eb_debver *v)
{
	free(v->upstream);
	free(v->revision);
	v->upstream = v->revision = NULL;
	v->epoch = 0;
}

static int bad(struct eb_error **err, const char *s, const char *at, const char *what)
{
	return eb_error_set_at(err, EB_EINVALID, NULL, 0, (unsigned)(at - s) + 1,
			       "invalid Debian version '%s': %s", s, what);
}

int eb_debver_parse(struct eb_debver *out, const char *s, struct eb_error **err)
{
	const char *colon, *up, *dash, *p;
	unsigned long epoch = 0;

	memset(out, 0, sizeof(*out));
	if (!*s)
		return bad(err, s, s, "empty version");
	for (p = s; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			return bad(err, s, p, "embedded whitespace");
	colon = strchr(s, ':');
	up = s;
	if (colon) {
		if (colon == s)
			return bad(err, s, s, "empty epoch");
		for (p = s; p < colon; p++) {
			if (!is_digit(*p))
				return bad(err, s, p, "epoch is not a number");
			epoch = epoch * 10 + (unsigned long)(*p - '0');
			if (epoch > INT_MAX)
				return bad(err, s, p, "epoch is too big");
		}
		up = colon + 1;
		if (!*up)
			return bad(err, s, up, "nothing after the epoch");
	}
	dash = strrchr(up, '-');
	if (dash && !dash[1])
		return bad(err, s, dash + 1, "empty revision");
	if (dash == up)
		return bad(err, s, up, "empty upstream version");
	if (!is_digit(*up))
		return bad(err, s, up, "version does not start with a digit");
	for (p = up; *p && p != dash; p++)
		if (!is_digit(*p) && !is_alpha(*p) && !strchr(".-+~:", *p))
			return bad(err, s, p, "invalid character in upstream version");
	if (dash)
		for (p = dash + 1; *p; p++)
			if (!is_digit(*p) && !is_alpha(*p) && !strchr(".+~", *p))
				return bad(err, s, p, "invalid character in revision");
	out->epoch = (unsigned)epoch;
	out->upstream = dash ? eb_xstrndup(up, (size_t)(dash - up)) : eb_xstrdup(up);
	out->revision = eb_xstrdup(dash ? dash + 1 : "");
	return 0;
}

/* dpkg's lenient split, for strings that fail the strict parse */
static void split_lenient(struct eb_debver *v, const char *s)
{
	const char *colon = strchr(s, ':'), *up = s, *dash;
	unsigned long epoch = 0;

	if (colon) {
		for (const char *p = s; p < colon && is_digit(*p) && epoch <= INT_MAX; p++)
			epoch = epoch * 10 + (unsigned long)(*p - '0');
		up = colon + 1;
	}
	dash = strrchr(up, '-');
	v->epoch = epoch > INT_MAX ? INT_MAX : (unsigned)epoch;
	v->upstream = dash ? eb_xstrndup(up, (size_t)(dash - up)) : eb_xstrdup(up);
	v->revision = eb_xstrdup(dash ? dash + 1 : "");
}

int eb_debver_cmp_str(const char *a, const char *b)
{
	struct eb_debver va, vb;
	int r;

	if (eb_debver_parse(&va, a, NULL) < 0)
		split_lenient(&va, a);
	if (eb_debver_parse(&vb, b, NULL) < 0)
		split_lenient(&vb, b);
	r = eb_debver_cmp(&va, &vb);
	eb_debver_release(&va);
	eb_debver_release(&vb);
	return r;
}

int eb_debver_satisfies(const char *have, enum eb_debrel rel, const char *want)
{
	int r;

	if (rel == EB_REL_ANY)
		return 1;
	r = eb_debver_cmp_str(have, want);
	switch (rel) {
	case EB_REL_LT:
		return r < 0;
	case EB_REL_LE:
		return r <= 0;
	case EB_REL_EQ:
		return r == 0;
	case EB_REL_GE:
		return r >= 0;
	case EB_REL_GT:
		return r > 0;
	default:
		return 1;
	}
}

const char *eb_debrel_str(enum eb_debrel rel)
{
	static const char *const names[] = { "", "<<", "<=", "=", ">=", ">>" };
	return names[rel];
}
