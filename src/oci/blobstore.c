/*
 * blobstore.c - the content-addressed blob cache: streaming writers that
 * hash, fsync and rename into <root>/blobs/sha256/<hex>, and readers that
 * re-hash and throw away anything that does not match its name.  A
 * writer's temp file is registered with util/interrupt while it exists,
 * and writes stop with -EB_EINTR once Ctrl-C (or SIGTERM) came, so a long
 * layer or download unwinds instead of finishing.  A writer holds an
 * flock(2) on its temp file, so that opening the store can tell the temp
 * files of a killed process (SIGKILL, a power cut) from live ones and
 * remove them.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/blobstore.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* Blobs are immutable once named; read-only files say so (containerd does
 * the same) and make an accidental in-place edit fail loudly. */
#define BLOB_MODE 0444
/* A temp file no process holds locked is left alone this long after its
 * last write: it may belong to a writer between mkostemp() and flock(). */
#define STALE_TEMP_SECONDS 60

struct eb_blobstore {
	char *root;
	char *blobdir; /* <root>/blobs/sha256 */
	char *tmpdir;  /* <root>/tmp */
};

struct eb_blob_writer {
	struct eb_blobstore *bs;
	int fd;
	char *tmp_path;
	struct eb_sha256 hash;
	uint64_t size;
};

/* mkdir -p; existing directories are fine. */
static int mkdir_p(const char *path, struct eb_error **err)
{
	eb_autofree char *p = eb_xstrdup(path);
	struct stat st;

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot create directory '%s'", p);
		*s = c;
		if (c == '\0')
			break;
	}
	if (stat(path, &st) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot access '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EIO, "'%s' is not a directory", path);
	return 0;
}

static char *default_root(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	/* The XDG base-directory spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/')
		return eb_path_join(xdg, "envbuild");
	if (home && home[0])
		return eb_xasprintf("%s/.cache/envbuild", home);
	return NULL;
}

/* Remove the blob temp files of writers that died without cleaning up
 * (SIGKILL, a crash, a power cut): old enough, and not locked by a live
 * writer.  Best effort and silent: a leftover only costs disk space. */
static void sweep_stale_temps(const char *tmpdir)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		int fd;

		if (strncmp(e->d_name, "blob.", 5) != 0)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    now - st.st_mtime > STALE_TEMP_SECONDS && flock(fd, LOCK_EX | LOCK_NB) == 0)
			(void)unlinkat(dirfd(d), e->d_name, 0);
		close(fd); /* drops the lock */
	}
	closedir(d);
}

int eb_blobstore_open(struct eb_blobstore **out, const char *root, struct eb_error **err)
{
	struct eb_blobstore *bs;
	char *r = root ? eb_xstrdup(root) : default_root();
	int rc;

	*out = NULL;
	if (!r)
		return eb_error_set(err, EB_EIO,
				    "cannot find a cache directory: neither XDG_CACHE_HOME nor HOME is set");
	bs = eb_xcalloc(1, sizeof(*bs));
	bs->root = r;
	bs->blobdir = eb_path_join(r, "blobs/sha256");
	bs->tmpdir = eb_path_join(r, "tmp");
	if ((rc = mkdir_p(bs->blobdir, err)) < 0 || (rc = mkdir_p(bs->tmpdir, err)) < 0) {
		eb_blobstore_free(bs);
		return rc;
	}
	sweep_stale_temps(bs->tmpdir);
	*out = bs;
	return 0;
}

void eb_blobstore_free(struct eb_blobstore *bs)
{
	if (!bs)
		return;
	free(bs->root);
	free(bs->blobdir);
	free(bs->tmpdir);
	free(bs);
}

const char *eb_blobstore_root(const struct eb_blobstore *bs)
{
	return bs->root;
}

/* Only sha256 is stored: it is the only algorithm envbuild writes, and the
 * check keeps a hostile digest string ("sha256:../../x") out of paths. */
static int sha256_digest(const char *digest)
{
	return digest && strncmp(digest, "sha256:", 7) == 0 && eb_digest_valid(digest);
}

char *eb_blobstore_path(const struct eb_blobstore *bs, const char *digest)
{
	if (!sha256_digest(digest))
		return NULL;
	return eb_path_join(bs->blobdir, eb_digest_hex(digest));
}

int eb_blobstore_has(const struct eb_blobstore *bs, const char *digest, int64_t size)
{
	eb_autofree char *path = eb_blobstore_path(bs, digest);
	struct stat st;

	if (!path || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return size < 0 || st.st_size == (off_t)size;
}

/* Hash an open blob, appending its bytes to out when out != NULL. */
static int hash_fd(int fd, const char *path, struct eb_buf *out, size_t max,
		   char got[EB_DIGEST_STR_LEN + 1], struct eb_error **err)
{
	struct eb_sha256 h;
	char chunk[1 << 16];
	size_t total = 0;

	eb_sha256_init(&h);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			eb_sha256_abort(&h);
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
		}
		if (n == 0)
			break;
		eb_sha256_update(&h, chunk, (size_t)n);
		total += (size_t)n;
		if (out) {
			if ((max && total > max) || eb_buf_add(out, chunk, (size_t)n) < 0) {
				eb_sha256_abort(&h);
				return eb_error_set(err, EB_ETOOBIG, "blob '%s' is larger than %zu bytes",
						    path, max);
			}
		}
	}
	eb_sha256_final(&h, got);
	return 0;
}

