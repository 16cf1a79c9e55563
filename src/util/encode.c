/*
 * encode.c - hex and base64.  Base64 is OpenSSL's; the urlsafe variant
 * translates the alphabet around it rather than keeping a second coder.
 * The front binary (EB_DIGEST_NETTLE, see digest.c) needs hex only and
 * does not link libcrypto: base64 is left out there.
 */
#include "config.h"

#include <ctype.h>
#ifndef EB_DIGEST_NETTLE
#include <openssl/evp.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/encode.h"

void eb_hex_encode(char *out, const void *raw, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = raw;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	out[2 * n] = '\0';
}

#ifndef EB_DIGEST_NETTLE
char *eb_base64_encode(const void *data, size_t len)
{
	char *out = eb_xmalloc(4 * ((len + 2) / 3) + 1);
	int n = EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	out[n < 0 ? 0 : n] = '\0';
	return out;
}

static int is_b64(int c)
{
	return isalnum(c) || c == '+' || c == '/';
}

char *eb_base64_decode(const char *s, size_t *len)
{
	size_t n = strlen(s), body = 0, eq = 0, padded;
	char *in, *out;
	int r;

	while (body < n && is_b64((unsigned char)s[body]))
		body++;
	while (body + eq < n && s[body + eq] == '=')
		eq++;
	/* Only alphabet characters, then at most two '=' that complete a
	 * quantum; unpadded input is accepted (some tools write it). */
	if (body + eq != n || eq > 2 || body % 4 == 1 || (eq && (body + eq) % 4))
		return NULL;
	padded = (body + 3) / 4 * 4;
	in = eb_xmalloc(padded + 1);
	memcpy(in, s, body);
	memset(in + body, '=', padded - body);
	in[padded] = '\0';
	out = eb_xmalloc(padded / 4 * 3 + 1);
	r = padded ? EVP_DecodeBlock((unsigned char *)out, (unsigned char *)in, (int)padded) : 0;
	free(in);
	if (r < 0) {
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	r -= (int)(padded - body);
	out[r] = '\0';
	if (len)
		*len = (size_t)r;
	return out;
}

char *eb_base64url_encode(const void *data, size_t len)
{
	char *s = eb_base64_encode(data, len);
	char *eq = strchr(s, '=');

	if (eq)
		*eq = '\0';
	for (char *p = s; *p; p++)
		*p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
	return s;
}

static int b64_value(char c)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *q = c ? strchr(a, c) : NULL;
	return q ? (int)(q - a) : -1;
}

char *eb_base64url_decode(const char *s, size_t *len)
{
	size_t n = strlen(s);
	char *t = eb_xstrdup(s), *out;
	size_t body;

	for (char *p = t; *p; p++) {
		if (*p == '+' || *p == '/') {
			free(t);
			return NULL;
		}
		*p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
	}
	body = n;
	while (body && t[body - 1] == '=')
		body--;
	/* the leftover bits of a short last quantum must be zero */
	if ((body % 4 == 2 && body && (b64_value(t[body - 1]) & 15)) ||
	    (body % 4 == 3 && (b64_value(t[body - 1]) & 3))) {
		free(t);
		return NULL;
	}
	out = eb_base64_decode(t, len);
	free(t);
	return out;
}
#endif
