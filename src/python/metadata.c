/*
 * metadata.c - parsers for the .dist-info text files a wheel installer
 * reads: core metadata, WHEEL and entry_points.txt (see metadata.h).
 *
 * The header parser follows Python's email.feedparser closely enough that
 * a file pip reads one way is not read another way here: headers end at
 * the first empty line or the first line that is not a header, and a
 * continuation line is appended to the previous value with its line break
 * removed (RFC 5322 unfolding).  Fields that decide what gets installed
 * and that must have one value (Name, Version, Metadata-Version, ...) are
 * refused when given twice, since two readers could pick different ones.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "python/metadata.h"
#include "util/alloc.h"
#include "util/buf.h"

/* The newest core metadata version this parser knows (PyPUG core-metadata). */
#define METADATA_KNOWN_MINOR 4

/* ---- small helpers ------------------------------------------------------ */

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static void trim(const char **s, size_t *n)
{
	while (*n && (is_ws(**s) || (*s)[0] == '\r' || (*s)[0] == '\n')) {
		(*s)++;
		(*n)--;
	}
	while (*n && (is_ws((*s)[*n - 1]) || (*s)[*n - 1] == '\r' || (*s)[*n - 1] == '\n'))
		(*n)--;
}

static void push_str(char ***arr, size_t *n, size_t *cap, char *s)
{
	EB_ALLOC_GROW(*arr, *n + 1, *cap);
	(*arr)[(*n)++] = s;
}

static void free_strs(char **arr, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(arr[i]);
	free(arr);
}

/* Common input checks: the size cap and no NUL bytes (a NUL would end the
 * text early for any C consumer, so what we parse would not be what pip
 * parses). */
static int check_input(const char *what, const char *text, size_t len, size_t max,
		       struct eb_error **err)
{
	if (len > max)
		return eb_error_set(err, EB_ETOOBIG, "'%s' is larger than %zu bytes", what, max);
	if (len && memchr(text, '\0', len))
		return eb_error_set(err, EB_EINVALID, "'%s' contains a NUL byte", what);
	return 0;
}

/* ---- RFC 822 headers ------------------------------------------------------ */

struct hdr {
	const char *name; /* points into the text */
	size_t nlen;
	char *value; /* unfolded and trimmed (owned) */
	unsigned line;
};

struct hdrs {
	struct hdr *items;
	size_t n, cap;
};

static void hdrs_release(struct hdrs *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->items[i].value);
	free(h->items);
	memset(h, 0, sizeof(*h));
}

/* Python's email.feedparser headerRE: a header name is printable ASCII
 * without ':' or space, followed by ':'. */
static size_t header_name_len(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ':')
			return i;
		if (c < 33 || c > 126)
			return 0;
	}
	return 0;
}

static int parse_headers(struct hdrs *out, const char *what, const char *text, size_t len,
			 struct eb_error **err)
{
	size_t pos = 0;
	unsigned line = 0;
	struct eb_buf cur = EB_BUF_INIT;
	int have = 0;

	memset(out, 0, sizeof(*out));
	eb_buf_init(&cur, 0);
	while (pos < len) {
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		size_t nlen;

		pos += n + (nl ? 1 : 0);
		line++;
		if (n && l[n - 1] == '\r')
			n--;
		if (n == 0)
			break; /* end of headers; the body follows */
		if (is_ws(l[0])) {
			if (!have) {
				eb_buf_release(&cur);
				hdrs_release(out);
				return eb_error_set(err, EB_EINVALID,
						    "'%s' line %u: continuation line without a header",
						    what, line);
			}
			eb_buf_put(&cur, l, n);
			continue;
		}
		nlen = header_name_len(l, n);
		if (nlen == 0)
			break; /* not a header: the body starts here (email.feedparser) */
		if (have) {
			const char *v = cur.ptr;
			size_t vn = cur.len;
			trim(&v, &vn);
			out->items[out->n - 1].value = eb_xstrndup(v, vn);
			eb_buf_truncate(&cur, 0);
		}
		EB_ALLOC_GROW(out->items, out->n + 1, out->cap);
		out->items[out->n].name = l;
		out->items[out->n].nlen = nlen;
		out->items[out->n].value = NULL;
		out->items[out->n].line = line;
		out->n++;
		have = 1;
		eb_buf_put(&cur, l + nlen + 1, n - nlen - 1);
	}
	if (have) {
		const char *v = cur.ptr;
		size_t vn = cur.len;
		trim(&v, &vn);
		out->items[out->n - 1].value = eb_xstrndup(v, vn);
	}
	eb_buf_release(&cur);
	return 0;
}

