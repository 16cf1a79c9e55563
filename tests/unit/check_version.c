/*
 * check_version.c - PEP 440 versions and specifiers: normalisation, invalid
 * input with columns, the total order, specifier matching and the pinning
 * cases of the python-packaging checklist.  Expected values were checked
 * against pypa/packaging (main, 2026).
 */
#include "config.h"

#include "testutil.h"

#include "pin/version.h"

static struct eb_version parse_ok(const char *s)
{
	struct eb_version v;
	struct eb_error *err = NULL;
	int r = eb_version_parse(&v, s, strlen(s), &err);

	ck_assert_msg(r == 0, "'%s' should parse: %s", s, err ? err->msg : "?");
	return v;
}

/* --- normalisation ------------------------------------------------------- */

static const struct {
	const char *in, *out;
} norm_cases[] = {
	{ "1.0", "1.0" },
	{ "1.0.0.0", "1.0.0.0" },
	{ "01.02.03", "1.2.3" },
	{ "v1.0", "1.0" },
	{ "V1.0", "1.0" },
	{ "  v1.0\t\n", "1.0" },
	{ "1!2.0", "1!2.0" },
	{ "0!1.0", "1.0" },
	{ "00!1.2", "1.2" },
	{ "0100!0.0", "100!0.0" },
	{ "1.0-1", "1.0.post1" },
	{ "1.0-5", "1.0.post5" },
	{ "1.0-r5", "1.0.post5" },
	{ "1.0-rev5", "1.0.post5" },
	{ "1.0.rev2", "1.0.post2" },
	{ "1.0r", "1.0.post0" },
	{ "1.0rev", "1.0.post0" },
	{ "1.0post", "1.0.post0" },
	{ "1.0.POST1", "1.0.post1" },
	{ "1.0.post000", "1.0.post0" },
	{ "1.0alpha1", "1.0a1" },
	{ "1.0.alpha", "1.0a0" },
	{ "1.0-ALPHA1", "1.0a1" },
	{ "1.0a", "1.0a0" },
	{ "1.0a05", "1.0a5" },
	{ "1.0beta", "1.0b0" },
	{ "1.0-B1", "1.0b1" },
	{ "1.0b07", "1.0b7" },
	{ "1.0c1", "1.0rc1" },
	{ "1.0c056", "1.0rc56" },
	{ "1.0.RC", "1.0rc0" },
	{ "1.0rc09", "1.0rc9" },
	{ "1.0pre", "1.0rc0" },
	{ "1.0PREVIEW2", "1.0rc2" },
	{ "1.0.DEV", "1.0.dev0" },
	{ "1.0dev", "1.0.dev0" },
	{ "1.0-dev1", "1.0.dev1" },
	{ "1.1.dev09000", "1.1.dev9000" },
	{ "1.0b2-346", "1.0b2.post346" },
	{ "1.0post-dev", "1.0.post0.dev0" },
	{ "1.0a1.post2.dev3", "1.0a1.post2.dev3" },
	{ "7!1.0b2.post345.dev456", "7!1.0b2.post345.dev456" },
	/* trailing separators are accepted by packaging's grammar */
	{ "1.0a-", "1.0a0" },
	{ "1.0.dev.", "1.0.dev0" },
	{ "1.0a.-1", "1.0a0.post1" },
	/* local labels */
	{ "1.0+ubuntu-1", "1.0+ubuntu.1" },
	{ "1.0+AbC_x-Y", "1.0+abc.x.y" },
	{ "1.0+007", "1.0+7" },
	{ "1.0.4+8.0", "1.0.4+8.0" },
	{ "2.1.0+cu118", "2.1.0+cu118" },
	{ "1.0.r32+123456", "1.0.post32+123456" },
	{ "1.2+123abc456", "1.2+123abc456" },
};

START_TEST(test_normalise)
{
	struct eb_version v = parse_ok(norm_cases[_i].in);
	char *s = eb_version_to_string(&v);

	ck_assert_str_eq(s, norm_cases[_i].out);
	free(s);
	eb_version_release(&v);
}
END_TEST

