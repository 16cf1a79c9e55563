/*
 * check_formats.c - pin rules for pyproject.toml (PEP 621, 735, 518),
 * PEP 751 pylock.toml, uv.lock, poetry.lock, Pipfile.lock and conda
 * environment files / match-specs, and recognition of formats by name.
 *
 * Each case is a small file written from the format's specification and
 * the findings expected from it, as "line:col severity rule" strings in
 * file order.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pin/conda.h"
#include "pin/formats.h"
#include "pin/lockfiles.h"
#include "pin/pyproject.h"
#include "pin/reqfile.h"
#include "lock/yamlimages.h"
#include "stage/pylock.h"
#include "util/toml.h"
#include "testutil.h"
#include "util/diag.h"

/* "line:col E|W RULE" of every finding, sorted, joined by spaces. */
static char *render(struct eb_diag_list *l)
{
	size_t cap = 64 + l->n * 64, len = 0;
	char *s = calloc(1, cap);

	eb_diag_list_sort(l);
	for (size_t i = 0; i < l->n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%u:%u %c %s", i ? " " : "",
					l->items[i].line, l->items[i].col,
					l->items[i].severity == EB_SEV_ERROR ? 'E' : 'W', l->items[i].rule);
	return s;
}

static void expect(struct eb_diag_list *l, const char *want, const char *what)
{
	char *got = render(l);
	if (strcmp(got, want) != 0) {
		for (size_t i = 0; i < l->n; i++)
			fprintf(stderr, "  %u:%u %s %s\n", l->items[i].line, l->items[i].col,
				l->items[i].rule, l->items[i].msg);
	}
	ck_assert_msg(strcmp(got, want) == 0, "%s:\ngot  %s\nwant %s", what, got, want);
	free(got);
	eb_diag_list_release(l);
}

/* ---- pyproject.toml -------------------------------------------------------- */

static const char pyproject[] =
	"[build-system]\n"                                        /* 1 */
	"requires = [\"setuptools>=61\", \"wheel==0.42.0\"]\n"    /* 2 */
	"\n"                                                      /* 3 */
	"[project]\n"                                             /* 4 */
	"name = \"app\"\n"                                        /* 5 */
	"dependencies = [\n"                                      /* 6 */
	"  \"numpy==1.26.4\",\n"                                  /* 7 */
	"  \"pandas>=2\",\n"                                      /* 8 */
	"  'torch',\n"                                            /* 9 */
	"  \"requests==2.31.0 ; python_version >= '3.8'\",\n"    /* 10 */
	"]\n"                                                     /* 11 */
	"\n"                                                      /* 12 */
	"[project.optional-dependencies]\n"                       /* 13 */
	"gpu = [\"cupy-cuda12x==13.0.0\", \"triton~=2.1\"]\n"     /* 14 */
	"\n"                                                      /* 15 */
	"[dependency-groups]\n"                                   /* 16 */
	"test = [\"pytest==8.0.0\", {include-group = \"lint\"}]\n" /* 17 */
	"lint = [\"ruff\"]\n"                                     /* 18 */
	"bad = [{include-group = \"nope\"}, 3]\n"                 /* 19 */
	"[tool.other]\n"                                          /* 20 */
	"dependencies = [\"ignored\"]\n";                         /* 21 */

/* Application defaults: [project] tables and groups are errors,
 * build-system a warning; each at the string's own column. */
START_TEST(pyproject_defaults)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;

	ck_assert_int_eq(eb_pyproject_check("pyproject.toml", pyproject, strlen(pyproject), &l, NULL), 0);
	expect(&l, "2:24 W EB202 8:10 E EB202 9:4 E EB201 14:39 E EB202 18:10 E EB201 19:25 E EB400 "
		   "19:34 E EB400",
	       "pyproject defaults");
}
END_TEST

/* [tool.envbuild] pinned names the tables that must be pinned; the rest
 * are warnings (a library's ranges). */
START_TEST(pyproject_pinned_setting)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *lib = "[project]\n"
			  "dependencies = [\"numpy>=1.26\"]\n"
			  "optional-dependencies.gpu = [\"cupy\"]\n"
			  "optional-dependencies.docs = [\"sphinx\"]\n"
			  "[build-system]\n"
			  "requires = [\"hatchling\"]\n"
			  "[tool.envbuild]\n"
			  "pinned = [\"optional-dependencies.gpu\", \"build-system\"]\n";

	eb_pyproject_check("pyproject.toml", lib, strlen(lib), &l, NULL);
	expect(&l, "2:23 W EB202 3:31 E EB201 4:32 W EB201 6:14 E EB201", "pinned setting");

	lib = "[project]\ndependencies = [\"numpy>=1.26\"]\n[tool.envbuild]\npinned = []\n";
	eb_pyproject_check("pyproject.toml", lib, strlen(lib), &l, NULL);
	expect(&l, "2:23 W EB202", "pinned = [] makes a library's ranges warnings");
}
END_TEST

