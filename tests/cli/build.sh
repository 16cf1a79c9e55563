#!/bin/sh
# build.sh - `envbuild build` end to end on a real base (Debian bookworm
# minbase + python3 from debootstrap, packed by umoci), checked with the
# independent tools: skopeo reads and copies every layout, umoci unpacks
# it, and the image's entrypoint runs in a chroot.  Also: bit-for-bit
# reproducibility across directories, umask, mtimes and creation order; a
# layer shared by two targets stored once; bad inputs leave nothing behind.
. "$(dirname "$0")/lib.sh"
plan 51

need_base
ok "base image: debootstrap bookworm + python3, packed by umoci"
CACHE=$TMP/cache

# a project dir from the example, built on the test base
mkproject() {
	mkdir -p "$1"
	cp -r "$top_srcdir/tests/fixtures/churn-python/." "$1/"
	# the example's pins are exactly the wheels Debian ships
	sed -i -e "s|base: python:3.11-slim-bookworm|base: oci:$BASE:bookworm-python3|" \
		-e "s|^index: .*|index: /usr/share/python-wheels|" "$1/envbuild.yaml"
}

digest_of() { # target, from the last json build output
	python3 -c 'import json,sys; print({t["name"]: t["digest"] for t in json.load(open(sys.argv[1]))["targets"]}[sys.argv[2]])' "$TMP/out" "$1"
}

mkproject "$TMP/a"
run "$ENVBUILD" -C "$TMP/a" build --cache-dir "$CACHE" --format=json
expect_status 0 "build training and inference"
TRAIN=$(digest_of training)
INFER=$(digest_of inference)
[ -d "$TMP/a/out/training" ] && [ -d "$TMP/a/out/inference" ] && ok "one layout per target in out/" ||
	not_ok "layouts missing"

# -- independent readers --------------------------------------------------
for t in training inference; do
	run skopeo inspect "oci:$TMP/a/out/$t:$t"
	expect_status 0 "skopeo inspect oci:out/$t"
done
skopeo inspect "oci:$TMP/a/out/training:training" | grep -q "\"Digest\": \"$TRAIN\"" &&
	ok "skopeo sees the digest envbuild reported" || not_ok "digest differs in skopeo"
run skopeo copy -q "oci:$TMP/a/out/inference:inference" "oci:$TMP/copy:inference"
expect_status 0 "skopeo copy oci: -> oci:"
skopeo inspect "oci:$TMP/copy:inference" | grep -q "\"Digest\": \"$INFER\"" &&
	ok "the copy keeps the digest (skopeo re-wrote nothing)" || not_ok "copy changed the digest"

run umoci unpack --image "$TMP/a/out/inference:inference" "$TMP/bundle"
expect_status 0 "umoci unpack"
[ -f "$TMP/bundle/rootfs/app/churn/serve.py" ] && [ -f "$TMP/bundle/rootfs/models/model.json" ] &&
	ok "copied files are in the rootfs" || not_ok "copied files missing"
[ ! -e "$TMP/bundle/rootfs/app/churn/train.py" ] && ok "exclude pattern left train.py out" ||
	not_ok "train.py was not excluded"
stat -c '%u:%g %a' "$TMP/bundle/rootfs/app/churn/serve.py" | grep -qx '0:0 644' &&
	ok "files are root-owned 0644 whatever the host" || not_ok "ownership/mode not normalised"

# run the entrypoint as the image says: args, env and cwd from the config
cat >"$TMP/run.py" <<'PY'
import json, os, sys
b = sys.argv[1]
c = json.load(open(os.path.join(b, "config.json")))["process"]
env = dict(e.split("=", 1) for e in c["env"])
pid = os.fork()
if pid == 0:
    os.chroot(os.path.join(b, "rootfs"))
    os.chdir(c["cwd"])
    os.setgid(c["user"]["gid"]); os.setuid(c["user"]["uid"])
    os.execvpe(c["args"][0], c["args"] + sys.argv[2:], env)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
PY
if [ "$(id -u)" -eq 0 ]; then
	run python3 "$TMP/run.py" "$TMP/bundle" --once
	expect_status 0 "the inference entrypoint runs in a chroot (as uid 1000)"
	expect_out_contains '{"p": ' "it loaded /models/model.json through MODEL_DIR and answered"
