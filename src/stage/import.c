/*
 * import.c - `envbuild import` (stage/import.h): walk a Dockerfile's
 * instructions stage by stage, map what is declarative onto spec keys,
 * report the rest at its position; then write the spec (a new one, or a
 * target appended to an existing one, its comments kept).  RUN lines are
 * import_run.c's, the spec's text import_emit.c's.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envspec/spec.h"
#include "pin/dockerfile.h"
#include "stage/import_internal.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/interrupt.h"

#define DOCKERFILE_MAX (4u << 20)

void eb_imp_left(struct eb_imp_ctx *c, unsigned line, unsigned col, const char *kind,
		 const char *hint, const char *fmt, ...)
{
	struct eb_import_result *r = c->res;
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	r->left = eb_xreallocarray(r->left, r->nleft + 1, sizeof(*r->left));
	r->left[r->nleft].line = line;
	r->left[r->nleft].col = col;
	r->left[r->nleft].kind = eb_xstrdup(kind);
	r->left[r->nleft].msg = msg;
	r->left[r->nleft].hint = hint ? eb_xstrdup(hint) : NULL;
	r->nleft++;
}

const char *eb_imp_var(void *ud, const char *name, size_t len)
{
	struct eb_imp_ctx *c = ud;

	for (size_t i = c->nvars; i-- > 0;)
		if (strlen(c->vars[i].key) == len && memcmp(c->vars[i].key, name, len) == 0)
			return c->vars[i].value;
	return NULL;
}

static void var_set(struct eb_imp_ctx *c, const char *k, const char *v)
{
	EB_ALLOC_GROW(c->vars, c->nvars + 1, c->capvars);
	c->vars[c->nvars].key = eb_xstrdup(k);
	c->vars[c->nvars].value = eb_xstrdup(v);
	c->nvars++;
}

static void vars_reset(struct eb_imp_ctx *c)
{
	for (size_t i = 0; i < c->nvars; i++) {
		free(c->vars[i].key);
		free(c->vars[i].value);
	}
	c->nvars = 0;
}

void eb_imp_strs_push(struct eb_imp_strs *l, const char *s)
{
	l->v = eb_xreallocarray(l->v, l->n + 2, sizeof(*l->v));
	l->v[l->n++] = eb_xstrdup(s);
	l->v[l->n] = NULL;
}

void eb_imp_strs_add(struct eb_imp_strs *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return;
	eb_imp_strs_push(l, s);
}

void eb_imp_strs_release(struct eb_imp_strs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void eb_imp_kvs_set(struct eb_imp_kvs *l, const char *k, const char *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, k) == 0) {
			free(l->v[i].value);
			l->v[i].value = eb_xstrdup(v);
			return;
		}
	l->v = eb_xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n].key = eb_xstrdup(k);
	l->v[l->n++].value = eb_xstrdup(v);
}

static void kvs_release(struct eb_imp_kvs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void eb_imp_target_release(struct eb_imp_target *t)
{
	free(t->name);
	free(t->base);
	free(t->platform);
	kvs_release(&t->env);
	kvs_release(&t->labels);
	free(t->workdir);
	free(t->user);
	eb_imp_strs_release(&t->entrypoint);
	eb_imp_strs_release(&t->cmd);
	eb_imp_strs_release(&t->expose);
	free(t->stopsignal);
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->files[i].src);
		free(t->files[i].dest);
		free(t->files[i].chown);
		free(t->files[i].chmod);
		eb_imp_strs_release(&t->files[i].exclude);
	}
	free(t->files);
	eb_imp_strs_release(&t->requirements);
	eb_imp_strs_release(&t->packages);
	eb_imp_strs_release(&t->loose);
	eb_imp_strs_release(&t->apt);
	for (size_t i = 0; i < t->ngroups; i++)
		free(t->groups[i].name);
	free(t->groups);
	for (size_t i = 0; i < t->nusers; i++) {
		free(t->users[i].name);
		free(t->users[i].home);
		free(t->users[i].shell);
	}
	free(t->users);
	for (size_t i = 0; i < t->ndirs; i++) {
		free(t->dirs[i].path);
		free(t->dirs[i].owner);
	}
	free(t->dirs);
	for (size_t i = 0; i < t->naptsrc; i++) {
		free(t->aptsrc[i].url);
		free(t->aptsrc[i].suite);
		free(t->aptsrc[i].components);
		free(t->aptsrc[i].signed_by);
	}
	free(t->aptsrc);
	for (size_t i = 0; i < t->naptkeys; i++) {
		free(t->aptkeys[i].name);
		eb_buf_release(&t->aptkeys[i].data);
	}
	free(t->aptkeys);
	free(t->req_in);
	free(t->req_out);
	memset(t, 0, sizeof(*t));
}

static void pos_at(const struct eb_dfinstr *in, size_t off, unsigned *line, unsigned *col)
{
	size_t n = strlen(in->args);

	if (n == 0) {
		*line = in->line;
		*col = in->col;
		return;
	}
	if (off >= n)
		off = n - 1;
	*line = in->lines[off];
	*col = in->cols[off];
}

/* ["a", "b"]: 1 with the strings in out; 0 when args are not a JSON list
 * of strings (Docker then reads the shell form) */
