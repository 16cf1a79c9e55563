/*
 * replay.c - py3compile, ldconfig and update-ca-certificates for the
 * `apt:` packages: what the package layers add decides what runs (their
 * tar headers, through a basefs view of those layers alone); the image
 * tree (base + packages) is unpacked once and shared by every program.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>

#include "assemble/bytecode.h"
#include "assemble/replay.h"
#include "oci/basefs.h"
#include "oci/cache.h"
#include "oci/layerin.h"
#include "oci/unpack.h"
#include "sandbox/sandbox.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/interrupt.h"

#define CACHE_MAX (64u << 20)

struct plan {
	char **py;    /* relative paths of .py files to compile */
	size_t npy, pcap;
	int ldconfig, ca;
	int whiteout; /* a package layer removes something: the plan is the view's */
};

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* "usr/lib/python3.11/..." (not dist-packages under it: Debian has none
 * there) or "usr/lib/python3/dist-packages/...". */
static int compiled_path(const char *p)
{
	if (strncmp(p, "usr/lib/python3/dist-packages/", 30) == 0)
		return 1;
	if (strncmp(p, "usr/lib/python3.", 16) == 0) {
		const char *q = p + 16;

		while (*q >= '0' && *q <= '9')
			q++;
		return q > p + 16 && *q == '/';
	}
	return 0;
}

/* A shared library in one of the default directories or an ld.so.conf.d
 * entry: what makes dpkg activate libc-bin's ldconfig trigger. */
static int ldconfig_path(const char *p)
{
	const char *base = eb_path_basename(p);

	if (strncmp(p, "etc/ld.so.conf", 14) == 0)
		return 1;
	if (!strstr(base, ".so"))
		return 0;
	return strncmp(p, "lib/", 4) == 0 || strncmp(p, "usr/lib/", 8) == 0 ||
	       strncmp(p, "lib64/", 6) == 0 || strncmp(p, "usr/lib64/", 10) == 0 ||
	       strncmp(p, "usr/local/lib/", 14) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int plan_of(struct eb_blobstore *bs, const struct eb_build_layer *pkgs, size_t n,
		   int bytecode, struct plan *pl, struct eb_error **err)
{
	struct eb_basefs *fs = eb_basefs_new();
	const struct eb_basefs_node *first;
	size_t cnt;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		char *path;

		if (!pkgs[i].digest[0])
			continue;
		path = eb_blobstore_path(bs, pkgs[i].digest);
		r = path ? eb_basefs_add_layer(fs, path, err)
			 : eb_error_set(err, EB_EIO, "no blob for layer %s", pkgs[i].digest);
		free(path);
	}
	if (r < 0)
		goto done;
	cnt = eb_basefs_under(fs, "", &first);
	for (size_t i = 0; i < cnt; i++) {
		const struct eb_basefs_node *nd = &first[i];

		if (nd->type == EB_BASEFS_DIR)
			continue;
		if (bytecode && nd->type == EB_BASEFS_FILE && has_suffix(nd->path, ".py") &&
		    compiled_path(nd->path) && !strstr(nd->path, "/__pycache__/")) {
			EB_ALLOC_GROW(pl->py, pl->npy + 1, pl->pcap);
			pl->py[pl->npy++] = eb_xstrdup(nd->path);
		}
		if (ldconfig_path(nd->path))
			pl->ldconfig = 1;
		if (strncmp(nd->path, "usr/share/ca-certificates/", 26) == 0 &&
		    has_suffix(nd->path, ".crt"))
			pl->ca = 1;
	}
	if (pl->npy)
		eb_sort(pl->py, pl->npy, sizeof(*pl->py), cmp_str);
done:
	eb_basefs_free(fs);
	return r;
}

static void plan_release(struct plan *pl)
{
	for (size_t i = 0; i < pl->npy; i++)
		free(pl->py[i]);
	free(pl->py);
}

