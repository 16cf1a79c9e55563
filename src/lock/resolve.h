/*
 * resolve.h - rewrite image references in YAML files (job definitions,
 * Kubernetes manifests, CI files) to the digests recorded in envbuild.lock,
 * as `ko resolve` and docker-lock's rewrite do; and the checker for image
 * fields that `envbuild check` runs on YAML files.
 *
 * What is rewritten, in every document of a `---` stream:
 *   - a scalar value `envbuild://TARGET` anywhere (not a mapping key): the
 *     repository of the target's first pushed reference plus its digest;
 *   - the value of an `image:` key at any depth (an alias there counts
 *     for its anchor) whose reference, normalised, names the repository and tag of a
 *     `targets.<t>.image.pushed[].ref` of the lock: that repository plus the
 *     pushed digest.
 * Each becomes `REPO@sha256:...` (REPO fully qualified, as the lock has
 * it).  The digest is the pushed entry's `digest`, else the target's
 * `image.digest`.  References that carry a digest, that name no pushed tag,
 * or that are no image reference at all are left alone.
 *
 * The rewrite is textual: only the bytes of each rewritten scalar change
 * (its quotes are kept: a quoted scalar stays quoted), so comments,
 * indentation, key order, CRLF line ends and a byte order mark survive
 * byte for byte.  Positions come from libyaml's marks; the input must be
 * UTF-8.
 *
 * Ownership: eb_resolve_lock_load()/_new() return a lock index the caller
 * frees with eb_resolve_lock_free(); it copies what it needs from the JSON.
 * eb_resolve_text() appends to a caller-initialised buffer.
 *
 * Errors: a lock that is missing (-EB_ENOTFOUND) or unreadable (-EB_EIO),
 * not JSON or not lockVersion 1 (-EB_EINVALID); in a YAML file, a syntax
 * error, an unknown `envbuild://` target, a target never pushed, or a match
 * in a block scalar (`|`, `>`) is -EB_EINVALID at file:line:col.  The first
 * error stops the rewrite.
 *
 * Layering (service floor): lock/ may use envspec/, pin/, ref/ and util/;
 * never assemble/, stage/, cmd/ or the network (what a build records is
 * stage/lockflow.c's).
 */
#ifndef EB_LOCK_RESOLVE_H
#define EB_LOCK_RESOLVE_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/diag.h"
#include "util/error.h"

/* The scheme of a reference to a target of the spec: envbuild://TARGET. */
#define EB_RESOLVE_SCHEME "envbuild://"

/* The pushed references of a lock, indexed for lookups. */
struct eb_resolve_lock;

/* Read and index the lock at path (JSON, lockVersion 1). */
int eb_resolve_lock_load(struct eb_resolve_lock **out, const char *path, struct eb_error **err);
/* Index an already-loaded lock; path only names it in errors. */
int eb_resolve_lock_new(struct eb_resolve_lock **out, const json_t *lock, const char *path,
			struct eb_error **err);
void eb_resolve_lock_free(struct eb_resolve_lock *lock);

/* What a reference resolves to: "REPO@sha256:..." for value (a scalar of
 * the YAML file; image = 1 when it is the value of an image key), or NULL
 * when it is left alone.  Returns 0, or -EB_EINVALID for an unknown or
 * unpushed envbuild:// target (no position: the caller adds it).  *out is
 * the caller's (free()). */
int eb_resolve_ref(const struct eb_resolve_lock *lock, const char *value, int image, char **out,
		   struct eb_error **err);

/* Rewrite len bytes of text (file `path`, for positions) and append the
 * result to out; *nrewritten (may be NULL) gets the number of scalars
 * changed.  On error out is left as it was. */
int eb_resolve_text(const struct eb_resolve_lock *lock, const char *path, const char *text,
		    size_t len, struct eb_buf *out, size_t *nrewritten, struct eb_error **err);

/* Findings for the image fields of a YAML file (every document): an
 * `image:` value without a tag and
 * without a digest (EB103), or with the tag `latest` and no digest (EB104).
 * envbuild:// values, values with a digest and strings that are no image
 * reference (templates such as `${IMAGE}`) pass.  A file that is not valid
 * YAML gets one EB001 finding at the syntax error (a caller that already
 * reports the file's syntax errors can skip files that failed to load). */
void eb_resolve_check_images(const char *path, const char *text, size_t len,
			     struct eb_diag_list *diags);

#endif
