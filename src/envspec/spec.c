/*
 * spec.c - validate the YAML/JSON tree of an environment spec into struct
 * eb_spec, reporting every problem at its file:line:col.
 *
 * Validation never stops at the first problem: a user fixing a spec wants
 * the whole list.  Each finding carries a rule id documented in
 * specs/rules.md.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <jansson.h>

#include "envspec/spec.h"
#include "envspec/spec_internal.h"
#include "util/yamljson.h"
#include "util/alloc.h"
#include "util/envexpand.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/glob.h"
#include "util/interrupt.h"

#define SPEC_MAX_BYTES (4u << 20)

const char *const eb_spec_default_names[] = { "envbuild.yaml", "envbuild.yml", "envbuild.json",
					      NULL };

static const char *const known_platforms[] = {
	"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/386", "linux/ppc64le",
	"linux/s390x", "linux/riscv64", NULL,
};

int eb_spec_platform_known(const char *platform)
{
	for (const char *const *p = known_platforms; *p; p++)
		if (strcmp(*p, platform) == 0)
			return 1;
	return 0;
}

struct ctx {
	struct eb_yj_doc *doc;
	const char *file;
	struct eb_diag_list *diags;
	struct eb_spec *spec;
};

enum ktype { K_STR, K_INT, K_STRLIST, K_MAP, K_LIST, K_OBJ, K_CMD };

struct keydef {
	const char *name;
	enum ktype type;
	int required;
};

static const struct keydef top_keys[] = {
	{ "version", K_INT, 1 },       { "name", K_STR, 1 },         { "repository", K_STR, 0 },
	{ "platforms", K_STRLIST, 0 }, { "python", K_STR, 0 },       { "index", K_STR, 0 },
	{ "extra_indexes", K_STRLIST, 0 }, { "package_indexes", K_MAP, 0 },
	{ "env", K_MAP, 0 },           { "labels", K_MAP, 0 },       { "targets", K_OBJ, 1 },
	{ "large_package_mb", K_INT, 0 }, { "apt_sources", K_LIST, 0 },
	{ "requirements_env", K_STRLIST, 0 }, { "cache", K_STR, 0 },
	{ "accounts", K_OBJ, 0 },      { "dirs", K_LIST, 0 },
	{ "cache_from", K_STR, 0 },    { "cache_to", K_STR, 0 },
	{ "bytecode", K_STR, 0 },      { "base_bytecode", K_STR, 0 }, { NULL, 0, 0 },
};

static const struct keydef target_keys[] = {
	{ "base", K_STR, 1 },        { "requirements", K_STRLIST, 0 }, { "packages", K_STRLIST, 0 },
	{ "files", K_LIST, 0 },      { "env", K_MAP, 0 },              { "labels", K_MAP, 0 },
	{ "workdir", K_STR, 0 },     { "user", K_STR, 0 },             { "entrypoint", K_CMD, 0 },
	{ "cmd", K_CMD, 0 },         { "platforms", K_STRLIST, 0 },    { "python", K_STR, 0 },
	{ "description", K_STR, 0 }, { "interpreter", K_STR, 0 },      { "site_packages", K_STR, 0 },
	{ "libc", K_STR, 0 },        { "apt", K_STRLIST, 0 },          { "apt_sources", K_LIST, 0 },
	{ "requirements_in", K_STRLIST, 0 }, { "extras", K_STRLIST, 0 },
	{ "groups", K_STRLIST, 0 },
	{ "accounts", K_OBJ, 0 },    { "dirs", K_LIST, 0 },
	{ "expose", K_STRLIST, 0 },  { "stopsignal", K_STR, 0 },
	{ "build_requirements", K_STRLIST, 0 }, { "build_in", K_STR, 0 },
	{ "bytecode", K_STR, 0 },    { "base_bytecode", K_STR, 0 },
	{ NULL, 0, 0 },
};

static const struct keydef apt_source_keys[] = {
	{ "url", K_STR, 1 },       { "suite", K_STR, 1 },      { "components", K_STRLIST, 1 },
	{ "signed_by", K_STR, 1 }, { "check_valid_until", K_STR, 0 }, { NULL, 0, 0 },
};

static const struct keydef file_keys[] = {
	{ "src", K_STR, 1 },   { "dest", K_STR, 1 },  { "exclude", K_STRLIST, 0 },
	{ "chown", K_STR, 0 }, { "chmod", K_STR, 0 }, { NULL, 0, 0 },
};

static const char *type_name(enum ktype t)
{
	switch (t) {
	case K_STR: return "a string";
	case K_INT: return "an integer";
	case K_STRLIST: return "a list of strings";
	case K_MAP: return "a mapping of names to strings";
	case K_LIST: return "a list";
	case K_OBJ: return "a mapping";
	case K_CMD: return "a list of strings";
	}
	return "?";
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "a mapping";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static struct eb_diag *finding(struct ctx *c, const struct eb_yj_pos *p, const char *rule,
			       const char *fmt, ...) EB_PRINTF(4, 5);

static struct eb_diag *finding(struct ctx *c, const struct eb_yj_pos *p, const char *rule,
			       const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	struct eb_diag *d;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	d = eb_diag_add(c->diags, EB_SEV_ERROR, c->file, p->line, p->col, rule, "%s", msg);
	free(msg);
	return d;
}

static size_t levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[64];

	if (lb >= 64 || la >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

static const char *did_you_mean(const char *key, const struct keydef *defs)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX;
	size_t limit = strlen(key) <= 4 ? 1 : (strlen(key) <= 8 ? 2 : 3);

	for (; defs->name; defs++) {
		size_t d = levenshtein(key, defs->name);
		if (d < bestd) {
			bestd = d;
			best = defs->name;
		}
	}
	/* "requirement" for "requirements", "env_vars" is not close to "env" */
	return bestd <= limit ? best : NULL;
}

static void check_keys(struct ctx *c, const json_t *obj, const struct keydef *defs,
		       const char *where)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const struct keydef *d;
		for (d = defs; d->name; d++)
			if (strcmp(d->name, key) == 0)
				break;
		if (!d->name) {
			const char *sugg = did_you_mean(key, defs);
			struct eb_diag *f = finding(c, eb_yj_key_pos(c->doc, obj, key), "EB002",
						    "unknown key '%s' in %s", key, where);
			if (sugg)
				eb_diag_hint(f, "did you mean '%s'?", sugg);
			else
				eb_diag_hint(f, "see specs/envbuild-yaml.md for the keys of %s", where);
		}
	}
	for (const struct keydef *d = defs; d->name; d++)
		if (d->required && !json_object_get(obj, d->name)) {
			struct eb_diag *f = finding(c, eb_yj_node_pos(c->doc, obj), "EB005",
						    "missing required key '%s' in %s", d->name, where);
			(void)f;
		}
}

/* The text of a scalar: strings as they are, plain numbers and booleans as
 * written (so `BATCH_SIZE: 32` is "32" and `python: 3.10` stays "3.10").
 * NULL for containers and null. */
static const char *scalar_text(struct ctx *c, const json_t *parent, const char *key, size_t idx,
			       const json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_number(v) || json_is_boolean(v)) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, parent, key, idx);
		return p->raw;
	}
	return NULL;
}

