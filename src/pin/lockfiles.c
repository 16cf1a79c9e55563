/*
 * lockfiles.c - version and hash per package in pylock.toml, uv.lock,
 * poetry.lock and Pipfile.lock.
 *
 * Each reader walks its format's package list and collects, per package,
 * the first problem; a package is reported once, at its name.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin/lockfiles.h"
#include "pin/marker.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "pin/version.h"
#include "util/yamljson.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/toml.h"

int eb_lockfile_kind(const char *base)
{
	if (strcmp(base, "pylock.toml") == 0 || fnmatch("pylock.*.toml", base, 0) == 0)
		return EB_LOCKFILE_PYLOCK;
	if (strcmp(base, "uv.lock") == 0)
		return EB_LOCKFILE_UV;
	if (strcmp(base, "poetry.lock") == 0)
		return EB_LOCKFILE_POETRY;
	if (strcmp(base, "Pipfile.lock") == 0)
		return EB_LOCKFILE_PIPFILE;
	return 0;
}

/* "sha256:<hex>" or the pair (algo, hex): usable when the algorithm is
 * allowed and the hex has its length. */
static int hash_ok(const char *algo, size_t alen, const char *hex)
{
	size_t want = alen == 6 && strncmp(algo, "sha256", 6) == 0 ? 64 :
		      alen == 6 && strncmp(algo, "sha384", 6) == 0 ? 96 :
		      alen == 6 && strncmp(algo, "sha512", 6) == 0 ? 128 : 0;
	size_t n = 0;

	if (!want || !hex)
		return 0;
	for (; hex[n]; n++)
		if (!strchr("0123456789abcdef", hex[n]))
			return 0;
	return n == want;
}

static int hash_str_ok(const char *s)
{
	const char *c = s ? strchr(s, ':') : NULL;
	return c && hash_ok(s, (size_t)(c - s), c + 1);
}

static int version_ok(const char *v)
{
	struct eb_version ver;
	int ok;

	if (!v || !*v)
		return 0;
	ok = eb_version_parse(&ver, v, strlen(v), NULL) == 0;
	if (ok)
		eb_version_release(&ver);
	return ok;
}

/* ---- TOML locks ----------------------------------------------------------- */

struct tctx {
	const char *path;
	struct eb_toml_doc *doc;
	struct eb_diag_list *diags;
};

/* Where to report package pkg: its name, else its table. */
static void pkg_pos(const struct tctx *c, const json_t *pkg, unsigned *line, unsigned *col)
{
	const struct eb_toml_pos *p = eb_toml_value_pos(c->doc, pkg, "name", 0);
	if (!p)
		p = eb_toml_node_pos(c->doc, pkg);
	*line = p ? (p->key_line ? p->key_line : p->line) : 0;
	*col = p ? (p->key_col ? p->key_col : p->col) : 0;
}

static void pkg_finding(const struct tctx *c, const json_t *pkg, const char *rule,
			const char *fmt, ...) EB_PRINTF(4, 5);
static void pkg_finding(const struct tctx *c, const json_t *pkg, const char *rule,
			const char *fmt, ...)
{
	unsigned line, col;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pkg_pos(c, pkg, &line, &col);
	eb_diag_add(c->diags, EB_SEV_ERROR, c->path, line, col, rule, "%s", msg);
}

static void check_marker(const struct tctx *c, const json_t *parent, const char *key, size_t idx,
			 const char *m)
{
	struct eb_marker *mk = NULL;
	struct eb_error *e = NULL;
	const struct eb_toml_pos *p = eb_toml_value_pos(c->doc, parent, key, idx);

	if (eb_marker_parse(&mk, m, strlen(m), &e) < 0) {
		eb_diag_add(c->diags, EB_SEV_ERROR, c->path, p ? p->line : 0,
			    p ? p->col + 1 + (e->col ? e->col - 1 : 0) : 0, "EB404",
			    "invalid marker '%s': %s", m, e->msg);
		eb_error_free(e);
		return;
	}
	eb_marker_free(mk);
}

static void check_spec(const struct tctx *c, const json_t *parent, const char *key)
{
	const char *s = json_string_value(json_object_get(parent, key));
	struct eb_specifier_set set;
	struct eb_error *e = NULL;
	const struct eb_toml_pos *p = eb_toml_value_pos(c->doc, parent, key, 0);

	if (!s)
		return;
	if (eb_specifier_set_parse(&set, s, strlen(s), &e) < 0) {
		eb_diag_add(c->diags, EB_SEV_ERROR, c->path, p ? p->line : 0, p ? p->col + 1 : 0,
			    "EB404", "invalid %s '%s': %s", key, s, e->msg);
		eb_error_free(e);
		return;
	}
	eb_specifier_set_release(&set);
}

