/*
 * check_layout.c - unit tests for oci/layout: writing OCI layouts from the
 * blob store and reading them back, checked against the real tools (skopeo
 * inspect and copy, umoci unpack); atomic replacement; docker-archive
 * tarballs.
 *
 * The images are made here: a tiny tar (libarchive) gzip'ed with zlib, a
 * config and a manifest from oci/image, all put into a blob store in the
 * test's temporary directory.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <zlib.h>

#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "testutil.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

#define HELLO "hello from envbuild\n"

/* ---- helpers ----------------------------------------------------------- */

/* File systems without RENAME_EXCHANGE make the writer fall back to
 * rename-aside; this stand-in for glibc's renameat2 (the test binary's
 * definition wins at link time) can pretend to be one. */
static int no_rename_exchange;

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
	      unsigned int flags)
{
	if (no_rename_exchange && (flags & RENAME_EXCHANGE)) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when `tool` is on PATH; the tool tests skip without it
 * (EB_TEST_SKIP, so the summary shows it). */
static int have_tool(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* Run a shell command; its stdout goes to *out (caller frees) when out is
 * non-NULL.  Returns the exit status. */
static int run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run(char **out, const char *fmt, ...)
{
	struct eb_buf b;
	char cmd[8192], chunk[4096];
	va_list ap;
	FILE *p;
	size_t n;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "popen %s", cmd);
	eb_buf_init(&b, 0);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		ck_assert_int_eq(eb_buf_add(&b, chunk, n), 0);
	st = pclose(p);
	if (out)
		*out = eb_buf_detach(&b, NULL);
	eb_buf_release(&b);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Names in dir other than . and .., joined by spaces (caller frees). */
static char *list_dir(const char *dir)
{
	struct eb_buf b;
	struct dirent *e;
	DIR *d = opendir(dir);

	ck_assert_ptr_nonnull(d);
	eb_buf_init(&b, 0);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			ck_assert_int_eq(eb_buf_addf(&b, "%s%s", b.len ? " " : "", e->d_name), 0);
	closedir(d);
	return eb_buf_detach(&b, NULL);
}

static la_ssize_t to_buf(struct archive *a, void *ctx, const void *p, size_t n)
{
	(void)a;
	ck_assert_int_eq(eb_buf_add(ctx, p, n), 0);
	return (la_ssize_t)n;
}

/* An uncompressed tar holding app/ and app/hello.txt with `content`. */
static void make_tar(struct eb_buf *tar, const char *content)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();

	eb_buf_init(tar, 0);
	ck_assert_int_eq(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_open(a, tar, NULL, to_buf, NULL), ARCHIVE_OK);
	archive_entry_set_pathname(e, "app/");
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, 0755);
	ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
	archive_entry_clear(e);
	archive_entry_set_pathname(e, "app/hello.txt");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)strlen(content));
	ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_data(a, content, strlen(content)),
			 (la_ssize_t)strlen(content));
	ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
	archive_entry_free(e);
	archive_write_free(a);
}

/* gzip (RFC 1952) of in. */
static void gzip_buf(struct eb_buf *out, const struct eb_buf *in)
{
	z_stream zs;
	uLong bound;

	memset(&zs, 0, sizeof(zs));
	ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	bound = deflateBound(&zs, in->len) + 64;
	eb_buf_init(out, 0);
	ck_assert_int_eq(eb_buf_add(out, NULL, 0), 0);
	out->ptr = eb_xrealloc(out->cap ? out->ptr : NULL, bound + 1);
	out->cap = bound + 1;
	zs.next_in = (Bytef *)in->ptr;
	zs.avail_in = (uInt)in->len;
	zs.next_out = (Bytef *)out->ptr;
	zs.avail_out = (uInt)bound;
	ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	out->len = zs.total_out;
	out->ptr[out->len] = '\0';
	deflateEnd(&zs);
}

struct image {
	struct eb_descriptor manifest; /* of the image manifest */
	char diff_id[EB_DIGEST_STR_LEN + 1];
	char layer[EB_DIGEST_STR_LEN + 1];
	char config[EB_DIGEST_STR_LEN + 1];
};

