/*
 * digest.h - streaming SHA-256 (OpenSSL EVP), OCI digest strings, and the
 * one table of hash algorithms envbuild knows by name.
 *
 * Layering (ground floor): util/ uses only libc and the libraries it wraps;
 * it knows nothing of images, packages or the network.
 *
 * A digest string is "sha256:" followed by 64 lower-case hex characters
 * (OCI image-spec descriptor rules).  Ownership: an eb_sha256 context is
 * caller-allocated (init/update/final); strings returned are the caller's.
 */
#ifndef EB_UTIL_DIGEST_H
#define EB_UTIL_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define EB_SHA256_HEX_LEN 64
#define EB_DIGEST_STR_LEN (7 + EB_SHA256_HEX_LEN) /* "sha256:" + hex */

struct eb_sha256 {
	void *ctx; /* EVP_MD_CTX */
};

void eb_sha256_init(struct eb_sha256 *h);
void eb_sha256_update(struct eb_sha256 *h, const void *data, size_t len);
/* Writes "sha256:<hex>" and a NUL into out (EB_DIGEST_STR_LEN + 1 bytes)
 * and releases the context. */
void eb_sha256_final(struct eb_sha256 *h, char out[EB_DIGEST_STR_LEN + 1]);
/* Release without a result (error paths). */
void eb_sha256_abort(struct eb_sha256 *h);
/* One-shot over a buffer. */
void eb_sha256_digest(const void *data, size_t len, char out[EB_DIGEST_STR_LEN + 1]);
/* Over a whole file; *size gets its length when size != NULL. */
int eb_sha256_file(const char *path, char out[EB_DIGEST_STR_LEN + 1], uint64_t *size,
		   struct eb_error **err);
/* 1 when s is "sha256:" + 64 lower-case hex (the only algorithm envbuild
 * writes; sha512 is accepted when reading: 128 hex). */
int eb_digest_valid(const char *s);
/* Value of a hexadecimal digit (either case), or -1. */
int eb_hex_value(char c);
/* Pointer to the hex part of a valid digest string. */
const char *eb_digest_hex(const char *digest);
/* The 32 bytes of a valid "sha256:<hex>" digest. */
void eb_digest_raw(const char *digest, unsigned char raw[32]);

/* Hash algorithms by their hashlib names (what PEP 503 pages, requirement
 * --hash options, wheel RECORD files and OCI digests call them). */
struct eb_hash_algo {
	const char *name; /* "sha256", "sha3_256", "blake2b" */
	const char *evp;  /* OpenSSL's name */
	size_t hexlen;
	/* May stand alone as a file's proof: not md5, sha1 or sha224 (pip's
	 * hash-checking mode does not accept them either). */
	unsigned strong : 1;
	/* Allowed in a requirement's --hash (pip's STRONG_HASHES). */
	unsigned pin : 1;
	/* Accepted in a wheel's RECORD: sha256 or stronger (PyPUG). */
	unsigned record : 1;
};
/* The algorithm called name (n bytes of it with _n), or NULL. */
const struct eb_hash_algo *eb_hash_algo_find(const char *name);
const struct eb_hash_algo *eb_hash_algo_find_n(const char *name, size_t n);
/* OpenSSL's EVP_MD for a (const EVP_MD *), or NULL when this OpenSSL does
 * not offer it (a FIPS build without md5). */
const void *eb_hash_algo_md(const struct eb_hash_algo *a);
/* Lower-case hex digest of data by a into out (129 bytes); -1 when
 * OpenSSL does not offer the algorithm. */
int eb_hash_hex(const struct eb_hash_algo *a, const void *data, size_t len, char out[129]);

#endif
