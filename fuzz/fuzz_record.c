/*
 * fuzz_record.c - libFuzzer target for a base image's RECORD files
 * (eb_pytarget_parse_record): the paths a pin's upgrade whites out come
 * from them, so every path must be absolute, normalised, inside the root,
 * sorted and unique.
 */
#include "fuzz.h"

#include <string.h>

#include "python/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **files = NULL;
	size_t n = 0;

	eb_pytarget_parse_record((const char *)data, size,
				 "/usr/local/lib/python3.11/site-packages/x-1.0.dist-info", &files, &n);
	for (size_t i = 0; i < n; i++) {
		EB_FUZZ_ASSERT(files[i][0] == '/' && files[i][1] != '\0');
		EB_FUZZ_ASSERT(strstr(files[i], "/../") == NULL && strstr(files[i], "//") == NULL);
		EB_FUZZ_ASSERT(strstr(files[i], "/./") == NULL);
		EB_FUZZ_ASSERT(i == 0 || strcmp(files[i - 1], files[i]) < 0);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return 0;
}
