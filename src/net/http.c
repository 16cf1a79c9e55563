/*
 * http.c - the HTTP layer over libcurl: endpoints and TLS trust, the
 * plain-http policy, manual redirects, the 401 round trip through the
 * client's auth hooks,
 * retries with backoff, size caps and streamed bodies (see http.h).
 * TLS trust and CA bundles are http_tls.c.
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

#define DEFAULT_ATTEMPTS 5
#define DEFAULT_BACKOFF_MS 500L
#define DEFAULT_BACKOFF_MAX_MS 30000L
#define DEFAULT_RETRY_BUDGET_MS 600000L
#define DEFAULT_CONNECT_TIMEOUT_MS 30000L
#define DEFAULT_LOW_SPEED_TIME_S 60L
/* A transfer may take DEADLINE_BASE plus its size at MIN_SPEED: a server
 * trickling a blob a few bytes at a time cannot hold a job for hours. */
#define DEFAULT_DEADLINE_BASE_S 120L
#define DEFAULT_MIN_SPEED 65536L
#define DEFAULT_MAX_BODY (1024 * 1024)
/* Bodies up to this size are sent without "Expect: 100-continue". */
#define SMALL_BODY (64 * 1024)

/* ---- small helpers --------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Split "name", "name:port", "[v6]", "[v6]:port" or a bare v6 literal into
 * the bare host (brackets removed) and the port part ("" if none). */
static void split_hostport(const char *hp, char **host, const char **port)
{
	const char *colon;

	if (hp[0] == '[') {
		const char *close = strchr(hp, ']');
		if (close) {
			*host = eb_xstrndup(hp + 1, (size_t)(close - hp - 1));
			*port = close[1] == ':' ? close + 2 : "";
			return;
		}
	}
	colon = strchr(hp, ':');
	if (colon && strchr(colon + 1, ':')) { /* bare IPv6 */
		*host = eb_xstrdup(hp);
		*port = "";
		return;
	}
	*host = colon ? eb_xstrndup(hp, (size_t)(colon - hp)) : eb_xstrdup(hp);
	*port = colon ? colon + 1 : "";
}

int eb_http_host_is_loopback(const char *hostport)
{
	eb_autofree char *host = NULL;
	const char *port;
	struct in_addr a4;
	struct in6_addr a6;

	if (!hostport || !*hostport)
		return 0;
	split_hostport(hostport, &host, &port);
	if (strcasecmp(host, "localhost") == 0 || ends_with_ci(host, ".localhost"))
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

char *eb_http_registry_host(const char *registry)
{
	if (strcasecmp(registry, "docker.io") == 0 || strcasecmp(registry, "index.docker.io") == 0)
		return eb_xstrdup("registry-1.docker.io");
	return eb_xstrdup(registry);
}

/* The settings for hostport: an exact "host:port" entry, else an entry
 * naming the bare host. */
const struct reg_conf *eb_http__find_reg(const struct eb_http_client *c, const char *hostport)
{
	eb_autofree char *host = NULL;
	const char *port;
	const struct reg_conf *bare = NULL;

	split_hostport(hostport, &host, &port);
	for (size_t i = 0; i < c->nregs; i++) {
		if (strcasecmp(c->regs[i].host, hostport) == 0)
			return &c->regs[i];
		if (!bare && strcasecmp(c->regs[i].host, host) == 0)
			bare = &c->regs[i];
	}
	return bare;
}

int eb_http_plain_allowed(const struct eb_http_client *c, const char *hostport)
{
	const struct reg_conf *r;

	if (eb_http_host_is_loopback(hostport))
		return 1;
	r = c ? eb_http__find_reg(c, hostport) : NULL;
	return r && r->insecure;
}

static int host_listed(struct eb_http_client *c, char *const *list, const size_t *n,
		       const char *hostport)
{
	int found = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < *n && !found; i++)
		found = strcasecmp(list[i], hostport) == 0;
	pthread_mutex_unlock(&c->lock);
	return found;
}

static int plain_known(struct eb_http_client *c, const char *hostport)
{
	return host_listed(c, c->plain_hosts, &c->nplain, hostport);
}

static int tls_known(struct eb_http_client *c, const char *hostport)
{
	return host_listed(c, c->tls_hosts, &c->ntls, hostport);
}

static void plain_remember(struct eb_http_client *c, const char *hostport)
{
	if (plain_known(c, hostport))
		return;
	pthread_mutex_lock(&c->lock);
	EB_ALLOC_GROW(c->plain_hosts, c->nplain + 1, c->plain_cap);
	c->plain_hosts[c->nplain++] = eb_xstrdup(hostport);
	pthread_mutex_unlock(&c->lock);
}

static void tls_remember(struct eb_http_client *c, const char *hostport)
{
	if (tls_known(c, hostport))
		return;
	pthread_mutex_lock(&c->lock);
	EB_ALLOC_GROW(c->tls_hosts, c->ntls + 1, c->tls_cap);
	c->tls_hosts[c->ntls++] = eb_xstrdup(hostport);
	pthread_mutex_unlock(&c->lock);
}

/* ---- URLs ------------------------------------------------------------ */

static void url_parts_release(struct url_parts *p)
{
	curl_free(p->scheme);
	curl_free(p->host);
	curl_free(p->port);
	free(p->hostport);
	memset(p, 0, sizeof(*p));
}

