#!/bin/sh
# layer_readers.sh - the real readers read every layer envbuild writes:
# gzip layers are multi-member streams (one member per 1 MiB chunk of the
# tar, oci/compress.h), which gzip -t, tar xz, Python's gzip, umoci
# unpack, skopeo copy (containers/image, decompressing) and podman pull
# and load (containers/storage, which checks each diff_id) must all take;
# zstd layers through skopeo, podman and zstd -t.  What they unpack is
# the tree that went in, and the layer bytes are the same on one CPU
# (taskset: the compressor uses the CPUs it may run on) and on all of
# them, from cold caches (1, 2, 4 and 8 threads: tests/unit/check_compress).
. "$(dirname "$0")/lib.sh"
for t in umoci skopeo podman gzip zstd taskset; do
	if ! command -v $t >/dev/null; then
		echo "1..0 # SKIP $t is not installed"
		exit 77
	fi
done
plan 21

P=$TMP/proj
mkdir -p "$P/tree/big" "$P/tree/small" "$P/more"
# ~5 MB of compressible, not trivially so, content: several 1 MiB chunks
python3 - "$P/tree" <<'PY'
import os, random, sys
r = random.Random(25)
words = [b"tensor", b"layer", b"wheel", b"nvidia", b"cuda", b"site-packages", b"\n"]
for i in range(5):
    with open(os.path.join(sys.argv[1], "big", "blob%d.bin" % i), "wb") as f:
        f.write(b" ".join(r.choice(words) for _ in range(150000)))
        f.write(os.urandom(0) + bytes(r.getrandbits(8) for _ in range(20000)))
for i in range(200):
    with open(os.path.join(sys.argv[1], "small", "f%03d.txt" % i), "w") as f:
        f.write("file %d\n" % i * (i + 1))
PY
echo more >"$P/more/m.txt"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: readers
targets:
  app:
    base: scratch
    files:
      - {src: tree/, dest: /tree/}
      - {src: more/, dest: /more/}
YAML

# layers LAYOUT TAG: "digest diff_id mediatype" per layer, from the layout
layers() {
	python3 - "$1" "$2" <<'PY'
import json, os, sys
lay, tag = sys.argv[1], sys.argv[2]
blob = lambda d: os.path.join(lay, "blobs", *d.split(":"))
idx = json.load(open(os.path.join(lay, "index.json")))
m = [x for x in idx["manifests"] if x.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag][0]
man = json.load(open(blob(m["digest"])))
if "manifests" in man:
    man = json.load(open(blob(man["manifests"][0]["digest"])))
cfg = json.load(open(blob(man["config"]["digest"])))
for l, d in zip(man["layers"], cfg["rootfs"]["diff_ids"]):
    print(l["digest"], d, l["mediaType"])
PY
}
# podman names an oci: image after its path, which must be lower case
LC=/tmp/envbuild-readers-$$
trap 'rm -rf "$TMP" "$LC"' EXIT
blobpath() { echo "$1/blobs/$(echo "$2" | tr : /)"; }
PODMAN="podman --root $TMP/pod/root --runroot $TMP/pod/run --storage-driver vfs --events-backend file --cgroup-manager cgroupfs"

run taskset -c 0 "$ENVBUILD" -C "$P" build --cache-dir "$TMP/c1" --compression gzip
expect_status 0 "gzip build on one CPU"
cp -a "$P/out/app" "$TMP/one"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/c8" --compression gzip
expect_status 0 "gzip build on all CPUs ($(nproc))"
layers "$TMP/one" app >"$TMP/l1"
layers "$P/out/app" app >"$TMP/l8"
if [ -s "$TMP/l1" ] && cmp -s "$TMP/l1" "$TMP/l8"; then
	ok "the same layer digests on one CPU and on all ($(wc -l <"$TMP/l1") layers)"
else
	not_ok "layer digests differ with the CPU count"; diff "$TMP/l1" "$TMP/l8" | diag
fi
L=$P/out/app