START_TEST(pyproject_shapes)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t;

	/* a TOML syntax error is one finding at its position */
	t = "[project]\ndependencies = [\"numpy==1\"\n";
	eb_pyproject_check("p.toml", t, strlen(t), &l, NULL);
	expect(&l, "3:1 E EB400", "syntax error");

	t = "[project]\ndependencies = \"numpy==1\"\noptional-dependencies = []\n";
	eb_pyproject_check("p.toml", t, strlen(t), &l, NULL);
	expect(&l, "2:16 E EB400 3:25 E EB400", "wrong types");

	/* PEP 735: an include cycle is an error */
	t = "[dependency-groups]\na = [{include-group = \"b\"}]\nb = [{include-group = \"a\"}]\n";
	eb_pyproject_check("p.toml", t, strlen(t), &l, NULL);
	expect(&l, "2:1 E EB400 3:1 E EB400", "include cycle");

	/* invalid requirement: EB200 inside the string */
	t = "[project]\ndependencies = [\"numpy===\"]\n";
	eb_pyproject_check("p.toml", t, strlen(t), &l, NULL);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.items[0].rule, "EB200");
	ck_assert_uint_eq(l.items[0].line, 2);
	eb_diag_list_release(&l);

	/* dynamic dependencies and no tables: nothing to say */
	t = "[project]\nname = \"x\"\ndynamic = [\"dependencies\"]\n";
	eb_pyproject_check("p.toml", t, strlen(t), &l, NULL);
	expect(&l, "", "dynamic");
}
END_TEST

/* envbuild pin's inputs: dependencies, extras (a self-reference brings in
 * the other extra, a loop ends), groups with include-group (a diamond
 * gives each string once), names compared normalised, positions of each
 * string's first character; errors with their place. */
START_TEST(pyproject_pin_inputs)
{
	const char *t = "[project]\n"
			"name = \"My.App\"\n"
			"dependencies = [\"numpy>=1.24\"]\n"
			"[project.optional-dependencies]\n"
			"GPU = [\"my_app[all]\", \"cupy\"]\n"
			"all = [\"my-app[gpu]\", \"rich\"]\n"
			"[dependency-groups]\n"
			"test = [\"pytest\", {include-group = \"base\"}]\n"
			"lint = [\"ruff\", {include-group = \"base\"}]\n"
			"base = [\"tomli\"]\n"
			"Dev = [{include-group = \"test\"}, {include-group = \"lint\"}]\n";
	const char *extras[] = { "gpu" }, *groups[] = { "dev" }, *bad[] = { "nope" };
	struct eb_pyproject_input *in = NULL;
	struct eb_error *err = NULL;
	size_t n = 0;
	char got[512] = "";

	ck_assert_int_eq(eb_pyproject_inputs("pyproject.toml", t, strlen(t), extras, 1, groups, 1,
					     &in, &n, &err), 0);
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s@%u:%u", i ? " " : "",
			 in[i].text, in[i].line, in[i].col);
	ck_assert_str_eq(got, "numpy>=1.24@3:18 rich@6:24 cupy@5:24 pytest@8:10 tomli@10:10 "
			      "ruff@9:10");
	ck_assert_str_eq(in[3].where, "[dependency-groups].test");
	eb_pyproject_inputs_free(in, n);

	ck_assert_int_lt(eb_pyproject_inputs("pyproject.toml", t, strlen(t), NULL, 0, bad, 1, &in,
					     &n, &err), 0);
	ck_assert_ptr_null(in);
	ck_assert(strstr(err->msg, "no dependency group 'nope'") != NULL);
	eb_error_clear(&err);

	t = "[dependency-groups]\na = [\"x\", {include-group = \"b\"}]\nb = [{include-group = \"a\"}]\n";
	ck_assert_int_lt(eb_pyproject_inputs("p.toml", t, strlen(t), NULL, 0, (const char *[]){ "a" },
					     1, &in, &n, &err), 0);
	ck_assert(strstr(err->msg, "includes itself") != NULL);
	ck_assert_uint_eq(err->line, 3);
	eb_error_clear(&err);

	t = "[project]\ndependencies = [\"ok\", \"bad >>= 1\"]\n";
	ck_assert_int_lt(eb_pyproject_inputs("p.toml", t, strlen(t), NULL, 0, NULL, 0, &in, &n, &err),
			 0);
	ck_assert_str_eq(err->file, "p.toml");
	ck_assert_uint_eq(err->line, 2);
	ck_assert_uint_ge(err->col, 24);
	eb_error_clear(&err);

	/* a groups-only file (PEP 735 allows it) */
	t = "[dependency-groups]\ndev = [\"ruff\"]\n";
	ck_assert_int_eq(eb_pyproject_inputs("p.toml", t, strlen(t), NULL, 0,
					     (const char *[]){ "dev" }, 1, &in, &n, &err), 0);
	ck_assert_uint_eq(n, 1);
	eb_pyproject_inputs_free(in, n);
}
END_TEST

