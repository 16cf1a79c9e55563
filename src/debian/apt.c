/*
 * apt.c - the Debian-packages layer of a target (see apt.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/apt.h"
#include "oci/blobstore.h"
#include "oci/layer.h"
#include "net/http.h"
#include "envspec/spec.h"
#include "util/alloc.h"

/* Bumped when the layer bytes for the same packages may change. */
#define EB_APT_LAYER_VERSION 2 /* 2: the packages' owners */

void eb_apt_plan_release(struct eb_apt_plan *p)
{
	eb_apt_resolution_release(&p->res);
	for (size_t i = 0; i < p->nlayers; i++)
		free(p->layers[i].created_by);
	free(p->layers);
	free(p->layer_of);
	json_decref(p->sources);
	json_decref(p->packages);
	eb_buf_release(&p->status);
	eb_debian_links_free(p->link_paths, p->link_targets, p->nlinks);
	memset(p, 0, sizeof(*p));
}

/* "name[:arch]=version" into a pin pointing into a copy the caller frees */
static char *split_pin(const char *s, struct eb_apt_pin *pin)
{
	char *c = eb_xstrdup(s), *eq = strchr(c, '='), *colon;
	*eq = '\0';
	colon = strchr(c, ':');
	if (colon)
		*colon = '\0';
	pin->name = c;
	pin->arch = colon ? colon + 1 : NULL;
	pin->version = eq + 1;
	return c;
}

/* the lock's packages of this platform, when they are exactly the pins */
static int from_lock(struct eb_apt_resolution *res, const json_t *locked, const char *platform,
		     const struct eb_apt_pin *pins, size_t npins)
{
	const json_t *arr = json_object_get(json_object_get(locked, "packages"), platform);
	size_t n = json_array_size(arr);

	memset(res, 0, sizeof(*res));
	if (!json_is_array(arr) || n != npins)
		return 0;
	res->pkgs = eb_xcalloc(n + 1, sizeof(*res->pkgs));
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(arr, i);
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *ver = json_string_value(json_object_get(e, "version"));
		const char *arch = json_string_value(json_object_get(e, "architecture"));
		const char *url = json_string_value(json_object_get(e, "url"));
		const char *sha = json_string_value(json_object_get(e, "sha256"));
		json_int_t size = json_integer_value(json_object_get(e, "size"));
		int match = name && ver && arch && url && sha && strlen(sha) == 64 && size > 0 &&
			    !strcmp(name, pins[i].name) && !strcmp(ver, pins[i].version) &&
			    (!pins[i].arch || !strcmp(arch, pins[i].arch));
		if (!match) {
			eb_apt_resolution_release(res);
			return 0;
		}
		struct eb_apt_package *o = &res->pkgs[res->n++];
		o->name = eb_xstrdup(name);
		o->version = eb_xstrdup(ver);
		o->arch = eb_xstrdup(arch);
		o->url = eb_xstrdup(url);
		o->sha256 = eb_xstrdup(sha);
		o->size = (uint64_t)size;
	}
	return 1;
}

/* the lock's sources are the target's (url and suite, in order): else
 * its .deb URLs may point where the spec no longer does */
static int same_sources(const json_t *locked, const struct eb_spec_target *t)
{
	const json_t *arr = json_object_get(locked, "sources");

	if (!json_is_array(arr) || json_array_size(arr) != t->apt_sources.n)
		return 0;
	for (size_t i = 0; i < t->apt_sources.n; i++) {
		const char *url = json_string_value(json_object_get(json_array_get(arr, i), "url"));
		const char *suite = json_string_value(json_object_get(json_array_get(arr, i), "suite"));
		if (!url || !suite || strcmp(url, t->apt_sources.v[i].url.s) != 0 ||
		    strcmp(suite, t->apt_sources.v[i].suite.s) != 0)
			return 0;
	}
	return 1;
}

/* Every package of res (from the lock) checked against the Release the
 * lock names for each source, verified with the source's keyring, and
 * the Packages indexes it lists: from the cache when it has them, else
 * fetched (never under --frozen). */
