/*
 * report.h - print findings (struct eb_diag_list) for a command: text
 * ("file:line:col: error: message [EBnnn]" and a hint line, then a count on
 * stderr), json (one document) or github (::error annotations).  A
 * finding about targets names them: "envbuild.yaml: target 'training':
 * warning: ..." (or "targets 'training', 'inference':" once grouped by
 * eb_diag_list_sort), "targets" in json.
 *
 * Layering (command floor): cmd/ and main.c parse options, call one stage
 * function and print; only main.c prints errors and picks exit codes.
 */
#ifndef EB_CMD_REPORT_H
#define EB_CMD_REPORT_H

#include <stdio.h>

#include "util/diag.h"

enum eb_report_format { EB_REPORT_TEXT, EB_REPORT_JSON, EB_REPORT_GITHUB };

/* 0, or -1 for an unknown name ("text", "json", "github"). */
int eb_report_format_parse(const char *s, enum eb_report_format *out);
/* Print l (sorted by the caller) in fmt to out; the text format adds a
 * count line on stderr. */
void eb_report_findings(FILE *out, const struct eb_diag_list *l, enum eb_report_format fmt);
/* Under --format=github everything printed is escaped as workflow
 * command data (%, CR, LF), error messages on stderr too: a path with a
 * newline and "::error ...::" in it cannot spoof an annotation.  Set by
 * the command, read by main.c when it prints the error. */
extern int eb_report_escape_all;
/* s as workflow command data, or as given when eb_report_escape_all is
 * off; the caller frees. */
char *eb_report_text(const char *s);

#endif
