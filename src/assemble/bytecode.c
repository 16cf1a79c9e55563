/*
 * bytecode.c - the compile driver (a short Python program run by the
 * image's interpreter in the sandbox), the per-file cache around it, and
 * the image tree it runs on.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "assemble/bytecode.h"
#include "oci/cache.h"
#include "oci/unpack.h"
#include "sandbox/sandbox.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/interrupt.h"
#include "util/pool.h"

#define SOURCE_MAX (64u << 20) /* one .py file */
#define PYC_MAX (256u << 20)

/* Reads "N\tMTIME\tSIZE\tDEST\n" and SIZE bytes of source per file on
 * stdin and compiles them as DEST; prints the interpreter's identity
 * first, then per file "ok N SIZE\n" and the .pyc's bytes, or "fail N
 * MESSAGE\n".  Sources and bytecode go through the pipes, never through
 * files: a torch-sized wheel has thousands of modules, and each file
 * created costs more than its compile on some filesystems.  Each code
 * object is dropped before the next file (see the header: FLAG_REF), so
 * a file's bytes do not depend on which run or which files came before;
 * compiling makes no reference cycle, so the collector is off and runs
 * only after a file that failed (a traceback's frames may hold cycles): a
 * full collection after every file cost 30% of the compile (2000 of
 * bench/big's modules: 8.9 s -> 6.3 s, the same bytes).
 * Python 3.7+ (_code_to_timestamp_pyc). */
static const char DRIVER[] =
	"import sys, gc, importlib.util\n"
	"from importlib import _bootstrap_external as be\n"
	"m = importlib.util.MAGIC_NUMBER\n"
	"v = sys.version_info\n"
	"out = sys.stdout.buffer\n"
	"inp = sys.stdin.buffer\n"
	"gc.disable()\n"
	"out.write(('ident %s %s %d.%d.%d\\n' % (m.hex(), sys.implementation.cache_tag, v[0], v[1], v[2])).encode())\n"
	"out.flush()\n"
	"while True:\n"
	"    h = inp.readline()\n"
	"    if not h:\n"
	"        break\n"
	"    n, mtime, size, dest = h[:-1].decode('utf-8', 'surrogateescape').split('\\t', 3)\n"
	"    data = inp.read(int(size))\n"
	"    if len(data) != int(size):\n"
	"        break\n"
	"    failed = False\n"
	"    try:\n"
	"        code = compile(data, dest, 'exec', dont_inherit=True, optimize=0)\n"
	"        pyc = be._code_to_timestamp_pyc(code, int(mtime) & 0xFFFFFFFF, len(data))\n"
	"        del code\n"
	"        out.write(b'ok %s %d\\n' % (n.encode(), len(pyc)))\n"
	"        out.write(pyc)\n"
	"        del pyc\n"
	"    except Exception as e:\n"
	"        msg = (type(e).__name__ + ': ' + str(e)).replace('\\n', ' ')[:300]\n"
	"        out.write(('fail %s %s\\n' % (n, msg)).encode('utf-8', 'surrogateescape'))\n"
	"        failed = True\n"
	"    out.flush()\n"
	"    del data\n"
	"    if failed:\n"
	"        gc.collect()\n";

struct eb_bytecode {
	struct eb_blobstore *bs;
	char **layers, **diff_ids;
	size_t nlayers;
	char *interpreter;
	int64_t epoch;
	char *what;
	struct eb_diag_list *diags;
	char ikey[EB_DIGEST_STR_LEN + 1]; /* the "pyinterp" record's key */
	int have_ident;
	struct eb_bytecode_ident id;
	char *stage; /* blob store staging directory, or NULL */
	int stage_lock;
	char *root;  /* stage/root: the unpacked tree */
	int quiet;
	struct eb_bytecode_stats st;
	const struct eb_unpack_filter *filter; /* borrowed */
	/* Layers are written side by side (assemble/source_python.c): the
	 * tree, the identity, the stats and the warnings are taken under it;
	 * the runs themselves go on at once. */
	pthread_mutex_t mu;
	int jobs; /* compile runs at once at most; 0: one a core */
};

