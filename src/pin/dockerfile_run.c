/*
 * dockerfile_run.c - the RUN half of the Dockerfile reader (see
 * dockerfile.h): a RUN line split into simple commands, and the pip, uv,
 * pipx, conda and apt-get installs among them taken apart; with the
 * COPY/ADD/WORKDIR bookkeeping that finds the file behind `-r FILE`, and
 * the exec form's JSON array.  dockerfile.c reads the lines, words and the
 * other instructions and calls in here (dockerfile_internal.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pin/dockerfile.h"
#include "pin/dockerfile_internal.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/buf.h"

/* ---- files in the image, for -r FILE ---------------------------------- */

/* base joined with path, normalised ("." and ".." and "//" removed); an
 * absolute path ignores base.  Caller frees. */
static char *image_path(const char *base, const char *path)
{
	size_t cap = (base ? strlen(base) : 0) + strlen(path) + 3, n = 0;
	char *in = eb_xmalloc(cap), *out = eb_xmalloc(cap), *save = NULL, *tok;

	snprintf(in, cap, "%s/%s", path[0] == '/' || !base ? "" : base, path);
	out[0] = '\0';
	for (tok = strtok_r(in, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			char *sl = strrchr(out, '/');
			n = sl ? (size_t)(sl - out) : 0;
			out[n] = '\0';
			continue;
		}
		n += (size_t)snprintf(out + n, cap - n, "/%s", tok);
	}
	if (!n)
		strcpy(out, "/");
	free(in);
	return out;
}

void eb_dockerfile__copies_reset(struct parser *p)
{
	for (size_t i = 0; i < p->ncopies; i++) {
		free(p->copies[i].src);
		free(p->copies[i].dest);
	}
	p->ncopies = 0;
	free(p->workdir);
	p->workdir = NULL;
}

/* COPY/ADD [--flags] SRC... DEST (or the JSON form): remember which
 * context paths land where.  --from copies come from another stage or
 * image and are not followed; URLs and heredoc sources are skipped. */
static int json_array(const struct pstr *src, size_t i, size_t e, struct wordvec *out);

void eb_dockerfile__do_copy(struct parser *p, const struct pstr *ll, size_t a)
{
	struct wordvec words = { 0 };
	struct lexer lx;
	size_t first = 0;
	int from = 0;

	if (a < ll->len && ll->s[a] == '[' && json_array(ll, a, ll->len, &words) == 0) {
		/* exec form: words are set */
	} else {
		eb_dockerfile__wordvec_release(&words);
		memset(&words, 0, sizeof(words));
		eb_dockerfile__lexer_init(&lx, ll, a, ll->len, p->esc, 0, eb_dockerfile__current_scope(p));
		for (;;) {
			struct word *w = eb_dockerfile__wordvec_push(&words);
			if (eb_dockerfile__lex_next(&lx, w) != TOK_WORD) {
				eb_dockerfile__word_release(&words.w[--words.n]);
				break;
			}
		}
	}
	while (first < words.n && strncmp(eb_dockerfile__pstr_str(&words.w[first].t), "--", 2) == 0) {
		if (strncmp(eb_dockerfile__pstr_str(&words.w[first].t), "--from", 6) == 0)
			from = 1;
		first++;
	}
	if (!from && words.n >= first + 2) {
		const struct word *dw = &words.w[words.n - 1];
		const char *dest = eb_dockerfile__pstr_str(&dw->t);
		int many = words.n - first > 2;
		char *d = image_path(p->workdir, dest);
		for (size_t i = first; i + 1 < words.n; i++) {
			const char *src = eb_dockerfile__pstr_str(&words.w[i].t);
			struct copy *c;
			if (strstr(src, "://") || strncmp(src, "<<", 2) == 0)
				continue;
			if (words.w[i].unresolved) {
				/* "$EXAMPLE_DIR/requirements.txt": where the variable
				 * points is unknown, the tail after it is kept (a
				 * context path whose root is searched for) */
				const char *dollar = strrchr(src, '$');
				const char *sl = dollar ? strchr(dollar, '/') : NULL;
				if (!sl || !sl[1])
					continue;
				src = sl + 1;
			}
			EB_ALLOC_GROW(p->copies, p->ncopies + 1, p->copies_cap);
			c = &p->copies[p->ncopies++];
			c->src = eb_xstrdup(src);
			c->dest = eb_xstrdup(d);
			/* "." (and "x/."): the working directory itself */
			c->dest_dir = many || (dw->t.len && dest[dw->t.len - 1] == '/') ||
				      strcmp(d, "/") == 0 || strcmp(dest, ".") == 0 ||
				      (dw->t.len >= 2 && strcmp(dest + dw->t.len - 2, "/.") == 0);
		}
		free(d);
	}
	eb_dockerfile__wordvec_release(&words);
}

