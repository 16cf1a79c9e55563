/*
 * accounts.c - the base's users and groups plus the spec's, checked and
 * rendered as useradd/groupadd leave them (assemble/accounts.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/accounts.h"
#include "oci/basefile.h"
#include "util/alloc.h"

#define ACCT_FILE_MAX (4u << 20)

struct ent {
	char *name;
	uint32_t id;  /* uid or gid */
	uint32_t gid; /* users: primary group */
	unsigned line; /* in the base file; 0: the spec's */
};

struct table {
	struct ent *v;
	size_t n, cap;
};

enum { F_PASSWD, F_GROUP, F_SHADOW, F_GSHADOW, F_N };

struct eb_accounts {
	struct table users, groups; /* base's then spec's */
	struct eb_accounts_file files[F_N];
	struct eb_accounts_file out[F_N]; /* the ones written (shallow copies) */
	size_t nfiles;
	struct eb_accounts_home *homes;
	size_t nhomes;
};

static void table_add(struct table *t, const char *name, size_t len, uint32_t id, uint32_t gid,
		      unsigned line)
{
	EB_ALLOC_GROW(t->v, t->n + 1, t->cap);
	t->v[t->n].name = eb_xstrndup(name, len);
	t->v[t->n].id = id;
	t->v[t->n].gid = gid;
	t->v[t->n].line = line;
	t->n++;
}

static const struct ent *by_name(const struct table *t, const char *name, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->v[i].name) == len && memcmp(t->v[i].name, name, len) == 0)
			return &t->v[i];
	return NULL;
}

static const struct ent *by_id(const struct table *t, uint32_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	return NULL;
}

/* passwd (7 fields: name, uid at 2, gid at 3) or group (4: gid at 2)
 * lines; lines that do not parse are kept in the bytes and not indexed
 * (pwck reports them, not us) */
static void parse_db(struct table *t, const char *s, size_t len, int is_passwd)
{
	unsigned line = 0;

	for (size_t at = 0; at < len;) {
		const char *p = s + at, *nl = memchr(p, '\n', len - at);
		size_t n = nl ? (size_t)(nl - p) : len - at;
		const char *f[8];
		size_t fl[8], nf = 0;
		uint32_t id, gid = 0;

		line++;
		at += n + (nl ? 1 : 0);
		for (size_t i = 0, start = 0; i <= n && nf < 8; i++)
			if (i == n || p[i] == ':') {
				f[nf] = p + start;
				fl[nf++] = i - start;
				start = i + 1;
			}
		if (nf < (is_passwd ? 7u : 4u) || fl[0] == 0)
			continue;
		if (!eb_spec_id_parse(f[2], fl[2], &id))
			continue;
		if (is_passwd && !eb_spec_id_parse(f[3], fl[3], &gid))
			continue;
		table_add(t, f[0], fl[0], id, gid, line);
	}
}

static struct eb_diag *finding(struct eb_diag_list *diags, const struct eb_spec *spec,
			       unsigned line, unsigned col, const char *rule, size_t *nerr,
			       const char *fmt, ...) EB_PRINTF(7, 8);

static struct eb_diag *finding(struct eb_diag_list *diags, const struct eb_spec *spec,
			       unsigned line, unsigned col, const char *rule, size_t *nerr,
			       const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	struct eb_diag *d;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	d = eb_diag_add(diags, EB_SEV_ERROR, spec->path, line, col, rule, "%s", msg);
	free(msg);
	(*nerr)++;
	return d;
}

/* useradd -m's mode for a new home: HOME_MODE of login.defs, else 0777
 * less its UMASK, else 0755 (Debian's UMASK 022) */
