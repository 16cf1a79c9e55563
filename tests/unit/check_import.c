/*
 * check_import.c - `envbuild import`'s Dockerfile reading: instructions
 * with the position of every argument byte over continuations, comments
 * and the escape directive, heredoc bodies skipped, shell words; and one
 * whole import into a temporary directory.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stage/dfinstr.h"
#include "stage/import.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "testutil.h"

START_TEST(instructions)
{
	static const char text[] =
		"\xEF\xBB\xBF# escape=`\n"
		"FROM scratch\n"
		"RUN a && `\n"
		"# a comment inside\n"
		"\n"
		"    b\n"
		"run <<EOF\n"
		"FROM not-an-instruction\n"
		"EOF\n"
		"USER app\r\n";
	struct eb_dfinstrs l;
	const struct eb_dfinstr *r;
	const char *b;

	ck_assert_int_eq(eb_dfinstr_parse(&l, text, sizeof(text) - 1), 0);
	ck_assert_int_eq(l.escape, '`');
	ck_assert_uint_eq(l.n, 4);
	ck_assert_str_eq(l.v[0].kw, "FROM");
	ck_assert_uint_eq(l.v[0].stage, 0);
	r = &l.v[1];
	ck_assert_str_eq(r->kw, "RUN");
	ck_assert_uint_eq(r->line, 3);
	b = strchr(r->args, 'b');
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(r->lines[b - r->args], 6); /* after the comment and empty lines */
	ck_assert_uint_eq(r->cols[b - r->args], 5);
	ck_assert_str_eq(l.v[2].kw, "RUN"); /* lower case read as upper */
	ck_assert_int_eq(l.v[2].heredoc, 1);
	ck_assert_str_eq(l.v[3].kw, "USER"); /* the heredoc's FROM is its body */
	ck_assert_str_eq(l.v[3].args, "app");
	ck_assert_uint_eq(l.v[3].line, 10);
	eb_dfinstr_free(&l);
}
END_TEST

static const char *vars(void *ud, const char *name, size_t len)
{
	(void)ud;
	return len == 1 && name[0] == 'V' ? "1.0" : NULL;
}

START_TEST(words)
{
	struct eb_dfwords w;
	char *e;
	int unknown = 0;

	eb_dfinstr_words("A=b pip install 'x y'==$V \"${V}\"-z ${U:-d}&&echo $W;ls # c", '\\',
			 vars, NULL, &w);
	ck_assert_uint_eq(w.n, 11);
	ck_assert_str_eq(w.v[0].s, "A=b");
	ck_assert_str_eq(w.v[3].s, "x y==1.0");
	ck_assert_int_eq(w.v[3].quoted, 1);
	ck_assert_uint_eq(w.v[3].off, 16);
	ck_assert_str_eq(w.v[4].s, "1.0-z");
	ck_assert_str_eq(w.v[5].s, "d");
	ck_assert_int_eq(w.v[6].op, 1);
	ck_assert_str_eq(w.v[6].s, "&&");
	ck_assert_str_eq(w.v[8].s, "$W");
	ck_assert_int_eq(w.v[8].has_var, 1);
	ck_assert_str_eq(w.v[9].s, ";");
	ck_assert_str_eq(w.v[10].s, "ls");
	eb_dfwords_free(&w);
	e = eb_dfinstr_expand("\"a b\" $V $X", '\\', vars, NULL, &unknown);
	ck_assert_str_eq(e, "a b 1.0 $X");
	ck_assert_int_eq(unknown, 1);
	free(e);
	/* unterminated quotes and a lone '$' end the word, nothing more */
	eb_dfinstr_words("'abc $ ${", '\\', vars, NULL, &w);
	ck_assert_uint_eq(w.n, 1);
	eb_dfwords_free(&w);
}
END_TEST

START_TEST(whole_import)
{
	char dir[] = "/tmp/check_import.XXXXXX";
	struct eb_import_options o = { 0 };
	struct eb_import_result res;
	struct eb_error *err = NULL;
	struct eb_buf b;
	char *df, *spec;
	static const char dockerfile[] =
		"FROM debian:12 AS svc\n"
		"RUN apt-get update && apt-get install -y --no-install-recommends curl=7.88 \\\n"
		"    && rm -rf /var/lib/apt/lists/* && make all\n"
		"RUN groupadd -g 1001 g && useradd -m -u 1001 -g g u\n"
		"EXPOSE 80\n";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	df = eb_path_join(dir, "Dockerfile");
	spec = eb_path_join(dir, "envbuild.yaml");
	ck_assert_int_eq(eb_fs_write_atomic(df, dockerfile, sizeof(dockerfile) - 1, 0644, &err), 0);
	o.dockerfile = df;
	ck_assert_int_eq(eb_import_run(&o, &res, &err), 0);
	ck_assert_uint_eq(res.nleft, 1);
	ck_assert_uint_eq(res.left[0].line, 3);
	ck_assert_uint_eq(res.left[0].col, 39);
	ck_assert_str_eq(res.left[0].msg, "not converted: RUN make all");
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_fs_read_file(&b, spec, 1 << 20, &err), 0);
	ck_assert_ptr_nonnull(strstr(b.ptr, "  svc:\n    base: \"debian:12\"\n"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "      - \"curl=7.88\"\n"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "{ name: u, uid: 1001, gid: 1001 }"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "expose: [\"80/tcp\"]"));
	eb_buf_release(&b);
	eb_import_result_release(&res);
	/* a second run does not overwrite */
	ck_assert_int_lt(eb_import_run(&o, &res, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->msg, "not overwritten"));
	eb_error_free(err);
	eb_import_result_release(&res);
	unlink(spec);
	unlink(df);
	rmdir(dir);
	free(df);
	free(spec);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("import");
	TCase *tc = tcase_create("import");

	tcase_add_test(tc, instructions);
	tcase_add_test(tc, words);
	tcase_add_test(tc, whole_import);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
