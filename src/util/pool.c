/*
 * pool.c - a worker function on n threads, joined (see pool.h).
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/pool.h"

size_t eb_pool_threads(int jobs, size_t nwork)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = jobs > 0 ? (size_t)jobs : (ncpu > 0 ? (size_t)ncpu : 1);

	if (n > nwork)
		n = nwork;
	return n ? n : 1;
}

void eb_pool_run(size_t n, void *(*fn)(void *), void *arg)
{
	pthread_t *th;

	if (n <= 1) {
		fn(arg);
		return;
	}
	th = eb_xcalloc(n, sizeof(*th));
	for (size_t i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fn, arg) != 0)
			abort(); /* only fails when the system is out of resources */
	for (size_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
}
