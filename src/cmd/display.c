/*
 * display.c - the progress display of display.h: a live area of lines
 * on a terminal, or a log line per finished step.
 *
 * The live area is drawn with three control sequences every terminal
 * since the VT100 knows (cursor up, erase line, erase below), each line
 * cut to the terminal's width so that none wraps and the count of lines
 * to go back up stays right.  Redraws are at most ten a second, and at
 * once when a step starts or ends.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd/display.h"
#include "util/alloc.h"

/* live lines shown at most; the rest are counted on one line */
#define LIVE_MAX 8

struct live {
	char *key, *name;
	enum eb_progress_step step;
	uint64_t done, total;
	double start;
};

struct eb_display {
	enum eb_display_mode mode;
	FILE *out;
	struct eb_progress sink;
	double t0;
	struct live *v;
	size_t n, cap;
	unsigned drawn; /* lines of the live area on screen */
	double last_draw;
	unsigned finished, cached;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int eb_display_option(int opt, const char *arg, enum eb_display_mode *mode,
		      struct eb_error **err)
{
	if (opt == 'q') {
		*mode = EB_DISPLAY_NONE;
		return 1;
	}
	if (opt != 0x201)
		return 0;
	if (strcmp(arg, "auto") == 0)
		*mode = EB_DISPLAY_AUTO;
	else if (strcmp(arg, "tty") == 0)
		*mode = EB_DISPLAY_TTY;
	else if (strcmp(arg, "plain") == 0)
		*mode = EB_DISPLAY_PLAIN;
	else if (strcmp(arg, "none") == 0 || strcmp(arg, "quiet") == 0)
		*mode = EB_DISPLAY_NONE;
	else
		return eb_error_set(err, EB_EUSAGE,
				    "unknown --progress '%s' (use auto, tty, plain or none)", arg);
	return 1;
}

static unsigned term_width(FILE *out)
{
	struct winsize ws;

	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

static void fmt_size(char *buf, size_t n, uint64_t v)
{
	if (v >= 1024 * 1024)
		snprintf(buf, n, "%.1f MiB", v / 1048576.0);
	else if (v >= 1024)
		snprintf(buf, n, "%.1f KiB", v / 1024.0);
	else
		snprintf(buf, n, "%llu B", (unsigned long long)v);
}

/* One line of at most width-1 columns (bytes: names are mostly ASCII;
 * a cut never splits a UTF-8 sequence). */
static void put_cut(FILE *out, const char *s, unsigned width)
{
	size_t len = strlen(s), max = width > 1 ? width - 1 : 1;

	if (len > max) {
		len = max;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	fprintf(out, "\033[K%.*s\n", (int)len, s);
}

static void erase(struct eb_display *d)
{
	if (d->drawn)
		fprintf(d->out, "\033[%uA", d->drawn);
	fputs("\r\033[J", d->out);
	d->drawn = 0;
}

static void draw(struct eb_display *d)
{
	unsigned width = term_width(d->out);
	double t = now();
	char line[512];

	erase(d);
	if (d->n == 0) {
		fflush(d->out);
		return;
	}
	snprintf(line, sizeof(line), "[%5.1fs] %u done (%u cached), %zu running", t - d->t0,
		 d->finished, d->cached, d->n);
	put_cut(d->out, line, width);
	d->drawn = 1;
	for (size_t i = 0; i < d->n && i < LIVE_MAX; i++) {
		const struct live *l = &d->v[i];
		char done[32], total[32], rate[40] = "";
		double el = t - l->start;

		fmt_size(done, sizeof(done), l->done);
		if (l->total)
			fmt_size(total, sizeof(total), l->total);
		if (el > 0.2 && l->done) {
			fmt_size(rate, sizeof(rate), (uint64_t)(l->done / el));
			strcat(rate, "/s");
		}
		/* the figures first: a narrow terminal cuts the name, not them */
		snprintf(line, sizeof(line), "  %-5s %10s%s%-10s %12s  %s",
			 l->step == EB_STEP_BLOB ? "push" : l->step == EB_STEP_BASE ? "pull" : "layer",
			 done, l->total ? " / " : "   ", l->total ? total : "", rate, l->name);
		put_cut(d->out, line, width);
		d->drawn++;
	}
	if (d->n > LIVE_MAX) {
		snprintf(line, sizeof(line), "  ... and %zu more", d->n - LIVE_MAX);
		put_cut(d->out, line, width);
		d->drawn++;
	}
	fflush(d->out);
	d->last_draw = t;
}

static const char *outcome_name(enum eb_progress_outcome o)
{
	switch (o) {
	case EB_OUTCOME_WRITTEN: return "written";
	case EB_OUTCOME_CACHED: return "cached";
	case EB_OUTCOME_UPLOADED: return "uploaded";
	case EB_OUTCOME_MOUNTED: return "mounted";
	case EB_OUTCOME_EXISTS: return "exists";
	case EB_OUTCOME_PULLED: return "pulled";
	case EB_OUTCOME_PUT: return "put";
	}
	return "done";
}

static const char *step_name(enum eb_progress_step s)
{
	switch (s) {
	case EB_STEP_LAYER: return "layer";
	case EB_STEP_BLOB: return "blob";
	case EB_STEP_BASE: return "base";
	case EB_STEP_DOC: return "doc";
	}
	return "step";
}

static void plain(struct eb_display *d, const struct eb_progress_event *ev)
{
	char size[32] = "";

	if (ev->kind == EB_PROGRESS_RETRY) {
		fprintf(d->out, "[%5.1fs] %-5s retrying  %s\n", now() - d->t0, step_name(ev->step),
			ev->name ? ev->name : ev->key);
		fflush(d->out);
		return;
	}
	if (ev->kind != EB_PROGRESS_DONE)
		return;
	if (ev->step == EB_STEP_LAYER || ev->step == EB_STEP_BLOB)
		fmt_size(size, sizeof(size), ev->done);
	if (ev->step == EB_STEP_DOC)
		fprintf(d->out, "[%5.1fs] put   %s\n", now() - d->t0, ev->name ? ev->name : ev->key);
	else
		fprintf(d->out, "[%5.1fs] %-5s %-9s %9s  %s\n", now() - d->t0, step_name(ev->step),
			outcome_name(ev->outcome), size, ev->name ? ev->name : ev->key);
	fflush(d->out);
}

static struct live *find(struct eb_display *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].key, key) == 0)
			return &d->v[i];
	return NULL;
}

