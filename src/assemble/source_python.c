/*
 * source_python.c - the Python layer source: a target's pinned
 * requirements resolved against its base (the interpreter and C library
 * read from the base's layers), the closure checked, and the wheels
 * installed as layers (assemble/pyinstall.c): large wheels one layer each,
 * the small ones grouped.  The package index set is made on first use:
 * only targets with requirements need it.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/bcsibling.h"
#include "assemble/build.h"
#include "assemble/progress.h"
#include "assemble/bytecode.h"
#include "assemble/pyinstall.h"
#include "assemble/source.h"
#include "registry/client.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/pool.h"

struct python {
	struct eb_pyindex_set *idx;
};

struct python_plan {
	const char *target; /* borrowed from the spec */
	struct eb_pyenv env;
	struct eb_pylayer_plan *layers;
	size_t n;
	struct eb_bytecode *bc; /* NULL: no bytecode */
};

/* Bytecode for the target's wheels, compiled by the base's interpreter:
 * on, unless the spec says `bytecode: false`.  A platform this machine
 * cannot run is compiled by the same Python of another platform of the
 * base (assemble/bcsibling.h); without one it gets a warning and none
 * (EB241). */
static int plan_bytecode(const struct eb_source_ctx *c, const struct eb_spec_target *t,
			 const char *platform, const struct eb_source_base *base,
			 struct python_plan *pp, struct eb_error **err)
{
	struct eb_bytecode_ident id;
	const char *host = eb_bytecode_host_platform();
	const char *interp = pp->env.target.interpreter;
	size_t todo = 0;
	char *what;
	int r;

	for (size_t i = 0; i < pp->env.n; i++)
		todo += !pp->env.dists[i].in_base;
	if (!todo || !t->bytecode || !base->present)
		return 0;
	what = eb_xasprintf("target '%s' (%s)", t->name, platform);
	if (!host || strcmp(host, platform) != 0) {
		struct eb_bcsibling sib;
		struct eb_diag *d;

		r = eb_bcsibling_find(c, t, platform, base, interp, what, &sib, err);
		free(what);
		if (r < 0) {
			eb_error_locate(err, c->spec->path, t->pos.line, t->pos.col);
			return r;
		}
		if (r == 0) {
			d = eb_diag_add(c->diags, EB_SEV_WARNING, c->spec->path, t->pos.line,
					t->pos.col, "EB241",
					"target '%s' (%s): no bytecode for its wheels: this machine (%s) "
					"cannot run the base's %s, and no platform of the base it can run "
					"has the same Python: %s",
					t->name, platform, host ? host : "unknown", interp, sib.why);
			eb_diag_hint(d, "Python compiles the modules at every start; a base with a %s "
					"image of the same Python, or a build on a %s machine, gives them "
					"bytecode; `bytecode: false` silences this",
				     host ? host : "runnable", platform);
			eb_bcsibling_release(&sib);
			return 0;
		}
		d = eb_diag_add(c->diags, EB_SEV_NOTE, c->spec->path, t->pos.line, t->pos.col,
				"EB243",
				"target '%s' (%s): bytecode for its wheels compiled by the base's %s %s "
				"(%s, the same as the %s image's: %s)",
				t->name, platform, sib.platform, eb_path_basename(interp),
				sib.id.version, platform, sib.compared);
		eb_diag_hint(d, "bytecode depends on the Python version, not the machine");
		pp->bc = eb_steal_ptr(&sib.bc);
		eb_bytecode_set_jobs(pp->bc, c->o->jobs);
		pp->env.bytecode = pp->bc;
		pp->env.bytecode_id = eb_xasprintf("%s %s %s by %s %s", sib.id.magic, sib.id.tag,
						   sib.id.version, sib.platform, sib.manifest);
		eb_bcsibling_release(&sib);
		return 0;
	}
	r = eb_bytecode_new(&pp->bc, c->bs, base->layers, base->diff_ids, base->nlayers, interp,
			    c->o->layer.epoch, what, c->diags, err);
	free(what);
	if (r == 0)
		r = eb_bytecode_ident(pp->bc, &id, err);
	if (r < 0) {
		eb_error_locate(err, c->spec->path, t->pos.line, t->pos.col);
		return r;
	}
	eb_bytecode_set_jobs(pp->bc, c->o->jobs);
	pp->env.bytecode = pp->bc;
	pp->env.bytecode_id = eb_xasprintf("%s %s %s", id.magic, id.tag, id.version);
	return 0;
}

