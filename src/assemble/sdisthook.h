/*
 * sdisthook.h - what an sdist's PEP 517 backend asks for to build its
 * wheel, for `envbuild pin`: [build-system] requires and the answer of
 * get_requires_for_build_wheel (assemble/sdistbuild.h), run the way
 * `build` runs it: confined, by the python3 of the base build builds in
 * (the target's, or its `build_in` builder's) in that image tree (oci/rootfs.h), with a build environment of pinned wheels.
 *
 * The answer is cached (kind "sdisthook", the answer a blob) by the
 * sdist's sha256, the interpreter and its version, the machine, the
 * layers of the tree and the build environment's wheels: a second pin of
 * the same inputs runs no backend.  Nothing is run when the host cannot
 * execute the base (another machine: envbuild does not emulate) or the
 * base has no python3; the caller is told so and keeps the static
 * requires.
 *
 * Layering (sources floor): assemble/ may use python/, oci/, sandbox/ and
 * the ground floor; never stage/ or cmd/.  Options are borrowed; the
 * strings returned are the caller's.
 */
#ifndef EB_ASSEMBLE_SDISTHOOK_H
#define EB_ASSEMBLE_SDISTHOOK_H

#include <stddef.h>

#include "oci/blobstore.h"
#include "python/target.h"
#include "util/error.h"

/* One wheel of the build environment. */
struct eb_sdisthook_wheel {
	const char *name;    /* normalised */
	const char *version;
	const char *digest;  /* "sha256:<hex>", a blob of the store */
};

struct eb_sdisthook_opts {
	struct eb_blobstore *bs;
	const char *sdist_digest;   /* a blob of bs */
	const char *sdist_filename; /* for messages */
	const char *name, *version; /* the pin */
	const struct eb_pytarget *py; /* the base's Python, detected */
	const char *const *layers;  /* the base's layer blobs, oldest first */
	size_t nlayers;
	const struct eb_sdisthook_wheel *env;
	size_t nenv;
};

enum eb_sdisthook_status {
	EB_SDISTHOOK_ASKED,   /* the backend answered (now) */
	EB_SDISTHOOK_CACHED,  /* its answer to these inputs, from the cache */
	EB_SDISTHOOK_FOREIGN, /* the host cannot execute the base: nothing run */
	EB_SDISTHOOK_NOPYTHON /* the base has no python3: nothing run */
};

/* *reqs gets [build-system] requires then what the hook added (PEP 508
 * lines, without duplicates) unless *status is FOREIGN or NOPYTHON;
 * host gets the host's machine ("x86_64").  A backend that fails is an
 * error naming the sdist, with the backend's output. */
int eb_sdisthook_requires(const struct eb_sdisthook_opts *o, char ***reqs, size_t *n,
			  enum eb_sdisthook_status *status, char *host, size_t hostlen,
			  struct eb_error **err);

#endif