/* ---- pylock.toml (PEP 751) ------------------------------------------------- */

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char pylock[] =
	"lock-version = \"1.0\"\n"                                                    /* 1 */
	"environments = [\"sys_platform == 'linux'\", \"python_version >>> '3'\"]\n"  /* 2 */
	"requires-python = \">=3.11\"\n"                                             /* 3 */
	"created-by = \"test\"\n"                                                    /* 4 */
	"[[packages]]\n"                                                             /* 5 */
	"name = \"numpy\"\n"                                                         /* 6 */
	"version = \"1.26.4\"\n"                                                     /* 7 */
	"wheels = [{ url = \"https://h/numpy-1.26.4-cp311-none-any.whl\", size = 10, hashes = { sha256 = \"" H64 "\" } }]\n" /* 8 */
	"[[packages]]\n"                                                             /* 9 */
	"name = \"nohash\"\n"                                                        /* 10 */
	"version = \"1.0\"\n"                                                        /* 11 */
	"sdist = { url = \"https://h/nohash-1.0.tar.gz\", hashes = {} }\n"          /* 12 */
	"[[packages]]\n"                                                             /* 13 */
	"name = \"nover\"\n"                                                         /* 14 */
	"wheels = [{ url = \"https://h/x.whl\", hashes = { sha256 = \"" H64 "\" } }]\n" /* 15 */
	"[[packages]]\n"                                                             /* 16 */
	"name = \"md5\"\n"                                                           /* 17 */
	"version = \"2\"\n"                                                          /* 18 */
	"marker = \"os_name == \"\n"                                                 /* 19 */
	"wheels = [{ url = \"https://h/a.whl\", hashes = { md5 = \"abc\" } },\n"    /* 20 */
	"          { url = \"https://h/b.whl\", hashes = { sha256 = \"" H64 "\" } }]\n" /* 21 */
	"[[packages]]\n"                                                             /* 22 */
	"name = \"local\"\n"                                                         /* 23 */
	"directory = { path = \"./local\" }\n"                                       /* 24 */
	"[[packages]]\n"                                                             /* 25 */
	"name = \"fromgit\"\n"                                                       /* 26 */
	"vcs = { type = \"git\", url = \"https://h/r.git\", commit-id = \"abc123\" }\n"; /* 27 */

START_TEST(pylock_rules)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;

	eb_lockfile_check(EB_LOCKFILE_PYLOCK, "pylock.toml", pylock, strlen(pylock), &l, NULL);
	/* md5 alone on one wheel is a missing hash, even with a good one on
	 * another: every file that may install must be verifiable */
	expect(&l, "2:61 E EB404 10:1 E EB402 14:1 E EB401 17:1 E EB402 19:22 E EB404 23:1 E EB401",
	       "pylock");
}
END_TEST

static void export_pkg(struct eb_build_package *p, const char *name, const char *version,
		       const char *filename, const char *url, const char *sha256, int64_t size)
{
	memset(p, 0, sizeof(*p));
	p->name = (char *)name;
	p->version = (char *)version;
	p->filename = (char *)filename;
	p->url = (char *)url;
	strcpy(p->sha256, sha256);
	p->size = size;
}

/* `lock --pylock`: a two-platform target's packages as PEP 751 text that
 * envbuild's own checker accepts and its TOML reader reads back. */
