/*
 * check_resolve.c - rewriting image references to locked digests: which
 * scalars are rewritten (envbuild://TARGET anywhere, image: values naming a
 * pushed tag), byte-exact output on tricky YAML (comments, flow style,
 * quotes, multi-document streams, CRLF, a byte order mark, anchors, tags),
 * the errors with their positions, and the EB103/EB104 image checker.
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lock/lock.h"
#include "lock/resolve.h"
#include "envspec/spec.h"
#include "stage/push.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "testutil.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"
#define D4 "sha256:4444444444444444444444444444444444444444444444444444444444444444"
#define REPO "registry.example.com/ml/churn"
#define INF REPO "@" D1
#define TRN REPO "@" D2
#define HUB "docker.io/acme/churn@" D3

/* inference: pushed twice; training: once; hub: to Docker Hub, the digest
 * only in image.digest; notebook: built, never pushed. */
static const char *const LOCK_JSON =
	"{\"lockVersion\": 1, \"targets\": {"
	" \"inference\": {\"image\": {\"digest\": \"" D1 "\", \"pushed\": ["
	"   {\"ref\": \"" REPO ":inference\", \"digest\": \"" D1 "\"},"
	"   {\"ref\": \"" REPO ":v1.4.0\", \"digest\": \"" D1 "\"}]}},"
	" \"training\": {\"image\": {\"digest\": \"" D2 "\", \"pushed\": ["
	"   {\"ref\": \"" REPO ":training\", \"digest\": \"" D2 "\"}]}},"
	" \"hub\": {\"image\": {\"digest\": \"" D3 "\", \"pushed\": ["
	"   {\"ref\": \"docker.io/acme/churn:hub\"}]}},"
	" \"notebook\": {\"image\": {\"digest\": \"" D4 "\"}}}}";

static struct eb_resolve_lock *lock_from(const char *json, struct eb_error **err)
{
	json_error_t je;
	json_t *j = json_loads(json, 0, &je);
	struct eb_resolve_lock *l = NULL;

	ck_assert_msg(j != NULL, "test lock JSON: %s", je.text);
	if (eb_resolve_lock_new(&l, j, "envbuild.lock", err) < 0)
		l = NULL;
	json_decref(j);
	return l;
}

static struct eb_resolve_lock *test_lock(void)
{
	struct eb_error *err = NULL;
	struct eb_resolve_lock *l = lock_from(LOCK_JSON, &err);

	ck_assert_msg(l != NULL, "lock: %s", err ? err->msg : "?");
	return l;
}

/* Rewrite len bytes; returns the output (caller frees), *n the count. */
static char *rewrite_len(const char *in, size_t len, size_t *n, size_t *outlen)
{
	struct eb_resolve_lock *l = test_lock();
	struct eb_error *err = NULL;
	struct eb_buf b;
	int r;

	eb_buf_init(&b, 0);
	r = eb_resolve_text(l, "job.yaml", in, len, &b, n, &err);
	ck_assert_msg(r == 0, "rewrite failed: %s", err ? err->msg : "?");
	ck_assert_ptr_null(err);
	eb_resolve_lock_free(l);
	return eb_buf_detach(&b, outlen);
}

/* Rewrite in and compare byte for byte with want, with nwant rewrites. */
static void ck_rewrite(const char *in, const char *want, size_t nwant)
{
	size_t n = 99, len = 0;
	char *got = rewrite_len(in, strlen(in), &n, &len);

	ck_assert_msg(len == strlen(want) && memcmp(got, want, len) == 0,
		      "rewrite of\n%s\ngave\n%s\nwant\n%s", in, got, want);
	ck_assert_uint_eq(n, nwant);
	free(got);
}

/* Rewrite must fail with EB_EINVALID at line:col, message containing msg. */
static void ck_rewrite_error(const char *in, unsigned line, unsigned col, const char *msg)
{
	struct eb_resolve_lock *l = test_lock();
	struct eb_error *err = NULL;
	struct eb_buf b;
	int r;

	eb_buf_init(&b, 0);
	eb_buf_adds(&b, "kept");
	r = eb_resolve_text(l, "job.yaml", in, strlen(in), &b, NULL, &err);
	ck_assert_int_eq(r, -EB_EINVALID);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->code, EB_EINVALID);
	ck_assert_str_eq(err->file ? err->file : "(null)", "job.yaml");
	ck_assert_msg(err->line == line && err->col == col, "error at %u:%u, want %u:%u (%s)",
		      err->line, err->col, line, col, err->msg);
	ck_assert_msg(strstr(err->msg, msg) != NULL, "error '%s' lacks '%s'", err->msg, msg);
	ck_assert_str_eq(b.ptr, "kept"); /* output untouched on error */
	eb_error_free(err);
	eb_buf_release(&b);
	eb_resolve_lock_free(l);
}

