/*
 * main.c - envbuild's entry point: global options, the command table, and
 * the only place that prints errors and chooses the exit status.  Built
 * twice: the front `envbuild` (-DEB_FRONT: check and help, the rest by
 * exec) and `envbuild-full` (every command); see the table below.
 *
 * Exit statuses: 0 success, 1 findings or failure, 2 usage or I/O error,
 * 130 interrupted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/report.h"
#include "util/alloc.h"
#include "util/interrupt.h"

static int cmd_help(int argc, char **argv, struct eb_error **err);

#define CHECK_USAGE                                                                          \
	"usage: envbuild check [--format=text|json|github] [--strict] [--deep] [--spec FILE]\n" \
	"                      [PATH...]\n"                                                   \
	"\n"                                                                                 \
	"Check that everything that goes into an image is pinned.\n"                         \
	"\n"                                                                                 \
	"With no PATH, checks the spec in the current directory (envbuild.yaml,\n"           \
	"envbuild.yml or envbuild.json), every requirements file it names and its\n"        \
	"inline packages.  Each PATH may be a spec, a requirements file or a\n"              \
	"Dockerfile/Containerfile; the kind is told by name, then by content.\n"             \
	"\n"                                                                                 \
	"Prints one line per finding, 'file:line:col: error: message [EBnnn]',\n"           \
	"followed by a hint, and nothing when everything is clean.\n"                        \
	"\n"                                                                                 \
	"options:\n"                                                                         \
	"  --format=FORMAT  text (default), json (machine-readable) or github\n"            \
	"                   (workflow annotations)\n"                                        \
	"  --strict         warnings fail the check too\n"                                   \
	"  --spec FILE      the spec to check when no PATH is given\n"                       \
	"  --deep           also resolve every pin to its wheel on the indexes and check\n" \
	"                   that every dependency of every wheel is pinned (no build)\n"    \
	"  --cache-dir DIR  where --deep keeps downloaded files\n"                         \
	"  -h, --help       show this help\n"                                                \
	"\n"                                                                                 \
	"exit status: 0 clean, 1 findings, 2 usage or I/O error.\n"                          \
	"Rules are listed in specs/rules.md.\n"

#define BUILD_USAGE                                                                          \
	"usage: envbuild build [--target T] [--platform P] [--output DIR]\n"                      \
	"                      [--output type=docker-archive,dest=FILE] [--cache-dir DIR]\n"      \
	"                      [--compression gzip|zstd|none] [--level N] [--spec FILE]\n"        \
	"                      [--format=text|json]\n"                                            \
	"\n"                                                                                  \
	"Build each target of the spec into an OCI image, without a daemon: the base\n"      \
	"image's layers, then one layer per 'files' entry, a config and a manifest\n"       \
	"(an index when the target has several platforms).  The spec is checked first;\n"   \
	"any finding stops the build before anything is written.\n"                          \
	"\n"                                                                                  \
	"Output is written whole or not at all: an OCI image layout per target in\n"       \
	"DIR/<target>/ (default: out/ next to the spec, image ref name = the target),\n"  \
	"or a docker-archive for 'docker load'/'podman load'.  Layers are cached by their\n" \
	"inputs in the blob cache, so an unchanged layer is not compressed again.\n"       \
	"Bytes depend only on the inputs: SOURCE_DATE_EPOCH (default 0) sets every\n"      \
	"timestamp.\n"                                                                        \
	"\n"                                                                                  \
	"A base may be a local OCI layout: base: oci:DIR[:REF] (DIR relative to the spec).\n" \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  -t, --target T       build only target T\n"                                        \
	"  --platform P         build only platform P (e.g. linux/amd64)\n"                   \
	"  -o, --output DIR     parent directory of the layouts (default: out)\n"             \
	"  --output type=docker-archive,dest=FILE   a docker-archive (one target, platform)\n" \
	"  --cache-dir DIR      blob and layer cache (default: $XDG_CACHE_HOME/envbuild)\n"   \
	"  --compression C      gzip (default), zstd or none\n"                               \
	"  --level N            compression level (gzip 1-9, default 6; zstd 1-19, default 3)\n" \
	"  --spec FILE          the spec (default: envbuild.yaml here)\n"                     \
	"  -j, --jobs N         layers built at once (default: one per CPU)\n"                \
	"  --locked             fail if envbuild.lock is stale or a base tag moved, instead\n" \
	"                       of re-locking\n"                                           \
	"  --frozen             use envbuild.lock as it is: no tag or index lookups\n"        \
	"  --label-revision     add org.opencontainers.image.revision (the git HEAD)\n"      \
	"  --ca-file FILE, --insecure-registry HOST   registry access, as for push\n"       \
	"  --format FORMAT      text (default) or json\n"                                     \
	"  --progress MODE      auto (default: tty on a terminal, else plain), tty (live\n" \
	"                       lines per layer, redrawn in place), plain (a line per\n"  \
	"                       finished step) or none\n"                                  \
	"  -q, --quiet          no progress (--progress=none)\n"                           \
	"\n"                                                                                  \
	"exit status: 0 built, 1 findings or failure, 2 usage or I/O error.\n"

#define INSPECT_USAGE                                                                        \
	"usage: envbuild inspect [--format=text|json] [--platform P] LAYOUT[:REF]\n"          \
	"\n"                                                                                  \
	"Show an OCI image layout's image: digest, and for each platform the manifest,\n"   \
	"config (env, entrypoint, cmd, workdir, user, labels) and layers with what each\n"  \
	"holds.  REF selects an image by its ref name when the layout has several.\n"

#define PUSH_USAGE                                                                           \
	"usage: envbuild push [--target T] [--tag TAG]... [--repository REPO] [--spec FILE]\n"  \
	"                     [--cache-dir DIR] [--ca-file FILE] [--insecure-registry HOST]...\n" \
	"                     [--concurrency N] [--chunk-size BYTES] [--format=text|json]\n"     \
	"\n"                                                                                  \
	"Build the targets (cached layers are not rebuilt) and push them to the spec's\n"   \
	"repository, tagged with the target's name (REPO:training, REPO:inference) and\n"   \
	"each --tag.  Blobs first (each distinct blob once, even when several targets\n"    \
	"share it; base layers are mounted from the base's repository on the same\n"       \
	"registry), then manifests and indexes, tags last: a tag never points to an\n"      \
	"incomplete image.  Prints REPO@sha256:... per target.\n"                            \
	"\n"                                                                                  \
	"Credentials come from $REGISTRY_AUTH_FILE or $DOCKER_CONFIG/config.json (auths,\n" \
	"credHelpers, credsStore); they are never printed.  TLS is verified with the\n"     \
	"system CAs, --ca-file and certs.d directories; plain HTTP only for loopback\n"     \
	"registries and --insecure-registry hosts.\n"                                        \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  -t, --target T           push only target T\n"                                     \
	"  --tag TAG                also tag TAG (TARGET-TAG when pushing several targets)\n" \
	"  --repository REPO        push here instead of the spec's 'repository'\n"          \
	"  --ca-file FILE           trust this CA bundle too\n"                               \
	"  --insecure-registry HOST allow plain HTTP to HOST[:PORT]\n"                        \
	"  --concurrency N          blobs uploaded at once (default 4)\n"                     \
	"  --chunk-size BYTES       upload blobs larger than this in PATCH chunks\n"          \
	"  --format FORMAT          text (default) or json (event lines on stdout)\n" \
	"  --progress MODE          auto (default), tty (a live line per blob: bytes and\n" \
	"                           rate), plain (a line per blob uploaded, mounted or\n" \
	"                           already there, manifest and tag put) or none\n"        \
	"  -q, --quiet              no progress (--progress=none)\n"                       \
	"  --locked, --frozen       as for build: a stale lock fails / nothing is resolved\n" \
	"  --allow-dirty            push although tracked inputs have uncommitted changes\n" \
	"  --commit                 commit envbuild.lock (with the pushed digests) alone\n"   \
	"  --label-revision         add org.opencontainers.image.revision (the git HEAD)\n" \
	"  --sign-key FILE          cosign-format signatures of every manifest and index\n" \
	"                           with this PEM EC P-256 key (or $ENVBUILD_SIGN_KEY)\n"  \
	"  --no-attest              attach no SBOMs (CycloneDX, SPDX) and no provenance\n" \
	"\n"                                                                                  \
	"exit status: 0 pushed, 1 findings or failure, 2 usage or I/O error.\n"

#define SBOM_USAGE                                                                           \
	"usage: envbuild sbom [--target T] [--platform P] [--format cyclonedx|spdx]\n"      \
	"                     [--repository REPO] [--spec FILE] [--cache-dir DIR]\n"        \
	"\n"                                                                                  \
	"Build the target into the cache (cached layers are not rebuilt) and print its\n"  \
	"SBOM: CycloneDX 1.6 JSON (default) or SPDX 2.3 JSON, the bytes `push` attaches:\n" \
	"the base (digest), its Debian packages and Python distributions, the apt .debs\n" \
	"and the wheels with sha256, source URL and package URL.\n"                         \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  -t, --target T           the target (required when the spec has several)\n"      \
	"  --platform P             the platform (required when the target has several)\n"  \
	"  --format FORMAT          cyclonedx (default) or spdx\n"                          \
	"  --repository REPO        the image name in the SBOM (default: the spec's)\n"     \
	"  --locked, --frozen       as for build\n"                                          \
	"\n"                                                                                  \
	"exit status: 0 printed, 1 findings or failure, 2 usage or I/O error.\n"

#define VERIFY_USAGE                                                                         \
	"usage: envbuild verify REF[@DIGEST] [--key PUB] [--repo DIR] [--cache-dir DIR]\n"  \
	"                       [--ca-file FILE] [--insecure-registry HOST]...\n"           \
	"\n"                                                                                  \
	"Prove that a pushed image is what its commit's lock builds: the image by digest,\n" \
	"with --key its cosign signatures (every platform manifest and the index), its\n" \
	"provenance (signed by the key), the commit it names checked out from the\n"       \
	"repository (the current one, or --repo), a --frozen build of the target from\n"  \
	"that commit's envbuild.lock, and per platform the rebuilt manifest digest equal\n" \
	"to the pushed one.  Prints \"verified ...\", or \"not verified ...: \" and the first\n" \
	"difference (a signature, the provenance, a dependency, a layer and the first\n"  \
	"differing path inside it).\n"                                                       \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  --key PUB                the PEM public key the image must be signed with\n"     \
	"  --repo DIR               the git repository the image was built from (default .)\n" \
	"\n"                                                                                  \
	"exit status: 0 verified, 1 not verified or failure, 2 usage or I/O error.\n"

#define LOCK_USAGE                                                                           \
	"usage: envbuild lock [--check [--offline]] [--upgrade] [--commit] [--pylock] [--spec FILE]\n" \
	"                     [--cache-dir DIR] [--ca-file FILE] [--insecure-registry HOST]...\n" \
	"\n"                                                                                  \
	"Resolve every input of every target - each base tag to its digest, each pin to\n"  \
	"the exact wheel file with its sha256 - build the images into the cache and write\n" \
	"envbuild.lock next to the spec (one.yaml: one.lock; canonical JSON, written\n"    \
	"atomically; see specs/lockfile.md).  Pins and base digests already in the lock\n" \
	"are kept.\n"                                                                        \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  --check     exit 1 (and say why) when the lock is stale or missing, or a base\n" \
	"              tag no longer resolves to the locked digest (drift)\n"             \
	"  --offline   with --check: the files only, no tag lookups\n"                   \
	"  --upgrade   ignore the lock and resolve everything again: each base tag to its\n" \
	"              current digest, each Python pin to the file its index offers now\n" \
	"              (a rebuilt wheel's new bytes), each apt_sources: suite's Release\n" \
	"              and the .deb of every apt: pin; prints the base changes.  Versions\n" \
	"              stay as pinned: 'envbuild pin --upgrade' moves them\n"               \
	"  --commit    commit the lockfile alone (author from git config)\n"                \
	"  --pylock    also write pylock.<target>.toml (PEP 751) beside the spec: each\n"  \
	"              target's installed Python packages, for pip/uv to install\n"       \
	"  --label-revision  add org.opencontainers.image.revision (the git HEAD)\n"         \
	"  --progress MODE   auto, tty, plain or none: the layers as they are built (as\n"  \
	"                    for build)\n"                                                   \
	"  -q, --quiet       no progress\n"                                                  \
	"\n"                                                                                  \
	"exit status: 0 ok (or fresh), 1 stale or failure, 2 usage or I/O error.\n"

#define RESOLVE_USAGE                                                                        \
	"usage: envbuild resolve [-i] [--lock FILE] FILE...\n"                                \
	"\n"                                                                                  \
	"Rewrite the image references of job definitions, Kubernetes manifests and other\n" \
	"YAML files to the digests recorded in envbuild.lock, as 'ko resolve' does.  Every\n" \
	"document of a '---' stream is read:\n"                                              \
	"\n"                                                                                  \
	"  envbuild://TARGET  anywhere as a value: the repository of the target's first\n"  \
	"                     pushed reference, at its pushed digest\n"                       \
	"  image: REPO:TAG    a tag 'envbuild push' pushed: REPO at that digest\n"            \
	"\n"                                                                                  \
	"Both become REPO@sha256:....  References already pinned by digest, tags never\n"    \
	"pushed and other values are left alone.  Only the rewritten values change:\n"      \
	"comments, quotes, indentation and line ends stay as written.\n"                     \
	"\n"                                                                                  \
	"Prints the files to stdout (several as one '---' stream), or with -i rewrites\n"   \
	"each changed file in place, atomically.  Nothing is printed or written when a\n"   \
	"reference cannot be resolved.\n"                                                    \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  -i, --in-place  rewrite the files instead of printing them\n"                      \
	"  --lock FILE     the lock (default: envbuild.lock here)\n"                          \
	"  -h, --help      show this help\n"                                                  \
	"\n"                                                                                  \
	"exit status: 0 resolved, 1 unknown or unpushed target or invalid YAML,\n"           \
	"2 usage or I/O error.\n"

#define CACHE_USAGE                                                                          \
	"usage: envbuild cache verify [--cache-dir DIR]\n"                                      \
	"       envbuild cache prune [--older-than DURATION] [--max-size SIZE] [--dry-run]\n"  \
	"                            [--cache-dir DIR]\n"                                        \
	"\n"                                                                                  \
	"Look after the blob cache that builds, locks and pushes share.\n"                    \
	"\n"                                                                                  \
	"verify  re-hash every blob; one whose bytes do not match its digest is removed\n"   \
	"        (the next build fetches or rebuilds it) and listed.  Builds do this\n"      \
	"        too, for each blob they reuse.\n"                                             \
	"prune   remove blobs not used for longer than DURATION (90s, 30m, 12h, 7d, 2w),\n"  \
	"        then the least recently used until the rest fit in SIZE (0, 500M, 10G);\n" \
	"        also removes what killed builds left in the cache's tmp/.\n"                 \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  --cache-dir DIR         the cache (default: $XDG_CACHE_HOME/envbuild)\n"            \
	"  --older-than DURATION   prune: blobs unused this long\n"                             \
	"  --max-size SIZE         prune: keep at most SIZE bytes of blobs\n"                   \
	"  -n, --dry-run           prune: list what would go, remove nothing\n"               \
	"\n"                                                                                  \
	"exit status: 0 fine, 1 corrupt blobs found (and removed), 2 usage or I/O error.\n"
#define PIN_USAGE                                                                            \
	"usage: envbuild pin [--target T] [--upgrade] [--upgrade-package NAME[==V]]...\n"      \
	"                    [--dry-run] [--pre] [--spec FILE] [--cache-dir DIR]\n"            \
	"\n"                                                                                  \
	"Resolve each target's loose requirements (the requirements_in: files, e.g.\n"       \
	"requirements-train.in with 'numpy>=1.24' and 'pandas') for the target's own\n"      \
	"python, platforms and libc, and write every package of the closure as\n"           \
	"name==version with a --hash for each wheel that fits the target to the target's\n" \
	"requirements: file.  All targets pinned are resolved together: a package two\n"   \
	"targets need gets one version.  Pins already in the file are kept unless a\n"     \
	"requirement forces a change.  Conflicts are explained.  Prints what changed.\n"    \
	"A pyproject.toml input gives [project].dependencies and the target's extras:\n"    \
	"and groups: ([dependency-groups]).  Loose apt: names become name=version with\n"   \
	"their Depends closure the base lacks, edited into the spec's apt: lists.\n"        \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  -t, --target T              pin target T only\n"                                   \
	"  --upgrade                   ignore existing pins: newest versions that fit\n"      \
	"  --upgrade-package NAME[==V] let NAME move (to exactly V when given); repeatable\n"         \
	"  --dry-run                   print the changes, write nothing\n"                    \
	"  --pre                       allow pre-releases of every package\n"                 \
	"  --spec FILE                 the spec (default: envbuild.yaml here)\n"              \
	"  --cache-dir DIR             blob cache (base layers, wheels read for metadata)\n"       \
	"\n"                                                                                  \
	"exit status: 0 pinned, 1 no solution or invalid input, 2 usage or I/O error.\n"
#define IMPORT_USAGE                                                                         \
	"usage: envbuild import [Dockerfile|Containerfile] [--target NAME] [-o FILE]\n"       \
	"                       [--repository REPO] [--index URL] [--all-stages]\n"          \
	"                       [--allow-partial] [--force]\n"                              \
	"\n"                                                                                  \
	"Write envbuild.yaml from a Dockerfile's final stage (every named stage with\n"      \
	"--all-stages): FROM, ARG, ENV, WORKDIR, USER, LABEL, ENTRYPOINT, CMD, COPY/ADD\n"   \
	"from the context (--chown, --chmod, .dockerignore), RUN pip install, apt-get\n"     \
	"install, groupadd/useradd, mkdir && chown/chmod.  Every line that cannot be\n"      \
	"declared is printed as FILE:LINE:COL: not converted: ... with a hint.  Loose\n"     \
	"pip requirements go to requirements.in for `envbuild pin`.  With --target NAME\n"   \
	"and an existing spec, the target is appended to it (its comments kept).\n"         \
	"\n"                                                                                  \
	"options:\n"                                                                          \
	"  -t, --target NAME    the final stage's target name (default: its AS name, app)\n" \
	"  -o, --output FILE    the spec (default: envbuild.yaml next to the Dockerfile)\n"  \
	"  --repository REPO    the spec's repository\n"                                     \
	"  --index URL          the spec's package index\n"                                  \
	"  --all-stages         one target per named stage, and the final one\n"             \
	"  --allow-partial      exit 0 even when lines were left\n"                          \
	"  -f, --force          overwrite the spec and requirements files\n"                 \
	"\n"                                                                                  \
	"exit status: 0 all converted, 1 lines left (the spec is written anyway),\n"       \
	"2 usage or I/O error.\n"

/*
 * Two binaries are built from this file (git's precedent: git does not link
 * libcurl, git-remote-https does).  The front, `envbuild` (EB_FRONT), is what
 * users and the pre-commit hook run: it holds `check` and everything that
 * needs only the parsers, so it maps libc, libyaml and jansson and starts in
 * a few milliseconds.  The full binary, `envbuild-full`, holds every command;
 * the front execs it, argv unchanged, for a command whose row says FULL()
 * here (NULL in the front) or when a front command returns EB_CMD_FULL
 * (check --deep).  Both link the same libenvbuild.a: the linker takes only
 * the objects a binary references, so no heavy command may be named in the
 * front's table.
 */