static int verify_locked(const struct eb_apt_resolution *res, const json_t *locked,
			 const struct eb_apt_source *src, size_t nsrc, const char *arch, int frozen,
			 struct eb_http_client *http, struct eb_blobstore *bs, time_t now,
			 struct eb_error **err)
{
	const json_t *arr = json_object_get(locked, "sources");
	const char **want = eb_xcalloc(nsrc + 1, sizeof(*want));
	const char **want_sig = eb_xcalloc(nsrc + 1, sizeof(*want_sig));
	struct eb_apt_indexes ix;
	int rc = 0;

	memset(&ix, 0, sizeof(ix));
	for (size_t i = 0; i < nsrc; i++) {
		const json_t *e = json_array_get(arr, i);
		want[i] = json_string_value(json_object_get(e, "release"));
		want_sig[i] = json_string_value(json_object_get(e, "signature"));
		if (!want[i] || strncmp(want[i], "sha256:", 7) != 0) {
			rc = eb_error_set(err, EB_EINVALID,
					  "the lock records no signed Release for apt source %s %s",
					  src[i].url, src[i].suite);
			eb_error_hint(err, "run 'envbuild lock'");
			goto done;
		}
	}
	if ((rc = eb_apt_fetch_cached(&ix, http, bs, src, nsrc, arch, now, want, want_sig, frozen,
				      err)) < 0)
		goto done;
	for (size_t i = 0; i < res->n; i++)
		if ((rc = eb_apt_check_package(&ix, src, &res->pkgs[i], err)) < 0)
			goto done;
done:
	eb_apt_indexes_release(&ix);
	free(want);
	free(want_sig);
	return rc;
}

static void hash_str(struct eb_sha256 *h, char *line)
{
	eb_sha256_update(h, line, strlen(line));
	free(line);
}

/* Small packages share a layer by a stable hash of their name, one of
 * this many, so that a changed or added pin rebuilds its bucket's layer
 * and not every small package's. */
#define APT_BUCKETS 8

static unsigned bucket_of(const char *name)
{
	char d[EB_DIGEST_STR_LEN + 1];
	unsigned v = 0;

	eb_sha256_digest(name, strlen(name), d);
	(void)sscanf(d + 7, "%2x", &v); /* d is "sha256:<hex>" */
	return v % APT_BUCKETS;
}

static int by_name(const void *a, const void *b, void *ud)
{
	const struct eb_apt_package *v = ud;
	const struct eb_apt_package *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	int r = strcmp(x->name, y->name);
	return r ? r : strcmp(x->arch, y->arch);
}

/* The layers, bottom first: each large package alone (by name), then
 * the non-empty buckets of small packages, then the dpkg database (the
 * status and the alternatives).  A package layer's key depends on its
 * .debs and the base's directory links only; the database's on every
 * package (the status lists them all), the base's status and links.
 * Everything goes by package name, never by the order of the pins: the
 * same pins in another order are the same layers. */
static void make_layers(struct eb_apt_plan *p, uint64_t large_bytes)
{
	struct eb_sha256 h;
	struct eb_buf line;
	size_t nl = 0;
	size_t *ord = eb_xcalloc(p->res.n + 1, sizeof(*ord));

	for (size_t i = 0; i < p->res.n; i++)
		ord[i] = i;
	qsort_r(ord, p->res.n, sizeof(*ord), by_name, p->res.pkgs);
	p->layer_of = eb_xcalloc(p->res.n + 1, sizeof(*p->layer_of));
	p->layers = eb_xcalloc(p->res.n + 2, sizeof(*p->layers));
	/* slots: large packages first, buckets after, the database last */
	for (int pass = 0; pass < 2 + APT_BUCKETS; pass++) {
		int top = pass == 1 + APT_BUCKETS;
		int bucket = pass >= 1 && !top ? pass - 1 : -1;
		size_t lo = pass == 0 ? p->res.n : 1; /* pass 0: one layer per large package */

		for (size_t ri = 0; ri < lo; ri++) {
			size_t rep = ord[ri], members = 0, single = (size_t)-1;
			if (pass == 0 && !(large_bytes && p->res.pkgs[rep].size >= large_bytes))
				continue;
			if (bucket >= 0) {
				for (size_t k = 0; k < p->res.n; k++)
					if (!(large_bytes && p->res.pkgs[k].size >= large_bytes) &&
					    (int)bucket_of(p->res.pkgs[k].name) == bucket)
						members++;
				if (!members)
					continue;
			}
			if (pass == 0)
				single = rep;
			struct eb_apt_layer *l = &p->layers[nl];
			l->pkg = single;
			eb_sha256_init(&h);
			hash_str(&h, eb_xasprintf("envbuild debian %s layer %d\n",
						  top ? "database" : "package", EB_APT_LAYER_VERSION));
			eb_buf_init(&line, 0);
			(void)eb_buf_adds(&line, "envbuild apt:");
			for (size_t ki = 0; ki < p->res.n; ki++) {
				size_t k = ord[ki];
				const struct eb_apt_package *y = &p->res.pkgs[k];
				int large = large_bytes && y->size >= large_bytes;
				int here = pass == 0 ? k == rep
					   : bucket >= 0 ? !large && (int)bucket_of(y->name) == bucket
							 : 1;
				if (!here)
					continue;
				hash_str(&h, eb_xasprintf("deb %s %s %s %s\n", y->name, y->version,
							  y->arch, y->sha256));
				if (!top) {
					(void)eb_buf_addf(&line, " %s=%s", y->name, y->version);
					p->layer_of[k] = nl;
				}
			}
			if (top) {
				eb_sha256_update(&h, "status\n", 7);
				eb_sha256_update(&h, p->status.ptr, p->status.len);
				(void)eb_buf_addf(&line, " dpkg database (%zu packages)", p->res.n);
			}
			for (size_t k = 0; k < p->nlinks; k++)
				hash_str(&h, eb_xasprintf("link %s %s\n", p->link_paths[k],
							  p->link_targets[k]));
			eb_sha256_final(&h, l->key);
			l->created_by = eb_buf_detach(&line, NULL);
			nl++;
		}
	}
	p->nlayers = nl;
	free(ord);
}

