/*
 * index.c - Python package indexes: PEP 691 JSON and PEP 503 HTML project
 * pages, file:// trees and wheel directories, first-index-wins lookup with
 * per-project routes, Basic credentials from index URLs and netrc, and
 * downloads that reach the blob store only once every hash checked out.
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
#include "registry/auth.h"
#include "registry/http.h"
#include "util/alloc.h"
#include "util/fs.h"

/* A download that broke off after some bytes is started again this many
 * times in all (the HTTP layer reports such breaks instead of retrying,
 * because it cannot take back bytes it handed out). */
#define DOWNLOAD_ATTEMPTS 3
#define READ_CHUNK 65536
/* Longest quote of a page in a parse error. */
#define DETAIL_MAX 240

/* ---- hash algorithms --------------------------------------------------- */

/* hashlib's guaranteed algorithms (PEP 503 allows any of them) and their
 * OpenSSL names.  "strong" ones may stand alone as a file's proof: md5,
 * sha1 and sha224 are checked when given but never trusted on their own,
 * as pip's hash-checking mode does not accept them either. */
struct algo {
	const char *name;
	const char *evp;
	size_t hexlen;
	int strong;
};

static const struct algo algos[] = {
	{ "md5", "MD5", 32, 0 },
	{ "sha1", "SHA1", 40, 0 },
	{ "sha224", "SHA224", 56, 0 },
	{ "sha256", "SHA256", 64, 1 },
	{ "sha384", "SHA384", 96, 1 },
	{ "sha512", "SHA512", 128, 1 },
	{ "sha3_224", "SHA3-224", 56, 0 },
	{ "sha3_256", "SHA3-256", 64, 1 },
	{ "sha3_384", "SHA3-384", 96, 1 },
	{ "sha3_512", "SHA3-512", 128, 1 },
	{ "blake2b", "BLAKE2b512", 128, 1 },
	{ "blake2s", "BLAKE2s256", 64, 1 },
};

static const struct algo *algo_find(const char *name)
{
	for (size_t i = 0; i < sizeof(algos) / sizeof(*algos); i++)
		if (strcmp(algos[i].name, name) == 0)
			return &algos[i];
	return NULL;
}

/* Hex digest of data by a known algorithm into out (129 bytes); -1 when
 * OpenSSL does not offer it (a FIPS build without md5). */
static int digest_hex(const struct algo *a, const void *data, size_t len, char out[129])
{
	const EVP_MD *md = EVP_get_digestbyname(a->evp);
	unsigned char raw[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!md || EVP_Digest(data, len, raw, &n, md, NULL) != 1 || n * 2 != a->hexlen)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		out[2 * i] = "0123456789abcdef"[raw[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
	}
	out[2 * n] = '\0';
	return 0;
}

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

static int ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static void wipe_free(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

/* Hand an error made on the side to the caller (who may have one). */
static void pass_error(struct eb_error **err, struct eb_error *e)
{
	if (err && !*err)
		*err = e;
	else
		eb_error_free(e);
}

/* ---- pages ------------------------------------------------------------- */

static void hashes_release(struct eb_index_hashes *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->items[i].algo);
		free(h->items[i].hex);
	}
	free(h->items);
	h->items = NULL;
	h->n = 0;
}

static const char *hashes_get(const struct eb_index_hashes *h, const char *algo)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->items[i].algo, algo) == 0)
			return h->items[i].hex;
	return NULL;
}

/* Add algo=hex after checking both; the first value for an algorithm
 * wins.  Returns NULL, or a static reason the pair is unusable. */
static const char *hashes_add(struct eb_index_hashes *h, const char *algo, size_t alen,
			      const char *hex, size_t hlen)
{
	eb_autofree char *a = eb_xstrndup(algo, alen);
	const struct algo *known;
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
	known = algo_find(a);
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

static void file_release(struct eb_index_file *f)
{
	free(f->filename);
	free(f->url);
	hashes_release(&f->hashes);
	free(f->requires_python);
	free(f->yanked_reason);
	hashes_release(&f->core_metadata_hashes);
	free(f->upload_time);
	memset(f, 0, sizeof(*f));
}

void eb_index_page_release(struct eb_index_page *p)
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

static struct eb_index_file *page_new_file(struct eb_index_page *p)
{
	struct eb_index_file *f;

	EB_ALLOC_GROW(p->files, p->nfiles + 1, p->files_cap);
	f = &p->files[p->nfiles++];
	memset(f, 0, sizeof(*f));
	f->size = -1;
	return f;
}

static void page_warn(struct eb_index_page *p, const char *fmt, ...) EB_PRINTF(2, 3);
static void page_warn(struct eb_index_page *p, const char *fmt, ...)
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

const char *eb_index_file_hash(const struct eb_index_file *f, const char *algo)
{
	return f && algo ? hashes_get(&f->hashes, algo) : NULL;
}

/* ---- URLs -------------------------------------------------------------- */

char *eb_index_redact_url(const char *url)
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
static char *url_clean(CURLU *u)
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
		*url = url_clean(u);
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
		out = url_clean(u);
	curl_url_cleanup(u);
	return out;
}

