/*
 * fuzz_metadata.c - libFuzzer target for core metadata (METADATA /
 * PKG-INFO, eb_metadata_parse): a parsed file has a valid name, every
 * Requires-Dist is named, and a failed parse leaves the struct empty.
 */
#include "fuzz.h"

#include "python/metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_metadata m;
	struct eb_error *err = NULL;

	memset(&m, 0, sizeof(m));
	if (eb_metadata_parse(&m, text, size, &err) == 0) {
		EB_FUZZ_ASSERT(m.name && m.norm_name && m.version && m.metadata_version);
		EB_FUZZ_ASSERT(eb_pep503_valid(m.name, strlen(m.name)));
		for (size_t i = 0; i < m.nrequires_dist; i++)
			EB_FUZZ_ASSERT(m.requires_dist[i].norm_name != NULL);
		for (size_t i = 0; i < m.nprovides_extra; i++)
			EB_FUZZ_ASSERT(eb_metadata_provides_extra(&m, m.provides_extra[i]));
		(void)eb_metadata_provides_extra(&m, "Socks");
	} else {
		EB_FUZZ_ASSERT(err != NULL);
		EB_FUZZ_ASSERT(m.name == NULL && m.nrequires_dist == 0);
	}
	eb_metadata_release(&m);
	eb_error_free(err);
	free(text);
	return 0;
}
