/*
 * pyinstall.c - from pinned requirements to verified wheels to layers.
 *
 * The stages never reach back: requirements (already pin-checked) ->
 * markers for the target -> one exact file per pin (tags, hashes,
 * requires-python) -> verified download -> closure check on the files'
 * own metadata -> layers.  Nothing unverified is installed, and nothing is
 * installed that the user did not pin.  Replacements, the closure check
 * and the layers are pyinstall_layers.c (pyinstall_internal.h).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assemble/bytecode.h"
#include "assemble/pyinstall.h"
#include "assemble/pyinstall_internal.h"
#include "assemble/localwheel.h"
#include "assemble/ownproject.h"
#include "assemble/sdistpin.h"
#include "assemble/wheeltrust.h"
#include "oci/basefs.h"
#include "oci/cache.h"
#include "lock/lock.h"
#include "pin/marker.h"
#include "pin/reqfile.h"
#include "python/index.h"
#include "pin/requirement.h"
#include "pin/version.h"
#include "python/tags.h"
#include "python/wheel.h"
#include "net/http.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/interrupt.h"

/* One requirement with where it was written. */
struct req_at {
	const struct eb_requirement *req;
	const char *file;
	unsigned line, col;
};

static int cmp_dist(const void *a, const void *b)
{
	return strcmp(((const struct eb_pydist *)a)->name, ((const struct eb_pydist *)b)->name);
}



void eb_pyenv_release(struct eb_pyenv *e)
{
	for (size_t i = 0; i < e->n; i++)
		eb_pydist_release(&e->dists[i]);
	free(e->dists);
	free(e->platform);
	free(e->bytecode_id);
	eb_pytarget_release(&e->target);
	memset(e, 0, sizeof(*e));
}

void eb_pyinstall__add_extra(struct eb_pydist *d, const char *x)
{
	for (size_t i = 0; i < d->nextras; i++)
		if (strcmp(d->extras[i], x) == 0)
			return;
	d->extras = eb_xreallocarray(d->extras, d->nextras + 1, sizeof(*d->extras));
	d->extras[d->nextras++] = eb_xstrdup(x);
}

struct dl {
	struct eb_blob_writer *w;
};

static int dl_data(void *ud, const void *data, size_t len, struct eb_error **err)
{
	return eb_blob_writer_write(((struct dl *)ud)->w, data, len, err);
}

static int fetch_url(const char *url, const char *expected, struct eb_blobstore *bs,
		     char digest[EB_DIGEST_STR_LEN + 1], int64_t *size, struct eb_error **err);

/* --frozen: the locked URL, checked against the locked sha256 (hex). */
static int fetch_locked(const char *spec_dir, const char *url, const char *sha256,
			struct eb_blobstore *bs, char digest[EB_DIGEST_STR_LEN + 1], int64_t *size,
			struct eb_error **err)
{
	char *expected = eb_xasprintf("sha256:%s", sha256);
	int r;

	if (strstr(url, "://") && strncmp(url, "file://", 7) != 0) {
		r = fetch_url(url, expected, bs, digest, size, err);
	} else {
		/* a local wheel: file:// (a wheel directory or tree index), or
		 * relative to the spec (the project's own wheelhouse) */
		const char *u = strncmp(url, "file://", 7) == 0 ? url + 7 : url;
		char *path = u[0] == '/' ? eb_xstrdup(u) : eb_path_join(spec_dir, u);
		struct eb_blob_writer *w = NULL;
		char buf[65536];
		FILE *f = fopen(path, "rb");
		size_t n;

		if (!f) {
			r = eb_error_set_errno(err, EB_ENOTFOUND, errno, "cannot open locked wheel '%s'", path);
			free(path);
			free(expected);
			return r;
		}
		r = eb_blob_writer_open(&w, bs, err);
		while (r == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			r = eb_blob_writer_write(w, buf, n, err);
		fclose(f);
		if (r == 0) {
			*size = (int64_t)eb_blob_writer_size(w);
			r = eb_blob_writer_commit(w, expected, digest, err);
		} else if (w) {
			eb_blob_writer_abort(w);
		}
		free(path);
	}
	free(expected);
	return r;
}

/* A `name @ https://.../x.whl#sha256=...` requirement: fetch the URL into
 * the blob store, refusing anything whose sha256 differs. */
static int download_direct(const struct eb_requirement *req, struct eb_blobstore *bs,
			   char digest[EB_DIGEST_STR_LEN + 1], int64_t *size, struct eb_error **err)
{
	char *expected = NULL;
	int r;

	if (req->url_hash_algo && strcmp(req->url_hash_algo, "sha256") == 0)
		expected = eb_xasprintf("sha256:%s", req->url_hash_hex);
	for (size_t i = 0; !expected && i < req->nhashes; i++)
		if (req->hashes[i].algo && strcmp(req->hashes[i].algo, "sha256") == 0)
			expected = eb_xasprintf("sha256:%s", req->hashes[i].hex);
	if (!expected)
		return eb_error_set(err, EB_EINVALID, "direct URL of '%s' has no sha256", req->name);
	r = fetch_url(req->url, expected, bs, digest, size, err);
	free(expected);
	return r;
}

static int fetch_url(const char *url_in, const char *expected, struct eb_blobstore *bs,
		     char digest[EB_DIGEST_STR_LEN + 1], int64_t *size, struct eb_error **err)
{
	struct eb_http_client *http = NULL;
	struct eb_http_request rq = { 0 };
	struct eb_http_response resp = { 0 };
	struct dl d = { 0 };
	char *url;
	int r;

	if (eb_blobstore_has(bs, expected, -1)) {
		snprintf(digest, EB_DIGEST_STR_LEN + 1, "%s", expected);
		*size = -1;
		return 0;
	}
	url = eb_xstrdup(url_in);
	url[strcspn(url, "#")] = '\0';
	if ((r = eb_http_client_new(&http, NULL, err)) < 0)
		goto done;
	if ((r = eb_blob_writer_open(&d.w, bs, err)) < 0)
		goto done;
	rq.method = "GET";
	rq.url = url;
	rq.on_data = dl_data;
	rq.data_userdata = &d;
	r = eb_http_request(http, &rq, &resp, err);
	if (r == 0 && resp.status != 200)
		r = eb_http_response_error(&resp, "downloading a direct URL requirement", err);
	if (r < 0) {
		eb_blob_writer_abort(d.w);
		goto done;
	}
	*size = (int64_t)eb_blob_writer_size(d.w);
	r = eb_blob_writer_commit(d.w, expected, digest, err);
done:
	eb_http_response_release(&resp);
	eb_http_client_free(http);
	free(url);
	return r;
}

struct eb_pydist *eb_pyinstall__find_dist(const struct eb_pyenv *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->dists[i].name, name) == 0)
			return &e->dists[i];
	return NULL;
}

