/*
 * source_debian.c - the Debian-packages layer source: a target's `apt:`
 * pins, resolved (or taken from the lock) against its verified apt sources
 * and the base's dpkg status, installed below the Python layers as package
 * layers (large packages alone, the others in name-hash buckets) and a
 * dpkg database layer on top (src/debian/apt.h does the work; this file is
 * the seam).  The blob store is the debian modules' cache too: the base's
 * scan and each .deb's derived data are kept there.
 *
 * Needs the seams interface (assemble/source.h) and one field the lock reads:
 * struct eb_build_platform gets `void *apt;` (a json_t * reference, the
 * lock's targets.<t>.apt record for this platform, freed with the
 * platform), and eb_lock_record_build() merges it with eb_apt_lock_merge().
 * In eb_sources[] (source.c) it goes first: system packages change least.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assemble/build.h"
#include "assemble/bytecode.h"
#include "assemble/progress.h"
#include "assemble/replay.h"
#include "assemble/source.h"
#include "debian/apt.h"
#include "oci/cache.h"
#include "oci/layer.h"
#include "registry/client.h"
#include "net/http.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/interrupt.h"
#include "util/pool.h"

struct debian {
	struct eb_http_client *own_http; /* when the build has no registry client */
};

struct debian_plan {
	struct eb_apt_plan apt;
	const char *target; /* borrowed from the spec, for progress */
	/* the replay layer (assemble/replay.h) goes on top of the apt plan's
	 * layers: its inputs, borrowed from the build for the plan's life */
	const char *const *base_layers, *const *base_diff_ids;
	size_t nbase;
	int bytecode;
	int foreign; /* a platform this machine cannot run: no replay */
	char *what;
	struct eb_replay_report replay;
};

static int debian_start(struct eb_source *s, struct eb_error **err)
{
	(void)err;
	s->state = eb_xcalloc(1, sizeof(struct debian));
	return 0;
}

static int debian_needs_base(const struct eb_spec_target *t)
{
	return t->apt.n > 0; /* the base's dpkg status and directory links */
}

static struct eb_http_client *http_of(struct eb_source *s, struct eb_error **err)
{
	struct debian *d = s->state;

	if (s->ctx->o->registry)
		return eb_registry_http(s->ctx->o->registry);
	if (!d->own_http && eb_http_client_new(&d->own_http, NULL, err) < 0)
		return NULL;
	return d->own_http;
}

static int debian_plan(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
		       const struct eb_source_base *base, struct eb_source_plan *plan,
		       struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	const json_t *lock = c->o->lock;
	const json_t *locked = json_object_get(
		json_object_get(json_object_get(lock, "targets"), t->name), "apt");
	struct eb_http_client *http;
	struct debian_plan *dp;
	const char *host;
	int r;

	if (!t->apt.n)
		return 0;
	http = c->o->frozen && locked ? NULL : http_of(s, err);
	if (!http && !(c->o->frozen && locked))
		return -EB_EFAIL;
	dp = eb_xcalloc(1, sizeof(*dp));
	dp->target = t->name;
	plan->state = dp;
	/* a .deb of large_package_mb or more gets a layer of its own, so a
	 * package two targets pin is one shared blob */
	r = eb_apt_plan_cached(&dp->apt, c->spec, t, platform, base->layers,
			       base->present ? base->nlayers : 0, base->present ? base->fs : NULL,
			       locked, c->o->frozen,
			       (uint64_t)c->spec->large_package_mb << 20, http, c->bs, time(NULL),
			       err);
	if (r < 0)
		return eb_error_wrap(err, "target '%s' (%s): apt", t->name, platform);
	dp->base_layers = base->layers;
	dp->base_diff_ids = base->diff_ids;
	dp->nbase = base->present ? base->nlayers : 0;
	dp->bytecode = t->bytecode;
	host = eb_bytecode_host_platform();
	dp->foreign = !host || strcmp(host, platform) != 0;
	dp->what = eb_xasprintf("target '%s' (%s)", t->name, platform);
	plan->layers = eb_xcalloc(dp->apt.nlayers + 2, sizeof(*plan->layers));
	for (size_t i = 0; i < dp->apt.nlayers; i++) {
		memcpy(plan->layers[i].key, dp->apt.layers[i].key, sizeof(plan->layers[i].key));
		plan->layers[i].created_by = dp->apt.layers[i].created_by;
	}
	plan->n = dp->apt.nlayers;
	if (plan->n) {
		/* the replay layer: over the same inputs (left out when there
		 * is nothing to replay) */
		struct eb_sha256 h;

		eb_sha256_init(&h);
		eb_sha256_update(&h, "replay\n", 7);
		for (size_t i = 0; i < plan->n; i++)
			eb_sha256_update(&h, plan->layers[i].key, strlen(plan->layers[i].key));
		eb_sha256_update(&h, dp->bytecode ? "1" : "0", 1);
		eb_sha256_final(&h, plan->layers[plan->n].key);
		plan->layers[plan->n].created_by = "envbuild: replay";
		plan->n++;
	}
	return 0;
}

