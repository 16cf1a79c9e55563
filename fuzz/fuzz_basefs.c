/*
 * fuzz_basefs.c - libFuzzer target for the base-image filesystem view
 * (eb_basefs_add_layer_mem: tar headers, whiteouts, opaque markers) and
 * the resolver over it: the input is split at the first NUL into a path
 * to resolve and a layer, which is applied twice (a second layer over the
 * first), so whiteouts and replacements meet real lower layers.
 */
#include "fuzz.h"

#include "oci/basefs.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t plen = nul ? (size_t)(nul - data) : 0;
	const uint8_t *layer = nul ? nul + 1 : data;
	size_t llen = nul ? size - plen - 1 : size;
	char *path = eb_xstrndup((const char *)data, plen); /* the resolver takes a C string */
	struct eb_basefs *fs = eb_basefs_new();
	struct eb_error *err = NULL;
	char *out = NULL;

	for (int i = 0; i < 2; i++) {
		if (eb_basefs_add_layer_mem(fs, layer, llen, &err) < 0) {
			EB_FUZZ_ASSERT(err != NULL);
			eb_error_free(err);
			err = NULL;
			break;
		}
	}
	for (int follow = 0; follow < 2; follow++) {
		if (eb_basefs_resolve(fs, path, follow, &out, &err) == 0) {
			/* a resolved path is relative and clean */
			EB_FUZZ_ASSERT(out && out[0] != '/');
			EB_FUZZ_ASSERT(!strstr(out, "//"));
			(void)eb_basefs_lookup(fs, out);
			free(out);
		} else {
			EB_FUZZ_ASSERT(err != NULL);
			eb_error_free(err);
			err = NULL;
		}
	}
	free(path);
	eb_basefs_free(fs);
	return 0;
}
