/*
 * reqfile.c - pip's requirements file format (req/req_file.py): decoding,
 * line joining, comments, ${VAR} expansion, file options, -r/-c includes,
 * then the pin rules over the whole set of files (reqfile_check.c).
 *
 * Every logical line carries a position per byte so that a finding about a
 * token of a joined (or expanded) line points at the physical line and
 * column where the user wrote it.
 *
 * The files come from pull requests, so reading is confined: every file
 * (the top one and each -r/-c include) is a regular file whose real path
 * is inside the project root; ${VAR} expands only variables the runner
 * allows, never in a URL's host, and expanded values are replaced by their
 * ${NAME} in every finding; and a file that does not look like a
 * requirements file (a credentials file named by a hostile spec) is never
 * quoted: its findings collapse into one that shows no content (EB218).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pin/reqfile.h"
#include "pin/reqfile_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/interrupt.h"

#define REQFILE_MAX_BYTES (16u << 20)
#define REQFILE_MAX_DEPTH 32

/* A logical line: text plus the physical position of each byte (a byte
 * that came from expanding ${VAR} sits where the "$" was). */
struct lline {
	struct eb_buf text;
	struct pos *pos;
	size_t npos, cap;
	unsigned first_line;
};

struct frame {
	const char *path;
	int known;
	dev_t dev;
	ino_t ino;
};

struct seen {
	dev_t dev;
	ino_t ino;
	int constraint;
};

