/*
 * requirement.h - one requirement as pip reads it (a requirements-file line
 * or a `pip install` argument), and envbuild's pin rules for it.
 *
 * A requirement is PEP 508 (`name[extras] specifiers ; marker` or
 * `name[extras] @ url ; marker`) plus pip's extensions: a bare archive URL,
 * a path to an archive or a directory, a bare VCS URL, and editables.  The
 * parser is lexical: it never looks at the file system, because pip resolves
 * paths against its working directory, which a checker cannot know.  A path
 * with an archive extension is a local file, any other path is a local
 * directory.
 *
 * Columns (name_col, url_col, marker_col, the specifiers' col and the
 * hashes' col) are 1-based and relative to the text given to the parser, so
 * a caller that parsed a slice of a line adds the slice's offset.
 *
 * Ownership: struct eb_requirement owns every string, array, specifier set
 * and marker in it; eb_requirement_release() frees them and leaves the
 * struct empty.  Parse functions fill *out completely; on failure *out is
 * left empty (releasing it is harmless).
 *
 * Errors: parse functions return 0 or -EB_EINVALID with *err set (file NULL,
 * line 0, col = 1-based column inside the parsed text) and sometimes a hint.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_REQUIREMENT_H
#define EB_PIN_REQUIREMENT_H

#include <stddef.h>
#include "pin/marker.h"
#include "pin/version.h"
#include "util/diag.h"
#include "util/error.h"

enum eb_req_kind {
	EB_REQ_NAMED, /* name[extras] specifiers: resolved through an index */
	EB_REQ_URL,   /* archive URL: `name @ https://...` or a bare URL */
	EB_REQ_PATH,  /* local archive: path or file: URL to a .whl, .tar.gz, ... */
	EB_REQ_DIR,   /* local directory (a project to build): ".", "./src", file:///x/ */
	EB_REQ_VCS,   /* git+ hg+ svn+ bzr+ URL, named or not */
};

/* A --hash value as written: "sha256:<hex>".  algo and hex are the parts
 * around the first ':' (NULL when there is no ':').  Validity (allowed
 * algorithm, lower-case hex of the right length) is checked by
 * eb_requirement_hash_problem(), not when the hash is added. */
struct eb_req_hash {
	char *raw;    /* (owned) */
	char *algo;   /* (owned) or NULL */
	char *hex;    /* (owned) or NULL */
	unsigned col; /* 1-based, same origin as the requirement's columns */
};

struct eb_requirement {
	enum eb_req_kind kind;
	int editable;    /* read from -e / --editable */
	char *text;      /* the requirement as written, trimmed (owned) */
	char *name;      /* as written, or derived from a wheel filename or
			  * #egg=; NULL for an unnamed URL, path or directory */
	char *norm_name; /* PEP 503 normalised name, or NULL (owned) */
	char **extras;   /* PEP 685 normalised extras (owned) */
	size_t nextras;
	/* Version clauses.  For a bare wheel URL or path pip reads
	 * `name==version` from the filename, and so do we: specs then holds
	 * that one "==" clause, with its col at url_col. */
	struct eb_specifier_set specs;
	char *url;           /* URL or path as written (no extras), or NULL */
	char *url_hash_algo; /* from a "#sha256=<hex>" fragment, or NULL */
	char *url_hash_hex;
	char *wheel_version; /* version from a .whl filename in url, or NULL */
	struct eb_marker *marker; /* or NULL (owned) */
	char *marker_text;        /* marker as written, trimmed, or NULL */
	struct eb_req_hash *hashes; /* --hash options, see eb_requirement_add_hash */
	size_t nhashes, hashes_cap;
	unsigned name_col;   /* 0 when unnamed or the name is derived */
	unsigned url_col;    /* 0 without url */
	unsigned marker_col; /* 0 without marker */
};

/* Validate a project name (PEP 508 / PyPUG name rules):
 * ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$, case-insensitive. */
