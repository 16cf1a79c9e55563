/*
 * release.c - Release file parser (see release.h).
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "debian/control.h"
#include "debian/release.h"
#include "util/alloc.h"

void eb_release_release(struct eb_release *r)
{
	free(r->suite);
	free(r->codename);
	free(r->date_text);
	for (size_t i = 0; i < r->narch; i++)
		free(r->architectures[i]);
	free(r->architectures);
	for (size_t i = 0; i < r->ncomp; i++)
		free(r->components[i]);
	free(r->components);
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].sha256);
	}
	free(r->files);
	memset(r, 0, sizeof(*r));
}

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

int eb_debian_parse_date(const char *s, time_t *out, struct eb_error **err)
{
	struct tm tm;
	char wday[4], mon[4], zone[8];
	int day, year, h, m, sec, n = 0;
	long off = 0;

	memset(&tm, 0, sizeof(tm));
	/* the weekday is optional in RFC 2822 */
	if (sscanf(s, "%3[A-Za-z], %d %3s %d %d:%d:%d %7s%n", wday, &day, mon, &year, &h, &m,
		   &sec, zone, &n) != 8 &&
	    sscanf(s, "%d %3s %d %d:%d:%d %7s%n", &day, mon, &year, &h, &m, &sec, zone, &n) != 7)
		return eb_error_set(err, EB_EINVALID, "invalid date '%s'", s);
	if (s[n] != '\0')
		return eb_error_set(err, EB_EINVALID, "invalid date '%s'", s);
	tm.tm_mon = -1;
	for (int i = 0; i < 12; i++)
		if (!strcmp(mon, months[i]))
			tm.tm_mon = i;
	if (tm.tm_mon < 0 || day < 1 || day > 31 || year < 1970 || year > 9999 || h < 0 ||
	    h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60)
		return eb_error_set(err, EB_EINVALID, "invalid date '%s'", s);
	if (!strcmp(zone, "UTC") || !strcmp(zone, "GMT") || !strcmp(zone, "Z")) {
		off = 0;
	} else if ((zone[0] == '+' || zone[0] == '-') && strlen(zone) == 5 &&
		   isdigit((unsigned char)zone[1]) && isdigit((unsigned char)zone[2]) &&
		   isdigit((unsigned char)zone[3]) && isdigit((unsigned char)zone[4])) {
		off = ((zone[1] - '0') * 10 + (zone[2] - '0')) * 3600L +
		      ((zone[3] - '0') * 10 + (zone[4] - '0')) * 60L;
		if (zone[0] == '-')
			off = -off;
	} else {
		return eb_error_set(err, EB_EINVALID, "invalid time zone in date '%s'", s);
	}
	tm.tm_mday = day;
	tm.tm_year = year - 1900;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	*out = timegm(&tm) - off;
	return 0;
}

/* split a whitespace-separated list */
static void split_words(const char *s, char ***out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	while (s && *s) {
		while (*s && isspace((unsigned char)*s))
			s++;
		const char *w = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (s > w) {
			EB_ALLOC_GROW(*out, *n + 1, cap);
			(*out)[(*n)++] = eb_xstrndup(w, (size_t)(s - w));
		}
	}
}

