/*
 * cmd_lock.c - `envbuild lock`: resolve every input (base digests, wheel
 * files) by building into the blob store, and write envbuild.lock;
 * `--check` says whether the lock is stale (the files, offline) and
 * whether a base tag moved from the locked digest (unless --offline); `--upgrade` moves base
 * tags to their current digests and says what changed; `--commit` commits
 * the lockfile alone; `--pylock` also exports each target's Python set as
 * pylock.<target>.toml (stage/pylock.h).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/basedrift.h"
#include "cmd/cmd.h"
#include "cmd/display.h"
#include "cmd/report.h"
#include "lock/lock.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "stage/pylock.h"
#include "stage/stage.h"
#include "util/alloc.h"

/* 1 (said on stderr) when a target's locked base is not what its
 * registry base names now (assemble/basedrift.h). */
static int base_drift(struct eb_stage *st, struct eb_registry *reg, struct eb_error **err)
{
	const struct eb_spec *spec = st->lf.spec;
	int drift = 0;

	for (size_t i = 0; i < spec->ntargets; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		const json_t *jt = json_object_get(json_object_get(st->lf.lock, "targets"), t->name);
		const json_t *b = json_object_get(jt, "base");
		const char *locked = json_string_value(json_object_get(b, "digest"));
		char *why = NULL;
		int r;

		if (!locked || !t->base.s || eb_imageref_is_scratch(t->base.s) ||
		    strncmp(t->base.s, "oci:", 4) == 0)
			continue;
		if ((r = eb_base_drift(reg, t->base.s, locked, &why, err)) < 0) {
			eb_error_hint(err, "'envbuild lock --check --offline' checks the files only");
			return r;
		}
		if (r == 1) {
			fprintf(stderr, "envbuild: %s: target '%s': %s\n", st->lf.path, t->name, why);
			fprintf(stderr, "envbuild: hint: write 'base: %s@%s' to keep the locked image, "
					"or run 'envbuild lock --upgrade' to take the tag's\n",
				t->base.s, locked);
			drift = 1;
		}
		free(why);
	}
	return drift;
}

int cmd_lock(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'k' },
		{ "upgrade", no_argument, NULL, 'u' },
		{ "commit", no_argument, NULL, 'm' },
		{ "pylock", no_argument, NULL, 'P' },
		{ "spec", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'c' },
		EB_CMD_REGISTRY_LONGOPTS,
		{ "label-revision", no_argument, NULL, 'V' },
		EB_CMD_PROGRESS_LONGOPTS,
		{ "offline", no_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	enum eb_display_mode mode = EB_DISPLAY_AUTO;
	struct eb_display *disp = NULL;
	struct eb_stage st = { 0 };
	struct eb_registry_options ro = { 0 };
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	struct eb_registry *reg = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	int check = 0, upgrade = 0, commit = 0, pylock = 0, offline = 0, c, r;

	if ((r = eb_layer_options_from_env(&st.build.layer, err)) < 0)
		return r;
	while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		if ((r = eb_display_option(c, optarg, &mode, err)) < 0)
			goto done;
		if (r)
			continue;
		switch (c) {
		case 'k': check = 1; break;
		case 'u': upgrade = 1; break;
		case 'm': commit = 1; break;
		case 'P': pylock = 1; break;
		case 'S': st.spec_path = optarg; break;
		case 'c': st.build.cache_dir = optarg; break;
		case 'V': st.label_revision = 1; break;
		case 'O': offline = 1; break;
		case 'C':
		case 'I':
			eb_cmd_registry_option(c, optarg, &ro, &insecure, &ninsecure);
			break;
		default:
			r = eb_error_set(err, EB_EUSAGE, "see 'envbuild lock --help'");
			goto done;
		}
	}
	if ((r = eb_cmd_find_spec(argc, argv, &st.spec_path, err)) < 0)
		goto done;
	if (check) {
		if ((r = eb_stage_lock_check(&st, err)) == 1) {
			fprintf(stderr, "envbuild: %s is stale: %s\n", st.lf.path, st.lf.why);
			fprintf(stderr, "envbuild: hint: run 'envbuild lock' and commit the lockfile\n");
		}
		/* a fresh lock's base digests against the tags (unless
		 * --offline): a moved tag or an edited digest is drift */
		if (r == 0 && !offline && (r = eb_registry_new(&reg, &ro, err)) == 0)
			r = base_drift(&st, reg, err);
		goto done;
	}
	st.mode = upgrade ? EB_LOCK_UPGRADE : EB_LOCK_AUTO;
	if ((r = eb_registry_new(&reg, &ro, err)) < 0)
		goto done;
	st.build.registry = reg;
	disp = eb_display_new(mode, stderr);
	st.build.progress = eb_display_sink(disp);
	r = eb_stage_lock(&st, &diags, err);
	eb_display_clear(disp);
	if (diags.n) {
		eb_diag_list_sort(&diags);
		eb_report_findings(stderr, &diags, EB_REPORT_TEXT);
	}
	if (r < 0)
		goto done;
	for (size_t i = 0; i < st.rep.ntargets; i++) {
		const struct eb_build_target *t = &st.rep.targets[i];
		const char *old = eb_lock_base_digest(st.before, t->name);
		printf("%-10s %s\n", t->name, t->digest);
		if (upgrade && t->base_ref && old && strcmp(old, t->base_digest) != 0)
			printf("  base %s: %s -> %s\n", t->base_ref, old, t->base_digest);
		else if (upgrade && t->base_ref)
			printf("  base %s: unchanged\n", t->base_ref);
	}
	fprintf(stderr, "envbuild: %s %s\n", st.lf.path, st.written ? "written" : "unchanged");
	if (pylock) {
		char *dir = eb_xstrdup(st.lf.path), *slash = strrchr(dir, '/');
		char **written = NULL;

		if (slash)
			*slash = '\0';
		r = eb_stage_pylock_write(&st.rep, slash ? dir : ".", &written, err);
		for (size_t i = 0; r == 0 && written[i]; i++)
			fprintf(stderr, "envbuild: %s written\n", written[i]);
		for (size_t i = 0; written && written[i]; i++)
			free(written[i]);
		free(written);
		free(dir);
		if (r < 0)
			goto done;
	}
	if (!commit)
		eb_lockflow_git_warn(&st.lf);
	if (commit && st.written)
		r = eb_lockflow_commit(&st.lf, "lock", &st.rep, err);
done:
	eb_stage_end(&st);
	eb_diag_list_release(&diags);
	eb_registry_free(reg);
	eb_display_free(disp);
	free(insecure);
	return r;
}
