/*
 * auth.c - registry credentials and auth flows: RFC 7235 challenge parsing,
 * docker config.json / auth.json lookup, docker-credential-* helpers, Basic,
 * the Bearer token flow (GET and OAuth2 refresh_token POST) and the token
 * cache that http.c consults (see auth.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "registry/auth.h"
#include "net/http.h"
#include "util/alloc.h"
#include "util/sys.h"
#include "util/buf.h"
#include "util/encode.h"
#include "util/fs.h"

extern char **environ;

#define CONFIG_MAX (4 * 1024 * 1024)
#define HELPER_OUTPUT_MAX (1024 * 1024)
#define HELPER_TIMEOUT_MS 60000
#define TOKEN_RESPONSE_MAX (1024 * 1024)
/* The token spec: expires_in defaults to 60 s, and less is treated as 60. */
#define TOKEN_MIN_LIFETIME 60
/* Refresh a little before the server's expiry. */
#define TOKEN_MARGIN 10
#define HUB_KEY "index.docker.io"
#define HUB_SERVER_URL "https://index.docker.io/v1/"

/* ---- small helpers --------------------------------------------------- */

static void free_secret(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

static char *lower_dup(const char *s, size_t n)
{
	char *d = eb_xstrndup(s, n);
	for (char *p = d; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return d;
}

static char *dup_or_null(const char *s)
{
	return s ? eb_xstrdup(s) : NULL;
}

/* ---- Basic values -------------------------------------------------- */

int eb_auth_decode_basic(const char *b64, char **user, char **pass, struct eb_error **err)
{
	size_t len, ulen, start, end;
	char *raw = eb_base64_decode(b64, &len);
	const char *colon;

	*user = *pass = NULL;
	if (!raw)
		return eb_error_set(err, EB_EINVALID, "auth value is not valid base64");
	colon = memchr(raw, ':', len);
	ulen = colon ? (size_t)(colon - raw) : 0;
	if (!colon || ulen == 0 || memchr(raw, '\0', ulen)) {
		OPENSSL_cleanse(raw, len);
		free(raw);
		return eb_error_set(err, EB_EINVALID, "auth value is not 'user:password'");
	}
	/* docker trims NULs around the password */
	start = ulen + 1;
	end = len;
	while (start < end && raw[start] == '\0')
		start++;
	while (end > start && raw[end - 1] == '\0')
		end--;
	if (memchr(raw + start, '\0', end - start)) {
		OPENSSL_cleanse(raw, len);
		free(raw);
		return eb_error_set(err, EB_EINVALID, "auth value has a NUL inside the password");
	}
	*user = eb_xstrndup(raw, ulen);
	*pass = eb_xstrndup(raw + start, end - start);
	OPENSSL_cleanse(raw, len);
	free(raw);
	return 0;
}

/* ---- challenges ------------------------------------------------------ */

static int is_tchar(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int is_t68char(int c)
{
	return isalnum(c) || (c && strchr("-._~+/", c));
}

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static size_t token_len(const char *p)
{
	size_t n = 0;
	while (is_tchar((unsigned char)p[n]))
		n++;
	return n;
}

/* auth-param = token BWS "=" BWS ( token / quoted-string ).  On success
 * returns the position after it and fills name/value; NULL if p does not
 * start a parameter.  *bad is set for an unterminated quoted string. */
static const char *parse_param(const char *p, char **name, char **value, int *bad)
{
	size_t n = token_len(p), vn;
	const char *q;

	*bad = 0;
	if (!n)
		return NULL;
	q = skip_ows(p + n);
	if (*q != '=')
		return NULL;
	q = skip_ows(q + 1);
	if (*q == '"') {
		struct eb_buf b;
		eb_buf_init(&b, 0);
		for (q++; *q && *q != '"'; q++) {
			if (*q == '\\') {
				if (!q[1])
					break;
				q++;
			}
			if (eb_buf_addc(&b, *q) < 0)
				break;
		}
		if (*q != '"') {
			eb_buf_release(&b);
			*bad = 1;
			return NULL;
		}
		*name = lower_dup(p, n);
		*value = eb_buf_detach(&b, NULL);
		return q + 1;
	}
	vn = token_len(q);
	if (!vn)
		return NULL;
	*name = lower_dup(p, n);
	*value = eb_xstrndup(q, vn);
	return q + vn;
}

static void add_param(struct eb_auth_challenge *c, char *name, char *value)
{
	/* A repeated parameter is invalid (RFC 7235 2.2); keep the first. */
	if (eb_auth_challenge_param(c, name)) {
		free(name);
		free(value);
		return;
	}
	c->params = eb_xreallocarray(c->params, c->nparams + 1, sizeof(*c->params));
	c->params[c->nparams].name = name;
	c->params[c->nparams].value = value;
	c->nparams++;
}

int eb_auth_parse_challenges(struct eb_auth_challenge **out, size_t *nout, const char *value,
			     struct eb_error **err)
{
	struct eb_auth_challenge *list = NULL;
	size_t n = 0;
	const char *p = value ? value : "";

	*out = NULL;
	*nout = 0;
	for (;;) {
		struct eb_auth_challenge *c;
		size_t sl;

		/* empty list elements are allowed: ", ," */
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		sl = token_len(p);
		if (!sl)
			goto bad;
		list = eb_xreallocarray(list, n + 1, sizeof(*list));
		c = &list[n++];
		memset(c, 0, sizeof(*c));
		c->scheme = lower_dup(p, sl);
		p += sl;
		if (*p == ',' || !*p)
			continue;
		if (*p != ' ' && *p != '\t')
			goto bad;
		p = skip_ows(p);
		if (!*p || *p == ',')
			continue;

		/* Parameters, or a token68, after the scheme. */
		{
			char *name, *val;
			int unterminated;
			const char *q = parse_param(p, &name, &val, &unterminated);

			if (unterminated)
				goto bad;
			if (!q) {
				size_t tl = 0;
				while (is_t68char((unsigned char)p[tl]))
					tl++;
				if (!tl)
					goto bad;
				while (p[tl] == '=')
					tl++;
				c->token68 = eb_xstrndup(p, tl);
				p = skip_ows(p + tl);
				if (*p && *p != ',')
					goto bad;
				continue;
			}
			add_param(c, name, val);
			p = q;
			for (;;) {
				const char *r;
				p = skip_ows(p);
				if (!*p)
					break;
				if (*p != ',')
					goto bad;
				while (*p == ',' || *p == ' ' || *p == '\t')
					p++;
				if (!*p)
					break;
				r = parse_param(p, &name, &val, &unterminated);
				if (unterminated)
					goto bad;
				if (!r)
					break; /* the next challenge starts here */
				add_param(c, name, val);
				p = r;
			}
		}
	}
	*out = list;
	*nout = n;
	return 0;

bad:
	eb_auth_challenges_free(list, n);
	return eb_error_set(err, EB_EINVALID, "malformed WWW-Authenticate header at column %zu",
			    (size_t)(p - value) + 1);
}

void eb_auth_challenges_free(struct eb_auth_challenge *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].scheme);
		free(c[i].token68);
		for (size_t j = 0; j < c[i].nparams; j++) {
			free(c[i].params[j].name);
			free(c[i].params[j].value);
		}
		free(c[i].params);
	}
	free(c);
}