struct locked {
	const json_t *lock;
	const char *target, *platform;
	int frozen;
	const char *spec_dir;
	/* for sdist builds (assemble/sdistpin.h); spec NULL: none (a build
	 * requirement is a wheel) */
	const struct eb_spec *spec;
	const struct eb_spec_target *t;
	const char *const *base_layers;
	size_t nbase;
	const struct eb_pytarget *pytarget;
	struct eb_diag_list *diags;
	struct eb_pybuilder *builder; /* t's build_in image, or NULL */
};

/* The URL the lock records: credentials removed, and a local file under
 * the project as a path relative to the spec, so clones at different
 * places lock alike. */
static char *lock_url(const char *spec_dir, const char *url)
{
	char real[PATH_MAX];
	char *out = eb_pyindex_redact_url(url);
	size_t ld;

	if (strncmp(out, "file://", 7) != 0 || !realpath(spec_dir, real))
		return out;
	ld = strlen(real);
	if (strncmp(out + 7, real, ld) == 0 && out[7 + ld] == '/') {
		char *rel = eb_xstrdup(out + 7 + ld + 1);
		free(out);
		return rel;
	}
	return out;
}

static int resolve_one(struct eb_pyenv *e, const struct req_at *ra, const struct eb_tag_list *tags,
		       struct eb_pyindex_set *idx, struct eb_blobstore *bs, int metadata_only,
		       const struct locked *lk, struct eb_diag_list *diags, struct eb_error **err);

struct breq_ud {
	const struct eb_tag_list *tags;
	struct eb_pyindex_set *idx;
	struct eb_blobstore *bs;
	const struct locked *lk;
	struct eb_diag_list *diags;
};

/* A build requirement is a wheel of the index (a second sdist build
 * inside one is not offered: lk->spec NULL). */
static int resolve_breq(void *ud, struct eb_pyenv *e, const struct eb_requirement *req,
			const char *file, unsigned line, unsigned col, struct eb_error **err)
{
	const struct breq_ud *b = ud;
	struct locked lk = { NULL, NULL, NULL, 0, b->lk->spec_dir, NULL, NULL, NULL, 0, NULL, NULL, NULL };
	struct req_at ra = { req, file, line, col };

	return resolve_one(e, &ra, b->tags, b->idx, b->bs, 0, &lk, b->diags, err);
}

static int sdist_build(const struct locked *lk, struct eb_pydist *d, const struct eb_tag_list *tags,
		       struct eb_pyindex_set *idx, struct eb_blobstore *bs, const char *sdigest,
		       const char *sfile, const char *surl, int64_t ssize, const char *locked,
		       struct eb_error **err)
{
	struct breq_ud ud = { tags, idx, bs, lk, lk->diags };
	struct eb_sdistpin_ctx c = { lk->spec, lk->t, lk->base_layers, lk->nbase, lk->pytarget,
				     tags, idx, bs, lk->diags, resolve_breq, &ud, NULL, NULL };
	struct eb_pytarget bpy = { 0 };
	int r;

	if (lk->builder) {
		/* the builder's Python, read from its layers (the "pytarget"
		 * record: once per cache) with its own overrides */
		const struct eb_spec_target *bt = eb_spec_target(lk->spec, lk->builder->target);
		struct eb_pytarget_overrides ov = { 0 };

		if (lk->builder->make && (r = lk->builder->make(lk->builder, err)) < 0)
			return r;
		if (bt) {
			ov.python_version = bt->python.s;
			ov.interpreter = bt->interpreter.s;
			ov.site_packages = bt->site_packages.s;
			ov.libc = bt->libc.s;
		}
		if ((r = eb_pyenv_detect(&bpy, bs, lk->builder->layers, lk->builder->diff_ids, NULL,
					 lk->builder->nlayers, lk->platform, &ov, err)) < 0) {
			eb_error_wrap(err, "the builder '%s' of target '%s' (build_in)",
				      lk->builder->target, lk->t->name);
			return r;
		}
		c.builder = lk->builder;
		c.builder_py = &bpy;
	}
	r = eb_sdistpin_build(&c, d, sdigest, sfile, surl, ssize, locked, err);
	eb_pytarget_release(&bpy);
	return r;
}

