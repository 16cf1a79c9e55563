/*
 * check_index.c - the package index layer: PEP 691 JSON and PEP 503 HTML
 * parsing tables (relative URLs, escapes, yanked and core-metadata forms,
 * api versions, malformed pages), URL redaction and netrc lookup; then
 * against static loopback indexes (tests/unit/index/serve.py) serving
 * trees this file generates: content negotiation, first-index-wins across
 * two servers, per-project routes, 404 versus failures, verified downloads
 * (nothing unverified reaches the blob store), PEP 658 metadata, file://
 * trees, wheel directories and credentials that never show.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "oci/blobstore.h"
#include "net/netrc.h"
#include "python/index.h"
#include "registry/auth.h"
#include "net/http.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"
#include "testutil.h"

#define BASE "https://pypi.example/simple/alpha/"
#define H64A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define H64B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define H64Z "0000000000000000000000000000000000000000000000000000000000000000"
#define H64O "1111111111111111111111111111111111111111111111111111111111111111"

/* ---- small helpers ----------------------------------------------------- */

static int parse_json_str(struct eb_pyindex_page *p, const char *s, struct eb_error **err)
{
	return eb_pyindex_parse_json(p, s, strlen(s), BASE, err);
}

static int parse_html_str(struct eb_pyindex_page *p, const char *s, struct eb_error **err)
{
	return eb_pyindex_parse_html(p, s, strlen(s), BASE, err);
}

static void assert_no_secret(const struct eb_error *e, const char *secret)
{
	ck_assert_ptr_nonnull(e);
	ck_assert_msg(!strstr(e->msg, secret), "secret in message: %s", e->msg);
	ck_assert_msg(!e->hint || !strstr(e->hint, secret), "secret in hint: %s", e->hint);
}

/* ---- PEP 691 JSON ------------------------------------------------------ */

