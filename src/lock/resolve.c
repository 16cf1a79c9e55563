/*
 * resolve.c - rewriting image references in YAML files to locked digests,
 * and the EB103/EB104 checker for image fields (see resolve.h).
 *
 * One walk serves both: libyaml's parser gives the structure (which scalar
 * is the value of an `image:` key), its scanner the exact extent of each
 * scalar token — a parser event starts at the node's anchor or tag, the
 * token at the scalar itself.  libyaml counts positions in characters
 * (CRLF is two, a leading UTF-8 byte order mark is not counted), so a
 * cursor walks the UTF-8 text to turn them into byte offsets.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "lock/resolve.h"
#include "ref/imageref.h"
#include "util/alloc.h"
#include "util/fs.h"

#define RESOLVE_LOCK_MAX (64u << 20)
#define SCHEME_LEN (sizeof(EB_RESOLVE_SCHEME) - 1)

/* ---- the lock ------------------------------------------------------------ */

struct rs_pushed {
	struct eb_imageref ref;
	char *pinned; /* "REPO@sha256:..." */
};

struct rs_target {
	char *name;
	struct rs_pushed *pushed;
	size_t n;
};

struct eb_resolve_lock {
	char *path;
	struct rs_target *targets;
	size_t n;
};

void eb_resolve_lock_free(struct eb_resolve_lock *lock)
{
	if (!lock)
		return;
	for (size_t i = 0; i < lock->n; i++) {
		struct rs_target *t = &lock->targets[i];
		for (size_t j = 0; j < t->n; j++) {
			eb_imageref_release(&t->pushed[j].ref);
			free(t->pushed[j].pinned);
		}
		free(t->pushed);
		free(t->name);
	}
	free(lock->targets);
	free(lock->path);
	free(lock);
}

/* Index one pushed entry of target t. */
static int add_pushed(struct eb_resolve_lock *l, struct rs_target *t, size_t idx, json_t *p,
		      const char *image_digest, struct eb_error **err)
{
	const char *ref = json_string_value(json_object_get(p, "ref"));
	const char *digest = json_string_value(json_object_get(p, "digest"));
	struct eb_imageref check;
	struct eb_error *perr = NULL;
	struct rs_pushed *e;
	char *name;
	int r;

	if (!digest)
		digest = image_digest;
	if (!ref)
		return eb_error_set(err, EB_EINVALID, "'%s': target '%s': pushed entry %zu has no ref",
				    l->path, t->name, idx + 1);
	if (!digest)
		return eb_error_set(err, EB_EINVALID,
				    "'%s': target '%s': no digest for the pushed reference '%s'",
				    l->path, t->name, ref);
	t->pushed = eb_xreallocarray(t->pushed, t->n + 1, sizeof(*t->pushed));
	e = &t->pushed[t->n];
	memset(e, 0, sizeof(*e));
	if (eb_imageref_parse(&e->ref, ref, &perr) < 0) {
		r = eb_error_set(err, EB_EINVALID,
				 "'%s': target '%s': invalid pushed reference '%s': %s", l->path,
				 t->name, ref, perr->msg);
		eb_error_free(perr);
		return r;
	}
	t->n++;
	name = eb_imageref_name(&e->ref);
	e->pinned = eb_xasprintf("%s@%s", name, digest);
	free(name);
	/* the digest must pass the reference grammar (sha256:<64 hex>, ...) */
	if (eb_imageref_parse(&check, e->pinned, &perr) < 0) {
		r = eb_error_set(err, EB_EINVALID,
				 "'%s': target '%s': invalid digest '%s' for '%s': %s", l->path,
				 t->name, digest, ref, perr->msg);
		eb_error_free(perr);
		return r;
	}
	eb_imageref_release(&check);
	return 0;
}

int eb_resolve_lock_new(struct eb_resolve_lock **out, const json_t *lock, const char *path,
			struct eb_error **err)
{
	json_t *targets = json_object_get(lock, "targets");
	json_t *version = json_object_get(lock, "lockVersion");
	struct eb_resolve_lock *l;
	const char *name;
	json_t *t;
	int r;

