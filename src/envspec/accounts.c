/*
 * accounts.c - parse and check the `accounts:` and `dirs:` keys of a spec
 * (envspec/accounts.h).  Findings carry EB020 (a bad value) and EB021 (a
 * name, id or path given twice); what needs the base is checked at build.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envspec/accounts.h"
#include "util/alloc.h"
#include "util/fs.h"

struct actx {
	const struct eb_yj_doc *doc;
	const char *file;
	struct eb_diag_list *diags;
};

static struct eb_diag *bad(struct actx *c, const struct eb_yj_pos *p, const char *fmt, ...)
	EB_PRINTF(3, 4);

static struct eb_diag *bad(struct actx *c, const struct eb_yj_pos *p, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	struct eb_diag *d;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	d = eb_diag_add(c->diags, EB_SEV_ERROR, c->file, p->line, p->col, "EB020", "%s", msg);
	free(msg);
	return d;
}

int eb_spec_id_parse(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > INT32_MAX)
		return 0;
	*out = (uint32_t)v;
	return 1;
}

int eb_spec_login_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32)
		return 0;
	if (!(islower((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '$' && i == n - 1)
			break;
		if (!(islower(ch) || isdigit(ch) || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

static int side_valid(const char *s, size_t len)
{
	uint32_t id;
	char buf[40];

	if (eb_spec_id_parse(s, len, &id))
		return 1;
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return eb_spec_login_name_valid(buf);
}

int eb_spec_owner_valid(const char *s)
{
	const char *colon = strchr(s, ':');

	if (!colon)
		return side_valid(s, strlen(s));
	return side_valid(s, (size_t)(colon - s)) && side_valid(colon + 1, strlen(colon + 1));
}

/* A scalar's text: strings as they are, numbers as written. */
static const char *text_of(struct actx *c, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		return eb_yj_value_pos(c->doc, obj, key, 0)->raw;
	return "";
}

static const struct eb_yj_pos *pos_of(struct actx *c, const json_t *obj, const char *key)
{
	return eb_yj_value_pos(c->doc, obj, key, 0);
}

/* Keys of an entry: every key known, the required ones present. */
static int entry_keys(struct actx *c, const json_t *item, const char *const *known,
		      const char *const *required, const char *what)
{
	const char *key;
	json_t *val;
	int ok = 1;

	json_object_foreach((json_t *)item, key, val) {
		const char *const *k;
		for (k = known; *k; k++)
			if (strcmp(*k, key) == 0)
				break;
		if (!*k) {
			struct eb_diag *d = bad(c, eb_yj_key_pos(c->doc, item, key),
						"unknown key '%s' in %s", key, what);
			eb_diag_hint(d, "see specs/envbuild-yaml.md, \"accounts\" and \"dirs\"");
		}
		(void)val;
	}
	for (const char *const *k = required; *k; k++)
		if (!json_object_get(item, *k)) {
			bad(c, eb_yj_node_pos(c->doc, item), "missing required key '%s' in %s", *k,
			    what);
			ok = 0;
		}
	return ok;
}

static int get_id(struct actx *c, const json_t *obj, const char *key, uint32_t *out)
{
	const char *s = text_of(c, obj, key);

	if (!s)
		return 0;
	if (!eb_spec_id_parse(s, strlen(s), out)) {
		bad(c, pos_of(c, obj, key), "'%s' must be a number from 0 to 2147483647, not '%s'",
		    key, s);
		return 0;
	}
	return 1;
}

static int get_name(struct actx *c, const json_t *obj, char **out)
{
	const char *s = text_of(c, obj, "name");

	if (!s)
		return 0;
	if (!eb_spec_login_name_valid(s)) {
		struct eb_diag *d = bad(c, pos_of(c, obj, "name"), "invalid name '%s'", s);
		eb_diag_hint(d, "a login name is a lowercase letter or '_', then lowercase letters, "
				"digits, '_' or '-' (at most 32), as useradd wants it");
		return 0;
	}
	*out = eb_xstrdup(s);
	return 1;
}

