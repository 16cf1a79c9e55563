/*
 * fs_remove.c - rm -rf (see fs_remove.h).  Apart from fs.c so that
 * interrupt.c can remove a registered directory without fs.c, which itself
 * registers its temporaries with interrupt.c: the dependency runs one way,
 * fs.c -> interrupt.c -> fs_remove.c.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

#include "util/error.h"
#include "util/fs_remove.h"

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int eb_fs_remove_tree(const char *path, struct eb_error **err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : eb_error_set_errno(err, EB_EIO, errno, "cannot remove '%s'", path);
	/* a directory made read-only (wheel files keep their modes) is still
	 * removable by its owner once writable again */
	if (nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot remove '%s'", path);
	return 0;
}