int eb_apt_plan(struct eb_apt_plan *out, const struct eb_spec *spec,
		const struct eb_spec_target *t, const char *platform,
		const char *const *base_layers, size_t nbase, const json_t *locked, int frozen,
		uint64_t large_bytes, struct eb_http_client *http, time_t now,
		struct eb_error **err)
{
	return eb_apt_plan_cached(out, spec, t, platform, base_layers, nbase, NULL, locked, frozen,
				  large_bytes, http, NULL, now, err);
}

int eb_apt_plan_cached(struct eb_apt_plan *out, const struct eb_spec *spec,
		       const struct eb_spec_target *t, const char *platform,
		       const char *const *base_layers, size_t nbase,
		       const struct eb_basefs *base_view, const json_t *locked,
		       int frozen, uint64_t large_bytes, struct eb_http_client *http,
		       struct eb_blobstore *bs, time_t now, struct eb_error **err)
{
	struct eb_apt_plan p;
	struct eb_apt_pin *pins;
	char **copies;
	struct eb_apt_source *src = NULL;
	char **keyrings = NULL;
	struct eb_apt_indexes ix;
	struct eb_debindex st = EB_DEBINDEX_INIT;
	const char *arch = eb_apt_arch_for_platform(platform);
	int rc = 0;

	memset(&p, 0, sizeof(p));
	memset(&ix, 0, sizeof(ix));
	memset(out, 0, sizeof(*out));
	eb_buf_init(&p.status, 0);
	if (!t->apt.n)
		return 0;
	if (!arch)
		return eb_error_set(err, EB_EINVALID, "no Debian architecture for platform '%s'",
				    platform);
	pins = eb_xcalloc(t->apt.n + 1, sizeof(*pins));
	copies = eb_xcalloc(t->apt.n + 1, sizeof(*copies));
	for (size_t i = 0; i < t->apt.n; i++)
		copies[i] = split_pin(t->apt.v[i].s, &pins[i]);
	rc = base_view ? eb_debian_base_from_view(base_view, base_layers, nbase, &p.status,
						  &p.link_paths, &p.link_targets, &p.nlinks, err)
		       : eb_debian_base_scan_cached(bs, base_layers, nbase, &p.status,
						    &p.link_paths, &p.link_targets, &p.nlinks, err);
	if (rc < 0) {
		eb_error_wrap(err, "reading the base image's dpkg status");
		goto done;
	}
	/* the target's sources, as the verification needs them either way */
	src = eb_xcalloc(t->apt_sources.n + 1, sizeof(*src));
	keyrings = eb_xcalloc(t->apt_sources.n + 1, sizeof(*keyrings));
	for (size_t i = 0; i < t->apt_sources.n; i++) {
		const struct eb_spec_apt_source *s = &t->apt_sources.v[i];
		const char **comps = eb_xcalloc(s->components.n + 1, sizeof(*comps));
		for (size_t k = 0; k < s->components.n; k++)
			comps[k] = s->components.v[k].s;
		keyrings[i] = eb_spec_resolve(spec, s->signed_by.s);
		src[i].url = s->url.s;
		src[i].suite = s->suite.s;
		src[i].components = comps;
		src[i].ncomponents = s->components.n;
		src[i].keyring = keyrings[i];
		src[i].check_valid_until = s->check_valid_until;
	}
	if (locked && same_sources(locked, t) && from_lock(&p.res, locked, platform, pins, t->apt.n)) {
		/* a lock is an input of the pull request too: each of its
		 * .debs must be in a Packages index of a Release whose
		 * signature verifies (specs/lockfile.md) */
		if ((rc = verify_locked(&p.res, locked, src, t->apt_sources.n, arch, frozen, http,
					bs, now, err)) < 0) {
			eb_error_wrap(err, "the lock's apt packages of target '%s' (%s)", t->name,
				      platform);
			goto done;
		}
		p.sources = json_incref(json_object_get(locked, "sources"));
	} else if (frozen) {
		rc = eb_error_set(err, EB_EINVALID,
				  "the lock's apt packages of target '%s' (%s) are not the spec's "
				  "apt: pins", t->name, platform);
		eb_error_hint(err, "run envbuild lock");
		goto done;
	} else {
		/* resolve: the target's sources, verified, and the base's status */
		if (p.status.len &&
		    (rc = eb_debindex_add(&st, p.status.ptr, p.status.len, "/var/lib/dpkg/status",
					  EB_DEBINDEX_STATUS, err)) < 0) {
			eb_error_wrap(err, "the base image's dpkg status");
			goto done;
		}
		eb_debindex_sort(&st);
		if ((rc = eb_apt_fetch_cached(&ix, http, bs, src, t->apt_sources.n, arch, now, NULL,
					      NULL, 0, err)) < 0 ||
		    (rc = eb_apt_resolve(&p.res, &ix, src, &st, pins, t->apt.n, arch, err)) < 0) {
			eb_error_locate(err, spec->path, t->apt.v[0].pos.line, t->apt.v[0].pos.col);
			goto done;
		}
		p.sources = json_array();
		for (size_t i = 0; i < ix.nreleases; i++) {
			json_t *js = json_pack("{s:s, s:s, s:s, s:s, s:s}", "url", ix.releases[i].url,
					       "suite", ix.releases[i].suite, "release",
					       ix.releases[i].digest, "date", ix.releases[i].date,
					       "signedBy",
					       ix.releases[i].fingerprint ? ix.releases[i].fingerprint : "");
			if (ix.releases[i].signature)
				json_object_set_new(js, "signature",
						    json_string(ix.releases[i].signature));
			json_array_append_new(p.sources, js);
		}
	}
	p.packages = json_array();
	for (size_t i = 0; i < p.res.n; i++) {
		const struct eb_apt_package *x = &p.res.pkgs[i];
		json_array_append_new(p.packages,
				      json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "name", x->name,
						"version", x->version, "architecture", x->arch, "url",
						x->url, "sha256", x->sha256, "size", (json_int_t)x->size));
	}
	make_layers(&p, large_bytes);
	*out = p;
	memset(&p, 0, sizeof(p));
	rc = 0;