static void put_doc(struct eb_blobstore *bs, const struct eb_doc *doc)
{
	char got[EB_DIGEST_STR_LEN + 1];
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_blobstore_put(bs, doc->data, doc->len, got, &err), 0);
	ck_assert_str_eq(got, doc->digest);
}

/* A one-layer image for platform whose app/hello.txt holds content; every
 * blob goes into bs. */
static void make_image(struct image *img, struct eb_blobstore *bs, const char *platform,
		       const char *content)
{
	struct eb_buf tar, gz;
	struct eb_platform p;
	struct eb_error *err = NULL;
	struct eb_doc cfg, man;
	struct eb_descriptor cfg_desc, layer_desc = { 0 };
	struct eb_config_layer cl = { 0 };
	struct eb_config_settings cs = { 0 };
	struct eb_manifest_settings ms = { 0 };
	static const char *const cmd[] = { "cat", "/app/hello.txt" };

	memset(img, 0, sizeof(*img));
	make_tar(&tar, content);
	gzip_buf(&gz, &tar);
	eb_sha256_digest(tar.ptr, tar.len, img->diff_id);
	ck_assert_int_eq(eb_blobstore_put(bs, gz.ptr, gz.len, img->layer, &err), 0);

	ck_assert_int_eq(eb_platform_parse(&p, platform, &err), 0);
	cl.diff_id = img->diff_id;
	cl.created_by = "envbuild: files hello.txt -> /app/";
	cs.platform = &p;
	cs.cmd = cmd;
	cs.n_cmd = 2;
	cs.layers = &cl;
	cs.n_layers = 1;
	ck_assert_int_eq(eb_config_build(&cfg, NULL, &cs, &err), 0);
	put_doc(bs, &cfg);
	memcpy(img->config, cfg.digest, sizeof(img->config));

	eb_doc_descriptor(&cfg_desc, &cfg, EB_MEDIA_OCI_CONFIG);
	layer_desc.media_type = (char *)EB_MEDIA_OCI_LAYER_GZIP;
	layer_desc.digest = img->layer;
	layer_desc.size = (int64_t)gz.len;
	ms.config = &cfg_desc;
	ms.layers = &layer_desc;
	ms.n_layers = 1;
	ck_assert_int_eq(eb_manifest_build(&man, &ms, &err), 0);
	put_doc(bs, &man);
	eb_doc_descriptor(&img->manifest, &man, EB_MEDIA_OCI_MANIFEST);
	img->manifest.platform = eb_xcalloc(1, sizeof(*img->manifest.platform));
	eb_platform_copy(img->manifest.platform, &p);

	eb_descriptor_release(&cfg_desc);
	eb_doc_release(&cfg);
	eb_doc_release(&man);
	eb_platform_release(&p);
	eb_buf_release(&tar);
	eb_buf_release(&gz);
}

struct fixture {
	char *tmp;
	char *layout; /* <tmp>/out/layout: the parent holds nothing else */
	char *parent;
	struct eb_blobstore *bs;
	struct image img;
};

static void fx_init(struct fixture *f)
{
	struct eb_error *err = NULL;
	char *store;

	f->tmp = eb_test_tmpdir();
	store = eb_path_join(f->tmp, "store");
	f->parent = eb_path_join(f->tmp, "out");
	f->layout = eb_path_join(f->parent, "layout");
	ck_assert_int_eq(mkdir(f->parent, 0755), 0);
	ck_assert_int_eq(eb_blobstore_open(&f->bs, store, &err), 0);
	free(store);
	make_image(&f->img, f->bs, "linux/amd64", HELLO);
}

static void fx_release(struct fixture *f)
{
	eb_descriptor_release(&f->img.manifest);
	eb_blobstore_free(f->bs);
	rm_rf(f->tmp);
	free(f->tmp);
	free(f->layout);
	free(f->parent);
}

static void write_ok(const char *dir, struct eb_blobstore *bs, const struct eb_descriptor *top,
		     const char *ref)
{
	struct eb_error *err = NULL;
	int r = eb_layout_write(dir, bs, top, ref, &err);

	ck_assert_msg(r == 0, "write: %s", err ? err->msg : "");
}

