/*
 * target.c - detect the Python target (interpreter, scheme paths, C
 * library) by reading the base image's layers, never by running them.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/basefs.h"
#include "oci/cache.h"
#include "oci/layerin.h"
#include "pin/requirement.h"
#include "python/target.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"

/* What we keep per interesting path of the merged filesystem. */
struct seen {
	char *path;    /* normalised: no "./", no trailing '/' */
	int gmajor, gminor; /* glibc version found in it, or 0 */
};

/* A *.dist-info directory of a site directory, as the layers so far
 * leave it. */
struct bdist {
	char *dir;  /* relative: "usr/local/lib/python3.11/site-packages/foo-1.0.dist-info" */
	int minor;  /* of the python3.X in its site directory; -1: Debian's python3 */
	char **files;
	size_t nfiles;
};

struct scan {
	struct seen *v;
	size_t n, cap;
	struct bdist *d;
	size_t nd, capd;
	/* "3.X.Y" per minor X, from the newest layer that says so: the
	 * python:* images' patchlevel.h, or dpkg's record of python3.X-minimal */
	char *full[100];
	/* where full[X] came from (layer << 32 | entry), when the entries
	 * are read out of order (eb_pytarget_detect_fs) */
	uint64_t full_at[100];
	uint64_t at; /* the position of the entry being read */
};

static void seen_remove_prefix(struct scan *s, const char *path, int subtree_only)
{
	size_t len = strlen(path), w = 0;

	for (size_t i = 0; i < s->n; i++) {
		const char *p = s->v[i].path;
		int under = strncmp(p, path, len) == 0 && p[len] == '/';
		int same = !subtree_only && strcmp(p, path) == 0;
		if (under || same) {
			free(s->v[i].path);
			continue;
		}
		s->v[w++] = s->v[i];
	}
	s->n = w;
}

static void bdist_files_free(struct bdist *b)
{
	for (size_t i = 0; i < b->nfiles; i++)
		free(b->files[i]);
	free(b->files);
	b->files = NULL;
	b->nfiles = 0;
}

/* A whiteout of path (or, subtree_only, an opaque directory at path):
 * dist-info directories under it are gone; one whose RECORD (or all of
 * whose contents) went keeps no file list. */
static void bdist_remove_prefix(struct scan *s, const char *path, int subtree_only)
{
	size_t len = strlen(path), w = 0;

	for (size_t i = 0; i < s->nd; i++) {
		struct bdist *b = &s->d[i];
		size_t dl = strlen(b->dir);
		int under = strncmp(b->dir, path, len) == 0 && b->dir[len] == '/';
		int same = strcmp(b->dir, path) == 0;
		if (under || (same && !subtree_only)) {
			bdist_files_free(b);
			free(b->dir);
			continue;
		}
		if ((same && subtree_only) ||
		    (len == dl + 7 && strncmp(path, b->dir, dl) == 0 && strcmp(path + dl, "/RECORD") == 0))
			bdist_files_free(b);
		s->d[w++] = *b;
	}
	s->nd = w;
}

static struct bdist *bdist_put(struct scan *s, const char *dir, int minor)
{
	for (size_t i = 0; i < s->nd; i++)
		if (strcmp(s->d[i].dir, dir) == 0)
			return &s->d[i];
	EB_ALLOC_GROW(s->d, s->nd + 1, s->capd);
	memset(&s->d[s->nd], 0, sizeof(s->d[s->nd]));
	s->d[s->nd].dir = eb_xstrdup(dir);
	s->d[s->nd].minor = minor;
	return &s->d[s->nd++];
}

static char *read_text(struct archive *a, size_t max);

/* Length of the site directory p starts with (followed by '/'), or 0;
 * *minor is its python3.X (-1 for usr/lib/python3/dist-packages). */
