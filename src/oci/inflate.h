/*
 * inflate.h - the bytes of a file kept compressed inside another file: a
 * range [offset, offset + csize) of a file descriptor holding raw deflate
 * (method 8, as a zip member's data is) or the bytes themselves (method
 * 0, stored), handed out in chunks as they are decompressed.
 *
 * Why: a wheel's large members go into their layer straight from the
 * wheel (python/wheel.c), never written out to a staging file first; on
 * an ext4 page cache a write costs more than inflating again.
 *
 * Bounded: zlib's window and one input buffer of 256 KiB; time linear in
 * csize.  Exactly size bytes must come out and the deflate stream must
 * end exactly at the range's end: anything else is -EB_EINVALID ("corrupt
 * data"), a read error -EB_EIO.  The caller proves the content (a
 * digest); this only bounds it.
 *
 * Uses zlib and util/ only.  Layering (core floor): oci/ may use ref/ and
 * util/ only; it never touches the network or Python packages.
 */
#ifndef EB_OCI_INFLATE_H
#define EB_OCI_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define EB_INFLATE_STORED 0
#define EB_INFLATE_DEFLATE 8

/* Called with each chunk of the decompressed bytes, in order; < 0 stops. */
typedef int (*eb_inflate_fn)(void *ud, const void *data, size_t len, struct eb_error **err);

/* Feed the size decompressed bytes of the range to fn, in chunks of at
 * most cap bytes written to out (the caller's buffer).  name is the file
 * for messages. */
int eb_inflate_range(int fd, const char *name, uint64_t offset, uint64_t csize, int method,
		     uint64_t size, unsigned char *out, size_t cap, eb_inflate_fn fn, void *ud,
		     struct eb_error **err) EB_WUR;

#endif
