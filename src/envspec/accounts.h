/*
 * accounts.h - the `accounts:` (groups and users) and `dirs:` keys of a
 * spec: what `groupadd`, `useradd -m` and `mkdir -p && chown && chmod`
 * give a Dockerfile, as data.
 *
 * Both keys may be written spec-wide and per target; a target's entries
 * add to the spec's.  Parsing checks shape and values that need nothing
 * else (a valid login name, ids, an absolute path, an octal mode,
 * duplicates within the spec: EB020-EB021); names are resolved against
 * the base image's /etc/passwd and /etc/group at build time
 * (assemble/accounts.h).
 *
 * Ownership: every string and array belongs to the struct, released with
 * eb_spec_accounts_release().
 *
 * Layering (ground floor, part of envspec/): util/ only.
 */
#ifndef EB_ENVSPEC_ACCOUNTS_H
#define EB_ENVSPEC_ACCOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/diag.h"
#include "util/yamljson.h"

struct eb_spec_group {
	char *name;
	uint32_t gid;
	unsigned line, col; /* of the entry */
};

struct eb_spec_user {
	char *name;
	uint32_t uid;
	uint32_t gid;  /* valid when has_gid */
	int has_gid;   /* 0: a group of the user's name, gid = uid (useradd's USERGROUPS_ENAB) */
	char *home;    /* NULL: /home/NAME */
	char *shell;   /* NULL: /bin/sh (Debian's /etc/default/useradd) */
	unsigned line, col;
};

struct eb_spec_dir {
	char *path;   /* absolute, normalised, no trailing '/' */
	char *owner;  /* "USER[:GROUP]" by name or number; NULL: 0:0 */
	unsigned mode; /* 07777 bits; 0755 when unset */
	unsigned line, col;
	unsigned owner_line, owner_col;
};

struct eb_spec_accounts {
	struct eb_spec_group *groups;
	size_t ngroups;
	struct eb_spec_user *users;
	size_t nusers;
	struct eb_spec_dir *dirs;
	size_t ndirs;
};

/* Parse obj's `accounts` and `dirs` keys (either may be absent), adding
 * to acc; findings go to diags under file's name. */
void eb_spec_accounts_parse(const struct eb_yj_doc *doc, const char *file, const json_t *obj,
			    struct eb_spec_accounts *acc, struct eb_diag_list *diags);
/* dst += src (deep copies), for a target inheriting the spec's entries. */
void eb_spec_accounts_add(struct eb_spec_accounts *dst, const struct eb_spec_accounts *src);
/* EB021 for a name, uid or gid given twice, or a dir listed twice. */
void eb_spec_accounts_check(const struct eb_spec_accounts *acc, const char *file,
			    struct eb_diag_list *diags);
void eb_spec_accounts_release(struct eb_spec_accounts *acc);
/* 1 when s is a login name useradd accepts on Debian: [a-z_][a-z0-9_-]*
 * with an optional trailing '$', at most 32 bytes. */
int eb_spec_login_name_valid(const char *s);
/* An owner "USER[:GROUP]": each side a login name or a number below
 * 2^31.  1 when valid. */
int eb_spec_owner_valid(const char *s);
/* 1 when s is all digits and below 2^31 (stored in *out). */
int eb_spec_id_parse(const char *s, size_t len, uint32_t *out);

#endif