static int hdr_is(const struct hdr *h, const char *name)
{
	return h->nlen == strlen(name) && strncasecmp(h->name, name, h->nlen) == 0;
}

/* Set *slot from a single-use field, refusing a second occurrence. */
static int take_single(char **slot, const struct hdr *h, const char *what, const char *field,
		       struct eb_error **err)
{
	if (*slot)
		return eb_error_set(err, EB_EINVALID, "'%s' line %u: field '%s' given twice", what,
				    h->line, field);
	*slot = eb_xstrdup(h->value);
	return 0;
}

/* "2.1" -> 2, 1.  Digits '.' digits, then further ".N" components (which
 * only WHEEL's version could have) are ignored. */
static int parse_major_minor(const char *s, unsigned *major, unsigned *minor)
{
	unsigned long v[2] = { 0, 0 };
	int k = 0;
	const char *p = s;

	if (!*p)
		return -1;
	for (;;) {
		unsigned long x = 0;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9') {
			x = x * 10 + (unsigned long)(*p - '0');
			if (x > 100000)
				return -1;
			p++;
		}
		if (k < 2)
			v[k] = x;
		k++;
		if (*p == '\0')
			break;
		if (*p != '.')
			return -1;
		p++;
	}
	*major = (unsigned)v[0];
	*minor = (unsigned)v[1];
	return 0;
}

/* ---- core metadata -------------------------------------------------------- */

static void add_warning(struct eb_metadata *m, size_t *cap, char *msg)
{
	push_str(&m->warnings, &m->nwarnings, cap, msg);
}

static int add_requires_dist(struct eb_metadata *m, size_t *cap, const struct hdr *h,
			     struct eb_error **err)
{
	struct eb_requirement r;
	const char *v = h->value;

	/* every one is a project page to fetch for pin: a hostile index's
	 * 20,000 made 21,339 requests (the largest real ones have a few
	 * hundred, extras included) */
	if (m->nrequires_dist >= EB_METADATA_MAX_REQUIRES)
		return eb_error_set(err, EB_ETOOBIG, "METADATA has more than %d Requires-Dist",
				    EB_METADATA_MAX_REQUIRES);
	if (eb_requirement_parse(&r, v, strlen(v), err) < 0)
		return eb_error_wrap(err, "METADATA line %u: Requires-Dist '%s'", h->line, v);
	/* A Requires-Dist is a PEP 508 requirement: a name written out, then
	 * specifiers or "@ URL".  pip's line syntax (bare paths and URLs) is
	 * not allowed in metadata. */
	if (!r.name || r.name_col == 0 ||
	    (r.kind != EB_REQ_NAMED && (!r.url || !strstr(r.url, "://")))) {
		eb_requirement_release(&r);
		return eb_error_set(err, EB_EINVALID,
				    "METADATA line %u: Requires-Dist '%s' is not a named PEP 508 requirement",
				    h->line, v);
	}
	EB_ALLOC_GROW(m->requires_dist, m->nrequires_dist + 1, *cap);
	m->requires_dist[m->nrequires_dist++] = r;
	return 0;
}

