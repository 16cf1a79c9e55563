/*
 * check_reqfile.c - pip requirements files: decoding, continuations,
 * comments, ${VAR} expansion, options, includes and cycles, constraints,
 * and the pin rules over a whole set of files (python-packaging.md §1-§3,
 * §11).  Each case writes real files into a fresh temporary directory;
 * tests/fixtures/reqs/ holds two realistic trees.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "pin/reqfile.h"
#include "util/alloc.h"
#include "util/buf.h"

#define H64 "a3b5c7d9e1f20314253647586970a1b2c3d4e5f60718293a4b5c6d7e8f901234"
#define H64B "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"

static char *tmp;

static void setup(void)
{
	tmp = eb_test_tmpdir();
}

static void teardown(void)
{
	char *cmd = eb_xasprintf("rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(tmp);
	tmp = NULL;
}

static void write_bytes(const char *name, const void *data, size_t len)
{
	char *path = eb_xasprintf("%s/%s", tmp, name);
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	free(path);
}

static void mkdir_in(const char *name)
{
	char *path = eb_xasprintf("%s/%s", tmp, name);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	free(path);
}

/* Load tmp/name, run the checks, and give the findings as
 * "line:col:RULE" words in sorted order ("" when clean). */
static char *run(const char *name, struct eb_reqfile **keep, struct eb_diag_list *dl_out)
{
	char *path = eb_xasprintf("%s/%s", tmp, name);
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_reqfile *rf = NULL;
	struct eb_error *err = NULL;
	struct eb_buf b;

	ck_assert_msg(eb_reqfile_load(&rf, path, &dl, &err) == 0, "load: %s", err ? err->msg : "");
	ck_assert_ptr_nonnull(rf);
	eb_reqfile_check(rf, &dl);
	eb_diag_list_sort(&dl);
	eb_buf_init(&b, 0);
	for (size_t i = 0; i < dl.n; i++)
		ck_assert_int_eq(eb_buf_addf(&b, "%s%u:%u:%s", i ? " " : "", dl.items[i].line,
					     dl.items[i].col, dl.items[i].rule),
				 0);
	if (keep)
		*keep = rf;
	else
		eb_reqfile_free(rf);
	if (dl_out)
		*dl_out = dl;
	else
		eb_diag_list_release(&dl);
	free(path);
	return eb_buf_detach(&b, NULL);
}

/* ---- one-file cases ------------------------------------------------------ */

