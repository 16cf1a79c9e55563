/*
 * pin_buildreqs.h - the pin stage's build environments (stage/pin.h): a
 * target whose pins include sdist-only versions gets its
 * `build_requirements` from their [build-system] requires and what their
 * backends' get_requires_for_build_wheel adds, resolved for
 * the same interpreter and platforms as its requirements, exact and
 * hashed, in the file the spec names (`- -r FILE`), or in
 * build-requirements-TARGET.txt with that line added to the spec.
 *
 * Layering (stage floor): assemble/, python/, envspec/, ref/, util/;
 * never cmd/.
 * Ownership: buffers and strings returned are the caller's.
 */
#ifndef EB_STAGE_PIN_BUILDREQS_H
#define EB_STAGE_PIN_BUILDREQS_H

#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"

struct eb_blobstore;
struct eb_resolver;
struct eb_pyprovider;
struct eb_spec;
struct eb_spec_target;

/* What asking the sdists' backends needs: the base of a target (t's,
 * or its build_in builder's) for one platform (pin.c pulls it as `build` does) and the blob store. */
struct eb_pin_buildreqs_ctx {
	/* *layers: the blob paths of t's base for platform, oldest first
	 * (the caller's: free each and the array) */
	int (*pull)(void *ud, const struct eb_spec_target *t, const char *platform,
		    char ***layers, size_t *n, struct eb_error **err);
	void *ud;
	struct eb_blobstore *bs;
};

/* After r resolved: the build environment of target t (environments
 * env0..env0+nenv of prov) rendered into out, *any = 1; *any = 0 when
 * none of its pins is an sdist.  The build environment is resolved from
 * the sdists' [build-system] requires, then each backend is asked
 * (assemble/sdisthook.h) with it, in the base build builds in (the
 * builder's with build_in) for each platform
 * this host can execute, and what they add is resolved in too, until
 * they add nothing.  An sdist no platform's backend could be asked for
 * keeps its static requires, with warning EB259 on stderr.  *path gets
 * the file to write and *spec_line, when the spec names none, the item
 * to add to the spec's target ("-r build-requirements-app.txt"), else
 * NULL.  -EB_EFAIL when the build requirements have no solution; a
 * backend that fails is an error naming the sdist, with its output. */
int eb_pin_buildreqs(struct eb_pyprovider *prov, const struct eb_resolver *r, size_t nenvs,
		     const struct eb_spec *spec, const struct eb_spec_target *t, size_t env0,
		     size_t nenv, const struct eb_pin_buildreqs_ctx *c, struct eb_buf *out,
		     char **path, char **spec_line, int *any, struct eb_error **err);

/* Add "build_requirements: [ITEM]" to target tname of the spec at
 * spec_path, before its requirements key, keeping every other byte;
 * nothing is written under dry_run. */
int eb_pin_buildreqs_spec_add(const char *spec_path, const char *tname, const char *item,
			      int dry_run, struct eb_error **err);

#endif
