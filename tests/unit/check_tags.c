/*
 * check_tags.c - wheel filenames, target tag lists and wheel selection.
 *
 * The rank vectors come from python-packaging.md §5 (packaging.tags order
 * for cp311 on glibc 2.36 x86_64, linux_* last as uv ranks it) and the
 * selection cases from §11 (#11, #18, #26-#31).  Most tests are tables run
 * with tcase_add_loop_test.
 */
#include "config.h"

#include "python/tags.h"
#include "testutil.h"

#define HA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HC "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void build_list(struct eb_tag_list *l, const char *py, const char *plat, const char *libc)
{
	struct eb_tag_target t;
	struct eb_error *err = NULL;

	ck_assert_msg(eb_tag_target_parse(&t, py, plat, libc, &err) == 0, "target %s %s %s: %s",
		      py, plat, libc, err ? err->msg : "?");
	ck_assert_int_eq(eb_tag_list_build(l, &t, &err), 0);
	ck_assert_ptr_null(err);
}

/* ---- wheel filenames ------------------------------------------------------ */

struct fn_case {
	const char *filename;
	const char *norm_name; /* NULL: must fail */
	const char *version;
	const char *build;
	size_t ntags;
	const char *first_tag;
	const char *last_tag;
};

static const struct fn_case fn_cases[] = {
	{ "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "numpy",
	  "1.26.4", NULL, 2, "cp311-cp311-manylinux_2_17_x86_64",
	  "cp311-cp311-manylinux2014_x86_64" },
	{ "foo-1.0-py3-none-any.whl", "foo", "1.0", NULL, 1, "py3-none-any", "py3-none-any" },
	/* Names: '_' as written, '.' and upper case accepted. */
	{ "Foo_Bar.baz-1.0-py2.py3-none-any.whl", "foo-bar-baz", "1.0", NULL, 2, "py2-none-any",
	  "py3-none-any" },
	{ "typing_extensions-4.9.0-py3-none-any.whl", "typing-extensions", "4.9.0", NULL, 1,
	  "py3-none-any", "py3-none-any" },
	/* Build tags. */
	{ "foo-1.0-1-py3-none-any.whl", "foo", "1.0", "1", 1, "py3-none-any", "py3-none-any" },
	{ "foo-1.0-12abc-py3-none-any.whl", "foo", "1.0", "12abc", 1, "py3-none-any",
	  "py3-none-any" },
	/* Compressed sets: cross product, in order, duplicates removed. */
	{ "foo-1.0-cp310.cp311-abi3.none-manylinux1_x86_64.linux_x86_64.whl", "foo", "1.0", NULL, 8,
	  "cp310-abi3-manylinux1_x86_64", "cp311-none-linux_x86_64" },
	{ "foo-1.0-py3.py3-none-any.whl", "foo", "1.0", NULL, 1, "py3-none-any", "py3-none-any" },
	/* Tags are lower-cased; the version stays as written. */
	{ "Foo-1.0RC1-CP311-ABI3-MANYLINUX_2_17_X86_64.whl", "foo", "1.0RC1", NULL, 1,
	  "cp311-abi3-manylinux_2_17_x86_64", "cp311-abi3-manylinux_2_17_x86_64" },
	/* §11 #18: read as numpy 1.9.2 (rejected later for its tag). */
	{ "numpy-1.9.2-cp34-none-win32.whl", "numpy", "1.9.2", NULL, 1, "cp34-none-win32",
	  "cp34-none-win32" },
	{ "torch-2.1.0+cu118-cp311-cp311-linux_x86_64.whl", "torch", "2.1.0+cu118", NULL, 1,
	  "cp311-cp311-linux_x86_64", "cp311-cp311-linux_x86_64" },
	/* Invalid. */
	{ "foo-1.0-py3-none-any.zip", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-py3-none-any.WHL", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-1-2-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-abc-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo__bar-1.0-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo+bar-1.0-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "-1.0-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0.x-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo--py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-py3..py2-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-py3-none-.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-3py-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-py3-none-any+x.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "foo-1.0-py3-none-any.whl ", NULL, NULL, NULL, 0, NULL, NULL },
	{ "dir/foo-1.0-py3-none-any.whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ ".whl", NULL, NULL, NULL, 0, NULL, NULL },
	{ "", NULL, NULL, NULL, 0, NULL, NULL },
};

START_TEST(filename_parse)
{
	const struct fn_case *c = &fn_cases[_i];
	struct eb_wheel_filename w;
	struct eb_error *err = NULL;
	int r = eb_wheel_filename_parse(&w, c->filename, &err);

	if (!c->norm_name) {
		ck_assert_msg(r == -EB_EINVALID, "'%s' should be rejected", c->filename);
		ck_assert_ptr_nonnull(err);
		ck_assert_msg(strncmp(err->msg, "invalid wheel filename '", 24) == 0, "%s", err->msg);
		ck_assert_ptr_null(strchr(err->msg, '\n'));
		ck_assert_ptr_null(w.name);
		eb_error_free(err);
		eb_wheel_filename_release(&w);
		return;
	}
	ck_assert_msg(r == 0, "'%s': %s", c->filename, err ? err->msg : "?");
	ck_assert_str_eq(w.norm_name, c->norm_name);
	ck_assert_str_eq(w.version_str, c->version);
	if (c->build)
		ck_assert_str_eq(w.build, c->build);
	else
		ck_assert_ptr_null(w.build);
	ck_assert_uint_eq(w.ntags, c->ntags);
	{
		char *first = eb_tag_to_string(&w.tags[0]);
		char *last = eb_tag_to_string(&w.tags[w.ntags - 1]);

		ck_assert_str_eq(first, c->first_tag);
		ck_assert_str_eq(last, c->last_tag);
		free(first);
		free(last);
	}
	eb_wheel_filename_release(&w);
	eb_wheel_filename_release(&w); /* harmless twice */
}
END_TEST

START_TEST(filename_parsed_version)
{
	struct eb_wheel_filename w;
	struct eb_version v;
	struct eb_error *err = NULL;

	/* §11 #11: 1.0.0 in a filename is version 1.0. */
	ck_assert_int_eq(eb_wheel_filename_parse(&w, "foo-1.0.0-py3-none-any.whl", &err), 0);
	ck_assert_int_eq(eb_version_parse(&v, "1.0", 3, &err), 0);
	ck_assert_int_eq(eb_version_cmp(&w.version, &v), 0);
	ck_assert_str_eq(w.name, "foo");
	eb_version_release(&v);
	eb_wheel_filename_release(&w);
}
END_TEST

START_TEST(filename_too_many_tags)
{
	/* 17 x 16 = 272 tags: over the cap, refused rather than expanded. */
	char name[512] = "foo-1.0-";
	struct eb_wheel_filename w;
	struct eb_error *err = NULL;

	for (int i = 0; i < 17; i++)
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%spy3%d", i ? "." : "",
			 i);
	strncat(name, "-", sizeof(name) - strlen(name) - 1);
	for (int i = 0; i < 16; i++)
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%sabi%d", i ? "." : "",
			 i);
	strncat(name, "-any.whl", sizeof(name) - strlen(name) - 1);
	ck_assert_int_eq(eb_wheel_filename_parse(&w, name, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "too many tags"));
	eb_error_free(err);
}
END_TEST

