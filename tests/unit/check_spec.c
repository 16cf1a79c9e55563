/*
 * check_spec.c - the spec loader: YAML/JSON with positions, and every
 * validation rule, each case naming the rule id and the exact line:col.
 */
#include "config.h"

#include "envspec/spec.h"
#include "util/yamljson.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/diag.h"

static const char *const good_yaml =
	"version: 1\n"
	"name: churn\n"
	"repository: registry.example.com/ml/churn\n"
	"platforms: [linux/amd64, linux/arm64]\n"
	"python: 3.10\n"
	"index: https://pypi.org/simple\n"
	"env: { PYTHONUNBUFFERED: \"1\", SHARED: a }\n"
	"targets:\n"
	"  training:\n"
	"    base: python:3.11-slim-bookworm\n"
	"    requirements: [requirements/train.txt]\n"
	"    files: [{ src: src/, dest: /app/ }]\n"
	"    env: { LEARNING_RATE: 0.001, BATCH_SIZE: 32, SHARED: b }\n"
	"    workdir: /app\n"
	"    entrypoint: [python, -m, churn.train]\n"
	"  inference:\n"
	"    base: python:3.11-slim-bookworm\n"
	"    packages: [\"numpy==1.26.4\"]\n"
	"    user: 1000:1000\n"
	"    platforms: [linux/amd64]\n"
	"    entrypoint: [python, -m, churn.serve]\n";

static struct eb_spec *load(const char *text, struct eb_diag_list *d)
{
	struct eb_spec *spec = NULL;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_spec_load_buffer(&spec, "envbuild.yaml", text, strlen(text), d, &err), 0);
	ck_assert_ptr_null(err);
	return spec;
}

START_TEST(valid_spec_loads)
{
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(good_yaml, &d);
	const struct eb_spec_target *t;

	ck_assert_msg(d.n == 0, "unexpected finding: %s", d.n ? d.items[0].msg : "");
	ck_assert_ptr_nonnull(spec);
	ck_assert_str_eq(spec->name.s, "churn");
	ck_assert_str_eq(spec->python.s, "3.10"); /* not 3.1: the raw text is kept */
	ck_assert_uint_eq(spec->ntargets, 2);
	ck_assert_str_eq(spec->targets[0].name, "training"); /* file order */
	t = eb_spec_target(spec, "training");
	ck_assert_str_eq(t->base.s, "python:3.11-slim-bookworm");
	ck_assert_uint_eq(t->base.pos.line, 10);
	ck_assert_uint_eq(t->base.pos.col, 11);
	ck_assert_uint_eq(t->env.n, 4);
	/* target env overrides spec env by name; numbers keep their text */
	for (size_t i = 0; i < t->env.n; i++) {
		if (strcmp(t->env.v[i].key, "SHARED") == 0)
			ck_assert_str_eq(t->env.v[i].value, "b");
		if (strcmp(t->env.v[i].key, "LEARNING_RATE") == 0)
			ck_assert_str_eq(t->env.v[i].value, "0.001");
		if (strcmp(t->env.v[i].key, "BATCH_SIZE") == 0)
			ck_assert_str_eq(t->env.v[i].value, "32");
	}
	ck_assert_uint_eq(t->platforms.n, 2);
	ck_assert_int_eq(t->has_entrypoint, 1);
	ck_assert_uint_eq(t->entrypoint.n, 3);
	ck_assert_uint_eq(t->nfiles, 1);
	ck_assert_str_eq(t->files[0].dest.s, "/app/");
	t = eb_spec_target(spec, "inference");
	ck_assert_str_eq(t->user.s, "1000:1000");
	ck_assert_uint_eq(t->platforms.n, 1);
	ck_assert_str_eq(t->packages.v[0].s, "numpy==1.26.4");
	/* a quoted value's column is its first character, inside the quotes */
	ck_assert_uint_eq(t->packages.v[0].pos.col, 17);
	ck_assert_str_eq(t->python.s, "3.10"); /* inherited */
	eb_spec_free(spec);
	eb_diag_list_release(&d);
}
END_TEST

