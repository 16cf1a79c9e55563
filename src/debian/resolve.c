/*
 * resolve.c - fetching verified apt indexes and checking pins against
 * them (see resolve.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "debian/depends.h"
#include "debian/gpg.h"
#include "debian/packages.h"
#include "debian/release.h"
#include "debian/resolve.h"
#include "debian/version.h"
#include "net/http.h"
#include "oci/blobstore.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"

/* Release files are small; Packages indexes of a whole suite are not
 * (bookworm main/amd64: ~10 MB xz, ~90 MB text) */
#define RELEASE_MAX (16u << 20)
#define INDEX_MAX ((size_t)512 << 20)
#define INDEX_TEXT_MAX ((size_t)1 << 30)

const char *eb_apt_arch_for_platform(const char *platform)
{
	static const char *const map[][2] = {
		{ "linux/amd64", "amd64" },   { "linux/arm64", "arm64" },
		{ "linux/arm64/v8", "arm64" }, { "linux/arm/v7", "armhf" },
		{ "linux/arm/v5", "armel" },  { "linux/386", "i386" },
		{ "linux/ppc64le", "ppc64el" }, { "linux/s390x", "s390x" },
		{ "linux/riscv64", "riscv64" }, { "linux/mips64le", "mips64el" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(platform, map[i][0]))
			return map[i][1];
	return NULL;
}

static void release_info_free(struct eb_apt_release_info *r)
{
	free(r->url);
	free(r->suite);
	free(r->digest);
	free(r->date);
	free(r->fingerprint);
	free(r->signature);
}

void eb_apt_indexes_release(struct eb_apt_indexes *ix)
{
	eb_debindex_release(&ix->idx);
	free(ix->source_of);
	for (size_t i = 0; i < ix->nreleases; i++)
		release_info_free(&ix->releases[i]);
	free(ix->releases);
	memset(ix, 0, sizeof(*ix));
}

/* GET url into body (at most max bytes).  Returns 0 (2xx), 1 (404/410),
 * or a negative code. */
static int get(struct eb_http_client *http, const char *url, size_t max, struct eb_buf *body,
	       struct eb_error **err)
{
	struct eb_http_request req = { 0 };
	struct eb_http_response resp;
	int rc;

	req.method = "GET";
	req.url = url;
	req.max_body = max;
	rc = eb_http_request(http, &req, &resp, err);
	if (rc < 0) {
		char *d = eb_http_url_display(url);
		eb_error_wrap(err, "fetching %s", d);
		free(d);
	} else if (resp.status == 404 || resp.status == 410) {
		rc = 1;
	} else if (resp.status < 200 || resp.status > 299) {
		char *d = eb_http_url_display(url);
		rc = eb_error_set(err, EB_ENET, "fetching %s: server answered %ld", d, resp.status);
		free(d);
	} else {
		*body = resp.body;
		eb_buf_init(&resp.body, 0);
		rc = 0;
	}
	eb_http_response_release(&resp);
	return rc;
}

static char *join_url(const char *base, const char *path)
{
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	return eb_xasprintf("%.*s/%s", (int)n, base, path);
}

/* Where index bytes come from: the network, the blob store (bs; NULL:
 * none) by digest, or, offline, the blob store only.  want: the digest the
 * lock recorded for the Release (NULL when resolving anew). */
struct fetch_opts {
	struct eb_blobstore *bs;
	const char *want;
	const char *want_sig;
	int offline;
};

/* The blob `digest` from the cache into body: 0, 1 when absent. */
static int cached(const struct fetch_opts *o, const char *digest, size_t max, struct eb_buf *body,
		  struct eb_error **err)
{
	int rc;

	if (!o || !o->bs || !digest || !eb_blobstore_has(o->bs, digest, -1))
		return 1;
	eb_buf_init(body, 0);
	rc = eb_blobstore_read(o->bs, digest, body, max, err);
	if (rc == -EB_ENOTFOUND || rc == -EB_EINVALID) {
		eb_error_clear(err);
		eb_buf_release(body);
		return 1;
	}
	return rc;
}

/* Keep what was fetched, by digest, so a later --frozen can verify from it */
static void keep(const struct fetch_opts *o, const struct eb_buf *body)
{
	char d[EB_DIGEST_STR_LEN + 1];

	if (o && o->bs)
		(void)eb_blobstore_put(o->bs, body->ptr, body->len, d, NULL);
}

/* The URL of a pool file: Filename is a path, so every byte outside
 * RFC 3986's unreserved set and '/' is percent-encoded (as apt does): a
 * "%3a" in a file name must reach the server as "%253a". */
static char *pool_url(const char *base, const char *filename)
{
	static const char hex[] = "0123456789ABCDEF";
	struct eb_buf b;
	char *path, *u;

	eb_buf_init(&b, 0);
	for (const unsigned char *s = (const unsigned char *)filename; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    strchr("-._~/", *s))
			(void)eb_buf_addc(&b, (char)*s);
		else
			(void)eb_buf_addf(&b, "%%%c%c", hex[*s >> 4], hex[*s & 15]);
	}
	path = eb_buf_detach(&b, NULL);
	u = join_url(base, path);
	free(path);
	return u;
}

