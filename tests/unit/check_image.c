/*
 * check_image.c - unit tests for oci/image: platforms, descriptors, parsing
 * of OCI and Docker manifests, indexes and configs, Docker-style config
 * merging, canonical bytes, and manifest/index building.
 */
#include "config.h"

#include <jansson.h>

#include "oci/image.h"
#include "testutil.h"
#include "util/alloc.h"
#include "util/digest.h"

#define DA "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DB "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define DC "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define DD "sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define DE "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

/* ---- fixtures ---------------------------------------------------------- */

static const char oci_manifest[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
	"\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"" DA
	"\",\"size\":1469},"
	"\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"" DB
	"\",\"size\":3370706},{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+zstd\","
	"\"digest\":\"" DC "\",\"size\":12,\"annotations\":{\"k\":\"v\"}}],"
	"\"annotations\":{\"org.opencontainers.image.created\":\"2024-01-01T00:00:00Z\"}}";

/* Docker schema 2, pretty-printed and with keys in Docker's order */
static const char docker_manifest[] =
	"{\n   \"schemaVersion\": 2,\n"
	"   \"mediaType\": \"application/vnd.docker.distribution.manifest.v2+json\",\n"
	"   \"config\": {\n      \"mediaType\": \"application/vnd.docker.container.image.v1+json\",\n"
	"      \"size\": 7023,\n      \"digest\": \"" DA "\"\n   },\n"
	"   \"layers\": [\n      {\n"
	"         \"mediaType\": \"application/vnd.docker.image.rootfs.diff.tar.gzip\",\n"
	"         \"size\": 32654,\n         \"digest\": \"" DB "\"\n      },\n      {\n"
	"         \"mediaType\": \"application/vnd.docker.image.rootfs.diff.tar.gzip\",\n"
	"         \"size\": 16724,\n         \"digest\": \"" DC "\"\n      }\n   ]\n}\n";

static const char oci_index[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\","
	"\"manifests\":["
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DA "\","
	"\"size\":1000,\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}},"
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DB "\","
	"\"size\":1001,\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":\"v6\"}},"
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DC "\","
	"\"size\":1002,\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":\"v7\"}},"
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DD "\","
	"\"size\":1003,\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\"}},"
	"{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DE "\","
	"\"size\":840,\"annotations\":{\"vnd.docker.reference.type\":\"attestation-manifest\"},"
	"\"platform\":{\"architecture\":\"unknown\",\"os\":\"unknown\"}}]}";

static const char docker_list[] =
	"{\"schemaVersion\":2,"
	"\"mediaType\":\"application/vnd.docker.distribution.manifest.list.v2+json\","
	"\"manifests\":["
	"{\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"digest\":\"" DA
	"\",\"size\":529,\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}},"
	"{\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"digest\":\"" DB
	"\",\"size\":529,\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\"}}]}";

/* A python:3.11-slim style config as Docker writes it: nulls, legacy keys. */
static const char base_config[] =
	"{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"2024-02-01T10:00:00Z\","
	"\"docker_version\":\"20.10.23\",\"container\":\"abc\","
	"\"container_config\":{\"Cmd\":[\"/bin/sh\",\"-c\",\"#(nop) CMD [\\\"python3\\\"]\"]},"
	"\"config\":{\"Env\":[\"PATH=/usr/local/bin:/usr/bin:/bin\",\"LANG=C.UTF-8\","
	"\"PYTHON_VERSION=3.11.8\"],\"Cmd\":[\"python3\"],\"Entrypoint\":null,"
	"\"WorkingDir\":\"\",\"Labels\":{\"a\":\"1\",\"b\":\"2\"},\"StopSignal\":\"SIGINT\","
	"\"ExposedPorts\":{\"8080/tcp\":{}}},"
	"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"" DA "\",\"" DB "\"]},"
	"\"history\":[{\"created\":\"2024-01-01T00:00:00Z\",\"created_by\":\"ADD rootfs\"},"
	"{\"created\":\"2024-01-02T00:00:00Z\",\"created_by\":\"ENV LANG=C.UTF-8\","
	"\"empty_layer\":true},"
	"{\"created\":\"2024-01-03T00:00:00Z\",\"created_by\":\"RUN install python\"}]}";

/* ---- helpers ----------------------------------------------------------- */

static struct eb_platform plat(const char *s)
{
	struct eb_platform p;
	struct eb_error *err = NULL;

	ck_assert_msg(eb_platform_parse(&p, s, &err) == 0, "parse %s", s);
	return p;
}

static void parse_config_ok(struct eb_config *c, const char *json)
{
	struct eb_error *err = NULL;
	int r = eb_config_parse(c, json, strlen(json), &err);

	ck_assert_msg(r == 0, "config parse: %s", err ? err->msg : "");
}

/* Run a parser that must fail; check the message mentions `want`. */
#define EXPECT_FAIL(call, code, want)                                                      \
	do {                                                                               \
		struct eb_error *err_ = NULL;                                              \
		int r_ = (call);                                                           \
		ck_assert_int_eq(r_, -(code));                                             \
		ck_assert_ptr_nonnull(err_);                                               \
		ck_assert_msg(strstr(err_->msg, (want)) != NULL, "message '%s' lacks '%s'", \
			      err_->msg, (want));                                          \
		eb_error_free(err_);                                                       \
	} while (0)

/* ---- platforms ---------------------------------------------------------- */

START_TEST(platform_parse_and_format)
{
	static const struct {
		const char *in, *os, *arch, *variant, *fmt;
	} ok[] = {
		{ "linux/amd64", "linux", "amd64", NULL, "linux/amd64" },
		{ "linux/arm64", "linux", "arm64", NULL, "linux/arm64" },
		{ "linux/arm64/v8", "linux", "arm64", "v8", "linux/arm64/v8" },
		{ "linux/arm/7", "linux", "arm", "v7", "linux/arm/v7" },
		{ "Linux/x86_64", "linux", "amd64", NULL, "linux/amd64" },
		{ "linux/aarch64", "linux", "arm64", NULL, "linux/arm64" },
		{ "linux/armhf", "linux", "arm", "v7", "linux/arm/v7" },
	};
	static const char *const bad[] = { "linux", "linux/", "/amd64", "a/b/c/d", "linux/am d64",
					   "" };
	struct eb_error *err = NULL;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct eb_platform p = plat(ok[i].in);
		char *f = eb_platform_format(&p);
		ck_assert_str_eq(p.os, ok[i].os);
		ck_assert_str_eq(p.architecture, ok[i].arch);
		if (ok[i].variant)
			ck_assert_str_eq(p.variant, ok[i].variant);
		else
			ck_assert_ptr_null(p.variant);
		ck_assert_str_eq(f, ok[i].fmt);
		free(f);
		eb_platform_release(&p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct eb_platform p;
		ck_assert_int_eq(eb_platform_parse(&p, bad[i], &err), -EB_EINVALID);
		ck_assert_ptr_nonnull(strstr(err->msg, "invalid platform"));
		eb_error_clear(&err);
		ck_assert_ptr_null(p.os);
	}
}
END_TEST

START_TEST(platform_matching)
{
	static const struct {
		const char *want, *os, *arch, *variant;
		int match;
	} cases[] = {
		{ "linux/arm64", "linux", "arm64", "v8", 1 },
		{ "linux/arm64", "linux", "arm64", NULL, 1 },
		{ "linux/arm64/v8", "linux", "arm64", NULL, 1 },
		{ "linux/arm64", "linux", "arm64", "v9", 0 },
		{ "linux/arm/v7", "linux", "arm", "v7", 1 },
		{ "linux/arm/v7", "linux", "arm", "v6", 0 },
		{ "linux/arm", "linux", "arm", NULL, 1 },
		{ "linux/arm", "linux", "arm", "v7", 1 },
		{ "linux/amd64", "linux", "amd64", NULL, 1 },
		{ "linux/amd64", "linux", "x86_64", NULL, 1 },
		{ "linux/amd64", "linux", "arm64", NULL, 0 },
		{ "linux/amd64", "windows", "amd64", NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eb_platform want = plat(cases[i].want);
		struct eb_platform have = { (char *)cases[i].os, (char *)cases[i].arch,
					    (char *)cases[i].variant };
		ck_assert_msg(eb_platform_matches(&want, &have) == cases[i].match,
			      "case %zu: %s vs %s/%s/%s", i, cases[i].want, cases[i].os,
			      cases[i].arch, cases[i].variant ? cases[i].variant : "-");
		eb_platform_release(&want);
	}
}
END_TEST

/* ---- descriptors ------------------------------------------------------- */

START_TEST(descriptor_round_trip)
{
	struct eb_descriptor d = { 0 }, back;
	struct eb_error *err = NULL;
	json_t *j;
	char *s;

	d.media_type = eb_xstrdup(EB_MEDIA_OCI_MANIFEST);
	d.digest = eb_xstrdup(DA);
	d.size = 42;
	eb_annotations_set(&d.annotations, "z", "last");
	eb_annotations_set(&d.annotations, "a", "first");
	eb_annotations_set(&d.annotations, "z", "replaced");
	d.platform = eb_xcalloc(1, sizeof(*d.platform));
	*d.platform = plat("linux/arm/v7");
	j = eb_descriptor_to_json(&d);
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	ck_assert_str_eq(s, "{\"annotations\":{\"a\":\"first\",\"z\":\"replaced\"},\"digest\":\"" DA
			    "\",\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
			    "\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":"
			    "\"v7\"},\"size\":42}");
	ck_assert_int_eq(eb_descriptor_from_json(&back, j, "test", "d", &err), 0);
	ck_assert_str_eq(back.digest, DA);
	ck_assert_int_eq(back.size, 42);
	ck_assert_str_eq(eb_annotations_get(&back.annotations, "z"), "replaced");
	ck_assert_str_eq(back.platform->variant, "v7");
	free(s);
	json_decref(j);
	eb_descriptor_release(&back);
	eb_descriptor_release(&d);
	eb_descriptor_release(&d); /* released twice: still safe */
}
END_TEST

static const struct {
	const char *json, *want;
} bad_descriptors[] = {
	{ "[]", "'x' must be an object" },
	{ "{\"digest\":\"" DA "\",\"size\":1}", "'x.mediaType' is missing" },
	{ "{\"mediaType\":\"nope\",\"digest\":\"" DA "\",\"size\":1}", "not a media type" },
	{ "{\"mediaType\":\"a/b\",\"digest\":\"sha256:abc\",\"size\":1}", "'x.digest'" },
	{ "{\"mediaType\":\"a/b\",\"digest\":\"SHA256:" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\",\"size\":1}", "'x.digest'" },
	{ "{\"mediaType\":\"a/b\",\"digest\":\"" DA "\",\"size\":-1}", "'x.size'" },
	{ "{\"mediaType\":\"a/b\",\"digest\":\"" DA "\",\"size\":\"1\"}", "'x.size'" },
	{ "{\"mediaType\":\"a/b\",\"digest\":\"" DA "\",\"size\":1,\"annotations\":{\"k\":1}}",
	  "'x.annotations.k' must be a string" },
	{ "{\"mediaType\":\"a/b\",\"digest\":\"" DA "\",\"size\":1,\"platform\":{\"os\":\"linux\"}}",
	  "'x.platform' needs 'os' and 'architecture'" },
};

START_TEST(descriptor_rejects_malformed)
{
	json_t *j = json_loads(bad_descriptors[_i].json, 0, NULL);
	struct eb_descriptor d;

	ck_assert_ptr_nonnull(j);
	EXPECT_FAIL(eb_descriptor_from_json(&d, j, "test", "x", &err_), EB_EINVALID,
		    bad_descriptors[_i].want);
	ck_assert_ptr_null(d.digest);
	json_decref(j);
}
END_TEST

/* ---- manifests ---------------------------------------------------------- */

START_TEST(manifest_parse_oci)
{
	struct eb_manifest m;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_manifest_parse(&m, oci_manifest, strlen(oci_manifest), &err), 0);
	ck_assert_str_eq(m.media_type, EB_MEDIA_OCI_MANIFEST);
	ck_assert_str_eq(m.config.media_type, EB_MEDIA_OCI_CONFIG);
	ck_assert_str_eq(m.config.digest, DA);
	ck_assert_int_eq(m.config.size, 1469);
	ck_assert_uint_eq(m.n_layers, 2);
	ck_assert_str_eq(m.layers[0].digest, DB);
	ck_assert_int_eq(m.layers[0].size, 3370706);
	ck_assert_str_eq(m.layers[1].media_type, EB_MEDIA_OCI_LAYER_ZSTD);
	ck_assert_str_eq(eb_annotations_get(&m.layers[1].annotations, "k"), "v");
	ck_assert_str_eq(eb_annotations_get(&m.annotations, "org.opencontainers.image.created"),
			 "2024-01-01T00:00:00Z");
	eb_manifest_release(&m);
}
END_TEST

START_TEST(manifest_parse_docker)
{
	struct eb_manifest m;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_manifest_parse(&m, docker_manifest, strlen(docker_manifest), &err), 0);
	ck_assert_str_eq(m.media_type, EB_MEDIA_DOCKER_MANIFEST);
	ck_assert_str_eq(m.config.media_type, EB_MEDIA_DOCKER_CONFIG);
	ck_assert_int_eq(m.config.size, 7023);
	ck_assert_uint_eq(m.n_layers, 2);
	ck_assert_str_eq(m.layers[1].media_type, EB_MEDIA_DOCKER_LAYER_GZIP);
	ck_assert_str_eq(m.layers[1].digest, DC);
	ck_assert_uint_eq(m.annotations.n, 0);
	eb_manifest_release(&m);

	/* mediaType is optional in OCI: a document without one is OCI */
	{
		const char *j = "{\"schemaVersion\":2,\"config\":{\"mediaType\":"
				"\"application/vnd.oci.image.config.v1+json\",\"digest\":\"" DA
				"\",\"size\":2},\"layers\":[]}";
		ck_assert_int_eq(eb_manifest_parse(&m, j, strlen(j), &err), 0);
		ck_assert_str_eq(m.media_type, EB_MEDIA_OCI_MANIFEST);
		ck_assert_uint_eq(m.n_layers, 0);
		eb_manifest_release(&m);
	}
}
END_TEST

#define CFG_OK "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\"," \
	       "\"digest\":\"" DA "\",\"size\":2}"

static const struct {
	const char *json, *want;
} bad_manifests[] = {
	{ "", "invalid manifest" },
	{ "{\"schemaVersion\":2,", "invalid manifest" },
	{ "[1,2]", "not a JSON object" },
	{ "{\"schemaVersion\":1,\"name\":\"x\",\"fsLayers\":[]}", "schema 1" },
	{ "{\"schemaVersion\":3," CFG_OK ",\"layers\":[]}", "'schemaVersion' is 3" },
	{ "{" CFG_OK ",\"layers\":[]}", "'schemaVersion' is missing" },
	{ "{\"schemaVersion\":2,\"layers\":[]}", "'config' is missing" },
	{ "{\"schemaVersion\":2," CFG_OK "}", "'layers' is missing" },
	{ "{\"schemaVersion\":2," CFG_OK ",\"layers\":{}}", "'layers' is missing or not an array" },
	{ "{\"schemaVersion\":2," CFG_OK ",\"layers\":[{\"mediaType\":\"a/b\",\"digest\":\"x\","
	  "\"size\":1}]}", "'layers[0].digest'" },
	{ "{\"schemaVersion\":2,\"mediaType\":"
	  "\"application/vnd.oci.image.index.v1+json\",\"manifests\":[]}", "got an image index" },
	{ "{\"schemaVersion\":2,\"manifests\":[]}", "got an image index" },
	{ "{\"schemaVersion\":2,\"mediaType\":\"text/plain\"," CFG_OK ",\"layers\":[]}",
	  "unsupported media type 'text/plain'" },
	{ "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json"
	  "\",\"digest\":\"" DA "\",\"size\":2},\"layers\":[]}", "not a container image" },
	{ "{\"schemaVersion\":2,\"schemaVersion\":2," CFG_OK ",\"layers\":[]}",
	  "duplicate object key" },
};

START_TEST(manifest_rejects_malformed)
{
	struct eb_manifest m;
	const char *j = bad_manifests[_i].json;

	EXPECT_FAIL(eb_manifest_parse(&m, j, strlen(j), &err_), EB_EINVALID, bad_manifests[_i].want);
	ck_assert_ptr_null(m.media_type);
	ck_assert_ptr_null(m.layers);
}
END_TEST

START_TEST(manifest_size_limit)
{
	/* a valid manifest whose annotation pushes it past 4 MiB */
	size_t pad = EB_IMAGE_DOC_MAX;
	char *big = eb_xmalloc(pad + 512);
	struct eb_manifest m;
	size_t n;

	n = (size_t)snprintf(big, 512, "{\"schemaVersion\":2," CFG_OK
			     ",\"layers\":[],\"annotations\":{\"pad\":\"");
	memset(big + n, 'x', pad);
	n += pad;
	memcpy(big + n, "\"}}", 3);
	n += 3;
	EXPECT_FAIL(eb_manifest_parse(&m, big, n, &err_), EB_ETOOBIG, "limit");
	EXPECT_FAIL(eb_index_parse(&(struct eb_index){ 0 }, big, n, &err_), EB_ETOOBIG, "limit");
	EXPECT_FAIL(eb_config_parse(&(struct eb_config){ 0 }, big, n, &err_), EB_ETOOBIG, "limit");
	free(big);
}
END_TEST

/* ---- indexes ------------------------------------------------------------- */

START_TEST(index_parse_and_select)
{
	static const struct {
		const char *want, *digest;
	} picks[] = {
		{ "linux/amd64", DA },   { "linux/arm64", DD }, { "linux/arm64/v8", DD },
		{ "linux/arm/v7", DC },  { "linux/arm", DC },   { "linux/arm/v6", DB },
		{ "linux/aarch64", DD },
	};
	struct eb_index idx;
	struct eb_error *err = NULL;
	struct eb_platform p;
	size_t pos;

	ck_assert_int_eq(eb_index_parse(&idx, oci_index, strlen(oci_index), &err), 0);
	ck_assert_str_eq(idx.media_type, EB_MEDIA_OCI_INDEX);
	ck_assert_uint_eq(idx.n_manifests, 5);
	for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		p = plat(picks[i].want);
		ck_assert_int_eq(eb_index_select(&idx, &p, &pos, &err), 0);
		ck_assert_msg(strcmp(idx.manifests[pos].digest, picks[i].digest) == 0, "%s",
			      picks[i].want);
		eb_platform_release(&p);
	}
	/* a platform not on offer: the message lists what is, without the
	 * attestation's unknown/unknown */
	p = plat("linux/s390x");
	ck_assert_int_eq(eb_index_select(&idx, &p, &pos, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(err->msg, "no image for platform 'linux/s390x' in the index (it has "
				   "linux/amd64, linux/arm/v6, linux/arm/v7, linux/arm64/v8)");
	eb_error_clear(&err);
	eb_platform_release(&p);
	eb_index_release(&idx);

	ck_assert_int_eq(eb_index_parse(&idx, docker_list, strlen(docker_list), &err), 0);
	ck_assert_str_eq(idx.media_type, EB_MEDIA_DOCKER_LIST);
	p = plat("linux/arm64/v8");
	ck_assert_int_eq(eb_index_select(&idx, &p, &pos, &err), 0);
	ck_assert_str_eq(idx.manifests[pos].digest, DB);
	ck_assert_str_eq(idx.manifests[pos].media_type, EB_MEDIA_DOCKER_MANIFEST);
	eb_platform_release(&p);
	eb_index_release(&idx);
}
END_TEST

START_TEST(index_rejects_malformed)
{
	struct eb_index idx;

	EXPECT_FAIL(eb_index_parse(&idx, oci_manifest, strlen(oci_manifest), &err_), EB_EINVALID,
		    "got an image manifest");
	EXPECT_FAIL(eb_index_parse(&idx, "{\"schemaVersion\":2}", 19, &err_), EB_EINVALID,
		    "'manifests' is missing");
	EXPECT_FAIL(eb_index_parse(&idx, "{\"schemaVersion\":2,\"manifests\":[{}]}", 36, &err_),
		    EB_EINVALID, "'manifests[0].mediaType'");
	ck_assert_ptr_null(idx.manifests);
}
END_TEST

START_TEST(doc_kind_detection)
{
	enum eb_doc_kind k;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_image_doc_kind(&k, NULL, oci_index, strlen(oci_index), &err), 0);
	ck_assert_int_eq(k, EB_DOC_INDEX);
	ck_assert_int_eq(eb_image_doc_kind(&k, NULL, docker_manifest, strlen(docker_manifest),
					   &err), 0);
	ck_assert_int_eq(k, EB_DOC_MANIFEST);
	/* a known media type decides without parsing */
	ck_assert_int_eq(eb_image_doc_kind(&k, EB_MEDIA_DOCKER_LIST, "", 0, &err), 0);
	ck_assert_int_eq(k, EB_DOC_INDEX);
	/* no mediaType anywhere: the shape decides */
	ck_assert_int_eq(eb_image_doc_kind(&k, "application/octet-stream",
					   "{\"schemaVersion\":2,\"manifests\":[]}", 34, &err), 0);
	ck_assert_int_eq(k, EB_DOC_INDEX);
	EXPECT_FAIL(eb_image_doc_kind(&k, NULL, "{\"a\":1}", 7, &err_), EB_EINVALID,
		    "neither an image manifest nor an image index");
}
END_TEST

/* ---- configs ------------------------------------------------------------ */

START_TEST(config_parse_docker)
{
	struct eb_config c;

	parse_config_ok(&c, base_config);
	ck_assert_str_eq(c.platform.os, "linux");
	ck_assert_str_eq(c.platform.architecture, "amd64");
	ck_assert_ptr_null(c.platform.variant);
	ck_assert_uint_eq(c.n_env, 3);
	ck_assert_str_eq(c.env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	ck_assert_ptr_null(c.env[3]);
	ck_assert_str_eq(eb_config_getenv(&c, "LANG"), "C.UTF-8");
	ck_assert_ptr_null(eb_config_getenv(&c, "LAN"));
	ck_assert_ptr_null(c.entrypoint); /* null */
	ck_assert_uint_eq(c.n_cmd, 1);
	ck_assert_str_eq(c.cmd[0], "python3");
	ck_assert_str_eq(c.workdir, "");
	ck_assert_str_eq(eb_annotations_get(&c.labels, "b"), "2");
	ck_assert_uint_eq(c.n_diff_ids, 2);
	ck_assert_str_eq(c.diff_ids[1], DB);
	ck_assert_uint_eq(c.n_history, 3);
	eb_config_release(&c);

	/* the smallest valid config; Entrypoint as a bare string (old Docker) */
	parse_config_ok(&c, "{\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\","
			    "\"config\":{\"Entrypoint\":\"/bin/sh\"},"
			    "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}");
	ck_assert_str_eq(c.platform.variant, "v8");
	ck_assert_uint_eq(c.n_entrypoint, 1);
	ck_assert_str_eq(c.entrypoint[0], "/bin/sh");
	ck_assert_uint_eq(c.n_env, 0);
	ck_assert_ptr_nonnull(c.env);
	eb_config_release(&c);
}
END_TEST

#define RFS "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}"

static const struct {
	const char *json, *want;
} bad_configs[] = {
	{ "{\"os\":\"linux\"," RFS "}", "'architecture' is missing" },
	{ "{\"architecture\":\"amd64\"," RFS "}", "'os' is missing" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\"}", "'rootfs' is missing" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"zfs\","
	  "\"diff_ids\":[]}}", "unknown rootfs type 'zfs'" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\"}}",
	  "'rootfs.diff_ids'" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\","
	  "\"diff_ids\":[\"md5:x\"]}}", "'rootfs.diff_ids[0]' is not a valid digest" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\"," RFS ",\"config\":{\"Env\":[1]}}",
	  "'config.Env' must be an array of strings" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\"," RFS ",\"config\":{\"Labels\":[]}}",
	  "'config.Labels' must be an object" },
	{ "{\"architecture\":\"amd64\",\"os\":\"linux\"," RFS ",\"history\":[1]}",
	  "'history[0]' must be an object" },
};

START_TEST(config_rejects_malformed)
{
	struct eb_config c;
	const char *j = bad_configs[_i].json;

	EXPECT_FAIL(eb_config_parse(&c, j, strlen(j), &err_), EB_EINVALID, bad_configs[_i].want);
	ck_assert_ptr_null(c.json);
}
END_TEST

static const struct eb_config_layer one_layer[] = {
	{ DC, "envbuild: files src/ -> /app/", NULL },
};

/* Build from base_config with s; return the parsed result. */
static void build_on_base(struct eb_config *out, struct eb_doc *doc,
			  const struct eb_config_settings *s)
{
	struct eb_config base;
	struct eb_error *err = NULL;
	int r;

	parse_config_ok(&base, base_config);
	r = eb_config_build(doc, &base, s, &err);
	ck_assert_msg(r == 0, "build: %s", err ? err->msg : "");
	parse_config_ok(out, doc->data);
	eb_config_release(&base);
}

START_TEST(config_env_override_keeps_path)
{
	static const char *const env[] = { "LANG=en_US.UTF-8", "APP_HOME=/app", "A=1", "A=2" };
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .env = env, .n_env = 4 };
	struct eb_config c;
	struct eb_doc doc;

	build_on_base(&c, &doc, &s);
	ck_assert_uint_eq(c.n_env, 5);
	/* base order kept, LANG replaced where it was, new names appended */
	ck_assert_str_eq(c.env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	ck_assert_str_eq(c.env[1], "LANG=en_US.UTF-8");
	ck_assert_str_eq(c.env[2], "PYTHON_VERSION=3.11.8");
	ck_assert_str_eq(c.env[3], "APP_HOME=/app");
	ck_assert_str_eq(c.env[4], "A=2");
	/* nothing else was asked for: cmd stays */
	ck_assert_str_eq(c.cmd[0], "python3");
	eb_config_release(&c);
	eb_doc_release(&doc);
	eb_platform_release(&p);

	{
		static const char *const bad_env[] = { "NOEQUALS" };
		struct eb_config base;
		parse_config_ok(&base, base_config);
		p = plat("linux/amd64");
		s = (struct eb_config_settings){ .platform = &p, .env = bad_env, .n_env = 1 };
		EXPECT_FAIL(eb_config_build(&doc, &base, &s, &err_), EB_EINVALID, "'NOEQUALS'");
		ck_assert_ptr_null(doc.data);
		eb_config_release(&base);
		eb_platform_release(&p);
	}
}
END_TEST

START_TEST(config_entrypoint_resets_cmd)
{
	static const char *const ep[] = { "/app/run", "--serve" };
	static const char *const cmd[] = { "--port", "80" };
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .entrypoint = ep, .n_entrypoint = 2 };
	struct eb_config c;
	struct eb_doc doc;

	build_on_base(&c, &doc, &s);
	ck_assert_uint_eq(c.n_entrypoint, 2);
	ck_assert_str_eq(c.entrypoint[1], "--serve");
	ck_assert_ptr_null(c.cmd);
	ck_assert_ptr_null(strstr(doc.data, "\"Cmd\""));
	eb_config_release(&c);
	eb_doc_release(&doc);

	/* with cmd given too, both are set */
	s.cmd = cmd;
	s.n_cmd = 2;
	build_on_base(&c, &doc, &s);
	ck_assert_str_eq(c.entrypoint[0], "/app/run");
	ck_assert_uint_eq(c.n_cmd, 2);
	ck_assert_str_eq(c.cmd[1], "80");
	eb_config_release(&c);
	eb_doc_release(&doc);

	/* cmd alone leaves the (null) entrypoint alone */
	s.entrypoint = NULL;
	s.n_entrypoint = 0;
	build_on_base(&c, &doc, &s);
	ck_assert_ptr_null(c.entrypoint);
	ck_assert_str_eq(c.cmd[0], "--port");
	eb_config_release(&c);
	eb_doc_release(&doc);
	eb_platform_release(&p);
}
END_TEST

START_TEST(config_labels_workdir_user)
{
	static const struct eb_kv labels[] = { { "b", "3" }, { "c", "4" } };
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .labels = labels, .n_labels = 2,
					.workdir = "/app", .user = "1000:1000" };
	struct eb_config c;
	struct eb_doc doc;

	build_on_base(&c, &doc, &s);
	ck_assert_uint_eq(c.labels.n, 3);
	ck_assert_str_eq(eb_annotations_get(&c.labels, "a"), "1");
	ck_assert_str_eq(eb_annotations_get(&c.labels, "b"), "3");
	ck_assert_str_eq(eb_annotations_get(&c.labels, "c"), "4");
	ck_assert_str_eq(c.workdir, "/app");
	ck_assert_str_eq(c.user, "1000:1000");
	/* what envbuild does not model survives; Docker's build leftovers do not */
	ck_assert_ptr_nonnull(strstr(doc.data, "\"ExposedPorts\":{\"8080/tcp\":{}}"));
	ck_assert_ptr_nonnull(strstr(doc.data, "\"StopSignal\":\"SIGINT\""));
	ck_assert_ptr_null(strstr(doc.data, "container_config"));
	ck_assert_ptr_null(strstr(doc.data, "docker_version"));
	eb_config_release(&c);
	eb_doc_release(&doc);

	/* a relative workdir is refused */
	{
		struct eb_config base;
		parse_config_ok(&base, base_config);
		s = (struct eb_config_settings){ .platform = &p, .workdir = "app" };
		EXPECT_FAIL(eb_config_build(&doc, &base, &s, &err_), EB_EINVALID, "not absolute");
		eb_config_release(&base);
	}
	eb_platform_release(&p);
}
END_TEST

