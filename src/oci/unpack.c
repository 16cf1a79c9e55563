/*
 * unpack.c - layers into a directory with archive_write_disk, whiteouts
 * removing what lower layers wrote.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oci/layerin.h"
#include "oci/unpack.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* A normalised relative path: no leading '/', no "." or ".." component. */
static char *clean_rel(const char *p)
{
	char *n;

	while (*p == '/')
		p++;
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	if (!*p || strcmp(p, ".") == 0)
		return NULL;
	n = eb_path_normalize(p);
	if (!n || n[0] == '/' || strcmp(n, "..") == 0 || strncmp(n, "../", 3) == 0) {
		free(n);
		return NULL;
	}
	return n;
}

/* Remove everything inside dir (an opaque whiteout), keeping dir. */
static void empty_dir(const char *dir)
{
	char *tmp = eb_xasprintf("%s.opq-XXXXXX", dir);
	struct stat st;

	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(tmp);
		return;
	}
	/* move aside and recreate: cheaper than walking twice */
	if (mkdtemp(tmp) && rmdir(tmp) == 0 && rename(dir, tmp) == 0) {
		(void)mkdir(dir, st.st_mode & 07777);
		(void)eb_fs_remove_tree(tmp, NULL);
	}
	free(tmp);
}

static int unpack_one(const char *dir, const char *layer, const char *diff_id,
		      const struct eb_unpack_filter *keep, struct eb_error **err)
{
	struct eb_layerin *in = NULL;
	struct archive *a, *w;
	struct archive_entry *e;
	int r, ar;

	if ((r = eb_layerin_open(&in, layer, diff_id, err)) < 0)
		return r;
	a = eb_layerin_archive(in);
	w = archive_write_disk_new();
	archive_write_disk_set_options(w, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
						  ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						  ARCHIVE_EXTRACT_SECURE_SYMLINKS |
						  ARCHIVE_EXTRACT_UNLINK);
	while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *base;
		char *rel, *full;
		mode_t type = archive_entry_filetype(e);

		if ((r = eb_interrupt_check(err)) < 0)
			goto done;
		rel = clean_rel(archive_entry_pathname(e));
		if (!rel)
			continue;
		base = eb_path_basename(rel);
		if (strncmp(base, ".wh.", 4) == 0) {
			char *parent = eb_path_dirname(rel);
			char *pdir = strcmp(parent, ".") == 0 ? eb_xstrdup(dir)
							     : eb_xasprintf("%s/%s", dir, parent);

			if (strcmp(base, ".wh..wh..opq") == 0) {
				empty_dir(pdir);
			} else {
				char *victim = eb_xasprintf("%s/%s", pdir, base + 4);
				(void)eb_fs_remove_tree(victim, NULL);
				free(victim);
			}
			free(pdir);
			free(parent);
			free(rel);
			continue;
		}
		if ((type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) ||
		    (keep && type != AE_IFDIR && !keep->keep(rel, (unsigned)type, keep->ctx))) {
			free(rel);
			continue;
		}
		full = eb_xasprintf("%s/%s", dir, rel);
		archive_entry_set_pathname(e, full);
		if (archive_entry_hardlink(e)) {
			char *lrel = clean_rel(archive_entry_hardlink(e));
			char *lfull = lrel ? eb_xasprintf("%s/%s", dir, lrel) : NULL;

			if (lfull)
				archive_entry_set_hardlink(e, lfull);
			free(lfull);
			free(lrel);
			if (!lfull) {
				free(full);
				free(rel);
				continue;
			}
		}
		/* an entry refused by the secure checks is left out: this tree
		 * only runs the image's programs */
		if (archive_write_header(w, e) == ARCHIVE_OK && archive_entry_size(e) > 0 &&
		    !archive_entry_hardlink(e)) {
			const void *buf;
			size_t len;
			la_int64_t off;

			while ((ar = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK)
				if (archive_write_data_block(w, buf, len, off) < ARCHIVE_OK)
					break;
			if (ar < ARCHIVE_WARN) {
				r = eb_error_set(err, EB_EIO, "reading layer '%s': %s", layer,
						 archive_error_string(a));
				free(full);
				free(rel);
				goto done;
			}
		}
		(void)archive_write_finish_entry(w);
		free(full);
		free(rel);
	}
	if (ar != ARCHIVE_EOF) {
		r = eb_error_set(err, EB_EIO, "reading layer '%s': %s", layer, archive_error_string(a));
		goto done;
	}
	if (archive_write_close(w) != ARCHIVE_OK) {
		r = eb_error_set(err, EB_EIO, "unpacking layer '%s': %s", layer,
				 archive_error_string(w));
		goto done;
	}
	r = eb_layerin_finish(in, err);
done:
	archive_write_free(w);
	eb_layerin_free(in);
	return r;
}

int eb_oci_unpack(const char *dir, const char *const *layers, const char *const *diff_ids,
		  size_t n, struct eb_error **err)
{
	return eb_oci_unpack_filtered(dir, layers, diff_ids, n, NULL, err);
}

int eb_oci_unpack_filtered(const char *dir, const char *const *layers,
			   const char *const *diff_ids, size_t n,
			   const struct eb_unpack_filter *filter, struct eb_error **err)
{
	static const char *const mounts[] = { "tmp", "proc", "dev" };
	int r;

	for (size_t i = 0; i < n; i++) {
		const struct eb_unpack_filter *keep = filter && i >= filter->from ? filter : NULL;

		if ((r = unpack_one(dir, layers[i], diff_ids ? diff_ids[i] : NULL, keep, err)) < 0)
			return r;
	}
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		char *p = eb_xasprintf("%s/%s", dir, mounts[i]);
		struct stat st;

		if (lstat(p, &st) != 0 && mkdir(p, 0755) != 0 && errno != EEXIST) {
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", p);
			free(p);
			return r;
		}
		free(p);
	}
	if (chmod(dir, 0755) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "chmod '%s'", dir);
	return 0;
}
