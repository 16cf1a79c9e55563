/*
 * fs.h - file helpers: bounded reads, atomic writes, lexical path handling.
 *
 * Ownership: strings returned are the caller's (free()).  eb_fs_read_file
 * fills a caller-initialised eb_buf.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_FS_H
#define EB_UTIL_FS_H

#include <stddef.h>
#include "util/buf.h"
#include "util/error.h"
#include "util/fs_remove.h" /* eb_fs_remove_tree */

/* Read a whole file into out (appending), failing with EB_ETOOBIG past max
 * bytes (0 = no cap).  "-" reads standard input. */
int eb_fs_read_file(struct eb_buf *out, const char *path, size_t max, struct eb_error **err);
/* Read a whole file that must be a regular file inside root: the path is
 * opened (without blocking, so a fifo cannot hang the read), and the file
 * actually opened, symlinks resolved, must lie in root's real path.  A
 * fifo, device, directory, /dev/stdin or a symlink leading out fails with
 * EB_EINVALID and a message saying which; a missing file with
 * EB_ENOTFOUND.  root NULL: no confinement, regular file still required. */
int eb_fs_read_confined(struct eb_buf *out, const char *path, const char *root, size_t max,
			struct eb_error **err);
/* 1 when the real path of `path` (which must exist) is root's real path or
 * below it, 0 when not, <0 with *err when either cannot be resolved. */
int eb_path_inside(const char *path, const char *root, struct eb_error **err);
/* Write data to path through a temp file in the same directory, fsync and
 * rename: readers see the old file or the new one, never a torn one. */
int eb_fs_write_atomic(const char *path, const void *data, size_t len, int mode,
		       struct eb_error **err);
/* The same without the fsync: never torn, but a power cut may lose it or
 * leave it empty.  For what can be rebuilt and is checked when read (a
 * cache record) or lives only for the run (a staged file). */
int eb_fs_write_replace(const char *path, const void *data, size_t len, int mode,
			struct eb_error **err);
/* mkdir -p: create path and missing parents (mode for new ones). */
int eb_fs_mkdir_p(const char *path, int mode, struct eb_error **err);
/* "a" + "b" -> "a/b"; an absolute b is returned as is. */
char *eb_path_join(const char *a, const char *b);
/* Directory part ("." when none), like dirname(3) but without modifying. */
char *eb_path_dirname(const char *path);
/* Last component of path (pointer into path). */
const char *eb_path_basename(const char *path);
/* Lexically normalise: collapse "//", remove ".", resolve ".." against
 * earlier components.  Returns NULL if a relative path climbs above its
 * start ("../x", "a/../../x").  An absolute path stays absolute. */
char *eb_path_normalize(const char *path);

#endif