static size_t site_prefix(const char *p, int *minor)
{
	static const char *const roots[] = { "usr/local/lib/python3.", "usr/lib/python3." };
	static const char *const kinds[] = { "site-packages/", "dist-packages/" };

	if (strncmp(p, "usr/lib/python3/dist-packages/", 30) == 0) {
		*minor = -1;
		return 29;
	}
	for (size_t r = 0; r < 2; r++) {
		size_t lr = strlen(roots[r]);
		const char *q = p + lr;
		char *end;
		long v;

		if (strncmp(p, roots[r], lr) != 0 || !isdigit((unsigned char)*q))
			continue;
		v = strtol(q, &end, 10);
		if (*end != '/' || v >= 100)
			continue;
		for (size_t k = 0; k < 2; k++)
			if (strncmp(end + 1, kinds[k], 14) == 0) {
				*minor = (int)v;
				return (size_t)(end + 1 - p) + 13;
			}
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void eb_pytarget_parse_record(const char *text, size_t len, const char *dist_info, char ***files,
			      size_t *n)
{
	const char *end = text + len, *p = text;
	const char *slash = strrchr(dist_info, '/');
	char *site = eb_xstrndup(dist_info, slash ? (size_t)(slash - dist_info) : 0);
	char **v = NULL;
	size_t nv = 0, cap = 0;

	while (p < end) {
		/* the first CSV field: quoted ("a,b.py" with "" for a quote) or not */
		char *field = eb_xmalloc((size_t)(end - p) + 1);
		size_t fl = 0;

		if (*p == '"') {
			for (p++; p < end; p++) {
				if (*p == '"' && p + 1 < end && p[1] == '"')
					field[fl++] = *p++;
				else if (*p == '"') {
					p++;
					break;
				} else
					field[fl++] = *p;
			}
		} else {
			while (p < end && *p != ',' && *p != '\n' && *p != '\r')
				field[fl++] = *p++;
		}
		field[fl] = '\0';
		while (p < end && *p != '\n')
			p++;
		if (p < end)
			p++;
		if (fl > 0 && strlen(field) == fl) {
			/* relative to the root, so that ".." above it is refused
			 * (NULL) rather than clamped */
			const char *f = field;
			char *joined, *norm;

			while (*f == '/')
				f++;
			joined = field[0] == '/' ? eb_xstrdup(f) : eb_xasprintf("%s/%s", site + 1, f);
			norm = eb_path_normalize(joined);
			if (norm && norm[0] && strcmp(norm, ".") != 0) {
				EB_ALLOC_GROW(v, nv + 1, cap);
				v[nv++] = eb_xasprintf("/%s", norm);
			}
			free(norm);
			free(joined);
		}
		free(field);
	}
	free(site);
	if (nv)
		eb_sort(v, nv, sizeof(*v), cmp_str);
	{
		size_t w = 0;
		for (size_t i = 0; i < nv; i++) {
			if (w && strcmp(v[w - 1], v[i]) == 0) {
				free(v[i]);
				continue;
			}
			v[w++] = v[i];
		}
		nv = w;
	}
	*files = v;
	*n = nv;
}

/* The dist-info directory a path lies in or names
 * ("usr/lib/python3/dist-packages/x-1.0.dist-info"), or NULL; *minor is
 * its Python minor, *slash the '/' after it (NULL for the directory
 * itself).  The caller frees the result. */
static char *dist_dir(const char *p, int *minor, const char **slash)
{
	size_t sl = site_prefix(p, minor);
	const char *comp;
	size_t cl;

	if (!sl)
		return NULL;
	comp = p + sl + 1;
	*slash = strchr(comp, '/');
	cl = *slash ? (size_t)(*slash - comp) : strlen(comp);
	if (cl <= 10 || memcmp(comp + cl - 10, ".dist-info", 10) != 0 || !memchr(comp, '-', cl))
		return NULL;
	return eb_xstrndup(p, sl + 1 + cl);
}

/* An entry of a layer under a site directory: a dist-info directory (or
 * something in it) is recorded, its RECORD read. */
static void scan_dist(struct scan *s, struct archive *a, struct archive_entry *e, const char *p)
{
	int minor;
	const char *slash;
	struct bdist *b;
	char *dir = dist_dir(p, &minor, &slash);

	if (!dir)
		return;
	b = bdist_put(s, dir, minor);
	if (slash && strcmp(slash + 1, "RECORD") == 0 && archive_entry_filetype(e) == AE_IFREG) {
		char *t = read_text(a, 64 * 1024 * 1024);
		char *abs = eb_xasprintf("/%s", dir);
		bdist_files_free(b);
		eb_pytarget_parse_record(t, strlen(t), abs, &b->files, &b->nfiles);
		free(abs);
		free(t);
	}
	free(dir);
}

static struct seen *seen_put(struct scan *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].path, path) == 0) {
			s->v[i].gmajor = s->v[i].gminor = 0;
			return &s->v[i];
		}
	EB_ALLOC_GROW(s->v, s->n + 1, s->cap);
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].path = eb_xstrdup(path);
	return &s->v[s->n++];
}