const char *eb_auth_challenge_param(const struct eb_auth_challenge *c, const char *name)
{
	for (size_t i = 0; i < c->nparams; i++)
		if (strcasecmp(c->params[i].name, name) == 0)
			return c->params[i].value;
	return NULL;
}

const struct eb_auth_challenge *eb_auth_pick_challenge(const struct eb_auth_challenge *c,
						       size_t n)
{
	const struct eb_auth_challenge *basic = NULL;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(c[i].scheme, "bearer") == 0)
			return &c[i];
		if (!basic && strcmp(c[i].scheme, "basic") == 0)
			basic = &c[i];
	}
	return basic;
}

/* ---- credentials ----------------------------------------------------- */

void eb_auth_creds_release(struct eb_auth_creds *c)
{
	if (!c)
		return;
	free(c->username);
	free_secret(c->password);
	free_secret(c->identity_token);
	free_secret(c->registry_token);
	memset(c, 0, sizeof(*c));
}

int eb_auth_creds_empty(const struct eb_auth_creds *c)
{
	return !c->username && !c->password && !c->identity_token && !c->registry_token;
}

static void creds_copy(struct eb_auth_creds *dst, const struct eb_auth_creds *src)
{
	dst->username = dup_or_null(src->username);
	dst->password = dup_or_null(src->password);
	dst->identity_token = dup_or_null(src->identity_token);
	dst->registry_token = dup_or_null(src->registry_token);
}

char *eb_auth_normalize_key(const char *key)
{
	const char *p = strstr(key, "://");
	const char *end;
	char *host;

	p = p ? p + 3 : key;
	end = strchr(p, '/');
	host = lower_dup(p, end ? (size_t)(end - p) : strlen(p));
	if (strcmp(host, "docker.io") == 0 || strcmp(host, "registry-1.docker.io") == 0 ||
	    strcmp(host, "index.docker.io") == 0) {
		free(host);
		host = eb_xstrdup(HUB_KEY);
	}
	return host;
}

/* What a helper is asked for: Hub's historical URL, else the host. */
static char *helper_server_url(const char *registry)
{
	eb_autofree char *key = eb_auth_normalize_key(registry);
	return eb_xstrdup(strcmp(key, HUB_KEY) == 0 ? HUB_SERVER_URL : key);
}

static int valid_helper_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

/* Write all of data to fd with SIGPIPE blocked in this thread, so a
 * helper that exits without reading its input cannot kill us. */
static int write_nopipe(int fd, const char *data, size_t len)
{
	sigset_t pipe_set, old, pending;
	int rc = 0, saved;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (len) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = -1;
			break;
		}
		data += w;
		len -= (size_t)w;
	}
	saved = errno;
	sigemptyset(&pending);
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) &&
	    !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return rc;
}

/* Read fd to EOF (at most max bytes), giving up after timeout_ms. */
static int read_all(int fd, struct eb_buf *out, size_t max, int timeout_ms)
{
	long deadline = (long)time(NULL) * 1000 + timeout_ms;
	char buf[4096];

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		long left = deadline - (long)time(NULL) * 1000;
		ssize_t r;
		int pr;

		if (left <= 0)
			return -ETIMEDOUT;
		pr = poll(&pfd, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		if (out->len + (size_t)r > max)
			return -EFBIG;
		if (eb_buf_add(out, buf, (size_t)r) < 0)
			return -ENOMEM;
	}
}

int eb_auth_run_helper(struct eb_auth_creds *out, const char *helper, const char *server_url,
		       struct eb_error **err)
{
	eb_autofree char *prog = NULL;
	eb_autofree char *exe = NULL;
	char *argv[3];
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	struct eb_buf output;
	pid_t pid;
	int status = 0, rc, rr, werr;
	json_t *doc = NULL;

