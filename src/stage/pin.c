/*
 * cmd_pin.c - `envbuild pin`: resolve each target's loose requirements
 * (`requirements_in:` files, pip-compile's *.in) for the target's own
 * interpreter and platforms, jointly for every target pinned (a project
 * two targets need gets one version), and write the exact, hashed closure
 * to the target's `requirements:` file; print what changed.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/pyinstall.h"
#include "cmd/cmd.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "ref/imageref.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "python/pyprovider.h"
#include "python/target.h"
#include "python/resolver.h"
#include "registry/client.h"
#include "spec/spec.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/fs.h"

/* Used when the spec does not say which C library the base has: every
 * glibc base envbuild supports runs manylinux2014 wheels. */
#define PIN_DEFAULT_LIBC "glibc 2.17"

struct old_pin {
	char *name, *version;
};

struct pin_target {
	const struct eb_spec_target *t;
	char *out_path;  /* the requirements file, as the user opens it */
	size_t env0, nenv; /* its environments in the resolver */
	struct old_pin *old;
	size_t nold;
	int had_file;
};

struct upgrade_pkg {
	char *name, *version; /* version NULL: newest */
};

/* What the spec does not say about the target's Python (version, libc),
 * read from its base for one platform, as `envbuild build` reads it: an
 * oci: layout or a registry image (its layers pulled into the blob
 * store).  *python and *libc are the caller's. */
static int detect_target(const struct eb_spec *spec, const struct eb_spec_target *t,
			 const char *platform, struct eb_blobstore *bs, struct eb_registry **reg,
			 char **python, char **libc, struct eb_error **err)
{
	struct eb_layout_image base = { 0 };
	struct eb_platform plat = { 0 };
	struct eb_pytarget pt = { 0 };
	struct eb_pytarget_overrides ov = { t->python.s, t->interpreter.s, t->site_packages.s,
					     t->libc.s };
	struct eb_registry_options ro = { 0 };
	char *dir = NULL, *ref = NULL;
	const char **paths = NULL;
	int r;

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
	paths = eb_xcalloc(base.manifest.n_layers + 1, sizeof(*paths));
	for (size_t i = 0; i < base.manifest.n_layers; i++)
		paths[i] = eb_blobstore_path(bs, base.manifest.layers[i].digest);
	r = eb_pytarget_detect(&pt, paths, base.manifest.n_layers, platform, &ov, err);
	if (r == 0) {
		*python = eb_xstrdup(pt.python_version);
		*libc = eb_xasprintf("%s %d.%d", pt.libc == EB_LIBC_MUSL ? "musl" : "glibc",
				     pt.libc_major, pt.libc_minor);
	}
done:
	if (r < 0) {
		eb_error_wrap(err, "reading the python of base '%s' of target '%s' (%s)", t->base.s,
			      t->name, platform);
		eb_error_locate(err, spec->path, t->base.pos.line, t->base.pos.col);
		eb_error_hint(err, "or set python: and libc: for the target in the spec");
	}
	for (size_t i = 0; paths && i < base.manifest.n_layers; i++)
		free((char *)paths[i]);
	free(paths);
	eb_pytarget_release(&pt);
	eb_layout_image_release(&base);
	eb_platform_release(&plat);
	free(dir);
	free(ref);
	return r;
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
		pt->old = eb_xreallocarray(pt->old, pt->nold + 1, sizeof(*pt->old));
		pt->old[pt->nold].name = eb_xstrdup(en->req.norm_name);
		pt->old[pt->nold].version = eb_xstrdup(v);
		pt->nold++;
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
		qsort(outs, nout, sizeof(*outs), cmp_out);

	(void)eb_buf_adds(b, "#\n# This file is autogenerated by envbuild pin for target '");
	(void)eb_buf_addf(b, "%s'\n# (python %s, %s, ", t->name, python, libc);
	for (size_t k = 0; k < t->platforms.n; k++)
		(void)eb_buf_addf(b, "%s%s", k ? " " : "", t->platforms.v[k].s);
	(void)eb_buf_adds(b, ") from:\n");
	for (size_t i = 0; i < t->requirements_in.n; i++)
		(void)eb_buf_addf(b, "#    %s\n", t->requirements_in.v[i].s);
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
			qsort(o->extras, o->nextras, sizeof(char *), cmp_cstr);
		if (o->nvia)
			qsort(o->via, o->nvia, sizeof(char *), cmp_cstr);
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

/* "numpy 1.26.3 → 1.26.4", "+ scipy 1.12.0", "- six 1.16.0"; returns how
 * many lines it printed. */
static size_t print_changes(const struct pin_target *pt, struct eb_resolver *r)
{
	const char **names = NULL, **vers = NULL;
	size_t n = 0, changed = 0;

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
		if (!old) {
			printf("  + %s %s\n", names[i], vers[i]);
			changed++;
		} else if (strcmp(old, vers[i]) != 0) {
			printf("  %s %s \xe2\x86\x92 %s\n", names[i], old, vers[i]);
			changed++;
		}
	}
	for (size_t i = 0; i < pt->nold; i++) {
		size_t j;
		for (j = 0; j < n; j++)
			if (strcmp(names[j], pt->old[i].name) == 0)
				break;
		if (j == n) {
			printf("  - %s %s\n", pt->old[i].name, pt->old[i].version);
			changed++;
		}
	}
	free(names);
	free(vers);
	return changed;
}

