/*
 * formats.h - the file formats `envbuild check` knows besides specs,
 * requirements files, Dockerfiles and other YAML: recognised by name, read
 * and handed to their checker (pin/pyproject, pin/lockfiles, pin/conda).
 * A name that says "a format envbuild does not read" (other TOML, JSON,
 * lock files, setup.py/cfg, Pipfile) is refused rather than read as a
 * requirements file.
 *
 * Uses: the checkers above and util/fs.  Findings go to diags; err is set
 * when the file cannot be read or its format is not supported (EB_EUSAGE,
 * exit 2).
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_FORMATS_H
#define EB_PIN_FORMATS_H

#include "util/diag.h"
#include "util/error.h"

enum eb_format {
	EB_FORMAT_NONE = 0,    /* not one of these: the caller goes on classifying */
	EB_FORMAT_PYPROJECT,
	EB_FORMAT_LOCKFILE,    /* pylock.toml, uv.lock, poetry.lock, Pipfile.lock */
	EB_FORMAT_CONDA,
	EB_FORMAT_UNSUPPORTED,
};

enum eb_format eb_format_by_name(const char *path);
const char *eb_format_name(enum eb_format f);
int eb_format_check(enum eb_format f, const char *path, struct eb_diag_list *diags,
		    struct eb_error **err);

#endif
