#!/bin/sh
# apt_replay.sh - the replay layer (src/assemble/replay.c) is keyed by what
# it reads of the package layers, on the real test base with .debs made
# here (dpkg-deb) in a signed loopback repository:
#   ebtool ships a program and its documentation, ebz a real shared
#   library (zlib's, as /opt/ebz/lib/libz.so.1) and the ld.so.conf.d entry
#   naming its directory;
#   - the first build runs ldconfig: the image's `ldconfig -p` lists the
#     library in the directory the conf names;
#   - a change to ebtool (another program) rebuilds its layer and keeps the
#     replay layer's digest: ldconfig is not run again (the build took it
#     from the cache) and the new program runs;
#   - a change to ebz (the library moves to /opt/ebz2/lib) makes a new
#     replay layer whose cache lists the new path and not the old;
#   - the same spec from an empty cache gives the same image digest, and
#     so does the warm build after a cache whose per-layer records
#     ("replayin") were removed.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (chroot into the built image)"
command -v umoci >/dev/null || skip "umoci not installed"
command -v bwrap >/dev/null || skip "bubblewrap not installed"
command -v dpkg-deb >/dev/null || skip "dpkg-deb not installed"
need_base
plan 12

LIBZ=$(readlink -f /lib/x86_64-linux-gnu/libz.so.1)
[ -f "$LIBZ" ] || { not_ok "no zlib on this machine to ship"; finish; }

# mkdeb NAME VERSION: a .deb from $TMP/root/NAME-VERSION
mkdeb() {
	_d=$TMP/root/$1-$2
	mkdir -p "$_d/DEBIAN"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: replay key test\n' \
		"$1" "$2" >"$_d/DEBIAN/control"
	dpkg-deb --root-owner-group -Zgzip -b "$_d" "$TMP/debs/$1_$2_amd64.deb" >>"$TMP/deb.log" 2>&1
}
mkdir -p "$TMP/debs"
for v in 1.0 1.1; do
	d=$TMP/root/ebtool-$v
	mkdir -p "$d/usr/bin" "$d/usr/share/doc/ebtool"
	printf '#!/bin/sh\necho ebtool %s\n' "$v" >"$d/usr/bin/ebtool"
	chmod 755 "$d/usr/bin/ebtool"
	echo "ebtool $v" >"$d/usr/share/doc/ebtool/README"
	mkdeb ebtool "$v"
done
for v in 1.0 2.0; do
	dir=/opt/ebz/lib
	[ "$v" = 2.0 ] && dir=/opt/ebz2/lib
	d=$TMP/root/ebz-$v
	mkdir -p "$d$dir" "$d/etc/ld.so.conf.d"
	cp "$LIBZ" "$d$dir/libz.so.1"
	echo "$dir" >"$d/etc/ld.so.conf.d/ebz.conf"
	mkdeb ebz "$v"
done
if ! "$APT_HELPERS/make-apt-repo.sh" build "$TMP/repo" bookworm "$TMP"/debs/*.deb >"$TMP/repo.log" 2>&1 ||
	! apt_repo_serve "$TMP/repo"; then
	not_ok "cannot make the apt repository"
	diag <"$TMP/deb.log"
	diag <"$TMP/repo.log"
	finish
fi

P=$TMP/p
mkdir -p "$P"
cp "$TMP/repo/keyring.gpg" "$P/"
spec() { # EBTOOL EBZ
	cat >"$P/envbuild.yaml" <<YAML
version: 1
name: replaykey
apt_sources:
  - url: $APT_URL
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  app:
    base: oci:$BASE:bookworm-python3
    apt: [ebtool=$1, ebz=$2]
YAML
}
digest_of() { sed -n "s/^$1 *\(sha256:[0-9a-f]*\).*/\1/p" "$TMP/out"; }
# the replay layer of the built image: its digest, from the history
replay_of() {
	python3 - "$P/out/app" <<'PY'
import json, sys
d = sys.argv[1]
def blob(dg): return json.load(open(f"{d}/blobs/sha256/" + dg.split(":")[1]))
m = blob(json.load(open(f"{d}/index.json"))["manifests"][0]["digest"])
hist = [h for h in blob(m["config"]["digest"])["history"] if not h.get("empty_layer")]
for h, l in zip(hist, m["layers"]):
    if h.get("created_by", "").startswith("envbuild: replay"):
        print(l["digest"], h["created_by"])
PY
}
in_image() { # CMD...: run in a chroot of the built image
	rm -rf "$TMP/r"
	unpack_rootfs "$P/out/app:app" "$TMP/r" >/dev/null 2>&1
	run chroot "$TMP/r/rootfs" "$@"
}
C=$TMP/cache

