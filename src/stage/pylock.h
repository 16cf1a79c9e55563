/*
 * pylock.h - `envbuild lock --pylock`: each target's installed Python set
 * written as a PEP 751 lock, pylock.<target>.toml next to the spec, so
 * that other installers (uv, pip once it reads PEP 751) can install exactly
 * what the image has.
 *
 * What a file says: lock-version "1.0", created-by "envbuild",
 * requires-python "==3.X.*" (the target's Python), environments (one
 * marker per platform of the target), and per package its name, version
 * and wheels (name, url -- or path when the lock's URL is relative to the
 * spec --, size, hashes.sha256).  A package every platform has at the same
 * version is one entry with the wheels of all platforms; otherwise it
 * carries a marker on platform_machine naming the platforms that have it.
 * Packages the base already had at the pinned version (in_base) are
 * included: the image has them.
 *
 * Layering (stage floor): uses assemble/ (the report), python/ (machine
 * names) and util/; never cmd/.  Ownership: eb_stage_pylock_render()
 * appends to the caller's buffer; eb_stage_pylock_write() returns the
 * paths it wrote in a NULL-terminated array the caller frees (each path
 * and the array).
 */
#ifndef EB_STAGE_PYLOCK_H
#define EB_STAGE_PYLOCK_H

#include "assemble/build.h"
#include "util/buf.h"
#include "util/error.h"

/* The PEP 751 text of target t (deterministic: sorted by name, version). */
void eb_stage_pylock_render(struct eb_buf *out, const struct eb_build_target *t);
/* pylock.<target>.toml in dir for every target of rep that has Python
 * packages, written atomically. */
int eb_stage_pylock_write(const struct eb_build_report *rep, const char *dir, char ***written,
			  struct eb_error **err);

#endif
