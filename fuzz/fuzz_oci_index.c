/*
 * fuzz_oci_index.c - libFuzzer target for image indexes and Docker
 * manifest lists (eb_index_parse from oci/image.h), then platform
 * selection as a pull does it.
 */
#include "fuzz.h"

#include "oci/image.h"
#include "util/digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_index idx;
	struct eb_error *err = NULL;

	memset(&idx, 0, sizeof(idx));
	if (eb_index_parse(&idx, text, size, &err) == 0) {
		static const char *const want[] = { "linux/amd64", "linux/arm64", "linux/arm/v7" };
		EB_FUZZ_ASSERT(idx.media_type != NULL);
		for (size_t i = 0; i < idx.n_manifests; i++) {
			EB_FUZZ_ASSERT(eb_digest_valid(idx.manifests[i].digest));
			EB_FUZZ_ASSERT(idx.manifests[i].size >= 0);
			if (idx.manifests[i].platform)
				free(eb_platform_format(idx.manifests[i].platform));
		}
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			struct eb_platform p;
			size_t pos = SIZE_MAX;
			EB_FUZZ_ASSERT(eb_platform_parse(&p, want[k], NULL) == 0);
			if (eb_index_select(&idx, &p, &pos, &err) == 0)
				EB_FUZZ_ASSERT(pos < idx.n_manifests);
			eb_error_clear(&err);
			eb_platform_release(&p);
		}
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_index_release(&idx);
	eb_error_free(err);
	free(text);
	return 0;
}
