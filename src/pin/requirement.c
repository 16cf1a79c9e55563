/*
 * requirement.c - parse one requirement the way pip does (PEP 508 plus
 * pip's URL, path and editable forms) and classify how well it is pinned.
 *
 * The split between "URL line", "path" and "named requirement" follows
 * pip's req/constructors.py (parse_req_from_line, parse_editable), done
 * lexically: see requirement.h for why the file system is never consulted.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pin/requirement.h"
#include "util/alloc.h"
#include "util/digest.h"
#include "util/buf.h"

#define PIN_HINT_FMT "pin an exact version: %s==X.Y.Z"

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_name_char(char c)
{
	return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static int has_prefix_ci(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	if (len < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower(s[i]) != prefix[i])
			return 0;
	return 1;
}

static int has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* ---- names --------------------------------------------------------------- */

int eb_pep503_valid(const char *name, size_t len)
{
	if (len == 0 || !is_alnum(name[0]) || !is_alnum(name[len - 1]))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(name[i]))
			return 0;
	return 1;
}

char *eb_pep503_normalize(const char *name, size_t len)
{
	char *out = eb_xmalloc(len + 1);
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (name[i] == '-' || name[i] == '_' || name[i] == '.') {
			if (o == 0 || out[o - 1] != '-')
				out[o++] = '-';
		} else {
			out[o++] = lower(name[i]);
		}
	}
	out[o] = '\0';
	return out;
}

/* ---- URLs and paths ------------------------------------------------------ */

/* pip's vcs backends' schemes (vcs/{git,mercurial,subversion,bazaar}.py),
 * plus the plain schemes of vcs.is_url(). */
static const char *const url_schemes[] = {
	"http", "https", "file", "ftp",
	"git+http", "git+https", "git+ssh", "git+git", "git+file",
	"hg+file", "hg+http", "hg+https", "hg+ssh", "hg+static-http",
	"svn+ssh", "svn+http", "svn+https", "svn+svn", "svn+file",
	"bzr+http", "bzr+https", "bzr+ssh", "bzr+sftp", "bzr+ftp", "bzr+lp", "bzr+file",
	NULL,
};

static const char *const vcs_prefixes[] = { "git+", "hg+", "svn+", "bzr+", NULL };

/* pip's utils/filetypes.py ARCHIVE_EXTENSIONS. */
static const char *const archive_exts[] = {
	".whl", ".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz", ".tar.xz", ".txz",
	".tlz", ".tar.lz", ".tar.lzma", NULL,
};

/* pip's vcs.is_url(): the text before the first ':' is a known scheme. */
static int is_pip_url(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);

	if (!colon)
		return 0;
	for (size_t i = 0; url_schemes[i]; i++) {
		size_t n = strlen(url_schemes[i]);
		if ((size_t)(colon - s) == n && has_prefix_ci(s, len, url_schemes[i]))
			return 1;
	}
	return 0;
}

static int is_vcs_url(const char *s, size_t len)
{
	for (size_t i = 0; vcs_prefixes[i]; i++)
		if (has_prefix_ci(s, len, vcs_prefixes[i]))
			return 1;
	return 0;
}

/* Length of the URL or path without "?query" and "#fragment". */
static size_t path_part_len(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '?' || s[i] == '#')
			break;
	return i;
}

static int has_archive_ext(const char *s, size_t len)
{
	char *low = eb_xstrndup(s, path_part_len(s, len));
	size_t n = strlen(low);
	int r = 0;

	for (size_t i = 0; i < n; i++)
		low[i] = lower(low[i]);
	for (size_t i = 0; archive_exts[i] && !r; i++)
		r = has_suffix(low, n, archive_exts[i]);
	free(low);
	return r;
}

/* pip's _looks_like_path(). */
static int looks_like_path(const char *s, size_t len)
{
	return (len > 0 && s[0] == '.') || memchr(s, '/', len) != NULL;
}

/* pip's _strip_extras(): "path[extra,...]" -> length of "path", or len. */
static size_t strip_extras(const char *s, size_t len)
{
	size_t open;

	if (len < 4 || s[len - 1] != ']')
		return len;
	for (open = len - 1; open > 0; open--) {
		if (s[open - 1] == ']')
			return len;
		if (s[open - 1] == '[')
			break;
	}
	/* need text before '[' and at least one character inside */
	if (open < 2 || open == len - 1)
		return len;
	return open - 1;
}


