/*
 * check_layer.c - tests for the blob store (oci/blobstore) and the
 * deterministic layer writer (oci/layer): layers are read back with
 * libarchive, zlib and libzstd, never trusted from our own summary.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <locale.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

#include "testdecomp.h"
#include "testutil.h"
#include "testlayer.h"

#include "oci/blobstore.h"
#include "oci/basefs.h"
#include "oci/image.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

/* ---- helpers ----------------------------------------------------------- */

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdirs(const char *root, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(path, 0777);
		*s = '/';
	}
	mkdir(path, 0777);
}

/* Write a file, creating its parents. */
static void put(const char *root, const char *rel, const char *content, mode_t mode)
{
	char path[4096];
	char *slash;

	snprintf(path, sizeof(path), "%s", rel);
	slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(root, path);
	}
	eb_test_write(root, rel, content);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static char *jp(const char *a, const char *b)
{
	return eb_xasprintf("%s/%s", a, b);
}

static size_t count_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static size_t count_in(const char *root, const char *rel)
{
	eb_autofree char *dir = jp(root, rel);
	return count_dir(dir);
}

static void read_all(const char *path, struct eb_buf *out)
{
	struct eb_error *err = NULL;

	eb_buf_init(out, 0);
	ck_assert_int_eq(eb_fs_read_file(out, path, 0, &err), 0);
}

/* The uncompressed tar of a stored layer. */
static void layer_tar(struct eb_blobstore *bs, const struct eb_layer_result *res,
		      struct eb_buf *tar)
{
	eb_autofree char *path = eb_blobstore_path(bs, res->digest);
	struct eb_buf blob;

	read_all(path, &blob);
	ck_assert_uint_eq(blob.len, res->size);
	eb_buf_init(tar, 0);
	if (strcmp(res->media_type, EB_MEDIA_LAYER_GZIP) == 0)
		eb_test_gunzip(&blob, tar);
	else if (strcmp(res->media_type, EB_MEDIA_LAYER_ZSTD) == 0)
		eb_test_unzstd(&blob, tar);
	else
		eb_buf_add(tar, blob.ptr, blob.len);
	eb_buf_release(&blob);
}

struct tent {
	char path[512];
	int type; /* AE_IF* */
	unsigned mode;
	int64_t mtime, uid, gid, size;
	int atime_set, ctime_set;
	char uname[32], gname[32];
	char symlink[512];
	char hardlink[512];
	char content[64];
};

struct tlist {
	struct tent v[128];
	size_t n;
};

static void read_tar(const struct eb_buf *tar, struct tlist *l)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;

	memset(l, 0, sizeof(*l));
	archive_read_support_format_tar(a);
	ck_assert_int_eq(archive_read_open_memory(a, tar->ptr, tar->len), ARCHIVE_OK);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		struct tent *t = &l->v[l->n++];
		const char *s;

		ck_assert_uint_lt(l->n, 128);
		snprintf(t->path, sizeof(t->path), "%s", archive_entry_pathname(ae));
		t->type = (int)archive_entry_filetype(ae);
		t->mode = archive_entry_perm(ae);
		t->mtime = archive_entry_mtime(ae);
		t->uid = archive_entry_uid(ae);
		t->gid = archive_entry_gid(ae);
		t->size = archive_entry_size(ae);
		t->atime_set = archive_entry_atime_is_set(ae);
		t->ctime_set = archive_entry_ctime_is_set(ae);
		if ((s = archive_entry_uname(ae)))
			snprintf(t->uname, sizeof(t->uname), "%s", s);
		if ((s = archive_entry_gname(ae)))
			snprintf(t->gname, sizeof(t->gname), "%s", s);
		if ((s = archive_entry_symlink(ae)))
			snprintf(t->symlink, sizeof(t->symlink), "%s", s);
		if ((s = archive_entry_hardlink(ae)))
			snprintf(t->hardlink, sizeof(t->hardlink), "%s", s);
		if (t->size > 0)
			archive_read_data(a, t->content,
					  t->size < (int64_t)sizeof(t->content) - 1 ? (size_t)t->size
										   : sizeof(t->content) - 1);
	}
	archive_read_free(a);
}

static const struct tent *tfind(const struct tlist *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].path, path) == 0)
			return &l->v[i];
	return NULL;
}

static void tar_of(struct eb_blobstore *bs, const struct eb_layer_result *res, struct tlist *l)
{
	struct eb_buf tar;

	layer_tar(bs, res, &tar);
	read_tar(&tar, l);
	eb_buf_release(&tar);
}

/* A fresh store under its own temp dir; *dir to be rm_rf'ed and freed. */
static struct eb_blobstore *store(char **dir)
{
	struct eb_blobstore *bs = NULL;
	struct eb_error *err = NULL;

	*dir = eb_test_tmpdir();
	ck_assert_int_eq(eb_blobstore_open(&bs, *dir, &err), 0);
	return bs;
}

static void done_store(struct eb_blobstore *bs, char *dir)
{
	eb_blobstore_free(bs);
	rm_rf(dir);
	free(dir);
}

/* ---- blob store -------------------------------------------------------- */

#define HELLO_DIGEST "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

START_TEST(blob_put_has_verify)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_error *err = NULL;
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *path = NULL;
	eb_autofree char *want = jp(dir, "blobs/sha256/"
				   "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
	struct eb_buf b;
	struct stat st;

	ck_assert_str_eq(eb_blobstore_root(bs), dir);
	ck_assert_int_eq(eb_blobstore_has(bs, HELLO_DIGEST, -1), 0);
	ck_assert_int_eq(eb_blobstore_put(bs, "hello", 5, digest, &err), 0);
	ck_assert_str_eq(digest, HELLO_DIGEST);
	path = eb_blobstore_path(bs, digest);
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0444);
	ck_assert_int_eq(eb_blobstore_has(bs, digest, -1), 1);
	ck_assert_int_eq(eb_blobstore_has(bs, digest, 5), 1);
	ck_assert_int_eq(eb_blobstore_has(bs, digest, 4), 0);
	ck_assert_int_eq(eb_blobstore_verify(bs, digest, &err), 0);
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_blobstore_read(bs, digest, &b, 0, &err), 0);
	ck_assert_str_eq(b.ptr, "hello");
	ck_assert_int_eq(eb_blobstore_read(bs, digest, &b, 3, &err), -EB_ETOOBIG);
	ck_assert_str_eq(b.ptr, "hello"); /* unchanged on failure */
	eb_error_clear(&err);
	eb_buf_release(&b);
	ck_assert_uint_eq(count_in(dir, "tmp") , 0);

	/* Storing again is harmless and gives the same name. */
	ck_assert_int_eq(eb_blobstore_put(bs, "hello", 5, digest, &err), 0);
	ck_assert_str_eq(digest, HELLO_DIGEST);

	/* Malformed and foreign digests never become paths. */
	ck_assert_ptr_null(eb_blobstore_path(bs, "sha256:../../etc/passwd"));
	ck_assert_ptr_null(eb_blobstore_path(bs, "md5:abc"));
	ck_assert_int_eq(eb_blobstore_has(bs, "sha256:xyz", -1), 0);
	ck_assert_int_eq(eb_blobstore_verify(bs, "nonsense", &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_blobstore_verify(bs, "sha256:0000000000000000000000000000000000000000000000000000000000000000", &err),
			 -EB_ENOTFOUND);
	eb_error_clear(&err);
	done_store(bs, dir);
}
END_TEST

START_TEST(blob_corrupt_removed)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_error *err = NULL;
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *path = NULL;
	struct eb_buf b;
	FILE *f;

	ck_assert_int_eq(eb_blobstore_put(bs, "hello", 5, digest, &err), 0);
	path = eb_blobstore_path(bs, digest);
	chmod(path, 0644);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("hellO", f); /* same size: has() cannot tell, verify() must */
	fclose(f);
	ck_assert_int_eq(eb_blobstore_has(bs, digest, 5), 1);
	ck_assert_int_eq(eb_blobstore_verify(bs, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, digest));
	eb_error_clear(&err);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(eb_blobstore_has(bs, digest, -1), 0);

	/* The reading path drops it too, and hands out nothing. */
	ck_assert_int_eq(eb_blobstore_put(bs, "hello", 5, digest, &err), 0);
	chmod(path, 0644);
	f = fopen(path, "w");
	fputs("HELLO", f);
	fclose(f);
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_blobstore_read(bs, digest, &b, 0, &err), -EB_EINVALID);
	ck_assert_uint_eq(b.len, 0);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_blobstore_has(bs, digest, -1), 0);
	eb_buf_release(&b);
	done_store(bs, dir);
}
END_TEST

/* A blob hashed once is trusted by a later process while its stamp (dev,
 * inode, size, mtime, ctime) still matches: no re-read on a warm rebuild.
 * Any edit moves the ctime, even with the mtime put back, and is caught. */
/* The blob's first bytes overwritten in place (same inode), as a
 * careless tool or a bad disk would. */
