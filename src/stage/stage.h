/*
 * stage.h - the build and lock workflows behind `envbuild build` and
 * `envbuild lock` (and the first half of `envbuild push`, stage/push.h):
 * check the spec's inputs and read the spec once, decide which lock guides
 * the build, build, record the lockfile.
 *
 * Layering (stage floor): may use assemble/, lock/, registry/, python/ and
 * everything below; never cmd/.  A command parses its options into a
 * struct eb_stage, calls one stage function and prints what it left there;
 * the stage never prints results, only one-line notes on stderr
 * ("re-locking", lockfile warnings).
 *
 * Ownership: the command fills the "in" fields (borrowed); the stage fills
 * the "out" fields, which eb_stage_end() frees.
 */
#ifndef EB_STAGE_STAGE_H
#define EB_STAGE_STAGE_H

#include <jansson.h>

#include "assemble/build.h"
#include "stage/lockflow.h"
#include "util/diag.h"
#include "util/error.h"

struct eb_stage {
	/* in */
	const char *spec_path;
	enum eb_lock_mode mode;
	int label_revision; /* org.opencontainers.image.revision label */
	/* build settings: output, target, platform, layers, registry, cache;
	 * the stage sets spec, lock, frozen and the labels */
	struct eb_build_options build;

	/* out */
	struct eb_lockflow lf;
	struct eb_build_report rep;
	json_t *before; /* eb_stage_lock: the lock as it was */
	int written;    /* the lockfile was (re)written */
};

/* The steps, for stages that put their own work between them (push):
 *
 * begin: check the spec's inputs (findings into diags), read the spec once
 * and decide the lock (a stale one under --locked/--frozen fails).  With
 * tolerate_unparsable, a spec that does not parse is left to its findings;
 * else it is an error of its own.
 *
 * run_build: any error finding stops with -EB_EINVALID before anything is
 * built; else the labels from git, and the build into s->rep.
 *
 * record: what was built goes into the lockfile (written when it changed). */
int eb_stage_begin(struct eb_stage *s, int tolerate_unparsable, struct eb_diag_list *diags,
		   struct eb_error **err);
int eb_stage_run_build(struct eb_stage *s, struct eb_diag_list *diags, struct eb_error **err);
int eb_stage_record(struct eb_stage *s, struct eb_error **err);
/* `envbuild build`: begin, run_build, record. */
int eb_stage_build(struct eb_stage *s, struct eb_diag_list *diags, struct eb_error **err);
/* `envbuild lock`: resolve every input by building into the blob store
 * and write the lockfile; s->before keeps the lock as it was. */
int eb_stage_lock(struct eb_stage *s, struct eb_diag_list *diags, struct eb_error **err);
/* `envbuild lock --check`, offline: 0 when the lockfile is fresh, 1 when
 * it is stale or missing (s->lf.path and s->lf.why say which). */
int eb_stage_lock_check(struct eb_stage *s, struct eb_error **err);
void eb_stage_end(struct eb_stage *s);

#endif
