/*
 * diag.h - findings about user files: a list of "file:line:col: severity:
 * message [rule]" records with an optional hint.
 *
 * Checkers (spec validation, requirement pin rules, Dockerfile rules) add to
 * a list and keep going, so one run reports every problem; main.c sorts and
 * prints them.  Unlike struct eb_error, a finding is not a failure of the
 * program: it is a verdict about the user's input.
 *
 * Ownership: the list owns every string in it (add copies its arguments);
 * eb_diag_list_release() frees them.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_DIAG_H
#define EB_UTIL_DIAG_H

#include <stddef.h>
#include "util/error.h"

enum eb_severity { EB_SEV_ERROR = 0, EB_SEV_WARNING = 1, EB_SEV_NOTE = 2 };

struct eb_diag {
	enum eb_severity severity;
	char *file;    /* path as the user gave it (owned) */
	unsigned line; /* 1-based, 0 = whole file */
	unsigned col;  /* 1-based, 0 = whole line */
	char *rule;    /* "EB201" (owned) */
	char *msg;     /* one line, lower-case start, no trailing period (owned) */
	char *hint;    /* one line or NULL (owned) */
	/* The targets the finding is about, when it is about targets rather
	 * than a place in a file (a build's warning): several when the same
	 * finding was made for each (eb_diag_list_sort groups them).  Owned. */
	char **targets;
	size_t ntargets;
};

struct eb_diag_list {
	struct eb_diag *items;
	size_t n, cap;
};

#define EB_DIAG_LIST_INIT { NULL, 0, 0 }

/* Append a finding; returns a pointer to it so a hint can be set with
 * eb_diag_hint().  Never fails (aborts on OOM). */
struct eb_diag *eb_diag_add(struct eb_diag_list *l, enum eb_severity sev, const char *file,
			    unsigned line, unsigned col, const char *rule, const char *fmt, ...)
	EB_PRINTF(7, 8);
void eb_diag_hint(struct eb_diag *d, const char *fmt, ...) EB_PRINTF(2, 3);
/* Say which target the finding is about (adds to d->targets). */
void eb_diag_target(struct eb_diag *d, const char *target);
/* Append a copy of every finding of src. */
void eb_diag_list_merge(struct eb_diag_list *dst, const struct eb_diag_list *src);
/* Stable sort by file, line, col; removes exact duplicates, and makes one
 * finding of those that differ only in their targets (the same warning
 * for training and inference is said once, naming both). */
void eb_diag_list_sort(struct eb_diag_list *l);
size_t eb_diag_list_count(const struct eb_diag_list *l, enum eb_severity sev);
void eb_diag_list_release(struct eb_diag_list *l);

#endif