/* The signed Release text of one source into *text; info filled.  With
 * o->want the bytes must be those the lock recorded (from the cache when
 * it has them), and are verified again against the keyring. */
static int fetch_release(struct eb_http_client *http, const struct eb_apt_source *s,
			 struct eb_buf *text, struct eb_apt_release_info *info,
			 const struct fetch_opts *o, struct eb_error **err)
{
	char *dists = eb_xasprintf("dists/%s/", s->suite);
	char *base = join_url(s->url, dists);
	char *u = eb_xasprintf("%sInRelease", base);
	struct eb_buf body, sig;
	char digest[EB_DIGEST_STR_LEN + 1];
	int rc, detached = 0;

	eb_buf_init(&body, 0);
	eb_buf_init(&sig, 0);
	eb_buf_init(text, 0);
	rc = cached(o, o ? o->want : NULL, RELEASE_MAX, &body, err);
	if (rc == 0) {
		detached = o->want_sig != NULL;
		if (detached && (rc = cached(o, o->want_sig, 1 << 20, &sig, err)) == 1)
			rc = -1;
	}
	if (rc == 1 || rc == -1) {
		if (o && o->offline) {
			rc = eb_error_set(err, EB_EFAIL,
					  "the signed %s %s that the lock names is not in the cache",
					  rc == -1 ? "Release.gpg" : "Release", rc == -1 ? o->want_sig : o->want);
			eb_error_hint(err, "--frozen verifies the lock's .debs offline against the signed "
					   "Release and Packages indexes kept in the cache by 'envbuild "
					   "lock'; run 'envbuild lock' or build with --locked on this machine");
			goto done;
		}
		eb_buf_release(&body);
		eb_buf_release(&sig);
		eb_buf_init(&body, 0);
		eb_buf_init(&sig, 0);
		rc = get(http, u, RELEASE_MAX, &body, err);
		if (rc == 1) {
			/* no InRelease: Release plus a detached Release.gpg */
			free(u);
			u = eb_xasprintf("%sRelease", base);
			rc = get(http, u, RELEASE_MAX, &body, err);
			if (rc == 1)
				rc = eb_error_set(err, EB_ENOTFOUND, "suite '%s' not found: %s has neither "
						  "InRelease nor Release", s->suite, base);
			if (rc == 0) {
				char *su = eb_xasprintf("%sRelease.gpg", base);
				rc = get(http, su, 1 << 20, &sig, err);
				if (rc == 1)
					rc = eb_error_set(err, EB_EINVALID,
							  "Release of suite '%s' is not signed (no InRelease, "
							  "no Release.gpg)", s->suite);
				free(su);
			}
			detached = 1;
		}
		if (rc == 0) {
			keep(o, &body);
			if (detached)
				keep(o, &sig);
		}
	}
	if (rc < 0)
		goto done;
	eb_sha256_digest(body.ptr, body.len, digest);
	if (o && o->want && strcmp(digest, o->want) != 0) {
		rc = eb_error_set(err, EB_EINVALID,
				  "%s is %s now, not the %s the lock names (the suite moved on, or "
				  "the lock was edited)", u, digest, o->want);
		eb_error_hint(err, "run 'envbuild lock' to resolve the pins again");
		goto done;
	}
	if (!detached) {
		eb_buf_release(text);
		rc = eb_debian_verify_clearsigned(text, &info->fingerprint, body.ptr, body.len,
						  s->keyring, err);
	} else {
		char sd[EB_DIGEST_STR_LEN + 1];
		eb_sha256_digest(sig.ptr, sig.len, sd);
		info->signature = eb_xstrdup(sd);
		rc = eb_debian_verify_detached(&info->fingerprint, body.ptr, body.len, sig.ptr,
					       sig.len, s->keyring, err);
		if (rc == 0)
			(void)eb_buf_add(text, body.ptr, body.len);
	}
	if (rc < 0)
		eb_error_wrap(err, "verifying %s", u);
	else
		info->digest = eb_xstrdup(digest);
done:
	eb_buf_release(&body);
	eb_buf_release(&sig);
	free(dists);
	free(base);
	free(u);
	return rc;
}

