/*
 * check_local.h - `envbuild check`'s rules for requirements that name a
 * file of the project (a local wheel): it must exist, be a regular file
 * and lie inside the project directory, so a spec `check` accepts is one
 * `build` installs (EB250, EB251); the project itself (EB255); and a
 * target's build_requirements.  Internal to stage/check.c.
 *
 * Layering (stage floor): stage/ may use assemble/, the services and
 * everything below; never cmd/.
 */
#ifndef EB_STAGE_CHECK_LOCAL_H
#define EB_STAGE_CHECK_LOCAL_H

#include "pin/requirement.h"
#include "util/diag.h"

struct eb_spec;
struct eb_spec_target;

/* When req is the project itself ("./"), 1, with EB255 when dir (the
 * project's directory) has no pyproject.toml with a static [project]
 * name and version; else 0. */
int eb_check_own_project(const char *dir, const struct eb_requirement *req, const char *file,
			 unsigned line, unsigned col, struct eb_diag_list *diags);

/* Findings for req (written at file:line, its text starting at column
 * col) when it is a local wheel that build could not read. */
void eb_check_local_wheel(const struct eb_spec *spec, const struct eb_requirement *req,
			  const char *file, unsigned line, unsigned col,
			  struct eb_diag_list *diags);

/* A target's build_requirements under the rules of requirements (the pin
 * rules, EB012 for a missing file), named projects only (EB252). */
void eb_check_build_requirements(const struct eb_spec *spec, const struct eb_spec_target *t,
				 struct eb_diag_list *diags);

#endif
