/*
 * bytecode.c - the compile driver (a short Python program run by the
 * image's interpreter in the sandbox), the per-file cache around it, and
 * the image tree it runs on.
 */
#include "config.h"

#include <errno.h>
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

#define SOURCE_MAX (64u << 20) /* one .py file */
#define PYC_MAX (256u << 20)

/* Reads "N\tMTIME\tDEST" lines on stdin, compiles /tmp/src/N as DEST into
 * /tmp/out/N.pyc; prints the interpreter's identity first, then "ok N" or
 * "fail N MESSAGE" per file.  Each code object is dropped before the next
 * file (see the header: FLAG_REF).  Python 3.7+ (_code_to_timestamp_pyc). */
static const char DRIVER[] =
	"import sys, gc, importlib.util\n"
	"from importlib import _bootstrap_external as be\n"
	"m = importlib.util.MAGIC_NUMBER\n"
	"v = sys.version_info\n"
	"print('ident', m.hex(), sys.implementation.cache_tag, '%d.%d.%d' % (v[0], v[1], v[2]), flush=True)\n"
	
	"todo = sys.stdin.buffer.read().decode('utf-8', 'surrogateescape').split('\\n')\n"
	"for line in todo:\n"
	"    if not line:\n"
	"        continue\n"
	"    n, mtime, dest = line.split('\\t', 2)\n"
	"    try:\n"
	"        with open('/tmp/src/' + n, 'rb') as f:\n"
	"            data = f.read()\n"
	"        code = compile(data, dest, 'exec', dont_inherit=True, optimize=0)\n"
	"        pyc = be._code_to_timestamp_pyc(code, int(mtime) & 0xFFFFFFFF, len(data))\n"
	"        del code\n"
	"        with open('/tmp/out/' + n + '.pyc', 'wb') as f:\n"
	"            f.write(pyc)\n"
	"        del pyc, data\n"
	"        print('ok', n, flush=True)\n"
	"    except Exception as e:\n"
	"        msg = (type(e).__name__ + ': ' + str(e)).replace('\\n', ' ')[:300]\n"
	"        print('fail', n, msg, flush=True)\n"
	"    gc.collect()\n";

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
	unsigned runs;
	int quiet;
	struct eb_bytecode_stats st;
	const struct eb_unpack_filter *filter; /* borrowed */
};

void eb_bytecode_set_unpack_filter(struct eb_bytecode *bc, const struct eb_unpack_filter *filter)
{
	bc->filter = filter;
}

void eb_bytecode_set_quiet(struct eb_bytecode *bc, int quiet)
{
	bc->quiet = quiet;
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
	*out = bc;
	return 0;
}

void eb_bytecode_free(struct eb_bytecode *bc)
{
	if (!bc)
		return;
	if (bc->stage) {
		(void)eb_fs_remove_tree(bc->stage, NULL);
		eb_interrupt_unregister(bc->stage);
		free(bc->stage);
	}
	if (bc->stage_lock >= 0)
		close(bc->stage_lock);
	free(bc->root);
	for (size_t i = 0; i < bc->nlayers; i++) {
		free(bc->layers[i]);
		free(bc->diff_ids[i]);
	}
	free(bc->layers);
	free(bc->diff_ids);
	free(bc->interpreter);
	free(bc->what);
	free(bc);
}

