/*
 * import_emit.c - the text of the spec `envbuild import` writes: block
 * YAML, every string double-quoted with JSON's escapes (valid YAML), in
 * the order of specs/envbuild-yaml.md's tables.
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "stage/import_internal.h"
#include "util/alloc.h"

static void q(struct eb_buf *b, const char *s)
{
	json_t *j = json_string(s);
	char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	if (!t) {
		/* not UTF-8: jansson refuses it; the bytes are kept as '?' */
		char *c = eb_xstrdup(s);
		for (char *p = c; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		json_decref(j);
		j = json_string(c);
		t = json_dumps(j, JSON_ENCODE_ANY);
		free(c);
	}
	eb_buf_putf(b, "%s", t ? t : "\"\"");
	free(t);
	json_decref(j);
}

static void list(struct eb_buf *b, const char *ind, const char *key, const struct eb_imp_strs *l)
{
	if (!l->n)
		return;
	eb_buf_putf(b, "%s%s:\n", ind, key);
	for (size_t i = 0; i < l->n; i++) {
		eb_buf_putf(b, "%s  - ", ind);
		q(b, l->v[i]);
		eb_buf_put(b, "\n", 1);
	}
}

/* KEY: "VALUE" on a line of its own */
static void scalar(struct eb_buf *b, const char *ind, const char *key, const char *v)
{
	eb_buf_putf(b, "%s%s: ", ind, key);
	q(b, v);
	eb_buf_put(b, "\n", 1);
}

static void flow(struct eb_buf *b, const char *ind, const char *key, const struct eb_imp_strs *l)
{
	eb_buf_putf(b, "%s%s: [", ind, key);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			eb_buf_put(b, ", ", 2);
		q(b, l->v[i]);
	}
	eb_buf_put(b, "]\n", 2);
}

static void map(struct eb_buf *b, const char *ind, const char *key, const struct eb_imp_kvs *m)
{
	if (!m->n)
		return;
	eb_buf_putf(b, "%s%s:\n", ind, key);
	for (size_t i = 0; i < m->n; i++) {
		eb_buf_putf(b, "%s  ", ind);
		q(b, m->v[i].key);
		eb_buf_put(b, ": ", 2);
		q(b, m->v[i].value);
		eb_buf_put(b, "\n", 1);
	}
}

