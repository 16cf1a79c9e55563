/*
 * pyoverlap.c - two pinned wheels that install the same file (nvidia-*
 * wheels all ship nvidia/__init__.py; opencv-python and
 * opencv-python-headless both ship cv2/).  pip installs one after the
 * other and the last one's bytes stay; envbuild writes each package
 * layer on its own (and caches it), so it decides the winner up front
 * from the wheels' zip directories, and every other wheel leaves the path
 * out of its layer (its RECORD still lists it, as pip's would).
 *
 * The winner is what pip's order gives for requirements of equal depth:
 * pip's resolver installs them by (depth, name) descending
 * (get_installation_order), so the first name is written last and stays.
 * Depth is not modelled (a package and its own dependency writing one
 * path is not a case seen in practice).  Same bytes (the zip's CRC-32 and
 * size agree) is one entry and no message; different bytes is warning
 * EB260 naming both pins and the path.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/pyinstall.h"
#include "oci/blobstore.h"
#include "python/wheel.h"
#include "util/alloc.h"
#include "util/buf.h"

/* One installed path of one wheel. */
struct owner {
	char *dest;    /* absolute layer path (owned) */
	size_t dist;   /* index in e->dists */
	uint32_t crc32;
	uint64_t size;
};

static int cmp_owner(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	int c = strcmp(x->dest, y->dest);
	/* ties by dist: the first name first, the winner */
	return c ? c : (x->dist > y->dist) - (x->dist < y->dist);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int has_suffix(const char *s, size_t n, const char *suf)
{
	size_t l = strlen(suf);
	return n >= l && memcmp(s + n - l, suf, l) == 0;
}

/* Where a zip member lands in the image, NULL when it cannot meet
 * another wheel's file: .dist-info (one per project), headers (a
 * directory per project), bytecode (never installed), the root when
 * purelib and platlib differ (which one depends on each wheel's WHEEL
 * file; left to the layer order). */
static char *dest_of(const struct eb_pytarget *t, const char *name)
{
	const char *slash = strchr(name, '/'), *rest;
	size_t top = slash ? (size_t)(slash - name) : strlen(name);
	int same_lib = strcmp(t->purelib, t->platlib) == 0;

	if (strstr(name, "__pycache__/") || has_suffix(name, strlen(name), ".pyc"))
		return NULL;
	if (slash && has_suffix(name, top, ".dist-info"))
		return NULL;
	if (slash && has_suffix(name, top, ".data")) {
		const char *k = slash + 1, *ks = strchr(k, '/');
		if (!ks || !ks[1])
			return NULL;
		rest = ks + 1;
		if ((size_t)(ks - k) == 7 && memcmp(k, "purelib", 7) == 0)
			return eb_xasprintf("%s/%s", t->purelib, rest);
		if ((size_t)(ks - k) == 7 && memcmp(k, "platlib", 7) == 0)
			return eb_xasprintf("%s/%s", t->platlib, rest);
		if ((size_t)(ks - k) == 7 && memcmp(k, "scripts", 7) == 0)
			return eb_xasprintf("%s/%s", t->scripts, rest);
		if ((size_t)(ks - k) == 4 && memcmp(k, "data", 4) == 0)
			return eb_xasprintf("%s/%s", t->data, rest);
		return NULL;
	}
	return same_lib ? eb_xasprintf("%s/%s", t->purelib, name) : NULL;
}

static void add_skip(struct eb_pydist *d, const char *dest)
{
	d->skip = eb_xrealloc(d->skip, (d->nskip + 1) * sizeof(*d->skip));
	d->skip[d->nskip++] = eb_xstrdup(dest);
}

/* The EB260 warning for one (winner, loser) pair, naming the first paths. */
struct clash {
	size_t win, lose;
	size_t n;
	struct eb_buf paths;
};

int eb_pyenv_plan_overlaps(struct eb_pyenv *e, struct eb_blobstore *bs,
			   struct eb_diag_list *diags, struct eb_error **err)
{
	const struct eb_pytarget *t = &e->target;
	struct owner *o = NULL;
	size_t no = 0, ocap = 0;
	struct clash *cl = NULL;
	size_t ncl = 0;
	int r = 0;

	for (size_t i = 0; i < e->n; i++) {
		struct eb_pydist *d = &e->dists[i];
		struct eb_wheel_entry *we = NULL;
		size_t nwe = 0;
		char *path;

		if (d->in_base)
			continue;
		path = eb_blobstore_path(bs, d->digest);
		r = eb_wheel_list(path, &we, &nwe, err);
		free(path);
		if (r < 0) {
			eb_error_locate(err, d->file, d->line, d->col);
			goto done;
		}
		for (size_t k = 0; k < nwe; k++) {
			char *dest = dest_of(t, we[k].name);
			if (!dest)
				continue;
			EB_ALLOC_GROW(o, no + 1, ocap);
			o[no].dest = dest;
			o[no].dist = i;
			o[no].crc32 = we[k].crc32;
			o[no].size = we[k].size;
			no++;
		}
		eb_wheel_entries_free(we, nwe);
	}
	if (no)
		eb_sort(o, no, sizeof(*o), cmp_owner);
	for (size_t i = 0; i < no;) {
		size_t j = i + 1;
		while (j < no && strcmp(o[j].dest, o[i].dest) == 0)
			j++;
		for (size_t k = i + 1; k < j; k++) {
			struct clash *c = NULL;
			if (o[k].dist == o[i].dist)
				continue; /* the zip names a file twice: the install refuses it */
			add_skip(&e->dists[o[k].dist], o[i].dest);
			if (o[k].crc32 == o[i].crc32 && o[k].size == o[i].size)
				continue;
			for (size_t m = 0; m < ncl; m++)
				if (cl[m].win == o[i].dist && cl[m].lose == o[k].dist)
					c = &cl[m];
			if (!c) {
				cl = eb_xrealloc(cl, (ncl + 1) * sizeof(*cl));
				c = &cl[ncl++];
				c->win = o[i].dist;
				c->lose = o[k].dist;
				c->n = 0;
				eb_buf_init(&c->paths, 0);
			}
			if (c->n < 3)
				(void)eb_buf_addf(&c->paths, "%s'%s'", c->n ? ", " : "", o[i].dest);
			c->n++;
		}
		i = j;
	}
	for (size_t i = 0; i < e->n; i++)
		if (e->dists[i].nskip)
			eb_sort(e->dists[i].skip, e->dists[i].nskip, sizeof(char *), cmp_str);
	for (size_t m = 0; m < ncl; m++) {
		const struct eb_pydist *w = &e->dists[cl[m].win], *l = &e->dists[cl[m].lose];
		char more[48] = "";
		if (cl[m].n > 3)
			snprintf(more, sizeof(more), " and %zu more path%s", cl[m].n - 3,
				 cl[m].n == 4 ? "" : "s");
		eb_diag_add(diags, EB_SEV_WARNING, l->file, l->line, l->col, "EB260",
			    "%s==%s and %s==%s both install %s%s with different bytes: %s==%s's "
			    "stay (pip installs it last: same depth, first by name)",
			    w->display, w->version, l->display, l->version, cl[m].paths.ptr,
			    more,
			    w->display, w->version);
	}
done:
	for (size_t i = 0; i < no; i++)
		free(o[i].dest);
	free(o);
	for (size_t m = 0; m < ncl; m++)
		eb_buf_release(&cl[m].paths);
	free(cl);
	return r;
}
