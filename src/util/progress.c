/*
 * progress.c - the progress sink of progress.h: a mutex around the
 * sink's function, so threads writing layers at once never interleave.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "util/progress.h"

void eb_progress_init(struct eb_progress *p, void (*fn)(void *ud, const struct eb_progress_event *ev),
		      void *ud)
{
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->ud = ud;
	pthread_mutex_init(&p->mu, NULL);
}

void eb_progress_destroy(struct eb_progress *p)
{
	if (p)
		pthread_mutex_destroy(&p->mu);
}

void eb_progress_emit(struct eb_progress *p, const struct eb_progress_event *ev)
{
	if (!p || !p->fn)
		return;
	pthread_mutex_lock(&p->mu);
	p->fn(p->ud, ev);
	pthread_mutex_unlock(&p->mu);
}

void eb_progress_key(struct eb_progress *p, const char *prefix, char *out, size_t size)
{
	unsigned long n;

	if (!p) {
		if (size)
			out[0] = '\0';
		return;
	}
	pthread_mutex_lock(&p->mu);
	n = ++p->next_key;
	pthread_mutex_unlock(&p->mu);
	snprintf(out, size, "%s-%lu", prefix, n);
}