START_TEST(json_spec_loads)
{
	const char *json = "{\n"
			   "\t\"version\": 1,\n"
			   "\t\"name\": \"x\",\n"
			   "\t\"targets\": {\"inference\": {\"base\": \"python:3.11\",\n"
			   "\t\t\"bogus\": 1}}\n"
			   "}\n";
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(json, &d);

	ck_assert_ptr_nonnull(spec);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_str_eq(d.items[0].rule, "EB002");
	ck_assert_uint_eq(d.items[0].line, 5);
	ck_assert_uint_eq(d.items[0].col, 3);
	eb_spec_free(spec);
	eb_diag_list_release(&d);
}
END_TEST

/* One invalid spec per row: the first finding must have this rule and
 * position (and, when given, contain this text). */
static const struct bad {
	const char *text;
	const char *rule;
	unsigned line, col;
	const char *contains;
} bad[] = {
	{ "version: 1\nname: x\ntargets: {a: {base: \"python:3\"}\n", "EB001", 4, 1, NULL },
	{ "version: 1\nname: x\n  bad: indent\n", "EB001", 3, 6, NULL },
	{ "version: 1\nname: x\ntarget:\n  a: {base: p:1}\n", "EB002", 3, 1, "did you mean 'targets'" },
	{ "version: 1\nname: x\ntargets:\n  a:\n    base: p:1\n    requirement: [r.txt]\n",
	  "EB002", 6, 5, "did you mean 'requirements'" },
	{ "version: 1\nname: x\ntargets:\n  a:\n    base: p:1\n    files: [{src: a, dst: /a}]\n",
	  "EB002", 6, 22, "did you mean 'dest'" },
	{ "version: 1\nname: [x]\ntargets: {a: {base: p:1}}\n", "EB003", 2, 7, "must be a string" },
	{ "version: \"1\"\nname: x\ntargets: {a: {base: p:1}}\n", "EB003", 1, 10, NULL },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, entrypoint: python app.py}}\n", "EB003", 3,
	  38, "exec form" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, requirements: r.txt}}\n", "EB003", 3, 40,
	  "list of strings" },
	{ "version: 1\nname: x\nname: y\ntargets: {a: {base: p:1}}\n", "EB004", 3, 1, "duplicate key 'name'" },
	{ "version: 1\ntargets: {a: {base: p:1}}\n", "EB005", 1, 1, "missing required key 'name'" },
	{ "version: 1\nname: x\ntargets:\n  a:\n    workdir: /app\n", "EB005", 5, 5,
	  "missing required key 'base'" },
	{ "version: 1\nname: x\ntargets: {}\n", "EB006", 3, 10, "no targets" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, env: {1BAD: x}}}\n", "EB007", 3, 32, "1BAD" },
	{ "version: 1\nname: x\nenv: {\"A-B\": x}\ntargets: {a: {base: p:1}}\n", "EB007", 3, 7, "A-B" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: app/}]}}\n", "EB008",
	  3, 49, "absolute" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, workdir: app}}\n", "EB008", 3, 35, NULL },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: ../secret, dest: /a}]}}\n",
	  "EB009", 3, 40, "inside the project" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: /etc/passwd, dest: /a}]}}\n",
	  "EB009", 3, 40, NULL },
	{ "version: 1\nname: x\nplatforms: [linux/amd64, windows/amd64]\ntargets: {a: {base: p:1}}\n",
	  "EB010", 3, 26, "windows/amd64" },
	{ "version: 2\nname: x\ntargets: {a: {base: p:1}}\n", "EB011", 1, 10, "version 2" },
	{ "version: 1\nname: My_Project\ntargets: {a: {base: p:1}}\n", "EB011", 2, 7, NULL },
	{ "version: 1\nname: x\npython: three\ntargets: {a: {base: p:1}}\n", "EB011", 3, 9, NULL },
	{ "version: 1\nname: x\nindex: ftp://x\ntargets: {a: {base: p:1}}\n", "EB011", 3, 8, NULL },
	{ "- a\n- b\n", "EB003", 1, 1, "must be a mapping" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, env: {A: null}}}\n", "EB003", 3, 35, NULL },
	{ "version: 1\nname: x\ntargets: {a: *nope}\n", "EB001", 3, 14, "alias" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /a, chown: App}]}}\n",
	  "EB011", 3, 60, "invalid chown 'App'" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /a, chown: \"1:X\"}]}}\n",
	  "EB011", 3, 61, "USER:GROUP" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, accounts: {users: [{name: 9x, uid: 1}]}}}\n",
	  "EB020", 3, 52, "invalid name '9x'" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, accounts: {groups: [{name: g, gid: -1}]}}}\n",
	  "EB020", 3, 61, "'gid' must be a number" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, dirs: [{path: models}]}}\n",
	  "EB020", 3, 40, "absolute path" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, dirs: [{path: /m, mode: \"0999\"}]}}\n",
	  "EB020", 3, 50, "invalid mode" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, expose: [\"80/xtp\"]}}\n",
	  "EB011", 3, 35, "invalid port '80/xtp'" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, stopsignal: kill}}\n",
	  "EB011", 3, 38, "invalid stopsignal 'kill'" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, user: \"Root\"}}\n",
	  "EB020", 3, 33, "invalid user" },
	{ "version: 1\nname: x\naccounts: {users: [{name: a, uid: 5}]}\n"
	  "targets: {a: {base: p:1, accounts: {users: [{name: b, uid: 5}]}}}\n",
	  "EB021", 4, 45, "uid '5' is given twice" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /a, chmod: \"0948\"}]}}\n",
	  "EB011", 3, 61, "invalid chmod '0948'" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /a, chmod: rw}]}}\n",
	  "EB011", 3, 60, "octal" },
	/* paths in the image: no control characters, no whiteouts, no NUL
	 * cutting a value short */
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: \"/a\\nb\"}]}}\n",
	  "EB008", 3, 50, "control character" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /etc/.wh..wh..opq}]}}\n",
	  "EB008", 3, 49, "whiteout" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /x/.wh.passwd}]}}\n",
	  "EB008", 3, 49, "whiteout" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: /x/"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaa}]}}\n",
	  "EB008", 3, 49, "too long" },
	{ "version: 1\nname: x\ntargets: {a: {base: p:1, files: [{src: a, dest: \"/etc/x\\0.sh\"}]}}\n",
	  "EB001", 3, 49, "NUL" },
};

