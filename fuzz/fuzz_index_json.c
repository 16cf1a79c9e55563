/*
 * fuzz_index_json.c - libFuzzer target for PEP 691 JSON project pages
 * (eb_pyindex_parse_json): every file URL must come out absolute and without
 * a fragment.
 */
#include "fuzz.h"

#include "python/page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_pyindex_page page;
	struct eb_error *err = NULL;

	memset(&page, 0, sizeof(page));
	if (eb_pyindex_parse_json(&page, text, size, "https://pypi.example/simple/pkg/", &err) == 0) {
		for (size_t i = 0; i < page.nfiles; i++) {
			EB_FUZZ_ASSERT(page.files[i].filename && page.files[i].url);
			EB_FUZZ_ASSERT(strchr(page.files[i].url, '#') == NULL);
			(void)eb_pyindex_file_hash(&page.files[i], "sha256");
		}
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_pyindex_page_release(&page);
	eb_error_free(err);
	free(text);
	return 0;
}
