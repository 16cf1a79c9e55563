/*
 * testutil.h - shared scaffolding for the Check unit tests: a main() that
 * runs one suite and prints TAP (read by automake's tap-driver), and small
 * helpers for temporary directories and files.
 */
#ifndef EB_TESTUTIL_H
#define EB_TESTUTIL_H

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Skips.  Check has no "skipped" result, and a test that returns early
 * counts as passed.  A test that cannot run on this machine (a tool, the
 * test base or a namespace is missing) says so with EB_TEST_SKIP(reason),
 * which notes its name in a file shared with eb_test_run() (the descriptor
 * is inherited by Check's forked children, and works without fork too) and
 * returns.  eb_test_run() then prints that test's TAP line as
 * "ok N - ... # SKIP reason", which automake's tap-driver and tests/summary
 * count as a skip (CI fails on any).  Not for loop tests: their TAP lines
 * do not say which iteration ran.
 */
static inline int *eb_test_skip_fd(void)
{
	static int fd = -1;
	return &fd;
}

__attribute__((format(printf, 2, 3)))
static inline void eb_test_note_skip(const char *fn, const char *fmt, ...)
{
	char reason[512];
	size_t n = strlen(fn);
	va_list ap;

	if (n > 3 && strcmp(fn + n - 3, "_fn") == 0)
		n -= 3; /* START_TEST(name) defines name_fn */
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	for (char *c = reason; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
	/* no ck_assert on success: the TAP line names the last one's file */
	if (*eb_test_skip_fd() < 0 || dprintf(*eb_test_skip_fd(), "%.*s\t%s\n", (int)n, fn, reason) < 0)
		ck_abort_msg("cannot note the skip of %s (outside eb_test_run?)", fn);
}

#define EB_TEST_SKIP(...)                                  \
	do {                                               \
		eb_test_note_skip(__func__, __VA_ARGS__);  \
		return;                                    \
	} while (0)

/* Copy Check's TAP from `tap` to stdout, marking the tests listed in
 * `skips` ("name\treason" lines) as skipped.  -1 when a file cannot be
 * read or a noted skip matches no TAP line. */
static inline int eb_test_print_tap(FILE *tap, FILE *skips)
{
	char line[8192], names[64][128], reasons[64][512], needle[140];
	int n = 0, used[64] = { 0 }, rc = 0;

	rewind(skips);
	while (n < 64 && fgets(line, sizeof(line), skips)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		tab[strcspn(tab + 1, "\n") + 1] = '\0';
		snprintf(names[n], sizeof(names[n]), "%.127s", line);
		snprintf(reasons[n], sizeof(reasons[n]), "%.511s", tab + 1);
		n++;
	}
	rewind(tap);
	while (fgets(line, sizeof(line), tap)) {
		char *at = NULL;
		int k = -1;
		if (strncmp(line, "ok ", 3) == 0)
			for (int i = 0; i < n && k < 0; i++) {
				/* "ok N - FILE:TCASE:NAME: Passed" */
				snprintf(needle, sizeof(needle), ":%s: ", names[i]);
				if ((at = strstr(line, needle)))
					k = i;
			}
		if (k < 0) {
			fputs(line, stdout);
			continue;
		}
		at[strlen(names[k]) + 1] = '\0'; /* drop ": Passed" */
		printf("%s # SKIP %s\n", line, reasons[k]);
		used[k] = 1;
	}
	for (int i = 0; i < n; i++)
		if (!used[i]) {
			printf("# skip noted by %s matched no test\n", names[i]);
			rc = -1;
		}
	fflush(stdout);
	return ferror(tap) || ferror(skips) ? -1 : rc;
}

/* Run one suite; TAP (with skips marked) goes to stdout.  0 when every
 * test passed or was skipped. */
static inline int eb_test_run(Suite *suite)
{
	const char *base = getenv("TMPDIR");
	char tappath[4096];
	SRunner *sr = srunner_create(suite);
	FILE *skips = tmpfile(), *tap;
	int fd, failed;

	snprintf(tappath, sizeof(tappath), "%s/envbuild-tap-XXXXXX", base && *base ? base : "/tmp");
	fd = mkstemp(tappath);
	if (!skips || fd < 0) {
		perror("eb_test_run: temporary file");
		return EXIT_FAILURE;
	}
	close(fd);
	*eb_test_skip_fd() = fileno(skips);
	srunner_set_tap(sr, tappath);
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr); /* closes the TAP file */
	tap = fopen(tappath, "r");
	if (!tap || eb_test_print_tap(tap, skips) < 0)
		failed = 1;
	if (tap)
		fclose(tap);
	unlink(tappath);
	fclose(skips);
	*eb_test_skip_fd() = -1;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Each test program defines `static Suite *make_suite(void)` and then uses
 * EB_TEST_MAIN.  TAP goes to stdout; exit status reflects failures. */
#define EB_TEST_MAIN(make_suite_fn)                 \
	int main(void)                              \
	{                                           \
		return eb_test_run(make_suite_fn()); \
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
