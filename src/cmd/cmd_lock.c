/*
 * cmd_lock.c - `envbuild lock`: resolve every input (base digests, wheel
 * files) by building into the blob store, and write envbuild.lock;
 * `--check` says offline whether the lock is stale; `--upgrade` moves base
 * tags to their current digests and says what changed; `--commit` commits
 * the lockfile alone.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/build.h"
#include "cmd/cmd.h"
#include "stage/lockflow.h"
#include "cmd/report.h"
#include "lock/git.h"
#include "lock/lock.h"
#include "stage/check.h"
#include "registry/client.h"
#include "util/alloc.h"
#include "util/buf.h"

/* "envbuild: lock training sha256:…, inference sha256:…" */
char *eb_cmd_lock_message(const char *verb, const struct eb_build_report *rep)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	(void)eb_buf_addf(&b, "envbuild: %s", verb);
	for (size_t i = 0; i < rep->ntargets; i++)
		(void)eb_buf_addf(&b, "%s %s", i ? "," : "", rep->targets[i].name);
	(void)eb_buf_adds(&b, "\n\n");
	for (size_t i = 0; i < rep->ntargets; i++)
		(void)eb_buf_addf(&b, "%s: %s\n", rep->targets[i].name, rep->targets[i].digest);
	return eb_buf_detach(&b, NULL);
}

int eb_cmd_commit_lock(const struct eb_lockflow *lf, const char *message, struct eb_error **err)
{
	struct eb_git *g = NULL;
	char *id = NULL;
	int r = eb_git_open(&g, lf->spec->dir, err);

	if (r < 0) {
		eb_error_hint(err, "--commit needs the spec in a git repository");
		return r;
	}
	r = eb_git_commit_file(g, lf->path, message, &id, err);
	if (r == 0)
		fprintf(stderr, "envbuild: committed %s as %.12s\n", lf->path, id);
	free(id);
	eb_git_free(g);
	return r;
}

int cmd_lock(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'k' },
		{ "upgrade", no_argument, NULL, 'u' },
		{ "commit", no_argument, NULL, 'm' },
		{ "spec", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'c' },
		EB_CMD_REGISTRY_LONGOPTS,
		{ "label-revision", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_build_options bo = { 0 };
	struct eb_build_report rep = { 0 };
	struct eb_registry_options ro = { 0 };
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	struct eb_registry *reg = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_lockflow lf = { 0 };
	json_t *before = NULL;
	int check = 0, upgrade = 0, commit = 0, written = 0, label_revision = 0, c, r;

	if ((r = eb_layer_options_from_env(&bo.layer, err)) < 0)
		return r;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': check = 1; break;
		case 'u': upgrade = 1; break;
		case 'm': commit = 1; break;
		case 'S': bo.spec_path = optarg; break;
		case 'c': bo.cache_dir = optarg; break;
		case 'V': label_revision = 1; break;
		case 'C':
		case 'I':
			eb_cmd_registry_option(c, optarg, &ro, &insecure, &ninsecure);
			break;
		default:
			r = eb_error_set(err, EB_EUSAGE, "see 'envbuild lock --help'");
			goto done;
		}
	}
	if ((r = eb_cmd_find_spec(argc, argv, &bo.spec_path, err)) < 0)
		goto done;
	if (check) {
		/* offline: nothing but the files on disk */
		if ((r = eb_lockflow_begin(&lf, bo.spec_path, EB_LOCK_INSPECT, NULL, err)) < 0)
			goto done;
		if (!lf.existed || !lf.fresh) {
			fprintf(stderr, "envbuild: %s is stale: %s\n", lf.path, lf.why);
			fprintf(stderr, "envbuild: hint: run 'envbuild lock' and commit the lockfile\n");
			r = 1;
		}
		goto done;
	}
	if ((r = eb_lockflow_begin(&lf, bo.spec_path, upgrade ? EB_LOCK_UPGRADE : EB_LOCK_AUTO, &bo,
				   err)) < 0)
		goto done;
	before = json_deep_copy(lf.lock);
	eb_lockflow_labels(&lf, &bo, label_revision);
	if ((r = eb_registry_new(&reg, &ro, err)) < 0)
		goto done;
	bo.registry = reg;
	bo.output_type = EB_OUTPUT_NONE;
	r = eb_build_run(&bo, &rep, &diags, err);
	if (diags.n) {
		eb_diag_list_sort(&diags);
		eb_report_findings(stderr, &diags, EB_REPORT_TEXT);
	}
	if (r < 0)
		goto done;
	if ((r = eb_lockflow_record(&lf, &rep, bo.layer.compression == EB_LAYER_ZSTD ? "zstd" :
					       bo.layer.compression == EB_LAYER_NONE ? "none" : "gzip",
				    &written, err)) < 0)
		goto done;
	for (size_t i = 0; i < rep.ntargets; i++) {
		const struct eb_build_target *t = &rep.targets[i];
		const char *old = eb_lock_base_digest(before, t->name);
		printf("%-10s %s\n", t->name, t->digest);
		if (upgrade && t->base_ref && old && strcmp(old, t->base_digest) != 0)
			printf("  base %s: %s -> %s\n", t->base_ref, old, t->base_digest);
		else if (upgrade && t->base_ref)
			printf("  base %s: unchanged\n", t->base_ref);
	}
	fprintf(stderr, "envbuild: %s %s\n", lf.path, written ? "written" : "unchanged");
	if (!commit)
		eb_lockflow_git_warn(&lf);
	if (commit && written) {
		char *msg = eb_cmd_lock_message("lock", &rep);
		r = eb_cmd_commit_lock(&lf, msg, err);
		free(msg);
	}
done:
	json_decref(before);
	eb_lockflow_end(&lf);
	eb_build_report_release(&rep);
	eb_diag_list_release(&diags);
	eb_registry_free(reg);
	free(insecure);
	return r;
}
