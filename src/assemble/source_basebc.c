/*
 * source_basebc.c - the base image's own bytecode gaps: the official
 * python:*-slim images delete the standard library's .pyc, so every
 * process of the image compiles what it imports from it again.  For a
 * target with Python packages the build notes the gap (EB242); with
 * `base_bytecode: true` the missing .pyc of the base's standard library
 * and site directories are compiled by the base's interpreter (in the
 * sandbox, assemble/bytecode.h) into a layer of their own, just above the
 * base (first in eb_sources[]: it changes only with the base).  A
 * platform this machine cannot run is compiled by the same Python of
 * another platform of the base (assemble/bcsibling.h), from the target
 * platform's own files.
 *
 * Timestamp .pyc record the mtime the base gives each source (the tree is
 * unpacked with its mtimes), so they are valid for the base's files as
 * they are.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "assemble/bcsibling.h"
#include "assemble/build.h"
#include "assemble/bytecode.h"
#include "assemble/source.h"
#include "oci/cache.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"

struct basebc_plan {
	char **py; /* base paths ("usr/local/lib/python3.11/os.py") without a .pyc */
	size_t npy;
	char *interpreter;
	struct eb_bytecode *bc;
	/* a foreign platform's: its tree, where the sources are read (bc runs
	 * another platform's interpreter); NULL: bc's tree */
	struct eb_bytecode *src;
	char tag[32];
	char *created_by;
};

static int basebc_needs_base(const struct eb_spec_target *t)
{
	return t->base_bytecode || t->requirements.n > 0 || t->packages.n > 0;
}

/* "usr/local/lib/python3.11" or "usr/lib/python3.11" and the interpreter
 * of that version the base has; 0 when none. */
static int find_python(const struct eb_basefs *fs, char *libdir, size_t llen, char *interp,
		       size_t ilen)
{
	static const char *const prefixes[] = { "usr/local", "usr" };

	for (size_t p = 0; p < 2; p++)
		for (int minor = 40; minor >= 6; minor--) {
			const struct eb_basefs_node *n;

			snprintf(libdir, llen, "%s/lib/python3.%d/os.py", prefixes[p], minor);
			n = eb_basefs_lookup(fs, libdir);
			if (!n || n->type != EB_BASEFS_FILE)
				continue;
			snprintf(interp, ilen, "/%s/bin/python3.%d", prefixes[p], minor);
			if (!eb_basefs_lookup(fs, interp + 1))
				continue;
			snprintf(libdir, llen, "%s/lib/python3.%d", prefixes[p], minor);
			return minor;
		}
	return 0;
}

static void add_missing(struct basebc_plan *bp, const struct eb_basefs *fs, const char *dir,
			const char *tag, size_t *cap)
{
	const struct eb_basefs_node *first;
	size_t n = eb_basefs_under(fs, dir, &first);

	for (size_t i = 0; i < n; i++) {
		const struct eb_basefs_node *nd = &first[i];
		size_t l = strlen(nd->path);
		char *pyc, *with_slash;

		if (nd->type != EB_BASEFS_FILE || l < 4 || strcmp(nd->path + l - 3, ".py") != 0 ||
		    strstr(nd->path, "/__pycache__/"))
			continue;
		with_slash = eb_xasprintf("/%s", nd->path);
		pyc = eb_bytecode_pyc_path(with_slash, tag);
		free(with_slash);
		if (pyc && !eb_basefs_lookup(fs, pyc + 1)) {
			EB_ALLOC_GROW(bp->py, bp->npy + 1, *cap);
			bp->py[bp->npy++] = eb_xstrdup(nd->path);
		}
		free(pyc);
	}
}

