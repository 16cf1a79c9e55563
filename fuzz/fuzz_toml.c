/*
 * fuzz_toml.c - libFuzzer target for the TOML reader (eb_toml_load) and
 * the checkers built on it (pyproject.toml, pylock.toml, uv.lock,
 * poetry.lock) and envbuild pin's reading of pyproject.toml
 * (eb_pyproject_inputs).  Checks what the reader promises: a load either fails with
 * a positioned EB_EINVALID error and no document, or yields a tree in which
 * every value has a position inside the input and a type that matches its
 * JSON kind; the checkers never fail on content and every finding has a
 * line inside the input.
 */
#include "fuzz.h"

#include "pin/lockfiles.h"
#include "pin/pyproject.h"
#include "util/toml.h"

static unsigned nlines;

static void walk(const struct eb_toml_doc *doc, const json_t *node)
{
	const char *k;
	json_t *v;

	if (json_is_object(node)) {
		json_object_foreach((json_t *)node, k, v) {
			const struct eb_toml_pos *p = eb_toml_value_pos(doc, node, k, 0);
			EB_FUZZ_ASSERT(p != NULL);
			EB_FUZZ_ASSERT(p->line >= 1 && p->line <= nlines && p->col >= 1);
			EB_FUZZ_ASSERT(json_is_object(v) == (p->type == EB_TOML_TABLE));
			walk(doc, v);
		}
	} else if (json_is_array(node)) {
		for (size_t i = 0; i < json_array_size(node); i++) {
			const struct eb_toml_pos *p = eb_toml_value_pos(doc, node, NULL, i);
			EB_FUZZ_ASSERT(p != NULL);
			EB_FUZZ_ASSERT(p->line >= 1 && p->line <= nlines);
			walk(doc, json_array_get(node, i));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = eb_fuzz_exact(data, size);
	struct eb_toml_doc *doc = NULL;
	struct eb_error *err = NULL;

	nlines = 1;
	for (size_t i = 0; i < size; i++)
		nlines += data[i] == '\n';
	if (eb_toml_load(&doc, "f.toml", copy, size, &err) == 0) {
		json_t *t;
		EB_FUZZ_ASSERT(doc != NULL && err == NULL);
		walk(doc, eb_toml_root(doc));
		t = eb_toml_tagged(doc);
		EB_FUZZ_ASSERT(t != NULL);
		json_decref(t);
		eb_toml_free(doc);
	} else {
		EB_FUZZ_ASSERT(doc == NULL && err != NULL && err->code == EB_EINVALID);
		EB_FUZZ_ASSERT(err->line >= 1 && err->line <= nlines && err->col >= 1);
		eb_error_free(err);
	}
	{
		struct eb_diag_list dl = EB_DIAG_LIST_INIT;
		EB_FUZZ_ASSERT(eb_pyproject_check("pyproject.toml", copy, size, &dl, NULL) == 0);
		EB_FUZZ_ASSERT(eb_lockfile_check(EB_LOCKFILE_PYLOCK, "pylock.toml", copy, size, &dl,
						 NULL) == 0);
		EB_FUZZ_ASSERT(eb_lockfile_check(EB_LOCKFILE_UV, "uv.lock", copy, size, &dl, NULL) == 0);
		EB_FUZZ_ASSERT(eb_lockfile_check(EB_LOCKFILE_POETRY, "poetry.lock", copy, size, &dl,
						 NULL) == 0);
		for (size_t i = 0; i < dl.n; i++)
			EB_FUZZ_ASSERT(dl.items[i].line <= nlines);
		eb_diag_list_release(&dl);
	}
	{
		/* envbuild pin's reading of the same file */
		static const char *const extras[] = { "gpu", "all" };
		static const char *const groups[] = { "dev", "test" };
		struct eb_pyproject_input *in = NULL;
		struct eb_error *ierr = NULL;
		size_t n = 0;
		if (eb_pyproject_inputs("pyproject.toml", copy, size, extras, 2, groups, 2, &in, &n,
					&ierr) == 0) {
			EB_FUZZ_ASSERT(ierr == NULL);
			for (size_t i = 0; i < n; i++)
				EB_FUZZ_ASSERT(in[i].text && in[i].where && in[i].line >= 1 &&
					       in[i].line <= nlines);
			eb_pyproject_inputs_free(in, n);
		} else {
			EB_FUZZ_ASSERT(ierr != NULL && in == NULL && n == 0 && ierr->line <= nlines);
			eb_error_clear(&ierr);
		}
	}
	free(copy);
	return 0;
}
