/*
 * layout.c - reading and atomically writing OCI image layouts, and writing
 * docker-archive tarballs.
 *
 * The writer never touches the destination until a complete layout exists
 * beside it: build in "<parent>/.<name>.tmp-XXXXXX", fsync, then exchange
 * the two directories with renameat2(RENAME_EXCHANGE) (one atomic step), or
 * where that is not supported rename the old one aside and the new one in.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/cache.h"
#include "oci/layout.h"
#include "ref/imageref.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/encode.h"
#include "util/interrupt.h"
#include "util/fs.h"

/* Nested indexes followed before giving up (an index of indexes is legal
 * but rare; a cycle is not possible with digests, a deep chain is abuse). */
#define MAX_NESTING 4
/* oci-layout is a one-line file. */
#define OCI_LAYOUT_MAX 4096
#define IO_CHUNK (1 << 16)

/* ---- digests of any registered algorithm --------------------------------- */

/* util/digest.h only makes sha256, but layouts written by others may name
 * blobs by sha512, which the spec registers too. */
struct hasher {
	EVP_MD_CTX *ctx;
};

static int hasher_init(struct hasher *h, const char *digest)
{
	const EVP_MD *md;

	if (strncmp(digest, "sha256:", 7) == 0)
		md = eb_hash_algo_md(eb_hash_algo_find("sha256"));
	else if (strncmp(digest, "sha512:", 7) == 0)
		md = eb_hash_algo_md(eb_hash_algo_find("sha512"));
	else
		return -1;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, md, NULL) != 1)
		abort(); /* OOM or a broken libcrypto */
	return 0;
}

static void hasher_update(struct hasher *h, const void *p, size_t n)
{
	if (n && EVP_DigestUpdate(h->ctx, p, n) != 1)
		abort();
}

/* Finish and compare with digest; 1 on a match.  Frees the context. */
static int hasher_matches(struct hasher *h, const char *digest)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char str[2 * EVP_MAX_MD_SIZE + 1];
	unsigned n = 0;

	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1)
		abort();
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
	eb_hex_encode(str, md, n);
	return strcmp(eb_digest_hex(digest), str) == 0;
}

/* ---- small file helpers ------------------------------------------------ */

static int fsync_dir(const char *path, struct eb_error **err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open directory '%s'", path);
	/* some file systems cannot sync directories and say EINVAL */
	if (fsync(fd) < 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		return eb_error_set_errno(err, EB_EIO, e, "cannot sync directory '%s'", path);
	}
	close(fd);
	return 0;
}

/* Everything written on the file system holding path, made durable. */
static int sync_tree(const char *path, struct eb_error **err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", path);
	if (syncfs(fd) < 0) {
		int e = errno;
		close(fd);
		return eb_error_set_errno(err, EB_EIO, e, "cannot sync '%s'", path);
	}
	close(fd);
	return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf, best effort: used on our own temporary trees only. */
static void rm_rf(const char *path)
{
	if (path)
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- reading ------------------------------------------------------------ */

char *eb_layout_blob_path(const char *dir, const char *digest)
{
	const char *colon;

	if (!digest || !eb_digest_valid(digest))
		return NULL;
	colon = strchr(digest, ':');
	return eb_xasprintf("%s/blobs/%.*s/%s", dir, (int)(colon - digest), digest, colon + 1);
}

int eb_layout_read_blob(struct eb_buf *out, const char *dir, const struct eb_descriptor *d,
			size_t max, struct eb_error **err)
{
	eb_autofree char *path = eb_layout_blob_path(dir, d->digest);
	struct eb_buf tmp;
	struct hasher h;
	struct stat st;
	int r;

	if (!path)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a valid digest",
				    d->digest ? d->digest : "");
	if (d->size < 0 || (uint64_t)d->size > max)
		return eb_error_set(err, EB_ETOOBIG, "blob '%s' of %" PRId64
				    " bytes is over the %zu-byte limit", d->digest, d->size, max);
	if (stat(path, &st) < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "blob '%s' is missing from layout '%s'", d->digest, dir);
	if (!S_ISREG(st.st_mode) || st.st_size != d->size)
		return eb_error_set(err, EB_EINVALID, "blob '%s' in layout '%s' is %jd bytes, "
				    "its descriptor says %" PRId64, d->digest, dir,
				    (intmax_t)st.st_size, d->size);
	eb_buf_init(&tmp, 0);
	/* one byte over the size is enough to notice a file that grew */
	r = eb_fs_read_file(&tmp, path, (size_t)d->size + 1, err);
	if (r < 0)
		goto done;
	if (tmp.len != (size_t)d->size) {
		r = eb_error_set(err, EB_EINVALID, "blob '%s' in layout '%s' changed while reading",
				 d->digest, dir);
		goto done;
	}
	if (hasher_init(&h, d->digest) < 0) {
		r = eb_error_set(err, EB_EINVALID, "unsupported digest algorithm in '%s'", d->digest);
		goto done;
	}
	hasher_update(&h, tmp.ptr, tmp.len);
	if (!hasher_matches(&h, d->digest)) {
		r = eb_error_set(err, EB_EINVALID, "blob '%s' in layout '%s' does not match its digest",
				 d->digest, dir);
		goto done;
	}
	if (eb_buf_add(out, tmp.ptr, tmp.len) < 0)
		r = eb_error_set(err, EB_ETOOBIG, "blob '%s' does not fit the buffer", d->digest);
done:
	eb_buf_release(&tmp);
	return r;
}

int eb_layout_import_blob(struct eb_blobstore *bs, const char *dir,
			  const struct eb_descriptor *d, struct eb_error **err)
{
	eb_autofree char *path = eb_layout_blob_path(dir, d->digest);
	eb_autofree char *buf = NULL;
	eb_autoclose int fd = -1;
	struct eb_blob_writer *w = NULL;
	struct stat st;
	int r;

	if (!path)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a valid digest",
				    d->digest ? d->digest : "");
	if (strncmp(d->digest, "sha256:", 7) != 0)
		return eb_error_set(err, EB_EINVALID, "blob '%s': the blob store holds only sha256 "
				    "blobs", d->digest);
	if (eb_blobstore_has(bs, d->digest, d->size))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "blob '%s' is missing from layout '%s'", d->digest, dir);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != d->size)
		return eb_error_set(err, EB_EINVALID, "blob '%s' in layout '%s' is not the %" PRId64
				    " bytes its descriptor says", d->digest, dir, d->size);
	r = eb_blob_writer_open(&w, bs, err);
	if (r < 0)
		return r;
	buf = eb_xmalloc(IO_CHUNK);
	for (;;) {
		ssize_t n = read(fd, buf, IO_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			eb_blob_writer_abort(w);
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
		}
		if (n == 0)
			break;
		r = eb_blob_writer_write(w, buf, (size_t)n, err);
		if (r < 0) {
			eb_blob_writer_abort(w);
			return r;
		}
	}
	if (eb_blob_writer_size(w) != (uint64_t)d->size) {
		eb_blob_writer_abort(w);
		return eb_error_set(err, EB_EINVALID, "blob '%s' in layout '%s' changed while reading",
				    d->digest, dir);
	}
	r = eb_blob_writer_commit(w, d->digest, NULL, err);
	if (r < 0)
		return eb_error_wrap(err, "importing '%s' from layout '%s'", d->digest, dir);
	return 0;
}

