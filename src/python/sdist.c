/*
 * sdist.c - sdist file names and a safe unpack (see sdist.h).
 *
 * The unpack creates every directory itself and opens every file with
 * O_CREAT|O_EXCL|O_NOFOLLOW relative to a directory descriptor it opened
 * itself, and links are refused, so no member can be written through a
 * link or over another member, whatever order the archive lists them in.
 */
#define _GNU_SOURCE
#include "python/sdist.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pin/requirement.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/interrupt.h"

static const char *const suffixes[] = { ".tar.gz", ".zip", NULL };

static size_t suffix_len(const char *filename)
{
	size_t n = strlen(filename);

	for (size_t i = 0; suffixes[i]; i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && strcmp(filename + n - k, suffixes[i]) == 0)
			return k;
	}
	return 0;
}

int eb_sdist_is_filename(const char *filename)
{
	return filename && !strchr(filename, '/') && suffix_len(filename) > 0;
}

int eb_sdist_filename_parse(const char *filename, char **norm_name, char **version,
			    struct eb_error **err)
{
	size_t k, n;
	const char *dash;

	*norm_name = *version = NULL;
	if (!eb_sdist_is_filename(filename))
		return eb_error_set(err, EB_EINVALID, "'%s' is not an sdist file name", filename);
	k = suffix_len(filename);
	n = strlen(filename) - k;
	/* PEP 625: the name has no dash (it is normalised to '_'); older
	 * sdists have dashes in the name, never in the version. */
	dash = memrchr(filename, '-', n);
	if (!dash || dash == filename || (size_t)(dash - filename) + 1 == n)
		return eb_error_set(err, EB_EINVALID,
				    "'%s' is not an sdist file name (NAME-VERSION%s)", filename,
				    filename + n);
	*norm_name = eb_pep503_normalize(filename, (size_t)(dash - filename));
	*version = eb_xstrndup(dash + 1, n - (size_t)(dash - filename) - 1);
	return 0;
}

/* ---- unpack ---------------------------------------------------------------- */

/* Components of a member path after the top directory; NULL when the path
 * is unsafe.  "a/./b" and "a//b" are refused too: a well-formed sdist
 * never has them, and one spelling per file keeps duplicates detectable. */
static int split_member(const char *path, char **top, const char **rest)
{
	const char *slash;
	size_t toplen;

	if (!*path || path[0] == '/')
		return -1;
	slash = strchr(path, '/');
	toplen = slash ? (size_t)(slash - path) : strlen(path);
	if (toplen == 0 || (toplen == 1 && path[0] == '.') ||
	    (toplen == 2 && path[0] == '.' && path[1] == '.'))
		return -1;
	if (*top && (strlen(*top) != toplen || memcmp(*top, path, toplen) != 0))
		return -2;
	if (!*top)
		*top = eb_xstrndup(path, toplen);
	*rest = slash ? slash + 1 : "";
	for (const char *c = *rest; *c;) {
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		if (len == 0 && e)
			return -1;
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return -1;
		c += len + (e ? 1 : 0);
	}
	return 0;
}

/* Open (creating as needed) the directory of rel's parent below root;
 * returns a descriptor and sets *leaf to rel's last component. */
static int open_parent(int root, const char *rel, const char **leaf)
{
	int fd = dup(root);
	const char *c = rel;

	for (;;) {
		const char *e = strchr(c, '/');
		char *part;
		int next;

		if (!e || !e[1]) {
			*leaf = c;
			return fd;
		}
		part = eb_xstrndup(c, (size_t)(e - c));
		if (mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			free(part);
			close(fd);
			return -1;
		}
		next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		free(part);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		c = e + 1;
	}
}

static int write_member(struct archive *a, int root, const char *rel, int dir, int exec,
			uint64_t *budget, const char *name, struct eb_error **err)
{
	const char *leaf;
	char *dirname_leaf = NULL;
	int pfd, fd, rc = 0;

	pfd = open_parent(root, rel, &leaf);
	if (pfd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "sdist member '%s'", name);
	if (dir) {
		size_t n = strlen(leaf);
		dirname_leaf = eb_xstrndup(leaf, n && leaf[n - 1] == '/' ? n - 1 : n);
		if (*dirname_leaf && mkdirat(pfd, dirname_leaf, 0755) < 0 && errno != EEXIST)
			rc = eb_error_set_errno(err, EB_EIO, errno, "sdist member '%s'", name);
		free(dirname_leaf);
		close(pfd);
		return rc;
	}
	fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    exec ? 0755 : 0644);
	close(pfd);
	if (fd < 0) {
		if (errno == EEXIST)
			return eb_error_set(err, EB_EINVALID,
					    "sdist member '%s' is listed twice (or over a "
					    "directory); refused", name);
		return eb_error_set_errno(err, EB_EIO, errno, "sdist member '%s'", name);
	}
	for (;;) {
		char buf[65536];
		la_ssize_t got = archive_read_data(a, buf, sizeof(buf));
		if (got == 0)
			break;
		if (got < 0) {
			rc = eb_error_set(err, EB_EINVALID, "sdist member '%s': %s", name,
					  archive_error_string(a));
			break;
		}
		if ((uint64_t)got > *budget) {
			rc = eb_error_set(err, EB_ETOOBIG,
					  "the sdist unpacks to more than %llu MiB; refused",
					  (unsigned long long)(EB_SDIST_MAX_BYTES >> 20));
			break;
		}
		*budget -= (uint64_t)got;
		for (la_ssize_t off = 0; off < got;) {
			ssize_t w = write(fd, buf + off, (size_t)(got - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = eb_error_set_errno(err, EB_EIO, errno, "sdist member '%s'",
							name);
				break;
			}
			off += w;
		}
		if (rc < 0)
			break;
	}
	if (close(fd) < 0 && rc == 0)
		rc = eb_error_set_errno(err, EB_EIO, errno, "sdist member '%s'", name);
	return rc;
}

