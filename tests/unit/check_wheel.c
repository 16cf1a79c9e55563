/*
 * check_wheel.c - tests for python/metadata (METADATA, WHEEL,
 * entry_points.txt) and python/wheel (installing a wheel into a layer).
 *
 * Wheels are written by tests/unit/wheels/mkwheel.py (one well-formed
 * wheel and one hostile variant per check).  Installed layers are written
 * to a blob store and read back with libarchive, never trusted from the
 * installer's own summary.  The Debian wheels in /usr/share/python-wheels
 * are installed both by envbuild and by Debian's pip, and the results
 * compared file by file.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <ftw.h>
#include <glob.h>
#include <locale.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "testutil.h"

#include "oci/blobstore.h"
#include "oci/layer.h"
#include "pin/marker.h"
#include "python/metadata.h"
#include "python/wheel.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

/* ---- helpers ----------------------------------------------------------- */

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static int run(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Write variant's wheel into a fresh directory under tmp; returns its path. */
static char *mkwheel(const char *tmp, const char *variant)
{
	const char *top = getenv("top_srcdir");
	eb_autofree char *dir = eb_xasprintf("%s/w-%s", tmp, variant);
	eb_autofree char *cmd = NULL;
	char line[4096];
	FILE *p;
	char *nl;

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	cmd = eb_xasprintf("python3 '%s/tests/unit/wheels/mkwheel.py' '%s' '%s'",
			   top && *top ? top : ".", dir, variant);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(pclose(p), 0);
	if ((nl = strchr(line, '\n')))
		*nl = '\0';
	return eb_xstrdup(line);
}

static const struct eb_wheel_scheme SCHEME = {
	"/usr/local/lib/python3.11/site-packages",
	"/usr/local/lib/python3.11/site-packages",
	"/usr/local/bin",
	"/usr/local",
	"/usr/local/include/python3.11/demo-pkg",
	"/usr/local/bin/python3.11",
};

#define SITE "/usr/local/lib/python3.11/site-packages"

/* One file of a layer tar. */
struct tfile {
	char *path; /* without leading '/' */
	struct eb_buf data;
	unsigned mode;
	int type;
};

struct tarlist {
	struct tfile *f;
	size_t n, cap;
};

static void tar_release(struct tarlist *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->f[i].path);
		eb_buf_release(&t->f[i].data);
	}
	free(t->f);
	memset(t, 0, sizeof(*t));
}

static const struct tfile *tar_find(const struct tarlist *t, const char *path)
{
	if (path[0] == '/')
		path++;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->f[i].path, path) == 0)
			return &t->f[i];
	return NULL;
}

/* Write the builder's layer into a blob store under tmp and read it back. */
static void write_and_read(struct eb_layer_builder *b, const char *tmp, struct tarlist *out,
			   char digest[EB_DIGEST_STR_LEN + 1])
{
	struct eb_error *err = NULL;
	struct eb_blobstore *bs = NULL;
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	eb_autofree char *root = eb_xasprintf("%s/blobs", tmp);
	eb_autofree char *blob = NULL;
	struct archive *a;
	struct archive_entry *ae;
	locale_t utf8, old;
	int ar;

	ck_assert_int_eq(eb_blobstore_open(&bs, root, &err), 0);
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &res, &err), 0);
	if (digest)
		memcpy(digest, res.digest, sizeof(res.digest));
	blob = eb_blobstore_path(bs, res.digest);
	memset(out, 0, sizeof(*out));
	/* UTF-8 names (pax records) come back as UTF-8, not as a failure to
	 * convert them to the C locale's ASCII. */
	utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	ck_assert(utf8 != (locale_t)0);
	old = uselocale(utf8);
	a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	ck_assert_int_eq(archive_read_open_filename(a, blob, 65536), ARCHIVE_OK);
	while ((ar = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		struct tfile *f;
		char buf[65536];
		la_ssize_t n;

		ck_assert_msg(ar == ARCHIVE_OK, "%s", archive_error_string(a));
		EB_ALLOC_GROW(out->f, out->n + 1, out->cap);
		f = &out->f[out->n++];
		f->path = eb_xstrdup(archive_entry_pathname(ae));
		f->mode = archive_entry_perm(ae);
		f->type = (int)archive_entry_filetype(ae);
		eb_buf_init(&f->data, 0);
		while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
			ck_assert_int_eq(eb_buf_add(&f->data, buf, (size_t)n), 0);
		ck_assert_int_ge(n, 0);
	}
	archive_read_free(a);
	uselocale(old);
	freelocale(utf8);
	eb_blobstore_free(bs);
}

static void b64url(const unsigned char *p, size_t n, char *out)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		out[o++] = t[v >> 18];
		out[o++] = t[(v >> 12) & 63];
		if (i + 1 < n)
			out[o++] = t[(v >> 6) & 63];
		if (i + 2 < n)
			out[o++] = t[v & 63];
	}
	out[o] = '\0';
}

/* The RECORD line a file of the layer should have. */
static char *record_line_for(const char *rel, const struct eb_buf *data)
{
	char d[EB_DIGEST_STR_LEN + 1], b[64];
	unsigned char raw[32];
	const char *hex;

	eb_sha256_digest(data->ptr, data->len, d);
	hex = eb_digest_hex(d);
	for (int i = 0; i < 32; i++)
		raw[i] = (unsigned char)(eb_hex_value(hex[2 * i]) << 4 | eb_hex_value(hex[2 * i + 1]));
	b64url(raw, 32, b);
	if (strchr(rel, ','))
		return eb_xasprintf("\"%s\",sha256=%s,%zu", rel, b, data->len);
	return eb_xasprintf("%s,sha256=%s,%zu", rel, b, data->len);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* 1 when a line of text starts with prefix. */
static int has_line(const char *text, const char *prefix)
{
	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return 1;
	}
	return 0;
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Lines of text, in order. */
struct lines {
	char **l;
	size_t n, cap;
};

static void split_lines(const char *text, struct lines *out)
{
	memset(out, 0, sizeof(*out));
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		size_t k = n && text[n - 1] == '\r' ? n - 1 : n; /* pip writes CRLF */
		if (k) {
			EB_ALLOC_GROW(out->l, out->n + 1, out->cap);
			out->l[out->n++] = eb_xstrndup(text, k);
		}
		text += n + (nl ? 1 : 0);
	}
}

static void lines_release(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->l[i]);
	free(l->l);
	memset(l, 0, sizeof(*l));
}

/* ---- metadata ------------------------------------------------------------ */