START_TEST(filename_message_is_printable)
{
	struct eb_wheel_filename w;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_wheel_filename_parse(&w, "foo\n-1.0-py3-none-any.whl", &err),
			 -EB_EINVALID);
	ck_assert_ptr_null(strchr(err->msg, '\n'));
	ck_assert_ptr_nonnull(strstr(err->msg, "'foo?-1.0-py3-none-any.whl'"));
	eb_error_free(err);
}
END_TEST

struct build_case {
	const char *a, *b;
	int sign;
};

static const struct build_case build_cases[] = {
	{ NULL, NULL, 0 },   { NULL, "1", -1 },   { "0", NULL, 1 },    { "1", "1", 0 },
	{ "2", "10", -1 },   { "10", "9", 1 },    { "1a", "1", 1 },    { "1", "1a", -1 },
	{ "1b", "1a", 1 },   { "01", "1", 0 },    { "007x", "7y", -1 }, { "1_x", "1", 1 },
	{ "99999999999999999999999", "99999999999999999999998", 1 },
};

START_TEST(build_cmp)
{
	const struct build_case *c = &build_cases[_i];
	int r = eb_wheel_build_cmp(c->a, c->b);
	int sign = (r > 0) - (r < 0);

	ck_assert_msg(sign == c->sign, "cmp(%s, %s) = %d, want %d", c->a ? c->a : "NULL",
		      c->b ? c->b : "NULL", r, c->sign);
}
END_TEST

/* ---- targets --------------------------------------------------------------------- */

struct arch_case {
	const char *platform, *machine;
};

static const struct arch_case arch_cases[] = {
	{ "linux/amd64", "x86_64" },     { "linux/amd64/v3", "x86_64" },
	{ "linux/arm64", "aarch64" },    { "linux/arm64/v8", "aarch64" },
	{ "linux/arm/v7", "armv7l" },    { "linux/arm", "armv7l" },
	{ "linux/386", "i686" },         { "linux/ppc64le", "ppc64le" },
	{ "linux/s390x", "s390x" },      { "linux/riscv64", "riscv64" },
	{ "x86_64", "x86_64" },          { "aarch64", "aarch64" },
	{ "linux/arm/v6", NULL },        { "linux/arm64/v7", NULL },
	{ "linux/mips64le", NULL },      { "windows/amd64", NULL },
	{ "darwin/arm64", NULL },        { "linux/amd64/v3/x", NULL },
	{ "amd64", NULL },               { "", NULL },
};

START_TEST(platform_arch)
{
	const struct arch_case *c = &arch_cases[_i];
	const char *m = eb_tags_platform_arch(c->platform);

	if (c->machine)
		ck_assert_msg(m && strcmp(m, c->machine) == 0, "%s -> %s", c->platform,
			      m ? m : "NULL");
	else
		ck_assert_msg(m == NULL, "%s -> %s, want NULL", c->platform, m);
}
END_TEST

struct target_case {
	const char *py, *plat, *libc;
	int ok;
	unsigned maj, min;
	const char *full;
	int ft;
	int musl;
	unsigned lmaj, lmin;
};

