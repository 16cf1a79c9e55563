/*
 * attest.c - signatures, SBOMs and provenance for pushed images: the
 * facts come from the build report (what envbuild installed, by sha256)
 * and from the base's layers (dpkg status, dist-info), the documents from
 * trust/, the attachments through registry/referrers.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "assemble/pyinstall.h"
#include "debian/control.h"
#include "debian/deb.h"
#include "envspec/spec.h"
#include "lock/git.h"
#include "oci/image.h"
#include "python/metadata.h"
#include "python/target.h"
#include "python/wheel.h"
#include "registry/client.h"
#include "registry/referrers.h"
#include "stage/attest.h"
#include "trust/provenance.h"
#include "trust/sbom.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"

struct comps {
	struct eb_sbom_component *v;
	size_t n, cap;
	char **owned;
	size_t nowned, capowned;
};

static const char *own(struct comps *c, const char *s)
{
	if (!s)
		return NULL;
	EB_ALLOC_GROW(c->owned, c->nowned + 1, c->capowned);
	c->owned[c->nowned] = eb_xstrdup(s);
	return c->owned[c->nowned++];
}

static void comps_add(struct comps *c, enum eb_sbom_kind kind, const char *origin, const char *name,
		      const char *version, const char *arch, const char *sha256, const char *url)
{
	struct eb_sbom_component *x;

	EB_ALLOC_GROW(c->v, c->n + 1, c->cap);
	x = &c->v[c->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->origin = origin;
	x->name = own(c, name);
	x->version = own(c, version);
	x->arch = own(c, arch);
	if (sha256 && *sha256) {
		char *d = strncmp(sha256, "sha256:", 7) == 0 ? eb_xstrdup(sha256)
							      : eb_xasprintf("sha256:%s", sha256);
		x->sha256 = own(c, d);
		free(d);
	}
	x->url = own(c, url);
}

static void comps_release(struct comps *c)
{
	for (size_t i = 0; i < c->nowned; i++)
		free(c->owned[i]);
	free(c->owned);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static const struct eb_spec_target *spec_target(const struct eb_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->ntargets; i++)
		if (strcmp(spec->targets[i].name, name) == 0)
			return &spec->targets[i];
	return NULL;
}

/* The apt packages of the platform (the lock's record shape). */
static const json_t *apt_packages(const struct eb_build_platform *p)
{
	const json_t *pk = json_object_get(p->apt, "packages");
	const json_t *v = json_object_get(pk, p->platform);

	if (!v && json_object_size(pk) == 1) {
		const char *k;
		const json_t *x;
		json_object_foreach((json_t *)pk, k, x)
			v = x;
	}
	return json_is_array(v) ? v : NULL;
}

static int apt_replaces(const json_t *apt, const char *name, const char *arch)
{
	size_t i;
	const json_t *e;

	json_array_foreach(apt, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		const char *a = json_string_value(json_object_get(e, "architecture"));
		if (n && strcmp(n, name) == 0 && (!a || !arch || strcmp(a, arch) == 0 ||
						  strcmp(a, "all") == 0 || strcmp(arch, "all") == 0))
			return 1;
	}
	return 0;
}

static const struct eb_build_package *wheel_named(const struct eb_build_platform *p,
						  const char *name)
{
	for (size_t i = 0; i < p->npackages; i++)
		if (strcmp(p->packages[i].name, name) == 0)
			return &p->packages[i];
	return NULL;
}

/* The base's layers as blob paths.  A push leaves base layers in their
 * registry: with fetch, those the store lacks are fetched from the base's
 * repository (the scans below first try their cache records, which need
 * no layer at all). */
