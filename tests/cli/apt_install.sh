#!/bin/sh
# apt_install.sh - Debian packages end to end on the real test base
# (scripts/make-base): a signed repository on 127.0.0.1 holding the .debs
# `apt-get install --no-install-recommends gcc libc6-dev python3-sklearn` needs on that
# base (fetched from the machine's apt sources), resolved by envbuild
# (src/debian/resolve.c: a lone `gcc` pin names every missing pin at once),
# written into a layer (src/debian/deb.c) and run in a chroot of base +
# layer: gcc compiles and runs a C program, numpy imports (libblas.so.3
# through the alternatives link) and scikit-learn fits a model, dpkg -l/-S/--audit see the packages,
# /bin and /lib stay symlinks.  Then hostile and mismatched .debs are
# refused with nothing written.  Needs root (chroot) and apt lists.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
BASE=/var/tmp/envbuild-test-base
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for chroot"
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || skip "no apt lists (apt-get update)"
"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/base.log" 2>&1 || skip "no test base: $(tail -n 1 "$TMP/base.log")"
LAYERS=$(apt_base_layers "$BASE")
# shellcheck disable=SC2086
"$TOOL" status $LAYERS >"$TMP/base-status" || skip "cannot read the base's dpkg status"
# libc6-dev is only a Recommends of gcc: a compiler that finds stdio.h needs it pinned
WANT="gcc libc6-dev python3-sklearn"
# shellcheck disable=SC2086
apt_closure "$TMP/base-status" $WANT >"$TMP/closure"
[ -s "$TMP/closure" ] || skip "apt-get cannot compute the closure of $WANT"
R=$TMP/repo
# shellcheck disable=SC2046
st=0
apt_repo_make "$R" bookworm $(cat "$TMP/closure") >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st): $(tail -n 1 "$TMP/make.log")"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
plan 24

GCC=$(grep '^gcc=' "$TMP/closure")
run "$TOOL" resolve amd64 "$TMP/base-status" "$APT_URL" bookworm main "$R/keyring.gpg" "$GCC"
expect_status 1 "a lone '$GCC' pin is not complete"
missing_ok=1
for p in $(cat "$TMP/closure"); do
	case $p in
	cpp-12=* | gcc-12=* | libgcc-12-dev=* | binutils=* | libgomp1=* | libjansson4=* | libmpc3=*)
		grep -qF -- " $p" "$TMP/err" || { missing_ok=0; echo "# lacks $p"; } ;;
	esac
done
if [ "$missing_ok" = 1 ] && grep -q "add:" "$TMP/err"; then
	ok "the error names every missing pin at once (add: ...)"
else
	not_ok "the error does not list the missing pins"
	diag <"$TMP/err"
fi

# shellcheck disable=SC2046
run "$TOOL" resolve amd64 "$TMP/base-status" "$APT_URL" bookworm main "$R/keyring.gpg" $(cat "$TMP/closure")
expect_status 0 "the complete closure resolves"
n=$(grep -c '^deb ' "$TMP/out")
[ "$n" = "$(wc -l <"$TMP/closure")" ] && ok "one .deb per pin ($n)" || not_ok "$n .debs for $(wc -l <"$TMP/closure") pins"
grep -q "^release $APT_URL bookworm sha256:[0-9a-f]\{64\} " "$TMP/out" &&
	ok "the Release digest and Date are reported" || not_ok "no release line"

# fetch every .deb from its URL and check it against the reported sha256
mkdir -p "$TMP/debs"
: >"$TMP/list"
fetch_ok=1
grep '^deb ' "$TMP/out" | while read -r _ name ver arch url sha size; do
	f=$TMP/debs/$name.deb
	curl -fsS -o "$f" "$url" || { echo "# cannot fetch $url"; exit 1; }
	echo "$f $name $ver $arch $sha $size" >>"$TMP/list"
done || fetch_ok=0
[ "$fetch_ok" = 1 ] && [ "$(wc -l <"$TMP/list")" = "$n" ] && ok "every .deb URL serves the file" ||
	not_ok "fetching the .debs"

mkdir -p "$TMP/stage"
# shellcheck disable=SC2086
run "$TOOL" layer "$TMP/blobs" "$TMP/stage" "$TMP/list" $LAYERS
expect_status 0 "the packages are written into one layer"
LAYER=$(sed -n 's/^blob //p' "$TMP/out")
expect_out_contains "alternative /usr/bin/cc -> /usr/bin/gcc" "the cc alternative is made"
expect_out_contains "alternative /usr/lib/x86_64-linux-gnu/libblas.so.3 -> " "the libblas.so.3 alternative is made"

ROOT=$TMP/rootfs
mkdir -p "$ROOT"
for l in $LAYERS; do tar -xpf "$l" -C "$ROOT" --numeric-owner; done
tar -xpf "$LAYER" -C "$ROOT" --numeric-owner
if [ -L "$ROOT/bin" ] && [ -L "$ROOT/lib" ] && [ -L "$ROOT/lib64" ]; then
	ok "/bin, /lib and /lib64 are still symlinks (merged /usr kept)"
