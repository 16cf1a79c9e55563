/*
 * integrity.c - a lock's records against each other and the spec (see
 * integrity.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/integrity.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "pin/version.h"
#include "ref/imageref.h"
#include "util/alloc.h"

struct ictx {
	const char *path;
	const struct eb_spec *spec;
	struct eb_diag_list *diags;
};

static int hex64(const char *s)
{
	size_t n = 0;

	for (; s && s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return 0;
	return n == 64;
}

static int digest_ok(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && hex64(s + 7);
}

static void finding(struct ictx *c, const char *rule, const char *hint, const char *fmt, ...)
	EB_PRINTF(4, 5);

static void finding(struct ictx *c, const char *rule, const char *hint, const char *fmt, ...)
{
	char *msg;
	va_list ap;
	struct eb_diag *d;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	d = eb_diag_add(c->diags, EB_SEV_ERROR, c->path, 0, 0, rule, "%s", msg ? msg : fmt);
	eb_diag_hint(d, "%s", hint);
	free(msg);
}

#define EDITED "the lock was edited by hand or by a pull request: run 'envbuild lock' and review the diff"

/* the versions a and b are the same PEP 440 version */
static int same_version(const char *a, const char *b)
{
	struct eb_version va, vb;
	int same;

	if (strcmp(a, b) == 0)
		return 1;
	if (eb_version_parse(&va, a, strlen(a), NULL) < 0)
		return 0;
	if (eb_version_parse(&vb, b, strlen(b), NULL) < 0) {
		eb_version_release(&va);
		return 0;
	}
	same = eb_version_cmp(&va, &vb) == 0;
	eb_version_release(&va);
	eb_version_release(&vb);
	return same;
}

static void check_base(struct ictx *c, const struct eb_spec_target *t, const json_t *b)
{
	const char *ref = json_string_value(json_object_get(b, "ref"));
	const char *digest = json_string_value(json_object_get(b, "digest"));
	const json_t *plats = json_object_get(b, "platforms");
	const char *k;
	const json_t *v;
	struct eb_imageref ir;
	char *want;

	if (!b)
		return;
	if (!digest_ok(digest))
		finding(c, "EB040", EDITED, "target '%s': the base digest '%s' is not sha256:<64 hex>",
			t->name, digest ? digest : "");
	json_object_foreach((json_t *)plats, k, v)
		if (!digest_ok(json_string_value(v)))
			finding(c, "EB040", EDITED, "target '%s': the base's %s manifest is not a digest",
				t->name, k);
	if (!t->base.s || strncmp(t->base.s, "oci:", 4) == 0 ||
	    eb_imageref_parse(&ir, t->base.s, NULL) < 0)
		return;
	want = eb_imageref_to_string(&ir);
	if (ref && strcmp(ref, want) != 0)
		finding(c, "EB041", EDITED, "target '%s': the lock's base is '%s', the spec's '%s'",
			t->name, ref, want);
	else if (ir.digest && digest && strcmp(ir.digest, digest) != 0)
		finding(c, "EB041", EDITED,
			"target '%s': the spec's base names %s, the lock's digest is %s", t->name,
			ir.digest, digest);
	free(want);
	eb_imageref_release(&ir);
}

/* the target's pins: requirements files (no constraints) and packages */
struct pins {
	struct eb_reqfile **rfs;
	size_t nrfs;
	struct eb_requirement *inl;
	size_t ninl;
};

static void pins_load(struct pins *p, const struct eb_spec *spec, const struct eb_spec_target *t)
{
	memset(p, 0, sizeof(*p));
	p->rfs = eb_xcalloc(t->requirements.n + 1, sizeof(*p->rfs));
	for (size_t i = 0; i < t->requirements.n; i++) {
		struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
		char *path = eb_spec_resolve(spec, t->requirements.v[i].s);
		if (eb_reqfile_load_in(&p->rfs[p->nrfs], path, spec->dir, spec->requirements_env_names,
				       spec->requirements_env.n, 1, &ignore, NULL) == 0)
			p->nrfs++;
		eb_diag_list_release(&ignore);
		free(path);
	}
	p->inl = eb_xcalloc(t->packages.n + 1, sizeof(*p->inl));
	for (size_t i = 0; i < t->packages.n; i++)
		if (eb_requirement_parse(&p->inl[p->ninl], t->packages.v[i].s,
					 strlen(t->packages.v[i].s), NULL) == 0)
			p->ninl++;
}

