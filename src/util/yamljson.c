/*
 * yamljson.c - libyaml events to a jansson tree plus a position side table.
 *
 * Positions hang off a side table (nodetab.h), found by (parent, key or
 * index) and by node; the key and value positions are kept by entry id.
 *
 * Untrusted input is bounded: nesting depth (MAX_DEPTH) and the number of
 * nodes the document expands to (MAX_NODES), which is what stops an alias
 * bomb (a few hundred bytes of `&a [*b, *b, ...]` that doubles per level).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/yamljson.h"
#include "util/alloc.h"
#include "util/interrupt.h"
#include "util/nodetab.h"

#define MAX_DEPTH 128
/* Nodes a document may expand to, aliases counted at their full size: far
 * above any real spec (a 300k-key env mapping is 300k nodes), far below
 * what would exhaust memory. */
#define MAX_NODES (1000u * 1000)

/* What the side table keeps for each entry (nodetab.h), by entry id. */
struct ypos {
	struct eb_yj_pos kpos;
	struct eb_yj_pos vpos;
};

struct eb_yj_doc {
	char *file;
	json_t *root;
	struct eb_nodetab tab;
	struct ypos *pos; /* by entry id */
	size_t poscap;
	struct anchor {
		char *name;
		json_t *node;
		size_t nodes; /* nodes the anchored value expands to */
	} *anchors;
	size_t nanchors, capanchors;
	struct eb_yj_pos none;
	json_t *replaced; /* values overwritten by duplicate keys, kept alive so
			   * no entry points at freed memory */
};

struct loader {
	struct eb_yj_doc *doc;
	yaml_parser_t parser;
	struct eb_diag_list *diags;
	struct eb_error **err;
	size_t nodes; /* expanded so far, aliases at their full size */
	size_t max;   /* MAX_NODES, or what is left of a file's budget */
};

static void pos_from_mark(struct eb_yj_pos *p, const yaml_mark_t *m)
{
	p->line = (unsigned)m->line + 1;
	p->col = (unsigned)m->column + 1;
}

static int syntax_error(struct loader *ld)
{
	yaml_parser_t *p = &ld->parser;
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->mark;
	const char *problem = p->problem ? p->problem : "syntax error";

	if (p->error == YAML_MEMORY_ERROR)
		return eb_error_set(ld->err, EB_EFAIL, "out of memory parsing '%s'", ld->doc->file);
	if (p->context)
		return eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, (unsigned)m->line + 1,
				       (unsigned)m->column + 1, "%s %s", problem, p->context);
	return eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, (unsigned)m->line + 1,
			       (unsigned)m->column + 1, "%s", problem);
}

static int next(struct loader *ld, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&ld->parser, ev))
		return syntax_error(ld);
	return 0;
}

static int match(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static int is_int(const char *s)
{
	const char *p = s;

	if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0o", 2) == 0) {
		int hex = s[1] == 'x';
		p = s + 2;
		if (!*p)
			return 0;
		for (; *p; p++)
			if (!(hex ? strchr("0123456789abcdefABCDEF", *p) : strchr("01234567", *p)))
				return 0;
		return 1;
	}
	if (*p == '-' || *p == '+')
		p++;
	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int is_float(const char *s)
{
	const char *p = s;
	int digits = 0;

	if (*p == '-' || *p == '+')
		p++;
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++, digits++;
	}
	if (!digits)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

/* YAML 1.2 core schema resolution of a plain scalar. */
static json_t *plain_scalar(const char *s)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
	static const char *const trues[] = { "true", "True", "TRUE", NULL };
	static const char *const falses[] = { "false", "False", "FALSE", NULL };

	if (match(s, nulls))
		return json_null();
	if (match(s, trues))
		return json_true();
	if (match(s, falses))
		return json_false();
	if (is_int(s)) {
		long long v;
		errno = 0;
		v = strtoll(s[0] == '0' && s[1] == 'o' ? s + 2 : s, NULL,
			    s[0] == '0' && s[1] == 'x' ? 16 : (s[0] == '0' && s[1] == 'o' ? 8 : 10));
		if (errno == 0)
			return json_integer(v);
		return json_real(strtod(s, NULL));
	}
	if (is_float(s))
		return json_real(strtod(s, NULL));
	return json_string(s);
}