/* Run argv in the tree with /tmp/out bound to a fresh writable outdir. */
static int run_in(const char *root, const char *outdir, const char *const *argv, const char *what,
		  int64_t epoch, struct eb_error **err)
{
	struct eb_sandbox_bind bind = { outdir, "/tmp/out", 1 };
	struct eb_sandbox_opts o = { 0 };
	struct eb_sandbox_result res;
	int r;

	if ((r = eb_sandbox_prepare_output(outdir, err)) < 0)
		return r;
	o.root = root;
	o.argv = argv;
	o.binds = &bind;
	o.nbinds = 1;
	o.source_date_epoch = epoch;
	o.what = what;
	r = eb_sandbox_run(&o, &res, err);
	if (r == 0 && res.exit_status != 0) {
		const char *tail = res.err_len > 600 ? res.err + res.err_len - 600 : res.err;
		r = eb_error_set(err, EB_EFAIL, "%s exited with status %d%s%s", what, res.exit_status,
				 res.err_len ? ": " : "", tail);
	}
	eb_sandbox_result_free(&res);
	return r;
}

static const char *tree_program(const char *root, const char *const *cands, char *buf, size_t len)
{
	struct stat st;

	for (size_t i = 0; cands[i]; i++) {
		snprintf(buf, len, "%s%s", root, cands[i]);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return cands[i];
	}
	return NULL;
}

static int do_ldconfig(const char *root, const char *work, struct eb_layer_builder *b,
		       int64_t epoch, struct eb_error **err)
{
	static const char *const cands[] = { "/usr/sbin/ldconfig", "/sbin/ldconfig", NULL };
	char buf[PATH_MAX];
	const char *prog = tree_program(root, cands, buf, sizeof(buf));
	char *outdir = eb_xasprintf("%s/ldconfig", work), *cache;
	struct eb_buf data;
	int r;

	if (!prog) {
		free(outdir);
		return 0; /* no libc-bin: nothing reads a cache */
	}
	{
		const char *argv[] = { prog, "-X", "-C", "/tmp/out/ld.so.cache", NULL };
		r = run_in(root, outdir, argv, "ldconfig of the image", epoch, err);
	}
	cache = eb_xasprintf("%s/ld.so.cache", outdir);
	eb_buf_init(&data, CACHE_MAX);
	if (r == 0)
		r = eb_fs_read_file(&data, cache, CACHE_MAX, err);
	if (r == 0)
		r = eb_layer_add_bytes(b, "/etc/ld.so.cache", data.ptr, data.len, 0644, err);
	eb_buf_release(&data);
	free(cache);
	free(outdir);
	return r;
}

/* The certificates directory the run made: regular files copied, symlinks
 * kept (absolute links into /usr/share/ca-certificates, hash links). */
