/*
 * fuzz_deb.c - libFuzzer target for the .deb reader and the base scan of
 * src/debian/deb*.c: the input is written to a file and installed as a
 * package (eb_debian_write_layer: ar, control.tar, data.tar, dpkg
 * database, postinst alternatives), then read as a base layer
 * (eb_debian_base_scan).  Invariants: a failure comes with a message and
 * adds nothing to the builder; a success adds at least the dpkg status.
 * A package that installs is installed again through the cache (its
 * debinfo record written, then read back for a package whose layer is
 * made, the .deb not read): that succeeds too, with the same postinst
 * report.
 */
#include "fuzz.h"

#include "debian/deb.h"
#include "oci/blobstore.h"
#include "oci/layer.h"
#include "util/digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = eb_fuzz_write("in.deb", data, size);
	char *stage = eb_path_join(eb_fuzz_dir(), "stage");
	char digest[EB_DIGEST_STR_LEN + 1];
	struct eb_deb_input in = { path, "pkg", "1.0", "amd64", NULL, size };
	static const char *const lp[] = { "bin", "lib" };
	static const char *const lt[] = { "usr/bin", "usr/lib" };
	struct eb_deb_base base = { "Package: libc6\nStatus: install ok installed\nVersion: 2.36\n"
				    "Architecture: amd64\n", 73, lp, lt, 2 };
	struct eb_deb_report rep;
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_error *err = NULL;
	struct eb_buf status;
	char **paths, **targets;
	size_t nlinks;
	int rc;

	(void)eb_fs_remove_tree(stage, NULL);
	EB_FUZZ_ASSERT(eb_fs_mkdir_p(stage, 0700, NULL) == 0);
	eb_sha256_digest(data, size, digest);
	in.sha256 = digest + 7;
	rc = eb_debian_write_layer(b, stage, &in, 1, &base, &rep, &err);
	if (rc < 0) {
		EB_FUZZ_ASSERT(err && err->msg);
		EB_FUZZ_ASSERT(eb_layer_builder_count(b) == 0);
	} else {
		EB_FUZZ_ASSERT(eb_layer_builder_count(b) >= 1);
	}
	eb_error_clear(&err);
	if (rc == 0) {
		char *root = eb_path_join(eb_fuzz_dir(), "cache");
		struct eb_blobstore *bs = NULL;
		struct eb_layer_builder *pb = eb_layer_builder_new(), *top = eb_layer_builder_new();
		struct eb_layer_builder *none = NULL;
		struct eb_deb_report r1, r2;

		(void)eb_fs_remove_tree(root, NULL);
		(void)eb_fs_remove_tree(stage, NULL);
		EB_FUZZ_ASSERT(eb_fs_mkdir_p(stage, 0700, NULL) == 0);
		EB_FUZZ_ASSERT(eb_blobstore_open(&bs, root, NULL) == 0);
		EB_FUZZ_ASSERT(eb_debian_write_layers_cached(&pb, top, stage, &in, 1, &base, bs, &r1,
							     &err) == 0);
		EB_FUZZ_ASSERT(eb_debian_write_layers_cached(&none, top, stage, &in, 1, &base, bs,
							     &r2, &err) == 0);
		EB_FUZZ_ASSERT(r2.ninfo_cached == 1 && r1.npostinst == r2.npostinst &&
			       r1.nalternatives == r2.nalternatives);
		eb_deb_report_release(&r1);
		eb_deb_report_release(&r2);
		eb_layer_builder_free(pb);
		eb_layer_builder_free(top);
		eb_blobstore_free(bs);
		free(root);
	}
	eb_deb_report_release(&rep);
	eb_layer_builder_free(b);

	const char *layers[1] = { path };
	if (eb_debian_base_scan(layers, 1, &status, &paths, &targets, &nlinks, &err) == 0) {
		for (size_t i = 0; i < nlinks; i++)
			EB_FUZZ_ASSERT(paths[i][0] && !strchr(paths[i], '/') && targets[i][0]);
		eb_buf_release(&status);
		eb_debian_links_free(paths, targets, nlinks);
	} else {
		EB_FUZZ_ASSERT(err && err->msg);
	}
	eb_error_free(err);
	free(stage);
	free(path);
	return 0;
}
