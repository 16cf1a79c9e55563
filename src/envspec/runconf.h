/*
 * runconf.h - the `expose` and `stopsignal` keys of a target: how the
 * image runs, written into its config (ExposedPorts, StopSignal) with
 * Docker's semantics (EXPOSE adds to the base's ports; STOPSIGNAL
 * replaces the base's signal).
 *
 * Layering (ground floor, part of envspec/): util/ only.  Ownership: the
 * struct owns its strings, released with eb_spec_runconf_release().
 */
#ifndef EB_ENVSPEC_RUNCONF_H
#define EB_ENVSPEC_RUNCONF_H

#include <stddef.h>

#include <jansson.h>

#include "util/diag.h"
#include "util/yamljson.h"

struct eb_spec_runconf {
	char **expose;    /* "8000/tcp", normalised; NULL-terminated */
	size_t nexpose;
	char *stopsignal; /* as written; NULL: the base's */
};

/* obj's `expose` and `stopsignal` (either may be absent) into rc. */
void eb_spec_runconf_parse(const struct eb_yj_doc *doc, const char *file, const json_t *obj,
			   struct eb_spec_runconf *rc, struct eb_diag_list *diags);
void eb_spec_runconf_release(struct eb_spec_runconf *rc);

#endif