static int add_inputs(struct eb_resolver *r, const struct eb_spec *spec, const struct pin_target *pt,
		      struct eb_error **err)
{
	const struct eb_spec_target *t = pt->t;
	int rc = 0;

	for (size_t i = 0; i < t->requirements_in.n && rc == 0; i++) {
		struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
		struct eb_reqfile *rf = NULL;
		char *path = eb_spec_resolve(spec, t->requirements_in.v[i].s);

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

int cmd_pin(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "upgrade", no_argument, NULL, 'U' },
		{ "upgrade-package", required_argument, NULL, 'P' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "pre", no_argument, NULL, 'p' },
		{ "spec", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *spec_path = NULL, *cache_dir = NULL, *only = NULL;
	struct upgrade_pkg *ups = NULL;
	size_t nups = 0, npt = 0, nenvs = 0;
	int upgrade = 0, dry_run = 0, pre = 0, c, rc = 0;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	struct pin_target *pts = NULL;
	struct eb_pyprovider_env *penvs = NULL;
	const char **machines = NULL;
	char **labels = NULL, **libcs = NULL, **pys = NULL;
	struct eb_registry *reg = NULL;
	struct eb_pyindex_set *idx = NULL;
	struct eb_blobstore *bs = NULL;
	struct eb_pyprovider *prov = NULL;
	struct eb_resolver *r = NULL;
	struct eb_resolver_provider rp;

	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': only = optarg; break;
		case 'U': upgrade = 1; break;
		case 'n': dry_run = 1; break;
		case 'p': pre = 1; break;
		case 'S': spec_path = optarg; break;
		case 'c': cache_dir = optarg; break;
		case 'h': eb_cmd_print_help(eb_cmd_find("pin")); return 0;
		case 'P': {
			const char *eq = strstr(optarg, "==");
			size_t len = eq ? (size_t)(eq - optarg) : strlen(optarg);
			if (!eb_pep503_valid(optarg, len) || (eq && !eq[2])) {
				rc = eb_error_set(err, EB_EUSAGE,
						  "--upgrade-package '%s': expected NAME or NAME==VERSION",
						  optarg);
				goto done;
			}
			ups = eb_xreallocarray(ups, nups + 1, sizeof(*ups));
			ups[nups].name = eb_pep503_normalize(optarg, len);
			ups[nups++].version = eq ? eb_xstrdup(eq + 2) : NULL;
			break;
		}
		default:
			rc = eb_error_set(err, EB_EUSAGE, "see 'envbuild pin --help'");
			goto done;
		}
	}
	if ((rc = eb_cmd_find_spec(argc, argv, &spec_path, err)) < 0)
		goto done;
	if ((rc = eb_spec_load(&spec, spec_path, &diags, err)) < 0)
		goto done;
	if (!spec || eb_diag_list_count(&diags, EB_SEV_ERROR) > 0) {
		rc = eb_error_set(err, EB_EINVALID, "'%s' has errors", spec_path);
		eb_error_hint(err, "run 'envbuild check' to see them");
		goto done;
	}

