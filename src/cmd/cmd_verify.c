/*
 * cmd_verify.c - `envbuild verify REF[@DIGEST] [--key PUB]`: options,
 * the verify stage (stage/verify.h), then "verified" (exit 0) or the
 * first difference (exit 1).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "registry/client.h"
#include "stage/verify.h"
#include "trust/sign.h"

int cmd_verify(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "repo", required_argument, NULL, 'r' },
		EB_CMD_REGISTRY_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct eb_verify v = { 0 };
	struct eb_registry_options ro = { 0 };
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	struct eb_registry *reg = NULL;
	struct eb_sign_key *key = NULL;
	const char *key_path = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key_path = optarg; break;
		case 'c': v.cache_dir = optarg; break;
		case 'r': v.repo_dir = optarg; break;
		case 'C':
		case 'I':
			eb_cmd_registry_option(c, optarg, &ro, &insecure, &ninsecure);
			break;
		default:
			r = eb_error_set(err, EB_EUSAGE, "see 'envbuild verify --help'");
			goto done;
		}
	}
	if (optind != argc - 1) {
		r = eb_error_set(err, EB_EUSAGE, "verify takes one image reference (REF or REF@DIGEST)");
		goto done;
	}
	v.ref = argv[optind];
	if (key_path && (r = eb_sign_key_load_public(&key, key_path, err)) < 0)
		goto done;
	if (!key)
		fprintf(stderr, "envbuild: warning: no --key: signatures are not checked, and an "
			"unsigned provenance is believed\n");
	v.key = key;
	if ((r = eb_registry_new(&reg, &ro, err)) < 0)
		goto done;
	v.registry = reg;
	if ((r = eb_stage_verify(&v, err)) < 0)
		goto done;
	if (v.verified) {
		printf("verified %s: target %s at commit %s rebuilds it (%u platform manifest%s, "
		       "%u signature%s checked)\n", v.digest, v.target, v.commit, v.platforms,
		       v.platforms == 1 ? "" : "s", v.signatures, v.signatures == 1 ? "" : "s");
	} else {
		printf("not verified %s: %s\n", v.digest ? v.digest : v.ref, v.reason);
		r = -EB_EFAIL;
		eb_error_set(err, EB_EFAIL, "%s is not what its lock builds", v.ref);
	}
done:
	eb_verify_release(&v);
	eb_registry_free(reg);
	eb_sign_key_free(key);
	free(insecure);
	return r;
}
