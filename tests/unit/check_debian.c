/*
 * check_debian.c - the Debian parsers of src/debian/: deb822 paragraphs,
 * versions (dpkg's order; expected values from dpkg's own t/version.t and
 * checked with `dpkg --compare-versions` 1.21), relationship fields,
 * Release files and Packages/status indexes.  The comparison against dpkg
 * on thousands of real pairs is tests/cli/apt_version.sh.
 */
#include "config.h"

#include <time.h>

#include "testutil.h"
#include "testlayer.h"

#include "debian/control.h"
#include "debian/deb.h"
#include "debian/depends.h"
#include "debian/packages.h"
#include "debian/release.h"
#include "debian/resolve.h"
#include "debian/version.h"
#include "lock/lock.h"
#include "oci/basefile.h"
#include "oci/basefs.h"
#include "oci/blobstore.h"
#include "oci/image.h"
#include "envspec/spec.h"
#include "util/alloc.h"
#include "util/diag.h"

/* --- deb822 ---------------------------------------------------------------- */

START_TEST(test_deb822_basic)
{
	static const char text[] = "# comment\n"
				   "Package: hello\n"
				   "Version: 2.10-3\n"
				   "Description: greets\n"
				   " the world\n"
				   " .\n"
				   " twice  \n"
				   "\n"
				   "\n"
				   "package: two\r\n"
				   "X-Empty:\n";
	struct eb_deb822 r;
	struct eb_deb822_para p = EB_DEB822_PARA_INIT;
	struct eb_error *err = NULL;

	eb_deb822_init(&r, text, strlen(text), "t");
	ck_assert_int_eq(eb_deb822_next(&r, &p, &err), 1);
	ck_assert_uint_eq(p.n, 3);
	ck_assert_uint_eq(p.line, 2);
	ck_assert_str_eq(eb_deb822_get(&p, "package"), "hello");
	ck_assert_str_eq(eb_deb822_get(&p, "Description"), "greets\n the world\n .\n twice");
	ck_assert_uint_eq(eb_deb822_field(&p, "Description")->line, 4);
	ck_assert_int_eq(eb_deb822_next(&r, &p, &err), 1);
	ck_assert_str_eq(eb_deb822_get(&p, "Package"), "two");
	ck_assert_str_eq(eb_deb822_get(&p, "X-Empty"), "");
	ck_assert_uint_eq(p.line, 10);
	ck_assert_int_eq(eb_deb822_next(&r, &p, &err), 0);
	ck_assert_ptr_null(err);
	eb_deb822_para_release(&p);
}
END_TEST

static const struct {
	const char *text;
	unsigned line;
	const char *msg;
} bad_deb822[] = {
	{ " leading: continuation\n", 1, "continuation line without a field" },
	{ "A: 1\nA: 2\n", 2, "duplicate field" },
	{ "A: 1\nno colon here\n", 2, "not 'Name: value'" },
	{ "A: 1\n: v\n", 2, "empty field name" },
	{ "-A: 1\n", 1, "starts with '-'" },
	{ "A B: 1\n", 1, "invalid character" },
	{ "A: 1\nB: x\0y\n", 2, "NUL byte" },
};

START_TEST(test_deb822_bad)
{
	struct eb_deb822 r;
	struct eb_deb822_para p = EB_DEB822_PARA_INIT;
	struct eb_error *err = NULL;
	const char *t = bad_deb822[_i].text;
	size_t len = strlen(t);

	if (_i == 6)
		len = 12;
	eb_deb822_init(&r, t, len, "ctl");
	ck_assert_int_lt(eb_deb822_next(&r, &p, &err), 0);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(err->file, "ctl");
	ck_assert_uint_eq(err->line, bad_deb822[_i].line);
	ck_assert_msg(strstr(err->msg, bad_deb822[_i].msg), "%s", err->msg);
	ck_assert_uint_eq(p.n, 0);
	eb_error_free(err);
}
END_TEST

/* --- versions ---------------------------------------------------------------- */

static const struct {
	const char *a, *b;
	int cmp;
} ver_cases[] = {
	{ "1.0", "1.0", 0 },
	{ "1.0", "1.0-0", 0 }, /* empty revision == "0" in dpkg's order */
	{ "0:1.0", "1.0", 0 },
	{ "1:0", "9", 1 },
	{ "1.0~rc1", "1.0", -1 },
	{ "1.0~rc1", "1.0~rc1~", 1 },
	{ "1.0~", "1.0", -1 },
	{ "1.0", "1.0+b1", -1 },
	{ "1.0", "1.0.0", -1 },
	{ "1.0a", "1.0", 1 },
	{ "1.0a", "1.0+", -1 }, /* letters before other characters */
	{ "1.0-1", "1.0-1ubuntu1", -1 },
	{ "1.0-1", "1.0-1~bpo1", 1 },
	{ "2.10", "2.9", 1 },
	{ "007", "7", 0 },
	{ "1.2.3-4", "1.2.3-10", -1 },
	{ "12.2.0-14", "12.2.0-14+deb12u1", -1 },
	{ "1:1.24.2-1+deb12u1", "1:1.24.2-1", 1 },
	{ "2:1", "10:0", -1 },
	{ "1.0-a", "1.0-A", 1 },
	{ "1-2-3", "1-2", 1 }, /* upstream "1-2", revision "3" vs upstream "1" */
	{ "0.0~git20200101", "0.0", -1 },
	{ "3.11.2-6+deb12u6", "3.11.2-6+deb12u5", 1 },
};

