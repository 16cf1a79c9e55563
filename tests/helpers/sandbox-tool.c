/*
 * sandbox-tool.c - drives src/sandbox/ from the shell tests
 * (tests/cli/sandbox.sh):
 *
 *   sandbox-tool [--ro SRC:DEST]... [--rw SRC:DEST]... [--timeout S]
 *                [--stdin TEXT] [--env NAME=VALUE]... [--cwd DIR]
 *                [--prepare DIR] [--stream FILE [--fail-after N]]
 *                ROOT PROGRAM [ARG...]
 *
 * runs PROGRAM of the tree ROOT confined, copies its captured stdout and
 * stderr to ours and exits with its status; --stream feeds FILE to its
 * stdin and copies its stdout as it comes (the streams of
 * eb_sandbox_opts), and --fail-after makes the feed fail after N bytes; a sandbox error is printed as
 * "sandbox-tool: error: MSG" (and "hint: ...") with exit 2 (3 when
 * interrupted).  --prepare makes DIR a writable output first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"
#include "util/interrupt.h"

struct stream {
	FILE *in;
	long long fed, fail_after;
};

static long feed(void *ud, char *buf, size_t cap, struct eb_error **err)
{
	struct stream *st = ud;
	size_t n;

	if (st->fail_after >= 0 && st->fed >= st->fail_after)
		return eb_error_set(err, EB_EIO, "the feed failed after %lld bytes", st->fed);
	n = fread(buf, 1, cap, st->in);
	st->fed += (long long)n;
	return (long)n;
}

static int sink(void *ud, const char *data, size_t len, struct eb_error **err)
{
	(void)ud;
	if (fwrite(data, 1, len, stdout) != len)
		return eb_error_set(err, EB_EIO, "cannot write stdout");
	return 0;
}

int main(int argc, char **argv)
{
	struct eb_sandbox_bind binds[16];
	const char *env[16];
	struct eb_sandbox_opts o = { 0 };
	struct eb_sandbox_result r;
	struct eb_error *err = NULL;
	struct stream st = { NULL, 0, -1 };
	size_t nb = 0, ne = 0;
	int i = 1, rc;

	if (eb_interrupt_install(&err) < 0)
		return 2;
	o.source_date_epoch = 1700000000;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			break;
		i++;
		if ((!strcmp(a, "--ro") || !strcmp(a, "--rw")) && nb < 16 && strchr(v, ':')) {
			char *s = strdup(v), *c = strchr(s, ':');
			*c = '\0';
			binds[nb].src = s;
			binds[nb].dest = c + 1;
			binds[nb++].writable = a[3] == 'w';
		} else if (!strcmp(a, "--timeout")) {
			o.timeout_s = (unsigned)atoi(v);
		} else if (!strcmp(a, "--stdin")) {
			o.stdin_data = v;
			o.stdin_len = strlen(v);
		} else if (!strcmp(a, "--env") && ne < 15) {
			env[ne++] = v;
		} else if (!strcmp(a, "--stream")) {
			if (!(st.in = fopen(v, "rb"))) {
				perror(v);
				return 2;
			}
			o.feed = feed;
			o.sink = sink;
			o.stream_ud = &st;
		} else if (!strcmp(a, "--fail-after")) {
			st.fail_after = atoll(v);
		} else if (!strcmp(a, "--cwd")) {
			o.cwd = v;
		} else if (!strcmp(a, "--prepare")) {
			if (eb_sandbox_prepare_output(v, &err) < 0)
				goto fail;
		} else {
			fprintf(stderr, "sandbox-tool: bad option %s\n", a);
			return 2;
		}
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: sandbox-tool [OPTIONS] ROOT PROGRAM [ARG...]\n");
		return 2;
	}
	env[ne] = NULL;
	o.root = argv[i];
	o.argv = (const char *const *)argv + i + 1;
	o.env = env;
	o.binds = binds;
	o.nbinds = nb;
	rc = eb_sandbox_run(&o, &r, &err);
	if (rc < 0)
		goto fail;
	fwrite(r.out, 1, r.out_len, stdout);
	fwrite(r.err, 1, r.err_len, stderr);
	rc = r.exit_status;
	eb_sandbox_result_free(&r);
	for (size_t k = 0; k < nb; k++)
		free((char *)binds[k].src);
	return rc;
fail:
	fprintf(stderr, "sandbox-tool: error: %s\n", err->msg);
	if (err->hint)
		fprintf(stderr, "hint: %s\n", err->hint);
	rc = err->code == EB_EINTR ? 3 : 2;
	eb_error_free(err);
	for (size_t k = 0; k < nb; k++)
		free((char *)binds[k].src);
	return rc;
}