/* The layer cache's key of plan layer i: the plan's key (every input of
 * the packages' bytes) and the layer writer's options. */
static void record_key(const struct eb_source_plan *plan, const struct eb_layer_options *o,
		       size_t i, char key[EB_DIGEST_STR_LEN + 1])
{
	char *k = eb_xasprintf("debian layer record 1\n%s\n%d %d %lld %u %u %d\n",
			       plan->layers[i].key, o->compression, o->level, (long long)o->epoch,
			       o->uid, o->gid, o->keep_modes);
	eb_sha256_digest(k, strlen(k), key);
	free(k);
}

/* The plan's layers that the layer cache ("deblayers" records) has: out[i]
 * filled and hit[i] set for each.  When all hit, no .deb is read or
 * fetched at all, and the top record's list of packages whose postinst
 * was not run goes into rep, so a cached build warns as a cold one does.
 * Returns the number of hits. */
static size_t from_records(const struct eb_source_ctx *c, const struct eb_source_plan *plan,
			   const struct eb_layer_options *o, struct eb_build_layer *out, int *hit,
			   struct eb_deb_report *rep)
{
	struct debian_plan *dp = plan->state;
	json_t *top = NULL;
	size_t nhit = 0, napt = dp->apt.nlayers;

	for (size_t i = 0; i < napt; i++) {
		char key[EB_DIGEST_STR_LEN + 1];
		const char *dg, *di;
		json_t *rec = NULL;

		hit[i] = 0;
		record_key(plan, o, i, key);
		if (eb_cache_record_get(c->bs, "deblayers", key, &rec) != 1)
			continue;
		dg = json_string_value(json_object_get(rec, "digest"));
		di = json_string_value(json_object_get(rec, "diffId"));
		if (dg && di && eb_digest_valid(dg) && eb_digest_valid(di)) {
			snprintf(out[i].digest, sizeof(out[i].digest), "%s", dg);
			snprintf(out[i].diff_id, sizeof(out[i].diff_id), "%s", di);
			out[i].size = (uint64_t)json_integer_value(json_object_get(rec, "size"));
			out[i].reused = 1;
			out[i].created_by = eb_xstrdup(dp->apt.layers[i].created_by);
			hit[i] = 1;
			nhit++;
		}
		if (hit[i] && i + 1 == napt)
			top = json_incref(rec);
		json_decref(rec);
	}
	if (nhit == napt && top) {
		const json_t *pi = json_object_get(top, "postinst");
		const json_t *does = json_object_get(top, "postinstDoes");
		for (size_t k = 0; k < json_array_size(pi); k++) {
			const char *name = json_string_value(json_array_get(pi, k));
			const char *what = json_string_value(json_array_get(does, k));
			if (!name)
				continue;
			rep->postinst = eb_xreallocarray(rep->postinst, rep->npostinst + 1,
							 sizeof(char *));
			rep->postinst_does = eb_xreallocarray(rep->postinst_does, rep->npostinst + 1,
							      sizeof(char *));
			rep->postinst_does[rep->npostinst] = eb_xstrdup(what ? what : "");
			rep->postinst[rep->npostinst++] = eb_xstrdup(name);
		}
	}
	json_decref(top);
	return nhit;
}