START_TEST(test_version_order)
{
	const char *a = ver_cases[_i].a, *b = ver_cases[_i].b;
	int want = ver_cases[_i].cmp;
	int got = eb_debver_cmp_str(a, b);

	ck_assert_msg((got > 0) - (got < 0) == want, "%s vs %s: %d, want %d", a, b, got, want);
	got = eb_debver_cmp_str(b, a);
	ck_assert_msg((got > 0) - (got < 0) == -want, "%s vs %s reversed", a, b);
}
END_TEST

START_TEST(test_version_parse)
{
	struct eb_debver v;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_debver_parse(&v, "1:1.24.2-1+deb12u1", &err), 0);
	ck_assert_uint_eq(v.epoch, 1);
	ck_assert_str_eq(v.upstream, "1.24.2");
	ck_assert_str_eq(v.revision, "1+deb12u1");
	eb_debver_release(&v);
	ck_assert_int_eq(eb_debver_parse(&v, "2.0-rc1-3", &err), 0);
	ck_assert_str_eq(v.upstream, "2.0-rc1");
	ck_assert_str_eq(v.revision, "3");
	eb_debver_release(&v);
	ck_assert_int_eq(eb_debver_parse(&v, "5", &err), 0);
	ck_assert_str_eq(v.revision, "");
	eb_debver_release(&v);
	ck_assert_ptr_null(err);
}
END_TEST

static const struct {
	const char *v;
	unsigned col;
	const char *msg;
} bad_versions[] = {
	{ "", 1, "empty" },
	{ "a1.0", 1, "start with a digit" },
	{ "1.0 1", 4, "whitespace" },
	{ ":1.0", 1, "empty epoch" },
	{ "x:1.0", 1, "epoch is not a number" },
	{ "1:", 3, "nothing after the epoch" },
	{ "1.0-", 5, "empty revision" },
	{ "1.0_1", 4, "invalid character in upstream" },
	{ "1.0-1_2", 6, "invalid character in revision" },
	{ "99999999999:1", 10, "too big" },
	{ "*", 1, "start with a digit" },
};

START_TEST(test_version_bad)
{
	struct eb_debver v;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_debver_parse(&v, bad_versions[_i].v, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err->msg, bad_versions[_i].msg), "%s: %s", bad_versions[_i].v,
		      err->msg);
	ck_assert_uint_eq(err->col, bad_versions[_i].col);
	eb_error_free(err);
}
END_TEST

START_TEST(test_version_satisfies)
{
	ck_assert(eb_debver_satisfies("12.2.0-14", EB_REL_GE, "12.2.0"));
	ck_assert(!eb_debver_satisfies("12.2.0-14", EB_REL_LT, "12.2.0-14"));
	ck_assert(eb_debver_satisfies("12.2.0-14", EB_REL_LE, "12.2.0-14"));
	ck_assert(eb_debver_satisfies("12.2.0-14", EB_REL_EQ, "12.2.0-14"));
	ck_assert(eb_debver_satisfies("1.0", EB_REL_GT, "1.0~"));
	ck_assert(eb_debver_satisfies("anything", EB_REL_ANY, NULL));
	ck_assert_str_eq(eb_debrel_str(EB_REL_GT), ">>");
}
END_TEST

/* --- relationship fields ------------------------------------------------------ */

