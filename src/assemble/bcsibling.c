/*
 * bcsibling.c - the sibling interpreter for a foreign platform's bytecode:
 * what the foreign image's files say about its Python, the same base's
 * manifest for this machine's platform, and the comparison of the two
 * (bcsibling.h says what is compared, and why that much).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/bcsibling.h"
#include "assemble/build.h"
#include "envspec/spec.h"
#include "oci/basefile.h"
#include "oci/basefs.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

#define TEXT_MAX (32u << 20) /* dpkg's status file, a .pyc */

/* What the foreign image's files state about its interpreter. */
struct foreign {
	int minor;        /* X of python3.X */
	char magic[16];   /* "" when not stated */
	const char *magic_from;
	char version[32]; /* "3.11.2", "" when not stated */
	const char *version_from;
};

static int read_file(const struct eb_source_base *base, const char *path, struct eb_buf *b)
{
	eb_buf_truncate(b, 0);
	return eb_basefile_read(base->fs, base->layers, base->nlayers, path, TEXT_MAX, b, NULL) == 1;
}

/* `MAGIC_NUMBER = (3495).to_bytes(2, 'little') + b'\r\n'` -> "a70d0d0a" */
static int stated_magic(const char *text, char magic[16])
{
	const char *p = strstr(text, "\nMAGIC_NUMBER = (");
	unsigned long n;
	char *end;

	/* at a line's start: the module-level assignment */
	if (strncmp(text, "MAGIC_NUMBER = (", 16) == 0)
		p = text;
	else if (p)
		p++;
	else
		return 0;
	n = strtoul(p + 16, &end, 10);
	if (end == p + 16 || n > 0xffff || strncmp(end, ").to_bytes(2, 'little') + b'\\r\\n'", 33) != 0)
		return 0;
	snprintf(magic, 16, "%02lx%02lx0d0a", n & 0xff, n >> 8);
	return 1;
}

/* The first .pyc of this interpreter's tag under libdir: its magic. */
static int pyc_magic(const struct eb_source_base *base, const char *libdir, int minor,
		     char magic[16])
{
	const struct eb_basefs_node *first;
	size_t n = eb_basefs_under(base->fs, libdir, &first);
	char *suffix = eb_xasprintf(".cpython-3%d.pyc", minor);
	struct eb_buf b;
	int ok = 0;

	eb_buf_init(&b, TEXT_MAX);
	for (size_t i = 0; i < n && !ok; i++) {
		const char *p = first[i].path;
		size_t l = strlen(p), sl = strlen(suffix);
		const unsigned char *u;

		if (first[i].type != EB_BASEFS_FILE || l < sl || strcmp(p + l - sl, suffix) != 0 ||
		    !strstr(p, "/__pycache__/"))
			continue;
		if (!read_file(base, p, &b) || b.len < 16)
			break; /* one try: the others are the same packager's */
		u = (const unsigned char *)b.ptr;
		if (u[2] == 0x0d && u[3] == 0x0a) {
			snprintf(magic, 16, "%02x%02x%02x%02x", u[0], u[1], u[2], u[3]);
			ok = 1;
		}
		break;
	}
	eb_buf_release(&b);
	free(suffix);
	return ok;
}

/* "3.X.Y" at s, for minor X */
static int version_at(const char *s, int minor, char out[32])
{
	int maj, min, pat;

	if (sscanf(s, "%d.%d.%d", &maj, &min, &pat) != 3 || maj != 3 || min != minor || pat < 0)
		return 0;
	snprintf(out, 32, "3.%d.%d", min, pat);
	return 1;
}

static int dpkg_version(const char *text, int minor, char out[32])
{
	char *pkg = eb_xasprintf("Package: python3.%d-minimal\n", minor);
	const char *p = text;
	int ok = 0;

	while (!ok && (p = strstr(p, pkg)) != NULL) {
		const char *end = strstr(p, "\n\n"), *v = strstr(p, "\nVersion: ");

		if ((p == text || p[-1] == '\n') && v && (!end || v < end)) {
			const char *colon, *nl;

			v += 10;
			colon = strchr(v, ':');
			nl = strchr(v, '\n');
			if (colon && (!nl || colon < nl))
				v = colon + 1; /* an epoch */
			ok = version_at(v, minor, out);
		}
		p++;
	}
	free(pkg);
	return ok;
}

/* The foreign interpreter's X.Y, magic and patch level from its files;
 * 0 with *why when its files do not name a CPython 3. */
static int read_foreign(const struct eb_source_base *base, const char *interpreter,
			struct foreign *f, char **why)
{
	char *real = NULL, *prefix = NULL, *path = NULL, *libdir = NULL;
	const struct eb_basefs_node *n;
	const char *name, *slash;
	struct eb_buf b;
	int r;

