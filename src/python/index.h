/*
 * index.h - Python package indexes: the simple repository API (PEP 503
 * HTML and PEP 691 JSON project pages, with PEP 592 yanking, PEP 658/714
 * core metadata and PEP 700 sizes), the same layout on disk behind a
 * file:// URL, and plain directories of wheels for air-gapped sites; an
 * ordered set of indexes where the first index that has a project wins and
 * a project can be routed to one index; verified downloads into the blob
 * store.
 *
 * Parsing is pure (no network, no file system) so it can be tested on its
 * own: eb_index_parse_json() and eb_index_parse_html() turn a page into a
 * struct eb_index_page whose file URLs are absolute (resolved against the
 * page URL, or an HTML <base href>) and carry no fragment (the fragment's
 * "#sha256=" hash goes to the hashes).
 *
 * Index locations (eb_index_set_add):
 *   - "https://[user:pass@]host/simple" - the simple API; plain http only
 *     where the HTTP layer allows it (loopback, hosts configured insecure);
 *   - "file:///srv/simple" - the simple API laid out on disk:
 *     <root>/<normalized-name>/index.json (PEP 691, preferred) or
 *     index.html (PEP 503);
 *   - "/srv/wheels" or "./wheels" (a path, no scheme) - a flat directory of
 *     wheels: the project's *.whl files are listed and their sha256 and size
 *     computed locally.
 *
 * Which index answers (the dependency-confusion guard, DESIGN): a project
 * routed to an index (eb_index_set_route) is looked up there and nowhere
 * else; any other project is looked up in order and the first index that
 * has it wins.  Only a definite "not here" (HTTP 404 or 410, no project
 * directory, no matching wheel) moves on to the next index: any other
 * failure stops the lookup, so an outage of a private index never lets a
 * public one serve the same name.
 *
 * Credentials: user:password in an http(s) index URL, else the netrc entry
 * for the host ($NETRC, else ~/.netrc; "machine" entries, then "default"),
 * sent as Basic auth to the index's own origin only (a file URL on another
 * host gets that host's netrc entry, if any; the HTTP layer drops the
 * header on redirects that leave the origin).  Credentials never appear in
 * error messages, warnings, page URLs or labels: URLs in messages go
 * through eb_index_redact_url().
 *
 * Local files: file:// URLs are read only from pages that came from a
 * file:// tree or a wheel directory, never from an http index's page.
 * Credentials in a file URL on a page are dropped (structs never hold
 * secrets); files on the index's origin get the index's credentials.
 *
 * Verification: eb_index_download() stores nothing it could not check - the
 * file must match every hash the index gives that envbuild can compute, at
 * least one of them (or of the required hashes) must be sha256 or stronger,
 * and when required hashes are given the file must match one of them.
 * A transfer that breaks off midway is started again (3 tries in all).
 * eb_index_fetch_metadata() checks the PEP 658 file against the page's
 * core-metadata hashes.
 *
 * Errors: a page that breaks the API (malformed JSON or hashes, an api
 * major version other than 1, an unknown content type) is -EB_ENET, as are
 * transport failures and unexpected HTTP answers; 401/403 is -EB_EFAIL
 * with a hint about credentials; a hash or size mismatch is -EB_EINVALID;
 * a project no index has, or a file the server does not have, is
 * -EB_ENOTFOUND; a bad project name or index location is -EB_EINVALID.
 * Messages quote pages only in bounded, single-line form.
 *
 * Thread safety: once configured (add, route), a set may be used from many
 * threads at once, provided its HTTP client may (http.h says it may).
 *
 * Ownership: a page owns every string and array in it and is released with
 * eb_index_page_release(), which leaves it empty.  Parse and fetch
 * functions fill *out completely on success and leave it empty on failure.
 * The set is freed with eb_index_set_free(); an HTTP client passed in its
 * options is borrowed and must outlive it.  Strings returned are the
 * caller's (free()).
 */
#ifndef EB_PYTHON_INDEX_H
#define EB_PYTHON_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/digest.h"
#include "util/error.h"

struct eb_blobstore;
struct eb_http_client;

/* The simple API version envbuild implements: a page with a newer minor
 * version gets a warning, a newer major version is refused. */
#define EB_INDEX_API_MAJOR 1
#define EB_INDEX_API_MINOR 4