	*out = NULL;
	if (!json_is_object(lock) || !json_is_integer(version) ||
	    json_integer_value(version) != 1 || !json_is_object(targets)) {
		r = eb_error_set(err, EB_EINVALID, "'%s' is not an envbuild lockfile of version 1",
				 path);
		eb_error_hint(err, "regenerate it with 'envbuild lock'");
		return r;
	}
	l = eb_xcalloc(1, sizeof(*l));
	l->path = eb_xstrdup(path);
	json_object_foreach(targets, name, t) {
		json_t *image = json_object_get(t, "image");
		json_t *pushed = json_object_get(image, "pushed");
		const char *image_digest = json_string_value(json_object_get(image, "digest"));
		struct rs_target *rt;
		size_t i;
		json_t *p;

		l->targets = eb_xreallocarray(l->targets, l->n + 1, sizeof(*l->targets));
		rt = &l->targets[l->n++];
		memset(rt, 0, sizeof(*rt));
		rt->name = eb_xstrdup(name);
		if (pushed && !json_is_array(pushed)) {
			r = eb_error_set(err, EB_EINVALID,
					 "'%s': target '%s': 'image.pushed' is not a list", path, name);
			goto fail;
		}
		json_array_foreach(pushed, i, p) {
			if ((r = add_pushed(l, rt, i, p, image_digest, err)) < 0)
				goto fail;
		}
	}
	*out = l;
	return 0;
fail:
	eb_resolve_lock_free(l);
	return r;
}

int eb_resolve_lock_load(struct eb_resolve_lock **out, const char *path, struct eb_error **err)
{
	struct eb_buf b;
	json_error_t je;
	json_t *j;
	int r;

	*out = NULL;
	eb_buf_init(&b, RESOLVE_LOCK_MAX);
	r = eb_fs_read_file(&b, path, RESOLVE_LOCK_MAX, err);
	if (r < 0) {
		eb_buf_release(&b);
		if (r == -EB_ENOTFOUND)
			eb_error_hint(err, "'envbuild push' records pushed images in the lock; "
					   "or name one with --lock FILE");
		return r;
	}
	j = json_loadb(b.ptr, b.len, JSON_REJECT_DUPLICATES, &je);
	eb_buf_release(&b);
	if (!j)
		return eb_error_set_at(err, EB_EINVALID, path, (unsigned)je.line,
				       (unsigned)je.column, "the lockfile is not valid JSON: %s",
				       je.text);
	r = eb_resolve_lock_new(out, j, path, err);
	json_decref(j);
	return r;
}

static const struct rs_target *find_target(const struct eb_resolve_lock *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->targets[i].name, name) == 0)
			return &l->targets[i];
	return NULL;
}

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

int eb_resolve_ref(const struct eb_resolve_lock *lock, const char *value, int image, char **out,
		   struct eb_error **err)
{
	struct eb_imageref ref;
	int r;

	*out = NULL;
	if (strncmp(value, EB_RESOLVE_SCHEME, SCHEME_LEN) == 0) {
		const char *name = value + SCHEME_LEN;
		const struct rs_target *t = find_target(lock, name);

		if (!t) {
			struct eb_buf names;

			r = eb_error_set(err, EB_EINVALID, "unknown target '%s' in '%s'", name, value);
			eb_buf_init(&names, 0);
			for (size_t i = 0; i < lock->n; i++)
				eb_buf_addf(&names, "%s%s", i ? ", " : "", lock->targets[i].name);
			if (lock->n)
				eb_error_hint(err, "the targets in '%s' are: %s", lock->path,
					      names.ptr);
			else
				eb_error_hint(err, "'%s' has no targets; run envbuild push",
					      lock->path);
			eb_buf_release(&names);
			return r;
		}
		if (!t->n)
			return eb_error_set(err, EB_EINVALID,
					    "target '%s' has no pushed reference in the lock; run "
					    "envbuild push",
					    t->name);
		*out = eb_xstrdup(t->pushed[0].pinned);
		return 0;
	}
	if (!image || eb_imageref_parse(&ref, value, NULL) < 0)
		return 0;
	if (ref.tag && !ref.digest) {
		for (size_t i = 0; i < lock->n && !*out; i++) {
			const struct rs_target *t = &lock->targets[i];
			for (size_t j = 0; j < t->n && !*out; j++) {
				const struct eb_imageref *p = &t->pushed[j].ref;
				if (same(p->domain, ref.domain) && same(p->path, ref.path) &&
				    same(p->tag, ref.tag))
					*out = eb_xstrdup(t->pushed[j].pinned);
			}
		}
	}
	eb_imageref_release(&ref);
	return 0;
}

/* ---- the walk ------------------------------------------------------------ */

