#!/bin/sh
# cache.sh - the blob cache cannot be poisoned through an output, a
# corrupt cached blob is noticed, evicted and rebuilt, killed builds'
# temporaries are swept (live ones are not), `envbuild cache verify` and
# `envbuild cache prune` do what they say, and concurrent builds of one
# project all succeed.  Scratch bases and `files` layers only: no base
# image, no network.
. "$(dirname "$0")/lib.sh"
plan 34

CACHE=$TMP/cache
P=$TMP/p
mkdir -p "$P/app" "$P/data"
echo 'print("hello")' >"$P/app/main.py"
head -c 300000 /dev/urandom >"$P/data/blob.bin"
cat >"$P/envbuild.yaml" <<'YAML'
version: 1
name: cache
targets:
  app:
    base: scratch
    files:
      - { src: app/, dest: /app/ }
      - { src: data/, dest: /data/ }
    cmd: [/app/main.py]
YAML

# layers LAYOUT: the layer digests (hex) of the layout's only manifest
layers() {
	python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
top = json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"].split(":")[1]
m = json.load(open(os.path.join(d, "blobs/sha256", top)))
for l in m["layers"]:
    print(l["digest"].split(":")[1])
PY
}
# all_blobs_match DIR: every blobs/sha256/X (or DIR/X) hashes to X
all_blobs_match() {
	for f in "$1"/*; do
		[ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || return 1
	done
}
# poison FILE: flip one byte in the middle, keeping the size
poison() {
	chmod u+w "$1"
	python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0xff
open(p, "r+b").write(b)
PY
}

run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build"
DATA=$(layers "$P/out/app" | tail -n 1)
OUTBLOB=$P/out/app/blobs/sha256/$DATA
CBLOB=$CACHE/blobs/sha256/$DATA

# -- outputs are copies, never hard links into the cache -------------------
[ "$(stat -c %i "$OUTBLOB")" != "$(stat -c %i "$CBLOB")" ] &&
	ok "the layout's layer is not the cache's inode" || not_ok "out/ blob is a hard link into the cache"
[ "$(stat -c %h "$OUTBLOB")" = 1 ] && ok "the layout's layer has one link" ||
	not_ok "out/ blob has $(stat -c %h "$OUTBLOB") links"
poison "$OUTBLOB"
all_blobs_match "$CACHE/blobs/sha256" && ok "overwriting out/ leaves the cache intact" ||
	not_ok "editing out/ poisoned the cache"
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "rebuild after out/ was edited"
all_blobs_match "$P/out/app/blobs/sha256" && ok "the new layout's blobs match their digests" ||
	not_ok "a blob in out/ does not match its digest"
# an unchanged rebuild may take blobs from the layout it replaces (checked
# first), never from the cache by link
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "unchanged rebuild"
[ "$(stat -c %i "$OUTBLOB")" != "$(stat -c %i "$CBLOB")" ] && [ "$(stat -c %h "$OUTBLOB")" = 1 ] &&
	ok "still one link, not the cache's inode" || not_ok "out/ blob shares an inode after a rebuild"

# -- a corrupt cached layer is evicted and rebuilt ------------------------
# (a cache and an output of their own: the first ones share inodes when
# outputs are links)
C2=$TMP/cache2
"$ENVBUILD" -C "$P" build --cache-dir "$C2" -o "$TMP/o2" >/dev/null 2>&1
poison "$C2/blobs/sha256/$DATA"
run "$ENVBUILD" -C "$P" build --cache-dir "$C2" -o "$TMP/o2"
expect_status 0 "build with a poisoned cached layer"
[ "$(layers "$TMP/o2/app" | tail -n 1)" = "$DATA" ] && ok "same layer digest as before" ||
	not_ok "the layer digest changed"
all_blobs_match "$TMP/o2/app/blobs/sha256" && ok "no poisoned byte reached the output" ||
	not_ok "the poisoned blob was copied into the output"
all_blobs_match "$C2/blobs/sha256" && ok "the cache holds the rebuilt blob" ||
	not_ok "the poisoned blob is still in the cache"
# the same with mode and mtime put back, on a warm cache whose blobs a
# rebuild trusts by their stamps (inode, size, mtime, ctime): the ctime
# still moved, so the blob is hashed again and evicted
CB=$C2/blobs/sha256/$DATA
"$ENVBUILD" -C "$P" build --cache-dir "$C2" -o "$TMP/o2" >/dev/null 2>&1
[ -f "$C2/stamps/$DATA" ] && ok "the warm blob has a stamp" || not_ok "no stamp for $DATA"
touch -r "$CB" "$TMP/mtime-ref"
poison "$CB"
chmod 0444 "$CB"
touch -r "$TMP/mtime-ref" "$CB"
rm -rf "$TMP/o2"
run "$ENVBUILD" -C "$P" build --cache-dir "$C2" -o "$TMP/o2"
expect_status 0 "build with a poisoned cached layer, mtime put back"
all_blobs_match "$TMP/o2/app/blobs/sha256" && ok "no poisoned byte reached the output" ||
	not_ok "a blob poisoned behind its old mtime was copied into the output"
all_blobs_match "$C2/blobs/sha256" && ok "the cache holds the rebuilt blob again" ||
	not_ok "the blob poisoned behind its old mtime is still in the cache"

# -- cache verify ---------------------------------------------------------
run "$ENVBUILD" cache verify --cache-dir "$CACHE"
expect_status 0 "cache verify on a sound cache"
poison "$CBLOB"
run "$ENVBUILD" cache verify --cache-dir "$CACHE"
expect_status 1 "cache verify finds a corrupt blob"
expect_out_contains "sha256:$DATA" "it names the blob"
[ ! -e "$CBLOB" ] && ok "and evicts it" || not_ok "the corrupt blob is still there"
run "$ENVBUILD" cache verify --cache-dir "$CACHE"
expect_status 0 "the cache is sound again"

# -- stale temporaries ---------------------------------------------------
mkdir -p "$CACHE/tmp/pystage-dead1"
head -c 1000 /dev/zero >"$CACHE/tmp/blob.dead01"
head -c 1000 /dev/zero >"$CACHE/tmp/blob.live01"
touch -d '2 hours ago' "$CACHE/tmp/blob.dead01" "$CACHE/tmp/blob.live01" "$CACHE/tmp/pystage-dead1"
# a live writer holds its temp locked
flock "$CACHE/tmp/blob.live01" sleep 30 &
HOLDER=$!
sleep 1
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build with stale temporaries"
[ ! -e "$CACHE/tmp/blob.dead01" ] && ok "a dead writer's blob temp is swept" ||
	not_ok "tmp/blob.dead01 left"
[ ! -e "$CACHE/tmp/pystage-dead1" ] && ok "a dead installer's staging dir is swept" ||
	not_ok "tmp/pystage-dead1 left"
[ -e "$CACHE/tmp/blob.live01" ] && ok "a locked (live) temp is kept" ||
	not_ok "a live writer's temp was removed"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null

# -- cache prune ---------------------------------------------------------
run "$ENVBUILD" cache prune --cache-dir "$CACHE" --older-than 1d
expect_status 0 "prune --older-than 1d"
[ -e "$CBLOB" ] && ok "a fresh blob stays" || not_ok "prune removed a fresh blob"
touch -d '3 days ago' "$CBLOB"
run "$ENVBUILD" cache prune --cache-dir "$CACHE" --older-than 2d
expect_status 0 "prune --older-than 2d"
[ ! -e "$CBLOB" ] && ok "an old blob goes" || not_ok "prune kept a 3-day-old blob"
run "$ENVBUILD" cache prune --cache-dir "$CACHE" --max-size 0
expect_status 0 "prune --max-size 0"
[ -z "$(ls "$CACHE/blobs/sha256")" ] && ok "--max-size 0 empties the blob store" ||
	not_ok "blobs left after --max-size 0"
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
[ "$STATUS" = 0 ] && [ "$(layers "$P/out/app" | tail -n 1)" = "$DATA" ] &&
	ok "a build after prune rebuilds the same layers" || not_ok "build after prune: exit $STATUS"

# -- three builds of one project at once ----------------------------------
rm -rf "$P/out"
for i in 1 2 3; do
	"$ENVBUILD" -C "$P" build --cache-dir "$CACHE" >"$TMP/c$i.out" 2>"$TMP/c$i.err" &
	eval "PID$i=\$!"
done
fails=0
for i in 1 2 3; do
	eval "wait \$PID$i" || { fails=$((fails + 1)); diag <"$TMP/c$i.err"; }
done
[ "$fails" = 0 ] && ok "three concurrent builds all succeed" || not_ok "$fails of 3 concurrent builds failed"
all_blobs_match "$P/out/app/blobs/sha256" && [ -f "$P/out/app/index.json" ] &&
	ok "and leave one sound layout" || not_ok "layout broken after concurrent builds"
finish
