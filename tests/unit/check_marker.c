/*
 * check_marker.c - PEP 508 markers: evaluation truth table for a target
 * environment, parse errors with columns, canonical text, variables used
 * and the environment filled for CPython on Linux.  Expected results were
 * checked against pypa/packaging (main, 2026) where it defines them.
 */
#include "config.h"

#include "testutil.h"

#include "pin/marker.h"

static struct eb_marker *parse_ok(const char *s)
{
	struct eb_marker *m = NULL;
	struct eb_error *err = NULL;

	ck_assert_msg(eb_marker_parse(&m, s, strlen(s), &err) == 0, "'%s' should parse: %s", s,
		      err ? err->msg : "?");
	ck_assert_ptr_nonnull(m);
	return m;
}

/* --- evaluation ---------------------------------------------------------- */

static const struct {
	const char *python, *machine, *extra, *marker;
	int want;
} eval_cases[] = {
	/* version fields compare by PEP 440, not as strings */
	{ "3.11", "x86_64", "", "python_version > \"3.9\"", 1 },
	{ "3.10", "x86_64", "", "python_version > \"3.9\"", 1 },
	{ "3.11", "x86_64", "", "python_version > '3.11'", 0 },
	{ "3.8", "x86_64", "", "python_version < \"3.9\"", 1 },
	{ "3.11", "x86_64", "", "python_version >= \"3.9\" and python_version < \"3.12\"", 1 },
	{ "3.12", "x86_64", "", "python_version <= \"3.12\"", 1 },
	{ "3.11", "x86_64", "", "python_version != \"3.11.0\"", 0 },
	{ "3.11", "x86_64", "", "python_version == \"3.11.*\"", 1 },
	{ "3.11", "x86_64", "", "python_version ~= \"3.10\"", 1 },
	{ "3.11", "x86_64", "", "python_version === \"3.11\"", 1 },
	{ "3.11", "x86_64", "", "\"3.9\" < python_version", 1 },
	{ "3.11", "x86_64", "", "\"3.12\" < python_version", 0 },
	{ "3.11", "x86_64", "", "python_full_version == \"3.11.0\"", 1 },
	{ "3.11.4", "x86_64", "", "python_full_version == \"3.11.*\"", 1 },
	{ "3.11.4", "x86_64", "", "python_full_version < \"3.11.10\"", 1 },
	{ "3.11.4", "x86_64", "", "python_version == \"3.11\"", 1 },
	{ "3.13.0rc1", "x86_64", "", "python_full_version >= \"3.13\"", 0 },
	{ "3.13.0rc1", "x86_64", "", "python_full_version >= \"3.13.0rc1\"", 1 },
	{ "3.11", "x86_64", "", "implementation_version >= \"3.11\"", 1 },
	/* section 11, cases 4 and 5 */
	{ "3.11", "x86_64", "", "python_version >= \"3.9\"", 1 },
	{ "3.11", "x86_64", "", "python_version < \"3.9\"", 0 },
	/* extras, normalised on both sides (PEP 685) */
	{ "3.11", "x86_64", "socks", "extra == \"socks\"", 1 },
	{ "3.11", "x86_64", "Socks", "extra == 'SOCKS'", 1 },
	{ "3.11", "x86_64", "foo.bar", "extra == \"Foo_Bar\"", 1 },
	{ "3.11", "x86_64", "", "extra == \"socks\"", 0 },
	{ "3.11", "x86_64", "socks", "extra != \"socks\"", 0 },
	{ "3.11", "x86_64", "socks", "\"socks\" == extra", 1 },
	/* string fields are case-sensitive */
	{ "3.11", "x86_64", "", "platform_machine == \"x86_64\"", 1 },
	{ "3.11", "x86_64", "", "platform_machine == \"X86_64\"", 0 },
	{ "3.11", "amd64", "", "platform_machine == \"x86_64\"", 1 },
	{ "3.11", "arm64", "", "platform_machine == \"aarch64\"", 1 },
	{ "3.11", "aarch64", "", "platform_machine != \"x86_64\"", 1 },
	{ "3.11", "x86_64", "", "sys_platform == \"linux\"", 1 },
	{ "3.11", "x86_64", "", "platform_system == \"linux\"", 0 },
	{ "3.11", "x86_64", "", "platform_python_implementation == \"CPython\"", 1 },
	{ "3.11", "x86_64", "", "implementation_name == \"cpython\"", 1 },
	/* legacy spellings */
	{ "3.11", "x86_64", "", "python_implementation == \"CPython\" and os.name == \"posix\"",
	  1 },
	{ "3.11", "x86_64", "", "sys.platform == \"linux\"", 1 },
	/* on strings, < and > are false and <=, >= mean equality */
	{ "3.11", "x86_64", "", "sys_platform < \"win32\"", 0 },
	{ "3.11", "x86_64", "", "sys_platform > \"a\"", 0 },
	{ "3.11", "x86_64", "", "sys_platform <= \"linux\"", 1 },
	{ "3.11", "x86_64", "", "sys_platform >= \"a\"", 0 },
	/* in / not in are substring tests */
	{ "3.11", "x86_64", "", "\"linux\" in sys_platform", 1 },
	{ "3.11", "x86_64", "", "\"lin\" in sys_platform", 1 },
	{ "3.11", "x86_64", "", "\"win\" in sys_platform", 0 },
	{ "3.11", "x86_64", "", "\"win\" not in sys_platform", 1 },
	{ "3.11", "x86_64", "", "sys_platform in \"linux2 darwin\"", 1 },
	{ "3.11", "x86_64", "", "sys_platform not  in \"linux2\"", 0 },
	/* kernel fields are "" for a target that is not running */
	{ "3.11", "x86_64", "", "platform_release >= \"5.0\"", 0 },
	{ "3.11", "x86_64", "", "platform_version == \"\"", 1 },
	/* and binds tighter than or; parentheses */
	{ "3.11", "x86_64", "", "sys_platform == \"win32\" or platform_system == \"Linux\" and os_name == \"nt\"", 0 },
	{ "3.11", "x86_64", "", "sys_platform == \"linux\" or platform_system == \"Linux\" and os_name == \"nt\"", 1 },
	{ "3.11", "x86_64", "", "(sys_platform == \"win32\" or platform_system == \"Linux\") and os_name == \"nt\"", 0 },
	{ "3.11", "x86_64", "", "(sys_platform == \"win32\" or platform_system == \"Linux\") and os_name == \"posix\"", 1 },
	{ "3.11", "x86_64", "", "os_name == \"posix\" and (sys_platform == \"win32\" or (platform_machine == \"x86_64\" and implementation_name == \"cpython\"))", 1 },
	{ "3.11", "aarch64", "", "os_name == \"posix\" and (sys_platform == \"win32\" or (platform_machine == \"x86_64\" and implementation_name == \"cpython\"))", 0 },
	{ "3.11", "x86_64", "", " ((((python_version > \"3\")))) ", 1 },
	{ "3.11", "x86_64", "", "python_version>\"3\"and os_name==\"posix\"", 1 },
	{ "3.11", "x86_64", "", "\tpython_version\t>\t'3'\t", 1 },
	{ "3.11", "x86_64", "", "python_version < \"3\" or python_version < \"3.1\" or python_version >= \"3.11\"", 1 },
	{ "3.11", "x86_64", "", "python_version > \"3\" and python_version > \"3.1\" and python_version > \"3.11\"", 0 },
	/* both sides variables, or both literals */
	{ "3.11", "x86_64", "", "os_name == sys_platform", 0 },
	{ "3.11", "x86_64", "", "\"a\" == \"a\"", 1 },
	/* reversed, as packaging: the variable's value is the specifier's
	 * version, the literal the candidate ('dog' is no version: false) */
	{ "3.11", "x86_64", "", "'dog' ~= python_version", 0 },
	{ "3.11", "x86_64", "", "'dog' >= python_full_version", 0 },
	{ "3.11", "x86_64", "", "'3.12' > python_version", 1 },
	{ "3.11", "x86_64", "", "'3.11' === python_version", 1 },
};

