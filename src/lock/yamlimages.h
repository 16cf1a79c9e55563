/*
 * yamlimages.h - `image:` references in YAML that is not a spec (CI
 * workflows, Kubernetes/Argo/Tekton manifests, Helm charts), on top of the
 * scalar check of lock/resolve.h (EB103 no tag, EB104 latest):
 *
 *  - an `image` with a sibling `tag` and/or `digest` key (Argo's
 *    `{ image: debian, tag: "9.1" }`) is one reference, image:tag@digest;
 *  - an `image` mapping with `repository` (Helm values.yaml:
 *    `image: { registry, repository, tag, digest }`) is the reference
 *    registry/repository:tag@digest, reported at the repository;
 *  - Go/Helm templates: `{{ ... }}` actions are blanked (columns kept) and
 *    the rest is checked; a warning (EB105) says so, and YAML that still
 *    does not parse is a warning, not an error.
 *
 * Layering (service floor, beside lock/resolve whose scalar check it
 * extends): uses util/yamljson, lock/resolve and ref/imageref; never the
 * network.
 * Findings go to diags; nothing fails.
 */
#ifndef EB_LOCK_YAMLIMAGES_H
#define EB_LOCK_YAMLIMAGES_H

#include <stddef.h>

#include "util/diag.h"

void eb_yamlimages_check(const char *path, const char *text, size_t len,
			 struct eb_diag_list *diags);

#endif
