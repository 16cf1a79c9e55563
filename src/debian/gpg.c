/*
 * gpg.c - signature verification through gpgv (see gpg.h for why gpgv).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debian/gpg.h"
#include "util/alloc.h"
#include "util/sys.h"
#include "util/fs.h"
#include "util/interrupt.h"

extern char **environ;


/* Run argv[0] (searched on PATH) with stdin /dev/null, stdout into
 * `status` (gpgv's --status-fd 1) and stderr into `diag` (for the error
 * message).  Returns the exit status, or a negative code. */
static int run(const char *const *argv, struct eb_buf *status, struct eb_buf *diag,
	       struct eb_error **err)
{
	char *exe = eb_sys_find_program(argv[0]);
	posix_spawn_file_actions_t fa;
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, ws, rr;
	pid_t pid;
	static char lc[] = "LC_ALL=C", path[] = "PATH=/usr/bin:/bin";
	char *envp[] = { lc, path, NULL };

	if (!exe)
		return eb_error_set(err, EB_EFAIL, "%s not found on PATH (install the %s package)",
				    argv[0], argv[0]);
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		rr = eb_error_set_errno(err, EB_EIO, errno, "pipe");
		goto fail;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	rr = posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(errp[1]);
	out[1] = errp[1] = -1;
	if (rr != 0) {
		rr = eb_error_set_errno(err, EB_EFAIL, rr, "cannot run %s", exe);
		goto fail;
	}
	/* gpgv's output is small (a few status lines): read stdout to the
	 * end, then stderr; a full stderr pipe cannot block it first in
	 * practice, and both are capped */
	for (int i = 0; i < 2; i++) {
		int fd = i ? errp[0] : out[0];
		struct eb_buf *b = i ? diag : status;
		char chunk[4096];
		ssize_t n;
		while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			(void)eb_buf_add(b, chunk, (size_t)n);
		}
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	rr = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	free(exe);
	return rr;
}

static int write_file(const char *path, const void *data, size_t len, struct eb_error **err)
{
	return eb_fs_write_atomic(path, data, len, 0600, err);
}

/* the keyring gpgv should read: the file itself, or a dearmored copy */
static int keyring_path(char **out, const char *keyring, const char *dir, struct eb_error **err)
{
	struct eb_buf head;
	int rc, st;

	*out = NULL;
	/* gpgv reads a --keyring without '/' from its home directory */
	if (keyring[0] != '/') {
		char *abs = realpath(keyring, NULL);
		if (!abs)
			return eb_error_set_errno(err, EB_EIO, errno, "keyring '%s'", keyring);
		rc = keyring_path(out, abs, dir, err);
		free(abs);
		return rc;
	}
	eb_buf_init(&head, 0);
	/* opened non-blocking and required to be a regular file: signed_by
	 * naming a fifo would block open(2), here and in gpgv, for ever */
	if ((rc = eb_fs_read_confined(&head, keyring, NULL, 16 << 20, err)) < 0) {
		eb_buf_release(&head);
		return eb_error_wrap(err, "reading keyring");
	}
	if (head.len == 0) {
		eb_buf_release(&head);
		return eb_error_set(err, EB_EINVALID, "keyring '%s' is empty", keyring);
	}
	if (!strstr(head.ptr, "-----BEGIN PGP PUBLIC KEY BLOCK-----")) {
		eb_buf_release(&head);
		*out = eb_xstrdup(keyring);
		return 0;
	}
	eb_buf_release(&head);
	char *dest = eb_path_join(dir, "keyring.gpg");
	struct eb_buf so, se;
	const char *argv[] = { "gpg", "--batch", "--no-tty", "--homedir", dir, "--output", dest,
			       "--dearmor", keyring, NULL };
	eb_buf_init(&so, 1 << 16);
	eb_buf_init(&se, 1 << 16);
	st = run(argv, &so, &se, err);
	if (st != 0) {
		if (st > 0)
			eb_error_set(err, EB_EINVALID, "cannot dearmor keyring '%s': %s", keyring,
				     se.ptr);
		free(dest);
		dest = NULL;
		rc = -EB_EINVALID;
	}
	eb_buf_release(&so);
	eb_buf_release(&se);
	*out = dest;
	return rc < 0 ? rc : 0;
}

/* The [GNUPG:] status lines decide; `keyring` is for messages. */
static int judge(const struct eb_buf *status, const struct eb_buf *diag, int exitcode,
		 const char *keyring, char **fingerprint, struct eb_error **err)
{
	const char *s = status->ptr;
	const char *valid = strstr(s, "[GNUPG:] VALIDSIG ");
	static const char *const fatal[] = { "BADSIG", "ERRSIG", "EXPKEYSIG", "REVKEYSIG",
					     "EXPSIG", "NO_PUBKEY", "NODATA" };

	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		char *tag = eb_xasprintf("[GNUPG:] %s", fatal[i]);
		const char *hit = strstr(s, tag);
		free(tag);
		if (hit) {
			const char *nl = strchr(hit, '\n');
			int n = nl ? (int)(nl - hit) : (int)strlen(hit);
			if (!strcmp(fatal[i], "NO_PUBKEY") || !strcmp(fatal[i], "ERRSIG"))
				eb_error_set(err, EB_EINVALID,
					     "Release is signed by a key that is not in '%s' (%.*s)",
					     keyring, n - 9, hit + 9);
			else if (!strcmp(fatal[i], "NODATA"))
				eb_error_set(err, EB_EINVALID, "Release is not signed");
			else
				eb_error_set(err, EB_EINVALID, "bad signature on Release (%.*s)",
					     n - 9, hit + 9);
			return -EB_EINVALID;
		}
	}
	if (exitcode != 0 || !valid || !strstr(s, "[GNUPG:] GOODSIG ")) {
		const char *nl = strchr(diag->ptr, '\n');
		return eb_error_set(err, EB_EINVALID,
				    "Release signature does not verify against '%s' (gpgv exit %d%s%.*s)",
				    keyring, exitcode, diag->len ? ": " : "",
				    nl ? (int)(nl - diag->ptr) : (int)diag->len, diag->ptr);
	}
	if (fingerprint) {
		const char *f = valid + strlen("[GNUPG:] VALIDSIG ");
		*fingerprint = eb_xstrndup(f, strcspn(f, " \n"));
	}
	return 0;
}