/* One component's Packages index for arch, verified against the Release,
 * added to ix.  Returns 0, 1 when the Release lists none for arch. */
static int fetch_packages(struct eb_http_client *http, const struct eb_apt_source *s,
			  const struct eb_release *rel, const char *comp, const char *arch,
			  struct eb_apt_indexes *ix, size_t src, const struct fetch_opts *o,
			  struct eb_error **err)
{
	static const char *const exts[] = { ".xz", ".gz", "" };
	const struct eb_release_file *f = NULL;
	char *path = NULL, *u = NULL, *dists;
	struct eb_buf body, text;
	char digest[EB_DIGEST_STR_LEN + 1];
	int rc;

	for (size_t i = 0; i < 3 && !f; i++) {
		free(path);
		path = eb_xasprintf("%s/binary-%s/Packages%s", comp, arch, exts[i]);
		f = eb_release_find(rel, path);
	}
	if (!f) {
		free(path);
		return 1;
	}
	dists = eb_xasprintf("dists/%s/%s", s->suite, path);
	u = join_url(s->url, dists);
	free(dists);
	eb_buf_init(&body, 0);
	eb_buf_init(&text, 0);
	if (f->size > INDEX_MAX) {
		rc = eb_error_set(err, EB_ETOOBIG, "%s is %llu bytes, more than envbuild reads", u,
				  (unsigned long long)f->size);
		goto done;
	}
	{
		char *want = eb_xasprintf("sha256:%s", f->sha256);
		rc = cached(o, want, (size_t)f->size + 1, &body, err);
		if (rc == 1 && o && o->offline)
			rc = eb_error_set(err, EB_EFAIL,
					  "the Packages index %s (%s, listed in the signed Release) is "
					  "not in the cache", u, want);
		free(want);
	}
	if (rc == 1) {
		rc = get(http, u, (size_t)f->size + 1, &body, err);
		if (rc == 1)
			rc = eb_error_set(err, EB_ENOTFOUND, "%s is listed in the Release but not found", u);
		if (rc == 0)
			keep(o, &body);
	}
	if (rc < 0)
		goto done;
	eb_sha256_digest(body.ptr, body.len, digest);
	if (body.len != f->size || strcmp(digest + 7, f->sha256) != 0) {
		rc = eb_error_set(err, EB_EINVALID,
				  "%s does not match the signed Release (size %zu, sha256 %s; "
				  "Release says size %llu, sha256 %s)", u, body.len, digest + 7,
				  (unsigned long long)f->size, f->sha256);
		goto done;
	}
	eb_buf_release(&text);
	if ((rc = eb_debian_decompress(&text, body.ptr, body.len, INDEX_TEXT_MAX, err)) < 0)
		goto wrap;
	eb_buf_release(&body);
	if ((rc = eb_debindex_add(&ix->idx, text.ptr, text.len, u, EB_DEBINDEX_PACKAGES, err)) < 0)
		goto wrap;
	ix->source_of = eb_xreallocarray(ix->source_of, ix->idx.nsources, sizeof(size_t));
	ix->source_of[ix->idx.nsources - 1] = src;
	rc = 0;
	goto done;
wrap:
	eb_error_wrap(err, "reading %s", u);
	/* a failed add still appended its source name */
	ix->source_of = eb_xreallocarray(ix->source_of, ix->idx.nsources + 1, sizeof(size_t));
done:
	eb_buf_release(&body);
	eb_buf_release(&text);
	free(path);
	free(u);
	return rc;
}

