/*
 * pin.c - the pin stage (stage/pin.h): the targets' loose Python inputs
 * resolved jointly into hashed requirements files, and loose apt: names
 * pinned with their Depends closure in the spec itself.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assemble/pyinstall.h"
#include "debian/deb.h"
#include "debian/depends.h"
#include "debian/packages.h"
#include "debian/resolve.h"
#include "debian/version.h"
#include "net/http.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "pin/pyproject.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "python/pyprovider.h"
#include "python/resolver.h"
#include "python/target.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "envspec/spec.h"
#include "stage/pin.h"
#include "stage/pin_buildreqs.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/fs.h"

/* Used when the spec does not say which C library the base has: every
 * glibc base envbuild supports runs manylinux2014 wheels. */
#define PIN_DEFAULT_LIBC "glibc 2.17"

struct old_pin {
	char *name, *version;
	char *hashes; /* its --hash values, sorted, space-separated ("" for none) */
};

struct pin_target {
	const struct eb_spec_target *t;
	char *out_path;  /* the requirements file, as the user opens it */
	size_t env0, nenv; /* its environments in the resolver */
	struct old_pin *old;
	size_t nold;
	int had_file;
	/* its build_requirements file (pin_buildreqs.h), when breq_any */
	struct eb_buf breq;
	char *breq_path, *breq_item;
	int breq_any;
};

/* The base of target t for one platform, as `envbuild build` reads it:
 * an oci: layout or a registry image, its layers put into the blob store;
 * *paths gets the layer blobs, bottom first (free each and the array). */
static int pull_base(const struct eb_spec *spec, const struct eb_spec_target *t,
		     const char *platform, struct eb_blobstore *bs, struct eb_registry **reg,
		     char ***paths, size_t *npaths, struct eb_error **err)
{
	struct eb_layout_image base = { 0 };
	struct eb_platform plat = { 0 };
	struct eb_registry_options ro = { 0 };
	char *dir = NULL, *ref = NULL;
	int r;

	*paths = NULL;
	*npaths = 0;
	if ((r = eb_platform_parse(&plat, platform, err)) < 0)
		goto done;
	if (eb_spec_oci_base(t->base.s, spec->dir, &dir, &ref)) {
		r = eb_layout_read(&base, dir, ref, &plat, err);
		for (size_t i = 0; r == 0 && i < base.manifest.n_layers; i++)
			r = eb_layout_import_blob(bs, dir, &base.manifest.layers[i], err);
	} else {
		if (!*reg)
			r = eb_registry_new(reg, &ro, err);
		if (r == 0)
			r = eb_registry_pull(*reg, t->base.s, &plat, bs, 1, &base, err);
	}
	if (r < 0)
		goto done;
	*paths = eb_xcalloc(base.manifest.n_layers + 1, sizeof(**paths));
	for (size_t i = 0; i < base.manifest.n_layers; i++)
		(*paths)[i] = eb_blobstore_path(bs, base.manifest.layers[i].digest);
	*npaths = base.manifest.n_layers;
done:
	eb_layout_image_release(&base);
	eb_platform_release(&plat);
	free(dir);
	free(ref);
	return r;
}

static void paths_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

/* What the spec does not say about the target's Python (version, libc),
 * read from its base for one platform.  *python and *libc are the
 * caller's. */
static int detect_target(const struct eb_spec *spec, const struct eb_spec_target *t,
			 const char *platform, struct eb_blobstore *bs, struct eb_registry **reg,
			 char **python, char **libc, struct eb_error **err)
{
	struct eb_pytarget pt = { 0 };
	struct eb_pytarget_overrides ov = { t->python.s, t->interpreter.s, t->site_packages.s,
					     t->libc.s };
	char **paths = NULL;
	size_t np = 0;
	int r;

	r = pull_base(spec, t, platform, bs, reg, &paths, &np, err);
	if (r == 0)
		r = eb_pyenv_detect(&pt, bs, (const char *const *)paths, NULL, NULL, np, platform,
				    &ov, err);
	if (r == 0) {
		*python = eb_xstrdup(pt.python_version);
		*libc = eb_xasprintf("%s %d.%d", pt.libc == EB_LIBC_MUSL ? "musl" : "glibc",
				     pt.libc_major, pt.libc_minor);
	}
	if (r < 0) {
		eb_error_wrap(err, "reading the python of base '%s' of target '%s' (%s)", t->base.s,
			      t->name, platform);
		eb_error_locate(err, spec->path, t->base.pos.line, t->base.pos.col);
		eb_error_hint(err, "or set python: and libc: for the target in the spec");
	}
	paths_free(paths, np);
	eb_pytarget_release(&pt);
	return r;
}

static int cmp_cstr(const void *a, const void *b);

/* n hash values as one comparable string: sorted, each once. */
static char *hash_set(const char **hs, size_t n)
{
	struct eb_buf b;

	if (n > 1)
		eb_sort(hs, n, sizeof(*hs), cmp_cstr);
	eb_buf_init(&b, 0);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(hs[i], hs[i - 1]) != 0)
			(void)eb_buf_addf(&b, "%s%s", b.len ? " " : "", hs[i]);
	return b.ptr ? eb_buf_detach(&b, NULL) : eb_xstrdup("");
}

/* The --hash values render() wrote for `name` (every entry of it: one per
 * marker), as hash_set() gives them. */
