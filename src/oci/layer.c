/*
 * layer.c - the deterministic layer writer: collect entries, sort and
 * normalise them, stream them through libarchive (tar), sha256 (diff_id),
 * the parallel compressor (oci/compress.c), and into a blob writer; plus the input-keyed layer cache
 * and the stat-keyed file-hash cache that lets it key a tree unread.
 * Collecting, walking and preparing the entries is layer_plan.c.
 *
 * Bytes emitted must be a function of the entries and options only, so
 * nothing here may consult the host's clock, umask, owners, inode order or
 * locale (see the uselocale() call in eb_layer_write for the last one).
 * The file-hash cache does read the clock and stat data, but only to
 * decide which files must be read again, never to shape a byte written.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/cache.h"
#include "oci/inflate.h"
#include "oci/basefs.h"
#include "oci/compress.h"
#include "oci/layer.h"
#include "oci/layer_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/encode.h"
#include "util/fs.h"
#include "util/glob.h"

#define GZIP_DEFAULT_LEVEL 6
#define ZSTD_DEFAULT_LEVEL 3
#define ZSTD_MAX_LEVEL 19 /* 20..22 need "ultra" windows: too much memory */
#define IO_CHUNK (256 * 1024)
/* The classic tar blocking factor (20 records of 512), pinned so output
 * does not change if libarchive's default ever does. */
#define TAR_BLOCK 10240
/* A file-hash cache record is ~90 bytes plus its path: this is millions
 * of files, and a file past it is ignored rather than trusted. */
#define FILEHASH_MAX (256 * 1024 * 1024)

/* Test instrumentation: see eb_layer_test_files_read(). */
static uint64_t files_read;
static int64_t clock_skew;

/* ---- options ----------------------------------------------------------- */

const char *eb_layer_media_type(enum eb_layer_compression c)
{
	switch (c) {
	case EB_LAYER_GZIP:
		return EB_MEDIA_LAYER_GZIP;
	case EB_LAYER_ZSTD:
		return EB_MEDIA_LAYER_ZSTD;
	case EB_LAYER_NONE:
		return EB_MEDIA_LAYER_TAR;
	}
	return NULL;
}

int eb_layer_compression_parse(const char *s, enum eb_layer_compression *out,
			       struct eb_error **err)
{
	if (strcmp(s, "gzip") == 0)
		*out = EB_LAYER_GZIP;
	else if (strcmp(s, "zstd") == 0)
		*out = EB_LAYER_ZSTD;
	else if (strcmp(s, "none") == 0)
		*out = EB_LAYER_NONE;
	else
		return eb_error_set(err, EB_EINVALID,
				    "unknown layer compression '%s' (expected gzip, zstd or none)", s);
	return 0;
}

const char *eb_layer_compression_name(enum eb_layer_compression c)
{
	return c == EB_LAYER_ZSTD ? "zstd" : c == EB_LAYER_NONE ? "none" : "gzip";
}

int eb_layer_options_from_env(struct eb_layer_options *o, struct eb_error **err)
{
	static const struct eb_layer_options defaults = EB_LAYER_OPTIONS_INIT;
	const char *s = getenv("SOURCE_DATE_EPOCH");
	int64_t v = 0;

	*o = defaults;
	if (!s || !*s)
		return 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
			return eb_error_set(err, EB_EINVALID,
					    "SOURCE_DATE_EPOCH '%s' is not a non-negative integer", s);
		v = v * 10 + (*p - '0');
	}
	o->epoch = v;
	return 0;
}

static int effective_level(const struct eb_layer_options *o)
{
	if (o->level)
		return o->level;
	return o->compression == EB_LAYER_ZSTD ? ZSTD_DEFAULT_LEVEL : GZIP_DEFAULT_LEVEL;
}

static int check_options(const struct eb_layer_options *o, struct eb_error **err)
{
	int lv = effective_level(o);

	if (!eb_layer_media_type(o->compression))
		return eb_error_set(err, EB_EINVALID, "unknown layer compression %d",
				    (int)o->compression);
	if (o->compression == EB_LAYER_GZIP && (lv < 1 || lv > 9))
		return eb_error_set(err, EB_EINVALID, "gzip level %d is out of range 1..9", lv);
	if (o->compression == EB_LAYER_ZSTD && (lv < 1 || lv > ZSTD_MAX_LEVEL))
		return eb_error_set(err, EB_EINVALID, "zstd level %d is out of range 1..%d", lv,
				    ZSTD_MAX_LEVEL);
	if (o->epoch < 0)
		return eb_error_set(err, EB_EINVALID, "layer epoch %lld is negative",
				    (long long)o->epoch);
	return 0;
}

/* Names what made the bytes: the library version matters as much as the
 * level (a new deflate can change every digest). */
static enum eb_compress_kind compress_kind(enum eb_layer_compression c)
{
	return c == EB_LAYER_ZSTD ? EB_COMPRESS_ZSTD :
	       c == EB_LAYER_NONE ? EB_COMPRESS_NONE : EB_COMPRESS_GZIP;
}

void eb_layer_compressor_id(const struct eb_layer_options *o, char out[48])
{
	eb_compress_id(compress_kind(o->compression), effective_level(o), out);
}

static unsigned out_mode(const struct entry *e, const struct entry *content,
			 const struct eb_layer_options *o)
{
	if (e->has_meta)
		return e->meta_mode;
	if (e->type == T_SYMLINK)
		return 0777;
	if (e->type == T_DIR && e->implicit)
		return 0755;
	if (o->chmod)
		return o->chmod & 07777;
	if (e->type == T_DIR)
		return o->keep_modes ? e->mode : 0755;
	if (o->keep_modes)
		return content->mode;
	return (content->mode & 0111) ? 0755 : 0644;
}

