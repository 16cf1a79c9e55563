/*
 * gpg.h - OpenPGP verification of a suite's InRelease (or Release plus
 * Release.gpg) against the keyring the spec names in `signed_by`.
 *
 * Why gpgv and not GPGME: gpgv is Debian's standard verifier (what apt
 * runs), a single program that only verifies, trusts exactly the keyring
 * it is given and keeps no state: no agent, no trust database, no key
 * import into a home directory.  GPGME drives the full gpg with an agent
 * and a mutable keyring, and would link a library for one call.  gpgv
 * runs with an empty temporary --homedir, LC_ALL=C, and its --status-fd
 * lines are read, not its human output: a signature counts only with
 * GOODSIG and VALIDSIG and no BADSIG/ERRSIG/EXPKEYSIG/REVKEYSIG, and exit 0.
 *
 * The text envbuild parses is what gpgv wrote with --output (the signed
 * part only), never the raw download, so unsigned text around a clearsigned
 * block cannot reach the Release parser.  An ASCII-armored keyring (.asc)
 * is dearmored with `gpg --dearmor` first (gpgv reads binary keyrings).
 *
 * Uses util/ and runs gpgv/gpg as child processes.  Ownership: *out is
 * initialised by the functions and the caller releases it; *fingerprint
 * (if asked for) is the caller's.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_GPG_H
#define EB_DEBIAN_GPG_H

#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"

/* Verify a clearsigned InRelease; *out gets the signed text and
 * *fingerprint (may be NULL) the primary key's fingerprint. */
int eb_debian_verify_clearsigned(struct eb_buf *out, char **fingerprint, const void *data,
				 size_t len, const char *keyring, struct eb_error **err);
/* Verify a detached signature (Release.gpg) over data (Release). */
int eb_debian_verify_detached(char **fingerprint, const void *data, size_t len,
			      const void *sig, size_t siglen, const char *keyring,
			      struct eb_error **err);

#endif
