/*
 * check_imageref.c - image reference parsing and normalisation.
 *
 * The tables port the vectors of distribution/reference (reference_test.go,
 * normalize_test.go), with expectations translated to the normalised form
 * (ParseNormalizedNamed): a name without a domain lands on docker.io, and a
 * one-component Hub path gets "library/".
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ref/imageref.h"
#include "util/alloc.h"
#include "testutil.h"

#define H64 "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
#define H128 H64 H64
#define D256 "sha256:" H64
#define RD "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"

static void ck_str_or_null(const char *got, const char *want, const char *what, const char *in)
{
	if (!want)
		ck_assert_msg(got == NULL, "%s: %s = '%s', want none", in, what, got);
	else
		ck_assert_msg(got && strcmp(got, want) == 0, "%s: %s = '%s', want '%s'", in, what,
			      got ? got : "(null)", want);
}

/* ---- valid references: domain, path, tag, digest ------------------------ */

struct ok_case {
	const char *in, *domain, *path, *tag, *digest;
};

static const struct ok_case ok_cases[] = {
	/* reference_test.go TestReferenceParse */
	{ "test_com", "docker.io", "library/test_com", NULL, NULL },
	{ "test.com:tag", "docker.io", "library/test.com", "tag", NULL },
	{ "test.com:5000", "docker.io", "library/test.com", "5000", NULL },
	{ "test.com/repo:tag", "test.com", "repo", "tag", NULL },
	{ "test:5000/repo", "test:5000", "repo", NULL, NULL },
	{ "test:5000/repo:tag", "test:5000", "repo", "tag", NULL },
	{ "test:5000/repo@" D256, "test:5000", "repo", NULL, D256 },
	{ "test:5000/repo:tag@" D256, "test:5000", "repo", "tag", D256 },
	{ "lowercase:Uppercase", "docker.io", "library/lowercase", "Uppercase", NULL },
	{ "sub-dom1.foo.com/bar/baz/quux", "sub-dom1.foo.com", "bar/baz/quux", NULL, NULL },
	{ "sub-dom1.foo.com/bar/baz/quux:some-long-tag", "sub-dom1.foo.com", "bar/baz/quux",
	  "some-long-tag", NULL },
	{ "b.gcr.io/test.example.com/my-app:test.example.com", "b.gcr.io",
	  "test.example.com/my-app", "test.example.com", NULL },
	{ "xn--n3h.com/myimage:xn--n3h.com", "xn--n3h.com", "myimage", "xn--n3h.com", NULL },
	{ "xn--7o8h.com/myimage:xn--7o8h.com@sha512:" H128, "xn--7o8h.com", "myimage",
	  "xn--7o8h.com", "sha512:" H128 },
	{ "foo_bar.com:8080", "docker.io", "library/foo_bar.com", "8080", NULL },
	{ "foo/foo_bar.com:8080", "docker.io", "foo/foo_bar.com", "8080", NULL },
	{ "192.168.1.1", "docker.io", "library/192.168.1.1", NULL, NULL },
	{ "192.168.1.1:tag", "docker.io", "library/192.168.1.1", "tag", NULL },
	{ "192.168.1.1:5000", "docker.io", "library/192.168.1.1", "5000", NULL },
	{ "192.168.1.1/repo", "192.168.1.1", "repo", NULL, NULL },
	{ "192.168.1.1:5000/repo", "192.168.1.1:5000", "repo", NULL, NULL },
	{ "192.168.1.1:5000/repo:5050", "192.168.1.1:5000", "repo", "5050", NULL },
	{ "[2001:db8::1]/repo", "[2001:db8::1]", "repo", NULL, NULL },
	{ "[2001:db8:1:2:3:4:5:6]/repo:tag", "[2001:db8:1:2:3:4:5:6]", "repo", "tag", NULL },
	{ "[2001:db8::1]:5000/repo", "[2001:db8::1]:5000", "repo", NULL, NULL },
	{ "[2001:db8::1]:5000/repo:tag", "[2001:db8::1]:5000", "repo", "tag", NULL },
	{ "[2001:db8::1]:5000/repo@" D256, "[2001:db8::1]:5000", "repo", NULL, D256 },
	{ "[2001:db8::1]:5000/repo:tag@" D256, "[2001:db8::1]:5000", "repo", "tag", D256 },
	{ "[2001:db8::]:5000/repo", "[2001:db8::]:5000", "repo", NULL, NULL },
	{ "[::1]:5000/repo", "[::1]:5000", "repo", NULL, NULL },
	/* reference_test.go TestDomainAndPath, TestSerialization */
	{ "test.com/foo", "test.com", "foo", NULL, NULL },
	{ "test_com/foo", "docker.io", "test_com/foo", NULL, NULL },
	{ "test:8080/foo", "test:8080", "foo", NULL, NULL },
	{ "test.com:8080/foo", "test.com:8080", "foo", NULL, NULL },
	{ "test-com:8080/foo", "test-com:8080", "foo", NULL, NULL },
	{ "xn--n3h.com:18080/foo", "xn--n3h.com:18080", "foo", NULL, NULL },
	{ "example.com:8000/named:tagged", "example.com:8000", "named", "tagged", NULL },
	{ "other.com/named@sha256:1234567890098765432112345667890098765432112345667890098765432112",
	  "other.com", "named", NULL,
	  "sha256:1234567890098765432112345667890098765432112345667890098765432112" },
	/* normalize_test.go TestValidateReferenceName */
	{ "docker/docker", "docker.io", "docker/docker", NULL, NULL },
	{ "library/debian", "docker.io", "library/debian", NULL, NULL },
	{ "debian", "docker.io", "library/debian", NULL, NULL },
	{ "docker.io/docker/docker", "docker.io", "docker/docker", NULL, NULL },
	{ "docker.io/library/debian", "docker.io", "library/debian", NULL, NULL },
	{ "docker.io/debian", "docker.io", "library/debian", NULL, NULL },
	{ "index.docker.io/docker/docker", "docker.io", "docker/docker", NULL, NULL },
	{ "index.docker.io/library/debian", "docker.io", "library/debian", NULL, NULL },
	{ "index.docker.io/debian", "docker.io", "library/debian", NULL, NULL },
	{ "127.0.0.1:5000/docker/docker", "127.0.0.1:5000", "docker/docker", NULL, NULL },
	{ "127.0.0.1:5000/library/debian", "127.0.0.1:5000", "library/debian", NULL, NULL },
	{ "127.0.0.1:5000/debian", "127.0.0.1:5000", "debian", NULL, NULL },
	{ "192.168.0.1", "docker.io", "library/192.168.0.1", NULL, NULL },
	{ "192.168.0.1:80", "docker.io", "library/192.168.0.1", "80", NULL },
	{ "192.168.0.1:8/debian", "192.168.0.1:8", "debian", NULL, NULL },
	{ "192.168.0.2:25000/debian", "192.168.0.2:25000", "debian", NULL, NULL },
	{ "thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev", "docker.io",
	  "library/thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev", NULL, NULL },
	{ "[fc00::1]:5000/docker", "[fc00::1]:5000", "docker", NULL, NULL },
	{ "[fc00::1]:5000/docker/docker", "[fc00::1]:5000", "docker/docker", NULL, NULL },
	{ "[fc00:1:2:3:4:5:6:7]:5000/library/debian", "[fc00:1:2:3:4:5:6:7]:5000",
	  "library/debian", NULL, NULL },
	{ "docker.io/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a", "docker.io",
	  "library/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a", NULL, NULL },
	{ "Docker/docker", "Docker", "docker", NULL, NULL },
	{ "DOCKER/docker", "DOCKER", "docker", NULL, NULL },
	/* "Uppercase" is a domain here, as in docker (reference_test.go FIXME) */
	{ "Uppercase/lowercase:tag", "Uppercase", "lowercase", "tag", NULL },
	/* normalize_test.go TestValidateRemoteName */
	{ "docker-rules/docker", "docker.io", "docker-rules/docker", NULL, NULL },
	{ "docker---rules/docker", "docker.io", "docker---rules/docker", NULL, NULL },
	{ "doc/docker", "docker.io", "doc/docker", NULL, NULL },
	{ "d/docker", "docker.io", "d/docker", NULL, NULL },
	{ "jess/t", "docker.io", "jess/t", NULL, NULL },
	{ "dock__er/docker", "docker.io", "dock__er/docker", NULL, NULL },
	/* normalize_test.go TestNormalizedSplitHostname */
	{ "docker/migrator", "docker.io", "docker/migrator", NULL, NULL },
	{ "foo", "docker.io", "library/foo", NULL, NULL },
	{ "xn--n3h.com/foo", "xn--n3h.com", "foo", NULL, NULL },
	{ "docker.io/foo", "docker.io", "library/foo", NULL, NULL },
	{ "docker.io/library/foo", "docker.io", "library/foo", NULL, NULL },
	{ "docker.io/library/foo/bar", "docker.io", "library/foo/bar", NULL, NULL },
	/* localhost is always a domain */
	{ "localhost/app:1", "localhost", "app", "1", NULL },
	{ "localhost:5000/app", "localhost:5000", "app", NULL, NULL },
	/* the shapes envbuild meets in Dockerfiles */
	{ "python:3.11-slim-bookworm", "docker.io", "library/python", "3.11-slim-bookworm", NULL },
	{ "nvcr.io/nvidia/pytorch:24.01-py3", "nvcr.io", "nvidia/pytorch", "24.01-py3", NULL },
	{ "ghcr.io/org/app_x.y-z:v1.2_3", "ghcr.io", "org/app_x.y-z", "v1.2_3", NULL },
	{ "python:_", "docker.io", "library/python", "_", NULL },
};

