/*
 * page.c - parsing of simple-API project pages (PEP 691 JSON, PEP 503
 * HTML): pure, no network and no file system.
 */
#include "config.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http.h"
#include "python/page.h"
#include "python/page_internal.h"
#include "util/alloc.h"
#include "util/interrupt.h"
#include "util/buf.h"
#include "util/digest.h"

/* Longest quote of a page in a parse error. */
#define DETAIL_MAX 240

/* ---- small helpers ------------------------------------------------------ */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && is_space(*s)) {
		s++;
		n--;
	}
	while (n && is_space(s[n - 1]))
		n--;
	return eb_xstrndup(s, n);
}

int eb_pyindex__ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

void eb_pyindex__wipe_free(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

/* Hand an error made on the side to the caller (who may have one). */
void eb_pyindex__pass_error(struct eb_error **err, struct eb_error *e)
{
	if (err && !*err)
		*err = e;
	else
		eb_error_free(e);
}

/* ---- pages ------------------------------------------------------------- */

void eb_pyindex__hashes_release(struct eb_pyindex_hashes *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->items[i].algo);
		free(h->items[i].hex);
	}
	free(h->items);
	h->items = NULL;
	h->n = 0;
}

static const char *hashes_get(const struct eb_pyindex_hashes *h, const char *algo)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->items[i].algo, algo) == 0)
			return h->items[i].hex;
	return NULL;
}

/* Add algo=hex after checking both; the first value for an algorithm
 * wins.  Returns NULL, or a static reason the pair is unusable. */
const char *eb_pyindex__hashes_add(struct eb_pyindex_hashes *h, const char *algo, size_t alen,
			      const char *hex, size_t hlen)
{
	eb_autofree char *a = eb_xstrndup(algo, alen);
	const struct eb_hash_algo *known;
	char *x;

	if (alen == 0 || alen > 32)
		return "bad hash name";
	for (char *c = a; *c; c++) {
		*c = (char)tolower((unsigned char)*c);
		if (!isalnum((unsigned char)*c) && *c != '_')
			return "bad hash name";
	}
	if (hlen == 0)
		return "empty hash value";
	for (size_t i = 0; i < hlen; i++)
		if (eb_hex_value(hex[i]) < 0)
			return "hash value is not hex";
	known = eb_hash_algo_find(a);
	if (known && hlen != known->hexlen)
		return "hash value has the wrong length";
	if (hashes_get(h, a))
		return NULL;
	x = eb_xstrndup(hex, hlen);
	for (char *c = x; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	h->items = eb_xreallocarray(h->items, h->n + 1, sizeof(*h->items));
	h->items[h->n].algo = eb_steal_ptr(&a);
	h->items[h->n].hex = x;
	h->n++;
	return NULL;
}

static void file_release(struct eb_pyindex_file *f)
{
	free(f->filename);
	free(f->url);
	eb_pyindex__hashes_release(&f->hashes);
	free(f->requires_python);
	free(f->yanked_reason);
	eb_pyindex__hashes_release(&f->core_metadata_hashes);
	free(f->upload_time);
	memset(f, 0, sizeof(*f));
}

void eb_pyindex_page_release(struct eb_pyindex_page *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfiles; i++)
		file_release(&p->files[i]);
	free(p->files);
	for (size_t i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	free(p->url);
	free(p->name);
	memset(p, 0, sizeof(*p));
	p->index = -1;
}

struct eb_pyindex_file *eb_pyindex__page_new_file(struct eb_pyindex_page *p)
{
	struct eb_pyindex_file *f;

	EB_ALLOC_GROW(p->files, p->nfiles + 1, p->files_cap);
	f = &p->files[p->nfiles++];
	memset(f, 0, sizeof(*f));
	f->size = -1;
	return f;
}

static void page_warn(struct eb_pyindex_page *p, const char *fmt, ...) EB_PRINTF(2, 3);
static void page_warn(struct eb_pyindex_page *p, const char *fmt, ...)
{
	struct eb_buf b;
	va_list ap;

	eb_buf_init(&b, 0);
	va_start(ap, fmt);
	if (eb_buf_vaddf(&b, fmt, ap) < 0)
		abort(); /* uncapped: only fails on out-of-memory */
	va_end(ap);
	p->warnings = eb_xreallocarray(p->warnings, p->nwarnings + 1, sizeof(*p->warnings));
	p->warnings[p->nwarnings++] = eb_buf_detach(&b, NULL);
}

const char *eb_pyindex_file_hash(const struct eb_pyindex_file *f, const char *algo)
{
	return f && algo ? hashes_get(&f->hashes, algo) : NULL;
}

/* ---- URLs -------------------------------------------------------------- */

char *eb_pyindex_redact_url(const char *url)
{
	const char *sep, *auth, *auth_end, *at = NULL, *cut;
	struct eb_buf b;

	if (!url)
		return eb_xstrdup("");
	sep = strstr(url, "://");
	/* "user:token@host/simple" (a URL that lost its scheme) still hides
	 * its userinfo; a path has a '/' before any '@' that is not one. */
	auth = sep ? sep + 3 : url;
	auth_end = auth + strcspn(auth, "/?#");
	for (const char *c = auth; c < auth_end; c++)
		if (*c == '@')
			at = c; /* the last '@' ends the userinfo */
	if (!sep && !at)
		return eb_xstrdup(url); /* a path or a name, '?' and all */
	cut = auth_end + strcspn(auth_end, "?#");
	eb_buf_init(&b, 0);
	if (at) {
		if (eb_buf_add(&b, url, (size_t)(auth - url)) < 0 || eb_buf_adds(&b, "****") < 0 ||
		    eb_buf_add(&b, at, (size_t)(cut - at)) < 0)
			abort();
	} else if (eb_buf_add(&b, url, (size_t)(cut - url)) < 0) {
		abort();
	}
	return eb_buf_detach(&b, NULL);
}

/* Percent-encode what libcurl's URL parser refuses but pages contain
 * (spaces, non-ASCII bytes), the way pip's _clean_link does. */
static char *clean_href(const char *s, size_t n)
{
	static const char unsafe[] = "\"<>\\^`{|}";
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int r = (c <= 0x20 || c >= 0x7f || strchr(unsafe, c))
				? eb_buf_addf(&b, "%%%02X", c)
				: eb_buf_addc(&b, (char)c);
		if (r < 0)
			abort();
	}
	return eb_buf_detach(&b, NULL);
}