static int exec_form(const char *args, struct eb_imp_strs *out)
{
	json_error_t je;
	json_t *j, *it;
	size_t i;

	while (isspace((unsigned char)*args))
		args++;
	if (*args != '[')
		return 0;
	j = json_loads(args, JSON_DECODE_ANY, &je);
	if (!j || !json_is_array(j)) {
		json_decref(j);
		return 0;
	}
	json_array_foreach(j, i, it)
		if (!json_is_string(it)) {
			json_decref(j);
			return 0;
		}
	json_array_foreach(j, i, it)
		eb_imp_strs_push(out, json_string_value(it));
	json_decref(j);
	return 1;
}

/* ENTRYPOINT/CMD: the exec form as it is, the shell form as Docker runs
 * it, ["/bin/sh", "-c", TEXT] */
static void command_of(const struct eb_dfinstr *in, struct eb_imp_strs *out, int *has)
{
	eb_imp_strs_release(out);
	*has = 1;
	if (exec_form(in->args, out))
		return;
	eb_imp_strs_push(out, "/bin/sh");
	eb_imp_strs_push(out, "-c");
	eb_imp_strs_push(out, in->args);
}

/* The raw KEY=VALUE words of ENV/LABEL/ARG (quotes kept for expansion). */
static size_t raw_words(const char *p, char esc, char ***out)
{
	size_t n = 0;

	*out = NULL;
	while (*p) {
		const char *start;
		char q = 0;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && (q || !isspace((unsigned char)*p))) {
			if (!q && (*p == '"' || *p == '\''))
				q = *p;
			else if (q && *p == q)
				q = 0;
			else if (*p == esc && p[1])
				p++;
			p++;
		}
		*out = eb_xreallocarray(*out, n + 1, sizeof(**out));
		(*out)[n++] = eb_xstrndup(start, (size_t)(p - start));
	}
	return n;
}

enum pair_kind { P_ENV, P_LABEL, P_ARG };

static void pairs(struct eb_imp_ctx *c, const struct eb_dfinstr *in, enum pair_kind kind,
		  struct eb_imp_target *t)
{
	char **w;
	size_t n = raw_words(in->args, c->ins->escape, &w);

