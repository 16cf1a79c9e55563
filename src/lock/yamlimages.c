/*
 * yamlimages.c - image references spread over several keys, and YAML
 * with template actions.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/resolve.h"
#include "ref/imageref.h"
#include "lock/yamlimages.h"
#include "util/yamljson.h"
#include "util/alloc.h"

struct spot {
	unsigned line, col;
};

struct yctx {
	const char *path;
	struct eb_yj_doc *doc;
	unsigned line0; /* line offset of this document in the file */
	struct eb_diag_list *diags;
	struct spot *covered; /* image scalars read together with their siblings */
	size_t ncovered, capcovered;
};

/* The text of a scalar as written (a plain `9.1` stays "9.1"), or NULL. */
static const char *scalar_text(const struct eb_yj_doc *doc, const json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	const struct eb_yj_pos *p;

	if (!v || json_is_object(v) || json_is_array(v) || json_is_null(v))
		return NULL;
	p = eb_yj_value_pos(doc, parent, key, 0);
	if (p->raw)
		return p->raw;
	return json_string_value(v);
}

static void check_ref(struct yctx *c, const char *ref, unsigned line, unsigned col,
		      unsigned tline, unsigned tcol, const char *what)
{
	struct eb_imageref r;
	struct eb_diag *d;

	if (strstr(ref, "{{") || strchr(ref, '$') || eb_imageref_parse(&r, ref, NULL) < 0)
		return;
	if (!r.tag && !r.digest) {
		d = eb_diag_add(c->diags, EB_SEV_ERROR, c->path, line, col, "EB103",
				"image '%s' (%s) has no tag", ref, what);
		eb_diag_hint(d, "set its tag to a version (and its digest)");
	} else if (r.tag && !r.digest && strcmp(r.tag, "latest") == 0) {
		d = eb_diag_add(c->diags, EB_SEV_ERROR, c->path, tline, tcol, "EB104",
				"image '%s' (%s) uses the tag 'latest' without a digest", ref, what);
		eb_diag_hint(d, "'latest' moves; pin a version tag and its digest");
	}
	eb_imageref_release(&r);
}

static void visit(struct yctx *c, json_t *node, int depth)
{
	const char *k;
	json_t *v;
	size_t i;

	if (depth > 128)
		return;
	if (json_is_array(node)) {
		json_array_foreach(node, i, v)
			visit(c, v, depth + 1);
		return;
	}
	if (!json_is_object(node))
		return;
	v = json_object_get(node, "image");
	if (json_is_string(v) && (json_object_get(node, "tag") || json_object_get(node, "digest"))) {
		const struct eb_yj_pos *ip = eb_yj_value_pos(c->doc, node, "image", 0);
		const struct eb_yj_pos *tp = eb_yj_value_pos(c->doc, node,
							     json_object_get(node, "tag") ? "tag" : "digest", 0);
		const char *tag = scalar_text(c->doc, node, "tag");
		const char *dig = scalar_text(c->doc, node, "digest");
		char ref[1024];

		snprintf(ref, sizeof(ref), "%s%s%s%s%s", json_string_value(v), tag && *tag ? ":" : "",
			 tag ? tag : "", dig && *dig ? "@" : "", dig ? dig : "");
		EB_ALLOC_GROW(c->covered, c->ncovered + 1, c->capcovered);
		c->covered[c->ncovered].line = ip->line + c->line0;
		c->covered[c->ncovered++].col = ip->col;
		check_ref(c, ref, ip->line + c->line0, ip->col, tp->line + c->line0, tp->col,
			  "image with its sibling tag");
	} else if (json_is_object(v) && json_is_string(json_object_get(v, "repository"))) {
		const struct eb_yj_pos *rp = eb_yj_value_pos(c->doc, v, "repository", 0);
		const struct eb_yj_pos *tp = json_object_get(v, "tag") ?
						     eb_yj_value_pos(c->doc, v, "tag", 0) : rp;
		const char *reg = scalar_text(c->doc, v, "registry");
		const char *tag = scalar_text(c->doc, v, "tag");
		const char *dig = scalar_text(c->doc, v, "digest");
		char ref[1024];

		snprintf(ref, sizeof(ref), "%s%s%s%s%s%s%s", reg && *reg ? reg : "",
			 reg && *reg ? "/" : "", json_string_value(json_object_get(v, "repository")),
			 tag && *tag ? ":" : "", tag ? tag : "", dig && *dig ? "@" : "", dig ? dig : "");
		check_ref(c, ref, rp->line + c->line0, rp->col, tp->line + c->line0, tp->col,
			  "image.repository with image.tag");
	}
	json_object_foreach(node, k, v)
		visit(c, v, depth + 1);
}

/* A line that starts a new document: "---" alone or before a blank. */
static int doc_start(const char *s, const char *end)
{
	return end - s >= 3 && memcmp(s, "---", 3) == 0 &&
	       (end - s == 3 || s[3] == '\n' || s[3] == ' ' || s[3] == '\r' || s[3] == '\t');
}

