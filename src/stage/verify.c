/*
 * verify.c - the steps of `envbuild verify` (verify.h).  Every refutation
 * is a sentence in v->reason, the first one found; errors are kept for
 * what keeps the check from being made at all.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envspec/spec.h"
#include "lock/git.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layerin.h"
#include "ref/imageref.h"
#include "registry/referrers.h"
#include "stage/attest.h"
#include "stage/stage.h"
#include "stage/verify.h"
#include "trust/provenance.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/interrupt.h"

#define REFUTE_MAX 1024

struct plat {
	char *digest;
	char *platform; /* "linux/amd64", or NULL when the image is one manifest */
	json_t *statement;
};

struct ctx {
	struct eb_verify *v;
	struct eb_registry *reg;
	struct eb_blobstore *bs;
	char *repo;          /* "127.0.0.1:5000/ml/churn" */
	struct plat *plats;
	size_t nplats;
};

static int refute(struct eb_verify *v, const char *fmt, ...) EB_PRINTF(2, 3);
static int refute(struct eb_verify *v, const char *fmt, ...)
{
	va_list ap;

	if (v->reason)
		return 1;
	v->reason = eb_xmalloc(REFUTE_MAX);
	va_start(ap, fmt);
	vsnprintf(v->reason, REFUTE_MAX, fmt, ap);
	va_end(ap);
	return 1;
}

/* A blob of the repository, fetched (verified) into the store and read. */
static int blob(struct ctx *c, const char *digest, int64_t size, struct eb_buf *out,
		struct eb_error **err)
{
	struct eb_descriptor d = { 0 };
	int rc;

	d.media_type = (char *)"application/octet-stream";
	d.digest = (char *)digest;
	d.size = size;
	if (!eb_blobstore_present(c->bs, digest, size) &&
	    (rc = eb_registry_fetch_blob(c->reg, c->repo, &d, c->bs, err)) < 0)
		return rc;
	return eb_blobstore_read(c->bs, digest, out, EB_IMAGE_DOC_MAX, err);
}

static int get_doc(struct ctx *c, const char *digest, struct eb_remote_doc *out,
		   struct eb_error **err)
{
	char *ref = eb_xasprintf("%s@%s", c->repo, digest);
	int rc = eb_registry_get_manifest(c->reg, ref, out, err);

	free(ref);
	return rc;
}

/* 1 refuted, 0 signed by the key, negative error. */
static int check_signature(struct ctx *c, const char *digest, struct eb_error **err)
{
	char *ref = eb_xasprintf("%s:sha256-%s.sig", c->repo, eb_digest_hex(digest));
	struct eb_remote_doc doc = { 0 };
	json_t *m = NULL, *l;
	size_t i;
	int rc, found = 0;

	rc = eb_registry_get_manifest(c->reg, ref, &doc, err);
	free(ref);
	if (rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		return refute(c->v, "%s@%s has no signature", c->repo, digest);
	}
	if (rc < 0)
		return rc;
	m = json_loadb(doc.data.ptr, doc.data.len, 0, NULL);
	json_array_foreach(json_object_get(m, "layers"), i, l) {
		const char *ld = json_string_value(json_object_get(l, "digest"));
		const char *mt = json_string_value(json_object_get(l, "mediaType"));
		const char *sg = json_string_value(json_object_get(json_object_get(l, "annotations"),
								    EB_COSIGN_SIG_ANNOTATION));
		json_int_t sz = json_integer_value(json_object_get(l, "size"));
		struct eb_buf payload;
		char *signed_digest;
		if (!ld || !eb_digest_valid(ld) || !mt || strcmp(mt, EB_COSIGN_SIG_MEDIA_TYPE) != 0 ||
		    !sg || sz <= 0 || sz > 65536)
			continue;
		eb_buf_init(&payload, 0);
		if ((rc = blob(c, ld, sz, &payload, err)) < 0) {
			eb_buf_release(&payload);
			goto done;
		}
		signed_digest = eb_sign_payload_digest(payload.ptr, payload.len);
		if (signed_digest && strcmp(signed_digest, digest) == 0 &&
		    eb_sign_check(c->v->key, payload.ptr, payload.len, sg))
			found = 1;
		free(signed_digest);
		eb_buf_release(&payload);
		if (found)
			break;
	}
	rc = found ? 0 : refute(c->v, "%s@%s is not signed by the key", c->repo, digest);
done:
	json_decref(m);
	eb_remote_doc_release(&doc);
	return rc;
}