void eb_bytecode_set_unpack_filter(struct eb_bytecode *bc, const struct eb_unpack_filter *filter)
{
	bc->filter = filter;
}

void eb_bytecode_set_quiet(struct eb_bytecode *bc, int quiet)
{
	bc->quiet = quiet;
}

void eb_bytecode_set_jobs(struct eb_bytecode *bc, int jobs)
{
	bc->jobs = jobs;
}

int eb_bytecode_new(struct eb_bytecode **out, struct eb_blobstore *bs, const char *const *layers,
		    const char *const *diff_ids, size_t n, const char *interpreter, int64_t epoch,
		    const char *what, struct eb_diag_list *diags, struct eb_error **err)
{
	struct eb_bytecode *bc;
	struct eb_sha256 h;

	(void)err;
	bc = eb_xcalloc(1, sizeof(*bc));
	bc->bs = bs;
	bc->layers = eb_xcalloc(n + 1, sizeof(*bc->layers));
	bc->diff_ids = eb_xcalloc(n + 1, sizeof(*bc->diff_ids));
	eb_sha256_init(&h);
	eb_sha256_update(&h, "pyinterp 1\n", 11);
	for (size_t i = 0; i < n; i++) {
		const char *b = eb_path_basename(layers[i]); /* blobs are named by digest */

		bc->layers[i] = eb_xstrdup(layers[i]);
		bc->diff_ids[i] = diff_ids && diff_ids[i] ? eb_xstrdup(diff_ids[i]) : NULL;
		eb_sha256_update(&h, b, strlen(b) + 1);
	}
	bc->nlayers = n;
	bc->interpreter = eb_xstrdup(interpreter);
	eb_sha256_update(&h, interpreter, strlen(interpreter) + 1);
	eb_sha256_final(&h, bc->ikey);
	bc->epoch = epoch;
	bc->what = eb_xstrdup(what ? what : "the image");
	bc->diags = diags;
	bc->stage_lock = -1;
	pthread_mutex_init(&bc->mu, NULL);
	*out = bc;
	return 0;
}

/* Remove the stage and its tree, if any. */
static void drop_stage(struct eb_bytecode *bc)
{
	if (bc->stage) {
		(void)eb_fs_remove_tree(bc->stage, NULL);
		eb_interrupt_unregister(bc->stage);
		free(bc->stage);
		bc->stage = NULL;
	}
	if (bc->stage_lock >= 0)
		close(bc->stage_lock);
	bc->stage_lock = -1;
	free(bc->root);
	bc->root = NULL;
}

void eb_bytecode_free(struct eb_bytecode *bc)
{
	if (!bc)
		return;
	drop_stage(bc);
	for (size_t i = 0; i < bc->nlayers; i++) {
		free(bc->layers[i]);
		free(bc->diff_ids[i]);
	}
	free(bc->layers);
	free(bc->diff_ids);
	free(bc->interpreter);
	free(bc->what);
	pthread_mutex_destroy(&bc->mu);
	free(bc);
}

void eb_bytecode_stats(struct eb_bytecode *bc, struct eb_bytecode_stats *st)
{
	pthread_mutex_lock(&bc->mu);
	*st = bc->st;
	pthread_mutex_unlock(&bc->mu);
}

const char *eb_bytecode_host_platform(void)
{
	static const struct {
		const char *machine, *platform;
	} map[] = { { "x86_64", "linux/amd64" }, { "aarch64", "linux/arm64" },
		    { "armv7l", "linux/arm/v7" }, { "ppc64le", "linux/ppc64le" },
		    { "s390x", "linux/s390x" }, { "riscv64", "linux/riscv64" } };
	struct utsname u;

	if (uname(&u) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(u.machine, map[i].machine) == 0)
			return map[i].platform;
	return NULL;
}