struct loader {
	struct eb_reqfile *rf;
	struct eb_diag_list *diags;
	const char *root;   /* includes must resolve inside (NULL: no confinement) */
	char **allow;       /* ${VAR} names that may be expanded */
	size_t nallow;
	struct frame stack[REQFILE_MAX_DEPTH];
	size_t depth;
	struct seen *seen;
	size_t nseen, seen_cap;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void strlist_add(struct eb_reqfile_strlist *l, const char *s)
{
	EB_ALLOC_GROW(l->items, l->n + 1, l->cap);
	l->items[l->n++] = eb_xstrdup(s);
}

static void strlist_release(struct eb_reqfile_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* ---- logical lines ------------------------------------------------------- */

static void ll_init(struct lline *ll, unsigned first_line)
{
	eb_buf_init(&ll->text, 0);
	ll->pos = NULL;
	ll->npos = ll->cap = 0;
	ll->first_line = first_line;
}

static void ll_release(struct lline *ll)
{
	eb_buf_release(&ll->text);
	free(ll->pos);
	ll->pos = NULL;
	ll->npos = ll->cap = 0;
}

static void ll_addc(struct lline *ll, char c, struct pos p)
{
	(void)eb_buf_addc(&ll->text, c);
	EB_ALLOC_GROW(ll->pos, ll->npos + 1, ll->cap);
	ll->pos[ll->npos++] = p;
}

/* Append the physical line s[0..n) of line `line`, whose first byte is at
 * column col0. */
static void ll_add_phys(struct lline *ll, const char *s, size_t n, unsigned line, unsigned col0)
{
	for (size_t i = 0; i < n; i++) {
		struct pos p = { line, col0 + (unsigned)i };
		ll_addc(ll, s[i], p);
	}
}

/* Position of logical byte i; past the end, columns keep counting on the
 * last byte's line. */
struct pos eb_reqfile__ll_pos(const struct pos *pos, size_t npos, size_t i, unsigned fallback_line)
{
	struct pos none = { fallback_line, 0 };

	if (npos == 0)
		return none;
	if (i >= npos) {
		struct pos p = pos[npos - 1];
		p.col += (unsigned)(i - npos + 1);
		return p;
	}
	return pos[i];
}

/* ---- findings ------------------------------------------------------------ */

static struct eb_diag *finding(struct loader *ld, enum eb_severity sev, const char *file,
			       struct pos p, const char *rule, const char *fmt, ...)
	EB_PRINTF(6, 7);

static struct eb_diag *finding(struct loader *ld, enum eb_severity sev, const char *file,
			       struct pos p, const char *rule, const char *fmt, ...)
{
	struct eb_buf msg;
	struct eb_diag *d;
	va_list ap;

	eb_buf_init(&msg, 0);
	va_start(ap, fmt);
	(void)eb_buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	d = eb_diag_add(ld->diags, sev, file, p.line, p.col, rule, "%s", msg.ptr);
	eb_buf_release(&msg);
	return d;
}

/* ---- decoding ------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (Python's strict decoder: no
 * overlongs, no surrogates, nothing past U+10FFFF), or 0.  NUL is refused
 * too: it cannot be part of a requirement and would cut C strings. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

static void utf8_put(struct eb_buf *b, uint32_t cp)
{
	if (cp < 0x80) {
		(void)eb_buf_addc(b, (char)cp);
	} else if (cp < 0x800) {
		(void)eb_buf_addc(b, (char)(0xc0 | (cp >> 6)));
		(void)eb_buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		(void)eb_buf_addc(b, (char)(0xe0 | (cp >> 12)));
		(void)eb_buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		(void)eb_buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		(void)eb_buf_addc(b, (char)(0xf0 | (cp >> 18)));
		(void)eb_buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
		(void)eb_buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		(void)eb_buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

/* UTF-16 (after its BOM) to UTF-8; -1 on an odd length or a lone
 * surrogate. */
static int utf16_to_utf8(struct eb_buf *out, const unsigned char *s, size_t n, int big)
{
	size_t i = 0;

	if (n % 2)
		return -1;
	while (i < n) {
		uint32_t u = big ? (uint32_t)(s[i] << 8 | s[i + 1]) : (uint32_t)(s[i + 1] << 8 | s[i]);
		i += 2;
		if (u >= 0xd800 && u <= 0xdbff) {
			uint32_t lo;
			if (i >= n)
				return -1;
			lo = big ? (uint32_t)(s[i] << 8 | s[i + 1]) : (uint32_t)(s[i + 1] << 8 | s[i]);
			if (lo < 0xdc00 || lo > 0xdfff)
				return -1;
			i += 2;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		} else if (u >= 0xdc00 && u <= 0xdfff) {
			return -1;
		}
		utf8_put(out, u);
	}
	return 0;
}

/* Turn the raw bytes into UTF-8 text as pip's auto_decode does for the
 * encodings we accept: a BOM decides, else UTF-8.  Returns 0, or -1 when
 * the whole file is unusable (reported). */
static int decode(struct loader *ld, const char *file, struct eb_buf *raw, struct eb_buf *out)
{
	const unsigned char *s = (const unsigned char *)raw->ptr;
	size_t n = raw->len;
	struct pos top = { 1, 1 };

	eb_buf_init(out, 0);
	if ((n >= 4 && s[0] == 0xff && s[1] == 0xfe && s[2] == 0 && s[3] == 0) ||
	    (n >= 4 && s[0] == 0 && s[1] == 0 && s[2] == 0xfe && s[3] == 0xff)) {
		eb_diag_hint(finding(ld, EB_SEV_ERROR, file, top, "EB200",
				     "'%s' is UTF-32 encoded, which envbuild does not read", file),
			     "save the file as UTF-8");
		return -1;
	}
	if (n >= 2 && ((s[0] == 0xff && s[1] == 0xfe) || (s[0] == 0xfe && s[1] == 0xff))) {
		if (utf16_to_utf8(out, s + 2, n - 2, s[0] == 0xfe) < 0) {
			eb_diag_hint(finding(ld, EB_SEV_ERROR, file, top, "EB200",
					     "'%s' has a UTF-16 BOM but is not valid UTF-16", file),
				     "save the file as UTF-8");
			return -1;
		}
		return 0;
	}
	if (n >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
		(void)eb_buf_add(out, s + 3, n - 3);
	else
		(void)eb_buf_add(out, s, n);
	return 0;
}

/* ---- the option table (pip's SUPPORTED_OPTIONS + SUPPORTED_OPTIONS_REQ) -- */

enum opt_id {
	O_INDEX_URL,
	O_EXTRA_INDEX_URL,
	O_NO_INDEX,
	O_CONSTRAINT,
	O_REQUIREMENT,
	O_EDITABLE,
	O_FIND_LINKS,
	O_NO_BINARY,
	O_ONLY_BINARY,
	O_PREFER_BINARY,
	O_REQUIRE_HASHES,
	O_NO_REQUIRE_HASHES,
	O_PRE,
	O_ALL_RELEASES,
	O_ONLY_FINAL,
	O_TRUSTED_HOST,
	O_USE_FEATURE,
	O_HASH,
	O_CONFIG_SETTINGS,
};

struct optdef {
	const char *lng;
	char shrt;
	int takes_value;
	enum opt_id id;
};

static const struct optdef optdefs[] = {
	{ "--index-url", 'i', 1, O_INDEX_URL },
	{ "--pypi-url", 0, 1, O_INDEX_URL },
	{ "--extra-index-url", 0, 1, O_EXTRA_INDEX_URL },
	{ "--no-index", 0, 0, O_NO_INDEX },
	{ "--constraint", 'c', 1, O_CONSTRAINT },
	{ "--requirement", 'r', 1, O_REQUIREMENT },
	{ "--editable", 'e', 1, O_EDITABLE },
	{ "--find-links", 'f', 1, O_FIND_LINKS },
	{ "--no-binary", 0, 1, O_NO_BINARY },
	{ "--only-binary", 0, 1, O_ONLY_BINARY },
	{ "--prefer-binary", 0, 0, O_PREFER_BINARY },
	{ "--require-hashes", 0, 0, O_REQUIRE_HASHES },
	{ "--no-require-hashes", 0, 0, O_NO_REQUIRE_HASHES },
	{ "--pre", 0, 0, O_PRE },
	{ "--all-releases", 0, 1, O_ALL_RELEASES },
	{ "--only-final", 0, 1, O_ONLY_FINAL },
	{ "--trusted-host", 0, 1, O_TRUSTED_HOST },
	{ "--use-feature", 0, 1, O_USE_FEATURE },
	{ "--hash", 0, 1, O_HASH },
	{ "--config-settings", 'C', 1, O_CONFIG_SETTINGS },
};

#define NOPTDEFS (sizeof(optdefs) / sizeof(optdefs[0]))

struct tok {
	char *val;
	size_t at; /* logical index of its first byte */
};

struct optval {
	const struct optdef *def;
	char *written; /* "-r", "--requirement" as the user spelled it */
	char *val;     /* NULL for flags */
	size_t at;     /* logical index of the option */
	size_t val_at; /* logical index of the value */
};

/* shlex.split() in POSIX mode (what pip runs on the options part): blanks
 * separate, quotes group, backslash escapes; "#" is not a comment.  Returns
 * 0 or -1 with *why set. */
static int shlex_split(const char *s, size_t len, size_t base, struct tok **out, size_t *nout,
		       const char **why)
{
	size_t i = 0, n = 0, cap = 0;
	struct tok *t = NULL;
	struct eb_buf cur;

	eb_buf_init(&cur, 0);
	*why = NULL;
	for (;;) {
		size_t start;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
			i++;
		if (i >= len)
			break;
		start = i;
		eb_buf_truncate(&cur, 0);
		while (i < len && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) {
			char c = s[i++];
			if (c == '\\') {
				if (i >= len) {
					*why = "no escaped character";
					goto fail;
				}
				(void)eb_buf_addc(&cur, s[i++]);
			} else if (c == '\'') {
				while (i < len && s[i] != '\'')
					(void)eb_buf_addc(&cur, s[i++]);
				if (i >= len) {
					*why = "no closing quotation";
					goto fail;
				}
				i++;
			} else if (c == '"') {
				while (i < len && s[i] != '"') {
					if (s[i] == '\\' && i + 1 < len && (s[i + 1] == '"' || s[i + 1] == '\\'))
						i++;
					(void)eb_buf_addc(&cur, s[i++]);
				}
				if (i >= len) {
					*why = "no closing quotation";
					goto fail;
				}
				i++;
			} else {
				(void)eb_buf_addc(&cur, c);
			}
		}
		EB_ALLOC_GROW(t, n + 1, cap);
		t[n].val = eb_xstrdup(cur.ptr);
		t[n++].at = base + start;
	}
	eb_buf_release(&cur);
	*out = t;
	*nout = n;
	return 0;
fail:
	eb_buf_release(&cur);
	for (size_t k = 0; k < n; k++)
		free(t[k].val);
	free(t);
	*out = NULL;
	*nout = 0;
	return -1;
}

/* optparse's long-option lookup: an exact name, or a unique prefix. */
static const struct optdef *find_long(const char *name, size_t len, int *ambiguous)
{
	const struct optdef *hit = NULL;
	size_t nhit = 0;

	*ambiguous = 0;
	for (size_t i = 0; i < NOPTDEFS; i++)
		if (strlen(optdefs[i].lng) == len && memcmp(optdefs[i].lng, name, len) == 0)
			return &optdefs[i];
	for (size_t i = 0; i < NOPTDEFS; i++) {
		if (strncmp(optdefs[i].lng, name, len) == 0) {
			if (!hit || hit->id != optdefs[i].id)
				nhit++;
			hit = &optdefs[i];
		}
	}
	if (nhit > 1) {
		*ambiguous = 1;
		return NULL;
	}
	return hit;
}

static const struct optdef *find_short(char c)
{
	for (size_t i = 0; i < NOPTDEFS; i++)
		if (optdefs[i].shrt && optdefs[i].shrt == c)
			return &optdefs[i];
	return NULL;
}

static char *ambiguous_list(const char *name, size_t len)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < NOPTDEFS; i++)
		if (strncmp(optdefs[i].lng, name, len) == 0)
			(void)eb_buf_addf(&b, "%s%s", b.len ? ", " : "", optdefs[i].lng);
	return eb_buf_detach(&b, NULL);
}

/* ---- one file ------------------------------------------------------------ */

struct fctx {
	struct loader *ld;
	const char *file; /* display path (owned by the reqfile's file list) */
	size_t findex;    /* its index in the file list */
	int constraint;
};

static struct pos lpos(const struct lline *ll, size_t i)
{
	return eb_reqfile__ll_pos(ll->pos, ll->npos, i, ll->first_line);
}

static void free_opts(struct optval *ov, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(ov[i].written);
		free(ov[i].val);
	}
	free(ov);
}

