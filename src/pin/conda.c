/*
 * conda.c - conda match-specs and environment files.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pin/conda.h"
#include "pin/pyproject.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "util/yamljson.h"
#include "util/alloc.h"
#include "util/fs.h"

int eb_conda_is_env_file(const char *base)
{
	static const char *const pats[] = { "environment.yml", "environment.yaml",
					    "environment[-_.]*.yml", "environment[-_.]*.yaml",
					    "conda.yml", "conda.yaml", "conda[-_.]*.yml",
					    "conda[-_.]*.yaml", NULL };
	for (const char *const *p = pats; *p; p++)
		if (fnmatch(*p, base, 0) == 0)
			return 1;
	return 0;
}

static int has_any(const char *s, size_t n, const char *chars)
{
	for (size_t i = 0; i < n; i++)
		if (strchr(chars, s[i]))
			return 1;
	return 0;
}

/* An exact version: no operator, wildcard, alternative or range. */
static int exact(const char *v, size_t n)
{
	return n > 0 && !has_any(v, n, "*<>!~=,| ");
}

void eb_conda_check_spec(const char *spec, const char *file, unsigned line, unsigned col,
			 const char *where, struct eb_diag_list *diags)
{
	const char *s = spec, *name, *rest, *cc;
	size_t nlen;
	struct eb_diag *d;
	const char *why = NULL;

	while (*s == ' ')
		s++;
	/* channel::name, channel/subdir::name */
	cc = strstr(s, "::");
	if (cc)
		s = cc + 2;
	name = s;
	nlen = strcspn(s, " =<>!~[");
	rest = s + nlen;
	while (*rest == ' ')
		rest++;
	if (*rest == '\0') {
		why = "has no version";
	} else if (*rest == '[') {
		/* brackets: only version='==X' (or "X") with nothing else counts */
		const char *v = strstr(rest, "version=");
		if (v) {
			v += 8;
			if (*v == '\'' || *v == '"')
				v++;
			if (v[0] == '=' && v[1] == '=')
				v += 2;
			if (!exact(v, strcspn(v, "'\",]")))
				why = "has a version range, not an exact pin";
		} else {
			why = "has no version";
		}
	} else if (rest[0] == '=' && rest[1] == '=') {
		const char *v = rest + 2;
		if (!exact(v, strlen(v)))
			why = "has a version range, not an exact pin";
	} else if (rest[0] == '=') {
		const char *v = rest + 1, *b = strchr(v, '=');
		if (!b)
			why = exact(v, strlen(v)) ? "is pinned with '=', which conda reads as a prefix match" :
						    "has a version range, not an exact pin";
		else if (!exact(v, (size_t)(b - v)) || b[1] == '\0')
			why = "has a version range, not an exact pin";
	} else if (strchr("<>!~", rest[0])) {
		why = "has a version range, not an exact pin";
	} else {
		/* space form: "name version [build]" */
		size_t vl = strcspn(rest, " ");
		if (!exact(rest, vl))
			why = "has a version range, not an exact pin";
	}
	if (!why)
		return;
	d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col, "EB410", "conda package '%.*s' in %s %s",
			(int)nlen, name, where, why);
	eb_diag_hint(d, "pin it exactly: %.*s==VERSION or %.*s=VERSION=BUILD", (int)nlen, name,
		     (int)nlen, name);
}

static unsigned content_col(const struct eb_yj_pos *p)
{
	/* a quoted scalar's position is its quote */
	return p->plain ? p->col : p->col + 1;
}

static void check_pip_list(const char *path, struct eb_yj_doc *doc, const json_t *list,
			   struct eb_diag_list *diags)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v) {
		const struct eb_yj_pos *p = eb_yj_value_pos(doc, list, NULL, i);
		const char *s = json_string_value(v);
		unsigned col = content_col(p);

		if (!s) {
			eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB400",
				    "pip: entries must be strings");
			continue;
		}
		if (strncmp(s, "-e ", 3) == 0 || strncmp(s, "--editable ", 11) == 0) {
			struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, path, p->line, col, "EB205",
							"editable requirement '%s' in pip: is not pinned", s);
			eb_diag_hint(d, "build a wheel and install it by exact version");
			continue;
		}
		if (strncmp(s, "-r ", 3) == 0 || strncmp(s, "--requirement ", 14) == 0) {
			const char *f = strchr(s, ' ') + 1;
			char *dir, *rp;
			struct eb_reqfile *rf = NULL;
			struct eb_error *lerr = NULL;

			while (*f == ' ')
				f++;
			dir = eb_path_dirname(path);
			rp = strcmp(dir, ".") == 0 ? eb_xstrdup(f) : eb_path_join(dir, f);
			if (eb_reqfile_load(&rf, rp, diags, &lerr) < 0) {
				eb_diag_add(diags, EB_SEV_ERROR, path, p->line, col, "EB212", "%s",
					    lerr->msg);
				eb_error_free(lerr);
			} else {
				eb_reqfile_check(rf, diags);
				eb_reqfile_free(rf);
			}
			free(rp);
			free(dir);
			continue;
		}
		if (s[0] == '-')
			continue; /* --index-url and other options pip accepts in a file */
		eb_pin_check_req_text(s, path, p->line, col, EB_SEV_ERROR, "pip:", diags);
	}
}

int eb_conda_check(const char *path, const char *text, size_t len, struct eb_diag_list *diags,
		   struct eb_error **err)
{
	struct eb_yj_doc *doc = NULL;
	struct eb_error *perr = NULL;
	json_t *deps, *v;
	size_t i;

	(void)err;
	if (eb_yj_load(&doc, path, text, len, diags, &perr) < 0) {
		eb_diag_add(diags, EB_SEV_ERROR, path, perr->line, perr->col, "EB400", "%s", perr->msg);
		eb_error_free(perr);
		return 0;
	}
	deps = json_object_get(eb_yj_root(doc), "dependencies");
	if (deps && !json_is_array(deps)) {
		const struct eb_yj_pos *p = eb_yj_value_pos(doc, eb_yj_root(doc), "dependencies", 0);
		eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB400",
			    "'dependencies' must be a list");
	}
	json_array_foreach(deps, i, v) {
		const struct eb_yj_pos *p = eb_yj_value_pos(doc, deps, NULL, i);
		if (json_is_string(v)) {
			eb_conda_check_spec(json_string_value(v), path, p->line, content_col(p),
					    "dependencies", diags);
		} else if (json_is_object(v) && json_is_array(json_object_get(v, "pip"))) {
			check_pip_list(path, doc, json_object_get(v, "pip"), diags);
		} else if (json_is_number(v)) {
			/* `- 3.10` is not a package; YAML read it as a number */
			eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB400",
				    "dependencies entry '%s' is not a package", p->raw ? p->raw : "?");
		} else {
			eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB400",
				    "dependencies entries must be match-specs or a pip: list");
		}
	}
	eb_yj_free(doc);
	return 0;
}