char *eb_bytecode_pyc_path(const char *path, const char *tag)
{
	const char *slash = strrchr(path, '/');
	size_t n = strlen(path);

	if (!slash || n < 4 || strcmp(path + n - 3, ".py") != 0 || slash + 1 == path + n - 3)
		return NULL;
	return eb_xasprintf("%.*s/__pycache__/%.*s.%s.pyc", (int)(slash - path), path,
			    (int)(path + n - 3 - slash - 1), slash + 1, tag);
}

static int ensure_tree_locked(struct eb_bytecode *bc, struct eb_error **err)
{
	int r;

	if (bc->root)
		return 0;
	if ((r = eb_blobstore_mkdtemp(bc->bs, "stage-", &bc->stage, &bc->stage_lock, err)) < 0)
		return r;
	eb_interrupt_register(bc->stage, 1);
	bc->root = eb_xasprintf("%s/root", bc->stage);
	if (mkdir(bc->root, 0755) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", bc->root);
	/* the stage itself (mkdtemp: 0700) stays private: the sandbox opens
	 * the tree as the invoker */
	r = eb_oci_unpack_filtered(bc->root, (const char *const *)bc->layers,
				   (const char *const *)bc->diff_ids, bc->nlayers, bc->filter, err);
	if (r < 0) {
		eb_error_wrap(err, "unpacking %s to run its Python", bc->what);
		drop_stage(bc); /* the next caller tries again, on a stage of its own */
	}
	return r;
}

static int ensure_tree(struct eb_bytecode *bc, struct eb_error **err)
{
	int r;

	pthread_mutex_lock(&bc->mu);
	r = ensure_tree_locked(bc, err);
	pthread_mutex_unlock(&bc->mu);
	return r;
}

int eb_bytecode_tree(struct eb_bytecode *bc, const char **root, struct eb_error **err)
{
	int r = ensure_tree(bc, err);

	*root = r == 0 ? bc->root : NULL;
	return r;
}

static int parse_ident(const char *out, struct eb_bytecode_ident *id)
{
	const char *p = strstr(out, "ident ");

	if (p != out && (!p || p[-1] != '\n'))
		return -1;
	memset(id, 0, sizeof(*id));
	if (sscanf(p, "ident %15s %31s %31s", id->magic, id->tag, id->version) != 3)
		return -1;
	return 0;
}

struct run;
static long run_feed(void *ud, char *buf, size_t cap, struct eb_error **err);
static int run_sink(void *ud, const char *data, size_t len, struct eb_error **err);

/* One confined run of the driver: with run NULL, no input and stdout
 * captured in *stdout_text (the caller's): the identity; else the run's
 * files streamed through its pipes.  No bind: nothing of the host is
 * visible to it. */
static int run_driver(struct eb_bytecode *bc, struct run *run, char **stdout_text,
		      struct eb_error **err)
{
	static const char *const env[] = { "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1",
					   "PYTHONNOUSERSITE=1", NULL };
	struct eb_sandbox_opts o = { 0 };
	struct eb_sandbox_result res;
	const char *argv[] = { bc->interpreter, "-S", "-s", "-B", "-c", DRIVER, NULL };
	char *what = eb_xasprintf("%s of %s compiling bytecode", bc->interpreter, bc->what);
	int r;

	o.root = bc->root;
	o.argv = argv;
	o.env = env;
	o.source_date_epoch = bc->epoch;
	o.what = what;
	if (run) {
		o.feed = run_feed;
		o.sink = run_sink;
		o.stream_ud = run;
	} else {
		o.stdin_data = "";
		o.stdin_len = 0;
		o.capture_max = 64u << 10;
	}
	r = eb_sandbox_run(&o, &res, err);
	if (r == 0 && res.exit_status != 0) {
		/* the end of its stderr: the traceback's last lines */
		const char *tail = res.err_len > 600 ? res.err + res.err_len - 600 : res.err;

		r = eb_error_set(err, EB_EFAIL, "%s exited with status %d%s%s", what, res.exit_status,
				 res.err_len ? ": " : "", res.err_len ? tail : "");
	}
	if (r == 0 && res.out_truncated)
		r = eb_error_set(err, EB_EFAIL, "%s: too much output", what);
	if (r == 0 && stdout_text)
		*stdout_text = eb_steal_ptr(&res.out);
	eb_sandbox_result_free(&res);
	if (r < 0 && r != -EB_EINTR)
		eb_error_hint(err, "`bytecode: false` in envbuild.yaml builds without bytecode");
	free(what);
	return r;
}

static int ident_locked(struct eb_bytecode *bc, struct eb_bytecode_ident *id,
			struct eb_error **err)
{
	json_t *rec = NULL;
	char *out = NULL;
	int r = 0;

	if (bc->have_ident) {
		*id = bc->id;
		return 0;
	}
	if (eb_cache_record_get(bc->bs, "pyinterp", bc->ikey, &rec)) {
		const char *m = json_string_value(json_object_get(rec, "magic"));
		const char *t = json_string_value(json_object_get(rec, "tag"));
		const char *v = json_string_value(json_object_get(rec, "version"));

		if (m && t && v && strlen(m) < sizeof(id->magic) && strlen(t) < sizeof(id->tag) &&
		    strlen(v) < sizeof(id->version)) {
			snprintf(bc->id.magic, sizeof(bc->id.magic), "%s", m);
			snprintf(bc->id.tag, sizeof(bc->id.tag), "%s", t);
			snprintf(bc->id.version, sizeof(bc->id.version), "%s", v);
			bc->have_ident = 1;
		}
		json_decref(rec);
		if (bc->have_ident) {
			*id = bc->id;
			return 0;
		}
	}
	if ((r = ensure_tree_locked(bc, err)) < 0 || (r = run_driver(bc, NULL, &out, err)) < 0)
		goto done;
	if (parse_ident(out, &bc->id) < 0) {
		r = eb_error_set(err, EB_EFAIL, "%s of %s did not say its bytecode version",
				 bc->interpreter, bc->what);
		goto done;
	}
	bc->have_ident = 1;
	*id = bc->id;
	{
		/* the record points at a blob (records must); the identity is
		 * in the record itself */
		char dg[EB_DIGEST_STR_LEN + 1];
		char *txt = eb_xasprintf("%s %s %s\n", id->magic, id->tag, id->version);

		if (eb_blobstore_put(bc->bs, txt, strlen(txt), dg, NULL) == 0) {
			json_t *nr = json_pack("{s:s, s:I, s:s, s:s, s:s}", "digest", dg, "size",
					       (json_int_t)strlen(txt), "magic", id->magic, "tag",
					       id->tag, "version", id->version);
			if (nr)
				(void)eb_cache_record_put(bc->bs, "pyinterp", bc->ikey, nr, NULL);
			json_decref(nr);
		}
		free(txt);
	}
done:
	free(out);
	return r;
}

int eb_bytecode_ident(struct eb_bytecode *bc, struct eb_bytecode_ident *id,
		      struct eb_error **err)
{
	int r;

	pthread_mutex_lock(&bc->mu);
	r = ident_locked(bc, id, err);
	pthread_mutex_unlock(&bc->mu);
	return r;
}

void eb_bytecode_pycs_free(struct eb_bytecode_pyc *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].dest);
		free(p[i].path);
	}
	free(p);
}