static int check_oci_layout(const char *dir, struct eb_error **err)
{
	eb_autofree char *path = eb_path_join(dir, "oci-layout");
	json_auto_t *j = NULL;
	const json_t *v;
	struct eb_buf b;
	int r;

	eb_buf_init(&b, 0);
	r = eb_fs_read_file(&b, path, OCI_LAYOUT_MAX, err);
	if (r == -EB_ENOTFOUND) {
		eb_error_clear(err);
		r = eb_error_set(err, EB_ENOTFOUND,
				 "'%s' is not an OCI image layout (it has no oci-layout file)", dir);
	}
	if (r < 0)
		goto done;
	j = json_loadb(b.ptr, b.len, 0, NULL);
	v = json_object_get(j, "imageLayoutVersion");
	if (!json_is_string(v)) {
		r = eb_error_set(err, EB_EINVALID, "invalid '%s': no imageLayoutVersion", path);
		goto done;
	}
	/* minor versions stay compatible; only 1.x is defined */
	if (strncmp(json_string_value(v), "1.", 2) != 0)
		r = eb_error_set(err, EB_EINVALID, "unsupported image layout version '%s' in '%s'",
				 json_string_value(v), dir);
done:
	eb_buf_release(&b);
	return r;
}

/* List the ref names of a layout for messages ("a, b"); caller frees. */
static char *ref_names(const struct eb_index *idx)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < idx->n_manifests; i++) {
		const char *n = eb_annotations_get(&idx->manifests[i].annotations, EB_ANNOT_REF_NAME);
		if (n && eb_buf_addf(&b, "%s'%s'", b.len ? ", " : "", n) < 0)
			abort();
	}
	return eb_buf_detach(&b, NULL);
}

/* The entry of index.json that holds the image: the one named ref, or the
 * only one.  Several entries may share a name when a tool lists each
 * platform's manifest under the tag; then platform decides. */
