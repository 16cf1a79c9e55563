/*
 * sandbox.c - one confined run through bubblewrap: the tree and binds are
 * opened here and handed to bwrap as descriptors, bwrap makes the
 * namespaces, and this side feeds stdin, captures the output and enforces
 * the time limit and Ctrl-C.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/interrupt.h"
#include "util/sys.h"

/* Where the descriptors land in bwrap: 0-2 the std streams, 3 bwrap's
 * status.  Parked above the usual range while they are moved. */
#define FD_STATUS 3
#define FD_PARK 100
#define MAX_BINDS 64
/* As root, the tree and the binds are re-mounted under a private tmpfs
 * here (in a mount namespace of the child's own) before the drop to the
 * sandbox's user: the invoker's temp directories (mkdtemp: 0700) need not
 * be searchable by that user.  bwrap, which resolves its sources by path,
 * then finds them here. */
#define STAGE_BASE "/tmp"

#define SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct argv_vec {
	char **v;
	size_t n, cap;
};

static void av_add(struct argv_vec *a, const char *s)
{
	EB_ALLOC_GROW(a->v, a->n + 2, a->cap);
	a->v[a->n++] = eb_xstrdup(s);
	a->v[a->n] = NULL;
}

static void av_addi(struct argv_vec *a, int v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "%d", v);
	av_add(a, tmp);
}