/* A new side-table entry with zeroed positions; returns its id. */
static size_t add_entry(struct eb_yj_doc *doc, const json_t *parent, const char *key, size_t index)
{
	size_t id = eb_nodetab_add(&doc->tab, parent, key, index);

	EB_ALLOC_GROW(doc->pos, id + 1, doc->poscap);
	memset(&doc->pos[id], 0, sizeof(doc->pos[id]));
	return id;
}

static void remember_anchor(struct eb_yj_doc *doc, const yaml_char_t *anchor, json_t *node,
			    size_t nodes)
{
	if (!anchor)
		return;
	EB_ALLOC_GROW(doc->anchors, doc->nanchors + 1, doc->capanchors);
	doc->anchors[doc->nanchors].name = eb_xstrdup((const char *)anchor);
	doc->anchors[doc->nanchors].node = json_incref(node);
	doc->anchors[doc->nanchors].nodes = nodes;
	doc->nanchors++;
}

static const struct anchor *find_anchor(struct eb_yj_doc *doc, const char *name)
{
	/* the latest definition of a name wins, as YAML specifies */
	for (size_t i = doc->nanchors; i > 0; i--)
		if (strcmp(doc->anchors[i - 1].name, name) == 0)
			return &doc->anchors[i - 1];
	return NULL;
}

/* Parse the node that starts with *ev (consumed); the new value's position
 * goes into *vpos.  Returns a new reference or NULL with *err set. */
static json_t *parse_node(struct loader *ld, yaml_event_t *ev, struct eb_yj_pos *vpos, int depth);

static json_t *parse_mapping(struct loader *ld, int depth)
{
	json_t *obj = json_object();

	for (;;) {
		yaml_event_t kev, vev;
		struct eb_yj_pos kpos, vpos;
		size_t id;
		json_t *val;
		const char *key;

		if (next(ld, &kev) < 0)
			goto fail;
		if (kev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&kev);
			return obj;
		}
		pos_from_mark(&kpos, &kev.start_mark);
		if (kev.type != YAML_SCALAR_EVENT) {
			eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, kpos.line, kpos.col,
					"mapping keys must be plain strings");
			yaml_event_delete(&kev);
			goto fail;
		}
		key = (const char *)kev.data.scalar.value;
		if (strlen(key) != kev.data.scalar.length) {
			eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, kpos.line, kpos.col,
					"mapping key contains a NUL character");
			yaml_event_delete(&kev);
			goto fail;
		}
		if (next(ld, &vev) < 0) {
			yaml_event_delete(&kev);
			goto fail;
		}
		val = parse_node(ld, &vev, &vpos, depth + 1);
		if (!val) {
			yaml_event_delete(&kev);
			goto fail;
		}
		if (json_object_get(obj, key)) {
			const struct eb_yj_pos *first = eb_yj_key_pos(ld->doc, obj, key);
			struct eb_diag *d = eb_diag_add(ld->diags, EB_SEV_ERROR, ld->doc->file,
							kpos.line, kpos.col, "EB004",
							"duplicate key '%s'", key);
			eb_diag_hint(d, "first defined at line %u; remove one of them", first->line);
			json_array_append(ld->doc->replaced, json_object_get(obj, key));
		}
		json_object_set_new(obj, key, val);
		id = add_entry(ld->doc, obj, key, 0);
		ld->doc->pos[id].kpos = kpos;
		ld->doc->pos[id].kpos.raw = ld->doc->tab.e[id].key;
		ld->doc->pos[id].kpos.plain = kev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		ld->doc->pos[id].vpos = vpos;
		eb_nodetab_commit(&ld->doc->tab, id, val, 1);
		yaml_event_delete(&kev);
	}
fail:
	json_decref(obj);
	return NULL;
}