static char *rendered_hashes(const char *text, const char *name)
{
	const char **hs = NULL;
	size_t n = 0, len = strlen(name);
	int in = 0;
	char *out;

	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		if (line[0] != ' ' && line[0] != '\t')
			in = ll > len + 1 && strncmp(line, name, len) == 0 && line[len] == '=' &&
			     line[len + 1] == '=';
		else if (in) {
			const char *h = line;
			while ((h = strstr(h, "--hash=")) && h < line + ll) {
				size_t hl;
				h += 7;
				hl = strcspn(h, " \t\\\n");
				hs = eb_xreallocarray(hs, n + 1, sizeof(*hs));
				hs[n++] = eb_xstrndup(h, hl);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	out = hash_set(hs, n);
	for (size_t i = 0; i < n; i++)
		free((char *)hs[i]);
	free(hs);
	return out;
}

static void old_pins_load(struct pin_target *pt, struct eb_error **err)
{
	struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
	struct eb_reqfile *rf = NULL;

	if (eb_reqfile_load(&rf, pt->out_path, &ignore, err) < 0) {
		/* a missing or unreadable old file only means "no preferences" */
		eb_error_clear(err);
		eb_diag_list_release(&ignore);
		return;
	}
	pt->had_file = 1;
	for (size_t i = 0; i < eb_reqfile_count(rf); i++) {
		const struct eb_reqfile_entry *en = eb_reqfile_get(rf, i);
		const char *v = eb_requirement_pinned_version(&en->req);
		if (en->constraint || !en->req.norm_name || !v)
			continue;
		{
			const char **hs = eb_xcalloc(en->req.nhashes + 1, sizeof(*hs));
			for (size_t k = 0; k < en->req.nhashes; k++)
				hs[k] = en->req.hashes[k].raw;
			pt->old = eb_xreallocarray(pt->old, pt->nold + 1, sizeof(*pt->old));
			pt->old[pt->nold].name = eb_xstrdup(en->req.norm_name);
			pt->old[pt->nold].version = eb_xstrdup(v);
			pt->old[pt->nold].hashes = hash_set(hs, en->req.nhashes);
			pt->nold++;
			free(hs);
		}
	}
	eb_reqfile_free(rf);
	eb_diag_list_release(&ignore);
}

static const char *old_version(const struct pin_target *pt, const char *name)
{
	for (size_t i = 0; i < pt->nold; i++)
		if (strcmp(pt->old[i].name, name) == 0)
			return pt->old[i].version;
	return NULL;
}

/* One pinned project of a target: the same version on each platform
 * (joint resolution), with the platforms that need it. */
struct out_pin {
	const struct eb_resolver_pin *pin;
	unsigned envmask; /* bit k: the target's k-th environment needs it */
	const char **via;
	size_t nvia;
	const char **extras;
	size_t nextras;
};

static void add_all(const char ***arr, size_t *n, const char *const *src, size_t m)
{
	for (size_t i = 0; i < m; i++) {
		size_t k;
		for (k = 0; k < *n; k++)
			if (strcmp((*arr)[k], src[i]) == 0)
				break;
		if (k < *n)
			continue;
		*arr = eb_xreallocarray(*arr, *n + 1, sizeof(**arr));
		(*arr)[(*n)++] = src[i];
	}
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_out(const void *a, const void *b)
{
	return strcmp(((const struct out_pin *)a)->pin->name, ((const struct out_pin *)b)->pin->name);
}

/* The file's bytes: pip-compile's layout, deterministic. */
static int render(struct eb_buf *b, const struct pin_target *pt, struct eb_resolver *r,
		  struct eb_pyprovider *prov, const char *const *machines, const char *python,
		  const char *libc, struct eb_error **err)
{
	const struct eb_spec_target *t = pt->t;
	struct out_pin *outs = NULL;
	size_t nout = 0, *envs;
	int rc = 0;

	for (size_t k = 0; k < pt->nenv; k++) {
		size_t n;
		const struct eb_resolver_pin *pins = eb_resolver_solution(r, pt->env0 + k, &n);
		for (size_t i = 0; i < n; i++) {
			size_t j;
			for (j = 0; j < nout; j++)
				if (strcmp(outs[j].pin->name, pins[i].name) == 0)
					break;
			if (j == nout) {
				outs = eb_xreallocarray(outs, nout + 1, sizeof(*outs));
				memset(&outs[nout], 0, sizeof(*outs));
				outs[nout++].pin = &pins[i];
			}
			outs[j].envmask |= 1u << k;
			add_all(&outs[j].via, &outs[j].nvia, pins[i].via, pins[i].nvia);
			add_all(&outs[j].extras, &outs[j].nextras, pins[i].extras, pins[i].nextras);
		}
	}
	if (nout)
		eb_sort(outs, nout, sizeof(*outs), cmp_out);

	(void)eb_buf_adds(b, "#\n# This file is autogenerated by envbuild pin for target '");
	(void)eb_buf_addf(b, "%s'\n# (python %s, %s, ", t->name, python, libc);
	for (size_t k = 0; k < t->platforms.n; k++)
		(void)eb_buf_addf(b, "%s%s", k ? " " : "", t->platforms.v[k].s);
	(void)eb_buf_adds(b, ") from:\n");
	for (size_t i = 0; i < t->requirements_in.n; i++)
		(void)eb_buf_addf(b, "#    %s\n", t->requirements_in.v[i].s);
	for (size_t i = 0; i < t->extras.n; i++)
		(void)eb_buf_addf(b, "#    extra: %s\n", t->extras.v[i].s);
	for (size_t i = 0; i < t->groups.n; i++)
		(void)eb_buf_addf(b, "#    group: %s\n", t->groups.v[i].s);
	/* All targets: pinning one alone would not keep parity with the
	 * others. */
	(void)eb_buf_adds(b, "# To regenerate, edit the inputs and run:\n#\n"
			     "#    envbuild pin\n#\n");

	envs = eb_xcalloc(pt->nenv, sizeof(*envs));
	for (size_t i = 0; i < nout; i++) {
		struct out_pin *o = &outs[i];
		char **hashes = NULL;
		size_t nh = 0, ne = 0;

		for (size_t k = 0; k < pt->nenv; k++)
			if (o->envmask & (1u << k))
				envs[ne++] = pt->env0 + k;
		rc = eb_pyprovider_hashes(prov, envs, ne, o->pin->name, o->pin->version, &hashes, &nh,
					  err);
		if (rc < 0)
			break;
		if (o->nextras)
			eb_sort(o->extras, o->nextras, sizeof(char *), cmp_cstr);
		if (o->nvia)
			eb_sort(o->via, o->nvia, sizeof(char *), cmp_cstr);
		(void)eb_buf_adds(b, o->pin->name);
		for (size_t k = 0; k < o->nextras; k++)
			(void)eb_buf_addf(b, "%s%s", k ? "," : "[", o->extras[k]);
		if (o->nextras)
			(void)eb_buf_addc(b, ']');
		(void)eb_buf_addf(b, "==%s", o->pin->version);
		if (o->envmask != (1u << pt->nenv) - 1) {
			/* Only some platforms need it: say which. */
			int first = 1;
			(void)eb_buf_adds(b, " ; ");
			for (size_t k = 0; k < pt->nenv; k++) {
				if (!(o->envmask & (1u << k)))
					continue;
				(void)eb_buf_addf(b, "%splatform_machine == \"%s\"", first ? "" : " or ",
						  machines[k]);
				first = 0;
			}
		}
		for (size_t k = 0; k < nh; k++)
			(void)eb_buf_addf(b, " \\\n    --hash=%s", hashes[k]);
		(void)eb_buf_adds(b, "\n");
		if (o->nvia == 1) {
			(void)eb_buf_addf(b, "    # via %s\n", o->via[0]);
		} else if (o->nvia > 1) {
			(void)eb_buf_adds(b, "    # via\n");
			for (size_t k = 0; k < o->nvia; k++)
				(void)eb_buf_addf(b, "    #   %s\n", o->via[k]);
		}
		for (size_t k = 0; k < nh; k++)
			free(hashes[k]);
		free(hashes);
	}
	free(envs);
	for (size_t i = 0; i < nout; i++) {
		free(outs[i].via);
		free(outs[i].extras);
	}
	free(outs);
	return rc;
}

static void change_add(struct eb_pin_file *f, char *line)
{
	f->changes = eb_xreallocarray(f->changes, f->nchanges + 1, sizeof(*f->changes));
	f->changes[f->nchanges++] = line;
}

/* The hashes of a pin whose version stays: "numpy 1.26.4: hashes +1 -1"
 * when they moved. */
static void hash_change(struct eb_pin_file *f, const struct pin_target *pt, const char *name,
			const char *version, const char *text)
{
	const char *was = NULL;
	char *now;
	size_t add = 0, gone = 0;

	for (size_t i = 0; i < pt->nold && !was; i++)
		if (strcmp(pt->old[i].name, name) == 0)
			was = pt->old[i].hashes;
	now = rendered_hashes(text, name);
	if (was && strcmp(was, now) != 0) {
		/* count by membership: both are space-separated sets */
		char *a = eb_xstrdup(now), *save = NULL;
		for (char *h = strtok_r(a, " ", &save); h; h = strtok_r(NULL, " ", &save))
			add += !strstr(was, h);
		free(a);
		a = eb_xstrdup(was);
		for (char *h = strtok_r(a, " ", &save); h; h = strtok_r(NULL, " ", &save))
			gone += !strstr(now, h);
		free(a);
		change_add(f, eb_xasprintf("%s %s: hashes +%zu -%zu (the index's files changed)", name,
					   version, add, gone));
	}
	free(now);
}

/* "numpy 1.26.3 → 1.26.4", "+ scipy 1.12.0", "- six 1.16.0" into f; a
 * version kept whose files changed (a wheel rebuilt, one added for a new
 * platform) is "numpy 1.26.4: hashes +1 -1", never an annotation. */
static void collect_changes(struct eb_pin_file *f, const struct pin_target *pt,
			    struct eb_resolver *r, const char *text)
{
	const char **names = NULL, **vers = NULL;
	size_t n = 0;

	for (size_t k = 0; k < pt->nenv; k++) {
		size_t m;
		const struct eb_resolver_pin *pins = eb_resolver_solution(r, pt->env0 + k, &m);
		for (size_t i = 0; i < m; i++) {
			size_t j;
			for (j = 0; j < n; j++)
				if (strcmp(names[j], pins[i].name) == 0)
					break;
			if (j < n)
				continue;
			names = eb_xreallocarray(names, n + 1, sizeof(*names));
			vers = eb_xreallocarray(vers, n + 1, sizeof(*vers));
			names[n] = pins[i].name;
			vers[n++] = pins[i].version;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const char *old = old_version(pt, names[i]);
		if (!old)
			change_add(f, eb_xasprintf("+ %s %s", names[i], vers[i]));
		else if (strcmp(old, vers[i]) != 0)
			change_add(f, eb_xasprintf("%s %s \xe2\x86\x92 %s", names[i], old, vers[i]));
		else
			hash_change(f, pt, names[i], vers[i], text);
	}
	for (size_t i = 0; i < pt->nold; i++) {
		size_t j;
		for (j = 0; j < n; j++)
			if (strcmp(names[j], pt->old[i].name) == 0)
				break;
		if (j == n)
			change_add(f, eb_xasprintf("- %s %s", pt->old[i].name, pt->old[i].version));
	}
	free(names);
	free(vers);
}

/* A requirements_in entry read as a pyproject.toml (by its name). */
static int is_pyproject(const char *path)
{
	size_t n = strlen(path);
	return n >= 5 && strcmp(path + n - 5, ".toml") == 0;
}

/* The requirements of a pyproject.toml input, for every environment of
 * the target. */
static int add_pyproject(struct eb_resolver *r, const struct eb_spec *spec,
			 const struct pin_target *pt, const struct eb_spec_str *in,
			 struct eb_error **err)
{
	const struct eb_spec_target *t = pt->t;
	char *path = eb_spec_resolve(spec, in->s);
	const char **extras = eb_xcalloc(t->extras.n + 1, sizeof(*extras));
	const char **groups = eb_xcalloc(t->groups.n + 1, sizeof(*groups));
	struct eb_pyproject_input *v = NULL;
	struct eb_buf text = EB_BUF_INIT;
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < t->extras.n; i++)
		extras[i] = t->extras.v[i].s;
	for (size_t i = 0; i < t->groups.n; i++)
		groups[i] = t->groups.v[i].s;
	rc = eb_fs_read_file(&text, path, 16u << 20, err);
	if (rc == 0)
		rc = eb_pyproject_inputs(path, text.ptr, text.len, extras, t->extras.n, groups,
					 t->groups.n, &v, &n, err);
	if (rc < 0)
		eb_error_locate(err, spec->path, in->pos.line, in->pos.col);
	for (size_t i = 0; i < n && rc == 0; i++)
		for (size_t e = 0; e < pt->nenv && rc == 0; e++) {
			rc = eb_resolver_require(r, pt->env0 + e, v[i].text, in->s, err);
			if (rc < 0)
				eb_error_locate(err, path, v[i].line, v[i].col);
		}
	eb_pyproject_inputs_free(v, n);
	eb_buf_release(&text);
	free(extras);
	free(groups);
	free(path);
	return rc;
}

static int add_inputs(struct eb_resolver *r, const struct eb_spec *spec, const struct pin_target *pt,
		      struct eb_error **err)
{
	const struct eb_spec_target *t = pt->t;
	int rc = 0;

	for (size_t i = 0; i < t->requirements_in.n && rc == 0; i++) {
		struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
		struct eb_reqfile *rf = NULL;
		char *path;

		if (is_pyproject(t->requirements_in.v[i].s)) {
			rc = add_pyproject(r, spec, pt, &t->requirements_in.v[i], err);
			continue;
		}
		path = eb_spec_resolve(spec, t->requirements_in.v[i].s);
		rc = eb_reqfile_load(&rf, path, &ignore, err);
		eb_diag_list_release(&ignore);
		if (rc < 0) {
			eb_error_locate(err, spec->path, t->requirements_in.v[i].pos.line,
					t->requirements_in.v[i].pos.col);
			free(path);
			break;
		}
		for (size_t k = 0; k < eb_reqfile_count(rf) && rc == 0; k++) {
			const struct eb_reqfile_entry *en = eb_reqfile_get(rf, k);
			for (size_t e = 0; e < pt->nenv && rc == 0; e++) {
				/* -c lines limit versions (pip-compile's
				 * constraints), the rest are requirements */
				rc = en->constraint
					     ? eb_resolver_constrain(r, pt->env0 + e, en->req.text,
								     en->file, err)
					     : eb_resolver_require(r, pt->env0 + e, en->req.text,
								   t->requirements_in.v[i].s, err);
				if (rc < 0)
					eb_error_locate(err, en->file, en->line, en->col);
			}
		}
		eb_reqfile_free(rf);
		free(path);
	}
	/* Inline `packages:` are installed too: they are part of the closure. */
	for (size_t i = 0; i < t->packages.n && rc == 0; i++) {
		for (size_t e = 0; e < pt->nenv && rc == 0; e++) {
			rc = eb_resolver_require(r, pt->env0 + e, t->packages.v[i].s, spec->path, err);
			if (rc < 0)
				eb_error_locate(err, spec->path, t->packages.v[i].pos.line,
						t->packages.v[i].pos.col);
		}
	}
	return rc;
}

static int has_pyproject(const struct eb_spec_target *t)
{
	for (size_t i = 0; i < t->requirements_in.n; i++)
		if (is_pyproject(t->requirements_in.v[i].s))
			return 1;
	return 0;
}

static struct eb_pin_file *file_add(struct eb_pin_stage *s, const char *label, const char *path)
{
	struct eb_pin_file *f;

	s->files = eb_xreallocarray(s->files, s->nfiles + 1, sizeof(*s->files));
	f = &s->files[s->nfiles++];
	memset(f, 0, sizeof(*f));
	f->label = eb_xstrdup(label);
	f->path = eb_xstrdup(path);
	return f;
}

/* A build_requirements item for the spec, added after the apt half
 * rewrote it (pin_buildreqs.h). */
struct spec_add {
	char *target, *item;
};

/* The base of a target whose sdists' backends are asked
 * (pin_buildreqs.h): pulled as detect_target() does. */
struct base_ud {
	const struct eb_spec *spec;
	struct eb_blobstore *bs;
	struct eb_registry **reg;
};

static int base_pull(void *ud, const struct eb_spec_target *t, const char *platform,
		     char ***layers, size_t *n, struct eb_error **err)
{
	struct base_ud *b = ud;
	int r = pull_base(b->spec, t, platform, b->bs, b->reg, layers, n, err);

	if (r < 0) {
		eb_error_wrap(err, "the base '%s' of target '%s' (%s), which runs its sdists' build "
			      "backends", t->base.s, t->name, platform);
		eb_error_locate(err, b->spec->path, t->base.pos.line, t->base.pos.col);
	}
	return r;
}

/* A target's build environment file (what its sdists' backends need),
 * when it pins sdists: into pt's breq fields, nothing written yet (a
 * backend that fails leaves every file as it was). */
static int pin_buildreqs(const struct eb_spec *spec, struct pin_target *pt,
			 struct eb_resolver *r, struct eb_pyprovider *prov, size_t nenvs,
			 struct eb_blobstore *bs, struct eb_registry **regp, struct eb_error **err)
{
	struct base_ud bu = { spec, bs, regp };
	struct eb_pin_buildreqs_ctx c = { base_pull, &bu, bs };

	eb_buf_init(&pt->breq, 0);
	return eb_pin_buildreqs(prov, r, nenvs, spec, pt->t, pt->env0, pt->nenv, &c, &pt->breq,
				&pt->breq_path, &pt->breq_item, &pt->breq_any, err);
}

/* Write what pin_buildreqs() made. */
static int write_buildreqs(struct eb_pin_stage *s, struct pin_target *pt, struct spec_add **adds,
			   size_t *nadds, struct eb_error **err)
{
	struct eb_buf old = EB_BUF_INIT;
	struct eb_pin_file *f;
	int rc = 0;

	if (!pt->breq_any)
		return 0;
	f = file_add(s, pt->t->name, pt->breq_path);
	f->same = !pt->breq_item && eb_fs_read_file(&old, pt->breq_path, 0, NULL) == 0 &&
		  old.len == pt->breq.len && memcmp(old.ptr, pt->breq.ptr, pt->breq.len) == 0;
	eb_buf_release(&old);
	if (!f->same)
		change_add(f, eb_xstrdup("build_requirements"));
	if (!f->same && !s->dry_run &&
	    (rc = eb_fs_write_atomic(pt->breq_path, pt->breq.ptr, pt->breq.len, 0644, err)) < 0)
		return rc;
	if (pt->breq_item) {
		*adds = eb_xreallocarray(*adds, *nadds + 1, sizeof(**adds));
		(*adds)[*nadds].target = eb_xstrdup(pt->t->name);
		(*adds)[(*nadds)++].item = pt->breq_item;
		pt->breq_item = NULL;
	}
	return 0;
}

/* The Python half: every target in scope with requirements_in, resolved
 * jointly; *any = 1 when there was one. */
static int pin_python(struct eb_pin_stage *s, const struct eb_spec *spec,
		      struct eb_blobstore **bsp, struct eb_registry **regp, int *any,
		      struct spec_add **adds, size_t *nadds, struct eb_error **err)
{
	size_t npt = 0, nenvs = 0;
	int rc = 0;
	struct pin_target *pts = NULL;
	struct eb_pyprovider_env *penvs = NULL;
	const char **machines = NULL;
	char **labels = NULL, **libcs = NULL, **pys = NULL;
	struct eb_pyindex_set *idx = NULL;
	struct eb_pyprovider *prov = NULL;
	struct eb_resolver *r = NULL;
	struct eb_resolver_provider rp;
	/* The targets to pin and their environments (one per platform). */
	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		if ((s->only && strcmp(t->name, s->only) != 0) || t->requirements_in.n == 0)
			continue;
		if ((t->extras.n || t->groups.n) && !has_pyproject(t)) {
			const struct eb_spec_str *k = t->extras.n ? &t->extras.v[0] : &t->groups.v[0];
			rc = eb_error_set_at(err, EB_EINVALID, spec->path, k->pos.line, k->pos.col,
					     "target '%s' names %s but no pyproject.toml in "
					     "requirements_in", t->name,
					     t->extras.n ? "extras" : "groups");
			eb_error_hint(err, "requirements_in: [pyproject.toml]");
			goto done;
		}
		if (t->requirements.n != 1) {
			rc = eb_error_set_at(err, EB_EINVALID, spec->path, t->pos.line, t->pos.col,
					     "target '%s' needs exactly one requirements file for "
					     "'envbuild pin' to write, not %zu",
					     t->name, t->requirements.n);
			eb_error_hint(err, "requirements: [requirements-%s.txt]", t->name);
			goto done;
		}
		if (!t->python.s && eb_imageref_is_scratch(t->base.s)) {
			rc = eb_error_set_at(err, EB_EINVALID, spec->path, t->pos.line, t->pos.col,
					     "'envbuild pin' needs the python version of target '%s'",
					     t->name);
			eb_error_hint(err, "add python: \"3.11\" to the spec");
			goto done;
		}
		if (t->platforms.n > 16) {
			rc = eb_error_set(err, EB_EINVALID, "target '%s': too many platforms", t->name);
			goto done;
		}
		pts = eb_xreallocarray(pts, npt + 1, sizeof(*pts));
		memset(&pts[npt], 0, sizeof(*pts));
		pts[npt].t = t;
		pts[npt].out_path = eb_spec_resolve(spec, t->requirements.v[0].s);
		pts[npt].env0 = nenvs;
		pts[npt].nenv = t->platforms.n;
		npt++; /* owned from here on, also when detection fails */
		for (size_t k = 0; k < t->platforms.n; k++) {
			char *py = NULL, *lc = NULL;
			penvs = eb_xreallocarray(penvs, nenvs + 1, sizeof(*penvs));
			labels = eb_xreallocarray(labels, nenvs + 1, sizeof(*labels));
			libcs = eb_xreallocarray(libcs, nenvs + 1, sizeof(*libcs));
			pys = eb_xreallocarray(pys, nenvs + 1, sizeof(*pys));
			machines = eb_xreallocarray(machines, nenvs + 1, sizeof(*machines));
			labels[nenvs] = t->platforms.n > 1
						? eb_xasprintf("%s %s", t->name, t->platforms.v[k].s)
						: eb_xstrdup(t->name);
			libcs[nenvs] = pys[nenvs] = NULL;
			nenvs++;
			if ((!t->python.s || !t->libc.s) && !eb_imageref_is_scratch(t->base.s)) {
				if (!*bsp && (rc = eb_blobstore_open(bsp, s->cache_dir, err)) < 0)
					goto done;
				rc = detect_target(spec, t, t->platforms.v[k].s, *bsp, regp, &py, &lc,
						   err);
				if (rc < 0)
					goto done;
			}
			pys[nenvs - 1] = t->python.s ? eb_xstrdup(t->python.s) : py;
			libcs[nenvs - 1] = t->libc.s ? eb_xstrdup(t->libc.s)
				       : lc ? lc : eb_xstrdup(PIN_DEFAULT_LIBC);
			if (t->python.s)
				free(py);
			if (t->libc.s)
				free(lc);
			machines[nenvs - 1] = eb_pytarget_machine(t->platforms.v[k].s);
			if (!machines[nenvs - 1])
				machines[nenvs - 1] = t->platforms.v[k].s;
			penvs[nenvs - 1] = (struct eb_pyprovider_env){ labels[nenvs - 1], pys[nenvs - 1],
								       t->platforms.v[k].s,
								       libcs[nenvs - 1] };
		}
		if (!t->libc.s && eb_imageref_is_scratch(t->base.s))
			fprintf(stderr,
				"envbuild: note: target '%s' does not say its libc: pinning for %s "
				"(manylinux2014); set libc: in the spec for newer wheels\n",
				t->name, PIN_DEFAULT_LIBC);
	}
	if (npt == 0)
		goto done; /* nothing of Python to pin */
	*any = 1;

	if ((!*bsp && (rc = eb_blobstore_open(bsp, s->cache_dir, err)) < 0) ||
	    (rc = eb_pyenv_indexes(&idx, spec, NULL, err)) < 0 ||
	    (rc = eb_pyprovider_new(&prov, idx, *bsp, penvs, nenvs, err)) < 0)
		goto done;
	eb_pyprovider_resolver(prov, &rp);
	r = eb_resolver_new(&rp, eb_pyprovider_envs(prov), nenvs);
	eb_resolver_allow_prereleases(r, s->pre);
	for (size_t i = 0; i < npt; i++) {
		old_pins_load(&pts[i], err);
		/* Minimal change: keep what is pinned unless told otherwise. */
		for (size_t k = 0; k < pts[i].nold && !s->upgrade; k++) {
			int up = 0;
			for (size_t u = 0; u < s->nups; u++)
				up |= strcmp(s->ups[u].name, pts[i].old[k].name) == 0;
			if (!up)
				eb_resolver_prefer(r, pts[i].old[k].name, pts[i].old[k].version);
		}
		if ((rc = add_inputs(r, spec, &pts[i], err)) < 0)
			goto done;
	}
	/* Pinning one target: the others' pins are preferred too, so a
	 * shared package keeps the version they have where it can. */
	for (size_t i = 0; s->only && !s->upgrade && i < spec->ntargets; i++) {
		struct pin_target other = { 0 };
		if (strcmp(spec->targets[i].name, s->only) == 0 ||
		    spec->targets[i].requirements_in.n == 0 || spec->targets[i].requirements.n != 1)
			continue;
		other.out_path = eb_spec_resolve(spec, spec->targets[i].requirements.v[0].s);
		old_pins_load(&other, err);
		for (size_t k = 0; k < other.nold; k++) {
			int up = 0;
			for (size_t u = 0; u < s->nups; u++)
				up |= strcmp(s->ups[u].name, other.old[k].name) == 0;
			if (!up && !old_version(&pts[0], other.old[k].name))
				eb_resolver_prefer(r, other.old[k].name, other.old[k].version);
			free(other.old[k].name);
			free(other.old[k].version);
			free(other.old[k].hashes);
		}
		free(other.old);
		free(other.out_path);
	}
	/* --upgrade-package NAME==V: V it is, like pip-compile's (a
	 * constraint: it adds NAME only where something needs it). */
	for (size_t u = 0; u < s->nups; u++) {
		char *pinned;
		if (!s->ups[u].version)
			continue;
		pinned = eb_xasprintf("%s==%s", s->ups[u].name, s->ups[u].version);
		for (size_t e = 0; e < nenvs && rc == 0; e++)
			rc = eb_resolver_constrain(r, e, pinned, "--upgrade-package", err);
		free(pinned);
		if (rc < 0)
			goto done;
	}
	rc = eb_resolver_run(r, err);
	if (rc == -EB_EFAIL && eb_resolver_explanation(r)) {
		s->explanation = eb_xstrdup(eb_resolver_explanation(r));
		/* The derivation names it; the one-line error must too. */
		if (eb_pyprovider_sdist_only(prov) &&
		    strstr(s->explanation, "has only an sdist") && err && *err) {
			eb_error_clear(err);
			rc = eb_error_set(err, EB_EFAIL,
					  "no solution: %s, and no other version fits",
					  eb_pyprovider_sdist_only(prov));
			if (strstr(eb_pyprovider_sdist_only(prov), "need a build"))
				eb_error_hint(err, "pin a version that has a wheel, or write its pin "
					      "(NAME==VERSION --hash=sha256:<the sdist's>) and its "
					      "dependencies in a requirements file of the target that "
					      "pin does not write (build builds it)");
			else
				eb_error_hint(err, "pin a version that has a wheel for the target");
		}
		goto done;
	}
	if (rc < 0)
		goto done;

	/* every target's build environment first: its backends run, and
	 * one that fails stops pin before any file is written */
	for (size_t i = 0; i < npt; i++)
		if ((rc = pin_buildreqs(spec, &pts[i], r, prov, nenvs, *bsp, regp, err)) < 0)
			goto done;
	for (size_t i = 0; i < npt; i++) {
		struct pin_target *pt = &pts[i];
		struct eb_pin_file *f;
		struct eb_buf b;
		struct eb_buf old = EB_BUF_INIT;
		int same;

		eb_buf_init(&b, 0);
		rc = render(&b, pt, r, prov, machines + pt->env0, pys[pt->env0], libcs[pt->env0], err);
		if (rc < 0) {
			eb_buf_release(&b);
			goto done;
		}
		same = pt->had_file && eb_fs_read_file(&old, pt->out_path, 0, NULL) == 0 &&
		       old.len == b.len && memcmp(old.ptr, b.ptr, b.len) == 0;
		eb_buf_release(&old);
		f = file_add(s, pt->t->name, pt->out_path);
		f->same = same;
		if (!same) {
			collect_changes(f, pt, r, b.ptr ? b.ptr : "");
			if (!s->dry_run &&
			    (rc = eb_fs_write_atomic(pt->out_path, b.ptr, b.len, 0644, err)) < 0) {
				eb_buf_release(&b);
				goto done;
			}
		}
		eb_buf_release(&b);
		if ((rc = write_buildreqs(s, pt, adds, nadds, err)) < 0)
			goto done;
	}
done:
	eb_resolver_free(r);
	eb_pyprovider_free(prov);
	eb_pyenv_indexes_free(idx);
	for (size_t i = 0; i < npt; i++) {
		for (size_t k = 0; k < pts[i].nold; k++) {
			free(pts[i].old[k].name);
			free(pts[i].old[k].version);
			free(pts[i].old[k].hashes);
		}
		free(pts[i].old);
		free(pts[i].out_path);
		eb_buf_release(&pts[i].breq);
		free(pts[i].breq_path);
		free(pts[i].breq_item);
	}
	free(pts);
	for (size_t i = 0; i < nenvs; i++) {
		free(labels[i]);
		free(libcs[i]);
		free(pys[i]);
	}
	free(labels);
	free(libcs);
	free(pys);
	free(machines);
	free(penvs);
	return rc;
}

/* ---- apt: loose names to name=version, with the Depends closure ------- */

/* An apt: item split: name, arch qualifier, version (NULL when loose). */
struct apt_item {
	char *name, *arch, *version; /* owned */
};

static void apt_item_split(struct apt_item *it, const char *s)
{
	const char *eq = strchr(s, '='), *colon;
	size_t end = eq ? (size_t)(eq - s) : strlen(s);

	colon = memchr(s, ':', end);
	it->name = eb_xstrndup(s, colon ? (size_t)(colon - s) : end);
	it->arch = colon ? eb_xstrndup(colon + 1, end - (size_t)(colon + 1 - s)) : NULL;
	it->version = eq && eq[1] ? eb_xstrdup(eq + 1) : NULL;
}

static void apt_item_release(struct apt_item *it)
{
	free(it->name);
	free(it->arch);
	free(it->version);
}

/* The pins of one target as they grow: name -> version, and the names
 * each one provides (for virtual packages). */
struct apt_set {
	struct apt_item *v;
	size_t n;
};

static const struct apt_item *apt_set_get(const struct apt_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->v[i].name, name) == 0)
			return &set->v[i];
	return NULL;
}

