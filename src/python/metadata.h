/*
 * metadata.h - the text files inside a wheel's .dist-info directory:
 * core metadata (METADATA / PKG-INFO), WHEEL and entry_points.txt.
 *
 * Core metadata and WHEEL are RFC 822 style headers (PyPUG core-metadata,
 * binary-distribution-format): "Name: value" lines, continuation lines
 * start with a space or a tab, header names are case-insensitive, and the
 * headers end at the first empty line (or at the first line that is not a
 * header, as Python's email parser does); what follows is the description
 * body, which is ignored.  entry_points.txt is INI (PyPUG entry-points):
 * case-sensitive, `=` the only delimiter, `#` and `;` full-line comments.
 *
 * Every parser takes a length and refuses input over its size cap
 * (EB_METADATA_MAX_* below) and input containing NUL bytes, so a hostile
 * wheel cannot make envbuild hold more than that in memory per file.
 *
 * Ownership: each struct owns every string, array, requirement and
 * specifier set in it; the matching _release function frees them and
 * leaves the struct empty (releasing an empty or failed struct is
 * harmless).  Parse functions fill *out completely; on failure *out is left
 * empty.
 *
 * Errors: -EB_EINVALID for malformed input, -EB_ETOOBIG past a cap; the
 * message names the field or line ("line 3: ...") inside the parsed text.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_METADATA_H
#define EB_PYTHON_METADATA_H

#include <stddef.h>

#include "pin/requirement.h"
#include "pin/version.h"
#include "util/error.h"

#define EB_METADATA_MAX_CORE (16u << 20)        /* METADATA, PKG-INFO */
#define EB_METADATA_MAX_WHEEL (64u << 10)       /* WHEEL */
#define EB_METADATA_MAX_ENTRY_POINTS (4u << 20) /* entry_points.txt */

/* ---- core metadata ------------------------------------------------------ */

/* At most this many Requires-Dist in one METADATA. */
#define EB_METADATA_MAX_REQUIRES 2000

struct eb_metadata {
	char *metadata_version; /* "2.1" as written (owned) */
	unsigned mv_major, mv_minor;
	char *name;      /* as written (owned) */
	char *norm_name; /* PEP 503 normalised (owned) */
	char *version;   /* as written (owned) */
	struct eb_version parsed_version; /* nrelease == 0 when version is not PEP 440 */
	char *requires_python;            /* as written, or NULL (owned) */
	struct eb_specifier_set requires_python_specs; /* parsed; empty when absent or invalid */
	/* Requires-Dist, in file order; each is a named PEP 508 requirement
	 * (name[extras] specifiers or name @ url) with its marker kept, e.g.
	 * `extra == "socks"`. */
	struct eb_requirement *requires_dist;
	size_t nrequires_dist;
	char **provides_extra; /* PEP 685 normalised, file order, no duplicates (owned) */
	/* The license as stated: License-Expression, else the first line of
	 * License, else the last part of a "License ::" classifier; NULL
	 * when none says (owned). */
	char *license;
	size_t nprovides_extra;
	/* Things a caller may want to tell the user ("metadata version '2.5'
	 * is newer than 2.4"); one line each (owned). */
	char **warnings;
	size_t nwarnings;
};

/* Parse METADATA / PKG-INFO (Metadata-Version 1.0 to 2.x).  Required:
 * Metadata-Version (major 1 or 2; a 2.x newer than 2.4 is a warning),
 * Name (a valid project name) and Version.  A Version that is not PEP 440,
 * or a Requires-Python that is not a specifier set, is kept as written
 * with a warning (old sdists made such files; pip installs them too).
 * A Requires-Dist that is not a named PEP 508 requirement is an error. */
int eb_metadata_parse(struct eb_metadata *out, const char *text, size_t len,
		      struct eb_error **err);
void eb_metadata_release(struct eb_metadata *m);
/* 1 when extra (any spelling) is listed in Provides-Extra. */
int eb_metadata_provides_extra(const struct eb_metadata *m, const char *extra);

/* ---- WHEEL ---------------------------------------------------------------- */

struct eb_wheel_meta {
	unsigned version_major, version_minor; /* Wheel-Version */
	int root_is_purelib;                   /* "Root-Is-Purelib: true" (any case) */
	char *generator;                       /* or NULL (owned) */
	char *build;                           /* or NULL (owned) */
	char **tags;                           /* "py3-none-any", file order (owned) */
	size_t ntags;
};

/* Parse WHEEL.  Wheel-Version ("1.0"; digits, optional further components
 * ignored) is required; Root-Is-Purelib defaults to false (platlib), as in
 * pip.  Version compatibility is the installer's decision, not checked
 * here. */
int eb_metadata_parse_wheel(struct eb_wheel_meta *out, const char *text, size_t len,
			    struct eb_error **err);
void eb_wheel_meta_release(struct eb_wheel_meta *w);

/* ---- entry_points.txt ----------------------------------------------------- */

struct eb_entry_point {
	char *name;   /* the script name (owned) */
	char *module; /* "pkg.cli" (owned) */
	char *attr;   /* "main" or "Cls.method" (owned) */
	char **extras; /* PEP 685 normalised (owned) */
	size_t nextras;
};

struct eb_entry_points {
	struct eb_entry_point *console; /* [console_scripts], file order */
	size_t nconsole;
	struct eb_entry_point *gui; /* [gui_scripts], file order */
	size_t ngui;
};

/* Parse entry_points.txt.  Only [console_scripts] and [gui_scripts] are
 * kept; other sections are checked for INI syntax only.  In the two kept
 * sections every value must be `module:attr [extras]` with dotted Python
 * identifiers (so a launcher generated from it cannot carry anything but a
 * name into Python source), and every name must be usable as a file name
 * in the scripts directory: not empty, no '/' or '\\', not starting with
 * '.', no control characters (pip _raise_for_invalid_entrypoint).  A name
 * given twice (in one section or across both) is an error: both would
 * write the same launcher. */
int eb_metadata_parse_entry_points(struct eb_entry_points *out, const char *text, size_t len,
				   struct eb_error **err);
void eb_entry_points_release(struct eb_entry_points *e);

#endif
