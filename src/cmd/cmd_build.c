/*
 * cmd_build.c - `envbuild build`: options, then the build stage, then a
 * short report of what was written (text or json).
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
#include "stage/stage.h"
#include "util/diag.h"

/* --output DIR, or --output type=oci|docker-archive,dest=PATH (buildx
 * style). */
static int parse_output(struct eb_build_options *o, char *arg, struct eb_error **err)
{
	char *save = NULL;

	if (!strchr(arg, '=')) {
		o->output_type = EB_OUTPUT_LAYOUT;
		o->output = arg;
		return 0;
	}
	for (char *kv = strtok_r(arg, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		if (strncmp(kv, "type=", 5) == 0) {
			if (strcmp(kv + 5, "oci") == 0)
				o->output_type = EB_OUTPUT_LAYOUT;
			else if (strcmp(kv + 5, "docker-archive") == 0 || strcmp(kv + 5, "docker") == 0)
				o->output_type = EB_OUTPUT_DOCKER_ARCHIVE;
			else
				return eb_error_set(err, EB_EUSAGE,
						    "unknown output type '%s' (use oci or docker-archive)",
						    kv + 5);
		} else if (strncmp(kv, "dest=", 5) == 0) {
			o->output = kv + 5;
		} else {
			return eb_error_set(err, EB_EUSAGE, "unknown --output field '%s'", kv);
		}
	}
	if (o->output_type == EB_OUTPUT_DOCKER_ARCHIVE && !o->output)
		return eb_error_set(err, EB_EUSAGE, "--output type=docker-archive needs dest=FILE");
	return 0;
}

static void print_text(const struct eb_build_report *rep)
{
	for (size_t i = 0; i < rep->ntargets; i++) {
		const struct eb_build_target *t = &rep->targets[i];
		size_t nnew = 0, nreused = 0, nbase = 0, pyc_new = 0, pyc_old = 0;
		for (size_t j = 0; j < t->nplatforms; j++) {
			pyc_new += t->platforms[j].pyc_compiled;
			pyc_old += t->platforms[j].pyc_reused;
		}
		for (size_t j = 0; j < t->nplatforms; j++)
			for (size_t k = 0; k < t->platforms[j].nlayers; k++) {
				const struct eb_build_layer *l = &t->platforms[j].layers[k];
				if (l->from_base)
					nbase++;
				else if (l->reused)
					nreused++;
				else
					nnew++;
			}
		printf("%-10s %s  %s  (layers: %zu base, %zu built, %zu cached", t->name, t->digest,
		       t->output, nbase, nnew, nreused);
		if (pyc_new || pyc_old)
			printf("; bytecode: %zu modules compiled, %zu reused", pyc_new, pyc_old);
		printf(")\n");
	}
}

static void print_json(const struct eb_build_report *rep)
{
	json_t *root = json_object(), *targets = json_array();
	char *s;

	for (size_t i = 0; i < rep->ntargets; i++) {
		const struct eb_build_target *t = &rep->targets[i];
		json_t *jt = json_object(), *plats = json_array();
		for (size_t j = 0; j < t->nplatforms; j++) {
			const struct eb_build_platform *p = &t->platforms[j];
			json_t *jp = json_object(), *layers = json_array();
			for (size_t k = 0; k < p->nlayers; k++) {
				const struct eb_build_layer *l = &p->layers[k];
				json_array_append_new(
					layers, json_pack("{s:s, s:s, s:I, s:s, s:b, s:b}", "digest",
							  l->digest, "diffId", l->diff_id, "size",
							  (json_int_t)l->size, "createdBy",
							  l->created_by ? l->created_by : "", "cached",
							  l->reused, "fromBase", l->from_base));
			}
			json_object_set_new(jp, "platform", json_string(p->platform));
			json_object_set_new(jp, "manifest", json_string(p->manifest));
			json_object_set_new(jp, "config", json_string(p->config));
			json_object_set_new(jp, "layers", layers);
			json_array_append_new(plats, jp);
		}
		json_object_set_new(jt, "name", json_string(t->name));
		json_object_set_new(jt, "digest", json_string(t->digest));
		json_object_set_new(jt, "mediaType", json_string(t->media_type ? t->media_type : ""));
		json_object_set_new(jt, "output", json_string(t->output ? t->output : ""));
		json_object_set_new(jt, "base", json_string(t->base));
		json_object_set_new(jt, "baseDigest", json_string(t->base_digest));
		json_object_set_new(jt, "platforms", plats);
		json_array_append_new(targets, jt);
	}
	json_object_set_new(root, "targets", targets);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(s);
	free(s);
	json_decref(root);
}

int cmd_build(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "platform", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "compression", required_argument, NULL, 'z' },
		{ "level", required_argument, NULL, 'l' },
		{ "spec", required_argument, NULL, 'S' },
		{ "format", required_argument, NULL, 'f' },
		{ "jobs", required_argument, NULL, 'j' },
		EB_CMD_REGISTRY_LONGOPTS,
		{ "cache-from", required_argument, NULL, 0x101 },
		{ "cache-to", required_argument, NULL, 0x102 },
		{ "locked", no_argument, NULL, 'L' },
		{ "frozen", no_argument, NULL, 'F' },
		{ "label-revision", no_argument, NULL, 'V' },
		EB_CMD_PROGRESS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct eb_stage st = { 0 };
	struct eb_regcache_stats cst = { 0 };
	struct eb_build_options *o = &st.build;
	enum eb_display_mode mode = EB_DISPLAY_AUTO;
	struct eb_display *disp = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_registry_options ro = { 0 };
	struct eb_http_registry *insecure = NULL;
	size_t ninsecure = 0;
	struct eb_registry *reg = NULL;
	int json = 0, c, r;

	r = eb_layer_options_from_env(&o->layer, err);
	if (r < 0)
		return r;
	while ((c = getopt_long(argc, argv, "t:o:j:q", opts, NULL)) != -1) {
		if ((r = eb_display_option(c, optarg, &mode, err)) < 0)
			return r;
		if (r)
			continue;
		switch (c) {
		case 't': o->target = optarg; break;
		case 'p': o->platform = optarg; break;
		case 'o':
			if ((r = parse_output(o, optarg, err)) < 0)
				return r;
			break;
		case 'c': o->cache_dir = optarg; break;
		case 'z':
			if ((r = eb_layer_compression_parse(optarg, &o->layer.compression, err)) < 0)
				return -EB_EUSAGE;
			break;
		case 'l': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 19)
				return eb_error_set(err, EB_EUSAGE, "invalid --level '%s'", optarg);
			o->layer.level = (int)v;
			break;
		}
		case 'S': st.spec_path = optarg; break;
		case 'V': st.label_revision = 1; break;
		case 0x101: o->cache_from = optarg; break;
		case 0x102: o->cache_to = optarg; break;
		case 'C':
		case 'I':
			eb_cmd_registry_option(c, optarg, &ro, &insecure, &ninsecure);
			break;
		case 'L': st.mode = EB_LOCK_LOCKED; break;
		case 'F': st.mode = EB_LOCK_FROZEN; break;
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 256)
				return eb_error_set(err, EB_EUSAGE, "invalid --jobs '%s'", optarg);
			o->jobs = (int)v;
			break;
		}
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = 1;
			else if (strcmp(optarg, "text") != 0)
				return eb_error_set(err, EB_EUSAGE, "unknown format '%s' (use text or json)",
						    optarg);
			break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild build --help'");
		}
	}
	o->cache_stats = &cst;
	if ((r = eb_cmd_find_spec(argc, argv, &st.spec_path, err)) < 0)
		return r;
	if ((r = eb_registry_new(&reg, &ro, err)) < 0) {
		free(insecure);
		return r;
	}
	o->registry = reg;
	disp = eb_display_new(mode, stderr);
	o->progress = eb_display_sink(disp);
	r = eb_stage_build(&st, &diags, err);
	/* the live lines go before anything else is printed */
	eb_display_clear(disp);
	if (st.lf.spec && (eb_build_cache_repo(o, 0) || eb_build_cache_repo(o, 1)))
		eb_cmd_cache_note(&cst);
	else
		json_decref(cst.used);
	if (diags.n) {
		/* the findings that stopped the build (or warnings) */
		eb_diag_list_sort(&diags);
		eb_report_findings(stderr, &diags, EB_REPORT_TEXT);
	}
	if (r == 0) {
		if (json)
			print_json(&st.rep);
		else
			print_text(&st.rep);
	}
	if (st.written)
		fprintf(stderr, "envbuild: %s updated\n", st.lf.path);
	eb_stage_end(&st);
	eb_diag_list_release(&diags);
	eb_registry_free(reg);
	eb_display_free(disp);
	free(insecure);
	return r;
}
