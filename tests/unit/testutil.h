/*
 * testutil.h - shared scaffolding for the Check unit tests: a main() that
 * runs one suite and prints TAP (read by automake's tap-driver), and small
 * helpers for temporary directories and files.
 */
#ifndef EB_TESTUTIL_H
#define EB_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Each test program defines `static Suite *make_suite(void)` and then uses
 * EB_TEST_MAIN.  TAP goes to stdout; exit status reflects failures. */
#define EB_TEST_MAIN(make_suite_fn)                                   \
	int main(void)                                                \
	{                                                             \
		SRunner *sr = srunner_create(make_suite_fn());        \
		int failed;                                           \
		srunner_set_tap(sr, "-");                             \
		srunner_run_all(sr, CK_SILENT);                       \
		failed = srunner_ntests_failed(sr);                   \
		srunner_free(sr);                                     \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;          \
	}

/* Write `content` to dir/name (creating parent dirs is the caller's job). */
static inline void eb_test_write(const char *dir, const char *name, const char *content)
{
	char path[4096];
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot create %s", path);
	fputs(content, f);
	fclose(f);
}

/* A fresh temporary directory; caller frees the string. */
static inline char *eb_test_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	char *d;
	snprintf(tmpl, sizeof(tmpl), "%s/envbuild-test-XXXXXX", base && *base ? base : "/tmp");
	d = mkdtemp(tmpl);
	ck_assert_msg(d != NULL, "mkdtemp failed");
	return strdup(d);
}

#endif
