/*
 * check.c - the whole-project check behind `envbuild check` (and before
 * every build): dispatch by file kind and apply the rules of
 * specs/rules.md to specs, requirements files and Dockerfiles, and the
 * lock's freshness to a spec.  A stage: it sits above pin/ and lock/ so
 * that pin/ stays parsers and rules.
 *
 * The rules for one requirement live in pin/requirement.c and for FROM
 * lines in pin/dockerfile.c; this file connects them to where requirements and images
 * appear (spec fields, included files, RUN pip install) so each finding
 * points at the place the user wrote.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stage/check.h"
#include "stage/check_local.h"
#include "lock/integrity.h"
#include "lock/lock.h"
#include "lock/resolve.h"
#include "pin/conda.h"
#include "pin/dockerfile.h"
#include "pin/formats.h"
#include "ref/imageref.h"
#include "pin/reqfile.h"
#include "pin/requirement.h"
#include "lock/yamlimages.h"
#include "envspec/spec.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

#define CHECK_MAX_BYTES (16u << 20)

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

static int starts_with_ci(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

enum eb_check_kind eb_check_classify(const char *path, const char *text, size_t len)
{
	const char *base = eb_path_basename(path);
	const char *p, *end;

	for (const char *const *n = eb_spec_default_names; *n; n++)
		if (strcmp(base, *n) == 0) {
			/* a CI workflow may be called envbuild.yml too: a spec has
			 * targets */
			if (text && !memmem(text, len, "targets", 7))
				return EB_CHECK_MANIFEST;
			return text ? EB_CHECK_SPEC : EB_CHECK_UNKNOWN;
		}
	if (ends_with(base, ".envbuild.yaml") || ends_with(base, ".envbuild.yml"))
		return EB_CHECK_SPEC;
	if (strcasecmp(base, "Dockerfile") == 0 || strcasecmp(base, "Containerfile") == 0 ||
	    ends_with(base, ".dockerfile") || ends_with(base, ".containerfile") ||
	    starts_with_ci(base, "Dockerfile.") || starts_with_ci(base, "Containerfile."))
		return EB_CHECK_DOCKERFILE;
	if (ends_with(base, ".txt") || ends_with(base, ".in") || starts_with_ci(base, "requirements") ||
	    starts_with_ci(base, "constraints"))
		return EB_CHECK_REQUIREMENTS;
	/* other YAML: job definitions and Kubernetes manifests, unless the
	 * content says it is a spec (looked at below) */
	if ((ends_with(base, ".yaml") || ends_with(base, ".yml")) && text) {
		const char *p2 = text, *end2 = text + len;
		while (p2 < end2) {
			const char *eol = memchr(p2, '\n', (size_t)(end2 - p2));
			if (!eol)
				eol = end2;
			if ((size_t)(eol - p2) >= 8 && strncmp(p2, "targets:", 8) == 0)
				return EB_CHECK_SPEC;
			p2 = eol + 1;
		}
		return EB_CHECK_MANIFEST;
	}
	if (!text)
		return EB_CHECK_UNKNOWN;

	/* by content: the first meaningful line decides */
	p = text;
	end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;
		size_t n;

		if (!eol)
			eol = end;
		while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		n = (size_t)(eol - q);
		if (n >= 8 && strncasecmp(q, "# syntax", 8) == 0)
			return EB_CHECK_DOCKERFILE;
		if (n >= 8 && strncasecmp(q, "# escape", 8) == 0)
			return EB_CHECK_DOCKERFILE;
		if (n == 0 || *q == '#' || (n >= 3 && strncmp(q, "---", 3) == 0)) {
			p = eol + 1;
			continue;
		}
		if ((n > 5 && strncasecmp(q, "FROM", 4) == 0 && isspace((unsigned char)q[4])) ||
		    (n > 4 && strncasecmp(q, "ARG", 3) == 0 && isspace((unsigned char)q[3])))
			return EB_CHECK_DOCKERFILE;
		break;
	}
	/* a YAML/JSON document with a top-level "targets" key is a spec */
	for (p = text; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) >= 8 && (strncmp(p, "targets:", 8) == 0))
			return EB_CHECK_SPEC;
		p = eol + 1;
	}
	if (len > 0 && memmem(text, len, "\"targets\"", 9) && memchr(text, '{', len))
		return EB_CHECK_SPEC;
	return EB_CHECK_REQUIREMENTS;
}

