/*
 * check_target.c - detecting the Python target from base image layers:
 * official-image and distro layouts, glibc from libc.so.6's contents and
 * from a libc-X.Y.so link, musl, whiteouts, overrides, and clear failures;
 * the distributions the base has (dist-info, RECORD, whiteouts) and what
 * replacing one of them removes.  Every detection runs twice: reading
 * the layers (eb_pytarget_detect) and from the base's file-tree view
 * (eb_pytarget_detect_fs), which must give the same answers; a layer the
 * view says holds nothing needed is not read, and a layer is left after
 * its last needed entry.
 */
#include "config.h"

#include <sys/stat.h>

#include "assemble/pyinstall.h"
#include "oci/basefs.h"
#include "oci/blobstore.h"
#include "oci/layer.h"
#include "python/target.h"
#include "testutil.h"
#include "util/alloc.h"

static char *tmp;
static struct eb_blobstore *bs;

static void same_str(const char *what, const char *a, const char *b)
{
	ck_assert_msg((!a && !b) || (a && b && strcmp(a, b) == 0), "%s: '%s' from the layers, '%s' "
		      "from the view", what, a ? a : "(null)", b ? b : "(null)");
}

/* eb_pytarget_detect, and the same from the view of the same layers:
 * the answers (or the error) must be the same. */
static int detect_both(struct eb_pytarget *t, const char *const *p, size_t n, const char *plat,
		       const struct eb_pytarget_overrides *ov, struct eb_error **err)
{
	struct eb_basefs *fs = eb_basefs_new();
	struct eb_pytarget v;
	struct eb_error *verr = NULL;
	int r, rv;

	r = eb_pytarget_detect_verified(t, p, NULL, n, plat, ov, err);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(eb_basefs_add_layer(fs, p[i], &verr), 0);
	rv = eb_pytarget_detect_fs(&v, fs, p, n, NULL, plat, ov, &verr);
	eb_basefs_free(fs);
	ck_assert_int_eq(r, rv);
	if (r < 0) {
		same_str("error", (*err)->msg, verr->msg);
		eb_error_free(verr);
		return r;
	}
	same_str("python_version", t->python_version, v.python_version);
	same_str("python_full_version", t->python_full_version, v.python_full_version);
	same_str("interpreter", t->interpreter, v.interpreter);
	same_str("purelib", t->purelib, v.purelib);
	same_str("include", t->include, v.include);
	ck_assert_int_eq(t->libc, v.libc);
	ck_assert_int_eq(t->libc_major, v.libc_major);
	ck_assert_int_eq(t->libc_minor, v.libc_minor);
	ck_assert_int_eq(t->libc_assumed, v.libc_assumed);
	ck_assert_uint_eq(t->ndists, v.ndists);
	for (size_t i = 0; i < t->ndists; i++) {
		same_str("dist", t->dists[i].dist_info, v.dists[i].dist_info);
		same_str("dist version", t->dists[i].version, v.dists[i].version);
		ck_assert_uint_eq(t->dists[i].nfiles, v.dists[i].nfiles);
		ck_assert_int_eq(!t->dists[i].files, !v.dists[i].files);
		for (size_t k = 0; k < t->dists[i].nfiles; k++)
			same_str("RECORD file", t->dists[i].files[k], v.dists[i].files[k]);
	}
	eb_pytarget_release(&v);
	return r;
}
#define eb_pytarget_detect(t, p, n, plat, ov, err) detect_both(t, p, n, plat, ov, err)

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
	/* the file-tree view's pass (the one that reads every base layer
	 * whole when detection reads the view) checks them the same way */
	{
		struct eb_basefs *fs = eb_basefs_new();
		ck_assert_int_eq(eb_basefs_add_layer_verified(fs, p, res.diff_id, &err), 0);
		ck_assert_int_eq(eb_basefs_add_layer_verified(fs, p, res.digest, &err), -EB_EINVALID);
		ck_assert_ptr_nonnull(strstr(err->msg, "does not match the image config"));
		eb_error_clear(&err);
		eb_basefs_free(fs);
	}
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