done:
	eb_apt_plan_release(&p);
	eb_apt_indexes_release(&ix);
	eb_debindex_release(&st);
	for (size_t i = 0; src && i < t->apt_sources.n; i++) {
		free((void *)src[i].components);
		free(keyrings[i]);
	}
	free(src);
	free(keyrings);
	for (size_t i = 0; i < t->apt.n; i++)
		free(copies[i]);
	free(copies);
	free(pins);
	return rc;
}

struct fetch_ctx {
	struct eb_blob_writer *w;
	uint64_t max;
};

static int on_data(void *ud, const void *data, size_t len, struct eb_error **err)
{
	struct fetch_ctx *c = ud;
	if (eb_blob_writer_size(c->w) + len > c->max)
		return eb_error_set(err, EB_EINVALID, "more bytes than the lock's size");
	return eb_blob_writer_write(c->w, data, len, err);
}

/* the .deb into the blob store, checked against its locked sha256 */
static int fetch_deb(struct eb_http_client *http, struct eb_blobstore *bs,
		     const struct eb_apt_package *x, struct eb_error **err)
{
	char *expected = eb_xasprintf("sha256:%s", x->sha256);
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	struct fetch_ctx c = { NULL, x->size };
	char got[EB_DIGEST_STR_LEN + 1];
	int rc;

	if (eb_blobstore_has(bs, expected, (int64_t)x->size)) {
		free(expected);
		return 0;
	}
	if ((rc = eb_blob_writer_open(&c.w, bs, err)) < 0) {
		free(expected);
		return rc;
	}
	req.method = "GET";
	req.url = x->url;
	req.on_data = on_data;
	req.data_userdata = &c;
	rc = eb_http_request(http, &req, &resp, err);
	if (rc == 0 && (resp.status < 200 || resp.status > 299))
		rc = eb_http_response_error(&resp, "fetching .deb", err);
	eb_http_response_release(&resp);
	if (rc < 0) {
		eb_blob_writer_abort(c.w);
	} else if (eb_blob_writer_size(c.w) != x->size) {
		eb_blob_writer_abort(c.w);
		rc = eb_error_set(err, EB_EINVALID, "got a different size than the lock's %llu",
				  (unsigned long long)x->size);
	} else {
		rc = eb_blob_writer_commit(c.w, expected, got, err);
	}
	if (rc < 0) {
		char *d = eb_http_url_display(x->url);
		eb_error_wrap(err, "%s=%s from %s", x->name, x->version, d);
		free(d);
	}
	free(expected);
	return rc;
}