static void read_ok(struct eb_layout_image *img, const char *dir, const char *ref,
		    const char *platform)
{
	struct eb_error *err = NULL;
	struct eb_platform p;
	int r;

	if (platform)
		ck_assert_int_eq(eb_platform_parse(&p, platform, &err), 0);
	r = eb_layout_read(img, dir, ref, platform ? &p : NULL, &err);
	ck_assert_msg(r == 0, "read: %s", err ? err->msg : "");
	if (platform)
		eb_platform_release(&p);
}

/* ---- tests ---------------------------------------------------------------- */

START_TEST(write_and_read_back)
{
	struct fixture f;
	struct eb_layout_image li;
	struct eb_buf b;
	struct eb_error *err = NULL;
	char *path, *names;
	json_t *j;

	fx_init(&f);
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");

	/* the files a layout consists of */
	path = eb_path_join(f.layout, "oci-layout");
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_fs_read_file(&b, path, 0, &err), 0);
	ck_assert_str_eq(b.ptr, "{\"imageLayoutVersion\":\"1.0.0\"}");
	eb_buf_release(&b);
	free(path);
	path = eb_path_join(f.layout, "index.json");
	ck_assert_int_eq(eb_fs_read_file(&b, path, 0, &err), 0);
	j = json_loads(b.ptr, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "mediaType")), EB_MEDIA_OCI_INDEX);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_array_get(json_object_get(j, "manifests"), 0),
						 "annotations"),
				 EB_ANNOT_REF_NAME)),
			 "v1");
	json_decref(j);
	eb_buf_release(&b);
	free(path);
	path = eb_path_join(f.layout, "blobs/sha256");
	names = list_dir(path);
	ck_assert_ptr_nonnull(strstr(names, eb_digest_hex(f.img.layer)));
	ck_assert_ptr_nonnull(strstr(names, eb_digest_hex(f.img.config)));
	ck_assert_ptr_nonnull(strstr(names, eb_digest_hex(f.img.manifest.digest)));
	free(names);
	free(path);
	/* blobs are copies (or reflinks), never hard links into the store:
	 * editing the layout must not change the cache (issue 11) */
	{
		struct stat a, b2;
		char *in_layout = eb_layout_blob_path(f.layout, f.img.layer);
		char *in_store = eb_blobstore_path(f.bs, f.img.layer);
		FILE *fp;
		ck_assert_int_eq(stat(in_layout, &a), 0);
		ck_assert_int_eq(stat(in_store, &b2), 0);
		ck_assert_uint_ne(a.st_ino, b2.st_ino);
		ck_assert_uint_eq(a.st_nlink, 1);
		ck_assert_int_eq(a.st_size, b2.st_size);
		fp = fopen(in_layout, "r+b");
		ck_assert_ptr_nonnull(fp);
		fputc('X', fp);
		fclose(fp);
		ck_assert_int_eq(eb_blobstore_verify(f.bs, f.img.layer, NULL), 0);
		free(in_layout);
		free(in_store);
	}
	/* nothing but the layout is left next to it */
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "layout");
	free(names);

	/* by name, as the only image, and with a platform */
	read_ok(&li, f.layout, "v1", NULL);
	ck_assert_str_eq(li.manifest_desc.digest, f.img.manifest.digest);
	ck_assert_str_eq(li.top.digest, f.img.manifest.digest);
	ck_assert_str_eq(li.manifest.config.digest, f.img.config);
	ck_assert_uint_eq(li.manifest.n_layers, 1);
	ck_assert_str_eq(li.manifest.layers[0].digest, f.img.layer);
	ck_assert_uint_eq(li.config.n_diff_ids, 1);
	ck_assert_str_eq(li.config.diff_ids[0], f.img.diff_id);
	ck_assert_str_eq(li.config.cmd[0], "cat");
	eb_layout_image_release(&li);
	read_ok(&li, f.layout, NULL, "linux/amd64");
	ck_assert_str_eq(li.manifest_desc.digest, f.img.manifest.digest);
	eb_layout_image_release(&li);

	/* a trailing slash names the same directory */
	path = eb_xasprintf("%s/", f.layout);
	write_ok(path, f.bs, &f.img.manifest, "v2");
	free(path);
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "layout");
	free(names);
	read_ok(&li, f.layout, "v2", NULL);
	eb_layout_image_release(&li);
	fx_release(&f);
}
END_TEST