int eb_apt_fetch(struct eb_apt_indexes *out, struct eb_http_client *http,
		 const struct eb_apt_source *sources, size_t nsources, const char *arch,
		 time_t now, struct eb_error **err)
{
	return eb_apt_fetch_cached(out, http, NULL, sources, nsources, arch, now, NULL, NULL, 0, err);
}

int eb_apt_fetch_cached(struct eb_apt_indexes *out, struct eb_http_client *http,
			struct eb_blobstore *bs, const struct eb_apt_source *sources,
			size_t nsources, const char *arch, time_t now, const char *const *want,
			const char *const *want_sig, int offline, struct eb_error **err)
{
	struct eb_apt_indexes ix;
	int rc = 0;

	memset(&ix, 0, sizeof(ix));
	memset(out, 0, sizeof(*out));
	ix.releases = eb_xcalloc(nsources + 1, sizeof(*ix.releases));
	for (size_t s = 0; s < nsources; s++) {
		const struct eb_apt_source *src = &sources[s];
		struct eb_apt_release_info *info = &ix.releases[ix.nreleases++];
		struct eb_buf text;
		struct eb_release rel;
		struct fetch_opts o = { bs, want ? want[s] : NULL, want_sig ? want_sig[s] : NULL,
					offline };

		info->url = eb_xstrdup(src->url);
		info->suite = eb_xstrdup(src->suite);
		if ((rc = fetch_release(http, src, &text, info, &o, err)) < 0) {
			eb_buf_release(&text);
			goto fail;
		}
		rc = eb_release_parse(&rel, text.ptr, text.len, "Release", err);
		eb_buf_release(&text);
		if (rc < 0)
			goto fail_src;
		info->date = eb_xstrdup(rel.date_text);
		/* a lock replayed is checked against the Release it was made
		 * from, whatever its age: Valid-Until guards resolution */
		if (!o.want &&
		    (rc = eb_release_check_time(&rel, now, !src->check_valid_until, err)) < 0) {
			eb_release_release(&rel);
			goto fail_src;
		}
		for (size_t c = 0; c < src->ncomponents; c++) {
			int found = 0;
			const char *archs[2] = { arch, "all" };
			for (int a = 0; a < 2; a++) {
				rc = fetch_packages(http, src, &rel, src->components[c], archs[a], &ix,
						    s, &o, err);
				if (rc < 0) {
					eb_release_release(&rel);
					goto fail_src;
				}
				found |= rc == 0;
			}
			if (!found) {
				rc = eb_error_set(err, EB_ENOTFOUND,
						  "the Release lists no Packages index for component "
						  "'%s' and architecture '%s'", src->components[c], arch);
				eb_release_release(&rel);
				goto fail_src;
			}
		}
		eb_release_release(&rel);
	}
	eb_debindex_sort(&ix.idx);
	*out = ix;
	return 0;
fail_src:
	eb_error_wrap(err, "apt source %s %s", sources[ix.nreleases - 1].url,
		      sources[ix.nreleases - 1].suite);
fail:
	eb_apt_indexes_release(&ix);
	return rc;
}

/* ---- resolving -------------------------------------------------------- */

void eb_apt_resolution_release(struct eb_apt_resolution *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->pkgs[i].name);
		free(r->pkgs[i].version);
		free(r->pkgs[i].arch);
		free(r->pkgs[i].url);
		free(r->pkgs[i].sha256);
	}
	free(r->pkgs);
	r->pkgs = NULL;
	r->n = 0;
}

