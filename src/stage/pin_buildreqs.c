/*
 * pin_buildreqs.c - `build_requirements` written by `envbuild pin` from
 * what a target's sdist-only pins need to build: their [build-system]
 * requires and what their backends' get_requires_for_build_wheel adds
 * (stage/pin_buildreqs.h).  A second resolution over the same provider:
 * pages and metadata already read are not fetched again.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/pyinstall.h"
#include "assemble/sdistbuild.h"
#include "assemble/sdisthook.h"
#include "envspec/spec.h"
#include "python/pyprovider.h"
#include "python/target.h"
#include "ref/imageref.h"
#include "python/resolver.h"
#include "stage/pin_buildreqs.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fs.h"

static int cmp_pin(const void *a, const void *b)
{
	return strcmp((*(const struct eb_resolver_pin *const *)a)->name,
		      (*(const struct eb_resolver_pin *const *)b)->name);
}

/* The item of build_requirements naming a file ("-r FILE"), or NULL. */
static const char *named_file(const struct eb_spec_target *t)
{
	for (size_t i = 0; i < t->build_requirements.n; i++) {
		const char *s = t->build_requirements.v[i].s;
		if (strncmp(s, "-r", 2) == 0 && (s[2] == ' ' || s[2] == '\t')) {
			s += 3;
			while (*s == ' ' || *s == '\t')
				s++;
			return s;
		}
	}
	return NULL;
}

/* Rounds of asking the backends and resolving again: each round can only
 * add requirements, and a backend that keeps asking for more than it was
 * given (a new one each time) is stopped here. */
#define MAX_ROUNDS 6

/* A sdist-only pin of the target, in the environments that pin it. */
struct sdist {
	char *label;          /* "name==version" */
	char *via;            /* "name==version (its backend)" */
	const char *name, *version; /* borrowed from r's solution */
	unsigned envmask;     /* bit k: environment env0+k pins it */
	unsigned askedmask;   /* bit k: its backend answered for environment k */
	char **last;          /* the last answer of a native environment */
	size_t nlast;
};

/* One build requirement of one environment, as given to the resolver. */
struct breq {
	size_t env;
	char *req, *via;
};

/* The target's base for one environment, read when a backend is asked. */
struct envbase {
	int tried, foreign;
	char **layers;
	size_t nlayers;
	struct eb_pytarget py;
};

static int breq_has(const struct breq *v, size_t n, size_t env, const char *req)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].env == env && strcmp(v[i].req, req) == 0)
			return 1;
	return 0;
}

static void breq_add(struct breq **v, size_t *n, size_t env, const char *req, const char *via)
{
	*v = eb_xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].env = env;
	(*v)[*n].req = eb_xstrdup(req);
	(*v)[(*n)++].via = eb_xstrdup(via);
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Environment k's base and its Python, once: b->foreign when this host
 * cannot execute it (nothing is pulled then).  The base is the one build
 * runs the backends in: the builder's (`build_in`, built for every
 * platform of t: EB257), else t's own. */
static int envbase_get(const struct eb_pin_buildreqs_ctx *c, const struct eb_spec *spec,
		       const struct eb_spec_target *t, size_t k, struct envbase *b,
		       struct eb_error **err)
{
	/* a build_in that names no target is EB257, said by the spec's check */
	const struct eb_spec_target *b0 = t->build_in.s ? eb_spec_target(spec, t->build_in.s) : NULL;
	const struct eb_spec_target *bt = b0 ? b0 : t;
	const char *platform = t->platforms.v[k].s;
	char host[65];
	int r;

