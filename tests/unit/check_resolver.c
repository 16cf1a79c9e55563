/*
 * check_resolver.c - the PubGrub resolver against in-memory indexes:
 * newest-first choice, diamonds, backtracking that undoes an early
 * decision, explanations of unsatisfiable sets, extras, markers per
 * Python version, yanked files, requires-python, platform-only wheels,
 * pre-releases, preferences and joint resolution with parity.
 */
#include "config.h"

#include "testutil.h"

#include "python/resolver.h"
#include "util/error.h"

/* One release of the in-memory index.  deps are Requires-Dist lines
 * separated by '|'; nowheel is a bit mask of environments without a
 * usable file. */
struct mem_rel {
	const char *name, *version, *deps, *requires_python;
	int yanked;
	unsigned nowheel;
};

struct mem_index {
	const struct mem_rel *rels;
	size_t n;
	int calls; /* dependencies() calls */
	int prefetched; /* names passed to prefetch() */
};

static int mem_versions(void *ctx, const char *name, struct eb_resolver_versions *out,
			struct eb_error **err)
{
	struct mem_index *ix = ctx;
	int found = 0;

	for (size_t i = 0; i < ix->n; i++) {
		if (strcmp(ix->rels[i].name, name) == 0) {
			eb_resolver_versions_add(out, ix->rels[i].version, ix->rels[i].yanked);
			found = 1;
		}
	}
	if (!found)
		return eb_error_set(err, EB_ENOTFOUND, "no project '%s'", name);
	return 0;
}

static int mem_deps(void *ctx, size_t env, const char *name, const char *version,
		    struct eb_resolver_deps *out, struct eb_error **err)
{
	struct mem_index *ix = ctx;

	ix->calls++;
	for (size_t i = 0; i < ix->n; i++) {
		const struct mem_rel *m = &ix->rels[i];
		const char *s;
		if (strcmp(m->name, name) != 0 || strcmp(m->version, version) != 0)
			continue;
		if (m->nowheel & (1u << env)) {
			eb_resolver_deps_unavailable(out, "has no wheel for env%zu", env);
			return 0;
		}
		if (m->requires_python)
			out->requires_python = strdup(m->requires_python);
		for (s = m->deps; s && *s;) {
			const char *e = strchr(s, '|');
			size_t len = e ? (size_t)(e - s) : strlen(s);
			char *one = strndup(s, len);
			eb_resolver_deps_add(out, one);
			free(one);
			s += len + (e ? 1 : 0);
		}
		return 0;
	}
	return eb_error_set(err, EB_ENOTFOUND, "no %s %s", name, version);
}

static void mem_prefetch(void *ctx, size_t env, const char *const *names, size_t n)
{
	struct mem_index *ix = ctx;
	(void)env, (void)names;
	ix->prefetched += (int)n;
}

struct fixture {
	struct mem_index ix;
	struct eb_resolver_env envs[4];
	struct eb_resolver *r;
	struct eb_error *err;
	int rc;
};

static void env_init(struct eb_resolver_env *e, const char *label, const char *py,
		     const char *pyfull, const char *machine)
{
	memset(e, 0, sizeof(*e));
	eb_marker_env_init(&e->markers, py, machine);
	e->label = label;
	e->python_full = pyfull;
}

/* A resolver over rels for nenvs environments: env0 = train (3.12 x86_64),
 * env1 = infer (3.10 aarch64). */
static void setup(struct fixture *f, const struct mem_rel *rels, size_t n, size_t nenvs)
{
	struct eb_resolver_provider p = { mem_versions, mem_deps, mem_prefetch, NULL };

	memset(f, 0, sizeof(*f));
	f->ix.rels = rels;
	f->ix.n = n;
	env_init(&f->envs[0], "train", "3.12", "3.12.1", "x86_64");
	env_init(&f->envs[1], "infer", "3.10", "3.10.13", "aarch64");
	p.ctx = &f->ix;
	f->r = eb_resolver_new(&p, f->envs, nenvs);
}

static void req(struct fixture *f, size_t env, const char *s)
{
	struct eb_error *err = NULL;
	int rc = eb_resolver_require(f->r, env, s, env ? "requirements-infer.in" : "requirements-train.in",
				     &err);
	ck_assert_msg(rc == 0, "require %s: %s", s, err ? err->msg : "?");
}

