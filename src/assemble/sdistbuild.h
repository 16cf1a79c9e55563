/*
 * sdistbuild.h - build the wheel of a pinned sdist with its PEP 517
 * backend, hermetically: the target's own python3 from the image being
 * built runs the backend in the confined runner (sandbox/: no network,
 * an unprivileged user, a cleared environment with SOURCE_DATE_EPOCH, a
 * time limit), seeing only the unpacked source, a build environment made
 * of the pinned build requirements' wheels, and an output directory.
 * Nothing of the build environment goes into an image.
 *
 * The sdist is unpacked with python/sdist.h's refusals; pyproject.toml's
 * [build-system] names the backend (setuptools' legacy backend when there
 * is none, as pip does); every requirement of [build-system].requires and
 * of the backend's get_requires_for_build_wheel must be among the build
 * environment's projects, else the error names the sdist and what it
 * asked for.  The wheel built must carry the pinned name and version.
 *
 * Layering (sources floor): assemble/ may use registry/, python/, lock/,
 * oci/, sandbox/, net/ and the ground floor; never stage/ or cmd/.
 * Ownership: options are borrowed; strings returned are the caller's.
 */
#ifndef EB_ASSEMBLE_SDISTBUILD_H
#define EB_ASSEMBLE_SDISTBUILD_H

#include <stddef.h>

#include "pin/marker.h"
#include "util/digest.h"
#include "util/error.h"

/* Every build's clock (SOURCE_DATE_EPOCH and the wheel's timestamps):
 * 1980-01-01, the earliest a zip holds; the hook pin asks sees the same. */
#define EB_SDIST_BUILD_EPOCH 315532800LL

/* A build requirement, installed into the build environment. */
struct eb_sdist_buildreq {
	const char *name;    /* normalised */
	const char *version;
	const char *wheel;   /* path of the wheel file */
};

struct eb_sdist_build_opts {
	const char *sdist;          /* path of the sdist archive */
	const char *filename;       /* its index file name, for messages */
	const char *name, *version; /* the pin: normalised name, version */
	const char *root;           /* the image tree (oci/rootfs.h) */
	const char *interpreter;    /* inside the tree: "/usr/bin/python3.11" */
	/* the builder target whose image root is (`build_in`), for
	 * messages; NULL: the target's own base */
	const char *builder;
	const struct eb_sdist_buildreq *reqs;
	size_t nreqs;
	/* the target's, for build requirements' markers; NULL: a requirement
	 * with a marker is not demanded */
	const struct eb_marker_env *markers;
	long long source_date_epoch; /* >= 0 */
	unsigned timeout_s;          /* 0: the runner's default */
	const char *workdir;         /* an empty directory this call may fill */
};

/* Build; *wheel gets the path of the built wheel (under workdir),
 * *wheel_name its file name.  The backend's output is in the message of a
 * failed build. */
int eb_sdist_build_wheel(const struct eb_sdist_build_opts *o, char **wheel, char **wheel_name,
			 struct eb_error **err);

/* What building the sdist needs: [build-system].requires and what the
 * backend's get_requires_for_build_wheel adds (run confined as above,
 * with the build environment o->reqs, which must meet [build-system]
 * requires, else the error of a build that lacks them; it may lack what
 * the hook adds), each a PEP 508 line, in order, without duplicates.
 * `envbuild pin` asks it (assemble/sdisthook.h). */
int eb_sdist_build_requires(const struct eb_sdist_build_opts *o, char ***reqs, size_t *n,
			    struct eb_error **err);

/* Adds "label=v\n" to a cache key of a build or a hook (v NULL: ""). */
void eb_sdist_key_add(struct eb_sha256 *h, const char *label, const char *v);

/* Can this host execute programs of machine (NULL: any)?  host gets the
 * host's machine (uname); when uname fails it is "unknown" and the answer
 * is yes, so that the runner says what fails. */
int eb_sdist_host_runs(const char *machine, char *host, size_t hostlen);

#endif
