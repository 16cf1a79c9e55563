/*
 * deb.c - .deb packages into a layer (see deb.h).  The base image scan
 * that tells it the base's dpkg status and directory symlinks is
 * deb_base.c (deb_internal.h between them).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debian/control.h"
#include "debian/deb.h"
#include "debian/deb_internal.h"
#include "oci/blobstore.h"
#include "oci/cache.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/pool.h"

#define CONTROL_MEMBER_MAX (16u << 20)
/* all members together: a control.tar of many large members is held in
 * memory whole (dpkg's own are a few KiB) */
#define CONTROL_TOTAL_MAX (32u << 20)
#define CONTROL_MEMBERS_MAX 1000
/* Small files are kept in memory rather than staged on disk, where
 * creating thousands of files (headers, docs) costs more than reading
 * them; up to MEM_TOTAL bytes per build (the layer builder holds a copy
 * until it is written). */
#define MEM_FILE_MAX (256u << 10)
#define MEM_TOTAL (128u << 20)

enum etype { E_DIR, E_FILE, E_LINK, E_HARD };

struct entry {
	enum etype type;
	char *path;   /* in the layer (merged-/usr rewritten), no leading '/' */
	char *orig;   /* as the package has it, for info/PKG.list */
	unsigned mode;
	uint32_t uid, gid; /* numeric, as the package has them */
	char *target; /* symlink target, or hardlink target (a layer path) */
	char *stage;  /* staged content of a file, or: */
	unsigned char *mem; /* its content in memory (a small file) */
	size_t memlen;
};

struct member {
	char *name;
	struct eb_buf data;
	unsigned mode;
};

struct pkg {
	const struct eb_deb_input *in;
	struct member *members;
	size_t nmembers;
	struct entry *entries;
	size_t nentries, cap;
	char **conffiles; /* paths with their MD5, "path md5" */
	size_t nconffiles;
	int list_only; /* its layer is in the cache: list the files, stage none */
	struct membudget *mem; /* what small files may still take in memory (shared) */
	size_t non_root;       /* entries not owned by 0:0 */
	/* read by a worker thread (eb_debian_write_layers_cached) */
	size_t index;
	const char *stage;
	const struct eb_deb_base *base;
	struct eb_error *err;
	int rc;
};

struct membudget {
	pthread_mutex_t mu;
	size_t left;
};

static int mem_take(struct membudget *m, size_t n)
{
	int ok;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->mu);
	ok = m->left >= n;
	if (ok)
		m->left -= n;
	pthread_mutex_unlock(&m->mu);
	return ok;
}

static void pkg_release(struct pkg *p)
{
	for (size_t i = 0; i < p->nmembers; i++) {
		free(p->members[i].name);
		eb_buf_release(&p->members[i].data);
	}
	free(p->members);
	for (size_t i = 0; i < p->nentries; i++) {
		free(p->entries[i].path);
		free(p->entries[i].orig);
		free(p->entries[i].target);
		free(p->entries[i].stage);
		free(p->entries[i].mem);
	}
	free(p->entries);
	for (size_t i = 0; i < p->nconffiles; i++)
		free(p->conffiles[i]);
	free(p->conffiles);
	eb_error_free(p->err);
}

static const struct member *member(const struct pkg *p, const char *name)
{
	for (size_t i = 0; i < p->nmembers; i++)
		if (!strcmp(p->members[i].name, name))
			return &p->members[i];
	return NULL;
}

void eb_deb_report_release(struct eb_deb_report *r)
{
	for (size_t i = 0; i < r->npostinst; i++) {
		free(r->postinst[i]);
		free(r->postinst_does ? r->postinst_does[i] : NULL);
	}
	free(r->postinst);
	free(r->postinst_does);
	for (size_t i = 0; i < r->nalternatives; i++)
		free(r->alternatives[i]);
	free(r->alternatives);
	memset(r, 0, sizeof(*r));
}

/* "./usr/bin/x" -> "usr/bin/x"; NULL for absolute paths and ".." */
char *eb_deb__clean_path(const char *p)
{
	struct eb_buf b;

	while (p[0] == '.' && p[1] == '/')
		p += 2;
	if (p[0] == '/')
		return NULL;
	eb_buf_init(&b, 0);
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			eb_buf_release(&b);
			return NULL;
		}
		if (n && !(n == 1 && p[0] == '.')) {
			if (b.len)
				(void)eb_buf_addc(&b, '/');
			(void)eb_buf_add(&b, p, n);
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return eb_buf_detach(&b, NULL);
}

/* 1 when a component of path starts with ".wh." (an OCI whiteout,
 * ".wh..wh..opq" too) or path has a control character */
