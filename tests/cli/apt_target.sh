#!/bin/sh
# apt_target.sh - a spec target's Debian layer through the one entry point
# the build's layer source calls (src/debian/apt.h, via apt-tool target):
# resolved against a signed loopback repository and the real base's dpkg
# status, recorded for the lock (name, version, architecture, .deb URL,
# sha256, size; the Release's digest, Date and signing key), rebuilt from
# the lock with no index access (--frozen) to the same layer digest, a
# frozen lock that no longer matches the pins refused, and the installed
# program run in a chroot of base + layer.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
BASE=/var/tmp/envbuild-test-base
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for chroot"
"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/base.log" 2>&1 || skip "no test base"
LAYERS=$(apt_base_layers "$BASE")
R=$TMP/repo
st=0
apt_repo_make "$R" bookworm hello >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st)"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
HELLO=$(sed -n 's/^Version: //p' "$R/dists/bookworm/main/binary-amd64/Packages" | head -n 1)
plan 12

P=$TMP/p
mkdir -p "$P"
cp "$R/keyring.gpg" "$P/"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: demo
apt_sources:
  - url: $APT_URL
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  training:
    base: python:3.11-slim-bookworm
    apt: [hello=$HELLO]
YAML
mkdir -p "$TMP/stage"
# shellcheck disable=SC2086
run "$TOOL" target "$P/envbuild.yaml" training linux/amd64 "$TMP/blobs" "$TMP/stage" - 0 $LAYERS
expect_status 0 "resolve, fetch and write the target's Debian layer"
sed -n 's/^lock //p' "$TMP/out" >"$TMP/lock.json"
python3 - "$TMP/lock.json" "$HELLO" "$R" <<'PY' >"$TMP/check" 2>&1 && ok "the lock records the .deb and the signed Release" || { not_ok "lock record"; diag <"$TMP/check"; }
import hashlib, json, os, sys
lock, ver, repo = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
p = lock["packages"]["linux/amd64"][0]
deb = os.path.join(repo, "pool/main/hello_%s_amd64.deb" % ver)
assert p["name"] == "hello" and p["version"] == ver and p["architecture"] == "amd64", p
assert p["sha256"] == hashlib.sha256(open(deb, "rb").read()).hexdigest(), p
assert p["size"] == os.path.getsize(deb) and p["url"].endswith("/pool/main/hello_%s_amd64.deb" % ver)
s = lock["sources"][0]
rel = open(os.path.join(repo, "dists/bookworm/InRelease"), "rb").read()
assert s["release"] == "sha256:" + hashlib.sha256(rel).hexdigest(), s
assert s["date"] and len(s["signedBy"]) == 40, s
PY
BLOB1=$(sed -n 's/^blob //p' "$TMP/out")
KEY1=$(sed -n 's/^key //p' "$TMP/out")
B1=$(echo "$BLOB1" | sed -n 1p)
B2=$(echo "$BLOB1" | sed -n 2p)
tar -tf "$TMP/blobs/blobs/sha256/${B1#sha256:}" >"$TMP/b1" 2>/dev/null
tar -tf "$TMP/blobs/blobs/sha256/${B2#sha256:}" >"$TMP/b2" 2>/dev/null
if [ "$(echo "$BLOB1" | wc -l)" = 2 ] && grep -qx 'usr/bin/hello' "$TMP/b1" && ! grep -q 'var/lib/dpkg/status' "$TMP/b1" &&
	[ "$(grep -v '/$' "$TMP/b2")" = "var/lib/dpkg/status" ]; then
	ok "a small package's layer (its bucket), then the dpkg database layer (the status alone)"
else
	not_ok "layers: $BLOB1"
	{ echo B1:; head "$TMP/b1"; echo B2:; cat "$TMP/b2"; } | diag
fi

