/*
 * fuzz_dockerfile.c - libFuzzer target for Dockerfiles/Containerfiles:
 * eb_dockerfile_parse (with a build-arg override when the input is long
 * enough), the FROM rules, and the invariants of the parsed indexes.
 */
#include "fuzz.h"

#include "pin/dockerfile.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const args[] = { "BASE=python:3.11-slim", "TAG=", NULL };
	char *text = eb_fuzz_exact(data, size);
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	struct eb_dockerfile *df = NULL;
	int rc;

	if (size & 1)
		rc = eb_dockerfile_parse_args(&df, "Dockerfile", text, size, args, &diags, &err);
	else
		rc = eb_dockerfile_parse(&df, "Dockerfile", text, size, &diags, &err);
	if (rc == 0) {
		EB_FUZZ_ASSERT(df != NULL);
		eb_dockerfile_check_from(df, "Dockerfile", &diags);
		for (size_t i = 0; i < df->nfroms; i++)
			if (df->froms[i].is_stage_ref)
				EB_FUZZ_ASSERT(df->froms[i].stage_ref < i);
		for (size_t i = 0; i < df->npips; i++) {
			const struct eb_dockerfile_pip *p = &df->pips[i];
			EB_FUZZ_ASSERT(p->first_arg + p->nargs <= df->npip_args);
			EB_FUZZ_ASSERT(p->first_opt + p->nopts <= df->npip_options);
			EB_FUZZ_ASSERT(df->nfroms == 0 || p->stage < df->nfroms);
		}
		for (size_t i = 0; i < df->npip_args; i++)
			EB_FUZZ_ASSERT(df->pip_args[i].install < df->npips);
	}
	eb_diag_list_sort(&diags);
	eb_dockerfile_free(df);
	eb_diag_list_release(&diags);
	eb_error_free(err);
	free(text);
	return 0;
}
