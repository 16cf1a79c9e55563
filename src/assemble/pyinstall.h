/*
 * pyinstall.h - pinned Python requirements into image layers: read every
 * requirement of a target, evaluate markers for the target, pick the exact
 * wheel file of each pin from the indexes, download it verified, check the
 * closure (every Requires-Dist satisfied by a pin), and install the wheels
 * into layers — large wheels one layer each, small ones grouped.
 *
 * Ownership: eb_pyenv_resolve() fills a struct released with
 * eb_pyenv_release(); layer arrays are the caller's (eb_pylayers_free).
 * The spec, index set and blob store are borrowed.
 *
 * Layering (sources floor): assemble/ may use registry/, python/, lock/,
 * oci/, net/ and the ground floor; never stage/ or cmd/. It is given a
 * checked spec and the lock by a stage.
 */
#ifndef EB_BUILD_PYINSTALL_H
#define EB_BUILD_PYINSTALL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "assemble/pydist.h"
#include "oci/blobstore.h"
#include "oci/layer.h"
#include "python/metadata.h"
#include "python/target.h"
#include "envspec/spec.h"
#include "util/diag.h"
#include "util/digest.h"
#include "util/error.h"

/* python/index.h is not included here: its names would clash with the
 * OCI image index functions of oci/image.h in files that need both. */
struct eb_pyindex_set;
struct eb_http_client;


/* Resolve every requirement of target t for platform.  base_layers are the
 * base's layer blobs (oldest first) for target detection, base_diff_ids
 * what the base's config says they hold (checked while they are read;
 * NULL: not checked).  With
 * metadata_only, wheels are not downloaded: their metadata comes from the
 * index (PEP 658) — the `check --deep` mode.  Problems in the user's input
 * (no wheel for a pin, a yanked file, hash mismatches) are errors with the
 * requirement's position.  A target without requirements resolves to an
 * empty environment without looking at the base.  With a lock (json_t,
 * borrowed), each pin takes the file the lock names (by sha256) from the
 * index; with frozen, no index page is read: the locked URL is fetched and
 * checked against the locked sha256. */
int eb_pyenv_resolve(struct eb_pyenv *out, const struct eb_spec *spec,
		     const struct eb_spec_target *t, const char *platform,
		     const char *const *base_layers, const char *const *base_diff_ids, size_t nbase,
		     struct eb_pyindex_set *idx,
		     struct eb_blobstore *bs, int metadata_only, const json_t *lock, int frozen,
		     struct eb_diag_list *diags, struct eb_error **err);
struct eb_basefs;
/* The base's Python (interpreter, site-packages, libc, installed
 * distributions) for platform, through the "pytarget" cache record keyed
 * by the layers' digests, diff_ids, platform and overrides: a base is
 * read once per cache, by `build` and `pin` alike.  diff_ids and fs may
 * be NULL; *t is released with eb_pytarget_release(). */
int eb_pyenv_detect(struct eb_pytarget *t, struct eb_blobstore *bs, const char *const *layers,
		    const char *const *diff_ids, const struct eb_basefs *fs, size_t nlayers,
		    const char *platform, const struct eb_pytarget_overrides *ov,
		    struct eb_error **err);
/* eb_pyenv_resolve() with the base's file-tree view (NULL: none) built from
 * base_layers with their diff_ids checked: a detection that misses its
 * cache reads only the layers the answers need (eb_pytarget_detect_fs).
 * builder: the image t's sdists are built in (t's `build_in`, made on
 * the first sdist; NULL: t's own base). */
int eb_pyenv_resolve_fs(struct eb_pyenv *out, const struct eb_spec *spec,
			const struct eb_spec_target *t, const char *platform,
			const char *const *base_layers, const char *const *base_diff_ids,
			const struct eb_basefs *base_fs, size_t nbase, struct eb_pyindex_set *idx,
			struct eb_blobstore *bs, int metadata_only, const json_t *lock, int frozen,
			struct eb_pybuilder *builder, struct eb_diag_list *diags,
			struct eb_error **err);
void eb_pyenv_release(struct eb_pyenv *e);