/* A scalar as written: bytes [start, end) of the text (quotes included). */
struct rs_scalar {
	size_t start, end;
	unsigned line, col; /* 1-based, of start */
	yaml_scalar_style_t style;
	const char *value;  /* decoded; NUL-free (others are never visited) */
	int image;          /* the value of an image: key */
};

typedef int (*rs_visit_fn)(void *ctx, const struct rs_scalar *s, struct eb_error **err);

/* A scalar token: where it ends (libyaml index, to match events) and its
 * byte range and position. */
struct rs_token {
	size_t end_index;
	size_t start, end;
	unsigned line, col;
};

/* Character index -> byte offset, walking forward (restarting if asked for
 * an earlier index). */
struct rs_cursor {
	const unsigned char *text;
	size_t len, base, index, byte;
};

static size_t cursor_byte(struct rs_cursor *c, size_t index)
{
	if (index < c->index) {
		c->index = 0;
		c->byte = c->base;
	}
	while (c->index < index && c->byte < c->len) {
		unsigned char b = c->text[c->byte];
		c->byte += b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
		c->index++;
	}
	return c->byte < c->len ? c->byte : c->len;
}

struct rs_frame {
	int map;       /* mapping (else sequence) */
	int want_key;  /* mapping: the next node is a key */
	int key_image; /* mapping: the last key was "image" */
};

struct rs_anchor {
	char *name;
	struct rs_scalar s;
	int seen_as_image;
};

struct rs_walk {
	const char *path;
	const char *text;
	size_t len;
	yaml_parser_t parser;
	int parser_live;
	struct rs_token *tokens;
	size_t ntokens;
	struct rs_frame *stack;
	size_t depth, cap;
	struct rs_anchor *anchors;
	size_t nanchors, anchors_cap;
	struct eb_error **err;
};

static int syntax_error(struct rs_walk *w)
{
	yaml_parser_t *p = &w->parser;
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->mark;
	const char *problem = p->problem ? p->problem : "syntax error";

	if (p->error == YAML_MEMORY_ERROR)
		return eb_error_set(w->err, EB_EFAIL, "out of memory parsing '%s'", w->path);
	if (p->context)
		return eb_error_set_at(w->err, EB_EINVALID, w->path, (unsigned)m->line + 1,
				       (unsigned)m->column + 1, "%s %s", problem, p->context);
	return eb_error_set_at(w->err, EB_EINVALID, w->path, (unsigned)m->line + 1,
			       (unsigned)m->column + 1, "%s", problem);
}

static int parser_start(struct rs_walk *w, size_t *base)
{
	const unsigned char *t = (const unsigned char *)w->text;

	if (!yaml_parser_initialize(&w->parser))
		return eb_error_set(w->err, EB_EFAIL, "cannot initialise the YAML parser");
	w->parser_live = 1;
	yaml_parser_set_input_string(&w->parser, t, w->len);
	/* libyaml skips (and does not count) a UTF-8 byte order mark; without
	 * one, insist on UTF-8 so a UTF-16 file fails instead of being decoded
	 * into positions that are no byte offsets */
	*base = 0;
	if (w->len >= 3 && t[0] == 0xef && t[1] == 0xbb && t[2] == 0xbf)
		*base = 3;
	else
		yaml_parser_set_encoding(&w->parser, YAML_UTF8_ENCODING);
	return 0;
}

static void parser_stop(struct rs_walk *w)
{
	if (w->parser_live)
		yaml_parser_delete(&w->parser);
	w->parser_live = 0;
}

/* First pass: the extent of every scalar token. */
static int scan_tokens(struct rs_walk *w)
{
	struct rs_cursor cur = { (const unsigned char *)w->text, w->len, 0, 0, 0 };
	size_t cap = 0;
	int r = 0;

	if ((r = parser_start(w, &cur.base)) < 0)
		return r;
	cur.byte = cur.base;
	for (;;) {
		yaml_token_t tok;
		yaml_token_type_t type;

		if (!yaml_parser_scan(&w->parser, &tok)) {
			r = syntax_error(w);
			break;
		}
		type = tok.type;
		if (type == YAML_SCALAR_TOKEN) {
			struct rs_token *t;

			EB_ALLOC_GROW(w->tokens, w->ntokens + 1, cap);
			t = &w->tokens[w->ntokens++];
			t->end_index = tok.end_mark.index;
			t->start = cursor_byte(&cur, tok.start_mark.index);
			t->end = cursor_byte(&cur, tok.end_mark.index);
			t->line = (unsigned)tok.start_mark.line + 1;
			t->col = (unsigned)tok.start_mark.column + 1;
		}
		yaml_token_delete(&tok);
		if (type == YAML_STREAM_END_TOKEN)
			break;
	}
	parser_stop(w);
	return r;
}