START_TEST(metadata_core)
{
	static const char text[] =
		"Metadata-Version: 2.1\r\n"
		"Name: Demo_Pkg\r\n"
		"version: 1.2.0\r\n"
		"Requires-Python: >=3.8\r\n"
		"Requires-Dist: requests (>=2.0)\r\n"
		"Requires-Dist: click>=8 ; extra == \"cli\"\r\n"
		"Requires-Dist: colorama;\r\n"
		"  sys_platform == \"win32\"\r\n"
		"Requires-Dist: pkg @ https://h/pkg-1.0-py3-none-any.whl\r\n"
		"Provides-Extra: cli\r\n"
		"Provides-Extra: Fancy_Stuff\r\n"
		"Provides-Extra: fancy-stuff\r\n"
		"\r\n"
		"Name: body, not a header\r\n";
	struct eb_metadata m;
	struct eb_error *err = NULL;
	struct eb_marker_env env;
	int res;

	ck_assert_int_eq(eb_metadata_parse(&m, text, strlen(text), &err), 0);
	ck_assert_str_eq(m.name, "Demo_Pkg");
	ck_assert_str_eq(m.norm_name, "demo-pkg");
	ck_assert_str_eq(m.version, "1.2.0");
	ck_assert_uint_eq(m.mv_major, 2);
	ck_assert_uint_eq(m.mv_minor, 1);
	ck_assert_str_eq(m.requires_python, ">=3.8");
	ck_assert_uint_eq(m.requires_python_specs.n, 1);
	ck_assert_uint_eq(m.nrequires_dist, 4);
	ck_assert_str_eq(m.requires_dist[0].norm_name, "requests");
	ck_assert_uint_eq(m.requires_dist[0].specs.n, 1);
	ck_assert_ptr_null(m.requires_dist[0].marker);
	ck_assert_str_eq(m.requires_dist[1].name, "click");
	ck_assert_ptr_nonnull(m.requires_dist[1].marker);
	eb_marker_env_init(&env, "3.11", "x86_64");
	env.extra = "cli";
	ck_assert_int_eq(eb_marker_eval(m.requires_dist[1].marker, &env, &res, &err), 0);
	ck_assert_int_eq(res, 1);
	env.extra = "";
	ck_assert_int_eq(eb_marker_eval(m.requires_dist[1].marker, &env, &res, &err), 0);
	ck_assert_int_eq(res, 0);
	/* The folded line was unfolded into one marker. */
	ck_assert_str_eq(m.requires_dist[2].name, "colorama");
	ck_assert_ptr_nonnull(m.requires_dist[2].marker);
	ck_assert_int_eq(m.requires_dist[3].kind, EB_REQ_URL);
	ck_assert_str_eq(m.requires_dist[3].name, "pkg");
	ck_assert_uint_eq(m.nprovides_extra, 2);
	ck_assert_str_eq(m.provides_extra[0], "cli");
	ck_assert_str_eq(m.provides_extra[1], "fancy-stuff");
	ck_assert(eb_metadata_provides_extra(&m, "FANCY.stuff"));
	ck_assert(!eb_metadata_provides_extra(&m, "other"));
	ck_assert_uint_eq(m.nwarnings, 0);
	eb_metadata_release(&m);
	eb_metadata_release(&m); /* harmless twice */
}
END_TEST

START_TEST(metadata_versions)
{
	struct eb_metadata m;
	struct eb_error *err = NULL;
	static const char *ok[] = { "1.0", "1.1", "1.2", "2.0", "2.1", "2.2", "2.3", "2.4" };
	char text[256];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "Metadata-Version: %s\nName: a\nVersion: 1\n", ok[i]);
		ck_assert_int_eq(eb_metadata_parse(&m, text, strlen(text), &err), 0);
		ck_assert_uint_eq(m.nwarnings, 0);
		eb_metadata_release(&m);
	}
	snprintf(text, sizeof(text), "Metadata-Version: 2.5\nName: a\nVersion: 1\n");
	ck_assert_int_eq(eb_metadata_parse(&m, text, strlen(text), &err), 0);
	ck_assert_uint_eq(m.nwarnings, 1);
	ck_assert_ptr_nonnull(strstr(m.warnings[0], "'2.5'"));
	eb_metadata_release(&m);
	/* Not PEP 440: kept, with a warning. */
	snprintf(text, sizeof(text), "Metadata-Version: 1.0\nName: a\nVersion: 1.0-weird-x\n"
				     "Requires-Python: >=3.6.*\n");
	ck_assert_int_eq(eb_metadata_parse(&m, text, strlen(text), &err), 0);
	ck_assert_uint_eq(m.nwarnings, 2);
	ck_assert_str_eq(m.version, "1.0-weird-x");
	ck_assert_uint_eq(m.parsed_version.nrelease, 0);
	eb_metadata_release(&m);
}
END_TEST

static const struct {
	const char *text;
	int code;
	const char *msg;
} bad_metadata[] = {
	{ "Metadata-Version: 3.0\nName: a\nVersion: 1\n", EB_EINVALID, "unsupported metadata version '3.0'" },
	{ "Metadata-Version: x\nName: a\nVersion: 1\n", EB_EINVALID, "unsupported metadata version" },
	{ "Name: a\nVersion: 1\n", EB_EINVALID, "no Metadata-Version" },
	{ "Metadata-Version: 2.1\nVersion: 1\n", EB_EINVALID, "no Name" },
	{ "Metadata-Version: 2.1\nName: a\n", EB_EINVALID, "no Version" },
	{ "Metadata-Version: 2.1\nName: a\nName: b\nVersion: 1\n", EB_EINVALID, "field 'Name' given twice" },
	{ "Metadata-Version: 2.1\nName: -a-\nVersion: 1\n", EB_EINVALID, "not a valid project name" },
	{ "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: https://h/x-1.0-py3-none-any.whl\n", EB_EINVALID, "not a named PEP 508" },
	{ "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: https://h/x.whl\n", EB_EINVALID, "Requires-Dist 'https://h/x.whl'" },
	{ "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: ./local\n", EB_EINVALID, "not a named PEP 508" },
	{ "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: b ; extra ==\n", EB_EINVALID, "Requires-Dist 'b ; extra =='" },
	{ " Metadata-Version: 2.1\n", EB_EINVALID, "continuation line without a header" },
};

START_TEST(metadata_bad)
{
	struct eb_metadata m;
	struct eb_error *err = NULL;
	const char *t = bad_metadata[_i].text;

	ck_assert_int_eq(eb_metadata_parse(&m, t, strlen(t), &err), -bad_metadata[_i].code);
	ck_assert_msg(strstr(err->msg, bad_metadata[_i].msg), "%s", err->msg);
	ck_assert_ptr_null(m.name);
	eb_error_free(err);
}
END_TEST

