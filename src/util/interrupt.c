/*
 * interrupt.c - signal recording, the registry of temporary paths removed
 * on interrupt, and the emergency removal a second signal triggers.
 *
 * The registry is a fixed array of atomic pointers, so that the signal
 * handler can walk it without a lock and without malloc: a slot is claimed
 * with a compare-and-swap from NULL, and whoever swaps a pointer out (the
 * owner unregistering, the cleanup, or the handler) is the only one to use
 * it afterwards.  Each string starts with 'D' (directory) or 'F' (file),
 * followed by the path.  Unregistering reads other slots' strings to find
 * its own, so threads unregistering at once (layers and compile runs side
 * by side) take a mutex among themselves and with the cleanup: without it
 * one could compare a string the other has just swapped out and freed.
 * Registering reads no string, and the handler never frees one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/fs_remove.h"
#include "util/interrupt.h"

static const int handled[] = { SIGINT, SIGTERM, SIGHUP };

static _Atomic(char *) slots[EB_INTERRUPT_MAX_PATHS];
static atomic_int received;   /* the first signal, or 0 */
static atomic_int hint;       /* where the next free slot probably is */
static pid_t owner;           /* only the process that installed cleans up */
static pthread_mutex_t freeing = PTHREAD_MUTEX_INITIALIZER; /* unregister, cleanup */

/* ---- removal that is safe inside a signal handler ---------------------- */

/* The layout of a getdents64 record (linux_dirent64). */
struct dirent64_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define MAX_DEPTH 48

static int dot_or_dotdot(const char *s)
{
	return s[0] == '.' && (s[1] == '\0' || (s[1] == '.' && s[2] == '\0'));
}

/* rm -rf of name under dirfd with open/getdents64/unlinkat only (all
 * async-signal-safe system calls): no malloc, no stdio, no locks.  Entries
 * are removed while the directory is read, so it is read again from the
 * start until a pass removes nothing. */
static void rm_at(int dirfd, const char *name, int depth)
{
	char buf[1024] __attribute__((aligned(8)));
	int fd, removed;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return;
	if (errno != EISDIR && errno != EPERM)
		return;
	if (depth >= MAX_DEPTH)
		return;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)fchmod(fd, 0700); /* a read-only directory is still ours to empty */
	do {
		long n;
		removed = 0;
		if (lseek(fd, 0, SEEK_SET) < 0)
			break;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64_raw *d = (struct dirent64_raw *)(void *)(buf + off);
				off += d->d_reclen;
				if (dot_or_dotdot(d->d_name))
					continue;
				rm_at(fd, d->d_name, depth + 1);
				removed = 1;
			}
		}
	} while (removed);
	close(fd);
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Swap every registered path out and remove it; NULL-safe, lock-free.
 * free_them: 0 inside the handler (no free() there). */
static void remove_all(int free_them)
{
	for (size_t i = 0; i < EB_INTERRUPT_MAX_PATHS; i++) {
		char *p = atomic_exchange(&slots[i], NULL);
		if (!p)
			continue;
		if (p[0] == 'D')
			rm_at(AT_FDCWD, p + 1, 0);
		else
			(void)unlink(p + 1);
		if (free_them)
			free(p);
	}
}

/* ---- the handler -------------------------------------------------------- */

static void on_signal(int sig)
{
	int saved = errno;
	int none = 0;
	sigset_t set;

	if (atomic_compare_exchange_strong(&received, &none, sig)) {
		errno = saved;
		return; /* the program polls and unwinds */
	}
	/* a second signal: the user will not wait for the unwinding */
	if (getpid() == owner)
		remove_all(0);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	(void)raise(sig);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	_exit(128 + sig);
}

int eb_interrupt_install(struct eb_error **err)
{
	struct sigaction sa;

	owner = getpid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaddset(&sa.sa_mask, handled[i]);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
		struct sigaction old;
		int sig = handled[i];

		if (sigaction(sig, NULL, &old) < 0)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read the action of signal %d",
						  sig);
		/* an inherited "ignore" means the caller does not want us
		 * stopped by it (background job, nohup); SIGTERM is always
		 * honoured */
		if (sig != SIGTERM && old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sig, &sa, NULL) < 0)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot handle signal %d", sig);
	}
	return 0;
}

int eb_interrupted(void)
{
	return atomic_load_explicit(&received, memory_order_relaxed);
}

int eb_interrupt_check(struct eb_error **err)
{
	if (!eb_interrupted())
		return 0;
	return eb_error_set(err, EB_EINTR, "interrupted");
}

/* ---- the registry --------------------------------------------------------- */

void eb_interrupt_register(const char *path, int is_dir)
{
	size_t n = strlen(path);
	char *p = eb_xmalloc(n + 2);
	size_t start = (size_t)atomic_load(&hint) % EB_INTERRUPT_MAX_PATHS;

	p[0] = is_dir ? 'D' : 'F';
	memcpy(p + 1, path, n + 1);
	for (size_t k = 0; k < EB_INTERRUPT_MAX_PATHS; k++) {
		size_t i = (start + k) % EB_INTERRUPT_MAX_PATHS;
		char *expected = NULL;
		if (atomic_compare_exchange_strong(&slots[i], &expected, p)) {
			atomic_store(&hint, (int)((i + 1) % EB_INTERRUPT_MAX_PATHS));
			return;
		}
	}
	/* full: the owner's error path still removes it, a signal will not */
	free(p);
}

void eb_interrupt_unregister(const char *path)
{
	pthread_mutex_lock(&freeing);
	for (size_t i = 0; i < EB_INTERRUPT_MAX_PATHS; i++) {
		char *p = atomic_load(&slots[i]);
		if (!p || strcmp(p + 1, path) != 0)
			continue;
		if (atomic_compare_exchange_strong(&slots[i], &p, NULL)) {
			free(p);
			atomic_store(&hint, (int)i);
		}
		break;
	}
	pthread_mutex_unlock(&freeing);
}

void eb_interrupt_cleanup(void)
{
	pthread_mutex_lock(&freeing);
	for (size_t i = 0; i < EB_INTERRUPT_MAX_PATHS; i++) {
		char *p = atomic_exchange(&slots[i], NULL);
		if (!p)
			continue;
		if (p[0] == 'D')
			(void)eb_fs_remove_tree(p + 1, NULL);
		else
			(void)unlink(p + 1);
		free(p);
	}
	pthread_mutex_unlock(&freeing);
}

/* ---- leaving --------------------------------------------------------------- */

void eb_interrupt_exit(void)
{
	int sig = eb_interrupted();
	struct sigaction sa;
	sigset_t set;

	eb_interrupt_cleanup();
	fflush(NULL);
	if (!sig)
		exit(130);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	(void)raise(sig);
	exit(128 + sig);
}