/* Run optparse over the option tokens; unknown options and missing values
 * are reported and skipped.  Positional leftovers (which pip drops
 * silently) are reported too. */
static void parse_options(struct fctx *fc, const struct lline *ll, struct tok *t, size_t nt,
			  struct optval **out, size_t *nout)
{
	struct optval *ov = NULL;
	size_t n = 0, cap = 0;
	int lost = 0; /* after an unknown option, what follows may be its value */

	for (size_t k = 0; k < nt; k++) {
		const char *v = t[k].val;
		const struct optdef *def = NULL;
		char *written = NULL, *value = NULL;
		size_t at = t[k].at, val_at = 0;

		if (strcmp(v, "--") == 0) {
			for (k++; k < nt; k++)
				finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at), "EB200",
					"unexpected argument '%s' after the options", t[k].val);
			break;
		}
		if (strncmp(v, "--", 2) == 0) {
			const char *eq = strchr(v, '=');
			size_t nlen = eq ? (size_t)(eq - v) : strlen(v);
			int amb;

			def = find_long(v, nlen, &amb);
			if (!def) {
				lost = 1;
				if (amb) {
					char *list = ambiguous_list(v, nlen);
					finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at),
						"EB213", "ambiguous option '%.*s' (%s)", (int)nlen, v,
						list);
					free(list);
				} else {
					eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file,
							     lpos(ll, t[k].at), "EB213",
							     "unknown option '%.*s' in a requirements file",
							     (int)nlen, v),
						     "pip rejects the whole file; pass the option to pip install instead");
				}
				continue;
			}
			written = eb_xstrndup(v, nlen);
			if (def->takes_value && eq) {
				value = eb_xstrdup(eq + 1);
				val_at = t[k].at + nlen + 1;
			} else if (def->takes_value && k + 1 < nt) {
				value = eb_xstrdup(t[k + 1].val);
				val_at = t[++k].at;
			} else if (def->takes_value) {
				finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at), "EB200",
					"option '%s' needs a value", written);
				free(written);
				continue;
			} else if (eq) {
				finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at), "EB200",
					"option '%s' takes no value", written);
				free(written);
				continue;
			}
		} else if (v[0] == '-' && v[1] != '\0') {
			def = find_short(v[1]);
			if (!def) {
				lost = 1;
				eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at),
						     "EB213", "unknown option '-%c' in a requirements file",
						     v[1]),
					     "pip rejects the whole file; pass the option to pip install instead");
				continue;
			}
			written = eb_xstrndup(v, 2);
			/* every short option of the table takes a value */
			if (v[2] != '\0') {
				value = eb_xstrdup(v + 2);
				val_at = t[k].at + 2;
			} else if (k + 1 < nt) {
				value = eb_xstrdup(t[k + 1].val);
				val_at = t[++k].at;
			} else {
				finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at), "EB200",
					"option '%s' needs a value", written);
				free(written);
				continue;
			}
		} else {
			if (!lost)
				finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, t[k].at), "EB200",
					"unexpected argument '%s' after the options", v);
			continue;
		}
		EB_ALLOC_GROW(ov, n + 1, cap);
		ov[n].def = def;
		ov[n].written = written;
		ov[n].val = value;
		ov[n].at = at;
		ov[n].val_at = val_at;
		n++;
	}
	*out = ov;
	*nout = n;
}