	memset(out, 0, sizeof(*out));
	eb_buf_init(&output, 0);
	if (!valid_helper_name(helper))
		return eb_error_set(err, EB_EINVALID, "invalid credential helper name '%s'", helper);
	prog = eb_xasprintf("docker-credential-%s", helper);
	exe = eb_sys_find_program(prog);
	if (!exe)
		return eb_error_set(err, EB_ENOTFOUND, "credential helper '%s' not found on PATH",
				    prog);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0) {
		rc = eb_error_set_errno(err, EB_EIO, errno, "cannot run '%s'", prog);
		goto done;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	argv[0] = prog;
	argv[1] = (char *)"get";
	argv[2] = NULL;
	rr = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(outp[1]);
	in[0] = outp[1] = -1;
	if (rr != 0) {
		rc = eb_error_set_errno(err, EB_EIO, rr, "cannot run '%s'", exe);
		goto done;
	}
	write_nopipe(in[1], server_url, strlen(server_url));
	close(in[1]);
	in[1] = -1;
	rr = read_all(outp[0], &output, HELPER_OUTPUT_MAX, HELPER_TIMEOUT_MS);
	if (rr == -ETIMEDOUT)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rr < 0) {
		rc = eb_error_set(err, EB_EFAIL, "credential helper '%s' failed for '%s': %s", prog,
				  server_url,
				  rr == -ETIMEDOUT ? "timed out" : rr == -EFBIG ? "too much output"
									   : strerror(-rr));
		goto done;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* docker-credential-helpers' "not found" answer: anonymous */
		if (strstr(output.ptr, "credentials not found")) {
			rc = 0;
			goto done;
		}
		/* A failing helper's message is its first line (the output
		 * holds no credentials then); keep it short. */
		size_t l = strcspn(output.ptr, "\r\n");
		eb_autofree char *helper_msg = eb_xstrndup(output.ptr, l > 120 ? 120 : l);
		for (char *q = helper_msg; *q; q++)
			if ((unsigned char)*q < 0x20)
				*q = ' ';
		if (WIFEXITED(status))
			rc = eb_error_set(err, EB_EFAIL,
					  "credential helper '%s' failed for '%s' (exit status %d)%s%s",
					  prog, server_url, WEXITSTATUS(status),
					  *helper_msg ? ": " : "", helper_msg);
		else
			rc = eb_error_set(err, EB_EFAIL, "credential helper '%s' was killed", prog);
		goto done;
	}
	doc = json_loadb(output.ptr, output.len, 0, NULL);
	if (!json_is_object(doc)) {
		rc = eb_error_set(err, EB_EFAIL, "credential helper '%s' gave invalid output", prog);
		goto done;
	}
	{
		const char *user = json_string_value(json_object_get(doc, "Username"));
		const char *secret = json_string_value(json_object_get(doc, "Secret"));
		/* "<token>" marks an identity token (docker login with OAuth). */
		if (user && strcmp(user, "<token>") == 0) {
			out->identity_token = dup_or_null(secret && *secret ? secret : NULL);
		} else {
			out->username = dup_or_null(user && *user ? user : NULL);
			out->password = dup_or_null(secret && *secret ? secret : NULL);
		}
	}
	rc = 0;

done:
	werr = errno;
	if (doc) {
		/* jansson keeps its own copy of the secret; wipe it too. */
		json_t *s = json_object_get(doc, "Secret");
		if (json_is_string(s))
			OPENSSL_cleanse((char *)json_string_value(s), json_string_length(s));
		json_decref(doc);
	}
	OPENSSL_cleanse(output.ptr, output.len);
	eb_buf_release(&output);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	errno = werr;
	return rc;
}

/* One auths entry into creds. */
static int creds_from_entry(struct eb_auth_creds *out, json_t *entry, const char *path,
			    const char *key, struct eb_error **err)
{
	const char *auth = json_string_value(json_object_get(entry, "auth"));
	const char *user = json_string_value(json_object_get(entry, "username"));
	const char *pass = json_string_value(json_object_get(entry, "password"));
	const char *idt = json_string_value(json_object_get(entry, "identitytoken"));
	const char *rgt = json_string_value(json_object_get(entry, "registrytoken"));

	if (auth && *auth) {
		int rc = eb_auth_decode_basic(auth, &out->username, &out->password, NULL);
		if (rc < 0)
			return eb_error_set(err, EB_EINVALID,
					    "invalid \"auth\" value for '%s' in '%s': expected "
					    "base64 of 'user:password'",
					    key, path);
	} else {
		out->username = dup_or_null(user && *user ? user : NULL);
		out->password = dup_or_null(pass && *pass ? pass : NULL);
	}
	if (idt && *idt)
		out->identity_token = eb_xstrdup(idt);
	if (rgt && *rgt)
		out->registry_token = eb_xstrdup(rgt);
	return 0;
}

/* Wipe every string in a parsed config: it may hold secrets. */
static void json_wipe(json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		OPENSSL_cleanse((char *)json_string_value(j), json_string_length(j));
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			json_wipe(v);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			json_wipe(v);
	}
}

int eb_auth_lookup_file(struct eb_auth_creds *out, const char *path, const char *registry,
			struct eb_error **err)
{
	struct eb_buf text;
	json_error_t jerr;
	json_t *root = NULL, *helpers, *auths, *v, *entry = NULL;
	const char *k, *store = NULL, *entry_key = NULL;
	eb_autofree char *want = eb_auth_normalize_key(registry);
	eb_autofree char *server_url = helper_server_url(registry);
	int rc;

	memset(out, 0, sizeof(*out));
	eb_buf_init(&text, 0);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return eb_error_set(err, EB_ENOTFOUND, "auth file '%s' does not exist", path);
	rc = eb_fs_read_file(&text, path, CONFIG_MAX, err);
	if (rc < 0)
		goto done;
	/* Duplicate keys are accepted (the last wins), as docker reads the
	 * file. */
	root = json_loadb(text.ptr, text.len, 0, &jerr);
	if (!root) {
		/* jansson's text quotes the input near the error: it may be a
		 * secret, so only the position goes into the message. */
		rc = eb_error_set_at(err, EB_EINVALID, path, (unsigned)jerr.line,
				     (unsigned)jerr.column, "'%s' is not valid JSON", path);
		goto done;
	}
	if (!json_is_object(root)) {
		rc = eb_error_set(err, EB_EINVALID, "'%s' is not a JSON object", path);
		goto done;
	}

