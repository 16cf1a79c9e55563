/*
 * cmd_check.c - `envbuild check [PATH...]`: options and the three output
 * formats (text for people, json for tools, github for workflow
 * annotations).  The rules themselves live in stage/check.c.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "stage/check.h"
#include "cmd/report.h"
#include "util/diag.h"

int cmd_check(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "strict", no_argument, NULL, 's' },
		{ "spec", required_argument, NULL, 'S' },
		{ "deep", no_argument, NULL, 'D' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	enum eb_report_format fmt = EB_REPORT_TEXT;
	const char *spec = NULL;
	int strict = 0, deep = 0, c, r = 0;
	const char *cache_dir = NULL;
	size_t nerr, nwarn;

	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (eb_report_format_parse(optarg, &fmt) < 0)
				return eb_error_set(err, EB_EUSAGE,
						    "unknown format '%s' (use text, json or github)",
						    optarg);
			eb_report_escape_all = fmt == EB_REPORT_GITHUB;
			break;
		case 's':
			strict = 1;
			break;
		case 'S':
			spec = optarg;
			break;
		case 'D':
			deep = 1;
			break;
		case 'c':
			cache_dir = optarg;
			break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild check --help'");
		}
	}
	if (optind >= argc) {
		if (!spec)
			spec = eb_check_find_spec();
		if (!spec) {
			r = eb_error_set(err, EB_ENOTFOUND,
					 "no envbuild.yaml, envbuild.yml or envbuild.json here");
			eb_error_hint(err, "run in the project directory, or name files: envbuild check PATH...");
			goto done;
		}
		r = eb_check_spec(spec, &diags, err);
		/* the closure needs pins that parse: only a clean spec goes deeper */
		if (r == 0 && deep && eb_diag_list_count(&diags, EB_SEV_ERROR) == 0)
			r = eb_cmd_check_deep(spec, cache_dir, &diags, err);
	} else {
		for (int i = optind; i < argc && r >= 0; i++)
			r = eb_check_path(argv[i], &diags, err);
	}
	if (r < 0)
		goto done;
	eb_diag_list_sort(&diags);
	nerr = eb_diag_list_count(&diags, EB_SEV_ERROR);
	nwarn = eb_diag_list_count(&diags, EB_SEV_WARNING);
	eb_report_findings(stdout, &diags, fmt);
	r = (nerr || (strict && nwarn)) ? 1 : 0;
done:
	eb_diag_list_release(&diags);
	return r;
}
