/*
 * image.h - the JSON documents of a container image: descriptors, image
 * manifests, image indexes and image configs, in both OCI and Docker
 * schema 2 dialects.
 *
 * Reading: the _parse functions take the bytes a registry or a layout
 * handed over, refuse anything larger than EB_IMAGE_DOC_MAX or malformed
 * (with a message naming the offending field as a JSON path), and fill
 * plain structs.  Docker documents are accepted as they come; nothing is
 * converted while reading.
 *
 * Writing: the _build functions produce a struct eb_doc, the canonical
 * bytes of a document (jansson JSON_SORT_KEYS | JSON_COMPACT) together with
 * the digest of exactly those bytes.  Callers store and push doc->data as
 * is and never re-serialise, so the digest always names what was written.
 * Everything written is OCI: OCI media types, `mediaType` always present.
 *
 * Ownership: a parsed struct (eb_descriptor, eb_manifest, eb_index,
 * eb_config, eb_platform, eb_annotations) owns all its strings and arrays
 * and is freed with its _release function, which leaves it zeroed (so a
 * second release, or release after a failed parse, is safe).  A struct
 * eb_doc owns its bytes (eb_doc_release).  Input-only structs (eb_kv, the
 * _settings structs, eb_config_layer) only borrow what they point to.
 * json_t values returned are new references (json_decref).
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_IMAGE_H
#define EB_OCI_IMAGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/digest.h"
#include "util/error.h"

/* Media types (OCI image-spec media-types.md; Docker manifest-v2-2.md). */
#define EB_MEDIA_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define EB_MEDIA_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define EB_MEDIA_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define EB_MEDIA_OCI_LAYER "application/vnd.oci.image.layer.v1.tar"
#define EB_MEDIA_OCI_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define EB_MEDIA_OCI_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"
#define EB_MEDIA_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define EB_MEDIA_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define EB_MEDIA_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define EB_MEDIA_DOCKER_LAYER_GZIP "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* Well-known annotation keys (annotations.md). */
#define EB_ANNOT_REF_NAME "org.opencontainers.image.ref.name"
#define EB_ANNOT_BASE_NAME "org.opencontainers.image.base.name"
#define EB_ANNOT_BASE_DIGEST "org.opencontainers.image.base.digest"

/* Largest manifest, index or config accepted (the limit registries and
 * containers/image use). */
#define EB_IMAGE_DOC_MAX ((size_t)4 << 20)

/* ---- small pieces ------------------------------------------------------ */

/* A borrowed key/value pair, for inputs (labels, annotations). */
struct eb_kv {
	const char *key;
	const char *value;
};

/* An owned, ordered string map (annotations, labels).  Keys are unique;
 * JSON output is sorted anyway. */
struct eb_annotation {
	char *key;
	char *value;
};
struct eb_annotations {
	struct eb_annotation *items;
	size_t n;
	size_t cap;
};

/* Add or replace key (both copied). */
void eb_annotations_set(struct eb_annotations *a, const char *key, const char *value);
/* Value for key, or NULL. */
const char *eb_annotations_get(const struct eb_annotations *a, const char *key);
void eb_annotations_copy(struct eb_annotations *dst, const struct eb_annotations *src);
void eb_annotations_release(struct eb_annotations *a);

/* A platform: os and architecture in GOOS/GOARCH terms, optional variant. */
struct eb_platform {
	char *os;
	char *architecture;
	char *variant; /* NULL when none */
};

/* Parse "os/arch[/variant]" ("linux/amd64", "linux/arm64", "linux/arm/v7").
 * Common aliases are normalised (x86_64 -> amd64, aarch64 -> arm64, armhf
 * -> arm/v7); "8" style variants become "v8". */
int eb_platform_parse(struct eb_platform *out, const char *s, struct eb_error **err);
/* "linux/arm64/v8"; caller frees. */
char *eb_platform_format(const struct eb_platform *p);
/* 1 when `have` satisfies `want`, treating a missing variant as the
 * architecture's default (arm64 = v8, arm = v7, amd64 = v1). */
int eb_platform_matches(const struct eb_platform *want, const struct eb_platform *have);
/* The platform an image is written for: the base's variant when the base
 * (NULL: scratch) has one for the same architecture, else linux/arm64
 * gets "v8" (as containerd normalises it and buildah writes it); other
 * platforms are left as they are. */
void eb_platform_for_image(struct eb_platform *p, const struct eb_platform *base);
void eb_platform_copy(struct eb_platform *dst, const struct eb_platform *src);
void eb_platform_release(struct eb_platform *p);

/* A content descriptor (descriptor.md).  urls, data and artifactType are
 * not kept. */
