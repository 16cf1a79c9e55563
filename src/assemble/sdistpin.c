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
#include <sys/utsname.h>
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
/* Every built wheel's timestamps: 1980-01-01, the earliest a zip holds. */
#define BUILD_EPOCH 315532800LL

static void key_add(struct eb_sha256 *h, const char *label, const char *v)
{
	eb_sha256_update(h, label, strlen(label));
	eb_sha256_update(h, "=", 1);
	eb_sha256_update(h, v ? v : "", v ? strlen(v) : 0);
	eb_sha256_update(h, "\n", 1);
}

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

/* Can this host execute the image's programs (the same machine)? */
static int native(const char *machine, char *host, size_t hostlen)
{
	struct utsname u;

	if (uname(&u) < 0) {
		snprintf(host, hostlen, "unknown");
		return 1; /* let the runner say what fails */
	}
	snprintf(host, hostlen, "%s", u.machine);
	return !machine || strcmp(machine, u.machine) == 0;
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

	d->sdist_filename = eb_xstrdup(sdist_filename);
	d->sdist_url = eb_xstrdup(sdist_url);
	snprintf(d->sdist_digest, sizeof(d->sdist_digest), "%s", sdist_digest);
	d->sdist_size = sdist_size;
	if (!c->target->interpreter)
		return eb_error_set(err, EB_EINVALID, "building sdist '%s' needs the target's "
				    "python3, and the base has none", sdist_filename);
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

	/* the cache key: everything the wheel's bytes depend on */
	eb_sha256_init(&h);
	key_add(&h, "sdist", sdist_digest);
	key_add(&h, "interpreter", c->target->interpreter);
	key_add(&h, "python", eb_pytarget_full_version(c->target));
	key_add(&h, "machine", c->target->machine);
	for (size_t i = 0; i < c->nbase; i++)
		key_add(&h, "layer", eb_path_basename(c->base_layers[i]));
	for (size_t i = 0; i < benv.n; i++) {
		key_add(&h, "buildreq", benv.dists[i].name);
		key_add(&h, "wheel", benv.dists[i].digest);
		reqs[i].name = benv.dists[i].name;
		reqs[i].version = benv.dists[i].version;
		reqs[i].wheel = eb_blobstore_path(c->bs, benv.dists[i].digest);
	}
	key_add(&h, "driver", "1");
	eb_sha256_final(&h, key);

	if (eb_cache_record_get(c->bs, "sdistwheel", key, &rec)) {
		const char *dg = json_string_value(json_object_get(rec, "digest"));
		const char *fn = json_string_value(json_object_get(rec, "filename"));
		if (dg && fn && eb_digest_valid(dg) && !strchr(fn, '/') &&
		    eb_tags_is_wheel_filename(fn)) {
			snprintf(d->digest, sizeof(d->digest), "%s", dg);
			d->filename = eb_xstrdup(fn);
			d->size = (int64_t)json_integer_value(json_object_get(rec, "size"));
			d->sdist_cached = 1;
			goto built;
		}
	}

	/* A py3-none-any wheel serves every platform: the key of one
	 * without the platform's parts (the layers, the machine). */
	eb_sha256_init(&h);
	key_add(&h, "sdist", sdist_digest);
	key_add(&h, "python", eb_pytarget_full_version(c->target));
	for (size_t i = 0; i < benv.n; i++)
		key_add(&h, "wheel", benv.dists[i].digest);
	eb_sha256_final(&h, purekey);
	if (!native(c->target->machine, host, sizeof(host))) {
		json_decref(rec);
		rec = NULL;
		if (eb_cache_record_get(c->bs, "sdistpure", purekey, &rec)) {
			const char *dg = json_string_value(json_object_get(rec, "digest"));
			const char *fn = json_string_value(json_object_get(rec, "filename"));
			if (dg && fn && eb_digest_valid(dg) && !strchr(fn, '/') &&
			    eb_tags_is_wheel_filename(fn)) {
				snprintf(d->digest, sizeof(d->digest), "%s", dg);
				d->filename = eb_xstrdup(fn);
				d->size = (int64_t)json_integer_value(json_object_get(rec, "size"));
				d->sdist_cached = 1;
				goto built;
			}
		}
		r = eb_error_set(err, EB_EINVALID,
				 "building sdist '%s' for %s runs the image's python3, which this "
				 "%s host cannot execute (envbuild does not emulate) [EB254]",
				 sdist_filename, c->target->machine, host);
		eb_error_hint(err, "list the host's platform first in 'platforms' (a pure-Python "
				   "wheel built there, py3-none-any, serves every platform), or pin "
				   "a version that has a wheel for %s", c->target->machine);
		goto out;
	}

	if ((r = eb_rootfs_get(c->bs, c->base_layers, c->nbase, &root, err)) < 0)
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
	o.interpreter = c->target->interpreter;
	o.reqs = reqs;
	o.nreqs = benv.n;
	o.markers = &menv;
	o.source_date_epoch = BUILD_EPOCH;
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
		size_t fl = strlen(d->filename);
		(void)eb_cache_record_put(c->bs, "sdistwheel", key, rec, NULL); /* a cache */
		if (fl > 13 && strcmp(d->filename + fl - 13, "-none-any.whl") == 0 &&
		    strstr(d->filename, "-py3-none-any.whl"))
			(void)eb_cache_record_put(c->bs, "sdistpure", purekey, rec, NULL);
	}
built:
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
