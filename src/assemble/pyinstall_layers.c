/*
 * pyinstall_layers.c - what follows resolution in pyinstall.c: which base
 * distributions the pins replace and what removing them whites out, the
 * closure check on the wheels' own metadata, and the package layers
 * planned, cached and written.  Resolving and indexes are pyinstall.c
 * (pyinstall_internal.h between them).
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assemble/bytecode.h"
#include "assemble/pyinstall.h"
#include "assemble/pyinstall_internal.h"
#include "oci/basefs.h"
#include "oci/cache.h"
#include "pin/marker.h"
#include "pin/requirement.h"
#include "pin/version.h"
#include "python/wheel.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* Bumped whenever the bytes of a package layer may change for the same
 * wheels (scheme handling, launcher template, RECORD format). */
#define PYLAYER_FORMAT 1

/* The base's distribution of d's project: the one with a RECORD (which can
 * be removed) before one without. */
static const struct eb_pybase_dist *base_dist(const struct eb_pytarget *t, const char *name)
{
	const struct eb_pybase_dist *any = NULL;

	for (size_t i = 0; i < t->ndists; i++) {
		if (strcmp(t->dists[i].name, name) != 0)
			continue;
		if (t->dists[i].files)
			return &t->dists[i];
		if (!any)
			any = &t->dists[i];
	}
	return any;
}

/* -1, 0, 1: a's version against b's by PEP 440 (bytewise when either is
 * not a version). */