const char *eb_check_find_spec(void)
{
	for (const char *const *n = eb_spec_default_names; *n; n++)
		if (access(*n, F_OK) == 0)
			return *n;
	return NULL;
}

/* An oci: base must be a relative path that stays inside the spec's
 * directory, lexically and after resolving symlinks (dir: as resolved by
 * eb_spec_oci_base; a missing one is EB012's business) -- or lie in one of
 * the directories the runner lists in ENVBUILD_OCI_BASES (':'-separated),
 * such as a shared base image of a CI machine. */
static int base_inside(const struct eb_spec *spec, const char *written, const char *dir)
{
	char *norm = written[0] == '/' ? NULL : eb_path_normalize(written);
	const char *allowed = getenv("ENVBUILD_OCI_BASES");
	int r;

	if (norm) {
		free(norm);
		r = eb_path_inside(dir, spec->dir, NULL);
		if (r != 0)
			return 1; /* inside, or not there at all */
	}
	for (const char *p = allowed; p && *p;) {
		size_t n = strcspn(p, ":");
		char *root = eb_xstrndup(p, n);
		r = *root ? eb_path_inside(dir, root, NULL) : 0;
		free(root);
		if (r == 1)
			return 1;
		p += n;
		p += *p == ':';
	}
	return 0;
}

static void check_base(const struct eb_spec *spec, const struct eb_spec_target *t,
		       struct eb_diag_list *diags)
{
	struct eb_imageref ref;
	struct eb_error *perr = NULL;
	const char *s = t->base.s;
	struct eb_diag *d;

	if (!s || eb_imageref_is_scratch(s))
		return;
	if (strncmp(s, "oci:", 4) == 0) {
		/* a local OCI layout: pinned by the digest the lock records */
		char *dir = NULL, *lref = NULL;
		char *layout;
		eb_spec_oci_base(s, spec->dir, &dir, &lref);
		layout = eb_path_join(dir, "index.json");
		if (!base_inside(spec, s + 4, dir)) {
			/* another job's out/ on the runner would be pushed to
			 * this spec's repository: the same rule as files */
			d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, t->base.pos.line,
					t->base.pos.col, "EB009",
					"base of target '%s' must be an OCI layout inside the project "
					"directory: '%s'",
					t->name, s);
			eb_diag_hint(d, "give a path relative to the spec's directory, without '..' "
					"or symlinks leading out");
		} else if (access(layout, R_OK) != 0) {
			d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, t->base.pos.line,
					t->base.pos.col, "EB012",
					"base of target '%s' is not an OCI layout: '%s'", t->name, dir);
			eb_diag_hint(d, "make one with 'skopeo copy docker://IMAGE oci:DIR:REF'");
		}
		free(layout);
		free(dir);
		free(lref);
		return;
	}
	if (eb_imageref_parse(&ref, s, &perr) < 0) {
		d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, t->base.pos.line,
				t->base.pos.col + (perr->col ? perr->col - 1 : 0), "EB100",
				"invalid base image reference '%s': %s", s, perr->msg);
		eb_diag_hint(d, "write REPOSITORY:TAG, e.g. python:3.11-slim-bookworm");
		eb_error_free(perr);
		return;
	}
	if (!ref.tag && !ref.digest) {
		d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, t->base.pos.line, t->base.pos.col,
				"EB101", "base image '%s' of target '%s' has no tag", s, t->name);
		eb_diag_hint(d, "pin a tag, e.g. %s:3.11-slim-bookworm; 'envbuild lock' then pins its digest", s);
	} else if (ref.tag && strcmp(ref.tag, "latest") == 0 && !ref.digest) {
		d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, t->base.pos.line,
				t->base.pos.col + (unsigned)(strrchr(s, ':') - s) + 1, "EB102",
				"base image '%s' of target '%s' uses the tag 'latest'", s, t->name);
		eb_diag_hint(d, "'latest' moves; pin a version tag such as python:3.11-slim-bookworm");
	}
	eb_imageref_release(&ref);
}