/* Implicit parents the base lacks are root's, as COPY creates them. */
static uint32_t out_uid(const struct entry *e, const struct eb_layer_options *o)
{
	return e->has_meta ? e->meta_uid : e->has_owner ? e->own_uid : e->implicit ? 0 : o->uid;
}

static uint32_t out_gid(const struct entry *e, const struct eb_layer_options *o)
{
	return e->has_meta ? e->meta_gid : e->has_owner ? e->own_gid : e->implicit ? 0 : o->gid;
}

/* ---- reading file content ---------------------------------------------- */

static int open_src(const struct entry *e, int *fd_out, struct fstat_id *id,
		    struct eb_error **err)
{
	struct stat st;
	int fd = open(e->src, O_RDONLY | O_CLOEXEC | (e->nofollow ? O_NOFOLLOW : 0));

	*fd_out = -1;
	__atomic_fetch_add(&files_read, 1, __ATOMIC_RELAXED);
	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot read '%s'", e->src);
	if (fstat(fd, &st) < 0) {
		int rc = eb_error_set_errno(err, EB_EIO, errno, "cannot stat '%s'", e->src);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return eb_error_set(err, EB_EIO, "'%s' is no longer a regular file", e->src);
	}
	if ((uint64_t)st.st_size != e->size) {
		close(fd);
		return eb_error_set(err, EB_EIO,
				    "'%s' changed size while the layer was being built "
				    "(%llu bytes, now %llu)", e->src, (unsigned long long)e->size,
				    (unsigned long long)st.st_size);
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	eb_layer__fstat_id_of(&st, id);
	*fd_out = fd;
	return 0;
}

typedef int (*chunk_fn)(void *ctx, const void *data, size_t len, struct eb_error **err);

struct member_ctx {
	chunk_fn fn;
	void *ctx;
	struct eb_sha256 *h;
};

static int member_chunk(void *ud, const void *data, size_t len, struct eb_error **err)
{
	struct member_ctx *m = ud;

	if (m->h)
		eb_sha256_update(m->h, data, len);
	return m->fn(m->ctx, data, len, err);
}

/* A member's bytes, decompressed from its range of src.  Never "stable":
 * what it holds is the digest it was added with, not a file's. */
static int read_member(const struct entry *e, unsigned char *buf, chunk_fn fn, void *ctx,
		       struct eb_sha256 *h, struct eb_error **err)
{
	struct member_ctx m = { fn, ctx, h };
	struct stat st;
	int fd = open(e->src, O_RDONLY | O_CLOEXEC), rc;

	__atomic_fetch_add(&files_read, 1, __ATOMIC_RELAXED);
	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot read '%s'", e->src);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < e->zoff || (uint64_t)st.st_size - e->zoff < e->zsize) {
		close(fd);
		return eb_error_set(err, EB_EIO, "'%s' no longer holds '%s'", e->src, e->path);
	}
	(void)posix_fadvise(fd, (off_t)e->zoff, (off_t)e->zsize, POSIX_FADV_SEQUENTIAL);
	rc = eb_inflate_range(fd, e->src, e->zoff, e->zsize, e->zmethod, e->size, buf, IO_CHUNK,
			      member_chunk, &m, err);
	close(fd);
	return rc;
}

/* Feed exactly e->size bytes of the file to fn, in chunks; a file that
 * ends early or goes on longer fails, because the tar header already
 * promised a size.  *stable = 1 when the file was read from disk and its
 * stat (in *seen) was the same before and after the read: only then may
 * what was read be remembered as the content of that stat. */
static int read_content(const struct entry *e, unsigned char *buf, chunk_fn fn, void *ctx,
			struct eb_sha256 *h, struct fstat_id *seen, int *stable,
			struct eb_error **err)
{
	uint64_t left = e->size;
	struct stat after;
	struct fstat_id now;
	int fd, rc = 0;

	*stable = 0;
	memset(seen, 0, sizeof(*seen));
	if (e->data) {
		if (h)
			eb_sha256_update(h, e->data, e->size);
		return e->size ? fn(ctx, e->data, e->size, err) : 0;
	}
	if (e->member)
		return read_member(e, buf, fn, ctx, h, err);
	if ((rc = open_src(e, &fd, seen, err)) < 0)
		return rc;
	while (left > 0) {
		size_t want = left < IO_CHUNK ? (size_t)left : IO_CHUNK;
		ssize_t n = read(fd, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", e->src);
			goto done;
		}
		if (n == 0) {
			rc = eb_error_set(err, EB_EIO,
					  "'%s' changed size while being read (shrank from %llu bytes)",
					  e->src, (unsigned long long)e->size);
			goto done;
		}
		if (h)
			eb_sha256_update(h, buf, (size_t)n);
		if ((rc = fn(ctx, buf, (size_t)n, err)) < 0)
			goto done;
		left -= (uint64_t)n;
	}
	{
		char extra;
		ssize_t n;
		do
			n = read(fd, &extra, 1);
		while (n < 0 && errno == EINTR);
		if (n > 0)
			rc = eb_error_set(err, EB_EIO,
					  "'%s' changed size while being read (grew past %llu bytes)",
					  e->src, (unsigned long long)e->size);
	}
	if (rc == 0 && fstat(fd, &after) == 0) {
		eb_layer__fstat_id_of(&after, &now);
		*stable = eb_layer__fstat_id_eq(seen, &now);
	}
done:
	close(fd);
	return rc;
}

static int discard_chunk(void *ctx, const void *data, size_t len, struct eb_error **err)
{
	(void)ctx;
	(void)data;
	(void)len;
	(void)err;
	return 0;
}