static int add_certs(struct eb_layer_builder *b, const char *dir, struct eb_error **err)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return eb_error_set_errno(err, EB_EIO, errno, "cannot read '%s'", dir);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		EB_ALLOC_GROW(names, n + 1, cap);
		names[n++] = eb_xstrdup(e->d_name);
	}
	closedir(d);
	if (n)
		eb_sort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && r == 0; i++) {
		char *src = eb_xasprintf("%s/%s", dir, names[i]);
		char *dest = eb_xasprintf("/etc/ssl/certs/%s", names[i]);
		char target[PATH_MAX];
		ssize_t l = readlink(src, target, sizeof(target) - 1);

		if (l >= 0) {
			target[l] = '\0';
			r = eb_layer_add_symlink(b, dest, target, err);
		} else {
			struct eb_buf data;

			eb_buf_init(&data, CACHE_MAX);
			r = eb_fs_read_file(&data, src, CACHE_MAX, err);
			if (r == 0)
				r = eb_layer_add_bytes(b, dest, data.ptr, data.len, 0644, err);
			eb_buf_release(&data);
		}
		free(src);
		free(dest);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

static int do_ca(const char *root, const char *work, struct eb_layer_builder *b, int64_t epoch,
		 struct eb_error **err)
{
	static const char *const cands[] = { "/usr/sbin/update-ca-certificates", NULL };
	/* the postinst's default: every certificate shipped, selected; then
	 * the script, writing into the output instead of /etc */
	static const char script[] =
		"set -e\n"
		"cd /usr/share/ca-certificates\n"
		"find . -name '*.crt' -type f | sed 's,^\\./,,' | LC_ALL=C sort >/tmp/out/ca-certificates.conf\n"
		"mkdir /tmp/out/certs\n"
		"update-ca-certificates --fresh --certsconf /tmp/out/ca-certificates.conf "
		"--etccertsdir /tmp/out/certs --hooksdir /nonexistent >/dev/null\n";
	char buf[PATH_MAX];
	char *outdir, *conf, *certs;
	struct eb_buf data;
	int r;

	if (!tree_program(root, cands, buf, sizeof(buf)))
		return 0;
	outdir = eb_xasprintf("%s/ca", work);
	{
		const char *argv[] = { "/bin/sh", "-c", script, NULL };
		r = run_in(root, outdir, argv, "update-ca-certificates of the image", epoch, err);
	}
	conf = eb_xasprintf("%s/ca-certificates.conf", outdir);
	certs = eb_xasprintf("%s/certs", outdir);
	eb_buf_init(&data, CACHE_MAX);
	if (r == 0)
		r = eb_fs_read_file(&data, conf, CACHE_MAX, err);
	if (r == 0)
		r = eb_layer_add_bytes(b, "/etc/ca-certificates.conf", data.ptr, data.len, 0644, err);
	if (r == 0)
		r = add_certs(b, certs, err);
	eb_buf_release(&data);
	free(conf);
	free(certs);
	free(outdir);
	return r;
}

static int do_py3compile(struct eb_bytecode *bc, const char *root, const struct plan *pl,
			 struct eb_layer_builder *b, const char *spec_path,
			 struct eb_diag_list *diags, struct eb_replay_report *rep,
			 struct eb_error **err)
{
	struct eb_bytecode_ident id;
	struct eb_bytecode_src *srcs;
	struct eb_bytecode_pyc *pycs = NULL;
	struct eb_bytecode_stats st;
	char stdlib[96];
	char **abs, **paths;
	size_t n = 0, np = 0;
	int r;

	(void)diags;
	if ((r = eb_bytecode_ident(bc, &id, err)) < 0)
		return r;
	/* the standard library of this interpreter only ("cpython-311" ->
	 * usr/lib/python3.11/): another python3.X of the packages is not the
	 * one /usr/bin/python3 runs */
	if (strncmp(id.tag, "cpython-3", 9) == 0)
		snprintf(stdlib, sizeof(stdlib), "usr/lib/python3.%s/", id.tag + 9);
	else
		snprintf(stdlib, sizeof(stdlib), "-");
	srcs = eb_xcalloc(pl->npy + 1, sizeof(*srcs));
	abs = eb_xcalloc(pl->npy + 1, sizeof(*abs));
	paths = eb_xcalloc(pl->npy + 1, sizeof(*paths));
	for (size_t i = 0; i < pl->npy; i++) {
		const char *p = pl->py[i];

		if (strncmp(p, "usr/lib/python3/", 16) != 0 && strncmp(p, stdlib, strlen(stdlib)) != 0)
			continue;
		abs[n] = eb_xasprintf("/%s", p);
		paths[n] = eb_xasprintf("%s/%s", root, p);
		srcs[n].dest = abs[n];
		srcs[n].path = paths[n];
		srcs[n].mtime = -1; /* the package layers' entries: the epoch */
		n++;
	}
	eb_bytecode_set_quiet(bc, 1);
	r = eb_bytecode_compile(bc, srcs, n, spec_path, 0, 0, &pycs, &np, err);
	for (size_t i = 0; r == 0 && i < np; i++)
		r = eb_layer_add_file_as(b, pycs[i].dest, pycs[i].path, 0644, err);
	eb_bytecode_stats(bc, &st);
	rep->pyc_compiled = st.compiled;
	rep->pyc_reused = st.reused;
	rep->py3compile = np > 0;
	eb_bytecode_pycs_free(pycs, np);
	for (size_t i = 0; i < n; i++) {
		free(abs[i]);
		free(paths[i]);
	}
	free(abs);
	free(paths);
	free(srcs);
	return r;
}

/* What each program of the replay reads, by path (relative, as in a
 * layer; type an AE_IF* type).  These sets make both the key (of the
 * package layers, all three) and the replay's tree (of every layer, the
 * sets of the steps that run), so a step cannot see what its key does not
 * cover.  What none reads (the dpkg database, documentation, a package's
 * own programs) stays out of both: a change to such a package reuses the
 * replay layer, and a replay does not unpack the image to run ldconfig. */
enum {
	READS_LDCONFIG = 1, /* and what every program needs to start */
	READS_PYTHON = 2,
	READS_CA = 4,
	READS_ALL = 7,
};

/* update-ca-certificates' script, the shell and the tools it calls */
static const char *const ca_programs[] = {
	"update-ca-certificates", "openssl", "c_rehash", "run-parts", "sh", "dash", "bash", "find",
	"sed", "sort", "grep", "rm", "ln", "cat", "cp", "mv", "mkdir", "mktemp", "chmod",
	"readlink", "realpath", "basename", "dirname", "test", "[", "tr", "cut", "head", "tail",
	"wc", "xargs", "touch", "tee", "env", NULL
};

/* The base name of p when p is in a bin directory, else NULL. */
static const char *bin_name(const char *p)
{
	static const char *const dirs[] = { "bin/", "sbin/", "usr/bin/", "usr/sbin/",
					    "usr/local/bin/", NULL };
	const char *base = eb_path_basename(p);
	size_t dl = (size_t)(base - p);

	for (size_t i = 0; dirs[i]; i++)
		if (dl == strlen(dirs[i]) && strncmp(p, dirs[i], dl) == 0)
			return base;
	return NULL;
}

/* 1 when an entry at p of that type is read by one of the steps in
 * `which`: every program needs the shared libraries (anywhere: an
 * ld.so.conf.d entry may name any directory), ld.so.conf and the
 * symlinks outside /usr/share (a directory link may lead to a library);
 * py3compile python3.X's files and interpreter; update-ca-certificates
 * the certificates, their configuration and the programs above. */
static int replay_reads(const char *p, unsigned type, unsigned which)
{
	const char *base = eb_path_basename(p), *prog = bin_name(p);

	if ((type == AE_IFLNK && strncmp(p, "usr/share/", 10) != 0) || strstr(base, ".so") ||
	    strncmp(p, "etc/ld.so.conf", 14) == 0 || (prog && strcmp(prog, "ldconfig") == 0))
		return 1;
	if ((which & READS_PYTHON) &&
	    (strncmp(p, "etc/python3", 11) == 0 || strncmp(p, "usr/lib/python3", 15) == 0 ||
	     strncmp(p, "usr/local/lib/python3", 21) == 0 ||
	     (prog && strncmp(prog, "python3", 7) == 0)))
		return 1;
	if (which & READS_CA) {
		if (strncmp(p, "usr/share/ca-certificates", 25) == 0 || strncmp(p, "etc/ssl/", 8) == 0 ||
		    strncmp(p, "etc/ca-certificates", 19) == 0)
			return 1;
		for (size_t i = 0; prog && ca_programs[i]; i++)
			if (strcmp(prog, ca_programs[i]) == 0)
				return 1;
	}
	return 0;
}

/* The tree's filter: ctx is the plan, whose steps say what to keep. */
static int keep_for_plan(const char *rel, unsigned type, void *ctx)
{
	const struct plan *pl = ctx;

	return replay_reads(rel, type, (pl->npy ? READS_PYTHON : 0) | (pl->ca ? READS_CA : 0));
}

/* The digest of what the replay reads in one package layer (its entries
 * replay_reads() names: path, type, mode, link and content; whiteouts
 * all), "" when nothing.  A hardlink counts by its target's name: its
 * bytes are the target's, hashed when the target's name is read too. */
static int layer_reads_scan(const char *blob, const char *diff_id,
			    char out[EB_DIGEST_STR_LEN + 1], json_t *plan, struct eb_error **err)
{
	json_t *py = json_array();
	struct eb_layerin *in = NULL;
	struct archive *a;
	struct archive_entry *e;
	struct eb_sha256 all;
	size_t n = 0;
	int ar, r;

	out[0] = '\0';
	if ((r = eb_layerin_open(&in, blob, diff_id, err)) < 0)
		return r;
	a = eb_layerin_archive(in);
	eb_sha256_init(&all);
	while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e), *hl = archive_entry_hardlink(e);
		const char *sl = archive_entry_symlink(e);
		mode_t type = archive_entry_filetype(e);
		char *hdr;

		if ((r = eb_interrupt_check(err)) < 0)
			goto fail;
		if (!p)
			continue;
		while (p[0] == '.' && p[1] == '/')
			p += 2;
		while (p[0] == '/')
			p++;
		if (type == AE_IFDIR)
			continue;
		/* what the replay's plan needs of this layer (plan_of's rules) */
		if (eb_basefs_is_whiteout(eb_path_basename(p)))
			json_object_set_new(plan, "whiteout", json_true());
		else if (!replay_reads(p, (unsigned)type, READS_ALL))
			continue;
		if (type == AE_IFREG && has_suffix(p, ".py") && compiled_path(p) &&
		    !strstr(p, "/__pycache__/"))
			json_array_append_new(py, json_string(p));
		if (ldconfig_path(p))
			json_object_set_new(plan, "ldconfig", json_true());
		if (strncmp(p, "usr/share/ca-certificates/", 26) == 0 && has_suffix(p, ".crt"))
			json_object_set_new(plan, "ca", json_true());
		hdr = eb_xasprintf("%o %o %s%s", (unsigned)type,
				   (unsigned)archive_entry_perm(e) & 07777u, hl ? "hardlink " : "",
				   hl ? hl : sl ? sl : "");
		eb_sha256_update(&all, p, strlen(p) + 1);
		eb_sha256_update(&all, hdr, strlen(hdr) + 1);
		free(hdr);
		if (type == AE_IFREG && !hl) {
			struct eb_sha256 f;
			char fd[EB_DIGEST_STR_LEN + 1];
			const void *buf;
			size_t len;
			la_int64_t off;
			int dr;

			eb_sha256_init(&f);
			while ((dr = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK)
				eb_sha256_update(&f, buf, len);
			if (dr != ARCHIVE_EOF) {
				eb_sha256_abort(&f);
				r = eb_error_set(err, EB_EIO, "reading layer %s: %s", blob,
						 archive_error_string(a));
				goto fail;
			}
			eb_sha256_final(&f, fd);
			eb_sha256_update(&all, fd, strlen(fd) + 1);
		}
		n++;
	}
	if (ar != ARCHIVE_EOF) {
		r = eb_error_set(err, EB_EIO, "reading layer %s: %s", blob, archive_error_string(a));
		goto fail;
	}
	if ((r = eb_layerin_finish(in, err)) < 0)
		goto fail;
	eb_layerin_free(in);
	if (n)
		eb_sha256_final(&all, out);
	else
		eb_sha256_abort(&all);
	json_object_set_new(plan, "py", py);
	return 0;
fail:
	json_decref(py);
	eb_sha256_abort(&all);
	eb_layerin_free(in);
	return r;
}

