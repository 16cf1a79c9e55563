/*
 * resolve.h - from apt sources and exact pins to the .debs a target
 * installs: fetch and verify each suite's Release and Packages indexes
 * (eb_apt_fetch), then check the pins against them and against the base
 * image's dpkg status (eb_apt_resolve).
 *
 * Fetching: InRelease (or Release + Release.gpg when the suite has no
 * InRelease), verified with gpgv against the source's keyring (gpg.h);
 * Valid-Until honoured unless the source opts out; Packages.xz, .gz or
 * plain, per component, for the architecture and for "all" when the
 * Release lists a binary-all index, each checked against the Release's
 * size and SHA256 before it is decompressed.  Nothing unverified is parsed.
 *
 * Resolving: each pin must exist at exactly its version.  Every Depends
 * and Pre-Depends group of every pin must be satisfied by an installed
 * base package, a pin, or a Provides of either; the error lists every
 * missing pin at once, with the version the sources have, following the
 * missing packages' own dependencies so that one edit fixes it.  Conflicts
 * and Breaks between pins and the base are errors.  Recommends and
 * Suggests are ignored.
 *
 * Uses util/, registry/http (to become net/) and the other debian/ modules.  Ownership: the
 * structs own their strings; release with the matching _release.  Input
 * structs are borrowed.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_RESOLVE_H
#define EB_DEBIAN_RESOLVE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "debian/packages.h"
#include "util/error.h"

struct eb_http_client;
struct eb_blobstore;

struct eb_apt_source {
	const char *url;               /* archive root, e.g. http://deb.debian.org/debian */
	const char *suite;
	const char *const *components;
	size_t ncomponents;
	const char *keyring;           /* signed_by, a path */
	int check_valid_until;
};

/* What the lock records about one source. */
struct eb_apt_release_info {
	char *url, *suite;  /* owned */
	char *digest;       /* "sha256:..." of the InRelease (or Release) as fetched */
	char *date;         /* the Release's Date field */
	char *fingerprint;  /* of the key that signed it */
	char *signature;    /* "sha256:..." of Release.gpg, or NULL for an InRelease */
};

/* The verified indexes of every source for one architecture. */
struct eb_apt_indexes {
	struct eb_debindex idx;             /* sorted */
	size_t *source_of;                  /* idx.sources[k] came from source_of[k] */
	struct eb_apt_release_info *releases; /* one per source */
	size_t nreleases;
};

int eb_apt_fetch(struct eb_apt_indexes *out, struct eb_http_client *http,
		 const struct eb_apt_source *sources, size_t nsources, const char *arch,
		 time_t now, struct eb_error **err);
/* The same, keeping every Release, signature and Packages index fetched
 * in bs by digest (bs may be NULL).  want (NULL, or one per source): the
 * Release digest the lock recorded, taken from bs when there and checked
 * (bytes and signature) either way; want_sig the same for a detached
 * Release.gpg (NULL entries for an InRelease).  offline: nothing is
 * fetched, and what bs lacks is an error naming it. */
int eb_apt_fetch_cached(struct eb_apt_indexes *out, struct eb_http_client *http,
			struct eb_blobstore *bs, const struct eb_apt_source *sources,
			size_t nsources, const char *arch, time_t now, const char *const *want,
			const char *const *want_sig, int offline, struct eb_error **err);
void eb_apt_indexes_release(struct eb_apt_indexes *ix);

struct eb_apt_pin {
	const char *name;
	const char *arch; /* NULL: the target's architecture (or "all") */
	const char *version;
};

struct eb_apt_package {
	char *name, *version, *arch; /* owned */
	char *url;                   /* of the .deb */
	char *sha256;                /* 64 hex */
	uint64_t size;
	size_t source;               /* index into the sources */
};

struct eb_apt_resolution {
	struct eb_apt_package *pkgs; /* in pin order (owned) */
	size_t n;
};

/* installed: the base's /var/lib/dpkg/status, sorted (may be empty). */
int eb_apt_resolve(struct eb_apt_resolution *out, const struct eb_apt_indexes *ix,
		   const struct eb_apt_source *sources, const struct eb_debindex *installed,
		   const struct eb_apt_pin *pins, size_t npins, const char *arch,
		   struct eb_error **err);
void eb_apt_resolution_release(struct eb_apt_resolution *r);
/* 0 when the package x (from a lock) is in the verified indexes ix at its
 * name, version and architecture with the same sha256, size and URL;
 * else -EB_EINVALID saying so. */
int eb_apt_check_package(const struct eb_apt_indexes *ix, const struct eb_apt_source *sources,
			 const struct eb_apt_package *x, struct eb_error **err);

/* "linux/arm64" -> "arm64", "linux/arm/v7" -> "armhf", "linux/386" ->
 * "i386", ...; NULL for an unknown platform. */
const char *eb_apt_arch_for_platform(const char *platform);

#endif