START_TEST(parse_ok)
{
	const struct ok_case *c = &ok_cases[_i];
	struct eb_imageref r;
	struct eb_error *err = NULL;
	int rc = eb_imageref_parse(&r, c->in, &err);

	ck_assert_msg(rc == 0, "%s: %s", c->in, err ? err->msg : "?");
	ck_assert_ptr_null(err);
	ck_str_or_null(r.domain, c->domain, "domain", c->in);
	ck_str_or_null(r.path, c->path, "path", c->in);
	ck_str_or_null(r.tag, c->tag, "tag", c->in);
	ck_str_or_null(r.digest, c->digest, "digest", c->in);
	eb_imageref_release(&r);
}
END_TEST

/* ---- invalid references: message and column --------------------------- */

struct bad_case {
	const char *in;
	unsigned col;
	const char *msg;
};

static const struct bad_case bad_cases[] = {
	/* reference_test.go */
	{ "", 1, "empty image reference" },
	{ ":justtag", 1, "missing repository name before ':'" },
	{ "@" D256, 1, "missing repository name before '@'" },
	{ "repo@sha256:ffffffffffffffffffffffffffffffffff", 13,
	  "sha256 digest has 34 hex characters, expected 64" },
	{ "validname@invaliddigest:" H64, 11, "unsupported digest algorithm 'invaliddigest'" },
	{ "Uppercase:tag", 1, "repository name 'Uppercase' must be lowercase" },
	{ "test:5000/Uppercase/lowercase:tag", 11,
	  "repository name 'Uppercase/lowercase' must be lowercase" },
	{ "aa/asdf$$^/aa", 8, "invalid character '$' in repository name 'aa/asdf$$^/aa'" },
	{ "[2001:db8::1]", 1, "invalid character '[' in repository name '[2001'" },
	{ "[2001:db8::1]:5000", 1, "invalid character '[' in repository name '[2001'" },
	{ "[2001:db8::1]:tag", 1, "invalid character '[' in repository name '[2001'" },
	{ "[fe80::1%eth0]:5000/repo", 9, "invalid IPv6 address in domain '[fe80::1%eth0]:5000'" },
	{ "[fe80::1%@invalidzone]:5000/repo", 1, "invalid character '[' in repository name '[fe80'" },
	/* normalize_test.go TestValidateReferenceName */
	{ "https://github.com/docker/docker", 6, "missing port after ':' in domain 'https:'" },
	{ "docker/Docker", 8, "repository name 'docker/Docker' must be lowercase" },
	{ "-docker", 1,
	  "repository name component '-docker' must start with a lowercase letter or digit" },
	{ "-docker/docker", 1,
	  "repository name component '-docker' must start with a lowercase letter or digit" },
	{ "-docker.io/docker/docker", 1, "domain component '-docker' must not start with '-'" },
	{ "docker///docker", 8, "empty component in repository name 'docker///docker'" },
	{ "docker.io/docker/Docker", 18, "repository name 'docker/Docker' must be lowercase" },
	{ "docker.io/docker///docker", 18, "empty component in repository name 'docker///docker'" },
	{ "[fc00::1]", 1, "invalid character '[' in repository name '[fc00'" },
	{ "[fc00::1]:5000", 1, "invalid character '[' in repository name '[fc00'" },
	{ "fc00::1:5000/debian", 6, "invalid port ':1:5000' in domain 'fc00::1:5000'" },
	{ "[fe80::1%eth0]:5000/debian", 9,
	  "invalid IPv6 address in domain '[fe80::1%eth0]:5000'" },
	{ "[2001:db8:3:4::192.0.2.33]:5000/debian", 19,
	  "invalid IPv6 address in domain '[2001:db8:3:4::192.0.2.33]:5000'" },
	{ "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a", 1,
	  "repository name '1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a' "
	  "is a 64-character hex string" },
	/* normalize_test.go TestValidateRemoteName */
	{ "docker-/docker", 7,
	  "repository name component 'docker-' must end with a lowercase letter or digit" },
	{ "-docker-/docker", 1,
	  "repository name component '-docker-' must start with a lowercase letter or digit" },
	{ "____/____", 1,
	  "repository name component '____' must start with a lowercase letter or digit" },
	{ "_docker/_docker", 1,
	  "repository name component '_docker' must start with a lowercase letter or digit" },
	/* a first component with '.' is a domain, so these fail as domains */
	{ "dock..er/docker", 6, "invalid domain 'dock..er'" },
	{ "dock_.er/docker", 5, "invalid domain 'dock_.er'" },
	{ "dock-.er/docker", 5, "domain component 'dock-' must not end with '-'" },
	{ "d/dock..er/docker", 7, "invalid separator '..' in repository name 'd/dock..er/docker'" },
	{ "d/dock_.er/docker", 7, "invalid separator '_.' in repository name 'd/dock_.er/docker'" },
	{ "d/dock-.er/docker", 7, "invalid separator '-.' in repository name 'd/dock-.er/docker'" },
	{ "dock___er/docker", 5, "invalid separator '___' in repository name 'dock___er/docker'" },
	{ "docker/", 8, "empty component in repository name 'docker/'" },
	{ "this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255_this_is_not_a_"
	  "valid_namespace_because_its_lenth_is_greater_than_255_this_is_not_a_valid_namespace_"
	  "because_its_lenth_is_greater_than_255_this_is_not_a_valid_namespace_because_its_lenth_"
	  "is_greater_than_255/docker",
	  1, "repository name is longer than 255 characters" },
	/* tags */
	{ "python:", 7, "missing tag after ':'" },
	{ "python:-slim", 8, "invalid tag '-slim'" },
	{ "python:.1", 8, "invalid tag '.1'" },
	{ "python:3.11+x", 12, "invalid tag '3.11+x'" },
	{ "python:a:b", 9, "invalid tag 'a:b'" },
	/* digests: the reference grammar, then the OCI rule */
	{ "python@", 7, "missing digest after '@'" },
	{ "python@sha256", 8, "invalid digest 'sha256': expected algorithm:hex" },
	{ "python@:" H64, 8, "invalid digest ':" H64 "': expected algorithm:hex" },
	{ "python@1sha:" H64, 8, "invalid digest algorithm '1sha'" },
	{ "python@sha256+:" H64, 14, "invalid digest algorithm 'sha256+'" },
	{ "python@md5:" H64, 8, "unsupported digest algorithm 'md5'" },
	{ "python@sha256:" H128, 15, "sha256 digest has 128 hex characters, expected 64" },
	{ "python@sha512:" H64, 15, "sha512 digest has 64 hex characters, expected 128" },
	{ "python@sha256:FFFFffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 15,
	  "sha256 digest must be lowercase hex" },
	{ "python@sha256:fffg", 18, "invalid character in sha256 digest 'fffg'" },
	{ "python:3.11@sha256:abc", 20, "sha256 digest has 3 hex characters, expected 64" },
	/* domains */
	{ "localhost:abc/app", 11, "invalid port 'abc' in domain 'localhost:abc'" },
	{ "my-.registry.io/app", 3, "domain component 'my-' must not end with '-'" },
	{ "a..b/app", 3, "invalid domain 'a..b'" },
	{ "[]:5000/app", 2, "invalid IPv6 address in domain '[]:5000'" },
	{ "python 3", 7, "invalid character ' ' in repository name 'python 3'" },
};