	if (b->tried)
		return 0;
	b->tried = 1;
	if (!eb_sdist_host_runs(eb_pytarget_machine(platform), host, sizeof(host))) {
		b->foreign = 1;
		return 0;
	}
	if (eb_imageref_is_scratch(bt->base.s))
		return 0; /* no python3 to run: b->py.interpreter stays NULL */
	if ((r = c->pull(c->ud, bt, platform, &b->layers, &b->nlayers, err)) < 0)
		return r;
	r = eb_pyenv_detect(&b->py, c->bs, (const char *const *)b->layers, NULL, NULL, b->nlayers,
			    platform,
			    &(struct eb_pytarget_overrides){ bt->python.s, bt->interpreter.s,
							     bt->site_packages.s, bt->libc.s },
			    err);
	if (r < 0 && bt != t)
		eb_error_wrap(err, "the python of base '%s' of target '%s' (%s), the builder "
			      "(build_in) of target '%s', which runs its sdists' build backends",
			      bt->base.s, bt->name, platform, t->name);
	else if (r < 0)
		eb_error_wrap(err, "the python of base '%s' of target '%s' (%s), which runs its "
			      "sdists' build backends", t->base.s, t->name, platform);
	return r;
}

static void envbase_release(struct envbase *b)
{
	for (size_t i = 0; i < b->nlayers; i++)
		free(b->layers[i]);
	free(b->layers);
	eb_pytarget_release(&b->py);
}

/* Ask the backend of sd for environment k, its build environment br's
 * solution there; what it adds that the environment does not yet
 * require goes into *v (*grew = 1). */
static int ask(const struct eb_pin_buildreqs_ctx *c, struct eb_pyprovider *prov,
	       const struct eb_resolver *br, const struct eb_spec_target *t, size_t env0,
	       size_t k, struct envbase *b, struct sdist *sd, struct breq **v, size_t *nv,
	       int *grew, struct eb_error **err)
{
	struct eb_sdisthook_opts o = { 0 };
	struct eb_sdisthook_wheel *wheels = NULL;
	char (*digests)[EB_DIGEST_STR_LEN + 1] = NULL;
	const struct eb_resolver_pin *sol;
	const char *sdg, *sfile;
	enum eb_sdisthook_status st;
	char **reqs = NULL, host[65];
	size_t n = 0, nreqs = 0;
	int r = 0;

	if (!eb_pyprovider_sdist(prov, sd->name, sd->version, &sdg, &sfile))
		return 0; /* not read: nothing to ask (the resolver said why) */
	sol = eb_resolver_solution(br, env0 + k, &n);
	wheels = eb_xcalloc(n + 1, sizeof(*wheels));
	digests = eb_xcalloc(n + 1, sizeof(*digests));
	for (size_t i = 0; i < n; i++) {
		if ((r = eb_pyprovider_wheel(prov, env0 + k, sol[i].name, sol[i].version, digests[i],
					     err)) < 0) {
			eb_error_wrap(err, "the build environment of sdist '%s' (%s==%s)", sfile,
				      sol[i].name, sol[i].version);
			goto out;
		}
		wheels[i] = (struct eb_sdisthook_wheel){ sol[i].name, sol[i].version, digests[i] };
	}
	o.bs = c->bs;
	o.sdist_digest = sdg;
	o.sdist_filename = sfile;
	o.name = sd->name;
	o.version = sd->version;
	o.py = &b->py;
	o.layers = (const char *const *)b->layers;
	o.nlayers = b->nlayers;
	o.env = wheels;
	o.nenv = n;
	if ((r = eb_sdisthook_requires(&o, &reqs, &nreqs, &st, host, sizeof(host), err)) < 0) {
		eb_error_wrap(err, "target '%s' (%s)", t->name, t->platforms.v[k].s);
		eb_error_hint(err, "'envbuild pin' asks each sdist's build backend what it needs "
				   "(get_requires_for_build_wheel), as 'envbuild build' does");
		goto out;
	}
	if (st == EB_SDISTHOOK_FOREIGN || st == EB_SDISTHOOK_NOPYTHON)
		goto out; /* not asked: EB259 when no environment was */
	sd->askedmask |= 1u << k;
	for (size_t i = 0; i < nreqs; i++)
		if (!breq_has(*v, *nv, env0 + k, reqs[i])) {
			breq_add(v, nv, env0 + k, reqs[i], sd->via);
			*grew = 1;
		}
	strv_free(sd->last, sd->nlast);
	sd->last = reqs;
	sd->nlast = nreqs;
	reqs = NULL;
	nreqs = 0;
out:
	strv_free(reqs, nreqs);
	free(wheels);
	free(digests);
	return r;
}