	if (kind != P_ARG && n >= 2 && !strchr(w[0], '=')) {
		/* legacy "ENV NAME value with spaces" */
		const char *rest = in->args;
		char *v;
		while (isspace((unsigned char)*rest))
			rest++;
		rest += strlen(w[0]);
		while (isspace((unsigned char)*rest))
			rest++;
		v = eb_dfinstr_expand(rest, c->ins->escape, eb_imp_var, c, NULL);
		if (kind == P_ENV) {
			eb_imp_kvs_set(&t->env, w[0], v);
			var_set(c, w[0], v);
		} else {
			eb_imp_kvs_set(&t->labels, w[0], v);
		}
		free(v);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(w[i], '=');
		char *k, *v;
		if (!eq)
			continue; /* ARG NAME without a default */
		*eq = '\0';
		k = eb_dfinstr_expand(w[i], c->ins->escape, NULL, NULL, NULL);
		v = eb_dfinstr_expand(eq + 1, c->ins->escape, eb_imp_var, c, NULL);
		if (kind == P_ENV) {
			eb_imp_kvs_set(&t->env, k, v);
			var_set(c, k, v);
		} else if (kind == P_LABEL) {
			eb_imp_kvs_set(&t->labels, k, v);
		} else if (!eb_imp_var(c, k, strlen(k))) {
			var_set(c, k, v);
		}
		free(k);
		free(v);
	}
done:
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

/* an absolute, normalised path in the image: relative ones are under
 * WORKDIR; one that names a directory ("x/", ".", "..") keeps a final '/' */
static char *in_image(const struct eb_imp_target *t, const char *p)
{
	size_t n = strlen(p);
	int dir = n == 0 || p[n - 1] == '/' || strcmp(p, ".") == 0 ||
		  (n >= 2 && strcmp(p + n - 2, "/.") == 0) || strcmp(p, "..") == 0 ||
		  (n >= 3 && strcmp(p + n - 3, "/..") == 0);
	char *a, *norm;

	if (p[0] == '/')
		a = eb_xstrdup(p);
	else
		a = eb_xasprintf("%s/%s", t->workdir ? t->workdir : "", p);
	norm = eb_path_normalize(a);
	if (!norm)
		norm = eb_xstrdup(a);
	free(a);
	if (!*norm || strcmp(norm, "/") == 0) {
		free(norm);
		return eb_xstrdup("/");
	}
	if (dir) {
		a = eb_xasprintf("%s/", norm);
		free(norm);
		return a;
	}
	return norm;
}

/* .dockerignore patterns that apply below src (relative to the context),
 * as `exclude` patterns anchored at src */
static void excludes_for(struct eb_imp_ctx *c, const char *src, struct eb_imp_strs *out)
{
	size_t sl = strcmp(src, ".") == 0 ? 0 : strlen(src);

	for (size_t i = 0; i < c->nignore; i++) {
		const char *p = c->ignore[i];
		char *x;
		if (strncmp(p, "**/", 3) == 0) {
			eb_imp_strs_add(out, p);
			continue;
		}
		if (sl) {
			if (strncmp(p, src, sl) != 0 || p[sl] != '/')
				continue;
			p += sl + 1;
		}
		x = eb_xasprintf("/%s", p);
		eb_imp_strs_add(out, x);
		free(x);
	}
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int is_archive(const char *s)
{
	static const char *const ext[] = { ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz",
					   ".tar.zst", ".txz", ".tbz2", NULL };
	size_t n = strlen(s);
	for (const char *const *e = ext; *e; e++)
		if (n > strlen(*e) && strcmp(s + n - strlen(*e), *e) == 0)
			return 1;
	return 0;
}

static void read_stage(struct eb_imp_ctx *c, const struct eb_dockerfile *df, size_t k,
		       struct eb_imp_target *t, int depth);

static void strs_merge(struct eb_imp_strs *to, const struct eb_imp_strs *from)
{
	for (size_t i = 0; i < from->n; i++)
		eb_imp_strs_add(to, from->v[i]);
}

/* COPY --from=NAME of an earlier stage that only installs packages (its
 * RUN lines all pip or apt-get, its files only the requirements files
 * they read, pip's --prefix/--root/--target/--user allowed): 1 with those packages added to t; 0 when the stage does
 * anything else (the COPY is then left) */
static int from_packages(struct eb_imp_ctx *c, const struct eb_dfinstr *in, const char *name,
			 struct eb_imp_target *t)
{
	struct eb_import_result r = { 0 };
	struct eb_imp_ctx s = *c;
	struct eb_imp_target x = { 0 };
	size_t k = SIZE_MAX;
	int ok;

	for (size_t i = 0; i < c->df->nfroms && i < in->stage; i++)
		if (c->df->froms[i].stage_name && strcasecmp(c->df->froms[i].stage_name, name) == 0)
			k = i;
	if (k == SIZE_MAX)
		return 0;
	s.res = &r;
	s.vars = NULL;
	s.nvars = s.capvars = 0;
	read_stage(&s, c->df, k, &x, 0);
	/* where a builder stage's pip puts things (--prefix=/install, then
	 * COPY --from) is this target's site directory here */
	ok = 1;
	for (size_t i = 0; i < r.nleft; i++) {
		static const char *const loc[] = { "--prefix=", "--root=", "--target=", "--user", NULL };
		const char *m = r.left[i].msg;
		int where = 0;
		if (strncmp(m, "not converted: pip option ", 26) == 0)
			for (const char *const *l = loc; *l; l++)
				where |= strncmp(m + 26, *l, strlen(*l)) == 0;
		ok &= where;
	}
	ok = ok && !x.ngroups && !x.nusers && !x.ndirs &&
	     (x.requirements.n || x.packages.n || x.loose.n || x.apt.n);
	for (size_t i = 0; ok && i < x.nfiles; i++) {
		int req = 0;
		for (size_t j = 0; j < x.requirements.n; j++)
			req |= strcmp(x.files[i].src, x.requirements.v[j]) == 0;
		ok = req;
	}
	if (ok) {
		strs_merge(&t->requirements, &x.requirements);
		strs_merge(&t->packages, &x.packages);
		strs_merge(&t->loose, &x.loose);
		strs_merge(&t->apt, &x.apt);
	}
	eb_imp_target_release(&x);
	eb_import_result_release(&r);
	vars_reset(&s);
	free(s.vars);
	return ok;
}

/* COPY/ADD [--chown=U] [--chmod=M] [--from=S] [--link] SRC... DEST */
static void copy(struct eb_imp_ctx *c, const struct eb_dfinstr *in, struct eb_imp_target *t)
{
	struct eb_dfwords w;
	struct eb_imp_strs ex = { 0 };
	const char *chown = NULL, *chmod = NULL;
	size_t first = 0, i;
	unsigned line, col;
	int add = strcmp(in->kw, "ADD") == 0;

	if (in->heredoc) {
		eb_imp_left(c, in->line, in->col, in->kw, "put the content in a file of the project "
			    "and list it in `files`", "not converted: %s with a heredoc", in->kw);
		return;
	}
	if (exec_form(in->args, &ex)) {
		/* COPY ["a b", "/d"]: the JSON form; no flags inside */
		w.v = NULL;
		w.n = 0;
		for (i = 0; i < ex.n; i++) {
			w.v = eb_xreallocarray(w.v, w.n + 1, sizeof(*w.v));
			memset(&w.v[w.n], 0, sizeof(*w.v));
			w.v[w.n++].s = eb_xstrdup(ex.v[i]);
		}
		eb_imp_strs_release(&ex);
	} else {
		eb_dfinstr_words(in->args, c->ins->escape, eb_imp_var, c, &w);
	}
	for (; first < w.n && strncmp(w.v[first].s, "--", 2) == 0; first++) {
		const char *f = w.v[first].s;
		pos_at(in, w.v[first].off, &line, &col);
		if (strncmp(f, "--chown=", 8) == 0) {
			chown = f + 8;
		} else if (strncmp(f, "--chmod=", 8) == 0) {
			chmod = f + 8;
		} else if (strcmp(f, "--link") == 0 || strcmp(f, "--link=true") == 0) {
			/* a layer of its own: every `files` entry is one */
		} else if (strncmp(f, "--from=", 7) == 0) {
			if (!add && from_packages(c, in, f + 7, t)) {
				eb_dfwords_free(&w);
				return;
			}
			eb_imp_left(c, line, col, "COPY --from",
				    "build what that stage makes as a wheel or a file of the project, "
				    "or pin what it installs in this target",
				    "not converted: %s %s (files from another stage or image)", in->kw, f);
			eb_dfwords_free(&w);
			return;
		} else {
			eb_imp_left(c, line, col, in->kw, NULL, "not converted: %s option %s",
				    in->kw, f);
			eb_dfwords_free(&w);
			return;
		}
	}
	if (w.n < first + 2) {
		eb_imp_left(c, in->line, in->col, in->kw, NULL, "not converted: %s without a "
			    "source and a destination", in->kw);
		eb_dfwords_free(&w);
		return;
	}
	for (i = first; i + 1 < w.n; i++) {
		const char *src = w.v[i].s;
		const char *dest = w.v[w.n - 1].s;
		char *norm, *abs, *full, *d;
		struct eb_imp_file *f;
		struct stat st;

		pos_at(in, w.v[i].off, &line, &col);
		if (w.v[i].has_var || w.v[w.n - 1].has_var) {
			eb_imp_left(c, line, col, in->kw, "give the ARG a default",
				    "not converted: '%s' uses a variable without a value", src);
			continue;
		}
		if (add && (strstr(src, "://") || strncmp(src, "git@", 4) == 0)) {
			eb_imp_left(c, line, col, "ADD URL",
				    "download it into the project (pinned by its checksum) and list "
				    "it in `files`", "not converted: ADD of a URL '%s'", src);
			continue;
		}
		if (has_glob(src)) {
			eb_imp_left(c, line, col, in->kw, "list each file or its directory in `files`",
				    "not converted: wildcard source '%s'", src);
			continue;
		}
		norm = src[0] == '/' ? eb_path_normalize(src + 1) : eb_path_normalize(src);
		if (!norm) {
			eb_imp_left(c, line, col, in->kw, NULL,
				    "not converted: '%s' is outside the build context", src);
			continue;
		}
		if (!*norm) {
			free(norm);
			norm = eb_xstrdup(".");
		}
		full = eb_path_join(c->context, norm);
		if (stat(full, &st) != 0) {
			eb_imp_left(c, line, col, in->kw, NULL,
				    "not converted: '%s' is not in the build context", src);
			free(full);
			free(norm);
			continue;
		}
		if (add && S_ISREG(st.st_mode) && is_archive(norm)) {
			eb_imp_left(c, line, col, "ADD archive",
				    "unpack it into a directory of the project and list that",
				    "not converted: ADD unpacks the archive '%s'", src);
			free(full);
			free(norm);
			continue;
		}
		free(full);
		abs = in_image(t, dest);
		/* several sources, or a directory's content: into dest */
		d = abs;
		if (w.n - first > 2 && d[strlen(d) - 1] != '/') {
			d = eb_xasprintf("%s/", abs);
			free(abs);
		}
		t->files = eb_xreallocarray(t->files, t->nfiles + 1, sizeof(*t->files));
		f = &t->files[t->nfiles++];
		memset(f, 0, sizeof(*f));
		f->src = norm;
		f->dest = d;
		f->chown = chown ? eb_xstrdup(chown) : NULL;
		f->chmod = chmod ? eb_xstrdup(chmod) : NULL;
		if (S_ISDIR(st.st_mode))
			excludes_for(c, norm, &f->exclude);
	}
	eb_dfwords_free(&w);
}

static void one_instruction(struct eb_imp_ctx *c, const struct eb_dfinstr *in,
			    struct eb_imp_target *t)
{
	const char *kw = in->kw;

	if (strcmp(kw, "ENV") == 0) {
		pairs(c, in, P_ENV, t);
	} else if (strcmp(kw, "ARG") == 0) {
		pairs(c, in, P_ARG, t);
	} else if (strcmp(kw, "LABEL") == 0) {
		pairs(c, in, P_LABEL, t);
	} else if (strcmp(kw, "WORKDIR") == 0) {
		char *v = eb_dfinstr_expand(in->args, c->ins->escape, eb_imp_var, c, NULL);
		char *abs = in_image(t, v);
		size_t al = strlen(abs);
		if (al > 1 && abs[al - 1] == '/')
			abs[al - 1] = '\0';
		free(t->workdir);
		t->workdir = abs;
		free(v);
	} else if (strcmp(kw, "USER") == 0) {
		free(t->user);
		t->user = eb_dfinstr_expand(in->args, c->ins->escape, eb_imp_var, c, NULL);
	} else if (strcmp(kw, "ENTRYPOINT") == 0) {
		command_of(in, &t->entrypoint, &t->has_entrypoint);
		/* Docker: a new ENTRYPOINT drops the cmd set before it */
		if (t->has_cmd) {
			eb_imp_strs_release(&t->cmd);
			t->has_cmd = 0;
		}
	} else if (strcmp(kw, "CMD") == 0) {
		command_of(in, &t->cmd, &t->has_cmd);
	} else if (strcmp(kw, "COPY") == 0 || strcmp(kw, "ADD") == 0) {
		copy(c, in, t);
	} else if (strcmp(kw, "RUN") == 0) {
		eb_imp_run(c, in, t);
	} else if (strcmp(kw, "MAINTAINER") == 0) {
		char *v = eb_dfinstr_expand(in->args, c->ins->escape, eb_imp_var, c, NULL);
		eb_imp_kvs_set(&t->labels, "org.opencontainers.image.authors", v);
		free(v);
	} else if (strcmp(kw, "EXPOSE") == 0) {
		struct eb_dfwords w;
		eb_dfinstr_words(in->args, c->ins->escape, eb_imp_var, c, &w);
		for (size_t i = 0; i < w.n; i++) {
			const char *p = w.v[i].s;
			size_t n = strspn(p, "0123456789");
			unsigned line, col;
			if (n && n <= 5 && (p[n] == '\0' || !strcmp(p + n, "/tcp") ||
					    !strcmp(p + n, "/udp") || !strcmp(p + n, "/sctp")) &&
			    atol(p) >= 1 && atol(p) <= 65535) {
				char *x = p[n] ? eb_xstrdup(p) : eb_xasprintf("%s/tcp", p);
				eb_imp_strs_add(&t->expose, x);
				free(x);
				continue;
			}
			pos_at(in, w.v[i].off, &line, &col);
			eb_imp_left(c, line, col, kw, "a port range or variable: list the ports",
				    "not converted: EXPOSE %s", p);
		}
		eb_dfwords_free(&w);
	} else if (strcmp(kw, "STOPSIGNAL") == 0) {
		free(t->stopsignal);
		t->stopsignal = eb_dfinstr_expand(in->args, c->ins->escape, eb_imp_var, c, NULL);
	} else if (strcmp(kw, "HEALTHCHECK") == 0) {
		eb_imp_left(c, in->line, in->col, kw,
			    "the OCI image config has no health check (Docker's own format does): "
			    "give the orchestrator a probe (Kubernetes livenessProbe)",
			    "not converted: HEALTHCHECK");
	} else if (strcmp(kw, "VOLUME") == 0) {
		eb_imp_left(c, in->line, in->col, kw,
			    "declare the directory in `dirs` and mount a volume where the image runs",
			    "not converted: VOLUME (no spec key yet)");
	} else if (strcmp(kw, "SHELL") == 0) {
		eb_imp_left(c, in->line, in->col, kw, NULL,
			    "not converted: SHELL (RUN lines are read as /bin/sh)");
	} else if (strcmp(kw, "ONBUILD") == 0) {
		eb_imp_left(c, in->line, in->col, kw, NULL,
			    "not converted: ONBUILD (envbuild images are not bases for Dockerfiles' triggers)");
	} else {
		eb_imp_left(c, in->line, in->col, kw, NULL, "not converted: unknown instruction %s",
			    kw);
	}
}

static void read_ignore(struct eb_imp_ctx *c)
{
	char *p = eb_path_join(c->context, ".dockerignore");
	struct eb_buf b;
	char *save = NULL;

	eb_buf_init(&b, 1u << 20);
	if (eb_fs_read_confined(&b, p, c->context, 1u << 20, NULL) == 0) {
		for (char *l = strtok_r(b.ptr, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			size_t n;
			while (*l == ' ' || *l == '\t')
				l++;
			n = strlen(l);
			while (n && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '/'))
				l[--n] = '\0';
			if (!n || *l == '#' || *l == '!')
				continue; /* re-inclusions: not expressible as excludes (left) */
			while (l[0] == '.' && l[1] == '/')
				l += 2;
			while (*l == '/')
				l++;
			if (!*l)
				continue;
			c->ignore = eb_xreallocarray(c->ignore, c->nignore + 2, sizeof(*c->ignore));
			c->ignore[c->nignore++] = eb_xstrdup(l);
			c->ignore[c->nignore] = NULL;
		}
	}
	eb_buf_release(&b);
	free(p);
}

/* a valid spec or target name from s: lowercase letters and digits,
 * single '.', '_' or '-' between them ("Dev Container" -> "dev-container",
 * ".runpod" -> "runpod"); "app" when nothing is left */
static char *target_name(const char *s)
{
	char *n = eb_xmalloc(strlen(s) + 1), *o = n;

	for (const char *p = s; *p; p++) {
		char ch = (char)tolower((unsigned char)*p);
		if (isalnum((unsigned char)ch) && (unsigned char)ch < 0x80) {
			*o++ = ch;
		} else if (o > n && o[-1] != '-' && o[-1] != '.' && o[-1] != '_') {
			*o++ = ch == '.' || ch == '_' ? ch : '-';
		}
	}
	while (o > n && (o[-1] == '-' || o[-1] == '.' || o[-1] == '_'))
		o--;
	*o = '\0';
	if (!*n) {
		free(n);
		return eb_xstrdup("app");
	}
	return n;
}

/* Stage k's instructions into t, its FROM-stage first (FROM builder
 * continues that stage's image). */
static void read_stage(struct eb_imp_ctx *c, const struct eb_dockerfile *df, size_t k,
		       struct eb_imp_target *t, int depth)
{
	const struct eb_dockerfile_from *f = &df->froms[k];

	if (f->is_stage_ref && depth < 64) {
		read_stage(c, df, f->stage_ref, t, depth + 1);
	} else {
		free(t->base);
		t->base = eb_xstrdup(f->is_scratch ? "scratch" : f->image ? f->image : f->raw ? f->raw : "");
		if (f->platform) {
			free(t->platform);
			t->platform = eb_xstrdup(f->platform);
		}
		if (f->unresolved_var)
			eb_imp_left(c, f->var_line, f->var_col, "FROM", "give the ARG a default",
				    "not converted: the base uses %s, which has no value",
				    f->unresolved_name ? f->unresolved_name : "a variable");
	}
	vars_reset(c);
	/* the global ARGs' values reach a stage only through ARG NAME inside
	 * it; pin/dockerfile.h has expanded FROM, this keeps it simple: the
	 * values of every ARG before the first FROM are visible */
	for (size_t i = 0; i < c->ins->n; i++) {
		const struct eb_dfinstr *in = &c->ins->v[i];
		if (in->stage == SIZE_MAX && strcmp(in->kw, "ARG") == 0)
			pairs(c, in, P_ARG, t);
	}
	for (size_t i = 0; i < c->ins->n; i++) {
		const struct eb_dfinstr *in = &c->ins->v[i];
		if (in->stage != k || strcmp(in->kw, "FROM") == 0)
			continue;
		one_instruction(c, in, t);
	}
}

/* ---- writing --------------------------------------------------------------- */

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void written(struct eb_import_result *r, const char *p)
{
	r->written = eb_xreallocarray(r->written, r->nwritten + 1, sizeof(*r->written));
	r->written[r->nwritten++] = eb_xstrdup(p);
}

static void note(struct eb_import_result *r, const char *fmt, ...) EB_PRINTF(2, 3);
static void note(struct eb_import_result *r, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	r->notes = eb_xreallocarray(r->notes, r->nnotes + 1, sizeof(*r->notes));
	r->notes[r->nnotes++] = s;
}

/* The requirements files a target needs: loose pins -> NAME.in for
 * `envbuild pin` (with the -r files and exact pins as its inputs too),
 * and an empty requirements file for pin to fill. */
static int plan_reqfiles(struct eb_imp_target *t, const char *dir, int single, int force,
			 struct eb_error **err)
{
	char *in, *out;

	if (!t->loose.n)
		return 0;
	in = single ? eb_xstrdup("requirements.in") : eb_xasprintf("requirements-%s.in", t->name);
	out = single ? eb_xstrdup("requirements.pinned.txt")
		     : eb_xasprintf("requirements-%s.pinned.txt", t->name);
	t->req_in = in;
	t->req_out = out;
	for (int k = 0; k < 2; k++) {
		char *p = eb_path_join(dir, k ? out : in);
		int e = exists(p);
		if (e && !force) {
			int r = eb_error_set(err, EB_EINVALID, "'%s' exists; not overwritten "
					     "(give --force)", p);
			free(p);
			return r;
		}
		free(p);
	}
	return 0;
}

static int write_reqfiles(const struct eb_imp_target *t, const char *dir,
			  struct eb_import_result *res, struct eb_error **err)
{
	struct eb_buf b = EB_BUF_INIT;
	char *p;
	int r;

	if (!t->req_in)
		return 0;
	eb_buf_putf(&b, "# written by envbuild import: the loose requirements of the Dockerfile;\n"
			"# `envbuild pin` pins them into %s\n", t->req_out);
	for (size_t i = 0; i < t->requirements.n; i++)
		eb_buf_putf(&b, "-r %s\n", t->requirements.v[i]);
	for (size_t i = 0; i < t->packages.n; i++)
		eb_buf_putf(&b, "%s\n", t->packages.v[i]);
	for (size_t i = 0; i < t->loose.n; i++)
		eb_buf_putf(&b, "%s\n", t->loose.v[i]);
	p = eb_path_join(dir, t->req_in);
	r = eb_fs_write_atomic(p, b.ptr, b.len, 0644, err);
	if (r == 0)
		written(res, p);
	free(p);
	eb_buf_release(&b);
	if (r < 0)
		return r;
	p = eb_path_join(dir, t->req_out);
	r = eb_fs_write_atomic(p, "# filled by `envbuild pin`\n", 26, 0644, err);
	if (r == 0)
		written(res, p);
	free(p);
	return r;
}

/* The base's keyrings the target's apt_sources name, under keys/. */
static int write_keys(const struct eb_imp_target *t, const char *dir,
		      struct eb_import_result *res, struct eb_error **err)
{
	for (size_t k = 0; k < t->naptkeys; k++) {
		char *p = eb_path_join(dir, t->aptkeys[k].name);
		char *d = eb_path_dirname(p);
		int r = eb_fs_mkdir_p(d, 0755, err);
		if (r == 0)
			r = eb_fs_write_atomic(p, t->aptkeys[k].data.ptr, t->aptkeys[k].data.len,
					       0644, err);
		if (r == 0)
			written(res, p);
		free(d);
		free(p);
		if (r < 0)
			return r;
	}
	return 0;
}

/* An existing spec: the new targets go at its end, which must be inside
 * `targets:` (its last top-level key), so that nothing else moves and
 * every comment stays. */
static int append_ok(const char *text, size_t len, const char *path, struct eb_error **err)
{
	const char *last = NULL;

	for (size_t i = 0; i < len; i++)
		if ((i == 0 || text[i - 1] == '\n') && !isspace((unsigned char)text[i]) &&
		    text[i] != '#' && text[i] != '-')
			last = text + i;
	if (!last || strncmp(last, "targets:", 8) != 0) {
		/* the last top-level key is another one: is targets block-style at all? */
		const char *tg = NULL;
		for (size_t i = 0; i + 8 <= len; i++)
			if ((i == 0 || text[i - 1] == '\n') && strncmp(text + i, "targets:", 8) == 0)
				tg = text + i;
		if (!tg || (last && last > tg))
			return eb_error_set(err, EB_EINVALID,
					    "%s: `targets:` is not the spec's last key; move it to the "
					    "end so that import can add a target below it", path);
	}
	return 0;
}

int eb_import_run(const struct eb_import_options *o, struct eb_import_result *res,
		  struct eb_error **err)
{
	struct eb_imp_ctx c = { 0 };
	struct eb_dfinstrs ins = { 0 };
	struct eb_dockerfile *df = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_imp_target *ts = NULL;
	struct eb_imp_target **tp = NULL;
	struct eb_buf text, spec_text = EB_BUF_INIT;
	struct eb_spec *old = NULL;
	char *out = NULL, *outdir = NULL, *name = NULL;
	size_t nt = 0;
	int r, have_old;

	memset(res, 0, sizeof(*res));
	eb_buf_init(&text, DOCKERFILE_MAX);
	r = eb_fs_read_confined(&text, o->dockerfile, NULL, DOCKERFILE_MAX, err);
	if (r < 0)
		goto done;
	c.o = o;
	c.res = res;
	c.ins = &ins;
	c.context = eb_path_dirname(o->dockerfile);
	c.next_uid = 1000;
	out = o->output ? eb_xstrdup(o->output) : eb_path_join(c.context, "envbuild.yaml");
	outdir = eb_path_dirname(out);
	{
		/* the spec's `src` paths are the context's: the spec lives there */
		char *a = realpath(outdir, NULL), *b = realpath(c.context, NULL);
		int same = a && b && strcmp(a, b) == 0;
		free(a);
		free(b);
		if (!same) {
			r = eb_error_set(err, EB_EUSAGE, "the spec must be written in the build "
					 "context (the Dockerfile's directory, '%s'), not in '%s'",
					 c.context, outdir);
			goto done;
		}
	}
	have_old = exists(out);
	if (have_old && !o->force && !o->target) {
		r = eb_error_set(err, EB_EINVALID, "'%s' exists; not overwritten (give --force, or "
				 "--target NAME to add a target to it)", out);
		goto done;
	}
	if ((r = eb_dockerfile_parse(&df, o->dockerfile, text.ptr, text.len, &diags, err)) < 0)
		goto done;
	eb_dfinstr_parse(&ins, text.ptr, text.len);
	c.df = df;
	read_ignore(&c);
	if (df->nfroms == 0) {
		r = eb_error_set(err, EB_EINVALID, "%s: no FROM: not a Dockerfile", o->dockerfile);
		goto done;
	}
	/* instructions before the first FROM other than ARG */
	for (size_t i = 0; i < ins.n; i++)
		if (ins.v[i].stage == SIZE_MAX && strcmp(ins.v[i].kw, "ARG") != 0)
			eb_imp_left(&c, ins.v[i].line, ins.v[i].col, ins.v[i].kw, NULL,
				    "not converted: %s before the first FROM", ins.v[i].kw);
	ts = eb_xcalloc(df->nfroms + 1, sizeof(*ts));
	tp = eb_xcalloc(df->nfroms + 1, sizeof(*tp));
	for (size_t k = 0; k < df->nfroms; k++) {
		int final = k + 1 == df->nfroms;
		struct eb_imp_target *t;
		if (!final && !(o->all_stages && df->froms[k].stage_name))
			continue;
		if (eb_interrupted()) {
			r = eb_error_set(err, EB_EINTR, "interrupted");
			goto done;
		}
		t = &ts[nt];
		tp[nt++] = t;
		t->name = final && o->target ? eb_xstrdup(o->target)
			  : df->froms[k].stage_name ? target_name(df->froms[k].stage_name)
						    : eb_xstrdup("app");
		read_stage(&c, df, k, t, 0);
	}
	for (size_t i = 0; i < nt; i++)
		if ((r = plan_reqfiles(tp[i], outdir, nt == 1, o->force, err)) < 0)
			goto done;
	for (size_t i = 0; i < nt; i++) {
		char *why = NULL;
		if (eb_imp_apt_sources(&c, tp[i], &why) < 0) {
			note(res, "target '%s': no apt_sources: %s; add them (envbuild check "
				  "reports EB232)", tp[i]->name, why);
			free(why);
		}
		for (size_t k = 0; k < tp[i]->naptkeys; k++) {
			char *p = eb_path_join(outdir, tp[i]->aptkeys[k].name);
			if (exists(p) && !o->force) {
				r = eb_error_set(err, EB_EINVALID, "'%s' exists; not overwritten "
						 "(give --force)", p);
				free(p);
				goto done;
			}
			free(p);
		}
	}
	name = target_name(eb_path_basename(c.context[0] && strcmp(c.context, ".") != 0
						    ? c.context : "project"));
	if (strcmp(c.context, ".") == 0) {
		char *cwd = getcwd(NULL, 0);
		free(name);
		name = target_name(cwd ? eb_path_basename(cwd) : "project");
		free(cwd);
	}
	if (have_old && o->target && !o->force) {
		/* add the target(s) to the spec as it is */
		struct eb_buf ob;
		eb_buf_init(&ob, 4u << 20);
		if ((r = eb_fs_read_confined(&ob, out, NULL, 4u << 20, err)) < 0) {
			eb_buf_release(&ob);
			goto done;
		}
		eb_diag_list_release(&diags);
		eb_spec_load_buffer(&old, out, ob.ptr, ob.len, &diags, err);
		for (size_t i = 0; old && i < nt; i++)
			if (eb_spec_target(old, tp[i]->name)) {
				r = eb_error_set(err, EB_EINVALID, "%s already has a target '%s'", out,
						 tp[i]->name);
				eb_buf_release(&ob);
				goto done;
			}
		if ((r = append_ok(ob.ptr, ob.len, out, err)) < 0) {
			eb_buf_release(&ob);
			goto done;
		}
		eb_buf_put(&spec_text, ob.ptr, ob.len);
		if (ob.len && ob.ptr[ob.len - 1] != '\n')
			eb_buf_put(&spec_text, "\n", 1);
		eb_buf_release(&ob);
		eb_imp_emit(&spec_text, o, name, tp, nt, 0);
	} else {
		eb_imp_emit(&spec_text, o, name, tp, nt, 1);
	}
	for (size_t i = 0; i < nt; i++)
		if ((r = write_reqfiles(tp[i], outdir, res, err)) < 0 ||
		    (r = write_keys(tp[i], outdir, res, err)) < 0)
			goto done;
	if ((r = eb_fs_write_atomic(out, spec_text.ptr, spec_text.len, 0644, err)) < 0)
		goto done;
	written(res, out);
	for (size_t i = 0; i < nt; i++) {
		if (tp[i]->loose.n)
			note(res, "target '%s': %zu loose requirement%s in %s: run `envbuild pin`",
			     tp[i]->name, tp[i]->loose.n, tp[i]->loose.n == 1 ? "" : "s",
			     tp[i]->req_in);
		for (size_t k = 0; k < tp[i]->apt.n; k++)
			if (!strchr(tp[i]->apt.v[k], '=')) {
				note(res, "target '%s': apt names without versions: run `envbuild pin`"
					  " (with apt_sources for the base's archive)", tp[i]->name);
				break;
			}
	}
	r = 0;
done:
	for (size_t i = 0; i < nt; i++)
		eb_imp_target_release(tp[i]);
	free(ts);
	free(tp);
	eb_spec_free(old);
	eb_dockerfile_free(df);
	eb_dfinstr_free(&ins);
	eb_diag_list_release(&diags);
	vars_reset(&c);
	free(c.vars);
	for (size_t i = 0; i < c.nignore; i++)
		free(c.ignore[i]);
	free(c.ignore);
	free(c.context);
	free(out);
	free(outdir);
	free(name);
	eb_buf_release(&text);
	eb_buf_release(&spec_text);
	return r;
}

void eb_import_result_release(struct eb_import_result *res)
{
	for (size_t i = 0; i < res->nleft; i++) {
		free(res->left[i].kind);
		free(res->left[i].msg);
		free(res->left[i].hint);
	}
	free(res->left);
	for (size_t i = 0; i < res->nwritten; i++)
		free(res->written[i]);
	free(res->written);
	for (size_t i = 0; i < res->nnotes; i++)
		free(res->notes[i]);
	free(res->notes);
	memset(res, 0, sizeof(*res));
}