/* Hash the content of entry i if not done yet (digest kept on the entry). */
static int hash_content(struct entry *e, unsigned char *buf, struct eb_error **err)
{
	struct eb_sha256 h;
	struct fstat_id seen;
	int rc, stable;

	if (e->has_digest)
		return 0;
	eb_sha256_init(&h);
	if ((rc = read_content(e, buf, discard_chunk, NULL, &h, &seen, &stable, err)) < 0) {
		eb_sha256_abort(&h);
		return rc;
	}
	eb_sha256_final(&h, e->digest);
	e->has_digest = 1;
	e->has_rec = stable;
	e->rec = seen;
	return 0;
}

/* ---- the tar stream ---------------------------------------------------- */

struct wstate {
	const struct eb_layer_options *o;
	struct eb_blob_writer *bw;
	struct eb_sha256 diff;
	uint64_t diff_size;
	struct eb_compress *comp;
	struct eb_error **err;
	int failed;
	int discard; /* abandoning: swallow what libarchive still flushes */
	int learn;   /* hash content whose digest is not known yet, as it is written */
	uint64_t total; /* expected tar size, for o->on_progress */
};

/* The compressor's sink: hashed (digest) and written by the blob writer,
 * in this thread, while the workers deflate the blocks that follow. */
static int emit(void *ud, const void *p, size_t n, struct eb_error **err)
{
	struct wstate *s = ud;

	if (eb_blob_writer_write(s->bw, p, n, err) < 0) {
		s->failed = 1;
		return -1;
	}
	/* progress counts the tar bytes compressed, not those fed: the
	 * chunks in flight would otherwise show a layer done while its
	 * threads are still at work */
	if (s->o->on_progress && s->comp) {
		uint64_t done = eb_compress_consumed(s->comp);
		s->o->on_progress(s->o->progress_ud, done, s->total > done ? s->total : done);
	}
	return 0;
}

static la_ssize_t tar_write_cb(struct archive *a, void *ctx, const void *buf, size_t len)
{
	struct wstate *s = ctx;

	(void)a;
	if (s->discard)
		return (la_ssize_t)len;
	eb_sha256_update(&s->diff, buf, len);
	s->diff_size += len;
	if (eb_compress_write(s->comp, buf, len, s->err) < 0) {
		s->failed = 1;
		return -1;
	}
	return (la_ssize_t)len;
}

static int compressor_init(struct wstate *s, struct eb_error **err)
{
	return eb_compress_new(&s->comp, compress_kind(s->o->compression), effective_level(s->o),
			       s->o->threads, emit, s, err);
}

static void compressor_end(struct wstate *s)
{
	eb_compress_free(s->comp);
	s->comp = NULL;
}

static int has_non_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 1;
	return 0;
}

/* path NULL: the failure is about the archive as a whole. */
static int archive_fail(struct wstate *s, struct archive *a, const char *path)
{
	const char *why = archive_error_string(a) ? archive_error_string(a) : "unknown error";

	/* A failure inside our write callback already set the real error. */
	if (s->failed)
		return -EB_EIO;
	if (path)
		return eb_error_set(s->err, EB_EFAIL, "cannot write '%s' into the layer: %s", path,
				    why);
	return eb_error_set(s->err, EB_EFAIL, "cannot write the layer tar: %s", why);
}

struct data_ctx {
	struct archive *a;
	struct wstate *s;
	const char *path;
};

static int data_chunk(void *ctx, const void *data, size_t len, struct eb_error **err)
{
	struct data_ctx *d = ctx;
	la_ssize_t n;

	(void)err;
	n = archive_write_data(d->a, data, len);
	if (n < 0 || (size_t)n != len)
		return archive_fail(d->s, d->a, d->path);
	return 0;
}

static int write_entries(struct eb_layer_builder *b, struct wstate *s, struct archive *a,
			 int have_utf8, unsigned char *buf)
{
	const struct eb_layer_options *o = s->o;
	struct archive_entry *ae = archive_entry_new();
	int rc = 0;

	if (!ae)
		abort();
	for (size_t i = 0; i < b->n && rc == 0; i++) {
		struct entry *e = &b->v[i];
		struct entry *c = e->content != SIZE_MAX ? &b->v[e->content] : NULL;
		const char *hl = e->linkto != SIZE_MAX ? b->v[e->linkto].path : NULL;
		int r;

		if (!have_utf8 && (has_non_ascii(e->path) || (e->link && has_non_ascii(e->link)))) {
			rc = eb_error_set(s->err, EB_EFAIL,
					  "cannot write the non-ASCII path '%s' reproducibly: the "
					  "C.UTF-8 locale is not available", e->path);
			break;
		}
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e->path);
		archive_entry_set_mtime(ae, (time_t)o->epoch, 0);
		archive_entry_set_uid(ae, out_uid(e, o));
		archive_entry_set_gid(ae, out_gid(e, o));
		archive_entry_set_perm(ae, (mode_t)out_mode(e, c, o));
		switch (e->type) {
		case T_DIR:
			archive_entry_set_filetype(ae, AE_IFDIR);
			break;
		case T_SYMLINK:
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, e->link);
			break;
		case T_FILE:
		case T_HARDLINK:
			archive_entry_set_filetype(ae, AE_IFREG);
			if (hl) {
				archive_entry_set_hardlink(ae, hl);
				archive_entry_set_size(ae, 0);
			} else {
				archive_entry_set_size(ae, (la_int64_t)c->size);
			}
			break;
		}
		r = archive_write_header(a, ae);
		/* ARCHIVE_WARN: a name that is not UTF-8 went out as binary
		 * (hdrcharset=BINARY), which is still deterministic. */
		if (r < ARCHIVE_WARN) {
			rc = archive_fail(s, a, e->path);
			break;
		}
		if (c && !hl && c->size) {
			struct data_ctx d = { a, s, e->path };
			struct eb_sha256 h;
			char got[EB_DIGEST_STR_LEN + 1];
			struct fstat_id seen;
			int stable;

			/* When a cache key was computed, it promised this content:
			 * check the bytes we write are the bytes we hashed.  Content
			 * not hashed yet is hashed from the very bytes written, so
			 * a key made from it afterwards describes this tar. */
			int check = c->has_digest, learn = !check && s->learn;

			if (check || learn)
				eb_sha256_init(&h);
			rc = read_content(c, buf, data_chunk, &d, check || learn ? &h : NULL, &seen,
					  &stable, s->err);
			if (rc < 0) {
				if (check || learn)
					eb_sha256_abort(&h);
			} else if (check || learn) {
				eb_sha256_final(&h, got);
				if (check && strcmp(got, c->digest) != 0 && c->member) {
					rc = eb_error_set(s->err, EB_EIO,
							  "'%s' in '%s' does not have the bytes "
							  "it was added with", c->path, c->src);
				} else if (check && strcmp(got, c->digest) != 0) {
					rc = eb_error_set(s->err, EB_EIO,
							  "'%s' changed while the layer was "
							  "being built", c->src ? c->src : c->path);
				} else {
					memcpy(c->digest, got, sizeof(got));
					c->has_digest = 1;
					c->has_rec = stable;
					c->rec = seen;
				}
			}
		} else if (c && !hl && !c->has_digest && s->learn) {
			/* Empty: nothing to read, the digest is that of no bytes. */
			eb_sha256_digest("", 0, c->digest);
			c->has_digest = 1;
		}
	}
	archive_entry_free(ae);
	return rc;
}