/* Columns point at the first character of the content, so a finding
 * inside a quoted value ("numpy>=1") lands on the right character. */
static void set_pos(struct eb_srcpos *dst, const struct eb_yj_pos *p)
{
	dst->line = p->line;
	dst->col = p->col + (p->raw && !p->plain ? 1 : 0);
}

/* A string value; numbers are accepted for keys where users write them
 * bare (python: 3.11).  Returns 0 when absent or wrong (finding added). */
static int get_str(struct ctx *c, const json_t *obj, const char *key, struct eb_spec_str *out,
		   int allow_number)
{
	const json_t *v = json_object_get(obj, key);
	const struct eb_yj_pos *p;
	const char *s;

	if (!v)
		return 0;
	p = eb_yj_value_pos(c->doc, obj, key, 0);
	if (json_is_string(v) || (allow_number && json_is_number(v))) {
		s = scalar_text(c, obj, key, 0, v);
		if (s && *s) {
			free(out->s);
			out->s = eb_xstrdup(s);
			set_pos(&out->pos, p);
			return 1;
		}
		finding(c, p, "EB011", "'%s' must not be empty", key);
		return 0;
	}
	finding(c, p, "EB003", "'%s' must be %s, not %s", key, type_name(K_STR), json_kind(v));
	return 0;
}

static void get_strlist(struct ctx *c, const json_t *obj, const char *key,
			struct eb_spec_strlist *out, int allow_scalar_items)
{
	const json_t *v = json_object_get(obj, key);
	size_t i;
	json_t *item;

	if (!v)
		return;
	if (!json_is_array(v)) {
		struct eb_diag *f = finding(c, eb_yj_value_pos(c->doc, obj, key, 0), "EB003",
					    "'%s' must be %s, not %s", key, type_name(K_STRLIST),
					    json_kind(v));
		if (json_is_string(v))
			eb_diag_hint(f, "write it as a list: %s: [%s]", key, json_string_value(v));
		return;
	}
	out->v = eb_xcalloc(json_array_size(v) + 1, sizeof(*out->v));
	json_array_foreach((json_t *)v, i, item) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, v, NULL, i);
		const char *s = NULL;

		if (json_is_string(item) || (allow_scalar_items && json_is_number(item)))
			s = scalar_text(c, v, NULL, i, item);
		if (!s) {
			finding(c, p, "EB003", "items of '%s' must be strings, not %s", key,
				json_kind(item));
			continue;
		}
		out->v[out->n].s = eb_xstrdup(s);
		set_pos(&out->v[out->n].pos, p);
		out->n++;
	}
}

static int env_name_valid(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* Set k in l.  idx (a jansson object, hashed) maps the keys already in l
 * to their index, so a 300k-key mapping is not a quadratic scan; NULL when
 * the caller knows k is new. */
static void kv_set(struct eb_spec_kvlist *l, const char *k, const char *v,
		   const struct eb_yj_pos *p, json_t *idx)
{
	json_t *at = idx ? json_object_get(idx, k) : NULL;

	if (at) {
		size_t i = (size_t)json_integer_value(at);
		free(l->v[i].value);
		l->v[i].value = eb_xstrdup(v);
		set_pos(&l->v[i].pos, p);
		return;
	}
	/* capacity is max(4, the next power of two): doubling, not n+1 */
	if (l->n == 0 || (l->n >= 4 && (l->n & (l->n - 1)) == 0))
		l->v = eb_xreallocarray(l->v, l->n ? 2 * l->n : 4, sizeof(*l->v));
	l->v[l->n].key = eb_xstrdup(k);
	l->v[l->n].value = eb_xstrdup(v);
	set_pos(&l->v[l->n].pos, p);
	if (idx)
		json_object_set_new(idx, k, json_integer((json_int_t)l->n));
	l->n++;
}

enum map_kind { MAP_ENV, MAP_LABELS, MAP_INDEXES };

static void get_map(struct ctx *c, const json_t *obj, const char *key, struct eb_spec_kvlist *out,
		    enum map_kind kind)
{
	const json_t *v = json_object_get(obj, key);
	const char *k;
	json_t *val, *idx;

	if (!v)
		return;
	if (!json_is_object(v)) {
		finding(c, eb_yj_value_pos(c->doc, obj, key, 0), "EB003", "'%s' must be %s, not %s",
			key, type_name(K_MAP), json_kind(v));
		return;
	}
	idx = json_object();
	for (size_t i = 0; i < out->n; i++)
		json_object_set_new(idx, out->v[i].key, json_integer((json_int_t)i));
	json_object_foreach((json_t *)v, k, val) {
		const struct eb_yj_pos *kp = eb_yj_key_pos(c->doc, v, k);
		const char *s;

		if (eb_interrupted()) /* main reports it; the findings so far are moot */
			break;
		s = scalar_text(c, v, k, 0, val);

		if (kind == MAP_ENV && !env_name_valid(k)) {
			struct eb_diag *f = finding(c, kp, "EB007",
						    "invalid environment variable name '%s'", k);
			eb_diag_hint(f, "names are letters, digits and '_', not starting with a digit");
			continue;
		}
		if (kind == MAP_LABELS && !*k) {
			finding(c, kp, "EB011", "label names must not be empty");
			continue;
		}
		if (!s) {
			struct eb_diag *f = finding(c, eb_yj_value_pos(c->doc, v, k, 0), "EB003",
						    "value of '%s' must be a string, not %s", k,
						    json_kind(val));
			if (json_is_null(val))
				eb_diag_hint(f, "write an empty string as \"\"");
			continue;
		}
		if (kind == MAP_INDEXES && strncmp(s, "https://", 8) != 0 &&
		    strncmp(s, "http://", 7) != 0 && strncmp(s, "file://", 7) != 0) {
			finding(c, eb_yj_value_pos(c->doc, v, k, 0), "EB011",
				"index for '%s' must be an http(s):// or file:// URL", k);
			continue;
		}
		kv_set(out, k, s, kp, idx);
	}
	json_decref(idx);
}

static void check_url(struct ctx *c, const struct eb_spec_str *u, const char *key)
{
	struct eb_yj_pos p = { u->pos.line, u->pos.col, 0, NULL };
	const char *rel;

	if (!u->s)
		return;
	/* a path (no scheme) is a directory of wheels, for air-gapped sites */
	if (strstr(u->s, "://") && strncmp(u->s, "https://", 8) != 0 &&
	    strncmp(u->s, "http://", 7) != 0 && strncmp(u->s, "file://", 7) != 0) {
		finding(c, &p, "EB011",
			"'%s' must be an http(s):// or file:// URL or a directory, not '%s'", key, u->s);
		return;
	}
	/* a relative directory, or file: URL, is the project's: it stays in it */
	rel = eb_spec_index_relpath(u->s);
	if (rel) {
		char *norm = eb_path_normalize(*rel ? rel : ".");
		if (!norm) {
			struct eb_diag *d = finding(c, &p, "EB009",
						    "'%s' must stay inside the project directory: '%s'",
						    key, u->s);
			eb_diag_hint(d, "give a path relative to the spec's directory, without "
				     "leading '..', or an absolute one (file:///srv/wheels)");
		}
		free(norm);
	}
}

const char *eb_spec_index_relpath(const char *loc)
{
	if (strncasecmp(loc, "file:", 5) == 0) {
		const char *r = loc + 5;
		if (r[0] == '/' && r[1] == '/') {
			r += 2;
			/* file:///abs and file://localhost/abs are absolute */
			if (r[0] == '/' || strncasecmp(r, "localhost/", 10) == 0)
				return NULL;
		}
		return r[0] == '/' ? NULL : r;
	}
	if (strstr(loc, "://") || loc[0] == '/')
		return NULL;
	return loc;
}

static int name_valid(const char *s)
{
	/* lowercase alphanumerics separated by single '.', '_' or '-' */
	if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++) {
		if (islower((unsigned char)*s) || isdigit((unsigned char)*s))
			continue;
		if (strchr("._-", *s) && s[1] && (islower((unsigned char)s[1]) || isdigit((unsigned char)s[1])))
			continue;
		return 0;
	}
	return 1;
}

