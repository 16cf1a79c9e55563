/*
 * ignore.c - the project's never-copy rules for `files` walks: .git, the
 * output and the lock; .envbuildignore; and git's own ignore rules through
 * libgit2 (git_ignore_path_is_ignored), so .env files and keys a
 * .gitignore keeps out of the repository stay out of the image too.
 */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/ignore.h"
#include "lock/git.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/glob.h"

#define IGNORE_FILE ".envbuildignore"
#define IGNORE_MAX_BYTES (1u << 20)

struct rule {
	char *pat;
	int negate, dir_only;
};

struct eb_ignore {
	char *src_rel;      /* src relative to the project root, "" for the root; NULL: outside */
	char *src_real;
	char **never;       /* real paths */
	size_t nnever;
	struct rule *rules;
	size_t nrules, cap;
	git_repository *repo; /* NULL: not in a git work tree */
	char *wd_prefix;      /* src relative to the work tree, "" or "dir/" */
	int git_init;
};

static char *relative_to(const char *real, const char *base)
{
	size_t n = strlen(base);

	if (strcmp(base, "/") == 0)
		return eb_xstrdup(real + 1);
	if (strncmp(real, base, n) != 0 || (real[n] != '/' && real[n] != '\0'))
		return NULL;
	return eb_xstrdup(real[n] ? real + n + 1 : "");
}

static int read_rules(struct eb_ignore *ig, const char *root, struct eb_error **err)
{
	eb_autofree char *path = strcmp(root, ".") == 0 ? eb_xstrdup(IGNORE_FILE)
							 : eb_path_join(root, IGNORE_FILE);
	struct eb_buf b;
	struct eb_error *e = NULL;
	unsigned line = 0;
	char *p, *end;
	int r;

	eb_buf_init(&b, 0);
	r = eb_fs_read_confined(&b, path, root, IGNORE_MAX_BYTES, &e);
	if (r == -EB_ENOTFOUND) {
		eb_error_free(e);
		eb_buf_release(&b);
		return 0;
	}
	if (r < 0) {
		*err = e;
		eb_buf_release(&b);
		return r;
	}
	for (p = b.ptr, end = b.ptr + b.len; p < end;) {
		char *eol = memchr(p, '\n', (size_t)(end - p));
		char *s = p, *t;
		const char *why;
		struct rule ru = { 0 };

		if (!eol)
			eol = end;
		*eol = '\0';
		p = eol + 1;
		line++;
		t = eol;
		while (t > s && (t[-1] == '\r' || t[-1] == ' ' || t[-1] == '\t'))
			*--t = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (*s == '!') {
			ru.negate = 1;
			s++;
		}
		while (*s == '/')
			s++;
		t = s + strlen(s);
		while (t > s && t[-1] == '/') {
			*--t = '\0';
			ru.dir_only = 1;
		}
		if (!*s)
			continue;
		if (!eb_glob_valid(s, &why)) {
			r = eb_error_set_at(err, EB_EINVALID, path, line, 1, "pattern '%s' %s", s,
					    why);
			eb_buf_release(&b);
			return r;
		}
		ru.pat = eb_xstrdup(s);
		EB_ALLOC_GROW(ig->rules, ig->nrules + 1, ig->cap);
		ig->rules[ig->nrules++] = ru;
	}
	eb_buf_release(&b);
	return 0;
}

