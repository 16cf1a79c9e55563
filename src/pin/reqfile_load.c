/*
 * reqfile_load.c - what a requirements input is: a PEP 751 lock
 * (pylock.toml, read by lockfiles.c) or a pip requirements file (read by
 * reqfile.c), and where a file named on the command line is confined.
 * Kept apart so the dependency runs one way: lockfiles.c builds its set
 * with reqfile.c's eb_reqfile_new/eb_reqfile_add, and only this file knows
 * both.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pin/lockfiles.h"
#include "pin/reqfile.h"
#include "pin/reqfile_internal.h"
#include "util/fs.h"

int eb_reqfile_load_in(struct eb_reqfile **out, const char *path, const char *root,
		       const char *const *spec_env, size_t nspec_env, int use_spec_env,
		       struct eb_diag_list *diags, struct eb_error **err)
{
	/* a PEP 751 lock names its pins itself */
	if (eb_lockfile_kind(eb_path_basename(path)) == EB_LOCKFILE_PYLOCK)
		return eb_pylock_load(out, path, root, diags, err);
	return eb_reqfile__load_pip(out, path, root, spec_env, nspec_env, use_spec_env, diags,
				    err);
}

int eb_reqfile_load(struct eb_reqfile **out, const char *path, struct eb_diag_list *diags,
		    struct eb_error **err)
{
	char cwd[PATH_MAX];
	char *dir = NULL;
	const char *root = NULL;
	int r;

	/* a file named on the command line: the project is the current
	 * directory when the file is in it, else the file's own directory */
	if (strcmp(path, "-") != 0) {
		if (getcwd(cwd, sizeof(cwd)) && eb_path_inside(path, cwd, NULL) == 1) {
			root = cwd;
		} else {
			dir = eb_path_dirname(path);
			root = dir;
		}
	}
	r = eb_reqfile_load_in(out, path, root, NULL, 0, 0, diags, err);
	free(dir);
	return r;
}