static void check_repository(const struct eb_spec *spec, struct eb_diag_list *diags)
{
	struct eb_imageref ref;
	struct eb_error *perr = NULL;
	const struct eb_spec_str *r = &spec->repository;
	struct eb_diag *d;

	if (!r->s)
		return;
	if (eb_imageref_parse(&ref, r->s, &perr) < 0) {
		eb_diag_add(diags, EB_SEV_ERROR, spec->path, r->pos.line,
			    r->pos.col + (perr->col ? perr->col - 1 : 0), "EB100",
			    "invalid repository '%s': %s", r->s, perr->msg);
		eb_error_free(perr);
		return;
	}
	if (ref.tag || ref.digest) {
		d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, r->pos.line, r->pos.col, "EB100",
				"'repository' must not carry a tag or digest: '%s'", r->s);
		eb_diag_hint(d, "envbuild tags each target itself (REPOSITORY:TARGET)");
	}
	eb_imageref_release(&ref);
}

/* Requirements files named by the spec; each file is checked once even
 * when several targets name it. */
static int check_spec_requirements(const struct eb_spec *spec, struct eb_diag_list *diags,
				   struct eb_error **err)
{
	char **seen = NULL;
	size_t nseen = 0, capseen = 0;
	int r = 0;

	for (size_t i = 0; i < spec->ntargets && r >= 0; i++) {
		const struct eb_spec_target *t = &spec->targets[i];
		for (size_t j = 0; j < t->requirements.n && r >= 0; j++) {
			const struct eb_spec_str *rq = &t->requirements.v[j];
			char *p = eb_spec_resolve(spec, rq->s);
			struct eb_reqfile *rf = NULL;
			struct eb_error *lerr = NULL;
			int dup = 0;

			for (size_t k = 0; k < nseen; k++)
				if (strcmp(seen[k], p) == 0)
					dup = 1;
			if (dup) {
				free(p);
				continue;
			}
			EB_ALLOC_GROW(seen, nseen + 1, capseen);
			seen[nseen++] = p;
			if (access(p, F_OK) != 0) {
				struct eb_diag *d = eb_diag_add(
					diags, EB_SEV_ERROR, spec->path, rq->pos.line, rq->pos.col,
					"EB012", "requirements file '%s' of target '%s' does not exist",
					rq->s, t->name);
				/* the file `envbuild pin` writes from requirements_in: */
				if (j == 0 && t->requirements_in.n)
					eb_diag_hint(d, "run `envbuild pin --target %s` to write it from "
						     "%s%s (paths are relative to the spec's directory)",
						     t->name, t->requirements_in.v[0].s,
						     t->requirements_in.n > 1 ? " and the other requirements_in: files" : "");
				else
					eb_diag_hint(d, "paths are relative to the spec's directory");
				continue;
			}
			if (eb_format_by_name(p) == EB_FORMAT_LOCKFILE) {
				/* pylock.toml: a pinned source of its own format */
				if (eb_format_check(EB_FORMAT_LOCKFILE, p, diags, &lerr) < 0)
					eb_error_free(lerr);
				continue;
			}
			if (eb_reqfile_load_in(&rf, p, spec->dir, spec->requirements_env_names,
					       spec->requirements_env.n, 1, diags, &lerr) < 0) {
				/* unreadable (a directory, permissions): a finding here, so
				 * the rest of the spec is still checked */
				struct eb_diag *d = eb_diag_add(
					diags, EB_SEV_ERROR, spec->path, rq->pos.line, rq->pos.col,
					lerr->code == EB_EINVALID ? "EB009" : "EB012", "%s", lerr->msg);
				if (lerr->code == EB_EINVALID)
					eb_diag_hint(d, "name regular files inside the project directory only");
				eb_error_free(lerr);
				continue;
			}
			eb_reqfile_check(rf, diags);
			for (size_t k = 0; k < eb_reqfile_count(rf); k++) {
				const struct eb_reqfile_entry *en = eb_reqfile_get(rf, k);
				eb_check_local_wheel(spec, &en->req, en->file, en->line, en->col,
						     diags);
			}
			eb_reqfile_free(rf);
		}
	}
	for (size_t k = 0; k < nseen; k++)
		free(seen[k]);
	free(seen);
	(void)err;
	return r;
}

