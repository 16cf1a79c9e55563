/*
 * registry-tool.c - a small command-line driver over src/registry/client.h
 * for the shell tests (tests/cli/registry_client.sh), until `envbuild push`
 * and `envbuild pull` exist.  Not installed.
 *
 *   registry-tool [OPTIONS] push [--source DIGEST=REPO]... LAYOUT[:NAME] REF...
 *                                [+ LAYOUT[:NAME] REF...]...
 *   registry-tool [OPTIONS] pull [--layers] REF PLATFORM|- CACHE
 *   registry-tool [OPTIONS] resolve REF
 *   registry-tool [OPTIONS] manifest REF OUTFILE|-
 *   registry-tool [OPTIONS] fetch-blob REPO DIGEST SIZE CACHE
 *
 * OPTIONS: --cache DIR (push's blob store; default: a new directory under
 * $TMPDIR), --mirrors FILE, --ca-file FILE, --insecure HOST,
 * --concurrency N, --chunk-size N, --attempts N, --backoff-ms N, --events
 * (one line per push event on stdout).
 *
 * push imports each layout's image (every blob but those named by
 * --source, which must then come from their source repository) into the
 * blob store and pushes all images in one eb_registry_push call: REF is
 * "host/repo[:tag]"; refs without a tag push by digest only.  Credentials
 * come from the environment (DOCKER_CONFIG, REGISTRY_AUTH_FILE).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oci/blobstore.h"
#include "oci/image.h"
#include "oci/layout.h"
#include "ref/imageref.h"
#include "registry/client.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

struct opts {
	const char *cache;
	int events;
	struct eb_registry_options ro;
	struct eb_http_registry insecure[8];
	size_t ninsecure;
};

static void usage(void)
{
	fputs("usage: registry-tool [OPTIONS] push|pull|resolve|manifest|fetch-blob ...\n"
	      "(see the comment at the top of tests/helpers/registry-tool.c)\n",
	      stderr);
	exit(2);
}

static int fail(struct eb_error *e)
{
	int code = e ? e->code : EB_EFAIL;

	if (e && e->file)
		fprintf(stderr, "registry-tool: %s:%u:%u: %s\n", e->file, e->line, e->col,
			e->msg ? e->msg : "failed");
	else
		fprintf(stderr, "registry-tool: %s\n", e && e->msg ? e->msg : "failed");
	if (e && e->hint)
		fprintf(stderr, "hint: %s\n", e->hint);
	eb_error_free(e);
	return code == EB_EUSAGE || code == EB_EIO ? 2 : 1;
}

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !*s || *end) {
		fprintf(stderr, "registry-tool: not a number: '%s'\n", s);
		exit(2);
	}
	return v;
}

static const char *kind_name(enum eb_push_event_kind k)
{
	switch (k) {
	case EB_PUSH_BLOB_EXISTS:
		return "exists";
	case EB_PUSH_BLOB_MOUNTED:
		return "mounted";
	case EB_PUSH_BLOB_START:
		return "start";
	case EB_PUSH_BLOB_PROGRESS:
		return "progress";
	case EB_PUSH_BLOB_DONE:
		return "done";
	case EB_PUSH_BLOB_RETRY:
		return "retry";
	case EB_PUSH_MANIFEST:
		return "manifest";
	case EB_PUSH_TAG:
		return "tag";
	}
	return "?";
}

static void on_event(void *ud, const struct eb_push_event *ev)
{
	(void)ud;
	printf("event %s %s %s%s%s size=%" PRIu64 " done=%" PRIu64 "\n", kind_name(ev->kind),
	       ev->repository, ev->digest ? ev->digest : "-", ev->tag ? " tag=" : "",
	       ev->tag ? ev->tag : "", ev->size, ev->done);
	fflush(stdout);
}

/* ---- push ------------------------------------------------------------- */

struct source_arg {
	char *digest;
	char *repo;
};

static int is_source(const struct source_arg *s, size_t n, const char *digest)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s[i].digest, digest) == 0)
			return 1;
	return 0;
}