static const struct rs_token *find_token(const struct rs_walk *w, size_t end_index)
{
	size_t lo = 0, hi = w->ntokens;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->tokens[mid].end_index < end_index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->ntokens && w->tokens[lo].end_index == end_index ? &w->tokens[lo] : NULL;
}

/* What the node that starts now is to its parent: a key, or a value (of
 * an image: key?).  Advances the parent mapping to its next key or value. */
static int take_role(struct rs_walk *w, int *image)
{
	struct rs_frame *f = w->depth ? &w->stack[w->depth - 1] : NULL;

	*image = 0;
	if (!f || !f->map)
		return 0;
	if (f->want_key) {
		f->want_key = 0;
		f->key_image = 0;
		return 1;
	}
	*image = f->key_image;
	f->want_key = 1;
	return 0;
}

static void set_key(struct rs_walk *w, const char *key)
{
	if (key && strcmp(key, "image") == 0)
		w->stack[w->depth - 1].key_image = 1;
}

static void push_frame(struct rs_walk *w, int map)
{
	EB_ALLOC_GROW(w->stack, w->depth + 1, w->cap);
	w->stack[w->depth].map = map;
	w->stack[w->depth].want_key = 1;
	w->stack[w->depth].key_image = 0;
	w->depth++;
}

static struct rs_anchor *find_anchor(struct rs_walk *w, const char *name)
{
	/* an anchor may be defined again; an alias means the latest */
	for (size_t i = w->nanchors; i-- > 0;)
		if (strcmp(w->anchors[i].name, name) == 0)
			return &w->anchors[i];
	return NULL;
}

static int on_scalar(struct rs_walk *w, const yaml_event_t *ev, rs_visit_fn visit, void *ctx)
{
	const char *value = (const char *)ev->data.scalar.value;
	const char *anchor = (const char *)ev->data.scalar.anchor;
	const struct rs_token *tok;
	struct rs_scalar s;
	int image;

	if (take_role(w, &image)) {
		set_key(w, value);
		return 0;
	}
	if (ev->data.scalar.length == 0 || strlen(value) != ev->data.scalar.length)
		return 0; /* empty, or with a NUL: no reference */
	tok = find_token(w, ev->end_mark.index);
	if (!tok)
		return 0;
	s.start = tok->start;
	s.end = tok->end;
	s.line = tok->line;
	s.col = tok->col;
	s.style = ev->data.scalar.style;
	s.value = value;
	s.image = image;
	if (anchor) {
		struct rs_anchor *a;

		EB_ALLOC_GROW(w->anchors, w->nanchors + 1, w->anchors_cap);
		a = &w->anchors[w->nanchors++];
		a->name = eb_xstrdup(anchor);
		a->s = s;
		a->s.value = eb_xstrdup(value);
		a->seen_as_image = image;
	}
	return visit(ctx, &s, w->err);
}

static int on_alias(struct rs_walk *w, const yaml_event_t *ev, rs_visit_fn visit, void *ctx)
{
	struct rs_anchor *a = find_anchor(w, (const char *)ev->data.alias.anchor);
	int image;

	if (take_role(w, &image)) {
		set_key(w, a ? a->s.value : NULL);
		return 0;
	}
	if (!a || !image || a->seen_as_image)
		return 0;
	a->seen_as_image = 1;
	a->s.image = 1;
	return visit(ctx, &a->s, w->err);
}

static void drop_anchors(struct rs_walk *w)
{
	for (size_t i = 0; i < w->nanchors; i++) {
		free(w->anchors[i].name);
		free((char *)w->anchors[i].s.value);
	}
	w->nanchors = 0;
}

static void walk_release(struct rs_walk *w)
{
	parser_stop(w);
	drop_anchors(w);
	free(w->anchors);
	free(w->stack);
	free(w->tokens);
}

/* Visit every scalar that is a value (not a key), in document order; an
 * alias in image position visits its anchored scalar (once). */
static int walk(const char *path, const char *text, size_t len, rs_visit_fn visit, void *ctx,
		struct eb_error **err)
{
	struct rs_walk w;
	size_t base;
	int r;

