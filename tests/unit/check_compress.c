/*
 * check_compress.c - the parallel layer compressor: the same bytes for
 * 1, 2, 4 and 8 threads and whatever the machine's CPU count, gzip as
 * one independent member per 1 MiB chunk, streams that zlib/libzstd (and
 * gzip -t / zstd -t) accept and that decompress to the input, and a layer
 * whose digest and diff_id do not move with the thread count.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "oci/blobstore.h"
#include "oci/compress.h"
#include "oci/deflate.h"
#include "oci/gunzip.h"
#include "oci/layer.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"
#include "testdecomp.h"
#include "testutil.h"

static const unsigned thread_counts[] = { 1, 2, 4, 8 };
#define GOLDEN_GZIP_LIBDEFLATE_1_14 "sha256:60bfafb5f30b38903d4b02713abb6f58766df2ff51bde0b0eaa80bd8fdeb1b15"
#define GOLDEN_ZSTD_1_5_4 "sha256:fd8d58a38971f38fa87e83d43d8c678b33aa3d7c19e8e9721a5c3323e41a6b51"

/* Compressible but not trivially so: words from a small vocabulary picked
 * by an LCG, with runs of noise, so deflate finds matches across blocks
 * (a broken dictionary would change the size) and some bytes do not. */
static void make_input(struct eb_buf *b, size_t len, uint32_t seed)
{
	static const char *words[] = { "tensor ", "layer ", "wheel ", "python3.11 ",
				       "site-packages/", "numpy ", "\n", "0x7f ",
				       "libcuda.so ", "/usr/lib/" };
	uint32_t x = seed;

	eb_buf_init(b, 0);
	while (b->len < len) {
		x = x * 1664525u + 1013904223u;
		if ((x >> 24) < 16) {
			unsigned char c = (unsigned char)(x >> 8);
			eb_buf_add(b, &c, 1);
		} else {
			const char *w = words[(x >> 16) % 10];
			size_t n = strlen(w);
			eb_buf_add(b, w, n > len - b->len ? len - b->len : n);
		}
	}
}

static int sink(void *ud, const void *data, size_t len, struct eb_error **err)
{
	(void)err;
	eb_buf_add(ud, data, len);
	return 0;
}

/* Feed in uneven pieces (as libarchive's 10 KiB blocks and file tails
 * do), so block boundaries never line up with write calls. */
static void compress_all(enum eb_compress_kind kind, int level, unsigned threads,
			 const struct eb_buf *in, struct eb_buf *out)
{
	struct eb_compress *c = NULL;
	struct eb_error *err = NULL;
	size_t off = 0, step = 1;

	eb_buf_init(out, 0);
	ck_assert_int_eq(eb_compress_new(&c, kind, level, threads, sink, out, &err), 0);
	while (off < in->len) {
		size_t n = step > in->len - off ? in->len - off : step;
		ck_assert_int_eq(eb_compress_write(c, in->ptr + off, n, &err), 0);
		off += n;
		step = step * 7 % 40961 + 1;
	}
	ck_assert_int_eq(eb_compress_finish(c, &err), 0);
	eb_compress_free(c);
}

/* Run `tool -t FILE` on data; 77 when the tool is not installed. */
static int tool_test(const char *tool, const struct eb_buf *data)
{
	char path[] = "/tmp/eb-compress-XXXXXX";
	int fd = mkstemp(path), st;
	eb_autofree char *cmd = NULL;
	eb_autofree char *which = eb_xasprintf("command -v %s >/dev/null 2>&1", tool);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data->ptr, data->len), (ssize_t)data->len);
	close(fd);
	if (system(which) != 0) {
		unlink(path);
		return 77;
	}
	cmd = eb_xasprintf("%s -t -q %s 2>/dev/null", tool, path);
	st = system(cmd);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define MIB (1024 * 1024)
/* Sizes around the 1 MiB chunk: empty, one byte, exactly one and two
 * chunks, a chunk and a byte, and many chunks. */
static const size_t gz_sizes[] = { 0, 1, MIB, MIB + 1, 2 * MIB, 5 * MIB + 17 };

