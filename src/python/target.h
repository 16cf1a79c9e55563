/*
 * target.h - the Python environment a wheel is installed for, read from
 * the base image: interpreter path and version, where packages and scripts
 * go, and the C library (glibc or musl, with its version) that decides
 * which manylinux/musllinux wheels fit.
 *
 * envbuild never runs the base image, so it reads the base's layers
 * (oldest first, applying whiteouts): official python:* images keep
 * CPython in /usr/local (/usr/local/bin/python3.X, site-packages under
 * /usr/local/lib/python3.X); Debian and Ubuntu (nvidia/cuda among them)
 * have /usr/bin/python3.X and take pip-style installs in
 * /usr/local/lib/python3.X/dist-packages.  glibc's version is the
 * "release version X.Y" string inside libc.so.6 (or its libc-X.Y.so
 * name); musl is recognised by its loader, and its version (which the
 * loader does not record in a findable way) is taken as 1.2 unless the spec
 * says otherwise.  The patch level ("3.11.4", for python_full_version
 * markers) comes from the spec's `python` when it has three parts, else
 * from usr/local/include/python3.X/patchlevel.h (python:* images) or
 * the python3.X-minimal record in var/lib/dpkg/status (Debian, Ubuntu).  Every detected value can be overridden from the spec.
 *
 * The distributions the base already has are recorded too (the
 * `*.dist-info` directories in the site directories of that Python:
 * usr/local/lib/python3.X/{site,dist}-packages, usr/lib/python3.X/
 * {site,dist}-packages and Debian's usr/lib/python3/dist-packages), each
 * with the files its RECORD lists, so that a pin of another version can
 * remove them as `pip install` would.  Debian's python3-* packages ship no
 * RECORD (pip refuses to uninstall them too): those have files == NULL.
 *
 * Ownership: eb_pytarget_detect() fills a struct the caller releases with
 * eb_pytarget_release(); overrides are borrowed.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_TARGET_H
#define EB_PYTHON_TARGET_H

#include <stddef.h>

#include "util/error.h"

enum eb_libc { EB_LIBC_UNKNOWN = 0, EB_LIBC_GLIBC, EB_LIBC_MUSL };

/* A distribution installed in the base image. */
struct eb_pybase_dist {
	char *name;      /* normalised (PEP 503) */
	char *version;   /* from the directory name */
	char *dist_info; /* "/usr/local/lib/python3.11/site-packages/foo-1.0.dist-info" */
	/* RECORD's paths made absolute ("/usr/local/bin/foo"), sorted, unique;
	 * NULL when the base has no RECORD for it */
	char **files;
	size_t nfiles;
};

struct eb_pytarget {
	char *python_version; /* "3.11" */
	/* "3.11.4", or NULL when neither the base nor the spec says (markers
	 * on python_full_version then see "3.11.0") */
	char *python_full_version;
	char *interpreter;    /* "/usr/local/bin/python3.11" */
	char *purelib;        /* "/usr/local/lib/python3.11/site-packages" */
	char *platlib;        /* same as purelib on Linux */
	char *scripts;        /* "/usr/local/bin" */
	char *data;           /* "/usr/local" */
	char *include;        /* "/usr/local/include/python3.11" (headers go in <include>/<name>) */
	char *machine;        /* "x86_64", "aarch64", ... */
	enum eb_libc libc;
	int libc_major, libc_minor;
	int libc_assumed; /* musl version not found in the image: 1.2 assumed */
	struct eb_pybase_dist *dists; /* installed in the base, sorted by name */
	size_t ndists;
};

/* Values from the spec that win over detection (NULL/0: detect). */
struct eb_pytarget_overrides {
	const char *python_version; /* "3.11" (also used to pick among several) */
	const char *interpreter;
	const char *site_packages;
	const char *libc;           /* "glibc 2.36", "musl 1.2" */
};

/* Read the base's layers (paths of layer blobs, oldest first; gzip, zstd
 * or plain tar) for platform ("linux/amd64").  Fails with a clear message
 * when the base has no Python (or not the version asked for) or no known C
 * library and no override says what to use. */
int eb_pytarget_detect(struct eb_pytarget *out, const char *const *layers, size_t nlayers,
		       const char *platform, const struct eb_pytarget_overrides *ov,
		       struct eb_error **err);
/* The same, checking each layer's uncompressed bytes against diff_ids[i]
 * (the base config's rootfs.diff_ids; NULL, or an empty entry: not
 * checked) while reading it: a base whose layer is not what its config
 * says fails with -EB_EINVALID instead of being shipped as is. */
int eb_pytarget_detect_verified(struct eb_pytarget *out, const char *const *layers,
				const char *const *diff_ids, size_t nlayers, const char *platform,
				const struct eb_pytarget_overrides *ov, struct eb_error **err);
struct eb_basefs;
struct eb_blobstore;
/* The same answers from the base's file-tree view (oci/basefs.h, built
 * from the same layers, oldest first, with their diff_ids checked): the
 * view already says which paths the merged tree has, whiteouts and
 * shadowing applied, so only the few files whose bytes matter (RECORDs,
 * libc.so.6, patchlevel.h, dpkg's status) are read, each from the one
 * layer its visible entry is in, newest layer first, each layer left
 * after its last needed entry; a layer with none is not read at all (nor,
 * with bs, fetched from the shared cache).  layers[i] is view layer i. */
int eb_pytarget_detect_fs(struct eb_pytarget *out, const struct eb_basefs *fs,
			  const char *const *layers, size_t nlayers, struct eb_blobstore *bs,
			  const char *platform, const struct eb_pytarget_overrides *ov,
			  struct eb_error **err);
/* A target from the overrides alone, without an image (python_version and
 * libc required): for checks that read no base. */
int eb_pytarget_assume(struct eb_pytarget *out, const char *platform,
		       const struct eb_pytarget_overrides *ov, struct eb_error **err);
void eb_pytarget_release(struct eb_pytarget *t);
/* The base's distribution called name (normalised), or NULL. */
const struct eb_pybase_dist *eb_pytarget_base_dist(const struct eb_pytarget *t, const char *name);
/* Parse RECORD text (CSV: path,hash,size) of the dist-info directory
 * dist_info ("/usr/.../site-packages/foo-1.0.dist-info"): each path made
 * absolute against the dist-info's parent, ".." resolved; a path that
 * would leave the root is dropped.  *files sorted and unique, the caller
 * frees each and the array. */
void eb_pytarget_parse_record(const char *text, size_t len, const char *dist_info, char ***files,
			      size_t *n);
/* What markers see as python_full_version: the patch level when known,
 * else "3.X" (which eb_marker_env_init() reads as 3.X.0). */
const char *eb_pytarget_full_version(const struct eb_pytarget *t);
/* "linux/amd64" -> "x86_64" (static string), NULL when unknown. */
const char *eb_pytarget_machine(const char *platform);

#endif