/* env values: references the spec does not set before are warnings (the
 * base may still set them), syntax errors are errors */
START_TEST(env_references)
{
	static const char text[] =
		"version: 1\nname: x\nenv: {A: /a}\ntargets:\n  a:\n    base: p:1\n    env:\n"
		"      PATH: /opt/bin:$PATH\n"
		"      B: ${A}/b\n"
		"      C: $UNSET_ONE\n"
		"      D: ${MAYBE:-x}\n"
		"      E: \"${A\"\n"
		"      F: \\$LITERAL\n";
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(text, &d);
	size_t nwarn = 0, nerr = 0;

	for (size_t i = 0; i < d.n; i++) {
		if (strcmp(d.items[i].rule, "EB017") == 0) {
			nwarn++;
			ck_assert_int_eq(d.items[i].severity, EB_SEV_WARNING);
			ck_assert_uint_eq(d.items[i].line, 10);
			ck_assert_uint_eq(d.items[i].col, 7);
			ck_assert_ptr_nonnull(strstr(d.items[i].msg, "C refers to $UNSET_ONE"));
		} else if (strcmp(d.items[i].rule, "EB011") == 0) {
			nerr++;
			ck_assert_uint_eq(d.items[i].line, 12);
			ck_assert_ptr_nonnull(strstr(d.items[i].msg, "not closed"));
		} else {
			ck_abort_msg("unexpected finding %s: %s", d.items[i].rule, d.items[i].msg);
		}
	}
	ck_assert_uint_eq(nwarn, 1);
	ck_assert_uint_eq(nerr, 1);
	eb_spec_free(spec);
	eb_diag_list_release(&d);
}
END_TEST

