/*
 * pyprovider.c - the resolver's provider over package indexes (see
 * pyprovider.h).  The one file of `envbuild pin` that calls the index API.
 */
#include "config.h"

#include <archive.h>
#include <pthread.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/blobstore.h"
#include "pin/requirement.h"
#include "pin/version.h"
#include "python/index.h"
#include "python/metadata.h"
#include "python/pyprovider.h"
#include "python/tags.h"
#include "python/sdist.h"
#include "python/wheel.h"
#include "util/alloc.h"
#include "util/interrupt.h"
#include "util/buf.h"

struct page_entry {
	char *name;
	int missing;
	struct eb_pyindex_page page;
	struct eb_dist_file *files;   /* views of page.files for eb_tags_select */
	struct eb_file_hash **hashes; /* per file */
	struct eb_wheel_filename *wheels; /* parsed names; norm_name NULL when not ours */
	char **sdist_versions; /* per file: the version of an sdist of ours, or NULL */
};

struct md_entry {
	char *url;
	char *requires_python;
	char **requires;
	size_t n;
};

/* An sdist-only version whose files `envbuild pin` read. */
struct sdist_entry {
	char *name, *version; /* as asked */
	int rc;               /* < 0: reading failed; why holds the reason */
	char *why;
	struct eb_sdist_meta meta;
	char digest[EB_DIGEST_STR_LEN + 1]; /* the sdist's blob, when rc == 0 */
	char *filename;
};

struct penv {
	struct eb_tag_list tags;
	char *label;
};

struct eb_pyprovider {
	struct eb_pyindex_set *idx;
	struct eb_blobstore *bs;
	struct penv *envs;
	struct eb_resolver_env *renvs;
	size_t nenvs;
	struct page_entry *pages;
	size_t npages, cappages;
	struct md_entry *mds;
	size_t nmds, capmds;
	struct eb_pyprovider_stats stats;
	char *sdist_only; /* the first "name==version (files)" found with only sdists */
	struct sdist_entry *sdists; /* sdist-only versions read, once each */
	size_t nsdists;
};

int eb_pyprovider_new(struct eb_pyprovider **out, struct eb_pyindex_set *idx,
		      struct eb_blobstore *bs, const struct eb_pyprovider_env *envs, size_t nenvs,
		      struct eb_error **err)
{
	struct eb_pyprovider *p = eb_xcalloc(1, sizeof(*p));
	int r;

	p->idx = idx;
	p->bs = bs;
	p->envs = eb_xcalloc(nenvs, sizeof(*p->envs));
	p->renvs = eb_xcalloc(nenvs, sizeof(*p->renvs));
	for (size_t i = 0; i < nenvs; i++) {
		struct eb_tag_target tt;
		if ((r = eb_tag_target_parse(&tt, envs[i].python_version, envs[i].platform,
					     envs[i].libc, err)) < 0 ||
		    (r = eb_tag_list_build(&p->envs[i].tags, &tt, err)) < 0) {
			eb_error_wrap(err, "environment '%s'", envs[i].label);
			p->nenvs = i;
			eb_pyprovider_free(p);
			return r;
		}
		p->nenvs = i + 1;
		p->envs[i].label = eb_xstrdup(envs[i].label);
		p->renvs[i].label = p->envs[i].label;
		p->renvs[i].python_full = p->envs[i].tags.target.python_full;
		eb_marker_env_init(&p->renvs[i].markers, p->envs[i].tags.target.python_full,
				   p->envs[i].tags.target.arch);
	}
	*out = p;
	return 0;
}