/* Per source file during one compile call.  A compiled file is only named
 * (its blob): a torch-sized wheel's .pyc files are 100 MB and more, which
 * must not be held until its layer is written. */
struct job {
	char key[EB_DIGEST_STR_LEN + 1];
	int state; /* 0 pending, 1 compiled, 2 failed */
	char digest[EB_DIGEST_STR_LEN + 1]; /* state 1: the .pyc's blob */
	uint64_t len;                        /* state 1: its size */
	char *msg;                           /* state 2: why */
	int reused;
	uint64_t srclen;                     /* the source's size */
	size_t run;                          /* pending: 1 + the run it is in */
};

static void job_fail(struct job *j, const char *msg)
{
	j->state = 2;
	free(j->msg);
	j->msg = eb_xstrdup(msg);
}

static int64_t mtime_of(const struct eb_bytecode *bc, const struct eb_bytecode_src *s)
{
	return s->mtime < 0 ? bc->epoch : s->mtime;
}

static void pyc_key(const struct eb_bytecode *bc, const struct eb_bytecode_src *s,
		    const char *src_digest, char key[EB_DIGEST_STR_LEN + 1])
{
	/* the interpreter's identity (magic, tag and release: a bugfix
	 * release may compile differently under the same magic), not which
	 * platform's image it came from (assemble/bcsibling.h) */
	char *k = eb_xasprintf("pyc %d\n%s\n%s\n%s\n%s\n%lld\n%s\n", EB_BYTECODE_FORMAT,
			       bc->id.magic, bc->id.tag, bc->id.version, s->dest,
			       (long long)mtime_of(bc, s), src_digest);

	eb_sha256_digest(k, strlen(k), key);
	free(k);
}

