/*
 * cmd_stub.c - commands whose issue has not landed yet: they answer
 * "not implemented yet" (exit 2), so scripts see a usage-class failure
 * rather than a silent success.
 */
#include "config.h"

#include "cmd/cmd.h"

int cmd_not_implemented(int argc, char **argv, struct eb_error **err)
{
	(void)argc;
	return eb_error_set(err, EB_EUSAGE, "'%s' is not implemented yet in envbuild %s", argv[0],
			    ENVBUILD_VERSION);
}
