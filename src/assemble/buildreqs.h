/*
 * buildreqs.h - a target's `build_requirements` (the build environment
 * of the sdists it installs), read from the spec: inline pinned lines and
 * `-r FILE` requirements files, each requirement with its position.
 * `envbuild check` applies the rules of `requirements` to them (exact
 * pins, hashes all-or-nothing per file, ...); build installs their
 * wheels into a temporary build environment, never into the image.
 *
 * Layering (sources floor): assemble/ may use python/, pin/ and below.
 * Ownership: eb_buildreqs_load fills a struct released with
 * eb_buildreqs_release; entries point into it.
 */
#ifndef EB_ASSEMBLE_BUILDREQS_H
#define EB_ASSEMBLE_BUILDREQS_H

#include <stddef.h>

#include "envspec/spec.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "util/diag.h"
#include "util/error.h"

struct eb_buildreq {
	const struct eb_requirement *req;
	const char *file; /* where it is written */
	unsigned line, col;
};

struct eb_buildreqs {
	struct eb_buildreq *v;
	size_t n;
	struct eb_reqfile **files;
	size_t nfiles;
	struct eb_requirement *inl;
	size_t ninl;
};

/* With check set, problems of the input are findings in diags (the pin
 * rules included) and what can be read is still returned; else the first
 * one is the error (diags unused, may be NULL). */
int eb_buildreqs_load(struct eb_buildreqs *out, const struct eb_spec *spec,
		      const struct eb_spec_target *t, int check, struct eb_diag_list *diags,
		      struct eb_error **err);
void eb_buildreqs_release(struct eb_buildreqs *b);

#endif