static int cached(struct eb_bytecode *bc, struct job *j)
{
	json_t *rec = NULL;
	struct eb_buf b;
	const char *dg;
	json_int_t size;
	int ok = 0;

	if (!eb_cache_record_get(bc->bs, "pyc", j->key, &rec))
		return 0;
	dg = json_string_value(json_object_get(rec, "digest"));
	size = json_integer_value(json_object_get(rec, "size"));
	eb_buf_init(&b, 4096);
	if (!dg || !eb_digest_valid(dg) || size <= 0 || eb_cache_fetch(bc->bs, dg, size, NULL) < 0)
		goto done;
	if (json_is_true(json_object_get(rec, "failed"))) {
		/* the message is short; a .pyc is only named */
		if (eb_blobstore_read(bc->bs, dg, &b, 4096, NULL) < 0)
			goto done;
		job_fail(j, b.ptr); /* a buffer is always NUL-ended */
	} else {
		j->state = 1;
		memcpy(j->digest, dg, sizeof(j->digest));
		j->len = (uint64_t)size;
	}
	j->reused = 1;
	ok = 1;
done:
	eb_buf_release(&b);
	json_decref(rec);
	return ok;
}

/* Store the job's outcome (data, len: the .pyc, or NULL for a failure) as
 * a blob and record it; a compiled job is failed when its blob cannot be
 * stored, as it would have no bytes to install. */
static void remember(struct eb_bytecode *bc, struct job *j, const void *data, size_t len)
{
	char dg[EB_DIGEST_STR_LEN + 1];
	json_t *nr;

	if (j->state == 2) {
		data = j->msg;
		len = strlen(j->msg);
	}
	if (eb_blobstore_put(bc->bs, data, len, dg, NULL) < 0) {
		if (j->state == 1)
			job_fail(j, "its bytecode could not be stored");
		return;
	}
	if (j->state == 1) {
		memcpy(j->digest, dg, sizeof(j->digest));
		j->len = len;
	}
	/* a cache: failing to record only costs a compile */
	nr = json_pack("{s:s, s:I, s:b}", "digest", dg, "size", (json_int_t)len, "failed",
		       j->state == 2);
	if (nr)
		(void)eb_cache_record_put(bc->bs, "pyc", j->key, nr, NULL);
	json_decref(nr);
}

/* One run of the driver over a share of the pending files, fed and read
 * on a thread of its own (the caller's pool). */
