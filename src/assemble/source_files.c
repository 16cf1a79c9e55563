/*
 * source_files.c - the `files` layer source: one layer per `files` entry,
 * placed over the base's filesystem as Docker's COPY places it (where a
 * file lands, and the metadata of its parents, depend on the base: see
 * oci/basefs.h), so a target's layers are built once its base is known;
 * deduplicated (the same src, dest and options twice share one job; two
 * targets doing so over the same base meet in the layer cache, and so
 * share one blob), and run on a small thread pool: compressing is the
 * slow part of a build, and layers are independent.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assemble/build.h"
#include "assemble/accounts.h"
#include "assemble/ignore.h"
#include "assemble/progress.h"
#include "assemble/source.h"
#include "lock/lock.h"
#include "oci/basefs.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/pool.h"

struct layer_job {
	const struct eb_spec_target *t;
	const struct eb_spec_file *f;
	char *key; /* src, dest and excludes: equal keys, one job */
	struct layer_job *same_as; /* NULL: this job builds it */
	/* what the copy leaves out (assemble/ignore.h), made in files_plan():
	 * libgit2 keeps per-thread error state that a worker thread which
	 * exits would leak, so the repository is opened on the main thread */
	struct eb_ignore *ig;
	uint32_t uid, gid; /* chown's, names resolved (assemble/accounts.h) */
	struct eb_build_layer result;
	struct eb_error *err;
};

/* One target's jobs on one platform: the plan's state. */
struct files {
	const struct eb_source_ctx *c;
	const struct eb_basefs *fs; /* the base's filesystem (borrowed from the base) */
	struct layer_job *jobs;
	size_t njobs;
	size_t next; /* next job to take, under mu */
	pthread_mutex_t mu;
};

/* One layer for one `files` entry. */
static int files_layer(const struct eb_source_ctx *c, const struct eb_basefs *fs,
		       const struct eb_spec_target *t, const struct eb_spec_file *f,
		       uint32_t uid, uint32_t gid, const struct eb_ignore *ig,
		       struct eb_build_layer *out, struct eb_error **err)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options lo = c->o->layer;
	struct eb_layer_result res;
	const char **ex = NULL;
	char *src = eb_spec_resolve(c->spec, f->src.s);
	char *dest = eb_xstrdup(f->dest.s);
	struct stat st;
	int r, at_dest = 0;

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
	eb_layer_builder_set_base(b, fs);
	/* chown/chmod: COPY --chown/--chmod */
	if (f->chown.s) {
		lo.uid = uid;
		lo.gid = gid;
	}
	lo.chmod = f->mode;
	r = eb_layer_add_tree_filtered(b, src, dest, ex, f->exclude.n, eb_ignore_skip, (void *)ig,
				       err);
	if (r < 0)
		goto done;
	{
		char *what = eb_xasprintf("files %s -> %s", f->src.s, f->dest.s);
		struct eb_layer_step step;

		eb_layer_step_begin(&step, c->o->progress, t->name, what, &lo);
		r = eb_layer_write_cached(b, &lo, c->bs, &res, NULL, err);
		eb_layer_step_end(&step);
		free(what);
	}
	/* an invalid layer here is one that does not fit the base's
	 * filesystem: point at dest */
	at_dest = r == -EB_EINVALID;
	if (r < 0)
		goto done;
	memcpy(out->digest, res.digest, sizeof(out->digest));
	memcpy(out->diff_id, res.diff_id, sizeof(out->diff_id));
	out->size = res.size;
	out->reused = res.cached;
	out->created_by = eb_xasprintf("envbuild: files %s -> %s", f->src.s, f->dest.s);
done:
	if (r < 0 && at_dest)
		eb_error_locate(err, c->spec->path, f->dest.pos.line, f->dest.pos.col);
	else if (r < 0)
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
			files_layer(fs->c, fs->fs, j->t, j->f, j->uid, j->gid, j->ig, &j->result,
				    &j->err);
	}
}

static char *job_key(const struct eb_spec_file *f)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	(void)eb_buf_addf(&b, "%s%c%s", f->src.s, 0, f->dest.s);
	for (size_t i = 0; i < f->exclude.n; i++)
		(void)eb_buf_addf(&b, "%c%s", 0, f->exclude.v[i].s);
	(void)eb_buf_addf(&b, "%cchown=%s%cchmod=%s", 0, f->chown.s ? f->chown.s : "", 0,
			  f->chmod.s ? f->chmod.s : "");
	for (size_t i = 0; i < b.len; i++)
		if (b.ptr[i] == '\0')
			b.ptr[i] = '\n';
	return eb_buf_detach(&b, NULL);
}

static void files_free(struct files *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->njobs; i++) {
		free(fs->jobs[i].key);
		eb_ignore_free(fs->jobs[i].ig);
		free(fs->jobs[i].result.created_by);
		eb_error_free(fs->jobs[i].err);
	}
	free(fs->jobs);
	free(fs);
}

static int files_needs_base(const struct eb_spec_target *t)
{
	return t->nfiles > 0; /* where a file lands depends on the base's tree */
}

/* A chown by name: the base's accounts plus the spec's (loaded once per
 * plan into *acct; their own problems are the accounts source's to
 * report, so they go to a list of their own here). */