START_TEST(config_history_and_diff_ids)
{
	static const struct eb_config_layer layers[] = {
		{ DC, "envbuild: python packages (12)", NULL },
		{ DD, "envbuild: files src/ -> /app/", "app code" },
	};
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .epoch = 1700000000, .layers = layers,
					.n_layers = 2 };
	struct eb_config c;
	struct eb_doc doc;
	json_t *j, *h;

	build_on_base(&c, &doc, &s);
	ck_assert_uint_eq(c.n_diff_ids, 4);
	ck_assert_str_eq(c.diff_ids[0], DA);
	ck_assert_str_eq(c.diff_ids[1], DB);
	ck_assert_str_eq(c.diff_ids[2], DC);
	ck_assert_str_eq(c.diff_ids[3], DD);
	ck_assert_uint_eq(c.n_history, 5);
	ck_assert_str_eq(c.created, "2023-11-14T22:13:20Z");
	j = json_loads(doc.data, 0, NULL);
	h = json_object_get(j, "history");
	/* the base's history is untouched, ours follows */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 0), "created_by")),
			 "ADD rootfs");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 3), "created_by")),
			 "envbuild: python packages (12)");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 3), "created")),
			 "2023-11-14T22:13:20Z");
	ck_assert_ptr_null(json_object_get(json_array_get(h, 3), "comment"));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 4), "comment")),
			 "app code");
	json_decref(j);
	eb_config_release(&c);
	eb_doc_release(&doc);
	eb_platform_release(&p);
}
END_TEST

