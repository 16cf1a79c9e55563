/*
 * fuzz_entry_points.c - libFuzzer target for entry_points.txt
 * (eb_metadata_parse_entry_points).  What the parser promises the
 * launcher writer: script names are safe file names and module/attr are
 * dotted identifiers, so nothing else can reach generated Python source.
 */
#include "fuzz.h"

#include <ctype.h>

#include "python/metadata.h"

static int dotted_ident(const char *s)
{
	int start = 1;

	if (!*s)
		return 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '.') {
			if (start)
				return 0;
			start = 1;
			continue;
		}
		/* non-ASCII identifiers are allowed (PEP 3131) */
		if (c < 0x80 && !(isalpha(c) || c == '_' || (!start && isdigit(c))))
			return 0;
		start = 0;
	}
	return !start;
}

static void check(const struct eb_entry_point *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = e[i].name;
		EB_FUZZ_ASSERT(name && name[0] && name[0] != '.');
		EB_FUZZ_ASSERT(!strchr(name, '/') && !strchr(name, '\\'));
		for (const char *p = name; *p; p++)
			EB_FUZZ_ASSERT((unsigned char)*p >= 0x20 && *p != 0x7f);
		EB_FUZZ_ASSERT(dotted_ident(e[i].module));
		EB_FUZZ_ASSERT(dotted_ident(e[i].attr));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = eb_fuzz_exact(data, size);
	struct eb_entry_points ep;
	struct eb_error *err = NULL;

	memset(&ep, 0, sizeof(ep));
	if (eb_metadata_parse_entry_points(&ep, text, size, &err) == 0) {
		check(ep.console, ep.nconsole);
		check(ep.gui, ep.ngui);
	} else {
		EB_FUZZ_ASSERT(err != NULL);
		EB_FUZZ_ASSERT(ep.nconsole == 0 && ep.ngui == 0);
	}
	eb_entry_points_release(&ep);
	eb_error_free(err);
	free(text);
	return 0;
}