static void drop(struct eb_display *d, struct live *l)
{
	size_t i = (size_t)(l - d->v);

	free(l->key);
	free(l->name);
	memmove(&d->v[i], &d->v[i + 1], (d->n - i - 1) * sizeof(*d->v));
	d->n--;
}

/* Under the sink's mutex: one event at a time. */
static void on_event(void *ud, const struct eb_progress_event *ev)
{
	struct eb_display *d = ud;
	struct live *l;
	int now_draw = 0;

	if (d->mode == EB_DISPLAY_PLAIN) {
		plain(d, ev);
		return;
	}
	l = ev->key ? find(d, ev->key) : NULL;
	switch (ev->kind) {
	case EB_PROGRESS_START:
	case EB_PROGRESS_BYTES:
	case EB_PROGRESS_RETRY:
		if (!ev->key)
			return;
		if (!l) {
			EB_ALLOC_GROW(d->v, d->n + 1, d->cap);
			l = &d->v[d->n++];
			memset(l, 0, sizeof(*l));
			l->key = eb_xstrdup(ev->key);
			l->name = eb_xstrdup(ev->name ? ev->name : ev->key);
			l->step = ev->step;
			l->start = now();
			now_draw = 1;
		}
		l->done = ev->done;
		l->total = ev->total;
		if (ev->kind == EB_PROGRESS_RETRY) /* a fresh start: the rate too */
			l->start = now(), l->done = 0;
		break;
	case EB_PROGRESS_END:
		if (l) {
			drop(d, l);
			now_draw = 1;
		}
		break;
	case EB_PROGRESS_DONE:
		if (ev->step != EB_STEP_DOC && ev->step != EB_STEP_BASE) {
			d->finished++;
			if (ev->outcome == EB_OUTCOME_CACHED || ev->outcome == EB_OUTCOME_EXISTS ||
			    ev->outcome == EB_OUTCOME_MOUNTED)
				d->cached++;
		}
		if (l) { /* a blob's DONE ends its live line too */
			drop(d, l);
			now_draw = 1;
		}
		break;
	}
	if (now_draw || now() - d->last_draw >= 0.1)
		draw(d);
}

struct eb_display *eb_display_new(enum eb_display_mode mode, FILE *out)
{
	struct eb_display *d = eb_xcalloc(1, sizeof(*d));

	if (mode == EB_DISPLAY_AUTO) {
		const char *term = getenv("TERM");
		mode = isatty(fileno(out)) && !(term && strcmp(term, "dumb") == 0) ? EB_DISPLAY_TTY
										     : EB_DISPLAY_PLAIN;
	}
	d->mode = mode;
	d->out = out;
	d->t0 = now();
	eb_progress_init(&d->sink, on_event, d);
	return d;
}

struct eb_progress *eb_display_sink(struct eb_display *d)
{
	return d && d->mode != EB_DISPLAY_NONE ? &d->sink : NULL;
}

void eb_display_clear(struct eb_display *d)
{
	if (!d || d->mode != EB_DISPLAY_TTY)
		return;
	pthread_mutex_lock(&d->sink.mu);
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].key);
		free(d->v[i].name);
	}
	d->n = 0;
	if (d->drawn) {
		erase(d);
		fflush(d->out);
	}
	d->last_draw = 0;
	pthread_mutex_unlock(&d->sink.mu);
}

void eb_display_free(struct eb_display *d)
{
	if (!d)
		return;
	eb_display_clear(d);
	eb_progress_destroy(&d->sink);
	free(d->v);
	free(d);
}
