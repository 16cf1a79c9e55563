/*
 * http_internal.h - what http.c (the client, transfers, the request loop)
 * shares with http_tls.c (TLS trust and CA bundles): the client struct,
 * a parsed URL and the TLS calls a transfer makes.  Not an API: only
 * those two files include it.
 *
 * Layering (core floor): net/ may use util/ only.
 */
#ifndef EB_NET_HTTP_INTERNAL_H
#define EB_NET_HTTP_INTERNAL_H

#include <curl/curl.h>
#include <openssl/x509.h>
#include <pthread.h>

#include "net/http.h"

/* Idle easy handles kept for reuse; more than this are cleaned up. */
#define POOL_MAX 16

struct reg_conf {
	char *host; /* normalised with eb_http_registry_host() */
	char *ca_file;
	int insecure;
};

struct ca_blob {
	char *key; /* the extra CA files, '\n'-separated */
	char *pem;
	size_t len;
	/* the same certificates parsed once, shared by every connection
	 * (libcurl with OpenSSL): parsing the system bundle costs tens of
	 * ms of CPU under OpenSSL 3, which every new connection of every
	 * upload thread paid */
	X509_STORE *store;
};

struct eb_http_client {
	/* DNS and TLS sessions are shared between all handles.  Connections
	 * are not put into the share: libcurl does not support using a
	 * shared connection pool from concurrent threads.  Each pooled easy
	 * handle keeps its own live connections instead, and handles go back
	 * to the pool after a request, so a thread doing request after
	 * request reuses its connections. */
	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
	pthread_mutex_t lock; /* pool, plain_hosts and tls_hosts */
	CURL *pool[POOL_MAX];
	size_t npool;
	/* registry hosts that turned out to speak plain http, and those
	 * (where plain http is allowed) found to speak TLS: asked once per
	 * client, which is once per process for a command */
	char **plain_hosts;
	size_t nplain, plain_cap;
	char **tls_hosts;
	size_t ntls, tls_cap;
	/* one probe at a time: threads starting together wait for the
	 * answer instead of each probing */
	pthread_mutex_t probe_lock;
	/* CA bundles built for hosts with extra CAs, by list of files */
	struct ca_blob *blobs;
	size_t nblobs, blobs_cap;

	char *ca_file;
	char *certs_d;
	char *user_agent;
	struct reg_conf *regs;
	size_t nregs;
	int max_attempts;
	long backoff_ms, backoff_max_ms, retry_budget_ms, connect_timeout_ms, low_speed_time_s;
	struct eb_http_auth auth;
	long deadline_base_s, min_speed;
};

struct url_parts {
	char *scheme;   /* lower-case */
	char *host;     /* IPv6 in brackets, as libcurl gives it */
	char *port;     /* explicit port or NULL */
	long port_num;  /* explicit or the scheme's default */
	char *hostport; /* "host" or "host:port" as written in references */
};

struct tls_conf {
	char **ca_files; /* extra CAs for the host, NULL-terminated */
	size_t n, cap;
	char *client_cert, *client_key;
};

int eb_http__ca_blob_for(struct eb_http_client *c, CURL *h, const struct tls_conf *t,
		struct curl_blob *out, X509_STORE **store, struct eb_error **err);
const struct reg_conf *eb_http__find_reg(const struct eb_http_client *c, const char *hostport);
void eb_http__tls_conf_for(struct eb_http_client *c, const struct url_parts *u, struct tls_conf *t);
void eb_http__tls_conf_release(struct tls_conf *t);
CURLcode eb_http__use_store(CURL *h, void *sslctx, void *store);

#endif