/* ---- which references resolve ------------------------------------------ */

struct ref_case {
	const char *value;
	int image;
	const char *want; /* NULL: left alone */
};

static const struct ref_case ref_cases[] = {
	{ "envbuild://training", 0, TRN },
	{ "envbuild://training", 1, TRN },
	{ "envbuild://inference", 0, INF }, /* the first pushed ref */
	{ "envbuild://hub", 1, HUB },       /* digest from image.digest */
	{ REPO ":inference", 1, INF },
	{ REPO ":v1.4.0", 1, INF },
	{ REPO ":training", 1, TRN },
	{ REPO ":inference", 0, NULL },    /* not an image: value */
	{ REPO ":nightly", 1, NULL },      /* a tag never pushed */
	{ REPO, 1, NULL },                 /* no tag */
	{ REPO ":inference@" D4, 1, NULL }, /* already pinned */
	{ REPO "@" D4, 1, NULL },
	{ "other.example.com/ml/churn:inference", 1, NULL },
	{ "acme/churn:hub", 1, HUB },      /* normalised to docker.io/acme/churn */
	{ "docker.io/acme/churn:hub", 1, HUB },
	{ "index.docker.io/acme/churn:hub", 1, HUB },
	{ "Not A Reference", 1, NULL },
	{ "${REGISTRY}/app:${TAG}", 1, NULL },
	{ "see envbuild://training", 0, NULL },
};

START_TEST(ref_table)
{
	const struct ref_case *c = &ref_cases[_i];
	struct eb_resolve_lock *l = test_lock();
	struct eb_error *err = NULL;
	char *got = (char *)"unset";

	ck_assert_int_eq(eb_resolve_ref(l, c->value, c->image, &got, &err), 0);
	ck_assert_ptr_null(err);
	if (!c->want)
		ck_assert_msg(got == NULL, "%s: resolved to %s, want it left alone", c->value, got);
	else
		ck_assert_msg(got && strcmp(got, c->want) == 0, "%s: got %s, want %s", c->value,
			      got ? got : "(null)", c->want);
	free(got);
	eb_resolve_lock_free(l);
}
END_TEST

START_TEST(ref_errors)
{
	struct eb_resolve_lock *l = test_lock();
	struct eb_error *err = NULL;
	char *got = NULL;

	ck_assert_int_eq(eb_resolve_ref(l, "envbuild://nosuch", 1, &got, &err), -EB_EINVALID);
	ck_assert_ptr_null(got);
	ck_assert_str_eq(err->msg, "unknown target 'nosuch' in 'envbuild://nosuch'");
	ck_assert_str_eq(err->hint,
			 "the targets in 'envbuild.lock' are: inference, training, hub, notebook");
	eb_error_clear(&err);

	ck_assert_int_eq(eb_resolve_ref(l, "envbuild://notebook", 0, &got, &err), -EB_EINVALID);
	ck_assert_str_eq(err->msg,
			 "target 'notebook' has no pushed reference in the lock; run envbuild push");
	eb_error_clear(&err);

	ck_assert_int_eq(eb_resolve_ref(l, "envbuild://", 0, &got, &err), -EB_EINVALID);
	ck_assert_str_eq(err->msg, "unknown target '' in 'envbuild://'");
	eb_error_clear(&err);
	eb_resolve_lock_free(l);
}
END_TEST

/* ---- byte-exact rewrites ------------------------------------------------- */

START_TEST(comments_and_indentation)
{
	ck_rewrite("# job: envbuild://training\n"
		   "environment:\n"
		   "    image:    envbuild://training    # the training env\n"
		   "    # image: envbuild://training\n"
		   "\n"
		   "    note: the envbuild://training image # a comment\n",
		   "# job: envbuild://training\n"
		   "environment:\n"
		   "    image:    " TRN "    # the training env\n"
		   "    # image: envbuild://training\n"
		   "\n"
		   "    note: the envbuild://training image # a comment\n",
		   1);
}
END_TEST

