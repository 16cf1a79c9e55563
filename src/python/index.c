/*
 * index.c - Python package indexes: fetching project pages (parsed by
 * page.c) from http(s) indexes, file:// trees and wheel directories,
 * first-index-wins lookup with per-project routes, Basic credentials from
 * index URLs and netrc, and downloads that reach the blob store only once
 * every hash checked out.
 */
#include "config.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/blobstore.h"
#include "pin/requirement.h"
#include "python/index.h"
#include "python/page_internal.h"
#include "net/netrc.h"
#include "net/http.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/encode.h"
#include "util/fs.h"

/* A download that broke off after some bytes is started again this many
 * times in all (the HTTP layer reports such breaks instead of retrying,
 * because it cannot take back bytes it handed out). */
#define DOWNLOAD_ATTEMPTS 3
#define READ_CHUNK 65536

/* ---- the set ------------------------------------------------------------ */

struct index_entry {
	char *label;   /* given, or the redacted location */
	char *display; /* the location, redacted: for messages */
	enum eb_pyindex_kind kind;
	char *base;    /* http(s): clean URL without trailing '/' */
	char *origin;  /* http(s): eb_pyindex__url_origin(base) */
	char *root;    /* file tree, wheel dir: absolute path without trailing '/' */
	char *user;    /* from the URL, or NULL */
	char *password;
};

struct route {
	char *project; /* normalized */
	size_t index;
};

struct eb_pyindex_set {
	struct eb_http_client *http;
	int own_http;
	char *netrc; /* NULL: never read one */
	int netrc_default; /* its "default" entry too (ENVBUILD_NETRC_DEFAULT=1) */
	size_t max_page, max_metadata;
	struct index_entry *items;
	size_t n, cap;
	struct route *routes;
	size_t nroutes, routes_cap;
};

int eb_pyindex_set_new(struct eb_pyindex_set **out, const struct eb_pyindex_options *opts,
		     struct eb_error **err)
{
	struct eb_pyindex_options def = { 0 };
	struct eb_pyindex_set *s;

	*out = NULL;
	if (!opts)
		opts = &def;
	s = eb_xcalloc(1, sizeof(*s));
	s->max_page = opts->max_page ? opts->max_page : EB_PYINDEX_PAGE_MAX;
	s->max_metadata = opts->max_metadata ? opts->max_metadata : EB_PYINDEX_METADATA_MAX;
	s->netrc_default = getenv("ENVBUILD_NETRC_DEFAULT") &&
			   strcmp(getenv("ENVBUILD_NETRC_DEFAULT"), "1") == 0;
	if (!opts->no_netrc) {
		const char *env = getenv("NETRC");
		const char *home = getenv("HOME");
		if (opts->netrc)
			s->netrc = eb_xstrdup(opts->netrc);
		else if (env && *env)
			s->netrc = eb_xstrdup(env);
		else if (home && *home)
			s->netrc = eb_path_join(home, ".netrc");
	}
	if (opts->http) {
		s->http = opts->http;
	} else {
		int rc = eb_http_client_new(&s->http, NULL, err);
		if (rc < 0) {
			free(s->netrc);
			free(s);
			return rc;
		}
		s->own_http = 1;
	}
	*out = s;
	return 0;
}

static void entry_release(struct index_entry *e)
{
	free(e->label);
	free(e->display);
	free(e->base);
	free(e->origin);
	free(e->root);
	eb_pyindex__wipe_free(e->user);
	eb_pyindex__wipe_free(e->password);
	memset(e, 0, sizeof(*e));
}

void eb_pyindex_set_free(struct eb_pyindex_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		entry_release(&s->items[i]);
	free(s->items);
	for (size_t i = 0; i < s->nroutes; i++)
		free(s->routes[i].project);
	free(s->routes);
	if (s->own_http)
		eb_http_client_free(s->http);
	free(s->netrc);
	free(s);
}

size_t eb_pyindex_set_count(const struct eb_pyindex_set *s)
{
	return s ? s->n : 0;
}

const char *eb_pyindex_set_label(const struct eb_pyindex_set *s, size_t i)
{
	return s && i < s->n ? s->items[i].label : NULL;
}

/* An existing directory as an absolute, lexically normal path without a
 * trailing '/' (symlinks are kept: a mirror may link its packages in). */
