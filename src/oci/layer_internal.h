/*
 * layer_internal.h - what layer.c (tar stream, caches) shares with
 * layer_plan.c (builder, tree walk, eb_layer__prepare): the entry and builder
 * structs and the planning calls.  Not an API: only those two files
 * include it.
 *
 * Layering (core floor): oci/ may use ref/ and util/ only; it never
 * touches the network or Python packages.
 */
#ifndef EB_OCI_LAYER_INTERNAL_H
#define EB_OCI_LAYER_INTERNAL_H

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "oci/layer.h"
#include "util/digest.h"

/* What identifies a file's content without reading it, as git's index
 * does: if none of this changed, the content did not either (racy
 * entries aside, see fh_racy()). */
struct fstat_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
	uint32_t mode;
};

enum etype { T_FILE, T_DIR, T_SYMLINK, T_HARDLINK };

struct entry {
	char *path;          /* normalised, relative, no trailing '/' */
	enum etype type;
	unsigned mode;       /* permission bits as given or found */
	char *src;           /* T_FILE read from disk, or NULL */
	int nofollow;        /* src was lstat'ed in a walk: do not follow */
	int file_root;       /* src added as a single file: a file-hash root */
	int member;          /* content kept compressed in src (eb_layer_add_member) */
	int zmethod;         /* member: EB_INFLATE_STORED or EB_INFLATE_DEFLATE */
	uint64_t zoff, zsize; /* member: its range of src */
	unsigned char *data; /* T_FILE from memory (owned), or NULL */
	uint64_t size;       /* T_FILE: bytes expected */
	char *link;          /* T_SYMLINK target, T_HARDLINK target path */
	size_t seq;          /* add order: a later add of a path wins */
	int implicit;        /* a parent directory nobody added */
	int parentlike;      /* the directory a tree is copied into: kept as the base has it */
	int has_meta;        /* mode/owner taken from the base image (meta_*) */
	unsigned meta_mode;
	uint32_t meta_uid, meta_gid;
	int has_owner;       /* its own owner (eb_layer_set_last_owner), not o->uid/gid */
	uint32_t own_uid, own_gid;
	int has_digest;      /* digest of the content has been computed */
	char digest[EB_DIGEST_STR_LEN + 1];
	int has_st;          /* src: stat when added (walk lstat, add_file stat) */
	struct fstat_id st;
	/* digest is the content of the file with stat rec: the stat stayed
	 * so across the read, or a trusted file-hash record said so. */
	int has_rec;
	struct fstat_id rec;

	/* Filled by eb_layer__prepare(): what to emit for this path. */
	size_t content; /* T_FILE/T_HARDLINK: index of the entry holding the content */
	size_t linkto;  /* index of the path to hardlink to, or SIZE_MAX */
};

struct eb_layer_builder {
	struct entry *v;
	size_t n, cap;
	size_t seq;
	int prepared;
	/* The trees added from disk ("tree" + absolute path + excludes),
	 * naming, with the entries' file_root sources, this source's
	 * file-hash cache. */
	char **roots;
	size_t nroots, rootcap;
	/* The clock before the first content read through this builder: no
	 * digest it holds was read earlier (the racy-entry bound). */
	int has_stamp;
	struct timespec stamp;
	/* The base image's filesystem (borrowed), or NULL: see
	 * eb_layer_builder_set_base(). */
	const struct eb_basefs *base;
};

int eb_layer__fstat_id_eq(const struct fstat_id *a, const struct fstat_id *b);
void eb_layer__fstat_id_of(const struct stat *st, struct fstat_id *id);
int eb_layer__prepare(struct eb_layer_builder *b, struct eb_error **err);
int eb_layer__cmp_strp(const void *a, const void *b);
/* "KIND LEN:REALPATH[ LEN:EXCLUDE...]" (allocated): a file-hash root. */
char *eb_layer__root_name(const char *kind, const char *src, const char *const *excludes,
			  size_t nexcludes);

#endif
