/*
 * sbom.c - CycloneDX 1.6 and SPDX 2.3 JSON from the component list.  Both
 * documents are built as jansson trees and dumped with sorted keys, so
 * the bytes depend on the inputs alone.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "trust/sbom.h"
#include "util/alloc.h"
#include "util/digest.h"

static const char *const kind_names[] = { "deb", "pypi" };

/* purl percent-encoding: everything but the unreserved characters */
static void purl_put(struct eb_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_' || c == '~')
			eb_buf_putc(b, (char)c);
		else
			eb_buf_putf(b, "%%%02X", c);
	}
}

char *eb_sbom_purl(const struct eb_sbom_component *c)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	if (c->kind == EB_SBOM_DEB) {
		eb_buf_puts(&b, "pkg:deb/debian/");
		purl_put(&b, c->name);
	} else {
		/* the purl spec's pypi names: lowercase, '_' as '-' */
		eb_buf_puts(&b, "pkg:pypi/");
		for (const char *p = c->name; *p; p++) {
			char ch = *p == '_' || *p == '.' ? '-' : *p;
			char one[2] = { ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch, 0 };
			purl_put(&b, one);
		}
	}
	eb_buf_putc(&b, '@');
	purl_put(&b, c->version);
	if (c->kind == EB_SBOM_DEB && c->arch) {
		eb_buf_puts(&b, "?arch=");
		purl_put(&b, c->arch);
	}
	return eb_buf_detach(&b, NULL);
}

/* pkg:oci/<last name component>@<digest>?arch=..&repository_url=.. */
static char *oci_purl(const char *repository, const char *digest, const char *platform)
{
	const char *slash = strrchr(repository, '/');
	const char *arch = platform ? strchr(platform, '/') : NULL;
	struct eb_buf b;
	char *at;
	char *repo = eb_xstrdup(repository);

	/* a reference with a tag or digest: the repository is before them */
	if ((at = strchr(repo, '@')))
		*at = '\0';
	slash = strrchr(repo, '/');
	{
		char *colon = strrchr(slash ? slash : repo, ':');
		if (colon)
			*colon = '\0';
	}
	slash = strrchr(repo, '/');
	eb_buf_init(&b, 0);
	eb_buf_puts(&b, "pkg:oci/");
	purl_put(&b, slash ? slash + 1 : repo);
	eb_buf_putc(&b, '@');
	purl_put(&b, digest);
	eb_buf_puts(&b, "?");
	if (arch) {
		eb_buf_puts(&b, "arch=");
		purl_put(&b, arch + 1);
		eb_buf_puts(&b, "&");
	}
	eb_buf_puts(&b, "repository_url=");
	purl_put(&b, repo);
	free(repo);
	return eb_buf_detach(&b, NULL);
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_component(const void *pa, const void *pb)
{
	const struct eb_sbom_component *a = *(const struct eb_sbom_component *const *)pa;
	const struct eb_sbom_component *b = *(const struct eb_sbom_component *const *)pb;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((c = cmp_str(a->name, b->name)) || (c = cmp_str(a->version, b->version)) ||
	    (c = cmp_str(a->arch, b->arch)) || (c = cmp_str(a->origin, b->origin)))
		return c;
	return cmp_str(a->sha256, b->sha256);
}

static const struct eb_sbom_component **sorted(const struct eb_sbom_image *img)
{
	const struct eb_sbom_component **v = eb_xcalloc(img->ncomponents + 1, sizeof(*v));

	for (size_t i = 0; i < img->ncomponents; i++)
		v[i] = &img->components[i];
	eb_sort(v, img->ncomponents, sizeof(*v), cmp_component);
	return v;
}

/* A name-based (version 5) UUID of the manifest digest in the URL
 * namespace: the same image always gets the same serial number. */
static void uuid5(char out[37], const char *name)
{
	static const unsigned char ns_url[16] = { 0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
						  0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8 };
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	memset(md, 0, sizeof(md));
	if (ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1) {
		EVP_DigestUpdate(ctx, ns_url, sizeof(ns_url));
		EVP_DigestUpdate(ctx, name, strlen(name));
		EVP_DigestFinal_ex(ctx, md, &mdlen);
	}
	EVP_MD_CTX_free(ctx);
	md[6] = (unsigned char)((md[6] & 0x0f) | 0x50);
	md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", md[0],
		 md[1], md[2], md[3], md[4], md[5], md[6], md[7], md[8], md[9], md[10], md[11],
		 md[12], md[13], md[14], md[15]);
}

