/*
 * wheel_extract.c - phase 1 of installing a wheel (see wheel.h and the
 * phases in wheel.c): the zip's central directory read for the names it
 * lists, then one streaming pass over the archive that checks every
 * member (path, type, duplicates, limits), stages and hashes it and keeps
 * the .dist-info files we parse.  Verifying, planning and adding are
 * wheel.c (wheel_internal.h between them).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <locale.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "python/wheel.h"
#include "python/wheel_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/encode.h"
#include "util/fs.h"

/* ---- phase 1: extract --------------------------------------------------- */

/* Longest archive path and component: a component past NAME_MAX cannot be
 * created on unpack (ENAMETOOLONG), and the path must still fit PATH_MAX
 * (4096) below the longest install prefix; tar and OCI clients give up
 * the same way. */
#define WHEEL_MAX_PATH 3072
#define WHEEL_MAX_COMPONENT 255

/* Why an archive path is refused, or NULL.  The path has no trailing '/'. */
static const char *path_problem(const char *p)
{
	const char *c;

	if (!*p)
		return "is empty";
	if (strlen(p) > WHEEL_MAX_PATH)
		return "is longer than 3072 bytes";
	if (p[0] == '/')
		return "is absolute";
	for (c = p; *c; c++) {
		if (*c == '\\')
			return "contains a backslash";
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "contains a control character";
	}
	for (c = p;;) {
		const char *s = strchr(c, '/');
		size_t n = s ? (size_t)(s - c) : strlen(c);
		if (n == 0)
			return "has an empty component";
		if (n == 1 && c[0] == '.')
			return "has a '.' component";
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return "climbs out of the install directory";
		if (n > WHEEL_MAX_COMPONENT)
			return "has a component longer than 255 bytes";
		/* an OCI whiteout would delete the base image's files */
		if (n >= 4 && strncmp(c, ".wh.", 4) == 0)
			return "names a whiteout file ('.wh.' prefix)";
		if (!s)
			break;
		c = s + 1;
	}
	return NULL;
}

/* The top-level directory of a path, when the path is inside one. */
size_t eb_wheel__top_len(const char *p)
{
	const char *s = strchr(p, '/');
	return s ? (size_t)(s - p) : 0;
}

/* Note the .dist-info directory a path lies in (or is); a second one
 * rejects the wheel at once. */
static int note_distinfo(struct inst *in, const char *path, int is_dir, struct eb_error **err)
{
	size_t t = eb_wheel__top_len(path);
	const char *top = path;

	if (t == 0) {
		if (!is_dir)
			return 0;
		t = strlen(path);
	}
	if (t < 10 || memcmp(top + t - 10, ".dist-info", 10) != 0)
		return 0;
	if (!in->distinfo) {
		in->distinfo = eb_xstrndup(top, t);
		return 0;
	}
	if (strlen(in->distinfo) != t || memcmp(in->distinfo, top, t) != 0) {
		eb_autofree char *a = eb_wheel__printable(in->distinfo);
		eb_autofree char *b = eb_xstrndup(top, t);
		eb_autofree char *bp = eb_wheel__printable(b);
		return eb_error_set(err, EB_EINVALID,
				    "more than one .dist-info directory ('%s' and '%s')", a, bp);
	}
	return 0;
}

static enum capture capture_of(const struct inst *in, const char *path)
{
	size_t t = eb_wheel__top_len(path);
	const char *leaf;

	if (!in->distinfo || t != strlen(in->distinfo) || memcmp(path, in->distinfo, t) != 0)
		return CAP_NONE;
	leaf = path + t + 1;
	for (int i = 0; i < CAP_N; i++)
		if (strcmp(leaf, eb_wheel__cap_names[i]) == 0)
			return (enum capture)i;
	return CAP_NONE;
}

