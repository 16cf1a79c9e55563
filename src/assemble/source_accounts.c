/*
 * source_accounts.c - the accounts layer source: /etc/passwd, /etc/group
 * (and the shadow files where the base has them) as useradd/groupadd
 * leave them, the new users' homes, and the `dirs:` directories, in one
 * layer above the Debian packages (which may ship /etc files of their
 * own) and below the Python packages, so a change of accounts rebuilds
 * this layer alone.  Also checks that a `user:` given by name names an
 * account of the base or the spec.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "assemble/accounts.h"
#include "assemble/build.h"
#include "assemble/source.h"
#include "oci/basefs.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/buf.h"

struct acct_plan {
	struct eb_accounts *a;
	const struct eb_spec_target *t;
	const struct eb_basefs *fs;
	uint32_t *duid, *dgid; /* dirs' owners, resolved */
	char *created_by;
};

static int named(const char *owner)
{
	return owner && strspn(owner, "0123456789:") != strlen(owner);
}

static int accounts_needs_base(const struct eb_spec_target *t)
{
	return t->accounts.ngroups || t->accounts.nusers || t->accounts.ndirs || named(t->user.s);
}

static void owner_finding(const struct eb_source_ctx *c, unsigned line, unsigned col,
			  const char *key, const char *owner, int why, const char *what,
			  size_t *nerr)
{
	struct eb_diag *d = eb_diag_add(c->diags, EB_SEV_ERROR, c->spec->path, line, col, "EB022",
					"%s '%s': %s '%s' is not in the base's /etc/%s nor in the "
					"spec's accounts", key, owner, why == -1 ? "user" : "group",
					what, why == -1 ? "passwd" : "group");
	eb_diag_hint(d, "add it to accounts: (or write the number)");
	(*nerr)++;
}

static int accounts_plan(struct eb_source *s, const struct eb_spec_target *t, const char *platform,
			 const struct eb_source_base *base, struct eb_source_plan *plan,
			 struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	const struct eb_spec_accounts *sa = &t->accounts;
	struct acct_plan *ap;
	const struct eb_accounts_file *files;
	const struct eb_accounts_home *homes;
	size_t nerr = 0, nfiles, nhomes;
	struct eb_sha256 h;
	struct eb_buf k = EB_BUF_INIT;
	uint32_t uid, gid;
	const char *what;
	int r;

	(void)platform; /* the same bytes on every platform over the same base */
	if (!accounts_needs_base(t))
		return 0;
	ap = eb_xcalloc(1, sizeof(*ap));
	plan->state = ap;
	ap->t = t;
	ap->fs = base->fs;
	r = eb_accounts_load(&ap->a, c->spec, t, base, c->o->layer.epoch, c->diags, &nerr, err);
	if (r < 0)
		return r;
	if (named(t->user.s)) {
		int w = eb_accounts_owner(ap->a, t->user.s, &uid, &gid, &what);
		if (w < 0)
			owner_finding(c, t->user.pos.line, t->user.pos.col, "user", t->user.s, w, what,
				      &nerr);
	}
	ap->duid = eb_xcalloc(sa->ndirs + 1, sizeof(*ap->duid));
	ap->dgid = eb_xcalloc(sa->ndirs + 1, sizeof(*ap->dgid));
	for (size_t i = 0; i < sa->ndirs; i++) {
		const struct eb_spec_dir *d = &sa->dirs[i];
		const struct eb_basefs_node *n = NULL;
		char *real = NULL;

		if (d->owner) {
			int w = eb_accounts_owner(ap->a, d->owner, &ap->duid[i], &ap->dgid[i], &what);
			if (w < 0)
				owner_finding(c, d->owner_line, d->owner_col, "owner", d->owner, w, what,
					      &nerr);
		}
		if (base->fs && eb_basefs_resolve(base->fs, d->path, 1, &real, NULL) == 0)
			n = eb_basefs_lookup(base->fs, real);
		free(real);
		if (n && n->type != EB_BASEFS_DIR) {
			eb_diag_add(c->diags, EB_SEV_ERROR, c->spec->path, d->line, d->col, "EB024",
				    "'%s' is a file of the base, not a directory", d->path);
			nerr++;
		}
	}
	if (nerr)
		return eb_error_set(err, EB_EINVALID,
				    "target '%s': %zu problem%s with accounts or dirs; nothing was built",
				    t->name, nerr, nerr == 1 ? "" : "s");
	nfiles = eb_accounts_files(ap->a, &files);
	nhomes = eb_accounts_homes(ap->a, &homes);
	if (!nfiles && !sa->ndirs)
		return 0; /* only a `user:` to check */
	/* the key: every entry's path, bytes, mode and owner */
	for (size_t i = 0; i < nfiles; i++) {
		eb_buf_putf(&k, "file %s %o %u:%u %zu\n", files[i].path, files[i].mode,
			    (unsigned)files[i].uid, (unsigned)files[i].gid, files[i].bytes.len);
		eb_buf_put(&k, files[i].bytes.ptr, files[i].bytes.len);
	}
	for (size_t i = 0; i < nhomes; i++)
		eb_buf_putf(&k, "home %s %o %u:%u\n", homes[i].path, homes[i].mode,
			    (unsigned)homes[i].uid, (unsigned)homes[i].gid);
	for (size_t i = 0; i < sa->ndirs; i++)
		eb_buf_putf(&k, "dir %s %o %u:%u\n", sa->dirs[i].path, sa->dirs[i].mode,
			    (unsigned)ap->duid[i], (unsigned)ap->dgid[i]);
	eb_sha256_init(&h);
	eb_sha256_update(&h, k.ptr, k.len);
	plan->layers = eb_xcalloc(2, sizeof(*plan->layers));
	eb_sha256_final(&h, plan->layers[0].key);
	eb_buf_release(&k);
	ap->created_by = eb_xasprintf("envbuild: accounts (%zu group%s, %zu user%s), %zu dir%s",
				      sa->ngroups, sa->ngroups == 1 ? "" : "s", sa->nusers,
				      sa->nusers == 1 ? "" : "s", sa->ndirs, sa->ndirs == 1 ? "" : "s");
	plan->layers[0].created_by = ap->created_by;
	plan->n = 1;
	return 0;
}

