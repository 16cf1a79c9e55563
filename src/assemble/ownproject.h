/*
 * ownproject.h - the project a spec lives in, installed as `pip install .`
 * installs it (a requirements line "./" or ".", "file:."): its files made
 * into an sdist, which assemble/sdistpin.h builds with the project's own
 * PEP 517 backend in the confined runner, so that console scripts, entry
 * points and importlib.metadata work.
 *
 * The files are those a `files:` copy of the project would take
 * (assemble/ignore.h: never .git, out/, the lock; not what git ignores or
 * .envbuildignore leaves out); a symlink among them is refused.  The
 * archive is deterministic (sorted, mtime 0, modes 0644/0755, no gzip
 * time), so the same tree is the same sdist digest, and the wheel cache
 * and the lock's check apply as to any sdist.  Name and version are the
 * static [project] name and version of its pyproject.toml (EB255 when
 * either is missing or dynamic).
 *
 * Layering (sources floor).  Ownership: strings returned are the caller's.
 */
#ifndef EB_ASSEMBLE_OWNPROJECT_H
#define EB_ASSEMBLE_OWNPROJECT_H

#include <stdint.h>

#include "oci/blobstore.h"
#include "util/digest.h"
#include "util/error.h"

#define EB_OWNPROJECT_MAX_FILE (256u << 20)

/* 1 when a local directory requirement's url names the project root. */
int eb_ownproject_is(const char *url);
/* The project's normalised name and its version. */
int eb_ownproject_name(const char *spec_dir, char **name, char **version, struct eb_error **err);
/* Its sdist (top directory NAME-VERSION/) into bs. */
int eb_ownproject_sdist(const char *spec_dir, const char *name, const char *version,
			struct eb_blobstore *bs, char digest[EB_DIGEST_STR_LEN + 1], int64_t *size,
			struct eb_error **err);

#endif