/* The newest entry named `name` for arch (or "all") satisfying rel/want;
 * NULL if none. */
static const struct eb_debpkg *apt_newest(const struct eb_debindex *idx, const char *name,
					  const char *arch, enum eb_debrel rel, const char *want)
{
	const struct eb_debpkg *p, *best = NULL;
	size_t n;

	p = eb_debindex_lookup(idx, name, &n);
	for (size_t i = 0; p && i < n; i++) {
		if (strcmp(p[i].arch, arch) != 0 && strcmp(p[i].arch, "all") != 0)
			continue;
		if (rel != EB_REL_ANY && !eb_debver_satisfies(p[i].version, rel, want))
			continue;
		if (!best || eb_debver_cmp_str(p[i].version, best->version) > 0)
			best = &p[i];
	}
	return best;
}

/* 1 when the Provides field `provides` names `name`. */
static int provides_name(const char *provides, const char *name)
{
	struct eb_debdeps d = EB_DEBDEPS_INIT;
	int found = 0;

	if (!provides || eb_debdeps_parse(&d, provides, 0, NULL) < 0)
		return 0;
	for (size_t g = 0; g < d.n && !found; g++)
		for (size_t a = 0; a < d.groups[g].n; a++)
			found |= strcmp(d.groups[g].alt[a].name, name) == 0;
	eb_debdeps_release(&d);
	return found;
}