static const struct {
	const char *content;
	const char *findings;
	size_t nentries;
} line_cases[] = {
	/* §11 #19: a comment line ends the continuation; a at 1, c at 4 */
	{ "a==1 \\\n  --hash=sha256:" H64 " \\\n  # via b\nc==2\n", "4:1:EB211", 2 },
	/* §11 #20 */
	{ "pkg==1.0#c\n", "1:9:EB200", 0 },
	{ "pkg==1.0 #c\n", "", 1 },
	{ "pkg==1.0\t# tab before the comment\n", "", 1 },
	/* §11 #21 */
	{ "pkg==1 --hash=md5:d41d8cd98f00b204e9800998ecf8427e\n", "1:15:EB210", 1 },
	{ "pkg==1 --hash sha256:0123\n", "1:15:EB210", 1 },
	/* §11 #22: hashes that lost their requirement */
	{ "pkg==1\n    --hash=sha256:" H64 "\n", "2:5:EB216", 1 },
	{ "--hash=sha256:" H64 "\n", "1:1:EB216", 0 },
	/* §11 #25: all-or-nothing */
	{ "a==1 --hash=sha256:" H64 "\nb==2\n", "2:1:EB211", 2 },
	{ "--require-hashes\na==1\n", "2:1:EB211", 1 },
	{ "--no-require-hashes\na==1 --hash=sha256:" H64 "\nb==2\n", "", 2 },
	{ "a==1 --hash=sha256:" H64 "\nb @ https://h/b-1.0-py3-none-any.whl#sha256=" H64B "\n", "", 2 },
	/* §11 #1, #3, #4, #6, #7, #8, #9, #10, #12 in a file */
	{ "torch==2.1.0+cu118\n", "", 1 },
	{ "numpy===1.26.4\n", "1:6:EB215", 1 },
	{ "pandas == 2.0.3 ; python_version >= \"3.9\"\n", "", 1 },
	{ "requests[socks]==2.31.0\n", "", 1 },
	{ "numpy==1.*\n", "1:6:EB203", 1 },
	{ "numpy~=1.26.4\nnumpy>=1.26\nnumpy\n", "1:6:EB202 2:6:EB202 3:1:EB201", 3 },
	{ "foo==1.0,>=0.9\n", "1:10:EB204", 1 },
	{ "foo (==1.0)\nbar==1.0,\nbaz==v1.0\n", "", 3 },
	{ "foo==1!2.0\n", "", 1 },
	/* §11 #15, #17 */
	{ "foo @ https://h/foo-1.0-py3-none-any.whl#sha256=" H64 "\n", "", 1 },
	{ "foo @ https://h/foo-1.0-py3-none-any.whl\n", "1:7:EB208", 1 },
	{ "foo @ https://h/foo-1.0-py3-none-any.whl --hash=sha256:" H64 "\n", "", 1 },
	{ "-e .\n", "1:4:EB205", 1 },
	{ "--editable=git+https://h/x#egg=x\n", "1:12:EB205", 1 },
	{ "y @ git+https://h/y@0123abc\n", "1:5:EB206", 1 },
	{ "./numpy-1.9.2-cp34-none-win32.whl --hash=sha256:" H64 "\n", "", 1 },
	{ "./numpy-1.9.2-cp34-none-win32.whl\n", "1:1:EB207", 1 },
	/* §11 #16 */
	{ "foo @ https://h/foo.whl;python_version>\"3\"\n", "1:7:EB208", 1 },
	/* §11 #36 */
	{ "foo==1; platform_release>'5'\n", "1:9:EB217", 1 },
	/* comments and blank lines */
	{ "# only a comment\n\n   \n\t# another\nfoo==1\n", "", 1 },
	{ "", "", 0 },
	/* CRLF and CR line endings */
	{ "a==1\r\nb>=2\r\n", "2:2:EB202", 2 },
	{ "a==1\rb>=2\r", "2:2:EB202", 2 },
	{ "a==1 \\\r\n  --hash=sha256:" H64 "\r\nb==2\r\n", "3:1:EB211", 2 },
	/* a continuation: the operator is reported where it was written */
	{ "numpy \\\n>=1.0\n", "2:1:EB202", 1 },
	{ "numpy>=1.0 \\\n", "1:6:EB202", 1 },
	/* BOM */
	{ "\xEF\xBB\xBFnumpy\n", "1:1:EB201", 1 },
	/* undecodable bytes: the line is dropped with a finding */
	{ "a==1\nb==2 # caf\xE9\nc\n", "2:11:EB200 3:1:EB201", 2 },
	{ "a==1\n\xC0\xAFx==1\n", "2:1:EB200", 1 },
	/* options */
	{ "--no-deps\n", "1:1:EB213", 0 },
	{ "-x foo\n", "1:1:EB213", 0 },
	{ "--no\n", "1:1:EB213", 0 },
	{ "--index-url\n", "1:1:EB200", 0 },
	{ "--pre=1\n", "1:1:EB200", 0 },
	{ "foo==1 -r other.txt\n", "1:8:EB213", 1 },
	{ "foo==1 --config-settings=x\n", "1:26:EB200", 1 },
	{ "foo==1 --config-settings=k=v -C a=b\n", "", 1 },
	{ "--config-settings=a=b\n", "1:1:EB213", 0 },
	{ "-e . --hash=sha256:" H64 "\n", "1:4:EB205 1:6:EB213", 1 },
	{ "foo==1 --hash='abc\n", "1:8:EB200", 0 },
	{ "foo==1 --hash=sha256:" H64 " stray\n", "1:87:EB200", 1 },
	{ "-i https://x/simple --extra-index https://y/simple --pre --prefer-binary\n", "", 0 },
	{ "--only-binary=:all: --no-binary foo --trusted-host h --use-feature=x -f https://l\n",
	  "", 0 },
	/* pip splits args and options at a space only, not a tab */
	{ "foo==1\t--hash=sha256:" H64 "\n", "1:7:EB200", 0 },
	/* EB209: same package twice */
	{ "a==1\nA==1.0\n", "", 2 },
	{ "a==1\nA==2\n", "2:1:EB209", 2 },
	{ "torch==2.1.0\ntorch==2.1.0+cu118\n", "2:1:EB209", 2 },
	{ "a==1; python_version < \"3.9\"\na==2; python_version >= \"3.9\"\n", "", 2 },
	{ "a==1 ; python_version<'3.9'\na==2; python_version < \"3.9\"\n", "2:1:EB209", 2 },
};

