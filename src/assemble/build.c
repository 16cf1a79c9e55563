/*
 * build.c - the build stage: spec (checked) + base + the layer sources
 * (assemble/source.h: Python wheels, files, ...) -> layers, config, manifest
 * (+ index) -> OCI layout or docker-archive.  It knows no source by name:
 * each platform's image is the base, then every source's layers in
 * eb_sources[] order, then the config.
 *
 * A target that names a builder (`build_in`) builds its sdists in what
 * the builder lends: its base layers and the layers of the sources that
 * lend theirs (source.h: the apt: packages), made by the builder's own
 * build, which goes first, or on the target's first sdist when the
 * builder is not selected.
 *
 * Every input of an image is named here or in a source: the base's
 * manifest and filesystem, what each source writes (keyed by its inputs),
 * the spec's settings, SOURCE_DATE_EPOCH and, for `created`, the time of
 * the last commit that changed the target's inputs.  Nothing else (clock,
 * host, directory, umask, mtimes) reaches the output, which is what makes
 * two builds of the same inputs bit-identical.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assemble/build.h"
#include "assemble/basedrift.h"
#include "oci/basefs.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "assemble/source.h"
#include "lock/git.h"
#include "lock/lock.h"
#include "oci/cache.h"
#include "oci/diffcheck.h"
#include "registry/regcache.h"
#include "envspec/spec.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/progress.h"

struct ctx {
	const struct eb_build_options *o;
	const struct eb_spec *spec;
	struct eb_blobstore *bs;
	struct eb_diag_list *diags;
	struct eb_source_ctx sctx;
	/* one per eb_sources[] entry, started before the first target */
	struct eb_source *sources;
	size_t nsources;
	/* the images builder targets lend (build_in), one per builder and
	 * platform, made once per build */
	struct lent **lent;
	size_t nlent;
};

/* A builder's image for one platform: its base layers and those of the
 * sources that lend theirs (the apt: packages), what a target that
 * names it in build_in builds its sdists in. */
struct lent {
	char *target, *platform;
	char **paths;    /* blob paths, oldest first */
	char **diff_ids; /* entries may be NULL */
	size_t n;
	struct eb_pybuilder pb; /* points into this */
};

static void lent_free(struct lent *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->paths[i]);
		free(l->diff_ids[i]);
	}
	free(l->paths);
	free(l->diff_ids);
	free(l->target);
	free(l->platform);
	free(l);
}

static const struct lent *lent_find(const struct ctx *c, const char *target, const char *platform)
{
	for (size_t i = 0; i < c->nlent; i++)
		if (strcmp(c->lent[i]->target, target) == 0 &&
		    strcmp(c->lent[i]->platform, platform) == 0)
			return c->lent[i];
	return NULL;
}

/* Whether some target of the spec builds its sdists in t. */
static int is_builder(const struct ctx *c, const struct eb_spec_target *t)
{
	for (size_t i = 0; i < c->spec->ntargets; i++)
		if (c->spec->targets[i].build_in.s &&
		    strcmp(c->spec->targets[i].build_in.s, t->name) == 0)
			return 1;
	return 0;
}

/* Whether source k runs for a target: every source, or with env_only
 * (a builder's image made only for build_in) those that lend theirs. */
static int active(const struct ctx *c, size_t k, int env_only)
{
	return !env_only || c->sources[k].ops->lends_build_env;
}

static int put_doc(struct ctx *c, const struct eb_doc *doc, struct eb_error **err)
{
	char got[EB_DIGEST_STR_LEN + 1];
	int r = eb_blobstore_put(c->bs, doc->data, doc->len, got, err);

	if (r == 0 && strcmp(got, doc->digest) != 0)
		return eb_error_set(err, EB_EFAIL, "stored document digest %s differs from %s", got,
				    doc->digest);
	return r;
}

static int has_label(const struct eb_spec_target *t, const char *key)
{
	for (size_t i = 0; i < t->labels.n; i++)
		if (strcmp(t->labels.v[i].key, key) == 0)
			return 1;
	return 0;
}

/* Whether a source reads the base's layers for target t. */
static int needs_base_bytes(const struct ctx *c, const struct eb_spec_target *t, int env_only)
{
	for (size_t k = 0; k < c->nsources; k++)
		if (active(c, k, env_only) && c->sources[k].ops->needs_base &&
		    c->sources[k].ops->needs_base(t))
			return 1;
	return 0;
}

/* 1 when a source reads the base's layer bytes other than through the
 * caches: python (the "pytarget" record) and files (the base's view,
 * "basefs") fetch them only on a miss. */
static int needs_base_layers(const struct ctx *c, const struct eb_spec_target *t)
{
	for (size_t k = 0; k < c->nsources; k++)
		if (c->sources[k].ops->needs_base && c->sources[k].ops->needs_base(t) &&
		    strcmp(c->sources[k].ops->name, "python") != 0 &&
		    strcmp(c->sources[k].ops->name, "files") != 0)
			return 1;
	return 0;
}

