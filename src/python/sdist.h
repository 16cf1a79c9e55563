/*
 * sdist.h - source distributions (PEP 625 archives, "name-version.tar.gz",
 * and the older ".zip"): what their file names say, and unpacking one
 * safely for a confined PEP 517 build.
 *
 * The unpacker writes only under a directory it is given, refuses any
 * member that would land elsewhere (absolute paths, "..", a path through
 * a link), every link and device, and archives over fixed size limits;
 * a refused archive leaves nothing behind.  It never runs anything: the
 * build itself is the confined runner's (sandbox/).
 *
 * Ownership: strings it returns are the caller's.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_SDIST_H
#define EB_PYTHON_SDIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* 1 when filename (a basename) has an sdist's suffix. */
int eb_sdist_is_filename(const char *filename);

/* Split "Foo_Bar-1.0.tar.gz" into the PEP 503-normalised name ("foo-bar")
 * and the version as written ("1.0").  -EB_EINVALID when it is no sdist
 * name (no suffix, no dash, an empty part). */
int eb_sdist_filename_parse(const char *filename, char **norm_name, char **version,
			    struct eb_error **err);

/* Limits of one unpack: bytes written, members. */
#define EB_SDIST_MAX_BYTES (512ull << 20)
#define EB_SDIST_MAX_MEMBERS 100000

/* Unpack the sdist archive at path into dir (which must not exist; it is
 * created, and on failure removed with whatever was written).  Members
 * must share one top directory ("name-version/"), which is stripped: the
 * project's files land directly in dir.  *top (may be NULL) gets that
 * directory's name.  Regular files and directories only, modes reduced
 * to 0644/0755. */
int eb_sdist_unpack(const char *path, const char *dir, char **top, struct eb_error **err);

/* A build requirement's wheel, its members as they are (no top directory
 * stripped), into dir, which may exist and hold other wheels' files (the
 * build environment); the same refusals.  Nothing is removed on failure:
 * the caller removes dir. */
int eb_sdist_unpack_wheel(const char *path, const char *dir, struct eb_error **err);

/* What `envbuild pin` reads of an sdist without building it: its
 * Requires-Dist (PKG-INFO of metadata version >= 2.2 that does not name
 * Requires-Dist in Dynamic, else pyproject.toml's static [project]
 * dependencies) and its [build-system] requires (setuptools' fallback
 * without one).  *deps_known is 0 when neither says: the dependencies
 * need a build.  The archive is unpacked under a temporary directory of
 * tmp_parent, removed before returning.  Arrays are the caller's
 * (eb_sdist_strv_free). */
struct eb_sdist_meta {
	int deps_known;
	char **deps;
	size_t ndeps;
	char **build_requires;
	size_t nbuild_requires;
};
int eb_sdist_read_meta(const char *path, const char *tmp_parent, struct eb_sdist_meta *out,
		       struct eb_error **err);
void eb_sdist_meta_release(struct eb_sdist_meta *m);

#endif