/* The absolute form of url without credentials and fragment; NULL when
 * it does not parse or its scheme is not http, https or file. */
char *eb_pyindex__url_clean(CURLU *u)
{
	char *s = NULL, *scheme = NULL, *out = NULL;

	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	curl_url_set(u, CURLUPART_OPTIONS, NULL, 0);
	curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0 ||
	     strcmp(scheme, "file") == 0) &&
	    curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
		out = eb_xstrdup(s);
	curl_free(scheme);
	curl_free(s);
	return out;
}

/* Resolve ref (as written in a page, fragment included) against base.
 * *url gets the clean absolute URL, *frag the fragment without '#' (or
 * NULL).  Returns 0, or -1 when it does not make a usable URL. */
static int resolve_ref(const char *base, const char *ref, size_t rlen, char **url, char **frag)
{
	eb_autofree char *clean = NULL;
	const char *hash = memchr(ref, '#', rlen);
	size_t n = hash ? (size_t)(hash - ref) : rlen;
	CURLU *u;

	*url = NULL;
	*frag = NULL;
	while (n && is_space(*ref)) {
		ref++;
		n--;
		rlen--;
	}
	while (n && is_space(ref[n - 1]))
		n--;
	if (n == 0)
		return -1;
	clean = clean_href(ref, n);
	u = curl_url();
	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_URL, clean, 0) == CURLUE_OK)
		*url = eb_pyindex__url_clean(u);
	curl_url_cleanup(u);
	if (!*url)
		return -1;
	if (hash)
		*frag = trim_dup(hash + 1, rlen - (size_t)(hash + 1 - ref));
	return 0;
}

/* The page URL as stored: absolute, without credentials or fragment. */
static char *page_url_clean(const char *page_url)
{
	CURLU *u = curl_url();
	char *out = NULL;

	if (!u)
		abort();
	if (page_url && curl_url_set(u, CURLUPART_URL, page_url, 0) == CURLUE_OK)
		out = eb_pyindex__url_clean(u);
	curl_url_cleanup(u);
	return out;
}

/* "scheme://host:port" with the scheme's default port filled in, for
 * same-origin checks; NULL for a URL that does not parse. */
char *eb_pyindex__url_origin(const char *url)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;

	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
		out = eb_xasprintf("%s://%s:%s", scheme, host, port);
		for (char *c = out; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return out;
}

int eb_pyindex__url_is_file(const char *url)
{
	return strncasecmp(url, "file:", 5) == 0;
}

