/*
 * git.c - libgit2 for the lockfile workflow.
 */
#include "config.h"

#include <git2.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/git.h"
#include "envspec/spec.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/yamljson.h"

struct eb_git {
	git_repository *repo;
	char *workdir; /* absolute, with a trailing '/' */
};

static int git_fail(struct eb_error **err, const char *what)
{
	const git_error *e = git_error_last();
	return eb_error_set(err, EB_EFAIL, "git: %s: %s", what, e && e->message ? e->message : "failed");
}

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_shutdown(void)
{
	git_libgit2_shutdown();
}

static void lib_init(void)
{
	git_libgit2_init();
	atexit(lib_shutdown);
}

void eb_git_lib_init(void)
{
	pthread_once(&lib_once, lib_init);
}

int eb_git_maybe_repo(const char *dir)
{
	char path[PATH_MAX], probe[PATH_MAX + 8];
	struct stat st;

	if (!realpath(dir, path))
		return 1; /* let libgit2 say what is wrong */
	for (;;) {
		char *slash;
		snprintf(probe, sizeof(probe), "%s/.git", strcmp(path, "/") ? path : "");
		if (lstat(probe, &st) == 0)
			return 1;
		if (strcmp(path, "/") == 0)
			return 0;
		slash = strrchr(path, '/');
		if (!slash)
			return 1;
		if (slash == path)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

int eb_git_open(struct eb_git **out, const char *dir, struct eb_error **err)
{
	git_repository *repo = NULL;
	struct eb_git *g;
	int r;

	/* no .git anywhere up: not in a repository, and libgit2 (its
	 * initialisation loads the CA bundle) is not needed */
	if (!eb_git_maybe_repo(dir))
		return eb_error_set(err, EB_ENOTFOUND, "'%s' is not in a git repository", dir);
	eb_git_lib_init();
	git_libgit2_init();
	r = git_repository_open_ext(&repo, dir, 0, NULL);
	if (r == GIT_ENOTFOUND) {
		git_libgit2_shutdown();
		return eb_error_set(err, EB_ENOTFOUND, "'%s' is not in a git repository", dir);
	}
	if (r < 0) {
		r = git_fail(err, "opening the repository");
		git_libgit2_shutdown();
		return r;
	}
	if (git_repository_is_bare(repo)) {
		git_repository_free(repo);
		git_libgit2_shutdown();
		return eb_error_set(err, EB_ENOTFOUND, "'%s' is in a bare repository", dir);
	}
	g = eb_xcalloc(1, sizeof(*g));
	g->repo = repo;
	g->workdir = eb_xstrdup(git_repository_workdir(repo));
	*out = g;
	return 0;
}

void eb_git_free(struct eb_git *g)
{
	if (!g)
		return;
	git_repository_free(g->repo);
	free(g->workdir);
	free(g);
	git_libgit2_shutdown();
}

char *eb_git_head(struct eb_git *g)
{
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	if (git_reference_name_to_id(&oid, g->repo, "HEAD") < 0)
		return NULL;
	git_oid_tostr(hex, sizeof(hex), &oid);
	return eb_xstrdup(hex);
}

char *eb_git_origin(struct eb_git *g)
{
	git_remote *rm = NULL;
	const char *url;
	char *out, *at, *scheme;

	if (git_remote_lookup(&rm, g->repo, "origin") < 0)
		return NULL;
	url = git_remote_url(rm);
	out = url ? eb_xstrdup(url) : NULL;
	git_remote_free(rm);
	/* https://user:token@host/x -> https://host/x: never publish secrets
	 * in an image label */
	if (out && (scheme = strstr(out, "://"))) {
		char *host = scheme + 3;
		size_t hostlen = strcspn(host, "/");
		at = memchr(host, '@', hostlen);
		if (at)
			memmove(host, at + 1, strlen(at + 1) + 1);
	}
	return out;
}

/* path relative to the work tree, or NULL when outside it. */
static char *relpath(struct eb_git *g, const char *path)
{
	char real[PATH_MAX], dir[PATH_MAX];
	char *d = eb_path_dirname(path);
	const char *base = eb_path_basename(path);
	size_t lw = strlen(g->workdir);
	char *full;

	if (!realpath(d, dir)) {
		free(d);
		return NULL;
	}
	free(d);
	full = eb_xasprintf("%s/%s", dir, base);
	if (strlen(full) < sizeof(real))
		memcpy(real, full, strlen(full) + 1);
	free(full);
	if (strncmp(real, g->workdir, lw) != 0)
		return NULL;
	return eb_xstrdup(real + lw);
}

char *eb_git_relpath(struct eb_git *g, const char *path)
{
	return relpath(g, path);
}

int eb_git_path_state(struct eb_git *g, const char *path, enum eb_git_state *out,
		      struct eb_error **err)
{
	unsigned int flags = 0;
	char *rel = relpath(g, path);
	int ignored = 0, r;

	if (!rel)
		return eb_error_set(err, EB_EINVALID, "'%s' is outside the git work tree", path);
	r = git_status_file(&flags, g->repo, rel);
	if (r == GIT_ENOTFOUND) {
		/* not in the index nor the work tree: a file yet to be written */
		git_ignore_path_is_ignored(&ignored, g->repo, rel);
		*out = ignored ? EB_GIT_IGNORED : EB_GIT_UNTRACKED;
		free(rel);
		return 0;
	}
	free(rel);
	if (r < 0)
		return git_fail(err, "reading the status");
	if (flags & GIT_STATUS_IGNORED)
		*out = EB_GIT_IGNORED;
	else if (flags & GIT_STATUS_WT_NEW)
		*out = EB_GIT_UNTRACKED;
	else if (flags == GIT_STATUS_CURRENT)
		*out = EB_GIT_CLEAN;
	else
		*out = EB_GIT_MODIFIED;
	return 0;
}

int eb_git_dirty(struct eb_git *g, const char *const *paths, size_t n, char **first,
		 struct eb_error **err)
{
	git_status_options so;
	git_status_list *list = NULL;
	char **rel = eb_xcalloc(n + 1, sizeof(*rel));
	size_t nrel = 0;
	int dirty = 0;

	*first = NULL;
	for (size_t i = 0; i < n; i++) {
		char *p = relpath(g, paths[i]);
		if (p) {
			size_t l = strlen(p);
			/* "src/" -> "src": a pathspec matches the tree below it */
			while (l > 0 && p[l - 1] == '/')
				p[--l] = '\0';
			rel[nrel++] = p;
		}
	}
	if (!nrel)
		goto done;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	so.pathspec.strings = rel;
	so.pathspec.count = nrel;
	if (git_status_list_new(&list, g->repo, &so) < 0) {
		dirty = git_fail(err, "reading the status");
		goto done;
	}
	for (size_t i = 0; i < git_status_list_entrycount(list); i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		const git_diff_delta *dd = e->head_to_index ? e->head_to_index : e->index_to_workdir;
		/* untracked files are not inputs git knows; ignored never are */
		if (e->status == GIT_STATUS_CURRENT || (e->status & (GIT_STATUS_WT_NEW | GIT_STATUS_IGNORED)))
			continue;
		if (dd && dd->new_file.path)
			*first = eb_xstrdup(dd->new_file.path);
		dirty = 1;
		break;
	}
done:
	git_status_list_free(list);
	for (size_t i = 0; i < nrel; i++)
		free(rel[i]);
	free(rel);
	return dirty;
}

int eb_git_commit_file(struct eb_git *g, const char *path, const char *message, char **id_out,
		       struct eb_error **err)
{
	char *rel = relpath(g, path);
	git_oid blob, tree_id, commit_id, head_id;
	git_tree *head_tree = NULL, *tree = NULL;
	git_commit *head = NULL;
	git_signature *sig = NULL;
	git_index *index = NULL;
	git_tree_update upd;
	int have_head, r = 0;
	char hex[GIT_OID_HEXSZ + 1];

	if (!rel)
		return eb_error_set(err, EB_EINVALID, "'%s' is outside the git work tree", path);
	if (git_signature_default(&sig, g->repo) < 0) {
		r = git_fail(err, "no author (set user.name and user.email in git config)");
		goto done;
	}
	if (git_blob_create_from_workdir(&blob, g->repo, rel) < 0) {
		r = git_fail(err, "storing the lockfile");
		goto done;
	}
	have_head = git_reference_name_to_id(&head_id, g->repo, "HEAD") == 0;
	if (have_head && (git_commit_lookup(&head, g->repo, &head_id) < 0 ||
			  git_commit_tree(&head_tree, head) < 0)) {
		r = git_fail(err, "reading HEAD");
		goto done;
	}
	/* HEAD's tree with only this file changed: whatever else the user has
	 * staged is not swept into the lock commit */
	memset(&upd, 0, sizeof(upd));
	upd.action = GIT_TREE_UPDATE_UPSERT;
	upd.id = blob;
	upd.filemode = GIT_FILEMODE_BLOB;
	upd.path = rel;
	if (git_tree_create_updated(&tree_id, g->repo, head_tree, 1, &upd) < 0 ||
	    git_tree_lookup(&tree, g->repo, &tree_id) < 0) {
		r = git_fail(err, "building the commit's tree");
		goto done;
	}
	if (git_commit_create_v(&commit_id, g->repo, "HEAD", sig, sig, NULL, message, tree,
				have_head ? 1 : 0, head) < 0) {
		r = git_fail(err, "committing");
		goto done;
	}
	/* the index agrees with the new commit for this path */
	if (git_repository_index(&index, g->repo) == 0) {
		git_index_add_bypath(index, rel);
		git_index_write(index);
	}
	if (id_out) {
		git_oid_tostr(hex, sizeof(hex), &commit_id);
		*id_out = eb_xstrdup(hex);
	}
done:
	git_index_free(index);
	git_tree_free(tree);
	git_tree_free(head_tree);
	git_commit_free(head);
	git_signature_free(sig);
	free(rel);
	return r;
}

/* A lockfile, which is an output of the build, never one of its inputs
 * (a `src: .` tree holds it): envbuild.lock, or a per-spec NAME.envbuild.lock. */
static int is_lockfile(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t len;

	b = b ? b + 1 : path;
	len = strlen(b);
	return len >= 13 && strcmp(b + len - 13, "envbuild.lock") == 0;
}

/* What target `name` of the spec held in blob-tree `tree` at `rel` is made
 * of, as canonical JSON: every spec-wide key (all of them are inherited,
 * or say where inputs come from) except those that never reach an image,
 * and the target's own section; the other targets are left out, so an
 * edit to one of them leaves this view unchanged.  NULL when the file is
 * absent or cannot be parsed at that commit (treated as a change). */
static char *spec_view(git_repository *repo, git_tree *tree, const char *rel, const char *name)
{
	static const char *const not_in_image[] = { "targets", "repository", "cache", NULL };
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	struct eb_yj_doc *doc = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT; /* the spec's own check reports them */
	json_t *root, *view = NULL, *targets, *mine;
	const char *key;
	json_t *v;
	char *out = NULL;

	if (!tree || git_tree_entry_bypath(&te, tree, rel) < 0 ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0)
		goto done;
	if (eb_yj_load(&doc, rel, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), &diags,
		       NULL) < 0)
		goto done;
	root = eb_yj_root(doc);
	if (!json_is_object(root))
		goto done;
	view = json_object();
	json_object_foreach(root, key, v) {
		int skip = 0;
		for (size_t i = 0; not_in_image[i]; i++)
			skip |= strcmp(key, not_in_image[i]) == 0;
		if (!skip)
			json_object_set(view, key, v);
	}
	targets = json_object_get(root, "targets");
	mine = json_is_object(targets) ? json_object_get(targets, name) : NULL;
	json_object_set_new(view, "targets", mine ? json_incref(mine) : json_null());
	out = json_dumps(view, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
done:
	json_decref(view);
	eb_yj_free(doc);
	eb_diag_list_release(&diags);
	git_blob_free(blob);
	git_tree_entry_free(te);
	return out;
}

/* Whether target `name`'s view of the spec differs between two trees. */
static int spec_view_changed(git_repository *repo, git_tree *ptree, git_tree *tree,
			     const char *rel, const char *name)
{
	char *a = spec_view(repo, ptree, rel, name);
	char *b = spec_view(repo, tree, rel, name);
	int changed = !a || !b || strcmp(a, b) != 0;

	free(a);
	free(b);
	return changed;
}

/* eb_git_last_change(), and with spec_path: the spec file counts only when
 * target's view of it changed (spec_view()), unless another of paths
 * holds the spec whole (a `src: .` copies its bytes into the image). */
static int last_change(struct eb_git *g, const char *const *paths, size_t n,
		       const char *spec_path, const char *target, int64_t *time_out)
{
	char *spec_rel = NULL;
	int spec_whole = 0;

	git_revwalk *walk = NULL;
	char **rel = eb_xcalloc(n + 1, sizeof(*rel));
	git_diff_options o;
	size_t m = 0;
	int whole = 0;
	git_oid oid;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		char *p = eb_xstrdup(paths[i]);
		char *r;
		size_t len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			p[--len] = '\0';
		r = relpath(g, p);
		free(p);
		if (!r)
			continue; /* outside the work tree: not tracked here */
		/* "src: ." is the spec's directory: "x/." -> "x", "." -> "" */
		len = strlen(r);
		if (len >= 2 && strcmp(r + len - 2, "/.") == 0)
			len -= 2;
		else if (strcmp(r, ".") == 0)
			len = 0;
		r[len] = '\0';
		while (len > 0 && r[len - 1] == '/')
			r[--len] = '\0';
		if (!*r)
			whole = 1; /* the whole work tree */
		rel[m++] = r;
	}
	if (spec_path && (spec_rel = relpath(g, spec_path)) != NULL) {
		size_t ls = strlen(spec_rel);
		for (size_t i = 0; i < m; i++) {
			size_t lr = strlen(rel[i]);
			if (!*rel[i] || strcmp(rel[i], spec_rel) == 0 ||
			    (lr < ls && strncmp(spec_rel, rel[i], lr) == 0 && spec_rel[lr] == '/'))
				spec_whole = 1;
		}
		if (!spec_whole)
			rel[m++] = eb_xstrdup(spec_rel);
	}
	if (m == 0)
		goto done;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	/* literal paths (a file, or a directory and all below it), not
	 * fnmatch patterns: a '[' in a file name means itself */
	o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	if (!whole) {
		o.pathspec.strings = rel;
		o.pathspec.count = m;
	}
	if (git_revwalk_new(&walk, g->repo) < 0)
		goto done;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	if (git_revwalk_push_head(walk) < 0)
		goto done;
	while (!found && git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL, *parent = NULL;
		git_tree *tree = NULL, *ptree = NULL;
		git_diff *diff = NULL;

		if (git_commit_lookup(&c, g->repo, &oid) < 0)
			break;
		if (git_commit_tree(&tree, c) == 0 && git_commit_parentcount(c) > 0 &&
		    git_commit_parent(&parent, c, 0) == 0)
			git_commit_tree(&ptree, parent);
		/* the first parent against this commit (a root commit against
		 * nothing), limited to the inputs, lockfiles not counted */
		if (tree && git_diff_tree_to_tree(&diff, g->repo, ptree, tree, &o) == 0) {
			for (size_t i = 0; i < git_diff_num_deltas(diff) && !found; i++) {
				const git_diff_delta *d = git_diff_get_delta(diff, i);
				const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;
				if (is_lockfile(p))
					continue;
				if (spec_rel && !spec_whole && strcmp(p, spec_rel) == 0 &&
				    !spec_view_changed(g->repo, ptree, tree, spec_rel, target))
					continue;
				found = 1;
				*time_out = (int64_t)git_commit_time(c);
			}
		}
		git_diff_free(diff);
		git_tree_free(ptree);
		git_tree_free(tree);
		git_commit_free(parent);
		git_commit_free(c);
	}
done:
	git_revwalk_free(walk);
	for (size_t i = 0; i < m; i++)
		free(rel[i]);
	free(rel);
	free(spec_rel);
	return found;
}

int eb_git_last_change(struct eb_git *g, const char *const *paths, size_t n, int64_t *time_out)
{
	return last_change(g, paths, n, NULL, NULL, time_out);
}

int64_t eb_git_inputs_epoch(const struct eb_spec *spec, const struct eb_spec_target *t,
			    int64_t fallback)
{
	struct eb_git *g = NULL;
	char **paths;
	size_t n = 0;
	int64_t when = fallback;

	if (!spec->path || eb_git_open(&g, spec->dir, NULL) < 0)
		return fallback;
	paths = eb_xcalloc(1 + t->requirements.n + t->nfiles, sizeof(*paths));
	for (size_t i = 0; i < t->requirements.n; i++)
		paths[n++] = eb_spec_resolve(spec, t->requirements.v[i].s);
	for (size_t i = 0; i < t->nfiles; i++)
		paths[n++] = eb_spec_resolve(spec, t->files[i].src.s);
	if (last_change(g, (const char *const *)paths, n, spec->path, t->name, &when) <= 0)
		when = fallback;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	eb_git_free(g);
	return when;
}

int eb_git_clone_at(struct eb_git *g, const char *commit, const char *dest,
		    struct eb_error **err)
{
	git_clone_options co;
	git_checkout_options ck;
	git_repository *clone = NULL;
	git_object *obj = NULL;
	git_oid oid;
	int rc = 0;

	git_clone_options_init(&co, GIT_CLONE_OPTIONS_VERSION);
	git_checkout_options_init(&ck, GIT_CHECKOUT_OPTIONS_VERSION);
	if (git_oid_fromstr(&oid, commit) < 0)
		return eb_error_set(err, EB_EINVALID, "'%s' is not a commit id", commit);
	/* a local clone: objects copied (or linked), nothing fetched */
	co.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
	co.local = GIT_CLONE_LOCAL;
	if (git_clone(&clone, git_repository_path(g->repo), dest, &co) < 0)
		return git_fail(err, "cloning the repository");
	if (git_object_lookup(&obj, clone, &oid, GIT_OBJECT_COMMIT) < 0) {
		rc = eb_error_set(err, EB_ENOTFOUND, "commit %s is not in the repository", commit);
		goto done;
	}
	ck.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_tree(clone, obj, &ck) < 0 ||
	    git_repository_set_head_detached(clone, &oid) < 0) {
		rc = git_fail(err, "checking out the commit");
		goto done;
	}
	/* the clone's origin is the source's (the image's source label comes
	 * from it), not the directory it was cloned from */
	{
		char *origin = eb_git_origin(g);
		if (origin ? git_remote_set_url(clone, "origin", origin) < 0
			   : git_remote_delete(clone, "origin") < 0)
			rc = git_fail(err, "setting the clone's origin");
		free(origin);
	}
done:
	git_object_free(obj);
	git_repository_free(clone);
	return rc;
}