static int url_split(struct url_parts *out, const char *url)
{
	CURLU *u = curl_url();
	char *dport = NULL;
	int ok;

	memset(out, 0, sizeof(*out));
	if (!u)
		return -1;
	ok = curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	     curl_url_get(u, CURLUPART_SCHEME, &out->scheme, 0) == CURLUE_OK &&
	     curl_url_get(u, CURLUPART_HOST, &out->host, 0) == CURLUE_OK &&
	     curl_url_get(u, CURLUPART_PORT, &dport, CURLU_DEFAULT_PORT) == CURLUE_OK;
	if (ok && curl_url_get(u, CURLUPART_PORT, &out->port, 0) != CURLUE_OK)
		out->port = NULL;
	curl_url_cleanup(u);
	if (!ok) {
		curl_free(dport);
		url_parts_release(out);
		return -1;
	}
	for (char *s = out->scheme; *s; s++)
		*s = (char)tolower((unsigned char)*s);
	out->port_num = strtol(dport, NULL, 10);
	curl_free(dport);
	out->hostport = out->port ? eb_xasprintf("%s:%s", out->host, out->port)
				  : eb_xstrdup(out->host);
	return 0;
}

static int same_origin(const struct url_parts *a, const struct url_parts *b)
{
	return strcmp(a->scheme, b->scheme) == 0 && strcasecmp(a->host, b->host) == 0 &&
	       a->port_num == b->port_num;
}

char *eb_http_url_resolve(const char *base, const char *ref)
{
	CURLU *u = curl_url();
	char *s = NULL, *out = NULL;

	if (!u)
		return NULL;
	/* A relative ref is resolved against the URL already in the handle. */
	if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
		out = eb_xstrdup(s);
	curl_free(s);
	curl_url_cleanup(u);
	return out;
}

char *eb_http_url_display(const char *url)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *path = NULL, *out;

	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
			port = NULL;
		if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
			path = NULL;
		out = eb_xasprintf("%s%s%s%s", host, port ? ":" : "", port ? port : "",
				   path && strcmp(path, "/") ? path : "");
	} else {
		out = eb_xstrdup("(invalid url)");
	}
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(u);
	return out;
}

/* ---- client ---------------------------------------------------------- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
	struct eb_http_client *c = ud;
	(void)h;
	(void)access;
	pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
	struct eb_http_client *c = ud;
	(void)h;
	pthread_mutex_unlock(&c->share_locks[data]);
}

int eb_http_client_new(struct eb_http_client **out, const struct eb_http_options *opts,
		       struct eb_error **err)
{
	static const struct eb_http_options defaults;
	struct eb_http_client *c;
	const char *certs_d;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return eb_error_set(err, EB_EFAIL, "cannot initialise libcurl: %s",
				    curl_easy_strerror(global_rc));

	c = eb_xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->probe_lock, NULL);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&c->share_locks[i], NULL);
	c->share = curl_share_init();
	if (!c->share) {
		eb_http_client_free(c);
		return eb_error_set(err, EB_EFAIL, "cannot create a libcurl share handle");
	}
	curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);

	c->ca_file = opts->ca_file ? eb_xstrdup(opts->ca_file) : NULL;
	certs_d = opts->certs_d ? opts->certs_d : getenv("ENVBUILD_CERTS_D");
	c->certs_d = certs_d && *certs_d ? eb_xstrdup(certs_d) : NULL;
	c->user_agent = eb_xstrdup(opts->user_agent ? opts->user_agent
						   : "envbuild/" ENVBUILD_VERSION);
	if (opts->nregistries) {
		c->regs = eb_xcalloc(opts->nregistries, sizeof(*c->regs));
		for (size_t i = 0; i < opts->nregistries; i++) {
			const struct eb_http_registry *r = &opts->registries[i];
			if (!r->host)
				continue;
			c->regs[c->nregs].host = eb_http_registry_host(r->host);
			c->regs[c->nregs].ca_file = r->ca_file ? eb_xstrdup(r->ca_file) : NULL;
			c->regs[c->nregs].insecure = r->insecure;
			c->nregs++;
		}
	}
	c->max_attempts = opts->max_attempts > 0
				  ? opts->max_attempts
				  : (int)eb_env_long("ENVBUILD_HTTP_ATTEMPTS", DEFAULT_ATTEMPTS);
	c->backoff_ms = opts->backoff_ms > 0 ? opts->backoff_ms
					     : eb_env_long("ENVBUILD_HTTP_BACKOFF_MS", DEFAULT_BACKOFF_MS);
	c->backoff_max_ms = opts->backoff_max_ms > 0 ? opts->backoff_max_ms : DEFAULT_BACKOFF_MAX_MS;
	c->retry_budget_ms = opts->retry_budget_ms > 0 ? opts->retry_budget_ms
						       : DEFAULT_RETRY_BUDGET_MS;
	c->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
							     : DEFAULT_CONNECT_TIMEOUT_MS;
	c->low_speed_time_s = opts->low_speed_time_s > 0 ? opts->low_speed_time_s
							 : DEFAULT_LOW_SPEED_TIME_S;
	c->deadline_base_s = opts->deadline_base_s > 0
				     ? opts->deadline_base_s
				     : eb_env_long("ENVBUILD_HTTP_DEADLINE_S", DEFAULT_DEADLINE_BASE_S);
	c->min_speed = opts->min_speed > 0 ? opts->min_speed
					   : eb_env_long("ENVBUILD_HTTP_MIN_SPEED", DEFAULT_MIN_SPEED);
	if (c->deadline_base_s < 1)
		c->deadline_base_s = DEFAULT_DEADLINE_BASE_S;
	if (c->min_speed < 1)
		c->min_speed = DEFAULT_MIN_SPEED;
	c->auth = opts->auth;
	*out = c;
	return 0;
}

void eb_http_client_free(struct eb_http_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npool; i++)
		curl_easy_cleanup(c->pool[i]);
	if (c->share)
		curl_share_cleanup(c->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&c->share_locks[i]);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->probe_lock);
	for (size_t i = 0; i < c->nplain; i++)
		free(c->plain_hosts[i]);
	free(c->plain_hosts);
	for (size_t i = 0; i < c->ntls; i++)
		free(c->tls_hosts[i]);
	free(c->tls_hosts);
	for (size_t i = 0; i < c->nblobs; i++) {
		free(c->blobs[i].key);
		free(c->blobs[i].pem);
		X509_STORE_free(c->blobs[i].store);
	}
	free(c->blobs);
	for (size_t i = 0; i < c->nregs; i++) {
		free(c->regs[i].host);
		free(c->regs[i].ca_file);
	}
	free(c->regs);
	free(c->ca_file);
	free(c->certs_d);
	free(c->user_agent);
	free(c);
}

char *eb_http_scope(const char *repository, int push)
{
	return eb_xasprintf("repository:%s:%s", repository, push ? "pull,push" : "pull");
}

static CURL *handle_get(struct eb_http_client *c)
{
	CURL *h = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->npool)
		h = c->pool[--c->npool];
	pthread_mutex_unlock(&c->lock);
	if (!h) {
		h = curl_easy_init();
		if (!h)
			abort(); /* only fails on out-of-memory */
	}
	return h;
}