/* "scheme://host:port" with the scheme's default port filled in, for
 * same-origin checks; NULL for a URL that does not parse. */
static char *url_origin(const char *url)
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

static int url_is_file(const char *url)
{
	return strncasecmp(url, "file:", 5) == 0;
}

/* The local path of a file:// URL (percent-decoded); NULL when it names
 * another host or does not parse. */
static char *file_url_path(const char *url)
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
static char *file_url_from_path(const char *path)
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
static char *metadata_url(const char *url)
{
	size_t n = strcspn(url, "?");
	return eb_xasprintf("%.*s.metadata%s", (int)n, url, url + n);
}

/* ---- parse errors ------------------------------------------------------ */

static int page_error(struct eb_error **err, const char *page_url, const char *fmt, ...)
	EB_PRINTF(3, 4);
static int page_error(struct eb_error **err, const char *page_url, const char *fmt, ...)
{
	eb_autofree char *shown = eb_index_redact_url(page_url);
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

static int page_check_api(struct eb_index_page *p, const char *version, struct eb_error **err)
{
	if (!version) {
		p->api_major = 1;
		p->api_minor = 0;
		return 0;
	}
	if (parse_api_version(version, &p->api_major, &p->api_minor) < 0)
		return page_error(err, p->url, "api version '%s' is not <major>.<minor>", version);
	if (p->api_major != EB_INDEX_API_MAJOR) {
		eb_autofree char *shown = eb_index_redact_url(p->url);
		return eb_error_set(err, EB_ENET,
				    "index page '%s' speaks api version %u.%u; envbuild reads "
				    "version %d",
				    shown, p->api_major, p->api_minor, EB_INDEX_API_MAJOR);
	}
	if (p->api_minor > EB_INDEX_API_MINOR) {
		eb_autofree char *shown = eb_index_redact_url(p->url);
		page_warn(p,
			  "index page '%s' speaks api version %u.%u, newer than the %d.%d envbuild "
			  "knows: what is new in it is ignored",
			  shown, p->api_major, p->api_minor, EB_INDEX_API_MAJOR,
			  EB_INDEX_API_MINOR);
	}
	return 0;
}

static int page_begin(struct eb_index_page *out, const char *page_url, size_t len, size_t cap,
		      enum eb_index_format fmt, struct eb_error **err)
{
	memset(out, 0, sizeof(*out));
	out->index = -1;
	out->format = fmt;
	out->url = page_url_clean(page_url);
	if (!out->url) {
		eb_autofree char *shown = eb_index_redact_url(page_url);
		return eb_error_set(err, EB_EINVALID, "index page url '%s' is not an absolute url",
				    shown);
	}
	out->kind = url_is_file(out->url) ? EB_INDEX_FILE_TREE : EB_INDEX_HTTP;
	if (len > cap) {
		eb_autofree char *shown = eb_index_redact_url(page_url);
		return eb_error_set(err, EB_ETOOBIG, "index page '%s' is larger than %zu bytes",
				    shown, cap);
	}
	return 0;
}

/* Set f's url from ref and take "#algo=hex" fragment hashes the page did
 * not give otherwise (pip's _hash_re keys; "egg=" and the rest are
 * ignored). */
static int file_set_url(struct eb_index_page *p, struct eb_index_file *f, const char *base,
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
			if (algo_find(a)) {
				const char *why = hashes_add(&f->hashes, s, alen, eq + 1,
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

static int json_hashes(struct eb_index_page *p, struct eb_index_hashes *h, json_t *obj,
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
		why = hashes_add(h, key, strlen(key), json_string_value(v), json_string_length(v));
		if (why)
			return page_error(err, p->url, "%s.%s: %s", what, key, why);
	}
	return 0;
}

static int json_file(struct eb_index_page *p, json_t *jf, size_t i, struct eb_error **err)
{
	struct eb_index_file *f = page_new_file(p);
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

static int parse_json(struct eb_index_page *out, const char *data, size_t len,
		      const char *page_url, size_t cap, struct eb_error **err)
{
	json_error_t jerr;
	json_t *root = NULL, *v, *files;
	const char *version = NULL;
	int rc;

	rc = page_begin(out, page_url, len, cap, EB_INDEX_FMT_JSON, err);
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
		rc = json_file(out, json_array_get(files, i), i, err);
		if (rc < 0)
			goto fail;
	}
	json_decref(root);
	return 0;

fail:
	json_decref(root);
	eb_index_page_release(out);
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
static int html_core_metadata(struct eb_index_page *p, struct eb_index_file *f,
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
		if (algo_find(a)) {
			const char *why = hashes_add(&f->core_metadata_hashes, v, (size_t)(eq - v),
						     eq + 1, strlen(eq + 1));
			if (why)
				return page_error(err, p->url, "data-core-metadata of '%s': %s",
						  f->filename, why);
		}
	}
	return 0;
}

static int html_file(struct eb_index_page *p, const char *base, const struct anchor *a,
		     struct eb_error **err)
{
	eb_autofree char *text = html_text(a->text, a->text_len, 1);
	eb_autofree char *href = span_text(&a->tag.href);
	eb_autofree char *name = trim_dup(text, strlen(text));
	struct eb_index_file *f = page_new_file(p);
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

static int parse_html(struct eb_index_page *out, const char *data, size_t len,
		      const char *page_url, size_t cap, struct eb_error **err)
{
	const char *p = data, *end = data + len;
	struct anchor *anchors = NULL;
	size_t nanchors = 0, acap = 0;
	eb_autofree char *version = NULL;
	eb_autofree char *base = NULL;
	int rc;

	rc = page_begin(out, page_url, len, cap, EB_INDEX_FMT_HTML, err);
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
		rc = html_file(out, base ? base : out->url, &anchors[i], err);
		if (rc < 0)
			goto done;
	}

done:
	free(anchors);
	if (rc < 0)
		eb_index_page_release(out);
	return rc;
}

int eb_index_parse_json(struct eb_index_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err)
{
	return parse_json(out, data, len, page_url, EB_INDEX_PAGE_MAX, err);
}

int eb_index_parse_html(struct eb_index_page *out, const char *data, size_t len,
			const char *page_url, struct eb_error **err)
{
	return parse_html(out, data, len, page_url, EB_INDEX_PAGE_MAX, err);
}

static int parse_typed(struct eb_index_page *out, const char *content_type, const char *data,
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
	shown = eb_index_redact_url(page_url);
	if (strncmp(ct, "application/vnd.pypi.simple.v", 29) == 0)
		return eb_error_set(err, EB_ENET,
				    "index page '%s' speaks '%s'; envbuild reads api version %d",
				    shown, ct, EB_INDEX_API_MAJOR);
	return eb_error_set(err, EB_ENET, "index page '%s' has content type '%s', not a simple "
			    "repository page", shown, *ct ? ct : "(none)");
}

int eb_index_parse_page(struct eb_index_page *out, const char *content_type, const char *data,
		   size_t len, const char *page_url, struct eb_error **err)
{
	return parse_typed(out, content_type, data, len, page_url, EB_INDEX_PAGE_MAX, err);
}

/* ---- netrc ------------------------------------------------------------- */

/* Next token: whitespace separated, "quoted with \\ escapes" allowed (as
 * curl reads them), '#' at a token start comments out the rest of the
 * line.  NULL at the end. */
static char *netrc_token(const char **pp, const char *end)
{
	const char *p = *pp;
	struct eb_buf b;

	for (;;) {
		while (p < end && is_space(*p))
			p++;
		if (p < end && *p == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		break;
	}
	if (p >= end) {
		*pp = p;
		return NULL;
	}
	eb_buf_init(&b, 0);
	if (*p == '"') {
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			if (eb_buf_addc(&b, *p) < 0)
				abort();
		}
		if (p < end)
			p++;
	} else {
		const char *s = p;
		while (p < end && !is_space(*p))
			p++;
		if (eb_buf_add(&b, s, (size_t)(p - s)) < 0)
			abort();
	}
	*pp = p;
	return eb_buf_detach(&b, NULL);
}

static int netrc_lookup(const char *path, const char *host, int use_default, char **login,
			char **password, struct eb_error **err);

int eb_index_netrc_lookup(const char *path, const char *host, char **login, char **password,
			  struct eb_error **err)
{
	return netrc_lookup(path, host, 1, login, password, err);
}

/* use_default 0: a "default" entry is ignored (it would hand the same
 * password to any host a spec names). */
static int netrc_lookup(const char *path, const char *host, int use_default, char **login,
			char **password, struct eb_error **err)
{
	enum { NONE, MATCH, DEFAULT, OTHER } cur = NONE;
	char *m_login = NULL, *m_pass = NULL, *d_login = NULL, *d_pass = NULL;
	int have_match = 0, have_default = 0, rc;
	struct eb_buf b;
	struct eb_error *e = NULL;
	const char *p, *end;
	char *tok;

	*login = *password = NULL;
	if (!path || !host)
		return 1;
	eb_buf_init(&b, 0);
	rc = eb_fs_read_file(&b, path, 1 << 20, &e);
	if (rc == -EB_ENOTFOUND) {
		eb_error_free(e);
		eb_buf_release(&b);
		return 1;
	}
	if (rc < 0) {
		/* eb_fs_read_file names the file only; the text is never
		 * quoted. */
		pass_error(err, e);
		eb_buf_release(&b);
		return rc;
	}
	p = b.ptr;
	end = b.ptr + b.len;
	while ((tok = netrc_token(&p, end))) {
		char **lp = NULL, **pp = NULL;

		if (strcmp(tok, "machine") == 0) {
			char *name = netrc_token(&p, end);
			if (cur == MATCH || !name) {
				free(name);
				wipe_free(tok);
				break; /* the first entry for the host wins */
			}
			cur = strcasecmp(name, host) == 0 && !have_match ? MATCH : OTHER;
			have_match |= cur == MATCH;
			free(name);
		} else if (strcmp(tok, "default") == 0) {
			if (cur == MATCH) {
				wipe_free(tok);
				break;
			}
			cur = have_default ? OTHER : DEFAULT;
			have_default = 1;
		} else if (strcmp(tok, "login") == 0 || strcmp(tok, "password") == 0 ||
			   strcmp(tok, "account") == 0) {
			char *val = netrc_token(&p, end);
			int is_login = tok[0] == 'l', is_pass = tok[0] == 'p';
			if (cur == MATCH) {
				lp = &m_login;
				pp = &m_pass;
			} else if (cur == DEFAULT) {
				lp = &d_login;
				pp = &d_pass;
			}
			if (lp && is_login && !*lp)
				*lp = eb_steal_ptr(&val);
			else if (pp && is_pass && !*pp)
				*pp = eb_steal_ptr(&val);
			wipe_free(val);
		} else if (strcmp(tok, "macdef") == 0) {
			/* a macro runs to the next empty line */
			const char *blank = find_ci(p, end, "\n\n");
			p = blank ? blank + 2 : end;
		}
		wipe_free(tok);
	}
	OPENSSL_cleanse(b.ptr, b.len);
	eb_buf_release(&b);

	if (m_login || m_pass) {
		*login = m_login ? m_login : eb_xstrdup("");
		*password = m_pass ? m_pass : eb_xstrdup("");
		wipe_free(d_login);
		wipe_free(d_pass);
		return 0;
	}
	if ((d_login || d_pass) && use_default) {
		*login = d_login ? d_login : eb_xstrdup("");
		*password = d_pass ? d_pass : eb_xstrdup("");
		return 0;
	}
	wipe_free(d_login);
	wipe_free(d_pass);
	return 1;
}

/* ---- the set ------------------------------------------------------------ */

struct index_entry {
	char *label;   /* given, or the redacted location */
	char *display; /* the location, redacted: for messages */
	enum eb_index_kind kind;
	char *base;    /* http(s): clean URL without trailing '/' */
	char *origin;  /* http(s): url_origin(base) */
	char *root;    /* file tree, wheel dir: absolute path without trailing '/' */
	char *user;    /* from the URL, or NULL */
	char *password;
};

struct route {
	char *project; /* normalized */
	size_t index;
};

struct eb_index_set {
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

int eb_index_set_new(struct eb_index_set **out, const struct eb_index_options *opts,
		     struct eb_error **err)
{
	struct eb_index_options def = { 0 };
	struct eb_index_set *s;

	*out = NULL;
	if (!opts)
		opts = &def;
	s = eb_xcalloc(1, sizeof(*s));
	s->max_page = opts->max_page ? opts->max_page : EB_INDEX_PAGE_MAX;
	s->max_metadata = opts->max_metadata ? opts->max_metadata : EB_INDEX_METADATA_MAX;
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
	wipe_free(e->user);
	wipe_free(e->password);
	memset(e, 0, sizeof(*e));
}

void eb_index_set_free(struct eb_index_set *s)
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

size_t eb_index_set_count(const struct eb_index_set *s)
{
	return s ? s->n : 0;
}

const char *eb_index_set_label(const struct eb_index_set *s, size_t i)
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
	e->base = url_clean(u);
	if (!e->base) {
		rc = eb_error_set(err, EB_EINVALID, "index url '%s' does not parse", e->display);
		goto done;
	}
	/* "<base>/<name>/" is built by hand: no trailing '/' here. */
	while (strlen(e->base) > 1 && e->base[strlen(e->base) - 1] == '/')
		e->base[strlen(e->base) - 1] = '\0';
	e->origin = url_origin(e->base);
	e->kind = EB_INDEX_HTTP;

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
static int find_label(const struct eb_index_set *s, const char *label)
{
	eb_autofree char *want = eb_index_redact_url(label);

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

int eb_index_set_add(struct eb_index_set *s, const char *name, const char *location,
		     struct eb_error **err)
{
	struct index_entry e = { 0 };
	const char *sep;
	int rc, dup;

	if (!s || !location || !*location)
		return eb_error_set(err, EB_EINVALID, "empty index location");
	if (name && !*name)
		return eb_error_set(err, EB_EINVALID, "empty index name");
	e.display = eb_index_redact_url(location);
	sep = strstr(location, "://");
	if (sep) {
		eb_autofree char *scheme = eb_xstrndup(location, (size_t)(sep - location));
		for (char *c = scheme; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) {
			rc = entry_http(&e, location, err);
		} else if (strcmp(scheme, "file") == 0) {
			eb_autofree char *path = file_url_path(location);
			e.kind = EB_INDEX_FILE_TREE;
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
		e.kind = EB_INDEX_WHEEL_DIR;
		rc = local_root(&e, location, err);
	}
	if (rc < 0)
		goto fail;
	/* A label is shown in messages: never with credentials in it. */
	e.label = eb_index_redact_url(name ? name : location);
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

int eb_index_set_route(struct eb_index_set *s, const char *project, const char *index_name,
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

	wipe_free(raw);
	wipe_free(b64);
	return h;
}

/* The Authorization header line for a request to url, or NULL: the
 * index's URL credentials on its own origin, else -- only once the server
 * asked (challenged: it answered 401) -- the netrc entry for the URL's host
 * (its "default" entry only when the runner opted in).  Never over plain
 * HTTP to a host that is not loopback, where anyone on the path reads it.
 * A broken netrc means no credentials, as for requests and pip: a 401 then
 * says what is missing. */
static char *auth_for(const struct eb_index_set *s, const struct index_entry *ix, const char *url,
		      int challenged)
{
	char *login = NULL, *pass = NULL, *h = NULL, *host = NULL, *scheme = NULL;
	struct eb_error *e = NULL;
	CURLU *u;

	if (url_is_file(url))
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
	if (ix && ix->kind == EB_INDEX_HTTP && ix->user) {
		eb_autofree char *origin = url_origin(url);
		if (origin && ix->origin && strcmp(origin, ix->origin) == 0) {
			h = basic_header(ix->user, ix->password);
			goto done;
		}
	}
	if (s->netrc && challenged &&
	    netrc_lookup(s->netrc, host, s->netrc_default, &login, &pass, &e) == 0) {
		h = basic_header(login, pass);
		wipe_free(login);
		wipe_free(pass);
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
static int request_auth(struct eb_index_set *s, const struct index_entry *ix,
			struct eb_http_request *req, const char **headers, size_t slot,
			struct eb_http_response *resp, struct eb_error **err)
{
	char *authz = auth_for(s, ix, req->url, 0);
	int had = authz != NULL, rc;

	headers[slot] = authz;
	req->headers = headers;
	rc = eb_http_request(s->http, req, resp, err);
	wipe_free(authz);
	headers[slot] = NULL;
	if (rc < 0 || resp->status != 401 || had)
		return rc;
	authz = auth_for(s, ix, req->url, 1);
	if (!authz)
		return rc;
	eb_http_response_release(resp);
	headers[slot] = authz;
	rc = eb_http_request(s->http, req, resp, err);
	wipe_free(authz);
	headers[slot] = NULL;
	return rc;
}

/* ---- fetching project pages ---------------------------------------------- */

static int status_error(struct eb_error **err, long status, const char *what, const char *url)
{
	eb_autofree char *shown = eb_index_redact_url(url);

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
static int fetch_http(struct eb_index_set *s, const struct index_entry *ix, const char *norm,
		      struct eb_index_page *out, struct eb_error **err)
{
	eb_autofree char *url = eb_xasprintf("%s/%s/", ix->base, norm);
	const char *headers[3] = { "Accept: " EB_INDEX_ACCEPT, NULL, NULL };
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
		rc = parse_typed(out, eb_http_response_header(&resp, "Content-Type"), resp.body.ptr,
				 resp.body.len, resp.url ? resp.url : url, s->max_page, err);
		if (rc < 0)
			eb_error_wrap(err, "%s", what);
	}
	eb_http_response_release(&resp);
	return rc;
}

static int fetch_tree(struct eb_index_set *s, const struct index_entry *ix, const char *norm,
		      struct eb_index_page *out, struct eb_error **err)
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
			pass_error(err, e);
			return rc;
		}
		{
			eb_autofree char *slashed = eb_xasprintf("%s/", dir);
			page_url = file_url_from_path(slashed);
		}
		rc = parse_typed(out, forms[i].type, b.ptr, b.len, page_url, s->max_page, err);
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

	if (!ends_with_ci(filename, ".whl"))
		return NULL;
	for (const char *c = filename; *c; c++)
		dashes += *c == '-';
	if ((dashes != 4 && dashes != 5) || !eb_pep503_valid(filename, n))
		return NULL;
	return eb_pep503_normalize(filename, n);
}

static int fetch_wheel_dir(const struct index_entry *ix, const char *norm,
			   struct eb_index_page *out, struct eb_error **err)
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
		qsort(names, n, sizeof(*names), cmp_strp);

	memset(out, 0, sizeof(*out));
	out->index = -1;
	out->format = EB_INDEX_FMT_DIR;
	out->kind = EB_INDEX_WHEEL_DIR;
	out->api_major = 1;
	{
		eb_autofree char *slashed = eb_xasprintf("%s/", ix->root);
		out->url = file_url_from_path(slashed);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		eb_autofree char *path = eb_path_join(ix->root, names[i]);
		char digest[EB_DIGEST_STR_LEN + 1];
		struct eb_index_file *f;
		uint64_t size = 0;
		struct stat st;

		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue; /* a dangling link or a directory named *.whl */
		rc = eb_sha256_file(path, digest, &size, err);
		if (rc < 0)
			break;
		f = page_new_file(out);
		f->filename = eb_xstrdup(names[i]);
		f->url = file_url_from_path(path);
		f->size = (int64_t)size;
		if (hashes_add(&f->hashes, "sha256", 6, eb_digest_hex(digest), EB_SHA256_HEX_LEN))
			abort(); /* our own digest */
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc < 0 || out->nfiles == 0) {
		eb_index_page_release(out);
		return rc < 0 ? rc : 1;
	}
	return 0;
}

static int fetch_one(struct eb_index_set *s, size_t i, const char *norm,
		     struct eb_index_page *out, struct eb_error **err)
{
	const struct index_entry *ix = &s->items[i];
	int rc;

	memset(out, 0, sizeof(*out));
	out->index = -1;
	switch (ix->kind) {
	case EB_INDEX_HTTP:
		rc = fetch_http(s, ix, norm, out, err);
		break;
	case EB_INDEX_FILE_TREE:
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

int eb_index_fetch_project(struct eb_index_set *s, size_t i, const char *project,
			   struct eb_index_page *out, struct eb_error **err)
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

int eb_index_set_project(struct eb_index_set *s, const char *project, struct eb_index_page *out,
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
	const struct algo *a;
	char *hex; /* lower-case (owned) */
};

/* A digest computed while the bytes stream by. */
struct hasher {
	const struct algo *a;
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
		const EVP_MD *md = EVP_get_digestbyname(hs[i].a->evp);
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
		for (unsigned int j = 0; j < len; j++) {
			hs[i].hex[2 * j] = "0123456789abcdef"[raw[j] >> 4];
			hs[i].hex[2 * j + 1] = "0123456789abcdef"[raw[j] & 15];
		}
		hs[i].hex[2 * len] = '\0';
	}
	hashers_release(hs, n);
	return 0;
}

static const char *hasher_hex(const struct hasher *hs, size_t n, const struct algo *a)
{
	for (size_t i = 0; i < n; i++)
		if (hs[i].a == a)
			return hs[i].hex;
	return NULL;
}

static void hasher_want(struct hasher *hs, size_t *n, const struct algo *a)
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
static char *local_file(const struct eb_index_page *page, const char *url, const char *shown,
			struct eb_error **err)
{
	char *path;

	if (page->kind == EB_INDEX_HTTP) {
		eb_error_set(err, EB_EINVALID,
			     "refusing '%s': a file url on a page from an http index", shown);
		return NULL;
	}
	path = file_url_path(url);
	if (!path)
		eb_error_set(err, EB_EINVALID, "'%s' is not a local file url", shown);
	return path;
}

static const struct index_entry *page_entry(const struct eb_index_set *s,
					    const struct eb_index_page *page)
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
static int feed_once(struct eb_index_set *s, const struct eb_index_page *page,
		     const struct eb_index_file *f, struct sink *k, int *retry,
		     struct eb_error **err)
{
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	const char *headers[2] = { NULL, NULL };
	eb_autofree char *what = NULL;
	int rc;

	*retry = 0;
	if (url_is_file(f->url)) {
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

int eb_index_download(struct eb_index_set *s, const struct eb_index_page *page,
		      const struct eb_index_file *f, struct eb_blobstore *bs,
		      const char *const *required, char digest_out[EB_DIGEST_STR_LEN + 1],
		      struct eb_error **err)
{
	const struct algo *sha256 = algo_find("sha256");
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
	shown = eb_index_redact_url(f->url);

	for (const char *const *r = required; r && *r; r++)
		nreq++;
	req = eb_xcalloc(nreq + 1, sizeof(*req));
	for (size_t i = 0; i < nreq; i++) {
		const char *colon = strchr(required[i], ':');
		eb_autofree char *a = colon ? eb_xstrndup(required[i], (size_t)(colon - required[i]))
					    : eb_xstrdup(required[i]);
		struct eb_index_hashes one = { 0 };
		const char *why = "expected <algo>:<hex>";

		for (char *c = a; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		req[i].a = algo_find(a);
		if (colon && req[i].a && (strcmp(a, "sha256") == 0 || strcmp(a, "sha384") == 0 ||
					  strcmp(a, "sha512") == 0))
			why = hashes_add(&one, a, strlen(a), colon + 1, strlen(colon + 1));
		else if (colon)
			why = "only sha256, sha384 and sha512 are accepted";
		if (why) {
			hashes_release(&one);
			rc = eb_error_set(err, EB_EINVALID, "required hash '%s:...' for '%s' is not "
					  "usable: %s", a, f->filename, why);
			goto done;
		}
		req[i].hex = eb_steal_ptr(&one.items[0].hex);
		hashes_release(&one);
	}
	strong = nreq > 0;

	idx = eb_xcalloc(f->hashes.n + 1, sizeof(*idx));
	for (size_t i = 0; i < f->hashes.n; i++) {
		const struct algo *a = algo_find(f->hashes.items[i].algo);
		if (!a || !EVP_get_digestbyname(a->evp))
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
		pass_error(err, e);
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

int eb_index_fetch_metadata(struct eb_index_set *s, const struct eb_index_page *page,
			    const struct eb_index_file *f, struct eb_buf *out,
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
	url = metadata_url(f->url);
	shown = eb_index_redact_url(url);
	what = eb_xasprintf("fetching the metadata of '%s'", f->filename);
	eb_buf_init(&body, s->max_metadata);

	if (url_is_file(url)) {
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
		const struct eb_index_hash *h = &f->core_metadata_hashes.items[i];
		const struct algo *a = algo_find(h->algo);
		char got[129];
		if (!a || digest_hex(a, body.ptr, body.len, got) < 0)
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