static void apply_file_option(struct loader *ld, const struct optval *o)
{
	struct eb_reqfile_options *op = &ld->rf->opts;

	switch (o->def->id) {
	case O_INDEX_URL:
		free(op->index_url);
		op->index_url = eb_xstrdup(o->val);
		break;
	case O_EXTRA_INDEX_URL:
		strlist_add(&op->extra_index_urls, o->val);
		break;
	case O_NO_INDEX:
		op->no_index = 1;
		break;
	case O_FIND_LINKS:
		strlist_add(&op->find_links, o->val);
		break;
	case O_NO_BINARY:
		strlist_add(&op->no_binary, o->val);
		break;
	case O_ONLY_BINARY:
		strlist_add(&op->only_binary, o->val);
		break;
	case O_PREFER_BINARY:
		op->prefer_binary = 1;
		break;
	case O_REQUIRE_HASHES:
		op->require_hashes = 1;
		break;
	case O_NO_REQUIRE_HASHES:
		op->no_require_hashes = 1;
		break;
	case O_PRE:
		op->pre = 1;
		break;
	case O_ALL_RELEASES:
		strlist_add(&op->all_releases, o->val);
		break;
	case O_ONLY_FINAL:
		strlist_add(&op->only_final, o->val);
		break;
	case O_TRUSTED_HOST:
		strlist_add(&op->trusted_hosts, o->val);
		break;
	case O_USE_FEATURE:
		strlist_add(&op->features, o->val);
		break;
	case O_CONSTRAINT:
	case O_REQUIREMENT:
	case O_EDITABLE:
	case O_HASH:
	case O_CONFIG_SETTINGS:
		break;
	}
}

static void load_file(struct loader *ld, const char *path, int constraint, const char *from,
		      struct pos from_pos, struct eb_error **err);

/* pip's SCHEME_RE for requirements files given by URL. */
static int is_remote(const char *s)
{
	return strncasecmp(s, "http:", 5) == 0 || strncasecmp(s, "https:", 6) == 0 ||
	       strncasecmp(s, "file:", 5) == 0;
}

static void include(struct fctx *fc, const struct lline *ll, const struct optval *o)
{
	struct pos at = lpos(ll, o->val_at);
	char *path;

	if (is_remote(o->val)) {
		char *shown = eb_requirement_redact(o->val);
		eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file, at, "EB212",
				     "remote requirements file '%s' is not supported", shown),
			     "download it next to this file and include it by path");
		free(shown);
		return;
	}
	if (o->val[0] == '\0') {
		finding(fc->ld, EB_SEV_ERROR, fc->file, at, "EB212", "option '%s' needs a path",
			o->written);
		return;
	}
	/* relative to the including file, spelled the way the user would */
	if (o->val[0] != '/' && strchr(fc->file, '/')) {
		char *dir = eb_path_dirname(fc->file), *norm;
		path = eb_path_join(dir, o->val);
		free(dir);
		/* "req/a/../b.txt" is reported as "req/b.txt": one name per file */
		norm = eb_path_normalize(path);
		if (norm) {
			free(path);
			path = norm;
		}
	} else {
		path = eb_xstrdup(o->val);
	}
	load_file(fc->ld, path, o->def->id == O_CONSTRAINT, fc->file, at, NULL);
	free(path);
}

static void add_entry(struct fctx *fc, const struct lline *ll, struct eb_requirement *req,
		      size_t req_at, const struct optval *ov, size_t nov)
{
	struct eb_reqfile *rf = fc->ld->rf;
	struct ent *e;
	struct pos start = lpos(ll, req_at);

	EB_ALLOC_GROW(rf->items, rf->n + 1, rf->cap);
	e = &rf->items[rf->n++];
	memset(e, 0, sizeof(*e));
	e->pub.req = *req;
	memset(req, 0, sizeof(*req));
	e->pub.file = fc->file;
	e->pub.line = start.line;
	e->pub.col = start.col;
	e->pub.constraint = fc->constraint;
	e->nmap = ll->npos > req_at ? ll->npos - req_at : 0;
	if (e->nmap) {
		e->map = eb_xreallocarray(NULL, e->nmap, sizeof(*e->map));
		memcpy(e->map, ll->pos + req_at, e->nmap * sizeof(*e->map));
	}
	for (size_t i = 0; i < nov; i++) {
		if (ov[i].def->id != O_CONFIG_SETTINGS)
			continue;
		e->pub.config_settings = eb_xreallocarray(e->pub.config_settings,
							  e->pub.nconfig_settings + 1,
							  sizeof(char *));
		e->pub.config_settings[e->pub.nconfig_settings++] = eb_xstrdup(ov[i].val);
	}

	if (fc->constraint) {
		const struct eb_requirement *r = &e->pub.req;
		char *shown = eb_requirement_redact(r->text);
		if (r->editable)
			finding(fc->ld, EB_SEV_ERROR, fc->file, start, "EB214",
				"constraint '%s' cannot be editable", shown);
		else if (!r->name)
			eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file, start, "EB214",
					     "constraint '%s' must have a name", shown),
				     "write it as name @ url");
		else if (r->nextras)
			eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file, start, "EB214",
					     "constraint '%s' cannot specify extras", shown),
				     "put the extras on the requirement and constrain only the name");
		free(shown);
	}
}

/* Report a parse error of the requirement starting at logical byte req_at. */
static void report_parse_error(struct fctx *fc, const struct lline *ll, size_t req_at,
			       struct eb_error *e)
{
	struct pos p = lpos(ll, req_at + (e->col ? e->col - 1 : 0));
	struct eb_diag *d = finding(fc->ld, EB_SEV_ERROR, fc->file, p, "EB200", "%s", e->msg);

	if (e->hint)
		eb_diag_hint(d, "%s", e->hint);
}

