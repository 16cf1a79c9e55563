/*
 * wheel_internal.h - what wheel.c (verify, plan, add) shares with
 * wheel_extract.c (phase 1: the zip read and staged): the install state
 * and the small helpers both use.  Not an API: only those two files
 * include it.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_WHEEL_INTERNAL_H
#define EB_PYTHON_WHEEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "python/wheel.h"
#include "util/buf.h"

struct strmap {
	const char **keys; /* borrowed */
	size_t *vals;
	size_t cap, n;
};

/* One file of the archive, extracted. */
struct entry {
	char *path;  /* archive path (owned) */
	char *stage; /* staged copy (owned) */
	uint64_t size;
	unsigned char sha256[32];
	unsigned mode; /* 0644, or 0755 when the zip entry had an execute bit */
	int recorded;  /* listed in RECORD */
	/* Not staged (stage NULL): a large member is read from the wheel
	 * again when the layer is written (oci/inflate.h), its data at
	 * zoff, zcsize bytes in method zmethod. */
	int zip, zmethod;
	uint64_t zoff, zcsize;
};

/* Where a member's data is in the zip, from the central directory. */
struct cdent {
	char *name; /* as stored (owned) */
	uint64_t lho, csize, usize;
	unsigned method;
};

/* One file to add to the builder. */
struct item {
	char *dest;  /* absolute layer path (owned) */
	char *rel;   /* RECORD path, relative to the .dist-info's parent (owned) */
	const char *src; /* staged file, or NULL for data */
	const struct entry *zip; /* a member read from the wheel, or NULL */
	char *file;      /* src when it is not staged (a .pyc's blob; owned) */
	char *data;      /* generated content (owned), when src == NULL */
	size_t len;
	unsigned mode;
	unsigned char sha256[32];
	uint64_t size;
};

enum capture { CAP_NONE = -1, CAP_METADATA, CAP_WHEEL, CAP_RECORD, CAP_ENTRY_POINTS, CAP_N };

extern const char *const eb_wheel__cap_names[CAP_N];
extern const size_t eb_wheel__cap_max[CAP_N];

struct scheme {
	char *purelib, *platlib, *scripts, *data, *headers;
	const char *interpreter;
};

struct inst {
	uint64_t max_total, max_entries, ratio_min;
	unsigned max_ratio;
	char *dir; /* our staging directory (owned) */
	const char *wheel_path; /* borrowed */
	uint64_t stage_max; /* members this large or larger are not staged */
	struct cdent *cd; /* the central directory, sorted by name (owned) */
	size_t ncd;
	unsigned seq;
	struct entry *e;
	size_t n, cap;
	struct strmap paths; /* archive path -> index in e */
	char *distinfo;      /* "pip-23.0.1.dist-info" (owned) */
	struct eb_buf caps[CAP_N];
	int captured[CAP_N];
	struct scheme sc;
	char *root; /* purelib or platlib: where the .dist-info goes (borrowed) */
	struct item *items;
	size_t nitems, icap;
	struct strmap dests; /* dest -> index in items */
	struct eb_entry_points eps;
	char *fn_name, *fn_version; /* from the file name (owned) */
};

int eb_wheel__extract(struct inst *in, const char *wheel_path, struct eb_error **err);
void eb_wheel__cd_free(struct inst *in);
int eb_wheel__has_suffix(const char *s, const char *suf);
void eb_wheel__md_final(EVP_MD_CTX *c, unsigned char *out, unsigned *outlen);
EVP_MD_CTX *eb_wheel__md_new(const EVP_MD *md);
char *eb_wheel__printable(const char *s);
int eb_wheel__strmap_put(struct strmap *m, const char *key, size_t val);
size_t eb_wheel__top_len(const char *p);
int eb_wheel__write_all(int fd, const void *p, size_t n);
int eb_wheel__cmp_str(const void *a, const void *b);

#endif
