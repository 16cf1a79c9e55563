/*
 * check_auth.c - registry auth without a network: the WWW-Authenticate
 * parser (a table of well-formed, odd and malformed headers), base64 edge
 * cases, auth-file key normalisation, a config.json matrix (auths entries,
 * credHelpers and credsStore precedence, $REGISTRY_AUTH_FILE and
 * $DOCKER_CONFIG), a fake docker-credential-test helper on PATH, and
 * checks that no error message carries a secret.
 */
#include "config.h"

#include <ctype.h>
#include <sys/stat.h>

#include "registry/auth.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/encode.h"
#include "util/fs.h"
#include "testutil.h"

/* ---- challenge parser ------------------------------------------------ */

/* Render parsed challenges as "scheme{k=v;k=v} scheme[token68]" so the
 * table can say what it expects in one string; "ERR" for a parse error. */
static char *render(const char *header)
{
	struct eb_auth_challenge *c;
	struct eb_error *err = NULL;
	struct eb_buf b;
	size_t n;

	if (eb_auth_parse_challenges(&c, &n, header, &err) < 0) {
		ck_assert_ptr_nonnull(err);
		ck_assert_ptr_nonnull(strstr(err->msg, "malformed WWW-Authenticate header at column"));
		eb_error_free(err);
		return eb_xstrdup("ERR");
	}
	ck_assert_ptr_null(err);
	eb_buf_init(&b, 0);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(eb_buf_addf(&b, "%s%s", i ? " " : "", c[i].scheme), 0);
		if (c[i].token68)
			ck_assert_int_eq(eb_buf_addf(&b, "[%s]", c[i].token68), 0);
		else
			ck_assert_int_eq(eb_buf_addc(&b, '{'), 0);
		for (size_t j = 0; j < c[i].nparams; j++)
			ck_assert_int_eq(eb_buf_addf(&b, "%s%s=%s", j ? ";" : "", c[i].params[j].name,
						     c[i].params[j].value),
					 0);
		if (!c[i].token68)
			ck_assert_int_eq(eb_buf_addc(&b, '}'), 0);
	}
	eb_auth_challenges_free(c, n);
	return eb_buf_detach(&b, NULL);
}

static const struct {
	const char *header;
	const char *want;
} challenge_cases[] = {
	{ "Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
	  "scope=\"repository:library/python:pull\"",
	  "bearer{realm=https://auth.docker.io/token;service=registry.docker.io;"
	  "scope=repository:library/python:pull}" },
	{ "Basic realm=\"Registry Realm\"", "basic{realm=Registry Realm}" },
	/* several challenges in one header */
	{ "Basic realm=\"x\", Bearer realm=\"https://t\",service=\"s\"",
	  "basic{realm=x} bearer{realm=https://t;service=s}" },
	{ "Bearer a=b, c=d, Basic e=f", "bearer{a=b;c=d} basic{e=f}" },
	{ "Bearer,Basic", "bearer{} basic{}" },
	{ "Bearer", "bearer{}" },
	/* quoted strings with escapes */
	{ "Bearer realm=\"a\\\"b\\\\c\"", "bearer{realm=a\"b\\c}" },
	{ "Bearer realm=\"\\x\\y\"", "bearer{realm=xy}" },
	{ "Bearer realm=\"with, comma\",service=\"s\"", "bearer{realm=with, comma;service=s}" },
	{ "Bearer realm=\"\"", "bearer{realm=}" },
	/* token68 */
	{ "Negotiate abc==", "negotiate[abc==]" },
	{ "Negotiate a/b+c~d", "negotiate[a/b+c~d]" },
	{ "Negotiate abc==, Basic realm=x", "negotiate[abc==] basic{realm=x}" },
	{ "Bearer realm=", "bearer[realm=]" },
	/* tokens, case, whitespace, empty list elements */
	{ "Bearer realm=unquoted,service=svc", "bearer{realm=unquoted;service=svc}" },
	{ "  ,Bearer  realm = \"spaced\" , service=\"s\",,", "bearer{realm=spaced;service=s}" },
	{ "BEARER REALM=\"X\"", "bearer{realm=X}" },
	{ "Bearer realm=\"x\",error=\"insufficient_scope\","
	  "scope=\"repository:a:pull repository:b:pull\"",
	  "bearer{realm=x;error=insufficient_scope;scope=repository:a:pull repository:b:pull}" },
	/* a repeated parameter keeps the first */
	{ "Basic realm=\"x\",realm=\"y\"", "basic{realm=x}" },
	{ "", "" },
	{ " , ,", "" },
	/* malformed */
	{ "Bearer realm=\"unterminated", "ERR" },
	{ "Bearer realm=\"x\\", "ERR" },
	{ "realm=\"x\"", "ERR" },
	{ "Bearer \"quoted\"", "ERR" },
	{ "Bearer realm=\"x\" service=\"y\"", "ERR" },
	{ "Bearer realm=\"x\"garbage", "ERR" },
	{ "Negotiate abc== def", "ERR" },
	{ "(Bearer)", "ERR" },
	{ "Bearer realm=@", "ERR" },
};