/* Config changes get empty_layer history entries after the layers', as
 * builders write them (podman history shows ENV, USER, ...). */
START_TEST(config_history_of_settings)
{
	static const char *const env[] = { "A=1", "PATH=/opt/bin:/usr/bin" };
	static const char *const ep[] = { "python3", "-m", "app" };
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .epoch = 1700000000, .layers = one_layer,
					.n_layers = 1, .env = env, .n_env = 2, .entrypoint = ep,
					.n_entrypoint = 3, .user = "1000:1000", .workdir = "/app" };
	struct eb_config c;
	struct eb_doc doc;
	json_t *j, *h;
	static const char *const want[] = {
		"envbuild: files src/ -> /app/", "envbuild: ENV A=1 PATH=/opt/bin:/usr/bin",
		"envbuild: WORKDIR /app", "envbuild: USER 1000:1000",
		"envbuild: ENTRYPOINT [\"python3\",\"-m\",\"app\"]",
	};

	build_on_base(&c, &doc, &s);
	j = json_loads(doc.data, 0, NULL);
	h = json_object_get(j, "history");
	/* base: 3 entries (2 layers + 1 empty), then ours */
	ck_assert_uint_eq(json_array_size(h), 3 + 5);
	for (size_t i = 0; i < 5; i++) {
		json_t *e = json_array_get(h, 3 + i);
		ck_assert_str_eq(json_string_value(json_object_get(e, "created_by")), want[i]);
		ck_assert_str_eq(json_string_value(json_object_get(e, "created")),
				 "2023-11-14T22:13:20Z");
		ck_assert_int_eq(json_is_true(json_object_get(e, "empty_layer")), i > 0);
	}
	/* one non-empty entry per layer: base 2 + ours 1 */
	ck_assert_uint_eq(c.n_diff_ids, 3);
	json_decref(j);
	eb_config_release(&c);
	eb_doc_release(&doc);

	/* settings alone (no layer) still get their entries */
	s.layers = NULL;
	s.n_layers = 0;
	s.entrypoint = NULL;
	s.user = NULL;
	s.workdir = NULL;
	build_on_base(&c, &doc, &s);
	j = json_loads(doc.data, 0, NULL);
	h = json_object_get(j, "history");
	ck_assert_uint_eq(json_array_size(h), 3 + 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 3), "created_by")),
			 "envbuild: ENV A=1 PATH=/opt/bin:/usr/bin");
	json_decref(j);
	eb_config_release(&c);
	eb_doc_release(&doc);
	eb_platform_release(&p);
}
END_TEST

