/*
 * cmd_resolve.c - `envbuild resolve [-i] [--lock FILE] FILE...`: rewrite the
 * image references of job files and manifests (envbuild://TARGET, and
 * image: values naming a pushed tag) to the digests in envbuild.lock.
 *
 * Every file is resolved before anything is written, so an unresolvable
 * reference in the last file leaves stdout empty and every file untouched:
 * `envbuild resolve job.yaml | kubectl apply -f -` never applies half a
 * stream.  Several files on stdout are separated by `---` as one stream.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "lock/resolve.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fs.h"

#define RESOLVE_FILE_MAX (64u << 20)

struct resolved {
	const char *path;
	struct eb_buf text;
	size_t changed;
};

/* The separator before a file that follows another on stdout: a new
 * document, or the end of the last one when the file opens with a
 * directive (%YAML), which may only follow "...". */
static const char *separator(const struct eb_buf *prev, const struct eb_buf *next)
{
	const char *p = next->ptr;
	int nl = prev->len == 0 || prev->ptr[prev->len - 1] == '\n';

	if (next->len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	if (*p == '%')
		return nl ? "...\n" : "\n...\n";
	return nl ? "---\n" : "\n---\n";
}

int cmd_resolve(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "in-place", no_argument, NULL, 'i' },
		{ "lock", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *lock_path = "envbuild.lock";
	struct eb_resolve_lock *lock = NULL;
	struct resolved *files = NULL;
	size_t nfiles = 0;
	int in_place = 0, c, r = 0;

	while ((c = getopt_long(argc, argv, "il:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in_place = 1;
			break;
		case 'l':
			lock_path = optarg;
			break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild resolve --help'");
		}
	}
	if (optind >= argc)
		return eb_error_set(err, EB_EUSAGE, "resolve takes at least one FILE");
	for (int i = optind; i < argc; i++)
		if (in_place && strcmp(argv[i], "-") == 0)
			return eb_error_set(err, EB_EUSAGE, "-i cannot rewrite standard input");

	if ((r = eb_resolve_lock_load(&lock, lock_path, err)) < 0)
		return r;

	/* resolve everything first: nothing is printed or written on error */
	files = eb_xcalloc((size_t)(argc - optind), sizeof(*files));
	for (int i = optind; i < argc; i++) {
		struct resolved *f = &files[nfiles++];
		struct eb_buf in;

		f->path = argv[i];
		eb_buf_init(&f->text, 0);
		eb_buf_init(&in, RESOLVE_FILE_MAX);
		r = eb_fs_read_file(&in, f->path, RESOLVE_FILE_MAX, err);
		if (r >= 0)
			r = eb_resolve_text(lock, f->path, in.ptr, in.len, &f->text, &f->changed,
					    err);
		eb_buf_release(&in);
		if (r < 0) {
			/* a file too large to read is an I/O error (exit 2) */
			if (err && *err && (*err)->code == EB_ETOOBIG)
				(*err)->code = EB_EIO;
			goto done;
		}
	}

	for (size_t i = 0; i < nfiles; i++) {
		struct resolved *f = &files[i];

		if (in_place) {
			struct stat st;
			int mode = 0644;

			if (!f->changed)
				continue;
			if (stat(f->path, &st) == 0)
				mode = (int)(st.st_mode & 07777);
			if ((r = eb_fs_write_atomic(f->path, f->text.ptr, f->text.len, mode, err)) < 0)
				goto done;
			continue;
		}
		if (i > 0)
			fputs(separator(&files[i - 1].text, &f->text), stdout);
		fwrite(f->text.ptr, 1, f->text.len, stdout);
	}
	r = 0;
done:
	for (size_t i = 0; i < nfiles; i++)
		eb_buf_release(&files[i].text);
	free(files);
	eb_resolve_lock_free(lock);
	return r;
}
