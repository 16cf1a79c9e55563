/*
 * lock.c - the lockfile: canonical JSON on disk, checksum of the inputs,
 * freshness, and recording builds and pushes.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lock/lock.h"
#include "ref/imageref.h"
#include "pin/reqfile.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"

#define LOCK_MAX_BYTES (64u << 20)

char *eb_lock_path(const struct eb_spec *spec)
{
	const char *base = eb_path_basename(spec->path);
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot != base &&
				      (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 ||
				       strcmp(dot, ".json") == 0)
			      ? (size_t)(dot - base)
			      : strlen(base);
	char *name = eb_xasprintf("%.*s.lock", (int)stem, base);
	char *path = eb_spec_resolve(spec, name);

	free(name);
	return path;
}

json_t *eb_lock_new(const struct eb_spec *spec)
{
	return json_pack("{s:i, s:{s:s, s:s}, s:{}}", "lockVersion", EB_LOCK_VERSION, "spec", "path",
			 eb_path_basename(spec->path), "sha256", "", "targets");
}

int eb_lock_load(json_t **out, const char *path, struct eb_error **err)
{
	struct eb_buf b;
	json_error_t je;
	json_t *j;
	int r;

	eb_buf_init(&b, LOCK_MAX_BYTES);
	r = eb_fs_read_file(&b, path, LOCK_MAX_BYTES, err);
	if (r < 0) {
		eb_buf_release(&b);
		return r;
	}
	j = json_loadb(b.ptr, b.len, JSON_REJECT_DUPLICATES, &je);
	eb_buf_release(&b);
	if (!j)
		return eb_error_set_at(err, EB_EINVALID, path, (unsigned)je.line, (unsigned)je.column,
				       "the lockfile is not valid JSON: %s", je.text);
	if (!json_is_object(j) || json_integer_value(json_object_get(j, "lockVersion")) != EB_LOCK_VERSION ||
	    !json_is_object(json_object_get(j, "targets"))) {
		json_decref(j);
		r = eb_error_set(err, EB_EINVALID, "'%s' is not an envbuild lockfile of version %d", path,
				 EB_LOCK_VERSION);
		eb_error_hint(err, "regenerate it with 'envbuild lock'");
		return r;
	}
	*out = j;
	return 0;
}

char *eb_lock_dump(const json_t *lock)
{
	char *s = json_dumps(lock, JSON_INDENT(2) | JSON_SORT_KEYS);
	char *out = eb_xasprintf("%s\n", s ? s : "{}");
	free(s);
	return out;
}

int eb_lock_write(const char *path, const json_t *lock, struct eb_error **err)
{
	char *s = eb_lock_dump(lock);
	int r = eb_fs_write_atomic(path, s, strlen(s), 0644, err);
	free(s);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A path as the lock names it: relative to the spec's directory. */
static const char *spec_relative(const struct eb_spec *spec, const char *p)
{
	size_t ld = strlen(spec->dir);

	if (strcmp(spec->dir, ".") != 0 && strncmp(p, spec->dir, ld) == 0 && p[ld] == '/')
		return p + ld + 1;
	return p;
}

static void hash_file(struct eb_sha256 *h, const char *name, const struct eb_buf *b)
{
	eb_sha256_update(h, name, strlen(name) + 1); /* with its NUL */
	for (size_t i = 0; i < b->len; i++) {
		/* CRLF -> LF, so checkouts with either line ending lock alike */
		if (b->ptr[i] == '\r' && i + 1 < b->len && b->ptr[i + 1] == '\n')
			continue;
		eb_sha256_update(h, &b->ptr[i], 1);
	}
	eb_sha256_update(h, "", 1);
}

