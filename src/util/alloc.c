/*
 * alloc.c - allocation wrappers that abort on out-of-memory, and the
 * functions behind the cleanup attributes of alloc.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"

static void oom(size_t n)
{
	fprintf(stderr, "envbuild: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *eb_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *eb_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *eb_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *eb_xreallocarray(void *p, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		oom(SIZE_MAX);
	return eb_xrealloc(p, nmemb * size);
}

char *eb_xstrdup(const char *s)
{
	return eb_xstrndup(s, strlen(s));
}

char *eb_xstrndup(const char *s, size_t n)
{
	char *p = eb_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *eb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom(0);
	return s;
}

void eb_cleanup_freep(void *p)
{
	void **pp = p;
	free(*pp);
}

void eb_cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

void eb_cleanup_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