static void scribble(const char *path, const char *text)
{
	FILE *f;

	chmod(path, 0644);
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(blob_stamp_skips_rehash)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir), *bs2 = NULL;
	struct eb_error *err = NULL;
	char digest[EB_DIGEST_STR_LEN + 1], line[200];
	eb_autofree char *path = NULL;
	eb_autofree char *stamp = NULL;
	struct stat st, poisoned;
	struct timespec ts[2];
	FILE *f;
	/* stamped blobs are 64 KiB or more: "hello" and zeros */
	enum { BIG = 100 << 10 };
	char *big = eb_xcalloc(1, BIG), *big2 = eb_xcalloc(1, BIG);

	memcpy(big, "hello", 5);
	memcpy(big2, "world", 5);
	ck_assert_int_eq(eb_blobstore_put(bs, big, BIG, digest, &err), 0);
	path = eb_blobstore_path(bs, digest);
	stamp = eb_xasprintf("%s/stamps/%s", dir, digest + 7);
	/* not trusted by its stat until it is durable: stamped by the sync
	 * (one syncfs for every blob committed), never by the commit */
	ck_assert_int_eq(access(stamp, F_OK), -1);
	eb_blobstore_sync(bs);
	ck_assert_int_eq(access(stamp, F_OK), 0);
	/* changed in place between its commit and the sync: never stamped */
	{
		char d2[EB_DIGEST_STR_LEN + 1];
		eb_autofree char *p2 = NULL, *s2 = NULL;
		struct timespec nap = { 0, 30 * 1000 * 1000 };

		ck_assert_int_eq(eb_blobstore_put(bs, big2, BIG, d2, &err), 0);
		p2 = eb_blobstore_path(bs, d2);
		s2 = eb_xasprintf("%s/stamps/%s", dir, d2 + 7);
		nanosleep(&nap, NULL);
		scribble(p2, "W");
		eb_blobstore_sync(bs);
		ck_assert_int_eq(access(s2, F_OK), -1);
	}

	/* a fresh store (a new process) trusts it by its stamp */
	ck_assert_int_eq(eb_blobstore_open(&bs2, dir, &err), 0);
	ck_assert_int_eq(eb_blobstore_has(bs2, digest, BIG), 1);
	eb_blobstore_free(bs2);

	/* poisoned in place, same size, mtime put back: still caught */
	ck_assert_int_eq(stat(path, &st), 0);
	{
		struct timespec nap = { 0, 30 * 1000 * 1000 }; /* past the ctime tick */
		nanosleep(&nap, NULL);
	}
	scribble(path, "hellO");
	chmod(path, 0444);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
	ck_assert_int_eq(eb_blobstore_open(&bs2, dir, &err), 0);
	ck_assert_int_eq(eb_blobstore_has(bs2, digest, BIG), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	eb_blobstore_free(bs2);

	/* and it is the stamp that spares the read: a stamp forged to match
	 * a poisoned file is believed (so `cache verify` exists) */
	ck_assert_int_eq(eb_blobstore_put(bs, big, BIG, digest, &err), 0);
	scribble(path, "HELLO");
	ck_assert_int_eq(stat(path, &poisoned), 0);
	snprintf(line, sizeof(line), "envbuild-stamp 1 %ju %ju %jd %jd.%09ld %jd.%09ld\n",
		 (uintmax_t)poisoned.st_dev, (uintmax_t)poisoned.st_ino,
		 (intmax_t)poisoned.st_size, (intmax_t)poisoned.st_mtim.tv_sec,
		 poisoned.st_mtim.tv_nsec, (intmax_t)poisoned.st_ctim.tv_sec,
		 poisoned.st_ctim.tv_nsec);
	f = fopen(stamp, "w");
	ck_assert_ptr_nonnull(f);
	fputs(line, f);
	fclose(f);
	ck_assert_int_eq(eb_blobstore_open(&bs2, dir, &err), 0);
	ck_assert_int_eq(eb_blobstore_has(bs2, digest, BIG), 1);
	ck_assert_int_eq(eb_blobstore_verify(bs2, digest, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(access(stamp, F_OK), -1); /* eviction drops the stamp */
	eb_blobstore_free(bs2);

	/* a small blob is never stamped, and re-hashed by every new process:
	 * poisoned in place with its stat put back, it is still caught */
	{
		char ds[EB_DIGEST_STR_LEN + 1];
		eb_autofree char *ps = NULL, *ss = NULL;
		struct timespec nap = { 0, 30 * 1000 * 1000 };

		ck_assert_int_eq(eb_blobstore_put(bs, "small", 5, ds, &err), 0);
		ps = eb_blobstore_path(bs, ds);
		ss = eb_xasprintf("%s/stamps/%s", dir, ds + 7);
		eb_blobstore_sync(bs);
		ck_assert_int_eq(access(ss, F_OK), -1);
		ck_assert_int_eq(eb_blobstore_open(&bs2, dir, &err), 0);
		ck_assert_int_eq(eb_blobstore_has(bs2, ds, 5), 1);
		ck_assert_int_eq(access(ss, F_OK), -1); /* hashed, still not stamped */
		eb_blobstore_free(bs2);
		ck_assert_int_eq(stat(ps, &st), 0);
		nanosleep(&nap, NULL);
		scribble(ps, "SMALL");
		ts[0] = st.st_atim;
		ts[1] = st.st_mtim;
		ck_assert_int_eq(utimensat(AT_FDCWD, ps, ts, 0), 0);
		ck_assert_int_eq(eb_blobstore_open(&bs2, dir, &err), 0);
		ck_assert_int_eq(eb_blobstore_has(bs2, ds, 5), 0);
		eb_blobstore_free(bs2);
	}
	free(big);
	free(big2);
	done_store(bs, dir);
}
END_TEST

START_TEST(blob_writer_expected)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_error *err = NULL;
	struct eb_blob_writer *w;
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *tmp = jp(dir, "tmp");

	/* Wrong expected digest: error, nothing stored under either name. */
	ck_assert_int_eq(eb_blob_writer_open(&w, bs, &err), 0);
	ck_assert_int_eq(eb_blob_writer_write(w, "hel", 3, &err), 0);
	ck_assert_int_eq(eb_blob_writer_write(w, "lo", 2, &err), 0);
	ck_assert_uint_eq(eb_blob_writer_size(w), 5);
	ck_assert_uint_eq(count_dir(tmp), 1);
	ck_assert_int_eq(eb_blob_writer_commit(w, "sha256:0000000000000000000000000000000000000000000000000000000000000000",
					       digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, HELLO_DIGEST));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_blobstore_has(bs, HELLO_DIGEST, -1), 0);
	ck_assert_uint_eq(count_dir(tmp), 0);
	ck_assert_uint_eq(count_in(dir, "blobs/sha256"), 0);

	/* The right one stores it, streamed in pieces. */
	ck_assert_int_eq(eb_blob_writer_open(&w, bs, &err), 0);
	ck_assert_int_eq(eb_blob_writer_write(w, "he", 2, &err), 0);
	ck_assert_int_eq(eb_blob_writer_write(w, "llo", 3, &err), 0);
	ck_assert_int_eq(eb_blob_writer_commit(w, HELLO_DIGEST, digest, &err), 0);
	ck_assert_str_eq(digest, HELLO_DIGEST);
	ck_assert_int_eq(eb_blobstore_verify(bs, digest, &err), 0);

	/* Abort leaves nothing behind. */
	ck_assert_int_eq(eb_blob_writer_open(&w, bs, &err), 0);
	ck_assert_int_eq(eb_blob_writer_write(w, "x", 1, &err), 0);
	eb_blob_writer_abort(w);
	ck_assert_uint_eq(count_dir(tmp), 0);
	done_store(bs, dir);
}
END_TEST

START_TEST(blob_concurrent_writers)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_error *err = NULL;
	enum { NPROC = 6, SIZE = 4 << 20 };
	unsigned char *data = eb_xmalloc(SIZE);
	char digest[EB_DIGEST_STR_LEN + 1];
	pid_t pids[NPROC];

	for (size_t i = 0; i < SIZE; i++)
		data[i] = (unsigned char)(i * 2654435761u >> 13);
	eb_sha256_digest(data, SIZE, digest);
	for (int p = 0; p < NPROC; p++) {
		pids[p] = fork();
		ck_assert_int_ge(pids[p], 0);
		if (pids[p] == 0) {
			struct eb_blob_writer *w;
			char got[EB_DIGEST_STR_LEN + 1];
			int ok = eb_blob_writer_open(&w, bs, NULL) == 0;
			/* Small writes so the processes really interleave. */
			for (size_t off = 0; ok && off < SIZE; off += 4096)
				ok = eb_blob_writer_write(w, data + off, 4096, NULL) == 0;
			ok = ok && eb_blob_writer_commit(w, digest, got, NULL) == 0;
			free(data); /* for valgrind's leak check at the child's exit */
			_exit(ok ? 0 : 1);
		}
	}
	for (int p = 0; p < NPROC; p++) {
		int status;
		ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	ck_assert_int_eq(eb_blobstore_has(bs, digest, SIZE), 1);
	ck_assert_int_eq(eb_blobstore_verify(bs, digest, &err), 0);
	ck_assert_uint_eq(count_in(dir, "tmp"), 0);
	free(data);
	done_store(bs, dir);
}
END_TEST

/* ---- layer: a tree built two ways -------------------------------------- */

/* 150 characters, with a last component too long for ustar's 100-byte
 * name field, so only a pax record can carry it. */
#define LONG_DIR "long/aaaaaaaaaaaaaaaaaaaa"
#define LONG_FILE LONG_DIR "/" \
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.txt"

static void set_time(const char *root, const char *rel, time_t t)
{
	eb_autofree char *path = jp(root, rel);
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/*
 * variant 0: created in one order, umask 022, group/other-readable modes.
 * variant 1: created in the reverse order, umask 077, owner-only modes,
 * the hardlink pair made from the other end, and other mtimes.
 */
static void make_tree(const char *root, int variant, const char *data_content)
{
	mode_t old = umask(variant ? 077 : 022);
	eb_autofree char *h1 = jp(root, "hard1");
	eb_autofree char *h2 = jp(root, "lib/hard2");
	eb_autofree char *ln = jp(root, "link");
	static const char *const rels[] = { "bin/run.sh", "lib/data.txt", "lib/deep/er/x.py",
					    LONG_FILE, "hard1", "lib/hard2", "empty", "link",
					    "bin", "lib", "lib/deep", "long" };

	if (variant == 0) {
		put(root, "bin/run.sh", "#!/bin/sh\necho hi\n", 0755);
		put(root, "lib/data.txt", data_content, 0644);
		put(root, "lib/deep/er/x.py", "print(1)\n", 0644);
		put(root, LONG_FILE, "long\n", 0644);
		put(root, "hard1", "shared\n", 0644);
		ck_assert_int_eq(link(h1, h2), 0);
		mkdirs(root, "empty");
		ck_assert_int_eq(symlink("lib/data.txt", ln), 0);
	} else {
		ck_assert_int_eq(symlink("lib/data.txt", ln), 0);
		mkdirs(root, "empty");
		put(root, "lib/hard2", "shared\n", 0600);
		ck_assert_int_eq(link(h2, h1), 0);
		put(root, LONG_FILE, "long\n", 0600);
		put(root, "lib/deep/er/x.py", "print(1)\n", 0400);
		put(root, "lib/data.txt", data_content, 0600);
		put(root, "bin/run.sh", "#!/bin/sh\necho hi\n", 0700);
	}
	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++)
		set_time(root, rels[i], variant ? (time_t)(1000000000 + 7919 * i)
						 : (time_t)(1600000000 - 104729 * i));
	umask(old);
}

static int build_tree(const char *src, struct eb_blobstore *bs, const struct eb_layer_options *o,
		      struct eb_layer_result *res, struct eb_error **err)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	int rc = eb_layer_add_tree(b, src, "/", NULL, 0, err);

	if (rc == 0)
		rc = eb_layer_write(b, o, bs, res, err);
	eb_layer_builder_free(b);
	return rc;
}

