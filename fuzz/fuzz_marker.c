/*
 * fuzz_marker.c - libFuzzer target for PEP 508 environment markers:
 * eb_marker_parse, evaluation in two environments (with and without an
 * extra), and the canonical text, which must parse back to itself.
 */
#include "fuzz.h"

#include "pin/marker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_marker *m = NULL;
	struct eb_error *err = NULL;

	if (eb_marker_parse(&m, text, size, &err) == 0) {
		struct eb_marker_env env;
		struct eb_marker *again = NULL;
		int r1 = -1, r2 = -1;
		char *canon = eb_marker_to_string(m), *canon2;

		eb_marker_env_init(&env, "3.11", "x86_64");
		if (eb_marker_eval(m, &env, &r1, &err) == 0)
			EB_FUZZ_ASSERT(r1 == 0 || r1 == 1);
		eb_error_clear(&err);
		eb_marker_env_init(&env, "3.9.18", "aarch64");
		env.extra = "socks";
		if (eb_marker_eval(m, &env, &r2, &err) == 0)
			EB_FUZZ_ASSERT(r2 == 0 || r2 == 1);
		eb_error_clear(&err);
		(void)eb_marker_vars_used(m);

		EB_FUZZ_ASSERT(eb_marker_parse(&again, canon, strlen(canon), NULL) == 0);
		canon2 = eb_marker_to_string(again);
		EB_FUZZ_ASSERT(strcmp(canon, canon2) == 0);
		EB_FUZZ_ASSERT(eb_marker_vars_used(m) == eb_marker_vars_used(again));
		eb_marker_free(again);
		free(canon);
		free(canon2);
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_marker_free(m);
	eb_error_free(err);
	free(text);
	return 0;
}