char **eb_lock_inputs(const struct eb_spec *spec, size_t *nout)
{
	char **files = NULL;
	size_t n = 0, cap = 0, u = 1;

	EB_ALLOC_GROW(files, n + 1, cap);
	files[n++] = eb_xstrdup(spec->path);
	for (size_t i = 0; i < spec->ntargets; i++)
		for (size_t k = 0; k < spec->targets[i].requirements.n; k++) {
			struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
			struct eb_reqfile *rf = NULL;
			char *p = eb_spec_resolve(spec, spec->targets[i].requirements.v[k].s);
			struct eb_error *lerr = NULL;
			if (eb_reqfile_load_in(&rf, p, spec->dir, spec->requirements_env_names,
					       spec->requirements_env.n, 1, &ignore, &lerr) == 0) {
				for (size_t f = 0; f < eb_reqfile_nfiles(rf); f++) {
					EB_ALLOC_GROW(files, n + 1, cap);
					files[n++] = eb_xstrdup(eb_reqfile_file(rf, f));
				}
				eb_reqfile_free(rf);
			} else {
				/* a missing file still counts: its absence is an input */
				eb_error_free(lerr);
				EB_ALLOC_GROW(files, n + 1, cap);
				files[n++] = eb_xstrdup(p);
			}
			eb_diag_list_release(&ignore);
			free(p);
		}
	/* the keyrings that sign the apt sources: a new key is a new input */
	for (size_t i = 0; i < spec->ntargets; i++)
		for (size_t k = 0; k < spec->targets[i].apt_sources.n; k++) {
			const char *kr = spec->targets[i].apt_sources.v[k].signed_by.s;
			if (!kr || !spec->targets[i].apt.n)
				continue;
			EB_ALLOC_GROW(files, n + 1, cap);
			files[n++] = eb_spec_resolve(spec, kr);
		}
	eb_sort(files + 1, n - 1, sizeof(*files), cmp_str);
	for (size_t i = 1; i < n; i++) {
		if (u > 1 && strcmp(files[i], files[u - 1]) == 0)
			free(files[i]);
		else
			files[u++] = files[i];
	}
	EB_ALLOC_GROW(files, u + 1, cap);
	files[u] = NULL;
	*nout = u;
	return files;
}

int eb_lock_checksum(char out[65], const struct eb_spec *spec, struct eb_error **err)
{
	size_t n = 0;
	char **files = eb_lock_inputs(spec, &n);
	struct eb_sha256 h;
	char dg[EB_DIGEST_STR_LEN + 1];
	int r = 0;

	eb_sha256_init(&h);
	for (size_t i = 0; i < n; i++) {
		struct eb_buf b;
		eb_buf_init(&b, LOCK_MAX_BYTES);
		/* the spec as it was parsed; the requirements files from disk,
		 * confined as everywhere: a path leading out of the project (or
		 * a fifo) counts by its name only; check says why (EB009) */
		r = i == 0 ? eb_buf_add(&b, spec->text, spec->text_len)
			   : eb_fs_read_confined(&b, files[i], spec->dir, LOCK_MAX_BYTES, err);
		if (i == 0 && r < 0)
			r = eb_error_set(err, EB_ETOOBIG, "'%s' is too large", files[0]);
		if ((r == -EB_ENOTFOUND || r == -EB_EINVALID) && i > 0) {
			eb_error_clear(err);
			r = 0;
		}
		if (r < 0) {
			eb_buf_release(&b);
			eb_sha256_abort(&h);
			goto done;
		}
		hash_file(&h, spec_relative(spec, files[i]), &b);
		eb_buf_release(&b);
	}
	eb_sha256_final(&h, dg);
	memcpy(out, eb_digest_hex(dg), 64);
	out[64] = '\0';
done:
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return r;
}

/* What changed, in words: bases whose reference changed, pins whose
 * version differs from the lock, pins added and removed.  NULL when none
 * of those (another edit of the spec).  Pins with markers that are not in
 * the lock are skipped: their marker may be false for the target. */