START_TEST(test_depends)
{
	struct eb_debdeps d;
	struct eb_error *err = NULL;
	const char *f = "libc6 (>= 2.34), libgcc-s1 (>=3.0) | libgcc1,python3:any (<<3.12),\n"
			" cpp (= 4:12.2.0-3), xx:amd64, yy (< 1), zz (> 2) ,";
	char *s;

	ck_assert_int_eq(eb_debdeps_parse(&d, f, 1, &err), 0);
	ck_assert_uint_eq(d.n, 7);
	ck_assert_str_eq(d.groups[0].alt[0].name, "libc6");
	ck_assert_int_eq(d.groups[0].alt[0].rel, EB_REL_GE);
	ck_assert_str_eq(d.groups[0].alt[0].version, "2.34");
	ck_assert_uint_eq(d.groups[1].n, 2);
	ck_assert_str_eq(d.groups[1].alt[1].name, "libgcc1");
	ck_assert_int_eq(d.groups[1].alt[1].rel, EB_REL_ANY);
	ck_assert_str_eq(d.groups[2].alt[0].archq, "any");
	ck_assert_int_eq(d.groups[2].alt[0].rel, EB_REL_LT);
	ck_assert_str_eq(d.groups[3].alt[0].version, "4:12.2.0-3");
	ck_assert_str_eq(d.groups[4].alt[0].archq, "amd64");
	ck_assert_int_eq(d.groups[5].alt[0].rel, EB_REL_LE);
	ck_assert_int_eq(d.groups[6].alt[0].rel, EB_REL_GE);
	s = eb_debdeps_to_string(&d);
	ck_assert_str_eq(s, "libc6 (>= 2.34), libgcc-s1 (>= 3.0) | libgcc1, python3:any (<< 3.12), "
			    "cpp (= 4:12.2.0-3), xx:amd64, yy (<= 1), zz (>= 2)");
	free(s);
	eb_debdeps_release(&d);
	ck_assert_int_eq(eb_debdeps_parse(&d, NULL, 1, &err), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_int_eq(eb_debdeps_parse(&d, "  ", 1, &err), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_ptr_null(err);
}
END_TEST

static const struct {
	const char *f;
	int alts;
	unsigned col;
	const char *msg;
} bad_deps[] = {
	{ "aa | bb", 0, 4, "alternatives are not allowed" },
	{ "a", 1, 1, "invalid package name" },
	{ "libc6 (~ 1)", 1, 8, "expected a relation" },
	{ "libc6 (>= )", 1, 11, "missing version" },
	{ "libc6 (>= 1", 1, 12, "expected ')'" },
	{ "libc6 (>= x1)", 1, 11, "invalid version" },
	{ "libc6, , bb", 1, 8, "expected a package name" },
	{ "Libc6", 1, 1, "invalid package name" },
	{ "aa [amd64]", 1, 4, "architecture restrictions" },
	{ "aa <!nocheck>", 1, 4, "build profiles" },
	{ "aa bb", 1, 4, "expected ',' or '|'" },
	{ "aa:", 1, 4, "empty architecture qualifier" },
};

START_TEST(test_depends_bad)
{
	struct eb_debdeps d;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_debdeps_parse(&d, bad_deps[_i].f, bad_deps[_i].alts, &err),
			 -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, bad_deps[_i].msg), "%s: %s", bad_deps[_i].f, err->msg);
	ck_assert_uint_eq(err->col, bad_deps[_i].col);
	ck_assert_ptr_null(d.groups);
	eb_error_free(err);
}
END_TEST

/* --- Release ---------------------------------------------------------------- */

static const char release_text[] =
	"Origin: Debian\n"
	"Suite: stable\n"
	"Codename: bookworm\n"
	"Date: Sat, 10 Jun 2023 08:55:34 UTC\n"
	"Valid-Until: Sat, 17 Jun 2023 08:55:34 +0000\n"
	"Architectures: all amd64 arm64\n"
	"Components: main contrib\n"
	"MD5Sum:\n"
	" 0123 10 main/binary-amd64/Packages\n"
	"SHA256:\n"
	" 0000000000000000000000000000000000000000000000000000000000000001 1234 main/binary-amd64/Packages\n"
	" 0000000000000000000000000000000000000000000000000000000000000002 99 main/binary-amd64/Packages.xz\n";

START_TEST(test_release)
{
	struct eb_release r;
	struct eb_error *err = NULL;
	const struct eb_release_file *f;

	ck_assert_int_eq(eb_release_parse(&r, release_text, strlen(release_text), "R", &err), 0);
	ck_assert_str_eq(r.codename, "bookworm");
	ck_assert_str_eq(r.suite, "stable");
	ck_assert_int_eq((long long)r.date, 1686387334LL);
	ck_assert_int_eq((long long)r.valid_until, 1686387334LL + 7 * 86400);
	ck_assert_uint_eq(r.narch, 3);
	ck_assert_str_eq(r.architectures[2], "arm64");
	ck_assert_uint_eq(r.ncomp, 2);
	ck_assert_uint_eq(r.nfiles, 2);
	f = eb_release_find(&r, "main/binary-amd64/Packages.xz");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->size, 99);
	ck_assert_str_eq(f->sha256 + 63, "2");
	ck_assert_ptr_null(eb_release_find(&r, "main/binary-arm64/Packages.xz"));
	/* Valid-Until: inside, after, after with the opt-out */
	ck_assert_int_eq(eb_release_check_time(&r, r.date + 3600, 0, &err), 0);
	ck_assert_int_eq(eb_release_check_time(&r, r.valid_until + 1, 0, &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, "expired on 2023-06-17 08:55:34 UTC"), "%s", err->msg);
	ck_assert_ptr_nonnull(err->hint);
	eb_error_clear(&err);
	ck_assert_int_eq(eb_release_check_time(&r, r.valid_until + 1, 1, &err), 0);
	ck_assert_int_eq(eb_release_check_time(&r, r.date - 2 * 86400, 1, &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, "in the future"), "%s", err->msg);
	eb_error_free(err);
	eb_release_release(&r);
}
END_TEST