/* "./": the project itself (assemble/ownproject.h), built like an sdist. */
static int own_project(struct eb_pyenv *e, const struct req_at *ra, const struct eb_tag_list *tags,
		       struct eb_pyindex_set *idx, struct eb_blobstore *bs, const struct locked *lk,
		       struct eb_error **err)
{
	const char *lsha = NULL, *lurl = NULL, *lfile = NULL;
	char *name = NULL, *version = NULL, *sfile = NULL;
	char sdg[EB_DIGEST_STR_LEN + 1];
	int64_t ssize = 0;
	struct eb_pydist *d;
	int r;

	if ((r = eb_ownproject_name(lk->spec_dir, &name, &version, err)) < 0)
		goto out;
	if (eb_pyinstall__find_dist(e, name))
		goto out;
	e->dists = eb_xreallocarray(e->dists, e->n + 1, sizeof(*e->dists));
	d = &e->dists[e->n++];
	memset(d, 0, sizeof(*d));
	d->name = eb_xstrdup(name);
	d->display = eb_xstrdup(name);
	d->version = eb_xstrdup(version);
	d->file = eb_xstrdup(ra->file);
	d->line = ra->line;
	d->col = ra->col;
	d->url = eb_xstrdup(".");
	if (lk->lock)
		eb_lock_package(lk->lock, lk->target, lk->platform, name, version, &lsha, &lurl,
				&lfile);
	if (lk->frozen && !lsha) {
		r = eb_error_set(err, EB_EINVALID, "not in the lock, and --frozen resolves nothing");
		eb_error_hint(err, "run 'envbuild lock' first");
		goto out;
	}
	if ((r = eb_ownproject_sdist(lk->spec_dir, name, version, bs, sdg, &ssize, err)) < 0)
		goto out;
	sfile = eb_xasprintf("%s-%s.tar.gz", name, version);
	r = sdist_build(lk, d, tags, idx, bs, sdg, sfile, ".", ssize, lk->frozen ? lsha : NULL,
			err);
out:
	if (r < 0) {
		eb_error_wrap(err, "the project itself ('%s')", ra->req->text);
		eb_error_locate(err, ra->file, ra->line, ra->col);
	}
	free(name);
	free(version);
	free(sfile);
	return r;
}