START_TEST(test_json_full)
{
	static const char page[] =
		"{\"meta\": {\"api-version\": \"1.1\", \"_last-serial\": 42},"
		" \"name\": \"alpha\", \"versions\": [\"1.0\"], \"x-new\": {\"a\": 1},"
		" \"files\": ["
		"  {\"filename\": \"alpha-1.0-py3-none-any.whl\","
		"   \"url\": \"../../packages/ab/alpha-1.0-py3-none-any.whl#sha256=" H64B "\","
		"   \"hashes\": {\"SHA256\": \"" H64A "\", \"blake2b_256\": \"abcd\"},"
		"   \"requires-python\": \" >=3.8, <4 \","
		"   \"core-metadata\": {\"sha256\": \"" H64B "\"},"
		"   \"dist-info-metadata\": false,"
		"   \"gpg-sig\": false, \"yanked\": \"broken build\", \"size\": 1234,"
		"   \"upload-time\": \"2024-01-02T03:04:05.123456Z\", \"provenance\": null,"
		"   \"x-unknown\": [1, 2]},"
		"  {\"filename\": \"alpha-1.0.tar.gz\","
		"   \"url\": \"https://u:p@files.example/alpha-1.0.tar.gz?x=1\","
		"   \"hashes\": {}, \"dist-info-metadata\": true, \"yanked\": true},"
		"  {\"filename\": \"alpha-0.9.tar.gz\", \"url\": \"//cdn.example/a/alpha-0.9.tar.gz\","
		"   \"hashes\": {\"md5\": \"0123456789ABCDEF0123456789abcdef\"},"
		"   \"core-metadata\": false, \"yanked\": \"\", \"requires-python\": null}"
		" ]}";
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	const struct eb_pyindex_file *f;

	ck_assert_int_eq(parse_json_str(&p, page, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_JSON);
	ck_assert_int_eq(p.kind, EB_PYINDEX_HTTP);
	ck_assert_int_eq(p.index, -1);
	ck_assert_uint_eq(p.api_major, 1);
	ck_assert_uint_eq(p.api_minor, 1);
	ck_assert_uint_eq(p.nwarnings, 0);
	ck_assert_str_eq(p.name, "alpha");
	ck_assert_str_eq(p.url, BASE);
	ck_assert_uint_eq(p.nfiles, 3);

	f = &p.files[0];
	ck_assert_str_eq(f->filename, "alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(f->url, "https://pypi.example/packages/ab/alpha-1.0-py3-none-any.whl");
	/* the hashes map wins over the fragment; names are lower-cased */
	ck_assert_str_eq(eb_pyindex_file_hash(f, "sha256"), H64A);
	ck_assert_str_eq(eb_pyindex_file_hash(f, "blake2b_256"), "abcd");
	ck_assert_ptr_null(eb_pyindex_file_hash(f, "md5"));
	ck_assert_str_eq(f->requires_python, ">=3.8, <4");
	/* PEP 714: core-metadata wins over dist-info-metadata */
	ck_assert_int_eq(f->core_metadata, 1);
	ck_assert_uint_eq(f->core_metadata_hashes.n, 1);
	ck_assert_str_eq(f->core_metadata_hashes.items[0].algo, "sha256");
	ck_assert_str_eq(f->core_metadata_hashes.items[0].hex, H64B);
	ck_assert_int_eq(f->yanked, 1);
	ck_assert_str_eq(f->yanked_reason, "broken build");
	ck_assert_int_eq(f->size, 1234);
	ck_assert_str_eq(f->upload_time, "2024-01-02T03:04:05.123456Z");

	f = &p.files[1];
	/* credentials in a page's URL are dropped, the query is kept */
	ck_assert_str_eq(f->url, "https://files.example/alpha-1.0.tar.gz?x=1");
	ck_assert_uint_eq(f->hashes.n, 0);
	ck_assert_int_eq(f->core_metadata, 1);
	ck_assert_uint_eq(f->core_metadata_hashes.n, 0);
	ck_assert_int_eq(f->yanked, 1);
	ck_assert_ptr_null(f->yanked_reason);
	ck_assert_int_eq(f->size, -1);
	ck_assert_ptr_null(f->upload_time);
	ck_assert_ptr_null(f->requires_python);

	f = &p.files[2];
	ck_assert_str_eq(f->url, "https://cdn.example/a/alpha-0.9.tar.gz");
	ck_assert_str_eq(eb_pyindex_file_hash(f, "md5"), "0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(f->core_metadata, 0);
	ck_assert_int_eq(f->yanked, 1); /* "" still means yanked */
	ck_assert_ptr_null(f->yanked_reason);
	ck_assert_ptr_null(f->requires_python);
	eb_pyindex_page_release(&p);
	ck_assert_ptr_null(p.files);
	eb_pyindex_page_release(&p); /* harmless twice */
}
END_TEST

START_TEST(test_json_fragment_hash)
{
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;

	/* a fragment hash fills in when the map lacks the algorithm */
	ck_assert_int_eq(parse_json_str(&p,
					"{\"files\": [{\"filename\": \"a-1.tar.gz\", \"url\": "
					"\"/p/a-1.tar.gz#egg=a&sha256=" H64B "\", \"hashes\": {}}]}",
					&err),
			 0);
	ck_assert_str_eq(p.files[0].url, "https://pypi.example/p/a-1.tar.gz");
	ck_assert_str_eq(eb_pyindex_file_hash(&p.files[0], "sha256"), H64B);
	/* no meta: api 1.0 */
	ck_assert_uint_eq(p.api_major, 1);
	ck_assert_uint_eq(p.api_minor, 0);
	eb_pyindex_page_release(&p);
}
END_TEST

static const struct {
	const char *version; /* NULL: no meta at all */
	int rc;
	unsigned minor;
	size_t warnings;
} api_cases[] = {
	{ NULL, 0, 0, 0 },     { "1.0", 0, 0, 0 },      { "1.4", 0, 4, 0 },
	{ "1", 0, 0, 0 },      { "1.5", 0, 5, 1 },      { "1.99", 0, 99, 1 },
	{ "2.0", -EB_ENET, 0, 0 }, { "0.9", -EB_ENET, 0, 0 }, { "abc", -EB_ENET, 0, 0 },
	{ "1.x", -EB_ENET, 0, 0 }, { "1.2.3", -EB_ENET, 0, 0 }, { "", -EB_ENET, 0, 0 },
};

START_TEST(test_api_version)
{
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	char json[256], html[256];
	int rc;

	if (api_cases[_i].version) {
		snprintf(json, sizeof(json),
			 "{\"meta\": {\"api-version\": \"%s\"}, \"files\": []}",
			 api_cases[_i].version);
		snprintf(html, sizeof(html),
			 "<html><head><meta content=\"%s\" name=\"pypi:repository-version\">"
			 "</head><body></body></html>",
			 api_cases[_i].version);
	} else {
		snprintf(json, sizeof(json), "{\"files\": []}");
		snprintf(html, sizeof(html), "<html><body></body></html>");
	}
	for (int form = 0; form < 2; form++) {
		rc = form ? parse_html_str(&p, html, &err) : parse_json_str(&p, json, &err);
		ck_assert_msg(rc == api_cases[_i].rc, "'%s' (%s): rc %d",
			      api_cases[_i].version ? api_cases[_i].version : "(none)",
			      form ? "html" : "json", rc);
		if (rc == 0) {
			ck_assert_uint_eq(p.api_major, 1);
			ck_assert_uint_eq(p.api_minor, api_cases[_i].minor);
			ck_assert_uint_eq(p.nwarnings, api_cases[_i].warnings);
			if (p.nwarnings)
				ck_assert_ptr_nonnull(strstr(p.warnings[0], "newer than the 1.4"));
		} else {
			ck_assert_ptr_nonnull(err);
			ck_assert_ptr_null(p.files);
			ck_assert_ptr_null(p.url);
			if (strcmp(api_cases[_i].version, "2.0") == 0)
				ck_assert_ptr_nonnull(strstr(err->msg, "api version 2.0"));
		}
		eb_pyindex_page_release(&p);
		eb_error_clear(&err);
	}
}
END_TEST

static const struct {
	const char *page;
	const char *msg; /* expected part of the message */
} bad_json[] = {
	{ "", "line 1" },
	{ "{\"files\": [}", "line 1" },
	{ "[]", "not a json object" },
	{ "{}", "files is missing" },
	{ "{\"files\": {}}", "files is missing or not an array" },
	{ "{\"meta\": [], \"files\": []}", "meta is not an object" },
	{ "{\"meta\": {\"api-version\": 1.1}, \"files\": []}", "meta.api-version is not a string" },
	{ "{\"name\": 3, \"files\": []}", "name is not a string" },
	{ "{\"files\": [3]}", "files[0] is not an object" },
	{ "{\"files\": [{\"url\": \"x\", \"hashes\": {}}]}", "files[0].filename is missing" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"hashes\": {}}]}", "files[0].url is missing" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"\", \"hashes\": {}}]}",
	  "files[0].url is not a usable url" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"mailto:x@y\", \"hashes\": {}}]}",
	  "files[0].url is not a usable url" },
	{ "{\"files\": [{\"filename\": \"../a.whl\", \"url\": \"a.whl\"}]}", "is not a file name" },
	{ "{\"files\": [{\"filename\": \".a.whl\", \"url\": \"a.whl\"}]}", "is not a file name" },
	{ "{\"files\": [{\"filename\": \"a\\u0001.whl\", \"url\": \"a.whl\"}]}",
	  "is not a file name" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"hashes\": []}]}",
	  "files[0].hashes is not an object" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"hashes\": {\"sha256\": 1}}]}",
	  "files[0].hashes.sha256 is not a string" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"hashes\": {\"sha256\": "
	  "\"xyz\"}}]}",
	  "hash value is not hex" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"hashes\": {\"sha256\": "
	  "\"abcd\"}}]}",
	  "wrong length" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"hashes\": {\"sha256\": "
	  "\"\"}}]}",
	  "empty hash value" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl#sha256=zz\"}]}",
	  "in the url fragment" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"size\": -1}]}",
	  "files[0].size is not a non-negative integer" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"size\": \"12\"}]}",
	  "files[0].size" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"yanked\": 1}]}",
	  "files[0].yanked is neither" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"core-metadata\": \"x\"}]}",
	  "files[0].core-metadata is neither" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"dist-info-metadata\": "
	  "{\"sha256\": \"q\"}}]}",
	  "files[0].dist-info-metadata.sha256" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"requires-python\": 3}]}",
	  "files[0].requires-python is not a string" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"upload-time\": 3}]}",
	  "files[0].upload-time is not a string" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\"}, {\"filename\": 2}]}",
	  "files[1].filename" },
	/* quotes of the page stay on one line */
	{ "{\"files\": [{\"filename\": \"a\\nb.whl\", \"url\": \"a.whl\"}]}",
	  "filename 'a?b.whl' is not" },
	{ "{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"hashes\": "
	  "{\"x\\ny\": 1}}]}",
	  "files[0].hashes.x?y is not a string" },
};

START_TEST(test_json_malformed)
{
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	int rc = parse_json_str(&p, bad_json[_i].page, &err);

	ck_assert_msg(rc == -EB_ENET, "page %d: rc %d", _i, rc);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err->msg, bad_json[_i].msg), "page %d: message '%s'", _i, err->msg);
	ck_assert_ptr_nonnull(strstr(err->msg, "malformed index page '" BASE "'"));
	ck_assert_ptr_null(strchr(err->msg, '\n'));
	ck_assert_ptr_null(p.files);
	ck_assert_uint_eq(p.nfiles, 0);
	eb_pyindex_page_release(&p);
	eb_error_free(err);
}
END_TEST

START_TEST(test_page_limits)
{
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	static const char small[] = "{\"files\": []}";

	/* the cap is checked before a byte is read */
	ck_assert_int_eq(eb_pyindex_parse_json(&p, small, EB_PYINDEX_PAGE_MAX + 1, BASE, &err),
			 -EB_ETOOBIG);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_parse_html(&p, small, EB_PYINDEX_PAGE_MAX + 1, BASE, &err),
			 -EB_ETOOBIG);
	eb_error_clear(&err);
	/* relative page URLs cannot anchor relative file URLs */
	ck_assert_int_eq(eb_pyindex_parse_json(&p, small, strlen(small), "/simple/a/", &err),
			 -EB_EINVALID);
	eb_error_clear(&err);
	/* credentials in the page URL are neither kept nor shown */
	ck_assert_int_eq(eb_pyindex_parse_json(&p, "[", 1, "https://bob:hunter2@h/simple/a/", &err),
			 -EB_ENET);
	assert_no_secret(err, "hunter2");
	ck_assert_ptr_nonnull(strstr(err->msg, "'https://h/simple/a/'"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_parse_json(&p, small, strlen(small),
					     "https://bob:hunter2@h/simple/a/", &err),
			 0);
	ck_assert_str_eq(p.url, "https://h/simple/a/");
	eb_pyindex_page_release(&p);

	/* a page's quotes in messages are bounded */
	{
		char *key = eb_xmalloc(5001);
		char *big;
		memset(key, 'k', 5000);
		key[5000] = '\0';
		big = eb_xasprintf("{\"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", "
				   "\"hashes\": {\"%s\": 1}}]}", key);
		free(key);
		ck_assert_int_eq(parse_json_str(&p, big, &err), -EB_ENET);
		ck_assert_uint_lt(strlen(err->msg), 400);
		ck_assert_ptr_nonnull(strstr(err->msg, "kkk..."));
		eb_error_clear(&err);
		free(big);
	}
}
END_TEST

/* ---- PEP 503 HTML ------------------------------------------------------ */

START_TEST(test_html_full)
{
	static const char page[] =
		"<!DOCTYPE html>\n<html>\n  <head>\n"
		"    <meta name=\"pypi:repository-version\" content=\"1.3\">\n"
		"    <title>Links for alpha</title>\n  </head>\n  <body>\n"
		"    <h1>Links for alpha</h1>\n"
		"    <!-- <a href=\"commented-1.0.tar.gz\">commented-1.0.tar.gz</a> -->\n"
		"    <a href=\"../../packages/ab/alpha-1.0-py3-none-any.whl#sha256=" H64A "\" "
		"data-requires-python=\"&gt;=3.8,&lt;4\" data-core-metadata=\"sha256=" H64B "\" "
		"data-dist-info-metadata=\"true\">alpha-1.0-py3-none-any.whl</a><br/>\n"
		"    <A HREF='https://files.example/alpha-1.0.tar.gz#md5=0123456789abcdef0123456789abcdef&amp;egg=alpha'"
		" DATA-YANKED=\"bad &quot;build&quot; &#8212; use 1.1\">\n"
		"      alpha-1.0.tar.gz\n    </A><br/>\n"
		"    <a href=/packages/alpha-0.9.tar.gz data-yanked data-dist-info-metadata=sha256="
		H64A ">alpha&#x2D;0.9.tar.gz</a>\n"
		"    <a href=\"alpha%2B1-0.8.zip\"  data-requires-python=\"\"></a>\n"
		"    <a name=\"no-href\">not a file</a>\n"
		"    <a href=\"alpha-0.7.zip\" data-core-metadata=\"false\"><span>alpha-0.7.zip</span></a>\n"
		"    <a href=\"alpha 0.6.zip\" data-core-metadata=\"md4=zz\">alpha 0.6.zip</a>\n"
		"  </body>\n</html>\n";
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	const struct eb_pyindex_file *f;

	ck_assert_int_eq(parse_html_str(&p, page, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_HTML);
	ck_assert_uint_eq(p.api_minor, 3);
	ck_assert_ptr_null(p.name);
	ck_assert_uint_eq(p.nfiles, 6);

	f = &p.files[0];
	ck_assert_str_eq(f->filename, "alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(f->url, "https://pypi.example/packages/ab/alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(eb_pyindex_file_hash(f, "sha256"), H64A);
	ck_assert_str_eq(f->requires_python, ">=3.8,<4");
	ck_assert_int_eq(f->core_metadata, 1);
	ck_assert_uint_eq(f->core_metadata_hashes.n, 1);
	ck_assert_str_eq(f->core_metadata_hashes.items[0].hex, H64B);
	ck_assert_int_eq(f->yanked, 0);
	ck_assert_int_eq(f->size, -1);

	f = &p.files[1];
	ck_assert_str_eq(f->filename, "alpha-1.0.tar.gz");
	ck_assert_str_eq(f->url, "https://files.example/alpha-1.0.tar.gz");
	ck_assert_str_eq(eb_pyindex_file_hash(f, "md5"), "0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(f->yanked, 1);
	ck_assert_str_eq(f->yanked_reason, "bad \"build\" \xe2\x80\x94 use 1.1");
	ck_assert_int_eq(f->core_metadata, 0);

	f = &p.files[2];
	ck_assert_str_eq(f->filename, "alpha-0.9.tar.gz");
	ck_assert_str_eq(f->url, "https://pypi.example/packages/alpha-0.9.tar.gz");
	ck_assert_int_eq(f->yanked, 1);
	ck_assert_ptr_null(f->yanked_reason);
	ck_assert_int_eq(f->core_metadata, 1); /* the deprecated name still counts */
	ck_assert_str_eq(f->core_metadata_hashes.items[0].hex, H64A);

	f = &p.files[3];
	/* empty text: the URL's last segment, decoded */
	ck_assert_str_eq(f->filename, "alpha+1-0.8.zip");
	ck_assert_str_eq(f->url, "https://pypi.example/simple/alpha/alpha%2B1-0.8.zip");
	ck_assert_ptr_null(f->requires_python);

	f = &p.files[4];
	ck_assert_str_eq(f->filename, "alpha-0.7.zip");
	ck_assert_int_eq(f->core_metadata, 0);

	f = &p.files[5];
	/* a space is encoded, an unknown metadata hash means "no hash" */
	ck_assert_str_eq(f->url, "https://pypi.example/simple/alpha/alpha%200.6.zip");
	ck_assert_int_eq(f->core_metadata, 1);
	ck_assert_uint_eq(f->core_metadata_hashes.n, 0);
	eb_pyindex_page_release(&p);
}
END_TEST

START_TEST(test_html_base_and_oddities)
{
	static const char page[] =
		"<html><head><base href=\"https://mirror.example/root/\"><style>a{}</style>"
		"<script>var s = '<a href=\"evil.whl\">evil.whl</a>';</script></head><body>"
		"<a href=\"pkgs/b-1.0.tar.gz\">b-1.0.tar.gz</a>"
		"<a\nhref = \"/abs/b-0.9.tar.gz\"\n>b-0.9.tar.gz</a>"
		"<p>1 < 2 &amp; stray &unknown; text</p>"
		"<a href=\"b-0.8.tar.gz\">b-0.8.tar.gz"; /* unterminated at the end */
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;

	ck_assert_int_eq(parse_html_str(&p, page, &err), 0);
	ck_assert_uint_eq(p.nfiles, 3);
	ck_assert_str_eq(p.files[0].url, "https://mirror.example/root/pkgs/b-1.0.tar.gz");
	ck_assert_str_eq(p.files[1].url, "https://mirror.example/abs/b-0.9.tar.gz");
	ck_assert_str_eq(p.files[2].filename, "b-0.8.tar.gz");
	/* the page URL stays the one it was fetched from */
	ck_assert_str_eq(p.url, BASE);
	eb_pyindex_page_release(&p);

	/* no anchors at all: an empty, valid page */
	ck_assert_int_eq(parse_html_str(&p, "", &err), 0);
	ck_assert_uint_eq(p.nfiles, 0);
	eb_pyindex_page_release(&p);
}
END_TEST

static const struct {
	const char *page;
	const char *msg;
} bad_html[] = {
	{ "<a href=\"a-1.whl#sha256=xyz\">a-1.whl</a>", "hash value is not hex" },
	{ "<a href=\"a-1.whl#sha256=abc\">a-1.whl</a>", "wrong length" },
	{ "<a href=\"a-1.whl\">../../etc/passwd</a>", "is not a file name" },
	{ "<a href=\"%2e%2e%2Fx\"></a>", "is not a file name" },
	{ "<a href=\"\">a-1.whl</a>", "a-1.whl is not a usable url" },
	{ "<a href=\"javascript:alert(1)\">a-1.whl</a>", "is not a usable url" },
	{ "<a href=\"a-1.whl\" data-core-metadata=\"sha256=q\">a-1.whl</a>",
	  "data-core-metadata of 'a-1.whl'" },
	{ "<base href=\"gopher://x\"><a href=\"a-1.whl\">a-1.whl</a>", "<base href>" },
};

START_TEST(test_html_malformed)
{
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	int rc = parse_html_str(&p, bad_html[_i].page, &err);

	ck_assert_msg(rc == -EB_ENET, "page %d: rc %d", _i, rc);
	ck_assert_msg(strstr(err->msg, bad_html[_i].msg), "page %d: message '%s'", _i, err->msg);
	ck_assert_ptr_null(p.files);
	eb_error_free(err);
}
END_TEST

static const struct {
	const char *type;
	int rc;
	enum eb_pyindex_format fmt;
} types[] = {
	{ "application/vnd.pypi.simple.v1+json", 0, EB_PYINDEX_FMT_JSON },
	{ "Application/Vnd.PyPI.Simple.V1+JSON ; charset=utf-8", 0, EB_PYINDEX_FMT_JSON },
	{ "application/vnd.pypi.simple.latest+json", 0, EB_PYINDEX_FMT_JSON },
	{ "application/vnd.pypi.simple.v1+html", 0, EB_PYINDEX_FMT_HTML },
	{ "text/html; charset=utf-8", 0, EB_PYINDEX_FMT_HTML },
	{ "application/vnd.pypi.simple.v2+json", -EB_ENET, 0 },
	{ "application/json", -EB_ENET, 0 },
	{ "", -EB_ENET, 0 },
	{ NULL, -EB_ENET, 0 },
};

START_TEST(test_content_type_dispatch)
{
	static const char json[] = "{\"files\": []}";
	static const char html[] = "<a href=\"x-1.tar.gz\">x-1.tar.gz</a>";
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	int is_json = types[_i].rc == 0 && types[_i].fmt == EB_PYINDEX_FMT_JSON;
	const char *body = is_json ? json : html;
	int rc = eb_pyindex_parse_page(&p, types[_i].type, body, strlen(body), BASE, &err);

	ck_assert_msg(rc == types[_i].rc, "'%s': rc %d", types[_i].type ? types[_i].type : "(null)",
		      rc);
	if (rc == 0) {
		ck_assert_int_eq(p.format, types[_i].fmt);
	} else {
		ck_assert_ptr_nonnull(err);
		if (types[_i].type && strstr(types[_i].type, "v2"))
			ck_assert_ptr_nonnull(strstr(err->msg, "api version 1"));
		else
			ck_assert_ptr_nonnull(strstr(err->msg, "content type"));
	}
	eb_pyindex_page_release(&p);
	eb_error_free(err);
}
END_TEST

/* ---- redaction and netrc ------------------------------------------------ */

static const struct {
	const char *in, *out;
} redact_cases[] = {
	{ "https://pypi.org/simple/", "https://pypi.org/simple/" },
	{ "https://user:pw@host/simple/", "https://****@host/simple/" },
	{ "https://token@host:8443/x", "https://****@host:8443/x" },
	{ "https://u:p@host", "https://****@host" },
	{ "https://u:p@w@host/a?b=c", "https://****@host/a" },
	{ "https://host/a/b.whl?X-Amz-Signature=abc#frag", "https://host/a/b.whl" },
	{ "https://host/a@b/c", "https://host/a@b/c" },
	{ "file:///srv/simple", "file:///srv/simple" },
	{ "/srv/wheels", "/srv/wheels" },
	{ "./a@b/c", "./a@b/c" },
	{ "user:tok@host/simple?q", "****@host/simple" },
	{ "internal", "internal" },
	{ "mirror#2 (eu?)", "mirror#2 (eu?)" },
	{ "", "" },
};

START_TEST(test_redact)
{
	char *s = eb_pyindex_redact_url(redact_cases[_i].in);
	ck_assert_str_eq(s, redact_cases[_i].out);
	free(s);
}
END_TEST

static void netrc_expect(const char *path, const char *host, int rc_want, const char *login_want,
			 const char *pass_want)
{
	char *login = NULL, *pass = NULL;
	struct eb_error *err = NULL;
	int rc = eb_netrc_lookup(path, host, &login, &pass, &err);

	ck_assert_msg(rc == rc_want, "%s: rc %d", host, rc);
	ck_assert_ptr_null(err);
	if (rc == 0) {
		ck_assert_str_eq(login, login_want);
		ck_assert_str_eq(pass, pass_want);
	} else {
		ck_assert_ptr_null(login);
		ck_assert_ptr_null(pass);
	}
	free(login);
	free(pass);
}

START_TEST(test_netrc)
{
	char *dir = eb_test_tmpdir();
	char *path = eb_path_join(dir, "netrc");
	char *none = eb_path_join(dir, "absent");

	eb_test_write(dir, "netrc",
		      "# a comment line\n"
		      "machine first.example login one password pw1\n"
		      "machine first.example login dup password dup\n"
		      "machine MIXED.Example\n  login \"two words\"\n  password \"p\\\"q r\"\n"
		      "macdef init\ncd /tmp\nmachine macro.example login no password no\n\n"
		      "machine account.example account acct login three password pw3\n"
		      "machine nopass.example login four\n"
		      "machine tokenonly.example password tok\n"
		      "default login anon password anonpw\n");
	netrc_expect(path, "first.example", 0, "one", "pw1");
	netrc_expect(path, "mixed.example", 0, "two words", "p\"q r");
	netrc_expect(path, "account.example", 0, "three", "pw3");
	netrc_expect(path, "nopass.example", 0, "four", "");
	netrc_expect(path, "tokenonly.example", 0, "", "tok");
	/* a macro's body is not an entry */
	netrc_expect(path, "macro.example", 0, "anon", "anonpw");
	netrc_expect(path, "other.example", 0, "anon", "anonpw");
	netrc_expect(none, "first.example", 1, NULL, NULL);

	eb_test_write(dir, "netrc", "machine a.example login x password y\n");
	netrc_expect(path, "b.example", 1, NULL, NULL);
	netrc_expect(path, "a.example", 0, "x", "y");
	netrc_expect(NULL, "a.example", 1, NULL, NULL);
	unlink(path);
	rmdir(dir);
	free(none);
	free(path);
	free(dir);
}
END_TEST

/* ---- the test server and the trees it serves ----------------------------- */

struct srv {
	pid_t pid;
	int port;
	int in_fd; /* the server exits when this closes */
};

static char *server_script(void)
{
	const char *top = getenv("top_srcdir");
	char *p = eb_xasprintf("%s/tests/unit/index/serve.py", top && *top ? top : ".");
	ck_assert_msg(access(p, R_OK) == 0, "cannot find %s (set top_srcdir)", p);
	return p;
}

/* Serve root with extra arguments (NULL-terminated). */
static void srv_start(struct srv *s, const char *root, ...)
{
	const char *argv[32];
	int n = 0;
	char *script = server_script();
	va_list ap;

	argv[n++] = "python3";
	argv[n++] = script;
	argv[n++] = "--root";
	argv[n++] = root;
	va_start(ap, root);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 30;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;

	s->port = eb_test_spawn_server(argv, &s->pid, &s->in_fd);
	free(script);
}

static void srv_stop(struct srv *s)
{
	close(s->in_fd);
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
}

static char *srv_url(const struct srv *s, const char *userinfo, const char *path)
{
	return eb_xasprintf("http://%s%s127.0.0.1:%d%s", userinfo ? userinfo : "",
			    userinfo ? "@" : "", s->port, path);
}

static struct eb_auth *g_auth;
static struct eb_http_client *g_http;

static struct eb_http_client *test_http(void)
{
	struct eb_http_options o = { 0 };
	struct eb_auth_options ao = { 0 };
	struct eb_error *err = NULL;

	if (g_http)
		return g_http;
	ao.anonymous = 1; /* never read the developer's docker config */
	g_auth = eb_auth_new(&ao);
	o.auth = eb_auth_http_hooks(g_auth);
	o.backoff_ms = 1;
	o.max_attempts = 2;
	ck_assert_int_eq(eb_http_client_new(&g_http, &o, &err), 0);
	return g_http;
}

/* The requests the server saw for path: how many, and the last one's
 * Accept and Authorization headers (replacing what *accept and *authz
 * held; caller frees). */
static int srv_seen(const struct srv *s, const char *path, char **accept, char **authz)
{
	eb_autofree char *url = srv_url(s, NULL, "/_log");
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	json_t *log, *e;
	size_t i;
	int n = 0;

	if (accept) {
		free(*accept);
		*accept = NULL;
	}
	if (authz) {
		free(*authz);
		*authz = NULL;
	}
	req.method = "GET";
	req.url = url;
	ck_assert_int_eq(eb_http_request(test_http(), &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	log = json_loadb(resp.body.ptr, resp.body.len, 0, NULL);
	ck_assert_ptr_nonnull(log);
	json_array_foreach(log, i, e) {
		json_t *a, *z;
		if (strcmp(json_string_value(json_object_get(e, "path")), path))
			continue;
		n++;
		a = json_object_get(e, "accept");
		z = json_object_get(e, "authorization");
		if (accept) {
			free(*accept);
			*accept = json_is_string(a) ? eb_xstrdup(json_string_value(a)) : NULL;
		}
		if (authz) {
			free(*authz);
			*authz = json_is_string(z) ? eb_xstrdup(json_string_value(z)) : NULL;
		}
	}
	json_decref(log);
	eb_http_response_release(&resp);
	return n;
}

static void put_file(const char *path, const void *data, size_t len)
{
	struct eb_error *err = NULL;
	eb_autofree char *dir = eb_path_dirname(path);

	ck_assert_int_eq(eb_fs_mkdir_p(dir, 0755, &err), 0);
	ck_assert_int_eq(eb_fs_write_atomic(path, data, len, 0644, &err), 0);
}

static void put_str(const char *dir, const char *rel, const char *s)
{
	eb_autofree char *path = eb_path_join(dir, rel);
	put_file(path, s, strlen(s));
}

static char *hex_of(const char *evp, const void *data, size_t len)
{
	unsigned char raw[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char *out;

	ck_assert_int_eq(EVP_Digest(data, len, raw, &n, EVP_get_digestbyname(evp), NULL), 1);
	out = eb_xmalloc(2 * n + 1);
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return out;
}

/* What every server test works with: two index trees, a wheel directory
 * and an empty blob cache under one temporary directory. */
struct fixture {
	char *tmp, *tree1, *tree2, *wheels, *cache;
	char *alpha256, *alpha_md5, *alpha512, *meta256, *beta256, *evil256, *gamma256;
};

static struct fixture fx;

static const char ALPHA[] = "PK\x03\x04 fake wheel: alpha 1.0\n";
static const char ALPHA_META[] = "Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\n";
static const char ALPHA2[] = "PK\x03\x04 fake wheel: alpha 2.0\n";
static const char BETA[] = "PK\x03\x04 fake wheel: beta 2.0\n";
static const char EVIL[] = "PK\x03\x04 fake wheel: alpha 9.9 (the other index)\n";
static const char GAMMA[] = "PK\x03\x04 fake wheel: gamma 1.0\n";

/* Files of tree 1's alpha page, in page order. */
enum { F_GOOD, F_BADHASH, F_MD5, F_SHA512, F_MISSING, F_BADSIZE, F_NOMETA, F_COUNT };

static void build_trees(void)
{
	char *s;

	fx.tmp = eb_test_tmpdir();
	fx.tree1 = eb_path_join(fx.tmp, "tree1");
	fx.tree2 = eb_path_join(fx.tmp, "tree2");
	fx.wheels = eb_path_join(fx.tmp, "wheels");
	fx.cache = eb_path_join(fx.tmp, "cache");
	fx.alpha256 = hex_of("SHA256", ALPHA, strlen(ALPHA));
	fx.alpha_md5 = hex_of("MD5", ALPHA, strlen(ALPHA));
	fx.alpha512 = hex_of("SHA512", ALPHA, strlen(ALPHA));
	fx.meta256 = hex_of("SHA256", ALPHA_META, strlen(ALPHA_META));
	fx.beta256 = hex_of("SHA256", BETA, strlen(BETA));
	fx.evil256 = hex_of("SHA256", EVIL, strlen(EVIL));
	fx.gamma256 = hex_of("SHA256", GAMMA, strlen(GAMMA));

	/* tree 1: alpha (JSON and HTML), beta (HTML only), local (a page
	 * naming a file:// URL) */
	put_str(fx.tree1, "files/alpha-1.0-py3-none-any.whl", ALPHA);
	put_str(fx.tree1, "files/alpha-1.0-py3-none-any.whl.metadata", ALPHA_META);
	put_str(fx.tree1, "files/beta-2.0-py3-none-any.whl", BETA);
	s = eb_xasprintf(
		"{\"meta\": {\"api-version\": \"1.1\"}, \"name\": \"alpha\", \"files\": [\n"
		" {\"filename\": \"alpha-1.0-py3-none-any.whl\","
		"  \"url\": \"../../files/alpha-1.0-py3-none-any.whl\","
		"  \"hashes\": {\"sha256\": \"%s\"}, \"requires-python\": \">=3.8\","
		"  \"core-metadata\": {\"sha256\": \"%s\"}, \"size\": %zu,"
		"  \"upload-time\": \"2024-01-02T03:04:05Z\"},\n"
		" {\"filename\": \"alpha-0.1-py3-none-any.whl\","
		"  \"url\": \"../../files/alpha-1.0-py3-none-any.whl\","
		"  \"hashes\": {\"sha256\": \"" H64Z "\"}, \"core-metadata\": {\"sha256\": \"" H64O
		"\"}},\n"
		" {\"filename\": \"alpha-0.2-py3-none-any.whl\","
		"  \"url\": \"../../files/alpha-1.0-py3-none-any.whl\", \"hashes\": {\"md5\": \"%s\"}},\n"
		" {\"filename\": \"alpha-0.3-py3-none-any.whl\","
		"  \"url\": \"../../files/alpha-1.0-py3-none-any.whl\","
		"  \"hashes\": {\"sha512\": \"%s\", \"blake2b_256\": \"00\"}},\n"
		" {\"filename\": \"alpha-0.4-py3-none-any.whl\","
		"  \"url\": \"../../files/missing-0.4-py3-none-any.whl\","
		"  \"hashes\": {\"sha256\": \"" H64O "\"}},\n"
		" {\"filename\": \"alpha-0.5-py3-none-any.whl\","
		"  \"url\": \"../../files/alpha-1.0-py3-none-any.whl\", \"hashes\": {\"sha256\": \"%s\"},"
		"  \"size\": %zu},\n"
		" {\"filename\": \"alpha-0.6-py3-none-any.whl\","
		"  \"url\": \"../../files/beta-2.0-py3-none-any.whl\", \"hashes\": {\"sha256\": \"%s\"},"
		"  \"core-metadata\": true}\n"
		"]}\n",
		fx.alpha256, fx.meta256, strlen(ALPHA), fx.alpha_md5, fx.alpha512, fx.alpha256,
		strlen(ALPHA) + 1, fx.beta256);
	put_str(fx.tree1, "simple/alpha/index.json", s);
	free(s);
	s = eb_xasprintf("<!DOCTYPE html>\n<html><head>"
			 "<meta name=\"pypi:repository-version\" content=\"1.0\">"
			 "<title>Links for alpha</title></head><body><h1>Links for alpha</h1>\n"
			 "<a href=\"../../files/alpha-1.0-py3-none-any.whl#sha256=%s\" "
			 "data-requires-python=\"&gt;=3.8\" data-core-metadata=\"sha256=%s\">"
			 "alpha-1.0-py3-none-any.whl</a><br/>\n</body></html>\n",
			 fx.alpha256, fx.meta256);
	put_str(fx.tree1, "simple/alpha/index.html", s);
	free(s);
	s = eb_xasprintf("<html><body>\n<a href=\"../../files/beta-2.0-py3-none-any.whl#sha256=%s\" "
			 "data-requires-python=\"&gt;=3.7\" data-dist-info-metadata=\"true\">"
			 "beta-2.0-py3-none-any.whl</a>\n</body></html>\n",
			 fx.beta256);
	put_str(fx.tree1, "simple/beta/index.html", s);
	free(s);
	put_str(fx.tree1, "simple/local/index.html",
		"<a href=\"file:///etc/hostname#sha256=" H64Z "\">local-1.0-py3-none-any.whl</a>\n");

	/* tree 2: another alpha (which must lose) and gamma */
	put_str(fx.tree2, "files/alpha-9.9-py3-none-any.whl", EVIL);
	put_str(fx.tree2, "files/gamma-1.0-py3-none-any.whl", GAMMA);
	s = eb_xasprintf("<a href=\"../../files/alpha-9.9-py3-none-any.whl#sha256=%s\">"
			 "alpha-9.9-py3-none-any.whl</a>\n", fx.evil256);
	put_str(fx.tree2, "simple/alpha/index.html", s);
	free(s);
	s = eb_xasprintf("<a href=\"../../files/gamma-1.0-py3-none-any.whl#sha256=%s\">"
			 "gamma-1.0-py3-none-any.whl</a>\n", fx.gamma256);
	put_str(fx.tree2, "simple/gamma/index.html", s);
	free(s);

	/* a wheel directory */
	put_str(fx.wheels, "alpha-1.0-py3-none-any.whl", ALPHA);
	put_str(fx.wheels, "Alpha-2.0-py3-none-any.whl", ALPHA2);
	put_str(fx.wheels, "alphabet-1.0-py3-none-any.whl", BETA);
	put_str(fx.wheels, ".alpha-3.0-py3-none-any.whl", BETA);
	put_str(fx.wheels, "alpha-4.0.whl", BETA);
	put_str(fx.wheels, "alpha-5.0.tar.gz", BETA);
	put_str(fx.wheels, "README.txt", "not a wheel\n");
	{
		eb_autofree char *sub = eb_path_join(fx.wheels, "alpha-6.0-py3-none-any.whl");
		ck_assert_int_eq(mkdir(sub, 0755), 0);
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fx_setup(void)
{
	memset(&fx, 0, sizeof(fx));
	build_trees();
}

static void fx_teardown(void)
{
	if (fx.tmp)
		nftw(fx.tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx.tmp);
	free(fx.tree1);
	free(fx.tree2);
	free(fx.wheels);
	free(fx.cache);
	free(fx.alpha256);
	free(fx.alpha_md5);
	free(fx.alpha512);
	free(fx.meta256);
	free(fx.beta256);
	free(fx.evil256);
	free(fx.gamma256);
	memset(&fx, 0, sizeof(fx));
	eb_http_client_free(g_http);
	g_http = NULL;
	eb_auth_free(g_auth);
	g_auth = NULL;
}

static struct eb_pyindex_set *new_set(const char *netrc)
{
	struct eb_pyindex_options o = { 0 };
	struct eb_pyindex_set *s = NULL;
	struct eb_error *err = NULL;

	o.http = test_http();
	o.netrc = netrc;
	o.no_netrc = netrc == NULL; /* never the developer's ~/.netrc */
	ck_assert_int_eq(eb_pyindex_set_new(&s, &o, &err), 0);
	ck_assert_ptr_null(err);
	return s;
}

static void add_ok(struct eb_pyindex_set *s, const char *name, const char *location)
{
	struct eb_error *err = NULL;
	int rc = eb_pyindex_set_add(s, name, location, &err);
	ck_assert_msg(rc == 0, "adding '%s': %s", location, err ? err->msg : "");
}

static void add_srv(struct eb_pyindex_set *s, const char *name, const struct srv *sv,
		    const char *userinfo)
{
	eb_autofree char *url = srv_url(sv, userinfo, "/simple");
	add_ok(s, name, url);
}

static struct eb_blobstore *open_cache(void)
{
	struct eb_blobstore *bs = NULL;
	struct eb_error *err = NULL;
	ck_assert_int_eq(eb_blobstore_open(&bs, fx.cache, &err), 0);
	return bs;
}

/* Files in the cache's blob and temp directories together. */
static int cache_files(void)
{
	static const char *const sub[] = { "blobs/sha256", "tmp" };
	int n = 0;

	for (size_t i = 0; i < 2; i++) {
		eb_autofree char *d = eb_path_join(fx.cache, sub[i]);
		DIR *dir = opendir(d);
		struct dirent *de;
		if (!dir)
			continue;
		while ((de = readdir(dir)))
			n += de->d_name[0] != '.';
		closedir(dir);
	}
	return n;
}

static void project_ok(struct eb_pyindex_set *s, const char *name, struct eb_pyindex_page *p)
{
	struct eb_error *err = NULL;
	int rc = eb_pyindex_set_project(s, name, p, &err);
	ck_assert_msg(rc == 0, "'%s': %s", name, err ? err->msg : "");
}

/* ---- fetching pages -------------------------------------------------------- */

START_TEST(test_fetch_json)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	eb_autofree char *accept = NULL;
	eb_autofree char *authz = NULL;
	eb_autofree char *want = NULL;

	srv_start(&sv, fx.tree1, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	ck_assert_uint_eq(eb_pyindex_set_count(s), 1);
	ck_assert_str_eq(eb_pyindex_set_label(s, 0), "one");
	ck_assert_ptr_null(eb_pyindex_set_label(s, 1));

	project_ok(s, "Alpha", &p);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_JSON);
	ck_assert_int_eq(p.kind, EB_PYINDEX_HTTP);
	ck_assert_int_eq(p.index, 0);
	ck_assert_uint_eq(p.api_minor, 1);
	ck_assert_uint_eq(p.nfiles, F_COUNT);
	want = srv_url(&sv, NULL, "/files/alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(p.files[F_GOOD].url, want);
	ck_assert_str_eq(eb_pyindex_file_hash(&p.files[F_GOOD], "sha256"), fx.alpha256);
	ck_assert_int_eq(p.files[F_GOOD].size, (int64_t)strlen(ALPHA));
	eb_pyindex_page_release(&p);

	/* the normalized name with its trailing slash, the PEP 691 Accept,
	 * no credentials, no redirect */
	ck_assert_int_eq(srv_seen(&sv, "/simple/alpha/", &accept, &authz), 1);
	ck_assert_str_eq(accept, EB_PYINDEX_ACCEPT);
	ck_assert_ptr_null(authz);
	ck_assert_int_eq(srv_seen(&sv, "/simple/alpha", NULL, NULL), 0);

	/* other spellings normalize to the same page */
	project_ok(s, "ALPHA", &p);
	eb_pyindex_page_release(&p);
	ck_assert_int_eq(srv_seen(&sv, "/simple/alpha/", NULL, NULL), 2);

	/* beta has no JSON page: the server falls back to HTML */
	project_ok(s, "beta", &p);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_HTML);
	ck_assert_uint_eq(p.nfiles, 1);
	ck_assert_str_eq(p.files[0].requires_python, ">=3.7");
	ck_assert_int_eq(p.files[0].core_metadata, 1);
	eb_pyindex_page_release(&p);

	eb_pyindex_set_free(s);
	srv_stop(&sv);
}
END_TEST

START_TEST(test_fetch_html)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	eb_autofree char *want = NULL;

	srv_start(&sv, fx.tree1, "--no-json", NULL);
	s = new_set(NULL);
	add_srv(s, NULL, &sv, NULL);
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_HTML);
	ck_assert_uint_eq(p.api_minor, 0);
	ck_assert_uint_eq(p.nfiles, 1);
	want = srv_url(&sv, NULL, "/files/alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(p.files[0].url, want);
	ck_assert_str_eq(p.files[0].filename, "alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(eb_pyindex_file_hash(&p.files[0], "sha256"), fx.alpha256);
	ck_assert_str_eq(p.files[0].requires_python, ">=3.8");
	ck_assert_str_eq(p.files[0].core_metadata_hashes.items[0].hex, fx.meta256);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	srv_stop(&sv);
}
END_TEST

START_TEST(test_first_index_wins)
{
	struct srv a, b;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;

	srv_start(&a, fx.tree1, NULL);
	srv_start(&b, fx.tree2, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &a, NULL);
	add_srv(s, "two", &b, NULL);

	/* both have alpha: the first one serves it and the second is not asked */
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(p.index, 0);
	ck_assert_str_eq(p.files[0].filename, "alpha-1.0-py3-none-any.whl");
	eb_pyindex_page_release(&p);
	ck_assert_int_eq(srv_seen(&b, "/simple/alpha/", NULL, NULL), 0);

	/* only the second has gamma: a 404 moves on */
	project_ok(s, "gamma", &p);
	ck_assert_int_eq(p.index, 1);
	ck_assert_str_eq(p.files[0].filename, "gamma-1.0-py3-none-any.whl");
	eb_pyindex_page_release(&p);
	ck_assert_int_eq(srv_seen(&a, "/simple/gamma/", NULL, NULL), 1);

	/* nobody has it */
	ck_assert_int_eq(eb_pyindex_set_project(s, "No_Such.Thing", &p, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg, "no index has project 'no-such-thing'");
	ck_assert_str_eq(err->hint, "looked in 'one', 'two'");
	ck_assert_ptr_null(p.files);
	eb_error_clear(&err);

	/* one index by position, routes or not */
	ck_assert_int_eq(eb_pyindex_fetch_project(s, 0, "gamma", &p, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg, "index 'one' does not have project 'gamma'");
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_fetch_project(s, 1, "alpha", &p, &err), 0);
	ck_assert_int_eq(p.index, 1);
	eb_pyindex_page_release(&p);
	ck_assert_int_eq(eb_pyindex_fetch_project(s, 2, "alpha", &p, &err), -EB_EINVALID);
	eb_error_clear(&err);

	/* bad names never reach a server */
	ck_assert_int_eq(eb_pyindex_set_project(s, "-bad-", &p, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'-bad-' is not a valid project name"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_project(s, "../x", &p, &err), -EB_EINVALID);
	eb_error_clear(&err);

	eb_pyindex_set_free(s);
	srv_stop(&a);
	srv_stop(&b);
}
END_TEST

START_TEST(test_routes)
{
	struct srv a, b;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;

	srv_start(&a, fx.tree1, NULL);
	srv_start(&b, fx.tree2, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &a, NULL);
	add_srv(s, "two", &b, NULL);

	ck_assert_int_eq(eb_pyindex_set_route(s, "Alpha", "two", &err), 0);
	ck_assert_int_eq(eb_pyindex_set_route(s, "alpha", "two", &err), 0); /* again: fine */
	ck_assert_int_eq(eb_pyindex_set_route(s, "gamma", "one", &err), 0);

	/* routed: the first index is not asked at all */
	project_ok(s, "ALPHA", &p);
	ck_assert_int_eq(p.index, 1);
	ck_assert_str_eq(p.files[0].filename, "alpha-9.9-py3-none-any.whl");
	eb_pyindex_page_release(&p);
	ck_assert_int_eq(srv_seen(&a, "/simple/alpha/", NULL, NULL), 0);

	/* routed to an index without it: no fall-through */
	ck_assert_int_eq(eb_pyindex_set_project(s, "gamma", &p, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg, "project 'gamma' is routed to index 'one', which does not have it");
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&b, "/simple/gamma/", NULL, NULL), 0);

	/* unrouted projects still go in order */
	project_ok(s, "beta", &p);
	ck_assert_int_eq(p.index, 0);
	eb_pyindex_page_release(&p);

	ck_assert_int_eq(eb_pyindex_set_route(s, "alpha", "one", &err), -EB_EINVALID);
	ck_assert_str_eq(err->msg, "project 'alpha' is routed to both index 'two' and index 'one'");
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_route(s, "beta", "three", &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'three', which is not configured"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_route(s, "be ta", "one", &err), -EB_EINVALID);
	eb_error_clear(&err);

	eb_pyindex_set_free(s);
	srv_stop(&a);
	srv_stop(&b);
}
END_TEST

START_TEST(test_failure_stops_lookup)
{
	struct srv a, b;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;

	/* the first index is broken for gamma (500 after a retry) and
	 * refuses delta (403): neither may fall through to the second, which
	 * has gamma */
	srv_start(&a, fx.tree1, "--status", "/simple/gamma/=500", "--status",
		  "/simple/delta/=403", NULL);
	srv_start(&b, fx.tree2, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &a, NULL);
	add_srv(s, "two", &b, NULL);

	ck_assert_int_eq(eb_pyindex_set_project(s, "gamma", &p, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "fetching project 'gamma' from index 'one'"));
	ck_assert_ptr_nonnull(strstr(err->msg, "answered 500"));
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&b, "/simple/gamma/", NULL, NULL), 0);

	ck_assert_int_eq(eb_pyindex_set_project(s, "delta", &p, &err), -EB_EFAIL);
	ck_assert_ptr_nonnull(strstr(err->msg, "answered 403"));
	ck_assert_ptr_nonnull(err->hint);
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&b, "/simple/delta/", NULL, NULL), 0);

	eb_pyindex_set_free(s);
	srv_stop(&a);
	srv_stop(&b);
}
END_TEST

START_TEST(test_bad_pages_from_server)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	struct eb_pyindex_options o = { 0 };

	srv_start(&sv, fx.tree1, "--type", "/simple/alpha/=application/json", "--type",
		  "/simple/beta/=application/vnd.pypi.simple.v2+html", NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	ck_assert_int_eq(eb_pyindex_set_project(s, "alpha", &p, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "content type 'application/json'"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_project(s, "beta", &p, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "api version 1"));
	eb_error_clear(&err);
	eb_pyindex_set_free(s);
	srv_stop(&sv);

	/* a page over the cap */
	srv_start(&sv, fx.tree1, NULL);
	o.http = test_http();
	o.no_netrc = 1;
	o.max_page = 100;
	ck_assert_int_eq(eb_pyindex_set_new(&s, &o, &err), 0);
	add_srv(s, "one", &sv, NULL);
	ck_assert_int_eq(eb_pyindex_set_project(s, "alpha", &p, &err), -EB_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(err->msg, "fetching project 'alpha' from index 'one'"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_project(s, "gamma", &p, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);
	eb_pyindex_set_free(s);
	srv_stop(&sv);
}
END_TEST

START_TEST(test_add_locations)
{
	struct eb_pyindex_set *s = new_set(NULL);
	struct eb_error *err = NULL;
	eb_autofree char *missing = eb_path_join(fx.tmp, "missing");
	eb_autofree char *furl = eb_xasprintf("file://%s/simple/", fx.tree1);

	add_ok(s, NULL, "https://pypi.org/simple/");
	ck_assert_str_eq(eb_pyindex_set_label(s, 0), "https://pypi.org/simple/");
	add_ok(s, NULL, "https://user:tok3n-XYZ@private.example/simple");
	ck_assert_str_eq(eb_pyindex_set_label(s, 1), "https://****@private.example/simple");
	add_ok(s, "tree", furl);
	add_ok(s, "dir", fx.wheels);

	ck_assert_int_eq(eb_pyindex_set_add(s, "dir", fx.tree1, &err), -EB_EINVALID);
	ck_assert_str_eq(err->msg, "index 'dir' is configured twice");
	eb_error_clear(&err);
	/* the same index again is nothing new; another one under its label is
	 * an error that does not show either password */
	add_ok(s, NULL, "https://user:tok3n-XYZ@private.example/simple");
	ck_assert_uint_eq(eb_pyindex_set_count(s), 4);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, "https://user:other-PW@private.example/simple",
					  &err),
			 -EB_EINVALID);
	assert_no_secret(err, "tok3n-XYZ");
	assert_no_secret(err, "other-PW");
	ck_assert_str_eq(err->msg, "index 'https://****@private.example/simple' is configured twice");
	eb_error_clear(&err);
	/* a name with credentials is redacted too, and routes find it as
	 * written */
	add_ok(s, "https://u:tok3n-XYZ@named.example/simple",
	       "https://u:tok3n-XYZ@named.example/simple");
	ck_assert_str_eq(eb_pyindex_set_label(s, 4), "https://****@named.example/simple");
	ck_assert_int_eq(eb_pyindex_set_route(s, "alpha", "https://u:tok3n-XYZ@named.example/simple",
					    &err),
			 0);
	ck_assert_int_eq(eb_pyindex_set_route(s, "alpha", "https://****@named.example/simple", &err),
			 0);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, missing, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, "ftp://u:tok3n-XYZ@h/simple", &err), -EB_EINVALID);
	assert_no_secret(err, "tok3n-XYZ");
	ck_assert_ptr_nonnull(strstr(err->msg, "scheme 'ftp'"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, "https://u:tok3n-XYZ@h/simple?x=1", &err),
			 -EB_EINVALID);
	assert_no_secret(err, "tok3n-XYZ");
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, "https://u:tok3n-XYZ@h:99999/simple", &err),
			 -EB_EINVALID);
	assert_no_secret(err, "tok3n-XYZ");
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, "", &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_pyindex_set_add(s, NULL, "u:tok3n-XYZ@h/simple", &err), -EB_EINVALID);
	assert_no_secret(err, "tok3n-XYZ");
	ck_assert_ptr_nonnull(strstr(err->msg, "without a scheme"));
	eb_error_clear(&err);
	{
		eb_autofree char *file = eb_path_join(fx.tree1, "files/beta-2.0-py3-none-any.whl");
		ck_assert_int_eq(eb_pyindex_set_add(s, NULL, file, &err), -EB_EINVALID);
		ck_assert_ptr_nonnull(strstr(err->msg, "is not a directory"));
		eb_error_clear(&err);
	}
	ck_assert_uint_eq(eb_pyindex_set_count(s), 5);
	eb_pyindex_set_free(s);
}
END_TEST

/* ---- downloads ---------------------------------------------------------------- */

static int download(struct eb_pyindex_set *s, const struct eb_pyindex_page *p, size_t i,
		    struct eb_blobstore *bs, const char *const *required, char *digest,
		    struct eb_error **err)
{
	return eb_pyindex_download(s, p, &p->files[i], bs, required, digest, err);
}

static void assert_blob(struct eb_blobstore *bs, const char *digest, const char *content)
{
	struct eb_buf b;
	struct eb_error *err = NULL;

	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_blobstore_read(bs, digest, &b, 0, &err), 0);
	ck_assert_uint_eq(b.len, strlen(content));
	ck_assert_int_eq(memcmp(b.ptr, content, b.len), 0);
	eb_buf_release(&b);
}

START_TEST(test_download)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_blobstore *bs = open_cache();
	struct eb_error *err = NULL;
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *want = eb_xasprintf("sha256:%s", fx.alpha256);
	const char *files_path = "/files/alpha-1.0-py3-none-any.whl";

	srv_start(&sv, fx.tree1, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	project_ok(s, "alpha", &p);

	/* a wrong sha256: an error, and nothing in the cache, not even a
	 * temp file */
	ck_assert_int_eq(download(s, &p, F_BADHASH, bs, NULL, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "hash mismatch for 'alpha-0.1-py3-none-any.whl'"));
	ck_assert_str_eq(digest, "");
	eb_error_clear(&err);
	ck_assert_int_eq(cache_files(), 0);

	/* the right one */
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_str_eq(digest, want);
	assert_blob(bs, digest, ALPHA);
	ck_assert_int_eq(srv_seen(&sv, files_path, NULL, NULL), 2);

	/* cached: no second transfer */
	memset(digest, 0, sizeof(digest));
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), 0);
	ck_assert_str_eq(digest, want);
	ck_assert_int_eq(srv_seen(&sv, files_path, NULL, NULL), 2);

	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	eb_blobstore_free(bs);
	srv_stop(&sv);
}
END_TEST

