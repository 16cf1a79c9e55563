/*
 * localwheel.c - a wheel file of the project, verified into the blob
 * store (see localwheel.h).  The file is opened once, without following
 * a final symlink and without blocking, and what was opened is checked
 * to be a regular file inside the project before a byte is read.
 */
#define _GNU_SOURCE
#include "assemble/localwheel.h"

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

char *eb_localwheel_path(const char *spec_dir, const char *url)
{
	char *copy = eb_xstrndup(url, strcspn(url, "#")); /* "#sha256=" is no part of it */
	const char *u = copy;
	char real[PATH_MAX];
	char *norm;

	if (strncmp(u, "file://", 7) == 0)
		u += 7;
	else if (strncmp(u, "file:", 5) == 0)
		u += 5;
	u += strspn(u, " \t");
	if (u[0] == '/') {
		size_t ld;
		if (!realpath(spec_dir, real))
			goto none;
		ld = strlen(real);
		if (strncmp(u, real, ld) != 0 || u[ld] != '/')
			goto none;
		u += ld + 1;
	}
	norm = eb_path_normalize(u);
	free(copy);
	if (norm && (!*norm || strcmp(norm, ".") == 0)) {
		free(norm);
		return NULL;
	}
	return norm;
none:
	free(copy);
	return NULL;
}

static const char *wanted_sha256(const struct eb_requirement *req)
{
	if (req->url_hash_algo && strcmp(req->url_hash_algo, "sha256") == 0)
		return req->url_hash_hex;
	for (size_t i = 0; i < req->nhashes; i++)
		if (req->hashes[i].algo && strcmp(req->hashes[i].algo, "sha256") == 0)
			return req->hashes[i].hex;
	return NULL;
}

int eb_localwheel_fetch(const char *spec_dir, const struct eb_requirement *req,
			struct eb_blobstore *bs, char digest[EB_DIGEST_STR_LEN + 1],
			int64_t *size, char **rel_out, struct eb_error **err)
{
	const char *sha = wanted_sha256(req);
	char *rel = eb_localwheel_path(spec_dir, req->url), *path = NULL, *expected = NULL;
	char fdpath[64], real[PATH_MAX];
	struct eb_blob_writer *w = NULL;
	struct stat st;
	int fd = -1, r = 0, in;

	*rel_out = NULL;
	if (!rel)
		return eb_error_set(err, EB_EINVALID,
				    "local wheel '%s' is not inside the project directory", req->url);
	if (!sha) {
		r = eb_error_set(err, EB_EINVALID, "local wheel '%s' has no sha256", req->url);
		goto out;
	}
	path = eb_path_join(spec_dir, rel);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EINVALID, errno,
				       "cannot open local wheel '%s'", rel);
		if (errno == ELOOP)
			eb_error_hint(err, "the wheel is a symlink; name the file itself");
		goto out;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = eb_error_set(err, EB_EINVALID, "local wheel '%s' is not a regular file", rel);
		goto out;
	}
	if (!realpath(fdpath, real)) {
		r = eb_error_set_errno(err, EB_EIO, errno, "local wheel '%s'", rel);
		goto out;
	}
	in = eb_path_inside(real, spec_dir, err);
	if (in < 0) {
		r = in;
		goto out;
	}
	if (!in) {
		r = eb_error_set(err, EB_EINVALID,
				 "local wheel '%s' leaves the project directory through a symlink",
				 rel);
		goto out;
	}
	expected = eb_xasprintf("sha256:%s", sha);
	if ((r = eb_blob_writer_open(&w, bs, err)) < 0)
		goto out;
	for (;;) {
		char buf[65536];
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = eb_error_set_errno(err, EB_EIO, errno, "reading local wheel '%s'", rel);
			break;
		}
		if (n == 0)
			break;
		if ((r = eb_interrupt_check(err)) < 0 ||
		    (r = eb_blob_writer_write(w, buf, (size_t)n, err)) < 0)
			break;
	}
	if (r < 0) {
		eb_blob_writer_abort(w);
		goto out;
	}
	*size = (int64_t)eb_blob_writer_size(w);
	if ((r = eb_blob_writer_commit(w, expected, digest, err)) < 0) {
		eb_error_wrap(err, "local wheel '%s'", rel);
		goto out;
	}
	*rel_out = rel;
	rel = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(expected);
	free(path);
	free(rel);
	return r;
}
