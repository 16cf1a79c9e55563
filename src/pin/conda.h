/*
 * conda.h - the pin rules for conda environment files (environment.yml,
 * environment.yaml) and for the package arguments of `conda install`,
 * `mamba install` and `micromamba install`.
 *
 * Conda's match-spec: `[channel::]name[ version[ build]]`, or with `=`:
 * `name=version=build`, `name==version`, `name>=1,<2`, or brackets
 * `name[version='>=1', build=...]`.  Exact pins are `name=version=build`,
 * `name==version`, `name version build` and `name version` (a bare
 * version in the space form is conda's exact match); errors (EB410): no
 * version (`numpy`), a range (`numpy>=1.26`, `numpy 1.26.*`), and
 * `numpy=1.26`, which conda reads as the prefix match 1.26.*.  The nested
 * `pip:` list follows the requirements rules (EB200-EB208), `-e` is EB205,
 * and `-r FILE` is checked as a requirements file next to the environment
 * file.
 *
 * Uses: util/yamljson, pin/pyproject (requirement strings), pin/reqfile.
 * Never reads files other than a `-r` include; findings go to diags.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_CONDA_H
#define EB_PIN_CONDA_H

#include <stddef.h>

#include "util/diag.h"
#include "util/error.h"

/* 1 when a base name is a conda environment file. */
int eb_conda_is_env_file(const char *basename);
int eb_conda_check(const char *path, const char *text, size_t len, struct eb_diag_list *diags,
		   struct eb_error **err);
/* One match-spec written at file:line:col; `where` names the place. */
void eb_conda_check_spec(const char *spec, const char *file, unsigned line, unsigned col,
			 const char *where, struct eb_diag_list *diags);

#endif