static int pick_entry(size_t *pos, const struct eb_index *idx, const char *dir, const char *ref,
		      const struct eb_platform *platform, struct eb_error **err)
{
	size_t n = 0, first = 0;

	for (size_t i = 0; i < idx->n_manifests; i++) {
		const char *name =
			eb_annotations_get(&idx->manifests[i].annotations, EB_ANNOT_REF_NAME);
		if (!ref || (name && strcmp(name, ref) == 0)) {
			if (n++ == 0)
				first = i;
		}
	}
	if (n == 1) {
		*pos = first;
		return 0;
	}
	if (n == 0 && !ref)
		return eb_error_set(err, EB_ENOTFOUND, "layout '%s' holds no images", dir);
	if (n == 0) {
		eb_autofree char *names = ref_names(idx);
		return eb_error_set(err, EB_ENOTFOUND, "no image named '%s' in layout '%s' (%s%s)",
				    ref, dir, *names ? "it has " : "it has no named images", names);
	}
	for (size_t i = 0; platform && i < idx->n_manifests; i++) {
		const struct eb_descriptor *d = &idx->manifests[i];
		const char *name = eb_annotations_get(&d->annotations, EB_ANNOT_REF_NAME);
		if ((!ref || (name && strcmp(name, ref) == 0)) && d->platform &&
		    eb_platform_matches(platform, d->platform)) {
			*pos = i;
			return 0;
		}
	}
	if (ref)
		return eb_error_set(err, EB_EINVALID, "%zu entries are named '%s' in layout '%s'",
				    n, ref, dir);
	return eb_error_set(err, EB_EINVALID, "layout '%s' holds %zu images; name one", dir, n);
}

/* Choose a manifest of an index without a wanted platform: fine only when
 * there is just one real one (attestations say "unknown/unknown"). */
static int read_index_json(struct eb_index *out, const char *dir, struct eb_error **err)
{
	eb_autofree char *path = eb_path_join(dir, "index.json");
	struct eb_buf b;
	int r;

	eb_buf_init(&b, 0);
	r = eb_fs_read_file(&b, path, EB_IMAGE_DOC_MAX, err);
	if (r == -EB_ETOOBIG) {
		eb_error_clear(err);
		r = eb_error_set(err, EB_ETOOBIG, "'%s' is over the %zu-byte limit", path,
				 EB_IMAGE_DOC_MAX);
	}
	if (r == 0) {
		r = eb_index_parse(out, b.ptr, b.len, err);
		if (r < 0)
			eb_error_wrap(err, "reading '%s'", path);
	}
	eb_buf_release(&b);
	return r;
}

int eb_layout_read(struct eb_layout_image *out, const char *dir, const char *ref,
		   const struct eb_platform *platform, struct eb_error **err)
{
	struct eb_index idx = { 0 };
	struct eb_descriptor cur = { 0 };
	struct eb_buf b;
	size_t pos = 0;
	int r, depth;

	memset(out, 0, sizeof(*out));
	eb_buf_init(&b, 0);
	r = check_oci_layout(dir, err);
	if (r < 0)
		return r;
	r = read_index_json(&idx, dir, err);
	if (r < 0)
		return r;
	r = pick_entry(&pos, &idx, dir, ref, platform, err);
	if (r < 0)
		goto done;
	eb_descriptor_copy(&out->top, &idx.manifests[pos]);
	eb_descriptor_copy(&cur, &idx.manifests[pos]);
	eb_index_release(&idx);

	for (depth = 0;; depth++) {
		enum eb_doc_kind kind;

		if (depth > MAX_NESTING) {
			r = eb_error_set(err, EB_EINVALID, "indexes in layout '%s' nest too deep", dir);
			goto done;
		}
		eb_buf_truncate(&b, 0);
		r = eb_layout_read_blob(&b, dir, &cur, EB_IMAGE_DOC_MAX, err);
		if (r < 0)
			goto done;
		r = eb_image_doc_kind(&kind, cur.media_type, b.ptr, b.len, err);
		if (r < 0)
			goto wrap;
		if (kind == EB_DOC_MANIFEST)
			break;
		r = eb_index_parse(&idx, b.ptr, b.len, err);
		if (r < 0)
			goto wrap;
		if (platform) {
			r = eb_index_select(&idx, platform, &pos, err);
		} else {
			eb_autofree char *what = eb_xasprintf("image index '%s'", cur.digest);
			r = eb_index_select_only(&idx, what, &pos, err);
		}
		if (r < 0)
			goto wrap;
		eb_descriptor_release(&cur);
		eb_descriptor_copy(&cur, &idx.manifests[pos]);
		eb_index_release(&idx);
	}

	r = eb_manifest_parse(&out->manifest, b.ptr, b.len, err);
	if (r < 0)
		goto wrap;
	eb_buf_truncate(&b, 0);
	r = eb_layout_read_blob(&b, dir, &out->manifest.config, EB_IMAGE_DOC_MAX, err);
	if (r < 0)
		goto done;
	r = eb_config_parse(&out->config, b.ptr, b.len, err);
	if (r < 0) {
		eb_error_wrap(err, "reading '%s' from layout '%s'", out->manifest.config.digest, dir);
		goto done;
	}
	if (platform && !eb_platform_matches(platform, &out->config.platform)) {
		eb_autofree char *want = eb_platform_format(platform);
		eb_autofree char *have = eb_platform_format(&out->config.platform);
		r = eb_error_set(err, EB_ENOTFOUND, "image in layout '%s' is for '%s', not '%s'", dir,
				 have, want);
		goto done;
	}
	out->manifest_desc = cur;
	memset(&cur, 0, sizeof(cur));
	goto done;
wrap:
	eb_error_wrap(err, "reading '%s' from layout '%s'", cur.digest, dir);
done:
	eb_buf_release(&b);
	eb_index_release(&idx);
	eb_descriptor_release(&cur);
	if (r < 0)
		eb_layout_image_release(out);
	return r;
}

