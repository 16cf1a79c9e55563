/*
 * interrupt.h - Ctrl-C, SIGTERM and SIGHUP: a handler that only records the
 * signal, a registry of temporary paths to remove when the program is
 * interrupted, and a poll for long loops.
 *
 * The protocol:
 *   - main() calls eb_interrupt_install() once, before any command runs;
 *   - whoever creates a temporary file or directory registers it at once
 *     (eb_interrupt_register) and unregisters it when it is renamed into
 *     place or removed (eb_interrupt_unregister); registration is cheap,
 *     thread-safe, and never blocks the signal handler;
 *   - long loops (compressing a layer, copying or uploading blobs, walking
 *     a tree) call eb_interrupt_check(err), which fails with -EB_EINTR
 *     ("interrupted") once a signal came, and unwind through their normal
 *     error paths, which remove their own temporaries;
 *   - main() then calls eb_interrupt_exit(), which removes whatever is
 *     still registered and ends the process the way the signal would have:
 *     status 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP) as a shell sees it.
 *
 * A second signal while the first is being handled means the user does not
 * want to wait: the handler then removes the registered paths itself, with
 * async-signal-safe calls only, and exits at once.
 *
 * A SIGINT or SIGHUP that was ignored when the program started (a
 * background job of a non-interactive shell, nohup) stays ignored, as
 * POSIX shells expect.
 *
 * Strings passed in are copied; nothing is returned for the caller to free.
 * The library never prints; only main() tells the user.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_INTERRUPT_H
#define EB_UTIL_INTERRUPT_H

#include "util/error.h"

/* Most temporaries registered at once (the rest are still removed by their
 * owners' error paths, just not by a signal). */
#define EB_INTERRUPT_MAX_PATHS 512

/* Install the handlers for SIGINT, SIGTERM and SIGHUP (SA_RESTART, so no
 * system call starts failing with EINTR).  Returns 0, or -EB_EIO. */
int eb_interrupt_install(struct eb_error **err);
/* The signal received (SIGINT, SIGTERM, SIGHUP), or 0.  Cheap: one atomic
 * load, fine in a tight loop. */
int eb_interrupted(void);
/* 0, or -EB_EINTR with *err set to "interrupted" once a signal came. */
int eb_interrupt_check(struct eb_error **err);

/* Remove path (a file, or a directory with everything below it) if the
 * program is interrupted.  is_dir: 1 for a directory. */
void eb_interrupt_register(const char *path, int is_dir);
/* Forget path (renamed into place, or already removed).  Unknown paths are
 * ignored. */
void eb_interrupt_unregister(const char *path);
/* Remove every registered path now and forget them (no error: best
 * effort).  eb_interrupt_exit() calls it; main may call it on any exit. */
void eb_interrupt_cleanup(void);

/* Clean up and end the process: re-raise the recorded signal with its
 * default action (so a calling shell sees "killed by SIGINT" and stops its
 * loop), falling back to exit(128 + signal).  Without a recorded signal,
 * exit(130). */
__attribute__((noreturn)) void eb_interrupt_exit(void);

#endif
