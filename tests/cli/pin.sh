#!/bin/sh
# pin.sh - `envbuild pin` end to end on a generated loopback index
# (tests/helpers/make-scenario.py: pure wheels, PEP 658 metadata, one
# project without it, a yanked release, requires-python, platform-only
# wheels), served by make-index.py on 127.0.0.1.
#
# Checks: the pins of a training (amd64 + arm64, python 3.11) and an
# inference (python 3.10) target resolved jointly - backtracking, extras,
# markers per python, yanked, requires-python, a wheel on one platform
# only, one shared version for both targets; hashes equal the wheels'
# sha256; # via annotations; the same bytes on a second run; `envbuild
# check` clean on the output; pip --require-hashes installs it; pip's own
# resolver agrees on a single-platform target; metadata read from PEP 658
# files (a wheel downloaded only where the index has none); minimal
# change and --upgrade-package with the change printed; conflicts
# explained, also a split forced between the targets; -c constraints;
# python and libc read from the base, and `envbuild build` installing
# exactly the pinned files; usage errors.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/index-env.sh"
plan 43

HELPERS=$top_srcdir/tests/helpers

cat >"$TMP/scenario.json" <<'EOF'
{"releases": [
 {"name": "app", "version": "1.0", "deps": ["lib>=1.0", "helper[fast]>=2", "tomli>=1; python_version < \"3.11\"", "armonly; platform_machine == \"aarch64\""]},
 {"name": "armonly", "version": "1.0"},
 {"name": "lib", "version": "1.0"},
 {"name": "lib", "version": "1.1"},
 {"name": "lib", "version": "2.0", "yanked": true},
 {"name": "helper", "version": "2.0", "deps": ["shared>=1,<3", "speedups>=1; extra == \"fast\""]},
 {"name": "helper", "version": "2.1", "deps": ["shared>=3", "speedups>=1; extra == \"fast\""]},
 {"name": "other", "version": "1.0", "deps": ["shared<3"]},
 {"name": "shared", "version": "1.0"},
 {"name": "shared", "version": "2.0"},
 {"name": "shared", "version": "3.0"},
 {"name": "speedups", "version": "1.0"},
 {"name": "tomli", "version": "2.0.1"},
 {"name": "modern", "version": "1.0", "requires_python": ">=3.8"},
 {"name": "modern", "version": "2.0", "requires_python": ">=3.12"},
 {"name": "native", "version": "1.0", "tags": ["py3-none-manylinux_2_17_x86_64", "py3-none-manylinux_2_17_aarch64"]},
 {"name": "native", "version": "2.0", "tags": ["py3-none-manylinux_2_17_x86_64"]},
 {"name": "nometa", "version": "1.0", "no_metadata": true},
 {"name": "muslonly", "version": "0.9"},
 {"name": "muslonly", "version": "1.0", "tags": ["py3-none-musllinux_1_2_x86_64"]}
]}
EOF
run python3 "$HELPERS/make-scenario.py" index "$TMP/scenario.json" "$TMP/simple"
expect_status 0 "make-scenario: index with PEP 658 metadata, a yanked file, one project without metadata"

index_serve "$TMP/simple" && ok "index server on 127.0.0.1:$INDEX_PORT" ||
	{ not_ok "index server did not start"; diag <"$TMP/index.err"; finish; }