static void put_record(const struct eb_source_ctx *c, const struct eb_source_plan *plan,
		       const struct eb_layer_options *o, size_t i, const struct eb_layer_result *res,
		       const struct eb_deb_report *rep)
{
	char key[EB_DIGEST_STR_LEN + 1];
	json_t *j = json_pack("{s:s, s:s, s:I}", "digest", res->digest, "diffId", res->diff_id,
			      "size", (json_int_t)res->size);

	if (rep) {
		json_t *pi = json_array(), *does = json_array();
		for (size_t k = 0; k < rep->npostinst; k++) {
			json_array_append_new(pi, json_string(rep->postinst[k]));
			json_array_append_new(does, json_string(rep->postinst_does ?
								rep->postinst_does[k] : ""));
		}
		json_object_set_new(j, "postinst", pi);
		json_object_set_new(j, "postinstDoes", does);
	}
	record_key(plan, o, i, key);
	(void)eb_cache_record_put(c->bs, "deblayers", key, j, NULL);
	json_decref(j);
}

/* Whether the replay layer did what name's postinst does: py3compile for
 * Python packages, update-ca-certificates for ca-certificates, ldconfig
 * for libc-bin. */
static int replayed(const struct eb_replay_report *rp, const char *name)
{
	if (rp->py3compile && (strncmp(name, "python3", 7) == 0 || strncmp(name, "libpython3", 10) == 0))
		return 1;
	if (rp->ca_certificates && strcmp(name, "ca-certificates") == 0)
		return 1;
	return rp->ldconfig && strcmp(name, "libc-bin") == 0;
}

/* The effect command w of a postinst stands for in EB235 ("-": any
 * other). */
static const char *effect_of(const char *w)
{
	const char *e = strcmp(w, "-") ? eb_deb_postinst_effect(w) : NULL;
	return e ? e : "run other commands";
}

/* Whether package i of rep wants effect e. */
static int wants(const struct eb_deb_report *rep, size_t i, const char *e)
{
	char *cmds = eb_xstrdup(rep->postinst_does && rep->postinst_does[i][0] ?
					rep->postinst_does[i] : "-");
	char *save = NULL;
	int has = 0;

	for (char *w = strtok_r(cmds, " ", &save); w && !has; w = strtok_r(NULL, " ", &save))
		has = strcmp(effect_of(w), e) == 0;
	free(cmds);
	return has;
}

/* EB235, once per target: what the postinst scripts not run would have
 * done, each effect with (up to three of) the packages that wanted it:
 * "refresh ld.so.cache (libc-bin, libgcc-s1)", other commands last. */