/* The local path of a file:// URL (percent-decoded); NULL when it names
 * another host or does not parse. */
char *eb_pyindex__file_url_path(const char *url)
{
	CURLU *u = curl_url();
	char *path = NULL, *out = NULL;

	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &path, CURLU_URLDECODE) == CURLUE_OK && path[0] == '/')
		out = eb_xstrdup(path);
	curl_free(path);
	curl_url_cleanup(u);
	return out;
}

/* "file://" + the absolute path, percent-encoded. */
char *eb_pyindex__file_url_from_path(const char *path)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	if (eb_buf_adds(&b, "file://") < 0)
		abort();
	for (const char *c = path; *c; c++) {
		unsigned char ch = (unsigned char)*c;
		int r = (isalnum(ch) || strchr("-._~/", ch)) ? eb_buf_addc(&b, (char)ch)
							     : eb_buf_addf(&b, "%%%02X", ch);
		if (r < 0)
			abort();
	}
	return eb_buf_detach(&b, NULL);
}

/* Percent-decoding of a path segment; a "%00" stays as written, so the
 * result is a C string with no surprises. */
static char *pct_decode(const char *s, size_t n)
{
	char *out = eb_xmalloc(n + 1);
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n &&
		    (hi = eb_hex_value(s[i + 1])) >= 0 && (lo = eb_hex_value(s[i + 2])) >= 0 &&
		    (hi | lo)) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* "<url>.metadata" (PEP 658), keeping a query where it is. */
char *eb_pyindex__metadata_url(const char *url)
{
	size_t n = strcspn(url, "?");
	return eb_xasprintf("%.*s.metadata%s", (int)n, url, url + n);
}

/* ---- parse errors ------------------------------------------------------ */

static int page_error(struct eb_error **err, const char *page_url, const char *fmt, ...)
	EB_PRINTF(3, 4);
static int page_error(struct eb_error **err, const char *page_url, const char *fmt, ...)
{
	eb_autofree char *shown = eb_pyindex_redact_url(page_url);
	struct eb_buf b;
	va_list ap;
	int rc;

	eb_buf_init(&b, 0);
	va_start(ap, fmt);
	if (eb_buf_vaddf(&b, fmt, ap) < 0)
		abort();
	va_end(ap);
	/* The details quote the page (keys, names): keep the message one
	 * bounded line whatever the page holds. */
	if (b.len > DETAIL_MAX) {
		eb_buf_truncate(&b, DETAIL_MAX);
		if (eb_buf_adds(&b, "...") < 0)
			abort();
	}
	for (char *c = b.ptr; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	rc = eb_error_set(err, EB_ENET, "malformed index page '%s': %s", shown, b.ptr);
	eb_buf_release(&b);
	return rc;
}

/* A filename from a page becomes a file name later (a download, a cache
 * entry, a message): no paths, no hidden files, no control characters. */
static int filename_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 255 || s[0] == '.')
		return 0;
	for (const char *c = s; *c; c++)
		if (*c == '/' || *c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f)
			return 0;
	return 1;
}

static int parse_api_version(const char *s, unsigned *major, unsigned *minor)
{
	unsigned long v[2] = { 0, 0 };
	int i = 0;
	const char *p = s;

	for (;;) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || v[i] > 1000)
			return -1;
		p = end;
		if (*p == '\0')
			break;
		if (*p != '.' || ++i > 1)
			return -1;
		p++;
	}
	*major = (unsigned)v[0];
	*minor = (unsigned)v[1];
	return 0;
}

static int page_check_api(struct eb_pyindex_page *p, const char *version, struct eb_error **err)
{
	if (!version) {
		p->api_major = 1;
		p->api_minor = 0;
		return 0;
	}
	if (parse_api_version(version, &p->api_major, &p->api_minor) < 0)
		return page_error(err, p->url, "api version '%s' is not <major>.<minor>", version);
	if (p->api_major != EB_PYINDEX_API_MAJOR) {
		eb_autofree char *shown = eb_pyindex_redact_url(p->url);
		return eb_error_set(err, EB_ENET,
				    "index page '%s' speaks api version %u.%u; envbuild reads "
				    "version %d",
				    shown, p->api_major, p->api_minor, EB_PYINDEX_API_MAJOR);
	}
	if (p->api_minor > EB_PYINDEX_API_MINOR) {
		eb_autofree char *shown = eb_pyindex_redact_url(p->url);
		page_warn(p,
			  "index page '%s' speaks api version %u.%u, newer than the %d.%d envbuild "
			  "knows: what is new in it is ignored",
			  shown, p->api_major, p->api_minor, EB_PYINDEX_API_MAJOR,
			  EB_PYINDEX_API_MINOR);
	}
	return 0;
}