START_TEST(gzip_same_bytes_any_threads)
{
	for (size_t s = 0; s < sizeof(gz_sizes) / sizeof(gz_sizes[0]); s++) {
		struct eb_buf in, ref, out, back;
		make_input(&in, gz_sizes[s], 42 + (uint32_t)s);
		compress_all(EB_COMPRESS_GZIP, 6, 1, &in, &ref);
		for (size_t t = 1; t < sizeof(thread_counts) / sizeof(thread_counts[0]); t++) {
			compress_all(EB_COMPRESS_GZIP, 6, thread_counts[t], &in, &out);
			ck_assert_msg(out.len == ref.len && memcmp(out.ptr, ref.ptr, ref.len) == 0,
				      "size %zu: %u threads differ from 1", gz_sizes[s],
				      thread_counts[t]);
			eb_buf_release(&out);
		}
		/* 0 = this machine's CPU count: still the same bytes */
		compress_all(EB_COMPRESS_GZIP, 6, 0, &in, &out);
		ck_assert(out.len == ref.len && memcmp(out.ptr, ref.ptr, ref.len) == 0);
		eb_buf_release(&out);
		/* one member per chunk (at least one), inflating to the input,
		 * header as zlib's */
		eb_buf_init(&back, 0);
		ck_assert_uint_eq(eb_test_gunzip(&ref, &back),
				  in.len ? (in.len + MIB - 1) / MIB : 1);
		ck_assert_uint_eq(back.len, in.len);
		ck_assert(in.len == 0 || memcmp(back.ptr, in.ptr, in.len) == 0);
		ck_assert_uint_eq((unsigned char)ref.ptr[8], 0);   /* XFL for level 6 */
		ck_assert_uint_eq((unsigned char)ref.ptr[9], 255); /* OS unknown */
		eb_buf_release(&back);
		eb_buf_release(&ref);
		eb_buf_release(&in);
	}
}
END_TEST

/* Independent 1 MiB chunks cost little: no more than 1% over one member
 * of the whole input from the same deflate at the same level.  (How the
 * library compares with gzip -6 is bench/layers' measure, on real trees:
 * on this tiny-vocabulary text libdeflate's level 6 is a few percent
 * larger than zlib's, on real tars smaller.) */
START_TEST(gzip_chunks_keep_ratio)
{
	struct eb_buf in, out;
	struct eb_deflate *d = eb_deflate_new(6);
	size_t cap, whole;
	unsigned char *z;

	ck_assert_ptr_nonnull(d);
	make_input(&in, 4 * MIB, 7);
	compress_all(EB_COMPRESS_GZIP, 6, 4, &in, &out);
	cap = eb_deflate_bound(d, in.len);
	z = eb_xmalloc(cap);
	whole = eb_deflate_member(d, in.ptr, in.len, z, cap);
	ck_assert_uint_gt(whole, 0);
	ck_assert_msg(out.len < whole + whole / 100, "chunked %zu vs one member %zu", out.len,
		      whole);
	free(z);
	eb_deflate_free(d);
	eb_buf_release(&out);
	eb_buf_release(&in);
}
END_TEST

/* The chunks really are independent, cut by the stream alone: the
 * stream of A+B, A a whole number of chunks, is the stream of A followed
 * by the stream of B, whatever the thread counts. */
START_TEST(gzip_chunks_independent)
{
	struct eb_buf in, a, b, ab, whole;

	make_input(&in, 3 * MIB + 4321, 21);
	compress_all(EB_COMPRESS_GZIP, 6, 4, &in, &whole);
	a = in;
	a.len = 2 * MIB;
	b = in;
	b.ptr += 2 * MIB;
	b.len -= 2 * MIB;
	compress_all(EB_COMPRESS_GZIP, 6, 1, &a, &ab);
	{
		struct eb_buf tail;
		compress_all(EB_COMPRESS_GZIP, 6, 8, &b, &tail);
		eb_buf_add(&ab, tail.ptr, tail.len);
		eb_buf_release(&tail);
	}
	ck_assert(ab.len == whole.len && memcmp(ab.ptr, whole.ptr, ab.len) == 0);
	eb_buf_release(&ab);
	eb_buf_release(&whole);
	eb_buf_release(&in);
}
END_TEST