# a large package (here: any .deb of 50000 bytes or more) gets a layer of
# its own, below the dpkg database layer
rm -rf "$TMP/stage"; mkdir -p "$TMP/stage"
# shellcheck disable=SC2086
APT_LARGE_BYTES=50000 run "$TOOL" target "$P/envbuild.yaml" training linux/amd64 "$TMP/blobs" "$TMP/stage" - 0 $LAYERS
L1=$(sed -n 's/^blob //p' "$TMP/out" | sed -n 1p)
L2=$(sed -n 's/^blob //p' "$TMP/out" | sed -n 2p)
tar -tf "$TMP/blobs/blobs/sha256/${L1#sha256:}" >"$TMP/l1" 2>/dev/null
tar -tf "$TMP/blobs/blobs/sha256/${L2#sha256:}" >"$TMP/l2" 2>/dev/null
if [ "$STATUS" = 0 ] && grep -qx 'usr/bin/hello' "$TMP/l1" && grep -qx 'var/lib/dpkg/info/hello.list' "$TMP/l1" &&
	! grep -q 'var/lib/dpkg/status' "$TMP/l1" && grep -qx 'var/lib/dpkg/status' "$TMP/l2" &&
	! grep -q 'usr/bin/hello' "$TMP/l2"; then
	ok "a large package is a layer of its own (files and info/), the status on top"
else
	not_ok "large package layer split"
	{ cat "$TMP/err"; echo L1:; head "$TMP/l1"; echo L2:; head "$TMP/l2"; } | diag
fi

# frozen: from the lock, with the server stopped (no index access at all;
# the .debs are in the blob store already)
kill "$APT_SERVER_PID" 2>/dev/null
wait "$APT_SERVER_PID" 2>/dev/null
printf '{"sources": %s, "packages": %s}\n' \
	"$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["sources"]))' "$TMP/lock.json")" \
	"$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["packages"]))' "$TMP/lock.json")" >"$TMP/apt-lock.json"
rm -rf "$TMP/stage"; mkdir -p "$TMP/stage"
# shellcheck disable=SC2086
run "$TOOL" target "$P/envbuild.yaml" training linux/amd64 "$TMP/blobs" "$TMP/stage" "$TMP/apt-lock.json" 1 $LAYERS
expect_status 0 "--frozen builds from the lock with the repository gone"
[ "$(sed -n 's/^blob //p' "$TMP/out")" = "$BLOB1" ] && ok "the same layer digest twice ($BLOB1)" ||
	not_ok "layer digests differ: $BLOB1 vs $(sed -n 's/^blob //p' "$TMP/out")"
[ "$(sed -n 's/^key //p' "$TMP/out")" = "$KEY1" ] && ok "the same cache key" || not_ok "cache keys differ"

sed -i "s/hello=$HELLO/hello=9.9-9/" "$P/envbuild.yaml"
# shellcheck disable=SC2086
run "$TOOL" target "$P/envbuild.yaml" training linux/amd64 "$TMP/blobs" "$TMP/stage" "$TMP/apt-lock.json" 1 $LAYERS
expect_status 1 "--frozen with pins the lock does not have fails"
expect_err_contains "are not the spec's apt: pins" "and says the lock is stale"

# the .deb in the blob store tampered with: refused at install
sed -i "s/hello=9.9-9/hello=$HELLO/" "$P/envbuild.yaml"
SHA=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["linux/amd64"][0]["sha256"])' "$TMP/lock.json")
python3 - "$TMP/apt-lock.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["packages"]["linux/amd64"][0]["sha256"] = "0" * 64
json.dump(l, open(sys.argv[1], "w"))
PY
# shellcheck disable=SC2086
run "$TOOL" target "$P/envbuild.yaml" training linux/amd64 "$TMP/blobs" "$TMP/stage" "$TMP/apt-lock.json" 1 $LAYERS
expect_status 1 "a lock sha256 that no .deb has fails (nothing to fetch it from)"

ROOT=$TMP/rootfs
mkdir -p "$ROOT"
for l in $LAYERS; do tar -xpf "$l" -C "$ROOT" --numeric-owner; done
for b in $BLOB1; do tar -xpf "$TMP/blobs/blobs/sha256/${b#sha256:}" -C "$ROOT" --numeric-owner; done
run chroot "$ROOT" hello
expect_out_contains "Hello, world!" "the installed hello runs in a chroot of base + layer"
run chroot "$ROOT" dpkg -s hello
expect_out_contains "Status: install ok installed" "dpkg -s sees it installed"
finish
