/*
 * fuzz_requirement.c - libFuzzer target for one requirement line
 * (eb_requirement_parse, and eb_requirement_parse_editable when the input
 * starts with "-e "), then the pin rules and redaction on what parsed.
 */
#include "fuzz.h"

#include "pin/requirement.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eb_requirement req;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	int editable = size >= 3 && memcmp(data, "-e ", 3) == 0;
	size_t off = editable ? 3 : 0;
	char *text = eb_fuzz_exact(data + off, size - off);
	char *cstr = eb_fuzz_cstr(data, size);
	int rc;

	memset(&req, 0, sizeof(req));
	if (editable)
		rc = eb_requirement_parse_editable(&req, text, size - off, &err);
	else
		rc = eb_requirement_parse(&req, text, size - off, &err);
	if (rc == 0) {
		EB_FUZZ_ASSERT(err == NULL);
		(void)eb_requirement_pin_status(&req);
		(void)eb_requirement_pinned_version(&req);
		(void)eb_requirement_is_hashed(&req);
		eb_requirement_add_hash(&req, "sha256:00", 9, 1);
		eb_requirement_check_pin(&req, "requirements.txt", 1, 0, &diags);
	} else {
		EB_FUZZ_ASSERT(err != NULL && rc == -err->code);
	}
	eb_requirement_release(&req);
	free(eb_requirement_redact(cstr));
	eb_diag_list_release(&diags);
	eb_error_free(err);
	free(text);
	free(cstr);
	return 0;
}
