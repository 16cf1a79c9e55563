/*
 * sdistpin.c - build, cache and check the wheel of an sdist-only pin (see
 * sdistpin.h).
 */
#define _GNU_SOURCE
#include "assemble/sdistpin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "assemble/buildreqs.h"
#include "assemble/sdistbuild.h"
#include "oci/cache.h"
#include "oci/rootfs.h"
#include "python/index.h"
#include "python/sdist.h"
#include "python/wheel.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"

#define SDIST_WHEEL_MEDIA_TYPE "application/vnd.envbuild.sdist-wheel.v1+zip"

static int store_file(struct eb_blobstore *bs, const char *path, char digest[EB_DIGEST_STR_LEN + 1],
		      int64_t *size, struct eb_error **err)
{
	struct eb_blob_writer *w = NULL;
	char buf[65536];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), r;
	ssize_t n;

	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", path);
	if ((r = eb_blob_writer_open(&w, bs, err)) < 0) {
		close(fd);
		return r;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if ((r = eb_blob_writer_write(w, buf, (size_t)n, err)) < 0)
			break;
	close(fd);
	if (r == 0 && n < 0)
		r = eb_error_set_errno(err, EB_EIO, errno, "reading '%s'", path);
	if (r < 0) {
		eb_blob_writer_abort(w);
		return r;
	}
	*size = (int64_t)eb_blob_writer_size(w);
	return eb_blob_writer_commit(w, NULL, digest, err);
}

/* A builder fit for the target (EB258): the same Python X.Y (the
 * wheel's ABI), the same machine and C library, and no newer a glibc
 * (what the extension links against must be in the target). */
static int check_builder(const struct eb_sdistpin_ctx *c, const char *sdist_filename,
			 struct eb_error **err)
{
	const struct eb_pytarget *b = c->builder_py, *t = c->target;
	const char *bn = c->builder->target, *tn = c->t->name;
	int r;

	if (!b->python_version || !t->python_version ||
	    strcmp(b->python_version, t->python_version) != 0) {
		r = eb_error_set(err, EB_EINVALID,
				 "target '%s' builds sdist '%s' in '%s' (build_in), whose Python is "
				 "%s; '%s' has %s, and the builder must have the same Python X.Y "
				 "[EB258]", tn, sdist_filename, bn,
				 b->python_version ? b->python_version : "unknown", tn,
				 t->python_version ? t->python_version : "unknown");
		eb_error_hint(err, "an extension compiled for one Python X.Y does not import in "
				   "another; give '%s' Python %s (its base, or apt: python%s-dev), or "
				   "name a builder that has it", bn,
			      t->python_version ? t->python_version : "X.Y",
			      t->python_version ? t->python_version : "X.Y");
		return r;
	}
	if (!b->machine || !t->machine || strcmp(b->machine, t->machine) != 0)
		return eb_error_set(err, EB_EINVALID,
				    "target '%s' builds sdist '%s' in '%s' (build_in), whose Python "
				    "is for %s, not %s [EB258]", tn, sdist_filename, bn,
				    b->machine ? b->machine : "unknown",
				    t->machine ? t->machine : "unknown");
	if (b->libc != t->libc || b->libc_major > t->libc_major ||
	    (b->libc_major == t->libc_major && b->libc_minor > t->libc_minor)) {
		r = eb_error_set(err, EB_EINVALID,
				 "target '%s' builds sdist '%s' in '%s' (build_in), whose C library "
				 "is %s %d.%d; '%s' has %s %d.%d, which may lack what the builder "
				 "links against [EB258]", tn, sdist_filename, bn,
				 b->libc == EB_LIBC_MUSL ? "musl" : "glibc", b->libc_major,
				 b->libc_minor, tn, t->libc == EB_LIBC_MUSL ? "musl" : "glibc",
				 t->libc_major, t->libc_minor);
		eb_error_hint(err, "build in an image of the target's distribution release (the "
				   "same base, with the compiler added by apt:)");
		return r;
	}
	return 0;
}

/* The wheel fits the target's tags (a builder's backend could name
 * another interpreter or platform). */
