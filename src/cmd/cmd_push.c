/*
 * cmd_push.c - `envbuild push`: options, then the push stage
 * (stage/push.h), then each target's digest reference.  Progress on a
 * terminal, JSON event lines with --format=json.
 */
#include "config.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "cmd/report.h"
#include "registry/client.h"
#include "registry/regcache.h"
#include "stage/push.h"
#include "trust/sign.h"
#include "util/alloc.h"
#include "util/diag.h"

struct progress {
	int json;
	struct eb_display *disp;
	const struct eb_build_report *rep; /* names blobs by the layer they are */
};

static const char *event_name(enum eb_push_event_kind k)
{
	switch (k) {
	case EB_PUSH_BLOB_EXISTS: return "blob_exists";
	case EB_PUSH_BLOB_MOUNTED: return "blob_mounted";
	case EB_PUSH_BLOB_START: return "blob_start";
	case EB_PUSH_BLOB_PROGRESS: return "blob_progress";
	case EB_PUSH_BLOB_DONE: return "blob_done";
	case EB_PUSH_BLOB_RETRY: return "blob_retry";
	case EB_PUSH_MANIFEST: return "manifest";
	case EB_PUSH_TAG: return "tag";
	}
	return "event";
}

/* "sha256:0123456789ab (training: files src/ -> /app/)": the layer a blob
 * is, from the build's report, or what else it is. */
static char *blob_name(const struct progress *p, const char *digest)
{
	const char *hex = digest ? strchr(digest, ':') : NULL;
	int n = hex ? (int)(hex - digest) + 13 : 19;

	for (size_t i = 0; digest && p->rep && i < p->rep->ntargets; i++) {
		const struct eb_build_target *t = &p->rep->targets[i];
		for (size_t j = 0; j < t->nplatforms; j++) {
			const struct eb_build_platform *bp = &t->platforms[j];
			if (strcmp(bp->config, digest) == 0)
				return eb_xasprintf("%.*s (%s: config)", n, digest, t->name);
			for (size_t k = 0; k < bp->nlayers; k++)
				if (strcmp(bp->layers[k].digest, digest) == 0) {
					const char *what = bp->layers[k].created_by ?
								   bp->layers[k].created_by : "layer";
					if (strncmp(what, "envbuild: ", 10) == 0)
						what += 10;
					return eb_xasprintf("%.*s (%s: %s)", n, digest, t->name, what);
				}
		}
	}
	return eb_xasprintf("%.*s", n, digest ? digest : "");
}

/* Called serialised by the client: JSON event lines, or the push's steps
 * for the progress display. */
static void on_event(void *ud, const struct eb_push_event *ev)
{
	struct progress *p = ud;
	struct eb_progress_event pe = { EB_PROGRESS_DONE, EB_STEP_BLOB, EB_OUTCOME_UPLOADED,
					ev->digest, NULL, ev->done, ev->size };
	char *name;

	if (p->json) {
		if (ev->kind == EB_PUSH_BLOB_PROGRESS)
			return; /* too chatty for logs; start/done carry the sizes */
		json_t *j = json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:I}", "event", event_name(ev->kind),
				      "repository", ev->repository, "digest", ev->digest, "tag", ev->tag,
				      "size", (json_int_t)ev->size, "done", (json_int_t)ev->done);
		char *s = json_dumps(j, JSON_COMPACT);
		puts(s);
		fflush(stdout);
		free(s);
		json_decref(j);
		return;
	}
	if (!eb_display_sink(p->disp))
		return;
	switch (ev->kind) {
	case EB_PUSH_BLOB_START: pe.kind = EB_PROGRESS_START; break;
	case EB_PUSH_BLOB_PROGRESS: pe.kind = EB_PROGRESS_BYTES; break;
	case EB_PUSH_BLOB_RETRY: pe.kind = EB_PROGRESS_RETRY; break;
	case EB_PUSH_BLOB_DONE: pe.done = ev->size; break;
	case EB_PUSH_BLOB_MOUNTED: pe.outcome = EB_OUTCOME_MOUNTED; pe.done = ev->size; break;
	case EB_PUSH_BLOB_EXISTS: pe.outcome = EB_OUTCOME_EXISTS; pe.done = ev->size; break;
	case EB_PUSH_MANIFEST:
	case EB_PUSH_TAG:
		pe.step = EB_STEP_DOC;
		pe.outcome = EB_OUTCOME_PUT;
		break;
	}
	if (ev->kind == EB_PUSH_TAG)
		name = eb_xasprintf("tag %s:%s", ev->repository ? ev->repository : "", ev->tag ? ev->tag : "");
	else if (ev->kind == EB_PUSH_MANIFEST)
		name = eb_xasprintf("manifest %s@%s", ev->repository ? ev->repository : "",
				    ev->digest ? ev->digest : "");
	else
		name = blob_name(p, ev->digest);
	pe.name = name;
	if (!pe.key)
		pe.key = name;
	eb_progress_emit(eb_display_sink(p->disp), &pe);
	free(name);
}