static void pins_release(struct pins *p)
{
	for (size_t i = 0; i < p->nrfs; i++)
		eb_reqfile_free(p->rfs[i]);
	for (size_t i = 0; i < p->ninl; i++)
		eb_requirement_release(&p->inl[i]);
	free(p->rfs);
	free(p->inl);
}

/* each pin of name: 1 found one at version whose hashes (if any) have
 * sha256; 2 one at version whose hashes do not; 0 none at version */
static int pin_state(const struct pins *p, const char *name, const char *version,
		     const char *sha256)
{
	int best = 0;

	for (size_t f = 0; f <= p->nrfs; f++) {
		size_t n = f < p->nrfs ? eb_reqfile_count(p->rfs[f]) : p->ninl;
		for (size_t i = 0; i < n; i++) {
			const struct eb_requirement *r;
			const char *pv;
			int hashed = 0, match = 0;
			if (f < p->nrfs) {
				const struct eb_reqfile_entry *en = eb_reqfile_get(p->rfs[f], i);
				if (en->constraint)
					continue;
				r = &en->req;
			} else {
				r = &p->inl[i];
			}
			pv = eb_requirement_pinned_version(r);
			if (!r->norm_name || strcmp(r->norm_name, name) != 0 || !pv ||
			    !same_version(pv, version))
				continue;
			if (r->url_hash_algo && !strcmp(r->url_hash_algo, "sha256")) {
				hashed = 1;
				match |= r->url_hash_hex && !strcmp(r->url_hash_hex, sha256);
			}
			for (size_t k = 0; k < r->nhashes; k++)
				if (r->hashes[k].algo && !strcmp(r->hashes[k].algo, "sha256")) {
					hashed = 1;
					match |= r->hashes[k].hex && !strcmp(r->hashes[k].hex, sha256);
				}
			if (!hashed || match)
				return 1;
			best = 2;
		}
	}
	return best;
}