START_TEST(test_lines)
{
	struct eb_reqfile *rf = NULL;
	char *got;

	write_bytes("requirements.txt", line_cases[_i].content, strlen(line_cases[_i].content));
	got = run("requirements.txt", &rf, NULL);
	ck_assert_msg(strcmp(got, line_cases[_i].findings) == 0, "case %d: got '%s', want '%s'",
		      _i, got, line_cases[_i].findings);
	ck_assert_uint_eq(eb_reqfile_count(rf), line_cases[_i].nentries);
	free(got);
	eb_reqfile_free(rf);
}
END_TEST

/* ---- entries ------------------------------------------------------------- */

START_TEST(test_continuation_entries)
{
	struct eb_reqfile *rf = NULL;
	const struct eb_reqfile_entry *e;
	char *got;

	eb_test_write(tmp, "r.txt",
		      "# header\n"
		      "a==1 \\\n"
		      "    --hash=sha256:" H64 " \\\n"
		      "    --hash=sha256:" H64B "\n"
		      "    # via b\n"
		      "\n"
		      "Foo_Bar.baz[X]==2.0 ; python_version >= \"3.9\" \\\n"
		      "    --hash=sha256:" H64 "\n");
	got = run("r.txt", &rf, NULL);
	ck_assert_str_eq(got, "");
	ck_assert_uint_eq(eb_reqfile_count(rf), 2);

	e = eb_reqfile_get(rf, 0);
	ck_assert_uint_eq(e->line, 2);
	ck_assert_uint_eq(e->col, 1);
	ck_assert_str_eq(e->req.norm_name, "a");
	ck_assert_str_eq(eb_requirement_pinned_version(&e->req), "1");
	ck_assert_uint_eq(e->req.nhashes, 2);
	ck_assert_str_eq(e->req.hashes[0].algo, "sha256");
	ck_assert_str_eq(e->req.hashes[0].hex, H64);
	ck_assert_str_eq(e->req.hashes[1].hex, H64B);
	ck_assert_int_eq(e->constraint, 0);

	e = eb_reqfile_get(rf, 1);
	ck_assert_uint_eq(e->line, 7);
	ck_assert_str_eq(e->req.name, "Foo_Bar.baz");
	ck_assert_str_eq(e->req.norm_name, "foo-bar-baz");
	ck_assert_uint_eq(e->req.nextras, 1);
	ck_assert_str_eq(e->req.extras[0], "x");
	ck_assert_str_eq(e->req.marker_text, "python_version >= \"3.9\"");
	ck_assert_ptr_nonnull(e->req.marker);
	ck_assert_ptr_null(eb_reqfile_get(rf, 2));
	free(got);
	eb_reqfile_free(rf);
}
END_TEST

/* A bad hash on a continuation line is reported on that line. */
START_TEST(test_finding_on_continuation_line)
{
	struct eb_diag_list dl;
	char *got;

	eb_test_write(tmp, "r.txt", "a==1 \\\n  --hash=sha256:" H64 " \\\n  --hash=md5:00\n");
	got = run("r.txt", NULL, &dl);
	ck_assert_str_eq(got, "3:10:EB210");
	ck_assert_ptr_nonnull(strstr(dl.items[0].msg, "'md5'"));
	free(got);
	eb_diag_list_release(&dl);
}
END_TEST

/* ---- §11 #24: ${VAR} only ------------------------------------------------- */