/* "usr/local/bin/python3.11" style names: returns the minor (11) or -1. */
static int python_minor(const char *p, const char *dir)
{
	size_t ld = strlen(dir);
	const char *q;
	char *end;
	long v;

	if (strncmp(p, dir, ld) != 0 || strncmp(p + ld, "python3.", 8) != 0)
		return -1;
	q = p + ld + 8;
	if (!isdigit((unsigned char)*q))
		return -1;
	v = strtol(q, &end, 10);
	return *end == '\0' && v < 100 ? (int)v : -1;
}

static int is_libc(const char *p)
{
	const char *b = strrchr(p, '/');
	b = b ? b + 1 : p;
	return strcmp(b, "libc.so.6") == 0 &&
	       (strncmp(p, "lib", 3) == 0 || strncmp(p, "usr/lib", 7) == 0);
}

static int is_musl_loader(const char *p)
{
	return strncmp(p, "lib/ld-musl-", 12) == 0 || strncmp(p, "usr/lib/ld-musl-", 16) == 0;
}

static int is_site_dir(const char *p)
{
	return strncmp(p, "usr/local/lib/python3.", 22) == 0 &&
	       (strstr(p, "/site-packages") || strstr(p, "/dist-packages")) &&
	       (strchr(p + 22, '/') == strrchr(p, '/'));
}

/* glibc version from "libc-2.31.so" style link targets. */
static int glibc_from_name(const char *name, int *maj, int *min)
{
	const char *b = strrchr(name, '/');
	b = b ? b + 1 : name;
	return sscanf(b, "libc-%d.%d.so", maj, min) == 2;
}

/* Scan libc.so.6's bytes for "release version X.Y" (glibc prints it from
 * __libc_main), keeping a window so a match split across reads is found. */
static void glibc_from_content(struct archive *a, int *maj, int *min)
{
	static const char needle[] = "release version ";
	char buf[65536 + 64];
	size_t keep = 0;
	ssize_t n;

	while ((n = archive_read_data(a, buf + keep, sizeof(buf) - keep - 1)) > 0) {
		size_t len = keep + (size_t)n;
		buf[len] = '\0';
		for (size_t i = 0; i + sizeof(needle) - 1 + 3 < len; i++) {
			if (memcmp(buf + i, needle, sizeof(needle) - 1) == 0 &&
			    sscanf(buf + i + sizeof(needle) - 1, "%d.%d", maj, min) == 2)
				return;
		}
		keep = len > 32 ? 32 : len;
		memmove(buf, buf + len - keep, keep);
	}
}

/* Read the rest of the current entry (at most max bytes) as a string,
 * in a buffer grown as it fills (a status file is far below its cap). */
