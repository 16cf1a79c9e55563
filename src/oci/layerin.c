/*
 * layerin.c - a layer blob read as tar with its diff_id checked (see
 * layerin.h): a "raw" libarchive reader, or for gzip the member reader
 * (oci/gunzip.h), decompresses and hashes on a thread of its own, a few
 * buffers ahead, while the caller's tar reader parses what came before:
 * inflating a base layer is most of reading it, and the two now take two
 * cores.
 *
 * Threads: the inflater owns in->raw and the hash until it ends; the
 * ring's counters are under in->mu; a buffer belongs to the inflater
 * until it is counted in, to the tar reader until it is released (on the
 * next read callback: libarchive keeps using the last buffer until then).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/gunzip.h"
#include "oci/layerin.h"
#include "util/alloc.h"
#include "util/digest.h"

#define NBUF 4
#define BUFSZ (256 * 1024)

struct eb_layerin {
	char *path, *diff_id;
	struct archive *tar;
	struct archive *raw; /* any filter, "raw" format: the uncompressed tar */
	/* or a gzip blob mapped and decompressed member by member */
	struct eb_gunzip *gz;
	void *map;
	size_t maplen;
	size_t dropped; /* the mapping's pages before this are given back */
	struct eb_sha256 h;
	int hashing, threaded;
	/* the ring between the inflater and the tar reader */
	pthread_t th;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t space, data;
	unsigned head, count; /* head: the oldest filled buffer */
	int held;             /* the tar reader still uses buf[head] */
	int stop;
	la_ssize_t len[NBUF]; /* 0: the end, < 0: an error (errmsg) */
	char errmsg[256];
	char *buf[NBUF];
};

/* A mapped blob's pages behind the reader dropped, a few MiB at a time:
 * the kernel keeps them in its page cache but they leave this process's
 * RSS, which would otherwise grow by the whole compressed layer (a 68 MB
 * base was most of a 3 GB build's peak). */
#define DROP_STEP (4u << 20)

static void drop_behind(struct eb_layerin *in)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t upto = eb_gunzip_consumed(in->gz) & ~(page - 1);

	if (upto < in->dropped + DROP_STEP)
		return;
	(void)madvise((char *)in->map + in->dropped, upto - in->dropped, MADV_DONTNEED);
	in->dropped = upto;
}

static void *inflater(void *arg)
{
	struct eb_layerin *in = arg;
	char msg[200];

	for (;;) {
		unsigned slot;
		la_ssize_t n;

		pthread_mutex_lock(&in->mu);
		while (in->count == NBUF && !in->stop)
			pthread_cond_wait(&in->space, &in->mu);
		if (in->stop) {
			pthread_mutex_unlock(&in->mu);
			break;
		}
		slot = (in->head + in->count) % NBUF;
		pthread_mutex_unlock(&in->mu);
		if (in->gz) {
			n = eb_gunzip_read(in->gz, in->buf[slot], BUFSZ, msg, sizeof(msg));
			drop_behind(in);
		} else
			n = archive_read_data(in->raw, in->buf[slot], BUFSZ);
		if (n > 0 && in->hashing)
			eb_sha256_update(&in->h, in->buf[slot], (size_t)n);
		pthread_mutex_lock(&in->mu);
		if (n < 0)
			snprintf(in->errmsg, sizeof(in->errmsg), "%s",
				 in->gz ? msg : archive_error_string(in->raw));
		in->len[slot] = n;
		in->count++;
		pthread_cond_signal(&in->data);
		pthread_mutex_unlock(&in->mu);
		if (n <= 0)
			break;
	}
	return NULL;
}

static la_ssize_t raw_read(struct archive *a, void *ud, const void **buf)
{
	struct eb_layerin *in = ud;
	la_ssize_t n;

	pthread_mutex_lock(&in->mu);
	if (in->held) {
		in->head = (in->head + 1) % NBUF;
		in->count--;
		in->held = 0;
		pthread_cond_signal(&in->space);
	}
	while (in->count == 0)
		pthread_cond_wait(&in->data, &in->mu);
	n = in->len[in->head];
	/* the end or an error stays at the head for every later call */
	if (n > 0) {
		in->held = 1;
		*buf = in->buf[in->head];
	} else if (n < 0) {
		archive_set_error(a, EIO, "%s", in->errmsg);
	}
	pthread_mutex_unlock(&in->mu);
	return n < 0 ? -1 : n;
}

static void stop_inflater(struct eb_layerin *in)
{
	if (!in->started)
		return;
	pthread_mutex_lock(&in->mu);
	in->stop = 1;
	pthread_cond_broadcast(&in->space);
	pthread_mutex_unlock(&in->mu);
	pthread_join(in->th, NULL);
	in->started = 0;
}

