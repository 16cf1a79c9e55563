/*
 * check_http.c - the registry HTTP layer against a scripted loopback
 * registry (tests/unit/servers/registry.py): retries and Retry-After, cut
 * connections, redirects that must drop Authorization, Basic and Bearer
 * auth (scope order, token cache and expiry, insufficient_scope, OAuth2),
 * TLS trust (untrusted, CA file, certs.d), the plain-http policy, size caps,
 * request bodies from memory, file regions and streams, and threads.
 */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "registry/auth.h"
#include "net/http.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "testutil.h"

/* ---- the test server ------------------------------------------------- */

struct srv {
	pid_t pid;
	int port;
	int in_fd; /* the server exits when this closes */
	char host[64]; /* "127.0.0.1:<port>" */
};

static char *server_script(void)
{
	const char *top = getenv("top_srcdir");
	char *p = eb_xasprintf("%s/tests/unit/servers/registry.py", top && *top ? top : ".");
	ck_assert_msg(access(p, R_OK) == 0, "cannot find %s (set top_srcdir)", p);
	return p;
}

/* Start the server with extra arguments (NULL-terminated). */
static void srv_start(struct srv *s, ...)
{
	const char *argv[32];
	int n = 0;
	char *script = server_script();
	va_list ap;

	argv[n++] = "python3";
	argv[n++] = script;
	va_start(ap, s);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 30;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;

	s->port = eb_test_spawn_server(argv, &s->pid, &s->in_fd);
	free(script);
	snprintf(s->host, sizeof(s->host), "127.0.0.1:%d", s->port);
}

static void srv_stop(struct srv *s)
{
	close(s->in_fd);
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static struct eb_auth *anon_auth(void)
{
	struct eb_auth_options ao = { 0 };
	ao.anonymous = 1; /* never read the developer's docker config */
	return eb_auth_new(&ao);
}

static struct eb_http_client *mkclient(struct eb_http_options *o, struct eb_auth *auth)
{
	struct eb_http_options def = { 0 };
	struct eb_http_client *c = NULL;
	struct eb_error *err = NULL;

	if (!o)
		o = &def;
	if (!o->backoff_ms)
		o->backoff_ms = 1;
	if (auth)
		o->auth = eb_auth_http_hooks(auth);
	ck_assert_int_eq(eb_http_client_new(&c, o, &err), 0);
	ck_assert_ptr_null(err);
	return c;
}

/* GET path on the server's registry; asserts success of the call. */
static void get_ok(struct eb_http_client *c, const struct srv *s, const char *path,
		   struct eb_http_response *resp)
{
	struct eb_http_request req = { 0 };
	struct eb_error *err = NULL;
	int rc;

	req.method = "GET";
	req.registry = s->host;
	req.url = path;
	req.repository = "r";
	rc = eb_http_request(c, &req, resp, &err);
	ck_assert_msg(rc == 0, "GET %s failed: %s", path, err ? err->msg : "?");
}

static json_t *srv_stats(const struct srv *s)
{
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	char url[128];
	json_t *j;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_stats", s->port);
	req.method = "GET";
	req.url = url;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	j = json_loadb(resp.body.ptr, resp.body.len, 0, NULL);
	ck_assert_ptr_nonnull(j);
	eb_http_response_release(&resp);
	eb_http_client_free(c);
	eb_auth_free(a);
	return j;
}

static long count_of(json_t *stats, const char *path)
{
	return (long)json_integer_value(json_object_get(json_object_get(stats, "requests"), path));
}

static json_t *tokens_of(json_t *stats)
{
	return json_object_get(stats, "tokens");
}

static void set_creds(struct eb_auth *a, const char *registry, const char *user,
		      const char *pass)
{
	struct eb_auth_creds cr = { 0 };
	cr.username = (char *)user;
	cr.password = (char *)pass;
	eb_auth_set_credentials(a, registry, &cr);
}

/* ---- pure functions -------------------------------------------------- */

START_TEST(test_retry_after_parse)
{
	time_t now = curl_getdate("Wed, 21 Oct 2015 07:28:00 GMT", NULL);

	ck_assert_int_eq(eb_http_parse_retry_after("5", now), 5000);
	ck_assert_int_eq(eb_http_parse_retry_after(" 7 ", now), 7000);
	ck_assert_int_eq(eb_http_parse_retry_after("0", now), 0);
	ck_assert_int_eq(eb_http_parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now), 10000);
	ck_assert_int_eq(eb_http_parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), 0);
	ck_assert_int_eq(eb_http_parse_retry_after("abc", now), -1);
	ck_assert_int_eq(eb_http_parse_retry_after("", now), -1);
	ck_assert_int_eq(eb_http_parse_retry_after("-1", now), -1);
	ck_assert_int_eq(eb_http_parse_retry_after("5s", now), -1);
	ck_assert_int_eq(eb_http_parse_retry_after(NULL, now), -1);
	/* absurd values are capped rather than overflowing */
	ck_assert_int_eq(eb_http_parse_retry_after("99999999999999999999", now),
			 86400L * 7 * 1000);
}
END_TEST

/* The one backoff of http.c's retries and the registry's upload recovery:
 * Retry-After wins (capped), else base doubled, capped, with jitter. */
START_TEST(test_backoff)
{
	ck_assert_int_eq(eb_http_backoff(500, 30000, 3, 1234), 1234);
	ck_assert_int_eq(eb_http_backoff(500, 30000, 0, 90000), 30000);
	ck_assert_int_eq(eb_http_backoff(500, 30000, 0, 0), 0);
	for (int i = 0; i < 200; i++) {
		long d0 = eb_http_backoff(500, 30000, 0, -1);
		long d3 = eb_http_backoff(500, 30000, 3, -1);
		long dmax = eb_http_backoff(500, 30000, 40, -1);
		ck_assert(d0 >= 250 && d0 <= 500);
		ck_assert(d3 >= 2000 && d3 <= 4000);
		ck_assert(dmax >= 15000 && dmax <= 30000);
	}
	ck_assert_int_eq(eb_http_backoff(1, 30000, 0, -1), 0);
}
END_TEST