void eb_dockerfile__do_workdir(struct parser *p, const struct pstr *ll, size_t a)
{
	struct lexer lx;
	struct word w = { 0 };

	eb_dockerfile__lexer_init(&lx, ll, a, ll->len, p->esc, 0, eb_dockerfile__current_scope(p));
	if (eb_dockerfile__lex_next(&lx, &w) == TOK_WORD && !w.unresolved) {
		char *d = image_path(p->workdir, eb_dockerfile__pstr_str(&w.t));
		free(p->workdir);
		p->workdir = d;
	}
	eb_dockerfile__word_release(&w);
}

/* The build-context path of the file an install reads at text (-r FILE). */
static void locate_reqfile(struct parser *p, struct eb_dockerfile_pip_arg *a)
{
	const char *base = p->cwd ? p->cwd : p->workdir;
	char *img;

	if (a->unresolved_var || strstr(a->text, "://"))
		return;
	if (a->text[0] != '/' && !base) {
		/* relative, working directory unknown: the context's root */
		a->context_path = eb_xstrdup(a->text);
		return;
	}
	img = image_path(base, a->text);
	for (size_t i = p->ncopies; i-- > 0;) {
		const struct copy *c = &p->copies[i];
		size_t dl = strlen(c->dest);
		const char *bn = strrchr(c->src, '/');
		bn = bn && bn[1] ? bn + 1 : c->src;
		if (!c->dest_dir && strcmp(img, c->dest) == 0) {
			a->context_path = eb_xstrdup(c->src);
			break;
		}
		if (strncmp(img, c->dest, dl) == 0 && (img[dl] == '/' || strcmp(c->dest, "/") == 0)) {
			const char *rest = img + dl + (img[dl] == '/');
			size_t n = strlen(c->src) + strlen(rest) + 2;
			if (c->dest_dir && strcmp(rest, bn) == 0) {
				a->context_path = eb_xstrdup(c->src);
			} else {
				a->context_path = eb_xmalloc(n);
				snprintf(a->context_path, n, "%s/%s", c->src, rest);
			}
			break;
		}
	}
	a->in_image = !a->context_path;
	if (a->context_path) {
		char *norm = eb_path_normalize(a->context_path);
		if (norm) {
			free(a->context_path);
			a->context_path = norm;
		}
	}
	free(img);
}

/* ---- pip install --------------------------------------------------- */

/* Options of pip (general and install) that take a value. */
static const char *const pip_value_opts[] = {
	"--abi", "--build-option", "--cache-dir", "--cert", "--client-cert", "--config-settings",
	"--exists-action", "--extra-index-url", "--find-links", "--global-option", "--group",
	"--implementation", "--index-url", "--install-option", "--keyring-provider", "--local-log",
	"--log", "--log-file", "--no-binary", "--only-binary", "--platform", "--prefix",
	"--progress-bar", "--proxy", "--python", "--python-version", "--report", "--resume-retries",
	"--retries", "--root", "--root-user-action", "--src", "--target", "--timeout",
	"--trusted-host", "--upgrade-strategy", "--use-deprecated", "--use-feature",
	/* uv and pipx */
	"--directory", "--project", "--config-file", "--color", "-p", "--optional", "--extra",
	"--package", "--with", "--with-requirements", "--index", "--default-index",
	"--index-strategy", "--resolution", "--prerelease", "--exclude-newer", "--link-mode",
	"--python-platform", "--override", "--from", "--spec", "--pip-args", "--suffix",
	"--branch", "--tag", "--rev", "--script", "--frozen-requirements",
};