void eb_pyprovider_free(struct eb_pyprovider *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nenvs; i++) {
		eb_tag_list_release(&p->envs[i].tags);
		free(p->envs[i].label);
	}
	free(p->envs);
	free(p->renvs);
	for (size_t i = 0; i < p->npages; i++) {
		struct page_entry *e = &p->pages[i];
		for (size_t k = 0; k < e->page.nfiles; k++) {
			free(e->hashes[k]);
			eb_wheel_filename_release(&e->wheels[k]);
			free(e->sdist_versions[k]);
		}
		free(e->sdist_versions);
		free(e->hashes);
		free(e->wheels);
		free(e->files);
		eb_pyindex_page_release(&e->page);
		free(e->name);
	}
	free(p->pages);
	for (size_t i = 0; i < p->nmds; i++) {
		free(p->mds[i].url);
		free(p->mds[i].requires_python);
		for (size_t k = 0; k < p->mds[i].n; k++)
			free(p->mds[i].requires[k]);
		free(p->mds[i].requires);
	}
	free(p->mds);
	free(p->sdist_only);
	for (size_t i = 0; i < p->nsdists; i++) {
		free(p->sdists[i].name);
		free(p->sdists[i].version);
		free(p->sdists[i].why);
		free(p->sdists[i].filename);
		eb_sdist_meta_release(&p->sdists[i].meta);
	}
	free(p->sdists);
	free(p);
}

/* Add a fetched page (taken over) to the cache, with its views. */
static struct page_entry *page_insert(struct eb_pyprovider *p, const char *name,
				      struct eb_pyindex_page *page, int missing)
{
	struct page_entry *e;

	EB_ALLOC_GROW(p->pages, p->npages + 1, p->cappages);
	e = &p->pages[p->npages++];
	memset(e, 0, sizeof(*e));
	e->name = eb_xstrdup(name);
	e->missing = missing;
	if (missing)
		return NULL;
	e->page = *page;
	memset(page, 0, sizeof(*page));
	p->stats.pages++;
	e->files = eb_xcalloc(e->page.nfiles + 1, sizeof(*e->files));
	e->hashes = eb_xcalloc(e->page.nfiles + 1, sizeof(*e->hashes));
	e->wheels = eb_xcalloc(e->page.nfiles + 1, sizeof(*e->wheels));
	e->sdist_versions = eb_xcalloc(e->page.nfiles + 1, sizeof(*e->sdist_versions));
	for (size_t i = 0; i < e->page.nfiles; i++) {
		const struct eb_pyindex_file *f = &e->page.files[i];
		struct eb_error *ignore = NULL;

		/* a page of 300,000 files: Ctrl-C is said by the next check */
		if ((i & 4095) == 0 && eb_interrupted())
			break;

		e->hashes[i] = eb_xcalloc(f->hashes.n + 1, sizeof(**e->hashes));
		for (size_t k = 0; k < f->hashes.n; k++) {
			e->hashes[i][k].algo = f->hashes.items[k].algo;
			e->hashes[i][k].hex = f->hashes.items[k].hex;
		}
		e->files[i] = (struct eb_dist_file){ f->filename, f->url, e->hashes[i], f->hashes.n,
						     f->requires_python, f->yanked, f->yanked_reason,
						     f->size };
		/* Only wheels of this very project count (an index page can
		 * list anything). */
		if (eb_tags_is_wheel_filename(f->filename) &&
		    eb_wheel_filename_parse(&e->wheels[i], f->filename, &ignore) == 0 &&
		    strcmp(e->wheels[i].norm_name, name) != 0)
			eb_wheel_filename_release(&e->wheels[i]);
		if (eb_sdist_is_filename(f->filename)) {
			char *sn = NULL, *sv = NULL;
			if (eb_sdist_filename_parse(f->filename, &sn, &sv, &ignore) == 0 &&
			    strcmp(sn, name) == 0)
				e->sdist_versions[i] = sv;
			else
				free(sv);
			free(sn);
		}
		eb_error_free(ignore);
	}
	return e;
}

static struct page_entry *page_cached(struct eb_pyprovider *p, const char *name, int *known)
{
	*known = 0;
	for (size_t i = 0; i < p->npages; i++) {
		if (strcmp(p->pages[i].name, name) == 0) {
			*known = 1;
			return p->pages[i].missing ? NULL : &p->pages[i];
		}
	}
	return NULL;
}