static const struct target_case target_cases[] = {
	{ "3.11", "linux/amd64", "glibc 2.36", 1, 3, 11, "3.11", 0, 0, 2, 36 },
	{ "3.11.4", "linux/arm64", "musl 1.2", 1, 3, 11, "3.11.4", 0, 1, 1, 2 },
	{ "3.13t", "linux/amd64", "glibc 2.39", 1, 3, 13, "3.13", 1, 0, 2, 39 },
	{ "3.13.0rc1", "linux/amd64", "glibc 2.39", 1, 3, 13, "3.13.0rc1", 0, 0, 2, 39 },
	{ "2.7", "linux/amd64", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3", "linux/amd64", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.x", "linux/amd64", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11rc1", "linux/amd64", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11.x", "linux/amd64", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.12t", "linux/amd64", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/mips64le", "glibc 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "glibc", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "glibc 2", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "glibc 2.36.1", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "uclibc 1.0", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "glibc 3.1", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "musl 2.0", 0, 0, 0, NULL, 0, 0, 0, 0 },
	{ "3.11", "linux/amd64", "GLIBC 2.36", 0, 0, 0, NULL, 0, 0, 0, 0 },
};

START_TEST(target_parse)
{
	const struct target_case *c = &target_cases[_i];
	struct eb_tag_target t;
	struct eb_error *err = NULL;
	int r = eb_tag_target_parse(&t, c->py, c->plat, c->libc, &err);

	if (!c->ok) {
		ck_assert_msg(r == -EB_EINVALID, "%s %s %s accepted", c->py, c->plat, c->libc);
		ck_assert_ptr_nonnull(err);
		eb_error_free(err);
		return;
	}
	ck_assert_msg(r == 0, "%s", err ? err->msg : "?");
	ck_assert_uint_eq(t.py_major, c->maj);
	ck_assert_uint_eq(t.py_minor, c->min);
	ck_assert_str_eq(t.python_full, c->full);
	ck_assert_int_eq(t.free_threaded, c->ft);
	ck_assert_int_eq(t.libc == EB_TAGS_MUSL, c->musl);
	ck_assert_uint_eq(t.libc_major, c->lmaj);
	ck_assert_uint_eq(t.libc_minor, c->lmin);
}
END_TEST

START_TEST(target_build_rejects)
{
	struct eb_tag_target t;
	struct eb_tag_list l;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_tag_target_parse(&t, "3.11", "linux/amd64", "glibc 2.36", &err), 0);
	t.libc_major = 3;
	ck_assert_int_eq(eb_tag_list_build(&l, &t, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "glibc"));
	eb_error_clear(&err);
	t.libc_major = 2;
	memcpy(t.arch, "sparc", 6);
	ck_assert_int_eq(eb_tag_list_build(&l, &t, &err), -EB_EINVALID);
	eb_error_clear(&err);
	memcpy(t.arch, "x86_64", 7);
	t.libc = EB_TAGS_MUSL;
	ck_assert_int_eq(eb_tag_list_build(&l, &t, &err), -EB_EINVALID);
	eb_error_clear(&err);
}
END_TEST

/* ---- tag lists --------------------------------------------------------------------- */

struct count_case {
	const char *py, *plat, *libc;
	size_t ntags, nplatforms;
	const char *first, *last_platform;
};

/* Per platform: cp3X-cp3X, cp3X-abi3, cp3X-none, cp3(X-1)..cp32-abi3 and
 * py3X, py3, py3(X-1)..py30 (3 + (X-2) + (X+2) = 2X + 3 tags), then X + 3
 * "any" tags. */
static const struct count_case count_cases[] = {
	/* The reference: 36 platforms, 914 tags. */
	{ "3.11", "linux/amd64", "glibc 2.36", 914, 36, "cp311-cp311-manylinux_2_36_x86_64",
	  "linux_x86_64" },
	/* arm64: floor 2.17 (2_36..2_17 = 20, manylinux2014, linux). */
	{ "3.11", "linux/arm64", "glibc 2.36", 22 * 25 + 14, 22,
	  "cp311-cp311-manylinux_2_36_aarch64", "linux_aarch64" },
	{ "3.11", "linux/arm/v7", "glibc 2.31", 17 * 25 + 14, 17,
	  "cp311-cp311-manylinux_2_31_armv7l", "linux_armv7l" },
	/* i686 keeps the 2.5 floor: 2_17..2_5 (13) + 3 aliases + linux. */
	{ "3.11", "linux/386", "glibc 2.17", 17 * 25 + 14, 17, "cp311-cp311-manylinux_2_17_i686",
	  "linux_i686" },
	/* Below the floor only linux_<arch> is left. */
	{ "3.11", "linux/arm64", "glibc 2.12", 1 * 25 + 14, 1, "cp311-cp311-linux_aarch64",
	  "linux_aarch64" },
	/* musl 1.2: musllinux_1_2, _1_1, _1_0, linux. */
	{ "3.11", "linux/amd64", "musl 1.2", 4 * 25 + 14, 4, "cp311-cp311-musllinux_1_2_x86_64",
	  "linux_x86_64" },
	{ "3.12", "linux/ppc64le", "glibc 2.28", 14 * 27 + 15, 14,
	  "cp312-cp312-manylinux_2_28_ppc64le", "linux_ppc64le" },
	/* Free-threaded: the same shape with cp313t and abi3t. */
	{ "3.13t", "linux/amd64", "glibc 2.36", 36 * 29 + 16, 36,
	  "cp313-cp313t-manylinux_2_36_x86_64", "linux_x86_64" },
};

START_TEST(tag_counts)
{
	const struct count_case *c = &count_cases[_i];
	struct eb_tag_list l;
	char *first;

	build_list(&l, c->py, c->plat, c->libc);
	ck_assert_uint_eq(l.n, c->ntags);
	ck_assert_uint_eq(l.nplatforms, c->nplatforms);
	first = eb_tag_to_string(&l.items[0]);
	ck_assert_str_eq(first, c->first);
	free(first);
	ck_assert_str_eq(l.items[l.nplatforms - 1].platform, c->last_platform);
	/* The last tag is always the oldest pure-python one. */
	ck_assert_str_eq(l.items[l.n - 1].interpreter, "py30");
	ck_assert_str_eq(l.items[l.n - 1].platform, "any");
	/* Every tag is listed once: its rank is its index. */
	for (size_t i = 0; i < l.n; i++)
		ck_assert_int_eq(eb_tag_list_rank(&l, l.items[i].interpreter, l.items[i].abi,
						  l.items[i].platform),
				 (int)i);
	eb_tag_list_release(&l);
}
END_TEST

struct rank_case {
	const char *tag;
	int rank;
};

/* cp311, glibc 2.36, x86_64.  Platforms: 2_36 (0) .. 2_17 (19),
 * manylinux2014 (20), 2_16 .. 2_12 (25), manylinux2010 (26), 2_11 .. 2_5
 * (33), manylinux1 (34), linux_x86_64 (35). */