static int pip_takes_value(const char *opt, size_t len)
{
	for (size_t i = 0; i < sizeof(pip_value_opts) / sizeof(pip_value_opts[0]); i++)
		if (strlen(pip_value_opts[i]) == len && memcmp(pip_value_opts[i], opt, len) == 0)
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A positional argument of pip install: a requirement, or a local path
 * (pip itself treats anything that looks like a path or an archive so). */
static enum eb_pip_arg_kind classify(const char *t)
{
	if (strstr(t, "://"))
		return EB_PIP_ARG_REQ; /* a URL: the requirement checker judges it */
	if (t[0] == '.' || t[0] == '/' || t[0] == '~')
		return EB_PIP_ARG_PATH;
	if (strchr(t, '@'))
		return EB_PIP_ARG_REQ; /* "name @ url" */
	if (strchr(t, '/') || ends_with(t, ".whl") || ends_with(t, ".tar.gz") ||
	    ends_with(t, ".zip") || ends_with(t, ".tar.bz2") || ends_with(t, ".tgz"))
		return EB_PIP_ARG_PATH;
	return EB_PIP_ARG_REQ;
}

static void add_arg(struct parser *p, enum eb_pip_arg_kind kind, const char *text, size_t len,
		    struct lpos at, int unresolved)
{
	struct eb_dockerfile *df = p->df;
	struct eb_dockerfile_pip_arg *a;

	EB_ALLOC_GROW(df->pip_args, df->npip_args + 1, p->args_cap);
	a = &df->pip_args[df->npip_args++];
	memset(a, 0, sizeof(*a));
	a->line = at.line;
	a->col = at.col;
	a->text = eb_xstrndup(text, len);
	a->kind = kind;
	a->unresolved_var = unresolved;
	a->install = df->npips - 1;
}

static void add_opt(struct parser *p, const char *name, size_t len, const struct word *vw,
		    size_t voff, struct lpos at)
{
	struct eb_dockerfile *df = p->df;
	struct eb_dockerfile_pip_option *o;

	EB_ALLOC_GROW(df->pip_options, df->npip_options + 1, p->opts_cap);
	o = &df->pip_options[df->npip_options++];
	memset(o, 0, sizeof(*o));
	o->line = at.line;
	o->col = at.col;
	o->name = eb_xstrndup(name, len);
	o->value = vw ? eb_xstrdup(eb_dockerfile__pstr_str(&vw->t) + voff) : NULL;
	o->install = df->npips - 1;
}

/* The value of an option: the rest of word w from off, or the next word.
 * Returns the word holding it (NULL when missing) and advances *k. */
static const struct word *opt_value(const struct word *w, size_t n, size_t *k, size_t off,
				    size_t *voff)
{
	if (off < w[*k].t.len) {
		*voff = off;
		return &w[*k];
	}
	*voff = 0;
	if (*k + 1 < n)
		return &w[++*k];
	return NULL;
}

static void add_value_arg(struct parser *p, enum eb_pip_arg_kind kind, const struct word *vw,
			  size_t voff)
{
	if (vw) {
		add_arg(p, kind, eb_dockerfile__pstr_str(&vw->t) + voff, vw->t.len - voff, eb_dockerfile__word_pos(vw, voff),
			vw->unresolved);
		if (kind == EB_PIP_ARG_REQFILE || kind == EB_PIP_ARG_CONSTRAINT)
			locate_reqfile(p, &p->df->pip_args[p->df->npip_args - 1]);
	}
}

/* A new install at cmd: its arguments and options are the ones added
 * until install_end(). */
static void install_begin(struct parser *p, const struct word *cmd, int exec_form,
			  enum eb_dockerfile_tool tool)
{
	struct eb_dockerfile *df = p->df;
	struct eb_dockerfile_pip *pi;

	EB_ALLOC_GROW(df->pips, df->npips + 1, p->pips_cap);
	pi = &df->pips[df->npips++];
	memset(pi, 0, sizeof(*pi));
	pi->tool = tool;
	pi->line = cmd->start.line;
	pi->col = cmd->start.col;
	pi->stage = df->nfroms ? df->nfroms - 1 : 0;
	pi->exec_form = exec_form;
	pi->first_arg = df->npip_args;
	pi->first_opt = df->npip_options;
}

static void install_end(struct parser *p)
{
	struct eb_dockerfile *df = p->df;
	struct eb_dockerfile_pip *pi = &df->pips[df->npips - 1];

	pi->nargs = df->npip_args - pi->first_arg;
	pi->nopts = df->npip_options - pi->first_opt;
}

/* How the positional arguments of an installer read. */
enum pip_mode {
	MODE_PIP,    /* requirements: pip install, uv pip install, uv add, pipx install */
	MODE_SYNC,   /* requirements files: uv pip sync FILE... */
	MODE_INJECT, /* pipx inject VENV REQ...: the first is the venv's name */
};

static void pip_args(struct parser *p, const struct word *w, size_t k, size_t n,
		     const struct word *cmd, int exec_form, enum pip_mode mode,
		     enum eb_dockerfile_tool tool);

/* Skip options (and the values of those that take one) from w[k]. */
static size_t skip_opts(const struct word *w, size_t k, size_t n)
{
	for (; k < n && w[k].t.len > 1 && w[k].t.s[0] == '-'; k++)
		if (!strchr(w[k].t.s, '=') && pip_takes_value(w[k].t.s, w[k].t.len))
			k++;
	return k;
}

/* words[k..n) follow "pip": general options, "install", its arguments. */
static void pip_install(struct parser *p, const struct word *w, size_t k, size_t n,
			const struct word *cmd, int exec_form)
{
	k = skip_opts(w, k, n);
	if (k >= n || strcmp(eb_dockerfile__pstr_str(&w[k].t), "install") != 0)
		return;
	pip_args(p, w, k + 1, n, cmd, exec_form, MODE_PIP, EB_DF_TOOL_PIP);
}

/* uv [opts] pip install|sync ..., uv add ..., uv tool install ... */
static void uv_command(struct parser *p, const struct word *w, size_t k, size_t n,
		       const struct word *cmd, int exec_form)
{
	const char *sub, *sub2;

	k = skip_opts(w, k, n);
	if (k + 1 >= n)
		return;
	sub = eb_dockerfile__pstr_str(&w[k].t);
	sub2 = eb_dockerfile__pstr_str(&w[k + 1].t);
	if (strcmp(sub, "add") == 0)
		pip_args(p, w, k + 1, n, cmd, exec_form, MODE_PIP, EB_DF_TOOL_UV);
	else if (strcmp(sub, "pip") == 0 && strcmp(sub2, "install") == 0)
		pip_args(p, w, k + 2, n, cmd, exec_form, MODE_PIP, EB_DF_TOOL_UV);
	else if (strcmp(sub, "pip") == 0 && strcmp(sub2, "sync") == 0)
		pip_args(p, w, k + 2, n, cmd, exec_form, MODE_SYNC, EB_DF_TOOL_UV);
	else if (strcmp(sub, "tool") == 0 && strcmp(sub2, "install") == 0)
		pip_args(p, w, k + 2, n, cmd, exec_form, MODE_PIP, EB_DF_TOOL_UV);
}

/* pipx [opts] install REQ... | inject VENV REQ... */
static void pipx_command(struct parser *p, const struct word *w, size_t k, size_t n,
			 const struct word *cmd, int exec_form)
{
	const char *sub;

	k = skip_opts(w, k, n);
	if (k >= n)
		return;
	sub = eb_dockerfile__pstr_str(&w[k].t);
	if (strcmp(sub, "install") == 0)
		pip_args(p, w, k + 1, n, cmd, exec_form, MODE_PIP, EB_DF_TOOL_PIPX);
	else if (strcmp(sub, "inject") == 0)
		pip_args(p, w, k + 1, n, cmd, exec_form, MODE_INJECT, EB_DF_TOOL_PIPX);
}

int eb_dockerfile__is_one_of(const char *s, const char *const *list);

/* Options of conda/mamba/micromamba install that take a value. */
static const char *const conda_value_opts[] = {
	"-c", "--channel", "-n", "--name", "-p", "--prefix", "-r", "--root-prefix", "--file",
	"--platform", "--subdir", "--repodata-fn", "--experimental-solver", "--solver",
	"--override-channels-file", "--rc-file", "--log-level", NULL,
};

/* conda|mamba|micromamba [opts] install|create [opts] SPEC...: each spec
 * is a conda match-spec (EB_PIP_ARG_CONDA). */
static void conda_install(struct parser *p, const struct word *w, size_t k, size_t n,
			  const struct word *cmd, int exec_form)
{
	const char *sub;

	while (k < n && w[k].t.len > 1 && w[k].t.s[0] == '-')
		k++;
	if (k >= n)
		return;
	sub = eb_dockerfile__pstr_str(&w[k].t);
	if (strcmp(sub, "install") != 0 && strcmp(sub, "create") != 0)
		return;
	install_begin(p, cmd, exec_form, EB_DF_TOOL_CONDA);
	for (k++; k < n; k++) {
		const char *t = eb_dockerfile__pstr_str(&w[k].t);
		if (w[k].t.len == 0)
			continue;
		if (t[0] == '-') {
			if (!strchr(t, '=') && eb_dockerfile__is_one_of(t, conda_value_opts))
				k++;
			continue;
		}
		add_arg(p, EB_PIP_ARG_CONDA, t, w[k].t.len, eb_dockerfile__word_pos(&w[k], 0), w[k].unresolved);
	}
	install_end(p);
}

/* words[k..n) are the options and arguments of an install. */
static void pip_args(struct parser *p, const struct word *w, size_t k, size_t n,
		     const struct word *cmd, int exec_form, enum pip_mode mode,
		     enum eb_dockerfile_tool tool)
{
	int end_of_opts = 0, first_positional = 1;

	install_begin(p, cmd, exec_form, tool);

	for (; k < n; k++) {
		const struct word *cur = &w[k], *vw;
		const char *t = eb_dockerfile__pstr_str(&cur->t);
		size_t voff;

		if (cur->t.len == 0)
			continue;
		if (end_of_opts || t[0] != '-' || cur->t.len == 1) {
			if (mode == MODE_INJECT && first_positional)
				first_positional = 0; /* the venv's name */
			else if (mode == MODE_SYNC)
				add_value_arg(p, EB_PIP_ARG_REQFILE, cur, 0);
			else
				add_arg(p, classify(t), t, cur->t.len, eb_dockerfile__word_pos(cur, 0), cur->unresolved);
			continue;
		}
		if (strcmp(t, "--") == 0) {
			end_of_opts = 1;
			continue;
		}
		if (t[1] == '-') {
			const char *eq = strchr(t, '=');
			size_t nlen = eq ? (size_t)(eq - t) : cur->t.len;
			enum eb_pip_arg_kind kind;
			int is_file = 1;

			if (nlen == 13 && memcmp(t, "--requirement", 13) == 0)
				kind = EB_PIP_ARG_REQFILE;
			else if (nlen == 12 && memcmp(t, "--constraint", 12) == 0)
				kind = EB_PIP_ARG_CONSTRAINT;
			else if (nlen == 10 && memcmp(t, "--editable", 10) == 0)
				kind = EB_PIP_ARG_EDITABLE;
			else
				is_file = 0;
			if (is_file) {
				vw = eq ? opt_value(w, n, &k, nlen + 1, &voff)
					: opt_value(w, n, &k, cur->t.len, &voff);
				add_value_arg(p, kind, vw, voff);
			} else if (eq) {
				add_opt(p, t, nlen, cur, nlen + 1, eb_dockerfile__word_pos(cur, 0));
			} else if (pip_takes_value(t, nlen)) {
				vw = opt_value(w, n, &k, cur->t.len, &voff);
				add_opt(p, t, nlen, vw, voff, eb_dockerfile__word_pos(cur, 0));
			} else {
				add_opt(p, t, nlen, NULL, 0, eb_dockerfile__word_pos(cur, 0));
			}
			continue;
		}
		/* a cluster of short options: "-U", "-qr", "-rreq.txt" */
		for (size_t j = 1; j < cur->t.len; j++) {
			char c = t[j];
			if (!eb_dockerfile__in_set("rceiftCp", c))
				continue;
			if (j > 1)
				add_opt(p, t, j, NULL, 0, eb_dockerfile__word_pos(cur, 0));
			vw = opt_value(w, n, &k, j + 1, &voff);
			if (c == 'r')
				add_value_arg(p, EB_PIP_ARG_REQFILE, vw, voff);
			else if (c == 'c')
				add_value_arg(p, EB_PIP_ARG_CONSTRAINT, vw, voff);
			else if (c == 'e')
				add_value_arg(p, EB_PIP_ARG_EDITABLE, vw, voff);
			else {
				char opt[2] = { '-', c };
				add_opt(p, opt, 2, vw, voff, eb_dockerfile__word_pos(cur, j - 1));
			}
			goto next;
		}
		add_opt(p, t, cur->t.len, NULL, 0, eb_dockerfile__word_pos(cur, 0));
next:;
	}
	install_end(p);
}

/* ---- RUN: commands ------------------------------------------------- */

static const char *basename_of(const char *s)
{
	const char *b = strrchr(s, '/');
	return b ? b + 1 : s;
}

/* "pip", "pip3", "pip3.11" (prefix "pip") or "python3.11" (prefix "python") */
static int is_versioned(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) != 0)
		return 0;
	return strspn(s + n, "0123456789.") == strlen(s + n);
}