static int extract_data(struct inst *in, struct archive *a, struct entry *e, int fd,
			enum capture cp, uint64_t *total, struct eb_error **err)
{
	EVP_MD_CTX *c = eb_wheel__md_new(EVP_sha256());
	int64_t start = archive_filter_bytes(a, -1);
	unsigned hlen;
	int r = 0;

	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t off;
		int64_t consumed;
		int ar = archive_read_data_block(a, &buf, &size, &off);

		if (ar == ARCHIVE_EOF)
			break;
		if (ar != ARCHIVE_OK) {
			eb_autofree char *pp = eb_wheel__printable(e->path);
			r = eb_error_set(err, EB_EINVALID, "cannot extract '%s': %s", pp,
					 archive_error_string(a) ? archive_error_string(a)
								 : "unknown error");
			goto out;
		}
		if (off < 0 || (uint64_t)off != e->size) {
			eb_autofree char *pp = eb_wheel__printable(e->path);
			r = eb_error_set(err, EB_EINVALID, "'%s' has sparse data", pp);
			goto out;
		}
		e->size += size;
		*total += size;
		if (*total > in->max_total) {
			r = eb_error_set(err, EB_ETOOBIG,
					 "more than %llu bytes when extracted (zip bomb?)",
					 (unsigned long long)in->max_total);
			goto out;
		}
		/* Compressed bytes read so far for this entry: the reader's
		 * position in the file moves only as the inflater consumes
		 * input, so this is exact up to the block in flight. */
		consumed = archive_filter_bytes(a, -1) - start;
		if (consumed < 1)
			consumed = 1;
		if (e->size > in->ratio_min && e->size / in->max_ratio > (uint64_t)consumed) {
			eb_autofree char *pp = eb_wheel__printable(e->path);
			r = eb_error_set(err, EB_ETOOBIG,
					 "'%s' expands more than %u times (zip bomb?)", pp,
					 in->max_ratio);
			goto out;
		}
		EVP_DigestUpdate(c, buf, size);
		if (fd >= 0 && eb_wheel__write_all(fd, buf, size) < 0) {
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", e->stage);
			goto out;
		}
		if (cp != CAP_NONE && eb_buf_add(&in->caps[cp], buf, size) < 0) {
			r = eb_error_set(err, EB_ETOOBIG, "'%s' is larger than %zu bytes",
					 eb_wheel__cap_names[cp], eb_wheel__cap_max[cp]);
			goto out;
		}
	}
out:
	eb_wheel__md_final(c, e->sha256, &hlen);
	return r;
}

static int from_wheel(struct inst *in, struct entry *e, const char *raw, enum capture cp);

