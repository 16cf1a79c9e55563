/*
 * tags.c - wheel filename parsing, a target's supported tags in priority
 * order, and the choice of the wheel to install for a pinned version.
 *
 * The tag order is packaging.tags' for CPython (checked against packaging
 * main, Aug 2026), except that linux_<arch> is the last platform rather
 * than the first (uv's order; see tags.h).  The file choice follows pip's
 * PackageFinder: filter, then sort by (allowed hash, not yanked, tag rank,
 * build tag).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "python/tags.h"
#include "util/alloc.h"
#include "util/buf.h"

/* How many file names a "the index has: ..." list shows before it stops:
 * numpy has dozens of files per version and the message is one line. */
#define LIST_MAX 8
/* Longest piece of untrusted text (a filename, a yank reason) quoted in a
 * message. */
#define QUOTE_MAX 120

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char to_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static char *lower_ndup(const char *s, size_t n)
{
	char *r = eb_xstrndup(s, n);

	for (size_t i = 0; i < n; i++)
		r[i] = to_lower(r[i]);
	return r;
}

/* Untrusted text for a one-line message: printable ASCII only, at most
 * QUOTE_MAX bytes (then "..."). */
static void add_quoted(struct eb_buf *b, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i < QUOTE_MAX; i++)
		eb_buf_putc(b, (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?');
	if (s[i])
		eb_buf_puts(b, "...");
}

static char *quoted(const char *s)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	add_quoted(&b, s);
	return eb_buf_detach(&b, NULL);
}

/* ---- tags ------------------------------------------------------------------ */

static void tag_set(struct eb_tag *t, const char *interpreter, const char *abi,
		    const char *platform)
{
	t->interpreter = eb_xstrdup(interpreter);
	t->abi = eb_xstrdup(abi);
	t->platform = eb_xstrdup(platform);
}

static void tag_release(struct eb_tag *t)
{
	free(t->interpreter);
	free(t->abi);
	free(t->platform);
	t->interpreter = t->abi = t->platform = NULL;
}

static void tags_free(struct eb_tag *tags, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tag_release(&tags[i]);
	free(tags);
}

char *eb_tag_to_string(const struct eb_tag *t)
{
	return eb_xasprintf("%s-%s-%s", t->interpreter, t->abi, t->platform);
}

static int tag_cmp(const struct eb_tag *a, const struct eb_tag *b)
{
	int c = strcmp(a->interpreter, b->interpreter);

	if (c)
		return c;
	c = strcmp(a->abi, b->abi);
	return c ? c : strcmp(a->platform, b->platform);
}

/* One part of a compressed tag set ("py2.py3"): pieces separated by '.',
 * each non-empty and [A-Za-z0-9_]; interpreter pieces must be identifiers
 * (packaging 26.3 rejects "3py").  Returns the number of pieces, or 0 with
 * *why set. */
static size_t count_pieces(const char *s, size_t len, int identifier, const char **why)
{
	size_t n = 1, start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			if (i == start) {
				*why = "empty tag component";
				return 0;
			}
			if (identifier && !is_alpha(s[start]) && s[start] != '_') {
				*why = "the python tag must start with a letter";
				return 0;
			}
			if (i < len)
				n++;
			start = i + 1;
		} else if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '_') {
			*why = "a tag component may hold only letters, digits and '_'";
			return 0;
		}
	}
	return n;
}

/* Piece k of a '.'-separated part, lower-cased; caller frees. */
static char *piece(const char *s, size_t len, size_t k)
{
	size_t start = 0, i;

	for (i = 0; i < len; i++) {
		if (s[i] != '.')
			continue;
		if (k == 0)
			break;
		k--;
		start = i + 1;
	}
	return lower_ndup(s + start, i - start);
}

struct span {
	const char *p;
	size_t n;
};

/* Expand "py-abi-plat" parts into the cross product, in order, without
 * duplicates.  Returns NULL, or a static reason. */
static const char *expand_tagset(const struct span parts[3], struct eb_tag **out, size_t *nout)
{
	const char *why = NULL;
	size_t np[3], n = 0;
	struct eb_tag *tags;

	for (int k = 0; k < 3; k++) {
		np[k] = count_pieces(parts[k].p, parts[k].n, k == 0, &why);
		if (!np[k])
			return why;
	}
	/* Each factor first, so the product cannot overflow. */
	if (np[0] > EB_TAGS_MAX_WHEEL_TAGS || np[1] > EB_TAGS_MAX_WHEEL_TAGS ||
	    np[2] > EB_TAGS_MAX_WHEEL_TAGS || np[0] * np[1] * np[2] > EB_TAGS_MAX_WHEEL_TAGS)
		return "the compressed tag set expands to too many tags";
	tags = eb_xcalloc(np[0] * np[1] * np[2], sizeof(*tags));
	for (size_t a = 0; a < np[0]; a++)
		for (size_t b = 0; b < np[1]; b++)
			for (size_t c = 0; c < np[2]; c++) {
				struct eb_tag t = {
					piece(parts[0].p, parts[0].n, a),
					piece(parts[1].p, parts[1].n, b),
					piece(parts[2].p, parts[2].n, c),
				};
				size_t j;

				for (j = 0; j < n && tag_cmp(&tags[j], &t); j++)
					;
				if (j < n)
					tag_release(&t);
				else
					tags[n++] = t;
			}
	*out = tags;
	*nout = n;
	return NULL;
}