/* The provenance statement of p (signed by the key when there is one). */
static int find_provenance(struct ctx *c, struct plat *p, struct eb_error **err)
{
	json_t *index = NULL, *e;
	size_t i;
	int rc, bad_sig = 0;

	if ((rc = eb_referrers_list(c->reg, c->repo, p->digest, &index, NULL, err)) < 0)
		return rc;
	json_array_foreach(json_object_get(index, "manifests"), i, e) {
		const char *at = json_string_value(json_object_get(e, "artifactType"));
		const char *d = json_string_value(json_object_get(e, "digest"));
		struct eb_remote_doc doc = { 0 };
		json_t *m = NULL, *layer, *st;
		struct eb_buf env, payload;
		char *ptype = NULL;
		int ok = 0;
		if (!at || strcmp(at, EB_DSSE_MEDIA_TYPE) != 0 || !d || !eb_digest_valid(d))
			continue;
		if ((rc = get_doc(c, d, &doc, err)) < 0)
			break;
		m = json_loadb(doc.data.ptr, doc.data.len, 0, NULL);
		layer = json_array_get(json_object_get(m, "layers"), 0);
		eb_buf_init(&env, 0);
		eb_buf_init(&payload, 0);
		if (json_is_string(json_object_get(layer, "digest")) &&
		    (rc = blob(c, json_string_value(json_object_get(layer, "digest")),
			       json_integer_value(json_object_get(layer, "size")), &env, err)) == 0 &&
		    eb_dsse_open(env.ptr, env.len, c->v->key, &payload, &ptype, &ok, NULL) == 0 &&
		    strcmp(ptype, EB_INTOTO_PAYLOAD_TYPE) == 0) {
			st = json_loadb(payload.ptr, payload.len, JSON_REJECT_DUPLICATES, NULL);
			const char *sub = json_string_value(json_object_get(
				json_object_get(json_array_get(json_object_get(st, "subject"), 0),
						"digest"),
				"sha256"));
			const char *pt = json_string_value(json_object_get(st, "predicateType"));
			if (c->v->key && !ok) {
				bad_sig = 1;
			} else if (sub && pt && strcmp(sub, eb_digest_hex(p->digest)) == 0 &&
				   strcmp(pt, EB_SLSA_PREDICATE_TYPE) == 0) {
				/* the newest listed: the last push of these bytes */
				json_decref(p->statement);
				p->statement = json_incref(st);
			}
			json_decref(st);
		}
		free(ptype);
		eb_buf_release(&env);
		eb_buf_release(&payload);
		json_decref(m);
		eb_remote_doc_release(&doc);
		if (rc < 0)
			break;
	}
	json_decref(index);
	if (rc < 0)
		return rc;
	if (!p->statement)
		return refute(c->v, "%s@%s has no provenance%s", c->repo, p->digest,
			      bad_sig ? " signed by the key (one is there, with another signature)"
				      : c->v->key ? " signed by the key" : "");
	return 0;
}

static const char *param(const json_t *st, const char *name)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(json_object_get(st, "predicate"), "buildDefinition"),
				"externalParameters"),
		name));
}

static const char *commit_of(const json_t *st)
{
	const json_t *ext = json_object_get(
		json_object_get(json_object_get(st, "predicate"), "buildDefinition"),
		"externalParameters");
	return json_string_value(
		json_object_get(json_object_get(json_object_get(ext, "source"), "digest"), "gitCommit"));
}

static const json_t *deps_of(const json_t *st)
{
	return json_object_get(json_object_get(json_object_get(st, "predicate"), "buildDefinition"),
			       "resolvedDependencies");
}

/* ---- the first difference between two layers -------------------------------- */

struct entry {
	char *path;
	char sum[EB_DIGEST_STR_LEN + 1];
	char *meta; /* type, mode, owner, size, link */
};

static void entries_free(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].meta);
	}
	free(e);
}

