/*
 * sys.h - small system helpers: sleeping through signals, integer
 * settings from the environment, and finding a program on $PATH.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_SYS_H
#define EB_UTIL_SYS_H

/* Sleep ms milliseconds, resuming after signal interruptions. */
void eb_sleep_ms(long ms);
/* A positive integer from the environment variable name, or def when it
 * is unset, empty or not a positive integer. */
long eb_env_long(const char *name, long def);
/* The first executable regular file called name on $PATH (an empty entry
 * is the current directory; no $PATH: /usr/local/bin:/usr/bin:/bin), or
 * NULL; the caller frees it.  Searched here rather than by posix_spawnp,
 * which cannot report a missing program when vfork is emulated
 * (valgrind). */
char *eb_sys_find_program(const char *name);

#endif