/* ---- wheel filenames -------------------------------------------------------- */

int eb_tags_is_wheel_filename(const char *filename)
{
	size_t len = strlen(filename);

	return len > 4 && strcmp(filename + len - 4, ".whl") == 0;
}

static int bad_filename(struct eb_error **err, const char *filename, const char *why)
{
	eb_autofree char *q = quoted(filename);

	return eb_error_set(err, EB_EINVALID, "invalid wheel filename '%s': %s", q, why);
}

int eb_wheel_filename_parse(struct eb_wheel_filename *out, const char *filename,
			    struct eb_error **err)
{
	struct eb_wheel_filename w;
	size_t len = strlen(filename), stem, dash[6], ndash = 0;
	struct span parts[3];
	struct eb_error *verr = NULL;
	const char *why;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)filename[i];

		if (c <= ' ' || c == 0x7f || c == '/' || c == '\\')
			return bad_filename(err, filename,
					    "a filename has no spaces, control characters or '/'");
	}
	if (!eb_tags_is_wheel_filename(filename))
		return bad_filename(err, filename, "the name must end in '.whl'");
	stem = len - 4;
	for (size_t i = 0; i < stem; i++) {
		if (filename[i] != '-')
			continue;
		if (ndash == 6)
			break;
		dash[ndash++] = i;
	}
	if (ndash != 4 && ndash != 5)
		return bad_filename(err, filename,
				    "expected name-version[-build]-python-abi-platform.whl");

	/* The name: PEP 427 escapes it to [A-Za-z0-9._] with no "__" (readers
	 * accept '.' and upper case). */
	if (dash[0] == 0)
		return bad_filename(err, filename, "empty project name");
	for (size_t i = 0; i < dash[0]; i++) {
		char c = filename[i];

		if (!is_alpha(c) && !is_digit(c) && c != '_' && c != '.')
			return bad_filename(err, filename, "invalid project name");
		if (c == '_' && i > 0 && filename[i - 1] == '_')
			return bad_filename(err, filename, "invalid project name");
	}

	if (eb_version_parse(&w.version, filename + dash[0] + 1, dash[1] - dash[0] - 1, &verr) < 0) {
		eb_error_free(verr);
		return bad_filename(err, filename, "invalid version");
	}
	if (ndash == 5 && !is_digit(filename[dash[1] + 1])) {
		eb_version_release(&w.version);
		return bad_filename(err, filename, "the build tag must start with a digit");
	}

	parts[0].p = filename + dash[ndash - 3] + 1;
	parts[0].n = dash[ndash - 2] - dash[ndash - 3] - 1;
	parts[1].p = filename + dash[ndash - 2] + 1;
	parts[1].n = dash[ndash - 1] - dash[ndash - 2] - 1;
	parts[2].p = filename + dash[ndash - 1] + 1;
	parts[2].n = stem - dash[ndash - 1] - 1;
	why = expand_tagset(parts, &w.tags, &w.ntags);
	if (why) {
		eb_version_release(&w.version);
		return bad_filename(err, filename, why);
	}

	w.name = eb_xstrndup(filename, dash[0]);
	w.norm_name = eb_pep503_normalize(filename, dash[0]);
	w.version_str = eb_xstrndup(filename + dash[0] + 1, dash[1] - dash[0] - 1);
	if (ndash == 5)
		w.build = eb_xstrndup(filename + dash[1] + 1, dash[2] - dash[1] - 1);
	*out = w;
	return 0;
}

void eb_wheel_filename_release(struct eb_wheel_filename *w)
{
	free(w->name);
	free(w->norm_name);
	free(w->version_str);
	free(w->build);
	if (w->version.release)
		eb_version_release(&w->version);
	tags_free(w->tags, w->ntags);
	memset(w, 0, sizeof(*w));
}

/* The number at the start of a build tag without leading zeros (so that
 * "01" == "1", as int() reads it), its length, and the rest. */
