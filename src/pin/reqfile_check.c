/*
 * reqfile_check.c - the pin rules over a whole loaded set of requirements
 * files (eb_reqfile_check, see reqfile.h): each entry's findings moved to
 * where the user wrote it, duplicates across files, hashes when
 * --require-hashes is set.  Reading the files is reqfile.c
 * (reqfile_internal.h between them).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pin/reqfile.h"
#include "pin/reqfile_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

/* ---- checks over the whole set ------------------------------------------- */

/* Move findings of tmp (columns relative to the entry's requirement) to
 * their physical positions, into out. */
static void remap_merge(const struct ent *e, struct eb_diag_list *tmp, struct eb_diag_list *out)
{
	for (size_t i = 0; i < tmp->n; i++) {
		struct eb_diag *d = &tmp->items[i];
		if (d->col > 0 && e->nmap > 0) {
			struct pos p = eb_reqfile__ll_pos(e->map, e->nmap, d->col - 1, e->pub.line);
			d->line = p.line;
			d->col = p.col;
		}
	}
	eb_diag_list_merge(out, tmp);
	eb_diag_list_release(tmp);
}

static int same_version(const char *a, const char *b)
{
	struct eb_version va, vb;
	int same;

	if (eb_version_parse(&va, a, strlen(a), NULL) < 0)
		return strcasecmp(a, b) == 0;
	if (eb_version_parse(&vb, b, strlen(b), NULL) < 0) {
		eb_version_release(&va);
		return strcasecmp(a, b) == 0;
	}
	same = eb_version_cmp(&va, &vb) == 0;
	eb_version_release(&va);
	eb_version_release(&vb);
	return same;
}

struct dup_key {
	const char *name;
	size_t idx;
};

static int dup_key_cmp(const void *pa, const void *pb)
{
	const struct dup_key *a = pa, *b = pb;
	int r = strcmp(a->name, b->name);

	if (r)
		return r;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* EB209.  Entries are grouped by normalised name first (sort), so the
 * pairwise comparison only runs inside a group: linear in practice, where
 * comparing every pair dominated large pip-compile files. */
static void check_duplicates(const struct eb_reqfile *rf, struct eb_diag_list *diags)
{
	struct dup_key *keys = eb_xcalloc(rf->n ? rf->n : 1, sizeof(*keys));
	char **markers = eb_xcalloc(rf->n ? rf->n : 1, sizeof(char *));
	size_t nk = 0;

	for (size_t i = 0; i < rf->n; i++) {
		const struct eb_requirement *r = &rf->items[i].pub.req;
		if (!r->norm_name || !eb_requirement_pinned_version(r))
			continue;
		keys[nk].name = r->norm_name;
		keys[nk].idx = i;
		nk++;
	}
	eb_sort(keys, nk, sizeof(*keys), dup_key_cmp);

	for (size_t g = 0; g < nk;) {
		size_t end = g + 1;
		while (end < nk && strcmp(keys[end].name, keys[g].name) == 0)
			end++;
		if (end - g > 1) {
			for (size_t k = g; k < end; k++) {
				size_t i = keys[k].idx;
				if (rf->items[i].pub.req.marker)
					markers[i] = eb_marker_to_string(rf->items[i].pub.req.marker);
			}
		}
		for (size_t kj = g + 1; kj < end; kj++) {
			size_t j = keys[kj].idx;
			const struct eb_reqfile_entry *b = &rf->items[j].pub;
			const char *vb = eb_requirement_pinned_version(&b->req);

			/* a package pinned differently under different markers
			 * (python_version < "3.9" / >= "3.9") is no conflict */
			for (size_t ki = g; ki < kj; ki++) {
				size_t i = keys[ki].idx;
				const struct eb_reqfile_entry *a = &rf->items[i].pub;
				const char *va = eb_requirement_pinned_version(&a->req);

				if ((markers[i] == NULL) != (markers[j] == NULL) ||
				    (markers[i] && strcmp(markers[i], markers[j]) != 0))
					continue;
				if (same_version(va, vb))
					continue;
				eb_diag_hint(eb_diag_add(diags, EB_SEV_ERROR, b->file, b->line, b->col,
							 "EB209",
							 "'%s' is pinned to %s here and to %s at %s:%u",
							 b->req.name, vb, va, a->file, a->line),
					     "keep one version");
				break;
			}
		}
		g = end;
	}
	for (size_t i = 0; i < rf->n; i++)
		free(markers[i]);
	free(markers);
	free(keys);
}

static void check_all(const struct eb_reqfile *rf, struct eb_diag_list *diags);

void eb_reqfile_check(const struct eb_reqfile *rf, struct eb_diag_list *diags)
{
	size_t n0 = diags->n;

	check_all(rf, diags);
	eb_reqfile__postprocess(rf, diags, n0);
}

static void check_all(const struct eb_reqfile *rf, struct eb_diag_list *diags)
{
	const struct eb_reqfile_options *op = &rf->opts;
	int any_hash = 0, hash_mode;

	for (size_t i = 0; i < rf->n; i++) {
		const struct ent *e = &rf->items[i];
		struct eb_diag_list tmp = EB_DIAG_LIST_INIT;

		if (e->pub.constraint)
			continue;
		if (eb_requirement_has_hash_option(&e->pub.req))
			any_hash = 1;
		eb_requirement_check_pin(&e->pub.req, e->pub.file, e->pub.line, 0, &tmp);
		remap_merge(e, &tmp, diags);
	}

	check_duplicates(rf, diags);

	/* pip's hash-checking mode: any --hash switches it on for the whole
	 * run (unless --no-require-hashes), --require-hashes always does. */
	hash_mode = op->require_hashes || (any_hash && !op->no_require_hashes);
	if (!hash_mode)
		return;
	for (size_t i = 0; i < rf->n; i++) {
		const struct eb_reqfile_entry *e = &rf->items[i].pub;
		struct eb_diag *d;

		/* editables, VCS, directories, unhashed URLs and unusable
		 * hashes (EB210) already have their own finding */
		if (e->constraint || e->req.editable || e->req.kind != EB_REQ_NAMED ||
		    eb_requirement_has_hash_option(&e->req))
			continue;
		if (any_hash)
			d = eb_diag_add(diags, EB_SEV_ERROR, e->file, e->line, e->col, "EB211",
					"'%s' has no --hash but other requirements do, and pip's hash-checking mode is all-or-nothing",
					e->req.name);
		else
			d = eb_diag_add(diags, EB_SEV_ERROR, e->file, e->line, e->col, "EB211",
					"'%s' has no --hash but --require-hashes is set",
					e->req.name);
		eb_diag_hint(d, "add --hash=sha256:<digest> for each file of '%s' (pip-compile --generate-hashes)",
			     e->req.name);
	}
}