START_TEST(test_url_resolve)
{
	static const struct {
		const char *base, *ref, *want;
	} cases[] = {
		{ "https://h:5000/v2/x/blobs/uploads/", "/v2/x/blobs/uploads/u1?_state=abc",
		  "https://h:5000/v2/x/blobs/uploads/u1?_state=abc" },
		{ "https://h/v2/x/blobs/uploads/", "u2?_state=q", "https://h/v2/x/blobs/uploads/u2?_state=q" },
		{ "https://h/v2/x/blobs/uploads/", "https://other.example/up/1?sig=z",
		  "https://other.example/up/1?sig=z" },
		{ "http://127.0.0.1:5000/v2/", "//localhost:5000/y", "http://localhost:5000/y" },
	};
	char *got;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		got = eb_http_url_resolve(cases[i].base, cases[i].ref);
		ck_assert_ptr_nonnull(got);
		ck_assert_str_eq(got, cases[i].want);
		free(got);
	}
	ck_assert_ptr_null(eb_http_url_resolve("not a url", "/x"));

	got = eb_http_url_display("https://user:pw@bucket.example:8443/a/b?X-Amz-Signature=s#f");
	ck_assert_str_eq(got, "bucket.example:8443/a/b");
	free(got);
	got = eb_http_url_display("https://ghcr.io/");
	ck_assert_str_eq(got, "ghcr.io");
	free(got);
}
END_TEST

START_TEST(test_loopback_and_hosts)
{
	static const struct {
		const char *host;
		int loop;
	} cases[] = {
		{ "localhost", 1 },	   { "localhost:5000", 1 }, { "LOCALHOST", 1 },
		{ "reg.localhost:80", 1 }, { "127.0.0.1", 1 },	    { "127.1.2.3:5000", 1 },
		{ "[::1]:5000", 1 },	   { "::1", 1 },	    { "[::1]", 1 },
		{ "128.0.0.1", 0 },	   { "10.0.0.1:5000", 0 },  { "localhost.evil.com", 0 },
		{ "registry.invalid", 0 }, { "[::2]:80", 0 },	    { "", 0 },
		{ "127.0.0.1.nip.io", 0 },
	};
	char *h;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		ck_assert_msg(eb_http_host_is_loopback(cases[i].host) == cases[i].loop, "%s",
			      cases[i].host);
	h = eb_http_registry_host("docker.io");
	ck_assert_str_eq(h, "registry-1.docker.io");
	free(h);
	h = eb_http_registry_host("index.docker.io");
	ck_assert_str_eq(h, "registry-1.docker.io");
	free(h);
	h = eb_http_registry_host("ghcr.io");
	ck_assert_str_eq(h, "ghcr.io");
	free(h);
}
END_TEST

START_TEST(test_insecure_config)
{
	struct eb_http_registry regs[] = {
		{ "registry.invalid", NULL, 1 },
		{ "other.invalid:5000", NULL, 1 },
		{ "docker.io", NULL, 1 },
	};
	struct eb_http_options o = { 0 };
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c;

	o.registries = regs;
	o.nregistries = 3;
	c = mkclient(&o, a);
	ck_assert_int_eq(eb_http_plain_allowed(c, "registry.invalid"), 1);
	ck_assert_int_eq(eb_http_plain_allowed(c, "registry.invalid:1234"), 1);
	ck_assert_int_eq(eb_http_plain_allowed(c, "other.invalid:5000"), 1);
	ck_assert_int_eq(eb_http_plain_allowed(c, "other.invalid:5001"), 0);
	ck_assert_int_eq(eb_http_plain_allowed(c, "registry-1.docker.io"), 1);
	ck_assert_int_eq(eb_http_plain_allowed(c, "ghcr.io"), 0);
	ck_assert_int_eq(eb_http_plain_allowed(c, "localhost:9"), 1);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_response_error)
{
	struct eb_http_response r;
	struct eb_error *err = NULL;
	const char *body = "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest "
			   "unknown\",\"detail\":{}}]}";

	memset(&r, 0, sizeof(r));
	eb_buf_init(&r.body, 0);
	ck_assert_int_eq(eb_buf_adds(&r.body, body), 0);
	r.status = 404;
	ck_assert_int_eq(eb_http_response_error(&r, "pulling 'x'", &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg,
			 "pulling 'x': registry answered 404: MANIFEST_UNKNOWN: manifest unknown");
	eb_error_clear(&err);

	eb_buf_truncate(&r.body, 0);
	ck_assert_int_eq(eb_buf_adds(&r.body, "<html>\nbad gateway</html>"), 0);
	r.status = 502;
	ck_assert_int_eq(eb_http_response_error(&r, "pushing 'y'", &err), -EB_ENET);
	ck_assert_str_eq(err->msg, "pushing 'y': registry answered 502");
	eb_error_clear(&err);

	r.status = 401;
	ck_assert_int_eq(eb_http_response_error(&r, "pushing 'y'", &err), -EB_EFAIL);
	ck_assert_ptr_nonnull(err->hint);
	eb_error_clear(&err);
	eb_http_response_release(&r);
}
END_TEST

/* ---- policy: no plain http to the world ------------------------------ */

START_TEST(test_plain_http_refused)
{
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;

	req.method = "GET";
	req.url = "http://registry.invalid/v2/";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EINVALID);
	/* refused by policy, before any name lookup or connection */
	ck_assert_ptr_nonnull(strstr(err->msg, "refusing plain http to 'registry.invalid'"));
	ck_assert_uint_eq(resp.attempts, 0);
	ck_assert_int_eq(resp.status, 0);
	eb_error_clear(&err);
	eb_http_response_release(&resp);

	/* the same through a registry request with an absolute Location */
	req.registry = "registry.invalid";
	req.url = "http://registry.invalid:5000/v2/x/blobs/uploads/1";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "refusing plain http"));
	ck_assert_uint_eq(resp.attempts, 0);
	eb_error_clear(&err);
	eb_http_response_release(&resp);

	/* other schemes are not ours to speak */
	req.registry = NULL;
	req.url = "ftp://127.0.0.1/x";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EINVALID);
	ck_assert_uint_eq(resp.attempts, 0);
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- retries ----------------------------------------------------------- */