	memset(&w, 0, sizeof(w));
	w.path = path;
	w.text = text;
	w.len = len;
	w.err = err;
	if ((r = scan_tokens(&w)) < 0 || (r = parser_start(&w, &base)) < 0)
		goto done;
	for (;;) {
		yaml_event_t ev;
		yaml_event_type_t type;
		int image;

		if (!yaml_parser_parse(&w.parser, &ev)) {
			r = syntax_error(&w);
			break;
		}
		type = ev.type;
		switch (type) {
		case YAML_SCALAR_EVENT:
			r = on_scalar(&w, &ev, visit, ctx);
			break;
		case YAML_ALIAS_EVENT:
			r = on_alias(&w, &ev, visit, ctx);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			take_role(&w, &image);
			push_frame(&w, type == YAML_MAPPING_START_EVENT);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (w.depth)
				w.depth--;
			break;
		case YAML_DOCUMENT_START_EVENT:
			/* anchors belong to their document */
			drop_anchors(&w);
			w.depth = 0;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (r < 0 || type == YAML_STREAM_END_EVENT)
			break;
	}
done:
	walk_release(&w);
	return r;
}

/* ---- rewriting ----------------------------------------------------------- */

struct rs_edit {
	size_t start, end;
	char *text;
};

struct rs_rewrite {
	const struct eb_resolve_lock *lock;
	const char *path;
	const char *text;
	struct rs_edit *edits;
	size_t n, cap;
};

static int rewrite_visit(void *ctx, const struct rs_scalar *s, struct eb_error **err)
{
	struct rs_rewrite *rw = ctx;
	const char *q = "";
	char *to = NULL;
	int r;

	if (s->style == YAML_LITERAL_SCALAR_STYLE || s->style == YAML_FOLDED_SCALAR_STYLE) {
		/* a block scalar's text is not the value; refuse rather than guess */
		size_t n = strlen(s->value);
		char *v = eb_xstrndup(s->value, n);

		while (n && strchr(" \t\r\n", v[n - 1]))
			v[--n] = '\0';
		r = eb_resolve_ref(rw->lock, v, s->image, &to, NULL);
		if (r < 0 || to) {
			r = eb_error_set_at(err, EB_EINVALID, rw->path, s->line, s->col,
					    "cannot rewrite the image reference '%s' in a block scalar",
					    v);
			eb_error_hint(err, "write it on one line: image: %s", v);
		}
		free(v);
		free(to);
		return r < 0 ? r : 0;
	}
	r = eb_resolve_ref(rw->lock, s->value, s->image, &to, err);
	if (r < 0) {
		eb_error_locate(err, rw->path, s->line, s->col);
		return r;
	}
	if (!to)
		return 0;
	if (s->style == YAML_SINGLE_QUOTED_SCALAR_STYLE)
		q = "'";
	else if (s->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		q = "\"";
	EB_ALLOC_GROW(rw->edits, rw->n + 1, rw->cap);
	rw->edits[rw->n].start = s->start;
	rw->edits[rw->n].end = s->end;
	rw->edits[rw->n].text = eb_xasprintf("%s%s%s", q, to, q);
	rw->n++;
	free(to);
	return 0;
}

static int cmp_edit(const void *a, const void *b)
{
	const struct rs_edit *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int eb_resolve_text(const struct eb_resolve_lock *lock, const char *path, const char *text,
		    size_t len, struct eb_buf *out, size_t *nrewritten, struct eb_error **err)
{
	struct rs_rewrite rw = { lock, path, text, NULL, 0, 0 };
	struct eb_buf b;
	size_t pos = 0, n = 0;
	int r;

	if (nrewritten)
		*nrewritten = 0;
	eb_buf_init(&b, 0);
	r = walk(path, text, len, rewrite_visit, &rw, err);
	if (r < 0)
		goto done;
	/* aliases can add an anchor's edit late: order by position */
	if (rw.n > 1)
		eb_sort(rw.edits, rw.n, sizeof(*rw.edits), cmp_edit);
	for (size_t i = 0; i < rw.n; i++) {
		const struct rs_edit *e = &rw.edits[i];
		if (e->start < pos || e->end > len)
			continue;
		eb_buf_add(&b, text + pos, e->start - pos);
		eb_buf_adds(&b, e->text);
		pos = e->end;
		n++;
	}
	eb_buf_add(&b, text + pos, len - pos);
	if ((r = eb_buf_add(out, b.ptr, b.len)) < 0) {
		eb_error_set(err, -r, "'%s' is too large once rewritten", path);
		goto done;
	}
	if (nrewritten)
		*nrewritten = n;
done:
	for (size_t i = 0; i < rw.n; i++)
		free(rw.edits[i].text);
	free(rw.edits);
	eb_buf_release(&b);
	return r;
}

/* ---- checking ------------------------------------------------------------ */

struct rs_check {
	const char *path;
	const char *text;
	struct eb_diag_list *diags;
};

/* Column of the tag of s->value (which has one), when the scalar is
 * written as its value; else the scalar's own column. */
static unsigned tag_col(const struct rs_check *c, const struct rs_scalar *s, const char *tag)
{
	size_t q = s->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
				   s->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE
			   ? 1
			   : 0;
	size_t n = strlen(s->value);

	if (s->style == YAML_LITERAL_SCALAR_STYLE || s->style == YAML_FOLDED_SCALAR_STYLE ||
	    s->end - s->start != n + 2 * q || memcmp(c->text + s->start + q, s->value, n) != 0)
		return s->col;
	return s->col + (unsigned)(q + (size_t)(tag - s->value));
}

/* 1 for "${VAR}rest" or "$VAR/rest" where rest has no variable, tag or
 * digest of its own */
static int var_prefix_untagged(const char *v)
{
	const char *rest, *last;

	if (v[0] != '$')
		return 0;
	if (v[1] == '{') {
		rest = strchr(v, '}');
		if (!rest)
			return 0;
		rest++;
	} else {
		rest = v + 1;
		while ((*rest >= 'A' && *rest <= 'Z') || (*rest >= 'a' && *rest <= 'z') ||
		       (*rest >= '0' && *rest <= '9') || *rest == '_')
			rest++;
	}
	if (!*rest || strchr(rest, '$') || strchr(rest, '@') || strchr(rest, ' '))
		return 0;
	last = strrchr(rest, '/');
	last = last ? last + 1 : rest;
	return *last && !strchr(last, ':');
}

static int check_visit(void *ctx, const struct rs_scalar *s, struct eb_error **err)
{
	struct rs_check *c = ctx;
	struct eb_imageref ref;
	struct eb_diag *d;

	(void)err;
	if (!s->image || strncmp(s->value, EB_RESOLVE_SCHEME, SCHEME_LEN) == 0)
		return 0;
	if (eb_imageref_parse(&ref, s->value, NULL) < 0) {
		/* "${REGISTRY}name/python": a variable prefix (a registry)
		 * cannot supply the tag the rest lacks */
		if (var_prefix_untagged(s->value)) {
			d = eb_diag_add(c->diags, EB_SEV_ERROR, c->path, s->line, s->col, "EB103",
					"image '%s' has no tag (a variable before it names the "
					"registry, not the tag)", s->value);
			eb_diag_hint(d, "pin a version tag and its digest after the name");
		}
		return 0;
	}
	if (!ref.tag && !ref.digest) {
		d = eb_diag_add(c->diags, EB_SEV_ERROR, c->path, s->line, s->col, "EB103",
				"image '%s' has no tag", s->value);
		eb_diag_hint(d, "pin a version tag and its digest (%s:TAG@sha256:...), or write "
				"envbuild://TARGET and run 'envbuild resolve'",
			     s->value);
	} else if (ref.tag && !ref.digest && strcmp(ref.tag, "latest") == 0) {
		d = eb_diag_add(c->diags, EB_SEV_ERROR, c->path, s->line,
				tag_col(c, s, strrchr(s->value, ':') + 1), "EB104",
				"image '%s' uses the tag 'latest' without a digest", s->value);
		eb_diag_hint(d, "'latest' moves; pin a version tag and its digest, or write "
				"envbuild://TARGET and run 'envbuild resolve'");
	}
	eb_imageref_release(&ref);
	return 0;
}

void eb_resolve_check_images(const char *path, const char *text, size_t len,
			     struct eb_diag_list *diags)
{
	struct eb_diag_list found = EB_DIAG_LIST_INIT;
	struct rs_check c = { path, text, &found };
	struct eb_error *err = NULL;

	/* a file that does not parse gets its syntax error only */
	if (walk(path, text, len, check_visit, &c, &err) < 0)
		eb_diag_add(diags, EB_SEV_ERROR, err && err->file ? err->file : path,
			    err ? err->line : 0, err ? err->col : 0, "EB001", "%s",
			    err ? err->msg : "cannot read the YAML");
	else
		eb_diag_list_merge(diags, &found);
	eb_error_free(err);
	eb_diag_list_release(&found);
}
