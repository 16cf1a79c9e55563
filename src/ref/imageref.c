/*
 * imageref.c - parsing and normalising image references (see imageref.h).
 *
 * A hand-written scanner rather than the regular expressions of
 * distribution/reference, so that every error can name the offending part
 * and point at its column.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/imageref.h"
#include "util/alloc.h"

#define HUB_DOMAIN "docker.io"
#define HUB_LEGACY_DOMAIN "index.docker.io"
#define HUB_OFFICIAL_PREFIX "library/"

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_alnum(char c)
{
	return is_lower_alnum(c) || is_upper(c);
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_word(char c)
{
	return is_alnum(c) || c == '_';
}

/* Error at 1-based column off+1 of the reference. */
#define FAIL(off, ...) eb_error_set_at(err, EB_EINVALID, NULL, 0, (unsigned)(off) + 1, __VA_ARGS__)

/* A 64-character lowercase hex string is an image ID, not a name: docker
 * refuses it as a repository name so the two can never be confused. */
static int is_identifier(const char *s, size_t n)
{
	if (n != 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return 1;
}

/* Whether the first path component names a registry (normalize.go). */
static int is_domain_candidate(const char *s, size_t n)
{
	if (n == 9 && memcmp(s, "localhost", 9) == 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == ':' || is_upper(s[i]))
			return 1;
	return 0;
}

/* domain := (domain-name | '[' ipv6 ']') [':' port]
 * domain-name := component ('.' component)*
 * component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9] */
static int check_domain(const char *s, size_t n, struct eb_error **err)
{
	size_t i = 0;

	if (n > 0 && s[0] == '[') {
		i = 1;
		while (i < n && (is_hex(s[i]) || s[i] == ':'))
			i++;
		if (i == 1 || i >= n || s[i] != ']')
			return FAIL(i, "invalid IPv6 address in domain '%.*s'", (int)n, s);
		i++;
	} else {
		for (;;) {
			size_t b = i;
			while (i < n && (is_alnum(s[i]) || s[i] == '-'))
				i++;
			if (i == b)
				return FAIL(i, "invalid domain '%.*s'", (int)n, s);
			if (s[b] == '-')
				return FAIL(b, "domain component '%.*s' must not start with '-'",
					    (int)(i - b), s + b);
			if (s[i - 1] == '-')
				return FAIL(i - 1, "domain component '%.*s' must not end with '-'",
					    (int)(i - b), s + b);
			if (i < n && s[i] == '.') {
				i++;
				continue;
			}
			break;
		}
	}
	if (i < n && s[i] == ':') {
		size_t b = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		if (b == n)
			return FAIL(b - 1, "missing port after ':' in domain '%.*s'", (int)n, s);
		if (i == b || i < n)
			return FAIL(b, "invalid port '%.*s' in domain '%.*s'", (int)(n - b), s + b,
				    (int)n, s);
	}
	if (i < n)
		return FAIL(i, "invalid domain '%.*s'", (int)n, s);
	return 0;
}

/* path := component ('/' component)*
 * component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := '.' | '_' |
 * '__' | '-'+.  `base` is the offset of s inside the whole reference. */
static int check_path(const char *s, size_t n, size_t base, struct eb_error **err)
{
	size_t i;

	/* Character classes first: the most common mistake is uppercase, and
	 * it deserves its own message rather than "invalid separator". */
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_upper(s[i]))
			return FAIL(base + i, "repository name '%.*s' must be lowercase", (int)n, s);
		if (is_lower_alnum(s[i]) || c == '.' || c == '_' || c == '-' || c == '/')
			continue;
		if (c >= 0x20 && c < 0x7f)
			return FAIL(base + i, "invalid character '%c' in repository name '%.*s'", c,
				    (int)n, s);
		return FAIL(base + i, "invalid byte 0x%02x in repository name", c);
	}

	i = 0;
	for (;;) {
		size_t b = i;
		if (i >= n || s[i] == '/')
			return FAIL(base + i, "empty component in repository name '%.*s'", (int)n, s);
		while (i < n && s[i] != '/') {
			size_t sb;
			if (!is_lower_alnum(s[i])) {
				size_t e = b;
				while (e < n && s[e] != '/')
					e++;
				return FAIL(base + i,
					    "repository name component '%.*s' must start with a "
					    "lowercase letter or digit",
					    (int)(e - b), s + b);
			}
			while (i < n && is_lower_alnum(s[i]))
				i++;
			if (i >= n || s[i] == '/')
				break;
			sb = i;
			while (i < n && (s[i] == '.' || s[i] == '_' || s[i] == '-'))
				i++;
			if (i >= n || s[i] == '/') {
				return FAIL(base + sb,
					    "repository name component '%.*s' must end with a "
					    "lowercase letter or digit",
					    (int)(i - b), s + b);
			}
			/* one '.', one or two '_', or any number of '-' */
			if (!((i - sb == 1) || (i - sb == 2 && s[sb] == '_' && s[sb + 1] == '_') ||
			      strspn(s + sb, "-") >= i - sb))
				return FAIL(base + sb, "invalid separator '%.*s' in repository name '%.*s'",
					    (int)(i - sb), s + sb, (int)n, s);
		}
		if (i >= n)
			return 0;
		i++; /* '/' */
	}
}

