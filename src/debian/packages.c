/*
 * packages.c - Packages indexes and dpkg status files (see packages.h).
 */
#include "config.h"

#include <archive.h>
#include <stdlib.h>
#include <string.h>

#include "debian/control.h"
#include "debian/depends.h"
#include "debian/packages.h"
#include "debian/version.h"
#include "util/alloc.h"

static void pkg_release(struct eb_debpkg *p)
{
	free(p->name);
	free(p->version);
	free(p->arch);
	free(p->filename);
	free(p->sha256);
	free(p->multi_arch);
	free(p->depends);
	free(p->pre_depends);
	free(p->provides);
	free(p->conflicts);
	free(p->breaks);
	free(p->status);
}

void eb_debindex_release(struct eb_debindex *idx)
{
	for (size_t i = 0; i < idx->n; i++)
		pkg_release(&idx->pkgs[i]);
	free(idx->pkgs);
	for (size_t i = 0; i < idx->nsources; i++)
		free(idx->sources[i]);
	free(idx->sources);
	memset(idx, 0, sizeof(*idx));
}

static char *dup_or_null(const char *s)
{
	return s ? eb_xstrdup(s) : NULL;
}

/* point an error from a field-value parser at the paragraph's line */
static void locate(struct eb_error **err, const char *file, unsigned line)
{
	if (!err || !*err || !file)
		return;
	(*err)->col = 0;
	eb_error_locate(err, file, line, 1);
}

static int hex64(const char *s)
{
	size_t i;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 64;
}

/* validate one relationship field so that later users can trust it parses */
static int check_rel(const struct eb_deb822_para *para, const char *field, int alts,
		     const char *file, struct eb_error **err)
{
	const struct eb_deb822_field *f = eb_deb822_field(para, field);
	struct eb_debdeps d;

	if (!f)
		return 0;
	if (eb_debdeps_parse(&d, f->value, alts, err) < 0) {
		locate(err, file, f->line);
		return eb_error_wrap(err, "%s", field);
	}
	eb_debdeps_release(&d);
	return 0;
}

static int entry(struct eb_debpkg *p, const struct eb_deb822_para *para, const char *file,
		 enum eb_debindex_kind kind, struct eb_error **err)
{
	const char *name = eb_deb822_get(para, "Package");
	const char *version = eb_deb822_get(para, "Version");
	const char *arch = eb_deb822_get(para, "Architecture");
	const char *status = eb_deb822_get(para, "Status");
	struct eb_debver v;

	memset(p, 0, sizeof(*p));
	p->line = para->line;
	if (!name || !eb_debian_name_valid(name, strlen(name)))
		return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
				       name ? "invalid package name '%s'" : "paragraph has no Package%s",
				       name ? name : "");
	if (kind == EB_DEBINDEX_STATUS) {
		if (!status)
			return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
					       "status entry '%s' has no Status", name);
		/* entries left by removed packages (config-files, not-installed)
		 * may lack Version and Architecture */
		if (!version)
			version = "";
		if (!arch)
			arch = "";
	} else {
		const char *missing = !version ? "Version" : !arch ? "Architecture" :
				      !eb_deb822_get(para, "Filename") ? "Filename" :
				      !eb_deb822_get(para, "Size") ? "Size" :
				      !eb_deb822_get(para, "SHA256") ? "SHA256" : NULL;
		if (missing)
			return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
					       "package '%s' has no %s", name, missing);
		const char *sha = eb_deb822_get(para, "SHA256");
		const char *size = eb_deb822_get(para, "Size");
		char *end;
		if (!hex64(sha))
			return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
					       "package '%s' has an invalid SHA256", name);
		if (size[0] < '0' || size[0] > '9')
			return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
					       "package '%s' has an invalid Size", name);
		p->size = strtoull(size, &end, 10);
		if (*end)
			return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
					       "package '%s' has an invalid Size", name);
		const char *fn = eb_deb822_get(para, "Filename");
		if (fn[0] == '/' || strstr(fn, "..") || strchr(fn, '?') || strchr(fn, '#'))
			return eb_error_set_at(err, EB_EINVALID, file, para->line, 1,
					       "package '%s' has an unsafe Filename", name);
		p->filename = eb_xstrdup(fn);
		p->sha256 = eb_xstrdup(sha);
	}
	if (*version && eb_debver_parse(&v, version, err) < 0) {
		locate(err, file, para->line);
		return eb_error_wrap(err, "package '%s'", name);
	}
	if (*version)
		eb_debver_release(&v);
	if (check_rel(para, "Depends", 1, file, err) < 0 ||
	    check_rel(para, "Pre-Depends", 1, file, err) < 0 ||
	    check_rel(para, "Provides", 0, file, err) < 0 ||
	    check_rel(para, "Conflicts", 0, file, err) < 0 ||
	    check_rel(para, "Breaks", 0, file, err) < 0)
		return -EB_EINVALID;
	p->name = eb_xstrdup(name);
	p->version = eb_xstrdup(version);
	p->arch = eb_xstrdup(arch);
	p->multi_arch = dup_or_null(eb_deb822_get(para, "Multi-Arch"));
	p->depends = dup_or_null(eb_deb822_get(para, "Depends"));
	p->pre_depends = dup_or_null(eb_deb822_get(para, "Pre-Depends"));
	p->provides = dup_or_null(eb_deb822_get(para, "Provides"));
	p->conflicts = dup_or_null(eb_deb822_get(para, "Conflicts"));
	p->breaks = dup_or_null(eb_deb822_get(para, "Breaks"));
	p->status = dup_or_null(status);
	return 0;
}