START_TEST(pylock_export)
{
	static const char h1[] = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
	static const char h2[] = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
	static const char h3[] = "sha256:3333333333333333333333333333333333333333333333333333333333333333";
	struct eb_build_package amd[3], arm[2];
	struct eb_build_platform bp[2];
	struct eb_build_target t;
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	struct eb_toml_doc *doc = NULL;
	struct eb_error *err = NULL;
	struct eb_buf b;
	json_t *root, *pk, *w;

	memset(bp, 0, sizeof(bp));
	memset(&t, 0, sizeof(t));
	export_pkg(&amd[0], "common", "1.0", "common-1.0-py3-none-any.whl",
		   "https://h/common-1.0-py3-none-any.whl", h1, 10);
	export_pkg(&arm[0], "common", "1.0", "common-1.0-py3-none-any.whl",
		   "https://h/common-1.0-py3-none-any.whl", h1, 10);
	export_pkg(&amd[1], "np", "1.26.4", "np-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl",
		   "https://h/np-x86.whl", h2, 20);
	export_pkg(&arm[1], "np", "1.26.4", "np-1.26.4-cp311-cp311-manylinux_2_17_aarch64.whl",
		   "https://h/np-arm.whl", h3, 21);
	export_pkg(&amd[2], "only-x86", "2.0", "only_x86-2.0-py3-none-any.whl",
		   "wheels/only_x86-2.0-py3-none-any.whl", h3, 30);
	bp[0].platform = (char *)"linux/amd64";
	bp[0].packages = amd;
	bp[0].npackages = 3;
	bp[0].python = (char *)"3.11";
	bp[1].platform = (char *)"linux/arm64";
	bp[1].packages = arm;
	bp[1].npackages = 2;
	bp[1].python = (char *)"3.11";
	t.name = (char *)"app";
	t.platforms = bp;
	t.nplatforms = 2;

	eb_buf_init(&b, 0);
	eb_stage_pylock_render(&b, &t);
	eb_lockfile_check(EB_LOCKFILE_PYLOCK, "pylock.app.toml", b.ptr, b.len, &l, NULL);
	ck_assert_msg(l.n == 0, "the checker finds %zu problem(s) in:\n%s", l.n, b.ptr);
	ck_assert_int_eq(eb_toml_load(&doc, "pylock.app.toml", b.ptr, b.len, &err), 0);
	root = eb_toml_root(doc);
	ck_assert_str_eq(json_string_value(json_object_get(root, "lock-version")), "1.0");
	ck_assert_str_eq(json_string_value(json_object_get(root, "created-by")), "envbuild");
	ck_assert_str_eq(json_string_value(json_object_get(root, "requires-python")), "==3.11.*");
	ck_assert_uint_eq(json_array_size(json_object_get(root, "environments")), 2);
	pk = json_object_get(root, "packages");
	ck_assert_uint_eq(json_array_size(pk), 3);
	/* on every platform at one version: no marker, one wheel */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pk, 0), "name")), "common");
	ck_assert_ptr_null(json_object_get(json_array_get(pk, 0), "marker"));
	ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(pk, 0), "wheels")), 1);
	/* one version, a wheel per platform */
	w = json_object_get(json_array_get(pk, 1), "wheels");
	ck_assert_uint_eq(json_array_size(w), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(w, 0), "url")), "https://h/np-arm.whl");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(w, 0), "hashes"), "sha256")),
			 h3 + 7);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(w, 1), "size")), 20);
	/* one platform only: a marker; a wheel of the project: a path */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pk, 2), "marker")),
			 "platform_machine == 'x86_64'");
	w = json_array_get(json_object_get(json_array_get(pk, 2), "wheels"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(w, "path")), "wheels/only_x86-2.0-py3-none-any.whl");
	ck_assert_ptr_null(json_object_get(w, "url"));
	eb_toml_free(doc);
	eb_buf_release(&b);
	eb_diag_list_release(&l);
}
END_TEST

START_TEST(pylock_version)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t = "created-by = \"x\"\n";

	eb_lockfile_check(EB_LOCKFILE_PYLOCK, "pylock.toml", t, strlen(t), &l, NULL);
	expect(&l, "1:1 E EB403", "no lock-version");
	t = "lock-version = \"2.0\"\n";
	eb_lockfile_check(EB_LOCKFILE_PYLOCK, "pylock.toml", t, strlen(t), &l, NULL);
	expect(&l, "1:16 E EB403", "lock-version 2");
	t = "lock-version = \"1.3\"\npackages = []\n";
	eb_lockfile_check(EB_LOCKFILE_PYLOCK, "pylock.toml", t, strlen(t), &l, NULL);
	expect(&l, "", "an empty lock 1.x");
}
END_TEST

