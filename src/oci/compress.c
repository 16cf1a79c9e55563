/*
 * compress.c - parallel, deterministic layer compression: independent
 * 1 MiB gzip members (oci/deflate.c: libdeflate, or zlib) for gzip,
 * libzstd's workers for zstd, a pass-through for none.  See compress.h
 * for the format promises.
 *
 * Threads: the caller's thread fills 1 MiB chunks into job slots, hands
 * full ones to the workers and emits finished ones in order; the workers
 * only deflate.  One mutex guards the slot states; the bytes of a slot
 * belong to whoever holds its state (caller: FREE, FILL and DONE, worker:
 * BUSY), so they are touched without the lock.
 *
 * Memory: a slot is 2 MiB, allocated when first needed, two per worker
 * (one being deflated, one waiting) or one when the caller deflates.
 * Compressors made with threads 0 (every layer write) share one budget of
 * workers, the CPU count: several layers written at once would otherwise
 * each start a worker per CPU, each with its slots, for no speed, since
 * the CPUs are busy anyway.  A stream that finds the budget spent
 * deflates on its caller's thread and takes workers as they come free.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "oci/compress.h"
#include "oci/deflate.h"
#include "util/alloc.h"

/* The chunk each gzip member holds: it shapes the output, so it is part
 * of the id.  Measured on a 301 MB tar of /usr/lib/gcc + python3.11 at
 * level 6 (libdeflate 1.14): 64 KiB chunks 33.40% of the input, 128 KiB
 * 32.92%, 256 KiB 32.67%, 1 MiB 32.49%, 4 MiB 32.44%, one member 32.42%
 * (gzip -6: 32.71%); speed does not move with the chunk.  1 MiB is the
 * knee (0.07% from one member) at 2 MiB of buffers per job slot. */
#define GZ_CHUNK (1024 * 1024)
#define GZ_CHUNK_NAME "1m"
/* zstd's job size: fixed (its default grows with the window, and with it
 * memory per worker); 1 MiB keeps 8 workers far below 64 MB. */
#define ZSTD_JOB (1024 * 1024)
#define ZSTD_OUT (128 * 1024)

enum job_state { J_FREE, J_FILL, J_READY, J_BUSY, J_DONE };

struct job {
	enum job_state st;
	uint64_t seq;
	int failed;
	unsigned char *in;
	size_t in_len;
	unsigned char *out;
	size_t out_len, out_cap;
};

struct eb_compress {
	enum eb_compress_kind kind;
	int level;
	unsigned threads;
	eb_compress_sink_fn sink;
	void *ud;
	int finished;
	uint64_t consumed; /* input bytes whose compressed bytes the sink has */

	/* gzip */
	struct job *jobs;    /* room for 2 x threads slots */
	unsigned njobs;      /* slots allocated, in use or free */
	int shared;          /* workers from the process-wide budget */
	struct job *cur;     /* slot being filled, NULL: none yet */
	uint64_t next_seq;   /* seq the next filled slot gets */
	uint64_t next_emit;  /* seq the sink wants next */
	struct eb_deflate *d; /* the caller's own, for threads == 1 */
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
	{
		char lib[32];
		eb_deflate_library(lib, sizeof(lib));
		snprintf(out, 48, "gzip/%s/chunk-%s/%d", lib, GZ_CHUNK_NAME, level);
		break;
	}
	case EB_COMPRESS_ZSTD:
		snprintf(out, 48, "zstd/%s/mt-1m/%d", ZSTD_versionString(), level);
		break;
	case EB_COMPRESS_NONE:
		snprintf(out, 48, "none");
		break;
	}
}

/* ---- gzip: one member per chunk ---------------------------------------- */

/* Workers running for threads-0 compressors, process-wide. */
static pthread_mutex_t budget_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned budget_used;

/* max: the CPU count, every threads-0 stream's thread count */
static int budget_take(unsigned max)
{
	int ok;

	pthread_mutex_lock(&budget_mu);
	ok = budget_used < max;
	if (ok)
		budget_used++;
	pthread_mutex_unlock(&budget_mu);
	return ok;
}

static void budget_give(unsigned n)
{
	pthread_mutex_lock(&budget_mu);
	budget_used -= n;
	pthread_mutex_unlock(&budget_mu);
}

/* The same bytes whichever thread deflates the chunk: a member depends
 * on the chunk alone. */
static void run_job(struct eb_deflate *d, struct job *j)
{
	j->out_len = eb_deflate_member(d, j->in, j->in_len, j->out, j->out_cap);
	j->failed = j->out_len == 0;
}

static void *worker(void *arg)
{
	struct eb_compress *c = arg;
	struct eb_deflate *d = eb_deflate_new(c->level);

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct job *pick = NULL;
		/* the oldest first: the caller emits in order */
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
		if (d)
			run_job(d, pick);
		else
			pick->failed = 1;
		pthread_mutex_lock(&c->mu);
		pick->st = J_DONE;
		pthread_cond_broadcast(&c->done_cv);
	}
	pthread_mutex_unlock(&c->mu);
	eb_deflate_free(d);
	return NULL;
}

/* The slot holding chunk seq (one not yet emitted); under c->mu. */
static struct job *job_of_seq(struct eb_compress *c, uint64_t seq)
{
	for (unsigned i = 0; i < c->njobs; i++)
		if (c->jobs[i].st >= J_READY && c->jobs[i].seq == seq)
			return &c->jobs[i];
	return NULL;
}