static int python_start(struct eb_source *s, struct eb_error **err)
{
	(void)err;
	s->state = eb_xcalloc(1, sizeof(struct python));
	return 0;
}

static int python_needs_base(const struct eb_spec_target *t)
{
	return t->requirements.n > 0 || t->packages.n > 0;
}

static int python_plan(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
		       const struct eb_source_base *base, struct eb_source_plan *plan,
		       struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	struct python *py = s->state;
	struct python_plan *pp;
	size_t nerr;
	int r = 0;

	if (!python_needs_base(t))
		return 0;
	pp = eb_xcalloc(1, sizeof(*pp));
	pp->target = t->name;
	plan->state = pp;
	if (!py->idx)
		r = eb_pyenv_indexes(&py->idx, c->spec,
				     c->o->registry ? eb_registry_http(c->o->registry) : NULL, err);
	if (r == 0)
		r = eb_pyenv_resolve_fs(&pp->env, c->spec, t, platform, base->layers, base->diff_ids,
					base->present ? base->fs : NULL, base->present ? base->nlayers : 0,
					py->idx, c->bs, 0, c->o->lock, c->o->frozen, base->builder,
					c->diags, err);
	if (r < 0)
		return r;
	nerr = eb_pyenv_check_closure(&pp->env, c->diags);
	if (nerr)
		return eb_error_set(err, EB_EINVALID,
				    "target '%s': %zu requirement%s of pinned packages %s not pinned "
				    "or conflict%s; nothing was built",
				    t->name, nerr, nerr == 1 ? "" : "s", nerr == 1 ? "is" : "are",
				    nerr == 1 ? "s" : "");
	/* what the base already has: kept, or removed before the new version */
	eb_pyenv_plan_replacements(&pp->env, base->fs, c->diags);
	/* two wheels writing one path: one winner, the others leave it out */
	if ((r = eb_pyenv_plan_overlaps(&pp->env, c->bs, c->diags, err)) < 0)
		return r;
	if ((r = plan_bytecode(c, t, platform, base, pp, err)) < 0)
		return r;
	eb_pyenv_plan_layers(&pp->env, &c->o->layer, (uint64_t)c->spec->large_package_mb << 20,
			     &pp->layers, &pp->n);
	plan->layers = eb_xcalloc(pp->n + 1, sizeof(*plan->layers));
	for (size_t i = 0; i < pp->n; i++) {
		memcpy(plan->layers[i].key, pp->layers[i].key, sizeof(plan->layers[i].key));
		plan->layers[i].created_by = pp->layers[i].created_by;
	}
	plan->n = pp->n;
	return 0;
}

/* The layers at once, the biggest first: one layer's wheels are extracted
 * and compiled on one thread (its deflate on all of them), and a
 * torch-sized wheel's compile is the long pole, so it starts first while
 * the other threads take the small layers. */
struct py_layer_job {
	struct eb_pylayer l;
	int r;
	struct eb_error *err;
};

struct py_layers {
	const struct eb_source_ctx *c;
	struct python_plan *pp;
	size_t *order; /* layer indexes, the biggest first */
	struct py_layer_job *jobs;
	size_t n, next;
	int failed;
	pthread_mutex_t mu;
};

static void *py_layer_worker(void *arg)
{
	struct py_layers *w = arg;

	for (;;) {
		struct eb_layer_options lo = w->c->o->layer;
		struct eb_layer_step step;
		struct py_layer_job *j;
		size_t i;

		pthread_mutex_lock(&w->mu);
		i = w->next < w->n && !w->failed ? w->order[w->next++] : w->n;
		pthread_mutex_unlock(&w->mu);
		if (i == w->n)
			return NULL;
		j = &w->jobs[i];
		eb_layer_step_begin(&step, w->c->o->progress, w->pp->target,
				    w->pp->layers[i].created_by, &lo);
		j->r = eb_pyenv_write_layer(&w->pp->env, &w->pp->layers[i], w->c->bs, &lo, &j->l,
					    &j->err);
		eb_layer_step_end(&step);
		if (j->r < 0) {
			/* the others stop at their next layer; a layer being
			 * written ends on its own */
			pthread_mutex_lock(&w->mu);
			w->failed = 1;
			pthread_mutex_unlock(&w->mu);
		}
	}
}

static uint64_t layer_bytes(const struct eb_pylayer_plan *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->dists[i]->size > 0 ? (uint64_t)p->dists[i]->size : 0;
	return n;
}

