/*
 * sign.c - ECDSA P-256 keys through OpenSSL, cosign's simple signing
 * payload and DSSE envelopes.  The payload is written by hand, not by
 * jansson, so that its bytes are fixed by this file alone.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "trust/sign.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/encode.h"
#include "util/fs.h"

#define KEY_FILE_MAX (64 * 1024)

struct eb_sign_key {
	EVP_PKEY *pkey;
	int is_private;
	char id[65];
};

static int pem_password(char *buf, int size, int rwflag, void *u)
{
	const char *pw = getenv("ENVBUILD_SIGN_KEY_PASSWORD");
	size_t n;

	(void)rwflag;
	(void)u;
	if (!pw)
		return -1;
	n = strlen(pw);
	if (n > (size_t)size)
		return -1;
	memcpy(buf, pw, n);
	return (int)n;
}

static int key_finish(struct eb_sign_key **out, EVP_PKEY *pkey, int is_private, const char *path,
		      struct eb_error **err)
{
	struct eb_sign_key *k;
	unsigned char *der = NULL;
	char group[64] = "";
	size_t glen = 0;
	int n;

	if (!EVP_PKEY_is_a(pkey, "EC") ||
	    !EVP_PKEY_get_group_name(pkey, group, sizeof(group), &glen) ||
	    (strcmp(group, "prime256v1") != 0 && strcmp(group, "P-256") != 0)) {
		EVP_PKEY_free(pkey);
		eb_error_set(err, EB_EINVALID, "'%s' is not an EC P-256 key (%s)", path,
			     *group ? group : "another algorithm");
		eb_error_hint(err, "make one with: openssl genpkey -algorithm EC -pkeyopt "
			      "ec_paramgen_curve:P-256 -out sign.key");
		return -EB_EINVALID;
	}
	n = i2d_PUBKEY(pkey, &der);
	if (n <= 0) {
		EVP_PKEY_free(pkey);
		return eb_error_set(err, EB_EINVALID, "'%s': cannot encode its public key", path);
	}
	k = eb_xcalloc(1, sizeof(*k));
	k->pkey = pkey;
	k->is_private = is_private;
	{
		char d[EB_DIGEST_STR_LEN + 1];
		eb_sha256_digest(der, (size_t)n, d);
		memcpy(k->id, eb_digest_hex(d), 64);
		k->id[64] = '\0';
	}
	OPENSSL_free(der);
	*out = k;
	return 0;
}

static int key_read(struct eb_sign_key **out, const char *path, int want_private,
		    struct eb_error **err)
{
	struct eb_buf text;
	EVP_PKEY *pkey = NULL;
	BIO *bio;
	int rc, is_private = 0;

	*out = NULL;
	eb_buf_init(&text, 0);
	rc = eb_fs_read_file(&text, path, KEY_FILE_MAX, err);
	if (rc < 0) {
		eb_buf_release(&text);
		return rc;
	}
	if (strstr(text.ptr, "SIGSTORE PRIVATE KEY")) {
		eb_buf_release(&text);
		eb_error_set(err, EB_EINVALID, "'%s' is a cosign-encrypted key, which OpenSSL "
			     "cannot read", path);
		eb_error_hint(err, "sign with a PEM EC key (openssl genpkey -algorithm EC -pkeyopt "
			      "ec_paramgen_curve:P-256 -out sign.key) and give cosign its public "
			      "half, or import it into cosign with 'cosign import-key-pair --key sign.key'");
		return -EB_EINVALID;
	}
	bio = BIO_new_mem_buf(text.ptr, (int)text.len);
	if (strstr(text.ptr, "PRIVATE KEY-----")) {
		pkey = PEM_read_bio_PrivateKey(bio, NULL, pem_password, NULL);
		is_private = 1;
	} else if (!want_private) {
		pkey = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	}
	BIO_free(bio);
	if (!pkey) {
		int encrypted = strstr(text.ptr, "ENCRYPTED") != NULL;
		eb_buf_release(&text);
		eb_error_set(err, EB_EINVALID, "'%s' is not a PEM %s key%s", path,
			     want_private ? "private" : "public or private",
			     encrypted ? " that the passphrase opens" : "");
		if (encrypted)
			eb_error_hint(err, "give its passphrase in ENVBUILD_SIGN_KEY_PASSWORD");
		return -EB_EINVALID;
	}
	eb_buf_release(&text);
	return key_finish(out, pkey, is_private, path, err);
}

int eb_sign_key_load(struct eb_sign_key **out, const char *path, struct eb_error **err)
{
	return key_read(out, path, 1, err);
}

int eb_sign_key_load_public(struct eb_sign_key **out, const char *path, struct eb_error **err)
{
	return key_read(out, path, 0, err);
}

void eb_sign_key_free(struct eb_sign_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

const char *eb_sign_key_id(const struct eb_sign_key *k)
{
	return k->id;
}

int eb_sign_data(const struct eb_sign_key *k, const void *data, size_t len, char **b64_out,
		 struct eb_error **err)
{
	EVP_MD_CTX *ctx;
	unsigned char *sig = NULL;
	size_t siglen = 0;
	int rc = 0;

	*b64_out = NULL;
	if (!k->is_private)
		return eb_error_set(err, EB_EINVALID, "signing needs a private key");
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k->pkey) != 1 ||
	    EVP_DigestSign(ctx, NULL, &siglen, data, len) != 1) {
		rc = eb_error_set(err, EB_EFAIL, "ECDSA signing failed");
		goto done;
	}
	sig = eb_xmalloc(siglen);
	if (EVP_DigestSign(ctx, sig, &siglen, data, len) != 1) {
		rc = eb_error_set(err, EB_EFAIL, "ECDSA signing failed");
		goto done;
	}
	*b64_out = eb_base64_encode(sig, siglen);
done:
	free(sig);
	EVP_MD_CTX_free(ctx);
	return rc;
}

int eb_sign_check(const struct eb_sign_key *k, const void *data, size_t len, const char *b64)
{
	EVP_MD_CTX *ctx;
	size_t siglen = 0;
	char *sig;
	int ok = 0;

	if (!b64 || !(sig = eb_base64_decode(b64, &siglen)))
		return 0;
	ctx = EVP_MD_CTX_new();
	if (ctx && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k->pkey) == 1 &&
	    EVP_DigestVerify(ctx, (const unsigned char *)sig, siglen, data, len) == 1)
		ok = 1;
	EVP_MD_CTX_free(ctx);
	free(sig);
	return ok;
}

/* A JSON string (the values here are references and digests, but a
 * reference is user input: escape what JSON requires). */