static const struct {
	const char *text, *msg;
} bad_release[] = {
	{ "Suite: x\n", "no Date" },
	{ "Date: yesterday\n", "invalid date" },
	{ "Date: Sat, 10 Jun 2023 08:55:34 CEST\n", "time zone" },
	{ "Date: Sat, 10 Jun 2023 08:55:34 UTC\n", "no SHA256" },
	{ "Date: Sat, 10 Jun 2023 08:55:34 UTC\nSHA256:\n abc 1 x\n", "invalid SHA256 entry" },
	{ "Date: Sat, 10 Jun 2023 08:55:34 UTC\nSHA256:\n "
	  "0000000000000000000000000000000000000000000000000000000000000001 1 ../x\n",
	  "invalid SHA256 entry" },
	{ "Date: Sat, 10 Jun 2023 08:55:34 UTC\nSHA256:\n\nOther: x\n", "more than one" },
	{ "", "empty" },
};

START_TEST(test_release_bad)
{
	struct eb_release r;
	struct eb_error *err = NULL;
	const char *t = bad_release[_i].text;

	ck_assert_int_lt(eb_release_parse(&r, t, strlen(t), "R", &err), 0);
	ck_assert_msg(strstr(err->msg, bad_release[_i].msg), "%s", err->msg);
	eb_error_free(err);
}
END_TEST

START_TEST(test_dates)
{
	time_t t;

	ck_assert_int_eq(eb_debian_parse_date("Thu, 01 Jan 1970 00:00:00 UTC", &t, NULL), 0);
	ck_assert_int_eq((long long)t, 0);
	ck_assert_int_eq(eb_debian_parse_date("01 Jan 1970 01:00:00 +0100", &t, NULL), 0);
	ck_assert_int_eq((long long)t, 0);
	ck_assert_int_eq(eb_debian_parse_date("Thu, 01 Jan 1970 00:00:00 -0030", &t, NULL), 0);
	ck_assert_int_eq((long long)t, 1800);
	ck_assert_int_lt(eb_debian_parse_date("Thu, 01 Foo 1970 00:00:00 UTC", &t, NULL), 0);
	ck_assert_int_lt(eb_debian_parse_date("Thu, 01 Jan 1970 00:00:00 UTC x", &t, NULL), 0);
}
END_TEST

/* --- Packages and status -------------------------------------------------------- */

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const char packages_text[] =
	"Package: libgomp1\nVersion: 12.2.0-14\nArchitecture: amd64\n"
	"Filename: pool/main/g/gcc-12/libgomp1_12.2.0-14_amd64.deb\nSize: 120\nSHA256: " SHA_A "\n"
	"Depends: gcc-12-base (= 12.2.0-14), libc6 (>= 2.34)\nMulti-Arch: same\n\n"
	"Package: libgomp1\nVersion: 12.2.0-14+deb12u1\nArchitecture: amd64\n"
	"Filename: pool/main/g/gcc-12/libgomp1_12.2.0-14+deb12u1_amd64.deb\nSize: 121\nSHA256: " SHA_A "\n\n"
	"Package: a-first\nVersion: 1\nArchitecture: all\n"
	"Filename: pool/a.deb\nSize: 1\nSHA256: " SHA_A "\nProvides: virt (= 2)\n";

START_TEST(test_packages)
{
	struct eb_debindex idx = EB_DEBINDEX_INIT;
	struct eb_error *err = NULL;
	const struct eb_debpkg *p;
	size_t n;

	ck_assert_int_eq(eb_debindex_add(&idx, packages_text, strlen(packages_text), "P",
					 EB_DEBINDEX_PACKAGES, &err), 0);
	eb_debindex_sort(&idx);
	ck_assert_uint_eq(idx.n, 3);
	ck_assert_str_eq(idx.pkgs[0].name, "a-first");
	p = eb_debindex_lookup(&idx, "libgomp1", &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(p[0].version, "12.2.0-14+deb12u1"); /* newest first */
	p = eb_debindex_find(&idx, "libgomp1", "amd64", "12.2.0-14");
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->size, 120);
	ck_assert_str_eq(p->multi_arch, "same");
	ck_assert_str_eq(p->source, "P");
	ck_assert_uint_eq(p->line, 1);
	ck_assert_ptr_null(eb_debindex_find(&idx, "libgomp1", "arm64", NULL));
	ck_assert_ptr_null(eb_debindex_lookup(&idx, "zzz", &n));
	ck_assert_uint_eq(n, 0);
	eb_debindex_release(&idx);
}
END_TEST

static const struct {
	const char *text, *msg;
	unsigned line;
} bad_packages[] = {
	{ "Version: 1\n", "no Package", 1 },
	{ "Package: xy\n", "has no Version", 1 },
	{ "Package: xy\nVersion: 1\nArchitecture: all\nFilename: a\nSize: 1\nSHA256: abc\n",
	  "invalid SHA256", 1 },
	{ "Package: xy\nVersion: 1\nArchitecture: all\nFilename: ../a\nSize: 1\nSHA256: " SHA_A "\n",
	  "unsafe Filename", 1 },
	{ "Package: xy\nVersion: 1\nArchitecture: all\nFilename: a\nSize: -1\nSHA256: " SHA_A "\n",
	  "invalid Size", 1 },
	{ "Package: xy\nVersion: v1\nArchitecture: all\nFilename: a\nSize: 1\nSHA256: " SHA_A "\n",
	  "invalid Debian version", 1 },
	{ "Package: xy\nVersion: 1\nArchitecture: all\nFilename: a\nSize: 1\nSHA256: " SHA_A
	  "\nDepends: aa (>> )\n", "Depends: invalid relationship", 7 },
};