static void check_inline_packages(const struct eb_spec *spec, const struct eb_spec_target *t,
				  struct eb_diag_list *diags)
{
	for (size_t i = 0; i < t->packages.n; i++) {
		const struct eb_spec_str *pk = &t->packages.v[i];
		struct eb_requirement req;
		struct eb_error *perr = NULL;

		if (eb_requirement_parse(&req, pk->s, strlen(pk->s), &perr) < 0) {
			struct eb_diag *d = eb_diag_add(
				diags, EB_SEV_ERROR, spec->path, pk->pos.line,
				pk->pos.col + (perr->col ? perr->col - 1 : 0), "EB200",
				"invalid requirement '%s': %s", pk->s, perr->msg);
			eb_diag_hint(d, "write NAME==VERSION, e.g. numpy==1.26.4");
			eb_error_free(perr);
			continue;
		}
		eb_requirement_check_pin(&req, spec->path, pk->pos.line, pk->pos.col - 1, diags);
		eb_check_local_wheel(spec, &req, spec->path, pk->pos.line, pk->pos.col, diags);
		eb_requirement_release(&req);
	}
}

static void check_files(const struct eb_spec *spec, const struct eb_spec_target *t,
			struct eb_diag_list *diags)
{
	char dirreal[PATH_MAX];

	if (!realpath(spec->dir, dirreal))
		return;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct eb_spec_file *f = &t->files[i];
		char *p = eb_spec_resolve(spec, f->src.s);
		char real[PATH_MAX];
		size_t ld = strlen(dirreal);

		char *norm = f->src.s[0] == '/' ? NULL : eb_path_normalize(f->src.s);

		if (!norm) {
			/* absolute or climbing out: reported by the spec validator (EB009) */
		} else if (!realpath(p, real)) {
			if (errno == ENOENT) {
				struct eb_diag *d = eb_diag_add(
					diags, EB_SEV_ERROR, spec->path, f->src.pos.line,
					f->src.pos.col, "EB012", "'src' of target '%s' does not exist: '%s'",
					t->name, f->src.s);
				eb_diag_hint(d, "paths are relative to the spec's directory");
			}
		} else if (!(strncmp(real, dirreal, ld) == 0 && (real[ld] == '/' || real[ld] == '\0' ||
								strcmp(dirreal, "/") == 0))) {
			eb_diag_add(diags, EB_SEV_ERROR, spec->path, f->src.pos.line, f->src.pos.col,
				    "EB009", "'src' '%s' leaves the project directory through a symlink",
				    f->src.s);
		}
		free(norm);
		free(p);
	}
}

/* A lock next to the spec must match it: the pre-commit hook then refuses
 * a commit that changes a pin without re-locking. */
static void check_lock(const struct eb_spec *spec, struct eb_diag_list *diags)
{
	char *path = eb_lock_path(spec);
	char sum[65];
	json_t *lock = NULL;
	char *why = NULL;
	struct eb_error *lerr = NULL;

	if (access(path, F_OK) != 0) {
		free(path);
		return;
	}
	if (eb_lock_load(&lock, path, &lerr) < 0) {
		struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, path, lerr->line, lerr->col,
						"EB013", "%s", lerr->msg);
		eb_diag_hint(d, "regenerate it with 'envbuild lock'");
		eb_error_free(lerr);
	} else if (eb_lock_checksum(sum, spec, NULL) == 0 && !eb_lock_fresh(lock, spec, sum, &why)) {
		struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, path, 0, 0, "EB013",
						"the lockfile is stale: %s", why);
		eb_diag_hint(d, "run 'envbuild lock' and commit the lockfile");
	} else if (lock) {
		/* fresh: its records are the pull request's too (EB040, EB041) */
		eb_lock_check_integrity(lock, path, spec, diags);
	}
	free(why);
	json_decref(lock);
	free(path);
}

