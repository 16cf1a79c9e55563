/*
 * buf.h - a growable, size-capped byte buffer (git's strbuf invariants with
 * curl's dynbuf cap).
 *
 * Layering (ground floor): util/ uses only libc and the libraries it wraps.
 *
 * After eb_buf_init() or EB_BUF_INIT `ptr` is never NULL and always
 * NUL-terminated, so it can be used as a C string.  An append past `max`
 * fails with -EB_ETOOBIG and leaves the buffer unchanged.  The buffer owns
 * `ptr`; eb_buf_release() frees it, eb_buf_detach() hands it to the caller
 * (who frees it with free()).
 *
 * Two kinds of append: eb_buf_add*() return -EB_ETOOBIG at the cap, for
 * capped buffers that hold untrusted input; eb_buf_put*() return nothing,
 * for buffers without a cap (max 0), where an append cannot fail (running
 * out of memory aborts, as eb_xmalloc does).  On a capped buffer a put past
 * the cap leaves the buffer unchanged, as an add whose result is ignored.
 */
#ifndef EB_UTIL_BUF_H
#define EB_UTIL_BUF_H

#include <stddef.h>
#include "util/error.h"

struct eb_buf {
	char *ptr;
	size_t len;
	size_t cap;
	size_t max; /* 0 = no cap */
};

/* The empty string every empty buffer points at (never written). */
extern char eb_buf_slopbuf[1];
/* A buffer without a cap, as eb_buf_init(b, 0) makes it. */
#define EB_BUF_INIT { eb_buf_slopbuf, 0, 0, 0 }

void eb_buf_init(struct eb_buf *b, size_t max);
int eb_buf_add(struct eb_buf *b, const void *p, size_t n);
int eb_buf_adds(struct eb_buf *b, const char *s);
int eb_buf_addc(struct eb_buf *b, char c);
int eb_buf_addf(struct eb_buf *b, const char *fmt, ...) EB_PRINTF(2, 3);
int eb_buf_vaddf(struct eb_buf *b, const char *fmt, va_list ap);
void eb_buf_put(struct eb_buf *b, const void *p, size_t n);
void eb_buf_puts(struct eb_buf *b, const char *s);
void eb_buf_putc(struct eb_buf *b, char c);
void eb_buf_putf(struct eb_buf *b, const char *fmt, ...) EB_PRINTF(2, 3);
void eb_buf_truncate(struct eb_buf *b, size_t len);
/* Returns the string (never NULL) and resets b to empty; caller frees. */
char *eb_buf_detach(struct eb_buf *b, size_t *len);
void eb_buf_release(struct eb_buf *b);

#endif