/* The base of target t for plat: none (scratch), a local layout (its
 * layers imported into the blob store) or a registry image (pulled, by
 * the locked digest when there is a lock). */
static int read_base(struct ctx *c, const struct eb_spec_target *t, const struct eb_platform *plat,
		     struct eb_build_target *bt, struct eb_build_platform *bp,
		     struct eb_layout_image *base, int *have_base, int need_bytes,
		     struct eb_error **err)
{
	eb_autofree char *base_dir = NULL;
	eb_autofree char *base_ref = NULL;
	int r = 0;

	if (eb_imageref_is_scratch(t->base.s)) {
		*have_base = 0;
	} else if (eb_spec_oci_base(t->base.s, c->spec->dir, &base_dir, &base_ref)) {
		r = eb_layout_read(base, base_dir, base_ref, plat, err);
		if (r < 0) {
			eb_error_wrap(err, "base of target '%s'", t->name);
			eb_error_locate(err, c->spec->path, t->base.pos.line, t->base.pos.col);
			return r;
		}
		*have_base = 1;
		snprintf(bp->base_manifest, sizeof(bp->base_manifest), "%s", base->manifest_desc.digest);
		for (size_t i = 0; i < base->manifest.n_layers && r >= 0; i++)
			r = eb_layout_import_blob(c->bs, base_dir, &base->manifest.layers[i], err);
		if (r < 0)
			return r;
		if (!bt->base_digest[0])
			snprintf(bt->base_digest, sizeof(bt->base_digest), "%s", base->top.digest);
	} else if (!c->o->registry) {
		r = eb_error_set_at(err, EB_EFAIL, c->spec->path, t->base.pos.line, t->base.pos.col,
				    "base image '%s' of target '%s' is in a registry, and this build "
				    "has no registry access",
				    t->base.s, t->name);
		return r;
	} else {
		/* layers are fetched only when something needs their bytes: an
		 * output layout; a push mounts or copies them registry-side */
		int fetch = c->o->output_type != EB_OUTPUT_NONE || needs_base_layers(c, t) ||
			    need_bytes;
		const char *locked = c->o->lock ? eb_lock_base_for(c->o->lock, t->name, bt->base_ref) : NULL;
		char *pull_ref = NULL;

		/* the lock is the truth: pull what it pinned, not what the tag
		 * names today; but it is an input of the pull request too, so
		 * it must agree with the spec's @digest, and under --locked
		 * with what the tag names (assemble/basedrift.h) */
		if (locked) {
			char *why = NULL;
			r = eb_base_drift(c->o->check_bases ? c->o->registry : NULL, t->base.s, locked,
					  &why, err);
			if (r == 1) {
				r = eb_error_set_at(err, EB_EFAIL, c->spec->path, t->base.pos.line,
						    t->base.pos.col, "target '%s': %s", t->name, why);
				eb_error_hint(err, "write 'base: %s@%s' to keep the locked image, or run "
						   "'envbuild lock --upgrade' to take the tag's",
					      t->base.s, locked);
				free(why);
			}
			if (r < 0)
				return r;
		}
		if (locked) {
			struct eb_imageref ref;
			if (eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
				char *name = eb_imageref_name(&ref);
				pull_ref = eb_xasprintf("%s@%s", name, locked);
				free(name);
				eb_imageref_release(&ref);
			}
		}
		{
			char *name = eb_xasprintf("%s: base %s", t->name, t->base.s);
			struct eb_progress_event ev = { EB_PROGRESS_START, EB_STEP_BASE, EB_OUTCOME_PULLED,
							name, name, 0, 0 };

			eb_progress_emit(c->o->progress, &ev);
			r = eb_registry_pull(c->o->registry, pull_ref ? pull_ref : t->base.s, plat, c->bs,
					     fetch, base, err);
			ev.kind = EB_PROGRESS_END;
			eb_progress_emit(c->o->progress, &ev);
			if (r == 0) {
				ev.kind = EB_PROGRESS_DONE;
				eb_progress_emit(c->o->progress, &ev);
			}
			free(name);
		}
		free(pull_ref);
		if (r < 0) {
			eb_error_wrap(err, "pulling base '%s' of target '%s'", t->base.s, t->name);
			eb_error_locate(err, c->spec->path, t->base.pos.line, t->base.pos.col);
			return r;
		}
		*have_base = 1;
		if (!bt->base_repository) {
			struct eb_imageref ref;
			if (eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
				bt->base_repository = eb_imageref_name(&ref);
				eb_imageref_release(&ref);
			}
		}
		/* the layers stay in their registry until a cache miss needs
		 * them (Python detection, the base's filesystem view) */
		if (!fetch && needs_base_bytes(c, t, 0) && bt->base_repository)
			eb_regcache_attach_blobs(c->bs, c->o->registry, bt->base_repository,
						 base->manifest.layers, base->manifest.n_layers);
		if (!bt->base_digest[0])
			snprintf(bt->base_digest, sizeof(bt->base_digest), "%s", base->top.digest);
		snprintf(bp->base_manifest, sizeof(bp->base_manifest), "%s", base->manifest_desc.digest);
	}
	return r;
}