START_TEST(test_retry_503_then_ok)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st;

	srv_start(&s, NULL);
	get_ok(c, &s, "/v2/r/retry503/x", &resp);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.retries, 2);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/retry503/x"), 3);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_retry_429_retry_after)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_response resp;
	struct timespec t0;
	long ms;
	json_t *st;

	o.backoff_max_ms = 5000;
	c = mkclient(&o, a);
	srv_start(&s, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	get_ok(c, &s, "/v2/r/retry429/x?ra=1", &resp);
	ms = elapsed_ms(&t0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.retries, 1);
	/* Retry-After: 1 was honoured rather than the 1 ms backoff (a lower
	 * bound only: a loaded machine or valgrind makes everything slower) */
	ck_assert_int_ge(ms, 950);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/retry429/x"), 2);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_retry_after_capped)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_response resp;

	/* Retry-After: 3600 capped at 50 ms: an uncapped wait runs into the
	 * test case's 30 s timeout (and run-tests' per-program limit under
	 * valgrind, where Check does not fork and has no timeout) */
	o.backoff_max_ms = 50;
	c = mkclient(&o, a);
	srv_start(&s, NULL);
	get_ok(c, &s, "/v2/r/retry429/y?ra=3600", &resp);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.retries, 1);
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_retry_exhausted)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_response resp;
	json_t *st;

	o.max_attempts = 3;
	c = mkclient(&o, a);
	srv_start(&s, NULL);
	/* the last answer is handed back; the caller makes the error */
	get_ok(c, &s, "/v2/r/always503/x", &resp);
	ck_assert_int_eq(resp.status, 503);
	ck_assert_uint_eq(resp.retries, 2);
	ck_assert_str_eq(resp.body.ptr, "unavailable");
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/always503/x"), 3);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_no_retry_flag)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;

	srv_start(&s, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/retry503/z";
	req.no_retry = 1;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 503);
	ck_assert_uint_eq(resp.retries, 0);
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_connection_refused_retried)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	char url[128];

	o.max_attempts = 3;
	c = mkclient(&o, a);
	/* a port that was free a moment ago */
	srv_start(&s, NULL);
	srv_stop(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v2/", s.port);
	req.method = "GET";
	req.url = url;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ENET);
	ck_assert_uint_eq(resp.retries, 2);
	ck_assert_ptr_nonnull(strstr(err->msg, "cannot connect to '127.0.0.1:"));
	ck_assert_ptr_nonnull(strstr(err->msg, "(after 3 attempts)"));
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- cut connections ----------------------------------------------------- */

static int check_pattern(const unsigned char *p, size_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)((off + i) % 251))
			return 0;
	return 1;
}

START_TEST(test_cut_buffered_retried)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st;

	srv_start(&s, NULL);
	get_ok(c, &s, "/v2/r/cut/a?times=1", &resp);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.body.len, 100000);
	ck_assert(check_pattern((unsigned char *)resp.body.ptr, 0, resp.body.len));
	ck_assert_uint_eq(resp.retries, 1);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/cut/a"), 2);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

struct sink {
	size_t n;
	int bad;
	int fail_at; /* return an error once this many bytes arrived (0: never) */
};

static int sink_data(void *ud, const void *data, size_t len, struct eb_error **err)
{
	struct sink *k = ud;
	if (!check_pattern(data, k->n, len))
		k->bad = 1;
	k->n += len;
	if (k->fail_at && k->n >= (size_t)k->fail_at)
		return eb_error_set(err, EB_EIO, "disk full (test)");
	return 0;
}

