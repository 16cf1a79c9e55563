/*
 * fuzz_config.c - libFuzzer target for image configs (eb_config_parse):
 * the NULL-terminated arrays are terminated where the counts say.
 */
#include "fuzz.h"

#include "oci/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_config c;
	struct eb_error *err = NULL;

	memset(&c, 0, sizeof(c));
	if (eb_config_parse(&c, text, size, &err) == 0) {
		EB_FUZZ_ASSERT(c.env && c.env[c.n_env] == NULL);
		EB_FUZZ_ASSERT(c.diff_ids && c.diff_ids[c.n_diff_ids] == NULL);
		EB_FUZZ_ASSERT(!c.entrypoint || c.entrypoint[c.n_entrypoint] == NULL);
		EB_FUZZ_ASSERT(!c.cmd || c.cmd[c.n_cmd] == NULL);
		(void)eb_config_getenv(&c, "PATH");
		if (c.platform.os && c.platform.architecture)
			free(eb_platform_format(&c.platform));
	} else {
		EB_FUZZ_ASSERT(err != NULL);
	}
	eb_config_release(&c);
	eb_error_free(err);
	free(text);
	return 0;
}