/* linux/arm64 images say variant v8; a base's own variant is kept */
START_TEST(platform_for_image)
{
	struct eb_platform p = plat("linux/arm64"), b = plat("linux/arm64/v9"), a = plat("linux/amd64");

	ck_assert_ptr_null(p.variant);
	eb_platform_for_image(&p, NULL);
	ck_assert_str_eq(p.variant, "v8");
	eb_platform_for_image(&p, &b);
	ck_assert_str_eq(p.variant, "v9");
	eb_platform_for_image(&a, NULL);
	ck_assert_ptr_null(a.variant);
	eb_platform_release(&p);
	eb_platform_release(&b);
	eb_platform_release(&a);
}
END_TEST

START_TEST(config_base_without_history_is_padded)
{
	const char *bj = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":"
			 "\"layers\",\"diff_ids\":[\"" DA "\",\"" DB "\"]}}";
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .layers = one_layer, .n_layers = 1 };
	struct eb_config base, c;
	struct eb_doc doc;
	struct eb_error *err = NULL;

	parse_config_ok(&base, bj);
	ck_assert_int_eq(eb_config_build(&doc, &base, &s, &err), 0);
	ck_assert_ptr_nonnull(strstr(doc.data, "\"history\":[{},{},{\"created\":"
					       "\"1970-01-01T00:00:00Z\",\"created_by\":"
					       "\"envbuild: files src/ -> /app/\"}]"));
	parse_config_ok(&c, doc.data);
	ck_assert_uint_eq(c.n_diff_ids, 3);
	eb_config_release(&c);
	eb_config_release(&base);
	eb_doc_release(&doc);
	eb_platform_release(&p);
}
END_TEST