static int check_spec(const char *path, int lock, struct eb_spec **out,
		      struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_spec *spec = NULL;
	int r;

	r = eb_spec_load(&spec, path, diags, err);
	if (r < 0 || !spec)
		return r;
	check_repository(spec, diags);
	for (size_t i = 0; i < spec->ntargets; i++) {
		check_base(spec, &spec->targets[i], diags);
		check_inline_packages(spec, &spec->targets[i], diags);
		check_files(spec, &spec->targets[i], diags);
		eb_check_build_requirements(spec, &spec->targets[i], diags);
	}
	r = check_spec_requirements(spec, diags, err);
	if (r == 0 && lock)
		check_lock(spec, diags);
	if (r == 0 && out)
		*out = spec;
	else
		eb_spec_free(spec);
	return r;
}

int eb_check_spec(const char *path, struct eb_diag_list *diags, struct eb_error **err)
{
	return check_spec(path, 1, NULL, diags, err);
}

int eb_check_spec_inputs(const char *path, struct eb_spec **spec, struct eb_diag_list *diags,
			 struct eb_error **err)
{
	*spec = NULL;
	return check_spec(path, 0, spec, diags, err);
}

int eb_check_requirements(const char *path, struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_reqfile *rf = NULL;
	int r;

	r = eb_reqfile_load(&rf, path, diags, err);
	if (r < 0)
		return r;
	eb_reqfile_check(rf, diags);
	/* outside a spec, "./" is the current directory, as for pip */
	for (size_t k = 0; k < eb_reqfile_count(rf); k++) {
		const struct eb_reqfile_entry *en = eb_reqfile_get(rf, k);
		eb_check_own_project(".", &en->req, en->file, en->line, en->col, diags);
	}
	eb_reqfile_free(rf);
	return 0;
}

/* A build-context path of a Dockerfile in dir: the context is its
 * directory or, for repositories built from their root (`docker build -f
 * cmd/x/Dockerfile .`), an ancestor; the nearest one holding the file. */
static char *find_in_context(const char *dir, const char *cp)
{
	char base[PATH_MAX];

	snprintf(base, sizeof(base), "%s", dir);
	for (int up = 0; up < 8; up++) {
		char real[PATH_MAX];
		/* never the file system's root: no build context is "/", and a
		 * stray /requirements.txt is nobody's project */
		if (realpath(base, real) && strcmp(real, "/") == 0)
			break;
		char *p = strcmp(base, ".") == 0 ? eb_xstrdup(cp) : eb_path_join(base, cp);
		if (access(p, R_OK) == 0) {
			/* reported as "katib/cmd/x/requirements.txt", not "a/b/../x" */
			char *norm = eb_path_normalize(p);
			if (norm) {
				free(p);
				return norm;
			}
			return p;
		}
		free(p);
		if (strlen(base) + 4 >= sizeof(base))
			break;
		strcat(base, "/..");
	}
	return NULL;
}

/* Findings diags[from..] about the arguments of an installer that is not
 * pip (uv, pipx, conda): the same rules, as warnings of their own rule, so
 * that a Dockerfile built with them is not refused for what hadolint and
 * pip's own rules leave alone, and --strict still fails on them. */

/* pip's VCS schemes, before or after "NAME @ " */
static int is_vcs_text(const char *t)
{
	static const char *const pre[] = { "git+", "hg+", "svn+", "bzr+", NULL };
	const char *at = strstr(t, " @ ");

	for (int k = 0; k < 2; k++, t = at ? at + 3 : NULL) {
		if (!t)
			break;
		while (*t == ' ' || *t == '"' || *t == '\'')
			t++;
		for (size_t i = 0; pre[i]; i++)
			if (strncasecmp(t, pre[i], strlen(pre[i])) == 0)
				return 1;
	}
	return 0;
}

