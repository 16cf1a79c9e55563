/*
 * fuzz_debdeps.c - libFuzzer target for Debian relationship fields and
 * versions: line 1 is a relationship field (eb_debdeps_parse), lines 2
 * and 3 are versions.  Invariants: the canonical form of a field parses
 * back to the same canonical form; version comparison is antisymmetric
 * and reflexive, and a version that parses strictly compares equal to
 * itself with an explicit "0:" epoch.
 */
#include "fuzz.h"

#include "debian/depends.h"
#include "debian/version.h"

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *line[3];

	for (int i = 0; i < 3; i++) {
		const char *nl = i < 2 ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		const char *e = nl ? nl : end;
		line[i] = eb_fuzz_cstr((const uint8_t *)p, (size_t)(e - p));
		p = nl ? nl + 1 : end;
	}

	for (int alts = 0; alts < 2; alts++) {
		struct eb_debdeps d, again;
		struct eb_error *err = NULL;
		if (eb_debdeps_parse(&d, line[0], alts, &err) == 0) {
			char *s = eb_debdeps_to_string(&d);
			EB_FUZZ_ASSERT(eb_debdeps_parse(&again, s, alts, NULL) == 0);
			char *s2 = eb_debdeps_to_string(&again);
			EB_FUZZ_ASSERT(strcmp(s, s2) == 0);
			free(s);
			free(s2);
			eb_debdeps_release(&again);
			eb_debdeps_release(&d);
		} else {
			EB_FUZZ_ASSERT(err && err->msg);
			EB_FUZZ_ASSERT(d.groups == NULL);
		}
		eb_error_free(err);
	}

	EB_FUZZ_ASSERT(sign(eb_debver_cmp_str(line[1], line[2])) ==
		       -sign(eb_debver_cmp_str(line[2], line[1])));
	EB_FUZZ_ASSERT(eb_debver_cmp_str(line[1], line[1]) == 0);
	struct eb_debver v;
	if (eb_debver_parse(&v, line[1], NULL) == 0) {
		if (!strchr(line[1], ':')) {
			char *e0 = eb_xasprintf("0:%s", line[1]);
			EB_FUZZ_ASSERT(eb_debver_cmp_str(e0, line[1]) == 0);
			free(e0);
		}
		eb_debver_release(&v);
	}
	for (int i = 0; i < 3; i++)
		free(line[i]);
	return 0;
}