# spec DIR TRAIN_IN INFER_IN: a project with two targets
spec() {
	mkdir -p "$1"
	cat >"$1/envbuild.yaml" <<EOF
version: 1
name: pintest
python: "3.11"
index: $INDEX
targets:
  training:
    base: python:3.11-slim-bookworm
    platforms: [linux/amd64, linux/arm64]
    libc: "glibc 2.36"
    requirements_in: [requirements-train.in]
    requirements: [requirements-train.txt]
  inference:
    base: python:3.10-slim-bookworm
    python: "3.10"
    libc: "glibc 2.36"
    requirements_in: [requirements-infer.in]
    requirements: [requirements-infer.txt]
EOF
	printf "%b" "$2" >"$1/requirements-train.in"
	printf "%b" "$3" >"$1/requirements-infer.in"
}
pins() { grep -E '^[a-z]' "$1" | sed 's/ .*//' | tr '\n' ' '; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

P=$TMP/p
spec "$P" 'app\nother\nnative\nnometa\nmodern\n' 'lib\nshared\napp\n'
cd "$P" || exit 1
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_status 0 "pin writes both targets"
expect_out_contains "  + helper 2.0" "the changes are printed"

got=$(pins requirements-train.txt)
want="app==1.0 armonly==1.0 helper[fast]==2.0 lib==1.1 modern==1.0 native==1.0 nometa==1.0 other==1.0 shared==2.0 speedups==1.0 "
[ "$got" = "$want" ] && ok "training: backtracked helper, extras, no yanked lib 2.0, modern for 3.11, native on both platforms" ||
	{ not_ok "training pins: got '$got'"; diag <requirements-train.txt; }
got=$(pins requirements-infer.txt)
want="app==1.0 helper[fast]==2.0 lib==1.1 shared==2.0 speedups==1.0 tomli==2.0.1 "
[ "$got" = "$want" ] && ok "inference: tomli for 3.10 only, helper and shared shared with training" ||
	{ not_ok "inference pins: got '$got'"; diag <requirements-infer.txt; }

N1=$(sha "$TMP/simple/native/native-1.0-py3-none-manylinux_2_17_aarch64.whl")
N2=$(sha "$TMP/simple/native/native-1.0-py3-none-manylinux_2_17_x86_64.whl")
if grep -A2 '^native==1.0' requirements-train.txt | grep -q "sha256:$N1" &&
	grep -A2 '^native==1.0' requirements-train.txt | grep -q "sha256:$N2"; then
	ok "native: the hash of the wheel of each platform"
else
	not_ok "native hashes"; diag <requirements-train.txt
fi
S=$(sha "$TMP/simple/shared/shared-2.0-py3-none-any.whl")
if grep -q "^shared==2.0 \\\\$" requirements-train.txt && grep -q "^    --hash=sha256:$S$" requirements-train.txt; then
	ok "shared: name==version with its sha256"
else
	not_ok "shared hash line"; diag <requirements-train.txt
fi
if grep -A4 '^shared==' requirements-train.txt | grep -q '^    #   helper$' &&
	grep -A4 '^shared==' requirements-train.txt | grep -q '^    #   other$' &&
	grep -A2 '^app==' requirements-train.txt | tail -1 | grep -q '# via -r requirements-train.in'; then
	ok "# via annotations name the dependents and the input file"
else
	not_ok "via annotations"; diag <requirements-train.txt
fi
grep -q '^armonly==1.0 ; platform_machine == "aarch64" \\$' requirements-train.txt &&
	ok "a package only one platform needs carries that platform's marker" ||
	{ not_ok "armonly marker"; diag <requirements-train.txt; }
grep -q '^#    envbuild pin$' requirements-train.txt &&
	ok "the header says how to regenerate" || not_ok "header"

cp requirements-train.txt "$TMP/train.1"
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_out_contains "requirements-train.txt is up to date" "a second run changes nothing"
cmp -s requirements-train.txt "$TMP/train.1" && ok "same bytes" || not_ok "bytes changed"

# Only nometa's wheel is downloaded; the rest comes from .metadata files.
if grep '"path"' "$TMP/index.log" | grep '\.whl"' | grep -v '\.metadata' >"$TMP/whl.log" &&
	[ "$(grep -c . "$TMP/whl.log")" -eq 1 ] && grep -q nometa "$TMP/whl.log"; then
	ok "metadata from PEP 658 files; a wheel read only where the index has none"
else
	not_ok "wheel downloads"; diag <"$TMP/whl.log"
fi

run "$ENVBUILD" check
expect_status 0 "envbuild check accepts the pins"

# -- pip installs them, and agrees ---------------------------------------
if python3 -m pip --version >/dev/null 2>&1; then
	for t in "requirements-train.txt 3.11 manylinux_2_17_x86_64" \
		"requirements-train.txt 3.11 manylinux_2_17_aarch64" \
		"requirements-infer.txt 3.10 manylinux_2_17_x86_64"; do
		set -- $t
		run python3 -m pip install --dry-run --ignore-installed --quiet --require-hashes --no-deps \
			--only-binary=:all: --python-version "$2" --platform "$3" --target "$TMP/tgt" \
			--index-url "$INDEX" -r "$1"
		expect_status 0 "pip --require-hashes installs $1 for $2 $3"
	done
	A=$TMP/agree
	mkdir -p "$A"
	cat >"$A/envbuild.yaml" <<EOF
version: 1
name: agree
python: "3.11"
index: $INDEX
targets:
  app:
    base: python:3.11-slim-bookworm
    libc: "glibc 2.36"
    requirements_in: [requirements.in]
    requirements: [requirements.txt]
EOF
	printf 'app\nother\nnative\nnometa\nmodern\nlib\n' >"$A/requirements.in"
	run "$ENVBUILD" pin --spec "$A/envbuild.yaml" --cache-dir "$TMP/cache"
	expect_status 0 "pin a single-platform target"
	run python3 -m pip install --dry-run --ignore-installed --quiet --report "$TMP/report.json" \
		--only-binary=:all: --python-version 3.11 --platform manylinux_2_17_x86_64 \
		--target "$TMP/tgt" --index-url "$INDEX" -r "$A/requirements.in"
	expect_status 0 "pip resolves the same inputs"
	theirs=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(i["metadata"]["name"].lower() + "==" + i["metadata"]["version"] for i in r["install"])))' "$TMP/report.json")
	ours=$(grep -E '^[a-z]' "$A/requirements.txt" | sed 's/ .*//; s/\[[^]]*\]//' | tr '\n' ' ' | sed 's/ $//')
	[ "$ours" = "$theirs" ] && ok "pip's resolver agrees: $ours" ||
		{ not_ok "pip disagrees"; echo "ours:   $ours" | diag; echo "theirs: $theirs" | diag; }