static int version_cmp(const char *a, const char *b)
{
	struct eb_version va, vb;
	int c;

	if (eb_version_parse(&va, a, strlen(a), NULL) < 0)
		return strcmp(a, b);
	if (eb_version_parse(&vb, b, strlen(b), NULL) < 0) {
		eb_version_release(&va);
		return strcmp(a, b);
	}
	c = eb_version_cmp(&va, &vb);
	eb_version_release(&va);
	eb_version_release(&vb);
	return c;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is path one of the sorted files[0..n)? */
static int in_sorted(char *const *files, size_t n, const char *path)
{
	return bsearch(&path, files, n, sizeof(*files), cmp_str) != NULL;
}

/* What removing base distribution b leaves to whiteout: every directory
 * (below its site directory) that holds nothing but b's files in the base,
 * the topmost only; then b's files not under one of those. */
static void plan_removal(struct eb_pydist *d, const struct eb_pybase_dist *b,
			 const struct eb_basefs *fs)
{
	const char *slash = strrchr(b->dist_info, '/');
	size_t sitelen = (size_t)(slash - b->dist_info);
	char **dirs = NULL;
	size_t ndirs = 0, cap = 0, rcap = 0;

	/* candidates: the dist-info directory and every parent of a file
	 * strictly below the site directory */
	EB_ALLOC_GROW(dirs, ndirs + 1, cap);
	dirs[ndirs++] = eb_xstrdup(b->dist_info);
	for (size_t i = 0; fs && i < b->nfiles; i++) {
		const char *f = b->files[i];
		if (strncmp(f, b->dist_info, sitelen) != 0 || f[sitelen] != '/')
			continue;
		for (const char *q = strchr(f + sitelen + 1, '/'); q; q = strchr(q + 1, '/')) {
			EB_ALLOC_GROW(dirs, ndirs + 1, cap);
			dirs[ndirs++] = eb_xstrndup(f, (size_t)(q - f));
		}
	}
	eb_sort(dirs, ndirs, sizeof(*dirs), cmp_str);
	for (size_t i = 0; i < ndirs; i++) {
		int whole = 1;
		const char *last = d->nremove ? d->remove[d->nremove - 1] : NULL;

		if (i && strcmp(dirs[i], dirs[i - 1]) == 0)
			continue;
		/* under a directory already removed whole */
		if (last && strncmp(dirs[i], last, strlen(last)) == 0 && dirs[i][strlen(last)] == '/')
			continue;
		if (strcmp(dirs[i], b->dist_info) != 0) {
			const struct eb_basefs_node *first;
			size_t n = eb_basefs_under(fs, dirs[i], &first);
			for (size_t k = 0; whole && k < n; k++) {
				char *abs;
				if (first[k].type == EB_BASEFS_DIR || first[k].type == 0)
					continue;
				abs = eb_xasprintf("/%s", first[k].path);
				whole = in_sorted(b->files, b->nfiles, abs);
				free(abs);
			}
		}
		if (whole) {
			EB_ALLOC_GROW(d->remove, d->nremove + 1, rcap);
			d->remove[d->nremove++] = eb_xstrdup(dirs[i]);
		}
	}
	for (size_t i = 0; i < b->nfiles; i++) {
		int covered = 0;
		for (size_t k = 0; !covered && k < d->nremove; k++) {
			size_t l = strlen(d->remove[k]);
			covered = strncmp(b->files[i], d->remove[k], l) == 0 && b->files[i][l] == '/';
		}
		if (!covered) {
			EB_ALLOC_GROW(d->remove, d->nremove + 1, rcap);
			d->remove[d->nremove++] = eb_xstrdup(b->files[i]);
		}
	}
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	if (d->nremove)
		eb_sort(d->remove, d->nremove, sizeof(*d->remove), cmp_str);
}

void eb_pyenv_plan_replacements(struct eb_pyenv *e, const struct eb_basefs *fs,
				struct eb_diag_list *diags)
{
	for (size_t i = 0; i < e->n; i++) {
		struct eb_pydist *d = &e->dists[i];
		const struct eb_pybase_dist *b = base_dist(&e->target, d->name);
		int c;

		if (!b)
			continue;
		c = version_cmp(d->version, b->version);
		if (c == 0) {
			d->in_base = 1;
			eb_diag_add(diags, EB_SEV_NOTE, d->file, d->line, d->col, "EB225",
				    "%s %s is already installed in the base (%s): not installed again",
				    d->display, b->version, b->dist_info);
			continue;
		}
		d->replaces = b;
		d->downgrade = c < 0;
		if (b->files) {
			plan_removal(d, b, fs);
			eb_diag_add(diags, EB_SEV_NOTE, d->file, d->line, d->col, "EB226",
				    "%s %s %s -> %s: the base's %s is removed first (%zu path%s)",
				    c < 0 ? "downgrading" : "upgrading", d->display, b->version,
				    d->version, b->dist_info, d->nremove, d->nremove == 1 ? "" : "s");
		} else {
			eb_diag_add(diags, EB_SEV_NOTE, d->file, d->line, d->col, "EB226",
				    "%s %s %s -> %s: the base's %s has no RECORD (a distribution "
				    "package's) and stays; %s %s in %s comes first on sys.path",
				    c < 0 ? "downgrading" : "upgrading", d->display, b->version,
				    d->version, b->dist_info, d->display, d->version, e->target.purelib);
		}
	}
}

/* Does requirement rq (a Requires-Dist of d) apply: its marker holds with
 * no extra or with one of the extras asked for d.  -1 when the marker
 * cannot be evaluated (`python_version ~= "3"`): packaging raises there,
 * so pip cannot install d, and treating it as false would drop a
 * dependency silently; *err says why. */
static int applies(const struct eb_requirement *rq, const struct eb_pydist *d,
		   const struct eb_marker_env *base, struct eb_error **err)
{
	struct eb_marker_env env = *base;
	int holds = 0;

	if (!rq->marker)
		return 1;
	env.extra = "";
	if (eb_marker_eval(rq->marker, &env, &holds, err) < 0)
		return -1;
	if (holds)
		return 1;
	for (size_t i = 0; i < d->nextras; i++) {
		env.extra = d->extras[i];
		if (eb_marker_eval(rq->marker, &env, &holds, err) < 0)
			return -1;
		if (holds)
			return 1;
	}
	return 0;
}

size_t eb_pyenv_check_closure(const struct eb_pyenv *e, struct eb_diag_list *diags)
{
	struct eb_marker_env env;
	size_t nerr = 0;
	int changed = 1;

	if (!e->n)
		return 0;
	eb_marker_env_init(&env, eb_pytarget_full_version(&e->target), e->target.machine);
	/* extras a dependency is asked for (requests[socks] -> PySocks) add up
	 * until nothing changes */
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < e->n; i++) {
			const struct eb_pydist *d = &e->dists[i];
			for (size_t k = 0; k < d->md.nrequires_dist; k++) {
				const struct eb_requirement *rq = &d->md.requires_dist[k];
				struct eb_pydist *dep;
				if (!rq->norm_name || applies(rq, d, &env, NULL) <= 0)
					continue;
				dep = eb_pyinstall__find_dist(e, rq->norm_name);
				for (size_t x = 0; dep && x < rq->nextras; x++) {
					size_t before = dep->nextras;
					eb_pyinstall__add_extra(dep, rq->extras[x]);
					changed |= dep->nextras != before;
				}
			}
		}
	}
	for (size_t i = 0; i < e->n; i++) {
		const struct eb_pydist *d = &e->dists[i];
		for (size_t k = 0; k < d->md.nrequires_dist; k++) {
			const struct eb_requirement *rq = &d->md.requires_dist[k];
			const struct eb_pydist *dep;
			struct eb_error *merr = NULL;
			char *spec, *why;
			struct eb_diag *f;
			int ap;

			if (!rq->norm_name)
				continue;
			ap = applies(rq, d, &env, &merr);
			if (ap < 0) {
				f = eb_diag_add(diags, EB_SEV_ERROR, d->file, d->line, d->col, "EB224",
						"%s: the marker of Requires-Dist '%s; %s' cannot be "
						"evaluated: %s", d->filename, rq->name,
						rq->marker_text ? rq->marker_text : "", merr->msg);
				eb_diag_hint(f, "pip cannot install this wheel either; pin a version "
						"of %s whose metadata is valid", d->display);
				eb_error_free(merr);
				nerr++;
				continue;
			}
			if (!ap)
				continue;
			dep = eb_pyinstall__find_dist(e, rq->norm_name);
			spec = eb_specifier_set_to_string(&rq->specs);
			why = rq->marker_text ? eb_xasprintf(" (%s)", rq->marker_text) : eb_xstrdup("");
			if (!dep) {
				f = eb_diag_add(diags, EB_SEV_ERROR, d->file, d->line, d->col, "EB220",
						"%s==%s requires %s%s%s; %s is not pinned", d->display,
						d->version, rq->name, spec, why, rq->name);
				eb_diag_hint(f, "pin it: add %s==<a version matching '%s'> to the requirements",
					     rq->name, *spec ? spec : "any");
				nerr++;
			} else {
				struct eb_version v;
				if (eb_version_parse(&v, dep->version, strlen(dep->version), NULL) == 0) {
					if (!eb_specifier_set_contains(&rq->specs, &v, dep->version)) {
						f = eb_diag_add(diags, EB_SEV_ERROR, d->file, d->line, d->col,
								"EB221",
								"%s==%s requires %s%s%s, but %s is pinned to %s at %s:%u",
								d->display, d->version, rq->name, spec, why,
								dep->display, dep->version, dep->file, dep->line);
						eb_diag_hint(f, "pin versions that agree");
						nerr++;
					}
					eb_version_release(&v);
				}
			}
			free(spec);
			free(why);
		}
	}
	return nerr;
}

