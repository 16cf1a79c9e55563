/*
 * alloc.h - allocation helpers that never return NULL, cleanup attributes, and
 * the array sort every module uses.
 *
 * envbuild treats out-of-memory as fatal (as git, crun and redis do): the
 * x-functions abort with a message, so callers never check for NULL.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_ALLOC_H
#define EB_UTIL_ALLOC_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

void *eb_xmalloc(size_t n);
void *eb_xcalloc(size_t nmemb, size_t size);
void *eb_xrealloc(void *p, size_t n);
/* Grow an array to hold at least `want` elements of `size` bytes. */
void *eb_xreallocarray(void *p, size_t nmemb, size_t size);
char *eb_xstrdup(const char *s);
char *eb_xstrndup(const char *s, size_t n);
/* asprintf that aborts on OOM. */
char *eb_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Ensure an array has room for `n` elements; grows geometrically. */
#define EB_ALLOC_GROW(arr, n, cap)                                              \
	do {                                                                    \
		if ((n) > (cap)) {                                              \
			size_t eb_ncap_ = (cap) ? (cap) * 2 : 8;                \
			while (eb_ncap_ < (n))                                  \
				eb_ncap_ *= 2;                                  \
			(arr) = eb_xreallocarray((arr), eb_ncap_, sizeof(*(arr))); \
			(cap) = eb_ncap_;                                       \
		}                                                               \
	} while (0)

/* Cleanup attributes for locals (GCC/Clang). */
void eb_cleanup_freep(void *p);
void eb_cleanup_fclosep(FILE **f);
void eb_cleanup_closep(int *fd);
#define eb_autofree __attribute__((cleanup(eb_cleanup_freep)))
#define eb_autofclose __attribute__((cleanup(eb_cleanup_fclosep)))
#define eb_autoclose __attribute__((cleanup(eb_cleanup_closep)))

/* Hand ownership over: returns *pp and sets it to NULL. */
static inline void *eb_steal_ptr_(void **pp)
{
	void *p = *pp;
	*pp = NULL;
	return p;
}
#define eb_steal_ptr(pp) eb_steal_ptr_((void **)(pp))

/* qsort for arrays that may be empty: qsort(NULL, 0, ...) is undefined
 * behaviour (UBSan stops on it), and an empty list is often a NULL pointer
 * here. Every module sorts through this, never qsort directly. */
static inline void eb_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