static int page_begin(struct eb_pyindex_page *out, const char *page_url, size_t len, size_t cap,
		      enum eb_pyindex_format fmt, struct eb_error **err)
{
	memset(out, 0, sizeof(*out));
	out->index = -1;
	out->format = fmt;
	out->url = page_url_clean(page_url);
	if (!out->url) {
		eb_autofree char *shown = eb_pyindex_redact_url(page_url);
		return eb_error_set(err, EB_EINVALID, "index page url '%s' is not an absolute url",
				    shown);
	}
	out->kind = eb_pyindex__url_is_file(out->url) ? EB_PYINDEX_FILE_TREE : EB_PYINDEX_HTTP;
	if (len > cap) {
		eb_autofree char *shown = eb_pyindex_redact_url(page_url);
		return eb_error_set(err, EB_ETOOBIG, "index page '%s' is larger than %zu bytes",
				    shown, cap);
	}
	return 0;
}

/* Set f's url from ref and take "#algo=hex" fragment hashes the page did
 * not give otherwise (pip's _hash_re keys; "egg=" and the rest are
 * ignored). */
static int file_set_url(struct eb_pyindex_page *p, struct eb_pyindex_file *f, const char *base,
			const char *ref, size_t rlen, const char *what, struct eb_error **err)
{
	eb_autofree char *frag = NULL;

	if (resolve_ref(base, ref, rlen, &f->url, &frag) < 0)
		return page_error(err, p->url, "%s is not a usable url", what);
	for (const char *s = frag; s && *s;) {
		size_t n = strcspn(s, "&");
		const char *eq = memchr(s, '=', n);
		if (eq) {
			size_t alen = (size_t)(eq - s);
			eb_autofree char *a = eb_xstrndup(s, alen);
			if (eb_hash_algo_find(a)) {
				const char *why = eb_pyindex__hashes_add(&f->hashes, s, alen, eq + 1,
							     n - alen - 1);
				if (why)
					return page_error(err, p->url, "%s: %s in the url fragment",
							  what, why);
			}
		}
		s += n;
		if (*s == '&')
			s++;
	}
	return 0;
}

/* ---- PEP 691 JSON ------------------------------------------------------ */

static int json_hashes(struct eb_pyindex_page *p, struct eb_pyindex_hashes *h, json_t *obj,
		       const char *what, struct eb_error **err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return page_error(err, p->url, "%s is not an object", what);
	json_object_foreach(obj, key, v) {
		const char *why;
		if (!json_is_string(v))
			return page_error(err, p->url, "%s.%s is not a string", what, key);
		why = eb_pyindex__hashes_add(h, key, strlen(key), json_string_value(v), json_string_length(v));
		if (why)
			return page_error(err, p->url, "%s.%s: %s", what, key, why);
	}
	return 0;
}

