#!/bin/sh
# sdist.sh - source distributions end to end on a loopback index of real
# sdists made by tests/helpers/make-sdists.py (setuptools projects; the
# index also serves Debian's setuptools and wheel wheels).
#
# Checks: `envbuild pin` of an sdist-only pin says "only an sdist" and
# names the index's files (not "the requirements conflict"); a version
# with a wheel next to an sdist-only one is chosen; `check` of
# build_requirements; local wheel files are refused by check and build
# alike (never accepted by one and failed by the other).
. "$(dirname "$0")/lib.sh"
plan 14

HELPERS=$top_srcdir/tests/helpers
SRV=""
trap 'for p in $SRV; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

python3 "$HELPERS/make-sdists.py" "$TMP/dists" >/dev/null &&
	python3 "$HELPERS/make-wheels.py" "$TMP/wheels" --no-cext >/dev/null &&
	run python3 "$HELPERS/make-index.py" build "$TMP/simple" "$TMP/dists" "$TMP/wheels"
expect_status 0 "an index of real sdists and wheels"

python3 "$HELPERS/make-index.py" serve "$TMP/simple" --max-seconds 600 >"$TMP/port" 2>"$TMP/serve.err" &
SRV=$!
_i=0
while [ ! -s "$TMP/port" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
PORT=$(cat "$TMP/port")
INDEX=http://127.0.0.1:$PORT/simple/

# project DIR: a one-target spec pinning from requirements.in
project() {
	mkdir -p "$1"
	cat >"$1/envbuild.yaml" <<EOF
version: 1
name: sdisttest
python: "3.11"
index: $INDEX
targets:
  app:
    base: python:3.11-slim-bookworm
    libc: "glibc 2.36"
    requirements_in: [requirements.in]
    requirements: [requirements.txt]
EOF
}

project "$TMP/p1"
echo "barsdist==1.0.0" >"$TMP/p1/requirements.in"
(cd "$TMP/p1" && "$ENVBUILD" pin >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/st")
STATUS=$(cat "$TMP/st")
expect_status 1 "pin of an sdist-only version fails"
expect_err_contains "no solution: barsdist==1.0.0 is only an sdist (the index has: barsdist-1.0.0.tar.gz)" \
	"the error says 'only an sdist' and names the index's file"
if grep -q "the requirements conflict" "$TMP/err"; then
	not_ok "the error does not say the requirements conflict"; diag <"$TMP/err"
else ok "the error does not say the requirements conflict"; fi
[ ! -e "$TMP/p1/requirements.txt" ] && ok "nothing written" || not_ok "requirements.txt written"

# an unpinned requirement takes the version with a wheel (tinydep has wheels only;
# barsdist's sdist must not hide them)
project "$TMP/p2"
printf 'tinydep>=1.0\n' >"$TMP/p2/requirements.in"
(cd "$TMP/p2" && "$ENVBUILD" pin >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/st")
STATUS=$(cat "$TMP/st")
expect_status 0 "pin of a wheel-only project next to sdists"

# ---- local wheel files of the project: check and build agree ---------------
need_base
# layer_files LAYOUT: every path in the layers of the image of LAYOUT
layer_files() {
	python3 - "$1" <<'PY'
import json, sys, tarfile
d = sys.argv[1]
m = json.load(open(f"{d}/index.json"))["manifests"][0]["digest"].split(":")[1]
for l in json.load(open(f"{d}/blobs/sha256/{m}"))["layers"][1:]:
    with tarfile.open(f"{d}/blobs/sha256/{l['digest'].split(':')[1]}") as t:
        for n in t.getnames():
            print(n)
PY
}
L=$TMP/local
mkdir -p "$L/dist"
cp "$TMP/wheels/tinydep-1.2.0-py3-none-any.whl" "$TMP/wheels/tinyextra-2.0.0-py3-none-any.whl" "$L/dist/"
H=$(sha256sum "$L/dist/tinydep-1.2.0-py3-none-any.whl" | cut -c1-64)
HX=$(sha256sum "$L/dist/tinyextra-2.0.0-py3-none-any.whl" | cut -c1-64)
echo "./dist/tinydep-1.2.0-py3-none-any.whl --hash=sha256:$H" >"$L/requirements.txt"
cat >"$L/envbuild.yaml" <<EOF
version: 1
name: localwheel
python: "3.11"
targets:
  app:
    base: oci:$BASE:bookworm-python3
    requirements: [requirements.txt]
    packages: ["tinyextra @ file:dist/tinyextra-2.0.0-py3-none-any.whl#sha256=$HX"]
EOF
run "$ENVBUILD" -C "$L" check
expect_status 0 "check accepts hashed local wheels of the project"
run "$ENVBUILD" -C "$L" build --cache-dir "$TMP/cache"
expect_status 0 "build installs them (no index needed)"
if layer_files "$L/out/app" | grep -q "packages/tinydep-1.2.0.dist-info/RECORD" &&
	layer_files "$L/out/app" | grep -q "tinyextra-2.0.0.dist-info/RECORD"; then
	ok "both wheels are in the image"
else not_ok "the local wheels are not in the image"; layer_files "$L/out/app" | diag; fi
if grep -q '"url": "dist/tinydep-1.2.0-py3-none-any.whl"' "$L/envbuild.lock"; then
	ok "the lock records the wheel by its path in the project"
else not_ok "lock url"; diag <"$L/envbuild.lock"; fi

# missing, symlinked out, absolute outside: refused by check, and by build
ln -s /etc/passwd "$L/dist/evil-1.0-py3-none-any.whl"
{
	echo "./dist/missing-1.0-py3-none-any.whl --hash=sha256:$H"
	echo "evil @ file:dist/evil-1.0-py3-none-any.whl#sha256=$H"
	echo "/etc/outside-1.0-py3-none-any.whl --hash=sha256:$H"
} >>"$L/requirements.txt"
run "$ENVBUILD" -C "$L" check
if [ "$STATUS" -eq 1 ] && grep -q "requirements.txt:2:1: error: local wheel './dist/missing-1.0-py3-none-any.whl' does not exist \[EB250\]" "$TMP/out" &&
	grep -q "requirements.txt:3:8: error: .*is a symlink.*\[EB251\]" "$TMP/out" &&
	grep -q "requirements.txt:4:1: error: local wheel '/etc/outside-1.0-py3-none-any.whl' is not inside the project directory \[EB251\]" "$TMP/out"; then
	ok "check refuses a missing, a symlinked and an outside wheel (EB250, EB251)"
else not_ok "check findings"; cat "$TMP/out" "$TMP/err" | diag; fi
run "$ENVBUILD" -C "$L" build --cache-dir "$TMP/cache"
if [ "$STATUS" -eq 1 ] && grep -q "EB250" "$TMP/out" "$TMP/err"; then
	ok "build refuses them too, before building anything"
else not_ok "build: exit $STATUS"; cat "$TMP/out" "$TMP/err" | diag; fi
# a wheel whose bytes differ from the pin: refused at build with both digests
sed -i '2,4d' "$L/requirements.txt"
sed -i "s/sha256:$H/sha256:$HX/" "$L/requirements.txt"
run "$ENVBUILD" -C "$L" build --cache-dir "$TMP/cache2"
if [ "$STATUS" -ne 0 ] && grep -q "expected 'sha256:$HX', got 'sha256:$H'" "$TMP/err"; then
	ok "a local wheel with other bytes than its hash is refused, naming both"
else not_ok "hash mismatch: exit $STATUS"; cat "$TMP/err" | diag; fi
if find "$TMP/cache2" -name "$H" | grep -q .; then not_ok "the mismatching wheel was stored"
else ok "the mismatching wheel is not cached"; fi

finish