START_TEST(metadata_caps)
{
	struct eb_metadata m;
	struct eb_wheel_meta w;
	struct eb_error *err = NULL;
	static const char nul[] = "Metadata-Version: 2.1\nName: a\0b\nVersion: 1\n";
	size_t big = EB_METADATA_MAX_CORE + 1;
	char *text = eb_xmalloc(big);

	ck_assert_int_eq(eb_metadata_parse(&m, nul, sizeof(nul) - 1, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "NUL"));
	eb_error_clear(&err);
	memset(text, 'a', big);
	ck_assert_int_eq(eb_metadata_parse(&m, text, big, &err), -EB_ETOOBIG);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_metadata_parse_wheel(&w, text, EB_METADATA_MAX_WHEEL + 1, &err),
			 -EB_ETOOBIG);
	eb_error_clear(&err);
	free(text);
}
END_TEST

START_TEST(metadata_wheel)
{
	struct eb_wheel_meta w;
	struct eb_error *err = NULL;
	static const char t1[] = "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.38.4)\n"
				 "Root-Is-Purelib: True\nTag: py2-none-any\nTag: py3-none-any\n"
				 "Build: 1\n";
	static const char t2[] = "Wheel-Version: 2.1.7\n";

	ck_assert_int_eq(eb_metadata_parse_wheel(&w, t1, strlen(t1), &err), 0);
	ck_assert_uint_eq(w.version_major, 1);
	ck_assert_uint_eq(w.version_minor, 0);
	ck_assert_int_eq(w.root_is_purelib, 1);
	ck_assert_uint_eq(w.ntags, 2);
	ck_assert_str_eq(w.tags[1], "py3-none-any");
	ck_assert_str_eq(w.generator, "bdist_wheel (0.38.4)");
	ck_assert_str_eq(w.build, "1");
	eb_wheel_meta_release(&w);
	ck_assert_int_eq(eb_metadata_parse_wheel(&w, t2, strlen(t2), &err), 0);
	ck_assert_uint_eq(w.version_major, 2);
	ck_assert_uint_eq(w.version_minor, 1);
	ck_assert_int_eq(w.root_is_purelib, 0); /* missing: platlib, as pip */
	eb_wheel_meta_release(&w);
	ck_assert_int_eq(eb_metadata_parse_wheel(&w, "Tag: x\n", 7, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "no Wheel-Version"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_metadata_parse_wheel(&w, "Wheel-Version: one\n", 19, &err),
			 -EB_EINVALID);
	eb_error_clear(&err);
}
END_TEST

START_TEST(entry_points_ok)
{
	static const char text[] = "# comment\n"
				   "; also a comment\n"
				   "[console_scripts]\n"
				   "demo = demo_pkg.cli:main\n"
				   "  Demo2=pkg.sub : Cls.method  [Extra_One, two]  \n"
				   "\n"
				   "[gui_scripts]\n"
				   "demo-gui = demo_pkg.gui:main\n"
				   "[Console_Scripts]\n" /* case-sensitive: another section */
				   "ignored = not valid at all ::\n"
				   "[distutils.commands]\n"
				   "x = a:b:c\n";
	struct eb_entry_points e;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_metadata_parse_entry_points(&e, text, strlen(text), &err), 0);
	ck_assert_uint_eq(e.nconsole, 2);
	ck_assert_uint_eq(e.ngui, 1);
	ck_assert_str_eq(e.console[0].name, "demo");
	ck_assert_str_eq(e.console[0].module, "demo_pkg.cli");
	ck_assert_str_eq(e.console[0].attr, "main");
	ck_assert_uint_eq(e.console[0].nextras, 0);
	ck_assert_str_eq(e.console[1].name, "Demo2");
	ck_assert_str_eq(e.console[1].module, "pkg.sub");
	ck_assert_str_eq(e.console[1].attr, "Cls.method");
	ck_assert_uint_eq(e.console[1].nextras, 2);
	ck_assert_str_eq(e.console[1].extras[0], "extra-one");
	ck_assert_str_eq(e.gui[0].name, "demo-gui");
	eb_entry_points_release(&e);
}
END_TEST

static const struct {
	const char *text;
	const char *msg;
} bad_eps[] = {
	{ "[console_scripts]\na/b = m:f\n", "'a/b' contains a path separator" },
	{ "[console_scripts]\na\\b = m:f\n", "contains a path separator" },
	{ "[gui_scripts]\n.x = m:f\n", "'.x' starts with '.'" },
	{ "[console_scripts]\nx = m\n", "has no callable" },
	{ "[console_scripts]\nx = m [extra]\n", "invalid entry point" },
	{ "[console_scripts]\nx = os;os.system('id'):main\n", "invalid entry point" },
	{ "[console_scripts]\nx = m:f()\n", "invalid entry point" },
	{ "[console_scripts]\nx = m:1f\n", "invalid entry point" },
	{ "[console_scripts]\nx = m..a:f\n", "invalid entry point" },
	{ "[console_scripts]\nx = m:f [bad extra!]\n", "invalid entry point" },
	{ "[console_scripts]\nx = m:f\n[gui_scripts]\nx = m:g\n", "'x' defined twice" },
	{ "[console_scripts]\nx = m:f\nx = m:g\n", "'x' defined twice" },
	{ "[console_scripts]\nx = m:f\n[console_scripts]\n", "section given twice" },
	{ "x = m:f\n", "before any section" },
	{ "[console_scripts]\nx m:f\n", "expected 'name = value'" },
	{ "[console_scripts]\n = m:f\n", "empty name" },
	{ "[console_scripts\n", "invalid section header" },
};

START_TEST(entry_points_bad)
{
	struct eb_entry_points e;
	struct eb_error *err = NULL;
	const char *t = bad_eps[_i].text;

	ck_assert_int_eq(eb_metadata_parse_entry_points(&e, t, strlen(t), &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, bad_eps[_i].msg), "%s", err->msg);
	ck_assert_uint_eq(e.nconsole + e.ngui, 0);
	eb_error_free(err);
}
END_TEST

/* ---- installing the demo wheel --------------------------------------------- */

static const char *const demo_paths[] = {
	"/usr/local/bin/demo",
	"/usr/local/bin/demo-gui",
	"/usr/local/bin/demo-tool",
	"/usr/local/bin/demo-tool2",
	"/usr/local/bin/demo-w",
	"/usr/local/bin/plain.sh",
	"/usr/local/include/python3.11/demo-pkg/demo.h",
	SITE "/demo_extra.py",
	SITE "/demo_pkg-1.2.0.dist-info/INSTALLER",
	SITE "/demo_pkg-1.2.0.dist-info/METADATA",
	SITE "/demo_pkg-1.2.0.dist-info/RECORD",
	SITE "/demo_pkg-1.2.0.dist-info/REQUESTED",
	SITE "/demo_pkg-1.2.0.dist-info/WHEEL",
	SITE "/demo_pkg-1.2.0.dist-info/direct_url.json",
	SITE "/demo_pkg-1.2.0.dist-info/entry_points.txt",
	SITE "/demo_pkg-1.2.0.dist-info/top_level.txt",
	SITE "/demo_pkg/__init__.py",
	SITE "/demo_pkg/cli.py",
	SITE "/demo_pkg/data,file.txt",
	SITE "/demo_pkg/gui.py",
	"/usr/local/share/demo/readme.txt",
};

