/*
 * check_requirement.c - one requirement: PEP 503 names, pip's parsing of
 * PEP 508 and its URL/path/editable forms, and the pin rules
 * (python-packaging.md §2 and the §11 cases).
 */
#include "config.h"

#include "testutil.h"

#include "pin/requirement.h"
#include "util/alloc.h"

#define SHA256_A "a3b5c7d9e1f20314253647586970a1b2c3d4e5f60718293a4b5c6d7e8f901234"

/* ---- names --------------------------------------------------------------- */

static const struct {
	const char *in;
	int valid;
	const char *norm;
} name_cases[] = {
	{ "Foo_Bar.baz", 1, "foo-bar-baz" }, /* §11 #14: fetched from /foo-bar-baz/ */
	{ "numpy", 1, "numpy" },
	{ "A", 1, "a" },
	{ "1", 1, "1" },
	{ "a--_.b", 1, "a-b" },
	{ "Django-REST_framework", 1, "django-rest-framework" },
	{ "-a", 0, "-a" },
	{ "a-", 0, "a-" },
	{ "a b", 0, "a b" },
	{ "", 0, "" },
};

START_TEST(test_names)
{
	const char *in = name_cases[_i].in;
	char *norm = eb_pep503_normalize(in, strlen(in));

	ck_assert_int_eq(eb_pep503_valid(in, strlen(in)), name_cases[_i].valid);
	if (name_cases[_i].valid)
		ck_assert_str_eq(norm, name_cases[_i].norm);
	free(norm);
}
END_TEST

/* ---- pin status and the finding it gives -------------------------------- */

