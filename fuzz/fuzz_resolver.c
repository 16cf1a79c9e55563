/*
 * fuzz_resolver.c - libFuzzer target for the PubGrub resolver: the input
 * is a whole package index in text, one release a line,
 *
 *   > req | req ...                 top-level requirements (env 0 and 1)
 *   name version[!] | dep | dep ... a release ("!": yanked)
 *
 * resolved for two environments (3.12 x86_64 and 3.10 aarch64) jointly.
 * Invariants: the run ends (no abort from a broken PubGrub invariant);
 * "no solution" comes with an explanation; a solution pins every
 * top-level project and satisfies every dependency whose marker holds,
 * with one version per project across both environments.
 */
#include "fuzz.h"

#include "pin/requirement.h"
#include "pin/version.h"
#include "python/resolver.h"

struct rel {
	char *name, *version;
	int yanked;
	char **deps;
	size_t ndeps;
};

struct scen {
	struct rel *rels;
	size_t n;
	char **roots;
	size_t nroots;
};

static char **split_bar(char *s, size_t *n)
{
	char **out = NULL;
	*n = 0;
	for (char *tok = strtok(s, "|"); tok; tok = strtok(NULL, "|")) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		out = eb_xreallocarray(out, *n + 1, sizeof(*out));
		out[(*n)++] = tok;
	}
	return out;
}

static int f_versions(void *ctx, const char *name, struct eb_resolver_versions *out,
		      struct eb_error **err)
{
	struct scen *sc = ctx;
	int found = 0;
	for (size_t i = 0; i < sc->n; i++)
		if (strcmp(sc->rels[i].name, name) == 0) {
			eb_resolver_versions_add(out, sc->rels[i].version, sc->rels[i].yanked);
			found = 1;
		}
	return found ? 0 : eb_error_set(err, EB_ENOTFOUND, "no %s", name);
}

static const struct rel *find_rel(const struct scen *sc, const char *name, const char *version)
{
	for (size_t i = 0; i < sc->n; i++)
		if (strcmp(sc->rels[i].name, name) == 0 &&
		    strcmp(sc->rels[i].version, version) == 0)
			return &sc->rels[i];
	return NULL;
}

static int f_deps(void *ctx, size_t env, const char *name, const char *version,
		  struct eb_resolver_deps *out, struct eb_error **err)
{
	const struct rel *r = find_rel(ctx, name, version);
	(void)env;
	if (!r)
		return eb_error_set(err, EB_ENOTFOUND, "no %s %s", name, version);
	for (size_t i = 0; i < r->ndeps; i++)
		eb_resolver_deps_add(out, r->deps[i]);
	return 0;
}

