#!/bin/sh
# apt_repo.sh - the signed test repository and envbuild's Release
# verification (src/debian/gpg.c via tests/helpers/apt-tool): a good
# InRelease and Release+Release.gpg verify (binary and armored keyrings),
# a wrong keyring, a tampered, an unsigned, a trailing-text InRelease and a
# Release changed after signing are refused with clear errors.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
R=$TMP/repo
D=$R/dists/bookworm
st=0
apt_repo_make "$R" bookworm hello >"$TMP/make.log" 2>&1 || st=$?
if [ "$st" != 0 ]; then
	echo "1..0 # SKIP cannot make the test repository (exit $st): $(tail -n 1 "$TMP/make.log")"
	exit 0
fi
plan 9

run "$TOOL" verify "$R/keyring.gpg" "$D/InRelease"
expect_status 0 "InRelease verifies against the repository's keyring"
expect_out_contains "files 3" "the signed Release lists Packages, .gz and .xz"
run "$TOOL" verify "$R/keyring.asc" "$D/Release" "$D/Release.gpg"
expect_status 0 "Release + Release.gpg verify against an armored keyring"

run "$TOOL" verify "$R/other-keyring.gpg" "$D/InRelease"
expect_err_contains "signed by a key that is not in" "a keyring without the signing key is refused"
sed 's/^Suite: bookworm/Suite: evil/' "$D/InRelease" >"$TMP/tampered"
run "$TOOL" verify "$R/keyring.gpg" "$TMP/tampered"
expect_err_contains "bad signature on Release" "a tampered InRelease is refused"
run "$TOOL" verify "$R/keyring.gpg" "$D/Release"
expect_err_contains "not a clearsigned message" "an unsigned Release as InRelease is refused"
{ cat "$D/InRelease"; printf 'Package: evil\n'; } >"$TMP/trailing"
run "$TOOL" verify "$R/keyring.gpg" "$TMP/trailing"
expect_err_contains "unsigned text after its signature" "unsigned text after the signature is refused"
{ cat "$D/Release"; printf ' extra\n'; } >"$TMP/Release"
run "$TOOL" verify "$R/keyring.gpg" "$TMP/Release" "$D/Release.gpg"
expect_err_contains "bad signature on Release" "a Release changed after signing is refused"
: >"$TMP/empty.gpg"
run "$TOOL" verify "$TMP/empty.gpg" "$D/InRelease"
expect_err_contains "is empty" "an empty keyring is an error"
finish