static int python_write(struct eb_source *s, struct eb_source_plan *plan,
			struct eb_build_layer *out, struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	struct python_plan *pp = plan->state;
	struct py_layers w = { c, pp, NULL, NULL, plan->n, 0, 0, PTHREAD_MUTEX_INITIALIZER };
	int r = 0;

	if (!plan->n)
		return 0;
	uint64_t *bytes = eb_xcalloc(plan->n, sizeof(*bytes));

	w.order = eb_xcalloc(plan->n, sizeof(*w.order));
	w.jobs = eb_xcalloc(plan->n, sizeof(*w.jobs));
	for (size_t i = 0; i < plan->n; i++) {
		size_t k = i;

		bytes[i] = layer_bytes(&pp->layers[i]);
		/* insertion by size, descending; equal sizes keep layer order */
		while (k > 0 && bytes[w.order[k - 1]] < bytes[i]) {
			w.order[k] = w.order[k - 1];
			k--;
		}
		w.order[k] = i;
	}
	free(bytes);
	eb_pool_run(eb_pool_threads(c->o->jobs, plan->n), py_layer_worker, &w);
	for (size_t i = 0; i < plan->n; i++) {
		struct py_layer_job *j = &w.jobs[i];

		if (r == 0 && j->r < 0) {
			/* the first in layer order (an interrupt is every
			 * layer's error: it is named once) */
			r = j->r;
			*err = j->err;
			j->err = NULL;
		}
		if (r == 0 && j->r == 0) {
			memcpy(out[i].digest, j->l.digest, sizeof(out[i].digest));
			memcpy(out[i].diff_id, j->l.diff_id, sizeof(out[i].diff_id));
			out[i].size = j->l.size;
			out[i].reused = j->l.cached;
			out[i].created_by = eb_steal_ptr(&j->l.created_by);
		}
		free(j->l.created_by);
		eb_error_free(j->err);
	}
	if (r < 0)
		for (size_t i = 0; i < plan->n; i++) {
			free(out[i].created_by);
			memset(&out[i], 0, sizeof(out[i]));
		}
	free(w.order);
	free(w.jobs);
	return r;
}

/* The wheels, for the lock's packages. */
static void python_report(struct eb_source *s, const struct eb_source_plan *plan,
			  struct eb_build_platform *bp)
{
	const struct python_plan *pp = plan->state;

	(void)s;
	if (!pp)
		return;
	if (pp->bc) {
		struct eb_bytecode_stats st;

		eb_bytecode_stats(pp->bc, &st);
		bp->pyc_compiled += st.compiled;
		bp->pyc_reused += st.reused;
	}
	bp->packages = eb_xcalloc(pp->env.n + 1, sizeof(*bp->packages));
	if (pp->env.target.python_version)
		bp->python = eb_xstrdup(pp->env.target.python_version);
	for (size_t i = 0; i < pp->env.n; i++) {
		const struct eb_pydist *d = &pp->env.dists[i];
		struct eb_build_package *p = &bp->packages[bp->npackages++];
		p->name = eb_xstrdup(d->name);
		p->version = eb_xstrdup(d->version);
		p->filename = eb_xstrdup(d->filename);
		p->url = eb_xstrdup(d->url);
		snprintf(p->sha256, sizeof(p->sha256), "%s", d->digest);
		p->size = d->size;
		p->in_base = d->in_base;
		if (d->replaces)
			p->replaces = eb_xstrdup(d->replaces->version);
		if (d->sdist_url) {
			p->sdist_filename = eb_xstrdup(d->sdist_filename);
			p->sdist_url = eb_xstrdup(d->sdist_url);
			snprintf(p->sdist_sha256, sizeof(p->sdist_sha256), "%s", d->sdist_digest);
			p->sdist_size = d->sdist_size;
		}
	}
}

static void python_plan_release(struct eb_source_plan *plan)
{
	struct python_plan *pp = plan->state;

	if (pp) {
		eb_pylayer_plans_free(pp->layers, pp->n);
		eb_pyenv_release(&pp->env);
		eb_bytecode_free(pp->bc);
		free(pp);
	}
	free(plan->layers);
	memset(plan, 0, sizeof(*plan));
}

static void python_finish(struct eb_source *s)
{
	struct python *py = s->state;

	if (!py)
		return;
	eb_pyenv_indexes_free(py->idx);
	free(py);
	s->state = NULL;
}

const struct eb_source_ops eb_source_python = {
	.name = "python",
	.start = python_start,
	.needs_base = python_needs_base,
	.plan = python_plan,
	.write = python_write,
	.report = python_report,
	.plan_release = python_plan_release,
	.finish = python_finish,
};