static void put_json_string(struct eb_buf *out, const char *s)
{
	json_t *j = json_string(s);
	char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	eb_buf_puts(out, q ? q : "\"\"");
	free(q);
	json_decref(j);
}

void eb_sign_payload(struct eb_buf *out, const char *docker_reference, const char *digest)
{
	eb_buf_puts(out, "{\"critical\":{\"identity\":{\"docker-reference\":");
	put_json_string(out, docker_reference);
	eb_buf_puts(out, "},\"image\":{\"docker-manifest-digest\":");
	put_json_string(out, digest);
	eb_buf_puts(out, "},\"type\":\"cosign container image signature\"},"
		    "\"optional\":{\"creator\":\"envbuild " PACKAGE_VERSION "\"}}");
}

/* exactly these keys, as containers/image's paranoid parser wants */
static int exact_keys(const json_t *o, const char *const *keys)
{
	size_t n = 0;

	if (!json_is_object(o))
		return 0;
	for (; keys[n]; n++)
		if (!json_object_get(o, keys[n]))
			return 0;
	return json_object_size(o) == n;
}

char *eb_sign_payload_digest(const void *payload, size_t len)
{
	static const char *const top[] = { "critical", "optional", NULL };
	static const char *const crit[] = { "identity", "image", "type", NULL };
	static const char *const img[] = { "docker-manifest-digest", NULL };
	static const char *const idn[] = { "docker-reference", NULL };
	json_t *root = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *c, *d;
	char *out = NULL;

	c = json_object_get(root, "critical");
	if (exact_keys(root, top) && exact_keys(c, crit) &&
	    exact_keys(json_object_get(c, "image"), img) &&
	    exact_keys(json_object_get(c, "identity"), idn) &&
	    json_is_string(json_object_get(json_object_get(c, "identity"), "docker-reference")) &&
	    json_is_string(json_object_get(c, "type")) &&
	    strcmp(json_string_value(json_object_get(c, "type")),
		   "cosign container image signature") == 0) {
		d = json_object_get(json_object_get(c, "image"), "docker-manifest-digest");
		if (json_is_string(d) && eb_digest_valid(json_string_value(d)))
			out = eb_xstrdup(json_string_value(d));
	}
	json_decref(root);
	return out;
}