/* The blob mapped, when it is gzip and libdeflate can read it (the
 * member-by-member reader); else 0 and nothing mapped. */
static int map_gzip(struct eb_layerin *in)
{
#ifdef HAVE_LIBDEFLATE
	struct stat st;
	int fd = open(in->path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2) {
		close(fd);
		return 0;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	if (!eb_gunzip_is(m, (size_t)st.st_size)) {
		munmap(m, (size_t)st.st_size);
		return 0;
	}
	(void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	in->map = m;
	in->maplen = (size_t)st.st_size;
	in->gz = eb_gunzip_new(m, in->maplen);
	return 1;
#else
	(void)in;
	return 0;
#endif
}

int eb_layerin_open(struct eb_layerin **out, const char *path, const char *diff_id,
		    struct eb_error **err)
{
	struct eb_layerin *in = eb_xcalloc(1, sizeof(*in));
	struct archive_entry *re;
	int gz;

	*out = NULL;
	in->path = eb_xstrdup(path);
	in->tar = archive_read_new();
	if (!in->tar)
		abort();
	archive_read_support_format_tar(in->tar);
	gz = map_gzip(in);
	if (!gz && (!diff_id || !diff_id[0])) {
		archive_read_support_filter_all(in->tar);
		if (archive_read_open_filename(in->tar, path, 1 << 16) != ARCHIVE_OK)
			goto fail;
		*out = in;
		return 0;
	}
	if (diff_id && diff_id[0]) {
		in->diff_id = eb_xstrdup(diff_id);
		eb_sha256_init(&in->h);
		in->hashing = 1;
	}
	in->threaded = 1;
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->space, NULL);
	pthread_cond_init(&in->data, NULL);
	for (int i = 0; i < NBUF; i++)
		in->buf[i] = eb_xmalloc(BUFSZ);
	if (!gz) {
		in->raw = archive_read_new();
		if (!in->raw)
			abort();
		archive_read_support_filter_all(in->raw);
		archive_read_support_format_raw(in->raw);
		if (archive_read_open_filename(in->raw, path, 1 << 16) != ARCHIVE_OK ||
		    archive_read_next_header(in->raw, &re) != ARCHIVE_OK) {
			eb_error_set(err, EB_EIO, "cannot read base layer '%s': %s", path,
				     archive_error_string(in->raw));
			eb_layerin_free(in);
			return -EB_EIO;
		}
	}
	if (pthread_create(&in->th, NULL, inflater, in) != 0) {
		eb_error_set(err, EB_EFAIL, "cannot start a thread to read base layer '%s'", path);
		eb_layerin_free(in);
		return -EB_EFAIL;
	}
	in->started = 1;
	if (archive_read_open(in->tar, in, NULL, raw_read, NULL) != ARCHIVE_OK)
		goto fail;
	*out = in;
	return 0;
fail:
	eb_error_set(err, EB_EIO, "cannot read base layer '%s': %s", path,
		     archive_error_string(in->tar));
	eb_layerin_free(in);
	return -EB_EIO;
}

struct archive *eb_layerin_archive(struct eb_layerin *in)
{
	return in->tar;
}

int eb_layerin_finish(struct eb_layerin *in, struct eb_error **err)
{
	char got[EB_DIGEST_STR_LEN + 1];
	const void *buf;
	la_ssize_t n;

	if (!in->hashing)
		return 0;
	while ((n = raw_read(in->tar, in, &buf)) > 0)
		;
	/* the inflater has met the end (or an error) and is done with the hash */
	stop_inflater(in);
	eb_sha256_final(&in->h, got);
	in->hashing = 0;
	if (n < 0)
		return eb_error_set(err, EB_EINVALID, "base layer '%s' is not readable: %s",
				    in->path, archive_error_string(in->tar));
	if (strcmp(got, in->diff_id) != 0)
		return eb_error_set(err, EB_EINVALID,
				    "base layer '%s' does not match the image config: its content "
				    "hashes to %s, the config's diff_id is %s",
				    in->path, got, in->diff_id);
	return 0;
}

void eb_layerin_free(struct eb_layerin *in)
{
	if (!in)
		return;
	/* the inflater may be waiting for space: stopped before its archive
	 * and hash go */
	stop_inflater(in);
	archive_read_free(in->tar);
	if (in->hashing)
		eb_sha256_abort(&in->h);
	archive_read_free(in->raw);
	eb_gunzip_free(in->gz);
	if (in->map)
		munmap(in->map, in->maplen);
	if (in->threaded) {
		pthread_mutex_destroy(&in->mu);
		pthread_cond_destroy(&in->space);
		pthread_cond_destroy(&in->data);
		for (int i = 0; i < NBUF; i++)
			free(in->buf[i]);
	}
	free(in->path);
	free(in->diff_id);
	free(in);
}
