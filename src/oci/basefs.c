/*
 * basefs.c - a base image's filesystem from its layers' tar headers:
 * a sorted array of nodes, rebuilt per layer (whiteouts first, then the
 * layer's entries), searched by bisection.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "oci/basefs.h"
#include "oci/layerin.h"
#include "oci/cache.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/pool.h"

/* Linux's limit on symlinks followed in one lookup (MAXSYMLINKS). */
#define MAX_LINKS 40

struct eb_basefs {
	struct eb_basefs_node *v; /* sorted by path, unique */
	size_t n, cap;
	unsigned nlayers; /* layers added so far: the next one's index */
};

struct eb_basefs *eb_basefs_new(void)
{
	return eb_xcalloc(1, sizeof(struct eb_basefs));
}

static void node_release(struct eb_basefs_node *n)
{
	free(n->path);
	free(n->link);
	free(n->data);
	n->path = n->link = n->data = NULL;
	n->datalen = 0;
}

void eb_basefs_free(struct eb_basefs *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		node_release(&fs->v[i]);
	free(fs->v);
	free(fs);
}

size_t eb_basefs_count(const struct eb_basefs *fs)
{
	return fs->n;
}

/* "./a/b/", "/a//b" -> "a/b"; "." and "./" -> "". */
static char *norm(const char *raw)
{
	struct eb_buf b;
	const char *p = raw;

	eb_buf_init(&b, 0);
	while (*p) {
		const char *s;
		size_t len;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - s);
		if (len == 0 || (len == 1 && s[0] == '.'))
			continue;
		if (b.len)
			(void)eb_buf_adds(&b, "/");
		(void)eb_buf_add(&b, s, len);
	}
	return eb_buf_detach(&b, NULL);
}

int eb_basefs_is_whiteout(const char *raw)
{
	char *p = norm(raw);
	const char *base = strrchr(p, '/');
	int r;

	base = base ? base + 1 : p;
	r = strncmp(base, ".wh.", 4) == 0;
	free(p);
	return r;
}

int eb_basefs_keeps(const char *path)
{
	static const char *const kept[] = { "etc/passwd", "etc/group", "etc/login.defs",
					    "var/lib/dpkg/status" };

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (strcmp(path, kept[i]) == 0)
			return 1;
	return 0;
}

/* The data of the current entry into n->data, when it fits: a larger one
 * is left to eb_basefile_read. */
static int keep_data(struct archive *a, struct eb_basefs_node *n, const char *what,
		     struct eb_error **err)
{
	struct eb_buf b;
	la_ssize_t got;
	char chunk[16384];