static int verify(struct eb_buf *out, char **fingerprint, const void *data, size_t len,
		  const void *sig, size_t siglen, const char *keyring, struct eb_error **err)
{
	char tmpl[] = "/tmp/envbuild-gpgv.XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL, *in = NULL, *sigf = NULL, *outf = NULL, *ring = NULL;
	struct eb_buf status, diag;
	int rc, st;

	if (fingerprint)
		*fingerprint = NULL;
	eb_buf_init(&status, 1 << 20);
	eb_buf_init(&diag, 1 << 16);
	dir = tmp && *tmp ? eb_xasprintf("%s/envbuild-gpgv.XXXXXX", tmp) : eb_xstrdup(tmpl);
	if (!mkdtemp(dir)) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "creating a directory for gpgv");
		free(dir);
		dir = NULL;
		goto done;
	}
	eb_interrupt_register(dir, 1);
	in = eb_path_join(dir, "Release");
	sigf = eb_path_join(dir, "Release.gpg");
	outf = eb_path_join(dir, "signed");
	if ((rc = write_file(in, data, len, err)) < 0)
		goto done;
	if (sig && (rc = write_file(sigf, sig, siglen, err)) < 0)
		goto done;
	if ((rc = keyring_path(&ring, keyring, dir, err)) < 0)
		goto done;
	if (sig) {
		const char *argv[] = { "gpgv", "--homedir", dir, "--status-fd", "1", "--keyring",
				       ring, sigf, in, NULL };
		st = run(argv, &status, &diag, err);
	} else {
		const char *argv[] = { "gpgv", "--homedir", dir, "--status-fd", "1", "--keyring",
				       ring, "--output", outf, in, NULL };
		st = run(argv, &status, &diag, err);
	}
	if (st < 0) {
		rc = st;
		goto done;
	}
	if ((rc = judge(&status, &diag, st, keyring, fingerprint, err)) < 0)
		goto done;
	if (out && (rc = eb_fs_read_file(out, outf, len, err)) < 0)
		goto done;
	rc = 0;
done:
	if (dir) {
		(void)eb_fs_remove_tree(dir, NULL);
		eb_interrupt_unregister(dir);
	}
	eb_buf_release(&status);
	eb_buf_release(&diag);
	free(dir);
	free(in);
	free(sigf);
	free(outf);
	free(ring);
	return rc;
}

int eb_debian_verify_clearsigned(struct eb_buf *out, char **fingerprint, const void *data,
				 size_t len, const char *keyring, struct eb_error **err)
{
	eb_buf_init(out, 0);
	/* gpgv would also accept a detached-style binary signature with the
	 * data inside; InRelease must be a clearsigned text */
	static const char begin[] = "-----BEGIN PGP SIGNED MESSAGE-----";
	static const char end[] = "-----END PGP SIGNATURE-----";
	const char *p = data, *last;
	size_t tail;

	if (len < sizeof(begin) - 1 || memcmp(data, begin, sizeof(begin) - 1) != 0)
		return eb_error_set(err, EB_EINVALID, "InRelease is not a clearsigned message");
	/* gpgv verifies the first signed block and ignores what follows it;
	 * apt refuses such files and so do we: exactly one block, nothing
	 * after its signature */
	if (memmem(p + 1, len - 1, begin, sizeof(begin) - 1))
		return eb_error_set(err, EB_EINVALID, "InRelease has more than one signed message");
	last = memmem(p, len, end, sizeof(end) - 1);
	if (!last)
		return eb_error_set(err, EB_EINVALID, "InRelease has no signature block");
	for (tail = (size_t)(last - p) + sizeof(end) - 1; tail < len; tail++)
		if (p[tail] != '\n' && p[tail] != '\r' && p[tail] != ' ' && p[tail] != '\t')
			return eb_error_set(err, EB_EINVALID,
					    "InRelease has unsigned text after its signature");
	return verify(out, fingerprint, data, len, NULL, 0, keyring, err);
}

int eb_debian_verify_detached(char **fingerprint, const void *data, size_t len,
			      const void *sig, size_t siglen, const char *keyring,
			      struct eb_error **err)
{
	if (!siglen)
		return eb_error_set(err, EB_EINVALID, "Release.gpg is empty");
	return verify(NULL, fingerprint, data, len, sig, siglen, keyring, err);
}