START_TEST(layer_deterministic)
{
	char *sd, *sd2;
	struct eb_blobstore *bs = store(&sd), *bs2 = store(&sd2);
	eb_autofree char *d1 = eb_test_tmpdir();
	eb_autofree char *d2 = eb_test_tmpdir();
	eb_autofree char *d3 = eb_test_tmpdir();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r1, r2, r3;
	struct eb_error *err = NULL;
	struct eb_buf blob, tar;
	char diff[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *p1 = NULL;

	make_tree(d1, 0, "data\n");
	make_tree(d2, 1, "data\n");
	make_tree(d3, 0, "Data\n");
	ck_assert_int_eq(build_tree(d1, bs, &o, &r1, &err), 0);
	ck_assert_int_eq(build_tree(d2, bs2, &o, &r2, &err), 0);
	ck_assert_str_eq(r1.digest, r2.digest);
	ck_assert_str_eq(r1.diff_id, r2.diff_id);
	ck_assert_uint_eq(r1.size, r2.size);
	ck_assert_uint_eq(r1.diff_size, r2.diff_size);
	ck_assert_str_eq(r1.media_type, EB_MEDIA_LAYER_GZIP);
	ck_assert_int_eq(r1.cached, 0);
	ck_assert_ptr_nonnull(strstr(r1.compressor, "/chunk-1m/6"));
	ck_assert_uint_eq(r1.diff_size % 10240, 0);

	/* One changed byte changes both digests. */
	ck_assert_int_eq(build_tree(d3, bs, &o, &r3, &err), 0);
	ck_assert_str_ne(r1.digest, r3.digest);
	ck_assert_str_ne(r1.diff_id, r3.diff_id);

	/* The blob is what its name says, and gunzips to diff_id, with a
	 * header that names no time, no file and no OS. */
	p1 = eb_blobstore_path(bs, r1.digest);
	read_all(p1, &blob);
	ck_assert_uint_eq(blob.len, r1.size);
	ck_assert_int_eq(eb_blobstore_verify(bs, r1.digest, &err), 0);
	ck_assert_uint_eq((unsigned char)blob.ptr[0], 0x1f);
	ck_assert_uint_eq((unsigned char)blob.ptr[1], 0x8b);
	ck_assert_uint_eq((unsigned char)blob.ptr[3], 0); /* FLG: no name, comment, extra */
	ck_assert_int_eq(memcmp(blob.ptr + 4, "\0\0\0\0", 4), 0); /* MTIME */
	ck_assert_uint_eq((unsigned char)blob.ptr[8], 0); /* XFL for level 6 */
	ck_assert_uint_eq((unsigned char)blob.ptr[9], 255); /* OS unknown */
	eb_buf_init(&tar, 0);
	eb_test_gunzip(&blob, &tar);
	eb_sha256_digest(tar.ptr, tar.len, diff);
	ck_assert_str_eq(diff, r1.diff_id);
	ck_assert_uint_eq(tar.len, r1.diff_size);
	eb_buf_release(&tar);
	eb_buf_release(&blob);

	rm_rf(d1);
	rm_rf(d2);
	rm_rf(d3);
	done_store(bs, sd);
	done_store(bs2, sd2);
}
END_TEST

static void assert_sorted_parents_first(const struct tlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		char key[512], prev[512], parent[512];
		char *slash;

		snprintf(key, sizeof(key), "%s", l->v[i].path);
		if (key[strlen(key) - 1] == '/')
			key[strlen(key) - 1] = '\0';
		if (i > 0) {
			snprintf(prev, sizeof(prev), "%s", l->v[i - 1].path);
			if (prev[strlen(prev) - 1] == '/')
				prev[strlen(prev) - 1] = '\0';
			ck_assert_msg(strcmp(prev, key) < 0, "'%s' before '%s'", prev, key);
		}
		snprintf(parent, sizeof(parent), "%s", key);
		slash = strrchr(parent, '/');
		if (slash) {
			int found = 0;
			slash[1] = '\0'; /* directories carry a trailing '/' */
			for (size_t j = 0; j < i && !found; j++)
				found = strcmp(l->v[j].path, parent) == 0 && l->v[j].type == AE_IFDIR;
			ck_assert_msg(found, "parent '%s' of '%s' not before it", parent, key);
		}
	}
}