START_TEST(test_cut_streamed_reported)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	struct sink k = { 0 };
	json_t *st;

	srv_start(&s, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/cut/b?times=9";
	req.on_data = sink_data;
	req.data_userdata = &k;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "broke off after 1000 bytes"));
	ck_assert_uint_eq(resp.streamed, 1000);
	ck_assert_uint_eq(k.n, 1000);
	ck_assert_int_eq(k.bad, 0);
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	/* not retried: the bytes already went to the caller */
	ck_assert_int_eq(count_of(st, "/v2/r/cut/b"), 1);
	json_decref(st);

	/* a whole download through the callback */
	memset(&k, 0, sizeof(k));
	req.url = "/v2/r/cut/c?times=0";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(k.n, 100000);
	ck_assert_int_eq(k.bad, 0);
	ck_assert_uint_eq(resp.body.len, 0);
	eb_http_response_release(&resp);

	/* the callback's own error comes back as is */
	memset(&k, 0, sizeof(k));
	k.fail_at = 1;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EIO);
	ck_assert_str_eq(err->msg, "disk full (test)");
	eb_error_clear(&err);
	eb_http_response_release(&resp);

	/* a non-2xx body is not streamed */
	memset(&k, 0, sizeof(k));
	req.url = "/v2/r/missing";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 404);
	ck_assert_uint_eq(k.n, 0);
	ck_assert_ptr_nonnull(strstr(resp.body.ptr, "MANIFEST_UNKNOWN"));
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_size_cap)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;

	srv_start(&s, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/big";
	req.max_body = 1000;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(err->msg, "larger than 1000 bytes"));
	ck_assert_uint_eq(resp.retries, 0);
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	/* the default cap (1 MiB) also holds */
	req.max_body = 0;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ETOOBIG);
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	req.max_body = 3000000;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_uint_eq(resp.body.len, 2000000);
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_low_speed_timeout)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;

	/* the server sends 1 of 1000 bytes, waits 8 s and closes: a transfer
	 * that was not cut by the low-speed limit fails differently */
	o.low_speed_time_s = 1;
	o.max_attempts = 1;
	c = mkclient(&o, a);
	srv_start(&s, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/slow";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "timed out"));
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* A server trickling a body just fast enough for the low-speed limit is
 * stopped by the deadline (base + size at the minimum speed), with a
 * message that says so, and not retried. */
START_TEST(test_trickle_deadline)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;

	o.deadline_base_s = 1;
	o.min_speed = 100000; /* 100000 bytes: 1 s + 1 s */
	c = mkclient(&o, a);
	srv_start(&s, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/trickle";
	req.max_body = 200000;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EFAIL);
	ck_assert_msg(strstr(err->msg, "is too slow"), "%s", err->msg);
	/* the limits are named (the size seen depends on how far the slow
	 * transfer got, which under valgrind may be the TLS attempt) */
	ck_assert_msg(strstr(err->msg, "at 100000 bytes/s"), "%s", err->msg);
	ck_assert_uint_eq(resp.retries, 0);
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- plain-http fallback, headers, bodies -------------------------------- */

START_TEST(test_fallback_and_headers)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *j;

	srv_start(&s, NULL);
	/* a loopback registry: a TLS handshake alone finds it plain, and
	 * the request goes out once, over plain http */
	get_ok(c, &s, "/v2/r/echo", &resp);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.attempts, 1);
	ck_assert_str_eq(eb_http_response_header(&resp, "docker-content-digest"),
			 "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ck_assert_str_eq(eb_http_response_header(&resp, "LOCATION"),
			 "/v2/r/blobs/uploads/abc?_state=xyz");
	ck_assert_str_eq(eb_http_response_header(&resp, "Range"), "0-0");
	ck_assert_str_eq(eb_http_response_header(&resp, "OCI-Chunk-Min-Length"), "1024");
	ck_assert_str_eq(eb_http_response_header(&resp, "X-Multi"), "one");
	ck_assert_ptr_null(eb_http_response_header(&resp, "X-None"));
	ck_assert_ptr_nonnull(strstr(resp.url, "http://127.0.0.1:"));
	j = json_loadb(resp.body.ptr, resp.body.len, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "user_agent")),
			 "envbuild/" ENVBUILD_VERSION);
	json_decref(j);
	eb_http_response_release(&resp);
	/* remembered: no probe the second time */
	get_ok(c, &s, "/v2/r/echo", &resp);
	ck_assert_uint_eq(resp.attempts, 1);
	eb_http_response_release(&resp);
	{
		/* the server saw the two requests and nothing else */
		json_t *st = srv_stats(&s);
		ck_assert_int_eq(count_of(st, "/v2/r/echo"), 2);
		json_decref(st);
	}
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

static json_t *send_body(struct eb_http_client *c, const struct srv *s,
			 struct eb_http_request *req, long want_status)
{
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	json_t *j;
	int rc;

	req->registry = s->host;
	rc = eb_http_request(c, req, &resp, &err);
	ck_assert_msg(rc == 0, "%s failed: %s", req->method, err ? err->msg : "?");
	ck_assert_int_eq(resp.status, want_status);
	j = json_loadb(resp.body.ptr, resp.body.len, 0, NULL);
	ck_assert_ptr_nonnull(j);
	eb_http_response_release(&resp);
	return j;
}

struct stream_src {
	const char *data;
	size_t len, pos;
};

static size_t stream_read(void *ud, void *buf, size_t n)
{
	struct stream_src *s = ud;
	size_t take = s->len - s->pos < n ? s->len - s->pos : n;
	if (take > 7)
		take = 7; /* many small chunks */
	memcpy(buf, s->data + s->pos, take);
	s->pos += take;
	return take;
}

static void sha_hex(const void *p, size_t n, char out[EB_DIGEST_STR_LEN + 1])
{
	eb_sha256_digest(p, n, out);
}

