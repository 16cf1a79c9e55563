/*
 * cmd_cache.c - `envbuild cache verify` and `envbuild cache prune`: the
 * blob cache's upkeep.  Options and output only; the walks are the blob
 * store's (oci/blobstore.c).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "oci/blobstore.h"
#include "registry/regcache.h"

/* "90" (seconds), "30m", "12h", "7d", "2w" */
static int parse_duration(const char *s, int64_t *out)
{
	char *end;
	long long n;
	int64_t mul = 1;

	if (!s[0] || s[0] == '-')
		return -1;
	n = strtoll(s, &end, 10);
	if (end == s || n < 0)
		return -1;
	switch (*end) {
	case '\0': case 's': mul = 1; break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	case 'w': mul = 7 * 86400; break;
	default: return -1;
	}
	if (*end && end[1])
		return -1;
	if (n > INT64_MAX / mul)
		return -1;
	*out = (int64_t)n * mul;
	return 0;
}

/* "0", "500M", "10G", "2GiB", "1048576" */
static int parse_size(const char *s, int64_t *out)
{
	char *end;
	long long n;
	int64_t mul = 1;

	if (!s[0] || s[0] == '-')
		return -1;
	n = strtoll(s, &end, 10);
	if (end == s || n < 0)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mul = 1LL << 10; end++; break;
	case 'm': case 'M': mul = 1LL << 20; end++; break;
	case 'g': case 'G': mul = 1LL << 30; end++; break;
	case 't': case 'T': mul = 1LL << 40; end++; break;
	default: return -1;
	}
	if (strcmp(end, "") != 0 && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
		return -1;
	if (n > INT64_MAX / mul)
		return -1;
	*out = (int64_t)n * mul;
	return 0;
}

static void print_bad(void *ud, const char *digest, uint64_t size, const char *why)
{
	(void)ud;
	printf("corrupt %s (%" PRIu64 " bytes), removed: %s\n", digest, size, why ? why : "");
}

static void print_removed(void *ud, const char *digest, uint64_t size, const char *why)
{
	const int *dry = ud;

	(void)why;
	printf("%s %s (%" PRIu64 " bytes)\n", *dry ? "would remove" : "removed", digest, size);
}

static int cache_verify(int argc, char **argv, const char *cache_dir, struct eb_error **err)
{
	struct eb_blobstore *bs = NULL;
	int r;

	if (optind < argc)
		return eb_error_set(err, EB_EUSAGE, "unexpected argument '%s'", argv[optind]);
	if ((r = eb_blobstore_open(&bs, cache_dir, err)) < 0)
		return r;
	r = eb_blobstore_verify_all(bs, print_bad, NULL, err);
	if (r >= 0)
		printf("%d corrupt blob%s in '%s'\n", r, r == 1 ? "" : "s", eb_blobstore_root(bs));
	eb_blobstore_free(bs);
	return r < 0 ? r : (r > 0 ? 1 : 0);
}

int cmd_cache(int argc, char **argv, struct eb_error **err)
{
	static const struct option opts[] = {
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "older-than", required_argument, NULL, 'o' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct eb_prune_options po = { .older_than = -1, .max_size = -1 };
	struct eb_prune_result res;
	struct eb_blobstore *bs = NULL;
	const char *cache_dir = NULL, *sub;
	int c, r;

	if (argc < 2 || argv[1][0] == '-')
		return eb_error_set(err, EB_EUSAGE, "which cache command? (verify or prune; see "
				    "'envbuild cache --help')");
	sub = argv[1];
	/* getopt from the subcommand on */
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "n", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cache_dir = optarg;
			break;
		case 'o':
			if (parse_duration(optarg, &po.older_than) < 0)
				return eb_error_set(err, EB_EUSAGE, "invalid --older-than '%s' (write "
						    "e.g. 90s, 30m, 12h, 7d or 2w)", optarg);
			break;
		case 'm':
			if (parse_size(optarg, &po.max_size) < 0)
				return eb_error_set(err, EB_EUSAGE, "invalid --max-size '%s' (write "
						    "e.g. 0, 500M or 10G)", optarg);
			break;
		case 'n':
			po.dry_run = 1;
			break;
		default:
			return eb_error_set(err, EB_EUSAGE, "see 'envbuild cache --help'");
		}
	}
	if (strcmp(sub, "verify") == 0) {
		if (po.older_than >= 0 || po.max_size >= 0 || po.dry_run)
			return eb_error_set(err, EB_EUSAGE, "'cache verify' takes only --cache-dir");
		return cache_verify(argc, argv, cache_dir, err);
	}
	if (strcmp(sub, "prune") != 0)
		return eb_error_set(err, EB_EUSAGE, "unknown cache command '%s' (verify or prune)", sub);
	if (optind < argc)
		return eb_error_set(err, EB_EUSAGE, "unexpected argument '%s'", argv[optind]);
	if (po.older_than < 0 && po.max_size < 0)
		return eb_error_set(err, EB_EUSAGE,
				    "say what to prune: --older-than DURATION and/or --max-size SIZE");
	if ((r = eb_blobstore_open(&bs, cache_dir, err)) < 0)
		return r;
	r = eb_blobstore_prune(bs, &po, print_removed, &po.dry_run, &res, err);
	if (r == 0)
		printf("%s %zu blob%s (%" PRIu64 " bytes), kept %zu (%" PRIu64 " bytes) in '%s'\n",
		       po.dry_run ? "would remove" : "removed", res.removed,
		       res.removed == 1 ? "" : "s", res.removed_bytes, res.kept, res.kept_bytes,
		       eb_blobstore_root(bs));
	eb_blobstore_free(bs);
	return r;
}

void eb_cmd_cache_note(struct eb_regcache_stats *cst)
{
	size_t i;
	json_t *u;

	if (cst->hits + cst->misses + cst->records_pushed)
		fprintf(stderr, "envbuild: shared cache: %u hit%s, %u miss%s, %u record%s rejected, "
			"%u pushed (%.1f MiB)\n", cst->hits, cst->hits == 1 ? "" : "s", cst->misses,
			cst->misses == 1 ? "" : "es", cst->rejected, cst->rejected == 1 ? "" : "s",
			cst->records_pushed, cst->bytes_uploaded / 1048576.0);
	if (cst->records_failed)
		fprintf(stderr, "envbuild: warning: shared cache: %u record%s not pushed (%s); other "
			"runners build those layers again\n", cst->records_failed,
			cst->records_failed == 1 ? "" : "s",
			cst->push_error[0] ? cst->push_error : "not written");
	/* what this image took on the word of whoever may write the cache
	 * repository (README, "Threat model") */
	json_array_foreach(cst->used, i, u)
		fprintf(stderr, "envbuild: from the shared cache: %s %s (%s)\n",
			json_string_value(json_object_get(u, "kind")),
			json_string_value(json_object_get(u, "digest")),
			json_is_true(json_object_get(u, "checked"))
				? "bytes checked"
				: "mounted, bytes not downloaded");
	json_decref(cst->used);
	cst->used = NULL;
}
