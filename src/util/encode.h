/*
 * encode.h - the one hex encoder and the one base64 (standard and urlsafe)
 * of envbuild, over OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock.
 *
 * Layering (ground floor): util/ uses only libc and the libraries it wraps;
 * it knows nothing of images, packages or the network.
 *
 * Ownership: returned strings are the caller's (free()); eb_hex_encode
 * writes into the caller's buffer.
 */
#ifndef EB_UTIL_ENCODE_H
#define EB_UTIL_ENCODE_H

#include <stddef.h>

/* Lowercase hex of n bytes into out (2n characters and a NUL). */
void eb_hex_encode(char *out, const void *raw, size_t n);

/* Standard base64 with padding. */
char *eb_base64_encode(const void *data, size_t len);
/* Decode standard base64 (missing padding tolerated, whitespace not) into a
 * NUL-terminated string; *len (if non-NULL) gets the decoded length.  NULL
 * when malformed. */
char *eb_base64_decode(const char *s, size_t *len);

/* Urlsafe base64 ('-' and '_') without padding, as wheel RECORD files
 * write hashes (PEP 376). */
char *eb_base64url_encode(const void *data, size_t len);
/* Decode urlsafe base64 (padding tolerated) like eb_base64_decode; also
 * NULL when the leftover bits of the last quantum are not zero (not the
 * canonical encoding). */
char *eb_base64url_decode(const char *s, size_t *len);

#endif