/* The layer's part of the plan (a record's "plan") added to pl. */
static int plan_add(struct plan *pl, const json_t *lp, int bytecode)
{
	const json_t *py = json_object_get(lp, "py");

	if (!json_is_object(lp) || !json_is_array(py))
		return -1;
	pl->ldconfig |= json_is_true(json_object_get(lp, "ldconfig"));
	pl->ca |= json_is_true(json_object_get(lp, "ca"));
	pl->whiteout |= json_is_true(json_object_get(lp, "whiteout"));
	for (size_t i = 0; bytecode && i < json_array_size(py); i++) {
		const char *v = json_string_value(json_array_get(py, i));

		if (!v)
			return -1;
		EB_ALLOC_GROW(pl->py, pl->npy + 1, pl->pcap);
		pl->py[pl->npy++] = eb_xstrdup(v);
	}
	return 0;
}

/* layer_reads_scan() of one package layer, remembered by its diff_id
 * (record kind "replayin", naming the layer's own blob, with the layer's
 * part of the plan): a warm build reads no layer to make the key, a
 * one-package change only the layers that changed, and a replay that
 * runs knows what to do without reading the layers again. */
static int layer_reads(struct eb_blobstore *bs, const struct eb_build_layer *l, int bytecode,
		       char out[EB_DIGEST_STR_LEN + 1], struct plan *pl, struct eb_error **err)
{
	json_t *rec = NULL, *plan;
	char *blob;
	int r;

	if (eb_cache_record_get(bs, "replayin", l->diff_id, &rec) == 1) {
		const char *v = json_string_value(json_object_get(rec, "reads"));

		/* (a bad record is read again below: paths it added twice are
		 * made unique in the end) */
		if (v && (!*v || eb_digest_valid(v)) &&
		    plan_add(pl, json_object_get(rec, "plan"), bytecode) == 0) {
			snprintf(out, EB_DIGEST_STR_LEN + 1, "%s", v);
			json_decref(rec);
			return 0;
		}
		json_decref(rec);
	}
	blob = eb_blobstore_path(bs, l->digest);
	if (!blob)
		return eb_error_set(err, EB_EIO, "no blob for layer %s", l->digest);
	plan = json_object();
	r = layer_reads_scan(blob, l->diff_id, out, plan, err);
	free(blob);
	if (r == 0) {
		json_t *nr = json_pack("{s:s, s:I, s:s, s:O}", "digest", l->digest, "size",
				       (json_int_t)l->size, "reads", out, "plan", plan);
		if (nr)
			(void)eb_cache_record_put(bs, "replayin", l->diff_id, nr, NULL);
		json_decref(nr);
		(void)plan_add(pl, plan, bytecode); /* made here: well formed */
	}
	json_decref(plan);
	return r;
}

