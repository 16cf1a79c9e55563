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
#include "util/interrupt.h"
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

/* PEP 735: an include cycle is an error.  Depth-first from each group;
 * clean (groups known to reach no cycle) makes it linear: each group
 * including the next twice was exponential. */
static int group_cycle(const json_t *groups, const char *name, const char **stack, size_t depth,
		       json_t *clean)
{
	json_t *list = json_object_get(groups, name), *v;
	size_t i;

	for (size_t k = 0; k < depth; k++)
		if (strcmp(stack[k], name) == 0)
			return 1;
	if (!json_is_array(list) || depth >= 64 || json_object_get(clean, name))
		return 0;
	stack[depth] = name;
	json_array_foreach(list, i, v) {
		const char *g = json_string_value(json_object_get(v, "include-group"));
		if (json_is_object(v) && g && group_cycle(groups, g, stack, depth + 1, clean))
			return 1;
	}
	json_object_set_new(clean, name, json_true());
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
		json_t *clean = json_object();
		json_object_foreach(groups, k, v) {
			const char *stack[64];
			snprintf(where, sizeof(where), "[dependency-groups].%s", k);
			check_list(&c, groups, k, where, severity(&c, "dependency-groups", k), groups);
			if (group_cycle(groups, k, stack, 0, clean)) {
				const struct eb_toml_pos *p = eb_toml_value_pos(c.doc, groups, k, 0);
				eb_diag_add(diags, EB_SEV_ERROR, path, p->key_line, p->key_col, "EB400",
					    "dependency group '%s' includes itself", k);
			}
		}
		json_decref(clean);
	}
	bs = json_object_get(root, "build-system");
	if (json_is_object(bs))
		check_list(&c, bs, "requires", "[build-system].requires",
			   severity(&c, "build-system", NULL), NULL);
	eb_toml_free(c.doc);
	return 0;
}

/* ---- the inputs of `envbuild pin` ------------------------------------- */

struct inputs {
	const char *path;
	struct eb_toml_doc *doc;
	json_t *opt, *groups;
	char *self; /* [project].name, normalised, or NULL */
	struct eb_pyproject_input *v;
	size_t n;
	char **done_extras;
	size_t ndone;
	json_t *done_groups; /* groups added whole: once is enough (memo) */
};

static int add_extra(struct inputs *in, const char *name, struct eb_error **err);

/* The key of table t that names `name` after PEP 503/685 normalisation. */
static const char *table_key(const json_t *t, const char *name)
{
	char *want = eb_pep503_normalize(name, strlen(name)), *have;
	const char *k, *found = NULL;
	json_t *v;

	json_object_foreach((json_t *)t, k, v) {
		have = eb_pep503_normalize(k, strlen(k));
		if (strcmp(have, want) == 0)
			found = k;
		free(have);
		if (found)
			break;
	}
	free(want);
	return found;
}

static int add_string(struct inputs *in, const json_t *list, size_t i, const char *where,
		      struct eb_error **err)
{
	const char *s = json_string_value(json_array_get(list, i));
	const struct eb_toml_pos *p = eb_toml_value_pos(in->doc, list, NULL, i);
	unsigned line = p ? p->line : 0, col = p ? p->col + 1 : 0; /* after the quote */
	struct eb_requirement req;
	struct eb_error *perr = NULL;
	int rc = 0;

	if (eb_requirement_parse(&req, s, strlen(s), &perr) < 0) {
		rc = eb_error_set_at(err, EB_EINVALID, in->path, line,
				     col + (perr->col ? perr->col - 1 : 0),
				     "invalid requirement in %s: '%s': %s", where, s, perr->msg);
		eb_error_hint(err, "write a PEP 508 requirement, e.g. \"numpy>=1.24\"");
		eb_error_free(perr);
		return rc;
	}
	if (in->self && req.norm_name && strcmp(req.norm_name, in->self) == 0) {
		/* `proj[gpu]` in proj's own tables: the extra's requirements */
		for (size_t k = 0; k < req.nextras && rc == 0; k++) {
			rc = add_extra(in, req.extras[k], err);
			if (rc < 0)
				eb_error_locate(err, in->path, line, col);
		}
		eb_requirement_release(&req);
		return rc;
	}
	eb_requirement_release(&req);
	for (size_t k = 0; k < in->n; k++)
		if (strcmp(in->v[k].text, s) == 0)
			return 0;
	in->v = eb_xreallocarray(in->v, in->n + 1, sizeof(*in->v));
	in->v[in->n++] = (struct eb_pyproject_input){ eb_xstrdup(s), eb_xstrdup(where), line, col };
	return 0;
}

static int add_list(struct inputs *in, const json_t *parent, const char *key, const char *where,
		    struct eb_error **err)
{
	const json_t *list = json_object_get(parent, key);
	const struct eb_toml_pos *p;
	int rc = 0;

	if (!list)
		return 0;
	p = eb_toml_value_pos(in->doc, parent, key, 0);
	if (!json_is_array(list))
		return eb_error_set_at(err, EB_EINVALID, in->path, p ? p->line : 0, p ? p->col : 0,
				       "%s must be an array of strings", where);
	for (size_t i = 0; i < json_array_size(list) && rc == 0; i++) {
		if (json_is_string(json_array_get(list, i))) {
			rc = add_string(in, list, i, where, err);
		} else {
			p = eb_toml_value_pos(in->doc, list, NULL, i);
			rc = eb_error_set_at(err, EB_EINVALID, in->path, p ? p->line : 0,
					     p ? p->col : 0, "%s entries must be strings", where);
		}
	}
	return rc;
}