else
	not_ok "chroot needs root"; not_ok "chroot needs root"
fi

# training: env and workdir
umoci unpack --image "$TMP/a/out/training:training" "$TMP/tbundle" >/dev/null 2>&1
if [ "$(id -u)" -eq 0 ]; then
	run sh -c "cd '$TMP/tbundle/rootfs' && chroot . /usr/bin/env -i PATH=/usr/bin:/bin LEARNING_RATE=0.001 MODEL_DIR=/tmp/m sh -c 'cd /app && python3 -m churn.train'"
	expect_status 0 "the training code runs in its image"
else
	not_ok "chroot needs root"
fi
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["process"]["env"]; assert "LEARNING_RATE=0.001" in e and any(x.startswith("PATH=") for x in e), e' "$TMP/tbundle/config.json" &&
	ok "target env is merged over the base's (PATH kept)" || not_ok "env merge wrong"

# -- inspect ---------------------------------------------------------------
run "$ENVBUILD" inspect "$TMP/a/out/inference:inference"
expect_status 0 "inspect"
expect_out_contains "envbuild: files model/ -> /models/" "inspect shows what each layer holds"
run "$ENVBUILD" inspect --format=json "$TMP/a/out/inference"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["digest"]==sys.argv[2] and d["images"][0]["config"]["user"]=="1000:1000"' "$TMP/out" "$INFER" &&
	ok "inspect --format=json" || not_ok "inspect json wrong"

# -- reproducibility -------------------------------------------------------
# b: another directory, umask 077, files created in reverse order, shuffled mtimes
mkdir -p "$TMP/b"
(umask 077 && cd "$top_srcdir/tests/fixtures/churn-python" && find . -type f | sort -r | while read -r f; do
	mkdir -p "$TMP/b/$(dirname "$f")"; cp "$f" "$TMP/b/$f"; done)
sed -i -e "s|base: python:3.11-slim-bookworm|base: oci:$BASE:bookworm-python3|" \
	-e "s|^index: .*|index: /usr/share/python-wheels|" "$TMP/b/envbuild.yaml"
i=0; find "$TMP/b" -type f | while read -r f; do i=$((i + 1)); touch -d "@$((1000000 + i * 7919))" "$f"; done
run "$ENVBUILD" -C "$TMP/b" build --cache-dir "$TMP/cache-b" --format=json
expect_status 0 "second build elsewhere (umask 077, shuffled mtimes, reverse creation order, cold cache)"
[ "$(digest_of training)" = "$TRAIN" ] && [ "$(digest_of inference)" = "$INFER" ] &&
	ok "identical digests: bit-for-bit reproducible" || not_ok "digests differ: $(digest_of training) vs $TRAIN"
cmp -s "$TMP/a/out/training/index.json" "$TMP/b/out/training/index.json" &&
	ok "identical index.json" || not_ok "index.json differs"

# c: one file changed -> only that layer differs
mkproject "$TMP/c"
echo "# changed" >>"$TMP/c/model/model.json"
run "$ENVBUILD" -C "$TMP/c" build --cache-dir "$CACHE" --format=json
python3 - "$TMP/out" "$TMP/a" "$TMP/c" <<'PY' && ok "a changed model file changes only the /models layer" || not_ok "layer diff wrong"
import json, sys
def layers(d, t):
    idx = json.load(open(f"{d}/out/{t}/index.json"))["manifests"][0]["digest"].split(":")[1]
    m = json.load(open(f"{d}/out/{t}/blobs/sha256/{idx}"))
    return [l["digest"] for l in m["layers"]]
a, c = layers(sys.argv[2], "inference"), layers(sys.argv[3], "inference")
diff = [i for i in range(len(a)) if a[i] != c[i]]
assert len(a) == len(c) == 4 and diff == [3], (a, c)
assert layers(sys.argv[2], "training") == layers(sys.argv[3], "training")
PY
jq_cached=$(python3 -c 'import json,sys; print(sum(l["cached"] for t in json.load(open(sys.argv[1]))["targets"] for p in t["platforms"] for l in p["layers"]))' "$TMP/out")
# training: packages + src; inference: packages + src/churn (the model changed)
[ "$jq_cached" -eq 4 ] && ok "unchanged layers came from the layer cache (4 cached)" || not_ok "cached layers: $jq_cached"