static int is_assignment(const char *s)
{
	if (!eb_dockerfile__is_name_start(*s))
		return 0;
	while (eb_dockerfile__is_name_char(*s))
		s++;
	return *s == '=';
}

int eb_dockerfile__is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static void apt_install(struct parser *p, const struct word *w, size_t k, size_t n);
void eb_dockerfile__run_script(struct parser *p, const struct pstr *src, size_t b, size_t e,
		int exec_form, int depth);

/* One simple command, words[0..n). */
static void run_command(struct parser *p, const struct word *w, size_t n, int exec_form,
			int depth)
{
	static const char *const reserved[] = { "!", "{", "if", "then", "else", "elif", "do",
						"while", "until", NULL };
	static const char *const wrappers[] = { "command", "exec", "nohup", "time", NULL };
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "zsh", "ksh", NULL };
	static const char *const sudo_value_opts[] = { "-u", "-g", "-h", "-p", "-C", "-D", "-r",
						       "-t", "-U", "-T", NULL };
	const char *cmd;
	size_t k = 0;

	/* Skip what can stand before the command: keywords, NAME=value,
	 * and commands that run another command. */
	while (k < n) {
		const char *t = eb_dockerfile__pstr_str(&w[k].t);
		if ((!w[k].quoted && eb_dockerfile__is_one_of(t, reserved)) || is_assignment(t) ||
		    eb_dockerfile__is_one_of(t, wrappers)) {
			k++;
		} else if (strcmp(t, "sudo") == 0 || strcmp(t, "env") == 0 || strcmp(t, "nice") == 0) {
			int is_sudo = t[0] == 's', is_env = t[0] == 'e';
			for (k++; k < n && w[k].t.len > 1 && w[k].t.s[0] == '-'; k++) {
				const char *o = w[k].t.s;
				if (strcmp(o, "--") == 0) {
					k++;
					break;
				}
				if ((is_sudo && eb_dockerfile__is_one_of(o, sudo_value_opts)) ||
				    (is_env && (strcmp(o, "-u") == 0 || strcmp(o, "-C") == 0)) ||
				    (!is_sudo && !is_env && strcmp(o, "-n") == 0))
					k++;
			}
		} else {
			break;
		}
	}
	if (k >= n)
		return;
	cmd = basename_of(eb_dockerfile__pstr_str(&w[k].t));

	if (eb_dockerfile__is_one_of(cmd, shells) && depth < 4) {
		/* sh -c 'script': the script is the first operand after -c */
		int saw_c = 0;
		for (size_t j = k + 1; j < n; j++) {
			const char *o = eb_dockerfile__pstr_str(&w[j].t);
			if ((o[0] == '-' || o[0] == '+') && o[1] && strcmp(o, "--") != 0) {
				if (o[1] != '-' && strchr(o, 'c'))
					saw_c = 1;
				if ((o[1] == 'o' || o[1] == 'O') && !o[2])
					j++;
				continue;
			}
			if (saw_c)
				eb_dockerfile__run_script(p, &w[j].t, 0, w[j].t.len, exec_form, depth + 1);
			return;
		}
		return;
	}
	if (strcmp(cmd, "cd") == 0) {
		/* `cd DIR && pip install -r x`: later -r paths are relative to DIR */
		free(p->cwd);
		p->cwd = k + 1 < n && !w[k + 1].unresolved ?
				 image_path(p->workdir, eb_dockerfile__pstr_str(&w[k + 1].t)) : NULL;
		return;
	}
	if (is_versioned(cmd, "pip")) {
		pip_install(p, w, k + 1, n, &w[k], exec_form);
		return;
	}
	if (strcmp(cmd, "uv") == 0) {
		uv_command(p, w, k + 1, n, &w[k], exec_form);
		return;
	}
	if (strcmp(cmd, "pipx") == 0) {
		pipx_command(p, w, k + 1, n, &w[k], exec_form);
		return;
	}
	if (strcmp(cmd, "conda") == 0 || strcmp(cmd, "mamba") == 0 ||
	    strcmp(cmd, "micromamba") == 0) {
		conda_install(p, w, k + 1, n, &w[k], exec_form);
		return;
	}
	if (strcmp(cmd, "apt-get") == 0 || strcmp(cmd, "apt") == 0) {
		apt_install(p, w, k + 1, n);
		return;
	}
	if (is_versioned(cmd, "python")) {
		/* python [options] -m pip ... */
		for (size_t j = k + 1; j < n && w[j].t.len > 1 && w[j].t.s[0] == '-'; j++) {
			const char *o = w[j].t.s;
			const char *m;
			if (o[1] == '-')
				continue;
			if (strcmp(o, "-W") == 0 || strcmp(o, "-X") == 0) {
				j++;
				continue;
			}
			for (m = o + 1; *m && *m != 'm' && *m != 'c'; m++)
				;
			if (*m == 'c')
				return;
			if (*m == 'm') {
				if (m[1] && strcmp(m + 1, "pip") == 0)
					pip_install(p, w, j + 1, n, &w[k], exec_form);
				else if (!m[1] && j + 1 < n && strcmp(eb_dockerfile__pstr_str(&w[j + 1].t), "pip") == 0)
					pip_install(p, w, j + 2, n, &w[k], exec_form);
				return;
			}
		}
	}
}