START_TEST(test_packages_bad)
{
	struct eb_debindex idx = EB_DEBINDEX_INIT;
	struct eb_error *err = NULL;
	const char *t = bad_packages[_i].text;

	ck_assert_int_lt(eb_debindex_add(&idx, t, strlen(t), "P", EB_DEBINDEX_PACKAGES, &err), 0);
	ck_assert_msg(strstr(err->msg, bad_packages[_i].msg), "%s", err->msg);
	ck_assert_str_eq(err->file, "P");
	ck_assert_uint_eq(err->line, bad_packages[_i].line);
	ck_assert_uint_eq(idx.n, 0);
	eb_error_free(err);
	eb_debindex_release(&idx);
}
END_TEST

START_TEST(test_status)
{
	static const char text[] = "Package: libc6\nStatus: install ok installed\n"
				   "Version: 2.36-9+deb12u10\nArchitecture: amd64\n\n"
				   "Package: old\nStatus: deinstall ok config-files\n";
	struct eb_debindex idx = EB_DEBINDEX_INIT;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_debindex_add(&idx, text, strlen(text), "status", EB_DEBINDEX_STATUS,
					 &err), 0);
	eb_debindex_sort(&idx);
	ck_assert_uint_eq(idx.n, 2);
	ck_assert(eb_debpkg_installed(eb_debindex_find(&idx, "libc6", NULL, NULL)));
	ck_assert(!eb_debpkg_installed(eb_debindex_find(&idx, "old", NULL, NULL)));
	eb_debindex_release(&idx);
}
END_TEST

/* the real machine's status file parses */
START_TEST(test_status_real)
{
	struct eb_debindex idx = EB_DEBINDEX_INIT;
	struct eb_error *err = NULL;
	FILE *f = fopen("/var/lib/dpkg/status", "r");
	char *data;
	size_t len;

	if (!f) {
		fprintf(stdout, "# SKIP no /var/lib/dpkg/status\n");
		return;
	}
	data = eb_xmalloc(64 << 20);
	len = fread(data, 1, 64 << 20, f);
	fclose(f);
	ck_assert_int_eq(eb_debindex_add(&idx, data, len, "/var/lib/dpkg/status",
					 EB_DEBINDEX_STATUS, &err), 0);
	eb_debindex_sort(&idx);
	ck_assert(eb_debpkg_installed(eb_debindex_find(&idx, "dpkg", NULL, NULL)));
	eb_debindex_release(&idx);
	free(data);
}
END_TEST

START_TEST(test_decompress)
{
	struct eb_buf out;
	struct eb_error *err = NULL;
	/* "hello\n" gzip-compressed (gzip -n) */
	static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					    0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xe7, 0x02, 0x00,
					    0x20, 0x30, 0x3a, 0x36, 0x06, 0x00, 0x00, 0x00 };

	ck_assert_int_eq(eb_debian_decompress(&out, gz, sizeof(gz), 100, &err), 0);
	ck_assert_str_eq(out.ptr, "hello\n");
	eb_buf_release(&out);
	ck_assert_int_eq(eb_debian_decompress(&out, "plain\n", 6, 100, &err), 0);
	ck_assert_str_eq(out.ptr, "plain\n");
	eb_buf_release(&out);
	ck_assert_int_eq(eb_debian_decompress(&out, gz, sizeof(gz), 3, &err), -EB_ETOOBIG);
	eb_error_clear(&err);
	ck_assert_int_lt(eb_debian_decompress(&out, gz, sizeof(gz) - 6, 100, &err), 0);
	eb_error_free(err);
}
END_TEST

/* --- resolving ------------------------------------------------------------------ */

#define PKG(name, ver, arch, extra)                                                     \
	"Package: " name "\nVersion: " ver "\nArchitecture: " arch "\nFilename: pool/" name \
	"_" ver ".deb\nSize: 10\nSHA256: " SHA_A "\n" extra "\n"

static const char repo_text[] =
	PKG("app", "1.0-1", "amd64", "Depends: libfoo1 (>= 1.2), libbar1 | libbaz1, python3:any, mta\n")
	PKG("libfoo1", "1.1-1", "amd64", "")
	PKG("libfoo1", "1.3-1", "amd64", "Pre-Depends: libc6 (>= 2.30)\n")
	PKG("libbar1", "2.0-1", "amd64", "")
	PKG("libbaz1", "3.0-1", "amd64", "")
	PKG("python3", "3.11.2-1", "amd64", "Multi-Arch: allowed\n")
	PKG("postfix", "3.7-1", "amd64", "Provides: mail-transport-agent, mta\nConflicts: exim4\n")
	PKG("exim4", "4.96-1", "amd64", "Provides: mta\n")
	PKG("tool", "1.0-1", "all", "Breaks: libbar1 (<< 2.1)\n")
	PKG("needsver", "1.0-1", "amd64", "Depends: virt (>= 2)\n")
	PKG("provider", "1.0-1", "amd64", "Provides: virt (= 3)\n")
	PKG("oldprov", "1.0-1", "amd64", "Provides: virt\n");