static void warn_postinst(const struct eb_source_ctx *c, const char *target,
			  const struct eb_deb_report *rep, const struct eb_replay_report *rp)
{
	const char **effects;
	struct eb_buf msg, pk;
	struct eb_diag *d;
	size_t neff = 0, nleft = 0;
	int other = 0;

	for (size_t i = 0; i < rep->npostinst; i++)
		if (!replayed(rp, rep->postinst[i]))
			nleft++;
	if (!nleft)
		return;
	effects = eb_xcalloc(rep->npostinst * 8 + 2, sizeof(*effects));
	eb_buf_init(&msg, 0);
	eb_buf_init(&pk, 0);
	for (size_t i = 0; i < rep->npostinst; i++) {
		if (replayed(rp, rep->postinst[i]))
			continue;
		char *cmds = eb_xstrdup(rep->postinst_does && rep->postinst_does[i][0] ?
						rep->postinst_does[i] : "-");
		char *save = NULL;
		for (char *w = strtok_r(cmds, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			const char *e = effect_of(w);
			size_t k;
			if (!strcmp(w, "-") || !eb_deb_postinst_effect(w)) {
				other = 1;
				continue;
			}
			for (k = 0; k < neff && strcmp(effects[k], e) != 0; k++)
				;
			if (k == neff && neff < rep->npostinst * 8)
				effects[neff++] = e;
		}
		free(cmds);
	}
	if (other)
		effects[neff++] = "run other commands";
	for (size_t k = 0; k < neff; k++) {
		size_t npk = 0;
		eb_buf_truncate(&pk, 0);
		for (size_t i = 0; i < rep->npostinst; i++)
			if (!replayed(rp, rep->postinst[i]) && wants(rep, i, effects[k]) && npk++ < 3)
				(void)eb_buf_addf(&pk, "%s%s", npk > 1 ? ", " : "", rep->postinst[i]);
		if (npk > 3)
			(void)eb_buf_addf(&pk, " and %zu more", npk - 3);
		(void)eb_buf_addf(&msg, "%s%s (%s)", k ? "; " : "", effects[k], pk.ptr);
	}
	d = eb_diag_add(c->diags, EB_SEV_WARNING, c->spec->path, 0, 0, "EB235",
			"the maintainer scripts of %zu package%s were not run; they would %s",
			nleft, nleft == 1 ? "" : "s", msg.ptr);
	eb_diag_target(d, target);
	eb_diag_hint(d, "envbuild writes the files, the dpkg database and the default "
		     "update-alternatives links, and replays py3compile, ldconfig and "
		     "update-ca-certificates; anything else a postinst does is missing "
		     "from the image: if the image needs it, add its result with a files: entry");
	free(effects);
	eb_buf_release(&msg);
	eb_buf_release(&pk);
}

/* The replay layer on top of the written package layers out[0..napt). */
static int write_replay(const struct eb_source_ctx *c, struct debian_plan *dp,
			const struct eb_layer_options *o, struct eb_build_layer *out, size_t napt,
			struct eb_error **err)
{
	if (dp->foreign) {
		const char *host = eb_bytecode_host_platform();
		/* the replay runs the image's own py3compile, ldconfig and
		 * update-ca-certificates, which this machine cannot execute
		 * (no emulation): said, never skipped silently; EB235 then
		 * names the packages whose scripts they stand for */
		struct eb_diag *d = eb_diag_add(
			c->diags, EB_SEV_WARNING, c->spec->path, 0, 0, "EB244",
			"%s: the maintainer-script replay (py3compile, ldconfig, update-ca-certificates) "
			"needs the image's own programs, which this machine (%s) cannot run",
			dp->what, host ? host : "unknown");
		eb_diag_target(d, dp->target);
		eb_diag_hint(d, "build this platform on a machine of its own for the replay layer");
		return 0;
	}
	return eb_replay_write(c->bs, dp->base_layers, dp->base_diff_ids, dp->nbase, out, napt, o,
			       dp->bytecode, dp->what, c->spec->path, c->diags, &out[napt],
			       &dp->replay, err);
}

/* The package layers of one target written on a thread pool
 * (--jobs, else one per core); each job's result and error are its own. */
struct apt_layer_job {
	struct eb_layer_result res;
	struct eb_error *err;
	int r;
};

struct apt_layers {
	const struct eb_source_ctx *c;
	const struct debian_plan *dp;
	struct eb_layer_builder **b;
	const struct eb_layer_options *o;
	struct apt_layer_job *jobs;
	size_t n, next;
	pthread_mutex_t mu;
};

static void *layer_worker(void *arg)
{
	struct apt_layers *w = arg;

	for (;;) {
		struct eb_layer_options lo = *w->o;
		struct eb_layer_step step;
		size_t i;

		pthread_mutex_lock(&w->mu);
		while (w->next < w->n && !w->b[w->next])
			w->next++; /* from the cache: nothing to write */
		i = w->next < w->n ? w->next++ : w->n;
		pthread_mutex_unlock(&w->mu);
		if (i == w->n)
			return NULL;
		eb_layer_step_begin(&step, w->c->o->progress, w->dp->target,
				    w->dp->apt.layers[i].created_by, &lo);
		w->jobs[i].r = eb_layer_write_cached(w->b[i], &lo, w->c->bs, &w->jobs[i].res, NULL,
						     &w->jobs[i].err);
		eb_layer_step_end(&step);
	}
}

static int debian_write(struct eb_source *s, struct eb_source_plan *plan,
			struct eb_build_layer *out, struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	struct debian_plan *dp = plan->state;
	struct eb_layer_builder **b = NULL;
	struct eb_layer_options o = c->o->layer;
	struct eb_deb_report rep;
	char *stage = NULL;
	struct eb_http_client *http;
	int *hit = NULL;
	size_t napt;
	int r;

	memset(&rep, 0, sizeof(rep));
	/* the packages' own modes (setuid, 0700 dirs), owned by root */
	o.keep_modes = 1;
	o.uid = o.gid = 0;
	if (!dp || !plan->n)
		return 0; /* no apt: pins in this target */
	napt = dp->apt.nlayers;
	b = eb_xcalloc(napt + 1, sizeof(*b));
	hit = eb_xcalloc(napt + 1, sizeof(*hit));
	if (from_records(c, plan, &o, out, hit, &rep) == napt) {
		r = write_replay(c, dp, &o, out, napt, err);
		goto done;
	}
	/* the top layer (dpkg status, alternatives) is written whenever
	 * anything is; a package layer the cache has gets no builder: its
	 * .deb is not even read when its debinfo record is there */
	if (hit[napt - 1]) {
		free(out[napt - 1].created_by);
		memset(&out[napt - 1], 0, sizeof(out[napt - 1]));
		hit[napt - 1] = 0;
	}
	for (size_t i = 0; i < napt; i++)
		b[i] = hit[i] ? NULL : eb_layer_builder_new();
	stage = eb_xasprintf("%s/tmp/debian.XXXXXX", eb_blobstore_root(c->bs));
	http = http_of(s, err);
	if (!http) {
		r = -EB_EFAIL;
		goto done;
	}
	char *tmp = eb_path_dirname(stage);
	(void)eb_fs_mkdir_p(tmp, 0755, NULL);
	free(tmp);
	if (!mkdtemp(stage)) {
		r = eb_error_set_errno(err, EB_EIO, errno, "creating %s", stage);
		goto done;
	}
	eb_interrupt_register(stage, 1);
	r = eb_apt_write(b, &dp->apt, http, c->bs, stage, &rep, err);
	if (r == 0) {
		/* the layers at once, as the files source writes its own: one
		 * layer's tar is made on one thread (its deflate on all of
		 * them), so layers side by side keep every core busy */
		struct apt_layers w = { c, dp, b, &o, eb_xcalloc(napt + 1, sizeof(*w.jobs)), napt,
					0, PTHREAD_MUTEX_INITIALIZER };
		eb_pool_run(eb_pool_threads(w.c->o->jobs, napt), layer_worker, &w);
		for (size_t i = 0; r == 0 && i < napt; i++) {
			struct apt_layer_job *j = &w.jobs[i];
			if (!b[i])
				continue;
			if (j->r < 0) {
				r = j->r; /* the first in layer order */
				*err = j->err;
				j->err = NULL;
				break;
			}
			memcpy(out[i].digest, j->res.digest, sizeof(out[i].digest));
			memcpy(out[i].diff_id, j->res.diff_id, sizeof(out[i].diff_id));
			out[i].size = j->res.size;
			out[i].reused = j->res.cached;
			out[i].created_by = eb_xstrdup(dp->apt.layers[i].created_by);
			put_record(c, plan, &o, i, &j->res, i + 1 == napt ? &rep : NULL);
		}
		for (size_t i = 0; i < napt; i++)
			eb_error_free(w.jobs[i].err);
		free(w.jobs);
		pthread_mutex_destroy(&w.mu);
	}
	(void)eb_fs_remove_tree(stage, NULL);
	eb_interrupt_unregister(stage);
	if (r == 0)
		r = write_replay(c, dp, &o, out, napt, err);
done:
	if (r == 0)
		warn_postinst(c, dp->target, &rep, &dp->replay);
	eb_deb_report_release(&rep);
	for (size_t i = 0; i < napt; i++)
		eb_layer_builder_free(b[i]);
	free(b);
	free(hit);
	free(stage);
	return r;
}

static void debian_report(struct eb_source *s, const struct eb_source_plan *plan,
			  struct eb_build_platform *bp)
{
	const struct debian_plan *dp = plan->state;

	(void)s;
	if (!dp)
		return;
	bp->apt = eb_apt_lock_merge(NULL, bp->platform, &dp->apt);
	bp->pyc_compiled += dp->replay.pyc_compiled;
	bp->pyc_reused += dp->replay.pyc_reused;
}

static void debian_plan_release(struct eb_source_plan *plan)
{
	struct debian_plan *dp = plan->state;

	if (dp) {
		eb_apt_plan_release(&dp->apt);
		free(dp->what);
		free(dp);
	}
	free(plan->layers);
	memset(plan, 0, sizeof(*plan));
}

static void debian_finish(struct eb_source *s)
{
	struct debian *d = s->state;

	if (!d)
		return;
	eb_http_client_free(d->own_http);
	free(d);
	s->state = NULL;
}

const struct eb_source_ops eb_source_debian = {
	.name = "debian",
	.lends_build_env = 1, /* the builder's gcc, headers (build_in) */
	.start = debian_start,
	.needs_base = debian_needs_base,
	.plan = debian_plan,
	.write = debian_write,
	.report = debian_report,
	.plan_release = debian_plan_release,
	.finish = debian_finish,
};