static int read_entries(const char *path, struct entry **out, size_t *n, struct eb_error **err)
{
	struct eb_layerin *in = NULL;
	struct archive_entry *ae;
	struct archive *a;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = eb_layerin_open(&in, path, NULL, err)) < 0)
		return rc;
	a = eb_layerin_archive(in);
	while ((rc = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		struct eb_sha256 h;
		char buf[65536];
		la_ssize_t got;
		struct entry *e;
		if (eb_interrupted()) {
			rc = eb_error_set(err, EB_EINTR, "interrupted");
			goto done;
		}
		EB_ALLOC_GROW(*out, *n + 1, cap);
		e = &(*out)[(*n)++];
		e->path = eb_xstrdup(archive_entry_pathname(ae) ? archive_entry_pathname(ae) : "");
		e->meta = eb_xasprintf("%o %o %lld:%lld %lld %s", (unsigned)archive_entry_filetype(ae),
				       (unsigned)archive_entry_perm(ae),
				       (long long)archive_entry_uid(ae), (long long)archive_entry_gid(ae),
				       (long long)archive_entry_size(ae),
				       archive_entry_symlink(ae) ? archive_entry_symlink(ae)
				       : archive_entry_hardlink(ae) ? archive_entry_hardlink(ae) : "");
		eb_sha256_init(&h);
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0)
			eb_sha256_update(&h, buf, (size_t)got);
		eb_sha256_final(&h, e->sum);
		if (got < 0) {
			rc = eb_error_set(err, EB_EINVALID, "reading '%s': %s", path,
					  archive_error_string(a));
			goto done;
		}
	}
	rc = rc == ARCHIVE_EOF ? 0 : eb_error_set(err, EB_EINVALID, "reading '%s': %s", path,
						  archive_error_string(a));
done:
	eb_layerin_free(in);
	return rc;
}

/* The first path whose entry differs (caller frees), or NULL. */
static int first_path(const char *a, const char *b, char **out, struct eb_error **err)
{
	struct entry *ea = NULL, *eb = NULL;
	size_t na = 0, nb = 0, i;
	int rc;

	*out = NULL;
	if ((rc = read_entries(a, &ea, &na, err)) < 0 || (rc = read_entries(b, &eb, &nb, err)) < 0)
		goto done;
	for (i = 0; i < na && i < nb; i++)
		if (strcmp(ea[i].path, eb[i].path) != 0 || strcmp(ea[i].sum, eb[i].sum) != 0 ||
		    strcmp(ea[i].meta, eb[i].meta) != 0)
			break;
	if (i < na || i < nb)
		*out = eb_xstrdup(i < na ? ea[i].path : eb[i].path);
done:
	entries_free(ea, na);
	entries_free(eb, nb);
	return rc;
}

/* Pushed and rebuilt manifests differ: say where. */
static int explain(struct ctx *c, const char *platform, const char *remote, const char *local,
		   struct eb_error **err)
{
	struct eb_remote_doc rd = { 0 };
	struct eb_buf lb;
	struct eb_manifest rm = { 0 }, lm = { 0 };
	int rc;
	size_t i;

	eb_buf_init(&lb, 0);
	if ((rc = get_doc(c, remote, &rd, err)) < 0 ||
	    (rc = eb_blobstore_read(c->bs, local, &lb, EB_IMAGE_DOC_MAX, err)) < 0)
		goto done;
	if (eb_manifest_parse(&rm, rd.data.ptr, rd.data.len, NULL) < 0 ||
	    eb_manifest_parse(&lm, lb.ptr, lb.len, NULL) < 0) {
		refute(c->v, "%s: the pushed manifest %s is not the rebuilt %s", platform, remote,
		       local);
		goto done;
	}
	for (i = 0; i < rm.n_layers && i < lm.n_layers; i++)
		if (strcmp(rm.layers[i].digest, lm.layers[i].digest) != 0)
			break;
	if (i < rm.n_layers && i < lm.n_layers) {
		char *rp = NULL, *lp = eb_blobstore_path(c->bs, lm.layers[i].digest), *path = NULL;
		struct eb_descriptor d = { 0 };
		d.media_type = rm.layers[i].media_type;
		d.digest = rm.layers[i].digest;
		d.size = rm.layers[i].size;
		rc = eb_registry_fetch_blob(c->reg, c->repo, &d, c->bs, err);
		if (rc == 0) {
			rp = eb_blobstore_path(c->bs, rm.layers[i].digest);
			rc = first_path(rp, lp, &path, err);
		}
		if (rc == 0)
			refute(c->v, "%s: layer %zu is %s, the rebuild's is %s%s%s", platform, i + 1,
			       rm.layers[i].digest, lm.layers[i].digest,
			       path ? "; first differing path: " : "", path ? path : "");
		free(path);
		free(rp);
		free(lp);
	} else if (rm.n_layers != lm.n_layers) {
		refute(c->v, "%s: the image has %zu layers, the rebuild %zu", platform, rm.n_layers,
		       lm.n_layers);
	} else {
		refute(c->v, "%s: same layers, but the config is %s, the rebuild's %s", platform,
		       rm.config.digest, lm.config.digest);
	}
done:
	eb_manifest_release(&rm);
	eb_manifest_release(&lm);
	eb_remote_doc_release(&rd);
	eb_buf_release(&lb);
	return rc;
}