static const char base_status[] = "Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\n"
				  "Architecture: amd64\n\n"
				  "Package: python3\nStatus: install ok installed\nVersion: 3.11.2-1\n"
				  "Architecture: amd64\n";

static void load_repo(struct eb_apt_indexes *ix, struct eb_debindex *st)
{
	memset(ix, 0, sizeof(*ix));
	ck_assert_int_eq(eb_debindex_add(&ix->idx, repo_text, strlen(repo_text), "Packages",
					 EB_DEBINDEX_PACKAGES, NULL), 0);
	eb_debindex_sort(&ix->idx);
	ix->source_of = eb_xcalloc(1, sizeof(size_t));
	*st = (struct eb_debindex)EB_DEBINDEX_INIT;
	ck_assert_int_eq(eb_debindex_add(st, base_status, strlen(base_status), "status",
					 EB_DEBINDEX_STATUS, NULL), 0);
	eb_debindex_sort(st);
}

static const struct eb_apt_source test_src = { "http://127.0.0.1:1/debian/", "s", NULL, 0, "k", 1 };

static int resolve(const char *const *pins, size_t n, struct eb_apt_resolution *res,
		   struct eb_error **err)
{
	struct eb_apt_indexes ix;
	struct eb_debindex st;
	struct eb_apt_pin p[16];
	char *copies[16];
	int rc;

	load_repo(&ix, &st);
	for (size_t i = 0; i < n; i++) {
		copies[i] = strdup(pins[i]);
		char *eq = strchr(copies[i], '=');
		*eq = '\0';
		p[i].name = copies[i];
		p[i].arch = NULL;
		p[i].version = eq + 1;
	}
	rc = eb_apt_resolve(res, &ix, &test_src, &st, p, n, "amd64", err);
	for (size_t i = 0; i < n; i++)
		free(copies[i]);
	eb_apt_indexes_release(&ix);
	eb_debindex_release(&st);
	return rc;
}

START_TEST(test_resolve_complete)
{
	const char *pins[] = { "app=1.0-1", "libfoo1=1.3-1", "libbaz1=3.0-1", "postfix=3.7-1" };
	struct eb_apt_resolution res;
	struct eb_error *err = NULL;

	/* alternatives (libbaz1 for libbar1 | libbaz1), python3:any from the
	 * base, a virtual package (mta) through Provides, Pre-Depends on the
	 * base's libc6 */
	ck_assert_msg(resolve(pins, 4, &res, &err) == 0, "%s", err ? err->msg : "");
	ck_assert_uint_eq(res.n, 4);
	ck_assert_str_eq(res.pkgs[0].name, "app");
	ck_assert_str_eq(res.pkgs[0].url, "http://127.0.0.1:1/debian/pool/app_1.0-1.deb");
	ck_assert_str_eq(res.pkgs[0].sha256, SHA_A);
	ck_assert_uint_eq(res.pkgs[0].size, 10);
	eb_apt_resolution_release(&res);
}
END_TEST

START_TEST(test_resolve_missing_all_at_once)
{
	const char *pins[] = { "app=1.0-1" };
	struct eb_apt_resolution res;
	struct eb_error *err = NULL;

	ck_assert_int_eq(resolve(pins, 1, &res, &err), -EB_EINVALID);
	/* every gap in one message, the newest satisfying versions; a virtual
	 * package suggests the first provider by name */
	ck_assert_msg(strstr(err->msg, "app=1.0-1 needs libfoo1 (>= 1.2)"), "%s", err->msg);
	ck_assert_msg(strstr(err->msg, "app=1.0-1 needs libbar1"), "%s", err->msg);
	ck_assert_msg(strstr(err->msg, "app=1.0-1 needs mta"), "%s", err->msg);
	ck_assert_msg(strstr(err->msg, "add: libfoo1=1.3-1 libbar1=2.0-1 exim4=4.96-1"), "%s",
		      err->msg);
	ck_assert_ptr_nonnull(err->hint);
	eb_error_free(err);
}
END_TEST

START_TEST(test_resolve_version_relation)
{
	const char *pins[] = { "app=1.0-1", "libfoo1=1.1-1", "libbar1=2.0-1", "exim4=4.96-1" };
	struct eb_apt_resolution res;
	struct eb_error *err = NULL;

	/* libfoo1 1.1 is pinned but app needs >= 1.2 */
	ck_assert_int_eq(resolve(pins, 4, &res, &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, "needs libfoo1 (>= 1.2)"), "%s", err->msg);
	eb_error_free(err);
}
END_TEST

START_TEST(test_resolve_versioned_provides)
{
	const char *ok[] = { "needsver=1.0-1", "provider=1.0-1" };
	const char *bad[] = { "needsver=1.0-1", "oldprov=1.0-1" };
	struct eb_apt_resolution res;
	struct eb_error *err = NULL;

	ck_assert_msg(resolve(ok, 2, &res, &err) == 0, "%s", err ? err->msg : "");
	eb_apt_resolution_release(&res);
	/* an unversioned Provides does not satisfy a versioned dependency */
	ck_assert_int_eq(resolve(bad, 2, &res, &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, "add: provider=1.0-1"), "%s", err->msg);
	eb_error_free(err);
}
END_TEST

