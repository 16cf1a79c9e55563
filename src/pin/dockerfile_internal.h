/*
 * dockerfile_internal.h - what dockerfile.c (lines, words, instructions)
 * shares with dockerfile_run.c (RUN commands and the installs in them):
 * the positioned strings, words, lexer and parser state.  Not an API:
 * only those two files include it.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_DOCKERFILE_INTERNAL_H
#define EB_PIN_DOCKERFILE_INTERNAL_H

#include <stddef.h>

#include "pin/dockerfile.h"

struct lpos {
	unsigned line, col;
	int split; /* from an unquoted expansion: the shell splits at blanks here */
};

/* A string and the source position of each of its bytes. */
struct pstr {
	char *s; /* NUL-terminated once anything was added */
	struct lpos *pos;
	size_t len, cap;
};
struct var {
	char *name;
	char *value; /* NULL: declared without a value (set at build time) */
	int is_env;
};

struct scope {
	struct var *v;
	size_t n, cap;
};
struct word {
	struct pstr t;              /* after quote removal and substitution */
	struct lpos start;          /* first source byte */
	size_t src_begin, src_end;  /* source range */
	int quoted;                 /* some part was quoted or escaped */
	int unresolved;             /* holds a variable or command we cannot evaluate */
	int undeclared;             /* ...and one of them is not declared at all */
	char *var;                  /* the first unresolved variable, or NULL */
	struct lpos var_pos;        /* its '$' */
};

struct wordvec {
	struct word *w;
	size_t n, cap;
};
enum tok { TOK_EOF, TOK_WORD, TOK_OP };

struct lexer {
	const struct pstr *src;
	size_t i, end;
	char esc;                 /* escape character */
	int shell;                /* shell level: operators, comments, $(...) */
	const struct scope *scope;
	int df;                   /* Dockerfile level: an undeclared variable is unset */
	struct parser *p;         /* set in RUN scripts: $(...) and `...` are read too */
	int depth;
};

struct parser;
struct parser {
	const char *path;
	struct eb_diag_list *diags;
	struct eb_dockerfile *df;
	const char *const *build_args;
	char esc;
	int seen_escape;
	struct scope global;
	struct scope *stages; /* one per FROM, parallel to df->froms */
	size_t stages_cap;
	size_t froms_cap, pips_cap, args_cap, opts_cap;
	/* instructions before the first FROM: reported when a FROM comes; a
	 * fragment without any FROM gets one finding at the first of them */
	struct early { struct lpos at; char name[16]; } *early;
	size_t run_args; /* where the last RUN's command starts in its line, or SIZE_MAX */
	struct lpos first; /* the first instruction (line 0: none yet) */
	/* the current stage's files from the build context, for -r FILE */
	char *workdir;      /* absolute, or NULL for / */
	char *cwd;          /* after `cd DIR` in the current RUN, or NULL */
	struct copy { char *src, *dest; int dest_dir; } *copies;
	size_t ncopies, copies_cap;
	size_t nearly, early_cap;
};

void eb_dockerfile__copies_reset(struct parser *p);
struct scope *eb_dockerfile__current_scope(struct parser *p);
void eb_dockerfile__do_copy(struct parser *p, const struct pstr *ll, size_t a);
void eb_dockerfile__do_run(struct parser *p, const struct pstr *ll, size_t a);
void eb_dockerfile__do_workdir(struct parser *p, const struct pstr *ll, size_t a);
int eb_dockerfile__in_set(const char *set, char c);
int eb_dockerfile__is_blank(char c);
int eb_dockerfile__is_name_char(char c);
int eb_dockerfile__is_name_start(char c);
int eb_dockerfile__is_one_of(const char *s, const char *const *list);
enum tok eb_dockerfile__lex_next(struct lexer *lx, struct word *w);
void eb_dockerfile__lexer_init(struct lexer *lx, const struct pstr *src, size_t b, size_t e, char esc,
		int shell, const struct scope *scope);
void eb_dockerfile__pstr_add(struct pstr *p, char c, struct lpos at);
const char *eb_dockerfile__pstr_str(const struct pstr *p);
void eb_dockerfile__run_script(struct parser *p, const struct pstr *src, size_t b, size_t e,
		int exec_form, int depth);
struct lpos eb_dockerfile__word_pos(const struct word *w, size_t i);
void eb_dockerfile__word_release(struct word *w);
void eb_dockerfile__wordvec_clear(struct wordvec *v);
struct word *eb_dockerfile__wordvec_push(struct wordvec *v);
void eb_dockerfile__wordvec_release(struct wordvec *v);

#endif
