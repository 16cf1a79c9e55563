#!/bin/sh
# sdist_backends.sh - `envbuild pin` asks each sdist's PEP 517 backend
# what it adds (get_requires_for_build_wheel), confined in the target's
# base, and a second backend besides setuptools (poetry-core) end to end.
# A loopback index of real sdists (tests/helpers/make-sdists.py), Debian's
# setuptools and wheel wheels, and poetry-core's wheel re-packed from
# Debian's python3-poetry-core (tests/helpers/repack-deb-wheel.py).
#
# Checks: an in-tree backend whose hook asks for a project not in
# [build-system] requires gets it pinned in build_requirements (and
# setuptools' backend its "wheel"), build builds it and the image runs it;
# a second pin runs no backend (the answer is cached); a failing hook is
# an error naming the sdist with the backend's output, nothing written;
# a project without pyproject.toml (pip's fallback) pins and builds; a
# platform this host cannot execute keeps the static requires (EB259);
# a target built in a builder (build_in) has its backends asked in the
# builder's base, not its own (which here has no python3 at all);
# poetry-core: pin, build in the sandbox, the image runs its entry point,
# and two builds from empty caches give the same wheel.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/index-env.sh"
plan 21

HELPERS=$top_srcdir/tests/helpers

if ! dpkg-query -W -f='${Status}' python3-poetry-core 2>/dev/null | grep -q "install ok installed"; then
	not_ok "python3-poetry-core is not installed (scripts/install-deps)"
	finish
fi
python3 "$HELPERS/make-sdists.py" "$TMP/dists" >/dev/null &&
	python3 "$HELPERS/make-wheels.py" "$TMP/wheels" --no-cext >/dev/null &&
	python3 "$HELPERS/repack-deb-wheel.py" "$TMP/debwheels" python3-poetry-core >/dev/null &&
	run python3 "$HELPERS/make-index.py" build "$TMP/simple" "$TMP/dists" "$TMP/wheels" "$TMP/debwheels"
expect_status 0 "an index of real sdists, wheels and poetry-core re-packed from Debian"
index_serve "$TMP/simple" || { not_ok "index server did not start"; diag <"$TMP/index.err"; finish; }

need_base
export ENVBUILD_OCI_BASES="$BASE"
# project DIR REQUIREMENT [PLATFORMS]: a spec pinning one sdist
project() {
	mkdir -p "$1"
	cat >"$1/envbuild.yaml" <<EOF2
version: 1
name: backends
python: "3.11"
index: $INDEX
targets:
  app:
    base: oci:$BASE:bookworm-python3
    libc: "glibc 2.36"
    platforms: [${3:-linux/amd64}]
    requirements_in: [requirements.in]
    requirements: [requirements.txt]
EOF2
	echo "$2" >"$1/requirements.in"
}
in_image() { # DIR CMD: run CMD in the built image's tree
	rm -rf "$TMP/img"
	unpack_rootfs "$1/out/app:app" "$TMP/img" >/dev/null 2>&1
	run chroot "$TMP/img/rootfs" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin /bin/sh -c "cd / && $2"
}
locked_sha() { # DIR NAME: the lock's sha256 of NAME's wheel
	python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["targets"]["app"]["packages"]["linux/amd64"]:
    if p["name"] == sys.argv[2]: print(p["sha256"])' "$1/envbuild.lock" "$2"
}

# --- a backend whose hook asks for more than [build-system] requires ----
X=$TMP/x
project "$X" hookextra
run "$ENVBUILD" -C "$X" pin --cache-dir "$TMP/pc"
expect_status 0 "pin of an sdist whose backend asks for an extra requirement"
BR=$X/build-requirements-app.txt
TDSHA=$(sha256sum "$TMP/wheels/tinydep-1.2.0-py3-none-any.whl" | cut -c1-64)
if grep -q "^tinydep==1.2.0" "$BR" && grep -q "sha256:$TDSHA" "$BR" &&
	grep -A2 "^tinydep==1.2.0" "$BR" | grep -q "# via .*hookextra==1.0.0 (its backend)"; then
	ok "what get_requires_for_build_wheel adds is pinned, hashed, said to come from the backend"