static int run(struct fixture *f)
{
	f->rc = eb_resolver_run(f->r, &f->err);
	return f->rc;
}

static void run_ok(struct fixture *f)
{
	run(f);
	ck_assert_msg(f->rc == 0, "resolve failed: %s\n%s", f->err ? f->err->msg : "?",
		      eb_resolver_explanation(f->r) ? eb_resolver_explanation(f->r) : "");
}

static void teardown(struct fixture *f)
{
	eb_resolver_free(f->r);
	eb_error_free(f->err);
}

/* "a==1.0 b==2.0" for environment env. */
static char *solution_str(struct fixture *f, size_t env)
{
	size_t n;
	const struct eb_resolver_pin *p = eb_resolver_solution(f->r, env, &n);
	char buf[4096] = "";

	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, p[i].name);
		strcat(buf, "==");
		strcat(buf, p[i].version);
	}
	return strdup(buf);
}

static void expect(struct fixture *f, size_t env, const char *want)
{
	char *got = solution_str(f, env);
	ck_assert_msg(strcmp(got, want) == 0, "env %zu: got '%s', want '%s'", env, got, want);
	free(got);
}

static void expect_explained(struct fixture *f, const char *needle)
{
	const char *ex = eb_resolver_explanation(f->r);

	ck_assert_int_eq(f->rc, -EB_EFAIL);
	ck_assert_ptr_nonnull(ex);
	ck_assert_msg(strstr(ex, needle) != NULL, "explanation lacks '%s':\n%s", needle, ex);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- basics ------------------------------------------------------------- */

static const struct mem_rel basic[] = {
	{ "a", "1.0", "b>=1", NULL, 0, 0 },
	{ "a", "2.0", "b>=2", NULL, 0, 0 },
	{ "a", "1.5", "b>=1", NULL, 0, 0 },
	{ "b", "1.0", NULL, NULL, 0, 0 },
	{ "b", "2.0", NULL, NULL, 0, 0 },
	{ "b", "3.0rc1", NULL, NULL, 0, 0 },
};

START_TEST(test_newest)
{
	struct fixture f;
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "a");
	run_ok(&f);
	expect(&f, 0, "a==2.0 b==2.0");
	teardown(&f);
}
END_TEST

START_TEST(test_specifiers_and_ne)
{
	struct fixture f;
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "A!=2.0");
	run_ok(&f);
	expect(&f, 0, "a==1.5 b==2.0");
	teardown(&f);
}
END_TEST

START_TEST(test_prerelease_only_when_asked)
{
	struct fixture f;
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "b>=2.0rc1");
	run_ok(&f);
	expect(&f, 0, "b==3.0rc1");
	teardown(&f);

	setup(&f, basic, N(basic), 1);
	req(&f, 0, "b");
	eb_resolver_allow_prereleases(f.r, 1);
	run_ok(&f);
	expect(&f, 0, "b==3.0rc1");
	teardown(&f);

	/* Nothing else fits: pip takes the pre-release. */
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "b>2.0");
	run_ok(&f);
	expect(&f, 0, "b==3.0rc1");
	teardown(&f);
}
END_TEST

START_TEST(test_prefer_existing_pin)
{
	struct fixture f;
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "a");
	eb_resolver_prefer(f.r, "a", "1.5");
	eb_resolver_prefer(f.r, "B", "1.0");
	run_ok(&f);
	expect(&f, 0, "a==1.5 b==1.0");
	teardown(&f);

	/* A preference that no longer fits is dropped. */
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "a>=2");
	eb_resolver_prefer(f.r, "a", "1.5");
	eb_resolver_prefer(f.r, "b", "1.0");
	run_ok(&f);
	expect(&f, 0, "a==2.0 b==2.0");
	teardown(&f);
}
END_TEST