int eb_pin_buildreqs(struct eb_pyprovider *prov, const struct eb_resolver *r, size_t nenvs,
		     const struct eb_spec *spec, const struct eb_spec_target *t, size_t env0,
		     size_t nenv, const struct eb_pin_buildreqs_ctx *c, struct eb_buf *out,
		     char **path, char **spec_line, int *any, struct eb_error **err)
{
	struct eb_resolver_provider rp;
	struct eb_resolver *br = NULL;
	const struct eb_resolver_pin **pins = NULL;
	struct sdist *sds = NULL;
	struct breq *v = NULL;
	struct envbase *bases = NULL;
	size_t nsd = 0, nv = 0, npins = 0, *envs = NULL;
	const char *file;
	int rc = 0, grew = 1, rounds = 0;

	*any = 0;
	*path = *spec_line = NULL;
	/* the sdists and their [build-system] requires */
	for (size_t k = 0; k < nenv && rc == 0; k++) {
		size_t n;
		const struct eb_resolver_pin *sol = eb_resolver_solution(r, env0 + k, &n);
		for (size_t i = 0; i < n && rc == 0; i++) {
			size_t nb, j;
			const char **bq = eb_pyprovider_build_requires(prov, sol[i].name,
								       sol[i].version, &nb);
			char *label;
			if (!bq)
				continue;
			label = eb_xasprintf("%s==%s", sol[i].name, sol[i].version);
			for (j = 0; j < nsd; j++)
				if (strcmp(sds[j].label, label) == 0)
					break;
			if (j == nsd) {
				sds = eb_xreallocarray(sds, nsd + 1, sizeof(*sds));
				memset(&sds[nsd], 0, sizeof(*sds));
				sds[nsd].label = eb_xstrdup(label);
				sds[nsd].via = eb_xasprintf("%s (its backend)", label);
				sds[nsd].name = sol[i].name;
				sds[nsd].version = sol[i].version;
				nsd++;
			}
			sds[j].envmask |= 1u << k;
			for (size_t q = 0; q < nb; q++)
				if (!breq_has(v, nv, env0 + k, bq[q]))
					breq_add(&v, &nv, env0 + k, bq[q], label);
			free(label);
		}
	}
	if (nsd == 0)
		goto done;
	*any = 1;
	if (t->build_requirements.n && !named_file(t)) {
		rc = eb_error_set_at(err, EB_EINVALID, spec->path, t->build_requirements.v[0].pos.line,
				     t->build_requirements.v[0].pos.col,
				     "target '%s' pins sdists (%s...) and lists its build_requirements "
				     "inline: 'envbuild pin' writes them to a file",
				     t->name, sds[0].label);
		eb_error_hint(err, "build_requirements: [-r build-requirements-%s.txt]", t->name);
		goto done;
	}

	/* Resolve, ask each backend with that build environment, and again
	 * while they add something: the result is a build environment whose
	 * backends ask for nothing it lacks, which is what `build` checks. */
	eb_pyprovider_resolver(prov, &rp);
	bases = eb_xcalloc(nenv, sizeof(*bases));
	while (grew) {
		if (rounds++ == MAX_ROUNDS) {
			rc = eb_error_set(err, EB_EFAIL, "the build backends of target '%s' (%s%s) "
					  "still asked for more after %d rounds", t->name,
					  sds[0].label, nsd > 1 ? " and others" : "", MAX_ROUNDS);
			goto done;
		}
		grew = 0;
		eb_resolver_free(br);
		br = eb_resolver_new(&rp, eb_pyprovider_envs(prov), nenvs);
		for (size_t i = 0; i < nv && rc == 0; i++)
			rc = eb_resolver_require(br, v[i].env, v[i].req, v[i].via, err);
		if (rc < 0)
			goto done;
		if ((rc = eb_resolver_run(br, err)) < 0) {
			if (rc == -EB_EFAIL && eb_resolver_explanation(br)) {
				eb_error_clear(err);
				rc = eb_error_set(err, EB_EFAIL, "the build requirements of %s%s have "
						  "no solution:\n%s", sds[0].label,
						  nsd > 1 ? " and others" : "",
						  eb_resolver_explanation(br));
			}
			goto done;
		}
		for (size_t j = 0; j < nsd; j++) {
			for (size_t k = 0; k < nenv; k++) {
				if (!(sds[j].envmask & (1u << k)))
					continue;
				if ((rc = envbase_get(c, spec, t, k, &bases[k], err)) < 0 ||
				    (!bases[k].foreign &&
				     (rc = ask(c, prov, br, t, env0, k, &bases[k], &sds[j], &v, &nv,
					       &grew, err)) < 0))
					goto done;
			}
			/* an environment this host cannot run takes what the
			 * backend answered for one it can (the same sdist: a
			 * pure wheel built here serves every platform) */
			for (size_t k = 0; sds[j].askedmask && k < nenv; k++) {
				if (!(sds[j].envmask & (1u << k)) || (sds[j].askedmask & (1u << k)))
					continue;
				for (size_t q = 0; q < sds[j].nlast; q++)
					if (!breq_has(v, nv, env0 + k, sds[j].last[q])) {
						breq_add(&v, &nv, env0 + k, sds[j].last[q], sds[j].via);
						grew = 1;
					}
			}
		}
	}
	for (size_t j = 0; j < nsd; j++) {
		char host[65], *why;
		size_t k;
		if (sds[j].askedmask)
			continue;
		for (k = 0; k < nenv && !(sds[j].envmask & (1u << k)); k++)
			;
		eb_sdist_host_runs(NULL, host, sizeof(host));
		if (bases[k].foreign)
			why = eb_xasprintf("this %s host cannot execute its base for %s (envbuild "
					   "does not emulate)", host, t->platforms.v[k].s);
		else if (t->build_in.s)
			why = eb_xasprintf("the base of its builder '%s' (build_in) has no python3 "
					   "to run it", t->build_in.s);
		else
			why = eb_xstrdup("its base has no python3 to run it");
		/* one line on stderr, as pin's notes: the file is still written */
		fprintf(stderr,
			"envbuild: warning: target '%s': the build backend of %s was not asked what "
			"it adds to its [build-system] requires (get_requires_for_build_wheel): %s; "
			"build_requirements has the static requires only [EB259]\n",
			t->name, sds[j].label, why);
		free(why);
	}

	if ((file = named_file(t)) != NULL) {
		*path = eb_spec_resolve(spec, file);
	} else {
		char *rel = eb_xasprintf("build-requirements-%s.txt", t->name);
		*path = eb_spec_resolve(spec, rel);
		*spec_line = eb_xasprintf("-r %s", rel);
		free(rel);
	}

	(void)eb_buf_addf(out, "#\n# This file is autogenerated by envbuild pin for target '%s':\n"
			       "# the build environment of its sdists ([build-system] requires and\n"
			       "# what their backends' get_requires_for_build_wheel adds)\n",
			  t->name);
	for (size_t i = 0; i < nsd; i++)
		(void)eb_buf_addf(out, "#    %s\n", sds[i].label);
	(void)eb_buf_adds(out, "# To regenerate, run:\n#\n#    envbuild pin\n#\n");
	for (size_t k = 0; k < nenv; k++) {
		size_t n;
		const struct eb_resolver_pin *sol = eb_resolver_solution(br, env0 + k, &n);
		for (size_t i = 0; i < n; i++) {
			int seen = 0;
			for (size_t j = 0; j < npins && !seen; j++)
				seen = strcmp(pins[j]->name, sol[i].name) == 0;
			if (!seen) {
				pins = eb_xreallocarray(pins, npins + 1, sizeof(*pins));
				pins[npins++] = &sol[i];
			}
		}
	}
	if (npins)
		eb_sort(pins, npins, sizeof(*pins), cmp_pin);
	envs = eb_xcalloc(nenv, sizeof(*envs));
	for (size_t k = 0; k < nenv; k++)
		envs[k] = env0 + k;
	for (size_t i = 0; i < npins && rc == 0; i++) {
		char **hs = NULL;
		size_t nh = 0;
		rc = eb_pyprovider_hashes(prov, envs, nenv, pins[i]->name, pins[i]->version, &hs, &nh,
					  err);
		if (rc < 0)
			break;
		(void)eb_buf_addf(out, "%s==%s", pins[i]->name, pins[i]->version);
		for (size_t k = 0; k < nh; k++) {
			(void)eb_buf_addf(out, " \\\n    --hash=%s", hs[k]);
			free(hs[k]);
		}
		free(hs);
		(void)eb_buf_adds(out, "\n");
		if (pins[i]->nvia == 1)
			(void)eb_buf_addf(out, "    # via %s\n", pins[i]->via[0]);
	}
done:
	if (rc < 0) {
		free(*path);
		free(*spec_line);
		*path = *spec_line = NULL;
	}
	for (size_t i = 0; i < nsd; i++) {
		free(sds[i].label);
		free(sds[i].via);
		strv_free(sds[i].last, sds[i].nlast);
	}
	free(sds);
	for (size_t i = 0; i < nv; i++) {
		free(v[i].req);
		free(v[i].via);
	}
	free(v);
	for (size_t k = 0; bases && k < nenv; k++)
		envbase_release(&bases[k]);
	free(bases);
	free(pins);
	free(envs);
	eb_resolver_free(br);
	return rc;
}

