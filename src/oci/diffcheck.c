/*
 * diffcheck.c - a layer blob against a record's diff_id, once per cache
 * (see diffcheck.h).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

#include "oci/blobstore.h"
#include "oci/diffcheck.h"
#include "oci/layerin.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"

static char *stamp_path(const struct eb_blobstore *bs, const char *digest)
{
	return eb_xasprintf("%s/diffids/%s", eb_blobstore_root(bs), digest + 7);
}

int eb_diffcheck_layer(const struct eb_blobstore *bs, const char *digest, const char *diff_id)
{
	struct eb_layerin *in = NULL;
	struct archive *a;
	struct archive_entry *e;
	struct eb_buf b;
	char *path, *blob = NULL, *dir;
	int ok = 0, r;

	if (!eb_digest_valid(digest) || !eb_digest_valid(diff_id) ||
	    strncmp(digest, "sha256:", 7) != 0)
		return 0;
	path = stamp_path(bs, digest);
	eb_buf_init(&b, 256);
	if (eb_fs_read_file(&b, path, 256, NULL) == 0 && strcmp(b.ptr, diff_id) == 0) {
		ok = 1;
		goto done;
	}
	blob = eb_blobstore_path(bs, digest);
	if (!blob || eb_layerin_open(&in, blob, diff_id, NULL) < 0)
		goto done;
	a = eb_layerin_archive(in);
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK)
		if (archive_read_data_skip(a) != ARCHIVE_OK) {
			r = ARCHIVE_FATAL;
			break;
		}
	if (r == ARCHIVE_EOF && eb_layerin_finish(in, NULL) == 0) {
		ok = 1;
		dir = eb_xasprintf("%s/diffids", eb_blobstore_root(bs));
		if (eb_fs_mkdir_p(dir, 0755, NULL) == 0)
			(void)eb_fs_write_atomic(path, diff_id, strlen(diff_id), 0644, NULL);
		free(dir);
	}
done:
	eb_layerin_free(in);
	eb_buf_release(&b);
	free(blob);
	free(path);
	return ok;
}