#ifdef EB_FRONT
#define FULL(fn) NULL
#else
#define FULL(fn) fn
#endif

const struct eb_cmd eb_commands[] = {
	{ "check", cmd_check, "Check specs, requirements and Dockerfiles for unpinned inputs",
	  CHECK_USAGE },
	{ "lock", FULL(cmd_lock), "Resolve tags and pins and write envbuild.lock", LOCK_USAGE },
	{ "build", FULL(cmd_build), "Build the targets' OCI images without a daemon", BUILD_USAGE },
	{ "push", FULL(cmd_push), "Push the built images to their registry", PUSH_USAGE },
	{ "inspect", FULL(cmd_inspect), "Show an OCI layout's manifest, config and layers",
	  INSPECT_USAGE },
	{ "resolve", FULL(cmd_resolve), "Rewrite image references in job files to locked digests",
	  RESOLVE_USAGE },
	{ "cache", FULL(cmd_cache), "Verify or prune the blob cache", CACHE_USAGE },
	{ "pin", FULL(cmd_pin), "Resolve loose requirements into exact, hashed pins", PIN_USAGE },
	{ "import", FULL(cmd_import), "Write envbuild.yaml from a Dockerfile, naming what is left",
	  IMPORT_USAGE },
	{ "sbom", FULL(cmd_sbom), "Print a target's SBOM (CycloneDX or SPDX)", SBOM_USAGE },
	{ "verify", FULL(cmd_verify), "Prove a pushed image is what its commit's lock builds",
	  VERIFY_USAGE },
	{ "help", cmd_help, "Show help for a command",
	  "usage: envbuild help [COMMAND]\n\nShow the help of COMMAND, or the list of commands.\n" },
	{ NULL, NULL, NULL, NULL },
};