static void split_build(const char *s, const char **num, size_t *nnum, const char **rest)
{
	size_t i = 0, j;

	while (s[i] == '0' && is_digit(s[i + 1]))
		i++;
	for (j = i; is_digit(s[j]); j++)
		;
	*num = s + i;
	*nnum = j - i;
	*rest = s + j;
}

int eb_wheel_build_cmp(const char *a, const char *b)
{
	const char *na, *nb, *ra, *rb;
	size_t la, lb;
	int c;

	if (!a || !b)
		return (a != NULL) - (b != NULL);
	split_build(a, &na, &la, &ra);
	split_build(b, &nb, &lb, &rb);
	/* Compare the numbers as digit strings: no overflow however long. */
	if (la != lb)
		return la < lb ? -1 : 1;
	c = memcmp(na, nb, la);
	if (c)
		return c;
	/* strcmp compares as unsigned char: UTF-8 byte order is code point
	 * order, which is how Python compares the str part. */
	return strcmp(ra, rb);
}

/* ---- targets ------------------------------------------------------------------ */

struct arch_info {
	const char *docker; /* GOARCH */
	const char *variants[3]; /* accepted variants besides none */
	const char *machine;
	unsigned glibc_floor; /* oldest manylinux_2_X tag for the arch */
};

/* packaging's _manylinux: the oldest glibc is 2.17 everywhere except x86_64
 * and i686, whose manylinux1 (2.5) wheels exist. */
static const struct arch_info arches[] = {
	{ "amd64", { "v1", "v2", "v3" }, "x86_64", 5 },
	{ "arm64", { "v8", NULL, NULL }, "aarch64", 17 },
	{ "arm", { "v7", NULL, NULL }, "armv7l", 17 },
	{ "386", { NULL, NULL, NULL }, "i686", 5 },
	{ "ppc64le", { NULL, NULL, NULL }, "ppc64le", 17 },
	{ "s390x", { NULL, NULL, NULL }, "s390x", 17 },
	{ "riscv64", { NULL, NULL, NULL }, "riscv64", 17 },
};

#define NARCHES (sizeof(arches) / sizeof(arches[0]))

static const struct arch_info *arch_by_machine(const char *machine)
{
	for (size_t i = 0; i < NARCHES; i++)
		if (strcmp(arches[i].machine, machine) == 0)
			return &arches[i];
	return NULL;
}

const char *eb_tags_platform_arch(const char *platform)
{
	const char *arch, *variant;
	size_t alen;

	if (!strchr(platform, '/')) {
		const struct arch_info *a = arch_by_machine(platform);
		return a ? a->machine : NULL;
	}
	if (strncmp(platform, "linux/", 6) != 0)
		return NULL;
	arch = platform + 6;
	variant = strchr(arch, '/');
	alen = variant ? (size_t)(variant - arch) : strlen(arch);
	if (variant && strchr(++variant, '/'))
		return NULL;
	for (size_t i = 0; i < NARCHES; i++) {
		const struct arch_info *a = &arches[i];

		if (strlen(a->docker) != alen || strncmp(a->docker, arch, alen) != 0)
			continue;
		if (!variant)
			return a->machine;
		for (size_t k = 0; k < 3 && a->variants[k]; k++)
			if (strcmp(a->variants[k], variant) == 0)
				return a->machine;
		return NULL;
	}
	return NULL;
}

/* A small decimal number at *s (1 to 3 digits), advancing *s. */
static int scan_small(const char **s, unsigned *out)
{
	unsigned v = 0;
	int n = 0;

	while (is_digit(**s)) {
		if (++n > 3)
			return -1;
		v = v * 10 + (unsigned)(**s - '0');
		(*s)++;
	}
	if (!n)
		return -1;
	*out = v;
	return 0;
}

static int parse_python(struct eb_tag_target *t, const char *s, struct eb_error **err)
{
	size_t len = strlen(s);
	const char *p = s, *end;
	struct eb_version v;
	struct eb_error *verr = NULL;

	if (len > 0 && s[len - 1] == 't') {
		t->free_threaded = 1;
		len--;
	}
	end = s + len;
	if (len >= sizeof(t->python_full) || scan_small(&p, &t->py_major) < 0 || p == end ||
	    *p != '.')
		goto bad;
	p++;
	if (scan_small(&p, &t->py_minor) < 0 || (p != end && *p != '.'))
		goto bad;
	/* A micro part and beyond ("3.11.4", "3.13.0rc1") is whatever PEP 440
	 * accepts: it is only compared against requires-python. */
	if (eb_version_parse(&v, s, len, &verr) < 0) {
		eb_error_free(verr);
		goto bad;
	}
	eb_version_release(&v);
	memcpy(t->python_full, s, len);
	t->python_full[len] = '\0';
	return 0;
bad:
	return eb_error_set(err, EB_EINVALID,
			    "invalid python version '%s': expected 3.X or 3.X.Y", s);
}

