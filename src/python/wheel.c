/*
 * wheel.c - install one wheel into a layer builder (see wheel.h).
 *
 * Three phases, so that a rejected wheel never touches the builder:
 *   1. extract: one streaming pass over the zip; each file is checked
 *      (path, type, duplicates, limits), copied into the staging directory
 *      and hashed; the .dist-info files we parse are also kept in memory
 *      (each under its own cap);
 *   2. verify and plan: dist-info, WHEEL, METADATA, RECORD (every hash and
 *      size), entry points; compute every destination, the rewritten
 *      scripts, the launchers and the new RECORD;
 *   3. add: only now is anything added to the builder.
 * Phase 1 is wheel_extract.c.
 *
 * Staged files get sequential names ("17"), never the archive's names, so
 * nothing a wheel contains can steer a write on the host.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <locale.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/inflate.h"
#include "python/wheel.h"
#include "python/wheel_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/encode.h"
#include "util/fs.h"

#define RECORD_MAX (64u << 20)
#define MAX_HASH_LEN 64 /* sha512, sha3_512, blake2b */
#define SHEBANG_MAX 127 /* Linux; distlib's limit for "#!" + path + "\n" */
#define COPY_CHUNK 65536

/* ---- small helpers ------------------------------------------------------- */

/* A copy of s safe to put in a one-line message: control bytes become '?'
 * (paths and names come from the wheel, which may be hostile). */
char *eb_wheel__printable(const char *s)
{
	char *o = eb_xstrdup(s);

	for (char *p = o; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return o;
}

int eb_wheel__has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

int eb_wheel__write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- hashing ---------------------------------------------------------------- */

/* RECORD hash algorithms: sha256 or stronger (PyPUG recording-installed-
 * packages: "not md5 or sha1"); util/digest.h's table says which. */
static const EVP_MD *record_md(const char *name, size_t n)
{
	const struct eb_hash_algo *a = eb_hash_algo_find_n(name, n);
	return a && a->record ? eb_hash_algo_md(a) : NULL;
}

EVP_MD_CTX *eb_wheel__md_new(const EVP_MD *md)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (!c || EVP_DigestInit_ex(c, md, NULL) != 1)
		abort(); /* only fails on OOM or a broken libcrypto */
	return c;
}

void eb_wheel__md_final(EVP_MD_CTX *c, unsigned char *out, unsigned *outlen)
{
	EVP_DigestFinal_ex(c, out, outlen);
	EVP_MD_CTX_free(c);
}

static int hash_file(const char *path, const EVP_MD *md, unsigned char *out, unsigned *outlen,
		     struct eb_error **err)
{
	eb_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	EVP_MD_CTX *c;
	unsigned char buf[COPY_CHUNK];

	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", path);
	c = eb_wheel__md_new(md);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			EVP_MD_CTX_free(c);
			return eb_error_set_errno(err, EB_EIO, e, "cannot read '%s'", path);
		}
		if (r == 0)
			break;
		EVP_DigestUpdate(c, buf, (size_t)r);
	}
	eb_wheel__md_final(c, out, outlen);
	return 0;
}

static int md_chunk(void *ud, const void *data, size_t len, struct eb_error **err)
{
	(void)err;
	EVP_DigestUpdate(ud, data, len);
	return 0;
}