int eb_ignore_new(struct eb_ignore **out, const char *root, const char *src,
		  const char *const *never, size_t nnever, struct eb_error **err)
{
	struct eb_ignore *ig = eb_xcalloc(1, sizeof(*ig));
	char rootreal[PATH_MAX], real[PATH_MAX];
	git_buf wd = { 0 };
	int r;

	*out = NULL;
	if (!realpath(root, rootreal) || !realpath(src, real)) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot resolve '%s'", src);
		goto fail;
	}
	ig->src_real = eb_xstrdup(real);
	ig->src_rel = relative_to(real, rootreal);
	ig->never = eb_xcalloc(nnever + 1, sizeof(*ig->never));
	for (size_t i = 0; i < nnever; i++)
		if (never[i] && realpath(never[i], real))
			ig->never[ig->nnever++] = eb_xstrdup(real);
	if ((r = read_rules(ig, root, err)) < 0)
		goto fail;

	if (!eb_git_maybe_repo(rootreal)) {
		/* in no work tree: only .envbuildignore rules apply */
		*out = ig;
		return 0;
	}
	eb_git_lib_init();
	git_libgit2_init();
	ig->git_init = 1;
	if (git_repository_discover(&wd, rootreal, 0, NULL) == 0 &&
	    git_repository_open(&ig->repo, wd.ptr) == 0) {
		const char *w = git_repository_workdir(ig->repo);
		char wreal[PATH_MAX];
		char *rel = w && realpath(w, wreal) ? relative_to(ig->src_real, wreal) : NULL;
		if (!rel) {
			/* a bare repository, or src outside its work tree */
			git_repository_free(ig->repo);
			ig->repo = NULL;
		} else {
			ig->wd_prefix = *rel ? eb_xasprintf("%s/", rel) : eb_xstrdup("");
			free(rel);
		}
	}
	git_buf_dispose(&wd);
	*out = ig;
	return 0;
fail:
	eb_ignore_free(ig);
	return r;
}

/* A "!" rule might take back something below directory prel: then a
 * directory git ignores is still walked, and its files asked one by one. */
static int may_reinclude_below(const struct eb_ignore *ig, const char *prel)
{
	size_t n = strlen(prel);

	for (size_t i = 0; i < ig->nrules; i++) {
		const char *p = ig->rules[i].pat;
		if (!ig->rules[i].negate)
			continue;
		if (strncmp(p, "**", 2) == 0 || (strncmp(p, prel, n) == 0 && p[n] == '/'))
			return 1;
	}
	return 0;
}

int eb_ignore_skip(void *ud, const char *rel, int is_dir)
{
	struct eb_ignore *ig = ud;
	const char *base = strrchr(rel, '/');
	eb_autofree char *abs = NULL;
	int verdict = -1;

	base = base ? base + 1 : rel;
	if (strcmp(base, ".git") == 0)
		return 1;
	abs = eb_xasprintf("%s/%s", ig->src_real, rel);
	for (size_t i = 0; i < ig->nnever; i++)
		if (strcmp(abs, ig->never[i]) == 0)
			return 1;
	if (ig->src_rel && ig->nrules) {
		eb_autofree char *prel = *ig->src_rel ? eb_xasprintf("%s/%s", ig->src_rel, rel)
						      : eb_xstrdup(rel);
		for (size_t i = 0; i < ig->nrules; i++) {
			const struct rule *ru = &ig->rules[i];
			if (ru->dir_only && !is_dir)
				continue;
			if (eb_glob_match(ru->pat, prel))
				verdict = !ru->negate;
		}
		if (verdict >= 0)
			return verdict;
	}
	if (ig->repo) {
		eb_autofree char *wrel = eb_xasprintf("%s%s%s", ig->wd_prefix, rel, is_dir ? "/" : "");
		int ignored = 0;
		if (git_ignore_path_is_ignored(&ignored, ig->repo, wrel) == 0 && ignored) {
			if (is_dir && ig->src_rel) {
				eb_autofree char *prel =
					*ig->src_rel ? eb_xasprintf("%s/%s", ig->src_rel, rel)
						     : eb_xstrdup(rel);
				if (may_reinclude_below(ig, prel))
					return 0;
			}
			return 1;
		}
	}
	return 0;
}

void eb_ignore_free(struct eb_ignore *ig)
{
	if (!ig)
		return;
	free(ig->src_rel);
	free(ig->src_real);
	for (size_t i = 0; i < ig->nnever; i++)
		free(ig->never[i]);
	free(ig->never);
	for (size_t i = 0; i < ig->nrules; i++)
		free(ig->rules[i].pat);
	free(ig->rules);
	if (ig->repo)
		git_repository_free(ig->repo);
	free(ig->wd_prefix);
	if (ig->git_init)
		git_libgit2_shutdown();
	free(ig);
}
