/*
 * accounts.h - a target's users and groups: the base image's /etc/passwd
 * and /etc/group (read through its file-tree view) plus the spec's
 * `accounts:`, checked against each other and rendered as the files
 * `groupadd`/`useradd -m` would leave.  Used by the accounts layer source
 * (source_accounts.c) and to resolve the names in `user:`, `files`'
 * `chown:` and `dirs`' `owner:`.
 *
 * Rendering: the base's bytes unchanged, then the new lines in spec order
 * (explicit groups, then each user's own group, then users), passwords
 * locked ("!"), the shadow files only where the base has them, minimal
 * files (root alone) where it has none.
 *
 * May use: oci/ (the base's files), envspec/, util/.  Never writes, never
 * prints; findings about the spec go to the diag list.
 *
 * Ownership: eb_accounts_load() returns a set freed with
 * eb_accounts_free(); it borrows the target and base for its lifetime.
 */
#ifndef EB_ASSEMBLE_ACCOUNTS_H
#define EB_ASSEMBLE_ACCOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "assemble/source.h"
#include "envspec/spec.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/error.h"

struct eb_accounts;

/* One of the account files as it goes into the layer. */
struct eb_accounts_file {
	const char *path;     /* "etc/passwd" */
	struct eb_buf bytes;
	unsigned mode;
	uint32_t uid, gid;
};

/* A home directory the layer creates (the base lacks it). */
struct eb_accounts_home {
	char *path; /* absolute; owned by the set */
	uint32_t uid, gid;
	unsigned mode;
};

/* Read the base's account files and check t's accounts against them:
 * epoch: the build's SOURCE_DATE_EPOCH (shadow's last change);
 * findings (EB022-EB024) go to diags and are counted in *nerr; then the
 * set is still returned, so that every problem is reported at once. */
int eb_accounts_load(struct eb_accounts **out, const struct eb_spec *spec,
		     const struct eb_spec_target *t, const struct eb_source_base *base,
		     int64_t epoch, struct eb_diag_list *diags, size_t *nerr, struct eb_error **err);
void eb_accounts_free(struct eb_accounts *a);

/* Resolve owner "USER[:GROUP]" (names or numbers; USER alone: the user's
 * primary group, or the same number).  0 when resolved; -1 unknown user,
 * -2 unknown group (*what names it). */
int eb_accounts_owner(const struct eb_accounts *a, const char *owner, uint32_t *uid,
		      uint32_t *gid, const char **what);

/* The files to write (0 when the spec adds no account: the base's files
 * stay as they are) and the homes to create. */
size_t eb_accounts_files(const struct eb_accounts *a, const struct eb_accounts_file **files);
size_t eb_accounts_homes(const struct eb_accounts *a, const struct eb_accounts_home **homes);

#endif
