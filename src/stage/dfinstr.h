/*
 * dfinstr.h - a Dockerfile as a list of instructions for `envbuild
 * import`: each logical instruction (continuations joined, comment lines
 * inside it dropped, the `# escape=` directive honoured, heredoc bodies
 * skipped and flagged) with the line and column of every byte of its
 * arguments, and a POSIX-sh word splitter for RUN and the shell forms.
 * The FROM lines and their ARG expansion come from pin/dockerfile.h; this
 * reads the other instructions, which that parser does not hand out.
 *
 * Bounded: the input is capped by the caller; every loop is linear in it.
 *
 * Layering (stage floor): util/ only.  Ownership: eb_dfinstr_parse()
 * returns a list freed with eb_dfinstr_free(); eb_dfinstr_words() returns
 * words freed with eb_dfwords_free().
 */
#ifndef EB_STAGE_DFINSTR_H
#define EB_STAGE_DFINSTR_H

#include <stddef.h>

struct eb_dfinstr {
	char *kw;            /* upper-cased: "RUN", "COPY" */
	unsigned line, col;  /* of the keyword */
	char *args;          /* the rest, continuations joined */
	unsigned *lines, *cols; /* per byte of args (and one past the end) */
	int heredoc;         /* `<<WORD` in a RUN/COPY: its body was skipped */
	size_t stage;        /* FROM count before it, minus 1 (SIZE_MAX: before any FROM) */
};

struct eb_dfinstrs {
	struct eb_dfinstr *v;
	size_t n;
	char escape;
};

int eb_dfinstr_parse(struct eb_dfinstrs *out, const char *text, size_t len);
void eb_dfinstr_free(struct eb_dfinstrs *l);

/* A shell word or operator of a command line. */
struct eb_dfword {
	char *s;        /* unquoted; variables substituted by the caller's lookup */
	int op;         /* 1: "&&", "||", ";", "|", "&" (s holds it) */
	int quoted;     /* some part was quoted */
	int has_var;    /* an unknown $VAR or a $(...) / backtick stays in s */
	size_t off;     /* offset in the text split */
};

struct eb_dfwords {
	struct eb_dfword *v;
	size_t n;
};

/* Value of variable name[0..len) or NULL when unknown (kept as written). */
typedef const char *(*eb_dfvar_fn)(void *ud, const char *name, size_t len);

/* Split s as sh does (quotes, backslashes, $VAR, ${VAR}, ${VAR:-x},
 * operators; a '#' word starts a comment).  lookup may be NULL. */
void eb_dfinstr_words(const char *s, char escape, eb_dfvar_fn lookup, void *ud,
		      struct eb_dfwords *out);
void eb_dfwords_free(struct eb_dfwords *w);
/* Substitute variables in s without word splitting (ENV, LABEL, WORKDIR,
 * USER values): quotes removed as Docker removes them.  Caller frees. */
char *eb_dfinstr_expand(const char *s, char escape, eb_dfvar_fn lookup, void *ud, int *has_var);

#endif
