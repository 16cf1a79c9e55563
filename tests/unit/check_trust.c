/*
 * check_trust.c - trust/: the cosign payload's exact bytes and its strict
 * reading (containers/image's rules), ECDSA P-256 signatures made and
 * checked, keys refused with a reason, DSSE's PAE and envelopes, package
 * URLs, deterministic SBOMs, provenance without credentials.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "python/metadata.h"
#include "testutil.h"
#include "trust/provenance.h"
#include "trust/sbom.h"
#include "trust/sign.h"
#include "util/fs.h"

#define D1 "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char tmpdir[] = "/tmp/check_trust.XXXXXX";

static char *write_tmp(const char *name, const char *text)
{
	char *p = eb_path_join(tmpdir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static char *make_key(const char *name, const char *algo)
{
	char *p = eb_path_join(tmpdir, name);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "openssl genpkey %s -out '%s' 2>/dev/null", algo, p);
	ck_assert_int_eq(system(cmd), 0);
	return p;
}

START_TEST(payload_bytes)
{
	struct eb_buf b;
	char *d;

	eb_buf_init(&b, 0);
	eb_sign_payload(&b, "reg.example/ml/app", D1);
	ck_assert_str_eq(b.ptr, "{\"critical\":{\"identity\":{\"docker-reference\":\"reg.example/ml/app\"},"
				"\"image\":{\"docker-manifest-digest\":\"" D1 "\"},"
				"\"type\":\"cosign container image signature\"},"
				"\"optional\":{\"creator\":\"envbuild " PACKAGE_VERSION "\"}}");
	d = eb_sign_payload_digest(b.ptr, b.len);
	ck_assert_str_eq(d, D1);
	free(d);
	eb_buf_release(&b);
	/* one field more or less, another type: not a payload */
	ck_assert_ptr_null(eb_sign_payload_digest("{\"critical\":{\"identity\":{\"docker-reference\":\"x\"},"
		"\"image\":{\"docker-manifest-digest\":\"" D1 "\"},\"type\":\"cosign container image signature\","
		"\"extra\":1},\"optional\":null}", 180));
	{
		const char *t = "{\"critical\":{\"identity\":{\"docker-reference\":\"x\"},\"image\":{},"
				"\"type\":\"cosign container image signature\"},\"optional\":null}";
		ck_assert_ptr_null(eb_sign_payload_digest(t, strlen(t)));
	}
	{
		const char *t = "{\"critical\":{\"identity\":{\"docker-reference\":\"x\"},\"image\":"
				"{\"docker-manifest-digest\":\"" D1 "\"},\"type\":\"atomic container signature\"},"
				"\"optional\":null}";
		ck_assert_ptr_null(eb_sign_payload_digest(t, strlen(t)));
	}
	{
		const char *t = "{\"critical\":{\"identity\":{\"docker-reference\":\"x\"},\"image\":"
				"{\"docker-manifest-digest\":\"" D1 "\"},\"type\":\"cosign container image signature\"}}";
		ck_assert_ptr_null(eb_sign_payload_digest(t, strlen(t)));
	}
}
END_TEST