static int bad_data_name(const char *path)
{
	for (const char *c = path; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return 1;
	for (const char *c = path; c; c = strchr(c, '/')) {
		if (*c == '/')
			c++;
		if (!strncmp(c, ".wh.", 4))
			return 1;
	}
	return 0;
}

/* a relative symlink at path must not climb above the root */
static int link_escapes(const char *path, const char *target)
{
	int depth = 0;

	if (target[0] == '/')
		return 0;
	for (const char *s = path; *s; s++)
		depth += *s == '/';
	while (*target) {
		size_t n = strcspn(target, "/");
		if (n == 2 && target[0] == '.' && target[1] == '.')
			depth--;
		else if (n && !(n == 1 && target[0] == '.'))
			depth++;
		if (depth < 0)
			return 1;
		target += n;
		while (*target == '/')
			target++;
	}
	return 0;
}

/* path under a directory the base has as a symlink -> through it; *skip
 * when the entry is that directory itself */
static char *through_links(const struct eb_deb_base *base, const char *path, int is_dir,
			   int *skip, int *clash)
{
	*skip = *clash = 0;
	for (size_t i = 0; base && i < base->nlinks; i++) {
		size_t n = strlen(base->link_paths[i]);
		if (strncmp(path, base->link_paths[i], n) != 0)
			continue;
		if (!path[n]) {
			if (is_dir)
				*skip = 1;
			else
				*clash = 1;
			return NULL;
		}
		if (path[n] == '/')
			return eb_xasprintf("%s%s", base->link_targets[i], path + n);
	}
	return eb_xstrdup(path);
}

/* libarchive reading a member of the outer ar archive as a stream */
struct nested {
	struct archive *outer;
	char buf[65536];
};

static la_ssize_t nested_read(struct archive *a, void *ud, const void **buff)
{
	struct nested *n = ud;
	(void)a;
	*buff = n->buf;
	return archive_read_data(n->outer, n->buf, sizeof(n->buf));
}

static struct archive *open_nested(struct nested *n)
{
	struct archive *in = archive_read_new();
	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	if (archive_read_open(in, n, NULL, nested_read, NULL) != ARCHIVE_OK) {
		archive_read_free(in);
		return NULL;
	}
	return in;
}

static int bad(struct eb_error **err, const struct eb_deb_input *in, const char *fmt, ...)
	EB_PRINTF(3, 4);

static int bad(struct eb_error **err, const struct eb_deb_input *in, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	eb_error_set(err, EB_EINVALID, "%s", msg);
	free(msg);
	return eb_error_wrap(err, "refusing %s_%s_%s.deb", in->name, in->version, in->arch);
}

static int read_control(struct pkg *p, struct archive *in, struct eb_error **err)
{
	struct archive_entry *e;
	size_t total = 0;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		char *name = eb_deb__clean_path(archive_entry_pathname(e));
		if (!name)
			return bad(err, p->in, "control member '%s' has an unsafe path",
				   archive_entry_pathname(e));
		if (!name[0] || archive_entry_filetype(e) == AE_IFDIR) {
			free(name);
			continue;
		}
		/* a member becomes info/PKG.NAME and a line of the debinfo record:
		 * no '/', blanks or control characters in its name */
		int odd = 0;
		for (const char *c = name; *c; c++)
			odd |= (unsigned char)*c <= ' ' || *c == 0x7f;
		if (odd || strchr(name, '/') || archive_entry_filetype(e) != AE_IFREG) {
			r = bad(err, p->in, "unexpected control member '%s'", name);
			free(name);
			return r;
		}
		if (p->nmembers >= CONTROL_MEMBERS_MAX) {
			free(name);
			return bad(err, p->in, "control.tar has more than %d members",
				   CONTROL_MEMBERS_MAX);
		}
		p->members = eb_xreallocarray(p->members, p->nmembers + 1, sizeof(*p->members));
		struct member *m = &p->members[p->nmembers++];
		m->name = name;
		m->mode = archive_entry_perm(e) & 0777;
		eb_buf_init(&m->data, CONTROL_MEMBER_MAX);
		char chunk[16384];
		la_ssize_t n;
		while ((n = archive_read_data(in, chunk, sizeof(chunk))) > 0) {
			if (eb_buf_add(&m->data, chunk, (size_t)n) < 0)
				return bad(err, p->in, "control member '%s' is too big", name);
			if ((total += (size_t)n) > CONTROL_TOTAL_MAX)
				return bad(err, p->in, "control.tar holds more than %u MiB",
					   CONTROL_TOTAL_MAX >> 20);
		}
		if (n < 0)
			return bad(err, p->in, "truncated or corrupt control.tar: %s",
				   archive_error_string(in));
	}
	if (r != ARCHIVE_EOF)
		return bad(err, p->in, "truncated or corrupt control.tar: %s",
			   archive_error_string(in) ? archive_error_string(in) : "?");
	if (!member(p, "control"))
		return bad(err, p->in, "%s", "control.tar has no control file");
	return 0;
}

static int is_conffile(const struct pkg *p, const char *orig)
{
	const struct member *c = member(p, "conffiles");
	if (!c)
		return 0;
	size_t n = strlen(orig);
	for (const char *s = c->data.ptr; *s;) {
		const char *nl = strchr(s, '\n'), *e = nl ? nl : s + strlen(s);
		const char *t = s;
		if (!strncmp(t, "remove-on-upgrade ", 18))
			t += 18;
		if (*t == '/' && (size_t)(e - t - 1) == n && !strncmp(t + 1, orig, n))
			return 1;
		s = nl ? nl + 1 : e;
	}
	return 0;
}

static int read_data(struct pkg *p, size_t pi, struct archive *in, const char *stage,
		     const struct eb_deb_base *base, struct eb_error **err)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);
		char *orig = raw ? eb_deb__clean_path(raw) : NULL;
		mode_t type = archive_entry_filetype(e);
		const char *hl = archive_entry_hardlink(e);
		int skip, clash;
		char *path;

		if (!orig)
			return bad(err, p->in, "data entry '%s' has an unsafe path (absolute or '..')",
				   raw ? raw : "(none)");
		if (!orig[0]) {
			free(orig);
			continue;
		}
		/* a ".wh." name is a whiteout in a layer (it would delete a
		 * base file), and a newline would forge a line of info/PKG.list */
		if (bad_data_name(orig)) {
			r = bad(err, p->in, "data entry '%s' has a name a layer cannot hold (a '.wh.' "
				"whiteout name, or a control character)", orig);
			free(orig);
			return r;
		}
		if (!hl && type != AE_IFDIR && type != AE_IFREG && type != AE_IFLNK) {
			r = bad(err, p->in, "data entry '%s' is a device, fifo or socket", orig);
			free(orig);
			return r;
		}
		if (archive_entry_uid(e) != 0 || archive_entry_gid(e) != 0)
			p->non_root++;
		path = through_links(base, orig, type == AE_IFDIR, &skip, &clash);
		if (clash) {
			r = bad(err, p->in, "'%s' would replace a directory symlink of the base", orig);
			free(orig);
			return r;
		}
		EB_ALLOC_GROW(p->entries, p->nentries + 1, p->cap);
		struct entry *x = &p->entries[p->nentries++];
		memset(x, 0, sizeof(*x));
		x->orig = orig;
		x->path = path; /* NULL when skipped: listed, not written */
		x->mode = archive_entry_perm(e) & 07777;
		/* numeric owners only, as every layer envbuild writes: Debian
		 * ships files owned by static ids only (policy 9.2.2), the same
		 * in every Debian base, and names would tie bytes to a passwd */
		x->uid = (uint32_t)archive_entry_uid(e);
		x->gid = (uint32_t)archive_entry_gid(e);
		if (hl) {
			char *t = eb_deb__clean_path(hl);
			int known = 0;
			for (size_t k = 0; t && k + 1 < p->nentries; k++)
				known |= p->entries[k].type == E_FILE && !strcmp(p->entries[k].orig, t);
			if (!known) {
				free(t);
				return bad(err, p->in, "hardlink '%s' points outside the package", orig);
			}
			x->type = E_HARD;
			x->target = through_links(base, t, 0, &skip, &clash);
			free(t);
			if (!x->target)
				return bad(err, p->in, "hardlink '%s' points at a directory link", orig);
		} else if (type == AE_IFDIR) {
			x->type = E_DIR;
		} else if (type == AE_IFLNK) {
			const char *t = archive_entry_symlink(e);
			if (!t || !t[0] || link_escapes(orig, t))
				return bad(err, p->in, "symlink '%s' points above the root", orig);
			x->type = E_LINK;
			x->target = eb_xstrdup(t);
		} else {
			EVP_MD_CTX *md5 = is_conffile(p, orig) ? EVP_MD_CTX_new() : NULL;
			char chunk[65536];
			la_ssize_t n;
			int fd;

			x->type = E_FILE;
			if (p->list_only && !md5) {
				if (archive_read_data_skip(in) != ARCHIVE_OK)
					return bad(err, p->in, "truncated or corrupt data.tar: %s",
						   archive_error_string(in) ? archive_error_string(in) : "?");
				continue;
			}
			fd = -1;
			int64_t esz = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
			if (!p->list_only && esz >= 0 && (uint64_t)esz <= MEM_FILE_MAX &&
			    mem_take(p->mem, (size_t)esz)) {
				x->mem = eb_xmalloc(esz ? (size_t)esz : 1);
			} else if (!p->list_only) {
				x->stage = eb_xasprintf("%s/%zu-%zu", stage, pi, p->nentries);
				fd = open(x->stage, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
				if (fd < 0) {
					EVP_MD_CTX_free(md5);
					return eb_error_set_errno(err, EB_EIO, errno, "creating %s",
								  x->stage);
				}
			}
			if (md5)
				EVP_DigestInit_ex(md5, EVP_md5(), NULL);
			while ((n = archive_read_data(in, chunk, sizeof(chunk))) > 0) {
				if (md5)
					EVP_DigestUpdate(md5, chunk, (size_t)n);
				if (x->mem) {
					if ((int64_t)(x->memlen + (size_t)n) > esz) {
						EVP_MD_CTX_free(md5);
						return bad(err, p->in, "data entry '%s' is longer than its header says",
							   orig);
					}
					memcpy(x->mem + x->memlen, chunk, (size_t)n);
					x->memlen += (size_t)n;
				}
				for (la_ssize_t off = 0; fd >= 0 && off < n;) {
					ssize_t w = write(fd, chunk + off, (size_t)(n - off));
					if (w < 0 && errno == EINTR)
						continue;
					if (w <= 0) {
						int en = errno;
						close(fd);
						EVP_MD_CTX_free(md5);
						return eb_error_set_errno(err, EB_EIO, en, "writing %s",
									  x->stage);
					}
					off += w;
				}
			}
			if (fd >= 0)
				close(fd);
			if (n < 0 || (x->mem && (int64_t)x->memlen != esz)) {
				EVP_MD_CTX_free(md5);
				return bad(err, p->in, "truncated or corrupt data.tar: %s",
					   n < 0 ? archive_error_string(in) : "short entry");
			}
			if (md5) {
				unsigned char d[EVP_MAX_MD_SIZE];
				unsigned dl = 0;
				char hex[2 * EVP_MAX_MD_SIZE + 1];
				EVP_DigestFinal_ex(md5, d, &dl);
				EVP_MD_CTX_free(md5);
				for (unsigned k = 0; k < dl; k++)
					snprintf(hex + 2 * k, 3, "%02x", d[k]);
				p->conffiles = eb_xreallocarray(p->conffiles, p->nconffiles + 1,
								sizeof(char *));
				p->conffiles[p->nconffiles++] = eb_xasprintf("/%s %s", orig, hex);
			}
		}
	}
	if (r != ARCHIVE_EOF)
		return bad(err, p->in, "truncated or corrupt data.tar: %s",
			   archive_error_string(in) ? archive_error_string(in) : "?");
	return 0;
}

