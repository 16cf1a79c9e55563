/*
 * sdisthook.c - an sdist's build requirements as its backend states them,
 * asked confined in the base build builds in and cached (see sdisthook.h).
 */
#define _GNU_SOURCE
#include "assemble/sdisthook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "assemble/sdistbuild.h"
#include "oci/cache.h"
#include "oci/rootfs.h"
#include "pin/marker.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"

#define SDISTHOOK_MEDIA_TYPE "application/vnd.envbuild.sdist-hook.v1+json"

static void reqs_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The cached answer of key: 1 with *reqs, or 0. */
static int from_cache(struct eb_blobstore *bs, const char *key, char ***reqs, size_t *n)
{
	json_t *rec = NULL, *j = NULL, *v;
	struct eb_buf text = EB_BUF_INIT;
	const char *dg;
	int ok = 0;

	if (!eb_cache_record_get(bs, "sdisthook", key, &rec))
		return 0;
	dg = json_string_value(json_object_get(rec, "digest"));
	if (dg && eb_cache_fetch(bs, dg, json_integer_value(json_object_get(rec, "size")), NULL) == 0 &&
	    eb_blobstore_read(bs, dg, &text, 1u << 20, NULL) == 0)
		j = json_loadb(text.ptr, text.len, 0, NULL);
	v = json_object_get(j, "requires");
	if (json_is_array(v)) {
		ok = 1;
		*reqs = eb_xcalloc(json_array_size(v) + 1, sizeof(**reqs));
		*n = 0;
		for (size_t i = 0; i < json_array_size(v); i++)
			if (json_is_string(json_array_get(v, i)))
				(*reqs)[(*n)++] = eb_xstrdup(json_string_value(json_array_get(v, i)));
	}
	json_decref(j);
	json_decref(rec);
	eb_buf_release(&text);
	return ok;
}

/* A cache: failing to record only costs asking again. */
static void to_cache(struct eb_blobstore *bs, const char *key, char *const *reqs, size_t n)
{
	json_t *j = json_object(), *a = json_array(), *rec;
	char dg[EB_DIGEST_STR_LEN + 1];
	char *txt;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(reqs[i]));
	json_object_set_new(j, "requires", a);
	txt = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	if (txt && eb_blobstore_put(bs, txt, strlen(txt), dg, NULL) == 0) {
		rec = json_pack("{s:s, s:I, s:s}", "digest", dg, "size", (json_int_t)strlen(txt),
				"mediaType", SDISTHOOK_MEDIA_TYPE);
		if (rec)
			(void)eb_cache_record_put(bs, "sdisthook", key, rec, NULL);
		json_decref(rec);
	}
	free(txt);
}

int eb_sdisthook_requires(const struct eb_sdisthook_opts *o, char ***reqs, size_t *n,
			  enum eb_sdisthook_status *status, char *host, size_t hostlen,
			  struct eb_error **err)
{
	struct eb_sdist_build_opts so = { 0 };
	struct eb_sdist_buildreq *env = NULL;
	struct eb_marker_env menv;
	struct eb_sha256 h;
	char key[EB_DIGEST_STR_LEN + 1];
	char *root = NULL, *work = NULL, *sdist = NULL;
	int lock_fd = -1, r = 0, runs;

	*reqs = NULL;
	*n = 0;
	runs = eb_sdist_host_runs(o->py->machine, host, hostlen);
	if (!o->py->interpreter) {
		*status = EB_SDISTHOOK_NOPYTHON;
		return 0;
	}
	if (!runs) {
		*status = EB_SDISTHOOK_FOREIGN;
		return 0;
	}

	/* everything the answer depends on: the sdist, the python running
	 * the backend, the tree it runs in, the build environment */
	eb_sha256_init(&h);
	eb_sdist_key_add(&h, "sdist", o->sdist_digest);
	eb_sdist_key_add(&h, "interpreter", o->py->interpreter);
	eb_sdist_key_add(&h, "python", eb_pytarget_full_version(o->py));
	eb_sdist_key_add(&h, "machine", o->py->machine);
	for (size_t i = 0; i < o->nlayers; i++)
		eb_sdist_key_add(&h, "layer", eb_path_basename(o->layers[i]));
	for (size_t i = 0; i < o->nenv; i++) {
		eb_sdist_key_add(&h, "buildreq", o->env[i].name);
		eb_sdist_key_add(&h, "wheel", o->env[i].digest);
	}
	eb_sdist_key_add(&h, "driver", "1");
	eb_sha256_final(&h, key);
	if (from_cache(o->bs, key, reqs, n)) {
		*status = EB_SDISTHOOK_CACHED;
		return 0;
	}

	/* a layer known only by reference (the shared cache) needs its
	 * bytes for the tree */
	for (size_t i = 0; i < o->nlayers; i++) {
		char *dg = eb_xasprintf("sha256:%s", eb_path_basename(o->layers[i]));
		r = eb_cache_fetch(o->bs, dg, -1, err);
		free(dg);
		if (r < 0)
			goto out;
	}
	if ((r = eb_rootfs_get(o->bs, o->layers, o->nlayers, &root, err)) < 0 ||
	    (r = eb_blobstore_mkdtemp(o->bs, "hook-", &work, &lock_fd, err)) < 0)
		goto out;
	env = eb_xcalloc(o->nenv + 1, sizeof(*env));
	for (size_t i = 0; i < o->nenv; i++) {
		env[i].name = o->env[i].name;
		env[i].version = o->env[i].version;
		env[i].wheel = eb_blobstore_path(o->bs, o->env[i].digest);
	}
	sdist = eb_blobstore_path(o->bs, o->sdist_digest);
	eb_marker_env_init(&menv, eb_pytarget_full_version(o->py), o->py->machine);
	so.sdist = sdist;
	so.filename = o->sdist_filename;
	so.name = o->name;
	so.version = o->version;
	so.root = root;
	so.interpreter = o->py->interpreter;
	so.reqs = env;
	so.nreqs = o->nenv;
	so.markers = &menv;
	so.source_date_epoch = EB_SDIST_BUILD_EPOCH;
	so.workdir = work;
	if ((r = eb_sdist_build_requires(&so, reqs, n, err)) < 0)
		goto out;
	to_cache(o->bs, key, *reqs, *n);
	*status = EB_SDISTHOOK_ASKED;
out:
	if (r < 0) {
		reqs_free(*reqs, *n);
		*reqs = NULL;
		*n = 0;
	}
	if (work) {
		(void)eb_fs_remove_tree(work, NULL);
		free(work);
	}
	if (lock_fd >= 0)
		close(lock_fd);
	for (size_t i = 0; env && i < o->nenv; i++)
		free((char *)env[i].wheel);
	free(env);
	free(sdist);
	free(root);
	return r;
}