START_TEST(layer_tar_contents)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	struct tlist l;
	const struct tent *t;

	make_tree(d, 1, "data\n");
	o.epoch = 1700000000;
	ck_assert_int_eq(build_tree(d, bs, &o, &r, &err), 0);
	tar_of(bs, &r, &l);
	ck_assert_uint_eq(l.n, r.nentries);
	assert_sorted_parents_first(&l);
	for (size_t i = 0; i < l.n; i++) {
		const struct tent *e = &l.v[i];
		ck_assert_int_eq(e->mtime, 1700000000);
		ck_assert_int_eq(e->uid, 0);
		ck_assert_int_eq(e->gid, 0);
		ck_assert_int_eq(e->atime_set, 0);
		ck_assert_int_eq(e->ctime_set, 0);
		ck_assert_str_eq(e->uname, "");
		ck_assert_str_eq(e->gname, "");
		if (e->type == AE_IFDIR)
			ck_assert_uint_eq(e->mode, 0755);
	}
	/* Owner-only modes were normalised; the exec bit survived. */
	ck_assert_ptr_nonnull(t = tfind(&l, "bin/run.sh"));
	ck_assert_uint_eq(t->mode, 0755);
	ck_assert_str_eq(t->content, "#!/bin/sh\necho hi\n");
	ck_assert_ptr_nonnull(t = tfind(&l, "lib/deep/er/x.py"));
	ck_assert_uint_eq(t->mode, 0644);
	ck_assert_ptr_nonnull(t = tfind(&l, "lib/data.txt"));
	ck_assert_uint_eq(t->mode, 0644);
	ck_assert_ptr_nonnull(t = tfind(&l, "empty/"));
	ck_assert_int_eq(t->type, AE_IFDIR);
	ck_assert_ptr_nonnull(t = tfind(&l, "link"));
	ck_assert_int_eq(t->type, AE_IFLNK);
	ck_assert_str_eq(t->symlink, "lib/data.txt");
	/* The pair was linked hard2 -> hard1 on disk; "hard1" sorts first so
	 * it holds the content and "lib/hard2" links to it. */
	ck_assert_ptr_nonnull(t = tfind(&l, "hard1"));
	ck_assert_str_eq(t->hardlink, "");
	ck_assert_str_eq(t->content, "shared\n");
	ck_assert_ptr_nonnull(t = tfind(&l, "lib/hard2"));
	ck_assert_str_eq(t->hardlink, "hard1");
	ck_assert_int_eq(t->size, 0);
	ck_assert_uint_eq(strlen(LONG_FILE), 150);
	ck_assert_ptr_nonnull(t = tfind(&l, LONG_FILE));
	ck_assert_str_eq(t->content, "long\n");
	/* Nothing else: 7 directories, 5 files, 1 hardlink, 1 symlink. */
	ck_assert_ptr_nonnull(tfind(&l, "long/"));
	ck_assert_ptr_nonnull(tfind(&l, LONG_DIR "/"));
	ck_assert_uint_eq(l.n, 14);
	{
		/* The long name went into a pax record; nothing else needed one. */
		struct eb_buf tar;
		const char *p;
		layer_tar(bs, &r, &tar);
		p = memmem(tar.ptr, tar.len, "path=" LONG_FILE "\n", strlen(LONG_FILE) + 6);
		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_null(memmem(p + 1, tar.len - (size_t)(p + 1 - tar.ptr), "path=", 5));
		ck_assert_ptr_null(memmem(tar.ptr, tar.len, "time=", 5));
		eb_buf_release(&tar);
	}

	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_builder_entries)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	struct tlist l;
	const struct tent *t;
	char big[300];

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	o.uid = 3000000; /* beyond ustar's octal field: needs a pax record */
	o.gid = 1000;
	ck_assert_int_eq(eb_layer_add_bytes(b, "/etc/app.conf", "one", 3, 0600, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "etc//./app.conf", "two", 3, 0600, &err), 0); /* replaces */
	ck_assert_int_eq(eb_layer_add_bytes(b, "z/file", "zz", 2, 0751, &err), 0);
	ck_assert_int_eq(eb_layer_add_hardlink(b, "a/link", "/z/file", &err), 0);
	ck_assert_int_eq(eb_layer_add_dir(b, "opt/x", 0700, &err), 0);
	ck_assert_int_eq(eb_layer_add_symlink(b, "opt/x/big", big, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "empty.txt", "", 0, 0644, &err), 0);
	ck_assert_uint_eq(eb_layer_builder_count(b), 6);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);
	tar_of(bs, &r, &l);
	assert_sorted_parents_first(&l);
	ck_assert_ptr_nonnull(t = tfind(&l, "etc/app.conf"));
	ck_assert_str_eq(t->content, "two");
	ck_assert_uint_eq(t->mode, 0644);
	ck_assert_int_eq(t->uid, 3000000);
	ck_assert_int_eq(t->gid, 1000);
	/* The hardlink was added pointing at z/file, but a/link sorts first:
	 * it becomes the file and z/file the link. */
	ck_assert_ptr_nonnull(t = tfind(&l, "a/link"));
	ck_assert_str_eq(t->hardlink, "");
	ck_assert_str_eq(t->content, "zz");
	ck_assert_uint_eq(t->mode, 0755);
	ck_assert_ptr_nonnull(t = tfind(&l, "z/file"));
	ck_assert_str_eq(t->hardlink, "a/link");
	ck_assert_ptr_nonnull(t = tfind(&l, "opt/x/big"));
	ck_assert_str_eq(t->symlink, big);
	ck_assert_ptr_nonnull(t = tfind(&l, "opt/"));
	ck_assert_uint_eq(t->mode, 0755);
	ck_assert_ptr_nonnull(t = tfind(&l, "empty.txt"));
	ck_assert_int_eq(t->size, 0);
	/* a/ etc/ opt/ z/ implicit + opt/x/ + 6 entries */
	ck_assert_uint_eq(l.n, 10);

	/* keep_modes keeps what was given. */
	o.keep_modes = 1;
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);
	tar_of(bs, &r, &l);
	ck_assert_uint_eq(tfind(&l, "etc/app.conf")->mode, 0600);
	ck_assert_uint_eq(tfind(&l, "a/link")->mode, 0751);
	ck_assert_uint_eq(tfind(&l, "opt/x/")->mode, 0700);
	ck_assert_uint_eq(tfind(&l, "opt/")->mode, 0755);
	eb_layer_builder_free(b);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_entry_owner)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	struct eb_layer_builder *b = eb_layer_builder_new(), *b2 = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	char k1[EB_DIGEST_STR_LEN + 1], k2[EB_DIGEST_STR_LEN + 1];
	struct tlist l;
	const struct tent *t;

	o.keep_modes = 1;
	eb_layer_set_last_owner(b, 5, 5); /* empty builder: nothing to own */
	ck_assert_int_eq(eb_layer_add_bytes(b, "usr/bin/tool", "x", 1, 02755, &err), 0);
	eb_layer_set_last_owner(b, 0, 43);
	ck_assert_int_eq(eb_layer_add_dir(b, "var/mail", 02775, &err), 0);
	eb_layer_set_last_owner(b, 0, 8);
	ck_assert_int_eq(eb_layer_add_bytes(b, "etc/plain", "p", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_add_symlink(b, "usr/bin/t2", "tool", &err), 0);
	eb_layer_set_last_owner(b, 1, 1);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);
	tar_of(bs, &r, &l);
	ck_assert_ptr_nonnull(t = tfind(&l, "usr/bin/tool"));
	ck_assert_int_eq(t->uid, 0);
	ck_assert_int_eq(t->gid, 43);
	ck_assert_uint_eq(t->mode, 02755);
	ck_assert_ptr_nonnull(t = tfind(&l, "var/mail/"));
	ck_assert_int_eq(t->gid, 8);
	ck_assert_uint_eq(t->mode, 02775);
	ck_assert_ptr_nonnull(t = tfind(&l, "usr/bin/t2"));
	ck_assert_int_eq(t->uid, 1);
	ck_assert_int_eq(t->gid, 1);
	/* the others keep the options' owner, implicit parents root's */
	ck_assert_int_eq(tfind(&l, "etc/plain")->gid, 0);
	ck_assert_int_eq(tfind(&l, "usr/")->gid, 0);
	/* the owner is an input of the cache key */
	ck_assert_int_eq(eb_layer_add_bytes(b2, "usr/bin/tool", "x", 1, 02755, &err), 0);
	ck_assert_int_eq(eb_layer_cache_key(b2, &o, k2, &err), 0);
	eb_layer_set_last_owner(b2, 0, 43);
	ck_assert_int_eq(eb_layer_cache_key(b2, &o, k1, &err), 0);
	ck_assert_str_ne(k1, k2);
	eb_layer_builder_free(b);
	eb_layer_builder_free(b2);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_bad_paths)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_layer_add_bytes(b, "a/../../etc/passwd", "x", 1, 0644, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'a/../../etc/passwd'"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_layer_add_dir(b, "/", 0755, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_layer_add_symlink(b, "s", "", &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_layer_add_hardlink(b, "h", "h", &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_uint_eq(eb_layer_builder_count(b), 0);

	/* A file with something under it. */
	ck_assert_int_eq(eb_layer_add_bytes(b, "f", "x", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "f/g", "y", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'f/g'"));
	eb_error_clear(&err);
	/* Replacing the file with a directory fixes it. */
	ck_assert_int_eq(eb_layer_add_dir(b, "f", 0755, &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);

	/* A dangling hardlink, and a hardlink to a symlink. */
	ck_assert_int_eq(eb_layer_add_hardlink(b, "h", "nowhere", &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'nowhere'"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_layer_add_symlink(b, "nowhere", "f", &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_uint_eq(count_in(sd, "tmp"), 0);

	o.compression = EB_LAYER_GZIP;
	o.level = 12;
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), -EB_EINVALID);
	eb_error_clear(&err);
	eb_layer_builder_free(b);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_special_file_refused)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	eb_autofree char *fifo = jp(d, "sub/pipe");
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_error *err = NULL;

	put(d, "sub/a.txt", "a", 0644);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	ck_assert_int_eq(eb_layer_add_tree(b, d, "app", NULL, 0, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, fifo));
	ck_assert_ptr_nonnull(strstr(err->msg, "fifo"));
	eb_error_clear(&err);
	/* All or nothing: the walk added nothing. */
	ck_assert_uint_eq(eb_layer_builder_count(b), 0);
	/* As the source itself, too. */
	ck_assert_int_eq(eb_layer_add_tree(b, fifo, "app/p", NULL, 0, &err), -EB_EINVALID);
	eb_error_clear(&err);
	/* Excluding it is the way out. */
	{
		const char *ex[] = { "pipe" };
		ck_assert_int_eq(eb_layer_add_tree(b, d, "app", ex, 1, &err), 0);
		ck_assert_uint_eq(eb_layer_builder_count(b), 3); /* app, app/sub, app/sub/a.txt */
	}
	eb_layer_builder_free(b);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_excludes)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	struct tlist l;
	const char *ex[] = { "*.pyc", "__pycache__", "build/", "/top.txt", "src/skip*", "" };

	put(d, "top.txt", "t", 0644);
	put(d, "keep/top.txt", "k", 0644);       /* anchored pattern: only the top one goes */
	put(d, "src/mod.py", "m", 0644);
	put(d, "src/mod.pyc", "c", 0644);
	put(d, "src/__pycache__/mod.cpython.pyc", "c", 0644);
	put(d, "src/__pycache__/notes", "n", 0644);
	put(d, "src/skipme/deep/file", "s", 0644);
	put(d, "src/deeper/skipme", "s", 0644);  /* "src/skip*" is anchored to src/ */
	put(d, "build/out.o", "o", 0644);
	put(d, "src/build", "a file, not the build dir", 0644);
	ck_assert_int_eq(eb_layer_add_tree(b, d, "/app/", ex, 6, &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);
	tar_of(bs, &r, &l);
	ck_assert_ptr_null(tfind(&l, "app/top.txt"));
	ck_assert_ptr_nonnull(tfind(&l, "app/keep/top.txt"));
	ck_assert_ptr_nonnull(tfind(&l, "app/src/mod.py"));
	ck_assert_ptr_null(tfind(&l, "app/src/mod.pyc"));
	ck_assert_ptr_null(tfind(&l, "app/src/__pycache__/"));
	ck_assert_ptr_null(tfind(&l, "app/src/__pycache__/notes"));
	ck_assert_ptr_null(tfind(&l, "app/src/skipme/"));
	ck_assert_ptr_null(tfind(&l, "app/src/skipme/deep/file"));
	ck_assert_ptr_nonnull(tfind(&l, "app/src/deeper/skipme"));
	ck_assert_ptr_null(tfind(&l, "app/build/"));
	ck_assert_ptr_null(tfind(&l, "app/build/out.o"));
	ck_assert_ptr_nonnull(tfind(&l, "app/src/build"));
	/* app/ app/keep/ app/keep/top.txt app/src/ app/src/build app/src/deeper/
	 * app/src/deeper/skipme app/src/mod.py */
	ck_assert_uint_eq(l.n, 8);
	eb_layer_builder_free(b);

	/* A single file as the source: "dir/" means into dir. */
	b = eb_layer_builder_new();
	{
		eb_autofree char *f = jp(d, "src/mod.py");
		ck_assert_int_eq(eb_layer_add_tree(b, f, "/opt/", NULL, 0, &err), 0);
		ck_assert_int_eq(eb_layer_add_tree(b, f, "/opt/renamed.py", NULL, 0, &err), 0);
	}
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);
	tar_of(bs, &r, &l);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.v[0].path, "opt/");
	ck_assert_str_eq(l.v[1].path, "opt/mod.py");
	ck_assert_str_eq(l.v[2].path, "opt/renamed.py");
	eb_layer_builder_free(b);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_zstd_and_none)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result rz, rz2, rn, rg;
	struct eb_error *err = NULL;
	struct eb_buf tar;
	char diff[EB_DIGEST_STR_LEN + 1];
	struct tlist l;

	make_tree(d, 0, "data\n");
	ck_assert_int_eq(build_tree(d, bs, &o, &rg, &err), 0);
	o.compression = EB_LAYER_ZSTD;
	ck_assert_int_eq(build_tree(d, bs, &o, &rz, &err), 0);
	ck_assert_int_eq(build_tree(d, bs, &o, &rz2, &err), 0);
	ck_assert_str_eq(rz.digest, rz2.digest);
	ck_assert_str_eq(rz.media_type, EB_MEDIA_LAYER_ZSTD);
	ck_assert_str_ne(rz.digest, rg.digest);
	ck_assert_str_eq(rz.diff_id, rg.diff_id); /* same tar either way */
	layer_tar(bs, &rz, &tar);
	eb_sha256_digest(tar.ptr, tar.len, diff);
	ck_assert_str_eq(diff, rz.diff_id);
	read_tar(&tar, &l);
	ck_assert_ptr_nonnull(tfind(&l, LONG_FILE));
	eb_buf_release(&tar);

	o.compression = EB_LAYER_NONE;
	ck_assert_int_eq(build_tree(d, bs, &o, &rn, &err), 0);
	ck_assert_str_eq(rn.media_type, EB_MEDIA_LAYER_TAR);
	ck_assert_str_eq(rn.digest, rn.diff_id);
	ck_assert_str_eq(rn.diff_id, rg.diff_id);
	ck_assert_uint_eq(rn.size, rn.diff_size);
	ck_assert_str_eq(rn.compressor, "none");

	/* A level is part of the output. */
	o.compression = EB_LAYER_ZSTD;
	o.level = 19;
	ck_assert_int_eq(build_tree(d, bs, &o, &rz2, &err), 0);
	ck_assert_str_eq(rz2.diff_id, rz.diff_id);
	ck_assert_ptr_nonnull(strstr(rz2.compressor, "/19"));
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_non_ascii_locale_independent)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r1, r2;
	struct eb_error *err = NULL;
	struct tlist l;

	ck_assert_int_eq(eb_layer_add_bytes(b, "caf\xc3\xa9/men\xc3\xba.txt", "x", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "raw\xff", "y", 1, 0644, &err), 0);
	setlocale(LC_ALL, "C");
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r1, &err), 0);
	if (setlocale(LC_ALL, "C.UTF-8")) {
		ck_assert_int_eq(eb_layer_write(b, &o, bs, &r2, &err), 0);
		ck_assert_str_eq(r1.digest, r2.digest);
		/* libarchive's reader converts names to the locale, too. */
		tar_of(bs, &r1, &l);
		setlocale(LC_ALL, "C");
		ck_assert_ptr_nonnull(tfind(&l, "caf\xc3\xa9/men\xc3\xba.txt"));
		ck_assert_ptr_nonnull(tfind(&l, "caf\xc3\xa9/"));
	}
	eb_layer_builder_free(b);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_cache)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d1 = eb_test_tmpdir();
	eb_autofree char *d2 = eb_test_tmpdir();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_builder *b1 = eb_layer_builder_new(), *b2 = eb_layer_builder_new();
	struct eb_layer_result r1, r2, r3;
	struct eb_error *err = NULL;
	char k1[EB_DIGEST_STR_LEN + 1], k2[EB_DIGEST_STR_LEN + 1], k3[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *blob = NULL;
	eb_autofree char *index = NULL;
	struct stat st1, st2;

	make_tree(d1, 0, "data\n");
	make_tree(d2, 1, "data\n");
	ck_assert_int_eq(eb_layer_add_tree(b1, d1, "/", NULL, 0, &err), 0);
	ck_assert_int_eq(eb_layer_add_tree(b2, d2, "/", NULL, 0, &err), 0);
	ck_assert_int_eq(eb_layer_cache_key(b1, &o, k1, &err), 0);
	ck_assert_int_eq(eb_layer_cache_key(b2, &o, k2, &err), 0);
	ck_assert_str_eq(k1, k2); /* same layer from different trees */
	ck_assert_int_eq(eb_layer_cache_key(b1, &o, k3, &err), 0);
	ck_assert_str_eq(k1, k3); /* stable */

	ck_assert_int_eq(eb_layer_write_cached(b1, &o, bs, &r1, k3, &err), 0);
	ck_assert_str_eq(k1, k3);
	ck_assert_int_eq(r1.cached, 0);
	index = eb_xasprintf("%s/layers/%s.json", sd, eb_digest_hex(k1));
	ck_assert_int_eq(access(index, F_OK), 0);
	blob = eb_blobstore_path(bs, r1.digest);
	ck_assert_int_eq(stat(blob, &st1), 0);

	/* The other tree hits the cache: same result, blob untouched. */
	ck_assert_int_eq(eb_layer_write_cached(b2, &o, bs, &r2, NULL, &err), 0);
	ck_assert_int_eq(r2.cached, 1);
	ck_assert_str_eq(r2.digest, r1.digest);
	ck_assert_str_eq(r2.diff_id, r1.diff_id);
	ck_assert_uint_eq(r2.size, r1.size);
	ck_assert_uint_eq(r2.diff_size, r1.diff_size);
	ck_assert_uint_eq(r2.nentries, r1.nentries);
	ck_assert_str_eq(r2.media_type, r1.media_type);
	ck_assert_str_eq(r2.compressor, r1.compressor);
	ck_assert_int_eq(stat(blob, &st2), 0);
	ck_assert_int_eq(st1.st_ino, st2.st_ino);
	ck_assert_int_eq(st1.st_mtim.tv_sec, st2.st_mtim.tv_sec);
	ck_assert_int_eq(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);

	/* Options are part of the key. */
	o.epoch = 1;
	ck_assert_int_eq(eb_layer_cache_key(b1, &o, k3, &err), 0);
	ck_assert_str_ne(k1, k3);
	o.epoch = 0;
	o.compression = EB_LAYER_ZSTD;
	ck_assert_int_eq(eb_layer_cache_key(b1, &o, k3, &err), 0);
	ck_assert_str_ne(k1, k3);
	o.compression = EB_LAYER_GZIP;
	o.level = 9;
	ck_assert_int_eq(eb_layer_cache_key(b1, &o, k3, &err), 0);
	ck_assert_str_ne(k1, k3);
	o.level = 6; /* the default, spelled out: same layer */
	ck_assert_int_eq(eb_layer_cache_key(b1, &o, k3, &err), 0);
	ck_assert_str_eq(k1, k3);
	o.level = 0;

	/* A missing blob makes the index worthless: built again. */
	ck_assert_int_eq(unlink(blob), 0);
	ck_assert_int_eq(eb_layer_write_cached(b2, &o, bs, &r3, NULL, &err), 0);
	ck_assert_int_eq(r3.cached, 0);
	ck_assert_str_eq(r3.digest, r1.digest);
	ck_assert_int_eq(eb_blobstore_verify(bs, r3.digest, &err), 0);

	/* A corrupt index is a miss, not an error. */
	ck_assert_int_eq(eb_fs_write_atomic(index, "{nope", 5, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_write_cached(b2, &o, bs, &r3, NULL, &err), 0);
	ck_assert_int_eq(r3.cached, 0);
	ck_assert_int_eq(eb_layer_write_cached(b2, &o, bs, &r3, NULL, &err), 0);
	ck_assert_int_eq(r3.cached, 1);

	/* A changed file changes the key. */
	{
		struct eb_layer_builder *b3 = eb_layer_builder_new();
		put(d2, "lib/data.txt", "DATA\n", 0644);
		ck_assert_int_eq(eb_layer_add_tree(b3, d2, "/", NULL, 0, &err), 0);
		ck_assert_int_eq(eb_layer_cache_key(b3, &o, k3, &err), 0);
		ck_assert_str_ne(k1, k3);
		eb_layer_builder_free(b3);
	}
	/* ... and b2 hashed the old content, so writing it now fails. */
	ck_assert_int_eq(unlink(blob), 0);
	ck_assert_int_eq(eb_layer_write_cached(b2, &o, bs, &r3, NULL, &err), -EB_EIO);
	ck_assert_ptr_nonnull(strstr(err->msg, "lib/data.txt"));
	eb_error_clear(&err);
	ck_assert_uint_eq(count_in(sd, "tmp"), 0);

	eb_layer_builder_free(b1);
	eb_layer_builder_free(b2);
	rm_rf(d1);
	rm_rf(d2);
	done_store(bs, sd);
}
END_TEST

/* ---- layer: the file-hash cache ----------------------------------------- */

/* One `envbuild build` of a tree: a fresh builder, eb_layer_write_cached();
 * *nread = files whose content this read. */
static int build_cached(const char *src, struct eb_blobstore *bs, struct eb_layer_result *res,
			char key[EB_DIGEST_STR_LEN + 1], uint64_t *nread, struct eb_error **err)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	uint64_t before = eb_layer_test_files_read();
	int rc = eb_layer_add_tree(b, src, "/", NULL, 0, err);

	if (rc == 0)
		rc = eb_layer_write_cached(b, &o, bs, res, key, err);
	*nread = eb_layer_test_files_read() - before;
	eb_layer_builder_free(b);
	return rc;
}