static int json_file(struct eb_pyindex_page *p, json_t *jf, size_t i, struct eb_error **err)
{
	struct eb_pyindex_file *f = eb_pyindex__page_new_file(p);
	char what[64];
	json_t *v;
	const char *mkey;
	int rc;

	snprintf(what, sizeof(what), "files[%zu]", i);
	if (!json_is_object(jf))
		return page_error(err, p->url, "%s is not an object", what);

	v = json_object_get(jf, "filename");
	if (!json_is_string(v))
		return page_error(err, p->url, "%s.filename is missing or not a string", what);
	if (!filename_ok(json_string_value(v)))
		return page_error(err, p->url, "%s.filename '%s' is not a file name", what,
				  json_string_value(v));
	f->filename = eb_xstrdup(json_string_value(v));

	v = json_object_get(jf, "hashes");
	if (v) {
		char w[80];
		snprintf(w, sizeof(w), "%s.hashes", what);
		rc = json_hashes(p, &f->hashes, v, w, err);
		if (rc < 0)
			return rc;
	}

	v = json_object_get(jf, "url");
	if (!json_is_string(v))
		return page_error(err, p->url, "%s.url is missing or not a string", what);
	{
		char w[80];
		snprintf(w, sizeof(w), "%s.url", what);
		rc = file_set_url(p, f, p->url, json_string_value(v), json_string_length(v), w,
				  err);
		if (rc < 0)
			return rc;
	}

	v = json_object_get(jf, "requires-python");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return page_error(err, p->url, "%s.requires-python is not a string", what);
		if (json_string_length(v))
			f->requires_python = trim_dup(json_string_value(v), json_string_length(v));
	}

	/* PEP 714: "core-metadata" replaces "dist-info-metadata" (kept as an
	 * alias because older servers only send that). */
	mkey = "core-metadata";
	v = json_object_get(jf, mkey);
	if (!v || json_is_null(v)) {
		mkey = "dist-info-metadata";
		v = json_object_get(jf, mkey);
	}
	if (v && !json_is_null(v)) {
		if (json_is_boolean(v)) {
			f->core_metadata = json_is_true(v);
		} else if (json_is_object(v)) {
			char w[96];
			snprintf(w, sizeof(w), "%s.%s", what, mkey);
			f->core_metadata = 1;
			rc = json_hashes(p, &f->core_metadata_hashes, v, w, err);
			if (rc < 0)
				return rc;
		} else {
			return page_error(err, p->url, "%s.%s is neither a boolean nor an object",
					  what, mkey);
		}
	}

	v = json_object_get(jf, "yanked");
	if (v && !json_is_null(v)) {
		if (json_is_boolean(v)) {
			f->yanked = json_is_true(v);
		} else if (json_is_string(v)) {
			/* PEP 691 wants a non-empty reason; an empty one still
			 * means yanked. */
			f->yanked = 1;
			if (json_string_length(v))
				f->yanked_reason = eb_xstrdup(json_string_value(v));
		} else {
			return page_error(err, p->url, "%s.yanked is neither a boolean nor a string",
					  what);
		}
	}

	v = json_object_get(jf, "size");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return page_error(err, p->url, "%s.size is not a non-negative integer",
					  what);
		f->size = (int64_t)json_integer_value(v);
	}

	v = json_object_get(jf, "upload-time");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return page_error(err, p->url, "%s.upload-time is not a string", what);
		f->upload_time = eb_xstrdup(json_string_value(v));
	}
	return 0;
}

static int parse_json(struct eb_pyindex_page *out, const char *data, size_t len,
		      const char *page_url, size_t cap, struct eb_error **err)
{
	json_error_t jerr;
	json_t *root = NULL, *v, *files;
	const char *version = NULL;
	int rc;

	rc = page_begin(out, page_url, len, cap, EB_PYINDEX_FMT_JSON, err);
	if (rc < 0)
		goto fail;
	root = json_loadb(data ? data : "", len, 0, &jerr);
	if (!root) {
		rc = page_error(err, out->url, "line %d column %d: %s", jerr.line, jerr.column,
				jerr.text);
		goto fail;
	}
	if (!json_is_object(root)) {
		rc = page_error(err, out->url, "not a json object");
		goto fail;
	}
	v = json_object_get(root, "meta");
	if (v) {
		json_t *av;
		if (!json_is_object(v)) {
			rc = page_error(err, out->url, "meta is not an object");
			goto fail;
		}
		av = json_object_get(v, "api-version");
		if (av && !json_is_string(av)) {
			rc = page_error(err, out->url, "meta.api-version is not a string");
			goto fail;
		}
		version = av ? json_string_value(av) : NULL;
	}
	/* The version comes first: a page of api 2 may look like anything. */
	rc = page_check_api(out, version, err);
	if (rc < 0)
		goto fail;
	v = json_object_get(root, "name");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			rc = page_error(err, out->url, "name is not a string");
			goto fail;
		}
		out->name = eb_xstrdup(json_string_value(v));
	}
	files = json_object_get(root, "files");
	if (!json_is_array(files)) {
		rc = page_error(err, out->url, "files is missing or not an array");
		goto fail;
	}
	for (size_t i = 0; i < json_array_size(files); i++) {
		if ((i & 4095) == 0 && (rc = eb_interrupt_check(err)) < 0)
			goto fail;
		rc = json_file(out, json_array_get(files, i), i, err);
		if (rc < 0)
			goto fail;
	}
	json_decref(root);
	return 0;

fail:
	json_decref(root);
	eb_pyindex_page_release(out);
	return rc;
}

/* ---- PEP 503 HTML ------------------------------------------------------ */

struct span {
	const char *p;
	size_t n;
	int set;
};

/* The attributes envbuild reads; the first occurrence of each counts, as
 * in HTML. */
struct tag {
	char name[16];
	struct span href, requires_python, yanked, core_md, dist_md, meta_name, content;
};

