/*
 * error.h - the one error type of envbuild.
 *
 * A failing function sets the error once, where the failure happens, and
 * returns a negative code; callers add context on the way up with
 * eb_error_wrap() and never overwrite it.  Only main.c prints an error and
 * turns its code into an exit status.
 *
 * Ownership: an error set into *err belongs to the caller, who frees it with
 * eb_error_free().  Setting an error when *err is already set keeps the first
 * one (the root cause) and drops the new message.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_ERROR_H
#define EB_UTIL_ERROR_H

#include <stdarg.h>

#define EB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define EB_WUR __attribute__((warn_unused_result))

/* Error codes; functions return the negative value. */
enum eb_code {
	EB_OK = 0,
	EB_EFAIL = 1,     /* runtime failure (exit 1) */
	EB_EUSAGE = 2,    /* bad command line (exit 2) */
	EB_EIO = 3,       /* file or system I/O error (exit 2) */
	EB_EINVALID = 4,  /* invalid user input: spec, requirement, reference (exit 1) */
	EB_ENOTFOUND = 5, /* a named thing does not exist */
	EB_ETOOBIG = 6,   /* a size limit was hit */
	EB_ENET = 7,      /* network or protocol failure */
	EB_EINTR = 8,     /* interrupted by a signal (exit 130) */
};

struct eb_error {
	int code;      /* enum eb_code, positive */
	int sys_errno; /* errno at the failure, or 0 */
	char *file;    /* user file the error points into, or NULL (owned) */
	unsigned line; /* 1-based; 0 = unknown */
	unsigned col;  /* 1-based; 0 = unknown */
	char *msg;     /* one line, no trailing period (owned) */
	char *hint;    /* optional one-line hint, or NULL (owned) */
};

/* Set *err (if err != NULL and *err == NULL); returns -code. */
int eb_error_set(struct eb_error **err, int code, const char *fmt, ...) EB_PRINTF(3, 4);
/* Like eb_error_set, with ": strerror(errnum)" appended and sys_errno kept. */
int eb_error_set_errno(struct eb_error **err, int code, int errnum, const char *fmt, ...)
	EB_PRINTF(4, 5);
/* Like eb_error_set, pointing at file:line:col of user input. */
int eb_error_set_at(struct eb_error **err, int code, const char *file, unsigned line,
		    unsigned col, const char *fmt, ...) EB_PRINTF(6, 7);
/* The same with a va_list, a column only (a position inside a string the
 * caller is parsing; file NULL, line 0) and an optional hint. */
int eb_error_vset_col(struct eb_error **err, int code, unsigned col, const char *hint,
		      const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* Attach a hint to an already-set error (no-op when *err is NULL). */
void eb_error_hint(struct eb_error **err, const char *fmt, ...) EB_PRINTF(2, 3);
/* Prefix the message with context: "reading 'x': <old message>".  Returns
 * the (negative) code of the wrapped error, or -EB_EFAIL if none was set. */
int eb_error_wrap(struct eb_error **err, const char *fmt, ...) EB_PRINTF(2, 3);
/* Point an error without a position at file:line:col of user input (the
 * spec entry that caused it); no-op when *err has a position already. */
void eb_error_locate(struct eb_error **err, const char *file, unsigned line, unsigned col);
void eb_error_free(struct eb_error *err);
/* Free *err and set it to NULL. */
void eb_error_clear(struct eb_error **err);

#endif