	eb_buf_init(&b, EB_BASEFS_KEEP_MAX);
	while ((got = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		if (eb_buf_add(&b, chunk, (size_t)got) < 0) {
			eb_buf_release(&b);
			return 0;
		}
	if (got < 0) {
		eb_buf_release(&b);
		return eb_error_set(err, EB_EINVALID, "base layer %s: reading '%s': %s", what,
				    n->path, archive_error_string(a));
	}
	n->data = eb_buf_detach(&b, &n->datalen);
	return 0;
}

/* Index of the first of the first n nodes whose path is >= key
 * (bytewise). */
static size_t lower_bound_in(const struct eb_basefs *fs, size_t n, const char *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(fs->v[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t lower_bound(const struct eb_basefs *fs, const char *key)
{
	return lower_bound_in(fs, fs->n, key);
}

/* The node at path among the first n (a sorted run). */
static struct eb_basefs_node *find_in(const struct eb_basefs *fs, size_t n, const char *path)
{
	size_t i = lower_bound_in(fs, n, path);

	return i < n && strcmp(fs->v[i].path, path) == 0 ? &fs->v[i] : NULL;
}

static struct eb_basefs_node *find(const struct eb_basefs *fs, const char *path)
{
	return find_in(fs, fs->n, path);
}

/* Drop path itself (unless children_only) and everything below it, among
 * the first n nodes (a sorted run).  Nodes are only marked (type 0) so the
 * array stays searchable; compact() releases them. */
static void drop(struct eb_basefs *fs, const char *path, int children_only, size_t n)
{
	struct eb_basefs_node *self = children_only ? NULL : find_in(fs, n, path);
	char *prefix = *path ? eb_xasprintf("%s/", path) : eb_xstrdup("");
	size_t plen = strlen(prefix);

	if (self)
		self->type = 0;
	for (size_t i = lower_bound_in(fs, n, prefix); i < n; i++) {
		if (strncmp(fs->v[i].path, prefix, plen) != 0)
			break;
		if (*fs->v[i].path)
			fs->v[i].type = 0; /* the root itself stays under an opaque "" */
	}
	free(prefix);
}

static void compact(struct eb_basefs *fs)
{
	size_t o = 0;

	for (size_t i = 0; i < fs->n; i++) {
		if (fs->v[i].type)
			fs->v[o++] = fs->v[i];
		else
			node_release(&fs->v[i]);
	}
	fs->n = o;
}

struct pending {
	struct eb_basefs_node node;
	size_t seq;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	int c = strcmp(x->node.path, y->node.path);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct eb_basefs_node *)a)->path,
		      ((const struct eb_basefs_node *)b)->path);
}

/* One layer's entries as read, before they are applied: reading (the
 * inflate and the tar headers) is most of the work and needs nothing of
 * the view, so several layers are read at once; applying is in order. */
struct layer_read {
	struct pending *adds;
	char **wh;  /* whiteouts: paths removed with their subtrees */
	char **opq; /* opaque directories */
	size_t nadds, capadds, nwh, capwh, nopq, capopq;
};

static void layer_read_release(struct layer_read *lr)
{
	for (size_t i = 0; i < lr->nadds; i++)
		node_release(&lr->adds[i].node);
	free(lr->adds);
	for (size_t i = 0; i < lr->nwh; i++)
		free(lr->wh[i]);
	free(lr->wh);
	for (size_t i = 0; i < lr->nopq; i++)
		free(lr->opq[i]);
	free(lr->opq);
	memset(lr, 0, sizeof(*lr));
}

static int read_layer(struct archive *a, unsigned layer, const char *what, struct layer_read *lr,
		      struct eb_error **err)
{
	struct archive_entry *e;
	int r = 0, ar;

	memset(lr, 0, sizeof(*lr));
	while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);
		char *p, *base;

		if (!raw)
			continue;
		p = norm(raw);
		base = strrchr(p, '/');
		base = base ? base + 1 : p;
		if (strcmp(base, ".wh..wh..opq") == 0) {
			EB_ALLOC_GROW(lr->opq, lr->nopq + 1, lr->capopq);
			lr->opq[lr->nopq++] = eb_xstrndup(p, base > p ? (size_t)(base - p - 1) : 0);
			free(p);
		} else if (strncmp(base, ".wh.", 4) == 0) {
			EB_ALLOC_GROW(lr->wh, lr->nwh + 1, lr->capwh);
			lr->wh[lr->nwh++] = eb_xasprintf("%.*s%s", (int)(base - p), p, base + 4);
			free(p);
		} else {
			struct pending *pe;
			mode_t ft = archive_entry_filetype(e);
			const char *hl = archive_entry_hardlink(e);

			EB_ALLOC_GROW(lr->adds, lr->nadds + 1, lr->capadds);
			pe = &lr->adds[lr->nadds];
			memset(pe, 0, sizeof(*pe));
			pe->seq = lr->nadds++;
			pe->node.path = p;
			pe->node.layer = layer;
			pe->node.entry = (uint32_t)pe->seq;
			pe->node.mode = (unsigned)archive_entry_perm(e) & 07777;
			pe->node.uid = (uint32_t)archive_entry_uid(e);
			pe->node.gid = (uint32_t)archive_entry_gid(e);
			if (hl)
				pe->node.type = EB_BASEFS_FILE;
			else if (ft == AE_IFDIR)
				pe->node.type = EB_BASEFS_DIR;
			else if (ft == AE_IFREG)
				pe->node.type = EB_BASEFS_FILE;
			else if (ft == AE_IFLNK) {
				const char *l = archive_entry_symlink(e);
				pe->node.type = EB_BASEFS_SYMLINK;
				pe->node.link = eb_xstrdup(l ? l : "");
			} else
				pe->node.type = EB_BASEFS_OTHER;
			if (!hl && ft == AE_IFREG && eb_basefs_keeps(p) &&
			    (r = keep_data(a, &pe->node, what, err)) < 0)
				goto fail;
		}
		archive_read_data_skip(a);
	}
	if (ar != ARCHIVE_EOF) {
		r = eb_error_set(err, EB_EINVALID, "base layer %s is not a readable tar: %s", what,
				 archive_error_string(a));
		goto fail;
	}
	/* within a layer the last entry of a path wins */
	if (lr->nadds > 1)
		eb_sort(lr->adds, lr->nadds, sizeof(*lr->adds), cmp_pending);
	return 0;
fail:
	layer_read_release(lr);
	return r;
}