static const struct rank_case ref_ranks[] = {
	/* python-packaging.md §5 table */
	{ "cp311-cp311-manylinux_2_36_x86_64", 0 },
	{ "cp311-cp311-manylinux2014_x86_64", 20 },
	{ "cp311-abi3-manylinux_2_36_x86_64", 36 },
	{ "py3-none-any", 902 },
	/* the aliases right after their equal */
	{ "cp311-cp311-manylinux_2_17_x86_64", 19 },
	{ "cp311-cp311-manylinux_2_16_x86_64", 21 },
	{ "cp311-cp311-manylinux_2_12_x86_64", 25 },
	{ "cp311-cp311-manylinux2010_x86_64", 26 },
	{ "cp311-cp311-manylinux_2_5_x86_64", 33 },
	{ "cp311-cp311-manylinux1_x86_64", 34 },
	/* linux_* last among the platforms of each group */
	{ "cp311-cp311-linux_x86_64", 35 },
	{ "cp311-abi3-linux_x86_64", 71 },
	{ "cp311-none-manylinux_2_36_x86_64", 72 },
	/* abi3 from older CPython, down to cp32 */
	{ "cp310-abi3-manylinux_2_36_x86_64", 108 },
	{ "cp38-abi3-manylinux_2_17_x86_64", 108 + 2 * 36 + 19 },
	{ "cp32-abi3-linux_x86_64", 431 },
	{ "py311-none-manylinux_2_36_x86_64", 432 },
	{ "py3-none-manylinux_2_36_x86_64", 468 },
	{ "py30-none-linux_x86_64", 899 },
	{ "cp311-none-any", 900 },
	{ "py311-none-any", 901 },
	{ "py310-none-any", 903 },
	{ "py30-none-any", 913 },
	/* compressed sets rank by their best member; case does not matter */
	{ "py2.py3-none-any", 902 },
	{ "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", 19 },
	{ "CP311-ABI3-MANYLINUX_2_36_X86_64", 36 },
	/* unsupported: §5 "absent" list and §11 #27 */
	{ "cp312-cp312-manylinux_2_17_x86_64", -1 },
	{ "cp312-abi3-manylinux_2_17_x86_64", -1 },
	{ "cp311-cp311t-manylinux_2_17_x86_64", -1 },
	{ "cp311-abi3t-manylinux_2_17_x86_64", -1 },
	{ "cp311-cp311-musllinux_1_2_x86_64", -1 },
	{ "cp311-cp311-manylinux_2_38_x86_64", -1 },
	{ "cp311-cp311-manylinux_2_4_x86_64", -1 },
	{ "cp311-cp311-manylinux_2_17_aarch64", -1 },
	{ "cp311-cp311-win_amd64", -1 },
	{ "cp310-cp310-manylinux_2_17_x86_64", -1 },
	{ "cp310-none-manylinux_2_17_x86_64", -1 },
	{ "cp31-abi3-manylinux_2_17_x86_64", -1 },
	{ "py2-none-any", -1 },
	{ "py27-none-any", -1 },
	{ "py312-none-any", -1 },
	{ "pp310-pypy310_pp73-manylinux_2_17_x86_64", -1 },
	/* malformed */
	{ "py3-none", -1 },
	{ "py3-none-any-x", -1 },
	{ "py3--any", -1 },
	{ "", -1 },
};

START_TEST(rank_reference)
{
	const struct rank_case *c = &ref_ranks[_i];
	struct eb_tag_list l;

	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	ck_assert_msg(eb_tag_list_rank_str(&l, c->tag) == c->rank, "rank(%s) = %d, want %d", c->tag,
		      eb_tag_list_rank_str(&l, c->tag), c->rank);
	eb_tag_list_release(&l);
}
END_TEST

struct trank_case {
	const char *py, *plat, *libc, *tag;
	int rank;
};

static const struct trank_case target_ranks[] = {
	/* musllinux target: musllinux_1_2 (0), _1_1, _1_0, linux (3) */
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-cp311-musllinux_1_2_x86_64", 0 },
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-cp311-musllinux_1_1_x86_64", 1 },
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-cp311-musllinux_1_0_x86_64", 2 },
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-cp311-linux_x86_64", 3 },
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-abi3-musllinux_1_2_x86_64", 4 },
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-cp311-musllinux_1_3_x86_64", -1 },
	{ "3.11", "linux/amd64", "musl 1.2", "cp311-cp311-manylinux_2_17_x86_64", -1 },
	{ "3.11", "linux/amd64", "musl 1.2", "py3-none-any", 4 * 25 + 2 },
	/* arm64: floor 2.17, no manylinux2010/manylinux1 */
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-manylinux_2_17_aarch64", 19 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-manylinux2014_aarch64", 20 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-linux_aarch64", 21 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-manylinux_2_16_aarch64", -1 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-manylinux_2_12_aarch64", -1 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-manylinux2010_aarch64", -1 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-cp311-manylinux_2_17_x86_64", -1 },
	{ "3.11", "linux/arm64", "glibc 2.36", "cp311-abi3-manylinux_2_36_aarch64", 22 },
	{ "3.11", "linux/arm/v7", "glibc 2.31", "cp311-cp311-manylinux2014_armv7l", 15 },
	{ "3.11", "linux/386", "glibc 2.17", "cp311-cp311-manylinux1_i686", 15 },
	{ "3.11", "linux/s390x", "glibc 2.28", "cp311-cp311-manylinux_2_17_s390x", 11 },
	/* glibc below the arm64 floor: only linux_aarch64 and any */
	{ "3.11", "linux/arm64", "glibc 2.12", "cp311-cp311-manylinux_2_12_aarch64", -1 },
	{ "3.11", "linux/arm64", "glibc 2.12", "cp311-cp311-linux_aarch64", 0 },
	/* free-threaded: cp313t then abi3t; abi3 and cp313 are not for it */
	{ "3.13t", "linux/amd64", "glibc 2.36", "cp313-cp313t-manylinux_2_36_x86_64", 0 },
	{ "3.13t", "linux/amd64", "glibc 2.36", "cp313-abi3t-manylinux_2_36_x86_64", 36 },
	{ "3.13t", "linux/amd64", "glibc 2.36", "cp313-none-manylinux_2_36_x86_64", 72 },
	{ "3.13t", "linux/amd64", "glibc 2.36", "cp312-abi3t-manylinux_2_36_x86_64", 108 },
	{ "3.13t", "linux/amd64", "glibc 2.36", "cp313-abi3-manylinux_2_36_x86_64", -1 },
	{ "3.13t", "linux/amd64", "glibc 2.36", "cp313-cp313-manylinux_2_36_x86_64", -1 },
	{ "3.13t", "linux/amd64", "glibc 2.36", "py3-none-any", 36 * 29 + 2 },
	/* a plain 3.13 does not take free-threaded wheels */
	{ "3.13", "linux/amd64", "glibc 2.36", "cp313-cp313t-manylinux_2_36_x86_64", -1 },
	{ "3.13", "linux/amd64", "glibc 2.36", "cp313-abi3t-manylinux_2_36_x86_64", -1 },
};

