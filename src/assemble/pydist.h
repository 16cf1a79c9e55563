/*
 * pydist.h - one pinned Python distribution as a target installs it, and
 * the set of them for one platform: what the resolver (assemble/
 * pyinstall.h) fills in and the sdist builder (assemble/sdistpin.h) adds
 * its built wheel to.  A header of its own so both can name the types
 * without including each other.
 *
 * Ownership: every pointer field is owned by the struct; release with
 * eb_pydist_release / eb_pyenv_release_dists.
 *
 * Layering (sources floor): uses python/ (metadata, target) and util/;
 * never registry/, the network or the layer writer.
 */
#ifndef EB_ASSEMBLE_PYDIST_H
#define EB_ASSEMBLE_PYDIST_H

#include <stddef.h>
#include <stdint.h>

#include "python/metadata.h"
#include "python/target.h"
#include "util/digest.h"
#include "util/error.h"

struct eb_pydist {
	char *name;     /* normalised */
	char *display;  /* as the requirement wrote it */
	char *version;  /* pinned version as written */
	char *filename; /* the chosen wheel file */
	char *url;      /* where it came from, credentials removed */
	char digest[EB_DIGEST_STR_LEN + 1]; /* sha256 of the wheel (blob) */
	int64_t size;
	int yanked;
	int direct; /* a `name @ URL` requirement: direct_url.json */
	/* A wheel envbuild built from an sdist (assemble/sdistbuild.h): the
	 * sdist's file name, URL and digest; NULL/"" otherwise */
	char *sdist_filename, *sdist_url;
	char sdist_digest[EB_DIGEST_STR_LEN + 1];
	int64_t sdist_size;
	int sdist_cached; /* the wheel came from the cache, nothing was built */
	char **extras; /* requested extras, normalised */
	size_t nextras;
	char *file; /* where the requirement is written */
	unsigned line, col;
	struct eb_metadata md; /* core metadata of the chosen file */
	/* The base already has this project (eb_pyenv_plan_replacements):
	 * at the pinned version (in_base: nothing is installed, as pip says
	 * "Requirement already satisfied"), or at another one (replaces,
	 * borrowed from target.dists: its files are removed by whiteouts in
	 * the package layer, remove[] absolute paths, files and directories,
	 * sorted). */
	int in_base;
	const struct eb_pybase_dist *replaces;
	int downgrade;
	char **remove;
	size_t nremove;
	/* Absolute paths another pinned wheel also installs and wins
	 * (eb_pyenv_plan_overlaps): left out of this one's layer, sorted. */
	char **skip;
	size_t nskip;
};

struct eb_bytecode;

struct eb_pyenv {
	struct eb_pytarget target;
	char *platform;
	struct eb_pydist *dists; /* sorted by name */
	size_t n;
	/* Bytecode (assemble/bytecode.h): the compiler (borrowed; NULL: the
	 * layers get none) and what identifies its output ("magic tag"), part
	 * of every package layer's key.  Set before eb_pyenv_plan_layers(). */
	struct eb_bytecode *bytecode;
	char *bytecode_id;
};

/* The image a target's sdists are built in when it names a builder
 * (`build_in:`): that target's base layers and the layers of its `apt:`
 * pins (what gives gcc and the Python headers), for one platform.  The
 * blob paths and diff_ids are borrowed from the build. */
struct eb_pybuilder {
	const char *target; /* the builder target's name */
	const char *const *layers; /* blob paths, oldest first */
	const char *const *diff_ids;
	size_t nlayers;
	/* fills the fields above on first use, so that a target whose pins
	 * are all wheels makes none of its builder's layers; NULL: filled */
	int (*make)(struct eb_pybuilder *b, struct eb_error **err);
	void *ud; /* make's */
};

/* Free what d owns (d itself is not freed). */
void eb_pydist_release(struct eb_pydist *d);
/* Free e's distributions only, leaving its target and platform. */
void eb_pyenv_release_dists(struct eb_pyenv *e);

#endif