START_TEST(test_download_cut)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_blobstore *bs = open_cache();
	struct eb_error *err = NULL;
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *want = eb_xasprintf("sha256:%s", fx.alpha256);
	const char *path = "/files/alpha-1.0-py3-none-any.whl";
	eb_autofree char *cut = eb_xasprintf("%s=10,2", path);

	/* broken off twice after 10 bytes: the third try gets it whole */
	srv_start(&sv, fx.tree1, "--cut", cut, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), 0);
	ck_assert_str_eq(digest, want);
	assert_blob(bs, digest, ALPHA);
	ck_assert_int_eq(srv_seen(&sv, path, NULL, NULL), 3);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	srv_stop(&sv);

	/* broken off every time: an error, and no partial blob anywhere */
	nftw(fx.cache, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	eb_blobstore_free(bs);
	bs = open_cache();
	free(cut);
	cut = eb_xasprintf("%s=10,100", path);
	srv_start(&sv, fx.tree1, "--cut", cut, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "downloading 'alpha-1.0-py3-none-any.whl'"));
	eb_error_clear(&err);
	ck_assert_int_eq(cache_files(), 0);
	ck_assert_int_eq(srv_seen(&sv, path, NULL, NULL), 3);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	eb_blobstore_free(bs);
	srv_stop(&sv);
}
END_TEST