static int local_root(struct index_entry *e, const char *path, struct eb_error **err)
{
	eb_autofree char *abs = NULL;
	struct stat st;

	if (path[0] == '/') {
		abs = eb_xstrdup(path);
	} else {
		eb_autofree char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return eb_error_set_errno(err, EB_EIO, errno,
						  "cannot find the current directory");
		abs = eb_path_join(cwd, path);
	}
	e->root = eb_path_normalize(abs);
	if (!e->root)
		return eb_error_set(err, EB_EINVALID, "index path '%s' is not a usable path", path);
	if (strlen(e->root) > 1 && e->root[strlen(e->root) - 1] == '/')
		e->root[strlen(e->root) - 1] = '\0';
	if (stat(e->root, &st) < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot use index directory '%s'", e->root);
	if (!S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EINVALID, "index '%s' is not a directory", e->root);
	return 0;
}

static int entry_http(struct index_entry *e, const char *location, struct eb_error **err)
{
	CURLU *u = curl_url();
	char *user = NULL, *pass = NULL, *query = NULL, *frag = NULL;
	int rc = 0;

	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, location, 0) != CURLUE_OK) {
		rc = eb_error_set(err, EB_EINVALID, "index url '%s' does not parse", e->display);
		goto done;
	}
	if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
		rc = eb_error_set(err, EB_EINVALID,
				  "index url '%s' has a query or fragment; give the simple api root",
				  e->display);
		goto done;
	}
	if (curl_url_get(u, CURLUPART_USER, &user, CURLU_URLDECODE) == CURLUE_OK) {
		e->user = eb_xstrdup(user);
		if (curl_url_get(u, CURLUPART_PASSWORD, &pass, CURLU_URLDECODE) == CURLUE_OK)
			e->password = eb_xstrdup(pass);
		else
			e->password = eb_xstrdup("");
	}
	e->base = eb_pyindex__url_clean(u);
	if (!e->base) {
		rc = eb_error_set(err, EB_EINVALID, "index url '%s' does not parse", e->display);
		goto done;
	}
	/* "<base>/<name>/" is built by hand: no trailing '/' here. */
	while (strlen(e->base) > 1 && e->base[strlen(e->base) - 1] == '/')
		e->base[strlen(e->base) - 1] = '\0';
	e->origin = eb_pyindex__url_origin(e->base);
	e->kind = EB_PYINDEX_HTTP;

done:
	if (user)
		OPENSSL_cleanse(user, strlen(user));
	if (pass)
		OPENSSL_cleanse(pass, strlen(pass));
	curl_free(user);
	curl_free(pass);
	curl_free(query);
	curl_free(frag);
	curl_url_cleanup(u);
	return rc;
}

/* Labels are stored redacted, so a caller may name an index by the URL
 * it was added with, credentials and all. */
static int find_label(const struct eb_pyindex_set *s, const char *label)
{
	eb_autofree char *want = eb_pyindex_redact_url(label);

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->items[i].label, want) == 0)
			return (int)i;
	return -1;
}

static int str_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int entry_same(const struct index_entry *a, const struct index_entry *b)
{
	return a->kind == b->kind && str_same(a->base, b->base) && str_same(a->root, b->root) &&
	       str_same(a->user, b->user) && str_same(a->password, b->password);
}

int eb_pyindex_set_add(struct eb_pyindex_set *s, const char *name, const char *location,
		     struct eb_error **err)
{
	struct index_entry e = { 0 };
	const char *sep;
	int rc, dup;

	if (!s || !location || !*location)
		return eb_error_set(err, EB_EINVALID, "empty index location");
	if (name && !*name)
		return eb_error_set(err, EB_EINVALID, "empty index name");
	e.display = eb_pyindex_redact_url(location);
	sep = strstr(location, "://");
	if (sep) {
		eb_autofree char *scheme = eb_xstrndup(location, (size_t)(sep - location));
		for (char *c = scheme; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) {
			rc = entry_http(&e, location, err);
		} else if (strcmp(scheme, "file") == 0) {
			eb_autofree char *path = eb_pyindex__file_url_path(location);
			e.kind = EB_PYINDEX_FILE_TREE;
			rc = path ? local_root(&e, path, err)
				  : eb_error_set(err, EB_EINVALID,
						 "index url '%s' is not a local file url", e.display);
		} else {
			/* What precedes "://" is only shown when it looks like a
			 * scheme: a mangled URL could put a secret there. */
			int plain = *scheme && strlen(scheme) <= 16;
			for (const char *c = scheme; *c; c++)
				plain &= isalnum((unsigned char)*c) || *c == '+' || *c == '-' ||
					 *c == '.';
			rc = eb_error_set(err, EB_EINVALID,
					  "index '%s' has scheme '%s'; envbuild reads http, https "
					  "and file",
					  e.display, plain ? scheme : "?");
		}
	} else if (strchr(location, '@') &&
		   strcspn(location, "@") < strcspn(location, "/")) {
		/* A path is never echoed here: it may be a URL with
		 * credentials that lost its scheme. */
		rc = eb_error_set(err, EB_EINVALID,
				  "index '%s' looks like a url without a scheme; write "
				  "https://... (or ./... for a directory)",
				  e.display);
	} else {
		e.kind = EB_PYINDEX_WHEEL_DIR;
		rc = local_root(&e, location, err);
	}
	if (rc < 0)
		goto fail;
	/* A label is shown in messages: never with credentials in it. */
	e.label = eb_pyindex_redact_url(name ? name : location);
	dup = find_label(s, e.label);
	if (dup >= 0 && entry_same(&s->items[dup], &e)) {
		entry_release(&e); /* the same index again: nothing to do */
		return 0;
	}
	if (dup >= 0) {
		rc = eb_error_set(err, EB_EINVALID, "index '%s' is configured twice", e.label);
		goto fail;
	}
	EB_ALLOC_GROW(s->items, s->n + 1, s->cap);
	s->items[s->n++] = e;
	return 0;

fail:
	entry_release(&e);
	return rc;
}

/* The normalized name of a project as the caller spelled it, or NULL with
 * *err set. */