START_TEST(read_errors)
{
	struct fixture f;
	struct eb_layout_image li;
	struct eb_error *err = NULL;
	struct eb_platform p;
	char *other, *blob;

	fx_init(&f);
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");

	ck_assert_int_eq(eb_layout_read(&li, f.layout, "v2", NULL, &err), -EB_ENOTFOUND);
	ck_assert_str_eq(eb_path_basename(err->msg), "layout' (it has 'v1')");
	eb_error_clear(&err);
	ck_assert_int_eq(eb_platform_parse(&p, "linux/arm64", &err), 0);
	ck_assert_int_eq(eb_layout_read(&li, f.layout, "v1", &p, &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, "is for 'linux/amd64', not 'linux/arm64'"));
	eb_error_clear(&err);
	eb_platform_release(&p);
	ck_assert_int_eq(eb_layout_read(&li, f.tmp, NULL, NULL, &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, "is not an OCI image layout"));
	eb_error_clear(&err);

	/* a blob whose bytes changed: written anew (the store's copy is
	 * another file anyway) */
	other = eb_path_join(f.tmp, "other");
	write_ok(other, f.bs, &f.img.manifest, "v1");
	blob = eb_layout_blob_path(other, f.img.config);
	ck_assert_int_eq(unlink(blob), 0);
	ck_assert_int_eq(eb_fs_write_atomic(blob, "{\"architecture\":1}", 18, 0644, &err), 0);
	ck_assert_int_eq(eb_layout_read(&li, other, "v1", NULL, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "is 18 bytes, its descriptor says"));
	eb_error_clear(&err);
	ck_assert_int_eq(eb_blobstore_verify(f.bs, f.img.config, &err), 0);
	free(blob);
	free(other);
	fx_release(&f);
}
END_TEST

START_TEST(skopeo_reads_and_copies_it)
{
	struct fixture f;
	struct eb_layout_image li;
	char *out = NULL, *copy, *copy2;
	json_t *j;

	if (!have_tool("skopeo"))
		EB_TEST_SKIP("skopeo not found");
	fx_init(&f);
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");

	ck_assert_int_eq(run(&out, "skopeo inspect oci:%s:v1 2>&1", f.layout), 0);
	j = json_loads(out, 0, NULL);
	ck_assert_msg(j != NULL, "skopeo said: %s", out);
	ck_assert_str_eq(json_string_value(json_object_get(j, "Digest")), f.img.manifest.digest);
	ck_assert_str_eq(json_string_value(json_object_get(j, "Architecture")), "amd64");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "Layers"), 0)),
			 f.img.layer);
	json_decref(j);
	free(out);
	/* skopeo checks the config against its digest and the diff_ids */
	ck_assert_int_eq(run(&out, "skopeo inspect --config oci:%s:v1 2>&1", f.layout), 0);
	ck_assert_ptr_nonnull(strstr(out, f.img.diff_id));
	free(out);

	/* skopeo copies it, and we read what skopeo wrote */
	copy = eb_path_join(f.tmp, "copy");
	ck_assert_int_eq(run(&out, "skopeo copy --quiet oci:%s:v1 oci:%s:v1 2>&1", f.layout, copy),
			 0);
	free(out);
	read_ok(&li, copy, "v1", NULL);
	ck_assert_str_eq(li.manifest_desc.digest, f.img.manifest.digest);
	ck_assert_str_eq(li.manifest.config.digest, f.img.config);
	ck_assert_str_eq(li.manifest.layers[0].digest, f.img.layer);
	ck_assert_str_eq(li.config.diff_ids[0], f.img.diff_id);
	eb_layout_image_release(&li);
	/* and from the copy again, a second tag added to skopeo's layout */
	ck_assert_int_eq(run(&out, "skopeo copy --quiet oci:%s:v1 oci:%s:v2 2>&1", copy, copy), 0);
	free(out);
	read_ok(&li, copy, "v2", NULL);
	eb_layout_image_release(&li);
	copy2 = eb_path_join(f.tmp, "copy2");
	{
		struct eb_error *err = NULL;
		ck_assert_int_eq(eb_layout_read(&li, copy, NULL, NULL, &err), -EB_EINVALID);
		ck_assert_ptr_nonnull(strstr(err->msg, "holds 2 images; name one"));
		eb_error_free(err);
	}
	free(copy2);
	free(copy);
	fx_release(&f);
}
END_TEST