START_TEST(config_scratch_and_platform)
{
	struct eb_platform p = plat("linux/arm64/v8");
	struct eb_config_settings s = { .platform = &p, .layers = one_layer, .n_layers = 1 };
	struct eb_doc doc;
	struct eb_error *err = NULL;
	struct eb_config base;

	ck_assert_int_eq(eb_config_build(&doc, NULL, &s, &err), 0);
	ck_assert_str_eq(doc.data,
			 "{\"architecture\":\"arm64\",\"config\":{},\"created\":"
			 "\"1970-01-01T00:00:00Z\",\"history\":[{\"created\":\"1970-01-01T00:00:00Z\","
			 "\"created_by\":\"envbuild: files src/ -> /app/\"}],\"os\":\"linux\","
			 "\"rootfs\":{\"diff_ids\":[\"" DC "\"],\"type\":\"layers\"},"
			 "\"variant\":\"v8\"}");
	eb_doc_release(&doc);

	/* the base must be for the platform asked */
	parse_config_ok(&base, base_config);
	EXPECT_FAIL(eb_config_build(&doc, &base, &s, &err_), EB_EINVALID,
		    "base image config is for 'linux/amd64', not 'linux/arm64/v8'");
	eb_config_release(&base);
	/* and epochs before 1970 are not times we write */
	s.epoch = -1;
	EXPECT_FAIL(eb_config_build(&doc, NULL, &s, &err_), EB_EINVALID, "out of range");
	eb_platform_release(&p);
}
END_TEST

