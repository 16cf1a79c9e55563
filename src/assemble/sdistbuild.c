/*
 * sdistbuild.c - the PEP 517 build of one sdist, confined (see
 * sdistbuild.h).
 *
 * The backend is driven by a short script run with `python3 -I -S`: no
 * user site, no environment variables, and none of the image's
 * site-packages (pip's build isolation), only the standard library, the
 * build environment and the source's backend-path.  The script moves the
 * backend's own stdout to stderr so that its stdout carries nothing but
 * the answer ("req LINE", "wheel NAME"), whatever the backend prints.
 */
#define _GNU_SOURCE
#include "assemble/sdistbuild.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "pin/marker.h"
#include "pin/requirement.h"
#include "pin/version.h"
#include "python/sdist.h"
#include "python/tags.h"
#include "sandbox/sandbox.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/toml.h"

#define SRC_IN "/tmp/eb/src"
#define ENV_IN "/tmp/eb/env"
#define OUT_IN "/tmp/eb/out"

static const char driver[] =
	"import os, sys\n"
	"hook, backend, out = sys.argv[1], sys.argv[2], sys.argv[3]\n"
	"res = os.dup(1)\n"
	"os.dup2(2, 1)\n"
	"sys.path[:0] = [os.path.join('" SRC_IN "', p) for p in sys.argv[4:]] + ['" ENV_IN "']\n"
	"os.chdir('" SRC_IN "')\n"
	"import importlib\n"
	"mod, _, obj = backend.partition(':')\n"
	"try:\n"
	"    b = importlib.import_module(mod.strip())\n"
	"except ImportError as e:\n"
	"    os.write(res, ('missing %s\\n' % (e.name or mod)).encode())\n"
	"    raise\n"
	"for a in obj.strip().split('.') if obj.strip() else []:\n"
	"    b = getattr(b, a)\n"
	"if hook == 'requires':\n"
	"    f = getattr(b, 'get_requires_for_build_wheel', None)\n"
	"    for r in (f({}) if f else []):\n"
	"        os.write(res, ('req %s\\n' % r).encode())\n"
	"else:\n"
	"    try:\n"
	"        n = b.build_wheel(out, {}, None)\n"
	"    except ImportError as e:\n"
	"        os.write(res, ('missing %s\\n' % e.name).encode())\n"
	"        raise\n"
	"    os.write(res, ('wheel %s\\n' % n).encode())\n";

struct build_system {
	char *backend;
	char **paths; /* backend-path */
	size_t npaths;
	char **requires;
	size_t nrequires;
};

static void build_system_release(struct build_system *bs)
{
	free(bs->backend);
	for (size_t i = 0; i < bs->npaths; i++)
		free(bs->paths[i]);
	free(bs->paths);
	for (size_t i = 0; i < bs->nrequires; i++)
		free(bs->requires[i]);
	free(bs->requires);
	memset(bs, 0, sizeof(*bs));
}

static void add_str(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return;
	*v = eb_xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = eb_xstrdup(s);
}

/* pyproject.toml's [build-system], or pip's fallback for a project
 * without one (setup.py with setuptools' legacy backend). */
static int read_build_system(const char *src, const char *what, struct build_system *out,
			     struct eb_error **err)
{
	char *path = eb_path_join(src, "pyproject.toml");
	struct eb_buf b = EB_BUF_INIT;
	struct eb_toml_doc *doc = NULL;
	json_t *bsys, *v;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (access(path, F_OK) != 0)
		goto fallback;
	if ((r = eb_fs_read_confined(&b, path, src, 1 << 20, err)) < 0 ||
	    (r = eb_toml_load(&doc, "pyproject.toml", b.ptr, b.len, err)) < 0) {
		eb_error_wrap(err, "%s", what);
		goto out;
	}
	bsys = json_object_get(eb_toml_root(doc), "build-system");
	if (!json_is_object(bsys))
		goto fallback;
	v = json_object_get(bsys, "requires");
	if (v && !json_is_array(v)) {
		r = eb_error_set(err, EB_EINVALID, "%s: [build-system].requires is not a list", what);
		goto out;
	}
	for (size_t i = 0; v && i < json_array_size(v); i++)
		if (json_is_string(json_array_get(v, i)))
			add_str(&out->requires, &out->nrequires,
				json_string_value(json_array_get(v, i)));
	v = json_object_get(bsys, "build-backend");
	out->backend = eb_xstrdup(json_is_string(v) ? json_string_value(v)
						    : "setuptools.build_meta:__legacy__");
	v = json_object_get(bsys, "backend-path");
	for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++) {
		const char *p = json_string_value(json_array_get(v, i));
		char *norm = p && p[0] != '/' ? eb_path_normalize(p) : NULL;
		if (!norm) {
			/* PEP 517: backend-path must stay inside the source tree */
			r = eb_error_set(err, EB_EINVALID, "%s: backend-path '%s' leaves the source "
					 "tree", what, p ? p : "?");
			goto out;
		}
		out->paths = eb_xreallocarray(out->paths, out->npaths + 1, sizeof(char *));
		out->paths[out->npaths++] = norm;
	}
	goto out;