START_TEST(umoci_unpacks_it)
{
	struct fixture f;
	struct eb_layout_image li;
	char *out = NULL, *bundle, *file;
	struct eb_buf b;
	struct eb_error *err = NULL;

	if (!have_tool("umoci"))
		EB_TEST_SKIP("umoci not found");
	fx_init(&f);
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");
	bundle = eb_path_join(f.tmp, "bundle");
	ck_assert_msg(run(&out, "umoci unpack --rootless --image %s:v1 %s 2>&1", f.layout,
			  bundle) == 0,
		      "umoci: %s", out);
	free(out);
	file = eb_path_join(bundle, "rootfs/app/hello.txt");
	eb_buf_init(&b, 0);
	ck_assert_int_eq(eb_fs_read_file(&b, file, 0, &err), 0);
	ck_assert_str_eq(b.ptr, HELLO);
	eb_buf_release(&b);
	free(file);
	/* umoci reads our layout with its own code: the config it unpacked */
	file = eb_path_join(bundle, "config.json");
	ck_assert_int_eq(eb_fs_read_file(&b, file, 0, &err), 0);
	ck_assert_ptr_nonnull(strstr(b.ptr, "/app/hello.txt"));
	eb_buf_release(&b);
	free(file);
	free(bundle);

	/* layouts umoci writes itself: a new tag on ours with a changed
	 * config, and a layout made from nothing */
	ck_assert_int_eq(run(&out, "umoci config --image %s:v1 --tag v2 --config.env FOO=bar "
			     "--config.workingdir /w 2>&1", f.layout), 0);
	free(out);
	read_ok(&li, f.layout, "v2", NULL);
	ck_assert_str_eq(eb_config_getenv(&li.config, "FOO"), "bar");
	ck_assert_str_eq(li.config.workdir, "/w");
	ck_assert_str_eq(li.manifest.layers[0].digest, f.img.layer);
	ck_assert_str_ne(li.manifest_desc.digest, f.img.manifest.digest);
	eb_layout_image_release(&li);
	file = eb_path_join(f.tmp, "umoci");
	ck_assert_int_eq(run(&out, "umoci init --layout %s && umoci new --image %s:empty 2>&1",
			     file, file), 0);
	free(out);
	read_ok(&li, file, "empty", "linux/amd64");
	ck_assert_uint_eq(li.manifest.n_layers, 0);
	ck_assert_uint_eq(li.config.n_diff_ids, 0);
	eb_layout_image_release(&li);
	free(file);
	fx_release(&f);
}
END_TEST

