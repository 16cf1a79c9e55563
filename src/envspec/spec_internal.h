/*
 * spec_internal.h - what spec.c calls in the files that read its keys
 * beside it (spec_cache.c): the spec's shared-cache keys beside `cache:`:
 * `cache_from:` (the repository builds read records from) and
 * `cache_to:` (the one they write to), so that pull-request jobs can read
 * the main branch's cache and write their own, or none
 * (specs/envbuild-yaml.md, "A build cache shared through the registry").
 *
 * Layering: envspec/ (uses util/yamljson, util/diag).  Never prints.
 */
#ifndef EB_ENVSPEC_SPEC_INTERNAL_H
#define EB_ENVSPEC_SPEC_INTERNAL_H

#include <jansson.h>

#include "envspec/spec.h"
#include "util/diag.h"
#include "util/yamljson.h"

/* Read cache_from/cache_to of the spec's top-level mapping root into
 * spec; problems become findings (EB003 not a string, EB011 empty). */
void eb_spec_cache_keys(struct eb_spec *spec, const json_t *root, const struct eb_yj_doc *doc,
			const char *file, struct eb_diag_list *diags);

#endif
