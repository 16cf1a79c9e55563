/*
 * release.h - a suite's Release file (the signed text of InRelease, or
 * Release checked against Release.gpg): Date, Valid-Until, Suite,
 * Codename, Architectures, Components and the SHA256 list of index files.
 *
 * Parse only text whose signature was verified (debian/gpg.h); this module
 * checks nothing about signatures.  MD5Sum and SHA1 lists are ignored: a
 * Release without SHA256 is an error (apt refuses it too).
 *
 * Uses util/ and debian/control.  Ownership: eb_release owns everything in
 * it; release with eb_release_release.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_RELEASE_H
#define EB_DEBIAN_RELEASE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/error.h"

struct eb_release_file {
	char *path;   /* relative to dists/SUITE/, e.g. "main/binary-amd64/Packages.xz" */
	char *sha256; /* 64 lower-case hex */
	uint64_t size;
};

struct eb_release {
	char *suite, *codename;      /* owned, may be NULL */
	char *date_text;             /* the Date field as written (owned) */
	time_t date;
	time_t valid_until;          /* 0: no Valid-Until */
	char **architectures;        /* owned */
	size_t narch;
	char **components;           /* owned */
	size_t ncomp;
	struct eb_release_file *files; /* owned */
	size_t nfiles;
};

int eb_release_parse(struct eb_release *out, const char *data, size_t len, const char *file,
		     struct eb_error **err);
void eb_release_release(struct eb_release *r);
const struct eb_release_file *eb_release_find(const struct eb_release *r, const char *path);
/* 0 when the Release is still valid at `now` (or `ignore_valid_until`, for
 * snapshot archives whose Valid-Until is long past); otherwise EB_EINVALID
 * naming both dates.  A Date in the future by more than a day is an error
 * too (a clock or a replay problem). */
int eb_release_check_time(const struct eb_release *r, time_t now, int ignore_valid_until,
			  struct eb_error **err);
/* RFC 2822 date as Release files write it ("Sat, 10 Jun 2023 08:55:34 UTC"
 * or "+0000"); returns 0 and *out, or EB_EINVALID. */
int eb_debian_parse_date(const char *s, time_t *out, struct eb_error **err);

#endif