/* The project page (once per run); NULL with *err unset when no index has
 * the project. */
static struct page_entry *get_page(struct eb_pyprovider *p, const char *name, int *rc,
				   struct eb_error **err)
{
	struct eb_pyindex_page page = { 0 };
	struct page_entry *e;
	int known;

	*rc = 0;
	e = page_cached(p, name, &known);
	if (known)
		return e;
	*rc = eb_pyindex_set_project(p->idx, name, &page, err);
	if (*rc == -EB_ENOTFOUND) {
		eb_error_clear(err);
		*rc = 0;
		return page_insert(p, name, &page, 1);
	}
	if (*rc < 0)
		return NULL;
	e = page_insert(p, name, &page, 0);
	if ((*rc = eb_interrupt_check(err)) < 0)
		return NULL; /* page_insert stopped short */
	return e;
}

static int pv_versions(void *ctx, const char *name, struct eb_resolver_versions *out,
		       struct eb_error **err)
{
	struct eb_pyprovider *p = ctx;
	struct page_entry *e;
	int rc;

	e = get_page(p, name, &rc, err);
	if (rc < 0)
		return rc;
	if (!e)
		return eb_error_set(err, EB_ENOTFOUND, "no index has '%s'", name);
	for (size_t i = 0; i < e->page.nfiles; i++)
		if (e->wheels[i].norm_name)
			eb_resolver_versions_add(out, e->wheels[i].version_str,
						 e->page.files[i].yanked);
		else if (e->sdist_versions[i])
			/* Listed so that a pin of it is told "only an sdist"
			 * rather than "no versions". */
			eb_resolver_versions_add(out, e->sdist_versions[i],
						 e->page.files[i].yanked);
	return 0;
}

static struct md_entry *md_insert(struct eb_pyprovider *p, const char *url,
				  const struct eb_metadata *md)
{
	struct md_entry *m;

	EB_ALLOC_GROW(p->mds, p->nmds + 1, p->capmds);
	m = &p->mds[p->nmds++];
	memset(m, 0, sizeof(*m));
	m->url = eb_xstrdup(url);
	m->requires_python = md->requires_python ? eb_xstrdup(md->requires_python) : NULL;
	m->requires = eb_xcalloc(md->nrequires_dist + 1, sizeof(*m->requires));
	for (size_t i = 0; i < md->nrequires_dist; i++)
		m->requires[m->n++] = eb_xstrdup(md->requires_dist[i].text);
	return m;
}

static struct md_entry *md_cached(struct eb_pyprovider *p, const char *url)
{
	for (size_t i = 0; i < p->nmds; i++)
		if (strcmp(p->mds[i].url, url) == 0)
			return &p->mds[i];
	return NULL;
}

/* Requires-Dist and Requires-Python of one file: its PEP 658 metadata when
 * the index has it (verified by the index layer), else the wheel's. */
static int file_metadata(struct eb_pyprovider *p, struct page_entry *e, size_t fi,
			 struct md_entry **out, struct eb_error **err)
{
	const struct eb_pyindex_file *f = &e->page.files[fi];
	struct eb_metadata md = { 0 };
	struct eb_buf b;
	int rc = -EB_ENOTFOUND;

	if ((*out = md_cached(p, f->url)) != NULL)
		return 0;
	eb_buf_init(&b, 0);
	if (f->core_metadata) {
		rc = eb_pyindex_fetch_metadata(p->idx, &e->page, f, &b, err);
		if (rc == 0) {
			p->stats.metadata_files++;
			rc = eb_metadata_parse(&md, b.ptr, b.len, err);
		}
	}
	eb_buf_release(&b);
	if (rc == -EB_ENOTFOUND) {
		char digest[EB_DIGEST_STR_LEN + 1];
		char *path;

		eb_error_clear(err);
		rc = eb_pyindex_download(p->idx, &e->page, f, p->bs, NULL, digest, err);
		if (rc < 0)
			return rc;
		p->stats.wheels_read++;
		path = eb_blobstore_path(p->bs, digest);
		rc = eb_wheel_read_metadata(&md, path, err);
		free(path);
	}
	if (rc < 0)
		return eb_error_wrap(err, "metadata of '%s'", f->filename);
	*out = md_insert(p, f->url, &md);
	eb_metadata_release(&md);
	return 0;
}