/* An anchor as found, resolved once the whole page (and <base>) is read. */
struct anchor {
	struct tag tag;
	const char *text;
	size_t text_len;
};

static void put_utf8(struct eb_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (eb_buf_add(b, u, n) < 0)
		abort();
}

/* Decode character references: the five XML ones, &nbsp; and numeric
 * ones (what html.escape and PyPI's templates produce).  Anything else is
 * kept as written, as browsers do with unknown references.  With
 * strip_tags, markup inside (an anchor's text) is dropped too. */
static char *html_text(const char *s, size_t n, int strip_tags)
{
	static const struct {
		const char *name;
		unsigned long cp;
	} named[] = { { "amp", '&' }, { "lt", '<' },   { "gt", '>' },
		      { "quot", '"' }, { "apos", '\'' }, { "nbsp", 0xa0 } };
	struct eb_buf b;
	const char *end = s + n;

	eb_buf_init(&b, 0);
	while (s < end) {
		if (strip_tags && *s == '<') {
			const char *gt = memchr(s, '>', (size_t)(end - s));
			s = gt ? gt + 1 : end;
			continue;
		}
		if (*s == '&') {
			size_t left = (size_t)(end - s);
			const char *semi = memchr(s, ';', left < 12 ? left : 12);
			if (semi && s[1] == '#') {
				const char *d = s + 2;
				int hex = *d == 'x' || *d == 'X';
				unsigned long cp = 0;
				int ok = 1;
				if (hex)
					d++;
				if (d == semi)
					ok = 0;
				for (; d < semi && ok; d++) {
					int v = hex ? eb_hex_value(*d)
						    : (isdigit((unsigned char)*d) ? *d - '0' : -1);
					if (v < 0)
						ok = 0;
					else if (cp <= 0x10ffff)
						cp = cp * (hex ? 16 : 10) + (unsigned long)v;
				}
				if (ok) {
					put_utf8(&b, cp);
					s = semi + 1;
					continue;
				}
			} else if (semi) {
				size_t k;
				for (k = 0; k < sizeof(named) / sizeof(*named); k++)
					if (strlen(named[k].name) == (size_t)(semi - s - 1) &&
					    memcmp(named[k].name, s + 1, (size_t)(semi - s - 1)) == 0)
						break;
				if (k < sizeof(named) / sizeof(*named)) {
					put_utf8(&b, named[k].cp);
					s = semi + 1;
					continue;
				}
			}
		}
		if (eb_buf_addc(&b, *s++) < 0)
			abort();
	}
	return eb_buf_detach(&b, NULL);
}

static char *span_text(const struct span *sp)
{
	return html_text(sp->p, sp->n, 0);
}

static void tag_attr(struct tag *t, const char *name, size_t nlen, const char *val, size_t vlen)
{
	static const struct {
		const char *name;
		size_t off;
	} wanted[] = {
		{ "href", offsetof(struct tag, href) },
		{ "data-requires-python", offsetof(struct tag, requires_python) },
		{ "data-yanked", offsetof(struct tag, yanked) },
		{ "data-core-metadata", offsetof(struct tag, core_md) },
		{ "data-dist-info-metadata", offsetof(struct tag, dist_md) },
		{ "name", offsetof(struct tag, meta_name) },
		{ "content", offsetof(struct tag, content) },
	};

	for (size_t i = 0; i < sizeof(wanted) / sizeof(*wanted); i++) {
		if (strlen(wanted[i].name) == nlen && strncasecmp(wanted[i].name, name, nlen) == 0) {
			struct span *sp = (struct span *)(void *)((char *)t + wanted[i].off);
			if (!sp->set) {
				sp->p = val;
				sp->n = vlen;
				sp->set = 1;
			}
			return;
		}
	}
}

/* Find the first case-insensitive occurrence of needle in [p, end). */
static const char *find_ci(const char *p, const char *end, const char *needle)
{
	size_t m = strlen(needle);

	for (; p + m <= end; p++)
		if (strncasecmp(p, needle, m) == 0)
			return p;
	return NULL;
}

/* Read a start tag whose '<' is at p; returns the position after its '>'
 * (or end when unterminated). */