static const struct {
	const char *in;
	int editable;
	enum eb_pin_status status;
	const char *rule; /* first finding, NULL = none */
	unsigned col;
	enum eb_severity sev;
} pin_cases[] = {
	/* §11 #1: a local label is a pin */
	{ "torch==2.1.0+cu118", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	/* §11 #3: === is a pin, with a warning at the operator */
	{ "numpy===1.26.4", 0, EB_PIN_PINNED, "EB215", 6, EB_SEV_WARNING },
	/* §11 #4, #5: markers are parsed, never evaluated for the verdict */
	{ "pandas == 2.0.3 ; python_version >= \"3.9\"", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	{ "pandas==2.0.3; python_version < \"3.9\"", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	/* §11 #6 */
	{ "requests[socks]==2.31.0", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	{ "requests [ socks , use-chardet-on-py3 ] == 2.31.0", 0, EB_PIN_PINNED, NULL, 0,
	  EB_SEV_ERROR },
	/* §11 #7 */
	{ "numpy==1.*", 0, EB_PIN_WILDCARD, "EB203", 6, EB_SEV_ERROR },
	/* §11 #8 */
	{ "numpy~=1.26.4", 0, EB_PIN_RANGE, "EB202", 6, EB_SEV_ERROR },
	{ "numpy>=1.26", 0, EB_PIN_RANGE, "EB202", 6, EB_SEV_ERROR },
	{ "numpy", 0, EB_PIN_BARE, "EB201", 1, EB_SEV_ERROR },
	{ "  numpy  ", 0, EB_PIN_BARE, "EB201", 3, EB_SEV_ERROR },
	{ "numpy; python_version > \"3\"", 0, EB_PIN_BARE, "EB201", 1, EB_SEV_ERROR },
	{ "foo!=1.0", 0, EB_PIN_RANGE, "EB202", 4, EB_SEV_ERROR },
	{ "foo<2", 0, EB_PIN_RANGE, "EB202", 4, EB_SEV_ERROR },
	{ "foo>=1,<2", 0, EB_PIN_RANGE, "EB202", 4, EB_SEV_ERROR },
	/* §11 #9: two clauses, reported at the second */
	{ "foo==1.0,>=0.9", 0, EB_PIN_MULTIPLE, "EB204", 10, EB_SEV_ERROR },
	{ "foo==1.0,==1.0", 0, EB_PIN_MULTIPLE, "EB204", 10, EB_SEV_ERROR },
	/* §11 #10 */
	{ "foo (==1.0)", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	{ "foo==1.0,", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	{ "foo==v1.0", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	{ "foo (>=1.0)", 0, EB_PIN_RANGE, "EB202", 6, EB_SEV_ERROR },
	/* §11 #12 */
	{ "foo==1!2.0", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	/* §11 #14 */
	{ "Foo_Bar.baz==1.0", 0, EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	/* §11 #15: a direct URL needs a sha256 */
	{ "foo @ https://h/foo-1.0-py3-none-any.whl#sha256=" SHA256_A, 0, EB_PIN_PINNED, NULL, 0,
	  EB_SEV_ERROR },
	{ "foo @ https://h/foo-1.0-py3-none-any.whl", 0, EB_PIN_URL_UNHASHED, "EB208", 7,
	  EB_SEV_ERROR },
	{ "foo @ https://h/foo-1.0.tar.gz#md5=0123", 0, EB_PIN_URL_UNHASHED, "EB208", 7,
	  EB_SEV_ERROR },
	/* §11 #16: accepted like pip, marker split at ";" */
	{ "foo @ https://h/foo.whl;python_version>\"3\"", 0, EB_PIN_URL_UNHASHED, "EB208", 7,
	  EB_SEV_ERROR },
	/* §11 #17 */
	{ ".", 1, EB_PIN_EDITABLE, "EB205", 1, EB_SEV_ERROR },
	{ "git+https://github.com/x/y#egg=y", 1, EB_PIN_EDITABLE, "EB205", 1, EB_SEV_ERROR },
	{ "y @ git+https://github.com/x/y@0123456789abcdef0123456789abcdef01234567", 0,
	  EB_PIN_VCS, "EB206", 5, EB_SEV_ERROR },
	{ "git+https://github.com/x/y@v1#egg=y", 0, EB_PIN_VCS, "EB206", 1, EB_SEV_ERROR },
	/* local things */
	/* the project itself: built from its files (a spec's check: EB255) */
	{ ".", 0, EB_PIN_LOCAL, NULL, 0, EB_SEV_ERROR },
	{ "./", 0, EB_PIN_LOCAL, NULL, 0, EB_SEV_ERROR },
	{ "./src", 0, EB_PIN_LOCAL, "EB207", 1, EB_SEV_ERROR },
	{ "./src[dev]", 0, EB_PIN_LOCAL, "EB207", 1, EB_SEV_ERROR },
	{ "../pkg/foo-1.0.tar.gz", 0, EB_PIN_LOCAL, "EB207", 1, EB_SEV_ERROR },
	/* §11 #18: a wheel path reads as numpy==1.9.2, unpinned without a hash */
	{ "./numpy-1.9.2-cp34-none-win32.whl", 0, EB_PIN_LOCAL, "EB207", 1, EB_SEV_ERROR },
	{ "file:///wheels/foo-1.0-py3-none-any.whl", 0, EB_PIN_LOCAL, "EB207", 1, EB_SEV_ERROR },
	{ "https://h/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl#sha256=" SHA256_A, 0,
	  EB_PIN_PINNED, NULL, 0, EB_SEV_ERROR },
	{ "https://h/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl", 0,
	  EB_PIN_URL_UNHASHED, "EB208", 1, EB_SEV_ERROR },
	/* a bad fragment hash is EB210 on top of the missing pin */
	{ "https://h/x-1.0-py3-none-any.whl#sha256=ABC", 0, EB_PIN_URL_UNHASHED, "EB208", 1,
	  EB_SEV_ERROR },
	/* §4/§11 #36: platform_release is unknowable at build time */
	{ "foo==1.0; platform_release >= \"5.0\"", 0, EB_PIN_PINNED, "EB217", 11,
	  EB_SEV_WARNING },
	{ "foo==1.0; platform_version == \"x\"", 0, EB_PIN_PINNED, "EB217", 11, EB_SEV_WARNING },
};

START_TEST(test_pin_status)
{
	struct eb_requirement r;
	struct eb_error *err = NULL;
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	const char *in = pin_cases[_i].in;
	int rc;

	if (pin_cases[_i].editable)
		rc = eb_requirement_parse_editable(&r, in, strlen(in), &err);
	else
		rc = eb_requirement_parse(&r, in, strlen(in), &err);
	ck_assert_msg(rc == 0, "'%s': %s", in, err ? err->msg : "?");
	ck_assert_int_eq(eb_requirement_pin_status(&r), pin_cases[_i].status);
	eb_requirement_check_pin(&r, "req.txt", 7, 0, &dl);
	if (!pin_cases[_i].rule) {
		ck_assert_msg(dl.n == 0, "'%s': unexpected %s %s", in, dl.n ? dl.items[0].rule : "",
			      dl.n ? dl.items[0].msg : "");
	} else {
		ck_assert_msg(dl.n >= 1, "'%s': no finding", in);
		ck_assert_str_eq(dl.items[0].rule, pin_cases[_i].rule);
		ck_assert_uint_eq(dl.items[0].col, pin_cases[_i].col);
		ck_assert_uint_eq(dl.items[0].line, 7);
		ck_assert_str_eq(dl.items[0].file, "req.txt");
		ck_assert_int_eq(dl.items[0].severity, pin_cases[_i].sev);
		ck_assert_ptr_nonnull(dl.items[0].msg);
		ck_assert_msg(dl.items[0].msg[0] != '\0' &&
				      dl.items[0].msg[strlen(dl.items[0].msg) - 1] != '.',
			      "message style: '%s'", dl.items[0].msg);
	}
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);
}
END_TEST

/* ---- parse errors -------------------------------------------------------- */

static const struct {
	const char *in;
	int editable;
	unsigned col;
	const char *msg_part;
} bad_cases[] = {
	{ "", 0, 1, "empty requirement" },
	{ "   ", 0, 1, "empty requirement" },
	{ "==1.0", 0, 1, "expected package name" },
	{ "foo-==1", 0, 1, "invalid package name 'foo-'" },
	{ "foo=1.0", 0, 4, "'=' is not a valid operator" },
	{ "foo (==1.0", 0, 11, "expected ')'" },
	{ "foo[bar", 0, 8, "expected ',' or ']'" },
	{ "foo[bar,]==1", 0, 9, "expected an extra name" },
	{ "foo @ ", 0, 6, "expected a URL after '@'" },
	{ "foo @ https://h/x-1.0-py3-none-any.whl junk", 0, 40, "expected end or semicolon" },
	{ "foo bar", 0, 5, "expected end or semicolon after the name" },
	{ "; python_version > \"3\"", 0, 1, "expected package name" },
	/* §11 #20: "#" without whitespace before it is no comment */
	{ "pkg==1.0#c", 0, 0, "invalid requirement 'pkg==1.0#c'" },
	/* §11 #13 */
	{ "foo==1.0+abc.*", 0, 0, "'.*' cannot follow" },
	{ "https://h/x-1.0-py3-none-any.whl ;python_version>'3'", 0, 33,
	  "unexpected whitespace in the URL" },
	{ "./bad.whl", 0, 1, "invalid wheel filename 'bad.whl'" },
	{ "https://h/x.tar.gz", 1, 1, "not a valid editable requirement" },
	{ "foo==1.0; python_version >", 0, 0, "invalid requirement" },
};

START_TEST(test_parse_errors)
{
	struct eb_requirement r;
	struct eb_error *err = NULL;
	const char *in = bad_cases[_i].in;
	int rc;

	if (bad_cases[_i].editable)
		rc = eb_requirement_parse_editable(&r, in, strlen(in), &err);
	else
		rc = eb_requirement_parse(&r, in, strlen(in), &err);
	ck_assert_int_eq(rc, -EB_EINVALID);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->code, EB_EINVALID);
	ck_assert_msg(strstr(err->msg, bad_cases[_i].msg_part) != NULL, "'%s': got '%s'", in,
		      err->msg);
	if (bad_cases[_i].col)
		ck_assert_uint_eq(err->col, bad_cases[_i].col);
	else
		ck_assert_uint_gt(err->col, 0);
	ck_assert_ptr_null(r.text);
	eb_requirement_release(&r);
	eb_error_free(err);
}
END_TEST

/* Where a parse error inside the version or marker points. */
START_TEST(test_error_columns)
{
	struct eb_requirement r;
	struct eb_error *err = NULL;

	/* the version text starts at column 6 */
	ck_assert_int_lt(eb_requirement_parse(&r, "pkg==1.0#c", 10, &err), 0);
	ck_assert_uint_ge(err->col, 6);
	ck_assert_uint_le(err->col, 10);
	ck_assert_ptr_nonnull(err->hint);
	ck_assert_str_eq(err->hint, "a comment needs whitespace before '#'");
	eb_error_clear(&err);

	/* the marker starts at column 11 */
	ck_assert_int_lt(eb_requirement_parse(&r, "foo==1.0; bogus_var == \"x\"", 27, &err), 0);
	ck_assert_uint_ge(err->col, 11);
	eb_error_clear(&err);
}
END_TEST

/* ---- fields -------------------------------------------------------------- */

START_TEST(test_fields_named)
{
	struct eb_requirement r;
	const char *in = "Requests[Socks,security] (==2.31.0) ; python_version >= \"3.9\"";

	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_int_eq(r.kind, EB_REQ_NAMED);
	ck_assert_int_eq(r.editable, 0);
	ck_assert_str_eq(r.name, "Requests");
	ck_assert_str_eq(r.norm_name, "requests");
	ck_assert_uint_eq(r.name_col, 1);
	ck_assert_uint_eq(r.nextras, 2);
	ck_assert_str_eq(r.extras[0], "socks");
	ck_assert_str_eq(r.extras[1], "security");
	ck_assert_uint_eq(r.specs.n, 1);
	ck_assert_int_eq(r.specs.items[0].op, EB_OP_EQ);
	ck_assert_uint_eq(r.specs.items[0].col, 27);
	ck_assert_str_eq(eb_requirement_pinned_version(&r), "2.31.0");
	ck_assert_ptr_nonnull(r.marker);
	ck_assert_str_eq(r.marker_text, "python_version >= \"3.9\"");
	ck_assert_uint_eq(r.marker_col, 39);
	ck_assert_ptr_null(r.url);
	eb_requirement_release(&r);
}
END_TEST

START_TEST(test_fields_url)
{
	struct eb_requirement r;
	const char *in = "foo @ https://h/foo.whl;python_version>\"3\"";

	/* §11 #16: envbuild follows pip and splits at ";" */
	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_int_eq(r.kind, EB_REQ_URL);
	ck_assert_str_eq(r.name, "foo");
	ck_assert_str_eq(r.url, "https://h/foo.whl");
	ck_assert_uint_eq(r.url_col, 7);
	ck_assert_str_eq(r.marker_text, "python_version>\"3\"");
	ck_assert_uint_eq(r.marker_col, 25);
	ck_assert_ptr_null(r.wheel_version);
	eb_requirement_release(&r);

	/* a bare URL line needs "; " */
	in = "https://h/foo-1.0-py3-none-any.whl; python_version>\"3\"";
	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_str_eq(r.url, "https://h/foo-1.0-py3-none-any.whl");
	ck_assert_str_eq(r.marker_text, "python_version>\"3\"");
	eb_requirement_release(&r);

	/* a fragment hash and an egg name */
	in = "https://h/Foo-1.0.tar.gz#egg=Foo&sha256=" SHA256_A;
	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_int_eq(r.kind, EB_REQ_URL);
	ck_assert_str_eq(r.name, "Foo");
	ck_assert_str_eq(r.norm_name, "foo");
	ck_assert_str_eq(r.url_hash_algo, "sha256");
	ck_assert_str_eq(r.url_hash_hex, SHA256_A);
	ck_assert_int_eq(eb_requirement_is_hashed(&r), 1);
	ck_assert_int_eq(eb_requirement_has_hash_option(&r), 0);
	ck_assert_int_eq(eb_requirement_pin_status(&r), EB_PIN_PINNED);
	eb_requirement_release(&r);
}
END_TEST

START_TEST(test_fields_wheel)
{
	struct eb_requirement r;
	const char *in = "https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp311-cp311-linux_x86_64.whl";

	/* pip reads name==version from a bare wheel link (percent-decoded) */
	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_int_eq(r.kind, EB_REQ_URL);
	ck_assert_str_eq(r.name, "torch");
	ck_assert_str_eq(r.norm_name, "torch");
	ck_assert_uint_eq(r.name_col, 0);
	ck_assert_uint_eq(r.specs.n, 1);
	ck_assert_int_eq(r.specs.items[0].op, EB_OP_EQ);
	ck_assert_str_eq(r.specs.items[0].raw, "2.1.0+cu118");
	ck_assert_str_eq(r.wheel_version, "2.1.0+cu118");
	ck_assert_str_eq(eb_requirement_pinned_version(&r), "2.1.0+cu118");
	eb_requirement_release(&r);

	/* §11 #18 */
	in = "./numpy-1.9.2-cp34-none-win32.whl";
	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_int_eq(r.kind, EB_REQ_PATH);
	ck_assert_str_eq(r.name, "numpy");
	ck_assert_str_eq(eb_requirement_pinned_version(&r), "1.9.2");
	eb_requirement_add_hash(&r, "sha256:" SHA256_A, 7 + 64, 40);
	ck_assert_int_eq(eb_requirement_pin_status(&r), EB_PIN_PINNED);
	eb_requirement_release(&r);

	/* a build tag; a name @ wheel keeps the written name */
	in = "foo @ file:///w/foo-1.0-1-py3-none-any.whl";
	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	ck_assert_int_eq(r.kind, EB_REQ_PATH);
	ck_assert_str_eq(r.wheel_version, "1.0");
	ck_assert_uint_eq(r.specs.n, 0);
	ck_assert_str_eq(eb_requirement_pinned_version(&r), "1.0");
	eb_requirement_release(&r);
}
END_TEST

static const struct {
	const char *in;
	int editable;
	enum eb_req_kind kind;
	const char *name; /* NULL = unnamed */
	const char *url;
} kind_cases[] = {
	{ "numpy==1.0", 0, EB_REQ_NAMED, "numpy", NULL },
	{ "numpy.zip", 0, EB_REQ_PATH, NULL, "numpy.zip" },
	{ ".", 0, EB_REQ_DIR, NULL, "." },
	{ ".[dev]", 0, EB_REQ_DIR, NULL, "." },
	{ "src/pkg", 0, EB_REQ_DIR, NULL, "src/pkg" },
	{ "./pkg@v1", 0, EB_REQ_DIR, NULL, "./pkg@v1" },
	{ "file:///src/pkg", 0, EB_REQ_DIR, NULL, "file:///src/pkg" },
	{ "file:///src/pkg-1.0.tar.gz", 0, EB_REQ_PATH, NULL, "file:///src/pkg-1.0.tar.gz" },
	{ "foo @ ./foo-1.0.tar.gz", 0, EB_REQ_PATH, "foo", "./foo-1.0.tar.gz" },
	{ "foo@https://h/foo-1.0.zip", 0, EB_REQ_URL, "foo", "https://h/foo-1.0.zip" },
	{ "git+ssh://git@github.com/x/y.git@v1#egg=y", 0, EB_REQ_VCS, "y",
	  "git+ssh://git@github.com/x/y.git@v1#egg=y" },
	{ "hg+https://h/repo", 0, EB_REQ_VCS, NULL, "hg+https://h/repo" },
	{ "svn+svn://h/repo#egg=z", 0, EB_REQ_VCS, "z", "svn+svn://h/repo#egg=z" },
	{ "bzr+lp:project#egg=p", 0, EB_REQ_VCS, "p", "bzr+lp:project#egg=p" },
	{ "pkg @ git+https://h/pkg@abc", 0, EB_REQ_VCS, "pkg", "git+https://h/pkg@abc" },
	{ "./src[dev,test]", 1, EB_REQ_DIR, NULL, "./src" },
	{ "git://h/repo#egg=r", 1, EB_REQ_VCS, "r", "git://h/repo#egg=r" },
	{ "file:///src/pkg", 1, EB_REQ_DIR, NULL, "file:///src/pkg" },
};

START_TEST(test_kinds)
{
	struct eb_requirement r;
	struct eb_error *err = NULL;
	const char *in = kind_cases[_i].in;
	int rc;

	if (kind_cases[_i].editable)
		rc = eb_requirement_parse_editable(&r, in, strlen(in), &err);
	else
		rc = eb_requirement_parse(&r, in, strlen(in), &err);
	ck_assert_msg(rc == 0, "'%s': %s", in, err ? err->msg : "?");
	ck_assert_int_eq(r.kind, kind_cases[_i].kind);
	ck_assert_int_eq(r.editable, kind_cases[_i].editable);
	if (kind_cases[_i].name)
		ck_assert_str_eq(r.name, kind_cases[_i].name);
	else
		ck_assert_ptr_null(r.name);
	if (kind_cases[_i].url)
		ck_assert_str_eq(r.url, kind_cases[_i].url);
	else
		ck_assert_ptr_null(r.url);
	eb_requirement_release(&r);
}
END_TEST

START_TEST(test_extras_on_paths)
{
	struct eb_requirement r;

	ck_assert_int_eq(eb_requirement_parse_editable(&r, ".[Dev_Tools,test]", 17, NULL), 0);
	ck_assert_uint_eq(r.nextras, 2);
	ck_assert_str_eq(r.extras[0], "dev-tools");
	ck_assert_str_eq(r.extras[1], "test");
	eb_requirement_release(&r);
}
END_TEST

/* ---- hashes (§11 #21) ---------------------------------------------------- */

static const struct {
	const char *hash;
	int ok;
	const char *msg_part;
} hash_cases[] = {
	{ "sha256:" SHA256_A, 1, NULL },
	{ "sha384:" SHA256_A "0123456789abcdef0123456789abcdef", 1, NULL },
	{ "sha512:" SHA256_A SHA256_A, 1, NULL },
	{ "md5:d41d8cd98f00b204e9800998ecf8427e", 0, "hash algorithm 'md5' is not allowed" },
	{ "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709", 0, "'sha1' is not allowed" },
	{ "SHA256:" SHA256_A, 0, "'SHA256' is not allowed" },
	{ "sha256:0123", 0, "sha256 digest has 4 hex digits, expected 64" },
	{ "sha384:" SHA256_A, 0, "expected 96" },
	{ "sha256:A3B5C7D9E1F20314253647586970A1B2C3D4E5F60718293A4B5C6D7E8F901234", 0,
	  "not lower-case hexadecimal" },
	{ "sha256:g3b5c7d9e1f20314253647586970a1b2c3d4e5f60718293a4b5c6d7e8f901234", 0,
	  "not lower-case hexadecimal" },
	{ SHA256_A, 0, "not of the form algorithm:hexdigest" },
};

START_TEST(test_hashes)
{
	struct eb_requirement r;
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	const char *h = hash_cases[_i].hash;

	ck_assert_int_eq(eb_requirement_parse(&r, "pkg==1", 6, NULL), 0);
	eb_requirement_add_hash(&r, h, strlen(h), 16);
	ck_assert_int_eq(eb_requirement_has_hash_option(&r), 1);
	ck_assert_int_eq(eb_requirement_is_hashed(&r), hash_cases[_i].ok);
	ck_assert_int_eq(eb_requirement_hash_problem(&r.hashes[0]) == NULL, hash_cases[_i].ok);
	eb_requirement_check_pin(&r, "r.txt", 1, 0, &dl);
	if (hash_cases[_i].ok) {
		ck_assert_uint_eq(dl.n, 0);
	} else {
		ck_assert_uint_eq(dl.n, 1);
		ck_assert_str_eq(dl.items[0].rule, "EB210");
		ck_assert_uint_eq(dl.items[0].col, 16);
		ck_assert_msg(strstr(dl.items[0].msg, hash_cases[_i].msg_part) != NULL, "got '%s'",
			      dl.items[0].msg);
	}
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);
}
END_TEST

/* ---- check_pin details --------------------------------------------------- */

START_TEST(test_check_pin_offset_and_hint)
{
	struct eb_requirement r;
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;

	/* as in a Dockerfile "RUN pip install numpy>=1" with the argument at col 17 */
	ck_assert_int_eq(eb_requirement_parse(&r, "numpy>=1", 8, NULL), 0);
	eb_requirement_check_pin(&r, "Dockerfile", 3, 16, &dl);
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].rule, "EB202");
	ck_assert_uint_eq(dl.items[0].line, 3);
	ck_assert_uint_eq(dl.items[0].col, 22);
	ck_assert_str_eq(dl.items[0].msg, "'numpy>=1' is not an exact pin");
	ck_assert_str_eq(dl.items[0].hint, "pin an exact version: numpy==X.Y.Z");
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);

	ck_assert_int_eq(eb_requirement_parse(&r, "numpy", 5, NULL), 0);
	eb_requirement_check_pin(&r, "r.txt", 1, 0, &dl);
	ck_assert_str_eq(dl.items[0].msg, "'numpy' is not pinned");
	ck_assert_str_eq(dl.items[0].hint, "pin an exact version: numpy==X.Y.Z");
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);

	ck_assert_int_eq(eb_requirement_parse(&r, "numpy==1.*", 10, NULL), 0);
	eb_requirement_check_pin(&r, "r.txt", 1, 0, &dl);
	ck_assert_ptr_nonnull(strstr(dl.items[0].msg, "a wildcard picks a different file tomorrow"));
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);

	ck_assert_int_eq(eb_requirement_parse(&r, "foo>=0.9,==1.0", 14, NULL), 0);
	eb_requirement_check_pin(&r, "r.txt", 1, 0, &dl);
	ck_assert_str_eq(dl.items[0].rule, "EB204");
	ck_assert_str_eq(dl.items[0].hint, "keep only the exact pin: foo==1.0");
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);
}
END_TEST