int eb_metadata_parse(struct eb_metadata *out, const char *text, size_t len,
		      struct eb_error **err)
{
	struct hdrs hs;
	size_t rd_cap = 0, pe_cap = 0, w_cap = 0;
	const char *lic_expr = NULL, *lic_text = NULL, *lic_class = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = check_input("METADATA", text, len, EB_METADATA_MAX_CORE, err)) < 0)
		return r;
	if ((r = parse_headers(&hs, "METADATA", text, len, err)) < 0)
		return r;
	for (size_t i = 0; i < hs.n && r == 0; i++) {
		const struct hdr *h = &hs.items[i];

		if (hdr_is(h, "Metadata-Version")) {
			r = take_single(&out->metadata_version, h, "METADATA", "Metadata-Version",
					err);
		} else if (hdr_is(h, "Name")) {
			r = take_single(&out->name, h, "METADATA", "Name", err);
		} else if (hdr_is(h, "Version")) {
			r = take_single(&out->version, h, "METADATA", "Version", err);
		} else if (hdr_is(h, "Requires-Python")) {
			r = take_single(&out->requires_python, h, "METADATA", "Requires-Python",
					err);
		} else if (hdr_is(h, "Requires-Dist")) {
			r = add_requires_dist(out, &rd_cap, h, err);
		} else if (hdr_is(h, "License-Expression")) {
			lic_expr = h->value;
		} else if (hdr_is(h, "License")) {
			lic_text = h->value;
		} else if (hdr_is(h, "Classifier") && strncmp(h->value, "License ::", 10) == 0 &&
			   !lic_class) {
			lic_class = strrchr(h->value, ':') + 1;
		} else if (hdr_is(h, "Provides-Extra")) {
			char *e = eb_pep503_normalize(h->value, strlen(h->value));
			if (!*e) {
				free(e);
				r = eb_error_set(err, EB_EINVALID,
						 "METADATA line %u: empty Provides-Extra", h->line);
			} else if (eb_metadata_provides_extra(out, e)) {
				free(e);
			} else {
				push_str(&out->provides_extra, &out->nprovides_extra, &pe_cap, e);
			}
		}
	}
	{
		/* what SBOMs show: one short line, "UNKNOWN" (old setuptools) is none */
		const char *l = lic_expr ? lic_expr : lic_text;
		size_t n = l ? strcspn(l, "\r\n") : 0;
		if (n && n <= 200 && strncmp(l, "UNKNOWN", n) != 0)
			out->license = eb_xstrndup(l, n);
		else if (lic_class) {
			while (*lic_class == ' ')
				lic_class++;
			if (*lic_class && strlen(lic_class) <= 200)
				out->license = eb_xstrdup(lic_class);
		}
	}
	hdrs_release(&hs);
	if (r < 0)
		goto fail;

	if (!out->metadata_version) {
		r = eb_error_set(err, EB_EINVALID, "METADATA has no Metadata-Version");
		goto fail;
	}
	if (parse_major_minor(out->metadata_version, &out->mv_major, &out->mv_minor) < 0 ||
	    out->mv_major < 1 || out->mv_major > 2) {
		r = eb_error_set(err, EB_EINVALID, "unsupported metadata version '%s'",
				 out->metadata_version);
		goto fail;
	}
	/* PyPUG core-metadata: tools should warn on a newer minor version and
	 * fail on a newer major one. */
	if (out->mv_major == 2 && out->mv_minor > METADATA_KNOWN_MINOR)
		add_warning(out, &w_cap,
			    eb_xasprintf("metadata version '%s' is newer than 2.%d",
					 out->metadata_version, METADATA_KNOWN_MINOR));
	if (!out->name || !*out->name) {
		r = eb_error_set(err, EB_EINVALID, "METADATA has no Name");
		goto fail;
	}
	if (!eb_pep503_valid(out->name, strlen(out->name))) {
		r = eb_error_set(err, EB_EINVALID, "METADATA Name '%s' is not a valid project name",
				 out->name);
		goto fail;
	}
	out->norm_name = eb_pep503_normalize(out->name, strlen(out->name));
	if (!out->version || !*out->version) {
		r = eb_error_set(err, EB_EINVALID, "METADATA has no Version");
		goto fail;
	}
	{
		struct eb_error *verr = NULL;
		if (eb_version_parse(&out->parsed_version, out->version, strlen(out->version),
				     &verr) < 0) {
			add_warning(out, &w_cap,
				    eb_xasprintf("version '%s' is not a valid PEP 440 version",
						 out->version));
			memset(&out->parsed_version, 0, sizeof(out->parsed_version));
		}
		eb_error_free(verr);
	}
	if (out->requires_python) {
		struct eb_error *serr = NULL;
		if (eb_specifier_set_parse(&out->requires_python_specs, out->requires_python,
					   strlen(out->requires_python), &serr) < 0) {
			add_warning(out, &w_cap,
				    eb_xasprintf("Requires-Python '%s' is not a valid specifier set",
						 out->requires_python));
			memset(&out->requires_python_specs, 0, sizeof(out->requires_python_specs));
		}
		eb_error_free(serr);
	}
	return 0;