/* What became of each layer a source wrote, for the progress sink: one
 * line per layer in a log, whether the source showed it live or took it
 * from its records. */
static void progress_layers(const struct ctx *c, const struct eb_spec_target *t,
			    const struct eb_build_layer *l, size_t n)
{
	for (size_t i = 0; c->o->progress && i < n; i++) {
		struct eb_progress_event ev = { EB_PROGRESS_DONE, EB_STEP_LAYER,
						l[i].reused ? EB_OUTCOME_CACHED : EB_OUTCOME_WRITTEN,
						NULL, NULL, l[i].size, l[i].size };
		const char *what = l[i].created_by ? l[i].created_by : "layer";
		char key[32], *name;

		if (strncmp(what, "envbuild: ", 10) == 0) /* the history's prefix */
			what += 10;
		name = eb_xasprintf("%s: %s", t->name, what);
		eb_progress_key(c->o->progress, "layer", key, sizeof(key));
		ev.key = key;
		ev.name = name;
		eb_progress_emit(c->o->progress, &ev);
		free(name);
	}
}

static int builder_env(struct ctx *c, const struct eb_spec_target *t, const char *platform,
		       const struct lent **out, struct eb_error **err);

/* What a target's python source is given for its builder: the lent
 * layers, made (builder_env) when its first sdist is built. */
struct pending {
	struct eb_pybuilder pb;
	struct ctx *c;
	const struct eb_spec_target *t;
	const char *platform;
};

static int make_builder(struct eb_pybuilder *b, struct eb_error **err)
{
	struct pending *p = b->ud;
	const struct lent *l;
	int r = builder_env(p->c, p->t, p->platform, &l, err);

	if (r < 0)
		return r;
	b->layers = l->pb.layers;
	b->diff_ids = l->pb.diff_ids;
	b->nlayers = l->pb.nlayers;
	b->make = NULL;
	return 0;
}

/* Keep what builder t lends for platform: its base layers (the first
 * nbase of bp) and the layers of the lending sources, [from[k], to[k])
 * for source k. */
static void lend(struct ctx *c, const struct eb_spec_target *t, const char *platform,
		 const struct eb_build_platform *bp, size_t nbase, const size_t *from,
		 const size_t *to)
{
	struct lent *l;

	if (lent_find(c, t->name, platform))
		return;
	l = eb_xcalloc(1, sizeof(*l));
	l->target = eb_xstrdup(t->name);
	l->platform = eb_xstrdup(platform);
	l->paths = eb_xcalloc(bp->nlayers + 1, sizeof(*l->paths));
	l->diff_ids = eb_xcalloc(bp->nlayers + 1, sizeof(*l->diff_ids));
	for (size_t i = 0; i < bp->nlayers; i++) {
		int keep = i < nbase;
		for (size_t k = 0; !keep && k < c->nsources; k++)
			keep = c->sources[k].ops->lends_build_env && i >= from[k] && i < to[k];
		/* a planned layer left empty (no replay) is no layer */
		if (!keep || !bp->layers[i].digest[0])
			continue;
		l->paths[l->n] = eb_blobstore_path(c->bs, bp->layers[i].digest);
		l->diff_ids[l->n++] = bp->layers[i].diff_id[0] ? eb_xstrdup(bp->layers[i].diff_id)
							       : NULL;
	}
	l->pb.target = l->target;
	l->pb.layers = (const char *const *)l->paths;
	l->pb.diff_ids = (const char *const *)l->diff_ids;
	l->pb.nlayers = l->n;
	c->lent = eb_xreallocarray(c->lent, c->nlent + 1, sizeof(*c->lent));
	c->lent[c->nlent++] = l;
}

/* Every source's layers for target t, in eb_sources[] order, above the
 * base's: all sources plan first (problems in the user's input are found
 * before anything is installed), then write, then report for the lock.
 * With env_only, only the sources that lend their layers to a build_in
 * target run, for what t lends (nothing is reported). */
static int source_layers(struct ctx *c, const struct eb_spec_target *t, const char *platform,
			 const struct eb_layout_image *base, int have_base,
			 struct eb_build_platform *bp, int env_only, struct eb_error **err)
{
	size_t nbase = have_base ? base->manifest.n_layers : 0, at;
	struct eb_source_plan *plans = eb_xcalloc(c->nsources + 1, sizeof(*plans));
	char **paths = eb_xcalloc(nbase + 1, sizeof(*paths));
	const char **diff_ids = eb_xcalloc(nbase + 1, sizeof(*diff_ids));
	size_t *from = eb_xcalloc(c->nsources + 1, sizeof(*from));
	size_t *to = eb_xcalloc(c->nsources + 1, sizeof(*to));
	struct eb_source_base sb = { 0 };
	struct pending pend = { 0 };
	struct eb_basefs *fs = NULL;
	int r = 0;