static int extract_entry(struct inst *in, struct archive *a, struct archive_entry *ae,
			 uint64_t *total, struct eb_error **err)
{
	const char *raw = archive_entry_pathname_utf8(ae);
	eb_autofree char *path = NULL;
	const char *why;
	mode_t type = archive_entry_filetype(ae);
	int is_dir = type == AE_IFDIR;
	struct entry *e;
	enum capture cp;
	eb_autoclose int fd = -1;
	int r;

	if (!raw)
		raw = archive_entry_pathname(ae);
	if (!raw)
		return eb_error_set(err, EB_EINVALID, "an entry has no usable name");
	path = eb_xstrdup(raw);
	if (is_dir && eb_wheel__has_suffix(path, "/") && strlen(path) > 1)
		path[strlen(path) - 1] = '\0';
	if ((why = path_problem(path)) != NULL) {
		eb_autofree char *pp = eb_wheel__printable(path);
		return eb_error_set(err, EB_EINVALID, "path '%s' %s", pp, why);
	}
	if (archive_entry_is_encrypted(ae)) {
		eb_autofree char *pp = eb_wheel__printable(path);
		return eb_error_set(err, EB_EINVALID, "'%s' is encrypted", pp);
	}
	if (archive_entry_hardlink(ae) || (type != AE_IFREG && !is_dir)) {
		eb_autofree char *pp = eb_wheel__printable(path);
		return eb_error_set(err, EB_EINVALID, "'%s' is a %s, not a regular file", pp,
				    type == AE_IFLNK ? "symlink" : "special entry");
	}
	if ((r = note_distinfo(in, path, is_dir, err)) < 0)
		return r;
	if (is_dir)
		return 0; /* parents are implied by the files */

	EB_ALLOC_GROW(in->e, in->n + 1, in->cap);
	e = &in->e[in->n];
	memset(e, 0, sizeof(*e));
	e->path = eb_steal_ptr(&path);
	if (eb_wheel__strmap_put(&in->paths, e->path, in->n) < 0) {
		eb_autofree char *pp = eb_wheel__printable(e->path);
		free(e->path);
		return eb_error_set(err, EB_EINVALID, "'%s' appears twice in the archive", pp);
	}
	in->n++;
	e->mode = (archive_entry_perm(ae) & 0111) ? 0755 : 0644;
	cp = capture_of(in, e->path);
	if (from_wheel(in, e, raw, cp)) {
		/* verified here as every member is, but written nowhere: the
		 * layer inflates it again (cheaper than a file's write) */
		return extract_data(in, a, e, -1, cp, total, err);
	}
	e->stage = eb_xasprintf("%s/%u", in->dir, ++in->seq);
	fd = open(e->stage, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", e->stage);
	if ((r = extract_data(in, a, e, fd, cp, total, err)) < 0)
		return r;
	if (cp != CAP_NONE)
		in->captured[cp] = 1;
	if (fchmod(fd, e->mode) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot chmod '%s'", e->stage);
	if (close(fd) < 0) {
		fd = -1;
		return eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", e->stage);
	}
	fd = -1;
	return 0;
}

/* ---- the zip central directory -------------------------------------------- */

/*
 * libarchive names an entry by its local header, and turns '\' into '/'
 * when that header says "made on MS-DOS" (as most zip writers do); Python's
 * zipfile, and so pip, names it by the central directory and keeps '\'.
 * A wheel built to exploit the difference would install one file set here
 * and another with pip.  So the central directory is read here too, its
 * names are checked, and the names libarchive reports must be exactly
 * these.
 */
#define CD_MAX (128u << 20)

static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int eb_wheel__cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Where the central directory is, the way Python's zipfile finds it
 * (_EndRecData, _EndRecData64): the last end-of-central-directory record,
 * a zip64 record right before it when its locator is there, and the
 * directory right before that record. */
static int find_central(int fd, uint64_t size, uint64_t *cd_off, uint64_t *cd_size,
			struct eb_error **err)
{
	unsigned char *tail;
	size_t tn = size < 22 + 65535 ? (size_t)size : 22 + 65535;
	uint64_t tail_off = size - tn, rec;
	unsigned char loc[20], z64[56];
	size_t i;
	int found = 0;

	if (tn < 22)
		return eb_error_set(err, EB_EINVALID, "not a zip file");
	tail = eb_xmalloc(tn);
	if (pread_all(fd, tail, tn, tail_off) < 0) {
		free(tail);
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read the wheel");
	}
	for (i = tn - 22 + 1; i-- > 0;)
		if (memcmp(tail + i, "PK\005\006", 4) == 0) {
			found = 1;
			break;
		}
	if (!found) {
		free(tail);
		return eb_error_set(err, EB_EINVALID, "not a zip file (no central directory)");
	}
	rec = tail_off + i;
	*cd_size = le32(tail + i + 12);
	free(tail);
	if (rec >= 20 && pread_all(fd, loc, 20, rec - 20) == 0 &&
	    memcmp(loc, "PK\006\007", 4) == 0) {
		if (rec < 20 + 56 || pread_all(fd, z64, 56, rec - 20 - 56) < 0 ||
		    memcmp(z64, "PK\006\006", 4) != 0)
			return eb_error_set(err, EB_EINVALID, "corrupt zip64 end of central directory");
		rec = rec - 20 - 56;
		*cd_size = le64(z64 + 40);
	}
	if (*cd_size > rec)
		return eb_error_set(err, EB_EINVALID, "corrupt zip central directory");
	if (*cd_size > CD_MAX)
		return eb_error_set(err, EB_ETOOBIG, "zip central directory larger than %u bytes",
				    CD_MAX);
	*cd_off = rec - *cd_size;
	return 0;
}

/* One central directory record's location fields, the zip64 extra
 * field's values where the record's are saturated. */
static void cd_entry(struct cdent *c, const unsigned char *h, size_t nl, size_t xl,
		     const char *name)
{
	const unsigned char *x = h + 46 + nl, *end = x + xl;

	c->name = eb_xstrdup(name);
	c->method = le16(h + 10);
	c->csize = le32(h + 20);
	c->usize = le32(h + 24);
	c->lho = le32(h + 42);
	while (end - x >= 4) {
		unsigned id = le16(x), len = le16(x + 2);
		const unsigned char *v = x + 4;

		if ((size_t)(end - v) < len)
			break;
		if (id == 1) {
			const unsigned char *ve = v + len;
			if (c->usize == 0xffffffffu && ve - v >= 8)
				c->usize = le64(v), v += 8;
			if (c->csize == 0xffffffffu && ve - v >= 8)
				c->csize = le64(v), v += 8;
			if (c->lho == 0xffffffffu && ve - v >= 8)
				c->lho = le64(v);
			break;
		}
		x = v + len;
	}
}

static int cmp_cdent(const void *a, const void *b)
{
	return strcmp(((const struct cdent *)a)->name, ((const struct cdent *)b)->name);
}

void eb_wheel__cd_free(struct inst *in)
{
	for (size_t i = 0; i < in->ncd; i++)
		free(in->cd[i].name);
	free(in->cd);
	in->cd = NULL;
	in->ncd = 0;
}

/* A member too large to be worth a staged copy, read from the wheel at
 * write time instead: its data's place (the local header's length fields
 * say where the data starts), or 0 to stage it.  Only what nothing but
 * the layer reads: not a .py (compiled), a script (its shebang
 * rewritten) or a .dist-info file we parse. */
static int from_wheel(struct inst *in, struct entry *e, const char *raw, enum capture cp)
{
	struct cdent key = { (char *)raw, 0, 0, 0, 0 };
	const struct cdent *c;
	unsigned char lh[30];
	struct stat st;
	int fd, ok;

	if (cp != CAP_NONE || eb_wheel__has_suffix(e->path, ".py") ||
	    strstr(e->path, ".data/scripts/") || !in->ncd)
		return 0;
	c = bsearch(&key, in->cd, in->ncd, sizeof(*in->cd), cmp_cdent);
	if (!c || c->usize < in->stage_max || (c->method != 0 && c->method != 8))
		return 0;
	fd = open(in->wheel_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ok = fstat(fd, &st) == 0 && pread_all(fd, lh, sizeof(lh), c->lho) == 0 &&
	     memcmp(lh, "PK\003\004", 4) == 0;
	close(fd);
	if (!ok)
		return 0;
	e->zoff = c->lho + 30 + le16(lh + 26) + le16(lh + 28);
	if (e->zoff > (uint64_t)st.st_size || (uint64_t)st.st_size - e->zoff < c->csize)
		return 0;
	e->zcsize = c->csize;
	e->zmethod = (int)c->method;
	e->zip = 1;
	return 1;
}

/* The sorted names of the central directory, each checked; *out owned. */
static int central_names(struct inst *in, const char *wheel_path, char ***out, size_t *nout,
			 struct eb_error **err)
{
	eb_autoclose int fd = open(wheel_path, O_RDONLY | O_CLOEXEC);
	eb_autofree unsigned char *cd = NULL;
	struct stat st;
	uint64_t off = 0, size = 0;
	size_t pos = 0, cap = 0, cd_cap = 0;
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	*out = NULL;
	*nout = 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", wheel_path);
	if (!S_ISREG(st.st_mode))
		return eb_error_set(err, EB_EINVALID, "'%s' is not a regular file", wheel_path);
	if ((r = find_central(fd, (uint64_t)st.st_size, &off, &size, err)) < 0)
		return r;
	cd = eb_xmalloc(size ? (size_t)size : 1);
	if (pread_all(fd, cd, (size_t)size, off) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", wheel_path);
	while (pos < size) {
		const unsigned char *h = cd + pos;
		size_t nl, total;
		char *name;
		const char *why;

		if (size - pos < 46 || memcmp(h, "PK\001\002", 4) != 0) {
			r = eb_error_set(err, EB_EINVALID, "corrupt zip central directory");
			goto fail;
		}
		nl = le16(h + 28);
		total = 46 + nl + le16(h + 30) + le16(h + 32);
		if (total > size - pos) {
			r = eb_error_set(err, EB_EINVALID, "corrupt zip central directory");
			goto fail;
		}
		if (n + 1 > in->max_entries) {
			r = eb_error_set(err, EB_ETOOBIG, "more than %llu entries (zip bomb?)",
					 (unsigned long long)in->max_entries);
			goto fail;
		}
		name = eb_xstrndup((const char *)h + 46, nl);
		EB_ALLOC_GROW(names, n + 1, cap);
		names[n++] = name;
		EB_ALLOC_GROW(in->cd, in->ncd + 1, cd_cap);
		cd_entry(&in->cd[in->ncd++], h, nl, le16(h + 30), name);
		pos += total;
		if (strlen(name) != nl) {
			eb_autofree char *pn = eb_wheel__printable(name);
			r = eb_error_set(err, EB_EINVALID, "path '%s' contains a NUL byte", pn);
			goto fail;
		}
		/* Without the UTF-8 flag Python reads cp437, libarchive the
		 * locale's charset: only ASCII means the same to both. */
		if (!(le16(h + 8) & 0x800))
			for (const char *c = name; *c; c++)
				if ((unsigned char)*c >= 0x80) {
					eb_autofree char *pn = eb_wheel__printable(name);
					r = eb_error_set(err, EB_EINVALID,
							 "path '%s' is not ASCII and not marked UTF-8",
							 pn);
					goto fail;
				}
		{
			eb_autofree char *p = eb_xstrdup(name);
			size_t pl = strlen(p);
			if (pl > 1 && p[pl - 1] == '/')
				p[pl - 1] = '\0';
			if ((why = path_problem(p)) != NULL) {
				eb_autofree char *pn = eb_wheel__printable(p);
				r = eb_error_set(err, EB_EINVALID, "path '%s' %s", pn, why);
				goto fail;
			}
		}
	}
	if (n)
		eb_sort(names, n, sizeof(*names), eb_wheel__cmp_str);
	if (in->ncd)
		eb_sort(in->cd, in->ncd, sizeof(*in->cd), cmp_cdent);
	for (size_t i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			eb_autofree char *pn = eb_wheel__printable(names[i]);
			r = eb_error_set(err, EB_EINVALID, "'%s' appears twice in the archive", pn);
			goto fail;
		}
	*out = names;
	*nout = n;
	return 0;
fail:
	free_names(names, n);
	return r;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct eb_wheel_entry *)a)->name,
		      ((const struct eb_wheel_entry *)b)->name);
}

void eb_wheel_entries_free(struct eb_wheel_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

int eb_wheel_list(const char *path, struct eb_wheel_entry **out, size_t *nout,
		  struct eb_error **err)
{
	eb_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	eb_autofree unsigned char *cd = NULL;
	struct eb_wheel_entry *v = NULL;
	struct stat st;
	uint64_t off = 0, size = 0;
	size_t pos = 0, n = 0, cap = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", path);
	if ((r = find_central(fd, (uint64_t)st.st_size, &off, &size, err)) < 0)
		return r;
	cd = eb_xmalloc(size ? (size_t)size : 1);
	if (pread_all(fd, cd, (size_t)size, off) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
	while (pos < size) {
		const unsigned char *h = cd + pos;
		size_t nl, total;

		if (size - pos < 46 || memcmp(h, "PK\001\002", 4) != 0 ||
		    (total = 46 + (nl = le16(h + 28)) + le16(h + 30) + le16(h + 32)) > size - pos ||
		    n >= EB_WHEEL_DEFAULT_MAX_ENTRIES) {
			eb_wheel_entries_free(v, n);
			return eb_error_set(err, EB_EINVALID, "corrupt zip central directory in '%s'",
					    path);
		}
		pos += total;
		if (nl == 0 || h[46 + nl - 1] == '/')
			continue;
		EB_ALLOC_GROW(v, n + 1, cap);
		v[n].name = eb_xstrndup((const char *)h + 46, nl);
		v[n].crc32 = le32(h + 16);
		v[n].size = le32(h + 24);
		n++;
	}
	if (n)
		eb_sort(v, n, sizeof(*v), cmp_entry);
	*out = v;
	*nout = n;
	return 0;
}

int eb_wheel__extract(struct inst *in, const char *wheel_path, struct eb_error **err)
{
	struct archive *a = NULL;
	struct archive_entry *ae;
	uint64_t total = 0, count = 0;
	char **central = NULL, **seen = NULL;
	size_t ncentral = 0, nseen = 0, seen_cap = 0;
	int r = 0;

	locale_t utf8 = (locale_t)0, old = (locale_t)0;

	in->wheel_path = wheel_path;
	if ((r = central_names(in, wheel_path, &central, &ncentral, err)) < 0)
		return r;
	/* libarchive converts names to the locale's charset, and a process
	 * that never called setlocale() has ASCII: a wheel with a UTF-8 name
	 * would be refused.  Switch this thread (only) to C.UTF-8 while
	 * reading, so names come through as the UTF-8 they are. */
	utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (!utf8)
		utf8 = newlocale(LC_CTYPE_MASK, "C.utf8", (locale_t)0);
	if (utf8)
		old = uselocale(utf8);
	a = archive_read_new();
	if (!a)
		abort(); /* OOM */
	/* Both zip readers are registered; with a seekable file libarchive
	 * picks the one that reads the central directory, as Python's
	 * zipfile (and so pip) does. */
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, wheel_path, 65536) != ARCHIVE_OK) {
		r = eb_error_set(err, EB_EIO, "cannot open '%s': %s", wheel_path,
				 archive_error_string(a) ? archive_error_string(a) : "unknown error");
		goto out;
	}
	for (;;) {
		int ar = archive_read_next_header(a, &ae);
		if (ar == ARCHIVE_EOF)
			break;
		if (ar != ARCHIVE_OK) {
			/* ARCHIVE_WARN included: e.g. a name that does not
			 * convert, which would be read differently elsewhere. */
			r = eb_error_set(err, EB_EINVALID, "not a valid zip archive: %s",
					 archive_error_string(a) ? archive_error_string(a)
								 : "unknown error");
			goto out;
		}
		if (++count > in->max_entries) {
			r = eb_error_set(err, EB_ETOOBIG, "more than %llu entries (zip bomb?)",
					 (unsigned long long)in->max_entries);
			goto out;
		}
		{
			const char *nm = archive_entry_pathname_utf8(ae);
			if (!nm)
				nm = archive_entry_pathname(ae);
			EB_ALLOC_GROW(seen, nseen + 1, seen_cap);
			seen[nseen++] = eb_xstrdup(nm ? nm : "");
		}
		if ((r = extract_entry(in, a, ae, &total, err)) < 0)
			goto out;
	}
	if (nseen)
		eb_sort(seen, nseen, sizeof(*seen), eb_wheel__cmp_str);
	for (size_t i = 0; i < nseen || i < ncentral; i++)
		if (i >= nseen || i >= ncentral || strcmp(seen[i], central[i]) != 0) {
			r = eb_error_set(err, EB_EINVALID,
					 "the zip's local headers do not match its central directory");
			goto out;
		}
out:
	/* the members' places are on their entries now */
	eb_wheel__cd_free(in);
	free_names(central, ncentral);
	free_names(seen, nseen);
	archive_read_free(a);
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
	return r;
}
