/*
 * push.c - push orchestration: what is pushed must be what is committed
 * (every input checked with git), then build, push, and the lock records
 * the digests, the references and the commit.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lock/git.h"
#include "lock/lock.h"
#include "oci/blobstore.h"
#include "envspec/spec.h"
#include "stage/push.h"
#include "util/alloc.h"

char **eb_stage_push_inputs(const struct eb_spec *spec, size_t *n)
{
	char **inputs = eb_lock_inputs(spec, n);
	size_t cap = *n + 1;

	for (size_t i = 0; i < spec->ntargets; i++)
		for (size_t k = 0; k < spec->targets[i].nfiles; k++) {
			EB_ALLOC_GROW(inputs, *n + 2, cap);
			inputs[(*n)++] = eb_spec_resolve(spec, spec->targets[i].files[k].src.s);
		}
	inputs[*n] = NULL;
	return inputs;
}

/* Refuse a push whose inputs have uncommitted changes; remember HEAD. */
static int check_committed(const struct eb_spec *spec, struct eb_stage_push *p,
			   struct eb_error **err)
{
	struct eb_git *g = NULL;
	size_t n = 0;
	char **inputs;
	char *first = NULL;
	int dirty, r = 0;

	if (eb_git_open(&g, spec->dir, NULL) < 0)
		return 0; /* not in git: nothing to compare with */
	inputs = eb_stage_push_inputs(spec, &n);
	dirty = eb_git_dirty(g, (const char *const *)inputs, n, &first, NULL);
	p->head = eb_git_head(g);
	eb_git_free(g);
	for (size_t i = 0; i < n; i++)
		free(inputs[i]);
	free(inputs);
	if (dirty > 0 && !p->allow_dirty) {
		r = eb_error_set(err, EB_EFAIL,
				 "'%s' has uncommitted changes; the pushed image would not match any commit",
				 first ? first : "an input");
		eb_error_hint(err, "commit them, or push anyway with --allow-dirty");
	}
	free(first);
	return r;
}

static void release_arrays(struct eb_push_image *images, struct eb_descriptor *tops, char ***tags,
			   size_t ntags, struct eb_blob_source *sources)
{
	for (size_t i = 0; i < ntags; i++) {
		for (size_t k = 0; tags[i] && tags[i][k]; k++)
			free(tags[i][k]);
		free(tags[i]);
	}
	free(tags);
	for (size_t i = 0; tops && i < ntags; i++)
		eb_descriptor_release(&tops[i]);
	free(tops);
	free(images);
	free(sources);
}

int eb_stage_push(struct eb_stage *s, struct eb_stage_push *p, struct eb_diag_list *diags,
		  struct eb_error **err)
{
	const struct eb_build_report *rep = &s->rep;
	struct eb_push_image *images = NULL;
	struct eb_descriptor *tops = NULL;
	char ***tags = NULL;
	struct eb_blob_source *sources = NULL;
	size_t nsources = 0, ntags = 0;
	struct eb_blobstore *bs = NULL;
	int r;

	if ((r = eb_stage_begin(s, 0, diags, err)) < 0)
		return r;
	if ((r = check_committed(s->lf.spec, p, err)) < 0)
		return r;
	/* build into the blob store only: layers come from the cache when
	 * nothing changed, base layers stay in their registry */
	s->build.output_type = EB_OUTPUT_NONE;
again:
	if ((r = eb_stage_run_build(s, diags, err)) < 0)
		return r;
	p->pushed_to = p->repository ? p->repository : s->lf.spec->repository.s;
	if (!p->pushed_to) {
		r = eb_error_set(err, EB_EUSAGE, "'%s' names no repository to push to", s->spec_path);
		eb_error_hint(err, "add 'repository: registry.example.com/team/app' to the spec, or give --repository");
		return r;
	}

