/*
 * check_sdist.c - python/sdist: file names, and the unpack refusing every
 * archive that would write outside its directory (with nothing left).
 */
#include "testutil.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include "python/sdist.h"
#include "util/fs.h"

START_TEST(filenames)
{
	struct eb_error *err = NULL;
	char *n, *v;

	ck_assert_int_eq(eb_sdist_filename_parse("Foo_Bar-1.0.tar.gz", &n, &v, &err), 0);
	ck_assert_str_eq(n, "foo-bar");
	ck_assert_str_eq(v, "1.0");
	free(n);
	free(v);
	ck_assert_int_eq(eb_sdist_filename_parse("old-style-name-2.0rc1.zip", &n, &v, &err), 0);
	ck_assert_str_eq(n, "old-style-name");
	ck_assert_str_eq(v, "2.0rc1");
	free(n);
	free(v);
	ck_assert(eb_sdist_is_filename("a-1.tar.gz"));
	ck_assert(!eb_sdist_is_filename("a-1-py3-none-any.whl"));
	ck_assert(!eb_sdist_is_filename("d/a-1.tar.gz"));
	ck_assert_int_eq(eb_sdist_filename_parse("nodash.tar.gz", &n, &v, &err), -EB_EINVALID);
	ck_assert_ptr_null(n);
	eb_error_free(err);
	err = NULL;
	ck_assert_int_eq(eb_sdist_filename_parse("a-.tar.gz", &n, &v, &err), -EB_EINVALID);
	eb_error_free(err);
}
END_TEST

struct member {
	const char *path;
	int type; /* AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFCHR; 'h' hardlink */
	const char *data_or_target;
};

static char *write_tar(const char *dir, const char *name, const struct member *m)
{
	char *path = eb_path_join(dir, name);
	struct archive *a = archive_write_new();

	archive_write_add_filter_gzip(a);
	archive_write_set_format_pax_restricted(a);
	ck_assert_int_eq(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (; m->path; m++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, m->path);
		if (m->type == 'h') {
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_hardlink(e, m->data_or_target);
		} else {
			archive_entry_set_filetype(e, (unsigned)m->type);
		}
		archive_entry_set_perm(e, m->type == AE_IFDIR ? 0755 : 0644);
		if (m->type == AE_IFLNK)
			archive_entry_set_symlink(e, m->data_or_target);
		if (m->type == AE_IFREG)
			archive_entry_set_size(e, (la_int64_t)strlen(m->data_or_target));
		ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
		if (m->type == AE_IFREG)
			archive_write_data(a, m->data_or_target, strlen(m->data_or_target));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	return path;
}

START_TEST(unpack_good)
{
	char *tmp = eb_test_tmpdir(), *out = eb_path_join(tmp, "out"), *top = NULL, *f;
	struct eb_error *err = NULL;
	struct eb_buf b = EB_BUF_INIT;
	const struct member m[] = {
		{ "good-1.0/", AE_IFDIR, NULL },
		{ "good-1.0/pyproject.toml", AE_IFREG, "[build-system]\n" },
		{ "good-1.0/src/good/__init__.py", AE_IFREG, "X = 1\n" },
		{ NULL, 0, NULL },
	};
	char *tar = write_tar(tmp, "good-1.0.tar.gz", m);

	ck_assert_int_eq(eb_sdist_unpack(tar, out, &top, &err), 0);
	ck_assert_str_eq(top, "good-1.0");
	f = eb_path_join(out, "src/good/__init__.py");
	ck_assert_int_eq(eb_fs_read_file(&b, f, 0, &err), 0);
	ck_assert_str_eq(b.ptr, "X = 1\n");
	eb_buf_release(&b);
	free(f);
	free(top);
	free(tar);
	free(out);
	eb_fs_remove_tree(tmp, &err);
	free(tmp);
}
END_TEST

static const struct member bad[][4] = {
	{ { "t-1.0/a", AE_IFREG, "a" }, { "t-1.0/../../evil", AE_IFREG, "x" }, { NULL, 0, NULL } },
	{ { "/etc/evil", AE_IFREG, "x" }, { NULL, 0, NULL } },
	{ { "t-1.0/a", AE_IFREG, "a" }, { "t-1.0/link", AE_IFLNK, "/etc/passwd" }, { NULL, 0, NULL } },
	{ { "t-1.0/dir", AE_IFLNK, "/tmp" }, { "t-1.0/dir/evil", AE_IFREG, "x" }, { NULL, 0, NULL } },
	{ { "t-1.0/a", AE_IFREG, "a" }, { "t-1.0/b", 'h', "t-1.0/a" }, { NULL, 0, NULL } },
	{ { "t-1.0/a", AE_IFREG, "a" }, { "other-1.0/b", AE_IFREG, "b" }, { NULL, 0, NULL } },
	{ { "t-1.0/a", AE_IFREG, "a" }, { "t-1.0/a", AE_IFREG, "again" }, { NULL, 0, NULL } },
	{ { "t-1.0/dev", AE_IFCHR, NULL }, { NULL, 0, NULL } },
	{ { "../t-1.0/a", AE_IFREG, "a" }, { NULL, 0, NULL } },
};

START_TEST(unpack_bad)
{
	char *tmp = eb_test_tmpdir(), *out = eb_path_join(tmp, "out");
	struct eb_error *err = NULL;
	char *tar = write_tar(tmp, "t-1.0.tar.gz", bad[_i]);
	struct stat st;

	ck_assert_int_lt(eb_sdist_unpack(tar, out, NULL, &err), 0);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err->msg, "refused"), "message: %s", err->msg);
	ck_assert_int_ne(lstat(out, &st), 0); /* nothing left */
	eb_error_free(err);
	err = NULL;
	free(tar);
	free(out);
	eb_fs_remove_tree(tmp, &err);
	free(tmp);
}
END_TEST

START_TEST(unpack_not_an_archive)
{
	char *tmp = eb_test_tmpdir(), *out = eb_path_join(tmp, "out");
	struct eb_error *err = NULL;
	struct stat st;
	char *path;

	eb_test_write(tmp, "x.tar.gz", "this is not gzip\n");
	path = eb_path_join(tmp, "x.tar.gz");
	ck_assert_int_eq(eb_sdist_unpack(path, out, NULL, &err), -EB_EINVALID);
	ck_assert_int_ne(lstat(out, &st), 0);
	eb_error_free(err);
	err = NULL;
	free(path);
	free(out);
	eb_fs_remove_tree(tmp, &err);
	free(tmp);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("sdist");
	TCase *tc = tcase_create("sdist");

	tcase_add_test(tc, filenames);
	tcase_add_test(tc, unpack_good);
	tcase_add_loop_test(tc, unpack_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, unpack_not_an_archive);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