void eb_pylayers_free(struct eb_pylayer *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i].created_by);
	free(l);
}

/* The cache record of a package layer (oci/cache.h, kind "pylayers"):
 * its key -> the layer blob and its diff_id. */
static int record_read(struct eb_blobstore *bs, const char *key, struct eb_pylayer *l)
{
	json_t *j = NULL;
	const char *dg, *di;
	int ok = 0;

	if (!eb_cache_record_get(bs, "pylayers", key, &j))
		return 0;
	dg = json_string_value(json_object_get(j, "digest"));
	di = json_string_value(json_object_get(j, "diffId"));
	if (dg && di && eb_digest_valid(di)) {
		snprintf(l->digest, sizeof(l->digest), "%s", dg);
		snprintf(l->diff_id, sizeof(l->diff_id), "%s", di);
		l->size = (uint64_t)json_integer_value(json_object_get(j, "size"));
		ok = 1;
	}
	json_decref(j);
	return ok;
}

static void record_write(struct eb_blobstore *bs, const char *key, const struct eb_pylayer *l)
{
	json_t *j = json_pack("{s:s, s:s, s:I}", "digest", l->digest, "diffId", l->diff_id, "size",
			      (json_int_t)l->size);

	/* a cache: a failure to record only costs a rebuild next time */
	if (j)
		(void)eb_cache_record_put(bs, "pylayers", key, j, NULL);
	json_decref(j);
}

