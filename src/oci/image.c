/*
 * image.c - parsing and building image manifests, indexes and configs.
 *
 * Parsing is strict about what the spec requires and lenient about what it
 * leaves open (unknown fields are ignored, null stands for absent where
 * Docker writes it so).  Building starts from the base document where there
 * is one, so fields envbuild does not model survive, and always ends in
 * eb_doc_from_json: the one place bytes and digest are made.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oci/image.h"
#include "ref/imageref.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/envexpand.h"

/* Largest timestamp we format: 9999-12-31T23:59:59Z. */
#define MAX_EPOCH INT64_C(253402300799)

static int bad(struct eb_error **err, const char *doc, const char *fmt, ...) EB_PRINTF(3, 4);

/* "invalid <doc>: <message>" */
static int bad(struct eb_error **err, const char *doc, const char *fmt, ...)
{
	struct eb_buf b;
	va_list ap;
	int r;

	eb_buf_init(&b, 0);
	va_start(ap, fmt);
	r = eb_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (r < 0)
		abort();
	r = eb_error_set(err, EB_EINVALID, "invalid %s: %s", doc, b.ptr);
	eb_buf_release(&b);
	return r;
}

/* ---- string vectors ---------------------------------------------------- */

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* A JSON string, or array of strings, as a NULL-terminated vector.  Docker
 * accepts a bare string for Entrypoint/Cmd (its strslice type); so do we. */
static int strv_from_json(char ***out, size_t *n, const json_t *j, int allow_string)
{
	size_t i, cnt;

	*out = NULL;
	*n = 0;
	if (allow_string && json_is_string(j)) {
		*out = eb_xcalloc(2, sizeof(char *));
		(*out)[0] = eb_xstrdup(json_string_value(j));
		*n = 1;
		return 0;
	}
	if (!json_is_array(j))
		return -1;
	cnt = json_array_size(j);
	for (i = 0; i < cnt; i++)
		if (!json_is_string(json_array_get(j, i)))
			return -1;
	*out = eb_xcalloc(cnt + 1, sizeof(char *));
	for (i = 0; i < cnt; i++)
		(*out)[i] = eb_xstrdup(json_string_value(json_array_get(j, i)));
	*n = cnt;
	return 0;
}

/* Set a string member from a caller-supplied string; -1 when it is not
 * UTF-8 (jansson refuses to hold such strings). */
static int set_str(json_t *obj, const char *key, const char *val)
{
	json_t *s = json_string(val);

	if (!s)
		return -1;
	return json_object_set_new(obj, key, s);
}

static json_t *strv_to_json(const char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *s = json_string(v[i]);
		if (!s) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, s);
	}
	return a;
}

/* ---- annotations ------------------------------------------------------- */

void eb_annotations_set(struct eb_annotations *a, const char *key, const char *value)
{
	char *v = eb_xstrdup(value);

	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->items[i].key, key) == 0) {
			free(a->items[i].value);
			a->items[i].value = v;
			return;
		}
	}
	EB_ALLOC_GROW(a->items, a->n + 1, a->cap);
	a->items[a->n].key = eb_xstrdup(key);
	a->items[a->n].value = v;
	a->n++;
}

const char *eb_annotations_get(const struct eb_annotations *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->items[i].key, key) == 0)
			return a->items[i].value;
	return NULL;
}

void eb_annotations_copy(struct eb_annotations *dst, const struct eb_annotations *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		eb_annotations_set(dst, src->items[i].key, src->items[i].value);
}

void eb_annotations_release(struct eb_annotations *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->items[i].key);
		free(a->items[i].value);
	}
	free(a->items);
	memset(a, 0, sizeof(*a));
}

/* An object of strings (annotations, labels); null counts as empty. */
static int annotations_from_json(struct eb_annotations *out, const json_t *j, const char *doc,
				 const char *path, struct eb_error **err)
{
	const char *k;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return bad(err, doc, "'%s' must be an object of strings", path);
	json_object_foreach ((json_t *)j, k, v) {
		if (!json_is_string(v)) {
			eb_annotations_release(out);
			return bad(err, doc, "'%s.%s' must be a string", path, k);
		}
		eb_annotations_set(out, k, json_string_value(v));
	}
	return 0;
}