	/* docker's order: a helper for this host, then the default store,
	 * then the file itself. */
	helpers = json_object_get(root, "credHelpers");
	json_object_foreach(helpers, k, v) {
		eb_autofree char *nk = eb_auth_normalize_key(k);
		if (strcmp(nk, want) == 0 && json_string_value(v)) {
			store = json_string_value(v);
			break;
		}
	}
	if (!store) {
		const char *cs = json_string_value(json_object_get(root, "credsStore"));
		if (cs && *cs)
			store = cs;
	}
	if (store) {
		rc = eb_auth_run_helper(out, store, server_url, err);
		goto done;
	}

	auths = json_object_get(root, "auths");
	/* The key as written beats Hub's URL key, which beats a key that
	 * only normalises to the registry. */
	json_object_foreach(auths, k, v) {
		if (strcmp(k, registry) == 0) {
			entry = v;
			entry_key = k;
			break;
		}
	}
	if (!entry) {
		json_object_foreach(auths, k, v) {
			if (strcmp(k, server_url) == 0) {
				entry = v;
				entry_key = k;
				break;
			}
		}
	}
	if (!entry) {
		json_object_foreach(auths, k, v) {
			eb_autofree char *nk = eb_auth_normalize_key(k);
			if (strcmp(nk, want) == 0) {
				entry = v;
				entry_key = k;
				break;
			}
		}
	}
	rc = json_is_object(entry) ? creds_from_entry(out, entry, path, entry_key, err) : 0;

done:
	if (rc < 0)
		eb_auth_creds_release(out);
	if (root) {
		json_wipe(root);
		json_decref(root);
	}
	OPENSSL_cleanse(text.ptr, text.len);
	eb_buf_release(&text);
	return rc;
}

int eb_auth_lookup(struct eb_auth_creds *out, const char *registry, struct eb_error **err)
{
	const char *env_file = getenv("REGISTRY_AUTH_FILE");
	const char *docker_config = getenv("DOCKER_CONFIG");
	const char *home = getenv("HOME");
	char *files[2] = { NULL, NULL };
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (env_file && *env_file)
		files[0] = eb_xstrdup(env_file);
	if (docker_config && *docker_config)
		files[1] = eb_path_join(docker_config, "config.json");
	else if (home && *home)
		files[1] = eb_xasprintf("%s/.docker/config.json", home);
	for (int i = 0; i < 2 && rc == 0; i++) {
		/* a missing file is the normal case, not an error */
		if (!files[i] || (access(files[i], F_OK) < 0 && errno == ENOENT))
			continue;
		rc = eb_auth_lookup_file(out, files[i], registry, err);
		if (rc < 0 || !eb_auth_creds_empty(out))
			break;
	}
	free(files[0]);
	free(files[1]);
	return rc;
}

/* ---- the auth state -------------------------------------------------- */

struct cred_entry {
	char *key; /* normalised registry */
	struct eb_auth_creds creds;
};

struct chal_entry {
	char *registry;
	int bearer;
	char *realm;
	char *service;
};

struct token_entry {
	char *key; /* registry + scopes */
	char *token;
	time_t expires;
};

struct eb_auth {
	pthread_mutex_t lock;
	char *auth_file;
	int anonymous;
	char *client_id;
	struct cred_entry *creds;
	size_t ncreds, creds_cap;
	struct chal_entry *chals;
	size_t nchals, chals_cap;
	struct token_entry *tokens;
	size_t ntokens, tokens_cap;
	unsigned token_requests;
};

struct eb_auth *eb_auth_new(const struct eb_auth_options *opts)
{
	struct eb_auth *a = eb_xcalloc(1, sizeof(*a));

	pthread_mutex_init(&a->lock, NULL);
	if (opts) {
		a->auth_file = dup_or_null(opts->auth_file);
		a->anonymous = opts->anonymous;
		a->client_id = dup_or_null(opts->client_id);
	}
	if (!a->client_id)
		a->client_id = eb_xstrdup("envbuild");
	return a;
}

void eb_auth_free(struct eb_auth *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->ncreds; i++) {
		free(a->creds[i].key);
		eb_auth_creds_release(&a->creds[i].creds);
	}
	free(a->creds);
	for (size_t i = 0; i < a->nchals; i++) {
		free(a->chals[i].registry);
		free(a->chals[i].realm);
		free(a->chals[i].service);
	}
	free(a->chals);
	for (size_t i = 0; i < a->ntokens; i++) {
		free(a->tokens[i].key);
		free_secret(a->tokens[i].token);
	}
	free(a->tokens);
	free(a->auth_file);
	free(a->client_id);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

unsigned eb_auth_token_requests(struct eb_auth *a)
{
	unsigned n;
	pthread_mutex_lock(&a->lock);
	n = a->token_requests;
	pthread_mutex_unlock(&a->lock);
	return n;
}

/* Insert or replace creds for key; caller holds the lock. */
static void creds_put_locked(struct eb_auth *a, const char *key, const struct eb_auth_creds *c)
{
	for (size_t i = 0; i < a->ncreds; i++) {
		if (strcmp(a->creds[i].key, key) == 0) {
			eb_auth_creds_release(&a->creds[i].creds);
			creds_copy(&a->creds[i].creds, c);
			return;
		}
	}
	EB_ALLOC_GROW(a->creds, a->ncreds + 1, a->creds_cap);
	a->creds[a->ncreds].key = eb_xstrdup(key);
	creds_copy(&a->creds[a->ncreds].creds, c);
	a->ncreds++;
}