/* Default caps: a project page (PyPI's largest are a few MB) and a PEP 658
 * metadata file. */
#define EB_INDEX_PAGE_MAX ((size_t)64 << 20)
#define EB_INDEX_METADATA_MAX ((size_t)16 << 20)

/* The Accept header of a project page request (PEP 691's example). */
#define EB_INDEX_ACCEPT                                                                   \
	"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, " \
	"text/html;q=0.01"

struct eb_index_hash {
	char *algo; /* hashlib name, lower-case: "sha256" (owned) */
	char *hex;  /* lower-case hex (owned) */
};

struct eb_index_hashes {
	struct eb_index_hash *items;
	size_t n;
};

struct eb_index_file {
	char *filename;        /* the anchor text / "filename" (owned) */
	char *url;             /* absolute, without fragment (owned) */
	struct eb_index_hashes hashes;
	char *requires_python; /* unescaped, or NULL (owned) */
	int yanked;            /* PEP 592 */
	char *yanked_reason;   /* NULL when not yanked or no reason given */
	/* PEP 658/714: 1 when <url>.metadata is served; its hashes (may be
	 * none: "true" without a hash). */
	int core_metadata;
	struct eb_index_hashes core_metadata_hashes;
	int64_t size;          /* bytes, or -1 when the page does not say */
	char *upload_time;     /* ISO 8601 as given, or NULL (owned) */
};

enum eb_index_kind {
	EB_INDEX_HTTP = 0,  /* http(s):// simple API */
	EB_INDEX_FILE_TREE, /* file:// simple API on disk */
	EB_INDEX_WHEEL_DIR, /* a flat directory of wheels */
};

enum eb_index_format {
	EB_INDEX_FMT_JSON = 0, /* PEP 691 */
	EB_INDEX_FMT_HTML,     /* PEP 503 */
	EB_INDEX_FMT_DIR,      /* a listed directory of wheels */
};

struct eb_index_page {
	char *url;  /* the page URL file URLs were resolved against; never
		     * has credentials (owned) */
	char *name; /* project name the page gives (JSON "name"), or NULL */
	enum eb_index_format format;
	unsigned api_major, api_minor; /* 1.0 when the page does not say */
	struct eb_index_file *files;
	size_t nfiles, files_cap;
	/* One-line notes for the user (a newer api minor version); the
	 * library never prints them. */
	char **warnings;
	size_t nwarnings;
	/* Where the page came from: the position of its index in the set
	 * (-1 when parsed directly) and the kind of index, which decides
	 * whether file:// URLs in it may be read. */
	int index;
	enum eb_index_kind kind;
};

/* ---- parsing (pure) ---------------------------------------------------- */

/* Parse a PEP 691 JSON page fetched from page_url (absolute; relative file
 * URLs resolve against it).  Unknown keys are ignored; known keys of the
 * wrong type, bad hashes and a missing filename or url fail with a message
 * naming the key ("files[2].size").  More than EB_INDEX_PAGE_MAX bytes is
 * -EB_ETOOBIG. */
int eb_index_parse_json(struct eb_index_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err);
/* Parse a PEP 503 HTML page: every <a href> is a file (anchor text =
 * filename, or the URL's last path segment when the text is empty), with
 * data-requires-python, data-yanked, data-core-metadata and
 * data-dist-info-metadata (entities decoded), the "#<algo>=<hex>" fragment
 * as its hash, <base href> honoured, and the api version from
 * <meta name="pypi:repository-version">. */
int eb_index_parse_html(struct eb_index_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err);
/* Dispatch on a Content-Type value (parameters ignored, case-insensitive):
 * application/vnd.pypi.simple.v1+json (or .latest+json) is JSON;
 * application/vnd.pypi.simple.v1+html (or .latest+html) and text/html are
 * HTML; anything else (another api major version included) is -EB_ENET. */
int eb_index_parse_page(struct eb_index_page *out, const char *content_type, const char *data,
		   size_t len, const char *page_url, struct eb_error **err);
void eb_index_page_release(struct eb_index_page *p);

/* The hex of f's hash by this algorithm ("sha256"), or NULL. */
const char *eb_index_file_hash(const struct eb_index_file *f, const char *algo);