static int base_layers(struct eb_stage *s, const struct eb_build_target *t,
		       const struct eb_build_platform *p, struct eb_blobstore *bs, int fetch,
		       char ***paths, size_t *n, int *missing, struct eb_error **err)
{
	int rc = 0;

	*paths = eb_xcalloc(p->nlayers + 1, sizeof(char *));
	*n = 0;
	*missing = 0;
	for (size_t i = 0; i < p->nlayers; i++) {
		const struct eb_build_layer *l = &p->layers[i];
		if (!l->from_base)
			continue;
		if (!eb_blobstore_present(bs, l->digest, (int64_t)l->size)) {
			struct eb_descriptor d = { 0 };
			if (!fetch) {
				(*missing)++;
			} else if (!t->base_repository || !s->build.registry) {
				return eb_error_set(err, EB_ENOTFOUND, "base layer '%s' of '%s' is not "
						    "in the cache", l->digest, t->name);
			} else {
				d.media_type = (char *)EB_MEDIA_OCI_LAYER_GZIP;
				d.digest = (char *)l->digest;
				d.size = (int64_t)l->size;
				rc = eb_registry_fetch_blob(s->build.registry, t->base_repository, &d,
							    bs, err);
				if (rc < 0)
					return rc;
			}
		}
		(*paths)[(*n)++] = eb_blobstore_path(bs, l->digest);
	}
	return 0;
}

static void paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* The license a wheel's METADATA states, when the wheel is in the store
 * (a cached layer needs no wheel: then none is read, nothing fetched);
 * the caller frees. */
static char *wheel_license(struct eb_blobstore *bs, const struct eb_build_package *w)
{
	struct eb_metadata md;
	struct eb_error *ignored = NULL;
	char *path, *out = NULL;

	if (!eb_digest_valid(w->sha256) || !eb_blobstore_present(bs, w->sha256, w->size))
		return NULL;
	path = eb_blobstore_path(bs, w->sha256);
	memset(&md, 0, sizeof(md));
	if (eb_wheel_read_metadata(&md, path, &ignored) == 0 && md.license)
		out = eb_xstrdup(md.license);
	eb_metadata_release(&md);
	eb_error_free(ignored);
	free(path);
	return out;
}

/* The base's final dpkg status (cache record first). */
static int base_status(struct eb_blobstore *bs, char **paths, size_t n, struct eb_buf *status,
		       struct eb_error **err)
{
	char **lp = NULL, **lt = NULL;
	size_t nl = 0;
	int rc;

	eb_buf_truncate(status, 0);
	rc = eb_debian_base_scan_cached(bs, (const char *const *)paths, n, status, &lp, &lt, &nl,
					err);
	eb_debian_links_free(lp, lt, nl);
	return rc;
}

static int gather(struct eb_stage *s, const struct eb_build_target *t,
		  const struct eb_build_platform *p, struct eb_blobstore *bs, struct comps *c,
		  struct eb_error **err)
{
	const json_t *apt = apt_packages(p);
	const struct eb_spec_target *st = spec_target(s->lf.spec, t->name);
	struct eb_pytarget_overrides ov = { 0 };
	struct eb_pytarget pt = { 0 };
	struct eb_buf status;
	char **paths = NULL;
	size_t npaths = 0;
	int rc, missing = 0, have_py = 0;

