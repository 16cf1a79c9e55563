/*
 * basefile.c - read one regular file of a base image (oci/basefile.h):
 * the few files the view keeps come from it, for the others it says which
 * layer made the file and at which entry, so one layer is read up to that
 * entry and no further.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

#include "oci/basefile.h"
#include "oci/layerin.h"
#include "util/alloc.h"

int eb_basefile_read(const struct eb_basefs *fs, const char *const *layers, size_t nlayers,
		     const char *path, size_t max, struct eb_buf *out, struct eb_error **err)
{
	const struct eb_basefs_node *n;
	struct eb_layerin *in = NULL;
	struct archive *a;
	struct archive_entry *e;
	char *real = NULL;
	uint32_t at = 0;
	int r, ar;

	if (!fs)
		return 0;
	if (eb_basefs_resolve(fs, path, 1, &real, NULL) < 0)
		return 0; /* a loop or a file as a parent: nothing there */
	n = eb_basefs_lookup(fs, real);
	free(real);
	if (!n || n->type != EB_BASEFS_FILE)
		return 0;
	if (n->data) {
		/* kept by the view (eb_basefs_keeps()): no layer to read */
		if (out->len + n->datalen > max)
			return eb_error_set(err, EB_ETOOBIG, "base file '%s' is larger than %zu bytes",
					    path, max);
		eb_buf_put(out, n->data, n->datalen);
		return 1;
	}
	if (n->layer >= nlayers)
		return eb_error_set(err, EB_EINVALID, "base file '%s': layer %u of %zu", path,
				    n->layer, nlayers);
	if ((r = eb_layerin_open(&in, layers[n->layer], NULL, err)) < 0)
		return r;
	a = eb_layerin_archive(in);
	r = 0;
	while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);

		if (!raw)
			continue;
		if (eb_basefs_is_whiteout(raw))
			continue;
		if (at++ < n->entry)
			continue;
		if (archive_entry_hardlink(e)) {
			r = eb_error_set(err, EB_EINVALID,
					 "base file '%s' is a hardlink in its layer; envbuild reads "
					 "it only as a regular file", path);
			goto done;
		}
		for (;;) {
			char chunk[16384];
			la_ssize_t got = archive_read_data(a, chunk, sizeof(chunk));
			if (got < 0) {
				r = eb_error_set(err, EB_EINVALID, "base file '%s': %s", path,
						 archive_error_string(a));
				goto done;
			}
			if (got == 0)
				break;
			if (out->len + (size_t)got > max) {
				r = eb_error_set(err, EB_ETOOBIG, "base file '%s' is larger than %zu bytes",
						 path, max);
				goto done;
			}
			eb_buf_put(out, chunk, (size_t)got);
		}
		r = 1;
		goto done;
	}
	r = eb_error_set(err, EB_EINVALID, "base file '%s' not found in its layer", path);
done:
	eb_layerin_free(in);
	return r;
}
