/*
 * control.h - deb822 control paragraphs: the format of Debian's Packages
 * indexes, Release files, /var/lib/dpkg/status and a .deb's control file.
 *
 * A reader walks a buffer paragraph by paragraph ("Name: value" fields,
 * continuation lines that start with a space or tab, paragraphs separated
 * by blank lines, '#' comment lines skipped outside fields).  Values keep
 * continuation lines as the file has them (leading space included, trailing
 * whitespace removed), so a field written back as "Name: value\n" is
 * byte-for-byte what dpkg writes.
 *
 * Uses util/ only; never reads files itself and never allocates past the
 * caller's buffer size (the caller caps what it reads).
 *
 * Ownership: a paragraph owns its fields' names and values; release it with
 * eb_deb822_para_release().  The reader borrows the buffer, which must
 * outlive it.  Errors are EB_EINVALID pointing at file:line (file may be
 * NULL) of the offending line.
 *
 * Layering (service floor): debian/ may use envspec/, net/, oci/ and
 * util/; never registry/, python/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_DEBIAN_CONTROL_H
#define EB_DEBIAN_CONTROL_H

#include <stddef.h>

#include "util/error.h"

struct eb_deb822_field {
	char *name;    /* as written (owned) */
	char *value;   /* first line trimmed, then "\n" + continuation lines (owned) */
	unsigned line; /* 1-based line of "Name:" */
};

struct eb_deb822_para {
	struct eb_deb822_field *fields; /* in file order (owned) */
	size_t n, cap;
	unsigned line; /* 1-based line of the first field */
};

#define EB_DEB822_PARA_INIT { NULL, 0, 0, 0 }

struct eb_deb822 {
	const char *p, *end;
	const char *file; /* for errors; borrowed, may be NULL */
	unsigned line;    /* lines consumed so far */
};

void eb_deb822_init(struct eb_deb822 *r, const char *data, size_t len, const char *file);
/* Read the next paragraph into *out (released first).  Returns 1 when a
 * paragraph was read, 0 at the end of the buffer, or a negative code. */
int eb_deb822_next(struct eb_deb822 *r, struct eb_deb822_para *out, struct eb_error **err);
void eb_deb822_para_release(struct eb_deb822_para *p);
/* The value of field `name` (ASCII case-insensitive, as dpkg), or NULL. */
const char *eb_deb822_get(const struct eb_deb822_para *p, const char *name);
const struct eb_deb822_field *eb_deb822_field(const struct eb_deb822_para *p,
					      const char *name);

#endif