static int resolve_one(struct eb_pyenv *e, const struct req_at *ra, const struct eb_tag_list *tags,
		       struct eb_pyindex_set *idx, struct eb_blobstore *bs, int metadata_only,
		       const struct locked *lk, struct eb_diag_list *diags, struct eb_error **err)
{
	const char *lsha = NULL, *lurl = NULL, *lfile = NULL;
	const char *ssha = NULL, *surl = NULL, *sfile = NULL;
	const struct eb_requirement *req = ra->req;
	const char *version = eb_requirement_pinned_version(req);
	struct eb_pyindex_page page = { 0 };
	struct eb_dist_file *files = NULL;
	struct eb_file_hash **hashes = NULL;
	struct eb_wheel_choice choice;
	const char **required = NULL;
	struct eb_pydist *d;
	int r = 0;

	if (req->kind == EB_REQ_DIR && !req->editable && lk->spec && eb_ownproject_is(req->url)) {
		if (metadata_only)
			return 0; /* check --deep builds nothing; its closure is build's */
		return own_project(e, ra, tags, idx, bs, lk, err);
	}
	if (!req->norm_name || !version)
		return eb_error_set_at(err, EB_EINVALID, ra->file, ra->line, ra->col,
				       "'%s' is not pinned to one file", req->text);
	d = eb_pyinstall__find_dist(e, req->norm_name);
	if (d) {
		/* the same pin twice (the pin checker refused different versions):
		 * only its extras add up */
		for (size_t i = 0; i < req->nextras; i++)
			eb_pyinstall__add_extra(d, req->extras[i]);
		return 0;
	}
	e->dists = eb_xreallocarray(e->dists, e->n + 1, sizeof(*e->dists));
	d = &e->dists[e->n++];
	memset(d, 0, sizeof(*d));
	d->name = eb_xstrdup(req->norm_name);
	d->display = eb_xstrdup(req->name);
	d->version = eb_xstrdup(version);
	d->file = eb_xstrdup(ra->file);
	d->line = ra->line;
	d->col = ra->col;
	for (size_t i = 0; i < req->nextras; i++)
		eb_pyinstall__add_extra(d, req->extras[i]);

	if (lk->lock)
		eb_lock_package(lk->lock, lk->target, lk->platform, req->norm_name, version, &lsha,
				&lurl, &lfile);
	if (lk->lock && lk->spec &&
	    eb_lock_package_sdist(lk->lock, lk->target, lk->platform, req->norm_name, version,
				  &ssha, &surl, &sfile)) {
		/* a wheel built from an sdist: rebuilt (or taken from the
		 * cache) from the locked sdist, and it must be the locked one */
		char sdg[EB_DIGEST_STR_LEN + 1];
		int64_t ssize = -1;
		if (!lk->frozen)
			goto from_index; /* re-lock: the index says which sdist */
		if ((r = fetch_locked(lk->spec_dir, surl, ssha, bs, sdg, &ssize, err)) < 0)
			goto done;
		d->url = eb_xstrdup(surl);
		r = sdist_build(lk, d, tags, idx, bs, sdg, sfile, surl, ssize, lsha, err);
		goto done;
	}
from_index:
	if (lk->frozen) {
		char *path;
		if (!lsha) {
			r = eb_error_set(err, EB_EINVALID, "not in the lock, and --frozen resolves nothing");
			eb_error_hint(err, "run 'envbuild lock' first");
			goto done;
		}
		d->url = eb_xstrdup(lurl);
		d->filename = eb_xstrdup(lfile);
		d->direct = req->kind == EB_REQ_URL;
		/* the lock is no authority by itself (assemble/wheeltrust.h) */
		if ((r = eb_wheeltrust_check(bs, req, lsha, lfile ? lfile : "", err)) < 0)
			goto done;
		if ((r = fetch_locked(lk->spec_dir, lurl, lsha, bs, d->digest, &d->size, err)) < 0)
			goto done;
		path = eb_blobstore_path(bs, d->digest);
		if (d->size < 0) {
			/* already in the cache: the layer grouping needs the real size */
			struct stat st;
			d->size = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
		}
		r = eb_wheel_read_metadata(&d->md, path, err);
		free(path);
		goto done;
	}
	if (req->kind == EB_REQ_URL) {
		char *path;
		d->direct = 1;
		d->url = eb_pyindex_redact_url(req->url);
		d->filename = eb_xstrdup(eb_path_basename(d->url));
		if ((r = download_direct(req, bs, d->digest, &d->size, err)) < 0)
			goto done;
		path = eb_blobstore_path(bs, d->digest);
		if (d->size < 0) {
			struct stat st;
			d->size = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
		}
		r = eb_wheel_read_metadata(&d->md, path, err);
		free(path);
		goto done;
	}
	if (req->kind == EB_REQ_PATH) {
		/* the project's own wheel file: it must fit the target as an
		 * index's would */
		struct eb_dist_file one = { 0 };
		char *path;
		if ((r = eb_localwheel_fetch(lk->spec_dir, req, bs, d->digest, &d->size, &d->url,
					     err)) < 0)
			goto done;
		d->filename = eb_xstrdup(eb_path_basename(d->url));
		one.filename = d->filename;
		one.url = d->url;
		one.size = d->size;
		if ((r = eb_tags_select(&choice, &one, 1, req, NULL, tags, err)) < 0) {
			if (err && *err)
				(*err)->code = EB_EINVALID;
			r = -EB_EINVALID;
			goto done;
		}
		path = eb_blobstore_path(bs, d->digest);
		r = eb_wheel_read_metadata(&d->md, path, err);
		free(path);
		goto done;
	}

	if ((r = eb_pyindex_set_project(idx, req->norm_name, &page, err)) < 0)
		goto done;
	files = eb_xcalloc(page.nfiles + 1, sizeof(*files));
	hashes = eb_xcalloc(page.nfiles + 1, sizeof(*hashes));
	for (size_t i = 0; i < page.nfiles; i++) {
		const struct eb_pyindex_file *f = &page.files[i];
		hashes[i] = eb_xcalloc(f->hashes.n + 1, sizeof(**hashes));
		for (size_t k = 0; k < f->hashes.n; k++) {
			hashes[i][k].algo = f->hashes.items[k].algo;
			hashes[i][k].hex = f->hashes.items[k].hex;
		}
		files[i].filename = f->filename;
		files[i].url = f->url;
		files[i].hashes = hashes[i];
		files[i].nhashes = f->hashes.n;
		files[i].requires_python = f->requires_python;
		files[i].yanked = f->yanked;
		files[i].yanked_reason = f->yanked_reason;
		files[i].size = f->size;
	}
	if (lsha && ssha) {
		lsha = NULL; /* a built wheel: the index has its sdist, not it */
	}
	if (lsha) {
		/* the lock is the truth: the file it names, by hash */
		choice.index = page.nfiles;
		for (size_t i = 0; i < page.nfiles; i++) {
			const char *h = eb_pyindex_file_hash(&page.files[i], "sha256");
			if (h && strcmp(h, lsha) == 0 && strcmp(page.files[i].filename, lfile) == 0)
				choice.index = i;
		}
		if (choice.index == page.nfiles) {
			int rebuilt = 0;
			for (size_t i = 0; i < page.nfiles; i++)
				rebuilt |= strcmp(page.files[i].filename, lfile) == 0;
			/* `envbuild lock` keeps locked files, so it would fail
			 * again: say what moves on */
			if (rebuilt) {
				r = eb_error_set(err, EB_ENOTFOUND,
						 "'%s' on the index is not the file locked (sha256 "
						 "%.12s...): it was rebuilt with the same version",
						 lfile, lsha);
				eb_error_hint(err, "give the rebuilt wheel a new version (a local "
					      "label such as VERSION+2) and pin that, or take the new "
					      "bytes with 'envbuild lock --upgrade' (and 'envbuild pin "
					      "--upgrade-package %s' first if the requirements file "
					      "has its --hash)",
					      req->norm_name);
			} else {
				r = eb_error_set(err, EB_ENOTFOUND,
						 "the locked file '%s' (sha256 %.12s...) is no longer "
						 "on the index", lfile, lsha);
				eb_error_hint(err, "run 'envbuild lock --upgrade' to choose the "
					      "index's files again");
			}
			goto done;
		}
		choice.yanked = page.files[choice.index].yanked;
	} else if ((r = eb_tags_select(&choice, files, page.nfiles, req, NULL, tags, err)) < 0) {
		size_t si = r == -EB_ENOTFOUND && choice.miss == EB_WHEEL_NO_COMPATIBLE && lk->spec
				    ? eb_sdistpin_file(&page, req, version)
				    : page.nfiles;
		if (si < page.nfiles) {
			/* only an sdist: build it (assemble/sdistpin.h) */
			const struct eb_pyindex_file *f = &page.files[si];
			char sdg[EB_DIGEST_STR_LEN + 1];
			eb_error_clear(err);
			if (metadata_only) {
				/* check --deep builds nothing: the wheel, and so its
				 * Requires-Dist, is known at build */
				struct eb_diag *w = eb_diag_add(
					diags, EB_SEV_NOTE, ra->file, ra->line, ra->col, "EB256",
					"'%s' is an sdist ('%s'): built at build, its dependencies "
					"are checked then", req->text, f->filename);
				eb_diag_hint(w, "run 'envbuild build' to check its closure");
				d->filename = eb_xstrdup(f->filename);
				d->url = lock_url(lk->spec_dir, f->url);
				r = 0;
				goto done;
			}
			if (req->nhashes) {
				required = eb_xcalloc(req->nhashes + 1, sizeof(*required));
				for (size_t i = 0, k = 0; i < req->nhashes; i++)
					if (req->hashes[i].algo)
						required[k++] = req->hashes[i].raw;
			}
			if ((r = eb_pyindex_download(idx, &page, f, bs, required, sdg, err)) < 0)
				goto done;
			d->url = lock_url(lk->spec_dir, f->url);
			r = sdist_build(lk, d, tags, idx, bs, sdg, f->filename, d->url, f->size,
					NULL, err);
			goto done;
		}
		/* no file fits the pin: a problem of the user's input, not a
		 * missing file (exit 1, not 2) */
		if (r == -EB_ENOTFOUND && err && *err) {
			(*err)->code = EB_EINVALID;
			r = -EB_EINVALID;
		}
		goto done;
	}
	{
		const struct eb_pyindex_file *f = &page.files[choice.index];
		d->filename = eb_xstrdup(f->filename);
		d->url = lock_url(lk->spec_dir, f->url);
		d->size = f->size;
		d->yanked = choice.yanked;
		if (choice.yanked) {
			struct eb_diag *w = eb_diag_add(diags, EB_SEV_WARNING, ra->file, ra->line, ra->col,
							"EB223", "'%s' resolves to a yanked file '%s'%s%s",
							req->text, f->filename, f->yanked_reason ? ": " : "",
							f->yanked_reason ? f->yanked_reason : "");
			eb_diag_hint(w, "an exact pin may use a yanked file, but the project withdrew it");
		}
		if (req->nhashes) {
			required = eb_xcalloc(req->nhashes + 1, sizeof(*required));
			for (size_t i = 0, k = 0; i < req->nhashes; i++)
				if (req->hashes[i].algo)
					required[k++] = req->hashes[i].raw;
		}
		if (metadata_only) {
			struct eb_buf mb;
			eb_buf_init(&mb, 0);
			r = eb_pyindex_fetch_metadata(idx, &page, f, &mb, err);
			if (r == 0)
				r = eb_metadata_parse(&d->md, mb.ptr, mb.len, err);
			eb_buf_release(&mb);
			if (r != -EB_ENOTFOUND)
				goto done;
			eb_error_clear(err); /* no PEP 658 file: read the wheel's own */
		}
		if ((r = eb_pyindex_download(idx, &page, f, bs, required, d->digest, err)) < 0)
			goto done;
		eb_wheeltrust_note(bs, d->digest + 7, f->filename);
		{
			char *path = eb_blobstore_path(bs, d->digest);
			struct stat st;
			if (d->size < 0 && stat(path, &st) == 0)
				d->size = (int64_t)st.st_size;
			r = eb_wheel_read_metadata(&d->md, path, err);
			free(path);
		}
	}
done:
	if (r < 0) {
		eb_error_wrap(err, "'%s'", req->text);
		eb_error_locate(err, ra->file, ra->line, ra->col);
	}
	if (hashes)
		for (size_t i = 0; i < page.nfiles; i++)
			free(hashes[i]);
	free(hashes);
	free(files);
	free(required);
	eb_pyindex_page_release(&page);
	return r;
}