static const char *read_tag(const char *p, const char *end, struct tag *t)
{
	size_t k = 0;

	memset(t, 0, sizeof(*t));
	p++;
	while (p < end && (isalnum((unsigned char)*p) || *p == '-')) {
		if (k + 1 < sizeof(t->name))
			t->name[k++] = (char)tolower((unsigned char)*p);
		p++;
	}
	t->name[k] = '\0';
	for (;;) {
		const char *name, *val = "";
		size_t nlen, vlen = 0;

		while (p < end && (is_space(*p) || *p == '/'))
			p++;
		if (p >= end)
			return end;
		if (*p == '>')
			return p + 1;
		name = p;
		while (p < end && !is_space(*p) && *p != '/' && *p != '>' && *p != '=')
			p++;
		nlen = (size_t)(p - name);
		while (p < end && is_space(*p))
			p++;
		if (p < end && *p == '=') {
			p++;
			while (p < end && is_space(*p))
				p++;
			if (p < end && (*p == '"' || *p == '\'')) {
				const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
				if (!q)
					return end;
				val = p + 1;
				vlen = (size_t)(q - val);
				p = q + 1;
			} else {
				val = p;
				while (p < end && !is_space(*p) && *p != '>')
					p++;
				vlen = (size_t)(p - val);
			}
		}
		if (nlen)
			tag_attr(t, name, nlen, val, vlen);
		else if (p < end)
			p++; /* a stray '=' */
	}
}

/* PEP 658/714 attribute: "true", or "<algo>=<hex>".  pip treats any other
 * value as "available, no hash"; so do we, except "false". */
static int html_core_metadata(struct eb_pyindex_page *p, struct eb_pyindex_file *f,
			      const struct span *sp, struct eb_error **err)
{
	eb_autofree char *v = span_text(sp);
	char *eq;

	if (strcmp(v, "false") == 0)
		return 0;
	f->core_metadata = 1;
	eq = strchr(v, '=');
	if (eq) {
		eb_autofree char *a = eb_xstrndup(v, (size_t)(eq - v));
		for (char *c = a; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (eb_hash_algo_find(a)) {
			const char *why = eb_pyindex__hashes_add(&f->core_metadata_hashes, v, (size_t)(eq - v),
						     eq + 1, strlen(eq + 1));
			if (why)
				return page_error(err, p->url, "data-core-metadata of '%s': %s",
						  f->filename, why);
		}
	}
	return 0;
}

static int html_file(struct eb_pyindex_page *p, const char *base, const struct anchor *a,
		     struct eb_error **err)
{
	eb_autofree char *text = html_text(a->text, a->text_len, 1);
	eb_autofree char *href = span_text(&a->tag.href);
	eb_autofree char *name = trim_dup(text, strlen(text));
	struct eb_pyindex_file *f = eb_pyindex__page_new_file(p);
	int rc;

	rc = file_set_url(p, f, base, href, strlen(href),
			  *name ? name : "an anchor without text", err);
	if (rc < 0)
		return rc;
	if (!*name) {
		/* PEP 503: the text must be the URL's last segment. */
		const char *path = f->url + strcspn(f->url, "?");
		const char *slash = path;
		while (slash > f->url && slash[-1] != '/')
			slash--;
		free(name);
		name = pct_decode(slash, (size_t)(path - slash));
	}
	if (!filename_ok(name))
		return page_error(err, p->url, "'%s' is not a file name", name);
	f->filename = eb_steal_ptr(&name);

	if (a->tag.requires_python.set) {
		eb_autofree char *rp = span_text(&a->tag.requires_python);
		if (*rp)
			f->requires_python = trim_dup(rp, strlen(rp));
	}
	if (a->tag.yanked.set) {
		eb_autofree char *why = span_text(&a->tag.yanked);
		f->yanked = 1;
		if (*why)
			f->yanked_reason = eb_steal_ptr(&why);
	}
	if (a->tag.core_md.set)
		rc = html_core_metadata(p, f, &a->tag.core_md, err);
	else if (a->tag.dist_md.set)
		rc = html_core_metadata(p, f, &a->tag.dist_md, err);
	return rc;
}

static int parse_html(struct eb_pyindex_page *out, const char *data, size_t len,
		      const char *page_url, size_t cap, struct eb_error **err)
{
	const char *p = data, *end = data + len;
	struct anchor *anchors = NULL;
	size_t nanchors = 0, acap = 0;
	eb_autofree char *version = NULL;
	eb_autofree char *base = NULL;
	int rc;

	rc = page_begin(out, page_url, len, cap, EB_PYINDEX_FMT_HTML, err);
	if (rc < 0)
		goto done;
	if (!data)
		p = end = "";
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		struct tag t;

		if (!lt)
			break;
		p = lt;
		if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
			const char *c = find_ci(p + 4, end, "-->");
			p = c ? c + 3 : end;
			continue;
		}
		if (end - p < 2 || !isalpha((unsigned char)p[1])) {
			/* an end tag, <!DOCTYPE>, <?xml?>, or a stray '<' */
			const char *gt = (end - p >= 2 && strchr("/!?", p[1]))
						 ? memchr(p, '>', (size_t)(end - p))
						 : NULL;
			p = gt ? gt + 1 : p + 1;
			continue;
		}
		p = read_tag(p, end, &t);
		if (strcmp(t.name, "a") == 0 && t.href.set) {
			const char *close = find_ci(p, end, "</a");
			EB_ALLOC_GROW(anchors, nanchors + 1, acap);
			anchors[nanchors].tag = t;
			anchors[nanchors].text = p;
			anchors[nanchors].text_len = (size_t)((close ? close : end) - p);
			nanchors++;
			p = close ? close : end;
		} else if (strcmp(t.name, "base") == 0 && t.href.set && !base) {
			eb_autofree char *href = span_text(&t.href);
			eb_autofree char *frag = NULL;
			if (resolve_ref(out->url, href, strlen(href), &base, &frag) < 0) {
				rc = page_error(err, out->url, "<base href> is not a usable url");
				goto done;
			}
		} else if (strcmp(t.name, "meta") == 0 && t.meta_name.set && t.content.set &&
			   !version) {
			eb_autofree char *mn = span_text(&t.meta_name);
			if (strcasecmp(mn, "pypi:repository-version") == 0) {
				eb_autofree char *c = span_text(&t.content);
				version = trim_dup(c, strlen(c));
			}
		} else if (strcmp(t.name, "script") == 0 || strcmp(t.name, "style") == 0) {
			const char *c = find_ci(p, end, t.name[1] == 't' ? "</style" : "</script");
			p = c ? c : end;
		}
	}
	rc = page_check_api(out, version, err);
	if (rc < 0)
		goto done;
	for (size_t i = 0; i < nanchors; i++) {
		if ((i & 4095) == 0 && (rc = eb_interrupt_check(err)) < 0)
			goto done;
		rc = html_file(out, base ? base : out->url, &anchors[i], err);
		if (rc < 0)
			goto done;
	}

