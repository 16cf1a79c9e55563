/*
 * provenance.c - the SLSA v1 provenance statement.  Built field by field
 * from the struct: there is no way for an environment value to get in.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "trust/provenance.h"
#include "util/alloc.h"

char *eb_provenance_clean_uri(const char *uri)
{
	const char *scheme = strstr(uri, "://");
	const char *host, *at, *slash;

	if (!scheme)
		return eb_xstrdup(uri);
	host = scheme + 3;
	slash = strchr(host, '/');
	at = strchr(host, '@');
	if (!at || (slash && at > slash))
		return eb_xstrdup(uri);
	return eb_xasprintf("%.*s%s", (int)(host - uri), uri, at + 1);
}

static json_t *digest_set(const char *digest)
{
	const char *colon = digest ? strchr(digest, ':') : NULL;

	if (!colon || strncmp(digest, "sha256:", 7) != 0)
		return json_object();
	return json_pack("{s:s}", "sha256", colon + 1);
}

void eb_provenance_statement(struct eb_buf *out, const struct eb_provenance *p)
{
	json_t *ext, *deps = json_array(), *doc;
	char *s;

	ext = json_pack("{s:s, s:s, s:s}", "spec", p->spec_path, "target", p->target, "platform",
			p->platform);
	if (p->commit || p->source_uri) {
		json_t *src = json_object();
		if (p->source_uri) {
			char *u = eb_provenance_clean_uri(p->source_uri);
			char *g = eb_xasprintf("git+%s", u);
			json_object_set_new(src, "uri", json_string(g));
			free(g);
			free(u);
		}
		if (p->commit)
			json_object_set_new(src, "digest", json_pack("{s:s}", "gitCommit", p->commit));
		json_object_set_new(ext, "source", src);
	}
	for (size_t i = 0; i < p->ndeps; i++) {
		const struct eb_prov_dep *d = &p->deps[i];
		json_t *j = json_pack("{s:s, s:o}", "name", d->name, "digest", digest_set(d->digest));
		if (d->uri) {
			char *u = eb_provenance_clean_uri(d->uri);
			json_object_set_new(j, "uri", json_string(u));
			free(u);
		}
		json_array_append_new(deps, j);
	}
	if (p->lock_digest)
		json_array_append_new(deps, json_pack("{s:s, s:o}", "name", "envbuild.lock", "digest",
						      digest_set(p->lock_digest)));
	doc = json_pack("{s:s, s:[{s:s, s:o}], s:s, s:{s:{s:s, s:o, s:{}, s:o}, s:{s:{s:s, s:{s:s}}, s:{}}}}",
			"_type", EB_INTOTO_STATEMENT_TYPE, "subject", "name", p->subject_name,
			"digest", digest_set(p->subject_digest), "predicateType",
			EB_SLSA_PREDICATE_TYPE, "predicate", "buildDefinition", "buildType",
			EB_PROVENANCE_BUILD_TYPE, "externalParameters", ext, "internalParameters",
			"resolvedDependencies", deps, "runDetails", "builder", "id",
			EB_PROVENANCE_BUILDER_ID, "version", "envbuild", PACKAGE_VERSION,
			"metadata");
	s = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	eb_buf_puts(out, s);
	free(s);
	json_decref(doc);
}