/* The sdist of name==version read (downloaded verified into the blob
 * store, unpacked in a temporary directory): once per run. */
static struct sdist_entry *sdist_read(struct eb_pyprovider *p, const struct page_entry *e,
				      size_t fi, const char *name, const char *version,
				      struct eb_error **err)
{
	char digest[EB_DIGEST_STR_LEN + 1];
	struct sdist_entry *se;
	struct eb_error *why = NULL;
	const char *tmp = getenv("TMPDIR");
	char *path;

	for (size_t i = 0; i < p->nsdists; i++)
		if (strcmp(p->sdists[i].name, name) == 0 &&
		    strcmp(p->sdists[i].version, version) == 0)
			return &p->sdists[i];
	if (eb_interrupt_check(err) < 0)
		return NULL;
	p->sdists = eb_xreallocarray(p->sdists, p->nsdists + 1, sizeof(*p->sdists));
	se = &p->sdists[p->nsdists++];
	memset(se, 0, sizeof(*se));
	se->name = eb_xstrdup(name);
	se->version = eb_xstrdup(version);
	se->rc = eb_pyindex_download(p->idx, &e->page, &e->page.files[fi], p->bs, NULL, digest,
				     &why);
	if (se->rc == 0) {
		snprintf(se->digest, sizeof(se->digest), "%s", digest);
		se->filename = eb_xstrdup(e->page.files[fi].filename);
		path = eb_blobstore_path(p->bs, digest);
		se->rc = eb_sdist_read_meta(path, tmp && *tmp ? tmp : "/tmp", &se->meta, &why);
		free(path);
	}
	if (se->rc < 0) {
		if (se->rc == -EB_EINTR) {
			*err = why;
			p->nsdists--;
			free(se->name);
			free(se->version);
			return NULL;
		}
		se->why = eb_xstrdup(why && why->msg ? why->msg : "unreadable");
		eb_error_free(why);
	}
	return se;
}

/* When version has sdists and no wheel of this project at all: its
 * dependencies as the sdist states them (PKG-INFO >= 2.2, else static
 * [project] dependencies), returning 1; else, or when those need a
 * build, it is unavailable with the reason, the first such remembered
 * for eb_pyprovider_sdist_only().  0 when it has a wheel after all. */
static int sdist_only(struct eb_pyprovider *p, const struct page_entry *e, const char *name,
		      const char *version, struct eb_resolver_deps *out, struct eb_error **err)
{
	struct eb_buf b = EB_BUF_INIT;
	struct sdist_entry *se;
	size_t n = 0, first = 0;

	for (size_t i = 0; i < e->page.nfiles; i++) {
		if (e->wheels[i].norm_name && strcmp(e->wheels[i].version_str, version) == 0)
			goto none;
		if (e->sdist_versions[i] && strcmp(e->sdist_versions[i], version) == 0) {
			if (!n)
				first = i;
			eb_buf_puts(&b, n++ ? ", " : "");
			eb_buf_puts(&b, e->page.files[i].filename);
		}
	}
	if (!n)
		goto none;
	if (!(se = sdist_read(p, e, first, name, version, err))) {
		eb_buf_release(&b);
		return -EB_EINTR;
	}
	if (se->rc == 0 && se->meta.deps_known) {
		for (size_t i = 0; i < se->meta.ndeps; i++)
			eb_resolver_deps_add(out, se->meta.deps[i]);
		eb_buf_release(&b);
		return 1;
	}
	if (se->rc < 0)
		eb_resolver_deps_unavailable(out, "has only an sdist (%s), which could not be "
					     "read (%s)", b.ptr, se->why);
	else
		eb_resolver_deps_unavailable(out, "has only an sdist (%s) whose dependencies "
					     "need a build", b.ptr);
	if (!p->sdist_only)
		p->sdist_only =
			se->rc < 0
				? eb_xasprintf("%s==%s is only an sdist (the index has: %s), "
					       "which could not be read: %s", name, version, b.ptr,
					       se->why)
				: eb_xasprintf("%s==%s is only an sdist (the index has: %s) whose "
					       "dependencies need a build (neither PKG-INFO of "
					       "metadata 2.2 nor a static [project].dependencies "
					       "states them)", name, version, b.ptr);
	eb_buf_release(&b);
	return 1;
none:
	eb_buf_release(&b);
	return 0;
}