void eb_auth_set_credentials(struct eb_auth *a, const char *registry,
			     const struct eb_auth_creds *creds)
{
	eb_autofree char *key = eb_auth_normalize_key(registry);

	pthread_mutex_lock(&a->lock);
	creds_put_locked(a, key, creds);
	pthread_mutex_unlock(&a->lock);
}

/* Credentials for registry: explicit or cached, else looked up once. */
static int get_creds(struct eb_auth *a, const char *registry, struct eb_auth_creds *out,
		     struct eb_error **err)
{
	eb_autofree char *key = eb_auth_normalize_key(registry);
	struct eb_auth_creds found = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ncreds; i++) {
		if (strcmp(a->creds[i].key, key) == 0) {
			creds_copy(out, &a->creds[i].creds);
			pthread_mutex_unlock(&a->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&a->lock);

	if (a->anonymous)
		rc = 0;
	else if (a->auth_file && access(a->auth_file, F_OK) < 0 && errno == ENOENT)
		rc = 0; /* an auth file that is not there yet: anonymous */
	else if (a->auth_file)
		rc = eb_auth_lookup_file(&found, a->auth_file, registry, err);
	else
		rc = eb_auth_lookup(&found, registry, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&a->lock);
	creds_put_locked(a, key, &found);
	pthread_mutex_unlock(&a->lock);
	*out = found;
	return 0;
}

static char *basic_value(const struct eb_auth_creds *c)
{
	eb_autofree char *raw = eb_xasprintf("%s:%s", c->username, c->password);
	char *b64 = eb_base64_encode(raw, strlen(raw));
	char *v = eb_xasprintf("Basic %s", b64);
	free_secret(b64);
	OPENSSL_cleanse(raw, strlen(raw));
	return v;
}

static char *token_key(const char *registry, const char *const *scopes)
{
	struct eb_buf b;
	eb_buf_init(&b, 0);
	if (eb_buf_adds(&b, registry) < 0)
		abort();
	for (size_t i = 0; scopes && scopes[i]; i++)
		if (eb_buf_addf(&b, " %s", scopes[i]) < 0)
			abort();
	return eb_buf_detach(&b, NULL);
}

/* A copy of a token for key that is still good, or NULL. */
static char *token_get(struct eb_auth *a, const char *key)
{
	char *t = NULL;
	time_t now = time(NULL);

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ntokens; i++) {
		if (strcmp(a->tokens[i].key, key) == 0) {
			if (now + TOKEN_MARGIN < a->tokens[i].expires)
				t = eb_xstrdup(a->tokens[i].token);
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return t;
}

static void token_put(struct eb_auth *a, const char *key, const char *token, time_t expires)
{
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ntokens; i++) {
		if (strcmp(a->tokens[i].key, key) == 0) {
			free_secret(a->tokens[i].token);
			a->tokens[i].token = eb_xstrdup(token);
			a->tokens[i].expires = expires;
			pthread_mutex_unlock(&a->lock);
			return;
		}
	}
	EB_ALLOC_GROW(a->tokens, a->ntokens + 1, a->tokens_cap);
	a->tokens[a->ntokens].key = eb_xstrdup(key);
	a->tokens[a->ntokens].token = eb_xstrdup(token);
	a->tokens[a->ntokens].expires = expires;
	a->ntokens++;
	pthread_mutex_unlock(&a->lock);
}

static void chal_put(struct eb_auth *a, const char *registry, int bearer, const char *realm,
		     const char *service)
{
	struct chal_entry *c = NULL;

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->nchals && !c; i++)
		if (strcmp(a->chals[i].registry, registry) == 0)
			c = &a->chals[i];
	if (!c) {
		EB_ALLOC_GROW(a->chals, a->nchals + 1, a->chals_cap);
		c = &a->chals[a->nchals++];
		memset(c, 0, sizeof(*c));
		c->registry = eb_xstrdup(registry);
	}
	free(c->realm);
	free(c->service);
	c->bearer = bearer;
	c->realm = dup_or_null(realm);
	c->service = dup_or_null(service);
	pthread_mutex_unlock(&a->lock);
}

/* Copy of the known challenge for registry; 0 if there is none. */
static int chal_get(struct eb_auth *a, const char *registry, struct chal_entry *out)
{
	int found = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->nchals; i++) {
		if (strcmp(a->chals[i].registry, registry) == 0) {
			out->bearer = a->chals[i].bearer;
			out->realm = dup_or_null(a->chals[i].realm);
			out->service = dup_or_null(a->chals[i].service);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return found;
}

static void chal_release(struct chal_entry *c)
{
	free(c->registry);
	free(c->realm);
	free(c->service);
	memset(c, 0, sizeof(*c));
}

/* Percent-encode for application/x-www-form-urlencoded. */
static int form_add(struct eb_buf *b, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	if (b->len)
		rc |= eb_buf_addc(b, '&');
	rc |= eb_buf_adds(b, name);
	rc |= eb_buf_addc(b, '=');
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p)) {
			rc |= eb_buf_addc(b, (char)*p);
		} else {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			rc |= eb_buf_add(b, e, 3);
		}
	}
	return rc ? -EB_ETOOBIG : 0;
}

/* RFC 3339 ("2024-05-01T10:00:00.123Z", "...+02:00") to time_t; -1 if
 * malformed. */
static time_t parse_rfc3339(const char *s)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, consumed = 0;
	const char *p;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &consumed) != 6 ||
	    consumed != 19)
		return -1;
	p = s + consumed;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (*p == 'Z' || *p == 'z') {
		return p[1] ? -1 : t;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
		   isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
		   isdigit((unsigned char)p[5]) && !p[6]) {
		long off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600L +
			   ((p[4] - '0') * 10 + (p[5] - '0')) * 60L;
		return *p == '+' ? t - off : t + off;
	}
	return -1;
}

