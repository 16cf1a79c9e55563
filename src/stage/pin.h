/*
 * pin.h - `envbuild pin`: turn a spec's loose inputs into exact pins.
 *
 *   Python: each target's `requirements_in:` (pip-compile's *.in files, or
 *   a pyproject.toml: [project].dependencies plus the target's `extras:`
 *   and PEP 735 `groups:`) resolved for the target's own interpreter and
 *   platforms, jointly for every target pinned (a project two targets
 *   need gets one version), written as the exact, hashed closure to the
 *   target's `requirements:` file.
 *   Debian: each loose `apt:` name (`gcc-12`, `libc6:amd64`) becomes
 *   `name=version` (the newest the target's signed apt_sources have), and
 *   the Depends closure the base image's dpkg status lacks is added, in
 *   the spec itself: only the apt: items change, the rest of the file is
 *   kept byte for byte.  An exact `name=version` already there is kept.
 *
 * Layering (stage floor): may use assemble/, python/, debian/, registry/,
 * net/ and below; never cmd/.  Prints nothing but one-line notes on
 * stderr; what changed is left in the "out" fields for the command.
 *
 * Ownership: the command fills the "in" fields (borrowed); the stage
 * fills the "out" fields, which eb_stage_pin_end() frees.
 */
#ifndef EB_STAGE_PIN_H
#define EB_STAGE_PIN_H

#include <stddef.h>

#include "util/error.h"

/* --upgrade-package NAME[==VERSION]: name PEP 503-normalised; version
 * NULL for the newest. */
struct eb_pin_upgrade {
	const char *name;    /* PEP 503-normalised where it is a Python name */
	const char *written; /* as the user wrote it: a Debian name for apt: */
	const char *version; /* NAME==VERSION's version, or NULL */
};

/* One file the stage wrote (or would write, under dry_run). */
struct eb_pin_file {
	char *label;     /* the target's name, "apt" for the spec's apt: pins (owned) */
	char *path;      /* as the user opens it (owned) */
	int same;        /* up to date: nothing written */
	char **changes;  /* "+ scipy 1.12.0", "numpy 1.26.3 → 1.26.4", "- six 1.16.0" (owned) */
	size_t nchanges; /* 0 with !same: the annotations changed only */
};

struct eb_pin_stage {
	/* in */
	const char *spec_path;
	const char *cache_dir; /* NULL: the default blob store */
	const char *only;      /* --target, or NULL for every target with loose inputs */
	int upgrade, dry_run, pre;
	const struct eb_pin_upgrade *ups;
	size_t nups;

	/* out */
	struct eb_pin_file *files;
	size_t nfiles;
	char *explanation; /* a conflict's derivation when the resolution failed */
};

/* Returns 0, or a negative code with *err (-EB_EFAIL with s->explanation
 * for an unsatisfiable set). */
int eb_stage_pin(struct eb_pin_stage *s, struct eb_error **err);
void eb_stage_pin_end(struct eb_pin_stage *s);

#endif