static void process_line(struct fctx *fc, const struct lline *ll)
{
	const char *s = ll->text.ptr;
	size_t len = ll->text.len, opt_at = len, args_len;
	struct tok *t = NULL;
	struct optval *ov = NULL;
	size_t nt = 0, nov = 0;
	const char *why;
	const struct optval *first_e = NULL, *inc = NULL;
	int hash_seen = 0;

	/* pip's break_args_options: the first space-separated token that
	 * starts with "-" begins the options; only they go through shlex. */
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '-' && (i == 0 || s[i - 1] == ' ')) {
			opt_at = i;
			break;
		}
	}
	args_len = opt_at == len ? len : (opt_at ? opt_at - 1 : 0);
	if (opt_at < len && shlex_split(s + opt_at, len - opt_at, opt_at, &t, &nt, &why) < 0) {
		finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, opt_at), "EB200",
			"cannot split options: %s", why);
		return;
	}
	parse_options(fc, ll, t, nt, &ov, &nov);

	/* pip: without args, the first -e makes this a requirement line */
	for (size_t i = 0; i < nov && args_len == 0 && !first_e; i++)
		if (ov[i].def->id == O_EDITABLE)
			first_e = &ov[i];

	for (size_t i = 0; i < nov; i++) {
		const struct optval *o = &ov[i];
		enum opt_id id = o->def->id;

		if (id == O_CONFIG_SETTINGS && !strchr(o->val, '=')) {
			finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, o->val_at), "EB200",
				"--config-settings value '%s' is not KEY=VALUE", o->val);
		}
		if (o == first_e)
			continue;
		if (args_len > 0 || first_e) {
			/* a requirement line: only per-requirement options count */
			if (id == O_CONFIG_SETTINGS || (id == O_HASH && args_len > 0))
				continue;
			eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, o->at), "EB213",
					     "option '%s' has no effect on a%s requirement line",
					     o->written, args_len > 0 ? "" : "n editable"),
				     "put file options on a line of their own");
			continue;
		}
		/* an option line */
		if (id == O_HASH) {
			if (!hash_seen)
				eb_diag_hint(finding(fc->ld, EB_SEV_WARNING, fc->file, lpos(ll, o->at),
						     "EB216",
						     "line has --hash but no requirement and is ignored"),
					     "join it to its requirement with a trailing '\\' on the line before");
			hash_seen = 1;
		} else if (id == O_CONFIG_SETTINGS) {
			finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, o->at), "EB213",
				"option '%s' has no effect without a requirement", o->written);
		} else if (id == O_REQUIREMENT || id == O_CONSTRAINT) {
			/* pip reads one include per line: the first -r, else the first -c */
			if (!inc || (inc->def->id == O_CONSTRAINT && id == O_REQUIREMENT))
				inc = o;
		} else {
			apply_file_option(fc->ld, o);
		}
	}
	if (inc) {
		for (size_t i = 0; i < nov; i++) {
			enum opt_id id = ov[i].def->id;
			if (&ov[i] != inc && (id == O_REQUIREMENT || id == O_CONSTRAINT))
				finding(fc->ld, EB_SEV_ERROR, fc->file, lpos(ll, ov[i].at), "EB213",
					"option '%s' is ignored: pip reads one -r or -c per line",
					ov[i].written);
		}
		include(fc, ll, inc);
	}

	if (args_len > 0 || first_e) {
		struct eb_requirement req;
		struct eb_error *e = NULL;
		size_t req_at = first_e ? first_e->val_at : 0;
		int rc;

		if (first_e)
			rc = eb_requirement_parse_editable(&req, first_e->val, strlen(first_e->val), &e);
		else
			rc = eb_requirement_parse(&req, s, args_len, &e);
		if (rc < 0) {
			report_parse_error(fc, ll, req_at, e);
			eb_error_free(e);
		} else {
			for (size_t i = 0; i < nov && !first_e; i++)
				if (ov[i].def->id == O_HASH)
					eb_requirement_add_hash(&req, ov[i].val, strlen(ov[i].val),
								(unsigned)(ov[i].val_at - req_at + 1));
			add_entry(fc, ll, &req, req_at, ov, nov);
		}
	}
	free_opts(ov, nov);
	for (size_t i = 0; i < nt; i++)
		free(t[i].val);
	free(t);
}

/* pip's COMMENT_RE.match(): a line whose first non-blank is "#". */
static int is_comment_line(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_space(s[i]))
		i++;
	return i < n && s[i] == '#';
}

static int allowed(const struct loader *ld, const char *name)
{
	for (size_t i = 0; i < ld->nallow; i++)
		if (strcmp(ld->allow[i], name) == 0)
			return 1;
	return 0;
}

/* 1 when s[at] lies in the host part of a URL of its token: after "://",
 * before the next '/', and not in the userinfo before an '@'. */
static int in_url_host(const char *s, size_t b, size_t at)
{
	size_t tok = at, k, end;

	while (tok > b && !is_space(s[tok - 1]))
		tok--;
	for (k = at; k >= tok + 3; k--)
		if (s[k - 3] == ':' && s[k - 2] == '/' && s[k - 1] == '/')
			break;
	if (k < tok + 3)
		return 0;
	for (size_t q = k; q < at; q++)
		if (s[q] == '/' || s[q] == '?' || s[q] == '#' || s[q] == '@')
			return s[q] == '@' ? 1 : 0; /* past the authority, or in the host after '@' */
	/* in the authority, before any '@' so far: userinfo only when an '@'
	 * follows within the authority */
	for (end = at; s[end] && !is_space(s[end]) && s[end] != '/' && s[end] != '?' &&
		       s[end] != '#'; end++)
		if (s[end] == '@')
			return 0;
	return 1;
}

/* The value ${name} at s[at] expands to, or NULL to keep it as written:
 * unset or empty (as pip does), not allowed by the runner and the spec, or
 * in a URL's host, where it would choose the server a secret goes to. */
static const char *expandable(struct fctx *fc, const struct lline *ll, const char *s, size_t b,
			      size_t at, const char *name)
{
	struct loader *ld = fc->ld;
	struct eb_reqfile *rf = ld->rf;
	const char *val = getenv(name);

	if (!val || !*val)
		return NULL;
	if (!allowed(ld, name)) {
		eb_diag_hint(finding(ld, EB_SEV_WARNING, fc->file, ll->pos[at], "EB219",
				     "'${%s}' is not expanded: the variable is not allowed", name),
			     "name it in the spec's requirements_env and in ENVBUILD_REQUIREMENTS_ENV");
		return NULL;
	}
	if (in_url_host(s, b, at)) {
		eb_diag_hint(finding(ld, EB_SEV_ERROR, fc->file, ll->pos[at], "EB219",
				     "'${%s}' is in the host of a URL and is not expanded", name),
			     "write the host literally; variables may hold credentials, not servers");
		return NULL;
	}
	for (size_t i = 0; i < rf->nsecrets; i++)
		if (strcmp(rf->secrets[i].name, name) == 0)
			return val;
	EB_ALLOC_GROW(rf->secrets, rf->nsecrets + 1, rf->scap);
	rf->secrets[rf->nsecrets].name = eb_xstrdup(name);
	rf->secrets[rf->nsecrets++].value = eb_xstrdup(val);
	return val;
}

