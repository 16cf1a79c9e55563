/*
 * packages.h - a Packages index (one paragraph per binary package) or a
 * dpkg status database, loaded into a table searchable by name.
 *
 * Packages entries must carry Package, Version, Architecture, Filename,
 * Size and SHA256; status entries Package and Status.  Relationship fields
 * are kept as text (parse them with debian/depends.h when needed).
 * eb_debian_decompress() turns Packages.xz/.gz (or plain) into text with
 * libarchive's raw format, bounded by a size cap.
 *
 * Uses util/, debian/control, debian/version and libarchive.  Ownership:
 * eb_debindex owns its entries and their strings (release with
 * eb_debindex_release); lookups return borrowed pointers.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_PACKAGES_H
#define EB_DEBIAN_PACKAGES_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

struct eb_debpkg {
	char *name, *version, *arch;  /* owned */
	char *filename;               /* pool path (Packages) or NULL (owned) */
	char *sha256;                 /* 64 hex, or NULL in a status file (owned) */
	uint64_t size;
	char *multi_arch;             /* "same", "foreign", "allowed" or NULL (owned) */
	char *depends, *pre_depends;  /* owned, may be NULL */
	char *provides, *conflicts, *breaks; /* owned, may be NULL */
	char *status;                 /* status files only (owned) */
	char *source;                 /* index it came from, for messages (borrowed) */
	unsigned line;
};

struct eb_debindex {
	struct eb_debpkg *pkgs; /* owned; sorted by name after eb_debindex_sort */
	size_t n, cap;
	char **sources;         /* owned names the entries' `source` point to */
	size_t nsources;
};

#define EB_DEBINDEX_INIT { NULL, 0, 0, NULL, 0 }

enum eb_debindex_kind { EB_DEBINDEX_PACKAGES, EB_DEBINDEX_STATUS };

/* Append every paragraph of `data` (text) to idx.  `file` names the index
 * in errors. */
int eb_debindex_add(struct eb_debindex *idx, const char *data, size_t len, const char *file,
		    enum eb_debindex_kind kind, struct eb_error **err);
/* Sort by name, then architecture, then version (newest first). */
void eb_debindex_sort(struct eb_debindex *idx);
/* After sorting: the first entry named `name`, and how many follow with
 * that name (*n), or NULL. */
const struct eb_debpkg *eb_debindex_lookup(const struct eb_debindex *idx, const char *name,
					   size_t *n);
/* After sorting: the entry name/arch/version ("arch" NULL = any); NULL if none. */
const struct eb_debpkg *eb_debindex_find(const struct eb_debindex *idx, const char *name,
					 const char *arch, const char *version);
/* 1 when a status entry is "install ok installed". */
int eb_debpkg_installed(const struct eb_debpkg *p);
void eb_debindex_release(struct eb_debindex *idx);

/* Decompress xz, gzip, bzip2, zstd or plain data into *out (initialised by
 * the function), at most `max` bytes of output. */
int eb_debian_decompress(struct eb_buf *out, const void *data, size_t len, size_t max,
			 struct eb_error **err);

#endif