/* apt-get/apt install: every package should carry =VERSION (hadolint's
 * DL3008, as EB306).  A warning, as in hadolint: a Dockerfile's apt line
 * is not what envbuild builds (the spec's apt: list is, and is locked), and
 * most real Dockerfiles install unversioned build tools.  --strict fails
 * on it.  words[k..n) follow "apt-get". */
static void apt_install(struct parser *p, const struct word *w, size_t k, size_t n)
{
	/* options that take the next word as their value */
	static const char *const value_opts[] = { "-o", "-c", "-t", "-a", "--option",
						  "--config-file", "--target-release",
						  "--host-architecture", NULL };
	int install = 0;

	for (size_t j = k; j < n; j++) {
		const char *t = eb_dockerfile__pstr_str(&w[j].t);
		if (t[0] == '-') {
			if (eb_dockerfile__is_one_of(t, value_opts))
				j++;
			continue;
		}
		if (!install) {
			if (strcmp(t, "install") != 0)
				return; /* update, upgrade, remove, ... */
			install = 1;
			continue;
		}
		if (w[j].unresolved || strchr(t, '=') || strchr(t, '/') || !t[0])
			continue; /* pinned, a release (pkg/suite is not a pin either,
				   * but hadolint accepts it), a .deb path, or unknown */
		struct eb_diag *d = eb_diag_add(p->diags, EB_SEV_WARNING, p->path, w[j].start.line,
						w[j].start.col, "EB306",
						"'%s' is installed without a version (apt-get install %s=VERSION)",
						t, t);
		eb_diag_hint(d, "pin it (DL3008), or move it to the spec's apt: list, where "
				"envbuild locks it by SHA256");
	}
}