void eb_layout_image_release(struct eb_layout_image *img)
{
	if (!img)
		return;
	eb_descriptor_release(&img->top);
	eb_descriptor_release(&img->manifest_desc);
	eb_manifest_release(&img->manifest);
	eb_config_release(&img->config);
}

/* ---- writing ------------------------------------------------------------- */

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int eb_layout_ref_valid(const char *s)
{
	/* ref ::= component ("/" component)*
	 * component ::= alphanum (separator alphanum)*
	 * separator ::= [-._:@+] | "--" */
	const char *p = s;

	if (!s)
		return 0;
	for (;;) {
		if (!is_alnum(*p))
			return 0;
		while (is_alnum(*p))
			p++;
		if (*p == '\0')
			return 1;
		if (*p == '/')
			p++;
		else if (p[0] == '-' && p[1] == '-')
			p += 2;
		else if (strchr("-._:@+", *p))
			p++;
		else
			return 0;
	}
}

struct blobref {
	char *digest;
	int64_t size;
};

struct blobset {
	struct blobref *v;
	size_t n, cap;
};

static void blobset_add(struct blobset *s, const char *digest, int64_t size)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].digest, digest) == 0)
			return;
	EB_ALLOC_GROW(s->v, s->n + 1, s->cap);
	s->v[s->n].digest = eb_xstrdup(digest);
	s->v[s->n].size = size;
	s->n++;
}

static void blobset_release(struct blobset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].digest);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int check_store_desc(struct eb_blobstore *bs, const struct eb_descriptor *d,
			    struct eb_error **err)
{
	if (!d->digest || !eb_digest_valid(d->digest) || strncmp(d->digest, "sha256:", 7) != 0)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a sha256 digest",
				    d->digest ? d->digest : "");
	if (d->size < 0)
		return eb_error_set(err, EB_EINVALID, "blob '%s' has a negative size", d->digest);
	/* a cache hit may have left the bytes in a shared cache until now */
	if (eb_cache_fetch(bs, d->digest, d->size, NULL) < 0)
		return eb_error_set(err, EB_ENOTFOUND, "blob '%s' (%" PRId64 " bytes) is not in the "
				    "blob store", d->digest, d->size);
	return 0;
}

/* A manifest or index from the store, checked against its descriptor. */
static int read_store_doc(struct eb_buf *out, struct eb_blobstore *bs,
			  const struct eb_descriptor *d, struct eb_error **err)
{
	eb_autofree char *path = NULL;
	char got[EB_DIGEST_STR_LEN + 1];
	int r;

	r = check_store_desc(bs, d, err);
	if (r < 0)
		return r;
	if ((uint64_t)d->size > EB_IMAGE_DOC_MAX)
		return eb_error_set(err, EB_ETOOBIG, "document '%s' of %" PRId64 " bytes is over the "
				    "%zu-byte limit", d->digest, d->size, EB_IMAGE_DOC_MAX);
	path = eb_blobstore_path(bs, d->digest);
	r = eb_fs_read_file(out, path, EB_IMAGE_DOC_MAX, err);
	if (r < 0)
		return r;
	eb_sha256_digest(out->ptr, out->len, got);
	if (out->len != (size_t)d->size || strcmp(got, d->digest) != 0)
		return eb_error_set(err, EB_EINVALID, "blob '%s' in the blob store does not match "
				    "its digest", d->digest);
	return 0;
}

/* Every blob an image needs: the documents (read and parsed to find their
 * references) and the configs and layers they name. */
static int collect(struct blobset *set, struct eb_blobstore *bs, const struct eb_descriptor *d,
		   int depth, struct eb_error **err)
{
	enum eb_doc_kind kind;
	struct eb_buf b;
	int r;

	if (depth > MAX_NESTING)
		return eb_error_set(err, EB_EINVALID, "indexes nest too deep at '%s'", d->digest);
	eb_buf_init(&b, 0);
	r = read_store_doc(&b, bs, d, err);
	if (r < 0)
		goto done;
	blobset_add(set, d->digest, d->size);
	r = eb_image_doc_kind(&kind, d->media_type, b.ptr, b.len, err);
	if (r < 0)
		goto done;
	if (kind == EB_DOC_INDEX) {
		struct eb_index idx;
		r = eb_index_parse(&idx, b.ptr, b.len, err);
		for (size_t i = 0; r == 0 && i < idx.n_manifests; i++) {
			const struct eb_descriptor *c = &idx.manifests[i];
			if (eb_media_type_is_manifest(c->media_type) ||
			    eb_media_type_is_index(c->media_type))
				r = collect(set, bs, c, depth + 1, err);
			else
				blobset_add(set, c->digest, c->size);
		}
		eb_index_release(&idx);
	} else {
		struct eb_manifest m;
		r = eb_manifest_parse(&m, b.ptr, b.len, err);
		if (r == 0) {
			blobset_add(set, m.config.digest, m.config.size);
			for (size_t i = 0; i < m.n_layers; i++)
				blobset_add(set, m.layers[i].digest, m.layers[i].size);
		}
		eb_manifest_release(&m);
	}
	if (r < 0)
		eb_error_wrap(err, "reading '%s'", d->digest);
done:
	eb_buf_release(&b);
	return r;
}

