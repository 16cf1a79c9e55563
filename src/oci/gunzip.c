/*
 * gunzip.c - a gzip blob in memory decompressed member by member (see
 * gunzip.h): libdeflate for every member that fits the member buffer
 * (envbuild's own layers are 1 MiB members), zlib's streaming inflate for
 * one that does not (a base layer written as one member).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "oci/gunzip.h"
#include "util/alloc.h"

/* Twice envbuild's member size: a member of its layers always fits. */
#define MEMBER_CAP (2u << 20)

struct eb_gunzip {
	const unsigned char *in;
	size_t len, pos; /* pos: the start of the next member */
#ifdef HAVE_LIBDEFLATE
	struct libdeflate_decompressor *d;
#endif
	unsigned char *mem; /* the member decompressed, served from off */
	size_t mem_len, mem_off;
	z_stream z; /* a member too large for mem, in progress */
	int z_init, z_active;
	size_t z_pos; /* input consumed by z so far (from pos) */
};

int eb_gunzip_is(const void *data, size_t len)
{
	const unsigned char *p = data;

	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

struct eb_gunzip *eb_gunzip_new(const void *data, size_t len)
{
	struct eb_gunzip *g = eb_xcalloc(1, sizeof(*g));

	g->in = data;
	g->len = len;
#ifdef HAVE_LIBDEFLATE
	g->d = libdeflate_alloc_decompressor();
	if (!g->d)
		abort();
	g->mem = eb_xmalloc(MEMBER_CAP);
#endif
	return g;
}

/* zlib on the member at pos, into buf: > 0 bytes, 0 at its end (pos
 * moved past it), < 0 on bad data. */
static long z_step(struct eb_gunzip *g, void *buf, size_t cap, char *msg, size_t msglen)
{
	int zr;

	if (!g->z_init) {
		if (inflateInit2(&g->z, 15 + 16) != Z_OK)
			abort();
		g->z_init = 1;
	} else if (!g->z_active && inflateReset(&g->z) != Z_OK) {
		abort();
	}
	if (!g->z_active) {
		g->z_active = 1;
		g->z_pos = 0;
	}
	for (;;) {
		size_t left = g->len - g->pos - g->z_pos;
		if (g->z.avail_in == 0) {
			g->z.next_in = (unsigned char *)g->in + g->pos + g->z_pos;
			g->z.avail_in = left > UINT_MAX ? UINT_MAX : (unsigned)left;
		}
		g->z.next_out = buf;
		g->z.avail_out = cap > UINT_MAX ? UINT_MAX : (unsigned)cap;
		{
			unsigned before = g->z.avail_in;
			zr = inflate(&g->z, Z_NO_FLUSH);
			g->z_pos += before - g->z.avail_in;
		}
		if (zr == Z_STREAM_END) {
			size_t n = (size_t)((unsigned char *)g->z.next_out - (unsigned char *)buf);
			g->pos += g->z_pos;
			g->z_active = 0;
			g->z.avail_in = 0;
			if (n)
				return (long)n;
			return 0;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			snprintf(msg, msglen, "invalid gzip data: %s", g->z.msg ? g->z.msg : "zlib");
			return -1;
		}
		if ((unsigned char *)g->z.next_out != (unsigned char *)buf)
			return (long)((unsigned char *)g->z.next_out - (unsigned char *)buf);
		if (zr == Z_BUF_ERROR) { /* no progress: the input ended mid-member */
			snprintf(msg, msglen, "truncated gzip data");
			return -1;
		}
	}
}

long eb_gunzip_read(struct eb_gunzip *g, void *buf, size_t cap, char *msg, size_t msglen)
{
	for (;;) {
		if (g->mem_off < g->mem_len) {
			size_t n = g->mem_len - g->mem_off;
			if (n > cap)
				n = cap;
			memcpy(buf, g->mem + g->mem_off, n);
			g->mem_off += n;
			return (long)n;
		}
		if (g->z_active) {
			long n = z_step(g, buf, cap, msg, msglen);
			if (n != 0)
				return n;
			continue;
		}
		/* after the last member, as zlib's and libarchive's readers: the
		 * end (gzip allows no trailing data but the tools ignore zeros) */
		if (!eb_gunzip_is(g->in + g->pos, g->len - g->pos))
			return 0;
#ifdef HAVE_LIBDEFLATE
		{
			size_t used = 0, out = 0;
			enum libdeflate_result lr = libdeflate_gzip_decompress_ex(
				g->d, g->in + g->pos, g->len - g->pos, g->mem, MEMBER_CAP, &used, &out);
			if (lr == LIBDEFLATE_SUCCESS) {
				g->pos += used;
				g->mem_len = out;
				g->mem_off = 0;
				continue;
			}
			if (lr != LIBDEFLATE_INSUFFICIENT_SPACE) {
				snprintf(msg, msglen, "invalid or truncated gzip member at byte %zu", g->pos);
				return -1;
			}
		}
#endif
		{
			long n = z_step(g, buf, cap, msg, msglen);
			if (n != 0)
				return n;
		}
	}
}

size_t eb_gunzip_consumed(const struct eb_gunzip *g)
{
	return g->pos + (g->z_active ? g->z_pos : 0);
}

void eb_gunzip_free(struct eb_gunzip *g)
{
	if (!g)
		return;
#ifdef HAVE_LIBDEFLATE
	libdeflate_free_decompressor(g->d);
#endif
	if (g->z_init)
		inflateEnd(&g->z);
	free(g->mem);
	free(g);
}