START_TEST(test_download_checks)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_blobstore *bs = open_cache();
	struct eb_error *err = NULL;
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *want = eb_xasprintf("sha256:%s", fx.alpha256);
	eb_autofree char *req_good = eb_xasprintf("sha256:%s", fx.alpha256);
	eb_autofree char *req_512 = eb_xasprintf("sha512:%s", fx.alpha512);
	eb_autofree char *req_upper = eb_xasprintf("sha256:%s", fx.alpha256);
	const char *wrong[] = { "sha256:" H64Z, NULL };
	const char *either[] = { "sha256:" H64O, req_good, NULL };
	const char *by512[] = { req_512, NULL };
	const char *md5[] = { "md5:0123456789abcdef0123456789abcdef", NULL };
	const char *junk[] = { "sha256:xyz", NULL };
	const char *upper[] = { req_upper, NULL };

	for (char *c = req_upper + 7; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	srv_start(&sv, fx.tree1, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	project_ok(s, "alpha", &p);

	/* required hashes: none matches -> error, nothing stored */
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, wrong, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "none of the required hashes"));
	ck_assert_ptr_nonnull(strstr(err->hint, fx.alpha256));
	eb_error_clear(&err);
	ck_assert_int_eq(cache_files(), 0);
	/* unusable required hashes fail before any transfer */
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, md5, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "only sha256, sha384 and sha512"));
	eb_error_clear(&err);
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, junk, digest, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&sv, "/files/alpha-1.0-py3-none-any.whl", NULL, NULL), 1);

	/* md5 alone proves nothing: refused without a transfer */
	ck_assert_int_eq(download(s, &p, F_MD5, bs, NULL, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "no sha256 or stronger hash"));
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&sv, "/files/alpha-1.0-py3-none-any.whl", NULL, NULL), 1);
	/* ... but md5 plus a required sha512 is fine, and md5 is checked */
	ck_assert_int_eq(download(s, &p, F_MD5, bs, by512, digest, &err), 0);
	ck_assert_str_eq(digest, want);
	ck_assert_int_eq(cache_files(), 1);

	/* one of several required hashes, any case */
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, either, digest, &err), 0);
	ck_assert_str_eq(digest, want);
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, upper, digest, &err), 0);

	/* sha512 only (and a hash envbuild cannot compute) */
	ck_assert_int_eq(download(s, &p, F_SHA512, bs, NULL, digest, &err), 0);
	ck_assert_str_eq(digest, want);

	/* the index's size is a cap and a check */
	ck_assert_int_eq(download(s, &p, F_BADSIZE, bs, NULL, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "the index says"));
	eb_error_clear(&err);

	/* missing on the server */
	ck_assert_int_eq(download(s, &p, F_MISSING, bs, NULL, digest, &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, "answered 404"));
	eb_error_clear(&err);
	ck_assert_int_eq(cache_files(), 1);

	/* a page from an http index cannot make envbuild read local files */
	eb_pyindex_page_release(&p);
	project_ok(s, "local", &p);
	ck_assert_int_eq(download(s, &p, 0, bs, NULL, digest, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "refusing 'file:///etc/hostname'"));
	eb_error_clear(&err);
	ck_assert_int_eq(cache_files(), 1);

	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	eb_blobstore_free(bs);
	srv_stop(&sv);
}
END_TEST

