/*
 * import_apt.c - the apt_sources of an imported target: what its RUN
 * apt-get would have used, the base image's own /etc/apt/sources.list,
 * sources.list.d (*.list, and *.sources in deb822), and the keyring each
 * names (Signed-By), else the archive keyring the base trusts.  The
 * keyrings are copied into the project (keys/NAME) so that the spec is
 * self-contained.  The base is read from its file-tree view
 * (oci/basefs.h, oci/basefile.h); a base import cannot read is a note,
 * and `envbuild check` then reports EB232 as it would.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "envspec/spec.h"
#include "oci/basefile.h"
#include "oci/basefs.h"
#include "oci/layout.h"
#include "stage/import_internal.h"
#include "util/alloc.h"
#include "ref/imageref.h"

#define APT_FILE_MAX (1u << 20)
#define APT_MAX_SOURCES 64

struct base_view {
	struct eb_basefs *fs;
	char **layers;
	size_t n;
};

static void view_release(struct base_view *v)
{
	eb_basefs_free(v->fs);
	for (size_t i = 0; i < v->n; i++)
		free(v->layers[i]);
	free(v->layers);
	memset(v, 0, sizeof(*v));
}

/* the keyring at path in the base (followed through symlinks) copied to
 * the target's list of keys; returns the project-relative name or NULL */
static const char *keyring(struct eb_imp_target *t, const struct base_view *v, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct eb_buf b;
	char *name;

	if (!*base)
		return NULL;
	name = eb_xasprintf("keys/%s", base);
	for (size_t i = 0; i < t->naptkeys; i++)
		if (strcmp(t->aptkeys[i].name, name) == 0) {
			free(name);
			return t->aptkeys[i].name;
		}
	eb_buf_init(&b, APT_FILE_MAX);
	if (eb_basefile_read(v->fs, (const char *const *)v->layers, v->n, path, APT_FILE_MAX, &b,
			     NULL) != 1 || b.len == 0) {
		eb_buf_release(&b);
		free(name);
		return NULL;
	}
	t->aptkeys = eb_xreallocarray(t->aptkeys, t->naptkeys + 1, sizeof(*t->aptkeys));
	t->aptkeys[t->naptkeys].name = name;
	t->aptkeys[t->naptkeys].data = b;
	return t->aptkeys[t->naptkeys++].name;
}

/* what apt trusts without a Signed-By: the archive keyring of the
 * distribution, else the first keyring of trusted.gpg.d */
static const char *default_keyring(struct eb_imp_target *t, const struct base_view *v)
{
	static const char *const known[] = { "usr/share/keyrings/debian-archive-keyring.gpg",
					     "usr/share/keyrings/ubuntu-archive-keyring.gpg", NULL };
	const struct eb_basefs_node *first;
	size_t n;

	for (const char *const *k = known; *k; k++) {
		const char *r = keyring(t, v, *k);
		if (r)
			return r;
	}
	n = eb_basefs_under(v->fs, "etc/apt/trusted.gpg.d", &first);
	for (size_t i = 0; i < n; i++) {
		const char *p = first[i].path;
		size_t l = strlen(p);
		if (l > 4 && (strcmp(p + l - 4, ".gpg") == 0 || strcmp(p + l - 4, ".asc") == 0)) {
			const char *r = keyring(t, v, p);
			if (r)
				return r;
		}
	}
	return NULL;
}

static void add_source(struct eb_imp_target *t, const struct base_view *v, const char *url,
		       const char *suite, const char *comps, const char *signed_by)
{
	struct eb_imp_aptsrc *s;
	const char *key;

	if (t->naptsrc >= APT_MAX_SOURCES || !*comps || strchr(suite, '/'))
		return; /* flat repositories ("./") have no components */
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return;
	for (size_t i = 0; i < t->naptsrc; i++)
		if (strcmp(t->aptsrc[i].url, url) == 0 && strcmp(t->aptsrc[i].suite, suite) == 0)
			return;
	key = signed_by && *signed_by == '/' ? keyring(t, v, signed_by + 1) : default_keyring(t, v);
	t->aptsrc = eb_xreallocarray(t->aptsrc, t->naptsrc + 1, sizeof(*t->aptsrc));
	s = &t->aptsrc[t->naptsrc++];
	s->url = eb_xstrdup(url);
	s->suite = eb_xstrdup(suite);
	s->components = eb_xstrdup(comps);
	s->signed_by = key ? eb_xstrdup(key) : NULL;
}

/* "deb [opt=v ...] URL SUITE COMP..." lines */
static void one_line(struct eb_imp_target *t, const struct base_view *v, char *text)
{
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *w[64], *signed_by = NULL, *p = l, *h = strchr(l, '#');
		size_t n = 0, at = 1;
		struct eb_buf comps = EB_BUF_INIT;

		if (h)
			*h = '\0';
		while (n < 64) {
			while (isspace((unsigned char)*p))
				p++;
			if (!*p)
				break;
			if (*p == '[' && n == 1) {
				char *e = strchr(p, ']');
				if (!e)
					break;
				*e = '\0';
				for (char *o = strtok(p + 1, " \t"); o; o = strtok(NULL, " \t"))
					if (strncmp(o, "signed-by=", 10) == 0)
						signed_by = o + 10;
				p = e + 1;
				continue;
			}
			w[n++] = p;
			while (*p && !isspace((unsigned char)*p))
				p++;
			if (*p)
				*p++ = '\0';
		}
		if (n < 4 || strcmp(w[0], "deb") != 0)
			continue;
		for (size_t i = 3; i < n; i++)
			eb_buf_putf(&comps, "%s%s", i > 3 ? " " : "", w[i]);
		add_source(t, v, w[at], w[at + 1], comps.ptr, signed_by);
		eb_buf_release(&comps);
	}
}

