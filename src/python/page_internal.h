/*
 * page_internal.h - what index.c shares with page.c: URL, hash-list and
 * error helpers of the simple API.  Not an API: only python/page.c and
 * python/index.c include it.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_PAGE_INTERNAL_H
#define EB_PYTHON_PAGE_INTERNAL_H

#include <curl/curl.h>

#include "python/page.h"
#include "util/error.h"

int eb_pyindex__ends_with_ci(const char *s, const char *suffix);
void eb_pyindex__wipe_free(char *s);
void eb_pyindex__pass_error(struct eb_error **err, struct eb_error *e);
void eb_pyindex__hashes_release(struct eb_pyindex_hashes *h);
const char *eb_pyindex__hashes_add(struct eb_pyindex_hashes *h, const char *algo, size_t alen, const char *hex, size_t hlen);
struct eb_pyindex_file *eb_pyindex__page_new_file(struct eb_pyindex_page *p);
char *eb_pyindex__url_clean(CURLU *u);
char *eb_pyindex__url_origin(const char *url);
int eb_pyindex__url_is_file(const char *url);
char *eb_pyindex__file_url_path(const char *url);
char *eb_pyindex__file_url_from_path(const char *path);
char *eb_pyindex__metadata_url(const char *url);
int eb_pyindex__parse_typed(struct eb_pyindex_page *out, const char *content_type, const char *data, size_t len, const char *page_url, size_t cap, struct eb_error **err);

#endif
