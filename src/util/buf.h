/*
 * buf.h - a growable, size-capped byte buffer (git's strbuf invariants with
 * curl's dynbuf cap).
 *
 * After eb_buf_init() `ptr` is never NULL and always NUL-terminated, so it can
 * be used as a C string.  An append past `max` fails with -EB_ETOOBIG and
 * leaves the buffer unchanged.  The buffer owns `ptr`; eb_buf_release() frees
 * it, eb_buf_detach() hands it to the caller (who frees it with free()).
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

#define EB_BUF_INIT { NULL, 0, 0, 0 }

void eb_buf_init(struct eb_buf *b, size_t max);
int eb_buf_add(struct eb_buf *b, const void *p, size_t n);
int eb_buf_adds(struct eb_buf *b, const char *s);
int eb_buf_addc(struct eb_buf *b, char c);
int eb_buf_addf(struct eb_buf *b, const char *fmt, ...) EB_PRINTF(2, 3);
int eb_buf_vaddf(struct eb_buf *b, const char *fmt, va_list ap);
void eb_buf_truncate(struct eb_buf *b, size_t len);
/* Returns the string (never NULL) and resets b to empty; caller frees. */
char *eb_buf_detach(struct eb_buf *b, size_t *len);
void eb_buf_release(struct eb_buf *b);

#endif