/* Field splitting: blanks that came from an unquoted expansion separate
 * words ("pip install $PKGS" with PKGS="a==1 b==2").  The last word of v
 * is replaced by its fields. */
static void split_fields(struct wordvec *v)
{
	struct word whole = v->w[v->n - 1];
	struct word *w = NULL;

	v->n--;
	for (size_t i = 0; i < whole.t.len; i++) {
		if (whole.t.pos[i].split && eb_dockerfile__is_blank(whole.t.s[i])) {
			w = NULL;
			continue;
		}
		if (!w) {
			w = eb_dockerfile__wordvec_push(v);
			w->start = whole.t.pos[i];
			w->src_begin = whole.src_begin;
			w->src_end = whole.src_end;
			w->quoted = whole.quoted;
			w->unresolved = whole.unresolved;
			w->undeclared = whole.undeclared;
			w->var = whole.var ? eb_xstrdup(whole.var) : NULL;
			w->var_pos = whole.var_pos;
		}
		eb_dockerfile__pstr_add(&w->t, whole.t.s[i], whole.t.pos[i]);
	}
	eb_dockerfile__word_release(&whole);
}

static int needs_split(const struct word *w)
{
	for (size_t i = 0; i < w->t.len; i++)
		if (w->t.pos[i].split && eb_dockerfile__is_blank(w->t.s[i]))
			return 1;
	return 0;
}

