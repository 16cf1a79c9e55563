/*
 * dockerfile.h - a Dockerfile/Containerfile reader for pin checking: the
 * FROM lines (with ARG substitution and stage names) and the arguments of
 * every `pip install` in RUN instructions, each with its line and column.
 *
 * What is understood: parser directives (`# escape=`), comments, line
 * continuations, case-insensitive instructions, ARG before the first FROM
 * (global) and inside stages, ENV, `FROM [--platform=P] IMAGE [AS NAME]`
 * with $VAR, ${VAR}, ${VAR:-default} (and -, :+, +) substitution, stage
 * references and scratch, ONBUILD, and RUN in shell form and exec form
 * (JSON array; `["sh", "-c", "..."]` is read as shell).  Heredoc bodies
 * (`RUN <<EOF`) are skipped: their content yields no findings.
 *
 * Variables: at the Dockerfile level a name no ARG declares is unset (as
 * in docker); in a RUN, a name neither ARG nor ENV defines may come from the
 * base image, so the word keeps it as written and is flagged unresolved.
 * Installers read: pip, pip3.X, python -m pip (install); uv pip install,
 * uv pip sync (its operands are requirements files), uv add, uv tool
 * install; pipx install, pipx inject VENV (the venv's name is skipped);
 * conda/mamba/micromamba install|create (operands are conda match-specs).
 * Commands inside $(...) and backticks are read too.
 * Not understood: SHELL (RUN is always read as POSIX sh), abbreviated pip
 * options ("--index" for "--index-url").
 *
 * Positions are 1-based; columns count bytes.  An instruction is reported
 * at its first physical line; every token carries its own line and column,
 * also on continuation lines.
 *
 * Ownership: eb_dockerfile_parse allocates *out, which owns every array and
 * string in it; free it with eb_dockerfile_free().
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_DOCKERFILE_H
#define EB_PIN_DOCKERFILE_H

#include <stddef.h>

#include "ref/imageref.h"
#include "util/diag.h"
#include "util/error.h"

struct eb_dockerfile_from {
	unsigned line, col;             /* the FROM keyword */
	unsigned image_line, image_col; /* where raw starts; 0 when there is none */
	char *raw;             /* the image word as written, or NULL */
	char *image;           /* after quote removal and ARG substitution, or NULL */
	char *platform;        /* --platform value (substituted where known), or NULL */
	char *stage_name;      /* AS name as written, or NULL */
	int is_stage_ref;      /* the image names an earlier stage... */
	size_t stage_ref;      /* ...this one (index into froms) */
	int is_scratch;
	unsigned tag_line, tag_col; /* the tag inside the image; 0 when none */
	int unresolved_var;    /* the image uses a variable that has no value */
	char *unresolved_name; /* the first such variable, or NULL */
	unsigned var_line, var_col; /* its '$' */
	int malformed;         /* an EB303 finding was reported for this FROM */
	int has_ref;           /* ref holds the parsed image reference */
	struct eb_imageref ref; /* valid only when has_ref */
};

/* A pip install argument.  Options and their values are consumed and not
 * listed here (see struct eb_dockerfile_pip_option). */
enum eb_pip_arg_kind {
	EB_PIP_ARG_REQ,        /* requirement: "numpy==1.26.4", "pandas>=2", a URL */
	EB_PIP_ARG_REQFILE,    /* FILE of -r/--requirement FILE */
	EB_PIP_ARG_CONSTRAINT, /* FILE of -c/--constraint FILE */
	EB_PIP_ARG_EDITABLE,   /* X of -e/--editable X */
	EB_PIP_ARG_PATH,       /* ".", "./pkg", "/src/x", "dist/x.whl": a local path */
	EB_PIP_ARG_CONDA,      /* a match-spec of conda/mamba/micromamba install */
};

struct eb_dockerfile_pip_arg {
	unsigned line, col; /* of the first character of text in the file: inside
			     * quotes, and for -rFILE or --requirement=FILE at FILE */
	char *text;         /* shell-unquoted, known variables substituted */
	enum eb_pip_arg_kind kind;
	int unresolved_var; /* text still holds a $variable or $(command) */
	size_t install;     /* index into pips */
	/* -r/-c FILE: where the file is in the build context, followed back
	 * through WORKDIR, `cd DIR` in the same RUN and COPY/ADD from the
	 * context (relative to the context; NULL when unknown), and whether
	 * FILE names a path in the image that no COPY/ADD explains */
	char *context_path;
	int in_image;
};

struct eb_dockerfile_pip_option {
	unsigned line, col; /* of the option */
	char *name;         /* as written without "=value": "--index-url", "-U", "-qU" */
	char *value;        /* its argument, or NULL for a flag */
	size_t install;     /* index into pips */
};

/* Which installer an install is: pip's own (pip, pip3, python -m pip) is
 * held to the requirement rules as errors; the others' findings are
 * warnings of their own rule (EB307, EB308 in specs/rules.md). */
enum eb_dockerfile_tool {
	EB_DF_TOOL_PIP,
	EB_DF_TOOL_UV,    /* uv pip install|sync, uv add, uv tool install */
	EB_DF_TOOL_PIPX,  /* pipx install, pipx inject */
	EB_DF_TOOL_CONDA, /* conda, mamba, micromamba install|create */
};

/* One pip install invocation. */
struct eb_dockerfile_pip {
	enum eb_dockerfile_tool tool;
	unsigned line, col;    /* the pip (or python) word */
	size_t stage;          /* index into froms of the enclosing stage */
	int exec_form;         /* RUN ["pip", "install", ...] */
	size_t first_arg, nargs; /* its range in pip_args */
	size_t first_opt, nopts; /* its range in pip_options */
};

struct eb_dockerfile {
	char escape; /* '\\' or '`' */
	struct eb_dockerfile_from *froms;
	size_t nfroms;
	struct eb_dockerfile_pip *pips;
	size_t npips;
	struct eb_dockerfile_pip_arg *pip_args;
	size_t npip_args;
	struct eb_dockerfile_pip_option *pip_options;
	size_t npip_options;
};

/*
 * Parse a Dockerfile held in text[0..len).  `path` names it in findings.
 * Problems in the file (unknown instruction, FROM without image, invalid
 * image reference, undeclared variable in FROM, bad parser directive, ...)
 * go into diags as EB303 errors and parsing continues.  Returns 0 with *out
 * set; err is set only for conditions that are not about the input.
 */
int eb_dockerfile_parse(struct eb_dockerfile **out, const char *path, const char *text, size_t len,
			struct eb_diag_list *diags, struct eb_error **err);
/* The same with build-arg overrides: a NULL-terminated array of "NAME=VALUE"
 * (NULL for none).  As in docker, an override only takes effect for a name
 * some ARG declares. */
int eb_dockerfile_parse_args(struct eb_dockerfile **out, const char *path, const char *text,
			     size_t len, const char *const *build_args, struct eb_diag_list *diags,
			     struct eb_error **err);
void eb_dockerfile_free(struct eb_dockerfile *df);

/*
 * The FROM rules, into diags:
 *   EB300 error    image with neither tag nor digest (scratch and stages exempt)
 *   EB301 error    tag 'latest' without a digest
 *   EB304 warning  image uses a variable without a value, so cannot be checked
 * (EB303 findings about FROM come from eb_dockerfile_parse.)
 */
void eb_dockerfile_check_from(const struct eb_dockerfile *df, const char *path,
			      struct eb_diag_list *diags);

#endif