const char **eb_pyprovider_build_requires(const struct eb_pyprovider *p, const char *name,
					  const char *version, size_t *n)
{
	for (size_t i = 0; i < p->nsdists; i++)
		if (p->sdists[i].rc == 0 && p->sdists[i].meta.deps_known &&
		    strcmp(p->sdists[i].name, name) == 0 &&
		    strcmp(p->sdists[i].version, version) == 0) {
			*n = p->sdists[i].meta.nbuild_requires;
			return (const char **)p->sdists[i].meta.build_requires;
		}
	*n = 0;
	return NULL;
}

int eb_pyprovider_sdist(const struct eb_pyprovider *p, const char *name, const char *version,
			const char **digest, const char **filename)
{
	for (size_t i = 0; i < p->nsdists; i++)
		if (p->sdists[i].rc == 0 && strcmp(p->sdists[i].name, name) == 0 &&
		    strcmp(p->sdists[i].version, version) == 0) {
			*digest = p->sdists[i].digest;
			*filename = p->sdists[i].filename;
			return 1;
		}
	return 0;
}

/* The wheel of name==version for env's tags: *e its page (NULL when no
 * index has name, with -EB_ENOTFOUND), *choice the file or why none. */
static int select_pin(struct eb_pyprovider *p, size_t env, const char *name, const char *version,
		      struct page_entry **e, struct eb_wheel_choice *choice, struct eb_error **err)
{
	struct eb_requirement req;
	char *pin;
	int rc;

	*e = get_page(p, name, &rc, err);
	if (rc < 0)
		return rc;
	if (!*e)
		return eb_error_set(err, EB_ENOTFOUND, "no index has '%s'", name);
	pin = eb_xasprintf("%s==%s", name, version);
	rc = eb_requirement_parse(&req, pin, strlen(pin), err);
	free(pin);
	if (rc < 0)
		return rc;
	rc = eb_tags_select(choice, (*e)->files, (*e)->page.nfiles, &req, version,
			    &p->envs[env].tags, err);
	eb_requirement_release(&req);
	return rc;
}

int eb_pyprovider_wheel(struct eb_pyprovider *p, size_t env, const char *name,
			const char *version, char digest[EB_DIGEST_STR_LEN + 1],
			struct eb_error **err)
{
	struct eb_wheel_choice choice;
	struct page_entry *e;
	int rc;

	if ((rc = select_pin(p, env, name, version, &e, &choice, err)) < 0)
		return rc;
	return eb_pyindex_download(p->idx, &e->page, &e->page.files[choice.index], p->bs, NULL,
				   digest, err);
}

const char *eb_pyprovider_sdist_only(const struct eb_pyprovider *p)
{
	return p->sdist_only;
}

static int pv_dependencies(void *ctx, size_t env, const char *name, const char *version,
			   struct eb_resolver_deps *out, struct eb_error **err)
{
	struct eb_pyprovider *p = ctx;
	struct eb_wheel_choice choice;
	struct eb_error *why = NULL;
	struct page_entry *e;
	struct md_entry *m = NULL;
	int rc;