START_TEST(flow_style)
{
	ck_rewrite("containers: [{name: a, image: " REPO ":inference}, {image: 'envbuild://training',name: b}]\n"
		   "args: [envbuild://hub, --x]\n"
		   "sidecar: {image: nginx:1.25,  image2: " REPO ":training}\n",
		   "containers: [{name: a, image: " INF "}, {image: '" TRN "',name: b}]\n"
		   "args: [" HUB ", --x]\n"
		   "sidecar: {image: nginx:1.25,  image2: " REPO ":training}\n",
		   3);
	/* the rewritten flow output parses back to the references */
	ck_rewrite("{image: " INF "}\n", "{image: " INF "}\n", 0);
}
END_TEST

START_TEST(quoted_values)
{
	ck_rewrite("a: 'envbuild://training'\n"
		   "b: \"envbuild://training\"\n"
		   "c: \"envbuild://tr\\x61ining\"\n"
		   "image: \"" REPO ":inference\"   # quoted stays quoted\n"
		   "image2: 'it''s not'\n"
		   "d: ''\n",
		   "a: '" TRN "'\n"
		   "b: \"" TRN "\"\n"
		   "c: \"" TRN "\"\n"
		   "image: \"" INF "\"   # quoted stays quoted\n"
		   "image2: 'it''s not'\n"
		   "d: ''\n",
		   4);
}
END_TEST

START_TEST(multi_document)
{
	ck_rewrite("%YAML 1.1\n"
		   "---\n"
		   "kind: Deployment\n"
		   "image: " REPO ":inference\n"
		   "...\n"
		   "---\n"
		   "kind: Job\n"
		   "image: envbuild://training\n"
		   "--- envbuild://hub\n"
		   "---\n"
		   "# empty\n"
		   "--- # last\n"
		   "image: " REPO ":training\n",
		   "%YAML 1.1\n"
		   "---\n"
		   "kind: Deployment\n"
		   "image: " INF "\n"
		   "...\n"
		   "---\n"
		   "kind: Job\n"
		   "image: " TRN "\n"
		   "--- " HUB "\n"
		   "---\n"
		   "# empty\n"
		   "--- # last\n"
		   "image: " TRN "\n",
		   4);
}
END_TEST

START_TEST(crlf)
{
	static const char in[] = "spec:\r\n"
				 "  containers:\r\n"
				 "    - name: a\r\n"
				 "      image: " REPO ":inference\r\n"
				 "    - image: \"envbuild://training\" # c\r\n"
				 "\r\n"
				 "note: |\r\n"
				 "  text\r\n";
	static const char want[] = "spec:\r\n"
				   "  containers:\r\n"
				   "    - name: a\r\n"
				   "      image: " INF "\r\n"
				   "    - image: \"" TRN "\" # c\r\n"
				   "\r\n"
				   "note: |\r\n"
				   "  text\r\n";
	ck_rewrite(in, want, 2);
}
END_TEST

START_TEST(containers_list)
{
	ck_rewrite("spec:\n"
		   "  template:\n"
		   "    spec:\n"
		   "      initContainers:\n"
		   "      - name: init\n"
		   "        image: " REPO ":training\n"
		   "      containers:\n"
		   "      - name: server\n"
		   "        image: " REPO ":inference\n"
		   "        env:\n"
		   "        - name: IMAGE\n"
		   "          value: " REPO ":inference\n"
		   "      - image: busybox:1.36\n"
		   "        name: tools\n"
		   "      - name: pinned\n"
		   "        image: " REPO ":inference@" D4 "\n",
		   "spec:\n"
		   "  template:\n"
		   "    spec:\n"
		   "      initContainers:\n"
		   "      - name: init\n"
		   "        image: " TRN "\n"
		   "      containers:\n"
		   "      - name: server\n"
		   "        image: " INF "\n"
		   "        env:\n"
		   "        - name: IMAGE\n"
		   "          value: " REPO ":inference\n"
		   "      - image: busybox:1.36\n"
		   "        name: tools\n"
		   "      - name: pinned\n"
		   "        image: " REPO ":inference@" D4 "\n",
		   2);
}
END_TEST

