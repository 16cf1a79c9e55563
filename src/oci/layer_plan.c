/*
 * layer_plan.c - the entry planning half of the layer writer (see
 * layer.h): the builder that collects files, bytes, directories and links,
 * the tree walk that adds a directory with its excludes and hardlinks, and
 * eb_layer__prepare(), which sorts, deduplicates, rebases onto the base image and
 * fills in parents and hardlink groups.  layer.c streams the planned
 * entries as tar and keeps the caches (layer_internal.h between them).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/cache.h"
#include "oci/basefs.h"
#include "oci/compress.h"
#include "oci/inflate.h"
#include "oci/layer.h"
#include "oci/layer_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/encode.h"
#include "util/fs.h"
#include "util/glob.h"

/* ---- builder ----------------------------------------------------------- */

struct eb_layer_builder *eb_layer_builder_new(void)
{
	return eb_xcalloc(1, sizeof(struct eb_layer_builder));
}

static void entry_release(struct entry *e)
{
	free(e->path);
	free(e->src);
	free(e->data);
	free(e->link);
}

void eb_layer_builder_free(struct eb_layer_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		entry_release(&b->v[i]);
	for (size_t i = 0; i < b->nroots; i++)
		free(b->roots[i]);
	free(b->roots);
	free(b->v);
	free(b);
}

void eb_layer_builder_set_base(struct eb_layer_builder *b, const struct eb_basefs *base)
{
	b->base = base;
	b->prepared = 0;
}

int eb_layer__cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t eb_layer_builder_count(const struct eb_layer_builder *b)
{
	const char **paths = eb_xmalloc((b->n ? b->n : 1) * sizeof(*paths));
	size_t m = 0, n = 0;

	/* Before eb_layer__prepare() the array may still hold replaced paths; count
	 * distinct explicit ones without reordering a const builder. */
	for (size_t i = 0; i < b->n; i++)
		if (!b->v[i].implicit)
			paths[m++] = b->v[i].path;
	if (m > 1)
		eb_sort(paths, m, sizeof(*paths), eb_layer__cmp_strp);
	for (size_t i = 0; i < m; i++)
		n += i == 0 || strcmp(paths[i - 1], paths[i]) != 0;
	free(paths);
	return n;
}

/* Lexically normalise a layer path: no leading '/', no "." or empty
 * components; ".." is an error (a layer must not write outside its root).
 * The root itself comes back as "". */
static int norm_path(const char *in, char **out, struct eb_error **err)
{
	struct eb_buf b = EB_BUF_INIT;
	const char *p = in;

	*out = NULL;
	eb_buf_init(&b, 0);
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			eb_buf_release(&b);
			return eb_error_set(err, EB_EINVALID,
					    "layer path '%s' must not contain '..'", in);
		}
		if (b.len)
			eb_buf_addc(&b, '/');
		eb_buf_add(&b, s, n);
	}
	*out = eb_buf_detach(&b, NULL);
	return 0;
}

static struct entry *push(struct eb_layer_builder *b, char *path, enum etype type, unsigned mode)
{
	struct entry *e;

	EB_ALLOC_GROW(b->v, b->n + 1, b->cap);
	e = &b->v[b->n++];
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->type = type;
	e->mode = mode & 07777;
	e->seq = b->seq++;
	e->linkto = SIZE_MAX;
	b->prepared = 0;
	return e;
}

void eb_layer__fstat_id_of(const struct stat *st, struct fstat_id *id)
{
	memset(id, 0, sizeof(*id));
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_sec = (int64_t)st->st_mtim.tv_sec;
	id->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	id->ctime_sec = (int64_t)st->st_ctim.tv_sec;
	id->ctime_nsec = (uint32_t)st->st_ctim.tv_nsec;
	id->mode = (uint32_t)st->st_mode;
}

int eb_layer__fstat_id_eq(const struct fstat_id *a, const struct fstat_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec &&
	       a->mode == b->mode;
}

/* The name of a disk source, for the name of its file-hash cache.
 * Excludes are part of it: the same tree walked with other excludes is
 * another file set, and sharing one cache file would make the two evict
 * each other's records on every build. */