void eb_dsse_pae(struct eb_buf *out, const char *type, const void *body, size_t len)
{
	eb_buf_putf(out, "DSSEv1 %zu %s %zu ", strlen(type), type, len);
	eb_buf_put(out, body, len);
}

int eb_dsse_envelope(struct eb_buf *out, const struct eb_sign_key *k, const char *type,
		     const void *body, size_t len, struct eb_error **err)
{
	json_t *env, *sigs = json_array();
	char *payload = eb_base64_encode(body, len);
	char *s;
	int rc = 0;

	if (k) {
		struct eb_buf pae;
		char *sig = NULL;
		eb_buf_init(&pae, 0);
		eb_dsse_pae(&pae, type, body, len);
		rc = eb_sign_data(k, pae.ptr, pae.len, &sig, err);
		eb_buf_release(&pae);
		if (rc < 0) {
			json_decref(sigs);
			free(payload);
			return rc;
		}
		json_array_append_new(sigs, json_pack("{s:s, s:s}", "keyid", k->id, "sig", sig));
		free(sig);
	}
	env = json_pack("{s:s, s:s, s:o}", "payload", payload, "payloadType", type, "signatures",
			sigs);
	free(payload);
	s = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	eb_buf_puts(out, s);
	free(s);
	json_decref(env);
	return 0;
}

int eb_dsse_open(const void *env, size_t len, const struct eb_sign_key *k, struct eb_buf *payload,
		 char **payload_type, int *signed_ok, struct eb_error **err)
{
	json_t *root = json_loadb(env, len, JSON_REJECT_DUPLICATES, NULL);
	const char *type = json_string_value(json_object_get(root, "payloadType"));
	const char *p64 = json_string_value(json_object_get(root, "payload"));
	json_t *sigs = json_object_get(root, "signatures");
	size_t n = 0;
	char *body = NULL;
	int rc = 0;

	*signed_ok = 0;
	*payload_type = NULL;
	if (!type || !p64 || !json_is_array(sigs) || !(body = eb_base64_decode(p64, &n))) {
		rc = eb_error_set(err, EB_EINVALID, "not a DSSE envelope");
		goto done;
	}
	if (k) {
		struct eb_buf pae;
		eb_buf_init(&pae, 0);
		eb_dsse_pae(&pae, type, body, n);
		for (size_t i = 0; i < json_array_size(sigs) && !*signed_ok; i++)
			*signed_ok = eb_sign_check(
				k, pae.ptr, pae.len,
				json_string_value(json_object_get(json_array_get(sigs, i), "sig")));
		eb_buf_release(&pae);
	}
	eb_buf_put(payload, body, n);
	*payload_type = eb_xstrdup(type);
done:
	free(body);
	json_decref(root);
	return rc;
}
