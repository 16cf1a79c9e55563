/*
 * spec_cache.c - `cache_from:` and `cache_to:` (see spec_internal.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "envspec/spec_internal.h"
#include "util/alloc.h"

static void one(const json_t *root, const char *key, struct eb_spec_str *out,
		const struct eb_yj_doc *doc, const char *file, struct eb_diag_list *diags)
{
	const json_t *v = json_object_get(root, key);
	const struct eb_yj_pos *p;

	if (!v)
		return;
	p = eb_yj_value_pos(doc, root, key, 0);
	if (!json_is_string(v)) {
		eb_diag_add(diags, EB_SEV_ERROR, file, p ? p->line : 0, p ? p->col : 0, "EB003",
			    "'%s' must be a string (a repository), not %s", key,
			    json_is_array(v) ? "a list" : json_is_object(v) ? "a mapping" : "a scalar");
		return;
	}
	if (!*json_string_value(v)) {
		eb_diag_add(diags, EB_SEV_ERROR, file, p ? p->line : 0, p ? p->col : 0, "EB011",
			    "'%s' must not be empty", key);
		return;
	}
	free(out->s);
	out->s = eb_xstrdup(json_string_value(v));
	if (p) {
		out->pos.line = p->line;
		out->pos.col = p->col;
	}
}

void eb_spec_cache_keys(struct eb_spec *spec, const json_t *root, const struct eb_yj_doc *doc,
			const char *file, struct eb_diag_list *diags)
{
	one(root, "cache_from", &spec->cache_from, doc, file, diags);
	one(root, "cache_to", &spec->cache_to, doc, file, diags);
}