static int parse_libc(struct eb_tag_target *t, const char *s, struct eb_error **err)
{
	const char *p;

	if (strncmp(s, "glibc ", 6) == 0) {
		t->libc = EB_TAGS_GLIBC;
		p = s + 6;
	} else if (strncmp(s, "musl ", 5) == 0) {
		t->libc = EB_TAGS_MUSL;
		p = s + 5;
	} else {
		return eb_error_set(err, EB_EINVALID,
				    "invalid C library '%s': expected 'glibc X.Y' or 'musl X.Y'", s);
	}
	if (scan_small(&p, &t->libc_major) < 0 || *p++ != '.' ||
	    scan_small(&p, &t->libc_minor) < 0 || *p)
		return eb_error_set(err, EB_EINVALID,
				    "invalid C library '%s': expected 'glibc X.Y' or 'musl X.Y'", s);
	/* Wheel tags know glibc 2 (PEP 600) and musl 1 (PEP 656) only. */
	if (t->libc_major != (t->libc == EB_TAGS_GLIBC ? 2u : 1u))
		return eb_error_set(err, EB_EINVALID, "unsupported C library '%s'", s);
	return 0;
}

int eb_tag_target_parse(struct eb_tag_target *out, const char *python_version,
			const char *platform, const char *libc, struct eb_error **err)
{
	struct eb_tag_target t;
	const char *machine;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&t, 0, sizeof(t));
	r = parse_python(&t, python_version, err);
	if (r < 0)
		return r;
	if (t.py_major != 3)
		return eb_error_set(err, EB_EINVALID,
				    "unsupported python version '%s': envbuild targets CPython 3",
				    python_version);
	if (t.free_threaded && t.py_minor < 13)
		return eb_error_set(err, EB_EINVALID,
				    "invalid python version '%s': free-threaded CPython starts at 3.13",
				    python_version);
	machine = eb_tags_platform_arch(platform);
	if (!machine)
		return eb_error_set(err, EB_EINVALID,
				    "unsupported platform '%s' for python wheels", platform);
	memcpy(t.arch, machine, strlen(machine) + 1);
	r = parse_libc(&t, libc, err);
	if (r < 0)
		return r;
	*out = t;
	return 0;
}

/* ---- tag lists ---------------------------------------------------------------- */

struct strv {
	char **v;
	size_t n, cap;
};

static void strv_add(struct strv *s, char *owned)
{
	EB_ALLOC_GROW(s->v, s->n + 1, s->cap);
	s->v[s->n++] = owned;
}

