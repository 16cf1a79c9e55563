/*
 * apt.h - the Debian-packages layer of one target and platform, from the
 * spec's `apt:` pins to a filled layer builder and the lock's record: the
 * one entry point the build's layer source (assemble/source_debian.c, on the
 * seams interface) calls.
 *
 *   eb_apt_plan()  pins -> packages: from the lock entry when it matches
 *                  the pins (always under --frozen, with no index access),
 *                  else resolved against the target's verified apt sources
 *                  and the base image's dpkg status (resolve.h); makes the
 *                  layer's cache key and the lock entry;
 *   eb_apt_write() fetches the .debs it needs into the blob store by
 *                  their locked URL and SHA256 (a blob already there is not
 *                  fetched; a package whose layer is made and whose derived
 *                  data the cache has is not needed) and writes them into
 *                  the builders (deb.h).
 *
 * Lock entry (targets.<t>.apt, one per target): {"sources": [{url, suite,
 * release: "sha256:...", date, signedBy}], "packages": {PLATFORM: [{name,
 * version, architecture, url, sha256, size}]}}.
 *
 * Uses envspec/, oci/ (blob store, layer builder), net/ (HTTP), the
 * other debian/ modules, jansson.  Never prints; never writes
 * outside the blob store and the caller's stage directory.  Ownership: a
 * plan owns everything in it (eb_apt_plan_release); inputs are borrowed.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_APT_H
#define EB_DEBIAN_APT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "debian/deb.h"
#include "debian/resolve.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/error.h"

struct eb_spec;
struct eb_spec_target;
struct eb_blobstore;
struct eb_http_client;
struct eb_layer_builder;

/* One layer of the plan: a large package alone, a bucket of small
 * packages (by a hash of their names, so a changed pin rebuilds one
 * bucket), or (the last one) the dpkg database: status and alternatives. */
struct eb_apt_layer {
	char key[EB_DIGEST_STR_LEN + 1]; /* layer cache key */
	size_t pkg;                      /* index in res of a large package's layer, else (size_t)-1 */
	char *created_by;                /* history line (owned) */
};

struct eb_apt_plan {
	struct eb_apt_resolution res;   /* the packages, in pin order */
	struct eb_apt_layer *layers;    /* bottom first; the last holds the status (owned) */
	size_t nlayers;
	size_t *layer_of;               /* package i's files go to layers[layer_of[i]] (owned) */
	json_t *sources;                /* the lock's "sources" array (owned reference) */
	json_t *packages;               /* the lock's packages array of this platform (owned) */
	/* the base, as deb.c needs it */
	struct eb_buf status;
	char **link_paths, **link_targets;
	size_t nlinks;
};

/* base_layers: the base's layer blobs, bottom first.  locked: the lock's
 * targets.<t>.apt object or NULL.  A target without `apt:` gets an empty
 * plan (res.n == 0, no layers) and no network access.  A package whose
 * .deb is at least large_bytes (0: never) gets a layer of its own. */
int eb_apt_plan(struct eb_apt_plan *out, const struct eb_spec *spec,
		const struct eb_spec_target *t, const char *platform,
		const char *const *base_layers, size_t nbase, const json_t *locked, int frozen,
		uint64_t large_bytes, struct eb_http_client *http, time_t now,
		struct eb_error **err);
/* The same with the cache (bs; NULL: none): the base's dpkg status and
 * directory links come from the base's file-tree view (base_view, when
 * the caller has it: no layer read again), else from the cache when the
 * base was scanned before. */
struct eb_basefs;
int eb_apt_plan_cached(struct eb_apt_plan *out, const struct eb_spec *spec,
		       const struct eb_spec_target *t, const char *platform,
		       const char *const *base_layers, size_t nbase,
		       const struct eb_basefs *base_view, const json_t *locked,
		       int frozen, uint64_t large_bytes, struct eb_http_client *http,
		       struct eb_blobstore *bs, time_t now, struct eb_error **err);
/* builders: one per plan layer, in plan order. */
int eb_apt_write(struct eb_layer_builder *const *builders, const struct eb_apt_plan *plan,
		 struct eb_http_client *http, struct eb_blobstore *bs, const char *stage_dir,
		 struct eb_deb_report *report, struct eb_error **err);
void eb_apt_plan_release(struct eb_apt_plan *p);
/* Merge a platform's plan into the lock's targets.<t>.apt object (created
 * when NULL; returns it). */
json_t *eb_apt_lock_merge(json_t *apt, const char *platform, const struct eb_apt_plan *plan);

#endif
