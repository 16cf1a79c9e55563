/*
 * layout.h - OCI image layout directories (image-spec image-layout.md) and
 * docker-archive tarballs (the `docker save` / `docker load` format).
 *
 * Reading takes layouts written by envbuild, skopeo, umoci or docker:
 * `oci-layout` must say version 1.x, `index.json` must be an image index;
 * an image is chosen by its org.opencontainers.image.ref.name annotation
 * (or is the only one), nested indexes are followed to the manifest for a
 * platform, and every document read is checked against its descriptor's
 * size and digest, with EB_IMAGE_DOC_MAX as a cap.
 *
 * Writing is all-or-nothing.  The layout is built in a hidden temporary
 * directory next to the destination, filled with verified copies (or
 * reflinks) of blobs from the blob store, never hard links into it (a blob
 * the replaced layout holds intact, hashed first, is linked from there
 * instead of copied again), finished with
 * `oci-layout` and `index.json`, fsynced and then swapped in by rename
 * under a lock on the parent directory (concurrent writers: the last
 * one wins, every one succeeds).  A
 * failed or interrupted write leaves the previous layout (or nothing) in
 * place, never half a layout.  An existing destination is only replaced when
 * it is an OCI layout or an empty directory.
 *
 * Ownership: a struct eb_layout_image owns everything in it
 * (eb_layout_image_release, which leaves it zeroed).  Strings returned are
 * the caller's.  The blob store is borrowed.
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_LAYOUT_H
#define EB_OCI_LAYOUT_H

#include "oci/blobstore.h"
#include "oci/image.h"
#include "util/buf.h"
#include "util/error.h"

#define EB_LAYOUT_VERSION "1.0.0"

/* One image read from a layout. */
struct eb_layout_image {
	/* The entry chosen in index.json: the manifest itself, or an index
	 * that led to it (its digest is what a tag of the layout names). */
	struct eb_descriptor top;
	/* The image manifest's descriptor (a copy of top for a single image). */
	struct eb_descriptor manifest_desc;
	struct eb_manifest manifest;
	struct eb_config config;
};

/* Read the image named ref (NULL: the only image in the layout) for
 * platform (NULL: the only platform the image has).  -EB_ENOTFOUND when
 * there is no such image or platform, -EB_EINVALID for a malformed layout
 * or a blob that does not match its descriptor. */
int eb_layout_read(struct eb_layout_image *out, const char *dir, const char *ref,
		   const struct eb_platform *platform, struct eb_error **err);
void eb_layout_image_release(struct eb_layout_image *img);

/* "<dir>/blobs/<algorithm>/<hex>", or NULL when digest is not valid. */
char *eb_layout_blob_path(const char *dir, const char *digest);
/* Append the blob d to out after checking its size (at most max bytes) and
 * digest. */
int eb_layout_read_blob(struct eb_buf *out, const char *dir, const struct eb_descriptor *d,
			size_t max, struct eb_error **err);
/* Copy blob d (a layer, say) from the layout into the blob store, checking
 * size and digest on the way; a no-op when the store has it already. */
int eb_layout_import_blob(struct eb_blobstore *bs, const char *dir,
			  const struct eb_descriptor *d, struct eb_error **err);

/* Write dir as a layout holding one image: top (an image manifest or an
 * index of them, whose bytes are in the blob store like every config and
 * layer they reference), tagged ref_name in index.json (NULL: untagged).
 * Replaces what was at dir atomically. */
int eb_layout_write(const char *dir, struct eb_blobstore *bs, const struct eb_descriptor *top,
		    const char *ref_name, struct eb_error **err);

/* 1 when s is a valid org.opencontainers.image.ref.name (image-layout.md
 * grammar: components of [A-Za-z0-9] joined by [-._:@+] or "--", separated
 * by '/'). */
int eb_layout_ref_valid(const char *s);

/* Write a docker-archive tarball at path (temp file + rename) for one image
 * manifest in the blob store: manifest.json (Config, RepoTags, Layers) as
 * `docker load` and `podman load` read it, plus oci-layout and index.json
 * so it is an OCI archive too (the shape `docker save` writes since 25.0).
 * repo_tag ("app:1.0", normalised to its familiar form, ":latest" when
 * untagged) may be NULL. */
int eb_layout_write_docker_archive(const char *path, struct eb_blobstore *bs,
				   const struct eb_descriptor *manifest, const char *repo_tag,
				   struct eb_error **err);

#endif