/* Reading the base (every layer decompressed) to find Python and the C
 * library costs more than the rest of a rebuild: remember the answer per
 * base layers, platform and overrides.  The answer is a small JSON blob;
 * the record (oci/cache.h, kind "pytarget") maps the key to it. */
#define PYTARGET_MEDIA_TYPE "application/vnd.envbuild.pytarget.v1+json"

static json_t *dists_to_json(const struct eb_pytarget *t)
{
	json_t *a = json_array();

	for (size_t i = 0; i < t->ndists; i++) {
		const struct eb_pybase_dist *d = &t->dists[i];
		json_t *files = json_null();
		if (d->files) {
			files = json_array();
			for (size_t k = 0; k < d->nfiles; k++)
				json_array_append_new(files, json_string(d->files[k]));
		}
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o}", "name", d->name, "version",
						   d->version, "dist_info", d->dist_info, "files",
						   files));
	}
	return a;
}

/* The cached record's dists (written by dists_to_json, so well formed;
 * anything else is skipped). */
static void dists_from_json(struct eb_pytarget *t, const json_t *a)
{
	size_t n = json_array_size(a);

	t->dists = eb_xcalloc(n + 1, sizeof(*t->dists));
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(a, i), *files = json_object_get(o, "files");
		const char *name = json_string_value(json_object_get(o, "name"));
		const char *version = json_string_value(json_object_get(o, "version"));
		const char *di = json_string_value(json_object_get(o, "dist_info"));
		struct eb_pybase_dist *d;

		if (!name || !version || !di)
			continue;
		d = &t->dists[t->ndists++];
		d->name = eb_xstrdup(name);
		d->version = eb_xstrdup(version);
		d->dist_info = eb_xstrdup(di);
		if (json_is_array(files)) {
			d->files = eb_xcalloc(json_array_size(files) + 1, sizeof(*d->files));
			for (size_t k = 0; k < json_array_size(files); k++) {
				const char *f = json_string_value(json_array_get(files, k));
				if (f)
					d->files[d->nfiles++] = eb_xstrdup(f);
			}
		}
	}
}