/* All of gz through the member reader, in reads of an odd size; 0 or -1. */
static int gunzip_all(const struct eb_buf *gz, struct eb_buf *out, char *msg, size_t msglen)
{
	struct eb_gunzip *g = eb_gunzip_new(gz->ptr, gz->len);
	char buf[70001];
	long n;

	eb_buf_init(out, 0);
	while ((n = eb_gunzip_read(g, buf, sizeof(buf), msg, msglen)) > 0)
		eb_buf_add(out, buf, (size_t)n);
	eb_gunzip_free(g);
	return n < 0 ? -1 : 0;
}

/* zlib's one-member gzip of in (what another tool writes for a layer). */
static void one_member(const struct eb_buf *in, struct eb_buf *out)
{
	z_stream z = { 0 };
	unsigned char buf[65536];
	int zr;

	eb_buf_init(out, 0);
	ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)in->ptr;
	z.avail_in = (unsigned)in->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		eb_buf_add(out, buf, sizeof(buf) - z.avail_out);
	} while (zr == Z_OK);
	ck_assert_int_eq(zr, Z_STREAM_END);
	deflateEnd(&z);
}

/* One input as envbuild's members (ours), as another tool's single member
 * (theirs), and ours + theirs + ours one after the other (both). */
struct streams {
	struct eb_buf in, ours, theirs, both;
};

static void streams_make(struct streams *t, size_t len, uint32_t seed)
{
	make_input(&t->in, len, seed);
	compress_all(EB_COMPRESS_GZIP, 6, 2, &t->in, &t->ours);
	one_member(&t->in, &t->theirs);
	eb_buf_init(&t->both, 0);
	eb_buf_add(&t->both, t->ours.ptr, t->ours.len);
	eb_buf_add(&t->both, t->theirs.ptr, t->theirs.len);
	eb_buf_add(&t->both, t->ours.ptr, t->ours.len);
}

static void streams_release(struct streams *t)
{
	eb_buf_release(&t->both);
	eb_buf_release(&t->theirs);
	eb_buf_release(&t->ours);
	eb_buf_release(&t->in);
}

/* envbuild's 1 MiB members and another tool's single 7 MiB member read
 * back the same, and so do both one after the other (a member larger than
 * the reader's buffer goes to zlib mid-stream). */