# a layer both targets contain is one blob
mkproject "$TMP/s"
cat >"$TMP/s/envbuild.yaml" <<YAML
version: 1
name: shared
targets:
  training:
    base: oci:$BASE:bookworm-python3
    files: [{ src: model/, dest: /models/ }, { src: src/, dest: /app/ }]
  inference:
    base: oci:$BASE:bookworm-python3
    files: [{ src: model/, dest: /models/ }]
YAML
run "$ENVBUILD" -C "$TMP/s" build --cache-dir "$TMP/cache-s" --format=json
python3 - "$TMP/out" <<'PY' && ok "the shared /models layer is byte-identical in both images" || not_ok "shared layer differs"
import json, sys
t = {t["name"]: t["platforms"][0]["layers"] for t in json.load(open(sys.argv[1]))["targets"]}
assert t["training"][1]["digest"] == t["inference"][1]["digest"]
PY
n=$(ls "$TMP/cache-s/blobs/sha256" | wc -l)
# base layer + shared layer + app layer + 2 configs + 2 manifests + the
# base's file-tree view (a "basefs" cache record's blob) = 8
[ "$n" -eq 8 ] && ok "stored once in the cache (8 blobs)" || not_ok "cache holds $n blobs, want 8"

# scratch base, two platforms: an index over two manifests, no emulation
mkdir -p "$TMP/m/rootfs/etc"
echo "hello" >"$TMP/m/rootfs/etc/motd"
cat >"$TMP/m/envbuild.yaml" <<YAML
version: 1
name: multi
platforms: [linux/amd64, linux/arm64]
targets:
  app:
    base: scratch
    files: [{ src: rootfs/, dest: / }]
    cmd: [/bin/true]
YAML
run "$ENVBUILD" -C "$TMP/m" build --cache-dir "$TMP/cache-m"
expect_status 0 "scratch base, linux/amd64 + linux/arm64"
skopeo inspect --raw "oci:$TMP/m/out/app:app" | grep -q 'application/vnd.oci.image.index.v1+json' &&
	ok "the target is an image index" || not_ok "not an index"
run skopeo inspect --override-arch arm64 "oci:$TMP/m/out/app:app"
expect_out_contains '"Architecture": "arm64"' "skopeo picks the arm64 manifest"
run "$ENVBUILD" inspect "$TMP/m/out/app"
expect_out_contains "platform   linux/arm64" "inspect lists every platform"
run skopeo copy -q --all "oci:$TMP/m/out/app:app" "oci:$TMP/mcopy:app"
expect_status 0 "skopeo copies the whole index"