#define LAUNCHER(interp, mod, imp, fn)                                                   \
	"#!" interp "\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom " mod " import " \
	imp "\nif __name__ == '__main__':\n"                                              \
	"    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"       \
	"    sys.exit(" fn "())\n"

/* Every file of the dist-info's RECORD matches the layer, and every file
 * the wheel installed is in RECORD. */
static void check_record(const struct tarlist *t, const char *site, const char *distinfo)
{
	eb_autofree char *rpath = eb_xasprintf("%s/%s/RECORD", site, distinfo);
	const struct tfile *rec = tar_find(t, rpath);
	size_t nfiles = 0;
	struct lines lines;

	ck_assert_ptr_nonnull(rec);
	for (size_t i = 0; i < t->n; i++) {
		const struct tfile *f = &t->f[i];
		eb_autofree char *abs = eb_xasprintf("/%s", f->path);
		eb_autofree char *rel = NULL;
		eb_autofree char *want = NULL;

		if (f->type != AE_IFREG)
			continue;
		nfiles++;
		/* relative to site, like the installer */
		if (strncmp(abs, site, strlen(site)) == 0 && abs[strlen(site)] == '/') {
			rel = eb_xstrdup(abs + strlen(site) + 1);
		} else {
			/* site is /usr/local/lib/python3.11/X: three levels below /usr/local */
			ck_assert(strncmp(abs, "/usr/local/", 11) == 0);
			rel = eb_xasprintf("../../../%s", abs + 11);
		}
		if (strcmp(f->path + strlen(f->path) - 7, "/RECORD") == 0)
			want = eb_xasprintf("%s,,", rel);
		else
			want = record_line_for(rel, &f->data);
		ck_assert_msg(strstr(rec->data.ptr, want), "RECORD lacks '%s'", want);
	}
	split_lines(rec->data.ptr, &lines);
	ck_assert_uint_eq(lines.n, nfiles);
	lines_release(&lines);
}

START_TEST(install_demo)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, "good");
	eb_autofree char *staging = eb_xasprintf("%s/staging", tmp);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;
	struct tarlist t;
	const struct tfile *f;
	size_t nd = sizeof(demo_paths) / sizeof(demo_paths[0]);

	ck_assert_int_eq(mkdir(staging, 0755), 0);
	o.staging_dir = staging;
	o.requested = 1;
	o.direct_url = "https://user:secret@files.example/demo_pkg-1.2.0-py3-none-any.whl#sha256=00";
	ck_assert_msg(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err) == 0, "%s", err->msg);
	ck_assert_str_eq(r.metadata.name, "demo-pkg");
	ck_assert_str_eq(r.metadata.version, "1.2.0");
	ck_assert_str_eq(r.metadata.requires_python, ">=3.8");
	ck_assert_uint_eq(r.metadata.nrequires_dist, 3);
	ck_assert_str_eq(r.metadata.requires_dist[1].name, "click");
	ck_assert_str_eq(r.metadata.requires_dist[1].marker_text, "extra == \"cli\"");
	ck_assert_uint_eq(r.metadata.nprovides_extra, 2);
	ck_assert_int_eq(r.wheel.root_is_purelib, 1);
	ck_assert_str_eq(r.dist_info, SITE "/demo_pkg-1.2.0.dist-info");
	ck_assert_uint_eq(r.nwarnings, 0);
	ck_assert_uint_eq(r.npaths, nd);
	for (size_t i = 0; i < nd; i++)
		ck_assert_str_eq(r.paths[i], demo_paths[i]);
	ck_assert_uint_eq(eb_layer_builder_count(b), nd);
	ck_assert_ptr_nonnull(r.staging);
	ck_assert(strncmp(r.staging, staging, strlen(staging)) == 0);

	write_and_read(b, tmp, &t, NULL);
	/* No bytecode, ever. */
	for (size_t i = 0; i < t.n; i++) {
		ck_assert_ptr_null(strstr(t.f[i].path, "__pycache__"));
		ck_assert(!strstr(t.f[i].path, ".pyc"));
	}
	/* Launchers: pip's template. */
	f = tar_find(&t, "/usr/local/bin/demo");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->data.ptr, LAUNCHER("/usr/local/bin/python3.11", "demo_pkg.cli", "main", "main"));
	ck_assert_uint_eq(f->mode, 0755);
	f = tar_find(&t, "/usr/local/bin/demo-tool2");
	ck_assert_str_eq(f->data.ptr,
			 LAUNCHER("/usr/local/bin/python3.11", "demo_pkg.cli", "Tool", "Tool.run"));
	f = tar_find(&t, "/usr/local/bin/demo-gui");
	ck_assert_str_eq(f->data.ptr, LAUNCHER("/usr/local/bin/python3.11", "demo_pkg.gui", "main", "main"));
	/* .data/scripts: "#!python" lines replaced, everything executable. */
	f = tar_find(&t, "/usr/local/bin/demo-tool");
	ck_assert_str_eq(f->data.ptr, "#!/usr/local/bin/python3.11\nprint('tool')\n");
	ck_assert_uint_eq(f->mode, 0755);
	f = tar_find(&t, "/usr/local/bin/demo-w");
	ck_assert_str_eq(f->data.ptr, "#!/usr/local/bin/python3.11\nprint('w')\n");
	f = tar_find(&t, "/usr/local/bin/plain.sh");
	ck_assert_str_eq(f->data.ptr, "#!/bin/sh\necho plain\n");
	ck_assert_uint_eq(f->mode, 0755);
	/* Other files: content as in the wheel, modes from the zip. */
	f = tar_find(&t, SITE "/demo_pkg/cli.py");
	ck_assert_uint_eq(f->mode, 0755);
	f = tar_find(&t, SITE "/demo_pkg/gui.py");
	ck_assert_uint_eq(f->mode, 0644);
	ck_assert_str_eq(f->data.ptr, "def main():\n    return 0\n");
	f = tar_find(&t, "/usr/local/include/python3.11/demo-pkg/demo.h");
	ck_assert_str_eq(f->data.ptr, "#define DEMO 1\n");
	f = tar_find(&t, "/usr/local/share/demo/readme.txt");
	ck_assert_str_eq(f->data.ptr, "readme\n");
	/* dist-info additions */
	f = tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/INSTALLER");
	ck_assert_str_eq(f->data.ptr, "envbuild\n");
	f = tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/REQUESTED");
	ck_assert_uint_eq(f->data.len, 0);
	f = tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/direct_url.json");
	ck_assert_ptr_null(strstr(f->data.ptr, "secret"));
	ck_assert_ptr_null(strstr(f->data.ptr, "user"));
	ck_assert_ptr_eq(strstr(f->data.ptr, "{\"archive_info\": {\"hash\": \"sha256="), f->data.ptr);
	ck_assert_ptr_nonnull(strstr(f->data.ptr,
				     "\"url\": \"https://files.example/demo_pkg-1.2.0-py3-none-any.whl\"}"));
	check_record(&t, SITE, "demo_pkg-1.2.0.dist-info");
	f = tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/RECORD");
	ck_assert(has_line(f->data.ptr, "../../../bin/demo,sha256="));
	ck_assert(has_line(f->data.ptr, "\"demo_pkg/data,file.txt\",sha256="));
	ck_assert(has_line(f->data.ptr, "demo_pkg-1.2.0.dist-info/RECORD,,\n"));

	tar_release(&t);
	eb_wheel_result_release(&r);
	eb_layer_builder_free(b);
	rm_rf(tmp);
}
END_TEST

