/*
 * sandbox.h - run one program from an image's filesystem, confined.
 *
 * envbuild never runs the host's tools on image content: when a step needs
 * a program that lives in the image being built (its python3 compiling
 * bytecode, its ldconfig, a PEP 517 backend), it runs that program here,
 * with the image tree mounted read-only as /, and nothing of the host
 * visible but the directories the step binds in.
 *
 * The confinement (every run, no option to loosen it):
 *   - new user, mount, pid, network, ipc, uts and (where the kernel has
 *     it) cgroup namespaces: the network namespace holds only a loopback
 *     interface, so nothing outside is reachable;
 *   - the program runs as uid/gid 65534 inside; when envbuild runs as
 *     root it drops to 65534 before bwrap makes the namespaces, so the
 *     process is unprivileged on the host too (first, in a mount namespace
 *     of its own, the tree and the binds are bind-mounted under a private
 *     tmpfs on /tmp, so the invoker's 0700 temp directories need not be
 *     searchable by 65534); the output directory must be writable by
 *     65534 then (eb_sandbox_prepare_output() makes it so);
 *   - / is the image tree read-only, /proc a new procfs, /dev a minimal
 *     one (both only where the tree has the directory), /tmp an empty
 *     tmpfs; binds go on top, read-only unless marked writable;
 *   - a cleared environment: PATH, HOME=/tmp, TMPDIR=/tmp, LANG=C.UTF-8,
 *     SOURCE_DATE_EPOCH when given, and the caller's variables;
 *   - no file descriptor of envbuild but stdin (a pipe fed from
 *     opts->stdin_data or opts->feed, or /dev/null), stdout and stderr
 *     (pipes: stdout captured up to a bound or streamed to opts->sink,
 *     stderr's tail captured);
 *   - killed with its whole pid namespace when envbuild dies
 *     (--die-with-parent and PR_SET_PDEATHSIG), when the time limit passes,
 *     or on Ctrl-C/SIGTERM (util/interrupt.h), which ends the run with
 *     -EB_EINTR.
 *
 * Why bubblewrap rather than our own clone(2)/unshare(2) code: the same
 * namespaces, pivot_root and uid maps written here would be several hundred
 * lines of security-sensitive code with the corner cases (mount
 * propagation, /proc masking, setgroups deny, PR_SET_NO_NEW_PRIVS, the pid
 * 1 reaper) that bwrap already gets right and Debian keeps patched; it is a
 * small C program with no dependencies, used the same way by Flatpak and
 * by Debian's own autopkgtest/sbuild unshare backends.  Its absence, or a
 * kernel that forbids unprivileged user namespaces, is reported as such
 * (EB_EFAIL with a hint naming the cause), never worked around by running
 * unconfined.
 *
 * Uses util/ only (libc, the error type, buffers, interrupt); knows
 * nothing of images, packages or Python.  Writes nothing itself but what
 * eb_sandbox_prepare_output() does; what the program writes lands only in
 * writable binds.  Ownership: options are borrowed for the call; a result
 * owns its captured output until eb_sandbox_result_free().
 */
#ifndef EB_SANDBOX_SANDBOX_H
#define EB_SANDBOX_SANDBOX_H

#include <stddef.h>

#include "util/error.h"

/* The uid and gid the program runs as (inside, and on the host when
 * envbuild is root). */
#define EB_SANDBOX_UID 65534
#define EB_SANDBOX_GID 65534
/* Defaults: time limit (seconds; ENVBUILD_SANDBOX_TIMEOUT overrides when
 * opts->timeout_s is 0) and the bound on each captured stream. */
#define EB_SANDBOX_TIMEOUT_S 600
#define EB_SANDBOX_CAPTURE_MAX (256 * 1024)

struct eb_sandbox_bind {
	const char *src;  /* host path (a directory or a file) */
	const char *dest; /* absolute path inside; its mount point must exist
			   * in the tree unless it lies under /tmp */
	int writable;     /* 0: read-only */
};

struct eb_sandbox_opts {
	const char *root;        /* host directory mounted read-only as / */
	const char *const *argv; /* argv[0]: a path inside the tree, or a name
				  * found on the sandbox's PATH */
	const char *const *env;  /* extra "NAME=VALUE" entries, NULL-ended, or NULL */
	const struct eb_sandbox_bind *binds;
	size_t nbinds;
	const char *cwd;         /* inside; NULL: "/" */
	long long source_date_epoch; /* < 0: not set */
	const void *stdin_data;  /* fed to the program's stdin, or NULL (/dev/null) */
	size_t stdin_len;
	unsigned timeout_s;      /* 0: the default */
	size_t capture_max;      /* 0: EB_SANDBOX_CAPTURE_MAX */
	const char *what;        /* names the run in messages ("python3
				  * compiling bytecode"); NULL: argv[0] */
	/* Streams, for a run whose input or output is larger than memory
	 * should hold: feed (instead of stdin_data) fills buf with up to cap
	 * bytes of stdin and returns how many, 0 at the end of the input;
	 * sink (instead of the stdout capture: res->out stays empty) takes
	 * stdout as it comes.  Either returns < 0 with *err set to end the
	 * run: the program is killed and that error returned.  Both are
	 * called on the caller's thread, while the program runs. */
	long (*feed)(void *ud, char *buf, size_t cap, struct eb_error **err);
	int (*sink)(void *ud, const char *data, size_t len, struct eb_error **err);
	void *stream_ud;
};

struct eb_sandbox_result {
	int exit_status;  /* as a shell reports it: 128+N when killed by signal N */
	char *out;        /* stdout's first capture_max bytes, NUL-ended (owned) */
	size_t out_len;
	char *err;        /* stderr's last capture_max bytes, NUL-ended (owned) */
	size_t err_len;
	int out_truncated, err_truncated;
};

/* Run opts->argv confined.  Returns 0 when the program ran to its end,
 * whatever its exit status (in *res: the caller decides what a failure
 * means); or -EB_EFAIL when it could not be started confined (no bwrap, no
 * user namespaces: the message names the cause) or ran past its time
 * limit, -EB_EINTR on Ctrl-C/SIGTERM (the program is killed first),
 * -EB_EIO on a system error.  *res is filled (and owned by the caller)
 * only on 0. */
int eb_sandbox_run(const struct eb_sandbox_opts *opts, struct eb_sandbox_result *res,
		   struct eb_error **err) EB_WUR;
void eb_sandbox_result_free(struct eb_sandbox_result *res);

/* Make dir (created if missing, mode 0755) writable by the sandbox's user:
 * when envbuild is root, chown it to EB_SANDBOX_UID:GID.  0 or -EB_EIO. */
int eb_sandbox_prepare_output(const char *dir, struct eb_error **err) EB_WUR;

#endif
