/*
 * compress.h - a streaming layer compressor (gzip, zstd or none) that uses
 * every core while its output stays a function of the input bytes and the
 * level only, never of the number of threads or of the machine.
 *
 * gzip is a multi-member stream: the input is cut into fixed 1 MiB
 * chunks (boundaries set by the stream alone), each deflated on its own
 * on a thread pool, with no dictionary, into a whole gzip member (MTIME 0,
 * no name, OS 255; oci/deflate.h), the members written in order.  Every
 * gzip reader reads concatenated members (RFC 1952 section 2.2; eStargz
 * layers are the same shape).  zstd uses libzstd's workers with a fixed
 * job size, whose frames do not depend on the worker count (always at
 * least one worker, as zero workers emit different frames).
 *
 * Compressed bytes go to the sink in stream order, always from the thread
 * that calls eb_compress_write()/eb_compress_finish(), so the caller
 * hashes and stores them without locks while the workers deflate.  Memory
 * is bounded by the thread count (2 chunks in flight per thread, about
 * 4 MiB of buffers per thread), never by the stream's size.
 *
 * Ownership: eb_compress_new() returns a compressor freed with
 * eb_compress_free() (which also stops its threads, finished or not).
 *
 * Layering (core floor): oci/ may use util/ only here; no I/O of its own.
 */
#ifndef EB_OCI_COMPRESS_H
#define EB_OCI_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

enum eb_compress_kind {
	EB_COMPRESS_GZIP = 0,
	EB_COMPRESS_ZSTD = 1,
	EB_COMPRESS_NONE = 2,
};

/* The most threads a compressor uses: more buys nothing a layer needs
 * and costs memory. */
#define EB_COMPRESS_MAX_THREADS 8

/* Called in order with the compressed stream; < 0 stops the compressor
 * and is returned by the call that fed it (the sink sets *err). */
typedef int (*eb_compress_sink_fn)(void *ud, const void *data, size_t len,
				   struct eb_error **err);

struct eb_compress;

/* level: gzip 1..9, zstd 1..19 (checked by the caller).  threads 0: the
 * online CPUs, shared for gzip with every other threads-0 compressor
 * alive (a stream may get none, then its caller's thread deflates);
 * at most EB_COMPRESS_MAX_THREADS either way. */
int eb_compress_new(struct eb_compress **out, enum eb_compress_kind kind, int level,
		    unsigned threads, eb_compress_sink_fn sink, void *sink_ud,
		    struct eb_error **err);
int eb_compress_write(struct eb_compress *c, const void *data, size_t len,
		      struct eb_error **err);
/* How much of the input the sink has been given the compressed bytes of
 * (for progress: chunks in flight on the threads are not done yet). */
uint64_t eb_compress_consumed(const struct eb_compress *c);
/* Flush everything and end the stream; nothing may be written after. */
int eb_compress_finish(struct eb_compress *c, struct eb_error **err);
void eb_compress_free(struct eb_compress *c);

/* What makes the bytes, e.g. "gzip/libdeflate-1.14/chunk-1m/6": goes into
 * every layer cache key, so changing the scheme, the block size or the
 * library is a visible new compressor, never a silent digest change. */
void eb_compress_id(enum eb_compress_kind kind, int level, char out[48]);

/* The thread count threads=0 stands for on this machine. */
unsigned eb_compress_default_threads(void);

#endif
