/*
 * sdistpin.h - a pin whose version has only an sdist, installed as the
 * wheel envbuild builds from it (assemble/sdistbuild.h) in the target's
 * own image, or in its builder's (`build_in:` names another target whose
 * base and apt: layers have the compiler and headers: the multi-stage
 * pattern), with the target's build_requirements as build environment.
 * A builder must have the target's Python X.Y and C library, no newer a
 * glibc, and the wheel built must fit the target's tags (EB258).
 *
 * The built wheel is cached by (sdist sha256, the build requirements'
 * wheels, the interpreter and its version, the layers of the image tree
 * it was built in): a rebuild with a warm cache runs no backend.  With a
 * locked wheel sha256 (the lock's package entry), a different result is
 * refused with both digests (EB253): the lock promises the image.  For a
 * platform the host cannot execute (another machine) nothing is run: a
 * py3-none-any wheel built from the same sdist and build environment for
 * the host's platform is taken (it serves every platform), else EB254,
 * which says so when the host's build of it was native code.
 *
 * Internal to assemble/pyinstall.c, which gives it its resolver for the
 * build requirements.  Layering (sources floor).
 */
#ifndef EB_ASSEMBLE_SDISTPIN_H
#define EB_ASSEMBLE_SDISTPIN_H

#include <stddef.h>
#include <stdint.h>

#include "assemble/pydist.h"
#include "python/tags.h"

struct eb_sdistpin_ctx {
	const struct eb_spec *spec;
	const struct eb_spec_target *t;
	const char *const *base_layers; /* blob paths, oldest first */
	size_t nbase;
	const struct eb_pytarget *target;
	const struct eb_tag_list *tags;
	struct eb_pyindex_set *idx;
	struct eb_blobstore *bs;
	struct eb_diag_list *diags;
	/* resolves the build requirements into e (pyinstall.c's resolver) */
	int (*resolve)(void *ud, struct eb_pyenv *e, const struct eb_requirement *req,
		       const char *file, unsigned line, unsigned col, struct eb_error **err);
	void *ud;
	/* the builder (`build_in`) and its Python, detected from its
	 * layers; NULL: the sdists are built in the target's base */
	const struct eb_pybuilder *builder;
	const struct eb_pytarget *builder_py;
};

/* d (name, version set) gets the built wheel: filename, digest, size,
 * metadata, and the sdist fields.  The sdist is the blob sdist_digest
 * of bs.  locked_sha256: the lock's hex sha256 of the wheel, or NULL. */
int eb_sdistpin_build(const struct eb_sdistpin_ctx *c, struct eb_pydist *d,
		      const char *sdist_digest, const char *sdist_filename, const char *sdist_url,
		      int64_t sdist_size, const char *locked_sha256, struct eb_error **err);

struct eb_pyindex_page;
/* The index file of the sdist of req's project at version that req's
 * --hash values allow (the first), or page->nfiles when there is none. */
size_t eb_sdistpin_file(const struct eb_pyindex_page *page, const struct eb_requirement *req,
			const char *version);

#endif