/* Every name in dir but "." and "..", temp files included. */
static size_t count_all(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* The one file-hash cache file of a store; caller frees. */
static char *filehash_file(const char *sd)
{
	eb_autofree char *dir = jp(sd, "filehash");
	DIR *d = opendir(dir);
	struct dirent *de;
	char *found = NULL;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		ck_assert_ptr_null(found);
		found = jp(dir, de->d_name);
	}
	closedir(d);
	ck_assert_ptr_nonnull(found);
	return found;
}

/* Long enough for the kernel's coarse clock to tick: a change made after
 * it gets other timestamps than one made before. */
static void tick(void)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

START_TEST(filehash_noop_reads_nothing)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	struct eb_layer_result r1, r2;
	struct eb_error *err = NULL;
	char k1[EB_DIGEST_STR_LEN + 1], k2[EB_DIGEST_STR_LEN + 1];
	uint64_t nread;

	make_tree(d, 0, "data\n");
	/* Build as if a minute later: the files just made are not racy. */
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d, bs, &r1, k1, &nread, &err), 0);
	ck_assert_int_eq(r1.cached, 0);
	/* Cold: each of the 5 files with content read once (hashed as it
	 * went into the tar), not once to key and again to write. */
	ck_assert_uint_eq(nread, 5);
	ck_assert_uint_eq(count_in(sd, "filehash"), 1);

	ck_assert_int_eq(build_cached(d, bs, &r2, k2, &nread, &err), 0);
	ck_assert_int_eq(r2.cached, 1);
	ck_assert_uint_eq(nread, 0);
	ck_assert_str_eq(k1, k2);
	ck_assert_str_eq(r1.digest, r2.digest);
	ck_assert_str_eq(r1.diff_id, r2.diff_id);
	/* Nothing changed, so nothing was rewritten either. */
	{
		eb_autofree char *fh = filehash_file(sd);
		eb_autofree char *fhdir = jp(sd, "filehash");
		struct stat a, b;
		ck_assert_int_eq(stat(fh, &a), 0);
		ck_assert_int_eq(build_cached(d, bs, &r2, k2, &nread, &err), 0);
		ck_assert_int_eq(stat(fh, &b), 0);
		ck_assert_int_eq(a.st_ino, b.st_ino);
		ck_assert_uint_eq(count_all(fhdir), 1);
	}
	eb_layer_test_set_clock_skew(0);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

/*
 * The same, proven without our own counter: on a tmpfs mounted
 * strictatime every read moves a file's atime (and nothing else), so an
 * unchanged atime means no read.  chmod 000 cannot prove it: it changes
 * ctime and mode, which must (and do) invalidate the records.  Needs a
 * mount namespace (root, or an unprivileged user namespace): 77 = skip.
 */
static int atime_child(const char *mnt, const char *sd)
{
	static const char *const names[] = { "a.txt", "sub/b.txt", "sub/c.bin" };
	struct eb_blobstore *bs = NULL;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	struct timespec before[3];
	struct stat st;
	char path[4096], key[EB_DIGEST_STR_LEN + 1];
	uint64_t nread;
	FILE *f;

	if (unshare(CLONE_NEWNS) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return 77;
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", mnt, "tmpfs", MS_STRICTATIME, "size=4m") < 0)
		return 77;
	snprintf(path, sizeof(path), "%s/sub", mnt);
	if (mkdir(path, 0755) < 0)
		return 10;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", mnt, names[i]);
		if (!(f = fopen(path, "w")) || fprintf(f, "content %d\n", i) < 0 || fclose(f) != 0)
			return 11;
	}
	if (eb_blobstore_open(&bs, sd, &err) < 0)
		return 12;
	eb_layer_test_set_clock_skew(60);
	if (build_cached(mnt, bs, &r, key, &nread, &err) < 0 || r.cached)
		return 13;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", mnt, names[i]);
		if (stat(path, &st) < 0)
			return 14;
		before[i] = st.st_atim;
	}
	tick();
	if (build_cached(mnt, bs, &r, key, &nread, &err) < 0 || !r.cached)
		return 15;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", mnt, names[i]);
		if (stat(path, &st) < 0)
			return 16;
		if (st.st_atim.tv_sec != before[i].tv_sec || st.st_atim.tv_nsec != before[i].tv_nsec)
			return 20 + i; /* the no-op build read this file */
	}
	/* Control: a read does move atime here, so the check above means something. */
	{
		char c;
		int fd;
		snprintf(path, sizeof(path), "%s/%s", mnt, names[0]);
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, &c, 1) != 1)
			return 30;
		close(fd);
		if (stat(path, &st) < 0 || (st.st_atim.tv_sec == before[0].tv_sec &&
					    st.st_atim.tv_nsec == before[0].tv_nsec))
			return 31;
	}
	eb_blobstore_free(bs);
	return 0;
}

START_TEST(filehash_noop_atime_unchanged)
{
	char *sd = eb_test_tmpdir();
	char *mnt = eb_test_tmpdir();
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int rc = atime_child(mnt, sd);
		free(sd); /* for valgrind's leak check at the child's exit */
		free(mnt);
		_exit(rc);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	rm_rf(sd);
	rm_rf(mnt);
	free(sd);
	free(mnt);
	if (WEXITSTATUS(status) == 77)
		EB_TEST_SKIP("no mount namespace (needs root or unprivileged user namespaces)");
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(filehash_cold_write_key)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	eb_autofree char *index = NULL;
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_builder *b;
	struct eb_layer_result r1, r2;
	struct eb_error *err = NULL;
	char k1[EB_DIGEST_STR_LEN + 1], k2[EB_DIGEST_STR_LEN + 1];
	struct tlist l;
	uint64_t nread;

	make_tree(d, 0, "data\n");
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d, bs, &r1, k1, &nread, &err), 0);
	ck_assert_int_eq(r1.cached, 0);
	ck_assert_uint_eq(nread, 5);
	index = eb_xasprintf("%s/layers/%s.json", sd, eb_digest_hex(k1));
	ck_assert_int_eq(access(index, F_OK), 0);
	tar_of(bs, &r1, &l);
	ck_assert_str_eq(tfind(&l, "lib/data.txt")->content, "data\n");

	/* The key made afterwards from hashes taken while writing is the key
	 * of a separate full read. */
	b = eb_layer_builder_new();
	ck_assert_int_eq(eb_layer_add_tree(b, d, "/", NULL, 0, &err), 0);
	ck_assert_int_eq(eb_layer_cache_key(b, &o, k2, &err), 0);
	ck_assert_str_eq(k1, k2);
	eb_layer_builder_free(b);

	/* So the same tree again is a hit, from stat data alone. */
	ck_assert_int_eq(build_cached(d, bs, &r2, k2, &nread, &err), 0);
	ck_assert_int_eq(r2.cached, 1);
	ck_assert_uint_eq(nread, 0);
	ck_assert_str_eq(k1, k2);
	ck_assert_str_eq(r2.digest, r1.digest);

	/* A layer from memory only has no file-hash cache and needs none. */
	{
		char *sd2;
		struct eb_blobstore *bs2 = store(&sd2);
		for (int i = 0; i < 2; i++) {
			b = eb_layer_builder_new();
			ck_assert_int_eq(eb_layer_add_bytes(b, "etc/motd", "hi\n", 3, 0644, &err), 0);
			ck_assert_int_eq(eb_layer_add_bytes(b, "etc/empty", "", 0, 0644, &err), 0);
			ck_assert_int_eq(eb_layer_write_cached(b, &o, bs2, &r2, k2, &err), 0);
			ck_assert_int_eq(r2.cached, i);
			eb_layer_builder_free(b);
		}
		eb_autofree char *fhdir = jp(sd2, "filehash");
		ck_assert_int_ne(access(fhdir, F_OK), 0);
		done_store(bs2, sd2);
	}
	eb_layer_test_set_clock_skew(0);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(filehash_ctime_detects_edit)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	eb_autofree char *f = jp(d, "f.txt");
	struct eb_layer_result r1, r2;
	struct eb_error *err = NULL;
	char k1[EB_DIGEST_STR_LEN + 1], k2[EB_DIGEST_STR_LEN + 1];
	struct stat st1, st2;
	struct tlist l;
	uint64_t nread;

	put(d, "f.txt", "aaaa\n", 0644);
	put(d, "g.txt", "gggg\n", 0644);
	set_time(d, "f.txt", 1000000000);
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d, bs, &r1, k1, &nread, &err), 0);
	ck_assert_int_eq(lstat(f, &st1), 0);

	/* Same size, same inode, mtime put back to the nanosecond: only
	 * ctime tells.  Not racy either (a minute "later"), so it is the
	 * ctime comparison that has to catch it. */
	tick();
	put(d, "f.txt", "bbbb\n", 0644);
	set_time(d, "f.txt", 1000000000);
	ck_assert_int_eq(lstat(f, &st2), 0);
	ck_assert_int_eq(st1.st_ino, st2.st_ino);
	ck_assert_int_eq(st1.st_size, st2.st_size);
	ck_assert_int_eq(st1.st_mode, st2.st_mode);
	ck_assert_int_eq(st1.st_mtim.tv_sec, st2.st_mtim.tv_sec);
	ck_assert_int_eq(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);
	ck_assert(st1.st_ctim.tv_sec != st2.st_ctim.tv_sec ||
		  st1.st_ctim.tv_nsec != st2.st_ctim.tv_nsec);

	ck_assert_int_eq(build_cached(d, bs, &r2, k2, &nread, &err), 0);
	ck_assert_int_eq(r2.cached, 0);
	ck_assert_uint_ge(nread, 1);
	ck_assert_str_ne(k1, k2);
	ck_assert_str_ne(r1.diff_id, r2.diff_id);
	tar_of(bs, &r2, &l);
	ck_assert_str_eq(tfind(&l, "f.txt")->content, "bbbb\n");
	eb_layer_test_set_clock_skew(0);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

