/*
 * cmd_push.c - `envbuild push`: build (cached layers make this cheap when
 * nothing changed), then push every target to the spec's repository in one
 * call, so blobs the targets share go up once, and print each target's
 * digest reference.  Progress on a terminal, JSON event lines with
 * --format=json.
 */
#include "config.h"

#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build/build.h"
#include "cmd/cmd.h"
#include "stage/lockflow.h"
#include "cmd/report.h"
#include "lock/git.h"
#include "lock/lock.h"
#include "stage/check.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "spec/spec.h"
#include "util/alloc.h"
#include "util/diag.h"

struct progress {
	int json;
	int tty;
	unsigned blobs_done, blobs_total_seen;
	uint64_t bytes;
	struct timespec start;
};

static double elapsed(const struct progress *p)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - p->start.tv_sec) + (now.tv_nsec - p->start.tv_nsec) / 1e9;
}

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

/* Called serialised by the client. */
static void on_event(void *ud, const struct eb_push_event *ev)
{
	struct progress *p = ud;

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
	if (!p->tty)
		return;
	switch (ev->kind) {
	case EB_PUSH_BLOB_DONE:
		p->bytes += ev->size;
		/* fall through */
	case EB_PUSH_BLOB_EXISTS:
	case EB_PUSH_BLOB_MOUNTED:
		p->blobs_done++;
		fprintf(stderr, "\r\033[K  %-12.19s %s  %.1f MiB\n",
			ev->kind == EB_PUSH_BLOB_DONE ? "uploaded" :
			ev->kind == EB_PUSH_BLOB_MOUNTED ? "mounted" : "exists",
			ev->digest ? ev->digest : "", ev->size / 1048576.0);
		break;
	case EB_PUSH_BLOB_PROGRESS: {
		double t = elapsed(p);
		fprintf(stderr, "\r\033[K  uploading   %.19s…  %.1f/%.1f MiB  %.1f MiB/s", ev->digest,
			ev->done / 1048576.0, ev->size / 1048576.0,
			t > 0 ? (p->bytes + ev->done) / 1048576.0 / t : 0.0);
		break;
	}
	case EB_PUSH_BLOB_RETRY:
		fprintf(stderr, "\r\033[K  retrying    %.19s…\n", ev->digest);
		break;
	default:
		break;
	}
	fflush(stderr);
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
		{ "concurrency", required_argument, NULL, 'n' },
		{ "chunk-size", required_argument, NULL, 'k' },
		{ "repository", required_argument, NULL, 'R' },
		{ "locked", no_argument, NULL, 'L' },
		{ "frozen", no_argument, NULL, 'F' },
		{ "allow-dirty", no_argument, NULL, 'D' },
		{ "commit", no_argument, NULL, 'm' },
		{ "label-revision", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_build_options bo = { 0 };
	struct eb_build_report rep = { 0 };
	struct eb_registry_options ro = { 0 };
	struct eb_registry *reg = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	const char **extra_tags = NULL;
	size_t nextra = 0;
	const char *repository = NULL;
	struct progress prog = { 0 };
	struct eb_push_image *images = NULL;
	struct eb_descriptor *tops = NULL;
	char ***tags = NULL;
	struct eb_blob_source *sources = NULL;
	size_t nsources = 0;
	struct eb_push_result res = { 0 };
	struct eb_blobstore *bs = NULL;
	struct eb_lockflow lf = { 0 };
	enum eb_lock_mode mode = EB_LOCK_AUTO;
	int allow_dirty = 0, commit = 0, label_revision = 0, written = 0;
	char *head = NULL;
	int c, r;

	r = eb_layer_options_from_env(&bo.layer, err);
	if (r < 0)
		return r;
	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		switch (c) {
		case 't': bo.target = optarg; break;
		case 'T':
			extra_tags = eb_xreallocarray(extra_tags, nextra + 1, sizeof(*extra_tags));
			extra_tags[nextra++] = optarg;
			break;
		case 'S': bo.spec_path = optarg; break;
		case 'c': bo.cache_dir = optarg; break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				prog.json = 1;
			else if (strcmp(optarg, "text") != 0) {
				r = eb_error_set(err, EB_EUSAGE, "unknown format '%s' (use text or json)", optarg);
				goto done;
			}
			break;
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
		case 'R': repository = optarg; break;
		case 'L': mode = EB_LOCK_LOCKED; break;
		case 'F': mode = EB_LOCK_FROZEN; break;
		case 'D': allow_dirty = 1; break;
		case 'm': commit = 1; break;
		case 'V': label_revision = 1; break;
		default:
			r = eb_error_set(err, EB_EUSAGE, "see 'envbuild push --help'");
			goto done;
		}
	}
	if ((r = eb_cmd_find_spec(argc, argv, &bo.spec_path, err)) < 0)
		goto done;
	ro.on_event = on_event;
	ro.event_userdata = &prog;
	prog.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	if ((r = eb_registry_new(&reg, &ro, err)) < 0)
		goto done;

	if ((r = eb_lockflow_begin(&lf, bo.spec_path, mode, &bo, err)) < 0)
		goto done;
	/* what is pushed must be what is committed: the lock records HEAD */
	{
		struct eb_git *g = NULL;
		if (eb_git_open(&g, lf.spec->dir, NULL) == 0) {
			const char **inputs = eb_xcalloc(2 + lf.spec->ntargets * 16, sizeof(*inputs));
			char **owned = eb_xcalloc(2 + lf.spec->ntargets * 16, sizeof(*owned));
			size_t ni = 0, no = 0;
			char *first = NULL;
			int dirty;

			inputs[ni++] = lf.spec->path;
			for (size_t i = 0; i < lf.spec->ntargets; i++) {
				const struct eb_spec_target *t = &lf.spec->targets[i];
				for (size_t k = 0; k < t->requirements.n && k < 8; k++)
					inputs[ni++] = owned[no++] = eb_spec_resolve(lf.spec, t->requirements.v[k].s);
				for (size_t k = 0; k < t->nfiles && k < 7; k++)
					inputs[ni++] = owned[no++] = eb_spec_resolve(lf.spec, t->files[k].src.s);
			}
			dirty = eb_git_dirty(g, inputs, ni, &first, NULL);
			head = eb_git_head(g);
			eb_git_free(g);
			for (size_t i = 0; i < no; i++)
				free(owned[i]);
			free(owned);
			free(inputs);
			if (dirty > 0 && !allow_dirty) {
				r = eb_error_set(err, EB_EFAIL,
						 "'%s' has uncommitted changes; the pushed image would not "
						 "match any commit",
						 first ? first : "an input");
				eb_error_hint(err, "commit them, or push anyway with --allow-dirty");
				free(first);
				goto done;
			}
			free(first);
		}
	}
	eb_lockflow_labels(&lf, &bo, label_revision);

	/* build into the blob store only: layers come from the cache when
	 * nothing changed, base layers stay in their registry */
	bo.output_type = EB_OUTPUT_NONE;
	bo.registry = reg;
	r = eb_build_run(&bo, &rep, &diags, err);
	if (diags.n) {
		eb_diag_list_sort(&diags);
		eb_report_findings(stderr, &diags, EB_REPORT_TEXT);
	}
	if (r < 0)
		goto done;
	if (!repository)
		repository = lf.spec->repository.s;
	if (!repository) {
		r = eb_error_set(err, EB_EUSAGE, "'%s' names no repository to push to", bo.spec_path);
		eb_error_hint(err, "add 'repository: registry.example.com/team/app' to the spec, or give --repository");
		goto done;
	}

	images = eb_xcalloc(rep.ntargets + 1, sizeof(*images));
	tops = eb_xcalloc(rep.ntargets + 1, sizeof(*tops));
	tags = eb_xcalloc(rep.ntargets + 1, sizeof(*tags));
	for (size_t i = 0; i < rep.ntargets; i++) {
		const struct eb_build_target *t = &rep.targets[i];
		size_t k = 0;

		tops[i].media_type = eb_xstrdup(t->media_type);
		tops[i].digest = eb_xstrdup(t->digest);
		tops[i].size = t->size;
		tags[i] = eb_xcalloc(nextra + 2, sizeof(char *));
		tags[i][k++] = eb_xstrdup(t->name);
		for (size_t j = 0; j < nextra; j++)
			tags[i][k++] = rep.ntargets == 1 ? eb_xstrdup(extra_tags[j])
							 : eb_xasprintf("%s-%s", t->name, extra_tags[j]);
		images[i].repository_ref = repository;
		images[i].top = &tops[i];
		images[i].tags = (const char *const *)tags[i];
		/* base layers not in the store: mount or fetch from the base repo */
		for (size_t p = 0; p < t->nplatforms && t->base_repository; p++)
			for (size_t l = 0; l < t->platforms[p].nlayers; l++) {
				if (!t->platforms[p].layers[l].from_base)
					continue;
				sources = eb_xreallocarray(sources, nsources + 1, sizeof(*sources));
				sources[nsources].digest = t->platforms[p].layers[l].digest;
				sources[nsources].repository_ref = t->base_repository;
				nsources++;
			}
	}
	if ((r = eb_blobstore_open(&bs, bo.cache_dir, err)) < 0)
		goto done;
	r = eb_registry_push(reg, images, rep.ntargets, sources, nsources, bs, &res, err);
	if (prog.tty && !prog.json)
		fprintf(stderr, "\r\033[K");
	if (r < 0)
		goto done;
	/* the lock: what was built, then where it went and from which commit */
	if ((r = eb_lockflow_record(&lf, &rep, bo.layer.compression == EB_LAYER_ZSTD ? "zstd" :
					       bo.layer.compression == EB_LAYER_NONE ? "none" : "gzip",
				    &written, err)) < 0)
		goto done;
	for (size_t i = 0; i < rep.ntargets; i++)
		for (size_t k = 0; tags[i][k]; k++) {
			char *ref = eb_xasprintf("%s:%s", repository, tags[i][k]);
			eb_lock_record_push(lf.lock, rep.targets[i].name, ref, rep.targets[i].digest, head);
			free(ref);
		}
	if ((r = eb_lockflow_save(&lf, &written, err)) < 0)
		goto done;
	if (!commit)
		eb_lockflow_git_warn(&lf);
	for (size_t i = 0; i < rep.ntargets; i++) {
		const struct eb_build_target *t = &rep.targets[i];
		if (prog.json) {
			json_t *j = json_pack("{s:s, s:s, s:s, s:s}", "event", "pushed", "target", t->name,
					      "reference", repository, "digest", t->digest);
			char *s = json_dumps(j, JSON_COMPACT);
			puts(s);
			free(s);
			json_decref(j);
		} else {
			printf("%-10s %s@%s\n", t->name, repository, t->digest);
		}
	}
	if (!prog.json)
		fprintf(stderr, "envbuild: %u blob%s uploaded (%.1f MiB), %u mounted, %u already there; %u manifest%s, %u tag%s\n",
			res.blobs_uploaded, res.blobs_uploaded == 1 ? "" : "s", res.bytes_uploaded / 1048576.0,
			res.blobs_mounted, res.blobs_existing, res.manifests, res.manifests == 1 ? "" : "s",
			res.tags, res.tags == 1 ? "" : "s");
	if (commit) {
		char *msg = eb_cmd_lock_message("push", &rep);
		r = eb_cmd_commit_lock(&lf, msg, err);
		free(msg);
	}
done:
	eb_lockflow_end(&lf);
	free(head);
	if (tags)
		for (size_t i = 0; i < rep.ntargets; i++) {
			for (size_t k = 0; tags[i] && tags[i][k]; k++)
				free(tags[i][k]);
			free(tags[i]);
		}
	free(tags);
	if (tops)
		for (size_t i = 0; i < rep.ntargets; i++)
			eb_descriptor_release(&tops[i]);
	free(tops);
	free(images);
	free(sources);
	free(extra_tags);
	free(insecure);
	eb_build_report_release(&rep);
	eb_diag_list_release(&diags);
	eb_registry_free(reg);
	eb_blobstore_free(bs);
	return r;
}
