/*
 * progress.c - layer steps for the build's progress sink.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "assemble/progress.h"
#include "util/alloc.h"

/* an event per 256 KiB at most: the writer calls per tar block */
#define STEP_BYTES (256u << 10)

static void on_bytes(void *ud, uint64_t done, uint64_t total)
{
	struct eb_layer_step *s = ud;
	struct eb_progress_event ev = { EB_PROGRESS_BYTES, EB_STEP_LAYER, EB_OUTCOME_WRITTEN, s->key,
					s->name, done, total };

	if (done - s->last < STEP_BYTES && done != total)
		return;
	s->last = done;
	eb_progress_emit(s->p, &ev);
}

void eb_layer_step_begin(struct eb_layer_step *s, struct eb_progress *p, const char *target,
			 const char *what, struct eb_layer_options *lo)
{
	struct eb_progress_event ev = { EB_PROGRESS_START, EB_STEP_LAYER, EB_OUTCOME_WRITTEN, NULL,
					NULL, 0, 0 };

	memset(s, 0, sizeof(*s));
	if (!p)
		return;
	s->p = p;
	eb_progress_key(p, "layer", s->key, sizeof(s->key));
	if (what && strncmp(what, "envbuild: ", 10) == 0) /* the image history's prefix */
		what += 10;
	s->name = eb_xasprintf("%s: %s", target, what ? what : "layer");
	ev.key = s->key;
	ev.name = s->name;
	eb_progress_emit(p, &ev);
	lo->on_progress = on_bytes;
	lo->progress_ud = s;
}

void eb_layer_step_end(struct eb_layer_step *s)
{
	struct eb_progress_event ev = { EB_PROGRESS_END, EB_STEP_LAYER, EB_OUTCOME_WRITTEN, s->key,
					s->name, 0, 0 };

	if (!s->p)
		return;
	eb_progress_emit(s->p, &ev);
	free(s->name);
	s->name = NULL;
}