static char *read_text(struct archive *a, size_t max)
{
	struct eb_buf b;
	char chunk[16384];
	ssize_t n;

	eb_buf_init(&b, 0);
	while (b.len < max && (n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		(void)eb_buf_add(&b, chunk, b.len + (size_t)n > max ? max - b.len : (size_t)n);
	return eb_buf_detach(&b, NULL);
}

/* "3.11.4" at the start of s (digits and dots, three parts), or NULL. */
static char *full_version_at(const char *s, int minor)
{
	int maj, min, pat, n = 0;

	if (sscanf(s, "%d.%d.%d%n", &maj, &min, &pat, &n) != 3 || maj != 3 || min != minor)
		return NULL;
	return eb_xasprintf("3.%d.%d", min, pat);
}

static void set_full(struct scan *s, int minor, char *v)
{
	if (!v || minor < 0 || minor >= 100 || (s->full[minor] && s->full_at[minor] > s->at)) {
		free(v);
		return;
	}
	free(s->full[minor]);
	s->full[minor] = v;
	s->full_at[minor] = s->at;
}

/* usr/local/include/python3.X/patchlevel.h: #define PY_VERSION "3.X.Y" */
static void full_from_patchlevel(struct scan *s, struct archive *a, int minor)
{
	char *t = read_text(a, 64 * 1024);
	const char *p = strstr(t, "#define PY_VERSION");

	if (p && (p = strchr(p, '"')))
		set_full(s, minor, full_version_at(p + 1, minor));
	free(t);
}

/* var/lib/dpkg/status: the Version of each python3.X-minimal package
 * ("3.11.2-6+deb12u6": upstream 3.11.2). */
static void full_from_dpkg(struct scan *s, struct archive *a)
{
	char *t = read_text(a, 32 * 1024 * 1024);

	for (char *p = t; (p = strstr(p, "Package: python3.")) != NULL; p++) {
		int minor, n = 0;
		const char *v, *end;

		if ((p != t && p[-1] != '\n') ||
		    sscanf(p, "Package: python3.%d-minimal%n", &minor, &n) != 1 || n == 0 ||
		    (p[n] != '\n' && p[n] != '\r'))
			continue;
		end = strstr(p, "\n\n");
		v = strstr(p, "\nVersion: ");
		if (!v || (end && v > end))
			continue;
		v += 10;
		if (strchr(v, ':') && strchr(v, ':') < strchr(v, '\n'))
			v = strchr(v, ':') + 1; /* an epoch */
		set_full(s, minor, full_version_at(v, minor));
	}
	free(t);
}

/* "usr/local/include/python3.11/patchlevel.h": the minor (11), or -1. */
static int patchlevel_minor(const char *p)
{
	int minor, n = 0;

	if (sscanf(p, "usr/local/include/python3.%d/patchlevel.h%n", &minor, &n) == 1 && n > 0 &&
	    p[n] == '\0')
		return minor;
	return -1;
}

static int scan_layer(struct scan *s, const char *path, const char *diff_id,
		      struct eb_error **err)
{
	struct eb_layerin *in;
	struct archive *a;
	struct archive_entry *e;
	int r, ar;

	if ((r = eb_layerin_open(&in, path, diff_id, err)) < 0)
		return r;
	a = eb_layerin_archive(in);
	while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);
		char *p, *base;
		size_t len;

		if (!raw)
			continue;
		while (raw[0] == '.' && raw[1] == '/')
			raw += 2;
		while (raw[0] == '/')
			raw++;
		p = eb_xstrdup(raw);
		len = strlen(p);
		while (len > 0 && p[len - 1] == '/')
			p[--len] = '\0';
		base = strrchr(p, '/');
		base = base ? base + 1 : p;
		if (strcmp(base, ".wh..wh..opq") == 0) {
			/* an opaque directory hides everything below it */
			if (base > p) {
				base[-1] = '\0';
				seen_remove_prefix(s, p, 1);
				bdist_remove_prefix(s, p, 1);
			}
		} else if (strncmp(base, ".wh.", 4) == 0) {
			char *target = eb_xasprintf("%.*s%s", (int)(base - p), p, base + 4);
			seen_remove_prefix(s, target, 0);
			bdist_remove_prefix(s, target, 0);
			free(target);
		} else if (strncmp(p, "usr/", 4) == 0 && strstr(p, ".dist-info")) {
			scan_dist(s, a, e, p);
		} else if (python_minor(p, "usr/local/bin/") >= 0 || python_minor(p, "usr/bin/") >= 0 ||
			   is_site_dir(p) || is_musl_loader(p)) {
			seen_put(s, p);
		} else if (patchlevel_minor(p) >= 0 && archive_entry_filetype(e) == AE_IFREG) {
			full_from_patchlevel(s, a, patchlevel_minor(p));
		} else if (strcmp(p, "var/lib/dpkg/status") == 0 &&
			   archive_entry_filetype(e) == AE_IFREG) {
			full_from_dpkg(s, a);
		} else if (is_libc(p)) {
			struct seen *sn = seen_put(s, p);
			const char *link = archive_entry_symlink(e);
			if (link)
				glibc_from_name(link, &sn->gmajor, &sn->gminor);
			else if (archive_entry_filetype(e) == AE_IFREG)
				glibc_from_content(a, &sn->gmajor, &sn->gminor);
		}
		free(p);
	}
	if (ar != ARCHIVE_EOF) {
		r = eb_error_set(err, EB_EINVALID, "base layer '%s' is not a readable tar: %s", path,
				 archive_error_string(a));
		goto done;
	}
	r = eb_layerin_finish(in, err);
done:
	eb_layerin_free(in);
	return r;
}

const char *eb_pytarget_machine(const char *platform)
{
	static const struct {
		const char *platform, *machine;
	} map[] = {
		{ "linux/amd64", "x86_64" },   { "linux/arm64", "aarch64" },
		{ "linux/arm64/v8", "aarch64" }, { "linux/arm/v7", "armv7l" },
		{ "linux/386", "i686" },       { "linux/ppc64le", "ppc64le" },
		{ "linux/s390x", "s390x" },    { "linux/riscv64", "riscv64" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].platform, platform) == 0)
			return map[i].machine;
	return NULL;
}

static int has(const struct scan *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].path, path) == 0)
			return 1;
	return 0;
}

static int cmp_bdist(const void *a, const void *b)
{
	const struct eb_pybase_dist *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->dist_info, y->dist_info);
}