/* The last path component of a URL or path, percent-decoded (pip's
 * Link.filename unquotes it: "torch-2.1.0%2Bcu118-...whl"). */
static char *url_filename(const char *s, size_t len)
{
	size_t end = path_part_len(s, len), start = end;
	struct eb_buf b;

	while (start > 0 && s[start - 1] != '/')
		start--;
	eb_buf_init(&b, 0);
	for (size_t i = start; i < end; i++) {
		if (s[i] == '%' && i + 2 < end && eb_hex_value(s[i + 1]) >= 0 && eb_hex_value(s[i + 2]) >= 0) {
			eb_buf_putc(&b, (char)(eb_hex_value(s[i + 1]) * 16 + eb_hex_value(s[i + 2])));
			i += 2;
		} else {
			eb_buf_putc(&b, s[i]);
		}
	}
	return eb_buf_detach(&b, NULL);
}

/* "{name}-{ver}(-{build})?-{py}-{abi}-{plat}.whl" -> name and version
 * (pip's models/wheel.py: "_" in the version reads as "-").  Returns 0 or
 * -1 when the name is not a valid wheel filename. */
static int parse_wheel_filename(const char *fn, char **name, char **version)
{
	size_t len = strlen(fn), ndash = 0;
	const char *parts[6];
	size_t plen[6];
	const char *p;

	if (!has_suffix(fn, len, ".whl"))
		return -1;
	len -= 4;
	p = fn;
	for (;;) {
		const char *dash = memchr(p, '-', len - (size_t)(p - fn));
		size_t n = dash ? (size_t)(dash - p) : len - (size_t)(p - fn);
		if (ndash == 6 || n == 0)
			return -1;
		parts[ndash] = p;
		plen[ndash++] = n;
		if (!dash)
			break;
		p = dash + 1;
	}
	if (ndash != 5 && ndash != 6)
		return -1;
	if (ndash == 6 && !(parts[2][0] >= '0' && parts[2][0] <= '9'))
		return -1;
	if (!eb_pep503_valid(parts[0], plen[0]))
		return -1;
	*name = eb_xstrndup(parts[0], plen[0]);
	*version = eb_xstrndup(parts[1], plen[1]);
	for (char *c = *version; *c; c++)
		if (*c == '_')
			*c = '-';
	return 0;
}

static const char *const frag_hash_algos[] = { "sha1", "sha224", "sha256", "sha384", "sha512",
					       "md5", NULL };

/* Read "#egg=name&sha256=hex&subdirectory=x": a hash pip would use
 * (models/link.py _hash_re keys) and the egg name. */
static void parse_fragment(struct eb_requirement *r, const char *url, size_t len, char **egg)
{
	const char *hash = memchr(url, '#', len);
	const char *p, *end = url + len;

	*egg = NULL;
	if (!hash)
		return;
	for (p = hash + 1; p < end;) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));

		if (eq) {
			size_t klen = (size_t)(eq - p);
			if (klen == 3 && memcmp(p, "egg", 3) == 0 && !*egg) {
				*egg = eb_xstrndup(eq + 1, (size_t)(stop - eq - 1));
			} else if (!r->url_hash_algo) {
				for (size_t i = 0; frag_hash_algos[i]; i++) {
					if (strlen(frag_hash_algos[i]) == klen &&
					    memcmp(p, frag_hash_algos[i], klen) == 0) {
						r->url_hash_algo = eb_xstrndup(p, klen);
						r->url_hash_hex =
							eb_xstrndup(eq + 1, (size_t)(stop - eq - 1));
						break;
					}
				}
			}
		}
		p = amp ? amp + 1 : end;
	}
}

/* ---- parser -------------------------------------------------------------- */

struct rparse {
	const char *s;
	const char *tb; /* trimmed text, for messages */
	size_t tn;
	struct eb_requirement *r;
	struct eb_error **err;
};

static int rfail(struct rparse *p, size_t at, const char *hint, const char *fmt, ...)
	EB_PRINTF(4, 5);