/* The clock used to bound racy file-hash records; tests may skew it. */
static struct timespec clock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)__atomic_load_n(&clock_skew, __ATOMIC_RELAXED);
	return ts;
}

static int ts_lt(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec ? a->tv_sec < b->tv_sec : a->tv_nsec < b->tv_nsec;
}

/* Called before any content is read through b: keep the earliest time,
 * so every digest the builder holds was read at or after b->stamp even
 * if the clock steps back between calls. */
static void note_clock(struct eb_layer_builder *b)
{
	struct timespec now = clock_now();

	if (!b->has_stamp || ts_lt(&now, &b->stamp))
		b->stamp = now;
	b->has_stamp = 1;
}

/* learn: hash content whose digest is not known while writing it. */
static int write_layer(struct eb_layer_builder *b, const struct eb_layer_options *o,
		       struct eb_blobstore *bs, struct eb_layer_result *res, int learn,
		       struct eb_error **err)
{
	struct wstate s;
	struct archive *a = NULL;
	unsigned char *buf = NULL;
	locale_t loc, old = (locale_t)0;
	int rc;

	memset(res, 0, sizeof(*res));
	if ((rc = check_options(o, err)) < 0 || (rc = eb_layer__prepare(b, err)) < 0)
		return rc;
	note_clock(b);
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.err = err;
	s.learn = learn;
	for (size_t i = 0; o->on_progress && i < b->n; i++) /* a header each, and contents */
		s.total += 512 + (b->v[i].content == i ? (b->v[i].size + 511) / 512 * 512 : 0);
	if ((rc = eb_blob_writer_open(&s.bw, bs, err)) < 0)
		return rc;
	eb_sha256_init(&s.diff);
	buf = eb_xmalloc(IO_CHUNK);
	if ((rc = compressor_init(&s, err)) < 0)
		goto fail;

	/* libarchive converts names for pax records from the current
	 * locale's charset, so under "C" and under a UTF-8 locale the same
	 * non-ASCII name gives different bytes.  Pin the charset for this
	 * thread while the archive exists. */
	loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (loc)
		old = uselocale(loc);

	a = archive_write_new();
	if (!a)
		abort();
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, TAR_BLOCK) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, TAR_BLOCK) != ARCHIVE_OK ||
	    archive_write_open2(a, &s, NULL, tar_write_cb, NULL, NULL) != ARCHIVE_OK) {
		rc = archive_fail(&s, a, NULL);
		goto fail_locale;
	}
	if ((rc = write_entries(b, &s, a, loc != (locale_t)0, buf)) < 0)
		goto fail_locale;
	if (archive_write_close(a) != ARCHIVE_OK) {
		rc = archive_fail(&s, a, NULL);
		goto fail_locale;
	}
	archive_write_free(a);
	a = NULL;
	if (loc) {
		uselocale(old);
		freelocale(loc);
		loc = (locale_t)0;
	}

	if ((rc = eb_compress_finish(s.comp, err)) < 0)
		goto fail;
	compressor_end(&s);
	eb_sha256_final(&s.diff, res->diff_id);
	res->size = eb_blob_writer_size(s.bw);
	rc = eb_blob_writer_commit(s.bw, NULL, res->digest, err);
	s.bw = NULL;
	if (rc < 0)
		goto fail;
	res->diff_size = s.diff_size;
	res->media_type = eb_layer_media_type(o->compression);
	eb_layer_compressor_id(o, res->compressor);
	res->nentries = b->n;
	res->cached = 0;
	free(buf);
	return 0;

fail_locale:
	if (a) {
		/* archive_write_fail() would skip the flush but leaks libarchive's
		 * block buffer (3.6); let it flush into nothing instead. */
		s.discard = 1;
		archive_write_free(a);
	}
	if (loc) {
		uselocale(old);
		freelocale(loc);
	}