START_TEST(test_eval)
{
	struct eb_marker_env env;
	struct eb_marker *m = parse_ok(eval_cases[_i].marker);
	struct eb_error *err = NULL;
	int result = -1;

	eb_marker_env_init(&env, eval_cases[_i].python, eval_cases[_i].machine);
	env.extra = eval_cases[_i].extra;
	ck_assert_int_eq(eb_marker_eval(m, &env, &result, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_msg(result == eval_cases[_i].want, "'%s' on %s/%s gave %d", eval_cases[_i].marker,
		      eval_cases[_i].python, eval_cases[_i].machine, result);
	eb_marker_free(m);
}
END_TEST

START_TEST(test_eval_error)
{
	struct eb_marker_env env;
	struct eb_marker *m = parse_ok("os_name == \"posix\" and python_version ~= \"three\"");
	struct eb_error *err = NULL;
	int result = -1;

	eb_marker_env_init(&env, "3.11", "x86_64");
	ck_assert_int_eq(eb_marker_eval(m, &env, &result, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(err);
	ck_assert_uint_eq(err->col, 24);
	ck_assert_str_eq(err->msg, "cannot evaluate '~=' on '3.11' and 'three': not versions");
	eb_error_free(err);
	eb_marker_free(m);
}
END_TEST

/* === with text packaging's specifier refuses (blanks, ';', ')') is no
 * comparison (UndefinedComparison), not a silent false */
START_TEST(test_eval_arbitrary_error)
{
	static const char *const bad[] = {
		"python_version === 'literally any string can go here'",
		"python_full_version === 'a;b'",
	};
	for (size_t i = 0; i < 2; i++) {
		struct eb_marker_env env;
		struct eb_marker *m = parse_ok(bad[i]);
		struct eb_error *err = NULL;
		int result = -1;

		eb_marker_env_init(&env, "3.11", "x86_64");
		ck_assert_msg(eb_marker_eval(m, &env, &result, &err) == -EB_EINVALID, "%s", bad[i]);
		eb_error_free(err);
		eb_marker_free(m);
	}
}
END_TEST

START_TEST(test_env_init)
{
	struct eb_marker_env env;

	eb_marker_env_init(&env, "3.11", "x86_64");
	ck_assert_str_eq(env.python_version, "3.11");
	ck_assert_str_eq(env.python_full_version, "3.11.0");
	ck_assert_str_eq(env.implementation_name, "cpython");
	ck_assert_str_eq(env.implementation_version, "3.11.0");
	ck_assert_str_eq(env.platform_python_implementation, "CPython");
	ck_assert_str_eq(env.os_name, "posix");
	ck_assert_str_eq(env.sys_platform, "linux");
	ck_assert_str_eq(env.platform_system, "Linux");
	ck_assert_str_eq(env.platform_machine, "x86_64");
	ck_assert_str_eq(env.platform_release, "");
	ck_assert_str_eq(env.platform_version, "");
	ck_assert_str_eq(env.extra, "");

	eb_marker_env_init(&env, "3.12.4", "aarch64");
	ck_assert_str_eq(env.python_version, "3.12");
	ck_assert_str_eq(env.python_full_version, "3.12.4");
	ck_assert_str_eq(env.implementation_version, "3.12.4");
	ck_assert_str_eq(env.platform_machine, "aarch64");

	eb_marker_env_init(&env, "3.9", "arm64");
	ck_assert_str_eq(env.python_full_version, "3.9.0");
	ck_assert_str_eq(env.platform_machine, "aarch64");
	eb_marker_env_init(&env, "3.13.0rc1", "amd64");
	ck_assert_str_eq(env.python_version, "3.13");
	ck_assert_str_eq(env.python_full_version, "3.13.0rc1");
	ck_assert_str_eq(env.platform_machine, "x86_64");
}
END_TEST

/* --- parse errors -------------------------------------------------------- */

static const struct {
	const char *marker;
	unsigned col;
	const char *msg;
} bad_markers[] = {
	{ "", 1, "empty marker" },
	{ "   ", 4, "empty marker" },
	{ "python_version", 15, "expected a marker operator, got end of marker" },
	{ "python_version >", 17, "expected a marker variable or quoted string, got end of marker" },
	{ "python_version > \"3\" > \"2\"", 22, "chained comparisons are not allowed in markers" },
	{ "\"2\" < python_version < \"4\"", 22, "chained comparisons are not allowed in markers" },
	{ "foo == \"1\"", 1, "unknown marker variable 'foo'" },
	{ "os_name == \"posix\" and Python_Version > \"3\"", 24,
	  "unknown marker variable 'Python_Version'" },
	{ "extras == \"a\"", 1, "marker variable 'extras' is only valid in lock files" },
	{ "python_version = \"3\"", 16, "expected a marker operator, got '='" },
	{ "python_version >= 3.9", 19, "expected a marker variable or quoted string, got '3.9'" },
	{ "os_name == posix", 12, "expected a marker variable or quoted string, got 'posix'" },
	{ "(python_version > \"3\"", 22, "expected ')' to close '(' at column 1" },
	{ "python_version > \"3\")", 21, "unmatched ')' in marker" },
	{ "()", 2, "expected a marker variable or quoted string, got ')'" },
	{ "python_version > \"3\" and", 25,
	  "expected a marker variable or quoted string, got end of marker" },
	{ "python_version > \"3\" xor os_name == \"nt\"", 22,
	  "expected 'and', 'or' or end of marker, got 'xor'" },
	{ "python_version > \"3\" andos_name == \"nt\"", 22,
	  "expected 'and', 'or' or end of marker, got 'andos_name'" },
	{ "python_version > \"3\";", 21, "expected 'and', 'or' or end of marker, got ';'" },
	{ "python_version > \"3\"\n", 21,
	  "expected 'and', 'or' or end of marker, got a control character" },
	{ "python_version > \"3.9", 18, "unterminated string in marker" },
	{ "python_version > '3.9\"", 18, "unterminated string in marker" },
	{ "extra == \"a\\b\"", 12, "backslash in marker string" },
	{ "os_name not \"nt\"", 9, "expected 'in' after 'not'" },
	{ "os_name notin \"nt\"", 9, "expected a marker operator, got 'notin'" },
	{ "os_name ~= \"nt\"", 9, "operator '~=' needs a version, but 'os_name' is a string" },
	{ "\"x\" === platform_machine", 5,
	  "operator '===' needs a version, but 'platform_machine' is a string" },
	{ "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((", 65,
	  "marker nested too deeply" },
};

START_TEST(test_bad)
{
	const char *s = bad_markers[_i].marker;
	struct eb_marker *m = (struct eb_marker *)&m;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_marker_parse(&m, s, strlen(s), &err), -EB_EINVALID);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->code, EB_EINVALID);
	ck_assert_str_eq(err->msg, bad_markers[_i].msg);
	ck_assert_msg(err->col == bad_markers[_i].col, "'%s': col %u, want %u", s, err->col,
		      bad_markers[_i].col);
	ck_assert_ptr_null(strchr(err->msg, '\n'));
	eb_error_free(err);
}
END_TEST

START_TEST(test_hints)
{
	struct eb_marker *m;
	struct eb_error *err = NULL;

	ck_assert_int_lt(eb_marker_parse(&m, "python_version >= 3.9", 21, &err), 0);
	ck_assert_str_eq(err->hint, "quote string values, as in '\"3.9\"'");
	eb_error_free(err);
	err = NULL;
	ck_assert_int_lt(eb_marker_parse(&m, "pyhton_version >= '3'", 21, &err), 0);
	ck_assert_ptr_nonnull(err->hint);
	ck_assert_ptr_nonnull(strstr(err->hint, "python_version"));
	eb_error_free(err);
}
END_TEST

START_TEST(test_len_bounds)
{
	/* only len bytes are read: the requirement line goes on after it */
	const char *s = "os_name == \"posix\" # comment";
	struct eb_marker *m = NULL;
	char *str;

	ck_assert_int_eq(eb_marker_parse(&m, s, 18, NULL), 0);
	str = eb_marker_to_string(m);
	ck_assert_str_eq(str, "os_name == \"posix\"");
	free(str);
	eb_marker_free(m);
}
END_TEST

/* --- canonical text ------------------------------------------------------ */

static const struct {
	const char *in, *out;
} canon_cases[] = {
	{ "python_version>='3.9'", "python_version >= \"3.9\"" },
	{ "  python_version  >=  \"3.9\"  and extra=='Socks' ",
	  "python_version >= \"3.9\" and extra == \"socks\"" },
	{ "'linux'in sys_platform", "\"linux\" in sys_platform" },
	{ "sys_platform not\tin 'win32'", "sys_platform not in \"win32\"" },
	{ "os_name == 'say \"hi\"'", "os_name == 'say \"hi\"'" },
	{ "os.name == 'posix'", "os_name == \"posix\"" },
	{ "python_implementation == 'CPython'", "platform_python_implementation == \"CPython\"" },
	{ "((python_version > '3'))", "python_version > \"3\"" },
	{ "(os_name == 'a' and os_name == 'b') or os_name == 'c'",
	  "os_name == \"a\" and os_name == \"b\" or os_name == \"c\"" },
	{ "os_name == 'a' and (os_name == 'b' or os_name == 'c')",
	  "os_name == \"a\" and (os_name == \"b\" or os_name == \"c\")" },
	{ "(os_name == 'a' or os_name == 'b') and os_name == 'c'",
	  "(os_name == \"a\" or os_name == \"b\") and os_name == \"c\"" },
	{ "os_name == 'a' or (os_name == 'b' or os_name == 'c')",
	  "os_name == \"a\" or os_name == \"b\" or os_name == \"c\"" },
	{ "\"Foo.Bar\" == extra", "\"foo-bar\" == extra" },
};

START_TEST(test_canonical)
{
	struct eb_marker *m, *again;
	char *s, *s2;

	m = parse_ok(canon_cases[_i].in);
	s = eb_marker_to_string(m);
	ck_assert_str_eq(s, canon_cases[_i].out);
	/* the canonical text is a fixed point */
	again = parse_ok(s);
	s2 = eb_marker_to_string(again);
	ck_assert_str_eq(s2, s);
	free(s);
	free(s2);
	eb_marker_free(m);
	eb_marker_free(again);
}
END_TEST

/* --- variables used ------------------------------------------------------ */

static const struct {
	const char *marker;
	unsigned bits;
} vars_cases[] = {
	{ "python_version > \"3\"", EB_MARKER_VAR_PYTHON_VERSION },
	{ "\"3.11.1\" <= python_full_version", EB_MARKER_VAR_PYTHON_FULL_VERSION },
	{ "extra == \"a\" or (platform_release >= \"5\" and platform_version == \"x\")",
	  EB_MARKER_VAR_EXTRA | EB_MARKER_VAR_PLATFORM_RELEASE | EB_MARKER_VAR_PLATFORM_VERSION },
	{ "os_name == sys_platform", EB_MARKER_VAR_OS_NAME | EB_MARKER_VAR_SYS_PLATFORM },
	{ "os.name == 'posix' and python_implementation == 'CPython'",
	  EB_MARKER_VAR_OS_NAME | EB_MARKER_VAR_PLATFORM_PYTHON_IMPLEMENTATION },
	{ "implementation_name == 'cpython' and implementation_version > '3' and "
	  "platform_machine == 'x' and platform_system == 'Linux'",
	  EB_MARKER_VAR_IMPLEMENTATION_NAME | EB_MARKER_VAR_IMPLEMENTATION_VERSION |
		  EB_MARKER_VAR_PLATFORM_MACHINE | EB_MARKER_VAR_PLATFORM_SYSTEM },
	{ "\"a\" == \"b\"", 0 },
};

START_TEST(test_vars_used)
{
	struct eb_marker *m = parse_ok(vars_cases[_i].marker);

	ck_assert_uint_eq(eb_marker_vars_used(m), vars_cases[_i].bits);
	eb_marker_free(m);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("marker");
	TCase *tc;

	tc = tcase_create("eval");
	tcase_add_loop_test(tc, test_eval, 0, sizeof(eval_cases) / sizeof(eval_cases[0]));
	tcase_add_test(tc, test_eval_error);
	tcase_add_test(tc, test_eval_arbitrary_error);
	tcase_add_test(tc, test_env_init);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad_markers) / sizeof(bad_markers[0]));
	tcase_add_test(tc, test_hints);
	tcase_add_test(tc, test_len_bounds);
	tcase_add_loop_test(tc, test_canonical, 0, sizeof(canon_cases) / sizeof(canon_cases[0]));
	tcase_add_loop_test(tc, test_vars_used, 0, sizeof(vars_cases) / sizeof(vars_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