static int rfail(struct rparse *p, size_t at, const char *hint, const char *fmt, ...)
{
	struct eb_buf detail;
	char *shown, *text = eb_xstrndup(p->tb, p->tn);
	va_list ap;

	eb_buf_init(&detail, 0);
	va_start(ap, fmt);
	(void)eb_buf_vaddf(&detail, fmt, ap);
	va_end(ap);
	shown = eb_requirement_redact(text);
	eb_error_set_at(p->err, EB_EINVALID, NULL, 0, (unsigned)at + 1,
			"invalid requirement '%s': %s", shown, detail.ptr);
	if (hint)
		eb_error_hint(p->err, "%s", hint);
	free(shown);
	free(text);
	eb_buf_release(&detail);
	return -EB_EINVALID;
}

static void add_extra(struct eb_requirement *r, const char *s, size_t n)
{
	r->extras = eb_xreallocarray(r->extras, r->nextras + 1, sizeof(*r->extras));
	r->extras[r->nextras++] = eb_pep503_normalize(s, n);
}

/* "[a, b]" at s[*i] (which is '['), up to end. */
static int parse_extras(struct rparse *p, size_t *i, size_t end)
{
	const char *s = p->s;
	size_t j = *i + 1;

	while (j < end && is_ws(s[j]))
		j++;
	if (j < end && s[j] == ']') {
		*i = j + 1;
		return 0;
	}
	for (;;) {
		size_t nb = j;
		while (j < end && is_name_char(s[j]))
			j++;
		if (j == nb)
			return rfail(p, j, NULL, "expected an extra name");
		if (!eb_pep503_valid(s + nb, j - nb))
			return rfail(p, nb, NULL, "invalid extra name '%.*s'", (int)(j - nb), s + nb);
		add_extra(p->r, s + nb, j - nb);
		while (j < end && is_ws(s[j]))
			j++;
		if (j < end && s[j] == ']')
			break;
		if (j >= end || s[j] != ',')
			return rfail(p, j, NULL, "expected ',' or ']' after extra name");
		j++;
		while (j < end && is_ws(s[j]))
			j++;
	}
	*i = j + 1;
	return 0;
}

static int parse_specs(struct rparse *p, size_t b, size_t e)
{
	struct eb_error *e2 = NULL;
	const char *hint = NULL;

	if (eb_specifier_set_parse(&p->r->specs, p->s + b, e - b, &e2) < 0) {
		size_t at = b + (e2->col ? e2->col - 1 : 0);
		int r;

		if (memchr(p->s + b, '#', e - b))
			hint = "a comment needs whitespace before '#'";
		else
			hint = e2->hint;
		r = rfail(p, at, hint, "%s", e2->msg);
		eb_error_free(e2);
		return r;
	}
	for (size_t k = 0; k < p->r->specs.n; k++)
		p->r->specs.items[k].col += (unsigned)b;
	return 0;
}

/* Set the "==version" clause pip derives from a wheel filename. */
static int set_wheel_pin(struct rparse *p, const char *version, size_t col0)
{
	struct eb_specifier_set *set = &p->r->specs;
	struct eb_specifier *sp;
	struct eb_version v;
	struct eb_error *e2 = NULL;

	if (eb_version_parse(&v, version, strlen(version), &e2) < 0) {
		eb_error_free(e2);
		return rfail(p, col0, NULL, "invalid version '%s' in the wheel filename", version);
	}
	EB_ALLOC_GROW(set->items, set->n + 1, set->cap);
	sp = &set->items[set->n++];
	memset(sp, 0, sizeof(*sp));
	sp->op = EB_OP_EQ;
	sp->version = v;
	sp->raw = eb_xstrdup(version);
	sp->col = (unsigned)col0 + 1;
	return 0;
}