START_TEST(test_metadata)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	struct eb_buf b;

	srv_start(&sv, fx.tree1, NULL);
	s = new_set(NULL);
	add_srv(s, "one", &sv, NULL);
	project_ok(s, "alpha", &p);
	eb_buf_init(&b, 0);

	ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_GOOD], &b, &err), 0);
	ck_assert_str_eq(b.ptr, ALPHA_META);
	ck_assert_int_eq(srv_seen(&sv, "/files/alpha-1.0-py3-none-any.whl.metadata", NULL, NULL), 1);
	eb_buf_truncate(&b, 0);

	/* a wrong hash: an error and nothing handed out */
	ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_BADHASH], &b, &err),
			 -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "hash mismatch for the metadata"));
	ck_assert_uint_eq(b.len, 0);
	eb_error_clear(&err);

	/* not offered: no request */
	ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_MD5], &b, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg, "the index offers no metadata file for 'alpha-0.2-py3-none-any.whl'");
	eb_error_clear(&err);
	/* offered ("true", no hash) but absent on the server */
	ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_NOMETA], &b, &err),
			 -EB_ENOTFOUND);
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&sv, "/files/beta-2.0-py3-none-any.whl.metadata", NULL, NULL), 1);

	/* a cap on the metadata */
	{
		struct eb_buf small;
		eb_buf_init(&small, 4);
		ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_GOOD], &small, &err),
				 -EB_ETOOBIG);
		eb_error_clear(&err);
		eb_buf_release(&small);
	}

	eb_buf_release(&b);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	srv_stop(&sv);
}
END_TEST

