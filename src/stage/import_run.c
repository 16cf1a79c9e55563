/*
 * import_run.c - the RUN lines of `envbuild import`: each `&&`/`;`
 * segment is converted (apt-get install -> apt, pip install -> pins,
 * groupadd/useradd -> accounts, mkdir/chown/chmod -> dirs), dropped as
 * noise that has no meaning in a declared image (apt-get update, rm -rf
 * /var/lib/apt/lists, set -e, cd), or reported with a hint.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "envspec/accounts.h"
#include "stage/import_internal.h"
#include "util/alloc.h"
#include "util/fs.h"

struct seg {
	struct eb_imp_ctx *c;
	const struct eb_dfinstr *in;
	struct eb_imp_target *t;
	struct eb_dfword *w; /* the segment's words */
	size_t n;
	size_t end;          /* offset in args one past its last word */
	/* dirs made by mkdir in this RUN, until its end */
	struct eb_imp_dir *mk;
	size_t nmk;
};

static void pos_of(const struct seg *s, size_t k, unsigned *line, unsigned *col)
{
	size_t n = strlen(s->in->args);
	size_t off = k < s->n ? s->w[k].off : (s->n ? s->w[0].off : 0);

	if (!n || !s->in->lines) {
		*line = s->in->line;
		*col = s->in->col;
		return;
	}
	if (off >= n)
		off = n - 1;
	*line = s->in->lines[off];
	*col = s->in->cols[off];
}