/* Is the dependency alternative met by the base's installed packages or
 * by the pins so far (directly or through a Provides)? */
static int apt_met(const struct eb_debdep *d, const struct apt_set *set,
		   const struct eb_debindex *ix, const struct eb_debindex *st, const char *arch)
{
	const struct apt_item *it = apt_set_get(set, d->name);
	const struct eb_debpkg *p;
	size_t n;

	if (it && it->version && eb_debver_satisfies(it->version, d->rel, d->version))
		return 1;
	p = eb_debindex_lookup(st, d->name, &n);
	for (size_t i = 0; p && i < n; i++)
		if (eb_debpkg_installed(&p[i]) && eb_debver_satisfies(p[i].version, d->rel, d->version))
			return 1;
	if (d->rel != EB_REL_ANY)
		return 0; /* a versioned dependency on a virtual name: apt's rule, rare */
	for (size_t i = 0; i < st->n; i++)
		if (eb_debpkg_installed(&st->pkgs[i]) && provides_name(st->pkgs[i].provides, d->name))
			return 1;
	for (size_t i = 0; i < set->n; i++) {
		if (!set->v[i].version)
			continue;
		p = eb_debindex_find(ix, set->v[i].name, arch, set->v[i].version);
		if (!p)
			p = eb_debindex_find(ix, set->v[i].name, "all", set->v[i].version);
		if (p && provides_name(p->provides, d->name))
			return 1;
	}
	return 0;
}

