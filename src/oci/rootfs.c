/*
 * rootfs.c - unpack layers into a directory (see rootfs.h), with
 * libarchive's disk writer in its secure mode (no "..", nothing through a
 * symlink), member names normalised and joined to the directory here (so
 * an absolute member lands inside it), and whiteouts applied by hand.
 */
#define _GNU_SOURCE
#include "oci/rootfs.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/layerin.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* Remove every child of dir (an opaque whiteout: lower layers' entries
 * are hidden). */
static int clear_dir(const char *dir, struct eb_error **err)
{
	char *tmp = eb_xasprintf("%s.opq", dir);
	int r;

	if (rename(dir, tmp) < 0) {
		free(tmp);
		return errno == ENOENT ? 0 : eb_error_set_errno(err, EB_EIO, errno, "'%s'", dir);
	}
	r = eb_fs_remove_tree(tmp, err);
	free(tmp);
	if (r == 0 && mkdir(dir, 0755) < 0)
		r = eb_error_set_errno(err, EB_EIO, errno, "'%s'", dir);
	return r;
}

static int apply_layer(const char *path, const char *root, struct eb_error **err)
{
	struct eb_layerin *in = NULL;
	struct archive *a, *disk;
	struct archive_entry *e;
	int r;

	if ((r = eb_layerin_open(&in, path, NULL, err)) < 0)
		return r;
	a = eb_layerin_archive(in);
	disk = archive_write_disk_new();
	archive_write_disk_set_options(disk, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
						     ARCHIVE_EXTRACT_UNLINK |
						     ARCHIVE_EXTRACT_SECURE_SYMLINKS |
						     ARCHIVE_EXTRACT_SECURE_NODOTDOT);
	for (;;) {
		const char *name, *base, *link;
		char *full = NULL, *norm;
		int t, h = archive_read_next_header(a, &e);

		if (h == ARCHIVE_EOF)
			break;
		if (h != ARCHIVE_OK && h != ARCHIVE_WARN) {
			r = eb_error_set(err, EB_EINVALID, "layer '%s': %s", path,
					 archive_error_string(a));
			break;
		}
		if ((r = eb_interrupt_check(err)) < 0)
			break;
		name = archive_entry_pathname(e);
		norm = name ? eb_path_normalize(name[0] == '/' ? name + 1 : name) : NULL;
		if (!norm) {
			r = eb_error_set(err, EB_EINVALID, "layer '%s': member '%s' leaves the tree",
					 path, name ? name : "");
			break;
		}
		base = eb_path_basename(norm);
		t = archive_entry_filetype(e);
		if (strcmp(base, ".wh..wh..opq") == 0) {
			char *d = eb_path_dirname(norm), *fd = eb_path_join(root, d);
			r = clear_dir(fd, err);
			free(d);
			free(fd);
		} else if (strncmp(base, ".wh.", 4) == 0) {
			char *d = eb_path_dirname(norm), *victim = eb_xasprintf("%s/%s/%s", root, d,
									     base + 4);
			r = eb_fs_remove_tree(victim, err);
			free(d);
			free(victim);
		} else if (*norm && strcmp(norm, ".") != 0 &&
			   (t == AE_IFREG || t == AE_IFDIR || t == AE_IFLNK)) {
			full = eb_path_join(root, norm);
			archive_entry_set_pathname(e, full);
			link = archive_entry_hardlink(e);
			if (link) {
				char *ln = eb_path_normalize(link[0] == '/' ? link + 1 : link);
				char *fl = ln ? eb_path_join(root, ln) : NULL;
				if (!fl) {
					r = eb_error_set(err, EB_EINVALID, "layer '%s': hard link "
							 "'%s' leaves the tree", path, name);
				} else {
					archive_entry_set_hardlink(e, fl);
				}
				free(ln);
				free(fl);
			}
			if (r == 0 && archive_write_header(disk, e) != ARCHIVE_OK) {
				r = eb_error_set(err, EB_EIO, "layer '%s': %s", path,
						 archive_error_string(disk));
			} else if (r == 0 && t == AE_IFREG && archive_entry_size(e) > 0) {
				const void *buf;
				size_t len;
				la_int64_t off;
				int d;
				while ((d = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK)
					if (archive_write_data_block(disk, buf, len, off) < 0) {
						d = ARCHIVE_FATAL;
						break;
					}
				if (d != ARCHIVE_EOF)
					r = eb_error_set(err, EB_EIO, "layer '%s': '%s': %s", path,
							 name, archive_error_string(a));
			}
			if (r == 0 && archive_write_finish_entry(disk) != ARCHIVE_OK)
				r = eb_error_set(err, EB_EIO, "layer '%s': %s", path,
						 archive_error_string(disk));
		}
		/* devices, fifos, sockets: nothing a build step reads */
		free(full);
		free(norm);
		if (r < 0)
			break;
	}
	archive_write_free(disk);
	eb_layerin_free(in);
	return r;
}

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
	for (size_t i = 0; i < n && r == 0; i++) {
		r = apply_layer(layers[i], tmp, err);
	}
	/* the tree is read by the runner's unprivileged user */
	if (r == 0 && chmod(tmp, 0755) < 0)
		r = eb_error_set_errno(err, EB_EIO, errno, "'%s'", tmp);
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
