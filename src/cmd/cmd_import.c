/*
 * cmd_import.c - `envbuild import [Dockerfile|Containerfile]`: write a
 * spec from a Dockerfile (stage/import.h) and name every line that could
 * not be declared, as `Dockerfile:LINE:COL: not converted: ...`.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "stage/import.h"

int cmd_import(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "repository", required_argument, NULL, 'R' },
		{ "index", required_argument, NULL, 'i' },
		{ "all-stages", no_argument, NULL, 'a' },
		{ "allow-partial", no_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_import_options o = { 0 };
	struct eb_import_result res = { 0 };
	int partial = 0, c, r;
	struct stat st;

	while ((c = getopt_long(argc, argv, "t:o:f", opts, NULL)) != -1) {
		switch (c) {
		case 't': o.target = optarg; break;
		case 'o': o.output = optarg; break;
		case 'R': o.repository = optarg; break;
		case 'i': o.index = optarg; break;
		case 'a': o.all_stages = 1; break;
		case 'p': partial = 1; break;
		case 'f': o.force = 1; break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild import --help'");
		}
	}
	if (argc - optind > 1)
		return eb_error_set(err, EB_EUSAGE, "one Dockerfile at a time");
	if (optind < argc)
		o.dockerfile = argv[optind];
	else
		o.dockerfile = stat("Dockerfile", &st) == 0 || stat("Containerfile", &st) != 0
				       ? "Dockerfile" : "Containerfile";
	r = eb_import_run(&o, &res, err);
	if (r < 0)
		goto done;
	for (size_t i = 0; i < res.nleft; i++) {
		printf("%s:%u:%u: %s\n", o.dockerfile, res.left[i].line, res.left[i].col,
		       res.left[i].msg);
		if (res.left[i].hint)
			printf("  hint: %s\n", res.left[i].hint);
	}
	for (size_t i = 0; i < res.nwritten; i++)
		printf("wrote %s\n", res.written[i]);
	for (size_t i = 0; i < res.nnotes; i++)
		printf("next: %s\n", res.notes[i]);
	if (res.nleft)
		printf("%zu line%s not converted%s\n", res.nleft, res.nleft == 1 ? "" : "s",
		       partial ? " (--allow-partial)" : "");
	r = res.nleft && !partial ? 1 : 0;
done:
	eb_import_result_release(&res);
	return r;
}