fail:
	compressor_end(&s);
	if (s.diff.ctx)
		eb_sha256_abort(&s.diff);
	eb_blob_writer_abort(s.bw);
	free(buf);
	memset(res, 0, sizeof(*res));
	return rc < 0 ? rc : -EB_EFAIL;
}

int eb_layer_write(struct eb_layer_builder *b, const struct eb_layer_options *o,
		   struct eb_blobstore *bs, struct eb_layer_result *res, struct eb_error **err)
{
	return write_layer(b, o, bs, res, 0, err);
}

/* ---- cache ------------------------------------------------------------- */

static void hash_str(struct eb_sha256 *h, const char *s)
{
	char len[24];
	int n = snprintf(len, sizeof(len), " %zu:", strlen(s));

	/* Length-prefixed, so no path or target can forge a field boundary. */
	eb_sha256_update(h, len, (size_t)n);
	eb_sha256_update(h, s, strlen(s));
}

/* The key of a prepared builder whose content digests are all known; or,
 * shape = 1, the same with each file's size in place of its digest, which
 * needs no digest.  Equal keys mean equal contents, so equal sizes: a
 * layer whose shape was never recorded is not in the cache (unless its
 * index was written before shapes were). */
static void layer_hash(const struct eb_layer_builder *b, const struct eb_layer_options *o,
		       int shape, char key_out[EB_DIGEST_STR_LEN + 1])
{
	struct eb_sha256 h;
	char comp[48];
	char line[128];
	int n;

	eb_layer_compressor_id(o, comp);
	eb_sha256_init(&h);
	/* libarchive writes the tar bytes, so its version is an input too. */
	n = snprintf(line, sizeof(line), "envbuild-layer%s %d\ntar libarchive-%d\ncompressor %s\n"
		     "epoch %lld\n", shape ? "-shape" : "", EB_LAYER_FORMAT_VERSION,
		     archive_version_number(), comp, (long long)o->epoch);
	eb_sha256_update(&h, line, (size_t)n);
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];
		const struct entry *c = e->content != SIZE_MAX ? &b->v[e->content] : NULL;
		char t = e->type == T_DIR ? 'd' : e->type == T_SYMLINK ? 'l'
			 : e->linkto != SIZE_MAX ? 'h' : 'f';

		n = snprintf(line, sizeof(line), "%c %04o %u %u", t, out_mode(e, c, o), out_uid(e, o),
			     out_gid(e, o));
		eb_sha256_update(&h, line, (size_t)n);
		hash_str(&h, e->path);
		if (t == 'f' && shape) {
			snprintf(line, sizeof(line), "%llu", (unsigned long long)c->size);
			hash_str(&h, line);
		} else if (t == 'f') {
			hash_str(&h, c->digest);
		} else if (t == 'l')
			hash_str(&h, e->link);
		else if (t == 'h')
			hash_str(&h, b->v[e->linkto].path);
		eb_sha256_update(&h, "\n", 1);
	}
	eb_sha256_final(&h, key_out);
}

int eb_layer_cache_key(struct eb_layer_builder *b, const struct eb_layer_options *o,
		       char key_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err)
{
	unsigned char *buf;
	int rc;

	if ((rc = check_options(o, err)) < 0 || (rc = eb_layer__prepare(b, err)) < 0)
		return rc;
	note_clock(b);
	buf = eb_xmalloc(IO_CHUNK);
	for (size_t i = 0; i < b->n; i++) {
		struct entry *e = &b->v[i];
		if (e->content == i && (rc = hash_content(e, buf, err)) < 0) {
			free(buf);
			return rc;
		}
	}
	free(buf);
	layer_hash(b, o, 0, key_out);
	return 0;
}

/* 1 and *res filled when the record (oci/cache.h, kind "layers") names a
 * blob still in the store and sound. */
static int cache_lookup(struct eb_blobstore *bs, const char *key,
			const struct eb_layer_options *o, struct eb_layer_result *res)
{
	json_t *root = NULL;
	const char *digest, *diff_id, *media;
	json_int_t size, diff_size, nentries;
	char comp[48];
	int hit = 0;

	/* Any trouble with the record is a miss: it is only a cache. */
	if (!eb_cache_record_get(bs, "layers", key, &root))
		goto done;
	if (json_unpack(root, "{s:s, s:s, s:I, s:I, s:s, s:I}", "digest", &digest,
			"diff_id", &diff_id, "size", &size, "diff_size", &diff_size,
			"media_type", &media, "nentries", &nentries) != 0)
		goto done;
	if (!eb_digest_valid(digest) || !eb_digest_valid(diff_id) || size < 0 || diff_size < 0 ||
	    nentries < 0 || strcmp(media, eb_layer_media_type(o->compression)) != 0)
		goto done;
	memset(res, 0, sizeof(*res));
	snprintf(res->digest, sizeof(res->digest), "%s", digest);
	snprintf(res->diff_id, sizeof(res->diff_id), "%s", diff_id);
	res->size = (uint64_t)size;
	res->diff_size = (uint64_t)diff_size;
	res->media_type = eb_layer_media_type(o->compression);
	eb_layer_compressor_id(o, comp);
	snprintf(res->compressor, sizeof(res->compressor), "%s", comp);
	res->nentries = (size_t)nentries;
	res->cached = 1;
	hit = 1;
done:
	json_decref(root);
	return hit;
}

static int cache_store(struct eb_blobstore *bs, const char *key,
		       const struct eb_layer_result *res, struct eb_error **err)
{
	json_t *root;
	int rc;

	root = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:I}", "key", key, "digest",
			 res->digest, "diff_id", res->diff_id, "size", (json_int_t)res->size,
			 "diff_size", (json_int_t)res->diff_size, "media_type", res->media_type,
			 "compressor", res->compressor, "nentries", (json_int_t)res->nentries);
	if (!root)
		abort();
	rc = eb_cache_record_put(bs, "layers", key, root, err);
	json_decref(root);
	return rc;
}