START_TEST(not_references)
{
	static const char in[] = "envbuild://training: a key is never rewritten\n"
				 "image: 3\n"
				 "image2: envbuildx://training\n"
				 "name: " REPO ":inference\n"
				 "images: [" REPO ":inference]\n"
				 "image:\n"
				 "cmd: echo envbuild://training\n"
				 "url: https://envbuild://training\n"
				 "image: {name: " REPO ":inference}\n"
				 "image: [" REPO ":inference]\n"
				 "image: ${IMAGE}\n"
				 "script: |\n"
				 "  docker run envbuild://training\n"
				 "image: " REPO ":v9\n";

	ck_rewrite(in, in, 0);
}
END_TEST

START_TEST(anchors_and_tags)
{
	ck_rewrite("x-image: &img " REPO ":inference\n"
		   "x-other: &other busybox:1.36\n"
		   "svc:\n"
		   "  image: *img\n"
		   "  again:\n"
		   "    image: *img\n"
		   "  sidecar:\n"
		   "    image: *other\n"
		   "job:\n"
		   "  image: !!str &t envbuild://training\n"
		   "  copy: *t\n"
		   "tagged: !!str\n"
		   "  envbuild://hub\n"
		   "&k image: " REPO ":training\n"
		   "---\n"
		   "image: *img\n",
		   "x-image: &img " INF "\n"
		   "x-other: &other busybox:1.36\n"
		   "svc:\n"
		   "  image: *img\n"
		   "  again:\n"
		   "    image: *img\n"
		   "  sidecar:\n"
		   "    image: *other\n"
		   "job:\n"
		   "  image: !!str &t " TRN "\n"
		   "  copy: *t\n"
		   "tagged: !!str\n"
		   "  " HUB "\n"
		   "&k image: " TRN "\n"
		   "---\n"
		   "image: *img\n", /* an anchor of an earlier document does not count */
		   4);
}
END_TEST

START_TEST(multiline_and_unicode)
{
	/* libyaml counts characters; the rewrite works on bytes */
	ck_rewrite("\xef\xbb\xbf"
		   "name: \"caf\xc3\xa9 \xe2\x98\x95\"\n"
		   "list: [\"\xf0\x9f\x90\xb3\", d\xc3\xa9j\xc3\xa0, envbuild://training]\n"
		   "row: {\xc3\xa9: \xc3\xa9, image: envbuild://training}\n"
		   "image:\n"
		   "  envbuild://hub\n"
		   "other: \"a multi-line\n"
		   "  value\"\n",
		   "\xef\xbb\xbf"
		   "name: \"caf\xc3\xa9 \xe2\x98\x95\"\n"
		   "list: [\"\xf0\x9f\x90\xb3\", d\xc3\xa9j\xc3\xa0, " TRN "]\n"
		   "row: {\xc3\xa9: \xc3\xa9, image: " TRN "}\n"
		   "image:\n"
		   "  " HUB "\n"
		   "other: \"a multi-line\n"
		   "  value\"\n",
		   3);
}
END_TEST

START_TEST(nothing_to_do)
{
	size_t n = 99, len = 99;
	char *got;

	ck_rewrite("", "", 0);
	ck_rewrite("# only a comment", "# only a comment", 0);
	/* no final newline; the rest is kept */
	ck_rewrite("image: envbuild://training", "image: " TRN, 1);
	got = rewrite_len("a: 1\n", 5, &n, &len);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(len, 5);
	free(got);
}
END_TEST