/* Apply a layer read by read_layer() on top of the view (consumes lr). */
static void apply_layer(struct eb_basefs *fs, struct layer_read *lr)
{
	struct pending *adds = lr->adds;
	size_t nadds = lr->nadds;

	/* whiteouts and opaque markers hide what lower layers had */
	for (size_t i = 0; i < lr->nopq; i++)
		drop(fs, lr->opq[i], 1, fs->n);
	for (size_t i = 0; i < lr->nwh; i++)
		drop(fs, lr->wh[i], 0, fs->n);
	compact(fs);

	/* then this layer's entries; a new non-directory replaces a directory
	 * with its subtree, as extracting the tar would.  Paths new to the
	 * view go to its end only after the loop: the lookups below bisect,
	 * so the array must stay sorted until then */
	size_t nold = fs->n;
	for (size_t i = 0; i < nadds; i++) {
		struct eb_basefs_node *old;

		if (i + 1 < nadds && strcmp(adds[i].node.path, adds[i + 1].node.path) == 0)
			continue; /* released with lr */
		old = find_in(fs, nold, adds[i].node.path);
		if (old && old->type == EB_BASEFS_DIR && adds[i].node.type != EB_BASEFS_DIR) {
			/* (the subtree is all below nold: this layer's own
			 * entries under the path sort after it) */
			size_t was = fs->n;
			drop(fs, adds[i].node.path, 1, nold);
			compact(fs);
			nold -= was - fs->n;
			old = find_in(fs, nold, adds[i].node.path);
		}
		if (old) {
			node_release(old);
			*old = adds[i].node;
		} else {
			EB_ALLOC_GROW(fs->v, fs->n + 1, fs->cap);
			fs->v[fs->n++] = adds[i].node;
		}
		adds[i].node.path = adds[i].node.link = adds[i].node.data = NULL;
	}
	if (fs->n > 1)
		eb_sort(fs->v, fs->n, sizeof(*fs->v), cmp_node);
	layer_read_release(lr);
}

static int add_archive(struct eb_basefs *fs, struct archive *a, const char *what,
		       struct eb_error **err)
{
	struct layer_read lr;
	int r = read_layer(a, fs->nlayers++, what, &lr, err);

	if (r == 0)
		apply_layer(fs, &lr);
	return r;
}

static struct archive *reader(void)
{
	struct archive *a = archive_read_new();

	if (!a)
		abort();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	return a;
}

/* One layer blob read whole (inflated, its diff_id checked when given)
 * into lr, as the view's layer number `layer`. */