/* Same wheel, same options: the same layer bytes; RECORD sorted. */
START_TEST(install_deterministic)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, "good");
	char d1[EB_DIGEST_STR_LEN + 1], d2[EB_DIGEST_STR_LEN + 1];
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_error *err = NULL;
	struct tarlist t;
	const struct tfile *f;

	o.staging_dir = tmp;
	for (int i = 0; i < 2; i++) {
		struct eb_layer_builder *b = eb_layer_builder_new();
		struct eb_wheel_result r;
		ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), 0);
		write_and_read(b, tmp, &t, i ? d2 : d1);
		if (i == 0) {
			struct lines ls;
			f = tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/RECORD");
			split_lines(f->data.ptr, &ls);
			for (size_t j = 1; j < ls.n; j++) {
				const char *a = ls.l[j - 1] + (ls.l[j - 1][0] == '"');
				const char *c = ls.l[j] + (ls.l[j][0] == '"');
				ck_assert_msg(strcmp(a, c) < 0, "RECORD not sorted at '%s'", c);
			}
			lines_release(&ls);
			/* No REQUESTED or direct_url.json unless asked for. */
			ck_assert_ptr_null(tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/REQUESTED"));
			ck_assert_ptr_null(
				tar_find(&t, SITE "/demo_pkg-1.2.0.dist-info/direct_url.json"));
		}
		tar_release(&t);
		eb_wheel_result_release(&r);
		eb_layer_builder_free(b);
	}
	ck_assert_str_eq(d1, d2);
	rm_rf(tmp);
}
END_TEST

/* Members left in the wheel (stage_max 1: every one that is not a .py,
 * a script or a parsed .dist-info file) give the same layer as staged
 * copies; a wheel changed before the write fails the write. */
START_TEST(install_members_from_wheel)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, "good");
	eb_autofree char *copy = eb_xasprintf("%s/copy.whl", tmp);
	eb_autofree char *cmd = eb_xasprintf("cp '%s' '%s'", whl, copy);
	char d1[EB_DIGEST_STR_LEN + 1], d2[EB_DIGEST_STR_LEN + 1];
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_error *err = NULL;
	struct tarlist t;

	o.staging_dir = tmp;
	ck_assert_int_eq(system(cmd), 0);
	for (int i = 0; i < 2; i++) {
		struct eb_layer_builder *b = eb_layer_builder_new();
		struct eb_wheel_result r;
		o.stage_max = i ? 1 : 0;
		ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), 0);
		write_and_read(b, tmp, &t, i ? d2 : d1);
		tar_release(&t);
		eb_wheel_result_release(&r);
		eb_layer_builder_free(b);
	}
	ck_assert_str_eq(d1, d2);
	{
		struct eb_layer_builder *b = eb_layer_builder_new();
		struct eb_layer_options lo = EB_LAYER_OPTIONS_INIT;
		struct eb_layer_result res;
		struct eb_blobstore *bs = NULL;
		struct eb_wheel_result r;
		eb_autofree char *root = eb_xasprintf("%s/blobs2", tmp);

		o.stage_max = 1;
		o.filename = eb_path_basename(whl);
		ck_assert_int_eq(eb_wheel_install(b, copy, &SCHEME, &o, &r, &err), 0);
		ck_assert_int_eq(truncate(copy, 100), 0);
		ck_assert_int_eq(eb_blobstore_open(&bs, root, &err), 0);
		ck_assert_int_lt(eb_layer_write(b, &lo, bs, &res, &err), 0);
		ck_assert_ptr_nonnull(err);
		eb_error_free(err);
		eb_blobstore_free(bs);
		eb_wheel_result_release(&r);
		eb_layer_builder_free(b);
	}
	rm_rf(tmp);
}
END_TEST

/* Root-Is-Purelib: false -> the root and the dist-info go to platlib; a
 * long or spaced interpreter gets the /bin/sh trick. */
