/*
 * lockfiles.h - `envbuild check` for lock files other tools write: PEP 751
 * pylock.toml (and pylock.NAME.toml), uv.lock, poetry.lock and
 * Pipfile.lock.  They are pinned by construction; check reads them enough
 * to confirm that every package has an exact version and a usable hash
 * (sha256, sha384 or sha512) for each file it may install, and reports
 * each package that has not, once, at the package (not one finding per
 * line).  pylock.toml is validated further: lock-version 1.x, markers and
 * requires-python parse.
 *
 * Rules: EB400 (the file is not valid TOML/JSON or has the wrong shape),
 * EB401 (no exact version, or a source that is not pinned: a local
 * directory, a VCS entry without a commit), EB402 (a file without a usable
 * hash), EB403 (pylock lock-version), EB404 (a marker or requires-python
 * that does not parse).
 *
 * Uses: util/toml, util/yamljson (JSON with positions), pin/version,
 * pin/marker.  Never reads files: callers pass the text.  Findings go to
 * diags; err is never set by content.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_LOCKFILES_H
#define EB_PIN_LOCKFILES_H

#include <stddef.h>

#include "util/diag.h"
#include "util/error.h"

enum eb_lockfile_kind {
	EB_LOCKFILE_PYLOCK = 1,
	EB_LOCKFILE_UV,
	EB_LOCKFILE_POETRY,
	EB_LOCKFILE_PIPFILE,
};

/* The kind a file name says (base name only), or 0. */
int eb_lockfile_kind(const char *basename);
int eb_lockfile_check(enum eb_lockfile_kind kind, const char *path, const char *text, size_t len,
		      struct eb_diag_list *diags, struct eb_error **err);

struct eb_reqfile;
/* A pylock.toml as requirements, so `lock` and `build` install what it
 * pins: per package `NAME==VERSION ; MARKER` with a --hash for every
 * sha256/384/512 of its sdist, archive and wheels, at the package's name.
 * Packages it cannot pin (no version, a directory, a VCS) are findings
 * (EB401) and left out.  err is set when the file cannot be read or is
 * not TOML (EB_EINVALID with the position). */
int eb_pylock_load(struct eb_reqfile **out, const char *path, const char *root,
		   struct eb_diag_list *diags,
		   struct eb_error **err);

#endif