START_TEST(index_layout_by_platform)
{
	struct fixture f;
	struct image arm;
	struct eb_descriptor idx_desc, ms[2];
	struct eb_layout_image li;
	struct eb_doc idx;
	struct eb_error *err = NULL;
	char *out = NULL;
	json_t *j;

	fx_init(&f);
	make_image(&arm, f.bs, "linux/arm64/v8", "hello arm\n");
	ms[0] = f.img.manifest;
	ms[1] = arm.manifest;
	ck_assert_int_eq(eb_index_build(&idx, ms, 2, NULL, 0, &err), 0);
	put_doc(f.bs, &idx);
	eb_doc_descriptor(&idx_desc, &idx, EB_MEDIA_OCI_INDEX);
	write_ok(f.layout, f.bs, &idx_desc, "multi");

	read_ok(&li, f.layout, "multi", "linux/arm64");
	ck_assert_str_eq(li.top.digest, idx.digest);
	ck_assert_str_eq(li.manifest_desc.digest, arm.manifest.digest);
	ck_assert_str_eq(li.config.platform.architecture, "arm64");
	ck_assert_str_eq(li.config.diff_ids[0], arm.diff_id);
	eb_layout_image_release(&li);
	read_ok(&li, f.layout, "multi", "linux/amd64");
	ck_assert_str_eq(li.manifest_desc.digest, f.img.manifest.digest);
	eb_layout_image_release(&li);
	ck_assert_int_eq(eb_layout_read(&li, f.layout, "multi", NULL, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "has 2 platforms (linux/amd64, linux/arm64/v8)"));
	eb_error_clear(&err);

	if (have_tool("skopeo")) {
		ck_assert_int_eq(run(&out, "skopeo inspect --override-os linux --override-arch arm64 "
				     "oci:%s:multi 2>&1", f.layout), 0);
		j = json_loads(out, 0, NULL);
		ck_assert_msg(j != NULL, "skopeo said: %s", out);
		/* skopeo names the image by the index, then reads the arm64 config
		 * through the manifest it picked */
		ck_assert_str_eq(json_string_value(json_object_get(j, "Digest")), idx.digest);
		ck_assert_str_eq(json_string_value(json_object_get(j, "Architecture")), "arm64");
		ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "Layers"), 0)),
				 arm.layer);
		json_decref(j);
		free(out);
		ck_assert_int_eq(run(&out, "skopeo inspect --raw oci:%s:multi", f.layout), 0);
		ck_assert_str_eq(out, idx.data);
		free(out);
	}
	eb_descriptor_release(&arm.manifest);
	eb_descriptor_release(&idx_desc);
	eb_doc_release(&idx);
	fx_release(&f);
	/* the checks above ran; skopeo's did not: say so */
	if (!have_tool("skopeo"))
		EB_TEST_SKIP("skopeo not found: its reading of the index did not run");
}
END_TEST

START_TEST(failed_write_keeps_old_layout)
{
	struct fixture f;
	struct eb_layout_image li;
	struct eb_error *err = NULL;
	struct eb_descriptor cfg, layer = { 0 }, bad_desc;
	struct eb_manifest_settings ms = { 0 };
	struct eb_doc bad;
	char missing[EB_DIGEST_STR_LEN + 1];
	char *names;

	fx_init(&f);
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");

	/* a manifest (in the store) whose layer is not */
	eb_sha256_digest("not stored", 10, missing);
	cfg = (struct eb_descriptor){ .media_type = (char *)EB_MEDIA_OCI_CONFIG,
				      .digest = f.img.config };
	{
		struct eb_layout_image cur;
		read_ok(&cur, f.layout, "v1", NULL);
		cfg.size = cur.manifest.config.size;
		eb_layout_image_release(&cur);
	}
	layer.media_type = (char *)EB_MEDIA_OCI_LAYER_GZIP;
	layer.digest = missing;
	layer.size = 10;
	ms.config = &cfg;
	ms.layers = &layer;
	ms.n_layers = 1;
	ck_assert_int_eq(eb_manifest_build(&bad, &ms, &err), 0);
	put_doc(f.bs, &bad);
	eb_doc_descriptor(&bad_desc, &bad, EB_MEDIA_OCI_MANIFEST);

	ck_assert_int_eq(eb_layout_write(f.layout, f.bs, &bad_desc, "v1", &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, missing));
	ck_assert_ptr_nonnull(strstr(err->msg, "is not in the blob store"));
	eb_error_clear(&err);
	/* the old layout is untouched and no temporary directory is left */
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "layout");
	free(names);
	read_ok(&li, f.layout, "v1", NULL);
	ck_assert_str_eq(li.manifest_desc.digest, f.img.manifest.digest);
	eb_layout_image_release(&li);

	/* a missing manifest fails too, before anything is made */
	free(bad_desc.digest);
	bad_desc.digest = eb_xstrdup(missing);
	ck_assert_int_eq(eb_layout_write(f.layout, f.bs, &bad_desc, "v1", &err), -EB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err->msg, missing));
	eb_error_clear(&err);
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "layout");
	free(names);

	/* bad ref names are refused */
	ck_assert_int_eq(eb_layout_write(f.layout, f.bs, &f.img.manifest, "a b", &err),
			 -EB_EINVALID);
	eb_error_clear(&err);
	ck_assert(eb_layout_ref_valid("docker.io/library/app:1.0"));
	ck_assert(eb_layout_ref_valid("v1--rc"));
	ck_assert(!eb_layout_ref_valid("-v1"));
	ck_assert(!eb_layout_ref_valid("v1/"));
	ck_assert(!eb_layout_ref_valid(""));

	eb_descriptor_release(&bad_desc);
	eb_doc_release(&bad);
	fx_release(&f);
}
END_TEST