/* tag := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
static int check_tag(const char *s, size_t n, size_t base, struct eb_error **err)
{
	if (n == 0)
		return FAIL(base - 1, "missing tag after ':'");
	if (n > EB_IMAGEREF_TAG_MAX)
		return FAIL(base, "tag '%.*s' is longer than %d characters", (int)n, s,
			    EB_IMAGEREF_TAG_MAX);
	for (size_t i = 0; i < n; i++) {
		if (is_word(s[i]) || (i > 0 && (s[i] == '.' || s[i] == '-')))
			continue;
		return FAIL(base + i, "invalid tag '%.*s'", (int)n, s);
	}
	return 0;
}

/* digest := algorithm ':' encoded, algorithm := [A-Za-z][A-Za-z0-9]*
 * ([-_+.][A-Za-z][A-Za-z0-9]*)*, then the OCI rule for the encoded part. */
static int check_digest(const char *s, size_t n, size_t base, struct eb_error **err)
{
	const char *colon = memchr(s, ':', n);
	size_t alen, elen, want = 0;
	const char *enc;

	if (n == 0)
		return FAIL(base - 1, "missing digest after '@'");
	if (!colon)
		return FAIL(base, "invalid digest '%.*s': expected algorithm:hex", (int)n, s);
	alen = (size_t)(colon - s);
	if (alen == 0)
		return FAIL(base, "invalid digest '%.*s': expected algorithm:hex", (int)n, s);
	for (size_t i = 0; i < alen;) {
		/* a component: a letter, then letters and digits */
		if (!is_alnum(s[i]) || is_digit(s[i]))
			return FAIL(base + i, "invalid digest algorithm '%.*s'", (int)alen, s);
		while (i < alen && is_alnum(s[i]))
			i++;
		if (i < alen && !strchr("-_+.", s[i]))
			return FAIL(base + i, "invalid digest algorithm '%.*s'", (int)alen, s);
		if (i < alen && ++i == alen)
			return FAIL(base + i - 1, "invalid digest algorithm '%.*s'", (int)alen, s);
	}

	enc = colon + 1;
	elen = n - alen - 1;
	if (alen == 6 && memcmp(s, "sha256", 6) == 0)
		want = 64;
	else if (alen == 6 && memcmp(s, "sha512", 6) == 0)
		want = 128;
	else
		return FAIL(base, "unsupported digest algorithm '%.*s'", (int)alen, s);
	for (size_t i = 0; i < elen; i++) {
		if (is_digit(enc[i]) || (enc[i] >= 'a' && enc[i] <= 'f'))
			continue;
		if (is_hex(enc[i]))
			return FAIL(base + alen + 1 + i, "%.*s digest must be lowercase hex",
				    (int)alen, s);
		return FAIL(base + alen + 1 + i, "invalid character in %.*s digest '%.*s'",
			    (int)alen, s, (int)elen, enc);
	}
	if (elen != want)
		return FAIL(base + alen + 1, "%.*s digest has %zu hex characters, expected %zu",
			    (int)alen, s, elen, want);
	return 0;
}

