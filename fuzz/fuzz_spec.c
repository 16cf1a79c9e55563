/*
 * fuzz_spec.c - libFuzzer target for the spec loader: YAML/JSON parsing
 * with positions and validation (eb_spec_load_buffer).
 */
#include "fuzz.h"

#include "envspec/spec.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	struct eb_spec *spec = NULL;

	/* a spec in a directory that does not exist: validation of paths
	 * named in the spec finds nothing on disk */
	if (eb_spec_load_buffer(&spec, "/nonexistent-envbuild-fuzz/envbuild.yaml", text, size,
				&diags, &err) == 0 &&
	    spec) {
		for (size_t i = 0; i < spec->ntargets; i++)
			EB_FUZZ_ASSERT(eb_spec_target(spec, spec->targets[i].name) != NULL);
	}
	eb_diag_list_sort(&diags);
	eb_spec_free(spec);
	eb_diag_list_release(&diags);
	eb_error_free(err);
	free(text);
	return 0;
}
