/*
 * push.h - the workflow behind `envbuild push`: refuse inputs with
 * uncommitted changes, build into the blob store (cached layers make this
 * cheap when nothing changed), push every target in one registry call (so
 * blobs the targets share go up once), record in the lockfile what was
 * built and where it went, and commit the lockfile when asked.
 *
 * Layering (stage floor): may use assemble/, lock/, registry/ and everything
 * below; never cmd/.  Progress is the registry client's events (the
 * command's callback in its registry options); the stage prints nothing
 * but one-line notes.
 *
 * Ownership: options are borrowed; eb_stage_end() frees the stage's
 * results, and the push's own strings are in the struct eb_stage_push,
 * freed by eb_stage_push_release().
 */
#ifndef EB_STAGE_PUSH_H
#define EB_STAGE_PUSH_H

#include <stddef.h>

#include "registry/client.h"
#include "stage/attest.h"
#include "stage/stage.h"

struct eb_stage_push {
	/* in */
	const char *repository;         /* NULL: the spec's */
	const char *const *extra_tags;  /* --tag, nextra of them */
	size_t nextra;
	int allow_dirty;
	int commit;                     /* commit the lockfile */
	/* cosign signatures of every manifest and index (NULL: none) */
	const struct eb_sign_key *sign_key;
	int no_attest;                  /* no SBOMs, no provenance */

	/* out */
	const char *pushed_to;          /* the repository used (borrowed) */
	int pushed;                     /* every image is in the registry */
	struct eb_push_result result;
	struct eb_attest_result attest;
	char *head;                     /* the commit pushed from, or NULL */
};

/* Every input of the spec's targets that git should hold unchanged: the
 * lock's inputs (spec, requirements files and their -r/-c includes) and
 * every `files` source.  NULL-terminated; the caller frees each and the
 * array. */
char **eb_stage_push_inputs(const struct eb_spec *spec, size_t *n);

/* The push; s as for eb_stage_build (s->build.registry set, its events
 * wired by the caller).  Findings go into diags. */
int eb_stage_push(struct eb_stage *s, struct eb_stage_push *p, struct eb_diag_list *diags,
		  struct eb_error **err);
void eb_stage_push_release(struct eb_stage_push *p);

#endif
