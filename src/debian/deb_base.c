/*
 * deb_base.c - the base image scan (see deb.h): the base's dpkg status and
 * its directory symlinks read from the base layers, directly or through a
 * "debbase" cache record, or from the base's file-tree view.  Reading
 * .debs and writing the layer are deb.c (deb_internal.h between them).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

#include "debian/deb.h"
#include "debian/deb_internal.h"
#include "oci/basefile.h"
#include "oci/basefs.h"
#include "oci/blobstore.h"
#include "oci/cache.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"

/* ---- the base ------------------------------------------------------------------ */

void eb_debian_links_free(char **paths, char **targets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(paths[i]);
		free(targets[i]);
	}
	free(paths);
	free(targets);
}

int eb_debian_base_scan(const char *const *layers, size_t nlayers, struct eb_buf *status,
			char ***paths, char ***targets, size_t *nlinks, struct eb_error **err)
{
	char **lp = NULL, **lt = NULL;
	size_t nl = 0;
	int rc = 0;

	eb_buf_init(status, 64u << 20);
	for (size_t li = 0; li < nlayers; li++) {
		struct archive *a = archive_read_new();
		struct archive_entry *e;
		int r;

		archive_read_support_filter_all(a);
		archive_read_support_format_tar(a);
		if (archive_read_open_filename(a, layers[li], 65536) != ARCHIVE_OK) {
			rc = eb_error_set(err, EB_EIO, "reading base layer %s: %s", layers[li],
					  archive_error_string(a));
			archive_read_free(a);
			goto fail;
		}
		while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
			char *p = eb_deb__clean_path(archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
			if (!p)
				continue;
			const char *slash = strrchr(p, '/');
			const char *base = slash ? slash + 1 : p;
			size_t dlen = slash ? (size_t)(slash - p) : 0;
			if (!strncmp(base, ".wh.", 4)) {
				/* whiteout of one path, or an opaque directory */
				char *gone = !strcmp(base, ".wh..wh..opq")
						     ? eb_xstrndup(p, dlen)
						     : eb_xasprintf("%.*s%s%s", (int)dlen, p,
								    dlen ? "/" : "", base + 4);
				size_t gl = strlen(gone);
				if (!gl || !strncmp("var/lib/dpkg/status", gone, gl))
					eb_buf_truncate(status, 0);
				for (size_t k = 0; k < nl;)
					if (!gl || !strcmp(lp[k], gone)) {
						free(lp[k]);
						free(lt[k]);
						lp[k] = lp[nl - 1];
						lt[k] = lt[--nl];
					} else {
						k++;
					}
				free(gone);
			} else if (!strcmp(p, "var/lib/dpkg/status") &&
				   archive_entry_filetype(e) == AE_IFREG) {
				char chunk[65536];
				la_ssize_t n;
				eb_buf_truncate(status, 0);
				while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
					if (eb_buf_add(status, chunk, (size_t)n) < 0) {
						free(p);
						rc = eb_error_set(err, EB_ETOOBIG,
								  "the base's dpkg status is too big");
						archive_read_free(a);
						goto fail;
					}
			} else if (!slash) {
				for (size_t k = 0; k < nl; k++)
					if (!strcmp(lp[k], p)) {
						free(lp[k]);
						free(lt[k]);
						lp[k] = lp[nl - 1];
						lt[k] = lt[--nl];
						break;
					}
				const char *t = archive_entry_symlink(e);
				if (archive_entry_filetype(e) == AE_IFLNK && t) {
					char *ct = eb_deb__clean_path(t[0] == '/' ? t + 1 : t);
					if (ct && ct[0]) {
						lp = eb_xreallocarray(lp, nl + 1, sizeof(char *));
						lt = eb_xreallocarray(lt, nl + 1, sizeof(char *));
						lp[nl] = eb_xstrdup(p);
						lt[nl++] = ct;
					} else {
						free(ct);
					}
				}
			}
			free(p);
		}
		if (r != ARCHIVE_EOF) {
			rc = eb_error_set(err, EB_EINVALID, "reading base layer %s: %s", layers[li],
					  archive_error_string(a) ? archive_error_string(a) : "?");
			archive_read_free(a);
			goto fail;
		}
		archive_read_free(a);
	}
	*paths = lp;
	*targets = lt;
	*nlinks = nl;
	return 0;
fail:
	eb_debian_links_free(lp, lt, nl);
	eb_buf_release(status);
	*paths = *targets = NULL;
	*nlinks = 0;
	return rc;
}

int eb_debian_base_from_view(const struct eb_basefs *fs, const char *const *layers,
			     size_t nlayers, struct eb_buf *status, char ***paths,
			     char ***targets, size_t *nlinks, struct eb_error **err)
{
	const struct eb_basefs_node *v;
	size_t n = eb_basefs_under(fs, "", &v), nl = 0;
	char **lp = NULL, **lt = NULL;
	int r;

	eb_buf_init(status, 64u << 20);
	r = eb_basefile_read(fs, layers, nlayers, "var/lib/dpkg/status", 64u << 20, status, err);
	if (r < 0) {
		eb_buf_release(status);
		return r;
	}
	/* the top-level symlinks, as the scan finds them */
	for (size_t i = 0; i < n; i++) {
		char *ct;

		if (v[i].type != EB_BASEFS_SYMLINK || strchr(v[i].path, '/'))
			continue;
		ct = eb_deb__clean_path(v[i].link[0] == '/' ? v[i].link + 1 : v[i].link);
		if (!ct || !ct[0]) {
			free(ct);
			continue;
		}
		lp = eb_xreallocarray(lp, nl + 1, sizeof(char *));
		lt = eb_xreallocarray(lt, nl + 1, sizeof(char *));
		lp[nl] = eb_xstrdup(v[i].path);
		lt[nl++] = ct;
	}
	*paths = lp;
	*targets = lt;
	*nlinks = nl;
	return 0;
}