static int python_valid(const char *s)
{
	/* "3", "3.11" or "3.11.4" */
	int parts = 0;

	for (;;) {
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
		parts++;
		if (!*s)
			return parts <= 3;
		if (*s != '.')
			return 0;
		s++;
	}
}

static void check_platforms(struct ctx *c, const struct eb_spec_strlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct eb_yj_pos p = { l->v[i].pos.line, l->v[i].pos.col, 0, NULL };
		if (strcmp(l->v[i].s, "linux/arm64/v8") == 0) {
			free(l->v[i].s);
			l->v[i].s = eb_xstrdup("linux/arm64");
		}
		if (!eb_spec_platform_known(l->v[i].s)) {
			struct eb_diag *f = finding(c, &p, "EB010", "unknown platform '%s'", l->v[i].s);
			eb_diag_hint(f, "use one of linux/amd64, linux/arm64, linux/arm/v7, linux/386, "
					"linux/ppc64le, linux/s390x, linux/riscv64");
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(l->v[j].s, l->v[i].s) == 0)
				finding(c, &p, "EB011", "platform '%s' is listed twice", l->v[i].s);
	}
}

/* "python -m app" -> "python, -m, app" for a hint (no shell quoting rules:
 * a hint only has to show the shape). */
static char *split_words(const char *s)
{
	struct eb_buf b;
	int first = 1;

	eb_buf_init(&b, 0);
	while (*s) {
		size_t n;
		while (*s == ' ' || *s == '\t')
			s++;
		n = strcspn(s, " \t");
		if (!n)
			break;
		(void)eb_buf_addf(&b, "%s%.*s", first ? "" : ", ", (int)n, s);
		first = 0;
		s += n;
	}
	return eb_buf_detach(&b, NULL);
}

static void check_cmd(struct ctx *c, const json_t *obj, const char *key,
		      struct eb_spec_strlist *out, int *has)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (json_is_string(v)) {
		struct eb_diag *f = finding(c, eb_yj_value_pos(c->doc, obj, key, 0), "EB003",
					    "'%s' must be a list of strings (exec form), not a string",
					    key);
		char *list = split_words(json_string_value(v));
		eb_diag_hint(f, "envbuild runs no shell: write %s: [%s]", key, list);
		free(list);
		return;
	}
	get_strlist(c, obj, key, out, 1);
	*has = json_is_array(v);
}

static void check_abs_path(struct ctx *c, const struct eb_spec_str *s, const char *key)
{
	struct eb_yj_pos p = { s->pos.line, s->pos.col, 0, NULL };

	if (!s->s)
		return;
	if (s->s[0] != '/') {
		struct eb_diag *f = finding(c, &p, "EB008", "'%s' must be an absolute path, not '%s'",
					    key, s->s);
		eb_diag_hint(f, "write '/%s'", s->s);
		return;
	}
	/* a control character makes a tar name that clients truncate (NUL)
	 * or split (newline); a ".wh." name is an OCI whiteout, which would
	 * delete or hide the base image's files instead of adding one */
	for (const unsigned char *q = (const unsigned char *)s->s; *q; q++)
		if (*q < 0x20 || *q == 0x7f) {
			struct eb_diag *f = finding(c, &p, "EB008",
						    "'%s' contains a control character (0x%02x)", key,
						    *q);
			eb_diag_hint(f, "paths in the image are printable text");
			return;
		}
	/* what tar and OCI clients can unpack: NAME_MAX per component, and
	 * room below PATH_MAX (the same limits as wheel paths) */
	{
		size_t comp = 0, maxcomp = 0;
		for (const char *q = s->s; *q; q++) {
			comp = *q == '/' ? 0 : comp + 1;
			if (comp > maxcomp)
				maxcomp = comp;
		}
		if (strlen(s->s) > 3072 || maxcomp > 255) {
			struct eb_diag *f = finding(c, &p, "EB008", "'%s' is too long for an image path",
						    key);
			eb_diag_hint(f, "at most 3072 bytes, and 255 bytes per component");
			return;
		}
	}
	for (const char *q = s->s; (q = strstr(q, "/.wh.")) != NULL; q++) {
		struct eb_diag *f = finding(c, &p, "EB008",
					    "'%s' names a whiteout file ('.wh.' prefix): '%s'", key, s->s);
		eb_diag_hint(f, "OCI layers use '.wh.' names to delete files of lower layers");
		return;
	}
}

/* chown: "UID" or "UID:GID" (a UID alone is also the GID, as COPY
 * --chown=10 does); chmod: octal "640" or "0640", at most 07777. */
static void check_owner_mode(struct ctx *c, struct eb_spec_file *f)
{
	if (f->chown.s) {
		const char *colon = strchr(f->chown.s, ':');
		size_t ulen = colon ? (size_t)(colon - f->chown.s) : strlen(f->chown.s);
		int ok = eb_spec_id_parse(f->chown.s, ulen, &f->uid);

		if (ok && colon)
			ok = eb_spec_id_parse(colon + 1, strlen(colon + 1), &f->gid);
		else if (ok)
			f->gid = f->uid;
		/* names resolve against the base's and the spec's accounts at build */
		if (!ok && eb_spec_owner_valid(f->chown.s))
			ok = f->chown_named = 1;
		if (!ok) {
			struct eb_yj_pos p = { f->chown.pos.line, f->chown.pos.col, 0, NULL };
			struct eb_diag *d = finding(c, &p, "EB011",
						    "invalid chown '%s': expected \"USER\" or \"USER:GROUP\"",
						    f->chown.s);
			eb_diag_hint(d, "each side a login name or a number (\"app:0\", \"1000:1000\")");
		}
	}
	if (f->chmod.s) {
		const char *m = f->chmod.s;
		size_t len = strlen(m);
		unsigned v = 0;
		int ok = len >= 3 && len <= 5;

		if (ok && len == 5)
			ok = m[0] == '0' && m[1] == 'o' ? (m += 2, len -= 2, 1) : 0;
		for (size_t i = 0; ok && i < len; i++) {
			ok = m[i] >= '0' && m[i] <= '7';
			v = v * 8 + (unsigned)(m[i] - '0');
		}
		if (ok && (v > 07777 || v == 0))
			ok = 0; /* 0 would read as "unset": no file wants no bits at all */
		if (!ok) {
			struct eb_yj_pos p = { f->chmod.pos.line, f->chmod.pos.col, 0, NULL };
			struct eb_diag *d = finding(c, &p, "EB011",
						    "invalid chmod '%s': expected octal permission bits "
						    "such as \"0640\"", f->chmod.s);
			eb_diag_hint(d, "write it quoted: chmod: \"0640\"");
		} else {
			f->mode = v;
		}
	}
}