int eb_pyenv_detect(struct eb_pytarget *t, struct eb_blobstore *bs, const char *const *layers,
		    const char *const *diff_ids, const struct eb_basefs *fs, size_t nlayers,
		    const char *platform, const struct eb_pytarget_overrides *ov,
		    struct eb_error **err)
{
	static const char *const keys[] = { "python_version", "interpreter", "purelib", "platlib",
					    "scripts", "data", "include", "machine" };
	struct eb_sha256 h;
	char key[EB_DIGEST_STR_LEN + 1];
	json_t *rec = NULL, *j = NULL;
	int r;

	eb_sha256_init(&h);
	eb_sha256_update(&h, "pytarget 3\n", 11);
	for (size_t i = 0; i < nlayers; i++) {
		const char *b = eb_path_basename(layers[i]); /* blobs are named by digest */
		eb_sha256_update(&h, b, strlen(b) + 1);
		/* and what the config says they hold: another config over the
		 * same blobs is read (and its diff_ids checked) again */
		if (diff_ids && diff_ids[i])
			eb_sha256_update(&h, diff_ids[i], strlen(diff_ids[i]) + 1);
	}
	eb_sha256_update(&h, platform, strlen(platform) + 1);
	{
		const char *f[] = { ov->python_version, ov->interpreter, ov->site_packages, ov->libc };
		for (size_t i = 0; i < 4; i++)
			eb_sha256_update(&h, f[i] ? f[i] : "", f[i] ? strlen(f[i]) + 1 : 1);
	}
	eb_sha256_final(&h, key);
	if (eb_cache_record_get(bs, "pytarget", key, &rec)) {
		struct eb_buf text;
		const char *dg = json_string_value(json_object_get(rec, "digest"));

		eb_buf_init(&text, 0);
		/* the result may be in the shared cache only; with the base's
		 * distributions and their RECORDs it can be megabytes (CUDA) */
		if (dg && eb_cache_fetch(bs, dg, json_integer_value(json_object_get(rec, "size")),
					 NULL) == 0 &&
		    eb_blobstore_read(bs, dg, &text, 256u << 20, NULL) == 0)
			j = json_loadb(text.ptr, text.len, 0, NULL);
		eb_buf_release(&text);
		json_decref(rec);
	}
	if (j) {
		char **dst[] = { &t->python_version, &t->interpreter, &t->purelib, &t->platlib,
				 &t->scripts, &t->data, &t->include, &t->machine };
		int ok = json_is_integer(json_object_get(j, "libc"));

		for (size_t i = 0; ok && i < sizeof(keys) / sizeof(keys[0]); i++)
			ok = json_is_string(json_object_get(j, keys[i]));
		if (ok) {
			memset(t, 0, sizeof(*t));
			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				*dst[i] = eb_xstrdup(json_string_value(json_object_get(j, keys[i])));
			t->libc = (enum eb_libc)json_integer_value(json_object_get(j, "libc"));
			t->libc_major = (int)json_integer_value(json_object_get(j, "libc_major"));
			t->libc_minor = (int)json_integer_value(json_object_get(j, "libc_minor"));
			t->libc_assumed = (int)json_integer_value(json_object_get(j, "libc_assumed"));
			if (json_is_string(json_object_get(j, "python_full_version")))
				t->python_full_version = eb_xstrdup(
					json_string_value(json_object_get(j, "python_full_version")));
			dists_from_json(t, json_object_get(j, "dists"));
			json_decref(j);
			return 0;
		}
		json_decref(j);
	}
	if (fs) {
		/* a miss with the base's file-tree view (its diff_ids checked
		 * when it was made): only the layers holding a file whose bytes
		 * an answer needs are read, fetched when still in their
		 * registry */
		r = eb_pytarget_detect_fs(t, fs, layers, nlayers, bs, platform, ov, err);
		goto record;
	}
	/* a miss: the base's layers are read, fetched first when they are
	 * still in their registry (blobs are named by digest) */
	for (size_t i = 0; i < nlayers; i++) {
		eb_autofree char *dg = eb_xasprintf("sha256:%s", eb_path_basename(layers[i]));
		(void)eb_cache_fetch(bs, dg, -1, NULL);
	}
	r = eb_pytarget_detect_verified(t, layers, diff_ids, nlayers, platform, ov, err);
record:
	if (r == 0) {
		char dg[EB_DIGEST_STR_LEN + 1];
		char *txt;

		j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i}",
			      "python_version", t->python_version, "interpreter", t->interpreter,
			      "purelib", t->purelib, "platlib", t->platlib, "scripts", t->scripts,
			      "data", t->data, "include", t->include, "machine", t->machine, "libc",
			      (int)t->libc, "libc_major", t->libc_major, "libc_minor", t->libc_minor,
			      "libc_assumed", t->libc_assumed);
		if (j && t->python_full_version)
			json_object_set_new(j, "python_full_version", json_string(t->python_full_version));
		if (j)
			json_object_set_new(j, "dists", dists_to_json(t));
		txt = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
		/* a cache: failing to record only costs a detection */
		if (txt && eb_blobstore_put(bs, txt, strlen(txt), dg, NULL) == 0) {
			json_t *nr = json_pack("{s:s, s:I, s:s}", "digest", dg, "size",
					       (json_int_t)strlen(txt), "mediaType", PYTARGET_MEDIA_TYPE);
			if (nr)
				(void)eb_cache_record_put(bs, "pytarget", key, nr, NULL);
			json_decref(nr);
		}
		free(txt);
		json_decref(j);
	}
	return r;
}