START_TEST(install_platlib_shebangs)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, "platlib");
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_scheme s = SCHEME;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;
	struct tarlist t;
	const struct tfile *f;

	s.purelib = "/opt/pure/";
	s.platlib = "/opt//plat";
	s.interpreter = "/opt/my python/bin/python3";
	o.staging_dir = tmp;
	ck_assert_msg(eb_wheel_install(b, whl, &s, &o, &r, &err) == 0, "%s", err->msg);
	ck_assert_int_eq(r.wheel.root_is_purelib, 0);
	ck_assert_str_eq(r.dist_info, "/opt/plat/demo_pkg-1.2.0.dist-info");
	write_and_read(b, tmp, &t, NULL);
	ck_assert_ptr_nonnull(tar_find(&t, "/opt/plat/demo_pkg/cli.py"));
	ck_assert_ptr_nonnull(tar_find(&t, "/opt/pure/demo_extra.py"));
	f = tar_find(&t, "/opt/plat/demo_pkg-1.2.0.dist-info/RECORD");
	ck_assert(has_line(f->data.ptr, "../pure/demo_extra.py,sha256="));
	ck_assert(has_line(f->data.ptr, "../../usr/local/bin/demo,sha256="));
	f = tar_find(&t, "/usr/local/bin/demo");
	ck_assert_ptr_eq(strstr(f->data.ptr, "#!/bin/sh\n'''exec' \"/opt/my python/bin/python3\" "
					     "\"$0\" \"$@\"\n' '''\n# -*- coding: utf-8 -*-\n"),
			 f->data.ptr);
	f = tar_find(&t, "/usr/local/bin/demo-tool");
	ck_assert_str_eq(f->data.ptr, "#!/bin/sh\n'''exec' \"/opt/my python/bin/python3\" "
				      "\"$0\" \"$@\"\n' '''\nprint('tool')\n");
	tar_release(&t);
	eb_wheel_result_release(&r);
	eb_layer_builder_free(b);

	/* 124 bytes still fit "#!" + path + "\n" in 127; 125 do not. */
	{
		char longp[200];
		memset(longp, 'p', sizeof(longp));
		longp[0] = '/';
		for (int len = 124; len <= 125; len++) {
			longp[len] = '\0';
			b = eb_layer_builder_new();
			s = SCHEME;
			s.interpreter = longp;
			ck_assert_int_eq(eb_wheel_install(b, whl, &s, &o, &r, &err), 0);
			write_and_read(b, tmp, &t, NULL);
			f = tar_find(&t, "/usr/local/bin/demo");
			if (len == 124) {
				ck_assert(f->data.ptr[0] == '#' && f->data.ptr[1] == '!' &&
					  f->data.ptr[2] == '/' && f->data.ptr[126] == '\n');
			} else {
				ck_assert_ptr_eq(strstr(f->data.ptr, "#!/bin/sh\n'''exec' /ppp"),
						 f->data.ptr);
			}
			tar_release(&t);
			eb_wheel_result_release(&r);
			eb_layer_builder_free(b);
			longp[len] = 'p';
		}
	}
	rm_rf(tmp);
}
END_TEST

START_TEST(install_warn_newer_minor)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, "wheel_v19");
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;

	o.staging_dir = tmp;
	ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), 0);
	ck_assert_uint_eq(r.nwarnings, 1);
	ck_assert_ptr_nonnull(strstr(r.warnings[0], "Wheel-Version 1.9"));
	ck_assert_uint_gt(eb_layer_builder_count(b), 0);
	eb_wheel_result_release(&r);
	eb_layer_builder_free(b);
	rm_rf(tmp);
}
END_TEST

/* Wheels that are unusual but valid install. */
static const char *const odd_but_valid[] = { "sha512", "utf8" };

START_TEST(install_odd_but_valid)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, odd_but_valid[_i]);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;
	struct tarlist t;

	o.staging_dir = tmp;
	ck_assert_msg(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err) == 0, "%s", err->msg);
	write_and_read(b, tmp, &t, NULL);
	check_record(&t, SITE, "demo_pkg-1.2.0.dist-info");
	if (strcmp(odd_but_valid[_i], "utf8") == 0)
		ck_assert_ptr_nonnull(
			tar_find(&t, SITE "/demo_pkg/donn\xc3\xa9""es-\xe6\x97\xa5\xe6\x9c\xac.txt"));
	tar_release(&t);
	eb_wheel_result_release(&r);
	eb_layer_builder_free(b);
	rm_rf(tmp);
}
END_TEST

/* ---- hostile wheels ---------------------------------------------------------- */

static const struct {
	const char *variant;
	int code;
	const char *msg;
} hostile[] = {
	{ "traversal", EB_EINVALID, "path '../../etc/x' climbs out of the install directory" },
	{ "absolute", EB_EINVALID, "path '/etc/x' is absolute" },
	{ "backslash", EB_EINVALID, "contains a backslash" },
	{ "dotdir", EB_EINVALID, "has a '.' component" },
	/* names tar/OCI clients cannot unpack, or that mean something else */
	{ "longname", EB_EINVALID, "has a component longer than 255 bytes" },
	{ "deeppath", EB_EINVALID, "is longer than 3072 bytes" },
	{ "newline", EB_EINVALID, "contains a control character" },
	{ "whiteout", EB_EINVALID, "names a whiteout file" },
	{ "symlink", EB_EINVALID, "'demo_pkg/link' is a symlink" },
	{ "hash_mismatch", EB_EINVALID, "'demo_pkg/gui.py' does not match its RECORD hash" },
	{ "size_mismatch", EB_EINVALID, "'demo_pkg/gui.py' is 25 bytes but RECORD says 26" },
	{ "md5", EB_EINVALID, "does not use sha256 or stronger" },
	{ "unlisted", EB_EINVALID, "'demo_pkg/gui.py' is not listed in RECORD" },
	{ "missing", EB_EINVALID, "RECORD lists 'demo_pkg/gone.py', which is not in the wheel" },
	{ "no_record", EB_EINVALID, "has no RECORD" },
	{ "unknown_data_key", EB_EINVALID, "unknown .data key 'lib'" },
	{ "other_data_dir", EB_EINVALID, "not named after the wheel" },
	{ "ep_slash", EB_EINVALID, "'../../evil' contains a path separator" },
	{ "ep_dot", EB_EINVALID, "'.hidden' starts with '.'" },
	{ "ep_inject", EB_EINVALID, "invalid entry point" },
	{ "wheel_v2", EB_EINVALID, "unsupported Wheel-Version 2.0" },
	{ "two_distinfo", EB_EINVALID, "more than one .dist-info directory" },
	{ "distinfo_mismatch", EB_EINVALID, "does not match the file name" },
	{ "metadata_mismatch", EB_EINVALID, "METADATA says 'other-pkg'" },
	{ "duplicate", EB_EINVALID, "'demo_pkg/gui.py' appears twice" },
	{ "collision", EB_EINVALID, "two files would be installed at" },
	{ "badname", EB_EINVALID, "'demo_pkg.whl' is not a wheel file name" },
	{ "not_utf8", EB_EINVALID, "is not ASCII and not marked UTF-8" },
	{ "local_mismatch", EB_EINVALID, "local headers do not match its central directory" },
	{ "bomb", EB_ETOOBIG, "'demo_pkg/zeros.bin' expands more than 200 times" },
};

