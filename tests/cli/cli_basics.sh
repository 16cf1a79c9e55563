#!/bin/sh
# cli_basics.sh - the command table, help, version and exit statuses.
. "$(dirname "$0")/lib.sh"
plan 17

run "$ENVBUILD" --version
expect_status 0 "--version"
expect_out_contains "envbuild 0." "--version prints the version"

run "$ENVBUILD" --help
expect_status 0 "--help"
expect_out_contains "check" "--help lists check"

run "$ENVBUILD"
expect_status 2 "no command is a usage error"

run "$ENVBUILD" frobnicate
expect_status 2 "unknown command"
expect_err_contains "unknown command 'frobnicate'" "unknown command is named"

run "$ENVBUILD" help check
expect_status 0 "help check"
expect_out_contains "usage: envbuild check" "help check shows usage"

run "$ENVBUILD" check --help
expect_status 0 "check --help"
expect_out_contains "--format=FORMAT" "check --help lists options"

run "$ENVBUILD" help nosuch
expect_status 2 "help of an unknown command"

run "$ENVBUILD" check --format=xml
expect_status 2 "unknown --format"
expect_err_contains "unknown format 'xml'" "unknown --format is named"

mkdir "$TMP/empty"
run "$ENVBUILD" -C "$TMP/empty" check
expect_status 2 "check with no spec in the directory"
expect_err_contains "no envbuild.yaml" "missing spec explained"

run "$ENVBUILD" check "$TMP/does-not-exist.txt"
expect_status 2 "check of a missing file"

finish