/* A file edited after it was added but before it was written: its record
 * (matching the stat the walk saw) promised the old content, and writing
 * other bytes under that key is refused. */
START_TEST(filehash_change_after_add)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	eb_autofree char *blob = NULL;
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	char k[EB_DIGEST_STR_LEN + 1];
	uint64_t nread;

	put(d, "f.txt", "aaaa\n", 0644);
	set_time(d, "f.txt", 1000000000);
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	blob = eb_blobstore_path(bs, r.digest);
	ck_assert_int_eq(unlink(blob), 0); /* so the layer must be written */

	ck_assert_int_eq(eb_layer_add_tree(b, d, "/", NULL, 0, &err), 0);
	tick();
	put(d, "f.txt", "bbbb\n", 0644);
	set_time(d, "f.txt", 1000000000);
	ck_assert_int_eq(eb_layer_write_cached(b, &o, bs, &r, k, &err), -EB_EIO);
	ck_assert_ptr_nonnull(strstr(err->msg, "changed while the layer was being built"));
	ck_assert_ptr_nonnull(strstr(err->msg, "f.txt"));
	eb_error_clear(&err);
	ck_assert_uint_eq(count_in(sd, "tmp"), 0);
	ck_assert_uint_eq(count_in(sd, "blobs/sha256"), 0);
	eb_layer_builder_free(b);
	eb_layer_test_set_clock_skew(0);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

/* What a build with unknown files does hinges on the layer's shape: a
 * fresh copy of the same files is hashed first and hits; an edit that
 * changes a size cannot hit, so the layer is written with each file read
 * once. */
START_TEST(filehash_shape)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d1 = eb_test_tmpdir();
	eb_autofree char *d2 = eb_test_tmpdir();
	struct eb_layer_result r1, r;
	struct eb_error *err = NULL;
	char k1[EB_DIGEST_STR_LEN + 1], k[EB_DIGEST_STR_LEN + 1];
	struct tlist l;
	uint64_t nread;

	make_tree(d1, 0, "data\n");
	make_tree(d2, 1, "data\n");
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d1, bs, &r1, k1, &nread, &err), 0);
	ck_assert_uint_eq(nread, 5);

	/* Another checkout of the same files: no record, but a known shape. */
	ck_assert_int_eq(build_cached(d2, bs, &r, k, &nread, &err), 0);
	ck_assert_int_eq(r.cached, 1);
	ck_assert_uint_eq(nread, 5);
	ck_assert_str_eq(k, k1);
	ck_assert_int_eq(build_cached(d2, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 0);

	/* A size changed: a shape never seen, one pass, nothing read twice. */
	put(d2, "lib/data.txt", "more data\n", 0644);
	ck_assert_int_eq(build_cached(d2, bs, &r, k, &nread, &err), 0);
	ck_assert_int_eq(r.cached, 0);
	ck_assert_uint_eq(nread, 5);
	ck_assert_str_ne(k, k1);
	tar_of(bs, &r, &l);
	ck_assert_str_eq(tfind(&l, "lib/data.txt")->content, "more data\n");
	ck_assert_int_eq(build_cached(d2, bs, &r, k, &nread, &err), 0);
	ck_assert_int_eq(r.cached, 1);
	ck_assert_uint_eq(nread, 0);

	/* Back to the first content: a recorded shape again, so the edited
	 * file alone is hashed first, and it is a hit. */
	put(d2, "lib/data.txt", "data\n", 0644);
	ck_assert_int_eq(build_cached(d2, bs, &r, k, &nread, &err), 0);
	ck_assert_int_eq(r.cached, 1);
	ck_assert_uint_eq(nread, 1);
	ck_assert_str_eq(k, k1);
	eb_layer_test_set_clock_skew(0);
	rm_rf(d1);
	rm_rf(d2);
	done_store(bs, sd);
}
END_TEST

START_TEST(filehash_racy)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	struct eb_layer_result r1, r;
	struct eb_error *err = NULL;
	char k[EB_DIGEST_STR_LEN + 1];
	uint64_t nread;
	time_t now = time(NULL);

	/* Eight ordinary files and one whose mtime is 100 s ahead, so a clock
	 * 100 s ahead records it in its mtime's second. */
	for (int i = 0; i < 8; i++) {
		char rel[16];
		snprintf(rel, sizeof(rel), "f%d", i);
		put(d, rel, "x", 0644);
	}
	put(d, "racy.txt", "r", 0644);
	set_time(d, "racy.txt", now + 100);
	eb_layer_test_set_clock_skew(100);
	ck_assert_int_eq(build_cached(d, bs, &r1, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 9);
	/* Its record is racy: re-hashed, never trusted; the others are not.
	 * The layer's shape is known, so it is hashed before the lookup and
	 * the layer is still a hit. */
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 1);
	ck_assert_int_eq(r.cached, 1);
	ck_assert_str_eq(r.digest, r1.digest);
	/* Later, the file is older than the clock, but the record at hand
	 * was still made in its second: re-hashed once more ... */
	eb_layer_test_set_clock_skew(103);
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 1);
	ck_assert_int_eq(r.cached, 1);
	/* ... and that record, made well after its mtime, is trusted. */
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 0);
	ck_assert_int_eq(r.cached, 1);

	/* ctime counts as much as mtime: files changed (here: their mtime
	 * set) when the records are made are all hashed again. */
	for (int i = 0; i < 8; i++) {
		char rel[16];
		snprintf(rel, sizeof(rel), "f%d", i);
		set_time(d, rel, 1000000000);
	}
	set_time(d, "racy.txt", 1000000000);
	eb_layer_test_set_clock_skew(0);
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 9);
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 9);
	ck_assert_str_eq(r.digest, r1.digest);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(filehash_corrupt_ignored)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	struct eb_layer_result r1, r;
	struct eb_error *err = NULL;
	char k[EB_DIGEST_STR_LEN + 1];
	uint64_t nread;

	make_tree(d, 0, "data\n");
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d, bs, &r1, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 5);
	for (int v = 0; v < 6; v++) {
		eb_autofree char *fh = filehash_file(sd);
		struct eb_buf good;

		read_all(fh, &good);
		ck_assert_uint_gt(good.len, 100);
		switch (v) {
		case 0: /* one bit flipped inside a record */
			good.ptr[good.len / 2] ^= 1;
			break;
		case 1: /* truncated */
			eb_buf_truncate(&good, good.len / 2);
			break;
		case 2: /* one byte short */
			eb_buf_truncate(&good, good.len - 1);
			break;
		case 3: /* not ours at all */
			eb_buf_truncate(&good, 0);
			eb_buf_adds(&good, "nope");
			break;
		case 4: /* empty */
			eb_buf_truncate(&good, 0);
			break;
		case 5: { /* intact, but another format version */
			char sum[EB_DIGEST_STR_LEN + 1];
			const char *hex;
			good.ptr[7] = '9';
			eb_sha256_digest(good.ptr, good.len - 32, sum);
			hex = eb_digest_hex(sum);
			for (int i = 0; i < 32; i++)
				good.ptr[good.len - 32 + i] = (char)(eb_hex_value(hex[2 * i]) << 4 |
								     eb_hex_value(hex[2 * i + 1]));
			break;
		}
		}
		ck_assert_int_eq(eb_fs_write_atomic(fh, good.ptr, good.len, 0644, &err), 0);
		eb_buf_release(&good);
		/* Ignored: every file read and hashed again, found in the
		 * layer cache. */
		ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
		ck_assert_msg(nread == 5, "variant %d: %llu files read", v, (unsigned long long)nread);
		ck_assert_int_eq(r.cached, 1);
		ck_assert_str_eq(r.digest, r1.digest);
		ck_assert_str_eq(r.diff_id, r1.diff_id);
		/* ... and replaced by a good one. */
		ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
		ck_assert_uint_eq(nread, 0);
		ck_assert_int_eq(r.cached, 1);
	}
	eb_layer_test_set_clock_skew(0);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

/* Threads of several processes building the same tree into one store,
 * with every record racy so each build rewrites the cache file. */
struct par_arg {
	const char *d;
	struct eb_blobstore *bs;
	const char *want;
	int bad;
};

static void *par_thread(void *p)
{
	struct par_arg *a = p;

	for (int i = 0; i < 6; i++) {
		struct eb_layer_result r;
		char k[EB_DIGEST_STR_LEN + 1];
		uint64_t nread;
		struct eb_error *err = NULL;

		if (build_cached(a->d, a->bs, &r, k, &nread, &err) < 0 ||
		    strcmp(r.digest, a->want) != 0)
			a->bad = 1;
		eb_error_free(err);
	}
	return NULL;
}

