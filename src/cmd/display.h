/*
 * display.h - how a command shows the progress of long work (lock, build,
 * push) on stderr, from the events of util/progress.h:
 *
 *   tty    a live line per running layer and blob (name, bytes done /
 *          total, rate), redrawn in place and erased when the step ends;
 *          eb_display_clear() erases it all before the command prints
 *          anything else, so it never mixes with the final output;
 *   plain  one line per finished step (layer written or cached, base
 *          pulled, blob uploaded, mounted or already there, manifest or
 *          tag put), with the seconds since the command started: what a
 *          CI log needs to show where the time went;
 *   none   nothing (--quiet);
 *   auto   tty when stderr is a terminal (and TERM is not "dumb"), else
 *          plain: the options docker and buildx take (--progress=...).
 *
 * Ownership: eb_display_new() returns a display freed with
 * eb_display_free() (which clears it); its sink belongs to it.
 *
 * Layering (command floor): cmd/ and main.c parse options, call one stage
 * function and print; only main.c prints errors and picks exit codes.
 */
#ifndef EB_CMD_DISPLAY_H
#define EB_CMD_DISPLAY_H

#include <stdio.h>

#include "util/error.h"
#include "util/progress.h"

enum eb_display_mode { EB_DISPLAY_AUTO = 0, EB_DISPLAY_TTY, EB_DISPLAY_PLAIN, EB_DISPLAY_NONE };

/* --progress=auto|tty|plain|none and -q/--quiet, for build, lock, push. */
#define EB_CMD_PROGRESS_LONGOPTS                                   \
	{ "progress", required_argument, NULL, 0x201 },            \
	{ "quiet", no_argument, NULL, 'q' }
/* 1 when opt was one of those (mode set), 0 when not; -EB_EUSAGE with
 * *err for an unknown mode. */
int eb_display_option(int opt, const char *arg, enum eb_display_mode *mode,
		      struct eb_error **err);

struct eb_display;

struct eb_display *eb_display_new(enum eb_display_mode mode, FILE *out);
/* The sink to hand the stage (NULL for none: no events are made). */
struct eb_progress *eb_display_sink(struct eb_display *d);
/* Erase the live lines (tty); what is printed next starts on a clean line. */
void eb_display_clear(struct eb_display *d);
void eb_display_free(struct eb_display *d);

#endif