/* check one .deb and read it into p (nothing is added to a layer yet) */
static int read_deb(struct pkg *p, size_t pi, const char *stage, const struct eb_deb_base *base,
		    struct eb_error **err)
{
	char digest[EB_DIGEST_STR_LEN + 1];
	uint64_t size;
	struct archive *outer = NULL;
	struct archive_entry *e;
	struct nested *nest = NULL;
	int rc, step = 0, r;

	if ((rc = eb_sha256_file(p->in->path, digest, &size, err)) < 0)
		return rc;
	if (size != p->in->size || strcmp(digest + 7, p->in->sha256) != 0) {
		eb_error_set(err, EB_EINVALID,
			     "%s does not match the lock: size %llu, sha256 %s (lock: size %llu, "
			     "sha256 %s)", p->in->path, (unsigned long long)size, digest + 7,
			     (unsigned long long)p->in->size, p->in->sha256);
		return eb_error_wrap(err, "refusing %s=%s", p->in->name, p->in->version);
	}
	outer = archive_read_new();
	archive_read_support_format_ar(outer);
	if (archive_read_open_filename(outer, p->in->path, 65536) != ARCHIVE_OK) {
		rc = bad(err, p->in, "not an ar archive: %s", archive_error_string(outer));
		goto done;
	}
	nest = eb_xcalloc(1, sizeof(*nest));
	nest->outer = outer;
	while ((r = archive_read_next_header(outer, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (step == 0) {
			char v[8] = { 0 };
			if (strcmp(name, "debian-binary") != 0 ||
			    archive_read_data(outer, v, sizeof(v) - 1) < 4 || strncmp(v, "2.", 2) != 0) {
				rc = bad(err, p->in, "%s", "first member is not debian-binary 2.x");
				goto done;
			}
			step = 1;
		} else if (step == 1 && !strncmp(name, "control.tar", 11)) {
			struct archive *in = open_nested(nest);
			rc = in ? read_control(p, in, err) : bad(err, p->in, "%s", "cannot read control.tar");
			archive_read_free(in);
			if (rc < 0)
				goto done;
			step = 2;
		} else if (step == 2 && !strncmp(name, "data.tar", 8)) {
			struct archive *in = open_nested(nest);
			rc = in ? read_data(p, pi, in, stage, base, err)
				: bad(err, p->in, "%s", "cannot read data.tar");
			archive_read_free(in);
			if (rc < 0)
				goto done;
			step = 3;
		} else if (name[0] != '_') {
			rc = bad(err, p->in, "unexpected member '%s'", name);
			goto done;
		}
	}
	if (r != ARCHIVE_EOF) {
		rc = bad(err, p->in, "truncated or corrupt archive: %s",
			 archive_error_string(outer) ? archive_error_string(outer) : "?");
		goto done;
	}
	if (step != 3) {
		rc = bad(err, p->in, "%s", "missing control.tar or data.tar");
		goto done;
	}
	rc = 0;
done:
	free(nest);
	archive_read_free(outer);
	return rc;
}

/* ---- reading the .debs on every core ----------------------------------------
 *
 * Decompressing data.tar.xz is most of a cold install's reading, one core
 * per package; the packages are read by up to READ_THREADS threads, each
 * into its own struct pkg (its error and counters too).  The cache and
 * the layer builders are only touched afterwards, on the caller's thread. */

#define READ_THREADS 4

static void read_pkgs(struct pkg *pkgs, const size_t *todo, size_t n);

struct readq {
	struct pkg *pkgs;
	const size_t *todo;
	size_t n, next;
	pthread_mutex_t mu;
};

static void *read_worker(void *ud)
{
	struct readq *q = ud;

	for (;;) {
		struct pkg *p;
		pthread_mutex_lock(&q->mu);
		p = q->next < q->n ? &q->pkgs[q->todo[q->next++]] : NULL;
		pthread_mutex_unlock(&q->mu);
		if (!p)
			return NULL;
		p->rc = read_deb(p, p->index, p->stage, p->base, &p->err);
	}
}

/* Largest .deb first: the packages are read one per core, and a big one
 * read last would leave the other cores idle until it is done (gcc-12's
 * data.tar.xz alone is a third of a gcc install's decoding). */
struct by_size {
	uint64_t size;
	size_t i;
};

static int cmp_bigger(const void *a, const void *b)
{
	const struct by_size *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->i < y->i ? -1 : 1;
}

static void read_all(struct pkg *pkgs, const size_t *todo_in, size_t n)
{
	struct by_size *v = eb_xcalloc(n + 1, sizeof(*v));
	size_t *todo = eb_xcalloc(n + 1, sizeof(*todo));

	for (size_t k = 0; k < n; k++) {
		v[k].size = pkgs[todo_in[k]].in->size;
		v[k].i = todo_in[k];
	}
	eb_sort(v, n, sizeof(*v), cmp_bigger);
	for (size_t k = 0; k < n; k++)
		todo[k] = v[k].i;
	free(v);
	read_pkgs(pkgs, todo, n);
	free(todo);
}

static void read_pkgs(struct pkg *pkgs, const size_t *todo, size_t n)
{
	struct readq q = { pkgs, todo, n, 0, PTHREAD_MUTEX_INITIALIZER };
	size_t nth = eb_pool_threads(0, n);

	eb_pool_run(nth > READ_THREADS ? READ_THREADS : nth, read_worker, &q);
	pthread_mutex_destroy(&q.mu);
}

/* ---- a .deb's derived data, kept in the cache --------------------------------
 *
 * What the dpkg database layer needs of a package whose own layer is
 * already made: its control members (the status entry, postinst for the
 * alternatives), its conffiles with their MD5s and the paths it ships
 * (the alternatives only link to a path some package has).  Kept as a
 * blob, a "debinfo" record keyed by the .deb's sha256, so that a build
 * where one pin changed reads no other .deb.  The blob:
 *   "envbuild debinfo 1\n", then records "m MODE LEN NAME\n" + LEN bytes
 *   (a control member), "c LEN\n" + bytes (a conffile line, "/path md5"),
 *   "p LEN\n" + bytes (a path that is not a directory), each bytes + "\n".
 * The blob store re-hashes it before it is used; it is parsed with every
 * length checked all the same. */

#define DEBINFO_MAGIC "envbuild debinfo 1\n"
#define DEBINFO_MAX (64u << 20)

static void debinfo_key(const char *sha256, char key[EB_DIGEST_STR_LEN + 1])
{
	char *s = eb_xasprintf("%s%s\n", DEBINFO_MAGIC, sha256);
	eb_sha256_digest(s, strlen(s), key);
	free(s);
}

int eb_debian_info_cached(struct eb_blobstore *bs, const char *sha256)
{
	char key[EB_DIGEST_STR_LEN + 1];
	json_t *rec = NULL;
	int r;

	if (!bs)
		return 0;
	debinfo_key(sha256, key);
	r = eb_cache_record_get(bs, "debinfo", key, &rec) == 1;
	json_decref(rec);
	return r;
}

static void debinfo_put(struct eb_blobstore *bs, const struct pkg *p)
{
	char key[EB_DIGEST_STR_LEN + 1], digest[EB_DIGEST_STR_LEN + 1];
	struct eb_buf b;
	json_t *rec;

	eb_buf_init(&b, 0);
	(void)eb_buf_adds(&b, DEBINFO_MAGIC);
	for (size_t i = 0; i < p->nmembers; i++) {
		const struct member *m = &p->members[i];
		(void)eb_buf_addf(&b, "m %o %zu %s\n", m->mode, m->data.len, m->name);
		(void)eb_buf_add(&b, m->data.ptr, m->data.len);
		(void)eb_buf_addc(&b, '\n');
	}
	for (size_t i = 0; i < p->nconffiles; i++)
		(void)eb_buf_addf(&b, "c %zu\n%s\n", strlen(p->conffiles[i]), p->conffiles[i]);
	for (size_t i = 0; i < p->nentries; i++)
		if (p->entries[i].type != E_DIR)
			(void)eb_buf_addf(&b, "p %zu\n%s\n", strlen(p->entries[i].orig),
					  p->entries[i].orig);
	debinfo_key(p->in->sha256, key);
	/* only a cache: a failure costs a read of the .deb next time */
	if (eb_blobstore_put(bs, b.ptr, b.len, digest, NULL) == 0) {
		rec = json_pack("{s:s, s:I}", "digest", digest, "size", (json_int_t)b.len);
		(void)eb_cache_record_put(bs, "debinfo", key, rec, NULL);
		json_decref(rec);
	}
	eb_buf_release(&b);
}

/* one "X LEN[ ...]\n" + LEN bytes + "\n" record at *s; 0 at the end, -1 when malformed */
int eb_deb__debinfo_next(const char **s, const char *end, char *kind, unsigned *mode,
			const char **name, size_t *namelen, const char **data, size_t *len)
{
	const char *nl, *q;
	char *e;
	unsigned long long n;

	if (*s == end)
		return 0;
	nl = memchr(*s, '\n', (size_t)(end - *s));
	if (!nl || nl - *s < 3 || (*s)[1] != ' ')
		return -1;
	*kind = (*s)[0];
	q = *s + 2;
	*mode = 0;
	*name = NULL;
	*namelen = 0;
	if (*kind == 'm') {
		*mode = (unsigned)strtoul(q, &e, 8);
		if (e == q || *e != ' ' || *mode > 07777)
			return -1;
		q = e + 1;
	}
	if (*q < '0' || *q > '9')
		return -1;
	n = strtoull(q, &e, 10);
	if (*kind == 'm') {
		if (*e != ' ' || e + 1 >= nl)
			return -1;
		*name = e + 1;
		*namelen = (size_t)(nl - (e + 1));
	} else if (e != nl) {
		return -1;
	}
	/* nl + 1 + n is the closing newline, before end (no overflow: n is
	 * compared before anything is added to it) */
	if (n >= (unsigned long long)(end - nl) - 1 || nl[1 + n] != '\n')
		return -1;
	*data = nl + 1;
	*len = (size_t)n;
	*s = nl + 2 + n;
	return 1;
}

/* p from its cached derived data: 1 when found and sound, else 0 (p as it was) */
static int debinfo_get(struct eb_blobstore *bs, struct pkg *p)
{
	char key[EB_DIGEST_STR_LEN + 1];
	const char *dg, *s, *end, *name, *data;
	json_t *rec = NULL;
	struct eb_buf b;
	struct pkg q;
	size_t namelen, len;
	unsigned mode;
	char kind;
	int r;

	debinfo_key(p->in->sha256, key);
	if (eb_cache_record_get(bs, "debinfo", key, &rec) != 1)
		return 0;
	dg = json_string_value(json_object_get(rec, "digest"));
	eb_buf_init(&b, 0);
	if (!dg || eb_blobstore_read(bs, dg, &b, DEBINFO_MAX, NULL) < 0 ||
	    b.len < strlen(DEBINFO_MAGIC) || memcmp(b.ptr, DEBINFO_MAGIC, strlen(DEBINFO_MAGIC))) {
		json_decref(rec);
		eb_buf_release(&b);
		return 0;
	}
	json_decref(rec);
	memset(&q, 0, sizeof(q));
	q.in = p->in;
	q.list_only = 1;
	s = b.ptr + strlen(DEBINFO_MAGIC);
	end = b.ptr + b.len;
	while ((r = eb_deb__debinfo_next(&s, end, &kind, &mode, &name, &namelen, &data, &len)) > 0) {
		if (kind == 'm') {
			q.members = eb_xreallocarray(q.members, q.nmembers + 1, sizeof(*q.members));
			struct member *m = &q.members[q.nmembers++];
			m->name = eb_xstrndup(name, namelen);
			m->mode = mode;
			eb_buf_init(&m->data, 0);
			(void)eb_buf_add(&m->data, data, len);
		} else if (kind == 'c') {
			q.conffiles = eb_xreallocarray(q.conffiles, q.nconffiles + 1, sizeof(char *));
			q.conffiles[q.nconffiles++] = eb_xstrndup(data, len);
		} else if (kind == 'p') {
			EB_ALLOC_GROW(q.entries, q.nentries + 1, q.cap);
			struct entry *x = &q.entries[q.nentries++];
			memset(x, 0, sizeof(*x));
			x->type = E_FILE;
			x->orig = eb_xstrndup(data, len);
		} else {
			r = -1;
			break;
		}
	}
	eb_buf_release(&b);
	if (r < 0 || !member(&q, "control")) {
		pkg_release(&q);
		return 0;
	}
	*p = q;
	return 1;
}

/* ---- dpkg database -------------------------------------------------------- */

static void write_field(struct eb_buf *b, const char *name, const char *value)
{
	if (!value[0] || value[0] == '\n')
		(void)eb_buf_addf(b, "%s:%s\n", name, value);
	else
		(void)eb_buf_addf(b, "%s: %s\n", name, value);
}

struct para_ref {
	const char *name, *arch;
	char *text; /* owned */
};

static int para_cmp(const void *a, const void *b)
{
	const struct para_ref *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	return r ? r : strcmp(x->arch, y->arch);
}

static char *para_text(const struct eb_deb822_para *para, const char *status,
		       char *const *conffiles, size_t nconffiles)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < para->n; i++) {
		const struct eb_deb822_field *f = &para->fields[i];
		if (status && (!strcasecmp(f->name, "Status") || !strcasecmp(f->name, "Conffiles")))
			continue;
		write_field(&b, f->name, f->value);
		if (status && i == 0)
			write_field(&b, "Status", status);
	}
	if (nconffiles) {
		(void)eb_buf_adds(&b, "Conffiles:\n");
		for (size_t i = 0; i < nconffiles; i++)
			(void)eb_buf_addf(&b, " %s\n", conffiles[i]);
	}
	return eb_buf_detach(&b, NULL);
}

