/*
 * wheel.h - install one wheel file into an image layer, without pip.
 *
 * eb_wheel_install() reads the wheel (a zip) with libarchive in one
 * streaming pass, extracting every file into a private directory under the
 * caller's staging directory while hashing it; then it checks the whole
 * wheel (PyPUG binary-distribution-format, recording-installed-packages;
 * python-packaging.md §7), and only when every check passed adds the
 * installed files to the layer builder.  A rejected wheel adds NOTHING to
 * the builder.
 *
 * Checks (each one rejects the wheel, -EB_EINVALID unless noted):
 *  - the file name is a wheel name; exactly one top-level *.dist-info
 *    directory, whose name and version match the file name's, and so do
 *    METADATA's Name and Version;
 *  - WHEEL: Wheel-Version major other than 1 is refused, a newer minor
 *    (1.1+) becomes a warning in the result (pip check_compatibility);
 *  - RECORD exists and lists every file of the archive except RECORD,
 *    RECORD.jws and RECORD.p7s, each with a sha256 (or stronger:
 *    sha384, sha512, sha3_*, blake2b) urlsafe-base64 hash and a size that
 *    match the extracted bytes; a RECORD entry missing from the archive is
 *    refused too (pip and uv skip this check; envbuild does not);
 *  - archive paths: no absolute paths, "..", "." or empty components,
 *    backslashes, control characters, NUL bytes, non-ASCII names without
 *    the zip's UTF-8 flag; only regular files and directories (a symlink
 *    or any other entry type is refused); no path twice; no encrypted
 *    entries; under <name>-<version>.data/ only the keys purelib, platlib,
 *    headers, scripts and data;
 *  - the names in the zip's local headers (what libarchive reads) must be
 *    exactly those of its central directory (what Python's zipfile, so
 *    pip, reads): a wheel cannot show pip one file set and envbuild
 *    another;
 *  - entry_points.txt per eb_metadata_parse_entry_points() (names with '/'
 *    or '\\' or a leading '.' are refused);
 *  - two archive files (or a file and a launcher) that would be installed
 *    at the same path;
 *  - zip bombs, while streaming, as soon as seen (-EB_ETOOBIG): more than
 *    max_entries entries (counted in the central directory, before any
 *    data is read), more than max_total_size bytes extracted, or an entry
 *    past ratio_min_size bytes whose output exceeds max_ratio times the
 *    compressed bytes consumed so far; the .dist-info files parsed in
 *    memory have their own caps (metadata.h; RECORD 64 MiB).
 *
 * Placement: the archive root goes to purelib when WHEEL says
 * "Root-Is-Purelib: true", else platlib, and so does the .dist-info
 * directory; <name>-<version>.data/<key>/ goes to the scheme's <key>
 * directory.  The wheel's own __pycache__ directories and *.pyc files are
 * verified but not installed (they were compiled for another interpreter,
 * by another build); with options.bytecode the caller's compiled files
 * are installed instead.  Files keep 0755 when
 * the zip entry has an execute bit, else 0644.  Everything under .data/
 * scripts/ gets 0755; a script whose first line starts with "#!python"
 * (also "#!pythonw", "#!python3") has that line replaced by the
 * interpreter's shebang.  [console_scripts] and [gui_scripts] become
 * launchers in the scripts directory, byte-for-byte pip's template, with
 * the same shebang; a .data/scripts file that an entry point also
 * generates (NAME, NAME.exe, NAME-script.py, NAME.pya) is not installed
 * (pip is_entrypoint_wrapper).  The shebang is "#!<interpreter>" unless the
 * path has a space or "#!" + path + newline exceeds 127 bytes (distlib's
 * rule, which pip uses); then it is pip's /bin/sh exec trick.
 *
 * Written into the .dist-info: INSTALLER ("envbuild\n"), REQUESTED (empty)
 * when options.requested, direct_url.json when options.direct_url (PEP
 * 610: {"archive_info": {"hash": ..., "hashes": {"sha256": ...}}, "url":
 * ...}, credentials and fragment stripped, keys sorted as pip writes it),
 * and a new RECORD: every installed file with its sha256 and size, paths
 * relative to the directory holding the .dist-info ("../../../bin/x" for
 * scripts), sorted bytewise, "RECORD,," for itself, quoted as Python's csv
 * module quotes, "\n" line ends (as installer and uv; pip writes "\r\n").
 * The wheel's own INSTALLER, REQUESTED, direct_url.json, RECORD.jws and
 * RECORD.p7s are not installed (they describe another installation, or
 * sign the old RECORD).
 *
 * Ownership: the builder, scheme and options are borrowed.  Extracted
 * files stay in a directory "wheel-XXXXXX" that eb_wheel_install() creates
 * under options.staging_dir (returned in result.staging); the builder
 * reads them when the layer is written, so the caller must keep them until
 * then and remove the staging directory afterwards.  On failure that
 * directory is removed.  Every check happens before the first file is
 * added; only an I/O error while adding (a staged file vanished) could
 * leave the builder part-filled, and the caller should then drop it.  The result owns all its strings and arrays;
 * eb_wheel_result_release() frees them.
 *
 * Output is deterministic: same wheel, scheme and options -> same layer
 * entries and the same RECORD bytes.
 *
 * Layering (service floor): python/ may use net/, oci/, pin/ and util/;
 * never registry/, lock/, assemble/, stage/ or cmd/.
 */