static char *project_norm(const char *project, struct eb_error **err)
{
	if (!project || !eb_pep503_valid(project, strlen(project))) {
		eb_error_set(err, EB_EINVALID, "'%s' is not a valid project name",
			     project ? project : "");
		return NULL;
	}
	return eb_pep503_normalize(project, strlen(project));
}

int eb_pyindex_set_route(struct eb_pyindex_set *s, const char *project, const char *index_name,
		       struct eb_error **err)
{
	eb_autofree char *norm = project_norm(project, err);
	int i;

	if (!norm)
		return -EB_EINVALID;
	i = index_name ? find_label(s, index_name) : -1;
	if (i < 0)
		return eb_error_set(err, EB_EINVALID, "project '%s' is routed to index '%s', which "
				    "is not configured", norm, index_name ? index_name : "");
	for (size_t k = 0; k < s->nroutes; k++) {
		if (strcmp(s->routes[k].project, norm))
			continue;
		if (s->routes[k].index == (size_t)i)
			return 0;
		return eb_error_set(err, EB_EINVALID, "project '%s' is routed to both index '%s' "
				    "and index '%s'", norm, s->items[s->routes[k].index].label,
				    index_name);
	}
	EB_ALLOC_GROW(s->routes, s->nroutes + 1, s->routes_cap);
	s->routes[s->nroutes].project = eb_steal_ptr(&norm);
	s->routes[s->nroutes].index = (size_t)i;
	s->nroutes++;
	return 0;
}

/* ---- credentials --------------------------------------------------------- */

static char *basic_header(const char *user, const char *pass)
{
	char *raw = eb_xasprintf("%s:%s", user, pass);
	char *b64 = eb_base64_encode(raw, strlen(raw));
	char *h = eb_xasprintf("Authorization: Basic %s", b64);

	eb_pyindex__wipe_free(raw);
	eb_pyindex__wipe_free(b64);
	return h;
}

/* The Authorization header line for a request to url, or NULL: the
 * index's URL credentials on its own origin, else -- only once the server
 * asked (challenged: it answered 401) -- the netrc entry for the URL's host
 * (its "default" entry only when the runner opted in).  Never over plain
 * HTTP to a host that is not loopback, where anyone on the path reads it.
 * A broken netrc means no credentials, as for requests and pip: a 401 then
 * says what is missing. */
static char *auth_for(const struct eb_pyindex_set *s, const struct index_entry *ix, const char *url,
		      int challenged)
{
	char *login = NULL, *pass = NULL, *h = NULL, *host = NULL, *scheme = NULL;
	struct eb_error *e = NULL;
	CURLU *u;

	if (eb_pyindex__url_is_file(url))
		return NULL;
	u = curl_url();
	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK)
		goto done;
	if (strcasecmp(scheme, "https") != 0 && !eb_http_host_is_loopback(host))
		goto done;
	if (ix && ix->kind == EB_PYINDEX_HTTP && ix->user) {
		eb_autofree char *origin = eb_pyindex__url_origin(url);
		if (origin && ix->origin && strcmp(origin, ix->origin) == 0) {
			h = basic_header(ix->user, ix->password);
			goto done;
		}
	}
	if (s->netrc && challenged &&
	    eb_netrc_lookup_in(s->netrc, host, s->netrc_default, &login, &pass, &e) == 0) {
		h = basic_header(login, pass);
		eb_pyindex__wipe_free(login);
		eb_pyindex__wipe_free(pass);
	}
done:
	eb_error_free(e);
	curl_free(host);
	curl_free(scheme);
	curl_url_cleanup(u);
	return h;
}

/* Send req with headers[slot] as the Authorization slot: first with what
 * may go unasked (URL credentials), then, when the server answers 401,
 * once more with the netrc entry for its host. */
static int request_auth(struct eb_pyindex_set *s, const struct index_entry *ix,
			struct eb_http_request *req, const char **headers, size_t slot,
			struct eb_http_response *resp, struct eb_error **err)
{
	char *authz = auth_for(s, ix, req->url, 0);
	int had = authz != NULL, rc;

	headers[slot] = authz;
	req->headers = headers;
	rc = eb_http_request(s->http, req, resp, err);
	eb_pyindex__wipe_free(authz);
	headers[slot] = NULL;
	if (rc < 0 || resp->status != 401 || had)
		return rc;
	authz = auth_for(s, ix, req->url, 1);
	if (!authz)
		return rc;
	eb_http_response_release(resp);
	headers[slot] = authz;
	rc = eb_http_request(s->http, req, resp, err);
	eb_pyindex__wipe_free(authz);
	headers[slot] = NULL;
	return rc;
}

/* ---- fetching project pages ---------------------------------------------- */

static int status_error(struct eb_error **err, long status, const char *what, const char *url)
{
	eb_autofree char *shown = eb_pyindex_redact_url(url);

	if (status == 401 || status == 403) {
		int rc = eb_error_set(err, EB_EFAIL, "%s: '%s' answered %ld (access denied)", what,
				      shown, status);
		eb_error_hint(err, "give credentials in the index url (https://user:token@host/...) "
			      "or in a netrc file");
		return rc;
	}
	if (status == 404 || status == 410)
		return eb_error_set(err, EB_ENOTFOUND, "%s: '%s' answered %ld (not found)", what,
				    shown, status);
	if (status == 406)
		return eb_error_set(err, EB_ENET, "%s: '%s' answered 406: it offers no format "
				    "envbuild reads", what, shown);
	return eb_error_set(err, EB_ENET, "%s: '%s' answered %ld", what, shown, status);
}