	memset(f, 0, sizeof(*f));
	if (!base->fs)
		return *why = eb_xstrdup("its files were not read"), 0;
	if (eb_basefs_resolve(base->fs, interpreter, 1, &real, NULL) < 0)
		return *why = eb_xasprintf("its %s does not resolve in its tree", interpreter), 0;
	name = eb_path_basename(real);
	n = eb_basefs_lookup(base->fs, real);
	/* PREFIX/bin/python3.X */
	slash = strrchr(real, '/');
	if (!n || n->type != EB_BASEFS_FILE || sscanf(name, "python3.%d", &f->minor) != 1 ||
	    strcmp(name, (path = eb_xasprintf("python3.%d", f->minor))) != 0 || !slash ||
	    slash - real < 4 || strncmp(slash - 4, "/bin", 4) != 0) {
		*why = eb_xasprintf("its %s is not a python3.X file", interpreter);
		r = 0;
		goto done;
	}
	prefix = eb_xstrndup(real, (size_t)(slash - 4 - real));
	libdir = eb_xasprintf("%s/lib/python3.%d", prefix, f->minor);
	free(path);
	path = eb_xasprintf("%s/os.py", libdir);
	if (!eb_basefs_lookup(base->fs, path)) {
		*why = eb_xasprintf("it has no /%s/os.py next to its %s", libdir, interpreter);
		r = 0;
		goto done;
	}
	eb_buf_init(&b, TEXT_MAX);
	free(path);
	path = eb_xasprintf("%s/importlib/_bootstrap_external.py", libdir);
	if (read_file(base, path, &b) && stated_magic(b.ptr, f->magic))
		f->magic_from = "its importlib/_bootstrap_external.py";
	else if (pyc_magic(base, libdir, f->minor, f->magic))
		f->magic_from = "a .pyc of its standard library";
	free(path);
	path = eb_xasprintf("%s/include/python3.%d/patchlevel.h", prefix, f->minor);
	if (read_file(base, path, &b)) {
		const char *p = strstr(b.ptr, "#define PY_VERSION");
		if (p && (p = strchr(p, '"')) && version_at(p + 1, f->minor, f->version))
			f->version_from = "its patchlevel.h";
	}
	if (!f->version[0] && read_file(base, "var/lib/dpkg/status", &b) &&
	    dpkg_version(b.ptr, f->minor, f->version))
		f->version_from = "its dpkg status";
	eb_buf_release(&b);
	if (!f->magic[0] && !f->version[0]) {
		*why = eb_xasprintf("its files state neither the bytecode magic nor the patch level "
				    "of its python3.%d", f->minor);
		r = 0;
		goto done;
	}
	r = 1;
done:
	free(real);
	free(prefix);
	free(path);
	free(libdir);
	return r;
}

/* The base's manifest for platform `host` in the index the build read:
 * 1 with img filled (its layers in the blob store), 0 with *why, <0. */
static int read_sibling(const struct eb_source_ctx *c, const struct eb_spec_target *t,
			const struct eb_source_base *base, const char *host,
			struct eb_layout_image *img, char **why, struct eb_error **err)
{
	struct eb_platform plat = { 0 };
	char *dir = NULL, *ref = NULL;
	int r;

	if (!base->top) {
		*why = eb_xstrdup("the base's digest is not known");
		return 0;
	}
	if ((r = eb_platform_parse(&plat, host, err)) < 0)
		return r;
	if (eb_spec_oci_base(t->base.s, c->spec->dir, &dir, &ref)) {
		r = eb_layout_read(img, dir, ref, &plat, err);
		if (r == -EB_ENOTFOUND)
			goto none;
		if (r == 0 && strcmp(img->top.digest, base->top) != 0)
			r = eb_error_set(err, EB_EFAIL, "base '%s' of target '%s' changed during the build",
					 t->base.s, t->name);
		for (size_t i = 0; r == 0 && i < img->manifest.n_layers; i++)
			r = eb_layout_import_blob(c->bs, dir, &img->manifest.layers[i], err);
		if (r < 0) {
			eb_layout_image_release(img);
			memset(img, 0, sizeof(*img));
		}
	} else if (!c->o->registry) {
		*why = eb_xstrdup("this build has no registry access");
		r = 0;
		goto out;
	} else {
		struct eb_imageref ir;
		char *name, *pin;

		if ((r = eb_imageref_parse(&ir, t->base.s, err)) < 0)
			goto out;
		name = eb_imageref_name(&ir);
		eb_imageref_release(&ir);
		pin = eb_xasprintf("%s@%s", name, base->top);
		free(name);
		r = eb_registry_pull(c->o->registry, pin, &plat, c->bs, 1, img, err);
		free(pin);
		if (r == -EB_ENOTFOUND)
			goto none;
	}
	if (r < 0) {
		eb_error_wrap(err, "base '%s' of target '%s' for %s (to compile bytecode)", t->base.s,
			      t->name, host);
		goto out;
	}
	r = 1;
	goto out;
none:
	/* the index has no such platform (or the base is one image) */
	eb_error_clear(err);
	*why = eb_xasprintf("the base has no %s image", host);
	r = 0;
out:
	free(dir);
	free(ref);
	eb_platform_release(&plat);
	return r;
}