/* s[b..e) is a URL or path (no extras); fill url, kind, hash, names. */
static int set_location(struct rparse *p, size_t b, size_t e, int named)
{
	struct eb_requirement *r = p->r;
	const char *u = p->s + b;
	size_t n = e - b;
	char *egg = NULL, *fn, *wname = NULL, *wver = NULL;
	int rc = 0;

	r->url = eb_xstrndup(u, n);
	r->url_col = (unsigned)b + 1;
	if (is_vcs_url(u, n))
		r->kind = EB_REQ_VCS;
	else if (has_prefix_ci(u, n, "file:") || !memchr(u, ':', n))
		r->kind = has_archive_ext(u, n) ? EB_REQ_PATH : EB_REQ_DIR;
	else
		r->kind = EB_REQ_URL;
	parse_fragment(r, u, n, &egg);

	fn = url_filename(u, n);
	if (r->kind != EB_REQ_VCS && r->kind != EB_REQ_DIR && has_suffix(fn, strlen(fn), ".whl")) {
		if (parse_wheel_filename(fn, &wname, &wver) < 0) {
			/* pip reads name==version from a bare wheel link at
			 * once, but a named one only when it installs it */
			if (!named)
				rc = rfail(p, b, "wheel filenames look like name-1.0-py3-none-any.whl",
					   "invalid wheel filename '%s'", fn);
			goto done;
		}
		r->wheel_version = eb_xstrdup(wver);
		if (!named) {
			r->name = eb_steal_ptr(&wname);
			rc = set_wheel_pin(p, wver, b);
		}
	} else if (!named && egg && eb_pep503_valid(egg, strlen(egg))) {
		r->name = eb_steal_ptr(&egg);
	}
	if (r->name && !r->norm_name)
		r->norm_name = eb_pep503_normalize(r->name, strlen(r->name));
done:
	free(egg);
	free(fn);
	free(wname);
	free(wver);
	return rc;
}

/* PEP 508 name_req / url_req, marker already split off: s[b..e). */
static int parse_named(struct rparse *p, size_t b, size_t e)
{
	const char *s = p->s;
	struct eb_requirement *r = p->r;
	size_t i = b;
	int rc;

	while (i < e && is_name_char(s[i]))
		i++;
	if (i == b)
		return rfail(p, b, NULL, "expected package name at the start of dependency specifier");
	if (!eb_pep503_valid(s + b, i - b))
		return rfail(p, b, "a name starts and ends with a letter or digit",
			     "invalid package name '%.*s'", (int)(i - b), s + b);
	r->name = eb_xstrndup(s + b, i - b);
	r->norm_name = eb_pep503_normalize(s + b, i - b);
	r->name_col = (unsigned)b + 1;
	r->kind = EB_REQ_NAMED;

	while (i < e && is_ws(s[i]))
		i++;
	if (i < e && s[i] == '[') {
		if ((rc = parse_extras(p, &i, e)) < 0)
			return rc;
		while (i < e && is_ws(s[i]))
			i++;
	}
	if (i >= e)
		return 0;

	if (s[i] == '@') {
		size_t ub;
		i++;
		while (i < e && is_ws(s[i]))
			i++;
		ub = i;
		while (i < e && !is_ws(s[i]))
			i++;
		if (i == ub)
			return rfail(p, ub, NULL, "expected a URL after '@'");
		rc = set_location(p, ub, i, 1);
		if (rc < 0)
			return rc;
		while (i < e && is_ws(s[i]))
			i++;
		if (i < e)
			return rfail(p, i, "put the marker after ';'",
				     "expected end or semicolon after the URL");
		return 0;
	}
	if (s[i] == '(') {
		size_t close = e;
		while (close > i && s[close - 1] != ')')
			close--;
		if (close == i)
			return rfail(p, e, NULL, "expected ')' after the version specifier");
		for (size_t k = close; k < e; k++)
			if (!is_ws(s[k]))
				return rfail(p, k, NULL, "expected end or semicolon after ')'");
		return parse_specs(p, i + 1, close - 1);
	}
	if (s[i] == '=' && (i + 1 >= e || s[i + 1] != '='))
		return rfail(p, i, "did you mean '=='?", "'=' is not a valid operator");
	if (strchr("<>=!~", s[i]))
		return parse_specs(p, i, e);
	return rfail(p, i, NULL, "expected end or semicolon after the name, found '%c'", s[i]);
}

static void req_init(struct eb_requirement *r)
{
	memset(r, 0, sizeof(*r));
}

static int parse_marker(struct rparse *p, size_t b, size_t e)
{
	struct eb_error *e2 = NULL;
	int rc;

	if (eb_marker_parse(&p->r->marker, p->s + b, e - b, &e2) < 0) {
		rc = rfail(p, b + (e2 && e2->col ? e2->col - 1 : 0), e2 ? e2->hint : NULL, "%s",
			   e2 ? e2->msg : "invalid marker");
		eb_error_free(e2);
		return rc;
	}
	p->r->marker_text = eb_xstrndup(p->s + b, e - b);
	p->r->marker_col = (unsigned)b + 1;
	return 0;
}

static void trim(const char *s, size_t *b, size_t *e)
{
	while (*b < *e && is_ws(s[*b]))
		(*b)++;
	while (*e > *b && is_ws(s[*e - 1]))
		(*e)--;
}

