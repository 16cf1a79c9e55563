/*
 * digest.c - SHA-256 through OpenSSL's EVP interface, and digest strings.
 *
 * Compiled a second time with EB_DIGEST_NETTLE into the front binary
 * (envbuild: check), whose only hashing is the lock's input hashes: there
 * SHA-256 is Nettle's (as fast, SHA-NI included, and a fraction of
 * libcrypto's start-up), and the table's other algorithms, which need EVP,
 * are left out (eb_hash_algo_md, eb_hash_hex).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#ifdef EB_DIGEST_NETTLE
#include <nettle/sha2.h>
#else
#include <openssl/evp.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/digest.h"
#include "util/encode.h"

#ifdef EB_DIGEST_NETTLE
void eb_sha256_init(struct eb_sha256 *h)
{
	struct sha256_ctx *c = eb_xmalloc(sizeof(*c));

	sha256_init(c);
	h->ctx = c;
}

void eb_sha256_update(struct eb_sha256 *h, const void *data, size_t len)
{
	if (len)
		sha256_update(h->ctx, len, data);
}

void eb_sha256_final(struct eb_sha256 *h, char out[EB_DIGEST_STR_LEN + 1])
{
	uint8_t md[SHA256_DIGEST_SIZE];

	sha256_digest(h->ctx, sizeof(md), md);
	memcpy(out, "sha256:", 7);
	eb_hex_encode(out + 7, md, sizeof(md));
	free(h->ctx);
	h->ctx = NULL;
}

void eb_sha256_abort(struct eb_sha256 *h)
{
	free(h->ctx);
	h->ctx = NULL;
}
#else
void eb_sha256_init(struct eb_sha256 *h)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1)
		abort(); /* only fails on OOM or a broken libcrypto */
	h->ctx = c;
}

void eb_sha256_update(struct eb_sha256 *h, const void *data, size_t len)
{
	if (len && EVP_DigestUpdate(h->ctx, data, len) != 1)
		abort();
}

void eb_sha256_final(struct eb_sha256 *h, char out[EB_DIGEST_STR_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1 || n != 32)
		abort();
	memcpy(out, "sha256:", 7);
	eb_hex_encode(out + 7, md, 32);
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

void eb_sha256_abort(struct eb_sha256 *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}
#endif

void eb_sha256_digest(const void *data, size_t len, char out[EB_DIGEST_STR_LEN + 1])
{
	struct eb_sha256 h;

	eb_sha256_init(&h);
	eb_sha256_update(&h, data, len);
	eb_sha256_final(&h, out);
}

int eb_sha256_file(const char *path, char out[EB_DIGEST_STR_LEN + 1], uint64_t *size,
		   struct eb_error **err)
{
	struct eb_sha256 h;
	char buf[1 << 16];
	uint64_t total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot open '%s'", path);
	eb_sha256_init(&h);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			eb_sha256_abort(&h);
			close(fd);
			return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", path);
		}
		if (n == 0)
			break;
		eb_sha256_update(&h, buf, (size_t)n);
		total += (uint64_t)n;
	}
	close(fd);
	eb_sha256_final(&h, out);
	if (size)
		*size = total;
	return 0;
}

static int all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

int eb_digest_valid(const char *s)
{
	if (strncmp(s, "sha256:", 7) == 0)
		return strlen(s + 7) == 64 && all_hex(s + 7, 64);
	if (strncmp(s, "sha512:", 7) == 0)
		return strlen(s + 7) == 128 && all_hex(s + 7, 128);
	return 0;
}

const char *eb_digest_hex(const char *digest)
{
	const char *c = strchr(digest, ':');
	return c ? c + 1 : digest;
}

void eb_digest_raw(const char *digest, unsigned char raw[32])
{
	const char *hex = eb_digest_hex(digest);

	for (int i = 0; i < 32; i++)
		raw[i] = (unsigned char)(eb_hex_value(hex[2 * i]) << 4 | eb_hex_value(hex[2 * i + 1]));
}

int eb_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* hashlib's guaranteed algorithms (PEP 503 allows any of them) and their
 * OpenSSL names. */
static const struct eb_hash_algo algos[] = {
	{ "md5", "MD5", 32, 0, 0, 0 },
	{ "sha1", "SHA1", 40, 0, 0, 0 },
	{ "sha224", "SHA224", 56, 0, 0, 0 },
	{ "sha256", "SHA256", 64, 1, 1, 1 },
	{ "sha384", "SHA384", 96, 1, 1, 1 },
	{ "sha512", "SHA512", 128, 1, 1, 1 },
	{ "sha3_224", "SHA3-224", 56, 0, 0, 0 },
	{ "sha3_256", "SHA3-256", 64, 1, 0, 1 },
	{ "sha3_384", "SHA3-384", 96, 1, 0, 1 },
	{ "sha3_512", "SHA3-512", 128, 1, 0, 1 },
	{ "blake2b", "BLAKE2b512", 128, 1, 0, 1 },
	{ "blake2s", "BLAKE2s256", 64, 1, 0, 0 },
};

const struct eb_hash_algo *eb_hash_algo_find_n(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(algos) / sizeof(*algos); i++)
		if (strlen(algos[i].name) == n && memcmp(algos[i].name, name, n) == 0)
			return &algos[i];
	return NULL;
}

const struct eb_hash_algo *eb_hash_algo_find(const char *name)
{
	return eb_hash_algo_find_n(name, strlen(name));
}

#ifndef EB_DIGEST_NETTLE
const void *eb_hash_algo_md(const struct eb_hash_algo *a)
{
	return EVP_get_digestbyname(a->evp);
}

int eb_hash_hex(const struct eb_hash_algo *a, const void *data, size_t len, char out[129])
{
	const EVP_MD *md = eb_hash_algo_md(a);
	unsigned char raw[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!md || EVP_Digest(data, len, raw, &n, md, NULL) != 1 || n * 2 != a->hexlen)
		return -1;
	eb_hex_encode(out, raw, n);
	return 0;
}
#endif
