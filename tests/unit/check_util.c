/*
 * check_util.c - unit tests for util/: buffers, errors, findings, paths,
 * atomic writes.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>

#include "testutil.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/digest.h"
#include "util/encode.h"
#include "util/envexpand.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/glob.h"
#include "util/interrupt.h"

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

/* The same finding made for two targets is one naming both; a different
 * message for another target stays its own; a finding for no target is
 * never folded into one for a target. */
START_TEST(diag_group_targets)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;

	eb_diag_target(eb_diag_add(&l, EB_SEV_WARNING, "envbuild.yaml", 0, 0, "EB235", "same"),
		       "training");
	eb_diag_target(eb_diag_add(&l, EB_SEV_WARNING, "envbuild.yaml", 0, 0, "EB235", "other"),
		       "training");
	eb_diag_target(eb_diag_add(&l, EB_SEV_WARNING, "envbuild.yaml", 0, 0, "EB235", "same"),
		       "inference");
	/* the same target twice (a second platform): once */
	eb_diag_target(eb_diag_add(&l, EB_SEV_WARNING, "envbuild.yaml", 0, 0, "EB235", "same"),
		       "training");
	eb_diag_add(&l, EB_SEV_WARNING, "envbuild.yaml", 0, 0, "EB235", "same");
	eb_diag_list_sort(&l);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.items[0].msg, "same");
	ck_assert_uint_eq(l.items[0].ntargets, 2);
	ck_assert_str_eq(l.items[0].targets[0], "training");
	ck_assert_str_eq(l.items[0].targets[1], "inference");
	ck_assert_str_eq(l.items[1].msg, "other");
	ck_assert_uint_eq(l.items[1].ntargets, 1);
	ck_assert_uint_eq(l.items[2].ntargets, 0);
	eb_diag_list_release(&l);
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

START_TEST(buf_init_macro_and_put)
{
	struct eb_buf b = EB_BUF_INIT;
	char *s;

	/* never NULL, a C string from the start */
	ck_assert_ptr_nonnull(b.ptr);
	ck_assert_str_eq(b.ptr, "");
	eb_buf_puts(&b, "a");
	eb_buf_putc(&b, 'b');
	eb_buf_put(&b, "cd", 2);
	eb_buf_putf(&b, "%d", 42);
	ck_assert_str_eq(b.ptr, "abcd42");
	eb_buf_release(&b);
	ck_assert_str_eq(b.ptr, "");
	/* a put past a cap leaves the buffer as it was */
	eb_buf_init(&b, 3);
	eb_buf_puts(&b, "xy");
	eb_buf_puts(&b, "zz");
	ck_assert_str_eq(b.ptr, "xy");
	s = eb_buf_detach(&b, NULL);
	ck_assert_str_eq(s, "xy");
	free(s);
}
END_TEST

START_TEST(hex_and_base64url)
{
	static const unsigned char raw[] = { 0x00, 0x0f, 0xf0, 0xfb, 0xff };
	char hex[2 * sizeof(raw) + 1];
	size_t len = 0;
	char *s, *d;

	eb_hex_encode(hex, raw, sizeof(raw));
	ck_assert_str_eq(hex, "000ff0fbff");
	/* urlsafe: '-' and '_' for '+' and '/', no padding */
	s = eb_base64url_encode(raw, sizeof(raw));
	ck_assert_str_eq(s, "AA_w-_8");
	d = eb_base64url_decode(s, &len);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(len, sizeof(raw));
	ck_assert_mem_eq(d, raw, sizeof(raw));
	free(d);
	free(s);
	/* padding tolerated; the standard alphabet's '+' and '/' are not */
	d = eb_base64url_decode("AA_w-_8=", &len);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(len, sizeof(raw));
	free(d);
	ck_assert_ptr_null(eb_base64url_decode("AA/w+/8", NULL));
	/* a last quantum with bits set beyond the data is not canonical */
	ck_assert_ptr_null(eb_base64url_decode("AA_w-_9", NULL));
	ck_assert_ptr_null(eb_base64url_decode("A", NULL));
}
END_TEST

