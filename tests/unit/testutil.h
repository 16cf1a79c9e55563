/*
 * testutil.h - shared scaffolding for the Check unit tests: a main() that
 * runs one suite and prints TAP (read by automake's tap-driver), and small
 * helpers for temporary directories and files.
 */
#ifndef EB_TESTUTIL_H
#define EB_TESTUTIL_H

#include <check.h>
#include <fcntl.h>
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

/* Start a test server (argv[0] is run through PATH) whose stdin is a pipe
 * that keeps it alive and whose first stdout line is the port it listens
 * on.  Returns the port; *pid and *in_fd (close it to stop the server) are
 * set. */
static inline int eb_test_spawn_server(const char *const *argv, pid_t *pid, int *in_fd)
{
	int in[2], out[2], port;
	char line[64];
	size_t got = 0;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	*pid = fork();
	ck_assert_int_ge(*pid, 0);
	if (*pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*in_fd = in[1];
	fcntl(*in_fd, F_SETFD, FD_CLOEXEC);
	while (got < sizeof(line) - 1) {
		ssize_t r = read(out[0], line + got, 1);
		if (r <= 0 || line[got] == '\n')
			break;
		got++;
	}
	line[got] = '\0';
	close(out[0]);
	port = (int)strtol(line, NULL, 10);
	ck_assert_msg(port > 0, "test server did not start (got '%s')", line);
	return port;
}

#endif