/* Complete the pins of one architecture: loose names get the newest
 * version, then each pin's Depends and Pre-Depends groups not met by the
 * base or the pins get the first alternative the sources have (newest
 * version that fits), or else the first package providing it, as apt
 * chooses. */
static int apt_closure(struct apt_set *set, const struct eb_debindex *ix,
		       const struct eb_debindex *st, const char *arch, const char *platform,
		       size_t *bad, struct eb_error **err)
{
	for (size_t i = 0; i < set->n; i++) {
		struct apt_item *it = &set->v[i];
		const char *a = it->arch ? it->arch : arch;
		const struct eb_debpkg *p;
		const char *fields[2];

		if (!it->version) {
			p = apt_newest(ix, it->name, a, EB_REL_ANY, NULL);
			if (!p && (*bad = i, 1))
				return eb_error_set(err, EB_EINVALID,
						    "apt package '%s' is in none of the target's "
						    "apt_sources for %s (%s)", it->name, a, platform);
			it->version = eb_xstrdup(p->version);
		}
		p = eb_debindex_find(ix, it->name, a, it->version);
		if (!p)
			p = eb_debindex_find(ix, it->name, "all", it->version);
		if (!p)
			continue; /* an exact pin the sources lack: eb_apt_resolve says so */
		fields[0] = p->pre_depends;
		fields[1] = p->depends;
		for (int f = 0; f < 2; f++) {
			struct eb_debdeps d = EB_DEBDEPS_INIT;
			int rc = eb_debdeps_parse(&d, fields[f], 1, err);
			if (rc < 0) {
				eb_error_wrap(err, "the dependencies of %s %s", p->name, p->version);
				return rc;
			}
			for (size_t g = 0; g < d.n; g++) {
				const struct eb_debdep_group *grp = &d.groups[g];
				const struct eb_debpkg *pick = NULL;
				int met = 0;
				for (size_t k = 0; k < grp->n && !met; k++)
					met = apt_met(&grp->alt[k], set, ix, st, arch);
				if (met)
					continue;
				for (size_t k = 0; k < grp->n && !pick; k++)
					pick = apt_newest(ix, grp->alt[k].name, arch, grp->alt[k].rel,
							  grp->alt[k].version);
				for (size_t k = 0; k < grp->n && !pick; k++)
					for (size_t j = 0; j < ix->n && !pick; j++)
						if ((!strcmp(ix->pkgs[j].arch, arch) ||
						     !strcmp(ix->pkgs[j].arch, "all")) &&
						    provides_name(ix->pkgs[j].provides, grp->alt[k].name))
							pick = &ix->pkgs[j];
				if (!pick || apt_set_get(set, pick->name))
					continue; /* eb_apt_resolve names what is missing */
				set->v = eb_xreallocarray(set->v, set->n + 1, sizeof(*set->v));
				set->v[set->n++] = (struct apt_item){ eb_xstrdup(pick->name), NULL,
								      eb_xstrdup(pick->version) };
				it = &set->v[i]; /* the array moved */
			}
			eb_debdeps_release(&d);
		}
	}
	return 0;
}

