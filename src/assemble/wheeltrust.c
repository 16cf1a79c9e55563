/*
 * wheeltrust.c - the authority for a wheel the lock names under --frozen
 * (see wheeltrust.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "assemble/wheeltrust.h"
#include "oci/blobstore.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

#define NOTE_MAX (64u << 10)

static int hex64(const char *s)
{
	size_t n = 0;

	for (; s && s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return 0;
	return n == 64;
}

static char *note_path(struct eb_blobstore *bs, const char *sha256)
{
	return eb_xasprintf("%s/pyserved/%s", eb_blobstore_root(bs), sha256);
}

/* 1 when the note for sha256 lists filename */
static int noted(struct eb_blobstore *bs, const char *sha256, const char *filename,
		 struct eb_buf *b)
{
	char *path = note_path(bs, sha256);
	size_t fl = strlen(filename);
	int found = 0;

	if (eb_fs_read_file(b, path, NOTE_MAX, NULL) == 0) {
		for (const char *p = b->ptr; p && *p && !found;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			found = n == fl && memcmp(p, filename, n) == 0;
			p = nl ? nl + 1 : NULL;
		}
	}
	free(path);
	return found;
}

void eb_wheeltrust_note(struct eb_blobstore *bs, const char *sha256, const char *filename)
{
	struct eb_buf b;
	char *dir, *path;

	if (!bs || !hex64(sha256) || !filename || strchr(filename, '\n') || !*filename)
		return;
	eb_buf_init(&b, NOTE_MAX);
	if (!noted(bs, sha256, filename, &b)) {
		dir = eb_xasprintf("%s/pyserved", eb_blobstore_root(bs));
		path = note_path(bs, sha256);
		(void)eb_buf_addf(&b, "%s\n", filename);
		if (eb_fs_mkdir_p(dir, 0755, NULL) == 0)
			(void)eb_fs_write_atomic(path, b.ptr, b.len, 0644, NULL);
		free(dir);
		free(path);
	}
	eb_buf_release(&b);
}

int eb_wheeltrust_check(struct eb_blobstore *bs, const struct eb_requirement *req,
			const char *sha256, const char *filename, struct eb_error **err)
{
	struct eb_buf b;
	int pinned = 0, r;

	if (req->url_hash_algo && strcmp(req->url_hash_algo, "sha256") == 0) {
		pinned = 1;
		if (req->url_hash_hex && strcmp(req->url_hash_hex, sha256) == 0)
			return 0;
	}
	for (size_t i = 0; i < req->nhashes; i++) {
		if (!req->hashes[i].algo || strcmp(req->hashes[i].algo, "sha256") != 0)
			continue;
		pinned = 1;
		if (req->hashes[i].hex && strcmp(req->hashes[i].hex, sha256) == 0)
			return 0;
	}
	if (pinned) {
		r = eb_error_set(err, EB_EINVALID,
				 "the lock's sha256 %s for '%s' is none of the hashes the "
				 "requirement pins", sha256, filename);
		eb_error_hint(err, "the lock was edited, or the pins changed: run 'envbuild lock' "
				   "and review the diff");
		return r;
	}
	eb_buf_init(&b, NOTE_MAX);
	r = bs && hex64(sha256) && noted(bs, sha256, filename, &b);
	eb_buf_release(&b);
	if (r)
		return 0;
	r = eb_error_set(err, EB_EFAIL,
			 "nothing vouches for the lock's sha256 %s of '%s': the requirement "
			 "pins no hash, and this cache never saw the index serve it", sha256,
			 filename);
	eb_error_hint(err, "pin it with --hash (envbuild pin writes them), or run 'envbuild build "
			   "--locked' once: it checks the lock against the index");
	return r;
}
