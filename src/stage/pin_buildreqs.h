/*
 * pin_buildreqs.h - the pin stage's build environments (stage/pin.h): a
 * target whose pins include sdist-only versions gets its
 * `build_requirements` from their [build-system] requires, resolved for
 * the same interpreter and platforms as its requirements, exact and
 * hashed, in the file the spec names (`- -r FILE`), or in
 * build-requirements-TARGET.txt with that line added to the spec.
 *
 * Layering (stage floor): python/, envspec/, util/; never cmd/.
 * Ownership: buffers and strings returned are the caller's.
 */
#ifndef EB_STAGE_PIN_BUILDREQS_H
#define EB_STAGE_PIN_BUILDREQS_H

#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"

struct eb_resolver;
struct eb_pyprovider;
struct eb_spec;
struct eb_spec_target;

/* After r resolved: the build environment of target t (environments
 * env0..env0+nenv of prov) rendered into out, *any = 1; *any = 0 when
 * none of its pins is an sdist.  *path gets the file to write and
 * *spec_line, when the spec names none, the item to add to the spec's
 * target ("-r build-requirements-app.txt"), else NULL.  -EB_EFAIL when
 * the build requirements have no solution. */
int eb_pin_buildreqs(struct eb_pyprovider *prov, const struct eb_resolver *r, size_t nenvs,
		     const struct eb_spec *spec, const struct eb_spec_target *t, size_t env0,
		     size_t nenv, struct eb_buf *out, char **path, char **spec_line, int *any,
		     struct eb_error **err);

/* Add "build_requirements: [ITEM]" to target tname of the spec at
 * spec_path, before its requirements key, keeping every other byte;
 * nothing is written under dry_run. */
int eb_pin_buildreqs_spec_add(const char *spec_path, const char *tname, const char *item,
			      int dry_run, struct eb_error **err);

#endif