/* pylock.toml read as requirements (what lock and build install): one
 * NAME==VERSION ; MARKER entry per package with every file's hash */
START_TEST(pylock_as_requirements)
{
	char *dir = eb_test_tmpdir(), path[4096];
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	const struct eb_reqfile_entry *e;

	eb_test_write(dir, "pylock.toml", pylock);
	snprintf(path, sizeof(path), "%s/pylock.toml", dir);
	ck_assert_int_eq(eb_reqfile_load(&rf, path, &l, &err), 0);
	/* numpy and nohash are pinned by version; nover, local (directory)
	 * and fromgit (VCS) cannot be installed by version, md5's marker does
	 * not parse: four findings, two entries */
	ck_assert_uint_eq(eb_reqfile_count(rf), 2);
	e = eb_reqfile_get(rf, 0);
	ck_assert_str_eq(e->req.name, "numpy");
	ck_assert_str_eq(eb_requirement_pinned_version(&e->req), "1.26.4");
	ck_assert_uint_eq(e->req.nhashes, 1);
	ck_assert_str_eq(e->req.hashes[0].raw, "sha256:" H64);
	ck_assert_uint_eq(e->line, 6);
	ck_assert_str_eq(e->file, path);
	ck_assert_ptr_null(e->req.marker);
	e = eb_reqfile_get(rf, 1);
	ck_assert_str_eq(e->req.name, "nohash");
	ck_assert_uint_eq(e->req.nhashes, 0);
	ck_assert_uint_eq(eb_diag_list_count(&l, EB_SEV_ERROR), 4);
	eb_reqfile_free(rf);
	eb_diag_list_release(&l);

	/* a marker is kept; only usable hashes are added */
	eb_test_write(dir, "pylock.m.toml",
		      "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\n"
		      "marker = \"sys_platform == 'linux'\"\n"
		      "wheels = [{ url = \"https://h/a-1-py3-none-any.whl\", hashes = { md5 = \"x\", sha256 = \"" H64 "\" } }]\n");
	snprintf(path, sizeof(path), "%s/pylock.m.toml", dir);
	ck_assert_int_eq(eb_reqfile_load(&rf, path, &l, &err), 0);
	ck_assert_uint_eq(eb_reqfile_count(rf), 1);
	e = eb_reqfile_get(rf, 0);
	ck_assert_ptr_nonnull(e->req.marker);
	ck_assert_uint_eq(e->req.nhashes, 1);
	ck_assert_uint_eq(l.n, 0);
	eb_reqfile_free(rf);
	eb_diag_list_release(&l);

	/* not TOML: an error with the position, as for an unreadable file */
	eb_test_write(dir, "pylock.x.toml", "lock-version = \n");
	snprintf(path, sizeof(path), "%s/pylock.x.toml", dir);
	ck_assert_int_eq(eb_reqfile_load(&rf, path, &l, &err), -EB_EINVALID);
	ck_assert_ptr_null(rf);
	ck_assert_uint_eq(err->line, 1);
	eb_error_free(err);
	free(dir);
}
END_TEST

/* ---- uv.lock, poetry.lock, Pipfile.lock ------------------------------------ */

START_TEST(uv_lock)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"version = 1\n"                                                     /* 1 */
		"requires-python = \">=3.10\"\n"                                    /* 2 */
		"[[package]]\n"                                                     /* 3 */
		"name = \"app\"\n"                                                  /* 4 */
		"version = \"0.1.0\"\n"                                             /* 5 */
		"source = { editable = \".\" }\n"                                   /* 6 */
		"[[package]]\n"                                                     /* 7 */
		"name = \"anyio\"\n"                                                /* 8 */
		"version = \"4.0.0\"\n"                                             /* 9 */
		"source = { registry = \"https://pypi.org/simple\" }\n"             /* 10 */
		"sdist = { url = \"https://h/anyio-4.0.0.tar.gz\", hash = \"sha256:" H64 "\", size = 1 }\n"
		"wheels = [\n"                                                      /* 12 */
		"    { url = \"https://h/anyio-4.0.0-py3-none-any.whl\", hash = \"sha256:" H64 "\", size = 1 },\n"
		"]\n"                                                               /* 14 */
		"[[package]]\n"                                                     /* 15 */
		"name = \"bad\"\n"                                                  /* 16 */
		"version = \"1.0\"\n"                                               /* 17 */
		"source = { registry = \"https://pypi.org/simple\" }\n"             /* 18 */
		"wheels = [{ url = \"https://h/bad.whl\", hash = \"sha1:abc\" }, { url = \"https://h/bad2.whl\" }]\n"
		"[[package]]\n"                                                     /* 20 */
		"name = \"g\"\n"                                                    /* 21 */
		"version = \"0.1\"\n"                                               /* 22 */
		"source = { git = \"https://h/g.git?rev=main#0123abc\" }\n";        /* 23 */

	eb_lockfile_check(EB_LOCKFILE_UV, "uv.lock", t, strlen(t), &l, NULL);
	expect(&l, "16:1 E EB402", "uv.lock: one finding for the package, not per wheel");
}
END_TEST