/* Blank `{{ ... }}` actions (keeping newlines and columns); a line that
 * held only actions becomes empty.  Returns 1 when the text had actions
 * outside quoted scalars (a Helm-style template) and sets *line, *col. */
static int blank_templates(char *s, size_t len, unsigned *tline, unsigned *tcol)
{
	int found = 0;
	unsigned line = 1;
	char *bol = s;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n') {
			line++;
			bol = s + i + 1;
			continue;
		}
		if (s[i] == '{' && i + 1 < len && s[i + 1] == '{') {
			size_t j = i + 2;
			int only = 1, quoted = 0;
			while (j + 1 < len && !(s[j] == '}' && s[j + 1] == '}'))
				j++;
			j = j + 1 < len ? j + 2 : len;
			for (char *q = bol; q < s + i; q++) {
				if (*q != ' ' && *q != '\t' && *q != '-')
					only = 0;
				if (*q == '"' || *q == '\'')
					quoted = !quoted;
			}
			if (!quoted && !found) {
				found = 1;
				*tline = line;
				*tcol = (unsigned)(s + i - bol) + 1;
			}
			for (size_t q = i; q < j; q++)
				if (s[q] != '\n')
					s[q] = only ? ' ' : '_';
				else
					line++, bol = s + q + 1;
			i = j - 1;
		}
	}
	return found;
}

void eb_yamlimages_check(const char *path, const char *text, size_t len,
			 struct eb_diag_list *diags)
{
	struct eb_diag_list found = EB_DIAG_LIST_INIT;
	struct yctx c = { path, NULL, 0, &found, NULL, 0, 0 };
	char *copy = eb_xmalloc(len + 1);
	unsigned tline = 0, tcol = 0, line = 1;
	int tmpl;
	const char *s, *end = NULL, *docb;

	memcpy(copy, text, len);
	copy[len] = '\0';
	tmpl = memmem(text, len, "{{", 2) && blank_templates(copy, len, &tline, &tcol);
	if (!tmpl)
		memcpy(copy, text, len);
	eb_resolve_check_images(path, copy, len, &found);
	if (tmpl) {
		struct eb_diag *d = eb_diag_add(diags, EB_SEV_WARNING, path, tline, tcol, "EB105",
						"a template: only the YAML around its {{ ... }} actions is checked");
		eb_diag_hint(d, "check the rendered manifests too (helm template ... > out.yaml)");
		for (size_t i = 0; i < found.n; i++)
			if (strcmp(found.items[i].rule, "EB001") == 0) {
				found.items[i].severity = EB_SEV_WARNING;
				free(found.items[i].rule);
				found.items[i].rule = eb_xstrdup("EB105");
			}
	}
	/* each document on its own: yamljson reads one; the node limit
	 * holds for the whole file (a stream of alias bombs is one file) */
	size_t budget = EB_YJ_MAX_NODES;
	for (s = docb = copy; s <= copy + len; s = end + 1) {
		end = memchr(s, '\n', (size_t)(copy + len - s));
		if (!end)
			end = copy + len;
		if (end == copy + len || doc_start(end + 1, copy + len)) {
			struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
			size_t n = (size_t)(end - docb);
			if (eb_yj_load_budget(&c.doc, path, docb, n, &budget, &ignore, NULL) == 0) {
				visit(&c, eb_yj_root(c.doc), 0);
				eb_yj_free(c.doc);
				c.doc = NULL;
			}
			eb_diag_list_release(&ignore);
			if (!budget) {
				struct eb_diag *d = eb_diag_add(
					diags, EB_SEV_ERROR, path, c.line0 + 1, 1, "EB042",
					"the file's documents expand to more than %zu YAML nodes "
					"(aliases counted at their full size); the rest is not checked",
					(size_t)EB_YJ_MAX_NODES);
				eb_diag_hint(d, "a real stream of manifests is far smaller: look for "
						"aliases of aliases");
				break;
			}
			c.line0 = line; /* the next document starts after this line */
			docb = end + 1;
		}
		line++;
		if (end == copy + len)
			break;
	}
	/* an image scalar read with its sibling tag is not an untagged image */
	for (size_t i = 0; i < found.n; i++) {
		int drop = 0;
		for (size_t k = 0; k < c.ncovered; k++)
			if (found.items[i].line == c.covered[k].line && found.items[i].col >= c.covered[k].col &&
			    (strcmp(found.items[i].rule, "EB103") == 0 || strcmp(found.items[i].rule, "EB104") == 0) &&
			    !strstr(found.items[i].msg, "sibling"))
				drop = 1;
		if (!drop) {
			struct eb_diag_list one = { &found.items[i], 1, 1 };
			eb_diag_list_merge(diags, &one);
		}
	}
	eb_diag_list_release(&found);
	free(c.covered);
	free(copy);
}
