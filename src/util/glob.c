/*
 * glob.c - component-wise fnmatch(3) with "**", as dockerignore and
 * gitignore read patterns.  Matching is a table over (pattern component,
 * path component), so a pattern of many "**" costs P x S steps, not an
 * exponential backtrack: patterns come from pull requests.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/glob.h"

/* Most components looked at in a pattern or path; deeper paths do not
 * match (a real tree is never this deep, and the table stays small). */
#define GLOB_MAX_PARTS 256

int eb_glob_valid(const char *p, const char **why)
{
	for (; *p; p++) {
		if (*p == '\\') {
			if (!p[1]) {
				*why = "ends with a lone '\\'";
				return 0;
			}
			p++;
		} else if (*p == '[') {
			const char *q = p + 1;
			if (*q == '!' || *q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']')
				q++;
			if (!*q) {
				*why = "has an unclosed '['";
				return 0;
			}
			p = q;
		}
	}
	return 1;
}

/* Split s at '/' into at most GLOB_MAX_PARTS pieces of buf (a copy). */
static size_t split(char *buf, char **parts)
{
	size_t n = 0;
	char *p = buf;

	for (;;) {
		char *s = strchr(p, '/');
		if (s)
			*s = '\0';
		if (*p) {
			if (n == GLOB_MAX_PARTS)
				return GLOB_MAX_PARTS + 1;
			parts[n++] = p;
		}
		if (!s)
			return n;
		p = s + 1;
	}
}

int eb_glob_match(const char *pattern, const char *path)
{
	char *pb = eb_xstrdup(pattern), *sb = eb_xstrdup(path);
	char *pp[GLOB_MAX_PARTS], *sp[GLOB_MAX_PARTS];
	size_t np = split(pb, pp), ns = split(sb, sp);
	unsigned char *t = NULL;
	int r = 0;

	if (np > GLOB_MAX_PARTS || ns > GLOB_MAX_PARTS)
		goto done;
	/* t[i][j]: pattern parts i.. match path parts j.. */
	t = eb_xcalloc((np + 1) * (ns + 1), 1);
	t[np * (ns + 1) + ns] = 1;
	for (size_t i = np + 1; i-- > 0;) {
		for (size_t j = ns + 1; j-- > 0;) {
			unsigned char *c = &t[i * (ns + 1) + j];
			if (i == np) {
				*c = j == ns;
			} else if (strcmp(pp[i], "**") == 0) {
				*c = t[(i + 1) * (ns + 1) + j] || (j < ns && t[i * (ns + 1) + j + 1]);
			} else {
				*c = j < ns && fnmatch(pp[i], sp[j], 0) == 0 &&
				     t[(i + 1) * (ns + 1) + j + 1];
			}
		}
	}
	r = t[0];
done:
	free(t);
	free(pb);
	free(sb);
	return r;
}
