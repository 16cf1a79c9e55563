/*
 * check.h - `envbuild check`: apply the pin rules to specs, requirements
 * files and Dockerfiles, collecting findings.
 *
 * Ownership: findings are appended to the caller's list; nothing else is
 * returned.  Errors (*err) are only for files that cannot be read at all;
 * everything about their content is a finding.
 *
 * Layering (stage floor): stage/ may use assemble/, the services and
 * everything below; never cmd/. Stages print nothing but one-line notes.
 */
#ifndef EB_STAGE_CHECK_H
#define EB_STAGE_CHECK_H

#include <stddef.h>

#include "util/diag.h"
#include "util/error.h"

struct eb_spec;

enum eb_check_kind {
	EB_CHECK_UNKNOWN = 0,
	EB_CHECK_SPEC,
	EB_CHECK_REQUIREMENTS,
	EB_CHECK_DOCKERFILE,
	EB_CHECK_MANIFEST, /* other YAML: `image:` fields (EB103, EB104) */
};

/* Tell a file's kind by its name, then by its first lines. */
enum eb_check_kind eb_check_classify(const char *path, const char *text, size_t len);

/* The spec at path: its shape, every target's base image, every
 * requirements file it names (and their includes) and inline packages. */
int eb_check_spec(const char *path, struct eb_diag_list *diags, struct eb_error **err);
/* The same without the lockfile's freshness (EB013): what a build checks
 * before it re-locks.  *spec gets the spec it loaded (eb_spec_free()), or
 * NULL when the spec does not parse (the findings say why), so a command
 * reads its spec once. */
int eb_check_spec_inputs(const char *path, struct eb_spec **spec, struct eb_diag_list *diags,
			 struct eb_error **err);
int eb_check_requirements(const char *path, struct eb_diag_list *diags, struct eb_error **err);
int eb_check_dockerfile(const char *path, struct eb_diag_list *diags, struct eb_error **err);
/* Classify path and run the matching check. */
int eb_check_path(const char *path, struct eb_diag_list *diags, struct eb_error **err);
/* The spec file in the current directory (envbuild.yaml, .yml, .json), or
 * NULL; the string is static. */
const char *eb_check_find_spec(void);

#endif