struct eb_descriptor {
	char *media_type;
	char *digest;
	int64_t size;
	struct eb_annotations annotations;
	struct eb_platform *platform; /* NULL when absent */
};

/* JSON object for d; new reference, or NULL when one of its strings is not
 * valid UTF-8 (jansson holds only UTF-8). */
json_t *eb_descriptor_to_json(const struct eb_descriptor *d);
/* Parse a descriptor object; `path` names it in error messages
 * ("manifests[1]"), `doc` names the document ("index"). */
int eb_descriptor_from_json(struct eb_descriptor *out, const json_t *j, const char *doc,
			    const char *path, struct eb_error **err);
void eb_descriptor_copy(struct eb_descriptor *dst, const struct eb_descriptor *src);
void eb_descriptor_release(struct eb_descriptor *d);

/* 1 for the image manifest media types (OCI, Docker v2) and the index
 * types (OCI index, Docker list). */
int eb_media_type_is_manifest(const char *media_type);
int eb_media_type_is_index(const char *media_type);

/* ---- canonical documents ---------------------------------------------- */

struct eb_doc {
	char *data; /* canonical JSON, NUL-terminated (not counted in len) */
	size_t len;
	char digest[EB_DIGEST_STR_LEN + 1];
};

/* Serialise j (object or array) canonically into out. */
void eb_doc_from_json(struct eb_doc *out, const json_t *j);
/* Descriptor (media type, digest, size; nothing else) for a document. */
void eb_doc_descriptor(struct eb_descriptor *out, const struct eb_doc *doc,
		       const char *media_type);
void eb_doc_release(struct eb_doc *doc);

/* ---- telling documents apart ------------------------------------------ */

enum eb_doc_kind {
	EB_DOC_MANIFEST = 1,
	EB_DOC_INDEX = 2,
};

/* Whether data is an image manifest or an index: by media_type when it is a
 * known one (a registry's Content-Type, a descriptor's mediaType), else by
 * the document's own mediaType, else by its shape ("manifests" vs
 * "config").  -EB_EINVALID for anything else. */
int eb_image_doc_kind(enum eb_doc_kind *out, const char *media_type, const void *data,
		      size_t len, struct eb_error **err);

/* ---- manifests ---------------------------------------------------------- */

struct eb_manifest {
	char *media_type; /* as written; EB_MEDIA_OCI_MANIFEST when absent */
	struct eb_descriptor config;
	struct eb_descriptor *layers;
	size_t n_layers;
	struct eb_annotations annotations;
};

/* Parse an OCI image manifest or a Docker schema 2 manifest.  The config
 * must be an image config (OCI or Docker type): artifacts are refused. */
int eb_manifest_parse(struct eb_manifest *out, const void *data, size_t len,
		      struct eb_error **err);
void eb_manifest_release(struct eb_manifest *m);

struct eb_manifest_settings {
	/* The base image's manifest, or NULL for "scratch".  Its layers come
	 * first, Docker media types turned into their OCI equivalents. */
	const struct eb_manifest *base;
	/* The base as the user named it; written fully qualified as
	 * org.opencontainers.image.base.name (NULL: no annotation). */
	const char *base_name;
	/* What base_name resolved to (org.opencontainers.image.base.digest). */
	const char *base_digest;
	/* The config blob (from eb_config_build); written with the OCI config
	 * media type. */
	const struct eb_descriptor *config;
	/* The layers added on top, in order. */
	const struct eb_descriptor *layers;
	size_t n_layers;
	/* Extra manifest annotations (ours win over none: there are no base
	 * manifest annotations to inherit). */
	const struct eb_kv *annotations;
	size_t n_annotations;
};

/* Build an OCI image manifest (schemaVersion 2, mediaType set). */
int eb_manifest_build(struct eb_doc *out, const struct eb_manifest_settings *s,
		      struct eb_error **err);

/* ---- indexes ------------------------------------------------------------ */

struct eb_index {
	char *media_type; /* as written; EB_MEDIA_OCI_INDEX when absent */
	struct eb_descriptor *manifests;
	size_t n_manifests;
	struct eb_annotations annotations;
};

/* Parse an OCI image index or a Docker manifest list. */
int eb_index_parse(struct eb_index *out, const void *data, size_t len, struct eb_error **err);
/* Pick the image manifest for `want`: the first entry of a manifest media
 * type whose platform matches.  *pos gets its position.  -EB_ENOTFOUND
 * (naming the platforms on offer) when there is none. */
int eb_index_select(const struct eb_index *idx, const struct eb_platform *want, size_t *pos,
		    struct eb_error **err);