START_TEST(appends_to_buffer)
{
	struct eb_resolve_lock *l = test_lock();
	struct eb_error *err = NULL;
	struct eb_buf b;

	eb_buf_init(&b, 0);
	eb_buf_adds(&b, "# first\n");
	ck_assert_int_eq(eb_resolve_text(l, "b.yaml", "image: envbuild://hub\n", 22, &b, NULL, &err), 0);
	ck_assert_str_eq(b.ptr, "# first\nimage: " HUB "\n");
	eb_buf_release(&b);
	eb_resolve_lock_free(l);
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

START_TEST(rewrite_errors)
{
	ck_rewrite_error("a: 1\n"
			 "steps:\n"
			 "  - image:   envbuild://nosuch # typo\n",
			 3, 14, "unknown target 'nosuch'");
	ck_rewrite_error("environment:\n  image: \"envbuild://notebook\"\n", 2, 10,
			 "target 'notebook' has no pushed reference in the lock; run envbuild push");
	/* the first error stops the rewrite */
	ck_rewrite_error("- envbuild://a\n- envbuild://b\n", 1, 3, "unknown target 'a'");
	/* CRLF and multi-byte characters do not shift the column */
	ck_rewrite_error("x: 1\r\n\xc3\xa9: [\xc3\xa9, envbuild://nosuch]\r\n", 2, 8,
			 "unknown target 'nosuch'");
	/* a later document */
	ck_rewrite_error("image: envbuild://training\n---\nimage: envbuild://nope\n", 3, 8,
			 "unknown target 'nope'");
	/* block scalars are never rewritten; a reference in one is an error */
	ck_rewrite_error("job:\n  image: >-\n    envbuild://training\n", 2, 10,
			 "cannot rewrite the image reference 'envbuild://training' in a block scalar");
	ck_rewrite_error("image: |\n  " REPO ":inference\n", 1, 8, "in a block scalar");
	/* syntax errors carry libyaml's position */
	ck_rewrite_error("a: 1\nb: [1, 2\n", 3, 1, "did not find expected ',' or ']'");
	ck_rewrite_error("a: b: c\n", 1, 5, "mapping values are not allowed");
	/* UTF-16 is refused, not mis-positioned */
	ck_rewrite_error("\xff\xfei\0m\0", 1, 1, "invalid");
}
END_TEST

START_TEST(lock_errors)
{
	struct eb_error *err = NULL;
	struct eb_resolve_lock *l;
	char *dir, path[4096];

	ck_assert_ptr_null(lock_from("{\"lockVersion\": 2, \"targets\": {}}", &err));
	ck_assert_str_eq(err->msg, "'envbuild.lock' is not an envbuild lockfile of version 1");
	eb_error_clear(&err);
	ck_assert_ptr_null(lock_from("[]", &err));
	eb_error_clear(&err);
	ck_assert_ptr_null(lock_from("{\"lockVersion\": 1, \"targets\": {\"t\": {\"image\": "
				     "{\"pushed\": [{\"ref\": \"Bad Ref:x\", \"digest\": \"" D1
				     "\"}]}}}}",
				     &err));
	ck_assert_msg(strstr(err->msg, "target 't': invalid pushed reference 'Bad Ref:x'") != NULL,
		      "%s", err->msg);
	eb_error_clear(&err);
	ck_assert_ptr_null(lock_from("{\"lockVersion\": 1, \"targets\": {\"t\": {\"image\": "
				     "{\"pushed\": [{\"ref\": \"r.io/a:x\"}]}}}}",
				     &err));
	ck_assert_str_eq(err->msg, "'envbuild.lock': target 't': no digest for the pushed "
				   "reference 'r.io/a:x'");
	eb_error_clear(&err);
	ck_assert_ptr_null(lock_from("{\"lockVersion\": 1, \"targets\": {\"t\": {\"image\": "
				     "{\"pushed\": [{\"ref\": \"r.io/a:x\", \"digest\": \"md5:00\"}]}}}}",
				     &err));
	ck_assert_msg(strstr(err->msg, "invalid digest 'md5:00'") != NULL, "%s", err->msg);
	eb_error_clear(&err);

	/* an empty lock is fine: nothing resolves */
	l = lock_from("{\"lockVersion\": 1, \"targets\": {}}", &err);
	ck_assert_ptr_nonnull(l);
	eb_resolve_lock_free(l);

	/* from disk: missing, not JSON, good */
	dir = eb_test_tmpdir();
	snprintf(path, sizeof(path), "%s/envbuild.lock", dir);
	ck_assert_int_eq(eb_resolve_lock_load(&l, path, &err), -EB_ENOTFOUND);
	ck_assert_ptr_null(l);
	ck_assert_ptr_nonnull(err->hint);
	eb_error_clear(&err);
	eb_test_write(dir, "envbuild.lock", "{\"lockVersion\": 1,\n  \"targets\": }\n");
	ck_assert_int_eq(eb_resolve_lock_load(&l, path, &err), -EB_EINVALID);
	ck_assert_uint_eq(err->line, 2);
	eb_error_clear(&err);
	eb_test_write(dir, "envbuild.lock", LOCK_JSON);
	ck_assert_int_eq(eb_resolve_lock_load(&l, path, &err), 0);
	ck_assert_ptr_nonnull(l);
	eb_resolve_lock_free(l);
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

/* ---- the image checker --------------------------------------------------- */

/* "line:col RULE" for each finding, sorted, joined with "; ". */
static char *check_summary(const char *text, size_t len)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	struct eb_buf b;

	eb_resolve_check_images("x.yaml", text, len, &dl);
	eb_diag_list_sort(&dl);
	eb_buf_init(&b, 0);
	for (size_t i = 0; i < dl.n; i++) {
		ck_assert_str_eq(dl.items[i].file, "x.yaml");
		ck_assert_int_eq(dl.items[i].severity, EB_SEV_ERROR);
		eb_buf_addf(&b, "%s%u:%u %s", i ? "; " : "", dl.items[i].line, dl.items[i].col,
			    dl.items[i].rule);
	}
	eb_diag_list_release(&dl);
	return eb_buf_detach(&b, NULL);
}

static void ck_check(const char *text, const char *want)
{
	char *got = check_summary(text, strlen(text));

	ck_assert_msg(strcmp(got, want) == 0, "check of\n%s\ngave '%s', want '%s'", text, got, want);
	free(got);
}

START_TEST(check_images)
{
	ck_check("services:\n"
		 "  api:\n"
		 "    image: nginx\n"                          /* 3:12 EB103 */
		 "  worker:\n"
		 "    image: \"python:latest\"   # moves\n"     /* 5:20 EB104 at the tag */
		 "  w2: {image: 'localhost:5000/app:latest'}\n" /* 6:35 */
		 "  ok1: {image: redis:7.2-alpine}\n"
		 "  ok2:\n"
		 "    image: envbuild://training\n"
		 "  ok3:\n"
		 "    image: busybox:latest@" D1 "\n"
		 "  ok4:\n"
		 "    image: ghcr.io/org/tool@" D1 "\n"
		 "  ok5:\n"
		 "    image: ${REGISTRY}/app:${TAG}\n"
		 "  ok6:\n"
		 "    image:\n"
		 "  notimage: nginx\n"
		 "  nested: {image: {repository: nginx, tag: latest}}\n"
		 "---\n"
		 "containers:\n"
		 "  - name: a\n"
		 "    image: localhost:5000/app\n"             /* 23:12 EB103 */
		 "  - image: \"docker.io/library/python:\\x6catest\"\n", /* escaped: 24:12 */
		 "3:12 EB103; 5:20 EB104; 6:35 EB104; 23:12 EB103; 24:12 EB104");
	ck_check("", "");
	ck_check("image: envbuild://anything-at-all\n", "");
}
END_TEST

START_TEST(check_messages)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	const char *text = "a: &x ubuntu:latest\r\n"
			   "b:\r\n"
			   "  image: *x\r\n"
			   "c:\r\n"
			   "  image: *x\r\n"
			   "d:\r\n"
			   "  image: alpine\r\n";

	eb_resolve_check_images("k8s/job.yaml", text, strlen(text), &dl);
	eb_diag_list_sort(&dl);
	ck_assert_uint_eq(dl.n, 2);
	/* an alias reports once, at the anchored scalar */
	ck_assert_uint_eq(dl.items[0].line, 1);
	ck_assert_uint_eq(dl.items[0].col, 14);
	ck_assert_str_eq(dl.items[0].rule, "EB104");
	ck_assert_str_eq(dl.items[0].msg, "image 'ubuntu:latest' uses the tag 'latest' without a digest");
	ck_assert_ptr_nonnull(dl.items[0].hint);
	ck_assert_uint_eq(dl.items[1].line, 7);
	ck_assert_uint_eq(dl.items[1].col, 10);
	ck_assert_str_eq(dl.items[1].rule, "EB103");
	ck_assert_str_eq(dl.items[1].msg, "image 'alpine' has no tag");
	ck_assert_ptr_nonnull(strstr(dl.items[1].hint, "alpine:TAG@sha256:"));
	ck_assert_ptr_nonnull(strstr(dl.items[1].hint, "envbuild://TARGET"));
	eb_diag_list_release(&dl);
}
END_TEST

