/*
 * lockflow.c - the lockfile workflow shared by build, push and lock.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage/lockflow.h"
#include "lock/git.h"
#include "lock/lock.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

int eb_lockflow_begin(struct eb_lockflow *lf, const char *spec_path, enum eb_lock_mode mode,
		      struct eb_build_options *bo, struct eb_error **err)
{
	struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
	int r;

	memset(lf, 0, sizeof(*lf));
	lf->mode = mode;
	r = eb_spec_load(&lf->spec, spec_path, &ignore, err);
	eb_diag_list_release(&ignore);
	if (r < 0)
		return r;
	if (!lf->spec)
		return eb_error_set(err, EB_EINVALID, "'%s' cannot be parsed", spec_path);
	if ((r = eb_lock_checksum(lf->checksum, lf->spec, err)) < 0)
		return r;
	lf->path = eb_lock_path(lf->spec);
	r = eb_lock_load(&lf->lock, lf->path, err);
	if (r == -EB_ENOTFOUND) {
		eb_error_clear(err);
		lf->lock = eb_lock_new(lf->spec);
		lf->why = eb_xstrdup("there is no lockfile");
	} else if (r < 0) {
		return r;
	} else {
		lf->existed = 1;
		lf->fresh = eb_lock_fresh(lf->lock, lf->spec, lf->checksum, &lf->why);
	}
	if ((mode == EB_LOCK_LOCKED || mode == EB_LOCK_FROZEN) && !lf->fresh) {
		r = eb_error_set(err, EB_EFAIL, "'%s' is not up to date: %s", lf->path, lf->why);
		eb_error_hint(err, "run 'envbuild lock' and commit the lockfile");
		return r;
	}
	if (mode == EB_LOCK_AUTO && lf->existed && !lf->fresh)
		fprintf(stderr, "envbuild: %s is stale (%s); re-locking\n", lf->path, lf->why);
	/* a stale lock still guides: pins that did not change keep their
	 * locked files and base digests (a changed tag is a new input) */
	if (bo) {
		bo->lock = mode == EB_LOCK_UPGRADE ? NULL : lf->lock;
		bo->frozen = mode == EB_LOCK_FROZEN;
	}
	return 0;
}

int eb_lockflow_save(struct eb_lockflow *lf, int *written, struct eb_error **err)
{
	struct eb_buf old;
	char *now = eb_lock_dump(lf->lock);
	int r = 0;

	*written = 0;
	eb_buf_init(&old, 0);
	if (!(lf->existed && eb_fs_read_file(&old, lf->path, 0, NULL) == 0 && strcmp(old.ptr, now) == 0)) {
		r = eb_lock_write(lf->path, lf->lock, err);
		*written = r == 0;
	}
	eb_buf_release(&old);
	free(now);
	return r;
}

int eb_lockflow_record(struct eb_lockflow *lf, const struct eb_build_report *rep,
		       const char *compression, int *written, struct eb_error **err)
{
	/* outputs are recorded, not enforced: the app's own files change them
	 * on every commit, and they are no input the lock pins */
	*written = 0;
	eb_lock_record_build(lf->lock, lf->spec, lf->checksum, rep, 1, compression);
	return eb_lockflow_save(lf, written, err);
}

void eb_lockflow_labels(struct eb_lockflow *lf, struct eb_build_options *bo, int revision)
{
	struct eb_git *g = NULL;

	if (!lf->spec || eb_git_open(&g, lf->spec->dir, NULL) < 0)
		return;
	lf->source_url = eb_git_origin(g);
	if (lf->source_url && ((!strstr(lf->source_url, "://") && !strchr(lf->source_url, '@')) ||
			       strncmp(lf->source_url, "file://", 7) == 0)) {
		free(lf->source_url);
		lf->source_url = NULL;
	}
	if (revision)
		lf->revision = eb_git_head(g);
	bo->source_url = lf->source_url;
	bo->revision = lf->revision;
	eb_git_free(g);
}

void eb_lockflow_git_warn(const struct eb_lockflow *lf)
{
	struct eb_git *g = NULL;
	enum eb_git_state st;

	if (eb_git_open(&g, lf->spec->dir, NULL) < 0)
		return;
	if (eb_git_path_state(g, lf->path, &st, NULL) == 0) {
		if (st == EB_GIT_IGNORED)
			fprintf(stderr, "envbuild: warning: %s is ignored by git; the lock belongs in the repository\n",
				lf->path);
		else if (st == EB_GIT_UNTRACKED)
			fprintf(stderr, "envbuild: warning: %s is not tracked by git; add and commit it\n",
				lf->path);
	}
	eb_git_free(g);
}

void eb_lockflow_end(struct eb_lockflow *lf)
{
	eb_spec_free(lf->spec);
	json_decref(lf->lock);
	free(lf->path);
	free(lf->why);
	free(lf->source_url);
	free(lf->revision);
	memset(lf, 0, sizeof(*lf));
}