static int read_layer_file(const char *path, const char *diff_id, unsigned layer,
			   struct layer_read *lr, struct eb_error **err)
{
	struct eb_layerin *in;
	eb_autofree char *what = eb_xasprintf("'%s'", path);
	int r = eb_layerin_open(&in, path, diff_id, err);

	if (r < 0)
		return r;
	r = read_layer(eb_layerin_archive(in), layer, what, lr, err);
	if (r == 0 && (r = eb_layerin_finish(in, err)) < 0)
		layer_read_release(lr);
	eb_layerin_free(in);
	return r;
}

int eb_basefs_add_layer_verified(struct eb_basefs *fs, const char *path, const char *diff_id,
				 struct eb_error **err)
{
	struct layer_read lr;
	int r = read_layer_file(path, diff_id, fs->nlayers++, &lr, err);

	if (r == 0)
		apply_layer(fs, &lr);
	return r;
}

int eb_basefs_add_layer(struct eb_basefs *fs, const char *path, struct eb_error **err)
{
	return eb_basefs_add_layer_verified(fs, path, NULL, err);
}

int eb_basefs_add_layer_mem(struct eb_basefs *fs, const void *data, size_t len,
			    struct eb_error **err)
{
	struct archive *a = reader();
	int r;

	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK)
		r = eb_error_set(err, EB_EINVALID, "base layer is not a readable tar: %s",
				 archive_error_string(a));
	else
		r = add_archive(fs, a, "(in memory)", err);
	archive_read_free(a);
	return r;
}

/* ---- the view cache (oci/cache.h, kind "basefs") -----------------------
 * Reading a base means decompressing all its layers; the view of a given
 * list of layers never changes, so it is kept: a blob of records
 * "TYPE MODE UID GID PATHLEN LINKLEN\n" then the path and link bytes,
 * named by a cache record keyed by the layers' digests (and their
 * diff_ids when they were checked).  Version 2 added LAYER ENTRY: where
 * each node's entry is (eb_pytarget_detect_fs reads only those it needs);
 * version 3 added KEPT, the length of the bytes kept for a node
 * (eb_basefs_keeps()) that follow its link, or -1.  Through the cache
 * seam a fresh machine gets it from a shared cache instead of the layers.
 * A damaged view is ignored (and made again). */
#define CACHE_MAGIC "envbuild-basefs 3\n"
#define CACHE_MAX (1024u * 1024 * 1024)
#define CACHE_KIND "basefs"

static void cache_key(const struct eb_descriptor *layers, const char *const *diff_ids, size_t n,
		      char key[EB_DIGEST_STR_LEN + 1])
{
	struct eb_sha256 h;

	eb_sha256_init(&h);
	eb_sha256_update(&h, CACHE_MAGIC, strlen(CACHE_MAGIC));
	for (size_t i = 0; i < n; i++) {
		eb_sha256_update(&h, layers[i].digest, strlen(layers[i].digest) + 1);
		/* another config over the same blobs is read (and checked)
		 * again */
		if (diff_ids && diff_ids[i] && diff_ids[i][0])
			eb_sha256_update(&h, diff_ids[i], strlen(diff_ids[i]) + 1);
	}
	eb_sha256_final(&h, key);
}

