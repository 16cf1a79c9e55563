/*
 * deb_internal.h - what deb.c (reading .debs, the debinfo cache, the
 * layer) shares with deb_base.c (the base image scan): the path cleaning
 * both apply to archive names and the record reader of the cache format
 * both write.  Not an API: only those two files include it.
 *
 * Layering: as debian/deb.h.
 */
#ifndef EB_DEBIAN_DEB_INTERNAL_H
#define EB_DEBIAN_DEB_INTERNAL_H

#include <stddef.h>

/* "./usr/bin/x" -> "usr/bin/x" (the caller frees it); NULL for absolute
 * paths and "..". */
char *eb_deb__clean_path(const char *p);

/* One "X LEN[ ...]\n" + LEN bytes + "\n" record at *s; 0 at the end, -1
 * when malformed.  The pointers returned point into [*s, end). */
int eb_deb__debinfo_next(const char **s, const char *end, char *kind, unsigned *mode,
			 const char **name, size_t *namelen, const char **data, size_t *len);

#endif
