/*
 * build.c - the build stage: spec (checked) + base layout + files ->
 * layers, config, manifest (+ index) -> OCI layout or docker-archive.
 *
 * Every input of an image is named here, and only here: the base's
 * manifest, the bytes of the files (through the layer builder), the
 * spec's settings and SOURCE_DATE_EPOCH.  Nothing else (clock, host,
 * directory, umask, mtimes) reaches the output, which is what makes two
 * builds of the same inputs bit-identical.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/build.h"
#include "build/ignore.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "pin/check.h"
#include "pin/imageref.h"
#include "registry/client.h"
#include "build/pyinstall.h"
#include "lock/lock.h"
#include "spec/spec.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

/* One `files` layer to build.  Jobs are planned for every selected
 * target before anything is assembled, deduplicated (two targets copying
 * the same src to the same dest share one job, and so one blob), and run
 * on a small thread pool: compressing is the slow part of a build, and
 * layers are independent. */
struct layer_job {
	const struct eb_spec_target *t;
	const struct eb_spec_file *f;
	char *key;
	struct layer_job *same_as; /* NULL: this job builds it */
	struct eb_build_layer result;
	struct eb_error *err;
};

struct ctx {
	const struct eb_build_options *o;
	const struct eb_spec *spec;
	struct eb_blobstore *bs;
	struct layer_job *jobs;
	size_t njobs;
	size_t next; /* next job to take, under mu */
	pthread_mutex_t mu;
	struct eb_index_set *idx; /* made on first use: only targets with requirements need it */
	struct eb_diag_list *diags;
};

static int put_doc(struct ctx *c, const struct eb_doc *doc, struct eb_error **err)
{
	char got[EB_DIGEST_STR_LEN + 1];
	int r = eb_blobstore_put(c->bs, doc->data, doc->len, got, err);

	if (r == 0 && strcmp(got, doc->digest) != 0)
		return eb_error_set(err, EB_EFAIL, "stored document digest %s differs from %s", got,
				    doc->digest);
	return r;
}

/* One layer for one `files` entry. */
static int files_layer(struct ctx *c, const struct eb_spec_target *t, const struct eb_spec_file *f,
		       struct eb_build_layer *out, struct eb_error **err)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_result res;
	const char **ex = NULL;
	char *src = eb_spec_resolve(c->spec, f->src.s);
	char *dest = eb_xstrdup(f->dest.s);
	struct stat st;
	int r;

	if (stat(src, &st) < 0) {
		r = eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
				       "'src' of target '%s': cannot read '%s'", t->name, f->src.s);
		goto done;
	}
	/* a file copied to "dir/" lands inside it, as with COPY */
	if (!S_ISDIR(st.st_mode) && dest[strlen(dest) - 1] == '/') {
		char *d = eb_xasprintf("%s%s", dest, eb_path_basename(src));
		free(dest);
		dest = d;
	}
	ex = eb_xcalloc(f->exclude.n + 1, sizeof(*ex));
	for (size_t i = 0; i < f->exclude.n; i++)
		ex[i] = f->exclude.v[i].s;
	{
		/* never .git, the output, the lock; nor what .envbuildignore
		 * or git ignores (build/ignore.h) */
		char *lock = eb_lock_path(c->spec);
		char *out_dir = c->o->output ? eb_xstrdup(c->o->output)
					     : eb_path_join(c->spec->dir, "out");
		const char *never[] = { lock, out_dir };
		struct eb_ignore *ig = NULL;

		r = eb_ignore_new(&ig, c->spec->dir, src, never, 2, err);
		if (r == 0)
			r = eb_layer_add_tree_filtered(b, src, dest, ex, f->exclude.n,
						       eb_ignore_skip, ig, err);
		eb_ignore_free(ig);
		free(lock);
		free(out_dir);
	}
	if (r < 0)
		goto done;
	r = eb_layer_write_cached(b, &c->o->layer, c->bs, &res, NULL, err);
	if (r < 0)
		goto done;
	memcpy(out->digest, res.digest, sizeof(out->digest));
	memcpy(out->diff_id, res.diff_id, sizeof(out->diff_id));
	out->size = res.size;
	out->reused = res.cached;
	out->created_by = eb_xasprintf("envbuild: files %s -> %s", f->src.s, f->dest.s);