static void dump(struct eb_buf *out, json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);

	eb_buf_puts(out, s);
	eb_buf_putc(out, '\n');
	free(s);
	json_decref(doc);
}

static const char *hex_of(const char *digest)
{
	const char *h = digest ? eb_digest_hex(digest) : NULL;
	return h && *h ? h : NULL;
}

void eb_sbom_cyclonedx(struct eb_buf *out, const struct eb_sbom_image *img)
{
	const struct eb_sbom_component **v = sorted(img);
	json_t *doc, *meta, *comps = json_array(), *deps = json_array(), *top_deps = json_array();
	char *purl = oci_purl(img->repository, img->digest, img->platform);
	char serial[48] = "urn:uuid:";
	char *image_ref = eb_xasprintf("image:%s", img->digest);

	uuid5(serial + 9, img->digest);
	meta = json_pack("{s:{s:[{s:s, s:s, s:s}]}, s:{s:s, s:s, s:s, s:s, s:s, s:[{s:s, s:s}, {s:s, s:s}]}}",
			 "tools", "components", "type", "application", "name", "envbuild", "version",
			 PACKAGE_VERSION, "component", "type", "container", "bom-ref", image_ref,
			 "name", img->repository, "version", img->digest, "purl", purl, "properties",
			 "name", "envbuild:target", "value", img->target, "name", "envbuild:platform",
			 "value", img->platform);
	if (img->created)
		json_object_set_new(meta, "timestamp", json_string(img->created));
	free(purl);
	if (img->base_ref && img->base_digest && *img->base_digest) {
		char *bp = oci_purl(img->base_ref, img->base_digest, img->platform);
		json_array_append_new(comps, json_pack("{s:s, s:s, s:s, s:s, s:s, s:[{s:s, s:s}]}",
						       "type", "container", "bom-ref", "base", "name",
						       img->base_ref, "version", img->base_digest,
						       "purl", bp, "properties", "name",
						       "envbuild:origin", "value", "base-image"));
		json_array_append_new(top_deps, json_string("base"));
		free(bp);
	}
	for (size_t i = 0; i < img->ncomponents; i++) {
		const struct eb_sbom_component *c = v[i];
		char *p = eb_sbom_purl(c);
		char *ref = eb_xasprintf("%s:%s", c->origin, p);
		json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[{s:s, s:s}]}", "type", "library",
				      "bom-ref", ref, "name", c->name, "version", c->version, "purl",
				      p, "properties", "name", "envbuild:origin", "value", c->origin);
		if (hex_of(c->sha256))
			json_object_set_new(j, "hashes", json_pack("[{s:s, s:s}]", "alg", "SHA-256",
								   "content", hex_of(c->sha256)));
		if (c->url)
			json_object_set_new(j, "externalReferences",
					    json_pack("[{s:s, s:s}]", "type", "distribution", "url",
						      c->url));
		if (c->license)
			json_object_set_new(j, "licenses",
					    json_pack("[{s:{s:s}}]", "license", "name", c->license));
		json_array_append_new(comps, j);
		json_array_append_new(top_deps, json_string(ref));
		free(ref);
		free(p);
	}
	json_array_append_new(deps, json_pack("{s:s, s:o}", "ref", image_ref, "dependsOn", top_deps));
	doc = json_pack("{s:s, s:s, s:s, s:i, s:o, s:o, s:o}", "bomFormat", "CycloneDX",
			"specVersion", "1.6", "serialNumber", serial, "version", 1, "metadata", meta,
			"components", comps, "dependencies", deps);
	dump(out, doc);
	free(image_ref);
	free(v);
}