/* the value of a deb822 field in a stanza, NULL when absent (a folded
 * multi-line value, an inline key, reads as its first line) */
static char *field(const char *st, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < len; i++) {
		if ((i == 0 || st[i - 1] == '\n') && len - i > nl && strncasecmp(st + i, name, nl) == 0 &&
		    st[i + nl] == ':') {
			const char *s = st + i + nl + 1, *e;
			while (*s == ' ' || *s == '\t')
				s++;
			e = s;
			while (e < st + len && *e != '\n')
				e++;
			while (e > s && isspace((unsigned char)e[-1]))
				e--;
			return eb_xstrndup(s, (size_t)(e - s));
		}
	}
	return NULL;
}

static void deb822(struct eb_imp_target *t, const struct base_view *v, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *e = strstr(p, "\n\n");
		size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
		char *types = field(p, len, "Types"), *uris = field(p, len, "URIs");
		char *suites = field(p, len, "Suites"), *comps = field(p, len, "Components");
		char *key = field(p, len, "Signed-By"), *en = field(p, len, "Enabled");

		if (types && uris && suites && comps && strstr(types, "deb") &&
		    (!strstr(types, "deb-src") || strstr(types, "deb ") || !strcmp(types, "deb")) &&
		    !(en && strcasecmp(en, "no") == 0)) {
			char *s1 = NULL, *s2 = NULL;
			char *uc = eb_xstrdup(uris);
			for (char *u = strtok_r(uc, " \t", &s1); u; u = strtok_r(NULL, " \t", &s1)) {
				char *sc = eb_xstrdup(suites);
				for (char *s = strtok_r(sc, " \t", &s2); s; s = strtok_r(NULL, " \t", &s2))
					add_source(t, v, u, s, comps, key && *key == '/' ? key : NULL);
				free(sc);
			}
			free(uc);
		}
		free(types);
		free(uris);
		free(suites);
		free(comps);
		free(key);
		free(en);
		if (!e)
			break;
		p = e + 2;
	}
}

static int read_view(struct base_view *v, const char *base, const char *dir_of_spec,
		     struct eb_error **err)
{
	struct eb_layout_image img = { 0 };
	char *dir = NULL, *ref = NULL;
	int r;

	if (!eb_spec_oci_base(base, dir_of_spec, &dir, &ref))
		return 0;
	r = eb_layout_read(&img, dir, ref, NULL, err);
	if (r == 0) {
		v->fs = eb_basefs_new();
		v->layers = eb_xcalloc(img.manifest.n_layers + 1, sizeof(*v->layers));
	}
	for (size_t i = 0; r == 0 && i < img.manifest.n_layers; i++) {
		v->layers[i] = eb_layout_blob_path(dir, img.manifest.layers[i].digest);
		v->n = i + 1;
		r = v->layers[i] ? eb_basefs_add_layer(v->fs, v->layers[i], err)
				 : eb_error_set(err, EB_EINVALID, "a layer with a bad digest");
	}
	eb_layout_image_release(&img);
	free(dir);
	free(ref);
	return r < 0 ? r : 1;
}

int eb_imp_apt_sources(struct eb_imp_ctx *c, struct eb_imp_target *t, char **why)
{
	struct base_view v = { 0 };
	struct eb_error *e = NULL;
	const struct eb_basefs_node *first;
	size_t n;
	int r;

	*why = NULL;
	if (!t->apt.n || !t->base || eb_imageref_is_scratch(t->base))
		return 0;
	r = read_view(&v, t->base, c->context, &e);
	if (r <= 0) {
		*why = r == 0 ? eb_xstrdup("import reads the sources of an oci: layout base only")
			      : eb_xstrdup(e && e->msg ? e->msg : "the base could not be read");
		eb_error_free(e);
		view_release(&v);
		return -1;
	}
	{
		struct eb_buf b;
		eb_buf_init(&b, APT_FILE_MAX);
		if (eb_basefile_read(v.fs, (const char *const *)v.layers, v.n, "etc/apt/sources.list",
				     APT_FILE_MAX, &b, NULL) == 1 && b.len)
			one_line(t, &v, b.ptr);
		eb_buf_release(&b);
	}
	n = eb_basefs_under(v.fs, "etc/apt/sources.list.d", &first);
	for (size_t i = 0; i < n; i++) {
		const char *p = first[i].path;
		size_t l = strlen(p);
		int list = l > 5 && strcmp(p + l - 5, ".list") == 0;
		int src = l > 8 && strcmp(p + l - 8, ".sources") == 0;
		struct eb_buf b;
		if (!list && !src)
			continue;
		eb_buf_init(&b, APT_FILE_MAX);
		if (eb_basefile_read(v.fs, (const char *const *)v.layers, v.n, p, APT_FILE_MAX, &b,
				     NULL) == 1 && b.len) {
			if (list)
				one_line(t, &v, b.ptr);
			else
				deb822(t, &v, b.ptr);
		}
		eb_buf_release(&b);
	}
	view_release(&v);
	if (!t->naptsrc) {
		*why = eb_xstrdup("the base has no deb line in /etc/apt/sources.list*");
		return -1;
	}
	return 0;
}
