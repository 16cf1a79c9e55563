/*
 * pylock.c - write a target's installed Python packages as a PEP 751
 * pylock.<target>.toml (see pylock.h for what it holds and why).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "python/target.h"
#include "stage/pylock.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"

/* A TOML basic string: quotes, backslashes and control characters
 * escaped; everything else (UTF-8 included) as it is. */
static void toml_str(struct eb_buf *b, const char *s)
{
	(void)eb_buf_adds(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			(void)eb_buf_addf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			(void)eb_buf_addf(b, "\\u%04x", *p);
		else
			(void)eb_buf_add(b, (const char *)p, 1);
	}
	(void)eb_buf_adds(b, "\"");
}

/* One (name, version) of the target: which platforms have it, and the
 * wheel of each (borrowed from the report). */
struct entry {
	const char *name, *version;
	const struct eb_build_package **wheels; /* unique by filename */
	size_t nwheels;
	unsigned char *on; /* per platform of the target */
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->version, y->version);
}

static int cmp_wheel(const void *a, const void *b)
{
	return strcmp((*(const struct eb_build_package *const *)a)->filename,
		      (*(const struct eb_build_package *const *)b)->filename);
}

static const char *machine_of(const char *platform)
{
	const char *m = eb_pytarget_machine(platform);
	return m ? m : platform;
}

void eb_stage_pylock_render(struct eb_buf *out, const struct eb_build_target *t)
{
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	const char *py = NULL;
	int py_same = 1;

	for (size_t p = 0; p < t->nplatforms; p++) {
		const struct eb_build_platform *bp = &t->platforms[p];
		if (bp->python) {
			if (py && strcmp(py, bp->python) != 0)
				py_same = 0;
			py = py ? py : bp->python;
		}
		for (size_t k = 0; k < bp->npackages; k++) {
			const struct eb_build_package *x = &bp->packages[k];
			struct entry *e = NULL;
			size_t w;

			for (size_t i = 0; i < n && !e; i++)
				if (strcmp(v[i].name, x->name) == 0 && strcmp(v[i].version, x->version) == 0)
					e = &v[i];
			if (!e) {
				EB_ALLOC_GROW(v, n + 1, cap);
				e = &v[n++];
				memset(e, 0, sizeof(*e));
				e->name = x->name;
				e->version = x->version;
				e->on = eb_xcalloc(t->nplatforms + 1, 1);
				e->wheels = eb_xcalloc(t->nplatforms + 1, sizeof(*e->wheels));
			}
			e->on[p] = 1;
			for (w = 0; w < e->nwheels; w++)
				if (strcmp(e->wheels[w]->filename, x->filename) == 0)
					break;
			if (w == e->nwheels)
				e->wheels[e->nwheels++] = x;
		}
	}
	if (n)
		eb_sort(v, n, sizeof(*v), cmp_entry);

	(void)eb_buf_addf(out, "# pylock.%s.toml - the Python packages of envbuild target '%s', "
			       "written by `envbuild lock --pylock` (PEP 751)\n", t->name, t->name);
	(void)eb_buf_adds(out, "lock-version = \"1.0\"\ncreated-by = \"envbuild\"\n");
	if (py && py_same) {
		(void)eb_buf_adds(out, "requires-python = ");
		{
			char *s = eb_xasprintf("==%s.*", py);
			toml_str(out, s);
			free(s);
		}
		(void)eb_buf_adds(out, "\n");
	}
	(void)eb_buf_adds(out, "environments = [");
	for (size_t p = 0; p < t->nplatforms; p++) {
		char *m = eb_xasprintf("sys_platform == 'linux' and platform_machine == '%s'",
				       machine_of(t->platforms[p].platform));
		(void)eb_buf_adds(out, p ? ", " : "");
		toml_str(out, m);
		free(m);
	}
	(void)eb_buf_adds(out, "]\n");

	for (size_t i = 0; i < n; i++) {
		struct entry *e = &v[i];
		size_t non = 0;

		for (size_t p = 0; p < t->nplatforms; p++)
			non += e->on[p];
		(void)eb_buf_adds(out, "\n[[packages]]\nname = ");
		toml_str(out, e->name);
		(void)eb_buf_adds(out, "\nversion = ");
		toml_str(out, e->version);
		(void)eb_buf_adds(out, "\n");
		if (non < t->nplatforms) {
			struct eb_buf m;
			eb_buf_init(&m, 0);
			for (size_t p = 0; p < t->nplatforms; p++)
				if (e->on[p])
					(void)eb_buf_addf(&m, "%splatform_machine == '%s'",
							  m.len ? " or " : "",
							  machine_of(t->platforms[p].platform));
			(void)eb_buf_adds(out, "marker = ");
			toml_str(out, m.ptr);
			(void)eb_buf_adds(out, "\n");
			eb_buf_release(&m);
		}
		eb_sort(e->wheels, e->nwheels, sizeof(*e->wheels), cmp_wheel);
		for (size_t w = 0; w < e->nwheels; w++) {
			const struct eb_build_package *x = e->wheels[w];
			(void)eb_buf_adds(out, "\n[[packages.wheels]]\nname = ");
			toml_str(out, x->filename);
			/* the lock's URL is relative to the spec for wheels of the
			 * project, and this file lies beside the spec */
			(void)eb_buf_adds(out, strstr(x->url, "://") ? "\nurl = " : "\npath = ");
			toml_str(out, x->url);
			(void)eb_buf_addf(out, "\nsize = %lld\nhashes = { sha256 = ", (long long)x->size);
			toml_str(out, eb_digest_hex(x->sha256));
			(void)eb_buf_adds(out, " }\n");
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i].on);
		free(v[i].wheels);
	}
	free(v);
}

int eb_stage_pylock_write(const struct eb_build_report *rep, const char *dir, char ***written,
			  struct eb_error **err)
{
	char **paths = eb_xcalloc(rep->ntargets + 1, sizeof(*paths));
	size_t np = 0;
	int r = 0;

	for (size_t i = 0; i < rep->ntargets && r == 0; i++) {
		const struct eb_build_target *t = &rep->targets[i];
		struct eb_buf b;
		size_t npk = 0;

		for (size_t p = 0; p < t->nplatforms; p++)
			npk += t->platforms[p].npackages;
		if (!npk)
			continue;
		eb_buf_init(&b, 0);
		eb_stage_pylock_render(&b, t);
		paths[np] = eb_xasprintf("%s/pylock.%s.toml", dir, t->name);
		r = eb_fs_write_atomic(paths[np], b.ptr, b.len, 0644, err);
		if (r < 0)
			eb_error_wrap(err, "cannot write %s", paths[np]);
		np++;
		eb_buf_release(&b);
	}
	if (r < 0) {
		for (size_t i = 0; i < np; i++)
			free(paths[i]);
		free(paths);
		return r;
	}
	*written = paths;
	return 0;
}