	for (size_t i = 0; i < nbase; i++) {
		paths[i] = eb_blobstore_path(c->bs, base->manifest.layers[i].digest);
		diff_ids[i] = i < base->config.n_diff_ids ? base->config.diff_ids[i] : NULL;
	}
	sb.present = have_base;
	sb.top = have_base ? base->top.digest : NULL;
	sb.layers = (const char *const *)paths;
	sb.diff_ids = diff_ids;
	sb.nlayers = nbase;
	if (!env_only && t->build_in.s) {
		/* its sdists are built in the builder's image, made for the
		 * first one */
		pend.c = c;
		pend.t = t;
		pend.platform = platform;
		pend.pb.target = t->build_in.s;
		pend.pb.make = make_builder;
		pend.pb.ud = &pend;
		sb.builder = &pend.pb;
	}
	if (needs_base_bytes(c, t, env_only)) {
		/* the one pass that reads every base layer whole (on a miss
		 * of its cache): the config's diff_ids are checked here */
		r = eb_basefs_load_verified(&fs, c->bs, have_base ? base->manifest.layers : NULL,
					    diff_ids, nbase, err);
		if (r < 0)
			goto done;
		sb.fs = fs;
	}
	for (size_t k = 0; k < c->nsources && r == 0; k++)
		if (active(c, k, env_only))
			r = c->sources[k].ops->plan(&c->sources[k], t, platform, &sb, &plans[k], err);
	if (r < 0)
		goto done;

	bp->nlayers = nbase;
	for (size_t k = 0; k < c->nsources; k++)
		bp->nlayers += plans[k].n;
	bp->layers = eb_xcalloc(bp->nlayers + 1, sizeof(*bp->layers));
	for (size_t i = 0; i < nbase; i++) {
		struct eb_build_layer *l = &bp->layers[i];
		snprintf(l->digest, sizeof(l->digest), "%s", base->manifest.layers[i].digest);
		snprintf(l->diff_id, sizeof(l->diff_id), "%s", diff_ids[i] ? diff_ids[i] : "");
		l->size = (uint64_t)base->manifest.layers[i].size;
		l->from_base = 1;
		l->created_by = eb_xstrdup("base");
	}
	at = nbase;
	for (size_t k = 0; k < c->nsources && r == 0; k++) {
		struct eb_source *s = &c->sources[k];
		from[k] = at;
		if (!active(c, k, env_only)) {
			to[k] = at;
			continue;
		}
		r = s->ops->write(s, &plans[k], &bp->layers[at], err);
		if (r == 0)
			progress_layers(c, t, &bp->layers[at], plans[k].n);
		at += plans[k].n;
		to[k] = at;
		if (r == 0 && s->ops->report && !env_only)
			s->ops->report(s, &plans[k], bp);
	}
	if (r == 0 && (env_only || is_builder(c, t)))
		lend(c, t, platform, bp, nbase, from, to);
	/* a planned layer a source found nothing for (digest left empty:
	 * the Debian replay layer) is not in the image */
	if (r == 0) {
		size_t w = 0;

		for (size_t i = 0; i < bp->nlayers; i++) {
			if (!bp->layers[i].digest[0]) {
				free(bp->layers[i].created_by);
				continue;
			}
			bp->layers[w++] = bp->layers[i];
		}
		bp->nlayers = w;
	}
done:
	for (size_t k = 0; k < c->nsources; k++)
		if (c->sources[k].ops->plan_release)
			c->sources[k].ops->plan_release(&plans[k]);
	free(plans);
	for (size_t i = 0; i < nbase; i++)
		free(paths[i]);
	free(paths);
	free(diff_ids);
	free(from);
	free(to);
	eb_basefs_free(fs);
	return r;
}

static void set_base_ref(const struct eb_spec_target *t, struct eb_build_target *bt)
{
	if (!bt->base_ref && !eb_imageref_is_scratch(t->base.s)) {
		struct eb_imageref ref;
		if (strncmp(t->base.s, "oci:", 4) != 0 && eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
			bt->base_ref = eb_imageref_to_string(&ref);
			eb_imageref_release(&ref);
		} else {
			bt->base_ref = eb_xstrdup(t->base.s);
		}
	}
}

static void platform_release(struct eb_build_platform *p);
static void target_release(struct eb_build_target *t);

/* The image t's builder (build_in) lends for platform: made by the
 * builder's own build when it came first, else now, from its base and
 * the lending sources only (its Python packages and files are not its
 * build environment). */
