/*
 * pyproject.c - pin rules for the dependency tables of pyproject.toml.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin/pyproject.h"
#include "pin/requirement.h"
#include "util/alloc.h"
#include "util/toml.h"

void eb_pin_check_req_text(const char *text, const char *file, unsigned line, unsigned col,
			   enum eb_severity sev, const char *where, struct eb_diag_list *diags)
{
	struct eb_diag_list tmp = EB_DIAG_LIST_INIT;
	struct eb_requirement req;
	struct eb_error *perr = NULL;

	if (eb_requirement_parse(&req, text, strlen(text), &perr) < 0) {
		struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, file, line,
						col + (perr->col ? perr->col - 1 : 0), "EB200",
						"invalid requirement in %s: '%s': %s", where, text,
						perr->msg);
		eb_diag_hint(d, "write NAME==VERSION, e.g. numpy==1.26.4");
		eb_error_free(perr);
		return;
	}
	eb_requirement_check_pin(&req, file, line, col - 1, &tmp);
	eb_requirement_release(&req);
	for (size_t i = 0; i < tmp.n; i++)
		if (sev == EB_SEV_WARNING && tmp.items[i].severity == EB_SEV_ERROR)
			tmp.items[i].severity = EB_SEV_WARNING;
	eb_diag_list_merge(diags, &tmp);
	eb_diag_list_release(&tmp);
}

struct ctx {
	const char *path;
	struct eb_toml_doc *doc;
	struct eb_diag_list *diags;
	json_t *pinned; /* [tool.envbuild].pinned, or NULL for the default */
};

/* Must the table `name` (e.g. "optional-dependencies.gpu") be pinned? */
static enum eb_severity severity(const struct ctx *c, const char *family, const char *name)
{
	size_t i;
	json_t *v;

	if (!c->pinned)
		return strcmp(family, "build-system") == 0 ? EB_SEV_WARNING : EB_SEV_ERROR;
	json_array_foreach(c->pinned, i, v) {
		const char *s = json_string_value(v);
		if (!s)
			continue;
		if (strcmp(s, family) == 0)
			return EB_SEV_ERROR;
		if (name && strncmp(s, family, strlen(family)) == 0 && s[strlen(family)] == '.' &&
		    strcmp(s + strlen(family) + 1, name) == 0)
			return EB_SEV_ERROR;
	}
	return EB_SEV_WARNING;
}

static void shape(const struct ctx *c, const json_t *parent, const char *key, size_t index,
		  const char *fmt, ...) EB_PRINTF(5, 6);
static void shape(const struct ctx *c, const json_t *parent, const char *key, size_t index,
		  const char *fmt, ...)
{
	const struct eb_toml_pos *p = eb_toml_value_pos(c->doc, parent, key, index);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	eb_diag_add(c->diags, EB_SEV_ERROR, c->path, p ? p->line : 0, p ? p->col : 0, "EB400",
		    "%s", msg);
}

/* A list of requirement strings at parent[key]; for dependency groups an
 * element may be {include-group = "name"}, checked against `groups`. */
static void check_list(const struct ctx *c, const json_t *parent, const char *key,
		       const char *where, enum eb_severity sev, const json_t *groups)
{
	json_t *list = json_object_get(parent, key);
	size_t i;
	json_t *v;

	if (!list)
		return;
	if (!json_is_array(list)) {
		shape(c, parent, key, 0, "%s must be an array of strings", where);
		return;
	}
	json_array_foreach(list, i, v) {
		const struct eb_toml_pos *p = eb_toml_value_pos(c->doc, list, NULL, i);
		if (json_is_string(v)) {
			/* the string's content starts after its quote (or
			 * after the three quotes of a multi-line string) */
			eb_pin_check_req_text(json_string_value(v), c->path, p->line, p->col + 1, sev,
					      where, c->diags);
		} else if (groups && json_is_object(v) && json_object_size(v) == 1 &&
			   json_is_string(json_object_get(v, "include-group"))) {
			const char *g = json_string_value(json_object_get(v, "include-group"));
			if (!json_is_array(json_object_get(groups, g))) {
				const struct eb_toml_pos *gp = eb_toml_value_pos(c->doc, v, "include-group", 0);
				eb_diag_add(c->diags, EB_SEV_ERROR, c->path, gp->line, gp->col, "EB400",
					    "%s includes the group '%s', which does not exist", where, g);
			}
		} else {
			shape(c, list, NULL, i, "%s entries must be strings%s", where,
			      groups ? " or {include-group = \"NAME\"}" : "");
		}
	}
}

