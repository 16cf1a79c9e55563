/*
 * marker.h - PEP 508 environment markers: parse, evaluate for a target.
 *
 * envbuild never runs the target interpreter, so the environment is given
 * (python version and platform from the spec); markers on fields that only
 * the running kernel knows (platform_release, platform_version) evaluate
 * against "" and are reported through eb_marker_vars_used() so callers can
 * warn.
 *
 * Ownership: eb_marker_parse() returns a tree the caller frees with
 * eb_marker_free(); eb_marker_to_string() returns a string the caller frees.
 * The env struct only borrows its strings.
 *
 * Errors: EB_EINVALID with `col` = 1-based column inside the parsed string.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_MARKER_H
#define EB_PIN_MARKER_H

#include <stddef.h>
#include "util/error.h"

struct eb_marker; /* opaque */

struct eb_marker_env {
	const char *python_version;                 /* "3.11" */
	const char *python_full_version;            /* "3.11.0" */
	const char *implementation_name;            /* "cpython" */
	const char *implementation_version;         /* "3.11.0" */
	const char *platform_python_implementation; /* "CPython" */
	const char *os_name;                        /* "posix" */
	const char *sys_platform;                   /* "linux" */
	const char *platform_system;                /* "Linux" */
	const char *platform_machine;               /* "x86_64" / "aarch64" */
	const char *platform_release;               /* "" (unknowable) */
	const char *platform_version;               /* "" (unknowable) */
	const char *extra;                          /* "" for top-level lines */
};

/* Bits for eb_marker_vars_used(). */
enum {
	EB_MARKER_VAR_PYTHON_VERSION = 1u << 0,
	EB_MARKER_VAR_PYTHON_FULL_VERSION = 1u << 1,
	EB_MARKER_VAR_IMPLEMENTATION_NAME = 1u << 2,
	EB_MARKER_VAR_IMPLEMENTATION_VERSION = 1u << 3,
	EB_MARKER_VAR_PLATFORM_PYTHON_IMPLEMENTATION = 1u << 4,
	EB_MARKER_VAR_OS_NAME = 1u << 5,
	EB_MARKER_VAR_SYS_PLATFORM = 1u << 6,
	EB_MARKER_VAR_PLATFORM_SYSTEM = 1u << 7,
	EB_MARKER_VAR_PLATFORM_MACHINE = 1u << 8,
	EB_MARKER_VAR_PLATFORM_RELEASE = 1u << 9,
	EB_MARKER_VAR_PLATFORM_VERSION = 1u << 10,
	EB_MARKER_VAR_EXTRA = 1u << 11,
};

/* Fill env for CPython `python_version` ("3.11" or "3.11.4") on Linux and a
 * machine ("x86_64", "aarch64"); strings point to static storage or to the
 * arguments, which must outlive env. */
void eb_marker_env_init(struct eb_marker_env *env, const char *python_version,
			const char *machine);

int eb_marker_parse(struct eb_marker **out, const char *s, size_t len, struct eb_error **err);
/* *result = 1 when the marker holds in env, else 0. */
int eb_marker_eval(const struct eb_marker *m, const struct eb_marker_env *env, int *result,
		   struct eb_error **err);
unsigned eb_marker_vars_used(const struct eb_marker *m);
/* Canonical text: 'python_version >= "3.9" and extra == "socks"'. */
char *eb_marker_to_string(const struct eb_marker *m);
void eb_marker_free(struct eb_marker *m);

#endif