START_TEST(poetry_lock)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"[[package]]\n"                                                     /* 1 */
		"name = \"certifi\"\n"                                              /* 2 */
		"version = \"2024.2.2\"\n"                                          /* 3 */
		"optional = false\n"                                                /* 4 */
		"python-versions = \">=3.6\"\n"                                     /* 5 */
		"files = [\n"                                                       /* 6 */
		"    {file = \"certifi-2024.2.2-py3-none-any.whl\", hash = \"sha256:" H64 "\"},\n"
		"]\n"                                                               /* 8 */
		"[[package]]\n"                                                     /* 9 */
		"name = \"old\"\n"                                                  /* 10 */
		"version = \"1.0\"\n"                                               /* 11 */
		"[[package]]\n"                                                     /* 12 */
		"name = \"nofiles\"\n"                                              /* 13 */
		"version = \"1.0\"\n"                                               /* 14 */
		"files = []\n"                                                      /* 15 */
		"[metadata]\n"                                                      /* 16 */
		"lock-version = \"2.0\"\n"                                          /* 17 */
		"[metadata.files]\n"                                                /* 18 */
		"old = [{file = \"old-1.0.tar.gz\", hash = \"sha256:" H64 "\"}]\n"; /* 19 */

	eb_lockfile_check(EB_LOCKFILE_POETRY, "poetry.lock", t, strlen(t), &l, NULL);
	expect(&l, "13:1 E EB402", "poetry.lock (1.x hashes in [metadata.files] count)");
}
END_TEST

START_TEST(pipfile_lock)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"{\n"                                                               /* 1 */
		"    \"_meta\": {\"hash\": {\"sha256\": \"x\"}},\n"                 /* 2 */
		"    \"default\": {\n"                                              /* 3 */
		"        \"requests\": {\"hashes\": [\"sha256:" H64 "\"], \"version\": \"==2.31.0\"},\n"
		"        \"nohash\": {\"hashes\": [], \"version\": \"==1.0\"},\n"   /* 5 */
		"        \"range\": {\"hashes\": [\"sha256:" H64 "\"], \"version\": \">=1\"}\n"
		"    },\n"                                                          /* 7 */
		"    \"develop\": {\n"                                              /* 8 */
		"        \"e\": {\"editable\": true, \"path\": \".\"}\n"            /* 9 */
		"    }\n"                                                           /* 10 */
		"}\n";

	eb_lockfile_check(EB_LOCKFILE_PIPFILE, "Pipfile.lock", t, strlen(t), &l, NULL);
	expect(&l, "5:9 E EB402 6:9 E EB401 9:9 E EB401", "Pipfile.lock");
	t = "{\"default\": [\n";
	eb_lockfile_check(EB_LOCKFILE_PIPFILE, "Pipfile.lock", t, strlen(t), &l, NULL);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.items[0].rule, "EB400");
	eb_diag_list_release(&l);
}
END_TEST

/* ---- conda ---------------------------------------------------------------- */

static const struct {
	const char *spec;
	int pinned;
} conda_specs[] = {
	{ "numpy=1.26.4=py311h64a7726_0", 1 },
	{ "numpy==1.26.4", 1 },
	{ "conda-forge::numpy==1.26.4", 1 },
	{ "numpy 1.26.4 py311h64a7726_0", 1 },
	{ "numpy 1.26.4", 1 },
	{ "numpy[version='==1.26.4']", 1 },
	{ "numpy", 0 },
	{ "numpy>=1.26", 0 },
	{ "numpy=1.26", 0 },
	{ "numpy=1.26.*", 0 },
	{ "numpy==1.26.*", 0 },
	{ "numpy 1.26.*", 0 },
	{ "numpy>=1.26,<2", 0 },
	{ "numpy=1.26|1.25", 0 },
	{ "numpy=1.26.4=", 0 },
	{ "numpy[version='>=1.26']", 0 },
	{ "numpy[build=py311*]", 0 },
	{ "conda-forge/linux-64::numpy", 0 },
	{ "numpy!=1.0", 0 },
};