/* pip's ignore_comments() then expand_env_variables() on a joined line,
 * then the line itself. */
static void finish_line(struct fctx *fc, struct lline *ll)
{
	const char *s = ll->text.ptr;
	size_t n = ll->text.len, b = 0, cut = n;
	struct lline out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '#' && (i == 0 || is_space(s[i - 1]))) {
			cut = i;
			break;
		}
	}
	while (cut > 0 && is_space(s[cut - 1]))
		cut--;
	while (b < cut && is_space(s[b]))
		b++;
	if (b == cut)
		return;

	ll_init(&out, ll->first_line);
	for (size_t i = b; i < cut;) {
		if (s[i] == '$' && i + 1 < cut && s[i + 1] == '{') {
			size_t j = i + 2;
			while (j < cut && ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= '0' && s[j] <= '9') ||
					   s[j] == '_'))
				j++;
			if (j > i + 2 && j < cut && s[j] == '}') {
				char *name = eb_xstrndup(s + i + 2, j - i - 2);
				const char *val = expandable(fc, ll, s, b, i, name);
				if (val) {
					for (const char *v = val; *v; v++)
						ll_addc(&out, *v, ll->pos[i]);
					free(name);
					i = j + 1;
					continue;
				}
				free(name);
			}
		}
		ll_addc(&out, s[i], ll->pos[i]);
		i++;
	}
	{
		size_t n0 = fc->ld->diags->n;
		struct fileinfo *fi;
		int bad = 0;
		process_line(fc, &out);
		for (size_t i = n0; i < fc->ld->diags->n; i++)
			bad |= fc->ld->diags->items[i].severity == EB_SEV_ERROR;
		fi = &fc->ld->rf->finfo[fc->findex]; /* an include may have moved it */
		if (bad)
			fi->lines_bad++;
		else
			fi->lines_ok++;
	}
	ll_release(&out);
}

/* Split into physical lines (\n, \r\n, \r), check each is UTF-8, join "\"
 * continuations as pip's join_lines() does, and hand each logical line on. */
