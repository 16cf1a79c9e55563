/*
 * sign.h - the signatures envbuild puts on images: ECDSA P-256 over
 * SHA-256 with a PEM key read by OpenSSL, as cosign makes and checks
 * them; the cosign "simple signing" payload that containers/image
 * (podman, skopeo, CRI-O) verifies under a sigstoreSigned policy; and
 * DSSE envelopes (in-toto attestations) signed over their PAE bytes.
 *
 * Signatures are ASN.1 DER, base64 (standard, padded), as cosign's
 * annotation `dev.cosignproject.cosign/signature` and DSSE's `sig`
 * carry them.  A key is a PEM "PRIVATE KEY" or "EC PRIVATE KEY" (an
 * "ENCRYPTED PRIVATE KEY" with the passphrase in
 * $ENVBUILD_SIGN_KEY_PASSWORD); cosign's own "ENCRYPTED SIGSTORE PRIVATE
 * KEY" is refused with a hint (OpenSSL cannot read it).
 *
 * Layering (core floor): trust/ uses util/, OpenSSL and jansson only; it
 * builds documents from plain values, never reads images or the network.
 *
 * Ownership: keys from eb_sign_key_load*() are freed with
 * eb_sign_key_free(); returned strings and buffers are the caller's.
 */
#ifndef EB_TRUST_SIGN_H
#define EB_TRUST_SIGN_H

#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"

#define EB_COSIGN_SIG_MEDIA_TYPE "application/vnd.dev.cosign.simplesigning.v1+json"
#define EB_COSIGN_SIG_ANNOTATION "dev.cosignproject.cosign/signature"
#define EB_DSSE_MEDIA_TYPE "application/vnd.dsse.envelope.v1+json"
#define EB_INTOTO_PAYLOAD_TYPE "application/vnd.in-toto+json"

struct eb_sign_key;

/* A private key (PEM; EC P-256 only: what cosign and containers/image
 * verify). */
int eb_sign_key_load(struct eb_sign_key **out, const char *path, struct eb_error **err);
/* A public key (PEM "PUBLIC KEY"), or the public half of a private key
 * file. */
int eb_sign_key_load_public(struct eb_sign_key **out, const char *path, struct eb_error **err);
void eb_sign_key_free(struct eb_sign_key *k);
/* DSSE keyid: the hex sha256 of the public key's DER (SubjectPublicKeyInfo). */
const char *eb_sign_key_id(const struct eb_sign_key *k);

/* ECDSA-SHA256 over data: base64 of the DER signature. */
int eb_sign_data(const struct eb_sign_key *k, const void *data, size_t len, char **b64_out,
		 struct eb_error **err);
/* 1 when b64 is a valid signature of data by k, else 0. */
int eb_sign_check(const struct eb_sign_key *k, const void *data, size_t len, const char *b64);

/* The simple signing payload for manifest digest under docker_reference
 * ("registry/repo"), exactly the fields containers/image accepts, in a
 * fixed order (same inputs, same bytes). */
void eb_sign_payload(struct eb_buf *out, const char *docker_reference, const char *digest);
/* The digest the payload signs, when payload is one (fields checked as
 * containers/image does); NULL otherwise.  The caller frees. */
char *eb_sign_payload_digest(const void *payload, size_t len);

/* DSSE's pre-authentication encoding of (type, body). */
void eb_dsse_pae(struct eb_buf *out, const char *type, const void *body, size_t len);
/* A DSSE envelope over body: signed by k, or with no signatures when k is
 * NULL.  Compact JSON, keys sorted. */
int eb_dsse_envelope(struct eb_buf *out, const struct eb_sign_key *k, const char *type,
		     const void *body, size_t len, struct eb_error **err);
/* Open an envelope: its payload (decoded; the caller releases) and, with
 * k, 1 when a signature by k checks over the PAE, else 0.  -EB_EINVALID
 * when it is not an envelope. */
int eb_dsse_open(const void *env, size_t len, const struct eb_sign_key *k, struct eb_buf *payload,
		 char **payload_type, int *signed_ok, struct eb_error **err);

#endif
