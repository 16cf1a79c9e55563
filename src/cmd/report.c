/*
 * report.c - printing findings in the three formats every command shares:
 * text for people, json for tools, github for workflow annotations.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <getopt.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/report.h"
#include "stage/check.h"
#include "registry/client.h"
#include "util/alloc.h"
#include "util/buf.h"

int eb_report_format_parse(const char *s, enum eb_report_format *out)
{
	if (strcmp(s, "text") == 0)
		*out = EB_REPORT_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = EB_REPORT_JSON;
	else if (strcmp(s, "github") == 0)
		*out = EB_REPORT_GITHUB;
	else
		return -1;
	return 0;
}

static const char *sev_name(enum eb_severity s)
{
	switch (s) {
	case EB_SEV_ERROR: return "error";
	case EB_SEV_WARNING: return "warning";
	case EB_SEV_NOTE: return "note";
	}
	return "error";
}

/* "target 'training'" or "targets 'training', 'inference'" (b emptied
 * first; nothing for a finding about no target). */
static void targets_label(struct eb_buf *b, const struct eb_diag *d)
{
	eb_buf_truncate(b, 0);
	for (size_t i = 0; i < d->ntargets; i++)
		eb_buf_putf(b, "%s'%s'", i ? ", " : d->ntargets > 1 ? "targets " : "target ",
			    d->targets[i]);
}

static void print_text(FILE *out, const struct eb_diag_list *l)
{
	struct eb_buf t;

	eb_buf_init(&t, 0);
	for (size_t i = 0; i < l->n; i++) {
		const struct eb_diag *d = &l->items[i];
		targets_label(&t, d);
		/* a finding about targets names them where a position would go
		 * ("envbuild.yaml: target 'training': warning: ..."); one at a
		 * position keeps the compiler's shape and names them in front
		 * of the message */
		if (d->line && d->col)
			fprintf(out, "%s:%u:%u: %s: %s%s%s [%s]\n", d->file, d->line, d->col,
			       sev_name(d->severity), t.len ? t.ptr : "", t.len ? ": " : "", d->msg, d->rule);
		else if (d->line)
			fprintf(out, "%s:%u: %s: %s%s%s [%s]\n", d->file, d->line, sev_name(d->severity),
				t.len ? t.ptr : "", t.len ? ": " : "", d->msg, d->rule);
		else if (t.len)
			fprintf(out, "%s: %s: %s: %s [%s]\n", d->file, t.ptr, sev_name(d->severity), d->msg,
				d->rule);
		else
			fprintf(out, "%s: %s: %s [%s]\n", d->file, sev_name(d->severity), d->msg, d->rule);
		if (d->hint)
			fprintf(out, "  hint: %s\n", d->hint);
	}
	eb_buf_release(&t);
}

static void print_json(FILE *out, const struct eb_diag_list *l)
{
	json_t *root = json_object();
	json_t *arr = json_array();
	char *s;

	for (size_t i = 0; i < l->n; i++) {
		const struct eb_diag *d = &l->items[i];
		json_t *o = json_object();
		json_object_set_new(o, "file", json_string(d->file));
		json_object_set_new(o, "line", json_integer(d->line));
		json_object_set_new(o, "column", json_integer(d->col));
		json_object_set_new(o, "severity", json_string(sev_name(d->severity)));
		json_object_set_new(o, "rule", json_string(d->rule));
		json_object_set_new(o, "message", json_string(d->msg));
		json_object_set_new(o, "hint", d->hint ? json_string(d->hint) : json_null());
		if (d->ntargets) {
			json_t *ts = json_array();
			for (size_t k = 0; k < d->ntargets; k++)
				json_array_append_new(ts, json_string(d->targets[k]));
			json_object_set_new(o, "targets", ts);
		}
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "findings", arr);
	json_object_set_new(root, "errors", json_integer((json_int_t)eb_diag_list_count(l, EB_SEV_ERROR)));
	json_object_set_new(root, "warnings",
			    json_integer((json_int_t)eb_diag_list_count(l, EB_SEV_WARNING)));
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fprintf(out, "%s\n", s);
	free(s);
	json_decref(root);
}

/* GitHub workflow commands escape '%', CR and LF in data, and also ':' and
 * ',' in property values. */