START_TEST(filehash_concurrent)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	eb_autofree char *fhdir = NULL;
	struct eb_layer_result r1, r;
	struct eb_error *err = NULL;
	char k[EB_DIGEST_STR_LEN + 1];
	uint64_t nread;
	enum { NPROC = 3 };
	pid_t pids[NPROC];

	make_tree(d, 0, "data\n");
	ck_assert_int_eq(build_cached(d, bs, &r1, k, &nread, &err), 0);
	for (int p = 0; p < NPROC; p++) {
		pids[p] = fork();
		ck_assert_int_ge(pids[p], 0);
		if (pids[p] == 0) {
			struct par_arg a[2] = { { d, bs, r1.digest, 0 }, { d, bs, r1.digest, 0 } };
			pthread_t th[2];
			for (int t = 0; t < 2; t++)
				if (pthread_create(&th[t], NULL, par_thread, &a[t]) != 0)
					_exit(2);
			for (int t = 0; t < 2; t++)
				pthread_join(th[t], NULL);
			_exit(a[0].bad || a[1].bad);
		}
	}
	for (int p = 0; p < NPROC; p++) {
		int status;
		ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* One complete cache file, no temp left; once recorded a minute
	 * "later", the next build reads nothing. */
	fhdir = jp(sd, "filehash");
	ck_assert_uint_eq(count_all(fhdir), 1);
	ck_assert_uint_eq(count_in(sd, "tmp"), 0);
	eb_layer_test_set_clock_skew(60);
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_int_eq(build_cached(d, bs, &r, k, &nread, &err), 0);
	ck_assert_uint_eq(nread, 0);
	ck_assert_int_eq(r.cached, 1);
	eb_layer_test_set_clock_skew(0);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

START_TEST(layer_file_changes)
{
	char *sd;
	struct eb_blobstore *bs = store(&sd);
	eb_autofree char *d = eb_test_tmpdir();
	eb_autofree char *f = jp(d, "f.txt");
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;

	put(d, "f.txt", "12345", 0644);
	ck_assert_int_eq(eb_layer_add_file(b, "f.txt", f, &err), 0);
	put(d, "f.txt", "123456789", 0644);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), -EB_EIO);
	ck_assert_ptr_nonnull(strstr(err->msg, "changed size"));
	ck_assert_ptr_nonnull(strstr(err->msg, f));
	eb_error_clear(&err);
	ck_assert_uint_eq(count_in(sd, "tmp"), 0);
	ck_assert_uint_eq(count_in(sd, "blobs/sha256"), 0);

	ck_assert_int_eq(unlink(f), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, f));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_layer_add_file(b, "g", f, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_layer_add_file(b, "g", d, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_uint_eq(count_in(sd, "tmp"), 0);
	eb_layer_builder_free(b);
	rm_rf(d);
	done_store(bs, sd);
}
END_TEST

/*
 * Disk full.  As root, a 1 MiB tmpfs mounted in a private mount namespace
 * gives a real ENOSPC; elsewhere RLIMIT_FSIZE gives EFBIG on the same path.
 * Runs in a child so neither the namespace nor the limit leaks.
 */
static int disk_full_child(const char *sd)
{
	struct eb_blobstore *bs = NULL;
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result r;
	struct eb_error *err = NULL;
	enum { SIZE = 3 << 20 };
	unsigned char *data = malloc(SIZE);
	int want = ENOSPC, rc;
	char tmp[4096];

	if (unshare(CLONE_NEWNS) == 0 && mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("tmpfs", sd, "tmpfs", 0, "size=1m") == 0) {
		want = ENOSPC;
	} else {
		struct rlimit rl = { 1 << 20, 1 << 20 };
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			return 10;
		want = EFBIG;
	}
	if (eb_blobstore_open(&bs, sd, &err) < 0)
		return 11;
	for (size_t i = 0; i < SIZE; i++)
		data[i] = (unsigned char)((i * 2654435761u) >> 11);
	o.compression = EB_LAYER_NONE;
	if (eb_layer_add_bytes(b, "big.bin", data, SIZE, 0644, &err) < 0)
		return 12;
	rc = eb_layer_write(b, &o, bs, &r, &err);
	if (rc != -EB_EIO || !err || err->sys_errno != want)
		return 13;
	if (want == ENOSPC && (!err->hint || !strstr(err->hint, sd)))
		return 14;
	snprintf(tmp, sizeof(tmp), "%s/tmp", sd);
	if (count_dir(tmp) != 0)
		return 15;
	eb_error_free(err);
	eb_layer_builder_free(b);
	eb_blobstore_free(bs);
	free(data);
	return 0;
}

START_TEST(layer_disk_full)
{
	char *sd = eb_test_tmpdir();
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(disk_full_child(sd));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	rm_rf(sd);
	free(sd);
}
END_TEST

START_TEST(layer_options_env)
{
	struct eb_layer_options o;
	struct eb_error *err = NULL;
	enum eb_layer_compression c;

	unsetenv("SOURCE_DATE_EPOCH");
	ck_assert_int_eq(eb_layer_options_from_env(&o, &err), 0);
	ck_assert_int_eq(o.epoch, 0);
	ck_assert_int_eq(o.compression, EB_LAYER_GZIP);
	setenv("SOURCE_DATE_EPOCH", "1712345678", 1);
	ck_assert_int_eq(eb_layer_options_from_env(&o, &err), 0);
	ck_assert_int_eq(o.epoch, 1712345678);
	setenv("SOURCE_DATE_EPOCH", "-5", 1);
	ck_assert_int_eq(eb_layer_options_from_env(&o, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'-5'"));
	eb_error_clear(&err);
	setenv("SOURCE_DATE_EPOCH", "12abc", 1);
	ck_assert_int_eq(eb_layer_options_from_env(&o, &err), -EB_EINVALID);
	eb_error_clear(&err);
	unsetenv("SOURCE_DATE_EPOCH");

	ck_assert_int_eq(eb_layer_compression_parse("zstd", &c, &err), 0);
	ck_assert_int_eq(c, EB_LAYER_ZSTD);
	ck_assert_int_eq(eb_layer_compression_parse("none", &c, &err), 0);
	ck_assert_int_eq(c, EB_LAYER_NONE);
	ck_assert_int_eq(eb_layer_compression_parse("lz4", &c, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_str_eq(eb_layer_media_type(EB_LAYER_NONE), "application/vnd.oci.image.layer.v1.tar");
}
END_TEST


/* ---- the base image's filesystem --------------------------------------- */

/* The layers of debian_like() (their blob paths into p[3]). */
static void debian_like_layers(struct eb_blobstore *bs, char *p[3]);

static struct eb_basefs *debian_like(struct eb_blobstore *bs)
{
	char *p[3];
	struct eb_basefs *fs = eb_basefs_new();
	struct eb_error *err = NULL;

	debian_like_layers(bs, p);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(eb_basefs_add_layer(fs, p[i], &err), 0);
		free(p[i]);
	}
	return fs;
}

static void debian_like_layers(struct eb_blobstore *bs, char *p[3])
{
	const char *l1[] = { "d usr 0755", "d usr/bin 0755", "f usr/bin/sh", "l bin usr/bin",
			     "l lib usr/lib", "d usr/lib 0755", "d tmp 1777", "d root 0700",
			     "d etc 0755", "f etc/passwd", "l etc/alt /usr/lib/../bin",
			     "l loop1 loop2", "l loop2 loop1", "d home 0755", "d gone 0755",
			     "f gone/a", "d opq 0755", "f opq/old", NULL };
	const char *l2[] = { "d home/app 0750 1000 1000", NULL };
	const char *l3[] = { "f .wh.gone", "f opq/.wh..wh..opq", "f opq/new", NULL };

	p[0] = eb_test_layer(bs, l1);
	p[1] = eb_test_layer(bs, l2);
	p[2] = eb_test_layer(bs, l3);
}

/* eb_basefs_load reads the layers at once and applies them in order: the
 * same view, node for node, as adding them one after another */
START_TEST(basefs_load_parallel_same_view)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_basefs *seq = debian_like(bs), *par = NULL;
	char *p[3];
	struct eb_descriptor d[3];
	struct eb_error *err = NULL;
	const struct eb_basefs_node *a, *b;
	size_t na, nb;

	debian_like_layers(bs, p);
	memset(d, 0, sizeof(d));
	for (size_t i = 0; i < 3; i++)
		d[i].digest = eb_xasprintf("sha256:%s", eb_path_basename(p[i]));
	ck_assert_int_eq(eb_basefs_load(&par, bs, d, 3, &err), 0);
	na = eb_basefs_under(seq, "", &a);
	nb = eb_basefs_under(par, "", &b);
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++) {
		ck_assert_str_eq(a[i].path, b[i].path);
		ck_assert_int_eq(a[i].type, b[i].type);
		ck_assert_uint_eq(a[i].mode, b[i].mode);
		ck_assert_uint_eq(a[i].uid, b[i].uid);
		ck_assert_uint_eq(a[i].layer, b[i].layer);
		ck_assert_uint_eq(a[i].entry, b[i].entry);
	}
	ck_assert_ptr_nonnull(eb_basefs_lookup(par, "opq/new"));
	ck_assert_ptr_null(eb_basefs_lookup(par, "gone"));
	ck_assert_uint_eq(eb_basefs_lookup(par, "home/app")->uid, 1000);
	eb_basefs_free(seq);
	eb_basefs_free(par);
	/* a layer that is not a tar: the load fails, naming it */
	ck_assert_int_eq(chmod(p[1], 0644), 0);
	{
		FILE *f = fopen(p[1], "w");
		ck_assert_ptr_nonnull(f);
		fputs("not a tar", f);
		fclose(f);
	}
	{
		/* the view of all three is cached: the top two alone are read */
		struct eb_descriptor d2[2] = { d[1], d[2] };
		ck_assert_int_lt(eb_basefs_load(&par, bs, d2, 2, &err), 0);
		ck_assert_ptr_nonnull(err);
		ck_assert_ptr_nonnull(strstr(err->msg, eb_path_basename(p[1])));
		eb_error_free(err);
	}
	for (size_t i = 0; i < 3; i++) {
		free(p[i]);
		free(d[i].digest);
	}
	done_store(bs, dir);
}
END_TEST

START_TEST(basefs_view_and_resolve)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_basefs *fs = debian_like(bs);
	const struct eb_basefs_node *n;
	struct eb_error *err = NULL;
	char *r;

	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "/tmp"));
	ck_assert_int_eq(n->type, EB_BASEFS_DIR);
	ck_assert_uint_eq(n->mode, 01777);
	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "home/app/"));
	ck_assert_uint_eq(n->mode, 0750);
	ck_assert_uint_eq(n->uid, 1000);
	ck_assert_uint_eq(n->gid, 1000);
	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "/bin"));
	ck_assert_int_eq(n->type, EB_BASEFS_SYMLINK);
	ck_assert_str_eq(n->link, "usr/bin");
	ck_assert_int_eq(eb_basefs_lookup(fs, "/")->type, EB_BASEFS_DIR);
	/* whiteouts: .wh.gone removes the subtree, an opaque dir hides the
	 * lower layers' children but keeps its own layer's */
	ck_assert_ptr_null(eb_basefs_lookup(fs, "gone"));
	ck_assert_ptr_null(eb_basefs_lookup(fs, "gone/a"));
	ck_assert_ptr_null(eb_basefs_lookup(fs, "opq/old"));
	ck_assert_ptr_nonnull(eb_basefs_lookup(fs, "opq/new"));
	ck_assert_ptr_nonnull(eb_basefs_lookup(fs, "opq"));

	ck_assert_int_eq(eb_basefs_resolve(fs, "/bin/tool.sh", 0, &r, &err), 0);
	ck_assert_str_eq(r, "usr/bin/tool.sh");
	free(r);
	/* an absolute target with "..": from the root */
	ck_assert_int_eq(eb_basefs_resolve(fs, "/etc/alt/x", 0, &r, &err), 0);
	ck_assert_str_eq(r, "usr/bin/x");
	free(r);
	/* the last component is followed only when asked */
	ck_assert_int_eq(eb_basefs_resolve(fs, "/bin", 0, &r, &err), 0);
	ck_assert_str_eq(r, "bin");
	free(r);
	ck_assert_int_eq(eb_basefs_resolve(fs, "/bin", 1, &r, &err), 0);
	ck_assert_str_eq(r, "usr/bin");
	free(r);
	/* ".." never climbs above the root; missing parts are kept */
	ck_assert_int_eq(eb_basefs_resolve(fs, "/../../new/dir/f", 0, &r, &err), 0);
	ck_assert_str_eq(r, "new/dir/f");
	free(r);
	ck_assert_int_lt(eb_basefs_resolve(fs, "/loop1/x", 0, &r, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->msg, "too many symbolic links"));
	eb_error_free(err);
	err = NULL;
	ck_assert_int_lt(eb_basefs_resolve(fs, "/etc/passwd/x", 0, &r, &err), 0);
	ck_assert_str_eq(err->msg, "'/etc/passwd/x' cannot be created: '/etc/passwd' is a file in the base image");
	eb_error_free(err);
	eb_basefs_free(fs);
	done_store(bs, dir);
}
END_TEST

