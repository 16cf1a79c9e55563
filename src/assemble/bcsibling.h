/*
 * bcsibling.h - bytecode for a platform this machine cannot run: the same
 * base's image for a platform it can run (the official python:* images are
 * multi-arch), when its interpreter writes the bytecode the foreign one
 * would.  Bytecode depends on the CPython version, not the CPU: a .pyc is
 * marshalled code headed by the interpreter's magic number, the same bytes
 * on every architecture of one release.
 *
 * What is compared (the foreign interpreter is never run, and neither is
 * this machine's own python3: image content only ever meets the image's
 * programs, in the sandbox):
 *  - the version X.Y of the foreign interpreter's file name
 *    (".../bin/python3.X", symlinks followed in the foreign tree) and its
 *    standard library (PREFIX/lib/python3.X/os.py) against the sibling's
 *    cache tag ("cpython-3X"), run at the same path;
 *  - the magic number, when the foreign files state it: the
 *    `MAGIC_NUMBER = (N).to_bytes(2, 'little')` line of its
 *    importlib/_bootstrap_external.py (the source frozen into that
 *    interpreter, as 3.11 writes it; a file that says it otherwise
 *    states nothing), else the first four bytes of a .pyc of its
 *    standard library (what its packager compiled);
 *  - the patch level, when the foreign files state it (PY_VERSION in
 *    PREFIX/include/python3.X/patchlevel.h, else the python3.X-minimal
 *    Version in var/lib/dpkg/status), against the sibling's
 *    sys.version_info.
 * At least one of magic and patch level must be stated, and every one
 * stated must agree; otherwise there is no sibling (the caller warns,
 * EB241).
 *
 * The sibling is the base's manifest for this machine's platform in the
 * same index the target's base came from (its top digest: a registry base
 * is pulled again by that digest, an oci: base read from its layout, which
 * must still name the same index), its layers fetched into the blob store
 * and checked against their diff_ids when unpacked.
 *
 * Uses assemble/bytecode.h, assemble/source.h (the build's context),
 * registry/, oci/, envspec/ (oci: bases), ref/ and util/.  Ownership: the
 * result is the caller's (eb_bcsibling_release); everything passed is
 * borrowed.
 */
#ifndef EB_ASSEMBLE_BCSIBLING_H
#define EB_ASSEMBLE_BCSIBLING_H

#include "assemble/bytecode.h"
#include "assemble/source.h"

struct eb_bcsibling {
	struct eb_bytecode *bc;      /* runs the sibling's interpreter (the caller may take it) */
	struct eb_bytecode_ident id; /* the sibling's */
	char *platform;              /* "linux/amd64" */
	char *manifest;              /* its manifest digest */
	char *compared;              /* "cpython-311, magic a70d0d0a (its importlib/...)" */
	char *why;                   /* no sibling: the reason, for the warning */
};

/* The sibling for target t's image for platform (which this machine cannot
 * run) on base, whose interpreter is `interpreter` (absolute path in the
 * image).  what names the image in messages.  Returns 1 with out->bc set,
 * 0 with out->why set when there is none, <0 on an error (a base that
 * cannot be read, a registry failure, the sibling's interpreter failing). */
int eb_bcsibling_find(const struct eb_source_ctx *c, const struct eb_spec_target *t,
		      const char *platform, const struct eb_source_base *base,
		      const char *interpreter, const char *what, struct eb_bcsibling *out,
		      struct eb_error **err) EB_WUR;
void eb_bcsibling_release(struct eb_bcsibling *s);

#endif