/* chown/chmod of a files entry: COPY --chown/--chmod */
START_TEST(files_chown_chmod)
{
	static const char text[] =
		"version: 1\nname: x\ntargets:\n  a:\n    base: p:1\n    files:\n"
		"      - {src: a, dest: /a, chown: \"1000:1001\", chmod: \"0640\"}\n"
		"      - {src: b, dest: /b, chown: 33, chmod: 750}\n"
		"      - {src: c, dest: /c}\n";
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(text, &d);
	const struct eb_spec_target *t = eb_spec_target(spec, "a");

	ck_assert_msg(d.n == 0, "unexpected finding: %s", d.n ? d.items[0].msg : "");
	ck_assert_uint_eq(t->nfiles, 3);
	ck_assert_str_eq(t->files[0].chown.s, "1000:1001");
	ck_assert_uint_eq(t->files[0].uid, 1000);
	ck_assert_uint_eq(t->files[0].gid, 1001);
	ck_assert_uint_eq(t->files[0].mode, 0640);
	ck_assert_uint_eq(t->files[1].uid, 33); /* a UID alone is the GID too */
	ck_assert_uint_eq(t->files[1].gid, 33);
	ck_assert_uint_eq(t->files[1].mode, 0750);
	ck_assert_ptr_null(t->files[2].chown.s);
	ck_assert_uint_eq(t->files[2].mode, 0);
	eb_spec_free(spec);
	eb_diag_list_release(&d);
}
END_TEST

/* build_in (EB257): another target, no cycle, every platform of the
 * target; a good one is kept with its position */
START_TEST(build_in_rules)
{
	static const char good[] =
		"version: 1\nname: x\ntargets:\n  train:\n    base: p:1\n"
		"  infer:\n    base: p:1\n    build_in: train\n";
	static const struct { const char *text; unsigned line, col; const char *msg; } cases[] = {
		{ "version: 1\nname: x\ntargets:\n  a:\n    base: p:1\n    build_in: a\n", 6, 15,
		  "target 'a' cannot be built in itself" },
		{ "version: 1\nname: x\ntargets:\n  a:\n    base: p:1\n    build_in: b\n", 6, 15,
		  "build_in of target 'a' names 'b', which is not a target of the spec" },
		{ "version: 1\nname: x\ntargets:\n  a:\n    base: p:1\n    build_in: b\n"
		  "  b:\n    base: p:1\n    build_in: c\n  c:\n    base: p:1\n    build_in: a\n",
		  6, 15, "build_in of target 'a' is a cycle" },
		{ "version: 1\nname: x\nplatforms: [linux/amd64, linux/arm64]\ntargets:\n  a:\n"
		  "    base: p:1\n    build_in: b\n  b:\n    base: p:1\n    platforms: [linux/amd64]\n",
		  7, 15, "target 'a' is built for linux/arm64, and its builder 'b' is not" },
	};
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(good, &d);
	const struct eb_spec_target *t = eb_spec_target(spec, "infer");

	ck_assert_msg(d.n == 0, "unexpected finding: %s", d.n ? d.items[0].msg : "");
	ck_assert_str_eq(t->build_in.s, "train");
	ck_assert_uint_eq(t->build_in.pos.line, 8);
	ck_assert_ptr_null(eb_spec_target(spec, "train")->build_in.s);
	eb_spec_free(spec);
	eb_diag_list_release(&d);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eb_diag_list e = EB_DIAG_LIST_INIT;
		spec = load(cases[i].text, &e);
		ck_assert_msg(e.n >= 1, "case %zu: no finding", i);
		ck_assert_str_eq(e.items[0].rule, "EB257");
		ck_assert_uint_eq(e.items[0].line, cases[i].line);
		ck_assert_uint_eq(e.items[0].col, cases[i].col);
		ck_assert_msg(strncmp(e.items[0].msg, cases[i].msg, strlen(cases[i].msg)) == 0,
			      "case %zu: %s", i, e.items[0].msg);
		eb_spec_free(spec);
		eb_diag_list_release(&e);
	}
}
END_TEST

