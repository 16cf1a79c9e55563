/*
 * apt-tool.c - drives src/debian/ from the shell tests (tests/cli/apt*.sh):
 *
 *   apt-tool vercmp            stdin: "A B" per line; stdout: -1, 0 or 1 per line
 *   apt-tool packages FILE     parse a Packages index (xz/gz/lz4/plain) and
 *                              print "name version arch" per entry
 *   apt-tool verify KEYRING INRELEASE
 *   apt-tool verify KEYRING RELEASE RELEASE.GPG
 *                              verify the signature with gpgv, parse the
 *                              signed text and print "fingerprint FPR",
 *                              "date DATE" and "files N"
 *   apt-tool resolve ARCH STATUS URL SUITE COMPS KEYRING [--no-valid-until] PIN...
 *                              fetch and verify the source (COMPS comma-
 *                              separated), check the pins (NAME[:ARCH]=VER)
 *                              against it and the dpkg STATUS file ("-":
 *                              none); print "release URL SUITE DIGEST DATE"
 *                              and "deb NAME VERSION ARCH URL SHA256 SIZE"
 *   apt-tool target SPEC TARGET PLATFORM BLOBDIR STAGE LOCK|- FROZEN BASELAYER...
 *                              the whole Debian layer of a spec's target
 *                              (debian/apt.h): plan (from the lock JSON file
 *                              when given, FROZEN 1 = no index access), fetch,
 *                              write (uncompressed; APT_LARGE_BYTES: a .deb this
 *                              big gets its own layer); per layer print
 *                              "blob DIGEST", "key KEY", "created_by TEXT",
 *                              "warn postinst PKG..." and the lock record as
 *                              one JSON line "lock {...}"
 *   apt-tool status BASELAYER...  print the base's final /var/lib/dpkg/status
 *   apt-tool layer BLOBDIR STAGE LIST BASELAYER...
 *                              write a Debian-packages layer (uncompressed)
 *                              for the .debs in LIST ("PATH NAME VERSION ARCH
 *                              SHA256 SIZE" lines) on the base layers; print
 *                              "blob PATH", "postinst PKG", "alternative X"
 *
 * Exit 0, or 1 with the error on stderr.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "debian/apt.h"
#include "debian/deb.h"
#include "envspec/spec.h"
#include "util/diag.h"
#include "debian/gpg.h"
#include "debian/resolve.h"
#include "oci/blobstore.h"
#include "oci/layer.h"
#include "net/http.h"
#include "debian/packages.h"
#include "debian/release.h"
#include "debian/version.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fs.h"

static int vercmp(void)
{
	char line[8192];

	while (fgets(line, sizeof(line), stdin)) {
		char *a = strtok(line, " \t\n"), *b = a ? strtok(NULL, " \t\n") : NULL;
		if (!b)
			continue;
		int r = eb_debver_cmp_str(a, b);
		printf("%d\n", (r > 0) - (r < 0));
	}
	return 0;
}

static int packages(const char *path)
{
	struct eb_buf raw, text;
	struct eb_debindex idx = EB_DEBINDEX_INIT;
	struct eb_error *err = NULL;
	int rc;

	eb_buf_init(&raw, 0);
	if ((rc = eb_fs_read_file(&raw, path, (size_t)1 << 30, &err)) < 0 ||
	    (rc = eb_debian_decompress(&text, raw.ptr, raw.len, (size_t)1 << 30, &err)) < 0)
		goto done;
	if ((rc = eb_debindex_add(&idx, text.ptr, text.len, path, EB_DEBINDEX_PACKAGES, &err)) < 0)
		goto done_text;
	for (size_t i = 0; i < idx.n; i++)
		printf("%s %s %s\n", idx.pkgs[i].name, idx.pkgs[i].version, idx.pkgs[i].arch);
done_text:
	eb_buf_release(&text);
done:
	eb_buf_release(&raw);
	eb_debindex_release(&idx);
	if (err) {
		fprintf(stderr, "apt-tool: %s%s%u: %s\n", err->file ? err->file : "",
			err->file ? ":" : "", err->line, err->msg);
		eb_error_free(err);
	}
	return rc < 0;
}

static int verify(const char *keyring, const char *file, const char *sigfile)
{
	struct eb_buf data, sig, text;
	struct eb_release rel;
	struct eb_error *err = NULL;
	char *fpr = NULL;
	int rc;

	eb_buf_init(&data, 0);
	eb_buf_init(&sig, 0);
	eb_buf_init(&text, 0);
	if ((rc = eb_fs_read_file(&data, file, 1 << 26, &err)) < 0)
		goto done;
	if (sigfile) {
		if ((rc = eb_fs_read_file(&sig, sigfile, 1 << 20, &err)) < 0 ||
		    (rc = eb_debian_verify_detached(&fpr, data.ptr, data.len, sig.ptr, sig.len,
						    keyring, &err)) < 0)
			goto done;
		(void)eb_buf_add(&text, data.ptr, data.len);
	} else {
		eb_buf_release(&text);
		if ((rc = eb_debian_verify_clearsigned(&text, &fpr, data.ptr, data.len, keyring,
						       &err)) < 0)
			goto done;
	}
	if ((rc = eb_release_parse(&rel, text.ptr, text.len, file, &err)) < 0)
		goto done;
	printf("fingerprint %s\ndate %s\nfiles %zu\n", fpr, rel.date_text, rel.nfiles);
	eb_release_release(&rel);
done:
	eb_buf_release(&data);
	eb_buf_release(&sig);
	eb_buf_release(&text);
	free(fpr);
	if (err) {
		fprintf(stderr, "apt-tool: %s\n", err->msg);
		eb_error_free(err);
	}
	return rc < 0;
}

static void print_err(struct eb_error *err)
{
	if (!err)
		return;
	fprintf(stderr, "apt-tool: %s\n", err->msg);
	if (err->hint)
		fprintf(stderr, "  hint: %s\n", err->hint);
	eb_error_free(err);
}

static int resolve(int argc, char **argv)
{
	const char *arch = argv[2], *statusf = argv[3];
	struct eb_apt_source src = { 0 };
	char *comps[16];
	size_t ncomps = 0;
	struct eb_http_client *http = NULL;
	struct eb_apt_indexes ix;
	struct eb_apt_resolution res = { NULL, 0 };
	struct eb_debindex st = EB_DEBINDEX_INIT;
	struct eb_apt_pin pins[256];
	size_t npins = 0;
	struct eb_error *err = NULL;
	struct eb_buf sbuf;
	int rc, i = 8;
	char *cl = strdup(argv[6]);

	memset(&ix, 0, sizeof(ix));
	for (char *t = strtok(cl, ","); t && ncomps < 16; t = strtok(NULL, ","))
		comps[ncomps++] = t;
	src.url = argv[4];
	src.suite = argv[5];
	src.components = (const char *const *)comps;
	src.ncomponents = ncomps;
	src.keyring = argv[7];
	src.check_valid_until = 1;
	if (i < argc && !strcmp(argv[i], "--no-valid-until")) {
		src.check_valid_until = 0;
		i++;
	}
	for (; i < argc && npins < 256; i++) {
		char *eq = strchr(argv[i], '='), *colon;
		if (!eq)
			continue;
		*eq = '\0';
		colon = strchr(argv[i], ':');
		if (colon)
			*colon = '\0';
		pins[npins].name = argv[i];
		pins[npins].arch = colon ? colon + 1 : NULL;
		pins[npins].version = eq + 1;
		npins++;
	}
	eb_buf_init(&sbuf, 0);
	if (strcmp(statusf, "-") != 0) {
		if ((rc = eb_fs_read_file(&sbuf, statusf, 64 << 20, &err)) < 0 ||
		    (rc = eb_debindex_add(&st, sbuf.ptr, sbuf.len, statusf, EB_DEBINDEX_STATUS,
					  &err)) < 0)
			goto done;
		eb_debindex_sort(&st);
	}
	if ((rc = eb_http_client_new(&http, NULL, &err)) < 0)
		goto done;
	if ((rc = eb_apt_fetch(&ix, http, &src, 1, arch, time(NULL), &err)) < 0)
		goto done;
	for (size_t r = 0; r < ix.nreleases; r++)
		printf("release %s %s %s %s\n", ix.releases[r].url, ix.releases[r].suite,
		       ix.releases[r].digest, ix.releases[r].date);
	if ((rc = eb_apt_resolve(&res, &ix, &src, &st, pins, npins, arch, &err)) < 0)
		goto done;
	for (size_t k = 0; k < res.n; k++)
		printf("deb %s %s %s %s %s %llu\n", res.pkgs[k].name, res.pkgs[k].version,
		       res.pkgs[k].arch, res.pkgs[k].url, res.pkgs[k].sha256,
		       (unsigned long long)res.pkgs[k].size);
done:
	eb_apt_resolution_release(&res);
	eb_apt_indexes_release(&ix);
	eb_debindex_release(&st);
	eb_buf_release(&sbuf);
	eb_http_client_free(http);
	free(cl);
	print_err(err);
	return rc < 0;
}

static int layer(int argc, char **argv)
{
	const char *blobdir = argv[2], *stage = argv[3], *listf = argv[4];
	struct eb_buf list, status;
	struct eb_deb_input debs[512];
	size_t ndebs = 0, nlinks = 0;
	char **lp = NULL, **lt = NULL;
	struct eb_deb_base base = { 0 };
	struct eb_deb_report rep = { 0 };
	struct eb_layer_builder *b = eb_layer_builder_new();
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	struct eb_blobstore *bs = NULL;
	struct eb_error *err = NULL;
	int rc;

	eb_buf_init(&list, 0);
	eb_buf_init(&status, 0);
	if ((rc = eb_fs_read_file(&list, listf, 1 << 20, &err)) < 0)
		goto done;
	for (char *line = strtok(list.ptr, "\n"); line && ndebs < 512; line = strtok(NULL, "\n")) {
		char *f[6];
		int k = 0;
		for (char *t = line; k < 6; k++) {
			f[k] = t;
			t = t ? strchr(t, ' ') : NULL;
			if (t)
				*t++ = '\0';
		}
		if (!f[5])
			continue;
		debs[ndebs].path = f[0];
		debs[ndebs].name = f[1];
		debs[ndebs].version = f[2];
		debs[ndebs].arch = f[3];
		debs[ndebs].sha256 = f[4];
		debs[ndebs].size = strtoull(f[5], NULL, 10);
		ndebs++;
	}
	if ((rc = eb_debian_base_scan((const char *const *)argv + 5, (size_t)(argc - 5), &status,
				      &lp, &lt, &nlinks, &err)) < 0)
		goto done;
	base.status = status.len ? status.ptr : NULL;
	base.status_len = status.len;
	base.link_paths = (const char *const *)lp;
	base.link_targets = (const char *const *)lt;
	base.nlinks = nlinks;
	if ((rc = eb_debian_write_layer(b, stage, debs, ndebs, &base, &rep, &err)) < 0)
		goto done;
	o.compression = EB_LAYER_NONE;
	o.keep_modes = 1;
	if ((rc = eb_blobstore_open(&bs, blobdir, &err)) < 0 ||
	    (rc = eb_layer_write(b, &o, bs, &res, &err)) < 0)
		goto done;
	char *path = eb_blobstore_path(bs, res.digest);
	printf("blob %s\n", path);
	free(path);
	for (size_t i = 0; i < nlinks; i++)
		printf("baselink %s %s\n", lp[i], lt[i]);
	for (size_t i = 0; i < rep.npostinst; i++)
		printf("postinst %s\n", rep.postinst[i]);
	for (size_t i = 0; i < rep.nalternatives; i++)
		printf("alternative %s\n", rep.alternatives[i]);
	printf("files %zu\nnon-root %zu\n", rep.nfiles, rep.non_root_owned);
done:
	eb_deb_report_release(&rep);
	eb_debian_links_free(lp, lt, nlinks);
	eb_layer_builder_free(b);
	eb_blobstore_free(bs);
	eb_buf_release(&list);
	eb_buf_release(&status);
	print_err(err);
	return rc < 0;
}

static int target(int argc, char **argv)
{
	struct eb_spec *spec = NULL;
	struct eb_diag_list diags;
	struct eb_error *err = NULL;
	struct eb_http_client *http = NULL;
	struct eb_apt_plan plan;
	struct eb_deb_report rep = { 0 };
	struct eb_layer_builder **b = NULL;
	struct eb_layer_options o = EB_LAYER_OPTIONS_INIT;
	struct eb_layer_result res;
	struct eb_blobstore *bs = NULL;
	json_t *lock = NULL, *apt;
	const char *large = getenv("APT_LARGE_BYTES");
	const struct eb_spec_target *t;
	int frozen = atoi(argv[8]), rc;

	memset(&plan, 0, sizeof(plan));
	memset(&diags, 0, sizeof(diags));
	if ((rc = eb_spec_load(&spec, argv[2], &diags, &err)) < 0)
		goto done;
	if (!spec || !(t = eb_spec_target(spec, argv[3]))) {
		rc = eb_error_set(&err, EB_EINVALID, "spec or target not usable");
		goto done;
	}
	if (strcmp(argv[7], "-") != 0) {
		json_error_t je;
		lock = json_load_file(argv[7], 0, &je);
		if (!lock) {
			rc = eb_error_set(&err, EB_EINVALID, "lock: %s", je.text);
			goto done;
		}
	}
	if (!frozen && (rc = eb_http_client_new(&http, NULL, &err)) < 0)
		goto done;
	/* the blob store first: the plan keeps the signed indexes there,
	 * and --frozen verifies the lock's .debs from them */
	if ((rc = eb_blobstore_open(&bs, argv[5], &err)) < 0)
		goto done;
	if ((rc = eb_apt_plan_cached(&plan, spec, t, argv[4], (const char *const *)argv + 9,
				     (size_t)(argc - 9), NULL, lock, frozen,
				     large ? strtoull(large, NULL, 10) : 0, http, bs, time(NULL),
				     &err)) < 0)
		goto done;
	if (frozen && (rc = eb_http_client_new(&http, NULL, &err)) < 0)
		goto done;
	b = eb_xcalloc(plan.nlayers + 1, sizeof(*b));
	for (size_t i = 0; i < plan.nlayers; i++)
		b[i] = eb_layer_builder_new();
	o.keep_modes = 1;
	if ((rc = eb_apt_write(b, &plan, http, bs, argv[6], &rep, &err)) < 0)
		goto done;
	for (size_t i = 0; i < plan.nlayers; i++) {
		if ((rc = eb_layer_write(b[i], &o, bs, &res, &err)) < 0)
			goto done;
		printf("blob %s\nkey %s\ncreated_by %s\n", res.digest, plan.layers[i].key,
		       plan.layers[i].created_by);
	}
	if (rep.npostinst) {
		printf("warn postinst");
		for (size_t i = 0; i < rep.npostinst; i++)
			printf(" %s", rep.postinst[i]);
		printf("\n");
	}
	apt = eb_apt_lock_merge(NULL, argv[4], &plan);
	char *j = json_dumps(apt, JSON_COMPACT | JSON_SORT_KEYS);
	printf("lock %s\n", j);
	free(j);
	json_decref(apt);