START_TEST(test_challenge_table)
{
	char *got = render(challenge_cases[_i].header);
	ck_assert_msg(strcmp(got, challenge_cases[_i].want) == 0, "header [%s]: got [%s], want [%s]",
		      challenge_cases[_i].header, got, challenge_cases[_i].want);
	free(got);
}
END_TEST

START_TEST(test_challenge_pick)
{
	static const struct {
		const char *header;
		const char *want; /* scheme picked, or NULL */
	} cases[] = {
		{ "Basic realm=a, Bearer realm=b", "bearer" },
		{ "Bearer realm=b, Basic realm=a", "bearer" },
		{ "Negotiate x, Basic realm=a", "basic" },
		{ "Negotiate x", NULL },
		{ "", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct eb_auth_challenge *c;
		const struct eb_auth_challenge *p;
		size_t n;
		ck_assert_int_eq(eb_auth_parse_challenges(&c, &n, cases[i].header, NULL), 0);
		p = eb_auth_pick_challenge(c, n);
		if (cases[i].want) {
			ck_assert_ptr_nonnull(p);
			ck_assert_str_eq(p->scheme, cases[i].want);
		} else {
			ck_assert_ptr_null(p);
		}
		eb_auth_challenges_free(c, n);
	}
}
END_TEST

START_TEST(test_challenge_param_lookup)
{
	struct eb_auth_challenge *c;
	size_t n;

	ck_assert_int_eq(eb_auth_parse_challenges(&c, &n, "Bearer Realm=\"R\",SERVICE=s", NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(eb_auth_challenge_param(&c[0], "realm"), "R");
	ck_assert_str_eq(eb_auth_challenge_param(&c[0], "Service"), "s");
	ck_assert_ptr_null(eb_auth_challenge_param(&c[0], "scope"));
	eb_auth_challenges_free(c, n);
}
END_TEST

/* ---- base64 ------------------------------------------------------------ */

START_TEST(test_base64)
{
	static const struct {
		const char *plain, *b64;
	} enc[] = {
		{ "", "" },	    { "f", "Zg==" },	     { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" }, { "user:pass", "dXNlcjpwYXNz" },
	};
	static const struct {
		const char *in;
		const char *want; /* NULL: rejected */
	} dec[] = {
		{ "Zm9v", "foo" },   { "Zg==", "f" },	   { "Zg", "f" },	/* unpadded */
		{ "Zm8", "fo" },     { "Zm8=", "fo" },	   { "", "" },
		{ "Zg=", NULL },     { "Z", NULL },	   { "Zm9v!", NULL },
		{ "Zm 9v", NULL },   { "=Zm9", NULL },	   { "Zm9v\n", NULL },
		{ "Zg===", NULL },   { "Zm9=v", NULL },	   { "Zm9vYg==Zg==", NULL },
		{ "+/+/", "\xfb\xff\xbf" },
	};

	for (size_t i = 0; i < sizeof(enc) / sizeof(*enc); i++) {
		char *e = eb_base64_encode(enc[i].plain, strlen(enc[i].plain));
		char *d;
		size_t len;
		ck_assert_str_eq(e, enc[i].b64);
		d = eb_base64_decode(e, &len);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(len, strlen(enc[i].plain));
		ck_assert_str_eq(d, enc[i].plain);
		free(e);
		free(d);
	}
	for (size_t i = 0; i < sizeof(dec) / sizeof(*dec); i++) {
		char *d = eb_base64_decode(dec[i].in, NULL);
		if (dec[i].want) {
			ck_assert_msg(d != NULL, "'%s' rejected", dec[i].in);
			ck_assert_str_eq(d, dec[i].want);
		} else {
			ck_assert_msg(d == NULL, "'%s' accepted", dec[i].in);
		}
		free(d);
	}
	/* binary with a NUL inside: the length tells */
	{
		const char bin[] = { 'a', 0, 'b' };
		char *e = eb_base64_encode(bin, 3);
		size_t len;
		char *d = eb_base64_decode(e, &len);
		ck_assert_uint_eq(len, 3);
		ck_assert_int_eq(memcmp(d, bin, 3), 0);
		free(e);
		free(d);
	}
}
END_TEST

START_TEST(test_decode_basic)
{
	static const struct {
		const char *raw;
		size_t rawlen;
		const char *user, *pass; /* user NULL: rejected */
	} cases[] = {
		{ "user:pass", 9, "user", "pass" },
		{ "user:pa:ss", 10, "user", "pa:ss" }, /* split at the first ':' */
		{ "user:", 5, "user", "" },
		{ "user:pass\0\0", 11, "user", "pass" }, /* NULs trimmed, as docker */
		{ "user:\0pass", 10, "user", "pass" },
		{ ":pass", 5, NULL, NULL },
		{ "justuser", 8, NULL, NULL },
		{ "", 0, NULL, NULL },
		{ "us\0er:pass", 10, NULL, NULL },
		{ "user:pa\0ss", 10, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *b64 = eb_base64_encode(cases[i].raw, cases[i].rawlen);
		char *u, *p;
		struct eb_error *err = NULL;
		int rc = eb_auth_decode_basic(b64, &u, &p, &err);
		if (cases[i].user) {
			ck_assert_msg(rc == 0, "case %zu rejected", i);
			ck_assert_str_eq(u, cases[i].user);
			ck_assert_str_eq(p, cases[i].pass);
		} else {
			ck_assert_msg(rc == -EB_EINVALID, "case %zu accepted", i);
			ck_assert_ptr_null(u);
			ck_assert_ptr_null(p);
			ck_assert_ptr_nonnull(err);
		}
		eb_error_free(err);
		free(u);
		free(p);
		free(b64);
	}
}
END_TEST

/* ---- keys and scopes ------------------------------------------------- */

START_TEST(test_normalize_key)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "https://index.docker.io/v1/", "index.docker.io" },
		{ "docker.io", "index.docker.io" },
		{ "registry-1.docker.io", "index.docker.io" },
		{ "https://registry-1.docker.io/v2/", "index.docker.io" },
		{ "index.docker.io", "index.docker.io" },
		{ "http://localhost:5000", "localhost:5000" },
		{ "localhost:5000/", "localhost:5000" },
		{ "https://ghcr.io/v2/", "ghcr.io" },
		{ "GHCR.IO", "ghcr.io" },
		{ "quay.io/org/repo", "quay.io" },
		{ "[::1]:5000", "[::1]:5000" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *k = eb_auth_normalize_key(cases[i].in);
		ck_assert_msg(strcmp(k, cases[i].want) == 0, "%s -> %s", cases[i].in, k);
		free(k);
	}
}
END_TEST

START_TEST(test_scope)
{
	char *s = eb_http_scope("library/python", 0);
	ck_assert_str_eq(s, "repository:library/python:pull");
	free(s);
	s = eb_http_scope("org/app", 1);
	ck_assert_str_eq(s, "repository:org/app:pull,push");
	free(s);
}
END_TEST

/* ---- config files ------------------------------------------------------ */

static char *b64(const char *s)
{
	return eb_base64_encode(s, strlen(s));
}

/* The matrix file: every way an auths entry can hold credentials. */
static char *write_matrix(const char *dir)
{
	char *hub = b64("hubuser:hubpass");
	char *local = b64("local:pw:with:colons");
	char *nocolon = b64("justuser");
	char *text = eb_xasprintf(
		"{\n"
		"  \"auths\": {\n"
		"    \"https://index.docker.io/v1/\": {\"auth\": \"%s\"},\n"
		"    \"ghcr.io\": {\"username\": \"ghuser\", \"password\": \"ghpass\"},\n"
		"    \"http://localhost:5000\": {\"auth\": \"%s\"},\n"
		"    \"https://quay.io/v2/\": {\"identitytoken\": \"idtok\"},\n"
		"    \"reg.example.com\": {\"registrytoken\": \"rtok\"},\n"
		"    \"bad.example.com\": {\"auth\": \"!!notbase64!!\"},\n"
		"    \"nocolon.example.com\": {\"auth\": \"%s\"},\n"
		"    \"empty.example.com\": {},\n"
		"    \"both.example.com\": {\"auth\": \"%s\", \"username\": \"ignored\"}\n"
		"  },\n"
		"  \"HttpHeaders\": {\"User-Agent\": \"x\"}\n"
		"}\n",
		hub, local, nocolon, hub);
	char *path = eb_xasprintf("%s/config.json", dir);

	eb_test_write(dir, "config.json", text);
	free(hub);
	free(local);
	free(nocolon);
	free(text);
	return path;
}

static void expect_creds(const char *path, const char *registry, const char *user,
			 const char *pass, const char *idt, const char *rgt)
{
	struct eb_auth_creds c;
	struct eb_error *err = NULL;
	int rc = eb_auth_lookup_file(&c, path, registry, &err);

	ck_assert_msg(rc == 0, "%s: %s", registry, err ? err->msg : "?");
#define EQ_OR_NULL(got, want)                                                        \
	do {                                                                         \
		if (want)                                                            \
			ck_assert_msg((got) && strcmp((got), (want)) == 0, "%s: %s",  \
				      registry, #got);                               \
		else                                                                 \
			ck_assert_msg((got) == NULL, "%s: %s set", registry, #got);  \
	} while (0)
	EQ_OR_NULL(c.username, user);
	EQ_OR_NULL(c.password, pass);
	EQ_OR_NULL(c.identity_token, idt);
	EQ_OR_NULL(c.registry_token, rgt);
#undef EQ_OR_NULL
	eb_auth_creds_release(&c);
}

START_TEST(test_config_matrix)
{
	char *dir = eb_test_tmpdir();
	char *path = write_matrix(dir);
	struct eb_auth_creds c;
	struct eb_error *err = NULL;

	/* Hub under all its names */
	expect_creds(path, "docker.io", "hubuser", "hubpass", NULL, NULL);
	expect_creds(path, "index.docker.io", "hubuser", "hubpass", NULL, NULL);
	expect_creds(path, "registry-1.docker.io", "hubuser", "hubpass", NULL, NULL);
	expect_creds(path, "ghcr.io", "ghuser", "ghpass", NULL, NULL);
	expect_creds(path, "GHCR.io", "ghuser", "ghpass", NULL, NULL);
	expect_creds(path, "localhost:5000", "local", "pw:with:colons", NULL, NULL);
	expect_creds(path, "quay.io", NULL, NULL, "idtok", NULL);
	expect_creds(path, "reg.example.com", NULL, NULL, NULL, "rtok");
	expect_creds(path, "empty.example.com", NULL, NULL, NULL, NULL);
	expect_creds(path, "other.example.com", NULL, NULL, NULL, NULL);
	expect_creds(path, "localhost:5001", NULL, NULL, NULL, NULL);
	/* "auth" wins over username/password */
	expect_creds(path, "both.example.com", "hubuser", "hubpass", NULL, NULL);

	/* broken entries are errors naming the entry, not its content */
	ck_assert_int_eq(eb_auth_lookup_file(&c, path, "bad.example.com", &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "'bad.example.com'"));
	ck_assert_ptr_null(strstr(err->msg, "notbase64"));
	ck_assert(eb_auth_creds_empty(&c));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_auth_lookup_file(&c, path, "nocolon.example.com", &err), -EB_EINVALID);
	ck_assert_ptr_null(strstr(err->msg, "justuser"));
	eb_error_clear(&err);

	/* a file that is not there */
	ck_assert_int_eq(eb_auth_lookup_file(&c, "/nonexistent/config.json", "ghcr.io", &err),
			 -EB_ENOTFOUND);
	eb_error_clear(&err);

	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(test_config_exact_key_wins)
{
	char *dir = eb_test_tmpdir();
	char *a = b64("exact:one"), *b = b64("normalised:two");
	char *text = eb_xasprintf("{\"auths\":{\"https://index.docker.io/v1/\":{\"auth\":\"%s\"},"
				  "\"docker.io\":{\"auth\":\"%s\"}}}",
				  b, a);
	char *path = eb_xasprintf("%s/config.json", dir);

	eb_test_write(dir, "config.json", text);
	expect_creds(path, "docker.io", "exact", "one", NULL, NULL);
	/* Hub's own URL key is exact for any Hub name */
	expect_creds(path, "index.docker.io", "normalised", "two", NULL, NULL);
	unlink(path);
	rmdir(dir);
	free(path);
	free(text);
	free(a);
	free(b);
	free(dir);
}
END_TEST

START_TEST(test_config_malformed_no_secret)
{
	char *dir = eb_test_tmpdir();
	char *path = eb_xasprintf("%s/config.json", dir);
	struct eb_auth_creds c;
	struct eb_error *err = NULL;

	/* the parse error sits right at the secret */
	eb_test_write(dir, "config.json",
		      "{\"auths\":{\"x\":{\"password\": Super-Secret-Pw}}}");
	ck_assert_int_eq(eb_auth_lookup_file(&c, path, "x", &err), -EB_EINVALID);
	ck_assert_ptr_null(strstr(err->msg, "Super"));
	ck_assert_ptr_null(strstr(err->msg, "Secret"));
	ck_assert_ptr_nonnull(strstr(err->msg, "is not valid JSON"));
	ck_assert_uint_eq(err->line, 1);
	ck_assert_uint_gt(err->col, 0);
	eb_error_clear(&err);

	eb_test_write(dir, "config.json", "[1,2]");
	ck_assert_int_eq(eb_auth_lookup_file(&c, path, "x", &err), -EB_EINVALID);
	eb_error_clear(&err);

	/* duplicate keys: the last wins, as with docker */
	eb_test_write(dir, "config.json",
		      "{\"auths\":{\"x\":{\"username\":\"first\",\"password\":\"1\"}},"
		      "\"auths\":{\"x\":{\"username\":\"last\",\"password\":\"2\"}}}");
	expect_creds(path, "x", "last", "2", NULL, NULL);

	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}
END_TEST

/* ---- helpers on PATH ------------------------------------------------- */

struct helper_env {
	char *dir;
	char *log;
	char *old_path;
};

static void write_script(const char *dir, const char *name, const char *body)
{
	char *path = eb_xasprintf("%s/%s", dir, name);
	eb_test_write(dir, name, body);
	ck_assert_int_eq(chmod(path, 0755), 0);
	free(path);
}

/* docker-credential-test: answers by server URL and logs what it was
 * asked; docker-credential-other: answers everything with other-user. */
static void helpers_setup(struct helper_env *h)
{
	const char *path = getenv("PATH");
	char *script, *newpath;

	h->dir = eb_test_tmpdir();
	h->log = eb_xasprintf("%s/helper.log", h->dir);
	h->old_path = path ? eb_xstrdup(path) : NULL;
	script = eb_xasprintf(
		"#!/bin/sh\n"
		"[ \"$1\" = get ] || { echo \"unexpected $1\"; exit 2; }\n"
		"read -r url || true\n"
		"printf '%%s\\n' \"$url\" >> '%s'\n"
		"case \"$url\" in\n"
		"ghcr.io) printf '{\"ServerURL\":\"ghcr.io\",\"Username\":\"helper-user\","
		"\"Secret\":\"helper-secret\"}' ;;\n"
		"https://index.docker.io/v1/) printf '{\"ServerURL\":\"%%s\",\"Username\":"
		"\"hubhelper\",\"Secret\":\"hubsecret\"}' \"$url\" ;;\n"
		"tok.example.com) printf '{\"ServerURL\":\"tok.example.com\",\"Username\":"
		"\"<token>\",\"Secret\":\"identity-abc\"}' ;;\n"
		"fail.example.com) echo 'boom: keychain locked'; echo 'second line'; exit 1 ;;\n"
		"garbage.example.com) echo 'not json, helper-secret'; exit 0 ;;\n"
		"*) echo 'credentials not found in native keychain'; exit 1 ;;\n"
		"esac\n",
		h->log);
	write_script(h->dir, "docker-credential-test", script);
	free(script);
	write_script(h->dir, "docker-credential-other",
		     "#!/bin/sh\ncat >/dev/null\n"
		     "printf '{\"ServerURL\":\"x\",\"Username\":\"other-user\",\"Secret\":\"other-pw\"}'\n");
	/* exits without reading its input: must not kill us with SIGPIPE */
	write_script(h->dir, "docker-credential-deaf",
		     "#!/bin/sh\nprintf '{\"Username\":\"deaf\",\"Secret\":\"d\"}'\n");
	newpath = eb_xasprintf("%s:%s", h->dir, path ? path : "/usr/bin:/bin");
	setenv("PATH", newpath, 1);
	free(newpath);
}

static void helpers_teardown(struct helper_env *h)
{
	char *cmd = eb_xasprintf("rm -rf '%s'", h->dir);
	if (h->old_path)
		setenv("PATH", h->old_path, 1);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(h->old_path);
	free(h->log);
	free(h->dir);
}

START_TEST(test_helper_direct)
{
	struct helper_env h;
	struct eb_auth_creds c;
	struct eb_error *err = NULL;
	struct eb_buf log;

	helpers_setup(&h);
	ck_assert_int_eq(eb_auth_run_helper(&c, "test", "ghcr.io", &err), 0);
	ck_assert_str_eq(c.username, "helper-user");
	ck_assert_str_eq(c.password, "helper-secret");
	eb_auth_creds_release(&c);

	/* "<token>" is an identity token */
	ck_assert_int_eq(eb_auth_run_helper(&c, "test", "tok.example.com", &err), 0);
	ck_assert_ptr_null(c.username);
	ck_assert_ptr_null(c.password);
	ck_assert_str_eq(c.identity_token, "identity-abc");
	eb_auth_creds_release(&c);

	/* "credentials not found": anonymous, not an error */
	ck_assert_int_eq(eb_auth_run_helper(&c, "test", "nothing.example.com", &err), 0);
	ck_assert(eb_auth_creds_empty(&c));
	ck_assert_ptr_null(err);

	/* a failing helper: its first line, nothing more */
	ck_assert_int_eq(eb_auth_run_helper(&c, "test", "fail.example.com", &err), -EB_EFAIL);
	ck_assert_str_eq(err->msg, "credential helper 'docker-credential-test' failed for "
				   "'fail.example.com' (exit status 1): boom: keychain locked");
	eb_error_clear(&err);

	/* output that is not JSON is not quoted back (it may hold secrets) */
	ck_assert_int_eq(eb_auth_run_helper(&c, "test", "garbage.example.com", &err), -EB_EFAIL);
	ck_assert_ptr_null(strstr(err->msg, "helper-secret"));
	eb_error_clear(&err);

	ck_assert_int_eq(eb_auth_run_helper(&c, "deaf", "ghcr.io", &err), 0);
	ck_assert_str_eq(c.username, "deaf");
	eb_auth_creds_release(&c);

	{ int rc_ = eb_auth_run_helper(&c, "missing", "ghcr.io", &err); ck_assert_msg(rc_ == -EB_ENOTFOUND, "rc %d: %s", rc_, err ? err->msg : ""); }
	ck_assert_str_eq(err->msg, "credential helper 'docker-credential-missing' not found on PATH");
	eb_error_clear(&err);

	/* a name from a config file must not become a path */
	ck_assert_int_eq(eb_auth_run_helper(&c, "../../bin/sh", "ghcr.io", &err), -EB_EINVALID);
	eb_error_clear(&err);

	/* the server URL went in on stdin */
	eb_buf_init(&log, 0);
	ck_assert_int_eq(eb_fs_read_file(&log, h.log, 0, NULL), 0);
	ck_assert_str_eq(log.ptr, "ghcr.io\ntok.example.com\nnothing.example.com\n"
				  "fail.example.com\ngarbage.example.com\n");
	eb_buf_release(&log);
	helpers_teardown(&h);
}
END_TEST

START_TEST(test_helper_precedence)
{
	struct helper_env h;
	char *path;
	struct eb_auth_creds c;
	struct eb_error *err = NULL;
	struct eb_buf log;

	helpers_setup(&h);
	path = eb_xasprintf("%s/config.json", h.dir);
	eb_test_write(h.dir, "config.json",
		      "{\"auths\":{\"ghcr.io\":{\"username\":\"file-user\",\"password\":\"file-pw\"},"
		      "\"quay.io\":{\"username\":\"file-user\",\"password\":\"file-pw\"}},"
		      "\"credHelpers\":{\"https://ghcr.io\":\"test\",\"docker.io\":\"test\"},"
		      "\"credsStore\":\"other\"}");
	/* credHelpers[host] beats credsStore and auths (keys normalised) */
	expect_creds(path, "ghcr.io", "helper-user", "helper-secret", NULL, NULL);
	/* Hub's helper is asked with Hub's historical URL */
	expect_creds(path, "docker.io", "hubhelper", "hubsecret", NULL, NULL);
	/* credsStore beats the auths entry */
	expect_creds(path, "quay.io", "other-user", "other-pw", NULL, NULL);

	/* without a store, the file answers */
	eb_test_write(h.dir, "config.json",
		      "{\"auths\":{\"ghcr.io\":{\"username\":\"file-user\",\"password\":\"file-pw\"},"
		      "\"quay.io\":{\"username\":\"file-user\",\"password\":\"file-pw\"}},"
		      "\"credHelpers\":{\"ghcr.io\":\"test\"}}");
	expect_creds(path, "ghcr.io", "helper-user", "helper-secret", NULL, NULL);
	expect_creds(path, "quay.io", "file-user", "file-pw", NULL, NULL);

	/* a helper that says "not found" means anonymous */
	eb_test_write(h.dir, "config.json", "{\"credsStore\":\"test\"}");
	expect_creds(path, "unknown.example.com", NULL, NULL, NULL, NULL);

	/* a configured store that is missing is an error, as with docker */
	eb_test_write(h.dir, "config.json", "{\"credsStore\":\"desktop-gone\"}");
	ck_assert_int_eq(eb_auth_lookup_file(&c, path, "ghcr.io", &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, "docker-credential-desktop-gone"));
	eb_error_clear(&err);

	eb_buf_init(&log, 0);
	ck_assert_int_eq(eb_fs_read_file(&log, h.log, 0, NULL), 0);
	ck_assert_str_eq(log.ptr, "ghcr.io\nhttps://index.docker.io/v1/\nghcr.io\n"
				  "unknown.example.com\n");
	eb_buf_release(&log);
	free(path);
	helpers_teardown(&h);
}
END_TEST

/* ---- where files are looked for ---------------------------------------- */

struct saved_env {
	char *name, *value;
};

static void env_save(struct saved_env *s, const char *name)
{
	const char *v = getenv(name);
	s->name = eb_xstrdup(name);
	s->value = v ? eb_xstrdup(v) : NULL;
}

static void env_restore(struct saved_env *s)
{
	if (s->value)
		setenv(s->name, s->value, 1);
	else
		unsetenv(s->name);
	free(s->name);
	free(s->value);
}

START_TEST(test_lookup_locations)
{
	struct saved_env saved[3];
	char *dir = eb_test_tmpdir();
	char *authfile = eb_xasprintf("%s/auth.json", dir);
	char *dconf = eb_xasprintf("%s/dconf", dir);
	char *home = eb_xasprintf("%s/home", dir);
	char *cmd;
	char *ga = b64("from-authfile:a"), *gb = b64("from-docker:b"), *qc = b64("quay-docker:c"),
	     *hh = b64("from-home:h");
	char *t;
	struct eb_auth_creds c;
	struct eb_error *err = NULL;

	env_save(&saved[0], "REGISTRY_AUTH_FILE");
	env_save(&saved[1], "DOCKER_CONFIG");
	env_save(&saved[2], "HOME");
	cmd = eb_xasprintf("mkdir -p '%s' '%s/.docker'", dconf, home);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	t = eb_xasprintf("{\"auths\":{\"ghcr.io\":{\"auth\":\"%s\"}}}", ga);
	eb_test_write(dir, "auth.json", t);
	free(t);
	t = eb_xasprintf("{\"auths\":{\"ghcr.io\":{\"auth\":\"%s\"},\"quay.io\":{\"auth\":\"%s\"}}}",
			 gb, qc);
	eb_test_write(dconf, "config.json", t);
	free(t);
	t = eb_xasprintf("{\"auths\":{\"ghcr.io\":{\"auth\":\"%s\"}}}", hh);
	eb_test_write(home, ".docker/config.json", t);
	free(t);

	/* $REGISTRY_AUTH_FILE first; what it lacks comes from docker */
	setenv("REGISTRY_AUTH_FILE", authfile, 1);
	setenv("DOCKER_CONFIG", dconf, 1);
	setenv("HOME", home, 1);
	ck_assert_int_eq(eb_auth_lookup(&c, "ghcr.io", &err), 0);
	ck_assert_str_eq(c.username, "from-authfile");
	eb_auth_creds_release(&c);
	ck_assert_int_eq(eb_auth_lookup(&c, "quay.io", &err), 0);
	ck_assert_str_eq(c.username, "quay-docker");
	eb_auth_creds_release(&c);

	/* $DOCKER_CONFIG beats ~/.docker */
	unsetenv("REGISTRY_AUTH_FILE");
	ck_assert_int_eq(eb_auth_lookup(&c, "ghcr.io", &err), 0);
	ck_assert_str_eq(c.username, "from-docker");
	eb_auth_creds_release(&c);

	/* ~/.docker/config.json without it */
	unsetenv("DOCKER_CONFIG");
	ck_assert_int_eq(eb_auth_lookup(&c, "ghcr.io", &err), 0);
	ck_assert_str_eq(c.username, "from-home");
	eb_auth_creds_release(&c);

	/* nothing anywhere: anonymous, and missing files are fine */
	setenv("REGISTRY_AUTH_FILE", "/nonexistent/auth.json", 1);
	setenv("DOCKER_CONFIG", "/nonexistent", 1);
	ck_assert_int_eq(eb_auth_lookup(&c, "ghcr.io", &err), 0);
	ck_assert(eb_auth_creds_empty(&c));
	ck_assert_ptr_null(err);

	/* a broken file is reported */
	eb_test_write(dir, "auth.json", "{not json");
	setenv("REGISTRY_AUTH_FILE", authfile, 1);
	ck_assert_int_eq(eb_auth_lookup(&c, "ghcr.io", &err), -EB_EINVALID);
	eb_error_clear(&err);

	for (int i = 0; i < 3; i++)
		env_restore(&saved[i]);
	cmd = eb_xasprintf("rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(ga);
	free(gb);
	free(qc);
	free(hh);
	free(authfile);
	free(dconf);
	free(home);
	free(dir);
}
END_TEST

/* ---- no secrets in messages ------------------------------------------ */

#define SECRET "P4ss-W0rd-Secret"

static void no_secret(struct eb_error *e)
{
	char *enc = b64("user:" SECRET);
	ck_assert_ptr_nonnull(e);
	ck_assert_msg(!strstr(e->msg, SECRET) && !strstr(e->msg, enc), "leak: %s", e->msg);
	ck_assert_msg(!e->hint || (!strstr(e->hint, SECRET) && !strstr(e->hint, enc)), "leak: %s",
		      e->hint);
	free(enc);
}

START_TEST(test_errors_never_carry_secrets)
{
	char *dir = eb_test_tmpdir();
	char *path = eb_xasprintf("%s/config.json", dir);
	char *enc = b64("user:" SECRET);
	char *noc = b64(SECRET);
	char *t;
	char *u, *p;
	struct eb_auth_creds c;
	struct eb_error *err = NULL;

	/* a base64 value without ':' */
	ck_assert_int_lt(eb_auth_decode_basic(noc, &u, &p, &err), 0);
	no_secret(err);
	eb_error_clear(&err);
	t = eb_xasprintf("{\"auths\":{\"x\":{\"auth\":\"%s\"}}}", noc);
	eb_test_write(dir, "config.json", t);
	free(t);
	ck_assert_int_lt(eb_auth_lookup_file(&c, path, "x", &err), 0);
	no_secret(err);
	eb_error_clear(&err);

	/* JSON errors next to the secret, in several shapes */
	t = eb_xasprintf("{\"auths\":{\"x\":{\"auth\":\"%s\" " SECRET "}}}", enc);
	eb_test_write(dir, "config.json", t);
	free(t);
	ck_assert_int_lt(eb_auth_lookup_file(&c, path, "x", &err), 0);
	no_secret(err);
	eb_error_clear(&err);
	eb_test_write(dir, "config.json", "{\"auths\":{\"x\":{\"password\":\"" SECRET);
	ck_assert_int_lt(eb_auth_lookup_file(&c, path, "x", &err), 0);
	no_secret(err);
	eb_error_clear(&err);
	eb_test_write(dir, "config.json", SECRET);
	ck_assert_int_lt(eb_auth_lookup_file(&c, path, "x", &err), 0);
	no_secret(err);
	eb_error_clear(&err);

	/* a challenge that echoes a secret back is only located, not quoted */
	{
		struct eb_auth_challenge *ch;
		size_t n;
		ck_assert_int_lt(eb_auth_parse_challenges(&ch, &n, "Bearer realm=\"" SECRET, &err), 0);
		no_secret(err);
		eb_error_clear(&err);
	}

	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
	free(enc);
	free(noc);
}
END_TEST

/* Static check of the sources: no error call passes a secret-bearing
 * variable.  String literals are removed first, so only the arguments
 * are looked at. */
static char *strip_literals(const char *s, size_t n)
{
	char *out = eb_xmalloc(n + 1);
	size_t o = 0;
	int in = 0;

	for (size_t i = 0; i < n; i++) {
		if (in) {
			if (s[i] == '\\' && i + 1 < n)
				i++;
			else if (s[i] == '"')
				in = 0;
			continue;
		}
		if (s[i] == '"') {
			in = 1;
			continue;
		}
		out[o++] = s[i];
	}
	out[o] = '\0';
	return out;
}

static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) {
		int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

START_TEST(test_sources_never_format_secrets)
{
	static const char *const files[] = { "src/registry/auth.c", "src/net/http.c" };
	static const char *const calls[] = { "eb_error_set", "eb_error_set_errno", "eb_error_set_at",
					     "eb_error_hint", "eb_error_wrap" };
	static const char *const secret_words[] = {
		"password", "pass", "secret", "identity_token", "registry_token", "authz",
		"auth_line", "tok", "token", "next", "raw", "creds", "form", "b64", "output",
	};
	const char *top = getenv("top_srcdir");
	int checked = 0;

	for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++) {
		char *path = eb_xasprintf("%s/%s", top && *top ? top : ".", files[f]);
		struct eb_buf text;
		eb_buf_init(&text, 0);
		ck_assert_msg(eb_fs_read_file(&text, path, 0, NULL) == 0, "cannot read %s", path);
		for (const char *p = text.ptr; (p = strstr(p, "eb_error_")); p++) {
			size_t nl = strcspn(p, "(");
			int is_call = 0, depth = 0;
			const char *q;
			char *args;
			for (size_t c = 0; c < sizeof(calls) / sizeof(*calls); c++)
				is_call |= strlen(calls[c]) == nl && strncmp(p, calls[c], nl) == 0;
			if (!is_call)
				continue;
			/* the argument list, to the matching ')' */
			for (q = p + nl; *q; q++) {
				if (*q == '"') {
					for (q++; *q && *q != '"'; q++)
						if (*q == '\\' && q[1])
							q++;
					continue;
				}
				if (*q == '(')
					depth++;
				else if (*q == ')' && --depth == 0)
					break;
			}
			args = strip_literals(p + nl, (size_t)(q - (p + nl)));
			for (size_t w = 0; w < sizeof(secret_words) / sizeof(*secret_words); w++)
				ck_assert_msg(!has_word(args, secret_words[w]),
					      "%s: error call passes '%s': %.*s", files[f],
					      secret_words[w], (int)(q - p + 1), p);
			free(args);
			checked++;
		}
		eb_buf_release(&text);
		free(path);
	}
	/* the check really looked at the error calls */
	ck_assert_int_gt(checked, 40);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *ch = tcase_create("challenges");
	TCase *enc = tcase_create("encoding");
	TCase *cfg = tcase_create("config");
	TCase *sec = tcase_create("secrets");

	tcase_add_loop_test(ch, test_challenge_table, 0,
			    (int)(sizeof(challenge_cases) / sizeof(*challenge_cases)));
	tcase_add_test(ch, test_challenge_pick);
	tcase_add_test(ch, test_challenge_param_lookup);
	suite_add_tcase(s, ch);

	tcase_add_test(enc, test_base64);
	tcase_add_test(enc, test_decode_basic);
	tcase_add_test(enc, test_normalize_key);
	tcase_add_test(enc, test_scope);
	suite_add_tcase(s, enc);

	tcase_add_test(cfg, test_config_matrix);
	tcase_add_test(cfg, test_config_exact_key_wins);
	tcase_add_test(cfg, test_config_malformed_no_secret);
	tcase_add_test(cfg, test_helper_direct);
	tcase_add_test(cfg, test_helper_precedence);
	tcase_add_test(cfg, test_lookup_locations);
	suite_add_tcase(s, cfg);

	tcase_add_test(sec, test_errors_never_carry_secrets);
	tcase_add_test(sec, test_sources_never_format_secrets);
	suite_add_tcase(s, sec);
	return s;
}

EB_TEST_MAIN(make_suite)