/* The scan through the cache: a "debbase" record keyed by the layers'
 * digests (the names of their blob paths, .../sha256/<hex>), naming a
 * blob of "envbuild debbase 1\n" and records (as debinfo's) "s" (the
 * status), then "l" and "t" pairs (a link and its target).  Layers that
 * are not such blobs are scanned every time. */
#define DEBBASE_MAGIC "envbuild debbase 1\n"

static int debbase_key(const char *const *layers, size_t nlayers, char key[EB_DIGEST_STR_LEN + 1])
{
	struct eb_sha256 h;

	eb_sha256_init(&h);
	eb_sha256_update(&h, DEBBASE_MAGIC, strlen(DEBBASE_MAGIC));
	for (size_t i = 0; i < nlayers; i++) {
		size_t n = strlen(layers[i]);
		if (n < 71 || strncmp(layers[i] + n - 71, "sha256/", 7) != 0 ||
		    strspn(layers[i] + n - 64, "0123456789abcdef") != 64)
			return 0;
		eb_sha256_update(&h, layers[i] + n - 64, 64);
		eb_sha256_update(&h, "\n", 1);
	}
	eb_sha256_final(&h, key);
	return 1;
}

int eb_debian_base_scan_cached(struct eb_blobstore *bs, const char *const *layers,
			       size_t nlayers, struct eb_buf *status, char ***paths,
			       char ***targets, size_t *nlinks, struct eb_error **err)
{
	char key[EB_DIGEST_STR_LEN + 1], digest[EB_DIGEST_STR_LEN + 1];
	json_t *rec = NULL;
	struct eb_buf b;
	int rc;

	if (!bs || !debbase_key(layers, nlayers, key))
		return eb_debian_base_scan(layers, nlayers, status, paths, targets, nlinks, err);
	eb_buf_init(&b, 0);
	if (eb_cache_record_get(bs, "debbase", key, &rec) == 1 &&
	    json_string_value(json_object_get(rec, "digest")) &&
	    eb_blobstore_read(bs, json_string_value(json_object_get(rec, "digest")), &b,
			      (64u << 20) + 65536, NULL) == 0 &&
	    b.len >= strlen(DEBBASE_MAGIC) && !memcmp(b.ptr, DEBBASE_MAGIC, strlen(DEBBASE_MAGIC))) {
		const char *s = b.ptr + strlen(DEBBASE_MAGIC), *end = b.ptr + b.len, *name, *data;
		size_t namelen, len, nl = 0;
		unsigned mode;
		char kind;
		char **lp = NULL, **lt = NULL;
		int r, have_status = 0;

		eb_buf_init(status, 64u << 20);
		while ((r = eb_deb__debinfo_next(&s, end, &kind, &mode, &name, &namelen, &data, &len)) > 0) {
			if (kind == 's' && !have_status) {
				have_status = 1;
				if (eb_buf_add(status, data, len) < 0)
					r = -1;
			} else if (kind == 'l') {
				lp = eb_xreallocarray(lp, nl + 1, sizeof(char *));
				lt = eb_xreallocarray(lt, nl + 1, sizeof(char *));
				lp[nl] = eb_xstrndup(data, len);
				lt[nl++] = NULL;
			} else if (kind == 't' && nl && !lt[nl - 1]) {
				lt[nl - 1] = eb_xstrndup(data, len);
			} else {
				r = -1;
			}
			if (r < 0)
				break;
		}
		for (size_t i = 0; r == 0 && i < nl; i++)
			if (!lt[i])
				r = -1;
		if (r == 0 && have_status) {
			json_decref(rec);
			eb_buf_release(&b);
			*paths = lp;
			*targets = lt;
			*nlinks = nl;
			return 0;
		}
		for (size_t i = 0; i < nl; i++) {
			free(lp[i]);
			free(lt[i]);
		}
		free(lp);
		free(lt);
		eb_buf_release(status);
	}
	json_decref(rec);
	eb_buf_release(&b);
	rc = eb_debian_base_scan(layers, nlayers, status, paths, targets, nlinks, err);
	if (rc < 0)
		return rc;
	eb_buf_init(&b, 0);
	(void)eb_buf_adds(&b, DEBBASE_MAGIC);
	(void)eb_buf_addf(&b, "s %zu\n", status->len);
	(void)eb_buf_add(&b, status->ptr, status->len);
	(void)eb_buf_addc(&b, '\n');
	for (size_t i = 0; i < *nlinks; i++)
		(void)eb_buf_addf(&b, "l %zu\n%s\nt %zu\n%s\n", strlen((*paths)[i]), (*paths)[i],
				  strlen((*targets)[i]), (*targets)[i]);
	/* only a cache: a failure costs a scan next time */
	if (eb_blobstore_put(bs, b.ptr, b.len, digest, NULL) == 0) {
		rec = json_pack("{s:s, s:I}", "digest", digest, "size", (json_int_t)b.len);
		(void)eb_cache_record_put(bs, "debbase", key, rec, NULL);
		json_decref(rec);
	}
	eb_buf_release(&b);
	return 0;
}