static void parse_files(struct ctx *c, const json_t *tobj, struct eb_spec_target *t)
{
	const json_t *v = json_object_get(tobj, "files");
	size_t i;
	json_t *item;

	if (!v)
		return;
	if (!json_is_array(v)) {
		finding(c, eb_yj_value_pos(c->doc, tobj, "files", 0), "EB003",
			"'files' must be a list of {src, dest} mappings, not %s", json_kind(v));
		return;
	}
	/* each entry is a layer source the build holds at once: a bound
	 * (a directory entry copies any number of files) */
	if (json_array_size(v) > EB_SPEC_FILES_MAX) {
		struct eb_diag *f = finding(c, eb_yj_value_pos(c->doc, tobj, "files", 0), "EB011",
					    "'files' has %zu entries, more than %d",
					    json_array_size(v), EB_SPEC_FILES_MAX);
		eb_diag_hint(f, "copy directories: { src: app/, dest: /app/ } takes all of app/");
		return;
	}
	t->files = eb_xcalloc(json_array_size(v) + 1, sizeof(*t->files));
	json_array_foreach((json_t *)v, i, item) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, v, NULL, i);
		struct eb_spec_file *f = &t->files[t->nfiles];
		char *norm;

		if (!json_is_object(item)) {
			finding(c, p, "EB003", "items of 'files' must be {src, dest} mappings, not %s",
				json_kind(item));
			continue;
		}
		check_keys(c, item, file_keys, "a 'files' entry");
		set_pos(&f->pos, p);
		get_str(c, item, "src", &f->src, 0);
		get_str(c, item, "dest", &f->dest, 0);
		get_strlist(c, item, "exclude", &f->exclude, 0);
		get_str(c, item, "chown", &f->chown, 1);
		get_str(c, item, "chmod", &f->chmod, 1);
		if (!f->src.s || !f->dest.s) {
			free(f->src.s);
			free(f->dest.s);
			free(f->chown.s);
			free(f->chmod.s);
			for (size_t k = 0; k < f->exclude.n; k++)
				free(f->exclude.v[k].s);
			free(f->exclude.v);
			memset(f, 0, sizeof(*f));
			continue;
		}
		check_abs_path(c, &f->dest, "dest");
		check_owner_mode(c, f);
		for (size_t k = 0; k < f->exclude.n; k++) {
			const char *why;
			if (!eb_glob_valid(f->exclude.v[k].s, &why)) {
				struct eb_yj_pos xp = { f->exclude.v[k].pos.line,
							f->exclude.v[k].pos.col, 0, NULL };
				finding(c, &xp, "EB011", "exclude pattern '%s' %s", f->exclude.v[k].s,
					why);
			}
		}
		norm = f->src.s[0] == '/' ? NULL : eb_path_normalize(f->src.s);
		if (!norm) {
			struct eb_yj_pos sp = { f->src.pos.line, f->src.pos.col, 0, NULL };
			struct eb_diag *d = finding(c, &sp, "EB009",
						    "'src' must stay inside the project directory: '%s'",
						    f->src.s);
			eb_diag_hint(d, "give a path relative to the spec's directory, without leading '..'");
		}
		free(norm);
		t->nfiles++;
	}
}

/* ---- Debian packages ----------------------------------------------------- */

static void apt_sources_free(struct eb_spec_apt_sources *l);
static void copy_strlist(struct eb_spec_strlist *dst, const struct eb_spec_strlist *src);

static void parse_apt_sources(struct ctx *c, const json_t *obj, struct eb_spec_apt_sources *out)
{
	const json_t *v = json_object_get(obj, "apt_sources");
	size_t i;
	json_t *item;

	if (!v)
		return;
	if (!json_is_array(v)) {
		finding(c, eb_yj_value_pos(c->doc, obj, "apt_sources", 0), "EB003",
			"'apt_sources' must be a list of {url, suite, components, signed_by} "
			"mappings, not %s", json_kind(v));
		return;
	}
	out->v = eb_xcalloc(json_array_size(v) + 1, sizeof(*out->v));
	json_array_foreach((json_t *)v, i, item) {
		const struct eb_yj_pos *p = eb_yj_value_pos(c->doc, v, NULL, i);
		struct eb_spec_apt_source *a = &out->v[out->n];
		const json_t *cv;

		if (!json_is_object(item)) {
			finding(c, p, "EB003", "items of 'apt_sources' must be mappings, not %s",
				json_kind(item));
			continue;
		}
		check_keys(c, item, apt_source_keys, "an 'apt_sources' entry");
		set_pos(&a->pos, p);
		a->check_valid_until = 1;
		get_str(c, item, "url", &a->url, 0);
		get_str(c, item, "suite", &a->suite, 0);
		get_strlist(c, item, "components", &a->components, 0);
		get_str(c, item, "signed_by", &a->signed_by, 0);
		cv = json_object_get(item, "check_valid_until");
		if (cv && json_is_boolean(cv))
			a->check_valid_until = json_is_true(cv);
		else if (cv)
			finding(c, eb_yj_value_pos(c->doc, item, "check_valid_until", 0), "EB003",
				"'check_valid_until' must be true or false, not %s", json_kind(cv));
		if (a->url.s && strncmp(a->url.s, "http://", 7) != 0 &&
		    strncmp(a->url.s, "https://", 8) != 0)
			finding(c, &(struct eb_yj_pos){ a->url.pos.line, a->url.pos.col, 0, NULL },
				"EB233", "apt source 'url' must be an http(s):// URL, not '%s'",
				a->url.s);
		if (a->suite.s && (strchr(a->suite.s, '/') || strchr(a->suite.s, ' ')))
			finding(c, &(struct eb_yj_pos){ a->suite.pos.line, a->suite.pos.col, 0, NULL },
				"EB233", "invalid apt suite '%s'", a->suite.s);
		for (size_t k = 0; k < a->components.n; k++)
			if (!name_valid(a->components.v[k].s))
				finding(c, &(struct eb_yj_pos){ a->components.v[k].pos.line,
								a->components.v[k].pos.col, 0, NULL },
					"EB233", "invalid apt component '%s'", a->components.v[k].s);
		if (json_is_array(json_object_get(item, "components")) && !a->components.n)
			finding(c, eb_yj_value_pos(c->doc, item, "components", 0), "EB233",
				"'components' must name at least one component");
		if (a->signed_by.s) {
			char *kp = eb_spec_resolve(c->spec, a->signed_by.s);
			if (access(kp, R_OK) != 0) {
				struct eb_diag *f = finding(
					c, &(struct eb_yj_pos){ a->signed_by.pos.line, a->signed_by.pos.col, 0, NULL },
					"EB233", "keyring '%s' does not exist or cannot be read", a->signed_by.s);
				eb_diag_hint(f, "signed_by names the OpenPGP keyring that signs the "
					     "suite, e.g. /usr/share/keyrings/debian-archive-keyring.gpg");
			}
			free(kp);
		}
		out->n++;
	}
}

