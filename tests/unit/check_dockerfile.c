/*
 * check_dockerfile.c - the Dockerfile reader: FROM lines, ARG substitution,
 * stages, pip install arguments with their positions, and the FROM rules.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pin/dockerfile.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "testutil.h"

#define H64 "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

static struct eb_dockerfile *parse_len(const char *text, size_t len, const char *const *args,
				       struct eb_diag_list *dl)
{
	struct eb_dockerfile *df = NULL;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_dockerfile_parse_args(&df, "Dockerfile", text, len, args, dl, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_ptr_nonnull(df);
	return df;
}

static struct eb_dockerfile *parse(const char *text, struct eb_diag_list *dl)
{
	return parse_len(text, strlen(text), NULL, dl);
}

/* "line:col RULE" for each finding, sorted, joined with "; ". */
static char *diag_summary(struct eb_diag_list *dl)
{
	struct eb_buf b;

	eb_diag_list_sort(dl);
	eb_buf_init(&b, 0);
	for (size_t i = 0; i < dl->n; i++)
		eb_buf_addf(&b, "%s%u:%u %s", i ? "; " : "", dl->items[i].line, dl->items[i].col,
			    dl->items[i].rule);
	return eb_buf_detach(&b, NULL);
}

static const struct eb_diag *find_rule(const struct eb_diag_list *dl, const char *rule)
{
	for (size_t i = 0; i < dl->n; i++)
		if (strcmp(dl->items[i].rule, rule) == 0)
			return &dl->items[i];
	return NULL;
}

static void ck_opt_str(const char *got, const char *want)
{
	if (!want)
		ck_assert_ptr_null(got);
	else
		ck_assert_str_eq(got ? got : "(null)", want);
}

/* ---- a multi-stage file ---------------------------------------------------- */