/* The replay's key: its formats and options, the base's layers (whole:
 * the interpreter and the tools are mostly there) and what it reads of
 * each package layer (layer_reads), so that a package layer whose change
 * the replay cannot see (a program, documentation, the dpkg database)
 * leaves the key as it was. */
static int replay_key(struct eb_blobstore *bs, const char *const *base_layers, size_t nbase,
		      const struct eb_build_layer *pkgs, size_t npkgs,
		      const struct eb_layer_options *lo, int bytecode,
		      char key[EB_DIGEST_STR_LEN + 1], struct plan *pl, struct eb_error **err)
{
	struct eb_sha256 h;
	char *k = eb_xasprintf("replay %d %d %d\n%d %d %lld %u %u\n", EB_REPLAY_FORMAT,
			       EB_BYTECODE_FORMAT, bytecode, lo->compression, lo->level,
			       (long long)lo->epoch, lo->uid, lo->gid);
	int r = 0;

	eb_sha256_init(&h);
	eb_sha256_update(&h, k, strlen(k));
	free(k);
	for (size_t i = 0; i < nbase; i++) {
		const char *b = eb_path_basename(base_layers[i]);
		eb_sha256_update(&h, b, strlen(b) + 1);
	}
	for (size_t i = 0; i < npkgs && r == 0; i++) {
		char reads[EB_DIGEST_STR_LEN + 1];

		if (!pkgs[i].digest[0] || (r = layer_reads(bs, &pkgs[i], bytecode, reads, pl, err)) < 0 ||
		    !reads[0])
			continue;
		eb_sha256_update(&h, reads, strlen(reads) + 1);
	}
	if (r < 0) {
		eb_sha256_abort(&h);
		return r;
	}
	eb_sha256_final(&h, key);
	return 0;
}

