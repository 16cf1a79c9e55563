/*
 * check_target.c - detecting the Python target from base image layers:
 * official-image and distro layouts, glibc from libc.so.6's contents and
 * from a libc-X.Y.so link, musl, whiteouts, overrides, and clear failures.
 */
#include "config.h"

#include <sys/stat.h>

#include "oci/blobstore.h"
#include "oci/layer.h"
#include "python/target.h"
#include "testutil.h"
#include "util/alloc.h"

static char *tmp;
static struct eb_blobstore *bs;

static void setup(void)
{
	struct eb_error *err = NULL;
	tmp = eb_test_tmpdir();
	ck_assert_int_eq(eb_blobstore_open(&bs, tmp, &err), 0);
}

static void teardown(void)
{
	char *cmd = eb_xasprintf("rm -rf '%s'", tmp);
	eb_blobstore_free(bs);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(tmp);
}

/* A layer from "path=content" / "path->target" (symlink) / "path/" (dir)
 * specs; returns the blob path (caller frees). */
static char *layer(const char *const *specs)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	struct eb_error *err = NULL;

	for (; *specs; specs++) {
		const char *s = *specs, *eq = strchr(s, '='), *arrow = strstr(s, "->");
		size_t len = strlen(s);
		if (arrow) {
			char *p = eb_xstrndup(s, (size_t)(arrow - s));
			ck_assert_int_eq(eb_layer_add_symlink(b, p, arrow + 2, &err), 0);
			free(p);
		} else if (eq) {
			char *p = eb_xstrndup(s, (size_t)(eq - s));
			ck_assert_int_eq(eb_layer_add_bytes(b, p, eq + 1, strlen(eq + 1), 0755, &err), 0);
			free(p);
		} else if (s[len - 1] == '/') {
			char *p = eb_xstrndup(s, len - 1);
			ck_assert_int_eq(eb_layer_add_dir(b, p, 0755, &err), 0);
			free(p);
		}
	}
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &res, &err), 0);
	eb_layer_builder_free(b);
	return eb_blobstore_path(bs, res.digest);
}

START_TEST(official_image)
{
	const char *l1[] = { "usr/lib/x86_64-linux-gnu/libc.so.6=\x7f" "ELF...GNU C Library (Debian GLIBC 2.36-9) stable release version 2.36.\n...",
			     "usr/bin/python3.11=elf", NULL };
	const char *l2[] = { "usr/local/bin/python3.11=elf", "usr/local/lib/python3.11/site-packages/", NULL };
	char *p[2] = { layer(l1), layer(l2) };
	struct eb_pytarget t;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 2, "linux/amd64", NULL, &err), 0);
	ck_assert_str_eq(t.python_version, "3.11");
	ck_assert_str_eq(t.interpreter, "/usr/local/bin/python3.11");
	ck_assert_str_eq(t.purelib, "/usr/local/lib/python3.11/site-packages");
	ck_assert_str_eq(t.scripts, "/usr/local/bin");
	ck_assert_str_eq(t.machine, "x86_64");
	ck_assert_int_eq(t.libc, EB_LIBC_GLIBC);
	ck_assert_int_eq(t.libc_major, 2);
	ck_assert_int_eq(t.libc_minor, 36);
	eb_pytarget_release(&t);
	free(p[0]);
	free(p[1]);
}
END_TEST

START_TEST(distro_python_and_whiteout)
{
	/* Debian python3.11 plus a python3.12 that a later layer deletes;
	 * glibc named by an old-style libc-2.31.so link */
	const char *l1[] = { "lib/x86_64-linux-gnu/libc.so.6->libc-2.31.so", "usr/bin/python3.11=elf",
			     "usr/bin/python3.12=elf", NULL };
	const char *l2[] = { "usr/bin/.wh.python3.12=", NULL };
	char *p[2] = { layer(l1), layer(l2) };
	struct eb_pytarget t;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 2, "linux/amd64", NULL, &err), 0);
	ck_assert_str_eq(t.interpreter, "/usr/bin/python3.11");
	ck_assert_str_eq(t.purelib, "/usr/local/lib/python3.11/dist-packages");
	ck_assert_int_eq(t.libc_major, 2);
	ck_assert_int_eq(t.libc_minor, 31);
	eb_pytarget_release(&t);
	/* asking for 3.12 fails: it was whited out */
	{
		struct eb_pytarget_overrides ov = { .python_version = "3.12" };
		ck_assert_int_lt(eb_pytarget_detect(&t, (const char *const *)p, 2, "linux/amd64", &ov, &err), 0);
		ck_assert_ptr_nonnull(strstr(err->msg, "no Python 3.12"));
		eb_error_clear(&err);
	}
	free(p[0]);
	free(p[1]);
}
END_TEST