START_TEST(conda_match_spec)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;

	eb_conda_check_spec(conda_specs[_i].spec, "env.yml", 3, 5, "dependencies", &l);
	ck_assert_msg((l.n == 0) == conda_specs[_i].pinned, "'%s': %zu findings, want %s",
		      conda_specs[_i].spec, l.n, conda_specs[_i].pinned ? "none" : "one");
	if (l.n) {
		ck_assert_uint_eq(l.n, 1);
		ck_assert_str_eq(l.items[0].rule, "EB410");
		ck_assert_uint_eq(l.items[0].line, 3);
		ck_assert_uint_eq(l.items[0].col, 5);
	}
	eb_diag_list_release(&l);
}
END_TEST

START_TEST(conda_env_file)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"name: ml\n"                                      /* 1 */
		"channels:\n"                                     /* 2 */
		"  - conda-forge\n"                               /* 3 */
		"dependencies:\n"                                 /* 4 */
		"  - python=3.11.8=hab00c5b_0_cpython\n"          /* 5 */
		"  - numpy\n"                                     /* 6 */
		"  - \"scipy>=1.11\"\n"                           /* 7 */
		"  - pandas=2.2\n"                                /* 8 */
		"  - pip==24.0\n"                                 /* 9 */
		"  - pip:\n"                                      /* 10 */
		"    - torch==2.2.1\n"                            /* 11 */
		"    - transformers>=4\n"                         /* 12 */
		"    - -e .\n"                                    /* 13 */
		"    - --extra-index-url https://h/simple\n";     /* 14 */

	eb_conda_check("environment.yml", t, strlen(t), &l, NULL);
	expect(&l, "6:5 E EB410 7:6 E EB410 8:5 E EB410 12:19 E EB202 13:7 E EB205", "environment.yml");
	t = "dependencies: numpy\n";
	eb_conda_check("environment.yml", t, strlen(t), &l, NULL);
	expect(&l, "1:15 E EB400", "dependencies not a list");
	t = "dependencies: [\n";
	eb_conda_check("environment.yml", t, strlen(t), &l, NULL);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.items[0].rule, "EB400");
	eb_diag_list_release(&l);
}
END_TEST

/* ---- YAML image references ------------------------------------------------ */

START_TEST(yaml_image_siblings)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"kind: Workflow\n"                                   /* 1 */
		"spec:\n"                                            /* 2 */
		"  image: busybox\n"                                 /* 3 */
		"---\n"                                              /* 4 */
		"items:\n"                                           /* 5 */
		"- { image: 'debian', tag: '9.1' }\n"                /* 6 */
		"- { image: 'alpine', tag: latest }\n"               /* 7 */
		"- image: python\n"                                  /* 8 */
		"  tag: 3.10\n"                                      /* 9 */
		"- image: ubuntu\n"                                  /* 10 */
		"  digest: sha256:" H64 "\n";                        /* 11 */

	/* Argo's loop items: image + sibling tag is one reference (3.10 as
	 * written, not the number 3.1); only the second document's latest
	 * and the first document's bare busybox are findings */
	eb_yamlimages_check("wf.yaml", t, strlen(t), &l);
	expect(&l, "3:10 E EB103 7:27 E EB104", "image with sibling tag");
}
END_TEST

START_TEST(yaml_helm_values)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"image:\n"                                           /* 1 */
		"  repository: kuberay/operator\n"                   /* 2 */
		"  tag: nightly\n"                                   /* 3 */
		"side:\n"                                            /* 4 */
		"  image:\n"                                         /* 5 */
		"    registry: ghcr.io\n"                            /* 6 */
		"    repository: org/side\n"                         /* 7 */
		"    tag: \"\"\n"                                  /* 8 */
		"other:\n"                                           /* 9 */
		"  image: {repository: redis, tag: latest}\n";       /* 10 */

	eb_yamlimages_check("values.yaml", t, strlen(t), &l);
	expect(&l, "7:17 E EB103 10:35 E EB104", "Helm image.repository + image.tag");
}
END_TEST