static unsigned home_mode(const char *defs, size_t len)
{
	unsigned umask = 022, mode = 0;
	int have_mode = 0;

	for (size_t at = 0; at < len;) {
		const char *p = defs + at, *nl = memchr(p, '\n', len - at);
		size_t n = nl ? (size_t)(nl - p) : len - at;
		char line[128];
		unsigned v;

		at += n + (nl ? 1 : 0);
		if (n >= sizeof(line))
			continue;
		memcpy(line, p, n);
		line[n] = '\0';
		if (sscanf(line, "HOME_MODE %o", &v) == 1 && v <= 07777)
			mode = v, have_mode = 1;
		else if (sscanf(line, "UMASK %o", &v) == 1 && v <= 0777)
			umask = v;
	}
	return have_mode ? mode : 0777 & ~umask;
}

static int read_base(const struct eb_source_base *base, const char *path, struct eb_buf *b,
		     const struct eb_basefs_node **node, struct eb_error **err)
{
	char *real = NULL;
	int r;

	*node = NULL;
	eb_buf_init(b, 0);
	if (!base->present || !base->fs)
		return 0;
	r = eb_basefile_read(base->fs, base->layers, base->nlayers, path, ACCT_FILE_MAX, b, err);
	if (r > 0 && eb_basefs_resolve(base->fs, path, 1, &real, NULL) == 0) {
		*node = eb_basefs_lookup(base->fs, real);
		free(real);
	}
	return r;
}

static void file_init(struct eb_accounts_file *f, const char *path,
		      const struct eb_basefs_node *n, unsigned mode)
{
	f->path = path;
	f->mode = n ? n->mode : mode;
	f->uid = n ? n->uid : 0;
	f->gid = n ? n->gid : 0;
}

/* A file the base has and bytes appended: a base file without a final
 * newline gets one first, as useradd's line-based rewrite does. */
static void append_line(struct eb_buf *b, const char *fmt, ...) EB_PRINTF(2, 3);
static void append_line(struct eb_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (b->len && b->ptr[b->len - 1] != '\n')
		eb_buf_put(b, "\n", 1);
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	eb_buf_put(b, s, strlen(s));
	free(s);
}