/* accounts and dirs: the spec's then the target's, names kept for the build */
START_TEST(accounts_dirs)
{
	static const char text[] =
		"version: 1\nname: x\n"
		"accounts:\n  groups: [{name: app, gid: 1000}]\n"
		"dirs: [{path: /models/, owner: \"app:0\", mode: \"2775\"}]\n"
		"targets:\n  a:\n    base: p:1\n    user: \"app:app\"\n"
		"    accounts:\n      users: [{name: app, uid: 1000, gid: 1000, home: /srv/app}, {name: b, uid: 7}]\n"
		"    dirs: [{path: /cache, mode: 1777}]\n"
		"    files: [{src: a, dest: /a, chown: app}]\n"
		"    expose: [8000, \"53/udp\"]\n    stopsignal: SIGINT\n";
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(text, &d);
	const struct eb_spec_target *t = eb_spec_target(spec, "a");

	ck_assert_msg(d.n == 0, "unexpected finding: %s", d.n ? d.items[0].msg : "");
	ck_assert_uint_eq(t->accounts.ngroups, 1);
	ck_assert_str_eq(t->accounts.groups[0].name, "app");
	ck_assert_uint_eq(t->accounts.nusers, 2);
	ck_assert_str_eq(t->accounts.users[0].home, "/srv/app");
	ck_assert_int_eq(t->accounts.users[0].has_gid, 1);
	ck_assert_int_eq(t->accounts.users[1].has_gid, 0);
	ck_assert_ptr_null(t->accounts.users[1].home);
	ck_assert_uint_eq(t->accounts.ndirs, 2);
	ck_assert_str_eq(t->accounts.dirs[0].path, "/models");
	ck_assert_str_eq(t->accounts.dirs[0].owner, "app:0");
	ck_assert_uint_eq(t->accounts.dirs[0].mode, 02775);
	ck_assert_uint_eq(t->accounts.dirs[1].mode, 01777);
	ck_assert_int_eq(t->files[0].chown_named, 1);
	ck_assert_str_eq(t->user.s, "app:app");
	ck_assert_uint_eq(t->run.nexpose, 2);
	ck_assert_str_eq(t->run.expose[0], "8000/tcp");
	ck_assert_str_eq(t->run.expose[1], "53/udp");
	ck_assert_str_eq(t->run.stopsignal, "SIGINT");
	eb_spec_free(spec);
	eb_diag_list_release(&d);
}
END_TEST

START_TEST(invalid_spec)
{
	const struct bad *b = &bad[_i];
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = load(b->text, &d);

	const struct eb_diag *f = NULL;

	ck_assert_msg(d.n > 0, "case %d: no finding", _i);
	eb_diag_list_sort(&d);
	for (size_t i = 0; i < d.n && !f; i++)
		if (strcmp(d.items[i].rule, b->rule) == 0)
			f = &d.items[i];
	ck_assert_msg(f != NULL, "case %d: no %s finding; first is %s at %u:%u (%s)", _i, b->rule,
		      d.items[0].rule, d.items[0].line, d.items[0].col, d.items[0].msg);
	ck_assert_msg(f->line == b->line && f->col == b->col,
		      "case %d: want %s at %u:%u, got %u:%u (%s)", _i, b->rule, b->line, b->col,
		      f->line, f->col, f->msg);
	if (b->contains) {
		const char *where = f->hint && strstr(f->hint, b->contains) ? f->hint : f->msg;
		ck_assert_msg(strstr(where, b->contains), "case %d: '%s' not in '%s' / '%s'", _i,
			      b->contains, f->msg, f->hint ? f->hint : "");
	}
	ck_assert_str_eq(f->file, "envbuild.yaml");
	eb_spec_free(spec);
	eb_diag_list_release(&d);
}
END_TEST