START_TEST(test_env_expansion)
{
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list dl;
	char *got;

	setenv("EBTEST_TOKEN", "s3cret", 1);
	setenv("EBTEST_PKG", "numpy", 1);
	setenv("EBTEST_EMPTY", "", 1);
	unsetenv("EBTEST_UNSET");
	/* the runner allows these (a spec could only narrow the list) */
	setenv("ENVBUILD_REQUIREMENTS_ENV", "EBTEST_TOKEN, EBTEST_PKG EBTEST_EMPTY", 1);
	eb_test_write(tmp, "r.txt",
		      "foo @ https://${EBTEST_TOKEN}@h/foo-1.0-py3-none-any.whl#sha256=" H64 "\n"
		      "bar @ https://$EBTEST_TOKEN@h/bar-1.0-py3-none-any.whl#sha256=" H64 "\n"
		      "baz @ https://${EBTEST_UNSET}@h/baz-1.0-py3-none-any.whl#sha256=" H64 "\n"
		      "${EBTEST_PKG}>=1\n"
		      "qux @ https://${ebtest_token}${EBTEST_EMPTY}@h/qux-1.0-py3-none-any.whl\n");
	got = run("r.txt", &rf, &dl);
	/* the operator after the expansion keeps its written column; the
	 * URL of qux starts at column 7 */
	ck_assert_str_eq(got, "4:14:EB202 5:7:EB208");
	ck_assert_str_eq(eb_reqfile_get(rf, 0)->req.url,
			 "https://s3cret@h/foo-1.0-py3-none-any.whl#sha256=" H64);
	ck_assert_str_eq(eb_reqfile_get(rf, 1)->req.url,
			 "https://$EBTEST_TOKEN@h/bar-1.0-py3-none-any.whl#sha256=" H64);
	ck_assert_str_eq(eb_reqfile_get(rf, 2)->req.url,
			 "https://${EBTEST_UNSET}@h/baz-1.0-py3-none-any.whl#sha256=" H64);
	ck_assert_str_eq(eb_reqfile_get(rf, 3)->req.name, "numpy");
	ck_assert_str_eq(eb_reqfile_get(rf, 4)->req.url,
			 "https://${ebtest_token}${EBTEST_EMPTY}@h/qux-1.0-py3-none-any.whl");
	/* secrets stay out of messages */
	for (size_t i = 0; i < dl.n; i++)
		ck_assert_ptr_null(strstr(dl.items[i].msg, "s3cret"));
	free(got);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);
	unsetenv("ENVBUILD_REQUIREMENTS_ENV");
}
END_TEST

/* A requirements file from a pull request must not read the runner's
 * secrets: only allowed variables expand, never into a URL's host, and an
 * expanded value never shows in a finding. */
START_TEST(test_env_allowlist)
{
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list dl;
	char *got;
	const char *env[] = { "EBTEST_VER", NULL };

	setenv("EBTEST_SECRET", "hunter2-xyz", 1);
	setenv("EBTEST_VER", "1.0hunter3", 1);
	unsetenv("ENVBUILD_REQUIREMENTS_ENV");
	eb_test_write(tmp, "r.txt",
		      "a==${EBTEST_SECRET}\n"
		      "b @ https://h/${EBTEST_SECRET}/b-1.0-py3-none-any.whl#sha256=" H64 "\n");
	got = run("r.txt", &rf, &dl);
	/* not allowed: a warning each, the text stays as written */
	ck_assert_str_eq(got, "1:4:EB219 1:4:EB200 2:15:EB219");
	ck_assert_str_eq(eb_reqfile_get(rf, 0)->req.url,
			 "https://h/${EBTEST_SECRET}/b-1.0-py3-none-any.whl#sha256=" H64);
	free(got);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);

	/* allowed by the runner and the spec: expanded, shown as its name */
	setenv("ENVBUILD_REQUIREMENTS_ENV", "EBTEST_VER,EBTEST_SECRET", 1);
	eb_test_write(tmp, "r.txt", "a==${EBTEST_VER}x\n"
				    "c @ https://${EBTEST_VER}.example/c-1.0-py3-none-any.whl#sha256=" H64
				    "\nd @ https://u:${EBTEST_VER}@h/d-1.0-py3-none-any.whl#sha256=" H64
				    "\ne==${EBTEST_SECRET}\n");
	{
		char *path = eb_xasprintf("%s/r.txt", tmp);
		struct eb_error *err = NULL;
		struct eb_diag_list d2 = EB_DIAG_LIST_INIT;
		int secret_warned = 0;

		/* the spec names EBTEST_VER only: EBTEST_SECRET stays unexpanded */
		ck_assert_int_eq(eb_reqfile_load_in(&rf, path, tmp, env, 1, 1, &d2, &err), 0);
		eb_reqfile_check(rf, &d2);
		for (size_t i = 0; i < d2.n; i++) {
			ck_assert_msg(!strstr(d2.items[i].msg, "hunter"), "leaked: %s", d2.items[i].msg);
			ck_assert(!d2.items[i].hint || !strstr(d2.items[i].hint, "hunter"));
			if (strstr(d2.items[i].msg, "${EBTEST_SECRET}' is not expanded"))
				secret_warned = 1;
		}
		ck_assert(secret_warned);
		/* the host is never expanded; the userinfo is */
		ck_assert_uint_eq(eb_reqfile_count(rf), 2); /* a== and e== do not parse */
		ck_assert_ptr_nonnull(strstr(eb_reqfile_get(rf, 0)->req.url, "https://${EBTEST_VER}.example/"));
		ck_assert_str_eq(eb_reqfile_get(rf, 1)->req.url,
				 "https://u:1.0hunter3@h/d-1.0-py3-none-any.whl#sha256=" H64);
		eb_diag_list_release(&d2);
		eb_reqfile_free(rf);
		free(path);
	}
	unsetenv("ENVBUILD_REQUIREMENTS_ENV");
}
END_TEST

