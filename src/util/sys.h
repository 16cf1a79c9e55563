/*
 * sys.h - small system helpers shared by the network code: sleeping
 * through signals, and integer settings from the environment.
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

#endif
