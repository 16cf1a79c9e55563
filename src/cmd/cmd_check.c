/*
 * cmd_check.c - `envbuild check [PATH...]`: options and the three output
 * formats (text for people, json for tools, github for workflow
 * annotations).  The rules themselves live in pin/check.c.
 */
#include "config.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "pin/check.h"
#include "util/buf.h"
#include "util/diag.h"

enum format { FMT_TEXT, FMT_JSON, FMT_GITHUB };

static const char *sev_name(enum eb_severity s)
{
	switch (s) {
	case EB_SEV_ERROR: return "error";
	case EB_SEV_WARNING: return "warning";
	case EB_SEV_NOTE: return "note";
	}
	return "error";
}

static void print_text(const struct eb_diag_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct eb_diag *d = &l->items[i];
		if (d->line && d->col)
			printf("%s:%u:%u: %s: %s [%s]\n", d->file, d->line, d->col,
			       sev_name(d->severity), d->msg, d->rule);
		else if (d->line)
			printf("%s:%u: %s: %s [%s]\n", d->file, d->line, sev_name(d->severity), d->msg,
			       d->rule);
		else
			printf("%s: %s: %s [%s]\n", d->file, sev_name(d->severity), d->msg, d->rule);
		if (d->hint)
			printf("  hint: %s\n", d->hint);
	}
}

static void print_json(const struct eb_diag_list *l)
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
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "findings", arr);
	json_object_set_new(root, "errors", json_integer((json_int_t)eb_diag_list_count(l, EB_SEV_ERROR)));
	json_object_set_new(root, "warnings",
			    json_integer((json_int_t)eb_diag_list_count(l, EB_SEV_WARNING)));
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(s);
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

static void print_github(const struct eb_diag_list *l)
{
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < l->n; i++) {
		const struct eb_diag *d = &l->items[i];
		eb_buf_truncate(&b, 0);
		(void)eb_buf_addf(&b, "::%s file=", d->severity == EB_SEV_ERROR ? "error"
						    : d->severity == EB_SEV_WARNING ? "warning" : "notice");
		gh_escape(&b, d->file, 1);
		if (d->line)
			(void)eb_buf_addf(&b, ",line=%u", d->line);
		if (d->col)
			(void)eb_buf_addf(&b, ",col=%u", d->col);
		(void)eb_buf_adds(&b, ",title=");
		gh_escape(&b, d->rule, 1);
		(void)eb_buf_adds(&b, "::");
		gh_escape(&b, d->msg, 0);
		if (d->hint) {
			(void)eb_buf_adds(&b, "%0A");
			gh_escape(&b, "hint: ", 0);
			gh_escape(&b, d->hint, 0);
		}
		puts(b.ptr);
	}
	eb_buf_release(&b);
}

int cmd_check(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "strict", no_argument, NULL, 's' },
		{ "spec", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	enum format fmt = FMT_TEXT;
	const char *spec = NULL;
	int strict = 0, c, r = 0;
	size_t nerr, nwarn;

	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				fmt = FMT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				fmt = FMT_JSON;
			else if (strcmp(optarg, "github") == 0)
				fmt = FMT_GITHUB;
			else
				return eb_error_set(err, EB_EUSAGE,
						    "unknown format '%s' (use text, json or github)",
						    optarg);
			break;
		case 's':
			strict = 1;
			break;
		case 'S':
			spec = optarg;
			break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild check --help'");
		}
	}
	if (optind >= argc) {
		if (!spec)
			spec = eb_check_find_spec();
		if (!spec) {
			r = eb_error_set(err, EB_ENOTFOUND,
					 "no envbuild.yaml, envbuild.yml or envbuild.json here");
			eb_error_hint(err, "run in the project directory, or name files: envbuild check PATH...");
			goto done;
		}
		r = eb_check_spec(spec, &diags, err);
	} else {
		for (int i = optind; i < argc && r >= 0; i++)
			r = eb_check_path(argv[i], &diags, err);
	}
	if (r < 0)
		goto done;
	eb_diag_list_sort(&diags);
	nerr = eb_diag_list_count(&diags, EB_SEV_ERROR);
	nwarn = eb_diag_list_count(&diags, EB_SEV_WARNING);
	switch (fmt) {
	case FMT_TEXT:
		print_text(&diags);
		if (nerr || nwarn)
			fprintf(stderr, "envbuild: %zu error%s, %zu warning%s\n", nerr,
				nerr == 1 ? "" : "s", nwarn, nwarn == 1 ? "" : "s");
		break;
	case FMT_JSON:
		print_json(&diags);
		break;
	case FMT_GITHUB:
		print_github(&diags);
		break;
	}
	r = (nerr || (strict && nwarn)) ? 1 : 0;
done:
	eb_diag_list_release(&diags);
	return r;
}