START_TEST(test_constraints)
{
	struct fixture f;
	struct eb_error *err = NULL;

	/* A constraint limits what is needed... */
	setup(&f, basic, N(basic), 1);
	req(&f, 0, "a");
	ck_assert_int_eq(eb_resolver_constrain(f.r, 0, "b<2", "constraints.txt", &err), 0);
	/* ...and installs nothing by itself. */
	ck_assert_int_eq(eb_resolver_constrain(f.r, 0, "shared==1.0", "constraints.txt", &err), 0);
	ck_assert_int_eq(eb_resolver_constrain(f.r, 0, "nosuch<1", "constraints.txt", &err), 0);
	run_ok(&f);
	expect(&f, 0, "a==1.5 b==1.0");
	teardown(&f);

	setup(&f, basic, N(basic), 1);
	req(&f, 0, "b>=2");
	ck_assert_int_eq(eb_resolver_constrain(f.r, 0, "b<2", "constraints.txt", &err), 0);
	run(&f);
	expect_explained(&f, "constraints.txt constrains b<2");
	teardown(&f);
}
END_TEST

/* --- diamonds and backtracking --------------------------------------- */

static const struct mem_rel diamond[] = {
	{ "top", "1.0", "left|right", NULL, 0, 0 },
	{ "left", "1.0", "shared>=1,<3", NULL, 0, 0 },
	{ "right", "1.0", "shared>=2", NULL, 0, 0 },
	{ "shared", "1.0", NULL, NULL, 0, 0 },
	{ "shared", "2.0", NULL, NULL, 0, 0 },
	{ "shared", "3.0", NULL, NULL, 0, 0 },
};