static int check_and_read(const struct eb_blobstore *bs, const char *digest, struct eb_buf *out,
			  size_t max, struct eb_error **err)
{
	eb_autofree char *path = eb_blobstore_path(bs, digest);
	char got[EB_DIGEST_STR_LEN + 1];
	size_t oldlen = out ? out->len : 0;
	int fd, rc;

	if (!path)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a sha256 digest", digest ? digest : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return eb_error_set(err, EB_ENOTFOUND, "blob '%s' is not in the cache", digest);
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", path);
	}
	rc = hash_fd(fd, path, out, max, got, err);
	close(fd);
	if (rc < 0) {
		if (out)
			eb_buf_truncate(out, oldlen);
		return rc;
	}
	if (strcmp(got, digest) != 0) {
		/* Never hand out a blob that is not what its name says; dropping
		 * it lets the next fetch or build put the right bytes back. */
		unlink(path);
		if (out)
			eb_buf_truncate(out, oldlen);
		return eb_error_set(err, EB_EINVALID,
				    "blob '%s' was corrupt (its content hashes to '%s') and was removed",
				    digest, got);
	}
	return 0;
}

int eb_blobstore_verify(const struct eb_blobstore *bs, const char *digest, struct eb_error **err)
{
	return check_and_read(bs, digest, NULL, 0, err);
}

int eb_blobstore_read(const struct eb_blobstore *bs, const char *digest, struct eb_buf *out,
		      size_t max, struct eb_error **err)
{
	return check_and_read(bs, digest, out, max, err);
}

int eb_blob_writer_open(struct eb_blob_writer **out, struct eb_blobstore *bs,
			struct eb_error **err)
{
	struct eb_blob_writer *w;
	char *tmp = eb_path_join(bs->tmpdir, "blob.XXXXXX");
	int fd;

	*out = NULL;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		return eb_error_set_errno(err, EB_EIO, e, "cannot create a temporary file in '%s'",
					  bs->tmpdir);
	}
	eb_interrupt_register(tmp, 0);
	/* held until the fd is closed (commit, abort or death): tells the
	 * sweep in eb_blobstore_open() that this temp file is alive */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	w = eb_xcalloc(1, sizeof(*w));
	w->bs = bs;
	w->fd = fd;
	w->tmp_path = tmp;
	eb_sha256_init(&w->hash);
	*out = w;
	return 0;
}

static int write_error(struct eb_blob_writer *w, int e, struct eb_error **err)
{
	int rc = eb_error_set_errno(err, EB_EIO, e, "cannot write blob to '%s'", w->bs->tmpdir);
	if (e == ENOSPC || e == EDQUOT)
		eb_error_hint(err, "free some space in '%s' or point XDG_CACHE_HOME elsewhere",
			      w->bs->root);
	return rc;
}

int eb_blob_writer_write(struct eb_blob_writer *w, const void *data, size_t len,
			 struct eb_error **err)
{
	const char *p = data;
	int rc;

	/* every layer, download and copy into the cache streams through
	 * here: the one place a long job notices Ctrl-C */
	if ((rc = eb_interrupt_check(err)) < 0)
		return rc;
	eb_sha256_update(&w->hash, data, len);
	w->size += len;
	while (len > 0) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return write_error(w, errno, err);
		}
		if (n == 0)
			return write_error(w, ENOSPC, err);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

uint64_t eb_blob_writer_size(const struct eb_blob_writer *w)
{
	return w->size;
}

void eb_blob_writer_abort(struct eb_blob_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	unlink(w->tmp_path);
	eb_interrupt_unregister(w->tmp_path);
	if (w->hash.ctx)
		eb_sha256_abort(&w->hash);
	free(w->tmp_path);
	free(w);
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* Best effort: the rename is already atomic; this only makes it
	 * durable across a power cut, which some filesystems cannot promise. */
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int eb_blob_writer_commit(struct eb_blob_writer *w, const char *expected,
			  char digest_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err)
{
	char got[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *dest = NULL;
	int rc = 0;

	eb_sha256_final(&w->hash, got);
	if (expected && strcmp(expected, got) != 0) {
		rc = eb_error_set(err, EB_EINVALID, "blob digest mismatch: expected '%s', got '%s'",
				  expected, got);
		goto fail;
	}
	if (fchmod(w->fd, BLOB_MODE) < 0 || fsync(w->fd) < 0) {
		rc = write_error(w, errno, err);
		goto fail;
	}
	if (close(w->fd) < 0) {
		w->fd = -1;
		rc = write_error(w, errno, err);
		goto fail;
	}
	w->fd = -1;
	dest = eb_blobstore_path(w->bs, got);
	/* Two writers of the same blob race harmlessly: both hold identical
	 * bytes and rename(2) replaces atomically, so readers never see a
	 * partial file whichever wins. */
	if (rename(w->tmp_path, dest) < 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot rename blob into '%s'", dest);
		goto fail;
	}
	eb_interrupt_unregister(w->tmp_path);
	fsync_dir(w->bs->blobdir);
	if (digest_out)
		memcpy(digest_out, got, sizeof(got));
	free(w->tmp_path);
	free(w);
	return 0;
fail:
	eb_blob_writer_abort(w);
	return rc;
}

int eb_blobstore_put(struct eb_blobstore *bs, const void *data, size_t len,
		     char digest_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err)
{
	struct eb_blob_writer *w;
	int rc;

	if ((rc = eb_blob_writer_open(&w, bs, err)) < 0)
		return rc;
	if ((rc = eb_blob_writer_write(w, data, len, err)) < 0) {
		eb_blob_writer_abort(w);
		return rc;
	}
	return eb_blob_writer_commit(w, NULL, digest_out, err);
}