done:
	if (r < 0)
		eb_error_locate(err, c->spec->path, f->src.pos.line, f->src.pos.col);
	free(ex);
	free(src);
	free(dest);
	eb_layer_builder_free(b);
	return r;
}

static int job_result(struct ctx *c, const struct eb_spec_target *t, const struct eb_spec_file *f,
		      struct eb_build_layer *out, struct eb_error **err)
{
	for (size_t i = 0; i < c->njobs; i++) {
		const struct layer_job *j = &c->jobs[i];
		if (j->t != t || j->f != f)
			continue;
		if (j->same_as)
			j = j->same_as;
		*out = j->result;
		out->created_by = eb_xstrdup(j->result.created_by);
		return 0;
	}
	return eb_error_set(err, EB_EFAIL, "no layer was planned for '%s' of target '%s'", f->src.s,
			    t->name);
}

static void *job_worker(void *arg)
{
	struct ctx *c = arg;

	for (;;) {
		struct layer_job *j;
		pthread_mutex_lock(&c->mu);
		j = c->next < c->njobs ? &c->jobs[c->next++] : NULL;
		pthread_mutex_unlock(&c->mu);
		if (!j)
			return NULL;
		if (!j->same_as)
			files_layer(c, j->t, j->f, &j->result, &j->err);
	}
}

static char *job_key(const struct eb_spec_file *f)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	(void)eb_buf_addf(&b, "%s%c%s", f->src.s, 0, f->dest.s);
	for (size_t i = 0; i < f->exclude.n; i++)
		(void)eb_buf_addf(&b, "%c%s", 0, f->exclude.v[i].s);
	for (size_t i = 0; i < b.len; i++)
		if (b.ptr[i] == '\0')
			b.ptr[i] = '\n';
	return eb_buf_detach(&b, NULL);
}

/* Plan and build every `files` layer of the selected targets; the first
 * failing job (in spec order) is the error reported. */