/* ---- the steps ---------------------------------------------------------------- */

static int list_platforms(struct ctx *c, const struct eb_remote_doc *top, struct eb_error **err)
{
	struct eb_index idx = { 0 };
	int rc;

	if (!eb_media_type_is_index(top->media_type)) {
		c->plats = eb_xcalloc(1, sizeof(*c->plats));
		c->plats[0].digest = eb_xstrdup(top->digest);
		c->nplats = 1;
		return 0;
	}
	if ((rc = eb_index_parse(&idx, top->data.ptr, top->data.len, err)) < 0)
		return rc;
	c->plats = eb_xcalloc(idx.n_manifests + 1, sizeof(*c->plats));
	for (size_t i = 0; i < idx.n_manifests; i++) {
		c->plats[c->nplats].digest = eb_xstrdup(idx.manifests[i].digest);
		c->plats[c->nplats].platform =
			idx.manifests[i].platform ? eb_platform_format(idx.manifests[i].platform) : NULL;
		c->nplats++;
	}
	eb_index_release(&idx);
	return 0;
}

/* The pushed config has the revision label: the rebuild must add it too. */
static int has_revision_label(struct ctx *c, struct eb_error **err)
{
	struct eb_remote_doc d = { 0 };
	struct eb_manifest m = { 0 };
	struct eb_buf cfg;
	json_t *j = NULL;
	int has = 0;

	eb_buf_init(&cfg, 0);
	if (get_doc(c, c->plats[0].digest, &d, err) == 0 &&
	    eb_manifest_parse(&m, d.data.ptr, d.data.len, NULL) == 0 &&
	    blob(c, m.config.digest, m.config.size, &cfg, err) == 0) {
		j = json_loadb(cfg.ptr, cfg.len, 0, NULL);
		has = json_object_get(json_object_get(json_object_get(j, "config"), "Labels"),
				      "org.opencontainers.image.revision") != NULL;
	}
	eb_error_clear(err);
	json_decref(j);
	eb_manifest_release(&m);
	eb_remote_doc_release(&d);
	eb_buf_release(&cfg);
	return has;
}

/* The first resolved dependency that differs, as a sentence. */
static char *deps_differ(const json_t *want, const json_t *got)
{
	size_t n = json_array_size(want) > json_array_size(got) ? json_array_size(want)
								 : json_array_size(got);
	for (size_t i = 0; i < n; i++) {
		json_t *a = json_array_get(want, i), *b = json_array_get(got, i);
		if (!json_equal(a, b)) {
			const char *na = json_string_value(json_object_get(a ? a : b, "name"));
			return eb_xasprintf("%s %s", na ? na : "a dependency",
					    !a ? "is in the lock only" : !b ? "is in the provenance only"
									: "differs");
		}
	}
	return NULL;
}

/* "linux/arm64/v8" in an index is the build's "linux/arm64" */
static int same_platform(const char *have, const char *want)
{
	struct eb_platform a = { 0 }, b = { 0 };
	int same = 0;

	if (have && want && eb_platform_parse(&a, have, NULL) == 0 &&
	    eb_platform_parse(&b, want, NULL) == 0)
		same = eb_platform_matches(&b, &a);
	eb_platform_release(&a);
	eb_platform_release(&b);
	return same;
}