static void av_free(struct argv_vec *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

static int tree_has_dir(const char *root, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return 0;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int under_tmp(const char *dest)
{
	return strncmp(dest, "/tmp/", 5) == 0;
}

/* A bind's destination: absolute, no "." or ".." component, no "//". */
static int dest_ok(const char *d)
{
	const char *p;

	if (d[0] != '/' || d[1] == '\0')
		return 0;
	for (p = d; *p; p++) {
		if (p[0] == '/' && (p[1] == '/' || p[1] == '\0'))
			return 0;
		if (p[0] == '/' && p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0' || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			return 0;
	}
	return 1;
}

static int check_opts(const struct eb_sandbox_opts *o, struct eb_error **err)
{
	struct stat st;

	if (!o->root || !o->argv || !o->argv[0])
		return eb_error_set(err, EB_EFAIL, "sandbox: no root or no program");
	if (stat(o->root, &st) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "sandbox root '%s'", o->root);
	if (!S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EFAIL, "sandbox root '%s' is not a directory", o->root);
	if (!tree_has_dir(o->root, "tmp"))
		return eb_error_set(err, EB_EFAIL,
				    "the image tree '%s' has no /tmp directory to run %s in",
				    o->root, o->what ? o->what : o->argv[0]);
	if (o->nbinds > MAX_BINDS)
		return eb_error_set(err, EB_EFAIL, "sandbox: more than %d binds", MAX_BINDS);
	for (size_t i = 0; i < o->nbinds; i++) {
		const char *d = o->binds[i].dest;

		if (!d || !dest_ok(d) || !o->binds[i].src)
			return eb_error_set(err, EB_EFAIL, "sandbox: bad bind destination '%s'",
					    d ? d : "(null)");
		if (!under_tmp(d)) {
			char path[PATH_MAX];

			if (snprintf(path, sizeof(path), "%s%s", o->root, d) >= (int)sizeof(path) ||
			    lstat(path, &st) != 0)
				return eb_error_set(err, EB_EFAIL,
						    "sandbox: '%s' does not exist in the image tree to bind '%s' on",
						    d, o->binds[i].src);
		}
	}
	return 0;
}

/* The host path bwrap binds for source k (0: the tree, 1..: the binds). */
static const char *bind_source(const struct eb_sandbox_opts *o, int staged, size_t k,
			       char *buf, size_t len)
{
	if (!staged)
		return k == 0 ? o->root : o->binds[k - 1].src;
	snprintf(buf, len, STAGE_BASE "/%zu", k);
	return buf;
}

static void build_argv(const struct eb_sandbox_opts *o, const char *bwrap, int staged,
		       struct argv_vec *a)
{
	char tmp[64];

	av_add(a, bwrap);
	av_add(a, "--unshare-all");
	av_add(a, "--unshare-user"); /* also as root: the uid drop needs it */
	av_add(a, "--uid");
	av_addi(a, EB_SANDBOX_UID);
	av_add(a, "--gid");
	av_addi(a, EB_SANDBOX_GID);
	av_add(a, "--hostname");
	av_add(a, "envbuild");
	av_add(a, "--die-with-parent");
	av_add(a, "--new-session");
	av_add(a, "--json-status-fd");
	av_addi(a, FD_STATUS);
	av_add(a, "--ro-bind");
	av_add(a, bind_source(o, staged, 0, tmp, sizeof(tmp)));
	av_add(a, "/");
	if (tree_has_dir(o->root, "proc")) {
		av_add(a, "--proc");
		av_add(a, "/proc");
	}
	if (tree_has_dir(o->root, "dev")) {
		av_add(a, "--dev");
		av_add(a, "/dev");
	}
	av_add(a, "--tmpfs");
	av_add(a, "/tmp");
	for (size_t i = 0; i < o->nbinds; i++) {
		av_add(a, o->binds[i].writable ? "--bind" : "--ro-bind");
		av_add(a, bind_source(o, staged, i + 1, tmp, sizeof(tmp)));
		av_add(a, o->binds[i].dest);
	}
	av_add(a, "--chdir");
	av_add(a, o->cwd ? o->cwd : "/");
	av_add(a, "--");
	for (size_t i = 0; o->argv[i]; i++)
		av_add(a, o->argv[i]);
}

static void build_env(const struct eb_sandbox_opts *o, struct argv_vec *e)
{
	av_add(e, "PATH=" SANDBOX_PATH);
	av_add(e, "HOME=/tmp");
	av_add(e, "TMPDIR=/tmp");
	av_add(e, "LANG=C.UTF-8");
	if (o->source_date_epoch >= 0) {
		char tmp[64];

		snprintf(tmp, sizeof(tmp), "SOURCE_DATE_EPOCH=%lld", o->source_date_epoch);
		av_add(e, tmp);
	}
	for (size_t i = 0; o->env && o->env[i]; i++)
		av_add(e, o->env[i]);
}

/* Child side, between fork and exec: async-signal-safe calls only. */
static void child_fail(const char *what)
{
	const char *m = strerror(errno);

	if (write(2, "envbuild sandbox: ", 18) < 0 || write(2, what, strlen(what)) < 0 ||
	    write(2, ": ", 2) < 0 || write(2, m, strlen(m)) < 0 || write(2, "\n", 1) < 0)
		_exit(126);
	_exit(126);
}

struct child_fds {
	int in_r, out_w, err_w, status_w;
	char **stage; /* as root: STAGE_BASE/k for source k, else NULL */
};

/* "/proc/self/fd/N" without stdio (between fork and exec). */
static void fd_path(char *buf, int fd)
{
	char digits[16];
	int n = 0;

	memcpy(buf, "/proc/self/fd/", 14);
	do {
		digits[n++] = (char)('0' + fd % 10);
		fd /= 10;
	} while (fd);
	for (int i = 0; i < n; i++)
		buf[14 + i] = digits[n - 1 - i];
	buf[14 + n] = '\0';
}

/* As root: the sources under a private tmpfs, where the unprivileged
 * bwrap can reach them (see STAGE_BASE). */
static void stage_sources(const struct eb_sandbox_opts *o, char **stage)
{
	int fds[1 + MAX_BINDS];
	size_t n = 1 + o->nbinds, k;
	char proc[32];
	struct stat st;

	if (unshare(CLONE_NEWNS) != 0)
		child_fail("unshare(CLONE_NEWNS)");
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0)
		child_fail("making / private");
	/* opened in the new namespace (a bind's source must be one of its
	 * mounts), before the tmpfs covers a source under STAGE_BASE */
	for (k = 0; k < n; k++) {
		const char *src = k == 0 ? o->root : o->binds[k - 1].src;

		fds[k] = open(src, O_PATH | O_CLOEXEC);
		if (fds[k] < 0)
			child_fail(src);
	}
	if (mount("tmpfs", STAGE_BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
		child_fail("mounting a tmpfs on " STAGE_BASE);
	for (k = 0; k < n; k++) {
		if (fstat(fds[k], &st) != 0)
			child_fail("fstat");
		if (S_ISDIR(st.st_mode)) {
			if (mkdir(stage[k], 0755) != 0)
				child_fail(stage[k]);
		} else {
			int f = open(stage[k], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
			if (f < 0)
				child_fail(stage[k]);
			close(f);
		}
		fd_path(proc, fds[k]);
		if (mount(proc, stage[k], "none", MS_BIND | MS_REC, NULL) != 0)
			child_fail(stage[k]);
		close(fds[k]);
	}
}

static __attribute__((noreturn)) void run_child(const struct eb_sandbox_opts *o, pid_t parent,
						 const struct child_fds *cf, const char *bwrap,
						 char **argv, char **envp)
{
	int src[4];
	size_t i;
	int nullfd = -1;
	sigset_t none;
	struct sigaction dfl;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* stderr first, so the failures below are captured */
	if (dup2(cf->err_w, 2) < 0)
		_exit(126);
	if (cf->in_r < 0 && (nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		child_fail("/dev/null");
	src[0] = cf->in_r >= 0 ? cf->in_r : nullfd;
	src[1] = cf->out_w;
	src[2] = cf->err_w;
	src[3] = cf->status_w;
	for (i = 0; i < 4; i++) {
		int p = fcntl(src[i], F_DUPFD_CLOEXEC, FD_PARK);
		if (p < 0)
			child_fail("fcntl");
		src[i] = p;
	}
	if (cf->stage)
		stage_sources(o, cf->stage);
	for (i = 0; i < 4; i++)
		if (dup2(src[i], (int)i) < 0)
			child_fail("dup2");
	/* nothing else of envbuild's crosses into the sandbox */
	close_range(FD_STATUS + 1, ~0U, 0);

	if (cf->stage) {
		/* root: become the unprivileged user before any namespace */
		if (setgroups(0, NULL) != 0)
			child_fail("setgroups");
		if (setresgid(EB_SANDBOX_GID, EB_SANDBOX_GID, EB_SANDBOX_GID) != 0)
			child_fail("setresgid");
		if (setresuid(EB_SANDBOX_UID, EB_SANDBOX_UID, EB_SANDBOX_UID) != 0)
			child_fail("setresuid");
	}
	execve(bwrap, argv, envp);
	child_fail(bwrap);
	_exit(126);
}

#define STREAM_BUF 65536

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what fd has; keep the head (tail=0) or the tail (tail=1) of at most
 * max bytes.  Returns 1 at EOF, 0 otherwise. */
static int drain(int fd, struct eb_buf *b, size_t max, int tail, int *truncated)
{
	char chunk[16384];

	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));

		if (r == 0)
			return 1;
		if (r < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : 1;
		if (!tail) {
			size_t room = b->len < max ? max - b->len : 0;
			size_t take = (size_t)r < room ? (size_t)r : room;

			eb_buf_put(b, chunk, take);
			if (take < (size_t)r)
				*truncated = 1;
		} else {
			eb_buf_put(b, chunk, (size_t)r);
			if (b->len > 2 * max) {
				memmove(b->ptr, b->ptr + b->len - max, max);
				eb_buf_truncate(b, max);
				*truncated = 1;
			}
		}
	}
}

static void trim_tail(struct eb_buf *b, size_t max, int *truncated)
{
	if (b->len > max) {
		memmove(b->ptr, b->ptr + b->len - max, max);
		eb_buf_truncate(b, max);
		*truncated = 1;
	}
}

/* The last line of bwrap's own stderr ("bwrap: ..."), for a setup error. */
static char *setup_message(const struct eb_buf *e)
{
	const char *s = e->ptr, *best = NULL;
	const char *p;

	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, "bwrap: ", 7) == 0 || strncmp(p, "envbuild sandbox: ", 18) == 0)
			best = p;
	if (!best)
		best = e->len ? s : "no message";
	p = strchr(best, '\n');
	return p ? eb_xstrndup(best, (size_t)(p - best)) : eb_xstrdup(best);
}

static int setup_error(const struct eb_sandbox_opts *o, const struct eb_buf *e,
		       struct eb_error **err)
{
	char *msg = setup_message(e);
	const char *what = o->what ? o->what : o->argv[0];
	int userns = strstr(msg, "namespace") || strstr(msg, "uid map") ||
		     strstr(msg, "setting up uid") || strstr(msg, "Operation not permitted");
	int rc;

	rc = eb_error_set(err, EB_EFAIL, "cannot start %s confined: %s", what, msg);
	if (userns)
		eb_error_hint(err,
			      "this host does not let an unprivileged user make user namespaces "
			      "(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, "
			      "or kernel.apparmor_restrict_unprivileged_userns=0; in a container, "
			      "allow them in its seccomp/AppArmor profile)");
	free(msg);
	return rc;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int eb_sandbox_run(const struct eb_sandbox_opts *o, struct eb_sandbox_result *res,
		   struct eb_error **err)
{
	struct argv_vec av = { 0 }, ev = { 0 }, sv = { 0 };
	struct eb_buf out = EB_BUF_INIT, errb = EB_BUF_INIT, st = EB_BUF_INIT;
	int in_p[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	int st_p[2] = { -1, -1 };
	struct child_fds cf;
	size_t max = o->capture_max ? o->capture_max : EB_SANDBOX_CAPTURE_MAX;
	long timeout = o->timeout_s ? (long)o->timeout_s
				    : eb_env_long("ENVBUILD_SANDBOX_TIMEOUT", EB_SANDBOX_TIMEOUT_S);
	const char *what = o->argv && o->argv[0] ? (o->what ? o->what : o->argv[0]) : "?";
	char *bwrap = NULL;
	size_t fed = 0, flen = 0;
	char *fbuf = NULL, *sbuf = NULL; /* the streams' */
	int out_eof = 0, err_eof = 0, st_eof = 0, out_tr = 0, err_tr = 0;
	int wstatus = 0, reaped = 0, rc = 0, started, code = -1, staged;
	long long deadline;
	pid_t pid = -1, self = getpid();
	sigset_t pipe_set, old_mask;
	const char *p;

	memset(res, 0, sizeof(*res));
	if ((rc = check_opts(o, err)) < 0)
		return rc;
	bwrap = eb_sys_find_program("bwrap");
	if (!bwrap) {
		rc = eb_error_set(err, EB_EFAIL,
				  "cannot run %s confined: bubblewrap (bwrap) is not installed", what);
		eb_error_hint(err, "envbuild runs programs of the image only in a sandbox; "
				   "install bubblewrap (apt-get install bubblewrap)");
		return rc;
	}
	if (o->feed)
		fbuf = eb_xmalloc(STREAM_BUF);
	if (o->sink)
		sbuf = eb_xmalloc(STREAM_BUF);
	staged = geteuid() == 0;
	build_argv(o, bwrap, staged, &av);
	build_env(o, &ev);
	if (staged) {
		char tmp[64];

		for (size_t k = 0; k <= o->nbinds; k++)
			av_add(&sv, bind_source(o, 1, k, tmp, sizeof(tmp)));
	}

	if (((o->stdin_data || o->feed) && pipe2(in_p, O_CLOEXEC) != 0) ||
	    pipe2(out_p, O_CLOEXEC) != 0 ||
	    pipe2(err_p, O_CLOEXEC) != 0 || pipe2(st_p, O_CLOEXEC) != 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "pipe");
		goto out;
	}
	cf.in_r = in_p[0];
	cf.out_w = out_p[1];
	cf.err_w = err_p[1];
	cf.status_w = st_p[1];
	cf.stage = staged ? sv.v : NULL;

	/* a program that exits without reading its input must not kill us */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);

	pid = fork();
	if (pid < 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "fork");
		goto restore;
	}
	if (pid == 0)
		run_child(o, self, &cf, bwrap, av.v, ev.v);
	close_fd(&in_p[0]);
	close_fd(&out_p[1]);
	close_fd(&err_p[1]);
	close_fd(&st_p[1]);
	if (in_p[1] >= 0)
		set_nonblock(in_p[1]);
	set_nonblock(out_p[0]);
	set_nonblock(err_p[0]);
	set_nonblock(st_p[0]);
	if (in_p[1] >= 0 && !o->feed && o->stdin_len == 0)
		close_fd(&in_p[1]);

	deadline = now_ms() + timeout * 1000;
	while (!(out_eof && err_eof && st_eof)) {
		struct pollfd pf[4];
		int np = 0, ix_in = -1, ix_out = -1, ix_err = -1, ix_st = -1;
		long long left = deadline - now_ms();

		if (eb_interrupted()) {
			rc = eb_interrupt_check(err);
			goto kill;
		}
		if (left <= 0) {
			rc = eb_error_set(err, EB_EFAIL, "%s did not finish within %ld s (killed)",
					  what, timeout);
			eb_error_hint(err, "ENVBUILD_SANDBOX_TIMEOUT sets the time limit in seconds");
			goto kill;
		}
		if (in_p[1] >= 0)
			pf[ix_in = np++] = (struct pollfd){ in_p[1], POLLOUT, 0 };
		if (!out_eof)
			pf[ix_out = np++] = (struct pollfd){ out_p[0], POLLIN, 0 };
		if (!err_eof)
			pf[ix_err = np++] = (struct pollfd){ err_p[0], POLLIN, 0 };
		if (!st_eof)
			pf[ix_st = np++] = (struct pollfd){ st_p[0], POLLIN, 0 };
		if (poll(pf, (nfds_t)np, left < 250 ? (int)left : 250) < 0) {
			if (errno == EINTR)
				continue;
			rc = eb_error_set_errno(err, EB_EIO, errno, "poll");
			goto kill;
		}
		if (ix_in >= 0 && pf[ix_in].revents && o->feed) {
			if (fed == flen) {
				long k = o->feed(o->stream_ud, fbuf, STREAM_BUF, err);
				if (k < 0) {
					rc = (int)k;
					goto kill;
				}
				fed = 0;
				flen = (size_t)k;
			}
			if (flen == 0) {
				close_fd(&in_p[1]);
			} else {
				ssize_t w = write(in_p[1], fbuf + fed, flen - fed);
				if (w > 0)
					fed += (size_t)w;
				if (w < 0 && errno != EAGAIN && errno != EINTR)
					close_fd(&in_p[1]); /* it stopped reading */
			}
		} else if (ix_in >= 0 && pf[ix_in].revents) {
			ssize_t w = write(in_p[1], (const char *)o->stdin_data + fed,
					  o->stdin_len - fed);
			if (w > 0)
				fed += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || fed == o->stdin_len)
				close_fd(&in_p[1]);
		}
		if (ix_out >= 0 && pf[ix_out].revents && o->sink) {
			for (;;) {
				ssize_t k = read(out_p[0], sbuf, STREAM_BUF);
				if (k > 0) {
					if ((rc = o->sink(o->stream_ud, sbuf, (size_t)k, err)) < 0)
						goto kill;
					continue;
				}
				if (k == 0 || (errno != EAGAIN && errno != EINTR))
					out_eof = 1;
				break;
			}
		} else if (ix_out >= 0 && pf[ix_out].revents) {
			out_eof = drain(out_p[0], &out, max, 0, &out_tr);
		}
		if (ix_err >= 0 && pf[ix_err].revents)
			err_eof = drain(err_p[0], &errb, max, 1, &err_tr);
		if (ix_st >= 0 && pf[ix_st].revents) {
			int dummy = 0;
			st_eof = drain(st_p[0], &st, 65536, 0, &dummy);
		}
	}
	close_fd(&in_p[1]);
	if (waitpid(pid, &wstatus, 0) == pid)
		reaped = 1;
	trim_tail(&errb, max, &err_tr);

	started = strstr(st.ptr, "\"child-pid\"") != NULL;
	p = strstr(st.ptr, "\"exit-code\"");
	if (p && (p = strchr(p, ':')))
		code = atoi(p + 1);
	if (!started || code < 0) {
		rc = setup_error(o, &errb, err);
		goto restore;
	}
	(void)wstatus;
	res->exit_status = code;
	res->out_len = out.len;
	res->out = eb_buf_detach(&out, NULL);
	res->err_len = errb.len;
	res->err = eb_buf_detach(&errb, NULL);
	res->out_truncated = out_tr;
	res->err_truncated = err_tr;
	goto restore;

kill:
	/* the outer bwrap; its namespace's pid 1 dies with it (--die-with-parent) */
	kill(pid, SIGKILL);
	if (!reaped)
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
restore: {
	sigset_t pending;
	struct timespec zero = { 0, 0 };

	sigemptyset(&pending);
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) &&
	    !sigismember(&old_mask, SIGPIPE))
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
}
out:
	close_fd(&in_p[0]);
	close_fd(&in_p[1]);
	close_fd(&out_p[0]);
	close_fd(&out_p[1]);
	close_fd(&err_p[0]);
	close_fd(&err_p[1]);
	close_fd(&st_p[0]);
	close_fd(&st_p[1]);
	eb_buf_release(&out);
	eb_buf_release(&errb);
	eb_buf_release(&st);
	av_free(&av);
	av_free(&ev);
	av_free(&sv);
	free(bwrap);
	free(fbuf);
	free(sbuf);
	return rc;
}

void eb_sandbox_result_free(struct eb_sandbox_result *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	memset(res, 0, sizeof(*res));
}

int eb_sandbox_prepare_output(const char *dir, struct eb_error **err)
{
	struct stat st;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", dir);
	if (stat(dir, &st) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "'%s'", dir);
	if (geteuid() == 0 && chown(dir, EB_SANDBOX_UID, EB_SANDBOX_GID) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot hand '%s' to the sandbox", dir);
	return 0;
}