/* A shell script src[b..e): split it into simple commands. */
void eb_dockerfile__run_script(struct parser *p, const struct pstr *src, size_t b, size_t e,
		int exec_form, int depth)
{
	struct wordvec words = { 0 };
	struct lexer lx;

	eb_dockerfile__lexer_init(&lx, src, b, e, '\\', 1, eb_dockerfile__current_scope(p));
	lx.p = p;
	lx.depth = depth;
	for (;;) {
		struct word *w = eb_dockerfile__wordvec_push(&words);
		enum tok t = eb_dockerfile__lex_next(&lx, w);
		if (t == TOK_WORD) {
			if (needs_split(w))
				split_fields(&words);
			else if (w->t.len == 0 && !w->quoted)
				eb_dockerfile__word_release(&words.w[--words.n]); /* an empty $VAR vanishes */
			continue;
		}
		words.n--;
		eb_dockerfile__word_release(w);
		run_command(p, words.w, words.n, exec_form, depth);
		eb_dockerfile__wordvec_clear(&words);
		if (t == TOK_EOF)
			break;
	}
	eb_dockerfile__wordvec_release(&words);
}


static int json_u4(const char *s, size_t i, size_t e, unsigned *out)
{
	unsigned v = 0;

	if (i + 4 > e)
		return -1;
	for (size_t k = i; k < i + 4; k++) {
		int h = eb_hex_value(s[k]);
		if (h < 0)
			return -1;
		v = v * 16 + (unsigned)h;
	}
	*out = v;
	return 0;
}