# gzip -t, Python's gzip (sha256 of what it reads = diff_id, more than
# one member in the big layer) and tar xz into one tree
bad=""; members=0
[ -s "$TMP/l8" ] || bad=" no-layers"
mkdir -p "$TMP/x"
while read -r dg di mt; do
	b=$(blobpath "$L" "$dg")
	gzip -t "$b" || bad="$bad gzip-t:$dg"
	got=$(python3 -c 'import gzip,hashlib,sys; print("sha256:"+hashlib.sha256(gzip.open(sys.argv[1]).read()).hexdigest())' "$b")
	[ "$got" = "$di" ] || bad="$bad python:$dg"
	n=$(python3 -c '
import sys, zlib
data, n = open(sys.argv[1], "rb").read(), 0
while data:
    d = zlib.decompressobj(31); d.decompress(data); data = d.unused_data; n += 1
print(n)' "$b")
	[ "$n" -gt "$members" ] && members=$n
	tar -xzf "$b" -C "$TMP/x" || bad="$bad tar:$dg"
done <"$TMP/l8"
[ -z "$bad" ] && ok "gzip -t, Python's gzip (= diff_id) and tar xz read every layer" ||
	not_ok "readers failed:$bad"
[ "$members" -gt 1 ] && ok "the big layer is a multi-member gzip stream ($members members)" ||
	not_ok "members: $members"
diff -r "$P/tree" "$TMP/x/tree" >"$TMP/d" 2>&1 && diff -r "$P/more" "$TMP/x/more" >>"$TMP/d" 2>&1 &&
	ok "tar xz gives back the tree" || { not_ok "tar xz tree differs"; diag <"$TMP/d"; }

run umoci unpack --image "$L:app" "$TMP/u"
expect_status 0 "umoci unpack"
diff -r "$P/tree" "$TMP/u/rootfs/tree" >"$TMP/d" 2>&1 && ok "umoci's rootfs is the tree" ||
	{ not_ok "umoci rootfs differs"; diag <"$TMP/d"; }

run skopeo copy --dest-decompress "oci:$L:app" "dir:$TMP/sk"
expect_status 0 "skopeo copy --dest-decompress (containers/image gunzips every layer)"
bad=""
[ -s "$TMP/l8" ] || bad=" no-layers"
while read -r dg di mt; do
	[ -f "$TMP/sk/${di#sha256:}" ] || bad="$bad $di"
done <"$TMP/l8"
[ -z "$bad" ] && ok "skopeo's decompressed blobs are the diff_ids" ||
	{ not_ok "skopeo blobs missing:$bad"; ls "$TMP/sk" | diag; }

ln -sfn "$L" "$LC"
run $PODMAN pull "oci:$LC:app"
expect_status 0 "podman pull (containers/storage checks every diff_id)"
run $PODMAN image inspect --format '{{range .RootFS.Layers}}{{println .}}{{end}}' "$(echo "$OUT" | tail -n 1)"
awk '{ print $2 }' "$TMP/l8" >"$TMP/want"
grep . "$TMP/out" >"$TMP/got" || true
cmp -s "$TMP/want" "$TMP/got" && ok "podman's rootfs layers are envbuild's diff_ids" ||
	{ not_ok "podman layers differ"; diff "$TMP/want" "$TMP/got" | diag; }
run skopeo copy "oci:$L:app" "docker-archive:$TMP/app.tar:readers:app"
expect_status 0 "skopeo copy to a docker-archive"
run $PODMAN load -i "$TMP/app.tar"
expect_status 0 "podman load of that archive"

# zstd layers: the same thread independence and the same clients
run taskset -c 0 "$ENVBUILD" -C "$P" build --cache-dir "$TMP/z1" --compression zstd
expect_status 0 "zstd build on one CPU"
layers "$P/out/app" app >"$TMP/z1l"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/z8" --compression zstd
expect_status 0 "zstd build on all CPUs"
layers "$P/out/app" app >"$TMP/z8l"
if grep -q zstd "$TMP/z1l" && cmp -s "$TMP/z1l" "$TMP/z8l"; then
	ok "the same zstd layer digests on one CPU and on all"
else
	not_ok "zstd layer digests differ"; diff "$TMP/z1l" "$TMP/z8l" | diag
fi
bad=""
[ -s "$TMP/z8l" ] || bad=" no-layers"
while read -r dg di mt; do
	zstd -t -q "$(blobpath "$L" "$dg")" || bad="$bad $dg"
done <"$TMP/z8l"
[ -z "$bad" ] && ok "zstd -t reads every layer" || not_ok "zstd -t failed:$bad"
run skopeo copy --dest-decompress "oci:$L:app" "dir:$TMP/skz"
expect_status 0 "skopeo copy --dest-decompress of the zstd image"
ln -sfn "$L" "$LC"
run $PODMAN pull "oci:$LC:app"
expect_status 0 "podman pull of the zstd image"
run $PODMAN image inspect --format '{{range .RootFS.Layers}}{{println .}}{{end}}' "$(echo "$OUT" | tail -n 1)"
awk '{ print $2 }' "$TMP/z8l" >"$TMP/want"
grep . "$TMP/out" >"$TMP/got" || true
cmp -s "$TMP/want" "$TMP/got" && ok "podman's rootfs layers are the zstd image's diff_ids" ||
	{ not_ok "podman zstd layers differ"; diff "$TMP/want" "$TMP/got" | diag; }
$PODMAN rmi -a -f >/dev/null 2>&1 || true
finish
