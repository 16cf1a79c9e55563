/*
 * index.h - Python package indexes: the simple repository API (PEP 503
 * HTML and PEP 691 JSON project pages, with PEP 592 yanking, PEP 658/714
 * core metadata and PEP 700 sizes), the same layout on disk behind a
 * file:// URL, and plain directories of wheels for air-gapped sites; an
 * ordered set of indexes where the first index that has a project wins and
 * a project can be routed to one index; verified downloads into the blob
 * store.
 *
 * Layering (service floor, python/): may use oci/ (the blob store), net/
 * (HTTP, netrc), pin/ and util/; never registry/, lock/ or above.  Parsing
 * pages is page.h's, pure; this file fetches.
 *
 * Index locations (eb_pyindex_set_add):
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
 * routed to an index (eb_pyindex_set_route) is looked up there and nowhere
 * else; any other project is looked up in order and the first index that
 * has it wins.  Only a definite "not here" (HTTP 404 or 410, no project
 * directory, no matching wheel) moves on to the next index: any other
 * failure stops the lookup, so an outage of a private index never lets a
 * public one serve the same name.
 *
 * Credentials: user:password in an http(s) index URL, else the netrc entry
 * for the host (net/netrc.h: $NETRC, else ~/.netrc; "machine" entries,
 * then "default"),
 * sent as Basic auth to the index's own origin only (a file URL on another
 * host gets that host's netrc entry, if any; the HTTP layer drops the
 * header on redirects that leave the origin).  Credentials never appear in
 * error messages, warnings, page URLs or labels: URLs in messages go
 * through eb_pyindex_redact_url().
 *
 * Local files: file:// URLs are read only from pages that came from a
 * file:// tree or a wheel directory, never from an http index's page.
 * Credentials in a file URL on a page are dropped (structs never hold
 * secrets); files on the index's origin get the index's credentials.
 *
 * Verification: eb_pyindex_download() stores nothing it could not check - the
 * file must match every hash the index gives that envbuild can compute, at
 * least one of them (or of the required hashes) must be sha256 or stronger,
 * and when required hashes are given the file must match one of them.
 * A transfer that breaks off midway is started again (3 tries in all).
 * eb_pyindex_fetch_metadata() checks the PEP 658 file against the page's
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
 * eb_pyindex_page_release(), which leaves it empty.  Parse and fetch
 * functions fill *out completely on success and leave it empty on failure.
 * The set is freed with eb_pyindex_set_free(); an HTTP client passed in its
 * options is borrowed and must outlive it.  Strings returned are the
 * caller's (free()).
 */
#ifndef EB_PYTHON_INDEX_H
#define EB_PYTHON_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "python/page.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/error.h"

struct eb_blobstore;
struct eb_http_client;

/* ---- an ordered set of indexes ----------------------------------------- */

struct eb_pyindex_set;

/* Zero means "default" for every field. */
struct eb_pyindex_options {
	/* Borrowed; NULL: the set makes its own with default options. */
	struct eb_http_client *http;
	/* netrc file; NULL: $NETRC, else $HOME/.netrc. */
	const char *netrc;
	/* Never read a netrc file (URL credentials still apply). */
	int no_netrc;
	/* Caps; 0: EB_PYINDEX_PAGE_MAX / EB_PYINDEX_METADATA_MAX. */
	size_t max_page;
	size_t max_metadata;
};

/* opts may be NULL (all defaults). */
int eb_pyindex_set_new(struct eb_pyindex_set **out, const struct eb_pyindex_options *opts,
		     struct eb_error **err);
void eb_pyindex_set_free(struct eb_pyindex_set *s);

/* Append an index (lookup order is the order of adding).  name is a label
 * for routes and messages; NULL: the location.  Labels are kept redacted
 * (eb_pyindex_redact_url), so a URL with credentials may serve as a name and
 * be given to eb_pyindex_set_route() as written.  A file:// root or a wheel
 * directory must exist.  Labels are unique: adding the same index under
 * the same label again does nothing, another index under a taken label is
 * -EB_EINVALID. */
int eb_pyindex_set_add(struct eb_pyindex_set *s, const char *name, const char *location,
		     struct eb_error **err);
size_t eb_pyindex_set_count(const struct eb_pyindex_set *s);
/* The label of the i-th index (never a credential), or NULL past the end. */
const char *eb_pyindex_set_label(const struct eb_pyindex_set *s, size_t i);

/* Serve project (any spelling; it is normalized) from the index labelled
 * index_name (compared after redaction) only.  Routing one project to two different indexes is
 * -EB_EINVALID. */
int eb_pyindex_set_route(struct eb_pyindex_set *s, const char *project, const char *index_name,
		       struct eb_error **err);

/* The project page from the index that serves the project: the routed
 * index, else the first that has it.  -EB_ENOTFOUND when none has it. */
int eb_pyindex_set_project(struct eb_pyindex_set *s, const char *project, struct eb_pyindex_page *out,
			 struct eb_error **err);
/* The project page from the i-th index, ignoring routes; -EB_ENOTFOUND
 * when that index does not have it. */
int eb_pyindex_fetch_project(struct eb_pyindex_set *s, size_t i, const char *project,
			   struct eb_pyindex_page *out, struct eb_error **err);

/* Download f (a file of page) into bs, verified as described at the top.
 * required: NULL, or a NULL-terminated list of "algo:hex" hashes (sha256,
 * sha384, sha512) of which the file must match one, like pip's --hash
 * options for one requirement.  A blob already in the store under the
 * expected sha256 is not downloaded again.  digest_out gets the blob's
 * "sha256:<hex>".  On failure nothing is stored. */
int eb_pyindex_download(struct eb_pyindex_set *s, const struct eb_pyindex_page *page,
		      const struct eb_pyindex_file *f, struct eb_blobstore *bs,
		      const char *const *required, char digest_out[EB_DIGEST_STR_LEN + 1],
		      struct eb_error **err);
/* Fetch f's PEP 658 metadata (<url>.metadata) into out (appending),
 * verified against f's core-metadata hashes (a page that says "true"
 * without a hash gets the file unverified: the wheel's own METADATA is the
 * one that gets installed, and the wheel is verified).  -EB_ENOTFOUND when
 * the page offers no metadata for f or the index has none. */
int eb_pyindex_fetch_metadata(struct eb_pyindex_set *s, const struct eb_pyindex_page *page,
			    const struct eb_pyindex_file *f, struct eb_buf *out,
			    struct eb_error **err);

#endif