static void strv_release(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* The target's platforms, best first, linux_<arch> last. */
static void target_platforms(const struct eb_tag_target *t, unsigned floor, struct strv *out)
{
	const char *a = t->arch;

	if (t->libc == EB_TAGS_GLIBC) {
		for (unsigned m = t->libc_minor + 1; m-- > floor;) {
			strv_add(out, eb_xasprintf("manylinux_2_%u_%s", m, a));
			/* PEP 600's legacy aliases rank right after their
			 * equal, as packaging and uv place them. */
			if (m == 17)
				strv_add(out, eb_xasprintf("manylinux2014_%s", a));
			else if (m == 12)
				strv_add(out, eb_xasprintf("manylinux2010_%s", a));
			else if (m == 5)
				strv_add(out, eb_xasprintf("manylinux1_%s", a));
		}
	} else {
		for (unsigned m = t->libc_minor + 1; m-- > 0;)
			strv_add(out, eb_xasprintf("musllinux_%u_%u_%s", t->libc_major, m, a));
	}
	strv_add(out, eb_xasprintf("linux_%s", a));
}

struct tbuild {
	struct eb_tag *items;
	size_t n, cap;
};

static void tb_add(struct tbuild *b, const char *interpreter, const char *abi, const char *plat)
{
	EB_ALLOC_GROW(b->items, b->n + 1, b->cap);
	tag_set(&b->items[b->n++], interpreter, abi, plat);
}

static void tb_group(struct tbuild *b, const char *interpreter, const char *abi,
		     const struct strv *plats)
{
	for (size_t i = 0; i < plats->n; i++)
		tb_add(b, interpreter, abi, plats->v[i]);
}

static int sorted_cmp(const void *a, const void *b)
{
	return tag_cmp(*(const struct eb_tag *const *)a, *(const struct eb_tag *const *)b);
}

int eb_tag_list_build(struct eb_tag_list *out, const struct eb_tag_target *t,
		      struct eb_error **err)
{
	const struct arch_info *ai;
	struct strv plats = { NULL, 0, 0 }, pys = { NULL, 0, 0 };
	struct tbuild b = { NULL, 0, 0 };
	char interp[16], abi[16];
	const char *stable;
	unsigned maj, min;

	memset(out, 0, sizeof(*out));
	ai = arch_by_machine(t->arch);
	if (t->py_major != 3 || t->py_minor > 999)
		return eb_error_set(err, EB_EINVALID,
				    "unsupported python version %u.%u: envbuild targets CPython 3",
				    t->py_major, t->py_minor);
	if (!ai)
		return eb_error_set(err, EB_EINVALID, "unsupported machine '%s' for python wheels",
				    t->arch);
	if (t->libc == EB_TAGS_GLIBC && t->libc_major != 2)
		return eb_error_set(err, EB_EINVALID, "unsupported glibc version %u.%u",
				    t->libc_major, t->libc_minor);
	if (t->libc == EB_TAGS_MUSL && t->libc_major != 1)
		return eb_error_set(err, EB_EINVALID, "unsupported musl version %u.%u",
				    t->libc_major, t->libc_minor);
	if (t->libc_minor > 999)
		return eb_error_set(err, EB_EINVALID, "unsupported C library version %u.%u",
				    t->libc_major, t->libc_minor);
	if (t->free_threaded && t->py_minor < 13)
		return eb_error_set(err, EB_EINVALID,
				    "free-threaded CPython starts at 3.13, not %u.%u", t->py_major,
				    t->py_minor);

	maj = t->py_major;
	min = t->py_minor;
	target_platforms(t, ai->glibc_floor, &plats);
	snprintf(interp, sizeof(interp), "cp%u%u", maj, min);
	snprintf(abi, sizeof(abi), "cp%u%u%s", maj, min, t->free_threaded ? "t" : "");
	/* PEP 803: a free-threaded build takes abi3t wheels, never abi3. */
	stable = t->free_threaded ? "abi3t" : "abi3";

	/* cpython_tags(): the interpreter's own ABI, the stable ABI, none,
	 * then the stable ABI of every older minor down to 3.2 (abi3's
	 * start). */
	tb_group(&b, interp, abi, &plats);
	if (min >= 2)
		tb_group(&b, interp, stable, &plats);
	tb_group(&b, interp, "none", &plats);
	if (min >= 2)
		for (unsigned m = min; m-- > 2;) {
			char older[16];

			snprintf(older, sizeof(older), "cp%u%u", maj, m);
			tb_group(&b, older, stable, &plats);
		}

	/* compatible_tags(): py3X, py3, py3(X-1) ... py30 on each platform,
	 * then cp3X-none-any and the same py range on "any". */
	strv_add(&pys, eb_xasprintf("py%u%u", maj, min));
	strv_add(&pys, eb_xasprintf("py%u", maj));
	for (unsigned m = min; m-- > 0;)
		strv_add(&pys, eb_xasprintf("py%u%u", maj, m));
	for (size_t i = 0; i < pys.n; i++)
		tb_group(&b, pys.v[i], "none", &plats);
	tb_add(&b, interp, "none", "any");
	for (size_t i = 0; i < pys.n; i++)
		tb_add(&b, pys.v[i], "none", "any");

	out->target = *t;
	out->items = b.items;
	out->n = b.n;
	out->nplatforms = plats.n;
	out->sorted = eb_xcalloc(b.n, sizeof(*out->sorted));
	for (size_t i = 0; i < b.n; i++)
		out->sorted[i] = &b.items[i];
	eb_sort(out->sorted, b.n, sizeof(*out->sorted), sorted_cmp);
	strv_release(&plats);
	strv_release(&pys);
	return 0;
}

void eb_tag_list_release(struct eb_tag_list *l)
{
	tags_free(l->items, l->n);
	free(l->sorted);
	memset(l, 0, sizeof(*l));
}

int eb_tag_list_rank(const struct eb_tag_list *l, const char *interpreter, const char *abi,
		     const char *platform)
{
	/* The casts only build a search key; bsearch never writes through it. */
	struct eb_tag key = { (char *)interpreter, (char *)abi, (char *)platform };
	const struct eb_tag *kp = &key;
	const struct eb_tag *const *hit;

	if (!l->n)
		return -1;
	hit = bsearch(&kp, l->sorted, l->n, sizeof(*l->sorted), sorted_cmp);
	return hit ? (int)(*hit - l->items) : -1;
}

static int best_rank(const struct eb_tag_list *l, const struct eb_tag *tags, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++) {
		int r = eb_tag_list_rank(l, tags[i].interpreter, tags[i].abi, tags[i].platform);

		if (r >= 0 && (best < 0 || r < best))
			best = r;
	}
	return best;
}

