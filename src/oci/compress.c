/*
 * compress.c - parallel, deterministic layer compression: pigz's block
 * scheme over zlib for gzip, libzstd's workers for zstd, a pass-through
 * for none.  See compress.h for the format promises.
 *
 * Threads: the caller's thread fills 128 KiB blocks into a ring of job
 * slots, hands full ones to the workers and emits finished ones in order;
 * the workers only deflate.  One mutex guards the slot states; the bytes
 * of a slot belong to whoever holds its state (caller: FREE and DONE,
 * worker: BUSY), so they are touched without the lock.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "oci/compress.h"
#include "util/alloc.h"

/* pigz's defaults; both shape the output, so they are part of the id. */
#define GZ_BLOCK (128 * 1024)
#define GZ_DICT (32 * 1024)
/* zstd's job size: fixed (its default grows with the window, and with it
 * memory per worker); 1 MiB keeps 8 workers far below 64 MB. */
#define ZSTD_JOB (1024 * 1024)
#define ZSTD_OUT (128 * 1024)

enum job_state { J_FREE, J_READY, J_BUSY, J_DONE };

struct job {
	enum job_state st;
	uint64_t seq;
	int last;
	int failed;
	unsigned char *in;
	size_t in_len;
	unsigned char *dict;
	size_t dict_len;
	unsigned char *out;
	size_t out_len, out_cap;
	uLong crc;
};

struct eb_compress {
	enum eb_compress_kind kind;
	int level;
	unsigned threads;
	eb_compress_sink_fn sink;
	void *ud;
	int finished;

	/* gzip */
	struct job *jobs;
	unsigned njobs;
	struct job *cur;     /* slot being filled, NULL: none yet */
	uint64_t next_seq;   /* seq the next filled slot gets */
	uint64_t next_emit;  /* seq the sink wants next */
	unsigned char *tail; /* the last GZ_DICT bytes of the block before cur */
	size_t tail_len;
	uLong crc;
	uint64_t isize;
	int header_out;
	z_stream z; /* the caller's own, for threads == 1 */
	int z_live;
	pthread_t *tids;
	unsigned nstarted;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	int stop;

	/* zstd */
	ZSTD_CCtx *zc;
	unsigned char *zout;
};

unsigned eb_compress_default_threads(void)
{
	long n = 0;
#ifdef CPU_COUNT
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
#endif
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	return n > EB_COMPRESS_MAX_THREADS ? EB_COMPRESS_MAX_THREADS : (unsigned)n;
}

void eb_compress_id(enum eb_compress_kind kind, int level, char out[48])
{
	switch (kind) {
	case EB_COMPRESS_GZIP:
		snprintf(out, 48, "gzip/zlib-%s/pigz-128k/%d", zlibVersion(), level);
		break;
	case EB_COMPRESS_ZSTD:
		snprintf(out, 48, "zstd/%s/mt-1m/%d", ZSTD_versionString(), level);
		break;
	case EB_COMPRESS_NONE:
		snprintf(out, 48, "none");
		break;
	}
}

/* ---- gzip: one block ---------------------------------------------------- */