START_TEST(test_parts)
{
	struct eb_version v = parse_ok("3!1.2.3rc4.post5.dev6+Local-7");

	ck_assert_uint_eq(v.epoch, 3);
	ck_assert_uint_eq(v.nrelease, 3);
	ck_assert_uint_eq(v.release[0], 1);
	ck_assert_uint_eq(v.release[2], 3);
	ck_assert_int_eq(v.pre, EB_PRE_RC);
	ck_assert_uint_eq(v.pre_n, 4);
	ck_assert_int_eq(v.has_post, 1);
	ck_assert_uint_eq(v.post, 5);
	ck_assert_int_eq(v.has_dev, 1);
	ck_assert_uint_eq(v.dev, 6);
	ck_assert_str_eq(v.local, "local.7");
	ck_assert_int_eq(eb_version_is_prerelease(&v), 1);
	eb_version_release(&v);

	v = parse_ok("1.0.post1");
	ck_assert_int_eq(eb_version_is_prerelease(&v), 0);
	ck_assert_ptr_null(v.local);
	eb_version_release(&v);
	v = parse_ok("1.0.dev1");
	ck_assert_int_eq(eb_version_is_prerelease(&v), 1);
	eb_version_release(&v);
}
END_TEST

START_TEST(test_copy)
{
	struct eb_version a = parse_ok("1.2.3+abc"), b;
	char *s;

	eb_version_copy(&b, &a);
	eb_version_release(&a);
	s = eb_version_to_string(&b);
	ck_assert_str_eq(s, "1.2.3+abc");
	free(s);
	eb_version_release(&b);
}
END_TEST

/* --- invalid versions ---------------------------------------------------- */

static const struct {
	const char *in;
	unsigned col;
} bad_versions[] = {
	{ "", 1 },
	{ "   ", 4 },
	{ "french toast", 1 },
	{ "1.0+a+", 6 },
	{ "1.0++", 5 },
	{ "1.0+_foobar", 5 },
	{ "1.0+foo&asd", 8 },
	{ "1.0+1+1", 6 },
	{ "1.0+", 5 },
	{ "1. 0", 2 },
	{ "1 .0", 2 },
	{ "1.0 a1", 4 },
	{ "1.0a 1", 5 },
	{ ".", 1 },
	{ "1..0", 2 },
	{ "1.0.", 4 },
	{ ".1.0", 1 },
	{ "1.0_1", 4 },
	{ "1.0a1.2", 6 },
	{ "1!", 3 },
	{ "v", 2 },
	{ "1.0.*", 4 },
	{ "1.0-", 4 },
	{ "2.0-final", 4 },
	{ "1.0\xc3\xa9", 4 },
	{ "99999999999999999999999999", 1 },
	{ "1.0a99999999999999999999999", 5 },
};