/* A Debian package name (policy 5.6.1): [a-z0-9][a-z0-9+.-]+ */
static int deb_name_valid(const char *s, size_t n)
{
	if (n < 2 || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
		      strchr("+.-", s[i])))
			return 0;
	return 1;
}

/* dpkg's version syntax: [epoch:]upstream[-revision], upstream starting
 * with a digit; returns the 0-based offset of the first bad byte or -1 */
static long deb_version_bad(const char *v)
{
	const char *colon = strchr(v, ':'), *up = v, *dash;

	if (colon) {
		if (colon == v)
			return 0;
		for (const char *p = v; p < colon; p++)
			if (!isdigit((unsigned char)*p))
				return p - v;
		up = colon + 1;
	}
	if (!isdigit((unsigned char)*up))
		return up - v;
	dash = strrchr(up, '-');
	for (const char *p = up; *p; p++) {
		int rev = dash && p > dash;
		if (p == dash)
			continue;
		if (!isalnum((unsigned char)*p) && !strchr(rev ? ".+~" : ".+~:-", *p))
			return p - v;
	}
	if (dash && !dash[1])
		return dash - v;
	return -1;
}

static void parse_apt(struct ctx *c, const json_t *tobj, struct eb_spec_target *t)
{
	get_strlist(c, tobj, "apt", &t->apt, 0);
	for (size_t i = 0; i < t->apt.n; i++) {
		const struct eb_spec_str *e = &t->apt.v[i];
		struct eb_yj_pos p = { e->pos.line, e->pos.col, 0, NULL };
		const char *s = e->s, *eq = strchr(s, '='), *colon;
		size_t nlen;
		struct eb_diag *f;

		colon = memchr(s, ':', eq ? (size_t)(eq - s) : strlen(s));
		nlen = colon ? (size_t)(colon - s) : eq ? (size_t)(eq - s) : strlen(s);
		if (!eq || !eq[1] || strcspn(eq + 1, "*?[]") != strlen(eq + 1) ||
		    strchr("<>=", eq[1]) || (eq > s && strchr("<>!", eq[-1]))) {
			f = finding(c, &p, "EB231", "apt package '%s' is not pinned to an exact version",
				    s);
			/* a loose name is what `envbuild pin` pins; a pattern or
			 * a range is the user's to say exactly */
			if (!eq || !eq[1])
				eb_diag_hint(f, "run `envbuild pin` to pin %.*s (and the Depends the "
					     "base lacks) to the version apt_sources: has, or write "
					     "%.*s=VERSION as `apt-cache policy %.*s` shows it",
					     (int)nlen, s, (int)nlen, s, (int)nlen, s);
			else
				eb_diag_hint(f, "write one exact version, %.*s=VERSION as `apt-cache "
					     "policy %.*s` shows it, or just %.*s and run `envbuild pin`",
					     (int)nlen, s, (int)nlen, s, (int)nlen, s);
			continue;
		}
		if (!deb_name_valid(s, nlen)) {
			f = finding(c, &p, "EB230", "invalid Debian package name '%.*s'", (int)nlen, s);
			eb_diag_hint(f, "package names are lower case: [a-z0-9][a-z0-9+.-]+");
			continue;
		}
		if (colon) {
			const char *a = colon + 1;
			size_t alen = (size_t)(eq - a);
			int ok = alen > 0;
			for (size_t k = 0; k < alen; k++)
				if (!(islower((unsigned char)a[k]) || isdigit((unsigned char)a[k])))
					ok = 0;
			if (!ok) {
				p.col += (unsigned)(a - s);
				finding(c, &p, "EB230", "invalid architecture '%.*s' in apt pin '%s'",
					(int)alen, a, s);
				continue;
			}
		}
		long bad = deb_version_bad(eq + 1);
		if (bad >= 0) {
			p.col += (unsigned)(eq + 1 - s) + (unsigned)bad;
			finding(c, &p, "EB230", "invalid Debian version '%s' in apt pin '%s'", eq + 1,
				s);
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			const char *o = t->apt.v[j].s;
			size_t olen = strcspn(o, "=");
			if (olen == (size_t)(eq - s) && !strncmp(o, s, olen) && strcmp(o, s) != 0) {
				f = finding(c, &p, "EB234", "'%.*s' is pinned twice: '%s' and '%s'",
					    (int)olen, s, o, s);
				break;
			}
		}
	}
	if (json_object_get(tobj, "apt_sources"))
		parse_apt_sources(c, tobj, &t->apt_sources);
	else if (c->spec->apt_sources.n) {
		/* the spec's sources: copied so each target owns its list */
		const struct eb_spec_apt_sources *g = &c->spec->apt_sources;
		t->apt_sources.v = eb_xcalloc(g->n + 1, sizeof(*t->apt_sources.v));
		for (size_t i = 0; i < g->n; i++) {
			struct eb_spec_apt_source *d = &t->apt_sources.v[i];
			const struct eb_spec_apt_source *o = &g->v[i];
			*d = *o;
			d->url.s = o->url.s ? eb_xstrdup(o->url.s) : NULL;
			d->suite.s = o->suite.s ? eb_xstrdup(o->suite.s) : NULL;
			d->signed_by.s = o->signed_by.s ? eb_xstrdup(o->signed_by.s) : NULL;
			copy_strlist(&d->components, &o->components);
		}
		t->apt_sources.n = g->n;
	}
	if (t->apt.n && !t->apt_sources.n) {
		struct eb_yj_pos p = { t->apt.v[0].pos.line, t->apt.v[0].pos.col, 0, NULL };
		struct eb_diag *f = finding(c, &p, "EB232",
					    "target '%s' pins apt packages but names no apt source",
					    t->name);
		eb_diag_hint(f, "add apt_sources: [{url, suite, components, signed_by}] to the spec");
	}
}

/* Env values are expanded at build time against the base image's env
 * and the entries before them (util/envexpand.h).  Here, without the
 * base: syntax errors, and references to variables the spec does not set
 * before (PATH aside: every image has one), which only the base can
 * still define. */
struct env_refs {
	struct ctx *c;
	const struct eb_spec_target *t;
	size_t upto;
	const struct eb_spec_kv *kv;
};

static const char *env_refs_lookup(void *ctx, const char *name, size_t len)
{
	const struct env_refs *er = ctx;

	if (len == 4 && strncmp(name, "PATH", 4) == 0)
		return "";
	for (size_t i = 0; i < er->upto; i++)
		if (strlen(er->t->env.v[i].key) == len && strncmp(er->t->env.v[i].key, name, len) == 0)
			return er->t->env.v[i].value;
	return NULL;
}