static int build_status(struct eb_buf *out, const struct eb_deb_base *base, struct pkg *pkgs,
			size_t n, struct eb_error **err)
{
	struct para_ref *refs = NULL;
	size_t nrefs = 0, cap = 0;
	struct eb_deb822_para *paras = eb_xcalloc(n + 1, sizeof(*paras));
	struct eb_deb822_para bp = EB_DEB822_PARA_INIT;
	struct eb_deb822 rd;
	char **keep = NULL;
	size_t nkeep = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		const struct member *c = member(&pkgs[i], "control");
		eb_deb822_init(&rd, c->data.ptr, c->data.len, "control");
		rc = eb_deb822_next(&rd, &paras[i], err);
		if (rc <= 0 || !eb_deb822_get(&paras[i], "Package") ||
		    strcmp(eb_deb822_get(&paras[i], "Package"), pkgs[i].in->name) != 0 ||
		    !eb_deb822_get(&paras[i], "Version") ||
		    strcmp(eb_deb822_get(&paras[i], "Version"), pkgs[i].in->version) != 0) {
			if (rc >= 0)
				eb_error_set(err, EB_EINVALID,
					     "control file does not name %s %s", pkgs[i].in->name,
					     pkgs[i].in->version);
			rc = eb_error_wrap(err, "refusing %s=%s", pkgs[i].in->name,
					   pkgs[i].in->version);
			goto done;
		}
		EB_ALLOC_GROW(refs, nrefs + 1, cap);
		refs[nrefs].name = pkgs[i].in->name;
		refs[nrefs].arch = pkgs[i].in->arch;
		refs[nrefs].text = para_text(&paras[i], "install ok installed", pkgs[i].conffiles,
					     pkgs[i].nconffiles);
		nrefs++;
	}
	if (base && base->status) {
		eb_deb822_init(&rd, base->status, base->status_len, "/var/lib/dpkg/status");
		while ((rc = eb_deb822_next(&rd, &bp, err)) > 0) {
			const char *name = eb_deb822_get(&bp, "Package");
			const char *arch = eb_deb822_get(&bp, "Architecture");
			const char *ma = eb_deb822_get(&bp, "Multi-Arch");
			int replaced = 0;
			if (!name)
				continue;
			for (size_t i = 0; i < n; i++)
				if (!strcmp(name, pkgs[i].in->name) &&
				    (!ma || strcmp(ma, "same") != 0 || !arch ||
				     !strcmp(arch, pkgs[i].in->arch)))
					replaced = 1;
			if (replaced)
				continue;
			keep = eb_xreallocarray(keep, nkeep + 2, sizeof(char *));
			keep[nkeep++] = eb_xstrdup(name);
			keep[nkeep++] = eb_xstrdup(arch ? arch : "");
			EB_ALLOC_GROW(refs, nrefs + 1, cap);
			refs[nrefs].name = keep[nkeep - 2];
			refs[nrefs].arch = keep[nkeep - 1];
			refs[nrefs].text = para_text(&bp, NULL, NULL, 0);
			nrefs++;
		}
		if (rc < 0) {
			rc = eb_error_wrap(err, "reading the base's dpkg status");
			goto done;
		}
	}
	eb_sort(refs, nrefs, sizeof(*refs), para_cmp);
	eb_buf_init(out, 0);
	for (size_t i = 0; i < nrefs; i++)
		(void)eb_buf_addf(out, "%s\n", refs[i].text);
	rc = 0;