static int hex64(const char *s, size_t len)
{
	if (len != 64)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int parse_sha256(struct eb_release *r, const char *v, const char *file, unsigned line,
			struct eb_error **err)
{
	size_t cap = 0;
	const char *p = v;

	while (*p) {
		const char *nl = strchr(p, '\n'), *e = nl ? nl : p + strlen(p);
		char hash[65], path[4097];
		unsigned long long size;
		int n = 0;

		line++;
		if (e > p) {
			char *one = eb_xstrndup(p, (size_t)(e - p));
			int ok = sscanf(one, " %64s %llu %4096s %n", hash, &size, path, &n) == 3 &&
				 one[n] == '\0' && hex64(hash, strlen(hash)) && path[0] != '/' &&
				 !strstr(path, "..");
			free(one);
			if (!ok)
				return eb_error_set_at(err, EB_EINVALID, file ? file : "Release",
						       line - 1, 1,
						       "invalid SHA256 entry in Release file");
			EB_ALLOC_GROW(r->files, r->nfiles + 1, cap);
			r->files[r->nfiles].path = eb_xstrdup(path);
			r->files[r->nfiles].sha256 = eb_xstrdup(hash);
			r->files[r->nfiles].size = size;
			r->nfiles++;
		}
		p = nl ? nl + 1 : e;
	}
	return 0;
}

int eb_release_parse(struct eb_release *out, const char *data, size_t len, const char *file,
		     struct eb_error **err)
{
	struct eb_deb822 rd;
	struct eb_deb822_para para = EB_DEB822_PARA_INIT, extra = EB_DEB822_PARA_INIT;
	struct eb_release r;
	const struct eb_deb822_field *f;
	const char *v;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	eb_deb822_init(&rd, data, len, file);
	rc = eb_deb822_next(&rd, &para, err);
	if (rc == 0)
		rc = eb_error_set(err, EB_EINVALID, "empty Release file");
	if (rc < 0)
		goto done;
	rc = eb_deb822_next(&rd, &extra, err);
	if (rc != 0) {
		if (rc > 0)
			rc = eb_error_set(err, EB_EINVALID,
					  "Release file has more than one paragraph");
		goto done;
	}
	if ((v = eb_deb822_get(&para, "Suite")))
		r.suite = eb_xstrdup(v);
	if ((v = eb_deb822_get(&para, "Codename")))
		r.codename = eb_xstrdup(v);
	v = eb_deb822_get(&para, "Date");
	if (!v) {
		rc = eb_error_set(err, EB_EINVALID, "Release file has no Date");
		goto done;
	}
	r.date_text = eb_xstrdup(v);
	if ((rc = eb_debian_parse_date(v, &r.date, err)) < 0)
		goto done;
	if ((v = eb_deb822_get(&para, "Valid-Until")) &&
	    (rc = eb_debian_parse_date(v, &r.valid_until, err)) < 0)
		goto done;
	split_words(eb_deb822_get(&para, "Architectures"), &r.architectures, &r.narch);
	split_words(eb_deb822_get(&para, "Components"), &r.components, &r.ncomp);
	f = eb_deb822_field(&para, "SHA256");
	if (!f) {
		rc = eb_error_set(err, EB_EINVALID, "Release file has no SHA256 list");
		goto done;
	}
	if ((rc = parse_sha256(&r, f->value, file, f->line, err)) < 0)
		goto done;
	*out = r;
	memset(&r, 0, sizeof(r));
	rc = 0;
done:
	eb_deb822_para_release(&para);
	eb_deb822_para_release(&extra);
	eb_release_release(&r);
	return rc;
}

const struct eb_release_file *eb_release_find(const struct eb_release *r, const char *path)
{
	for (size_t i = 0; i < r->nfiles; i++)
		if (!strcmp(r->files[i].path, path))
			return &r->files[i];
	return NULL;
}

static void fmt_time(time_t t, char out[32])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

int eb_release_check_time(const struct eb_release *r, time_t now, int ignore_valid_until,
			  struct eb_error **err)
{
	char a[32], b[32];

	if (r->date > now + 86400) {
		fmt_time(r->date, a);
		fmt_time(now, b);
		return eb_error_set(err, EB_EINVALID,
				    "Release file is dated %s, in the future (now %s)", a, b);
	}
	if (r->valid_until && !ignore_valid_until && now > r->valid_until) {
		fmt_time(r->valid_until, a);
		fmt_time(now, b);
		eb_error_set(err, EB_EINVALID, "Release file expired on %s (now %s)", a, b);
		eb_error_hint(err, "for a snapshot archive set 'check_valid_until: false' on "
				   "the apt source");
		return -EB_EINVALID;
	}
	return 0;
}
