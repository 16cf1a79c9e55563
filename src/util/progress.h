/*
 * progress.h - a sink for progress events of long work (layers written,
 * blobs uploaded), so that the module doing the work never prints: it
 * emits events, and the command decides how they are shown (a live
 * display on a terminal, one line per finished step in a log, nothing).
 *
 * A step is named by a key unique among the steps running at once (a
 * blob's digest, a layer's number): while it runs it starts, reports
 * bytes done and ends (a live display shows it); once finished, a DONE
 * event says what happened (a log shows that line).  Either half may
 * come alone.  Events may come
 * from any thread: eb_progress_emit() serialises them, so the sink's
 * function is never called twice at once.
 *
 * Ownership: a struct eb_progress is the caller's (init/destroy); the
 * strings of an event are borrowed for the call only.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_PROGRESS_H
#define EB_UTIL_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

enum eb_progress_kind {
	EB_PROGRESS_START, /* a step begins (total may be 0: unknown) */
	EB_PROGRESS_BYTES, /* done bytes of total so far */
	EB_PROGRESS_END,   /* a started step is over (its verdict, if any, is a DONE) */
	EB_PROGRESS_DONE,  /* a step finished: outcome, done = its size (needs no START) */
	EB_PROGRESS_RETRY, /* a transfer broke and is resumed or restarted */
};

enum eb_progress_step {
	EB_STEP_LAYER, /* a layer built (or taken from the cache) */
	EB_STEP_BLOB,  /* a blob pushed (uploaded, mounted, found there) */
	EB_STEP_BASE,  /* a base image pulled */
	EB_STEP_DOC,   /* a manifest, index or tag put */
};

enum eb_progress_outcome {
	EB_OUTCOME_WRITTEN,  /* a layer compressed and stored */
	EB_OUTCOME_CACHED,   /* a layer from the cache: nothing compressed */
	EB_OUTCOME_UPLOADED, /* a blob sent */
	EB_OUTCOME_MOUNTED,  /* a blob mounted from another repository */
	EB_OUTCOME_EXISTS,   /* a blob the registry had */
	EB_OUTCOME_PULLED,   /* a base's documents (and layers) fetched */
	EB_OUTCOME_PUT,      /* a manifest, index or tag put */
};

struct eb_progress_event {
	enum eb_progress_kind kind;
	enum eb_progress_step step;
	enum eb_progress_outcome outcome; /* DONE only */
	const char *key;  /* unique among running steps */
	const char *name; /* what a person reads: "training: files src/ -> /app/" */
	uint64_t done, total;
};

struct eb_progress {
	void (*fn)(void *ud, const struct eb_progress_event *ev);
	void *ud;
	pthread_mutex_t mu;
	unsigned long next_key;
};

/* A sink calling fn(ud, ev) for every event, one at a time. */
void eb_progress_init(struct eb_progress *p, void (*fn)(void *ud, const struct eb_progress_event *ev),
		      void *ud);
void eb_progress_destroy(struct eb_progress *p);
/* Hand ev to the sink (p NULL: nothing; a step's events are then free). */
void eb_progress_emit(struct eb_progress *p, const struct eb_progress_event *ev);
/* A fresh key for a step that has no name of its own ("layer-7"), into
 * out (at least 24 bytes); "" when p is NULL. */
void eb_progress_key(struct eb_progress *p, const char *prefix, char *out, size_t size);

#endif