static int rebuild(struct ctx *c, const char *spec_rel, const char *target, struct eb_error **err)
{
	struct eb_verify *v = c->v;
	struct eb_git *g = NULL;
	struct eb_stage st = { 0 };
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	char *tmp = NULL, *clone = NULL, *spec = NULL, *lock = NULL, *dir = NULL;
	int lock_fd = -1, rc;

	if ((rc = eb_git_open(&g, v->repo_dir ? v->repo_dir : ".", err)) < 0) {
		eb_error_hint(err, "run verify inside the repository the image was built from");
		return rc;
	}
	if ((rc = eb_blobstore_mkdtemp(c->bs, "stage-", &tmp, &lock_fd, err)) < 0)
		goto done;
	clone = eb_path_join(tmp, "src");
	rc = eb_git_clone_at(g, v->commit, clone, err);
	if (rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		refute(v, "commit %s (the provenance's) is not in this repository", v->commit);
		rc = 0;
		goto done;
	}
	if (rc < 0)
		goto done;
	spec = eb_path_join(clone, spec_rel);
	dir = eb_path_dirname(spec);
	lock = eb_path_join(dir, "envbuild.lock");
	if (access(spec, R_OK) != 0) {
		refute(v, "commit %s has no '%s' (the provenance's spec)", v->commit, spec_rel);
		goto done;
	}
	if (access(lock, R_OK) != 0) {
		refute(v, "commit %s has no envbuild.lock next to '%s': nothing to rebuild from",
		       v->commit, spec_rel);
		goto done;
	}
	st.spec_path = spec;
	st.mode = EB_LOCK_FROZEN;
	st.label_revision = has_revision_label(c, err);
	st.build.target = target;
	st.build.output_type = EB_OUTPUT_NONE;
	st.build.cache_dir = v->cache_dir;
	st.build.registry = c->reg;
	if ((rc = eb_layer_options_from_env(&st.build.layer, err)) < 0)
		goto done;
	if ((rc = eb_stage_begin(&st, 0, &diags, err)) < 0 ||
	    (rc = eb_stage_run_build(&st, &diags, err)) < 0) {
		/* a lock that --frozen cannot build from refutes the image */
		refute(v, "the lock at commit %s does not rebuild target '%s': %s", v->commit, target,
		       *err && (*err)->msg ? (*err)->msg : "findings in the spec");
		eb_error_clear(err);
		rc = 0;
		goto done;
	}
	for (size_t q = 0; q < st.rep.targets[0].nplatforms && !v->reason; q++) {
		const struct eb_build_platform *bp = &st.rep.targets[0].platforms[q];
		struct plat *p = NULL;
		struct eb_buf stmt;
		json_t *mine;
		char *why;
		for (size_t k = 0; k < c->nplats && !p; k++)
			if (c->nplats == 1 || same_platform(c->plats[k].platform, bp->platform))
				p = &c->plats[k];
		if (!p) {
			refute(v, "the rebuild has platform %s, the image does not", bp->platform);
			break;
		}
		eb_buf_init(&stmt, 0);
		eb_attest_statement(&st, 0, q, c->repo, v->commit, &stmt);
		mine = json_loadb(stmt.ptr, stmt.len, 0, NULL);
		eb_buf_release(&stmt);
		why = deps_differ(deps_of(p->statement), deps_of(mine));
		json_decref(mine);
		if (why) {
			refute(v, "the lock at commit %s does not match the provenance of %s: %s",
			       v->commit, p->digest, why);
			free(why);
			break;
		}
		if (strcmp(bp->manifest, p->digest) != 0) {
			rc = explain(c, bp->platform, p->digest, bp->manifest, err);
			break;
		}
		v->platforms++;
	}
	if (!v->reason && rc == 0 && v->platforms < c->nplats)
		refute(v, "the image has %zu platform manifests, the rebuild %u", c->nplats,
		       v->platforms);
done:
	eb_stage_end(&st);
	eb_diag_list_release(&diags);
	if (tmp) {
		struct eb_error *e = NULL;
		eb_fs_remove_tree(tmp, &e);
		eb_error_free(e);
	}
	if (lock_fd >= 0)
		close(lock_fd);
	free(tmp);
	free(clone);
	free(spec);
	free(dir);
	free(lock);
	eb_git_free(g);
	return rc;
}