static void target(struct eb_buf *b, const struct eb_imp_target *t)
{
	const char *ind = "    ";

	eb_buf_putf(b, "  %s:\n", t->name);
	scalar(b, ind, "base", t->base ? t->base : "");
	if (t->platform) {
		eb_buf_putf(b, "%splatforms: [", ind);
		q(b, t->platform);
		eb_buf_put(b, "]\n", 2);
	}
	if (t->req_in) {
		eb_buf_putf(b, "%srequirements: [", ind);
		q(b, t->req_out);
		eb_buf_putf(b, "]\n%srequirements_in: [", ind);
		q(b, t->req_in);
		eb_buf_put(b, "]\n", 2);
	} else {
		list(b, ind, "requirements", &t->requirements);
		list(b, ind, "packages", &t->packages);
	}
	list(b, ind, "apt", &t->apt);
	if (t->naptsrc) {
		/* the base's own, what its RUN apt-get would have used */
		eb_buf_putf(b, "%sapt_sources:\n", ind);
		for (size_t i = 0; i < t->naptsrc; i++) {
			const struct eb_imp_aptsrc *a = &t->aptsrc[i];
			char *save = NULL, *cs = eb_xstrdup(a->components);
			int first = 1;
			eb_buf_putf(b, "%s  - { url: ", ind);
			q(b, a->url);
			eb_buf_put(b, ", suite: ", 9);
			q(b, a->suite);
			eb_buf_put(b, ", components: [", 15);
			for (char *w = strtok_r(cs, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
				if (!first)
					eb_buf_put(b, ", ", 2);
				q(b, w);
				first = 0;
			}
			eb_buf_put(b, "]", 1);
			free(cs);
			if (a->signed_by) {
				eb_buf_put(b, ", signed_by: ", 13);
				q(b, a->signed_by);
			}
			eb_buf_put(b, " }\n", 3);
		}
	}
	if (t->ngroups || t->nusers) {
		eb_buf_putf(b, "%saccounts:\n", ind);
		if (t->ngroups) {
			eb_buf_putf(b, "%s  groups:\n", ind);
			for (size_t i = 0; i < t->ngroups; i++)
				eb_buf_putf(b, "%s    - { name: %s, gid: %u }\n", ind, t->groups[i].name,
					    (unsigned)t->groups[i].gid);
		}
		if (t->nusers) {
			eb_buf_putf(b, "%s  users:\n", ind);
			for (size_t i = 0; i < t->nusers; i++) {
				const struct eb_imp_user *u = &t->users[i];
				eb_buf_putf(b, "%s    - { name: %s, uid: %u", ind, u->name,
					    (unsigned)u->uid);
				if (u->has_gid)
					eb_buf_putf(b, ", gid: %u", (unsigned)u->gid);
				if (u->home) {
					eb_buf_put(b, ", home: ", 8);
					q(b, u->home);
				}
				if (u->shell) {
					eb_buf_put(b, ", shell: ", 9);
					q(b, u->shell);
				}
				eb_buf_put(b, " }\n", 3);
			}
		}
	}
	if (t->ndirs) {
		eb_buf_putf(b, "%sdirs:\n", ind);
		for (size_t i = 0; i < t->ndirs; i++) {
			eb_buf_putf(b, "%s  - { path: ", ind);
			q(b, t->dirs[i].path);
			if (t->dirs[i].owner) {
				eb_buf_put(b, ", owner: ", 9);
				q(b, t->dirs[i].owner);
			}
			eb_buf_putf(b, ", mode: \"%04o\" }\n", t->dirs[i].mode);
		}
	}
	if (t->nfiles) {
		eb_buf_putf(b, "%sfiles:\n", ind);
		for (size_t i = 0; i < t->nfiles; i++) {
			const struct eb_imp_file *f = &t->files[i];
			eb_buf_putf(b, "%s  - src: ", ind);
			q(b, f->src);
			eb_buf_putf(b, "\n%s    dest: ", ind);
			q(b, f->dest);
			eb_buf_put(b, "\n", 1);
			if (f->chown)
				scalar(b, "        ", "chown", f->chown);
			if (f->chmod)
				scalar(b, "        ", "chmod", f->chmod);
			if (f->exclude.n)
				flow(b, "        ", "exclude", &f->exclude);
		}
	}
	map(b, ind, "env", &t->env);
	map(b, ind, "labels", &t->labels);
	if (t->workdir)
		scalar(b, ind, "workdir", t->workdir);
	if (t->user)
		scalar(b, ind, "user", t->user);
	if (t->expose.n)
		flow(b, ind, "expose", &t->expose);
	if (t->stopsignal)
		scalar(b, ind, "stopsignal", t->stopsignal);
	if (t->has_entrypoint)
		flow(b, ind, "entrypoint", &t->entrypoint);
	if (t->has_cmd)
		flow(b, ind, "cmd", &t->cmd);
}

void eb_imp_emit(struct eb_buf *b, const struct eb_import_options *o, const char *name,
		 struct eb_imp_target *const *t, size_t n, int with_header)
{
	if (with_header) {
		eb_buf_putf(b, "# written by envbuild import from %s\n", o->dockerfile);
		eb_buf_putf(b, "version: 1\nname: %s\n", name);
		if (o->repository) {
			eb_buf_put(b, "repository: ", 12);
			q(b, o->repository);
			eb_buf_put(b, "\n", 1);
		}
		if (o->index) {
			eb_buf_put(b, "index: ", 7);
			q(b, o->index);
			eb_buf_put(b, "\n", 1);
		}
		eb_buf_putf(b, "targets:\n");
	} else {
		eb_buf_putf(b, "  # added by envbuild import from %s\n", o->dockerfile);
	}
	for (size_t i = 0; i < n; i++)
		target(b, t[i]);
}
