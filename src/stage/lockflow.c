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
#include "util/digest.h"
#include "util/fs.h"

int eb_lockflow_begin(struct eb_lockflow *lf, struct eb_spec *spec, enum eb_lock_mode mode,
		      struct eb_build_options *bo, struct eb_error **err)
{
	int r;

	memset(lf, 0, sizeof(*lf));
	lf->mode = mode;
	lf->spec = spec;
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
		bo->spec = lf->spec;
		bo->lock = mode == EB_LOCK_UPGRADE ? NULL : lf->lock;
		bo->frozen = mode == EB_LOCK_FROZEN;
		bo->check_bases = mode == EB_LOCK_LOCKED;
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

/* Record a build's inputs (bases, packages) and its image digests for the
 * targets in rep; other targets are kept as they are (specs/lockfile.md). */
static void record_build(json_t *lock, const struct eb_spec *spec, const char *checksum,
			 const struct eb_build_report *rep, const char *compression,
			 const char *compressor)
{
	eb_lock_set_spec(lock, spec, checksum);
	for (size_t i = 0; i < rep->ntargets; i++) {
		const struct eb_build_target *t = &rep->targets[i];
		json_t *jt = eb_lock_target(lock, t->name);
		json_t *pk = json_object();
		json_t *old_image = json_incref(json_object_get(jt, "image"));

		if (t->base_ref && t->base_digest[0]) {
			json_t *bp = json_object();
			for (size_t p = 0; p < t->nplatforms; p++)
				if (t->platforms[p].base_manifest[0])
					json_object_set_new(bp, t->platforms[p].platform,
							    json_string(t->platforms[p].base_manifest));
			json_object_set_new(jt, "base", json_pack("{s:s, s:s, s:o}", "ref", t->base_ref,
								  "digest", t->base_digest,
								  "platforms", bp));
		} else {
			json_object_del(jt, "base");
		}
		for (size_t p = 0; p < t->nplatforms; p++) {
			const struct eb_build_platform *bp = &t->platforms[p];
			json_t *arr = json_array();
			for (size_t k = 0; k < bp->npackages; k++) {
				const struct eb_build_package *x = &bp->packages[k];
				json_t *jp = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "name", x->name,
						       "version", x->version, "filename", x->filename, "url",
						       x->url, "sha256", eb_digest_hex(x->sha256), "size",
						       (json_int_t)x->size);
				/* what the base had (specs/lockfile.md) */
				if (x->replaces)
					json_object_set_new(jp, "replaces", json_string(x->replaces));
				if (x->in_base)
					json_object_set_new(jp, "in_base", json_true());
				if (x->sdist_url)
					json_object_set_new(
						jp, "sdist",
						json_pack("{s:s, s:s, s:s, s:I}", "filename",
							  x->sdist_filename, "url", x->sdist_url,
							  "sha256", eb_digest_hex(x->sdist_sha256),
							  "size", (json_int_t)x->sdist_size));
				json_array_append_new(arr, jp);
			}
			if (bp->npackages)
				json_object_set_new(pk, bp->platform, arr);
			else
				json_decref(arr);
		}
		json_t *apt = NULL;
		for (size_t p = 0; p < t->nplatforms; p++) {
			const json_t *pa = t->platforms[p].apt;
			if (!pa)
				continue;
			if (!apt)
				apt = json_pack("{s:o}", "packages", json_object());
			json_object_update(json_object_get(apt, "packages"), json_object_get(pa, "packages"));
			if (json_object_get(pa, "sources"))
				json_object_set(apt, "sources", json_object_get(pa, "sources"));
		}
		if (apt)
			json_object_set_new(jt, "apt", apt);
		else
			json_object_del(jt, "apt");
		if (json_object_size(pk))
			json_object_set_new(jt, "packages", pk);
		else {
			json_decref(pk);
			json_object_del(jt, "packages");
		}
		json_t *img = json_object(), *plats = json_object();
		json_t *pushed = json_object_get(old_image, "pushed");
		for (size_t p = 0; p < t->nplatforms; p++) {
			const struct eb_build_platform *bp = &t->platforms[p];
			json_t *layers = json_array();
			for (size_t k = 0; k < bp->nlayers; k++)
				json_array_append_new(
					layers, json_pack("{s:s, s:s, s:I}", "digest",
							  bp->layers[k].digest, "diffId",
							  bp->layers[k].diff_id, "size",
							  (json_int_t)bp->layers[k].size));
			json_object_set_new(plats, bp->platform,
					    json_pack("{s:s, s:s, s:o}", "manifest", bp->manifest,
						      "config", bp->config, "layers", layers));
		}
		json_object_set_new(img, "digest", json_string(t->digest));
		json_object_set_new(img, "mediaType", json_string(t->media_type ? t->media_type : ""));
		json_object_set_new(img, "compression", json_string(compression));
		/* what made the layer bytes (library, scheme, level): a new
		 * compressor shows in the lock, not only in changed digests */
		json_object_set_new(img, "compressor", json_string(compressor));
		json_object_set_new(img, "platforms", plats);
		/* pushes of the same digest stay true; others are history */
		if (pushed && old_image &&
		    strcmp(json_string_value(json_object_get(old_image, "digest")) ?: "", t->digest) == 0)
			json_object_set(img, "pushed", pushed);
		json_object_set_new(jt, "image", img);
		json_decref(old_image);
	}
}


int eb_lockflow_record(struct eb_lockflow *lf, const struct eb_build_report *rep,
		       const char *compression, const char *compressor, int *written,
		       struct eb_error **err)
{
	/* outputs are recorded, not enforced: the app's own files change them
	 * on every commit, and they are no input the lock pins */
	*written = 0;
	record_build(lf->lock, lf->spec, lf->checksum, rep, compression, compressor);
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

/* "envbuild: lock training, inference" and each target's digest */
static char *commit_message(const char *verb, const struct eb_build_report *rep)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	eb_buf_putf(&b, "envbuild: %s", verb);
	for (size_t i = 0; i < rep->ntargets; i++)
		eb_buf_putf(&b, "%s %s", i ? "," : "", rep->targets[i].name);
	eb_buf_puts(&b, "\n\n");
	for (size_t i = 0; i < rep->ntargets; i++)
		eb_buf_putf(&b, "%s: %s\n", rep->targets[i].name, rep->targets[i].digest);
	return eb_buf_detach(&b, NULL);
}

int eb_lockflow_commit(const struct eb_lockflow *lf, const char *verb,
		       const struct eb_build_report *rep, struct eb_error **err)
{
	struct eb_git *g = NULL;
	char *id = NULL, *msg;
	int r = eb_git_open(&g, lf->spec->dir, err);

	if (r < 0) {
		eb_error_hint(err, "--commit needs the spec in a git repository");
		return r;
	}
	msg = commit_message(verb, rep);
	r = eb_git_commit_file(g, lf->path, msg, &id, err);
	if (r == 0)
		fprintf(stderr, "envbuild: committed %s as %.12s\n", lf->path, id);
	free(msg);
	free(id);
	eb_git_free(g);
	return r;
}