START_TEST(test_upload_bodies)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	static const char *const ct[] = { "Content-Type: application/vnd.oci.image.manifest.v1+json",
					  NULL };
	char dg[EB_DIGEST_STR_LEN + 1];
	char *dir = eb_test_tmpdir();
	char path[4096];
	char *file_data = eb_xmalloc(50000);
	struct stream_src src = { "streamed body of unknown length", 31, 0 };
	json_t *j;
	int fd;

	srv_start(&s, NULL);

	/* memory body with a content type */
	req.method = "PUT";
	req.url = "/v2/r/manifests/v1";
	req.headers = ct;
	req.body_kind = EB_HTTP_BODY_MEM;
	req.body = "{\"schemaVersion\":2}";
	req.body_len = 19;
	j = send_body(c, &s, &req, 201);
	sha_hex(req.body, 19, dg);
	ck_assert_str_eq(json_string_value(json_object_get(j, "body_sha256")), eb_digest_hex(dg));
	ck_assert_str_eq(json_string_value(json_object_get(j, "content_length")), "19");
	ck_assert_str_eq(json_string_value(json_object_get(j, "content_type")),
			 "application/vnd.oci.image.manifest.v1+json");
	json_decref(j);

	/* a bodiless POST sends Content-Length: 0 and no form type */
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = "/v2/r/blobs/uploads/";
	j = send_body(c, &s, &req, 201);
	ck_assert_str_eq(json_string_value(json_object_get(j, "content_length")), "0");
	ck_assert(json_is_null(json_object_get(j, "content_type")));
	json_decref(j);

	/* a file region, with PATCH */
	for (size_t i = 0; i < 50000; i++)
		file_data[i] = (char)(i * 7);
	snprintf(path, sizeof(path), "%s/blob", dir);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, file_data, 50000), 50000);
	memset(&req, 0, sizeof(req));
	req.method = "PATCH";
	req.url = "/v2/r/blobs/uploads/abc?_state=x";
	req.body_kind = EB_HTTP_BODY_FILE;
	req.body_fd = fd;
	req.body_offset = 1000;
	req.body_length = 30000;
	j = send_body(c, &s, &req, 200);
	sha_hex(file_data + 1000, 30000, dg);
	ck_assert_str_eq(json_string_value(json_object_get(j, "body_sha256")), eb_digest_hex(dg));
	ck_assert_str_eq(json_string_value(json_object_get(j, "method")), "PATCH");
	ck_assert_str_eq(json_string_value(json_object_get(j, "query")), "_state=x");
	json_decref(j);

	/* a 503 on the first PUT: the file region is sent again in full */
	req.method = "PUT";
	req.url = "/v2/r/upload503once";
	j = send_body(c, &s, &req, 201);
	ck_assert_str_eq(json_string_value(json_object_get(j, "body_sha256")), eb_digest_hex(dg));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "attempt")), 2);
	json_decref(j);

	/* a file shorter than promised fails cleanly */
	{
		struct eb_http_response resp;
		struct eb_error *err = NULL;
		req.url = "/v2/r/short";
		req.body_offset = 40000;
		req.body_length = 20000;
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EIO);
		ck_assert_ptr_nonnull(strstr(err->msg, "ended after 10000 of 20000 bytes"));
		eb_error_clear(&err);
		eb_http_response_release(&resp);
	}

	/* a stream of unknown length goes chunked */
	memset(&req, 0, sizeof(req));
	req.method = "PATCH";
	req.url = "/v2/r/blobs/uploads/stream";
	req.body_kind = EB_HTTP_BODY_STREAM;
	req.body_read = stream_read;
	req.body_userdata = &src;
	j = send_body(c, &s, &req, 200);
	sha_hex(src.data, src.len, dg);
	ck_assert_str_eq(json_string_value(json_object_get(j, "body_sha256")), eb_digest_hex(dg));
	ck_assert_str_eq(json_string_value(json_object_get(j, "transfer_encoding")), "chunked");
	json_decref(j);

	/* a stream is never retried */
	{
		struct eb_http_response resp;
		struct eb_error *err = NULL;
		src.pos = 0;
		req.url = "/v2/r/retry503/stream";
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
		ck_assert_int_eq(resp.status, 503);
		ck_assert_uint_eq(resp.retries, 0);
		eb_http_response_release(&resp);
	}

	/* HEAD and DELETE */
	{
		struct eb_http_response resp;
		memset(&req, 0, sizeof(req));
		req.method = "HEAD";
		req.url = "/v2/r/blobs/sha256:abc";
		get_ok(c, &s, "/v2/r/x", &resp); /* warm */
		eb_http_response_release(&resp);
		req.registry = s.host;
		ck_assert_int_eq(eb_http_request(c, &req, &resp, NULL), 0);
		ck_assert_int_eq(resp.status, 200);
		ck_assert_uint_eq(resp.body.len, 0);
		ck_assert_ptr_nonnull(eb_http_response_header(&resp, "Content-Length"));
		eb_http_response_release(&resp);
		req.method = "DELETE";
		ck_assert_int_eq(eb_http_request(c, &req, &resp, NULL), 0);
		ck_assert_ptr_nonnull(strstr(resp.body.ptr, "\"DELETE\""));
		eb_http_response_release(&resp);
	}

	close(fd);
	unlink(path);
	rmdir(dir);
	free(dir);
	free(file_data);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- redirects ----------------------------------------------------------- */