static int cache_read(struct eb_basefs *fs, struct eb_blobstore *bs, const char *key)
{
	struct eb_buf b;
	const char *p, *end, *digest;
	json_t *rec = NULL;
	int ok = 0;

	eb_buf_init(&b, 0);
	if (!eb_cache_record_get(bs, CACHE_KIND, key, &rec))
		goto done;
	digest = json_string_value(json_object_get(rec, "digest"));
	if (!digest ||
	    eb_cache_fetch(bs, digest, json_integer_value(json_object_get(rec, "size")), NULL) < 0 ||
	    eb_blobstore_read(bs, digest, &b, CACHE_MAX, NULL) < 0 || b.len < strlen(CACHE_MAGIC) ||
	    strncmp(b.ptr, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
		goto done;
	p = b.ptr + strlen(CACHE_MAGIC);
	end = b.ptr + b.len;
	while (p < end) {
		unsigned type, mode, layer, entry;
		unsigned long uid, gid;
		size_t plen, llen;
		long kept;
		int used = 0;
		struct eb_basefs_node *nd;

		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[128];

		/* the header line alone: path bytes may start with anything */
		if (!nl || (size_t)(nl - p) >= sizeof(line))
			goto done;
		memcpy(line, p, (size_t)(nl - p));
		line[nl - p] = '\0';
		if (sscanf(line, "%u %o %lu %lu %zu %zu %u %u %ld%n", &type, &mode, &uid, &gid,
			   &plen, &llen, &layer, &entry, &kept, &used) != 9 ||
		    used != nl - p || type < EB_BASEFS_DIR || type > EB_BASEFS_OTHER ||
		    kept < -1 || kept > (long)EB_BASEFS_KEEP_MAX || (kept >= 0 && type != EB_BASEFS_FILE))
			goto done;
		p = nl + 1;
		if ((size_t)(end - p) < plen || (size_t)(end - p) - plen < llen ||
		    (size_t)(end - p) - plen - llen < (size_t)(kept > 0 ? kept : 0))
			goto done;
		EB_ALLOC_GROW(fs->v, fs->n + 1, fs->cap);
		nd = &fs->v[fs->n++];
		nd->path = eb_xstrndup(p, plen);
		nd->link = type == EB_BASEFS_SYMLINK ? eb_xstrndup(p + plen, llen) : NULL;
		nd->type = (enum eb_basefs_type)type;
		nd->mode = mode & 07777;
		nd->uid = (uint32_t)uid;
		nd->gid = (uint32_t)gid;
		nd->layer = layer;
		nd->entry = entry;
		nd->data = NULL;
		if (kept >= 0) {
			nd->data = eb_xmalloc((size_t)kept + 1);
			memcpy(nd->data, p + plen + llen, (size_t)kept);
			nd->data[kept] = '\0';
		}
		nd->datalen = kept >= 0 ? (size_t)kept : 0;
		if (layer >= fs->nlayers)
			fs->nlayers = layer + 1;
		p += plen + llen + (size_t)(kept > 0 ? kept : 0);
		if (fs->n > 1 && strcmp(fs->v[fs->n - 2].path, nd->path) >= 0)
			goto done; /* must be sorted and unique, as built */
	}
	ok = 1;
done:
	json_decref(rec);
	eb_buf_release(&b);
	if (!ok) {
		for (size_t i = 0; i < fs->n; i++)
			node_release(&fs->v[i]);
		fs->n = 0;
	}
	return ok;
}

static void cache_write(const struct eb_basefs *fs, struct eb_blobstore *bs, const char *key)
{
	char digest[EB_DIGEST_STR_LEN + 1];
	struct eb_buf b;

	eb_buf_init(&b, 0);
	(void)eb_buf_adds(&b, CACHE_MAGIC);
	for (size_t i = 0; i < fs->n; i++) {
		const struct eb_basefs_node *nd = &fs->v[i];
		size_t llen = nd->link ? strlen(nd->link) : 0;
		(void)eb_buf_addf(&b, "%u %o %lu %lu %zu %zu %u %u %ld\n", (unsigned)nd->type,
				  nd->mode, (unsigned long)nd->uid, (unsigned long)nd->gid,
				  strlen(nd->path), llen, nd->layer, (unsigned)nd->entry,
				  nd->data ? (long)nd->datalen : -1L);
		(void)eb_buf_adds(&b, nd->path);
		if (llen)
			(void)eb_buf_adds(&b, nd->link);
		if (nd->data)
			(void)eb_buf_add(&b, nd->data, nd->datalen);
	}
	/* best effort: a view not cached is only read again next time */
	if (eb_blobstore_put(bs, b.ptr, b.len, digest, NULL) == 0) {
		json_t *rec = json_pack("{s:s, s:I, s:s}", "digest", digest, "size",
					(json_int_t)b.len, "mediaType",
					"application/vnd.envbuild.basefs.v1");
		if (rec)
			(void)eb_cache_record_put(bs, CACHE_KIND, key, rec, NULL);
		json_decref(rec);
	}
	eb_buf_release(&b);
}

/* The layers read at once (one thread per core, each with its inflater),
 * then applied oldest first; the first error in layer order is the one
 * reported. */
struct read_job {
	char *path;
	const char *diff_id;
	unsigned layer;
	struct layer_read lr;
	struct eb_error *err;
	int r;
};

struct read_pool {
	struct read_job *jobs;
	size_t n, next;
	pthread_mutex_t mu;
};

static void *read_worker(void *arg)
{
	struct read_pool *p = arg;

	for (;;) {
		struct read_job *j;

		pthread_mutex_lock(&p->mu);
		j = p->next < p->n ? &p->jobs[p->next++] : NULL;
		pthread_mutex_unlock(&p->mu);
		if (!j)
			return NULL;
		j->r = read_layer_file(j->path, j->diff_id, j->layer, &j->lr, &j->err);
	}
}

static int read_layers(struct eb_basefs *fs, struct eb_blobstore *bs,
		       const struct eb_descriptor *layers, const char *const *diff_ids, size_t n,
		       struct eb_error **err)
{
	struct read_pool p = { eb_xcalloc(n + 1, sizeof(struct read_job)), n, 0,
			       PTHREAD_MUTEX_INITIALIZER };
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		p.jobs[i].path = eb_blobstore_path(bs, layers[i].digest);
		p.jobs[i].diff_id = diff_ids ? diff_ids[i] : NULL;
		p.jobs[i].layer = fs->nlayers + (unsigned)i;
		if (!p.jobs[i].path)
			r = eb_error_set(err, EB_EINVALID, "base layer digest '%s' is not sha256",
					 layers[i].digest);
		else /* a layer still in its registry comes now */
			(void)eb_cache_fetch(bs, layers[i].digest, layers[i].size, NULL);
	}
	if (r == 0) {
		eb_pool_run(eb_pool_threads(0, n), read_worker, &p);
		for (size_t i = 0; i < n; i++) {
			struct read_job *j = &p.jobs[i];
			if (r == 0 && j->r < 0) {
				r = j->r;
				*err = j->err;
				j->err = NULL;
			} else if (r == 0) {
				apply_layer(fs, &j->lr);
			} else if (j->r == 0) {
				layer_read_release(&j->lr);
			}
		}
		fs->nlayers += (unsigned)n;
	}
	for (size_t i = 0; i < n; i++) {
		free(p.jobs[i].path);
		eb_error_free(p.jobs[i].err);
	}
	free(p.jobs);
	pthread_mutex_destroy(&p.mu);
	return r;
}

int eb_basefs_load(struct eb_basefs **out, struct eb_blobstore *bs,
		   const struct eb_descriptor *layers, size_t n, struct eb_error **err)
{
	return eb_basefs_load_verified(out, bs, layers, NULL, n, err);
}

int eb_basefs_load_verified(struct eb_basefs **out, struct eb_blobstore *bs,
			    const struct eb_descriptor *layers, const char *const *diff_ids,
			    size_t n, struct eb_error **err)
{
	struct eb_basefs *fs = eb_basefs_new();
	char key[EB_DIGEST_STR_LEN + 1];
	int r = 0;

	if (n)
		cache_key(layers, diff_ids, n, key);
	if (n && cache_read(fs, bs, key)) {
		*out = fs;
		return 0;
	}
	r = read_layers(fs, bs, layers, diff_ids, n, err);
	if (r < 0) {
		eb_error_wrap(err, "reading the base image's filesystem");
		eb_basefs_free(fs);
		fs = NULL;
	} else if (n) {
		cache_write(fs, bs, key);
	}
	*out = fs;
	return r;
}

const struct eb_basefs_node *eb_basefs_lookup(const struct eb_basefs *fs, const char *path)
{
	static const struct eb_basefs_node root = { (char *)"", EB_BASEFS_DIR, 0755, 0, 0, NULL, 0, 0, NULL, 0 };
	eb_autofree char *p = norm(path);
	const struct eb_basefs_node *n = find(fs, p);

	return n ? n : (*p ? NULL : &root);
}

/* Components of a path, for the resolver's work list. */
size_t eb_basefs_under(const struct eb_basefs *fs, const char *dir,
		       const struct eb_basefs_node **first)
{
	char *p = norm(dir);
	char *lo = eb_xasprintf("%s/", p), *hi = eb_xasprintf("%s0", p); /* '0' follows '/' */
	size_t a = lower_bound(fs, lo), b = lower_bound(fs, hi);

	if (!*p) {
		/* everything is below the root */
		a = 0;
		b = fs->n;
	}
	free(p);
	free(lo);
	free(hi);
	*first = a < fs->n ? &fs->v[a] : NULL;
	return b > a ? b - a : 0;
}

struct comps {
	char **v;
	size_t n, cap; /* v[n-1] is the next component to take */
};

/* Push the components of path so that its first one is taken next. */
static void push_path(struct comps *c, const char *path)
{
	const char *end = path + strlen(path);

	while (end > path) {
		const char *s = end;
		while (s > path && s[-1] != '/')
			s--;
		if (end > s && !(end - s == 1 && *s == '.')) {
			EB_ALLOC_GROW(c->v, c->n + 1, c->cap);
			c->v[c->n++] = eb_xstrndup(s, (size_t)(end - s));
		}
		end = s;
		while (end > path && end[-1] == '/')
			end--;
	}
}

int eb_basefs_resolve(const struct eb_basefs *fs, const char *path, int follow_last, char **out,
		      struct eb_error **err)
{
	struct comps c = { 0 };
	struct eb_buf cur;
	int links = 0, r = 0;

	*out = NULL;
	eb_buf_init(&cur, 0);
	push_path(&c, path);
	while (c.n) {
		char *comp = c.v[--c.n];
		size_t mark = cur.len;
		const struct eb_basefs_node *n;

		if (strcmp(comp, "..") == 0) {
			/* never above the root, as in a chroot */
			char *slash = memrchr(cur.ptr, '/', cur.len);
			size_t keep = slash ? (size_t)(slash - cur.ptr) : 0;
			eb_buf_truncate(&cur, keep);
			free(comp);
			continue;
		}
		if (cur.len)
			(void)eb_buf_adds(&cur, "/");
		(void)eb_buf_adds(&cur, comp);
		free(comp);
		n = find(fs, cur.ptr);
		if (n && n->type == EB_BASEFS_SYMLINK && (c.n > 0 || follow_last)) {
			if (++links > MAX_LINKS) {
				eb_autofree char *p = norm(path);
				r = eb_error_set(err, EB_EINVALID,
						 "too many symbolic links in the base image resolving '/%s'",
						 p);
				goto done;
			}
			/* the link replaces its own component; n points into fs,
			 * which the push does not touch */
			eb_buf_truncate(&cur, n->link[0] == '/' ? 0 : mark);
			push_path(&c, n->link);
			continue;
		}
		if (n && n->type != EB_BASEFS_DIR && c.n > 0) {
			eb_autofree char *p = norm(path);
			r = eb_error_set(err, EB_EINVALID,
					 "'/%s' cannot be created: '/%s' is a %s in the base image", p,
					 cur.ptr, n->type == EB_BASEFS_FILE ? "file" : "special file");
			goto done;
		}
	}
	*out = eb_buf_detach(&cur, NULL);
done:
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i]);
	free(c.v);
	eb_buf_release(&cur);
	return r;
}
