/*
 * fuzz_resolve.c - libFuzzer target for resolve's YAML rewrite
 * (eb_resolve_text) against a small fixed lock, and the image checks
 * (eb_resolve_check_images, and eb_yamlimages_check: sibling tags, Helm
 * values and templates) on the same text.  A rewrite that succeeds is
 * valid YAML again and rewriting it a second time changes nothing.
 */
#include "fuzz.h"

#include "lock/resolve.h"
#include "lock/yamlimages.h"
#include "util/buf.h"
#include "util/diag.h"

static const char lock_json[] =
	"{\"lockVersion\": 1,"
	" \"spec\": {\"path\": \"envbuild.yaml\", \"sha256\": \"\"},"
	" \"targets\": {"
	"  \"inference\": {\"image\": {\"compression\": \"gzip\","
	"   \"digest\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\","
	"   \"mediaType\": \"application/vnd.oci.image.index.v1+json\","
	"   \"pushed\": [{\"digest\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\","
	"     \"ref\": \"registry.example.com/ml/churn:inference\"},"
	"    {\"digest\": \"sha256:1111111111111111111111111111111111111111111111111111111111111111\","
	"     \"ref\": \"registry.example.com/ml/churn:v1-inference\"}]}},"
	"  \"notebook\": {\"image\": {\"compression\": \"gzip\","
	"   \"digest\": \"sha256:3333333333333333333333333333333333333333333333333333333333333333\","
	"   \"mediaType\": \"application/vnd.oci.image.manifest.v1+json\"}},"
	"  \"training\": {\"image\": {\"compression\": \"zstd\","
	"   \"digest\": \"sha256:2222222222222222222222222222222222222222222222222222222222222222\","
	"   \"mediaType\": \"application/vnd.oci.image.index.v1+json\","
	"   \"pushed\": [{\"digest\": \"sha256:2222222222222222222222222222222222222222222222222222222222222222\","
	"     \"ref\": \"registry.example.com/ml/churn:training\"}]}}}}";

static struct eb_resolve_lock *lock;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	json_error_t je;
	json_t *j = json_loads(lock_json, 0, &je);

	(void)argc;
	(void)argv;
	EB_FUZZ_ASSERT(j != NULL);
	EB_FUZZ_ASSERT(eb_resolve_lock_new(&lock, j, "envbuild.lock", NULL) == 0);
	json_decref(j);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_buf out, again;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	size_t n = 0, n2 = 0;

	eb_buf_init(&out, 0);
	eb_buf_init(&again, 0);
	if (eb_resolve_text(lock, "job.yaml", text, size, &out, &n, &err) == 0) {
		if (n == 0)
			EB_FUZZ_ASSERT(out.len == size && memcmp(out.ptr, text, size) == 0);
		EB_FUZZ_ASSERT(eb_resolve_text(lock, "job.yaml", out.ptr, out.len, &again, &n2,
					       &err) == 0);
		EB_FUZZ_ASSERT(n2 == 0);
		EB_FUZZ_ASSERT(again.len == out.len && memcmp(again.ptr, out.ptr, out.len) == 0);
	} else {
		EB_FUZZ_ASSERT(err != NULL && out.len == 0);
	}
	eb_resolve_check_images("job.yaml", text, size, &diags);
	eb_yamlimages_check("job.yaml", text, size, &diags);
	eb_buf_release(&out);
	eb_buf_release(&again);
	eb_diag_list_release(&diags);
	eb_error_free(err);
	free(text);
	return 0;
}
