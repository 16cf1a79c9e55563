/*
 * version.h - Debian package versions ([epoch:]upstream[-revision]) and
 * their order, exactly as dpkg orders them (lib/dpkg/version.c).
 *
 * Why not libdpkg (libdpkg-dev): it is a static library whose API Debian
 * marks unstable ("libdpkg is not a public library"), its error paths
 * longjmp out through ohshit() and its parser state is global — neither
 * fits envbuild's one-error-type, no-exit library.  The part envbuild
 * needs is dpkg's 40-line verrevcmp(), reproduced here and tested against
 * `dpkg --compare-versions` on thousands of real pairs
 * (tests/unit/check_debian_version.c, tests/cli/apt_version.sh).
 *
 * Uses util/ only.  Ownership: eb_debver owns its strings (release with
 * eb_debver_release).  Parse errors are EB_EINVALID with `col` the 1-based
 * column inside the string.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_VERSION_H
#define EB_DEBIAN_VERSION_H

#include <stddef.h>

#include "util/error.h"

struct eb_debver {
	unsigned epoch;
	char *upstream; /* owned, non-empty */
	char *revision; /* owned, "" when the version has none */
};

/* Parse strictly: what dpkg accepts without a warning (upstream starts
 * with a digit; upstream [A-Za-z0-9.+~:-];
 * revision [A-Za-z0-9.+~]; epoch a decimal number). */
int eb_debver_parse(struct eb_debver *out, const char *s, struct eb_error **err);
void eb_debver_release(struct eb_debver *v);
/* <0, 0, >0: dpkg's order (epoch, then upstream, then revision). */
int eb_debver_cmp(const struct eb_debver *a, const struct eb_debver *b);
/* Compare two version strings; a string that does not parse strictly is
 * split the lenient way dpkg does (epoch before the first ':', revision
 * after the last '-'), so any two strings compare. */
int eb_debver_cmp_str(const char *a, const char *b);

/* dpkg's relations of a dependency field. */
enum eb_debrel { EB_REL_ANY = 0, EB_REL_LT, EB_REL_LE, EB_REL_EQ, EB_REL_GE, EB_REL_GT };

/* 1 when version `have` satisfies `rel want`. */
int eb_debver_satisfies(const char *have, enum eb_debrel rel, const char *want);
const char *eb_debrel_str(enum eb_debrel rel);

#endif
