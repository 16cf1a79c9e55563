/*
 * toml.h - a TOML 1.0 reader that yields a jansson tree and the line and
 * column of every key and value (Debian 12 packages no C TOML library).
 *
 * The tree is JSON-like: tables are objects, arrays are arrays, strings,
 * integers (int64), floats and booleans are the matching JSON values.  What
 * JSON has no type for is kept as a string and typed in the side table:
 * date-times (as written) and the floats inf, +inf, -inf, nan, +nan, -nan.
 * As in yamljson.h, positions cannot hang off the json_t (jansson shares
 * true/false), so the document keeps a side table keyed by (parent, key or
 * index), hashed: lock files hold tens of thousands of values.
 *
 * Strict TOML 1.0 (toml.io/en/v1.0.0): valid UTF-8, no duplicate keys, no
 * table defined twice, inline tables and static arrays closed to later
 * additions, seconds required in times.  Deviations, documented: a UTF-8
 * byte order mark at the start is skipped (editors on Windows write one);
 * keys containing U+0000 are refused; newlines inside multi-line strings
 * read as "\n".
 *
 * Uses: jansson and util/ only.  Never reads files or prints.
 * Ownership: eb_toml_load() returns a document the caller frees with
 * eb_toml_free(); the root and every position belong to the document.
 * Errors: a syntax or semantic error fails the load with EB_EINVALID and
 * the error's file:line:col; nothing is partially returned.
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_TOML_H
#define EB_UTIL_TOML_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

enum eb_toml_type {
	EB_TOML_TABLE = 1,
	EB_TOML_ARRAY,
	EB_TOML_STRING,
	EB_TOML_INTEGER,
	EB_TOML_FLOAT,          /* a json real, or a string for inf/nan */
	EB_TOML_BOOL,
	EB_TOML_DATETIME,       /* offset date-time, a string as written */
	EB_TOML_DATETIME_LOCAL, /* local date-time */
	EB_TOML_DATE_LOCAL,     /* local date */
	EB_TOML_TIME_LOCAL,     /* local time */
};

struct eb_toml_pos {
	unsigned line, col;     /* 1-based, bytes; of the value's first character
				 * (a string's opening quote) */
	unsigned key_line, key_col; /* of the key part naming it; 0 for array
				     * elements and the root */
	enum eb_toml_type type;
};

struct eb_toml_doc;

/* Parse len bytes of text; `file` names it in errors. */
int eb_toml_load(struct eb_toml_doc **out, const char *file, const char *text, size_t len,
		 struct eb_error **err);
json_t *eb_toml_root(const struct eb_toml_doc *doc);
/* Position of parent[key] (object) or parent[index] (array, key NULL); NULL
 * when there is no such value. */
const struct eb_toml_pos *eb_toml_value_pos(const struct eb_toml_doc *doc, const json_t *parent,
					    const char *key, size_t index);
/* Position of a table or array node itself (where it was first named); NULL
 * for scalars and unknown nodes. */
const struct eb_toml_pos *eb_toml_node_pos(const struct eb_toml_doc *doc, const json_t *node);
/* A tagged JSON rendering for tests: {"type": "integer", "value": "1"} for
 * every scalar, as toml-test writes its expectations; caller decrefs. */
json_t *eb_toml_tagged(const struct eb_toml_doc *doc);
void eb_toml_free(struct eb_toml_doc *doc);

#endif