/* An absolute path: normalised, no "..", not "/" */
static char *get_abs(struct actx *c, const json_t *obj, const char *key)
{
	const char *s = text_of(c, obj, key);
	char *norm;

	if (!s)
		return NULL;
	if (s[0] != '/' || strstr(s, "/../") || (strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/.."))) {
		bad(c, pos_of(c, obj, key), "'%s' must be an absolute path without '..', not '%s'",
		    key, s);
		return NULL;
	}
	norm = eb_path_normalize(s + 1);
	if (!norm || !*norm) {
		bad(c, pos_of(c, obj, key), "'%s' must name a directory below '/', not '%s'", key, s);
		free(norm);
		return NULL;
	}
	{
		char *abs = eb_xasprintf("/%s", norm);
		free(norm);
		return abs;
	}
}

static const json_t *get_list(struct actx *c, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (v && !json_is_array(v)) {
		bad(c, pos_of(c, obj, key), "'%s' must be a list of mappings", key);
		return NULL;
	}
	return v;
}

static void parse_groups(struct actx *c, const json_t *acc, struct eb_spec_accounts *out)
{
	static const char *const known[] = { "name", "gid", NULL };
	static const char *const req[] = { "name", "gid", NULL };
	const json_t *l = get_list(c, acc, "groups");
	size_t i;
	json_t *item;

	if (!l)
		return;
	out->groups = eb_xrealloc(out->groups, (out->ngroups + json_array_size(l) + 1) *
						       sizeof(*out->groups));
	json_array_foreach((json_t *)l, i, item) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, l, NULL, i);
		struct eb_spec_group g = { 0 };

		if (!json_is_object(item)) {
			bad(c, p, "items of 'groups' must be {name, gid} mappings");
			continue;
		}
		if (!entry_keys(c, item, known, req, "a 'groups' entry"))
			continue;
		if (!get_name(c, item, &g.name))
			continue;
		if (!get_id(c, item, "gid", &g.gid)) {
			free(g.name);
			continue;
		}
		g.line = p->line;
		g.col = p->col;
		out->groups[out->ngroups++] = g;
	}
}

static void parse_users(struct actx *c, const json_t *acc, struct eb_spec_accounts *out)
{
	static const char *const known[] = { "name", "uid", "gid", "home", "shell", NULL };
	static const char *const req[] = { "name", "uid", NULL };
	const json_t *l = get_list(c, acc, "users");
	size_t i;
	json_t *item;

	if (!l)
		return;
	out->users = eb_xrealloc(out->users, (out->nusers + json_array_size(l) + 1) *
						     sizeof(*out->users));
	json_array_foreach((json_t *)l, i, item) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, l, NULL, i);
		struct eb_spec_user u = { 0 };
		const char *shell;
		int ok = 1;

		if (!json_is_object(item)) {
			bad(c, p, "items of 'users' must be {name, uid, ...} mappings");
			continue;
		}
		if (!entry_keys(c, item, known, req, "a 'users' entry"))
			continue;
		ok &= get_name(c, item, &u.name);
		ok &= get_id(c, item, "uid", &u.uid);
		if (json_object_get(item, "gid")) {
			u.has_gid = get_id(c, item, "gid", &u.gid);
			ok &= u.has_gid;
		}
		if (json_object_get(item, "home")) {
			u.home = get_abs(c, item, "home");
			ok &= u.home != NULL;
		}
		shell = text_of(c, item, "shell");
		if (shell && (shell[0] != '/' || strpbrk(shell, ":\n"))) {
			bad(c, pos_of(c, item, "shell"), "'shell' must be an absolute path without ':', "
							 "not '%s'", shell);
			ok = 0;
		} else if (shell) {
			u.shell = eb_xstrdup(shell);
		}
		u.line = p->line;
		u.col = p->col;
		if (!ok) {
			free(u.name);
			free(u.home);
			free(u.shell);
			continue;
		}
		out->users[out->nusers++] = u;
	}
}