/* <root>/layers/<hex>.shape: an empty file saying that some layer of this
 * shape (see layer_hash()) was recorded.  Only a hint, so failing to make
 * it costs a later build some speed, never a wrong result. */
static char *shape_path(const struct eb_blobstore *bs, const char *shape)
{
	return eb_xasprintf("%s/layers/%s.shape", eb_blobstore_root(bs), eb_digest_hex(shape));
}

static int shape_seen(const struct eb_blobstore *bs, const char *shape)
{
	eb_autofree char *path = shape_path(bs, shape);

	return access(path, F_OK) == 0;
}

static void shape_record(const struct eb_blobstore *bs, const char *shape)
{
	eb_autofree char *path = shape_path(bs, shape);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

/* ---- file-hash cache ---------------------------------------------------- */

/*
 * <root>/filehash/<hex>.bin remembers, for one disk source (the builder's
 * roots: trees with their excludes, single files), the content digest of
 * each file under its stat data, as git's index does, so that keying an
 * unchanged tree takes the walk's lstat calls and no read.  All integers
 * little-endian:
 *
 *   "EBFHASH1" stamp_sec:8 stamp_nsec:4 count:8
 *   count x { dev:8 ino:8 size:8 mtime_sec:8 mtime_nsec:4 ctime_sec:8
 *             ctime_nsec:4 mode:4 sha256:32 path_len:4 path }, by path
 *   sha256 of everything above:32
 *
 * stamp is a time no digest in the file was read before.  The file is
 * replaced whole (temp + rename), so concurrent builds each leave a
 * complete file: the last one wins and records only the other had are
 * hashed again next time.  A file failing any check is ignored whole; an
 * error writing it is ignored too, since it only saves reads.
 */
#define FH_MAGIC "EBFHASH1"
#define FH_HEAD (8 + 8 + 4 + 8)
#define FH_REC (8 * 4 + 4 + 8 + 4 + 4 + 32 + 4)
#define FH_TAIL 32
/* A record is trusted only when the file's mtime and ctime are this much
 * older than the stamp.  A change made after the read gets timestamps
 * from the file system no earlier than about the read time, so it can
 * leave mtime and ctime as recorded only when those were within the file
 * system's granularity of the read (git's "racy git"): a coarse-clock
 * tick on most, 1 s on ext3 or HFS+, 2 s for FAT mtimes.  Files changed
 * in the 2 s before a build are simply hashed again by the next one. */
#define FH_RACY_SEC 2

struct fh_rec {
	const char *path;         /* into fh_cache.text, no NUL */
	size_t plen;
	struct fstat_id st;
	const unsigned char *sha; /* 32 bytes, into fh_cache.text */
};

struct fh_cache {
	char *dir;  /* <root>/filehash */
	char *file; /* NULL: no disk source, or no name for it */
	char *cwd;  /* to make relative sources absolute */
	struct eb_buf text;
	struct fh_rec *v;
	size_t n;
	struct timespec stamp;
};

static void put_le(struct eb_buf *b, uint64_t v, int nbytes)
{
	unsigned char c[8];

	for (int i = 0; i < nbytes; i++)
		c[i] = (unsigned char)(v >> (8 * i));
	eb_buf_add(b, c, (size_t)nbytes);
}

static uint64_t get_le(const unsigned char *p, int nbytes)
{
	uint64_t v = 0;

	for (int i = nbytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void digest_of_raw(const unsigned char raw[32], char out[EB_DIGEST_STR_LEN + 1])
{
	memcpy(out, "sha256:", 7);
	eb_hex_encode(out + 7, raw, 32);
}

/* Bytewise, a prefix first: the order the file is kept in. */
static int fh_pathcmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int fh_parse(struct fh_cache *fc)
{
	const unsigned char *p = (const unsigned char *)fc->text.ptr, *end;
	char sum[EB_DIGEST_STR_LEN + 1];
	unsigned char raw[32];
	uint64_t count;

	if (fc->text.len < FH_HEAD + FH_TAIL || memcmp(p, FH_MAGIC, 8) != 0)
		return -1;
	end = p + fc->text.len - FH_TAIL;
	eb_sha256_digest(p, (size_t)(end - p), sum);
	eb_digest_raw(sum, raw);
	if (memcmp(raw, end, FH_TAIL) != 0)
		return -1;
	fc->stamp.tv_sec = (time_t)(int64_t)get_le(p + 8, 8);
	fc->stamp.tv_nsec = (long)get_le(p + 16, 4);
	count = get_le(p + 20, 8);
	p += FH_HEAD;
	if (fc->stamp.tv_nsec >= 1000000000 || count > (uint64_t)(end - p) / FH_REC)
		return -1;
	fc->v = eb_xcalloc(count ? (size_t)count : 1, sizeof(*fc->v));
	for (uint64_t i = 0; i < count; i++) {
		struct fh_rec *r = &fc->v[i];

		if ((size_t)(end - p) < FH_REC)
			return -1;
		r->st.dev = get_le(p, 8);
		r->st.ino = get_le(p + 8, 8);
		r->st.size = get_le(p + 16, 8);
		r->st.mtime_sec = (int64_t)get_le(p + 24, 8);
		r->st.mtime_nsec = (uint32_t)get_le(p + 32, 4);
		r->st.ctime_sec = (int64_t)get_le(p + 36, 8);
		r->st.ctime_nsec = (uint32_t)get_le(p + 44, 4);
		r->st.mode = (uint32_t)get_le(p + 48, 4);
		r->sha = p + 52;
		r->plen = (size_t)get_le(p + 84, 4);
		p += FH_REC;
		if (r->plen == 0 || r->plen > (size_t)(end - p) || memchr(p, '\0', r->plen))
			return -1;
		r->path = (const char *)p;
		p += r->plen;
		/* Strictly sorted, or bsearch would miss records. */
		if (i && fh_pathcmp(r[-1].path, r[-1].plen, r->path, r->plen) >= 0)
			return -1;
		fc->n++;
	}
	return p == end ? 0 : -1;
}

static void fh_open(struct fh_cache *fc, const struct eb_blobstore *bs,
		    const struct eb_layer_builder *b)
{
	char **roots;
	struct eb_sha256 h;
	char name[EB_DIGEST_STR_LEN + 1];
	size_t n = b->nroots;

	memset(fc, 0, sizeof(*fc));
	eb_buf_init(&fc->text, 0);
	for (size_t i = 0; i < b->n; i++)
		n += b->v[i].file_root;
	if (!n)
		return;
	fc->cwd = getcwd(NULL, 0);
	if (!fc->cwd)
		return;
	/* The same sources added in another order are the same file set. */
	roots = eb_xmalloc(n * sizeof(*roots));
	n = 0;
	for (size_t i = 0; i < b->nroots; i++)
		roots[n++] = eb_xstrdup(b->roots[i]);
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].file_root)
			roots[n++] = eb_layer__root_name("file", b->v[i].src, NULL, 0);
	eb_sort(roots, n, sizeof(*roots), eb_layer__cmp_strp);
	eb_sha256_init(&h);
	eb_sha256_update(&h, "envbuild-filehash 1\n", 20);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(roots[i - 1], roots[i]) != 0)
			hash_str(&h, roots[i]);
	eb_sha256_final(&h, name);
	for (size_t i = 0; i < n; i++)
		free(roots[i]);
	free(roots);
	fc->dir = eb_xasprintf("%s/filehash", eb_blobstore_root(bs));
	fc->file = eb_xasprintf("%s/%s.bin", fc->dir, eb_digest_hex(name));
	if (eb_fs_read_file(&fc->text, fc->file, FILEHASH_MAX, NULL) < 0 || fh_parse(fc) < 0) {
		free(fc->v);
		fc->v = NULL;
		fc->n = 0;
	}
}