static int build_layers(struct ctx *c, struct eb_error **err)
{
	const struct eb_spec *spec = c->spec;
	size_t n = 0, nthreads;
	pthread_t *th;
	long ncpu;
	int r = 0;

	for (size_t i = 0; i < spec->ntargets; i++)
		n += spec->targets[i].nfiles;
	c->jobs = eb_xcalloc(n + 1, sizeof(*c->jobs));
	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		if (c->o->target && strcmp(c->o->target, t->name) != 0)
			continue;
		for (size_t k = 0; k < t->nfiles; k++) {
			struct layer_job *j = &c->jobs[c->njobs++];
			j->t = t;
			j->f = &t->files[k];
			j->key = job_key(j->f);
			for (size_t q = 0; q + 1 < c->njobs; q++)
				if (!c->jobs[q].same_as && strcmp(c->jobs[q].key, j->key) == 0) {
					j->same_as = &c->jobs[q];
					break;
				}
		}
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	nthreads = c->o->jobs > 0 ? (size_t)c->o->jobs : (ncpu > 0 ? (size_t)ncpu : 1);
	if (nthreads > c->njobs)
		nthreads = c->njobs;
	pthread_mutex_init(&c->mu, NULL);
	if (nthreads <= 1) {
		job_worker(c);
	} else {
		th = eb_xcalloc(nthreads, sizeof(*th));
		for (size_t i = 0; i < nthreads; i++)
			if (pthread_create(&th[i], NULL, job_worker, c) != 0)
				abort(); /* only fails when the system is out of resources */
		for (size_t i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		free(th);
	}
	pthread_mutex_destroy(&c->mu);
	for (size_t i = 0; i < c->njobs; i++)
		if (c->jobs[i].err) {
			*err = c->jobs[i].err;
			c->jobs[i].err = NULL;
			r = -(*err)->code;
			break;
		}
	return r;
}

static void free_jobs(struct ctx *c)
{
	for (size_t i = 0; i < c->njobs; i++) {
		free(c->jobs[i].key);
		free(c->jobs[i].result.created_by);
		eb_error_free(c->jobs[i].err);
	}
	free(c->jobs);
}

static int has_label(const struct eb_spec_target *t, const char *key)
{
	for (size_t i = 0; i < t->labels.n; i++)
		if (strcmp(t->labels.v[i].key, key) == 0)
			return 1;
	return 0;
}

static int build_platform(struct ctx *c, const struct eb_spec_target *t, const char *platform,
			  struct eb_build_target *bt, struct eb_build_platform *bp,
			  struct eb_descriptor *manifest_out, struct eb_error **err)
{
	struct eb_platform plat = { 0 };
	struct eb_layout_image base = { 0 };
	int have_base = 0;
	char *base_dir = NULL, *base_ref = NULL;
	struct eb_descriptor *new_layers = NULL;
	struct eb_config_layer *clayers = NULL;
	const char **env = NULL;
	struct eb_kv *labels = NULL;
	size_t nlabels = 0;
	struct eb_doc cdoc = { 0 }, mdoc = { 0 };
	struct eb_descriptor cdesc = { 0 };
	size_t nadd = t->nfiles;
	int has_reqs = t->requirements.n > 0 || t->packages.n > 0;
	struct eb_pyenv pyenv = { 0 };
	struct eb_pylayer *pyl = NULL;
	size_t npyl = 0;
	int r;

	bp->platform = eb_xstrdup(platform);
	if (!bt->base_ref && !eb_imageref_is_scratch(t->base.s)) {
		struct eb_imageref ref;
		if (strncmp(t->base.s, "oci:", 4) != 0 && eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
			bt->base_ref = eb_imageref_to_string(&ref);
			eb_imageref_release(&ref);
		} else {
			bt->base_ref = eb_xstrdup(t->base.s);
		}
	}
	r = eb_platform_parse(&plat, platform, err);
	if (r < 0)
		goto done;

	/* the base */
	if (eb_imageref_is_scratch(t->base.s)) {
		have_base = 0;
	} else if (eb_spec_oci_base(t->base.s, c->spec->dir, &base_dir, &base_ref)) {
		r = eb_layout_read(&base, base_dir, base_ref, &plat, err);
		if (r < 0) {
			eb_error_wrap(err, "base of target '%s'", t->name);
			eb_error_locate(err, c->spec->path, t->base.pos.line, t->base.pos.col);
			goto done;
		}
		have_base = 1;
		snprintf(bp->base_manifest, sizeof(bp->base_manifest), "%s", base.manifest_desc.digest);
		for (size_t i = 0; i < base.manifest.n_layers && r >= 0; i++)
			r = eb_layout_import_blob(c->bs, base_dir, &base.manifest.layers[i], err);
		if (r < 0)
			goto done;
		if (!bt->base_digest[0])
			snprintf(bt->base_digest, sizeof(bt->base_digest), "%s", base.top.digest);
	} else if (!c->o->registry) {
		r = eb_error_set_at(err, EB_EFAIL, c->spec->path, t->base.pos.line, t->base.pos.col,
				    "base image '%s' of target '%s' is in a registry, and this build "
				    "has no registry access",
				    t->base.s, t->name);
		goto done;
	} else {
		/* layers are fetched only when something needs their bytes: an
		 * output layout; a push mounts or copies them registry-side */
		int fetch = c->o->output_type != EB_OUTPUT_NONE || has_reqs;
		const char *locked = c->o->lock ? eb_lock_base_for(c->o->lock, t->name, bt->base_ref) : NULL;
		char *pull_ref = NULL;

		/* the lock is the truth: pull what it pinned, not what the tag
		 * names today */
		if (locked) {
			struct eb_imageref ref;
			if (eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
				char *name = eb_imageref_name(&ref);
				pull_ref = eb_xasprintf("%s@%s", name, locked);
				free(name);
				eb_imageref_release(&ref);
			}
		}
		r = eb_registry_pull(c->o->registry, pull_ref ? pull_ref : t->base.s, &plat, c->bs, fetch,
				     &base, err);
		free(pull_ref);
		if (r < 0) {
			eb_error_wrap(err, "pulling base '%s' of target '%s'", t->base.s, t->name);
			eb_error_locate(err, c->spec->path, t->base.pos.line, t->base.pos.col);
			goto done;
		}
		have_base = 1;
		if (!bt->base_repository) {
			struct eb_imageref ref;
			if (eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
				bt->base_repository = eb_imageref_name(&ref);
				eb_imageref_release(&ref);
			}
		}
		if (!bt->base_digest[0])
			snprintf(bt->base_digest, sizeof(bt->base_digest), "%s", base.top.digest);
		snprintf(bp->base_manifest, sizeof(bp->base_manifest), "%s", base.manifest_desc.digest);
	}

	/* Python packages: resolved against the base, installed as layers
	 * below the app files (they change less often) */
	if (has_reqs) {
		const char **paths = eb_xcalloc(base.manifest.n_layers + 1, sizeof(*paths));
		size_t nerr;

		r = 0;
		for (size_t i = 0; have_base && i < base.manifest.n_layers; i++)
			paths[i] = eb_blobstore_path(c->bs, base.manifest.layers[i].digest);
		if (!c->idx)
			r = eb_pyenv_indexes(&c->idx, c->spec,
					     c->o->registry ? eb_registry_http(c->o->registry) : NULL, err);
		if (r == 0)
			r = eb_pyenv_resolve(&pyenv, c->spec, t, platform, paths,
					     have_base ? base.manifest.n_layers : 0, c->idx, c->bs, 0,
					     c->o->lock, c->o->frozen, c->diags, err);
		for (size_t i = 0; have_base && i < base.manifest.n_layers; i++)
			free((char *)paths[i]);
		free(paths);
		if (r < 0)
			goto done;
		nerr = eb_pyenv_check_closure(&pyenv, c->diags);
		if (nerr) {
			r = eb_error_set(err, EB_EINVALID,
					 "target '%s': %zu requirement%s of pinned packages %s not pinned "
					 "or conflict%s; nothing was built",
					 t->name, nerr, nerr == 1 ? "" : "s", nerr == 1 ? "is" : "are",
					 nerr == 1 ? "s" : "");
			goto done;
		}
		r = eb_pyenv_layers(&pyenv, c->bs, &c->o->layer,
				    (uint64_t)c->spec->large_package_mb << 20, &pyl, &npyl, err);
		if (r < 0)
			goto done;
		bp->packages = eb_xcalloc(pyenv.n + 1, sizeof(*bp->packages));
		for (size_t i = 0; i < pyenv.n; i++) {
			const struct eb_pydist *d = &pyenv.dists[i];
			struct eb_build_package *p = &bp->packages[bp->npackages++];
			p->name = eb_xstrdup(d->name);
			p->version = eb_xstrdup(d->version);
			p->filename = eb_xstrdup(d->filename);
			p->url = eb_xstrdup(d->url);
			snprintf(p->sha256, sizeof(p->sha256), "%s", d->digest);
			p->size = d->size;
		}
	}
	nadd += npyl;

	/* the layers we add */
	bp->nlayers = (have_base ? base.manifest.n_layers : 0) + nadd;
	bp->layers = eb_xcalloc(bp->nlayers + 1, sizeof(*bp->layers));
	if (have_base)
		for (size_t i = 0; i < base.manifest.n_layers; i++) {
			struct eb_build_layer *l = &bp->layers[i];
			snprintf(l->digest, sizeof(l->digest), "%s", base.manifest.layers[i].digest);
			snprintf(l->diff_id, sizeof(l->diff_id), "%s",
				 i < base.config.n_diff_ids ? base.config.diff_ids[i] : "");
			l->size = (uint64_t)base.manifest.layers[i].size;
			l->from_base = 1;
			l->created_by = eb_xstrdup("base");
		}
	new_layers = eb_xcalloc(nadd + 1, sizeof(*new_layers));
	clayers = eb_xcalloc(nadd + 1, sizeof(*clayers));
	for (size_t i = 0; i < nadd; i++) {
		struct eb_build_layer *l = &bp->layers[(have_base ? base.manifest.n_layers : 0) + i];
		if (i < npyl) {
			memcpy(l->digest, pyl[i].digest, sizeof(l->digest));
			memcpy(l->diff_id, pyl[i].diff_id, sizeof(l->diff_id));
			l->size = pyl[i].size;
			l->reused = pyl[i].cached;
			l->created_by = eb_xstrdup(pyl[i].created_by);
		} else {
			r = job_result(c, t, &t->files[i - npyl], l, err);
			if (r < 0)
				goto done;
		}
		new_layers[i].media_type = eb_xstrdup(eb_layer_media_type(c->o->layer.compression));
		new_layers[i].digest = eb_xstrdup(l->digest);
		new_layers[i].size = (int64_t)l->size;
		clayers[i].diff_id = l->diff_id;
		clayers[i].created_by = l->created_by;
	}

	/* config */
	env = eb_xcalloc(t->env.n + 1, sizeof(*env));
	for (size_t i = 0; i < t->env.n; i++)
		env[i] = eb_xasprintf("%s=%s", t->env.v[i].key, t->env.v[i].value);
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
		cs.epoch = c->o->layer.epoch;
		cs.env = env;
		cs.n_env = t->env.n;
		cs.entrypoint = ep;
		cs.n_entrypoint = t->has_entrypoint ? t->entrypoint.n : 0;
		cs.cmd = cmd;
		cs.n_cmd = t->has_cmd ? t->cmd.n : 0;
		cs.workdir = t->workdir.s;
		cs.user = t->user.s;
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
	eb_pyenv_release(&pyenv);
	eb_pylayers_free(pyl, npyl);
	free(base_dir);
	free(base_ref);
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
		parent = o->output ? eb_xstrdup(o->output)
				 : (strcmp(c->spec->dir, ".") == 0 ? eb_xstrdup("out")
								   : eb_path_join(c->spec->dir, "out"));
		r = eb_fs_mkdir_p(parent, 0755, err);
		if (r < 0)
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

int eb_build_run(const struct eb_build_options *o, struct eb_build_report *rep,
		 struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	struct ctx c = { 0 };
	size_t nerr;
	int r;

	memset(rep, 0, sizeof(*rep));
	r = eb_check_spec_inputs(o->spec_path, diags, err);
	if (r < 0)
		return r;
	nerr = eb_diag_list_count(diags, EB_SEV_ERROR);
	if (nerr)
		return eb_error_set(err, EB_EINVALID, "'%s' has %zu problem%s; nothing was built",
				    o->spec_path, nerr, nerr == 1 ? "" : "s");
	r = eb_spec_load(&spec, o->spec_path, &ignore, err);
	eb_diag_list_release(&ignore);
	if (r < 0)
		return r;
	if (o->target && !eb_spec_target(spec, o->target)) {
		struct eb_buf names;
		eb_buf_init(&names, 0);
		for (size_t i = 0; i < spec->ntargets; i++)
			(void)eb_buf_addf(&names, "%s'%s'", i ? ", " : "", spec->targets[i].name);
		r = eb_error_set(err, EB_EUSAGE, "no target '%s' in '%s' (it has %s)", o->target,
				 o->spec_path, names.ptr);
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
	r = build_layers(&c, err);
	if (r < 0)
		goto done;
	rep->targets = eb_xcalloc(spec->ntargets + 1, sizeof(*rep->targets));
	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		if (o->target && strcmp(o->target, t->name) != 0)
			continue;
		r = build_target(&c, t, &rep->targets[rep->ntargets++], err);
		if (r < 0)
			goto done;
	}
done:
	free_jobs(&c);
	eb_pyenv_indexes_free(c.idx);
	eb_blobstore_free(c.bs);
	eb_spec_free(spec);
	return r;
}

void eb_build_report_release(struct eb_build_report *rep)
{
	for (size_t i = 0; i < rep->ntargets; i++) {
		struct eb_build_target *t = &rep->targets[i];
		for (size_t j = 0; j < t->nplatforms; j++) {
			struct eb_build_platform *p = &t->platforms[j];
			for (size_t k = 0; k < p->nlayers; k++)
				free(p->layers[k].created_by);
			free(p->layers);
			for (size_t k = 0; k < p->npackages; k++) {
				free(p->packages[k].name);
				free(p->packages[k].version);
				free(p->packages[k].filename);
				free(p->packages[k].url);
			}
			free(p->packages);
			free(p->platform);
		}
		free(t->platforms);
		free(t->name);
		free(t->output);
		free(t->base);
		free(t->base_repository);
		free(t->base_ref);
		free(t->media_type);
	}
	free(rep->targets);
	memset(rep, 0, sizeof(*rep));
}