/* The first "requirements:" in p[0..l) that starts a key, or NULL. */
static const char *find_key(const char *p, size_t l)
{
	for (size_t i = 0; i + 13 <= l; i++)
		if (memcmp(p + i, "requirements:", 13) == 0 &&
		    (i == 0 || p[i - 1] == ' ' || p[i - 1] == '\t'))
			return p + i;
	return NULL;
}

/* Offset of the first byte of 1-based line in text. */
static size_t line_start(const char *text, size_t len, unsigned line)
{
	size_t off = 0;

	for (unsigned l = 1; l < line && off < len; off++)
		if (text[off] == '\n')
			l++;
	return off;
}

int eb_pin_buildreqs_spec_add(const char *spec_path, const char *tname, const char *item,
			      int dry_run, struct eb_error **err)
{
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	const struct eb_spec_target *t;
	struct eb_buf b = EB_BUF_INIT;
	size_t off, ind = 0;
	unsigned line;
	int rc;

	if ((rc = eb_spec_load(&spec, spec_path, &diags, err)) < 0)
		goto done;
	t = eb_spec_target(spec, tname);
	if (!t || t->requirements.n == 0) {
		rc = eb_error_set(err, EB_EFAIL, "%s: target '%s' has no requirements to add "
				  "build_requirements next to", spec_path, tname);
		goto done;
	}
	/* The line of the "requirements:" key: the first item's, or above it
	 * in a block list. */
	line = t->requirements.v[0].pos.line;
	for (;;) {
		off = line_start(spec->text, spec->text_len, line);
		const char *nl = memchr(spec->text + off, '\n', spec->text_len - off);
		size_t l = nl ? (size_t)(nl - (spec->text + off)) : spec->text_len - off;
		if (find_key(spec->text + off, l) || line <= 1)
			break;
		line--;
	}
	while (off + ind < spec->text_len && spec->text[off + ind] == ' ')
		ind++;
	(void)eb_buf_add(&b, spec->text, off);
	(void)eb_buf_addf(&b, "%*sbuild_requirements: [%s]\n", (int)ind, "", item);
	(void)eb_buf_add(&b, spec->text + off, spec->text_len - off);
	if (!dry_run)
		rc = eb_fs_write_atomic(spec_path, b.ptr, b.len, 0644, err);
done:
	eb_buf_release(&b);
	eb_spec_free(spec);
	eb_diag_list_release(&diags);
	return rc;
}
