/*
 * envexpand.h - expand variable references in environment values as
 * Docker's and buildah's ENV do.
 *
 * `$NAME` and `${NAME}` take NAME's value ("" when unset); `${NAME:-word}`
 * is word when NAME is unset or empty, `${NAME-word}` only when unset;
 * `${NAME:+word}` is word when NAME is set and not empty, `${NAME+word}`
 * when set at all; word is expanded too.  `\$` is a literal `$`; a `$`
 * not followed by a name or `{` is kept as written, as is every other
 * backslash.  NAME is `[A-Za-z_][A-Za-z0-9_]*`.
 *
 * Knows nothing about images: values come from a lookup callback.  Uses
 * util/ only.  *out is the caller's (free()).
 *
 * Layering (ground floor): util/ uses libc and the libraries it wraps
 * only; it knows nothing of specs, images, packages or the network.
 */
#ifndef EB_UTIL_ENVEXPAND_H
#define EB_UTIL_ENVEXPAND_H

#include <stddef.h>

#include "util/error.h"

/* The value of the variable name[0..len), or NULL when unset. */
typedef const char *(*eb_envexpand_lookup)(void *ctx, const char *name, size_t len);
/* Called for each plain reference ($X, ${X}) to an unset variable, with
 * the byte offset of its `$`; `${X:-d}` and `${X:+w}` say what happens
 * when X is unset, so they are not reported (references inside the word
 * used are). */
typedef void (*eb_envexpand_unset)(void *ctx, const char *name, size_t len, size_t offset);

/* Words nest at most this deep (`${A:-${B:-...}}`): a deeper value is
 * an error, not a stack overflow. */
#define EB_ENVEXPAND_MAX_DEPTH 64

/* Expand s.  Fails (EB_EINVALID, col = 1-based byte column of the `$`)
 * on an unterminated `${`, a bad name inside `${}`, or an operator other
 * than -, :-, + and :+; EB_ETOOBIG nested deeper than
 * EB_ENVEXPAND_MAX_DEPTH. unset may be NULL. */
int eb_envexpand(const char *s, eb_envexpand_lookup lookup, eb_envexpand_unset unset, void *ctx,
		 char **out, struct eb_error **err);

#endif