	rc = select_pin(p, env, name, version, &e, &choice, &why);
	if (rc < 0) {
		if (rc != -EB_ENOTFOUND || !e) {
			if (err && !*err)
				*err = why;
			else
				eb_error_free(why);
			return rc;
		}
		if (choice.miss == EB_WHEEL_REQUIRES_PYTHON) {
			/* Say it the resolver's way: "requires Python >=3.12". */
			for (size_t i = 0; i < e->page.nfiles; i++) {
				if (e->wheels[i].norm_name && e->page.files[i].requires_python &&
				    strcmp(e->wheels[i].version_str, version) == 0) {
					out->requires_python =
						eb_xstrdup(e->page.files[i].requires_python);
					break;
				}
			}
		}
		int so = 0;
		if (!out->requires_python && choice.miss == EB_WHEEL_NO_COMPATIBLE &&
		    (so = sdist_only(p, e, name, version, out, err)) < 0) {
			eb_error_free(why);
			return so;
		}
		if (so)
			;
		else if (!out->requires_python)
			eb_resolver_deps_unavailable(out, "has no wheel for %s %s",
						     eb_tag_list_abi(&p->envs[env].tags),
						     eb_tag_list_best_platform(&p->envs[env].tags));
		eb_error_free(why);
		return 0;
	}
	rc = file_metadata(p, e, choice.index, &m, err);
	if (rc < 0)
		return rc;
	if (m->requires_python)
		out->requires_python = eb_xstrdup(m->requires_python);
	else if (e->page.files[choice.index].requires_python)
		out->requires_python = eb_xstrdup(e->page.files[choice.index].requires_python);
	for (size_t i = 0; i < m->n; i++)
		eb_resolver_deps_add(out, m->requires[i]);
	return 0;
}

/* ---- parallel prefetch ---------------------------------------------------- */

/* Fetches at once: a loopback or LAN index answers in well under a
 * millisecond of work each, so latency, not bandwidth, decides; the HTTP
 * client shares one connection pool between the threads. */
#define PREFETCH_THREADS 8

struct fetch_job {
	const char *name;            /* page jobs */
	struct eb_pyindex_page page;
	const struct eb_pyindex_page *from; /* metadata jobs */
	const struct eb_pyindex_file *file;
	struct eb_buf buf;
	int rc;
};

struct fetch_pool {
	struct eb_pyprovider *p;
	struct fetch_job *jobs;
	size_t n, next;
	int metadata;
	pthread_mutex_t mu;
};

static void *fetch_worker(void *arg)
{
	struct fetch_pool *fp = arg;

	for (;;) {
		struct fetch_job *j;
		struct eb_error *e = NULL;

		pthread_mutex_lock(&fp->mu);
		j = fp->next < fp->n ? &fp->jobs[fp->next++] : NULL;
		pthread_mutex_unlock(&fp->mu);
		/* Ctrl-C: no new page (a job not run keeps -EB_EINTR) */
		if (!j || eb_interrupted())
			return NULL;
		if (fp->metadata)
			j->rc = eb_pyindex_fetch_metadata(fp->p->idx, j->from, j->file, &j->buf, &e);
		else
			j->rc = eb_pyindex_set_project(fp->p->idx, j->name, &j->page, &e);
		/* A hint only: the sequential call that follows reports. */
		eb_error_free(e);
	}
}

static void fetch_all(struct eb_pyprovider *p, struct fetch_job *jobs, size_t n, int metadata)
{
	struct fetch_pool fp = { p, jobs, n, 0, metadata, PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[PREFETCH_THREADS];
	size_t nth = n < PREFETCH_THREADS ? n : PREFETCH_THREADS, started = 0;

	for (size_t i = 0; i < n; i++)
		jobs[i].rc = -EB_EINTR; /* until a worker runs it */

	for (size_t i = 0; i < nth; i++)
		if (pthread_create(&th[started], NULL, fetch_worker, &fp) == 0)
			started++;
	if (started == 0)
		fetch_worker(&fp); /* no threads: do it here */
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&fp.mu);
}

/* The file env would install for the newest final, not yanked version a
 * page lists (what the resolver most likely asks for next), or -1. */
