#!/bin/sh
# check_requirements.sh - requirements files: every unpinned form, hashes,
# includes and cycles, syntax errors; the golden files hold the exact output.
. "$(dirname "$0")/lib.sh"
plan 17
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

# one file named under two spellings, and reached again through an include
# that climbs back to it: each line is one finding, under one path
mkdir -p "$TMP/two/sub"
printf 'numpy\n-r sub/b.txt\n' >"$TMP/two/r.txt"
printf 'pandas\n-r ../r.txt\n' >"$TMP/two/sub/b.txt"
run sh -c "cd '$TMP/two' && '$ENVBUILD' check ./r.txt sub/../r.txt"
expect_status 1 "two spellings of one file: findings"
[ "$(grep -c "'numpy' is not pinned" "$TMP/out")" -eq 1 ] && grep -q '^r.txt:1:1: error' "$TMP/out" &&
	ok "numpy's line is reported once, as r.txt:1:1" || { not_ok "numpy reported under several paths"; diag <"$TMP/out"; }
! grep -q '\./\|\.\./' "$TMP/out" && [ "$(grep -c 'EB212' "$TMP/out")" -eq 1 ] &&
	ok "no ./ or ../ in any reported path; the include loop once" || { not_ok "paths not normalised"; diag <"$TMP/out"; }
# the project itself (".", ".[extra]") outside a spec: the current
# directory, as for pip; its pyproject.toml must name a static version
mkdir -p "$TMP/own/docs"
printf '.[ci]\n./\n./docs\n' >"$TMP/own/docs/requirements.txt"
run sh -c "cd '$TMP/own' && '$ENVBUILD' check docs/requirements.txt"
expect_status 1 "the project itself, with no pyproject.toml: an error"
grep -q '^docs/requirements.txt:1:1: error: .*pyproject.toml.*\[EB255\]' "$TMP/out" &&
	grep -q '^docs/requirements.txt:2:1: error: .*\[EB255\]' "$TMP/out" &&
	ok "EB255 at each line naming it" || { not_ok "no EB255 for '.[ci]' and './'"; diag <"$TMP/out"; }
grep -q '^docs/requirements.txt:3:1: error: .*\[EB207\]' "$TMP/out" &&
	ok "another directory is EB207" || { not_ok "no EB207 for ./docs"; diag <"$TMP/out"; }
printf '[project]\nname = "own"\nversion = "0.3.0"\n' >"$TMP/own/pyproject.toml"
printf '.[ci]\n./\n' >"$TMP/own/docs/requirements.txt"
run sh -c "cd '$TMP/own' && '$ENVBUILD' check docs/requirements.txt"
expect_status 0 "with a static [project] name and version, the project itself passes"
finish
