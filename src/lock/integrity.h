/*
 * integrity.h - a fresh lock's records checked against each other and
 * against the spec, offline, for `envbuild check` (so the pre-commit hook
 * and CI see an edit of envbuild.lock in a pull request: its checksum
 * covers the spec and requirements files, not its own records).
 *
 *   EB040  a record that disagrees with itself: a wheel whose file name
 *          is not its name and version, whose URL does not end in its
 *          file name, a sha256 that is not 64 hex digits, a size that is
 *          not positive, a digest that is not sha256:<64 hex>;
 *   EB041  a record that disagrees with the spec: a base digest other than
 *          the spec's own @sha256:, a wheel that is no pin of the target or
 *          at another version, a sha256 that none of the pin's --hash
 *          values is, an apt package or source the target does not have.
 *
 * Layering (service floor): lock/ - uses envspec/, pin/ (requirements
 * files), ref/ and util/.  Never prints, never the network.
 */
#ifndef EB_LOCK_INTEGRITY_H
#define EB_LOCK_INTEGRITY_H

#include <jansson.h>

#include "envspec/spec.h"
#include "util/diag.h"

/* Findings about lock (read from path) go to diags. */
void eb_lock_check_integrity(const json_t *lock, const char *path, const struct eb_spec *spec,
			     struct eb_diag_list *diags);

#endif