/* Copy d and everything under it from the layout into the blob store. */
static int import(struct eb_blobstore *bs, const char *dir, const struct eb_descriptor *d,
		  const struct source_arg *src, size_t nsrc, struct eb_error **err)
{
	struct eb_buf b;
	enum eb_doc_kind kind;
	int rc;

	if (!eb_media_type_is_manifest(d->media_type) && !eb_media_type_is_index(d->media_type)) {
		if (is_source(src, nsrc, d->digest))
			return 0;
		return eb_layout_import_blob(bs, dir, d, err);
	}
	eb_buf_init(&b, 0);
	rc = eb_layout_read_blob(&b, dir, d, EB_IMAGE_DOC_MAX, err);
	if (rc == 0)
		rc = eb_blobstore_put(bs, b.ptr, b.len, NULL, err);
	if (rc == 0)
		rc = eb_image_doc_kind(&kind, d->media_type, b.ptr, b.len, err);
	if (rc == 0 && kind == EB_DOC_INDEX) {
		struct eb_index idx;
		rc = eb_index_parse(&idx, b.ptr, b.len, err);
		for (size_t i = 0; rc == 0 && i < idx.n_manifests; i++)
			rc = import(bs, dir, &idx.manifests[i], src, nsrc, err);
		eb_index_release(&idx);
	} else if (rc == 0) {
		struct eb_manifest m;
		rc = eb_manifest_parse(&m, b.ptr, b.len, err);
		if (rc == 0)
			rc = import(bs, dir, &m.config, src, nsrc, err);
		for (size_t i = 0; rc == 0 && i < m.n_layers; i++)
			rc = import(bs, dir, &m.layers[i], src, nsrc, err);
		eb_manifest_release(&m);
	}
	eb_buf_release(&b);
	return rc;
}

/* The entry of LAYOUT/index.json: LAYOUT:NAME picks by ref name, a bare
 * LAYOUT takes the only one. */
static int layout_top(struct eb_descriptor *out, char **dir, const char *arg,
		      struct eb_error **err)
{
	const char *colon = strrchr(arg, ':');
	eb_autofree char *name = NULL;
	eb_autofree char *index_path = NULL;
	struct eb_buf b;
	struct eb_index idx;
	struct stat st;
	int rc, found = 0;

	*dir = eb_xstrdup(arg);
	if (colon && stat(arg, &st) < 0) {
		free(*dir);
		*dir = eb_xstrndup(arg, (size_t)(colon - arg));
		name = eb_xstrdup(colon + 1);
	}
	index_path = eb_path_join(*dir, "index.json");
	eb_buf_init(&b, 0);
	rc = eb_fs_read_file(&b, index_path, EB_IMAGE_DOC_MAX, err);
	if (rc == 0)
		rc = eb_index_parse(&idx, b.ptr, b.len, err);
	eb_buf_release(&b);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < idx.n_manifests; i++) {
		const char *n = eb_annotations_get(&idx.manifests[i].annotations, EB_ANNOT_REF_NAME);
		if (name ? (n && strcmp(n, name) == 0) : idx.n_manifests == 1) {
			eb_descriptor_copy(out, &idx.manifests[i]);
			found = 1;
			break;
		}
	}
	eb_index_release(&idx);
	if (!found)
		return eb_error_set(err, EB_ENOTFOUND, "no image '%s' in layout '%s'",
				    name ? name : "(the only one)", *dir);
	return 0;
}

struct image_arg {
	char *dir;
	struct eb_descriptor top;
	/* one pushed image per repository */
	char **repos;
	char ***tags;
	size_t *ntags;
	size_t nrepos;
};

static void image_add_ref(struct image_arg *im, const char *ref)
{
	struct eb_imageref ir;
	struct eb_error *e = NULL;
	eb_autofree char *name = NULL;
	size_t k;

	if (eb_imageref_parse(&ir, ref, &e) < 0)
		exit(fail(e));
	name = eb_imageref_name(&ir);
	for (k = 0; k < im->nrepos; k++)
		if (strcmp(im->repos[k], name) == 0)
			break;
	if (k == im->nrepos) {
		im->repos = eb_xreallocarray(im->repos, k + 1, sizeof(*im->repos));
		im->tags = eb_xreallocarray(im->tags, k + 1, sizeof(*im->tags));
		im->ntags = eb_xreallocarray(im->ntags, k + 1, sizeof(*im->ntags));
		im->repos[k] = eb_xstrdup(name);
		im->tags[k] = eb_xcalloc(1, sizeof(char *));
		im->ntags[k] = 0;
		im->nrepos++;
	}
	if (ir.tag) {
		im->tags[k] = eb_xreallocarray(im->tags[k], im->ntags[k] + 2, sizeof(char *));
		im->tags[k][im->ntags[k]++] = eb_xstrdup(ir.tag);
		im->tags[k][im->ntags[k]] = NULL;
	}
	eb_imageref_release(&ir);
}