/* Reading is confined to the project root: an include leading out (by
 * "..", an absolute path or a symlink) or naming a fifo is EB009, and a
 * file that is not a requirements file is never quoted (EB218). */
START_TEST(test_confined)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_reqfile *rf = NULL;
	struct eb_error *err = NULL;
	char *root = eb_xasprintf("%s/proj", tmp), *top = eb_xasprintf("%s/proj/r.txt", tmp);
	char *fifo = eb_xasprintf("%s/proj/f.txt", tmp), *link = eb_xasprintf("%s/proj/l.txt", tmp);
	char *outside = eb_xasprintf("%s/secret.txt", tmp);
	size_t n218 = 0, n009 = 0;

	ck_assert_int_eq(mkdir(root, 0755), 0);
	eb_test_write(tmp, "secret.txt", "TOKEN=abcdef\n");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink(outside, link), 0);
	eb_test_write(tmp, "proj/.env", "API_KEY = k-123\nOTHER = z\n");
	eb_test_write(tmp, "proj/r.txt", "a==1\n-r ../secret.txt\n-r l.txt\n-r f.txt\n-r .env\n");
	ck_assert_int_eq(eb_reqfile_load_in(&rf, top, root, NULL, 0, 0, &dl, &err), 0);
	eb_reqfile_check(rf, &dl);
	for (size_t i = 0; i < dl.n; i++) {
		ck_assert_msg(!strstr(dl.items[i].msg, "abcdef") && !strstr(dl.items[i].msg, "k-123"),
			      "leaked: %s", dl.items[i].msg);
		n009 += strcmp(dl.items[i].rule, "EB009") == 0;
		n218 += strcmp(dl.items[i].rule, "EB218") == 0;
	}
	ck_assert_uint_eq(n009, 3);
	ck_assert_uint_eq(n218, 1);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);
	free(root);
	free(top);
	free(fifo);
	free(link);
	free(outside);
}
END_TEST

/* ---- encodings ----------------------------------------------------------- */

START_TEST(test_utf16)
{
	/* "numpy\r\nfoo==1\r\n" in UTF-16LE with a BOM (PowerShell's `>`) */
	static const char le[] = "\xFF\xFEn\0u\0m\0p\0y\0\r\0\n\0f\0o\0o\0=\0=\0001\0\r\0\n\0";
	static const char be[] = "\xFE\xFF\0n\0u\0m\0p\0y\0\n";
	static const char bad[] = "\xFF\xFE\x00\xD8x\0"; /* lone surrogate */
	static const char u32[] = "\xFF\xFE\0\0n\0\0\0";
	char *got;

	write_bytes("le.txt", le, sizeof(le) - 1);
	got = run("le.txt", NULL, NULL);
	ck_assert_str_eq(got, "1:1:EB201");
	free(got);

	write_bytes("be.txt", be, sizeof(be) - 1);
	got = run("be.txt", NULL, NULL);
	ck_assert_str_eq(got, "1:1:EB201");
	free(got);

	write_bytes("bad.txt", bad, sizeof(bad) - 1);
	got = run("bad.txt", NULL, NULL);
	ck_assert_str_eq(got, "1:1:EB200");
	free(got);

	write_bytes("u32.txt", u32, sizeof(u32) - 1);
	got = run("u32.txt", NULL, NULL);
	ck_assert_str_eq(got, "1:1:EB200");
	free(got);
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char data[] = "a==1\nb\0==1\nc==1\n";
	struct eb_reqfile *rf = NULL;
	char *got;

	write_bytes("r.txt", data, sizeof(data) - 1);
	got = run("r.txt", &rf, NULL);
	ck_assert_str_eq(got, "2:2:EB200");
	ck_assert_uint_eq(eb_reqfile_count(rf), 2);
	free(got);
	eb_reqfile_free(rf);
}
END_TEST

/* ---- includes ------------------------------------------------------------ */