	eb_buf_init(&status, 0);
	if (st) {
		ov.python_version = st->python.s;
		ov.interpreter = st->interpreter.s;
		ov.site_packages = st->site_packages.s;
		ov.libc = st->libc.s;
	}
	if ((rc = base_layers(s, t, p, bs, 0, &paths, &npaths, &missing, err)) < 0)
		goto done;
	if (npaths) {
		struct eb_error *ignored = NULL;
		rc = base_status(bs, paths, npaths, &status, missing ? &ignored : err);
		/* a base without Python is no error: it has no distributions */
		have_py = eb_pyenv_detect(&pt, bs, (const char *const *)paths, NULL, NULL, npaths,
					  p->platform, &ov, &ignored) == 0;
		eb_error_free(ignored);
		ignored = NULL;
		if ((rc < 0 || !have_py) && missing) {
			/* a cache record missed: read the layers themselves */
			paths_free(paths, npaths);
			paths = NULL;
			if ((rc = base_layers(s, t, p, bs, 1, &paths, &npaths, &missing, err)) < 0 ||
			    (rc = base_status(bs, paths, npaths, &status, err)) < 0)
				goto done;
			if (!have_py) {
				eb_pytarget_release(&pt);
				memset(&pt, 0, sizeof(pt));
				have_py = eb_pyenv_detect(&pt, bs, (const char *const *)paths, NULL,
							  NULL, npaths, p->platform, &ov,
							  &ignored) == 0;
				eb_error_free(ignored);
			}
		} else if (rc < 0) {
			goto done;
		}
	}
	if (status.len) {
		/* the base's Debian packages: its final dpkg status */
		struct eb_deb822 rd;
		struct eb_deb822_para para = EB_DEB822_PARA_INIT;
		eb_deb822_init(&rd, status.ptr, status.len, "/var/lib/dpkg/status");
		while ((rc = eb_deb822_next(&rd, &para, err)) == 1) {
			const char *name = eb_deb822_get(&para, "Package");
			const char *ver = eb_deb822_get(&para, "Version");
			const char *arch = eb_deb822_get(&para, "Architecture");
			const char *stt = eb_deb822_get(&para, "Status");
			size_t sl = stt ? strlen(stt) : 0;
			if (!name || !ver || sl < 10 || strcmp(stt + sl - 10, " installed") != 0)
				continue;
			if (apt && apt_replaces(apt, name, arch))
				continue;
			comps_add(c, EB_SBOM_DEB, "base", name, ver, arch, NULL, NULL);
		}
		eb_deb822_para_release(&para);
		if (rc < 0)
			goto done;
	}
	/* the base's Python distributions */
	for (size_t i = 0; have_py && i < pt.ndists; i++) {
		const struct eb_build_package *w = wheel_named(p, pt.dists[i].name);
		if (w && !w->in_base)
			continue; /* replaced by the pinned wheel */
		comps_add(c, EB_SBOM_PYPI, "base", pt.dists[i].name, pt.dists[i].version, NULL, NULL,
			  NULL);
	}
	if (apt) {
		size_t i;
		const json_t *e;
		json_array_foreach(apt, i, e)
			comps_add(c, EB_SBOM_DEB, "apt", json_string_value(json_object_get(e, "name")),
				  json_string_value(json_object_get(e, "version")),
				  json_string_value(json_object_get(e, "architecture")),
				  json_string_value(json_object_get(e, "sha256")),
				  json_string_value(json_object_get(e, "url")));
	}
	for (size_t i = 0; i < p->npackages; i++) {
		const struct eb_build_package *w = &p->packages[i];
		if (w->in_base)
			continue; /* listed as the base's */
		char *lic = wheel_license(bs, w);
		comps_add(c, EB_SBOM_PYPI, "wheel", w->name, w->version, NULL, w->sha256, w->url);
		c->v[c->n - 1].license = own(c, lic);
		free(lic);
	}
	/* a component without name or version cannot be described */
	for (size_t i = 0; i < c->n;)
		if (!c->v[i].name || !c->v[i].version)
			memmove(&c->v[i], &c->v[i + 1], (--c->n - i) * sizeof(c->v[0]));
		else
			i++;
	rc = 0;
done:
	eb_pytarget_release(&pt);
	eb_buf_release(&status);
	paths_free(paths, npaths);
	return rc;
}

static char *created_of(struct eb_stage *s, const struct eb_build_target *t)
{
	const struct eb_spec_target *st = spec_target(s->lf.spec, t->name);
	int64_t epoch = st ? eb_git_inputs_epoch(s->lf.spec, st, 0) : 0;
	struct eb_error *e = NULL;
	char *out = NULL;

	if (epoch > 0 && eb_image_time_format(&out, epoch, &e) < 0) {
		eb_error_free(e);
		out = NULL;
	}
	return out;
}

int eb_attest_sbom(struct eb_stage *s, size_t ti, size_t q, enum eb_sbom_format format,
		   const char *repository, struct eb_blobstore *bs, struct eb_buf *out,
		   struct eb_error **err)
{
	const struct eb_build_target *t = &s->rep.targets[ti];
	const struct eb_build_platform *p = &t->platforms[q];
	struct eb_sbom_image img = { 0 };
	struct comps c = { 0 };
	char *created;
	int rc;

