/*
 * fuzz_imageref.c - libFuzzer target for image references
 * (eb_imageref_parse): the fully-qualified form must parse back to the
 * same reference.
 */
#include "fuzz.h"

#include "ref/imageref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = eb_fuzz_cstr(data, size);
	struct eb_imageref ref, again;
	struct eb_error *err = NULL;

	(void)eb_imageref_is_scratch(s);
	if (eb_imageref_parse(&ref, s, &err) == 0) {
		char *full = eb_imageref_to_string(&ref);
		char *fam = eb_imageref_familiar(&ref);
		char *name = eb_imageref_name(&ref);

		EB_FUZZ_ASSERT(ref.domain && ref.path);
		EB_FUZZ_ASSERT(eb_imageref_parse(&again, full, NULL) == 0);
		char *full2 = eb_imageref_to_string(&again);
		EB_FUZZ_ASSERT(strcmp(full, full2) == 0);
		eb_imageref_release(&again);
		EB_FUZZ_ASSERT(eb_imageref_parse(&again, fam, NULL) == 0);
		char *full3 = eb_imageref_to_string(&again);
		EB_FUZZ_ASSERT(strcmp(full, full3) == 0);
		eb_imageref_release(&again);
		free(full);
		free(full2);
		free(full3);
		free(fam);
		free(name);
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_imageref_release(&ref);
	eb_error_free(err);
	free(s);
	return 0;
}