/* The realm must not downgrade to http, and a public registry must not
 * send us to loopback, private or link-local addresses. */
static int check_realm(struct eb_http_client *http, const char *registry, const char *realm,
		       struct eb_error **err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL;
	eb_autofree char *endpoint = eb_http_registry_host(registry);
	int rc = 0;

	if (!u || curl_url_set(u, CURLUPART_URL, realm, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		rc = eb_error_set(err, EB_ENET, "registry '%s' sent an invalid token realm",
				  registry);
		goto done;
	}
	if (strcasecmp(scheme, "https") != 0 &&
	    !(strcasecmp(scheme, "http") == 0 && eb_http_plain_allowed(http, endpoint))) {
		rc = eb_error_set(err, EB_ENET,
				  "registry '%s' sent a token realm that is not https ('%s://%s')",
				  registry, scheme, host);
		goto done;
	}
	{
		struct in_addr a4;
		struct in6_addr a6;
		eb_autofree char *bare = host[0] == '[' ? eb_xstrndup(host + 1, strlen(host) - 2)
							: eb_xstrdup(host);
		int internal = 0;
		if (inet_pton(AF_INET, bare, &a4) == 1) {
			unsigned long ip = ntohl(a4.s_addr);
			internal = (ip >> 24) == 127 || (ip >> 24) == 10 || (ip >> 20) == 0xac1 ||
				   (ip >> 16) == 0xc0a8 || (ip >> 16) == 0xa9fe || ip == 0;
		} else if (inet_pton(AF_INET6, bare, &a6) == 1) {
			internal = IN6_IS_ADDR_LOOPBACK(&a6) || IN6_IS_ADDR_LINKLOCAL(&a6) ||
				   (a6.s6_addr[0] & 0xfe) == 0xfc || IN6_IS_ADDR_UNSPECIFIED(&a6);
		}
		if (internal && !eb_http_plain_allowed(http, endpoint)) {
			rc = eb_error_set(err, EB_ENET,
					  "registry '%s' sent a token realm on an internal address "
					  "('%s')",
					  registry, host);
			goto done;
		}
	}
done:
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

static char *realm_for_msg(const char *realm)
{
	CURLU *u = curl_url();
	char *host = NULL, *out;

	if (u && curl_url_set(u, CURLUPART_URL, realm, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		out = eb_xstrdup(host);
	else
		out = eb_xstrdup("(invalid)");
	curl_free(host);
	curl_url_cleanup(u);
	return out;
}

/* Read a token answer: token or access_token, expires_in, issued_at. */
static int parse_token(const struct eb_http_response *r, const char *registry,
		       const char *realm_host, char **token, time_t *expires, struct eb_error **err)
{
	json_t *doc = json_loadb(r->body.ptr, r->body.len, 0, NULL);
	const char *t, *issued;
	json_int_t life = 0;
	json_t *ei;
	time_t base = time(NULL);

	*token = NULL;
	t = json_string_value(json_object_get(doc, "token"));
	if (!t || !*t)
		t = json_string_value(json_object_get(doc, "access_token"));
	if (!t || !*t) {
		if (doc) {
			json_wipe(doc);
			json_decref(doc);
		}
		return eb_error_set(err, EB_ENET, "token server '%s' gave no token for '%s'",
				    realm_host, registry);
	}
	ei = json_object_get(doc, "expires_in");
	if (json_is_integer(ei))
		life = json_integer_value(ei);
	else if (json_is_real(ei))
		life = (json_int_t)json_real_value(ei);
	if (life < TOKEN_MIN_LIFETIME)
		life = TOKEN_MIN_LIFETIME;
	if (life > 86400 * 365)
		life = 86400 * 365;
	issued = json_string_value(json_object_get(doc, "issued_at"));
	if (issued) {
		time_t it = parse_rfc3339(issued);
		if (it != (time_t)-1)
			base = it;
	}
	*token = eb_xstrdup(t);
	*expires = base + (time_t)life;
	json_wipe(doc);
	json_decref(doc);
	return 0;
}

static int token_failure(const struct eb_http_response *r, const char *registry,
			 const char *realm_host, int had_creds, struct eb_error **err)
{
	int rc;

	if (r->status == 401 || r->status == 403) {
		rc = eb_error_set(err, EB_EFAIL, "token server '%s' refused %s for '%s' (%ld)",
				  realm_host, had_creds ? "the credentials" : "anonymous access",
				  registry, r->status);
		eb_error_hint(err, "check the credentials for '%s' (docker login, "
				   "$REGISTRY_AUTH_FILE or $DOCKER_CONFIG)",
			      registry);
		return rc;
	}
	return eb_error_set(err, EB_ENET, "token server '%s' answered %ld for '%s'", realm_host,
			    r->status, registry);
}

static void count_token_request(struct eb_auth *a)
{
	pthread_mutex_lock(&a->lock);
	a->token_requests++;
	pthread_mutex_unlock(&a->lock);
}

/* OAuth2 refresh_token grant (distribution's spec/auth/oauth.md).  *done is
 * 0 when the server does not do OAuth2 (404) and the GET flow should be
 * used instead. */
static int fetch_token_oauth(struct eb_auth *a, struct eb_http_client *http, const char *registry,
			     const char *realm, const char *service, const char *const *scopes,
			     const struct eb_auth_creds *creds, char **token, time_t *expires,
			     int *done, struct eb_error **err)
{
	static const char *const hdrs[] = { "Content-Type: application/x-www-form-urlencoded",
					    NULL };
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct eb_buf form, scope;
	eb_autofree char *realm_host = realm_for_msg(realm);
	int rc = 0;

	*done = 0;
	eb_buf_init(&form, 0);
	eb_buf_init(&scope, 0);
	for (size_t i = 0; scopes && scopes[i]; i++)
		if ((i && eb_buf_addc(&scope, ' ') < 0) || eb_buf_adds(&scope, scopes[i]) < 0)
			abort();
	if (form_add(&form, "grant_type", "refresh_token") < 0 ||
	    form_add(&form, "refresh_token", creds->identity_token) < 0 ||
	    form_add(&form, "client_id", a->client_id) < 0 ||
	    (service && form_add(&form, "service", service) < 0) ||
	    (scope.len && form_add(&form, "scope", scope.ptr) < 0))
		abort();
	req.method = "POST";
	req.url = realm;
	req.headers = hdrs;
	req.body_kind = EB_HTTP_BODY_MEM;
	req.body = form.ptr;
	req.body_len = form.len;
	req.max_body = TOKEN_RESPONSE_MAX;
	count_token_request(a);
	rc = eb_http_request(http, &req, &resp, err);
	OPENSSL_cleanse(form.ptr, form.len);
	eb_buf_release(&form);
	eb_buf_release(&scope);
	if (rc < 0) {
		eb_error_wrap(err, "getting a token for '%s'", registry);
		goto done;
	}
	if (resp.status == 404 || resp.status == 405)
		goto done; /* no OAuth2 here: the caller falls back to GET */
	*done = 1;
	if (resp.status != 200) {
		rc = token_failure(&resp, registry, realm_host, 1, err);
		goto done;
	}
	rc = parse_token(&resp, registry, realm_host, token, expires, err);
done:
	OPENSSL_cleanse(resp.body.ptr, resp.body.len);
	eb_http_response_release(&resp);
	return rc;
}

static int fetch_token_get(struct eb_auth *a, struct eb_http_client *http, const char *registry,
			   const char *realm, const char *service, const char *const *scopes,
			   const struct eb_auth_creds *creds, char **token, time_t *expires,
			   struct eb_error **err)
{
	const char *hdrs[2] = { NULL, NULL };
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	eb_autofree char *realm_host = realm_for_msg(realm);
	char *url = NULL, *auth_line = NULL;
	int have_basic = creds->username && creds->password;
	CURLU *u = curl_url();
	int rc;

	if (!u || curl_url_set(u, CURLUPART_URL, realm, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		return eb_error_set(err, EB_ENET, "registry '%s' sent an invalid token realm",
				    registry);
	}
	/* With CURLU_URLENCODE the part after the first '=' is encoded. */
	if (service) {
		eb_autofree char *q = eb_xasprintf("service=%s", service);
		curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	}
	for (size_t i = 0; scopes && scopes[i]; i++) {
		eb_autofree char *q = eb_xasprintf("scope=%s", scopes[i]);
		curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	}
	if (have_basic) {
		eb_autofree char *q = eb_xasprintf("account=%s", creds->username);
		curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	}
	{
		char *s = NULL;
		if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
			url = eb_xstrdup(s);
		curl_free(s);
	}
	curl_url_cleanup(u);
	if (!url)
		return eb_error_set(err, EB_ENET, "registry '%s' sent an invalid token realm",
				    registry);
	if (have_basic) {
		eb_autofree char *v = basic_value(creds);
		auth_line = eb_xasprintf("Authorization: %s", v);
		OPENSSL_cleanse(v, strlen(v));
		hdrs[0] = auth_line;
	}
	req.method = "GET";
	req.url = url;
	req.headers = hdrs;
	req.max_body = TOKEN_RESPONSE_MAX;
	count_token_request(a);
	rc = eb_http_request(http, &req, &resp, err);
	free_secret(auth_line);
	free(url);
	if (rc < 0) {
		eb_error_wrap(err, "getting a token for '%s'", registry);
		goto done;
	}
	if (resp.status != 200) {
		rc = token_failure(&resp, registry, realm_host, have_basic, err);
		goto done;
	}
	rc = parse_token(&resp, registry, realm_host, token, expires, err);
done:
	OPENSSL_cleanse(resp.body.ptr, resp.body.len);
	eb_http_response_release(&resp);
	return rc;
}

static int fetch_token(struct eb_auth *a, struct eb_http_client *http, const char *registry,
		       const char *realm, const char *service, const char *const *scopes,
		       char **token, time_t *expires, struct eb_error **err)
{
	struct eb_auth_creds creds;
	int rc, done = 0;

	*token = NULL;
	rc = check_realm(http, registry, realm, err);
	if (rc < 0)
		return rc;
	rc = get_creds(a, registry, &creds, err);
	if (rc < 0)
		return rc;
	if (creds.registry_token) {
		/* a ready-made bearer token from the config file */
		*token = eb_xstrdup(creds.registry_token);
		*expires = time(NULL) + TOKEN_MIN_LIFETIME;
		eb_auth_creds_release(&creds);
		return 0;
	}
	if (creds.identity_token)
		rc = fetch_token_oauth(a, http, registry, realm, service, scopes, &creds, token,
				       expires, &done, err);
	if (rc == 0 && !done)
		rc = fetch_token_get(a, http, registry, realm, service, scopes, &creds, token,
				     expires, err);
	eb_auth_creds_release(&creds);
	return rc;
}

/* 1 if action (a word) is in the comma-separated list acts[0..n). */
static int has_action(const char *acts, size_t n, const char *action, size_t an)
{
	const char *p = acts, *end = acts + n;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if (len == an && memcmp(p, action, an) == 0)
			return 1;
		p += len + 1;
	}
	return 0;
}

/* 1 if scope `have` grants everything `want` asks for: same
 * "type:name" and every action of want.  The name may hold a ':' (a
 * port), so the actions are what follows the last ':'. */
static int scope_covers(const char *have, const char *want)
{
	const char *hc = strrchr(have, ':'), *wc = strrchr(want, ':');
	const char *p;

	if (strcmp(have, want) == 0)
		return 1;
	if (!hc || !wc || hc - have != wc - want || memcmp(have, want, (size_t)(hc - have)))
		return 0;
	for (p = wc + 1; *p;) {
		size_t len = strcspn(p, ",");
		if (len && !has_action(hc + 1, strlen(hc + 1), p, len))
			return 0;
		p += len + (p[len] == ',');
	}
	return 1;
}

static char *bearer_value(const char *token)
{
	return eb_xasprintf("Bearer %s", token);
}

int eb_auth__prepare(struct eb_auth *a, struct eb_http_client *http, const char *registry,
		     const char *const *scopes, char **out, struct eb_error **err)
{
	struct chal_entry ch;
	eb_autofree char *key = NULL;
	char *tok;
	time_t expires;
	int rc = 0;

	*out = NULL;
	if (!chal_get(a, registry, &ch))
		return 0;
	if (!ch.bearer) {
		struct eb_auth_creds creds;
		rc = get_creds(a, registry, &creds, err);
		if (rc == 0 && creds.username && creds.password)
			*out = basic_value(&creds);
		eb_auth_creds_release(&creds);
		goto done;
	}
	key = token_key(registry, scopes);
	tok = token_get(a, key);
	if (!tok) {
		rc = fetch_token(a, http, registry, ch.realm, ch.service, scopes, &tok, &expires,
				 err);
		if (rc < 0)
			goto done;
		token_put(a, key, tok, expires);
	}
	*out = bearer_value(tok);
	free_secret(tok);
done:
	chal_release(&ch);
	return rc;
}

int eb_auth__challenged(struct eb_auth *a, struct eb_http_client *http, const char *registry,
			const char *const *scopes, const char *www_authenticate, char **out,
			struct eb_error **err)
{
	struct eb_auth_challenge *list = NULL;
	size_t n = 0;
	const struct eb_auth_challenge *pick = NULL;
	struct chal_entry ch = { 0 };
	const char **all = NULL;
	size_t nall = 0;
	char *splits = NULL;
	eb_autofree char *key = NULL;
	char *tok = NULL;
	time_t expires;
	int rc = 0;

	*out = NULL;
	if (www_authenticate) {
		rc = eb_auth_parse_challenges(&list, &n, www_authenticate, err);
		if (rc < 0) {
			eb_error_wrap(err, "registry '%s' sent a bad challenge", registry);
			return rc;
		}
		pick = eb_auth_pick_challenge(list, n);
		if (!pick)
			goto done; /* nothing we speak */
		if (strcmp(pick->scheme, "bearer") == 0 && !eb_auth_challenge_param(pick, "realm")) {
			rc = eb_error_set(err, EB_ENET,
					  "registry '%s' sent a bearer challenge without a realm",
					  registry);
			goto done;
		}
		chal_put(a, registry, strcmp(pick->scheme, "bearer") == 0,
			 eb_auth_challenge_param(pick, "realm"), eb_auth_challenge_param(pick, "service"));
	}
	/* Some registries (GCR) have answered 401 without a challenge: the
	 * one seen before still applies. */
	if (!chal_get(a, registry, &ch))
		goto done;

	if (!ch.bearer) {
		struct eb_auth_creds creds;
		rc = get_creds(a, registry, &creds, err);
		if (rc == 0 && creds.username && creds.password)
			*out = basic_value(&creds);
		eb_auth_creds_release(&creds);
		goto done;
	}

	/* Our scopes first, then any the registry says it needs
	 * (insufficient_scope names them). */
	for (size_t i = 0; scopes && scopes[i]; i++) {
		all = eb_xreallocarray(all, nall + 2, sizeof(*all));
		all[nall++] = scopes[i];
	}
	if (pick && eb_auth_challenge_param(pick, "scope")) {
		/* a space-separated list; split it in place */
		splits = eb_xstrdup(eb_auth_challenge_param(pick, "scope"));
		for (char *s = splits; *s;) {
			char *tokn = s;
			int dup = 0;
			s += strcspn(s, " ");
			if (*s)
				*s++ = '\0';
			for (size_t i = 0; i < nall && !dup; i++)
				dup = scope_covers(all[i], tokn);
			if (dup || !*tokn)
				continue;
			all = eb_xreallocarray(all, nall + 2, sizeof(*all));
			all[nall++] = tokn;
		}
	}
	if (all)
		all[nall] = NULL;

	rc = fetch_token(a, http, registry, ch.realm, ch.service, all, &tok, &expires, err);
	if (rc < 0)
		goto done;
	/* Cached under the scopes asked for, so the next request with the
	 * same scopes gets the token that worked. */
	key = token_key(registry, scopes);
	token_put(a, key, tok, expires);
	*out = bearer_value(tok);
	free_secret(tok);

done:
	free(all);
	free(splits);
	chal_release(&ch);
	eb_auth_challenges_free(list, n);
	return rc;
}

/* ---- hooks for net/http.c ------------------------------------------- */

static int hook_prepare(void *state, struct eb_http_client *http, const char *registry,
			const char *const *scopes, char **out, struct eb_error **err)
{
	return eb_auth__prepare(state, http, registry, scopes, out, err);
}

static int hook_challenged(void *state, struct eb_http_client *http, const char *registry,
			   const char *const *scopes, const char *www_authenticate, char **out,
			   struct eb_error **err)
{
	return eb_auth__challenged(state, http, registry, scopes, www_authenticate, out, err);
}

struct eb_http_auth eb_auth_http_hooks(struct eb_auth *a)
{
	struct eb_http_auth h = { a, hook_prepare, hook_challenged };
	return h;
}
