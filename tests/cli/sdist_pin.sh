#!/bin/sh
# sdist_pin.sh - `envbuild pin` of a requirements_in naming a project that
# has only an sdist, on a loopback index of real sdists
# (tests/helpers/make-sdists.py) and Debian's setuptools and wheel wheels.
#
# Checks: the sdist is pinned by its own hash with its dependencies as its
# files state them; the target's build_requirements are written from the
# sdist's [build-system] requires, exact and hashed, in a file the spec
# then names (the spec's comments kept), or in the file it already names;
# `envbuild check` and `envbuild build` accept the result and the image
# runs the sdist's console script; a second pin changes nothing.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/index-env.sh"
plan 17

HELPERS=$top_srcdir/tests/helpers

python3 "$HELPERS/make-sdists.py" "$TMP/dists" >/dev/null &&
	python3 "$HELPERS/make-wheels.py" "$TMP/wheels" --no-cext >/dev/null &&
	run python3 "$HELPERS/make-index.py" build "$TMP/simple" "$TMP/dists" "$TMP/wheels"
expect_status 0 "an index of real sdists and wheels"
index_serve "$TMP/simple" || { not_ok "index server did not start"; diag <"$TMP/index.err"; finish; }

need_base
P=$TMP/p
mkdir -p "$P"
cat >"$P/envbuild.yaml" <<EOF2
version: 1
name: sdistpin
python: "3.11"
index: $INDEX
targets:
  app:
    base: oci:$BASE:bookworm-python3
    libc: "glibc 2.36"
    # the loose inputs
    requirements_in: [requirements.in]
    requirements: [requirements.txt]   # written by pin
EOF2
echo "barsdist" >"$P/requirements.in"
run "$ENVBUILD" -C "$P" pin
expect_status 0 "pin of an sdist-only project"
SDSHA=$(sha256sum "$TMP/dists/barsdist-1.0.0.tar.gz" | cut -c1-64)
if grep -q "^barsdist==1.0.0" "$P/requirements.txt" && grep -q "sha256:$SDSHA" "$P/requirements.txt"; then
	ok "the sdist is pinned by its own sha256"
else not_ok "the sdist is pinned by its own sha256"; diag <"$P/requirements.txt"; fi
STV=$(basename /usr/share/python-wheels/setuptools-*.whl | cut -d- -f2)
STSHA=$(sha256sum /usr/share/python-wheels/setuptools-*.whl | cut -c1-64)
BR=$P/build-requirements-app.txt
if [ -f "$BR" ] && grep -q "^setuptools==$STV" "$BR" && grep -q "sha256:$STSHA" "$BR"; then
	ok "build_requirements written from [build-system] requires, exact and hashed"
else not_ok "build_requirements written from [build-system] requires, exact and hashed"; diag <"$BR"; fi
grep -q "barsdist==1.0.0" "$BR" && ok "the file names the sdist it is for" ||
	not_ok "the file names the sdist it is for"
if grep -q "^    build_requirements: \[-r build-requirements-app.txt\]$" "$P/envbuild.yaml" &&
	grep -q "^    # the loose inputs$" "$P/envbuild.yaml" &&
	grep -q "requirements: \[requirements.txt\]   # written by pin$" "$P/envbuild.yaml"; then
	ok "the spec names the file, its comments kept"
else not_ok "the spec names the file, its comments kept"; diag <"$P/envbuild.yaml"; fi
grep -q "setuptools" "$P/requirements.txt" && not_ok "the build environment is not in requirements.txt" ||
	ok "the build environment is not in requirements.txt"

cp "$P/envbuild.yaml" "$TMP/spec1"; cp "$BR" "$TMP/br1"
run "$ENVBUILD" -C "$P" pin
expect_status 0 "a second pin"
cmp -s "$P/envbuild.yaml" "$TMP/spec1" && cmp -s "$BR" "$TMP/br1" &&
	ok "a second pin changes neither the spec nor the file" ||
	{ not_ok "a second pin changes neither the spec nor the file"; diag <"$P/envbuild.yaml"; }

run "$ENVBUILD" -C "$P" check
expect_status 0 "check accepts what pin wrote"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache"
expect_status 0 "build of what pin wrote"
unpack_rootfs "$P/out/app:app" "$TMP/img" >/dev/null 2>&1
run chroot "$TMP/img/rootfs" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin /bin/sh -c 'cd / && barsdist'
[ "$STATUS" -eq 0 ] && [ "$OUT" = "barsdist ok" ] && ok "the image runs the sdist's console script" ||
	{ not_ok "in the image: exit $STATUS, '$OUT'"; diag <"$TMP/err"; }

# dependencies from a metadata 2.2 PKG-INFO (not pyproject's, which say otherwise)
R=$TMP/r
mkdir -p "$R"
grep -v "build-requirements-app" "$TMP/spec1" >"$R/envbuild.yaml"
echo "depsdist" >"$R/requirements.in"
run "$ENVBUILD" -C "$R" pin
expect_status 0 "pin of an sdist whose PKG-INFO 2.2 states its dependencies"
if grep -q "^tinydep==" "$R/requirements.txt" && grep -q "# via depsdist" "$R/requirements.txt" &&
	! grep -q nosuchproject "$R/requirements.txt"; then
	ok "its Requires-Dist are pinned with it"
else not_ok "its Requires-Dist are pinned with it"; diag <"$R/requirements.txt"; fi

# dynamic dependencies: said, with what to do, nothing written
echo "dynsdist" >"$R/requirements.in"
cp "$R/requirements.txt" "$TMP/r.before"
run "$ENVBUILD" -C "$R" pin
if [ "$STATUS" -eq 1 ] && grep -q "dynsdist==1.0.0 is only an sdist (the index has: dynsdist-1.0.0.tar.gz) whose dependencies need a build" "$TMP/err" &&
	grep -q "hint: pin a version that has a wheel, or write its pin" "$TMP/err" &&
	cmp -s "$R/requirements.txt" "$TMP/r.before"; then
	ok "dynamic dependencies: the error says they need a build and what to do; nothing written"
else not_ok "dynamic dependencies: exit $STATUS"; diag <"$TMP/err"; fi

# a file the spec already names is the one written
Q=$TMP/q
mkdir -p "$Q"
sed -e 's/^    requirements: .*/    requirements: [requirements.txt]\n    build_requirements: ["-r build.txt"]/' "$TMP/spec1" |
	grep -v "build-requirements-app" >"$Q/envbuild.yaml"
echo "barsdist==1.0.0" >"$Q/requirements.in"
run "$ENVBUILD" -C "$Q" pin
expect_status 0 "pin with build_requirements naming a file"
if grep -q "^setuptools==$STV" "$Q/build.txt" 2>/dev/null && [ ! -e "$Q/build-requirements-app.txt" ] &&
	[ "$(grep -c build_requirements "$Q/envbuild.yaml")" = 1 ]; then
	ok "the named file is written and the spec left alone"
else not_ok "the named file is written and the spec left alone"; diag <"$Q/envbuild.yaml"; fi