/* ---- local indexes --------------------------------------------------------------- */

START_TEST(test_wheel_dir)
{
	struct eb_pyindex_set *s = new_set(NULL);
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	struct eb_blobstore *bs = open_cache();
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *a2 = hex_of("SHA256", ALPHA2, strlen(ALPHA2));
	eb_autofree char *want_url = eb_xasprintf("file://%s/alpha-1.0-py3-none-any.whl", fx.wheels);
	eb_autofree char *cwd = getcwd(NULL, 0);

	add_ok(s, "wheels", fx.wheels);
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_DIR);
	ck_assert_int_eq(p.kind, EB_PYINDEX_WHEEL_DIR);
	ck_assert_int_eq(p.index, 0);
	/* alphabet, hidden files, bad names, sdists and directories are not
	 * alpha's wheels */
	ck_assert_uint_eq(p.nfiles, 2);
	ck_assert_str_eq(p.files[0].filename, "Alpha-2.0-py3-none-any.whl");
	ck_assert_str_eq(eb_pyindex_file_hash(&p.files[0], "sha256"), a2);
	ck_assert_int_eq(p.files[0].size, (int64_t)strlen(ALPHA2));
	ck_assert_str_eq(p.files[1].filename, "alpha-1.0-py3-none-any.whl");
	ck_assert_str_eq(p.files[1].url, want_url);
	ck_assert_str_eq(eb_pyindex_file_hash(&p.files[1], "sha256"), fx.alpha256);
	ck_assert_int_eq(p.files[1].core_metadata, 0);

	ck_assert_int_eq(download(s, &p, 1, bs, NULL, digest, &err), 0);
	assert_blob(bs, digest, ALPHA);

	/* a wheel that changed since it was listed is caught */
	eb_pyindex_page_release(&p);
	project_ok(s, "alpha", &p);
	put_str(fx.wheels, "Alpha-2.0-py3-none-any.whl", "tampered");
	ck_assert_int_eq(download(s, &p, 0, bs, NULL, digest, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(cache_files(), 1);
	eb_pyindex_page_release(&p);

	ck_assert_int_eq(eb_pyindex_set_project(s, "gamma", &p, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);
	eb_pyindex_set_free(s);

	/* a relative path works too */
	ck_assert_int_eq(chdir(fx.tmp), 0);
	s = new_set(NULL);
	add_ok(s, NULL, "./wheels/");
	ck_assert_str_eq(eb_pyindex_set_label(s, 0), "./wheels/");
	project_ok(s, "alpha", &p);
	ck_assert_str_eq(p.files[1].url, want_url);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	eb_blobstore_free(bs);
	ck_assert_int_eq(chdir(cwd), 0); /* top_srcdir may be relative */
}
END_TEST

START_TEST(test_file_tree)
{
	struct eb_pyindex_set *s = new_set(NULL);
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	struct eb_blobstore *bs = open_cache();
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *root = eb_xasprintf("file://%s/simple", fx.tree1);
	eb_autofree char *want = eb_xasprintf("file://%s/files/alpha-1.0-py3-none-any.whl", fx.tree1);
	struct eb_buf b;

	add_ok(s, "tree", root);
	add_ok(s, "wheels", fx.wheels);

	/* index.json is preferred */
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_JSON);
	ck_assert_int_eq(p.kind, EB_PYINDEX_FILE_TREE);
	ck_assert_int_eq(p.index, 0);
	ck_assert_str_eq(p.files[F_GOOD].url, want);
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), 0);
	assert_blob(bs, digest, ALPHA);
	ck_assert_int_eq(download(s, &p, F_BADHASH, bs, NULL, digest, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_int_eq(download(s, &p, F_MISSING, bs, NULL, digest, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_GOOD], &b, &err), 0);
	ck_assert_str_eq(b.ptr, ALPHA_META);
	eb_buf_release(&b);
	eb_pyindex_page_release(&p);

	/* index.html otherwise */
	project_ok(s, "beta", &p);
	ck_assert_int_eq(p.format, EB_PYINDEX_FMT_HTML);
	eb_pyindex_page_release(&p);

	/* a miss in the tree moves on to the wheel directory */
	project_ok(s, "alphabet", &p);
	ck_assert_int_eq(p.index, 1);
	eb_pyindex_page_release(&p);
	ck_assert_int_eq(eb_pyindex_set_project(s, "gamma", &p, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->hint, "looked in 'tree', 'wheels'");
	ck_assert_int_eq(eb_pyindex_set_project(s, "gamma", &p, &err), -EB_ENOTFOUND);
	eb_error_clear(&err);

	/* a project directory without a page is an error */
	{
		eb_autofree char *d = eb_xasprintf("%s/simple/empty", fx.tree1);
		ck_assert_int_eq(mkdir(d, 0755), 0);
		ck_assert_int_eq(eb_pyindex_set_project(s, "empty", &p, &err), -EB_ENET);
		ck_assert_ptr_nonnull(strstr(err->msg, "no index.json or index.html"));
		eb_error_clear(&err);
	}
	eb_pyindex_set_free(s);
	eb_blobstore_free(bs);
}
END_TEST

/* ---- credentials ----------------------------------------------------------------- */

#define USER "alice"
#define PASS "s3cret-pw"

START_TEST(test_credentials_url)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	struct eb_blobstore *bs = open_cache();
	char digest[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *authz = NULL;
	eb_autofree char *label = NULL;
	struct eb_buf b;

	srv_start(&sv, fx.tree1, "--auth", USER ":" PASS, NULL);
	s = new_set(NULL);
	add_srv(s, NULL, &sv, USER ":" PASS);
	label = srv_url(&sv, "****", "/simple");
	ck_assert_str_eq(eb_pyindex_set_label(s, 0), label);

	project_ok(s, "alpha", &p);
	ck_assert_ptr_null(strstr(p.url, PASS));
	ck_assert_ptr_null(strstr(p.files[F_GOOD].url, PASS));
	ck_assert_int_eq(srv_seen(&sv, "/simple/alpha/", NULL, &authz), 1);
	ck_assert_str_eq(authz, "Basic YWxpY2U6czNjcmV0LXB3"); /* alice:s3cret-pw */

	/* files on the index's origin get its credentials */
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), 0);
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_pyindex_fetch_metadata(s, &p, &p.files[F_GOOD], &b, &err), 0);
	eb_buf_release(&b);
	/* errors about files do not show them */
	ck_assert_int_eq(download(s, &p, F_MISSING, bs, NULL, digest, &err), -EB_ENOTFOUND);
	assert_no_secret(err, PASS);
	eb_error_clear(&err);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);

	/* no credentials: 401, said with a hint */
	s = new_set(NULL);
	add_srv(s, NULL, &sv, NULL);
	ck_assert_int_eq(eb_pyindex_set_project(s, "alpha", &p, &err), -EB_EFAIL);
	ck_assert_ptr_nonnull(strstr(err->msg, "answered 401"));
	ck_assert_ptr_nonnull(strstr(err->hint, "netrc"));
	eb_error_clear(&err);
	eb_pyindex_set_free(s);

	/* wrong credentials: the same, and they never show */
	s = new_set(NULL);
	add_srv(s, NULL, &sv, "al%69ce:WRONG-pw-123");
	ck_assert_int_eq(eb_pyindex_set_project(s, "alpha", &p, &err), -EB_EFAIL);
	assert_no_secret(err, "WRONG-pw-123");
	assert_no_secret(err, "al%69ce");
	ck_assert_ptr_nonnull(strstr(err->msg, "****"));
	eb_error_clear(&err);
	ck_assert_int_eq(srv_seen(&sv, "/simple/alpha/", NULL, &authz), 3);
	ck_assert_str_eq(authz, "Basic YWxpY2U6V1JPTkctcHctMTIz"); /* decoded: alice:WRONG-pw-123 */
	eb_pyindex_set_free(s);
	srv_stop(&sv);

	/* a dead server: the transport's message does not show them either */
	s = new_set(NULL);
	add_srv(s, NULL, &sv, USER ":" PASS);
	ck_assert_int_lt(eb_pyindex_set_project(s, "alpha", &p, &err), 0);
	assert_no_secret(err, PASS);
	eb_error_clear(&err);
	eb_pyindex_set_free(s);
	eb_blobstore_free(bs);
}
END_TEST