static void handle_put(struct eb_http_client *c, CURL *h)
{
	pthread_mutex_lock(&c->lock);
	if (c->npool < POOL_MAX) {
		c->pool[c->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (h)
		curl_easy_cleanup(h);
}

/* ---- one transfer ---------------------------------------------------- */

struct xfer {
	const struct eb_http_request *req; /* method and body kind may differ
					    * from the caller's after a 303 */
	struct eb_http_response *resp;
	size_t max_body;
	uint64_t body_pos;
	uint64_t body_size;
	int too_big;
	int body_failed;
	int cb_rc;
	struct eb_error *cb_err;
	char errbuf[CURL_ERROR_SIZE];
	/* the deadline (on_progress) */
	const struct eb_http_client *c;
	long start_ms;
	uint64_t deadline_size, deadline_done;
	long deadline_ms;
	int deadline_hit;
};

static void headers_clear(struct eb_http_response *r)
{
	for (size_t i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	r->headers = NULL;
	r->nheaders = 0;
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return eb_xstrndup(s, n);
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	struct eb_http_response *r = x->resp;
	size_t len = size * nmemb, n = len;
	const char *colon;

	while (n && (p[n - 1] == '\r' || p[n - 1] == '\n'))
		n--;
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		/* A new answer (after 100 Continue, say) replaces the last. */
		const char *sp = memchr(p, ' ', n);
		headers_clear(r);
		eb_buf_truncate(&r->body, 0);
		r->status = 0;
		if (sp && (size_t)(sp - p) + 4 <= n && isdigit((unsigned char)sp[1]) &&
		    isdigit((unsigned char)sp[2]) && isdigit((unsigned char)sp[3]))
			r->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
		return len;
	}
	if (n == 0)
		return len;
	if ((p[0] == ' ' || p[0] == '\t') && r->nheaders) {
		/* obsolete line folding: continue the last value */
		struct eb_http_header *h = &r->headers[r->nheaders - 1];
		eb_autofree char *more = trim_dup(p, n);
		char *joined = eb_xasprintf("%s %s", h->value, more);
		free(h->value);
		h->value = joined;
		return len;
	}
	colon = memchr(p, ':', n);
	if (!colon)
		return len;
	r->headers = eb_xreallocarray(r->headers, r->nheaders + 1, sizeof(*r->headers));
	r->headers[r->nheaders].name = trim_dup(p, (size_t)(colon - p));
	r->headers[r->nheaders].value = trim_dup(colon + 1, n - (size_t)(colon + 1 - p));
	r->nheaders++;
	return len;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	struct eb_http_response *r = x->resp;
	size_t len = size * nmemb;
	int ok2xx = r->status >= 200 && r->status < 300;

	if (ok2xx && x->req->on_data) {
		int rc = x->req->on_data(x->req->data_userdata, p, len, &x->cb_err);
		if (rc < 0) {
			x->cb_rc = rc;
			return 0; /* aborts the transfer */
		}
		r->streamed += len;
		return len;
	}
	if (ok2xx) {
		if (r->body.len + len > x->max_body) {
			x->too_big = 1;
			return 0;
		}
		if (eb_buf_add(&r->body, p, len) < 0)
			return 0;
		return len;
	}
	/* Error bodies are only for messages: keep the start. */
	if (r->body.len < EB_HTTP_ERROR_BODY_MAX) {
		size_t take = EB_HTTP_ERROR_BODY_MAX - r->body.len;
		if (eb_buf_add(&r->body, p, take < len ? take : len) < 0)
			return 0;
	}
	return len;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	const struct eb_http_request *req = x->req;
	size_t want = size * nmemb;

	switch (req->body_kind) {
	case EB_HTTP_BODY_MEM: {
		size_t left = req->body_len - (size_t)x->body_pos;
		if (want > left)
			want = left;
		memcpy(buf, (const char *)req->body + x->body_pos, want);
		x->body_pos += want;
		return want;
	}
	case EB_HTTP_BODY_FILE: {
		uint64_t left = req->body_length - x->body_pos;
		ssize_t got;
		if ((uint64_t)want > left)
			want = (size_t)left;
		if (want == 0)
			return 0;
		do
			got = pread(req->body_fd, buf, want, (off_t)(req->body_offset + x->body_pos));
		while (got < 0 && errno == EINTR);
		if (got <= 0) {
			/* a read error, or the file is shorter than promised */
			x->body_failed = got < 0 ? errno : -1;
			return CURL_READFUNC_ABORT;
		}
		x->body_pos += (uint64_t)got;
		return (size_t)got;
	}
	case EB_HTTP_BODY_STREAM: {
		size_t got = req->body_read(req->body_userdata, buf, want);
		if (got == (size_t)-1 || got > want) {
			x->body_failed = -2;
			return CURL_READFUNC_ABORT;
		}
		x->body_pos += got;
		return got;
	}
	case EB_HTTP_BODY_NONE:
		break;
	}
	return 0;
}

/* libcurl rewinds the body when it has to send it again on the same
 * handle (a reused connection that turned out dead). */
static int on_seek(void *ud, curl_off_t offset, int origin)
{
	struct xfer *x = ud;

	if (x->req->body_kind == EB_HTTP_BODY_STREAM || origin != SEEK_SET)
		return CURL_SEEKFUNC_CANTSEEK;
	if (offset < 0 || (uint64_t)offset > x->body_size)
		return CURL_SEEKFUNC_FAIL;
	x->body_pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static int is_auth_header(const char *h)
{
	return strncasecmp(h, "Authorization:", 14) == 0;
}

/* Run one transfer of req to url.  Returns 0 with *cc the libcurl result,
 * or a negative code for failures that are not the network's (the
 * caller's callback, the size cap, the request body). */
/* The per-transfer deadline: DEADLINE_BASE plus the size (the largest of
 * what the caller expects, the request body, what the server announced and
 * what has moved) at MIN_SPEED.
 * Also where an interrupt stops a transfer that would otherwise run on. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct xfer *x = ud;
	uint64_t size = x->req->expected_size;
	long limit, elapsed = now_ms() - x->start_ms;

	if (eb_interrupted())
		return 1;
	/* the largest size known; with none announced (a chunked body) the
	 * bytes moved so far, so a fast transfer of unknown length is never
	 * cut off while a trickle still is */
	if (x->body_size > size)
		size = x->body_size;
	if (dltotal > 0 && (uint64_t)dltotal > size)
		size = (uint64_t)dltotal;
	if (ultotal > 0 && (uint64_t)ultotal > size)
		size = (uint64_t)ultotal;
	if (dlnow > 0 && (uint64_t)dlnow > size)
		size = (uint64_t)dlnow;
	if (ulnow > 0 && (uint64_t)ulnow > size)
		size = (uint64_t)ulnow;
	limit = x->c->deadline_base_s * 1000 + (long)(size / (uint64_t)x->c->min_speed) * 1000;
	if (elapsed <= limit)
		return 0;
	x->deadline_hit = 1;
	x->deadline_ms = limit;
	x->deadline_size = size;
	x->deadline_done = (uint64_t)(dlnow > 0 ? dlnow : 0) + (uint64_t)(ulnow > 0 ? ulnow : 0);
	return 1;
}

static int transfer(struct eb_http_client *c, const struct eb_http_request *req, const char *url,
		    const struct url_parts *up, const char *authz, int drop_auth,
		    struct eb_http_response *resp, CURLcode *cc, char *errbuf,
		    struct eb_error **err)
{
	struct xfer x = { 0 };
	struct tls_conf tls;
	struct curl_slist *hdrs = NULL;
	eb_autofree char *auth_line = NULL;
	CURL *h;
	int rc = 0;

	x.req = req;
	x.resp = resp;
	x.c = c;
	x.start_ms = now_ms();
	x.max_body = req->max_body ? req->max_body : DEFAULT_MAX_BODY;
	*cc = CURLE_OK;
	errbuf[0] = '\0';
	x.body_size = req->body_kind == EB_HTTP_BODY_MEM    ? req->body_len
		      : req->body_kind == EB_HTTP_BODY_FILE ? req->body_length
							    : 0;
	resp->status = 0;
	headers_clear(resp);
	eb_buf_truncate(&resp->body, 0);
	free(resp->url);
	resp->url = eb_xstrdup(url);

	h = handle_get(c);
	curl_easy_reset(h);
	/* certs.d is read for https only: a plain registry has no use for it */
	if (strcmp(up->scheme, "https") == 0)
		eb_http__tls_conf_for(c, up, &tls);
	else
		memset(&tls, 0, sizeof(tls));

	curl_easy_setopt(h, CURLOPT_SHARE, c->share);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x.errbuf);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, c->min_speed < 1024 ? c->min_speed : 1024L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->low_speed_time_s);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
	if (req->timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	/* Never send loopback traffic to a proxy from the environment. */
	if (eb_http_host_is_loopback(up->hostport))
		curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);

	if (strcmp(req->method, "HEAD") == 0) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (req->body_kind != EB_HTTP_BODY_NONE || strcmp(req->method, "PUT") == 0 ||
		   strcmp(req->method, "POST") == 0 || strcmp(req->method, "PATCH") == 0) {
		/* Upload mode for every method with a body: it reads through
		 * our callbacks, sends Content-Length (0 for bodiless POSTs,
		 * which registries want) and adds no Content-Type. */
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		if (strcmp(req->method, "PUT") != 0)
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, &x);
		curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(h, CURLOPT_SEEKDATA, &x);
		/* An unknown size makes libcurl send HTTP/1.1 bodies
		 * chunked (HTTP/2 frames them anyway). */
		if (req->body_kind == EB_HTTP_BODY_STREAM) {
			curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)-1);
		} else {
			curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x.body_size);
		}
	} else if (strcmp(req->method, "GET") == 0) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	}

	for (const char *const *hp = req->headers; hp && *hp; hp++) {
		if (drop_auth && is_auth_header(*hp))
			continue;
		hdrs = curl_slist_append(hdrs, *hp);
	}
	if (authz) {
		auth_line = eb_xasprintf("Authorization: %s", authz);
		hdrs = curl_slist_append(hdrs, auth_line);
	}
	/* A small body (a manifest, a tag) goes with the headers: waiting
	 * for "100 Continue" would cost a round trip per PUT, to save
	 * sending a few KiB that a refusal throws away. */
	if (req->body_kind == EB_HTTP_BODY_MEM && req->body_len <= SMALL_BODY)
		hdrs = curl_slist_append(hdrs, "Expect:");
	if (hdrs)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

	if (strcmp(up->scheme, "https") == 0) {
		struct curl_blob blob;
		X509_STORE *store = NULL;
		rc = eb_http__ca_blob_for(c, h, &tls, &blob, &store, err);
		if (rc < 0)
			goto out;
		if (store) {
			/* libcurl loads nothing; each connection's SSL_CTX gets
			 * the client's store (reference-counted, read-only) */
			curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
			curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
			curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, eb_http__use_store);
			curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, store);
		} else if (tls.n) {
			curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
		}
		if (tls.client_cert) {
			curl_easy_setopt(h, CURLOPT_SSLCERT, tls.client_cert);
			curl_easy_setopt(h, CURLOPT_SSLKEY, tls.client_key);
		}
	}

	*cc = curl_easy_perform(h);
	x.errbuf[CURL_ERROR_SIZE - 1] = '\0';
	memcpy(errbuf, x.errbuf, CURL_ERROR_SIZE);

	if (x.deadline_hit) {
		/* not retried: a server this slow would only be slow again */
		eb_autofree char *m = eb_http_url_display(url);
		rc = eb_error_set(err, EB_EFAIL,
				  "transfer from '%s' is too slow: %llu of %llu bytes after %ld s "
				  "(allowed: %ld s plus the size at %ld bytes/s)",
				  m, (unsigned long long)x.deadline_done,
				  (unsigned long long)x.deadline_size, x.deadline_ms / 1000,
				  c->deadline_base_s, c->min_speed);
		eb_error_hint(err, "ENVBUILD_HTTP_MIN_SPEED and ENVBUILD_HTTP_DEADLINE_S set the "
			      "limits");
	} else if (x.cb_rc < 0) {
		rc = x.cb_rc;
		if (x.cb_err) {
			if (err && !*err)
				*err = eb_steal_ptr(&x.cb_err);
		} else {
			eb_error_set(err, -rc, "receiving the body of '%s' failed", up->hostport);
		}
	} else if (x.too_big) {
		eb_autofree char *m = eb_http_url_display(url);
		rc = eb_error_set(err, EB_ETOOBIG, "response from '%s' is larger than %zu bytes", m,
				  x.max_body);
	} else if (x.body_failed) {
		if (x.body_failed > 0)
			rc = eb_error_set_errno(err, EB_EIO, x.body_failed,
						"cannot read the request body for '%s'", up->hostport);
		else if (x.body_failed == -1)
			rc = eb_error_set(err, EB_EIO,
					  "request body for '%s' ended after %llu of %llu bytes",
					  up->hostport, (unsigned long long)x.body_pos,
					  (unsigned long long)x.body_size);
		else
			rc = eb_error_set(err, EB_EIO, "reading the request body for '%s' failed",
					  up->hostport);
	}