/* 0 with *out filled, 1 when the index does not have the project, or a
 * negative code. */
static int fetch_http(struct eb_pyindex_set *s, const struct index_entry *ix, const char *norm,
		      struct eb_pyindex_page *out, struct eb_error **err)
{
	eb_autofree char *url = eb_xasprintf("%s/%s/", ix->base, norm);
	const char *headers[3] = { "Accept: " EB_PYINDEX_ACCEPT, NULL, NULL };
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	eb_autofree char *what = eb_xasprintf("fetching project '%s' from index '%s'", norm,
					      ix->label);
	int rc;

	req.method = "GET";
	req.url = url;
	req.max_body = s->max_page;
	rc = request_auth(s, ix, &req, headers, 1, &resp, err);
	if (rc < 0) {
		eb_error_wrap(err, "%s", what);
	} else if (resp.status == 404 || resp.status == 410) {
		rc = 1;
	} else if (resp.status < 200 || resp.status > 299) {
		rc = status_error(err, resp.status, what, url);
	} else {
		rc = eb_pyindex__parse_typed(out, eb_http_response_header(&resp, "Content-Type"), resp.body.ptr,
				 resp.body.len, resp.url ? resp.url : url, s->max_page, err);
		if (rc < 0)
			eb_error_wrap(err, "%s", what);
	}
	eb_http_response_release(&resp);
	return rc;
}

static int fetch_tree(struct eb_pyindex_set *s, const struct index_entry *ix, const char *norm,
		      struct eb_pyindex_page *out, struct eb_error **err)
{
	static const struct {
		const char *file;
		const char *type;
	} forms[] = { { "index.json", "application/vnd.pypi.simple.v1+json" },
		      { "index.html", "text/html" } };
	eb_autofree char *dir = eb_xasprintf("%s/%s", ix->root, norm);
	struct stat st;

	if (stat(dir, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read index directory '%s'",
					  dir);
	}
	if (!S_ISDIR(st.st_mode))
		return 1;
	for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
		eb_autofree char *path = eb_xasprintf("%s/%s", dir, forms[i].file);
		eb_autofree char *page_url = NULL;
		struct eb_error *e = NULL;
		struct eb_buf b;
		int rc;

		eb_buf_init(&b, 0);
		rc = eb_fs_read_file(&b, path, s->max_page, &e);
		if (rc == -EB_ENOTFOUND) {
			eb_error_free(e);
			eb_buf_release(&b);
			continue;
		}
		if (rc < 0) {
			eb_buf_release(&b);
			eb_pyindex__pass_error(err, e);
			return rc;
		}
		{
			eb_autofree char *slashed = eb_xasprintf("%s/", dir);
			page_url = eb_pyindex__file_url_from_path(slashed);
		}
		rc = eb_pyindex__parse_typed(out, forms[i].type, b.ptr, b.len, page_url, s->max_page, err);
		eb_buf_release(&b);
		return rc;
	}
	return eb_error_set(err, EB_ENET, "index '%s' has a directory for project '%s' but no "
			    "index.json or index.html in it", ix->label, norm);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The normalized project name of a wheel filename, or NULL when the name
 * is not one ({name}-{ver}(-{build})?-{py}-{abi}-{plat}.whl). */
static char *wheel_project(const char *filename)
{
	size_t dashes = 0, n = strcspn(filename, "-");

	if (!eb_pyindex__ends_with_ci(filename, ".whl"))
		return NULL;
	for (const char *c = filename; *c; c++)
		dashes += *c == '-';
	if ((dashes != 4 && dashes != 5) || !eb_pep503_valid(filename, n))
		return NULL;
	return eb_pep503_normalize(filename, n);
}

static int fetch_wheel_dir(const struct index_entry *ix, const char *norm,
			   struct eb_pyindex_page *out, struct eb_error **err)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(ix->root);
	int rc = 0;

	if (!d)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read wheel directory '%s'",
					  ix->root);
	while ((de = readdir(d))) {
		eb_autofree char *proj = NULL;
		if (de->d_name[0] == '.')
			continue;
		proj = wheel_project(de->d_name);
		if (!proj || strcmp(proj, norm))
			continue;
		EB_ALLOC_GROW(names, n + 1, cap);
		names[n++] = eb_xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		eb_sort(names, n, sizeof(*names), cmp_strp);

	memset(out, 0, sizeof(*out));
	out->index = -1;
	out->format = EB_PYINDEX_FMT_DIR;
	out->kind = EB_PYINDEX_WHEEL_DIR;
	out->api_major = 1;
	{
		eb_autofree char *slashed = eb_xasprintf("%s/", ix->root);
		out->url = eb_pyindex__file_url_from_path(slashed);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		eb_autofree char *path = eb_path_join(ix->root, names[i]);
		char digest[EB_DIGEST_STR_LEN + 1];
		struct eb_pyindex_file *f;
		uint64_t size = 0;
		struct stat st;

		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue; /* a dangling link or a directory named *.whl */
		rc = eb_sha256_file(path, digest, &size, err);
		if (rc < 0)
			break;
		f = eb_pyindex__page_new_file(out);
		f->filename = eb_xstrdup(names[i]);
		f->url = eb_pyindex__file_url_from_path(path);
		f->size = (int64_t)size;
		if (eb_pyindex__hashes_add(&f->hashes, "sha256", 6, eb_digest_hex(digest), EB_SHA256_HEX_LEN))
			abort(); /* our own digest */
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc < 0 || out->nfiles == 0) {
		eb_pyindex_page_release(out);
		return rc < 0 ? rc : 1;
	}
	return 0;
}