done:
	eb_deb_report_release(&rep);
	for (size_t i = 0; b && i < plan.nlayers; i++)
		eb_layer_builder_free(b[i]);
	free(b);
	eb_apt_plan_release(&plan);
	eb_blobstore_free(bs);
	eb_http_client_free(http);
	json_decref(lock);
	eb_spec_free(spec);
	eb_diag_list_release(&diags);
	print_err(err);
	return rc < 0;
}

static int base_status(int argc, char **argv)
{
	struct eb_buf status;
	char **lp = NULL, **lt = NULL;
	size_t nl = 0;
	struct eb_error *err = NULL;
	int rc = eb_debian_base_scan((const char *const *)argv + 2, (size_t)(argc - 2), &status,
				     &lp, &lt, &nl, &err);
	if (rc == 0) {
		fwrite(status.ptr, 1, status.len, stdout);
		eb_buf_release(&status);
		eb_debian_links_free(lp, lt, nl);
	}
	print_err(err);
	return rc < 0;
}

int main(int argc, char **argv)
{
	if (argc >= 10 && !strcmp(argv[1], "target"))
		return target(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "status"))
		return base_status(argc, argv);
	if (argc >= 8 && !strcmp(argv[1], "resolve"))
		return resolve(argc, argv);
	if (argc >= 5 && !strcmp(argv[1], "layer"))
		return layer(argc, argv);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "verify"))
		return verify(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc == 2 && !strcmp(argv[1], "vercmp"))
		return vercmp();
	if (argc == 3 && !strcmp(argv[1], "packages"))
		return packages(argv[2]);
	fprintf(stderr, "usage: apt-tool vercmp | packages FILE\n");
	return 2;
}