else
	for i in 1 2 3 4 5 6; do ok "# SKIP python3 -m pip not available"; done
fi

# -- minimal change -------------------------------------------------------
python3 - "$TMP/scenario.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["releases"].append({"name": "lib", "version": "1.2"})
json.dump(s, open(sys.argv[1], "w"))
EOF
run python3 "$HELPERS/make-scenario.py" index "$TMP/scenario.json" "$TMP/simple"
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_out_contains "requirements-train.txt is up to date" "a new lib release does not move the pin"
# speedups 1.0 rebuilt (new metadata, same version): a hash replaced is a
# change, never "(annotations only)"
python3 - "$TMP/scenario.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
for r in s["releases"]:
    if r["name"] == "speedups":
        r["requires_python"] = ">=3.6"
json.dump(s, open(sys.argv[1], "w"))
EOF
rm -rf "$TMP/simple/speedups"
run python3 "$HELPERS/make-scenario.py" index "$TMP/scenario.json" "$TMP/simple"
run "$ENVBUILD" pin --dry-run --cache-dir "$TMP/cache"
expect_out_contains "  speedups 1.0: hashes +1 -1 (the index's files changed)" "a rebuilt wheel: its hash change is printed"
grep -q "annotations only" "$TMP/out" && { not_ok "a hash change said to be annotations only"; diag <"$TMP/out"; } ||
	ok "... and never as '(annotations only)'"
run "$ENVBUILD" pin --dry-run --upgrade-package lib --cache-dir "$TMP/cache"
expect_out_contains "  lib 1.1 → 1.2" "--upgrade-package prints the change"
cmp -s requirements-train.txt "$TMP/train.1" && ok "--dry-run writes nothing" || not_ok "--dry-run wrote"
run "$ENVBUILD" pin --upgrade-package lib==1.0 --cache-dir "$TMP/cache"
grep -q '^lib==1.0 ' requirements-train.txt && grep -q '^lib==1.0 ' requirements-infer.txt &&
	ok "--upgrade-package lib==1.0 moves lib in both targets" || not_ok "lib==1.0 not pinned"
run "$ENVBUILD" pin --upgrade --cache-dir "$TMP/cache"
grep -q '^lib==1.2 ' requirements-train.txt && ok "--upgrade takes the newest" || not_ok "--upgrade"

# -- conflicts ------------------------------------------------------------
C=$TMP/c
spec "$C" 'other\nshared==3.0\n' 'lib\n'
cd "$C" || exit 1
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_status 1 "an unsatisfiable set fails"
expect_err_contains "other (training linux/amd64) depends on shared<3 (training linux/amd64)" "the explanation names the dependency"
expect_err_contains "because requirements-train.in requires shared==3.0 (training linux/amd64), the requirements are unsatisfiable." "and the requirement it conflicts with"
expect_err_contains "no solution: the requirements conflict" "and the error says so"
[ ! -e requirements-train.txt ] && ok "nothing is written" || not_ok "a file was written"

# A -c constraint file limits what is needed, installs nothing itself.
K=$TMP/k
spec "$K" '-c constraints.txt\nother\n' 'lib\n'
printf 'shared<2\nspeedups==1.0\n' >"$K/constraints.txt"
cd "$K" || exit 1
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
got=$(pins requirements-train.txt)
[ "$STATUS" -eq 0 ] && [ "$got" = "other==1.0 shared==1.0 " ] && ok "-c constraints limit versions and add nothing" ||
	{ not_ok "constraints: exit $STATUS, pins '$got'"; diag <"$TMP/err"; }

