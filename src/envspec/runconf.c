/*
 * runconf.c - the spec keys of the image config that say how the image
 * runs, beyond entrypoint and cmd: `expose` (Docker's EXPOSE: ports
 * added to the base's ExposedPorts) and `stopsignal` (STOPSIGNAL).
 * Findings are EB011 (an invalid value) at the value's position.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "envspec/runconf.h"
#include "util/alloc.h"

static void bad(struct eb_diag_list *diags, const char *file, const struct eb_yj_pos *p,
		const char *what, const char *v, const char *hint)
{
	struct eb_diag *d = eb_diag_add(diags, EB_SEV_ERROR, file, p->line, p->col, "EB011",
					"invalid %s '%s'", what, v);
	eb_diag_hint(d, "%s", hint);
}

/* "8000", "8000/tcp", "53/udp": normalised to PORT/PROTO; NULL if invalid */
static char *port(const char *s)
{
	char *end;
	long n;
	const char *proto = "tcp";

	if (!isdigit((unsigned char)*s))
		return NULL;
	n = strtol(s, &end, 10);
	if (n < 1 || n > 65535)
		return NULL;
	if (*end == '/') {
		proto = end + 1;
		if (strcmp(proto, "tcp") && strcmp(proto, "udp") && strcmp(proto, "sctp"))
			return NULL;
	} else if (*end) {
		return NULL;
	}
	return eb_xasprintf("%ld/%s", n, proto);
}

void eb_spec_runconf_parse(const struct eb_yj_doc *doc, const char *file, const json_t *obj,
			   struct eb_spec_runconf *rc, struct eb_diag_list *diags)
{
	const json_t *v = json_object_get(obj, "expose");
	const json_t *sig = json_object_get(obj, "stopsignal");

	if (v) {
		size_t i;
		json_t *it;
		if (!json_is_array(v)) {
			bad(diags, file, eb_yj_value_pos(doc, obj, "expose", 0), "expose", "",
			    "write a list: expose: [\"8000/tcp\"]");
		} else {
			json_array_foreach((json_t *)v, i, it) {
				const struct eb_yj_pos *p = eb_yj_value_pos(doc, v, NULL, i);
				const char *s = json_is_string(it) ? json_string_value(it)
					      : json_is_integer(it) ? p->raw : NULL;
				char *n = s ? port(s) : NULL;
				if (!n) {
					bad(diags, file, p, "port", s ? s : "?",
					    "write PORT or PORT/PROTO (tcp, udp, sctp), as EXPOSE does");
					continue;
				}
				rc->expose = eb_xreallocarray(rc->expose, rc->nexpose + 2,
							      sizeof(*rc->expose));
				rc->expose[rc->nexpose++] = n;
				rc->expose[rc->nexpose] = NULL;
			}
		}
	}
	if (sig) {
		const struct eb_yj_pos *p = eb_yj_value_pos(doc, obj, "stopsignal", 0);
		const char *s = json_is_string(sig) ? json_string_value(sig)
			      : json_is_integer(sig) ? p->raw : NULL;
		int ok = s && *s;
		if (ok && isdigit((unsigned char)*s)) {
			long n = strtol(s, NULL, 10);
			ok = strspn(s, "0123456789") == strlen(s) && n >= 1 && n <= 64;
		} else if (ok) {
			const char *q = strncmp(s, "SIG", 3) == 0 ? s + 3 : s;
			ok = *q != '\0';
			for (; ok && *q; q++)
				ok = isupper((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '+' ||
				     *q == '-';
		}
		if (!ok)
			bad(diags, file, p, "stopsignal", s ? s : "?",
			    "write a signal name or number: SIGTERM, SIGINT, 15");
		else {
			free(rc->stopsignal);
			rc->stopsignal = eb_xstrdup(s);
		}
	}
}

void eb_spec_runconf_release(struct eb_spec_runconf *rc)
{
	for (size_t i = 0; i < rc->nexpose; i++)
		free(rc->expose[i]);
	free(rc->expose);
	free(rc->stopsignal);
	memset(rc, 0, sizeof(*rc));
}