/* Whether dest exists (*exists), and may be replaced: only a directory that
 * is an OCI layout, or empty.  Anything else is someone's data. */
static int check_dest(const char *dest, int *exists, struct eb_error **err)
{
	eb_autofree char *marker = eb_path_join(dest, "oci-layout");
	struct stat st;
	int empty = 1;
	DIR *d;
	struct dirent *e;

	*exists = 0;
	if (lstat(dest, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return eb_error_set_errno(err, EB_EIO, errno, "cannot access '%s'", dest);
	}
	*exists = 1;
	if (!S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EINVALID, "'%s' exists and is not a directory", dest);
	if (access(marker, F_OK) == 0)
		return 0;
	d = opendir(dest);
	if (!d)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read directory '%s'", dest);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	if (!empty)
		return eb_error_set(err, EB_EINVALID,
				    "'%s' exists and is not an OCI image layout; not replacing it",
				    dest);
	return 0;
}

/* The same blob from the layout being replaced (prev), linked into the
 * new one when its bytes still match its name: a rebuild then writes no
 * unchanged blob again.  Links only ever join two generations of the same
 * output, never an output and the cache, and the old generation is
 * deleted once the new one is in place.  1 when linked. */
static int reuse_previous(const char *prev, const char *digest, int64_t size, const char *dst)
{
	eb_autofree char *src = NULL;
	char got[EB_DIGEST_STR_LEN + 1];
	uint64_t n = 0;
	struct stat st;

	if (!prev)
		return 0;
	src = eb_layout_blob_path(prev, digest);
	if (!src || lstat(src, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != (off_t)size ||
	    link(src, dst) < 0)
		return 0;
	/* hashed after linking: what is checked is what the new layout has */
	if (eb_sha256_file(dst, got, &n, NULL) == 0 && n == (uint64_t)size &&
	    strcmp(got, digest) == 0)
		return 1;
	unlink(dst);
	return 0;
}

/* Fill tmp with blobs/sha256/... from the store (or from prev, the layout
 * being replaced, when it holds the same blob intact). */
static int populate(const char *tmp, const char *prev, struct eb_blobstore *bs,
		    const struct blobset *set, struct eb_error **err)
{
	eb_autofree char *blobs = eb_path_join(tmp, "blobs");
	eb_autofree char *sha = eb_path_join(blobs, "sha256");
	int r;

	if (mkdir(blobs, 0755) < 0 || mkdir(sha, 0755) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", sha);
	for (size_t i = 0; i < set->n; i++) {
		struct eb_descriptor d = { .digest = set->v[i].digest, .size = set->v[i].size };
		eb_autofree char *dst = NULL;

		r = check_store_desc(bs, &d, err);
		if (r < 0)
			return r;
		dst = eb_path_join(sha, eb_digest_hex(d.digest));
		if (reuse_previous(prev, d.digest, d.size, dst))
			continue;
		/* a copy or reflink, never a hard link: editing the output
		 * must not change the cache */
		r = eb_blobstore_export(bs, d.digest, d.size, dst, err);
		if (r < 0)
			return r;
	}
	/* one sync for every blob exported (each started its write-back as
	 * it was copied), where an fsync of each waited for the disk before
	 * the next copy began */
	r = sync_tree(sha, err);
	if (r == 0)
		r = fsync_dir(sha, err);
	if (r == 0)
		r = fsync_dir(blobs, err);
	return r;
}

static int write_layout_files(const char *tmp, const struct eb_descriptor *top,
			      const char *ref_name, struct eb_error **err)
{
	eb_autofree char *marker = eb_path_join(tmp, "oci-layout");
	eb_autofree char *index = eb_path_join(tmp, "index.json");
	struct eb_descriptor d;
	struct eb_doc doc = { 0 };
	json_auto_t *root = json_object();
	json_auto_t *layout = json_object();
	json_t *arr = json_array(), *dj;
	int r;

	eb_descriptor_copy(&d, top);
	if (ref_name)
		eb_annotations_set(&d.annotations, EB_ANNOT_REF_NAME, ref_name);
	dj = eb_descriptor_to_json(&d);
	eb_descriptor_release(&d);
	if (!dj) {
		json_decref(arr);
		return eb_error_set(err, EB_EINVALID, "descriptor of '%s' is not valid UTF-8",
				    top->digest);
	}
	json_array_append_new(arr, dj);
	json_object_set_new(root, "schemaVersion", json_integer(2));
	json_object_set_new(root, "mediaType", json_string(EB_MEDIA_OCI_INDEX));
	json_object_set_new(root, "manifests", arr);
	json_object_set_new(layout, "imageLayoutVersion", json_string(EB_LAYOUT_VERSION));

	/* oci-layout and index.json last: until they exist nothing reads the
	 * directory as a layout */
	eb_doc_from_json(&doc, layout);
	r = eb_fs_write_atomic(marker, doc.data, doc.len, 0644, err);
	eb_doc_release(&doc);
	if (r < 0)
		return r;
	eb_doc_from_json(&doc, root);
	r = eb_fs_write_atomic(index, doc.data, doc.len, 0644, err);
	eb_doc_release(&doc);
	if (r < 0)
		return r;
	return fsync_dir(tmp, err);
}

/* Put the finished tmp at dest.  On success *old_out names what is left to
 * delete (the previous layout), or NULL; the caller syncs parent. */
static int swap_in(const char *tmp, const char *dest, const char *parent, const char *base,
		   int dest_exists, char **old_out, struct eb_error **err)
{
	eb_autofree char *old = NULL;

	*old_out = NULL;
	if (!dest_exists) {
		if (rename(tmp, dest) < 0)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot rename '%s' to '%s'", tmp,
						  dest);
		return 0;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dest, RENAME_EXCHANGE) == 0) {
		/* tmp now holds the old layout */
		*old_out = eb_xstrdup(tmp);
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot swap '%s' into '%s'", tmp,
					  dest);
	/* no RENAME_EXCHANGE here: move the old one aside first; an empty
	 * directory made by mkdtemp is a unique name rename() may replace */
	old = eb_xasprintf("%s/.%s.old-XXXXXX", parent, base);
	if (!mkdtemp(old))
		return eb_error_set_errno(err, EB_EIO, errno,
					  "cannot create a temporary directory in '%s'", parent);
	eb_interrupt_register(old, 1);
	if (rename(dest, old) < 0) {
		int e = errno;
		rmdir(old);
		eb_interrupt_unregister(old);
		return eb_error_set_errno(err, EB_EIO, e, "cannot move '%s' aside", dest);
	}
	if (rename(tmp, dest) < 0) {
		int e = errno;
		/* from here on the old layout is the one to keep */
		eb_interrupt_unregister(old);
		if (rename(old, dest) < 0)
			return eb_error_set_errno(err, EB_EIO, e, "cannot rename '%s' to '%s', and the "
						  "previous layout is left at '%s'", tmp, dest, old);
		return eb_error_set_errno(err, EB_EIO, e, "cannot rename '%s' to '%s'", tmp, dest);
	}
	*old_out = eb_steal_ptr(&old);
	return 0;
}

/* dir without trailing slashes ("out/" -> "out"; "/" stays). */
static char *strip_slashes(const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return eb_xstrndup(dir, n);
}

int eb_layout_write(const char *dir, struct eb_blobstore *bs, const struct eb_descriptor *top,
		    const char *ref_name, struct eb_error **err)
{
	eb_autofree char *dest = strip_slashes(dir);
	eb_autofree char *parent = eb_path_dirname(dest);
	eb_autofree char *tmp = NULL;
	eb_autofree char *old = NULL;
	const char *base = eb_path_basename(dest);
	struct blobset set = { 0 };
	int exists = 0, lockfd = -1, r;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(base, "/") == 0)
		return eb_error_set(err, EB_EINVALID, "cannot write a layout at '%s'", dir);
	if (ref_name && !eb_layout_ref_valid(ref_name))
		return eb_error_set(err, EB_EINVALID, "invalid layout reference name '%s'", ref_name);
	if (!eb_media_type_is_manifest(top->media_type) && !eb_media_type_is_index(top->media_type))
		return eb_error_set(err, EB_EINVALID, "'%s' is not an image manifest or index",
				    top->media_type ? top->media_type : "");
	r = check_dest(dest, &exists, err);
	if (r < 0)
		return r;
	r = collect(&set, bs, top, 0, err);
	if (r < 0)
		goto fail;

	tmp = eb_xasprintf("%s/.%s.tmp-XXXXXX", parent, base);
	if (!mkdtemp(tmp)) {
		r = eb_error_set_errno(err, EB_EIO, errno,
				       "cannot create a temporary directory in '%s'", parent);
		free(eb_steal_ptr(&tmp));
		goto fail;
	}
	eb_interrupt_register(tmp, 1);
	if (chmod(tmp, 0755) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot chmod '%s'", tmp);
		goto fail;
	}
	r = populate(tmp, exists ? dest : NULL, bs, &set, err);
	if (r < 0)
		goto fail;
	r = write_layout_files(tmp, top, ref_name, err);
	if (r < 0)
		goto fail;
	/* Concurrent builds of one project write the same destination: the
	 * swap happens under a lock on the parent directory, with the
	 * destination looked at again, so each run replaces what the one
	 * before left and the last writer wins. */
	lockfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lockfd >= 0 && flock(lockfd, LOCK_EX) < 0) {
		close(lockfd);
		lockfd = -1;
	}
	r = check_dest(dest, &exists, err);
	if (r == 0)
		r = swap_in(tmp, dest, parent, base, exists, &old, err);
	if (lockfd >= 0)
		close(lockfd); /* unlocks */
	if (r < 0)
		goto fail;
	eb_interrupt_unregister(tmp);
	free(eb_steal_ptr(&tmp));
	/* the new layout is in place; a failure to delete the old one only
	 * leaves a hidden directory behind */
	rm_rf(old);
	if (old)
		eb_interrupt_unregister(old);
	blobset_release(&set);
	r = fsync_dir(parent, err);
	return r < 0 ? eb_error_wrap(err, "writing layout '%s'", dir) : 0;
