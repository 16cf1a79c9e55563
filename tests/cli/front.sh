#!/bin/sh
# front.sh - envbuild is two binaries: the front (`envbuild`: check, help,
# usage errors) links only what the parsers need, so the pre-commit hook
# starts fast; every other command runs in envbuild-full, which the front
# execs with the same command line.  This test fails if the front links the
# network or git libraries again, if a command no longer reaches the full
# binary, or if a missing full binary is not a clear error.
. "$(dirname "$0")/lib.sh"
plan 18

FULL=$(dirname "$ENVBUILD")/envbuild-full

# ---- what the front links ----
if ! command -v ldd >/dev/null 2>&1; then
	echo "1..0 # SKIP no ldd here"
	exit 0
fi
ldd "$ENVBUILD" >"$TMP/ldd.front" 2>&1
ldd "$FULL" >"$TMP/ldd.full" 2>&1
# ldd works on these binaries: the full one does link libcurl (else the
# assertions below could not fail)
if grep -q 'libc\.so' "$TMP/ldd.front" && grep -q 'libcurl' "$TMP/ldd.full"; then
	ok "ldd reads both binaries; envbuild-full links libcurl"
else
	not_ok "ldd does not list the expected libraries"
	diag <"$TMP/ldd.front"
	diag <"$TMP/ldd.full"
fi
for lib in libcurl libgit2 libarchive libgnutls libzstd libcrypto; do
	if grep -q "$lib" "$TMP/ldd.front"; then
		not_ok "the front links $lib (keep network/git/archive code out of check's objects)"
		diag <"$TMP/ldd.front"
	else
		ok "the front does not link $lib"
	fi
done
grep -q 'libyaml' "$TMP/ldd.front" && ok "the front links libyaml (specs, conda)" ||
	not_ok "the front does not link libyaml"

# ---- commands through the exec ----
printf 'numpy==1.26.4\n' >"$TMP/r.txt"
run "$ENVBUILD" check "$TMP/r.txt"
expect_status 0 "check runs in the front"

# cache is not in the front: it works only through envbuild-full.  One
# good blob in the cache (an empty cache is a different path)
printf 'blob\n' >"$TMP/blob"
H=$(sha256sum "$TMP/blob" | cut -c1-64)
mkdir -p "$TMP/cache/blobs/sha256"
cp "$TMP/blob" "$TMP/cache/blobs/sha256/$H"
run "$ENVBUILD" cache verify --cache-dir "$TMP/cache"
expect_status 0 "cache verify through the exec"
expect_out_contains "0 corrupt blobs" "envbuild-full printed the result"

# -C DIR, relative: the full binary applies it once, from where the front
# started (twice would fail, none would read another cache).  The blob in
# there/rc is corrupt: verify finds it there and removes it.
mkdir -p "$TMP/there/rc/blobs/sha256"
printf 'not it\n' >"$TMP/there/rc/blobs/sha256/$H"
run sh -c "cd '$TMP' && '$ENVBUILD' -C there cache verify --cache-dir rc"
if [ "$STATUS" -eq 1 ] && [ ! -e "$TMP/there/rc/blobs/sha256/$H" ] &&
	grep -q "1 corrupt blob in 'rc'" "$TMP/out"; then
	ok "-C DIR is applied once, relative to the starting directory"
else
	not_ok "-C DIR through the exec (exit $STATUS)"
	diag <"$TMP/out"
	diag <"$TMP/err"
fi

# help of a full-only command comes from the front, without the exec
run "$ENVBUILD" build --help
expect_out_contains "usage: envbuild build" "build --help from the front"

# ---- the front alone ----
mkdir "$TMP/alone"
cp "$ENVBUILD" "$TMP/alone/envbuild"
run "$TMP/alone/envbuild" check "$TMP/r.txt"
expect_status 0 "check needs no envbuild-full"
run "$TMP/alone/envbuild" cache verify --cache-dir "$TMP/cache"
expect_status 2 "a missing envbuild-full is a usage/installation error"
expect_err_contains "$TMP/alone/envbuild-full" "the error names where it looked"
expect_err_contains "libexec" "... and the configured libexec directory"

# ---- make install puts both in place ----
if [ ! -f "$top_builddir/Makefile" ]; then
	ok "make install # SKIP no Makefile in $top_builddir"
	finish
fi
if make -s -C "$top_builddir" install-binPROGRAMS install-pkglibexecPROGRAMS \
	DESTDIR="$TMP/inst" >"$TMP/install.log" 2>&1 &&
	[ -x "$(find "$TMP/inst" -path '*/bin/envbuild' | head -n 1)" ] &&
	[ -x "$(find "$TMP/inst" -path '*/libexec/envbuild/envbuild-full' | head -n 1)" ]; then
	ok "make install: bin/envbuild and libexec/envbuild/envbuild-full"
else
	not_ok "make install does not install both binaries"
	diag <"$TMP/install.log"
	find "$TMP/inst" | diag
fi
finish