static void add_utf8(struct pstr *t, unsigned cp, struct lpos at)
{
	if (cp < 0x80) {
		eb_dockerfile__pstr_add(t, (char)cp, at);
	} else if (cp < 0x800) {
		eb_dockerfile__pstr_add(t, (char)(0xc0 | (cp >> 6)), at);
		eb_dockerfile__pstr_add(t, (char)(0x80 | (cp & 0x3f)), at);
	} else if (cp < 0x10000) {
		eb_dockerfile__pstr_add(t, (char)(0xe0 | (cp >> 12)), at);
		eb_dockerfile__pstr_add(t, (char)(0x80 | ((cp >> 6) & 0x3f)), at);
		eb_dockerfile__pstr_add(t, (char)(0x80 | (cp & 0x3f)), at);
	} else {
		eb_dockerfile__pstr_add(t, (char)(0xf0 | (cp >> 18)), at);
		eb_dockerfile__pstr_add(t, (char)(0x80 | ((cp >> 12) & 0x3f)), at);
		eb_dockerfile__pstr_add(t, (char)(0x80 | ((cp >> 6) & 0x3f)), at);
		eb_dockerfile__pstr_add(t, (char)(0x80 | (cp & 0x3f)), at);
	}
}

/* The exec form: a JSON array of strings in src[i..e).  Returns 0 and the
 * words, or -1 when it is not one (docker then runs the line as shell). */
static int json_array(const struct pstr *src, size_t i, size_t e, struct wordvec *out)
{
	const char *s = src->s;

#define SKIP_WS() while (i < e && eb_dockerfile__is_blank(s[i])) i++
	SKIP_WS();
	if (i >= e || s[i++] != '[')
		return -1;
	SKIP_WS();
	if (i < e && s[i] == ']') {
		i++;
		goto end;
	}
	for (;;) {
		struct word *w;
		SKIP_WS();
		if (i >= e || s[i] != '"')
			return -1;
		w = eb_dockerfile__wordvec_push(out);
		w->start = src->pos[i];
		w->src_begin = i++;
		while (i < e && s[i] != '"') {
			unsigned cp, lo;
			struct lpos at = src->pos[i];
			if ((unsigned char)s[i] < 0x20)
				return -1;
			if (s[i] != '\\') {
				eb_dockerfile__pstr_add(&w->t, s[i++], at);
				continue;
			}
			if (++i >= e)
				return -1;
			switch (s[i]) {
			case '"': case '\\': case '/':
				eb_dockerfile__pstr_add(&w->t, s[i], at);
				break;
			case 'b': eb_dockerfile__pstr_add(&w->t, '\b', at); break;
			case 'f': eb_dockerfile__pstr_add(&w->t, '\f', at); break;
			case 'n': eb_dockerfile__pstr_add(&w->t, '\n', at); break;
			case 'r': eb_dockerfile__pstr_add(&w->t, '\r', at); break;
			case 't': eb_dockerfile__pstr_add(&w->t, '\t', at); break;
			case 'u':
				/* a NUL cannot be passed to exec */
				if (json_u4(s, i + 1, e, &cp) < 0 || cp == 0)
					return -1;
				i += 4;
				if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < e && s[i + 1] == '\\' &&
				    s[i + 2] == 'u' && json_u4(s, i + 3, e, &lo) == 0 &&
				    lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					i += 6;
				}
				add_utf8(&w->t, cp, at);
				break;
			default:
				return -1;
			}
			i++;
		}
		if (i >= e)
			return -1;
		w->src_end = ++i;
		SKIP_WS();
		if (i < e && s[i] == ',') {
			i++;
			continue;
		}
		if (i < e && s[i] == ']') {
			i++;
			break;
		}
		return -1;
	}
end:
	SKIP_WS();
#undef SKIP_WS
	return i == e ? 0 : -1;
}

void eb_dockerfile__do_run(struct parser *p, const struct pstr *ll, size_t a)
{
	struct wordvec argv = { 0 };
	const char *s = ll->s;
	size_t i = a;

	free(p->cwd);
	p->cwd = NULL;
	/* --mount=..., --network=...: flags come first */
	while (i + 1 < ll->len && s[i] == '-' && s[i + 1] == '-') {
		char q = 0;
		for (; i < ll->len && (q || !eb_dockerfile__is_blank(s[i])); i++) {
			if (q && s[i] == q)
				q = 0;
			else if (!q && (s[i] == '"' || s[i] == '\''))
				q = s[i];
		}
		while (i < ll->len && eb_dockerfile__is_blank(s[i]))
			i++;
	}
	if (i < ll->len && s[i] == '[' && json_array(ll, i, ll->len, &argv) == 0) {
		run_command(p, argv.w, argv.n, 1, 0);
	} else {
		p->run_args = i;
		eb_dockerfile__run_script(p, ll, i, ll->len, 0, 0);
	}
	eb_dockerfile__wordvec_release(&argv);
}