START_TEST(test_redirect_drops_auth)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st, *seen;

	srv_start(&s, "--mode", "basic", NULL);
	set_creds(a, s.host, "alice", "s3cret-pw");

	/* 127.0.0.1 -> localhost: another origin, no Authorization */
	get_ok(c, &s, "/v2/r/redirect/blob", &resp);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_str_eq(resp.body.ptr, "storage auth=no");
	ck_assert_ptr_nonnull(strstr(resp.url, "http://localhost:"));
	eb_http_response_release(&resp);

	/* a redirect within the registry keeps it */
	get_ok(c, &s, "/v2/r/redirect/blob?to=same", &resp);
	ck_assert_str_eq(resp.body.ptr, "storage auth=yes");
	eb_http_response_release(&resp);

	/* 302 and 303 too */
	get_ok(c, &s, "/v2/r/redirect/blob?code=302", &resp);
	ck_assert_str_eq(resp.body.ptr, "storage auth=no");
	eb_http_response_release(&resp);

	st = srv_stats(&s);
	seen = json_object_get(json_object_get(st, "auth_seen"), "/storage/x");
	ck_assert_uint_eq(json_array_size(seen), 3);
	ck_assert(json_is_false(json_array_get(seen, 0)));
	ck_assert(json_is_true(json_array_get(seen, 1)));
	ck_assert(json_is_false(json_array_get(seen, 2)));
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_redirect_caller_auth_header_dropped)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	static const char *const hdrs[] = { "Authorization: Bearer caller-token", NULL };
	char url[128];

	srv_start(&s, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v2/r/redirect/x", s.port);
	req.method = "GET";
	req.url = url;
	req.headers = hdrs;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, NULL), 0);
	ck_assert_str_eq(resp.body.ptr, "storage auth=no");
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_redirect_limit)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	json_t *st;

	srv_start(&s, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/loop";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "too many redirects"));
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/loop"), EB_HTTP_MAX_REDIRECTS + 1);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- Basic ----------------------------------------------------------------- */

START_TEST(test_basic_auth)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st;

	srv_start(&s, "--mode", "basic", NULL);
	/* no credentials: the 401 is the answer */
	get_ok(c, &s, "/v2/r/one", &resp);
	ck_assert_int_eq(resp.status, 401);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/one"), 1);
	json_decref(st);

	/* with them: 401, then the retry with Basic */
	set_creds(a, s.host, "alice", "s3cret-pw");
	get_ok(c, &s, "/v2/r/two", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	/* known now: sent up front */
	get_ok(c, &s, "/v2/r/three", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/two"), 1);
	ck_assert_int_eq(count_of(st, "/v2/r/three"), 1);
	json_decref(st);

	/* wrong password: one retry with it, then the 401 comes back */
	set_creds(a, s.host, "alice", "wrong");
	get_ok(c, &s, "/v2/r/four", &resp);
	ck_assert_int_eq(resp.status, 401);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_int_eq(count_of(st, "/v2/r/four"), 1);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- Bearer ---------------------------------------------------------------- */

START_TEST(test_bearer_scopes_and_cache)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	json_t *st, *tokens, *t0, *scopes;

	srv_start(&s, "--mode", "bearer", NULL);
	set_creds(a, s.host, "alice", "s3cret-pw");
	req.method = "POST";
	req.registry = s.host;
	req.url = "/v2/r/blobs/uploads/?mount=sha256:abc&from=other/src";
	req.repository = "r";
	req.push = 1;
	req.mount_from = "other/src";
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
		ck_assert_int_eq(resp.status, 201);
		eb_http_response_release(&resp);
	}
	ck_assert_uint_eq(eb_auth_token_requests(a), 1);
	st = srv_stats(&s);
	tokens = tokens_of(st);
	ck_assert_uint_eq(json_array_size(tokens), 1);
	t0 = json_array_get(tokens, 0);
	scopes = json_object_get(t0, "scopes");
	/* push scope first, then the mount source */
	ck_assert_uint_eq(json_array_size(scopes), 2);
	ck_assert_str_eq(json_string_value(json_array_get(scopes, 0)), "repository:r:pull,push");
	ck_assert_str_eq(json_string_value(json_array_get(scopes, 1)),
			 "repository:other/src:pull");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "service")), "test-registry");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "account")), "alice");
	ck_assert(json_is_true(json_object_get(t0, "basic")));
	ck_assert_int_eq(json_integer_value(json_object_get(st, "unauthorized")), 1);
	json_decref(st);

	/* another scope set is another token, fetched before the request */
	req.method = "GET";
	req.url = "/v2/r/manifests/latest";
	req.push = 0;
	req.mount_from = NULL;
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_uint_eq(json_array_size(tokens_of(st)), 2);
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_array_get(tokens_of(st), 1), "scopes"), 0)),
			 "repository:r:pull");
	ck_assert_int_eq(json_integer_value(json_object_get(st, "unauthorized")), 1);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_anonymous_access_token)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st, *t0;

	srv_start(&s, "--mode", "bearer", "--token-key", "access_token", NULL);
	get_ok(c, &s, "/v2/r/manifests/1", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	t0 = json_array_get(tokens_of(st), 0);
	ck_assert(json_is_false(json_object_get(t0, "basic")));
	ck_assert(json_is_null(json_object_get(t0, "account")));
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_insufficient_scope)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st, *scopes;

	srv_start(&s, "--mode", "bearer", NULL);
	get_ok(c, &s, "/v2/r/insufficient", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_uint_eq(json_array_size(tokens_of(st)), 2);
	scopes = json_object_get(json_array_get(tokens_of(st), 1), "scopes");
	ck_assert_str_eq(json_string_value(json_array_get(scopes, 0)), "repository:r:pull");
	ck_assert_str_eq(json_string_value(json_array_get(scopes, 1)), "repository:extra:pull");
	ck_assert_int_eq(count_of(st, "/v2/r/insufficient"), 3);
	json_decref(st);
	/* the refreshed token is the cached one now */
	get_ok(c, &s, "/v2/r/insufficient", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	ck_assert_uint_eq(eb_auth_token_requests(a), 2);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_server_expiry)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st;

	/* the server forgets tokens after 1 s; we believe them for 60 */
	srv_start(&s, "--mode", "bearer", "--token-ttl", "1", "--expires-in", "1", NULL);
	get_ok(c, &s, "/v2/r/a", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	usleep(1300 * 1000);
	get_ok(c, &s, "/v2/r/b", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	ck_assert_uint_eq(eb_auth_token_requests(a), 2);
	st = srv_stats(&s);
	ck_assert_int_eq(json_integer_value(json_object_get(st, "unauthorized")), 2);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_client_expiry)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	json_t *st;

	/* issued an hour ago, valid 5 minutes: stale on arrival, so every
	 * request fetches a new one, up front, without another 401 */
	srv_start(&s, "--mode", "bearer", "--issued-at-past", NULL);
	for (int i = 0; i < 3; i++) {
		get_ok(c, &s, "/v2/r/c", &resp);
		ck_assert_int_eq(resp.status, 200);
		eb_http_response_release(&resp);
	}
	ck_assert_uint_eq(eb_auth_token_requests(a), 3);
	st = srv_stats(&s);
	ck_assert_int_eq(json_integer_value(json_object_get(st, "unauthorized")), 1);
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_oauth_identity_token)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	struct eb_auth_creds cr = { 0 };
	json_t *st, *t0;

	srv_start(&s, "--mode", "bearer", NULL);
	cr.identity_token = (char *)"refresh-xyz";
	eb_auth_set_credentials(a, s.host, &cr);
	get_ok(c, &s, "/v2/r/o", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_uint_eq(json_array_size(tokens_of(st)), 1);
	t0 = json_array_get(tokens_of(st), 0);
	ck_assert_str_eq(json_string_value(json_object_get(t0, "method")), "POST");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "grant_type")), "refresh_token");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "refresh_token")), "refresh-xyz");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "client_id")), "envbuild");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "scope")), "repository:r:pull");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "service")), "test-registry");
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_oauth_404_falls_back)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_response resp;
	struct eb_auth_creds cr = { 0 };
	json_t *st;

	srv_start(&s, "--mode", "bearer", "--oauth404", NULL);
	cr.identity_token = (char *)"refresh-xyz";
	eb_auth_set_credentials(a, s.host, &cr);
	get_ok(c, &s, "/v2/r/o", &resp);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	st = srv_stats(&s);
	ck_assert_uint_eq(json_array_size(tokens_of(st)), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tokens_of(st), 0),
							   "method")),
			 "POST");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tokens_of(st), 1),
							   "method")),
			 "GET");
	json_decref(st);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