static int builder_env(struct ctx *c, const struct eb_spec_target *t, const char *platform,
		       const struct lent **out, struct eb_error **err)
{
	const struct eb_spec_target *b = eb_spec_target(c->spec, t->build_in.s);
	struct eb_build_target bt = { 0 };
	struct eb_build_platform bp = { 0 };
	struct eb_layout_image base = { 0 };
	struct eb_platform plat = { 0 };
	int have_base = 0, found = 0, r;

	if ((*out = lent_find(c, t->build_in.s, platform)))
		return 0;
	for (size_t i = 0; b && i < b->platforms.n && !found; i++)
		found = strcmp(b->platforms.v[i].s, platform) == 0;
	if (!b || !found) /* check refuses both (EB257) */
		return eb_error_set_at(err, EB_EINVALID, c->spec->path, t->build_in.pos.line,
				       t->build_in.pos.col, "target '%s' builds in '%s', which %s "
				       "[EB257]", t->name, t->build_in.s,
				       b ? "is not built for this platform" : "is not a target");
	set_base_ref(b, &bt);
	if ((r = eb_platform_parse(&plat, platform, err)) < 0)
		goto done;
	if ((r = read_base(c, b, &plat, &bt, &bp, &base, &have_base, 1, err)) < 0 ||
	    (r = source_layers(c, b, platform, &base, have_base, &bp, 1, err)) < 0) {
		eb_error_wrap(err, "the builder '%s' of target '%s' (build_in)", b->name, t->name);
		goto done;
	}
	*out = lent_find(c, b->name, platform);
done:
	eb_layout_image_release(&base);
	eb_platform_release(&plat);
	platform_release(&bp);
	target_release(&bt);
	return r;
}

/* One platform's image: base + sources + config, manifest into the
 * blob store. */
static int build_platform(struct ctx *c, const struct eb_spec_target *t, const char *platform,
			  struct eb_build_target *bt, struct eb_build_platform *bp,
			  struct eb_descriptor *manifest_out, struct eb_error **err)
{
	struct eb_platform plat = { 0 };
	struct eb_layout_image base = { 0 };
	int have_base = 0;
	struct eb_descriptor *new_layers = NULL;
	struct eb_config_layer *clayers = NULL;
	const char **env = NULL;
	struct eb_kv *labels = NULL;
	size_t nlabels = 0, nbase, nadd = 0;
	struct eb_doc cdoc = { 0 }, mdoc = { 0 };
	struct eb_descriptor cdesc = { 0 };
	int r;

	bp->platform = eb_xstrdup(platform);
	set_base_ref(t, bt);
	r = eb_platform_parse(&plat, platform, err);
	if (r < 0)
		goto done;
	/* a builder's base is the root of other targets' builds */
	r = read_base(c, t, &plat, bt, bp, &base, &have_base, is_builder(c, t), err);
	if (r < 0)
		goto done;
	/* the image's platform: linux/arm64 says v8, a base's variant is kept */
	eb_platform_for_image(&plat, have_base ? &base.config.platform : NULL);
	r = source_layers(c, t, platform, &base, have_base, bp, 0, err);
	if (r < 0)
		goto done;

	/* the layers the sources added, for the config and manifest */
	nbase = have_base ? base.manifest.n_layers : 0;
	nadd = bp->nlayers - nbase;
	new_layers = eb_xcalloc(nadd + 1, sizeof(*new_layers));
	clayers = eb_xcalloc(nadd + 1, sizeof(*clayers));
	for (size_t i = 0; i < nadd; i++) {
		const struct eb_build_layer *l = &bp->layers[nbase + i];
		new_layers[i].media_type = eb_xstrdup(eb_layer_media_type(c->o->layer.compression));
		new_layers[i].digest = eb_xstrdup(l->digest);
		new_layers[i].size = (int64_t)l->size;
		clayers[i].diff_id = l->diff_id;
		clayers[i].created_by = l->created_by;
	}

