/*
 * buf.c - the size-capped growable buffer of buf.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"

char eb_buf_slopbuf[1];

void eb_buf_init(struct eb_buf *b, size_t max)
{
	b->ptr = eb_buf_slopbuf;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

static int grow(struct eb_buf *b, size_t extra)
{
	size_t want, ncap;

	if (!b->ptr)
		eb_buf_init(b, b->max);
	if (extra > (size_t)-1 - b->len - 1)
		return -EB_ETOOBIG;
	want = b->len + extra;
	if (b->max && want > b->max)
		return -EB_ETOOBIG;
	if (want + 1 <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < want + 1)
		ncap *= 2;
	if (b->cap == 0) {
		b->ptr = eb_xmalloc(ncap);
		b->ptr[0] = '\0';
	} else {
		b->ptr = eb_xrealloc(b->ptr, ncap);
	}
	b->cap = ncap;
	return 0;
}

int eb_buf_add(struct eb_buf *b, const void *p, size_t n)
{
	int r = grow(b, n);
	if (r < 0)
		return r;
	if (n)
		memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = '\0';
	return 0;
}

int eb_buf_adds(struct eb_buf *b, const char *s)
{
	return eb_buf_add(b, s, strlen(s));
}

int eb_buf_addc(struct eb_buf *b, char c)
{
	return eb_buf_add(b, &c, 1);
}

int eb_buf_vaddf(struct eb_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	int r;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -EB_EFAIL;
	r = grow(b, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int eb_buf_addf(struct eb_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = eb_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

/* An uncapped buffer fails only when its length would overflow size_t:
 * memory is gone long before, so that is a bug, not an input. */
static void put_result(const struct eb_buf *b, int r)
{
	if (r < 0 && !b->max)
		abort();
}

void eb_buf_put(struct eb_buf *b, const void *p, size_t n)
{
	put_result(b, eb_buf_add(b, p, n));
}

void eb_buf_puts(struct eb_buf *b, const char *s)
{
	put_result(b, eb_buf_add(b, s, strlen(s)));
}

void eb_buf_putc(struct eb_buf *b, char c)
{
	put_result(b, eb_buf_add(b, &c, 1));
}

void eb_buf_putf(struct eb_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_result(b, eb_buf_vaddf(b, fmt, ap));
	va_end(ap);
}

void eb_buf_truncate(struct eb_buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->ptr[len] = '\0';
	}
}

char *eb_buf_detach(struct eb_buf *b, size_t *len)
{
	char *p;

	if (!b->ptr || b->cap == 0)
		p = eb_xstrdup("");
	else
		p = b->ptr;
	if (len)
		*len = b->len;
	eb_buf_init(b, b->max);
	return p;
}

void eb_buf_release(struct eb_buf *b)
{
	if (b->ptr && b->cap)
		free(b->ptr);
	eb_buf_init(b, b->max);
}