/* Emit finished slots in order; block: wait for the next one (there must
 * be one in flight). */
static int drain(struct eb_compress *c, int block, struct eb_error **err)
{
	for (;;) {
		struct job *j;
		int rc;

		if (c->next_emit == c->next_seq)
			return 0;
		pthread_mutex_lock(&c->mu);
		j = job_of_seq(c, c->next_emit);
		while (j && block && j->st != J_DONE)
			pthread_cond_wait(&c->done_cv, &c->mu);
		if (!j || j->st != J_DONE) {
			pthread_mutex_unlock(&c->mu);
			return 0;
		}
		pthread_mutex_unlock(&c->mu);
		if (j->failed)
			return eb_error_set(err, EB_EFAIL, "gzip compression failed");
		c->consumed += j->in_len;
		if ((rc = c->sink(c->ud, j->out, j->out_len, err)) < 0)
			return rc;
		pthread_mutex_lock(&c->mu);
		j->st = J_FREE;
		pthread_mutex_unlock(&c->mu);
		c->next_emit++;
		block = 0;
	}
}

/* Make c->cur a free slot for the next chunk: a free one, a new one while
 * the workers could use more, or the next to be emitted once it is. */
static int take_slot(struct eb_compress *c, struct eb_error **err)
{
	struct job *j = NULL;
	int rc;

	for (;;) {
		unsigned want = c->nstarted ? 2 * c->nstarted : 1;

		pthread_mutex_lock(&c->mu);
		for (unsigned i = 0; i < c->njobs && !j; i++)
			if (c->jobs[i].st == J_FREE)
				j = &c->jobs[i];
		if (!j && c->njobs < want) {
			j = &c->jobs[c->njobs];
			j->in = eb_xmalloc(GZ_CHUNK);
			j->out_cap = eb_deflate_bound(c->d, GZ_CHUNK);
			j->out = eb_xmalloc(j->out_cap);
			j->st = J_FREE;
			c->njobs++;
		}
		if (j)
			j->st = J_FILL;
		pthread_mutex_unlock(&c->mu);
		if (j)
			break;
		if ((rc = drain(c, 1, err)) < 0)
			return rc;
	}
	j->seq = c->next_seq;
	j->in_len = 0;
	j->failed = 0;
	c->cur = j;
	return 0;
}

static int submit(struct eb_compress *c, struct eb_error **err)
{
	struct job *j = c->cur;

	c->cur = NULL;
	c->next_seq++;
	/* start workers as blocks come, so a small layer never spawns one */
	if (c->threads > 1 && c->nstarted < c->threads && (!c->shared || budget_take(c->threads))) {
		if (pthread_create(&c->tids[c->nstarted], NULL, worker, c) == 0)
			c->nstarted++;
		else if (c->shared)
			budget_give(1);
	}
	if (!c->nstarted) {
		/* no worker: the caller deflates */
		run_job(c->d, j);
		pthread_mutex_lock(&c->mu);
		j->st = J_DONE;
		pthread_mutex_unlock(&c->mu);
		return drain(c, 0, err);
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
		n = GZ_CHUNK - c->cur->in_len;
		if (n > len)
			n = len;
		memcpy(c->cur->in + c->cur->in_len, p, n);
		c->cur->in_len += n;
		p += n;
		len -= n;
		if (c->cur->in_len == GZ_CHUNK && (rc = submit(c, err)) < 0)
			return rc;
	}
	return 0;
}

/* The partial last chunk is a member too; an empty stream is one empty
 * member (a gzip file has at least one), a stream of whole chunks ends
 * with its last full one. */
static int gz_finish(struct eb_compress *c, struct eb_error **err)
{
	int rc;

	if (c->cur || c->next_seq == 0) {
		if (!c->cur && (rc = take_slot(c, err)) < 0)
			return rc;
		if ((rc = submit(c, err)) < 0)
			return rc;
	}
	while (c->next_emit < c->next_seq)
		if ((rc = drain(c, 1, err)) < 0)
			return rc;
	return 0;
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
	c->shared = threads == 0;
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
		if (!(c->d = eb_deflate_new(level)))
			goto fail_gzip;
		/* two slots per thread: one being deflated, one waiting, so
		 * no worker idles while the caller emits (see take_slot()) */
		c->jobs = eb_xcalloc(c->threads * 2, sizeof(*c->jobs));
		c->tids = eb_xcalloc(c->threads, sizeof(*c->tids));
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
		c->consumed += len; /* streamed: out as it goes in */
		return zstd_feed(c, data, len, 0, err);
	case EB_COMPRESS_NONE:
		break;
	}
	c->consumed += len;
	return c->sink(c->ud, data, len, err);
}

uint64_t eb_compress_consumed(const struct eb_compress *c)
{
	return c->consumed;
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
		if (c->shared)
			budget_give(c->nstarted);
	}
	for (unsigned i = 0; i < c->njobs; i++) {
		free(c->jobs[i].in);
		free(c->jobs[i].out);
	}
	free(c->jobs);
	free(c->tids);
	eb_deflate_free(c->d);
	ZSTD_freeCCtx(c->zc);
	free(c->zout);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->work_cv);
	pthread_cond_destroy(&c->done_cv);
	free(c);
}