START_TEST(multi_stage)
{
	static const char text[] =
		"# syntax=docker/dockerfile:1\n"
		"ARG PY=3.11\n"
		"FROM --platform=$BUILDPLATFORM python:${PY}-slim AS build\n"
		"RUN pip install --no-cache-dir numpy==1.26.4\n"
		"FROM build AS test\n"
		"RUN pip install -r req-test.txt\n"
		"FROM scratch\n"
		"COPY --from=build /x /x\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_dockerfile_from *f;

	eb_dockerfile_check_from(df, "Dockerfile", &dl);
	ck_assert_uint_eq(dl.n, 0);
	ck_assert_int_eq(df->escape, '\\');
	ck_assert_uint_eq(df->nfroms, 3);

	f = &df->froms[0];
	ck_assert_uint_eq(f->line, 3);
	ck_assert_uint_eq(f->col, 1);
	ck_assert_uint_eq(f->image_line, 3);
	ck_assert_uint_eq(f->image_col, 32);
	ck_assert_str_eq(f->raw, "python:${PY}-slim");
	ck_assert_str_eq(f->image, "python:3.11-slim");
	ck_assert_str_eq(f->platform, "$BUILDPLATFORM");
	ck_assert_str_eq(f->stage_name, "build");
	ck_assert_int_eq(f->is_stage_ref, 0);
	ck_assert_int_eq(f->is_scratch, 0);
	ck_assert_int_eq(f->unresolved_var, 0);
	ck_assert_int_eq(f->has_ref, 1);
	ck_assert_str_eq(f->ref.domain, "docker.io");
	ck_assert_str_eq(f->ref.path, "library/python");
	ck_assert_str_eq(f->ref.tag, "3.11-slim");
	ck_assert_ptr_null(f->ref.digest);
	/* the tag comes from ${PY}: it points at the '$' */
	ck_assert_uint_eq(f->tag_line, 3);
	ck_assert_uint_eq(f->tag_col, 39);

	f = &df->froms[1];
	ck_assert_uint_eq(f->line, 5);
	ck_assert_str_eq(f->image, "build");
	ck_assert_int_eq(f->is_stage_ref, 1);
	ck_assert_uint_eq(f->stage_ref, 0);
	ck_assert_int_eq(f->has_ref, 0);
	ck_assert_str_eq(f->stage_name, "test");

	f = &df->froms[2];
	ck_assert_uint_eq(f->line, 7);
	ck_assert_int_eq(f->is_scratch, 1);
	ck_assert_int_eq(f->has_ref, 0);
	ck_assert_ptr_null(f->stage_name);
	ck_assert_ptr_null(f->platform);

	/* one pip install per stage, in order */
	ck_assert_uint_eq(df->npips, 2);
	ck_assert_uint_eq(df->pips[0].line, 4);
	ck_assert_uint_eq(df->pips[0].col, 5);
	ck_assert_uint_eq(df->pips[0].stage, 0);
	ck_assert_uint_eq(df->pips[1].stage, 1);
	ck_assert_uint_eq(df->npip_args, 2);
	ck_assert_int_eq(df->pip_args[0].kind, EB_PIP_ARG_REQ);
	ck_assert_str_eq(df->pip_args[0].text, "numpy==1.26.4");
	ck_assert_uint_eq(df->pip_args[0].line, 4);
	ck_assert_uint_eq(df->pip_args[0].col, 32);
	ck_assert_uint_eq(df->pip_args[0].install, 0);
	ck_assert_int_eq(df->pip_args[1].kind, EB_PIP_ARG_REQFILE);
	ck_assert_str_eq(df->pip_args[1].text, "req-test.txt");
	ck_assert_uint_eq(df->pip_args[1].line, 6);
	ck_assert_uint_eq(df->pip_args[1].col, 20);
	ck_assert_uint_eq(df->pip_args[1].install, 1);

	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* ---- FROM: substitution, stages, rules ------------------------------------ */

struct from_case {
	const char *text;
	const char *image; /* of the last FROM, NULL for none */
	const char *diags; /* after parse and check_from */
};

static const struct from_case from_cases[] = {
	/* EB300 and EB301, as DL3006/DL3007 (but errors, and no $VAR exemption) */
	{ "FROM python\n", "python", "1:6 EB300" },
	{ "FROM localhost:5000/app\n", "localhost:5000/app", "1:6 EB300" },
	{ "FROM python:latest\n", "python:latest", "1:13 EB301" },
	{ "FROM docker.io/library/python:latest\n", "docker.io/library/python:latest",
	  "1:31 EB301" },
	{ "FROM python:latest@sha256:" H64 "\n", "python:latest@sha256:" H64, "" },
	{ "FROM python@sha256:" H64 "\n", "python@sha256:" H64, "" },
	{ "FROM python:3.11-slim-bookworm\n", "python:3.11-slim-bookworm", "" },
	{ "FROM scratch\n", "scratch", "" },
	{ "FROM python:latest AS a\nFROM a\n", "a", "1:13 EB301" },
	/* stages: referenced case-insensitively, only earlier ones */
	{ "FROM python:3.11 AS base\nFROM BASE\n", "BASE", "" },
	{ "FROM python:3.11 as build\nFROM build\n", "build", "" },
	{ "FROM later\nFROM python:3.11 AS later\n", "python:3.11", "1:6 EB300" },
	{ "ARG BASE=build\nFROM python:3.11 AS build\nFROM $BASE\n", "build", "" },
	/* ARG substitution */
	{ "ARG TAG=3.11\nFROM python:$TAG\n", "python:3.11", "" },
	{ "FROM python:${TAG:-3.11}\n", "python:3.11", "" },
	{ "ARG TAG\nFROM python:${TAG:-3.11}\n", "python:3.11", "" },
	{ "ARG TAG=\nFROM python:${TAG:-3.11}\n", "python:3.11", "" },
	{ "ARG TAG=\nFROM python:${TAG-3.11}\n", "python:", "2:12 EB303" },
	{ "ARG V=3.11\nARG TAG=${V}-slim\nFROM python:$TAG\n", "python:3.11-slim", "" },
	{ "ARG A=python B=3.11\nFROM ${A}:${B}-slim AS x\n", "python:3.11-slim", "" },
	{ "FROM ${IMG:-python}:3.11\n", "python:3.11", "" },
	{ "FROM ${A:+x}python:3.11\n", "python:3.11", "" },
	{ "ARG A=1\nFROM ${A:+py}thon:3.11\n", "python:3.11", "" },
	{ "ARG A=\"py thon\"\nFROM ${A}:1\n", "py thon:1", "2:6 EB303" },
	{ "FROM \"python:3.11\"\n", "python:3.11", "" },
	{ "FROM 'python':3.11\n", "python:3.11", "" },
	/* variables without a value: EB304 when declared, EB303 when not */
	{ "ARG TAG\nFROM python:$TAG\n", "python:$TAG", "2:13 EB304" },
	{ "ARG TAG\nFROM python:${TAG}\n", "python:${TAG}", "2:13 EB304" },
	{ "FROM python:${TARGETARCH}\n", "python:${TARGETARCH}", "1:13 EB304" },
	{ "FROM python:$TAG\n", "python:$TAG", "1:13 EB303" },
	{ "ARG V=x3\nFROM python:${V#x}\n", "python:${V#x}", "2:13 EB304" },
	{ "FROM python:${V#x}\n", "python:${V#x}", "1:13 EB303" },
	/* an unresolved stage ARG in a RUN is no concern of FROM */
	{ "FROM python:3.11\nARG X\nRUN echo $X\n", "python:3.11", "" },
	/* malformed FROM lines */
	{ "FROM\n", NULL, "1:1 EB303" },
	{ "from Python:3.11\n", "Python:3.11", "1:6 EB303" },
	{ "FROM python:3.11 build\n", "python:3.11", "1:18 EB303" },
	{ "FROM python:3.11 AS build extra\n", "python:3.11", "1:18 EB303" },
	{ "FROM python:3.11 AS 1x\n", "python:3.11", "1:21 EB303" },
	{ "FROM python:3.11 AS a\nFROM python:3.12 AS A\n", "python:3.12", "2:21 EB303" },
	{ "ARG IMG=python:3.11@sha256:abc\nFROM $IMG\n", "python:3.11@sha256:abc", "2:6 EB303" },
	{ "FROM python:3.11@sha256:abc\n", "python:3.11@sha256:abc", "1:25 EB303" },
	{ "FROM --platform=linux/amd64 python:3.11\n", "python:3.11", "" },
	{ "FROM --foo=bar python:3.11\n", "python:3.11", "1:6 EB303" },
	{ "FROM --platform python\n", "python", "1:6 EB303; 1:17 EB300" },
	{ "FROM python:3.11\\\n  AS build\n", "python:3.11", "" },
	{ "FROM python:latest \\\n  AS build\n", "python:latest", "1:13 EB301" },
};

START_TEST(from_table)
{
	const struct from_case *c = &from_cases[_i];
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(c->text, &dl);
	char *sum;

	eb_dockerfile_check_from(df, "Dockerfile", &dl);
	sum = diag_summary(&dl);
	ck_assert_msg(strcmp(sum, c->diags) == 0, "%s: findings '%s', want '%s'", c->text, sum,
		      c->diags);
	ck_assert_uint_ge(df->nfroms, 1);
	ck_opt_str(df->froms[df->nfroms - 1].image, c->image);
	for (size_t i = 0; i < dl.n; i++) {
		ck_assert_str_eq(dl.items[i].file, "Dockerfile");
		ck_assert_ptr_nonnull(dl.items[i].msg);
		/* one line, lower-case start, no trailing period */
		ck_assert_ptr_null(strchr(dl.items[i].msg, '\n'));
		ck_assert_msg(!(dl.items[i].msg[0] >= 'A' && dl.items[i].msg[0] <= 'Z'), "%s",
			      dl.items[i].msg);
		ck_assert_int_ne(dl.items[i].msg[strlen(dl.items[i].msg) - 1], '.');
	}
	free(sum);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* The exact words of each FROM finding. */
START_TEST(from_messages)
{
	static const char text[] = "ARG TAG\n"
				   "FROM python\n"
				   "FROM python:latest\n"
				   "FROM python:$TAG\n"
				   "FROM python:$NOPE\n"
				   "FROM Python:3.11\n"
				   "FROM\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_diag *d;

	eb_dockerfile_check_from(df, "Dockerfile", &dl);
	ck_assert_uint_eq(dl.n, 6);

	d = find_rule(&dl, "EB300");
	ck_assert_int_eq(d->severity, EB_SEV_ERROR);
	ck_assert_str_eq(d->msg, "image 'python' has no tag or digest");
	ck_assert_str_eq(d->hint, "pin a tag, e.g. python:3.11-slim-bookworm");

	d = find_rule(&dl, "EB301");
	ck_assert_int_eq(d->severity, EB_SEV_ERROR);
	ck_assert_uint_eq(d->line, 3);
	ck_assert_uint_eq(d->col, 13);
	ck_assert_str_eq(d->msg, "image 'python:latest' uses the tag 'latest' without a digest");
	ck_assert_ptr_nonnull(d->hint);

	d = find_rule(&dl, "EB304");
	ck_assert_int_eq(d->severity, EB_SEV_WARNING);
	ck_assert_uint_eq(d->line, 4);
	ck_assert_uint_eq(d->col, 13);
	ck_assert_str_eq(d->msg, "cannot check image 'python:$TAG': variable 'TAG' has no value");
	ck_assert_str_eq(d->hint, "give it a default before the first FROM: ARG TAG=<value>");
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);

	df = parse("FROM python:3.11-$TARGETARCH\n", &dl);
	eb_dockerfile_check_from(df, "Dockerfile", &dl);
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].hint, "'TARGETARCH' is set by the builder for each platform; "
					   "name the image of each platform instead");
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
	df = parse(text, &dl);
	eb_dockerfile_check_from(df, "Dockerfile", &dl);

	eb_diag_list_sort(&dl);
	ck_assert_str_eq(dl.items[3].rule, "EB303");
	ck_assert_uint_eq(dl.items[3].line, 5);
	ck_assert_str_eq(dl.items[3].msg, "variable 'NOPE' in 'FROM' is not declared by an ARG "
					  "before the first FROM");
	ck_assert_str_eq(dl.items[3].hint, "add 'ARG NOPE=<value>' before the first FROM");
	ck_assert_uint_eq(dl.items[4].line, 6);
	ck_assert_uint_eq(dl.items[4].col, 6);
	ck_assert_str_eq(dl.items[4].msg, "invalid image reference 'Python:3.11': repository name "
					  "'Python' must be lowercase");
	ck_assert_uint_eq(dl.items[5].line, 7);
	ck_assert_uint_eq(dl.items[5].col, 1);
	ck_assert_str_eq(dl.items[5].msg, "'FROM' needs an image");

	/* the flags of each FROM */
	ck_assert_uint_eq(df->nfroms, 6);
	ck_assert_int_eq(df->froms[2].unresolved_var, 1);
	ck_assert_str_eq(df->froms[2].unresolved_name, "TAG");
	ck_assert_int_eq(df->froms[2].malformed, 0);
	ck_assert_int_eq(df->froms[3].malformed, 1);
	ck_assert_int_eq(df->froms[4].malformed, 1);
	ck_assert_int_eq(df->froms[4].has_ref, 0);
	ck_assert_ptr_null(df->froms[5].raw);
	ck_assert_uint_eq(df->froms[5].image_line, 0);

	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(build_args)
{
	static const char text[] = "ARG TAG=3.10\n"
				   "ARG BASE\n"
				   "FROM python:$TAG AS a\n"
				   "FROM ${BASE:-python}:$UNDECLARED\n"
				   "ARG TAG\n"
				   "RUN pip install x==$TAG\n";
	static const char *const args[] = { "TAG=3.12", "BASE=pypy", "UNDECLARED=1",
					     "TARGETARCH=amd64", NULL };
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse_len(text, strlen(text), args, &dl);

	ck_assert_str_eq(df->froms[0].image, "python:3.12");
	/* an override takes effect only for a declared ARG */
	ck_assert_str_eq(df->froms[1].image, "pypy:$UNDECLARED");
	ck_assert_int_eq(df->froms[1].malformed, 1);
	ck_assert_uint_eq(dl.n, 1);
	/* in a stage, ARG NAME takes the override too */
	ck_assert_uint_eq(df->npip_args, 1);
	ck_assert_str_eq(df->pip_args[0].text, "x==3.12");
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);

	/* the platform ARGs are predefined and take overrides */
	df = parse_len("FROM python:3.11-$TARGETARCH\n", 28, args, &dl);
	ck_assert_str_eq(df->froms[0].image, "python:3.11-amd64");
	ck_assert_uint_eq(dl.n, 0);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* Instructions are reported at their first physical line; words at their own. */