	/* config */
	env = eb_xcalloc(t->env.n + 1, sizeof(*env));
	for (size_t i = 0; i < t->env.n; i++) {
		/* $VAR against the base's env and the entries before, as ENV */
		r = eb_config_env_entry(have_base ? &base.config : NULL, env, i, t->env.v[i].key,
					t->env.v[i].value, (char **)&env[i], err);
		if (r < 0) {
			eb_error_locate(err, c->spec->path, t->env.v[i].pos.line, t->env.v[i].pos.col);
			goto done;
		}
	}
	labels = eb_xcalloc(t->labels.n + 3, sizeof(*labels));
	nlabels = 0;
	/* the project's labels win over the ones envbuild derives */
	if (c->o->source_url && !has_label(t, "org.opencontainers.image.source"))
		labels[nlabels++] = (struct eb_kv){ "org.opencontainers.image.source", c->o->source_url };
	if (c->o->revision && !has_label(t, "org.opencontainers.image.revision"))
		labels[nlabels++] = (struct eb_kv){ "org.opencontainers.image.revision", c->o->revision };
	for (size_t i = 0; i < t->labels.n; i++) {
		labels[nlabels].key = t->labels.v[i].key;
		labels[nlabels++].value = t->labels.v[i].value;
	}
	{
		const char **ep = NULL, **cmd = NULL;
		struct eb_config_settings cs = { 0 };

		if (t->has_entrypoint) {
			ep = eb_xcalloc(t->entrypoint.n + 1, sizeof(*ep));
			for (size_t i = 0; i < t->entrypoint.n; i++)
				ep[i] = t->entrypoint.v[i].s;
		}
		if (t->has_cmd) {
			cmd = eb_xcalloc(t->cmd.n + 1, sizeof(*cmd));
			for (size_t i = 0; i < t->cmd.n; i++)
				cmd[i] = t->cmd.v[i].s;
		}
		cs.platform = &plat;
		cs.epoch = eb_git_inputs_epoch(c->spec, t, c->o->layer.epoch);
		cs.env = env;
		cs.n_env = t->env.n;
		cs.entrypoint = ep;
		cs.n_entrypoint = t->has_entrypoint ? t->entrypoint.n : 0;
		cs.cmd = cmd;
		cs.n_cmd = t->has_cmd ? t->cmd.n : 0;
		cs.workdir = t->workdir.s;
		cs.user = t->user.s;
		cs.expose = (const char *const *)t->run.expose;
		cs.n_expose = t->run.nexpose;
		cs.stopsignal = t->run.stopsignal;
		cs.labels = labels;
		cs.n_labels = nlabels;
		cs.layers = clayers;
		cs.n_layers = nadd;
		r = eb_config_build(&cdoc, have_base ? &base.config : NULL, &cs, err);
		free(ep);
		free(cmd);
		if (r < 0)
			goto done;
	}
	if ((r = put_doc(c, &cdoc, err)) < 0)
		goto done;
	eb_doc_descriptor(&cdesc, &cdoc, EB_MEDIA_OCI_CONFIG);
	snprintf(bp->config, sizeof(bp->config), "%s", cdoc.digest);

	/* manifest */
	{
		struct eb_manifest_settings ms = { 0 };
		ms.base = have_base ? &base.manifest : NULL;
		/* base.name wants a registry name; a local layout has none */
		ms.base_name = bt->base_repository ? t->base.s : NULL;
		ms.base_digest = have_base ? base.top.digest : NULL;
		ms.config = &cdesc;
		ms.layers = new_layers;
		ms.n_layers = nadd;
		r = eb_manifest_build(&mdoc, &ms, err);
		if (r < 0)
			goto done;
	}
	if ((r = put_doc(c, &mdoc, err)) < 0)
		goto done;
	snprintf(bp->manifest, sizeof(bp->manifest), "%s", mdoc.digest);
	eb_doc_descriptor(manifest_out, &mdoc, EB_MEDIA_OCI_MANIFEST);
	manifest_out->platform = eb_xcalloc(1, sizeof(*manifest_out->platform));
	eb_platform_copy(manifest_out->platform, &plat);
done:
	if (new_layers) {
		for (size_t i = 0; i < nadd; i++)
			eb_descriptor_release(&new_layers[i]);
		free(new_layers);
	}
	free(clayers);
	if (env) {
		for (size_t i = 0; i < t->env.n; i++)
			free((char *)env[i]);
		free(env);
	}
	free(labels);
	eb_doc_release(&cdoc);
	eb_doc_release(&mdoc);
	eb_descriptor_release(&cdesc);
	eb_layout_image_release(&base);
	eb_platform_release(&plat);
	return r;
}

/* The output directory stays out of git, as Python's venv and cargo's
 * target/ do it: a .gitignore of "*" inside it (which ignores itself
 * too).  Only in a directory the build owns (the default out/, or one this
 * build created): `--output .` must not hide the project. */
static int ignore_output(const char *dir, int owned, struct eb_error **err)
{
	static const char text[] = "# written by envbuild build: the build output stays out of git\n*\n";
	char *path;
	struct stat st;
	int r = 0;

	if (!owned)
		return 0;
	path = eb_path_join(dir, ".gitignore");
	if (lstat(path, &st) < 0)
		r = eb_fs_write_atomic(path, text, sizeof(text) - 1, 0644, err);
	free(path);
	return r;
}

static int build_target(struct ctx *c, const struct eb_spec_target *t, struct eb_build_target *bt,
			struct eb_error **err)
{
	const struct eb_build_options *o = c->o;
	struct eb_descriptor *mans = NULL;
	struct eb_descriptor top = { 0 };
	struct eb_doc idoc = { 0 };
	size_t n = 0;
	char *parent = NULL;
	int r = 0;