out:
	eb_error_free(x.cb_err);

	curl_slist_free_all(hdrs);
	if (auth_line)
		OPENSSL_cleanse(auth_line, strlen(auth_line));
	/* The handle points at our stack; unhook before pooling it. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	handle_put(c, h);
	eb_http__tls_conf_release(&tls);
	return rc;
}

/* ---- what a registry speaks ----------------------------------------- */

/* A host where plain http is allowed (loopback, or configured insecure)
 * may speak either.  Find out once per client with a TLS handshake alone
 * (CONNECT_ONLY: no request, no credentials, nothing but a ClientHello is
 * sent) that loads no CA store: under OpenSSL 3 loading the system bundle
 * costs tens of ms of CPU, which an https attempt against a plain
 * registry used to pay on every run just to learn that it is plain.  The
 * certificate is checked by the real request, never here, and the probe
 * shares nothing with the client (no TLS session is kept).  A handshake
 * that fails the way a plain-http server makes it fail marks the host
 * plain; a handshake that succeeds marks it TLS; anything else (no
 * answer) decides nothing, and the request goes out over https with its
 * fallback as before. */
static void probe_scheme(struct eb_http_client *c, const char *endpoint)
{
	eb_autofree char *url = eb_xasprintf("https://%s/", endpoint);
	struct url_parts u = { 0 };
	struct tls_conf tls;
	CURLcode cc;
	CURL *h;

	pthread_mutex_lock(&c->probe_lock);
	if (plain_known(c, endpoint) || tls_known(c, endpoint) || url_split(&u, url) < 0)
		goto out;
	h = curl_easy_init();
	if (!h)
		goto out;
	eb_http__tls_conf_for(c, &u, &tls);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(h, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
	curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	if (eb_http_host_is_loopback(u.hostport))
		curl_easy_setopt(h, CURLOPT_PROXY, "");
	if (tls.client_cert) {
		/* a registry that wants a client certificate must not look
		 * plain for want of one */
		curl_easy_setopt(h, CURLOPT_SSLCERT, tls.client_cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, tls.client_key);
	}
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK)
		tls_remember(c, endpoint);
	else if (cc == CURLE_SSL_CONNECT_ERROR)
		plain_remember(c, endpoint);
	curl_easy_cleanup(h);
	eb_http__tls_conf_release(&tls);
out:
	url_parts_release(&u);
	pthread_mutex_unlock(&c->probe_lock);
}