/* Plan one layer for the wheels g[0..n): what it will say it is, and the
 * key over every input of its bytes. */
static void plan_group(const struct eb_pyenv *e, const struct eb_pydist *const *g, size_t n,
		       const struct eb_layer_options *lo, struct eb_pylayer_plan *out)
{
	const struct eb_pytarget *t = &e->target;
	struct eb_sha256 h;
	struct eb_buf desc;

	out->dists = eb_xcalloc(n + 1, sizeof(*out->dists));
	memcpy(out->dists, g, n * sizeof(*g));
	out->n = n;
	eb_buf_init(&desc, 0);
	(void)eb_buf_adds(&desc, "envbuild: pip install");
	for (size_t i = 0; i < n; i++)
		(void)eb_buf_addf(&desc, " %s==%s", g[i]->display, g[i]->version);
	for (size_t i = 0; i < n; i++)
		if (g[i]->replaces)
			(void)eb_buf_addf(&desc, " (replaces %s %s)", g[i]->display,
					  g[i]->replaces->version);
	out->created_by = eb_buf_detach(&desc, NULL);

	/* the key: every input of the layer's bytes */
	eb_sha256_init(&h);
	{
		char *k = eb_xasprintf("pylayer %d\n%s\n%s\n%s\n%s\n%s\n%d %d %lld %u %u %d\n",
				       PYLAYER_FORMAT, t->interpreter, t->purelib, t->platlib,
				       t->scripts, t->data, lo->compression, lo->level,
				       (long long)lo->epoch, lo->uid, lo->gid, lo->keep_modes);
		eb_sha256_update(&h, k, strlen(k));
		free(k);
	}
	if (e->bytecode_id) {
		char *k = eb_xasprintf("bytecode %d %s\n", EB_BYTECODE_FORMAT, e->bytecode_id);
		eb_sha256_update(&h, k, strlen(k));
		free(k);
	}
	for (size_t i = 0; i < n; i++) {
		char *k = eb_xasprintf("%s %s %d %s\n", g[i]->digest, g[i]->filename, g[i]->direct,
				       g[i]->direct ? g[i]->url : "");
		eb_sha256_update(&h, k, strlen(k));
		free(k);
		/* the whiteouts of a replaced base distribution */
		for (size_t k2 = 0; k2 < g[i]->nremove; k2++)
			eb_sha256_update(&h, g[i]->remove[k2], strlen(g[i]->remove[k2]) + 1);
		/* the paths another wheel wins (an empty list hashes nothing:
		 * layers without overlaps keep their keys) */
		for (size_t k2 = 0; k2 < g[i]->nskip; k2++) {
			eb_sha256_update(&h, "-", 1);
			eb_sha256_update(&h, g[i]->skip[k2], strlen(g[i]->skip[k2]) + 1);
		}
		eb_sha256_update(&h, "\n", 1);
	}
	eb_sha256_final(&h, out->key);
}