	bt->name = eb_xstrdup(t->name);
	bt->base = eb_xstrdup(t->base.s);
	mans = eb_xcalloc(t->platforms.n + 1, sizeof(*mans));
	bt->platforms = eb_xcalloc(t->platforms.n + 1, sizeof(*bt->platforms));
	for (size_t i = 0; i < t->platforms.n; i++) {
		if (o->platform && strcmp(o->platform, t->platforms.v[i].s) != 0)
			continue;
		bt->nplatforms++;
		r = build_platform(c, t, t->platforms.v[i].s, bt, &bt->platforms[n], &mans[n], err);
		n++;
		if (r < 0)
			goto done;
	}
	if (n == 0) {
		r = eb_error_set(err, EB_EUSAGE, "target '%s' is not built for platform '%s'", t->name,
				 o->platform);
		goto done;
	}
	if (n == 1) {
		eb_descriptor_copy(&top, &mans[0]);
		eb_platform_release(top.platform);
		free(top.platform);
		top.platform = NULL;
	} else {
		r = eb_index_build(&idoc, mans, n, NULL, 0, err);
		if (r < 0)
			goto done;
		if ((r = put_doc(c, &idoc, err)) < 0)
			goto done;
		eb_doc_descriptor(&top, &idoc, EB_MEDIA_OCI_INDEX);
	}
	snprintf(bt->digest, sizeof(bt->digest), "%s", top.digest);
	bt->media_type = eb_xstrdup(top.media_type);
	bt->size = top.size;

	if (o->output_type == EB_OUTPUT_NONE) {
		/* push: the blob store has everything; nothing to write */
	} else if (o->output_type == EB_OUTPUT_DOCKER_ARCHIVE) {
		char *tag = c->spec->repository.s
				    ? eb_xasprintf("%s:%s", c->spec->repository.s, t->name)
				    : eb_xasprintf("%s:%s", c->spec->name.s, t->name);
		if (n != 1) {
			free(tag);
			r = eb_error_set(err, EB_EUSAGE,
					 "a docker-archive holds one platform; target '%s' has %zu",
					 t->name, n);
			eb_error_hint(err, "choose one with --platform");
			goto done;
		}
		bt->output = eb_xstrdup(o->output);
		r = eb_layout_write_docker_archive(bt->output, c->bs, &mans[0], tag, err);
		free(tag);
	} else {
		struct stat st;
		int fresh;

		parent = o->output ? eb_xstrdup(o->output)
				 : (strcmp(c->spec->dir, ".") == 0 ? eb_xstrdup("out")
								   : eb_path_join(c->spec->dir, "out"));
		fresh = stat(parent, &st) < 0;
		r = eb_fs_mkdir_p(parent, 0755, err);
		if (r < 0)
			goto done;
		if ((r = ignore_output(parent, !o->output || fresh, err)) < 0)
			goto done;
		bt->output = eb_path_join(parent, t->name);
		r = eb_layout_write(bt->output, c->bs, &top, t->name, err);
	}
	if (r < 0)
		eb_error_wrap(err, "writing target '%s'", t->name);
done:
	for (size_t i = 0; i < n; i++)
		eb_descriptor_release(&mans[i]);
	free(mans);
	eb_descriptor_release(&top);
	eb_doc_release(&idoc);
	free(parent);
	return r;
}

/* Which records came from the shared cache, and a diff_id the layer did
 * not have counted as a rejected record, not a hit. */
static void on_shared(void *ud, const char *kind, const char *key, const json_t *rec,
		      enum eb_cache_shared how)
{
	struct eb_regcache_stats *st = ud;
	const char *digest = json_string_value(json_object_get(rec, "digest"));

	(void)key;
	if (how == EB_CACHE_SHARED_REJECTED) {
		if (st->hits)
			st->hits--;
		st->rejected++;
		st->misses++;
		return;
	}
	if (!st->used)
		st->used = json_array();
	json_array_append_new(st->used, json_pack("{s:s, s:s, s:b}", "kind", kind, "digest",
						  digest ? digest : "", "checked",
						  how == EB_CACHE_SHARED_VERIFIED));
}

const char *eb_build_cache_repo(const struct eb_build_options *o, int to)
{
	const char *v = to ? o->cache_to : o->cache_from;

	/* cache_from/cache_to of the spec before its cache (either way) */
	if (!v && o->spec)
		v = to ? o->spec->cache_to.s : o->spec->cache_from.s;
	if (!v && o->spec)
		v = o->spec->cache.s;
	return v && *v ? v : NULL;
}

/* Target i of the spec, after its builder when both are selected (a
 * builder that is not gets only what it lends, on demand). */
static int build_ordered(struct ctx *c, size_t i, struct eb_build_target *slots, char *started,
			 struct eb_error **err)
{
	const struct eb_spec_target *t = &c->spec->targets[i];
	int r;

	if (started[i])
		return 0;
	started[i] = 1;
	if (t->build_in.s && !c->o->target)
		for (size_t k = 0; k < c->spec->ntargets; k++)
			if (strcmp(c->spec->targets[k].name, t->build_in.s) == 0 &&
			    (r = build_ordered(c, k, slots, started, err)) < 0)
				return r;
	return build_target(c, t, &slots[i], err);
}

