/*
 * source.c - the order of the layer sources in every image: bottom to
 * top, what changes least lowest (see source.h for adding one).
 */
#include "config.h"

#include <stddef.h>

#include "assemble/source.h"

const struct eb_source_ops *const eb_sources[] = {
	&eb_source_basebc, /* the base's own missing bytecode: changes with the base only */
	&eb_source_debian, /* pinned Debian packages: below everything built on them */
	&eb_source_accounts, /* users, groups, dirs: over the packages' own /etc files */
	&eb_source_python, /* pinned wheels: change when a pin does */
	&eb_source_files,  /* the project's own files: change most */
	NULL,
};