char *eb_layer__root_name(const char *kind, const char *src, const char *const *excludes,
			  size_t nexcludes)
{
	struct eb_buf d = EB_BUF_INIT;
	char *abs = realpath(src, NULL);
	const char *p = abs ? abs : src;

	eb_buf_init(&d, 0);
	/* Length-prefixed, so no path or pattern can forge a boundary. */
	eb_buf_addf(&d, "%s %zu:%s", kind, strlen(p), p);
	for (size_t i = 0; i < nexcludes; i++)
		eb_buf_addf(&d, " %zu:%s", strlen(excludes[i]), excludes[i]);
	free(abs);
	return eb_buf_detach(&d, NULL);
}

static void add_root(struct eb_layer_builder *b, const char *kind, const char *src,
		     const char *const *excludes, size_t nexcludes)
{
	EB_ALLOC_GROW(b->roots, b->nroots + 1, b->rootcap);
	b->roots[b->nroots++] = eb_layer__root_name(kind, src, excludes, nexcludes);
}

/* Normalise path and refuse the root, which no entry may name. */
static int entry_path(const char *path, char **out, struct eb_error **err)
{
	int rc = norm_path(path, out, err);

	if (rc < 0)
		return rc;
	if (!**out) {
		free(*out);
		*out = NULL;
		return eb_error_set(err, EB_EINVALID, "layer path '%s' names the layer root", path);
	}
	return 0;
}

/* add_file with the permission bits from the file (mode < 0) or given. */
static int add_file(struct eb_layer_builder *b, const char *path, const char *src, int mode,
		    struct eb_error **err)
{
	char *p;
	struct stat st;
	struct entry *e;
	int rc;

	if ((rc = entry_path(path, &p, err)) < 0)
		return rc;
	if (stat(src, &st) < 0) {
		free(p);
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot read '%s'", src);
	}
	if (!S_ISREG(st.st_mode)) {
		free(p);
		return eb_error_set(err, EB_EINVALID, "'%s' is not a regular file", src);
	}
	e = push(b, p, T_FILE, mode < 0 ? st.st_mode : (unsigned)mode);
	e->src = eb_xstrdup(src);
	e->size = (uint64_t)st.st_size;
	e->has_st = 1;
	eb_layer__fstat_id_of(&st, &e->st);
	/* named when a cached write opens the file-hash cache, not here: a
	 * wheel's 15k files would cost a realpath() and a string each for a
	 * layer written uncached */
	e->file_root = 1;
	return 0;
}

int eb_layer_add_file(struct eb_layer_builder *b, const char *path, const char *src,
		      struct eb_error **err)
{
	return add_file(b, path, src, -1, err);
}

int eb_layer_add_file_as(struct eb_layer_builder *b, const char *path, const char *src,
			 unsigned mode, struct eb_error **err)
{
	return add_file(b, path, src, (int)(mode & 07777), err);
}

int eb_layer_add_member(struct eb_layer_builder *b, const char *path, const char *src,
			uint64_t offset, uint64_t csize, int method, uint64_t size,
			const char *digest, unsigned mode, struct eb_error **err)
{
	char *p;
	struct entry *e;
	int rc;

	if (method != EB_INFLATE_STORED && method != EB_INFLATE_DEFLATE)
		return eb_error_set(err, EB_EINVALID, "'%s': compression method %d", path, method);
	if (!digest || strlen(digest) != EB_DIGEST_STR_LEN || !eb_digest_valid(digest))
		return eb_error_set(err, EB_EINVALID, "'%s': no sha256 digest", path);
	if ((rc = entry_path(path, &p, err)) < 0)
		return rc;
	e = push(b, p, T_FILE, mode & 07777);
	e->src = eb_xstrdup(src);
	e->size = size;
	e->member = 1;
	e->zmethod = method;
	e->zoff = offset;
	e->zsize = csize;
	/* what the write checks the bytes against, as for a cache key's */
	memcpy(e->digest, digest, EB_DIGEST_STR_LEN + 1);
	e->has_digest = 1;
	return 0;
}