	if ((rc = gather(s, t, p, bs, &c, err)) < 0) {
		comps_release(&c);
		return rc;
	}
	created = created_of(s, t);
	img.repository = repository ? repository : t->name;
	img.target = t->name;
	img.digest = p->manifest;
	img.platform = p->platform;
	img.base_ref = t->base_ref;
	img.base_digest = *p->base_manifest ? p->base_manifest : t->base_digest;
	img.created = created;
	img.components = c.v;
	img.ncomponents = c.n;
	if (format == EB_SBOM_SPDX)
		eb_sbom_spdx(out, &img);
	else
		eb_sbom_cyclonedx(out, &img);
	free(created);
	comps_release(&c);
	return 0;
}

char *eb_attest_sig_tag(const char *digest)
{
	return eb_xasprintf("sha256-%s.sig", eb_digest_hex(digest));
}

static int put_blob(struct eb_blobstore *bs, const void *data, size_t len, char digest[72],
		    struct eb_error **err)
{
	eb_sha256_digest(data, len, digest);
	return eb_blobstore_put(bs, data, len, digest, err);
}

static int put_json(struct eb_blobstore *bs, json_t *doc, struct eb_descriptor *d,
		    const char *media_type, struct eb_error **err)
{
	char *s = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	char dg[EB_DIGEST_STR_LEN + 1];
	int rc = put_blob(bs, s, strlen(s), dg, err);

	d->media_type = eb_xstrdup(media_type);
	d->digest = eb_xstrdup(dg);
	d->size = (int64_t)strlen(s);
	free(s);
	return rc;
}

/* Sign one digest: add a layer to its .sig manifest unless the payload
 * is already signed by this key there. */
static int sign_one(struct eb_stage *s, const struct eb_attest_options *o, const char *digest,
		    struct eb_blobstore *bs, struct eb_attest_result *res, struct eb_error **err)
{
	struct eb_registry *reg = s->build.registry;
	char *tag = eb_attest_sig_tag(digest);
	char *ref = eb_xasprintf("%s:%s", o->repository, tag);
	struct eb_remote_doc old = { 0 };
	json_t *layers = json_array(), *diff_ids = json_array(), *cfg = NULL, *man = NULL;
	struct eb_buf payload;
	char pd[EB_DIGEST_STR_LEN + 1];
	char *sig = NULL;
	struct eb_descriptor cd = { 0 }, md = { 0 };
	int rc;

	eb_buf_init(&payload, 0);
	eb_sign_payload(&payload, o->repository, digest);
	eb_sha256_digest(payload.ptr, payload.len, pd);
	rc = eb_registry_get_manifest(reg, ref, &old, err);
	if (rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		rc = 0;
	} else if (rc == 0) {
		json_t *m = json_loadb(old.data.ptr, old.data.len, 0, NULL);
		json_t *ol = json_object_get(m, "layers");
		size_t i;
		json_t *l;
		int have = 0;
		json_array_foreach(ol, i, l) {
			const char *ld = json_string_value(json_object_get(l, "digest"));
			const char *mt = json_string_value(json_object_get(l, "mediaType"));
			const char *sg = json_string_value(json_object_get(
				json_object_get(l, "annotations"), EB_COSIGN_SIG_ANNOTATION));
			if (!ld || !eb_digest_valid(ld))
				continue;
			json_array_append(layers, l);
			json_array_append_new(diff_ids, json_string(ld));
			if (!have && mt && strcmp(mt, EB_COSIGN_SIG_MEDIA_TYPE) == 0 &&
			    strcmp(ld, pd) == 0 && eb_sign_check(o->key, payload.ptr, payload.len, sg))
				have = 1;
		}
		json_decref(m);
		if (have) {
			res->signatures_kept++;
			goto done;
		}
	}
	if (rc < 0)
		goto done;
	if ((rc = eb_sign_data(o->key, payload.ptr, payload.len, &sig, err)) < 0 ||
	    (rc = put_blob(bs, payload.ptr, payload.len, pd, err)) < 0)
		goto done;
	json_array_append_new(layers, json_pack("{s:s, s:s, s:I, s:{s:s}}", "mediaType",
						EB_COSIGN_SIG_MEDIA_TYPE, "digest", pd, "size",
						(json_int_t)payload.len, "annotations",
						EB_COSIGN_SIG_ANNOTATION, sig));
	json_array_append_new(diff_ids, json_string(pd));
	/* an image config, as cosign and containers/image write for signatures */
	cfg = json_pack("{s:s, s:s, s:{}, s:{s:s, s:O}}", "architecture", "", "os", "", "config",
			"rootfs", "type", "layers", "diff_ids", diff_ids);
	if ((rc = put_json(bs, cfg, &cd, EB_MEDIA_OCI_CONFIG, err)) < 0)
		goto done;
	man = json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:O}", "schemaVersion", 2, "mediaType",
			EB_MEDIA_OCI_MANIFEST, "config", "mediaType", cd.media_type, "digest",
			cd.digest, "size", (json_int_t)cd.size, "layers", layers);
	if ((rc = put_json(bs, man, &md, EB_MEDIA_OCI_MANIFEST, err)) < 0)
		goto done;
	{
		const char *tags[] = { tag, NULL };
		struct eb_push_image img = { o->repository, &md, tags };
		rc = eb_registry_push(reg, &img, 1, NULL, 0, bs, NULL, err);
	}
	if (rc == 0)
		res->signatures++;