START_TEST(positions)
{
	static const char text[] = "\n"
				   "  # a comment\n"
				   "  from \\\n"
				   "\t'python:3.11' \\\n"
				   "   # comment inside\n"
				   "\n"
				   "   AS Build\n"
				   "Run pip install \\\n"
				   "      numpy==1.26.4 \\\n"
				   "  \\\n"
				   "    \"pandas>=2\"\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_dockerfile_from *f;

	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(df->nfroms, 1);
	f = &df->froms[0];
	ck_assert_uint_eq(f->line, 3);
	ck_assert_uint_eq(f->col, 3);
	ck_assert_uint_eq(f->image_line, 4);
	ck_assert_uint_eq(f->image_col, 2);
	ck_assert_str_eq(f->raw, "'python:3.11'");
	ck_assert_str_eq(f->image, "python:3.11");
	ck_assert_uint_eq(f->tag_line, 4);
	ck_assert_uint_eq(f->tag_col, 10);
	ck_assert_str_eq(f->stage_name, "Build");

	ck_assert_uint_eq(df->npips, 1);
	ck_assert_uint_eq(df->pips[0].line, 8);
	ck_assert_uint_eq(df->pips[0].col, 5);
	ck_assert_uint_eq(df->npip_args, 2);
	ck_assert_str_eq(df->pip_args[0].text, "numpy==1.26.4");
	ck_assert_uint_eq(df->pip_args[0].line, 9);
	ck_assert_uint_eq(df->pip_args[0].col, 7);
	ck_assert_str_eq(df->pip_args[1].text, "pandas>=2");
	ck_assert_uint_eq(df->pip_args[1].line, 11);
	ck_assert_uint_eq(df->pip_args[1].col, 6);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(escape_directive)
{
	static const char text[] = "# escape=`\n"
				   "FROM python:3.11\n"
				   "RUN pip install `\n"
				   "    numpy==1.26.4 `\n"
				   "    'pandas>=2'\n"
				   "RUN echo C:\\ \n"
				   "RUN pip install x\\==1\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);

	ck_assert_uint_eq(dl.n, 0);
	ck_assert_int_eq(df->escape, '`');
	/* a trailing backslash no longer continues: line 7 stands alone */
	ck_assert_uint_eq(df->npips, 2);
	ck_assert_uint_eq(df->npip_args, 3);
	ck_assert_str_eq(df->pip_args[0].text, "numpy==1.26.4");
	ck_assert_uint_eq(df->pip_args[0].line, 4);
	ck_assert_uint_eq(df->pip_args[0].col, 5);
	ck_assert_str_eq(df->pip_args[1].text, "pandas>=2");
	ck_assert_uint_eq(df->pip_args[1].line, 5);
	ck_assert_uint_eq(df->pip_args[1].col, 6);
	/* inside RUN the shell still reads '\' as its escape */
	ck_assert_str_eq(df->pip_args[2].text, "x==1");
	ck_assert_uint_eq(df->pip_args[2].line, 7);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(directive_rules)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df;

	/* directives only count before anything else */
	df = parse("FROM python:3.11\n# escape=`\nRUN pip install \\\n  a==1\n", &dl);
	ck_assert_int_eq(df->escape, '\\');
	ck_assert_uint_eq(df->npip_args, 1);
	ck_assert_uint_eq(dl.n, 0);
	eb_dockerfile_free(df);

	df = parse("# comment\n# escape=`\nFROM python:3.11\n", &dl);
	ck_assert_int_eq(df->escape, '\\');
	eb_dockerfile_free(df);

	df = parse("#ESCAPE = `\n# syntax=docker/dockerfile:1.7\nFROM python:3.11\n", &dl);
	ck_assert_int_eq(df->escape, '`');
	ck_assert_uint_eq(dl.n, 0);
	eb_dockerfile_free(df);

	df = parse("# escape=x\nFROM python:3.11\n", &dl);
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].rule, "EB303");
	ck_assert_uint_eq(dl.items[0].line, 1);
	ck_assert_uint_eq(dl.items[0].col, 10);
	ck_assert_str_eq(dl.items[0].msg, "invalid escape character 'x'");
	ck_assert_int_eq(df->escape, '\\');
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);

	df = parse("# escape=`\n# escape=\\\nFROM python:3.11\n", &dl);
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].msg, "duplicate 'escape' parser directive");
	ck_assert_int_eq(df->escape, '`');
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* ---- RUN: exec form, the brief's examples ------------------------------------- */

