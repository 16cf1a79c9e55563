/*
 * cmd.h - the command table's entry points.
 *
 * Adding a command: write src/cmd/cmd_<name>.c with
 *   int cmd_<name>(int argc, char **argv, struct eb_error **err);
 * declare it here, add a row to the table in main.c with a one-line summary
 * and usage text, document it in doc/envbuild.1 and README.md, and test it
 * in tests/cli/.  A command that needs the network, git, archives or
 * compression goes in envbuild_full_SOURCES only and its row says
 * FULL(cmd_<name>): the front binary then execs envbuild-full for it
 * (tests/cli/front.sh fails if the front links libcurl or libgit2).
 *
 * Return values: 0 success; a positive value is the exit status for
 * "ran fine, but found problems" (1); a negative enum eb_code with *err set
 * is a failure that main.c prints and maps to an exit status; EB_CMD_FULL
 * (front binary only, err not set, nothing printed yet) asks main.c to run
 * the same command line in the full binary instead.  Commands
 * print their results (findings, digests) to stdout; they never print
 * errors.  argv[0] is the command name; getopt state is reset by main.
 *
 * Layering (command floor): cmd/ and main.c parse options, call one stage
 * function and print; only main.c prints errors and picks exit codes.
 */
#ifndef EB_CMD_H
#define EB_CMD_H

#include <stddef.h>

#include "util/error.h"

struct eb_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct eb_error **err);
	const char *summary;
	const char *usage; /* full --help text */
};

int cmd_check(int argc, char **argv, struct eb_error **err);
int cmd_build(int argc, char **argv, struct eb_error **err);
int cmd_inspect(int argc, char **argv, struct eb_error **err);
int cmd_push(int argc, char **argv, struct eb_error **err);
int cmd_lock(int argc, char **argv, struct eb_error **err);
int cmd_resolve(int argc, char **argv, struct eb_error **err);
int cmd_cache(int argc, char **argv, struct eb_error **err);
int cmd_pin(int argc, char **argv, struct eb_error **err);
int cmd_import(int argc, char **argv, struct eb_error **err);
int cmd_sbom(int argc, char **argv, struct eb_error **err);
int cmd_verify(int argc, char **argv, struct eb_error **err);

/* Returned by a command of the front binary (`envbuild`, built from main.c
 * with EB_FRONT) that needs a library only the full binary links: main.c
 * execs envbuild-full with the original command line. */
#define EB_CMD_FULL (-1000)

struct eb_diag_list;
/* check --deep: resolve the spec's pins on the indexes and check every
 * dependency of every wheel (assemble/pyinstall.c, network).  In the front
 * binary this returns EB_CMD_FULL: the network libraries live in the full
 * one (src/cmd/check_deep.c there, main.c's stub here). */
int eb_cmd_check_deep(const char *spec, const char *cache_dir, struct eb_diag_list *diags,
		      struct eb_error **err);

struct eb_registry_options;
struct eb_http_registry;

/* Registry access options shared by build and push: --ca-file FILE and
 * --insecure-registry HOST (repeatable; *hosts grows, caller frees it and
 * points ro->http.registries at it). */
#define EB_CMD_REGISTRY_LONGOPTS                                        \
	{ "ca-file", required_argument, NULL, 'C' },                    \
	{ "insecure-registry", required_argument, NULL, 'I' }
int eb_cmd_registry_option(int opt, const char *arg, struct eb_registry_options *ro,
			   struct eb_http_registry **hosts, size_t *nhosts);

/* After option parsing (optind set): refuse operands, and default *spec to
 * the spec of the current directory; a usage or not-found error else. */
int eb_cmd_find_spec(int argc, char **argv, const char **spec, struct eb_error **err);
/* The shared cache's summary line and which records came from it (one
 * line each, with whether the layer's diff_id was checked); frees
 * cst->used. */
struct eb_regcache_stats;
void eb_cmd_cache_note(struct eb_regcache_stats *cst);

/* The command table (main.c), for `help`. */
extern const struct eb_cmd eb_commands[];
const struct eb_cmd *eb_cmd_find(const char *name);
/* Print a command's help to stdout. */
void eb_cmd_print_help(const struct eb_cmd *cmd);

#endif
