#!/bin/sh
# pin_pyproject.sh - `envbuild pin` with a pyproject.toml as the loose
# input (requirements_in: [pyproject.toml]): [project].dependencies, the
# target's extras: (a self-reference `proj[a]` in an extra brings in that
# extra) and PEP 735 groups: with include-group, against a generated
# loopback index (tests/helpers/make-scenario.py, make-index.py).
#
# Checks: the pins are exactly the closure of those tables and nothing of
# the tables not asked for; the header names the extras and groups; pip's
# resolver agrees on the same strings (read from the file with tomllib);
# pip --require-hashes installs the output; `envbuild check` is clean;
# errors: a bad requirement string at pyproject.toml:LINE:COL, an unknown
# group or extra, an include-group cycle, extras: without a pyproject.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/index-env.sh"
plan 18

HELPERS=$top_srcdir/tests/helpers

cat >"$TMP/scenario.json" <<'EOF'
{"releases": [
 {"name": "base", "version": "1.0", "deps": ["dep>=1"]},
 {"name": "dep", "version": "1.0"},
 {"name": "dep", "version": "2.0"},
 {"name": "gpulib", "version": "3.0", "deps": ["dep<2"]},
 {"name": "plotting", "version": "0.5"},
 {"name": "pytest", "version": "8.0", "deps": ["pluggy>=1"]},
 {"name": "pluggy", "version": "1.4"},
 {"name": "ruff", "version": "0.3"},
 {"name": "coverage", "version": "7.4"},
 {"name": "unused", "version": "1.0"}
]}
EOF
run python3 "$HELPERS/make-scenario.py" index "$TMP/scenario.json" "$TMP/simple"
expect_status 0 "make-scenario: the index"
index_serve "$TMP/simple" && ok "index server on 127.0.0.1:$INDEX_PORT" ||
	{ not_ok "index server did not start"; diag <"$TMP/index.err"; finish; }

# spec DIR EXTRAS GROUPS: a target pinned from pyproject.toml
spec() {
	mkdir -p "$1"
	cat >"$1/envbuild.yaml" <<EOF
version: 1
name: pyp
python: "3.11"
index: $INDEX
targets:
  app:
    base: python:3.11-slim-bookworm
    libc: "glibc 2.36"
    requirements_in: [pyproject.toml]
    extras: [$2]
    groups: [$3]
    requirements: [requirements.txt]
EOF
}
pins() { grep -E '^[a-z]' "$1" | sed 's/ .*//' | tr '\n' ' '; }

P=$TMP/p
spec "$P" gpu dev
cat >"$P/pyproject.toml" <<'EOF'
[project]
name = "My_App"
version = "1.0"
dependencies = [
    "base",
]

[project.optional-dependencies]
gpu = ["my-app[plots]", "gpulib"]
plots = ["plotting"]
never = ["unused"]

[dependency-groups]
test = ["pytest>=8", "coverage"]
lint = ["ruff"]
dev = [{include-group = "test"}, {include-group = "lint"}, "pytest"]
other = ["unused"]
EOF
cd "$P" || exit 1
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_status 0 "pin from pyproject.toml"
got=$(pins requirements.txt)
want="base==1.0 coverage==7.4 dep==1.0 gpulib==3.0 plotting==0.5 pluggy==1.4 pytest==8.0 ruff==0.3 "
[ "$got" = "$want" ] && ok "dependencies, extra gpu (and plots through my-app[plots]), group dev (test and lint included); not 'never' nor 'other'" ||
	{ not_ok "pins: got '$got'"; diag <requirements.txt; }
grep -q '^#    extra: gpu$' requirements.txt && grep -q '^#    group: dev$' requirements.txt &&
	ok "the header names the extras and groups" || { not_ok "header"; diag <requirements.txt; }
grep -A5 '^dep==' requirements.txt | grep -q '#   gpulib' && ok "# via annotations" ||
	{ not_ok "via of dep"; diag <requirements.txt; }
run "$ENVBUILD" check
expect_status 0 "envbuild check accepts the pins"
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_out_contains "is up to date" "a second run changes nothing"

if python3 -m pip --version >/dev/null 2>&1 && python3 -c 'import tomllib' 2>/dev/null; then
	# the same strings, read by Python's own TOML reader (pip 23 has no --group)
	python3 - pyproject.toml >"$TMP/flat.in" <<'EOF'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
out = list(d["project"]["dependencies"])
opt = d["project"]["optional-dependencies"]
out += ["gpulib"] + opt["plots"]
def group(g):
    for x in d["dependency-groups"][g]:
        if isinstance(x, dict):
            group(x["include-group"])
        else:
            out.append(x)
group("dev")
print("\n".join(out))
EOF
	run python3 -m pip install --dry-run --ignore-installed --quiet --report "$TMP/report.json" \
		--only-binary=:all: --python-version 3.11 --platform manylinux_2_17_x86_64 \
		--target "$TMP/tgt" --index-url "$INDEX" -r "$TMP/flat.in"
	expect_status 0 "pip resolves the same requirements"
	theirs=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(i["metadata"]["name"].lower() + "==" + i["metadata"]["version"] for i in r["install"])))' "$TMP/report.json")
	ours=$(pins requirements.txt | sed 's/ $//')
	[ "$ours" = "$theirs" ] && ok "pip's resolver agrees: $ours" ||
		{ not_ok "pip disagrees"; echo "ours:   $ours" | diag; echo "theirs: $theirs" | diag; }
	run python3 -m pip install --dry-run --ignore-installed --quiet --require-hashes --no-deps \
		--only-binary=:all: --python-version 3.11 --platform manylinux_2_17_x86_64 \
		--target "$TMP/tgt" --index-url "$INDEX" -r requirements.txt
	expect_status 0 "pip --require-hashes installs the output"
else
	for i in 1 2 3; do ok "# SKIP python3 -m pip or tomllib not available"; done
fi

# -- errors ---------------------------------------------------------------
cp pyproject.toml "$TMP/good.toml"
sed -i 's/^    "base",$/    "base >>= 1",/' pyproject.toml
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_status 1 "a bad requirement string fails"
case "$ERR" in
*"pyproject.toml:5:"*"invalid requirement in [project].dependencies"*) ok "it is named at pyproject.toml:5:COL" ;;
*) not_ok "bad requirement position"; echo "$ERR" | diag ;;
esac

cp "$TMP/good.toml" pyproject.toml
spec "$P" gpu nosuch
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_status 1 "an unknown group fails"
expect_err_contains "has no dependency group 'nosuch'" "the group is named"

spec "$P" nosuch dev
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_err_contains "has no extra 'nosuch'" "an unknown extra is named"

spec "$P" gpu dev
sed -i 's/^lint = \["ruff"\]$/lint = ["ruff", {include-group = "dev"}]/' pyproject.toml
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
case "$STATUS:$ERR" in
1:*"pyproject.toml:15:"*"dependency group 'dev' includes itself"*) ok "an include-group cycle is an error at its include" ;;
*) not_ok "cycle: exit $STATUS"; echo "$ERR" | diag ;;
esac

cp "$TMP/good.toml" pyproject.toml
sed -i 's/requirements_in: \[pyproject.toml\]/requirements_in: [requirements.in]/' envbuild.yaml
echo base >requirements.in
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
case "$STATUS:$ERR" in
1:*"envbuild.yaml:10:"*"names extras but no pyproject.toml"*) ok "extras: without a pyproject.toml input is an error at the key" ;;
*) not_ok "extras without pyproject: exit $STATUS"; echo "$ERR" | diag ;;
esac
finish
