/*
 * fuzz_wheel_meta.c - libFuzzer target for a wheel's WHEEL file
 * (eb_metadata_parse_wheel).
 */
#include "fuzz.h"

#include "python/metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_wheel_meta w;
	struct eb_error *err = NULL;

	memset(&w, 0, sizeof(w));
	if (eb_metadata_parse_wheel(&w, text, size, &err) == 0) {
		for (size_t i = 0; i < w.ntags; i++)
			EB_FUZZ_ASSERT(w.tags[i] != NULL);
	} else {
		EB_FUZZ_ASSERT(err != NULL);
		EB_FUZZ_ASSERT(w.ntags == 0 && w.generator == NULL);
	}
	eb_wheel_meta_release(&w);
	eb_error_free(err);
	free(text);
	return 0;
}