const struct eb_cmd *eb_cmd_find(const char *name)
{
	for (const struct eb_cmd *c = eb_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void eb_cmd_print_help(const struct eb_cmd *cmd)
{
	fputs(cmd->usage, stdout);
}

static void print_usage(FILE *out)
{
	fputs("usage: envbuild [-C DIR] [--version] [--help] COMMAND [ARGS...]\n\n"
	      "Pinned, reproducible, daemonless container environments for ML.\n\n"
	      "commands:\n",
	      out);
	for (const struct eb_cmd *c = eb_commands; c->name; c++)
		fprintf(out, "  %-9s %s\n", c->name, c->summary);
	fputs("\nRun 'envbuild help COMMAND' or 'envbuild COMMAND --help' for details.\n", out);
}

static int cmd_help(int argc, char **argv, struct eb_error **err)
{
	const struct eb_cmd *c;

	if (argc < 2) {
		print_usage(stdout);
		return 0;
	}
	c = eb_cmd_find(argv[1]);
	if (!c)
		return eb_error_set(err, EB_EUSAGE, "unknown command '%s'", argv[1]);
	eb_cmd_print_help(c);
	return 0;
}

static int exit_status(const struct eb_error *e)
{
	switch (e->code) {
	case EB_EUSAGE:
	case EB_EIO:
	case EB_ENOTFOUND:
		return 2;
	case EB_EINTR:
		return 130;
	default:
		return 1;
	}
}

static void print_error(const struct eb_error *e)
{
	/* escaped under --format=github (cmd/report.h) */
	char *file = e->file ? eb_report_text(e->file) : NULL;
	char *msg = eb_report_text(e->msg);

	if (file && e->line)
		fprintf(stderr, "envbuild: %s:%u:%u: error: %s\n", file, e->line, e->col, msg);
	else if (file)
		fprintf(stderr, "envbuild: %s: error: %s\n", file, msg);
	else
		fprintf(stderr, "envbuild: error: %s\n", msg);
	if (e->hint) {
		char *hint = eb_report_text(e->hint);
		fprintf(stderr, "envbuild: hint: %s\n", hint);
		free(hint);
	}
	free(file);
	free(msg);
}

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

#ifdef EB_FRONT
/* the command line as given, for envbuild-full (getopt permutes argv);
 * static, so that it stays reachable on every return path */
static char **orig_argv;

int eb_cmd_check_deep(const char *spec, const char *cache_dir, struct eb_diag_list *diags,
		      struct eb_error **err)
{
	(void)spec;
	(void)cache_dir;
	(void)diags;
	(void)err;
	return EB_CMD_FULL;
}

/*
 * Run the command line in envbuild-full: first next to this binary (an
 * in-tree build, the tests' ./envbuild, a relocated install), then in
 * PKGLIBEXECDIR where `make install` puts it.  argv is the one main() was
 * given (before any getopt permuted it), so the full binary parses it
 * exactly as the front did; the
 * directory is the one the front started in (-C is applied again).
 * Returns only on failure, with the exit status.
 */
static int exec_full(const char *command, char **argv, int start_dir)
{
	static const char name[] = "envbuild-full";
	char self[PATH_MAX], here[PATH_MAX + sizeof(name)];
	const char *tried[2];
	int errs[2], n = 0;
	ssize_t len;

	/* a signal before the exec ends the command as it would have ended
	 * the full binary; after it, the full binary's handlers take over */
	if (eb_interrupted())
		eb_interrupt_exit();
	fflush(stdout);
	if (start_dir >= 0 && fchdir(start_dir) < 0) {
		fprintf(stderr, "envbuild: error: cannot return to the starting directory: %s\n",
			strerror(errno));
		return 2;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		char *slash;

		self[len] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			snprintf(here, sizeof(here), "%.*s/%s", (int)(slash - self), self, name);
			execv(here, argv);
			tried[n] = here;
			errs[n++] = errno;
		}
	}
	if (n == 0 || strcmp(here, PKGLIBEXECDIR "/envbuild-full") != 0) {
		execv(PKGLIBEXECDIR "/envbuild-full", argv);
		tried[n] = PKGLIBEXECDIR "/envbuild-full";
		errs[n++] = errno;
	}
	fprintf(stderr, "envbuild: error: '%s' needs the full binary, which cannot be run:\n",
		command);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "envbuild: error:   %s: %s\n", tried[i], strerror(errs[i]));
	fputs("envbuild: hint: install envbuild-full with envbuild ('make install' installs both)\n",
	      stderr);
	return 2;
}
#endif

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_error *err = NULL;
	const struct eb_cmd *cmd;
	int c, r;