/* Does the solution of env satisfy req (when its marker holds)? */
static void check_req(const struct eb_resolver_pin *pins, size_t n,
		      const struct eb_resolver_env *env, const char *text)
{
	struct eb_requirement req;
	struct eb_marker_env menv = env->markers;
	int holds = 1;
	size_t k;

	if (eb_requirement_parse(&req, text, strlen(text), NULL) < 0 || req.kind != EB_REQ_NAMED) {
		eb_requirement_release(&req);
		return;
	}
	menv.extra = "";
	if (req.marker && eb_marker_eval(req.marker, &menv, &holds, NULL) < 0)
		holds = 0;
	if (holds) {
		for (k = 0; k < n; k++)
			if (strcmp(pins[k].name, req.norm_name) == 0)
				break;
		EB_FUZZ_ASSERT(k < n);
		{
			struct eb_version v;
			EB_FUZZ_ASSERT(eb_version_parse(&v, pins[k].version, strlen(pins[k].version),
							NULL) == 0);
			EB_FUZZ_ASSERT(eb_specifier_set_contains(&req.specs, &v, pins[k].version));
			eb_version_release(&v);
		}
	}
	eb_requirement_release(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_cstr(data, size);
	struct scen sc = { 0 };
	struct eb_resolver_env envs[2];
	struct eb_resolver_provider prov = { f_versions, f_deps, NULL, &sc };
	struct eb_resolver *r;
	struct eb_error *err = NULL;
	char *save = NULL;
	int rc;

	if (size > 4096) {
		free(text);
		return 0;
	}
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '>') {
			free(sc.roots); /* the last '>' line counts */
			sc.roots = split_bar(line + 1, &sc.nroots);
		} else {
			char *bar = strchr(line, '|');
			char *sp;
			struct rel rl = { 0 };
			if (bar)
				*bar = '\0';
			sp = strchr(line, ' ');
			if (!sp || sc.n >= 64)
				continue;
			*sp = '\0';
			rl.name = eb_pep503_normalize(line, strlen(line));
			rl.version = sp + 1;
			{
				size_t vl = strlen(rl.version);
				while (vl && rl.version[vl - 1] == ' ')
					rl.version[--vl] = '\0';
				if (vl && rl.version[vl - 1] == '!') {
					rl.version[--vl] = '\0';
					rl.yanked = 1;
				}
			}
			if (bar)
				rl.deps = split_bar(bar + 1, &rl.ndeps);
			sc.rels = eb_xreallocarray(sc.rels, sc.n + 1, sizeof(*sc.rels));
			sc.rels[sc.n++] = rl;
		}
	}
	memset(envs, 0, sizeof(envs));
	eb_marker_env_init(&envs[0].markers, "3.12", "x86_64");
	envs[0].label = "a";
	envs[0].python_full = "3.12.1";
	eb_marker_env_init(&envs[1].markers, "3.10", "aarch64");
	envs[1].label = "b";
	envs[1].python_full = "3.10.2";
	r = eb_resolver_new(&prov, envs, 2);
	for (size_t i = 0; i < sc.nroots && i < 16; i++) {
		(void)eb_resolver_require(r, 0, sc.roots[i], NULL, &err);
		eb_error_clear(&err);
		(void)eb_resolver_require(r, 1, sc.roots[i], NULL, &err);
		eb_error_clear(&err);
	}
	rc = eb_resolver_run(r, &err);
	if (rc == -EB_EFAIL && eb_resolver_explanation(r)) {
		EB_FUZZ_ASSERT(eb_resolver_explanation(r)[0] != '\0');
	} else if (rc == 0) {
		size_t n0, n1;
		const struct eb_resolver_pin *p0 = eb_resolver_solution(r, 0, &n0);
		const struct eb_resolver_pin *p1 = eb_resolver_solution(r, 1, &n1);
		for (size_t e = 0; e < 2; e++) {
			const struct eb_resolver_pin *pins = e ? p1 : p0;
			size_t n = e ? n1 : n0;
			for (size_t i = 0; i < n; i++) {
				const struct rel *rl = find_rel(&sc, pins[i].name, pins[i].version);
				EB_FUZZ_ASSERT(rl != NULL);
				for (size_t k = 0; k < rl->ndeps; k++)
					check_req(pins, n, &envs[e], rl->deps[k]);
				/* parity: the other environment has the same version */
				for (size_t k = 0; k < (e ? n0 : n1); k++) {
					const struct eb_resolver_pin *o = e ? &p0[k] : &p1[k];
					if (strcmp(o->name, pins[i].name) == 0)
						EB_FUZZ_ASSERT(strcmp(o->version, pins[i].version) == 0);
				}
			}
			for (size_t i = 0; i < sc.nroots && i < 16; i++)
				check_req(pins, n, &envs[e], sc.roots[i]);
		}
	}
	eb_error_free(err);
	eb_resolver_free(r);
	for (size_t i = 0; i < sc.n; i++) {
		free(sc.rels[i].name);
		free(sc.rels[i].deps);
	}
	free(sc.rels);
	free(sc.roots);
	free(text);
	return 0;
}