static int cmd_push(struct eb_registry *r, struct opts *o, int argc, char **argv)
{
	struct source_arg *src = NULL;
	struct image_arg *ims = NULL;
	size_t nsrc = 0, nims = 0, npush = 0;
	struct eb_blob_source *bsrc = NULL;
	struct eb_push_image *push = NULL;
	struct eb_push_result res;
	struct eb_blobstore *bs = NULL;
	struct eb_error *e = NULL;
	eb_autofree char *tmpcache = NULL;
	int i = 0, rc = 0;

	for (; i < argc && strcmp(argv[i], "--source") == 0; i += 2) {
		char *eq;
		if (i + 1 >= argc || !(eq = strchr(argv[i + 1], '=')))
			usage();
		src = eb_xreallocarray(src, nsrc + 1, sizeof(*src));
		src[nsrc].digest = eb_xstrndup(argv[i + 1], (size_t)(eq - argv[i + 1]));
		src[nsrc].repo = eb_xstrdup(eq + 1);
		nsrc++;
	}
	while (i < argc && rc == 0) {
		struct image_arg *im;
		ims = eb_xreallocarray(ims, nims + 1, sizeof(*ims));
		im = &ims[nims++];
		memset(im, 0, sizeof(*im));
		rc = layout_top(&im->top, &im->dir, argv[i++], &e);
		for (; rc == 0 && i < argc && strcmp(argv[i], "+") != 0; i++)
			image_add_ref(im, argv[i]);
		if (i < argc)
			i++;
		if (rc == 0 && !im->nrepos)
			usage();
	}
	if (!nims)
		usage();
	if (rc < 0)
		goto done;

	if (!o->cache) {
		const char *t = getenv("TMPDIR");
		tmpcache = eb_xasprintf("%s/registry-tool.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmpcache)) {
			rc = eb_error_set_errno(&e, EB_EIO, errno, "cannot create '%s'", tmpcache);
			goto done;
		}
	}
	rc = eb_blobstore_open(&bs, o->cache ? o->cache : tmpcache, &e);
	for (size_t k = 0; rc == 0 && k < nims; k++)
		rc = import(bs, ims[k].dir, &ims[k].top, src, nsrc, &e);
	if (rc < 0)
		goto done;

	bsrc = eb_xcalloc(nsrc + 1, sizeof(*bsrc));
	for (size_t k = 0; k < nsrc; k++) {
		bsrc[k].digest = src[k].digest;
		bsrc[k].repository_ref = src[k].repo;
	}
	for (size_t k = 0; k < nims; k++) {
		for (size_t j = 0; j < ims[k].nrepos; j++) {
			push = eb_xreallocarray(push, npush + 1, sizeof(*push));
			push[npush].repository_ref = ims[k].repos[j];
			push[npush].top = &ims[k].top;
			push[npush].tags = (const char *const *)ims[k].tags[j];
			npush++;
		}
	}
	rc = eb_registry_push(r, push, npush, bsrc, nsrc, bs, &res, &e);
	printf("result uploaded=%u mounted=%u existing=%u bytes=%" PRIu64 " manifests=%u tags=%u\n",
	       res.blobs_uploaded, res.blobs_mounted, res.blobs_existing, res.bytes_uploaded,
	       res.manifests, res.tags);
	for (size_t k = 0; k < nims; k++)
		printf("top %s %s\n", ims[k].dir, ims[k].top.digest);
	fflush(stdout);
done:
	eb_blobstore_free(bs);
	for (size_t k = 0; k < nsrc; k++) {
		free(src[k].digest);
		free(src[k].repo);
	}
	free(src);
	free(bsrc);
	free(push);
	for (size_t k = 0; k < nims; k++) {
		for (size_t j = 0; j < ims[k].nrepos; j++) {
			for (size_t t = 0; t < ims[k].ntags[j]; t++)
				free(ims[k].tags[j][t]);
			free(ims[k].tags[j]);
			free(ims[k].repos[j]);
		}
		free(ims[k].tags);
		free(ims[k].ntags);
		free(ims[k].repos);
		free(ims[k].dir);
		eb_descriptor_release(&ims[k].top);
	}
	free(ims);
	return rc < 0 ? fail(e) : 0;
}

/* ---- pull and friends ------------------------------------------------------ */

static int cmd_pull(struct eb_registry *r, int argc, char **argv)
{
	struct eb_platform plat = { 0 };
	struct eb_layout_image img = { 0 };
	struct eb_blobstore *bs = NULL;
	struct eb_error *e = NULL;
	int layers = 0, rc = 0, have_plat = 0;

	if (argc > 0 && strcmp(argv[0], "--layers") == 0) {
		layers = 1;
		argc--;
		argv++;
	}
	if (argc != 3)
		usage();
	if (strcmp(argv[1], "-") != 0) {
		rc = eb_platform_parse(&plat, argv[1], &e);
		have_plat = rc == 0;
	}
	if (rc == 0)
		rc = eb_blobstore_open(&bs, argv[2], &e);
	if (rc == 0)
		rc = eb_registry_pull(r, argv[0], have_plat ? &plat : NULL, bs, layers, &img, &e);
	if (rc == 0) {
		eb_autofree char *p = eb_platform_format(&img.config.platform);
		printf("top %s %s %" PRId64 "\n", img.top.digest, img.top.media_type, img.top.size);
		printf("manifest %s %s\n", img.manifest_desc.digest, img.manifest_desc.media_type);
		printf("config %s\n", img.manifest.config.digest);
		printf("platform %s\n", p);
		for (size_t i = 0; i < img.manifest.n_layers; i++) {
			const struct eb_descriptor *d = &img.manifest.layers[i];
			printf("layer %s %s\n", d->digest,
			       eb_blobstore_has(bs, d->digest, d->size) ? "present" : "absent");
		}
	}
	eb_layout_image_release(&img);
	eb_platform_release(&plat);
	eb_blobstore_free(bs);
	return rc < 0 ? fail(e) : 0;
}

