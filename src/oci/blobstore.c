/*
 * blobstore.c - the content-addressed blob cache: streaming writers that
 * hash, fsync and rename into <root>/blobs/sha256/<hex>, and readers that
 * re-hash and throw away anything that does not match its name.  A
 * writer's temp file is registered with util/interrupt while it exists,
 * and writes stop with -EB_EINTR once Ctrl-C (or SIGTERM) came, so a long
 * layer or download unwinds instead of finishing.  A writer holds an
 * flock(2) on its temp file (a staging directory, on the directory), so
 * that opening the store can tell the temporaries of a killed process
 * (SIGKILL, a power cut) from live ones and remove them.
 *
 * A cached blob is trusted by name only after its bytes were hashed: once
 * per process, or once for as long as the file stays the same file.  When
 * a blob is hashed (or written) a stamp, <root>/stamps/<hex>, records its
 * (device, inode, size, mtime, ctime); the first eb_blobstore_has() of a
 * digest in a process trusts the blob when the stamp still matches, and
 * re-hashes it otherwise (a blob under 64 KiB has no stamp: it is always
 * re-hashed, which costs less than a stamp file), evicting it on a mismatch, so a poisoned blob is
 * fetched or rebuilt instead of reused.  Any write to a blob, chmod,
 * rename or replacement moves its ctime, which no one can set back, so a
 * warm rebuild costs a stat and a small read per blob instead of reading
 * every layer.  What a stamp cannot see is media corruption that bypasses
 * the file system: `envbuild cache verify` re-hashes everything.  Outputs get copies (or reflinks) of blobs, never
 * hard links, so editing an output cannot change the cache.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/blobstore.h"
#include "oci/cache.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* Blobs are immutable once named; read-only files say so (containerd does
 * the same) and make an accidental in-place edit fail loudly. */
#define BLOB_MODE 0444
/* A temp file no process holds locked is left alone this long after its
 * last write: it may belong to a writer between mkostemp() and flock(). */
#define STALE_TEMP_SECONDS 60

/* Digests whose bytes this process hashed (sorted, under mu): verified
 * once, trusted by name after that.  Kept apart from struct eb_blobstore
 * so that the const readers can still record what they verified. */
struct verified {
	pthread_mutex_t mu;
	char **v;
	size_t n, cap;
};

struct backend {
	const struct eb_cache_backend *ops;
	void *self;
};

struct eb_blobstore {
	char *root;
	char *blobdir; /* <root>/blobs/sha256 */
	char *tmpdir;  /* <root>/tmp */
	char *stampdir; /* <root>/stamps: <hex> -> the stat of the blob when hashed */
	struct verified *ok;
	struct unsynced *later; /* committed blobs not yet known durable */
	struct backend *backends; /* behind the local directory (oci/cache.h) */
	int lazy; /* eb_cache_set_lazy() */
	size_t nbackends;
	eb_cache_shared_fn shared_fn; /* eb_cache_on_shared() */
	eb_cache_layer_check_fn layer_check; /* eb_cache_set_layer_check() */
	void *shared_ud;
	pthread_mutex_t shared_mu;
};

/* Blobs renamed into the store whose bytes may not be on disk yet.  One
 * syncfs() for all of them (eb_blobstore_sync) replaces an fsync of each
 * file and of the directory: a build writes thousands of small blobs (a
 * .pyc each), and those waits were a quarter of a 3 GB build's wall time.
 * A blob is stamped (trusted by its stat alone) only after it is durable,
 * so a power cut can lose one, or leave it torn, but never have it taken
 * for sound: without a stamp it is hashed before use, and a bad one is
 * evicted and rebuilt. */
struct unsynced {
	pthread_mutex_t mu;
	struct unsynced_blob {
		char digest[EB_DIGEST_STR_LEN + 1];
		struct stat st; /* when it was committed, as it was hashed */
	} *v;
	size_t n, cap;
};

/* Past this many, the next commit syncs: the list stays small and a long
 * build's blobs become durable as it goes. */
#define UNSYNCED_MAX 4096

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

/* Temporaries the store hands out, by name prefix: blob writers' files
 * and staging directories (eb_blobstore_mkdtemp). */
static int temp_name(const char *name)
{
	return strncmp(name, "blob.", 5) == 0 || strncmp(name, "pystage-", 8) == 0 ||
	       strncmp(name, "stage-", 6) == 0;
}

