/*
 * localwheel.h - a requirement naming a wheel file of the project itself
 * ("./dist/app-0.3.0-py3-none-any.whl --hash=sha256:...", "app @
 * file:dist/app-0.3.0-py3-none-any.whl#sha256=..."), read into the blob
 * store verified.
 *
 * The path is relative to the spec's directory (the project), and the
 * file, symlinks resolved, must lie inside it: a requirements file cannot
 * make a build read anything else of the machine.
 *
 * Layering (sources floor): assemble/ may use registry/, python/, lock/,
 * oci/, net/ and the ground floor; never stage/ or cmd/.
 */
#ifndef EB_ASSEMBLE_LOCALWHEEL_H
#define EB_ASSEMBLE_LOCALWHEEL_H

#include <stdint.h>

#include "oci/blobstore.h"
#include "pin/requirement.h"
#include "util/digest.h"
#include "util/error.h"

/* The path of req's file (an EB_REQ_PATH requirement) relative to the
 * project, "dist/app-0.3.0-py3-none-any.whl", or NULL when it is absolute
 * outside it or climbs out; caller frees. */
char *eb_localwheel_path(const char *spec_dir, const char *url);

/* Copy the wheel req names into bs, checked against its sha256 (--hash or
 * #sha256=); digest gets "sha256:<hex>", *size its bytes, *rel (the
 * caller's) its project-relative path, the lock's URL for it. */
int eb_localwheel_fetch(const char *spec_dir, const struct eb_requirement *req,
			struct eb_blobstore *bs, char digest[EB_DIGEST_STR_LEN + 1],
			int64_t *size, char **rel, struct eb_error **err);

#endif