done:
	if (rc < 0)
		eb_error_wrap(err, "signing '%s@%s'", o->repository, digest);
	eb_descriptor_release(&cd);
	eb_descriptor_release(&md);
	json_decref(cfg);
	json_decref(man);
	json_decref(layers);
	json_decref(diff_ids);
	eb_remote_doc_release(&old);
	eb_buf_release(&payload);
	free(sig);
	free(ref);
	free(tag);
	return rc;
}

/* An artifact manifest for doc (type), subject = the platform manifest. */
static int artifact(struct eb_blobstore *bs, const json_t *subject, const char *type,
		    const char *title, const void *doc, size_t len, const json_t *annotations,
		    struct eb_descriptor *out, struct eb_error **err)
{
	char dg[EB_DIGEST_STR_LEN + 1];
	json_t *man, *ann = json_deep_copy(annotations);
	int rc;

	if ((rc = put_blob(bs, "{}", 2, dg, err)) < 0 || (rc = put_blob(bs, doc, len, dg, err)) < 0) {
		json_decref(ann);
		return rc;
	}
	json_object_set_new(ann, EB_ATTEST_TITLE_ANNOTATION, json_string(title));
	man = json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:i}, s:[{s:s, s:s, s:I, s:{s:s}}], s:O, s:o}",
			"schemaVersion", 2, "mediaType", EB_MEDIA_OCI_MANIFEST, "artifactType", type,
			"config", "mediaType", EB_MEDIA_OCI_EMPTY, "digest", EB_OCI_EMPTY_DIGEST,
			"size", 2, "layers", "mediaType", type, "digest", dg, "size", (json_int_t)len,
			"annotations", EB_ATTEST_TITLE_ANNOTATION, title, "subject", subject,
			"annotations", ann);
	rc = put_json(bs, man, out, EB_MEDIA_OCI_MANIFEST, err);
	json_decref(man);
	return rc;
}

/* A DSSE provenance whose statement is already listed is not added again. */
static int statement_listed(struct eb_registry *reg, const char *repository, const char *subject,
			    const char *statement_digest, struct eb_error **err)
{
	json_t *index = NULL, *e;
	size_t i;
	int found = 0, rc;

	rc = eb_referrers_list(reg, repository, subject, &index, NULL, err);
	if (rc < 0)
		return rc;
	json_array_foreach(json_object_get(index, "manifests"), i, e) {
		const char *at = json_string_value(json_object_get(e, "artifactType"));
		const char *sd = json_string_value(json_object_get(
			json_object_get(e, "annotations"), EB_ATTEST_STATEMENT_ANNOTATION));
		if (at && sd && strcmp(at, EB_DSSE_MEDIA_TYPE) == 0 &&
		    strcmp(sd, statement_digest) == 0)
			found = 1;
	}
	json_decref(index);
	return found;
}