START_TEST(gunzip_members_and_one_large)
{
	struct streams t;
	struct eb_buf out;
	char msg[200];

	streams_make(&t, 7 * MIB + 333, 5);
	ck_assert(eb_gunzip_is(t.ours.ptr, t.ours.len) && eb_gunzip_is(t.theirs.ptr, t.theirs.len));
	ck_assert_int_eq(gunzip_all(&t.ours, &out, msg, sizeof(msg)), 0);
	ck_assert(out.len == t.in.len && memcmp(out.ptr, t.in.ptr, t.in.len) == 0);
	eb_buf_release(&out);
	ck_assert_int_eq(gunzip_all(&t.theirs, &out, msg, sizeof(msg)), 0);
	ck_assert(out.len == t.in.len && memcmp(out.ptr, t.in.ptr, t.in.len) == 0);
	eb_buf_release(&out);
	/* zeros after the last member are the end, as for gzip -d */
	eb_buf_add(&t.both, "\0\0\0\0", 4);
	ck_assert_int_eq(gunzip_all(&t.both, &out, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(out.len, 3 * t.in.len);
	for (int i = 0; i < 3; i++)
		ck_assert(memcmp(out.ptr + (size_t)i * t.in.len, t.in.ptr, t.in.len) == 0);
	eb_buf_release(&out);
	streams_release(&t);
}
END_TEST

/* The reader never looks before eb_gunzip_consumed() again (layerin.c
 * gives those pages of its mapping back): the input behind it is
 * scribbled over after every read and the output stays right, for
 * envbuild's members, another tool's single large one, and both. */
START_TEST(gunzip_consumed_is_behind_the_reader)
{
	struct streams t;
	struct eb_buf out;
	char msg[200], buf[70001];
	size_t last = 0;
	long n;

	streams_make(&t, 5 * MIB + 77, 9);
	struct eb_gunzip *g = eb_gunzip_new(t.both.ptr, t.both.len);
	eb_buf_init(&out, 0);
	while ((n = eb_gunzip_read(g, buf, sizeof(buf), msg, sizeof(msg))) > 0) {
		size_t c = eb_gunzip_consumed(g);
		ck_assert_uint_ge(c, last);
		ck_assert_uint_le(c, t.both.len);
		memset(t.both.ptr, 0xa5, c);
		last = c;
		eb_buf_add(&out, buf, (size_t)n);
	}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(eb_gunzip_consumed(g), t.both.len);
	eb_gunzip_free(g);
	ck_assert_uint_eq(out.len, 3 * t.in.len);
	for (int i = 0; i < 3; i++)
		ck_assert(memcmp(out.ptr + (size_t)i * t.in.len, t.in.ptr, t.in.len) == 0);
	eb_buf_release(&out);
	streams_release(&t);
}
END_TEST

/* A truncated member (ours and another tool's) and a corrupted one are
 * errors, never a short stream taken for the whole. */
START_TEST(gunzip_truncated_and_corrupt)
{
	struct eb_buf in, ours, theirs, out, bad;
	char msg[200];

	make_input(&in, 3 * MIB + 9, 8);
	compress_all(EB_COMPRESS_GZIP, 6, 1, &in, &ours);
	one_member(&in, &theirs);
	bad = ours;
	bad.len -= 100;
	msg[0] = 0;
	ck_assert_int_eq(gunzip_all(&bad, &out, msg, sizeof(msg)), -1);
	ck_assert(msg[0]);
	eb_buf_release(&out);
	bad = theirs;
	bad.len /= 2;
	msg[0] = 0;
	ck_assert_int_eq(gunzip_all(&bad, &out, msg, sizeof(msg)), -1);
	ck_assert(strstr(msg, "truncated") != NULL); /* by libdeflate or zlib */
	eb_buf_release(&out);
	ours.ptr[ours.len / 2] ^= 0x55;
	ours.ptr[ours.len / 2 + 1] ^= 0xaa;
	msg[0] = 0;
	/* a flipped byte fails inflating or the member's CRC-32 */
	ck_assert_int_eq(gunzip_all(&ours, &out, msg, sizeof(msg)), -1);
	ck_assert(msg[0]);
	eb_buf_release(&out);
	eb_buf_release(&theirs);
	eb_buf_release(&ours);
	eb_buf_release(&in);
}
END_TEST

START_TEST(gzip_levels_and_tool)
{
	struct eb_buf in, out;
	int rc;

	make_input(&in, 2 * MIB + 600 * 1024, 3);
	for (int lv = 1; lv <= 9; lv += 4) {
		struct eb_buf ref;
		compress_all(EB_COMPRESS_GZIP, lv, 1, &in, &ref);
		compress_all(EB_COMPRESS_GZIP, lv, 8, &in, &out);
		ck_assert(out.len == ref.len && memcmp(out.ptr, ref.ptr, ref.len) == 0);
		ck_assert_uint_eq((unsigned char)out.ptr[8], lv == 9 ? 2 : lv == 1 ? 4 : 0);
		eb_buf_release(&ref);
		eb_buf_release(&out);
	}
	compress_all(EB_COMPRESS_GZIP, 6, 2, &in, &out);
	rc = tool_test("gzip", &out);
	eb_buf_release(&out);
	eb_buf_release(&in);
	if (rc == 77)
		EB_TEST_SKIP("gzip is not installed");
	ck_assert_int_eq(rc, 0);
}
END_TEST

/* The same bytes on every machine: for a given compressor id, the digest
 * of a fixed input's layer is a constant, first computed on an AMD EPYC
 * (2026-12-02) and checked wherever this test runs (CI's machines, a
 * developer's laptop).  Another libdeflate, libzstd or zlib is another
 * compressor id, and then another constant: the id re-keys the cache, so
 * a digest never changes under the same id. */
static const struct {
	enum eb_compress_kind kind;
	int level;
	const char *id, *digest;
} golden[] = {
	{ EB_COMPRESS_GZIP, 6, "gzip/libdeflate-1.14/chunk-1m/6", GOLDEN_GZIP_LIBDEFLATE_1_14 },
	{ EB_COMPRESS_ZSTD, 3, "zstd/1.5.4/mt-1m/3", GOLDEN_ZSTD_1_5_4 },
};

START_TEST(same_bytes_on_every_machine)
{
	struct eb_buf in, out;
	char id[48], digest[EB_DIGEST_STR_LEN + 1];
	int checked = 0;

	make_input(&in, 5 * MIB + 17, 2025);
	for (size_t g = 0; g < sizeof(golden) / sizeof(golden[0]); g++) {
		eb_compress_id(golden[g].kind, golden[g].level, id);
		if (strcmp(id, golden[g].id) != 0) {
			fprintf(stderr, "# %s: this build's compressor is %s (no constant for it)\n",
				golden[g].id, id);
			continue;
		}
		for (size_t t = 0; t < sizeof(thread_counts) / sizeof(thread_counts[0]); t++) {
			compress_all(golden[g].kind, golden[g].level, thread_counts[t], &in, &out);
			eb_sha256_digest(out.ptr, out.len, digest);
			ck_assert_msg(strcmp(digest, golden[g].digest) == 0,
				      "%s, %u threads: %s, not %s", id, thread_counts[t], digest,
				      golden[g].digest);
			eb_buf_release(&out);
		}
		checked++;
	}
	eb_buf_release(&in);
	if (!checked)
		EB_TEST_SKIP("no constant for this build's compressors (see the # lines)");
}
END_TEST

START_TEST(zstd_same_bytes_any_threads)
{
	static const size_t sizes[] = { 0, 1, 5 * 1024 * 1024 + 3 };
	int rc = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct eb_buf in, ref, out, back;
		make_input(&in, sizes[s], 99 + (uint32_t)s);
		compress_all(EB_COMPRESS_ZSTD, 3, 1, &in, &ref);
		for (size_t t = 1; t < sizeof(thread_counts) / sizeof(thread_counts[0]); t++) {
			compress_all(EB_COMPRESS_ZSTD, 3, thread_counts[t], &in, &out);
			ck_assert_msg(out.len == ref.len && memcmp(out.ptr, ref.ptr, ref.len) == 0,
				      "size %zu: %u zstd workers differ from 1", sizes[s],
				      thread_counts[t]);
			eb_buf_release(&out);
		}
		eb_buf_init(&back, 0);
		eb_test_unzstd(&ref, &back);
		ck_assert_uint_eq(back.len, in.len);
		ck_assert(in.len == 0 || memcmp(back.ptr, in.ptr, in.len) == 0);
		if (s == 2)
			rc = tool_test("zstd", &ref);
		eb_buf_release(&back);
		eb_buf_release(&ref);
		eb_buf_release(&in);
	}
	if (rc == 77)
		EB_TEST_SKIP("zstd is not installed");
	ck_assert_int_eq(rc, 0);
}
END_TEST

START_TEST(none_passes_through)
{
	struct eb_buf in, out;

	make_input(&in, 300000, 1);
	compress_all(EB_COMPRESS_NONE, 0, 4, &in, &out);
	ck_assert(out.len == in.len && memcmp(out.ptr, in.ptr, in.len) == 0);
	eb_buf_release(&out);
	eb_buf_release(&in);
}
END_TEST

START_TEST(compressor_id_names_scheme)
{
	char id[48];

	eb_compress_id(EB_COMPRESS_GZIP, 6, id);
	ck_assert_ptr_nonnull(strstr(id, "/chunk-1m/6"));
#ifdef HAVE_LIBDEFLATE
	ck_assert_ptr_nonnull(strstr(id, "gzip/libdeflate-"));
#else
	ck_assert_ptr_nonnull(strstr(id, zlibVersion()));
#endif
	eb_compress_id(EB_COMPRESS_ZSTD, 3, id);
	ck_assert_ptr_nonnull(strstr(id, "/mt-1m/3"));
	ck_assert_uint_ge(eb_compress_default_threads(), 1);
	ck_assert_uint_le(eb_compress_default_threads(), EB_COMPRESS_MAX_THREADS);
}
END_TEST

/* A sink failure stops the stream and is what the caller sees, with
 * workers running; freeing then joins them. */
static int failing_sink(void *ud, const void *data, size_t len, struct eb_error **err)
{
	size_t *n = ud;

	(void)data;
	*n += len;
	if (*n > 100000)
		return eb_error_set(err, EB_EIO, "disk full");
	return 0;
}

START_TEST(sink_failure_reported)
{
	struct eb_buf in;
	struct eb_compress *c = NULL;
	struct eb_error *err = NULL;
	size_t seen = 0;
	int rc = 0;

	make_input(&in, 4 * 1024 * 1024, 5);
	ck_assert_int_eq(eb_compress_new(&c, EB_COMPRESS_GZIP, 6, 4, failing_sink, &seen, &err), 0);
	for (size_t off = 0; off < in.len && rc == 0; off += 10240)
		rc = eb_compress_write(c, in.ptr + off, 10240, &err);
	if (rc == 0)
		rc = eb_compress_finish(c, &err);
	ck_assert_int_eq(rc, -EB_EIO);
	ck_assert_ptr_nonnull(strstr(err->msg, "disk full"));
	eb_error_free(err);
	eb_compress_free(c);
	eb_buf_release(&in);
}
END_TEST

/* Through the layer writer: digest, diff_id and size do not move with
 * the thread count, the digest is the blob's sha256 and the diff_id the
 * sha256 of what it gunzips to. */
START_TEST(layer_digest_any_threads)
{
	eb_autofree char *sd = eb_test_tmpdir();
	struct eb_blobstore *bs = NULL;
	struct eb_error *err = NULL;
	struct eb_layer_result ref;
	struct eb_buf big;

	ck_assert_int_eq(eb_blobstore_open(&bs, sd, &err), 0);
	make_input(&big, 1536 * 1024 + 5, 11);
	for (int kind = 0; kind < 2; kind++) {
		for (size_t t = 0; t < sizeof(thread_counts) / sizeof(thread_counts[0]); t++) {
			struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
			struct eb_layer_builder *b = eb_layer_builder_new();
			struct eb_layer_result r;
			o.compression = kind ? EB_LAYER_ZSTD : EB_LAYER_GZIP;
			o.threads = thread_counts[t];
			ck_assert_int_eq(eb_layer_add_bytes(b, "/big.bin", big.ptr, big.len, 0644, &err), 0);
			ck_assert_int_eq(eb_layer_add_bytes(b, "/etc/small", "x\n", 2, 0644, &err), 0);
			ck_assert_int_eq(eb_layer_write(b, &o, bs, &r, &err), 0);
			eb_layer_builder_free(b);
			if (t == 0) {
				ref = r;
				ck_assert_int_eq(eb_blobstore_verify(bs, r.digest, &err), 0);
				if (!kind) {
					eb_autofree char *p = eb_blobstore_path(bs, r.digest);
					struct eb_buf blob, tar;
					char diff[EB_DIGEST_STR_LEN + 1];
					eb_buf_init(&blob, 0);
					ck_assert_int_eq(eb_fs_read_file(&blob, p, 0, &err), 0);
					ck_assert_uint_eq(blob.len, r.size);
					eb_buf_init(&tar, 0);
					eb_test_gunzip(&blob, &tar);
					eb_sha256_digest(tar.ptr, tar.len, diff);
					ck_assert_str_eq(diff, r.diff_id);
					eb_buf_release(&tar);
					eb_buf_release(&blob);
				}
				continue;
			}
			ck_assert_str_eq(r.digest, ref.digest);
			ck_assert_str_eq(r.diff_id, ref.diff_id);
			ck_assert_uint_eq(r.size, ref.size);
			ck_assert_str_eq(r.compressor, ref.compressor);
		}
	}
	eb_buf_release(&big);
	eb_blobstore_free(bs);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("compress");
	TCase *tc = tcase_create("compress");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gzip_same_bytes_any_threads);
	tcase_add_test(tc, gzip_chunks_keep_ratio);
	tcase_add_test(tc, gzip_chunks_independent);
	tcase_add_test(tc, gunzip_members_and_one_large);
	tcase_add_test(tc, gunzip_truncated_and_corrupt);
	tcase_add_test(tc, gunzip_consumed_is_behind_the_reader);
	tcase_add_test(tc, gzip_levels_and_tool);
	tcase_add_test(tc, zstd_same_bytes_any_threads);
	tcase_add_test(tc, none_passes_through);
	tcase_add_test(tc, compressor_id_names_scheme);
	tcase_add_test(tc, sink_failure_reported);
	tcase_add_test(tc, layer_digest_any_threads);
	tcase_add_test(tc, same_bytes_on_every_machine);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