#define SP "usr/local/lib/python3.11/dist-packages/"

START_TEST(base_dists)
{
	const char *l1[] = {
		"usr/lib/x86_64-linux-gnu/libc.so.6->libc-2.36.so", "usr/bin/python3.11=elf",
		SP "foo-1.0.dist-info/METADATA=Name: foo\n",
		SP "foo-1.0.dist-info/RECORD=foo/__init__.py,sha256=x,1\r\nfoo/old.py,,\n"
		   "\"foo/a,b.py\",sha256=y,2\noldmod.py,,\nshared/keep.py,,\n"
		   "../../../bin/foo-cli,,\nfoo-1.0.dist-info/RECORD,,\n"
		   "../../../../../../../../../etc/passwd,,\n",
		SP "foo/__init__.py=", SP "foo/old.py=", SP "foo/a,b.py=", SP "oldmod.py=",
		SP "shared/keep.py=", SP "shared/other.py=", "usr/local/bin/foo-cli=#!",
		SP "Bar_Baz-2.0.dist-info/RECORD=bar_baz/x.py,,\n",
		"usr/lib/python3/dist-packages/deb-1.0.dist-info/METADATA=Name: deb\n",
		"usr/local/lib/python3.10/site-packages/qux-1.0.dist-info/RECORD=qux.py,,\n",
		NULL
	};
	/* pip upgraded Bar_Baz in a later layer, without a RECORD this time */
	const char *l2[] = { SP ".wh.Bar_Baz-2.0.dist-info=", SP "bar_baz-3.0.dist-info/METADATA=x", NULL };
	char *p[2] = { layer(l1), layer(l2) };
	struct eb_pyenv e = { 0 };
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_basefs *fs = eb_basefs_new();
	struct eb_error *err = NULL;
	const struct eb_pybase_dist *d;
	static const char *const files[] = {
		"/usr/local/bin/foo-cli", "/" SP "foo-1.0.dist-info/RECORD", "/" SP "foo/__init__.py",
		"/" SP "foo/a,b.py", "/" SP "foo/old.py", "/" SP "oldmod.py", "/" SP "shared/keep.py",
	};
	static const char *const removed[] = {
		"/usr/local/bin/foo-cli", "/" SP "foo", "/" SP "foo-1.0.dist-info",
		"/" SP "oldmod.py", "/" SP "shared/keep.py",
	};
	static const struct { const char *name, *version; } pins[] = {
		{ "bar-baz", "2.5" }, { "deb", "1.0.0" }, { "foo", "2.0" }, { "other", "1" },
	};

	ck_assert_int_eq(eb_pytarget_detect(&e.target, (const char *const *)p, 2, "linux/amd64", NULL,
					    &err), 0);
	ck_assert_uint_eq(e.target.ndists, 3); /* not the python3.10 one */
	d = eb_pytarget_base_dist(&e.target, "bar-baz");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d->version, "3.0");
	ck_assert_ptr_null(d->files);
	d = eb_pytarget_base_dist(&e.target, "deb");
	ck_assert_str_eq(d->dist_info, "/usr/lib/python3/dist-packages/deb-1.0.dist-info");
	d = eb_pytarget_base_dist(&e.target, "foo");
	ck_assert_str_eq(d->version, "1.0");
	ck_assert_str_eq(d->dist_info, "/" SP "foo-1.0.dist-info");
	/* "../" resolved against the site directory; above the root dropped */
	ck_assert_uint_eq(d->nfiles, sizeof(files) / sizeof(files[0]));
	for (size_t i = 0; i < d->nfiles; i++)
		ck_assert_str_eq(d->files[i], files[i]);
	ck_assert_ptr_null(eb_pytarget_base_dist(&e.target, "qux"));

	/* pins over that base */
	e.dists = eb_xcalloc(4, sizeof(*e.dists));
	for (size_t i = 0; i < 4; i++) {
		e.dists[i].name = eb_xstrdup(pins[i].name);
		e.dists[i].display = eb_xstrdup(pins[i].name);
		e.dists[i].version = eb_xstrdup(pins[i].version);
		e.dists[i].file = eb_xstrdup("requirements.txt");
		e.dists[i].line = (unsigned)i + 1;
	}
	e.n = 4;
	ck_assert_int_eq(eb_basefs_add_layer(fs, p[0], &err), 0);
	ck_assert_int_eq(eb_basefs_add_layer(fs, p[1], &err), 0);
	eb_pyenv_plan_replacements(&e, fs, &diags);
	/* a downgrade of a RECORD-less distribution: noted, nothing removed */
	ck_assert_ptr_nonnull(e.dists[0].replaces);
	ck_assert_int_eq(e.dists[0].downgrade, 1);
	ck_assert_uint_eq(e.dists[0].nremove, 0);
	/* 1.0.0 is 1.0: already there, not installed */
	ck_assert_int_eq(e.dists[1].in_base, 1);
	ck_assert_ptr_null(e.dists[1].replaces);
	/* an upgrade: whole directories where the base has nothing else */
	ck_assert_int_eq(e.dists[2].downgrade, 0);
	ck_assert_str_eq(e.dists[2].replaces->version, "1.0");
	ck_assert_uint_eq(e.dists[2].nremove, sizeof(removed) / sizeof(removed[0]));
	for (size_t i = 0; i < e.dists[2].nremove; i++)
		ck_assert_str_eq(e.dists[2].remove[i], removed[i]);
	ck_assert_int_eq(e.dists[3].in_base, 0);
	ck_assert_ptr_null(e.dists[3].replaces);
	ck_assert_uint_eq(diags.n, 3);
	ck_assert_str_eq(diags.items[0].rule, "EB226");
	ck_assert_str_eq(diags.items[1].rule, "EB225");
	{
		/* the planned layers leave out what the base has */
		struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
		struct eb_pylayer_plan *pl;
		size_t np, total = 0;
		eb_pyenv_plan_layers(&e, &o, (uint64_t)1 << 40, &pl, &np);
		for (size_t i = 0; i < np; i++)
			total += pl[i].n;
		ck_assert_uint_eq(total, 3);
		ck_assert_uint_eq(np, 1);
		ck_assert_str_eq(pl[0].created_by, "envbuild: pip install bar-baz==2.5 foo==2.0 "
						   "other==1 (replaces bar-baz 3.0) (replaces foo 1.0)");
		eb_pylayer_plans_free(pl, np);
	}
	eb_diag_list_release(&diags);
	eb_basefs_free(fs);
	eb_pyenv_release(&e);
	free(p[0]);
	free(p[1]);
}
END_TEST