int eb_layer_add_bytes(struct eb_layer_builder *b, const char *path, const void *data,
		       size_t len, unsigned mode, struct eb_error **err)
{
	char *p;
	struct entry *e;
	int rc;

	if ((rc = entry_path(path, &p, err)) < 0)
		return rc;
	e = push(b, p, T_FILE, mode);
	e->data = eb_xmalloc(len ? len : 1);
	if (len)
		memcpy(e->data, data, len);
	e->size = len;
	return 0;
}

void eb_layer_set_last_owner(struct eb_layer_builder *b, uint32_t uid, uint32_t gid)
{
	if (!b->n)
		return;
	b->v[b->n - 1].has_owner = 1;
	b->v[b->n - 1].own_uid = uid;
	b->v[b->n - 1].own_gid = gid;
}

int eb_layer_add_dir(struct eb_layer_builder *b, const char *path, unsigned mode,
		     struct eb_error **err)
{
	char *p;
	int rc;

	if ((rc = entry_path(path, &p, err)) < 0)
		return rc;
	push(b, p, T_DIR, mode);
	return 0;
}

int eb_layer_add_symlink(struct eb_layer_builder *b, const char *path, const char *target,
			 struct eb_error **err)
{
	char *p;
	int rc;

	if (!*target)
		return eb_error_set(err, EB_EINVALID, "symlink '%s' has an empty target", path);
	if ((rc = entry_path(path, &p, err)) < 0)
		return rc;
	push(b, p, T_SYMLINK, 0777)->link = eb_xstrdup(target);
	return 0;
}

int eb_layer_add_hardlink(struct eb_layer_builder *b, const char *path, const char *target,
			  struct eb_error **err)
{
	char *p, *t;
	int rc;

	if ((rc = entry_path(path, &p, err)) < 0)
		return rc;
	if ((rc = entry_path(target, &t, err)) < 0) {
		free(p);
		return rc;
	}
	if (strcmp(p, t) == 0) {
		rc = eb_error_set(err, EB_EINVALID, "hardlink '%s' points to itself", path);
		free(p);
		free(t);
		return rc;
	}
	push(b, p, T_HARDLINK, 0)->link = t;
	return 0;
}

/* ---- add_tree ---------------------------------------------------------- */

struct pattern {
	char *pat;    /* without leading/trailing '/' */
	int anchored; /* matched against the whole relative path */
	int dir_only; /* written with a trailing '/' */
};

struct inode_ref {
	dev_t dev;
	ino_t ino;
	size_t idx; /* entry index */
};

struct walk {
	struct eb_layer_builder *b;
	struct pattern *pats;
	size_t npats;
	eb_layer_filter_fn filter;
	void *filter_ud;
	struct inode_ref *inodes;
	size_t ninodes, cap;
};

static int excluded(const struct walk *w, const char *rel, int is_dir)
{
	for (size_t i = 0; i < w->npats; i++) {
		const struct pattern *p = &w->pats[i];

		if (p->dir_only && !is_dir)
			continue;
		if (p->anchored ? eb_glob_match(p->pat, rel)
				: eb_glob_match(p->pat, eb_path_basename(rel)))
			return 1;
	}
	return w->filter && w->filter(w->filter_ud, rel, is_dir);
}

static int read_symlink(const char *path, off_t hint, char **out, struct eb_error **err)
{
	size_t cap = hint > 0 ? (size_t)hint + 1 : 256;

	for (;;) {
		char *buf = eb_xmalloc(cap);
		ssize_t n = readlink(path, buf, cap);
		if (n < 0) {
			free(buf);
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read symlink '%s'", path);
		}
		if ((size_t)n < cap) {
			buf[n] = '\0';
			*out = buf;
			return 0;
		}
		free(buf);
		cap *= 2;
	}
}

static const char *special_kind(mode_t m)
{
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	return "special file";
}

/* Add one walked node (already lstat'ed) and, for a directory, its subtree. */
static int walk_node(struct walk *w, const char *src, const char *rel, const char *dest,
		     const struct stat *st, struct eb_error **err);