START_TEST(test_include_relative)
{
	static const char *const forms[] = {
		"-r sub/b.txt\n", "-rsub/b.txt\n", "--requirement=sub/b.txt\n",
		"--requirement sub/b.txt\n", "--requireme sub/b.txt\n", "-r 'sub/b.txt'\n",
	};
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list dl;
	char *want_file = NULL, *got;

	mkdir_in("sub");
	/* paths in b.txt are relative to sub/ */
	eb_test_write(tmp, "sub/b.txt", "-r c.txt\nb==1\n");
	eb_test_write(tmp, "sub/c.txt", "x>=1\n");
	want_file = eb_xasprintf("%s/sub/c.txt", tmp);

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		eb_test_write(tmp, "a.txt", forms[i]);
		got = run("a.txt", &rf, &dl);
		ck_assert_msg(strcmp(got, "1:2:EB202") == 0, "'%s': got '%s'", forms[i], got);
		ck_assert_str_eq(dl.items[0].file, want_file);
		ck_assert_uint_eq(eb_reqfile_count(rf), 2);
		ck_assert_str_eq(eb_reqfile_get(rf, 0)->req.name, "x");
		ck_assert_str_eq(eb_reqfile_get(rf, 0)->file, want_file);
		ck_assert_str_eq(eb_reqfile_get(rf, 1)->req.name, "b");
		ck_assert_uint_eq(eb_reqfile_nfiles(rf), 3);
		ck_assert_ptr_nonnull(strstr(eb_reqfile_file(rf, 0), "/a.txt"));
		ck_assert_ptr_nonnull(strstr(eb_reqfile_file(rf, 1), "/sub/b.txt"));
		ck_assert_str_eq(eb_reqfile_file(rf, 2), want_file);
		ck_assert_ptr_null(eb_reqfile_file(rf, 3));
		free(got);
		eb_diag_list_release(&dl);
		eb_reqfile_free(rf);
	}
	free(want_file);
}
END_TEST

START_TEST(test_include_missing)
{
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list dl;
	char *got;

	eb_test_write(tmp, "a.txt", "foo==1\n-r nope.txt\n-c https://h/c.txt\nbar==2\n");
	got = run("a.txt", &rf, &dl);
	ck_assert_str_eq(got, "2:4:EB212 3:4:EB212");
	ck_assert_ptr_nonnull(strstr(dl.items[0].msg, "nope.txt"));
	ck_assert_ptr_nonnull(strstr(dl.items[1].msg, "remote requirements file"));
	/* the rest of the file is still read */
	ck_assert_uint_eq(eb_reqfile_count(rf), 2);
	ck_assert_uint_eq(eb_reqfile_nfiles(rf), 1);
	free(got);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);
}
END_TEST

START_TEST(test_include_cycle)
{
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list dl;
	char *got, *want;

	/* §11 #23: a -> b -> a */
	eb_test_write(tmp, "a.txt", "a==1\n-r b.txt\n");
	eb_test_write(tmp, "b.txt", "b==1\n\n-r a.txt\n");
	got = run("a.txt", &rf, &dl);
	ck_assert_str_eq(got, "3:4:EB212");
	want = eb_xasprintf("'%s/a.txt' includes itself through '%s/b.txt'", tmp, tmp);
	ck_assert_str_eq(dl.items[0].msg, want);
	ck_assert_ptr_nonnull(strstr(dl.items[0].file, "/b.txt"));
	ck_assert_uint_eq(eb_reqfile_count(rf), 2);
	free(want);
	free(got);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);

	/* a file that includes itself */
	eb_test_write(tmp, "self.txt", "-r ./self.txt\n");
	got = run("self.txt", NULL, &dl);
	ck_assert_str_eq(got, "1:4:EB212");
	want = eb_xasprintf("'%s/self.txt' includes itself", tmp);
	ck_assert_str_eq(dl.items[0].msg, want);
	free(want);
	free(got);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(test_include_diamond)
{
	struct eb_reqfile *rf = NULL;
	char *got;

	/* a includes b and c, both include d: d is read once, no cycle */
	eb_test_write(tmp, "a.txt", "-r b.txt\n-r c.txt\n");
	eb_test_write(tmp, "b.txt", "-r d.txt\n");
	eb_test_write(tmp, "c.txt", "-r d.txt\n");
	eb_test_write(tmp, "d.txt", "x==1\n");
	got = run("a.txt", &rf, NULL);
	ck_assert_str_eq(got, "");
	ck_assert_uint_eq(eb_reqfile_count(rf), 1);
	ck_assert_uint_eq(eb_reqfile_nfiles(rf), 4);
	free(got);
	eb_reqfile_free(rf);
}
END_TEST

