/*
 * layerin.h - read a layer blob as tar, checking its diff_id on the way.
 *
 * A base layer is decompressed once: the tar reader pulls the uncompressed
 * stream through a SHA-256, so the layer's contents and its diff_id (the
 * digest of that stream, which the image config names) come from the same
 * bytes.  Used by the base's file-tree view (basefs.c) and by the Python
 * target detection (python/target.c).
 *
 * With a diff_id, or for any gzip blob, the decompression (and the hash)
 * run on a thread of the reader's own, a few 256 KiB buffers (1 MiB)
 * ahead of the tar reader, so inflating and parsing take two cores; the
 * reader is still used from one thread only.  A gzip blob is mapped and
 * decompressed member by member (oci/gunzip.h: libdeflate, zlib for a
 * member larger than 2 MiB); other compressions go through libarchive.
 *
 * Uses libarchive, oci/gunzip.h and util/ only; never writes.  Ownership:
 * eb_layerin_open() returns a reader the caller frees with
 * eb_layerin_free(); the archive it hands out belongs to the reader.
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_LAYERIN_H
#define EB_OCI_LAYERIN_H

#include <archive.h>

#include "util/error.h"

struct eb_layerin;

/* Open the layer at `path` (any compression libarchive reads) for tar
 * reading.  With `diff_id` non-empty the uncompressed stream is hashed
 * and eb_layerin_finish() checks it; with NULL or "" nothing is. */
int eb_layerin_open(struct eb_layerin **out, const char *path, const char *diff_id,
		    struct eb_error **err);
struct archive *eb_layerin_archive(struct eb_layerin *in);
/* After the last header: read what the tar reader left (the padding after
 * its end marker is part of the diff_id too) and compare.  -EB_EINVALID
 * when the layer does not match its diff_id. */
int eb_layerin_finish(struct eb_layerin *in, struct eb_error **err);
void eb_layerin_free(struct eb_layerin *in);

#endif