/* One replacement in the spec's text. */
struct edit {
	size_t off, len;
	char *text; /* owned */
};

static int cmp_edit(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;
	return x->off < y->off ? 1 : x->off > y->off ? -1 : 0; /* last first */
}

/* Byte offset of line:col (1-based) in text, or (size_t)-1. */
static size_t text_offset(const char *text, size_t len, unsigned line, unsigned col)
{
	size_t off = 0;

	for (unsigned l = 1; l < line; l++) {
		const char *nl = memchr(text + off, '\n', len - off);
		if (!nl)
			return (size_t)-1;
		off = (size_t)(nl - text) + 1;
	}
	off += col - 1;
	return off < len ? off : (size_t)-1;
}

/* The extent of the scalar `value` written at off: quoted or plain. */
static size_t token_len(const char *text, size_t len, size_t off, const char *value)
{
	size_t vl = strlen(value);

	if (text[off] == '"' || text[off] == '\'') {
		const char *q = memchr(text + off + 1, text[off], len - off - 1);
		return q ? (size_t)(q - (text + off)) + 1 : 0;
	}
	return off + vl <= len && memcmp(text + off, value, vl) == 0 ? vl : 0;
}

/* The edits that make target t's apt: list `want` (the items as they are,
 * loose ones pinned, then `added`): each loose item rewritten in place,
 * the added ones after the last item in the list's own style (block: one
 * "- " line each with the last item's indentation; flow: ", item"). */
static int apt_edits(const struct eb_spec *spec, const struct eb_spec_target *t,
		     char *const *pinned, char *const *added, size_t nadded, struct edit **ed,
		     size_t *ned, struct eb_error **err)
{
	const char *text = spec->text;
	size_t len = spec->text_len, off = 0, tl = 0;
	char quote = 0;

	for (size_t i = 0; i < t->apt.n; i++) {
		off = text_offset(text, len, t->apt.v[i].pos.line, t->apt.v[i].pos.col);
		tl = off == (size_t)-1 ? 0 : token_len(text, len, off, t->apt.v[i].s);
		if (!tl)
			return eb_error_set_at(err, EB_EINVALID, spec->path, t->apt.v[i].pos.line,
					       t->apt.v[i].pos.col,
					       "cannot rewrite apt item '%s' in place",
					       t->apt.v[i].s);
		quote = text[off] == '"' || text[off] == '\'' ? text[off] : 0;
		if (!pinned[i])
			continue;
		*ed = eb_xreallocarray(*ed, *ned + 1, sizeof(**ed));
		(*ed)[(*ned)++] = (struct edit){ off, tl,
						 quote ? eb_xasprintf("%c%s%c", quote, pinned[i], quote)
						       : eb_xstrdup(pinned[i]) };
	}
	if (nadded) {
		/* off, tl, quote: the last item */
		size_t ls = off, le;
		int block = 1;
		struct eb_buf b = EB_BUF_INIT;

		while (ls > 0 && text[ls - 1] != '\n')
			ls--;
		for (size_t k = ls; k < off; k++)
			if (text[k] != ' ' && text[k] != '\t' && text[k] != '-')
				block = 0;
		if (block && !memchr(text + ls, '-', off - ls))
			block = 0;
		if (block) {
			const char *nl = memchr(text + off, '\n', len - off);
			le = nl ? (size_t)(nl - text) + 1 : len;
			if (!nl)
				(void)eb_buf_addc(&b, '\n');
			for (size_t k = 0; k < nadded; k++) {
				(void)eb_buf_add(&b, text + ls, off - ls);
				if (quote)
					(void)eb_buf_addf(&b, "%c%s%c\n", quote, added[k], quote);
				else
					(void)eb_buf_addf(&b, "%s\n", added[k]);
			}
			*ed = eb_xreallocarray(*ed, *ned + 1, sizeof(**ed));
			(*ed)[(*ned)++] = (struct edit){ le, 0, eb_buf_detach(&b, NULL) };
		} else {
			for (size_t k = 0; k < nadded; k++) {
				if (quote)
					(void)eb_buf_addf(&b, ", %c%s%c", quote, added[k], quote);
				else
					(void)eb_buf_addf(&b, ", %s", added[k]);
			}
			*ed = eb_xreallocarray(*ed, *ned + 1, sizeof(**ed));
			(*ed)[(*ned)++] = (struct edit){ off + tl, 0, eb_buf_detach(&b, NULL) };
		}
	}
	return 0;
}