/* An upper layer shadows a lower file and whites out another: the view's
 * answers are the merged tree's, the bottom layer (nothing needed from it)
 * is never opened, and a layer is left after its last needed entry (a
 * blob cut short after them still works). */
START_TEST(shadow_whiteout_skip)
{
	static char big[1 << 20];
	const char *l0[] = { "opt/data/weights.bin=model", NULL };
	const char *l1[] = {
		"usr/lib/x86_64-linux-gnu/libc.so.6=GNU C Library stable release version 2.31.\n",
		"usr/local/include/python3.11/patchlevel.h=#define PY_VERSION \"3.11.2\"\n",
		SP "foo-1.0.dist-info/RECORD=foo/__init__.py,,\n",
		SP "bar-2.0.dist-info/RECORD=bar.py,,\n",
		"usr/local/bin/python3.11=elf",
		NULL
	};
	const char *l2[] = {
		"usr/lib/x86_64-linux-gnu/libc.so.6=GNU C Library stable release version 2.36.\n",
		"usr/local/include/python3.11/patchlevel.h=#define PY_VERSION \"3.11.7\"\n",
		SP "foo-1.0.dist-info/.wh.RECORD=",
		NULL
	};
	char *p[3] = { layer(l0), layer(l1), layer(l2) };
	struct eb_basefs *fs = eb_basefs_new();
	struct eb_pytarget t;
	struct eb_error *err = NULL;
	const struct eb_pybase_dist *d;
	const char *paths[3];
	char *cut;

	/* the same answers both ways */
	ck_assert_int_eq(eb_pytarget_detect(&t, (const char *const *)p, 3, "linux/amd64", NULL, &err), 0);
	eb_pytarget_release(&t);
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(eb_basefs_add_layer(fs, p[i], &err), 0);
	ck_assert_uint_eq(eb_basefs_lookup(fs, "usr/lib/x86_64-linux-gnu/libc.so.6")->layer, 2);
	ck_assert_uint_eq(eb_basefs_lookup(fs, SP "bar-2.0.dist-info/RECORD")->layer, 1);

	/* the bottom layer is not there at all: never opened */
	paths[0] = "/nonexistent/layer0";
	paths[1] = p[1];
	paths[2] = p[2];
	ck_assert_int_eq(eb_pytarget_detect_fs(&t, fs, paths, 3, NULL, "linux/amd64", NULL, &err), 0);
	ck_assert_int_eq(t.libc_major, 2);
	ck_assert_int_eq(t.libc_minor, 36); /* the upper libc.so.6 */
	ck_assert_str_eq(t.python_full_version, "3.11.7");
	d = eb_pytarget_base_dist(&t, "foo");
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_null(d->files); /* its RECORD whited out */
	d = eb_pytarget_base_dist(&t, "bar");
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->nfiles, 1);
	ck_assert_str_eq(d->files[0], "/" SP "bar.py");
	eb_pytarget_release(&t);

	/* layer 1 with a megabyte of noise after its last needed entry
	 * ("zzz/" sorts last), cut in the middle of that noise */
	{
		const char *l1b[7];
		char *noise, *blob;
		struct stat st;
		struct eb_basefs *fs2 = eb_basefs_new();
		for (size_t i = 0; i < sizeof(big) - 1; i++)
			big[i] = (char)('!' + (i * 7919 + (i >> 7) * 104729) % 90);
		big[sizeof(big) - 1] = '\0';
		noise = eb_xasprintf("zzz/noise.bin=%s", big);
		for (size_t i = 0; i < 5; i++)
			l1b[i] = l1[i];
		l1b[5] = noise;
		l1b[6] = NULL;
		blob = layer(l1b);
		ck_assert_int_eq(eb_basefs_add_layer(fs2, p[0], &err), 0);
		ck_assert_int_eq(eb_basefs_add_layer(fs2, blob, &err), 0);
		ck_assert_int_eq(eb_basefs_add_layer(fs2, p[2], &err), 0);
		ck_assert_int_eq(stat(blob, &st), 0);
		cut = eb_xasprintf("%s/cut.tar.gz", tmp);
		{
			char *cmd = eb_xasprintf("head -c %lld '%s' >'%s'", (long long)st.st_size / 2, blob, cut);
			ck_assert_int_eq(system(cmd), 0);
			free(cmd);
		}
		/* the cut blob is not a whole layer ... */
		{
			struct eb_basefs *whole = eb_basefs_new();
			ck_assert_int_lt(eb_basefs_add_layer(whole, cut, &err), 0);
			eb_error_clear(&err);
			eb_basefs_free(whole);
		}
		/* ... but detection never reads that far */
		paths[1] = cut;
		ck_assert_int_eq(eb_pytarget_detect_fs(&t, fs2, paths, 3, NULL, "linux/amd64", NULL, &err), 0);
		ck_assert_int_eq(t.libc_minor, 36);
		ck_assert_uint_eq(eb_pytarget_base_dist(&t, "bar")->nfiles, 1);
		eb_pytarget_release(&t);
		eb_basefs_free(fs2);
		free(noise);
		free(blob);
		free(cut);
	}
	eb_basefs_free(fs);
	for (size_t i = 0; i < 3; i++)
		free(p[i]);
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
	tcase_add_test(tc, base_dists);
	tcase_add_test(tc, shadow_whiteout_skip);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