int eb_apt_check_package(const struct eb_apt_indexes *ix, const struct eb_apt_source *sources,
			 const struct eb_apt_package *x, struct eb_error **err)
{
	const struct eb_debpkg *p = NULL, *v;
	size_t n;
	int rc;

	/* the same name and version may be in several sources; any of
	 * them, with its URL: a lock pointing elsewhere was edited */
	v = eb_debindex_lookup(&ix->idx, x->name, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].arch, x->arch) || strcmp(v[i].version, x->version) || !v[i].sha256 ||
		    !v[i].filename)
			continue;
		p = &v[i];
		if (strcmp(v[i].sha256, x->sha256) || v[i].size != x->size)
			continue;
		for (size_t k = 0; k < ix->idx.nsources; k++) {
			if (ix->idx.sources[k] != v[i].source)
				continue;
			char *u = pool_url(sources[ix->source_of[k]].url, v[i].filename);
			int same = strcmp(u, x->url) == 0;
			free(u);
			if (same)
				return 0;
		}
	}
	if (p)
		rc = eb_error_set(err, EB_EINVALID,
				  "the lock's %s=%s (%s) is not what the signed index lists: lock "
				  "sha256 %s, size %llu; index sha256 %s, size %llu, file %s",
				  x->name, x->version, x->arch, x->sha256, (unsigned long long)x->size,
				  p->sha256, (unsigned long long)p->size, p->filename);
	else
		rc = eb_error_set(err, EB_EINVALID,
				  "the lock's %s=%s (%s) is in no signed Packages index of the "
				  "target's apt sources", x->name, x->version, x->arch);
	eb_error_hint(err, "the lock was edited, or the sources changed: run 'envbuild lock' "
			   "and review the diff");
	return rc;
}

/* the set of packages a dependency is checked against: the pins (and the
 * suggested additions) plus the base packages no pin replaces */
struct pset {
	const struct eb_debpkg **v;
	size_t n, cap;
};

static void pset_add(struct pset *s, const struct eb_debpkg *p)
{
	EB_ALLOC_GROW(s->v, s->n + 1, s->cap);
	s->v[s->n++] = p;
}

static int arch_ok(const struct eb_debpkg *p, const struct eb_debdep *d, const char *arch)
{
	if (d->archq && !strcmp(d->archq, "any"))
		return 1;
	if (d->archq && strcmp(d->archq, "native") != 0)
		return !strcmp(p->arch, d->archq);
	/* a foreign-arch package satisfies only when it is Multi-Arch: foreign */
	return !strcmp(p->arch, arch) || !strcmp(p->arch, "all") ||
	       (p->multi_arch && !strcmp(p->multi_arch, "foreign"));
}

/* 1 when p satisfies d directly or through its Provides */
static int satisfies(const struct eb_debpkg *p, const struct eb_debdep *d, const char *arch)
{
	if (!strcmp(p->name, d->name))
		return arch_ok(p, d, arch) && eb_debver_satisfies(p->version, d->rel, d->version);
	if (!p->provides || !strstr(p->provides, d->name))
		return 0;
	struct eb_debdeps prov;
	int ok = 0;
	if (eb_debdeps_parse(&prov, p->provides, 0, NULL) < 0)
		return 0;
	for (size_t i = 0; i < prov.n && !ok; i++) {
		const struct eb_debdep *v = &prov.groups[i].alt[0];
		if (strcmp(v->name, d->name) != 0)
			continue;
		/* a versioned dependency is satisfied only by a versioned
		 * Provides (policy 7.5) */
		if (d->rel == EB_REL_ANY)
			ok = 1;
		else if (v->rel == EB_REL_EQ)
			ok = eb_debver_satisfies(v->version, d->rel, d->version);
	}
	eb_debdeps_release(&prov);
	return ok;
}

static int group_satisfied(const struct pset *s, const struct eb_debdep_group *g,
			   const char *arch)
{
	for (size_t a = 0; a < g->n; a++)
		for (size_t i = 0; i < s->n; i++)
			if (satisfies(s->v[i], &g->alt[a], arch))
				return 1;
	return 0;
}