# -- outputs ---------------------------------------------------------------
run "$ENVBUILD" -C "$TMP/a" build --cache-dir "$CACHE" --target inference --output "type=docker-archive,dest=$TMP/inf.tar"
expect_status 0 "docker-archive output"
run skopeo inspect "docker-archive:$TMP/inf.tar"
expect_status 0 "skopeo reads the docker-archive"
run "$ENVBUILD" -C "$TMP/a" build --cache-dir "$CACHE" --target training --compression zstd --output "$TMP/zst"
expect_status 0 "zstd layers"
run skopeo copy -q "oci:$TMP/zst/training:training" "oci:$TMP/zcopy:t"
expect_status 0 "skopeo copies the zstd image"
# the lock names the compressor that made the bytes, not only the format
comp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"]["training"]["image"]["compressor"])' "$TMP/a/envbuild.lock" 2>&1)
case $comp in zstd/*/mt-1m/3) ok "the lock records the compressor ($comp)" ;; *) not_ok "lock compressor: $comp" ;; esac

# -- bad input: clear error, nothing half-written --------------------------
mkproject "$TMP/bad1"
rm -rf "$TMP/bad1/model"
run "$ENVBUILD" -C "$TMP/bad1" build --cache-dir "$CACHE"
expect_status 1 "a missing src is refused"
expect_err_contains "envbuild.yaml:28:16: error: 'src' of target 'inference' does not exist: 'model/' [EB012]" "with the spec position"
[ ! -e "$TMP/bad1/out" ] && ok "no output directory left behind" || not_ok "out/ was created"

mkproject "$TMP/bad2"
mkfifo "$TMP/bad2/model/pipe"
run "$ENVBUILD" -C "$TMP/bad2" build --cache-dir "$CACHE"
expect_status 1 "a fifo in a src tree is refused"
expect_err_contains "pipe" "the special file is named"
[ ! -e "$TMP/bad2/out/inference" ] && ok "no inference layout left behind" || not_ok "inference layout was written"

# an unreadable file (as an unprivileged user: root reads anything)
mkproject "$TMP/bad3"
# (no requirements either: sources plan before they write, so the missing
# Python on scratch would be reported before any file is read)
sed -i -e "s|base: oci:.*|base: scratch|" -e "/requirements: \[requirements-infer.txt\]/d" "$TMP/bad3/envbuild.yaml"
chmod -R a+rwX "$TMP/bad3"
chmod 000 "$TMP/bad3/model/model.json"
chmod a+rx "$TMP"
# (--target inference: training's missing Python on scratch would be
# reported first)
# the binaries go where that user can reach them: the build tree may be in
# a directory only root can search (a `mktemp -d` clone), and setpriv's own
# exec still has root's capabilities, the front's exec of envbuild-full not
mkdir -p "$TMP/bin"
cp "$ENVBUILD" "$(dirname "$ENVBUILD")/envbuild-full" "$TMP/bin/"
chmod a+rx "$TMP/bin" "$TMP/bin/envbuild" "$TMP/bin/envbuild-full"
run setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/bin/envbuild" -C "$TMP/bad3" build --target inference --cache-dir "$TMP/bad3/cache"
expect_err_contains "envbuild.yaml:27:16: error: cannot read 'model/model.json': Permission denied" "an unreadable file: error at the spec entry"
[ ! -e "$TMP/bad3/out/inference" ] && ok "no inference layout left behind" || not_ok "inference layout was written"

# a full disk: the cache on a 2 MiB tmpfs, the base layer does not fit
if [ "$(id -u)" -eq 0 ] && mkdir -p "$TMP/tiny" && mount -t tmpfs -o size=2m tmpfs "$TMP/tiny" 2>/dev/null; then
	run "$ENVBUILD" -C "$TMP/a" build --cache-dir "$TMP/tiny/cache" --output "$TMP/tiny/out"
	expect_status 2 "a full disk fails the build (an I/O error: exit 2)"
	expect_err_contains "No space left on device" "with the reason"
	[ ! -e "$TMP/tiny/out/training" ] && [ ! -e "$TMP/tiny/out/inference" ] &&
		ok "no layout left on the full disk" || not_ok "a layout was left"
	bad=0
	for f in "$TMP/tiny/cache/blobs/sha256/"*; do
		[ -f "$f" ] || continue
		[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || bad=1
	done
	[ "$bad" -eq 0 ] && ok "every blob in the cache matches its name" || not_ok "a corrupt blob is in the cache"
	umount "$TMP/tiny"
else
	not_ok "cannot mount a tmpfs (needs root)"; not_ok "-"; not_ok "-"; not_ok "-"
fi
# the output on a full disk (the cache has room): the layout's blob copies
# fail with the reason, and no layout is left half-written
if [ "$(id -u)" -eq 0 ] && mkdir -p "$TMP/tiny2" && mount -t tmpfs -o size=2m tmpfs "$TMP/tiny2" 2>/dev/null; then
	run "$ENVBUILD" -C "$TMP/a" build --cache-dir "$TMP/fullout-cache" --output "$TMP/tiny2/out"
	expect_status 2 "an output on a full disk fails the build (exit 2)"
	expect_err_contains "No space left on device" "with the reason"
	left=$(ls -A "$TMP/tiny2/out" 2>/dev/null | grep -vx '.gitignore')
	[ -z "$left" ] && ok "no layout or temporary directory left in the full output directory" ||
		not_ok "left in the full output directory: $left"
	umount "$TMP/tiny2"
else
	not_ok "cannot mount a tmpfs (needs root)"; not_ok "-"; not_ok "-"
fi
finish