done:
	for (size_t i = 0; i < nrefs; i++)
		free(refs[i].text);
	free(refs);
	for (size_t i = 0; i < n; i++)
		eb_deb822_para_release(&paras[i]);
	free(paras);
	eb_deb822_para_release(&bp);
	for (size_t i = 0; i < nkeep; i++)
		free(keep[i]);
	free(keep);
	return rc;
}

/* ---- update-alternatives --------------------------------------------------- */

struct alt {
	char *name, *link, *path;
	long prio;
	char **slaves; /* name, link, path triples */
	size_t nslaves;
};

static void alt_free(struct alt *a)
{
	free(a->name);
	free(a->link);
	free(a->path);
	for (size_t i = 0; i < 3 * a->nslaves; i++)
		free(a->slaves[i]);
	free(a->slaves);
	memset(a, 0, sizeof(*a));
}

static int literal(const char *t)
{
	return t && t[0] && !strpbrk(t, "$`'\"\\*?");
}

static int have_path(struct pkg *pkgs, size_t n, const char *abs)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < pkgs[i].nentries; k++)
			if (pkgs[i].entries[k].type != E_DIR && !strcmp(pkgs[i].entries[k].orig, abs + 1))
				return 1;
	return 0;
}

/* the literal `update-alternatives --install` commands of a postinst */
static void parse_alternatives(const char *script, struct pkg *pkgs, size_t n, struct alt **alts,
			       size_t *nalts)
{
	struct eb_buf joined;

	eb_buf_init(&joined, 0);
	for (const char *s = script; *s; s++) {
		if (s[0] == '\\' && s[1] == '\n') {
			s++;
			(void)eb_buf_addc(&joined, ' ');
		} else {
			(void)eb_buf_addc(&joined, *s);
		}
	}
	for (char *line = joined.ptr; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		/* a comment starts at '#' after a blank (or the line start) */
		for (char *c = line; *c; c++)
			if (*c == '#' && (c == line || c[-1] == ' ' || c[-1] == '\t')) {
				*c = '\0';
				break;
			}
		char *tok[64];
		size_t nt = 0;
		for (char *t = strtok(line, " \t"); t && nt < 64; t = strtok(NULL, " \t"))
			tok[nt++] = t;
		for (size_t i = 0; i < nt; i++) {
			if (strcmp(tok[i], "update-alternatives") != 0)
				continue;
			struct alt a = { 0 };
			int ok = 1;
			for (size_t k = i + 1; k < nt && ok; k++) {
				if (!strcmp(tok[k], "--install")) {
					if (k + 4 >= nt || !literal(tok[k + 1]) || !literal(tok[k + 2]) ||
					    !literal(tok[k + 3]) || !literal(tok[k + 4])) {
						ok = 0;
						break;
					}
					a.link = eb_xstrdup(tok[k + 1]);
					a.name = eb_xstrdup(tok[k + 2]);
					a.path = eb_xstrdup(tok[k + 3]);
					a.prio = strtol(tok[k + 4], NULL, 10);
					k += 4;
				} else if (!strcmp(tok[k], "--slave") && a.name) {
					if (k + 3 >= nt || !literal(tok[k + 1]) || !literal(tok[k + 2]) ||
					    !literal(tok[k + 3])) {
						ok = 0;
						break;
					}
					a.slaves = eb_xreallocarray(a.slaves, 3 * (a.nslaves + 1),
								    sizeof(char *));
					a.slaves[3 * a.nslaves] = eb_xstrdup(tok[k + 2]);
					a.slaves[3 * a.nslaves + 1] = eb_xstrdup(tok[k + 1]);
					a.slaves[3 * a.nslaves + 2] = eb_xstrdup(tok[k + 3]);
					a.nslaves++;
					k += 3;
				} else if (!strcmp(tok[k], "--quiet") || !strcmp(tok[k], "--force")) {
					continue;
				} else {
					break; /* another action, or the end of the command */
				}
			}
			if (!ok || !a.name || a.link[0] != '/' || a.path[0] != '/' ||
			    !have_path(pkgs, n, a.path)) {
				alt_free(&a);
				continue;
			}
			size_t j;
			for (j = 0; j < *nalts && strcmp((*alts)[j].name, a.name) != 0; j++)
				;
			if (j < *nalts && (*alts)[j].prio >= a.prio) {
				alt_free(&a);
				continue;
			}
			if (j < *nalts) {
				alt_free(&(*alts)[j]);
				(*alts)[j] = a;
			} else {
				*alts = eb_xreallocarray(*alts, *nalts + 1, sizeof(**alts));
				(*alts)[(*nalts)++] = a;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	eb_buf_release(&joined);
}

/* Whether a postinst does more than envbuild does in its place: 0 when
 * every command in it is one of the harmless or replayed kinds below,
 * judged line by line (continuations joined, comments dropped), so that
 * the build's warning (EB235) names the packages that miss something.
 * Anything not recognised counts as work: the warning errs on the side
 * of saying too much.
 *   - `set -e` and other `set` options, `exit 0`, `:`;
 *   - the shell's structure: `if`/`elif` tests on "$1"/"$2" (the
 *     maintainer script's arguments), `then`, `else`, `fi`, `case "$1"
 *     in`, `PATTERN)` lines, `;;`, `esac`;
 *   - `update-alternatives` (the links are made: parse_alternatives);
 *   - `dpkg-maintscript-helper` (conffile and symlink moves of upgrades
 *     from older versions, which a fresh image never has). */
static int shell_word_ok(const char *w)
{
	static const char *const ok[] = { "then", "else", "fi", ";;", "esac", "exit 0", ":",
					  NULL };
	for (const char *const *k = ok; *k; k++)
		if (!strcmp(w, *k))
			return 1;
	return 0;
}

static int args_test(const char *t)
{
	/* `if [ "$1" = configure ]; then`, `[ "$1" != upgrade ]`, `elif ...`:
	 * a test that only looks at the script's arguments */
	const char *b = strchr(t, '['), *e = b ? strchr(b, ']') : NULL, *r;
	if (!b || !e)
		return 0;
	/* nothing after the test but "; then": no command on the line */
	r = e + 1 + strspn(e + 1, " \t;");
	if (*r && strcmp(r, "then") != 0)
		return 0;
	for (const char *c = b + 1; c < e; c++)
		if (*c == '$' && !(c[1] == '1' || c[1] == '2' || (c[1] == '{' && (c[2] == '1' || c[2] == '2'))))
			return 0;
		else if (*c == '`' || (*c == '$' && c[1] == '('))
			return 0;
	return strstr(b, "$1") || strstr(b, "${1") || strstr(b, "$2") || strstr(b, "${2");
}

/* What a postinst line envbuild does not do in its place does, as the
 * effects the build's warning names (eb_deb_postinst_effect). */
static const struct {
	const char *cmd, *effect;
} effects[] = {
	{ "ldconfig", "refresh ld.so.cache" },
	{ "py3compile", "byte-compile Python modules" },
	{ "pycompile", "byte-compile Python modules" },
	{ "compileall", "byte-compile Python modules" },
	{ "update-ca-certificates", "rebuild the CA bundle" },
	{ "adduser", "create users or groups" },
	{ "addgroup", "create users or groups" },
	{ "useradd", "create users or groups" },
	{ "groupadd", "create users or groups" },
	{ "systemd-sysusers", "create users or groups" },
	{ "deb-systemd-helper", "enable or start services" },
	{ "deb-systemd-invoke", "enable or start services" },
	{ "systemctl", "enable or start services" },
	{ "invoke-rc.d", "enable or start services" },
	{ "update-rc.d", "enable or start services" },
	{ "dpkg-trigger", "activate dpkg triggers" },
	{ "update-mime-database", "refresh desktop caches (MIME, icons, fonts, schemas)" },
	{ "update-desktop-database", "refresh desktop caches (MIME, icons, fonts, schemas)" },
	{ "gtk-update-icon-cache", "refresh desktop caches (MIME, icons, fonts, schemas)" },
	{ "fc-cache", "refresh desktop caches (MIME, icons, fonts, schemas)" },
	{ "glib-compile-schemas", "refresh desktop caches (MIME, icons, fonts, schemas)" },
	{ "install-info", "register info pages" },
	{ "mandb", "refresh the man page index" },
	{ "ucf", "install configuration files through ucf" },
	{ "ucfr", "install configuration files through ucf" },
	{ "dpkg-statoverride", "set owners, modes or capabilities" },
	{ "chown", "set owners, modes or capabilities" },
	{ "chmod", "set owners, modes or capabilities" },
	{ "chgrp", "set owners, modes or capabilities" },
	{ "setcap", "set owners, modes or capabilities" },
	{ "mkdir", "make, link or move files" },
	{ "ln", "make, link or move files" },
	{ "mv", "make, link or move files" },
	{ "cp", "make, link or move files" },
	{ "rm", "make, link or move files" },
	{ "touch", "make, link or move files" },
	{ NULL, NULL },
};

const char *eb_deb_postinst_effect(const char *cmd)
{
	for (size_t i = 0; effects[i].cmd; i++)
		if (!strcmp(cmd, effects[i].cmd))
			return effects[i].effect;
	return NULL;
}

/* The command a line runs, into what (space-separated, each once): the
 * first word of the line that names a known effect (ldconfig, adduser,
 * ...), else "-": a script's own functions, loops and here-documents make
 * any other word a guess, so the warning says "other commands" for them. */
static void note_command(const char *line, struct eb_buf *what)
{
	char *copy = eb_xstrdup(line), *save = NULL;
	const char *found = "-";
	size_t len;
	const char *at;
	int dup = 0;

	for (char *w = strtok_r(copy, " \t;|&()`\"'<>", &save); w;
	     w = strtok_r(NULL, " \t;|&()`\"'<>", &save)) {
		const char *base = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
		if (eb_deb_postinst_effect(base)) {
			found = base;
			break;
		}
	}
	/* each command once */
	len = strlen(found);
	for (at = what->len ? what->ptr : NULL; at && *at;) {
		if (!strncmp(at, found, len) && (at[len] == ' ' || !at[len]))
			dup = 1;
		at = strchr(at, ' ');
		at = at ? at + 1 : NULL;
	}
	if (!dup)
		(void)eb_buf_addf(what, "%s%s", what->len ? " " : "", found);
	free(copy);
}

/* what (may be NULL) gets the commands of every line that does more. */
static int postinst_does_more(const char *script, struct eb_buf *what)
{
	struct eb_buf j;
	int more = 0;

	eb_buf_init(&j, 0);
	for (const char *c = script; *c; c++) {
		if (c[0] == '\\' && c[1] == '\n')
			c++;
		else
			(void)eb_buf_addc(&j, *c);
	}
	for (char *line = j.ptr; line && *line && (!more || what);) {
		char *nl = strchr(line, '\n'), *end;
		if (nl)
			*nl = '\0';
		for (char *c = line; *c; c++)
			if (*c == '#' && (c == line || c[-1] == ' ' || c[-1] == '\t')) {
				*c = '\0';
				break;
			}
		while (*line == ' ' || *line == '\t')
			line++;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == ';'))
			*--end = '\0';
		if (!*line || shell_word_ok(line) || !strncmp(line, "set -", 5) ||
		    !strncmp(line, "update-alternatives ", 20) ||
		    !strncmp(line, "dpkg-maintscript-helper ", 24) ||
		    ((!strncmp(line, "if ", 3) || !strncmp(line, "elif ", 5)) && args_test(line)) ||
		    (!strncmp(line, "case ", 5) && strstr(line, " in") &&
		     (strstr(line, "\"$1\"") || strstr(line, "$1 "))) ||
		    (end > line && end[-1] == ')' && !strpbrk(line, " \t$`(;&<>")))
			;
		else {
			more = 1;
			if (what)
				note_command(line, what);
		}
		line = nl ? nl + 1 : NULL;
	}
	eb_buf_release(&j);
	return more;
}

/* ---- the layer -------------------------------------------------------------- */

static char *info_name(const struct pkg *p)
{
	/* dpkg names the files of a Multi-Arch: same package "pkg:arch" */
	const struct member *c = member(p, "control");
	int same = c && strstr(c->data.ptr, "\nMulti-Arch: same");
	return same ? eb_xasprintf("%s:%s", p->in->name, p->in->arch) : eb_xstrdup(p->in->name);
}

static int add_link_through(struct eb_layer_builder *b, const struct eb_deb_base *base,
			    const char *abs, const char *target, struct eb_error **err)
{
	int skip, clash;
	char *p = through_links(base, abs + 1, 0, &skip, &clash);
	int rc = p ? eb_layer_add_symlink(b, p, target, err) : 0;
	free(p);
	return rc;
}

int eb_debian_write_layer(struct eb_layer_builder *b, const char *stage_dir,
			  const struct eb_deb_input *debs, size_t n,
			  const struct eb_deb_base *base, struct eb_deb_report *report,
			  struct eb_error **err)
{
	struct eb_layer_builder **all = eb_xcalloc(n + 1, sizeof(*all));
	int rc;

	for (size_t i = 0; i < n; i++)
		all[i] = b;
	rc = eb_debian_write_layers(all, b, stage_dir, debs, n, base, report, err);
	free(all);
	return rc;
}

int eb_debian_write_layers(struct eb_layer_builder *const *pkg_builders,
			   struct eb_layer_builder *meta, const char *stage_dir,
			   const struct eb_deb_input *debs, size_t n,
			   const struct eb_deb_base *base, struct eb_deb_report *report,
			   struct eb_error **err)
{
	return eb_debian_write_layers_cached(pkg_builders, meta, stage_dir, debs, n, base, NULL,
					     report, err);
}

int eb_debian_write_layers_cached(struct eb_layer_builder *const *pkg_builders,
				  struct eb_layer_builder *meta, const char *stage_dir,
				  const struct eb_deb_input *debs, size_t n,
				  const struct eb_deb_base *base, struct eb_blobstore *bs,
				  struct eb_deb_report *report, struct eb_error **err)
{
	struct eb_layer_builder *b = meta;
	struct pkg *pkgs = eb_xcalloc(n + 1, sizeof(*pkgs));
	struct eb_buf status;
	struct alt *alts = NULL;
	size_t nalts = 0, *todo = eb_xcalloc(n + 1, sizeof(*todo)), ntodo = 0;
	struct membudget mem;
	int rc = 0;

	memset(report, 0, sizeof(*report));
	eb_buf_init(&status, 0);
	pthread_mutex_init(&mem.mu, NULL);
	mem.left = MEM_TOTAL;
	/* read and check everything first: a bad package adds nothing */
	for (size_t i = 0; i < n; i++) {
		pkgs[i].in = &debs[i];
		pkgs[i].list_only = !pkg_builders[i];
		if (bs && pkgs[i].list_only && debinfo_get(bs, &pkgs[i])) {
			report->ninfo_cached++;
			continue; /* its .deb is not read at all */
		}
		pkgs[i].mem = &mem;
		pkgs[i].index = i;
		pkgs[i].stage = stage_dir;
		pkgs[i].base = base;
		todo[ntodo++] = i;
	}
	read_all(pkgs, todo, ntodo);
	for (size_t k = 0; k < ntodo; k++) {
		struct pkg *p = &pkgs[todo[k]];
		if (p->rc < 0 && rc == 0) {
			rc = p->rc; /* the first in pin order, as a sequential read */
			*err = p->err;
			p->err = NULL;
		}
		report->non_root_owned += p->non_root;
	}
	if (rc < 0)
		goto done;
	for (size_t k = 0; bs && k < ntodo; k++)
		debinfo_put(bs, &pkgs[todo[k]]);
	if ((rc = build_status(&status, base, pkgs, n, err)) < 0)
		goto done;
	for (size_t i = 0; i < n; i++) {
		const struct member *pi = member(&pkgs[i], "postinst");
		struct eb_buf what;

		eb_buf_init(&what, 0);
		if (pi && postinst_does_more(pi->data.ptr, &what)) {
			report->postinst = eb_xreallocarray(report->postinst, report->npostinst + 1,
							    sizeof(char *));
			report->postinst_does = eb_xreallocarray(report->postinst_does,
								 report->npostinst + 1, sizeof(char *));
			report->postinst_does[report->npostinst] = eb_xstrdup(what.ptr ? what.ptr : "");
			report->postinst[report->npostinst++] = eb_xstrdup(pkgs[i].in->name);
		}
		eb_buf_release(&what);
		if (pi)
			parse_alternatives(pi->data.ptr, pkgs, n, &alts, &nalts);
	}
	/* now the layer */
	for (size_t i = 0; i < n; i++) {
		struct pkg *p = &pkgs[i];
		struct eb_layer_builder *pb = pkg_builders[i];
		struct eb_buf list;
		char *iname;

		if (!pb)
			continue; /* its layer comes from the cache */
		iname = info_name(p);
		eb_buf_init(&list, 0);
		(void)eb_buf_adds(&list, "/.\n");
		for (size_t k = 0; k < p->nentries; k++) {
			struct entry *x = &p->entries[k];
			(void)eb_buf_addf(&list, "/%s\n", x->orig);
			if (!x->path)
				continue;
			switch (x->type) {
			case E_DIR:
				rc = eb_layer_add_dir(pb, x->path, x->mode, err);
				break;
			case E_FILE:
				if (x->mem) {
					rc = eb_layer_add_bytes(pb, x->path, x->mem, x->memlen, x->mode,
								err);
					free(x->mem);
					x->mem = NULL;
				} else if (chmod(x->stage, x->mode) < 0)
					rc = eb_error_set_errno(err, EB_EIO, errno, "chmod %s", x->stage);
				else
					rc = eb_layer_add_file(pb, x->path, x->stage, err);
				break;
			case E_LINK:
				rc = eb_layer_add_symlink(pb, x->path, x->target, err);
				break;
			case E_HARD:
				rc = eb_layer_add_hardlink(pb, x->path, x->target, err);
				break;
			}
			if (rc < 0)
				break;
			if (x->uid || x->gid)
				eb_layer_set_last_owner(pb, x->uid, x->gid);
			report->nfiles++;
		}
		for (size_t k = 0; rc == 0 && k < p->nmembers; k++) {
			const struct member *m = &p->members[k];
			if (!strcmp(m->name, "control"))
				continue;
			char *dest = eb_xasprintf("var/lib/dpkg/info/%s.%s", iname, m->name);
			rc = eb_layer_add_bytes(pb, dest, m->data.ptr, m->data.len, m->mode, err);
			free(dest);
		}
		if (rc == 0) {
			char *dest = eb_xasprintf("var/lib/dpkg/info/%s.list", iname);
			rc = eb_layer_add_bytes(pb, dest, list.ptr, list.len, 0644, err);
			free(dest);
		}
		eb_buf_release(&list);
		free(iname);
		if (rc < 0)
			goto done;
	}
	for (size_t i = 0; i < nalts; i++) {
		struct alt *a = &alts[i];
		struct eb_buf admin;
		char *etc = eb_xasprintf("/etc/alternatives/%s", a->name);

		rc = add_link_through(b, base, etc, a->path, err);
		if (!rc)
			rc = add_link_through(b, base, a->link, etc, err);
		free(etc);
		eb_buf_init(&admin, 0);
		(void)eb_buf_addf(&admin, "auto\n%s\n", a->link);
		for (size_t s = 0; s < a->nslaves; s++)
			if (have_path(pkgs, n, a->slaves[3 * s + 2]))
				(void)eb_buf_addf(&admin, "%s\n%s\n", a->slaves[3 * s],
						  a->slaves[3 * s + 1]);
		(void)eb_buf_addf(&admin, "\n%s\n%ld\n", a->path, a->prio);
		for (size_t s = 0; rc == 0 && s < a->nslaves; s++) {
			if (!have_path(pkgs, n, a->slaves[3 * s + 2]))
				continue; /* update-alternatives skips a missing slave */
			char *se = eb_xasprintf("/etc/alternatives/%s", a->slaves[3 * s]);
			rc = add_link_through(b, base, se, a->slaves[3 * s + 2], err);
			if (!rc)
				rc = add_link_through(b, base, a->slaves[3 * s + 1], se, err);
			(void)eb_buf_addf(&admin, "%s\n", a->slaves[3 * s + 2]);
			free(se);
		}
		(void)eb_buf_adds(&admin, "\n");
		if (!rc) {
			char *dest = eb_xasprintf("var/lib/dpkg/alternatives/%s", a->name);
			rc = eb_layer_add_bytes(b, dest, admin.ptr, admin.len, 0644, err);
			free(dest);
		}
		eb_buf_release(&admin);
		if (rc < 0)
			goto done;
		report->alternatives = eb_xreallocarray(report->alternatives,
							report->nalternatives + 1, sizeof(char *));
		report->alternatives[report->nalternatives++] =
			eb_xasprintf("%s -> %s", a->link, a->path);
	}
	rc = eb_layer_add_bytes(b, "var/lib/dpkg/status", status.ptr, status.len, 0644, err);
done:
	for (size_t i = 0; i < n; i++)
		pkg_release(&pkgs[i]);
	free(pkgs);
	free(todo);
	pthread_mutex_destroy(&mem.mu);
	for (size_t i = 0; i < nalts; i++)
		alt_free(&alts[i]);
	free(alts);
	eb_buf_release(&status);
	return rc;
}