static int basebc_plan(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
		       const struct eb_source_base *base, struct eb_source_plan *plan,
		       struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	struct basebc_plan *bp;
	char libdir[128], interp[128], tag[32];
	struct eb_bytecode_ident id;
	const char *host = eb_bytecode_host_platform();
	struct eb_sha256 h;
	char *what, *via = NULL;
	size_t cap = 0;
	int minor, r;

	if (!base->present || !base->fs || !basebc_needs_base(t) || !t->bytecode)
		return 0;
	if (!(minor = find_python(base->fs, libdir, sizeof(libdir), interp, sizeof(interp))))
		return 0;
	bp = eb_xcalloc(1, sizeof(*bp));
	plan->state = bp;
	snprintf(tag, sizeof(tag), "cpython-3%d", minor);
	add_missing(bp, base->fs, libdir, tag, &cap);
	if (!bp->npy)
		return 0;
	if (!t->base_bytecode) {
		struct eb_diag *d = eb_diag_add(
			c->diags, EB_SEV_NOTE, c->spec->path, t->pos.line, t->pos.col, "EB242",
			"target '%s' (%s): the base's Python has no bytecode for %zu of its own modules "
			"(%s): every process compiles what it imports of them",
			t->name, platform, bp->npy, libdir);
		eb_diag_hint(d, "`base_bytecode: true` compiles them into a layer of their own");
		return 0;
	}
	bp->interpreter = eb_xstrdup(interp);
	what = eb_xasprintf("target '%s' (%s)", t->name, platform);
	if (!host || strcmp(platform, host) != 0) {
		struct eb_bcsibling sib;
		struct eb_diag *d;

		r = eb_bcsibling_find(c, t, platform, base, interp, what, &sib, err);
		if (r < 0) {
			free(what);
			return eb_error_wrap(err, "target '%s' (%s): base_bytecode", t->name, platform);
		}
		if (r == 0) {
			d = eb_diag_add(c->diags, EB_SEV_WARNING, c->spec->path, t->pos.line,
					t->pos.col, "EB241",
					"target '%s' (%s): base_bytecode: this machine (%s) cannot run the "
					"base's %s, and no platform of the base it can run has the same "
					"Python: %s",
					t->name, platform, host ? host : "unknown", interp, sib.why);
			eb_diag_hint(d, "a base with a %s image of the same Python, or a build on a %s "
					"machine, gives them bytecode",
				     host ? host : "runnable", platform);
			eb_bcsibling_release(&sib);
			free(what);
			return 0;
		}
		d = eb_diag_add(c->diags, EB_SEV_NOTE, c->spec->path, t->pos.line, t->pos.col,
				"EB243",
				"target '%s' (%s): base_bytecode: compiled by the base's %s %s (%s, the "
				"same as the %s image's: %s)",
				t->name, platform, sib.platform, eb_path_basename(interp), sib.id.version,
				platform, sib.compared);
		eb_diag_hint(d, "bytecode depends on the Python version, not the machine");
		bp->bc = eb_steal_ptr(&sib.bc);
		id = sib.id;
		via = eb_xasprintf(" by %s %s", sib.platform, sib.manifest);
		eb_bcsibling_release(&sib);
		/* the sources are the target platform's own files: a tree of
		 * its layers, never run */
		r = eb_bytecode_new(&bp->src, c->bs, base->layers, base->diff_ids, base->nlayers,
				    interp, c->o->layer.epoch, what, c->diags, err);
	} else {
		r = eb_bytecode_new(&bp->bc, c->bs, base->layers, base->diff_ids, base->nlayers,
				    interp, c->o->layer.epoch, what, c->diags, err);
		if (r == 0)
			r = eb_bytecode_ident(bp->bc, &id, err);
	}
	free(what);
	if (r < 0) {
		free(via);
		return eb_error_wrap(err, "target '%s' (%s): base_bytecode", t->name, platform);
	}
	snprintf(bp->tag, sizeof(bp->tag), "%s", id.tag);
	eb_sha256_init(&h);
	{
		char *k = eb_xasprintf("basebc 2 %d %s %s %s %s%s\n%d %d %u %u\n", EB_BYTECODE_FORMAT,
				       id.magic, id.tag, id.version, interp, via ? via : "",
				       c->o->layer.compression, c->o->layer.level, c->o->layer.uid,
				       c->o->layer.gid);
		eb_sha256_update(&h, k, strlen(k));
		free(k);
		free(via);
	}
	for (size_t i = 0; i < base->nlayers; i++) {
		const char *b = eb_path_basename(base->layers[i]);
		eb_sha256_update(&h, b, strlen(b) + 1);
	}
	plan->layers = eb_xcalloc(2, sizeof(*plan->layers));
	eb_sha256_final(&h, plan->layers[0].key);
	bp->created_by = eb_xasprintf("envbuild: compile the base's %s (%zu modules)", libdir,
				      bp->npy);
	plan->layers[0].created_by = bp->created_by;
	plan->n = 1;
	return 0;
}

