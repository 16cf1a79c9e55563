#!/bin/sh
# check_requirements.sh - requirements files: every unpinned form, hashes,
# includes and cycles, syntax errors; the golden files hold the exact output.
. "$(dirname "$0")/lib.sh"
plan 10
F=$top_srcdir/tests/fixtures/check/reqs
G=$top_srcdir/tests/cli/golden

run sh -c "cd '$F' && '$ENVBUILD' check pinned.txt"
expect_status 0 "every accepted pin form"
[ -z "$OUT$ERR" ] && ok "nothing printed when clean" || not_ok "printed: $OUT$ERR"

for f in hashes includes syntax; do
	run sh -c "cd '$F' && '$ENVBUILD' check $f.txt"
	expect_status 1 "$f.txt has findings"
	expect_golden "$G/reqs-$f.txt" "$f.txt findings"
done

# warnings alone pass, unless --strict
printf 'baz===1.0\n' >"$TMP/requirements.txt"
run "$ENVBUILD" check "$TMP/requirements.txt"
expect_status 0 "a warning alone does not fail"
run "$ENVBUILD" check --strict "$TMP/requirements.txt"
expect_status 1 "--strict fails on warnings"
finish