fallback:
	/* pip 24's; "wheel" comes from the backend's hook where it needs it */
	add_str(&out->requires, &out->nrequires, "setuptools>=40.8.0");
	if (!out->backend)
		out->backend = eb_xstrdup("setuptools.build_meta:__legacy__");
out:
	eb_toml_free(doc);
	eb_buf_release(&b);
	free(path);
	if (r < 0)
		build_system_release(out);
	return r;
}

/* "" when every requirement is met by the build environment, else the
 * first unmet one; caller frees. */
static char *unmet(const struct eb_sdist_build_opts *o, char *const *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct eb_requirement rq;
		struct eb_error *e = NULL;
		int met = 0;

		if (eb_requirement_parse(&rq, reqs[i], strlen(reqs[i]), &e) < 0) {
			eb_error_free(e);
			return eb_xstrdup(reqs[i]);
		}
		if (rq.marker && o->markers) {
			int holds = 1;
			if (eb_marker_eval(rq.marker, o->markers, &holds, &e) == 0 && !holds)
				met = 1;
			eb_error_free(e);
			e = NULL;
		}
		for (size_t k = 0; !met && rq.norm_name && k < o->nreqs; k++) {
			struct eb_version v;
			if (strcmp(o->reqs[k].name, rq.norm_name) != 0)
				continue;
			if (eb_version_parse(&v, o->reqs[k].version, strlen(o->reqs[k].version), &e) == 0) {
				met = eb_specifier_set_contains(&rq.specs, &v, o->reqs[k].version);
				eb_version_release(&v);
			}
			eb_error_free(e);
			e = NULL;
		}
		eb_requirement_release(&rq);
		if (!met)
			return eb_xstrdup(reqs[i]);
	}
	return eb_xstrdup("");
}

static int missing_error(const struct eb_sdist_build_opts *o, const char *what, const char *req,
			 const char *via, struct eb_error **err)
{
	int r = eb_error_set(err, EB_EINVALID,
			     "building %s needs '%s' (%s), which the target's build_requirements "
			     "do not pin", what, req, via);
	eb_error_hint(err, "pin it in build_requirements (envbuild pin writes them from each "
			   "sdist's [build-system] requires)");
	(void)o;
	return r;
}

static int chown_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return lchown(p, EB_SANDBOX_UID, EB_SANDBOX_GID) < 0 ? -1 : 0;
}

/* The unpacked source is the backend's working tree (setuptools writes
 * build/ and *.egg-info there): the runner's user must own it. */
static int give_tree(const char *dir, struct eb_error **err)
{
	if (geteuid() != 0)
		return 0;
	if (nftw(dir, chown_one, 16, FTW_PHYS) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot hand '%s' to the build user",
					  dir);
	return 0;
}

struct layout {
	char *src, *env, *out;
	struct build_system bs;
	char *what;
};

static void layout_release(struct layout *l)
{
	free(l->src);
	free(l->env);
	free(l->out);
	free(l->what);
	build_system_release(&l->bs);
}

