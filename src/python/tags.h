/*
 * tags.h - wheel filenames, the platform tags a target Python supports, and
 * the choice of one file among the files an index lists for a pinned
 * version.
 *
 * Wheel filenames follow the binary distribution format:
 * {name}-{ver}(-{build})?-{py}-{abi}-{plat}.whl, parsed the way
 * packaging.utils.parse_wheel_filename (26.3) does, compressed tag sets
 * ("py2.py3-none-any") expanded to the cross product.
 *
 * The supported tags of a target are listed in packaging.tags' order for
 * CPython (cpython_tags() then compatible_tags()): the ABI group is the outer
 * loop and the platform the inner one, so every cp311-cp311-<P> comes before
 * any cp311-abi3-<P>.  Platforms for glibc X.Y are manylinux_X_Y down to the
 * architecture's floor (2.5 on x86_64 and i686, 2.17 elsewhere) with the
 * legacy aliases right after their equal (PEP 600); for musl X.Y they are
 * musllinux_X_Y down to musllinux_X_0 (PEP 656).  One deliberate difference
 * from packaging 26.3: linux_<arch> is the LAST platform, after every
 * manylinux/musllinux tag, as uv ranks it, because a linux_* wheel is built
 * for one machine and only meant as a last resort.  For cp311 on glibc 2.36
 * x86_64 this gives 36 platforms and 914 tags (python-packaging.md §5).
 *
 * Ownership: struct eb_tag, eb_wheel_filename and eb_tag_list own every
 * string and array in them and are freed with their _release function.
 * struct eb_dist_file is the caller's description of an index file; its
 * strings are borrowed and never freed here.  Pointers in struct
 * eb_wheel_choice point into the caller's files.
 *
 * Errors: fallible functions return 0 or a negative enum eb_code and set
 * *err once.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_TAGS_H
#define EB_PYTHON_TAGS_H

#include <stddef.h>
#include <stdint.h>

#include "pin/requirement.h"
#include "pin/version.h"
#include "util/error.h"

/* Most tags a wheel filename may expand to: a filename comes from an index
 * and is not trusted, and real wheels carry a handful. */
#define EB_TAGS_MAX_WHEEL_TAGS 256

/* One tag, always lower case. */
struct eb_tag {
	char *interpreter; /* "cp311", "py3" (owned) */
	char *abi;         /* "cp311", "abi3", "none" (owned) */
	char *platform;    /* "manylinux_2_17_x86_64", "any" (owned) */
};

/* "cp311-abi3-manylinux_2_17_x86_64"; caller frees. */
char *eb_tag_to_string(const struct eb_tag *t);

/* ---- wheel filenames ----------------------------------------------------- */

struct eb_wheel_filename {
	char *name;      /* distribution part as written: "Foo_Bar" (owned) */
	char *norm_name; /* PEP 503 normalised: "foo-bar" (owned) */
	char *version_str; /* version part as written (owned) */
	struct eb_version version;
	char *build;     /* build tag as written ("1", "2b"), or NULL (owned) */
	struct eb_tag *tags; /* expanded tag set, duplicates removed, in
			      * filename order (owned) */
	size_t ntags;
};

/* Parse a wheel filename (a basename: no '/').  Fails with EB_EINVALID:
 * not ".whl", not 4 or 5 dashes, a name outside [A-Za-z0-9._] or with "__",
 * an invalid PEP 440 version, a build tag not starting with a digit, an
 * empty or non-alphanumeric tag component, an interpreter tag that does not
 * start with a letter, or more than EB_TAGS_MAX_WHEEL_TAGS expanded tags.
 * On failure *out is left empty. */
int eb_wheel_filename_parse(struct eb_wheel_filename *out, const char *filename,
			    struct eb_error **err);
void eb_wheel_filename_release(struct eb_wheel_filename *w);
/* Order build tags as packaging does, (int(digits), rest) with no build tag
 * lowest: NULL < "1" < "1a" < "2" < "10".  <0, 0, >0 like strcmp. */
int eb_wheel_build_cmp(const char *a, const char *b);
/* 1 when filename ends in ".whl" (anything else is an sdist or a format
 * envbuild does not install). */
int eb_tags_is_wheel_filename(const char *filename);

/* ---- targets and their tag lists --------------------------------------- */

enum eb_tags_libc { EB_TAGS_GLIBC = 0, EB_TAGS_MUSL = 1 };

struct eb_tag_target {
	unsigned py_major, py_minor; /* 3, 11 */
	/* Version requires-python is checked against: "3.11.4", or "3.11"
	 * (which PEP 440 reads as 3.11.0, as pip's --python-version does). */
	char python_full[32];
	int free_threaded;           /* cp313t: ABI cp3Xt and abi3t, no abi3 */
	char arch[16];               /* "x86_64", "aarch64", ... */
	enum eb_tags_libc libc;
	unsigned libc_major, libc_minor; /* glibc 2.36, musl 1.2 */
};

/* Docker platform to the machine name in platform tags: linux/amd64 ->
 * x86_64, linux/arm64[/v8] -> aarch64, linux/arm[/v7] -> armv7l, linux/386
 * -> i686, linux/ppc64le, linux/s390x, linux/riscv64.  A machine name
 * ("x86_64") is returned as is.  NULL when envbuild has no wheels for it.
 * The result is a static string. */
