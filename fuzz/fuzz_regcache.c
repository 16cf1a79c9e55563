/*
 * fuzz_regcache.c - libFuzzer target for the shared cache's records read
 * from a registry (eb_regcache_record_parse): a record accepted names a
 * valid digest and a size >= 0, and it is the one of the key asked for.
 */
#include "fuzz.h"

#include "registry/regcache.h"
#include "util/digest.h"

#define KEY "sha256:9181314c13c5d68e6e8ca95b35cd21c8e8bba6497c7713991bd5000d85a8c556"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *rec = NULL;

	if (eb_regcache_record_parse(data, size, "layers", KEY, &rec)) {
		const json_t *d = json_object_get(rec, "digest"), *n = json_object_get(rec, "size");
		const json_t *k = json_object_get(rec, "key");
		EB_FUZZ_ASSERT(json_is_string(d) && eb_digest_valid(json_string_value(d)));
		EB_FUZZ_ASSERT(json_is_integer(n) && json_integer_value(n) >= 0);
		EB_FUZZ_ASSERT(!k || (json_is_string(k) && strcmp(json_string_value(k), KEY) == 0));
	} else {
		EB_FUZZ_ASSERT(rec == NULL);
	}
	json_decref(rec);
	return 0;
}