static int fetch_one(struct eb_pyindex_set *s, size_t i, const char *norm,
		     struct eb_pyindex_page *out, struct eb_error **err)
{
	const struct index_entry *ix = &s->items[i];
	int rc;

	memset(out, 0, sizeof(*out));
	out->index = -1;
	switch (ix->kind) {
	case EB_PYINDEX_HTTP:
		rc = fetch_http(s, ix, norm, out, err);
		break;
	case EB_PYINDEX_FILE_TREE:
		rc = fetch_tree(s, ix, norm, out, err);
		if (rc < 0)
			eb_error_wrap(err, "fetching project '%s' from index '%s'", norm, ix->label);
		break;
	default:
		rc = fetch_wheel_dir(ix, norm, out, err);
		break;
	}
	if (rc == 0) {
		out->index = (int)i;
		out->kind = ix->kind;
	}
	return rc;
}

int eb_pyindex_fetch_project(struct eb_pyindex_set *s, size_t i, const char *project,
			   struct eb_pyindex_page *out, struct eb_error **err)
{
	eb_autofree char *norm = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	out->index = -1;
	if (!s || i >= s->n)
		return eb_error_set(err, EB_EINVALID, "no index number %zu", i);
	norm = project_norm(project, err);
	if (!norm)
		return -EB_EINVALID;
	rc = fetch_one(s, i, norm, out, err);
	if (rc == 1)
		return eb_error_set(err, EB_ENOTFOUND, "index '%s' does not have project '%s'",
				    s->items[i].label, norm);
	return rc;
}

int eb_pyindex_set_project(struct eb_pyindex_set *s, const char *project, struct eb_pyindex_page *out,
			 struct eb_error **err)
{
	eb_autofree char *norm = NULL;
	struct eb_buf looked;
	int rc;

	memset(out, 0, sizeof(*out));
	out->index = -1;
	if (!s)
		return eb_error_set(err, EB_EINVALID, "no index set");
	norm = project_norm(project, err);
	if (!norm)
		return -EB_EINVALID;
	for (size_t k = 0; k < s->nroutes; k++) {
		size_t i = s->routes[k].index;
		if (strcmp(s->routes[k].project, norm))
			continue;
		/* A routed project never falls through to another index:
		 * that is the point of routing it. */
		rc = fetch_one(s, i, norm, out, err);
		if (rc == 1)
			return eb_error_set(err, EB_ENOTFOUND, "project '%s' is routed to index "
					    "'%s', which does not have it", norm, s->items[i].label);
		return rc;
	}
	if (s->n == 0)
		return eb_error_set(err, EB_ENOTFOUND, "no index is configured to look for "
				    "project '%s' in", norm);
	for (size_t i = 0; i < s->n; i++) {
		rc = fetch_one(s, i, norm, out, err);
		if (rc <= 0)
			return rc; /* found, or a failure that must not fall through */
	}
	eb_buf_init(&looked, 0);
	for (size_t i = 0; i < s->n; i++)
		if (eb_buf_addf(&looked, "%s'%s'", i ? ", " : "", s->items[i].label) < 0)
			abort();
	rc = eb_error_set(err, EB_ENOTFOUND, "no index has project '%s'", norm);
	eb_error_hint(err, "looked in %s", looked.ptr);
	eb_buf_release(&looked);
	return rc;
}

/* ---- downloads ------------------------------------------------------------ */

/* One hash the downloaded bytes must (or may) have. */
struct check {
	const struct eb_hash_algo *a;
	char *hex; /* lower-case (owned) */
};

/* A digest computed while the bytes stream by. */
struct hasher {
	const struct eb_hash_algo *a;
	EVP_MD_CTX *ctx;
	char hex[129];
};

struct sink {
	struct eb_blob_writer *w;
	struct hasher *hs;
	size_t nh;
	uint64_t got;
	int64_t limit; /* the index's size, or -1 */
	const char *filename;
	const char *shown; /* redacted URL */
};

static int sink_feed(void *ud, const void *data, size_t len, struct eb_error **err)
{
	struct sink *k = ud;
	int rc;

	k->got += len;
	if (k->limit >= 0 && k->got > (uint64_t)k->limit)
		return eb_error_set(err, EB_EINVALID,
				    "'%s' from '%s' is larger than the %lld bytes the index gives",
				    k->filename, k->shown, (long long)k->limit);
	rc = eb_blob_writer_write(k->w, data, len, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < k->nh; i++)
		if (EVP_DigestUpdate(k->hs[i].ctx, data, len) != 1)
			return eb_error_set(err, EB_EFAIL, "hashing '%s' failed", k->filename);
	return 0;
}