static void fh_close(struct fh_cache *fc)
{
	free(fc->dir);
	free(fc->file);
	free(fc->cwd);
	free(fc->v);
	eb_buf_release(&fc->text);
}

static char *fh_abs(const struct fh_cache *fc, const char *src)
{
	return src[0] == '/' ? eb_xstrdup(src) : eb_path_join(fc->cwd, src);
}

static const struct fh_rec *fh_find(const struct fh_cache *fc, const char *path)
{
	size_t lo = 0, hi = fc->n, len = strlen(path);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = fh_pathcmp(fc->v[mid].path, fc->v[mid].plen, path, len);

		if (c == 0)
			return &fc->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* 1 unless both mtime and ctime are FH_RACY_SEC older than the stamp. */
static int fh_racy(const struct fstat_id *st, const struct timespec *stamp)
{
	int64_t lim = (int64_t)stamp->tv_sec - FH_RACY_SEC;
	uint32_t ns = (uint32_t)stamp->tv_nsec;

	return st->mtime_sec > lim || (st->mtime_sec == lim && st->mtime_nsec >= ns) ||
	       st->ctime_sec > lim || (st->ctime_sec == lim && st->ctime_nsec >= ns);
}

/* Give a digest to all content that needs no read from disk: bytes in
 * memory, empty files, and files whose stat (from the walk) matches a
 * record that is not racy. */
static void fh_lookup(const struct fh_cache *fc, struct eb_layer_builder *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct entry *e = &b->v[i];
		const struct fh_rec *r;
		char *abs;

		if (e->content != i || e->has_digest)
			continue;
		if (e->data || e->size == 0) {
			eb_sha256_digest(e->data ? e->data : (const unsigned char *)"", e->size,
					 e->digest);
			e->has_digest = 1;
			continue;
		}
		if (!fc->n || !e->has_st)
			continue;
		abs = fh_abs(fc, e->src);
		r = fh_find(fc, abs);
		free(abs);
		if (!r || !eb_layer__fstat_id_eq(&r->st, &e->st) || fh_racy(&r->st, &fc->stamp))
			continue;
		digest_of_raw(r->sha, e->digest);
		e->has_digest = 1;
		e->has_rec = 1;
		e->rec = r->st;
	}
}

struct fh_new {
	char *path;
	size_t plen;
	const struct entry *e;
};

static int cmp_fh_new(const void *a, const void *b)
{
	const struct fh_new *x = a, *y = b;

	return fh_pathcmp(x->path, x->plen, y->path, y->plen);
}

/* Record every digest the builder knows to belong to a stat, when that
 * differs from what the file holds. */
