/*
 * cmd_inspect.c - `envbuild inspect LAYOUT[:REF]`: show an OCI layout's
 * manifest(s), config and layers, for people (text) or tools (json).
 */
#include "config.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

/* "DIR" or "DIR:REF" (skopeo's oci: transport syntax, without "oci:"). */
static void split_ref(const char *arg, char **dir, char **ref)
{
	const char *p = strncmp(arg, "oci:", 4) == 0 ? arg + 4 : arg;
	const char *colon = strrchr(p, ':');
	struct stat st;

	if (colon && !strchr(colon, '/') && stat(p, &st) != 0) {
		*dir = eb_xstrndup(p, (size_t)(colon - p));
		*ref = eb_xstrdup(colon + 1);
	} else {
		*dir = eb_xstrdup(p);
		*ref = NULL;
	}
}

static json_t *strv_json(char *const *v, size_t n)
{
	json_t *a;

	if (!v)
		return json_null();
	a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* history entries that describe layers (empty_layer ones do not) */
static const char *layer_history(const struct eb_config *c, size_t layer)
{
	json_t *h = json_object_get(c->json, "history");
	size_t k = 0, i;
	json_t *e;

	json_array_foreach(h, i, e) {
		if (json_is_true(json_object_get(e, "empty_layer")))
			continue;
		if (k++ == layer) {
			const char *s = json_string_value(json_object_get(e, "created_by"));
			return s ? s : "";
		}
	}
	return "";
}

static json_t *image_json(const struct eb_layout_image *img)
{
	const struct eb_config *c = &img->config;
	json_t *layers = json_array(), *labels = json_object(), *cfg;
	char *plat = eb_platform_format(&c->platform);

	for (size_t i = 0; i < img->manifest.n_layers; i++) {
		const struct eb_descriptor *d = &img->manifest.layers[i];
		json_array_append_new(
			layers, json_pack("{s:s, s:s, s:I, s:s, s:s}", "digest", d->digest, "diffId",
					  i < c->n_diff_ids ? c->diff_ids[i] : "", "size",
					  (json_int_t)d->size, "mediaType", d->media_type, "createdBy",
					  layer_history(c, i)));
	}
	for (size_t i = 0; i < c->labels.n; i++)
		json_object_set_new(labels, c->labels.items[i].key,
				    json_string(c->labels.items[i].value));
	cfg = json_pack("{s:s, s:o, s:o, s:o, s:s?, s:s?, s:o, s:s?}", "digest",
			img->manifest.config.digest, "env", strv_json(c->env, c->n_env), "entrypoint",
			strv_json(c->entrypoint, c->n_entrypoint), "cmd", strv_json(c->cmd, c->n_cmd),
			"workingDir", c->workdir, "user", c->user, "labels", labels, "created",
			c->created);
	json_t *j = json_pack("{s:s, s:s, s:I, s:o, s:o}", "platform", plat, "manifest",
			      img->manifest_desc.digest, "manifestSize",
			      (json_int_t)img->manifest_desc.size, "config", cfg, "layers", layers);
	free(plat);
	return j;
}

static void print_strv(const char *label, char *const *v, size_t n)
{
	printf("  %-11s", label);
	if (!v) {
		printf("-\n");
		return;
	}
	printf("[");
	for (size_t i = 0; i < n; i++)
		printf("%s\"%s\"", i ? ", " : "", v[i]);
	printf("]\n");
}

static void human_size(char *buf, size_t len, int64_t n)
{
	if (n < 1024)
		snprintf(buf, len, "%lld B", (long long)n);
	else if (n < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", n / 1024.0);
	else
		snprintf(buf, len, "%.1f MiB", n / (1024.0 * 1024.0));
}

static void image_text(const struct eb_layout_image *img)
{
	const struct eb_config *c = &img->config;
	char *plat = eb_platform_format(&c->platform);
	char sz[32];

	printf("platform   %s\n", plat);
	printf("manifest   %s\n", img->manifest_desc.digest);
	printf("config     %s\n", img->manifest.config.digest);
	for (size_t i = 0; i < c->n_env; i++)
		printf("  %-11s%s\n", i == 0 ? "env" : "", c->env[i]);
	print_strv("entrypoint", c->entrypoint, c->n_entrypoint);
	print_strv("cmd", c->cmd, c->n_cmd);
	printf("  %-11s%s\n", "workdir", c->workdir ? c->workdir : "-");
	printf("  %-11s%s\n", "user", c->user ? c->user : "-");
	for (size_t i = 0; i < c->labels.n; i++)
		printf("  %-11s%s=%s\n", i == 0 ? "labels" : "", c->labels.items[i].key,
		       c->labels.items[i].value);
	printf("layers     %zu\n", img->manifest.n_layers);
	for (size_t i = 0; i < img->manifest.n_layers; i++) {
		const struct eb_descriptor *d = &img->manifest.layers[i];
		human_size(sz, sizeof(sz), d->size);
		printf("  %s  %10s  %s\n", d->digest, sz, layer_history(c, i));
	}
	free(plat);
}

/* The platforms of the chosen image: one (NULL) for a single manifest, or
 * every manifest of an index. */
static int list_platforms(const char *dir, const char *ref, struct eb_platform **out, size_t *n,
			  char **top_digest, char **top_type, struct eb_error **err)
{
	struct eb_buf b;
	struct eb_index top = { 0 }, idx = { 0 };
	size_t pick = 0;
	int r;

	*out = NULL;
	*n = 0;
	eb_buf_init(&b, EB_IMAGE_DOC_MAX);
	{
		char *p = eb_path_join(dir, "index.json");
		r = eb_fs_read_file(&b, p, EB_IMAGE_DOC_MAX, err);
		free(p);
	}
	if (r < 0)
		goto done;
	if ((r = eb_index_parse(&top, b.ptr, b.len, err)) < 0)
		goto done;
	for (size_t i = 0; i < top.n_manifests; i++) {
		const char *name = eb_annotations_get(&top.manifests[i].annotations, EB_ANNOT_REF_NAME);
		if (!ref || (name && strcmp(name, ref) == 0)) {
			pick = i;
			break;
		}
		if (i + 1 == top.n_manifests) {
			r = eb_error_set(err, EB_ENOTFOUND, "no image '%s' in '%s'", ref, dir);
			goto done;
		}
	}
	if (top.n_manifests == 0) {
		r = eb_error_set(err, EB_ENOTFOUND, "'%s' holds no image", dir);
		goto done;
	}
	*top_digest = eb_xstrdup(top.manifests[pick].digest);
	*top_type = eb_xstrdup(top.manifests[pick].media_type);
	if (!eb_media_type_is_index(top.manifests[pick].media_type))
		goto done;
	eb_buf_truncate(&b, 0);
	if ((r = eb_layout_read_blob(&b, dir, &top.manifests[pick], EB_IMAGE_DOC_MAX, err)) < 0)
		goto done;
	if ((r = eb_index_parse(&idx, b.ptr, b.len, err)) < 0)
		goto done;
	*out = eb_xcalloc(idx.n_manifests + 1, sizeof(**out));
	for (size_t i = 0; i < idx.n_manifests; i++)
		if (idx.manifests[i].platform)
			eb_platform_copy(&(*out)[(*n)++], idx.manifests[i].platform);
done:
	eb_index_release(&top);
	eb_index_release(&idx);
	eb_buf_release(&b);
	return r;
}

int cmd_inspect(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "platform", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *want = NULL;
	char *dir = NULL, *ref = NULL, *top_digest = NULL, *top_type = NULL;
	struct eb_platform *plats = NULL, one = { 0 };
	size_t nplats = 0;
	json_t *images = json_array();
	int json = 0, c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = 1;
			else if (strcmp(optarg, "text") != 0) {
				r = eb_error_set(err, EB_EUSAGE, "unknown format '%s' (use text or json)",
						 optarg);
				goto done;
			}
			break;
		case 'p': want = optarg; break;
		default:
			r = eb_error_set(err, EB_EUSAGE, "see 'envbuild inspect --help'");
			goto done;
		}
	}
	if (optind + 1 != argc) {
		r = eb_error_set(err, EB_EUSAGE, "inspect takes one LAYOUT[:REF]");
		goto done;
	}
	split_ref(argv[optind], &dir, &ref);
	r = list_platforms(dir, ref, &plats, &nplats, &top_digest, &top_type, err);
	if (r < 0)
		goto done;
	if (want) {
		for (size_t i = 0; i < nplats; i++)
			eb_platform_release(&plats[i]);
		free(plats);
		plats = NULL;
		nplats = 0;
		if ((r = eb_platform_parse(&one, want, err)) < 0)
			goto done;
	}
	if (!json)
		printf("image      %s%s%s\ndigest     %s\nmediaType  %s\n", dir, ref ? ":" : "",
		       ref ? ref : "", top_digest, top_type);
	for (size_t i = 0; i < (nplats ? nplats : 1); i++) {
		struct eb_layout_image img = { 0 };
		const struct eb_platform *p = nplats ? &plats[i] : (want ? &one : NULL);

		r = eb_layout_read(&img, dir, ref, p, err);
		if (r < 0)
			goto done;
		if (json)
			json_array_append_new(images, image_json(&img));
		else {
			printf("\n");
			image_text(&img);
		}
		eb_layout_image_release(&img);
	}
	if (json) {
		json_t *root = json_pack("{s:s, s:s?, s:s, s:s, s:O}", "layout", dir, "ref", ref,
					 "digest", top_digest, "mediaType", top_type, "images", images);
		char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(root);
	}
	r = 0;
done:
	for (size_t i = 0; i < nplats; i++)
		eb_platform_release(&plats[i]);
	free(plats);
	eb_platform_release(&one);
	json_decref(images);
	free(dir);
	free(ref);
	free(top_digest);
	free(top_type);
	return r;
}
