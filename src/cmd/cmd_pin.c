/*
 * cmd_pin.c - `envbuild pin`: options in, the pin stage (stage/pin.h),
 * then what changed printed, file by file.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "debian/depends.h"
#include "pin/requirement.h"
#include "stage/pin.h"
#include "util/alloc.h"

int cmd_pin(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "upgrade", no_argument, NULL, 'U' },
		{ "upgrade-package", required_argument, NULL, 'P' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "pre", no_argument, NULL, 'p' },
		{ "spec", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_pin_stage s = { 0 };
	struct eb_pin_upgrade *ups = NULL;
	size_t nups = 0;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': s.only = optarg; break;
		case 'U': s.upgrade = 1; break;
		case 'n': s.dry_run = 1; break;
		case 'p': s.pre = 1; break;
		case 'S': s.spec_path = optarg; break;
		case 'c': s.cache_dir = optarg; break;
		case 'h': eb_cmd_print_help(eb_cmd_find("pin")); return 0;
		case 'P': {
			const char *eq = strstr(optarg, "==");
			size_t len = eq ? (size_t)(eq - optarg) : strlen(optarg);
			/* a Python name, or a Debian one for apt: (libstdc++6) */
			if (!(eb_pep503_valid(optarg, len) || (!eq && eb_debian_name_valid(optarg, len))) ||
			    (eq && !eq[2])) {
				rc = eb_error_set(err, EB_EUSAGE,
						  "--upgrade-package '%s': expected NAME or NAME==VERSION",
						  optarg);
				goto done;
			}
			ups = eb_xreallocarray(ups, nups + 1, sizeof(*ups));
			ups[nups].name = eb_pep503_valid(optarg, len) ? eb_pep503_normalize(optarg, len)
								      : eb_xstrndup(optarg, len);
			ups[nups].written = eb_xstrndup(optarg, len);
			ups[nups++].version = eq ? eq + 2 : NULL;
			break;
		}
		default:
			rc = eb_error_set(err, EB_EUSAGE, "see 'envbuild pin --help'");
			goto done;
		}
	}
	if ((rc = eb_cmd_find_spec(argc, argv, &s.spec_path, err)) < 0)
		goto done;
	s.ups = ups;
	s.nups = nups;
	rc = eb_stage_pin(&s, err);
	if (s.explanation)
		fputs(s.explanation, stderr); /* the derivation; main prints the error */
	for (size_t i = 0; rc == 0 && i < s.nfiles; i++) {
		const struct eb_pin_file *f = &s.files[i];
		printf("%s: %s%s\n", f->label, f->path,
		       f->same ? " is up to date" : s.dry_run ? " would change:" : "");
		if (f->same)
			continue;
		for (size_t k = 0; k < f->nchanges; k++)
			printf("  %s\n", f->changes[k]);
		if (f->nchanges == 0)
			printf("  (annotations only)\n");
	}
done:
	eb_stage_pin_end(&s);
	for (size_t u = 0; u < nups; u++) {
		free((char *)ups[u].name);
		free((char *)ups[u].written);
	}
	free(ups);
	return rc;
}