int eb_accounts_load(struct eb_accounts **out, const struct eb_spec *spec,
		     const struct eb_spec_target *t, const struct eb_source_base *base,
		     int64_t epoch, struct eb_diag_list *diags, size_t *nerr, struct eb_error **err)
{
	const struct eb_spec_accounts *sa = &t->accounts;
	struct eb_accounts *a = eb_xcalloc(1, sizeof(*a));
	const struct eb_basefs_node *node[F_N] = { 0 };
	struct eb_buf defs;
	const struct eb_basefs_node *dn;
	int have[F_N] = { 0 };
	static const char *const paths[F_N] = { "etc/passwd", "etc/group", "etc/shadow",
						"etc/gshadow" };
	unsigned hmode;
	/* shadow's last change: the build's epoch in days, as useradd
	 * does with SOURCE_DATE_EPOCH */
	long long days = epoch > 0 ? (long long)(epoch / 86400) : 0;
	int r = 0;

	*out = a;
	for (int i = 0; i < F_N; i++) {
		r = read_base(base, paths[i], &a->files[i].bytes, &node[i], err);
		if (r < 0)
			return r;
		have[i] = r > 0;
	}
	r = read_base(base, "etc/login.defs", &defs, &dn, err);
	if (r < 0)
		return r;
	hmode = r > 0 ? home_mode(defs.ptr, defs.len) : 0755;
	eb_buf_release(&defs);
	r = 0;
	parse_db(&a->users, a->files[F_PASSWD].bytes.ptr, a->files[F_PASSWD].bytes.len, 1);
	parse_db(&a->groups, a->files[F_GROUP].bytes.ptr, a->files[F_GROUP].bytes.len, 0);
	if (!sa->ngroups && !sa->nusers)
		return 0;

	file_init(&a->files[F_PASSWD], paths[F_PASSWD], node[F_PASSWD], 0644);
	file_init(&a->files[F_GROUP], paths[F_GROUP], node[F_GROUP], 0644);
	file_init(&a->files[F_SHADOW], paths[F_SHADOW], node[F_SHADOW], 0640);
	file_init(&a->files[F_GSHADOW], paths[F_GSHADOW], node[F_GSHADOW], 0640);
	/* a base without them (scratch, distroless): root alone, as the
	 * minimal images ship it */
	if (!have[F_PASSWD] && !by_name(&a->users, "root", 4)) {
		append_line(&a->files[F_PASSWD].bytes, "root:x:0:0:root:/root:/sbin/nologin\n");
		table_add(&a->users, "root", 4, 0, 0, 0);
	}
	if (!have[F_GROUP] && !by_name(&a->groups, "root", 4)) {
		append_line(&a->files[F_GROUP].bytes, "root:x:0:\n");
		table_add(&a->groups, "root", 4, 0, 0, 0);
	}

	/* groupadd for each group, in spec order */
	for (size_t i = 0; i < sa->ngroups; i++) {
		const struct eb_spec_group *g = &sa->groups[i];
		const struct ent *same = by_name(&a->groups, g->name, strlen(g->name));
		const struct ent *clash = by_id(&a->groups, g->gid);

		if (same && same->id == g->gid)
			continue; /* the base has it already: not duplicated */
		if (same) {
			finding(diags, spec, g->line, g->col, "EB023", nerr,
				"group '%s' is gid %u in the base's /etc/group (line %u), not %u",
				g->name, (unsigned)same->id, same->line, (unsigned)g->gid);
			continue;
		}
		if (clash) {
			finding(diags, spec, g->line, g->col, "EB023", nerr,
				"gid %u of group '%s' is group '%s' in the base's /etc/group (line %u)",
				(unsigned)g->gid, g->name, clash->name, clash->line);
			continue;
		}
		append_line(&a->files[F_GROUP].bytes, "%s:x:%u:\n", g->name, (unsigned)g->gid);
		if (have[F_GSHADOW])
			append_line(&a->files[F_GSHADOW].bytes, "%s:!::\n", g->name);
		table_add(&a->groups, g->name, strlen(g->name), g->gid, 0, 0);
	}
	/* useradd -m for each user */
	a->homes = eb_xcalloc(sa->nusers + 1, sizeof(*a->homes));
	for (size_t i = 0; i < sa->nusers; i++) {
		const struct eb_spec_user *u = &sa->users[i];
		const struct ent *same = by_name(&a->users, u->name, strlen(u->name));
		const struct ent *clash = by_id(&a->users, u->uid);
		char *home = u->home ? eb_xstrdup(u->home) : eb_xasprintf("/home/%s", u->name);
		const char *shell = u->shell ? u->shell : "/bin/sh";
		uint32_t gid = u->gid;
		const struct eb_basefs_node *hn = NULL;
		char *real = NULL;

		if (same && same->id == u->uid && (!u->has_gid || same->gid == u->gid)) {
			free(home);
			continue; /* the base has this user */
		}
		if (same) {
			finding(diags, spec, u->line, u->col, "EB023", nerr,
				"user '%s' is uid %u gid %u in the base's /etc/passwd (line %u)",
				u->name, (unsigned)same->id, (unsigned)same->gid, same->line);
			free(home);
			continue;
		}
		if (clash) {
			finding(diags, spec, u->line, u->col, "EB023", nerr,
				"uid %u of user '%s' is user '%s' in the base's /etc/passwd (line %u)",
				(unsigned)u->uid, u->name, clash->name, clash->line);
			free(home);
			continue;
		}
		if (u->has_gid && !by_id(&a->groups, u->gid)) {
			struct eb_diag *d = finding(diags, spec, u->line, u->col, "EB022", nerr,
						    "gid %u of user '%s' names no group of the base "
						    "or the spec", (unsigned)u->gid, u->name);
			eb_diag_hint(d, "add it to accounts.groups, or leave gid out for a group "
					"of the user's name");
			free(home);
			continue;
		}
		if (!u->has_gid) {
			/* USERGROUPS_ENAB: a group of the user's name, gid = uid */
			const struct ent *g = by_name(&a->groups, u->name, strlen(u->name));
			if (g) {
				gid = g->id;
			} else if ((g = by_id(&a->groups, u->uid)) != NULL) {
				struct eb_diag *d = finding(diags, spec, u->line, u->col, "EB023", nerr,
							    "the group of user '%s' would be gid %u, "
							    "which is group '%s' already", u->name,
							    (unsigned)u->uid, g->name);
				eb_diag_hint(d, "give the user a gid");
				free(home);
				continue;
			} else {
				gid = u->uid;
				append_line(&a->files[F_GROUP].bytes, "%s:x:%u:\n", u->name,
					    (unsigned)gid);
				if (have[F_GSHADOW])
					append_line(&a->files[F_GSHADOW].bytes, "%s:!::\n", u->name);
				table_add(&a->groups, u->name, strlen(u->name), gid, 0, 0);
			}
		}
		/* the home: made unless the base has that directory; a base
		 * file there is an error, as for useradd -m */
		if (base->present && base->fs && eb_basefs_resolve(base->fs, home, 1, &real, NULL) == 0)
			hn = eb_basefs_lookup(base->fs, real);
		free(real);
		if (hn && hn->type != EB_BASEFS_DIR) {
			struct eb_diag *d = finding(diags, spec, u->line, u->col, "EB024", nerr,
						    "home '%s' of user '%s' is a file of the base, "
						    "not a directory", home, u->name);
			eb_diag_hint(d, "give the user another `home:`");
			free(home);
			continue;
		}
		append_line(&a->files[F_PASSWD].bytes, "%s:x:%u:%u::%s:%s\n", u->name,
			    (unsigned)u->uid, (unsigned)gid, home, shell);
		if (have[F_SHADOW])
			append_line(&a->files[F_SHADOW].bytes, "%s:!:%lld:0:99999:7:::\n", u->name,
				    days);
		if (!hn) {
			struct eb_accounts_home *h = &a->homes[a->nhomes++];
			h->path = home; /* owned by the set */
			h->uid = u->uid;
			h->gid = gid;
			h->mode = hmode;
			home = NULL;
		}
		table_add(&a->users, u->name, strlen(u->name), u->uid, gid, 0);
		free(home);
	}
	/* what changed: the files the base had or that a base without them
	 * needs (passwd and group always, shadow files where the base has them) */
	a->nfiles = 0;
	for (int i = 0; i < F_N; i++)
		if (i < F_SHADOW || have[i])
			a->out[a->nfiles++] = a->files[i];
	return 0;
}

