/*
 * deflate.h - one gzip member from one buffer: the unit of envbuild's
 * chunked gzip layers.  libdeflate when configure found it (faster than
 * zlib and smaller at the same level), zlib otherwise; both behind this
 * interface, each named by its own id because their bytes differ.
 *
 * A member is written whole and alone: header 1f 8b 08, no flags, MTIME
 * 0, XFL as zlib sets it for the level, OS 255 (unknown); the raw deflate
 * of the buffer with no dictionary; CRC-32 and ISIZE.  So its bytes are a
 * function of the buffer, the level and the library only.
 *
 * Ownership: eb_deflate_new() returns a deflater (one per thread: it is
 * not shared) freed with eb_deflate_free().
 *
 * Layering (core floor): oci/ may use util/ only here; no I/O.
 */
#ifndef EB_OCI_DEFLATE_H
#define EB_OCI_DEFLATE_H

#include <stddef.h>

/* gzip header + trailer around the raw deflate */
#define EB_DEFLATE_FRAMING 18

struct eb_deflate;

/* level 1..9; NULL when the library cannot set it up (memory). */
struct eb_deflate *eb_deflate_new(int level);
void eb_deflate_free(struct eb_deflate *d);

/* The most bytes eb_deflate_member() writes for len input bytes. */
size_t eb_deflate_bound(struct eb_deflate *d, size_t len);

/* Write the gzip member of in[0..len) to out (cap >= eb_deflate_bound());
 * returns its length, 0 on failure. */
size_t eb_deflate_member(struct eb_deflate *d, const void *in, size_t len,
			 unsigned char *out, size_t cap);

/* "libdeflate-1.14" or "zlib-1.2.13": the library that makes the bytes. */
void eb_deflate_library(char *out, size_t n);

#endif
