/*
 * check_deep.c - `check --deep` in the full binary: the one place the
 * check command reaches the network (assemble/pyinstall.c resolves every pin
 * to its wheel).  Kept out of cmd_check.c so that the front binary, which
 * links cmd_check.o, does not pull the HTTP, archive and registry code in;
 * the front's eb_cmd_check_deep (main.c) hands the command to this binary.
 */
#include "config.h"

#include "assemble/pyinstall.h"
#include "cmd/cmd.h"

int eb_cmd_check_deep(const char *spec, const char *cache_dir, struct eb_diag_list *diags,
		      struct eb_error **err)
{
	return eb_pyenv_check_deep(spec, cache_dir, diags, err);
}
