/*
 * basefs.h - what a base image's filesystem looks like, from its layers'
 * tar headers alone: path -> type, mode, owner, symlink target.
 *
 * A `files` destination is placed as Docker's COPY places it: parent
 * components are resolved through the base's symlinks (on Debian 12
 * `/bin` is a symlink to `usr/bin`, so `/bin/tool.sh` lands in
 * `/usr/bin/tool.sh`), and parent directories the base has keep their
 * mode and owner (`/tmp` stays 1777, `/root` 0700).  For that the layer
 * writer needs this view.
 *
 * Layers are applied oldest first, with OCI whiteouts: `.wh.NAME` removes
 * NAME (and its subtree) of lower layers, `.wh..wh..opq` hides everything
 * lower layers have under its directory.  Hardlinks count as regular
 * files.  File contents are read only for the few small system files a
 * build reads (eb_basefs_keeps()): kept in the view, they cost no second
 * pass over a layer.
 *
 * Uses libarchive, the blob store and util/ only; writes nothing but its
 * cache files.  Ownership:
 * eb_basefs_new() returns a view freed with eb_basefs_free(); nodes
 * returned by eb_basefs_lookup() belong to the view; eb_basefs_resolve()
 * returns a string the caller frees.
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_BASEFS_H
#define EB_OCI_BASEFS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

enum eb_basefs_type {
	EB_BASEFS_DIR = 1,
	EB_BASEFS_FILE,    /* regular files and hardlinks */
	EB_BASEFS_SYMLINK,
	EB_BASEFS_OTHER,   /* devices, fifos */
};

struct eb_basefs_node {
	char *path;    /* relative, normalised: "usr/bin", no leading '/' */
	enum eb_basefs_type type;
	unsigned mode; /* permission bits, 07777 */
	uint32_t uid, gid;
	char *link;    /* EB_BASEFS_SYMLINK: the target as stored */
	/* Where the entry that made this node is: the layer (0 = the oldest
	 * added) and its place among that layer's entries that are not
	 * whiteouts (0 = the first), so that a reader who needs a file's
	 * bytes opens that one layer and stops there. */
	unsigned layer;
	uint32_t entry;
	/* The bytes of a regular file the view keeps (eb_basefs_keeps()),
	 * read in the same pass as the headers; NULL for every other node. */
	char *data;
	size_t datalen;
};

struct eb_basefs;

/* An empty view: the filesystem of `scratch`. */
struct eb_basefs *eb_basefs_new(void);
void eb_basefs_free(struct eb_basefs *fs);
/* Apply one layer (a tar, gzip, zstd or plain) on top of what the view
 * holds: layers are added oldest first. */
int eb_basefs_add_layer(struct eb_basefs *fs, const char *path, struct eb_error **err);
/* The same, hashing the uncompressed stream on the way: it must match
 * diff_id (the config's rootfs.diff_ids entry; NULL or "": not checked),
 * else -EB_EINVALID. */
int eb_basefs_add_layer_verified(struct eb_basefs *fs, const char *path, const char *diff_id,
				 struct eb_error **err);
int eb_basefs_add_layer_mem(struct eb_basefs *fs, const void *data, size_t len,
			    struct eb_error **err);
struct eb_blobstore;
struct eb_descriptor;
/* A view of the layers (oldest first; n = 0: scratch), read from the blob
 * store (or fetched through its backends, oci/cache.h).  The view of a
 * list of layers is cached (cache record kind "basefs", keyed by their
 * digests), so a base is decompressed once, not on every build, and a
 * shared cache spares a fresh machine the layers. */
int eb_basefs_load(struct eb_basefs **out, struct eb_blobstore *bs,
		   const struct eb_descriptor *layers, size_t n, struct eb_error **err);
/* The same, each layer checked against diff_ids[i] (NULL, or an empty
 * entry: not checked) when it is read; the cache key includes them, so a
 * config that says otherwise about the same blobs is read again. */
int eb_basefs_load_verified(struct eb_basefs **out, struct eb_blobstore *bs,
			    const struct eb_descriptor *layers, const char *const *diff_ids,
			    size_t n, struct eb_error **err);
/* 1 when a tar entry named raw is a whiteout (".wh.NAME" or the opaque
 * marker), which makes no node: entries are counted (node.entry) without
 * them. */
int eb_basefs_is_whiteout(const char *raw);
/* 1 when the view keeps the bytes of a regular file at path (relative,
 * normalised): /etc/passwd, /etc/group, /etc/login.defs and dpkg's
 * status, each up to EB_BASEFS_KEEP_MAX bytes (a larger one is read from
 * its layer when asked for).  Never /etc/shadow or /etc/gshadow, whose
 * hashes have no business in a cache record. */
#define EB_BASEFS_KEEP_MAX (32u << 20)
int eb_basefs_keeps(const char *path);
/* Number of paths in the view. */
size_t eb_basefs_count(const struct eb_basefs *fs);

/* The node at path exactly (no symlink followed; leading '/' optional),
 * or NULL when the base has nothing there.  "" or "/" is the root, which
 * is a directory 0755 0:0 unless a layer says otherwise. */
const struct eb_basefs_node *eb_basefs_lookup(const struct eb_basefs *fs, const char *path);
/* The nodes strictly below directory dir (leading '/' optional): *first
 * and the count returned are a run of the view's nodes (sorted by path),
 * valid while the view is unchanged. */
size_t eb_basefs_under(const struct eb_basefs *fs, const char *dir,
		       const struct eb_basefs_node **first);

/* Resolve path inside the base as a chroot would: every parent component
 * that is a symlink is followed (absolute targets from the root, ".."
 * never above the root), and the last one too when follow_last is set.
 * *out is the resolved path, relative, without leading '/' ("" = root).
 * Components the base lacks are kept as written.  Fails (EB_EINVALID) on
 * a symlink loop (more than 40 links) and when a parent component is a
 * regular file or other non-directory of the base. */
int eb_basefs_resolve(const struct eb_basefs *fs, const char *path, int follow_last, char **out,
		      struct eb_error **err);

#endif