START_TEST(canonical_bytes_are_stable)
{
	/* the same config with keys in another order and other whitespace */
	const char *a = "{\"os\":\"linux\",\"architecture\":\"amd64\",\"config\":{\"Env\":"
			"[\"PATH=/bin\"],\"Cmd\":[\"sh\"]},\"rootfs\":{\"diff_ids\":[\"" DA "\"],"
			"\"type\":\"layers\"}}";
	const char *b = "{ \"rootfs\" : { \"type\" : \"layers\", \"diff_ids\" : [ \"" DA "\" ] },\n"
			"  \"config\": {\"Cmd\": [\"sh\"], \"Env\": [\"PATH=/bin\"]},\n"
			"  \"architecture\": \"amd64\", \"os\": \"linux\" }\n";
	struct eb_platform p = plat("linux/amd64");
	struct eb_config_settings s = { .platform = &p, .epoch = 86400, .layers = one_layer,
					.n_layers = 1 };
	struct eb_config ca, cb;
	struct eb_doc da, db, da2;
	struct eb_error *err = NULL;
	char want[EB_DIGEST_STR_LEN + 1];
	json_t *j;
	char *again;

	parse_config_ok(&ca, a);
	parse_config_ok(&cb, b);
	ck_assert_int_eq(eb_config_build(&da, &ca, &s, &err), 0);
	ck_assert_int_eq(eb_config_build(&da2, &ca, &s, &err), 0);
	ck_assert_int_eq(eb_config_build(&db, &cb, &s, &err), 0);
	ck_assert_str_eq(da.digest, da2.digest);
	ck_assert_str_eq(da.digest, db.digest);
	ck_assert_str_eq(da.data, db.data);
	/* the digest is over exactly the bytes */
	eb_sha256_digest(da.data, da.len, want);
	ck_assert_str_eq(da.digest, want);
	ck_assert_uint_eq(da.len, strlen(da.data));
	/* sorted keys, no whitespace: re-serialising changes nothing */
	ck_assert_ptr_null(strchr(da.data, '\n'));
	ck_assert_ptr_null(strstr(da.data, "\": "));
	{
		static const char head[] = "{\"architecture\":\"amd64\",\"config\":{\"Cmd\":";
		ck_assert_int_eq(strncmp(da.data, head, sizeof(head) - 1), 0);
	}
	j = json_loads(da.data, 0, NULL);
	again = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	ck_assert_str_eq(again, da.data);
	ck_assert_ptr_nonnull(strstr(da.data, "\"created\":\"1970-01-02T00:00:00Z\""));
	free(again);
	json_decref(j);
	eb_doc_release(&da);
	eb_doc_release(&da2);
	eb_doc_release(&db);
	eb_config_release(&ca);
	eb_config_release(&cb);
	eb_platform_release(&p);
}
END_TEST