START_TEST(test_resolve_conflicts_breaks)
{
	const char *c[] = { "postfix=3.7-1", "exim4=4.96-1" };
	const char *b[] = { "tool=1.0-1", "libbar1=2.0-1" };
	struct eb_apt_resolution res;
	struct eb_error *err = NULL;

	ck_assert_int_eq(resolve(c, 2, &res, &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, "postfix=3.7-1 conflicts with exim4 (pinned: exim4=4.96-1)"),
		      "%s", err->msg);
	eb_error_clear(&err);
	ck_assert_int_eq(resolve(b, 2, &res, &err), -EB_EINVALID);
	ck_assert_msg(strstr(err->msg, "tool=1.0-1 breaks libbar1 (<< 2.1)"), "%s", err->msg);
	eb_error_free(err);
}
END_TEST

START_TEST(test_resolve_unknown)
{
	const char *pins[] = { "libfoo1=9.9-9" };
	struct eb_apt_resolution res;
	struct eb_error *err = NULL;

	ck_assert_int_eq(resolve(pins, 1, &res, &err), -EB_ENOTFOUND);
	ck_assert_msg(strstr(err->msg, "libfoo1=9.9-9 is not in the sources; they have 1.3-1 (amd64), "
				       "1.1-1 (amd64)"), "%s", err->msg);
	eb_error_free(err);
	ck_assert_str_eq(eb_apt_arch_for_platform("linux/arm64"), "arm64");
	ck_assert_str_eq(eb_apt_arch_for_platform("linux/arm/v7"), "armhf");
	ck_assert_ptr_null(eb_apt_arch_for_platform("windows/amd64"));
}
END_TEST

/* --- the lock's checksum covers the apt keyrings ------------------------------------- */

START_TEST(test_lock_checksum_keyring)
{
	char *dir = eb_test_tmpdir();
	char path[4200], a[65], b[65], c[65];
	struct eb_spec *spec = NULL;
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_error *err = NULL;

	eb_test_write(dir, "keyring.gpg", "key one\n");
	eb_test_write(dir, "envbuild.yaml",
		      "version: 1\nname: t\napt_sources:\n  - url: http://127.0.0.1:1/d\n"
		      "    suite: s\n    components: [main]\n    signed_by: keyring.gpg\n"
		      "targets:\n  t:\n    base: debian:12.5\n    apt: [hello=2.10-3]\n");
	snprintf(path, sizeof(path), "%s/envbuild.yaml", dir);
	ck_assert_int_eq(eb_spec_load(&spec, path, &diags, &err), 0);
	ck_assert_ptr_nonnull(spec);
	ck_assert_uint_eq(diags.n, 0);
	ck_assert_int_eq(eb_lock_checksum(a, spec, &err), 0);
	ck_assert_int_eq(eb_lock_checksum(b, spec, &err), 0);
	ck_assert_str_eq(a, b);
	eb_test_write(dir, "keyring.gpg", "key two\n");
	ck_assert_int_eq(eb_lock_checksum(c, spec, &err), 0);
	ck_assert_str_ne(a, c);
	eb_spec_free(spec);
	eb_diag_list_release(&diags);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
	free(dir);
}
END_TEST

/* --- the base's dpkg status and links: the scan and the view ---------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a->b c->d" of a scan's links, sorted (caller frees) */
static char *links_text(char **p, char **t, size_t n)
{
	char **v = eb_xcalloc(n + 1, sizeof(*v));
	struct eb_buf b;

	eb_buf_init(&b, 0);
	for (size_t i = 0; i < n; i++)
		v[i] = eb_xasprintf("%s->%s", p[i], t[i]);
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		eb_buf_putf(&b, "%s%s", i ? " " : "", v[i]);
		free(v[i]);
	}
	free(v);
	return eb_buf_detach(&b, NULL);
}

/* The view (oci/basefs.h keeps dpkg's status) gives what the scan of the
 * layers gives, whiteouts and a replaced status included; and once the
 * view is cached it needs no layer at all. */