START_TEST(test_redact)
{
	static const char *const cases[][2] = {
		{ "https://user:s3cret@h/x.whl", "https://user:****@h/x.whl" },
		{ "git+ssh://git@github.com/x/y", "git+ssh://****@github.com/x/y" },
		{ "https://h/x@1.whl", "https://h/x@1.whl" },
		{ "foo @ https://tok@h/a and https://u:p@h/b", "foo @ https://****@h/a and https://u:****@h/b" },
		{ "numpy==1.0", "numpy==1.0" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = eb_requirement_redact(cases[i][0]);
		ck_assert_str_eq(got, cases[i][1]);
		free(got);
	}
}
END_TEST

START_TEST(test_url_credentials_not_shown)
{
	struct eb_requirement r;
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	const char *in = "foo @ https://user:s3cret@h/foo-1.0.tar.gz";

	ck_assert_int_eq(eb_requirement_parse(&r, in, strlen(in), NULL), 0);
	eb_requirement_check_pin(&r, "r.txt", 1, 0, &dl);
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].rule, "EB208");
	ck_assert_ptr_null(strstr(dl.items[0].msg, "s3cret"));
	eb_diag_list_release(&dl);
	eb_requirement_release(&r);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("requirement");
	TCase *tc;

	tc = tcase_create("names");
	tcase_add_loop_test(tc, test_names, 0, sizeof(name_cases) / sizeof(name_cases[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("pin");
	tcase_add_loop_test(tc, test_pin_status, 0, sizeof(pin_cases) / sizeof(pin_cases[0]));
	tcase_add_test(tc, test_check_pin_offset_and_hint);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_parse_errors, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_error_columns);
	tcase_add_test(tc, test_fields_named);
	tcase_add_test(tc, test_fields_url);
	tcase_add_test(tc, test_fields_wheel);
	tcase_add_loop_test(tc, test_kinds, 0, sizeof(kind_cases) / sizeof(kind_cases[0]));
	tcase_add_test(tc, test_extras_on_paths);
	suite_add_tcase(s, tc);

	tc = tcase_create("hashes");
	tcase_add_loop_test(tc, test_hashes, 0, sizeof(hash_cases) / sizeof(hash_cases[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("redact");
	tcase_add_test(tc, test_redact);
	tcase_add_test(tc, test_url_credentials_not_shown);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
