/*
 * lock.h - envbuild.lock: load, write (canonical JSON, atomically), the
 * input checksum, freshness, and recording what a build and a push
 * produced.  The format is specs/lockfile.md.
 *
 * The lock is a jansson tree: the format is small and documented, so the
 * code reads and edits it in place rather than mirroring it in structs.
 *
 * Ownership: eb_lock_load() returns a new reference (json_decref); strings
 * returned are the caller's; recorded values are copied.
 *
 * Layering (service floor): lock/ may use envspec/, pin/, ref/ and util/;
 * never assemble/, stage/, cmd/ or the network (what a build records is
 * stage/lockflow.c's).
 */
#ifndef EB_LOCK_LOCK_H
#define EB_LOCK_LOCK_H

#include <jansson.h>

#include "envspec/spec.h"
#include "util/error.h"

#define EB_LOCK_VERSION 1

/* The spec's lock, next to it: the spec's file name with its extension
 * (.yaml, .yml, .json) replaced by ".lock", so envbuild.yaml has
 * envbuild.lock, one.yaml one.lock and api.envbuild.yaml
 * api.envbuild.lock: specs in one directory never share a lock.  Caller
 * frees. */
char *eb_lock_path(const struct eb_spec *spec);
/* -EB_ENOTFOUND when there is no lock; -EB_EINVALID for a lock that is not
 * valid JSON or has another lockVersion. */
int eb_lock_load(json_t **out, const char *path, struct eb_error **err);
/* The canonical bytes: sorted keys, 2-space indent, final newline. */
char *eb_lock_dump(const json_t *lock);
int eb_lock_write(const char *path, const json_t *lock, struct eb_error **err);
/* A new, empty lock for spec. */
json_t *eb_lock_new(const struct eb_spec *spec);

/* The files the lock's checksum covers: the spec first, then every
 * requirements file it names and their includes (-r, -c), each once,
 * sorted; a file that cannot be read still counts.  NULL-terminated, *n
 * entries; the caller frees each and the array. */
char **eb_lock_inputs(const struct eb_spec *spec, size_t *n);
/* sha256 (hex) over the spec and every requirements file it names,
 * includes too, CRLF read as LF (specs/lockfile.md). */
int eb_lock_checksum(char out[65], const struct eb_spec *spec, struct eb_error **err);
/* 1 when lock matches checksum and has every target of spec; else 0 with
 * *why (caller frees) saying what changed. */
int eb_lock_fresh(const json_t *lock, const struct eb_spec *spec, const char *checksum,
		  char **why);

/* Stamp lock with spec's path and checksum and drop targets the spec no
 * longer has. */
void eb_lock_set_spec(json_t *lock, const struct eb_spec *spec, const char *checksum);
/* The lock's object for target (made when missing; borrowed).  What a
 * build records there is the build stage's business (stage/lockflow.c). */
json_t *eb_lock_target(json_t *lock, const char *target);
/* Record a push of target to ref (with its digest and git revision, which
 * may be NULL); a previous entry for the same ref is replaced. */
void eb_lock_record_push(json_t *lock, const char *target, const char *ref, const char *digest,
			 const char *revision);
/* Locked values for a build: the base digest of target (NULL when none),
 * and the sha256 (hex) and URL of a package on a platform. */
const char *eb_lock_base_digest(const json_t *lock, const char *target);
int eb_lock_package(const json_t *lock, const char *target, const char *platform,
		    const char *name, const char *version, const char **sha256, const char **url,
		    const char **filename);
/* The sdist a locked package's wheel was built from (its "sdist"
 * object): 1 with its sha256 (hex), URL and file name, 0 when the
 * package is no built one. */
int eb_lock_package_sdist(const json_t *lock, const char *target, const char *platform,
			  const char *name, const char *version, const char **sha256,
			  const char **url, const char **filename);
/* The locked base of target when it was locked for this reference
 * (fully qualified; a changed tag is a new input), else NULL. */
const char *eb_lock_base_for(const json_t *lock, const char *target, const char *ref);

#endif