static int deflate_init(z_stream *z, int level)
{
	memset(z, 0, sizeof(*z));
	/* raw deflate (-15): the gzip wrapper is written here, once; memLevel
	 * 8 and the default strategy pinned because they shape the output */
	return deflateInit2(z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -1;
}

/* Deflate one block on its own: the same bytes whichever thread and
 * whatever that thread's z_stream did before (deflateReset forgets it). */
static void run_job(z_stream *z, struct job *j)
{
	int zr;

	j->failed = 1;
	if (deflateReset(z) != Z_OK)
		return;
	if (j->dict_len && deflateSetDictionary(z, j->dict, (uInt)j->dict_len) != Z_OK)
		return;
	z->next_in = j->in;
	z->avail_in = (uInt)j->in_len;
	j->out_len = 0;
	for (;;) {
		if (j->out_cap - j->out_len < 64) {
			j->out_cap *= 2;
			j->out = eb_xrealloc(j->out, j->out_cap);
		}
		z->next_out = j->out + j->out_len;
		z->avail_out = (uInt)(j->out_cap - j->out_len);
		/* a sync flush ends each block on a byte boundary, so the raw
		 * pieces concatenate; only the last one closes the stream */
		zr = deflate(z, j->last ? Z_FINISH : Z_SYNC_FLUSH);
		j->out_len = j->out_cap - z->avail_out;
		if (zr == Z_STREAM_ERROR)
			return;
		if (j->last ? zr == Z_STREAM_END : (z->avail_out != 0 && z->avail_in == 0))
			break;
	}
	j->crc = crc32(0L, j->in, (uInt)j->in_len);
	j->failed = 0;
}

static void *worker(void *arg)
{
	struct eb_compress *c = arg;
	z_stream z;
	int live = deflate_init(&z, c->level) == 0;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct job *pick = NULL;
		for (unsigned i = 0; i < c->njobs; i++) {
			struct job *j = &c->jobs[i];
			if (j->st == J_READY && (!pick || j->seq < pick->seq))
				pick = j;
		}
		if (!pick) {
			if (c->stop)
				break;
			pthread_cond_wait(&c->work_cv, &c->mu);
			continue;
		}
		pick->st = J_BUSY;
		pthread_mutex_unlock(&c->mu);
		if (live)
			run_job(&z, pick);
		else
			pick->failed = 1;
		pthread_mutex_lock(&c->mu);
		pick->st = J_DONE;
		pthread_cond_broadcast(&c->done_cv);
	}
	pthread_mutex_unlock(&c->mu);
	if (live)
		deflateEnd(&z);
	return NULL;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static int put_header(struct eb_compress *c, struct eb_error **err)
{
	/* what zlib's own gzip wrapper writes for this level: MTIME 0, XFL
	 * as zlib sets it, OS 255 (unknown), so the build host leaves no trace */
	unsigned char h[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255 };

	if (c->header_out)
		return 0;
	h[8] = c->level == 9 ? 2 : c->level < 2 ? 4 : 0;
	c->header_out = 1;
	return c->sink(c->ud, h, sizeof(h), err);
}

/* Emit finished slots in order; block: wait for the next one (there must
 * be one in flight). */
static int drain(struct eb_compress *c, int block, struct eb_error **err)
{
	for (;;) {
		struct job *j = &c->jobs[c->next_emit % c->njobs];
		int rc;

		if (c->next_emit == c->next_seq || j->seq != c->next_emit)
			return 0;
		pthread_mutex_lock(&c->mu);
		while (block && j->st != J_DONE)
			pthread_cond_wait(&c->done_cv, &c->mu);
		if (j->st != J_DONE) {
			pthread_mutex_unlock(&c->mu);
			return 0;
		}
		pthread_mutex_unlock(&c->mu);
		if (j->failed)
			return eb_error_set(err, EB_EFAIL, "gzip compression failed");
		if ((rc = put_header(c, err)) < 0 || (rc = c->sink(c->ud, j->out, j->out_len, err)) < 0)
			return rc;
		c->crc = crc32_combine(c->crc, j->crc, (z_off_t)j->in_len);
		c->isize += j->in_len;
		pthread_mutex_lock(&c->mu);
		j->st = J_FREE;
		pthread_mutex_unlock(&c->mu);
		c->next_emit++;
		block = 0;
	}
}

/* Make c->cur a free slot for the next block, primed with the tail. */
static int take_slot(struct eb_compress *c, struct eb_error **err)
{
	struct job *j = &c->jobs[c->next_seq % c->njobs];
	int rc;

	for (;;) {
		int free_now;
		pthread_mutex_lock(&c->mu);
		free_now = j->st == J_FREE;
		pthread_mutex_unlock(&c->mu);
		if (free_now)
			break;
		if ((rc = drain(c, 1, err)) < 0)
			return rc;
	}
	j->seq = c->next_seq;
	j->in_len = 0;
	j->last = 0;
	j->failed = 0;
	memcpy(j->dict, c->tail, c->tail_len);
	j->dict_len = c->tail_len;
	c->cur = j;
	return 0;
}

static int submit(struct eb_compress *c, int last, struct eb_error **err)
{
	struct job *j = c->cur;

	j->last = last;
	if (!last) {
		c->tail_len = j->in_len < GZ_DICT ? j->in_len : GZ_DICT;
		memcpy(c->tail, j->in + j->in_len - c->tail_len, c->tail_len);
	}
	c->cur = NULL;
	c->next_seq++;
	if (c->threads <= 1) {
		run_job(&c->z, j);
		j->st = J_DONE;
		return drain(c, 0, err);
	}
	/* start workers as blocks come, so a small layer never spawns one */
	if (c->nstarted < c->threads) {
		if (pthread_create(&c->tids[c->nstarted], NULL, worker, c) != 0) {
			if (c->nstarted == 0) {
				/* no thread at all: the caller deflates */
				run_job(&c->z, j);
				j->st = J_DONE;
				return drain(c, 0, err);
			}
		} else {
			c->nstarted++;
		}
	}
	pthread_mutex_lock(&c->mu);
	j->st = J_READY;
	pthread_cond_signal(&c->work_cv);
	pthread_mutex_unlock(&c->mu);
	return drain(c, 0, err);
}

static int gz_write(struct eb_compress *c, const unsigned char *p, size_t len,
		    struct eb_error **err)
{
	int rc;

	while (len > 0) {
		size_t n;
		if (!c->cur && (rc = take_slot(c, err)) < 0)
			return rc;
		n = GZ_BLOCK - c->cur->in_len;
		if (n > len)
			n = len;
		memcpy(c->cur->in + c->cur->in_len, p, n);
		c->cur->in_len += n;
		p += n;
		len -= n;
		if (c->cur->in_len == GZ_BLOCK && (rc = submit(c, 0, err)) < 0)
			return rc;
	}
	return 0;
}

static int gz_finish(struct eb_compress *c, struct eb_error **err)
{
	unsigned char t[8];
	int rc;

	if (!c->cur && (rc = take_slot(c, err)) < 0)
		return rc;
	if ((rc = submit(c, 1, err)) < 0)
		return rc;
	while (c->next_emit < c->next_seq)
		if ((rc = drain(c, 1, err)) < 0)
			return rc;
	if ((rc = put_header(c, err)) < 0)
		return rc;
	put_le32(t, (uint32_t)c->crc);
	put_le32(t + 4, (uint32_t)c->isize);
	return c->sink(c->ud, t, sizeof(t), err);
}

/* ---- zstd --------------------------------------------------------------- */

static int zstd_feed(struct eb_compress *c, const void *data, size_t len, int end,
		     struct eb_error **err)
{
	ZSTD_inBuffer in = { data, len, 0 };
	size_t left;
	int rc;

	do {
		ZSTD_outBuffer out = { c->zout, ZSTD_OUT, 0 };
		left = ZSTD_compressStream2(c->zc, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return eb_error_set(err, EB_EFAIL, "zstd compression failed: %s",
					    ZSTD_getErrorName(left));
		if (out.pos && (rc = c->sink(c->ud, c->zout, out.pos, err)) < 0)
			return rc;
	} while (end ? left != 0 : in.pos < in.size);
	return 0;
}

/* ---- the interface ------------------------------------------------------ */

int eb_compress_new(struct eb_compress **out, enum eb_compress_kind kind, int level,
		    unsigned threads, eb_compress_sink_fn sink, void *sink_ud,
		    struct eb_error **err)
{
	struct eb_compress *c = eb_xcalloc(1, sizeof(*c));

	*out = NULL;
	c->kind = kind;
	c->level = level;
	c->threads = threads ? threads : eb_compress_default_threads();
	if (c->threads > EB_COMPRESS_MAX_THREADS)
		c->threads = EB_COMPRESS_MAX_THREADS;
	c->sink = sink;
	c->ud = sink_ud;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work_cv, NULL);
	pthread_cond_init(&c->done_cv, NULL);
	switch (kind) {
	case EB_COMPRESS_NONE:
		break;
	case EB_COMPRESS_GZIP:
		if (deflate_init(&c->z, level) < 0)
			goto fail_gzip;
		c->z_live = 1;
		/* two slots per thread: one being deflated, one waiting, so
		 * no worker idles while the caller emits */
		c->njobs = c->threads * 2;
		c->jobs = eb_xcalloc(c->njobs, sizeof(*c->jobs));
		for (unsigned i = 0; i < c->njobs; i++) {
			struct job *j = &c->jobs[i];
			j->in = eb_xmalloc(GZ_BLOCK);
			j->dict = eb_xmalloc(GZ_DICT);
			j->out_cap = deflateBound(&c->z, GZ_BLOCK) + 64;
			j->out = eb_xmalloc(j->out_cap);
		}
		c->tail = eb_xmalloc(GZ_DICT);
		c->tids = eb_xcalloc(c->threads, sizeof(*c->tids));
		c->crc = crc32(0L, Z_NULL, 0);
		break;
	case EB_COMPRESS_ZSTD:
		c->zc = ZSTD_createCCtx();
		if (!c->zc)
			goto fail_zstd;
		/* Always >= 1 worker: frames then depend on the job size, never
		 * on the worker count (0 workers would differ).  No checksum, no
		 * content size (unknown when streaming anyway). */
		if (ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_compressionLevel, level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_checksumFlag, 0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_contentSizeFlag, 0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_nbWorkers, (int)c->threads)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_jobSize, ZSTD_JOB)))
			goto fail_zstd;
		c->zout = eb_xmalloc(ZSTD_OUT);
		break;
	default:
		eb_compress_free(c);
		return eb_error_set(err, EB_EINVALID, "unknown compression %d", (int)kind);
	}
	*out = c;
	return 0;