int eb_imageref_parse(struct eb_imageref *out, const char *s, struct eb_error **err)
{
	size_t n = strlen(s), name_end, dom_len = 0, path_off, path_end;
	const char *at, *slash, *colon;
	int rc;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return FAIL(0, "empty image reference");
	if (is_identifier(s, n)) {
		rc = FAIL(0, "repository name '%s' is a 64-character hex string", s);
		eb_error_hint(err, "to pin by digest, write name@sha256:%s", s);
		return rc;
	}

	/* '@' cannot occur before the digest, ':' cannot occur in a path and
	 * '/' cannot occur in a tag: the first of each splits the reference. */
	at = strchr(s, '@');
	name_end = at ? (size_t)(at - s) : n;
	if (name_end == 0)
		return FAIL(0, "missing repository name before '@'");
	slash = memchr(s, '/', name_end);
	if (slash && is_domain_candidate(s, (size_t)(slash - s))) {
		dom_len = (size_t)(slash - s);
		if ((rc = check_domain(s, dom_len, err)) < 0)
			return rc;
	}
	path_off = dom_len ? dom_len + 1 : 0;
	colon = memchr(s + path_off, ':', name_end - path_off);
	path_end = colon ? (size_t)(colon - s) : name_end;
	if (path_end == 0)
		return FAIL(0, "missing repository name before ':'");
	if ((rc = check_path(s + path_off, path_end - path_off, path_off, err)) < 0)
		return rc;
	if (colon && (rc = check_tag(colon + 1, name_end - path_end - 1, path_end + 1, err)) < 0)
		return rc;
	if (at && (rc = check_digest(at + 1, n - name_end - 1, name_end + 1, err)) < 0)
		return rc;
	if (dom_len == 0 || (dom_len == strlen(HUB_LEGACY_DOMAIN) &&
			     memcmp(s, HUB_LEGACY_DOMAIN, dom_len) == 0))
		out->domain = eb_xstrdup(HUB_DOMAIN);
	else
		out->domain = eb_xstrndup(s, dom_len);
	if (strcmp(out->domain, HUB_DOMAIN) == 0 &&
	    !memchr(s + path_off, '/', path_end - path_off))
		out->path = eb_xasprintf(HUB_OFFICIAL_PREFIX "%.*s", (int)(path_end - path_off),
					 s + path_off);
	else
		out->path = eb_xstrndup(s + path_off, path_end - path_off);
	/* distribution/reference limits the normalised path, so that the
	 * fully-qualified form always parses back */
	if (strlen(out->path) > EB_IMAGEREF_NAME_MAX) {
		eb_imageref_release(out);
		return FAIL(path_off, "repository name is longer than %d characters",
			    EB_IMAGEREF_NAME_MAX);
	}
	if (colon)
		out->tag = eb_xstrndup(colon + 1, name_end - path_end - 1);
	if (at)
		out->digest = eb_xstrdup(at + 1);
	return 0;
}

void eb_imageref_release(struct eb_imageref *r)
{
	if (!r)
		return;
	free(r->domain);
	free(r->path);
	free(r->tag);
	free(r->digest);
	memset(r, 0, sizeof(*r));
}

static char *format(const char *domain, const char *path, const struct eb_imageref *r)
{
	return eb_xasprintf("%s%s%s%s%s%s%s", domain ? domain : "", domain ? "/" : "", path,
			    r->tag ? ":" : "", r->tag ? r->tag : "", r->digest ? "@" : "",
			    r->digest ? r->digest : "");
}

char *eb_imageref_to_string(const struct eb_imageref *r)
{
	return format(r->domain, r->path, r);
}

char *eb_imageref_familiar(const struct eb_imageref *r)
{
	const char *path = r->path;

	if (strcmp(r->domain, HUB_DOMAIN) != 0)
		return format(r->domain, path, r);
	/* the short form must read back as the same reference: a first
	 * component that looks like a registry ("a.b/c", "localhost/x") or a
	 * bare 64-hex name keeps its "docker.io/" */
	{
		size_t first = strcspn(path, "/");
		if (path[first] == '/' &&
		    (memchr(path, '.', first) || memchr(path, ':', first) ||
		     (first == 9 && strncmp(path, "localhost", 9) == 0)))
			return format(r->domain, path, r);
	}
	/* only "library/x" shortens: "library/x/y" would read as org "library" */
	if (strncmp(path, HUB_OFFICIAL_PREFIX, strlen(HUB_OFFICIAL_PREFIX)) == 0 &&
	    !strchr(path + strlen(HUB_OFFICIAL_PREFIX), '/'))
		path += strlen(HUB_OFFICIAL_PREFIX);
	if (strlen(path) == 64 && strspn(path, "0123456789abcdef") == 64)
		return format(r->domain, r->path, r);
	return format(NULL, path, r);
}

char *eb_imageref_name(const struct eb_imageref *r)
{
	return eb_xasprintf("%s/%s", r->domain, r->path);
}

int eb_imageref_is_scratch(const char *s)
{
	return s && strcmp(s, "scratch") == 0;
}
