/*
 * testdecomp.h - decompress a layer blob in a unit test (zlib, libzstd),
 * appending to a caller-initialised buffer; any error fails the test.
 * A gzip blob must be whole members (envbuild writes one per 1 MiB
 * chunk) with nothing after the last, a zstd blob complete frames: what
 * envbuild's layer writer promises.  eb_test_gunzip returns the number of
 * members.
 */
#ifndef EB_TEST_DECOMP_H
#define EB_TEST_DECOMP_H

#include <check.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "util/buf.h"

static inline size_t eb_test_gunzip(const struct eb_buf *in, struct eb_buf *out)
{
	z_stream z;
	unsigned char chunk[65536];
	size_t members = 0;
	int r;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in->ptr;
	z.avail_in = (uInt)in->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		r = inflate(&z, Z_NO_FLUSH);
		ck_assert_msg(r == Z_OK || r == Z_STREAM_END, "inflate: %d", r);
		eb_buf_add(out, chunk, sizeof(chunk) - z.avail_out);
		if (r == Z_STREAM_END) {
			members++;
			/* the next member, if any: starts right after this one */
			if (z.avail_in == 0)
				break;
			ck_assert_int_eq(inflateReset(&z), Z_OK);
		}
	} while (1);
	inflateEnd(&z);
	return members;
}

static inline void eb_test_unzstd(const struct eb_buf *in, struct eb_buf *out)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in->ptr, in->len, 0 };
	unsigned char chunk[65536];
	size_t r = 1;

	while (ib.pos < ib.size) {
		ZSTD_outBuffer ob = { chunk, sizeof(chunk), 0 };
		r = ZSTD_decompressStream(d, &ob, &ib);
		ck_assert_msg(!ZSTD_isError(r), "zstd: %s", ZSTD_getErrorName(r));
		eb_buf_add(out, chunk, ob.pos);
	}
	ck_assert_uint_eq(r, 0); /* frame complete */
	ZSTD_freeDStream(d);
}

#endif
