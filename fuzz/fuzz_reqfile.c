/*
 * fuzz_reqfile.c - libFuzzer target for requirements files: the input is
 * split at "\n%%\n" lines into req.txt, a.txt and b.txt in a private
 * directory (so -r/-c includes of each other, cycles and depth are
 * reachable), then eb_reqfile_load + eb_reqfile_check run on req.txt.
 *
 * fuzz/build.sh links this target with -Wl,--wrap=open,--wrap=open64: an
 * include may name any path ("-r /dev/zero", "-r /dev/stdin"), so opens
 * outside the private directory fail with ENOENT instead of reading the
 * machine's files or blocking.
 */
#include "fuzz.h"

#include <limits.h>
#include <stdarg.h>

#include "pin/reqfile.h"
#include "util/diag.h"

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);

/* 1 when path resolves to a file inside the private directory. */
static int allowed(const char *path)
{
	char real[PATH_MAX];
	size_t n = strlen(eb_fuzz_dir());

	if (!realpath(path, real))
		return 0;
	return strncmp(real, eb_fuzz_dir(), n) == 0 && real[n] == '/';
}

static int open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (!(flags & O_CREAT) && !allowed(path)) {
		errno = ENOENT;
		return -1;
	}
	return __real_open(path, flags, mode);
}

int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (!(flags & O_CREAT) && !allowed(path)) {
		errno = ENOENT;
		return -1;
	}
	return __real_open64(path, flags, mode);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "req.txt", "a.txt", "b.txt" };
	const char *parts[3];
	size_t lens[3], n;
	char *paths[3] = { NULL, NULL, NULL };
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	struct eb_reqfile *rf = NULL;

	n = eb_fuzz_split(data, size, parts, lens, 3);
	for (size_t i = 0; i < 3; i++) {
		if (i < n) {
			paths[i] = eb_fuzz_write(names[i], parts[i], lens[i]);
		} else {
			paths[i] = eb_path_join(eb_fuzz_dir(), names[i]);
			unlink(paths[i]);
		}
	}
	if (eb_reqfile_load(&rf, paths[0], &diags, &err) == 0) {
		EB_FUZZ_ASSERT(rf != NULL);
		eb_reqfile_check(rf, &diags);
		for (size_t i = 0; i < eb_reqfile_count(rf); i++)
			EB_FUZZ_ASSERT(eb_reqfile_get(rf, i) != NULL);
		EB_FUZZ_ASSERT(eb_reqfile_nfiles(rf) >= 1);
		(void)eb_reqfile_options(rf);
	} else {
		EB_FUZZ_ASSERT(rf == NULL && err != NULL);
	}
	eb_diag_list_sort(&diags);
	eb_reqfile_free(rf);
	eb_diag_list_release(&diags);
	eb_error_free(err);
	for (size_t i = 0; i < 3; i++)
		free(paths[i]);
	return 0;
}