/* CPU seconds this process has used (user + system). */
static double cpu_seconds(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

START_TEST(install_hostile)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, hostile[_i].variant);
	eb_autofree char *staging = eb_xasprintf("%s/staging", tmp);
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;
	double cpu0;

	ck_assert_int_eq(mkdir(staging, 0755), 0);
	o.staging_dir = staging;
	cpu0 = cpu_seconds();
	ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), -hostile[_i].code);
	ck_assert_msg(strstr(err->msg, hostile[_i].msg), "%s: %s", hostile[_i].variant, err->msg);
	ck_assert_ptr_eq(strstr(err->msg, "installing '"), err->msg);
	/* Nothing added, nothing returned, nothing left in the staging dir. */
	ck_assert_uint_eq(eb_layer_builder_count(b), 0);
	ck_assert_uint_eq(r.npaths, 0);
	ck_assert_ptr_null(r.metadata.name);
	ck_assert_uint_eq(count_files(staging), 0);
	/* The 2 GiB bomb is stopped after about a megabyte: CPU time, which
	 * a loaded machine does not change (inflating 2 GiB takes seconds
	 * natively, minutes under valgrind; a megabyte, milliseconds). */
	ck_assert_double_lt(cpu_seconds() - cpu0, 5.0);
	eb_error_free(err);
	eb_layer_builder_free(b);
	rm_rf(tmp);
}
END_TEST

/* The configurable limits, on the good wheel. */
START_TEST(install_limits)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *whl = mkwheel(tmp, "good");
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;

	o.staging_dir = tmp;
	o.max_entries = 3;
	ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), -EB_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(err->msg, "more than 3 entries"));
	eb_error_clear(&err);
	o.max_entries = 0;
	o.max_total_size = 100;
	ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), -EB_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(err->msg, "more than 100 bytes when extracted"));
	eb_error_clear(&err);
	/* A bad scheme or options are refused before reading anything. */
	o.max_total_size = 0;
	{
		struct eb_wheel_scheme s = SCHEME;
		s.scripts = "usr/bin";
		ck_assert_int_eq(eb_wheel_install(b, whl, &s, &o, &r, &err), -EB_EINVALID);
		ck_assert_ptr_nonnull(strstr(err->msg, "'scripts' must be absolute"));
		eb_error_clear(&err);
		s = SCHEME;
		s.interpreter = "/usr/bin/python$(id)";
		ck_assert_int_eq(eb_wheel_install(b, whl, &s, &o, &r, &err), -EB_EINVALID);
		eb_error_clear(&err);
	}
	o.staging_dir = NULL;
	ck_assert_int_eq(eb_wheel_install(b, whl, &SCHEME, &o, &r, &err), -EB_EINVALID);
	eb_error_clear(&err);
	o.staging_dir = tmp;
	ck_assert_int_eq(eb_wheel_install(b, "/nonexistent/demo_pkg-1.2.0-py3-none-any.whl",
					  &SCHEME, &o, &r, &err),
			 -EB_EIO);
	eb_error_clear(&err);
	/* A cache file name with the real name given separately. */
	{
		eb_autofree char *cached = eb_xasprintf("%s/blob.bin", tmp);
		ck_assert_int_eq(rename(whl, cached), 0);
		o.filename = "demo_pkg-1.2.0-py3-none-any.whl";
		ck_assert_int_eq(eb_wheel_install(b, cached, &SCHEME, &o, &r, &err), 0);
		eb_wheel_result_release(&r);
	}
	eb_layer_builder_free(b);
	rm_rf(tmp);
}
END_TEST

/* ---- the Debian wheels, against Debian's pip ---------------------------------- */

struct fileset {
	char **paths; /* absolute */
	size_t n, cap;
};

static int walk_root_len;
static struct fileset *walk_set;