static void hashers_release(struct hasher *hs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		EVP_MD_CTX_free(hs[i].ctx);
		hs[i].ctx = NULL;
	}
}

static int hashers_init(struct hasher *hs, size_t n, struct eb_error **err)
{
	for (size_t i = 0; i < n; i++) {
		const EVP_MD *md = eb_hash_algo_md(hs[i].a);
		hs[i].ctx = EVP_MD_CTX_new();
		hs[i].hex[0] = '\0';
		if (!hs[i].ctx || !md || EVP_DigestInit_ex(hs[i].ctx, md, NULL) != 1) {
			hashers_release(hs, n);
			return eb_error_set(err, EB_EFAIL, "cannot compute %s", hs[i].a->name);
		}
	}
	return 0;
}

static int hashers_final(struct hasher *hs, size_t n, struct eb_error **err)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char raw[EVP_MAX_MD_SIZE];
		unsigned int len = 0;
		if (EVP_DigestFinal_ex(hs[i].ctx, raw, &len) != 1 || len * 2 != hs[i].a->hexlen) {
			hashers_release(hs, n);
			return eb_error_set(err, EB_EFAIL, "cannot compute %s", hs[i].a->name);
		}
		eb_hex_encode(hs[i].hex, raw, len);
	}
	hashers_release(hs, n);
	return 0;
}

static const char *hasher_hex(const struct hasher *hs, size_t n, const struct eb_hash_algo *a)
{
	for (size_t i = 0; i < n; i++)
		if (hs[i].a == a)
			return hs[i].hex;
	return NULL;
}

static void hasher_want(struct hasher *hs, size_t *n, const struct eb_hash_algo *a)
{
	if (!hasher_hex(hs, *n, a)) {
		memset(&hs[*n], 0, sizeof(*hs));
		hs[(*n)++].a = a;
	}
}

static void checks_free(struct check *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].hex);
	free(c);
}

/* May this page's file:// URL be read?  Only pages that came from disk
 * may point at disk: an http page naming file:///etc/... must not copy
 * local files into an image.  A local tree is as trusted as the
 * configuration naming it, and its pages may point anywhere on disk (a
 * mirror keeps packages/ next to simple/). */
static char *local_file(const struct eb_pyindex_page *page, const char *url, const char *shown,
			struct eb_error **err)
{
	char *path;

	if (page->kind == EB_PYINDEX_HTTP) {
		eb_error_set(err, EB_EINVALID,
			     "refusing '%s': a file url on a page from an http index", shown);
		return NULL;
	}
	path = eb_pyindex__file_url_path(url);
	if (!path)
		eb_error_set(err, EB_EINVALID, "'%s' is not a local file url", shown);
	return path;
}

static const struct index_entry *page_entry(const struct eb_pyindex_set *s,
					    const struct eb_pyindex_page *page)
{
	return page->index >= 0 && (size_t)page->index < s->n ? &s->items[page->index] : NULL;
}

/* Stream a local file into the sink. */
static int feed_local(struct sink *k, const char *path, struct eb_error **err)
{
	eb_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	eb_autofree char *chunk = NULL;

	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot open '%s'", path);
	chunk = eb_xmalloc(READ_CHUNK);
	for (;;) {
		ssize_t got = read(fd, chunk, READ_CHUNK);
		int rc;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
		if (got == 0)
			return 0;
		rc = sink_feed(k, chunk, (size_t)got, err);
		if (rc < 0)
			return rc;
	}
}

/* One try at getting the bytes into k.  *retry is set when a transfer
 * broke off after bytes arrived, which is worth starting again. */
static int feed_once(struct eb_pyindex_set *s, const struct eb_pyindex_page *page,
		     const struct eb_pyindex_file *f, struct sink *k, int *retry,
		     struct eb_error **err)
{
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	const char *headers[2] = { NULL, NULL };
	eb_autofree char *what = NULL;
	int rc;

	*retry = 0;
	if (eb_pyindex__url_is_file(f->url)) {
		eb_autofree char *path = local_file(page, f->url, k->shown, err);
		return path ? feed_local(k, path, err) : -EB_EINVALID;
	}
	req.method = "GET";
	req.url = f->url;
	req.on_data = sink_feed;
	req.data_userdata = k;
	rc = request_auth(s, page_entry(s, page), &req, headers, 0, &resp, err);
	what = eb_xasprintf("downloading '%s'", f->filename);
	if (rc < 0) {
		*retry = rc == -EB_ENET && resp.streamed > 0;
		eb_error_wrap(err, "%s", what);
	} else if (resp.status < 200 || resp.status > 299) {
		rc = status_error(err, resp.status, what, f->url);
	}
	eb_http_response_release(&resp);
	return rc;
}

