/*
 * reqfile_internal.h - what reqfile.c (reading pip's requirements files)
 * shares with reqfile_check.c (the pin rules over the set) and
 * reqfile_load.c (a lock or a requirements file?): the loaded set and its
 * entries with their source positions.  Not an API: only those files
 * include it.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_REQFILE_INTERNAL_H
#define EB_PIN_REQFILE_INTERNAL_H

#include <stddef.h>

#include "pin/reqfile.h"

struct pos {
	unsigned line, col;
};

struct ent {
	struct eb_reqfile_entry pub;
	struct pos *map; /* positions from the requirement's first byte on */
	size_t nmap;
};

struct eb_reqfile {
	struct ent *items;
	size_t n, cap;
	char **files;
	size_t nfiles, fcap;
	struct fileinfo {
		unsigned lines_ok;  /* logical lines read without a finding */
		unsigned lines_bad;
		int opaque;         /* not a requirements file: never quoted */
	} *finfo;           /* parallel to files */
	struct secret {
		char *name, *value;
	} *secrets;         /* ${VAR} values expanded, to redact */
	size_t nsecrets, scap;
	struct eb_reqfile_options opts;
};

struct pos eb_reqfile__ll_pos(const struct pos *pos, size_t npos, size_t i, unsigned fallback_line);
void eb_reqfile__postprocess(const struct eb_reqfile *rf, struct eb_diag_list *diags, size_t n0);

/* eb_reqfile_load_in() for a pip requirements file (never a lock):
 * reqfile_load.c decides which a path is. */
int eb_reqfile__load_pip(struct eb_reqfile **out, const char *path, const char *root,
			 const char *const *spec_env, size_t nspec_env, int use_spec_env,
			 struct eb_diag_list *diags, struct eb_error **err);

#endif