START_TEST(time_format)
{
	char *s = NULL;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_image_time_format(&s, 0, &err), 0);
	ck_assert_str_eq(s, "1970-01-01T00:00:00Z");
	free(s);
	ck_assert_int_eq(eb_image_time_format(&s, 1709251200, &err), 0); /* leap year */
	ck_assert_str_eq(s, "2024-03-01T00:00:00Z");
	free(s);
	ck_assert_int_eq(eb_image_time_format(&s, INT64_C(253402300800), &err), -EB_EINVALID);
	ck_assert_ptr_null(s);
	eb_error_free(err);
}
END_TEST

/* ---- building manifests and indexes ----------------------------------- */

static void desc_init(struct eb_descriptor *d, const char *mt, const char *digest, int64_t size)
{
	memset(d, 0, sizeof(*d));
	d->media_type = eb_xstrdup(mt);
	d->digest = eb_xstrdup(digest);
	d->size = size;
}

START_TEST(manifest_build_on_docker_base)
{
	struct eb_manifest base, m;
	struct eb_descriptor cfg, layer;
	struct eb_doc doc, doc2;
	struct eb_error *err = NULL;
	static const struct eb_kv extra[] = { { "org.opencontainers.image.source",
						"https://example.com/app" } };
	struct eb_manifest_settings s = { 0 };

	ck_assert_int_eq(eb_manifest_parse(&base, docker_manifest, strlen(docker_manifest), &err),
			 0);
	desc_init(&cfg, EB_MEDIA_DOCKER_CONFIG, DD, 1234);
	desc_init(&layer, EB_MEDIA_OCI_LAYER_GZIP, DE, 99);
	s.base = &base;
	s.base_name = "python:3.11-slim";
	s.base_digest = DA;
	s.config = &cfg;
	s.layers = &layer;
	s.n_layers = 1;
	s.annotations = extra;
	s.n_annotations = 1;
	ck_assert_int_eq(eb_manifest_build(&doc, &s, &err), 0);
	ck_assert_int_eq(eb_manifest_build(&doc2, &s, &err), 0);
	ck_assert_str_eq(doc.digest, doc2.digest);

	ck_assert_int_eq(eb_manifest_parse(&m, doc.data, doc.len, &err), 0);
	ck_assert_ptr_nonnull(strstr(doc.data, "\"schemaVersion\":2"));
	ck_assert_str_eq(m.media_type, EB_MEDIA_OCI_MANIFEST);
	ck_assert_str_eq(m.config.media_type, EB_MEDIA_OCI_CONFIG);
	ck_assert_str_eq(m.config.digest, DD);
	ck_assert_int_eq(m.config.size, 1234);
	ck_assert_uint_eq(m.n_layers, 3);
	/* Docker's gzip layers became OCI gzip layers; ours follow */
	ck_assert_str_eq(m.layers[0].media_type, EB_MEDIA_OCI_LAYER_GZIP);
	ck_assert_str_eq(m.layers[0].digest, DB);
	ck_assert_int_eq(m.layers[0].size, 32654);
	ck_assert_str_eq(m.layers[1].media_type, EB_MEDIA_OCI_LAYER_GZIP);
	ck_assert_str_eq(m.layers[2].digest, DE);
	ck_assert_str_eq(eb_annotations_get(&m.annotations, EB_ANNOT_BASE_NAME),
			 "docker.io/library/python:3.11-slim");
	ck_assert_str_eq(eb_annotations_get(&m.annotations, EB_ANNOT_BASE_DIGEST), DA);
	ck_assert_str_eq(eb_annotations_get(&m.annotations, "org.opencontainers.image.source"),
			 "https://example.com/app");
	ck_assert_ptr_null(strstr(doc.data, "vnd.docker"));
	eb_manifest_release(&m);
	eb_doc_release(&doc);
	eb_doc_release(&doc2);

	/* a layer type we cannot carry over is an error naming it */
	free(base.layers[1].media_type);
	base.layers[1].media_type = eb_xstrdup("application/vnd.docker.image.rootfs.foreign.diff"
					       ".tar.gzip");
	EXPECT_FAIL(eb_manifest_build(&doc, &s, &err_), EB_EINVALID,
		    "base layer 1 has unsupported media type");
	ck_assert_ptr_null(doc.data);

	eb_manifest_release(&base);
	eb_descriptor_release(&cfg);
	eb_descriptor_release(&layer);
}
END_TEST

