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
plan 6

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

finish