int eb_apt_write(struct eb_layer_builder *const *builders, const struct eb_apt_plan *plan,
		 struct eb_http_client *http, struct eb_blobstore *bs, const char *stage_dir,
		 struct eb_deb_report *report, struct eb_error **err)
{
	struct eb_deb_input *in = eb_xcalloc(plan->res.n + 1, sizeof(*in));
	char **paths = eb_xcalloc(plan->res.n + 1, sizeof(*paths));
	struct eb_layer_builder **pb = eb_xcalloc(plan->res.n + 1, sizeof(*pb));
	struct eb_layer_builder *top = plan->nlayers ? builders[plan->nlayers - 1] : NULL;
	struct eb_deb_base base;
	int rc = 0;

	memset(report, 0, sizeof(*report));
	for (size_t i = 0; i < plan->res.n; i++) {
		const struct eb_apt_package *x = &plan->res.pkgs[i];
		char *digest = eb_xasprintf("sha256:%s", x->sha256);
		pb[i] = builders[plan->layer_of[i]];
		/* a package whose layer is made needs its .deb only when the
		 * cache lacks what the database layer takes from it */
		if ((pb[i] || !eb_debian_info_cached(bs, x->sha256)) &&
		    (rc = fetch_deb(http, bs, x, err)) < 0) {
			free(digest);
			goto done;
		}
		paths[i] = eb_blobstore_path(bs, digest);
		free(digest);
		in[i].path = paths[i];
		in[i].name = x->name;
		in[i].version = x->version;
		in[i].arch = x->arch;
		in[i].sha256 = x->sha256;
		in[i].size = x->size;
	}
	base.status = plan->status.len ? plan->status.ptr : NULL;
	base.status_len = plan->status.len;
	base.link_paths = (const char *const *)plan->link_paths;
	base.link_targets = (const char *const *)plan->link_targets;
	base.nlinks = plan->nlinks;
	if (top)
		rc = eb_debian_write_layers_cached(pb, top, stage_dir, in, plan->res.n, &base, bs,
						   report, err);
done:
	free(pb);
	for (size_t i = 0; i < plan->res.n; i++)
		free(paths[i]);
	free(paths);
	free(in);
	return rc;
}

json_t *eb_apt_lock_merge(json_t *apt, const char *platform, const struct eb_apt_plan *plan)
{
	if (!apt)
		apt = json_object();
	if (!json_is_object(json_object_get(apt, "packages")))
		json_object_set_new(apt, "packages", json_object());
	json_object_set(json_object_get(apt, "packages"), platform, plan->packages);
	if (plan->sources)
		json_object_set(apt, "sources", plan->sources);
	return apt;
}
