/*
 * lockflow.h - how build, push and lock use the lockfile: decide which
 * lock (if any) guides a build, refuse stale locks under --locked and
 * --frozen, record what a build produced, commit the lockfile.
 *
 * Layering (stage floor): may use assemble/, lock/ and everything below; never
 * cmd/.  It may print one-line notes ("re-locking", "committed") to
 * stderr; errors go through err.
 *
 * Ownership: a flow owns its spec and lock; eb_lockflow_end() frees them.
 */
#ifndef EB_STAGE_LOCKFLOW_H
#define EB_STAGE_LOCKFLOW_H

#include <jansson.h>

#include "assemble/build.h"
#include "envspec/spec.h"
#include "util/error.h"

enum eb_lock_mode {
	EB_LOCK_AUTO = 0, /* use a fresh lock, re-lock a stale one */
	EB_LOCK_LOCKED,   /* the lock must be fresh; inputs never change */
	EB_LOCK_FROZEN,   /* the lock as it is, no resolution at all */
	EB_LOCK_UPGRADE,  /* resolve everything again (lock --upgrade) */
	EB_LOCK_INSPECT,  /* only load and judge it (lock --check) */
};

struct eb_lockflow {
	struct eb_spec *spec;
	char checksum[65];
	char *path;    /* the lockfile */
	json_t *lock;  /* loaded or new */
	int existed;   /* a lockfile was there */
	int fresh;
	char *why;     /* why it is stale */
	enum eb_lock_mode mode;
	char *source_url;
	char *revision;
};

/* Take spec (the flow owns it from now on, even on failure) and load its
 * lock; fill the build options' spec, lock and frozen fields. */
int eb_lockflow_begin(struct eb_lockflow *lf, struct eb_spec *spec, enum eb_lock_mode mode,
		      struct eb_build_options *bo, struct eb_error **err);
/* After a build: verify outputs against the lock (LOCKED/FROZEN), record
 * inputs and outputs, write the lockfile when it changed.  *written is set
 * when the file was (re)written. */
int eb_lockflow_record(struct eb_lockflow *lf, const struct eb_build_report *rep,
		       const char *compression, const char *compressor, int *written,
		       struct eb_error **err);
int eb_lockflow_save(struct eb_lockflow *lf, int *written, struct eb_error **err);
void eb_lockflow_end(struct eb_lockflow *lf);
/* Labels from git: org.opencontainers.image.source from origin when it is
 * a network URL (a local path would make digests depend on where the
 * clone is), and the revision (HEAD) only when asked, since a label with
 * the commit makes every commit a new image.  Strings kept in lf. */
void eb_lockflow_labels(struct eb_lockflow *lf, struct eb_build_options *bo, int revision);
/* Warn (stderr) when the lockfile is untracked or ignored by git. */
void eb_lockflow_git_warn(const struct eb_lockflow *lf);
/* Commit the lockfile alone (--commit), with a message naming verb and
 * every target's digest. */
int eb_lockflow_commit(const struct eb_lockflow *lf, const char *verb,
		       const struct eb_build_report *rep, struct eb_error **err);

#endif