/* "name=version" items by name ("binutils" before "binutils-common") */
static int cmp_item(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
	int c = strncmp(x, y, nx < ny ? nx : ny);
	return c ? c : nx < ny ? -1 : nx > ny ? 1 : strcmp(x, y);
}

/* Is the apt package `name` to be pinned anew?  --upgrade-package takes
 * a Debian name as written, not normalised the Python way ("libstdc++6",
 * "python3.11"); a ==VERSION part is for Python only. */
static int apt_upgrade(const struct eb_pin_stage *s, const char *name)
{
	if (s->upgrade)
		return 1;
	for (size_t u = 0; u < s->nups; u++)
		if (strcmp(s->ups[u].written ? s->ups[u].written : s->ups[u].name, name) == 0)
			return 1;
	return 0;
}

/* One target's apt pins, for each of its platforms (one version for all:
 * a name pinned differently on two platforms is an error). */
static int pin_apt_target(const struct eb_pin_stage *s, const struct eb_spec *spec,
			  const struct eb_spec_target *t, struct eb_blobstore *bs,
			  struct eb_registry **reg,
			  struct eb_http_client *http, struct eb_pin_file *f, struct edit **ed,
			  size_t *ned, struct eb_error **err)
{
	struct eb_apt_source *src = eb_xcalloc(t->apt_sources.n + 1, sizeof(*src));
	char **keyrings = eb_xcalloc(t->apt_sources.n + 1, sizeof(*keyrings));
	struct apt_set all = { NULL, 0 };
	char **pinned = eb_xcalloc(t->apt.n + 1, sizeof(*pinned));
	char **added = NULL;
	size_t nadded = 0;
	int rc = 0;

	for (size_t i = 0; i < t->apt_sources.n; i++) {
		const struct eb_spec_apt_source *a = &t->apt_sources.v[i];
		const char **comps = eb_xcalloc(a->components.n + 1, sizeof(*comps));
		for (size_t k = 0; k < a->components.n; k++)
			comps[k] = a->components.v[k].s;
		keyrings[i] = eb_spec_resolve(spec, a->signed_by.s);
		src[i] = (struct eb_apt_source){ a->url.s, a->suite.s, comps, a->components.n,
						 keyrings[i], a->check_valid_until };
	}
	for (size_t k = 0; k < t->platforms.n && rc == 0; k++) {
		const char *platform = t->platforms.v[k].s, *arch = eb_apt_arch_for_platform(platform);
		struct eb_apt_indexes ix;
		struct eb_debindex st = EB_DEBINDEX_INIT;
		struct eb_apt_resolution res = { NULL, 0 };
		struct eb_buf status = EB_BUF_INIT;
		char **paths = NULL, **lp = NULL, **lt = NULL;
		size_t np = 0, nl = 0;
		struct apt_set set = { NULL, 0 };
		struct eb_apt_pin *pins = NULL;
		size_t bad = (size_t)-1;

		memset(&ix, 0, sizeof(ix));
		if (!arch) {
			rc = eb_error_set(err, EB_EINVALID, "no Debian architecture for platform '%s'",
					  platform);
			break;
		}
		if (!eb_imageref_is_scratch(t->base.s)) {
			rc = pull_base(spec, t, platform, bs, reg, &paths, &np, err);
			if (rc == 0)
				rc = eb_debian_base_scan((const char *const *)paths, np, &status, &lp,
							 &lt, &nl, err);
			if (rc < 0)
				eb_error_wrap(err, "reading the dpkg status of base '%s'", t->base.s);
		}
		if (rc == 0 && status.len)
			rc = eb_debindex_add(&st, status.ptr, status.len, "/var/lib/dpkg/status",
					     EB_DEBINDEX_STATUS, err);
		eb_debindex_sort(&st);
		if (rc == 0)
			rc = eb_apt_fetch(&ix, http, src, t->apt_sources.n, arch, time(NULL), err);
		for (size_t i = 0; rc == 0 && i < t->apt.n; i++) {
			set.v = eb_xreallocarray(set.v, set.n + 1, sizeof(*set.v));
			apt_item_split(&set.v[set.n], t->apt.v[i].s);
			if (apt_upgrade(s, set.v[set.n].name)) {
				/* --upgrade, --upgrade-package NAME: the newest again */
				free(set.v[set.n].version);
				set.v[set.n].version = NULL;
			}
			set.n++;
		}
		if (rc == 0 && (rc = apt_closure(&set, &ix.idx, &st, arch, platform, &bad, err)) < 0 &&
		    bad < t->apt.n)
			eb_error_locate(err, spec->path, t->apt.v[bad].pos.line, t->apt.v[bad].pos.col);
		if (rc == 0) {
			/* the module's own check of the result: every pin in
			 * the sources, every dependency met */
			pins = eb_xcalloc(set.n + 1, sizeof(*pins));
			for (size_t i = 0; i < set.n; i++)
				pins[i] = (struct eb_apt_pin){ set.v[i].name, set.v[i].arch,
							       set.v[i].version };
			rc = eb_apt_resolve(&res, &ix, src, &st, pins, set.n, arch, err);
		}
		if (rc < 0 && t->apt.n)
			eb_error_locate(err, spec->path, t->apt.v[0].pos.line, t->apt.v[0].pos.col);
		/* merge into `all` */
		for (size_t i = 0; rc == 0 && i < set.n; i++) {
			const struct apt_item *o = apt_set_get(&all, set.v[i].name);
			if (o && strcmp(o->version, set.v[i].version) != 0) {
				rc = eb_error_set(err, EB_EINVALID,
						  "apt package '%s' is %s for %s but %s for %s; "
						  "one pin cannot serve both",
						  set.v[i].name, o->version, t->platforms.v[0].s,
						  set.v[i].version, platform);
				break;
			}
			if (!o) {
				all.v = eb_xreallocarray(all.v, all.n + 1, sizeof(*all.v));
				all.v[all.n++] = (struct apt_item){
					eb_xstrdup(set.v[i].name),
					set.v[i].arch ? eb_xstrdup(set.v[i].arch) : NULL,
					eb_xstrdup(set.v[i].version) };
			}
		}
		free(pins);
		for (size_t i = 0; i < set.n; i++)
			apt_item_release(&set.v[i]);
		free(set.v);
		eb_apt_resolution_release(&res);
		eb_apt_indexes_release(&ix);
		eb_debindex_release(&st);
		eb_buf_release(&status);
		eb_debian_links_free(lp, lt, nl);
		paths_free(paths, np);
	}
	if (rc < 0)
		goto done;
	/* the spec's items first (loose or upgraded ones pinned), then the
	 * closure */
	for (size_t i = 0; i < t->apt.n; i++) {
		struct apt_item it;
		const struct apt_item *o;
		apt_item_split(&it, t->apt.v[i].s);
		o = apt_set_get(&all, it.name);
		if (o && (!it.version || strcmp(it.version, o->version) != 0)) {
			pinned[i] = eb_xasprintf("%s%s%s=%s", it.name, it.arch ? ":" : "",
						 it.arch ? it.arch : "", o->version);
			change_add(f, eb_xasprintf("%s: %s \xe2\x86\x92 %s", t->name, t->apt.v[i].s,
						   pinned[i]));
		}
		apt_item_release(&it);
	}
	for (size_t i = 0; i < all.n; i++) {
		int listed = 0;
		for (size_t j = 0; j < t->apt.n && !listed; j++) {
			struct apt_item it;
			apt_item_split(&it, t->apt.v[j].s);
			listed = strcmp(it.name, all.v[i].name) == 0;
			apt_item_release(&it);
		}
		if (listed)
			continue;
		added = eb_xreallocarray(added, nadded + 1, sizeof(*added));
		added[nadded++] = eb_xasprintf("%s=%s", all.v[i].name, all.v[i].version);
	}
	if (nadded)
		eb_sort(added, nadded, sizeof(*added), cmp_item);
	for (size_t i = 0; i < nadded; i++) {
		char *v = strchr(added[i], '=');
		change_add(f, eb_xasprintf("%s: + %.*s %s", t->name, (int)(v - added[i]), added[i],
					   v + 1));
	}
	rc = apt_edits(spec, t, pinned, added, nadded, ed, ned, err);
done:
	for (size_t i = 0; i < t->apt_sources.n; i++) {
		free((void *)src[i].components);
		free(keyrings[i]);
	}
	free(src);
	free(keyrings);
	for (size_t i = 0; i < all.n; i++)
		apt_item_release(&all.v[i]);
	free(all.v);
	for (size_t i = 0; i < t->apt.n; i++)
		free(pinned[i]);
	free(pinned);
	for (size_t i = 0; i < nadded; i++)
		free(added[i]);
	free(added);
	return rc;
}