static json_t *parse_sequence(struct loader *ld, int depth)
{
	json_t *arr = json_array();

	for (size_t i = 0;; i++) {
		yaml_event_t ev;
		struct eb_yj_pos vpos;
		size_t id;
		json_t *val;

		if (next(ld, &ev) < 0)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return arr;
		}
		val = parse_node(ld, &ev, &vpos, depth + 1);
		if (!val)
			goto fail;
		json_array_append_new(arr, val);
		id = add_entry(ld->doc, arr, NULL, i);
		ld->doc->pos[id].vpos = vpos;
		eb_nodetab_commit(&ld->doc->tab, id, val, 1);
	}
fail:
	json_decref(arr);
	return NULL;
}

/* Raw scalar texts live as long as the document: keep them as the keys of
 * never-committed entries of a pseudo parent, freed with the table. */
static const char *keep_raw(struct eb_yj_doc *doc, const char *s)
{
	size_t id = add_entry(doc, (const json_t *)doc, s, 0);

	return doc->tab.e[id].key; /* after add_entry: it may move the array */
}

static json_t *parse_node(struct loader *ld, yaml_event_t *ev, struct eb_yj_pos *vpos, int depth)
{
	json_t *node = NULL;
	const yaml_char_t *anchor = NULL;
	size_t nodes_before = ld->nodes;

	memset(vpos, 0, sizeof(*vpos));
	pos_from_mark(vpos, &ev->start_mark);
	if (eb_interrupt_check(ld->err) < 0)
		goto done;
	if (++ld->nodes > ld->max) {
		eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
				"document has more than %u nodes", MAX_NODES);
		goto done;
	}
	if (depth > MAX_DEPTH) {
		eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
				"document is nested more than %d levels deep", MAX_DEPTH);
		goto done;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		const char *s = (const char *)ev->data.scalar.value;
		const char *tag = (const char *)ev->data.scalar.tag;
		int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;

		if (tag && strcmp(tag, YAML_STR_TAG) == 0)
			plain = 0;
		if (strlen(s) != ev->data.scalar.length) {
			/* "\0" in a quoted scalar: every later stage uses C strings,
			 * so the value would be cut short without a word */
			eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
					"scalar contains a NUL character");
			goto done;
		}
		node = plain ? plain_scalar(s) : json_string(s);
		if (!node) {
			eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
					"scalar is not valid UTF-8");
			goto done;
		}
		vpos->plain = plain;
		vpos->raw = keep_raw(ld->doc, s);
		anchor = ev->data.scalar.anchor;
		break;
	}
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		node = parse_mapping(ld, depth);
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		node = parse_sequence(ld, depth);
		break;
	case YAML_ALIAS_EVENT: {
		const struct anchor *target = find_anchor(ld->doc, (const char *)ev->data.alias.anchor);
		if (!target) {
			eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
					"unknown alias '*%s'", ev->data.alias.anchor);
			goto done;
		}
		/* a deep copy, so a later edit of one place cannot change the
		 * other; counted at its full size first, so an alias bomb
		 * stops here instead of exhausting memory */
		ld->nodes += target->nodes - 1; /* the alias itself was counted */
		if (ld->nodes > ld->max) {
			eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
					"aliases expand the document to more than %u nodes "
					"(alias '*%s')",
					MAX_NODES, ev->data.alias.anchor);
			goto done;
		}
		node = json_deep_copy(target->node);
		break;
	}
	default:
		eb_error_set_at(ld->err, EB_EINVALID, ld->doc->file, vpos->line, vpos->col,
				"unexpected YAML event");
		goto done;
	}
	if (node && anchor)
		remember_anchor(ld->doc, anchor, node, ld->nodes - nodes_before);
done:
	yaml_event_delete(ev);
	return node;
}

int eb_yj_load(struct eb_yj_doc **out, const char *file, const char *text, size_t len,
	       struct eb_diag_list *diags, struct eb_error **err)
{
	return eb_yj_load_budget(out, file, text, len, NULL, diags, err);
}

