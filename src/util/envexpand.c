/*
 * envexpand.c - $VAR / ${VAR} / ${VAR:-word} / ${VAR:+word} expansion of
 * environment values, following moby's shell lexer for ENV.
 */
#include "config.h"

#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/envexpand.h"

struct ex {
	const char *s;
	size_t i;
	eb_envexpand_lookup lookup;
	eb_envexpand_unset unset;
	void *ctx;
	struct eb_error **err;
	unsigned depth; /* words inside words: ${A:-${B:-...}} */
};

static int name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

static const char *value_of(struct ex *x, const char *name, size_t len, size_t at)
{
	const char *v = x->lookup(x->ctx, name, len);

	if (!v && x->unset)
		x->unset(x->ctx, name, len, at);
	return v;
}

/* Expand until the end of input, or (in a word, nested = 1) until the
 * '}' that closes it, which is consumed. */
static int expand(struct ex *x, struct eb_buf *out, int nested, size_t open_at)
{
	const char *s = x->s;

	for (;;) {
		char c = s[x->i];
		size_t at = x->i;

		if (c == '\0') {
			if (nested)
				return eb_error_set_at(x->err, EB_EINVALID, NULL, 0, (unsigned)open_at + 1,
						       "'${' is not closed by '}'");
			return 0;
		}
		if (nested && c == '}') {
			x->i++;
			return 0;
		}
		if (c == '\\' && s[x->i + 1] == '$') {
			(void)eb_buf_addc(out, '$');
			x->i += 2;
			continue;
		}
		if (c != '$') {
			(void)eb_buf_addc(out, c);
			x->i++;
			continue;
		}
		if (name_start(s[x->i + 1])) {
			size_t b = ++x->i;
			const char *v;
			while (name_char(s[x->i]))
				x->i++;
			v = value_of(x, s + b, x->i - b, at);
			if (v)
				(void)eb_buf_adds(out, v);
			continue;
		}
		if (s[x->i + 1] != '{') {
			(void)eb_buf_addc(out, '$'); /* "$", "$1", "$$": as written */
			x->i++;
			continue;
		}
		/* ${...} */
		{
			size_t b, len;
			const char *v;
			int colon = 0, r;
			char op;

			x->i += 2;
			b = x->i;
			if (!name_start(s[x->i]))
				return eb_error_set_at(x->err, EB_EINVALID, NULL, 0, (unsigned)at + 1,
						       "'${' must be followed by a variable name");
			while (name_char(s[x->i]))
				x->i++;
			len = x->i - b;
			if (s[x->i] == '}') {
				x->i++;
				v = value_of(x, s + b, len, at);
				if (v)
					(void)eb_buf_adds(out, v);
				continue;
			}
			if (s[x->i] == ':') {
				colon = 1;
				x->i++;
			}
			op = s[x->i];
			if (op != '-' && op != '+') {
				if (op == '\0')
					return eb_error_set_at(x->err, EB_EINVALID, NULL, 0,
							       (unsigned)at + 1, "'${' is not closed by '}'");
				return eb_error_set_at(x->err, EB_EINVALID, NULL, 0, (unsigned)at + 1,
						       "unsupported modifier '%s%c' in '${%.*s...}' "
						       "(known: :-, -, :+, +)",
						       colon ? ":" : "", op, (int)len, s + b);
			}
			x->i++;
			/* each word is a level of recursion: a bound, not the
			 * stack, ends a hostile value */
			if (x->depth >= EB_ENVEXPAND_MAX_DEPTH)
				return eb_error_set_at(x->err, EB_ETOOBIG, NULL, 0, (unsigned)at + 1,
						       "'${...}' nested more than %d deep",
						       EB_ENVEXPAND_MAX_DEPTH);
			v = x->lookup(x->ctx, s + b, len);
			{
				int use_word = op == '-' ? (!v || (colon && !*v)) : (v && (!colon || *v));
				struct eb_buf word;

				/* the word is expanded (and its references checked)
				 * only where it is used, as a shell does */
				eb_buf_init(&word, 0);
				x->depth++;
				if (use_word) {
					r = expand(x, &word, 1, at);
				} else {
					struct ex quiet = *x;
					quiet.unset = NULL;
					r = expand(&quiet, &word, 1, at);
					x->i = quiet.i;
				}
				x->depth--;
				if (r < 0) {
					eb_buf_release(&word);
					return r;
				}
				if (op == '-' && !use_word && v)
					(void)eb_buf_adds(out, v);
				else if (use_word)
					(void)eb_buf_add(out, word.ptr, word.len);
				eb_buf_release(&word);
			}
		}
	}
}

int eb_envexpand(const char *s, eb_envexpand_lookup lookup, eb_envexpand_unset unset, void *ctx,
		 char **out, struct eb_error **err)
{
	struct ex x = { s, 0, lookup, unset, ctx, err, 0 };
	struct eb_buf b;
	int r;

	*out = NULL;
	eb_buf_init(&b, 0);
	r = expand(&x, &b, 0, 0);
	if (r < 0) {
		eb_buf_release(&b);
		return r;
	}
	*out = eb_buf_detach(&b, NULL);
	return 0;
}
