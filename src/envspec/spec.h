/*
 * spec.h - the environment spec (envbuild.yaml / .json): load, validate,
 * and the typed struct every later stage consumes.
 *
 * The format is documented in specs/envbuild-yaml.md and
 * specs/envbuild.schema.json.  Validation here is about shape and values
 * that need no other module (types, unknown keys, paths, env names,
 * platforms); pin rules for base images and requirements live in pin/check.
 *
 * Ownership: eb_spec_load() returns a spec the caller frees with
 * eb_spec_free(); every string and array inside belongs to the spec.
 *
 * Layering (ground floor): envspec/ may use util/ only; it reads and
 * validates the spec's shape, and never applies pin rules, reads a lock,
 * resolves or builds.
 */
#ifndef EB_SPEC_SPEC_H
#define EB_SPEC_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "envspec/accounts.h"
#include "envspec/runconf.h"
#include "util/diag.h"
#include "util/error.h"

struct eb_srcpos {
	unsigned line, col;
};

struct eb_spec_str {
	char *s;
	struct eb_srcpos pos;
};

struct eb_spec_kv {
	char *key;
	char *value;
	struct eb_srcpos pos; /* of the key */
};

struct eb_spec_strlist {
	struct eb_spec_str *v;
	size_t n;
};

struct eb_spec_kvlist {
	struct eb_spec_kv *v;
	size_t n;
};

struct eb_spec_file {
	struct eb_spec_str src;  /* relative to the spec's directory, as written */
	struct eb_spec_str dest; /* absolute path in the image */
	struct eb_spec_strlist exclude;
	struct eb_spec_str chown; /* "USER[:GROUP]" (s NULL: 0:0), numbers parsed into uid/gid */
	int chown_named;          /* chown names a user or group: resolved at build */
	struct eb_spec_str chmod; /* "0640" (s NULL: modes normalised), parsed into mode */
	uint32_t uid, gid;
	unsigned mode;            /* 0 when chmod is unset */
	struct eb_srcpos pos;
};

/* An apt source (deb822 fields of sources.list.d): the suite's dists/
 * tree under url, verified with the keyring signed_by. */
struct eb_spec_apt_source {
	struct eb_spec_str url;      /* http(s)://... (no trailing '/' needed) */
	struct eb_spec_str suite;    /* "bookworm" */
	struct eb_spec_strlist components; /* [main, ...] */
	struct eb_spec_str signed_by; /* keyring path, relative to the spec */
	int check_valid_until;       /* 1 unless `check_valid_until: false` (snapshots) */
	struct eb_srcpos pos;
};

struct eb_spec_apt_sources {
	struct eb_spec_apt_source *v;
	size_t n;
};

/* At most this many `files` entries per target. */
#define EB_SPEC_FILES_MAX 1000

struct eb_spec_target {
	char *name;
	struct eb_srcpos pos;
	struct eb_spec_str base;            /* image reference or "scratch" */
	struct eb_spec_strlist requirements; /* requirements files, relative to the spec */
	struct eb_spec_strlist packages;     /* inline requirement lines */
	struct eb_spec_file *files;
	size_t nfiles;
	struct eb_spec_kvlist env;    /* spec-level env merged in, target wins */
	struct eb_spec_kvlist labels; /* spec-level labels merged in, target wins */
	struct eb_spec_str workdir;   /* s NULL when unset */
	struct eb_spec_str user;
	struct eb_spec_strlist entrypoint;
	int has_entrypoint;
	struct eb_spec_strlist cmd;
	int has_cmd;
	struct eb_spec_strlist platforms; /* the spec's when not overridden */
	struct eb_spec_str python;        /* the spec's when not overridden */
	/* Python target overrides; s NULL: detected from the base image */
	struct eb_spec_str interpreter;   /* "/usr/bin/python3.11" */
	struct eb_spec_str site_packages; /* "/usr/local/lib/python3.11/dist-packages" */
	struct eb_spec_str libc;          /* "glibc 2.36" / "musl 1.2" */
	/* Debian packages: exact pins "name[:arch]=version" (checked: EB230-)
	 * and the sources they come from (the spec's unless overridden) */
	struct eb_spec_strlist apt;
	struct eb_spec_apt_sources apt_sources;
	/* Loose inputs of `envbuild pin` (pip-compile's *.in files, or a
	 * pyproject.toml), relative to the spec; pinned into requirements[0].
	 * extras/groups: the [project.optional-dependencies] and PEP 735
	 * [dependency-groups] of the pyproject.toml inputs also pinned (uv's
	 * --extra/--group). */
	struct eb_spec_strlist requirements_in;
	struct eb_spec_strlist extras, groups;
	/* `accounts:` and `dirs:`, the spec's entries then the target's */
	struct eb_spec_accounts accounts;
	struct eb_spec_runconf run; /* `expose`, `stopsignal` */
	/* The build environment of the sdists the target installs: each item
	 * a pinned requirement line ("setuptools==66.1.1 --hash=sha256:...")
	 * or "-r FILE" (a requirements file, relative to the spec). */
	struct eb_spec_strlist build_requirements;
	/* `build_in: NAME`: the target whose image (its base and `apt:`
	 * layers) builds this target's sdists, the multi-stage builder; s
	 * NULL: the target's own base.  Checked (EB257): another target, no
	 * cycle, built for every platform of this one. */
	struct eb_spec_str build_in;
	/* `bytecode` (default true): .pyc files for the wheels and apt Python
	 * packages installed; `base_bytecode` (default false): a layer with
	 * the base's own missing standard-library bytecode.  The spec's when
	 * the target does not say. */
	int bytecode, base_bytecode;
};

