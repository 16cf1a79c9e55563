/*
 * fuzz_deb822.c - libFuzzer target for the deb822 readers of src/debian/:
 * the input is read as paragraphs (eb_deb822_next), as a Packages index,
 * as a dpkg status file and as a Release file.  Invariants: an error comes
 * with a message, every paragraph has fields with non-NULL values, lookups
 * after sorting find every entry that was added.
 */
#include "fuzz.h"

#include "debian/control.h"
#include "debian/packages.h"
#include "debian/release.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_deb822 rd;
	struct eb_deb822_para para = EB_DEB822_PARA_INIT;
	struct eb_error *err = NULL;
	struct eb_release rel;
	int rc;

	eb_deb822_init(&rd, text, size, "fuzz");
	while ((rc = eb_deb822_next(&rd, &para, &err)) > 0) {
		EB_FUZZ_ASSERT(para.n > 0);
		for (size_t i = 0; i < para.n; i++) {
			EB_FUZZ_ASSERT(para.fields[i].value != NULL);
			EB_FUZZ_ASSERT(eb_deb822_field(&para, para.fields[i].name) != NULL);
		}
	}
	EB_FUZZ_ASSERT(rc == 0 || (err && err->msg));
	eb_error_clear(&err);
	eb_deb822_para_release(&para);

	for (int kind = 0; kind < 2; kind++) {
		struct eb_debindex idx = EB_DEBINDEX_INIT;
		rc = eb_debindex_add(&idx, text, size, "fuzz",
				     kind ? EB_DEBINDEX_STATUS : EB_DEBINDEX_PACKAGES, &err);
		EB_FUZZ_ASSERT(rc == 0 || (err && err->msg));
		eb_debindex_sort(&idx);
		for (size_t i = 0; i < idx.n; i++)
			EB_FUZZ_ASSERT(eb_debindex_find(&idx, idx.pkgs[i].name, idx.pkgs[i].arch,
							idx.pkgs[i].version) != NULL);
		eb_error_clear(&err);
		eb_debindex_release(&idx);
	}

	rc = eb_release_parse(&rel, text, size, "fuzz", &err);
	if (rc == 0) {
		for (size_t i = 0; i < rel.nfiles; i++)
			EB_FUZZ_ASSERT(eb_release_find(&rel, rel.files[i].path) != NULL);
		(void)eb_release_check_time(&rel, 0, 0, NULL);
		eb_release_release(&rel);
	} else {
		EB_FUZZ_ASSERT(err && err->msg);
	}
	eb_error_free(err);
	free(text);
	return 0;
}