/* ---- the request loop ------------------------------------------------ */

static int retryable_status(long s)
{
	return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

static int retryable_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

static int is_redirect(long s)
{
	return s == 301 || s == 302 || s == 303 || s == 307 || s == 308;
}

long eb_http_parse_retry_after(const char *value, time_t now)
{
	const char *p = value;
	time_t t;

	if (!value)
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (isdigit((unsigned char)*p)) {
		char *end;
		unsigned long long secs;
		errno = 0;
		secs = strtoull(p, &end, 10);
		while (*end == ' ' || *end == '\t')
			end++;
		if (*end)
			return -1;
		if (errno || secs > 86400ULL * 7)
			secs = 86400ULL * 7;
		return (long)(secs * 1000);
	}
	t = curl_getdate(p, NULL);
	if (t == (time_t)-1)
		return -1;
	return t <= now ? 0 : (long)(t - now) * 1000L;
}

/* Exponential backoff with jitter: a random wait in [d/2, d] where d
 * doubles per retry, or what Retry-After asked for; capped either way. */
long eb_http_backoff(long base_ms, long max_ms, unsigned doublings, long retry_after_ms)
{
	long d = base_ms;
	unsigned int r = 0;

	if (retry_after_ms >= 0)
		return retry_after_ms < max_ms ? retry_after_ms : max_ms;
	for (unsigned i = 0; i < doublings && d < max_ms; i++)
		d *= 2;
	if (d > max_ms)
		d = max_ms;
	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = 0;
	return d / 2 + (d > 1 ? (long)(r % (unsigned long)(d / 2 + 1)) : 0);
}

static long backoff_delay(const struct eb_http_client *c, unsigned retry, long retry_after_ms)
{
	return eb_http_backoff(c->backoff_ms, c->backoff_max_ms, retry, retry_after_ms);
}

static char *join_header(const struct eb_http_response *r, const char *name)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < r->nheaders; i++) {
		if (strcasecmp(r->headers[i].name, name) != 0)
			continue;
		if (b.len && eb_buf_adds(&b, ", ") < 0)
			break;
		if (eb_buf_adds(&b, r->headers[i].value) < 0)
			break;
	}
	if (!b.len) {
		eb_buf_release(&b);
		return NULL;
	}
	return eb_buf_detach(&b, NULL);
}

