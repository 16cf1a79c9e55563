/*
 * fs.c - bounded file reads, atomic (temp + fsync + rename) writes and
 * lexical path helpers.  An atomic write's temp file is registered with
 * util/interrupt while it exists, so Ctrl-C does not leave it behind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* 1 when real (a resolved path) is rootreal or below it. */
static int under(const char *real, const char *rootreal)
{
	size_t n = strlen(rootreal);

	if (strcmp(rootreal, "/") == 0)
		return 1;
	return strncmp(real, rootreal, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

int eb_path_inside(const char *path, const char *root, struct eb_error **err)
{
	char real[PATH_MAX], rootreal[PATH_MAX];

	if (!realpath(root, rootreal))
		return eb_error_set_errno(err, EB_EIO, errno, "cannot resolve '%s'", root);
	if (!realpath(path, real))
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot resolve '%s'", path);
	return under(real, rootreal);
}

int eb_fs_read_confined(struct eb_buf *out, const char *path, const char *root, size_t max,
			struct eb_error **err)
{
	char rootreal[PATH_MAX], real[PATH_MAX], link[64];
	struct stat st;
	ssize_t n;
	int fd, r;

	if (root && !realpath(root, rootreal))
		return eb_error_set_errno(err, EB_EIO, errno, "cannot resolve '%s'", root);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot open '%s'", path);
	if (fstat(fd, &st) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot stat '%s'", path);
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		r = eb_error_set(err, EB_EINVALID, "'%s' is not a regular file", path);
		goto done;
	}
	if (root) {
		/* the file actually opened, so a symlink swapped in after a
		 * check cannot win; realpath() where /proc is not mounted */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, real, sizeof(real) - 1);
		if (n >= 0)
			real[n] = '\0';
		else if (!realpath(path, real)) {
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot resolve '%s'", path);
			goto done;
		}
		if (!under(real, rootreal)) {
			r = eb_error_set(err, EB_EINVALID, "'%s' is outside the project directory",
					 path);
			goto done;
		}
	}
	/* blocking reads from here on: a regular file never blocks anyway */
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	{
		char chunk[65536];
		size_t total = 0;
		r = 0;
		for (;;) {
			ssize_t k = read(fd, chunk, sizeof(chunk));
			if (k < 0) {
				if (errno == EINTR)
					continue;
				r = eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
				goto done;
			}
			if (k == 0)
				break;
			total += (size_t)k;
			if (max && total > max) {
				r = eb_error_set(err, EB_ETOOBIG, "'%s' is larger than %zu bytes", path,
						 max);
				goto done;
			}
			if (eb_buf_add(out, chunk, (size_t)k) < 0) {
				r = eb_error_set(err, EB_ETOOBIG, "'%s' is too large", path);
				goto done;
			}
		}
	}
done:
	close(fd);
	return r;
}

int eb_fs_read_file(struct eb_buf *out, const char *path, size_t max, struct eb_error **err)
{
	int fd = 0;
	int own = 0;
	char chunk[65536];
	size_t total = 0;
	int r = 0;

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO,
						  errno, "cannot open '%s'", path);
		own = 1;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
			goto done;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (max && total > max) {
			r = eb_error_set(err, EB_ETOOBIG, "'%s' is larger than %zu bytes", path, max);
			goto done;
		}
		if (eb_buf_add(out, chunk, (size_t)n) < 0) {
			r = eb_error_set(err, EB_ETOOBIG, "'%s' is too large", path);
			goto done;
		}
	}
done:
	if (own)
		close(fd);
	return r;
}

static int write_replace(const char *path, const void *data, size_t len, int mode, int durable,
			 struct eb_error **err)
{
	eb_autofree char *dir = eb_path_dirname(path);
	eb_autofree char *tmp = eb_xasprintf("%s/.%s.tmp.XXXXXX", dir, eb_path_basename(path));
	const char *p = data;
	int fd, r = 0;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create a temporary file in '%s'",
					  dir);
	/* removed by main's cleanup if a signal ends the program first */
	eb_interrupt_register(tmp, 0);
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", path);
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, (mode_t)mode) < 0 || (durable && fsync(fd) < 0)) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", path);
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", path);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot rename into '%s'", path);
		goto fail;
	}
	eb_interrupt_unregister(tmp);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	eb_interrupt_unregister(tmp);
	return r;
}

int eb_fs_write_atomic(const char *path, const void *data, size_t len, int mode,
		       struct eb_error **err)
{
	return write_replace(path, data, len, mode, 1, err);
}

int eb_fs_write_replace(const char *path, const void *data, size_t len, int mode,
			struct eb_error **err)
{
	return write_replace(path, data, len, mode, 0, err);
}

int eb_fs_mkdir_p(const char *path, int mode, struct eb_error **err)
{
	eb_autofree char *p = eb_xstrdup(path);
	struct stat st;

	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, (mode_t)mode) < 0 && errno != EEXIST)
				return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", p);
			*s = c;
			if (!c)
				break;
		}
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EIO, "'%s' is not a directory", path);
	return 0;
}

char *eb_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (b[0] == '/' || la == 0)
		return eb_xstrdup(b);
	if (a[la - 1] == '/')
		return eb_xasprintf("%s%s", a, b);
	return eb_xasprintf("%s/%s", a, b);
}

char *eb_path_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return eb_xstrdup(".");
	while (slash > path && slash[-1] == '/')
		slash--;
	if (slash == path)
		return eb_xstrdup("/");
	return eb_xstrndup(path, (size_t)(slash - path));
}

const char *eb_path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

char *eb_path_normalize(const char *path)
{
	size_t len = strlen(path);
	char *out = eb_xmalloc(len + 2);
	size_t o = 0;
	int abs = path[0] == '/';
	const char *p = path;

	if (abs)
		out[o++] = '/';
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (n == 1 && s[0] == '.')
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			size_t floor = abs ? 1 : 0;
			if (o == floor) {
				if (abs)
					continue; /* "/.." is "/" */
				free(out);
				return NULL;
			}
			/* drop the last component */
			while (o > floor && out[o - 1] != '/')
				o--;
			if (o > floor)
				o--;
			continue;
		}
		if (o > (abs ? 1u : 0u))
			out[o++] = '/';
		memcpy(out + o, s, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return out;
}