/* "numpy-1.26.4-cp311-...whl": the name (normalised) and version parts */
static int wheel_parts(const char *fn, char **name, char **version)
{
	size_t n = strlen(fn);
	const char *d1 = strchr(fn, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;

	*name = *version = NULL;
	if (n < 5 || strcmp(fn + n - 4, ".whl") != 0 || !d1 || !d2)
		return 0;
	*name = eb_pep503_normalize(fn, (size_t)(d1 - fn));
	*version = eb_xstrndup(d1 + 1, (size_t)(d2 - d1 - 1));
	return 1;
}

static void check_wheels(struct ictx *c, const struct eb_spec_target *t, const json_t *pk)
{
	const char *plat;
	const json_t *arr;
	struct pins pins;

	if (!json_object_size(pk))
		return;
	pins_load(&pins, c->spec, t);
	json_object_foreach((json_t *)pk, plat, arr) {
		size_t i;
		const json_t *e;
		json_array_foreach(arr, i, e) {
			const char *name = json_string_value(json_object_get(e, "name"));
			const char *ver = json_string_value(json_object_get(e, "version"));
			const char *fn = json_string_value(json_object_get(e, "filename"));
			const char *url = json_string_value(json_object_get(e, "url"));
			const char *sha = json_string_value(json_object_get(e, "sha256"));
			json_int_t size = json_integer_value(json_object_get(e, "size"));
			int in_base = json_is_true(json_object_get(e, "in_base"));
			const json_t *sd = json_object_get(e, "sdist");
			char *wn = NULL, *wv = NULL;
			const char *base;
			size_t bl;

			if (!name || !ver || !fn || !url || !hex64(sha) || size <= 0) {
				finding(c, "EB040", EDITED,
					"target '%s' (%s): package record %zu lacks a name, version, "
					"file, URL, sha256 of 64 hex digits or a positive size",
					t->name, plat, i + 1);
				continue;
			}
			if (!wheel_parts(fn, &wn, &wv) || strcmp(wn, name) || !same_version(wv, ver))
				finding(c, "EB040", EDITED,
					"target '%s' (%s): the file '%s' is not %s %s", t->name, plat,
					fn, name, ver);
			free(wn);
			free(wv);
			/* A wheel built from an sdist: the URL and the pin's
			 * hash are the sdist's; the project itself ("./") has
			 * neither (README "Source distributions"). */
			if (json_is_object(sd)) {
				const char *sfn = json_string_value(json_object_get(sd, "filename"));
				const char *ssha = json_string_value(json_object_get(sd, "sha256"));
				const char *surl = json_string_value(json_object_get(sd, "url"));
				if (surl && strcmp(surl, ".") == 0)
					continue;
				fn = sfn ? sfn : fn;
				sha = hex64(ssha) ? ssha : sha;
			}
			bl = strcspn(url, "#?");
			base = url;
			for (const char *s = url; s < url + bl; s++)
				if (*s == '/')
					base = s + 1;
			if ((size_t)(url + bl - base) != strlen(fn) || strncmp(base, fn, strlen(fn)) != 0)
				finding(c, "EB040", EDITED,
					"target '%s' (%s): %s's URL does not end in its file '%s'",
					t->name, plat, name, fn);
			if (in_base)
				continue;
			switch (pin_state(&pins, name, ver, sha)) {
			case 0:
				finding(c, "EB041", EDITED,
					"target '%s' (%s): the lock installs %s %s, which the target "
					"does not pin", t->name, plat, name, ver);
				break;
			case 2:
				finding(c, "EB041", EDITED,
					"target '%s' (%s): the lock's sha256 %s of %s %s is none of the "
					"pin's --hash values", t->name, plat, sha, name, ver);
				break;
			}
		}
	}
	pins_release(&pins);
}

static void check_apt(struct ictx *c, const struct eb_spec_target *t, const json_t *apt)
{
	const json_t *srcs = json_object_get(apt, "sources");
	const json_t *pk = json_object_get(apt, "packages");
	const char *plat;
	const json_t *arr, *e;
	size_t i;

	if (!apt)
		return;
	json_array_foreach((json_t *)srcs, i, e) {
		const char *url = json_string_value(json_object_get(e, "url"));
		const char *suite = json_string_value(json_object_get(e, "suite"));
		int known = 0;
		if (!digest_ok(json_string_value(json_object_get(e, "release"))))
			finding(c, "EB040", EDITED,
				"target '%s': apt source %zu records no Release digest", t->name, i + 1);
		for (size_t k = 0; url && suite && k < t->apt_sources.n; k++)
			known |= !strcmp(url, t->apt_sources.v[k].url.s) &&
				 !strcmp(suite, t->apt_sources.v[k].suite.s);
		if (!known)
			finding(c, "EB041", EDITED,
				"target '%s': the lock's apt source %s %s is not the target's", t->name,
				url ? url : "?", suite ? suite : "?");
	}
	json_object_foreach((json_t *)pk, plat, arr) {
		json_array_foreach(arr, i, e) {
			const char *name = json_string_value(json_object_get(e, "name"));
			const char *ver = json_string_value(json_object_get(e, "version"));
			const char *url = json_string_value(json_object_get(e, "url"));
			const char *sha = json_string_value(json_object_get(e, "sha256"));
			int pinned = 0, under = 0;

			if (!name || !ver || !url || !hex64(sha) ||
			    json_integer_value(json_object_get(e, "size")) <= 0) {
				finding(c, "EB040", EDITED,
					"target '%s' (%s): apt record %zu lacks a name, version, URL, "
					"sha256 of 64 hex digits or a positive size", t->name, plat, i + 1);
				continue;
			}
			for (size_t k = 0; k < t->apt.n && !pinned; k++) {
				const char *s = t->apt.v[k].s, *eq = strchr(s, '=');
				size_t nl = eq ? strcspn(s, ":=") : 0;
				pinned = eq && strlen(name) == nl && !strncmp(s, name, nl) &&
					 !strcmp(eq + 1, ver);
			}
			if (!pinned)
				finding(c, "EB041", EDITED,
					"target '%s' (%s): the lock installs %s=%s, which the target's "
					"apt: does not pin", t->name, plat, name, ver);
			for (size_t k = 0; k < t->apt_sources.n && !under; k++) {
				const char *su = t->apt_sources.v[k].url.s;
				size_t sl = strlen(su);
				while (sl && su[sl - 1] == '/')
					sl--;
				under = !strncmp(url, su, sl) && url[sl] == '/';
			}
			if (!under)
				finding(c, "EB041", EDITED,
					"target '%s' (%s): %s=%s comes from '%s', under none of the "
					"target's apt sources", t->name, plat, name, ver, url);
		}
	}
}

void eb_lock_check_integrity(const json_t *lock, const char *path, const struct eb_spec *spec,
			     struct eb_diag_list *diags)
{
	struct ictx c = { path, spec, diags };
	const json_t *targets = json_object_get(lock, "targets");

	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		const json_t *jt = json_object_get(targets, t->name);
		if (!jt)
			continue;
		check_base(&c, t, json_object_get(jt, "base"));
		check_wheels(&c, t, json_object_get(jt, "packages"));
		check_apt(&c, t, json_object_get(jt, "apt"));
	}
}
