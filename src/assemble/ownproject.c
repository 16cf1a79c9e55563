/*
 * ownproject.c - the project a spec lives in, as an sdist (see
 * ownproject.h): the files a `files:` copy of the project would take
 * (assemble/ignore.h: not .git, out/, the lock, git-ignored or
 * .envbuildignore'd files), in a deterministic tar.gz.
 */
#define _GNU_SOURCE
#include "assemble/ownproject.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "assemble/ignore.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/interrupt.h"

struct walk {
	struct eb_ignore *ig;
	size_t rootlen;
	char **paths;
	size_t n, cap;
	char *bad;
};
static struct walk *walking; /* nftw has no user pointer; one walk at a time */

static int visit(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	struct walk *w = walking;
	const char *rel = p + w->rootlen;

	(void)st;
	(void)ftw;
	if (*rel == '/')
		rel++;
	if (!*rel)
		return FTW_CONTINUE;
	if (eb_ignore_skip(w->ig, rel, flag == FTW_D))
		return flag == FTW_D ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
	if (flag == FTW_D)
		return FTW_CONTINUE;
	if (flag != FTW_F) {
		w->bad = eb_xstrdup(rel); /* a symlink, or unreadable */
		return FTW_STOP;
	}
	EB_ALLOC_GROW(w->paths, w->n + 1, w->cap);
	w->paths[w->n++] = eb_xstrdup(rel);
	return FTW_CONTINUE;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static la_ssize_t to_blob(struct archive *a, void *ud, const void *buf, size_t len)
{
	(void)a;
	return eb_blob_writer_write(ud, buf, len, NULL) < 0 ? -1 : (la_ssize_t)len;
}

int eb_ownproject_sdist(const char *spec_dir, const char *name, const char *version,
			struct eb_blobstore *bs, char digest[EB_DIGEST_STR_LEN + 1], int64_t *size,
			struct eb_error **err)
{
	char *lock = eb_path_join(spec_dir, "envbuild.lock"), *outdir = eb_path_join(spec_dir, "out");
	const char *never[] = { lock, outdir };
	struct walk w = { 0 };
	struct eb_blob_writer *bw = NULL;
	struct archive *a = NULL;
	char real[4096];
	int r;

	if (!realpath(spec_dir, real)) {
		r = eb_error_set_errno(err, EB_EIO, errno, "'%s'", spec_dir);
		goto out;
	}
	if ((r = eb_ignore_new(&w.ig, spec_dir, spec_dir, never, 2, err)) < 0)
		goto out;
	w.rootlen = strlen(real);
	walking = &w;
	if (nftw(real, visit, 32, FTW_PHYS | FTW_ACTIONRETVAL) < 0 && !w.bad) {
		r = eb_error_set_errno(err, EB_EIO, errno, "reading the project '%s'", spec_dir);
		goto out;
	}
	if (w.bad) {
		r = eb_error_set(err, EB_EINVALID,
				 "the project's '%s' is a symlink or unreadable: the project's own "
				 "wheel is built from its regular files only", w.bad);
		eb_error_hint(err, "list it in .envbuildignore, or replace the link by the file");
		goto out;
	}
	eb_sort(w.paths, w.n, sizeof(*w.paths), cmp);
	if ((r = eb_blob_writer_open(&bw, bs, err)) < 0)
		goto out;
	a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_gzip(a);
	archive_write_set_filter_option(a, "gzip", "timestamp", NULL); /* no mtime in the header */
	archive_write_set_bytes_in_last_block(a, 1); /* no padding after the gzip stream */
	if (archive_write_open(a, bw, NULL, to_blob, NULL) != ARCHIVE_OK) {
		r = eb_error_set(err, EB_EIO, "the project's sdist: %s", archive_error_string(a));
		goto out;
	}
	for (size_t i = 0; i < w.n && r == 0; i++) {
		char *full = eb_path_join(real, w.paths[i]);
		char *member = eb_xasprintf("%s-%s/%s", name, version, w.paths[i]);
		struct eb_buf data = EB_BUF_INIT;
		struct archive_entry *e;
		struct stat st;

		if ((r = eb_interrupt_check(err)) == 0 && (r = lstat(full, &st)) < 0)
			r = eb_error_set_errno(err, EB_EIO, errno, "'%s'", w.paths[i]);
		if (r == 0)
			r = eb_fs_read_confined(&data, full, real, EB_OWNPROJECT_MAX_FILE, err);
		if (r == 0) {
			e = archive_entry_new();
			archive_entry_set_pathname(e, member);
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, (st.st_mode & 0111) ? 0755 : 0644);
			archive_entry_set_size(e, (la_int64_t)data.len);
			archive_entry_set_mtime(e, 0, 0);
			if (archive_write_header(a, e) != ARCHIVE_OK ||
			    (data.len && archive_write_data(a, data.ptr, data.len) < 0))
				r = eb_error_set(err, EB_EIO, "the project's sdist: %s",
						 archive_error_string(a));
			archive_entry_free(e);
		}
		eb_buf_release(&data);
		free(member);
		free(full);
	}
	if (r == 0 && archive_write_close(a) != ARCHIVE_OK)
		r = eb_error_set(err, EB_EIO, "the project's sdist: %s", archive_error_string(a));
	if (r == 0) {
		*size = (int64_t)eb_blob_writer_size(bw);
		r = eb_blob_writer_commit(bw, NULL, digest, err);
		bw = NULL;
	}
out:
	if (a)
		archive_write_free(a);
	if (bw)
		eb_blob_writer_abort(bw);
	walking = NULL;
	for (size_t i = 0; i < w.n; i++)
		free(w.paths[i]);
	free(w.paths);
	free(w.bad);
	if (w.ig)
		eb_ignore_free(w.ig);
	free(lock);
	free(outdir);
	return r;
}
