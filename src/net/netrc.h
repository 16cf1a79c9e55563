/*
 * netrc.h - credentials from a netrc file ($NETRC, ~/.netrc), for the
 * hosts envbuild talks HTTP to (package indexes today).
 *
 * Layering (core floor): net/ may use util/ only; it never knows what the
 * credentials are for.
 *
 * Secrets: the file's text and every token not returned are wiped; the
 * file is never quoted in messages (only its name).
 *
 * Ownership: *login and *password are the caller's (wipe the password,
 * then free()).
 */
#ifndef EB_NET_NETRC_H
#define EB_NET_NETRC_H

#include "util/error.h"

/* Look host up in a netrc file: the first "machine" entry for it
 * (case-insensitive), else "default".  Returns 0 with *login and *password
 * set (password "" when the entry has none), 1 when the file does not
 * exist or has no entry with a login for host, or -EB_EIO when it cannot be
 * read. */
int eb_netrc_lookup(const char *path, const char *host, char **login, char **password,
		    struct eb_error **err);
/* The same; use_default 0 ignores a "default" entry (it would hand the
 * same password to any host a spec names). */
int eb_netrc_lookup_in(const char *path, const char *host, int use_default, char **login,
		       char **password, struct eb_error **err);

#endif
