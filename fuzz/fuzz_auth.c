/*
 * fuzz_auth.c - libFuzzer target for WWW-Authenticate values
 * (eb_auth_parse_challenges, then picking a challenge and reading its
 * parameters as the registry client does).
 */
#include "fuzz.h"

#include "registry/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *value = eb_fuzz_cstr(data, size);
	struct eb_auth_challenge *c = NULL;
	struct eb_error *err = NULL;
	size_t n = 0;

	if (eb_auth_parse_challenges(&c, &n, value, &err) == 0) {
		const struct eb_auth_challenge *pick = eb_auth_pick_challenge(c, n);
		for (size_t i = 0; i < n; i++) {
			EB_FUZZ_ASSERT(c[i].scheme != NULL);
			for (size_t k = 0; k < c[i].nparams; k++)
				(void)eb_auth_challenge_param(&c[i], "realm");
		}
		if (pick) {
			(void)eb_auth_challenge_param(pick, "realm");
			(void)eb_auth_challenge_param(pick, "service");
			(void)eb_auth_challenge_param(pick, "scope");
		}
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_auth_challenges_free(c, n);
	eb_error_free(err);
	free(value);
	return 0;
}