static int cmd_resolve(struct eb_registry *r, int argc, char **argv)
{
	char digest[EB_DIGEST_STR_LEN + 1];
	char *mt = NULL;
	struct eb_error *e = NULL;

	if (argc != 1)
		usage();
	if (eb_registry_resolve(r, argv[0], digest, &mt, &e) < 0)
		return fail(e);
	printf("%s %s\n", digest, mt);
	free(mt);
	return 0;
}

static int cmd_manifest(struct eb_registry *r, int argc, char **argv)
{
	struct eb_remote_doc doc;
	struct eb_error *e = NULL;
	int rc;

	if (argc != 2)
		usage();
	rc = eb_registry_get_manifest(r, argv[0], &doc, &e);
	if (rc == 0 && strcmp(argv[1], "-") != 0)
		rc = eb_fs_write_atomic(argv[1], doc.data.ptr, doc.data.len, 0644, &e);
	if (rc == 0)
		printf("%s %s\n", doc.digest, doc.media_type);
	eb_remote_doc_release(&doc);
	return rc < 0 ? fail(e) : 0;
}

static int cmd_fetch_blob(struct eb_registry *r, int argc, char **argv)
{
	struct eb_descriptor d = { 0 };
	struct eb_blobstore *bs = NULL;
	struct eb_error *e = NULL;
	int rc;

	if (argc != 4)
		usage();
	d.media_type = (char *)EB_MEDIA_OCI_LAYER_GZIP;
	d.digest = argv[1];
	d.size = (int64_t)num(argv[2]);
	rc = eb_blobstore_open(&bs, argv[3], &e);
	if (rc == 0)
		rc = eb_registry_fetch_blob(r, argv[0], &d, bs, &e);
	if (rc == 0)
		printf("fetched %s\n", d.digest);
	eb_blobstore_free(bs);
	return rc < 0 ? fail(e) : 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct eb_registry *r = NULL;
	struct eb_error *e = NULL;
	const char *cmd;
	int i = 1, rc;

	memset(&o, 0, sizeof(o));
	signal(SIGPIPE, SIG_IGN);
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--events") == 0) {
			o.events = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (strcmp(a, "--cache") == 0)
			o.cache = v;
		else if (strcmp(a, "--mirrors") == 0)
			o.ro.mirrors_file = v;
		else if (strcmp(a, "--ca-file") == 0)
			o.ro.http.ca_file = v;
		else if (strcmp(a, "--insecure") == 0 && o.ninsecure < 8) {
			o.insecure[o.ninsecure].host = v;
			o.insecure[o.ninsecure++].insecure = 1;
		} else if (strcmp(a, "--concurrency") == 0)
			o.ro.concurrency = (int)num(v);
		else if (strcmp(a, "--chunk-size") == 0)
			o.ro.chunk_size = num(v);
		else if (strcmp(a, "--attempts") == 0)
			o.ro.http.max_attempts = (int)num(v);
		else if (strcmp(a, "--backoff-ms") == 0)
			o.ro.http.backoff_ms = (long)num(v);
		else
			usage();
	}
	if (i >= argc)
		usage();
	cmd = argv[i++];
	o.ro.http.registries = o.insecure;
	o.ro.http.nregistries = o.ninsecure;
	if (o.events)
		o.ro.on_event = on_event;
	if (eb_registry_new(&r, &o.ro, &e) < 0)
		return fail(e);
	if (strcmp(cmd, "push") == 0)
		rc = cmd_push(r, &o, argc - i, argv + i);
	else if (strcmp(cmd, "pull") == 0)
		rc = cmd_pull(r, argc - i, argv + i);
	else if (strcmp(cmd, "resolve") == 0)
		rc = cmd_resolve(r, argc - i, argv + i);
	else if (strcmp(cmd, "manifest") == 0)
		rc = cmd_manifest(r, argc - i, argv + i);
	else if (strcmp(cmd, "fetch-blob") == 0)
		rc = cmd_fetch_blob(r, argc - i, argv + i);
	else
		usage();
	eb_registry_free(r);
	return rc;
}