/* url with "user:password@" replaced by "****@" and any query or fragment
 * dropped (signed storage URLs carry secrets there), for messages.  Works
 * on anything: a string without "://" is a path unless an '@' comes before
 * its first '/' (a URL that lost its scheme: "tok@host/simple" gives
 * "****@host/simple"); caller frees. */
char *eb_index_redact_url(const char *url);

/* Look host up in a netrc file: the first "machine" entry for it
 * (case-insensitive), else "default".  Returns 0 with *login and *password
 * set (password "" when the entry has none), 1 when the file does not
 * exist or has no entry with a login for host, or -EB_EIO when it cannot be
 * read.  Caller frees both (wipe the password first). */
int eb_index_netrc_lookup(const char *path, const char *host, char **login, char **password,
			  struct eb_error **err);

/* ---- an ordered set of indexes ----------------------------------------- */

struct eb_index_set;

/* Zero means "default" for every field. */
struct eb_index_options {
	/* Borrowed; NULL: the set makes its own with default options. */
	struct eb_http_client *http;
	/* netrc file; NULL: $NETRC, else $HOME/.netrc. */
	const char *netrc;
	/* Never read a netrc file (URL credentials still apply). */
	int no_netrc;
	/* Caps; 0: EB_INDEX_PAGE_MAX / EB_INDEX_METADATA_MAX. */
	size_t max_page;
	size_t max_metadata;
};

/* opts may be NULL (all defaults). */
int eb_index_set_new(struct eb_index_set **out, const struct eb_index_options *opts,
		     struct eb_error **err);
void eb_index_set_free(struct eb_index_set *s);

/* Append an index (lookup order is the order of adding).  name is a label
 * for routes and messages; NULL: the location.  Labels are kept redacted
 * (eb_index_redact_url), so a URL with credentials may serve as a name and
 * be given to eb_index_set_route() as written.  A file:// root or a wheel
 * directory must exist.  Labels are unique: adding the same index under
 * the same label again does nothing, another index under a taken label is
 * -EB_EINVALID. */
int eb_index_set_add(struct eb_index_set *s, const char *name, const char *location,
		     struct eb_error **err);
size_t eb_index_set_count(const struct eb_index_set *s);
/* The label of the i-th index (never a credential), or NULL past the end. */
const char *eb_index_set_label(const struct eb_index_set *s, size_t i);

/* Serve project (any spelling; it is normalized) from the index labelled
 * index_name (compared after redaction) only.  Routing one project to two different indexes is
 * -EB_EINVALID. */
int eb_index_set_route(struct eb_index_set *s, const char *project, const char *index_name,
		       struct eb_error **err);

/* The project page from the index that serves the project: the routed
 * index, else the first that has it.  -EB_ENOTFOUND when none has it. */
int eb_index_set_project(struct eb_index_set *s, const char *project, struct eb_index_page *out,
			 struct eb_error **err);
/* The project page from the i-th index, ignoring routes; -EB_ENOTFOUND
 * when that index does not have it. */
int eb_index_fetch_project(struct eb_index_set *s, size_t i, const char *project,
			   struct eb_index_page *out, struct eb_error **err);

/* Download f (a file of page) into bs, verified as described at the top.
 * required: NULL, or a NULL-terminated list of "algo:hex" hashes (sha256,
 * sha384, sha512) of which the file must match one, like pip's --hash
 * options for one requirement.  A blob already in the store under the
 * expected sha256 is not downloaded again.  digest_out gets the blob's
 * "sha256:<hex>".  On failure nothing is stored. */
int eb_index_download(struct eb_index_set *s, const struct eb_index_page *page,
		      const struct eb_index_file *f, struct eb_blobstore *bs,
		      const char *const *required, char digest_out[EB_DIGEST_STR_LEN + 1],
		      struct eb_error **err);
/* Fetch f's PEP 658 metadata (<url>.metadata) into out (appending),
 * verified against f's core-metadata hashes (a page that says "true"
 * without a hash gets the file unverified: the wheel's own METADATA is the
 * one that gets installed, and the wheel is verified).  -EB_ENOTFOUND when
 * the page offers no metadata for f or the index has none. */
int eb_index_fetch_metadata(struct eb_index_set *s, const struct eb_index_page *page,
			    const struct eb_index_file *f, struct eb_buf *out,
			    struct eb_error **err);

#endif