void eb_bytecode_stats(const struct eb_bytecode *bc, struct eb_bytecode_stats *st)
{
	*st = bc->st;
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

static int ensure_tree(struct eb_bytecode *bc, struct eb_error **err)
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
	if (r < 0)
		eb_error_wrap(err, "unpacking %s to run its Python", bc->what);
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

/* One confined run of the driver over the listed files (list: "N\tDEST\n"
 * lines, srcdir holding N, outdir receiving N.pyc).  *stdout_text is the
 * caller's. */
static int run_driver(struct eb_bytecode *bc, const char *list, size_t len, const char *srcdir,
		      const char *outdir, char **stdout_text, struct eb_error **err)
{
	struct eb_sandbox_bind binds[2] = { { srcdir, "/tmp/src", 0 }, { outdir, "/tmp/out", 1 } };
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
	o.binds = binds;
	o.nbinds = 2;
	o.source_date_epoch = bc->epoch;
	o.stdin_data = list;
	o.stdin_len = len;
	o.what = what;
	o.capture_max = 16u << 20;
	r = eb_sandbox_run(&o, &res, err);
	if (r == 0 && res.exit_status != 0) {
		/* the end of its stderr: the traceback's last lines */
		const char *tail = res.err_len > 600 ? res.err + res.err_len - 600 : res.err;

		r = eb_error_set(err, EB_EFAIL, "%s exited with status %d%s%s", what, res.exit_status,
				 res.err_len ? ": " : "", res.err_len ? tail : "");
	}
	if (r == 0 && res.out_truncated)
		r = eb_error_set(err, EB_EFAIL, "%s: too much output", what);
	if (r == 0)
		*stdout_text = eb_steal_ptr(&res.out);
	eb_sandbox_result_free(&res);
	if (r < 0 && r != -EB_EINTR)
		eb_error_hint(err, "`bytecode: false` in envbuild.yaml builds without bytecode");
	free(what);
	return r;
}

/* A fresh pair of directories under the stage for one run. */
static int run_dirs(struct eb_bytecode *bc, char **srcdir, char **outdir, struct eb_error **err)
{
	int r;

	bc->runs++;
	*srcdir = eb_xasprintf("%s/src%u", bc->stage, bc->runs);
	*outdir = eb_xasprintf("%s/out%u", bc->stage, bc->runs);
	if (mkdir(*srcdir, 0755) != 0)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", *srcdir);
	if ((r = eb_sandbox_prepare_output(*outdir, err)) < 0)
		return r;
	return 0;
}

int eb_bytecode_ident(struct eb_bytecode *bc, struct eb_bytecode_ident *id,
		      struct eb_error **err)
{
	json_t *rec = NULL;
	char *srcdir = NULL, *outdir = NULL, *out = NULL;
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
	if ((r = ensure_tree(bc, err)) < 0 || (r = run_dirs(bc, &srcdir, &outdir, err)) < 0 ||
	    (r = run_driver(bc, "", 0, srcdir, outdir, &out, err)) < 0)
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
	free(srcdir);
	free(outdir);
	free(out);
	return r;
}

void eb_bytecode_pycs_free(struct eb_bytecode_pyc *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].dest);
		free(p[i].data);
	}
	free(p);
}

/* Per source file during one compile call. */
struct job {
	char key[EB_DIGEST_STR_LEN + 1];
	int state; /* 0 pending, 1 compiled, 2 failed */
	char *data; /* the .pyc, or the failure message */
	size_t len;
	int reused;
};

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
	int ok = 0;

	if (!eb_cache_record_get(bc->bs, "pyc", j->key, &rec))
		return 0;
	dg = json_string_value(json_object_get(rec, "digest"));
	eb_buf_init(&b, PYC_MAX);
	if (dg && eb_cache_fetch(bc->bs, dg, json_integer_value(json_object_get(rec, "size")),
				 NULL) == 0 &&
	    eb_blobstore_read(bc->bs, dg, &b, PYC_MAX, NULL) == 0) {
		j->state = json_is_true(json_object_get(rec, "failed")) ? 2 : 1;
		j->len = b.len;
		j->data = eb_buf_detach(&b, NULL);
		j->reused = 1;
		ok = 1;
	}
	eb_buf_release(&b);
	json_decref(rec);
	return ok;
}

static void remember(struct eb_bytecode *bc, const struct job *j)
{
	char dg[EB_DIGEST_STR_LEN + 1];
	json_t *nr;

	/* a cache: failing to record only costs a compile */
	if (eb_blobstore_put(bc->bs, j->data, j->len, dg, NULL) < 0)
		return;
	nr = json_pack("{s:s, s:I, s:b}", "digest", dg, "size", (json_int_t)j->len, "failed",
		       j->state == 2);
	if (nr)
		(void)eb_cache_record_put(bc->bs, "pyc", j->key, nr, NULL);
	json_decref(nr);
}

/* Compile the pending jobs in one run. */
static int compile_pending(struct eb_bytecode *bc, const struct eb_bytecode_src *srcs,
			   struct job *jobs, size_t n, struct eb_error **err)
{
	char *srcdir = NULL, *outdir = NULL, *out = NULL;
	struct eb_buf list = EB_BUF_INIT;
	size_t npend = 0;
	int r;