START_TEST(test_constraints)
{
	struct eb_reqfile *rf = NULL;
	struct eb_diag_list dl;
	char *got;

	/* §11 #23: constraints must be named, not editable, without extras;
	 * they are not pin-checked (bar>=1 is fine), but a conflict with a
	 * requirement's pin is */
	eb_test_write(tmp, "r.txt", "foo==2\n-c c.txt\n");
	eb_test_write(tmp, "c.txt",
		      "foo[x]==1\n-e .\nhttps://h/x.tar.gz\nbar>=1\nfoo==1\n-r more.txt\n");
	eb_test_write(tmp, "more.txt", "baz\n");
	got = run("r.txt", &rf, &dl);
	/* c.txt:1 (extras, and 1 vs 2), 2 (editable), 3 (unnamed), 5 (1 vs 2);
	 * then more.txt: a -r inside a constraints file reads requirements
	 * (pip does), so baz is checked */
	ck_assert_str_eq(got, "1:1:EB214 1:1:EB209 2:4:EB214 3:1:EB214 5:1:EB209 1:1:EB201");
	for (size_t i = 0; i < eb_reqfile_count(rf); i++) {
		const struct eb_reqfile_entry *e = eb_reqfile_get(rf, i);
		ck_assert_int_eq(e->constraint, strstr(e->file, "/c.txt") != NULL);
	}
	free(got);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);
}
END_TEST

START_TEST(test_one_include_per_line)
{
	char *got;

	eb_test_write(tmp, "a.txt", "-r b.txt -r c.txt\n");
	eb_test_write(tmp, "b.txt", "b==1\n");
	eb_test_write(tmp, "c.txt", "c==1\n");
	got = run("a.txt", NULL, NULL);
	ck_assert_str_eq(got, "1:10:EB213");
	free(got);
}
END_TEST

START_TEST(test_top_missing)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_reqfile *rf = (struct eb_reqfile *)&dl;
	struct eb_error *err = NULL;
	char *path = eb_xasprintf("%s/absent.txt", tmp);

	ck_assert_int_lt(eb_reqfile_load(&rf, path, &dl, &err), 0);
	ck_assert_ptr_null(rf);
	ck_assert_ptr_nonnull(err);
	ck_assert_ptr_nonnull(strstr(err->msg, "absent.txt"));
	ck_assert_uint_eq(dl.n, 0);
	eb_error_free(err);
	free(path);
}
END_TEST

START_TEST(test_options_collected)
{
	struct eb_reqfile *rf = NULL;
	const struct eb_reqfile_options *o;
	char *got;

	eb_test_write(tmp, "a.txt",
		      "-i https://first/simple\n"
		      "--index-url=https://pypi.org/simple\n"
		      "--extra-index https://y/simple --pre\n"
		      "-f ./wheels --trusted-host y --prefer-binary --only-binary=:all:\n"
		      "--no-binary foo,bar --use-feature truststore --no-index\n"
		      "--all-releases baz --only-final qux --require-hashes\n"
		      "-r b.txt\n");
	eb_test_write(tmp, "b.txt", "--extra-index-url https://z/simple\n");
	got = run("a.txt", &rf, NULL);
	ck_assert_str_eq(got, "");
	o = eb_reqfile_options(rf);
	ck_assert_str_eq(o->index_url, "https://pypi.org/simple");
	ck_assert_uint_eq(o->extra_index_urls.n, 2);
	ck_assert_str_eq(o->extra_index_urls.items[0], "https://y/simple");
	ck_assert_str_eq(o->extra_index_urls.items[1], "https://z/simple");
	ck_assert_str_eq(o->find_links.items[0], "./wheels");
	ck_assert_str_eq(o->trusted_hosts.items[0], "y");
	ck_assert_str_eq(o->only_binary.items[0], ":all:");
	ck_assert_str_eq(o->no_binary.items[0], "foo,bar");
	ck_assert_str_eq(o->features.items[0], "truststore");
	ck_assert_str_eq(o->all_releases.items[0], "baz");
	ck_assert_str_eq(o->only_final.items[0], "qux");
	ck_assert_int_eq(o->pre, 1);
	ck_assert_int_eq(o->prefer_binary, 1);
	ck_assert_int_eq(o->no_index, 1);
	ck_assert_int_eq(o->require_hashes, 1);
	ck_assert_int_eq(o->no_require_hashes, 0);
	free(got);
	eb_reqfile_free(rf);
}
END_TEST