static void add_deps(const struct eb_build_target *t, const struct eb_build_platform *p,
		     struct eb_prov_dep **deps, size_t *n, char ***names, size_t *nnames)
{
	const json_t *apt = apt_packages(p);
	size_t cap = 0, ncap = 0;

	*deps = NULL;
	*n = 0;
	*names = NULL;
	*nnames = 0;
#define DEP(NAME, URI, DIGEST)                                                                     \
	do {                                                                                       \
		EB_ALLOC_GROW(*deps, *n + 1, cap);                                                 \
		EB_ALLOC_GROW(*names, *nnames + 2, ncap);                                          \
		(*names)[(*nnames)++] = (NAME);                                                    \
		(*names)[(*nnames)++] = (DIGEST);                                                  \
		(*deps)[*n].name = (*names)[*nnames - 2];                                          \
		(*deps)[*n].uri = (URI);                                                           \
		(*deps)[*n].digest = (*names)[*nnames - 1];                                        \
		(*n)++;                                                                            \
	} while (0)
	if (t->base_ref && *t->base_digest)
		DEP(eb_xstrdup("base"), t->base_ref,
		    eb_xstrdup(*p->base_manifest ? p->base_manifest : t->base_digest));
	if (apt) {
		size_t i;
		const json_t *e;
		json_array_foreach(apt, i, e) {
			const char *nm = json_string_value(json_object_get(e, "name"));
			const char *sh = json_string_value(json_object_get(e, "sha256"));
			if (!nm || !sh)
				continue;
			DEP(eb_xasprintf("deb:%s", nm), json_string_value(json_object_get(e, "url")),
			    strncmp(sh, "sha256:", 7) == 0 ? eb_xstrdup(sh) : eb_xasprintf("sha256:%s", sh));
		}
	}
	for (size_t i = 0; i < p->npackages; i++)
		if (!p->packages[i].in_base)
			DEP(eb_xasprintf("pypi:%s", p->packages[i].name), p->packages[i].url,
			    eb_xstrdup(p->packages[i].sha256));
#undef DEP
}

void eb_attest_statement(struct eb_stage *s, size_t ti, size_t q, const char *repository,
			 const char *commit, struct eb_buf *out)
{
	const struct eb_build_target *t = &s->rep.targets[ti];
	const struct eb_build_platform *p = &t->platforms[q];
	struct eb_provenance pv = { 0 };
	struct eb_prov_dep *deps = NULL;
	struct eb_git *g = NULL;
	char **names = NULL;
	size_t ndeps = 0, nnames = 0;
	char *origin = NULL, *spec_rel = NULL;

	add_deps(t, p, &deps, &ndeps, &names, &nnames);
	if (eb_git_open(&g, s->lf.spec->dir, NULL) == 0) {
		origin = eb_git_origin(g);
		spec_rel = eb_git_relpath(g, s->lf.spec->path);
		eb_git_free(g);
	}
	pv.subject_name = repository;
	pv.subject_digest = p->manifest;
	pv.spec_path = spec_rel ? spec_rel : eb_path_basename(s->lf.spec->path);
	pv.target = t->name;
	pv.platform = p->platform;
	pv.source_uri = origin;
	pv.commit = commit;
	pv.deps = deps;
	pv.ndeps = ndeps;
	eb_provenance_statement(out, &pv);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(deps);
	free(origin);
	free(spec_rel);
}

static int attest_platform(struct eb_stage *s, const struct eb_attest_options *o, size_t ti,
			   size_t q, struct eb_blobstore *bs, struct eb_attest_result *res,
			   struct eb_error **err)
{
	const struct eb_build_target *t = &s->rep.targets[ti];
	const struct eb_build_platform *p = &t->platforms[q];
	struct eb_descriptor arts[3];
	size_t narts = 0;
	struct eb_buf doc, stmt;
	struct eb_buf mbuf;
	json_t *subject = NULL, *ann = NULL, *m = NULL;
	char sd[EB_DIGEST_STR_LEN + 1];
	int rc, listed;

