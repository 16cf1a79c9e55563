#!/bin/sh
# sdist.sh - source distributions end to end on a loopback index of real
# sdists made by tests/helpers/make-sdists.py (setuptools projects; the
# index also serves Debian's setuptools and wheel wheels).
#
# Checks: `envbuild pin` of an sdist-only pin whose dependencies need a
# build says "only an sdist", names the index's files and why (not "the
# requirements conflict"; pinning sdists: sdist_pin.sh); a version
# with a wheel next to an sdist-only one is chosen; `check` of
# build_requirements; local wheel files are refused by check and build
# alike (never accepted by one and failed by the other).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/index-env.sh"
plan 46

HELPERS=$top_srcdir/tests/helpers
SRV=""
trap 'for p in $SRV; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# a network canary on the host's loopback: a build must never reach it
python3 - "$TMP/canary.port" "$TMP/canary.log" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(1)
end = time.time() + 900
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    open(sys.argv[2], "a").write("reached\n")
    c.close()
PY
SRV="$SRV $!"
_i=0
while [ ! -s "$TMP/canary.port" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
CANARY=$(cat "$TMP/canary.port")
EB_CANARY_PORT=$CANARY python3 "$HELPERS/make-sdists.py" "$TMP/dists" >/dev/null &&
	python3 "$HELPERS/make-wheels.py" "$TMP/wheels" --no-cext >/dev/null &&
	run python3 "$HELPERS/make-index.py" build "$TMP/simple" "$TMP/dists" "$TMP/wheels"
expect_status 0 "an index of real sdists and wheels"

index_serve "$TMP/simple" || { not_ok "index server did not start"; diag <"$TMP/index.err"; finish; }

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
echo "dynsdist==1.0.0" >"$TMP/p1/requirements.in"
(cd "$TMP/p1" && "$ENVBUILD" pin >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/st")
STATUS=$(cat "$TMP/st")
expect_status 1 "pin of an sdist-only version whose dependencies need a build fails"
expect_err_contains "no solution: dynsdist==1.0.0 is only an sdist (the index has: dynsdist-1.0.0.tar.gz) whose dependencies need a build" \
	"an sdist whose dependencies are dynamic: the error says 'only an sdist', names the index's file and that its dependencies need a build"
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

# ---- sdist builds -------------------------------------------------------------
SETUPTOOLS=$(ls /usr/share/python-wheels/setuptools-*.whl | head -1)
WHEEL=$(ls /usr/share/python-wheels/wheel-*.whl | head -1)
hashpin() { # NAME WHEEL: NAME==VERSION --hash=sha256:... of a wheel file
	v=$(basename "$2" | cut -d- -f2)
	echo "$1==$v --hash=sha256:$(sha256sum "$2" | cut -c1-64)"
}
BR_SETUPTOOLS=$(hashpin setuptools "$SETUPTOOLS")
BR_WHEEL=$(hashpin wheel "$WHEEL")
# sproj DIR NAME [BUILDREQ...]: a target pinning sdist NAME-1.0.0 by its hash
sproj() {
	d=$1 n=$2
	shift 2
	mkdir -p "$d"
	echo "$n==1.0.0 --hash=sha256:$(sha256sum "$TMP/dists/$n-1.0.0.tar.gz" | cut -c1-64)" >"$d/requirements.txt"
	{
		echo "version: 1"
		echo "name: sdistbuild"
		echo "python: \"3.11\""
		echo "index: $INDEX"
		echo "targets:"
		echo "  app:"
		echo "    base: oci:$BASE:bookworm-python3"
		echo "    requirements: [requirements.txt]"
		echo "    build_requirements:"
		for b in "$@"; do echo "      - \"$b\""; done
	} >"$d/envbuild.yaml"
}
digest_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["digest"])' "$1"; }

S=$TMP/s1
sproj "$S" barsdist "$BR_SETUPTOOLS" "$BR_WHEEL"
run "$ENVBUILD" -C "$S" check
expect_status 0 "check accepts an sdist pin with pinned, hashed build_requirements"
run "$ENVBUILD" -C "$S" build --cache-dir "$TMP/sc1" --format=json
expect_status 0 "build of an sdist-only pin"
cp "$TMP/out" "$TMP/s1.json"
D1=$(digest_of "$TMP/s1.json")
SDSHA=$(sha256sum "$TMP/dists/barsdist-1.0.0.tar.gz" | cut -c1-64)
python3 - "$S/envbuild.lock" "$SDSHA" >"$TMP/lockcheck" 2>&1 <<'PY'
import json, sys
lock = json.load(open(sys.argv[1]))
p = lock["targets"]["app"]["packages"]["linux/amd64"][0]
assert p["name"] == "barsdist" and p["version"] == "1.0.0", p
assert p["filename"] == "barsdist-1.0.0-py3-none-any.whl", p
assert len(p["sha256"]) == 64, p
sd = p["sdist"]
assert sd["filename"] == "barsdist-1.0.0.tar.gz" and sd["sha256"] == sys.argv[2], sd
assert sd["size"] > 0 and sd["url"].endswith("/barsdist-1.0.0.tar.gz"), sd
PY
[ $? -eq 0 ] && ok "the lock records the sdist (url, sha256, size) and the built wheel (file name, sha256)" ||
	{ not_ok "lock entry"; diag <"$TMP/lockcheck"; }
WSHA=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"]["app"]["packages"]["linux/amd64"][0]["sha256"])' "$S/envbuild.lock")

# the image: imports, console script, metadata; and nothing of the build env
unpack_rootfs "$S/out/app:app" "$TMP/s1b" >/dev/null 2>&1
RF=$TMP/s1b/rootfs
run chroot "$RF" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin /bin/sh -c \
	'cd / && python3 -c "import barsdist, importlib.metadata as m; print(barsdist.ANSWER, m.version(\"barsdist\"))" && barsdist'
if [ "$STATUS" -eq 0 ] && [ "$OUT" = "42 1.0.0
barsdist ok" ]; then ok "the built package imports in the image, its console script and metadata work"
else not_ok "in the image: exit $STATUS, '$OUT'"; diag <"$TMP/err"; fi
if layer_files "$S/out/app" | grep -Eq "setuptools|/wheel/|egg-info|\.tar\.gz"; then
	not_ok "the image holds more than the wheel"; layer_files "$S/out/app" | diag
else ok "the image holds the wheel's files only (no build environment, no sdist)"; fi

# reproducible: an empty cache, --frozen, the same wheel and image
run "$ENVBUILD" -C "$S" build --frozen --cache-dir "$TMP/sc2" --format=json
D2=$(digest_of "$TMP/out" 2>/dev/null)
[ "$STATUS" -eq 0 ] && [ "$D1" = "$D2" ] && ok "a second build from an empty cache gives the same image ($D1)" ||
	{ not_ok "rebuild: exit $STATUS, $D1 vs $D2"; diag <"$TMP/err"; }
# warm: no backend runs (the sandbox would need the tree: remove it)
rm -rf "$TMP/sc2/rootfs"
run "$ENVBUILD" -C "$S" build --frozen --cache-dir "$TMP/sc2" --format=json
[ "$STATUS" -eq 0 ] && [ ! -d "$TMP/sc2/rootfs" ] && [ "$(digest_of "$TMP/out")" = "$D1" ] &&
	ok "a warm rebuild takes the wheel from the cache (no tree unpacked, no backend run)" ||
	{ not_ok "warm rebuild: exit $STATUS"; diag <"$TMP/err"; }
run "$ENVBUILD" -C "$S" check --deep --cache-dir "$TMP/sc-deep"
[ "$STATUS" -eq 0 ] && grep -q "is an sdist ('barsdist-1.0.0.tar.gz'): built at build.*\[EB256\]" "$TMP/out" &&
	ok "check --deep accepts the sdist pin build builds, with a note (EB256)" ||
	{ not_ok "check --deep: exit $STATUS"; cat "$TMP/out" "$TMP/err" | diag; }
# a lock whose wheel differs from what the sdist builds: --frozen refuses, naming both
sed "s/$WSHA/0000000000000000000000000000000000000000000000000000000000000000/" "$S/envbuild.lock" >"$TMP/lock.bad"
cp "$S/envbuild.lock" "$TMP/lock.good"
cp "$TMP/lock.bad" "$S/envbuild.lock"
run "$ENVBUILD" -C "$S" build --frozen --cache-dir "$TMP/sc2"
if [ "$STATUS" -ne 0 ] && grep -q "EB253" "$TMP/err" && grep -q "sha256:$WSHA" "$TMP/err" &&
	grep -q "sha256:0000000000000000000000000000000000000000000000000000000000000000" "$TMP/err"; then
	ok "--frozen: a rebuilt wheel other than the locked one is refused with both digests (EB253)"
else not_ok "EB253: exit $STATUS"; diag <"$TMP/err"; fi
cp "$TMP/lock.good" "$S/envbuild.lock"

# build_requirements under check's rules
S=$TMP/s4
sproj "$S" barsdist "setuptools>=60" "https://example.invalid/wheel-0.38.4-py3-none-any.whl#sha256=$SDSHA" "-r missing-build.txt"
run "$ENVBUILD" -C "$S" check
if [ "$STATUS" -eq 1 ] && grep -q "EB202" "$TMP/out" && grep -q "EB252" "$TMP/out" &&
	grep -q "build requirements file 'missing-build.txt' of target 'app' does not exist \[EB012\]" "$TMP/out"; then
	ok "check: build_requirements unpinned (EB202), not a named project (EB252), a missing -r file (EB012)"
else not_ok "check of build_requirements: exit $STATUS"; cat "$TMP/out" "$TMP/err" | diag; fi
printf '%s\n%s\n' "$BR_SETUPTOOLS" "$BR_WHEEL" >"$S/build.txt"
sproj "$S" barsdist "-r build.txt"
run "$ENVBUILD" -C "$S" check
expect_status 0 "check: build_requirements from a -r file"
run "$ENVBUILD" -C "$S" build --cache-dir "$TMP/sc1"
expect_status 0 "build with build_requirements from a -r file (the cached wheel)"

# ---- the project itself ("./"), as pip install . -------------------------------
O=$TMP/own
mkdir -p "$O/src/ownapp"
cat >"$O/pyproject.toml" <<'EOF'
[build-system]
requires = ["setuptools>=40.8.0"]
build-backend = "setuptools.build_meta"

[project]
name = "ownapp"
version = "0.3.0"
requires-python = ">=3.7"

[project.scripts]
ownapp = "ownapp:main"

[project.entry-points."ownapp.plugins"]
hello = "ownapp:main"
EOF
printf 'def main():\n    print("ownapp ok")\n' >"$O/src/ownapp/__init__.py"
printf 'secret\n' >"$O/src/ownapp/notes.log"
printf 'draft\n' >"$O/src/ownapp/draft.py"
printf '[options]\npackage_dir =\n    = src\npackages = find:\n\n[options.packages.find]\nwhere = src\n[options.package_data]\n* = *.log, *.py\n' >"$O/setup.cfg"
printf '*.log\n' >"$O/.gitignore"
printf 'src/ownapp/draft.py\n' >"$O/.envbuildignore"
git -C "$O" init -q
echo "./" >"$O/requirements.txt"
{
	echo "version: 1"
	echo "name: own"
	echo "python: \"3.11\""
	echo "index: $INDEX"
	echo "targets:"
	echo "  app:"
	echo "    base: oci:$BASE:bookworm-python3"
	echo "    requirements: [requirements.txt]"
	echo "    build_requirements: [\"$BR_SETUPTOOLS\", \"$BR_WHEEL\"]"
} >"$O/envbuild.yaml"
run "$ENVBUILD" -C "$O" check
expect_status 0 "check takes './' (the project itself) with a static name and version"
run "$ENVBUILD" -C "$O" build --cache-dir "$TMP/oc1" --format=json
expect_status 0 "build installs the project itself"
OD1=$(digest_of "$TMP/out" 2>/dev/null)
unpack_rootfs "$O/out/app:app" "$TMP/ob" >/dev/null 2>&1
run chroot "$TMP/ob/rootfs" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin /bin/sh -c \
	'cd / && ownapp && python3 -c "import importlib.metadata as m; print(m.version(\"ownapp\"), [e.name for e in m.entry_points(group=\"ownapp.plugins\")])"'
if [ "$STATUS" -eq 0 ] && [ "$OUT" = "ownapp ok
0.3.0 ['hello']" ]; then ok "its console script, entry points and importlib.metadata work in the image"
else not_ok "own project in the image: exit $STATUS, '$OUT'"; diag <"$TMP/err"; fi
if layer_files "$O/out/app" | grep -Eq "notes.log|draft.py"; then
	not_ok "git-ignored or .envbuildignore'd files were built in"; layer_files "$O/out/app" | diag
else ok "what git ignores and .envbuildignore leaves out is not in the wheel"; fi
grep -q '"url": "."' "$O/envbuild.lock" && ok "the lock records the project's wheel and its sdist ('.')" ||
	{ not_ok "own project lock"; diag <"$O/envbuild.lock"; }
run "$ENVBUILD" -C "$O" build --frozen --cache-dir "$TMP/oc2" --format=json
[ "$STATUS" -eq 0 ] && [ "$(digest_of "$TMP/out" 2>/dev/null)" = "$OD1" ] &&
	ok "the project's image again from an empty cache, --frozen: the same digest" ||
	{ not_ok "own rebuild: exit $STATUS"; diag <"$TMP/err"; }
run "$ENVBUILD" -C "$O" check --deep --cache-dir "$TMP/oc-deep"
expect_status 0 "check --deep accepts './' too"
sed -i 's/^version = "0.3.0"/dynamic = ["version"]/' "$O/pyproject.toml"
run "$ENVBUILD" -C "$O" check
[ "$STATUS" -eq 1 ] && grep -q "EB255" "$TMP/out" && ok "a dynamic version is refused by check (EB255)" ||
	{ not_ok "EB255: exit $STATUS"; cat "$TMP/out" | diag; }

# a missing build requirement: named, with the sdist
S=$TMP/s2
sproj "$S" barsdist "$BR_SETUPTOOLS"
run "$ENVBUILD" -C "$S" build --cache-dir "$TMP/sc1"
if [ "$STATUS" -ne 0 ] && grep -q "building sdist 'barsdist-1.0.0.tar.gz' needs 'wheel'" "$TMP/err"; then
	ok "a build requirement the backend asks for and the spec does not pin: named with the sdist"
else not_ok "missing build requirement: exit $STATUS"; diag <"$TMP/err"; fi

# bad sdists
bad() { # NAME WANT DESCRIPTION
	S=$TMP/bad-$1
	sproj "$S" "$1" "$BR_SETUPTOOLS" "$BR_WHEEL"
	run "$ENVBUILD" -C "$S" build --cache-dir "$TMP/sc1"
	if [ "$STATUS" -ne 0 ] && grep -q -- "$2" "$TMP/err" && [ ! -d "$S/out" ]; then ok "$3"
	else not_ok "$3: exit $STATUS"; diag <"$TMP/err"; fi
}
bad netsdist "netsdist: no network" "a build that tries the network fails in the sandbox, with the backend's output"
[ ! -s "$TMP/canary.log" ] && ok "the loopback canary was never reached" || not_ok "the canary was reached"
start=$(date +%s)
ENVBUILD_SANDBOX_TIMEOUT=3
export ENVBUILD_SANDBOX_TIMEOUT
bad forever "time limit" "a build that runs for ever is stopped at the time limit (ENVBUILD_SANDBOX_TIMEOUT)"
unset ENVBUILD_SANDBOX_TIMEOUT
[ $(($(date +%s) - start)) -lt 60 ] && ok "... within the limit" || not_ok "the endless build took $(($(date +%s) - start))s"
bad wrongname "which is othername 1.0.0, not the pinned wrongname==1.0.0; refused" "a wheel of another name than the pin is refused"
bad dotdot "would be written outside the unpack directory" "a path-traversing sdist is refused"
bad symlinked "is a link; refused" "an sdist with a symlink is refused"
[ -z "$(find "$TMP/sc1" "$TMP/bad-dotdot" -name evil)" ] && ok "nothing of them was written" || not_ok "a member escaped"
rm -f /tmp/escape-canary
S=$TMP/esc
sproj "$S" escape "$BR_SETUPTOOLS" "$BR_WHEEL"
run "$ENVBUILD" -C "$S" build --cache-dir "$TMP/sc1"
[ "$STATUS" -eq 0 ] && [ ! -e /tmp/escape-canary ] && [ ! -e "$HOME/escape-canary" ] &&
	ok "what a backend writes outside its directories does not land on the host" ||
	{ not_ok "escape: exit $STATUS"; diag <"$TMP/err"; ls -l /tmp/escape-canary "$HOME/escape-canary" 2>&1 | diag; }
# the sdist's bytes differ from the pin
S=$TMP/s3
sproj "$S" barsdist "$BR_SETUPTOOLS" "$BR_WHEEL"
sed -i "s/sha256:$SDSHA/sha256:$WSHA/" "$S/requirements.txt"
run "$ENVBUILD" -C "$S" build --cache-dir "$TMP/sc3"
[ "$STATUS" -ne 0 ] && [ ! -d "$S/out" ] && ok "an sdist pin with another hash is refused" ||
	{ not_ok "sdist hash mismatch: exit $STATUS"; diag <"$TMP/err"; }
[ -z "$(ls "$TMP/sc1/tmp" 2>/dev/null)" ] && ok "no build directory is left behind" || { not_ok "left in the cache's tmp/"; ls "$TMP/sc1/tmp" | diag; }

finish