fail:
	eb_metadata_release(out);
	return r;
}

int eb_metadata_provides_extra(const struct eb_metadata *m, const char *extra)
{
	eb_autofree char *norm = eb_pep503_normalize(extra, strlen(extra));

	for (size_t i = 0; i < m->nprovides_extra; i++)
		if (strcmp(m->provides_extra[i], norm) == 0)
			return 1;
	return 0;
}

void eb_metadata_release(struct eb_metadata *m)
{
	free(m->metadata_version);
	free(m->name);
	free(m->norm_name);
	free(m->version);
	if (m->parsed_version.nrelease)
		eb_version_release(&m->parsed_version);
	free(m->requires_python);
	free(m->license);
	eb_specifier_set_release(&m->requires_python_specs);
	for (size_t i = 0; i < m->nrequires_dist; i++)
		eb_requirement_release(&m->requires_dist[i]);
	free(m->requires_dist);
	free_strs(m->provides_extra, m->nprovides_extra);
	free_strs(m->warnings, m->nwarnings);
	memset(m, 0, sizeof(*m));
}

/* ---- WHEEL ------------------------------------------------------------------ */

int eb_metadata_parse_wheel(struct eb_wheel_meta *out, const char *text, size_t len,
			    struct eb_error **err)
{
	struct hdrs hs;
	char *version = NULL, *purelib = NULL;
	size_t tcap = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = check_input("WHEEL", text, len, EB_METADATA_MAX_WHEEL, err)) < 0)
		return r;
	if ((r = parse_headers(&hs, "WHEEL", text, len, err)) < 0)
		return r;
	for (size_t i = 0; i < hs.n && r == 0; i++) {
		const struct hdr *h = &hs.items[i];

		if (hdr_is(h, "Wheel-Version"))
			r = take_single(&version, h, "WHEEL", "Wheel-Version", err);
		else if (hdr_is(h, "Root-Is-Purelib"))
			r = take_single(&purelib, h, "WHEEL", "Root-Is-Purelib", err);
		else if (hdr_is(h, "Generator"))
			r = take_single(&out->generator, h, "WHEEL", "Generator", err);
		else if (hdr_is(h, "Build"))
			r = take_single(&out->build, h, "WHEEL", "Build", err);
		else if (hdr_is(h, "Tag"))
			push_str(&out->tags, &out->ntags, &tcap, eb_xstrdup(h->value));
	}
	hdrs_release(&hs);
	if (r < 0)
		goto fail;
	if (!version) {
		r = eb_error_set(err, EB_EINVALID, "WHEEL has no Wheel-Version");
		goto fail;
	}
	if (parse_major_minor(version, &out->version_major, &out->version_minor) < 0) {
		r = eb_error_set(err, EB_EINVALID, "WHEEL has an invalid Wheel-Version '%s'",
				 version);
		goto fail;
	}
	/* pip: wheel_root_is_purelib() compares the lower-cased value. */
	out->root_is_purelib = purelib && strcasecmp(purelib, "true") == 0;
	free(version);
	free(purelib);
	return 0;
