/*
 * check_cache.c - the cache seam (oci/cache.h) over the local blob store:
 * records name blobs and are misses when their blob is gone or corrupt;
 * a corrupt blob is evicted on first use; outputs are copies, verified;
 * a backend behind the local directory (here another local store, standing
 * in for a registry) serves records and blobs on a local miss, cannot
 * plant bytes that differ from a digest, and is offered what is recorded.
 */
#include "config.h"

#include <sys/stat.h>

#include "oci/blobstore.h"
#include "oci/cache.h"
#include "testutil.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

static char *tmp;

static void setup(void)
{
	tmp = eb_test_tmpdir();
}

static void teardown(void)
{
	char *cmd = eb_xasprintf("rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(tmp);
}

static struct eb_blobstore *open_store(const char *name)
{
	struct eb_blobstore *bs = NULL;
	struct eb_error *err = NULL;
	char *root = eb_path_join(tmp, name);

	ck_assert_int_eq(eb_blobstore_open(&bs, root, &err), 0);
	free(root);
	return bs;
}

/* Flip one byte of a stored blob, keeping its size. */
static void poison(struct eb_blobstore *bs, const char *digest)
{
	char *path = eb_blobstore_path(bs, digest);
	FILE *f;
	int c;

	ck_assert_int_eq(chmod(path, 0644), 0);
	f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	c = fgetc(f);
	fseek(f, 0, SEEK_SET);
	fputc(c ^ 0xff, f);
	fclose(f);
	free(path);
}

static json_t *rec_for(const char *digest, size_t size)
{
	return json_pack("{s:s, s:I, s:s}", "digest", digest, "size", (json_int_t)size, "note",
			 "mine");
}

static const char KEY[] = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

START_TEST(record_roundtrip_and_misses)
{
	struct eb_blobstore *bs = open_store("a");
	struct eb_error *err = NULL;
	char dg[EB_DIGEST_STR_LEN + 1];
	json_t *rec = NULL, *got = NULL;
	char *path;

	ck_assert_int_eq(eb_blobstore_put(bs, "layer bytes", 11, dg, &err), 0);
	rec = rec_for(dg, 11);
	ck_assert_int_eq(eb_cache_record_put(bs, "layers", KEY, rec, &err), 0);
	ck_assert_int_eq(eb_cache_record_get(bs, "layers", KEY, &got), 1);
	ck_assert_str_eq(json_string_value(json_object_get(got, "note")), "mine");
	json_decref(got);
	/* other kinds are other caches */
	ck_assert_int_eq(eb_cache_record_get(bs, "pylayers", KEY, &got), 0);
	/* kinds cannot name paths */
	ck_assert_int_lt(eb_cache_record_put(bs, "../x", KEY, rec, &err), 0);
	eb_error_free(err);
	err = NULL;
	ck_assert_int_eq(eb_cache_record_get(bs, "../x", KEY, &got), 0);
	json_decref(rec);
	eb_blobstore_free(bs);

	/* a corrupt blob: the record misses and the blob is evicted (a fresh
	 * process, as the next build would be) */
	bs = open_store("a");
	poison(bs, dg);
	ck_assert_int_eq(eb_cache_record_get(bs, "layers", KEY, &got), 0);
	path = eb_blobstore_path(bs, dg);
	ck_assert_int_ne(access(path, F_OK), 0);
	free(path);
	eb_blobstore_free(bs);
}
END_TEST

START_TEST(export_is_a_verified_copy)
{
	struct eb_blobstore *bs = open_store("a");
	struct eb_error *err = NULL;
	char dg[EB_DIGEST_STR_LEN + 1];
	char *src, *dst = eb_path_join(tmp, "out1"), *dst2 = eb_path_join(tmp, "out2");
	struct stat a, b;

	ck_assert_int_eq(eb_blobstore_put(bs, "0123456789", 10, dg, &err), 0);
	ck_assert_int_eq(eb_blobstore_export(bs, dg, 10, dst, &err), 0);
	src = eb_blobstore_path(bs, dg);
	ck_assert_int_eq(stat(src, &a), 0);
	ck_assert_int_eq(stat(dst, &b), 0);
	ck_assert(a.st_ino != b.st_ino);
	ck_assert_int_eq((int)b.st_nlink, 1);
	ck_assert_int_eq((int)b.st_size, 10);
	eb_blobstore_free(bs);

	/* a blob corrupted since: nothing at dst, the blob evicted */
	bs = open_store("a");
	poison(bs, dg);
	ck_assert_int_eq(eb_blobstore_export(bs, dg, 10, dst2, &err), -EB_EINVALID);
	eb_error_free(err);
	err = NULL;
	ck_assert_int_ne(access(dst2, F_OK), 0);
	ck_assert_int_ne(access(src, F_OK), 0);
	/* the wrong size is refused before any byte is copied */
	ck_assert_int_eq(eb_blobstore_put(bs, "0123456789", 10, dg, &err), 0);
	ck_assert_int_eq(eb_blobstore_export(bs, dg, 11, dst2, &err), -EB_EINVALID);
	eb_error_free(err);
	free(src);
	free(dst);
	free(dst2);
	eb_blobstore_free(bs);
}
END_TEST

/* A backend over another local store: what a registry-backed cache does
 * over the network, with the same contract. */
struct fake {
	struct eb_blobstore *remote;
	int lie; /* serve wrong bytes */
	int puts, record_puts;
};

static int fake_has(void *self, const char *digest, int64_t size)
{
	struct fake *f = self;
	return eb_blobstore_has(f->remote, digest, size);
}

static int fake_get(void *self, const char *digest, int64_t size, struct eb_blob_writer *w,
		    struct eb_error **err)
{
	struct fake *f = self;
	struct eb_buf b;
	int r;

	(void)size;
	eb_buf_init(&b, 0);
	r = eb_blobstore_read(f->remote, digest, &b, 0, err);
	if (r == 0) {
		if (f->lie && b.len)
			b.ptr[0] ^= 0xff;
		r = eb_blob_writer_write(w, b.ptr, b.len, err);
	}
	eb_buf_release(&b);
	return r;
}

static int fake_put(void *self, const char *digest, int64_t size, const char *path,
		    struct eb_error **err)
{
	struct fake *f = self;
	struct eb_buf b;
	char got[EB_DIGEST_STR_LEN + 1];
	int r;

	(void)size;
	eb_buf_init(&b, 0);
	r = eb_fs_read_file(&b, path, 0, err);
	if (r == 0)
		r = eb_blobstore_put(f->remote, b.ptr, b.len, got, err);
	if (r == 0)
		ck_assert_str_eq(got, digest);
	eb_buf_release(&b);
	f->puts++;
	return r;
}

static int fake_record_get(void *self, const char *kind, const char *key, json_t **out,
			   struct eb_error **err)
{
	struct fake *f = self;
	(void)err;
	return eb_cache_record_get(f->remote, kind, key, out);
}

static int fake_record_put(void *self, const char *kind, const char *key, const json_t *rec,
			   struct eb_error **err)
{
	struct fake *f = self;
	f->record_puts++;
	return eb_cache_record_put(f->remote, kind, key, rec, err);
}

static const struct eb_cache_backend fake_ops = {
	.name = "fake",
	.has = fake_has,
	.get = fake_get,
	.put = fake_put,
	.record_get = fake_record_get,
	.record_put = fake_record_put,
	.free = NULL,
};

START_TEST(backend_behind_local)
{
	struct fake f = { 0 };
	struct eb_blobstore *local;
	struct eb_error *err = NULL;
	char dg[EB_DIGEST_STR_LEN + 1];
	json_t *rec, *got = NULL;
	char *path;

	/* the remote cache has a layer and its record */
	f.remote = open_store("remote");
	ck_assert_int_eq(eb_blobstore_put(f.remote, "remote layer", 12, dg, &err), 0);
	rec = rec_for(dg, 12);
	ck_assert_int_eq(eb_cache_record_put(f.remote, "layers", KEY, rec, &err), 0);
	json_decref(rec);

	/* a lying backend plants nothing */
	local = open_store("liar");
	f.lie = 1;
	eb_cache_attach(local, &fake_ops, &f);
	ck_assert_int_eq(eb_cache_record_get(local, "layers", KEY, &got), 0);
	ck_assert_int_eq(eb_blobstore_has(local, dg, -1), 0);
	eb_blobstore_free(local);
	f.lie = 0;

	/* an empty local cache: the record and its blob come from behind */
	local = open_store("local");
	eb_cache_attach(local, &fake_ops, &f);
	ck_assert_int_eq(eb_cache_record_get(local, "layers", KEY, &got), 1);
	ck_assert_str_eq(json_string_value(json_object_get(got, "digest")), dg);
	json_decref(got);
	ck_assert_int_eq(eb_blobstore_has(local, dg, 12), 1);
	path = eb_xasprintf("%s/local/layers/%s.json", tmp, eb_digest_hex(KEY));
	ck_assert_int_eq(access(path, F_OK), 0); /* remembered locally */
	free(path);

	/* what is recorded locally is offered to the backend */
	{
		static const char K2[] =
			"sha256:2222222222222222222222222222222222222222222222222222222222222222";
		char d2[EB_DIGEST_STR_LEN + 1];
		ck_assert_int_eq(eb_blobstore_put(local, "built here", 10, d2, &err), 0);
		rec = rec_for(d2, 10);
		ck_assert_int_eq(eb_cache_record_put(local, "pylayers", K2, rec, &err), 0);
		json_decref(rec);
		ck_assert_int_eq(f.puts, 1);
		ck_assert_int_eq(f.record_puts, 1);
		ck_assert_int_eq(eb_cache_record_get(f.remote, "pylayers", K2, &got), 1);
		json_decref(got);
	}
	eb_blobstore_free(local);
	eb_blobstore_free(f.remote);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("seam");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, record_roundtrip_and_misses);
	tcase_add_test(tc, export_is_a_verified_copy);
	tcase_add_test(tc, backend_behind_local);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