#ifndef EB_PYTHON_WHEEL_H
#define EB_PYTHON_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#include "oci/layer.h"
#include "python/metadata.h"
#include "util/error.h"

/* Installation scheme: absolute paths inside the image.  For the official
 * python:3.11 images (python-packaging.md §8) purelib = platlib =
 * "/usr/local/lib/python3.11/site-packages", scripts = "/usr/local/bin",
 * data = "/usr/local", headers = "/usr/local/include/python3.11/<project>"
 * (the caller names the project directory, as pip does), interpreter =
 * "/usr/local/bin/python3.11".  The interpreter path must not contain
 * control characters, '"', '\\', '$' or '`' (it goes into a shell line). */
struct eb_wheel_scheme {
	const char *purelib;
	const char *platlib;
	const char *scripts;
	const char *data;
	const char *headers;
	const char *interpreter;
};

#define EB_WHEEL_DEFAULT_MAX_TOTAL (UINT64_C(4) << 30) /* 4 GiB extracted */
#define EB_WHEEL_DEFAULT_MAX_ENTRIES 200000u
#define EB_WHEEL_DEFAULT_MAX_RATIO 200u
#define EB_WHEEL_DEFAULT_RATIO_MIN (UINT64_C(1) << 20) /* 1 MiB */
/* On an ext4 page cache writing a staged copy costs more than inflating
 * the member again at the layer's write (README, issue 25); small files
 * are staged, their creates are cheap next to a second open of the wheel. */
#define EB_WHEEL_DEFAULT_STAGE_MAX (UINT64_C(1) << 20) /* 1 MiB */

/* Bytecode for a wheel's modules (see eb_wheel_options.bytecode): each
 * .py file installed under purelib or platlib (absolute layer path, the
 * staged copy of its bytes); the hook returns the .pyc files to install
 * with them (absolute layer paths, and a file holding the bytes until the
 * layer is written, with its SHA-256 and size; the strings malloc'ed,
 * taken by the installer), which the new RECORD lists with their hashes as
 * pip's does.  An error fails the install; a file that does not compile is
 * simply not in *out (the hook reports it). */
struct eb_wheel_pyc {
	char *dest;
	char *path;
	unsigned char sha256[32];
	uint64_t size;
};
typedef int (*eb_wheel_bytecode_fn)(void *ud, const char *const *dests, const char *const *srcs,
				    size_t n, struct eb_wheel_pyc **out, size_t *nout,
				    struct eb_error **err);