static long likely_file(struct eb_pyprovider *p, struct page_entry *e, size_t env)
{
	const struct eb_version *best = NULL;
	const char *best_str = NULL;
	struct eb_wheel_choice choice;
	struct eb_requirement req;
	struct eb_error *err = NULL;
	char *pin;
	long out = -1;

	for (size_t i = 0; i < e->page.nfiles; i++) {
		const struct eb_wheel_filename *w = &e->wheels[i];
		if (!w->norm_name || e->page.files[i].yanked || eb_version_is_prerelease(&w->version))
			continue;
		if (!best || eb_version_cmp(&w->version, best) > 0) {
			best = &w->version;
			best_str = w->version_str;
		}
	}
	if (!best)
		return -1;
	pin = eb_xasprintf("%s==%s", e->name, best_str);
	if (eb_requirement_parse(&req, pin, strlen(pin), &err) == 0) {
		if (eb_tags_select(&choice, e->files, e->page.nfiles, &req, best_str,
				   &p->envs[env].tags, &err) == 0)
			out = (long)choice.index;
		eb_requirement_release(&req);
	}
	eb_error_free(err);
	free(pin);
	return out;
}

static void pv_prefetch(void *ctx, size_t env, const char *const *names, size_t n)
{
	struct eb_pyprovider *p = ctx;
	struct fetch_job *jobs = eb_xcalloc(n + 1, sizeof(*jobs));
	size_t nj = 0, first = p->npages, nm = 0;
	int known;

	for (size_t i = 0; i < n; i++) {
		int dup = 0;
		(void)page_cached(p, names[i], &known);
		for (size_t k = 0; k < nj && !dup; k++)
			dup = strcmp(jobs[k].name, names[i]) == 0;
		if (!known && !dup)
			jobs[nj++].name = names[i];
	}
	if (nj < 2) {
		/* Nothing to gain over the call that follows. */
		free(jobs);
		return;
	}
	fetch_all(p, jobs, nj, 0);
	for (size_t i = 0; i < nj; i++) {
		if (jobs[i].rc == 0)
			page_insert(p, jobs[i].name, &jobs[i].page, 0);
		else if (jobs[i].rc == -EB_ENOTFOUND)
			page_insert(p, jobs[i].name, &jobs[i].page, 1);
		eb_pyindex_page_release(&jobs[i].page);
	}
	free(jobs);

	/* Then the metadata of the version each page most likely gives. */
	jobs = eb_xcalloc(p->npages - first + 1, sizeof(*jobs));
	for (size_t i = first; i < p->npages; i++) {
		struct page_entry *e = &p->pages[i];
		long fi;
		if (e->missing || (fi = likely_file(p, e, env)) < 0 ||
		    !e->page.files[fi].core_metadata || md_cached(p, e->page.files[fi].url))
			continue;
		jobs[nm].from = &e->page;
		jobs[nm].file = &e->page.files[fi];
		eb_buf_init(&jobs[nm].buf, EB_METADATA_MAX_CORE);
		nm++;
	}
	if (nm)
		fetch_all(p, jobs, nm, 1);
	for (size_t i = 0; i < nm; i++) {
		struct eb_metadata md = { 0 };
		struct eb_error *e = NULL;
		if (jobs[i].rc == 0 && eb_metadata_parse(&md, jobs[i].buf.ptr, jobs[i].buf.len, &e) == 0) {
			p->stats.metadata_files++;
			md_insert(p, jobs[i].file->url, &md);
		}
		eb_metadata_release(&md);
		eb_error_free(e);
		eb_buf_release(&jobs[i].buf);
	}
	free(jobs);
}

void eb_pyprovider_resolver(struct eb_pyprovider *p, struct eb_resolver_provider *out)
{
	out->versions = pv_versions;
	out->dependencies = pv_dependencies;
	out->prefetch = pv_prefetch;
	out->ctx = p;
}

const struct eb_resolver_env *eb_pyprovider_envs(const struct eb_pyprovider *p)
{
	return p->renvs;
}

