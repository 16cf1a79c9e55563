/*
 * testlayer.h - a layer blob written from a few lines of text, for the unit
 * tests of what reads base images (the file-tree view, the Debian base
 * scan): one line an entry,
 *   "d PATH MODE [UID GID]"  a directory (owner: the layer's, one per layer)
 *   "f PATH [BYTES]"         a regular file (default bytes "x"; BYTES is the
 *                            rest of the line, newlines and spaces kept)
 *   "l PATH TARGET"          a symlink
 * written with keep_modes into the blob store; returns the blob's path
 * (the caller frees it).
 */
#ifndef EB_TESTLAYER_H
#define EB_TESTLAYER_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/blobstore.h"
#include "oci/layer.h"
#include "util/alloc.h"

static inline char *eb_test_layer(struct eb_blobstore *bs, const char *const *specs)
{
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	struct eb_error *err = NULL;

	o.keep_modes = 1;
	for (; *specs; specs++) {
		const char *rest = *specs + 2, *sp = strchr(rest, ' ');
		char *path = sp ? eb_xstrndup(rest, (size_t)(sp - rest)) : eb_xstrdup(rest);
		const char *arg = sp ? sp + 1 : "";
		unsigned mode = 0, uid = 0, gid = 0;

		switch ((*specs)[0]) {
		case 'd':
			ck_assert_int_ge(sscanf(arg, "%o %u %u", &mode, &uid, &gid), 1);
			ck_assert_int_eq(eb_layer_add_dir(b, path, mode, &err), 0);
			/* per-entry owners are not in the builder's API: one owner
			 * per layer, so tests give owned dirs their own layer */
			o.uid = uid;
			o.gid = gid;
			break;
		case 'f':
			if (!sp)
				arg = "x";
			ck_assert_int_eq(eb_layer_add_bytes(b, path, arg, strlen(arg), 0644, &err), 0);
			break;
		case 'l':
			ck_assert_int_eq(eb_layer_add_symlink(b, path, arg, &err), 0);
			break;
		default:
			ck_abort_msg("testlayer: no entry kind '%c'", (*specs)[0]);
		}
		free(path);
	}
	ck_assert_int_eq(eb_layer_write(b, &o, bs, &res, &err), 0);
	eb_layer_builder_free(b);
	return eb_blobstore_path(bs, res.digest);
}

#endif