/* The base's dist-infos for python3.<minor>, sorted by name. */
static void take_dists(struct eb_pytarget *out, struct scan *s, int minor)
{
	out->dists = eb_xcalloc(s->nd + 1, sizeof(*out->dists));
	for (size_t i = 0; i < s->nd; i++) {
		struct bdist *b = &s->d[i];
		struct eb_pybase_dist *d;
		const char *base = strrchr(b->dir, '/') + 1;
		const char *dash = strchr(base, '-');
		size_t bl = strlen(base);

		if (b->minor != minor && b->minor != -1)
			continue;
		d = &out->dists[out->ndists++];
		d->name = eb_pep503_normalize(base, (size_t)(dash - base));
		d->version = eb_xstrndup(dash + 1, bl - 10 - (size_t)(dash + 1 - base));
		d->dist_info = eb_xasprintf("/%s", b->dir);
		d->files = b->files;
		d->nfiles = b->nfiles;
		b->files = NULL;
		b->nfiles = 0;
	}
	eb_sort(out->dists, out->ndists, sizeof(*out->dists), cmp_bdist);
}

const struct eb_pybase_dist *eb_pytarget_base_dist(const struct eb_pytarget *t, const char *name)
{
	for (size_t i = 0; i < t->ndists; i++)
		if (strcmp(t->dists[i].name, name) == 0)
			return &t->dists[i];
	return NULL;
}

static int parse_libc(struct eb_pytarget *t, const char *s, struct eb_error **err)
{
	char kind[16];
	int maj, min;

	if (sscanf(s, "%15s %d.%d", kind, &maj, &min) != 3 ||
	    (strcmp(kind, "glibc") != 0 && strcmp(kind, "musl") != 0))
		return eb_error_set(err, EB_EINVALID,
				    "invalid libc '%s' (write \"glibc 2.36\" or \"musl 1.2\")", s);
	t->libc = strcmp(kind, "glibc") == 0 ? EB_LIBC_GLIBC : EB_LIBC_MUSL;
	t->libc_major = maj;
	t->libc_minor = min;
	return 0;
}

/* The spec's "3.11.4" (three parts) says the patch level; "3.11" does not. */
static char *spec_full_version(const char *v)
{
	int maj, min, pat, n = 0;

	if (!v || sscanf(v, "%d.%d.%d%n", &maj, &min, &pat, &n) != 3 || v[n] != '\0')
		return NULL;
	return eb_xasprintf("%d.%d.%d", maj, min, pat);
}

static void scan_free(struct scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	for (size_t i = 0; i < s->nd; i++) {
		bdist_files_free(&s->d[i]);
		free(s->d[i].dir);
	}
	free(s->d);
	for (size_t i = 0; i < 100; i++)
		free(s->full[i]);
	memset(s, 0, sizeof(*s));
}