static int basebc_write(struct eb_source *s, struct eb_source_plan *plan,
			struct eb_build_layer *out, struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	struct basebc_plan *bp = plan->state;
	struct eb_bytecode_src *srcs = NULL;
	struct eb_bytecode_pyc *pycs = NULL;
	struct eb_layer_builder *b = NULL;
	struct eb_layer_result res;
	char **abs = NULL, **paths = NULL;
	const char *root;
	json_t *rec = NULL;
	size_t np = 0;
	int r;

	if (!plan->n)
		return 0;
	if (eb_cache_record_get(c->bs, "basebc", plan->layers[0].key, &rec) == 1) {
		const char *dg = json_string_value(json_object_get(rec, "digest"));
		const char *di = json_string_value(json_object_get(rec, "diffId"));

		if (dg && di && eb_digest_valid(dg) && eb_digest_valid(di)) {
			snprintf(out[0].digest, sizeof(out[0].digest), "%s", dg);
			snprintf(out[0].diff_id, sizeof(out[0].diff_id), "%s", di);
			out[0].size = (uint64_t)json_integer_value(json_object_get(rec, "size"));
			out[0].reused = 1;
			out[0].created_by = eb_xstrdup(bp->created_by);
			json_decref(rec);
			return 0;
		}
		json_decref(rec);
	}
	if ((r = eb_bytecode_tree(bp->src ? bp->src : bp->bc, &root, err)) < 0)
		return r;
	srcs = eb_xcalloc(bp->npy + 1, sizeof(*srcs));
	abs = eb_xcalloc(bp->npy + 1, sizeof(*abs));
	paths = eb_xcalloc(bp->npy + 1, sizeof(*paths));
	for (size_t i = 0; i < bp->npy; i++) {
		struct stat st;

		abs[i] = eb_xasprintf("/%s", bp->py[i]);
		paths[i] = eb_xasprintf("%s/%s", root, bp->py[i]);
		srcs[i].dest = abs[i];
		srcs[i].path = paths[i];
		/* the base's own mtime, which the import system compares */
		srcs[i].mtime = stat(paths[i], &st) == 0 ? (int64_t)st.st_mtime : 0;
	}
	eb_bytecode_set_quiet(bp->bc, 1);
	r = eb_bytecode_compile(bp->bc, srcs, bp->npy, c->spec->path, 0, 0, &pycs, &np, err);
	if (r < 0)
		goto done;
	b = eb_layer_builder_new();
	for (size_t i = 0; r == 0 && i < np; i++)
		r = eb_layer_add_file_as(b, pycs[i].dest, pycs[i].path, 0644, err);
	if (r == 0)
		r = eb_layer_write_cached(b, &c->o->layer, c->bs, &res, NULL, err);
	if (r < 0)
		goto done;
	memcpy(out[0].digest, res.digest, sizeof(out[0].digest));
	memcpy(out[0].diff_id, res.diff_id, sizeof(out[0].diff_id));
	out[0].size = res.size;
	out[0].reused = res.cached;
	out[0].created_by = eb_xstrdup(bp->created_by);
	rec = json_pack("{s:s, s:s, s:I}", "digest", res.digest, "diffId", res.diff_id, "size",
			(json_int_t)res.size);
	if (rec)
		(void)eb_cache_record_put(c->bs, "basebc", plan->layers[0].key, rec, NULL);
	json_decref(rec);
done:
	eb_layer_builder_free(b);
	eb_bytecode_pycs_free(pycs, np);
	for (size_t i = 0; i < bp->npy; i++) {
		free(abs[i]);
		free(paths[i]);
	}
	free(abs);
	free(paths);
	free(srcs);
	return r;
}

static void basebc_report(struct eb_source *s, const struct eb_source_plan *plan,
			  struct eb_build_platform *p)
{
	const struct basebc_plan *bp = plan->state;
	struct eb_bytecode_stats st;

	(void)s;
	if (!bp || !bp->bc)
		return;
	eb_bytecode_stats(bp->bc, &st);
	p->pyc_compiled += st.compiled;
	p->pyc_reused += st.reused;
}

static void basebc_plan_release(struct eb_source_plan *plan)
{
	struct basebc_plan *bp = plan->state;

	if (bp) {
		for (size_t i = 0; i < bp->npy; i++)
			free(bp->py[i]);
		free(bp->py);
		free(bp->interpreter);
		free(bp->created_by);
		eb_bytecode_free(bp->bc);
		eb_bytecode_free(bp->src);
		free(bp);
	}
	free(plan->layers);
	memset(plan, 0, sizeof(*plan));
}

const struct eb_source_ops eb_source_basebc = {
	.name = "base_bytecode",
	.needs_base = basebc_needs_base,
	.plan = basebc_plan,
	.write = basebc_write,
	.report = basebc_report,
	.plan_release = basebc_plan_release,
};