int eb_requirement_parse(struct eb_requirement *out, const char *s, size_t len,
			 struct eb_error **err)
{
	struct rparse p = { s, s, 0, out, err };
	size_t b = 0, e = len, body_e, seplen;
	const char *sep;
	int url_line, rc;

	req_init(out);
	trim(s, &b, &e);
	p.tb = s + b;
	p.tn = e - b;
	if (b == e)
		return eb_error_set_at(err, EB_EINVALID, NULL, 0, 1, "empty requirement");
	out->text = eb_xstrndup(s + b, e - b);
	url_line = is_pip_url(s + b, e - b);

	/* pip's marker split (see the header). */
	sep = url_line ? "; " : ";";
	seplen = strlen(sep);
	body_e = e;
	for (size_t k = b; k + seplen <= e; k++) {
		if (memcmp(s + k, sep, seplen) == 0) {
			size_t mb = k + seplen, me = e;
			body_e = k;
			trim(s, &mb, &me);
			if (mb < me && (rc = parse_marker(&p, mb, me)) < 0)
				goto fail;
			break;
		}
	}
	trim(s, &b, &body_e);
	if (b == body_e) {
		rc = rfail(&p, b, NULL, "expected package name at the start of dependency specifier");
		goto fail;
	}

	if (url_line) {
		for (size_t k = b; k < body_e; k++) {
			if (is_ws(s[k])) {
				rc = rfail(&p, k, "separate a marker from a URL with '; '",
					   "unexpected whitespace in the URL");
				goto fail;
			}
		}
		rc = set_location(&p, b, body_e, 0);
	} else {
		size_t pe = strip_extras(s + b, body_e - b) + b;
		const char *at = memchr(s + b, '@', body_e - b);
		/* pip: "name @ x.tar.gz" is PEP 508 when what precedes "@"
		 * does not look like a path */
		int named_at = at && !looks_like_path(s + b, (size_t)(at - (s + b)));

		if (!named_at && (has_archive_ext(s + b, pe - b) || looks_like_path(s + b, body_e - b))) {
			rc = set_location(&p, b, pe, 0);
			if (rc == 0 && pe < body_e) {
				size_t xi = pe;
				rc = parse_extras(&p, &xi, body_e);
			}
		} else {
			rc = parse_named(&p, b, body_e);
		}
	}
	if (rc < 0)
		goto fail;
	return 0;
fail:
	eb_requirement_release(out);
	return rc;
}

int eb_requirement_parse_editable(struct eb_requirement *out, const char *s, size_t len,
				  struct eb_error **err)
{
	struct rparse p = { s, s, 0, out, err };
	size_t b = 0, e = len, pe;
	int rc;

	req_init(out);
	trim(s, &b, &e);
	p.tb = s + b;
	p.tn = e - b;
	if (b == e)
		return eb_error_set_at(err, EB_EINVALID, NULL, 0, 1, "empty editable requirement");
	out->text = eb_xstrndup(s + b, e - b);
	out->editable = 1;
	pe = strip_extras(s + b, e - b) + b;

	/* pip turns "git:..." and "svn:..." into "git+git:...". */
	if (is_vcs_url(s + b, e - b) || has_prefix_ci(s + b, e - b, "git:") ||
	    has_prefix_ci(s + b, e - b, "svn:")) {
		rc = set_location(&p, b, e, 0);
		out->kind = EB_REQ_VCS;
	} else if (has_prefix_ci(s + b, e - b, "file:") || !is_pip_url(s + b, e - b)) {
		rc = set_location(&p, b, pe, 0);
		out->kind = EB_REQ_DIR;
		/* a local project: a wheel name read from a path is no pin */
		eb_specifier_set_release(&out->specs);
		if (rc == 0 && pe < e) {
			size_t xi = pe;
			rc = parse_extras(&p, &xi, e);
		}
	} else {
		rc = rfail(&p, b,
			   "use a path to a local project or a VCS URL (git+, hg+, svn+ or bzr+)",
			   "not a valid editable requirement");
	}
	if (rc < 0) {
		eb_requirement_release(out);
		return rc;
	}
	return 0;
}