static int accounts_write(struct eb_source *s, struct eb_source_plan *plan,
			  struct eb_build_layer *out, struct eb_error **err)
{
	const struct eb_source_ctx *c = s->ctx;
	struct acct_plan *ap = plan->state;
	const struct eb_accounts_file *files;
	const struct eb_accounts_home *homes;
	struct eb_layer_builder *b;
	struct eb_layer_options lo = c->o->layer;
	struct eb_layer_result res;
	size_t nfiles, nhomes;
	int r = 0;

	if (!plan->n)
		return 0;
	b = eb_layer_builder_new();
	eb_layer_builder_set_base(b, ap->fs);
	lo.keep_modes = 1;
	lo.chmod = 0;
	lo.uid = lo.gid = 0;
	nfiles = eb_accounts_files(ap->a, &files);
	nhomes = eb_accounts_homes(ap->a, &homes);
	for (size_t i = 0; i < nfiles && r == 0; i++) {
		r = eb_layer_add_bytes(b, files[i].path, files[i].bytes.ptr, files[i].bytes.len,
				       files[i].mode, err);
		if (r == 0)
			eb_layer_set_last_owner(b, files[i].uid, files[i].gid);
	}
	for (size_t i = 0; i < nhomes && r == 0; i++) {
		r = eb_layer_add_dir(b, homes[i].path, homes[i].mode, err);
		if (r == 0)
			eb_layer_set_last_owner(b, homes[i].uid, homes[i].gid);
	}
	for (size_t i = 0; i < ap->t->accounts.ndirs && r == 0; i++) {
		const struct eb_spec_dir *d = &ap->t->accounts.dirs[i];
		r = eb_layer_add_dir(b, d->path, d->mode, err);
		if (r == 0)
			eb_layer_set_last_owner(b, ap->duid[i], ap->dgid[i]);
	}
	if (r == 0)
		r = eb_layer_write_cached(b, &lo, c->bs, &res, NULL, err);
	eb_layer_builder_free(b);
	if (r < 0)
		return r;
	memcpy(out->digest, res.digest, sizeof(out->digest));
	memcpy(out->diff_id, res.diff_id, sizeof(out->diff_id));
	out->size = res.size;
	out->reused = res.cached;
	out->created_by = eb_xstrdup(ap->created_by);
	return 0;
}

static void accounts_plan_release(struct eb_source_plan *plan)
{
	struct acct_plan *ap = plan->state;

	if (ap) {
		eb_accounts_free(ap->a);
		free(ap->duid);
		free(ap->dgid);
		free(ap->created_by);
		free(ap);
	}
	free(plan->layers);
	memset(plan, 0, sizeof(*plan));
}

const struct eb_source_ops eb_source_accounts = {
	.name = "accounts",
	.needs_base = accounts_needs_base,
	.plan = accounts_plan,
	.write = accounts_write,
	.plan_release = accounts_plan_release,
};
