/*
 * fuzz_manifest.c - libFuzzer target for image manifests
 * (eb_manifest_parse, and eb_image_doc_kind on the same bytes): every
 * descriptor of a parsed manifest has a valid digest and a size >= 0.
 */
#include "fuzz.h"

#include "oci/image.h"
#include "util/digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_manifest m;
	struct eb_error *err = NULL;
	enum eb_doc_kind kind;

	memset(&m, 0, sizeof(m));
	if (eb_manifest_parse(&m, text, size, &err) == 0) {
		EB_FUZZ_ASSERT(m.media_type != NULL);
		EB_FUZZ_ASSERT(eb_digest_valid(m.config.digest));
		for (size_t i = 0; i < m.n_layers; i++) {
			EB_FUZZ_ASSERT(eb_digest_valid(m.layers[i].digest));
			EB_FUZZ_ASSERT(m.layers[i].size >= 0);
		}
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_manifest_release(&m);
	eb_manifest_release(&m); /* documented safe: release leaves it zeroed */
	eb_error_clear(&err);
	(void)eb_image_doc_kind(&kind, NULL, text, size, &err);
	eb_error_free(err);
	free(text);
	return 0;
}