void eb_accounts_free(struct eb_accounts *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->users.n; i++)
		free(a->users.v[i].name);
	free(a->users.v);
	for (size_t i = 0; i < a->groups.n; i++)
		free(a->groups.v[i].name);
	free(a->groups.v);
	for (int i = 0; i < F_N; i++)
		eb_buf_release(&a->files[i].bytes);
	for (size_t i = 0; i < a->nhomes; i++)
		free(a->homes[i].path);
	free(a->homes);
	free(a);
}

size_t eb_accounts_files(const struct eb_accounts *a, const struct eb_accounts_file **files)
{
	*files = a->out;
	return a->nfiles;
}

size_t eb_accounts_homes(const struct eb_accounts *a, const struct eb_accounts_home **homes)
{
	*homes = a->homes;
	return a->nhomes;
}

int eb_accounts_owner(const struct eb_accounts *a, const char *owner, uint32_t *uid,
		      uint32_t *gid, const char **what)
{
	const char *colon = strchr(owner, ':');
	size_t ulen = colon ? (size_t)(colon - owner) : strlen(owner);
	const struct ent *u = NULL;

	*what = owner;
	if (eb_spec_id_parse(owner, ulen, uid)) {
		*gid = *uid;
	} else if ((u = by_name(&a->users, owner, ulen)) != NULL) {
		*uid = u->id;
		*gid = u->gid;
	} else {
		return -1;
	}
	if (colon) {
		const struct ent *g;
		*what = colon + 1;
		if (eb_spec_id_parse(colon + 1, strlen(colon + 1), gid))
			return 0;
		if (!(g = by_name(&a->groups, colon + 1, strlen(colon + 1))))
			return -2;
		*gid = g->id;
	}
	return 0;
}