int eb_stage_verify(struct eb_verify *v, struct eb_error **err)
{
	struct ctx c = { 0 };
	struct eb_imageref ir;
	struct eb_remote_doc top = { 0 };
	const char *spec_rel = NULL, *target = NULL;
	char *ref = NULL;
	int rc;

	c.v = v;
	c.reg = v->registry;
	if ((rc = eb_imageref_parse(&ir, v->ref, err)) < 0)
		return rc;
	{
		/* the repository as the user wrote it (the signature's identity) */
		char *at = strchr(v->ref, '@');
		char *name = eb_xstrndup(v->ref, at ? (size_t)(at - v->ref) : strlen(v->ref));
		char *slash = strrchr(name, '/');
		char *colon = strrchr(slash ? slash : name, ':');
		if (colon && ir.tag)
			*colon = '\0';
		c.repo = name;
	}
	if ((rc = eb_blobstore_open(&c.bs, v->cache_dir, err)) < 0)
		goto done;
	if (ir.digest) {
		v->digest = eb_xstrdup(ir.digest);
	} else {
		char d[EB_DIGEST_STR_LEN + 1];
		if ((rc = eb_registry_resolve(c.reg, v->ref, d, NULL, err)) < 0)
			goto done;
		v->digest = eb_xstrdup(d);
	}
	ref = eb_xasprintf("%s@%s", c.repo, v->digest);
	if ((rc = eb_registry_get_manifest(c.reg, ref, &top, err)) < 0 ||
	    (rc = list_platforms(&c, &top, err)) < 0)
		goto done;
	/* signatures: every platform manifest and the index */
	if (v->key) {
		for (size_t i = 0; i < c.nplats && !v->reason; i++)
			if ((rc = check_signature(&c, c.plats[i].digest, err)) < 0)
				goto done;
			else if (rc == 0)
				v->signatures++;
		if (!v->reason && strcmp(c.plats[0].digest, v->digest) != 0) {
			if ((rc = check_signature(&c, v->digest, err)) < 0)
				goto done;
			else if (rc == 0)
				v->signatures++;
		}
		if (v->reason)
			goto out;
	}
	/* provenance: one per platform manifest, all from one commit */
	for (size_t i = 0; i < c.nplats; i++) {
		const json_t *st;
		if ((rc = find_provenance(&c, &c.plats[i], err)) < 0)
			goto done;
		if (v->reason)
			goto out;
		st = c.plats[i].statement;
		if (i == 0) {
			spec_rel = param(st, "spec");
			target = param(st, "target");
			if (commit_of(st))
				v->commit = eb_xstrdup(commit_of(st));
		} else if (!param(st, "spec") || !param(st, "target") || !spec_rel || !target ||
			   strcmp(param(st, "spec"), spec_rel) != 0 ||
			   strcmp(param(st, "target"), target) != 0 || !commit_of(st) || !v->commit ||
			   strcmp(commit_of(st), v->commit) != 0) {
			refute(v, "the platform manifests' provenances name different builds");
			goto out;
		}
	}
	if (!v->commit || !spec_rel || !target) {
		refute(v, "the provenance names no commit, spec or target: nothing to rebuild");
		goto out;
	}
	v->target = eb_xstrdup(target);
	if ((rc = rebuild(&c, spec_rel, target, err)) < 0)
		goto done;
out:
	rc = 0;
	v->verified = !v->reason;
done:
	for (size_t i = 0; i < c.nplats; i++) {
		free(c.plats[i].digest);
		free(c.plats[i].platform);
		json_decref(c.plats[i].statement);
	}
	free(c.plats);
	free(c.repo);
	free(ref);
	eb_remote_doc_release(&top);
	eb_blobstore_free(c.bs);
	eb_imageref_release(&ir);
	return rc;
}

void eb_verify_release(struct eb_verify *v)
{
	free(v->digest);
	free(v->target);
	free(v->commit);
	free(v->reason);
	v->digest = v->target = v->commit = v->reason = NULL;
}