static int check_fits(const struct eb_sdistpin_ctx *c, const char *sdist_filename,
		      const char *wheel, struct eb_error **err)
{
	struct eb_wheel_filename wf = { 0 };
	int r = eb_wheel_filename_parse(&wf, wheel, err);

	if (r == 0 && eb_tag_list_wheel_rank(c->tags, &wf) < 0) {
		r = eb_error_set(err, EB_EINVALID,
				 "the wheel built from sdist '%s' is '%s', which target '%s' cannot "
				 "install (it takes %s) [EB258]", sdist_filename, wheel, c->t->name,
				 eb_tag_list_abi(c->tags));
		if (c->builder)
			eb_error_hint(err, "the builder '%s' must have the target's Python and "
					   "platform", c->builder->target);
	}
	eb_wheel_filename_release(&wf);
	return r;
}

static int pure_wheel(const char *fn)
{
	size_t fl = strlen(fn);

	return fl > 13 && strcmp(fn + fl - 13, "-none-any.whl") == 0 && strstr(fn, "-py3-none-any.whl");
}

/* The wheel a record names: 1 and d filled, or 0. */
static int from_record(const json_t *rec, struct eb_pydist *d)
{
	const char *dg = json_string_value(json_object_get(rec, "digest"));
	const char *fn = json_string_value(json_object_get(rec, "filename"));

	if (!dg || !fn || !eb_digest_valid(dg) || strchr(fn, '/') || !eb_tags_is_wheel_filename(fn))
		return 0;
	snprintf(d->digest, sizeof(d->digest), "%s", dg);
	d->filename = eb_xstrdup(fn);
	d->size = (int64_t)json_integer_value(json_object_get(rec, "size"));
	d->sdist_cached = 1;
	return 1;
}