/* pylock: a file table ({url|path, size, hashes = {sha256 = ...}}): NULL
 * when it has a usable hash, else why not. */
static const char *pylock_file_problem(const json_t *f)
{
	json_t *hashes = json_object_get(f, "hashes"), *v;
	const char *algo;

	if (!json_is_object(f))
		return "an entry that is not a table";
	if (!json_is_object(hashes) || json_object_size(hashes) == 0)
		return "a file without hashes";
	json_object_foreach(hashes, algo, v)
		if (hash_ok(algo, strlen(algo), json_string_value(v)))
			return NULL;
	return "a file without a sha256, sha384 or sha512 hash";
}

static void check_pylock(struct tctx *c, json_t *root)
{
	json_t *lv = json_object_get(root, "lock-version"), *pkgs, *pkg, *envs, *v;
	const struct eb_toml_pos *p;
	size_t i, j;

	p = eb_toml_value_pos(c->doc, root, "lock-version", 0);
	if (!json_is_string(lv))
		eb_diag_add(c->diags, EB_SEV_ERROR, c->path, p ? p->line : 1, p ? p->col : 1, "EB403",
			    "pylock.toml needs lock-version = \"1.0\" (PEP 751)");
	else if (strncmp(json_string_value(lv), "1.", 2) != 0 || !version_ok(json_string_value(lv)))
		eb_diag_add(c->diags, EB_SEV_ERROR, c->path, p->line, p->col, "EB403",
			    "unsupported lock-version '%s': envbuild reads version 1.x (PEP 751)",
			    json_string_value(lv));
	envs = json_object_get(root, "environments");
	json_array_foreach(envs, i, v)
		if (json_is_string(v))
			check_marker(c, envs, NULL, i, json_string_value(v));
	check_spec(c, root, "requires-python");
	pkgs = json_object_get(root, "packages");
	if (!json_is_array(pkgs)) {
		if (pkgs)
			eb_diag_add(c->diags, EB_SEV_ERROR, c->path, 0, 0, "EB400",
				    "'packages' must be an array of tables");
		return;
	}
	json_array_foreach(pkgs, i, pkg) {
		const char *name = json_string_value(json_object_get(pkg, "name"));
		const char *ver = json_string_value(json_object_get(pkg, "version"));
		json_t *wheels = json_object_get(pkg, "wheels"), *w;
		json_t *sdist = json_object_get(pkg, "sdist"), *archive = json_object_get(pkg, "archive");
		json_t *vcs = json_object_get(pkg, "vcs"), *dir = json_object_get(pkg, "directory");
		const char *why = NULL;

		if (!json_is_object(pkg))
			continue;
		if (!name) {
			pkg_finding(c, pkg, "EB400", "package without a name");
			continue;
		}
		if (json_is_string(json_object_get(pkg, "marker")))
			check_marker(c, pkg, "marker", 0, json_string_value(json_object_get(pkg, "marker")));
		check_spec(c, pkg, "requires-python");
		if (dir) {
			pkg_finding(c, pkg, "EB401", "package '%s' installs from a local directory%s",
				    name, ", which is not pinned");
			continue;
		}
		if (vcs) {
			if (!json_is_string(json_object_get(vcs, "commit-id")))
				pkg_finding(c, pkg, "EB401", "package '%s' comes from %s", name,
					    "a VCS without a commit-id");
			continue;
		}
		if (!ver || !version_ok(ver)) {
			pkg_finding(c, pkg, "EB401", "package '%s' has %s", name,
				    ver ? "an invalid version" : "no version");
			continue;
		}
		if (!sdist && !wheels && !archive)
			why = "no sdist, wheels or archive to install";
		if (!why && sdist)
			why = pylock_file_problem(sdist);
		if (!why && archive)
			why = pylock_file_problem(archive);
		if (!why && wheels) {
			if (!json_is_array(wheels))
				why = "'wheels' that is not an array";
			json_array_foreach(wheels, j, w)
				if (!why)
					why = pylock_file_problem(w);
		}
		if (why)
			pkg_finding(c, pkg, "EB402", "package '%s' has %s", name, why);
	}
}