static int walk_dir(struct walk *w, const char *src, const char *rel, const char *dest,
		    struct eb_error **err)
{
	DIR *d = opendir(src);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;

	if (!d)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open directory '%s'", src);
	/* Read the whole listing first so only one directory is open at a
	 * time however deep the tree, and so errors come in a stable order. */
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		EB_ALLOC_GROW(names, n + 1, cap);
		names[n++] = eb_xstrdup(de->d_name);
	}
	if (errno) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot read directory '%s'", src);
		closedir(d);
		goto done;
	}
	closedir(d);
	if (n)
		eb_sort(names, n, sizeof(*names), eb_layer__cmp_strp);
	for (size_t i = 0; i < n && rc == 0; i++) {
		eb_autofree char *csrc = eb_path_join(src, names[i]);
		eb_autofree char *crel = *rel ? eb_xasprintf("%s/%s", rel, names[i]) : eb_xstrdup(names[i]);
		eb_autofree char *cdest = *dest ? eb_xasprintf("%s/%s", dest, names[i])
						: eb_xstrdup(names[i]);
		struct stat st;

		if (lstat(csrc, &st) < 0) {
			rc = eb_error_set_errno(err, EB_EIO, errno, "cannot stat '%s'", csrc);
			break;
		}
		if (excluded(w, crel, S_ISDIR(st.st_mode)))
			continue;
		rc = walk_node(w, csrc, crel, cdest, &st, err);
	}
done:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int walk_node(struct walk *w, const char *src, const char *rel, const char *dest,
		     const struct stat *st, struct eb_error **err)
{
	struct eb_layer_builder *b = w->b;
	struct entry *e;
	char *target = NULL;
	int rc;

	if (S_ISDIR(st->st_mode)) {
		/* the directory copied into (dest itself) is, like COPY's, kept
		 * as the base has it; only its contents come from src */
		if (*dest)
			push(b, eb_xstrdup(dest), T_DIR, st->st_mode)->parentlike = !*rel;
		return walk_dir(w, src, rel, dest, err);
	}
	if (S_ISREG(st->st_mode)) {
		e = push(b, eb_xstrdup(dest), T_FILE, st->st_mode);
		e->src = eb_xstrdup(src);
		e->nofollow = 1;
		e->size = (uint64_t)st->st_size;
		/* The walk's lstat is all a no-op build needs: the file-hash
		 * cache is looked up with it, no second stat. */
		e->has_st = 1;
		eb_layer__fstat_id_of(st, &e->st);
		if (st->st_nlink > 1) {
			EB_ALLOC_GROW(w->inodes, w->ninodes + 1, w->cap);
			w->inodes[w->ninodes++] = (struct inode_ref){ st->st_dev, st->st_ino, b->n - 1 };
		}
		return 0;
	}
	if (S_ISLNK(st->st_mode)) {
		if ((rc = read_symlink(src, st->st_size, &target, err)) < 0)
			return rc;
		if (!*target) {
			free(target);
			return eb_error_set(err, EB_EINVALID, "symlink '%s' has an empty target", src);
		}
		push(b, eb_xstrdup(dest), T_SYMLINK, 0777)->link = target;
		return 0;
	}
	return eb_error_set(err, EB_EINVALID, "'%s' is a %s; only files, directories and "
			    "symlinks can go into a layer", src, special_kind(st->st_mode));
}