START_TEST(test_invalid)
{
	struct eb_version v;
	struct eb_error *err = NULL;
	const char *in = bad_versions[_i].in;

	ck_assert_int_eq(eb_version_parse(&v, in, strlen(in), &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->code, EB_EINVALID);
	ck_assert_msg(err->col == bad_versions[_i].col, "'%s': col %u, want %u", in, err->col,
		      bad_versions[_i].col);
	ck_assert_ptr_null(err->file);
	ck_assert_ptr_null(strchr(err->msg, '\n'));
	eb_error_free(err);
}
END_TEST

START_TEST(test_invalid_message)
{
	struct eb_version v;
	struct eb_error *err = NULL;

	ck_assert_int_lt(eb_version_parse(&v, " 1.0+ ", 6, &err), 0);
	ck_assert_str_eq(err->msg, "invalid version '1.0+'");
	ck_assert_uint_eq(err->col, 6);
	ck_assert_ptr_nonnull(err->hint);
	eb_error_free(err);

	err = NULL;
	ck_assert_int_lt(eb_version_parse(&v, "1.99999999999999999999", 22, &err), 0);
	ck_assert_str_eq(err->msg,
			 "version number '99999999999999999999' in '1.99999999999999999999' is too large");
	ck_assert_uint_eq(err->col, 3);
	eb_error_free(err);

	/* len bounds the input: the rest of the buffer is not read */
	v = parse_ok("1.0");
	eb_version_release(&v);
	ck_assert_int_eq(eb_version_parse(&v, "1.0rc1 garbage", 6, NULL), 0);
	ck_assert_int_eq(v.pre, EB_PRE_RC);
	eb_version_release(&v);
}
END_TEST

/* --- ordering: every pair of this list compares by index ---------------- */

static const char *const sorted_versions[] = {
	"1.0.dev0",
	"1.0.dev456",
	"1.0.dev456+local",
	"1.0a0",
	"1.0a0.post0.dev0",
	"1.0a0.post0",
	"1.0a1.dev1",
	"1.0a1.dev1+local",
	"1.0a1",
	"1.0a1+local",
	"1.0b0",
	"1.0b1.dev456",
	"1.0b2",
	"1.0b2.post345.dev456",
	"1.0b2.post345",
	"1.0b2-346",
	"1.0rc0",
	"1.0rc1.dev1",
	"1.0c1",
	"1.0rc2",
	"1.0",
	"1.0+abc",
	"1.0+1",
	"1.0.post0.dev0",
	"1.0.post0",
	"1.0.post456.dev34",
	"1.0.post456",
	"1.0.post456+local",
	"1.0.1.dev1",
	"1.0.1a1",
	"1.0.1",
	"1.0.1+local",
	"1.0.1.post1",
	"1.1.dev1",
	"1.2+a",
	"1.2+abc",
	"1.2+abcdef",
	"1.2+def",
	"1.2+0",
	"1.2+1",
	"1.2+1.abc",
	"1.2+1.1",
	"1.2+1.1.0",
	"1.2+2",
	"1.2+10",
	"1.2+123",
	"1.2+123456",
	"1.2.r32+123456",
	"1.2.rev33+123456",
	"1.10",
	"2.0",
	"2.1.0",
	"2.1.0+cu118",
	"2.1.0+cu121",
	"10.0",
	"1!0.1.dev0",
	"1!1.0.dev0",
	"1!1.0a1",
	"1!1.0",
	"1!1.0+local",
	"1!1.0.post1",
	"1!1.2.rev33+123456",
	"2!0.0.1",
};

#define NSORTED (sizeof(sorted_versions) / sizeof(sorted_versions[0]))

START_TEST(test_order)
{
	struct eb_version a = parse_ok(sorted_versions[_i]);
	size_t j;

	for (j = 0; j < NSORTED; j++) {
		struct eb_version b = parse_ok(sorted_versions[j]);
		int want = (size_t)_i < j ? -1 : (size_t)_i > j ? 1 : 0;
		int got = eb_version_cmp(&a, &b);

		got = got < 0 ? -1 : got > 0;
		ck_assert_msg(got == want, "cmp('%s', '%s') = %d, want %d", sorted_versions[_i],
			      sorted_versions[j], got, want);
		eb_version_release(&b);
	}
	eb_version_release(&a);
}
END_TEST

static const struct {
	const char *a, *b;
} equal_versions[] = {
	{ "1.0", "1.0.0" },         { "1", "1.0.0.0" },          { "1.0rc1", "1.0c1" },
	{ "1.0rc1", "1.0pre1" },    { "1.0-1", "1.0.post1" },     { "0!1.0", "1.0" },
	{ "1.0+007", "1.0+7" },     { "1.0+a-b", "1.0+A.b" },     { "v1.0", "1.0" },
	{ "1.0+deadbeef.0", "1.0.0+deadbeef.00" },
};

START_TEST(test_equal)
{
	struct eb_version a = parse_ok(equal_versions[_i].a), b = parse_ok(equal_versions[_i].b);

	ck_assert_int_eq(eb_version_cmp(&a, &b), 0);
	ck_assert_int_eq(eb_version_cmp(&b, &a), 0);
	eb_version_release(&a);
	eb_version_release(&b);
}
END_TEST

/* --- specifiers ---------------------------------------------------------- */

static const struct {
	const char *spec, *version;
	int want;
} contains_cases[] = {
	/* == zero-pads, a public pin ignores the candidate's local label */
	{ "==2", "2.0", 1 },
	{ "==2.0.0", "2.0", 1 },
	{ "==2.0", "2.0+deadbeef", 1 },
	{ "==2.0+deadbeef", "2.0+deadbeef", 1 },
	{ "==2.0.0+deadbeef.00", "2.0+deadbeef.0", 1 },
	{ "==2.0+deadbeef", "2.0", 0 },
	{ "==2.0", "2.1", 0 },
	{ "==2.0", "2.0.post1", 0 },
	{ "==2.0", "2.0rc1", 0 },
	{ "==1.1a1", "1.1a1", 1 },
	/* prefix matching */
	{ "==2.*", "2.dev1", 1 },
	{ "==2.*", "2a1.post1", 1 },
	{ "==2.0.*", "2c1.post1.dev1", 1 },
	{ "==2.0.0.*", "2", 1 },
	{ "==2.*", "0!2", 1 },
	{ "==2.0.*", "2.0.0.0", 1 },
	{ "==2.1.*", "2.1+local.version", 1 },
	{ "==1.1.*", "1.1a1", 1 },
	{ "==3.*", "2.0", 0 },
	{ "==2.0.*", "2.1", 0 },
	{ "==2.0.*", "2.1.0.0", 0 },
	{ "==1.2.*", "1.20", 0 },
	{ "==2!1.*", "1.0", 0 },
	{ "==1.*", "2!1.0", 0 },
	/* != */
	{ "!=2.0", "2.1", 1 },
	{ "!=2.0+deadbeef", "2.0", 1 },
	{ "!=2.0", "2.0+deadbeef", 0 },
	{ "!=2.0.0", "2.0", 0 },
	{ "!=2.0.*", "2.1", 1 },
	{ "!=2.*", "2rc1", 0 },
	{ "!=2!1.0", "1.0", 1 },
	/* >= and <= */
	{ ">=2", "2.0.post1.dev1", 1 },
	{ ">=3.0.0a7", "3.0.0a8", 1 },
	{ ">=2", "2.0rc1", 0 },
	{ ">=2", "2.0.dev1", 0 },
	{ "<=2", "2.0rc1", 1 },
	{ "<=2", "2.0+local", 1 },
	{ "<=2", "2.0.post1", 0 },
	{ "<=2", "3", 0 },
	/* > excludes V's post and local releases, unless V is one */
	{ ">2", "2.1.post1", 1 },
	{ ">2", "2.1+local.version", 1 },
	{ ">2", "2.0.post1", 0 },
	{ ">2", "2.0+local.version", 0 },
	{ ">2", "2.0a1", 0 },
	{ ">2.0.post1", "2.0.post2", 1 },
	{ ">2.0.post1", "2.0.post1+local", 0 },
	{ ">1.0.dev1", "1.0+local", 1 },
	{ ">1.0.dev1", "1.0.dev1+local", 0 },
	{ ">1.0a1", "1.0a2+local", 1 },
	{ ">1.0a1", "1.0a1+local", 0 },
	{ ">1.0a1", "1.0a1.post1", 0 },
	{ ">1.0a1", "1.0.post1", 1 },
	{ ">2.0dev", "2.0.5", 1 },
	{ ">2.0", "2!1.0", 1 },
	/* < excludes V's pre-releases, unless V is one */
	{ "<2", "1", 1 },
	{ "<2.1", "2.0.dev0", 1 },
	{ "<3.0.0a8", "3.0.0a7", 1 },
	{ "<2", "2.0rc1", 0 },
	{ "<2", "2.0.dev1", 0 },
	{ "<2", "2.post1", 0 },
	{ "<2", "2.0", 0 },
	{ "<1.0.post1", "1.0a1", 1 },
	{ "<1.0.post1", "1.0.post1.dev0", 0 },
	{ "<2!0.1", "1.0", 1 },
	/* ~= */
	{ "~=1.0", "1", 1 },
	{ "~=1.0", "1.9999999", 1 },
	{ "~=1.0a1", "1.1", 1 },
	{ "~=2022.01.01", "2022.01.01", 1 },
	{ "~=2!1.0", "2!1.0", 1 },
	{ "~=2.2", "2.9.post3", 1 },
	{ "~=1.4.5", "1.4.9", 1 },
	{ "~=1.0", "2.0", 0 },
	{ "~=1.0.0", "1.1.0", 0 },
	{ "~=1.0.0", "1.1.post1", 0 },
	{ "~=2!1.0", "1.0", 0 },
	{ "~=1.4.5", "1.4.4", 0 },
	{ "~=2.2", "3.0.dev0", 0 },
	/* === compares the text, case-insensitively */
	{ "===1.26.4", "1.26.4", 1 },
	{ "===1.0RC1", "1.0rc1", 1 },
	{ "===1.26.4", "1.26.4.0", 0 },
	{ "===1.0", "1.0+local", 0 },
	/* sets */
	{ "", "1.0", 1 },
	{ ">=1.0,<2.0", "1.5", 1 },
	{ ">=1.0, <2.0", "2.0", 0 },
	{ ">=1.0,!=1.5.*", "1.5.3", 0 },
	{ "  ==1.0 , ", "1.0.0", 1 },
	/* the pinning cases of the checklist (section 11) */
	{ "==2.1.0+cu118", "2.1.0+cu118", 1 },
	{ "==2.1.0+cu118", "2.1.0", 0 },
	{ "==2.1.0+cu118", "2.1.0+cu121", 0 },
	{ "==2.1.0", "2.1.0+cu118", 1 },
	{ "==1.0", "1.0.0", 1 },
	{ "==1!2.0", "1!2.0", 1 },
	{ "==2.0", "1!2.0", 0 },
	{ "==1!2.0", "2.0", 0 },
	{ "==v1.0", "1.0", 1 },
	{ "==1.0,", "1.0", 1 },
};

START_TEST(test_contains)
{
	const char *spec = contains_cases[_i].spec, *ver = contains_cases[_i].version;
	struct eb_specifier_set set;
	struct eb_error *err = NULL;
	struct eb_version v = parse_ok(ver);

	ck_assert_msg(eb_specifier_set_parse(&set, spec, strlen(spec), &err) == 0,
		      "'%s' should parse: %s", spec, err ? err->msg : "?");
	ck_assert_msg(eb_specifier_set_contains(&set, &v, ver) == contains_cases[_i].want,
		      "'%s' contains '%s' should be %d", spec, ver, contains_cases[_i].want);
	eb_specifier_set_release(&set);
	eb_version_release(&v);
}
END_TEST

START_TEST(test_arbitrary_without_raw)
{
	struct eb_specifier_set set;
	struct eb_version v = parse_ok("1.0A1");

	ck_assert_int_eq(eb_specifier_set_parse(&set, "===1.0a1", 8, NULL), 0);
	ck_assert_uint_eq(set.items[0].version.nrelease, 0);
	/* without the candidate's text, its normalised form is compared */
	ck_assert_int_eq(eb_specifier_set_contains(&set, &v, NULL), 1);
	ck_assert_int_eq(eb_specifier_set_contains(&set, &v, "1.0A1"), 1);
	ck_assert_int_eq(eb_specifier_set_contains(&set, &v, "1.0alpha1"), 0);
	eb_specifier_set_release(&set);
	eb_version_release(&v);
}
END_TEST

START_TEST(test_parse_fields)
{
	const char *s = " ==1.0.* , >= v2.0rc1,===foo.bar ,~=1.4.5,";
	struct eb_specifier_set set;
	char *str;

	ck_assert_int_eq(eb_specifier_set_parse(&set, s, strlen(s), NULL), 0);
	ck_assert_uint_eq(set.n, 4);
	ck_assert_int_eq(set.items[0].op, EB_OP_EQ);
	ck_assert_int_eq(set.items[0].wildcard, 1);
	ck_assert_str_eq(set.items[0].raw, "1.0.*");
	ck_assert_uint_eq(set.items[0].version.nrelease, 2);
	ck_assert_uint_eq(set.items[0].col, 2);
	ck_assert_int_eq(set.items[1].op, EB_OP_GE);
	ck_assert_int_eq(set.items[1].wildcard, 0);
	ck_assert_str_eq(set.items[1].raw, "v2.0rc1");
	ck_assert_int_eq(set.items[1].version.pre, EB_PRE_RC);
	ck_assert_uint_eq(set.items[1].col, 12);
	ck_assert_int_eq(set.items[2].op, EB_OP_ARBITRARY);
	ck_assert_str_eq(set.items[2].raw, "foo.bar");
	ck_assert_uint_eq(set.items[2].col, 23);
	ck_assert_int_eq(set.items[3].op, EB_OP_COMPAT);
	ck_assert_uint_eq(set.items[3].col, 35);

	str = eb_specifier_set_to_string(&set);
	ck_assert_str_eq(str, "==1.0.*,>=v2.0rc1,===foo.bar,~=1.4.5");
	free(str);
	ck_assert_int_eq(eb_specifier_set_allows_prereleases(&set), 1);
	eb_specifier_set_release(&set);

	ck_assert_int_eq(eb_specifier_set_parse(&set, "", 0, NULL), 0);
	ck_assert_uint_eq(set.n, 0);
	str = eb_specifier_set_to_string(&set);
	ck_assert_str_eq(str, "");
	free(str);
	eb_specifier_set_release(&set);

	ck_assert_int_eq(eb_specifier_set_parse(&set, "!=2.0b1,<3", 10, NULL), 0);
	ck_assert_int_eq(eb_specifier_set_allows_prereleases(&set), 0);
	eb_specifier_set_release(&set);
}
END_TEST

START_TEST(test_op_str)
{
	ck_assert_str_eq(eb_op_str(EB_OP_EQ), "==");
	ck_assert_str_eq(eb_op_str(EB_OP_NE), "!=");
	ck_assert_str_eq(eb_op_str(EB_OP_LT), "<");
	ck_assert_str_eq(eb_op_str(EB_OP_LE), "<=");
	ck_assert_str_eq(eb_op_str(EB_OP_GT), ">");
	ck_assert_str_eq(eb_op_str(EB_OP_GE), ">=");
	ck_assert_str_eq(eb_op_str(EB_OP_COMPAT), "~=");
	ck_assert_str_eq(eb_op_str(EB_OP_ARBITRARY), "===");
}
END_TEST

static const struct {
	const char *spec;
	unsigned col;
	const char *msg; /* NULL: not checked */
} bad_specs[] = {
	{ "2.0", 1, "missing version operator before '2.0'" },
	{ "=>2.0", 1, "unknown version operator in '=>2.0'" },
	{ "==", 3, "missing version after '=='" },
	{ ">= ", 3, "missing version after '>='" },
	{ "~=1.0+5", 6, "local version label not allowed with '~='" },
	{ ">=1.0+deadbeef", 6, NULL },
	{ "<=1.0+abc123", 6, NULL },
	{ ">1.0+watwat", 5, NULL },
	{ "<1.0+1.0", 5, NULL },
	{ "~=1.0.*", 6, "'.*' not allowed with '~='" },
	{ ">=1.0.*", 6, NULL },
	{ "<1.0.*", 5, NULL },
	{ "==1.0.*+5", 6, NULL },
	{ "==1.0+abc.*", 10, "'.*' cannot follow a local version label in '==1.0+abc.*'" },
	{ "!=1.0+deadbeef.*", 15, NULL },
	{ "==2.0a1.*", 8, "'.*' cannot follow a pre-release in '==2.0a1.*'" },
	{ "==2.0.post1.*", 12, NULL },
	{ "==1.0.dev1.*", 11, "'.*' cannot follow a dev release in '==1.0.dev1.*'" },
	{ "==1.0.*.5", 6, NULL },
	{ "== 2 .*", 5, NULL },
	{ "~=1", 3, "'~=' needs at least two release numbers, got '1'" },
	{ "~=1!2", 3, NULL },
	{ ">=1.0 <2.0", 7, "missing ',' before '<2.0'" },
	{ "==1.0,,>=2", 7, "empty version specifier" },
	{ ",==1.0", 1, "empty version specifier" },
	{ "==1.0, ,", 8, "empty version specifier" },
	{ ",", 1, NULL },
	{ "==1.0,>=x", 9, "invalid version 'x'" },
	{ "  >=1.0, ==1.0 a1", 15, "invalid version '1.0 a1'" },
	{ "=== foo bar", 9, NULL },
	{ "===foo;bar", 7, NULL },
	{ "===", 4, NULL },
	{ "==1.0; python_version>'3'", 6, NULL },
};

START_TEST(test_bad_spec)
{
	const char *s = bad_specs[_i].spec;
	struct eb_specifier_set set = EB_SPECIFIER_SET_INIT;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_specifier_set_parse(&set, s, strlen(s), &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(err->col == bad_specs[_i].col, "'%s': col %u, want %u (%s)", s, err->col,
		      bad_specs[_i].col, err->msg);
	if (bad_specs[_i].msg)
		ck_assert_str_eq(err->msg, bad_specs[_i].msg);
	ck_assert_ptr_null(strchr(err->msg, '\n'));
	ck_assert_uint_eq(set.n, 0);
	eb_error_free(err);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("version");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_normalise, 0, sizeof(norm_cases) / sizeof(norm_cases[0]));
	tcase_add_test(tc, test_parts);
	tcase_add_test(tc, test_copy);
	tcase_add_loop_test(tc, test_invalid, 0, sizeof(bad_versions) / sizeof(bad_versions[0]));
	tcase_add_test(tc, test_invalid_message);
	suite_add_tcase(s, tc);

	tc = tcase_create("order");
	tcase_add_loop_test(tc, test_order, 0, NSORTED);
	tcase_add_loop_test(tc, test_equal, 0, sizeof(equal_versions) / sizeof(equal_versions[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("specifier");
	tcase_add_loop_test(tc, test_contains, 0,
			    sizeof(contains_cases) / sizeof(contains_cases[0]));
	tcase_add_test(tc, test_arbitrary_without_raw);
	tcase_add_test(tc, test_parse_fields);
	tcase_add_test(tc, test_op_str);
	tcase_add_loop_test(tc, test_bad_spec, 0, sizeof(bad_specs) / sizeof(bad_specs[0]));
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