int eb_tag_list_rank_str(const struct eb_tag_list *l, const char *tag)
{
	const char *d1 = strchr(tag, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	struct span parts[3];
	struct eb_tag *tags = NULL;
	size_t n = 0;
	int r;

	if (!d2 || strchr(d2 + 1, '-'))
		return -1;
	parts[0].p = tag;
	parts[0].n = (size_t)(d1 - tag);
	parts[1].p = d1 + 1;
	parts[1].n = (size_t)(d2 - d1 - 1);
	parts[2].p = d2 + 1;
	parts[2].n = strlen(d2 + 1);
	if (expand_tagset(parts, &tags, &n))
		return -1;
	r = best_rank(l, tags, n);
	tags_free(tags, n);
	return r;
}

int eb_tag_list_wheel_rank(const struct eb_tag_list *l, const struct eb_wheel_filename *w)
{
	return best_rank(l, w->tags, w->ntags);
}

const char *eb_tag_list_abi(const struct eb_tag_list *l)
{
	return l->n ? l->items[0].abi : "";
}

const char *eb_tag_list_best_platform(const struct eb_tag_list *l)
{
	return l->n ? l->items[0].platform : "";
}

/* ---- choosing a file ------------------------------------------------------------ */

/* The filter a file failed, in the order they apply; ST_OK passed them all.
 * On failure the furthest stage reached tells the user what to fix. */
enum stage {
	ST_OTHER = 0,   /* not a wheel, unparseable, another project or version */
	ST_TAGS,        /* a wheel of the version, tags unsupported */
	ST_PYTHON,      /* requires-python excludes the target */
	ST_HASH,        /* the index's hash contradicts the allowed ones */
	ST_YANKED,      /* yanked, and not an exact pin */
	ST_OK,
};

struct fstate {
	enum stage stage;
	int rank;
	int hash_matched;
	struct eb_wheel_filename w; /* parsed when the file is a valid wheel */
};

struct hash_ref {
	const char *algo, *hex;
};

struct hashes {
	struct hash_ref *v;
	size_t n, cap;
	int on; /* hash-checking mode: the requirement carries hashes */
};

static void allowed_hashes(struct hashes *h, const struct eb_requirement *req)
{
	for (size_t i = 0; i < req->nhashes; i++) {
		const struct eb_req_hash *rh = &req->hashes[i];

		/* A --hash of any kind switches the mode on (pip); an
		 * unusable one just never matches. */
		h->on = 1;
		if (eb_requirement_hash_problem(rh) == NULL) {
			EB_ALLOC_GROW(h->v, h->n + 1, h->cap);
			h->v[h->n].algo = rh->algo;
			h->v[h->n++].hex = rh->hex;
		}
	}
	if (req->url_hash_algo && req->url_hash_hex) {
		h->on = 1;
		EB_ALLOC_GROW(h->v, h->n + 1, h->cap);
		h->v[h->n].algo = req->url_hash_algo;
		h->v[h->n++].hex = req->url_hash_hex;
	}
}

/* 1: the index lists an allowed hash for f; 0: it lists none in an allowed
 * algorithm, so only the download can tell; -1: it lists a different one. */
static int hash_state(const struct hashes *h, const struct eb_dist_file *f)
{
	int comparable = 0;

	for (size_t i = 0; i < h->n; i++)
		for (size_t j = 0; j < f->nhashes; j++) {
			const struct eb_file_hash *fh = &f->hashes[j];

			if (!fh->algo || !fh->hex || strcasecmp(h->v[i].algo, fh->algo) != 0)
				continue;
			comparable = 1;
			if (strcasecmp(h->v[i].hex, fh->hex) == 0)
				return 1;
		}
	return comparable ? -1 : 0;
}

/* Does requires-python admit the target?  An unparseable value admits it:
 * pip ignores invalid Requires-Python metadata with a warning. */
static int python_ok(const char *requires_python, const struct eb_version *py,
		     const char *py_raw)
{
	struct eb_specifier_set set = EB_SPECIFIER_SET_INIT;
	struct eb_error *perr = NULL;
	int ok;

	if (!requires_python || !*requires_python)
		return 1;
	if (eb_specifier_set_parse(&set, requires_python, strlen(requires_python), &perr) < 0) {
		eb_error_free(perr);
		return 1;
	}
	ok = eb_specifier_set_contains(&set, py, py_raw);
	eb_specifier_set_release(&set);
	return ok;
}

/* pip's _sort_key order: is a better than b? */
static int better(const struct fstate *a, const struct eb_dist_file *fa, const struct fstate *b,
		  const struct eb_dist_file *fb)
{
	int c;

	if (a->hash_matched != b->hash_matched)
		return a->hash_matched > b->hash_matched;
	if (!fa->yanked != !fb->yanked)
		return !fa->yanked;
	if (a->rank != b->rank)
		return a->rank < b->rank;
	c = eb_wheel_build_cmp(a->w.build, b->w.build);
	return c > 0;
}

static void add_file_entry(struct eb_buf *b, const struct eb_dist_file *f,
			   const struct fstate *st)
{
	add_quoted(b, f->filename ? f->filename : "(unnamed)");
	switch (st->stage) {
	case ST_PYTHON:
		eb_buf_puts(b, " (requires-python ");
		add_quoted(b, f->requires_python);
		eb_buf_putc(b, ')');
		break;
	case ST_HASH:
		eb_buf_puts(b, " (other hash)");
		break;
	case ST_YANKED:
		eb_buf_puts(b, " (yanked");
		if (f->yanked_reason && *f->yanked_reason) {
			eb_buf_puts(b, ": ");
			add_quoted(b, f->yanked_reason);
		}
		eb_buf_putc(b, ')');
		break;
	default:
		break;
	}
}

/* "a, b (requires-python >=3.12), ... and 3 more": closest misses first
 * (they say what to change), then the rest in index order. */
static void add_file_list(struct eb_buf *b, const struct eb_dist_file *files, size_t nfiles,
			  const struct fstate *st)
{
	size_t shown = 0;

	for (int s = ST_YANKED; s >= (int)ST_TAGS; s--)
		for (size_t i = 0; i < nfiles; i++) {
			int in_pass = s > ST_TAGS ? (int)st[i].stage == s : st[i].stage <= ST_TAGS;

			if (!in_pass)
				continue;
			if (shown == LIST_MAX) {
				eb_buf_putf(b, ", ... and %zu more", nfiles - shown);
				return;
			}
			if (shown++)
				eb_buf_puts(b, ", ");
			add_file_entry(b, &files[i], &st[i]);
		}
}

static int no_wheel(struct eb_wheel_choice *out, const struct eb_dist_file *files,
		    size_t nfiles, const struct fstate *st, const struct eb_requirement *req,
		    const char *version, const struct eb_tag_list *tags, struct eb_error **err)
{
	struct eb_buf b;
	eb_autofree char *what = NULL, *msg = NULL;
	enum stage furthest = ST_OTHER;
	const char *name = req->name ? req->name : req->norm_name ? req->norm_name : "(unnamed)";
	size_t best = nfiles;
	int fresh = err && !*err; /* hint only an error this call sets */
	int r;

	for (size_t i = 0; i < nfiles; i++)
		if (st[i].stage > furthest)
			furthest = st[i].stage;
	what = version ? eb_xasprintf("%s==%s", name, version) : eb_xstrdup(name);

	eb_buf_init(&b, 0);
	if (!nfiles) {
		out->miss = EB_WHEEL_NO_FILES;
		eb_buf_putf(&b,
				  "envbuild installs wheels only; no wheel of %s for %s %s; the index "
				  "lists no files for this version",
				  what, eb_tag_list_abi(tags), eb_tag_list_best_platform(tags));
	} else {
		switch (furthest) {
		case ST_PYTHON:
			out->miss = EB_WHEEL_REQUIRES_PYTHON;
			eb_buf_putf(&b, "no wheel of %s for %s %s allows python %s", what,
					  eb_tag_list_abi(tags), eb_tag_list_best_platform(tags),
					  tags->target.python_full);
			break;
		case ST_HASH:
			out->miss = EB_WHEEL_HASH;
			eb_buf_putf(&b, "no wheel of %s for %s %s has one of the requirement's "
					  "hashes", what, eb_tag_list_abi(tags),
					  eb_tag_list_best_platform(tags));
			break;
		case ST_YANKED:
			out->miss = EB_WHEEL_YANKED;
			eb_buf_putf(&b, "every wheel of %s for %s %s is yanked, and only an "
					  "exact pin may install a yanked file", what,
					  eb_tag_list_abi(tags), eb_tag_list_best_platform(tags));
			break;
		default:
			out->miss = EB_WHEEL_NO_COMPATIBLE;
			eb_buf_putf(&b, "envbuild installs wheels only; no wheel of %s for %s %s",
					  what, eb_tag_list_abi(tags),
					  eb_tag_list_best_platform(tags));
			break;
		}
		eb_buf_puts(&b, "; the index has: ");
		add_file_list(&b, files, nfiles, st);
	}
	msg = eb_buf_detach(&b, NULL);
	r = eb_error_set(err, EB_ENOTFOUND, "%s", msg);
	if (!fresh)
		return r;

	if (out->miss == EB_WHEEL_NO_COMPATIBLE || out->miss == EB_WHEEL_NO_FILES) {
		eb_error_hint(err, "pin a version that has a wheel for this target, or an sdist "
				   "(envbuild builds it from source: README, \"Source distributions\")");
	} else if (out->miss == EB_WHEEL_HASH) {
		/* Name the hash of the wheel that would have been chosen, as
		 * pip's HashMismatch shows what it got. */
		for (size_t i = 0; i < nfiles; i++)
			if (st[i].stage == ST_HASH &&
			    (best == nfiles || st[i].rank < st[best].rank))
				best = i;
		for (size_t j = 0; best < nfiles && j < files[best].nhashes; j++) {
			const struct eb_file_hash *fh = &files[best].hashes[j];
			eb_autofree char *qf = NULL, *qh = NULL;

			if (!fh->algo || !fh->hex || strcasecmp(fh->algo, "sha256") != 0)
				continue;
			qf = quoted(files[best].filename);
			qh = quoted(fh->hex);
			eb_error_hint(err, "the index lists sha256:%s for %s", qh, qf);
			break;
		}
	}
	return r;
}

int eb_tags_select(struct eb_wheel_choice *out, const struct eb_dist_file *files, size_t nfiles,
		   const struct eb_requirement *req, const char *version,
		   const struct eb_tag_list *tags, struct eb_error **err)
{
	struct hashes allowed = { NULL, 0, 0, 0 };
	struct eb_version want, py;
	struct eb_error *verr = NULL;
	struct fstate *st;
	char pybuf[32];
	const char *py_raw = tags->target.python_full;
	int exact_pin = eb_requirement_pinned_version(req) != NULL;
	int have_want = 0, r = 0;
	size_t best = nfiles;

	memset(out, 0, sizeof(*out));
	out->rank = -1;
	if (!version)
		version = eb_requirement_pinned_version(req);
	if (version) {
		if (eb_version_parse(&want, version, strlen(version), &verr) < 0) {
			eb_autofree char *q = quoted(version);

			eb_error_free(verr);
			return eb_error_set(err, EB_EINVALID, "invalid version '%s'", q);
		}
		have_want = 1;
	}
	if (!*py_raw) {
		snprintf(pybuf, sizeof(pybuf), "%u.%u", tags->target.py_major,
			 tags->target.py_minor);
		py_raw = pybuf;
	}
	if (eb_version_parse(&py, py_raw, strlen(py_raw), &verr) < 0) {
		eb_error_free(verr);
		if (have_want)
			eb_version_release(&want);
		return eb_error_set(err, EB_EINVALID, "invalid target python version '%s'",
				    py_raw);
	}
	allowed_hashes(&allowed, req);

	st = eb_xcalloc(nfiles ? nfiles : 1, sizeof(*st));
	for (size_t i = 0; i < nfiles; i++) {
		const struct eb_dist_file *f = &files[i];
		struct fstate *s = &st[i];
		struct eb_error *perr = NULL;
		int hs = 0;

		s->rank = -1;
		s->stage = ST_OTHER;
		if (!f->filename || !eb_tags_is_wheel_filename(f->filename))
			continue;
		/* An index may list a malformed name; pip skips it too. */
		if (eb_wheel_filename_parse(&s->w, f->filename, &perr) < 0) {
			eb_error_free(perr);
			continue;
		}
		if (req->norm_name && strcmp(s->w.norm_name, req->norm_name) != 0)
			continue;
		if (have_want && eb_version_cmp(&s->w.version, &want) != 0)
			continue;
		s->stage = ST_TAGS;
		s->rank = eb_tag_list_wheel_rank(tags, &s->w);
		if (s->rank < 0)
			continue;
		s->stage = ST_PYTHON;
		if (!python_ok(f->requires_python, &py, py_raw))
			continue;
		s->stage = ST_HASH;
		if (allowed.on) {
			hs = hash_state(&allowed, f);
			if (hs < 0)
				continue;
		}
		s->hash_matched = hs > 0;
		s->stage = ST_YANKED;
		if (f->yanked && !exact_pin)
			continue;
		s->stage = ST_OK;
		if (best == nfiles || better(s, f, &st[best], &files[best]))
			best = i;
	}

	if (best < nfiles) {
		out->index = best;
		out->rank = st[best].rank;
		out->yanked = files[best].yanked != 0;
		out->yanked_reason = files[best].yanked ? files[best].yanked_reason : NULL;
		out->hash_matched = st[best].hash_matched;
		out->miss = EB_WHEEL_OK;
	} else {
		r = no_wheel(out, files, nfiles, st, req, version, tags, err);
	}

	for (size_t i = 0; i < nfiles; i++)
		eb_wheel_filename_release(&st[i].w);
	free(st);
	free(allowed.v);
	eb_version_release(&py);
	if (have_want)
		eb_version_release(&want);
	return r;
}