int eb_bcsibling_find(const struct eb_source_ctx *c, const struct eb_spec_target *t,
		      const char *platform, const struct eb_source_base *base,
		      const char *interpreter, const char *what, struct eb_bcsibling *out,
		      struct eb_error **err)
{
	const char *host = eb_bytecode_host_platform();
	struct eb_layout_image img = { 0 };
	struct eb_basefs *sfs = NULL;
	struct foreign f;
	char **paths = NULL;
	const char **diff_ids = NULL;
	char *why = NULL, *bcwhat = NULL, *real = NULL;
	size_t n = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if (!host) {
		out->why = eb_xstrdup("this machine's platform is not known");
		return 0;
	}
	if ((r = read_foreign(base, interpreter, &f, &why)) <= 0)
		goto done;
	if ((r = read_sibling(c, t, base, host, &img, &why, err)) <= 0)
		goto done;
	n = img.manifest.n_layers;
	paths = eb_xcalloc(n + 1, sizeof(*paths));
	diff_ids = eb_xcalloc(n + 1, sizeof(*diff_ids));
	for (size_t i = 0; i < n; i++) {
		paths[i] = eb_blobstore_path(c->bs, img.manifest.layers[i].digest);
		diff_ids[i] = i < img.config.n_diff_ids ? img.config.diff_ids[i] : NULL;
	}
	/* the same interpreter path in the sibling (a cached view) */
	if ((r = eb_basefs_load_verified(&sfs, c->bs, img.manifest.layers, diff_ids, n, err)) < 0)
		goto done;
	if (eb_basefs_resolve(sfs, interpreter, 1, &real, NULL) < 0 || !eb_basefs_lookup(sfs, real) ||
	    eb_basefs_lookup(sfs, real)->type != EB_BASEFS_FILE) {
		why = eb_xasprintf("its %s image has no %s", host, interpreter);
		r = 0;
		goto done;
	}
	bcwhat = eb_xasprintf("%s, by the base's %s python3.%d", what, host, f.minor);
	if ((r = eb_bytecode_new(&out->bc, c->bs, (const char *const *)paths, diff_ids, n,
				 interpreter, c->o->layer.epoch, bcwhat, c->diags, err)) < 0 ||
	    (r = eb_bytecode_ident(out->bc, &out->id, err)) < 0)
		goto done;
	{
		struct eb_buf fd = EB_BUF_INIT;
		char tag[32];

		snprintf(tag, sizeof(tag), "cpython-3%d", f.minor);
		/* what the foreign files state, as compared */
		eb_buf_puts(&fd, tag);
		if (f.magic[0])
			eb_buf_putf(&fd, ", magic %s (%s)", f.magic, f.magic_from);
		if (f.version[0])
			eb_buf_putf(&fd, ", %s (%s)", f.version, f.version_from);
		if (strcmp(out->id.tag, tag) != 0 || (f.magic[0] && strcmp(out->id.magic, f.magic) != 0) ||
		    (f.version[0] && strcmp(out->id.version, f.version) != 0)) {
			why = eb_xasprintf("its %s %s is %s %s (magic %s), the %s image's states %s",
					   host, interpreter, out->id.tag, out->id.version,
					   out->id.magic, platform, fd.ptr);
			eb_buf_release(&fd);
			r = 0;
			goto done;
		}
		out->compared = eb_buf_detach(&fd, NULL);
	}
	out->platform = eb_xstrdup(host);
	out->manifest = eb_xstrdup(img.manifest_desc.digest);
	r = 1;
done:
	if (r <= 0) {
		eb_bytecode_free(out->bc);
		out->bc = NULL;
	}
	if (r == 0)
		out->why = why ? why : eb_xstrdup("no sibling");
	else
		free(why);
	free(real);
	free(bcwhat);
	eb_basefs_free(sfs);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(diff_ids);
	eb_layout_image_release(&img);
	return r;
}

void eb_bcsibling_release(struct eb_bcsibling *s)
{
	eb_bytecode_free(s->bc);
	free(s->platform);
	free(s->manifest);
	free(s->compared);
	free(s->why);
	memset(s, 0, sizeof(*s));
}