struct eb_spec {
	char *path; /* as given */
	char *dir;  /* directory of path, "." when none */
	/* The bytes the spec was parsed from: the lock's checksum hashes these,
	 * not a second read of the file, so what is built is what is locked. */
	char *text;
	size_t text_len;
	int version;
	struct eb_spec_str name;
	struct eb_spec_str repository; /* s NULL when unset */
	struct eb_spec_str cache; /* the shared build cache repository; s NULL when unset */
	/* read from / written to instead of `cache` (envspec/spec_cache.c) */
	struct eb_spec_str cache_from, cache_to;
	struct eb_spec_strlist platforms;
	struct eb_spec_str python;
	struct eb_spec_str index;
	struct eb_spec_strlist extra_indexes;
	struct eb_spec_kvlist package_indexes;
	int large_package_mb; /* a wheel this large gets a layer of its own (default 16) */
	int bytecode, base_bytecode; /* the targets' defaults (see eb_spec_target) */
	struct eb_spec_apt_sources apt_sources;
	/* ${VAR} names requirements files may use (the runner must allow them
	 * too: ENVBUILD_REQUIREMENTS_ENV); _names: the same strings, a NULL-
	 * terminated array for eb_reqfile_load_in (borrowed from the list) */
	struct eb_spec_strlist requirements_env;
	const char **requirements_env_names;
	struct eb_spec_accounts accounts; /* spec-wide; already added to each target's */
	struct eb_spec_target *targets; /* in file order */
	size_t ntargets;
};

/* Read and validate the spec at `path`.  Returns <0 with *err only when
 * the file cannot be read.  Otherwise returns 0; findings go to diags and
 * *out is the spec, or NULL when it could not be parsed at all (syntax
 * error, reported as EB001).  A spec with error findings must not be built. */
int eb_spec_load(struct eb_spec **out, const char *path, struct eb_diag_list *diags,
		 struct eb_error **err);
/* The same from a buffer (for tests and fuzzing); `path` names it. */
int eb_spec_load_buffer(struct eb_spec **out, const char *path, const char *text, size_t len,
			struct eb_diag_list *diags, struct eb_error **err);
const struct eb_spec_target *eb_spec_target(const struct eb_spec *spec, const char *name);
void eb_spec_free(struct eb_spec *spec);

/* A `base` of the form "oci:DIR[:REF]" names a local OCI image layout (DIR
 * relative to the spec directory).  Returns 1 and sets dir and ref (caller
 * frees; ref NULL when absent) when base is one, else 0. */
int eb_spec_oci_base(const char *base, const char *spec_dir, char **dir, char **ref);
/* An index location (`index`, `extra_indexes`, `package_indexes`) that
 * is a path relative to the spec's directory: a directory ("dist",
 * "./wheels") or a relative file: URL ("file:dist", "file://dist",
 * "file:./simple"); returns the path part (in loc), or NULL for a URL or
 * an absolute path (file:///srv/simple, /srv/wheels). */
const char *eb_spec_index_relpath(const char *loc);
/* A path named in the spec (relative to its directory), as the user
 * should see it and open it: "requirements.txt" for a spec in ".",
 * "proj/requirements.txt" for "proj/envbuild.yaml"; caller frees. */
char *eb_spec_resolve(const struct eb_spec *spec, const char *path);
/* Platforms envbuild can build for ("linux/amd64", "linux/arm64", ...). */
int eb_spec_platform_known(const char *platform);
/* Default spec file names looked up in a directory, in order. */
extern const char *const eb_spec_default_names[];

#endif