# musllinux wheels fit a musl target only.
for lc in "musl 1.2" "glibc 2.36"; do
	U=$TMP/u-${lc%% *}
	mkdir -p "$U"
	cat >"$U/envbuild.yaml" <<EOF
version: 1
name: musl
python: "3.11"
index: $INDEX
targets:
  app:
    base: scratch
    libc: "$lc"
    requirements_in: [r.in]
    requirements: [r.txt]
EOF
	printf 'muslonly\n' >"$U/r.in"
	run "$ENVBUILD" pin --spec "$U/envbuild.yaml" --cache-dir "$TMP/cache"
done
grep -q '^muslonly==1.0 ' "$TMP/u-musl/r.txt" && grep -q '^muslonly==0.9 ' "$TMP/u-glibc/r.txt" &&
	ok "a musllinux-only release for musl 1.2, the pure one for glibc" ||
	{ not_ok "musl/glibc choice"; cat "$TMP/u-musl/r.txt" "$TMP/u-glibc/r.txt" | diag; }

# One pin set for every platform of a target, or the platform that fails.
M=$TMP/m
spec "$M" 'native==2.0\n' 'lib\n'
cd "$M" || exit 1
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_err_contains "native==2.0 (training linux/arm64) has no wheel for cp311 manylinux_2_36_aarch64" "a pin without a wheel for one platform names the platform"

S2=$TMP/split
spec "$S2" 'other\n' 'shared==3.0\n'
cd "$S2" || exit 1
run "$ENVBUILD" pin --cache-dir "$TMP/cache"
expect_status 1 "a version the targets cannot share fails"
expect_err_contains "requirements-infer.in requires shared==3.0 (inference)" "the explanation names the requirement that forces the split"

run "$ENVBUILD" pin --target nosuch
expect_status 2 "an unknown --target is a usage error"
# The target's python and libc come from its base when the spec does not
# say (the Debian test base of python.sh: python 3.11, glibc 2.36).
D=$TMP/d
mkdir -p "$D"
BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
cat >"$D/envbuild.yaml" <<EOF
version: 1
name: detect
index: $INDEX
targets:
  app:
    base: scratch
    requirements_in: [r.in]
    requirements: [r.txt]
EOF
printf 'app\n' >"$D/r.in"
run "$ENVBUILD" pin --spec "$D/envbuild.yaml" --cache-dir "$TMP/cache"
expect_status 1 "a scratch target without a python version cannot be pinned"
if [ -f "$BASE/.complete" ]; then
	sed -i "s|base: scratch|base: oci:$BASE:bookworm-python3|" "$D/envbuild.yaml"
	run "$ENVBUILD" pin --spec "$D/envbuild.yaml" --cache-dir "$TMP/cache"
	grep -q '^# (python 3.11, glibc 2.36, linux/amd64) from:$' "$D/r.txt" &&
		grep -q '^shared==3.0 ' "$D/r.txt" &&
		ok "python and libc read from the base image" ||
		{ not_ok "detection: exit $STATUS"; diag <"$TMP/err"; }
	# ... and `envbuild build` installs exactly those files.
	mkdir -p "$TMP/img"
	run "$ENVBUILD" build --spec "$D/envbuild.yaml" --cache-dir "$TMP/cache" --output "$TMP/img"
	expect_status 0 "envbuild build installs the pins"
	python3 - "$D/r.txt" "$D/envbuild.lock" >"$TMP/cmp" 2>&1 <<'EOF'
import json, re, sys
pins = {}
for line in open(sys.argv[1]):
    m = re.match(r"^([a-z0-9_.-]+)(\[[^\]]*\])?==(\S+)", line)
    if m:
        cur = m.group(1)
        pins[cur] = set()
    m = re.search(r"--hash=sha256:([0-9a-f]{64})", line)
    if m:
        pins[cur].add(m.group(1))
lock = json.load(open(sys.argv[2]))
built = {p["name"]: p["sha256"].split(":")[-1]
         for p in lock["targets"]["app"]["packages"]["linux/amd64"]}
assert set(built) == set(pins), (sorted(built), sorted(pins))
for n, h in built.items():
    assert h in pins[n], (n, h, pins[n])
print("ok")
EOF
	grep -qx ok "$TMP/cmp" && ok "the image has exactly the pinned files (by sha256)" ||
		{ not_ok "built files differ from the pins"; diag <"$TMP/cmp"; }
else
	for i in 1 2 3; do ok "# SKIP no test base at $BASE (scripts/make-base)"; done
fi

finish
