/*
 * version.h - PEP 440 versions and version specifiers.
 *
 * Parsing accepts every form PEP 440 normalises (case, "alpha"/"c"/"pre",
 * "1.0-1", "rev", leading "v", implicit numbers, "-"/"_" in local labels,
 * surrounding whitespace) and rejects anything else.  Comparison follows the
 * spec's total order: epoch, release (zero-padded), dev < pre < final < post,
 * then local labels (a version with a local label sorts above the same public
 * version).
 *
 * Ownership: eb_version and eb_specifier_set own their arrays and strings;
 * release them with the matching _release function.  Strings returned by
 * eb_version_to_string are the caller's (free()).
 *
 * Errors: parse functions return 0 or a negative code and set *err with
 * code EB_EINVALID and `col` = 1-based column inside the given string (file
 * NULL, line 0), so a caller parsing a larger line adds its own offset.
 *
 * Layering (ground floor): pin/ may use ref/ and util/ only: parsers and
 * pin rules, never the spec, the lock or the network (the whole-project
 * check is stage/check.h).
 */
#ifndef EB_PIN_VERSION_H
#define EB_PIN_VERSION_H

#include <stddef.h>
#include "util/error.h"

enum eb_pre_kind { EB_PRE_NONE = 0, EB_PRE_A, EB_PRE_B, EB_PRE_RC };

struct eb_version {
	unsigned long epoch;
	unsigned long *release; /* at least one component (owned) */
	size_t nrelease;
	enum eb_pre_kind pre;
	unsigned long pre_n;
	int has_post;
	unsigned long post;
	int has_dev;
	unsigned long dev;
	char *local; /* normalised local label without '+', or NULL (owned) */
};

int eb_version_parse(struct eb_version *out, const char *s, size_t len, struct eb_error **err);
void eb_version_release(struct eb_version *v);
/* <0, 0, >0 like strcmp, by PEP 440 ordering (local labels included). */
int eb_version_cmp(const struct eb_version *a, const struct eb_version *b);
/* Normalised form, e.g. "1!2.0rc1.post2.dev3+abc.1"; caller frees. */
char *eb_version_to_string(const struct eb_version *v);
int eb_version_is_prerelease(const struct eb_version *v); /* pre or dev */

enum eb_op {
	EB_OP_EQ,        /* == */
	EB_OP_NE,        /* != */
	EB_OP_LT,        /* <  */
	EB_OP_LE,        /* <= */
	EB_OP_GT,        /* >  */
	EB_OP_GE,        /* >= */
	EB_OP_COMPAT,    /* ~= */
	EB_OP_ARBITRARY, /* === */
};

struct eb_specifier {
	enum eb_op op;
	int wildcard;               /* "==1.*" / "!=1.*" */
	struct eb_version version;  /* unset (nrelease == 0) for EB_OP_ARBITRARY */
	char *raw;                  /* version text as written, trimmed (owned) */
	unsigned col;               /* 1-based column of the operator in the parsed string */
};

struct eb_specifier_set {
	struct eb_specifier *items;
	size_t n, cap;
};

#define EB_SPECIFIER_SET_INIT { NULL, 0, 0 }

/* Parse "==1.0,>=0.9" (comma separated, whitespace allowed, trailing comma
 * allowed, empty string = empty set).  Enforces PEP 440's rules: ".*" only
 * with == and !=, not after dev or local segments; local labels only with ==,
 * != and ===; "~=" needs two release components. */
int eb_specifier_set_parse(struct eb_specifier_set *out, const char *s, size_t len,
			   struct eb_error **err);
void eb_specifier_set_release(struct eb_specifier_set *set);
/* Does v satisfy one specifier / every specifier of the set?  A public "=="
 * ignores v's local label; "===" compares strings case-insensitively
 * (raw_version is the candidate's text as written). */
int eb_specifier_contains(const struct eb_specifier *sp, const struct eb_version *v,
			  const char *raw_version);
int eb_specifier_set_contains(const struct eb_specifier_set *set, const struct eb_version *v,
			      const char *raw_version);
const char *eb_op_str(enum eb_op op);

/* Added after the first contract: */

/* Deep copy of src into dst (dst is overwritten, not released first). */
void eb_version_copy(struct eb_version *dst, const struct eb_version *src);
/* "==1.0,>=0.9": each operator and version as written, in order; caller
 * frees.  An empty set gives "". */
char *eb_specifier_set_to_string(const struct eb_specifier_set *set);
/* 1 when a specifier names a pre-release (">=2.0b1"), which by PEP 440
 * means the user asked for pre-releases; "!=", "===" and ".*" never do. */
int eb_specifier_set_allows_prereleases(const struct eb_specifier_set *set);

#endif