START_TEST(write_replaces_and_guards)
{
	struct fixture f;
	struct image second;
	struct eb_layout_image li;
	struct eb_error *err = NULL;
	char *names, *keep, *file;

	fx_init(&f);
	make_image(&second, f.bs, "linux/amd64", "second\n");
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");
	write_ok(f.layout, f.bs, &second.manifest, "v2");
	read_ok(&li, f.layout, NULL, NULL);
	ck_assert_str_eq(li.manifest_desc.digest, second.manifest.digest);
	eb_layout_image_release(&li);
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "layout");
	free(names);
	/* only the second image's blobs: a layout holds one image */
	file = eb_layout_blob_path(f.layout, f.img.layer);
	ck_assert_int_ne(access(file, F_OK), 0);
	free(file);

	/* an empty directory may be filled; someone's data is not replaced */
	keep = eb_path_join(f.tmp, "keep");
	ck_assert_int_eq(mkdir(keep, 0755), 0);
	write_ok(keep, f.bs, &f.img.manifest, "v1");
	rm_rf(keep);
	ck_assert_int_eq(mkdir(keep, 0755), 0);
	eb_test_write(keep, "precious.txt", "data\n");
	ck_assert_int_eq(eb_layout_write(keep, f.bs, &f.img.manifest, "v1", &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "is not an OCI image layout; not replacing it"));
	eb_error_clear(&err);
	names = list_dir(keep);
	ck_assert_str_eq(names, "precious.txt");
	free(names);
	free(keep);
	eb_descriptor_release(&second.manifest);
	fx_release(&f);
}
END_TEST

START_TEST(write_without_rename_exchange)
{
	struct fixture f;
	struct image second;
	struct eb_layout_image li;
	char *names;

	fx_init(&f);
	make_image(&second, f.bs, "linux/amd64", "second\n");
	no_rename_exchange = 1;
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");
	write_ok(f.layout, f.bs, &second.manifest, "v2");
	no_rename_exchange = 0;
	read_ok(&li, f.layout, "v2", NULL);
	ck_assert_str_eq(li.manifest_desc.digest, second.manifest.digest);
	eb_layout_image_release(&li);
	/* the old layout moved aside was removed */
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "layout");
	free(names);
	eb_descriptor_release(&second.manifest);
	fx_release(&f);
}
END_TEST

START_TEST(import_blob_into_store)
{
	struct fixture f;
	struct eb_layout_image li;
	struct eb_blobstore *bs2;
	struct eb_error *err = NULL;
	char *root;

	fx_init(&f);
	write_ok(f.layout, f.bs, &f.img.manifest, "v1");
	read_ok(&li, f.layout, "v1", NULL);
	root = eb_path_join(f.tmp, "store2");
	ck_assert_int_eq(eb_blobstore_open(&bs2, root, &err), 0);
	ck_assert_int_eq(eb_blobstore_has(bs2, f.img.layer, -1), 0);
	ck_assert_int_eq(eb_layout_import_blob(bs2, f.layout, &li.manifest.layers[0], &err), 0);
	ck_assert_int_eq(eb_blobstore_has(bs2, f.img.layer, li.manifest.layers[0].size), 1);
	ck_assert_int_eq(eb_blobstore_verify(bs2, f.img.layer, &err), 0);
	/* twice is fine */
	ck_assert_int_eq(eb_layout_import_blob(bs2, f.layout, &li.manifest.layers[0], &err), 0);
	eb_blobstore_free(bs2);
	free(root);
	eb_layout_image_release(&li);
	fx_release(&f);
}
END_TEST