START_TEST(hash_algorithm_table)
{
	const struct eb_hash_algo *a = eb_hash_algo_find("sha384");
	char out[129];

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->hexlen, 96);
	ck_assert(a->strong && a->pin && a->record);
	a = eb_hash_algo_find("md5");
	ck_assert_ptr_nonnull(a);
	ck_assert(!a->strong && !a->pin && !a->record);
	a = eb_hash_algo_find_n("sha3_256=abc", 8);
	ck_assert_ptr_nonnull(a);
	ck_assert(a->strong && !a->pin && a->record);
	ck_assert_ptr_null(eb_hash_algo_find("sha256x"));
	ck_assert_int_eq(eb_hash_hex(eb_hash_algo_find("sha256"), "abc", 3, out), 0);
	ck_assert_str_eq(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

/* ---- env expansion: Docker's documented ENV cases ----------------------- */

/* FOO=/bar, EMPTY="", PATH=/usr/bin:/bin; anything else unset. */
static const char *env_lookup(void *ctx, const char *name, size_t len)
{
	static const char *const env[][2] = {
		{ "FOO", "/bar" }, { "EMPTY", "" }, { "PATH", "/usr/bin:/bin" }, { "abc", "hello" },
	};
	(void)ctx;
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		if (strlen(env[i][0]) == len && memcmp(env[i][0], name, len) == 0)
			return env[i][1];
	return NULL;
}

static void env_unset(void *ctx, const char *name, size_t len, size_t off)
{
	struct eb_buf *b = ctx;
	(void)eb_buf_addf(b, "%.*s@%zu;", (int)len, name, off);
}

static const struct {
	const char *in, *out, *unset;
} exp_cases[] = {
	/* docs.docker.com/reference/dockerfile/#environment-replacement */
	{ "${FOO}", "/bar", "" },
	{ "$FOO", "/bar", "" },
	{ "\\$FOO /quux", "$FOO /quux", "" },
	{ "\\${FOO}", "${FOO}", "" },
	{ "$abc", "hello", "" },
	{ "${FOO:-word}", "/bar", "" },
	{ "${NOPE:-word}", "word", "" },
	{ "${EMPTY:-word}", "word", "" },
	{ "${EMPTY-word}", "", "" },
	{ "${NOPE-word}", "word", "" },
	{ "${FOO:+word}", "word", "" },
	{ "${NOPE:+word}", "", "" },
	{ "${EMPTY:+word}", "", "" },
	{ "${EMPTY+word}", "word", "" },
	/* the word is expanded too */
	{ "${NOPE:-$FOO/x}", "/bar/x", "" },
	{ "${NOPE:-${ALSO:-deep}}", "deep", "" },
	{ "${FOO:+${FOO}/lib}", "/bar/lib", "" },
	/* the PATH case of the issue */
	{ "/opt/tools/bin:$PATH", "/opt/tools/bin:/usr/bin:/bin", "" },
	/* unset: empty, and reported (where it is) */
	{ "a${NOPE}b$NOPE2", "ab", "NOPE@1;NOPE2@9;" },
	{ "${NOPE:-$MISSING}", "", "MISSING@8;" },
	{ "${FOO:-$MISSING}", "/bar", "" },
	/* not references: kept as written */
	{ "$", "$", "" },
	{ "cost: 5$", "cost: 5$", "" },
	{ "$1 $$ $-", "$1 $$ $-", "" },
	{ "C:\\dir\\$FOO", "C:\\dir$FOO", "" },
	{ "$FOO_BAR.x", ".x", "FOO_BAR@0;" },
	{ "${FOO}_BAR", "/bar_BAR", "" },
};

START_TEST(envexpand_cases)
{
	struct eb_buf un;
	struct eb_error *err = NULL;
	char *out = NULL;

	eb_buf_init(&un, 0);
	ck_assert_msg(eb_envexpand(exp_cases[_i].in, env_lookup, env_unset, &un, &out, &err) == 0,
		      "'%s': %s", exp_cases[_i].in, err ? err->msg : "");
	ck_assert_msg(strcmp(out, exp_cases[_i].out) == 0, "'%s' -> '%s', want '%s'",
		      exp_cases[_i].in, out, exp_cases[_i].out);
	ck_assert_str_eq(un.ptr, exp_cases[_i].unset);
	free(out);
	eb_buf_release(&un);
}
END_TEST

START_TEST(envexpand_errors)
{
	static const struct {
		const char *in;
		unsigned col;
		const char *msg;
	} bad[] = {
		{ "x${FOO", 2, "not closed" },
		{ "${FOO:-abc", 1, "not closed" },
		{ "ab${}", 3, "variable name" },
		{ "${1}", 1, "variable name" },
		{ "${FOO:?err}", 1, "unsupported modifier ':?'" },
		{ "${FOO#x}", 1, "unsupported modifier '#'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct eb_error *err = NULL;
		char *out = NULL;
		ck_assert_int_eq(eb_envexpand(bad[i].in, env_lookup, NULL, NULL, &out, &err), -EB_EINVALID);
		ck_assert_ptr_null(out);
		ck_assert_msg(strstr(err->msg, bad[i].msg), "'%s': %s", bad[i].in, err->msg);
		ck_assert_uint_eq(err->col, bad[i].col);
		eb_error_free(err);
	}
}
END_TEST

/* ${A:-${A:-...}} 50,000 deep overflowed the stack: a bound instead, at
 * EB_ENVEXPAND_MAX_DEPTH (the limit itself still expands) */
START_TEST(envexpand_depth)
{
	struct eb_buf b;
	struct eb_error *err = NULL;
	char *out = NULL;
	size_t deep[] = { EB_ENVEXPAND_MAX_DEPTH, 50000 };

	for (size_t k = 0; k < 2; k++) {
		eb_buf_init(&b, 0);
		for (size_t i = 0; i < deep[k]; i++)
			(void)eb_buf_adds(&b, "${UNSET_X:-");
		(void)eb_buf_adds(&b, "v");
		for (size_t i = 0; i < deep[k]; i++)
			(void)eb_buf_addc(&b, '}');
		if (k == 0) {
			ck_assert_int_eq(eb_envexpand(b.ptr, env_lookup, NULL, NULL, &out, &err), 0);
			ck_assert_str_eq(out, "v");
			free(out);
		} else {
			ck_assert_int_eq(eb_envexpand(b.ptr, env_lookup, NULL, NULL, &out, &err),
					 -EB_ETOOBIG);
			ck_assert_ptr_null(out);
			ck_assert_msg(strstr(err->msg, "nested more than 64 deep"), "%s", err->msg);
			eb_error_free(err);
		}
		eb_buf_release(&b);
	}
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

/* Threads registering and unregistering their own paths at once (layers
 * and compile runs side by side): none reads a string another frees (ASan
 * and valgrind see to that), and every slot comes back, so a path
 * registered after them is still removed by the cleanup. */
static void *registry_churn(void *arg)
{
	char path[64];

	for (int i = 0; i < 20000; i++) {
		snprintf(path, sizeof(path), "/nonexistent/eb-%ld-%d", (long)(intptr_t)arg, i);
		eb_interrupt_register(path, 0);
		eb_interrupt_unregister(path);
	}
	return NULL;
}

START_TEST(interrupt_registry_threads)
{
	pthread_t t[4];
	char tmpl[] = "/tmp/eb-interrupt-XXXXXX";
	int fd;

	for (intptr_t k = 0; k < 4; k++)
		ck_assert_int_eq(pthread_create(&t[k], NULL, registry_churn, (void *)k), 0);
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	close(fd);
	eb_interrupt_register(tmpl, 0);
	eb_interrupt_cleanup();
	ck_assert_int_eq(access(tmpl, F_OK), -1);
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
	tcase_add_test(tc, diag_group_targets);
	tcase_add_loop_test(tc, path_normalize, 0, sizeof(norm_cases) / sizeof(norm_cases[0]));
	tcase_add_test(tc, path_join_dirname);
	tcase_add_test(tc, atomic_write_replaces_whole_file);
	tcase_add_test(tc, buf_init_macro_and_put);
	tcase_add_test(tc, hex_and_base64url);
	tcase_add_test(tc, hash_algorithm_table);
	tcase_add_loop_test(tc, envexpand_cases, 0, sizeof(exp_cases) / sizeof(exp_cases[0]));
	tcase_add_test(tc, envexpand_errors);
	tcase_add_test(tc, envexpand_depth);
	tcase_add_test(tc, glob_patterns);
	tcase_add_test(tc, interrupt_registry_threads);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