START_TEST(sign_and_check)
{
	struct eb_error *err = NULL;
	struct eb_sign_key *k = NULL, *pub = NULL, *other = NULL;
	char *kp = make_key("p256.key", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256");
	char *op = make_key("other.key", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256");
	char *pp = eb_path_join(tmpdir, "p256.pub");
	char cmd[512], *sig = NULL;

	snprintf(cmd, sizeof(cmd), "openssl pkey -in '%s' -pubout -out '%s'", kp, pp);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(eb_sign_key_load(&k, kp, &err), 0);
	ck_assert_int_eq(eb_sign_key_load_public(&pub, pp, &err), 0);
	ck_assert_int_eq(eb_sign_key_load(&other, op, &err), 0);
	ck_assert_str_eq(eb_sign_key_id(k), eb_sign_key_id(pub));
	ck_assert_str_ne(eb_sign_key_id(k), eb_sign_key_id(other));
	ck_assert_int_eq(eb_sign_data(k, "hello", 5, &sig, &err), 0);
	ck_assert_int_eq(eb_sign_check(pub, "hello", 5, sig), 1);
	ck_assert_int_eq(eb_sign_check(k, "hello", 5, sig), 1);
	ck_assert_int_eq(eb_sign_check(pub, "hellO", 5, sig), 0);
	ck_assert_int_eq(eb_sign_check(other, "hello", 5, sig), 0);
	ck_assert_int_eq(eb_sign_check(pub, "hello", 5, "not base64!"), 0);
	/* a public key cannot sign */
	free(sig);
	sig = NULL;
	ck_assert_int_eq(eb_sign_data(pub, "x", 1, &sig, &err), -EB_EINVALID);
	eb_error_clear(&err);
	eb_sign_key_free(k);
	eb_sign_key_free(pub);
	eb_sign_key_free(other);
	free(kp);
	free(op);
	free(pp);
}
END_TEST

START_TEST(keys_refused)
{
	struct eb_error *err = NULL;
	struct eb_sign_key *k = NULL;
	char *rsa = make_key("rsa.key", "-algorithm RSA -pkeyopt rsa_keygen_bits:1024");
	char *p384 = make_key("p384.key", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384");
	char *cos = write_tmp("cosign.key", "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"
					    "eyJrZGYiOnt9fQ==\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n");
	char *junk = write_tmp("junk.key", "not a key\n");

	ck_assert_int_eq(eb_sign_key_load(&k, rsa, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "P-256"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_sign_key_load(&k, p384, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "secp384r1"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_sign_key_load(&k, cos, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "cosign"));
	ck_assert_ptr_nonnull(strstr(err->hint, "import-key-pair"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_sign_key_load(&k, junk, &err), -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert_ptr_null(k);
	free(rsa);
	free(p384);
	free(cos);
	free(junk);
}
END_TEST

START_TEST(encrypted_key)
{
	struct eb_error *err = NULL;
	struct eb_sign_key *k = NULL;
	char *kp = make_key("enc.key", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256 -aes256 -pass pass:s3cret");

	unsetenv("ENVBUILD_SIGN_KEY_PASSWORD");
	ck_assert_int_eq(eb_sign_key_load(&k, kp, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->hint, "ENVBUILD_SIGN_KEY_PASSWORD"));
	eb_error_clear(&err);
	setenv("ENVBUILD_SIGN_KEY_PASSWORD", "s3cret", 1);
	ck_assert_int_eq(eb_sign_key_load(&k, kp, &err), 0);
	unsetenv("ENVBUILD_SIGN_KEY_PASSWORD");
	eb_sign_key_free(k);
	free(kp);
}
END_TEST

START_TEST(dsse)
{
	struct eb_error *err = NULL;
	struct eb_sign_key *k = NULL;
	struct eb_buf pae, env, payload;
	char *kp = make_key("dsse.key", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256");
	char *type = NULL;
	int ok = 0;

	eb_buf_init(&pae, 0);
	eb_buf_init(&env, 0);
	eb_buf_init(&payload, 0);
	/* the DSSE spec's example */
	eb_dsse_pae(&pae, "http://example.com/HelloWorld", "hello world", 11);
	ck_assert_str_eq(pae.ptr, "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
	ck_assert_int_eq(eb_sign_key_load(&k, kp, &err), 0);
	ck_assert_int_eq(eb_dsse_envelope(&env, k, EB_INTOTO_PAYLOAD_TYPE, "{\"a\":1}", 7, &err), 0);
	ck_assert_int_eq(eb_dsse_open(env.ptr, env.len, k, &payload, &type, &ok, &err), 0);
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(type, EB_INTOTO_PAYLOAD_TYPE);
	ck_assert_str_eq(payload.ptr, "{\"a\":1}");
	free(type);
	/* unsigned: no signature, and it does not check */
	eb_buf_truncate(&env, 0);
	eb_buf_truncate(&payload, 0);
	ck_assert_int_eq(eb_dsse_envelope(&env, NULL, EB_INTOTO_PAYLOAD_TYPE, "{}", 2, &err), 0);
	ck_assert_ptr_nonnull(strstr(env.ptr, "\"signatures\":[]"));
	ck_assert_int_eq(eb_dsse_open(env.ptr, env.len, k, &payload, &type, &ok, &err), 0);
	ck_assert_int_eq(ok, 0);
	free(type);
	ck_assert_int_eq(eb_dsse_open("{}", 2, k, &payload, &type, &ok, &err), -EB_EINVALID);
	eb_error_clear(&err);
	eb_sign_key_free(k);
	eb_buf_release(&pae);
	eb_buf_release(&env);
	eb_buf_release(&payload);
	free(kp);
}
END_TEST

START_TEST(purls)
{
	struct eb_sbom_component d = { EB_SBOM_DEB, "base", "libstdc++6", "1:12.2.0-14+deb12u1",
				       "amd64", NULL, NULL, NULL };
	struct eb_sbom_component p = { EB_SBOM_PYPI, "wheel", "Typing_Extensions", "4.9.0", NULL,
				       NULL, NULL, NULL };
	char *a = eb_sbom_purl(&d), *b = eb_sbom_purl(&p);

	ck_assert_str_eq(a, "pkg:deb/debian/libstdc%2B%2B6@1%3A12.2.0-14%2Bdeb12u1?arch=amd64");
	ck_assert_str_eq(b, "pkg:pypi/typing-extensions@4.9.0");
	free(a);
	free(b);
}
END_TEST

START_TEST(sbom_deterministic)
{
	struct eb_sbom_component c1[] = {
		{ EB_SBOM_PYPI, "wheel", "numpy", "1.26.4", NULL, "sha256:" "aa", "https://x/numpy.whl", "BSD-3-Clause" },
		{ EB_SBOM_DEB, "base", "bash", "5.2", "amd64", NULL, NULL, NULL },
		{ EB_SBOM_DEB, "apt", "hello", "2.10-3", "amd64", NULL, "http://r/hello.deb", "GPL-3+ with odd text" },
	};
	struct eb_sbom_component c2[] = { c1[2], c1[0], c1[1] };
	struct eb_sbom_image img = { "reg/ml/app", "app", D1, "linux/amd64", "docker.io/library/debian:12",
				     D1, NULL, c1, 3 };
	struct eb_buf a, b;
	json_t *j;

	eb_buf_init(&a, 0);
	eb_buf_init(&b, 0);
	for (int f = 0; f < 2; f++) {
		eb_buf_truncate(&a, 0);
		eb_buf_truncate(&b, 0);
		img.components = c1;
		(f ? eb_sbom_spdx : eb_sbom_cyclonedx)(&a, &img);
		img.components = c2;
		(f ? eb_sbom_spdx : eb_sbom_cyclonedx)(&b, &img);
		ck_assert_str_eq(a.ptr, b.ptr);
		j = json_loads(a.ptr, 0, NULL);
		ck_assert_ptr_nonnull(j);
		json_decref(j);
	}
	/* SPDX: the stated license is a comment, never a declared expression */
	ck_assert_ptr_null(strstr(a.ptr, "\"licenseDeclared\": \"BSD-3-Clause\""));
	ck_assert_ptr_nonnull(strstr(a.ptr, "The metadata states: BSD-3-Clause"));
	ck_assert_ptr_nonnull(strstr(a.ptr, "The metadata states: GPL-3+ with odd text"));
	ck_assert_ptr_nonnull(strstr(a.ptr, "\"created\": \"1970-01-01T00:00:00Z\""));
	eb_buf_release(&a);
	eb_buf_release(&b);
}
END_TEST

START_TEST(provenance_clean)
{
	struct eb_prov_dep deps[] = { { "pypi:x", "https://u:tok@idx.example/x.whl", D1 } };
	struct eb_provenance pv = { "reg/ml/app", D1, "envbuild.yaml", "app", "linux/amd64",
				    "https://bot:hunter2@git.example/ml.git", "abc", NULL, deps, 1 };
	struct eb_buf b;
	char *c = eb_provenance_clean_uri("https://a:b@h/p@x");

	ck_assert_str_eq(c, "https://h/p@x");
	free(c);
	eb_buf_init(&b, 0);
	eb_provenance_statement(&b, &pv);
	ck_assert_ptr_null(strstr(b.ptr, "hunter2"));
	ck_assert_ptr_null(strstr(b.ptr, "tok@"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "\"gitCommit\":\"abc\""));
	ck_assert_ptr_nonnull(strstr(b.ptr, "\"predicateType\":\"https://slsa.dev/provenance/v1\""));
	eb_buf_release(&b);
}
END_TEST

/* the license an SBOM shows for a wheel */
START_TEST(metadata_license)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "License-Expression: Apache-2.0 OR MIT\nLicense: something else\n", "Apache-2.0 OR MIT" },
		{ "License: MIT\nClassifier: License :: OSI Approved :: BSD License\n", "MIT" },
		{ "License: UNKNOWN\nClassifier: License :: OSI Approved :: BSD License\n", "BSD License" },
		{ "License-File: LICENSE\n", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eb_metadata md;
		struct eb_error *err = NULL;
		char *text = NULL;
		ck_assert_int_ne(asprintf(&text, "Metadata-Version: 2.1\nName: x\nVersion: 1\n%s",
					  cases[i].text), -1);
		ck_assert_int_eq(eb_metadata_parse(&md, text, strlen(text), &err), 0);
		if (cases[i].want)
			ck_assert_str_eq(md.license, cases[i].want);
		else
			ck_assert_ptr_null(md.license);
		eb_metadata_release(&md);
		free(text);
	}
}
END_TEST

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	struct eb_error *err = NULL;
	eb_fs_remove_tree(tmpdir, &err);
	eb_error_free(err);
	strcpy(tmpdir, "/tmp/check_trust.XXXXXX");
}

static Suite *make_suite(void)
{
	Suite *s = suite_create("trust");
	TCase *tc = tcase_create("trust");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, payload_bytes);
	tcase_add_test(tc, sign_and_check);
	tcase_add_test(tc, keys_refused);
	tcase_add_test(tc, encrypted_key);
	tcase_add_test(tc, dsse);
	tcase_add_test(tc, purls);
	tcase_add_test(tc, sbom_deterministic);
	tcase_add_test(tc, provenance_clean);
	tcase_add_test(tc, metadata_license);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