#ifdef EB_FRONT
	int start_dir = -1;

	orig_argv = eb_xcalloc((size_t)argc + 1, sizeof(*orig_argv));
	memcpy(orig_argv, argv, (size_t)argc * sizeof(*argv));
#endif

	/* UTF-8 file names in archives (wheels, layers) need a UTF-8 ctype;
	 * nothing else depends on the locale */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "");
	/* Ctrl-C and SIGTERM only set a flag: long loops poll it and unwind,
	 * and the temporaries still registered are removed below */
	if (eb_interrupt_install(&err) < 0) {
		print_error(err);
		eb_error_free(err);
		return 2;
	}
	/* '+' stops at the first non-option: the command's own options follow */
	while ((c = getopt_long(argc, argv, "+hVC:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			print_usage(stdout);
			return 0;
		case 'V':
			printf("envbuild %s\n", ENVBUILD_VERSION);
			return 0;
		case 'C':
#ifdef EB_FRONT
			/* the full binary applies -C again from where we started */
			if (start_dir < 0)
				start_dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
#endif
			if (chdir(optarg) < 0) {
				fprintf(stderr, "envbuild: error: cannot change to '%s': %s\n", optarg,
					strerror(errno));
				return 2;
			}
			break;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		print_usage(stderr);
		return 2;
	}
	cmd = eb_cmd_find(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "envbuild: error: unknown command '%s'\n", argv[optind]);
		fputs("envbuild: hint: run 'envbuild --help' for the list of commands\n", stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	if (wants_help(argc, argv)) {
		eb_cmd_print_help(cmd);
		return 0;
	}
#ifdef EB_FRONT
	if (!cmd->fn)
		return exec_full(cmd->name, orig_argv, start_dir);
#endif
	optind = 0; /* reset getopt for the command (glibc: 0 re-initialises) */
	r = cmd->fn(argc, argv, &err);
#ifdef EB_FRONT
	if (r == EB_CMD_FULL && !err && !eb_interrupted())
		return exec_full(cmd->name, orig_argv, start_dir);
	if (start_dir >= 0)
		close(start_dir);
#endif
	if (eb_interrupted()) {
		/* whatever the command returned: remove what is left, then end
		 * the way the signal would have (130 SIGINT, 143 SIGTERM) */
		fflush(stdout);
		fputs("envbuild: error: interrupted\n", stderr);
		eb_error_free(err);
		eb_interrupt_exit();
	}
	eb_interrupt_cleanup();
	if (fflush(stdout) != 0 && r >= 0) {
		fprintf(stderr, "envbuild: error: cannot write output: %s\n", strerror(errno));
		return 2;
	}
	if (r < 0) {
		if (err)
			print_error(err);
		else
			fprintf(stderr, "envbuild: error: failed (code %d)\n", -r);
		r = err ? exit_status(err) : 1;
		eb_error_free(err);
		return r;
	}
	eb_error_free(err);
	return r;
}
