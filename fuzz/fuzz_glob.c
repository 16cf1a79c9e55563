/*
 * fuzz_glob.c - libFuzzer target for util/glob (the `exclude` and
 * .envbuildignore patterns of a spec from a pull request): the first line
 * is a pattern, the second a path.  Checks that a malformed pattern is
 * refused with a reason, that "**" before a pattern still
 * matches what the pattern matches, and that matching stays fast however
 * many "**" the pattern holds (the table is P x S).
 */
#include "fuzz.h"

#include "util/glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nl = memchr(p, '\n', size);
	size_t lp = nl ? (size_t)(nl - p) : size;
	char *pat = eb_fuzz_cstr(data, lp);
	char *path = nl ? eb_fuzz_cstr((const uint8_t *)nl + 1, size - lp - 1) : eb_fuzz_cstr(data, 0);
	const char *why = NULL;

	if (eb_glob_valid(pat, &why)) {
		char *deep = malloc(strlen(pat) + 4);
		int m = eb_glob_match(pat, path);
		memcpy(deep, "**/", 3);
		strcpy(deep + 3, pat);
		if (m)
			EB_FUZZ_ASSERT(eb_glob_match(deep, path));
		free(deep);
	} else {
		EB_FUZZ_ASSERT(why != NULL);
	}
	free(pat);
	free(path);
	return 0;
}