int eb_replay_write(struct eb_blobstore *bs, const char *const *base_layers,
		    const char *const *base_diff_ids, size_t nbase,
		    const struct eb_build_layer *pkgs, size_t npkgs,
		    const struct eb_layer_options *lo, int bytecode, const char *what,
		    const char *spec_path, struct eb_diag_list *diags, struct eb_build_layer *out,
		    struct eb_replay_report *rep, struct eb_error **err)
{
	struct eb_unpack_filter filter = { 0 };
	struct plan pl = { 0 };
	struct eb_bytecode *bc = NULL;
	struct eb_layer_builder *b = NULL;
	struct eb_layer_result res;
	char key[EB_DIGEST_STR_LEN + 1];
	char **layers = NULL, **diff_ids = NULL;
	const char *root;
	char *work = NULL;
	json_t *rec = NULL;
	size_t nl = 0;
	int r;

	memset(out, 0, sizeof(*out));
	memset(rep, 0, sizeof(*rep));
	if ((r = replay_key(bs, base_layers, nbase, pkgs, npkgs, lo, bytecode, key, &pl, err)) < 0)
		goto done;
	if (eb_cache_record_get(bs, "replay", key, &rec) == 1) {
		const char *dg = json_string_value(json_object_get(rec, "digest"));
		const char *di = json_string_value(json_object_get(rec, "diffId"));

		if (json_is_true(json_object_get(rec, "nothing"))) {
			json_decref(rec);
			goto done; /* known: nothing to replay, no layer */
		}
		if (dg && di) {
			snprintf(out->digest, sizeof(out->digest), "%s", dg);
			snprintf(out->diff_id, sizeof(out->diff_id), "%s", di);
			out->size = (uint64_t)json_integer_value(json_object_get(rec, "size"));
			out->reused = 1;
			const char *cb = json_string_value(json_object_get(rec, "createdBy"));

			out->created_by = eb_xstrdup(cb ? cb : "envbuild: replay");
			rep->ldconfig = json_is_true(json_object_get(rec, "ldconfig"));
			rep->ca_certificates = json_is_true(json_object_get(rec, "caCertificates"));
			rep->py3compile = json_is_true(json_object_get(rec, "py3compile"));
			rep->pyc_reused = (size_t)json_integer_value(json_object_get(rec, "pyc"));
			json_decref(rec);
			goto done;
		}
		json_decref(rec);
	}
	if (pl.whiteout) {
		/* the layers' own plans do not see what a later one removes */
		plan_release(&pl);
		memset(&pl, 0, sizeof(pl));
		if ((r = plan_of(bs, pkgs, npkgs, bytecode, &pl, err)) < 0)
			goto done;
	} else if (pl.npy) {
		size_t u = 0;

		eb_sort(pl.py, pl.npy, sizeof(*pl.py), cmp_str);
		for (size_t i = 0; i < pl.npy; i++) {
			if (u && strcmp(pl.py[u - 1], pl.py[i]) == 0)
				free(pl.py[i]);
			else
				pl.py[u++] = pl.py[i];
		}
		pl.npy = u;
	}
	if (!pl.npy && !pl.ldconfig && !pl.ca) {
		/* nothing to replay: no layer, and the next build need not read
		 * the package layers to know it (a record must name a blob) */
		char dg[EB_DIGEST_STR_LEN + 1];

		if (eb_blobstore_put(bs, "", 0, dg, NULL) == 0) {
			json_t *nr = json_pack("{s:s, s:I, s:b}", "digest", dg, "size", (json_int_t)0,
					       "nothing", 1);
			if (nr)
				(void)eb_cache_record_put(bs, "replay", key, nr, NULL);
			json_decref(nr);
		}
		goto done;
	}