fail:
	free(version);
	free(purelib);
	eb_wheel_meta_release(out);
	return r;
}

void eb_wheel_meta_release(struct eb_wheel_meta *w)
{
	free(w->generator);
	free(w->build);
	free_strs(w->tags, w->ntags);
	memset(w, 0, sizeof(*w));
}

/* ---- entry_points.txt ------------------------------------------------------- */

static int is_ident_byte(unsigned char c)
{
	/* \w of Python's re on str: ASCII letters, digits, '_' and (roughly)
	 * any non-ASCII letter; a UTF-8 byte can never close a Python
	 * string or start an operator, so accepting every byte >= 0x80 keeps
	 * the generated launcher safe. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c >= 0x80;
}

/* Length of a dotted name ("a.b_c.d") at s, or 0 when there is none or a
 * part is empty or starts with a digit. */
static size_t dotted_len(const char *s, size_t n)
{
	size_t i = 0;

	for (;;) {
		size_t b = i;
		while (i < n && is_ident_byte((unsigned char)s[i]))
			i++;
		if (i == b || (s[b] >= '0' && s[b] <= '9'))
			return 0;
		if (i < n && s[i] == '.') {
			i++;
			continue;
		}
		return i;
	}
}

static const char *entry_name_problem(const char *name)
{
	if (!*name)
		return "is empty";
	for (const char *p = name; *p; p++) {
		if (*p == '/' || *p == '\\')
			return "contains a path separator";
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "contains a control character";
	}
	if (name[0] == '.')
		return "starts with '.'";
	return NULL;
}

static void entry_point_release(struct eb_entry_point *e)
{
	free(e->name);
	free(e->module);
	free(e->attr);
	free_strs(e->extras, e->nextras);
	memset(e, 0, sizeof(*e));
}

/* Parse "module:attr [extra, ...]" (importlib.metadata's pattern, with the
 * attribute required as pip requires it for scripts). */
static int parse_entry_value(struct eb_entry_point *e, const char *v, size_t n, unsigned line,
			     struct eb_error **err)
{
	size_t i = 0, k, xcap = 0;

	k = dotted_len(v, n);
	if (k == 0)
		goto bad;
	e->module = eb_xstrndup(v, k);
	i = k;
	while (i < n && is_ws(v[i]))
		i++;
	if (i < n && v[i] != ':')
		goto bad;
	if (i >= n)
		return eb_error_set(err, EB_EINVALID,
				    "entry_points.txt line %u: entry point '%s' has no callable ('module:attr')",
				    line, e->name);
	i++;
	while (i < n && is_ws(v[i]))
		i++;
	k = dotted_len(v + i, n - i);
	if (k == 0)
		goto bad;
	e->attr = eb_xstrndup(v + i, k);
	i += k;
	while (i < n && is_ws(v[i]))
		i++;
	if (i < n && v[i] == '[') {
		const char *close = memchr(v + i, ']', n - i);
		const char *p;
		if (!close)
			goto bad;
		p = v + i + 1;
		while (p < close) {
			const char *c = memchr(p, ',', (size_t)(close - p));
			const char *x = p;
			size_t xn = (size_t)((c ? c : close) - p);
			trim(&x, &xn);
			if (xn) {
				if (!eb_pep503_valid(x, xn))
					goto bad;
				push_str(&e->extras, &e->nextras, &xcap, eb_pep503_normalize(x, xn));
			}
			p = c ? c + 1 : close;
		}
		i = (size_t)(close - v) + 1;
		while (i < n && is_ws(v[i]))
			i++;
	}
	if (i != n)
		goto bad;
	return 0;
bad:
	return eb_error_set(err, EB_EINVALID,
			    "entry_points.txt line %u: invalid entry point '%.*s' for '%s'", line,
			    (int)n, v, e->name);
}

static int find_entry(const struct eb_entry_points *e, const char *name)
{
	for (size_t i = 0; i < e->nconsole; i++)
		if (strcmp(e->console[i].name, name) == 0)
			return 1;
	for (size_t i = 0; i < e->ngui; i++)
		if (strcmp(e->gui[i].name, name) == 0)
			return 1;
	return 0;
}

int eb_metadata_parse_entry_points(struct eb_entry_points *out, const char *text, size_t len,
				   struct eb_error **err)
{
	size_t pos = 0, ccap = 0, gcap = 0;
	unsigned line = 0;
	int section = -1; /* -1 none yet, 0 other, 1 console, 2 gui */
	int seen_console = 0, seen_gui = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = check_input("entry_points.txt", text, len, EB_METADATA_MAX_ENTRY_POINTS, err)) <
	    0)
		return r;
	while (pos < len) {
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		const char *eq, *k, *v;
		size_t kn, vn;
		struct eb_entry_point e;
		const char *why;

		pos += n + (nl ? 1 : 0);
		line++;
		trim(&l, &n);
		if (n == 0 || l[0] == '#' || l[0] == ';')
			continue;
		if (l[0] == '[') {
			const char *s = l + 1;
			size_t sn;
			if (l[n - 1] != ']' || n < 3) {
				r = eb_error_set(err, EB_EINVALID,
						 "entry_points.txt line %u: invalid section header", line);
				goto fail;
			}
			sn = n - 2;
			trim(&s, &sn);
			if (sn == 15 && memcmp(s, "console_scripts", 15) == 0) {
				if (seen_console++)
					goto dup_section;
				section = 1;
			} else if (sn == 11 && memcmp(s, "gui_scripts", 11) == 0) {
				if (seen_gui++)
					goto dup_section;
				section = 2;
			} else {
				section = 0;
			}
			continue;
		}
		eq = memchr(l, '=', n);
		if (!eq) {
			r = eb_error_set(err, EB_EINVALID,
					 "entry_points.txt line %u: expected 'name = value'", line);
			goto fail;
		}
		if (section < 0) {
			r = eb_error_set(err, EB_EINVALID,
					 "entry_points.txt line %u: entry before any section", line);
			goto fail;
		}
		k = l;
		kn = (size_t)(eq - l);
		v = eq + 1;
		vn = n - kn - 1;
		trim(&k, &kn);
		trim(&v, &vn);
		if (kn == 0) {
			r = eb_error_set(err, EB_EINVALID, "entry_points.txt line %u: empty name",
					 line);
			goto fail;
		}
		if (section == 0)
			continue;
		memset(&e, 0, sizeof(e));
		e.name = eb_xstrndup(k, kn);
		if ((why = entry_name_problem(e.name)) != NULL) {
			r = eb_error_set(err, EB_EINVALID,
					 "entry_points.txt line %u: entry point name '%s' %s", line,
					 e.name, why);
			entry_point_release(&e);
			goto fail;
		}
		if (find_entry(out, e.name)) {
			r = eb_error_set(err, EB_EINVALID,
					 "entry_points.txt line %u: script '%s' defined twice", line,
					 e.name);
			entry_point_release(&e);
			goto fail;
		}
		if ((r = parse_entry_value(&e, v, vn, line, err)) < 0) {
			entry_point_release(&e);
			goto fail;
		}
		if (section == 1) {
			EB_ALLOC_GROW(out->console, out->nconsole + 1, ccap);
			out->console[out->nconsole++] = e;
		} else {
			EB_ALLOC_GROW(out->gui, out->ngui + 1, gcap);
			out->gui[out->ngui++] = e;
		}
	}
	return 0;
dup_section:
	r = eb_error_set(err, EB_EINVALID, "entry_points.txt line %u: section given twice", line);
fail:
	eb_entry_points_release(out);
	return r;
}

void eb_entry_points_release(struct eb_entry_points *e)
{
	for (size_t i = 0; i < e->nconsole; i++)
		entry_point_release(&e->console[i]);
	for (size_t i = 0; i < e->ngui; i++)
		entry_point_release(&e->gui[i]);
	free(e->console);
	free(e->gui);
	memset(e, 0, sizeof(*e));
}