static int curl_failure(struct eb_error **err, CURLcode cc, const char *errbuf, const char *url,
			const char *hostport, const struct eb_http_response *resp)
{
	const char *why = errbuf && *errbuf ? errbuf : curl_easy_strerror(cc);
	eb_autofree char *m = eb_http_url_display(url);
	eb_autofree char *tries = resp->retries ? eb_xasprintf(" (after %u attempts)",
							       resp->retries + 1)
						: eb_xstrdup("");

	if (resp->streamed)
		return eb_error_set(err, EB_ENET, "download from '%s' broke off after %llu bytes: %s",
				    m, (unsigned long long)resp->streamed, why);
	switch (cc) {
	case CURLE_PEER_FAILED_VERIFICATION:
		return eb_error_set(err, EB_ENET,
				    "TLS certificate of '%s' is not trusted: %s; add its CA with "
				    "--ca-file or certs.d",
				    hostport, why);
	case CURLE_SSL_CACERT_BADFILE:
		return eb_error_set(err, EB_EIO, "cannot load CA certificates for '%s': %s",
				    hostport, why);
	case CURLE_SSL_CONNECT_ERROR:
		return eb_error_set(err, EB_ENET, "TLS handshake with '%s' failed: %s%s", hostport,
				    why, tries);
	case CURLE_COULDNT_RESOLVE_HOST:
		return eb_error_set(err, EB_ENET, "cannot resolve host '%s'", hostport);
	case CURLE_COULDNT_CONNECT:
		return eb_error_set(err, EB_ENET, "cannot connect to '%s': %s%s", hostport, why,
				    tries);
	case CURLE_OPERATION_TIMEDOUT:
		return eb_error_set(err, EB_ENET, "request to '%s' timed out: %s%s", m, why, tries);
	default:
		return eb_error_set(err, EB_ENET, "request to '%s' failed: %s%s", m, why, tries);
	}
}

/* NULL-terminated scope list for the request (at most two entries). */
static void build_scopes(const struct eb_http_request *req, char *scopes[3])
{
	size_t n = 0;

	scopes[0] = scopes[1] = scopes[2] = NULL;
	/* The scope with push goes first: some registries only look at the
	 * first one. */
	if (req->repository)
		scopes[n++] = eb_http_scope(req->repository, req->push);
	if (req->mount_from && (!req->repository || strcmp(req->mount_from, req->repository)))
		scopes[n++] = eb_http_scope(req->mount_from, 0);
}

