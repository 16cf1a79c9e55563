/*
 * check_util.c - unit tests for util/: buffers, errors, findings, paths,
 * atomic writes.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>

#include "testutil.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/glob.h"

START_TEST(buf_grows_and_caps)
{
	struct eb_buf b;

	eb_buf_init(&b, 10);
	ck_assert_str_eq(b.ptr, "");
	ck_assert_int_eq(eb_buf_adds(&b, "hello"), 0);
	ck_assert_int_eq(eb_buf_addf(&b, "%d", 1234), 0);
	ck_assert_str_eq(b.ptr, "hello1234");
	/* one more byte fits, two do not, and a failed append changes nothing */
	ck_assert_int_eq(eb_buf_adds(&b, "xy"), -EB_ETOOBIG);
	ck_assert_str_eq(b.ptr, "hello1234");
	ck_assert_int_eq(eb_buf_addc(&b, 'z'), 0);
	ck_assert_uint_eq(b.len, 10);
	eb_buf_truncate(&b, 2);
	ck_assert_str_eq(b.ptr, "he");
	eb_buf_release(&b);
	ck_assert_str_eq(b.ptr, "");
}
END_TEST

START_TEST(buf_detach_hands_over)
{
	struct eb_buf b;
	size_t len;
	char *s;

	eb_buf_init(&b, 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(eb_buf_addc(&b, 'a'), 0);
	s = eb_buf_detach(&b, &len);
	ck_assert_uint_eq(len, 1000);
	ck_assert_uint_eq(strlen(s), 1000);
	ck_assert_uint_eq(b.len, 0);
	free(s);
	s = eb_buf_detach(&b, NULL); /* an empty buffer gives an empty string */
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(error_set_once_and_wrap)
{
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_error_set(&err, EB_EIO, "cannot read '%s'", "a"), -EB_EIO);
	/* a second set keeps the root cause */
	ck_assert_int_eq(eb_error_set(&err, EB_EFAIL, "other"), -EB_EIO);
	ck_assert_str_eq(err->msg, "cannot read 'a'");
	ck_assert_int_eq(eb_error_wrap(&err, "loading spec"), -EB_EIO);
	ck_assert_str_eq(err->msg, "loading spec: cannot read 'a'");
	eb_error_hint(&err, "check %s", "permissions");
	ck_assert_str_eq(err->hint, "check permissions");
	eb_error_clear(&err);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(eb_error_set_errno(&err, EB_EIO, ENOENT, "open 'x'"), -EB_EIO);
	ck_assert_int_eq(err->sys_errno, ENOENT);
	ck_assert_str_eq(err->msg, "open 'x': No such file or directory");
	eb_error_clear(&err);
	ck_assert_int_eq(eb_error_set_at(&err, EB_EINVALID, "f.yaml", 3, 7, "bad"), -EB_EINVALID);
	ck_assert_str_eq(err->file, "f.yaml");
	ck_assert_uint_eq(err->line, 3);
	ck_assert_uint_eq(err->col, 7);
	eb_error_free(err);
	/* a NULL err pointer is allowed: callers that do not want details */
	ck_assert_int_eq(eb_error_set(NULL, EB_EFAIL, "x"), -EB_EFAIL);
}
END_TEST

START_TEST(diag_sort_and_dedupe)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;

	eb_diag_add(&l, EB_SEV_ERROR, "b.txt", 1, 1, "EB201", "x");
	eb_diag_add(&l, EB_SEV_ERROR, "a.txt", 9, 2, "EB201", "y");
	eb_diag_add(&l, EB_SEV_WARNING, "a.txt", 3, 5, "EB215", "z");
	eb_diag_add(&l, EB_SEV_ERROR, "a.txt", 9, 2, "EB201", "y"); /* duplicate */
	eb_diag_hint(eb_diag_add(&l, EB_SEV_ERROR, "a.txt", 3, 1, "EB202", "w"), "h%d", 1);
	eb_diag_list_sort(&l);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_str_eq(l.items[0].msg, "w");
	ck_assert_str_eq(l.items[0].hint, "h1");
	ck_assert_str_eq(l.items[1].msg, "z");
	ck_assert_str_eq(l.items[2].msg, "y");
	ck_assert_str_eq(l.items[3].file, "b.txt");
	ck_assert_uint_eq(eb_diag_list_count(&l, EB_SEV_ERROR), 3);
	ck_assert_uint_eq(eb_diag_list_count(&l, EB_SEV_WARNING), 1);
	eb_diag_list_release(&l);
}
END_TEST

static const struct {
	const char *in, *out;
} norm_cases[] = {
	{ "a/b/c", "a/b/c" },      { "a//b/./c/", "a/b/c" }, { "a/../b", "b" },
	{ "./a", "a" },            { ".", "." },             { "a/..", "." },
	{ "/a/../../b", "/b" },    { "/", "/" },             { "src/", "src" },
	{ "../x", NULL },          { "a/../../x", NULL },    { "..", NULL },
};

