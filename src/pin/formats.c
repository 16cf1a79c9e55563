/*
 * formats.c - name-based recognition of pyproject.toml, lock files and
 * conda environments, and their dispatch (kept out of check.c).
 */
#include "config.h"

#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#include "pin/conda.h"
#include "pin/formats.h"
#include "pin/lockfiles.h"
#include "pin/pyproject.h"
#include "util/buf.h"
#include "util/fs.h"

#define FORMAT_MAX_BYTES (64u << 20) /* uv.lock of a large workspace */

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

enum eb_format eb_format_by_name(const char *path)
{
	const char *base = eb_path_basename(path);
	static const char *const unsupported[] = { ".toml", ".lock", ".cfg", ".ini", ".py",
						   ".sh", ".md", ".rst", NULL };

	if (strcmp(base, "pyproject.toml") == 0)
		return EB_FORMAT_PYPROJECT;
	if (eb_lockfile_kind(base))
		return EB_FORMAT_LOCKFILE;
	if (eb_conda_is_env_file(base))
		return EB_FORMAT_CONDA;
	if (strcmp(base, "Pipfile") == 0)
		return EB_FORMAT_UNSUPPORTED;
	/* rye's requirements.lock and requirements-dev.lock are pip's format */
	if (strncasecmp(base, "requirements", 12) == 0 || strncasecmp(base, "constraints", 11) == 0)
		return EB_FORMAT_NONE;
	for (const char *const *u = unsupported; *u; u++)
		if (ends_with(base, *u) && strcmp(base, "envbuild.json") != 0 &&
		    !ends_with(base, ".envbuild.json"))
			return EB_FORMAT_UNSUPPORTED;
	return EB_FORMAT_NONE;
}

const char *eb_format_name(enum eb_format f)
{
	switch (f) {
	case EB_FORMAT_PYPROJECT: return "pyproject";
	case EB_FORMAT_LOCKFILE: return "lockfile";
	case EB_FORMAT_CONDA: return "conda";
	case EB_FORMAT_UNSUPPORTED: return "unsupported";
	default: return "unknown";
	}
}

int eb_format_check(enum eb_format f, const char *path, struct eb_diag_list *diags,
		    struct eb_error **err)
{
	struct eb_buf b;
	int r;

	if (f == EB_FORMAT_UNSUPPORTED) {
		r = eb_error_set(err, EB_EUSAGE, "'%s': unsupported format", path);
		eb_error_hint(err, "envbuild checks specs, requirements files, pyproject.toml, "
				   "pylock.toml, uv.lock, poetry.lock, Pipfile.lock, conda "
				   "environment.yml, Dockerfiles and YAML with image: fields");
		return r;
	}
	eb_buf_init(&b, FORMAT_MAX_BYTES);
	r = eb_fs_read_file(&b, path, FORMAT_MAX_BYTES, err);
	if (r == 0) {
		switch (f) {
		case EB_FORMAT_PYPROJECT:
			r = eb_pyproject_check(path, b.ptr, b.len, diags, err);
			break;
		case EB_FORMAT_LOCKFILE:
			r = eb_lockfile_check(eb_lockfile_kind(eb_path_basename(path)), path, b.ptr,
					      b.len, diags, err);
			break;
		default:
			r = eb_conda_check(path, b.ptr, b.len, diags, err);
			break;
		}
	}
	eb_buf_release(&b);
	return r;
}
