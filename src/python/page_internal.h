/*
 * page_internal.h - what index.c shares with page.c: URL, hash-list and
 * error helpers of the simple API.  Not an API: only python/page.c and
 * python/index.c include it.
 */
#ifndef EB_PYTHON_PAGE_INTERNAL_H
#define EB_PYTHON_PAGE_INTERNAL_H

#include <curl/curl.h>

#include "python/page.h"
#include "util/error.h"

int eb_index__ends_with_ci(const char *s, const char *suffix);
void eb_index__wipe_free(char *s);
void eb_index__pass_error(struct eb_error **err, struct eb_error *e);
void eb_index__hashes_release(struct eb_index_hashes *h);
const char *eb_index__hashes_add(struct eb_index_hashes *h, const char *algo, size_t alen, const char *hex, size_t hlen);
struct eb_index_file *eb_index__page_new_file(struct eb_index_page *p);
char *eb_index__url_clean(CURLU *u);
char *eb_index__url_origin(const char *url);
int eb_index__url_is_file(const char *url);
char *eb_index__file_url_path(const char *url);
char *eb_index__file_url_from_path(const char *path);
char *eb_index__metadata_url(const char *url);
int eb_index__parse_typed(struct eb_index_page *out, const char *content_type, const char *data, size_t len, const char *page_url, size_t cap, struct eb_error **err);

#endif