static void env_refs_unset(void *ctx, const char *name, size_t len, size_t off)
{
	const struct env_refs *er = ctx;
	struct eb_diag *d;

	(void)off;
	d = eb_diag_add(er->c->diags, EB_SEV_WARNING, er->c->file, er->kv->pos.line, er->kv->pos.col,
			"EB017", "%s refers to $%.*s, which the spec does not set before it; it "
			"expands to the base image's value, or to nothing", er->kv->key, (int)len, name);
	eb_diag_hint(d, "set %.*s earlier in 'env', or write ${%.*s:-default}", (int)len, name,
		     (int)len, name);
}

static void check_env_refs(struct ctx *c, const struct eb_spec_target *t)
{
	for (size_t i = 0; i < t->env.n; i++) {
		struct env_refs er = { c, t, i, &t->env.v[i] };
		struct eb_error *err = NULL;
		char *out = NULL;

		if (eb_envexpand(t->env.v[i].value, env_refs_lookup, env_refs_unset, &er, &out,
				 &err) < 0) {
			struct eb_yj_pos p = { t->env.v[i].pos.line, t->env.v[i].pos.col, 0, NULL };
			finding(c, &p, "EB011", "invalid value of %s: %s (write \\$ for a literal $)",
				t->env.v[i].key, err->msg);
			eb_error_free(err);
		}
		free(out);
	}
}

static void copy_strlist(struct eb_spec_strlist *dst, const struct eb_spec_strlist *src)
{
	dst->v = eb_xcalloc(src->n + 1, sizeof(*dst->v));
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i].s = eb_xstrdup(src->v[i].s);
		dst->v[i].pos = src->v[i].pos;
	}
	dst->n = src->n;
}

/* A true/false key of obj (`bytecode`, `base_bytecode`): def when absent. */
static int get_bool(struct ctx *c, const json_t *obj, const char *key, int def)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return def;
	if (json_is_boolean(v))
		return json_is_true(v);
	finding(c, eb_yj_value_pos(c->doc, obj, key, 0), "EB003", "'%s' must be true or false, not %s",
		key, json_kind(v));
	return def;
}

static void parse_target(struct ctx *c, const json_t *targets, const char *name,
			 const json_t *tobj, const struct eb_spec_kvlist *env,
			 const struct eb_spec_kvlist *labels)
{
	struct eb_spec *spec = c->spec;
	struct eb_spec_target *t;
	const struct eb_yj_pos *kp = eb_yj_key_pos(c->doc, targets, name);
	struct eb_spec_str desc = { 0 };
	char *where;

	if (!name_valid(name)) {
		struct eb_diag *f = finding(c, kp, "EB011", "invalid target name '%s'", name);
		eb_diag_hint(f, "use lowercase letters and digits separated by '.', '_' or '-'");
	}
	if (!json_is_object(tobj)) {
		finding(c, eb_yj_value_pos(c->doc, targets, name, 0), "EB003",
			"target '%s' must be a mapping, not %s", name, json_kind(tobj));
		return;
	}
	t = &spec->targets[spec->ntargets++];
	t->name = eb_xstrdup(name);
	set_pos(&t->pos, kp);
	t->bytecode = get_bool(c, tobj, "bytecode", spec->bytecode);
	t->base_bytecode = get_bool(c, tobj, "base_bytecode", spec->base_bytecode);
	where = eb_xasprintf("target '%s'", name);
	check_keys(c, tobj, target_keys, where);
	free(where);
	get_str(c, tobj, "base", &t->base, 0);
	get_strlist(c, tobj, "requirements", &t->requirements, 0);
	get_strlist(c, tobj, "packages", &t->packages, 0);
	get_strlist(c, tobj, "requirements_in", &t->requirements_in, 0);
	get_strlist(c, tobj, "extras", &t->extras, 0);
	get_strlist(c, tobj, "groups", &t->groups, 0);
	get_strlist(c, tobj, "build_requirements", &t->build_requirements, 0);
	get_str(c, tobj, "build_in", &t->build_in, 0);
	parse_files(c, tobj, t);
	for (size_t i = 0; i < env->n; i++)
		kv_set(&t->env, env->v[i].key, env->v[i].value,
		       &(struct eb_yj_pos){ env->v[i].pos.line, env->v[i].pos.col, 0, NULL }, NULL);
	get_map(c, tobj, "env", &t->env, MAP_ENV);
	check_env_refs(c, t);
	for (size_t i = 0; i < labels->n; i++)
		kv_set(&t->labels, labels->v[i].key, labels->v[i].value,
		       &(struct eb_yj_pos){ labels->v[i].pos.line, labels->v[i].pos.col, 0, NULL }, NULL);
	get_map(c, tobj, "labels", &t->labels, MAP_LABELS);
	get_str(c, tobj, "workdir", &t->workdir, 0);
	check_abs_path(c, &t->workdir, "workdir");
	get_str(c, tobj, "user", &t->user, 1);
	if (t->user.s && !eb_spec_owner_valid(t->user.s)) {
		struct eb_diag *f = finding(c, &(struct eb_yj_pos){ t->user.pos.line, t->user.pos.col, 0, NULL },
					    "EB020", "invalid user '%s'", t->user.s);
		eb_diag_hint(f, "write \"NAME\", \"NAME:GROUP\" or \"UID[:GID]\"");
	}
	check_cmd(c, tobj, "entrypoint", &t->entrypoint, &t->has_entrypoint);
	check_cmd(c, tobj, "cmd", &t->cmd, &t->has_cmd);
	if (json_object_get(tobj, "platforms")) {
		get_strlist(c, tobj, "platforms", &t->platforms, 0);
		check_platforms(c, &t->platforms);
	} else {
		copy_strlist(&t->platforms, &spec->platforms);
	}
	if (get_str(c, tobj, "python", &t->python, 1)) {
		if (!python_valid(t->python.s))
			finding(c, &(struct eb_yj_pos){ t->python.pos.line, t->python.pos.col, 0, NULL },
				"EB011", "invalid python version '%s'", t->python.s);
	} else if (spec->python.s) {
		t->python.s = eb_xstrdup(spec->python.s);
		t->python.pos = spec->python.pos;
	}
	get_str(c, tobj, "description", &desc, 0);
	free(desc.s);
	get_str(c, tobj, "interpreter", &t->interpreter, 0);
	check_abs_path(c, &t->interpreter, "interpreter");
	get_str(c, tobj, "site_packages", &t->site_packages, 0);
	check_abs_path(c, &t->site_packages, "site_packages");
	if (get_str(c, tobj, "libc", &t->libc, 0)) {
		char kind[16];
		int maj, min;
		if (sscanf(t->libc.s, "%15s %d.%d", kind, &maj, &min) != 3 ||
		    (strcmp(kind, "glibc") != 0 && strcmp(kind, "musl") != 0)) {
			struct eb_diag *f = finding(c, &(struct eb_yj_pos){ t->libc.pos.line, t->libc.pos.col, 0, NULL },
						    "EB011", "invalid libc '%s'", t->libc.s);
			eb_diag_hint(f, "write \"glibc 2.36\" or \"musl 1.2\"");
		}
	}
	parse_apt(c, tobj, t);
	eb_spec_accounts_add(&t->accounts, &spec->accounts);
	eb_spec_accounts_parse(c->doc, c->file, tobj, &t->accounts, c->diags);
	eb_spec_accounts_check(&t->accounts, c->file, c->diags);
	eb_spec_runconf_parse(c->doc, c->file, tobj, &t->run, c->diags);
}

