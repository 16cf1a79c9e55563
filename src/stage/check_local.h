/*
 * check_local.h - `envbuild check`'s rules for requirements that name a
 * file of the project (a local wheel): it must exist, be a regular file
 * and lie inside the project directory, so a spec `check` accepts is one
 * `build` installs (EB250, EB251).  Internal to stage/check.c.
 *
 * Layering (stage floor): stage/ may use assemble/, the services and
 * everything below; never cmd/.
 */
#ifndef EB_STAGE_CHECK_LOCAL_H
#define EB_STAGE_CHECK_LOCAL_H

#include "pin/requirement.h"
#include "util/diag.h"

struct eb_spec;

/* Findings for req (written at file:line, its text starting at column
 * col) when it is a local wheel that build could not read. */
void eb_check_local_wheel(const struct eb_spec *spec, const struct eb_requirement *req,
			  const char *file, unsigned line, unsigned col,
			  struct eb_diag_list *diags);

#endif