START_TEST(parse_bad)
{
	const struct bad_case *c = &bad_cases[_i];
	struct eb_imageref r;
	struct eb_error *err = NULL;
	int rc = eb_imageref_parse(&r, c->in, &err);

	ck_assert_msg(rc == -EB_EINVALID, "%s: accepted", c->in);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->code, EB_EINVALID);
	ck_assert_msg(strcmp(err->msg, c->msg) == 0, "%s: message '%s', want '%s'", c->in, err->msg,
		      c->msg);
	ck_assert_msg(err->col == c->col, "%s: col %u, want %u", c->in, err->col, c->col);
	ck_assert_uint_eq(err->line, 0);
	ck_assert_ptr_null(r.domain);
	ck_assert_ptr_null(r.path);
	eb_imageref_release(&r);
	eb_error_free(err);
}
END_TEST

/* A 64-hex name gets a hint showing the digest form. */
START_TEST(identifier_hint)
{
	struct eb_imageref r;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_imageref_parse(&r, H64, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(err->hint);
	ck_assert_str_eq(err->hint, "to pin by digest, write name@sha256:" H64);
	eb_error_free(err);
}
END_TEST

/* ---- the 255 limit (reference_test.go) ---------------------------------- */

static char *repeat(const char *unit, int times, const char *tail)
{
	size_t ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(ul * (size_t)times + tl + 1);
	for (int i = 0; i < times; i++)
		memcpy(s + ul * (size_t)i, unit, ul);
	memcpy(s + ul * (size_t)times, tail, tl + 1);
	return s;
}

START_TEST(name_length)
{
	struct eb_imageref r;
	struct eb_error *err = NULL;
	char *longest = repeat("a/", 127, "a:tag-puts-this-over-max");
	char *toolong = repeat("a/", 128, "a:tag");
	char *path = repeat("a/", 127, "a");

	ck_assert_int_eq(eb_imageref_parse(&r, longest, &err), 0);
	ck_assert_str_eq(r.domain, "docker.io");
	ck_assert_str_eq(r.path, path);
	ck_assert_uint_eq(strlen(r.path), 255);
	ck_assert_str_eq(r.tag, "tag-puts-this-over-max");
	eb_imageref_release(&r);

	ck_assert_int_eq(eb_imageref_parse(&r, toolong, &err), -EB_EINVALID);
	ck_assert_str_eq(err->msg, "repository name is longer than 255 characters");
	eb_error_clear(&err);

	/* the limit is on the normalised path: "library/" counts, the domain
	 * does not, so the fully-qualified form always parses back */
	free(path);
	path = repeat("b", 247, "");
	ck_assert_int_eq(eb_imageref_parse(&r, path, &err), 0);
	ck_assert_uint_eq(strlen(r.path), 255);
	eb_imageref_release(&r);
	free(path);
	path = repeat("b", 248, ":1");
	ck_assert_int_eq(eb_imageref_parse(&r, path, &err), -EB_EINVALID);
	ck_assert_uint_eq(err->col, 1);
	eb_error_clear(&err);
	free(path);
	path = repeat("c", 255, "");
	free(longest);
	longest = eb_xasprintf("registry.example.com:5000/%s", path);
	ck_assert_int_eq(eb_imageref_parse(&r, longest, &err), 0);
	eb_imageref_release(&r);

	free(longest);
	free(toolong);
	free(path);
}
END_TEST

START_TEST(tag_length)
{
	struct eb_imageref r;
	struct eb_error *err = NULL;
	char *ok = repeat("t", 128, "");
	char *bad = repeat("t", 129, "");
	char *in = NULL;

	in = eb_xasprintf("python:%s", ok);
	ck_assert_int_eq(eb_imageref_parse(&r, in, &err), 0);
	ck_assert_uint_eq(strlen(r.tag), 128);
	eb_imageref_release(&r);
	free(in);

	in = eb_xasprintf("python:%s", bad);
	ck_assert_int_eq(eb_imageref_parse(&r, in, &err), -EB_EINVALID);
	ck_assert_uint_eq(err->col, 8);
	ck_assert_msg(strstr(err->msg, "is longer than 128 characters") != NULL, "%s", err->msg);
	eb_error_clear(&err);
	free(in);
	free(ok);
	free(bad);
}
END_TEST

/* ---- familiar and fully-qualified forms ---------------------------------- */

struct form_case {
	const char *in, *full, *familiar, *name;
};

static const struct form_case form_cases[] = {
	/* normalize_test.go TestParseRepositoryInfo: familiar, full and
	 * ambiguous spellings of the same repository */
	{ "fooo/bar", "docker.io/fooo/bar", "fooo/bar", "docker.io/fooo/bar" },
	{ "docker.io/fooo/bar", "docker.io/fooo/bar", "fooo/bar", "docker.io/fooo/bar" },
	{ "index.docker.io/fooo/bar", "docker.io/fooo/bar", "fooo/bar", "docker.io/fooo/bar" },
	{ "ubuntu", "docker.io/library/ubuntu", "ubuntu", "docker.io/library/ubuntu" },
	{ "docker.io/library/ubuntu", "docker.io/library/ubuntu", "ubuntu",
	  "docker.io/library/ubuntu" },
	{ "library/ubuntu", "docker.io/library/ubuntu", "ubuntu", "docker.io/library/ubuntu" },
	{ "nonlibrary/ubuntu", "docker.io/nonlibrary/ubuntu", "nonlibrary/ubuntu",
	  "docker.io/nonlibrary/ubuntu" },
	{ "other/library", "docker.io/other/library", "other/library", "docker.io/other/library" },
	{ "127.0.0.1:8000/private/moonbase", "127.0.0.1:8000/private/moonbase",
	  "127.0.0.1:8000/private/moonbase", "127.0.0.1:8000/private/moonbase" },
	{ "127.0.0.1:8000/privatebase", "127.0.0.1:8000/privatebase", "127.0.0.1:8000/privatebase",
	  "127.0.0.1:8000/privatebase" },
	{ "example.com/private/moonbase", "example.com/private/moonbase",
	  "example.com/private/moonbase", "example.com/private/moonbase" },
	{ "example.com:8000/privatebasee", "example.com:8000/privatebasee",
	  "example.com:8000/privatebasee", "example.com:8000/privatebasee" },
	{ "ubuntu-12.04-base", "docker.io/library/ubuntu-12.04-base", "ubuntu-12.04-base",
	  "docker.io/library/ubuntu-12.04-base" },
	{ "index.docker.io/library/ubuntu-12.04-base", "docker.io/library/ubuntu-12.04-base",
	  "ubuntu-12.04-base", "docker.io/library/ubuntu-12.04-base" },
	{ "docker.io/foo", "docker.io/library/foo", "foo", "docker.io/library/foo" },
	{ "library/foo/bar", "docker.io/library/foo/bar", "library/foo/bar",
	  "docker.io/library/foo/bar" },
	{ "store/foo/bar", "docker.io/store/foo/bar", "store/foo/bar", "docker.io/store/foo/bar" },
	{ "Foo/bar", "Foo/bar", "Foo/bar", "Foo/bar" },
	{ "FOO/bar", "FOO/bar", "FOO/bar", "FOO/bar" },
	/* TestParseReferenceWithTagAndDigest: both are kept */
	{ "busybox:latest@sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa",
	  "docker.io/library/busybox:latest@"
	  "sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa",
	  "busybox:latest@sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa",
	  "docker.io/library/busybox" },
	/* TestParseAnyReference (the named cases) */
	{ "redis", "docker.io/library/redis", "redis", "docker.io/library/redis" },
	{ "redis:latest", "docker.io/library/redis:latest", "redis:latest",
	  "docker.io/library/redis" },
	{ "docker.io/library/redis:latest", "docker.io/library/redis:latest", "redis:latest",
	  "docker.io/library/redis" },
	{ "redis@" RD, "docker.io/library/redis@" RD, "redis@" RD, "docker.io/library/redis" },
	{ "docker.io/library/redis@" RD, "docker.io/library/redis@" RD, "redis@" RD,
	  "docker.io/library/redis" },
	{ "dmcgowan/myapp", "docker.io/dmcgowan/myapp", "dmcgowan/myapp",
	  "docker.io/dmcgowan/myapp" },
	{ "dmcgowan/myapp:latest", "docker.io/dmcgowan/myapp:latest", "dmcgowan/myapp:latest",
	  "docker.io/dmcgowan/myapp" },
	{ "docker.io/mcgowan/myapp:latest", "docker.io/mcgowan/myapp:latest",
	  "mcgowan/myapp:latest", "docker.io/mcgowan/myapp" },
	{ "dmcgowan/myapp@" RD, "docker.io/dmcgowan/myapp@" RD, "dmcgowan/myapp@" RD,
	  "docker.io/dmcgowan/myapp" },
	{ "dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9",
	  "docker.io/library/dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9",
	  "dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9",
	  "docker.io/library/dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9" },
	{ "dbcc1", "docker.io/library/dbcc1", "dbcc1", "docker.io/library/dbcc1" },
	/* the form envbuild prints */
	{ "python:3.11-slim", "docker.io/library/python:3.11-slim", "python:3.11-slim",
	  "docker.io/library/python" },
	{ "localhost:5000/app:1", "localhost:5000/app:1", "localhost:5000/app:1",
	  "localhost:5000/app" },
};

START_TEST(forms)
{
	const struct form_case *c = &form_cases[_i];
	struct eb_imageref r;
	struct eb_error *err = NULL;
	char *full, *fam, *name;

	ck_assert_msg(eb_imageref_parse(&r, c->in, &err) == 0, "%s: %s", c->in,
		      err ? err->msg : "?");
	full = eb_imageref_to_string(&r);
	fam = eb_imageref_familiar(&r);
	name = eb_imageref_name(&r);
	ck_str_or_null(full, c->full, "full", c->in);
	ck_str_or_null(fam, c->familiar, "familiar", c->in);
	ck_str_or_null(name, c->name, "name", c->in);
	free(full);
	free(fam);
	free(name);
	eb_imageref_release(&r);

	/* the fully-qualified form parses back to itself */
	full = NULL;
	ck_assert_int_eq(eb_imageref_parse(&r, c->full, &err), 0);
	full = eb_imageref_to_string(&r);
	ck_assert_str_eq(full, c->full);
	free(full);
	eb_imageref_release(&r);
}
END_TEST

START_TEST(scratch)
{
	ck_assert_int_eq(eb_imageref_is_scratch("scratch"), 1);
	ck_assert_int_eq(eb_imageref_is_scratch("scratch:latest"), 0);
	ck_assert_int_eq(eb_imageref_is_scratch("docker.io/library/scratch"), 0);
	ck_assert_int_eq(eb_imageref_is_scratch("Scratch"), 0);
	ck_assert_int_eq(eb_imageref_is_scratch(""), 0);
	ck_assert_int_eq(eb_imageref_is_scratch(NULL), 0);
}
END_TEST

/* A failed parse leaves nothing behind and keeps a pre-set error. */
START_TEST(error_kept)
{
	struct eb_imageref r;
	struct eb_error *err = NULL;

	eb_error_set(&err, EB_EIO, "first");
	ck_assert_int_eq(eb_imageref_parse(&r, "Bad", &err), -EB_EIO);
	ck_assert_str_eq(err->msg, "first");
	eb_error_free(err);
	/* a NULL err is allowed */
	ck_assert_int_eq(eb_imageref_parse(&r, "Bad", NULL), -EB_EINVALID);
	eb_imageref_release(&r);
	eb_imageref_release(NULL);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("imageref");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, parse_ok, 0, (int)(sizeof(ok_cases) / sizeof(ok_cases[0])));
	tcase_add_loop_test(tc, parse_bad, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, identifier_hint);
	tcase_add_test(tc, name_length);
	tcase_add_test(tc, tag_length);
	tcase_add_test(tc, error_kept);
	suite_add_tcase(s, tc);

	tc = tcase_create("forms");
	tcase_add_loop_test(tc, forms, 0, (int)(sizeof(form_cases) / sizeof(form_cases[0])));
	tcase_add_test(tc, scratch);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