int eb_sdistpin_build(const struct eb_sdistpin_ctx *c, struct eb_pydist *d,
		      const char *sdist_digest, const char *sdist_filename, const char *sdist_url,
		      int64_t sdist_size, const char *locked_sha256, struct eb_error **err)
{
	struct eb_pyenv benv = { 0 };
	struct eb_buildreqs breqs = { 0 };
	struct eb_sdist_buildreq *reqs = NULL;
	struct eb_sdist_build_opts o = { 0 };
	struct eb_marker_env menv;
	struct eb_sha256 h;
	char key[EB_DIGEST_STR_LEN + 1], purekey[EB_DIGEST_STR_LEN + 1], host[65];
	char *root = NULL, *work = NULL, *wheel = NULL, *wheel_name = NULL, *sdist_path = NULL;
	char *path = NULL;
	json_t *rec = NULL;
	int lock_fd = -1, r;
	/* where it is built: the builder's image, or the target's base */
	const struct eb_pytarget *py = c->builder_py ? c->builder_py : c->target;
	const char *const *layers = c->builder ? c->builder->layers : c->base_layers;
	size_t nlayers = c->builder ? c->builder->nlayers : c->nbase;

	d->sdist_filename = eb_xstrdup(sdist_filename);
	d->sdist_url = eb_xstrdup(sdist_url);
	snprintf(d->sdist_digest, sizeof(d->sdist_digest), "%s", sdist_digest);
	d->sdist_size = sdist_size;
	if (!py->interpreter)
		return eb_error_set(err, EB_EINVALID, "building sdist '%s' needs the %s python3, "
				    "and %s has none", sdist_filename,
				    c->builder ? "builder's" : "target's",
				    c->builder ? "the builder" : "the base");
	if (c->builder && (r = check_builder(c, sdist_filename, err)) < 0)
		return r;
	if ((r = eb_buildreqs_load(&breqs, c->spec, c->t, 0, NULL, err)) < 0)
		return r;
	benv.target = *c->target; /* borrowed: benv.target is not released */
	for (size_t i = 0; i < breqs.n; i++)
		if ((r = c->resolve(c->ud, &benv, breqs.v[i].req, breqs.v[i].file, breqs.v[i].line,
				    breqs.v[i].col, err)) < 0) {
			eb_error_wrap(err, "build requirement of target '%s'", c->t->name);
			goto out;
		}
	reqs = eb_xcalloc(benv.n + 1, sizeof(*reqs));

	/* the cache key: everything the wheel's bytes depend on (the image
	 * it is built in: the target's base, or the builder's layers) */
	eb_sha256_init(&h);
	eb_sdist_key_add(&h, "sdist", sdist_digest);
	eb_sdist_key_add(&h, "interpreter", py->interpreter);
	eb_sdist_key_add(&h, "python", eb_pytarget_full_version(py));
	eb_sdist_key_add(&h, "machine", c->target->machine);
	for (size_t i = 0; i < nlayers; i++)
		eb_sdist_key_add(&h, "layer", eb_path_basename(layers[i]));
	for (size_t i = 0; i < benv.n; i++) {
		eb_sdist_key_add(&h, "buildreq", benv.dists[i].name);
		eb_sdist_key_add(&h, "wheel", benv.dists[i].digest);
		reqs[i].name = benv.dists[i].name;
		reqs[i].version = benv.dists[i].version;
		reqs[i].wheel = eb_blobstore_path(c->bs, benv.dists[i].digest);
	}
	eb_sdist_key_add(&h, "driver", "1");
	eb_sha256_final(&h, key);

	if (eb_cache_record_get(c->bs, "sdistwheel", key, &rec) && from_record(rec, d))
		goto built;

	/* A py3-none-any wheel serves every platform: the key of one
	 * without the platform's parts (the layers, the machine). */
	eb_sha256_init(&h);
	eb_sdist_key_add(&h, "sdist", sdist_digest);
	eb_sdist_key_add(&h, "python", eb_pytarget_full_version(c->target));
	for (size_t i = 0; i < benv.n; i++)
		eb_sdist_key_add(&h, "wheel", benv.dists[i].digest);
	eb_sha256_final(&h, purekey);
	if (!eb_sdist_host_runs(c->target->machine, host, sizeof(host))) {
		json_decref(rec);
		rec = NULL;
		if (eb_cache_record_get(c->bs, "sdistpure", purekey, &rec) && from_record(rec, d))
			goto built;
		json_decref(rec);
		rec = NULL;
		if (eb_cache_record_get(c->bs, "sdistnative", purekey, &rec) &&
		    json_is_string(json_object_get(rec, "filename"))) {
			/* the host's build of it was native code: no emulation
			 * compiles it for another machine */
			char *who = c->builder ? eb_xasprintf("the builder '%s'", c->builder->target)
					       : eb_xstrdup("the image");
			r = eb_error_set(err, EB_EINVALID,
					 "sdist '%s' builds native code (its wheel on this %s host is "
					 "'%s', not py3-none-any): a wheel for %s is compiled by the "
					 "python3 and compiler of %s, which this host cannot execute "
					 "(envbuild does not emulate) [EB254]", sdist_filename, host,
					 json_string_value(json_object_get(rec, "filename")),
					 c->target->machine, who);
			free(who);
			eb_error_hint(err, "build for %s on a machine of that kind, or pin a version "
					   "that has a wheel for %s", c->target->machine,
				      c->target->machine);
			goto out;
		}
		r = eb_error_set(err, EB_EINVALID,
				 "building sdist '%s' for %s runs the %s python3, which this "
				 "%s host cannot execute (envbuild does not emulate) [EB254]",
				 sdist_filename, c->target->machine,
				 c->builder ? "builder's" : "image's", host);
		eb_error_hint(err, "list the host's platform first in 'platforms' (a pure-Python "
				   "wheel built there, py3-none-any, serves every platform), or pin "
				   "a version that has a wheel for %s", c->target->machine);
		goto out;
	}

	/* a push's store may hold a cached layer only by reference (the
	 * shared cache, the base's registry): the tree needs its bytes */
	for (size_t i = 0; i < nlayers; i++) {
		char *dg = eb_xasprintf("sha256:%s", eb_path_basename(layers[i]));
		r = eb_cache_fetch(c->bs, dg, -1, err);
		free(dg);
		if (r < 0)
			goto out;
	}
	if ((r = eb_rootfs_get(c->bs, layers, nlayers, &root, err)) < 0)
		goto out;
	if ((r = eb_blobstore_mkdtemp(c->bs, "stage-", &work, &lock_fd, err)) < 0)
		goto out;
	sdist_path = eb_blobstore_path(c->bs, sdist_digest);
	eb_marker_env_init(&menv, eb_pytarget_full_version(c->target), c->target->machine);
	o.sdist = sdist_path;
	o.filename = sdist_filename;
	o.name = d->name;
	o.version = d->version;
	o.root = root;
	o.interpreter = py->interpreter;
	o.builder = c->builder ? c->builder->target : NULL;
	o.reqs = reqs;
	o.nreqs = benv.n;
	o.markers = &menv;
	o.source_date_epoch = EB_SDIST_BUILD_EPOCH;
	o.workdir = work;
	if ((r = eb_sdist_build_wheel(&o, &wheel, &wheel_name, err)) < 0)
		goto out;
	if ((r = store_file(c->bs, wheel, d->digest, &d->size, err)) < 0)
		goto out;
	d->filename = wheel_name;
	wheel_name = NULL;
	json_decref(rec);
	rec = json_pack("{s:s, s:I, s:s, s:s}", "digest", d->digest, "size", (json_int_t)d->size,
			"mediaType", SDIST_WHEEL_MEDIA_TYPE, "filename", d->filename);
	if (rec) {
		(void)eb_cache_record_put(c->bs, "sdistwheel", key, rec, NULL); /* a cache */
		/* what another platform's build of it takes, or is told */
		(void)eb_cache_record_put(c->bs, pure_wheel(d->filename) ? "sdistpure"
									   : "sdistnative",
					  purekey, rec, NULL);
	}
built:
	if ((r = check_fits(c, sdist_filename, d->filename, err)) < 0)
		goto out;
	if (locked_sha256 && strcmp(eb_digest_hex(d->digest), locked_sha256) != 0) {
		r = eb_error_set(err, EB_EINVALID,
				 "the wheel built from sdist '%s' is sha256:%s, the lock records "
				 "sha256:%s [EB253]", sdist_filename, eb_digest_hex(d->digest),
				 locked_sha256);
		eb_error_hint(err, "the build is not reproducible with these inputs; the lock "
				   "promises the image, so nothing was built (re-lock to accept "
				   "the new wheel)");
		goto out;
	}
	path = eb_blobstore_path(c->bs, d->digest);
	r = eb_wheel_read_metadata(&d->md, path, err);
out:
	if (work) {
		(void)eb_fs_remove_tree(work, NULL);
		free(work);
	}
	if (lock_fd >= 0)
		close(lock_fd);
	if (reqs)
		for (size_t i = 0; i < benv.n; i++)
			free((char *)reqs[i].wheel);
	free(reqs);
	eb_pyenv_release_dists(&benv);
	eb_buildreqs_release(&breqs);
	json_decref(rec);
	free(root);
	free(wheel);
	free(wheel_name);
	free(sdist_path);
	free(path);
	return r;
}

/* The index file of the sdist of name==version the requirement's hashes
 * allow (the first), or page->nfiles. */
size_t eb_sdistpin_file(const struct eb_pyindex_page *page, const struct eb_requirement *req,
			  const char *version)
{
	for (size_t i = 0; i < page->nfiles; i++) {
		const struct eb_pyindex_file *f = &page->files[i];
		char *n = NULL, *v = NULL;
		struct eb_error *ignore = NULL;
		int ours = eb_sdist_is_filename(f->filename) &&
			   eb_sdist_filename_parse(f->filename, &n, &v, &ignore) == 0 &&
			   strcmp(n, req->norm_name) == 0 && strcmp(v, version) == 0;
		const char *h = eb_pyindex_file_hash(f, "sha256");
		eb_error_free(ignore);
		free(n);
		free(v);
		if (!ours)
			continue;
		if (req->nhashes) {
			int ok = 0;
			for (size_t k = 0; h && k < req->nhashes; k++)
				ok |= req->hashes[k].algo && strcmp(req->hashes[k].algo, "sha256") == 0 &&
				      strcmp(req->hashes[k].hex, h) == 0;
			if (!ok)
				continue;
		}
		return i;
	}
	return page->nfiles;
}