START_TEST(yaml_templates)
{
	struct eb_diag_list l = EB_DIAG_LIST_INIT;
	const char *t =
		"metadata:\n"                                        /* 1 */
		"  name: {{ include \"x.fullname\" . }}\n"         /* 2 */
		"spec:\n"                                            /* 3 */
		"  containers:\n"                                    /* 4 */
		"  - image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n"
		"  {{- if .Values.sidecar }}\n"                      /* 6 */
		"  - image: busybox\n"                               /* 7 */
		"  {{- end }}\n";                                    /* 8 */

	/* readable parts are checked; the template itself is a warning */
	eb_yamlimages_check("deploy.yaml", t, strlen(t), &l);
	expect(&l, "2:9 W EB105 7:12 E EB103", "Helm template");

	/* what still is not YAML is a warning, not a syntax error */
	t = "a: {{ .x }}\n{{ toYaml .Values.r | nindent 2 }}\n  b: [\n";
	eb_yamlimages_check("t.yaml", t, strlen(t), &l);
	ck_assert_uint_eq(eb_diag_list_count(&l, EB_SEV_ERROR), 0);
	ck_assert_uint_ge(eb_diag_list_count(&l, EB_SEV_WARNING), 2);
	eb_diag_list_release(&l);

	/* Argo parameters inside quotes are not a Helm template */
	t = "image: \"{{inputs.parameters.image}}\"\n";
	eb_yamlimages_check("argo.yaml", t, strlen(t), &l);
	expect(&l, "", "Argo parameter");
}
END_TEST

/* ---- names ------------------------------------------------------------- */

START_TEST(by_name)
{
	ck_assert_int_eq(eb_format_by_name("a/pyproject.toml"), EB_FORMAT_PYPROJECT);
	ck_assert_int_eq(eb_format_by_name("pylock.toml"), EB_FORMAT_LOCKFILE);
	ck_assert_int_eq(eb_format_by_name("x/pylock.gpu.toml"), EB_FORMAT_LOCKFILE);
	ck_assert_int_eq(eb_format_by_name("uv.lock"), EB_FORMAT_LOCKFILE);
	ck_assert_int_eq(eb_format_by_name("poetry.lock"), EB_FORMAT_LOCKFILE);
	ck_assert_int_eq(eb_format_by_name("Pipfile.lock"), EB_FORMAT_LOCKFILE);
	ck_assert_int_eq(eb_format_by_name("environment.yml"), EB_FORMAT_CONDA);
	ck_assert_int_eq(eb_format_by_name("environment.yaml"), EB_FORMAT_CONDA);
	ck_assert_int_eq(eb_format_by_name("environment-gpu.yml"), EB_FORMAT_CONDA);
	ck_assert_int_eq(eb_format_by_name("Cargo.toml"), EB_FORMAT_UNSUPPORTED);
	ck_assert_int_eq(eb_format_by_name("Cargo.lock"), EB_FORMAT_UNSUPPORTED);
	ck_assert_int_eq(eb_format_by_name("Pipfile"), EB_FORMAT_UNSUPPORTED);
	ck_assert_int_eq(eb_format_by_name("setup.cfg"), EB_FORMAT_UNSUPPORTED);
	ck_assert_int_eq(eb_format_by_name("setup.py"), EB_FORMAT_UNSUPPORTED);
	ck_assert_int_eq(eb_format_by_name("requirements.txt"), EB_FORMAT_NONE);
	ck_assert_int_eq(eb_format_by_name("requirements-dev.lock"), EB_FORMAT_NONE);
	ck_assert_int_eq(eb_format_by_name("Dockerfile"), EB_FORMAT_NONE);
	ck_assert_int_eq(eb_format_by_name("envbuild.json"), EB_FORMAT_NONE);
	ck_assert_int_eq(eb_format_by_name("job.yaml"), EB_FORMAT_NONE);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("formats");

	tcase_add_test(tc, pyproject_defaults);
	tcase_add_test(tc, pyproject_pinned_setting);
	tcase_add_test(tc, pyproject_shapes);
	tcase_add_test(tc, pyproject_pin_inputs);
	tcase_add_test(tc, pylock_rules);
	tcase_add_test(tc, pylock_version);
	tcase_add_test(tc, pylock_export);
	tcase_add_test(tc, pylock_as_requirements);
	tcase_add_test(tc, uv_lock);
	tcase_add_test(tc, poetry_lock);
	tcase_add_test(tc, pipfile_lock);
	tcase_add_loop_test(tc, conda_match_spec, 0, (int)(sizeof(conda_specs) / sizeof(conda_specs[0])));
	tcase_add_test(tc, conda_env_file);
	tcase_add_test(tc, yaml_image_siblings);
	tcase_add_test(tc, yaml_helm_values);
	tcase_add_test(tc, yaml_templates);
	tcase_add_test(tc, by_name);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
