/*
 * pyinstall_internal.h - what pyinstall.c (resolving, indexes) shares with
 * pyinstall_layers.c (replacements, closure check, layers): the two small
 * helpers on a resolved environment both use.  Not an API: only those two
 * files include it.
 *
 * Layering (sources floor): as assemble/pyinstall.h.
 */
#ifndef EB_BUILD_PYINSTALL_INTERNAL_H
#define EB_BUILD_PYINSTALL_INTERNAL_H

#include "assemble/pyinstall.h"

/* The dist of e called name, or NULL; it points into e. */
struct eb_pydist *eb_pyinstall__find_dist(const struct eb_pyenv *e, const char *name);

/* Records extra x on d once (copied). */
void eb_pyinstall__add_extra(struct eb_pydist *d, const char *x);

#endif