static void parse_text(struct fctx *fc, const char *text, size_t len)
{
	struct lline cur;
	int pending = 0;
	unsigned lineno = 0;
	size_t i = 0;

	ll_init(&cur, 1);
	while (i < len && !eb_interrupted()) { /* main reports the signal */
		size_t b = i, e, n, bad = SIZE_MAX;

		while (i < len && text[i] != '\n' && text[i] != '\r')
			i++;
		e = i;
		if (i < len && text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
			i += 2;
		else if (i < len)
			i++;
		lineno++;
		n = e - b;

		for (size_t k = b; k < e;) {
			size_t sl = utf8_seq((const unsigned char *)text + k, e - k);
			if (!sl) {
				bad = k - b;
				break;
			}
			k += sl;
		}
		if (bad != SIZE_MAX) {
			struct pos p = { lineno, (unsigned)bad + 1 };
			eb_diag_hint(finding(fc->ld, EB_SEV_ERROR, fc->file, p, "EB200",
					     text[b + bad] ? "line is not valid UTF-8, it is ignored"
							   : "line has a NUL byte, it is ignored"),
				     "save the file as UTF-8");
			n = 0; /* an empty line: ends a continuation like any other */
		}

		if (n == 0 || text[b + n - 1] != '\\' || is_comment_line(text + b, n)) {
			if (!pending)
				cur.first_line = lineno;
			/* a comment line after "\" ends the join; the leading
			 * blank makes sure it is stripped as a comment */
			if (pending && is_comment_line(text + b, n)) {
				struct pos p = { lineno, 1 };
				ll_addc(&cur, ' ', p);
			}
			ll_add_phys(&cur, text + b, n, lineno, 1);
			finish_line(fc, &cur);
			ll_release(&cur);
			ll_init(&cur, lineno + 1);
			pending = 0;
		} else {
			/* str.strip("\\"): every leading and trailing backslash */
			size_t sb = b, se = b + n;
			while (sb < se && text[sb] == '\\')
				sb++;
			while (se > sb && text[se - 1] == '\\')
				se--;
			if (!pending)
				cur.first_line = lineno;
			ll_add_phys(&cur, text + sb, se - sb, lineno, (unsigned)(sb - b) + 1);
			pending = 1;
		}
	}
	if (pending)
		finish_line(fc, &cur);
	ll_release(&cur);
}

/* ---- includes ------------------------------------------------------------ */

static size_t remember_file(struct eb_reqfile *rf, const char *path)
{
	size_t cap = rf->fcap;

	for (size_t i = 0; i < rf->nfiles; i++)
		if (strcmp(rf->files[i], path) == 0)
			return i;
	EB_ALLOC_GROW(rf->files, rf->nfiles + 1, rf->fcap);
	if (rf->fcap != cap)
		rf->finfo = eb_xreallocarray(rf->finfo, rf->fcap, sizeof(*rf->finfo));
	memset(&rf->finfo[rf->nfiles], 0, sizeof(*rf->finfo));
	rf->files[rf->nfiles] = eb_xstrdup(path);
	return rf->nfiles++;
}

/* Named like a requirements file (what `envbuild check` and pip-tools
 * treat as one): *.txt, *.in, requirements*, constraints*. */
static int named_like_requirements(const char *path)
{
	const char *base = eb_path_basename(path);
	size_t n = strlen(base);

	return (n >= 4 && strcasecmp(base + n - 4, ".txt") == 0) ||
	       (n >= 3 && strcasecmp(base + n - 3, ".in") == 0) ||
	       strncasecmp(base, "requirements", 12) == 0 || strncasecmp(base, "constraints", 11) == 0;
}

static void load_file(struct loader *ld, const char *path, int constraint, const char *from,
		      struct pos from_pos, struct eb_error **err)
{
	struct eb_buf raw, text;
	struct eb_error *e = NULL;
	struct stat st;
	struct fctx fc;
	int known = 0;

	eb_buf_init(&raw, 0);
	eb_buf_init(&text, 0);
	if (ld->depth == REQFILE_MAX_DEPTH) {
		finding(ld, EB_SEV_ERROR, from, from_pos, "EB212",
			"includes are nested deeper than %d files at '%s'", REQFILE_MAX_DEPTH, path);
		goto done;
	}
	if ((strcmp(path, "-") == 0 ? eb_fs_read_file(&raw, path, REQFILE_MAX_BYTES, &e)
				     : eb_fs_read_confined(&raw, path, ld->root, REQFILE_MAX_BYTES,
							   &e)) < 0) {
		if (!from) {
			if (err && !*err)
				*err = eb_steal_ptr(&e);
		} else if (e->code == EB_EINVALID) {
			/* outside the project, a fifo, a device: the same rule as
			 * a spec's files (EB009) */
			eb_diag_hint(finding(ld, EB_SEV_ERROR, from, from_pos, "EB009", "%s", e->msg),
				     "include regular files inside the project directory only");
		} else {
			eb_diag_hint(finding(ld, EB_SEV_ERROR, from, from_pos, "EB212", "%s", e->msg),
				     "-r and -c paths are relative to the file that includes them");
		}
		eb_error_free(e);
		goto done;
	}
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0)
		known = 1;

	if (known) {
		for (size_t i = 0; i < ld->depth; i++) {
			struct eb_buf chain;
			struct eb_diag *d;
			if (!ld->stack[i].known || ld->stack[i].dev != st.st_dev ||
			    ld->stack[i].ino != st.st_ino)
				continue;
			eb_buf_init(&chain, 0);
			for (size_t k = i + 1; k < ld->depth; k++)
				(void)eb_buf_addf(&chain, "%s'%s'", k > i + 1 ? " -> " : "",
						  ld->stack[k].path);
			if (chain.len)
				d = finding(ld, EB_SEV_ERROR, from, from_pos, "EB212",
					    "'%s' includes itself through %s", ld->stack[i].path,
					    chain.ptr);
			else
				d = finding(ld, EB_SEV_ERROR, from, from_pos, "EB212",
					    "'%s' includes itself", ld->stack[i].path);
			eb_diag_hint(d, "remove the -r or -c line that closes the loop");
			eb_buf_release(&chain);
			goto done;
		}
		/* a file included twice the same way adds nothing new */
		for (size_t i = 0; i < ld->nseen; i++)
			if (ld->seen[i].dev == st.st_dev && ld->seen[i].ino == st.st_ino &&
			    ld->seen[i].constraint == constraint)
				goto done;
		EB_ALLOC_GROW(ld->seen, ld->nseen + 1, ld->seen_cap);
		ld->seen[ld->nseen].dev = st.st_dev;
		ld->seen[ld->nseen].ino = st.st_ino;
		ld->seen[ld->nseen++].constraint = constraint;
	}

	fc.ld = ld;
	fc.findex = remember_file(ld->rf, path);
	fc.file = ld->rf->files[fc.findex];
	fc.constraint = constraint;
	ld->stack[ld->depth].path = fc.file;
	ld->stack[ld->depth].known = known;
	ld->stack[ld->depth].dev = known ? st.st_dev : 0;
	ld->stack[ld->depth].ino = known ? st.st_ino : 0;
	ld->depth++;
	{
		struct fileinfo *fi;
		size_t n0 = ld->diags->n;
		if (decode(ld, fc.file, &raw, &text) == 0)
			parse_text(&fc, text.ptr, text.len);
		fi = &ld->rf->finfo[fc.findex];
		/* a decoding finding counts as a bad line too */
		if (ld->diags->n > n0 && !fi->lines_bad)
			fi->lines_bad++;
		if (strcmp(path, "-") != 0 &&
		    (!named_like_requirements(path) || (fi->lines_bad >= 2 && !fi->lines_ok)))
			fi->opaque = 1;
	}
	ld->depth--;
done:
	eb_buf_release(&raw);
	eb_buf_release(&text);
}

struct eb_reqfile *eb_reqfile_new(void)
{
	return eb_xcalloc(1, sizeof(struct eb_reqfile));
}

void eb_reqfile_add(struct eb_reqfile *rf, struct eb_requirement *req, const char *file,
		    unsigned line, unsigned col)
{
	struct ent *e;
	size_t fi = remember_file(rf, file); /* may move rf->files */

	EB_ALLOC_GROW(rf->items, rf->n + 1, rf->cap);
	e = &rf->items[rf->n++];
	memset(e, 0, sizeof(*e));
	e->pub.req = *req;
	memset(req, 0, sizeof(*req));
	e->pub.file = rf->files[fi];
	e->pub.line = line;
	e->pub.col = col;
}

/* Replace every occurrence of an expanded value in *msg by its ${NAME}. */
static void redact(const struct eb_reqfile *rf, char **msg)
{
	for (size_t i = 0; *msg && i < rf->nsecrets; i++) {
		const char *v = rf->secrets[i].value, *hit;
		struct eb_buf b;
		const char *p = *msg;

		if (!strstr(p, v))
			continue;
		eb_buf_init(&b, 0);
		while ((hit = strstr(p, v)) != NULL) {
			(void)eb_buf_add(&b, p, (size_t)(hit - p));
			(void)eb_buf_addf(&b, "${%s}", rf->secrets[i].name);
			p = hit + strlen(v);
		}
		(void)eb_buf_add(&b, p, strlen(p));
		free(*msg);
		*msg = eb_buf_detach(&b, NULL);
	}
}