static int validate_request(const struct eb_http_request *req, struct eb_error **err)
{
	static const char *const methods[] = { "GET", "HEAD", "PUT", "POST", "PATCH", "DELETE" };
	int known = 0;

	if (!req->method || !req->url)
		return eb_error_set(err, EB_EINVALID, "http request without a method or url");
	for (size_t i = 0; i < sizeof(methods) / sizeof(*methods); i++)
		known |= strcmp(req->method, methods[i]) == 0;
	if (!known)
		return eb_error_set(err, EB_EINVALID, "unsupported http method '%s'", req->method);
	if (req->body_kind == EB_HTTP_BODY_MEM && req->body_len && !req->body)
		return eb_error_set(err, EB_EINVALID, "http request body missing");
	if (req->body_kind == EB_HTTP_BODY_FILE && req->body_fd < 0)
		return eb_error_set(err, EB_EINVALID, "http request body file missing");
	if (req->body_kind == EB_HTTP_BODY_STREAM && !req->body_read)
		return eb_error_set(err, EB_EINVALID, "http request body reader missing");
	if (!req->registry && req->url[0] == '/')
		return eb_error_set(err, EB_EINVALID, "relative url '%s' without a registry",
				    req->url);
	return 0;
}

static int check_policy(const struct eb_http_client *c, const struct url_parts *u,
			struct eb_error **err)
{
	if (strcmp(u->scheme, "https") == 0)
		return 0;
	if (strcmp(u->scheme, "http") != 0)
		return eb_error_set(err, EB_EINVALID, "unsupported url scheme '%s' for '%s'",
				    u->scheme, u->hostport);
	if (!eb_http_plain_allowed(c, u->hostport))
		return eb_error_set(err, EB_EINVALID,
				    "refusing plain http to '%s': only loopback hosts and registries "
				    "configured as insecure may use it",
				    u->hostport);
	return 0;
}

int eb_http_request(struct eb_http_client *c, const struct eb_http_request *req_in,
		    struct eb_http_response *resp, struct eb_error **err)
{
	struct eb_http_request req = *req_in;
	struct url_parts reg = { 0 }, first = { 0 }, cur = { 0 };
	char *scopes[3] = { NULL, NULL, NULL };
	eb_autofree char *url = NULL;
	eb_autofree char *endpoint = NULL;
	eb_autofree char *https_error = NULL;
	char *authz = NULL;
	char errbuf[CURL_ERROR_SIZE];
	long start = now_ms();
	unsigned redirects = 0, auth_rounds = 0;
	int fallback_ok = 0, fell_back = 0;
	int rc;

	memset(resp, 0, sizeof(*resp));
	eb_buf_init(&resp->body, 0);
	rc = validate_request(&req, err);
	if (rc < 0)
		return rc;

	if (req.registry) {
		int plain;
		endpoint = eb_http_registry_host(req.registry);
		plain = plain_known(c, endpoint);
		if (!plain && req.url[0] == '/' && eb_http_plain_allowed(c, endpoint) &&
		    !tls_known(c, endpoint)) {
			probe_scheme(c, endpoint);
			plain = plain_known(c, endpoint);
		}
		url = eb_xasprintf("%s://%s", plain ? "http" : "https", endpoint);
		if (url_split(&reg, url) < 0) {
			rc = eb_error_set(err, EB_EINVALID, "invalid registry name '%s'",
					  req.registry);
			goto done;
		}
		if (req.url[0] == '/') {
			char *full = eb_xasprintf("%s%s", url, req.url);
			free(url);
			url = full;
			/* A loopback or insecure registry may turn out to
			 * speak plain http: try https first. */
			fallback_ok = !plain && eb_http_plain_allowed(c, endpoint);
		} else {
			free(url);
			url = eb_xstrdup(req.url);
		}
		build_scopes(&req, scopes);
		rc = c->auth.prepare ? c->auth.prepare(c->auth.state, c, req.registry,
						       (const char *const *)scopes, &authz, err)
				     : 0;
		if (rc < 0)
			goto done;
	} else {
		url = eb_xstrdup(req.url);
	}
	if (url_split(&first, url) < 0) {
		rc = eb_error_set(err, EB_EINVALID, "invalid url '%s'", req.url);
		goto done;
	}