static void demote_tool(struct eb_diag_list *diags, size_t from, enum eb_dockerfile_tool tool)
{
	const char *rule = tool == EB_DF_TOOL_CONDA ? "EB308" : "EB307";
	const char *name = tool == EB_DF_TOOL_UV ? "uv" : tool == EB_DF_TOOL_PIPX ? "pipx" : NULL;

	for (size_t i = from; i < diags->n; i++) {
		struct eb_diag *d = &diags->items[i];
		if (d->severity != EB_SEV_ERROR)
			continue;
		d->severity = EB_SEV_WARNING;
		if (name) {
			char *m = eb_xasprintf("%s (%s, not pip)", d->msg, name);
			free(d->msg);
			d->msg = m;
		}
		free(d->rule);
		d->rule = eb_xstrdup(rule);
	}
}

int eb_check_dockerfile(const char *path, struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_buf b;
	struct eb_dockerfile *df = NULL;
	int r;

	eb_buf_init(&b, CHECK_MAX_BYTES);
	r = eb_fs_read_file(&b, path, CHECK_MAX_BYTES, err);
	if (r < 0)
		goto done;
	r = eb_dockerfile_parse(&df, path, b.ptr, b.len, diags, err);
	if (r < 0)
		goto done;
	eb_dockerfile_check_from(df, path, diags);
	for (size_t i = 0; i < df->npip_args; i++) {
		const struct eb_dockerfile_pip_arg *a = &df->pip_args[i];
		enum eb_dockerfile_tool tool = a->install < df->npips ? df->pips[a->install].tool :
									EB_DF_TOOL_PIP;
		size_t before = diags->n;
		struct eb_requirement req;
		struct eb_error *perr = NULL;
		struct eb_diag *d;

		switch (a->kind) {
		case EB_PIP_ARG_REQ:
			if (a->unresolved_var && is_vcs_text(a->text)) {
				/* "git+${REPO}": a VCS install whatever REPO holds */
				d = eb_diag_add(diags, EB_SEV_ERROR, path, a->line, a->col, "EB206",
						"'%s' is a VCS requirement, not a pinned file", a->text);
				eb_diag_hint(d, "publish a wheel and pin it by version, or by URL with #sha256=");
				break;
			}
			if (a->unresolved_var) {
				d = eb_diag_add(diags, EB_SEV_WARNING, path, a->line, a->col, "EB304",
						"cannot check '%s': it uses a variable without a value here",
						a->text);
				eb_diag_hint(d, "give the variable a default with ARG or ENV");
				continue;
			}
			if (eb_requirement_parse(&req, a->text, strlen(a->text), &perr) < 0) {
				d = eb_diag_add(diags, EB_SEV_ERROR, path, a->line,
						a->col + (perr->col ? perr->col - 1 : 0), "EB302",
						"invalid requirement in 'pip install': '%s': %s", a->text,
						perr->msg);
				eb_error_free(perr);
				break;
			}
			eb_requirement_check_pin(&req, path, a->line, a->col - 1, diags);
			eb_requirement_release(&req);
			break;
		case EB_PIP_ARG_CONDA:
			if (a->unresolved_var) {
				d = eb_diag_add(diags, EB_SEV_WARNING, path, a->line, a->col, "EB304",
						"cannot check '%s': it uses a variable without a value here",
						a->text);
				eb_diag_hint(d, "give the variable a default with ARG or ENV");
				continue;
			}
			eb_conda_check_spec(a->text, path, a->line, a->col, "'conda install'", diags);
			break;
		case EB_PIP_ARG_EDITABLE:
			d = eb_diag_add(diags, EB_SEV_ERROR, path, a->line, a->col, "EB205",
					"editable install '-e %s' in 'pip install' is not pinned", a->text);
			eb_diag_hint(d, "build a wheel and install it by exact version");
			break;
		case EB_PIP_ARG_PATH:
			d = eb_diag_add(diags, EB_SEV_ERROR, path, a->line, a->col, "EB207",
					"'pip install %s' installs from a local path, which is not pinned",
					a->text);
			eb_diag_hint(d, "install a wheel with a --hash, or a pinned NAME==VERSION");
			break;
		case EB_PIP_ARG_REQFILE:
		case EB_PIP_ARG_CONSTRAINT: {
			/* check the file too when it is in the build context (taken
			 * to be the Dockerfile's directory); else say why not */
			char *dir = eb_path_dirname(path);
			char *rp = a->context_path ? find_in_context(dir, a->context_path) : NULL;
			const char *why = a->unresolved_var ? "it uses a variable without a value here" :
					  strstr(a->text, "://") ? "it is a URL" :
					  a->in_image ? "no COPY or ADD from the build context puts it there" :
					  "it is not in the build context";
			if (rp && access(rp, R_OK) == 0) {
				struct eb_error *lerr = NULL;
				if (eb_check_requirements(rp, diags, &lerr) < 0)
					eb_error_free(lerr);
			} else {
				d = eb_diag_add(diags, EB_SEV_WARNING, path, a->line, a->col, "EB305",
						"cannot check -%c %s: %s",
						a->kind == EB_PIP_ARG_REQFILE ? 'r' : 'c', a->text, why);
				eb_diag_hint(d, "COPY the file from the build context before the RUN that reads it");
			}
			free(rp);
			free(dir);
			/* the file's own findings are a requirements file's, whoever
			 * reads it */
			continue;
		}
		}
		if (tool != EB_DF_TOOL_PIP)
			demote_tool(diags, before, tool);
	}
	r = 0;
done:
	eb_dockerfile_free(df);
	eb_buf_release(&b);
	return r;
}