void eb_requirement_release(struct eb_requirement *r)
{
	if (!r)
		return;
	free(r->text);
	free(r->name);
	free(r->norm_name);
	for (size_t i = 0; i < r->nextras; i++)
		free(r->extras[i]);
	free(r->extras);
	eb_specifier_set_release(&r->specs);
	free(r->url);
	free(r->url_hash_algo);
	free(r->url_hash_hex);
	free(r->wheel_version);
	eb_marker_free(r->marker);
	free(r->marker_text);
	for (size_t i = 0; i < r->nhashes; i++) {
		free(r->hashes[i].raw);
		free(r->hashes[i].algo);
		free(r->hashes[i].hex);
	}
	free(r->hashes);
	req_init(r);
}

/* ---- hashes -------------------------------------------------------------- */

void eb_requirement_add_hash(struct eb_requirement *r, const char *s, size_t len, unsigned col)
{
	struct eb_req_hash *h;
	const char *colon = memchr(s, ':', len);

	EB_ALLOC_GROW(r->hashes, r->nhashes + 1, r->hashes_cap);
	h = &r->hashes[r->nhashes++];
	h->raw = eb_xstrndup(s, len);
	h->algo = colon ? eb_xstrndup(s, (size_t)(colon - s)) : NULL;
	h->hex = colon ? eb_xstrndup(colon + 1, len - (size_t)(colon - s) - 1) : NULL;
	h->col = col;
}

/* Hex digits expected for an allowed algorithm (pip's STRONG_HASHES), or 0. */
static size_t allowed_hex_len(const char *algo)
{
	const struct eb_hash_algo *a = algo ? eb_hash_algo_find(algo) : NULL;
	return a && a->pin ? a->hexlen : 0;
}

enum hash_problem { HASH_OK, HASH_FORM, HASH_ALGO, HASH_LENGTH, HASH_DIGITS };

static enum hash_problem check_hash(const char *algo, const char *hex)
{
	size_t want;

	if (!algo || !hex || !*algo)
		return HASH_FORM;
	want = allowed_hex_len(algo);
	if (!want)
		return HASH_ALGO;
	for (const char *c = hex; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return HASH_DIGITS;
	if (strlen(hex) != want)
		return HASH_LENGTH;
	return HASH_OK;
}

const char *eb_requirement_hash_problem(const struct eb_req_hash *h)
{
	switch (check_hash(h->algo, h->hex)) {
	case HASH_OK:
		return NULL;
	case HASH_FORM:
		return "not of the form algorithm:hexdigest";
	case HASH_ALGO:
		return "algorithm not allowed (use sha256, sha384 or sha512)";
	case HASH_LENGTH:
		return "hex digest has the wrong length";
	case HASH_DIGITS:
		return "digest is not lower-case hexadecimal";
	}
	return NULL;
}

int eb_requirement_is_hashed(const struct eb_requirement *r)
{
	if (r->url_hash_algo && check_hash(r->url_hash_algo, r->url_hash_hex) == HASH_OK)
		return 1;
	for (size_t i = 0; i < r->nhashes; i++)
		if (check_hash(r->hashes[i].algo, r->hashes[i].hex) == HASH_OK)
			return 1;
	return 0;
}

int eb_requirement_has_hash_option(const struct eb_requirement *r)
{
	return r->nhashes > 0;
}

/* ---- pin rules ----------------------------------------------------------- */

static int is_exact(const struct eb_specifier *sp)
{
	return (sp->op == EB_OP_EQ && !sp->wildcard) || sp->op == EB_OP_ARBITRARY;
}

const char *eb_requirement_pinned_version(const struct eb_requirement *r)
{
	if (r->specs.n == 1 && is_exact(&r->specs.items[0]))
		return r->specs.items[0].raw;
	if (r->specs.n == 0 && r->wheel_version)
		return r->wheel_version;
	return NULL;
}

enum eb_pin_status eb_requirement_pin_status(const struct eb_requirement *r)
{
	if (r->editable)
		return EB_PIN_EDITABLE;
	switch (r->kind) {
	case EB_REQ_VCS:
		return EB_PIN_VCS;
	case EB_REQ_DIR:
		return EB_PIN_LOCAL;
	case EB_REQ_PATH:
		return r->wheel_version && eb_requirement_is_hashed(r) ? EB_PIN_PINNED : EB_PIN_LOCAL;
	case EB_REQ_URL:
		return eb_requirement_is_hashed(r) ? EB_PIN_PINNED : EB_PIN_URL_UNHASHED;
	case EB_REQ_NAMED:
		break;
	}
	if (r->specs.n == 0)
		return EB_PIN_BARE;
	if (r->specs.n == 1) {
		const struct eb_specifier *sp = &r->specs.items[0];
		if (is_exact(sp))
			return EB_PIN_PINNED;
		if (sp->op == EB_OP_EQ)
			return EB_PIN_WILDCARD;
		return EB_PIN_RANGE;
	}
	for (size_t i = 0; i < r->specs.n; i++)
		if (is_exact(&r->specs.items[i]))
			return EB_PIN_MULTIPLE;
	return EB_PIN_RANGE;
}

static void report_hash(const char *algo, const char *hex, const char *raw, const char *file,
			unsigned line, unsigned col, struct eb_diag_list *diags)
{
	struct eb_diag *d;

	switch (check_hash(algo, hex)) {
	case HASH_OK:
		return;
	case HASH_FORM:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col, "EB210",
				"hash '%s' is not of the form algorithm:hexdigest", raw);
		eb_diag_hint(d, "write --hash=sha256:<64 hex digits>");
		return;
	case HASH_ALGO:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col, "EB210",
				"hash algorithm '%s' is not allowed", algo);
		eb_diag_hint(d, "use sha256, sha384 or sha512");
		return;
	case HASH_LENGTH:
		eb_diag_add(diags, EB_SEV_ERROR, file, line, col, "EB210",
			    "%s digest has %zu hex digits, expected %zu", algo, strlen(hex),
			    allowed_hex_len(algo));
		return;
	case HASH_DIGITS:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col, "EB210",
				"%s digest '%s' is not lower-case hexadecimal", algo, hex);
		eb_diag_hint(d, "pip compares digests as lower-case hex strings");
		return;
	}
}