const char *eb_tags_platform_arch(const char *platform);

/* Fill a target from strings: python_version "3.11", "3.11.4" or "3.13t"
 * (free-threaded), CPython 3 only; platform as for eb_tags_platform_arch;
 * libc "glibc 2.36" or "musl 1.2".  EB_EINVALID on anything else. */
int eb_tag_target_parse(struct eb_tag_target *out, const char *python_version,
			const char *platform, const char *libc, struct eb_error **err);

/* A target's supported tags, best first.  items[0] is the most preferred;
 * a tag's rank is its index. */
struct eb_tag_list {
	struct eb_tag_target target;
	struct eb_tag *items;  /* (owned) */
	size_t n;
	size_t nplatforms;     /* platforms per ABI group, linux_<arch> last */
	/* Private: pointers into items sorted by name, for lookup; a tag's
	 * rank is its pointer minus items. */
	const struct eb_tag **sorted;
};

/* Build the list for t (copied).  EB_EINVALID when t is not a target
 * envbuild supports (not CPython 3, glibc major not 2, unknown arch). */
int eb_tag_list_build(struct eb_tag_list *out, const struct eb_tag_target *t,
		      struct eb_error **err);
void eb_tag_list_release(struct eb_tag_list *l);
/* Rank of one tag (lower case parts), or -1 when the target does not
 * support it. */
int eb_tag_list_rank(const struct eb_tag_list *l, const char *interpreter, const char *abi,
		     const char *platform);
/* Rank of a tag written "py-abi-plat", in any case; a compressed set ranks
 * by its best member.  -1 when unsupported or malformed. */
int eb_tag_list_rank_str(const struct eb_tag_list *l, const char *tag);
/* Rank of a wheel: the best rank of its tags, or -1 when none fits. */
int eb_tag_list_wheel_rank(const struct eb_tag_list *l, const struct eb_wheel_filename *w);
/* "cp311 manylinux_2_36_x86_64": the target's ABI and best platform, for
 * messages.  Points into l. */
const char *eb_tag_list_abi(const struct eb_tag_list *l);
const char *eb_tag_list_best_platform(const struct eb_tag_list *l);

/* ---- choosing the file to install --------------------------------------- */

/* A hash the index lists for a file ("sha256" -> hex). */
struct eb_file_hash {
	const char *algo;
	const char *hex;
};

/* One file of a project version as an index lists it (PEP 503/691).  All
 * borrowed. */
struct eb_dist_file {
	const char *filename;
	const char *url;
	const struct eb_file_hash *hashes;
	size_t nhashes;
	const char *requires_python; /* NULL or "" when none */
	int yanked;
	const char *yanked_reason;   /* NULL or "" when none was given */
	int64_t size;                /* bytes, or -1 when the index does not say
				      * (informational: not used to choose) */
};

/* How far the files got: on failure the furthest stage any file reached
 * says why nothing qualified. */
enum eb_wheel_miss {
	EB_WHEEL_OK = 0,
	EB_WHEEL_NO_FILES,        /* the index lists no file for the version */
	EB_WHEEL_NO_COMPATIBLE,   /* sdists, other projects, or wheels whose
				   * tags the target does not support */
	EB_WHEEL_REQUIRES_PYTHON, /* compatible wheels, requires-python excludes
				   * the target */
	EB_WHEEL_HASH,            /* the index lists other hashes than the
				   * requirement's --hash values */
	EB_WHEEL_YANKED,          /* only yanked wheels, and not an exact pin */
};

struct eb_wheel_choice {
	size_t index;        /* chosen file: files[index] */
	int rank;            /* its tag rank */
	/* 1 when the chosen file is yanked: allowed because the requirement is
	 * an exact pin (PEP 592), and the caller SHOULD warn. */
	int yanked;
	const char *yanked_reason; /* borrowed from the file, or NULL */
	/* In hash-checking mode: 1 when the index lists one of the allowed
	 * hashes for the file; 0 when the index lists no comparable hash, so
	 * only the download can be checked.  0 outside hash mode. */
	int hash_matched;
	enum eb_wheel_miss miss; /* EB_WHEEL_OK, or why the call failed */
};

/* Choose the wheel to install among the files of one version of req's
 * project.  version is that version as listed (NULL: req's pinned version);
 * files of another project or version are ignored.
 *
 * A file qualifies when it is a wheel whose tags the target supports, whose
 * requires-python (when present and valid; an invalid one is ignored, as
 * pip does) contains the target python, which is not yanked unless req is
 * an exact pin (==V or ===V), and, when req carries --hash values, whose
 * index hashes do not contradict them.  Among those the best is chosen
 * by pip's key: a listed matching hash, then not yanked, then best tag
 * rank, then highest build tag, then index order.
 *
 * Fails with EB_ENOTFOUND when nothing qualifies; out->miss says why and the
 * message names the target and lists what the index has (sdists included,
 * closest misses first, annotated with the reason, truncated after a few
 * names). */
int eb_tags_select(struct eb_wheel_choice *out, const struct eb_dist_file *files, size_t nfiles,
		   const struct eb_requirement *req, const char *version,
		   const struct eb_tag_list *tags, struct eb_error **err);

#endif