/* `build_in` (EB257): another target of the spec, built for every
 * platform of this one, and no chain of builders that comes back. */
static void check_build_in(struct ctx *c)
{
	const struct eb_spec *spec = c->spec;

	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i], *b, *x;
		struct eb_yj_pos p = { t->build_in.pos.line, t->build_in.pos.col, 0, NULL };
		struct eb_diag *f;
		size_t steps = 0;

		if (!t->build_in.s)
			continue;
		if (strcmp(t->build_in.s, t->name) == 0) {
			f = finding(c, &p, "EB257", "target '%s' cannot be built in itself", t->name);
			eb_diag_hint(f, "name the target whose image has the compiler (say 'training'), "
					"or leave out build_in to build in the target's own base");
			continue;
		}
		b = eb_spec_target(spec, t->build_in.s);
		if (!b) {
			struct eb_buf names;
			eb_buf_init(&names, 0);
			for (size_t k = 0; k < spec->ntargets; k++)
				if (k != i)
					(void)eb_buf_addf(&names, "%s'%s'", names.len ? ", " : "",
							  spec->targets[k].name);
			f = finding(c, &p, "EB257", "build_in of target '%s' names '%s', which is not "
				    "a target of the spec", t->name, t->build_in.s);
			if (names.len)
				eb_diag_hint(f, "the other targets are %s", names.ptr);
			else
				eb_diag_hint(f, "add the builder target (its base and apt: pins give "
						"the compiler), then name it here");
			eb_buf_release(&names);
			continue;
		}
		/* a chain of builders longer than the spec has targets loops */
		for (x = b; x && x->build_in.s && steps <= spec->ntargets; steps++) {
			if (strcmp(x->build_in.s, t->name) == 0)
				break;
			x = eb_spec_target(spec, x->build_in.s);
		}
		if (x && x->build_in.s && strcmp(x->build_in.s, t->name) == 0) {
			f = finding(c, &p, "EB257", "build_in of target '%s' is a cycle: '%s' is built "
				    "in '%s', which is built in '%s' again", t->name, t->name,
				    b->name, t->name);
			if (x != b)
				eb_diag_hint(f, "the chain goes on through '%s'", x->name);
			else
				eb_diag_hint(f, "a builder builds its own sdists in its own base; "
						"leave build_in out of one of them");
			continue;
		}
		for (size_t k = 0; k < t->platforms.n; k++) {
			int found = 0;
			for (size_t m = 0; m < b->platforms.n && !found; m++)
				found = strcmp(b->platforms.v[m].s, t->platforms.v[k].s) == 0;
			if (!found) {
				f = finding(c, &p, "EB257", "target '%s' is built for %s, and its builder "
					    "'%s' is not", t->name, t->platforms.v[k].s, b->name);
				eb_diag_hint(f, "add %s to the platforms of '%s': the sdists of each "
						"platform are built in the builder's image of it",
					     t->platforms.v[k].s, b->name);
			}
		}
	}
}

static void validate(struct ctx *c, const json_t *root)
{
	struct eb_spec *spec = c->spec;
	struct eb_spec_kvlist env = { 0 }, labels = { 0 };
	const json_t *v, *targets;
	const char *tname;
	json_t *tobj;

	if (!json_is_object(root)) {
		struct eb_diag *f = finding(c, eb_yj_node_pos(c->doc, root), "EB003",
					    "the spec must be a mapping, not %s", json_kind(root));
		eb_diag_hint(f, "start from examples/churn/envbuild.yaml");
		return;
	}
	check_keys(c, root, top_keys, "the spec");

	v = json_object_get(root, "version");
	if (v) {
		if (!json_is_integer(v))
			finding(c, eb_yj_value_pos(c->doc, root, "version", 0), "EB003",
				"'version' must be an integer, not %s", json_kind(v));
		else if (json_integer_value(v) != 1)
			finding(c, eb_yj_value_pos(c->doc, root, "version", 0), "EB011",
				"unsupported spec version %lld (this envbuild reads version 1)",
				(long long)json_integer_value(v));
		else
			spec->version = 1;
	}
	if (get_str(c, root, "name", &spec->name, 0) && !name_valid(spec->name.s)) {
		struct eb_diag *f = finding(c, eb_yj_value_pos(c->doc, root, "name", 0), "EB011",
					    "invalid name '%s'", spec->name.s);
		eb_diag_hint(f, "use lowercase letters and digits separated by '.', '_' or '-'");
	}
	get_str(c, root, "repository", &spec->repository, 0);
	get_str(c, root, "cache", &spec->cache, 0);
	eb_spec_cache_keys(spec, root, c->doc, c->file, c->diags);
	if (json_object_get(root, "platforms")) {
		get_strlist(c, root, "platforms", &spec->platforms, 0);
		if (json_is_array(json_object_get(root, "platforms")) && spec->platforms.n == 0)
			finding(c, eb_yj_value_pos(c->doc, root, "platforms", 0), "EB011",
				"'platforms' must name at least one platform");
		check_platforms(c, &spec->platforms);
	} else {
		spec->platforms.v = eb_xcalloc(2, sizeof(*spec->platforms.v));
		spec->platforms.v[0].s = eb_xstrdup("linux/amd64");
		spec->platforms.n = 1;
	}
	if (get_str(c, root, "python", &spec->python, 1) && !python_valid(spec->python.s))
		finding(c, eb_yj_value_pos(c->doc, root, "python", 0), "EB011",
			"invalid python version '%s'", spec->python.s);
	if (!get_str(c, root, "index", &spec->index, 0))
		spec->index.s = NULL;
	check_url(c, &spec->index, "index");
	get_strlist(c, root, "extra_indexes", &spec->extra_indexes, 0);
	for (size_t i = 0; i < spec->extra_indexes.n; i++)
		check_url(c, &spec->extra_indexes.v[i], "extra_indexes");
	get_map(c, root, "package_indexes", &spec->package_indexes, MAP_INDEXES);
	get_strlist(c, root, "requirements_env", &spec->requirements_env, 0);
	spec->requirements_env_names = eb_xcalloc(spec->requirements_env.n + 1, sizeof(char *));
	for (size_t i = 0; i < spec->requirements_env.n; i++) {
		const struct eb_spec_str *ev = &spec->requirements_env.v[i];
		if (!env_name_valid(ev->s)) {
			struct eb_yj_pos ep = { ev->pos.line, ev->pos.col, 0, NULL };
			finding(c, &ep, "EB007", "invalid environment variable name '%s'", ev->s);
		}
		spec->requirements_env_names[i] = ev->s;
	}
	spec->large_package_mb = 16;
	v = json_object_get(root, "large_package_mb");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65536))
		finding(c, eb_yj_value_pos(c->doc, root, "large_package_mb", 0), "EB011",
			"'large_package_mb' must be an integer from 1 to 65536");
	else if (v)
		spec->large_package_mb = (int)json_integer_value(v);
	spec->bytecode = get_bool(c, root, "bytecode", 1);
	spec->base_bytecode = get_bool(c, root, "base_bytecode", 0);
	get_map(c, root, "env", &env, MAP_ENV);
	get_map(c, root, "labels", &labels, MAP_LABELS);
	parse_apt_sources(c, root, &spec->apt_sources);
	eb_spec_accounts_parse(c->doc, c->file, root, &spec->accounts, c->diags);

	targets = json_object_get(root, "targets");
	if (targets && !json_is_object(targets)) {
		finding(c, eb_yj_value_pos(c->doc, root, "targets", 0), "EB003",
			"'targets' must be a mapping of target names, not %s", json_kind(targets));
	} else if (targets && json_object_size(targets) == 0) {
		struct eb_diag *f = finding(c, eb_yj_value_pos(c->doc, root, "targets", 0), "EB006",
					    "no targets defined");
		eb_diag_hint(f, "define at least one target, usually 'training' and 'inference'");
	} else if (targets) {
		spec->targets = eb_xcalloc(json_object_size(targets) + 1, sizeof(*spec->targets));
		json_object_foreach((json_t *)targets, tname, tobj)
			parse_target(c, targets, tname, tobj, &env, &labels);
		check_build_in(c);
	}
	for (size_t i = 0; i < env.n; i++) {
		free(env.v[i].key);
		free(env.v[i].value);
	}
	free(env.v);
	for (size_t i = 0; i < labels.n; i++) {
		free(labels.v[i].key);
		free(labels.v[i].value);
	}
	free(labels.v);
}