int eb_debindex_add(struct eb_debindex *idx, const char *data, size_t len, const char *file,
		    enum eb_debindex_kind kind, struct eb_error **err)
{
	struct eb_deb822 rd;
	struct eb_deb822_para para = EB_DEB822_PARA_INIT;
	char *src = eb_xstrdup(file ? file : "Packages");
	int rc;

	idx->sources = eb_xreallocarray(idx->sources, idx->nsources + 1, sizeof(char *));
	idx->sources[idx->nsources++] = src;
	eb_deb822_init(&rd, data, len, file);
	while ((rc = eb_deb822_next(&rd, &para, err)) > 0) {
		EB_ALLOC_GROW(idx->pkgs, idx->n + 1, idx->cap);
		if ((rc = entry(&idx->pkgs[idx->n], &para, file, kind, err)) < 0) {
			pkg_release(&idx->pkgs[idx->n]);
			break;
		}
		idx->pkgs[idx->n].source = src;
		idx->n++;
	}
	eb_deb822_para_release(&para);
	return rc < 0 ? rc : 0;
}

static int pkg_cmp(const void *a, const void *b)
{
	const struct eb_debpkg *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	if (r)
		return r;
	r = strcmp(x->arch, y->arch);
	if (r)
		return r;
	return -eb_debver_cmp_str(x->version, y->version);
}

void eb_debindex_sort(struct eb_debindex *idx)
{
	if (idx->n)
		eb_sort(idx->pkgs, idx->n, sizeof(*idx->pkgs), pkg_cmp);
}

const struct eb_debpkg *eb_debindex_lookup(const struct eb_debindex *idx, const char *name,
					   size_t *n)
{
	size_t lo = 0, hi = idx->n, first, last;

	*n = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(idx->pkgs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	for (last = first; last < idx->n && !strcmp(idx->pkgs[last].name, name); last++)
		;
	*n = last - first;
	return *n ? &idx->pkgs[first] : NULL;
}

const struct eb_debpkg *eb_debindex_find(const struct eb_debindex *idx, const char *name,
					 const char *arch, const char *version)
{
	size_t n;
	const struct eb_debpkg *p = eb_debindex_lookup(idx, name, &n);

	for (size_t i = 0; i < n; i++)
		if ((!arch || !strcmp(p[i].arch, arch)) &&
		    (!version || !strcmp(p[i].version, version)))
			return &p[i];
	return NULL;
}

int eb_debpkg_installed(const struct eb_debpkg *p)
{
	return p->status && !strcmp(p->status, "install ok installed");
}

int eb_debian_decompress(struct eb_buf *out, const void *data, size_t len, size_t max,
			 struct eb_error **err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char chunk[65536];
	la_ssize_t n;
	int rc = 0;

	eb_buf_init(out, max);
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		/* libarchive's raw format refuses an empty input: that is an
		 * empty index */
		if (len == 0)
			goto done;
		rc = eb_error_set(err, EB_EINVALID, "cannot decompress index: %s",
				  archive_error_string(a) ? archive_error_string(a) : "unknown format");
		goto done;
	}
	while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0) {
		if (eb_buf_add(out, chunk, (size_t)n) < 0) {
			rc = eb_error_set(err, EB_ETOOBIG,
					  "decompressed index is larger than %zu bytes", max);
			goto done;
		}
	}
	if (n < 0)
		rc = eb_error_set(err, EB_EINVALID, "cannot decompress index: %s",
				  archive_error_string(a));
done:
	archive_read_free(a);
	if (rc < 0)
		eb_buf_release(out);
	return rc;
}