static void gh_escape(struct eb_buf *b, const char *s, int property)
{
	for (; *s; s++) {
		int r = 0;
		switch (*s) {
		case '%': r = eb_buf_adds(b, "%25"); break;
		case '\r': r = eb_buf_adds(b, "%0D"); break;
		case '\n': r = eb_buf_adds(b, "%0A"); break;
		case ':': r = property ? eb_buf_adds(b, "%3A") : eb_buf_addc(b, ':'); break;
		case ',': r = property ? eb_buf_adds(b, "%2C") : eb_buf_addc(b, ','); break;
		default: r = eb_buf_addc(b, *s); break;
		}
		(void)r; /* uncapped buffer: appends cannot fail */
	}
}

int eb_report_escape_all;

char *eb_report_text(const char *s)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	if (eb_report_escape_all)
		gh_escape(&b, s ? s : "", 0);
	else
		eb_buf_puts(&b, s ? s : "");
	return eb_buf_detach(&b, NULL);
}

static void print_github(FILE *out, const struct eb_diag_list *l)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < l->n; i++) {
		const struct eb_diag *d = &l->items[i];
		eb_buf_truncate(&b, 0);
		eb_buf_putf(&b, "::%s file=", d->severity == EB_SEV_ERROR ? "error"
						    : d->severity == EB_SEV_WARNING ? "warning" : "notice");
		gh_escape(&b, d->file, 1);
		if (d->line)
			eb_buf_putf(&b, ",line=%u", d->line);
		if (d->col)
			eb_buf_putf(&b, ",col=%u", d->col);
		eb_buf_puts(&b, ",title=");
		gh_escape(&b, d->rule, 1);
		eb_buf_puts(&b, "::");
		if (d->ntargets) {
			struct eb_buf t;
			eb_buf_init(&t, 0);
			targets_label(&t, d);
			eb_buf_puts(&t, ": ");
			gh_escape(&b, t.ptr, 0);
			eb_buf_release(&t);
		}
		gh_escape(&b, d->msg, 0);
		if (d->hint) {
			eb_buf_puts(&b, "%0A");
			gh_escape(&b, "hint: ", 0);
			gh_escape(&b, d->hint, 0);
		}
		fprintf(out, "%s\n", b.ptr);
	}
	eb_buf_release(&b);
}

void eb_report_findings(FILE *out, const struct eb_diag_list *l, enum eb_report_format fmt)
{
	size_t nerr = eb_diag_list_count(l, EB_SEV_ERROR);
	size_t nwarn = eb_diag_list_count(l, EB_SEV_WARNING);

	switch (fmt) {
	case EB_REPORT_TEXT:
		print_text(out, l);
		fflush(out);
		if (nerr || nwarn)
			fprintf(stderr, "envbuild: %zu error%s, %zu warning%s\n", nerr,
				nerr == 1 ? "" : "s", nwarn, nwarn == 1 ? "" : "s");
		break;
	case EB_REPORT_JSON:
		print_json(out, l);
		break;
	case EB_REPORT_GITHUB:
		print_github(out, l);
		break;
	}
}

int eb_cmd_registry_option(int opt, const char *arg, struct eb_registry_options *ro,
			   struct eb_http_registry **hosts, size_t *nhosts)
{
	switch (opt) {
	case 'C':
		ro->http.ca_file = arg;
		return 1;
	case 'I':
		*hosts = eb_xreallocarray(*hosts, *nhosts + 1, sizeof(**hosts));
		memset(&(*hosts)[*nhosts], 0, sizeof(**hosts));
		(*hosts)[*nhosts].host = arg;
		(*hosts)[*nhosts].insecure = 1;
		(*nhosts)++;
		ro->http.registries = *hosts;
		ro->http.nregistries = *nhosts;
		return 1;
	}
	return 0;
}

int eb_cmd_find_spec(int argc, char **argv, const char **spec, struct eb_error **err)
{
	int r;

	if (optind < argc)
		return eb_error_set(err, EB_EUSAGE, "unexpected argument '%s'", argv[optind]);
	if (!*spec)
		*spec = eb_check_find_spec();
	if (*spec)
		return 0;
	r = eb_error_set(err, EB_ENOTFOUND, "no envbuild.yaml, envbuild.yml or envbuild.json here");
	eb_error_hint(err, "run in the project directory, or give --spec FILE");
	return r;
}
