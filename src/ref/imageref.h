/*
 * imageref.h - container image references ("python:3.11-slim",
 * "ghcr.io/org/app@sha256:...") in the grammar of distribution/reference,
 * normalised the way docker does it.
 *
 * Grammar: name[:tag][@digest], where name is [domain/]path.  The first
 * '/'-separated component is a domain when it is "localhost", contains '.'
 * or ':', or has an uppercase letter; otherwise the image lives on Docker
 * Hub.  Hub names are normalised: no domain or "index.docker.io" becomes
 * "docker.io", and a one-component path gets "library/" in front.  Digests
 * must also pass the OCI check: only sha256 (64 lowercase hex characters)
 * and sha512 (128) are accepted.  The normalised path may be at most 255
 * characters (the domain does not count), as in distribution/reference.
 *
 * Ownership: a parsed struct eb_imageref owns its strings; free them with
 * eb_imageref_release().  Strings returned by the _to_string, _familiar and
 * _name functions are the caller's (free()).
 *
 * Errors: eb_imageref_parse returns -EB_EINVALID and sets *err with `col` =
 * 1-based column inside the given string (file NULL, line 0), so a caller
 * parsing a larger line adds its own offset.
 *
 * Layering (ground floor): ref/ may use util/ only, so pin/, oci/ and
 * registry/ can all use it; it never talks to a registry.
 */
#ifndef EB_REF_IMAGEREF_H
#define EB_REF_IMAGEREF_H

#include "util/error.h"

/* Longest normalised path accepted ("library/python" counts 14). */
#define EB_IMAGEREF_NAME_MAX 255
/* Longest tag accepted. */
#define EB_IMAGEREF_TAG_MAX 128

struct eb_imageref {
	char *domain; /* normalised: "docker.io", "ghcr.io", "localhost:5000" */
	char *path;   /* repository without domain: "library/python" */
	char *tag;    /* "3.11-slim", or NULL when absent */
	char *digest; /* "sha256:<hex>", or NULL when absent */
};

/* Parse and normalise s into *out (which need not be initialised).  On
 * failure *out is left zeroed, so eb_imageref_release() is always safe. */
int eb_imageref_parse(struct eb_imageref *out, const char *s, struct eb_error **err);
void eb_imageref_release(struct eb_imageref *r);

/* Fully-qualified form: "docker.io/library/python:3.11-slim[@digest]". */
char *eb_imageref_to_string(const struct eb_imageref *r);
/* The short form docker shows: "python:3.11-slim", "org/app:1",
 * "ghcr.io/org/app:1". */
char *eb_imageref_familiar(const struct eb_imageref *r);
/* Fully-qualified name without tag or digest: "docker.io/library/python". */
char *eb_imageref_name(const struct eb_imageref *r);

/* 1 if s is the reserved empty base image "scratch", else 0. */
int eb_imageref_is_scratch(const char *s);

#endif