else not_ok "what get_requires_for_build_wheel adds is pinned"; diag <"$BR"; fi
grep -q "^wheel==" "$BR" && grep -q "^setuptools==" "$BR" &&
	ok "setuptools' own hook answer (wheel) is pinned, with [build-system] requires" ||
	{ not_ok "setuptools' hook answer"; diag <"$BR"; }
cp "$BR" "$TMP/br.x"
# the first pin ran the backend in the base's tree; the second needs none
HAD_TREE=0
[ -d "$TMP/pc/rootfs" ] && HAD_TREE=1
rm -rf "$TMP/pc/rootfs"
run "$ENVBUILD" -C "$X" pin --cache-dir "$TMP/pc"
[ "$STATUS" -eq 0 ] && [ $HAD_TREE = 1 ] && cmp -s "$BR" "$TMP/br.x" && [ ! -d "$TMP/pc/rootfs" ] &&
	ok "a second pin takes the backend's answer from the cache (no tree unpacked, no backend run)" ||
	{ not_ok "second pin: exit $STATUS"; diag <"$TMP/err"; }
run "$ENVBUILD" -C "$X" build --cache-dir "$TMP/xc"
expect_status 0 "build agrees with what pin wrote (the hook's answers are pinned)"
in_image "$X" hookextra
[ "$STATUS" -eq 0 ] && [ "$OUT" = "hookextra ok" ] && ok "the image runs its console script" ||
	{ not_ok "in the image: exit $STATUS, '$OUT'"; diag <"$TMP/err"; }

# --- a hook that fails --------------------------------------------------
F=$TMP/f
project "$F" hookfail
cp "$F/envbuild.yaml" "$TMP/spec.f"
run "$ENVBUILD" -C "$F" pin --cache-dir "$TMP/pc"
if [ "$STATUS" -eq 1 ] && grep -q "the build backend of sdist 'hookfail-1.0.0.tar.gz' (get_requires_for_build_wheel) failed" "$TMP/err" &&
	grep -q "RuntimeError: hookfail: this backend cannot say" "$TMP/err"; then
	ok "a failing hook: the error names the sdist and the hook, with the backend's output"
else not_ok "failing hook: exit $STATUS"; diag <"$TMP/err"; fi
[ ! -e "$F/requirements.txt" ] && [ ! -e "$F/build-requirements-app.txt" ] && cmp -s "$F/envbuild.yaml" "$TMP/spec.f" &&
	ok "a failing hook: nothing is written" || not_ok "a failing hook: files were written"

# --- no pyproject.toml: pip's fallback, and the legacy backend's hook ----
L=$TMP/l
project "$L" legacysdist
run "$ENVBUILD" -C "$L" pin --cache-dir "$TMP/pc"
expect_status 0 "pin of an sdist without pyproject.toml"
grep -q "^setuptools==" "$L/build-requirements-app.txt" && grep -q "^wheel==" "$L/build-requirements-app.txt" &&
	ok "its build_requirements: setuptools (pip's fallback) and wheel (the legacy backend's hook)" ||
	{ not_ok "legacy build_requirements"; diag <"$L/build-requirements-app.txt"; }
run "$ENVBUILD" -C "$L" build --cache-dir "$TMP/lc"
expect_status 0 "build of the setup.py-only sdist with what pin wrote"

# --- a platform this host cannot execute: static requires, EB259 -------
case $(uname -m) in
x86_64) OTHER=linux/arm64 ;;
*) OTHER=linux/amd64 ;;
esac
A=$TMP/a
project "$A" barsdist "$OTHER"
run "$ENVBUILD" -C "$A" pin --cache-dir "$TMP/pc"
if [ "$STATUS" -eq 0 ] && grep -q "warning: target 'app': the build backend of barsdist==1.0.0 was not asked.*cannot execute its base for $OTHER.*\[EB259\]" "$TMP/err" &&
	grep -q "^setuptools==" "$A/build-requirements-app.txt" && ! grep -q "^wheel==" "$A/build-requirements-app.txt"; then
	ok "only a foreign platform: the static requires, with warning EB259 (no host python run)"