/* The answers from what the scan found (and the overrides). */
static int decide(struct eb_pytarget *out, struct scan *found,
		  const struct eb_pytarget_overrides *ov, int want_minor, struct eb_error **err)
{
	struct scan s = *found; /* read only; still the caller's to free */
	int best = -1, in_local = 0, r = 0;

	/* the interpreter: /usr/local (python:* images) before /usr (distro) */
	for (size_t i = 0; i < s.n; i++) {
		int m = python_minor(s.v[i].path, "usr/local/bin/");
		int local = m >= 0;
		if (m < 0)
			m = python_minor(s.v[i].path, "usr/bin/");
		if (m < 0 || (want_minor >= 0 && m != want_minor))
			continue;
		if (m > best || (m == best && local && !in_local)) {
			best = m;
			in_local = local;
		}
	}
	if (ov->interpreter) {
		out->interpreter = eb_xstrdup(ov->interpreter);
		if (best < 0 && want_minor >= 0)
			best = want_minor;
	} else if (best >= 0) {
		out->interpreter = eb_xasprintf("/usr%s/bin/python3.%d", in_local ? "/local" : "", best);
	}
	if (best < 0) {
		r = eb_error_set(err, EB_ENOTFOUND, "the base image has no Python%s%s",
				 ov->python_version ? " " : "",
				 ov->python_version ? ov->python_version : "");
		eb_error_hint(err, "use a base with CPython (e.g. python:3.11-slim-bookworm), or set "
				   "'interpreter' and 'python' in the spec");
		goto done;
	}
	out->python_version = eb_xasprintf("3.%d", best);
	out->python_full_version = spec_full_version(ov->python_version);
	if (!out->python_full_version && best < 100 && s.full[best])
		out->python_full_version = eb_xstrdup(s.full[best]);
	if (ov->site_packages) {
		out->purelib = eb_xstrdup(ov->site_packages);
	} else {
		/* official images: site-packages of their own /usr/local build;
		 * distro Python: pip-style installs go to dist-packages */
		char *sp = eb_xasprintf("usr/local/lib/python3.%d/site-packages", best);
		if (in_local || has(&s, sp))
			out->purelib = eb_xasprintf("/%s", sp);
		else
			out->purelib = eb_xasprintf("/usr/local/lib/python3.%d/dist-packages", best);
		free(sp);
	}
	out->platlib = eb_xstrdup(out->purelib);
	out->scripts = eb_xstrdup("/usr/local/bin");
	out->data = eb_xstrdup("/usr/local");
	out->include = eb_xasprintf("/usr/local/include/python3.%d", best);
	take_dists(out, found, best);

	/* the C library */
	if (ov->libc) {
		r = parse_libc(out, ov->libc, err);
		goto done;
	}
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].gmajor > 0 && (s.v[i].gmajor > out->libc_major ||
					  (s.v[i].gmajor == out->libc_major &&
					   s.v[i].gminor > out->libc_minor))) {
			out->libc = EB_LIBC_GLIBC;
			out->libc_major = s.v[i].gmajor;
			out->libc_minor = s.v[i].gminor;
		}
	if (out->libc == EB_LIBC_UNKNOWN)
		for (size_t i = 0; i < s.n; i++)
			if (is_musl_loader(s.v[i].path)) {
				out->libc = EB_LIBC_MUSL;
				out->libc_major = 1;
				out->libc_minor = 2;
				out->libc_assumed = 1;
			}
	if (out->libc == EB_LIBC_UNKNOWN) {
		r = eb_error_set(err, EB_ENOTFOUND, "cannot tell the base image's C library (no libc.so.6 or musl loader found)");
		eb_error_hint(err, "say it in the spec: libc: \"glibc 2.36\" or libc: \"musl 1.2\"");
	}
done:
	return r;
}

/* What every detection starts with: the machine, the version asked for. */
static int detect_begin(struct eb_pytarget *out, const char *platform,
			const struct eb_pytarget_overrides *ov, int *want_minor, struct eb_error **err)
{
	const char *machine = eb_pytarget_machine(platform);

	memset(out, 0, sizeof(*out));
	*want_minor = -1;
	if (!machine)
		return eb_error_set(err, EB_EINVALID, "no Python platform tag for '%s'", platform);
	if (ov->python_version) {
		int maj = 0, min = -1;
		if (sscanf(ov->python_version, "%d.%d", &maj, &min) != 2 || maj != 3)
			return eb_error_set(err, EB_EINVALID,
					    "python version '%s' is not 3.X (envbuild installs for CPython 3)",
					    ov->python_version);
		*want_minor = min;
	}
	out->machine = eb_xstrdup(machine);
	return 0;
}

int eb_pytarget_detect(struct eb_pytarget *out, const char *const *layers, size_t nlayers,
		       const char *platform, const struct eb_pytarget_overrides *ov,
		       struct eb_error **err)
{
	return eb_pytarget_detect_verified(out, layers, NULL, nlayers, platform, ov, err);
}

int eb_pytarget_detect_verified(struct eb_pytarget *out, const char *const *layers,
				const char *const *diff_ids, size_t nlayers, const char *platform,
				const struct eb_pytarget_overrides *ov, struct eb_error **err)
{
	static const struct eb_pytarget_overrides none;
	struct scan s = { 0 };
	int want_minor, r;

	if (!ov)
		ov = &none;
	if ((r = detect_begin(out, platform, ov, &want_minor, err)) < 0)
		return r;
	for (size_t i = 0; i < nlayers && r == 0; i++) {
		s.at = (uint64_t)i << 32;
		r = scan_layer(&s, layers[i], diff_ids ? diff_ids[i] : NULL, err);
	}
	if (r == 0)
		r = decide(out, &s, ov, want_minor, err);
	scan_free(&s);
	if (r < 0)
		eb_pytarget_release(out);
	return r;
}

/* ---- from the base's file-tree view -------------------------------------- */

/* A file whose bytes an answer needs: a dist-info's RECORD, libc.so.6 (its
 * version string), patchlevel.h, dpkg's status. */
enum need_kind { NEED_RECORD, NEED_LIBC, NEED_PATCHLEVEL, NEED_DPKG };