/* The same for a member left in the wheel (entry.zip). */
static int hash_member(const struct inst *in, const struct entry *e, const EVP_MD *md,
		       unsigned char *out, unsigned *outlen, struct eb_error **err)
{
	eb_autoclose int fd = open(in->wheel_path, O_RDONLY | O_CLOEXEC);
	eb_autofree unsigned char *buf = NULL;
	EVP_MD_CTX *c;
	int r;

	if (fd < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", in->wheel_path);
	buf = eb_xmalloc(COPY_CHUNK);
	c = eb_wheel__md_new(md);
	r = eb_inflate_range(fd, in->wheel_path, e->zoff, e->zcsize, e->zmethod, e->size, buf,
			     COPY_CHUNK, md_chunk, c, err);
	if (r < 0) {
		EVP_MD_CTX_free(c);
		return r;
	}
	eb_wheel__md_final(c, out, outlen);
	return 0;
}

/* ---- a string -> index map (open addressing) ----------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

static size_t *strmap_find(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = str_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return NULL;
		if (strcmp(m->keys[i], key) == 0)
			return &m->vals[i];
	}
}

/* Insert key; returns 0, or -1 when it is already there. */
int eb_wheel__strmap_put(struct strmap *m, const char *key, size_t val)
{
	if (strmap_find(m, key))
		return -1;
	if ((m->n + 1) * 2 > m->cap) {
		struct strmap g = { NULL, NULL, m->cap ? m->cap * 2 : 64, 0 };
		g.keys = eb_xcalloc(g.cap, sizeof(*g.keys));
		g.vals = eb_xcalloc(g.cap, sizeof(*g.vals));
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				(void)eb_wheel__strmap_put(&g, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	for (size_t i = str_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->vals[i] = val;
			m->n++;
			return 0;
		}
	}
}

static void strmap_release(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- state ------------------------------------------------------------------ */

const char *const eb_wheel__cap_names[CAP_N] = { "METADATA", "WHEEL", "RECORD", "entry_points.txt" };
const size_t eb_wheel__cap_max[CAP_N] = { EB_METADATA_MAX_CORE, EB_METADATA_MAX_WHEEL, RECORD_MAX,
				EB_METADATA_MAX_ENTRY_POINTS };

static void inst_release(struct inst *in, int remove_staging)
{
	for (size_t i = 0; i < in->n; i++) {
		free(in->e[i].path);
		free(in->e[i].stage);
	}
	free(in->e);
	eb_wheel__cd_free(in);
	strmap_release(&in->paths);
	free(in->distinfo);
	for (int i = 0; i < CAP_N; i++)
		eb_buf_release(&in->caps[i]);
	free(in->sc.purelib);
	free(in->sc.platlib);
	free(in->sc.scripts);
	free(in->sc.data);
	free(in->sc.headers);
	for (size_t i = 0; i < in->nitems; i++) {
		free(in->items[i].dest);
		free(in->items[i].rel);
		free(in->items[i].data);
		free(in->items[i].file);
	}
	free(in->items);
	strmap_release(&in->dests);
	eb_entry_points_release(&in->eps);
	free(in->fn_name);
	free(in->fn_version);
	if (remove_staging && in->dir) {
		/* Only files we created live here, and no subdirectories. */
		DIR *d = opendir(in->dir);
		struct dirent *de;
		if (d) {
			while ((de = readdir(d)) != NULL) {
				if (de->d_name[0] == '.')
					continue;
				eb_autofree char *p = eb_path_join(in->dir, de->d_name);
				(void)unlink(p);
			}
			closedir(d);
		}
		(void)rmdir(in->dir);
	}
	free(in->dir);
}

/* ---- phase 2: verify ------------------------------------------------------ */

/* Split "name-version(-build)?-py-abi-plat.whl". */
static int parse_filename(struct inst *in, const char *fn, struct eb_error **err)
{
	const char *parts[7];
	size_t plen[7];
	size_t np = 0, n;
	const char *p = fn;
	eb_autofree char *pfn = eb_wheel__printable(fn);

	if (!eb_wheel__has_suffix(fn, ".whl"))
		return eb_error_set(err, EB_EINVALID, "'%s' is not a wheel file name", pfn);
	n = strlen(fn) - 4;
	while (np < 7) {
		const char *d = memchr(p, '-', (size_t)(fn + n - p));
		parts[np] = p;
		plen[np] = d ? (size_t)(d - p) : (size_t)(fn + n - p);
		if (plen[np] == 0)
			break;
		np++;
		if (!d)
			break;
		p = d + 1;
	}
	if (np < 5 || np > 6 || (size_t)(parts[np - 1] + plen[np - 1] - fn) != n ||
	    !eb_pep503_valid(parts[0], plen[0]))
		return eb_error_set(err, EB_EINVALID, "'%s' is not a wheel file name", pfn);
	in->fn_name = eb_pep503_normalize(parts[0], plen[0]);
	in->fn_version = eb_xstrndup(parts[1], plen[1]);
	return 0;
}

/* PEP 440 equality when both parse, else exact text. */
static int same_version(const char *a, const char *b)
{
	struct eb_version va, vb;
	struct eb_error *e = NULL;
	int same;

	if (eb_version_parse(&va, a, strlen(a), &e) < 0) {
		eb_error_free(e);
		return strcmp(a, b) == 0;
	}
	if (eb_version_parse(&vb, b, strlen(b), &e) < 0) {
		eb_error_free(e);
		eb_version_release(&va);
		return strcmp(a, b) == 0;
	}
	same = eb_version_cmp(&va, &vb) == 0;
	eb_version_release(&va);
	eb_version_release(&vb);
	return same;
}

static int check_distinfo(struct inst *in, struct eb_error **err)
{
	eb_autofree char *stem = NULL;
	eb_autofree char *norm = NULL;
	eb_autofree char *pdi = NULL;
	const char *dash;

	if (!in->distinfo)
		return eb_error_set(err, EB_EINVALID, "no .dist-info directory");
	pdi = eb_wheel__printable(in->distinfo);
	stem = eb_xstrndup(in->distinfo, strlen(in->distinfo) - 10);
	dash = strchr(stem, '-');
	if (!dash || !dash[1])
		return eb_error_set(err, EB_EINVALID, "'%s' is not named <name>-<version>", pdi);
	norm = eb_pep503_normalize(stem, (size_t)(dash - stem));
	if (strcmp(norm, in->fn_name) != 0 || !same_version(dash + 1, in->fn_version))
		return eb_error_set(err, EB_EINVALID,
				    "'%s' does not match the file name (%s %s)", pdi, in->fn_name,
				    in->fn_version);
	for (int i = CAP_METADATA; i <= CAP_RECORD; i++)
		if (!in->captured[i])
			return eb_error_set(err, EB_EINVALID, "'%s' has no %s", pdi, eb_wheel__cap_names[i]);
	return 0;
}

/* 1 when path is <dist-info>/<leaf>. */
static int is_di_file(const struct inst *in, const char *path, const char *leaf)
{
	size_t t = strlen(in->distinfo);

	return strncmp(path, in->distinfo, t) == 0 && path[t] == '/' &&
	       strcmp(path + t + 1, leaf) == 0;
}

static int is_signature(const struct inst *in, const char *path)
{
	return is_di_file(in, path, "RECORD.jws") || is_di_file(in, path, "RECORD.p7s");
}

/* Read one CSV field (Python csv, default dialect) at *p; fields end at
 * ',' or at the end of the line. */
static int csv_field(const char **p, const char *end, struct eb_buf *out)
{
	const char *s = *p;

	eb_buf_truncate(out, 0);
	if (s < end && *s == '"') {
		s++;
		for (;;) {
			if (s >= end)
				return -1;
			if (*s == '"') {
				if (s + 1 < end && s[1] == '"') {
					(void)eb_buf_addc(out, '"');
					s += 2;
					continue;
				}
				s++;
				break;
			}
			(void)eb_buf_addc(out, *s++);
		}
		if (s < end && *s != ',' && *s != '\n' && *s != '\r')
			return -1;
	} else {
		while (s < end && *s != ',' && *s != '\n' && *s != '\r')
			(void)eb_buf_addc(out, *s++);
	}
	*p = s;
	return 0;
}

static int check_record_row(struct inst *in, const char *path, const char *hash,
			    const char *size, unsigned line, struct eb_error **err)
{
	eb_autofree char *pp = eb_wheel__printable(path);
	size_t *idx = strmap_find(&in->paths, path);
	struct entry *e;
	const char *eq;
	const EVP_MD *md;
	char *raw;
	unsigned char want[MAX_HASH_LEN], got[EVP_MAX_MD_SIZE];
	size_t wlen;
	unsigned glen = 0;
	uint64_t sz = 0;
	int r;

	if (is_di_file(in, path, "RECORD"))
		return 0; /* RECORD cannot hash itself */
	if (is_signature(in, path) && !*hash)
		return 0;
	if (!idx)
		return eb_error_set(err, EB_EINVALID, "RECORD lists '%s', which is not in the wheel",
				    pp);
	e = &in->e[*idx];
	if (e->recorded)
		return eb_error_set(err, EB_EINVALID, "RECORD line %u: '%s' listed twice", line, pp);
	e->recorded = 1;
	eq = strchr(hash, '=');
	if (!*hash)
		return eb_error_set(err, EB_EINVALID, "RECORD has no hash for '%s'", pp);
	if (!eq || !(md = record_md(hash, (size_t)(eq - hash))))
		return eb_error_set(err, EB_EINVALID,
				    "RECORD hash for '%s' does not use sha256 or stronger", pp);
	raw = eb_base64url_decode(eq + 1, &wlen);
	if (!raw || wlen > sizeof(want) || wlen != (size_t)EVP_MD_size(md)) {
		free(raw);
		return eb_error_set(err, EB_EINVALID, "RECORD hash for '%s' is malformed", pp);
	}
	memcpy(want, raw, wlen);
	free(raw);
	if (!*size || strlen(size) > 19 || strspn(size, "0123456789") != strlen(size))
		return eb_error_set(err, EB_EINVALID, "RECORD size for '%s' is malformed", pp);
	for (const char *c = size; *c; c++)
		sz = sz * 10 + (uint64_t)(*c - '0');
	if (sz != e->size)
		return eb_error_set(err, EB_EINVALID,
				    "'%s' is %llu bytes but RECORD says %llu", pp,
				    (unsigned long long)e->size, (unsigned long long)sz);
	if (md == EVP_sha256()) {
		memcpy(got, e->sha256, 32);
		glen = 32;
	} else if ((r = e->zip ? hash_member(in, e, md, got, &glen, err)
			       : hash_file(e->stage, md, got, &glen, err)) < 0) {
		return r;
	}
	if (glen != wlen || memcmp(got, want, wlen) != 0)
		return eb_error_set(err, EB_EINVALID, "'%s' does not match its RECORD hash", pp);
	return 0;
}

static int check_record(struct inst *in, struct eb_error **err)
{
	const struct eb_buf *rec = &in->caps[CAP_RECORD];
	const char *p = rec->ptr, *end = rec->ptr + rec->len;
	struct eb_buf f[3];
	unsigned line = 0;
	int r = 0;

	if (memchr(rec->ptr, '\0', rec->len))
		return eb_error_set(err, EB_EINVALID, "RECORD contains a NUL byte");
	for (int i = 0; i < 3; i++)
		eb_buf_init(&f[i], 0);
	while (p < end && r == 0) {
		int nf = 0;

		line++;
		if (*p == '\n' || *p == '\r') {
			p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1;
			continue;
		}
		for (;;) {
			if (nf >= 3) {
				r = eb_error_set(err, EB_EINVALID,
						 "RECORD line %u: more than 3 fields", line);
				break;
			}
			if (csv_field(&p, end, &f[nf]) < 0) {
				r = eb_error_set(err, EB_EINVALID, "RECORD line %u: bad quoting",
						 line);
				break;
			}
			nf++;
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			break;
		}
		if (r < 0)
			break;
		if (p < end)
			p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1;
		if (nf != 3) {
			r = eb_error_set(err, EB_EINVALID, "RECORD line %u: expected 3 fields", line);
			break;
		}
		r = check_record_row(in, f[0].ptr, f[1].ptr, f[2].ptr, line, err);
	}
	for (int i = 0; i < 3; i++)
		eb_buf_release(&f[i]);
	if (r < 0)
		return r;
	for (size_t i = 0; i < in->n; i++) {
		const struct entry *e = &in->e[i];
		if (e->recorded || is_signature(in, e->path) || is_di_file(in, e->path, "RECORD"))
			continue;
		eb_autofree char *pp = eb_wheel__printable(e->path);
		return eb_error_set(err, EB_EINVALID, "'%s' is not listed in RECORD", pp);
	}
	return 0;
}

/* ---- phase 2: plan -------------------------------------------------------- */

/* dest relative to base; both absolute and normalised (os.path.relpath). */
static char *relpath(const char *dest, const char *base)
{
	struct eb_buf b;
	size_t i = 0, common = 0;

	/* Longest common prefix ending at a component boundary. */
	if (strcmp(base, "/") == 0) {
		common = 1;
	} else {
		while (base[i] && dest[i] && base[i] == dest[i])
			i++;
		if (!base[i] && (dest[i] == '/' || !dest[i])) {
			common = i;
		} else {
			while (i > 0 && base[i - 1] != '/')
				i--;
			common = i;
		}
	}
	eb_buf_init(&b, 0);
	for (const char *s = base + common; *s;) {
		if (*s == '/') {
			s++;
			continue;
		}
		(void)eb_buf_adds(&b, "../");
		while (*s && *s != '/')
			s++;
	}
	{
		const char *rest = dest + common;
		while (*rest == '/')
			rest++;
		(void)eb_buf_adds(&b, rest);
	}
	return eb_buf_detach(&b, NULL);
}

static char *join_abs(const char *dir, const char *rel)
{
	return strcmp(dir, "/") == 0 ? eb_xasprintf("/%s", rel) : eb_xasprintf("%s/%s", dir, rel);
}

static int add_item(struct inst *in, char *dest, const char *src, char *data, size_t len,
		    unsigned mode, const unsigned char *sha256, uint64_t size,
		    struct eb_error **err)
{
	struct item *it;

	EB_ALLOC_GROW(in->items, in->nitems + 1, in->icap);
	it = &in->items[in->nitems];
	memset(it, 0, sizeof(*it));
	it->dest = dest;
	it->src = src;
	it->data = data;
	it->len = len;
	it->mode = mode;
	it->size = size;
	if (sha256) {
		memcpy(it->sha256, sha256, 32);
	} else {
		EVP_MD_CTX *c = eb_wheel__md_new(EVP_sha256());
		unsigned hl;
		EVP_DigestUpdate(c, data, len);
		eb_wheel__md_final(c, it->sha256, &hl);
		it->size = len;
	}
	if (eb_wheel__strmap_put(&in->dests, it->dest, in->nitems) < 0) {
		eb_autofree char *pd = eb_wheel__printable(dest);
		free(dest);
		free(data);
		return eb_error_set(err, EB_EINVALID, "two files would be installed at '%s'", pd);
	}
	it->rel = relpath(it->dest, in->root);
	in->nitems++;
	return 0;
}

/* A member's item: its staged copy, or its place in the wheel. */
static int add_member_item(struct inst *in, const struct entry *e, char *dest,
			   struct eb_error **err)
{
	int r = add_item(in, dest, e->stage, NULL, 0, e->mode, e->sha256, e->size, err);

	if (r == 0 && e->zip)
		in->items[in->nitems - 1].zip = e;
	return r;
}

static char *shebang(const char *interpreter)
{
	size_t n = strlen(interpreter);

	/* distlib _build_shebang, as pip uses it: "#!" + path + "\n" must fit
	 * the kernel's 127 bytes and the path must have no space; otherwise
	 * a line both sh and Python read: sh re-executes the interpreter on
	 * the script, Python sees a string literal. */
	if (!strchr(interpreter, ' ') && n + 3 <= SHEBANG_MAX)
		return eb_xasprintf("#!%s\n", interpreter);
	if (strchr(interpreter, ' '))
		return eb_xasprintf("#!/bin/sh\n'''exec' \"%s\" \"$0\" \"$@\"\n' '''\n",
				    interpreter);
	return eb_xasprintf("#!/bin/sh\n'''exec' %s \"$0\" \"$@\"\n' '''\n", interpreter);
}

/* Copy a .data/scripts file whose first line starts with "#!python" into a
 * new staged file with that line replaced; *changed = 0 when it does not
 * start so (nothing written). */
static int fix_script(struct inst *in, const struct entry *e, char **out_path,
		      unsigned char sha[32], uint64_t *out_size, int *changed,
		      struct eb_error **err)
{
	eb_autoclose int src = -1;
	eb_autoclose int dst = -1;
	eb_autofree char *sb = NULL;
	char buf[COPY_CHUNK];
	EVP_MD_CTX *c = NULL;
	ssize_t got;
	int in_first = 1;
	unsigned hl;
	int r = 0;

	*changed = 0;
	src = open(e->stage, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (src < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot open '%s'", e->stage);
	do
		got = read(src, buf, 8);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", e->stage);
	if (got < 8 || memcmp(buf, "#!python", 8) != 0)
		return 0;
	*changed = 1;
	*out_path = eb_xasprintf("%s/%u.script", in->dir, ++in->seq);
	dst = open(*out_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dst < 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", *out_path);
	sb = shebang(in->sc.interpreter);
	c = eb_wheel__md_new(EVP_sha256());
	*out_size = strlen(sb);
	EVP_DigestUpdate(c, sb, strlen(sb));
	if (eb_wheel__write_all(dst, sb, strlen(sb)) < 0)
		goto werr;
	for (;;) {
		const char *p = buf;
		size_t n;
		do
			got = read(src, buf, sizeof(buf));
		while (got < 0 && errno == EINTR);
		if (got < 0) {
			r = eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", e->stage);
			goto out;
		}
		if (got == 0)
			break;
		n = (size_t)got;
		if (in_first) {
			const char *nl = memchr(buf, '\n', n);
			if (!nl)
				continue;
			in_first = 0;
			n -= (size_t)(nl + 1 - buf);
			p = nl + 1;
		}
		EVP_DigestUpdate(c, p, n);
		*out_size += n;
		if (eb_wheel__write_all(dst, p, n) < 0)
			goto werr;
	}
	if (fchmod(dst, 0755) < 0)
		goto werr;
	if (close(dst) < 0) {
		dst = -1;
		goto werr;
	}
	dst = -1;
	goto out;
werr:
	r = eb_error_set_errno(err, EB_EIO, errno, "cannot write '%s'", *out_path);
out:
	eb_wheel__md_final(c, sha, &hl);
	return r;
}

/* pip is_entrypoint_wrapper: NAME, NAME.exe, NAME-script.py, NAME.pya are
 * what setuptools generated for entry point NAME. */
static int is_entrypoint_wrapper(const struct inst *in, const char *base)
{
	size_t n = strlen(base), m = n;
	eb_autofree char *match = NULL;
	const char *suf[] = { ".exe", "-script.py", ".pya" };

	for (size_t i = 0; i < 3; i++) {
		size_t k = strlen(suf[i]);
		if (n >= k && strcasecmp(base + n - k, suf[i]) == 0) {
			m = n - k;
			break;
		}
	}
	match = eb_xstrndup(base, m);
	for (size_t i = 0; i < in->eps.nconsole; i++)
		if (strcmp(in->eps.console[i].name, match) == 0)
			return 1;
	for (size_t i = 0; i < in->eps.ngui; i++)
		if (strcmp(in->eps.gui[i].name, match) == 0)
			return 1;
	return 0;
}

static int is_skipped_bytecode(const char *path)
{
	if (eb_wheel__has_suffix(path, ".pyc"))
		return 1;
	for (const char *c = path;;) {
		const char *s = strchr(c, '/');
		size_t n = s ? (size_t)(s - c) : strlen(c);
		if (n == 11 && memcmp(c, "__pycache__", 11) == 0)
			return 1;
		if (!s)
			return 0;
		c = s + 1;
	}
}

static int plan_file(struct inst *in, struct entry *e, const char *datadir,
		     struct eb_error **err)
{
	size_t t = eb_wheel__top_len(e->path);
	size_t dl = strlen(in->distinfo);
	eb_autofree char *pp = eb_wheel__printable(e->path);

	if (is_skipped_bytecode(e->path))
		return 0;
	if (t == dl && memcmp(e->path, in->distinfo, dl) == 0) {
		const char *leaf = e->path + dl + 1;
		/* Ours replace these; signatures sign the RECORD we replace. */
		if (!strcmp(leaf, "RECORD") || !strcmp(leaf, "RECORD.jws") ||
		    !strcmp(leaf, "RECORD.p7s") || !strcmp(leaf, "INSTALLER") ||
		    !strcmp(leaf, "REQUESTED") || !strcmp(leaf, "direct_url.json"))
			return 0;
	}
	if (t > 5 && memcmp(e->path + t - 5, ".data", 5) == 0) {
		const char *key = e->path + t + 1;
		const char *slash = strchr(key, '/');
		size_t kl = slash ? (size_t)(slash - key) : 0;
		const char *rest = slash ? slash + 1 : NULL;
		const char *dir = NULL;

		if (t != strlen(datadir) || memcmp(e->path, datadir, t) != 0)
			return eb_error_set(err, EB_EINVALID,
					    "'%s' is in a .data directory not named after the wheel",
					    pp);
		if (!rest)
			return eb_error_set(err, EB_EINVALID,
					    "'%s' is not under a .data/<key>/ directory", pp);
		if (kl == 7 && !memcmp(key, "purelib", 7))
			dir = in->sc.purelib;
		else if (kl == 7 && !memcmp(key, "platlib", 7))
			dir = in->sc.platlib;
		else if (kl == 7 && !memcmp(key, "headers", 7))
			dir = in->sc.headers;
		else if (kl == 4 && !memcmp(key, "data", 4))
			dir = in->sc.data;
		else if (kl == 7 && !memcmp(key, "scripts", 7))
			dir = in->sc.scripts;
		if (!dir) {
			eb_autofree char *k = eb_xstrndup(key, kl);
			eb_autofree char *pk = eb_wheel__printable(k);
			return eb_error_set(err, EB_EINVALID, "unknown .data key '%s' in '%s'", pk,
					    pp);
		}
		if (dir == in->sc.scripts) {
			char *fixed = NULL;
			unsigned char sha[32];
			uint64_t size = 0;
			int changed, r;

			if (is_entrypoint_wrapper(in, eb_path_basename(rest)))
				return 0;
			r = fix_script(in, e, &fixed, sha, &size, &changed, err);
			if (r < 0) {
				free(fixed);
				return r;
			}
			if (!changed) {
				/* Same bytes, but every script is executable. */
				if (chmod(e->stage, 0755) < 0)
					return eb_error_set_errno(err, EB_EIO, errno,
								  "cannot chmod '%s'", e->stage);
				e->mode = 0755;
				return add_item(in, join_abs(dir, rest), e->stage, NULL, 0, 0755,
						e->sha256, e->size, err);
			}
			/* fixed lives in our staging dir; its name is kept by
			 * the entry so it is freed with the state. */
			free(e->stage);
			e->stage = fixed;
			return add_item(in, join_abs(dir, rest), e->stage, NULL, 0, 0755, sha,
					size, err);
		}
		return add_member_item(in, e, join_abs(dir, rest), err);
	}
	return add_member_item(in, e, join_abs(in->root, e->path), err);
}

static char *launcher(const struct inst *in, const struct eb_entry_point *ep)
{
	eb_autofree char *sb = shebang(in->sc.interpreter);
	const char *dot = strchr(ep->attr, '.');
	int ilen = dot ? (int)(dot - ep->attr) : (int)strlen(ep->attr);

	/* pip's PipScriptMaker / distlib SCRIPT_TEMPLATE, byte for byte. */
	return eb_xasprintf("%s# -*- coding: utf-8 -*-\n"
			    "import re\n"
			    "import sys\n"
			    "from %s import %.*s\n"
			    "if __name__ == '__main__':\n"
			    "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
			    "    sys.exit(%s())\n",
			    sb, ep->module, ilen, ep->attr, ep->attr);
}

/* PEP 610: the URL without credentials or fragment. */
static char *strip_url(const char *url)
{
	const char *sep = strstr(url, "://");
	const char *hash = strchr(url, '#');
	size_t n = hash ? (size_t)(hash - url) : strlen(url);
	struct eb_buf b;

	eb_buf_init(&b, 0);
	if (sep && (size_t)(sep - url) < n) {
		const char *auth = sep + 3, *end = auth, *at = NULL;
		for (; end < url + n && !strchr("/?", *end); end++)
			if (*end == '@')
				at = end;
		(void)eb_buf_add(&b, url, (size_t)(auth - url));
		if (at)
			auth = at + 1;
		(void)eb_buf_add(&b, auth, (size_t)(url + n - auth));
	} else {
		(void)eb_buf_add(&b, url, n);
	}
	return eb_buf_detach(&b, NULL);
}

static int direct_url_json(const char *url, const char *wheel_path, char **out,
			   struct eb_error **err)
{
	char hex[EB_DIGEST_STR_LEN + 1];
	eb_autofree char *clean = strip_url(url);
	eb_autofree char *legacy = NULL;
	json_t *root;
	int r;

	for (const char *c = clean; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return eb_error_set(err, EB_EINVALID, "the direct URL has a control character");
	if ((r = eb_sha256_file(wheel_path, hex, NULL, err)) < 0)
		return r;
	legacy = eb_xasprintf("sha256=%s", eb_digest_hex(hex));
	root = json_pack("{s:{s:s, s:{s:s}}, s:s}", "archive_info", "hash", legacy, "hashes",
			 "sha256", eb_digest_hex(hex), "url", clean);
	if (!root)
		return eb_error_set(err, EB_EINVALID, "the direct URL is not valid UTF-8");
	/* pip: json.dumps(sort_keys=True): ", " and ": " separators, ASCII. */
	*out = json_dumps(root, JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!*out)
		abort(); /* OOM */
	return 0;
}

static void csv_path(struct eb_buf *b, const char *path)
{
	if (!strpbrk(path, ",\"\r\n")) {
		(void)eb_buf_adds(b, path);
		return;
	}
	(void)eb_buf_addc(b, '"');
	for (const char *c = path; *c; c++) {
		if (*c == '"')
			(void)eb_buf_addc(b, '"');
		(void)eb_buf_addc(b, *c);
	}
	(void)eb_buf_addc(b, '"');
}

static int cmp_rel(const void *a, const void *b)
{
	const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
	return strcmp(x->rel, y->rel);
}

static char *record_text(struct inst *in, const char *record_rel)
{
	struct item **sorted = eb_xcalloc(in->nitems + 1, sizeof(*sorted));
	struct item self;
	struct eb_buf b;

	memset(&self, 0, sizeof(self));
	self.rel = (char *)record_rel;
	for (size_t i = 0; i < in->nitems; i++)
		sorted[i] = &in->items[i];
	sorted[in->nitems] = &self;
	eb_sort(sorted, in->nitems + 1, sizeof(*sorted), cmp_rel);
	eb_buf_init(&b, 0);
	for (size_t i = 0; i <= in->nitems; i++) {
		const struct item *it = sorted[i];
		csv_path(&b, it->rel);
		if (it == &self) {
			(void)eb_buf_adds(&b, ",,\n");
			continue;
		}
		(void)eb_buf_adds(&b, ",sha256=");
		eb_autofree char *h = eb_base64url_encode(it->sha256, 32);
		(void)eb_buf_adds(&b, h);
		(void)eb_buf_addf(&b, ",%llu\n", (unsigned long long)it->size);
	}
	free(sorted);
	return eb_buf_detach(&b, NULL);
}

/* ---- scheme ----------------------------------------------------------------- */

static int scheme_dir(char **out, const char *what, const char *p, struct eb_error **err)
{
	if (!p || p[0] != '/')
		return eb_error_set(err, EB_EINVALID, "scheme path '%s' must be absolute", what);
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return eb_error_set(err, EB_EINVALID,
					    "scheme path '%s' has a control character", what);
	*out = eb_path_normalize(p);
	return 0;
}

static int check_scheme(struct inst *in, const struct eb_wheel_scheme *s, struct eb_error **err)
{
	int r;

	if ((r = scheme_dir(&in->sc.purelib, "purelib", s->purelib, err)) < 0 ||
	    (r = scheme_dir(&in->sc.platlib, "platlib", s->platlib, err)) < 0 ||
	    (r = scheme_dir(&in->sc.scripts, "scripts", s->scripts, err)) < 0 ||
	    (r = scheme_dir(&in->sc.data, "data", s->data, err)) < 0 ||
	    (r = scheme_dir(&in->sc.headers, "headers", s->headers, err)) < 0)
		return r;
	if (!s->interpreter || s->interpreter[0] != '/')
		return eb_error_set(err, EB_EINVALID, "the interpreter path must be absolute");
	for (const char *c = s->interpreter; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || strchr("\"\\$`", *c))
			return eb_error_set(err, EB_EINVALID,
					    "the interpreter path '%s' has a character a shebang cannot carry",
					    s->interpreter);
	in->sc.interpreter = s->interpreter;
	return 0;
}

/* ---- the whole thing --------------------------------------------------------- */

static void push_warning(struct eb_wheel_result *out, size_t *cap, char *msg)
{
	EB_ALLOC_GROW(out->warnings, out->nwarnings + 1, *cap);
	out->warnings[out->nwarnings++] = msg;
}

/* The .py files on sys.path (purelib, platlib) compiled by the caller's
 * hook, their .pyc files added as generated items. */
static int under_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || strcmp(dir, "/") == 0);
}

static int add_bytecode(struct inst *in, const struct eb_wheel_options *o, struct eb_error **err)
{
	const char **dests = eb_xcalloc(in->nitems + 1, sizeof(*dests));
	const char **srcs = eb_xcalloc(in->nitems + 1, sizeof(*srcs));
	struct eb_wheel_pyc *pycs = NULL;
	size_t n = 0, npycs = 0, i = 0;
	int r;

	for (size_t k = 0; k < in->nitems; k++) {
		const struct item *it = &in->items[k];

		if (it->src && eb_wheel__has_suffix(it->dest, ".py") &&
		    (under_dir(it->dest, in->sc.purelib) || under_dir(it->dest, in->sc.platlib))) {
			dests[n] = it->dest;
			srcs[n++] = it->src;
		}
	}
	r = n ? o->bytecode(o->bytecode_ud, dests, srcs, n, &pycs, &npycs, err) : 0;
	for (; r == 0 && i < npycs; i++) {
		r = add_item(in, pycs[i].dest, pycs[i].path, NULL, 0, 0644, pycs[i].sha256,
			     pycs[i].size, err);
		pycs[i].dest = NULL; /* add_item took it, also on failure */
		if (r == 0)
			in->items[in->nitems - 1].file = eb_steal_ptr(&pycs[i].path);
	}
	for (size_t k = 0; k < npycs; k++) {
		free(pycs[k].dest);
		free(pycs[k].path);
	}
	free(pycs);
	free(dests);
	free(srcs);
	return r;
}

static int verify_and_plan(struct inst *in, const struct eb_wheel_options *o,
			   const char *wheel_path, struct eb_wheel_result *out,
			   struct eb_error **err)
{
	size_t wcap = 0;
	eb_autofree char *datadir = NULL;
	eb_autofree char *dirabs = NULL;
	int r;

	if ((r = check_distinfo(in, err)) < 0)
		return r;
	if ((r = eb_metadata_parse_wheel(&out->wheel, in->caps[CAP_WHEEL].ptr,
					 in->caps[CAP_WHEEL].len, err)) < 0)
		return r;
	/* pip check_compatibility: another major version means another
	 * format; a newer minor one should still install. */
	if (out->wheel.version_major != 1)
		return eb_error_set(err, EB_EINVALID, "unsupported Wheel-Version %u.%u",
				    out->wheel.version_major, out->wheel.version_minor);
	if (out->wheel.version_minor > 0)
		push_warning(out, &wcap,
			     eb_xasprintf("Wheel-Version %u.%u is newer than 1.0, the newest supported",
					  out->wheel.version_major, out->wheel.version_minor));
	if ((r = eb_metadata_parse(&out->metadata, in->caps[CAP_METADATA].ptr,
				   in->caps[CAP_METADATA].len, err)) < 0)
		return r;
	for (size_t i = 0; i < out->metadata.nwarnings; i++)
		push_warning(out, &wcap, eb_xstrdup(out->metadata.warnings[i]));
	if (strcmp(out->metadata.norm_name, in->fn_name) != 0 ||
	    !same_version(out->metadata.version, in->fn_version)) {
		eb_autofree char *pn = eb_wheel__printable(out->metadata.name);
		eb_autofree char *pv = eb_wheel__printable(out->metadata.version);
		return eb_error_set(err, EB_EINVALID,
				    "METADATA says '%s' '%s', the file name %s %s", pn, pv,
				    in->fn_name, in->fn_version);
	}
	if (in->captured[CAP_ENTRY_POINTS] &&
	    (r = eb_metadata_parse_entry_points(&in->eps, in->caps[CAP_ENTRY_POINTS].ptr,
						in->caps[CAP_ENTRY_POINTS].len, err)) < 0)
		return r;
	if ((r = check_record(in, err)) < 0)
		return r;

	in->root = out->wheel.root_is_purelib ? in->sc.purelib : in->sc.platlib;
	datadir = eb_xasprintf("%.*s.data", (int)(strlen(in->distinfo) - 10), in->distinfo);
	for (size_t i = 0; i < in->n; i++)
		if ((r = plan_file(in, &in->e[i], datadir, err)) < 0)
			return r;
	for (int g = 0; g < 2; g++) {
		const struct eb_entry_point *eps = g ? in->eps.gui : in->eps.console;
		size_t n = g ? in->eps.ngui : in->eps.nconsole;
		for (size_t i = 0; i < n; i++) {
			char *text = launcher(in, &eps[i]);
			if ((r = add_item(in, join_abs(in->sc.scripts, eps[i].name), NULL, text,
					  strlen(text), 0755, NULL, 0, err)) < 0)
				return r;
		}
	}
	if (o->bytecode && (r = add_bytecode(in, o, err)) < 0)
		return r;
	dirabs = join_abs(in->root, in->distinfo);
	if ((r = add_item(in, eb_xasprintf("%s/INSTALLER", dirabs), NULL, eb_xstrdup("envbuild\n"),
			  9, 0644, NULL, 0, err)) < 0)
		return r;
	if (o->requested &&
	    (r = add_item(in, eb_xasprintf("%s/REQUESTED", dirabs), NULL, eb_xstrdup(""), 0, 0644,
			  NULL, 0, err)) < 0)
		return r;
	if (o->direct_url) {
		char *json = NULL;
		if ((r = direct_url_json(o->direct_url, wheel_path, &json, err)) < 0)
			return r;
		/* json_dumps allocates with malloc, so free() releases it. */
		if ((r = add_item(in, eb_xasprintf("%s/direct_url.json", dirabs), NULL, json,
				  strlen(json), 0644, NULL, 0, err)) < 0)
			return r;
	}
	{
		eb_autofree char *rrel = eb_xasprintf("%s/RECORD", in->distinfo);
		char *text = record_text(in, rrel);
		char *dest = eb_xasprintf("%s/RECORD", dirabs);
		size_t len = strlen(text);
		struct item *it;
		if ((r = add_item(in, dest, NULL, text, len, 0644, NULL, 0, err)) < 0)
			return r;
		/* staged like the members (no member is named so): torch's
		 * RECORD is megabytes, held until the layer is written */
		it = &in->items[in->nitems - 1];
		it->file = eb_xasprintf("%s/RECORD", in->dir);
		if ((r = eb_fs_write_replace(it->file, text, len, 0600, err)) < 0)
			return r;
		free(eb_steal_ptr(&it->data));
	}
	out->dist_info = eb_steal_ptr(&dirabs);
	return 0;
}

int eb_wheel_install(struct eb_layer_builder *b, const char *wheel_path,
		     const struct eb_wheel_scheme *scheme, const struct eb_wheel_options *opts,
		     struct eb_wheel_result *out, struct eb_error **err)
{
	struct inst in;
	const char *fn;
	eb_autofree char *tmpl = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&in, 0, sizeof(in));
	for (int i = 0; i < CAP_N; i++)
		eb_buf_init(&in.caps[i], eb_wheel__cap_max[i]);
	fn = opts->filename ? opts->filename : eb_path_basename(wheel_path);
	in.max_total = opts->max_total_size ? opts->max_total_size : EB_WHEEL_DEFAULT_MAX_TOTAL;
	in.stage_max = opts->stage_max ? opts->stage_max : EB_WHEEL_DEFAULT_STAGE_MAX;
	in.max_entries = opts->max_entries ? opts->max_entries : EB_WHEEL_DEFAULT_MAX_ENTRIES;
	in.max_ratio = opts->max_ratio ? opts->max_ratio : EB_WHEEL_DEFAULT_MAX_RATIO;
	in.ratio_min = opts->ratio_min_size ? opts->ratio_min_size : EB_WHEEL_DEFAULT_RATIO_MIN;

	if ((r = check_scheme(&in, scheme, err)) < 0)
		goto fail;
	if ((r = parse_filename(&in, fn, err)) < 0)
		goto fail;
	if (!opts->staging_dir) {
		r = eb_error_set(err, EB_EINVALID, "no staging directory given");
		goto fail;
	}
	tmpl = eb_xasprintf("%s/wheel-XXXXXX", opts->staging_dir);
	if (!mkdtemp(tmpl)) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot create a directory in '%s'",
				       opts->staging_dir);
		goto fail;
	}
	in.dir = eb_steal_ptr(&tmpl);

	if ((r = eb_wheel__extract(&in, wheel_path, err)) < 0)
		goto fail;
	if ((r = verify_and_plan(&in, opts, wheel_path, out, err)) < 0)
		goto fail;

	/* Phase 3: everything is verified; only I/O can fail from here. */
	out->paths = eb_xcalloc(in.nitems ? in.nitems : 1, sizeof(*out->paths));
	/* Each item is released as the builder takes it, so a 15k-file
	 * wheel is held once, not as both plan and entries; the maps and
	 * member names are done with. */
	strmap_release(&in.dests);
	strmap_release(&in.paths);
	for (size_t i = 0; i < in.n; i++)
		free(eb_steal_ptr(&in.e[i].path));
	for (size_t i = 0; i < in.nitems; i++) {
		struct item *it = &in.items[i];
		if (opts->nskip && bsearch(&it->dest, opts->skip, opts->nskip, sizeof(*opts->skip),
					   eb_wheel__cmp_str))
			continue;
		if (it->zip) {
			char dg[EB_DIGEST_STR_LEN + 1] = "sha256:";
			eb_hex_encode(dg + 7, it->sha256, 32);
			r = eb_layer_add_member(b, it->dest, wheel_path, it->zip->zoff,
						it->zip->zcsize, it->zip->zmethod, it->size, dg,
						it->mode, err);
		} else if (it->file)
			r = eb_layer_add_file_as(b, it->dest, it->file, it->mode, err);
		else if (it->src)
			r = eb_layer_add_file(b, it->dest, it->src, err);
		else
			r = eb_layer_add_bytes(b, it->dest, it->data, it->len, it->mode, err);
		if (r < 0)
			goto fail;
		out->paths[out->npaths++] = eb_steal_ptr(&it->dest);
		free(eb_steal_ptr(&it->rel));
		free(eb_steal_ptr(&it->file));
		free(eb_steal_ptr(&it->data));
	}
	eb_sort(out->paths, out->npaths, sizeof(*out->paths), eb_wheel__cmp_str);
	out->staging = eb_steal_ptr(&in.dir);
	inst_release(&in, 0);
	return 0;
fail:
	eb_error_wrap(err, "installing '%s'", fn);
	eb_wheel_result_release(out);
	inst_release(&in, 1);
	return r;
}

void eb_wheel_result_release(struct eb_wheel_result *r)
{
	eb_metadata_release(&r->metadata);
	eb_wheel_meta_release(&r->wheel);
	free(r->dist_info);
	free(r->staging);
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	free(r->paths);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
}

int eb_wheel_read_metadata(struct eb_metadata *md, const char *path, struct eb_error **err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct eb_buf b;
	int r = -EB_ENOTFOUND, ar;

	eb_buf_init(&b, EB_METADATA_MAX_CORE);
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		r = eb_error_set(err, EB_EINVALID, "cannot read wheel '%s': %s", path,
				 archive_error_string(a));
		goto done;
	}
	while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *n = archive_entry_pathname(e);
		const char *slash = n ? strchr(n, '/') : NULL;
		char chunk[65536];
		ssize_t got;

		if (!slash || strcmp(slash, "/METADATA") != 0 || slash - n < 11 ||
		    strncmp(slash - 10, ".dist-info", 10) != 0)
			continue;
		while ((got = archive_read_data(a, chunk, sizeof(chunk))) > 0)
			if (eb_buf_add(&b, chunk, (size_t)got) < 0) {
				r = eb_error_set(err, EB_ETOOBIG, "METADATA of '%s' is too large", path);
				goto done;
			}
		r = eb_metadata_parse(md, b.ptr, b.len, err);
		goto done;
	}
	r = eb_error_set(err, EB_EINVALID, "wheel '%s' has no *.dist-info/METADATA", path);
done:
	archive_read_free(a);
	eb_buf_release(&b);
	return r;
}
