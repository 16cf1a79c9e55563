/*
 * reqfile.h - pip requirements files: read a file and everything it
 * includes with -r / -c, then apply the pin rules to the whole set.
 *
 * Reading follows pip's req/req_file.py: decoding (UTF-8, with or without
 * BOM; UTF-16 with a BOM), "\" continuations (a joined line is reported at
 * its first physical line; a comment line ends a continuation), comments
 * ("#" at the start or after whitespace), ${VAR} expansion (only that form,
 * [A-Z0-9_]+, from the environment, only allowed names: see
 * eb_reqfile_load_in; an unset or empty variable stays as
 * written), the split between requirement and options, and the options pip
 * accepts in a file.  Includes are relative to the including file.
 *
 * Findings point at physical lines and byte columns of the files as the
 * user wrote them: a token on a continuation line is reported on that line.
 * Their `file` is the path given to eb_reqfile_load() for the top file and
 * that path's directory joined with the include's path for included files.
 *
 * Ownership: struct eb_reqfile owns its entries, strings and file list;
 * eb_reqfile_free() releases it all.  Entry and file pointers returned by
 * the accessors stay valid until then.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_REQFILE_H
#define EB_PIN_REQFILE_H

#include <stddef.h>
#include "pin/requirement.h"
#include "util/diag.h"
#include "util/error.h"

struct eb_reqfile; /* opaque */

/* One requirement line (or -e line) of any file read. */
struct eb_reqfile_entry {
	/* Name, normalised name, extras, specifiers, url, marker and --hash
	 * values: see struct eb_requirement; eb_requirement_pinned_version()
	 * gives the version. */
	struct eb_requirement req;
	const char *file;  /* the file it is in, as reported (owned by the reqfile) */
	unsigned line;     /* first physical line of the (joined) line */
	unsigned col;      /* byte column where the requirement starts */
	int constraint;    /* read from a -c file: limits versions, installs nothing */
	char **config_settings; /* --config-settings KEY=VAL values (owned) */
	size_t nconfig_settings;
};

struct eb_reqfile_strlist {
	char **items; /* (owned) */
	size_t n, cap;
};

/* File-wide options, merged over every file read as pip does (the last
 * -i wins; lists accumulate in reading order). */
struct eb_reqfile_options {
	char *index_url; /* -i / --index-url, or NULL (owned) */
	struct eb_reqfile_strlist extra_index_urls;
	struct eb_reqfile_strlist find_links;
	struct eb_reqfile_strlist trusted_hosts;
	struct eb_reqfile_strlist no_binary;    /* raw values: ":all:", "a,b" */
	struct eb_reqfile_strlist only_binary;
	struct eb_reqfile_strlist all_releases;
	struct eb_reqfile_strlist only_final;
	struct eb_reqfile_strlist features;     /* --use-feature */
	int no_index;
	int pre;
	int prefer_binary;
	int require_hashes;
	int no_require_hashes;
};

/* Load path and its includes.  Problems inside files (decoding, syntax,
 * options, includes, constraints entries) become findings (EB200, EB212,
 * EB213, EB214, EB216); err is set only when `path` itself cannot be read
 * (or is not a regular file inside the project), and then *out is NULL.
 * "-" reads standard input.  A pylock.toml (PEP 751) is read by
 * eb_pylock_load(): one NAME==VERSION entry with its file hashes per
 * package.
 *
 * Confinement: every file read must be a regular file whose real path is
 * inside `root` (an include that is not: EB009).  A file not named like a
 * requirements file, or none of whose lines could be read, is never
 * quoted: its findings become one EB218 finding.
 *
 * ${VAR}: expanded only for names listed in the runner's environment
 * variable ENVBUILD_REQUIREMENTS_ENV (comma or space separated) and, when
 * use_spec_env, also in spec_env (the spec's requirements_env); never in
 * a URL's host (EB219); every expanded value reads as ${NAME} in findings.
 *
 * eb_reqfile_load() is for a file named on the command line: root is the
 * current directory when the file is inside it, else the file's directory,
 * and only the runner's list applies. */
int eb_reqfile_load_in(struct eb_reqfile **out, const char *path, const char *root,
		       const char *const *spec_env, size_t nspec_env, int use_spec_env,
		       struct eb_diag_list *diags, struct eb_error **err);
int eb_reqfile_load(struct eb_reqfile **out, const char *path, struct eb_diag_list *diags,
		    struct eb_error **err);
/* Apply the pin rules (EB201-EB211, EB215, EB217) to every requirement;
 * entries from constraints files are not installed, so they only take part
 * in EB209 (same package pinned to two versions). */
void eb_reqfile_check(const struct eb_reqfile *rf, struct eb_diag_list *diags);
/* For readers of other formats (pylock.toml, see lockfiles.h): an empty
 * set, and an entry appended to it (req is moved into the set and left
 * empty; file is copied). */
struct eb_reqfile *eb_reqfile_new(void);
void eb_reqfile_add(struct eb_reqfile *rf, struct eb_requirement *req, const char *file,
		    unsigned line, unsigned col);
void eb_reqfile_free(struct eb_reqfile *rf);

/* Entries in reading order (an include's entries where the -r line is). */
size_t eb_reqfile_count(const struct eb_reqfile *rf);
const struct eb_reqfile_entry *eb_reqfile_get(const struct eb_reqfile *rf, size_t i);
/* Every file read, the top file first, as reported in findings. */
size_t eb_reqfile_nfiles(const struct eb_reqfile *rf);
const char *eb_reqfile_file(const struct eb_reqfile *rf, size_t i);
const struct eb_reqfile_options *eb_reqfile_options(const struct eb_reqfile *rf);

#endif
