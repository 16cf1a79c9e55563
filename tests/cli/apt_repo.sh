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
plan 17

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

# resolving against the served repository
apt_repo_serve "$R" || { not_ok "cannot start the HTTP server"; finish; }
HELLO=$(sed -n 's/^Version: //p' "$D/main/binary-amd64/Packages" | head -n 1)
run "$TOOL" resolve amd64 - "$APT_URL" bookworm main "$R/keyring.gpg" "hello=$HELLO"
expect_err_contains "hello=$HELLO needs libc6" "without a base, hello's libc6 dependency is missing"
printf 'Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\nArchitecture: amd64\n' >"$TMP/status"
run "$TOOL" resolve amd64 "$TMP/status" "$APT_URL" bookworm main "$R/keyring.gpg" "hello=$HELLO"
expect_status 0 "with libc6 installed in the base, hello resolves"
expect_out_contains "pool/main/hello_${HELLO}_amd64.deb $(sha256sum "$R"/pool/main/hello_*.deb | cut -d' ' -f1)" "the .deb URL and sha256 come from the index"
run "$TOOL" resolve amd64 "$TMP/status" "$APT_URL" bookworm main "$R/keyring.gpg" "hello=9.9-9"
expect_err_contains "hello=9.9-9 is not in the sources; they have $HELLO" "an unknown version names the versions there are"
run "$TOOL" resolve amd64 "$TMP/status" "$APT_URL" bookworm main "$R/other-keyring.gpg" "hello=$HELLO"
expect_err_contains "signed by a key that is not in" "a wrong signed_by keyring fails the resolve"
# a tampered index: one more byte than the signed Release says
cp "$D/main/binary-amd64/Packages.xz" "$TMP/Packages.xz.good"
printf '\n' >>"$D/main/binary-amd64/Packages.xz"
run "$TOOL" resolve amd64 "$TMP/status" "$APT_URL" bookworm main "$R/keyring.gpg" "hello=$HELLO"
expect_err_contains "does not match the signed Release" "a tampered Packages.xz is refused"
cp "$TMP/Packages.xz.good" "$D/main/binary-amd64/Packages.xz"
# an expired Release: refused, accepted with the opt-out
REPO_DATE="Mon, 01 Jan 2024 00:00:00 UTC" REPO_VALID_DAYS=7 \
	"$top_srcdir/tests/helpers/make-apt-repo.sh" build "$R" bookworm "$R"/pool/main/*.deb >/dev/null 2>&1
run "$TOOL" resolve amd64 "$TMP/status" "$APT_URL" bookworm main "$R/keyring.gpg" "hello=$HELLO"
expect_err_contains "Release file expired on 2024-01-08 00:00:00 UTC" "an expired Valid-Until is refused"
run "$TOOL" resolve amd64 "$TMP/status" "$APT_URL" bookworm main "$R/keyring.gpg" --no-valid-until "hello=$HELLO"
expect_status 0 "check_valid_until off accepts it (snapshot archives)"
finish