START_TEST(test_credentials_netrc)
{
	struct srv sv;
	struct eb_pyindex_set *s;
	struct eb_pyindex_page p;
	struct eb_error *err = NULL;
	eb_autofree char *netrc = eb_path_join(fx.tmp, "netrc");
	eb_autofree char *authz = NULL;
	struct eb_blobstore *bs = open_cache();
	char digest[EB_DIGEST_STR_LEN + 1];

	srv_start(&sv, fx.tree1, "--auth", USER ":" PASS, NULL);
	eb_test_write(fx.tmp, "netrc", "machine example.org login x password y\n"
				       "machine 127.0.0.1 login " USER " password " PASS "\n");
	s = new_set(netrc);
	add_srv(s, "private", &sv, NULL);
	project_ok(s, "alpha", &p);
	ck_assert_int_eq(download(s, &p, F_GOOD, bs, NULL, digest, &err), 0);
	/* netrc credentials go only after the server asked: a 401 first */
	ck_assert_int_eq(srv_seen(&sv, "/files/alpha-1.0-py3-none-any.whl", NULL, &authz), 2);
	ck_assert_str_eq(authz, "Basic YWxpY2U6czNjcmV0LXB3");
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);

	/* a "default" entry is for no host unless the runner opts in */
	eb_test_write(fx.tmp, "netrc", "machine example.org login x password y\n"
				       "default login " USER " password " PASS "\n");
	s = new_set(netrc);
	add_srv(s, "private", &sv, NULL);
	ck_assert_int_eq(eb_pyindex_set_project(s, "alpha", &p, &err), -EB_EFAIL);
	assert_no_secret(err, PASS);
	eb_error_clear(&err);
	eb_pyindex_set_free(s);
	setenv("ENVBUILD_NETRC_DEFAULT", "1", 1);
	s = new_set(netrc);
	add_srv(s, "private", &sv, NULL);
	project_ok(s, "alpha", &p);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	unsetenv("ENVBUILD_NETRC_DEFAULT");
	eb_test_write(fx.tmp, "netrc", "machine example.org login x password y\n"
				       "machine 127.0.0.1 login " USER " password " PASS "\n");

	/* URL credentials win over netrc */
	s = new_set(netrc);
	add_srv(s, "private", &sv, "bob:nope-pw");
	ck_assert_int_eq(eb_pyindex_set_project(s, "alpha", &p, &err), -EB_EFAIL);
	assert_no_secret(err, "nope-pw");
	assert_no_secret(err, PASS);
	eb_error_clear(&err);
	eb_pyindex_set_free(s);

	/* $NETRC is read when no file is given */
	setenv("NETRC", netrc, 1);
	{
		struct eb_pyindex_options o = { 0 };
		o.http = test_http();
		ck_assert_int_eq(eb_pyindex_set_new(&s, &o, &err), 0);
	}
	add_srv(s, "private", &sv, NULL);
	project_ok(s, "alpha", &p);
	eb_pyindex_page_release(&p);
	eb_pyindex_set_free(s);
	unsetenv("NETRC");

	eb_blobstore_free(bs);
	srv_stop(&sv);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("index");
	TCase *tp = tcase_create("parse");
	TCase *tn = tcase_create("server");
	TCase *tl = tcase_create("local");

	tcase_add_test(tp, test_json_full);
	tcase_add_test(tp, test_json_fragment_hash);
	tcase_add_loop_test(tp, test_api_version, 0, (int)(sizeof(api_cases) / sizeof(*api_cases)));
	tcase_add_loop_test(tp, test_json_malformed, 0, (int)(sizeof(bad_json) / sizeof(*bad_json)));
	tcase_add_test(tp, test_page_limits);
	tcase_add_test(tp, test_html_full);
	tcase_add_test(tp, test_html_base_and_oddities);
	tcase_add_loop_test(tp, test_html_malformed, 0, (int)(sizeof(bad_html) / sizeof(*bad_html)));
	tcase_add_loop_test(tp, test_content_type_dispatch, 0,
			    (int)(sizeof(types) / sizeof(*types)));
	tcase_add_loop_test(tp, test_redact, 0,
			    (int)(sizeof(redact_cases) / sizeof(*redact_cases)));
	tcase_add_test(tp, test_netrc);
	suite_add_tcase(s, tp);

	tcase_add_checked_fixture(tn, fx_setup, fx_teardown);
	tcase_set_timeout(tn, 60);
	tcase_add_test(tn, test_fetch_json);
	tcase_add_test(tn, test_fetch_html);
	tcase_add_test(tn, test_first_index_wins);
	tcase_add_test(tn, test_routes);
	tcase_add_test(tn, test_failure_stops_lookup);
	tcase_add_test(tn, test_bad_pages_from_server);
	tcase_add_test(tn, test_download);
	tcase_add_test(tn, test_download_cut);
	tcase_add_test(tn, test_download_checks);
	tcase_add_test(tn, test_metadata);
	tcase_add_test(tn, test_credentials_url);
	tcase_add_test(tn, test_credentials_netrc);
	suite_add_tcase(s, tn);

	tcase_add_checked_fixture(tl, fx_setup, fx_teardown);
	tcase_set_timeout(tl, 60);
	tcase_add_test(tl, test_add_locations);
	tcase_add_test(tl, test_wheel_dir);
	tcase_add_test(tl, test_file_tree);
	suite_add_tcase(s, tl);
	return s;
}

EB_TEST_MAIN(make_suite)
