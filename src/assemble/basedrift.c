/*
 * basedrift.c - the lock's base digest against the spec's reference (see
 * basedrift.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "assemble/basedrift.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "util/alloc.h"
#include "util/digest.h"

int eb_base_drift(struct eb_registry *reg, const char *spec_base, const char *locked, char **why,
		  struct eb_error **err)
{
	struct eb_imageref ref;
	char now[EB_DIGEST_STR_LEN + 1];
	char *mt = NULL;
	int r = 0;

	*why = NULL;
	if (!locked || eb_imageref_parse(&ref, spec_base, NULL) < 0)
		return 0;
	if (ref.digest) {
		if (strcmp(ref.digest, locked) != 0) {
			*why = eb_xasprintf("base '%s' names %s, the lock %s (the lock was edited)",
					    spec_base, ref.digest, locked);
			r = 1;
		}
	} else if (reg) {
		if ((r = eb_registry_resolve(reg, spec_base, now, &mt, err)) < 0) {
			eb_error_wrap(err, "looking up the base '%s' the lock pins", spec_base);
		} else if (strcmp(now, locked) != 0) {
			*why = eb_xasprintf("base '%s' resolves to %s now, the lock says %s (the tag "
					    "moved, or the lock was edited)", spec_base, now, locked);
			r = 1;
		}
		free(mt);
	}
	eb_imageref_release(&ref);
	return r;
}