START_TEST(musl_and_overrides)
{
	const char *l1[] = { "lib/ld-musl-aarch64.so.1=elf", "usr/local/bin/python3.12=elf", NULL };
	char *p[1] = { layer(l1) };
	struct eb_pytarget t;
	struct eb_error *err = NULL;
	struct eb_pytarget_overrides ov = { .libc = "musl 1.1", .site_packages = "/opt/site" };

	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 1, "linux/arm64", NULL, &err), 0);
	ck_assert_int_eq(t.libc, EB_LIBC_MUSL);
	ck_assert_int_eq(t.libc_assumed, 1);
	ck_assert_str_eq(t.machine, "aarch64");
	eb_pytarget_release(&t);
	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 1, "linux/arm64", &ov, &err), 0);
	ck_assert_int_eq(t.libc_minor, 1);
	ck_assert_int_eq(t.libc_assumed, 0);
	ck_assert_str_eq(t.purelib, "/opt/site");
	eb_pytarget_release(&t);
	free(p[0]);
}
END_TEST

START_TEST(no_python_no_libc)
{
	const char *l1[] = { "etc/hostname=x", NULL };
	const char *l2[] = { "usr/bin/python3.11=elf", NULL };
	char *p[2] = { layer(l1), layer(l2) };
	struct eb_pytarget t;
	struct eb_error *err = NULL;

	ck_assert_int_lt(eb_pytarget_detect(&t, (const char *const *)p, 1, "linux/amd64", NULL, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->msg, "has no Python"));
	ck_assert_ptr_nonnull(err->hint);
	eb_error_clear(&err);
	ck_assert_int_lt(eb_pytarget_detect(&t, (const char *const *)p, 2, "linux/amd64", NULL, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->msg, "C library"));
	eb_error_clear(&err);
	free(p[0]);
	free(p[1]);
}
END_TEST

/* The real Debian base the CLI tests build on, when it is there. */
START_TEST(real_debian_base)
{
	const char *base = getenv("ENVBUILD_TEST_BASE");
	char cmd[1024];
	char layerpath[1024] = "";
	FILE *f;
	struct eb_pytarget t;
	struct eb_error *err = NULL;
	const char *p[1];

	if (!base)
		base = "/var/tmp/envbuild-test-base";
	snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import json,sys; b=sys.argv[1]; d=json.load(open(b+'/index.json'))['manifests'][0]['digest'].split(':')[1]; "
		 "print(b+'/blobs/sha256/'+json.load(open(b+'/blobs/sha256/'+d))['layers'][0]['digest'].split(':')[1])\" %s 2>/dev/null",
		 base);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	if (!fgets(layerpath, sizeof(layerpath), f)) {
		pclose(f);
		EB_TEST_SKIP("no test base at %s (scripts/make-base makes it)", base);
	}
	pclose(f);
	layerpath[strcspn(layerpath, "\n")] = '\0';
	p[0] = layerpath;
	ck_assert_int_eq(eb_pytarget_detect(&t, p, 1, "linux/amd64", NULL, &err), 0);
	ck_assert_str_eq(t.interpreter, "/usr/bin/python3.11");
	ck_assert_str_eq(t.purelib, "/usr/local/lib/python3.11/dist-packages");
	ck_assert_int_eq(t.libc, EB_LIBC_GLIBC);
	ck_assert_int_eq(t.libc_major, 2);
	ck_assert_int_eq(t.libc_minor, 36);
	/* bookworm's python3.11-minimal is 3.11.2-6+debN: the patch level is kept */
	ck_assert_ptr_nonnull(t.python_full_version);
	ck_assert_int_eq(strncmp(t.python_full_version, "3.11.", 5), 0);
	ck_assert_int_gt(strlen(t.python_full_version), 5);
	eb_pytarget_release(&t);
}
END_TEST

/* A base layer is read whole for detection, so its diff_id (the config's
 * word for the uncompressed bytes) is checked on the way: a base whose
 * layer is not what its config says is refused, not shipped as is. */