struct eb_basefs;
/* Compare each pin with the distributions the base has (e.target.dists):
 * same version -> in_base and a note (EB225) at the pin; another version
 * -> replaces, with the paths to remove: the RECORD's files and the
 * dist-info directory, and each directory that holds nothing else in the
 * base (fs, the base's filesystem; NULL: only the dist-info directory is
 * removed whole).  An upgrade or downgrade is a note (EB226).  A base
 * distribution without RECORD (Debian's python3-* packages) is not
 * removed: the new version goes to the target's site directory, which
 * comes first on sys.path (EB226 says so). */
void eb_pyenv_plan_replacements(struct eb_pyenv *e, const struct eb_basefs *fs,
				struct eb_diag_list *diags);

/* Paths two or more wheels of e install (from each wheel's zip directory,
 * the wheels in bs): the first distribution by name keeps the path, the
 * others get it in their skip[] (so their layers leave it out); different
 * bytes is warning EB260 naming both pins and the paths, the same bytes
 * no message (src/assemble/pyoverlap.c).  Errors: a wheel that cannot
 * be read (-EB_EIO, -EB_EINVALID), at its requirement. */
struct eb_blobstore;
int eb_pyenv_plan_overlaps(struct eb_pyenv *e, struct eb_blobstore *bs,
			   struct eb_diag_list *diags, struct eb_error **err);

/* The closure check: every Requires-Dist of every chosen wheel whose
 * marker holds for the target (with the extras asked for) must be pinned at
 * a version that satisfies it.  Gaps (EB220) and conflicts (EB221) go to
 * diags at the depending requirement's position; returns their count. */
size_t eb_pyenv_check_closure(const struct eb_pyenv *e, struct eb_diag_list *diags);

struct eb_pylayer {
	char digest[EB_DIGEST_STR_LEN + 1];
	char diff_id[EB_DIGEST_STR_LEN + 1];
	uint64_t size;
	char *created_by; /* "envbuild: pip install numpy==1.26.4" */
	int cached;
};

/* One package layer to write: its wheels (pointers into the pyenv it was
 * planned from), what the image history will say, and the key over every
 * input of its bytes (the wheels' digests, the scheme, the layer options):
 * an unchanged set is not extracted or compressed again, and a package
 * both targets pin is the same blob in both images. */
struct eb_pylayer_plan {
	const struct eb_pydist **dists;
	size_t n;
	char key[EB_DIGEST_STR_LEN + 1];
	char *created_by; /* "envbuild: pip install numpy==1.26.4" */
};

/* Plan the layers: each wheel of at least large_bytes its own layer
 * (sorted by name), the rest in one grouped layer; a pin the base has at
 * its version (in_base) is in none.  A layer that replaces a base
 * distribution holds a whiteout for each of its remove[] paths that the
 * new wheels do not write themselves.  Free with
 * eb_pylayer_plans_free(); the plans borrow from e. */
void eb_pyenv_plan_layers(const struct eb_pyenv *e, const struct eb_layer_options *lo,
			  uint64_t large_bytes, struct eb_pylayer_plan **out, size_t *n);
void eb_pylayer_plans_free(struct eb_pylayer_plan *p, size_t n);
/* Write one planned layer, or take it from the cache by its key; out is
 * the caller's (eb_pylayers_free for an array, or free its created_by). */
int eb_pyenv_write_layer(const struct eb_pyenv *e, const struct eb_pylayer_plan *p,
			 struct eb_blobstore *bs, const struct eb_layer_options *lo,
			 struct eb_pylayer *out, struct eb_error **err);
void eb_pylayers_free(struct eb_pylayer *l, size_t n);

/* `envbuild check --deep`: for every target and platform of the spec,
 * resolve each pin to its file from the indexes (metadata through PEP 658
 * when the index serves it, else the wheel, verified, into the cache at
 * cache_dir, NULL for the default) and run the closure check, without
 * reading any base image.  Findings go to diags. */
int eb_pyenv_check_deep(const char *spec_path, const char *cache_dir, struct eb_diag_list *diags,
			struct eb_error **err);

/* Release e's distributions only (not its target): for an environment
 * that borrows its target (a build environment, assemble/sdistpin.c). */

/* Index set for a spec: index, extra_indexes, package_indexes (routes);
 * freed with eb_pyenv_indexes_free. */
void eb_pyenv_indexes_free(struct eb_pyindex_set *s);
int eb_pyenv_indexes(struct eb_pyindex_set **out, const struct eb_spec *spec,
		     struct eb_http_client *http, struct eb_error **err);

#endif
