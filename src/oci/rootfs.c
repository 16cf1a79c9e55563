/*
 * rootfs.c - an image's tree kept in the cache (see rootfs.h): named by
 * its layers, unpacked by oci/unpack.c under a temporary name and renamed
 * into place whole.
 */
#define _GNU_SOURCE
#include "oci/rootfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/unpack.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/interrupt.h"

int eb_rootfs_get(struct eb_blobstore *bs, const char *const *layers, size_t n, char **dir,
		  struct eb_error **err)
{
	struct eb_sha256 h;
	char key[EB_DIGEST_STR_LEN + 1];
	char *top = NULL, *final = NULL, *tmp = NULL;
	struct stat st;
	int r = 0;

	*dir = NULL;
	eb_sha256_init(&h);
	for (size_t i = 0; i < n; i++) {
		/* blobs are named by their digest */
		const char *b = eb_path_basename(layers[i]);
		eb_sha256_update(&h, b, strlen(b));
		eb_sha256_update(&h, "\n", 1);
	}
	eb_sha256_final(&h, key);
	top = eb_path_join(eb_blobstore_root(bs), "rootfs");
	final = eb_xasprintf("%s/%s", top, key + strlen("sha256:"));
	if (stat(final, &st) == 0 && S_ISDIR(st.st_mode)) {
		*dir = final;
		free(top);
		return 0;
	}
	if ((r = eb_fs_mkdir_p(top, 0755, err)) < 0)
		goto out;
	tmp = eb_xasprintf("%s/.tmp-%s-%ld", top, key + strlen("sha256:") + 52, (long)getpid());
	(void)eb_fs_remove_tree(tmp, NULL);
	if (mkdir(tmp, 0755) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", tmp);
		goto out;
	}
	eb_interrupt_register(tmp, 1);
	/* (made searchable by everyone: the runner's unprivileged user
	 * reads the tree) */
	r = eb_oci_unpack(tmp, layers, NULL, n, err);
	if (r == 0 && rename(tmp, final) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot rename '%s'", tmp);
	(void)eb_fs_remove_tree(tmp, NULL); /* gone after the rename; or another won */
	eb_interrupt_unregister(tmp);
	if (r == 0) {
		*dir = final;
		final = NULL;
	}
out:
	free(tmp);
	free(final);
	free(top);
	return r;
}