START_TEST(exec_form)
{
	static const char text[] =
		"FROM python:3.11\n"
		"RUN [\"pip\", \"install\", \"--no-cache-dir\", \"numpy==1.26.4\"]\n"
		"RUN [\"/bin/sh\", \"-c\", \"pip install a==1 && pip3 install -r r.txt\"]\n"
		"RUN [ \"pip\" , \"install\", \"b\\u003d\\u003d2\", \"c\\\"d\" ]\n"
		"RUN --mount=type=cache,target=/root/.cache "
		"[\"python3\", \"-m\", \"pip\", \"install\", \"e==5\"]\n"
		"RUN [\"pip\", \"install\" \"x==9\"]\n"
		"RUN [\"pip\", \"install\", \"$NOT_EXPANDED\"]\n"
		"RUN [\"pip\", \"install\", \"nul\\u0000\"]\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_dockerfile_pip_arg *a = df->pip_args;

	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(df->npips, 6);
	ck_assert_uint_eq(df->npip_args, 7);
	ck_assert_int_eq(df->pips[0].exec_form, 1);
	ck_assert_uint_eq(df->pips[0].line, 2);
	ck_assert_uint_eq(df->pips[0].col, 6);
	ck_assert_str_eq(a[0].text, "numpy==1.26.4");
	ck_assert_uint_eq(a[0].line, 2);
	ck_assert_uint_eq(a[0].col, 43);
	/* sh -c: the script is read as shell, positions inside the string */
	ck_assert_str_eq(a[1].text, "a==1");
	ck_assert_uint_eq(a[1].col, 36);
	ck_assert_int_eq(df->pips[1].exec_form, 1);
	ck_assert_uint_eq(df->pips[1].col, 24);
	ck_assert_int_eq(a[2].kind, EB_PIP_ARG_REQFILE);
	ck_assert_str_eq(a[2].text, "r.txt");
	ck_assert_uint_eq(a[2].col, 60);
	/* JSON escapes decode; the column is that of the first character */
	ck_assert_str_eq(a[3].text, "b==2");
	ck_assert_uint_eq(a[3].line, 4);
	ck_assert_uint_eq(a[3].col, 27);
	ck_assert_str_eq(a[4].text, "c\"d");
	/* flags before the array */
	ck_assert_str_eq(a[5].text, "e==5");
	ck_assert_uint_eq(a[5].line, 5);
	ck_assert_uint_eq(df->pips[4].col, 45);
	/* not JSON (missing comma): the shell form, which finds no pip */
	/* no shell in the exec form: $VAR is literal */
	ck_assert_str_eq(a[6].text, "$NOT_EXPANDED");
	ck_assert_int_eq(a[6].unresolved_var, 0);
	ck_assert_uint_eq(a[6].line, 7);
	/* line 8: "\u0000" cannot be passed to exec, so it is no exec form
	 * either, and the shell form finds no pip (npips stayed 6) */
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(brief_examples)
{
	static const char text[] =
		"FROM python:3.11\n"
		"RUN apt-get update && pip install --no-cache-dir numpy==1.26.4 'pandas>=2' -r req.txt\n"
		"RUN python -m pip install -U pip\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_dockerfile_pip_arg *a = df->pip_args;
	const struct eb_dockerfile_pip_option *o = df->pip_options;

	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(df->npips, 2);
	ck_assert_uint_eq(df->pips[0].line, 2);
	ck_assert_uint_eq(df->pips[0].col, 23);
	ck_assert_uint_eq(df->pips[0].first_arg, 0);
	ck_assert_uint_eq(df->pips[0].nargs, 3);
	ck_assert_uint_eq(df->pips[0].nopts, 1);
	ck_assert_uint_eq(df->npip_args, 4);

	ck_assert_int_eq(a[0].kind, EB_PIP_ARG_REQ);
	ck_assert_str_eq(a[0].text, "numpy==1.26.4");
	ck_assert_uint_eq(a[0].line, 2);
	ck_assert_uint_eq(a[0].col, 50);
	ck_assert_int_eq(a[1].kind, EB_PIP_ARG_REQ);
	ck_assert_str_eq(a[1].text, "pandas>=2");
	ck_assert_uint_eq(a[1].col, 65);
	ck_assert_int_eq(a[2].kind, EB_PIP_ARG_REQFILE);
	ck_assert_str_eq(a[2].text, "req.txt");
	ck_assert_uint_eq(a[2].col, 79);
	ck_assert_str_eq(o[0].name, "--no-cache-dir");
	ck_assert_ptr_null(o[0].value);
	ck_assert_uint_eq(o[0].col, 35);

	ck_assert_uint_eq(df->pips[1].line, 3);
	ck_assert_uint_eq(df->pips[1].col, 5);
	ck_assert_int_eq(a[3].kind, EB_PIP_ARG_REQ);
	ck_assert_str_eq(a[3].text, "pip");
	ck_assert_uint_eq(a[3].line, 3);
	ck_assert_uint_eq(a[3].col, 30);
	ck_assert_uint_eq(a[3].install, 1);
	ck_assert_str_eq(o[1].name, "-U");
	ck_assert_uint_eq(o[1].install, 1);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* ---- pip install arguments in shell form ------------------------------------ */

struct pip_exp {
	enum eb_pip_arg_kind kind;
	const char *text;
	const char *at; /* where the text starts in the script; NULL: text itself */
};

struct pip_case {
	const char *script;
	size_t ninstall;
	struct pip_exp exp[8];
};

#define REQ EB_PIP_ARG_REQ
#define RF EB_PIP_ARG_REQFILE
#define CF EB_PIP_ARG_CONSTRAINT
#define ED EB_PIP_ARG_EDITABLE
#define PATH EB_PIP_ARG_PATH

static const struct pip_case pip_cases[] = {
	/* the commands */
	{ "pip install numpy==1.26.4", 1, { { REQ, "numpy==1.26.4", NULL } } },
	{ "pip3 install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip3.11 install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "/usr/local/bin/pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "python3 -m pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "python3.11 -m pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "python -mpip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "python -I -m pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "python -W ignore -m pip install a==1", 1, { { REQ, "a==1", NULL } } },
	/* what can stand in front */
	{ "sudo -H pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "sudo -u root pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "PIP_NO_CACHE_DIR=1 pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "env -u X A=1 pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "time pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "nice -n 10 pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "exec pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "! pip install a==1", 1, { { REQ, "a==1", NULL } } },
	/* after operators and in compound commands */
	{ "cd /x; pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "false || pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "true | pip install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip install a==1 || true", 1, { { REQ, "a==1", NULL } } },
	{ "pip install a==1&&pip install b==2", 2,
	  { { REQ, "a==1", NULL }, { REQ, "b==2", NULL } } },
	{ "if true; then pip install a==1; fi", 1, { { REQ, "a==1", NULL } } },
	{ "while false; do pip install a==1; done", 1, { { REQ, "a==1", NULL } } },
	{ "{ pip install a==1; }", 1, { { REQ, "a==1", NULL } } },
	{ "(cd x && pip install .)", 1, { { PATH, ".", ".)" } } },
	{ "bash -c 'pip install a==1'", 1, { { REQ, "a==1", NULL } } },
	{ "sh -ec \"pip install a==1 && pip install b==2\"", 2,
	  { { REQ, "a==1", NULL }, { REQ, "b==2", NULL } } },
	/* not pip install */
	{ "pip download a; pip uninstall b; pipenv install c; echo pip install d", 0, { { 0 } } },
	{ "python -c 'import pip' install x; python script.py -m pip install y", 0, { { 0 } } },
	{ "pip install ''", 1, { { 0 } } },
	/* files, editables, paths */
	{ "pip install -r req.txt", 1, { { RF, "req.txt", NULL } } },
	{ "pip install --requirement req.txt", 1, { { RF, "req.txt", NULL } } },
	{ "pip install -rreq.txt --requirement=r2.txt --constraint c.txt -cc2.txt", 1,
	  { { RF, "req.txt", NULL },
	    { RF, "r2.txt", NULL },
	    { CF, "c.txt", "c.txt -" },
	    { CF, "c2.txt", NULL } } },
	{ "pip install -qr req.txt", 1, { { RF, "req.txt", NULL } } },
	{ "pip install -Ur req.txt", 1, { { RF, "req.txt", NULL } } },
	{ "pip install -c constraints.txt a==1", 1,
	  { { CF, "constraints.txt", NULL }, { REQ, "a==1", NULL } } },
	{ "pip install -e . -e git+https://x/y.git#egg=y", 1,
	  { { ED, ".", ". -e" }, { ED, "git+https://x/y.git#egg=y", NULL } } },
	{ "pip install -e./local --editable=../other", 1,
	  { { ED, "./local", NULL }, { ED, "../other", NULL } } },
	{ "pip install ./pkg /src/x dist/x-1.0-py3-none-any.whl x.tar.gz ~/y .[dev]", 1,
	  { { PATH, "./pkg", NULL },
	    { PATH, "/src/x", NULL },
	    { PATH, "dist/x-1.0-py3-none-any.whl", NULL },
	    { PATH, "x.tar.gz", NULL },
	    { PATH, "~/y", NULL },
	    { PATH, ".[dev]", NULL } } },
	{ "pip install 'foo @ https://h/foo.whl' https://h/bar.whl", 1,
	  { { REQ, "foo @ https://h/foo.whl", NULL }, { REQ, "https://h/bar.whl", NULL } } },
	/* options and their values are consumed */
	{ "pip install -i https://idx/simple --extra-index-url=https://x a==1 -f /wheels "
	  "--target /opt b==2",
	  1, { { REQ, "a==1", NULL }, { REQ, "b==2", NULL } } },
	{ "pip install --no-binary :all: a==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip install --only-binary=:all: a==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip install --upgrade pip setuptools", 1,
	  { { REQ, "pip", "pip setuptools" }, { REQ, "setuptools", NULL } } },
	{ "pip --no-cache-dir install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip --cache-dir /c install a==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip install -- -weird", 1, { { REQ, "-weird", NULL } } },
	{ "python3 -m pip install --user 'requests[socks]==2.31.0'", 1,
	  { { REQ, "requests[socks]==2.31.0", NULL } } },
	{ "pip install \"numpy>=1.0,<2\" 'torch==2.1.0+cpu' --index-url https://dl/whl/cpu", 1,
	  { { REQ, "numpy>=1.0,<2", NULL }, { REQ, "torch==2.1.0+cpu", NULL } } },
	/* redirections, comments, quoting */
	{ "pip install a==1 > /dev/null 2>&1", 1, { { REQ, "a==1", NULL } } },
	{ "pip install a==1 2>/dev/null b==2", 1, { { REQ, "a==1", NULL }, { REQ, "b==2", NULL } } },
	{ "pip install a==1 # b==2", 1, { { REQ, "a==1", NULL } } },
	{ "pip install\ta==1", 1, { { REQ, "a==1", NULL } } },
	{ "pip install a\\==1", 1, { { REQ, "a==1", "a\\" } } },
	{ "pip install numpy==1.26.4; echo done", 1, { { REQ, "numpy==1.26.4", NULL } } },
};

START_TEST(pip_table)
{
	const struct pip_case *c = &pip_cases[_i];
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	char *text = eb_xasprintf("FROM python:3.11\nRUN %s\n", c->script);
	struct eb_dockerfile *df = parse(text, &dl);
	size_t n = 0;

	while (n < 8 && c->exp[n].text)
		n++;
	ck_assert_uint_eq(dl.n, 0);
	ck_assert_msg(df->npips == c->ninstall, "%s: %zu installs, want %zu", c->script, df->npips,
		      c->ninstall);
	ck_assert_msg(df->npip_args == n, "%s: %zu args, want %zu", c->script, df->npip_args, n);
	for (size_t i = 0; i < n; i++) {
		const struct eb_dockerfile_pip_arg *a = &df->pip_args[i];
		const struct pip_exp *e = &c->exp[i];
		const char *at = strstr(c->script, e->at ? e->at : e->text);

		ck_assert_msg(at != NULL, "%s: bad test, no '%s'", c->script, e->at ? e->at : e->text);
		ck_assert_msg(a->kind == e->kind, "%s: arg %zu kind %d, want %d", c->script, i,
			      a->kind, e->kind);
		ck_assert_str_eq(a->text, e->text);
		ck_assert_uint_eq(a->line, 2);
		ck_assert_msg(a->col == 5 + (unsigned)(at - c->script), "%s: '%s' at col %u, want %u",
			      c->script, a->text, a->col, 5 + (unsigned)(at - c->script));
		ck_assert_int_eq(a->unresolved_var, 0);
	}
	free(text);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(pip_options)
{
	static const char text[] = "FROM python:3.11\n"
				   "RUN pip install -i https://idx/simple --extra-index-url=https://x "
				   "-qU --no-deps -thedir a==1\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_dockerfile_pip_option *o = df->pip_options;

	ck_assert_uint_eq(df->npips, 1);
	ck_assert_uint_eq(df->npip_options, 5);
	ck_assert_uint_eq(df->pips[0].nopts, 5);
	ck_assert_str_eq(o[0].name, "-i");
	ck_assert_str_eq(o[0].value, "https://idx/simple");
	ck_assert_uint_eq(o[0].col, 17);
	ck_assert_str_eq(o[1].name, "--extra-index-url");
	ck_assert_str_eq(o[1].value, "https://x");
	ck_assert_str_eq(o[2].name, "-qU");
	ck_assert_ptr_null(o[2].value);
	ck_assert_str_eq(o[3].name, "--no-deps");
	ck_assert_ptr_null(o[3].value);
	ck_assert_str_eq(o[4].name, "-t");
	ck_assert_str_eq(o[4].value, "hedir");
	ck_assert_uint_eq(df->npip_args, 1);
	ck_assert_str_eq(df->pip_args[0].text, "a==1");
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* ARG and ENV values reach RUN; global ARGs only when redeclared. */
START_TEST(stage_variables)
{
	static const char text[] = "ARG NUMPY=1.26.4\n"
				   "ARG PKGS=\"x==1  y==2\"\n"
				   "FROM python:3.11 AS base\n"
				   "ARG NUMPY\n"
				   "ARG PKGS\n"
				   "ENV TORCH=2.1.0 OTHER=\"$TORCH+cpu\"\n"
				   "ENV OLD old style\n"
				   "RUN pip install numpy==${NUMPY} torch==$TORCH \"t==$OTHER\" $PKGS\n"
				   "FROM python:3.11\n"
				   "RUN pip install numpy==${NUMPY} z==$Z $(cat reqs) w==${W:-1}\n"
				   "FROM base\n"
				   "RUN pip install torch==$TORCH\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	const struct eb_dockerfile_pip_arg *a = df->pip_args;

	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(df->npip_args, 10);
	ck_assert_str_eq(a[0].text, "numpy==1.26.4");
	ck_assert_int_eq(a[0].unresolved_var, 0);
	ck_assert_uint_eq(a[0].col, 17);
	ck_assert_str_eq(a[1].text, "torch==2.1.0");
	ck_assert_str_eq(a[2].text, "t==2.1.0+cpu");
	/* an unquoted expansion splits at blanks */
	ck_assert_str_eq(a[3].text, "x==1");
	ck_assert_str_eq(a[4].text, "y==2");
	ck_assert_uint_eq(a[3].col, 59);
	ck_assert_uint_eq(a[4].col, 59);
	/* a new stage does not see the global ARG without redeclaring it */
	ck_assert_str_eq(a[5].text, "numpy==${NUMPY}");
	ck_assert_int_eq(a[5].unresolved_var, 1);
	ck_assert_str_eq(a[6].text, "z==$Z");
	ck_assert_int_eq(a[6].unresolved_var, 1);
	ck_assert_str_eq(a[7].text, "$(cat reqs)");
	ck_assert_int_eq(a[7].unresolved_var, 1);
	/* $W might come from the base image's environment */
	ck_assert_str_eq(a[8].text, "w==${W:-1}");
	ck_assert_int_eq(a[8].unresolved_var, 1);
	/* FROM base inherits its ENV */
	ck_assert_str_eq(a[9].text, "torch==2.1.0");
	ck_assert_int_eq(a[9].unresolved_var, 0);
	ck_assert_uint_eq(df->pips[2].stage, 2);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* Heredoc bodies are skipped: no instructions, no pip findings inside. */
START_TEST(heredocs)
{
	static const char text[] = "FROM python:3.11\n"
				   "RUN <<EOF\n"
				   "pip install notpinned\n"
				   "FROM evil\n"
				   "EOF\n"
				   "RUN cat <<-'END' > /x && pip install after==1\n"
				   "\tpip install inside\n"
				   "\tEND\n"
				   "COPY <<A <<\"B\" /dst/\n"
				   "FOO\n"
				   "A\n"
				   "BAR\n"
				   "B\n"
				   "RUN echo '<<NOT' && pip install last==1\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);

	/* the body of `RUN <<EOF` is the script (read as shell, at its own
	 * lines); `cat <<-'END' > /x` writes a file and COPY bodies are files */
	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(df->nfroms, 1);
	ck_assert_uint_eq(df->npip_args, 3);
	ck_assert_str_eq(df->pip_args[0].text, "notpinned");
	ck_assert_uint_eq(df->pip_args[0].line, 3);
	ck_assert_uint_eq(df->pip_args[0].col, 13);
	ck_assert_str_eq(df->pip_args[1].text, "after==1");
	ck_assert_uint_eq(df->pip_args[1].line, 6);
	ck_assert_str_eq(df->pip_args[2].text, "last==1");
	ck_assert_uint_eq(df->pip_args[2].line, 14);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* "kind:text@line:col" of every argument, joined by spaces. */
static char *args_summary(const struct eb_dockerfile *df)
{
	struct eb_buf b;
	static const char kinds[] = "RrcePC";

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < df->npip_args; i++) {
		const struct eb_dockerfile_pip_arg *a = &df->pip_args[i];
		eb_buf_addf(&b, "%s%c:%s@%u:%u", i ? " " : "", kinds[a->kind], a->text, a->line, a->col);
		if (a->context_path)
			eb_buf_addf(&b, "=%s", a->context_path);
		if (a->in_image)
			eb_buf_adds(&b, "=?");
	}
	return eb_buf_detach(&b, NULL);
}

static void expect_args(const char *text, const char *want)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);
	char *got = args_summary(df);

	ck_assert_msg(strcmp(got, want) == 0, "%s\ngot  %s\nwant %s", text, got, want);
	free(got);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}

/* The Dockerfile reference's heredoc forms: a RUN whose command is empty
 * or a shell runs the body; several heredocs in one instruction; <<- strips
 * tabs; quoted delimiters. */
START_TEST(heredoc_scripts)
{
	expect_args("FROM a:1\nRUN <<-EOT bash -ex\n\tpip install x\n\tEOT\n", "R:x@3:14");
	expect_args("FROM a:1\nRUN <<\"EOF\" bash -ex\npip install \".[all]\"\nEOF\n", "P:.[all]@3:14");
	expect_args("FROM a:1\nRUN python3 <<EOF\npip install x\nEOF\n", "");
	expect_args("FROM a:1\nRUN sh -c 'true' <<EOF\npip install x\nEOF\n", "");
	expect_args("FROM a:1\nRUN <<A cat > /a && <<B sh\npip install no\nA\npip install yes\nB\n",
		    "R:yes@5:13");
	expect_args("FROM a:1\nRUN <<A <<B\npip install one\nA\npip install two\nB\n",
		    "R:one@3:13 R:two@5:13");
	/* a \-continued RUN line before the heredoc */
	expect_args("FROM a:1\nRUN --mount=type=cache,target=/c \\\n  <<EOF\nuv pip install y\nEOF\n",
		    "R:y@4:16");
}
END_TEST

/* $(...) and `...` run their commands (issue 15). */
START_TEST(command_substitution)
{
	expect_args("FROM a:1\nRUN echo $(pip install aistore) `pip3 install b==1` \"$(uv pip install c)\"\n",
		    "R:aistore@2:24 R:b==1@2:47 R:c@2:71");
	expect_args("FROM a:1\nRUN x=$((1+2)) && echo $(echo $(pip install deep))\n", "R:deep@2:45");
}
END_TEST

/* pipx, uv, python -m pip and conda-family installers (issue 10, 15). */
START_TEST(installers)
{
	expect_args("FROM a:1\nRUN pipx install black && pipx inject black click==8 rich\n",
		    "R:black@2:18 R:click==8@2:45 R:rich@2:54");
	expect_args("FROM a:1\nRUN pipx install --python python3.11 --pip-args='--no-cache' x==1\n",
		    "R:x==1@2:62");
	expect_args("FROM a:1\nRUN uv pip install --system -p 3.11 numpy && uv pip sync r.txt\n",
		    "R:numpy@2:37 r:r.txt@2:58=r.txt");
	expect_args("FROM a:1\nRUN uv add --group dev pytest && uv tool install ruff==0.3 && uv sync\n",
		    "R:pytest@2:24 R:ruff==0.3@2:50");
	expect_args("FROM a:1\nRUN python -m pip install a && python3.11 -m pip install -U b==1\n",
		    "R:a@2:27 R:b==1@2:61");
	expect_args("FROM a:1\nRUN conda install -y -c conda-forge numpy=1.26 && mamba create -n x python==3.11.8 "
		    "&& micromamba install --file env.txt -r /opt/m scipy\n",
		    "C:numpy=1.26@2:37 C:python==3.11.8@2:69 C:scipy@2:131");
	expect_args("FROM a:1\nRUN conda env create -f environment.yml && conda update numpy\n", "");
}
END_TEST

/* -r FILE followed back to the build context through COPY/ADD, WORKDIR
 * and `cd DIR &&`; what cannot be followed is marked (=?). */
START_TEST(reqfile_context)
{
	expect_args("FROM a:1\nCOPY reqs/ /opt/reqs/\nCOPY top.txt /tmp/r.txt\n"
		    "RUN pip install -r /opt/reqs/base.txt -r /tmp/r.txt -r /etc/x.txt\n",
		    "r:/opt/reqs/base.txt@4:20=reqs/base.txt r:/tmp/r.txt@4:42=top.txt r:/etc/x.txt@4:56=?");
	expect_args("FROM a:1\nWORKDIR /app\nCOPY . .\nRUN pip install -r requirements/dev.txt\n",
		    "r:requirements/dev.txt@4:20=requirements/dev.txt");
	expect_args("FROM a:1\nCOPY requirements.txt /src/\nRUN cd /src && pip install -r requirements.txt\n"
		    "RUN pip install -r requirements.txt\n",
		    "r:requirements.txt@3:31=requirements.txt r:requirements.txt@4:20=requirements.txt");
	expect_args("FROM a:1\nWORKDIR /w\nCOPY a.txt ./b.txt\nRUN pip install -r b.txt -c ../w/b.txt\n",
		    "r:b.txt@4:20=a.txt c:../w/b.txt@4:29=a.txt");
	/* --from copies come from elsewhere; URLs and variables are not files */
	expect_args("FROM a:1\nCOPY --from=build /r.txt /r.txt\nRUN pip install -r /r.txt -r https://h/r.txt -r $R\n",
		    "r:/r.txt@3:20=? r:https://h/r.txt@3:30 r:$R@3:49");
	/* a COPY source behind a variable keeps the tail after it */
	expect_args("FROM a:1\nARG D\nCOPY $D/reqs/r.txt /app/r.txt\nRUN pip install -r /app/r.txt\n",
		    "r:/app/r.txt@4:20=reqs/r.txt");
	/* a new stage starts with no files */
	expect_args("FROM a:1\nCOPY r.txt /r.txt\nFROM b:1\nRUN pip install -r /r.txt\n", "r:/r.txt@4:20=?");
}
END_TEST

/* ---- findings about the file itself ------------------------------------------ */

struct bad_case {
	const char *text;
	size_t len; /* 0: strlen(text) */
	const char *diags;
	const char *msg; /* of the first finding */
};

static const struct bad_case bad_cases[] = {
	{ "FROM python:3.11\nFOO bar\n", 0, "2:1 EB303", "unknown instruction 'FOO'" },
	{ "RUN pip install x\nFROM python:3.11\n", 0, "1:1 EB303",
	  "instruction 'RUN' before the first FROM" },
	{ "", 0, "1:1 EB303", "no FROM instruction" },
	{ "# only a comment\nARG X=1\n", 0, "2:1 EB303", "no FROM instruction" },
	/* a fragment: one finding, not one per instruction */
	{ "# part\n  RUN true\nENV A=1\n", 0, "2:3 EB303", "no FROM instruction" },
	{ "FROM python:3.11\nONBUILD FROM x\n", 0, "2:9 EB303", "'ONBUILD FROM' is not allowed" },
	{ "FROM python:3.11\nONBUILD\n", 0, "2:1 EB303", "'ONBUILD' needs an instruction" },
	{ "FROM python:3.11\nENV\n", 0, "2:1 EB303", "'ENV' needs a name and a value" },
	{ "FROM python:3.11\nENV A\n", 0, "2:5 EB303", "'ENV A' needs a value" },
	{ "FROM python:3.11\nENV A=1 B\n", 0, "2:9 EB303", "expected NAME=VALUE in 'ENV', got 'B'" },
	{ "ARG\nFROM python:3.11\n", 0, "1:1 EB303", "'ARG' needs a name" },
	{ "ARG =x\nFROM python:3.11\n", 0, "1:5 EB303", "'ARG' needs a name before '='" },
	{ "FROM python:3.11\nRUN a\0b\n", 26, "2:6 EB303", "NUL byte in Dockerfile" },
	{ "FROM python:3.11\nRUN <<EOF\npip install x\nFROM y\n", 0, "2:1 EB303",
	  "heredoc 'EOF' is not terminated" },
};

START_TEST(bad_table)
{
	const struct bad_case *c = &bad_cases[_i];
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse_len(c->text, c->len ? c->len : strlen(c->text), NULL, &dl);
	char *sum;

	ck_assert_uint_ge(dl.n, 1);
	ck_assert_str_eq(dl.items[0].msg, c->msg);
	sum = diag_summary(&dl);
	ck_assert_msg(strcmp(sum, c->diags) == 0, "%s: findings '%s', want '%s'", c->text, sum,
		      c->diags);
	free(sum);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(onbuild_run)
{
	static const char text[] = "FROM python:3.11\n"
				   "onbuild run pip install ob==1\n"
				   "ONBUILD ENV X=1\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);

	ck_assert_uint_eq(dl.n, 0);
	ck_assert_uint_eq(df->npip_args, 1);
	ck_assert_str_eq(df->pip_args[0].text, "ob==1");
	ck_assert_uint_eq(df->pip_args[0].col, 25);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* CRLF line ends and a UTF-8 byte order mark change nothing. */
START_TEST(crlf_bom)
{
	static const char text[] = "\xef\xbb\xbf# escape=`\r\n"
				   "FROM python:latest\r\n"
				   "RUN pip install `\r\n"
				   "  a==1\r\n";
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = parse(text, &dl);

	eb_dockerfile_check_from(df, "Dockerfile", &dl);
	ck_assert_int_eq(df->escape, '`');
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].rule, "EB301");
	ck_assert_uint_eq(dl.items[0].line, 2);
	ck_assert_uint_eq(dl.items[0].col, 13);
	ck_assert_uint_eq(df->npip_args, 1);
	ck_assert_str_eq(df->pip_args[0].text, "a==1");
	ck_assert_uint_eq(df->pip_args[0].line, 4);
	ck_assert_uint_eq(df->pip_args[0].col, 3);
	eb_dockerfile_free(df);
	eb_diag_list_release(&dl);
}
END_TEST

/* Errors already set are kept; eb_dockerfile_free(NULL) is fine. */
START_TEST(api_edges)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_dockerfile *df = NULL;
	struct eb_error *err = NULL;
	static const char text[] = "FROM python:3.11\nRUN pip install a==1";

	/* no final newline; a length shorter than the string is respected */
	ck_assert_int_eq(eb_dockerfile_parse(&df, "Dockerfile", text, 16, &dl, &err), 0);
	ck_assert_uint_eq(df->nfroms, 1);
	ck_assert_uint_eq(df->npips, 0);
	eb_dockerfile_free(df);
	ck_assert_int_eq(eb_dockerfile_parse(&df, "Dockerfile", text, strlen(text), &dl, NULL), 0);
	ck_assert_uint_eq(df->npip_args, 1);
	ck_assert_uint_eq(dl.n, 0);
	eb_dockerfile_free(df);
	eb_dockerfile_free(NULL);
	eb_diag_list_release(&dl);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dockerfile");
	TCase *tc;

	tc = tcase_create("from");
	tcase_add_test(tc, multi_stage);
	tcase_add_loop_test(tc, from_table, 0, (int)(sizeof(from_cases) / sizeof(from_cases[0])));
	tcase_add_test(tc, from_messages);
	tcase_add_test(tc, build_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("lines");
	tcase_add_test(tc, positions);
	tcase_add_test(tc, escape_directive);
	tcase_add_test(tc, directive_rules);
	tcase_add_test(tc, heredocs);
	tcase_add_test(tc, heredoc_scripts);
	tcase_add_test(tc, command_substitution);
	tcase_add_test(tc, installers);
	tcase_add_test(tc, reqfile_context);
	tcase_add_test(tc, crlf_bom);
	tcase_add_loop_test(tc, bad_table, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, api_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("pip");
	tcase_add_test(tc, exec_form);
	tcase_add_test(tc, brief_examples);
	tcase_add_loop_test(tc, pip_table, 0, (int)(sizeof(pip_cases) / sizeof(pip_cases[0])));
	tcase_add_test(tc, pip_options);
	tcase_add_test(tc, stage_variables);
	tcase_add_test(tc, onbuild_run);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
