/*
 * source_files.c - the `files` layer source: one layer per `files` entry,
 * built for every selected target before any base is read (they need
 * none), deduplicated (two targets copying the same src to the same dest
 * share one job, and so one blob), and run on a small thread pool:
 * compressing is the slow part of a build, and layers are independent.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/source.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

struct layer_job {
	const struct eb_spec_target *t;
	const struct eb_spec_file *f;
	char *key; /* src, dest and excludes: equal keys, one job */
	struct layer_job *same_as; /* NULL: this job builds it */
	struct eb_build_layer result;
	struct eb_error *err;
};

struct files {
	const struct eb_source_ctx *c;
	struct layer_job *jobs;
	size_t njobs;
	size_t next; /* next job to take, under mu */
	pthread_mutex_t mu;
};

/* One layer for one `files` entry. */
static int files_layer(const struct eb_source_ctx *c, const struct eb_spec_target *t,
		       const struct eb_spec_file *f, struct eb_build_layer *out,
		       struct eb_error **err)
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
	r = eb_layer_add_tree(b, src, dest, ex, f->exclude.n, err);
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

static void *job_worker(void *arg)
{
	struct files *fs = arg;

	for (;;) {
		struct layer_job *j;
		pthread_mutex_lock(&fs->mu);
		j = fs->next < fs->njobs ? &fs->jobs[fs->next++] : NULL;
		pthread_mutex_unlock(&fs->mu);
		if (!j)
			return NULL;
		if (!j->same_as)
			files_layer(fs->c, j->t, j->f, &j->result, &j->err);
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
static int files_start(struct eb_source *s, struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	const struct eb_spec *spec = c->spec;
	struct files *fs = eb_xcalloc(1, sizeof(*fs));
	size_t n = 0, nthreads;
	pthread_t *th;
	long ncpu;
	int r = 0;

	s->state = fs;
	fs->c = c;
	for (size_t i = 0; i < spec->ntargets; i++)
		n += spec->targets[i].nfiles;
	fs->jobs = eb_xcalloc(n + 1, sizeof(*fs->jobs));
	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		if (c->o->target && strcmp(c->o->target, t->name) != 0)
			continue;
		for (size_t k = 0; k < t->nfiles; k++) {
			struct layer_job *j = &fs->jobs[fs->njobs++];
			j->t = t;
			j->f = &t->files[k];
			j->key = job_key(j->f);
			for (size_t q = 0; q + 1 < fs->njobs; q++)
				if (!fs->jobs[q].same_as && strcmp(fs->jobs[q].key, j->key) == 0) {
					j->same_as = &fs->jobs[q];
					break;
				}
		}
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	nthreads = c->o->jobs > 0 ? (size_t)c->o->jobs : (ncpu > 0 ? (size_t)ncpu : 1);
	if (nthreads > fs->njobs)
		nthreads = fs->njobs;
	pthread_mutex_init(&fs->mu, NULL);
	if (nthreads <= 1) {
		job_worker(fs);
	} else {
		th = eb_xcalloc(nthreads, sizeof(*th));
		for (size_t i = 0; i < nthreads; i++)
			if (pthread_create(&th[i], NULL, job_worker, fs) != 0)
				abort(); /* only fails when the system is out of resources */
		for (size_t i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		free(th);
	}
	pthread_mutex_destroy(&fs->mu);
	for (size_t i = 0; i < fs->njobs; i++)
		if (fs->jobs[i].err) {
			*err = fs->jobs[i].err;
			fs->jobs[i].err = NULL;
			r = -(*err)->code;
			break;
		}
	return r;
}

static const struct layer_job *find_job(const struct files *fs, const struct eb_spec_target *t,
					const struct eb_spec_file *f)
{
	for (size_t i = 0; i < fs->njobs; i++) {
		const struct layer_job *j = &fs->jobs[i];
		if (j->t == t && j->f == f)
			return j->same_as ? j->same_as : j;
	}
	return NULL;
}

/* The plan's state: the jobs of its layers, in order. */
static int files_plan(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
		      const struct eb_source_base *base, struct eb_source_plan *plan,
		      struct eb_error **err)
{
	const struct files *fs = s->state;
	const struct layer_job **jobs;

	(void)platform; /* files are the same bytes on every platform */
	(void)base;
	plan->layers = eb_xcalloc(t->nfiles + 1, sizeof(*plan->layers));
	jobs = eb_xcalloc(t->nfiles + 1, sizeof(*jobs));
	plan->state = jobs;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct layer_job *j = find_job(fs, t, &t->files[i]);
		if (!j)
			return eb_error_set(err, EB_EFAIL, "no layer was planned for '%s' of target '%s'",
					    t->files[i].src.s, t->name);
		jobs[i] = j;
		eb_sha256_digest(j->key, strlen(j->key), plan->layers[i].key);
		plan->layers[i].created_by = j->result.created_by;
		plan->n++;
	}
	return 0;
}

static int files_write(struct eb_source *s, struct eb_source_plan *plan,
		       struct eb_build_layer *out, struct eb_error **err)
{
	const struct layer_job **jobs = plan->state;

	(void)s;
	(void)err; /* built in files_start() */
	for (size_t i = 0; i < plan->n; i++) {
		out[i] = jobs[i]->result;
		out[i].created_by = eb_xstrdup(jobs[i]->result.created_by);
	}
	return 0;
}

static void files_plan_release(struct eb_source_plan *plan)
{
	free(plan->layers);
	free(plan->state);
	memset(plan, 0, sizeof(*plan));
}

static void files_finish(struct eb_source *s)
{
	struct files *fs = s->state;

	if (!fs)
		return;
	for (size_t i = 0; i < fs->njobs; i++) {
		free(fs->jobs[i].key);
		free(fs->jobs[i].result.created_by);
		eb_error_free(fs->jobs[i].err);
	}
	free(fs->jobs);
	free(fs);
	s->state = NULL;
}

const struct eb_source_ops eb_source_files = {
	.name = "files",
	.start = files_start,
	.plan = files_plan,
	.write = files_write,
	.report = NULL,
	.plan_release = files_plan_release,
	.finish = files_finish,
};