/* The text to show for r in messages: its name if it has one, else the
 * URL or path (credentials hidden). */
static char *shown_subject(const struct eb_requirement *r)
{
	return eb_requirement_redact(r->url && !r->name ? r->url : r->name ? r->name : r->text);
}

void eb_requirement_check_pin(const struct eb_requirement *r, const char *file, unsigned line,
			      unsigned col_offset, struct eb_diag_list *diags)
{
	char *what = shown_subject(r);
	char *url = r->url ? eb_requirement_redact(r->url) : NULL;
	const char *name = r->name ? r->name : "name";
	unsigned url_col = r->url_col ? col_offset + r->url_col : 0;
	unsigned name_col = col_offset + (r->name_col ? r->name_col : r->url_col ? r->url_col : 1);
	struct eb_diag *d;
	char *specs;

	switch (eb_requirement_pin_status(r)) {
	case EB_PIN_PINNED:
		break;
	case EB_PIN_BARE:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, name_col, "EB201",
				"'%s' is not pinned", what);
		eb_diag_hint(d, PIN_HINT_FMT, name);
		break;
	case EB_PIN_RANGE: {
		const struct eb_specifier *sp = &r->specs.items[0];
		specs = eb_specifier_set_to_string(&r->specs);
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col_offset + sp->col, "EB202",
				"'%s%s' is not an exact pin", what, specs);
		eb_diag_hint(d, PIN_HINT_FMT, name);
		free(specs);
		break;
	}
	case EB_PIN_WILDCARD: {
		const struct eb_specifier *sp = &r->specs.items[0];
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, col_offset + sp->col, "EB203",
				"'%s==%s' is a wildcard pin: a wildcard picks a different file tomorrow",
				what, sp->raw);
		eb_diag_hint(d, PIN_HINT_FMT, name);
		break;
	}
	case EB_PIN_MULTIPLE: {
		const struct eb_specifier *exact = NULL;
		specs = eb_specifier_set_to_string(&r->specs);
		for (size_t i = 0; i < r->specs.n && !exact; i++)
			if (is_exact(&r->specs.items[i]))
				exact = &r->specs.items[i];
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line,
				col_offset + r->specs.items[1].col, "EB204",
				"'%s%s' has %zu version clauses; a pin is exactly one", what, specs,
				r->specs.n);
		eb_diag_hint(d, "keep only the exact pin: %s%s%s", name, eb_op_str(exact->op),
			     exact->raw);
		free(specs);
		break;
	}
	case EB_PIN_EDITABLE:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, url_col ? url_col : name_col,
				"EB205", "editable requirement '%s' is not reproducible", url ? url : what);
		eb_diag_hint(d, "build a wheel and pin it by version or by URL with a sha256");
		break;
	case EB_PIN_VCS:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, url_col, "EB206",
				"'%s' is a VCS requirement, not a pinned file", url);
		eb_diag_hint(d, "publish a wheel and pin it by version, or by URL with #sha256=");
		break;
	case EB_PIN_LOCAL:
		if (r->kind == EB_REQ_DIR && url && (strcmp(url, ".") == 0 || strcmp(url, "./") == 0 ||
						      strcmp(url, "file:.") == 0)) {
			/* the project itself: its wheel is built from its files
			 * (a spec's check verifies its pyproject.toml: EB255) */
		} else if (r->kind == EB_REQ_DIR) {
			d = eb_diag_add(diags, EB_SEV_ERROR, file, line, url_col, "EB207",
					"local directory '%s' is not pinned", url);
			eb_diag_hint(d, "build a wheel and install it with --hash=sha256:<digest>");
		} else if (r->wheel_version) {
			d = eb_diag_add(diags, EB_SEV_ERROR, file, line, url_col, "EB207",
					"local wheel '%s' has no hash", url);
			eb_diag_hint(d, "add --hash=sha256:<digest of the file>");
		} else {
			d = eb_diag_add(diags, EB_SEV_ERROR, file, line, url_col, "EB207",
					"local file '%s' is not a wheel", url);
			eb_diag_hint(d, "build a wheel and install it with --hash=sha256:<digest>");
		}
		break;
	case EB_PIN_URL_UNHASHED:
		d = eb_diag_add(diags, EB_SEV_ERROR, file, line, url_col, "EB208",
				"direct URL '%s' has no sha256", url);
		eb_diag_hint(d, "append #sha256=<digest> to the URL or add --hash=sha256:<digest>");
		break;
	}

	if (r->url_hash_algo)
		report_hash(r->url_hash_algo, r->url_hash_hex, r->url_hash_algo, file, line, url_col,
			    diags);
	for (size_t i = 0; i < r->nhashes; i++)
		report_hash(r->hashes[i].algo, r->hashes[i].hex, r->hashes[i].raw, file, line,
			    r->hashes[i].col ? col_offset + r->hashes[i].col : 0, diags);

	for (size_t i = 0; i < r->specs.n; i++) {
		const struct eb_specifier *sp = &r->specs.items[i];
		if (sp->op != EB_OP_ARBITRARY)
			continue;
		d = eb_diag_add(diags, EB_SEV_WARNING, file, line, col_offset + sp->col, "EB215",
				"'%s===%s' uses arbitrary equality, which PEP 440 discourages", what,
				sp->raw);
		eb_diag_hint(d, "use '==' unless the version is not PEP 440");
	}

	if (r->marker) {
		unsigned used = eb_marker_vars_used(r->marker);
		const char *var = (used & EB_MARKER_VAR_PLATFORM_RELEASE) ? "platform_release"
				  : (used & EB_MARKER_VAR_PLATFORM_VERSION) ? "platform_version"
									   : NULL;
		if (var) {
			d = eb_diag_add(diags, EB_SEV_WARNING, file, line, col_offset + r->marker_col,
					"EB217",
					"marker on '%s' depends on the kernel at run time, unknowable at build time",
					var);
			eb_diag_hint(d, "use python_version, sys_platform or platform_machine");
		}
	}
	free(what);
	free(url);
}

/* ---- redaction ----------------------------------------------------------- */

char *eb_requirement_redact(const char *text)
{
	struct eb_buf b;
	const char *p = text;

	eb_buf_init(&b, 0);
	for (;;) {
		const char *sep = strstr(p, "://");
		const char *auth, *end, *at = NULL, *colon = NULL;

		if (!sep)
			break;
		auth = sep + 3;
		for (end = auth; *end && !strchr("/?# \t", *end); end++)
			if (*end == '@')
				at = end;
		eb_buf_put(&b, p, (size_t)(auth - p));
		if (at) {
			colon = memchr(auth, ':', (size_t)(at - auth));
			if (colon)
				eb_buf_put(&b, auth, (size_t)(colon - auth + 1));
			eb_buf_puts(&b, "****");
			auth = at;
		}
		eb_buf_put(&b, auth, (size_t)(end - auth));
		p = end;
	}
	eb_buf_puts(&b, p);
	return eb_buf_detach(&b, NULL);
}