static void fh_save(const struct fh_cache *fc, const struct eb_layer_builder *b)
{
	struct fh_new *v;
	size_t n = 0, m = 0;
	int same;
	struct eb_buf out = EB_BUF_INIT;
	char sum[EB_DIGEST_STR_LEN + 1];
	unsigned char raw[32];

	if (!fc->file || !b->has_stamp)
		return;
	v = eb_xmalloc((b->n ? b->n : 1) * sizeof(*v));
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];

		/* Empty files are never looked up (see fh_lookup()). */
		if (e->content != i || !e->src || !e->has_digest || !e->has_rec || !e->size)
			continue;
		v[n].path = fh_abs(fc, e->src);
		v[n].plen = strlen(v[n].path);
		v[n].e = e;
		n++;
	}
	if (n > 1)
		eb_sort(v, n, sizeof(*v), cmp_fh_new);
	/* One source file added at two layer paths gives one record; if the
	 * two reads saw different stats, trust neither. */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		int agree = 1;

		while (j < n && cmp_fh_new(&v[i], &v[j]) == 0) {
			agree &= eb_layer__fstat_id_eq(&v[i].e->rec, &v[j].e->rec) &&
				 strcmp(v[i].e->digest, v[j].e->digest) == 0;
			free(v[j].path);
			j++;
		}
		if (agree)
			v[m++] = v[i];
		else
			free(v[i].path);
		i = j;
	}
	n = m;

	/* Unchanged records are not rewritten, unless one is racy: then it
	 * was just hashed again, and only the new stamp can clear it. */
	same = n == fc->n;
	for (size_t i = 0; i < n && same; i++) {
		eb_digest_raw(v[i].e->digest, raw);
		same = fh_pathcmp(v[i].path, v[i].plen, fc->v[i].path, fc->v[i].plen) == 0 &&
		       eb_layer__fstat_id_eq(&v[i].e->rec, &fc->v[i].st) && memcmp(raw, fc->v[i].sha, 32) == 0 &&
		       !fh_racy(&fc->v[i].st, &fc->stamp);
	}
	if (same)
		goto done;

	eb_buf_init(&out, 0);
	eb_buf_add(&out, FH_MAGIC, 8);
	put_le(&out, (uint64_t)(int64_t)b->stamp.tv_sec, 8);
	put_le(&out, (uint64_t)b->stamp.tv_nsec, 4);
	put_le(&out, n, 8);
	for (size_t i = 0; i < n; i++) {
		const struct fstat_id *st = &v[i].e->rec;

		put_le(&out, st->dev, 8);
		put_le(&out, st->ino, 8);
		put_le(&out, st->size, 8);
		put_le(&out, (uint64_t)st->mtime_sec, 8);
		put_le(&out, st->mtime_nsec, 4);
		put_le(&out, (uint64_t)st->ctime_sec, 8);
		put_le(&out, st->ctime_nsec, 4);
		put_le(&out, st->mode, 4);
		eb_digest_raw(v[i].e->digest, raw);
		eb_buf_add(&out, raw, 32);
		put_le(&out, v[i].plen, 4);
		eb_buf_add(&out, v[i].path, v[i].plen);
	}
	eb_sha256_digest(out.ptr, out.len, sum);
	eb_digest_raw(sum, raw);
	eb_buf_add(&out, raw, 32);
	if (mkdir(fc->dir, 0755) == 0 || errno == EEXIST)
		(void)eb_fs_write_atomic(fc->file, out.ptr, out.len, 0644, NULL);
	eb_buf_release(&out);
done:
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

int eb_layer_write_cached(struct eb_layer_builder *b, const struct eb_layer_options *o,
			  struct eb_blobstore *bs, struct eb_layer_result *res,
			  char key_out[EB_DIGEST_STR_LEN + 1], struct eb_error **err)
{
	char key[EB_DIGEST_STR_LEN + 1], shape[EB_DIGEST_STR_LEN + 1];
	struct fh_cache fc;
	int rc, unknown = 0;

	memset(res, 0, sizeof(*res));
	if ((rc = check_options(o, err)) < 0 || (rc = eb_layer__prepare(b, err)) < 0)
		return rc;
	note_clock(b);
	fh_open(&fc, bs, b);
	fh_lookup(&fc, b);
	for (size_t i = 0; i < b->n && !unknown; i++)
		unknown = b->v[i].content == i && !b->v[i].has_digest;
	layer_hash(b, o, 1, shape);

	/* a shared cache may hold what this machine never saw */
	if (!unknown || shape_seen(bs, shape) || eb_cache_has_backends(bs)) {
		/* A hit is possible (an unchanged tree; files touched, or the
		 * same files checked out elsewhere): hash what is unknown
		 * first, so a hit compresses nothing.  On a miss those files
		 * are read twice, but only edits that keep every size get
		 * here and miss. */
		unsigned char *buf = eb_xmalloc(IO_CHUNK);

		for (size_t i = 0; i < b->n && rc == 0; i++)
			if (b->v[i].content == i)
				rc = hash_content(&b->v[i], buf, err);
		free(buf);
		if (rc < 0)
			goto out;
		layer_hash(b, o, 0, key);
		if (cache_lookup(bs, key, o, res)) {
			fh_save(&fc, b);
			goto out;
		}
		rc = write_layer(b, o, bs, res, 0, err);
	} else {
		/* A shape never recorded, so certainly a miss (a cold build,
		 * an edit that changed a size): hash each unknown file from
		 * the very bytes written into the tar and make the key after,
		 * reading every file once. */
		rc = write_layer(b, o, bs, res, 1, err);
		if (rc == 0)
			layer_hash(b, o, 0, key);
	}
	if (rc < 0)
		goto out;
	if ((rc = cache_store(bs, key, res, err)) < 0) {
		memset(res, 0, sizeof(*res));
		goto out;
	}
	shape_record(bs, shape);
	fh_save(&fc, b);
out:
	if (rc == 0 && key_out)
		memcpy(key_out, key, sizeof(key));
	fh_close(&fc);
	return rc;
}

/* ---- test instrumentation ---------------------------------------------- */

uint64_t eb_layer_test_files_read(void)
{
	return __atomic_load_n(&files_read, __ATOMIC_RELAXED);
}

void eb_layer_test_set_clock_skew(int64_t seconds)
{
	__atomic_store_n(&clock_skew, seconds, __ATOMIC_RELAXED);
}