START_TEST(test_bearer_refused_no_secret)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	const char *pw = "Very-Secret-Passw0rd";

	srv_start(&s, "--mode", "bearer", NULL);
	set_creds(a, s.host, "alice", pw);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/x";
	req.repository = "r";
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EFAIL);
	ck_assert_ptr_nonnull(strstr(err->msg, "refused the credentials"));
	ck_assert_ptr_null(strstr(err->msg, pw));
	ck_assert_ptr_nonnull(err->hint);
	ck_assert_ptr_null(strstr(err->hint, pw));
	eb_error_clear(&err);
	eb_http_response_release(&resp);

	/* anonymous where the realm wants credentials */
	srv_stop(&s);
	srv_start(&s, "--mode", "bearer", "--require-token-auth", NULL);
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_EFAIL);
	ck_assert_ptr_nonnull(strstr(err->msg, "refused anonymous access"));
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

struct thread_arg {
	struct eb_http_client *c;
	const struct srv *s;
	int ok;
};

static void *thread_main(void *p)
{
	struct thread_arg *t = p;
	for (int i = 0; i < 10; i++) {
		struct eb_http_request req = { 0 };
		struct eb_http_response resp;
		req.method = i % 2 ? "GET" : "PUT";
		req.registry = t->s->host;
		req.url = "/v2/r/blobs/uploads/t";
		req.repository = "r";
		req.push = 1;
		req.body_kind = EB_HTTP_BODY_MEM;
		req.body = "0123456789";
		req.body_len = i % 2 ? 0 : 10;
		if (eb_http_request(t->c, &req, &resp, NULL) == 0 &&
		    resp.status == (i % 2 ? 200 : 201))
			t->ok++;
		eb_http_response_release(&resp);
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_client *c = mkclient(NULL, a);
	pthread_t th[6];
	struct thread_arg args[6];

	srv_start(&s, "--mode", "bearer", NULL);
	for (int i = 0; i < 6; i++) {
		args[i].c = c;
		args[i].s = &s;
		args[i].ok = 0;
		ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].ok, 10);
	}
	srv_stop(&s);
	eb_http_client_free(c);
	eb_auth_free(a);
}
END_TEST

/* ---- TLS ----------------------------------------------------------------- */

struct tls_fixture {
	char *dir;
	char cert[4096], key[4096];
};

static void make_cert(struct tls_fixture *f)
{
	char cmd[16384];
	int rc;

	f->dir = eb_test_tmpdir();
	snprintf(f->cert, sizeof(f->cert), "%s/cert.pem", f->dir);
	snprintf(f->key, sizeof(f->key), "%s/key.pem", f->dir);
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout '%s' -out '%s' -days 2 -subj /CN=127.0.0.1 "
		 "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1",
		 f->key, f->cert);
	rc = system(cmd);
	ck_assert_msg(rc == 0, "openssl req failed");
}

static void rm_rf(const char *dir)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_tls_trust)
{
	struct tls_fixture f;
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_error *err = NULL;
	char want[256], *certs_d, *hostdir, *cmd;
	json_t *st;

	make_cert(&f);
	srv_start(&s, "--tls", f.cert, f.key, NULL);
	req.method = "GET";
	req.registry = s.host;
	req.url = "/v2/r/tls";

	/* untrusted: a clear error, and no fallback to plain http */
	c = mkclient(NULL, a);
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ENET);
	snprintf(want, sizeof(want), "TLS certificate of '%s' is not trusted: ", s.host);
	ck_assert_msg(strstr(err->msg, want) != NULL, "got: %s", err->msg);
	ck_assert_ptr_nonnull(strstr(err->msg, "--ca-file or certs.d"));
	ck_assert_uint_eq(resp.attempts, 1);
	eb_error_clear(&err);
	eb_http_response_release(&resp);
	eb_http_client_free(c);

	/* a CA file for every host */
	memset(&o, 0, sizeof(o));
	o.ca_file = f.cert;
	c = mkclient(&o, a);
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_ptr_nonnull(strstr(resp.url, "https://"));
	eb_http_response_release(&resp);
	eb_http_client_free(c);

	/* a CA file for this registry only */
	{
		struct eb_http_registry reg = { s.host, f.cert, 0 };
		memset(&o, 0, sizeof(o));
		o.registries = &reg;
		o.nregistries = 1;
		c = mkclient(&o, a);
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
		ck_assert_int_eq(resp.status, 200);
		eb_http_response_release(&resp);
		eb_http_client_free(c);
	}

	/* certs.d/<host:port>/ca.crt, by option and by $ENVBUILD_CERTS_D */
	certs_d = eb_xasprintf("%s/certs.d", f.dir);
	hostdir = eb_xasprintf("%s/%s", certs_d, s.host);
	cmd = eb_xasprintf("mkdir -p '%s' && cp '%s' '%s/ca.crt'", hostdir, f.cert, hostdir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(hostdir);
	memset(&o, 0, sizeof(o));
	o.certs_d = certs_d;
	c = mkclient(&o, a);
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	eb_http_client_free(c);

	setenv("ENVBUILD_CERTS_D", certs_d, 1);
	memset(&o, 0, sizeof(o));
	c = mkclient(&o, a);
	ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
	ck_assert_int_eq(resp.status, 200);
	eb_http_response_release(&resp);
	eb_http_client_free(c);
	unsetenv("ENVBUILD_CERTS_D");
	free(certs_d);

	/* a CA file that is not a certificate */
	{
		eb_autofree char *bad = eb_xasprintf("%s/bad.pem", f.dir);
		eb_test_write(f.dir, "bad.pem", "not a certificate\n");
		memset(&o, 0, sizeof(o));
		o.ca_file = bad;
		c = mkclient(&o, a);
		ck_assert_int_lt(eb_http_request(c, &req, &resp, &err), 0);
		ck_assert_ptr_nonnull(strstr(err->msg, "bad.pem"));
		eb_error_clear(&err);
		eb_http_response_release(&resp);
		eb_http_client_free(c);
	}

	/* the plain-http attempt never happened */
	memset(&o, 0, sizeof(o));
	o.ca_file = f.cert;
	c = mkclient(&o, a);
	{
		char url[128];
		snprintf(url, sizeof(url), "https://127.0.0.1:%d/_stats", s.port);
		req.registry = NULL;
		req.url = url;
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
		st = json_loadb(resp.body.ptr, resp.body.len, 0, NULL);
		ck_assert_int_eq(count_of(st, "/v2/r/tls"), 4);
		json_decref(st);
		eb_http_response_release(&resp);
	}
	eb_http_client_free(c);

	srv_stop(&s);
	rm_rf(f.dir);
	free(f.dir);
	eb_auth_free(a);
}
END_TEST

