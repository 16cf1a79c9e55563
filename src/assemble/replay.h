/*
 * replay.h - the deterministic work of Debian's maintainer scripts and
 * triggers that envbuild does not skip, replayed with the image's own
 * binaries in the sandbox (src/sandbox/), into one layer above the
 * `apt:` packages:
 *
 *   py3compile     __pycache__/NAME.cpython-XY.pyc for the .py files the
 *                  packages add under /usr/lib/python3/dist-packages and,
 *                  when python3.X itself is among them, the standard
 *                  library /usr/lib/python3.X (assemble/bytecode.h; with
 *                  `bytecode: false`, not done);
 *   ldconfig       libc-bin's trigger: /etc/ld.so.cache, when the packages
 *                  add a shared library or an /etc/ld.so.conf.d entry;
 *   ca-certificates  its postinst and update-ca-certificates:
 *                  /etc/ca-certificates.conf (every certificate of
 *                  /usr/share/ca-certificates, as the default debconf
 *                  answer selects them) and /etc/ssl/certs (the bundle
 *                  ca-certificates.crt and the hash links), when the
 *                  packages add certificates.
 *
 * The pyc for a package's modules lives in this layer rather than in the
 * package's own: the interpreter that compiles them is often in the same
 * package layers, and must be there before anything compiles.  The layer
 * is keyed by the base's layers and by what it reads of the package
 * layers (shared libraries, ld.so.conf, python3.X, the certificates and
 * the programs it runs: their paths, modes and bytes, digested once per
 * layer), so it is rebuilt when one of those changes and reused when a
 * package it cannot see (a program, documentation, the dpkg database)
 * does.  Nothing to replay: no layer.
 *
 * Uses assemble/bytecode, sandbox/, oci/ and util/ (libarchive, through
 * oci/layerin, for the key).  Ownership: inputs
 * are borrowed; out->created_by and the report are the caller's.
 */
#ifndef EB_ASSEMBLE_REPLAY_H
#define EB_ASSEMBLE_REPLAY_H

#include <stddef.h>

#include "assemble/build.h"
#include "oci/blobstore.h"
#include "oci/layer.h"
#include "util/diag.h"
#include "util/error.h"

/* What was replayed (for EB235 and the build output). */
struct eb_replay_report {
	int ldconfig, ca_certificates, py3compile;
	size_t pyc_compiled, pyc_reused;
};

/* Bumped whenever the replay layer's bytes may change for the same inputs. */
#define EB_REPLAY_FORMAT 2

/* base: layer blobs and diff_ids (oldest first); pkgs: the package
 * layers just written (their blobs in bs).  *out: the layer, or digest ""
 * when there was nothing to replay. */
int eb_replay_write(struct eb_blobstore *bs, const char *const *base_layers,
		    const char *const *base_diff_ids, size_t nbase,
		    const struct eb_build_layer *pkgs, size_t npkgs,
		    const struct eb_layer_options *lo, int bytecode, const char *what,
		    const char *spec_path, struct eb_diag_list *diags, struct eb_build_layer *out,
		    struct eb_replay_report *rep, struct eb_error **err) EB_WUR;

#endif