fail_gzip:
	eb_compress_free(c);
	return eb_error_set(err, EB_EFAIL, "cannot initialise gzip compression");
fail_zstd:
	eb_compress_free(c);
	return eb_error_set(err, EB_EFAIL,
			    "cannot configure multi-threaded zstd level %d (libzstd without threads?)",
			    level);
}

int eb_compress_write(struct eb_compress *c, const void *data, size_t len,
		      struct eb_error **err)
{
	if (c->finished)
		return eb_error_set(err, EB_EFAIL, "write after the end of the compressed stream");
	if (!len)
		return 0;
	switch (c->kind) {
	case EB_COMPRESS_GZIP:
		return gz_write(c, data, len, err);
	case EB_COMPRESS_ZSTD:
		return zstd_feed(c, data, len, 0, err);
	case EB_COMPRESS_NONE:
		break;
	}
	return c->sink(c->ud, data, len, err);
}

int eb_compress_finish(struct eb_compress *c, struct eb_error **err)
{
	if (c->finished)
		return eb_error_set(err, EB_EFAIL, "the compressed stream is already finished");
	c->finished = 1;
	switch (c->kind) {
	case EB_COMPRESS_GZIP:
		return gz_finish(c, err);
	case EB_COMPRESS_ZSTD:
		return zstd_feed(c, NULL, 0, 1, err);
	case EB_COMPRESS_NONE:
		break;
	}
	return 0;
}

void eb_compress_free(struct eb_compress *c)
{
	if (!c)
		return;
	if (c->nstarted) {
		pthread_mutex_lock(&c->mu);
		c->stop = 1;
		/* a job left READY by a failed run is dropped, not deflated */
		for (unsigned i = 0; i < c->njobs; i++)
			if (c->jobs[i].st == J_READY)
				c->jobs[i].st = J_FREE;
		pthread_cond_broadcast(&c->work_cv);
		pthread_mutex_unlock(&c->mu);
		for (unsigned i = 0; i < c->nstarted; i++)
			pthread_join(c->tids[i], NULL);
	}
	for (unsigned i = 0; i < c->njobs; i++) {
		free(c->jobs[i].in);
		free(c->jobs[i].dict);
		free(c->jobs[i].out);
	}
	free(c->jobs);
	free(c->tids);
	free(c->tail);
	if (c->z_live)
		deflateEnd(&c->z);
	ZSTD_freeCCtx(c->zc);
	free(c->zout);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->work_cv);
	pthread_cond_destroy(&c->done_cv);
	free(c);
}