static char *explain(const json_t *lock, const struct eb_spec *spec)
{
	json_t *targets = json_object_get(lock, "targets");
	struct eb_buf b;
	int n = 0;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		json_t *jt = json_object_get(targets, t->name);
		json_t *pk = json_object_get(jt, "packages");
		json_t *arr = NULL;
		const char *lref = json_string_value(json_object_get(json_object_get(jt, "base"), "ref"));
		const char *k;
		json_t *v;
		size_t idx;

		if (!jt)
			continue; /* reported by the caller as "not in the lock" */
		if (lref) {
			struct eb_imageref ref;
			char *full = NULL;
			if (strncmp(t->base.s, "oci:", 4) != 0 && eb_imageref_parse(&ref, t->base.s, NULL) == 0) {
				full = eb_imageref_to_string(&ref);
				eb_imageref_release(&ref);
			} else {
				full = eb_xstrdup(t->base.s);
			}
			if (strcmp(full, lref) != 0)
				eb_buf_putf(&b, "%sbase of '%s' changed from %s to %s", n++ ? "; " : "",
						  t->name, lref, full);
			free(full);
		}
		json_object_foreach(pk, k, v) {
			arr = v; /* pins are the same on every platform but markers */
			break;
		}
		/* the pins as written now (names kept to find removed ones) */
		char **names = NULL;
		size_t nnames = 0, capnames = 0;
		for (size_t q = 0; q < t->packages.n; q++) {
			struct eb_requirement rq;
			if (eb_requirement_parse(&rq, t->packages.v[q].s, strlen(t->packages.v[q].s), NULL) == 0) {
				if (rq.norm_name) {
					EB_ALLOC_GROW(names, nnames + 1, capnames);
					names[nnames++] = eb_xstrdup(rq.norm_name);
				}
				eb_requirement_release(&rq);
			}
		}
		for (size_t q = 0; q < t->requirements.n; q++) {
			struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
			struct eb_reqfile *rf = NULL;
			char *p = eb_spec_resolve(spec, t->requirements.v[q].s);
			if (eb_reqfile_load_in(&rf, p, spec->dir, spec->requirements_env_names,
					       spec->requirements_env.n, 1, &ignore, NULL) == 0) {
				for (size_t e = 0; e < eb_reqfile_count(rf); e++) {
					const struct eb_reqfile_entry *en = eb_reqfile_get(rf, e);
					const char *ver = eb_requirement_pinned_version(&en->req);
					const char *lver = NULL;
					if (en->constraint || !en->req.norm_name || !ver)
						continue;
					EB_ALLOC_GROW(names, nnames + 1, capnames);
					names[nnames++] = eb_xstrdup(en->req.norm_name);
					json_array_foreach(arr, idx, v) {
						const char *nm = json_string_value(json_object_get(v, "name"));
						if (nm && strcmp(nm, en->req.norm_name) == 0)
							lver = json_string_value(json_object_get(v, "version"));
					}
					if (lver && strcmp(lver, ver) != 0)
						eb_buf_putf(&b, "%s%s is pinned to %s at %s:%u, the lock has %s",
								  n++ ? "; " : "", en->req.name, ver, en->file,
								  en->line, lver);
					else if (!lver && !en->req.marker && arr)
						eb_buf_putf(&b, "%s%s==%s (%s:%u) is not in the lock",
								  n++ ? "; " : "", en->req.name, ver, en->file,
								  en->line);
				}
				eb_reqfile_free(rf);
			}
			eb_diag_list_release(&ignore);
			free(p);
		}
		json_array_foreach(arr, idx, v) {
			const char *nm = json_string_value(json_object_get(v, "name"));
			int still = 0;
			for (size_t q = 0; nm && q < nnames; q++)
				still |= strcmp(names[q], nm) == 0;
			const char *su = json_string_value(
				json_object_get(json_object_get(v, "sdist"), "url"));
			if (su && strcmp(su, ".") == 0)
				still = 1; /* the project itself ("./"), named by its pyproject */
			if (nm && !still)
				eb_buf_putf(&b, "%s%s is in the lock but no longer pinned for '%s'",
						  n++ ? "; " : "", nm, t->name);
		}
		for (size_t q = 0; q < nnames; q++)
			free(names[q]);
		free(names);
	}
	if (!n) {
		eb_buf_release(&b);
		return NULL;
	}
	return eb_buf_detach(&b, NULL);
}

int eb_lock_fresh(const json_t *lock, const struct eb_spec *spec, const char *checksum,
		  char **why)
{
	const char *have = json_string_value(json_object_get(json_object_get(lock, "spec"), "sha256"));
	json_t *targets = json_object_get(lock, "targets");

	*why = NULL;
	if (!have || strcmp(have, checksum) != 0) {
		char *what = explain(lock, spec);
		*why = what ? what
			    : eb_xasprintf("'%s' or a requirements file it names changed since the lock was written",
					   spec->path);
		return 0;
	}
	for (size_t i = 0; i < spec->ntargets; i++)
		if (!json_object_get(targets, spec->targets[i].name)) {
			*why = eb_xasprintf("target '%s' is not in the lock", spec->targets[i].name);
			return 0;
		}
	return 1;
}

