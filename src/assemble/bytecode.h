/*
 * bytecode.h - `__pycache__/NAME.cpython-XY.pyc` for the Python modules
 * envbuild installs, compiled by the image's own interpreter run confined
 * (src/sandbox/), cached per source so nothing is compiled twice.
 *
 * The interpreter is the image's (or, for a platform this machine cannot
 * run, the same Python of another platform of the same base: see
 * assemble/bcsibling.h): its tree (the layers it is found in,
 * unpacked once per build into a staging directory of the blob store, and
 * only when something is not in the cache) is the sandbox's /, so the
 * bytecode is what that CPython would write itself.  Nothing is bound in:
 * the sources go through its stdin and the .pyc files come out through
 * its stdout (no file per module), on one run a core when there are many;
 * each .pyc becomes a blob as it arrives and is named, never held, until
 * its layer is written.
 *
 * Format (why): optimisation level 0 only (pip's and py3compile's
 * default; `-O` users are rare and would double the bytes), timestamp-
 * based pyc (PEP 3147 header: magic, flags 0, mtime, size).  The layer
 * writer gives every entry the same mtime (the layer epoch), so the
 * header's mtime is that epoch and the size the source's: valid on a
 * read-only tree with nothing written at import, and the check at import
 * is the stat the import system does anyway.  A checked hash-based pyc
 * (PEP 552) would make every import read and hash the whole source again;
 * an unchecked one would hide a later edit of the source.  (bench/startup
 * measures the import times.)
 *
 * Determinism: the driver sets PYTHONHASHSEED=0 (set and frozenset
 * constants are marshalled in hash order), compiles each file on its own
 * and drops its code object before the next one, so marshal's FLAG_REF
 * choices (which depend on reference counts: cpython#78274) do not depend
 * on which other files share the run (or how the files are shared among
 * runs); co_filename is the path in the
 * image, not where the source was staged.  The cache key of one .pyc is
 * (interpreter magic, cache tag and version, path in the image, epoch,
 * source sha256): not the platform, since another platform's image of
 * the same Python may compile it (assemble/bcsibling.h); a file that does not compile is cached as such and reported as
 * a warning each time (EB240), never a failed build.
 *
 * Uses sandbox/, oci/ (blob store, cache records, unpack) and util/.
 * Ownership: eb_bytecode_new() returns a context freed with
 * eb_bytecode_free() (which removes its tree); the layer paths, blob store
 * and diag list are borrowed for its life; compiled results are the
 * caller's (eb_bytecode_pycs_free).
 */
#ifndef EB_ASSEMBLE_BYTECODE_H
#define EB_ASSEMBLE_BYTECODE_H

#include <stddef.h>
#include <stdint.h>

#include "oci/blobstore.h"
#include "util/digest.h"
#include "util/diag.h"
#include "util/error.h"

/* Bumped whenever the .pyc bytes may change for the same source and
 * interpreter (the driver, the header). */
#define EB_BYTECODE_FORMAT 1

struct eb_bytecode;

/* What identifies the interpreter's bytecode: "0d0d0a0a" magic, the cache
 * tag ("cpython-311") and its version ("3.11.2"). */
struct eb_bytecode_ident {
	char magic[16];
	char tag[32];
	char version[32];
};

/* One .py file to compile: its absolute path in the image, and where its
 * bytes are now (a host file). */
struct eb_bytecode_src {
	const char *dest;
	const char *path;
	int64_t mtime; /* the source's mtime in the image; < 0: the epoch */
};

/* One compiled file (owned by the caller's array): its bytes are a blob
 * of the context's store, added to a layer by path (never read whole). */
struct eb_bytecode_pyc {
	char *dest; /* ".../__pycache__/NAME.cpython-311.pyc" */
	char *path; /* the blob's file */
	char digest[EB_DIGEST_STR_LEN + 1];
	uint64_t len;
};

struct eb_bytecode_stats {
	size_t compiled, reused, failed;
};

/* A context for the interpreter at `interpreter` (absolute path in the
 * image) of the tree made of layers[0..n) (blob paths, oldest first;
 * diff_ids checked when unpacked).  epoch: the layer mtime.  what names the
 * image in messages ("target 'inference' (linux/amd64)").  Nothing is read
 * yet. */
int eb_bytecode_new(struct eb_bytecode **out, struct eb_blobstore *bs, const char *const *layers,
		    const char *const *diff_ids, size_t n, const char *interpreter, int64_t epoch,
		    const char *what, struct eb_diag_list *diags, struct eb_error **err) EB_WUR;
void eb_bytecode_free(struct eb_bytecode *bc);

/* The interpreter's identity: from the cache (kind "pyinterp", keyed by
 * the layers and the interpreter path), else by running it (unpacking the
 * tree).  For the keys of the layers that hold bytecode. */
int eb_bytecode_ident(struct eb_bytecode *bc, struct eb_bytecode_ident *id,
		      struct eb_error **err) EB_WUR;

/* Compile srcs[0..n): *out gets one entry per file that compiles (in srcs'
 * order), the others a warning (EB240) at file:line:col (the spec entry
 * that installs them; file may be NULL).  Only cache misses run the
 * interpreter: in one confined run, or one a core (a share of the bytes
 * each) when there are many.  Layers may call it from several threads at
 * once: the context is shared under its lock. */
int eb_bytecode_compile(struct eb_bytecode *bc, const struct eb_bytecode_src *srcs, size_t n,
			const char *file, unsigned line, unsigned col,
			struct eb_bytecode_pyc **out, size_t *nout, struct eb_error **err) EB_WUR;
void eb_bytecode_pycs_free(struct eb_bytecode_pyc *p, size_t n);
/* The unpacked tree (made now if needed), for other programs of the same
 * image (assemble/replay.c): the context's, do not free. */
int eb_bytecode_tree(struct eb_bytecode *bc, const char **root, struct eb_error **err) EB_WUR;
/* Before the tree is made: layers from filter->from on are unpacked
 * through the filter (assemble/replay.c: only what its key covers). */
struct eb_unpack_filter;
void eb_bytecode_set_unpack_filter(struct eb_bytecode *bc, const struct eb_unpack_filter *filter);
/* Failures reported as one warning per call instead of one per file
 * (a package's own test data that does not compile by design). */
void eb_bytecode_set_quiet(struct eb_bytecode *bc, int quiet);
/* At most jobs compile runs at once (--jobs; 0, the default: one a core).
 * Never shapes a byte: a file's .pyc is the same in any run. */
void eb_bytecode_set_jobs(struct eb_bytecode *bc, int jobs);
/* Counts so far (reused: taken from the cache). */
void eb_bytecode_stats(struct eb_bytecode *bc, struct eb_bytecode_stats *st);

/* This machine's platform in OCI terms ("linux/amd64"): what the sandbox
 * can run; NULL when not known. */
const char *eb_bytecode_host_platform(void);

/* The .pyc path of a source path in the image for cache tag tag:
 * "/a/b/m.py" -> "/a/b/__pycache__/m.cpython-311.pyc"; NULL when path does
 * not end in ".py". */
char *eb_bytecode_pyc_path(const char *path, const char *tag);

#endif