fail:
	rm_rf(tmp);
	if (tmp)
		eb_interrupt_unregister(tmp);
	blobset_release(&set);
	return eb_error_wrap(err, "writing layout '%s'", dir);
}

/* ---- docker-archive ---------------------------------------------------- */

static int tar_fail(struct archive *a, const char *path, struct eb_error **err)
{
	return eb_error_set(err, EB_EIO, "cannot write '%s': %s", path,
			    archive_error_string(a) ? archive_error_string(a) : "unknown error");
}

/* A header with the fixed metadata every entry gets: root-owned, epoch
 * mtime, so the archive's bytes depend only on the image. */
static int tar_header(struct archive *a, const char *name, mode_t type, mode_t perm,
		      int64_t size, const char *path, struct eb_error **err)
{
	struct archive_entry *e = archive_entry_new();
	int r = 0;

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_size(e, size);
	archive_entry_set_mtime(e, 0, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		r = tar_fail(a, path, err);
	archive_entry_free(e);
	return r;
}

static int tar_add_bytes(struct archive *a, const char *name, const void *data, size_t len,
			 const char *path, struct eb_error **err)
{
	int r = tar_header(a, name, AE_IFREG, 0644, (int64_t)len, path, err);

	if (r == 0 && len > 0 && archive_write_data(a, data, len) != (la_ssize_t)len)
		r = tar_fail(a, path, err);
	return r;
}

static int tar_add_blob(struct archive *a, struct eb_blobstore *bs, const char *digest,
			int64_t size, const char *path, struct eb_error **err)
{
	eb_autofree char *src = eb_blobstore_path(bs, digest);
	eb_autofree char *name = eb_xasprintf("blobs/sha256/%s", eb_digest_hex(digest));
	eb_autofree char *buf = NULL;
	eb_autoclose int fd = -1;
	int64_t left = size;
	int r;

	(void)eb_cache_fetch(bs, digest, size, NULL); /* a lazy cache hit */
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "blob '%s' is not in the blob store", digest);
	r = tar_header(a, name, AE_IFREG, 0644, size, path, err);
	if (r < 0)
		return r;
	buf = eb_xmalloc(IO_CHUNK);
	while (left > 0) {
		size_t want = left < IO_CHUNK ? (size_t)left : IO_CHUNK;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", src);
		if (n == 0)
			return eb_error_set(err, EB_EIO, "blob '%s' is shorter than %" PRId64 " bytes",
					    digest, size);
		if (archive_write_data(a, buf, (size_t)n) != n)
			return tar_fail(a, path, err);
		left -= n;
	}
	return 0;
}

