/*
 * deflate.c - a whole gzip member from one buffer, with libdeflate or
 * zlib (see deflate.h).  The framing is written here, not by either
 * library, so both emit the same header whatever their own defaults.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

#include "oci/deflate.h"
#include "util/alloc.h"

struct eb_deflate {
	int level;
#ifdef HAVE_LIBDEFLATE
	struct libdeflate_compressor *lc;
#else
	z_stream z;
#endif
};

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

struct eb_deflate *eb_deflate_new(int level)
{
	struct eb_deflate *d = eb_xcalloc(1, sizeof(*d));

	d->level = level;
#ifdef HAVE_LIBDEFLATE
	d->lc = libdeflate_alloc_compressor(level);
	if (!d->lc)
		goto fail;
#else
	/* raw deflate (-15); memLevel 8 and the default strategy pinned
	 * because they shape the output */
	if (deflateInit2(&d->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		goto fail;
#endif
	return d;

fail:
	free(d);
	return NULL;
}

void eb_deflate_free(struct eb_deflate *d)
{
	if (!d)
		return;
#ifdef HAVE_LIBDEFLATE
	libdeflate_free_compressor(d->lc);
#else
	deflateEnd(&d->z);
#endif
	free(d);
}

size_t eb_deflate_bound(struct eb_deflate *d, size_t len)
{
#ifdef HAVE_LIBDEFLATE
	return libdeflate_deflate_compress_bound(d->lc, len) + EB_DEFLATE_FRAMING;
#else
	return deflateBound(&d->z, (uLong)len) + EB_DEFLATE_FRAMING + 16;
#endif
}

size_t eb_deflate_member(struct eb_deflate *d, const void *in, size_t len,
			 unsigned char *out, size_t cap)
{
	/* what zlib's own gzip wrapper writes for this level: MTIME 0, XFL
	 * as zlib sets it, OS 255, so the build host leaves no trace */
	static const unsigned char head[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255 };
	size_t n;
	uint32_t crc;

	if (cap < EB_DEFLATE_FRAMING)
		return 0;
	memcpy(out, head, sizeof(head));
	out[8] = d->level == 9 ? 2 : d->level < 2 ? 4 : 0;
#ifdef HAVE_LIBDEFLATE
	n = libdeflate_deflate_compress(d->lc, in, len, out + 10, cap - EB_DEFLATE_FRAMING);
	if (n == 0)
		return 0;
	crc = libdeflate_crc32(0, in, len);
#else
	if (deflateReset(&d->z) != Z_OK)
		return 0;
	d->z.next_in = (Bytef *)(uintptr_t)in;
	d->z.avail_in = (uInt)len;
	d->z.next_out = out + 10;
	d->z.avail_out = (uInt)(cap - EB_DEFLATE_FRAMING);
	if (deflate(&d->z, Z_FINISH) != Z_STREAM_END)
		return 0;
	n = cap - EB_DEFLATE_FRAMING - d->z.avail_out;
	crc = (uint32_t)crc32(0L, in, (uInt)len);
#endif
	put_le32(out + 10 + n, crc);
	put_le32(out + 14 + n, (uint32_t)len);
	return n + EB_DEFLATE_FRAMING;
}

void eb_deflate_library(char *out, size_t n)
{
#ifdef HAVE_LIBDEFLATE
	/* libdeflate has no run-time version call; its ABI (soname 0) has
	 * kept the compressed bytes of a level across releases only by
	 * chance, so the build-time version is what the id can name */
	snprintf(out, n, "libdeflate-%s", LIBDEFLATE_VERSION_STRING);
#else
	snprintf(out, n, "zlib-%s", zlibVersion());
#endif
}