/* The apt half: every target in scope with apt: items; the spec
 * rewritten once with all their edits. */
static int pin_apt(struct eb_pin_stage *s, const struct eb_spec *spec, struct eb_blobstore **bs,
		   struct eb_registry **reg, int *pinned, struct eb_error **err)
{
	struct eb_http_client *http = NULL;
	struct edit *ed = NULL;
	size_t ned = 0;
	struct eb_pin_file *f = NULL;
	struct eb_buf out = EB_BUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < spec->ntargets && rc == 0; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		/* exact pins too: their closure may lack what a changed pin needs */
		if ((s->only && strcmp(t->name, s->only) != 0) || !t->apt.n)
			continue;
		*pinned = 1;
		if (!*bs && (rc = eb_blobstore_open(bs, s->cache_dir, err)) < 0)
			break;
		if (!http && (rc = eb_http_client_new(&http, NULL, err)) < 0)
			break;
		if (!f)
			f = file_add(s, "apt", spec->path);
		rc = pin_apt_target(s, spec, t, *bs, reg, http, f, &ed, &ned, err);
		if (rc < 0)
			eb_error_wrap(err, "pinning the apt packages of target '%s'", t->name);
	}
	if (rc < 0 || !ned)
		goto done;
	eb_sort(ed, ned, sizeof(*ed), cmp_edit);
	/* apply back to front: earlier offsets stay valid */
	{
		size_t at;
		/* forward, from the last (lowest) edit of the list */
		for (size_t i = ned; i-- > 0;) {
			size_t start = i + 1 < ned ? ed[i + 1].off + ed[i + 1].len : 0;
			(void)eb_buf_add(&out, spec->text + start, ed[i].off - start);
			(void)eb_buf_adds(&out, ed[i].text);
		}
		at = ed[0].off + ed[0].len;
		(void)eb_buf_add(&out, spec->text + at, spec->text_len - at);
	}
	{
		/* what was written must read back as the same spec with exact
		 * pins: never leave a spec the next command cannot use */
		struct eb_spec *again = NULL;
		struct eb_diag_list diags = EB_DIAG_LIST_INIT;
		rc = eb_spec_load_buffer(&again, spec->path, out.ptr, out.len, &diags, err);
		for (size_t i = 0; rc == 0 && i < diags.n; i++)
			if (!strcmp(diags.items[i].rule, "EB231") || !strcmp(diags.items[i].rule, "EB001") ||
			    !strcmp(diags.items[i].rule, "EB230"))
				rc = eb_error_set_at(err, EB_EINVALID, spec->path, diags.items[i].line,
						     diags.items[i].col,
						     "the rewritten spec would not be valid: %s",
						     diags.items[i].msg);
		if (rc == 0 && !again)
			rc = eb_error_set(err, EB_EINVALID, "the rewritten spec does not parse");
		eb_spec_free(again);
		eb_diag_list_release(&diags);
	}
	if (rc == 0 && !s->dry_run)
		rc = eb_fs_write_atomic(spec->path, out.ptr, out.len, 0644, err);
done:
	if (f && !ned)
		f->same = 1;
	for (size_t i = 0; i < ned; i++)
		free(ed[i].text);
	free(ed);
	eb_buf_release(&out);
	eb_http_client_free(http);
	return rc;
}

int eb_stage_pin(struct eb_pin_stage *s, struct eb_error **err)
{
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	struct eb_registry *reg = NULL;
	struct eb_blobstore *bs = NULL;
	struct spec_add *adds = NULL;
	size_t nadds = 0;
	int rc, py = 0, apt = 0;

	if ((rc = eb_spec_load(&spec, s->spec_path, &diags, err)) < 0)
		goto done;
	/* loose apt: names (EB231) are what this command fixes */
	for (size_t i = 0; spec && i < diags.n; i++)
		if (diags.items[i].severity == EB_SEV_ERROR && strcmp(diags.items[i].rule, "EB231"))
			spec = (eb_spec_free(spec), NULL);
	if (!spec) {
		rc = eb_error_set(err, EB_EINVALID, "'%s' has errors", s->spec_path);
		eb_error_hint(err, "run 'envbuild check' to see them");
		goto done;
	}
	if (s->only && !eb_spec_target(spec, s->only)) {
		rc = eb_error_set(err, EB_EUSAGE, "no target '%s' in '%s'", s->only, s->spec_path);
		goto done;
	}
	if ((rc = pin_python(s, spec, &bs, &reg, &py, &adds, &nadds, err)) < 0 ||
	    (rc = pin_apt(s, spec, &bs, &reg, &apt, err)) < 0)
		goto done;
	for (size_t i = 0; i < nadds; i++) {
		if ((rc = eb_pin_buildreqs_spec_add(s->spec_path, adds[i].target, adds[i].item,
						    s->dry_run, err)) < 0)
			goto done;
		change_add(file_add(s, "spec", s->spec_path),
			   eb_xasprintf("%s: + build_requirements: [%s]", adds[i].target,
					adds[i].item));
	}
	if (!py && !apt) {
		const struct eb_spec_target *t = s->only ? eb_spec_target(spec, s->only) : NULL;
		if (t) {
			rc = eb_error_set_at(err, EB_EINVALID, spec->path, t->pos.line, t->pos.col,
					     "target '%s' has no requirements_in and no loose apt: "
					     "name to pin", t->name);
			eb_error_hint(err, "add requirements_in: [requirements-%s.in]", t->name);
		} else {
			rc = eb_error_set(err, EB_EINVALID,
					  "no target of '%s' has requirements_in or a loose apt: name",
					  s->spec_path);
			eb_error_hint(err, "add requirements_in: [requirements-train.in] to a target");
		}
	}
done:
	for (size_t i = 0; i < nadds; i++) {
		free(adds[i].target);
		free(adds[i].item);
	}
	free(adds);
	eb_blobstore_free(bs);
	eb_registry_free(reg);
	eb_spec_free(spec);
	eb_diag_list_release(&diags);
	return rc;
}

void eb_stage_pin_end(struct eb_pin_stage *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].label);
		free(s->files[i].path);
		for (size_t k = 0; k < s->files[i].nchanges; k++)
			free(s->files[i].changes[k]);
		free(s->files[i].changes);
	}
	free(s->files);
	free(s->explanation);
	s->files = NULL;
	s->nfiles = 0;
	s->explanation = NULL;
}