	images = eb_xcalloc(rep->ntargets + 1, sizeof(*images));
	tops = eb_xcalloc(rep->ntargets + 1, sizeof(*tops));
	tags = eb_xcalloc(rep->ntargets + 1, sizeof(*tags));
	ntags = rep->ntargets;
	for (size_t i = 0; i < rep->ntargets; i++) {
		const struct eb_build_target *t = &rep->targets[i];
		size_t k = 0;

		tops[i].media_type = eb_xstrdup(t->media_type);
		tops[i].digest = eb_xstrdup(t->digest);
		tops[i].size = t->size;
		tags[i] = eb_xcalloc(p->nextra + 2, sizeof(char *));
		tags[i][k++] = eb_xstrdup(t->name);
		for (size_t j = 0; j < p->nextra; j++)
			tags[i][k++] = rep->ntargets == 1 ? eb_xstrdup(p->extra_tags[j])
							  : eb_xasprintf("%s-%s", t->name, p->extra_tags[j]);
		images[i].repository_ref = p->pushed_to;
		images[i].top = &tops[i];
		images[i].tags = (const char *const *)tags[i];
		/* base layers not in the store: mount or fetch from the base repo */
		for (size_t q = 0; q < t->nplatforms && t->base_repository; q++)
			for (size_t l = 0; l < t->platforms[q].nlayers; l++) {
				if (!t->platforms[q].layers[l].from_base)
					continue;
				sources = eb_xreallocarray(sources, nsources + 1, sizeof(*sources));
				sources[nsources].digest = t->platforms[q].layers[l].digest;
				sources[nsources].repository_ref = t->base_repository;
				nsources++;
			}
	}
	if ((r = eb_blobstore_open(&bs, s->build.cache_dir, err)) < 0)
		goto done;
	/* the image's own layers are in the shared cache: those it had
	 * (mounted from its repository, never built or downloaded here), and
	 * those the build just recorded there (mounted: sent once, not
	 * twice) */
	for (size_t i = 0; i < rep->ntargets; i++)
		for (size_t q = 0; q < rep->targets[i].nplatforms; q++)
			for (size_t l = 0; l < rep->targets[i].platforms[q].nlayers; l++) {
				const struct eb_build_layer *bl = &rep->targets[i].platforms[q].layers[l];
				const char *from = eb_build_cache_repo(&s->build, 0);
				const char *to = eb_build_cache_repo(&s->build, 1);
				int local = eb_blobstore_present(bs, bl->digest, (int64_t)bl->size);
				for (int k = 0; k < 2 && !bl->from_base; k++) {
					const char *repo = k ? to : from;
					if (!repo || (k == 0 && local) || (k == 1 && from && strcmp(from, to) == 0 && !local))
						continue;
					sources = eb_xreallocarray(sources, nsources + 1, sizeof(*sources));
					sources[nsources].digest = bl->digest;
					sources[nsources].repository_ref = repo;
					nsources++;
				}
			}
	r = eb_registry_push(s->build.registry, images, rep->ntargets, sources, nsources, bs,
			     &p->result, err);
	if (r == -EB_ENOTFOUND && !s->build.verify_cache) {
		/* a cached layer the registry lacked had bad bytes (now
		 * evicted): build again, re-hashing what the cache hands out,
		 * and push that; it costs time, never the push */
		release_arrays(images, tops, tags, ntags, sources);
		images = NULL;
		tops = NULL;
		tags = NULL;
		sources = NULL;
		ntags = 0;
		nsources = 0;
		eb_blobstore_free(bs);
		bs = NULL;
		eb_build_report_release(&s->rep);
		eb_error_clear(err);
		memset(&p->result, 0, sizeof(p->result));
		s->build.verify_cache = 1;
		goto again;
	}
	if (r < 0)
		goto done;
	/* signatures and referrers: after the images, which they name */
	if (p->sign_key || !p->no_attest) {
		struct eb_attest_options ao = { 0 };
		ao.repository = p->pushed_to;
		ao.key = p->sign_key;
		ao.attest = !p->no_attest;
		ao.commit = p->head;
		if ((r = eb_attest_push(s, &ao, bs, &p->attest, err)) < 0)
			goto done;
	}
	/* the lock: what was built, then where it went and from which commit */
	if ((r = eb_stage_record(s, err)) < 0)
		goto done;
	for (size_t i = 0; i < rep->ntargets; i++)
		for (size_t k = 0; tags[i][k]; k++) {
			char *ref = eb_xasprintf("%s:%s", p->pushed_to, tags[i][k]);
			eb_lock_record_push(s->lf.lock, rep->targets[i].name, ref, rep->targets[i].digest,
					    p->head);
			free(ref);
		}
	if ((r = eb_lockflow_save(&s->lf, &s->written, err)) < 0)
		goto done;
	p->pushed = 1;
	if (p->commit)
		r = eb_lockflow_commit(&s->lf, "push", rep, err);
done:
	release_arrays(images, tops, tags, ntags, sources);
	eb_blobstore_free(bs);
	return r;
}

void eb_stage_push_release(struct eb_stage_push *p)
{
	free(p->head);
	p->head = NULL;
}
