/*
 * layerin.c - a layer blob read as tar with its diff_id checked (see
 * layerin.h): a "raw" libarchive reader decompresses, a callback hashes
 * what it hands to the tar reader.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci/layerin.h"
#include "util/alloc.h"
#include "util/digest.h"

struct eb_layerin {
	char *path, *diff_id;
	struct archive *tar;
	struct archive *raw; /* any filter, "raw" format: the uncompressed tar */
	struct eb_sha256 h;
	int hashing;
	char buf[1 << 16];
};

static la_ssize_t raw_read(struct archive *a, void *ud, const void **buf)
{
	struct eb_layerin *in = ud;
	la_ssize_t n = archive_read_data(in->raw, in->buf, sizeof(in->buf));

	if (n < 0) {
		archive_set_error(a, EIO, "%s", archive_error_string(in->raw));
		return -1;
	}
	eb_sha256_update(&in->h, in->buf, (size_t)n);
	*buf = in->buf;
	return n;
}

int eb_layerin_open(struct eb_layerin **out, const char *path, const char *diff_id,
		    struct eb_error **err)
{
	struct eb_layerin *in = eb_xcalloc(1, sizeof(*in));
	struct archive_entry *re;

	*out = NULL;
	in->path = eb_xstrdup(path);
	in->tar = archive_read_new();
	if (!in->tar)
		abort();
	archive_read_support_format_tar(in->tar);
	if (!diff_id || !diff_id[0]) {
		archive_read_support_filter_all(in->tar);
		if (archive_read_open_filename(in->tar, path, 1 << 16) != ARCHIVE_OK)
			goto fail;
		*out = in;
		return 0;
	}
	in->diff_id = eb_xstrdup(diff_id);
	eb_sha256_init(&in->h);
	in->hashing = 1;
	in->raw = archive_read_new();
	if (!in->raw)
		abort();
	archive_read_support_filter_all(in->raw);
	archive_read_support_format_raw(in->raw);
	if (archive_read_open_filename(in->raw, path, 1 << 16) != ARCHIVE_OK ||
	    archive_read_next_header(in->raw, &re) != ARCHIVE_OK) {
		eb_error_set(err, EB_EIO, "cannot read base layer '%s': %s", path,
			     archive_error_string(in->raw));
		eb_layerin_free(in);
		return -EB_EIO;
	}
	if (archive_read_open(in->tar, in, NULL, raw_read, NULL) != ARCHIVE_OK)
		goto fail;
	*out = in;
	return 0;
fail:
	eb_error_set(err, EB_EIO, "cannot read base layer '%s': %s", path,
		     archive_error_string(in->tar));
	eb_layerin_free(in);
	return -EB_EIO;
}

struct archive *eb_layerin_archive(struct eb_layerin *in)
{
	return in->tar;
}

int eb_layerin_finish(struct eb_layerin *in, struct eb_error **err)
{
	char got[EB_DIGEST_STR_LEN + 1];
	const void *buf;
	la_ssize_t n;

	if (!in->hashing)
		return 0;
	while ((n = raw_read(in->tar, in, &buf)) > 0)
		;
	eb_sha256_final(&in->h, got);
	in->hashing = 0;
	if (n < 0)
		return eb_error_set(err, EB_EINVALID, "base layer '%s' is not readable: %s",
				    in->path, archive_error_string(in->tar));
	if (strcmp(got, in->diff_id) != 0)
		return eb_error_set(err, EB_EINVALID,
				    "base layer '%s' does not match the image config: its content "
				    "hashes to %s, the config's diff_id is %s",
				    in->path, got, in->diff_id);
	return 0;
}

void eb_layerin_free(struct eb_layerin *in)
{
	if (!in)
		return;
	archive_read_free(in->tar);
	if (in->hashing)
		eb_sha256_abort(&in->h);
	archive_read_free(in->raw);
	free(in->path);
	free(in->diff_id);
	free(in);
}