/* manifest.json and index.json for the archive. */
static void archive_documents(struct eb_doc *manifest_json, struct eb_doc *index_json,
			      const struct eb_manifest *m, const struct eb_descriptor *md,
			      const char *familiar, const char *full, const char *tag)
{
	json_auto_t *list = json_array();
	json_auto_t *index = json_object();
	json_t *item = json_object(), *layers = json_array(), *tags = json_array();
	json_t *manifests = json_array(), *d;

	json_object_set_new(item, "Config",
			    json_sprintf("blobs/sha256/%s", eb_digest_hex(m->config.digest)));
	for (size_t i = 0; i < m->n_layers; i++)
		json_array_append_new(layers, json_sprintf("blobs/sha256/%s",
							   eb_digest_hex(m->layers[i].digest)));
	json_object_set_new(item, "Layers", layers);
	if (familiar)
		json_array_append_new(tags, json_string(familiar));
	json_object_set_new(item, "RepoTags", tags);
	json_array_append_new(list, item);
	eb_doc_from_json(manifest_json, list);

	d = json_object();
	json_object_set_new(d, "mediaType", json_string(md->media_type));
	json_object_set_new(d, "digest", json_string(md->digest));
	json_object_set_new(d, "size", json_integer(md->size));
	if (full) {
		/* what `docker save` writes: the full name for containerd, the
		 * tag as the layout's ref name */
		json_t *a = json_object();
		json_object_set_new(a, "io.containerd.image.name", json_string(full));
		json_object_set_new(a, EB_ANNOT_REF_NAME, json_string(tag));
		json_object_set_new(d, "annotations", a);
	}
	json_array_append_new(manifests, d);
	json_object_set_new(index, "schemaVersion", json_integer(2));
	json_object_set_new(index, "mediaType", json_string(EB_MEDIA_OCI_INDEX));
	json_object_set_new(index, "manifests", manifests);
	eb_doc_from_json(index_json, index);
}

/* "app:1.0" -> familiar "app:1.0", full "docker.io/library/app:1.0",
 * tag "1.0". */
