/*
 * fuzz_version.c - libFuzzer target for PEP 440: the input's lines are a
 * version, a second version and a specifier set (eb_version_parse,
 * eb_specifier_set_parse).  Checks what PEP 440 promises: the normal form
 * parses back to an equal version, comparison is antisymmetric, and a
 * specifier set prints back to a set that prints the same.
 */
#include "fuzz.h"

#include "pin/version.h"

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

/* Parse s[0..len) and check its round trip; returns 1 when it parsed. */
static int version(struct eb_version *v, const char *s, size_t len)
{
	struct eb_error *err = NULL;
	char *copy = eb_fuzz_exact((const uint8_t *)s, len);
	int ok = eb_version_parse(v, copy, len, &err) == 0;

	free(copy);
	if (!ok) {
		EB_FUZZ_ASSERT(err != NULL);
		eb_error_free(err);
		return 0;
	}
	char *norm = eb_version_to_string(v);
	struct eb_version again, dup;
	EB_FUZZ_ASSERT(eb_version_parse(&again, norm, strlen(norm), NULL) == 0);
	EB_FUZZ_ASSERT(eb_version_cmp(v, &again) == 0);
	char *norm2 = eb_version_to_string(&again);
	EB_FUZZ_ASSERT(strcmp(norm, norm2) == 0);
	eb_version_copy(&dup, v);
	EB_FUZZ_ASSERT(eb_version_cmp(v, &dup) == 0);
	(void)eb_version_is_prerelease(v);
	eb_version_release(&dup);
	eb_version_release(&again);
	free(norm);
	free(norm2);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	const char *line[3];
	size_t len[3];
	struct eb_version a, b;
	struct eb_specifier_set set = EB_SPECIFIER_SET_INIT;
	struct eb_error *err = NULL;
	int have_a, have_b;

	for (int i = 0; i < 3; i++) {
		const char *nl = i < 2 ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		line[i] = p;
		len[i] = nl ? (size_t)(nl - p) : (size_t)(end - p);
		p = nl ? nl + 1 : end;
	}
	have_a = version(&a, line[0], len[0]);
	have_b = version(&b, line[1], len[1]);
	if (have_a && have_b)
		EB_FUZZ_ASSERT(sign(eb_version_cmp(&a, &b)) == -sign(eb_version_cmp(&b, &a)));

	char *s = eb_fuzz_exact((const uint8_t *)line[2], len[2]);
	/* the round trip goes through a C string: "===" takes any bytes
	 * (PEP 440 arbitrary equality), a NUL included, which the text form
	 * cannot carry */
	int rc = eb_specifier_set_parse(&set, s, len[2], &err);
	if (rc == 0 && !memchr(s, '\0', len[2])) {
		char *text = eb_specifier_set_to_string(&set);
		struct eb_specifier_set again = EB_SPECIFIER_SET_INIT;
		EB_FUZZ_ASSERT(eb_specifier_set_parse(&again, text, strlen(text), NULL) == 0);
		char *text2 = eb_specifier_set_to_string(&again);
		EB_FUZZ_ASSERT(strcmp(text, text2) == 0);
		(void)eb_specifier_set_allows_prereleases(&set);
		if (have_a) {
			char *raw = eb_fuzz_cstr((const uint8_t *)line[0], len[0]);
			EB_FUZZ_ASSERT(eb_specifier_set_contains(&set, &a, raw) ==
				       eb_specifier_set_contains(&again, &a, raw));
			free(raw);
		}
		eb_specifier_set_release(&again);
		free(text);
		free(text2);
	} else if (rc < 0) {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_specifier_set_release(&set);
	eb_error_free(err);
	free(s);
	if (have_a)
		eb_version_release(&a);
	if (have_b)
		eb_version_release(&b);
	return 0;
}