/* Remove the temporaries of writers that died without cleaning up
 * (SIGKILL, a crash, a power cut): old enough, and not locked by a live
 * writer (the lock goes with the process, whatever killed it).  Best
 * effort and silent: a leftover only costs disk space. */
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

		if (!temp_name(e->d_name))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
		    now - st.st_mtime > STALE_TEMP_SECONDS && flock(fd, LOCK_EX | LOCK_NB) == 0) {
			if (S_ISDIR(st.st_mode)) {
				eb_autofree char *path = eb_path_join(tmpdir, e->d_name);
				(void)eb_fs_remove_tree(path, NULL);
			} else {
				(void)unlinkat(dirfd(d), e->d_name, 0);
			}
		}
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
	bs->stampdir = eb_path_join(r, "stamps");
	bs->ok = eb_xcalloc(1, sizeof(*bs->ok));
	pthread_mutex_init(&bs->ok->mu, NULL);
	bs->later = eb_xcalloc(1, sizeof(*bs->later));
	pthread_mutex_init(&bs->later->mu, NULL);
	pthread_mutex_init(&bs->shared_mu, NULL);
	if ((rc = mkdir_p(bs->blobdir, err)) < 0 || (rc = mkdir_p(bs->tmpdir, err)) < 0 ||
	    (rc = mkdir_p(bs->stampdir, err)) < 0) {
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
	/* first: a backend may still write through the store (a registry
	 * cache pushes its queued records when freed) */
	for (size_t i = 0; i < bs->nbackends; i++)
		if (bs->backends[i].ops->free)
			bs->backends[i].ops->free(bs->backends[i].self);
	free(bs->backends);
	if (bs->later) {
		eb_blobstore_sync(bs);
		free(bs->later->v);
		pthread_mutex_destroy(&bs->later->mu);
		free(bs->later);
	}
	free(bs->root);
	free(bs->blobdir);
	free(bs->tmpdir);
	free(bs->stampdir);
	pthread_mutex_destroy(&bs->shared_mu);
	if (bs->ok) {
		for (size_t i = 0; i < bs->ok->n; i++)
			free(bs->ok->v[i]);
		free(bs->ok->v);
		pthread_mutex_destroy(&bs->ok->mu);
		free(bs->ok);
	}
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

/* Position of digest in the sorted verified list (where it would go). */
static size_t verified_pos(const struct verified *ok, const char *digest, int *found)
{
	size_t lo = 0, hi = ok->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ok->v[mid], digest);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int verified_has(const struct eb_blobstore *bs, const char *digest)
{
	int found;

	pthread_mutex_lock(&bs->ok->mu);
	(void)verified_pos(bs->ok, digest, &found);
	pthread_mutex_unlock(&bs->ok->mu);
	return found;
}

static void verified_add(const struct eb_blobstore *bs, const char *digest)
{
	struct verified *ok = bs->ok;
	size_t pos;
	int found;

	pthread_mutex_lock(&ok->mu);
	pos = verified_pos(ok, digest, &found);
	if (!found) {
		if (ok->n == ok->cap) {
			ok->cap = ok->cap ? 2 * ok->cap : 64;
			ok->v = eb_xreallocarray(ok->v, ok->cap, sizeof(*ok->v));
		}
		memmove(ok->v + pos + 1, ok->v + pos, (ok->n - pos) * sizeof(*ok->v));
		ok->v[pos] = eb_xstrdup(digest);
		ok->n++;
	}
	pthread_mutex_unlock(&ok->mu);
}

static void verified_forget(const struct eb_blobstore *bs, const char *digest)
{
	struct verified *ok = bs->ok;
	size_t pos;
	int found;

	pthread_mutex_lock(&ok->mu);
	pos = verified_pos(ok, digest, &found);
	if (found) {
		free(ok->v[pos]);
		memmove(ok->v + pos, ok->v + pos + 1, (ok->n - pos - 1) * sizeof(*ok->v));
		ok->n--;
	}
	pthread_mutex_unlock(&ok->mu);
}

static int check_and_read(const struct eb_blobstore *bs, const char *digest, struct eb_buf *out,
			  size_t max, struct eb_error **err);

/* ---- stamps: hashed once for as long as the file stays the same ------- */

/* A blob smaller than this gets no stamp and is re-hashed on its first use
 * in a process: hashing 64 KiB takes ~40 us, about what reading a stamp
 * takes, while making the stamp costs a file create (and its remove with
 * the blob), ~0.5 ms on an ext4 that has deleted many files lately; a
 * torch-sized install caches 12k .pyc blobs of ~16 KiB. */
#define STAMP_MIN_SIZE (64 << 10)

/* NULL for a malformed digest (eb_blobstore_path() refuses it too). */
static char *stamp_path(const struct eb_blobstore *bs, const char *digest)
{
	eb_autofree char *blob = eb_blobstore_path(bs, digest);

	if (!blob)
		return NULL;
	return eb_path_join(bs->stampdir, digest + 7);
}

static int stamp_format(const struct stat *st, char *out, size_t n)
{
	return snprintf(out, n, "envbuild-stamp 1 %ju %ju %jd %jd.%09ld %jd.%09ld\n",
			(uintmax_t)st->st_dev, (uintmax_t)st->st_ino, (intmax_t)st->st_size,
			(intmax_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
			(intmax_t)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

/* 1 when the stamp says this very file (st) was hashed to its name. */
static int stamp_matches(const struct eb_blobstore *bs, const char *digest, const struct stat *st)
{
	eb_autofree char *p = stamp_path(bs, digest);
	char want[160], got[161];
	eb_autoclose int fd = -1;
	ssize_t n;
	int len;

	if (st->st_size < STAMP_MIN_SIZE || !p ||
	    (fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;
	n = read(fd, got, sizeof(got) - 1);
	len = stamp_format(st, want, sizeof(want));
	return n == len && memcmp(got, want, (size_t)len) == 0;
}

/* Record that the blob whose stat is a hashed to its name; best effort
 * (no stamp only costs a re-hash). */
static void stamp_write(const struct eb_blobstore *bs, const char *digest, const struct stat *a)
{
	eb_autofree char *p = stamp_path(bs, digest);
	eb_autofree char *tmp = eb_path_join(bs->tmpdir, "stamp.XXXXXX");
	char line[160];
	int tfd, len;

	if (!p || a->st_size < STAMP_MIN_SIZE)
		return;
	len = stamp_format(a, line, sizeof(line));
	tfd = mkostemp(tmp, O_CLOEXEC);
	if (tfd < 0)
		return;
	if (write(tfd, line, (size_t)len) != len || close(tfd) < 0 || rename(tmp, p) < 0)
		(void)unlink(tmp);
}

/* The same for the file open as fd, when it is still the blob at path. */
static void stamp_record(const struct eb_blobstore *bs, const char *digest, const char *path,
			 int fd)
{
	struct stat a, b;

	/* the file hashed must still be the one named (not replaced since) */
	if (fstat(fd, &a) < 0 || lstat(path, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return;
	stamp_write(bs, digest, &a);
}

static void stamp_forget(const struct eb_blobstore *bs, const char *digest)
{
	eb_autofree char *p = stamp_path(bs, digest);

	if (p)
		(void)unlink(p);
}

/* Remove a bad blob, unless another writer has renamed a new file into
 * its place since fd was opened (that one was hashed as it was written). */
static void evict(const struct eb_blobstore *bs, const char *digest, const char *path, int fd)
{
	struct stat a, b;

	if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		(void)unlink(path);
	stamp_forget(bs, digest);
	verified_forget(bs, digest);
}

/* A use, for `cache prune` (also where the mount does not record reads,
 * noatime): at most hourly, as relatime does, because touching the atime
 * moves the ctime and with it the stamp. */
#define USE_GRANULARITY 3600

/* Record a use of the open blob fd (st: its stat) for `cache prune`, at
 * most every USE_GRANULARITY seconds; a stamp the touch voided (it moves
 * the ctime) is recorded again when the file is otherwise the same. */
static void note_use(const struct eb_blobstore *bs, const char *digest, const char *path, int fd,
		     const struct stat *st)
{
	const struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	struct stat after;
	int stamped;

	if (time(NULL) - st->st_atime <= USE_GRANULARITY)
		return;
	stamped = stamp_matches(bs, digest, st);
	/* re-stamp only what the touch changed: same file, size, mtime */
	if (futimens(fd, ts) == 0 && stamped && fstat(fd, &after) == 0 &&
	    after.st_ino == st->st_ino && after.st_size == st->st_size &&
	    after.st_mtim.tv_sec == st->st_mtim.tv_sec && after.st_mtim.tv_nsec == st->st_mtim.tv_nsec)
		stamp_record(bs, digest, path, fd);
}

/* The blob's file open for reading when it is a regular file of the
 * expected size (size < 0: any), else -1. */
static int open_sized(const char *path, int64_t size, struct stat *st)
{
	int fd;

	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
	    (size >= 0 && st->st_size != (off_t)size)) {
		close(fd);
		return -1;
	}
	return fd;
}

int eb_blobstore_present(const struct eb_blobstore *bs, const char *digest, int64_t size)
{
	eb_autofree char *path = eb_blobstore_path(bs, digest);
	struct stat st;
	eb_autoclose int fd = open_sized(path, size, &st);

	if (fd < 0)
		return 0;
	note_use(bs, digest, path, fd, &st);
	return 1;
}

int eb_blobstore_has(const struct eb_blobstore *bs, const char *digest, int64_t size)
{
	eb_autofree char *path = eb_blobstore_path(bs, digest);
	struct stat st;
	eb_autoclose int fd = open_sized(path, size, &st);

	if (fd < 0)
		return 0;
	if (verified_has(bs, digest))
		return 1;
	/* first use in this process: the bytes must match the name, known
	 * from the stamp when the file is the one last hashed, else hashed
	 * now (a mismatch evicts the blob, and the caller fetches or
	 * rebuilds it) */
	if (stamp_matches(bs, digest, &st))
		verified_add(bs, digest);
	else if (check_and_read(bs, digest, NULL, 0, NULL) < 0)
		return 0;
	note_use(bs, digest, path, fd, &st);
	return 1;
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
	struct stat before, after;
	int fd, rc;

	if (!path)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a sha256 digest", digest ? digest : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return eb_error_set(err, EB_ENOTFOUND, "blob '%s' is not in the cache", digest);
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", path);
	}
	if (fstat(fd, &before) < 0)
		before.st_ino = 0;
	rc = hash_fd(fd, path, out, max, got, err);
	if (rc < 0) {
		close(fd);
		if (out)
			eb_buf_truncate(out, oldlen);
		return rc;
	}
	if (strcmp(got, digest) != 0) {
		/* Never hand out a blob that is not what its name says; dropping
		 * it lets the next fetch or build put the right bytes back. */
		evict(bs, digest, path, fd);
		close(fd);
		if (out)
			eb_buf_truncate(out, oldlen);
		return eb_error_set(err, EB_EINVALID,
				    "blob '%s' was corrupt (its content hashes to '%s') and was removed",
				    digest, got);
	}
	/* stamp what was hashed, unless it changed while being read */
	if (before.st_ino && fstat(fd, &after) == 0 && after.st_ino == before.st_ino &&
	    after.st_size == before.st_size &&
	    after.st_ctim.tv_sec == before.st_ctim.tv_sec &&
	    after.st_ctim.tv_nsec == before.st_ctim.tv_nsec)
		stamp_record(bs, digest, path, fd);
	close(fd);
	verified_add(bs, digest);
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

void eb_blobstore_sync(struct eb_blobstore *bs)
{
	struct unsynced *u = bs->later;
	struct unsynced_blob *v;
	size_t n;
	int fd;

	pthread_mutex_lock(&u->mu);
	v = u->v;
	n = u->n;
	u->v = NULL;
	u->n = u->cap = 0;
	pthread_mutex_unlock(&u->mu);
	if (!n)
		return;
	fd = open(bs->blobdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* not durable (no syncfs, or it failed): left unstamped, so hashed
	 * again when next used */
	if (fd >= 0 && syncfs(fd) == 0) {
		for (size_t i = 0; i < n; i++) {
			eb_autofree char *path = eb_blobstore_path(bs, v[i].digest);
			char a[160], b[160];
			struct stat st;
			/* still the file this store wrote and hashed, unchanged
			 * since (the stamp's own fields) */
			if (path && lstat(path, &st) == 0 &&
			    stamp_format(&st, a, sizeof(a)) == stamp_format(&v[i].st, b, sizeof(b)) &&
			    strcmp(a, b) == 0)
				stamp_write(bs, v[i].digest, &v[i].st);
		}
	}
	if (fd >= 0)
		close(fd);
	free(v);
}

static void unsynced_add(struct eb_blobstore *bs, const char *digest, int fd)
{
	struct unsynced *u = bs->later;
	struct stat st;
	int full;

	if (fstat(fd, &st) < 0)
		return;
	pthread_mutex_lock(&u->mu);
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 64;
		u->v = eb_xreallocarray(u->v, u->cap, sizeof(*u->v));
	}
	memcpy(u->v[u->n].digest, digest, sizeof(u->v[u->n].digest));
	u->v[u->n].st = st;
	full = ++u->n >= UNSYNCED_MAX;
	pthread_mutex_unlock(&u->mu);
	if (full)
		eb_blobstore_sync(bs);
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
	if (fchmod(w->fd, BLOB_MODE) < 0) {
		rc = write_error(w, errno, err);
		goto fail;
	}
	/* writeback starts now; durability waits for eb_blobstore_sync() */
	(void)sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	dest = eb_blobstore_path(w->bs, got);
	/* Two writers of the same blob race harmlessly: both hold identical
	 * bytes and rename(2) replaces atomically, so readers never see a
	 * partial file whichever wins. */
	if (rename(w->tmp_path, dest) < 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot rename blob into '%s'", dest);
		goto fail;
	}
	eb_interrupt_unregister(w->tmp_path);
	verified_add(w->bs, got); /* hashed as it was written */
	unsynced_add(w->bs, got, w->fd);
	if (close(w->fd) < 0) {
		w->fd = -1;
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot write blob '%s'", dest);
		free(w->tmp_path);
		free(w);
		return rc;
	}
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
	char dg[EB_DIGEST_STR_LEN + 1];
	int rc;

	/* A document every build writes again (a config, a manifest) is
	 * usually there already: a sound copy is kept rather than written,
	 * fsynced and renamed over again (eb_blobstore_has() checks it, and
	 * evicts a bad one, which is then written afresh). */
	eb_sha256_digest(data, len, dg);
	if (eb_blobstore_has(bs, dg, (int64_t)len)) {
		if (digest_out)
			memcpy(digest_out, dg, sizeof(dg));
		return 0;
	}
	if ((rc = eb_blob_writer_open(&w, bs, err)) < 0)
		return rc;
	if ((rc = eb_blob_writer_write(w, data, len, err)) < 0) {
		eb_blob_writer_abort(w);
		return rc;
	}
	return eb_blob_writer_commit(w, NULL, digest_out, err);
}

/* ---- outputs: copies or reflinks, verified ----------------------------- */

/* Copy in to out (out < 0: only read), hashing into got unless it is
 * NULL. */
static int hash_and_copy(int in, int out, const char *src, const char *dst,
			 char got[EB_DIGEST_STR_LEN + 1], uint64_t *size, struct eb_error **err)
{
	struct eb_sha256 h;
	eb_autofree char *buf = eb_xmalloc(1 << 16);

	*size = 0;
	if (got)
		eb_sha256_init(&h);
	for (;;) {
		ssize_t n = read(in, buf, 1 << 16);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (got)
				eb_sha256_abort(&h);
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", src);
		}
		if (n == 0)
			break;
		if (got)
			eb_sha256_update(&h, buf, (size_t)n);
		*size += (uint64_t)n;
		for (ssize_t off = 0; out >= 0 && off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				if (got)
					eb_sha256_abort(&h);
				return eb_error_set_errno(err, EB_EIO, w < 0 ? errno : ENOSPC,
							  "cannot write '%s'", dst);
			}
			off += w;
		}
	}
	if (got)
		eb_sha256_final(&h, got);
	return 0;
}

/* n bytes of in to out by copy_file_range(2) (no pass through user
 * space); hash_and_copy() where the kernel cannot (another file system
 * type, an old kernel). */
static int kernel_copy(int in, int out, off_t n, const char *src, const char *dst,
		       uint64_t *size, struct eb_error **err)
{
	*size = 0;
	while ((off_t)*size < n) {
		ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)(n - (off_t)*size), 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && *size == 0 &&
		    (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
			return hash_and_copy(in, out, src, dst, NULL, size, err);
		if (k < 0)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot copy '%s' to '%s'", src,
						  dst);
		if (k == 0)
			return eb_error_set(err, EB_EIO, "'%s' shrank while copied to '%s'", src, dst);
		*size += (uint64_t)k;
	}
	return 0;
}

int eb_blobstore_export(const struct eb_blobstore *bs, const char *digest, int64_t size,
			const char *dst, struct eb_error **err)
{
	eb_autofree char *src = eb_blobstore_path(bs, digest);
	eb_autoclose int in = -1;
	eb_autoclose int out = -1;
	char got[EB_DIGEST_STR_LEN + 1];
	uint64_t copied = 0;
	int cloned = 0, r;
	struct stat st;

	if (!src)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a sha256 digest", digest ? digest : "");
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "blob '%s' is not in the blob store", digest);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || (size >= 0 && st.st_size != (off_t)size))
		return eb_error_set(err, EB_EINVALID, "blob '%s' in the blob store is not the %" PRId64
				    " bytes its descriptor says", digest, size);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", dst);
#ifdef FICLONE
	/* a reflink shares extents copy-on-write: as cheap as a hard link,
	 * but writing to one file never changes the other */
	cloned = ioctl(out, FICLONE, in) == 0;
#endif
	if (verified_has(bs, digest)) {
		/* hashed once by this run already (eb_blobstore_has() on reuse,
		 * or as it was written): one pass per blob and run, however
		 * many outputs take it, and the kernel copies */
		memcpy(got, digest, sizeof(got));
		if (!cloned && (r = kernel_copy(in, out, st.st_size, src, dst, &copied, err)) < 0)
			goto fail;
	} else {
		r = hash_and_copy(in, cloned ? -1 : out, src, dst, got, &copied, err);
		if (r < 0)
			goto fail;
	}
	if (strcmp(got, digest) != 0) {
		evict(bs, digest, src, in);
		r = eb_error_set(err, EB_EINVALID,
				 "blob '%s' was corrupt in the cache (its content hashes to '%s') and "
				 "was removed", digest, got);
		eb_error_hint(err, "run the command again to rebuild or fetch it");
		goto fail;
	}
	verified_add(bs, digest);
	/* durable later, by the caller's one sync for all the files it
	 * exports (a layout's syncfs): start the write-back now, so the disk
	 * works while the next blob is copied */
	(void)sync_file_range(out, 0, 0, SYNC_FILE_RANGE_WRITE);
	return 0;
fail:
	unlink(dst);
	return r;
}

/* ---- staging directories ----------------------------------------------- */

int eb_blobstore_mkdtemp(const struct eb_blobstore *bs, const char *prefix, char **path_out,
			 int *lock_fd, struct eb_error **err)
{
	char *p = eb_xasprintf("%s/%sXXXXXX", bs->tmpdir, prefix);
	int fd;

	*path_out = NULL;
	*lock_fd = -1;
	if (!mkdtemp(p)) {
		int e = errno;
		free(p);
		return eb_error_set_errno(err, EB_EIO, e, "cannot create a staging directory in '%s'",
					  bs->tmpdir);
	}
	/* the lock tells the sweep this directory is alive; it goes with the
	 * process, whatever ends it */
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		(void)flock(fd, LOCK_EX | LOCK_NB);
	*path_out = p;
	*lock_fd = fd;
	return 0;
}

/* ---- whole-store maintenance ------------------------------------------- */

struct blob_ent {
	char *name;
	time_t atime; /* last use: the later of access and modification */
	uint64_t size;
};

static int cmp_age(const void *a, const void *b)
{
	const struct blob_ent *x = a, *y = b;

	if (x->atime != y->atime)
		return x->atime < y->atime ? -1 : 1;
	return strcmp(x->name, y->name);
}

static size_t list_blobs(const struct eb_blobstore *bs, struct blob_ent **out)
{
	DIR *d = opendir(bs->blobdir);
	struct dirent *e;
	struct blob_ent *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		eb_autofree char *dg = eb_xasprintf("sha256:%s", e->d_name);

		if (!sha256_digest(dg) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = eb_xreallocarray(v, cap, sizeof(*v));
		}
		v[n].name = eb_steal_ptr(&dg);
		v[n].atime = st.st_atime > st.st_mtime ? st.st_atime : st.st_mtime;
		v[n].size = (uint64_t)st.st_size;
		n++;
	}
	closedir(d);
	eb_sort(v, n, sizeof(*v), cmp_age);
	*out = v;
	return n;
}

int eb_blobstore_verify_all(const struct eb_blobstore *bs, eb_blobstore_visit_fn fn, void *ud,
			    struct eb_error **err)
{
	struct blob_ent *v;
	size_t n = list_blobs(bs, &v);
	int bad = 0, r = 0;

	for (size_t i = 0; i < n; i++) {
		struct eb_error *e = NULL;
		r = eb_interrupt_check(err);
		if (r < 0)
			break;
		r = check_and_read(bs, v[i].name, NULL, 0, &e);
		if (r == -EB_EINVALID) {
			bad++;
			if (fn)
				fn(ud, v[i].name, v[i].size, e->msg);
			r = 0;
		} else if (r == -EB_ENOTFOUND) {
			r = 0; /* removed meanwhile (a prune, another verify) */
		} else if (r < 0) {
			*err = e;
			e = NULL;
		}
		eb_error_free(e);
		if (r < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return r < 0 ? r : bad;
}

int eb_blobstore_prune(const struct eb_blobstore *bs, const struct eb_prune_options *po,
		       eb_blobstore_visit_fn fn, void *ud, struct eb_prune_result *res,
		       struct eb_error **err)
{
	struct blob_ent *v;
	size_t n = list_blobs(bs, &v);
	uint64_t total = 0;
	time_t now = time(NULL);
	int r = 0;

	memset(res, 0, sizeof(*res));
	sweep_stale_temps(bs->tmpdir);
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	/* oldest first: age, then size down to the cap */
	for (size_t i = 0; i < n; i++) {
		int old = po->older_than >= 0 && now - v[i].atime > po->older_than;
		int over = po->max_size >= 0 && total > (uint64_t)po->max_size;
		eb_autofree char *path = NULL;

		if ((r = eb_interrupt_check(err)) < 0)
			break;
		if (!old && !over) {
			res->kept++;
			res->kept_bytes += v[i].size;
			continue;
		}
		path = eb_blobstore_path(bs, v[i].name);
		if (!po->dry_run && unlink(path) < 0 && errno != ENOENT) {
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot remove '%s'", path);
			break;
		}
		if (!po->dry_run)
			stamp_forget(bs, v[i].name);
		verified_forget(bs, v[i].name);
		total -= v[i].size;
		res->removed++;
		res->removed_bytes += v[i].size;
		if (fn)
			fn(ud, v[i].name, v[i].size, NULL);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return r;
}

/* ---- the cache seam (oci/cache.h): records, backends ------------------- */

void eb_cache_attach(struct eb_blobstore *bs, const struct eb_cache_backend *be, void *self)
{
	bs->backends = eb_xreallocarray(bs->backends, bs->nbackends + 1, sizeof(*bs->backends));
	bs->backends[bs->nbackends].ops = be;
	bs->backends[bs->nbackends].self = self;
	bs->nbackends++;
}

void eb_cache_set_layer_check(struct eb_blobstore *bs, eb_cache_layer_check_fn fn)
{
	bs->layer_check = fn;
}

void eb_cache_set_lazy(struct eb_blobstore *bs, int lazy)
{
	bs->lazy = lazy;
}

int eb_cache_has_backends(const struct eb_blobstore *bs)
{
	return bs->nbackends > 0;
}

/* Kinds name directories under the root: a fixed small alphabet, so that
 * no kind can climb out of it. */
static int kind_valid(const char *kind)
{
	if (!kind || !kind[0])
		return 0;
	for (const char *p = kind; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return 0;
	return strcmp(kind, "blobs") != 0 && strcmp(kind, "tmp") != 0;
}

static char *record_path(const struct eb_blobstore *bs, const char *kind, const char *key)
{
	if (!kind_valid(kind) || !sha256_digest(key))
		return NULL;
	return eb_xasprintf("%s/%s/%s.json", bs->root, kind, eb_digest_hex(key));
}

/* The digest and size a record names, when it names a valid blob. */
static int record_blob(const json_t *rec, const char **digest, int64_t *size)
{
	const json_t *d = json_object_get(rec, "digest"), *n = json_object_get(rec, "size");

	if (!json_is_string(d) || !json_is_integer(n) || json_integer_value(n) < 0 ||
	    !sha256_digest(json_string_value(d)))
		return 0;
	*digest = json_string_value(d);
	*size = (int64_t)json_integer_value(n);
	return 1;
}

int eb_cache_fetch(struct eb_blobstore *bs, const char *digest, int64_t size,
		   struct eb_error **err)
{
	if (eb_blobstore_has(bs, digest, size))
		return 0;
	for (size_t i = 0; i < bs->nbackends; i++) {
		const struct backend *b = &bs->backends[i];
		struct eb_blob_writer *w = NULL;
		int r;

		if (!b->ops->get || (b->ops->has && !b->ops->has(b->self, digest, size)))
			continue;
		if ((r = eb_blob_writer_open(&w, bs, err)) < 0)
			return r;
		r = b->ops->get(b->self, digest, size, w, NULL);
		/* a backend with a verified path of its own (a registry pull)
		 * puts the blob in the store itself */
		if (r == 0 && eb_blob_writer_size(w) == 0 && eb_blobstore_has(bs, digest, size)) {
			eb_blob_writer_abort(w);
			return 0;
		}
		if (r == 0 && size >= 0 && eb_blob_writer_size(w) != (uint64_t)size)
			r = -EB_EINVALID;
		if (r < 0) {
			eb_blob_writer_abort(w);
			continue; /* the next backend may have it */
		}
		/* commit checks the digest: a backend cannot plant other bytes */
		if (eb_blob_writer_commit(w, digest, NULL, NULL) == 0)
			return 0;
	}
	return eb_error_set(err, EB_ENOTFOUND, "blob '%s' is in no cache", digest);
}

static json_t *load_record(const char *path)
{
	struct eb_buf text;
	json_t *j = NULL;

	eb_buf_init(&text, 0);
	/* records are small; a big one is not ours */
	if (eb_fs_read_file(&text, path, 1 << 20, NULL) == 0)
		j = json_loadb(text.ptr, text.len, 0, NULL);
	eb_buf_release(&text);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

void eb_cache_on_shared(struct eb_blobstore *bs, eb_cache_shared_fn fn, void *ud)
{
	bs->shared_fn = fn;
	bs->shared_ud = ud;
}

static void shared_note(struct eb_blobstore *bs, const char *kind, const char *key,
			const json_t *rec, enum eb_cache_shared how)
{
	if (!bs->shared_fn)
		return;
	pthread_mutex_lock(&bs->shared_mu);
	bs->shared_fn(bs->shared_ud, kind, key, rec, how);
	pthread_mutex_unlock(&bs->shared_mu);
}

int eb_cache_record_get(struct eb_blobstore *bs, const char *kind, const char *key,
			json_t **out)
{
	eb_autofree char *path = record_path(bs, kind, key);
	const char *digest;
	int64_t size;
	json_t *j;

	*out = NULL;
	if (!path)
		return 0;
	j = load_record(path);
	/* lazy (a push): the bytes are checked when they are used (an
	 * upload), not for a blob the registry already has */
	if (j && record_blob(j, &digest, &size) &&
	    (bs->lazy ? eb_blobstore_present(bs, digest, size) : eb_blobstore_has(bs, digest, size))) {
		*out = j;
		return 1;
	}
	json_decref(j);
	/* a local miss: the backends, in order */
	for (size_t i = 0; i < bs->nbackends; i++) {
		const struct backend *b = &bs->backends[i];
		if (!b->ops->record_get || b->ops->record_get(b->self, kind, key, &j, NULL) != 1)
			continue;
		if (!j || !record_blob(j, &digest, &size)) {
			json_decref(j);
			continue;
		}
		/* lazy: a backend that holds the blob is a hit without its
		 * bytes, fetched when something needs them (a push mounts them
		 * instead); not remembered locally without them.  Otherwise
		 * the bytes come now, so that bad bytes are a miss (a rebuild)
		 * rather than a failure later */
		if (bs->lazy && !eb_blobstore_has(bs, digest, size) && b->ops->has &&
		    b->ops->has(b->self, digest, size)) {
			shared_note(bs, kind, key, j, EB_CACHE_SHARED_UNVERIFIED);
			*out = j;
			return 1;
		}
		if (eb_cache_fetch(bs, digest, size, NULL) == 0) {
			/* the config will name the record's diff_id: the layer
			 * must have it (decompressed and hashed once, then
			 * stamped), or the record is a lie and a miss */
			const char *diff = json_string_value(json_object_get(j, "diff_id"));
			if (!diff)
				diff = json_string_value(json_object_get(j, "diffId"));
			if (diff && !(bs->layer_check && bs->layer_check(bs, digest, diff))) {
				shared_note(bs, kind, key, j, EB_CACHE_SHARED_REJECTED);
				json_decref(j);
				continue;
			}
			shared_note(bs, kind, key, j, EB_CACHE_SHARED_VERIFIED);
			char *text = json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(2));
			eb_autofree char *dir = eb_path_dirname(path);
			/* remembered locally: the next run needs no backend */
			if (text && eb_fs_mkdir_p(dir, 0755, NULL) == 0)
				(void)eb_fs_write_replace(path, text, strlen(text), 0644, NULL);
			free(text);
			*out = j;
			return 1;
		}
		json_decref(j);
	}
	return 0;
}

int eb_cache_record_put(struct eb_blobstore *bs, const char *kind, const char *key,
			const json_t *rec, struct eb_error **err)
{
	eb_autofree char *path = record_path(bs, kind, key);
	eb_autofree char *dir = NULL;
	const char *digest;
	int64_t size;
	char *text;
	int r;

	if (!path)
		return eb_error_set(err, EB_EINVALID, "invalid cache record '%s' in '%s'",
				    key ? key : "", kind ? kind : "");
	if (!record_blob(rec, &digest, &size))
		return eb_error_set(err, EB_EINVALID, "a cache record needs the digest and size of "
				    "its blob");
	dir = eb_path_dirname(path);
	if ((r = eb_fs_mkdir_p(dir, 0755, err)) < 0)
		return r;
	text = json_dumps(rec, JSON_SORT_KEYS | JSON_INDENT(2));
	if (!text)
		abort(); /* only on out of memory */
	/* a lost or empty record is a miss, and a record is only a hit when
	 * its blob is sound (eb_cache_record_get): no fsync needed */
	r = eb_fs_write_replace(path, text, strlen(text), 0644, err);
	free(text);
	if (r < 0)
		return r;
	/* offered to the backends; a backend that cannot take it costs
	 * another machine a rebuild, never this build */
	for (size_t i = 0; i < bs->nbackends; i++) {
		const struct backend *b = &bs->backends[i];
		eb_autofree char *blob = eb_blobstore_path(bs, digest);
		if (!b->ops->record_put)
			continue;
		if (b->ops->put && !(b->ops->has && b->ops->has(b->self, digest, size)) &&
		    b->ops->put(b->self, digest, size, blob, NULL) < 0)
			continue;
		(void)b->ops->record_put(b->self, kind, key, rec, NULL);
	}
	return 0;
}