struct tls_thread_arg {
	struct eb_http_client *c;
	const struct srv *s;
	int ok;
};

static void *tls_thread_main(void *p)
{
	struct tls_thread_arg *t = p;
	for (int i = 0; i < 10; i++) {
		struct eb_http_request req = { 0 };
		struct eb_http_response resp;
		req.method = "GET";
		req.registry = t->s->host;
		req.url = "/v2/r/tls";
		if (eb_http_request(t->c, &req, &resp, NULL) == 0 && resp.status == 200 &&
		    strncmp(resp.url, "https://", 8) == 0)
			t->ok++;
		eb_http_response_release(&resp);
	}
	return NULL;
}

/* Every connection of every thread verifies against the client's one
 * certificate store (parsed once, shared by the connections' SSL_CTXs):
 * threads connecting at once all get through, over https. */
START_TEST(test_tls_threads)
{
	struct tls_fixture f;
	struct srv s;
	struct eb_auth *a = anon_auth();
	struct eb_http_options o = { 0 };
	struct eb_http_client *c;
	pthread_t th[4];
	struct tls_thread_arg args[4];
	json_t *st;

	make_cert(&f);
	srv_start(&s, "--tls", f.cert, f.key, NULL);
	o.ca_file = f.cert;
	c = mkclient(&o, a);
	for (int i = 0; i < 4; i++) {
		args[i].c = c;
		args[i].s = &s;
		args[i].ok = 0;
		ck_assert_int_eq(pthread_create(&th[i], NULL, tls_thread_main, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].ok, 10);
	}
	eb_http_client_free(c);
	/* and a client without the CA still refuses the server */
	{
		struct eb_http_request req = { 0 };
		struct eb_http_response resp;
		struct eb_error *err = NULL;
		c = mkclient(NULL, a);
		req.method = "GET";
		req.registry = s.host;
		req.url = "/v2/r/tls";
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), -EB_ENET);
		ck_assert_ptr_nonnull(strstr(err->msg, "is not trusted"));
		eb_error_free(err);
		eb_http_response_release(&resp);
		eb_http_client_free(c);
	}
	{
		char url[128];
		struct eb_http_request req = { 0 };
		struct eb_http_response resp;
		struct eb_error *err = NULL;
		c = mkclient(&o, a);
		snprintf(url, sizeof(url), "https://127.0.0.1:%d/_stats", s.port);
		req.method = "GET";
		req.url = url;
		ck_assert_int_eq(eb_http_request(c, &req, &resp, &err), 0);
		st = json_loadb(resp.body.ptr, resp.body.len, 0, NULL);
		ck_assert_int_eq(count_of(st, "/v2/r/tls"), 40);
		json_decref(st);
		eb_http_response_release(&resp);
		eb_http_client_free(c);
	}
	srv_stop(&s);
	rm_rf(f.dir);
	free(f.dir);
	eb_auth_free(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("http");
	TCase *pure = tcase_create("pure");
	TCase *net = tcase_create("server");
	TCase *auth = tcase_create("auth");
	TCase *tls = tcase_create("tls");

	tcase_add_test(pure, test_retry_after_parse);
	tcase_add_test(pure, test_backoff);
	tcase_add_test(pure, test_url_resolve);
	tcase_add_test(pure, test_loopback_and_hosts);
	tcase_add_test(pure, test_insecure_config);
	tcase_add_test(pure, test_response_error);
	tcase_add_test(pure, test_plain_http_refused);
	suite_add_tcase(s, pure);

	tcase_set_timeout(net, 30);
	tcase_add_test(net, test_retry_503_then_ok);
	tcase_add_test(net, test_retry_429_retry_after);
	tcase_add_test(net, test_retry_after_capped);
	tcase_add_test(net, test_retry_exhausted);
	tcase_add_test(net, test_no_retry_flag);
	tcase_add_test(net, test_connection_refused_retried);
	tcase_add_test(net, test_cut_buffered_retried);
	tcase_add_test(net, test_cut_streamed_reported);
	tcase_add_test(net, test_size_cap);
	tcase_add_test(net, test_low_speed_timeout);
	tcase_add_test(net, test_trickle_deadline);
	tcase_add_test(net, test_fallback_and_headers);
	tcase_add_test(net, test_upload_bodies);
	tcase_add_test(net, test_redirect_drops_auth);
	tcase_add_test(net, test_redirect_caller_auth_header_dropped);
	tcase_add_test(net, test_redirect_limit);
	suite_add_tcase(s, net);

	tcase_set_timeout(auth, 30);
	tcase_add_test(auth, test_basic_auth);
	tcase_add_test(auth, test_bearer_scopes_and_cache);
	tcase_add_test(auth, test_bearer_anonymous_access_token);
	tcase_add_test(auth, test_bearer_insufficient_scope);
	tcase_add_test(auth, test_bearer_server_expiry);
	tcase_add_test(auth, test_bearer_client_expiry);
	tcase_add_test(auth, test_bearer_oauth_identity_token);
	tcase_add_test(auth, test_bearer_oauth_404_falls_back);
	tcase_add_test(auth, test_bearer_refused_no_secret);
	tcase_add_test(auth, test_threads);
	suite_add_tcase(s, auth);

	tcase_set_timeout(tls, 30);
	tcase_add_test(tls, test_tls_trust);
	tcase_add_test(tls, test_tls_threads);
	suite_add_tcase(s, tls);
	return s;
}

EB_TEST_MAIN(make_suite)
