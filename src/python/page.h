/*
 * page.h - a project page of the Python simple repository API: PEP 503
 * HTML and PEP 691 JSON, with PEP 592 yanking, PEP 658/714 core metadata
 * and PEP 700 sizes, parsed into one struct.
 *
 * Layering (service floor, python/): parsing is pure - no network, no file
 * system - so it can be tested and fuzzed on its own; index.h fetches the
 * pages.  May use util/ and net/ URL helpers only.
 *
 * eb_pyindex_parse_json() and eb_pyindex_parse_html() turn a page into a
 * struct eb_pyindex_page whose file URLs are absolute (resolved against
 * the page URL, or an HTML <base href>) and carry no fragment (the
 * fragment's "#sha256=" hash goes to the hashes).
 *
 * Errors: a page that breaks the API (malformed JSON or hashes, an api
 * major version other than 1, an unknown content type) is -EB_ENET.
 * Messages quote pages only in bounded, single-line form.
 *
 * Ownership: a page owns every string and array in it and is released with
 * eb_pyindex_page_release(), which leaves it empty.  Parse functions fill
 * *out completely on success and leave it empty on failure.  Strings
 * returned are the caller's (free()).
 */
#ifndef EB_PYTHON_PAGE_H
#define EB_PYTHON_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The simple API version envbuild implements: a page with a newer minor
 * version gets a warning, a newer major version is refused. */
#define EB_PYINDEX_API_MAJOR 1
#define EB_PYINDEX_API_MINOR 4

/* Default caps: a project page (PyPI's largest are a few MB) and a PEP 658
 * metadata file. */
#define EB_PYINDEX_PAGE_MAX ((size_t)64 << 20)
#define EB_PYINDEX_METADATA_MAX ((size_t)16 << 20)

/* The Accept header of a project page request (PEP 691's example). */
#define EB_PYINDEX_ACCEPT                                                                   \
	"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, " \
	"text/html;q=0.01"

struct eb_pyindex_hash {
	char *algo; /* hashlib name, lower-case: "sha256" (owned) */
	char *hex;  /* lower-case hex (owned) */
};

struct eb_pyindex_hashes {
	struct eb_pyindex_hash *items;
	size_t n;
};

struct eb_pyindex_file {
	char *filename;        /* the anchor text / "filename" (owned) */
	char *url;             /* absolute, without fragment (owned) */
	struct eb_pyindex_hashes hashes;
	char *requires_python; /* unescaped, or NULL (owned) */
	int yanked;            /* PEP 592 */
	char *yanked_reason;   /* NULL when not yanked or no reason given */
	/* PEP 658/714: 1 when <url>.metadata is served; its hashes (may be
	 * none: "true" without a hash). */
	int core_metadata;
	struct eb_pyindex_hashes core_metadata_hashes;
	int64_t size;          /* bytes, or -1 when the page does not say */
	char *upload_time;     /* ISO 8601 as given, or NULL (owned) */
};

enum eb_pyindex_kind {
	EB_PYINDEX_HTTP = 0,  /* http(s):// simple API */
	EB_PYINDEX_FILE_TREE, /* file:// simple API on disk */
	EB_PYINDEX_WHEEL_DIR, /* a flat directory of wheels */
};

enum eb_pyindex_format {
	EB_PYINDEX_FMT_JSON = 0, /* PEP 691 */
	EB_PYINDEX_FMT_HTML,     /* PEP 503 */
	EB_PYINDEX_FMT_DIR,      /* a listed directory of wheels */
};

struct eb_pyindex_page {
	char *url;  /* the page URL file URLs were resolved against; never
		     * has credentials (owned) */
	char *name; /* project name the page gives (JSON "name"), or NULL */
	enum eb_pyindex_format format;
	unsigned api_major, api_minor; /* 1.0 when the page does not say */
	struct eb_pyindex_file *files;
	size_t nfiles, files_cap;
	/* One-line notes for the user (a newer api minor version); the
	 * library never prints them. */
	char **warnings;
	size_t nwarnings;
	/* Where the page came from: the position of its index in the set
	 * (-1 when parsed directly) and the kind of index, which decides
	 * whether file:// URLs in it may be read. */
	int index;
	enum eb_pyindex_kind kind;
};

/* Parse a PEP 691 JSON page fetched from page_url (absolute; relative file
 * URLs resolve against it).  Unknown keys are ignored; known keys of the
 * wrong type, bad hashes and a missing filename or url fail with a message
 * naming the key ("files[2].size").  More than EB_PYINDEX_PAGE_MAX bytes is
 * -EB_ETOOBIG. */
int eb_pyindex_parse_json(struct eb_pyindex_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err);
/* Parse a PEP 503 HTML page: every <a href> is a file (anchor text =
 * filename, or the URL's last path segment when the text is empty), with
 * data-requires-python, data-yanked, data-core-metadata and
 * data-dist-info-metadata (entities decoded), the "#<algo>=<hex>" fragment
 * as its hash, <base href> honoured, and the api version from
 * <meta name="pypi:repository-version">. */
int eb_pyindex_parse_html(struct eb_pyindex_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err);
/* Dispatch on a Content-Type value (parameters ignored, case-insensitive):
 * application/vnd.pypi.simple.v1+json (or .latest+json) is JSON;
 * application/vnd.pypi.simple.v1+html (or .latest+html) and text/html are
 * HTML; anything else (another api major version included) is -EB_ENET. */
int eb_pyindex_parse_page(struct eb_pyindex_page *out, const char *content_type, const char *data,
		   size_t len, const char *page_url, struct eb_error **err);
void eb_pyindex_page_release(struct eb_pyindex_page *p);

/* The hex of f's hash by this algorithm ("sha256"), or NULL. */
const char *eb_pyindex_file_hash(const struct eb_pyindex_file *f, const char *algo);

/* url with "user:password@" replaced by "****@" and any query or fragment
 * dropped (signed storage URLs carry secrets there), for messages.  Works
 * on anything: a string without "://" is a path unless an '@' comes before
 * its first '/' (a URL that lost its scheme: "tok@host/simple" gives
 * "****@host/simple"); caller frees. */
char *eb_pyindex_redact_url(const char *url);

#endif
