/*
 * git.h - the little envbuild needs from git (libgit2): the repository a
 * spec lives in, HEAD, the origin URL (for org.opencontainers.image.source,
 * credentials stripped), which inputs have uncommitted changes, whether the
 * lockfile is tracked or ignored, committing the lockfile alone, and when
 * a target's inputs last changed (its inputs named by envspec/, which is all
 * this module takes from it).
 *
 * Ownership: eb_git_open() returns a handle freed with eb_git_free();
 * strings returned are the caller's.
 *
 * Layering (service floor): lock/ may use envspec/, pin/, ref/ and util/;
 * never assemble/, stage/, cmd/ or the network (what a build records is
 * stage/lockflow.c's).
 */
#ifndef EB_LOCK_GIT_H
#define EB_LOCK_GIT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct eb_git;

/* Initialise libgit2 once for the whole process (shut down at exit):
 * each initialisation from zero loads the system CA bundle (libgit2's TLS
 * backend), which a command opening the repository several times paid
 * each time.  eb_git_open() calls it; other users of libgit2 call it
 * before their own git_libgit2_init(). */
void eb_git_lib_init(void);
/* 0 when neither dir nor any directory above it has a ".git" entry
 * (directory, worktree file or link): dir is then in no work tree, and
 * libgit2 need not be started to find that out; 1 otherwise. */
int eb_git_maybe_repo(const char *dir);
/* Find the repository containing dir.  -EB_ENOTFOUND when dir is not in
 * a git repository (envbuild then works without git). */
int eb_git_open(struct eb_git **out, const char *dir, struct eb_error **err);
void eb_git_free(struct eb_git *g);
/* HEAD's commit id (40 hex), or NULL for a repository without commits. */
char *eb_git_head(struct eb_git *g);
/* origin's URL without "user:password@", or NULL. */
char *eb_git_origin(struct eb_git *g);

/* path (absolute or relative to the current directory) relative to the
 * work tree ("ml/envbuild.yaml"), or NULL when outside it; caller frees. */
char *eb_git_relpath(struct eb_git *g, const char *path);

/* A local clone of g's repository in dest (a new directory) with commit
 * (40 hex) checked out, detached: the tree a build of that commit sees,
 * with the history its image times come from. */
int eb_git_clone_at(struct eb_git *g, const char *commit, const char *dest,
		    struct eb_error **err);

enum eb_git_state { EB_GIT_CLEAN = 0, EB_GIT_MODIFIED, EB_GIT_UNTRACKED, EB_GIT_IGNORED };
/* State of a path (absolute or relative to the current directory). */
int eb_git_path_state(struct eb_git *g, const char *path, enum eb_git_state *out,
		      struct eb_error **err);
/* 1 when a tracked file under any of paths (files or directories) has
 * staged or unstaged changes (*first names it; caller frees), 0 when
 * clean, negative on error. */
int eb_git_dirty(struct eb_git *g, const char *const *paths, size_t n, char **first,
		 struct eb_error **err);
/* Commit the file at path alone (whatever else is staged or modified stays
 * as it is), with message, author and committer from git config; HEAD
 * moves to the new commit.  *id_out (may be NULL) gets its id; caller frees. */
int eb_git_commit_file(struct eb_git *g, const char *path, const char *message, char **id_out,
		       struct eb_error **err);

/* The committer time of the newest commit reachable from HEAD (first
 * parents compared; a root commit against nothing) that changed any of
 * paths (files or directories, absolute or relative to the current
 * directory; lockfiles, *envbuild.lock, below them do not count): 1 and
 * *time_out set, or 0 when none did (no commits, untracked paths,
 * errors). */
int eb_git_last_change(struct eb_git *g, const char *const *paths, size_t n, int64_t *time_out);

struct eb_spec;
struct eb_spec_target;
/* The image `created` time of target t: the last commit that changed one
 * of its inputs (its section of the spec and the spec-wide keys it
 * inherits, its requirements files, its files sources) when the spec is
 * in a git repository, so an edit of another target, or a commit of
 * envbuild.lock alone, changes nothing; else fallback (SOURCE_DATE_EPOCH,
 * or 0). */
int64_t eb_git_inputs_epoch(const struct eb_spec *spec, const struct eb_spec_target *t,
			    int64_t fallback);

#endif