else
	not_ok "a base directory symlink was replaced"
fi
cat >"$ROOT/tmp/hello.c" <<'C'
#include <stdio.h>
int main(void) { printf("hello from gcc %d\n", __GNUC__); return 0; }
C
run chroot "$ROOT" /bin/sh -c 'cd /tmp && cc -O2 -o hello hello.c && ./hello'
expect_status 0 "gcc compiles and runs a C program in the chroot"
expect_out_contains "hello from gcc 12" "the program ran"
run chroot "$ROOT" python3 -c 'import numpy; a = numpy.arange(6.0).reshape(2, 3); print(float((a @ a.T).sum()))'
expect_status 0 "import numpy works (BLAS through the alternatives link)"
run chroot "$ROOT" python3 -c 'import sklearn, numpy; from sklearn.linear_model import LogisticRegression; m = LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]); print("sklearn", sklearn.__version__, int(m.predict([[2.5]])[0]))'
expect_status 0 "import sklearn, numpy works and a logistic regression fits"
expect_out_contains "sklearn 1.2.1 1" "the model predicts"
run chroot "$ROOT" dpkg-query -W -f '${db:Status-Abbrev} ${Package}=${Version}\n'
bad=0
while read -r p; do grep -qx "ii  $p" "$TMP/out" || { bad=1; echo "# not installed: $p"; }; done <"$TMP/closure"
[ "$bad" = 0 ] && ok "dpkg lists every pin as installed (ii)" || not_ok "dpkg does not list every pin"
run chroot "$ROOT" dpkg -S /usr/bin/gcc-12
expect_out_contains "gcc-12: /usr/bin/gcc-12" "dpkg -S finds the owner of a file"
run chroot "$ROOT" dpkg --audit
[ "$STATUS" = 0 ] && [ -z "$OUT" ] && ok "dpkg --audit finds nothing to complain about" ||
	{ not_ok "dpkg --audit complains"; diag <"$TMP/out"; }

# hostile and mismatched .debs: refused, nothing written
head -n 1 "$TMP/list" | awk '{ $5 = "0000000000000000000000000000000000000000000000000000000000000000"; print }' >"$TMP/bad.list"
rm -rf "$TMP/blobs2"
# shellcheck disable=SC2086
run "$TOOL" layer "$TMP/blobs2" "$TMP/stage" "$TMP/bad.list" $LAYERS
if [ "$STATUS" = 1 ] && grep -q "does not match the lock" "$TMP/err" && ! grep -q '^blob' "$TMP/out"; then
	ok "a .deb whose sha256 differs from the lock is refused, nothing written"
else
	not_ok "sha256 mismatch not refused"; diag <"$TMP/err"
fi
hostile_ok=1
for kind in traversal device escape hardlink truncated; do
	f=$TMP/evil-$kind.deb
	if [ $kind = truncated ]; then
		head -c 2000 "$(head -n 1 "$TMP/list" | cut -d' ' -f1)" >"$f"
	else
		apt_fake_deb "$f" evil 1.0 "$kind"
	fi
	echo "$f evil 1.0 amd64 $(sha256sum "$f" | cut -d' ' -f1) $(stat -c %s "$f")" >"$TMP/evil.list"
	rm -rf "$TMP/blobs3" "$TMP/stage3"
	mkdir -p "$TMP/stage3"
	# shellcheck disable=SC2086
	run "$TOOL" layer "$TMP/blobs3" "$TMP/stage3" "$TMP/evil.list" $LAYERS
	if [ "$STATUS" != 1 ] || grep -q '^blob' "$TMP/out" || ! grep -q "refusing" "$TMP/err"; then
		hostile_ok=0
		echo "# $kind: exit $STATUS"
		diag <"$TMP/err"
	fi
done
[ "$hostile_ok" = 1 ] && ok "path traversal, device node, escaping symlink, outside hardlink and a truncated .deb are refused" ||
	not_ok "a hostile .deb was not refused"
# a whiteout name would delete a base file, a newline forge a line of
# info/PKG.list, and a control.tar of many large members fill memory
for kind in whiteout opaque newline bigcontrol; do
	f=$TMP/evil-$kind.deb
	apt_fake_deb "$f" evil 1.0 "$kind"
	echo "$f evil 1.0 amd64 $(sha256sum "$f" | cut -d' ' -f1) $(stat -c %s "$f")" >"$TMP/evil.list"
	rm -rf "$TMP/blobs3" "$TMP/stage3"
	mkdir -p "$TMP/stage3"
	# shellcheck disable=SC2086
	run "$TOOL" layer "$TMP/blobs3" "$TMP/stage3" "$TMP/evil.list" $LAYERS
	case $kind in
	bigcontrol) want="control.tar holds more than 32 MiB" ;;
	*) want="has a name a layer cannot hold" ;;
	esac
	if [ "$STATUS" = 1 ] && ! grep -q '^blob' "$TMP/out" && grep -qF "$want" "$TMP/err"; then
		ok "$kind: refused, nothing written"
	else
		not_ok "$kind: exit $STATUS"; diag <"$TMP/err"
	fi
done
finish