static json_t *obj(json_t *parent, const char *key)
{
	json_t *o = json_object_get(parent, key);
	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(parent, key, o);
	}
	return o;
}

json_t *eb_lock_target(json_t *lock, const char *target)
{
	return obj(obj(lock, "targets"), target);
}

void eb_lock_set_spec(json_t *lock, const struct eb_spec *spec, const char *checksum)
{
	json_t *targets = obj(lock, "targets");
	const char *k;
	json_t *v;
	void *tmp;

	json_object_set_new(lock, "lockVersion", json_integer(EB_LOCK_VERSION));
	json_object_set_new(lock, "spec", json_pack("{s:s, s:s}", "path", eb_path_basename(spec->path),
						    "sha256", checksum));
	/* targets no longer in the spec go away */
	json_object_foreach_safe(targets, tmp, k, v) {
		if (!eb_spec_target(spec, k))
			json_object_del(targets, k);
	}
}

void eb_lock_record_push(json_t *lock, const char *target, const char *ref, const char *digest,
			 const char *revision)
{
	json_t *img = obj(obj(obj(lock, "targets"), target), "image");
	json_t *pushed = json_object_get(img, "pushed");
	json_t *entry = json_pack("{s:s, s:s}", "ref", ref, "digest", digest);
	size_t i;
	json_t *v;

	if (revision)
		json_object_set_new(entry, "revision", json_string(revision));
	if (!json_is_array(pushed)) {
		pushed = json_array();
		json_object_set_new(img, "pushed", pushed);
	}
	json_array_foreach(pushed, i, v) {
		const char *r = json_string_value(json_object_get(v, "ref"));
		if (r && strcmp(r, ref) == 0) {
			json_array_set_new(pushed, i, entry);
			return;
		}
	}
	json_array_append_new(pushed, entry);
}

const char *eb_lock_base_digest(const json_t *lock, const char *target)
{
	json_t *t = json_object_get(json_object_get(lock, "targets"), target);
	return json_string_value(json_object_get(json_object_get(t, "base"), "digest"));
}

const char *eb_lock_base_for(const json_t *lock, const char *target, const char *ref)
{
	json_t *t = json_object_get(json_object_get(lock, "targets"), target);
	const char *r = json_string_value(json_object_get(json_object_get(t, "base"), "ref"));
	if (!r || !ref || strcmp(r, ref) != 0)
		return NULL;
	return eb_lock_base_digest(lock, target);
}

int eb_lock_package(const json_t *lock, const char *target, const char *platform,
		    const char *name, const char *version, const char **sha256, const char **url,
		    const char **filename)
{
	json_t *t = json_object_get(json_object_get(lock, "targets"), target);
	json_t *arr = json_object_get(json_object_get(t, "packages"), platform);
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));
		const char *ver = json_string_value(json_object_get(v, "version"));
		if (n && strcmp(n, name) == 0 && ver && strcmp(ver, version) == 0) {
			*sha256 = json_string_value(json_object_get(v, "sha256"));
			*url = json_string_value(json_object_get(v, "url"));
			*filename = json_string_value(json_object_get(v, "filename"));
			return *sha256 && *url && *filename;
		}
	}
	return 0;
}

int eb_lock_package_sdist(const json_t *lock, const char *target, const char *platform,
			  const char *name, const char *version, const char **sha256,
			  const char **url, const char **filename)
{
	json_t *t = json_object_get(json_object_get(lock, "targets"), target);
	json_t *arr = json_object_get(json_object_get(t, "packages"), platform);
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));
		const char *ver = json_string_value(json_object_get(v, "version"));
		json_t *sd = json_object_get(v, "sdist");
		if (n && strcmp(n, name) == 0 && ver && strcmp(ver, version) == 0 && sd) {
			*sha256 = json_string_value(json_object_get(sd, "sha256"));
			*url = json_string_value(json_object_get(sd, "url"));
			*filename = json_string_value(json_object_get(sd, "filename"));
			return *sha256 && *url && *filename;
		}
	}
	return 0;
}