done:
	free(anchors);
	if (rc < 0)
		eb_pyindex_page_release(out);
	return rc;
}

int eb_pyindex_parse_json(struct eb_pyindex_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err)
{
	return parse_json(out, data, len, page_url, EB_PYINDEX_PAGE_MAX, err);
}

int eb_pyindex_parse_html(struct eb_pyindex_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err)
{
	return parse_html(out, data, len, page_url, EB_PYINDEX_PAGE_MAX, err);
}

int eb_pyindex__parse_typed(struct eb_pyindex_page *out, const char *content_type, const char *data,
		       size_t len, const char *page_url, size_t cap, struct eb_error **err)
{
	eb_autofree char *ct = NULL;
	eb_autofree char *shown = NULL;

	ct = trim_dup(content_type ? content_type : "",
		      content_type ? strcspn(content_type, ";") : 0);
	for (char *c = ct; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (strcmp(ct, "application/vnd.pypi.simple.v1+json") == 0 ||
	    strcmp(ct, "application/vnd.pypi.simple.latest+json") == 0)
		return parse_json(out, data, len, page_url, cap, err);
	if (strcmp(ct, "application/vnd.pypi.simple.v1+html") == 0 ||
	    strcmp(ct, "application/vnd.pypi.simple.latest+html") == 0 ||
	    strcmp(ct, "text/html") == 0)
		return parse_html(out, data, len, page_url, cap, err);
	memset(out, 0, sizeof(*out));
	out->index = -1;
	shown = eb_pyindex_redact_url(page_url);
	if (strncmp(ct, "application/vnd.pypi.simple.v", 29) == 0)
		return eb_error_set(err, EB_ENET,
				    "index page '%s' speaks '%s'; envbuild reads api version %d",
				    shown, ct, EB_PYINDEX_API_MAJOR);
	return eb_error_set(err, EB_ENET, "index page '%s' has content type '%s', not a simple "
			    "repository page", shown, *ct ? ct : "(none)");
}

int eb_pyindex_parse_page(struct eb_pyindex_page *out, const char *content_type, const char *data,
		   size_t len, const char *page_url, struct eb_error **err)
{
	return eb_pyindex__parse_typed(out, content_type, data, len, page_url, EB_PYINDEX_PAGE_MAX, err);
}