START_TEST(test_diamond)
{
	struct fixture f;
	size_t n;
	const struct eb_resolver_pin *p;

	setup(&f, diamond, N(diamond), 1);
	req(&f, 0, "top");
	run_ok(&f);
	expect(&f, 0, "left==1.0 right==1.0 shared==2.0 top==1.0");
	ck_assert_int_eq(f.ix.prefetched, 4); /* each project announced once */
	p = eb_resolver_solution(f.r, 0, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(p[2].name, "shared");
	ck_assert_uint_eq(p[2].nvia, 2);
	ck_assert_str_eq(p[2].via[0], "left");
	ck_assert_str_eq(p[2].via[1], "right");
	ck_assert_uint_eq(p[3].nvia, 1);
	ck_assert_str_eq(p[3].via[0], "-r requirements-train.in");
	teardown(&f);
}
END_TEST

/* pubgrub's "conflict resolution" example: foo 2.0 must be given up after
 * bar is chosen. */
static const struct mem_rel backjump[] = {
	{ "foo", "1.0", NULL, NULL, 0, 0 },
	{ "foo", "2.0", "bar>=1,<2", NULL, 0, 0 },
	{ "bar", "1.0", "foo<2", NULL, 0, 0 },
};

START_TEST(test_backtrack_conflict_resolution)
{
	struct fixture f;
	struct eb_resolver_stats st;

	setup(&f, backjump, N(backjump), 1);
	req(&f, 0, "foo>=1.0");
	run_ok(&f);
	expect(&f, 0, "foo==1.0");
	eb_resolver_stats(f.r, &st);
	ck_assert_uint_ge(st.conflicts, 1);
	teardown(&f);
}
END_TEST

/* The newest a pins c to a version b cannot use; the early choice of a
 * must be undone two levels up. */
static const struct mem_rel undo[] = {
	{ "a", "1.0", "c>=1", NULL, 0, 0 },
	{ "a", "2.0", "c<2", NULL, 0, 0 },
	{ "a", "3.0", "c<2|x", NULL, 0, 0 },
	{ "b", "1.0", "d", NULL, 0, 0 },
	{ "d", "1.0", "c>=2", NULL, 0, 0 },
	{ "c", "1.0", NULL, NULL, 0, 0 },
	{ "c", "2.0", NULL, NULL, 0, 0 },
	{ "x", "1.0", NULL, NULL, 0, 0 },
	{ "x", "2.0", NULL, NULL, 0, 0 },
	{ "selfish", "1.0", "selfish>=1", NULL, 0, 0 },
	{ "selfish", "2.0", "selfish<2", NULL, 0, 0 },
};

START_TEST(test_backtrack_undo_early_choice)
{
	struct fixture f;
	setup(&f, undo, N(undo), 1);
	req(&f, 0, "a");
	req(&f, 0, "b");
	run_ok(&f);
	expect(&f, 0, "a==1.0 b==1.0 c==2.0 d==1.0");
	teardown(&f);

	/* A release that needs another release of itself cannot be used. */
	setup(&f, undo, N(undo), 1);
	req(&f, 0, "selfish");
	run_ok(&f);
	expect(&f, 0, "selfish==1.0");
	teardown(&f);
}
END_TEST

/* --- explanations ------------------------------------------------------- */

static const struct mem_rel conflict[] = {
	{ "pandas", "2.2.1", "numpy>=1.26", NULL, 0, 0 },
	{ "pandas", "2.1.0", "numpy>=1.25", NULL, 0, 0 },
	{ "numpy", "1.24.4", NULL, NULL, 0, 0 },
	{ "numpy", "1.25.0", NULL, NULL, 0, 0 },
	{ "numpy", "1.26.4", NULL, NULL, 0, 0 },
};

START_TEST(test_unsatisfiable_explained)
{
	struct fixture f;
	setup(&f, conflict, N(conflict), 1);
	req(&f, 0, "pandas");
	req(&f, 0, "numpy==1.24.4");
	run(&f);
	ck_assert_ptr_nonnull(f.err);
	ck_assert_str_eq(f.err->msg, "no solution: the requirements conflict");
	expect_explained(&f, "pandas==2.1.0 depends on numpy>=1.25");
	expect_explained(&f, "pandas==2.2.1 depends on numpy>=1.26");
	expect_explained(&f, "requirements-train.in requires numpy==1.24.4");
	expect_explained(&f, "the requirements are unsatisfiable.");
	ck_assert_str_eq(eb_resolver_explanation(f.r),
			 "Because pandas==2.2.1 depends on numpy>=1.26 and pandas==2.1.0 depends on "
			 "numpy>=1.25, pandas requires numpy>=1.25.0.\n"
			 "So, because requirements-train.in requires pandas and requirements-train.in "
			 "requires numpy==1.24.4, the requirements are unsatisfiable.\n");
	teardown(&f);
}
END_TEST

START_TEST(test_missing_project_explained)
{
	struct fixture f;
	setup(&f, conflict, N(conflict), 1);
	req(&f, 0, "nosuchthing>=1");
	run(&f);
	ck_assert_str_eq(eb_resolver_explanation(f.r),
			 "Because requirements-train.in requires nosuchthing>=1, which no index has, "
			 "the requirements are unsatisfiable.\n");
	teardown(&f);

	setup(&f, conflict, N(conflict), 1);
	req(&f, 0, "numpy>=2");
	run(&f);
	expect_explained(&f, "requires numpy>=2, which matches no version");
	teardown(&f);
}
END_TEST

/* --- extras and markers --------------------------------------------------- */

static const struct mem_rel extras[] = {
	{ "req", "2.31", "idna|socks>=1; extra == \"SOCKS\"|chardet; extra == 'cd'", NULL, 0, 0 },
	{ "idna", "3.6", NULL, NULL, 0, 0 },
	{ "socks", "1.7", NULL, NULL, 0, 0 },
	{ "chardet", "5.0", NULL, NULL, 0, 0 },
	{ "app", "1.0", "req[socks]>=2", NULL, 0, 0 },
	{ "tool", "1.0", "tomli>=1; python_version < \"3.11\"|typing-extensions; python_version >= '3.12'", NULL, 0, 0 },
	{ "tomli", "2.0.1", NULL, NULL, 0, 0 },
	{ "typing-extensions", "4.9.0", NULL, NULL, 0, 0 },
};

START_TEST(test_extras)
{
	struct fixture f;
	size_t n;
	const struct eb_resolver_pin *p;

	setup(&f, extras, N(extras), 1);
	req(&f, 0, "app");
	run_ok(&f);
	expect(&f, 0, "app==1.0 idna==3.6 req==2.31 socks==1.7");
	p = eb_resolver_solution(f.r, 0, &n);
	ck_assert_uint_eq(p[2].nextras, 1);
	ck_assert_str_eq(p[2].extras[0], "socks");
	ck_assert_str_eq(p[3].via[0], "req");
	teardown(&f);

	setup(&f, extras, N(extras), 1);
	req(&f, 0, "req[cd,socks]");
	run_ok(&f);
	expect(&f, 0, "chardet==5.0 idna==3.6 req==2.31 socks==1.7");
	teardown(&f);
}
END_TEST

START_TEST(test_markers_per_python)
{
	struct fixture f;
	setup(&f, extras, N(extras), 2);
	req(&f, 0, "tool");
	req(&f, 1, "tool");
	req(&f, 1, "idna; python_version >= '3.11'");
	run_ok(&f);
	expect(&f, 0, "tool==1.0 typing-extensions==4.9.0");
	expect(&f, 1, "tomli==2.0.1 tool==1.0");
	teardown(&f);
}
END_TEST

/* --- yanked, requires-python, platforms ---------------------------------- */

static const struct mem_rel avail[] = {
	{ "lib", "1.0", NULL, NULL, 0, 0 },
	{ "lib", "2.0", NULL, NULL, 1, 0 },
	{ "new", "1.0", NULL, ">=3.8", 0, 0 },
	{ "new", "2.0", NULL, ">=3.11", 0, 0 },
	{ "new", "3.0", NULL, ">=3.13", 0, 0 },
	{ "native", "1.0", NULL, NULL, 0, 0 },
	{ "native", "2.0", NULL, NULL, 0, 2 },
	{ "native", "3.0", NULL, NULL, 0, 3 },
};

START_TEST(test_yanked)
{
	struct fixture f;
	setup(&f, avail, N(avail), 1);
	req(&f, 0, "lib");
	run_ok(&f);
	expect(&f, 0, "lib==1.0");
	teardown(&f);

	setup(&f, avail, N(avail), 1);
	req(&f, 0, "lib==2.0");
	run_ok(&f);
	expect(&f, 0, "lib==2.0");
	teardown(&f);

	setup(&f, avail, N(avail), 1);
	req(&f, 0, "lib>=2.0");
	run(&f);
	expect_explained(&f, "lib==2.0 was yanked");
	teardown(&f);
}
END_TEST

START_TEST(test_requires_python)
{
	struct fixture f;
	setup(&f, avail, N(avail), 1);
	req(&f, 0, "new");
	run_ok(&f);
	expect(&f, 0, "new==2.0"); /* 3.0 needs 3.13, train is 3.12 */
	teardown(&f);

	setup(&f, avail, N(avail), 2);
	req(&f, 1, "new>=2");
	run(&f);
	expect_explained(&f, "requires Python >=3.11");
	teardown(&f);
}
END_TEST

START_TEST(test_platform_wheels_joint)
{
	struct fixture f;

	/* Alone, train takes 2.0 (no wheel for infer), 3.0 has none at all. */
	setup(&f, avail, N(avail), 1);
	req(&f, 0, "native");
	run_ok(&f);
	expect(&f, 0, "native==2.0");
	teardown(&f);

	/* Jointly, one version that has files for both. */
	setup(&f, avail, N(avail), 2);
	req(&f, 0, "native");
	req(&f, 1, "native");
	run_ok(&f);
	expect(&f, 0, "native==1.0");
	expect(&f, 1, "native==1.0");
	teardown(&f);
}
END_TEST

/* --- parity ------------------------------------------------------------- */

START_TEST(test_parity_shared_version)
{
	struct fixture f;
	setup(&f, conflict, N(conflict), 2);
	req(&f, 0, "pandas");
	req(&f, 1, "numpy");
	run_ok(&f);
	expect(&f, 0, "numpy==1.26.4 pandas==2.2.1");
	expect(&f, 1, "numpy==1.26.4");
	teardown(&f);

	/* infer's pin pulls train down to the pandas that accepts 1.25. */
	setup(&f, conflict, N(conflict), 2);
	req(&f, 0, "pandas");
	req(&f, 1, "numpy<1.26");
	run_ok(&f);
	expect(&f, 0, "numpy==1.25.0 pandas==2.1.0");
	expect(&f, 1, "numpy==1.25.0");
	teardown(&f);
}
END_TEST

START_TEST(test_parity_split_explained)
{
	struct fixture f;
	setup(&f, conflict, N(conflict), 2);
	req(&f, 0, "pandas");
	req(&f, 1, "numpy==1.24.4");
	run(&f);
	expect_explained(&f, "requirements-infer.in requires numpy==1.24.4 (infer)");
	expect_explained(&f, "must be the version every target uses");
	expect_explained(&f, "depends on numpy>=1.25 (train)");
	teardown(&f);
}
END_TEST

/* A provider's failure is an error, not "no solution". */
static int fail_deps(void *ctx, size_t env, const char *name, const char *version,
		     struct eb_resolver_deps *out, struct eb_error **err)
{
	(void)ctx, (void)env, (void)out;
	return eb_error_set(err, EB_ENET, "index down for %s %s", name, version);
}

START_TEST(test_provider_error)
{
	struct mem_index ix = { basic, N(basic), 0, 0 };
	struct eb_resolver_provider p = { mem_versions, fail_deps, NULL, &ix };
	struct eb_resolver_env env;
	struct eb_resolver *r;
	struct eb_error *err = NULL;

	env_init(&env, "t", "3.12", "3.12.0", "x86_64");
	r = eb_resolver_new(&p, &env, 1);
	ck_assert_int_eq(eb_resolver_require(r, 0, "a", NULL, &err), 0);
	ck_assert_int_eq(eb_resolver_run(r, &err), -EB_ENET);
	ck_assert_ptr_nonnull(strstr(err->msg, "reading the dependencies of a==2.0"));
	ck_assert_ptr_null(eb_resolver_explanation(r));
	eb_error_free(err);
	err = NULL;
	eb_resolver_free(r);

	r = eb_resolver_new(&p, &env, 1);
	ck_assert_int_eq(eb_resolver_require(r, 0, "./local/dir", NULL, &err), -EB_EINVALID);
	eb_error_free(err);
	eb_resolver_free(r);
}
END_TEST

/* A wide graph: each of 200 projects has 20 versions, the newest two of
 * every project need a version of the next one that does not exist, so
 * each must be backtracked once; dependencies are fetched once each. */
START_TEST(test_many_backtracks)
{
	enum { P = 200, V = 20 };
	static struct mem_rel rels[P * V];
	static char names[P][16], vers[V][8], deps[P * V][48];
	struct fixture f;
	size_t n;

	for (int v = 0; v < V; v++)
		snprintf(vers[v], sizeof(vers[v]), "1.%d", v);
	for (int i = 0; i < P; i++) {
		snprintf(names[i], sizeof(names[i]), "p%03d", i);
		for (int v = 0; v < V; v++) {
			struct mem_rel *m = &rels[i * V + v];
			m->name = names[i];
			m->version = vers[v];
			if (i + 1 < P) {
				snprintf(deps[i * V + v], sizeof(deps[0]), "p%03d%s", i + 1,
					 v >= V - 2 ? ">=9" : ">=1.0");
				m->deps = deps[i * V + v];
			}
		}
	}
	setup(&f, rels, P * V, 1);
	req(&f, 0, "p000");
	run_ok(&f);
	eb_resolver_solution(f.r, 0, &n);
	ck_assert_uint_eq(n, P);
	{
		char *s = solution_str(&f, 0);
		ck_assert_ptr_nonnull(strstr(s, "p000==1.17 "));
		ck_assert_ptr_nonnull(strstr(s, "p199==1.19"));
		free(s);
	}
	ck_assert_int_le(f.ix.calls, P * 3);
	teardown(&f);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("resolver");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_newest);
	tcase_add_test(tc, test_specifiers_and_ne);
	tcase_add_test(tc, test_prerelease_only_when_asked);
	tcase_add_test(tc, test_prefer_existing_pin);
	tcase_add_test(tc, test_constraints);
	tcase_add_test(tc, test_diamond);
	tcase_add_test(tc, test_backtrack_conflict_resolution);
	tcase_add_test(tc, test_backtrack_undo_early_choice);
	tcase_add_test(tc, test_unsatisfiable_explained);
	tcase_add_test(tc, test_missing_project_explained);
	tcase_add_test(tc, test_extras);
	tcase_add_test(tc, test_markers_per_python);
	tcase_add_test(tc, test_yanked);
	tcase_add_test(tc, test_requires_python);
	tcase_add_test(tc, test_platform_wheels_joint);
	tcase_add_test(tc, test_parity_shared_version);
	tcase_add_test(tc, test_parity_split_explained);
	tcase_add_test(tc, test_provider_error);
	tcase_add_test(tc, test_many_backtracks);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