/* Whiteouts for d's removals that the layer does not write itself: an
 * OCI whiteout only hides lower layers, but a reader that applies entries
 * in order could remove the new file of the same layer, so a path the new
 * wheels write (or a directory they write into) is left to be replaced. */
static int add_whiteouts(struct eb_layer_builder *b, const struct eb_pydist *d,
			 char *const *written, size_t nwritten, struct eb_error **err)
{
	for (size_t i = 0; i < d->nremove; i++) {
		const char *p = d->remove[i];
		const char *slash = strrchr(p, '/');
		size_t l = strlen(p);
		char *key = eb_xasprintf("%s/", p), *wh;
		char *const *hit;
		size_t lo = 0, hi = nwritten;
		int r, inside = 0;

		if (in_sorted(written, nwritten, p)) {
			free(key);
			continue;
		}
		/* any written path below p: the first >= "p/" starts with it */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(written[mid], key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		hit = lo < nwritten ? &written[lo] : NULL;
		inside = hit && strncmp(*hit, p, l) == 0 && (*hit)[l] == '/';
		free(key);
		if (inside) {
			/* a directory the new version writes into: its old
			 * files go one by one */
			for (size_t k = 0; k < d->replaces->nfiles; k++) {
				const char *f = d->replaces->files[k];
				const char *fs = strrchr(f, '/');
				if (strncmp(f, p, l) != 0 || f[l] != '/' || in_sorted(written, nwritten, f))
					continue;
				wh = eb_xasprintf("%.*s/.wh.%s", (int)(fs - f), f, fs + 1);
				r = eb_layer_add_bytes(b, wh, "", 0, 0644, err);
				free(wh);
				if (r < 0)
					return r;
			}
			continue;
		}
		wh = eb_xasprintf("%.*s/.wh.%s", (int)(slash - p), p, slash + 1);
		r = eb_layer_add_bytes(b, wh, "", 0, 0644, err);
		free(wh);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The wheel installer's bytecode hook: the compiler, and the pin whose
 * wheel it is (where a file that does not compile is reported). */
struct pyc_hook {
	struct eb_bytecode *bc;
	const struct eb_pydist *d;
};

static int wheel_bytecode(void *ud, const char *const *dests, const char *const *srcs, size_t n,
			  struct eb_wheel_pyc **out, size_t *nout, struct eb_error **err)
{
	struct pyc_hook *h = ud;
	struct eb_bytecode_src *in = eb_xcalloc(n + 1, sizeof(*in));
	struct eb_bytecode_pyc *pycs = NULL;
	size_t np = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		in[i].dest = dests[i];
		in[i].path = srcs[i];
		in[i].mtime = -1;
	}
	r = eb_bytecode_compile(h->bc, in, n, h->d->file, h->d->line, h->d->col, &pycs, &np, err);
	free(in);
	*out = NULL;
	*nout = 0;
	if (r < 0)
		return r;
	*out = eb_xcalloc(np + 1, sizeof(**out));
	for (size_t i = 0; i < np; i++) {
		(*out)[i].dest = eb_steal_ptr(&pycs[i].dest);
		(*out)[i].path = eb_steal_ptr(&pycs[i].path);
		eb_digest_raw(pycs[i].digest, (*out)[i].sha256);
		(*out)[i].size = pycs[i].len;
	}
	*nout = np;
	eb_bytecode_pycs_free(pycs, np);
	return 0;
}

int eb_pyenv_write_layer(const struct eb_pyenv *e, const struct eb_pylayer_plan *p,
			 struct eb_blobstore *bs, const struct eb_layer_options *lo,
			 struct eb_pylayer *out, struct eb_error **err)
{
	const struct eb_pytarget *t = &e->target;
	const struct eb_pydist *const *g = p->dists;
	size_t n = p->n;
	char *staging = NULL;
	int staging_lock = -1;
	struct eb_layer_builder *b = NULL;
	struct eb_layer_result res;
	char **written = NULL;
	size_t nwritten = 0, wcap = 0;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->created_by = eb_xstrdup(p->created_by);
	if (record_read(bs, p->key, out)) {
		out->cached = 1;
		return 0;
	}

	/* locked while it lives: another build's sweep leaves it alone, and
	 * removes it if this process is killed */
	if ((r = eb_blobstore_mkdtemp(bs, "pystage-", &staging, &staging_lock, err)) < 0)
		goto done;
	eb_interrupt_register(staging, 1);
	b = eb_layer_builder_new();
	for (size_t i = 0; i < n; i++) {
		struct eb_wheel_scheme sc = { 0 };
		struct eb_wheel_options wo = EB_WHEEL_OPTIONS_INIT;
		struct eb_wheel_result wr = { 0 };
		struct pyc_hook hook;
		char *path = eb_blobstore_path(bs, g[i]->digest);
		char *headers = eb_xasprintf("%s/%s", t->include, g[i]->display);

		sc.purelib = t->purelib;
		sc.platlib = t->platlib;
		sc.scripts = t->scripts;
		sc.data = t->data;
		sc.headers = headers;
		sc.interpreter = t->interpreter;
		wo.staging_dir = staging;
		wo.filename = g[i]->filename;
		wo.direct_url = g[i]->direct ? g[i]->url : NULL;
		wo.requested = 1;
		wo.skip = g[i]->skip;
		wo.nskip = g[i]->nskip;
		hook.bc = e->bytecode;
		hook.d = g[i];
		if (e->bytecode) {
			wo.bytecode = wheel_bytecode;
			wo.bytecode_ud = &hook;
		}
		r = eb_wheel_install(b, path, &sc, &wo, &wr, err);
		if (r < 0)
			eb_error_locate(err, g[i]->file, g[i]->line, g[i]->col);
		for (size_t k = 0; r == 0 && k < wr.npaths; k++) {
			EB_ALLOC_GROW(written, nwritten + 1, wcap);
			written[nwritten++] = eb_steal_ptr(&wr.paths[k]);
		}
		eb_wheel_result_release(&wr);
		free(headers);
		free(path);
		if (r < 0)
			goto done;
	}
	if (nwritten)
		eb_sort(written, nwritten, sizeof(*written), cmp_str);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = add_whiteouts(b, g[i], written, nwritten, err);
	if (r < 0 || (r = eb_layer_write(b, lo, bs, &res, err)) < 0)
		goto done;
	memcpy(out->digest, res.digest, sizeof(out->digest));
	memcpy(out->diff_id, res.diff_id, sizeof(out->diff_id));
	out->size = res.size;
	record_write(bs, p->key, out);
done:
	for (size_t i = 0; i < nwritten; i++)
		free(written[i]);
	free(written);
	eb_layer_builder_free(b);
	if (staging) {
		eb_fs_remove_tree(staging, NULL);
		eb_interrupt_unregister(staging);
		free(staging);
	}
	if (staging_lock >= 0)
		close(staging_lock);
	return r;
}

void eb_pyenv_plan_layers(const struct eb_pyenv *e, const struct eb_layer_options *lo,
			  uint64_t large_bytes, struct eb_pylayer_plan **out, size_t *n)
{
	const struct eb_pydist **small = eb_xcalloc(e->n + 1, sizeof(*small));
	struct eb_pylayer_plan *ps = eb_xcalloc(e->n + 1, sizeof(*ps));
	size_t nsmall = 0, np = 0;

	for (size_t i = 0; i < e->n; i++) {
		const struct eb_pydist *d = &e->dists[i];
		if (d->in_base)
			continue;
		if ((uint64_t)d->size >= large_bytes)
			plan_group(e, &d, 1, lo, &ps[np++]);
		else
			small[nsmall++] = d;
	}
	if (nsmall)
		plan_group(e, small, nsmall, lo, &ps[np++]);
	free(small);
	*out = ps;
	*n = np;
}

void eb_pylayer_plans_free(struct eb_pylayer_plan *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].dists);
		free(p[i].created_by);
	}
	free(p);
}