int eb_pyindex_download(struct eb_pyindex_set *s, const struct eb_pyindex_page *page,
		      const struct eb_pyindex_file *f, struct eb_blobstore *bs,
		      const char *const *required, char digest_out[EB_DIGEST_STR_LEN + 1],
		      struct eb_error **err)
{
	const struct eb_hash_algo *sha256 = eb_hash_algo_find("sha256");
	struct check *idx = NULL, *req = NULL;
	size_t nidx = 0, nreq = 0, nh = 0;
	struct hasher *hs = NULL;
	const char *idx256 = NULL, *want256 = NULL;
	eb_autofree char *shown = NULL;
	char expected[EB_DIGEST_STR_LEN + 1];
	struct sink k;
	int strong = 0, rc = 0, matched;

	if (digest_out)
		digest_out[0] = '\0';
	if (!s || !page || !f || !bs || !digest_out || !f->url || !f->filename)
		return eb_error_set(err, EB_EINVALID, "download without a file or a blob store");
	shown = eb_pyindex_redact_url(f->url);

	for (const char *const *r = required; r && *r; r++)
		nreq++;
	req = eb_xcalloc(nreq + 1, sizeof(*req));
	for (size_t i = 0; i < nreq; i++) {
		const char *colon = strchr(required[i], ':');
		eb_autofree char *a = colon ? eb_xstrndup(required[i], (size_t)(colon - required[i]))
					    : eb_xstrdup(required[i]);
		struct eb_pyindex_hashes one = { 0 };
		const char *why = "expected <algo>:<hex>";

		for (char *c = a; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		req[i].a = eb_hash_algo_find(a);
		if (colon && req[i].a && (strcmp(a, "sha256") == 0 || strcmp(a, "sha384") == 0 ||
					  strcmp(a, "sha512") == 0))
			why = eb_pyindex__hashes_add(&one, a, strlen(a), colon + 1, strlen(colon + 1));
		else if (colon)
			why = "only sha256, sha384 and sha512 are accepted";
		if (why) {
			eb_pyindex__hashes_release(&one);
			rc = eb_error_set(err, EB_EINVALID, "required hash '%s:...' for '%s' is not "
					  "usable: %s", a, f->filename, why);
			goto done;
		}
		req[i].hex = eb_steal_ptr(&one.items[0].hex);
		eb_pyindex__hashes_release(&one);
	}
	strong = nreq > 0;

	idx = eb_xcalloc(f->hashes.n + 1, sizeof(*idx));
	for (size_t i = 0; i < f->hashes.n; i++) {
		const struct eb_hash_algo *a = eb_hash_algo_find(f->hashes.items[i].algo);
		if (!a || !eb_hash_algo_md(a))
			continue; /* a hash we cannot compute proves nothing */
		idx[nidx].a = a;
		idx[nidx].hex = eb_xstrdup(f->hashes.items[i].hex);
		strong |= a->strong;
		if (a == sha256)
			idx256 = idx[nidx].hex;
		nidx++;
	}
	if (!strong) {
		rc = eb_error_set(err, EB_EINVALID, "the index gives no sha256 or stronger hash for "
				  "'%s'; refusing to store it unverified", f->filename);
		eb_error_hint(err, "pin the file with --hash=sha256:<hex>");
		goto done;
	}

	/* Already cached under the sha256 it must have? */
	if (idx256) {
		int ok = nreq == 0;
		for (size_t i = 0; i < nreq; i++)
			ok |= req[i].a == sha256 && strcmp(req[i].hex, idx256) == 0;
		snprintf(expected, sizeof(expected), "sha256:%.64s", idx256);
		if (ok && eb_blobstore_has(bs, expected, f->size)) {
			memcpy(digest_out, expected, sizeof(expected));
			goto done;
		}
	}

	/* sha256 is the blob writer's own; everything else is hashed on the
	 * side, sha256 too when a required one has to be compared before the
	 * blob is committed. */
	hs = eb_xcalloc(nidx + nreq + 1, sizeof(*hs));
	for (size_t i = 0; i < nidx; i++)
		if (idx[i].a != sha256)
			hasher_want(hs, &nh, idx[i].a);
	for (size_t i = 0; i < nreq; i++)
		if (req[i].a != sha256 || !idx256)
			hasher_want(hs, &nh, req[i].a);

	for (int attempt = 1;; attempt++) {
		struct eb_error *e = NULL;
		int retry = 0;

		memset(&k, 0, sizeof(k));
		k.hs = hs;
		k.nh = nh;
		k.limit = f->size;
		k.filename = f->filename;
		k.shown = shown;
		rc = eb_blob_writer_open(&k.w, bs, err);
		if (rc < 0)
			goto done;
		rc = hashers_init(hs, nh, err);
		if (rc < 0) {
			eb_blob_writer_abort(k.w);
			goto done;
		}
		rc = feed_once(s, page, f, &k, &retry, &e);
		if (rc >= 0)
			break;
		eb_blob_writer_abort(k.w);
		hashers_release(hs, nh);
		if (retry && attempt < DOWNLOAD_ATTEMPTS) {
			eb_error_free(e);
			continue;
		}
		eb_pyindex__pass_error(err, e);
		goto done;
	}

	/* From here on k.w is open: every exit aborts or commits it. */
	rc = hashers_final(hs, nh, err);
	if (rc < 0) {
		eb_blob_writer_abort(k.w);
		goto done;
	}
	if (f->size >= 0 && k.got != (uint64_t)f->size) {
		eb_blob_writer_abort(k.w);
		rc = eb_error_set(err, EB_EINVALID, "'%s' from '%s' has %llu bytes; the index says "
				  "%lld", f->filename, shown, (unsigned long long)k.got,
				  (long long)f->size);
		goto done;
	}
	for (size_t i = 0; i < nidx; i++) {
		const char *got = hasher_hex(hs, nh, idx[i].a);
		if (idx[i].a == sha256 || strcmp(got, idx[i].hex) == 0)
			continue;
		eb_blob_writer_abort(k.w);
		rc = eb_error_set(err, EB_EINVALID, "hash mismatch for '%s' from '%s': the index "
				  "gives %s:%s, the file has %s:%s", f->filename, shown,
				  idx[i].a->name, idx[i].hex, idx[i].a->name, got);
		goto done;
	}
	want256 = idx256 ? idx256 : hasher_hex(hs, nh, sha256);
	matched = nreq == 0;
	for (size_t i = 0; i < nreq && !matched; i++) {
		const char *got = req[i].a == sha256 ? want256 : hasher_hex(hs, nh, req[i].a);
		matched = got && strcmp(got, req[i].hex) == 0;
	}
	if (!matched) {
		eb_blob_writer_abort(k.w);
		rc = eb_error_set(err, EB_EINVALID, "hash mismatch for '%s' from '%s': it matches "
				  "none of the required hashes", f->filename, shown);
		if (want256)
			eb_error_hint(err, "%s sha256:%s",
				      idx256 ? "the index gives" : "the file has", want256);
		goto done;
	}
	if (want256)
		snprintf(expected, sizeof(expected), "sha256:%.64s", want256);
	rc = eb_blob_writer_commit(k.w, want256 ? expected : NULL, digest_out, err);
	if (rc == -EB_EINVALID)
		eb_error_wrap(err, "hash mismatch for '%s' from '%s'", f->filename, shown);
	else if (rc < 0)
		eb_error_wrap(err, "storing '%s'", f->filename);
	if (rc < 0)
		digest_out[0] = '\0';

done:
	checks_free(idx, nidx);
	checks_free(req, nreq);
	free(hs);
	return rc;
}

/* ---- PEP 658 metadata ------------------------------------------------------ */

int eb_pyindex_fetch_metadata(struct eb_pyindex_set *s, const struct eb_pyindex_page *page,
			    const struct eb_pyindex_file *f, struct eb_buf *out,
			    struct eb_error **err)
{
	eb_autofree char *url = NULL;
	eb_autofree char *shown = NULL;
	struct eb_buf body;
	eb_autofree char *what = NULL;
	int rc;