else not_ok "foreign platform: exit $STATUS"; diag <"$TMP/err"; diag <"$A/build-requirements-app.txt"; fi
M=$TMP/m
project "$M" barsdist "linux/amd64, $OTHER"
[ "$(uname -m)" = x86_64 ] || project "$M" barsdist "$OTHER, linux/$(uname -m)"
run "$ENVBUILD" -C "$M" pin --cache-dir "$TMP/pc"
[ "$STATUS" -eq 0 ] && ! grep -q EB259 "$TMP/err" && grep -q "^wheel==" "$M/build-requirements-app.txt" &&
	ok "the host's platform and a foreign one: the backend's answer here serves both, no warning" ||
	{ not_ok "mixed platforms: exit $STATUS"; diag <"$TMP/err"; }

# --- build_in: the backend runs where build runs it, the builder's base --
B=$TMP/b
mkdir -p "$B"
cat >"$B/envbuild.yaml" <<EOF2
version: 1
name: builder
python: "3.11"
index: $INDEX
targets:
  builder:
    base: oci:$BASE:bookworm-python3
    libc: "glibc 2.36"
    platforms: [linux/amd64]
  app:
    base: scratch
    build_in: builder
    libc: "glibc 2.36"
    platforms: [linux/amd64]
    requirements_in: [requirements.in]
    requirements: [requirements.txt]
EOF2
echo hookextra >"$B/requirements.in"
run "$ENVBUILD" -C "$B" pin --cache-dir "$TMP/pc-b"
expect_status 0 "pin of a target whose own base (scratch) has no python3, built in a builder"
! grep -q EB259 "$TMP/err" && grep -A2 "^tinydep==1.2.0" "$B/build-requirements-app.txt" | grep -q "(its backend)" &&
	ok "the backend was asked in the builder's base: what its hook adds is pinned" ||
	{ not_ok "build_in: the hook was not run in the builder"; diag <"$TMP/err"; diag <"$B/build-requirements-app.txt"; }

# --- a second backend: poetry-core --------------------------------------
P=$TMP/p
project "$P" poemsdist
run "$ENVBUILD" -C "$P" pin --cache-dir "$TMP/pc"
expect_status 0 "pin of an sdist built by poetry-core"
PCSHA=$(sha256sum "$TMP"/debwheels/poetry_core-*.whl | cut -c1-64)
BP=$P/build-requirements-app.txt
if grep -q "^poetry-core==1.4.0" "$BP" && grep -q "sha256:$PCSHA" "$BP" &&
	[ "$(grep -c '^[a-z]' "$BP")" = 1 ] && grep -q "^tinydep==" "$P/requirements.txt"; then
	ok "build_requirements: poetry-core alone (its hook adds nothing); its dependency pinned"
else not_ok "poetry build_requirements"; diag <"$BP"; fi
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/pc1" --format=json
expect_status 0 "build with poetry-core's backend in the sandbox"
D1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["digest"])' "$TMP/out")
W1=$(locked_sha "$P" poemsdist)
in_image "$P" 'poemsdist && python3 -c "import poemsdist, importlib.metadata as m; print(poemsdist.ANSWER, m.version(\"poemsdist\"))"'
[ "$STATUS" -eq 0 ] && [ "$OUT" = "poemsdist ok 1.3.0
42 1.0.0" ] && ok "the image imports it and runs its entry point" ||
	{ not_ok "in the image: exit $STATUS, '$OUT'"; diag <"$TMP/err"; }
rm "$P/envbuild.lock"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/pc2" --format=json
D2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["digest"])' "$TMP/out" 2>/dev/null)
W2=$(locked_sha "$P" poemsdist)
[ "$STATUS" -eq 0 ] && [ -n "$W1" ] && [ "$W1" = "$W2" ] && [ "$D1" = "$D2" ] &&
	ok "two builds from empty caches: the same wheel ($W1) and image" ||
	{ not_ok "poetry rebuild: exit $STATUS, wheel $W1 vs $W2, image $D1 vs $D2"; diag <"$TMP/err"; }
finish
