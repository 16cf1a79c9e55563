/*
 * source.h - layer sources: the kinds of thing a target's image gets
 * layers from above its base.  `files` entries and pinned Python wheels
 * are the first two; Debian packages are next.
 *
 * A source plans its layers for a target and platform (each with a key
 * over every input of its bytes, the layer cache's key), writes them
 * through the layer writer into the blob store (or takes them from the
 * cache), and reports what it installed for the lock.  build.c assembles
 * base + each source's layers, in the order of eb_sources[], + config; it
 * knows no source by name, and no source knows another.
 *
 * May use: oci/ (blob store, layer writer), envspec/, python/, registry/ (through
 * the build options), util/.  Never: reads or writes the lock itself (the
 * lock is borrowed from the options), prints, or writes outside the blob
 * store.
 *
 * Adding a source (say Debian packages, src/debian/):
 *  1. write src/assemble/source_<name>.c with a `const struct eb_source_ops
 *     eb_source_<name>` (the functions below; leave out what it does not
 *     need) and declare it at the end of this file;
 *  2. put it in eb_sources[] (source.c) at its place in the stack: the
 *     array is bottom to top, and what changes least goes lowest, so that
 *     a change above leaves the layers below it (and their cache entries)
 *     as they were: system packages, then Python packages, then files;
 *  3. what it installed goes into the struct eb_build_platform it is
 *     handed in report() (add a field there, and the lock writes it);
 *  4. add the new file to Makefile.am.
 * No other source, and nothing in build.c, changes.
 *
 * Ownership: a source's state (start/finish) and a plan's state
 * (plan/plan_release) belong to the source; the context is borrowed for
 * the whole build; layers written go to the caller's array (created_by
 * heap-allocated, the caller frees it).
 */
#ifndef EB_BUILD_SOURCE_H
#define EB_BUILD_SOURCE_H

#include <stddef.h>

#include "assemble/pydist.h"
#include "oci/basefs.h"
#include "oci/blobstore.h"
#include "envspec/spec.h"
#include "util/diag.h"
#include "util/digest.h"
#include "util/error.h"

/* build.c drives the sources; a source fills build.h's types through
 * these pointers (a forward declaration keeps the include one way). */
struct eb_build_options;
struct eb_build_layer;
struct eb_build_platform;

/* What every source may use during a build (borrowed). */
struct eb_source_ctx {
	const struct eb_build_options *o;
	const struct eb_spec *spec;
	struct eb_blobstore *bs;
	struct eb_diag_list *diags;
};

/* The base image, as sources see it: its layer blobs in the store, oldest
 * first, and what its config says they hold. */
struct eb_source_base {
	int present; /* 0: scratch */
	const char *const *layers;   /* blob paths */
	const char *const *diff_ids; /* entries may be NULL when the config has none */
	size_t nlayers;
	/* The digest of what the base reference names: an index for a
	 * multi-platform base (the other platforms of the same base are read
	 * through it, assemble/bcsibling.h), else the manifest; NULL for
	 * scratch. */
	const char *top;
	/* The base's filesystem from its layers' headers (oci/basefs.h; empty
	 * for scratch): loaded when a source's needs_base() says so, else
	 * NULL. */
	const struct eb_basefs *fs;
	/* The builder's image when the target names one (`build_in:`): its
	 * sdists are built there, not in this base.  NULL: none. */
	struct eb_pybuilder *builder;
};

/* One layer a source means to write. */
struct eb_source_layer_plan {
	/* sha256 over every input of the layer's bytes: equal keys, equal
	 * layers.  (A files layer keys its inputs by path here; the layer
	 * writer keys the bytes of what the paths hold.) */
	char key[EB_DIGEST_STR_LEN + 1];
	const char *created_by; /* the image history's line (owned by the plan) */
};

/* A source's layers for one target and platform. */
struct eb_source_plan {
	struct eb_source_layer_plan *layers;
	size_t n;
	void *state; /* the source's own */
};

struct eb_source {
	const struct eb_source_ops *ops;
	const struct eb_source_ctx *ctx;
	void *state; /* the source's own, from start() to finish() */
};

struct eb_source_ops {
	const char *name; /* "files", "python", "debian" */
	/* 1: its layers are part of the image a builder target lends to the
	 * targets that name it in `build_in` (the base and these: system
	 * packages, the compiler), so a build of such a target writes them
	 * for the builder first, even when the builder is not selected. */
	int lends_build_env;
	/* Once per build, for every selected target, before any base is read:
	 * work that needs no base.  NULL: none. */
	int (*start)(struct eb_source *s, struct eb_error **err);
	/* 1 when planning t reads the base's layer bytes or its filesystem
	 * (a build that writes no output then still fetches them, and
	 * base->fs is loaded).  NULL: never. */
	int (*needs_base)(const struct eb_spec_target *t);
	/* Plan target t's layers for platform on base (empty: nothing from
	 * this source).  Findings about the user's input go to ctx->diags; an
	 * error stops the build. */
	int (*plan)(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
		    const struct eb_source_base *base, struct eb_source_plan *plan,
		    struct eb_error **err);
	/* Write plan->n layers (or take them from the cache) into out[0..n). */
	int (*write)(struct eb_source *s, struct eb_source_plan *plan, struct eb_build_layer *out,
		     struct eb_error **err);
	/* What the planned layers install, for the lock.  NULL: nothing. */
	void (*report)(struct eb_source *s, const struct eb_source_plan *plan,
		       struct eb_build_platform *bp);
	void (*plan_release)(struct eb_source_plan *plan);
	void (*finish)(struct eb_source *s); /* NULL: no state */
};

/* The sources, bottom of the image to top, NULL-terminated (source.c). */
extern const struct eb_source_ops *const eb_sources[];

/* The sources so far. */
extern const struct eb_source_ops eb_source_python;
extern const struct eb_source_ops eb_source_files;
extern const struct eb_source_ops eb_source_debian;
extern const struct eb_source_ops eb_source_accounts;
extern const struct eb_source_ops eb_source_basebc;

#endif