	if (!s || !page || !f || !out || !f->url || !f->filename)
		return eb_error_set(err, EB_EINVALID, "metadata fetch without a file");
	if (!f->core_metadata)
		return eb_error_set(err, EB_ENOTFOUND, "the index offers no metadata file for '%s'",
				    f->filename);
	url = eb_pyindex__metadata_url(f->url);
	shown = eb_pyindex_redact_url(url);
	what = eb_xasprintf("fetching the metadata of '%s'", f->filename);
	eb_buf_init(&body, s->max_metadata);

	if (eb_pyindex__url_is_file(url)) {
		eb_autofree char *path = local_file(page, url, shown, err);
		rc = path ? eb_fs_read_file(&body, path, s->max_metadata, err) : -EB_EINVALID;
		if (rc < 0)
			eb_error_wrap(err, "%s", what);
	} else {
		struct eb_http_request req = { 0 };
		struct eb_http_response resp;
		const char *headers[2] = { NULL, NULL };

		req.method = "GET";
		req.url = url;
		req.max_body = s->max_metadata;
		rc = request_auth(s, page_entry(s, page), &req, headers, 0, &resp, err);
		if (rc < 0)
			eb_error_wrap(err, "%s", what);
		else if (resp.status < 200 || resp.status > 299)
			rc = status_error(err, resp.status, what, url);
		else if (eb_buf_add(&body, resp.body.ptr, resp.body.len) < 0)
			rc = eb_error_set(err, EB_ETOOBIG, "%s: larger than %zu bytes", what,
					  s->max_metadata);
		eb_http_response_release(&resp);
	}

	for (size_t i = 0; rc == 0 && i < f->core_metadata_hashes.n; i++) {
		const struct eb_pyindex_hash *h = &f->core_metadata_hashes.items[i];
		const struct eb_hash_algo *a = eb_hash_algo_find(h->algo);
		char got[129];
		if (!a || eb_hash_hex(a, body.ptr, body.len, got) < 0)
			continue;
		if (strcmp(got, h->hex))
			rc = eb_error_set(err, EB_EINVALID, "hash mismatch for the metadata of '%s' "
					  "from '%s': the index gives %s:%s, the file has %s:%s",
					  f->filename, shown, a->name, h->hex, a->name, got);
	}
	if (rc == 0 && eb_buf_add(out, body.ptr, body.len) < 0)
		rc = eb_error_set(err, EB_ETOOBIG, "%s: the output buffer is full", what);
	eb_buf_release(&body);
	return rc;
}
