/*
 * http_tls.c - the TLS trust of the HTTP layer (see http.h): which extra
 * CA files a host gets (the client's, the registry's, the certs.d
 * directories of containers and Docker), and the CA bundle built from them
 * with the system's, parsed once per client and shared by every
 * connection.  Verification itself is libcurl's and is never switched
 * off.  The rest of the HTTP layer is http.c (http_internal.h between
 * them).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "net/http.h"
#include "net/http_internal.h"
#include "util/alloc.h"
#include "util/sys.h"
#include "util/fs.h"
#include "util/interrupt.h"

static const char *const certs_d_roots[] = { "/etc/containers/certs.d", "/etc/docker/certs.d" };

/* ---- TLS trust ------------------------------------------------------- */

void eb_http__tls_conf_release(struct tls_conf *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->ca_files[i]);
	free(t->ca_files);
	free(t->client_cert);
	free(t->client_key);
	memset(t, 0, sizeof(*t));
}

static void tls_add_ca(struct tls_conf *t, char *path)
{
	EB_ALLOC_GROW(t->ca_files, t->n + 2, t->cap);
	t->ca_files[t->n++] = path;
	t->ca_files[t->n] = NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* certs.d/<hostport>/: every *.crt is a CA (as containers and Docker
 * read them); a *.cert with a matching *.key is a client certificate. */
static void tls_scan_certs_d(struct tls_conf *t, const char *root, const char *hostport)
{
	eb_autofree char *dir = eb_path_join(root, hostport);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		EB_ALLOC_GROW(names, n + 1, cap);
		names[n++] = eb_xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		eb_sort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		if (len > 4 && strcmp(names[i] + len - 4, ".crt") == 0) {
			tls_add_ca(t, eb_path_join(dir, names[i]));
		} else if (len > 5 && strcmp(names[i] + len - 5, ".cert") == 0 && !t->client_cert) {
			eb_autofree char *key = eb_xasprintf("%s/%.*s.key", dir, (int)(len - 5),
							     names[i]);
			if (access(key, R_OK) == 0) {
				t->client_cert = eb_path_join(dir, names[i]);
				t->client_key = eb_steal_ptr(&key);
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void eb_http__tls_conf_for(struct eb_http_client *c, const struct url_parts *u, struct tls_conf *t)
{
	const struct reg_conf *r = eb_http__find_reg(c, u->hostport);

	memset(t, 0, sizeof(*t));
	if (c->ca_file)
		tls_add_ca(t, eb_xstrdup(c->ca_file));
	if (r && r->ca_file)
		tls_add_ca(t, eb_xstrdup(r->ca_file));
	if (c->certs_d)
		tls_scan_certs_d(t, c->certs_d, u->hostport);
	for (size_t i = 0; i < sizeof(certs_d_roots) / sizeof(*certs_d_roots); i++)
		tls_scan_certs_d(t, certs_d_roots[i], u->hostport);
}

/* The system CA bundle libcurl would use. */
static char *system_bundle_path(CURL *h)
{
	static const char *const known[] = {
		"/etc/ssl/certs/ca-certificates.crt", /* Debian, Alpine, Arch */
		"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
		"/etc/ssl/ca-bundle.pem",	      /* openSUSE */
		"/etc/ssl/cert.pem",		      /* macOS, BSDs */
	};
#if LIBCURL_VERSION_NUM >= 0x075400
	char *p = NULL;
	if (curl_easy_getinfo(h, CURLINFO_CAINFO, &p) == CURLE_OK && p && access(p, R_OK) == 0)
		return eb_xstrdup(p);
#else
	(void)h;
#endif
	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (access(known[i], R_OK) == 0)
			return eb_xstrdup(known[i]);
	return NULL;
}

/* Append the certificates of a PEM file, failing when it has none (a
 * wrong path or a key file given as a CA should not pass silently). */
static int add_pem_file(struct eb_buf *b, const char *path, struct eb_error **err)
{
	struct eb_buf text;
	BIO *bio;
	X509 *x;
	int count = 0, rc;

	eb_buf_init(&text, 0);
	rc = eb_fs_read_file(&text, path, 64 * 1024 * 1024, err);
	if (rc < 0) {
		eb_buf_release(&text);
		return eb_error_wrap(err, "cannot load CA certificates");
	}
	bio = BIO_new_mem_buf(text.ptr, (int)text.len);
	while (bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		X509_free(x);
		count++;
	}
	BIO_free(bio);
	if (!count) {
		eb_buf_release(&text);
		return eb_error_set(err, EB_EINVALID, "no PEM certificates in CA file '%s'", path);
	}
	rc = eb_buf_add(b, text.ptr, text.len);
	if (rc == 0)
		rc = eb_buf_adds(b, "\n");
	eb_buf_release(&text);
	return rc < 0 ? eb_error_set(err, EB_ETOOBIG, "CA file '%s' is too big", path) : 0;
}

/* The CA bundle for a host with extra CAs: the system bundle plus them.
 * libcurl's CURLOPT_CAINFO_BLOB replaces CURLOPT_CAINFO, so the system
 * bundle has to be part of it; bundles are built once per client. */
/* 1 when libcurl's TLS is OpenSSL's, whose SSL_CTX a callback may give
 * a shared certificate store. */
static int tls_openssl(void)
{
	const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);

	return v && v->ssl_version && strncmp(v->ssl_version, "OpenSSL/", 8) == 0;
}

CURLcode eb_http__use_store(CURL *h, void *sslctx, void *store)
{
	(void)h;
	SSL_CTX_set1_cert_store(sslctx, store);
	return CURLE_OK;
}

/* A store of the certificates in pem, with libcurl's default flags
 * (intermediates in a CA file are trust anchors), or NULL. */
static X509_STORE *store_from_pem(const char *pem, size_t len)
{
	X509_STORE *st = X509_STORE_new();
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	X509 *x;

	if (!st || !bio) {
		X509_STORE_free(st);
		BIO_free(bio);
		return NULL;
	}
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		(void)X509_STORE_add_cert(st, x); /* a duplicate is no error */
		X509_free(x);
	}
	ERR_clear_error();
	BIO_free(bio);
	X509_STORE_set_flags(st, X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_TRUSTED_FIRST);
	return st;
}

int eb_http__ca_blob_for(struct eb_http_client *c, CURL *h, const struct tls_conf *t,
		struct curl_blob *out, X509_STORE **store, struct eb_error **err)
{
	struct eb_buf key, pem;
	eb_autofree char *sys = NULL;
	int rc = 0;

	eb_buf_init(&key, 0);
	if (eb_buf_adds(&key, "system\n") < 0)
		abort();
	for (size_t i = 0; i < t->n; i++)
		if (eb_buf_adds(&key, t->ca_files[i]) < 0 || eb_buf_addc(&key, '\n') < 0)
			abort();
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nblobs; i++) {
		if (strcmp(c->blobs[i].key, key.ptr) == 0) {
			out->data = c->blobs[i].pem;
			out->len = c->blobs[i].len;
			out->flags = CURL_BLOB_NOCOPY;
			*store = c->blobs[i].store;
			pthread_mutex_unlock(&c->lock);
			eb_buf_release(&key);
			return 0;
		}
	}
	pthread_mutex_unlock(&c->lock);

	eb_buf_init(&pem, 0);
	sys = system_bundle_path(h);
	if (sys && add_pem_file(&pem, sys, NULL) < 0)
		eb_buf_truncate(&pem, 0); /* no usable system bundle: CAPATH still applies */
	for (size_t i = 0; i < t->n && rc == 0; i++)
		rc = add_pem_file(&pem, t->ca_files[i], err);
	if (rc < 0) {
		eb_buf_release(&pem);
		eb_buf_release(&key);
		return rc;
	}
	pthread_mutex_lock(&c->lock);
	EB_ALLOC_GROW(c->blobs, c->nblobs + 1, c->blobs_cap);
	c->blobs[c->nblobs].key = eb_buf_detach(&key, NULL);
	c->blobs[c->nblobs].pem = eb_buf_detach(&pem, &c->blobs[c->nblobs].len);
	c->blobs[c->nblobs].store = c->blobs[c->nblobs].len && tls_openssl()
					    ? store_from_pem(c->blobs[c->nblobs].pem,
							     c->blobs[c->nblobs].len)
					    : NULL;
	out->data = c->blobs[c->nblobs].pem;
	out->len = c->blobs[c->nblobs].len;
	out->flags = CURL_BLOB_NOCOPY;
	*store = c->blobs[c->nblobs].store;
	c->nblobs++;
	pthread_mutex_unlock(&c->lock);
	return 0;
}
