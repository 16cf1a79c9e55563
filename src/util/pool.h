/*
 * pool.h - run one worker function on a few threads and wait for them: the
 * shape of every "up to one thread per core" loop in envbuild (the .debs
 * read at once, a base's layers, the layers of a source).  The worker
 * takes its own items from the caller's queue (under the caller's lock)
 * until none is left.
 *
 * Uses pthreads only; never prints.  Ownership: nothing is kept.
 */
#ifndef EB_UTIL_POOL_H
#define EB_UTIL_POOL_H

#include <stddef.h>

/* How many threads for nwork items: jobs when > 0 (--jobs), else the
 * online CPUs; at most nwork, at least 1. */
size_t eb_pool_threads(int jobs, size_t nwork);
/* fn(arg) on n threads at once (n <= 1: on the caller's thread), then
 * back when all have returned.  Aborts only when the system cannot start
 * a thread. */
void eb_pool_run(size_t n, void *(*fn)(void *), void *arg);

#endif