/* Pick the only image of an index (attestation entries with os "unknown"
 * and other artifacts skipped); `what` names the index in errors, which
 * list the platforms on offer when there are several. */
int eb_index_select_only(const struct eb_index *idx, const char *what, size_t *pos,
			 struct eb_error **err);
void eb_index_release(struct eb_index *idx);

/* Build an OCI image index over image manifests, each of which must carry a
 * platform (no two the same). */
int eb_index_build(struct eb_doc *out, const struct eb_descriptor *manifests, size_t n,
		   const struct eb_kv *annotations, size_t n_annotations, struct eb_error **err);

/* ---- configs ------------------------------------------------------------ */

struct eb_config {
	struct eb_platform platform;
	char *created;     /* NULL when absent */
	char **env;        /* "NAME=value", NULL-terminated (never NULL) */
	size_t n_env;
	char **entrypoint; /* NULL-terminated; NULL when unset or null */
	size_t n_entrypoint;
	char **cmd;        /* likewise */
	size_t n_cmd;
	char *workdir;     /* NULL when unset */
	char *user;        /* NULL when unset */
	struct eb_annotations labels;
	char **diff_ids;   /* NULL-terminated (never NULL) */
	size_t n_diff_ids;
	size_t n_history;
	/* The whole document, so that building on it keeps what is not
	 * modelled above (ExposedPorts, Volumes, StopSignal, Healthcheck...). */
	json_t *json;
};

/* Parse an image config (OCI or Docker: the same format).  An unknown
 * rootfs.type is an error, as the spec requires. */
int eb_config_parse(struct eb_config *out, const void *data, size_t len, struct eb_error **err);
/* Value of an environment variable in the config, or NULL. */
const char *eb_config_getenv(const struct eb_config *c, const char *name);
void eb_config_release(struct eb_config *c);

/* The PATH a config without one gets (BuildKit's default). */
#define EB_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* "NAME=value" with value's $VAR, ${VAR}, ${VAR:-d}, ${VAR:+w} and \$
 * expanded (util/envexpand.h) as Docker's ENV does: against the entries
 * before it ("NAME=value", the last one of a name wins; NULL entries are
 * skipped), then the base's Env (base NULL: scratch), then for PATH
 * EB_DEFAULT_PATH.  Unset variables expand to "".  *out is the caller's. */
int eb_config_env_entry(const struct eb_config *base, const char *const *before, size_t n_before,
			const char *name, const char *value, char **out, struct eb_error **err);

/* One added layer, for rootfs.diff_ids and history. */
struct eb_config_layer {
	const char *diff_id;    /* sha256 of the uncompressed tar */
	const char *created_by; /* what it holds: "envbuild: files src/ -> /app/" */
	const char *comment;    /* optional */
};

struct eb_config_settings {
	const struct eb_platform *platform; /* required */
	/* SOURCE_DATE_EPOCH: `created` of the config and of new history
	 * entries (0 = 1970-01-01T00:00:00Z). */
	int64_t epoch;
	/* "NAME=value": replaces NAME where the base sets it (in the base's
	 * order), else appended in this order.  The base's other variables,
	 * PATH included, stay. */
	const char *const *env;
	size_t n_env;
	/* NULL = keep the base's.  Setting the entrypoint drops the base's cmd
	 * unless cmd is given too (Docker semantics).  An empty list clears. */
	const char *const *entrypoint;
	size_t n_entrypoint;
	const char *const *cmd;
	size_t n_cmd;
	const char *workdir; /* NULL = keep, "" = clear; else absolute */
	/* "8000/tcp": added to the base's ExposedPorts (EXPOSE) */
	const char *const *expose;
	size_t n_expose;
	const char *stopsignal; /* NULL = keep (STOPSIGNAL) */
	const char *user;    /* likewise */
	/* Merged into the base's labels; ours win. */
	const struct eb_kv *labels;
	size_t n_labels;
	const struct eb_config_layer *layers;
	size_t n_layers;
	/* history: one entry per layer above, then one empty_layer entry per
	 * kind of setting given (ENV, LABEL, WORKDIR, USER, ENTRYPOINT, CMD),
	 * as builders write them, so `podman history` shows what changed */
};

/* Build a config: the base's (NULL = scratch, an empty config) with s
 * applied.  The base must be for s->platform. */
int eb_config_build(struct eb_doc *out, const struct eb_config *base,
		    const struct eb_config_settings *s, struct eb_error **err);

/* RFC 3339 UTC time for a Unix epoch ("1970-01-01T00:00:00Z"); caller
 * frees.  -EB_EINVALID for negative times or years past 9999. */
int eb_image_time_format(char **out, int64_t epoch, struct eb_error **err);

#endif