struct need {
	const struct eb_basefs_node *node;
	enum need_kind kind;
	size_t index; /* NEED_RECORD: into scan.d; NEED_LIBC: into scan.v */
	int minor;    /* NEED_PATCHLEVEL */
	int done;
};

static int cmp_need(const void *a, const void *b)
{
	const struct need *x = a, *y = b;

	if (x->node->layer != y->node->layer)
		return x->node->layer > y->node->layer ? -1 : 1; /* newest first */
	return x->node->entry < y->node->entry ? -1 : x->node->entry > y->node->entry;
}

/* Classify one node of the view as scan_layer() classifies an entry; a
 * file whose bytes are needed goes on the list instead of being read. */
static void fs_node(struct scan *s, const struct eb_basefs_node *nd, struct need **needs,
		    size_t *nneeds, size_t *cap)
{
	const char *p = nd->path;
	struct need nw = { nd, NEED_RECORD, 0, -1, 0 };
	int file = nd->type == EB_BASEFS_FILE;

	if (strncmp(p, "usr/", 4) == 0 && strstr(p, ".dist-info")) {
		int minor;
		const char *slash;
		char *dir = dist_dir(p, &minor, &slash);

		if (!dir)
			return;
		(void)bdist_put(s, dir, minor);
		if (slash && strcmp(slash + 1, "RECORD") == 0 && file) {
			for (nw.index = 0; strcmp(s->d[nw.index].dir, dir) != 0; nw.index++)
				;
			nw.kind = NEED_RECORD;
		} else {
			nw.node = NULL;
		}
		free(dir);
	} else if (python_minor(p, "usr/local/bin/") >= 0 || python_minor(p, "usr/bin/") >= 0 ||
		   is_site_dir(p) || is_musl_loader(p)) {
		seen_put(s, p);
		nw.node = NULL;
	} else if (patchlevel_minor(p) >= 0 && file) {
		nw.kind = NEED_PATCHLEVEL;
		nw.minor = patchlevel_minor(p);
	} else if (strcmp(p, "var/lib/dpkg/status") == 0 && file) {
		nw.kind = NEED_DPKG;
	} else if (is_libc(p)) {
		struct seen *sn = seen_put(s, p);
		nw.node = NULL;
		if (nd->type == EB_BASEFS_SYMLINK && nd->link) {
			glibc_from_name(nd->link, &sn->gmajor, &sn->gminor);
		} else if (file) {
			nw.node = nd;
			nw.kind = NEED_LIBC;
			nw.index = (size_t)(sn - s->v);
		}
	} else {
		nw.node = NULL;
	}
	if (nw.node) {
		EB_ALLOC_GROW(*needs, *nneeds + 1, *cap);
		(*needs)[(*nneeds)++] = nw;
	}
}

/* Read the needed entries of layer path (needs[0..n), all of that layer,
 * sorted by entry): entries are counted as the view counted them, and
 * the layer is left as soon as the last one is read. */
static int read_needs(struct scan *s, const char *path, struct need *needs, size_t n,
		      struct eb_error **err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	uint32_t entry = 0;
	size_t k = 0;
	int r = 0, ar;

	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		r = eb_error_set(err, EB_EIO, "cannot read base layer '%s': %s", path,
				 archive_error_string(a));
		goto done;
	}
	while (k < n && (ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);
		uint32_t at;

		if (!raw || eb_basefs_is_whiteout(raw))
			continue;
		at = entry++;
		if (at != needs[k].node->entry)
			continue;
		s->at = ((uint64_t)needs[k].node->layer << 32) | at;
		switch (needs[k].kind) {
		case NEED_RECORD: {
			struct bdist *b = &s->d[needs[k].index];
			char *t = read_text(a, 64 * 1024 * 1024);
			char *abs = eb_xasprintf("/%s", b->dir);
			bdist_files_free(b);
			eb_pytarget_parse_record(t, strlen(t), abs, &b->files, &b->nfiles);
			free(abs);
			free(t);
			break;
		}
		case NEED_LIBC:
			glibc_from_content(a, &s->v[needs[k].index].gmajor, &s->v[needs[k].index].gminor);
			break;
		case NEED_PATCHLEVEL:
			full_from_patchlevel(s, a, needs[k].minor);
			break;
		case NEED_DPKG:
			full_from_dpkg(s, a);
			break;
		}
		needs[k++].done = 1;
	}
	if (k < n)
		r = eb_error_set(err, EB_EINVALID, "base layer '%s' does not have the entries its "
				 "cached file-tree view says it has",
				 path);