/* the newest package of the indexes that satisfies one alternative of g */
static const struct eb_debpkg *candidate(const struct eb_debindex *idx,
					 const struct eb_debdep_group *g, const char *arch)
{
	for (size_t a = 0; a < g->n; a++) {
		size_t n;
		const struct eb_debpkg *p = eb_debindex_lookup(idx, g->alt[a].name, &n);
		for (size_t i = 0; i < n; i++)
			if (satisfies(&p[i], &g->alt[a], arch))
				return &p[i];
	}
	/* a virtual package: the first real package that provides it */
	for (size_t a = 0; a < g->n; a++)
		for (size_t i = 0; i < idx->n; i++)
			if (idx->pkgs[i].provides && satisfies(&idx->pkgs[i], &g->alt[a], arch) &&
			    (!strcmp(idx->pkgs[i].arch, arch) || !strcmp(idx->pkgs[i].arch, "all")))
				return &idx->pkgs[i];
	return NULL;
}

static const struct eb_debpkg *find_pin(const struct eb_debindex *idx, const struct eb_apt_pin *pin,
					const char *arch)
{
	if (pin->arch)
		return eb_debindex_find(idx, pin->name, pin->arch, pin->version);
	const struct eb_debpkg *p = eb_debindex_find(idx, pin->name, arch, pin->version);
	return p ? p : eb_debindex_find(idx, pin->name, "all", pin->version);
}

static size_t source_of(const struct eb_apt_indexes *ix, const struct eb_debpkg *p)
{
	for (size_t k = 0; k < ix->idx.nsources; k++)
		if (ix->idx.sources[k] == p->source)
			return ix->source_of[k];
	return 0;
}

/* Conflicts/Breaks of a against b (a != b); returns the offending field */
static const char *conflicts(const struct eb_debpkg *a, const struct eb_debpkg *b, const char *arch,
			     char **what)
{
	const char *fields[2] = { a->conflicts, a->breaks };
	static const char *const names[2] = { "Conflicts", "Breaks" };

	for (int f = 0; f < 2; f++) {
		struct eb_debdeps d;
		if (!fields[f] || eb_debdeps_parse(&d, fields[f], 0, NULL) < 0)
			continue;
		for (size_t i = 0; i < d.n; i++) {
			const struct eb_debdep *c = &d.groups[i].alt[0];
			/* a package that conflicts with what it provides
			 * (Provides+Conflicts+Replaces of one virtual name)
			 * means "only one of us", not itself */
			if (!strcmp(b->name, c->name) && satisfies(b, c, arch)) {
				*what = eb_debdep_to_string(c);
				eb_debdeps_release(&d);
				return names[f];
			}
		}
		eb_debdeps_release(&d);
	}
	return NULL;
}

int eb_apt_resolve(struct eb_apt_resolution *out, const struct eb_apt_indexes *ix,
		   const struct eb_apt_source *sources, const struct eb_debindex *installed,
		   const struct eb_apt_pin *pins, size_t npins, const char *arch,
		   struct eb_error **err)
{
	struct eb_apt_resolution r = { NULL, 0 };
	struct pset set = { NULL, 0, 0 };
	const struct eb_debpkg **chosen = eb_xcalloc(npins + 1, sizeof(*chosen));
	struct eb_buf missing, why;
	size_t nmissing = 0;
	int rc = 0;