int eb_spec_load_buffer(struct eb_spec **out, const char *path, const char *text, size_t len,
			struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_error *perr = NULL;
	struct eb_yj_doc *doc = NULL;
	struct ctx c = { 0 };

	(void)err;
	*out = NULL;
	if (eb_yj_load(&doc, path, text, len, diags, &perr) < 0) {
		struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, path, perr->line, perr->col,
						"EB001", "%s", perr->msg);
		eb_diag_hint(d, "the spec is YAML (or JSON); check indentation and quoting here");
		eb_error_free(perr);
		return 0;
	}
	c.doc = doc;
	c.file = path;
	c.diags = diags;
	c.spec = eb_xcalloc(1, sizeof(*c.spec));
	c.spec->path = eb_xstrdup(path);
	c.spec->dir = eb_path_dirname(path);
	c.spec->text = eb_xmalloc(len + 1);
	memcpy(c.spec->text, text, len);
	c.spec->text[len] = '\0';
	c.spec->text_len = len;
	/* json_object_foreach walks keys in insertion order (jansson >= 2.8),
	 * so targets keep the order of the file */
	validate(&c, eb_yj_root(doc));
	eb_yj_free(doc);
	*out = c.spec;
	return 0;
}

int eb_spec_load(struct eb_spec **out, const char *path, struct eb_diag_list *diags,
		 struct eb_error **err)
{
	struct eb_buf b;
	int r;

	eb_buf_init(&b, SPEC_MAX_BYTES);
	if (strcmp(path, "-") == 0) {
		r = eb_fs_read_file(&b, path, SPEC_MAX_BYTES, err);
	} else {
		/* a symlinked envbuild.yaml that leads out of its directory
		 * would print another file's lines as "unknown key" */
		char *dir = eb_path_dirname(path);
		r = eb_fs_read_confined(&b, path, dir, SPEC_MAX_BYTES, err);
		free(dir);
	}
	if (r < 0) {
		eb_buf_release(&b);
		return r;
	}
	r = eb_spec_load_buffer(out, path, b.ptr, b.len, diags, err);
	eb_buf_release(&b);
	return r;
}

char *eb_spec_resolve(const struct eb_spec *spec, const char *path)
{
	if (path[0] == '/' || strcmp(spec->dir, ".") == 0)
		return eb_xstrdup(path);
	return eb_path_join(spec->dir, path);
}

const struct eb_spec_target *eb_spec_target(const struct eb_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->ntargets; i++)
		if (strcmp(spec->targets[i].name, name) == 0)
			return &spec->targets[i];
	return NULL;
}

static void strlist_free(struct eb_spec_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].s);
	free(l->v);
}

static void kvlist_free(struct eb_spec_kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
}

static void apt_sources_free(struct eb_spec_apt_sources *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].url.s);
		free(l->v[i].suite.s);
		free(l->v[i].signed_by.s);
		strlist_free(&l->v[i].components);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void eb_spec_free(struct eb_spec *spec)
{
	if (!spec)
		return;
	free(spec->text);
	for (size_t i = 0; i < spec->ntargets; i++) {
		struct eb_spec_target *t = &spec->targets[i];
		free(t->name);
		free(t->base.s);
		strlist_free(&t->requirements);
		strlist_free(&t->packages);
		strlist_free(&t->requirements_in);
		strlist_free(&t->build_requirements);
		free(t->build_in.s);
		strlist_free(&t->extras);
		strlist_free(&t->groups);
		for (size_t j = 0; j < t->nfiles; j++) {
			free(t->files[j].src.s);
			free(t->files[j].dest.s);
			free(t->files[j].chown.s);
			free(t->files[j].chmod.s);
			strlist_free(&t->files[j].exclude);
		}
		free(t->files);
		kvlist_free(&t->env);
		kvlist_free(&t->labels);
		free(t->workdir.s);
		free(t->user.s);
		strlist_free(&t->entrypoint);
		strlist_free(&t->cmd);
		strlist_free(&t->platforms);
		free(t->python.s);
		free(t->interpreter.s);
		free(t->site_packages.s);
		free(t->libc.s);
		strlist_free(&t->apt);
		apt_sources_free(&t->apt_sources);
		eb_spec_accounts_release(&t->accounts);
		eb_spec_runconf_release(&t->run);
	}
	free(spec->targets);
	eb_spec_accounts_release(&spec->accounts);
	apt_sources_free(&spec->apt_sources);
	free(spec->path);
	free(spec->dir);
	free(spec->name.s);
	free(spec->repository.s);
	free(spec->cache.s);
	free(spec->cache_from.s);
	free(spec->cache_to.s);
	strlist_free(&spec->platforms);
	free(spec->python.s);
	free(spec->index.s);
	strlist_free(&spec->extra_indexes);
	strlist_free(&spec->requirements_env);
	free(spec->requirements_env_names);
	kvlist_free(&spec->package_indexes);
	free(spec);
}

int eb_spec_oci_base(const char *base, const char *spec_dir, char **dir, char **ref)
{
	const char *p, *colon;
	char *d;

	if (strncmp(base, "oci:", 4) != 0)
		return 0;
	p = base + 4;
	colon = strrchr(p, ':');
	/* "oci:dir" or "oci:dir:ref"; a ':' inside the last path component
	 * followed by a '/' is part of the path, not a ref */
	if (colon && !strchr(colon, '/')) {
		d = eb_xstrndup(p, (size_t)(colon - p));
		*ref = colon[1] ? eb_xstrdup(colon + 1) : NULL;
	} else {
		d = eb_xstrdup(p);
		*ref = NULL;
	}
	if (d[0] == '/' || strcmp(spec_dir, ".") == 0) {
		*dir = d;
	} else {
		*dir = eb_path_join(spec_dir, d);
		free(d);
	}
	return 1;
}