struct eb_wheel_options {
	const char *staging_dir; /* existing directory (required) */
	/* The wheel's file name ("pip-23.0.1-py3-none-any.whl") when the
	 * path's basename is not it (e.g. a content-addressed cache file);
	 * NULL = basename of the path. */
	const char *filename;
	/* The URL the wheel came from, when it was a direct URL requirement
	 * (`name @ https://...`): writes direct_url.json.  NULL otherwise. */
	const char *direct_url;
	int requested;           /* 1: write REQUESTED (a top-level requirement) */
	uint64_t max_total_size; /* 0 = EB_WHEEL_DEFAULT_MAX_TOTAL */
	uint64_t max_entries;    /* 0 = EB_WHEEL_DEFAULT_MAX_ENTRIES */
	unsigned max_ratio;      /* 0 = EB_WHEEL_DEFAULT_MAX_RATIO */
	uint64_t ratio_min_size; /* 0 = EB_WHEEL_DEFAULT_RATIO_MIN */
	/* Absolute layer paths, sorted, this wheel does not add to the
	 * builder although its RECORD lists them: another wheel of the same
	 * install writes them (as pip's later install would overwrite them). */
	char *const *skip;
	size_t nskip;
	/* NULL: no bytecode is installed (Python compiles on import) */
	eb_wheel_bytecode_fn bytecode;
	void *bytecode_ud;
	/* Members this large or larger (0 = EB_WHEEL_DEFAULT_STAGE_MAX) are
	 * verified like any other but not staged: the layer reads them from
	 * the wheel when it is written, checked against the sha256 found
	 * here, so the wheel file must stay until then.  Not .py files,
	 * scripts or the .dist-info files read here: those are staged. */
	uint64_t stage_max;
};

#define EB_WHEEL_OPTIONS_INIT { NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, 0, NULL, NULL, 0 }

/* One file of a wheel's zip central directory: what eb_wheel_list()
 * returns, without reading any file data. */
struct eb_wheel_entry {
	char *name;     /* archive path as stored (owned) */
	uint32_t crc32; /* of the uncompressed bytes */
	uint64_t size;  /* uncompressed size */
};

/* The files (not directories) of the wheel at path from its central
 * directory, sorted by name; at most EB_WHEEL_DEFAULT_MAX_ENTRIES.
 * Free with eb_wheel_entries_free().  Errors as eb_wheel_install's. */
int eb_wheel_list(const char *path, struct eb_wheel_entry **out, size_t *n,
		  struct eb_error **err);
void eb_wheel_entries_free(struct eb_wheel_entry *e, size_t n);

struct eb_wheel_result {
	/* METADATA as parsed: name, version, requires_dist (markers kept),
	 * requires_python, provides_extra. */
	struct eb_metadata metadata;
	struct eb_wheel_meta wheel; /* WHEEL as parsed */
	char *dist_info;  /* absolute layer path of the .dist-info directory */
	char *staging;    /* the directory holding the extracted files */
	char **paths;     /* every file added to the builder, absolute, sorted */
	size_t npaths;
	char **warnings;  /* one line each */
	size_t nwarnings;
};

/* Install the wheel at wheel_path into b (see above).  *out is filled on
 * success and left empty on failure.  Errors: -EB_EINVALID (bad or
 * hostile wheel, bad scheme), -EB_ETOOBIG (a limit), -EB_EIO (reading the
 * wheel, writing the staging directory). */
/* Parse the core metadata of the wheel at path: its top-level
 * *.dist-info/METADATA (at most EB_METADATA_MAX_CORE bytes).  A wheel
 * without one is -EB_EINVALID.  md is the caller's to release. */
int eb_wheel_read_metadata(struct eb_metadata *md, const char *path, struct eb_error **err);
int eb_wheel_install(struct eb_layer_builder *b, const char *wheel_path,
		     const struct eb_wheel_scheme *scheme, const struct eb_wheel_options *opts,
		     struct eb_wheel_result *out, struct eb_error **err);
void eb_wheel_result_release(struct eb_wheel_result *r);

#endif