done:
	archive_read_free(a);
	return r;
}

int eb_pytarget_detect_fs(struct eb_pytarget *out, const struct eb_basefs *fs,
			  const char *const *layers, size_t nlayers, struct eb_blobstore *bs,
			  const char *platform, const struct eb_pytarget_overrides *ov,
			  struct eb_error **err)
{
	static const struct eb_pytarget_overrides none;
	struct scan s = { 0 };
	struct need *needs = NULL;
	size_t nneeds = 0, cap = 0, count, nread = 0;
	const struct eb_basefs_node *first;
	int want_minor, r;

	if (!ov)
		ov = &none;
	if ((r = detect_begin(out, platform, ov, &want_minor, err)) < 0)
		return r;
	/* every path of the merged tree is known: only the bytes of a few
	 * files are missing, each in one layer */
	count = eb_basefs_under(fs, "", &first);
	for (size_t i = 0; i < count; i++)
		fs_node(&s, &first[i], &needs, &nneeds, &cap);
	if (nneeds > 1)
		eb_sort(needs, nneeds, sizeof(*needs), cmp_need);
	for (size_t i = 0; i < nneeds && r == 0;) {
		unsigned layer = needs[i].node->layer;
		size_t j = i;

		while (j < nneeds && needs[j].node->layer == layer)
			j++;
		if (layer >= nlayers) {
			r = eb_error_set(err, EB_EINVALID, "the base's file-tree view names layer %u of %zu",
					 layer + 1, nlayers);
			break;
		}
		if (bs) {
			/* still in its registry: fetched now, and only this one */
			eb_autofree char *dg = eb_xasprintf("sha256:%s", eb_path_basename(layers[layer]));
			(void)eb_cache_fetch(bs, dg, -1, NULL);
		}
		r = read_needs(&s, layers[layer], needs + i, j - i, err);
		nread++;
		i = j;
	}
	if (r == 0)
		r = decide(out, &s, ov, want_minor, err);
	free(needs);
	scan_free(&s);
	if (r < 0)
		eb_pytarget_release(out);
	(void)nread;
	return r;
}

int eb_pytarget_assume(struct eb_pytarget *out, const char *platform,
		       const struct eb_pytarget_overrides *ov, struct eb_error **err)
{
	const char *machine = eb_pytarget_machine(platform);
	int maj = 0, min = -1, r;

	memset(out, 0, sizeof(*out));
	if (!machine)
		return eb_error_set(err, EB_EINVALID, "no Python platform tag for '%s'", platform);
	if (!ov->python_version || sscanf(ov->python_version, "%d.%d", &maj, &min) != 2 || maj != 3)
		return eb_error_set(err, EB_EINVALID, "python version '%s' is not 3.X",
				    ov->python_version ? ov->python_version : "");
	out->machine = eb_xstrdup(machine);
	out->python_version = eb_xasprintf("3.%d", min);
	out->python_full_version = spec_full_version(ov->python_version);
	out->interpreter = ov->interpreter ? eb_xstrdup(ov->interpreter)
					   : eb_xasprintf("/usr/local/bin/python3.%d", min);
	out->purelib = ov->site_packages ? eb_xstrdup(ov->site_packages)
					 : eb_xasprintf("/usr/local/lib/python3.%d/site-packages", min);
	out->platlib = eb_xstrdup(out->purelib);
	out->scripts = eb_xstrdup("/usr/local/bin");
	out->data = eb_xstrdup("/usr/local");
	out->include = eb_xasprintf("/usr/local/include/python3.%d", min);
	r = parse_libc(out, ov->libc ? ov->libc : "", err);
	if (r < 0)
		eb_pytarget_release(out);
	return r;
}

const char *eb_pytarget_full_version(const struct eb_pytarget *t)
{
	return t->python_full_version ? t->python_full_version : t->python_version;
}

void eb_pytarget_release(struct eb_pytarget *t)
{
	free(t->python_version);
	free(t->python_full_version);
	free(t->interpreter);
	free(t->purelib);
	free(t->platlib);
	free(t->scripts);
	free(t->data);
	free(t->include);
	free(t->machine);
	for (size_t i = 0; i < t->ndists; i++) {
		struct eb_pybase_dist *d = &t->dists[i];
		free(d->name);
		free(d->version);
		free(d->dist_info);
		for (size_t k = 0; k < d->nfiles; k++)
			free(d->files[k]);
		free(d->files);
	}
	free(t->dists);
	memset(t, 0, sizeof(*t));
}
