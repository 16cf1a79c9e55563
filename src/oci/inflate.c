/*
 * inflate.c - a stored or raw-deflate range of a file, decompressed as a
 * stream of chunks (see inflate.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "oci/inflate.h"
#include "util/alloc.h"

#define IN_CHUNK (256 * 1024)

/* Up to n bytes at off; 0 at the end of the file. */
static ssize_t read_at(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t k;

	do
		k = pread(fd, buf, n, (off_t)off);
	while (k < 0 && errno == EINTR);
	return k;
}

static int short_read(const char *name, ssize_t k, struct eb_error **err)
{
	if (k < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", name);
	return eb_error_set(err, EB_EINVALID, "'%s' ends inside a compressed member", name);
}

static int stored(int fd, const char *name, uint64_t off, uint64_t size, unsigned char *out,
		  size_t cap, eb_inflate_fn fn, void *ud, struct eb_error **err)
{
	while (size > 0) {
		size_t want = size < cap ? (size_t)size : cap;
		ssize_t k = read_at(fd, out, want, off);
		int r;

		if (k <= 0)
			return short_read(name, k, err);
		if ((r = fn(ud, out, (size_t)k, err)) < 0)
			return r;
		off += (uint64_t)k;
		size -= (uint64_t)k;
	}
	return 0;
}

int eb_inflate_range(int fd, const char *name, uint64_t offset, uint64_t csize, int method,
		     uint64_t size, unsigned char *out, size_t cap, eb_inflate_fn fn, void *ud,
		     struct eb_error **err)
{
	eb_autofree unsigned char *in = NULL;
	uint64_t left = csize, produced = 0;
	z_stream z;
	int zr = Z_OK, r = 0;

	if (method == EB_INFLATE_STORED) {
		if (csize != size)
			return eb_error_set(err, EB_EINVALID,
					    "'%s': a stored member of %llu bytes says %llu", name,
					    (unsigned long long)csize, (unsigned long long)size);
		return stored(fd, name, offset, size, out, cap, fn, ud, err);
	}
	if (method != EB_INFLATE_DEFLATE)
		return eb_error_set(err, EB_EINVALID, "'%s': compression method %d", name, method);
	if (cap > UINT_MAX)
		cap = UINT_MAX;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, -15) != Z_OK)
		abort(); /* OOM */
	in = eb_xmalloc(IN_CHUNK);
	while (zr != Z_STREAM_END) {
		if (z.avail_in == 0) {
			size_t want = left < IN_CHUNK ? (size_t)left : IN_CHUNK;
			ssize_t k;

			if (want == 0) {
				r = eb_error_set(err, EB_EINVALID,
						 "'%s': a compressed member does not end where its "
						 "size says", name);
				goto out;
			}
			if ((k = read_at(fd, in, want, offset + (csize - left))) <= 0) {
				r = short_read(name, k, err);
				goto out;
			}
			left -= (uint64_t)k;
			z.next_in = in;
			z.avail_in = (unsigned)k;
		}
		z.next_out = out;
		z.avail_out = (unsigned)cap;
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			r = eb_error_set(err, EB_EINVALID, "'%s': corrupt compressed data (%s)", name,
					 z.msg ? z.msg : "zlib error");
			goto out;
		}
		{
			size_t got = cap - z.avail_out;
			if (got > size - produced) {
				r = eb_error_set(err, EB_EINVALID,
						 "'%s': a compressed member is larger than %llu bytes",
						 name, (unsigned long long)size);
				goto out;
			}
			produced += got;
			if (got && (r = fn(ud, out, got, err)) < 0)
				goto out;
		}
	}
	if (produced != size || left != 0 || z.avail_in != 0)
		r = eb_error_set(err, EB_EINVALID,
				 "'%s': a compressed member is %llu bytes, not the %llu its size says",
				 name, (unsigned long long)produced, (unsigned long long)size);
out:
	inflateEnd(&z);
	return r;
}