START_TEST(diff_id_checked)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	struct eb_pytarget t;
	struct eb_error *err = NULL;
	char *p;
	const char *paths[1], *ids[1];

	ck_assert_int_eq(eb_layer_add_bytes(b, "usr/lib/x86_64-linux-gnu/libc.so.6",
					    "GNU C Library release version 2.36.\n", 37, 0755, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "usr/local/bin/python3.11", "elf", 3, 0755, &err), 0);
	ck_assert_int_eq(eb_layer_add_dir(b, "usr/local/lib/python3.11/site-packages", 0755, &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &res, &err), 0);
	eb_layer_builder_free(b);
	p = eb_blobstore_path(bs, res.digest);
	paths[0] = p;

	ids[0] = res.diff_id;
	ck_assert_int_eq(eb_pytarget_detect_verified(&t, paths, ids, 1, "linux/amd64", NULL, &err), 0);
	ck_assert_str_eq(t.python_version, "3.11");
	eb_pytarget_release(&t);

	/* the compressed digest is not the diff_id of a gzip layer */
	ck_assert_str_ne(res.digest, res.diff_id);
	ids[0] = res.digest;
	ck_assert_int_eq(eb_pytarget_detect_verified(&t, paths, ids, 1, "linux/amd64", NULL, &err),
			 -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "diff_id"));
	ck_assert_ptr_nonnull(strstr(err->msg, res.diff_id));
	eb_error_free(err);
	err = NULL;
	eb_pytarget_release(&t);
	free(p);
}
END_TEST

/* python_full_version markers need the patch level, not 3.X.0 */
START_TEST(full_version)
{
	const char *l1[] = { "lib/x86_64-linux-gnu/libc.so.6->libc-2.31.so", "usr/bin/python3.11=elf",
			     "var/lib/dpkg/status=Package: libpython3.11-minimal\nVersion: 3.11.1-1\n\n"
			     "Package: python3.11-minimal\nStatus: install ok installed\n"
			     "Version: 1:3.11.2-6+deb12u6\n\nPackage: python3-minimal\nVersion: 3.11.9\n",
			     NULL };
	const char *l2[] = { "usr/local/bin/python3.11=elf",
			     "usr/local/include/python3.11/patchlevel.h=/* x */\n#define PY_MINOR_VERSION 11\n"
			     "#define PY_VERSION      \"3.11.4\"\n",
			     NULL };
	char *p[2] = { layer(l1), layer(l2) };
	struct eb_pytarget t;
	struct eb_error *err = NULL;

	/* Debian: from dpkg's record of python3.11-minimal, epoch and
	 * revision dropped */
	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 1, "linux/amd64", NULL, &err), 0);
	ck_assert_str_eq(t.python_full_version, "3.11.2");
	ck_assert_str_eq(eb_pytarget_full_version(&t), "3.11.2");
	eb_pytarget_release(&t);
	/* python:* image: patchlevel.h of the newer layer wins */
	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 2, "linux/amd64", NULL, &err), 0);
	ck_assert_str_eq(t.python_full_version, "3.11.4");
	eb_pytarget_release(&t);
	/* the spec's three-part version wins */
	{
		struct eb_pytarget_overrides ov = { .python_version = "3.11.7" };
		ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 2, "linux/amd64", &ov, &err), 0);
		ck_assert_str_eq(t.python_version, "3.11");
		ck_assert_str_eq(t.python_full_version, "3.11.7");
		eb_pytarget_release(&t);
		ov.libc = "glibc 2.36";
		ck_assert_int_eq(eb_pytarget_assume(&t, "linux/amd64", &ov, &err), 0);
		ck_assert_str_eq(t.python_full_version, "3.11.7");
		eb_pytarget_release(&t);
	}
	/* nothing says: NULL, and markers see 3.11 (as 3.11.0) */
	free(p[1]);
	{
		const char *l3[] = { "lib/x86_64-linux-gnu/libc.so.6->libc-2.31.so", "usr/bin/python3.11=elf", NULL };
		p[1] = layer(l3);
	}
	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p + 1, 1, "linux/amd64", NULL, &err), 0);
	ck_assert_ptr_null(t.python_full_version);
	ck_assert_str_eq(eb_pytarget_full_version(&t), "3.11");
	eb_pytarget_release(&t);
	free(p[0]);
	free(p[1]);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("target");
	TCase *tc = tcase_create("detect");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, official_image);
	tcase_add_test(tc, distro_python_and_whiteout);
	tcase_add_test(tc, musl_and_overrides);
	tcase_add_test(tc, no_python_no_libc);
	tcase_add_test(tc, real_debian_base);
	tcase_add_test(tc, diff_id_checked);
	tcase_add_test(tc, full_version);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