int cmd_push(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "tag", required_argument, NULL, 'T' },
		{ "spec", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		EB_CMD_REGISTRY_LONGOPTS,
		{ "cache-from", required_argument, NULL, 0x101 },
		{ "cache-to", required_argument, NULL, 0x102 },
		{ "concurrency", required_argument, NULL, 'n' },
		{ "chunk-size", required_argument, NULL, 'k' },
		{ "repository", required_argument, NULL, 'R' },
		{ "locked", no_argument, NULL, 'L' },
		{ "frozen", no_argument, NULL, 'F' },
		{ "allow-dirty", no_argument, NULL, 'D' },
		{ "commit", no_argument, NULL, 'm' },
		{ "label-revision", no_argument, NULL, 'V' },
		EB_CMD_PROGRESS_LONGOPTS,
		{ "sign-key", required_argument, NULL, 0x103 },
		{ "no-attest", no_argument, NULL, 0x104 },
		{ NULL, 0, NULL, 0 },
	};
	enum eb_display_mode mode = EB_DISPLAY_AUTO;
	struct eb_stage st = { 0 };
	struct eb_regcache_stats cst = { 0 };
	struct eb_stage_push sp = { 0 };
	struct eb_registry_options ro = { 0 };
	struct eb_registry *reg = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	const char **extra_tags = NULL;
	size_t nextra = 0;
	struct progress prog = { 0 };
	const char *sign_key = getenv("ENVBUILD_SIGN_KEY");
	struct eb_sign_key *key = NULL;
	int c, r;

	r = eb_layer_options_from_env(&st.build.layer, err);
	if (r < 0)
		return r;
	while ((c = getopt_long(argc, argv, "t:q", opts, NULL)) != -1) {
		if ((r = eb_display_option(c, optarg, &mode, err)) < 0)
			goto done;
		if (r)
			continue;
		switch (c) {
		case 't': st.build.target = optarg; break;
		case 'T':
			extra_tags = eb_xreallocarray(extra_tags, nextra + 1, sizeof(*extra_tags));
			extra_tags[nextra++] = optarg;
			break;
		case 'S': st.spec_path = optarg; break;
		case 'c': st.build.cache_dir = optarg; break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				prog.json = 1;
			else if (strcmp(optarg, "text") != 0) {
				r = eb_error_set(err, EB_EUSAGE, "unknown format '%s' (use text or json)", optarg);
				goto done;
			}
			break;
		case 0x101: st.build.cache_from = optarg; break;
		case 0x102: st.build.cache_to = optarg; break;
		case 'C':
		case 'I':
			eb_cmd_registry_option(c, optarg, &ro, &insecure, &ninsecure);
			break;
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 64) {
				r = eb_error_set(err, EB_EUSAGE, "invalid --concurrency '%s'", optarg);
				goto done;
			}
			ro.concurrency = (int)v;
			break;
		}
		case 'k': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (*end || v < 1024) {
				r = eb_error_set(err, EB_EUSAGE, "invalid --chunk-size '%s' (bytes, at least 1024)",
						 optarg);
				goto done;
			}
			ro.chunk_size = v;
			break;
		}
		case 'R': sp.repository = optarg; break;
		case 'L': st.mode = EB_LOCK_LOCKED; break;
		case 'F': st.mode = EB_LOCK_FROZEN; break;
		case 'D': sp.allow_dirty = 1; break;
		case 'm': sp.commit = 1; break;
		case 'V': st.label_revision = 1; break;
		case 0x103: sign_key = optarg; break;
		case 0x104: sp.no_attest = 1; break;
		default:
			r = eb_error_set(err, EB_EUSAGE, "see 'envbuild push --help'");
			goto done;
		}
	}
	st.build.cache_stats = &cst;
	if ((r = eb_cmd_find_spec(argc, argv, &st.spec_path, err)) < 0)
		goto done;
	/* the key first: a push that cannot be signed is not started */
	if (sign_key && *sign_key && (r = eb_sign_key_load(&key, sign_key, err)) < 0)
		goto done;
	sp.sign_key = key;
	ro.on_event = on_event;
	ro.event_userdata = &prog;
	/* JSON event lines are the progress with --format=json */
	prog.disp = eb_display_new(prog.json ? EB_DISPLAY_NONE : mode, stderr);
	prog.rep = &st.rep;
	st.build.progress = eb_display_sink(prog.disp);
	if ((r = eb_registry_new(&reg, &ro, err)) < 0)
		goto done;
	st.build.registry = reg;
	sp.extra_tags = extra_tags;
	sp.nextra = nextra;

	r = eb_stage_push(&st, &sp, &diags, err);
	eb_display_clear(prog.disp);
	if (st.lf.spec && (eb_build_cache_repo((&st.build), 0) || eb_build_cache_repo((&st.build), 1)))
		eb_cmd_cache_note(&cst);
	else
		json_decref(cst.used);
	if (diags.n) {
		eb_diag_list_sort(&diags);
		eb_report_findings(stderr, &diags, EB_REPORT_TEXT);
	}
	if (!sp.pushed)
		goto done;
	if (!sp.commit)
		eb_lockflow_git_warn(&st.lf);
	/* before the 'pushed' lines, which come last */
	if (prog.json && (key || !sp.no_attest)) {
		json_t *j = json_pack("{s:s, s:i, s:i, s:i, s:s}", "event", "attested", "signatures",
				      (int)sp.attest.signatures, "signaturesKept",
				      (int)sp.attest.signatures_kept, "referrers",
				      (int)sp.attest.artifacts, "referrersVia",
				      sp.attest.used_api ? "api" : "tag");
		char *js = json_dumps(j, JSON_COMPACT);
		puts(js);
		free(js);
		json_decref(j);
	}
	for (size_t i = 0; i < st.rep.ntargets; i++) {
		const struct eb_build_target *t = &st.rep.targets[i];
		if (prog.json) {
			json_t *j = json_pack("{s:s, s:s, s:s, s:s}", "event", "pushed", "target", t->name,
					      "reference", sp.pushed_to, "digest", t->digest);
			char *s = json_dumps(j, JSON_COMPACT);
			puts(s);
			free(s);
			json_decref(j);
		} else {
			printf("%-10s %s@%s\n", t->name, sp.pushed_to, t->digest);
		}
	}
	if (!prog.json)
		fprintf(stderr, "envbuild: %u blob%s uploaded (%.1f MiB), %u mounted, %u already there; %u manifest%s, %u tag%s\n",
			sp.result.blobs_uploaded, sp.result.blobs_uploaded == 1 ? "" : "s",
			sp.result.bytes_uploaded / 1048576.0, sp.result.blobs_mounted,
			sp.result.blobs_existing, sp.result.manifests, sp.result.manifests == 1 ? "" : "s",
			sp.result.tags, sp.result.tags == 1 ? "" : "s");
	if (!prog.json && key)
		fprintf(stderr, "envbuild: %u signature%s added (%u already there)\n",
			sp.attest.signatures, sp.attest.signatures == 1 ? "" : "s",
			sp.attest.signatures_kept);
	if (!prog.json && !sp.no_attest)
		fprintf(stderr, "envbuild: %u referrer%s added (SBOMs, provenance; %s)\n",
			sp.attest.artifacts, sp.attest.artifacts == 1 ? "" : "s",
			sp.attest.used_api ? "referrers API" : "referrers tag");
done:
	eb_display_free(prog.disp);
	eb_stage_push_release(&sp);
	eb_stage_end(&st);
	free(extra_tags);
	free(insecure);
	eb_diag_list_release(&diags);
	eb_registry_free(reg);
	eb_sign_key_free(key);
	return r;
}