START_TEST(manifest_build_scratch)
{
	struct eb_descriptor cfg, layer;
	struct eb_doc doc;
	struct eb_error *err = NULL;
	struct eb_manifest_settings s = { .base_name = "scratch" };

	desc_init(&cfg, EB_MEDIA_OCI_CONFIG, DD, 10);
	desc_init(&layer, EB_MEDIA_OCI_LAYER_ZSTD, DE, 20);
	s.config = &cfg;
	s.layers = &layer;
	s.n_layers = 1;
	ck_assert_int_eq(eb_manifest_build(&doc, &s, &err), 0);
	ck_assert_str_eq(doc.data,
			 "{\"config\":{\"digest\":\"" DD "\",\"mediaType\":"
			 "\"application/vnd.oci.image.config.v1+json\",\"size\":10},\"layers\":[{"
			 "\"digest\":\"" DE "\",\"mediaType\":"
			 "\"application/vnd.oci.image.layer.v1.tar+zstd\",\"size\":20}],"
			 "\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
			 "\"schemaVersion\":2}");
	eb_doc_release(&doc);
	/* no config: refused */
	s.config = NULL;
	EXPECT_FAIL(eb_manifest_build(&doc, &s, &err_), EB_EINVALID, "config");
	eb_descriptor_release(&cfg);
	eb_descriptor_release(&layer);
}
END_TEST

START_TEST(index_build_platforms)
{
	struct eb_descriptor m[3];
	struct eb_doc doc;
	struct eb_index idx;
	struct eb_error *err = NULL;
	struct eb_platform want = plat("linux/arm64");
	size_t pos;

	desc_init(&m[0], EB_MEDIA_OCI_MANIFEST, DA, 500);
	desc_init(&m[1], EB_MEDIA_OCI_MANIFEST, DB, 501);
	desc_init(&m[2], EB_MEDIA_OCI_MANIFEST, DC, 502);
	m[0].platform = eb_xcalloc(1, sizeof(struct eb_platform));
	*m[0].platform = plat("linux/amd64");
	m[1].platform = eb_xcalloc(1, sizeof(struct eb_platform));
	*m[1].platform = plat("linux/arm64/v8");
	ck_assert_int_eq(eb_index_build(&doc, m, 2, NULL, 0, &err), 0);
	ck_assert_int_eq(eb_index_parse(&idx, doc.data, doc.len, &err), 0);
	ck_assert_str_eq(idx.media_type, EB_MEDIA_OCI_INDEX);
	ck_assert_uint_eq(idx.n_manifests, 2);
	ck_assert_int_eq(eb_index_select(&idx, &want, &pos, &err), 0);
	ck_assert_str_eq(idx.manifests[pos].digest, DB);
	ck_assert_str_eq(idx.manifests[pos].platform->variant, "v8");
	eb_index_release(&idx);
	eb_doc_release(&doc);

	/* an entry without a platform, or the same platform twice, is refused */
	EXPECT_FAIL(eb_index_build(&doc, m, 3, NULL, 0, &err_), EB_EINVALID, "has no platform");
	m[2].platform = eb_xcalloc(1, sizeof(struct eb_platform));
	*m[2].platform = plat("linux/arm64");
	EXPECT_FAIL(eb_index_build(&doc, m, 3, NULL, 0, &err_), EB_EINVALID,
		    "platform 'linux/arm64' is in the index twice");
	for (int i = 0; i < 3; i++)
		eb_descriptor_release(&m[i]);
	eb_platform_release(&want);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("image");
	TCase *tc = tcase_create("image");

	tcase_add_test(tc, platform_parse_and_format);
	tcase_add_test(tc, platform_matching);
	tcase_add_test(tc, descriptor_round_trip);
	tcase_add_loop_test(tc, descriptor_rejects_malformed, 0,
			    sizeof(bad_descriptors) / sizeof(bad_descriptors[0]));
	tcase_add_test(tc, manifest_parse_oci);
	tcase_add_test(tc, manifest_parse_docker);
	tcase_add_loop_test(tc, manifest_rejects_malformed, 0,
			    sizeof(bad_manifests) / sizeof(bad_manifests[0]));
	tcase_add_test(tc, manifest_size_limit);
	tcase_add_test(tc, index_parse_and_select);
	tcase_add_test(tc, index_rejects_malformed);
	tcase_add_test(tc, doc_kind_detection);
	tcase_add_test(tc, config_parse_docker);
	tcase_add_loop_test(tc, config_rejects_malformed, 0,
			    sizeof(bad_configs) / sizeof(bad_configs[0]));
	tcase_add_test(tc, config_env_override_keeps_path);
	tcase_add_test(tc, config_entrypoint_resets_cmd);
	tcase_add_test(tc, config_labels_workdir_user);
	tcase_add_test(tc, config_history_and_diff_ids);
	tcase_add_test(tc, config_base_without_history_is_padded);
	tcase_add_test(tc, config_history_of_settings);
	tcase_add_test(tc, platform_for_image);
	tcase_add_test(tc, config_scratch_and_platform);
	tcase_add_test(tc, canonical_bytes_are_stable);
	tcase_add_test(tc, time_format);
	tcase_add_test(tc, manifest_build_on_docker_base);
	tcase_add_test(tc, manifest_build_scratch);
	tcase_add_test(tc, index_build_platforms);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
