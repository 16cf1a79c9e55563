/*
 * fuzz.h - helpers shared by the libFuzzer targets in fuzz/: NUL-terminated
 * copies of the input, splitting one input into several parts, a private
 * temp directory for parsers that read files, and an invariant check that
 * aborts (so libFuzzer reports it as a crash).
 *
 * Every target is built with -fsanitize=fuzzer,address,undefined by
 * fuzz/build.sh; see fuzz/README.md.
 */
#ifndef EB_FUZZ_H
#define EB_FUZZ_H

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant of the parser under test does not hold: report and abort,
 * which libFuzzer records as a crash with the input that caused it. */
#define EB_FUZZ_ASSERT(cond)                                                          \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,    \
				__LINE__, #cond);                                     \
			abort();                                                      \
		}                                                                     \
	} while (0)

/* The input as a C string, cut at its first NUL (the parsers that take a
 * C string never see the bytes after it anyway); caller frees. */
static inline char *eb_fuzz_cstr(const uint8_t *data, size_t size)
{
	return eb_xstrndup((const char *)data, size);
}

/* The input copied to the heap with exactly `size` bytes (no terminator),
 * so ASan catches a parser that reads one byte past a (data, len) pair. */
static inline char *eb_fuzz_exact(const uint8_t *data, size_t size)
{
	char *p = eb_xmalloc(size ? size : 1);
	if (size)
		memcpy(p, data, size);
	return p;
}

/* Split data at the separator line "\n%%\n" into at most `max` parts;
 * parts[i]/lens[i] point into data.  Returns the number of parts. */
static inline size_t eb_fuzz_split(const uint8_t *data, size_t size, const char **parts,
				   size_t *lens, size_t max)
{
	static const char sep[] = "\n%%\n";
	const char *p = (const char *)data, *end = p + size;
	size_t n = 0;

	while (n + 1 < max) {
		const char *s = memmem(p, (size_t)(end - p), sep, sizeof(sep) - 1);
		if (!s)
			break;
		parts[n] = p;
		lens[n++] = (size_t)(s - p) + 1; /* keep the line's newline */
		p = s + sizeof(sep) - 1;
	}
	parts[n] = p;
	lens[n++] = (size_t)(end - p);
	return n;
}

/* A private directory for the process, removed at exit. */
static char eb_fuzz_dir_[4096];

static inline void eb_fuzz_dir_cleanup_(void)
{
	if (eb_fuzz_dir_[0])
		(void)eb_fs_remove_tree(eb_fuzz_dir_, NULL);
}

static inline const char *eb_fuzz_dir(void)
{
	if (!eb_fuzz_dir_[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(eb_fuzz_dir_, sizeof(eb_fuzz_dir_), "%s/envbuild-fuzz.XXXXXX",
			 t && t[0] ? t : "/tmp");
		if (!mkdtemp(eb_fuzz_dir_)) {
			perror("mkdtemp");
			abort();
		}
		atexit(eb_fuzz_dir_cleanup_);
	}
	return eb_fuzz_dir_;
}

/* Write data to <fuzz dir>/name (replacing it); returns the path (static
 * storage per call site is not needed: caller frees). */
static inline char *eb_fuzz_write(const char *name, const void *data, size_t len)
{
	char *path = eb_path_join(eb_fuzz_dir(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;

	if (fd < 0) {
		perror(path);
		abort();
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			perror(path);
			abort();
		}
		p += n;
		len -= (size_t)n;
	}
	close(fd);
	return path;
}

#endif