int eb_build_run(const struct eb_build_options *o, struct eb_build_report *rep,
		 struct eb_diag_list *diags, struct eb_error **err)
{
	const struct eb_spec *spec = o->spec;
	struct eb_build_target *slots = NULL;
	char *started = NULL;
	struct ctx c = { 0 };
	int r = 0;

	memset(rep, 0, sizeof(*rep));
	if (o->target && !eb_spec_target(spec, o->target)) {
		struct eb_buf names;
		eb_buf_init(&names, 0);
		for (size_t i = 0; i < spec->ntargets; i++)
			(void)eb_buf_addf(&names, "%s'%s'", i ? ", " : "", spec->targets[i].name);
		r = eb_error_set(err, EB_EUSAGE, "no target '%s' in '%s' (it has %s)", o->target,
				 spec->path, names.ptr);
		eb_buf_release(&names);
		goto done;
	}
	if (o->output_type == EB_OUTPUT_DOCKER_ARCHIVE && !o->target && spec->ntargets > 1) {
		r = eb_error_set(err, EB_EUSAGE, "a docker-archive holds one image; choose a target");
		eb_error_hint(err, "add --target NAME");
		goto done;
	}
	c.o = o;
	c.spec = spec;
	c.diags = diags;
	r = eb_blobstore_open(&c.bs, o->cache_dir, err);
	if (r < 0)
		goto done;
	/* a layer record from the shared cache must have the diff_id it says */
	eb_cache_set_layer_check(c.bs, eb_diffcheck_layer);
	if ((eb_build_cache_repo(o, 0) || eb_build_cache_repo(o, 1)) &&
	    (r = eb_regcache_attach(c.bs, o->registry, eb_build_cache_repo(o, 0),
				    eb_build_cache_repo(o, 1), o->cache_stats, err)) < 0)
		goto done;
	if (o->cache_stats)
		eb_cache_on_shared(c.bs, on_shared, o->cache_stats);
	/* a push mounts what the shared cache holds and checks the bytes it
	 * uploads; outputs need the bytes */
	eb_cache_set_lazy(c.bs, o->output_type == EB_OUTPUT_NONE && !o->verify_cache);
	c.sctx.o = o;
	c.sctx.spec = spec;
	c.sctx.bs = c.bs;
	c.sctx.diags = diags;
	while (eb_sources[c.nsources])
		c.nsources++;
	c.sources = eb_xcalloc(c.nsources + 1, sizeof(*c.sources));
	for (size_t k = 0; k < c.nsources && r == 0; k++) {
		c.sources[k].ops = eb_sources[k];
		c.sources[k].ctx = &c.sctx;
		if (eb_sources[k]->start)
			r = eb_sources[k]->start(&c.sources[k], err);
	}
	if (r < 0)
		goto done;
	/* a builder first (build_in), so that what it lends is written
	 * once; the report keeps the spec's order */
	slots = eb_xcalloc(spec->ntargets + 1, sizeof(*slots));
	started = eb_xcalloc(spec->ntargets + 1, sizeof(*started));
	for (size_t i = 0; i < spec->ntargets && r == 0; i++)
		if (!o->target || strcmp(o->target, spec->targets[i].name) == 0)
			r = build_ordered(&c, i, slots, started, err);
	rep->targets = eb_xcalloc(spec->ntargets + 1, sizeof(*rep->targets));
	for (size_t i = 0; i < spec->ntargets; i++)
		if (started[i])
			rep->targets[rep->ntargets++] = slots[i];
done:
	free(slots);
	free(started);
	for (size_t i = 0; i < c.nlent; i++)
		lent_free(c.lent[i]);
	free(c.lent);
	for (size_t k = 0; k < c.nsources; k++)
		if (c.sources[k].ops->finish)
			c.sources[k].ops->finish(&c.sources[k]);
	free(c.sources);
	eb_blobstore_free(c.bs);
	return r;
}

static void platform_release(struct eb_build_platform *p)
{
	for (size_t k = 0; k < p->nlayers; k++)
		free(p->layers[k].created_by);
	free(p->layers);
	for (size_t k = 0; k < p->npackages; k++) {
		free(p->packages[k].name);
		free(p->packages[k].version);
		free(p->packages[k].filename);
		free(p->packages[k].url);
		free(p->packages[k].replaces);
		free(p->packages[k].sdist_filename);
		free(p->packages[k].sdist_url);
	}
	free(p->python);
	free(p->packages);
	json_decref(p->apt);
	free(p->platform);
}

static void target_release(struct eb_build_target *t)
{
	for (size_t j = 0; j < t->nplatforms; j++)
		platform_release(&t->platforms[j]);
	free(t->platforms);
	free(t->name);
	free(t->output);
	free(t->base);
	free(t->base_repository);
	free(t->base_ref);
	free(t->media_type);
}

void eb_build_report_release(struct eb_build_report *rep)
{
	for (size_t i = 0; i < rep->ntargets; i++)
		target_release(&rep->targets[i]);
	free(rep->targets);
	memset(rep, 0, sizeof(*rep));
}