START_TEST(rank_targets)
{
	const struct trank_case *c = &target_ranks[_i];
	struct eb_tag_list l;

	build_list(&l, c->py, c->plat, c->libc);
	ck_assert_msg(eb_tag_list_rank_str(&l, c->tag) == c->rank, "%s %s %s: rank(%s) = %d, want %d",
		      c->py, c->plat, c->libc, c->tag, eb_tag_list_rank_str(&l, c->tag), c->rank);
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(linux_ranks_last)
{
	struct eb_tag_list l;
	size_t np;

	/* In every ABI group linux_x86_64 comes after every manylinux tag. */
	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	np = l.nplatforms;
	ck_assert_uint_eq((l.n - 14) % np, 0);
	for (size_t g = 0; g < (l.n - 14) / np; g++) {
		ck_assert_str_eq(l.items[g * np + np - 1].platform, "linux_x86_64");
		for (size_t k = 0; k < np - 1; k++)
			ck_assert_msg(strncmp(l.items[g * np + k].platform, "manylinux", 9) == 0,
				      "group %zu platform %zu is %s", g, k,
				      l.items[g * np + k].platform);
	}
	ck_assert_str_eq(eb_tag_list_abi(&l), "cp311");
	ck_assert_str_eq(eb_tag_list_best_platform(&l), "manylinux_2_36_x86_64");
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(wheel_rank)
{
	struct eb_tag_list l;
	struct eb_wheel_filename w;
	struct eb_error *err = NULL;

	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	/* §11 #28: the compressed set is compatible, ranked by its best tag. */
	ck_assert_int_eq(eb_wheel_filename_parse(
				 &w, "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
				 &err),
			 0);
	ck_assert_int_eq(eb_tag_list_wheel_rank(&l, &w), 19);
	eb_wheel_filename_release(&w);
	/* §11 #18: a win32 cp34 wheel fits nothing. */
	ck_assert_int_eq(eb_wheel_filename_parse(&w, "numpy-1.9.2-cp34-none-win32.whl", &err), 0);
	ck_assert_int_eq(eb_tag_list_wheel_rank(&l, &w), -1);
	eb_wheel_filename_release(&w);
	eb_tag_list_release(&l);
}
END_TEST

/* ---- file selection ------------------------------------------------------------------ */

static const struct eb_file_hash hash_a[] = { { "sha256", HA } };
static const struct eb_file_hash hash_b[] = { { "sha256", HB } };
static const struct eb_file_hash hash_c[] = { { "sha256", HC } };
static const struct eb_file_hash hash_md5[] = { { "md5", "0123456789abcdef0123456789abcdef" } };

#define F(name) { name, "https://files.example/" name, NULL, 0, NULL, 0, NULL, -1 }
#define FH(name, h) { name, "https://files.example/" name, h, 1, NULL, 0, NULL, -1 }
#define FP(name, rp) { name, "https://files.example/" name, NULL, 0, rp, 0, NULL, -1 }
#define FY(name, why) { name, "https://files.example/" name, NULL, 0, NULL, 1, why, -1 }
#define MAXF 6

struct sel_case {
	const char *what;
	const char *req;
	const char *req_hashes[2]; /* --hash values */
	const char *version;       /* NULL: the requirement's pin */
	const char *py, *libc;     /* target (linux/amd64 unless libc starts with '@') */
	struct eb_dist_file files[MAXF];
	int want;                  /* chosen index, or -1 */
	enum eb_wheel_miss miss;
	int yanked;
	const char *msg_has[3];
	const char *hint_has;
};

static const struct sel_case sel_cases[] = {
	{ "§11 #26: cp311-cp311 manylinux_2_28 beats cp311-abi3 manylinux_2_17",
	  "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp311-abi3-manylinux_2_17_x86_64.whl"),
	    F("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #27: only manylinux_2_38", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp311-cp311-manylinux_2_38_x86_64.whl") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0,
	  { "envbuild installs wheels only; no wheel of foo==1.0 for cp311 manylinux_2_36_x86_64",
	    "the index has: foo-1.0-cp311-cp311-manylinux_2_38_x86_64.whl" },
	  "or an sdist (envbuild builds it from source" },
	{ "§11 #27: only musllinux_1_2", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp311-cp311-musllinux_1_2_x86_64.whl") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "musllinux_1_2_x86_64.whl" }, NULL },
	{ "§11 #27: only cp311t", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp311-cp311t-manylinux_2_17_x86_64.whl") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "cp311t" }, NULL },
	{ "§11 #27: only cp312", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"),
	    F("foo-1.0-cp312-abi3-manylinux_2_17_x86_64.whl") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "cp312-cp312", "cp312-abi3" }, NULL },
	{ "§11 #28: compressed tag set", "numpy==1.26.4", { NULL, NULL }, NULL, "3.11",
	  "glibc 2.36",
	  { F("numpy-1.26.4.tar.gz"),
	    F("numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #29: the hash picks a lower-ranked wheel", "foo==1.0", { "sha256:" HB, NULL }, NULL,
	  "3.11", "glibc 2.36",
	  { FH("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", hash_a),
	    FH("foo-1.0-py3-none-any.whl", hash_b) },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #29: two allowed hashes: tag rank decides", "foo==1.0", { "sha256:" HB, "sha256:" HA },
	  NULL, "3.11", "glibc 2.36",
	  { FH("foo-1.0-py3-none-any.whl", hash_b),
	    FH("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", hash_a) },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #29: a listed matching hash beats an unknown one", "foo==1.0", { "sha256:" HB, NULL },
	  NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"),
	    FH("foo-1.0-py3-none-any.whl", hash_b) },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "hash mode, the index lists no comparable hash: left to the download", "foo==1.0",
	  { "sha256:" HB, NULL }, NULL, "3.11", "glibc 2.36",
	  { FH("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", hash_md5) },
	  0, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "hash mode, no wheel has an allowed hash", "foo==1.0", { "sha256:" HC, NULL }, NULL, "3.11",
	  "glibc 2.36",
	  { F("foo-1.0.tar.gz"), FH("foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", hash_a),
	    FH("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", hash_b) },
	  -1, EB_WHEEL_HASH, 0,
	  { "no wheel of foo==1.0 for cp311 manylinux_2_36_x86_64 has one of the requirement's hashes",
	    "the index has: foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl (other hash), "
	    "foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl (other hash), foo-1.0.tar.gz" },
	  "the index lists sha256:" HB " for foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl" },
	{ "an sdist's hash does not make it installable", "foo==1.0", { "sha256:" HC, NULL }, NULL,
	  "3.11", "glibc 2.36",
	  { FH("foo-1.0.tar.gz", hash_c), FH("foo-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", hash_a) },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "envbuild installs wheels only" }, NULL },
	{ "§11 #30: the only match is yanked, == pin: allowed with a warning", "foo==1.0",
	  { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { FY("foo-1.0-py3-none-any.whl", "broken metadata") },
	  0, EB_WHEEL_OK, 1, { NULL }, NULL },
	{ "§11 #30: the only match is yanked, === pin", "foo===1.0", { NULL, NULL }, NULL, "3.11",
	  "glibc 2.36", { FY("foo-1.0-py3-none-any.whl", NULL) },
	  0, EB_WHEEL_OK, 1, { NULL }, NULL },
	{ "§11 #30: the only match is yanked, >= range: no candidate", "foo>=1.0", { NULL, NULL },
	  "1.0", "3.11", "glibc 2.36", { FY("foo-1.0-py3-none-any.whl", "broken metadata") },
	  -1, EB_WHEEL_YANKED, 0,
	  { "every wheel of foo==1.0 for cp311 manylinux_2_36_x86_64 is yanked",
	    "foo-1.0-py3-none-any.whl (yanked: broken metadata)" },
	  NULL },
	{ "not yanked beats a better tag that is yanked", "foo==1.0", { NULL, NULL }, NULL, "3.11",
	  "glibc 2.36",
	  { FY("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", ""), F("foo-1.0-py3-none-any.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #31: requires-python >=3.12 is skipped", "foo==1.0", { NULL, NULL }, NULL, "3.11",
	  "glibc 2.36",
	  { FP("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", ">=3.12"),
	    FP("foo-1.0-py3-none-any.whl", ">=3.8") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #31: nothing else fits", "foo==1.0", { NULL, NULL }, NULL, "3.11.4", "glibc 2.36",
	  { F("foo-1.0.tar.gz"), FP("foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", ">=3.12") },
	  -1, EB_WHEEL_REQUIRES_PYTHON, 0,
	  { "no wheel of foo==1.0 for cp311 manylinux_2_36_x86_64 allows python 3.11.4",
	    "the index has: foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl (requires-python >=3.12), "
	    "foo-1.0.tar.gz" },
	  NULL },
	{ "requires-python against a bare 3.11 (= 3.11.0)", "foo==1.0", { NULL, NULL }, NULL, "3.11",
	  "glibc 2.36", { FP("foo-1.0-py3-none-any.whl", ">3.11.0") },
	  -1, EB_WHEEL_REQUIRES_PYTHON, 0, { "allows python 3.11" }, NULL },
	{ "requires-python <4,>=3.9 admits 3.11", "foo==1.0", { NULL, NULL }, NULL, "3.11.2",
	  "glibc 2.36", { FP("foo-1.0-py3-none-any.whl", "<4,>=3.9") },
	  0, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "an invalid requires-python is ignored (as pip does)", "foo==1.0", { NULL, NULL }, NULL,
	  "3.11", "glibc 2.36", { FP("foo-1.0-py3-none-any.whl", ">=3.x") },
	  0, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "the highest build tag wins a tie", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-py3-none-any.whl"), F("foo-1.0-2-py3-none-any.whl"),
	    F("foo-1.0-10-py3-none-any.whl"), F("foo-1.0-9z-py3-none-any.whl") },
	  2, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "tag rank beats the build tag", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-7-py3-none-any.whl"), F("foo-1.0-cp311-none-any.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "py2-only wheels are rejected", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-py2-none-any.whl"), F("foo-1.0-cp27-cp27mu-manylinux1_x86_64.whl") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "foo-1.0-py2-none-any.whl" }, NULL },
	{ "py2.py3 is fine", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-py2-none-any.whl"), F("foo-1.0-py2.py3-none-any.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "abi3 from an older CPython beats pure python", "cryptography==42.0.5", { NULL, NULL }, NULL,
	  "3.11", "glibc 2.36",
	  { F("cryptography-42.0.5.tar.gz"),
	    F("cryptography-42.0.5-cp37-abi3-musllinux_1_2_x86_64.whl"),
	    F("cryptography-42.0.5-cp37-abi3-manylinux_2_28_x86_64.whl"),
	    F("cryptography-42.0.5-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
	    F("cryptography-42.0.5-py3-none-any.whl") },
	  3, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "linux_x86_64 ranks after manylinux1", "foo==1.0", { NULL, NULL }, NULL, "3.11",
	  "glibc 2.36",
	  { F("foo-1.0-cp311-cp311-linux_x86_64.whl"), F("foo-1.0-cp311-cp311-manylinux1_x86_64.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "linux_x86_64 still beats abi3", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { F("foo-1.0-cp311-abi3-manylinux_2_36_x86_64.whl"), F("foo-1.0-cp311-cp311-linux_x86_64.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "musllinux target takes the musllinux wheel", "foo==1.0", { NULL, NULL }, NULL, "3.11",
	  "musl 1.2",
	  { F("foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"),
	    F("foo-1.0-cp311-cp311-musllinux_1_1_x86_64.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "musllinux target, only manylinux", "foo==1.0", { NULL, NULL }, NULL, "3.11", "musl 1.2",
	  { F("foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "for cp311 musllinux_1_2_x86_64" }, NULL },
	{ "arm64: manylinux2014 fits, 2_12 does not", "foo==1.0", { NULL, NULL }, NULL, "3.11",
	  "@arm64 glibc 2.31",
	  { F("foo-1.0-cp311-cp311-manylinux_2_12_aarch64.whl"),
	    F("foo-1.0-cp311-cp311-manylinux2014_aarch64.whl"),
	    F("foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl") },
	  1, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "§11 #11: ==1.0 takes 1.0.0 files; names in any spelling", "Foo_Bar==1.0", { NULL, NULL },
	  NULL, "3.11", "glibc 2.36", { F("Foo.Bar-1.0.0-py3-none-any.whl") },
	  0, EB_WHEEL_OK, 0, { NULL }, NULL },
	{ "files of other projects and versions are ignored", "foo==1.0", { NULL, NULL }, NULL,
	  "3.11", "glibc 2.36",
	  { F("foobar-1.0-py3-none-any.whl"), F("foo-1.1-py3-none-any.whl"),
	    F("foo-1.0+local-py3-none-any.whl"), F("foo-1.0-py3-none-any.whl.metadata") },
	  -1, EB_WHEEL_NO_COMPATIBLE, 0, { "foobar-1.0-py3-none-any.whl, foo-1.1-py3-none-any.whl" },
	  NULL },
	{ "no files", "foo==1.0", { NULL, NULL }, NULL, "3.11", "glibc 2.36",
	  { { NULL, NULL, NULL, 0, NULL, 0, NULL, -1 } },
	  -1, EB_WHEEL_NO_FILES, 0, { "the index lists no files for this version" }, NULL },
};

/* "numpy==1.26.4 --hash=..." -> requirement with hashes. */
static void make_req(struct eb_requirement *r, const char *text, const char *const hashes[2])
{
	struct eb_error *err = NULL;

	ck_assert_msg(eb_requirement_parse(r, text, strlen(text), &err) == 0, "%s: %s", text,
		      err ? err->msg : "?");
	for (int i = 0; i < 2; i++)
		if (hashes && hashes[i])
			eb_requirement_add_hash(r, hashes[i], strlen(hashes[i]), 1);
}

START_TEST(select_cases)
{
	const struct sel_case *c = &sel_cases[_i];
	struct eb_requirement req;
	struct eb_tag_list l;
	struct eb_wheel_choice ch;
	struct eb_error *err = NULL;
	size_t nfiles = 0;
	int r;

	while (nfiles < MAXF && c->files[nfiles].filename)
		nfiles++;
	if (c->libc[0] == '@')
		build_list(&l, c->py, "linux/arm64", c->libc + 7);
	else
		build_list(&l, c->py, "linux/amd64", c->libc);
	make_req(&req, c->req, c->req_hashes);
	r = eb_tags_select(&ch, c->files, nfiles, &req, c->version, &l, &err);
	if (c->want >= 0) {
		ck_assert_msg(r == 0, "%s: %s", c->what, err ? err->msg : "?");
		ck_assert_msg(ch.index == (size_t)c->want, "%s: chose %s", c->what,
			      c->files[ch.index].filename);
		ck_assert_int_eq(ch.miss, EB_WHEEL_OK);
		ck_assert_int_eq(ch.yanked, c->yanked);
		ck_assert_int_ge(ch.rank, 0);
		if (c->yanked && c->files[c->want].yanked_reason)
			ck_assert_ptr_eq(ch.yanked_reason, c->files[c->want].yanked_reason);
	} else {
		ck_assert_msg(r == -EB_ENOTFOUND, "%s: r = %d, chose %s", c->what, r,
			      r == 0 ? c->files[ch.index].filename : "-");
		ck_assert_int_eq(ch.miss, c->miss);
		ck_assert_ptr_nonnull(err);
		ck_assert_int_eq(err->code, EB_ENOTFOUND);
		ck_assert_ptr_null(strchr(err->msg, '\n'));
		for (int k = 0; k < 3 && c->msg_has[k]; k++)
			ck_assert_msg(strstr(err->msg, c->msg_has[k]), "%s: '%s' not in '%s'", c->what,
				      c->msg_has[k], err->msg);
		if (c->hint_has)
			ck_assert_msg(err->hint && strstr(err->hint, c->hint_has),
				      "%s: hint '%s' not in '%s'", c->what, c->hint_has,
				      err->hint ? err->hint : "(none)");
		eb_error_free(err);
	}
	eb_requirement_release(&req);
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(select_hash_flag)
{
	static const struct eb_dist_file files[] = {
		FH("foo-1.0-py3-none-any.whl", hash_a),
	};
	static const char *const with_hash[2] = { "sha256:" HA, NULL };
	struct eb_requirement req;
	struct eb_tag_list l;
	struct eb_wheel_choice ch;
	struct eb_error *err = NULL;

	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	make_req(&req, "foo==1.0", with_hash);
	ck_assert_int_eq(eb_tags_select(&ch, files, 1, &req, NULL, &l, &err), 0);
	ck_assert_int_eq(ch.hash_matched, 1);
	ck_assert_int_eq(ch.rank, 902);
	eb_requirement_release(&req);
	/* Outside hash mode the index's hashes do not matter. */
	make_req(&req, "foo==1.0", NULL);
	ck_assert_int_eq(eb_tags_select(&ch, files, 1, &req, NULL, &l, &err), 0);
	ck_assert_int_eq(ch.hash_matched, 0);
	eb_requirement_release(&req);
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(select_message_exact)
{
	static const struct eb_dist_file files[] = {
		F("numpy-1.26.4.tar.gz"),
		F("numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.whl"),
	};
	struct eb_requirement req;
	struct eb_tag_list l;
	struct eb_wheel_choice ch;
	struct eb_error *err = NULL;

	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	make_req(&req, "numpy==1.26.4", NULL);
	ck_assert_int_eq(eb_tags_select(&ch, files, 2, &req, NULL, &l, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg, "envbuild installs wheels only; no wheel of numpy==1.26.4 for "
				   "cp311 manylinux_2_36_x86_64; the index has: numpy-1.26.4.tar.gz, "
				   "numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.whl");
	ck_assert_int_eq(ch.miss, EB_WHEEL_NO_COMPATIBLE);
	eb_error_free(err);
	eb_requirement_release(&req);
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(select_message_truncated)
{
	struct eb_dist_file files[20];
	char names[20][64];
	struct eb_requirement req;
	struct eb_tag_list l;
	struct eb_wheel_choice ch;
	struct eb_error *err = NULL;

	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "numpy-1.26.4-cp3%d-cp3%d-win_amd64.whl", i, i);
		memset(&files[i], 0, sizeof(files[i]));
		files[i].filename = names[i];
	}
	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	make_req(&req, "numpy==1.26.4", NULL);
	ck_assert_int_eq(eb_tags_select(&ch, files, 20, &req, NULL, &l, &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, "numpy-1.26.4-cp37-cp37-win_amd64.whl, ... and 12 more"));
	ck_assert_ptr_null(strstr(err->msg, "cp38-cp38"));
	eb_error_free(err);
	eb_requirement_release(&req);
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(select_local_wheel_path)
{
	/* §11 #18: ./numpy-1.9.2-cp34-none-win32.whl reads as numpy==1.9.2
	 * and is rejected for its tag. */
	static const struct eb_dist_file files[] = { F("numpy-1.9.2-cp34-none-win32.whl") };
	struct eb_requirement req;
	struct eb_tag_list l;
	struct eb_wheel_choice ch;
	struct eb_error *err = NULL;

	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	make_req(&req, "./numpy-1.9.2-cp34-none-win32.whl", NULL);
	ck_assert_str_eq(eb_requirement_pinned_version(&req), "1.9.2");
	ck_assert_int_eq(eb_tags_select(&ch, files, 1, &req, NULL, &l, &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, "no wheel of numpy==1.9.2 for cp311"));
	eb_error_free(err);
	eb_requirement_release(&req);
	eb_tag_list_release(&l);
}
END_TEST

START_TEST(select_bad_version)
{
	static const struct eb_dist_file files[] = { F("foo-1.0-py3-none-any.whl") };
	struct eb_requirement req;
	struct eb_tag_list l;
	struct eb_wheel_choice ch;
	struct eb_error *err = NULL;

	build_list(&l, "3.11", "linux/amd64", "glibc 2.36");
	make_req(&req, "foo", NULL);
	ck_assert_int_eq(eb_tags_select(&ch, files, 1, &req, "1.x", &l, &err), -EB_EINVALID);
	eb_error_clear(&err);
	/* Unpinned and no version given: every version's files qualify. */
	ck_assert_int_eq(eb_tags_select(&ch, files, 1, &req, NULL, &l, &err), 0);
	eb_requirement_release(&req);
	eb_tag_list_release(&l);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("tags");
	TCase *tc;

	tc = tcase_create("filename");
	tcase_add_loop_test(tc, filename_parse, 0, (int)NELEM(fn_cases));
	tcase_add_test(tc, filename_parsed_version);
	tcase_add_test(tc, filename_too_many_tags);
	tcase_add_test(tc, filename_message_is_printable);
	tcase_add_loop_test(tc, build_cmp, 0, (int)NELEM(build_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("target");
	tcase_add_loop_test(tc, platform_arch, 0, (int)NELEM(arch_cases));
	tcase_add_loop_test(tc, target_parse, 0, (int)NELEM(target_cases));
	tcase_add_test(tc, target_build_rejects);
	suite_add_tcase(s, tc);

	tc = tcase_create("rank");
	tcase_add_loop_test(tc, tag_counts, 0, (int)NELEM(count_cases));
	tcase_add_loop_test(tc, rank_reference, 0, (int)NELEM(ref_ranks));
	tcase_add_loop_test(tc, rank_targets, 0, (int)NELEM(target_ranks));
	tcase_add_test(tc, linux_ranks_last);
	tcase_add_test(tc, wheel_rank);
	suite_add_tcase(s, tc);

	tc = tcase_create("select");
	tcase_add_loop_test(tc, select_cases, 0, (int)NELEM(sel_cases));
	tcase_add_test(tc, select_hash_flag);
	tcase_add_test(tc, select_message_exact);
	tcase_add_test(tc, select_message_truncated);
	tcase_add_test(tc, select_local_wheel_path);
	tcase_add_test(tc, select_bad_version);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