START_TEST(test_base_from_view)
{
	char *dir = eb_test_tmpdir();
	struct eb_blobstore *bs = NULL;
	struct eb_error *err = NULL;
	const char *l1[] = { "d usr 0755", "d usr/bin 0755", "d usr/lib 0755", "l bin usr/bin",
			     "l lib /usr/lib", "l sbin usr/sbin", "d etc 0755", "l etc/alt ../usr/lib",
			     "d var 0755", "d var/lib 0755", "d var/lib/dpkg 0755",
			     "f var/lib/dpkg/status Package: old\nStatus: install ok installed\n",
			     "f etc/passwd root:x:0:0:root:/root:/bin/sh\n", NULL };
	const char *l2[] = { "f .wh.sbin", "f var/lib/dpkg/status Package: new\nStatus: install ok installed\n",
			     "l lib64 usr/lib64", NULL };
	char *paths[2];
	struct eb_descriptor d[2];
	struct eb_basefs *fs = NULL;
	struct eb_buf s1, s2, pw;
	char **p1, **t1, **p2, **t2;
	size_t n1, n2;

	ck_assert_int_eq(eb_blobstore_open(&bs, dir, &err), 0);
	paths[0] = eb_test_layer(bs, l1);
	paths[1] = eb_test_layer(bs, l2);
	memset(d, 0, sizeof(d));
	for (int i = 0; i < 2; i++)
		d[i].digest = eb_xasprintf("sha256:%s", strrchr(paths[i], '/') + 1);

	ck_assert_int_eq(eb_debian_base_scan((const char *const *)paths, 2, &s1, &p1, &t1, &n1, &err), 0);
	ck_assert_int_eq(eb_basefs_load(&fs, bs, d, 2, &err), 0);
	ck_assert_int_eq(eb_debian_base_from_view(fs, (const char *const *)paths, 2, &s2, &p2, &t2,
						  &n2, &err), 0);
	ck_assert_str_eq(s1.ptr, "Package: new\nStatus: install ok installed\n");
	ck_assert_str_eq(s2.ptr, s1.ptr);
	{
		eb_autofree char *a = links_text(p1, t1, n1);
		eb_autofree char *b = links_text(p2, t2, n2);
		ck_assert_str_eq(a, "bin->usr/bin lib->usr/lib lib64->usr/lib64");
		ck_assert_str_eq(b, a);
	}
	eb_debian_links_free(p1, t1, n1);
	eb_debian_links_free(p2, t2, n2);
	eb_buf_release(&s1);
	eb_buf_release(&s2);
	eb_basefs_free(fs);

	/* the cached view, its layers gone: the kept files still read */
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(unlink(paths[i]), 0);
	ck_assert_int_eq(eb_basefs_load(&fs, bs, d, 2, &err), 0);
	ck_assert_int_eq(eb_debian_base_from_view(fs, (const char *const *)paths, 2, &s2, &p2, &t2,
						  &n2, &err), 0);
	ck_assert_str_eq(s2.ptr, "Package: new\nStatus: install ok installed\n");
	eb_debian_links_free(p2, t2, n2);
	eb_buf_release(&s2);
	eb_buf_init(&pw, 0);
	ck_assert_int_eq(eb_basefile_read(fs, (const char *const *)paths, 2, "/etc/passwd", 1024, &pw, &err), 1);
	ck_assert_str_eq(pw.ptr, "root:x:0:0:root:/root:/bin/sh\n");
	eb_buf_truncate(&pw, 0);
	/* the size cap holds for kept bytes too */
	ck_assert_int_eq(eb_basefile_read(fs, (const char *const *)paths, 2, "etc/passwd", 8, &pw, &err), -EB_ETOOBIG);
	eb_error_free(err);
	err = NULL;
	eb_buf_release(&pw);
	eb_basefs_free(fs);
	for (int i = 0; i < 2; i++) {
		free(paths[i]);
		free(d[i].digest);
	}
	eb_blobstore_free(bs);
	{
		eb_autofree char *cmd = eb_xasprintf("chmod -R u+w '%s' && rm -rf '%s'", dir, dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	free(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("debian");
	TCase *tc;

	tc = tcase_create("deb822");
	tcase_add_test(tc, test_deb822_basic);
	tcase_add_loop_test(tc, test_deb822_bad, 0, sizeof(bad_deb822) / sizeof(bad_deb822[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("version");
	tcase_add_loop_test(tc, test_version_order, 0, sizeof(ver_cases) / sizeof(ver_cases[0]));
	tcase_add_test(tc, test_version_parse);
	tcase_add_loop_test(tc, test_version_bad, 0,
			    sizeof(bad_versions) / sizeof(bad_versions[0]));
	tcase_add_test(tc, test_version_satisfies);
	suite_add_tcase(s, tc);

	tc = tcase_create("depends");
	tcase_add_test(tc, test_depends);
	tcase_add_loop_test(tc, test_depends_bad, 0, sizeof(bad_deps) / sizeof(bad_deps[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("release");
	tcase_add_test(tc, test_release);
	tcase_add_loop_test(tc, test_release_bad, 0, sizeof(bad_release) / sizeof(bad_release[0]));
	tcase_add_test(tc, test_dates);
	suite_add_tcase(s, tc);

	tc = tcase_create("packages");
	tcase_add_test(tc, test_packages);
	tcase_add_loop_test(tc, test_packages_bad, 0,
			    sizeof(bad_packages) / sizeof(bad_packages[0]));
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_status_real);
	tcase_add_test(tc, test_decompress);
	tcase_add_test(tc, test_base_from_view);
	suite_add_tcase(s, tc);

	tc = tcase_create("resolve");
	tcase_add_test(tc, test_resolve_complete);
	tcase_add_test(tc, test_resolve_missing_all_at_once);
	tcase_add_test(tc, test_resolve_version_relation);
	tcase_add_test(tc, test_resolve_versioned_provides);
	tcase_add_test(tc, test_resolve_conflicts_breaks);
	tcase_add_test(tc, test_resolve_unknown);
	tcase_add_test(tc, test_lock_checksum_keyring);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
