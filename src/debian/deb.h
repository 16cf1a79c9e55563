/*
 * deb.h - install .deb packages into an image layer without dpkg, apt or
 * maintainer scripts: the Debian-packages layer source.
 *
 * eb_debian_write_layer() reads each .deb (an ar archive: debian-binary,
 * control.tar.*, data.tar.*) with libarchive after checking its size and
 * SHA256 against the lock, and adds to a caller-owned layer builder:
 *   - the data entries with the package's modes (the caller writes the
 *     layer with keep_modes = 1, uid = gid = 0) and numeric owners (no
 *     user or group names, as every envbuild layer), symlinks
 *     and hardlinks;
 *     paths under a directory the base has as a symlink (/bin, /lib,
 *     /lib64, /sbin on merged-/usr bases) are written through it, as
 *     `tar --keep-directory-symlink` does, and the symlink is never
 *     replaced by a directory;
 *   - the dpkg database as dpkg leaves it: /var/lib/dpkg/status (the
 *     base's entries plus "install ok installed" entries; a pinned package
 *     replaces the base's entry of the same name), info/PKG.list,
 *     .md5sums, .conffiles and the other control members; Conffiles
 *     fields carry the MD5 of the shipped files;
 *   - the default update-alternatives links the packages' postinst
 *     registers with literal arguments (`--install LINK NAME PATH PRIO`
 *     and its --slave links; highest priority wins, as dpkg's auto mode):
 *     /etc/alternatives/NAME, LINK and /var/lib/dpkg/alternatives/NAME.
 * Maintainer scripts are never run; report->postinst names the packages
 * whose postinst does more than that (anything beyond update-alternatives,
 * dpkg-maintscript-helper, `set -e`, `exit 0` and `if`/`case` on the
 * script's arguments; the caller warns).
 *
 * Refused, with nothing added to the builder: a size or SHA256 mismatch,
 * a truncated or malformed archive, a path with "..", an absolute path,
 * device nodes, fifos and sockets, a hardlink to a path outside the
 * package, a relative symlink that climbs above the root.  Absolute
 * symlink targets are kept: Debian policy (10.5) requires them between
 * top-level directories, and inside an image they resolve in the image.
 * Owners other than root are kept (eb_layer_set_last_owner) and counted
 * in the report.
 *
 * Uses util/, oci/layer, oci/cache (the blob store as a cache of derived
 * data), debian/control and libarchive, OpenSSL (MD5 for dpkg's
 * Conffiles), pthreads (the .debs are read on up to 4 threads).  Ownership: inputs are borrowed; the report's
 * strings are owned by it (eb_deb_report_release).
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_DEB_H
#define EB_DEBIAN_DEB_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

struct eb_layer_builder;

struct eb_deb_input {
	const char *path;    /* the .deb on disk */
	const char *name, *version, *arch;
	const char *sha256;  /* 64 hex, from the lock */
	uint64_t size;
};

struct eb_deb_base {
	const char *status;  /* the base's /var/lib/dpkg/status text, or NULL */
	size_t status_len;
	/* the base's symlinked directories, "bin" -> "usr/bin" (paths
	 * relative to the root, targets resolved relative to the root) */
	const char *const *link_paths;
	const char *const *link_targets;
	size_t nlinks;
};

struct eb_deb_report {
	char **postinst;     /* packages whose postinst does more than envbuild does (owned) */
	/* for each, the commands it would have run that envbuild does not do
	 * in its place, "ldconfig adduser", "-" for any other (owned) */
	char **postinst_does;
	size_t npostinst;
	char **alternatives; /* "NAME -> PATH" links made (owned) */
	size_t nalternatives;
	size_t non_root_owned; /* entries with an owner other than 0:0 */
	size_t nfiles;       /* data entries added */
	size_t ninfo_cached; /* packages taken from their debinfo record, .deb not read */
};

int eb_debian_write_layer(struct eb_layer_builder *b, const char *stage_dir,
			  const struct eb_deb_input *debs, size_t n,
			  const struct eb_deb_base *base, struct eb_deb_report *report,
			  struct eb_error **err);
/* The same over several builders: package i's files and info/ files go to
 * pkg_builders[i] (a large package gets a layer of its own, which depends
 * on that package and the base's directory links only, so two targets
 * share it); the dpkg status and the alternatives go to `meta`, which
 * must be the topmost of them.  A NULL pkg_builders[i] means that
 * package's layer is already made (a cache hit): its .deb is still read
 * and checked, for the status, conffiles and alternatives, but nothing of
 * it is staged or added. */
int eb_debian_write_layers(struct eb_layer_builder *const *pkg_builders,
			   struct eb_layer_builder *meta, const char *stage_dir,
			   const struct eb_deb_input *debs, size_t n,
			   const struct eb_deb_base *base, struct eb_deb_report *report,
			   struct eb_error **err);
/* The same with the cache (bs; NULL: none): each .deb read leaves its
 * derived data (control members, conffile digests, the paths it ships) in
 * a "debinfo" record keyed by its sha256 (oci/cache.h), and a package
 * whose layer is already made (NULL pkg_builders[i]) is taken from that
 * record when there is one, without reading its .deb at all: a changed
 * pin decompresses only the .debs of the layers it rebuilds. */
struct eb_blobstore;
int eb_debian_write_layers_cached(struct eb_layer_builder *const *pkg_builders,
				  struct eb_layer_builder *meta, const char *stage_dir,
				  const struct eb_deb_input *debs, size_t n,
				  const struct eb_deb_base *base, struct eb_blobstore *bs,
				  struct eb_deb_report *report, struct eb_error **err);
/* 1 when bs has the derived data of the .deb with this sha256 (64 hex):
 * eb_debian_write_layers_cached() will not need the .deb of a package
 * whose layer is made. */
int eb_debian_info_cached(struct eb_blobstore *bs, const char *sha256);
void eb_deb_report_release(struct eb_deb_report *r);

/* From a base image's layer tars (bottom first; any compression), the
 * final /var/lib/dpkg/status (whiteouts honoured; *status empty when the
 * base has none) and the top-level directory symlinks (for eb_deb_base;
 * *paths and *targets are arrays of owned strings, free with
 * eb_debian_links_free). */
int eb_debian_base_scan(const char *const *layers, size_t nlayers, struct eb_buf *status,
			char ***paths, char ***targets, size_t *nlinks, struct eb_error **err);
void eb_debian_links_free(char **paths, char **targets, size_t n);
/* The same from the base's file-tree view (oci/basefs.h), which keeps the
 * status's bytes: no layer is read again (layers: the view's blobs, for a
 * status too large for the view to keep). */
struct eb_basefs;
int eb_debian_base_from_view(const struct eb_basefs *fs, const char *const *layers,
			     size_t nlayers, struct eb_buf *status, char ***paths,
			     char ***targets, size_t *nlinks, struct eb_error **err);
/* The same through the cache (bs; NULL: none): the result is kept as a
 * "debbase" record keyed by the layers' digests (layers given as blob
 * paths .../sha256/<hex>; others are scanned every time), so the base's
 * layers are decompressed once, not at every build. */
int eb_debian_base_scan_cached(struct eb_blobstore *bs, const char *const *layers,
			       size_t nlayers, struct eb_buf *status, char ***paths,
			       char ***targets, size_t *nlinks, struct eb_error **err);

/* What a command of a postinst is for, as the build's warning (EB235)
 * says it ("refresh ld.so.cache" for ldconfig), or NULL when unknown. */
const char *eb_deb_postinst_effect(const char *cmd);

#endif