static int prepare(const struct eb_sdist_build_opts *o, struct layout *l, struct eb_error **err)
{
	int r;

	memset(l, 0, sizeof(*l));
	l->what = eb_xasprintf("sdist '%s'", o->filename);
	l->src = eb_path_join(o->workdir, "src");
	l->env = eb_path_join(o->workdir, "env");
	l->out = eb_path_join(o->workdir, "out");
	if ((r = eb_sdist_unpack(o->sdist, l->src, NULL, err)) < 0)
		return eb_error_wrap(err, "%s", l->what);
	if ((r = read_build_system(l->src, l->what, &l->bs, err)) < 0)
		return r;
	if (mkdir(l->env, 0755) < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", l->env);
	for (size_t i = 0; i < o->nreqs; i++)
		if ((r = eb_sdist_unpack_wheel(o->reqs[i].wheel, l->env, err)) < 0)
			return eb_error_wrap(err, "build requirement %s==%s", o->reqs[i].name,
					     o->reqs[i].version);
	if ((r = give_tree(l->src, err)) < 0 || (r = eb_sandbox_prepare_output(l->out, err)) < 0)
		return r;
	return 0;
}

/* A backend that failed compiling (no compiler, no Python.h): where
 * the compiler is meant to come from. */
static void hint_native(const struct eb_sdist_build_opts *o, const char *out, struct eb_error **err)
{
	static const char *const signs[] = { "gcc", "g++", "'cc'", "Python.h", "compiler",
					     "unable to execute", NULL };
	int native = 0;

	for (size_t i = 0; out && signs[i] && !native; i++)
		native = strstr(out, signs[i]) != NULL;
	if (!native)
		return;
	if (o->builder)
		eb_error_hint(err, "the builder '%s' (build_in) lacks the compiler or the Python "
				   "headers: pin them in its apt: (gcc, libc6-dev, python3-dev)",
			      o->builder);
	else
		eb_error_hint(err, "the sdist compiles native code and this image has no compiler "
				   "or Python headers: build it in another target whose apt: pins "
				   "them (gcc, libc6-dev, python3-dev) with `build_in: NAME`; only "
				   "the wheel goes into this image");
}

/* Run the driver for hook; *answer gets its stdout.  A failure carries
 * the backend's output (stderr's tail). */
static int run_hook(const struct eb_sdist_build_opts *o, const struct layout *l, const char *hook,
		    char **answer, struct eb_error **err)
{
	const char **argv = eb_xcalloc(9 + l->bs.npaths, sizeof(*argv)); /* 8 + paths + NULL */
	struct eb_sandbox_bind binds[3] = {
		{ l->src, SRC_IN, 1 },
		{ l->env, ENV_IN, 0 },
		{ l->out, OUT_IN, 1 },
	};
	static const char *const env[] = { "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1",
					   "PIP_NO_INDEX=1", NULL };
	struct eb_sandbox_opts so = { 0 };
	struct eb_sandbox_result res = { 0 };
	/* named as PEP 517 names the hook, for the reader of the error */
	char *what = eb_xasprintf("the build backend of %s (%s)", l->what,
				  strcmp(hook, "requires") == 0 ? "get_requires_for_build_wheel"
								: "build_wheel");
	size_t a = 0;
	int r;

	argv[a++] = o->interpreter;
	argv[a++] = "-I";
	argv[a++] = "-S";
	argv[a++] = "-c";
	argv[a++] = driver;
	argv[a++] = hook;
	argv[a++] = l->bs.backend;
	argv[a++] = OUT_IN;
	for (size_t i = 0; i < l->bs.npaths; i++)
		argv[a++] = l->bs.paths[i];
	argv[a] = NULL;
	so.root = o->root;
	so.argv = argv;
	so.env = env;
	so.binds = binds;
	so.nbinds = 3;
	so.cwd = SRC_IN;
	so.source_date_epoch = o->source_date_epoch;
	so.timeout_s = o->timeout_s;
	so.what = what;
	*answer = NULL;
	r = eb_sandbox_run(&so, &res, err);
	if (r < 0) {
		eb_error_wrap(err, "%s", l->what);
		goto out;
	}
	if (res.exit_status != 0) {
		char *missing = res.out ? strstr(res.out, "missing ") : NULL;
		if (missing) {
			char *nl;
			missing = eb_xstrdup(missing + 8);
			nl = strchr(missing, '\n');
			if (nl)
				*nl = '\0';
			r = missing_error(o, l->what, missing, "imported by its build backend", err);
			free(missing);
			goto out;
		}
		r = eb_error_set(err, EB_EFAIL, "%s failed (exit %d); its output%s:\n%s", what,
				 res.exit_status, res.err_truncated ? " (the end)" : "",
				 res.err && *res.err ? res.err : "(none)");
		hint_native(o, res.err, err);
		goto out;
	}
	*answer = res.out ? eb_xstrdup(res.out) : eb_xstrdup("");
out:
	eb_sandbox_result_free(&res);
	free(what);
	free(argv);
	return r;
}

static int requires_of(const struct eb_sdist_build_opts *o, struct layout *l, char ***reqs,
		       size_t *n, struct eb_error **err)
{
	char *ans = NULL, *miss;
	int r;

	*reqs = NULL;
	*n = 0;
	for (size_t i = 0; i < l->bs.nrequires; i++)
		add_str(reqs, n, l->bs.requires[i]);
	/* the backend must import before it can be asked */
	miss = unmet(o, l->bs.requires, l->bs.nrequires);
	if (*miss) {
		free(miss);
		return 0;
	}
	free(miss);
	if ((r = run_hook(o, l, "requires", &ans, err)) < 0)
		return r;
	for (char *line = ans, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (strncmp(line, "req ", 4) == 0)
			add_str(reqs, n, line + 4);
	}
	free(ans);
	return 0;
}

int eb_sdist_build_requires(const struct eb_sdist_build_opts *o, char ***reqs, size_t *n,
			    struct eb_error **err)
{
	struct layout l;
	char *miss = NULL;
	int r = prepare(o, &l, err);

	*reqs = NULL;
	*n = 0;
	/* the backend must import before it can be asked: asked without
	 * what [build-system] requires, it would not say what it adds */
	if (r == 0 && *(miss = unmet(o, l.bs.requires, l.bs.nrequires)))
		r = missing_error(o, l.what, miss, "[build-system] requires", err);
	if (r == 0)
		r = requires_of(o, &l, reqs, n, err);
	free(miss);
	layout_release(&l);
	return r;
}

int eb_sdist_build_wheel(const struct eb_sdist_build_opts *o, char **wheel, char **wheel_name,
			 struct eb_error **err)
{
	struct eb_wheel_filename wf = { 0 };
	struct layout l;
	char **reqs = NULL, *miss = NULL, *ans = NULL, *name, *nl, *path = NULL;
	size_t nreqs = 0;
	struct stat st;
	int r;

	*wheel = *wheel_name = NULL;
	if ((r = prepare(o, &l, err)) < 0)
		goto out;
	miss = unmet(o, l.bs.requires, l.bs.nrequires);
	if (*miss) {
		r = missing_error(o, l.what, miss, "[build-system] requires", err);
		goto out;
	}
	if ((r = requires_of(o, &l, &reqs, &nreqs, err)) < 0)
		goto out;
	free(miss);
	miss = unmet(o, reqs, nreqs);
	if (*miss) {
		r = missing_error(o, l.what, miss, "get_requires_for_build_wheel", err);
		goto out;
	}
	if ((r = run_hook(o, &l, "build", &ans, err)) < 0)
		goto out;
	name = strstr(ans, "wheel ");
	if (!name) {
		r = eb_error_set(err, EB_EFAIL, "the build backend of %s named no wheel", l.what);
		goto out;
	}
	name += 6;
	if ((nl = strchr(name, '\n')))
		*nl = '\0';
	if (strchr(name, '/') || !eb_tags_is_wheel_filename(name)) {
		r = eb_error_set(err, EB_EFAIL, "the build backend of %s returned '%s', not a "
				 "wheel file name", l.what, name);
		goto out;
	}
	path = eb_path_join(l.out, name);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		r = eb_error_set(err, EB_EFAIL, "the build backend of %s wrote no wheel '%s'",
				 l.what, name);
		goto out;
	}
	if ((r = eb_wheel_filename_parse(&wf, name, err)) < 0)
		goto out;
	if (strcmp(wf.norm_name, o->name) != 0 || strcmp(wf.version_str, o->version) != 0) {
		r = eb_error_set(err, EB_EINVALID,
				 "%s built '%s', which is %s %s, not the pinned %s==%s; refused",
				 l.what, name, wf.norm_name, wf.version_str, o->name, o->version);
		goto out;
	}
	*wheel = path;
	*wheel_name = eb_xstrdup(name);
	path = NULL;
out:
	eb_wheel_filename_release(&wf);
	for (size_t i = 0; i < nreqs; i++)
		free(reqs[i]);
	free(reqs);
	free(miss);
	free(ans);
	free(path);
	layout_release(&l);
	return r;
}

void eb_sdist_key_add(struct eb_sha256 *h, const char *label, const char *v)
{
	eb_sha256_update(h, label, strlen(label));
	eb_sha256_update(h, "=", 1);
	eb_sha256_update(h, v ? v : "", v ? strlen(v) : 0);
	eb_sha256_update(h, "\n", 1);
}

int eb_sdist_host_runs(const char *machine, char *host, size_t hostlen)
{
	struct utsname u;

	if (uname(&u) < 0) {
		snprintf(host, hostlen, "unknown");
		return 1;
	}
	snprintf(host, hostlen, "%s", u.machine);
	return !machine || strcmp(machine, u.machine) == 0;
}