START_TEST(yaml_positions_and_types)
{
	const char *text = "a: 1\nb: \"1\"\nc: true\nd: ~\ne: [x, 'y', 0x1F]\nf: &anc {k: v}\ng: *anc\n";
	struct eb_yj_doc *doc = NULL;
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	json_t *root, *e;
	const struct eb_yj_pos *p;

	ck_assert_int_eq(eb_yj_load(&doc, "t.yaml", text, strlen(text), &d, &err), 0);
	root = eb_yj_root(doc);
	ck_assert(json_is_integer(json_object_get(root, "a")));
	ck_assert(json_is_string(json_object_get(root, "b")));
	ck_assert(json_is_true(json_object_get(root, "c")));
	ck_assert(json_is_null(json_object_get(root, "d")));
	e = json_object_get(root, "e");
	ck_assert_int_eq(json_integer_value(json_array_get(e, 2)), 31);
	ck_assert_str_eq(json_string_value(json_array_get(e, 1)), "y");
	p = eb_yj_value_pos(doc, e, NULL, 1);
	ck_assert_uint_eq(p->line, 5);
	ck_assert_uint_eq(p->col, 8);
	ck_assert_int_eq(p->plain, 0);
	p = eb_yj_key_pos(doc, root, "c");
	ck_assert_uint_eq(p->line, 3);
	ck_assert_uint_eq(p->col, 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "g"), "k")), "v");
	eb_yj_free(doc);
	ck_assert_uint_eq(d.n, 0);
	/* deep nesting is refused, not a stack overflow */
	{
		char deep[2000];
		memset(deep, '[', 1000);
		deep[1000] = '\0';
		ck_assert_int_lt(eb_yj_load(&doc, "t.yaml", deep, 1000, &d, &err), 0);
		ck_assert_ptr_nonnull(strstr(err->msg, "nested"));
		eb_error_clear(&err);
	}
	/* two documents are refused */
	ck_assert_int_lt(eb_yj_load(&doc, "t.yaml", "a: 1\n---\nb: 2\n", 14, &d, &err), 0);
	eb_error_clear(&err);
	eb_diag_list_release(&d);
}
END_TEST

/* An alias bomb (each level nine times the one before: 9^9 nodes from a few
 * hundred bytes) is refused at the alias that crosses the cap, with its
 * position, instead of being expanded until the OOM killer comes. */
START_TEST(alias_bomb_refused)
{
	struct eb_yj_doc *doc = NULL;
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;
	const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
			   "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			   "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			   "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			   "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
			   "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
			   "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
	ck_assert_int_lt(eb_yj_load(&doc, "t.yaml", bomb, strlen(bomb), &d, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->msg, "aliases expand"));
	ck_assert_uint_eq(err->line, 7);
	eb_error_clear(&err);
	eb_diag_list_release(&d);
}
END_TEST

/* A spec from a pull request with a 300k-key env mapping: every key's
 * position is looked up, so lookups must be hashed (it took minutes with a
 * linear scan). */
START_TEST(huge_env_is_fast)
{
	struct eb_buf b;
	struct eb_diag_list d = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	struct eb_error *err = NULL;
	const size_t n = 300000;

	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_buf_addf(&b, "version: 1\nname: x\nenv:\n"), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(eb_buf_addf(&b, "  K%zu: v\n", i), 0);
	ck_assert_int_eq(eb_buf_addf(&b, "targets:\n  a: {base: scratch, env: {K7: w}}\n"), 0);
	ck_assert_int_eq(eb_spec_load_buffer(&spec, "envbuild.yaml", b.ptr, b.len, &d, &err), 0);
	ck_assert_ptr_nonnull(spec);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(spec->targets[0].env.n, n);
	ck_assert_str_eq(spec->targets[0].env.v[7].value, "w");
	ck_assert_uint_eq(spec->targets[0].env.v[8].pos.line, 4 + 8);
	eb_spec_free(spec);
	eb_buf_release(&b);
	eb_diag_list_release(&d);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("spec");
	TCase *tc = tcase_create("spec");

	tcase_add_test(tc, valid_spec_loads);
	tcase_add_test(tc, files_chown_chmod);
	tcase_add_test(tc, build_in_rules);
	tcase_add_test(tc, accounts_dirs);
	tcase_add_test(tc, env_references);
	tcase_add_test(tc, json_spec_loads);
	tcase_add_loop_test(tc, invalid_spec, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, yaml_positions_and_types);
	suite_add_tcase(s, tc);
	tc = tcase_create("bounds");
	tcase_set_timeout(tc, 30); /* quadratic lookups took minutes */
	tcase_add_test(tc, huge_env_is_fast);
	tcase_add_test(tc, alias_bomb_refused);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