/* Findings from index n0 on: redact expanded values, and collapse those
 * of a file that is not a requirements file into one that quotes nothing
 * of it (its first position only). */
void eb_reqfile__postprocess(const struct eb_reqfile *rf, struct eb_diag_list *diags, size_t n0)
{
	size_t w = n0, nd = diags->n;

	for (size_t i = n0; i < diags->n; i++) {
		redact(rf, &diags->items[i].msg);
		redact(rf, &diags->items[i].hint);
	}
	for (size_t f = 0; f < rf->nfiles; f++) {
		unsigned line = 0, col = 0;
		int hit = 0;

		if (!rf->finfo[f].opaque)
			continue;
		w = n0;
		for (size_t i = n0; i < nd; i++) {
			struct eb_diag *d = &diags->items[i];
			if (d->file && strcmp(d->file, rf->files[f]) == 0 &&
			    strcmp(d->rule, "EB218") != 0) {
				if (!hit || d->line < line || (d->line == line && d->col < col)) {
					line = d->line;
					col = d->col;
				}
				hit = 1;
				free(d->file);
				free(d->rule);
				free(d->msg);
				free(d->hint);
				continue;
			}
			diags->items[w++] = *d;
		}
		diags->n = nd = w;
		/* once per file: the load may have said it already */
		for (size_t i = 0; hit && i < n0; i++)
			if (strcmp(diags->items[i].rule, "EB218") == 0 && diags->items[i].file &&
			    strcmp(diags->items[i].file, rf->files[f]) == 0)
				hit = 0;
		if (hit)
			eb_diag_hint(eb_diag_add(diags, EB_SEV_ERROR, rf->files[f], line, col, "EB218",
						 "'%s' does not look like a requirements file; "
						 "its content is not shown",
						 rf->files[f]),
				     "name requirements files *.txt or *.in, and name only them in "
				     "'requirements' and -r/-c");
		nd = diags->n;
	}
}

static void split_names(char ***out, size_t *n, const char *list)
{
	size_t cap = 0;
	const char *p = list;

	while (p && *p) {
		size_t k = strcspn(p, ", :\t");
		if (k) {
			EB_ALLOC_GROW(*out, *n + 1, cap);
			(*out)[(*n)++] = eb_xstrndup(p, k);
		}
		p += k;
		p += strspn(p, ", :\t");
	}
}

int eb_reqfile__load_pip(struct eb_reqfile **out, const char *path, const char *root,
			 const char *const *spec_env, size_t nspec_env, int use_spec_env,
			 struct eb_diag_list *diags, struct eb_error **err)
{
	struct loader ld;
	struct eb_error *e = NULL;
	struct pos none = { 0, 0 };
	char **runner = NULL;
	size_t nrunner = 0, n0 = diags->n;

	memset(&ld, 0, sizeof(ld));
	*out = NULL;
	ld.rf = eb_xcalloc(1, sizeof(*ld.rf));
	ld.diags = diags;
	ld.root = root;
	/* the runner decides (its environment); a spec may only narrow it */
	split_names(&runner, &nrunner, getenv("ENVBUILD_REQUIREMENTS_ENV"));
	ld.allow = eb_xcalloc(nrunner + 1, sizeof(*ld.allow));
	for (size_t i = 0; i < nrunner; i++) {
		int ok = !use_spec_env;
		for (size_t k = 0; k < nspec_env && !ok; k++)
			ok = strcmp(spec_env[k], runner[i]) == 0;
		if (ok)
			ld.allow[ld.nallow++] = runner[i];
		else
			free(runner[i]);
	}
	free(runner);
	load_file(&ld, path, 0, NULL, none, &e);
	free(ld.seen);
	for (size_t i = 0; i < ld.nallow; i++)
		free(ld.allow[i]);
	free(ld.allow);
	if (e) {
		int rc = -e->code;
		eb_reqfile_free(ld.rf);
		if (err && !*err)
			*err = e;
		else
			eb_error_free(e);
		return rc;
	}
	eb_reqfile__postprocess(ld.rf, diags, n0);
	*out = ld.rf;
	return 0;
}

/* ---- accessors ----------------------------------------------------------- */

void eb_reqfile_free(struct eb_reqfile *rf)
{
	struct eb_reqfile_options *op;

	if (!rf)
		return;
	for (size_t i = 0; i < rf->n; i++) {
		struct ent *e = &rf->items[i];
		eb_requirement_release(&e->pub.req);
		for (size_t k = 0; k < e->pub.nconfig_settings; k++)
			free(e->pub.config_settings[k]);
		free(e->pub.config_settings);
		free(e->map);
	}
	free(rf->items);
	for (size_t i = 0; i < rf->nfiles; i++)
		free(rf->files[i]);
	free(rf->files);
	free(rf->finfo);
	for (size_t i = 0; i < rf->nsecrets; i++) {
		free(rf->secrets[i].name);
		free(rf->secrets[i].value);
	}
	free(rf->secrets);
	op = &rf->opts;
	free(op->index_url);
	strlist_release(&op->extra_index_urls);
	strlist_release(&op->find_links);
	strlist_release(&op->trusted_hosts);
	strlist_release(&op->no_binary);
	strlist_release(&op->only_binary);
	strlist_release(&op->all_releases);
	strlist_release(&op->only_final);
	strlist_release(&op->features);
	free(rf);
}

size_t eb_reqfile_count(const struct eb_reqfile *rf)
{
	return rf->n;
}

const struct eb_reqfile_entry *eb_reqfile_get(const struct eb_reqfile *rf, size_t i)
{
	return i < rf->n ? &rf->items[i].pub : NULL;
}

size_t eb_reqfile_nfiles(const struct eb_reqfile *rf)
{
	return rf->nfiles;
}

const char *eb_reqfile_file(const struct eb_reqfile *rf, size_t i)
{
	return i < rf->nfiles ? rf->files[i] : NULL;
}

const struct eb_reqfile_options *eb_reqfile_options(const struct eb_reqfile *rf)
{
	return &rf->opts;
}