/* An upper layer that adds a path and replaces one sorting after it: the
 * replaced path is the upper layer's, once (the view stays a sorted set
 * while a layer is applied) */
START_TEST(basefs_upper_layer_replaces)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	const char *l1[] = { "d a 0755", "f a/x", "d m 0755", "f m/y", "d z 0755", NULL };
	const char *l2[] = { "f a/new", "f m/y", "d z 0700", NULL };
	char *p[2] = { eb_test_layer(bs, l1), eb_test_layer(bs, l2) };
	struct eb_basefs *fs = eb_basefs_new();
	struct eb_error *err = NULL;
	const struct eb_basefs_node *n, *v;
	size_t count;

	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(eb_basefs_add_layer(fs, p[i], &err), 0);
		free(p[i]);
	}
	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "m/y"));
	ck_assert_uint_eq(n->layer, 1);
	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "z"));
	ck_assert_uint_eq(n->mode, 0700);
	count = eb_basefs_under(fs, "", &v);
	ck_assert_uint_eq(count, eb_basefs_count(fs));
	for (size_t i = 1; i < count; i++)
		ck_assert_int_lt(strcmp(v[i - 1].path, v[i].path), 0);
	/* a, a/new, a/x, m, m/y, z */
	ck_assert_uint_eq(count, 6);
	eb_basefs_free(fs);
	done_store(bs, dir);
}
END_TEST

/* eb_basefs_load: the view of a list of layers is cached, so the second
 * load reads no layer (here: the blob is gone and it still works) */
START_TEST(basefs_load_cached)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	const char *l1[] = { "d tmp 1777", "l bin usr/bin", "d usr 0755", "d usr/bin 0755", NULL };
	char *p = eb_test_layer(bs, l1);
	struct eb_descriptor d = { 0 };
	struct eb_basefs *fs = NULL;
	struct eb_error *err = NULL;
	const struct eb_basefs_node *n;
	size_t count;

	d.digest = eb_xasprintf("sha256:%s", eb_path_basename(p));
	ck_assert_int_eq(eb_basefs_load(&fs, bs, &d, 1, &err), 0);
	count = eb_basefs_count(fs);
	ck_assert_uint_ge(count, 4);
	eb_basefs_free(fs);
	ck_assert_int_eq(chmod(p, 0644), 0);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(eb_basefs_load(&fs, bs, &d, 1, &err), 0);
	ck_assert_uint_eq(eb_basefs_count(fs), count);
	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "tmp"));
	ck_assert_uint_eq(n->mode, 01777);
	ck_assert_ptr_nonnull(n = eb_basefs_lookup(fs, "bin"));
	ck_assert_str_eq(n->link, "usr/bin");
	eb_basefs_free(fs);
	/* a damaged view is ignored: the layer is read again (and it is
	 * gone, so that fails) */
	{
		eb_autofree char *cmd = eb_xasprintf(
			"cd '%s' && n=0 && for f in basefs/*.json; do "
			"d=$(sed -n 's/.*\"digest\": \"sha256:\\([0-9a-f]*\\)\".*/\\1/p' \"$f\") && "
			"chmod u+w blobs/sha256/$d && printf 'x' >>blobs/sha256/$d && n=$((n+1)); done; "
			"test $n -eq 1", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	ck_assert_int_lt(eb_basefs_load(&fs, bs, &d, 1, &err), 0);
	ck_assert_ptr_null(fs);
	eb_error_free(err);
	free(d.digest);
	free(p);
	done_store(bs, dir);
}
END_TEST

/* A layer over the base: parents follow the base's symlinks and keep its
 * metadata; missing ones are 0755 0:0; chown/chmod reach only what is
 * copied. */
START_TEST(layer_over_base)
{
	char *dir;
	struct eb_blobstore *bs = store(&dir);
	struct eb_basefs *fs = debian_like(bs);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	struct eb_error *err = NULL;
	struct tlist l;
	const struct tent *t;

	eb_layer_builder_set_base(b, fs);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/bin/tool.sh", "#!/bin/sh\n", 10, 0755, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/tmp/data/x", "x", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/root/.cfg", "x", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/home/app/f", "x", 1, 0644, &err), 0);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/srv/new/f", "x", 1, 0644, &err), 0);
	o.uid = o.gid = 1000;
	o.chmod = 0640;
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &res, &err), 0);
	tar_of(bs, &res, &l);
	ck_assert_ptr_null(tfind(&l, "bin/"));
	ck_assert_ptr_null(tfind(&l, "bin"));
	ck_assert_ptr_nonnull(t = tfind(&l, "usr/bin/tool.sh"));
	ck_assert_uint_eq(t->mode, 0640);
	ck_assert_int_eq(t->uid, 1000);
	ck_assert_ptr_nonnull(t = tfind(&l, "usr/bin/"));
	ck_assert_uint_eq(t->mode, 0755);
	ck_assert_ptr_nonnull(t = tfind(&l, "tmp/"));
	ck_assert_uint_eq(t->mode, 01777);
	ck_assert_int_eq(t->uid, 0);
	ck_assert_ptr_nonnull(t = tfind(&l, "tmp/data/"));
	ck_assert_uint_eq(t->mode, 0755);
	ck_assert_int_eq(t->uid, 0);
	ck_assert_int_eq(t->gid, 0);
	ck_assert_ptr_nonnull(t = tfind(&l, "root/"));
	ck_assert_uint_eq(t->mode, 0700);
	ck_assert_ptr_nonnull(t = tfind(&l, "home/app/"));
	ck_assert_uint_eq(t->mode, 0750);
	ck_assert_int_eq(t->uid, 1000);
	ck_assert_int_eq(t->gid, 1000);
	ck_assert_ptr_nonnull(t = tfind(&l, "srv/new/f"));
	ck_assert_uint_eq(t->mode, 0640);
	ck_assert_int_eq(t->gid, 1000);
	ck_assert_ptr_nonnull(t = tfind(&l, "srv/"));
	ck_assert_uint_eq(t->mode, 0755);
	ck_assert_int_eq(t->uid, 0);
	eb_layer_builder_free(b);

	/* a tree copied into /tmp/: /tmp itself keeps 1777 */
	{
		eb_autofree char *src = jp(dir, "tree");
		ck_assert_int_eq(mkdir(src, 0755), 0);
		put(src, "a/b.txt", "b", 0644);
		b = eb_layer_builder_new();
		eb_layer_builder_set_base(b, fs);
		ck_assert_int_eq(eb_layer_add_tree(b, src, "/tmp/", NULL, 0, &err), 0);
		o = (struct eb_layer_options)EB_LAYER_OPTIONS_INIT;
		ck_assert_int_eq(eb_layer_write(b, &o, bs, &res, &err), 0);
		tar_of(bs, &res, &l);
		ck_assert_ptr_nonnull(t = tfind(&l, "tmp/"));
		ck_assert_uint_eq(t->mode, 01777);
		ck_assert_ptr_nonnull(t = tfind(&l, "tmp/a/b.txt"));
		eb_layer_builder_free(b);
	}

	/* a directory over a base file, a file over a base directory */
	b = eb_layer_builder_new();
	eb_layer_builder_set_base(b, fs);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/etc/passwd/x", "x", 1, 0644, &err), 0);
	ck_assert_int_lt(eb_layer_write(b, &o, bs, &res, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->msg, "'/etc/passwd' is a file in the base image"));
	eb_error_free(err);
	err = NULL;
	eb_layer_builder_free(b);
	b = eb_layer_builder_new();
	eb_layer_builder_set_base(b, fs);
	ck_assert_int_eq(eb_layer_add_dir(b, "/etc/passwd", 0755, &err), 0);
	ck_assert_int_lt(eb_layer_write(b, &o, bs, &res, &err), 0);
	ck_assert_str_eq(err->msg, "'/etc/passwd' would replace the file '/etc/passwd' of the base image with a directory");
	eb_error_free(err);
	err = NULL;
	eb_layer_builder_free(b);
	b = eb_layer_builder_new();
	eb_layer_builder_set_base(b, fs);
	ck_assert_int_eq(eb_layer_add_bytes(b, "/usr/lib", "x", 1, 0644, &err), 0);
	ck_assert_int_lt(eb_layer_write(b, &o, bs, &res, &err), 0);
	ck_assert_str_eq(err->msg, "'/usr/lib' would replace the directory '/usr/lib' of the base image");
	eb_error_free(err);
	eb_layer_builder_free(b);

	eb_basefs_free(fs);
	done_store(bs, dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("layer");
	TCase *tb = tcase_create("blobstore");
	TCase *tl = tcase_create("layer");

	tcase_add_test(tb, blob_put_has_verify);
	tcase_add_test(tb, blob_corrupt_removed);
	tcase_add_test(tb, blob_stamp_skips_rehash);
	tcase_add_test(tb, blob_writer_expected);
	tcase_add_test(tb, blob_concurrent_writers);
	suite_add_tcase(s, tb);

	tcase_set_timeout(tl, 60);
	tcase_add_test(tl, layer_deterministic);
	tcase_add_test(tl, layer_tar_contents);
	tcase_add_test(tl, layer_builder_entries);
	tcase_add_test(tl, layer_entry_owner);
	tcase_add_test(tl, layer_bad_paths);
	tcase_add_test(tl, layer_special_file_refused);
	tcase_add_test(tl, layer_excludes);
	tcase_add_test(tl, layer_zstd_and_none);
	tcase_add_test(tl, layer_non_ascii_locale_independent);
	tcase_add_test(tl, layer_cache);
	tcase_add_test(tl, layer_file_changes);
	tcase_add_test(tl, layer_disk_full);
	tcase_add_test(tl, layer_options_env);
	tcase_add_test(tl, filehash_noop_reads_nothing);
	tcase_add_test(tl, filehash_noop_atime_unchanged);
	tcase_add_test(tl, filehash_cold_write_key);
	tcase_add_test(tl, filehash_ctime_detects_edit);
	tcase_add_test(tl, filehash_change_after_add);
	tcase_add_test(tl, filehash_shape);
	tcase_add_test(tl, filehash_racy);
	tcase_add_test(tl, filehash_corrupt_ignored);
	tcase_add_test(tl, filehash_concurrent);
	tcase_add_test(tl, basefs_view_and_resolve);
	tcase_add_test(tl, layer_over_base);
	tcase_add_test(tl, basefs_upper_layer_replaces);
	tcase_add_test(tl, basefs_load_parallel_same_view);
	tcase_add_test(tl, basefs_load_cached);
	suite_add_tcase(s, tl);
	return s;
}

EB_TEST_MAIN(make_suite)
