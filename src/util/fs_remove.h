/*
 * fs_remove.h - rm -rf, below both fs.h (which includes this header, so
 * its users see eb_fs_remove_tree as before) and interrupt.h (whose
 * cleanup removes registered directories with it).
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_FS_REMOVE_H
#define EB_UTIL_FS_REMOVE_H

#include "util/error.h"

/* rm -rf: remove path and everything below it (no error when missing;
 * symlinks are removed, never followed). */
int eb_fs_remove_tree(const char *path, struct eb_error **err);

#endif