static json_t *spdx_package(const char *id, const char *name, const char *version,
			    const char *purl, const char *sha256, const char *url,
			    const char *license, const char *purpose, const char *comment)
{
	json_t *p = json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}",
			      "SPDXID", id, "name", name, "versionInfo", version,
			      "downloadLocation", url ? url : "NOASSERTION", "filesAnalyzed", 0,
			      "primaryPackagePurpose", purpose, "licenseConcluded", "NOASSERTION",
			      "licenseDeclared", "NOASSERTION",
			      "copyrightText", "NOASSERTION", "externalRefs", "referenceCategory",
			      "PACKAGE-MANAGER", "referenceType", "purl", "referenceLocator", purl);
	if (hex_of(sha256))
		json_object_set_new(p, "checksums", json_pack("[{s:s, s:s}]", "algorithm", "SHA256",
							      "checksumValue", hex_of(sha256)));
	/* the metadata's words, not an SPDX expression we could vouch for */
	if (license)
		json_object_set_new(p, "licenseComments",
				    json_sprintf("The metadata states: %s", license));
	if (comment)
		json_object_set_new(p, "comment", json_string(comment));
	return p;
}

static json_t *relationship(const char *a, const char *type, const char *b)
{
	return json_pack("{s:s, s:s, s:s}", "spdxElementId", a, "relationshipType", type,
			 "relatedSpdxElement", b);
}

void eb_sbom_spdx(struct eb_buf *out, const struct eb_sbom_image *img)
{
	const struct eb_sbom_component **v = sorted(img);
	json_t *pkgs = json_array(), *rels = json_array(), *doc;
	char *purl = oci_purl(img->repository, img->digest, img->platform);
	char *name = eb_xasprintf("%s@%s", img->repository, img->digest);
	char *comment = eb_xasprintf("envbuild target %s, platform %s", img->target, img->platform);
	char uuid[37];
	char *ns;

	uuid5(uuid, img->digest);
	ns = eb_xasprintf("urn:uuid:%s", uuid);
	json_array_append_new(pkgs, spdx_package("SPDXRef-Image", img->repository, img->digest, purl,
						 img->digest, NULL, NULL, "CONTAINER", comment));
	json_array_append_new(rels, relationship("SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Image"));
	free(purl);
	if (img->base_ref && img->base_digest && *img->base_digest) {
		char *bp = oci_purl(img->base_ref, img->base_digest, img->platform);
		json_array_append_new(pkgs, spdx_package("SPDXRef-Base", img->base_ref,
							 img->base_digest, bp, img->base_digest,
							 NULL, NULL, "CONTAINER", "the base image"));
		json_array_append_new(rels, relationship("SPDXRef-Image", "DESCENDANT_OF",
							 "SPDXRef-Base"));
		free(bp);
	}
	for (size_t i = 0; i < img->ncomponents; i++) {
		const struct eb_sbom_component *c = v[i];
		char *p = eb_sbom_purl(c);
		char *id = eb_xasprintf("SPDXRef-%s-%s-%zu", kind_names[c->kind], c->origin, i + 1);
		char *cm = eb_xasprintf("envbuild:origin %s", c->origin);
		json_array_append_new(pkgs, spdx_package(id, c->name, c->version, p, c->sha256, c->url,
							 c->license, c->kind == EB_SBOM_DEB ? "INSTALL" : "LIBRARY",
							 cm));
		json_array_append_new(rels, relationship("SPDXRef-Image", "CONTAINS", id));
		free(cm);
		free(id);
		free(p);
	}
	doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:[s]}, s:o, s:o}", "spdxVersion",
			"SPDX-2.3", "dataLicense", "CC0-1.0", "SPDXID", "SPDXRef-DOCUMENT", "name",
			name, "documentNamespace", ns, "creationInfo", "created",
			img->created ? img->created : "1970-01-01T00:00:00Z", "creators",
			"Tool: envbuild-" PACKAGE_VERSION, "packages", pkgs, "relationships", rels);
	dump(out, doc);
	free(ns);
	free(comment);
	free(name);
	free(v);
}
