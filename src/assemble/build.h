/*
 * build.h - `envbuild build`: turn a checked spec into one OCI image per
 * target, without a daemon: base image from a layout, one layer per
 * `files` entry, config and manifest (an index when several platforms),
 * written as an OCI layout or a docker-archive, all-or-nothing.
 *
 * Ownership: eb_build_run() fills a report the caller releases with
 * eb_build_report_release(); options are borrowed.
 *
 * Layering (sources floor): assemble/ may use registry/, python/, lock/,
 * oci/, net/ and the ground floor; never stage/ or cmd/. It is given a
 * checked spec and the lock by a stage.
 */
#ifndef EB_BUILD_BUILD_H
#define EB_BUILD_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "oci/layer.h"
#include "util/diag.h"
#include "util/digest.h"
#include "util/error.h"

enum eb_output_type {
	EB_OUTPUT_LAYOUT = 0,  /* an OCI image layout directory per target */
	EB_OUTPUT_DOCKER_ARCHIVE, /* a docker-archive tarball (one target, one platform) */
	EB_OUTPUT_NONE,           /* only the blob store (what push needs) */
};

struct eb_progress;
struct eb_registry;
struct eb_regcache_stats;
struct eb_spec;

struct eb_build_options {
	/* The spec, loaded and checked by the caller (borrowed). */
	const struct eb_spec *spec;
	const char *target;   /* NULL: every target */
	const char *platform; /* NULL: every platform of the target */
	enum eb_output_type output_type;
	/* LAYOUT: parent directory of <target>/ (NULL: "out" next to the
	 * spec).  DOCKER_ARCHIVE: the file to write. */
	const char *output;
	const char *cache_dir; /* NULL: $XDG_CACHE_HOME/envbuild */
	struct eb_layer_options layer;
	int jobs; /* layers built at once; 0: one per online CPU */
	/* Pulls bases named by registry references (borrowed); NULL: only
	 * scratch and oci: bases can be built. */
	struct eb_registry *registry;
	/* A fresh lock to build from (borrowed; json_t): bases by their locked
	 * digest, wheels by their locked files.  NULL: resolve. */
	const json_t *lock;
	/* With lock: no resolution at all (no tag lookups, no index pages):
	 * wheels are fetched by their locked URL and sha256. */
	int frozen;
	/* With lock (--locked): a base tag must still resolve to the lock's
	 * digest (a moved tag or an edited lock is drift, an error). */
	int check_bases;
	/* The build cache shared through a registry (registry/regcache.h):
	 * the repositories read and written.  NULL: the spec's `cache:`;
	 * "": none.  Counters go to cache_stats when non-NULL. */
	const char *cache_from;
	const char *cache_to;
	struct eb_regcache_stats *cache_stats;
	/* With output NONE: re-hash every cached blob handed out (as other
	 * outputs always do), not only those whose bytes are used later. */
	int verify_cache;
	/* Where progress events go (util/progress.h; borrowed): each layer
	 * live while it is written, then written or cached; a base pulled.
	 * NULL: none. */
	struct eb_progress *progress;
	/* org.opencontainers.image.source / .revision labels (NULL: none). */
	const char *source_url;
	const char *revision;
};

struct eb_build_layer {
	char digest[EB_DIGEST_STR_LEN + 1];
	char diff_id[EB_DIGEST_STR_LEN + 1];
	uint64_t size;
	char *created_by;
	int reused; /* taken from the layer cache: nothing was compressed */
	int from_base;
};

/* A wheel installed into the image (what the lock records). */
struct eb_build_package {
	char *name;     /* normalised */
	char *version;
	char *filename;
	char *url;      /* credentials removed */
	char sha256[EB_DIGEST_STR_LEN + 1];
	int64_t size;
	/* the base had the project: at this version (in_base: not
	 * installed), or at version `replaces` (removed, then this one
	 * installed); NULL / 0 otherwise */
	int in_base;
	char *replaces;
	/* built from an sdist: its file name, URL, digest and size (NULL/""
	 * otherwise) */
	char *sdist_filename, *sdist_url;
	char sdist_sha256[EB_DIGEST_STR_LEN + 1];
	int64_t sdist_size;
};

struct eb_build_platform {
	char *platform; /* "linux/amd64" */
	char manifest[EB_DIGEST_STR_LEN + 1];
	char config[EB_DIGEST_STR_LEN + 1];
	char base_manifest[EB_DIGEST_STR_LEN + 1]; /* "" for scratch */
	struct eb_build_layer *layers;
	size_t nlayers;
	struct eb_build_package *packages; /* sorted by name */
	size_t npackages;
	char *python; /* the target's Python ("3.11") when it has packages, else NULL */
	/* Debian packages installed (json_t: {"packages": {platform: [...]},
	 * "sources": {...}}, specs/lockfile.md), or NULL; owned, released
	 * with the report. */
	json_t *apt;
	/* .pyc files of this platform's layers: compiled now, or taken from
	 * the bytecode cache (assemble/bytecode.h) */
	size_t pyc_compiled, pyc_reused;
};

struct eb_build_target {
	char *name;
	char *output; /* the layout directory or archive written */
	char *base;   /* as in the spec */
	char *base_ref; /* fully qualified ("docker.io/library/python:3.11"), oci: as written, NULL for scratch */
	char base_digest[EB_DIGEST_STR_LEN + 1]; /* "" for scratch */
	/* "docker.io/library/python" when the base came from a registry (its
	 * layers can be mounted or fetched from there), else NULL */
	char *base_repository;
	char digest[EB_DIGEST_STR_LEN + 1];      /* index when several platforms, else manifest */
	char *media_type;
	int64_t size; /* of the top document */
	struct eb_build_platform *platforms;
	size_t nplatforms;
};

struct eb_build_report {
	struct eb_build_target *targets;
	size_t ntargets;
};

/* The shared cache repository read (to = 0) or written (to = 1) by a
 * build with o, or NULL for none. */
const char *eb_build_cache_repo(const struct eb_build_options *o, int to);

/* Build the targets of o->spec (a spec the caller has checked:
 * stage/build.c), a builder (`build_in`) before the targets that name
 * it; the report keeps the spec's order.  Warnings go into diags.
 * Returns 0 or a negative code with *err set. */
int eb_build_run(const struct eb_build_options *o, struct eb_build_report *rep,
		 struct eb_diag_list *diags, struct eb_error **err);
void eb_build_report_release(struct eb_build_report *rep);

#endif
