#!/bin/sh
# check_spec.sh - `envbuild check` on whole projects: the example is clean,
# a broken project gives exactly the golden findings, in all three formats.
. "$(dirname "$0")/lib.sh"
plan 15
F=$top_srcdir/tests/fixtures/check
G=$top_srcdir/tests/cli/golden

run sh -c "cd '$top_srcdir/tests/fixtures/churn-python' && '$ENVBUILD' check"
expect_status 0 "the bundled example is clean"
[ -z "$OUT$ERR" ] && ok "a clean check prints nothing" || not_ok "a clean check printed: $OUT$ERR"


run sh -c "cd '$F/bad' && '$ENVBUILD' check"
expect_status 1 "a broken project has findings"
expect_golden "$G/bad.txt" "findings for a broken project (text)"
expect_err_contains "envbuild: 20 errors, 1 warning" "summary on stderr"

run sh -c "cd '$F/bad' && '$ENVBUILD' check --format=github"
expect_status 1 "github format"
expect_golden "$G/bad.github" "findings for a broken project (github annotations)"

run sh -c "cd '$F/bad' && '$ENVBUILD' check --format=json"
expect_status 1 "json format"
expect_golden "$G/bad.json" "findings for a broken project (json)"
if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["errors"]==20 and d["warnings"]==1 and len(d["findings"])==21 and all(set(f)=={"file","line","column","severity","rule","message","hint"} for f in d["findings"])' <"$TMP/out"; then
	ok "json output parses and has every field"
else
	not_ok "json output is not the documented shape"
fi

# --spec names the spec; -C runs elsewhere
run "$ENVBUILD" -C "$F/bad" check --spec envbuild.yaml
expect_status 1 "-C and --spec"
expect_golden "$G/bad.txt" "same findings through -C/--spec"

# a spec named on the command line is recognised by name
run sh -c "cd '$F/bad' && '$ENVBUILD' check envbuild.yaml"
expect_golden "$G/bad.txt" "a spec given as PATH"

# a YAML syntax error is a finding with a position, exit 1
printf 'version: 1\nname: x\ntargets:\n  a: {base: "p:1"\n' >"$TMP/envbuild.yaml"
run sh -c "cd '$TMP' && '$ENVBUILD' check"
expect_status 1 "syntax error"
expect_out_contains "envbuild.yaml:5:1: error: did not find expected ',' or '}' while parsing a flow mapping [EB001]" "syntax error has file:line:col"
finish