START_TEST(path_normalize)
{
	char *got = eb_path_normalize(norm_cases[_i].in);
	if (norm_cases[_i].out == NULL)
		ck_assert_msg(got == NULL, "'%s' should escape, got '%s'", norm_cases[_i].in, got);
	else
		ck_assert_str_eq(got, norm_cases[_i].out);
	free(got);
}
END_TEST

START_TEST(path_join_dirname)
{
	char *s;
	s = eb_path_join("a", "b");
	ck_assert_str_eq(s, "a/b");
	free(s);
	s = eb_path_join("a/", "b");
	ck_assert_str_eq(s, "a/b");
	free(s);
	s = eb_path_join("a", "/abs");
	ck_assert_str_eq(s, "/abs");
	free(s);
	s = eb_path_dirname("x/y/z.txt");
	ck_assert_str_eq(s, "x/y");
	free(s);
	s = eb_path_dirname("z.txt");
	ck_assert_str_eq(s, ".");
	free(s);
	s = eb_path_dirname("/z");
	ck_assert_str_eq(s, "/");
	free(s);
	ck_assert_str_eq(eb_path_basename("x/y/z.txt"), "z.txt");
}
END_TEST

START_TEST(atomic_write_replaces_whole_file)
{
	char *dir = eb_test_tmpdir();
	char *p = eb_path_join(dir, "lock.json");
	struct eb_error *err = NULL;
	struct eb_buf b;
	struct stat st;

	ck_assert_int_eq(eb_fs_write_atomic(p, "old", 3, 0644, &err), 0);
	ck_assert_int_eq(eb_fs_write_atomic(p, "newer", 5, 0600, &err), 0);
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_fs_read_file(&b, p, 0, &err), 0);
	ck_assert_str_eq(b.ptr, "newer");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	eb_buf_release(&b);
	/* a cap smaller than the file fails with ETOOBIG */
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_fs_read_file(&b, p, 2, &err), -EB_ETOOBIG);
	eb_error_clear(&err);
	eb_buf_release(&b);
	/* a missing file is ENOTFOUND, and nothing temp is left behind */
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_fs_read_file(&b, "/nonexistent/x", 0, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);
	eb_buf_release(&b);
	/* writing into a missing directory fails cleanly */
	ck_assert_int_lt(eb_fs_write_atomic("/nonexistent/dir/f", "x", 1, 0644, &err), 0);
	ck_assert_ptr_nonnull(err);
	eb_error_clear(&err);
	unlink(p);
	ck_assert_int_eq(rmdir(dir), 0); /* empty: no temp file was left */
	free(p);
	free(dir);
}
END_TEST

/* Patterns of `exclude` and .envbuildignore: "**" is any number of
 * components, none included; '*' never crosses '/'; malformed patterns are
 * refused rather than matching nothing. */
START_TEST(glob_patterns)
{
	const char *why = NULL;

	ck_assert(eb_glob_match("**/*.pyc", "x.pyc"));
	ck_assert(eb_glob_match("**/*.pyc", "a/b/c/x.pyc"));
	ck_assert(!eb_glob_match("**/*.pyc", "a/b/x.py"));
	ck_assert(eb_glob_match("a/**/z", "a/z"));
	ck_assert(eb_glob_match("a/**/z", "a/b/c/z"));
	ck_assert(!eb_glob_match("a/*", "a/b/c"));
	ck_assert(eb_glob_match("docs/[a-c]*.md", "docs/b1.md"));
	ck_assert(eb_glob_match("**", "anything/at/all"));
	/* many "**" stay fast (a table, not backtracking) */
	ck_assert(!eb_glob_match("**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/x",
				 "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/y"));
	ck_assert(eb_glob_valid("a/[!b]*", &why));
	ck_assert(!eb_glob_valid("a/[bc", &why));
	ck_assert_str_eq(why, "has an unclosed '['");
	ck_assert(!eb_glob_valid("x\\", &why)); /* a trailing lone backslash */
	ck_assert(eb_glob_valid("x\\*", &why));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");

	tcase_add_test(tc, buf_grows_and_caps);
	tcase_add_test(tc, buf_detach_hands_over);
	tcase_add_test(tc, error_set_once_and_wrap);
	tcase_add_test(tc, diag_sort_and_dedupe);
	tcase_add_loop_test(tc, path_normalize, 0, sizeof(norm_cases) / sizeof(norm_cases[0]));
	tcase_add_test(tc, path_join_dirname);
	tcase_add_test(tc, atomic_write_replaces_whole_file);
	tcase_add_test(tc, glob_patterns);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
