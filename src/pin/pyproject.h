/*
 * pyproject.h - the pin rules for pyproject.toml (PEP 621 [project]
 * dependencies and optional-dependencies, PEP 735 [dependency-groups],
 * PEP 518 [build-system].requires), each string judged as a requirement
 * at its own line and column inside the TOML file.
 *
 * Which tables must be pinned: `[tool.envbuild] pinned = [...]` in the file
 * names them ("dependencies", "optional-dependencies",
 * "optional-dependencies.NAME", "dependency-groups", "dependency-groups.NAME",
 * "build-system"); an unpinned entry in a table not named is a warning.
 * Default: an application's tables are pinned (dependencies, every
 * optional-dependencies and dependency-groups table), build-system.requires
 * is a warning.  A library writes `pinned = []` to keep its ranges.
 *
 * Uses: util/toml, pin/requirement.  Never reads files: the caller passes
 * the text.  Findings go to diags; err is never set by content.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_PYPROJECT_H
#define EB_PIN_PYPROJECT_H

#include <stddef.h>

#include "util/diag.h"
#include "util/error.h"

int eb_pyproject_check(const char *path, const char *text, size_t len, struct eb_diag_list *diags,
		       struct eb_error **err);

/* One requirement string written in file at line:col (col of the first
 * character of text, 1-based): parse it (EB200 on failure) and apply the
 * pin rules with severity sev (an error list downgraded to warnings when
 * sev is EB_SEV_WARNING).  `where` names the place in messages. */
void eb_pin_check_req_text(const char *text, const char *file, unsigned line, unsigned col,
			   enum eb_severity sev, const char *where, struct eb_diag_list *diags);

/* The loose inputs `envbuild pin` reads from a pyproject.toml: the
 * strings of [project].dependencies, of each named extra of
 * [project.optional-dependencies] (a self-reference `proj[gpu]` to the
 * project's own name brings in that extra, as pip-compile reads it) and
 * of each named PEP 735 [dependency-groups] group, include-group
 * followed.  In file order, each once; `where` names its table.  An
 * unknown extra or group, an include cycle, a string that is not a valid
 * requirement or a wrong shape is an error at file:line:col.  *out is the
 * caller's (eb_pyproject_inputs_free). */
struct eb_pyproject_input {
	char *text;  /* the requirement as written (owned) */
	char *where; /* "[dependency-groups].dev" (owned) */
	unsigned line, col; /* of the requirement's first character */
};

int eb_pyproject_inputs(const char *path, const char *text, size_t len,
			const char *const *extras, size_t nextras, const char *const *groups,
			size_t ngroups, struct eb_pyproject_input **out, size_t *n,
			struct eb_error **err);
void eb_pyproject_inputs_free(struct eb_pyproject_input *v, size_t n);

#endif