/* uv.lock: {url, hash = "sha256:...", size} per sdist and wheel. */
static void check_uv(struct tctx *c, json_t *root)
{
	json_t *pkgs = json_object_get(root, "package"), *pkg;
	size_t i, j;

	check_spec(c, root, "requires-python");
	json_array_foreach(pkgs, i, pkg) {
		const char *name = json_string_value(json_object_get(pkg, "name"));
		const char *ver = json_string_value(json_object_get(pkg, "version"));
		json_t *src = json_object_get(pkg, "source");
		json_t *sdist = json_object_get(pkg, "sdist"), *wheels = json_object_get(pkg, "wheels"), *w;
		const char *why = NULL;

		if (!name)
			name = "?";
		/* the project itself and workspace members */
		if (json_object_get(src, "editable") || json_object_get(src, "virtual"))
			continue;
		if (json_object_get(src, "git")) {
			const char *g = json_string_value(json_object_get(src, "git"));
			if (!g || !strchr(g, '#'))
				pkg_finding(c, pkg, "EB401", "package '%s' comes from %s", name,
					    "git without a resolved commit");
			continue;
		}
		if (json_object_get(src, "directory")) {
			pkg_finding(c, pkg, "EB401", "package '%s' installs from a local directory%s",
				    name, ", which is not pinned");
			continue;
		}
		if (!ver || !version_ok(ver)) {
			pkg_finding(c, pkg, "EB401", "package '%s' has %s", name,
				    ver ? "an invalid version" : "no version");
			continue;
		}
		if (!sdist && !wheels)
			why = "no sdist or wheels";
		if (sdist && !hash_str_ok(json_string_value(json_object_get(sdist, "hash"))))
			why = "an sdist without a usable hash";
		json_array_foreach(wheels, j, w)
			if (!why && !hash_str_ok(json_string_value(json_object_get(w, "hash"))))
				why = "a wheel without a usable hash";
		if (why)
			pkg_finding(c, pkg, "EB402", "package '%s' has %s", name, why);
	}
}

/* poetry.lock: files = [{file, hash}] per package (poetry 1.x kept them
 * in [metadata.files], keyed by name). */
static void check_poetry(struct tctx *c, json_t *root)
{
	json_t *pkgs = json_object_get(root, "package"), *pkg;
	json_t *mfiles = json_object_get(json_object_get(root, "metadata"), "files");
	size_t i, j;

	json_array_foreach(pkgs, i, pkg) {
		const char *name = json_string_value(json_object_get(pkg, "name"));
		const char *ver = json_string_value(json_object_get(pkg, "version"));
		json_t *files = json_object_get(pkg, "files"), *f;
		const char *stype = json_string_value(json_object_get(json_object_get(pkg, "source"), "type"));
		const char *why = NULL;

		if (!name)
			name = "?";
		if (stype && strcmp(stype, "git") == 0)
			continue; /* pinned by resolved_reference */
		if (stype && strcmp(stype, "directory") == 0) {
			pkg_finding(c, pkg, "EB401", "package '%s' installs from a local directory%s",
				    name, ", which is not pinned");
			continue;
		}
		if (!ver || !version_ok(ver)) {
			pkg_finding(c, pkg, "EB401", "package '%s' has %s", name,
				    ver ? "an invalid version" : "no version");
			continue;
		}
		if (!files && mfiles)
			files = json_object_get(mfiles, name);
		if (!json_is_array(files) || json_array_size(files) == 0)
			why = "no files with hashes";
		json_array_foreach(files, j, f)
			if (!why && !hash_str_ok(json_string_value(json_object_get(f, "hash"))))
				why = "a file without a usable hash";
		if (why)
			pkg_finding(c, pkg, "EB402", "package '%s' has %s", name, why);
	}
}

/* ---- Pipfile.lock (JSON) -------------------------------------------------- */

static void check_pipfile(const char *path, struct eb_yj_doc *doc, struct eb_diag_list *diags)
{
	static const char *const sections[] = { "default", "develop", NULL };
	json_t *root = eb_yj_root(doc);

	for (const char *const *s = sections; *s; s++) {
		json_t *sec = json_object_get(root, *s), *e;
		const char *name;

		json_object_foreach(sec, name, e) {
			const struct eb_yj_pos *p = eb_yj_key_pos(doc, sec, name);
			const char *ver = json_string_value(json_object_get(e, "version"));
			json_t *hashes = json_object_get(e, "hashes"), *h;
			int ok = 0;
			size_t i;

			if (json_object_get(e, "git") || json_object_get(e, "hg") ||
			    json_object_get(e, "svn")) {
				if (!json_is_string(json_object_get(e, "ref")))
					eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB401",
						    "package '%s' comes from a VCS without a ref", name);
				continue;
			}
			if (json_object_get(e, "path") || json_object_get(e, "editable")) {
				eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB401",
					    "package '%s' installs from a local path, which is not pinned",
					    name);
				continue;
			}
			if (json_object_get(e, "file")) {
				/* a URL: pinned only by its hash */
			} else if (!ver || strncmp(ver, "==", 2) != 0 || !version_ok(ver + 2) ||
				   strchr(ver, '*')) {
				eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB401",
					    "package '%s' has %s", name,
					    ver ? "a version that is not '==VERSION'" : "no version");
				continue;
			}
			json_array_foreach(hashes, i, h)
				if (hash_str_ok(json_string_value(h)))
					ok = 1;
			if (!ok)
				eb_diag_add(diags, EB_SEV_ERROR, path, p->line, p->col, "EB402",
					    "package '%s' has no sha256, sha384 or sha512 hash", name);
		}
	}
}

