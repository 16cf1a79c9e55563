/*
 * gunzip.h - decompress a gzip blob held in memory (a mapped layer), member
 * after member, as one stream.
 *
 * envbuild writes gzip layers as independent 1 MiB members (oci/deflate.h);
 * each is decompressed whole by libdeflate (about three times zlib's
 * inflate), and a member too large for its 2 MiB buffer (a base layer
 * written as one member by another tool) is inflated by zlib as a stream.
 * Without libdeflate every member goes to zlib.  Bounded: the member
 * buffer and zlib's window are the whole memory; time is linear in the
 * input.  Data after the last member that does not start another is the
 * end, as for zlib's and libarchive's readers (the caller's diff_id check
 * is what proves the content).
 *
 * Uses zlib, libdeflate and util/ only.  Ownership: eb_gunzip_new()
 * borrows data, which must outlive the reader; eb_gunzip_free() frees it.
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_GUNZIP_H
#define EB_OCI_GUNZIP_H

#include <stddef.h>

struct eb_gunzip;

/* 1 when data starts as gzip does (1f 8b). */
int eb_gunzip_is(const void *data, size_t len);

struct eb_gunzip *eb_gunzip_new(const void *data, size_t len);

/* The next decompressed bytes into buf: their count (> 0), 0 at the end,
 * -1 on bad or truncated data (msg says which). */
long eb_gunzip_read(struct eb_gunzip *g, void *buf, size_t cap, char *msg, size_t msglen);

/* How many input bytes are behind the reader: it never reads before this
 * offset again (the caller may drop those pages of a mapping). */
size_t eb_gunzip_consumed(const struct eb_gunzip *g);

void eb_gunzip_free(struct eb_gunzip *g);

#endif