	/* The targets to pin and their environments (one per platform). */
	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		if (only ? strcmp(t->name, only) != 0 : t->requirements_in.n == 0)
			continue;
		if (t->requirements_in.n == 0) {
			rc = eb_error_set_at(err, EB_EINVALID, spec->path, t->pos.line, t->pos.col,
					     "target '%s' has no requirements_in to pin", t->name);
			eb_error_hint(err, "add requirements_in: [requirements-%s.in]", t->name);
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
				if (!bs && (rc = eb_blobstore_open(&bs, cache_dir, err)) < 0)
					goto done;
				rc = detect_target(spec, t, t->platforms.v[k].s, bs, &reg, &py, &lc, err);
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
	if (only && npt == 0) {
		rc = eb_error_set(err, EB_EUSAGE, "no target '%s' in '%s'", only, spec_path);
		goto done;
	}
	if (npt == 0) {
		rc = eb_error_set(err, EB_EINVALID, "no target of '%s' has requirements_in", spec_path);
		eb_error_hint(err, "add requirements_in: [requirements-train.in] to a target");
		goto done;
	}

	if ((!bs && (rc = eb_blobstore_open(&bs, cache_dir, err)) < 0) ||
	    (rc = eb_pyenv_indexes(&idx, spec, NULL, err)) < 0 ||
	    (rc = eb_pyprovider_new(&prov, idx, bs, penvs, nenvs, err)) < 0)
		goto done;
	eb_pyprovider_resolver(prov, &rp);
	r = eb_resolver_new(&rp, eb_pyprovider_envs(prov), nenvs);
	eb_resolver_allow_prereleases(r, pre);
	for (size_t i = 0; i < npt; i++) {
		old_pins_load(&pts[i], err);
		/* Minimal change: keep what is pinned unless told otherwise. */
		for (size_t k = 0; k < pts[i].nold && !upgrade; k++) {
			int up = 0;
			for (size_t u = 0; u < nups; u++)
				up |= strcmp(ups[u].name, pts[i].old[k].name) == 0;
			if (!up)
				eb_resolver_prefer(r, pts[i].old[k].name, pts[i].old[k].version);
		}
		if ((rc = add_inputs(r, spec, &pts[i], err)) < 0)
			goto done;
	}
	/* Pinning one target: the others' pins are preferred too, so a
	 * shared package keeps the version they have where it can. */
	for (size_t i = 0; only && !upgrade && i < spec->ntargets; i++) {
		struct pin_target other = { 0 };
		if (strcmp(spec->targets[i].name, only) == 0 ||
		    spec->targets[i].requirements_in.n == 0 || spec->targets[i].requirements.n != 1)
			continue;
		other.out_path = eb_spec_resolve(spec, spec->targets[i].requirements.v[0].s);
		old_pins_load(&other, err);
		for (size_t k = 0; k < other.nold; k++) {
			int up = 0;
			for (size_t u = 0; u < nups; u++)
				up |= strcmp(ups[u].name, other.old[k].name) == 0;
			if (!up && !old_version(&pts[0], other.old[k].name))
				eb_resolver_prefer(r, other.old[k].name, other.old[k].version);
			free(other.old[k].name);
			free(other.old[k].version);
		}
		free(other.old);
		free(other.out_path);
	}
	/* --upgrade-package NAME==V: V it is, like pip-compile's (a
	 * constraint: it adds NAME only where something needs it). */
	for (size_t u = 0; u < nups; u++) {
		char *pinned;
		if (!ups[u].version)
			continue;
		pinned = eb_xasprintf("%s==%s", ups[u].name, ups[u].version);
		for (size_t e = 0; e < nenvs && rc == 0; e++)
			rc = eb_resolver_constrain(r, e, pinned, "--upgrade-package", err);
		free(pinned);
		if (rc < 0)
			goto done;
	}
	rc = eb_resolver_run(r, err);
	if (rc == -EB_EFAIL && eb_resolver_explanation(r)) {
		fputs(eb_resolver_explanation(r), stderr);
		goto done;
	}
	if (rc < 0)
		goto done;

	for (size_t i = 0; i < npt; i++) {
		struct pin_target *pt = &pts[i];
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
		printf("%s: %s%s\n", pt->t->name, pt->out_path,
		       same ? " is up to date" : dry_run ? " would change:" : "");
		if (!same) {
			if (print_changes(pt, r) == 0)
				printf("  (annotations only)\n");
			if (!dry_run &&
			    (rc = eb_fs_write_atomic(pt->out_path, b.ptr, b.len, 0644, err)) < 0) {
				eb_buf_release(&b);
				goto done;
			}
		}
		eb_buf_release(&b);
	}
done:
	eb_resolver_free(r);
	eb_pyprovider_free(prov);
	eb_pyenv_indexes_free(idx);
	eb_blobstore_free(bs);
	for (size_t i = 0; i < npt; i++) {
		for (size_t k = 0; k < pts[i].nold; k++) {
			free(pts[i].old[k].name);
			free(pts[i].old[k].version);
		}
		free(pts[i].old);
		free(pts[i].out_path);
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
	eb_registry_free(reg);
	free(machines);
	free(penvs);
	for (size_t u = 0; u < nups; u++) {
		free(ups[u].name);
		free(ups[u].version);
	}
	free(ups);
	eb_spec_free(spec);
	eb_diag_list_release(&diags);
	return rc;
}