struct run {
	struct eb_bytecode *bc;
	const struct eb_bytecode_src *srcs;
	struct job *jobs;
	size_t n, no;           /* jobs in all; this run's number (1-based) */
	size_t *idx, nidx;      /* this run's files, in the order sent */
	uint64_t bytes;         /* their sources' size */
	size_t next;            /* feed: the next of idx to send */
	struct eb_buf cur;      /* feed: its header and source */
	size_t off;
	struct eb_buf line;     /* sink: the line being read */
	struct eb_buf pyc;      /* sink: the .pyc being read */
	size_t want, at;        /* sink: its size and its job, when reading one */
	int r;
	struct eb_error *err;
};

static long run_feed(void *ud, char *buf, size_t cap, struct eb_error **err)
{
	struct run *run = ud;
	size_t k;
	int r;

	while (run->off == run->cur.len) {
		size_t i;

		eb_buf_truncate(&run->cur, 0);
		run->off = 0;
		if (run->next == run->nidx)
			return 0;
		i = run->idx[run->next++];
		if ((r = eb_interrupt_check(err)) < 0)
			return r;
		eb_buf_putf(&run->cur, "%zu\t%lld\t%llu\t%s\n", i,
			    (long long)mtime_of(run->bc, &run->srcs[i]),
			    (unsigned long long)run->jobs[i].srclen, run->srcs[i].dest);
		k = run->cur.len;
		if ((r = eb_fs_read_file(&run->cur, run->srcs[i].path, SOURCE_MAX, err)) < 0)
			return r;
		if (run->cur.len - k != run->jobs[i].srclen)
			return eb_error_set(err, EB_EIO, "'%s' changed while it was compiled",
					    run->srcs[i].path);
	}
	k = run->cur.len - run->off < cap ? run->cur.len - run->off : cap;
	memcpy(buf, run->cur.ptr + run->off, k);
	run->off += k;
	return (long)k;
}

static int malformed(struct run *run, struct eb_error **err)
{
	return eb_error_set(err, EB_EFAIL, "%s of %s compiling bytecode: malformed output",
			    run->bc->interpreter, run->bc->what);
}

/* One line of the driver's output: the identity, "ok N SIZE" (the .pyc's
 * bytes follow) or "fail N MESSAGE", for files of this run only. */
static int run_line(struct run *run, const char *line, struct eb_error **err)
{
	unsigned long long idx, size;
	char *end;

	if (strncmp(line, "ident ", 6) == 0)
		return 0;
	if (strncmp(line, "ok ", 3) == 0) {
		idx = strtoull(line + 3, &end, 10);
		if (*end != ' ' || idx >= run->n || run->jobs[idx].run != run->no ||
		    run->jobs[idx].state != 0)
			return malformed(run, err);
		size = strtoull(end + 1, &end, 10);
		if (*end || size <= 16 || size > PYC_MAX)
			return malformed(run, err);
		run->at = (size_t)idx;
		run->want = (size_t)size;
		eb_buf_truncate(&run->pyc, 0);
		return 0;
	}
	if (strncmp(line, "fail ", 5) == 0) {
		idx = strtoull(line + 5, &end, 10);
		if ((*end != ' ' && *end) || idx >= run->n || run->jobs[idx].run != run->no ||
		    run->jobs[idx].state != 0)
			return malformed(run, err);
		job_fail(&run->jobs[idx], *end == ' ' ? end + 1 : end);
		remember(run->bc, &run->jobs[idx], NULL, 0);
		return 0;
	}
	return malformed(run, err);
}