int eb_pyenv_resolve(struct eb_pyenv *out, const struct eb_spec *spec,
		     const struct eb_spec_target *t, const char *platform,
		     const char *const *base_layers, const char *const *base_diff_ids, size_t nbase,
		     struct eb_pyindex_set *idx,
		     struct eb_blobstore *bs, int metadata_only, const json_t *lock, int frozen,
		     struct eb_diag_list *diags, struct eb_error **err)
{
	return eb_pyenv_resolve_fs(out, spec, t, platform, base_layers, base_diff_ids, NULL, nbase,
				   idx, bs, metadata_only, lock, frozen, NULL, diags, err);
}

int eb_pyenv_resolve_fs(struct eb_pyenv *out, const struct eb_spec *spec,
			const struct eb_spec_target *t, const char *platform,
			const char *const *base_layers, const char *const *base_diff_ids,
			const struct eb_basefs *base_fs, size_t nbase, struct eb_pyindex_set *idx,
			struct eb_blobstore *bs, int metadata_only, const json_t *lock, int frozen,
			struct eb_pybuilder *builder, struct eb_diag_list *diags,
			struct eb_error **err)
{
	struct locked lk = { lock, t->name, platform, frozen, spec->dir,
			     spec, t, base_layers, nbase, NULL, diags, builder };
	struct eb_reqfile **rfs = NULL;
	struct eb_requirement *inl = NULL;
	struct req_at *reqs = NULL;
	size_t nreqs = 0, cap = 0, ninl = 0;
	struct eb_pytarget_overrides ov = { 0 };
	struct eb_marker_env env;
	struct eb_tag_target tt;
	struct eb_tag_list tl = { 0 };
	char libc[32];
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->platform = eb_xstrdup(platform);
	if (t->requirements.n == 0 && t->packages.n == 0)
		return 0;

	/* every requirement, with its position */
	rfs = eb_xcalloc(t->requirements.n + 1, sizeof(*rfs));
	for (size_t i = 0; i < t->requirements.n; i++) {
		struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
		char *p = eb_spec_resolve(spec, t->requirements.v[i].s);
		r = eb_reqfile_load_in(&rfs[i], p, spec->dir, spec->requirements_env_names,
				       spec->requirements_env.n, 1, &ignore, err);
		eb_diag_list_release(&ignore);
		free(p);
		if (r < 0)
			goto done;
		for (size_t k = 0; k < eb_reqfile_count(rfs[i]); k++) {
			const struct eb_reqfile_entry *en = eb_reqfile_get(rfs[i], k);
			if (en->constraint)
				continue;
			EB_ALLOC_GROW(reqs, nreqs + 1, cap);
			reqs[nreqs++] = (struct req_at){ &en->req, en->file, en->line, en->col };
		}
	}
	inl = eb_xcalloc(t->packages.n + 1, sizeof(*inl));
	for (size_t i = 0; i < t->packages.n; i++) {
		const struct eb_spec_str *pk = &t->packages.v[i];
		if ((r = eb_requirement_parse(&inl[i], pk->s, strlen(pk->s), err)) < 0) {
			eb_error_locate(err, spec->path, pk->pos.line, pk->pos.col);
			goto done;
		}
		ninl++;
		EB_ALLOC_GROW(reqs, nreqs + 1, cap);
		reqs[nreqs++] = (struct req_at){ &inl[i], spec->path, pk->pos.line, pk->pos.col };
	}

	/* the target: from the base, with the spec's overrides */
	ov.python_version = t->python.s;
	ov.interpreter = t->interpreter.s;
	ov.site_packages = t->site_packages.s;
	ov.libc = t->libc.s;
	if (metadata_only && nbase == 0) {
		/* check --deep: no base image is read.  Only markers and the
		 * choice of which file's metadata to read depend on the target;
		 * a recent glibc lets any manylinux wheel of the pin qualify. */
		if (!t->python.s) {
			r = eb_error_set_at(err, EB_EINVALID, spec->path, t->pos.line, t->pos.col,
					    "'check --deep' needs the python version of target '%s'",
					    t->name);
			eb_error_hint(err, "add python: \"3.11\" to the spec");
			goto done;
		}
		ov.libc = t->libc.s ? t->libc.s : "glibc 2.39";
		r = eb_pytarget_assume(&out->target, platform, &ov, err);
	} else {
		r = eb_pyenv_detect(&out->target, bs, base_layers, base_diff_ids, base_fs, nbase,
				    platform, &ov, err);
	}
	if (r < 0) {
		eb_error_wrap(err, "target '%s' (%s)", t->name, platform);
		eb_error_locate(err, spec->path, t->base.pos.line, t->base.pos.col);
		goto done;
	}
	snprintf(libc, sizeof(libc), "%s %d.%d", out->target.libc == EB_LIBC_MUSL ? "musl" : "glibc",
		 out->target.libc_major, out->target.libc_minor);
	if ((r = eb_tag_target_parse(&tt, out->target.python_version, platform, libc, err)) < 0 ||
	    (r = eb_tag_list_build(&tl, &tt, err)) < 0)
		goto done;
	eb_marker_env_init(&env, eb_pytarget_full_version(&out->target), out->target.machine);
	lk.pytarget = &out->target;

