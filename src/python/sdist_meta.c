/*
 * sdist_meta.c - an sdist's dependencies and build requirements as its
 * files state them, for `envbuild pin` (python/sdist.h).  Nothing is run
 * here: a project whose dependencies only a build can tell is reported so;
 * what the backend adds to [build-system] requires is asked by pin
 * (assemble/sdisthook.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "python/metadata.h"
#include "python/sdist.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/fs_remove.h"
#include "util/toml.h"

static void strv_add(char ***v, size_t *n, const char *s)
{
	*v = eb_xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = eb_xstrdup(s);
}

void eb_sdist_meta_release(struct eb_sdist_meta *m)
{
	for (size_t i = 0; i < m->ndeps; i++)
		free(m->deps[i]);
	free(m->deps);
	for (size_t i = 0; i < m->nbuild_requires; i++)
		free(m->build_requires[i]);
	free(m->build_requires);
	memset(m, 0, sizeof(*m));
}

/* 1 when the header part of PKG-INFO has "Dynamic: Requires-Dist". */
static int dynamic_requires(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (l == 0 || (l == 1 && p[0] == '\r'))
			break; /* the body starts */
		if (l >= 8 && strncasecmp(p, "Dynamic:", 8) == 0) {
			const char *v = p + 8;
			size_t vl = l - 8;
			while (vl && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
				vl--;
			if (vl == 13 && strncasecmp(v, "Requires-Dist", 13) == 0)
				return 1;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static int read_pkg_info(const char *src, struct eb_sdist_meta *out, struct eb_error **err)
{
	char *path = eb_path_join(src, "PKG-INFO");
	struct eb_buf b = EB_BUF_INIT;
	struct eb_metadata md = { 0 };
	int r = 0;

	if (access(path, F_OK) != 0)
		goto out;
	if ((r = eb_fs_read_confined(&b, path, src, 1 << 20, err)) < 0 ||
	    (r = eb_metadata_parse(&md, b.ptr, b.len, err)) < 0) {
		eb_error_wrap(err, "PKG-INFO");
		goto out;
	}
	if ((md.mv_major > 2 || (md.mv_major == 2 && md.mv_minor >= 2)) &&
	    !dynamic_requires(b.ptr, b.len)) {
		out->deps_known = 1;
		for (size_t i = 0; i < md.nrequires_dist; i++)
			strv_add(&out->deps, &out->ndeps, md.requires_dist[i].text);
	}
	eb_metadata_release(&md);
out:
	eb_buf_release(&b);
	free(path);
	return r;
}

static int read_pyproject(const char *src, struct eb_sdist_meta *out, struct eb_error **err)
{
	char *path = eb_path_join(src, "pyproject.toml");
	struct eb_buf b = EB_BUF_INIT;
	struct eb_toml_doc *doc = NULL;
	json_t *bsys, *proj, *v;
	int r = 0, dyn = 0;

	if (access(path, F_OK) != 0)
		goto fallback;
	if ((r = eb_fs_read_confined(&b, path, src, 1 << 20, err)) < 0 ||
	    (r = eb_toml_load(&doc, "pyproject.toml", b.ptr, b.len, err)) < 0)
		goto out;
	proj = json_object_get(eb_toml_root(doc), "project");
	v = json_object_get(proj, "dynamic");
	for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
		dyn |= json_is_string(json_array_get(v, i)) &&
		       strcmp(json_string_value(json_array_get(v, i)), "dependencies") == 0;
	if (!out->deps_known && json_is_object(proj) && !dyn) {
		out->deps_known = 1;
		v = json_object_get(proj, "dependencies");
		for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
			if (json_is_string(json_array_get(v, i)))
				strv_add(&out->deps, &out->ndeps,
					 json_string_value(json_array_get(v, i)));
	}
	bsys = json_object_get(eb_toml_root(doc), "build-system");
	if (!json_is_object(bsys))
		goto fallback;
	v = json_object_get(bsys, "requires");
	for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
		if (json_is_string(json_array_get(v, i)))
			strv_add(&out->build_requires, &out->nbuild_requires,
				 json_string_value(json_array_get(v, i)));
	goto out;
fallback:
	/* pip's (since pip 24; "wheel" before, which setuptools' backend
	 * asks for itself where it needs it, in get_requires_for_build_wheel,
	 * and `envbuild pin` asks the backend): setup.py with setuptools'
	 * legacy backend */
	strv_add(&out->build_requires, &out->nbuild_requires, "setuptools>=40.8.0");
out:
	eb_toml_free(doc);
	eb_buf_release(&b);
	free(path);
	return r;
}

int eb_sdist_read_meta(const char *path, const char *tmp_parent, struct eb_sdist_meta *out,
		       struct eb_error **err)
{
	char *tmpl = eb_path_join(tmp_parent, "sdist-meta.XXXXXX");
	char *src = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (!mkdtemp(tmpl)) {
		r = eb_error_set(err, EB_EIO, "%s: %s", tmpl, strerror(errno));
		free(tmpl);
		return r;
	}
	src = eb_path_join(tmpl, "src");
	if ((r = eb_sdist_unpack(path, src, NULL, err)) == 0 &&
	    (r = read_pkg_info(src, out, err)) == 0)
		r = read_pyproject(src, out, err);
	(void)eb_fs_remove_tree(tmpl, NULL);
	free(src);
	free(tmpl);
	if (r < 0)
		eb_sdist_meta_release(out);
	return r;
}