static int rp_ok(const char *rp, const char *python_full)
{
	struct eb_specifier_set set = EB_SPECIFIER_SET_INIT;
	struct eb_version v;
	struct eb_error *e = NULL;
	int ok = 1;

	if (!rp || !*rp)
		return 1;
	if (eb_specifier_set_parse(&set, rp, strlen(rp), &e) < 0) {
		eb_error_free(e);
		return 1; /* as pip: an invalid requires-python is ignored */
	}
	if (eb_version_parse(&v, python_full, strlen(python_full), &e) == 0) {
		ok = eb_specifier_set_contains(&set, &v, NULL);
		eb_version_release(&v);
	}
	eb_error_free(e);
	eb_specifier_set_release(&set);
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int eb_pyprovider_hashes(struct eb_pyprovider *p, const size_t *envs, size_t n,
			 const char *name, const char *version, char ***out, size_t *count,
			 struct eb_error **err)
{
	struct eb_version want;
	struct page_entry *e;
	char **hs = NULL;
	size_t nh = 0, cap = 0;
	int rc;

	*out = NULL;
	*count = 0;
	e = get_page(p, name, &rc, err);
	if (rc < 0)
		return rc;
	if (!e)
		return eb_error_set(err, EB_ENOTFOUND, "no index has '%s'", name);
	if ((rc = eb_version_parse(&want, version, strlen(version), err)) < 0)
		return rc;
	for (size_t i = 0; i < e->page.nfiles; i++) {
		const struct eb_pyindex_file *f = &e->page.files[i];
		const char *hex = eb_pyindex_file_hash(f, "sha256");
		int fits = 0;

		if (!e->wheels[i].norm_name || !hex ||
		    eb_version_cmp(&e->wheels[i].version, &want) != 0)
			continue;
		for (size_t k = 0; k < n && !fits; k++) {
			const struct eb_tag_list *tl = &p->envs[envs[k]].tags;
			fits = eb_tag_list_wheel_rank(tl, &e->wheels[i]) >= 0 &&
			       rp_ok(f->requires_python, tl->target.python_full);
		}
		if (!fits)
			continue;
		EB_ALLOC_GROW(hs, nh + 1, cap);
		hs[nh++] = eb_xasprintf("sha256:%s", hex);
	}
	/* A version with only sdists: the sdist is what build verifies. */
	for (size_t i = 0; nh == 0 && i < e->page.nfiles; i++) {
		const char *hex = eb_pyindex_file_hash(&e->page.files[i], "sha256");
		struct eb_version sv;
		struct eb_error *ignore = NULL;
		int same;

		if (!e->sdist_versions[i] || !hex ||
		    eb_version_parse(&sv, e->sdist_versions[i], strlen(e->sdist_versions[i]),
				     &ignore) < 0) {
			eb_error_free(ignore);
			continue;
		}
		same = eb_version_cmp(&sv, &want) == 0;
		eb_version_release(&sv);
		for (size_t k = 0; same && k < e->page.nfiles; k++)
			same = !(e->wheels[k].norm_name && eb_version_cmp(&e->wheels[k].version,
									   &want) == 0);
		if (same) {
			EB_ALLOC_GROW(hs, nh + 1, cap);
			hs[nh++] = eb_xasprintf("sha256:%s", hex);
		}
	}
	eb_version_release(&want);
	if (nh)
		eb_sort(hs, nh, sizeof(*hs), cmp_str);
	for (size_t i = 1; i < nh;) {
		if (strcmp(hs[i], hs[i - 1]) == 0) {
			free(hs[i]);
			memmove(&hs[i], &hs[i + 1], (nh - i - 1) * sizeof(*hs));
			nh--;
		} else {
			i++;
		}
	}
	*out = hs;
	*count = nh;
	return 0;
}

void eb_pyprovider_stats(const struct eb_pyprovider *p, struct eb_pyprovider_stats *out)
{
	*out = p->stats;
}