/* "2775", "0755", 2775 written bare (read as the octal digits it shows) */
static int parse_mode(const char *m, unsigned *out)
{
	size_t len = strlen(m);
	unsigned v = 0;

	if (len >= 2 && m[0] == '0' && m[1] == 'o')
		m += 2, len -= 2;
	if (len < 3 || len > 5)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (m[i] < '0' || m[i] > '7')
			return 0;
		v = v * 8 + (unsigned)(m[i] - '0');
	}
	if (v > 07777)
		return 0;
	*out = v;
	return 1;
}

static void parse_dirs(struct actx *c, const json_t *obj, struct eb_spec_accounts *out)
{
	static const char *const known[] = { "path", "owner", "mode", NULL };
	static const char *const req[] = { "path", NULL };
	const json_t *l = get_list(c, obj, "dirs");
	size_t i;
	json_t *item;

	if (!l)
		return;
	out->dirs = eb_xrealloc(out->dirs, (out->ndirs + json_array_size(l) + 1) *
						   sizeof(*out->dirs));
	json_array_foreach((json_t *)l, i, item) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, l, NULL, i);
		struct eb_spec_dir d = { 0 };
		const char *owner, *mode;
		int ok = 1;

		if (!json_is_object(item)) {
			bad(c, p, "items of 'dirs' must be {path, owner, mode} mappings");
			continue;
		}
		if (!entry_keys(c, item, known, req, "a 'dirs' entry"))
			continue;
		d.path = get_abs(c, item, "path");
		ok &= d.path != NULL;
		d.mode = 0755;
		owner = text_of(c, item, "owner");
		if (owner) {
			const struct eb_yj_pos *op = pos_of(c, item, "owner");
			d.owner_line = op->line;
			d.owner_col = op->col + (op->raw && !op->plain ? 1 : 0);
			if (!eb_spec_owner_valid(owner)) {
				struct eb_diag *f = bad(c, op, "invalid owner '%s'", owner);
				eb_diag_hint(f, "write \"USER\" or \"USER:GROUP\", each a name or a number");
				ok = 0;
			} else {
				d.owner = eb_xstrdup(owner);
			}
		}
		mode = text_of(c, item, "mode");
		if (mode && !parse_mode(mode, &d.mode)) {
			struct eb_diag *f = bad(c, pos_of(c, item, "mode"),
						"invalid mode '%s': expected octal permission bits", mode);
			eb_diag_hint(f, "write it quoted: mode: \"2775\"");
			ok = 0;
		}
		d.line = p->line;
		d.col = p->col;
		if (!ok) {
			free(d.path);
			free(d.owner);
			continue;
		}
		out->dirs[out->ndirs++] = d;
	}
}

void eb_spec_accounts_parse(const struct eb_yj_doc *doc, const char *file, const json_t *obj,
			    struct eb_spec_accounts *acc, struct eb_diag_list *diags)
{
	struct actx c = { doc, file, diags };
	const json_t *a = json_object_get(obj, "accounts");

	if (a && !json_is_object(a)) {
		struct eb_diag *d = bad(&c, pos_of(&c, obj, "accounts"),
					"'accounts' must be a mapping with 'groups' and 'users'");
		(void)d;
	} else if (a) {
		static const char *const known[] = { "groups", "users", NULL };
		static const char *const none[] = { NULL };
		entry_keys(&c, a, known, none, "'accounts'");
		parse_groups(&c, a, acc);
		parse_users(&c, a, acc);
	}
	parse_dirs(&c, obj, acc);
}

