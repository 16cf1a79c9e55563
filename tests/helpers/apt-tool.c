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
 *
 * Exit 0, or 1 with the error on stderr.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debian/gpg.h"
#include "debian/packages.h"
#include "debian/release.h"
#include "debian/version.h"
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

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "verify"))
		return verify(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc == 2 && !strcmp(argv[1], "vercmp"))
		return vercmp();
	if (argc == 3 && !strcmp(argv[1], "packages"))
		return packages(argv[2]);
	fprintf(stderr, "usage: apt-tool vercmp | packages FILE\n");
	return 2;
}
