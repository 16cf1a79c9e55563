/*
 * glob.h - path patterns for `exclude` lists and .envbuildignore: the
 * dockerignore dialect of fnmatch(3).
 *
 * A pattern is matched component by component against a '/'-separated
 * relative path: within a component '*', '?', '[...]' and '\' escapes work
 * as in fnmatch(3) without crossing '/'; a component "**" matches any
 * number of components, none included, so "**" + "/x" matches "x" at the
 * root too.  Malformed patterns (an unclosed '[', a trailing '\') are
 * refused by eb_glob_valid(), never silently matching nothing.
 *
 * Uses only libc; allocates nothing the caller must free.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_GLOB_H
#define EB_UTIL_GLOB_H

/* 1 when pattern is well formed, else 0 with *why (a static string). */
int eb_glob_valid(const char *pattern, const char **why);
/* 1 when path matches pattern (both without leading or trailing '/'). */
int eb_glob_match(const char *pattern, const char *path);

#endif
