/*
 * import_internal.h - what `envbuild import` (stage/import.h) builds up while
 * it reads a Dockerfile, shared by its files: import.c (instructions),
 * import_run.c (RUN segments) and import_emit.c (the spec's text).
 * Internal to stage/import*; nothing else includes it.
 *
 * Ownership: every string belongs to the struct holding it, released
 * by eb_imp_target_release().
 */
#ifndef EB_STAGE_IMPORT_SPEC_H
#define EB_STAGE_IMPORT_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "stage/dfinstr.h"
#include "stage/import.h"
#include "util/buf.h"
#include "util/diag.h"

struct eb_imp_strs {
	char **v; /* NULL-terminated */
	size_t n;
};

struct eb_imp_kv {
	char *key, *value;
};

struct eb_imp_kvs {
	struct eb_imp_kv *v;
	size_t n;
};

struct eb_imp_file {
	char *src, *dest, *chown, *chmod;
	struct eb_imp_strs exclude;
};

struct eb_imp_group {
	char *name;
	uint32_t gid;
};

struct eb_imp_user {
	char *name;
	uint32_t uid, gid;
	int has_gid;
	char *home, *shell;
};

struct eb_imp_dir {
	char *path, *owner;
	unsigned mode;
};

struct eb_imp_aptsrc {
	char *url, *suite, *components; /* components space-separated */
	char *signed_by;                /* keys/NAME, or NULL */
};

struct eb_imp_aptkey {
	char *name;          /* keys/NAME, relative to the spec */
	struct eb_buf data;  /* the base's keyring, as it is */
};

struct eb_imp_target {
	char *name;
	char *base, *platform;
	struct eb_imp_kvs env, labels;
	char *workdir, *user;
	struct eb_imp_strs entrypoint, cmd, expose;
	char *stopsignal;
	int has_entrypoint, has_cmd;
	struct eb_imp_file *files;
	size_t nfiles;
	struct eb_imp_strs requirements, packages, loose, apt;
	struct eb_imp_group *groups;
	size_t ngroups;
	struct eb_imp_user *users;
	size_t nusers;
	struct eb_imp_dir *dirs;
	size_t ndirs;
	struct eb_imp_aptsrc *aptsrc;
	size_t naptsrc;
	struct eb_imp_aptkey *aptkeys;
	size_t naptkeys;
	/* the requirements files import writes (names relative to the spec) */
	char *req_in, *req_out;
};

struct eb_dockerfile;

struct eb_imp_ctx {
	const struct eb_import_options *o;
	struct eb_import_result *res;
	const struct eb_dfinstrs *ins;
	const struct eb_dockerfile *df;
	char *context; /* the build context: the Dockerfile's directory */
	char **ignore; /* .dockerignore patterns, NULL-terminated */
	size_t nignore;
	struct eb_imp_kv *vars; /* the stage's ARG defaults and ENV */
	size_t nvars, capvars;
	unsigned next_uid; /* useradd without -u: 1000 up, as on a base without users */
};

void eb_imp_left(struct eb_imp_ctx *c, unsigned line, unsigned col, const char *kind,
		 const char *hint, const char *fmt, ...) EB_PRINTF(6, 7);
const char *eb_imp_var(void *ud, const char *name, size_t len);
void eb_imp_strs_add(struct eb_imp_strs *l, const char *s);
void eb_imp_strs_push(struct eb_imp_strs *l, const char *s); /* duplicates kept */
void eb_imp_strs_release(struct eb_imp_strs *l);
void eb_imp_kvs_set(struct eb_imp_kvs *l, const char *k, const char *v);

/* One RUN instruction of target t (import_run.c). */
void eb_imp_run(struct eb_imp_ctx *c, const struct eb_dfinstr *in, struct eb_imp_target *t);

/* Target t's apt_sources and keyrings from its base's /etc/apt
 * (import_apt.c): 0 when found or not needed; -1 with *why (the
 * caller's) when the base could not tell. */
int eb_imp_apt_sources(struct eb_imp_ctx *c, struct eb_imp_target *t, char **why);

/* The spec's text: a whole new spec (with_header: version, name,
 * repository, index, targets:) or only the target blocks to append under
 * an existing `targets:` (import_emit.c). */
void eb_imp_emit(struct eb_buf *b, const struct eb_import_options *o, const char *name,
		 struct eb_imp_target *const *t, size_t n, int with_header);
void eb_imp_target_release(struct eb_imp_target *t);

#endif