int eb_yj_load_budget(struct eb_yj_doc **out, const char *file, const char *text, size_t len,
		      size_t *budget, struct eb_diag_list *diags, struct eb_error **err)
{
	struct loader ld = { 0 };
	struct eb_yj_doc *doc = eb_xcalloc(1, sizeof(*doc));
	yaml_event_t ev;
	struct eb_yj_pos rpos = { 1, 1, 0, NULL };
	size_t id;
	int r = -EB_EINVALID;

	doc->file = eb_xstrdup(file);
	doc->replaced = json_array();
	doc->none.line = 1;
	doc->none.col = 1;
	ld.doc = doc;
	ld.diags = diags;
	ld.err = err;
	ld.max = budget && *budget < MAX_NODES ? *budget : MAX_NODES;
	if (!yaml_parser_initialize(&ld.parser)) {
		eb_yj_free(doc);
		return eb_error_set(err, EB_EFAIL, "cannot initialise the YAML parser");
	}
	yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, len);

	/* STREAM-START, then DOCUMENT-START or STREAM-END (empty file) */
	if ((r = next(&ld, &ev)) < 0)
		goto done;
	yaml_event_delete(&ev);
	if ((r = next(&ld, &ev)) < 0)
		goto done;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		doc->root = json_null();
	} else {
		yaml_event_delete(&ev);
		if ((r = next(&ld, &ev)) < 0)
			goto done;
		doc->root = parse_node(&ld, &ev, &rpos, 0);
		if (!doc->root) {
			r = -EB_EINVALID;
			goto done;
		}
		if ((r = next(&ld, &ev)) < 0) /* DOCUMENT-END */
			goto done;
		yaml_event_delete(&ev);
		if ((r = next(&ld, &ev)) < 0)
			goto done;
		if (ev.type != YAML_STREAM_END_EVENT) {
			r = eb_error_set_at(err, EB_EINVALID, file, (unsigned)ev.start_mark.line + 1,
					    (unsigned)ev.start_mark.column + 1,
					    "expected one document, found a second one");
			yaml_event_delete(&ev);
			goto done;
		}
		yaml_event_delete(&ev);
	}
	id = add_entry(doc, NULL, NULL, 0);
	doc->pos[id].vpos = rpos;
	eb_nodetab_commit(&doc->tab, id, doc->root, 1);
	r = 0;
done:
	yaml_parser_delete(&ld.parser);
	/* what this document cost comes off the file's budget, whether or
	 * not it loaded: a stream of documents is one file */
	if (budget)
		*budget = ld.nodes >= *budget ? 0 : *budget - ld.nodes;
	if (r < 0) {
		eb_yj_free(doc);
		return r;
	}
	*out = doc;
	return 0;
}

json_t *eb_yj_root(const struct eb_yj_doc *doc)
{
	return doc->root;
}

const struct eb_yj_pos *eb_yj_node_pos(const struct eb_yj_doc *doc, const json_t *node)
{
	size_t id = eb_nodetab_find_node(&doc->tab, node);

	return id ? &doc->pos[id - 1].vpos : &doc->none;
}

const struct eb_yj_pos *eb_yj_value_pos(const struct eb_yj_doc *doc, const json_t *parent,
					 const char *key, size_t index)
{
	size_t id;

	if (!parent)
		return eb_yj_node_pos(doc, doc->root);
	id = eb_nodetab_find(&doc->tab, parent, key, index);
	return id ? &doc->pos[id - 1].vpos : eb_yj_node_pos(doc, parent);
}

const struct eb_yj_pos *eb_yj_key_pos(const struct eb_yj_doc *doc, const json_t *parent,
				       const char *key)
{
	size_t id = eb_nodetab_find(&doc->tab, parent, key, 0);

	return id ? &doc->pos[id - 1].kpos : eb_yj_node_pos(doc, parent);
}

void eb_yj_free(struct eb_yj_doc *doc)
{
	if (!doc)
		return;
	eb_nodetab_release(&doc->tab);
	free(doc->pos);
	for (size_t i = 0; i < doc->nanchors; i++) {
		free(doc->anchors[i].name);
		json_decref(doc->anchors[i].node);
	}
	free(doc->anchors);
	json_decref(doc->root);
	json_decref(doc->replaced);
	free(doc->file);
	free(doc);
}