static int resolve_chown(const struct eb_source_ctx *c, const struct eb_spec_target *t,
			 const struct eb_source_base *base, struct layer_job *j,
			 struct eb_accounts **acct, size_t *nerr, struct eb_error **err)
{
	const char *what;
	int w;

	if (!*acct) {
		struct eb_diag_list quiet = EB_DIAG_LIST_INIT;
		size_t n = 0;
		int r = eb_accounts_load(acct, c->spec, t, base, c->o->layer.epoch, &quiet, &n, err);
		eb_diag_list_release(&quiet);
		if (r < 0) {
			eb_accounts_free(*acct);
			*acct = NULL;
			return r;
		}
	}
	w = eb_accounts_owner(*acct, j->f->chown.s, &j->uid, &j->gid, &what);
	if (w < 0) {
		struct eb_diag *d = eb_diag_add(c->diags, EB_SEV_ERROR, c->spec->path,
						j->f->chown.pos.line, j->f->chown.pos.col, "EB022",
						"chown '%s': %s '%s' is not in the base's /etc/%s nor "
						"in the spec's accounts", j->f->chown.s,
						w == -1 ? "user" : "group", what,
						w == -1 ? "passwd" : "group");
		eb_diag_hint(d, "add it to accounts: (or write the number)");
		(*nerr)++;
	}
	return 0;
}

/* The plan's state: target t's jobs, deduplicated, in spec order. */
static int files_plan(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
		      const struct eb_source_base *base, struct eb_source_plan *plan,
		      struct eb_error **err)
{
	struct files *fs;
	struct eb_accounts *acct = NULL;
	size_t nerr = 0;

	(void)platform; /* the same bytes on every platform (over the same base tree) */
	if (!t->nfiles)
		return 0;
	fs = eb_xcalloc(1, sizeof(*fs));
	fs->c = s->ctx;
	fs->fs = base->fs;
	fs->jobs = eb_xcalloc(t->nfiles + 1, sizeof(*fs->jobs));
	plan->layers = eb_xcalloc(t->nfiles + 1, sizeof(*plan->layers));
	plan->state = fs;
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
		if (!j->same_as) {
			/* never .git, the output, the lock; nor what
			 * .envbuildignore or git ignores */
			const struct eb_source_ctx *c = s->ctx;
			char *src = eb_spec_resolve(c->spec, j->f->src.s);
			char *lock = eb_lock_path(c->spec);
			char *out_dir = c->o->output ? eb_xstrdup(c->o->output)
						     : eb_path_join(c->spec->dir, "out");
			const char *never[] = { lock, out_dir };
			struct stat st;
			int r = 0;

			/* a src that cannot be read fails in files_layer() */
			if (stat(src, &st) == 0)
				r = eb_ignore_new(&j->ig, c->spec->dir, src, never, 2, err);
			free(src);
			free(lock);
			free(out_dir);
			if (r < 0) {
				eb_error_locate(err, c->spec->path, j->f->src.pos.line,
						j->f->src.pos.col);
				eb_accounts_free(acct);
				return r;
			}
		}
		j->uid = j->f->uid;
		j->gid = j->f->gid;
		if (j->f->chown_named && resolve_chown(s->ctx, t, base, j, &acct, &nerr, err) < 0) {
			eb_accounts_free(acct);
			return -(*err)->code;
		}
		eb_sha256_digest(j->key, strlen(j->key), plan->layers[k].key);
		plan->layers[k].created_by = NULL; /* known once written */
		plan->n++;
	}
	eb_accounts_free(acct);
	if (nerr)
		return eb_error_set(err, EB_EINVALID,
				    "target '%s': %zu chown name%s not found; nothing was built",
				    t->name, nerr, nerr == 1 ? "" : "s");
	return 0;
}

/* Build the plan's layers on a thread pool; the first failing job (in
 * spec order) is the error reported. */
static int files_write(struct eb_source *s, struct eb_source_plan *plan,
		       struct eb_build_layer *out, struct eb_error **err)
{
	struct files *fs = plan->state;
	(void)s;
	if (!fs)
		return 0;
	pthread_mutex_init(&fs->mu, NULL);
	eb_pool_run(eb_pool_threads(fs->c->o->jobs, fs->njobs), job_worker, fs);
	pthread_mutex_destroy(&fs->mu);
	for (size_t i = 0; i < fs->njobs; i++)
		if (fs->jobs[i].err) {
			*err = fs->jobs[i].err;
			fs->jobs[i].err = NULL;
			return -(*err)->code;
		}
	for (size_t i = 0; i < plan->n; i++) {
		const struct layer_job *j = fs->jobs[i].same_as ? fs->jobs[i].same_as : &fs->jobs[i];
		out[i] = j->result;
		out[i].created_by = eb_xstrdup(j->result.created_by);
	}
	return 0;
}

static void files_plan_release(struct eb_source_plan *plan)
{
	free(plan->layers);
	files_free(plan->state);
	memset(plan, 0, sizeof(*plan));
}

const struct eb_source_ops eb_source_files = {
	.name = "files",
	.needs_base = files_needs_base,
	.plan = files_plan,
	.write = files_write,
	.report = NULL,
	.plan_release = files_plan_release,
};