spec 1.0 1.0
run "$ENVBUILD" -C "$P" build --cache-dir "$C"
expect_status 0 "ebtool=1.0 and ebz=1.0 build"
R1=$(replay_of)
case $R1 in
*ldconfig*) ok "the image has a replay layer that ran ldconfig" ;;
*) not_ok "no ldconfig replay layer: '$R1'"; diag <"$TMP/err" ;;
esac
in_image /sbin/ldconfig -p
expect_out_contains "libz.so.1 (libc6,x86-64) => /opt/ebz/lib/libz.so.1" \
	"ld.so.cache lists the library in the directory ld.so.conf.d names"

# a package the replay cannot see: the replay layer is the cached one
spec 1.1 1.0
strace_ok=0
command -v strace >/dev/null && strace_ok=1
if [ "$strace_ok" = 1 ]; then
	STATUS=0
	# LeakSanitizer cannot run under ptrace (an ASan build aborts at exit)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=execve -o "$TMP/exec" "$ENVBUILD" -C "$P" build --cache-dir "$C" \
		>"$TMP/out" 2>"$TMP/err" || STATUS=$?
else
	run "$ENVBUILD" -C "$P" build --cache-dir "$C"
fi
expect_status 0 "ebtool=1.1 builds on the warm cache"
W2=$(digest_of app)
R2=$(replay_of)
[ -n "$R1" ] && [ "$R2" = "$R1" ] && ok "the replay layer keeps its digest (${R1%% *})" ||
	{ not_ok "the replay layer changed: '$R1' -> '$R2'"; diag <"$TMP/out"; }
if [ "$strace_ok" = 0 ]; then
	ok "# SKIP strace not installed: cannot see what was run"
elif grep -q 'execve("[^"]*bwrap"' "$TMP/exec"; then
	not_ok "the sandbox ran again (the replay was not taken from the cache)"
	grep execve "$TMP/exec" | head | diag
else
	ok "nothing ran in the sandbox: no ldconfig, no tree unpacked for it"
fi
in_image /usr/bin/ebtool
expect_out_contains "ebtool 1.1" "the new program runs"

# the library moves: what ldconfig reads changed, so a new replay layer
spec 1.1 2.0
run "$ENVBUILD" -C "$P" build --cache-dir "$C"
expect_status 0 "ebz=2.0 builds on the warm cache"
W3=$(digest_of app)
R3=$(replay_of)
[ -n "$R3" ] && [ "$R3" != "$R1" ] && ok "a new replay layer (${R3%% *})" ||
	not_ok "the replay layer was reused for a moved library: '$R3'"
in_image /sbin/ldconfig -p
if grep -qF "=> /opt/ebz2/lib/libz.so.1" "$TMP/out" && ! grep -qF "/opt/ebz/lib/" "$TMP/out"; then
	ok "ld.so.cache lists the new path, not the old"
else
	not_ok "ld.so.cache is stale"
	diag <"$TMP/out"
fi

# the same spec from an empty cache, and after the per-layer records are gone
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache2"
[ -n "$W3" ] && [ "$(digest_of app)" = "$W3" ] && ok "an empty cache gives the same image ($W3)" ||
	{ not_ok "empty cache: $(digest_of app), warm: $W3"; diag <"$TMP/err"; }
rm -rf "$C/envbuild/replayin" "$C/replayin"
spec 1.1 1.0
run "$ENVBUILD" -C "$P" build --cache-dir "$C"
[ -n "$W2" ] && [ "$(digest_of app)" = "$W2" ] && [ "$(replay_of)" = "$R1" ] &&
	ok "without the per-layer records the key is made again, the same ($W2)" ||
	{ not_ok "rebuilt: $(digest_of app), before: $W2"; diag <"$TMP/err"; }
finish
