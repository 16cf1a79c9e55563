/*
 * error.c - setting, wrapping and freeing struct eb_error.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return eb_xstrdup("(out of memory formatting an error)");
	return s;
}

static int set(struct eb_error **err, int code, int errnum, const char *file, unsigned line,
	       unsigned col, char *msg)
{
	struct eb_error *e;

	if (!err || *err) {
		free(msg);
		return err && *err ? -(*err)->code : -code;
	}
	e = eb_xcalloc(1, sizeof(*e));
	e->code = code;
	e->sys_errno = errnum;
	e->file = file ? eb_xstrdup(file) : NULL;
	e->line = line;
	e->col = col;
	e->msg = msg;
	*err = e;
	return -code;
}

int eb_error_set(struct eb_error **err, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = vfmt(fmt, ap);
	va_end(ap);
	return set(err, code, 0, NULL, 0, 0, msg);
}

int eb_error_set_errno(struct eb_error **err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	char *msg, *full;

	va_start(ap, fmt);
	msg = vfmt(fmt, ap);
	va_end(ap);
	full = eb_xasprintf("%s: %s", msg, strerror(errnum));
	free(msg);
	return set(err, code, errnum, NULL, 0, 0, full);
}

int eb_error_set_at(struct eb_error **err, int code, const char *file, unsigned line,
		    unsigned col, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = vfmt(fmt, ap);
	va_end(ap);
	return set(err, code, 0, file, line, col, msg);
}

int eb_error_vset_col(struct eb_error **err, int code, unsigned col, const char *hint,
		      const char *fmt, va_list ap)
{
	int set_now = err && !*err;
	int r = set(err, code, 0, NULL, 0, col, vfmt(fmt, ap));

	if (set_now && hint)
		eb_error_hint(err, "%s", hint);
	return r;
}

void eb_error_hint(struct eb_error **err, const char *fmt, ...)
{
	va_list ap;

	if (!err || !*err)
		return;
	va_start(ap, fmt);
	free((*err)->hint);
	(*err)->hint = vfmt(fmt, ap);
	va_end(ap);
}

int eb_error_wrap(struct eb_error **err, const char *fmt, ...)
{
	va_list ap;
	char *ctx, *full;

	if (!err || !*err)
		return -EB_EFAIL;
	va_start(ap, fmt);
	ctx = vfmt(fmt, ap);
	va_end(ap);
	full = eb_xasprintf("%s: %s", ctx, (*err)->msg);
	free(ctx);
	free((*err)->msg);
	(*err)->msg = full;
	return -(*err)->code;
}

void eb_error_locate(struct eb_error **err, const char *file, unsigned line, unsigned col)
{
	if (!err || !*err || (*err)->file)
		return;
	(*err)->file = eb_xstrdup(file);
	(*err)->line = line;
	(*err)->col = col;
}

void eb_error_free(struct eb_error *err)
{
	if (!err)
		return;
	free(err->file);
	free(err->msg);
	free(err->hint);
	free(err);
}

void eb_error_clear(struct eb_error **err)
{
	if (err) {
		eb_error_free(*err);
		*err = NULL;
	}
}