static int walk_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode)) {
		EB_ALLOC_GROW(walk_set->paths, walk_set->n + 1, walk_set->cap);
		walk_set->paths[walk_set->n++] = eb_xstrdup(path + walk_root_len);
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int ignored_path(const char *p)
{
	return strstr(p, "__pycache__") || strstr(p, ".pyc") ||
	       strstr(p, ".dist-info/direct_url.json");
}

static void read_file(const char *path, struct eb_buf *out)
{
	struct eb_error *err = NULL;
	eb_buf_init(out, 0);
	ck_assert_int_eq(eb_fs_read_file(out, path, 0, &err), 0);
}

/* RECORD lines minus those for files pip and envbuild write differently. */
static void record_lines(const char *text, struct fileset *out)
{
	struct lines ls;

	memset(out, 0, sizeof(*out));
	split_lines(text, &ls);
	for (size_t i = 0; i < ls.n; i++) {
		const char *l = ls.l[i];
		/* pip also keeps the wheel's row of a .data/scripts wrapper it
		 * skipped, a file that does not exist. */
		if (strstr(l, ".dist-info/INSTALLER,") || strstr(l, ".dist-info/direct_url.json,") ||
		    strstr(l, ".pyc,") || strstr(l, ".data/scripts/"))
			continue;
		EB_ALLOC_GROW(out->paths, out->n + 1, out->cap);
		out->paths[out->n++] = eb_xstrdup(l);
	}
	lines_release(&ls);
	qsort(out->paths, out->n, sizeof(*out->paths), cmp_str);
}

static void fileset_release(struct fileset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	memset(s, 0, sizeof(*s));
}

static void compare_with_pip(const char *whl)
{
	eb_autofree char *tmp = eb_test_tmpdir();
	eb_autofree char *root = eb_xasprintf("%s/pip", tmp);
	eb_autofree char *cmd = NULL;
	eb_autofree char *site = NULL;
	eb_autofree char *headers = NULL;
	eb_autofree char *data = NULL;
	struct fileset pipset = { NULL, 0, 0 }, ours = { NULL, 0, 0 };
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_wheel_options o = EB_WHEEL_OPTIONS_INIT;
	struct eb_wheel_scheme s = SCHEME;
	struct eb_wheel_result r;
	struct eb_error *err = NULL;
	struct tarlist t;
	size_t k = 0;

	/* Debian's pip maps --prefix /usr to /usr/local/lib/python3.X/
	 * dist-packages and /usr/local/bin (its posix_local scheme; --prefix
	 * /usr/local would give /usr/local/local/...).  We install into
	 * whatever directories pip chose. */
	cmd = eb_xasprintf("PIP_CONFIG_FILE=/dev/null PYTHONDONTWRITEBYTECODE=1 "
			   "/usr/bin/python3 -m pip install -q --no-deps --no-compile --no-index "
			   "--ignore-installed --disable-pip-version-check --root '%s' --prefix /usr "
			   "'%s' >'%s/pip.log' 2>&1",
			   root, whl, tmp);
	ck_assert_msg(run(cmd) == 0, "pip failed for %s", whl);
	walk_root_len = (int)strlen(root);
	walk_set = &pipset;
	ck_assert_int_eq(nftw(root, walk_cb, 16, FTW_PHYS), 0);
	qsort(pipset.paths, pipset.n, sizeof(*pipset.paths), cmp_str);
	for (size_t i = 0; i < pipset.n && !site; i++) {
		if (strstr(pipset.paths[i], ".dist-info/RECORD")) {
			eb_autofree char *di = eb_path_dirname(pipset.paths[i]);
			site = eb_path_dirname(di);
		}
	}
	ck_assert_ptr_nonnull(site);
	s.purelib = s.platlib = site;
	s.scripts = "/usr/local/bin";
	/* The demo wheel's headers and data: wherever pip put them. */
	for (size_t i = 0; i < pipset.n; i++) {
		const char *p = pipset.paths[i];
		if (has_suffix(p, "/demo.h")) {
			free(headers);
			headers = eb_path_dirname(p);
		} else if (has_suffix(p, "/share/demo/readme.txt")) {
			free(data);
			data = eb_xstrndup(p, strlen(p) - strlen("/share/demo/readme.txt"));
		}
	}
	if (headers)
		s.headers = headers;
	if (data)
		s.data = data;
	s.interpreter = "/usr/bin/python3"; /* what pip wrote, sys.executable */
	o.staging_dir = tmp;
	o.requested = 1; /* pip writes REQUESTED for what the user named */
	ck_assert_msg(eb_wheel_install(b, whl, &s, &o, &r, &err) == 0, "%s", err->msg);
	write_and_read(b, tmp, &t, NULL);
	for (size_t i = 0; i < t.n; i++)
		if (t.f[i].type == AE_IFREG) {
			EB_ALLOC_GROW(ours.paths, ours.n + 1, ours.cap);
			ours.paths[ours.n++] = eb_xasprintf("/%s", t.f[i].path);
		}
	qsort(ours.paths, ours.n, sizeof(*ours.paths), cmp_str);

	/* Same file set, apart from bytecode and direct_url.json. */
	for (size_t i = 0; i < pipset.n; i++) {
		if (ignored_path(pipset.paths[i]))
			continue;
		while (k < ours.n && ignored_path(ours.paths[k]))
			k++;
		ck_assert_msg(k < ours.n, "envbuild lacks '%s'", pipset.paths[i]);
		ck_assert_str_eq(ours.paths[k], pipset.paths[i]);
		k++;
	}
	ck_assert_uint_eq(k, ours.n);

	/* Same contents, apart from INSTALLER and RECORD; RECORD has the same
	 * lines apart from INSTALLER's. */
	for (size_t i = 0; i < ours.n; i++) {
		const char *p = ours.paths[i];
		const struct tfile *f = tar_find(&t, p);
		eb_autofree char *pp = eb_xasprintf("%s%s", root, p);
		struct eb_buf pipdata;

		if (ignored_path(p) || strstr(p, ".dist-info/INSTALLER"))
			continue;
		read_file(pp, &pipdata);
		if (strstr(p, ".dist-info/RECORD")) {
			struct fileset a, bl;
			record_lines(f->data.ptr, &a);
			record_lines(pipdata.ptr, &bl);
			ck_assert_uint_eq(a.n, bl.n);
			for (size_t j = 0; j < a.n; j++)
				ck_assert_str_eq(a.paths[j], bl.paths[j]);
			fileset_release(&a);
			fileset_release(&bl);
		} else {
			ck_assert_msg(f->data.len == pipdata.len &&
					      memcmp(f->data.ptr, pipdata.ptr, pipdata.len) == 0,
				      "'%s' differs from pip's", p);
		}
		eb_buf_release(&pipdata);
	}
	ck_assert_uint_eq(eb_layer_builder_count(b), r.npaths);

	tar_release(&t);
	fileset_release(&pipset);
	fileset_release(&ours);
	eb_wheel_result_release(&r);
	eb_layer_builder_free(b);
	rm_rf(tmp);
}

START_TEST(debian_wheels_match_pip)
{
	glob_t g = { 0 };
	size_t n = 0;

	if (glob("/usr/share/python-wheels/*.whl", 0, NULL, &g) != 0 ||
	    run("/usr/bin/python3 -m pip --version >/dev/null 2>&1") != 0) {
		if (g.gl_pathv)
			globfree(&g);
		EB_TEST_SKIP("no Debian wheels in /usr/share/python-wheels or no pip");
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *base = strrchr(g.gl_pathv[i], '/') + 1;
		if (strncmp(base, "pip-", 4) && strncmp(base, "setuptools-", 11) &&
		    strncmp(base, "wheel-", 6))
			continue;
		compare_with_pip(g.gl_pathv[i]);
		n++;
	}
	globfree(&g);
	ck_assert_uint_ge(n, 1);
}
END_TEST

/* The demo wheel too: launchers, "#!python" scripts, skipped wrapper,
 * data, headers, a name with a comma. */
START_TEST(demo_wheel_matches_pip)
{
	eb_autofree char *tmp = NULL;
	eb_autofree char *whl = NULL;

	if (run("/usr/bin/python3 -m pip --version >/dev/null 2>&1") != 0)
		EB_TEST_SKIP("no pip");
	tmp = eb_test_tmpdir();
	whl = mkwheel(tmp, "good");
	compare_with_pip(whl);
	rm_rf(tmp);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("wheel");
	TCase *tm = tcase_create("metadata");
	TCase *ti = tcase_create("install");
	TCase *th = tcase_create("hostile");
	TCase *td = tcase_create("debian");

	tcase_add_test(tm, metadata_core);
	tcase_add_test(tm, metadata_versions);
	tcase_add_loop_test(tm, metadata_bad, 0, (int)(sizeof(bad_metadata) / sizeof(bad_metadata[0])));
	tcase_add_test(tm, metadata_caps);
	tcase_add_test(tm, metadata_wheel);
	tcase_add_test(tm, entry_points_ok);
	tcase_add_loop_test(tm, entry_points_bad, 0, (int)(sizeof(bad_eps) / sizeof(bad_eps[0])));
	suite_add_tcase(s, tm);

	tcase_set_timeout(ti, 60);
	tcase_add_test(ti, install_demo);
	tcase_add_test(ti, install_deterministic);
	tcase_add_test(ti, install_members_from_wheel);
	tcase_add_test(ti, install_platlib_shebangs);
	tcase_add_test(ti, install_warn_newer_minor);
	tcase_add_loop_test(ti, install_odd_but_valid, 0,
			    (int)(sizeof(odd_but_valid) / sizeof(odd_but_valid[0])));
	tcase_add_test(ti, install_limits);
	suite_add_tcase(s, ti);

	tcase_set_timeout(th, 60);
	tcase_add_loop_test(th, install_hostile, 0, (int)(sizeof(hostile) / sizeof(hostile[0])));
	suite_add_tcase(s, th);

	tcase_set_timeout(td, 300);
	tcase_add_test(td, debian_wheels_match_pip);
	tcase_add_test(td, demo_wheel_matches_pip);
	suite_add_tcase(s, td);
	return s;
}

EB_TEST_MAIN(make_suite)