static int run_sink(void *ud, const char *data, size_t len, struct eb_error **err)
{
	struct run *run = ud;

	while (len) {
		if (run->want) {
			size_t k = run->want - run->pyc.len;

			if (k > len)
				k = len;
			eb_buf_put(&run->pyc, data, k);
			data += k;
			len -= k;
			if (run->pyc.len == run->want) {
				run->jobs[run->at].state = 1;
				remember(run->bc, &run->jobs[run->at], run->pyc.ptr, run->pyc.len);
				run->want = 0;
				eb_buf_truncate(&run->pyc, 0);
			}
		} else {
			const char *nl = memchr(data, '\n', len);
			size_t k = nl ? (size_t)(nl - data) : len;
			int r;

			if (eb_buf_add(&run->line, data, k) < 0)
				return malformed(run, err);
			data += k;
			len -= k;
			if (!nl)
				break;
			data++;
			len--;
			r = run_line(run, run->line.ptr, err);
			eb_buf_truncate(&run->line, 0);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

struct runs {
	struct run *v;
	size_t n, next;
	pthread_mutex_t mu;
};

static void *run_worker(void *arg)
{
	struct runs *rs = arg;

	for (;;) {
		struct run *run;

		pthread_mutex_lock(&rs->mu);
		run = rs->next < rs->n ? &rs->v[rs->next++] : NULL;
		pthread_mutex_unlock(&rs->mu);
		if (!run)
			return NULL;
		run->r = run_driver(run->bc, run, NULL, &run->err);
		if (run->r == 0 && (run->want || run->line.len))
			run->r = malformed(run, &run->err); /* it stopped mid-file */
	}
}

/* Files per run at least: a run costs a sandbox and an interpreter's
 * start (~50 ms), a module a few ms. */
#define RUN_MIN_FILES 32

/* Compile the pending jobs: on one run per core when there are many, each
 * with a share of about the same bytes (the biggest sources first, each
 * to the run with the fewest bytes yet). */
static int compile_pending(struct eb_bytecode *bc, const struct eb_bytecode_src *srcs,
			   struct job *jobs, size_t n, struct eb_error **err)
{
	struct runs rs = { NULL, 0, 0, PTHREAD_MUTEX_INITIALIZER };
	size_t *order = NULL, npend = 0, nruns;
	int r;

	for (size_t i = 0; i < n; i++) {
		if (jobs[i].state != 0)
			continue;
		/* a path with a newline or tab cannot be listed: not compiled */
		if (strpbrk(srcs[i].dest, "\n\t"))
			job_fail(&jobs[i], "its path has a tab or newline");
		else
			npend++;
	}
	if (!npend)
		return 0;
	if ((r = ensure_tree(bc, err)) < 0)
		return r;
	nruns = eb_pool_threads(bc->jobs, (npend + RUN_MIN_FILES - 1) / RUN_MIN_FILES);
	order = eb_xcalloc(npend, sizeof(*order));
	for (size_t i = 0, k = 0; i < n; i++) {
		size_t j = k++;

		if (jobs[i].state != 0) {
			k--;
			continue;
		}
		while (j > 0 && jobs[order[j - 1]].srclen < jobs[i].srclen) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	rs.v = eb_xcalloc(nruns, sizeof(*rs.v));
	rs.n = nruns;
	for (size_t k = 0; k < nruns; k++) {
		struct run *run = &rs.v[k];

		run->bc = bc;
		run->srcs = srcs;
		run->jobs = jobs;
		run->n = n;
		run->no = k + 1;
		run->idx = eb_xcalloc(npend, sizeof(*run->idx));
		eb_buf_init(&run->cur, 0);
		eb_buf_init(&run->line, 4096);
		eb_buf_init(&run->pyc, PYC_MAX);
	}
	for (size_t k = 0; k < npend; k++) {
		struct run *least = &rs.v[0];

		for (size_t m = 1; m < nruns; m++)
			if (rs.v[m].bytes < least->bytes)
				least = &rs.v[m];
		least->idx[least->nidx++] = order[k];
		least->bytes += jobs[order[k]].srclen;
		jobs[order[k]].run = least->no;
	}
	eb_pool_run(nruns, run_worker, &rs);
	for (size_t k = 0; k < nruns; k++) {
		struct run *run = &rs.v[k];

		if (r == 0 && run->r < 0) {
			r = run->r;
			*err = eb_steal_ptr(&run->err);
		}
		eb_error_free(run->err);
		free(run->idx);
		eb_buf_release(&run->cur);
		eb_buf_release(&run->line);
		eb_buf_release(&run->pyc);
	}
	for (size_t i = 0; i < n; i++) {
		jobs[i].run = 0;
		if (jobs[i].state == 0) /* sent but not answered: the driver died on it */
			job_fail(&jobs[i], "the compiler gave no answer");
	}
	free(rs.v);
	free(order);
	return r;
}

int eb_bytecode_compile(struct eb_bytecode *bc, const struct eb_bytecode_src *srcs, size_t n,
			const char *file, unsigned line, unsigned col,
			struct eb_bytecode_pyc **out, size_t *nout, struct eb_error **err)
{
	struct eb_bytecode_ident id;
	struct eb_buf failed = EB_BUF_INIT;
	struct job *jobs;
	size_t k = 0, nfail = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if (!n)
		return 0;
	if ((r = eb_bytecode_ident(bc, &id, err)) < 0)
		return r;
	jobs = eb_xcalloc(n, sizeof(*jobs));
	for (size_t i = 0; i < n; i++) {
		char sd[EB_DIGEST_STR_LEN + 1];
		uint64_t size;

		if ((r = eb_interrupt_check(err)) < 0 ||
		    (r = eb_sha256_file(srcs[i].path, sd, &size, err)) < 0)
			goto done;
		jobs[i].srclen = size;
		pyc_key(bc, &srcs[i], sd, jobs[i].key);
		(void)cached(bc, &jobs[i]);
	}
	if ((r = compile_pending(bc, srcs, jobs, n, err)) < 0)
		goto done;
	pthread_mutex_lock(&bc->mu); /* the stats and the warnings */
	*out = eb_xcalloc(n, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].state == 1) {
			(*out)[k].dest = eb_bytecode_pyc_path(srcs[i].dest, bc->id.tag);
			if (!(*out)[k].dest)
				continue;
			(*out)[k].path = eb_blobstore_path(bc->bs, jobs[i].digest);
			memcpy((*out)[k].digest, jobs[i].digest, sizeof(jobs[i].digest));
			(*out)[k].len = jobs[i].len;
			k++;
			if (jobs[i].reused)
				bc->st.reused++;
			else
				bc->st.compiled++;
		} else if (bc->quiet) {
			if (!nfail++)
				eb_buf_putf(&failed, "'%s'", srcs[i].dest);
			else if (nfail <= 3)
				eb_buf_putf(&failed, ", '%s'", srcs[i].dest);
			bc->st.failed++;
		} else {
			struct eb_diag *d;

			bc->st.failed++;
			d = eb_diag_add(bc->diags, EB_SEV_WARNING, file, line, col, "EB240",
					"no bytecode for '%s' (%s): %s", srcs[i].dest, bc->what,
					jobs[i].msg ? jobs[i].msg : "");
			eb_diag_hint(d, "Python compiles it at every start; it does not compile with "
					"%s %s", bc->interpreter, bc->id.version);
		}
	}
	*nout = k;
	if (nfail) {
		struct eb_diag *d = eb_diag_add(bc->diags, EB_SEV_WARNING, file, line, col, "EB240",
						"no bytecode for %zu file%s of %s that do not compile "
						"with %s %s: %s%s",
						nfail, nfail == 1 ? "" : "s", bc->what, bc->interpreter,
						bc->id.version, failed.ptr, nfail > 3 ? ", ..." : "");
		eb_diag_hint(d, "Python compiles them at import, if they are ever imported");
	}
	pthread_mutex_unlock(&bc->mu);
done:
	eb_buf_release(&failed);
	for (size_t i = 0; i < n; i++)
		free(jobs[i].msg);
	free(jobs);
	return r;
}