int eb_pep503_valid(const char *name, size_t len);
/* re.sub(r"[-_.]+", "-", name).lower(); caller frees. */
char *eb_pep503_normalize(const char *name, size_t len);

/* Parse one requirement the way pip reads a requirements-file line (after
 * its options are split off) or a `pip install` argument.
 *
 * The marker is split off as pip does (req/constructors.py): at the first
 * "; " when the text starts with a URL, at the first ";" otherwise.  So,
 * like pip and unlike strict PEP 508, `foo @ https://h/foo.whl;python_version>"3"`
 * is accepted, with the marker `python_version>"3"`; a bare URL needs the
 * space (`https://h/x.whl;a` is all URL). */
int eb_requirement_parse(struct eb_requirement *out, const char *s, size_t len,
			 struct eb_error **err);
/* Parse the value of -e / --editable: a local directory (optionally with
 * "[extras]") or a VCS URL (`#egg=name` names it).  Sets editable. */
int eb_requirement_parse_editable(struct eb_requirement *out, const char *s, size_t len,
				  struct eb_error **err);
void eb_requirement_release(struct eb_requirement *r);

/* Attach a --hash value (text after "--hash="); never fails. */
void eb_requirement_add_hash(struct eb_requirement *r, const char *s, size_t len, unsigned col);
/* NULL when the hash is usable (sha256, sha384 or sha512 with lower-case hex
 * of the right length), else a static one-line reason. */
const char *eb_requirement_hash_problem(const struct eb_req_hash *h);
/* 1 when the requirement carries at least one usable hash: a --hash or a
 * "#sha256=" (sha384, sha512) URL fragment. */
int eb_requirement_is_hashed(const struct eb_requirement *r);
/* 1 when at least one --hash option was given, usable or not (pip's switch
 * into hash-checking mode; a URL fragment does not switch it on). */
int eb_requirement_has_hash_option(const struct eb_requirement *r);

/* The version this requirement installs when it is pinned: the raw version
 * of its single "==" (not a wildcard) or "===" clause, else the version of
 * the wheel its URL or path names, else NULL.  Points into r. */
const char *eb_requirement_pinned_version(const struct eb_requirement *r);

/* What "pinned" means (python-packaging.md §2, envbuild's rule): exactly one
 * clause, "==V" without ".*" (a local label is fine) or "===V"; a URL or a
 * local wheel counts only with a usable hash; editables, VCS and directories
 * never count.  More than one clause is EB_PIN_MULTIPLE when one of them is
 * an exact pin, else EB_PIN_RANGE. */
enum eb_pin_status {
	EB_PIN_PINNED = 0,
	EB_PIN_BARE,         /* EB201: no version clause */
	EB_PIN_RANGE,        /* EB202: >=, ~=, <, !=, ... */
	EB_PIN_WILDCARD,     /* EB203: ==1.* */
	EB_PIN_MULTIPLE,     /* EB204: ==1.0,>=0.9 */
	EB_PIN_EDITABLE,     /* EB205 */
	EB_PIN_VCS,          /* EB206 */
	EB_PIN_LOCAL,        /* EB207: directory, or local file not a hashed wheel */
	EB_PIN_URL_UNHASHED, /* EB208 */
};

enum eb_pin_status eb_requirement_pin_status(const struct eb_requirement *r);

/* Add the findings for one requirement: EB201-EB208 by pin status, EB210
 * for each unusable hash (also a bad "#sha256=" fragment), EB215 (warning)
 * for "===", EB217 (warning) for a marker on platform_release or
 * platform_version.  Findings go to file:line, at column col_offset + the
 * requirement's own column.  The marker is not evaluated: a requirement
 * whose marker is false on the target is checked all the same. */
void eb_requirement_check_pin(const struct eb_requirement *r, const char *file, unsigned line,
			      unsigned col_offset, struct eb_diag_list *diags);

/* The text with "user:password@" in URLs replaced by "****@", for messages
 * (requirements files often carry ${TOKEN}s); caller frees. */
char *eb_requirement_redact(const char *text);

#endif