static int archive_names(const char *repo_tag, char **familiar, char **full, char **tag,
			 struct eb_error **err)
{
	struct eb_imageref ref;
	int r;

	r = eb_imageref_parse(&ref, repo_tag, err);
	if (r < 0)
		return eb_error_wrap(err, "image name '%s'", repo_tag);
	if (ref.digest) {
		eb_imageref_release(&ref);
		return eb_error_set(err, EB_EINVALID,
				    "image name '%s' has a digest; an archive tag cannot", repo_tag);
	}
	if (!ref.tag)
		ref.tag = eb_xstrdup("latest");
	*familiar = eb_imageref_familiar(&ref);
	*full = eb_imageref_to_string(&ref);
	*tag = eb_xstrdup(ref.tag);
	eb_imageref_release(&ref);
	return 0;
}

int eb_layout_write_docker_archive(const char *path, struct eb_blobstore *bs,
				   const struct eb_descriptor *manifest, const char *repo_tag,
				   struct eb_error **err)
{
	eb_autofree char *dir = eb_path_dirname(path);
	eb_autofree char *tmp = eb_xasprintf("%s/.%s.tmp-XXXXXX", dir, eb_path_basename(path));
	eb_autofree char *familiar = NULL;
	eb_autofree char *full = NULL;
	eb_autofree char *tag = NULL;
	static const char layout_json[] = "{\"imageLayoutVersion\":\"" EB_LAYOUT_VERSION "\"}";
	struct eb_manifest m = { 0 };
	struct eb_doc mj = { 0 }, ij = { 0 };
	struct archive *a = NULL;
	struct blobset set = { 0 };
	struct eb_buf b;
	int fd = -1, r;

	eb_buf_init(&b, 0);
	if (!eb_media_type_is_manifest(manifest->media_type))
		return eb_error_set(err, EB_EINVALID, "a docker archive holds one image manifest, "
				    "not '%s'", manifest->media_type ? manifest->media_type : "");
	if (repo_tag) {
		r = archive_names(repo_tag, &familiar, &full, &tag, err);
		if (r < 0)
			return r;
	}
	r = read_store_doc(&b, bs, manifest, err);
	if (r == 0)
		r = eb_manifest_parse(&m, b.ptr, b.len, err);
	if (r < 0)
		goto done;
	r = check_store_desc(bs, &m.config, err);
	for (size_t i = 0; r == 0 && i < m.n_layers; i++)
		r = check_store_desc(bs, &m.layers[i], err);
	if (r < 0)
		goto done;
	archive_documents(&mj, &ij, &m, manifest, familiar, full, tag);

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot create a temporary file in '%s'",
				       dir);
		free(eb_steal_ptr(&tmp));
		goto done;
	}
	eb_interrupt_register(tmp, 0);
	if (fchmod(fd, 0644) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot chmod '%s'", tmp);
		goto done;
	}
	a = archive_write_new();
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		r = tar_fail(a, path, err);
		goto done;
	}
	if ((r = tar_header(a, "blobs/", AE_IFDIR, 0755, 0, path, err)) < 0 ||
	    (r = tar_header(a, "blobs/sha256/", AE_IFDIR, 0755, 0, path, err)) < 0)
		goto done;
	/* config, layers, manifest: the order `docker save` uses */
	blobset_add(&set, m.config.digest, m.config.size);
	for (size_t i = 0; i < m.n_layers; i++)
		blobset_add(&set, m.layers[i].digest, m.layers[i].size);
	blobset_add(&set, manifest->digest, manifest->size);
	for (size_t i = 0; i < set.n; i++) {
		r = tar_add_blob(a, bs, set.v[i].digest, set.v[i].size, path, err);
		if (r < 0)
			goto done;
	}
	if ((r = tar_add_bytes(a, "index.json", ij.data, ij.len, path, err)) < 0 ||
	    (r = tar_add_bytes(a, "manifest.json", mj.data, mj.len, path, err)) < 0 ||
	    (r = tar_add_bytes(a, "oci-layout", layout_json, sizeof(layout_json) - 1, path,
			       err)) < 0)
		goto done;
	if (archive_write_close(a) != ARCHIVE_OK) {
		r = tar_fail(a, path, err);
		goto done;
	}
	if (fsync(fd) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", path);
		goto done;
	}
	if (rename(tmp, path) < 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot rename into '%s'", path);
		goto done;
	}
	eb_interrupt_unregister(tmp);
	free(eb_steal_ptr(&tmp));
	r = fsync_dir(dir, err);
done:
	if (a)
		archive_write_free(a);
	if (fd >= 0)
		close(fd);
	if (tmp && fd >= 0) {
		unlink(tmp);
		eb_interrupt_unregister(tmp);
	}
	eb_manifest_release(&m);
	eb_doc_release(&mj);
	eb_doc_release(&ij);
	blobset_release(&set);
	eb_buf_release(&b);
	if (r < 0)
		return eb_error_wrap(err, "writing docker archive '%s'", path);
	return 0;
}