START_TEST(check_syntax_error)
{
	struct eb_diag_list dl = EB_DIAG_LIST_INIT;
	const char *text = "image: nginx\nb: [1,\n";

	/* only the syntax error: findings before it are dropped */
	eb_resolve_check_images("bad.yaml", text, strlen(text), &dl);
	ck_assert_uint_eq(dl.n, 1);
	ck_assert_str_eq(dl.items[0].rule, "EB001");
	ck_assert_str_eq(dl.items[0].file, "bad.yaml");
	ck_assert_uint_eq(dl.items[0].line, 3);
	eb_diag_list_release(&dl);
}
END_TEST

/* ---- the lock's name and inputs (lock.h), push's inputs (stage/push.h) -- */

static struct eb_spec *spec_at(const char *path, const char *text)
{
	struct eb_diag_list diags = EB_DIAG_LIST_INIT;
	struct eb_spec *spec = NULL;
	struct eb_error *err = NULL;

	ck_assert_int_eq(eb_spec_load_buffer(&spec, path, text, strlen(text), &diags, &err), 0);
	eb_diag_list_release(&diags);
	ck_assert_ptr_nonnull(spec);
	return spec;
}

START_TEST(lock_path_per_spec)
{
	static const struct {
		const char *spec, *lock;
	} cases[] = {
		{ "envbuild.yaml", "envbuild.lock" },
		{ "envbuild.json", "envbuild.lock" },
		{ "p/one.yaml", "p/one.lock" },
		{ "p/four.yml", "p/four.lock" },
		{ "api.envbuild.yaml", "api.envbuild.lock" },
		{ "p/spec", "p/spec.lock" },
		{ "p/.yaml", "p/.yaml.lock" },
	};
	const char *text = "version: 1\nname: x\ntargets:\n  a: {base: scratch}\n";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eb_spec *spec = spec_at(cases[i].spec, text);
		char *p = eb_lock_path(spec);
		ck_assert_str_eq(p, cases[i].lock);
		free(p);
		eb_spec_free(spec);
	}
}
END_TEST