static int cmp_inode(const void *a, const void *b)
{
	const struct inode_ref *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Turn every file sharing an inode with an earlier one into a hardlink to
 * it.  Which path keeps the content is settled later, in eb_layer__prepare(), by
 * path order; here any member will do. */
static void link_inodes(struct walk *w)
{
	struct entry *v = w->b->v;
	size_t start = 0;

	if (w->ninodes > 1)
		eb_sort(w->inodes, w->ninodes, sizeof(*w->inodes), cmp_inode);
	for (size_t i = 1; i < w->ninodes; i++) {
		const struct inode_ref *first = &w->inodes[start];
		struct entry *e;

		if (w->inodes[i].dev != first->dev || w->inodes[i].ino != first->ino) {
			start = i;
			continue;
		}
		e = &v[w->inodes[i].idx];
		e->type = T_HARDLINK;
		e->link = eb_xstrdup(v[first->idx].path);
		free(e->src);
		e->src = NULL;
		e->size = 0;
		e->has_st = 0;
	}
}

int eb_layer_add_tree(struct eb_layer_builder *b, const char *src, const char *dest_prefix,
		      const char *const *excludes, size_t nexcludes, struct eb_error **err)
{
	return eb_layer_add_tree_filtered(b, src, dest_prefix, excludes, nexcludes, NULL, NULL,
					  err);
}

int eb_layer_add_tree_filtered(struct eb_layer_builder *b, const char *src,
			       const char *dest_prefix, const char *const *excludes,
			       size_t nexcludes, eb_layer_filter_fn filter, void *filter_ud,
			       struct eb_error **err)
{
	struct walk w = { .b = b, .filter = filter, .filter_ud = filter_ud };
	const char *why;
	eb_autofree char *dest = NULL;
	struct stat st;
	size_t mark = b->n;
	int rc;

	if ((rc = norm_path(dest_prefix ? dest_prefix : "", &dest, err)) < 0)
		return rc;
	if (stat(src, &st) < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot read '%s'", src);
	if (S_ISREG(st.st_mode)) {
		size_t dl = dest_prefix ? strlen(dest_prefix) : 0;
		eb_autofree char *to = NULL;

		/* "dir/" means "into dir", as with COPY and cp. */
		if (dl == 0 || dest_prefix[dl - 1] == '/')
			to = *dest ? eb_xasprintf("%s/%s", dest, eb_path_basename(src))
				   : eb_xstrdup(eb_path_basename(src));
		else
			to = eb_xstrdup(dest);
		return eb_layer_add_file(b, to, src, err);
	}
	if (!S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EINVALID, "'%s' is a %s; only files, directories and "
				    "symlinks can go into a layer", src, special_kind(st.st_mode));

	for (size_t i = 0; i < nexcludes; i++)
		if (!eb_glob_valid(excludes[i], &why))
			return eb_error_set(err, EB_EINVALID, "exclude pattern '%s' %s", excludes[i],
					    why);
	w.pats = eb_xcalloc(nexcludes ? nexcludes : 1, sizeof(*w.pats));
	for (size_t i = 0; i < nexcludes; i++) {
		const char *p = excludes[i];
		size_t len;

		w.pats[w.npats].anchored = p[0] == '/';
		while (*p == '/')
			p++;
		len = strlen(p);
		while (len && p[len - 1] == '/') {
			w.pats[w.npats].dir_only = 1;
			len--;
		}
		if (!len)
			continue; /* "" or "/" would exclude everything or nothing: ignore */
		w.pats[w.npats].pat = eb_xstrndup(p, len);
		if (memchr(p, '/', len))
			w.pats[w.npats].anchored = 1;
		w.npats++;
	}

	rc = walk_node(&w, src, "", dest, &st, err);
	if (rc == 0) {
		link_inodes(&w);
		add_root(b, "tree", src, excludes, nexcludes);
	} else {
		/* All or nothing: drop what this walk added. */
		for (size_t i = mark; i < b->n; i++)
			entry_release(&b->v[i]);
		b->n = mark;
	}
	for (size_t i = 0; i < w.npats; i++)
		free(w.pats[i].pat);
	free(w.pats);
	free(w.inodes);
	return rc;
}

/* ---- prepare: sort, dedup, parents, hardlink groups -------------------- */

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	/* Explicit entries beat implicit parents, then the later add wins:
	 * order so the winner comes last. */
	if (x->implicit != y->implicit)
		return x->implicit ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sort_dedup(struct eb_layer_builder *b)
{
	size_t o = 0;

	if (b->n > 1)
		eb_sort(b->v, b->n, sizeof(*b->v), cmp_entry);
	for (size_t i = 0; i < b->n; i++) {
		if (i + 1 < b->n && strcmp(b->v[i].path, b->v[i + 1].path) == 0) {
			entry_release(&b->v[i]);
			continue;
		}
		b->v[o++] = b->v[i];
	}
	b->n = o;
}

static struct entry *find(const struct eb_layer_builder *b, const char *path, size_t len)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = b->v[mid].path;
		int c = strncmp(p, path, len);
		if (c == 0 && p[len] != '\0')
			c = 1;
		if (c == 0)
			return &b->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Where path lands in the base: its parents resolved through the base's
 * symlinks (and path itself too for a directory, which merges into what
 * a symlink points to, as COPY does).  *cache holds the last parent
 * resolved: entries come sorted, so most share it. */
static int land(struct eb_layer_builder *b, const char *path, int is_dir, char **cache_in,
		char **cache_out, char **out, struct eb_error **err)
{
	const char *slash = strrchr(path, '/');
	size_t plen = slash ? (size_t)(slash - path) : 0;
	char *res = NULL;
	int rc;

	if (is_dir)
		return eb_basefs_resolve(b->base, path, 1, out, err);
	if (!*cache_in || strlen(*cache_in) != plen || strncmp(*cache_in, path, plen) != 0) {
		char *parent = eb_xstrndup(path, plen);
		rc = eb_basefs_resolve(b->base, parent, 1, &res, err);
		if (rc < 0) {
			free(parent);
			return rc;
		}
		free(*cache_in);
		free(*cache_out);
		*cache_in = parent;
		*cache_out = res;
	}
	*out = **cache_out ? eb_xasprintf("%s/%s", *cache_out, slash ? slash + 1 : path)
			   : eb_xstrdup(slash ? slash + 1 : path);
	return 0;
}

/* Move every explicit entry to where it lands in the base image, and
 * refuse what would replace a base directory with a non-directory or a
 * base file with a directory. */
static int rebase(struct eb_layer_builder *b, struct eb_error **err)
{
	char *cin = NULL, *cout = NULL;
	int rc = 0;

	for (size_t i = 0; i < b->n && rc == 0; i++) {
		struct entry *e = &b->v[i];
		const struct eb_basefs_node *n;
		char *to = NULL;

		rc = land(b, e->path, e->type == T_DIR, &cin, &cout, &to, err);
		if (rc < 0)
			break;
		n = eb_basefs_lookup(b->base, to);
		if (n && e->type == T_DIR && n->type != EB_BASEFS_DIR)
			rc = eb_error_set(err, EB_EINVALID,
					  "'/%s' would replace the %s '/%s' of the base image with a "
					  "directory", e->path, n->type == EB_BASEFS_FILE ? "file" : "special file",
					  to);
		else if (n && e->type != T_DIR && n->type == EB_BASEFS_DIR)
			rc = eb_error_set(err, EB_EINVALID,
					  "'/%s' would replace the directory '/%s' of the base image",
					  e->path, to);
		if (rc == 0 && e->type == T_HARDLINK) {
			char *lt = NULL;
			rc = land(b, e->link, 0, &cin, &cout, &lt, err);
			if (rc == 0) {
				free(e->link);
				e->link = lt;
			}
		}
		if (rc == 0) {
			free(e->path);
			e->path = to;
		} else {
			free(to);
		}
	}
	free(cin);
	free(cout);
	return rc;
}

/* Parent directories the base has keep its mode and owner: an entry
 * with the base's metadata (what a Docker layer diff holds), never
 * 0755 root over /tmp's 1777 or /root's 0700. */
static int base_parents(struct eb_layer_builder *b, struct eb_error **err)
{
	for (size_t i = 0; i < b->n; i++) {
		struct entry *e = &b->v[i];
		const struct eb_basefs_node *n;

		if (e->type != T_DIR || !(e->implicit || e->parentlike))
			continue;
		n = eb_basefs_lookup(b->base, e->path);
		if (!n)
			continue;
		if (n->type != EB_BASEFS_DIR)
			return eb_error_set(err, EB_EINVALID,
					    "'/%s' is a %s in the base image, not a directory", e->path,
					    n->type == EB_BASEFS_SYMLINK ? "symlink" : "file");
		e->has_meta = 1;
		e->meta_mode = n->mode & 07777;
		e->meta_uid = n->uid;
		e->meta_gid = n->gid;
	}
	return 0;
}

int eb_layer__prepare(struct eb_layer_builder *b, struct eb_error **err)
{
	size_t n0, o;
	const char *prev = NULL;
	size_t prevlen = 0;

	if (b->prepared)
		return 0;
	/* Start from explicit entries only, so adds after an earlier
	 * eb_layer__prepare() are treated exactly like adds before it. */
	o = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (b->v[i].implicit)
			entry_release(&b->v[i]);
		else
			b->v[o++] = b->v[i];
	}
	b->n = o;
	sort_dedup(b);
	if (b->base) {
		int rc = rebase(b, err);
		if (rc < 0)
			return rc;
		sort_dedup(b);
	}

	/* Every ancestor of every path, as an implicit directory; consecutive
	 * entries mostly share a parent, so skip chains already pushed. */
	n0 = b->n;
	for (size_t i = 0; i < n0; i++) {
		const char *path = b->v[i].path;
		const char *slash = strrchr(path, '/');
		size_t plen = slash ? (size_t)(slash - path) : 0;

		if (!plen || (prev && plen == prevlen && strncmp(prev, path, plen) == 0))
			continue;
		prev = path; /* stable: paths are heap strings, not moved by realloc */
		prevlen = plen;
		for (size_t k = 0; path[k]; k++) {
			if (path[k] != '/')
				continue;
			struct entry *e = push(b, eb_xstrndup(path, k), T_DIR, 0755);
			e->implicit = 1;
		}
	}
	sort_dedup(b);
	if (b->base) {
		int rc = base_parents(b, err);
		if (rc < 0)
			return rc;
	}

	for (size_t i = 0; i < b->n; i++) {
		struct entry *e = &b->v[i];
		const char *slash = strrchr(e->path, '/');
		const struct entry *parent;

		e->content = SIZE_MAX;
		e->linkto = SIZE_MAX;
		if (!slash)
			continue;
		parent = find(b, e->path, (size_t)(slash - e->path));
		if (!parent || parent->type != T_DIR)
			return eb_error_set(err, EB_EINVALID,
					    "'%s' cannot be in the layer: '%s' is not a directory",
					    e->path, parent ? parent->path : "?");
	}

	/* Resolve hardlinks to the entry holding the content; then the first
	 * path of each group (in output order) carries the content and the
	 * others link to it, whatever order they were added in. */
	for (size_t i = 0; i < b->n; i++) {
		struct entry *e = &b->v[i];
		const struct entry *t = e;
		size_t hops = 0;

		if (e->type == T_FILE) {
			e->content = i;
			continue;
		}
		if (e->type != T_HARDLINK)
			continue;
		while (t->type == T_HARDLINK) {
			const struct entry *next = find(b, t->link, strlen(t->link));
			if (!next || (next->type != T_FILE && next->type != T_HARDLINK))
				return eb_error_set(err, EB_EINVALID,
						    "hardlink '%s' points to '%s', which is not a "
						    "regular file in the layer", e->path, t->link);
			if (++hops > b->n)
				return eb_error_set(err, EB_EINVALID,
						    "hardlink '%s' is part of a cycle", e->path);
			t = next;
		}
		e->content = (size_t)(t - b->v);
	}
	{
		/* first[c] = index of the first path whose content is c. */
		size_t *first = eb_xmalloc((b->n ? b->n : 1) * sizeof(*first));
		for (size_t i = 0; i < b->n; i++)
			first[i] = SIZE_MAX;
		for (size_t i = 0; i < b->n; i++) {
			struct entry *e = &b->v[i];
			if (e->content == SIZE_MAX)
				continue;
			if (first[e->content] == SIZE_MAX)
				first[e->content] = i;
			else
				e->linkto = first[e->content];
		}
		free(first);
	}
	b->prepared = 1;
	return 0;
}