/* PEP 735: an include cycle is an error.  Depth-first from each group. */
static int group_cycle(const json_t *groups, const char *name, const char **stack, size_t depth)
{
	json_t *list = json_object_get(groups, name), *v;
	size_t i;

	for (size_t k = 0; k < depth; k++)
		if (strcmp(stack[k], name) == 0)
			return 1;
	if (!json_is_array(list) || depth >= 64)
		return 0;
	stack[depth] = name;
	json_array_foreach(list, i, v) {
		const char *g = json_string_value(json_object_get(v, "include-group"));
		if (json_is_object(v) && g && group_cycle(groups, g, stack, depth + 1))
			return 1;
	}
	return 0;
}

int eb_pyproject_check(const char *path, const char *text, size_t len, struct eb_diag_list *diags,
		       struct eb_error **err)
{
	struct eb_error *terr = NULL;
	struct ctx c = { path, NULL, diags, NULL };
	json_t *root, *project, *opt, *groups, *bs, *tool;
	char where[512];
	const char *k;
	json_t *v;

	(void)err;
	if (eb_toml_load(&c.doc, path, text, len, &terr) < 0) {
		eb_diag_add(diags, EB_SEV_ERROR, path, terr->line, terr->col, "EB400", "%s", terr->msg);
		eb_error_free(terr);
		return 0;
	}
	root = eb_toml_root(c.doc);
	tool = json_object_get(json_object_get(root, "tool"), "envbuild");
	if (tool && json_object_get(tool, "pinned")) {
		c.pinned = json_object_get(tool, "pinned");
		if (!json_is_array(c.pinned)) {
			shape(&c, tool, "pinned", 0, "%s must be an array of table names",
			      "[tool.envbuild].pinned");
			c.pinned = NULL;
		}
	}
	project = json_object_get(root, "project");
	if (json_is_object(project)) {
		check_list(&c, project, "dependencies", "[project].dependencies",
			   severity(&c, "dependencies", NULL), NULL);
		opt = json_object_get(project, "optional-dependencies");
		if (opt && !json_is_object(opt))
			shape(&c, project, "optional-dependencies", 0, "%s must be a table",
			      "[project.optional-dependencies]");
		else if (opt)
			json_object_foreach(opt, k, v) {
				snprintf(where, sizeof(where), "[project.optional-dependencies].%s", k);
				check_list(&c, opt, k, where, severity(&c, "optional-dependencies", k), NULL);
			}
	}
	groups = json_object_get(root, "dependency-groups");
	if (groups && !json_is_object(groups)) {
		shape(&c, root, "dependency-groups", 0, "%s must be a table", "[dependency-groups]");
	} else if (groups) {
		json_object_foreach(groups, k, v) {
			const char *stack[64];
			snprintf(where, sizeof(where), "[dependency-groups].%s", k);
			check_list(&c, groups, k, where, severity(&c, "dependency-groups", k), groups);
			if (group_cycle(groups, k, stack, 0)) {
				const struct eb_toml_pos *p = eb_toml_value_pos(c.doc, groups, k, 0);
				eb_diag_add(diags, EB_SEV_ERROR, path, p->key_line, p->key_col, "EB400",
					    "dependency group '%s' includes itself", k);
			}
		}
	}
	bs = json_object_get(root, "build-system");
	if (json_is_object(bs))
		check_list(&c, bs, "requires", "[build-system].requires",
			   severity(&c, "build-system", NULL), NULL);
	eb_toml_free(c.doc);
	return 0;
}