	memset(arts, 0, sizeof(arts));
	eb_buf_init(&doc, 0);
	eb_buf_init(&stmt, 0);
	eb_buf_init(&mbuf, 0);
	if ((rc = eb_blobstore_read(bs, p->manifest, &mbuf, EB_IMAGE_DOC_MAX, err)) < 0)
		goto done;
	m = json_loadb(mbuf.ptr, mbuf.len, 0, NULL);
	subject = json_pack("{s:s, s:s, s:I}", "mediaType",
			    json_string_value(json_object_get(m, "mediaType"))
				    ? json_string_value(json_object_get(m, "mediaType"))
				    : EB_MEDIA_OCI_MANIFEST,
			    "digest", p->manifest, "size", (json_int_t)mbuf.len);
	ann = json_pack("{s:s, s:s}", EB_ATTEST_TARGET_ANNOTATION, t->name,
			EB_ATTEST_PLATFORM_ANNOTATION, p->platform);
	if (o->commit)
		json_object_set_new(ann, "org.opencontainers.image.revision",
				    json_string(o->commit));

	for (int f = 0; f < 2; f++) {
		eb_buf_truncate(&doc, 0);
		if ((rc = eb_attest_sbom(s, ti, q, f ? EB_SBOM_SPDX : EB_SBOM_CYCLONEDX, o->repository,
					 bs, &doc, err)) < 0 ||
		    (rc = artifact(bs, subject, f ? EB_SBOM_SPDX_TYPE : EB_SBOM_CYCLONEDX_TYPE,
				   f ? "sbom.spdx.json" : "sbom.cdx.json", doc.ptr, doc.len, ann,
				   &arts[narts], err)) < 0)
			goto done;
		narts++;
	}

	eb_attest_statement(s, ti, q, o->repository, o->commit, &stmt);
	eb_sha256_digest(stmt.ptr, stmt.len, sd);
	listed = statement_listed(s->build.registry, o->repository, p->manifest, sd, err);
	if (listed < 0) {
		rc = listed;
		goto done;
	}
	if (!listed || !o->key) {
		/* unsigned envelopes have fixed bytes: attaching again is a no-op */
		json_object_set_new(ann, EB_ATTEST_STATEMENT_ANNOTATION, json_string(sd));
		eb_buf_truncate(&doc, 0);
		if ((rc = eb_dsse_envelope(&doc, o->key, EB_INTOTO_PAYLOAD_TYPE, stmt.ptr, stmt.len,
					   err)) < 0 ||
		    (rc = artifact(bs, subject, EB_DSSE_MEDIA_TYPE, "provenance.dsse.json", doc.ptr,
				   doc.len, ann, &arts[narts], err)) < 0)
			goto done;
		narts++;
	}
	{
		size_t added = 0;
		rc = eb_referrers_attach(s->build.registry, o->repository, p->manifest, arts, narts,
					 bs, &res->used_api, &added, err);
		if (rc == 0)
			res->artifacts += (unsigned)added;
	}
done:
	for (size_t i = 0; i < narts; i++)
		eb_descriptor_release(&arts[i]);
	json_decref(subject);
	json_decref(ann);
	json_decref(m);
	eb_buf_release(&doc);
	eb_buf_release(&stmt);
	eb_buf_release(&mbuf);
	return rc;
}

int eb_attest_push(struct eb_stage *s, const struct eb_attest_options *o, struct eb_blobstore *bs,
		   struct eb_attest_result *res, struct eb_error **err)
{
	int rc;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < s->rep.ntargets; i++) {
		const struct eb_build_target *t = &s->rep.targets[i];
		int top_is_platform = 0;
		for (size_t q = 0; q < t->nplatforms; q++) {
			if (strcmp(t->platforms[q].manifest, t->digest) == 0)
				top_is_platform = 1;
			if (o->key && (rc = sign_one(s, o, t->platforms[q].manifest, bs, res, err)) < 0)
				return rc;
			if (o->attest && (rc = attest_platform(s, o, i, q, bs, res, err)) < 0) {
				eb_error_wrap(err, "attaching SBOMs and provenance to '%s@%s'",
					      o->repository, t->platforms[q].manifest);
				return rc;
			}
		}
		if (o->key && !top_is_platform && (rc = sign_one(s, o, t->digest, bs, res, err)) < 0)
			return rc;
	}
	return 0;
}