START_TEST(test_config_settings)
{
	struct eb_reqfile *rf = NULL;
	const struct eb_reqfile_entry *e;
	char *got;

	eb_test_write(tmp, "a.txt", "foo==1 --config-settings=k=v -C \"x=a b\"\n");
	got = run("a.txt", &rf, NULL);
	ck_assert_str_eq(got, "");
	e = eb_reqfile_get(rf, 0);
	ck_assert_uint_eq(e->nconfig_settings, 2);
	ck_assert_str_eq(e->config_settings[0], "k=v");
	ck_assert_str_eq(e->config_settings[1], "x=a b");
	free(got);
	eb_reqfile_free(rf);
}
END_TEST

/* ---- fixtures in the source tree ----------------------------------------- */

static char *fixture(const char *name)
{
	const char *top = getenv("top_srcdir");
	return eb_xasprintf("%s/tests/fixtures/reqs/%s", top && *top ? top : ".", name);
}

START_TEST(test_fixture_pip_compile)
{
	char *path = fixture("pip-compile.txt");
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_reqfile *rf = NULL;
	const struct eb_reqfile_entry *e;

	ck_assert_int_eq(eb_reqfile_load(&rf, path, &dl, NULL), 0);
	eb_reqfile_check(rf, &dl);
	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(eb_reqfile_count(rf), 7);
	e = eb_reqfile_get(rf, 3);
	ck_assert_str_eq(e->req.norm_name, "numpy");
	ck_assert_uint_eq(e->line, 19);
	ck_assert_uint_eq(e->req.nhashes, 2);
	e = eb_reqfile_get(rf, 5);
	ck_assert_str_eq(eb_requirement_pinned_version(&e->req), "2.1.0+cu118");
	ck_assert_str_eq(eb_reqfile_options(rf)->index_url, "https://pypi.org/simple");
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);
	free(path);
}
END_TEST

START_TEST(test_fixture_tree)
{
	static const char *const want[] = {
		"constraints.txt:1:1:EB209",
		"nested/common.txt:2:4:EB212",
		"top.txt:5:6:EB202",
		"top.txt:6:1:EB201",
		"top.txt:7:6:EB203",
		"top.txt:8:4:EB205",
	};
	char *path = fixture("top.txt");
	char *dir = fixture("");
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_reqfile *rf = NULL;

	ck_assert_int_eq(eb_reqfile_load(&rf, path, &dl, NULL), 0);
	eb_reqfile_check(rf, &dl);
	eb_diag_list_sort(&dl);
	ck_assert_uint_eq(dl.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < dl.n; i++) {
		char *got;
		ck_assert(strncmp(dl.items[i].file, dir, strlen(dir)) == 0);
		got = eb_xasprintf("%s:%u:%u:%s", dl.items[i].file + strlen(dir), dl.items[i].line,
				   dl.items[i].col, dl.items[i].rule);
		ck_assert_str_eq(got, want[i]);
		free(got);
	}
	ck_assert_uint_eq(eb_reqfile_nfiles(rf), 4);
	eb_diag_list_release(&dl);
	eb_reqfile_free(rf);
	free(dir);
	free(path);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("reqfile");
	TCase *tc;

	tc = tcase_create("lines");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_lines, 0, sizeof(line_cases) / sizeof(line_cases[0]));
	tcase_add_test(tc, test_continuation_entries);
	tcase_add_test(tc, test_finding_on_continuation_line);
	tcase_add_test(tc, test_env_expansion);
	tcase_add_test(tc, test_env_allowlist);
	tcase_add_test(tc, test_confined);
	tcase_add_test(tc, test_utf16);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_options_collected);
	tcase_add_test(tc, test_config_settings);
	suite_add_tcase(s, tc);

	tc = tcase_create("includes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_include_relative);
	tcase_add_test(tc, test_include_missing);
	tcase_add_test(tc, test_include_cycle);
	tcase_add_test(tc, test_include_diamond);
	tcase_add_test(tc, test_constraints);
	tcase_add_test(tc, test_one_include_per_line);
	tcase_add_test(tc, test_top_missing);
	suite_add_tcase(s, tc);

	tc = tcase_create("fixtures");
	tcase_add_test(tc, test_fixture_pip_compile);
	tcase_add_test(tc, test_fixture_tree);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
