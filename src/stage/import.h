/*
 * import.h - `envbuild import`: a spec from a Dockerfile's final stage
 * (or every stage), with every line that cannot be declared reported at
 * its position.
 *
 * What maps (specs/envbuild-yaml.md, "From a Dockerfile"): FROM (ARGs
 * expanded, through pin/dockerfile.h), ARG defaults, ENV, WORKDIR, USER,
 * LABEL, ENTRYPOINT, CMD, COPY/ADD from the build context (with --chown,
 * --chmod, .dockerignore) -> files, RUN pip install -> requirements /
 * packages / requirements_in, RUN apt-get install -> apt, groupadd /
 * useradd / addgroup / adduser -> accounts, mkdir -p && chown/chmod ->
 * dirs.  The rest is left, each as one struct eb_import_left.
 *
 * Layering (stage floor): pin/ (the Dockerfile parser), envspec/ (to
 * read an existing spec), util/.  Never prints; writes only the spec and
 * its requirements files, atomically, and never over a file without
 * `force`.
 *
 * Ownership: eb_import_run() fills res, released with
 * eb_import_result_release().
 */
#ifndef EB_STAGE_IMPORT_H
#define EB_STAGE_IMPORT_H

#include <stddef.h>

#include "util/error.h"

struct eb_import_options {
	const char *dockerfile; /* path */
	const char *output;     /* spec path (default: envbuild.yaml next to the Dockerfile) */
	const char *target;     /* target name of the final stage (default: its AS name, else "app") */
	int all_stages;
	const char *repository, *index;
	int force;
};

struct eb_import_left {
	unsigned line, col;
	char *kind; /* "RUN", "HEALTHCHECK", "COPY --from", ... (for counting) */
	char *msg;
	char *hint; /* NULL when none */
};

struct eb_import_result {
	struct eb_import_left *left;
	size_t nleft;
	char **written; /* the files written, in order */
	size_t nwritten;
	char **notes;   /* what the user should do next ("run envbuild pin") */
	size_t nnotes;
};

int eb_import_run(const struct eb_import_options *o, struct eb_import_result *res,
		  struct eb_error **err);
void eb_import_result_release(struct eb_import_result *res);

#endif