static json_t *annotations_to_json(const struct eb_annotations *a)
{
	json_t *o = json_object();

	for (size_t i = 0; i < a->n; i++) {
		if (set_str(o, a->items[i].key, a->items[i].value) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* ---- platforms ---------------------------------------------------------- */

static const struct {
	const char *alias;
	const char *arch;
	const char *variant;
} arch_aliases[] = {
	{ "x86_64", "amd64", NULL }, { "x86-64", "amd64", NULL }, { "aarch64", "arm64", NULL },
	{ "armhf", "arm", "v7" },    { "armel", "arm", "v6" },    { "i386", "386", NULL },
	{ "i686", "386", NULL },
};

/* GOARCH name for arch; *variant gets the variant an alias implies. */
static const char *canon_arch(const char *arch, const char **variant)
{
	*variant = NULL;
	for (size_t i = 0; i < sizeof(arch_aliases) / sizeof(arch_aliases[0]); i++) {
		if (strcmp(arch, arch_aliases[i].alias) == 0) {
			*variant = arch_aliases[i].variant;
			return arch_aliases[i].arch;
		}
	}
	return arch;
}

/* What a missing variant means (containerd's platform normalisation). */
static const char *default_variant(const char *arch)
{
	if (strcmp(arch, "arm64") == 0)
		return "v8";
	if (strcmp(arch, "arm") == 0)
		return "v7";
	if (strcmp(arch, "amd64") == 0)
		return "v1";
	return NULL;
}

/* "8" and "v8" are the same variant. */
static int variant_eq(const char *a, const char *b)
{
	if (a[0] == 'v' && a[1] >= '0' && a[1] <= '9')
		a++;
	if (b[0] == 'v' && b[1] >= '0' && b[1] <= '9')
		b++;
	return strcmp(a, b) == 0;
}

static int platform_component_ok(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

int eb_platform_parse(struct eb_platform *out, const char *s, struct eb_error **err)
{
	char *parts[3] = { NULL, NULL, NULL };
	eb_autofree char *low = eb_xstrdup(s);
	const char *alias_variant, *arch;
	char *p = low, *slash;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	for (char *q = low; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	for (;;) {
		slash = strchr(p, '/');
		if (n == 3 || !platform_component_ok(p, slash ? (size_t)(slash - p) : strlen(p)))
			return eb_error_set(err, EB_EINVALID,
					    "invalid platform '%s': expected os/arch[/variant]", s);
		parts[n++] = p;
		if (!slash)
			break;
		*slash = '\0';
		p = slash + 1;
	}
	if (n < 2)
		return eb_error_set(err, EB_EINVALID,
				    "invalid platform '%s': expected os/arch[/variant]", s);
	arch = canon_arch(parts[1], &alias_variant);
	out->os = eb_xstrdup(parts[0]);
	out->architecture = eb_xstrdup(arch);
	if (parts[2]) {
		if (parts[2][0] >= '0' && parts[2][0] <= '9')
			out->variant = eb_xasprintf("v%s", parts[2]);
		else
			out->variant = eb_xstrdup(parts[2]);
	} else if (alias_variant) {
		out->variant = eb_xstrdup(alias_variant);
	}
	return 0;
}

char *eb_platform_format(const struct eb_platform *p)
{
	return eb_xasprintf("%s/%s%s%s", p->os ? p->os : "?", p->architecture ? p->architecture : "?",
			    p->variant ? "/" : "", p->variant ? p->variant : "");
}

int eb_platform_matches(const struct eb_platform *want, const struct eb_platform *have)
{
	const char *wa, *ha, *wav, *hav, *wv, *hv;

	if (!want->os || !have->os || !want->architecture || !have->architecture)
		return 0;
	if (strcmp(want->os, have->os) != 0)
		return 0;
	wa = canon_arch(want->architecture, &wav);
	ha = canon_arch(have->architecture, &hav);
	if (strcmp(wa, ha) != 0)
		return 0;
	wv = want->variant ? want->variant : wav ? wav : default_variant(wa);
	hv = have->variant ? have->variant : hav ? hav : default_variant(ha);
	if (!wv || !hv)
		return !wv && !hv;
	return variant_eq(wv, hv);
}

void eb_platform_for_image(struct eb_platform *p, const struct eb_platform *base)
{
	const char *v = NULL;

	if (base && base->variant && p->architecture && base->architecture &&
	    strcmp(p->architecture, base->architecture) == 0)
		v = base->variant;
	else if (!p->variant && p->architecture && strcmp(p->architecture, "arm64") == 0)
		v = "v8";
	if (!v)
		return;
	free(p->variant);
	p->variant = eb_xstrdup(v);
}

void eb_platform_copy(struct eb_platform *dst, const struct eb_platform *src)
{
	dst->os = src->os ? eb_xstrdup(src->os) : NULL;
	dst->architecture = src->architecture ? eb_xstrdup(src->architecture) : NULL;
	dst->variant = src->variant ? eb_xstrdup(src->variant) : NULL;
}

void eb_platform_release(struct eb_platform *p)
{
	if (!p)
		return;
	free(p->os);
	free(p->architecture);
	free(p->variant);
	memset(p, 0, sizeof(*p));
}

static json_t *platform_to_json(const struct eb_platform *p)
{
	json_t *o = json_object();

	if (set_str(o, "os", p->os) < 0 || set_str(o, "architecture", p->architecture) < 0 ||
	    (p->variant && set_str(o, "variant", p->variant) < 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int platform_from_json(struct eb_platform *out, const json_t *j, const char *doc,
			      const char *path, struct eb_error **err)
{
	const json_t *os = json_object_get(j, "os");
	const json_t *arch = json_object_get(j, "architecture");
	const json_t *variant = json_object_get(j, "variant");

	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		return bad(err, doc, "'%s.platform' must be an object", path);
	if (!json_is_string(os) || !json_is_string(arch))
		return bad(err, doc, "'%s.platform' needs 'os' and 'architecture' strings", path);
	if (variant && !json_is_null(variant) && !json_is_string(variant))
		return bad(err, doc, "'%s.platform.variant' must be a string", path);
	out->os = eb_xstrdup(json_string_value(os));
	out->architecture = eb_xstrdup(json_string_value(arch));
	if (json_is_string(variant) && json_string_length(variant) > 0)
		out->variant = eb_xstrdup(json_string_value(variant));
	return 0;
}

/* ---- descriptors ------------------------------------------------------- */

int eb_media_type_is_manifest(const char *mt)
{
	return mt && (strcmp(mt, EB_MEDIA_OCI_MANIFEST) == 0 ||
		      strcmp(mt, EB_MEDIA_DOCKER_MANIFEST) == 0);
}

int eb_media_type_is_index(const char *mt)
{
	return mt && (strcmp(mt, EB_MEDIA_OCI_INDEX) == 0 || strcmp(mt, EB_MEDIA_DOCKER_LIST) == 0);
}

/* The OCI media type for a layer media type, or NULL when it is not a layer
 * type envbuild understands. */
static const char *oci_layer_type(const char *mt)
{
	if (!mt)
		return NULL;
	if (strcmp(mt, EB_MEDIA_OCI_LAYER) == 0 || strcmp(mt, EB_MEDIA_OCI_LAYER_GZIP) == 0 ||
	    strcmp(mt, EB_MEDIA_OCI_LAYER_ZSTD) == 0)
		return mt;
	if (strcmp(mt, EB_MEDIA_DOCKER_LAYER_GZIP) == 0)
		return EB_MEDIA_OCI_LAYER_GZIP;
	return NULL;
}

static int is_config_type(const char *mt)
{
	return strcmp(mt, EB_MEDIA_OCI_CONFIG) == 0 || strcmp(mt, EB_MEDIA_DOCKER_CONFIG) == 0;
}

/* RFC 6838 as the descriptor schema has it:
 * [A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126} "/" the same */
static int media_type_part_ok(const char *s, size_t n)
{
	if (n == 0 || n > 127)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || !strchr("!#$&^_.+-", c)))
			return 0;
	}
	return 1;
}

static int media_type_ok(const char *mt)
{
	const char *slash = strchr(mt, '/');

	return slash && media_type_part_ok(mt, (size_t)(slash - mt)) &&
	       media_type_part_ok(slash + 1, strlen(slash + 1));
}

json_t *eb_descriptor_to_json(const struct eb_descriptor *d)
{
	json_t *o = json_object();

	if (set_str(o, "mediaType", d->media_type) < 0 || set_str(o, "digest", d->digest) < 0)
		goto fail;
	json_object_set_new(o, "size", json_integer(d->size));
	if (d->annotations.n > 0) {
		json_t *a = annotations_to_json(&d->annotations);
		if (!a)
			goto fail;
		json_object_set_new(o, "annotations", a);
	}
	if (d->platform) {
		json_t *p = platform_to_json(d->platform);
		if (!p)
			goto fail;
		json_object_set_new(o, "platform", p);
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

int eb_descriptor_from_json(struct eb_descriptor *out, const json_t *j, const char *doc,
			    const char *path, struct eb_error **err)
{
	const json_t *mt, *dg, *sz, *pl;
	eb_autofree char *sub = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		return bad(err, doc, "'%s' must be an object", path);
	mt = json_object_get(j, "mediaType");
	dg = json_object_get(j, "digest");
	sz = json_object_get(j, "size");
	if (!json_is_string(mt))
		return bad(err, doc, "'%s.mediaType' is missing or not a string", path);
	if (!media_type_ok(json_string_value(mt)))
		return bad(err, doc, "'%s.mediaType' is not a media type: '%s'", path,
			   json_string_value(mt));
	if (!json_is_string(dg) || !eb_digest_valid(json_string_value(dg)))
		return bad(err, doc, "'%s.digest' is missing or not a valid digest", path);
	if (!json_is_integer(sz) || json_integer_value(sz) < 0)
		return bad(err, doc, "'%s.size' is missing or not a non-negative integer", path);
	sub = eb_xasprintf("%s.annotations", path);
	r = annotations_from_json(&out->annotations, json_object_get(j, "annotations"), doc, sub,
				  err);
	if (r < 0)
		return r;
	pl = json_object_get(j, "platform");
	if (pl && !json_is_null(pl)) {
		out->platform = eb_xcalloc(1, sizeof(*out->platform));
		r = platform_from_json(out->platform, pl, doc, path, err);
		if (r < 0) {
			eb_descriptor_release(out);
			return r;
		}
	}
	out->media_type = eb_xstrdup(json_string_value(mt));
	out->digest = eb_xstrdup(json_string_value(dg));
	out->size = (int64_t)json_integer_value(sz);
	return 0;
}

void eb_descriptor_copy(struct eb_descriptor *dst, const struct eb_descriptor *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->media_type = src->media_type ? eb_xstrdup(src->media_type) : NULL;
	dst->digest = src->digest ? eb_xstrdup(src->digest) : NULL;
	dst->size = src->size;
	eb_annotations_copy(&dst->annotations, &src->annotations);
	if (src->platform) {
		dst->platform = eb_xcalloc(1, sizeof(*dst->platform));
		eb_platform_copy(dst->platform, src->platform);
	}
}

void eb_descriptor_release(struct eb_descriptor *d)
{
	if (!d)
		return;
	free(d->media_type);
	free(d->digest);
	eb_annotations_release(&d->annotations);
	if (d->platform) {
		eb_platform_release(d->platform);
		free(d->platform);
	}
	memset(d, 0, sizeof(*d));
}

/* ---- documents ---------------------------------------------------------- */

void eb_doc_from_json(struct eb_doc *out, const json_t *j)
{
	const size_t flags = JSON_SORT_KEYS | JSON_COMPACT;
	size_t n = json_dumpb(j, NULL, 0, flags);

	/* zero only for a scalar or OOM inside jansson: programming errors */
	if (n == 0)
		abort();
	out->data = eb_xmalloc(n + 1);
	if (json_dumpb(j, out->data, n, flags) != n)
		abort();
	out->data[n] = '\0';
	out->len = n;
	eb_sha256_digest(out->data, n, out->digest);
}

void eb_doc_descriptor(struct eb_descriptor *out, const struct eb_doc *doc, const char *media_type)
{
	memset(out, 0, sizeof(*out));
	out->media_type = eb_xstrdup(media_type);
	out->digest = eb_xstrdup(doc->digest);
	out->size = (int64_t)doc->len;
}

void eb_doc_release(struct eb_doc *doc)
{
	if (!doc)
		return;
	free(doc->data);
	memset(doc, 0, sizeof(*doc));
}

/* Parse a whole document, which must be a JSON object no larger than
 * EB_IMAGE_DOC_MAX.  Duplicate keys are refused (I-JSON): two readers must
 * never see two different documents in the same bytes. */
static int load_doc(json_t **out, const void *data, size_t len, const char *doc,
		    struct eb_error **err)
{
	json_error_t je;
	json_t *j;

	*out = NULL;
	if (len > EB_IMAGE_DOC_MAX)
		return eb_error_set(err, EB_ETOOBIG, "%s of %zu bytes is over the %zu-byte limit",
				    doc, len, EB_IMAGE_DOC_MAX);
	j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return eb_error_set(err, EB_EINVALID, "invalid %s: %s at line %d, column %d", doc,
				    je.text, je.line, je.column);
	if (!json_is_object(j)) {
		json_decref(j);
		return bad(err, doc, "not a JSON object");
	}
	*out = j;
	return 0;
}

static int check_schema_version(const json_t *root, const char *doc, struct eb_error **err)
{
	const json_t *v = json_object_get(root, "schemaVersion");

	if (!json_is_integer(v))
		return bad(err, doc, "'schemaVersion' is missing or not an integer");
	if (json_integer_value(v) == 1)
		return eb_error_set(err, EB_EINVALID,
				    "docker schema 1 %ss are not supported (deprecated since 2017)",
				    doc);
	if (json_integer_value(v) != 2)
		return bad(err, doc, "'schemaVersion' is %" JSON_INTEGER_FORMAT ", not 2",
			   json_integer_value(v));
	return 0;
}

int eb_image_doc_kind(enum eb_doc_kind *out, const char *media_type, const void *data,
		      size_t len, struct eb_error **err)
{
	json_auto_t *root = NULL;
	const json_t *mt;
	int r;

	if (eb_media_type_is_manifest(media_type)) {
		*out = EB_DOC_MANIFEST;
		return 0;
	}
	if (eb_media_type_is_index(media_type)) {
		*out = EB_DOC_INDEX;
		return 0;
	}
	r = load_doc(&root, data, len, "image document", err);
	if (r < 0)
		return r;
	mt = json_object_get(root, "mediaType");
	if (json_is_string(mt) && eb_media_type_is_manifest(json_string_value(mt))) {
		*out = EB_DOC_MANIFEST;
		return 0;
	}
	if (json_is_string(mt) && eb_media_type_is_index(json_string_value(mt))) {
		*out = EB_DOC_INDEX;
		return 0;
	}
	if (!mt && json_is_array(json_object_get(root, "manifests"))) {
		*out = EB_DOC_INDEX;
		return 0;
	}
	if (!mt && json_is_object(json_object_get(root, "config"))) {
		*out = EB_DOC_MANIFEST;
		return 0;
	}
	return eb_error_set(err, EB_EINVALID, "document of type '%s' is neither an image manifest "
			    "nor an image index", json_is_string(mt) ? json_string_value(mt) :
			    media_type ? media_type : "unknown");
}

/* Parse the descriptors of an array member ("layers", "manifests"). */
static int descriptors_from_json(struct eb_descriptor **out, size_t *n, const json_t *arr,
				 const char *doc, const char *name, struct eb_error **err)
{
	size_t cnt;

	*out = NULL;
	*n = 0;
	if (!json_is_array(arr))
		return bad(err, doc, "'%s' is missing or not an array", name);
	cnt = json_array_size(arr);
	*out = eb_xcalloc(cnt ? cnt : 1, sizeof(**out));
	for (size_t i = 0; i < cnt; i++) {
		eb_autofree char *path = eb_xasprintf("%s[%zu]", name, i);
		int r = eb_descriptor_from_json(&(*out)[i], json_array_get(arr, i), doc, path, err);
		if (r < 0)
			return r;
		(*n)++;
	}
	return 0;
}

/* ---- manifests ----------------------------------------------------------- */

int eb_manifest_parse(struct eb_manifest *out, const void *data, size_t len,
		      struct eb_error **err)
{
	json_auto_t *root = NULL;
	const json_t *mt;
	int r;

	memset(out, 0, sizeof(*out));
	r = load_doc(&root, data, len, "manifest", err);
	if (r < 0)
		return r;
	r = check_schema_version(root, "manifest", err);
	if (r < 0)
		return r;
	mt = json_object_get(root, "mediaType");
	if (mt) {
		const char *s = json_string_value(mt);
		if (!s)
			return bad(err, "manifest", "'mediaType' must be a string");
		if (eb_media_type_is_index(s))
			return eb_error_set(err, EB_EINVALID,
					    "expected an image manifest, got an image index ('%s')", s);
		if (!eb_media_type_is_manifest(s))
			return bad(err, "manifest", "unsupported media type '%s'", s);
	} else if (json_object_get(root, "manifests")) {
		return eb_error_set(err, EB_EINVALID,
				    "expected an image manifest, got an image index");
	}
	if (!json_object_get(root, "config"))
		return bad(err, "manifest", "'config' is missing");
	r = eb_descriptor_from_json(&out->config, json_object_get(root, "config"), "manifest",
				    "config", err);
	if (r < 0)
		goto fail;
	if (!is_config_type(out->config.media_type)) {
		r = eb_error_set(err, EB_EINVALID,
				 "manifest is not a container image: config media type '%s'",
				 out->config.media_type);
		goto fail;
	}
	r = descriptors_from_json(&out->layers, &out->n_layers, json_object_get(root, "layers"),
				  "manifest", "layers", err);
	if (r < 0)
		goto fail;
	r = annotations_from_json(&out->annotations, json_object_get(root, "annotations"),
				  "manifest", "annotations", err);
	if (r < 0)
		goto fail;
	out->media_type = eb_xstrdup(mt ? json_string_value(mt) : EB_MEDIA_OCI_MANIFEST);
	return 0;
fail:
	eb_manifest_release(out);
	return r;
}

void eb_manifest_release(struct eb_manifest *m)
{
	if (!m)
		return;
	free(m->media_type);
	eb_descriptor_release(&m->config);
	for (size_t i = 0; i < m->n_layers; i++)
		eb_descriptor_release(&m->layers[i]);
	free(m->layers);
	eb_annotations_release(&m->annotations);
	memset(m, 0, sizeof(*m));
}

/* Append d to layers with its OCI media type; `what` ("base", "new") and i
 * name the layer in messages. */
static int layer_to_json(json_t *layers, const struct eb_descriptor *d, const char *what,
			 size_t i, struct eb_error **err)
{
	const char *mt = oci_layer_type(d->media_type);
	json_t *j;

	if (!mt)
		return eb_error_set(err, EB_EINVALID, "%s layer %zu has unsupported media type '%s'",
				    what, i, d->media_type ? d->media_type : "(none)");
	if (!d->digest || !eb_digest_valid(d->digest) || d->size < 0)
		return eb_error_set(err, EB_EINVALID, "%s layer %zu has no valid digest and size",
				    what, i);
	j = eb_descriptor_to_json(d);
	if (!j)
		return eb_error_set(err, EB_EINVALID, "%s layer %zu has annotations that are not UTF-8",
				    what, i);
	json_object_set_new(j, "mediaType", json_string(mt));
	json_object_del(j, "platform");
	json_array_append_new(layers, j);
	return 0;
}

/* "docker.io/library/python:3.11" for "python:3.11" (digest dropped: it has
 * its own annotation). */
static int qualified_base_name(char **out, const char *name, struct eb_error **err)
{
	struct eb_imageref ref;
	eb_autofree char *repo = NULL;
	int r;

	r = eb_imageref_parse(&ref, name, err);
	if (r < 0)
		return eb_error_wrap(err, "base image '%s'", name);
	repo = eb_imageref_name(&ref);
	*out = ref.tag ? eb_xasprintf("%s:%s", repo, ref.tag) : eb_xstrdup(repo);
	eb_imageref_release(&ref);
	return 0;
}

int eb_manifest_build(struct eb_doc *out, const struct eb_manifest_settings *s,
		      struct eb_error **err)
{
	json_auto_t *root = json_object();
	json_t *layers = json_array();
	json_t *annots = json_object();
	json_t *cfg;
	int r;

	memset(out, 0, sizeof(*out));
	json_object_set_new(root, "layers", layers);
	if (!s->config || !s->config->digest || !eb_digest_valid(s->config->digest) ||
	    s->config->size < 0) {
		json_decref(annots);
		return eb_error_set(err, EB_EINVALID, "manifest needs a config with a valid digest");
	}
	json_object_set_new(root, "schemaVersion", json_integer(2));
	json_object_set_new(root, "mediaType", json_string(EB_MEDIA_OCI_MANIFEST));
	cfg = eb_descriptor_to_json(s->config);
	if (!cfg) {
		json_decref(annots);
		return eb_error_set(err, EB_EINVALID, "config descriptor is not valid UTF-8");
	}
	/* The config format is the same; only the OCI name goes with an OCI
	 * manifest. */
	json_object_set_new(cfg, "mediaType", json_string(EB_MEDIA_OCI_CONFIG));
	json_object_del(cfg, "platform");
	json_object_set_new(root, "config", cfg);

	for (size_t i = 0; s->base && i < s->base->n_layers; i++) {
		r = layer_to_json(layers, &s->base->layers[i], "base", i, err);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; i < s->n_layers; i++) {
		r = layer_to_json(layers, &s->layers[i], "new", i, err);
		if (r < 0)
			goto fail;
	}

	if (s->base && s->base_name && !eb_imageref_is_scratch(s->base_name)) {
		eb_autofree char *q = NULL;
		r = qualified_base_name(&q, s->base_name, err);
		if (r < 0)
			goto fail;
		json_object_set_new(annots, EB_ANNOT_BASE_NAME, json_string(q));
	}
	if (s->base && s->base_digest) {
		if (!eb_digest_valid(s->base_digest)) {
			r = eb_error_set(err, EB_EINVALID, "base image digest '%s' is not valid",
					 s->base_digest);
			goto fail;
		}
		json_object_set_new(annots, EB_ANNOT_BASE_DIGEST, json_string(s->base_digest));
	}
	for (size_t i = 0; i < s->n_annotations; i++) {
		if (!s->annotations[i].key || !*s->annotations[i].key || !s->annotations[i].value ||
		    set_str(annots, s->annotations[i].key, s->annotations[i].value) < 0) {
			r = eb_error_set(err, EB_EINVALID, "manifest annotation %zu is empty or not "
					 "UTF-8", i);
			goto fail;
		}
	}
	if (json_object_size(annots) > 0)
		json_object_set_new(root, "annotations", annots);
	else
		json_decref(annots);
	eb_doc_from_json(out, root);
	return 0;
fail:
	json_decref(annots);
	return r;
}

/* ---- indexes ------------------------------------------------------------ */

int eb_index_parse(struct eb_index *out, const void *data, size_t len, struct eb_error **err)
{
	json_auto_t *root = NULL;
	const json_t *mt;
	int r;

	memset(out, 0, sizeof(*out));
	r = load_doc(&root, data, len, "index", err);
	if (r < 0)
		return r;
	r = check_schema_version(root, "index", err);
	if (r < 0)
		return r;
	mt = json_object_get(root, "mediaType");
	if (mt) {
		const char *s = json_string_value(mt);
		if (!s)
			return bad(err, "index", "'mediaType' must be a string");
		if (eb_media_type_is_manifest(s))
			return eb_error_set(err, EB_EINVALID,
					    "expected an image index, got an image manifest ('%s')", s);
		if (!eb_media_type_is_index(s))
			return bad(err, "index", "unsupported media type '%s'", s);
	} else if (json_object_get(root, "config") || json_object_get(root, "layers")) {
		return eb_error_set(err, EB_EINVALID,
				    "expected an image index, got an image manifest");
	}
	r = descriptors_from_json(&out->manifests, &out->n_manifests,
				  json_object_get(root, "manifests"), "index", "manifests", err);
	if (r < 0)
		goto fail;
	r = annotations_from_json(&out->annotations, json_object_get(root, "annotations"), "index",
				  "annotations", err);
	if (r < 0)
		goto fail;
	out->media_type = eb_xstrdup(mt ? json_string_value(mt) : EB_MEDIA_OCI_INDEX);
	return 0;
fail:
	eb_index_release(out);
	return r;
}

int eb_index_select(const struct eb_index *idx, const struct eb_platform *want, size_t *pos,
		    struct eb_error **err)
{
	eb_autofree char *w = eb_platform_format(want);
	struct eb_buf have;
	int r;

	for (size_t i = 0; i < idx->n_manifests; i++) {
		const struct eb_descriptor *d = &idx->manifests[i];
		if (eb_media_type_is_manifest(d->media_type) && d->platform &&
		    eb_platform_matches(want, d->platform)) {
			*pos = i;
			return 0;
		}
	}
	eb_buf_init(&have, 0);
	for (size_t i = 0; i < idx->n_manifests; i++) {
		const struct eb_descriptor *d = &idx->manifests[i];
		eb_autofree char *p = NULL;
		/* attestation manifests say unknown/unknown: not a platform */
		if (!d->platform || !eb_media_type_is_manifest(d->media_type) ||
		    strcmp(d->platform->os, "unknown") == 0)
			continue;
		p = eb_platform_format(d->platform);
		if (eb_buf_addf(&have, "%s%s", have.len ? ", " : "", p) < 0)
			abort();
	}
	r = eb_error_set(err, EB_ENOTFOUND, "no image for platform '%s' in the index%s%s%s", w,
			 have.len ? " (it has " : "", have.ptr, have.len ? ")" : "");
	eb_buf_release(&have);
	return r;
}

int eb_index_select_only(const struct eb_index *idx, const char *what, size_t *pos,
			 struct eb_error **err)
{
	size_t n = 0;
	struct eb_buf list;
	int rc = 0;

	eb_buf_init(&list, 0);
	for (size_t i = 0; i < idx->n_manifests; i++) {
		const struct eb_descriptor *d = &idx->manifests[i];
		if (d->platform && strcmp(d->platform->os, "unknown") == 0)
			continue;
		if (!eb_media_type_is_manifest(d->media_type) && !eb_media_type_is_index(d->media_type))
			continue;
		if (n++ == 0)
			*pos = i;
		if (d->platform) {
			eb_autofree char *p = eb_platform_format(d->platform);
			(void)eb_buf_addf(&list, "%s%s", list.len ? ", " : "", p);
		}
	}
	if (n == 0)
		rc = eb_error_set(err, EB_ENOTFOUND, "%s holds no image manifests", what);
	else if (n > 1)
		rc = eb_error_set(err, EB_EINVALID, "%s has %zu platforms (%s); choose one", what, n,
				  list.ptr);
	eb_buf_release(&list);
	return rc;
}

void eb_index_release(struct eb_index *idx)
{
	if (!idx)
		return;
	free(idx->media_type);
	for (size_t i = 0; i < idx->n_manifests; i++)
		eb_descriptor_release(&idx->manifests[i]);
	free(idx->manifests);
	eb_annotations_release(&idx->annotations);
	memset(idx, 0, sizeof(*idx));
}

int eb_index_build(struct eb_doc *out, const struct eb_descriptor *manifests, size_t n,
		   const struct eb_kv *annotations, size_t n_annotations, struct eb_error **err)
{
	json_auto_t *root = json_object();
	json_t *arr = json_array();

	memset(out, 0, sizeof(*out));
	json_object_set_new(root, "schemaVersion", json_integer(2));
	json_object_set_new(root, "mediaType", json_string(EB_MEDIA_OCI_INDEX));
	json_object_set_new(root, "manifests", arr);
	for (size_t i = 0; i < n; i++) {
		const struct eb_descriptor *d = &manifests[i];
		json_t *j;

		if (!eb_media_type_is_manifest(d->media_type) || !d->digest ||
		    !eb_digest_valid(d->digest) || d->size < 0)
			return eb_error_set(err, EB_EINVALID,
					    "index entry %zu is not an image manifest descriptor", i);
		if (!d->platform || !d->platform->os || !d->platform->architecture)
			return eb_error_set(err, EB_EINVALID, "index entry %zu ('%s') has no platform",
					    i, d->digest);
		for (size_t k = 0; k < i; k++) {
			if (eb_platform_matches(manifests[k].platform, d->platform) &&
			    eb_platform_matches(d->platform, manifests[k].platform)) {
				eb_autofree char *p = eb_platform_format(d->platform);
				return eb_error_set(err, EB_EINVALID,
						    "platform '%s' is in the index twice", p);
			}
		}
		j = eb_descriptor_to_json(d);
		if (!j)
			return eb_error_set(err, EB_EINVALID, "index entry %zu is not valid UTF-8", i);
		json_array_append_new(arr, j);
	}
	if (n_annotations > 0) {
		json_t *a = json_object();
		json_object_set_new(root, "annotations", a);
		for (size_t i = 0; i < n_annotations; i++)
			if (!annotations[i].key || !*annotations[i].key || !annotations[i].value ||
			    set_str(a, annotations[i].key, annotations[i].value) < 0)
				return eb_error_set(err, EB_EINVALID,
						    "index annotation %zu is empty or not UTF-8", i);
	}
	eb_doc_from_json(out, root);
	return 0;
}

/* ---- configs ------------------------------------------------------------ */

static int config_strv(char ***out, size_t *n, const json_t *cfg, const char *key,
		       int allow_string, struct eb_error **err)
{
	const json_t *v = json_object_get(cfg, key);

	*out = NULL;
	*n = 0;
	if (!v || json_is_null(v))
		return 0;
	if (strv_from_json(out, n, v, allow_string) < 0)
		return bad(err, "config", "'config.%s' must be an array of strings", key);
	return 0;
}

static int config_str(char **out, const json_t *cfg, const char *key, struct eb_error **err)
{
	const json_t *v = json_object_get(cfg, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return bad(err, "config", "'config.%s' must be a string", key);
	*out = eb_xstrdup(json_string_value(v));
	return 0;
}

int eb_config_parse(struct eb_config *out, const void *data, size_t len, struct eb_error **err)
{
	json_t *root = NULL;
	const json_t *arch, *os, *variant, *created, *cfg, *rootfs, *type, *diff_ids, *history;
	int r = 0;

	memset(out, 0, sizeof(*out));
	r = load_doc(&root, data, len, "config", err);
	if (r < 0)
		return r;
	out->json = root;
	arch = json_object_get(root, "architecture");
	os = json_object_get(root, "os");
	variant = json_object_get(root, "variant");
	created = json_object_get(root, "created");
	if (!json_is_string(arch) || json_string_length(arch) == 0) {
		r = bad(err, "config", "'architecture' is missing or not a string");
		goto fail;
	}
	if (!json_is_string(os) || json_string_length(os) == 0) {
		r = bad(err, "config", "'os' is missing or not a string");
		goto fail;
	}
	if (variant && !json_is_null(variant) && !json_is_string(variant)) {
		r = bad(err, "config", "'variant' must be a string");
		goto fail;
	}
	if (created && !json_is_null(created) && !json_is_string(created)) {
		r = bad(err, "config", "'created' must be a string");
		goto fail;
	}
	out->platform.os = eb_xstrdup(json_string_value(os));
	out->platform.architecture = eb_xstrdup(json_string_value(arch));
	if (json_is_string(variant) && json_string_length(variant) > 0)
		out->platform.variant = eb_xstrdup(json_string_value(variant));
	if (json_is_string(created))
		out->created = eb_xstrdup(json_string_value(created));

	cfg = json_object_get(root, "config");
	if (cfg && !json_is_null(cfg) && !json_is_object(cfg)) {
		r = bad(err, "config", "'config' must be an object");
		goto fail;
	}
	if (json_is_object(cfg)) {
		if ((r = config_strv(&out->env, &out->n_env, cfg, "Env", 0, err)) < 0 ||
		    (r = config_strv(&out->entrypoint, &out->n_entrypoint, cfg, "Entrypoint", 1,
				     err)) < 0 ||
		    (r = config_strv(&out->cmd, &out->n_cmd, cfg, "Cmd", 1, err)) < 0 ||
		    (r = config_str(&out->workdir, cfg, "WorkingDir", err)) < 0 ||
		    (r = config_str(&out->user, cfg, "User", err)) < 0 ||
		    (r = annotations_from_json(&out->labels, json_object_get(cfg, "Labels"),
					       "config", "config.Labels", err)) < 0)
			goto fail;
	}
	if (!out->env)
		out->env = eb_xcalloc(1, sizeof(char *));

	rootfs = json_object_get(root, "rootfs");
	if (!json_is_object(rootfs)) {
		r = bad(err, "config", "'rootfs' is missing or not an object");
		goto fail;
	}
	type = json_object_get(rootfs, "type");
	if (!json_is_string(type)) {
		r = bad(err, "config", "'rootfs.type' is missing or not a string");
		goto fail;
	}
	if (strcmp(json_string_value(type), "layers") != 0) {
		r = eb_error_set(err, EB_EINVALID, "invalid config: unknown rootfs type '%s'",
				 json_string_value(type));
		goto fail;
	}
	diff_ids = json_object_get(rootfs, "diff_ids");
	if (strv_from_json(&out->diff_ids, &out->n_diff_ids, diff_ids, 0) < 0) {
		r = bad(err, "config", "'rootfs.diff_ids' is missing or not an array of strings");
		goto fail;
	}
	for (size_t i = 0; i < out->n_diff_ids; i++) {
		if (!eb_digest_valid(out->diff_ids[i])) {
			r = bad(err, "config", "'rootfs.diff_ids[%zu]' is not a valid digest", i);
			goto fail;
		}
	}
	history = json_object_get(root, "history");
	if (history && !json_is_null(history)) {
		if (!json_is_array(history)) {
			r = bad(err, "config", "'history' must be an array");
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(history); i++) {
			if (!json_is_object(json_array_get(history, i))) {
				r = bad(err, "config", "'history[%zu]' must be an object", i);
				goto fail;
			}
		}
		out->n_history = json_array_size(history);
	}
	return 0;
fail:
	eb_config_release(out);
	return r;
}

/* Length of the name part of "NAME=value" (all of it without '='). */
static size_t env_name_len(const char *e)
{
	const char *eq = strchr(e, '=');
	return eq ? (size_t)(eq - e) : strlen(e);
}

const char *eb_config_getenv(const struct eb_config *c, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < c->n_env; i++) {
		const char *e = c->env[i];
		if (env_name_len(e) == n && strncmp(e, name, n) == 0)
			return e[n] == '=' ? e + n + 1 : e + n;
	}
	return NULL;
}

/* What a value may refer to: the entries before it, then the base's Env,
 * then (for PATH only) the PATH BuildKit gives a config that has none. */
struct env_scope {
	const struct eb_config *base;
	const char *const *before;
	size_t n_before;
};

static const char *scope_lookup(void *ctx, const char *name, size_t len)
{
	const struct env_scope *sc = ctx;

	for (size_t i = sc->n_before; i-- > 0;) {
		const char *e = sc->before[i];
		if (e && env_name_len(e) == len && strncmp(e, name, len) == 0 && e[len] == '=')
			return e + len + 1;
	}
	for (size_t i = 0; sc->base && i < sc->base->n_env; i++) {
		const char *e = sc->base->env[i];
		if (env_name_len(e) == len && strncmp(e, name, len) == 0)
			return e[len] == '=' ? e + len + 1 : e + len;
	}
	if (len == 4 && strncmp(name, "PATH", 4) == 0)
		return EB_DEFAULT_PATH;
	return NULL;
}

int eb_config_env_entry(const struct eb_config *base, const char *const *before, size_t n_before,
			const char *name, const char *value, char **out, struct eb_error **err)
{
	struct env_scope sc = { base, before, n_before };
	char *v = NULL;
	int r = eb_envexpand(value, scope_lookup, NULL, &sc, &v, err);

	*out = NULL;
	if (r < 0) {
		eb_error_wrap(err, "value of environment variable %s", name);
		return r;
	}
	*out = eb_xasprintf("%s=%s", name, v);
	free(v);
	return 0;
}

void eb_config_release(struct eb_config *c)
{
	if (!c)
		return;
	eb_platform_release(&c->platform);
	free(c->created);
	strv_free(c->env);
	strv_free(c->entrypoint);
	strv_free(c->cmd);
	free(c->workdir);
	free(c->user);
	eb_annotations_release(&c->labels);
	strv_free(c->diff_ids);
	json_decref(c->json);
	memset(c, 0, sizeof(*c));
}

int eb_image_time_format(char **out, int64_t epoch, struct eb_error **err)
{
	char buf[32];
	struct tm tm;
	time_t t;

	*out = NULL;
	if (epoch < 0 || epoch > MAX_EPOCH)
		return eb_error_set(err, EB_EINVALID, "timestamp %" PRId64 " is out of range", epoch);
	t = (time_t)epoch;
	if (!gmtime_r(&t, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return eb_error_set(err, EB_EINVALID, "cannot format timestamp %" PRId64, epoch);
	*out = eb_xstrdup(buf);
	return 0;
}

/* Top-level keys a Docker daemon leaves in configs: they describe how the
 * base was built, not this image, so they do not carry over. */
static const char *const legacy_keys[] = {
	"container", "container_config", "docker_version", "id", "parent",
};

/* Set key to the vector, or drop it when the vector is empty. */
static int set_strv_or_del(json_t *obj, const char *key, const char *const *v, size_t n)
{
	json_t *a;

	if (n == 0) {
		json_object_del(obj, key);
		return 0;
	}
	a = strv_to_json(v, n);
	if (!a)
		return -1;
	return json_object_set_new(obj, key, a);
}

/* The merged Env: the base's variables in the base's order, ours replacing
 * theirs by name, new names appended in the given order. */
static int merge_env(json_t *cfg, const struct eb_config *base, const struct eb_config_settings *s,
		     struct eb_error **err)
{
	const char **list;
	size_t n = 0, nbase = base ? base->n_env : 0;
	int r = 0;

	if (s->n_env == 0)
		return 0;
	list = eb_xcalloc(nbase + s->n_env + 1, sizeof(*list));
	for (size_t i = 0; i < nbase; i++)
		list[n++] = base->env[i];
	for (size_t i = 0; i < s->n_env; i++) {
		const char *e = s->env[i];
		size_t k, len = env_name_len(e);

		if (len == 0 || e[len] != '=') {
			r = eb_error_set(err, EB_EINVALID,
					 "environment entry '%s' is not NAME=value", e);
			goto done;
		}
		for (k = 0; k < n; k++)
			if (env_name_len(list[k]) == len && strncmp(list[k], e, len) == 0)
				break;
		list[k] = e;
		if (k == n)
			n++;
	}
	if (set_strv_or_del(cfg, "Env", list, n) < 0)
		r = eb_error_set(err, EB_EINVALID, "environment is not valid UTF-8");
done:
	free(list);
	return r;
}

/* "[\"python\",\"-m\",\"app\"]": a list as Docker's history shows it. */
static char *strv_text(const char *const *v, size_t n)
{
	json_t *a = strv_to_json(v, n);
	char *t = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	char *r = eb_xstrdup(t ? t : "[]");

	free(t);
	json_decref(a);
	return r;
}

/* An empty_layer history entry for a config change, as builders write
 * one per ENV/USER/ENTRYPOINT... instruction. */
static int add_empty(json_t *hist, const char *created, char *what)
{
	json_t *h = json_object();
	int r;

	json_array_append_new(hist, h);
	json_object_set_new(h, "created", json_string(created));
	r = set_str(h, "created_by", what);
	json_object_set_new(h, "empty_layer", json_true());
	free(what);
	return r;
}

static int add_config_history(json_t *hist, const struct eb_config_settings *s,
			      const char *created, struct eb_error **err)
{
	int r = 0;

	if (s->n_env) {
		struct eb_buf b;
		eb_buf_init(&b, 0);
		(void)eb_buf_adds(&b, "envbuild: ENV");
		for (size_t i = 0; i < s->n_env; i++)
			(void)eb_buf_addf(&b, " %s", s->env[i]);
		r |= add_empty(hist, created, eb_buf_detach(&b, NULL));
	}
	if (s->n_labels) {
		struct eb_buf b;
		eb_buf_init(&b, 0);
		(void)eb_buf_adds(&b, "envbuild: LABEL");
		for (size_t i = 0; i < s->n_labels; i++)
			(void)eb_buf_addf(&b, " %s=%s", s->labels[i].key, s->labels[i].value);
		r |= add_empty(hist, created, eb_buf_detach(&b, NULL));
	}
	if (s->workdir)
		r |= add_empty(hist, created, eb_xasprintf("envbuild: WORKDIR %s", s->workdir));
	if (s->user)
		r |= add_empty(hist, created, eb_xasprintf("envbuild: USER %s", s->user));
	if (s->n_expose) {
		char *t = strv_text(s->expose, s->n_expose);
		r |= add_empty(hist, created, eb_xasprintf("envbuild: EXPOSE %s", t));
		free(t);
	}
	if (s->stopsignal)
		r |= add_empty(hist, created, eb_xasprintf("envbuild: STOPSIGNAL %s", s->stopsignal));
	if (s->entrypoint) {
		char *t = strv_text(s->entrypoint, s->n_entrypoint);
		r |= add_empty(hist, created, eb_xasprintf("envbuild: ENTRYPOINT %s", t));
		free(t);
	}
	if (s->cmd) {
		char *t = strv_text(s->cmd, s->n_cmd);
		r |= add_empty(hist, created, eb_xasprintf("envbuild: CMD %s", t));
		free(t);
	}
	if (r)
		return eb_error_set(err, EB_EINVALID, "a config setting is not valid UTF-8");
	return 0;
}

static int add_history(json_t *root, const struct eb_config *base,
		       const struct eb_config_settings *s, const char *created,
		       struct eb_error **err)
{
	json_t *hist = json_object_get(root, "history");
	size_t nonempty = 0, nbase = base ? base->n_diff_ids : 0;

	if (s->n_layers == 0 && !s->n_env && !s->n_labels && !s->workdir && !s->user &&
	    !s->entrypoint && !s->cmd && !s->n_expose && !s->stopsignal)
		return 0;
	if (!json_is_array(hist)) {
		hist = json_array();
		json_object_set_new(root, "history", hist);
	}
	/* History must have one non-empty entry per layer; a base without
	 * (enough) history gets blank entries for its layers first, as
	 * BuildKit does, so ours line up with our layers. */
	for (size_t i = 0; i < json_array_size(hist); i++)
		if (!json_is_true(json_object_get(json_array_get(hist, i), "empty_layer")))
			nonempty++;
	for (; nonempty < nbase; nonempty++)
		json_array_insert_new(hist, 0, json_object());
	for (size_t i = 0; i < s->n_layers; i++) {
		const struct eb_config_layer *l = &s->layers[i];
		json_t *h = json_object();

		json_array_append_new(hist, h);
		json_object_set_new(h, "created", json_string(created));
		if ((l->created_by && set_str(h, "created_by", l->created_by) < 0) ||
		    (l->comment && set_str(h, "comment", l->comment) < 0))
			return eb_error_set(err, EB_EINVALID,
					    "history of layer %zu is not valid UTF-8", i);
	}
	return add_config_history(hist, s, created, err);
}

int eb_config_build(struct eb_doc *out, const struct eb_config *base,
		    const struct eb_config_settings *s, struct eb_error **err)
{
	const struct eb_platform *p = s->platform;
	eb_autofree char *created = NULL;
	json_auto_t *root = NULL;
	json_t *cfg, *rootfs, *diff_ids;
	int r;

	memset(out, 0, sizeof(*out));
	if (!p || !p->os || !p->architecture)
		return eb_error_set(err, EB_EINVALID, "a config needs a platform");
	if (base && !eb_platform_matches(p, &base->platform)) {
		eb_autofree char *want = eb_platform_format(p);
		eb_autofree char *have = eb_platform_format(&base->platform);
		return eb_error_set(err, EB_EINVALID, "base image config is for '%s', not '%s'",
				    have, want);
	}
	r = eb_image_time_format(&created, s->epoch, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n_layers; i++)
		if (!s->layers[i].diff_id || !eb_digest_valid(s->layers[i].diff_id))
			return eb_error_set(err, EB_EINVALID, "layer %zu has no valid diff_id", i);
	if (s->workdir && *s->workdir && s->workdir[0] != '/')
		return eb_error_set(err, EB_EINVALID, "working directory '%s' is not absolute",
				    s->workdir);

	root = base ? json_deep_copy(base->json) : json_object();
	for (size_t i = 0; i < sizeof(legacy_keys) / sizeof(legacy_keys[0]); i++)
		json_object_del(root, legacy_keys[i]);
	if (set_str(root, "os", p->os) < 0 || set_str(root, "architecture", p->architecture) < 0 ||
	    (p->variant && set_str(root, "variant", p->variant) < 0))
		return eb_error_set(err, EB_EINVALID, "platform is not valid UTF-8");
	if (!p->variant)
		json_object_del(root, "variant");
	json_object_set_new(root, "created", json_string(created));

	cfg = json_object_get(root, "config");
	if (!json_is_object(cfg)) {
		cfg = json_object();
		json_object_set_new(root, "config", cfg);
	}
	r = merge_env(cfg, base, s, err);
	if (r < 0)
		return r;
	if (s->entrypoint) {
		if (set_strv_or_del(cfg, "Entrypoint", s->entrypoint, s->n_entrypoint) < 0)
			return eb_error_set(err, EB_EINVALID, "entrypoint is not valid UTF-8");
		/* Docker: a new ENTRYPOINT makes the base's CMD meaningless */
		if (!s->cmd)
			json_object_del(cfg, "Cmd");
	}
	if (s->cmd && set_strv_or_del(cfg, "Cmd", s->cmd, s->n_cmd) < 0)
		return eb_error_set(err, EB_EINVALID, "cmd is not valid UTF-8");
	if (s->workdir) {
		if (!*s->workdir)
			json_object_del(cfg, "WorkingDir");
		else if (set_str(cfg, "WorkingDir", s->workdir) < 0)
			return eb_error_set(err, EB_EINVALID, "working directory is not valid UTF-8");
	}
	if (s->n_expose) {
		json_t *ports = json_object_get(cfg, "ExposedPorts");
		if (!json_is_object(ports)) {
			ports = json_object();
			json_object_set_new(cfg, "ExposedPorts", ports);
		}
		for (size_t i = 0; i < s->n_expose; i++)
			if (json_object_set_new(ports, s->expose[i], json_object()) < 0)
				return eb_error_set(err, EB_EINVALID, "port %zu is not valid", i);
	}
	if (s->stopsignal && set_str(cfg, "StopSignal", s->stopsignal) < 0)
		return eb_error_set(err, EB_EINVALID, "stop signal is not valid UTF-8");
	if (s->user) {
		if (!*s->user)
			json_object_del(cfg, "User");
		else if (set_str(cfg, "User", s->user) < 0)
			return eb_error_set(err, EB_EINVALID, "user is not valid UTF-8");
	}
	if (s->n_labels > 0) {
		json_t *labels = json_object_get(cfg, "Labels");
		if (!json_is_object(labels)) {
			labels = json_object();
			json_object_set_new(cfg, "Labels", labels);
		}
		for (size_t i = 0; i < s->n_labels; i++) {
			const struct eb_kv *kv = &s->labels[i];
			if (!kv->key || !*kv->key || !kv->value || set_str(labels, kv->key, kv->value) < 0)
				return eb_error_set(err, EB_EINVALID,
						    "label %zu is empty or not valid UTF-8", i);
		}
	}

	rootfs = json_object();
	diff_ids = json_array();
	json_object_set_new(rootfs, "type", json_string("layers"));
	json_object_set_new(rootfs, "diff_ids", diff_ids);
	json_object_set_new(root, "rootfs", rootfs);
	for (size_t i = 0; base && i < base->n_diff_ids; i++)
		json_array_append_new(diff_ids, json_string(base->diff_ids[i]));
	for (size_t i = 0; i < s->n_layers; i++)
		json_array_append_new(diff_ids, json_string(s->layers[i].diff_id));

	r = add_history(root, base, s, created, err);
	if (r < 0)
		return r;
	eb_doc_from_json(out, root);
	return 0;
}
