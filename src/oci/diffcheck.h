/*
 * diffcheck.h - does a layer blob's uncompressed stream hash to the
 * diff_id a cache record says?  A record from the shared cache is the
 * word of whoever could write the cache repository: the image config
 * names the record's diff_id, so a lie would make an image whose layer
 * does not match its config ("diffid mismatch").  The blob is decompressed
 * and hashed once; a stamp (<root>/diffids/<blob hex>, holding the
 * diff_id) remembers the answer for this cache, so later runs do not
 * decompress again.
 *
 * Layering: oci/ (uses oci/layerin, the blob store's root, util/).  Never
 * prints, never the network.
 */
#ifndef EB_OCI_DIFFCHECK_H
#define EB_OCI_DIFFCHECK_H

struct eb_blobstore;

/* 1 when the local blob digest decompresses to diff_id (or its stamp says
 * so), 0 when it does not or cannot be read. */
int eb_diffcheck_layer(const struct eb_blobstore *bs, const char *digest, const char *diff_id);

#endif
