/*
 * check_local.c - local wheel files named by requirements (see
 * check_local.h); build reads them through assemble/localwheel.h under
 * the same rules.
 */
#include "stage/check_local.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assemble/buildreqs.h"
#include "assemble/localwheel.h"
#include "assemble/ownproject.h"
#include "envspec/spec.h"
#include "util/fs.h"

int eb_check_own_project(const char *dir, const struct eb_requirement *req, const char *file,
			 unsigned line, unsigned col, struct eb_diag_list *diags)
{
	unsigned at = req->url_col ? col + req->url_col - 1 : col;
	char *n = NULL, *v = NULL;
	struct eb_error *e = NULL;
	struct eb_diag *d;

	if (req->kind != EB_REQ_DIR || req->editable || !eb_ownproject_is(req->url))
		return 0;
	/* build needs its static name and version */
	if (eb_ownproject_name(dir, &n, &v, &e) < 0) {
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, at, "EB255", "%s", e->msg);
		eb_diag_hint(d, "the project's own wheel is built from its pyproject.toml, "
				"which needs [project] name and a static version");
		eb_error_free(e);
	}
	free(n);
	free(v);
	return 1;
}

void eb_check_local_wheel(const struct eb_spec *spec, const struct eb_requirement *req,
			  const char *file, unsigned line, unsigned col,
			  struct eb_diag_list *diags)
{
	unsigned at = req->url_col ? col + req->url_col - 1 : col;
	char *rel, *path;
	struct eb_diag *d;
	struct stat st;

	if (eb_check_own_project(spec->dir, req, file, line, col, diags))
		return;
	if (req->kind != EB_REQ_PATH || !req->wheel_version || !req->url)
		return; /* not a local wheel: EB207 says what it is */
	rel = eb_localwheel_path(spec->dir, req->url);
	if (!rel) {
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, at, "EB251",
				"local wheel '%s' is not inside the project directory", req->url);
		eb_diag_hint(d, "keep the wheel in the project and name it relative to the "
				"spec's directory, e.g. ./dist/NAME-VERSION-py3-none-any.whl");
		return;
	}
	path = eb_path_join(spec->dir, rel);
	if (lstat(path, &st) != 0) {
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, at, "EB250",
				"local wheel '%s' does not exist", req->url);
		eb_diag_hint(d, "paths of local wheels are relative to the spec's directory "
				"(%s)", spec->dir);
	} else if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, at, "EB251",
				"local wheel '%s' is %s, not a regular file of the project",
				req->url, S_ISLNK(st.st_mode) ? "a symlink" : "not a file");
		eb_diag_hint(d, "copy the wheel into the project (build reads no symlink)");
	} else if (eb_path_inside(path, spec->dir, NULL) != 1) {
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, at, "EB251",
				"local wheel '%s' leaves the project directory through a symlink",
				req->url);
		eb_diag_hint(d, "copy the wheel into the project");
	}
	free(path);
	free(rel);
}

void eb_check_build_requirements(const struct eb_spec *spec, const struct eb_spec_target *t,
				 struct eb_diag_list *diags)
{
	struct eb_buildreqs b;

	if (!t->build_requirements.n)
		return;
	if (eb_buildreqs_load(&b, spec, t, 1, diags, NULL) < 0)
		return;
	for (size_t i = 0; i < b.n; i++) {
		if (b.v[i].req->kind != EB_REQ_NAMED)
			eb_diag_add(diags, EB_SEV_ERROR, b.v[i].file, b.v[i].line, b.v[i].col,
				    "EB252", "build requirement '%s' is not a project of the index: "
				    "build requirements are pinned by name and version",
				    b.v[i].req->text);
	}
	eb_buildreqs_release(&b);
}