	for (size_t i = 0; i < nreqs; i++) {
		int holds = 1;
		if (reqs[i].req->marker) {
			if ((r = eb_marker_eval(reqs[i].req->marker, &env, &holds, err)) < 0) {
				eb_error_locate(err, reqs[i].file, reqs[i].line, reqs[i].col);
				goto done;
			}
		}
		if (!holds)
			continue; /* pip: "Ignoring X: markers don't match your environment" */
		if ((r = resolve_one(out, &reqs[i], &tl, idx, bs, metadata_only, &lk, diags, err)) < 0)
			goto done;
	}
	eb_sort(out->dists, out->n, sizeof(*out->dists), cmp_dist);
done:
	eb_tag_list_release(&tl);
	for (size_t i = 0; i < t->requirements.n; i++)
		eb_reqfile_free(rfs[i]);
	free(rfs);
	for (size_t i = 0; i < ninl; i++)
		eb_requirement_release(&inl[i]);
	free(inl);
	free(reqs);
	if (r < 0)
		eb_pyenv_release(out);
	return r;
}

/* "file://" + an absolute path, percent-encoded. */
static char *file_url(const char *path)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	(void)eb_buf_adds(&b, "file://");
	for (const char *c = path; *c; c++) {
		unsigned char ch = (unsigned char)*c;
		if (isalnum(ch) || strchr("-._~/", ch))
			(void)eb_buf_addc(&b, (char)ch);
		else
			(void)eb_buf_addf(&b, "%%%02X", ch);
	}
	return eb_buf_detach(&b, NULL);
}

/* Whether directory dir holds wheels itself (a flat directory), not a
 * PEP 503 tree of project directories. */
static int holds_wheels(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		found = n > 4 && strcmp(de->d_name + n - 4, ".whl") == 0;
	}
	closedir(d);
	return found;
}

/* A spec index: a URL as it is; a directory, or a relative file: URL,
 * resolved against the spec's directory and confined to it (symlinks
 * too; check refuses '..' before).  A relative file: URL is the PEP 503
 * tree its absolute form would be, or a flat directory of wheels when it
 * holds wheels.  Errors point at where the spec names it. */
static int add_index(struct eb_pyindex_set *s, const struct eb_spec *spec, const char *loc,
		     const struct eb_srcpos *pos, struct eb_error **err)
{
	const char *rel = eb_spec_index_relpath(loc);
	char *where = NULL, *path = NULL;
	int r = 0;

	if (!rel) {
		where = eb_xstrdup(loc);
	} else {
		path = eb_spec_resolve(spec, *rel ? rel : ".");
		r = eb_path_inside(path, spec->dir, err);
		if (r == 0)
			r = eb_error_set(err, EB_EINVALID,
					 "index '%s' leads out of the project directory", loc);
		if (r < 0)
			goto done;
		if (rel == loc || holds_wheels(path)) {
			where = path;
			path = NULL;
		} else {
			char *abs = realpath(path, NULL);
			where = file_url(abs ? abs : path);
			free(abs);
		}
	}
	r = eb_pyindex_set_add(s, loc, where, err);
done:
	if (r < 0 && pos)
		eb_error_locate(err, spec->path, pos->line, pos->col);
	free(where);
	free(path);
	return r < 0 ? r : 0;
}

int eb_pyenv_indexes(struct eb_pyindex_set **out, const struct eb_spec *spec,
		     struct eb_http_client *http, struct eb_error **err)
{
	struct eb_pyindex_options io = { 0 };
	struct eb_pyindex_set *s = NULL;
	int r;

	io.http = http;
	if ((r = eb_pyindex_set_new(&s, &io, err)) < 0)
		return r;
	if (spec->index.s && (r = add_index(s, spec, spec->index.s, &spec->index.pos, err)) < 0)
		goto fail;
	for (size_t i = 0; i < spec->extra_indexes.n; i++)
		if ((r = add_index(s, spec, spec->extra_indexes.v[i].s, &spec->extra_indexes.v[i].pos,
				   err)) < 0)
			goto fail;
	for (size_t i = 0; i < spec->package_indexes.n; i++) {
		const struct eb_spec_kv *kv = &spec->package_indexes.v[i];
		int known = 0;
		for (size_t k = 0; k < eb_pyindex_set_count(s); k++)
			known |= strcmp(eb_pyindex_set_label(s, k), kv->value) == 0;
		if (!known && (r = add_index(s, spec, kv->value, &kv->pos, err)) < 0)
			goto fail;
		if ((r = eb_pyindex_set_route(s, kv->key, kv->value, err)) < 0)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	eb_pyindex_set_free(s);
	return r;
}

void eb_pyenv_indexes_free(struct eb_pyindex_set *s)
{
	eb_pyindex_set_free(s);
}

int eb_pyenv_check_deep(const char *spec_path, const char *cache_dir, struct eb_diag_list *diags,
			struct eb_error **err)
{
	struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	struct eb_pyindex_set *idx = NULL;
	struct eb_blobstore *bs = NULL;
	int r;

	r = eb_spec_load(&spec, spec_path, &ignore, err);
	eb_diag_list_release(&ignore);
	if (r < 0 || !spec)
		return r;
	if ((r = eb_blobstore_open(&bs, cache_dir, err)) < 0)
		goto done;
	for (size_t i = 0; i < spec->ntargets && r == 0; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		if (!t->requirements.n && !t->packages.n)
			continue;
		if (!idx && (r = eb_pyenv_indexes(&idx, spec, NULL, err)) < 0)
			break;
		for (size_t p = 0; p < t->platforms.n && r == 0; p++) {
			struct eb_pyenv env;
			r = eb_pyenv_resolve(&env, spec, t, t->platforms.v[p].s, NULL, NULL, 0, idx, bs, 1,
					     NULL, 0, diags, err);
			if (r < 0)
				break;
			eb_pyenv_check_closure(&env, diags);
			eb_pyenv_release(&env);
		}
	}
done:
	eb_pyindex_set_free(idx);
	eb_blobstore_free(bs);
	eb_spec_free(spec);
	return r;
}