static int unpack(const char *path, const char *dir, int flat, char **top_out,
		  struct eb_error **err)
{
	struct archive *a;
	struct archive_entry *ent;
	char *top = NULL;
	uint64_t budget = EB_SDIST_MAX_BYTES;
	size_t members = 0;
	int root = -1, rc = 0, made = 0;

	if (top_out)
		*top_out = NULL;
	a = archive_read_new();
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		rc = eb_error_set(err, EB_EINVALID, "sdist '%s': %s", path, archive_error_string(a));
		goto out;
	}
	if (mkdir(dir, 0755) < 0 && !(flat && errno == EEXIST)) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", dir);
		goto out;
	}
	if (!flat) {
		made = 1;
		eb_interrupt_register(dir, 1);
	}
	root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", dir);
		goto out;
	}
	for (;;) {
		const char *name, *rest;
		int r = archive_read_next_header(a, &ent), type, s;

		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			rc = eb_error_set(err, EB_EINVALID, "sdist '%s': %s", path,
					  archive_error_string(a));
			goto out;
		}
		if ((rc = eb_interrupt_check(err)) < 0)
			goto out;
		if (++members > EB_SDIST_MAX_MEMBERS) {
			rc = eb_error_set(err, EB_ETOOBIG, "sdist '%s' has more than %d members; "
					  "refused", path, EB_SDIST_MAX_MEMBERS);
			goto out;
		}
		name = archive_entry_pathname(ent);
		if (!name) {
			rc = eb_error_set(err, EB_EINVALID, "sdist '%s': a member without a name",
					  path);
			goto out;
		}
		if (flat) {
			/* a wheel: its members are the files, no top directory */
			char *fake = eb_xasprintf("w/%s", name);
			free(top);
			top = NULL;
			s = split_member(fake, &top, &rest);
			rest = s == 0 ? name + (rest - fake) - 2 : rest;
			free(fake);
		} else {
			s = split_member(name, &top, &rest);
		}
		if (s == -2) {
			rc = eb_error_set(err, EB_EINVALID,
					  "sdist '%s': member '%s' is outside its top directory "
					  "'%s/'; refused", path, name, top);
			goto out;
		}
		if (s < 0) {
			rc = eb_error_set(err, EB_EINVALID,
					  "sdist '%s': member '%s' would be written outside the "
					  "unpack directory (an absolute path or '..'); refused",
					  path, name);
			goto out;
		}
		type = archive_entry_filetype(ent);
		if (archive_entry_hardlink(ent) || type == AE_IFLNK) {
			rc = eb_error_set(err, EB_EINVALID,
					  "sdist '%s': member '%s' is a link; refused (an sdist's "
					  "files are regular files)", path, name);
			goto out;
		}
		if (type != AE_IFREG && type != AE_IFDIR) {
			rc = eb_error_set(err, EB_EINVALID,
					  "sdist '%s': member '%s' is not a file or directory; "
					  "refused", path, name);
			goto out;
		}
		if (!*rest)
			continue; /* the top directory itself */
		rc = write_member(a, root, rest, type == AE_IFDIR,
				  (archive_entry_perm(ent) & 0111) != 0, &budget, name, err);
		if (rc < 0)
			goto out;
	}
	if (!top) {
		rc = eb_error_set(err, EB_EINVALID, "'%s' is empty", path);
		goto out;
	}
out:
	if (root >= 0)
		close(root);
	archive_read_free(a);
	if (made) {
		if (rc < 0) {
			struct eb_error *ignore = NULL;
			(void)eb_fs_remove_tree(dir, &ignore);
			eb_error_free(ignore);
		}
		eb_interrupt_unregister(dir);
	}
	if (rc == 0 && top_out)
		*top_out = top;
	else
		free(top);
	return rc;
}

int eb_sdist_unpack(const char *path, const char *dir, char **top, struct eb_error **err)
{
	return unpack(path, dir, 0, top, err);
}

int eb_sdist_unpack_wheel(const char *path, const char *dir, struct eb_error **err)
{
	return unpack(path, dir, 1, NULL, err);
}