void eb_spec_accounts_add(struct eb_spec_accounts *dst, const struct eb_spec_accounts *src)
{
	if (src->ngroups) {
		dst->groups = eb_xrealloc(dst->groups,
					  (dst->ngroups + src->ngroups + 1) * sizeof(*dst->groups));
		for (size_t i = 0; i < src->ngroups; i++) {
			dst->groups[dst->ngroups] = src->groups[i];
			dst->groups[dst->ngroups++].name = eb_xstrdup(src->groups[i].name);
		}
	}
	if (src->nusers) {
		dst->users = eb_xrealloc(dst->users,
					 (dst->nusers + src->nusers + 1) * sizeof(*dst->users));
		for (size_t i = 0; i < src->nusers; i++) {
			struct eb_spec_user *u = &dst->users[dst->nusers++];
			*u = src->users[i];
			u->name = eb_xstrdup(u->name);
			u->home = u->home ? eb_xstrdup(u->home) : NULL;
			u->shell = u->shell ? eb_xstrdup(u->shell) : NULL;
		}
	}
	if (src->ndirs) {
		dst->dirs = eb_xrealloc(dst->dirs, (dst->ndirs + src->ndirs + 1) * sizeof(*dst->dirs));
		for (size_t i = 0; i < src->ndirs; i++) {
			struct eb_spec_dir *d = &dst->dirs[dst->ndirs++];
			*d = src->dirs[i];
			d->path = eb_xstrdup(d->path);
			d->owner = d->owner ? eb_xstrdup(d->owner) : NULL;
		}
	}
}

static void dup_finding(struct eb_diag_list *diags, const char *file, unsigned line,
			unsigned col, const char *what, const char *value, unsigned line0)
{
	struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col, "EB021",
					"%s '%s' is given twice", what, value);
	eb_diag_hint(d, "the first is at line %u; a target's accounts and dirs add to the "
			"spec's, they do not replace them", line0);
}

void eb_spec_accounts_check(const struct eb_spec_accounts *a, const char *file,
			    struct eb_diag_list *diags)
{
	char id[16];

	for (size_t i = 0; i < a->ngroups; i++)
		for (size_t k = 0; k < i; k++) {
			if (strcmp(a->groups[i].name, a->groups[k].name) == 0) {
				dup_finding(diags, file, a->groups[i].line, a->groups[i].col, "group",
					    a->groups[i].name, a->groups[k].line);
				break;
			}
			if (a->groups[i].gid == a->groups[k].gid) {
				snprintf(id, sizeof(id), "%u", (unsigned)a->groups[i].gid);
				dup_finding(diags, file, a->groups[i].line, a->groups[i].col, "gid", id,
					    a->groups[k].line);
				break;
			}
		}
	for (size_t i = 0; i < a->nusers; i++)
		for (size_t k = 0; k < i; k++) {
			if (strcmp(a->users[i].name, a->users[k].name) == 0) {
				dup_finding(diags, file, a->users[i].line, a->users[i].col, "user",
					    a->users[i].name, a->users[k].line);
				break;
			}
			if (a->users[i].uid == a->users[k].uid) {
				snprintf(id, sizeof(id), "%u", (unsigned)a->users[i].uid);
				dup_finding(diags, file, a->users[i].line, a->users[i].col, "uid", id,
					    a->users[k].line);
				break;
			}
		}
	for (size_t i = 0; i < a->ndirs; i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(a->dirs[i].path, a->dirs[k].path) == 0) {
				dup_finding(diags, file, a->dirs[i].line, a->dirs[i].col, "directory",
					    a->dirs[i].path, a->dirs[k].line);
				break;
			}
}

void eb_spec_accounts_release(struct eb_spec_accounts *a)
{
	for (size_t i = 0; i < a->ngroups; i++)
		free(a->groups[i].name);
	free(a->groups);
	for (size_t i = 0; i < a->nusers; i++) {
		free(a->users[i].name);
		free(a->users[i].home);
		free(a->users[i].shell);
	}
	free(a->users);
	for (size_t i = 0; i < a->ndirs; i++) {
		free(a->dirs[i].path);
		free(a->dirs[i].owner);
	}
	free(a->dirs);
	memset(a, 0, sizeof(*a));
}
