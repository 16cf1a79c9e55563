/*
 * yamljson.h - load YAML (and therefore JSON) into a jansson tree while
 * remembering where every key and value was written.
 *
 * jansson only knows positions for syntax errors, and it shares the
 * true/false/null singletons, so positions cannot hang off the json_t
 * itself.  Instead the document keeps a side table keyed by (parent
 * container, key or index): enough for every "file:line:col" a validator
 * needs.  Scalars are typed by the YAML 1.2 core schema (plain `3.11` is a
 * number, `"3.11"` a string); the raw text of each plain scalar is kept so a
 * validator can tell the user that `python: 3.10` was read as 3.1.
 *
 * Ownership: eb_yj_load() returns a document the caller frees with
 * eb_yj_free(); `root` belongs to the document (json_incref it to keep it).
 * Duplicate keys are reported into the diag list (rule EB004) and the later
 * value wins; syntax errors fail the load (rule EB001 via the error's
 * file:line:col).
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_YAMLJSON_H
#define EB_UTIL_YAMLJSON_H

#include <jansson.h>
#include <stddef.h>

#include "util/diag.h"
#include "util/error.h"

struct eb_yj_pos {
	unsigned line, col; /* 1-based */
	int plain;          /* value was an unquoted YAML scalar */
	const char *raw;    /* scalar text as written, or NULL for containers */
};

struct eb_yj_doc;

/* Parse `len` bytes of `text`; `file` names it in positions and findings.
 * The position of the root is looked up with parent NULL, key NULL. */
int eb_yj_load(struct eb_yj_doc **out, const char *file, const char *text, size_t len,
	       struct eb_diag_list *diags, struct eb_error **err);
/* The same for one document of a stream: *budget is the nodes the file
 * may still expand to (start at EB_YJ_MAX_NODES), reduced by what this
 * document took, so the 1M-node limit holds per file, not per document;
 * past it, an error as for one document (*budget 0). */
#define EB_YJ_MAX_NODES ((size_t)1000 * 1000)
int eb_yj_load_budget(struct eb_yj_doc **out, const char *file, const char *text, size_t len,
		      size_t *budget, struct eb_diag_list *diags, struct eb_error **err);
json_t *eb_yj_root(const struct eb_yj_doc *doc);
/* Position of the value at parent[key] (object) or parent[index] (array; key
 * NULL).  Returns the parent's own position when unknown, never NULL. */
const struct eb_yj_pos *eb_yj_value_pos(const struct eb_yj_doc *doc, const json_t *parent,
					 const char *key, size_t index);
/* Where a container node itself starts ("{" or its first key). */
const struct eb_yj_pos *eb_yj_node_pos(const struct eb_yj_doc *doc, const json_t *node);
/* Position of the key text itself of parent[key]. */
const struct eb_yj_pos *eb_yj_key_pos(const struct eb_yj_doc *doc, const json_t *parent,
				       const char *key);
void eb_yj_free(struct eb_yj_doc *doc);

#endif