static int add_extra(struct inputs *in, const char *name, struct eb_error **err)
{
	const char *k = in->opt ? table_key(in->opt, name) : NULL;
	char where[512];

	if (!k)
		return eb_error_set(err, EB_EINVALID, "%s has no extra '%s' in "
				    "[project.optional-dependencies]", in->path, name);
	for (size_t i = 0; i < in->ndone; i++)
		if (strcmp(in->done_extras[i], k) == 0)
			return 0; /* `all = ["p[a,b]"]` twice, or a loop: once is enough */
	in->done_extras = eb_xreallocarray(in->done_extras, in->ndone + 1, sizeof(char *));
	in->done_extras[in->ndone++] = eb_xstrdup(k);
	snprintf(where, sizeof(where), "[project.optional-dependencies].%s", k);
	return add_list(in, in->opt, k, where, err);
}

/* PEP 735: a group's strings and the groups it includes, depth first; a
 * group on the stack again is a cycle. */
static int add_group(struct inputs *in, const char *name, const char **stack, size_t depth,
		     struct eb_error **err)
{
	const char *k = in->groups ? table_key(in->groups, name) : NULL;
	const json_t *list;
	const struct eb_toml_pos *p;
	char where[512];
	int rc = 0;

	if (!k)
		return eb_error_set(err, EB_EINVALID, "%s has no dependency group '%s'", in->path,
				    name);
	for (size_t i = 0; i < depth; i++)
		if (strcmp(stack[i], k) == 0)
			return eb_error_set(err, EB_EINVALID, "dependency group '%s' includes itself",
					    k);
	if (depth >= 64)
		return eb_error_set(err, EB_EINVALID, "dependency groups nest too deeply at '%s'", k);
	/* a group included twice adds nothing the second time: without
	 * this, each group including the next twice was exponential */
	if (json_object_get(in->done_groups, k))
		return 0;
	if (eb_interrupt_check(err) < 0)
		return -EB_EINTR;
	stack[depth] = k;
	snprintf(where, sizeof(where), "[dependency-groups].%s", k);
	list = json_object_get(in->groups, k);
	p = eb_toml_value_pos(in->doc, in->groups, k, 0);
	if (!json_is_array(list))
		return eb_error_set_at(err, EB_EINVALID, in->path, p ? p->line : 0, p ? p->col : 0,
				       "%s must be an array", where);
	for (size_t i = 0; i < json_array_size(list) && rc == 0; i++) {
		const json_t *v = json_array_get(list, i);
		const char *g = json_string_value(json_object_get(v, "include-group"));
		p = eb_toml_value_pos(in->doc, list, NULL, i);
		if (json_is_string(v)) {
			rc = add_string(in, list, i, where, err);
		} else if (json_is_object(v) && json_object_size(v) == 1 && g) {
			rc = add_group(in, g, stack, depth + 1, err);
			if (rc < 0) {
				const struct eb_toml_pos *gp =
					eb_toml_value_pos(in->doc, v, "include-group", 0);
				eb_error_locate(err, in->path, gp ? gp->line : 0, gp ? gp->col : 0);
			}
		} else {
			rc = eb_error_set_at(err, EB_EINVALID, in->path, p ? p->line : 0,
					     p ? p->col : 0,
					     "%s entries must be strings or {include-group = \"NAME\"}",
					     where);
		}
	}
	if (rc == 0) {
		if (!in->done_groups)
			in->done_groups = json_object();
		json_object_set_new(in->done_groups, k, json_true());
	}
	return rc;
}

int eb_pyproject_inputs(const char *path, const char *text, size_t len,
			const char *const *extras, size_t nextras, const char *const *groups,
			size_t ngroups, struct eb_pyproject_input **out, size_t *n,
			struct eb_error **err)
{
	struct inputs in = { path, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL };
	json_t *root, *project;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = eb_toml_load(&in.doc, path, text, len, err)) < 0)
		return rc;
	root = eb_toml_root(in.doc);
	project = json_object_get(root, "project");
	in.groups = json_object_get(root, "dependency-groups");
	if (project && !json_is_object(project)) {
		rc = eb_error_set(err, EB_EINVALID, "%s: [project] must be a table", path);
		goto done;
	}
	if (in.groups && !json_is_object(in.groups)) {
		rc = eb_error_set(err, EB_EINVALID, "%s: [dependency-groups] must be a table", path);
		goto done;
	}
	if (json_is_string(json_object_get(project, "name"))) {
		const char *nm = json_string_value(json_object_get(project, "name"));
		in.self = eb_pep503_normalize(nm, strlen(nm));
	}
	in.opt = json_object_get(project, "optional-dependencies");
	if (in.opt && !json_is_object(in.opt)) {
		rc = eb_error_set(err, EB_EINVALID, "%s: [project.optional-dependencies] must be a table",
				  path);
		goto done;
	}
	if (!project && !in.groups) {
		rc = eb_error_set(err, EB_EINVALID, "%s has neither [project] nor [dependency-groups]",
				  path);
		goto done;
	}
	rc = add_list(&in, project, "dependencies", "[project].dependencies", err);
	for (size_t i = 0; i < nextras && rc == 0; i++)
		rc = add_extra(&in, extras[i], err);
	for (size_t i = 0; i < ngroups && rc == 0; i++) {
		const char *stack[64];
		rc = add_group(&in, groups[i], stack, 0, err);
	}
done:
	for (size_t i = 0; i < in.ndone; i++)
		free(in.done_extras[i]);
	free(in.done_extras);
	json_decref(in.done_groups);
	free(in.self);
	eb_toml_free(in.doc);
	if (rc < 0) {
		eb_pyproject_inputs_free(in.v, in.n);
		return rc;
	}
	*out = in.v;
	*n = in.n;
	return 0;
}

void eb_pyproject_inputs_free(struct eb_pyproject_input *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].text);
		free(v[i].where);
	}
	free(v);
}
