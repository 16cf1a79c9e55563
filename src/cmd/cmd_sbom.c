/*
 * cmd_sbom.c - `envbuild sbom`: build the target into the blob store
 * (cached layers make this cheap) and print its SBOM, CycloneDX or SPDX,
 * the same bytes `envbuild push` attaches.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/report.h"
#include "oci/blobstore.h"
#include "registry/client.h"
#include "stage/attest.h"
#include "stage/stage.h"
#include "util/diag.h"

int cmd_sbom(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "platform", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "repository", required_argument, NULL, 'R' },
		{ "spec", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'c' },
		EB_CMD_REGISTRY_LONGOPTS,
		{ "locked", no_argument, NULL, 'L' },
		{ "frozen", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_stage st = { 0 };
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_registry_options ro = { 0 };
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	struct eb_registry *reg = NULL;
	struct eb_blobstore *bs = NULL;
	enum eb_sbom_format format = EB_SBOM_CYCLONEDX;
	const char *repository = NULL;
	struct eb_buf out;
	int c, r;

	eb_buf_init(&out, 0);
	if ((r = eb_layer_options_from_env(&st.build.layer, err)) < 0)
		return r;
	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		switch (c) {
		case 't': st.build.target = optarg; break;
		case 'p': st.build.platform = optarg; break;
		case 'f':
			if (strcmp(optarg, "cyclonedx") == 0)
				format = EB_SBOM_CYCLONEDX;
			else if (strcmp(optarg, "spdx") == 0)
				format = EB_SBOM_SPDX;
			else
				return eb_error_set(err, EB_EUSAGE,
						    "unknown format '%s' (use cyclonedx or spdx)", optarg);
			break;
		case 'R': repository = optarg; break;
		case 'S': st.spec_path = optarg; break;
		case 'c': st.build.cache_dir = optarg; break;
		case 'C':
		case 'I':
			eb_cmd_registry_option(c, optarg, &ro, &insecure, &ninsecure);
			break;
		case 'L': st.mode = EB_LOCK_LOCKED; break;
		case 'F': st.mode = EB_LOCK_FROZEN; break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild sbom --help'");
		}
	}
	if ((r = eb_cmd_find_spec(argc, argv, &st.spec_path, err)) < 0)
		goto done;
	if ((r = eb_registry_new(&reg, &ro, err)) < 0)
		goto done;
	st.build.registry = reg;
	st.build.output_type = EB_OUTPUT_NONE;
	if ((r = eb_stage_begin(&st, 0, &diags, err)) < 0 ||
	    (r = eb_stage_run_build(&st, &diags, err)) < 0)
		goto done;
	if (st.rep.ntargets != 1 || st.rep.targets[0].nplatforms != 1) {
		r = eb_error_set(err, EB_EUSAGE, "an SBOM describes one image: the spec has %s",
				 st.rep.ntargets != 1 ? "several targets" : "several platforms");
		eb_error_hint(err, "choose one with --target%s",
			      st.rep.ntargets != 1 ? "" : " and --platform");
		goto done;
	}
	if ((r = eb_blobstore_open(&bs, st.build.cache_dir, err)) < 0)
		goto done;
	if (!repository)
		repository = st.lf.spec->repository.s;
	if ((r = eb_attest_sbom(&st, 0, 0, format, repository, bs, &out, err)) < 0)
		goto done;
	fwrite(out.ptr, 1, out.len, stdout);
done:
	if (diags.n) {
		eb_diag_list_sort(&diags);
		eb_report_findings(stderr, &diags, EB_REPORT_TEXT);
	}
	eb_buf_release(&out);
	eb_blobstore_free(bs);
	eb_stage_end(&st);
	eb_diag_list_release(&diags);
	eb_registry_free(reg);
	free(insecure);
	return r;
}