/* the segment as written, shortened for a message */
static char *seg_text(const struct seg *s)
{
	size_t a = s->n ? s->w[0].off : 0, len = s->end > a ? s->end - a : 0;
	char *t;

	if (!s->in->lines)
		a = 0, len = strlen(s->in->args);
	while (len && isspace((unsigned char)s->in->args[a + len - 1]))
		len--;
	if (len > 72) {
		t = eb_xasprintf("%.*s…", 69, s->in->args + a);
	} else {
		t = eb_xstrndup(s->in->args + a, len);
	}
	for (char *p = t; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
	return t;
}

static void seg_left(struct seg *s, size_t k, const char *kind, const char *hint, const char *why)
{
	unsigned line, col;
	char *t = seg_text(s);

	pos_of(s, k, &line, &col);
	eb_imp_left(s->c, line, col, kind, hint, "not converted: RUN %s%s%s", t, why ? ": " : "",
		    why ? why : "");
	free(t);
}

static const char *base_cmd(const char *w)
{
	const char *b = strrchr(w, '/');
	return b ? b + 1 : w;
}

/* ---- apt-get ---------------------------------------------------------------- */

static int apt_pkg_valid(const char *s)
{
	if (!isalnum((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("+-.:=~", *s)))
			return 0;
	return 1;
}

static void apt(struct seg *s, size_t k0)
{
	size_t k = k0 + 1;
	const char *sub = NULL;
	size_t subk = 0;

	for (; k < s->n; k++) {
		const char *a = s->w[k].s;
		if (strcmp(a, "-o") == 0 || strcmp(a, "-t") == 0 || strcmp(a, "-c") == 0) {
			k++;
			continue;
		}
		if (a[0] == '-')
			continue;
		sub = a;
		subk = k;
		break;
	}
	if (!sub) {
		seg_left(s, k0, "RUN apt", NULL, NULL);
		return;
	}
	if (!strcmp(sub, "update") || !strcmp(sub, "clean") || !strcmp(sub, "autoclean") ||
	    !strcmp(sub, "autoremove"))
		return; /* no meaning in a declared image: the pins say what is installed */
	if (strcmp(sub, "install") != 0) {
		seg_left(s, subk, "RUN apt", !strcmp(sub, "upgrade") || !strcmp(sub, "dist-upgrade")
				  ? "pin the newer versions (envbuild pin --upgrade-package)" : NULL,
			 NULL);
		return;
	}
	for (k = subk + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		if (strcmp(a, "-o") == 0 || strcmp(a, "-t") == 0) {
			k++;
			continue;
		}
		if (a[0] == '-')
			continue; /* -y, --no-install-recommends, -q: envbuild installs no recommends */
		if (s->w[k].has_var || !apt_pkg_valid(a) || strchr(a, '/')) {
			unsigned line, col;
			pos_of(s, k, &line, &col);
			eb_imp_left(s->c, line, col, "RUN apt", "name the package and pin it",
				    "not converted: apt-get install of '%s'", a);
			continue;
		}
		eb_imp_strs_add(&s->t->apt, a);
	}
}

/* rm -rf of caches an image build leaves: noise */
static int rm_noise(struct seg *s, size_t k0)
{
	static const char *const ok[] = { "/var/lib/apt/lists", "/var/cache/apt", "/tmp/",
					  "/root/.cache", "~/.cache", "/var/tmp/", "/var/log/apt",
					  "$HOME/.cache", NULL };
	int any = 0;

	for (size_t k = k0 + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		int hit = 0;
		if (a[0] == '-')
			continue;
		for (const char *const *p = ok; *p; p++)
			if (strncmp(a, *p, strlen(*p)) == 0)
				hit = 1;
		if (!hit)
			return 0;
		any = 1;
	}
	return any;
}

/* ---- pip ------------------------------------------------------------------- */

/* A requirement pinned exactly: NAME[extras]==VERSION (no wildcard), an
 * optional marker or hash after it */
static int pinned(const char *r)
{
	const char *eq = strstr(r, "==");
	if (!eq || strstr(r, "==="))
		return 0;
	for (const char *p = r; p < eq; p++)
		if (strchr("<>!~=,", *p))
			return 0;
	for (const char *p = eq + 2; *p && *p != ';' && !isspace((unsigned char)*p); p++)
		if (strchr("*<>,!~", *p))
			return 0;
	return 1;
}

/* where an image path came from in the build context, through files */
static char *context_of(const struct eb_imp_target *t, const char *img)
{
	for (size_t i = t->nfiles; i-- > 0;) {
		const struct eb_imp_file *f = &t->files[i];
		size_t dl = strlen(f->dest);
		const char *b = strrchr(f->src, '/');
		b = b ? b + 1 : f->src;
		if (strcmp(f->dest, img) == 0)
			return eb_xstrdup(f->src);
		if (dl && f->dest[dl - 1] == '/') {
			char *x = eb_xasprintf("%s%s", f->dest, b);
			int hit = strcmp(x, img) == 0;
			free(x);
			if (hit)
				return eb_xstrdup(f->src);
			if (strncmp(img, f->dest, dl) == 0)
				return strcmp(f->src, ".") == 0 ? eb_xstrdup(img + dl)
								 : eb_xasprintf("%s/%s", f->src, img + dl);
		} else if (strncmp(img, f->dest, dl) == 0 && img[dl] == '/') {
			return strcmp(f->src, ".") == 0 ? eb_xstrdup(img + dl + 1)
							 : eb_xasprintf("%s/%s", f->src, img + dl + 1);
		}
	}
	return NULL;
}

static char *img_path(const struct eb_imp_target *t, const char *p)
{
	char *a, *n;
	if (p[0] == '/')
		return eb_xstrdup(p);
	a = eb_xasprintf("%s/%s", t->workdir ? t->workdir : "", p);
	n = eb_path_normalize(a);
	free(a);
	return n ? n : eb_xstrdup(p);
}

static void reqfile(struct seg *s, size_t k, const char *file)
{
	char *img = img_path(s->t, file);
	char *src = context_of(s->t, img);
	unsigned line, col;

	pos_of(s, k, &line, &col);
	if (!src) {
		eb_imp_left(s->c, line, col, "RUN pip", "COPY the file from the build context first",
			    "not converted: pip install -r %s: no COPY brings it into the image", file);
	} else {
		char *full = eb_path_join(s->c->context, src);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
			eb_imp_strs_add(&s->t->requirements, src);
		else
			eb_imp_left(s->c, line, col, "RUN pip", NULL,
				    "not converted: pip install -r %s: '%s' is not a file of the "
				    "build context", file, src);
		free(full);
	}
	free(img);
	free(src);
}

static void pip_install(struct seg *s, size_t k0)
{
	static const char *const flags[] = { "--no-cache-dir", "-U", "--upgrade", "-q", "--quiet",
					     "-qq", "--user", "--break-system-packages",
					     "--disable-pip-version-check", "--no-compile", "-v",
					     "--verbose", "--no-warn-script-location", "--system",
					     "--compile", "--prefer-binary", "--only-binary=:all:",
					     "--no-input", "--ignore-installed", "-I", NULL };
	static const char *const valued[] = { "--progress-bar", "--root-user-action", "--timeout",
					      "--retries", NULL };

	for (size_t k = k0 + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		unsigned line, col;
		int known = 0;

		pos_of(s, k, &line, &col);
		for (const char *const *f = flags; *f; f++)
			if (strcmp(a, *f) == 0)
				known = 1;
		for (const char *const *f = valued; *f; f++)
			if (strcmp(a, *f) == 0) {
				known = 1;
				k++;
			} else if (strncmp(a, *f, strlen(*f)) == 0 && a[strlen(*f)] == '=') {
				known = 1;
			}
		if (known)
			continue;
		if (s->w[k].has_var) {
			eb_imp_left(s->c, line, col, "RUN pip", "give the ARG a default",
				    "not converted: pip argument '%s' uses a variable without a value", a);
			continue;
		}
		if (!strcmp(a, "-r") || !strcmp(a, "--requirement")) {
			if (k + 1 < s->n)
				reqfile(s, k + 1, s->w[k + 1].s);
			k++;
			continue;
		}
		if (!strncmp(a, "-r", 2) || !strncmp(a, "--requirement=", 14)) {
			reqfile(s, k, a[1] == 'r' ? a + 2 : a + 14);
			continue;
		}
		if (a[0] == '-') {
			const char *hint = !strncmp(a, "-e", 2) || !strncmp(a, "--editable", 10)
				? "build a wheel of the project and pin it"
				: !strncmp(a, "--index-url", 11) || !strcmp(a, "-i")
				? "give import --index URL (the spec's index)"
				: !strncmp(a, "--extra-index-url", 17)
				? "list it in the spec's extra_indexes" : NULL;
			eb_imp_left(s->c, line, col, "RUN pip", hint, "not converted: pip option %s", a);
			if ((!strcmp(a, "-i") || !strcmp(a, "--index-url") || !strcmp(a, "-c") ||
			     !strcmp(a, "--extra-index-url") || !strcmp(a, "-e") ||
			     !strcmp(a, "--constraint") || !strcmp(a, "-f") ||
			     !strcmp(a, "--find-links") || !strcmp(a, "--target") ||
			     !strcmp(a, "--prefix") || !strcmp(a, "-t")) && k + 1 < s->n)
				k++;
			continue;
		}
		if (!strcmp(a, ".") || a[0] == '.' || a[0] == '/' || strstr(a, ".whl") ||
		    strstr(a, "://") || strncmp(a, "git+", 4) == 0) {
			eb_imp_left(s->c, line, col, "RUN pip",
				    strstr(a, "git+") ? "pin a VCS URL with its commit, or build a wheel"
						      : "build a wheel of it and pin it",
				    "not converted: pip install of '%s' (a path or URL)", a);
			continue;
		}
		{
			char name[64];
			size_t nl = strcspn(a, "=<>!~[; ");
			snprintf(name, sizeof(name), "%.*s", (int)(nl < 63 ? nl : 63), a);
			for (char *p = name; *p; p++)
				*p = (char)tolower((unsigned char)*p);
			if (!strcmp(name, "pip") || !strcmp(name, "setuptools") || !strcmp(name, "wheel")) {
				eb_imp_left(s->c, line, col, "RUN pip upgrade",
					    "envbuild installs without pip; pin it in `packages` if the "
					    "image itself needs it", "not converted: pip install of %s", a);
				continue;
			}
		}
		if (pinned(a))
			eb_imp_strs_add(&s->t->packages, a);
		else
			eb_imp_strs_add(&s->t->loose, a);
	}
}

/* pip|pip3|pip3.X install, python[3[.X]] -m pip install, uv pip install:
 * index of "install", or 0 */
static size_t pip_at(const struct seg *s, size_t k)
{
	const char *c0 = base_cmd(s->w[k].s);

	if ((!strncmp(c0, "pip", 3) && (c0[3] == '\0' || isdigit((unsigned char)c0[3]))) &&
	    k + 1 < s->n && !strcmp(s->w[k + 1].s, "install"))
		return k + 1;
	if (!strncmp(c0, "python", 6) && k + 3 < s->n && !strcmp(s->w[k + 1].s, "-m") &&
	    !strcmp(s->w[k + 2].s, "pip") && !strcmp(s->w[k + 3].s, "install"))
		return k + 3;
	if (!strcmp(c0, "uv") && k + 2 < s->n && !strcmp(s->w[k + 1].s, "pip") &&
	    !strcmp(s->w[k + 2].s, "install"))
		return k + 2;
	return 0;
}

/* ---- accounts ---------------------------------------------------------------- */

static int id_of(const char *s, uint32_t *out)
{
	return eb_spec_id_parse(s, strlen(s), out);
}

static int gid_by_name(const struct eb_imp_target *t, const char *g, uint32_t *gid)
{
	if (id_of(g, gid))
		return 1;
	if (!strcmp(g, "root")) {
		*gid = 0;
		return 1;
	}
	for (size_t i = 0; i < t->ngroups; i++)
		if (!strcmp(t->groups[i].name, g)) {
			*gid = t->groups[i].gid;
			return 1;
		}
	return 0;
}

static int uid_used(const struct eb_imp_target *t, uint32_t uid)
{
	for (size_t i = 0; i < t->nusers; i++)
		if (t->users[i].uid == uid)
			return 1;
	return 0;
}

/* groupadd [-g GID] [-r] [-f] NAME; addgroup [--gid GID|-g GID] [--system|-S] NAME */
static void groupadd(struct seg *s, size_t k0)
{
	const char *name = NULL, *gid = NULL;

	for (size_t k = k0 + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		if ((!strcmp(a, "-g") || !strcmp(a, "--gid")) && k + 1 < s->n)
			gid = s->w[++k].s;
		else if (!strncmp(a, "--gid=", 6))
			gid = a + 6;
		else if (!strcmp(a, "-r") || !strcmp(a, "--system") || !strcmp(a, "-S") ||
			 !strcmp(a, "-f") || !strcmp(a, "--force") || !strcmp(a, "--quiet"))
			continue;
		else if (a[0] == '-') {
			seg_left(s, k, "RUN groupadd", NULL, "an option envbuild's accounts do not have");
			return;
		} else if (!name)
			name = a;
	}
	if (!name || !gid || !eb_spec_login_name_valid(name)) {
		seg_left(s, k0, "RUN groupadd", "give the group a gid (-g): accounts are declared "
			 "with their ids", NULL);
		return;
	}
	s->t->groups = eb_xreallocarray(s->t->groups, s->t->ngroups + 1, sizeof(*s->t->groups));
	s->t->groups[s->t->ngroups].name = eb_xstrdup(name);
	if (!id_of(gid, &s->t->groups[s->t->ngroups].gid)) {
		free(s->t->groups[s->t->ngroups].name);
		seg_left(s, k0, "RUN groupadd", NULL, "the gid is not a number");
		return;
	}
	s->t->ngroups++;
}

/* useradd [-m] [-u UID] [-g G] [-s SH] [-d HOME] NAME; adduser (Debian's
 * --uid/--gid/--ingroup/--home/--shell, busybox's -u/-G/-h/-s/-D) */
static void useradd(struct seg *s, size_t k0, int debian_adduser)
{
	const char *name = NULL, *uid = NULL, *gid = NULL, *shell = NULL, *home = NULL;
	struct eb_imp_user u = { 0 };

	for (size_t k = k0 + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		const char *v = k + 1 < s->n ? s->w[k + 1].s : NULL;
#define OPT(x) (!strcmp(a, x) && v && (k++, 1))
		if (OPT("-u") || OPT("--uid"))
			uid = v;
		else if (OPT("-g") || OPT("--gid") || OPT("--ingroup"))
			gid = v;
		else if (!debian_adduser && base_cmd(s->w[k0].s)[0] == 'a' && OPT("-G"))
			gid = v; /* busybox adduser -G: the primary group */
		else if (OPT("-s") || OPT("--shell"))
			shell = v;
		else if (OPT("-d") || OPT("--home") || OPT("--home-dir") || OPT("-h"))
			home = v;
		else if (OPT("-c") || OPT("--comment") || OPT("--gecos"))
			continue; /* the GECOS field: not kept */
		else if (!strcmp(a, "-m") || !strcmp(a, "--create-home") || !strcmp(a, "-D") ||
			 !strcmp(a, "--disabled-password") || !strcmp(a, "--disabled-login") ||
			 !strcmp(a, "-U") || !strcmp(a, "--user-group") || !strcmp(a, "-l") ||
			 !strcmp(a, "--no-log-init") || !strcmp(a, "--quiet") || !strcmp(a, "-q") ||
			 !strcmp(a, "-N") || !strcmp(a, "--no-user-group"))
			continue;
		else if (!strncmp(a, "--uid=", 6))
			uid = a + 6;
		else if (!strncmp(a, "--gid=", 6))
			gid = a + 6;
		else if (!strncmp(a, "--shell=", 8))
			shell = a + 8;
		else if (!strncmp(a, "--home=", 7))
			home = a + 7;
		else if (a[0] == '-') {
			seg_left(s, k, "RUN useradd",
				 !strcmp(a, "-r") || !strcmp(a, "--system") || !strcmp(a, "-S")
					 ? "give the system user a uid (-u): accounts are declared with ids"
					 : NULL, "an option envbuild's accounts do not have");
			return;
		} else if (!name) {
			name = a;
		} else {
			seg_left(s, k, "RUN useradd", NULL, "more than one name");
			return;
		}
#undef OPT
	}
	if (!name || !eb_spec_login_name_valid(name)) {
		seg_left(s, k0, "RUN useradd", NULL, "no valid login name");
		return;
	}
	if (uid && !id_of(uid, &u.uid)) {
		seg_left(s, k0, "RUN useradd", NULL, "the uid is not a number");
		return;
	}
	if (!uid) {
		/* the first free uid from 1000 (UID_MIN), as on a base without users */
		while (uid_used(s->t, s->c->next_uid))
			s->c->next_uid++;
		u.uid = s->c->next_uid++;
	}
	if (gid) {
		if (!gid_by_name(s->t, gid, &u.gid)) {
			seg_left(s, k0, "RUN useradd", "declare the group first (groupadd -g GID NAME)",
				 "its group is not one this Dockerfile declares");
			return;
		}
		u.has_gid = 1;
	}
	u.name = eb_xstrdup(name);
	u.home = home ? eb_xstrdup(home) : NULL;
	/* Debian's defaults: useradd /bin/sh, adduser /bin/bash */
	u.shell = shell ? eb_xstrdup(shell) : debian_adduser ? eb_xstrdup("/bin/bash") : NULL;
	s->t->users = eb_xreallocarray(s->t->users, s->t->nusers + 1, sizeof(*s->t->users));
	s->t->users[s->t->nusers++] = u;
}

/* ---- mkdir, chown, chmod ----------------------------------------------------- */

static struct eb_imp_dir *mk_find(struct seg *s, const char *p)
{
	for (size_t i = 0; i < s->nmk; i++)
		if (!strcmp(s->mk[i].path, p))
			return &s->mk[i];
	return NULL;
}

static void mkdir_(struct seg *s, size_t k0)
{
	unsigned mode = 0755;

	for (size_t k = k0 + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		char *p;
		if (!strcmp(a, "-p") || !strcmp(a, "--parents") || !strcmp(a, "-v"))
			continue;
		if ((!strcmp(a, "-m") || !strcmp(a, "--mode")) && k + 1 < s->n) {
			unsigned v;
			if (sscanf(s->w[++k].s, "%o", &v) == 1 && v <= 07777)
				mode = v;
			else {
				seg_left(s, k, "RUN mkdir", NULL, "a symbolic -m mode");
				return;
			}
			continue;
		}
		if (a[0] == '-' || s->w[k].has_var) {
			seg_left(s, k, "RUN mkdir", NULL, NULL);
			return;
		}
		p = img_path(s->t, a);
		if (!mk_find(s, p)) {
			s->mk = eb_xreallocarray(s->mk, s->nmk + 1, sizeof(*s->mk));
			s->mk[s->nmk].path = p;
			s->mk[s->nmk].owner = NULL;
			s->mk[s->nmk++].mode = mode;
		} else {
			free(p);
		}
	}
}

/* chmod MODE: octal, or u/g/o/a +-= rwxst applied to the current mode */
static int mode_apply(const char *m, unsigned *mode)
{
	unsigned v;
	char *end;

	if (isdigit((unsigned char)*m)) {
		v = (unsigned)strtoul(m, &end, 8);
		if (*end || v > 07777)
			return 0;
		*mode = v;
		return 1;
	}
	while (*m) {
		unsigned who = 0, bits = 0;
		char op;
		for (; *m && strchr("ugoa", *m); m++)
			who |= *m == 'u' ? 04700 : *m == 'g' ? 02070 : *m == 'o' ? 01007 : 07777;
		if (!who)
			who = 07777;
		if (!*m || !strchr("+-=", *m))
			return 0;
		op = *m++;
		for (; *m && strchr("rwxst", *m); m++)
			bits |= *m == 'r' ? 0444 : *m == 'w' ? 0222 : *m == 'x' ? 0111
			      : *m == 's' ? 06000 : 01000;
		bits &= who;
		if (op == '+')
			*mode |= bits;
		else if (op == '-')
			*mode &= ~bits;
		else
			*mode = (*mode & ~who) | bits;
		if (*m == ',')
			m++;
		else if (*m)
			return 0;
	}
	return 1;
}

static void chown_chmod(struct seg *s, size_t k0, int is_chown)
{
	const char *val = NULL;
	size_t nt = 0;

	for (size_t k = k0 + 1; k < s->n; k++) {
		const char *a = s->w[k].s;
		if (!strcmp(a, "-R") || !strcmp(a, "--recursive") || !strcmp(a, "-v") ||
		    !strcmp(a, "-h"))
			continue;
		if (a[0] == '-' || s->w[k].has_var) {
			seg_left(s, k, is_chown ? "RUN chown" : "RUN chmod", NULL, NULL);
			return;
		}
		if (!val) {
			val = a;
			continue;
		}
		nt++;
	}
	if (!val || !nt) {
		seg_left(s, k0, is_chown ? "RUN chown" : "RUN chmod", NULL, NULL);
		return;
	}
	/* every path must be a directory made by mkdir earlier in this RUN */
	for (size_t k = k0 + 1, seen = 0; k < s->n; k++) {
		const char *a = s->w[k].s;
		char *p;
		if (a[0] == '-')
			continue;
		if (!seen++)
			continue; /* the owner or mode */
		p = img_path(s->t, a);
		if (!mk_find(s, p)) {
			free(p);
			seg_left(s, k, is_chown ? "RUN chown" : "RUN chmod",
				 is_chown ? "give the files entry that copies it `chown`, or make it "
					    "with mkdir in the same RUN (-> dirs)"
					  : "give the files entry that copies it `chmod`, or make it "
					    "with mkdir in the same RUN (-> dirs)",
				 "not a directory this RUN makes");
			return;
		}
		free(p);
	}
	for (size_t k = k0 + 1, seen = 0; k < s->n; k++) {
		const char *a = s->w[k].s;
		struct eb_imp_dir *d;
		char *p;
		if (a[0] == '-')
			continue;
		if (!seen++)
			continue;
		p = img_path(s->t, a);
		d = mk_find(s, p);
		free(p);
		if (is_chown) {
			if (!eb_spec_owner_valid(val)) {
				seg_left(s, k0, "RUN chown", NULL, "an owner envbuild cannot name");
				return;
			}
			free(d->owner);
			d->owner = eb_xstrdup(val);
		} else if (!mode_apply(val, &d->mode)) {
			seg_left(s, k0, "RUN chmod", NULL, "a mode envbuild cannot read");
			return;
		}
	}
}

/* ---- segments ------------------------------------------------------------------ */

static void segment(struct seg *s)
{
	size_t k = 0;
	const char *c0;

	/* VAR=value before a command: its environment only (DEBIAN_FRONTEND) */
	while (k < s->n && strchr(s->w[k].s, '=') && !s->w[k].quoted &&
	       (isalpha((unsigned char)s->w[k].s[0]) || s->w[k].s[0] == '_'))
		k++;
	if (k < s->n && !strcmp(s->w[k].s, "sudo"))
		k++;
	if (k >= s->n)
		return;
	c0 = base_cmd(s->w[k].s);
	if (!strcmp(c0, "set") || !strcmp(c0, "true") || !strcmp(c0, ":") || !strcmp(c0, "cd"))
		return;
	if (!strcmp(c0, "apt-get") || !strcmp(c0, "apt")) {
		apt(s, k);
	} else if (!strcmp(c0, "rm") && rm_noise(s, k)) {
		return;
	} else if (pip_at(s, k)) {
		pip_install(s, pip_at(s, k));
	} else if (!strcmp(c0, "groupadd") || !strcmp(c0, "addgroup")) {
		groupadd(s, k);
	} else if (!strcmp(c0, "useradd")) {
		useradd(s, k, 0);
	} else if (!strcmp(c0, "adduser")) {
		/* Debian's adduser takes long options; busybox's -D/-u/-G */
		int busybox = 0;
		for (size_t q = k + 1; q < s->n; q++)
			if (!strcmp(s->w[q].s, "-D") || !strcmp(s->w[q].s, "-S"))
				busybox = 1;
		useradd(s, k, !busybox);
	} else if (!strcmp(c0, "mkdir")) {
		mkdir_(s, k);
	} else if (!strcmp(c0, "chown") || !strcmp(c0, "chmod")) {
		chown_chmod(s, k, c0[2] == 'o');
	} else if (!strncmp(c0, "python", 6) && k + 2 < s->n && !strcmp(s->w[k + 1].s, "-m") &&
		   !strcmp(s->w[k + 2].s, "compileall")) {
		seg_left(s, k, "RUN compileall",
			 "bytecode is automatic: envbuild compiles what it installs", NULL);
	} else if (!strcmp(c0, "git")) {
		seg_left(s, k, "RUN git", "build a wheel of it, or pin a VCS URL with its commit",
			 NULL);
	} else if (!strcmp(c0, "curl") || !strcmp(c0, "wget")) {
		seg_left(s, k, "RUN download",
			 "download it into the project (checked by its digest) and list it in `files`",
			 NULL);
	} else if (!strcmp(c0, "conda") || !strcmp(c0, "mamba") || !strcmp(c0, "micromamba")) {
		seg_left(s, k, "RUN conda", "pin the Python packages as wheels in requirements",
			 NULL);
	} else {
		seg_left(s, k, "RUN other", NULL, NULL);
	}
}

static int compound(const char *w)
{
	static const char *const kw[] = { "if", "then", "else", "elif", "fi", "for", "do", "done",
					  "while", "until", "case", "esac", "{", "}", "(", NULL };
	for (const char *const *k = kw; *k; k++)
		if (!strcmp(w, *k))
			return 1;
	return w[0] == '(';
}

void eb_imp_run(struct eb_imp_ctx *c, const struct eb_dfinstr *in, struct eb_imp_target *t)
{
	struct eb_dfwords w = { 0 };
	struct seg s = { 0 };
	const char *text = in->args;
	char *alloc = NULL;
	size_t start = 0;

	s.c = c;
	s.in = in;
	s.t = t;
	if (in->heredoc) {
		eb_imp_left(c, in->line, in->col, "RUN heredoc", NULL,
			    "not converted: RUN with a heredoc script");
		return;
	}
	{
		struct eb_dfwords ex = { 0 };
		json_t *j;
		/* exec form: ["sh", "-c", "..."] is the shell form; the others
		 * are one command */
		while (isspace((unsigned char)*text))
			text++;
		if (*text == '[' && (j = json_loads(text, JSON_DECODE_ANY, NULL)) != NULL) {
			if (json_is_array(j) && json_array_size(j) == 3 &&
			    json_is_string(json_array_get(j, 2)) &&
			    !strcmp(json_string_value(json_array_get(j, 1)) ?
				    json_string_value(json_array_get(j, 1)) : "", "-c")) {
				alloc = eb_xstrdup(json_string_value(json_array_get(j, 2)));
			} else {
				eb_imp_left(c, in->line, in->col, "RUN other", NULL,
					    "not converted: RUN %s", in->args);
				json_decref(j);
				return;
			}
			json_decref(j);
			s.in = NULL;
		}
		(void)ex;
	}
	if (alloc) {
		/* positions of the JSON string's content are not kept: the RUN's */
		struct eb_dfinstr pseudo = *in;
		pseudo.args = alloc;
		pseudo.lines = NULL;
		pseudo.cols = NULL;
		s.in = &pseudo;
		eb_dfinstr_words(alloc, '\\', eb_imp_var, c, &w);
		goto split;
	}
	s.in = in;
	eb_dfinstr_words(in->args, '\\', eb_imp_var, c, &w);
split:
	/* RUN --mount=type=cache,...: a cache of the Dockerfile's own build,
	 * noise here; other RUN flags are reported and the command read */
	while (start < w.n && !strncmp(w.v[start].s, "--", 2)) {
		if (strncmp(w.v[start].s, "--mount=", 8) != 0 ||
		    !strstr(w.v[start].s, "type=cache")) {
			unsigned line, col;
			s.w = w.v + start;
			s.n = 1;
			pos_of(&s, 0, &line, &col);
			eb_imp_left(c, line, col, "RUN flag", NULL, "not converted: RUN option %s",
				    w.v[start].s);
		}
		start++;
	}
	for (size_t k = start; k <= w.n; k++) {
		int cut = k == w.n || (w.v[k].op && (!strcmp(w.v[k].s, "&&") || !strcmp(w.v[k].s, ";")));
		if (!cut)
			continue;
		s.w = w.v + start;
		s.n = k - start;
		s.end = s.n ? s.w[s.n - 1].off + strlen(s.w[s.n - 1].s) : 0;
		s.end = k < w.n ? w.v[k].off : strlen(s.in->args);
		if (s.n && compound(s.w[0].s)) {
			/* if/for/while/case: the rest of the RUN is one script */
			s.end = strlen(s.in->args);
			s.n = w.n - start;
			seg_left(&s, 0, "RUN script", NULL, "a shell if/for/while/case");
			break;
		}
		if (s.n) {
			int piped = 0;
			for (size_t q = 0; q < s.n; q++)
				if (s.w[q].op)
					piped = 1;
			if (piped)
				seg_left(&s, 0, "RUN pipeline", NULL, "a pipeline or `||`");
			else
				segment(&s);
		}
		start = k + 1;
	}
	/* the directories this RUN made */
	for (size_t i = 0; i < s.nmk; i++) {
		size_t k;
		for (k = 0; k < t->ndirs; k++)
			if (!strcmp(t->dirs[k].path, s.mk[i].path))
				break;
		if (k < t->ndirs) {
			/* made again by a later RUN: its owner and mode win */
			free(t->dirs[k].path);
			free(t->dirs[k].owner);
			t->dirs[k] = s.mk[i];
			continue;
		}
		t->dirs = eb_xreallocarray(t->dirs, t->ndirs + 1, sizeof(*t->dirs));
		t->dirs[t->ndirs++] = s.mk[i];
	}
	free(s.mk);
	eb_dfwords_free(&w);
	free(alloc);
}
