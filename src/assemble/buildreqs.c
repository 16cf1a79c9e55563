/*
 * buildreqs.c - `build_requirements` items into requirements (see
 * buildreqs.h).
 */
#include "assemble/buildreqs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"

static void add(struct eb_buildreqs *b, const struct eb_requirement *rq, const char *file,
		unsigned line, unsigned col)
{
	b->v = eb_xreallocarray(b->v, b->n + 1, sizeof(*b->v));
	b->v[b->n++] = (struct eb_buildreq){ rq, file, line, col };
}

int eb_buildreqs_load(struct eb_buildreqs *out, const struct eb_spec *spec,
		      const struct eb_spec_target *t, int check, struct eb_diag_list *diags,
		      struct eb_error **err)
{
	const struct eb_spec_strlist *l = &t->build_requirements;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->files = eb_xcalloc(l->n + 1, sizeof(*out->files));
	out->inl = eb_xcalloc(l->n + 1, sizeof(*out->inl));
	for (size_t i = 0; i < l->n && r == 0; i++) {
		const struct eb_spec_str *it = &l->v[i];
		const char *s = it->s;

		if (strncmp(s, "-r ", 3) == 0 || strncmp(s, "--requirement ", 14) == 0) {
			const char *name = s + strcspn(s, " ");
			char *p;
			struct eb_reqfile *rf = NULL;
			struct eb_error *lerr = NULL;

			name += strspn(name, " \t");
			p = eb_spec_resolve(spec, name);
			if (access(p, F_OK) != 0) {
				if (check) {
					struct eb_diag *d = eb_diag_add(
						diags, EB_SEV_ERROR, spec->path, it->pos.line,
						it->pos.col, "EB012",
						"build requirements file '%s' of target '%s' does not "
						"exist", name, t->name);
					eb_diag_hint(d, "paths are relative to the spec's directory");
				} else {
					r = eb_error_set_at(err, EB_EINVALID, spec->path, it->pos.line,
							    it->pos.col, "build requirements file '%s' "
							    "does not exist", name);
				}
				free(p);
				continue;
			}
			struct eb_diag_list ignore = EB_DIAG_LIST_INIT;
			int lr = eb_reqfile_load_in(&rf, p, spec->dir, spec->requirements_env_names,
						    spec->requirements_env.n, 1,
						    check ? diags : &ignore, &lerr);
			/* a build reports the findings through check, which ran first */
			eb_diag_list_release(&ignore);
			if (lr < 0) {
				if (check) {
					eb_diag_add(diags, EB_SEV_ERROR, spec->path, it->pos.line,
						    it->pos.col, "EB012", "%s", lerr->msg);
					eb_error_free(lerr);
				} else {
					*err = lerr;
					r = -EB_EINVALID;
				}
				free(p);
				continue;
			}
			free(p);
			if (check)
				eb_reqfile_check(rf, diags);
			out->files[out->nfiles++] = rf;
			for (size_t k = 0; k < eb_reqfile_count(rf); k++) {
				const struct eb_reqfile_entry *en = eb_reqfile_get(rf, k);
				if (!en->constraint)
					add(out, &en->req, en->file, en->line, en->col);
			}
			continue;
		}
		{
			struct eb_requirement *rq = &out->inl[out->ninl];
			struct eb_error *perr = NULL;
			/* "NAME==V --hash=sha256:H ...": the options as in a
			 * requirements file */
			const char *opt = strstr(s, " --hash");
			size_t len = opt ? (size_t)(opt - s) : strlen(s);
			if (eb_requirement_parse(rq, s, len, &perr) < 0) {
				if (check) {
					struct eb_diag *d = eb_diag_add(
						diags, EB_SEV_ERROR, spec->path, it->pos.line,
						it->pos.col + (perr->col ? perr->col - 1 : 0), "EB200",
						"invalid build requirement '%s': %s", s, perr->msg);
					eb_diag_hint(d, "write NAME==VERSION --hash=sha256:<digest>, "
							"or -r FILE");
					eb_error_free(perr);
				} else {
					*err = perr;
					eb_error_locate(err, spec->path, it->pos.line, it->pos.col);
					r = -EB_EINVALID;
				}
				continue;
			}
			out->ninl++;
			for (const char *o = opt; o && *o;) {
				size_t n;
				o += strspn(o, " \t");
				n = strcspn(o, " \t");
				if (strncmp(o, "--hash=", 7) == 0) {
					eb_requirement_add_hash(rq, o + 7, n - 7, (unsigned)(o + 7 - s) + 1);
				} else if (n == 6 && strncmp(o, "--hash", 6) == 0) {
					o += n;
					o += strspn(o, " \t");
					n = strcspn(o, " \t");
					eb_requirement_add_hash(rq, o, n, (unsigned)(o - s) + 1);
				} else if (n && check) {
					eb_diag_add(diags, EB_SEV_ERROR, spec->path, it->pos.line,
						    it->pos.col + (unsigned)(o - s), "EB213",
						    "unknown option '%.*s' in a build requirement",
						    (int)n, o);
				}
				o += n;
			}
			if (check)
				eb_requirement_check_pin(rq, spec->path, it->pos.line, it->pos.col - 1,
							 diags);
			add(out, rq, spec->path, it->pos.line, it->pos.col);
		}
	}
	if (r < 0)
		eb_buildreqs_release(out);
	return r;
}

void eb_buildreqs_release(struct eb_buildreqs *b)
{
	for (size_t i = 0; i < b->nfiles; i++)
		eb_reqfile_free(b->files[i]);
	free(b->files);
	for (size_t i = 0; i < b->ninl; i++)
		eb_requirement_release(&b->inl[i]);
	free(b->inl);
	free(b->v);
	memset(b, 0, sizeof(*b));
}