int eb_lockfile_check(enum eb_lockfile_kind kind, const char *path, const char *text, size_t len,
		      struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_error *perr = NULL;
	struct tctx c = { path, NULL, diags };

	(void)err;
	if (kind == EB_LOCKFILE_PIPFILE) {
		struct eb_yj_doc *doc = NULL;
		if (eb_yj_load(&doc, path, text, len, diags, &perr) < 0) {
			eb_diag_add(diags, EB_SEV_ERROR, path, perr->line, perr->col, "EB400", "%s",
				    perr->msg);
			eb_error_free(perr);
			return 0;
		}
		if (!json_is_object(eb_yj_root(doc)))
			eb_diag_add(diags, EB_SEV_ERROR, path, 1, 1, "EB400",
				    "Pipfile.lock must be a JSON object");
		else
			check_pipfile(path, doc, diags);
		eb_yj_free(doc);
		return 0;
	}
	if (eb_toml_load(&c.doc, path, text, len, &perr) < 0) {
		eb_diag_add(diags, EB_SEV_ERROR, path, perr->line, perr->col, "EB400", "%s", perr->msg);
		eb_error_free(perr);
		return 0;
	}
	switch (kind) {
	case EB_LOCKFILE_PYLOCK: check_pylock(&c, eb_toml_root(c.doc)); break;
	case EB_LOCKFILE_UV: check_uv(&c, eb_toml_root(c.doc)); break;
	default: check_poetry(&c, eb_toml_root(c.doc)); break;
	}
	eb_toml_free(c.doc);
	return 0;
}

/* ---- pylock.toml as requirements ------------------------------------------ */

static void add_hashes(struct eb_requirement *req, const json_t *f)
{
	json_t *hashes = json_object_get(f, "hashes"), *v;
	const char *algo;
	char h[256];

	json_object_foreach(hashes, algo, v) {
		if (!hash_ok(algo, strlen(algo), json_string_value(v)))
			continue;
		snprintf(h, sizeof(h), "%s:%s", algo, json_string_value(v));
		eb_requirement_add_hash(req, h, strlen(h), 0);
	}
}

int eb_pylock_load(struct eb_reqfile **out, const char *path, const char *root,
		   struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_buf b;
	struct tctx c = { path, NULL, diags };
	struct eb_reqfile *rf;
	json_t *pkgs, *pkg;
	size_t i, j;
	int r;

	*out = NULL;
	eb_buf_init(&b, 64u << 20);
	/* confined as every requirements file (reqfile.h) */
	r = eb_fs_read_confined(&b, path, root, 64u << 20, err);
	if (r == 0)
		r = eb_toml_load(&c.doc, path, b.ptr, b.len, err);
	eb_buf_release(&b);
	if (r < 0)
		return r;
	rf = eb_reqfile_new();
	pkgs = json_object_get(eb_toml_root(c.doc), "packages");
	json_array_foreach(pkgs, i, pkg) {
		const char *name = json_string_value(json_object_get(pkg, "name"));
		const char *ver = json_string_value(json_object_get(pkg, "version"));
		const char *marker = json_string_value(json_object_get(pkg, "marker"));
		json_t *w;
		struct eb_requirement req;
		struct eb_buf t;
		unsigned line, col;

		if (!name)
			continue;
		if (!ver || !version_ok(ver) || json_object_get(pkg, "directory") ||
		    json_object_get(pkg, "vcs")) {
			pkg_finding(&c, pkg, "EB401", "package '%s' of the lock cannot be installed "
				    "by version: it has no version or comes from a directory or VCS", name);
			continue;
		}
		eb_buf_init(&t, 0);
		eb_buf_addf(&t, "%s==%s%s%s", name, ver, marker ? " ; " : "", marker ? marker : "");
		if (eb_requirement_parse(&req, t.ptr, t.len, NULL) < 0) {
			pkg_finding(&c, pkg, "EB404", "package '%s' has a name, version or marker "
				    "that does not parse", name);
			eb_buf_release(&t);
			continue;
		}
		eb_buf_release(&t);
		add_hashes(&req, json_object_get(pkg, "sdist"));
		add_hashes(&req, json_object_get(pkg, "archive"));
		json_array_foreach(json_object_get(pkg, "wheels"), j, w)
			add_hashes(&req, w);
		pkg_pos(&c, pkg, &line, &col);
		eb_reqfile_add(rf, &req, path, line, col);
	}
	eb_toml_free(c.doc);
	*out = rf;
	return 0;
}