	for (size_t i = 0; i < n; i++)
		npend += jobs[i].state == 0;
	if (!npend)
		return 0;
	if ((r = ensure_tree(bc, err)) < 0 || (r = run_dirs(bc, &srcdir, &outdir, err)) < 0)
		goto done;
	for (size_t i = 0; i < n; i++) {
		struct eb_buf b;
		char *dst;

		if (jobs[i].state != 0)
			continue;
		eb_buf_init(&b, SOURCE_MAX);
		dst = eb_xasprintf("%s/%zu", srcdir, i);
		r = eb_fs_read_file(&b, srcs[i].path, SOURCE_MAX, err);
		/* a copy of its own, mode 0644: the sandbox's user reads it;
		 * it lives for this run only, so no fsync */
		if (r == 0)
			r = eb_fs_write_replace(dst, b.ptr, b.len, 0644, err);
		eb_buf_release(&b);
		free(dst);
		if (r < 0)
			goto done;
		/* a path with a newline or tab cannot be listed: not compiled */
		if (strpbrk(srcs[i].dest, "\n\t")) {
			jobs[i].state = 2;
			jobs[i].data = eb_xstrdup("its path has a tab or newline");
			jobs[i].len = strlen(jobs[i].data);
			continue;
		}
		eb_buf_putf(&list, "%zu\t%lld\t%s\n", i, (long long)mtime_of(bc, &srcs[i]),
			    srcs[i].dest);
	}
	if ((r = run_driver(bc, list.ptr, list.len, srcdir, outdir, &out, err)) < 0)
		goto done;
	for (const char *p = out; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		char *line = eb_xstrndup(p, ll);
		unsigned long idx;
		char *end;

		p = nl ? nl + 1 : NULL;
		if (strncmp(line, "ok ", 3) == 0 || strncmp(line, "fail ", 5) == 0) {
			int ok = line[0] == 'o';
			idx = strtoul(line + (ok ? 3 : 5), &end, 10);
			if (idx < n && jobs[idx].state == 0) {
				if (ok) {
					struct eb_buf b;
					char *pyc = eb_xasprintf("%s/%lu.pyc", outdir, idx);

					eb_buf_init(&b, PYC_MAX);
					if (eb_fs_read_file(&b, pyc, PYC_MAX, NULL) == 0 && b.len > 16) {
						jobs[idx].state = 1;
						jobs[idx].len = b.len;
						jobs[idx].data = eb_buf_detach(&b, NULL);
					}
					eb_buf_release(&b);
					free(pyc);
				} else {
					jobs[idx].state = 2;
					jobs[idx].data = eb_xstrdup(*end == ' ' ? end + 1 : end);
					jobs[idx].len = strlen(jobs[idx].data);
				}
			}
		}
		free(line);
	}
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].reused)
			continue;
		if (jobs[i].state == 0) {
			/* listed but not answered: the driver died on it */
			jobs[i].state = 2;
			jobs[i].data = eb_xstrdup("the compiler gave no answer");
			jobs[i].len = strlen(jobs[i].data);
			continue;
		}
		remember(bc, &jobs[i]);
	}
done:
	if (srcdir)
		(void)eb_fs_remove_tree(srcdir, NULL);
	if (outdir)
		(void)eb_fs_remove_tree(outdir, NULL);
	free(srcdir);
	free(outdir);
	free(out);
	eb_buf_release(&list);
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
		pyc_key(bc, &srcs[i], sd, jobs[i].key);
		(void)cached(bc, &jobs[i]);
	}
	if ((r = compile_pending(bc, srcs, jobs, n, err)) < 0)
		goto done;
	*out = eb_xcalloc(n, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].state == 1) {
			(*out)[k].dest = eb_bytecode_pyc_path(srcs[i].dest, bc->id.tag);
			if (!(*out)[k].dest)
				continue;
			(*out)[k].data = eb_steal_ptr(&jobs[i].data);
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
					"no bytecode for '%s' (%s): %.*s", srcs[i].dest, bc->what,
					(int)jobs[i].len, jobs[i].data ? jobs[i].data : "");
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
done:
	eb_buf_release(&failed);
	for (size_t i = 0; i < n; i++)
		free(jobs[i].data);
	free(jobs);
	return r;
}