	for (;;) {
		CURLcode cc;
		int to_registry, rewindable;
		long status, wait;

		url_parts_release(&cur);
		if (url_split(&cur, url) < 0) {
			eb_autofree char *m = eb_http_url_display(url);
			rc = eb_error_set(err, EB_ENET, "invalid redirect url '%s'", m);
			goto done;
		}
		rc = check_policy(c, &cur, err);
		if (rc < 0)
			goto done;
		to_registry = req.registry && same_origin(&cur, &reg);
		rewindable = req.body_kind != EB_HTTP_BODY_STREAM;

		rc = transfer(c, &req, url, &cur, to_registry ? authz : NULL,
			      !same_origin(&cur, &first), resp, &cc, errbuf, err);
		resp->attempts++;
		if (rc < 0)
			goto done;

		if (cc != CURLE_OK) {
			if (fallback_ok && !fell_back && cc == CURLE_SSL_CONNECT_ERROR &&
			    redirects == 0) {
				char *plain_url = eb_xasprintf("http://%s", url + strlen("https://"));
				https_error = eb_xstrdup(*errbuf ? errbuf : curl_easy_strerror(cc));
				free(url);
				url = plain_url;
				fell_back = 1;
				url_parts_release(&reg);
				url_split(&reg, url);
				url_parts_release(&first);
				url_split(&first, url);
				continue;
			}
			if (fell_back && resp->status == 0 && https_error) {
				/* Plain http did not work either: the https
				 * error is the one that explains it. */
				rc = curl_failure(err, CURLE_SSL_CONNECT_ERROR, https_error, url,
						  cur.hostport, resp);
				goto done;
			}
			wait = backoff_delay(c, resp->retries, -1);
			if (retryable_curl(cc) && !req.no_retry && rewindable && !resp->streamed &&
			    (int)resp->retries + 1 < c->max_attempts &&
			    now_ms() - start + wait <= c->retry_budget_ms) {
				eb_sleep_ms(wait);
				resp->retries++;
				continue;
			}
			rc = curl_failure(err, cc, errbuf, url, cur.hostport, resp);
			goto done;
		}
		if (fell_back) {
			plain_remember(c, endpoint);
			fell_back = 0;
			fallback_ok = 0;
		}
		status = resp->status;

		if (is_redirect(status) && eb_http_response_header(resp, "Location")) {
			char *next = eb_http_url_resolve(url, eb_http_response_header(resp, "Location"));
			if (!next) {
				eb_autofree char *m = eb_http_url_display(url);
				rc = eb_error_set(err, EB_ENET, "invalid redirect from '%s'", m);
				goto done;
			}
			if (++redirects > EB_HTTP_MAX_REDIRECTS) {
				eb_autofree char *m = eb_http_url_display(req_in->url[0] == '/' ? url : req_in->url);
				free(next);
				rc = eb_error_set(err, EB_ENET, "too many redirects for '%s'", m);
				goto done;
			}
			/* 303 always, and 301/302 after a POST, turn into a
			 * GET without a body (what browsers and libcurl do);
			 * 307/308 repeat the request, body included. */
			if ((status == 303 && strcmp(req.method, "HEAD")) ||
			    ((status == 301 || status == 302) && strcmp(req.method, "POST") == 0)) {
				req.method = "GET";
				req.body_kind = EB_HTTP_BODY_NONE;
			} else if (req.body_kind == EB_HTTP_BODY_STREAM) {
				free(next);
				break; /* cannot send the body again */
			}
			free(url);
			url = next;
			continue;
		}

		if (status == 401 && to_registry && auth_rounds < 2 && rewindable) {
			eb_autofree char *www = join_header(resp, "WWW-Authenticate");
			char *next = NULL;
			rc = c->auth.challenged
				     ? c->auth.challenged(c->auth.state, c, req.registry,
							  (const char *const *)scopes, www, &next, err)
				     : 0;
			if (rc < 0)
				goto done;
			/* The same credentials again would get the same 401. */
			if (next && !(authz && strcmp(next, authz) == 0)) {
				if (authz)
					OPENSSL_cleanse(authz, strlen(authz));
				free(authz);
				authz = next;
				auth_rounds++;
				continue;
			}
			if (next)
				OPENSSL_cleanse(next, strlen(next));
			free(next);
		}

		if (retryable_status(status) && !req.no_retry && rewindable) {
			long ra = eb_http_parse_retry_after(eb_http_response_header(resp, "Retry-After"),
							    time(NULL));
			wait = backoff_delay(c, resp->retries, ra);
			if ((int)resp->retries + 1 < c->max_attempts &&
			    now_ms() - start + wait <= c->retry_budget_ms) {
				eb_sleep_ms(wait);
				resp->retries++;
				continue;
			}
		}
		break;
	}
	rc = 0;

done:
	if (authz) {
		OPENSSL_cleanse(authz, strlen(authz));
		free(authz);
	}
	for (int i = 0; i < 3; i++)
		free(scopes[i]);
	url_parts_release(&reg);
	url_parts_release(&first);
	url_parts_release(&cur);
	return rc;
}

/* ---- responses ------------------------------------------------------- */

const char *eb_http_response_header(const struct eb_http_response *r, const char *name)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

void eb_http_response_release(struct eb_http_response *r)
{
	if (!r)
		return;
	headers_clear(r);
	eb_buf_release(&r->body);
	free(r->url);
	memset(r, 0, sizeof(*r));
}

/* Copy s for a one-line message: control characters become spaces and
 * long text is cut. */
static char *one_line(const char *s, size_t max)
{
	size_t n = strlen(s);
	char *out;

	if (n > max)
		n = max;
	out = eb_xstrndup(s, n);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return out;
}

int eb_http_response_error(const struct eb_http_response *r, const char *what,
			   struct eb_error **err)
{
	eb_autofree char *detail = NULL;
	json_t *doc = NULL;
	int code;
	int rc;

	if (r->body.len && r->body.ptr[0] == '{') {
		doc = json_loadb(r->body.ptr, r->body.len, 0, NULL);
		json_t *e0 = json_array_get(json_object_get(doc, "errors"), 0);
		const char *ecode = json_string_value(json_object_get(e0, "code"));
		const char *emsg = json_string_value(json_object_get(e0, "message"));
		if (ecode || emsg) {
			eb_autofree char *c1 = one_line(ecode ? ecode : "", 64);
			eb_autofree char *m1 = one_line(emsg ? emsg : "", 200);
			detail = eb_xasprintf(": %s%s%s", c1, *c1 && *m1 ? ": " : "", m1);
		}
		json_decref(doc);
	}
	switch (r->status) {
	case 404:
		code = EB_ENOTFOUND;
		break;
	case 401:
	case 403:
		code = EB_EFAIL;
		break;
	case 413:
		code = EB_ETOOBIG;
		break;
	default:
		code = EB_ENET;
		break;
	}
	rc = eb_error_set(err, code, "%s: registry answered %ld%s", what ? what : "request",
			  r->status, detail ? detail : "");
	if (r->status == 401 || r->status == 403)
		eb_error_hint(err, "check the credentials for this registry (docker login, "
				   "$REGISTRY_AUTH_FILE or $DOCKER_CONFIG)");
	return rc;
}