	layers = eb_xcalloc(nbase + npkgs + 1, sizeof(*layers));
	diff_ids = eb_xcalloc(nbase + npkgs + 1, sizeof(*diff_ids));
	for (size_t i = 0; i < nbase; i++) {
		layers[nl] = eb_xstrdup(base_layers[i]);
		diff_ids[nl++] = base_diff_ids && base_diff_ids[i] ? eb_xstrdup(base_diff_ids[i]) : NULL;
	}
	for (size_t i = 0; i < npkgs; i++) {
		if (!pkgs[i].digest[0])
			continue;
		layers[nl] = eb_blobstore_path(bs, pkgs[i].digest);
		diff_ids[nl++] = eb_xstrdup(pkgs[i].diff_id);
	}
	/* the default python3 compiles (py3compile runs /usr/bin/python3);
	 * the tree: of every layer what the steps to run read */
	filter.from = 0;
	filter.keep = keep_for_plan;
	filter.ctx = &pl;
	if ((r = eb_bytecode_new(&bc, bs, (const char *const *)layers, (const char *const *)diff_ids,
				 nl, "/usr/bin/python3", lo->epoch, what, diags, err)) < 0)
		goto done;
	eb_bytecode_set_unpack_filter(bc, &filter);
	if ((r = eb_bytecode_tree(bc, &root, err)) < 0)
		goto done;
	work = eb_xasprintf("%s.work", root);
	if (mkdir(work, 0700) != 0) {
		r = eb_error_set_errno(err, EB_EIO, errno, "cannot create '%s'", work);
		goto done;
	}
	b = eb_layer_builder_new();
	if (pl.npy) {
		struct stat st;
		char *py = eb_xasprintf("%s/usr/bin/python3", root);

		if (stat(py, &st) == 0)
			r = do_py3compile(bc, root, &pl, b, spec_path, diags, rep, err);
		free(py);
	}
	if (r == 0 && pl.ldconfig && (r = do_ldconfig(root, work, b, lo->epoch, err)) == 0)
		rep->ldconfig = 1;
	if (r == 0 && pl.ca && (r = do_ca(root, work, b, lo->epoch, err)) == 0)
		rep->ca_certificates = 1;
	if (r < 0)
		goto done;
	if (!rep->ldconfig && !rep->ca_certificates && !rep->py3compile)
		goto done;
	{
		struct eb_buf cb = EB_BUF_INIT;

		eb_buf_puts(&cb, "envbuild: replay");
		if (rep->py3compile)
			eb_buf_puts(&cb, " py3compile");
		if (rep->ldconfig)
			eb_buf_puts(&cb, " ldconfig");
		if (rep->ca_certificates)
			eb_buf_puts(&cb, " update-ca-certificates");
		out->created_by = eb_buf_detach(&cb, NULL);
	}
	if ((r = eb_layer_write(b, lo, bs, &res, err)) < 0)
		goto done;
	memcpy(out->digest, res.digest, sizeof(out->digest));
	memcpy(out->diff_id, res.diff_id, sizeof(out->diff_id));
	out->size = res.size;
	{
		json_t *nr = json_pack("{s:s, s:s, s:I, s:s, s:b, s:b, s:b, s:I}", "digest", res.digest,
				       "diffId", res.diff_id, "size", (json_int_t)res.size,
				       "createdBy", out->created_by, "ldconfig", rep->ldconfig,
				       "caCertificates", rep->ca_certificates, "py3compile",
				       rep->py3compile,
				       "pyc", (json_int_t)(rep->pyc_compiled + rep->pyc_reused));
		if (nr)
			(void)eb_cache_record_put(bs, "replay", key, nr, NULL);
		json_decref(nr);
	}
done:
	if (r < 0) {
		free(out->created_by);
		out->created_by = NULL;
		out->digest[0] = '\0';
	}
	if (work) {
		(void)eb_fs_remove_tree(work, NULL);
		free(work);
	}
	eb_layer_builder_free(b);
	eb_bytecode_free(bc);
	for (size_t i = 0; i < nl; i++) {
		free(layers[i]);
		free(diff_ids[i]);
	}
	free(layers);
	free(diff_ids);
	plan_release(&pl);
	return r;
}