START_TEST(inputs_with_includes)
{
	char *dir = eb_test_tmpdir();
	char *path = eb_xasprintf("%s/envbuild.yaml", dir);
	char *want;
	struct eb_spec *spec;
	size_t n = 0;
	char **in;

	eb_test_write(dir, "r1.txt", "-r inc.txt\n-c con.txt\n");
	eb_test_write(dir, "r2.txt", "-r inc.txt\n");
	eb_test_write(dir, "inc.txt", "# nothing\n");
	eb_test_write(dir, "con.txt", "# nothing\n");
	spec = spec_at(path, "version: 1\nname: x\ntargets:\n"
			     "  a: {base: scratch, requirements: [r2.txt, r1.txt, gone.txt],"
			     " files: [{src: app, dest: /app}]}\n"
			     "  b: {base: scratch, requirements: [r1.txt]}\n");
	/* the spec first, then each requirements file and include once, sorted;
	 * a missing one still counts */
	in = eb_lock_inputs(spec, &n);
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(in[0], path);
	want = eb_xasprintf("%s/con.txt", dir);
	ck_assert_str_eq(in[1], want);
	free(want);
	ck_assert_ptr_nonnull(strstr(in[2], "/gone.txt"));
	ck_assert_ptr_nonnull(strstr(in[3], "/inc.txt"));
	ck_assert_ptr_nonnull(strstr(in[4], "/r1.txt"));
	ck_assert_ptr_nonnull(strstr(in[5], "/r2.txt"));
	ck_assert_ptr_null(in[6]);
	for (size_t i = 0; i < n; i++)
		free(in[i]);
	free(in);
	/* push adds every files source */
	in = eb_stage_push_inputs(spec, &n);
	ck_assert_uint_eq(n, 7);
	ck_assert_ptr_nonnull(strstr(in[6], "/app"));
	ck_assert_ptr_null(in[7]);
	for (size_t i = 0; i < n; i++)
		free(in[i]);
	free(in);
	eb_spec_free(spec);
	free(path);
	free(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, ref_table, 0, (int)(sizeof(ref_cases) / sizeof(ref_cases[0])));
	tcase_add_test(tc, ref_errors);
	tcase_add_test(tc, comments_and_indentation);
	tcase_add_test(tc, flow_style);
	tcase_add_test(tc, quoted_values);
	tcase_add_test(tc, multi_document);
	tcase_add_test(tc, crlf);
	tcase_add_test(tc, containers_list);
	tcase_add_test(tc, not_references);
	tcase_add_test(tc, anchors_and_tags);
	tcase_add_test(tc, multiline_and_unicode);
	tcase_add_test(tc, nothing_to_do);
	tcase_add_test(tc, appends_to_buffer);
	tcase_add_test(tc, rewrite_errors);
	tcase_add_test(tc, lock_errors);
	tcase_add_test(tc, check_images);
	tcase_add_test(tc, check_messages);
	tcase_add_test(tc, check_syntax_error);
	tcase_add_test(tc, lock_path_per_spec);
	tcase_add_test(tc, inputs_with_includes);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
