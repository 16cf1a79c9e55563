/*
 * ignore.h - what a `files` entry never copies from the project: the rules
 * of specs/envbuild-yaml.md "What is not copied".
 *
 *   - always: any ".git" (directory or file), the output directory, the
 *     lock file -- a CI checkout's .git/config holds its token, and out/
 *     or the lock would change the digest on every build;
 *   - .envbuildignore at the project root (dockerignore syntax: one
 *     util/glob pattern a line, relative to the project root, '#' comments,
 *     "!pattern" re-includes; the last matching line wins);
 *   - files git ignores (libgit2's ignore rules: .gitignore files,
 *     .git/info/exclude, core.excludesFile), unless a "!" line of
 *     .envbuildignore takes them back.
 *
 * Uses libgit2 (read only) and util/; knows nothing of layers beyond the
 * filter signature of oci/layer.h.  One struct eb_ignore serves one walk
 * and one thread.  eb_ignore_free() releases it.
 *
 * Layering (sources floor): assemble/ may use registry/, python/, lock/,
 * debian/, oci/, net/ and the ground floor; never stage/ or cmd/.
 */
#ifndef EB_BUILD_IGNORE_H
#define EB_BUILD_IGNORE_H

#include <stddef.h>
#include "util/error.h"

struct eb_ignore;

/* Rules for walking src inside the project at root; never[] are paths
 * (the output directory, the lock file) left out wherever they are.  A
 * malformed .envbuildignore line fails with EB_EINVALID at file:line. */
int eb_ignore_new(struct eb_ignore **out, const char *root, const char *src,
		  const char *const *never, size_t nnever, struct eb_error **err);
/* An eb_layer_filter_fn: 1 to leave rel (relative to src) out. */
int eb_ignore_skip(void *ignore, const char *rel, int is_dir);
void eb_ignore_free(struct eb_ignore *ig);

#endif