static int check_path(const char *path, struct eb_diag_list *diags, struct eb_error **err);

/* Named files are reported under one spelling, the one includes get:
 * "./r.txt" and "sub/../r.txt" are both "r.txt", so a line reached
 * through two spellings is one finding (the diag list drops duplicates). */
int eb_check_path(const char *path, struct eb_diag_list *diags, struct eb_error **err)
{
	eb_autofree char *norm = path[0] == '/' ? NULL : eb_path_normalize(path);

	return check_path(norm ? norm : path, diags, err);
}

static int check_path(const char *path, struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_buf b;
	enum eb_check_kind kind;
	struct stat st;
	int r;

	if (stat(path, &st) < 0)
		return eb_error_set_errno(err, errno == ENOENT ? EB_ENOTFOUND : EB_EIO, errno,
					  "cannot check '%s'", path);
	if (S_ISDIR(st.st_mode))
		return eb_error_set(err, EB_EUSAGE, "'%s' is a directory; name files to check", path);
	if (eb_format_by_name(path) != EB_FORMAT_NONE)
		return eb_format_check(eb_format_by_name(path), path, diags, err);
	kind = eb_check_classify(path, NULL, 0);
	if (kind == EB_CHECK_UNKNOWN) {
		eb_buf_init(&b, CHECK_MAX_BYTES);
		r = eb_fs_read_file(&b, path, CHECK_MAX_BYTES, err);
		if (r < 0) {
			eb_buf_release(&b);
			return r;
		}
		kind = eb_check_classify(path, b.ptr, b.len);
		eb_buf_release(&b);
	}
	switch (kind) {
	case EB_CHECK_SPEC:
		return eb_check_spec(path, diags, err);
	case EB_CHECK_MANIFEST: {
		eb_buf_init(&b, CHECK_MAX_BYTES);
		r = eb_fs_read_file(&b, path, CHECK_MAX_BYTES, err);
		if (r == 0)
			eb_yamlimages_check(path, b.ptr, b.len, diags);
		eb_buf_release(&b);
		return r;
	}
	case EB_CHECK_DOCKERFILE:
		return eb_check_dockerfile(path, diags, err);
	default:
		return eb_check_requirements(path, diags, err);
	}
}