	eb_buf_init(&missing, 0);
	eb_buf_init(&why, 0);
	memset(out, 0, sizeof(*out));
	/* every pin exists, at exactly its version */
	for (size_t i = 0; i < npins; i++) {
		chosen[i] = find_pin(&ix->idx, &pins[i], arch);
		if (!chosen[i]) {
			size_t n;
			const struct eb_debpkg *any = eb_debindex_lookup(&ix->idx, pins[i].name, &n);
			struct eb_buf have;
			eb_buf_init(&have, 0);
			for (size_t k = 0; k < n && k < 8; k++)
				(void)eb_buf_addf(&have, "%s%s (%s)", k ? ", " : "", any[k].version,
						  any[k].arch);
			if (!rc)
				rc = eb_error_set(err, EB_ENOTFOUND,
						  "apt package %s%s%s=%s is not in the sources%s%s",
						  pins[i].name, pins[i].arch ? ":" : "",
						  pins[i].arch ? pins[i].arch : "", pins[i].version,
						  n ? "; they have " : " (no version at all)", have.ptr);
			eb_buf_release(&have);
		}
	}
	if (rc < 0)
		goto done;
	for (size_t i = 0; i < npins; i++)
		pset_add(&set, chosen[i]);
	for (size_t i = 0; installed && i < installed->n; i++) {
		const struct eb_debpkg *b = &installed->pkgs[i];
		int replaced = 0;
		if (!eb_debpkg_installed(b))
			continue;
		for (size_t k = 0; k < npins; k++)
			if (!strcmp(chosen[k]->name, b->name) && !strcmp(chosen[k]->arch, b->arch))
				replaced = 1;
		if (!replaced)
			pset_add(&set, b);
	}
	/* the closure: pins first, then each suggested addition's own needs */
	size_t npinned = npins;
	for (size_t i = 0; i < set.n; i++) {
		const struct eb_debpkg *p = set.v[i];
		int is_new = i >= npinned && !eb_debpkg_installed(p) && p->sha256;
		if (i >= npinned && !is_new)
			continue; /* base packages are taken as they are */
		const char *fields[2] = { p->pre_depends, p->depends };
		for (int f = 0; f < 2; f++) {
			struct eb_debdeps d;
			if (!fields[f])
				continue;
			if (eb_debdeps_parse(&d, fields[f], 1, err) < 0) {
				rc = eb_error_wrap(err, "%s %s", p->name, f ? "Depends" : "Pre-Depends");
				goto done;
			}
			for (size_t g = 0; g < d.n; g++) {
				if (group_satisfied(&set, &d.groups[g], arch))
					continue;
				const struct eb_debpkg *c = candidate(&ix->idx, &d.groups[g], arch);
				char *dep = eb_debdep_to_string(&d.groups[g].alt[0]);
				(void)eb_buf_addf(&why, "%s%s=%s needs %s", why.len ? ", " : "",
						  p->name, p->version, dep);
				free(dep);
				if (c) {
					(void)eb_buf_addf(&missing, " %s=%s", c->name, c->version);
					nmissing++;
					pset_add(&set, c);
				} else {
					(void)eb_buf_adds(&why, " (no source has it)");
				}
			}
			eb_debdeps_release(&d);
		}
	}
	if (why.len) {
		rc = eb_error_set(err, EB_EINVALID,
				  "the apt pins are not complete: %s%s%s", why.ptr,
				  nmissing ? "; add:" : "", missing.ptr);
		if (nmissing)
			eb_error_hint(err, "add to apt:%s", missing.ptr);
		goto done;
	}
	/* Conflicts and Breaks, both ways, among pins and base */
	for (size_t i = 0; i < npins; i++) {
		for (size_t k = 0; k < set.n; k++) {
			char *what = NULL;
			const struct eb_debpkg *a = chosen[i], *b = set.v[k];
			const char *field;
			if (b == a)
				continue;
			field = conflicts(a, b, arch, &what);
			if (!field) {
				/* the other way round: b declares the conflict */
				const struct eb_debpkg *t = a;
				a = b;
				b = t;
				field = conflicts(a, b, arch, &what);
			}
			if (field) {
				const struct eb_debpkg *other = a == chosen[i] ? b : a;
				int other_pinned = 0;
				for (size_t q = 0; q < npins; q++)
					other_pinned |= chosen[q] == other;
				rc = eb_error_set(err, EB_EINVALID, "%s=%s %s %s (%s: %s=%s)", a->name,
						  a->version,
						  !strcmp(field, "Breaks") ? "breaks" : "conflicts with",
						  what, other_pinned ? "pinned" : "installed in the base",
						  other->name, other->version);
				free(what);
				goto done;
			}
		}
	}
	r.pkgs = eb_xcalloc(npins + 1, sizeof(*r.pkgs));
	for (size_t i = 0; i < npins; i++) {
		const struct eb_debpkg *p = chosen[i];
		struct eb_apt_package *o = &r.pkgs[r.n++];
		o->name = eb_xstrdup(p->name);
		o->version = eb_xstrdup(p->version);
		o->arch = eb_xstrdup(p->arch);
		o->source = source_of(ix, p);
		o->url = pool_url(sources[o->source].url, p->filename);
		o->sha256 = eb_xstrdup(p->sha256);
		o->size = p->size;
	}
	*out = r;
	rc = 0;
done:
	free(set.v);
	free(chosen);
	eb_buf_release(&missing);
	eb_buf_release(&why);
	return rc;
}