START_TEST(docker_archive)
{
	struct fixture f;
	struct eb_error *err = NULL;
	char *tarball, *out = NULL, *names, *copy;
	struct eb_layout_image li;
	json_t *j;

	fx_init(&f);
	tarball = eb_path_join(f.parent, "image.tar");
	ck_assert_int_eq(eb_layout_write_docker_archive(tarball, f.bs, &f.img.manifest,
							"envbuild-test:1.0", &err), 0);
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "image.tar");
	free(names);

	ck_assert_int_eq(run(&out, "tar -tf %s", tarball), 0);
	ck_assert_ptr_nonnull(strstr(out, "manifest.json\n"));
	ck_assert_ptr_nonnull(strstr(out, eb_digest_hex(f.img.layer)));
	free(out);
	ck_assert_int_eq(run(&out, "tar -xOf %s manifest.json", tarball), 0);
	j = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_array_get(j, 0), "RepoTags"), 0)),
			 "envbuild-test:1.0");
	json_decref(j);
	free(out);

	if (have_tool("skopeo")) {
		ck_assert_msg(run(&out, "skopeo inspect docker-archive:%s 2>&1", tarball) == 0,
			      "skopeo: %s", out);
		j = json_loads(out, 0, NULL);
		ck_assert_msg(j != NULL, "skopeo said: %s", out);
		ck_assert_str_eq(json_string_value(json_object_get(j, "Architecture")), "amd64");
		json_decref(j);
		free(out);
		/* skopeo reads the layer through the archive (decompressing it
		 * to check the diff_id) */
		copy = eb_path_join(f.tmp, "from-archive");
		ck_assert_msg(run(&out, "skopeo copy --quiet docker-archive:%s oci:%s:x 2>&1",
				  tarball, copy) == 0, "skopeo: %s", out);
		free(out);
		read_ok(&li, copy, "x", NULL);
		ck_assert_str_eq(li.config.diff_ids[0], f.img.diff_id);
		eb_layout_image_release(&li);
		free(copy);
	}
	/* the same tarball is also an OCI archive */
	if (have_tool("skopeo")) {
		ck_assert_int_eq(run(&out, "skopeo inspect oci-archive:%s:1.0 2>&1", tarball), 0);
		ck_assert_ptr_nonnull(strstr(out, f.img.manifest.digest));
		free(out);
	}

	/* an index cannot go in; a tag with a digest is refused */
	{
		struct eb_descriptor d = f.img.manifest;
		d.media_type = (char *)EB_MEDIA_OCI_INDEX;
		ck_assert_int_eq(eb_layout_write_docker_archive(tarball, f.bs, &d, NULL, &err),
				 -EB_EINVALID);
		eb_error_clear(&err);
	}
	ck_assert_int_eq(eb_layout_write_docker_archive(tarball, f.bs, &f.img.manifest,
							"app@sha256:0123456789abcdef0123456789abcdef"
							"0123456789abcdef0123456789abcdef", &err),
			 -EB_EINVALID);
	eb_error_clear(&err);
	names = list_dir(f.parent);
	ck_assert_str_eq(names, "image.tar");
	free(names);
	free(tarball);
	fx_release(&f);
	if (!have_tool("skopeo"))
		EB_TEST_SKIP("skopeo not found: its reading of the archive did not run");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");

	/* the external tools take a while on slow machines */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, write_and_read_back);
	tcase_add_test(tc, read_errors);
	tcase_add_test(tc, skopeo_reads_and_copies_it);
	tcase_add_test(tc, umoci_unpacks_it);
	tcase_add_test(tc, index_layout_by_platform);
	tcase_add_test(tc, failed_write_keeps_old_layout);
	tcase_add_test(tc, write_replaces_and_guards);
	tcase_add_test(tc, write_without_rename_exchange);
	tcase_add_test(tc, import_blob_into_store);
	tcase_add_test(tc, docker_archive);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
