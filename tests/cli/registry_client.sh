#!/bin/sh
# registry_client.sh - the registry client (src/registry/client.c) against
# the real distribution registry, driven through tests/helpers/registry-tool
# and checked with skopeo: push round trips (plain HTTP, TLS + basic auth
# with a CA and a docker config.json, token auth), pulls of bases that skopeo
# pushed in OCI and Docker v2s2 form (single images and multi-platform
# indexes), pull mirrors, blob dedup across images, mounts, blobs from
# sources on another registry, faults injected by the fault proxy (5xx,
# 429 + Retry-After, cut uploads, a slow registry, a failing manifest PUT
# that must leave the tag unwritten), and chunked uploads resumed from the
# registry's Range.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"
: "${REGISTRY_TOOL:=$top_builddir/tests/helpers/registry-tool}"

plan 123
for t in docker-registry skopeo umoci openssl curl python3; do
	command -v "$t" >/dev/null 2>&1 || { not_ok "$t is not installed (scripts/install-deps)"; finish; }
done
[ -x "$REGISTRY_TOOL" ] || { not_ok "no test driver at $REGISTRY_TOOL (make check builds it)"; finish; }
ok "tools and the registry-tool driver are there"

# Faults are retried: keep the backoff short so the test is quick.
ENVBUILD_HTTP_BACKOFF_MS=100
export ENVBUILD_HTTP_BACKOFF_MS
# Never the user's credentials or mirrors.
unset REGISTRY_AUTH_FILE ENVBUILD_MIRRORS ENVBUILD_CERTS_D
DOCKER_CONFIG=$TMP/no-docker-config
export DOCKER_CONFIG
mkdir -p "$DOCKER_CONFIG"

tool() { "$REGISTRY_TOOL" "$@"; }
# mkimage DIR: an OCI layout DIR:t with one layer of fresh random bytes
# (SIZE, default 150000), so no registry nor skopeo's blob-info cache has
# seen its blobs.
mkimage() {
	head -c "${2:-150000}" /dev/urandom >"$TMP/rnd.bin"
	umoci init --layout "$1" >/dev/null 2>&1 &&
		umoci new --image "$1:t" >/dev/null 2>&1 &&
		umoci insert --image "$1:t" "$TMP/rnd.bin" /data/rnd.bin >/dev/null 2>&1
}
# derive SRC DST: DST is SRC plus one more random layer (they share SRC's)
derive() {
	cp -r "$1" "$2" && head -c 120000 /dev/urandom >"$TMP/rnd2.bin" &&
		umoci insert --image "$2:t" "$TMP/rnd2.bin" /data/more.bin >/dev/null 2>&1
}
digest_of() { sed -n 's/^ *"Digest": "\(sha256:[0-9a-f]*\)".*/\1/p' | head -n 1; }
layout_digest() { skopeo inspect "oci:$1:t" | digest_of; }
first_layer() { skopeo inspect "oci:$1:t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Layers"][0])'; }
# result line of a push: "result uploaded=N mounted=N existing=N ..."
result() { grep '^result ' "$TMP/out"; }
expect_result() { # TEXT NAME
	if result | grep -q -- "$1"; then ok "$2"; else
		not_ok "$2: result lacks '$1'"
		{ echo "stdout:"; cat "$TMP/out"; echo "stderr:"; cat "$TMP/err"; } | diag
	fi
}
# count_log METHOD ERE [STATUS]: requests in the fault proxy's log
count_log() { fault_proxy_count "$@"; }
clear_log() { : >"$FAULT_PROXY_LOG"; }
# copy_back SKOPEO_ARGS... REF DIGEST NAME: skopeo copies the image out of
# the registry (checking every blob's digest on the way) and sees DIGEST
copy_back() {
	_ref=$1 _want=$2 _name=$3
	shift 3
	rm -rf "$TMP/back"
	if skopeo copy -q "$@" "docker://$_ref" "oci:$TMP/back:t" >"$TMP/sk.out" 2>&1 &&
		[ "$(skopeo inspect "oci:$TMP/back:t" | digest_of)" = "$_want" ]; then
		ok "$_name"
	else
		not_ok "$_name"
		diag <"$TMP/sk.out"
	fi
}

# -- plain HTTP: push round trip -------------------------------------------
registry_start plain || { not_ok "registry/start plain"; finish; }
P=$REGISTRY
P_URL=$REGISTRY_URL
mkimage "$TMP/a"
A=$(layout_digest "$TMP/a")
run tool --events --cache "$TMP/cache" push "$TMP/a:t" "$P/rt/a:v1" "$P/rt/a:latest"
expect_status 0 "plain: push an image with two tags"
expect_result "uploaded=2 mounted=0 existing=0" "plain: config and layer uploaded"
expect_result "manifests=1 tags=2" "plain: the manifest by digest, then both tags"
grep -q "^top .* $A\$" "$TMP/out" && ok "plain: the pushed top is the layout's manifest" ||
	not_ok "plain: top digest differs from the layout's $A"
n_tag=$(grep -c '^event tag' "$TMP/out")
last_manifest=$(grep -n '^event manifest' "$TMP/out" | tail -n 1 | cut -d: -f1)
first_tag=$(grep -n '^event tag' "$TMP/out" | head -n 1 | cut -d: -f1)
[ "$n_tag" -eq 2 ] && [ "$last_manifest" -lt "$first_tag" ] &&
	ok "plain: tags are put after the manifest" || not_ok "plain: event order wrong"
run skopeo inspect --tls-verify=false "docker://$P/rt/a:v1"
[ "$(printf '%s\n' "$OUT" | digest_of)" = "$A" ] && ok "plain: skopeo inspect sees the same digest" ||
	not_ok "plain: skopeo sees another digest"
copy_back "$P/rt/a:latest" "$A" "plain: skopeo copies it back, every blob verified" --src-tls-verify=false
run tool resolve "$P/rt/a:v1"
expect_out_contains "$A application/vnd.oci.image.manifest.v1+json" "plain: resolve a tag (HEAD)"
run tool resolve "$P/rt/a@$A"
expect_out_contains "$A " "plain: resolve by digest"
run tool manifest "$P/rt/a:v1" "$TMP/m.json"
[ "sha256:$(sha256sum <"$TMP/m.json" | cut -d' ' -f1)" = "$A" ] &&
	ok "plain: get_manifest returns the exact bytes" || not_ok "plain: manifest bytes differ"
run tool --events --cache "$TMP/cache" push "$TMP/a:t" "$P/rt/a:v1"
expect_result "uploaded=0 mounted=0 existing=2" "plain: a second push uploads no blob"
run tool resolve "$P/rt/a:nope"
expect_status 1 "plain: resolving a missing tag fails"
expect_err_contains "MANIFEST_UNKNOWN" "plain: with the registry's error code"
run tool manifest "$P/rt/a@sha256:0000000000000000000000000000000000000000000000000000000000000000" -
expect_status 1 "plain: a missing digest fails"

# -- pulls of bases skopeo pushed ------------------------------------------
mkimage "$TMP/b" 200000
B=$(layout_digest "$TMP/b")
skopeo copy -q --dest-tls-verify=false "oci:$TMP/b:t" "docker://$P/base/oci:1" >/dev/null 2>&1
skopeo copy -q --dest-tls-verify=false --format v2s2 "oci:$TMP/b:t" "docker://$P/base/v2:1" >/dev/null 2>&1
V2=$(skopeo inspect --tls-verify=false "docker://$P/base/v2:1" | digest_of)
run tool pull --layers "$P/base/oci:1" - "$TMP/pull1"
expect_status 0 "pull: OCI image skopeo pushed"
expect_out_contains "top $B application/vnd.oci.image.manifest.v1+json" "pull: OCI top document and its type"
expect_out_contains "present" "pull: layers streamed into the blob store"
bad=0
for f in "$TMP/pull1/blobs/sha256/"*; do
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || bad=1
done
[ "$bad" -eq 0 ] && ok "pull: every blob in the store matches its name" || not_ok "pull: a blob does not match"
run tool pull --layers "$P/base/v2:1" linux/amd64 "$TMP/pull2"
expect_status 0 "pull: Docker v2s2 image skopeo pushed (--format v2s2)"
expect_out_contains "top $V2 application/vnd.docker.distribution.manifest.v2+json" "pull: v2s2 top and type"
if grep -q ' absent$' "$TMP/out"; then not_ok "pull: v2s2 layer missing"; else ok "pull: v2s2 layers present"; fi
run tool pull "$P/base/v2:1" linux/arm64 "$TMP/pull2"
expect_status 1 "pull: a single image for another platform is refused"

# a multi-platform index (envbuild, scratch base), pushed by skopeo --all
mkdir -p "$TMP/mp/rootfs"
head -c 50000 /dev/urandom >"$TMP/mp/rootfs/blob.bin"
cat >"$TMP/mp/envbuild.yaml" <<YAML
version: 1
name: mp
platforms: [linux/amd64, linux/arm64]
targets:
  app:
    base: scratch
    files: [{ src: rootfs/, dest: / }]
    cmd: [/bin/true]
YAML
"$ENVBUILD" -C "$TMP/mp" build --cache-dir "$TMP/mpcache" >/dev/null 2>&1
skopeo copy -q --all --dest-tls-verify=false "oci:$TMP/mp/out/app:app" "docker://$P/base/multi:1" >/dev/null 2>&1
skopeo copy -q --all --format v2s2 --dest-tls-verify=false "oci:$TMP/mp/out/app:app" \
	"docker://$P/base/multilist:1" >"$TMP/sk.out" 2>&1
IDX=$(skopeo inspect --raw --tls-verify=false "docker://$P/base/multi:1" | sha256sum | cut -d' ' -f1)
ARM=$(skopeo inspect --raw --tls-verify=false "docker://$P/base/multi:1" |
	python3 -c 'import json,sys; print([m["digest"] for m in json.load(sys.stdin)["manifests"] if m["platform"]["architecture"]=="arm64"][0])')
run tool pull --layers "$P/base/multi:1" linux/arm64 "$TMP/pull3"
expect_status 0 "pull: OCI index, linux/arm64"
expect_out_contains "top sha256:$IDX application/vnd.oci.image.index.v1+json" "pull: the top is the index"
expect_out_contains "manifest $ARM" "pull: the arm64 manifest chosen by eb_index_select"
expect_out_contains "platform linux/arm64" "pull: its config says arm64"
run tool pull "$P/base/multi:1" - "$TMP/pull3"
expect_status 1 "pull: an index without a platform asks for one"
expect_err_contains "choose one" "pull: naming the platforms"
run tool pull --layers "$P/base/multilist:1" linux/amd64 "$TMP/pull4"
expect_status 0 "pull: Docker manifest list (skopeo --all --format v2s2), linux/amd64"
expect_out_contains "application/vnd.docker.distribution.manifest.list.v2+json" "pull: the top is a manifest list"
expect_out_contains "platform linux/amd64" "pull: amd64 config"
L=$(first_layer "$TMP/b")
LSIZE=$(skopeo inspect --raw "oci:$TMP/b:t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["size"])')
run tool fetch-blob "$P/base/oci" "$L" "$LSIZE" "$TMP/fetch"
expect_status 0 "fetch_blob: one layer"
[ "sha256:$(sha256sum <"$TMP/fetch/blobs/sha256/${L#sha256:}" | cut -d' ' -f1)" = "$L" ] &&
	ok "fetch_blob: stored under its digest" || not_ok "fetch_blob: bad blob"
run tool fetch-blob "$P/base/oci" "$L" "$((LSIZE - 1))" "$TMP/fetch2"
expect_status 1 "fetch_blob: a blob longer than its descriptor is refused"
[ ! -e "$TMP/fetch2/blobs/sha256/${L#sha256:}" ] && ok "fetch_blob: and nothing is stored" ||
	not_ok "fetch_blob: a wrong blob was stored"

# -- mirrors ----------------------------------------------------------------
skopeo copy -q --dest-tls-verify=false "oci:$TMP/b:t" "docker://$P/hub/library/mirrored:1" >/dev/null 2>&1
cat >"$TMP/mirrors.yaml" <<YAML
version: 1
registries:
  docker.io:
    mirrors:
      - 127.0.0.1:1        # nothing listens here: the next one is tried
      - $P/hub
YAML
run env ENVBUILD_HTTP_ATTEMPTS=1 "$REGISTRY_TOOL" --mirrors "$TMP/mirrors.yaml" pull --layers mirrored:1 - "$TMP/pull5"
expect_status 0 "mirrors: docker.io/library/mirrored:1 pulled from the second mirror"
expect_out_contains "top $B " "mirrors: the same image"
run env ENVBUILD_HTTP_ATTEMPTS=1 ENVBUILD_MIRRORS="$TMP/mirrors.yaml" "$REGISTRY_TOOL" resolve docker.io/library/mirrored:1
expect_out_contains "$B " "mirrors: \$ENVBUILD_MIRRORS names the file; resolve uses it"
printf '{"registries": {"docker.io": {"mirrors": ["%s/hub"]}}}\n' "$P" >"$TMP/mirrors.json"
run tool --mirrors "$TMP/mirrors.json" resolve library/mirrored:1
expect_out_contains "$B " "mirrors: a JSON file works too"
cat >"$TMP/bad.yaml" <<YAML
registries:
  docker.io:
    mirors: [127.0.0.1:5000]
YAML
run tool --mirrors "$TMP/bad.yaml" resolve mirrored:1
expect_status 1 "mirrors: a misspelt key is an error"
expect_err_contains "bad.yaml:3:5: unknown key 'mirors' in registry 'docker.io'" "mirrors: at file:line:col"
printf 'registries:\n  docker.io:\n    mirrors: ["http://127.0.0.1:5000"]\n' >"$TMP/bad2.yaml"
run tool --mirrors "$TMP/bad2.yaml" resolve mirrored:1
expect_err_contains "must not have a scheme" "mirrors: a mirror with a scheme is refused"

# mirrors are for pulls: a push goes to the registry the reference names
registry_start plain || { not_ok "registry/start plain (mirror)"; finish; }
MIRROR=$REGISTRY
printf 'registries:\n  "%s":\n    mirrors: ["%s"]\n' "$P" "$MIRROR" >"$TMP/pm.yaml"
mkimage "$TMP/pm"
run tool --mirrors "$TMP/pm.yaml" --cache "$TMP/cache" push "$TMP/pm:t" "$P/rt/pm:1"
expect_status 0 "mirrors: push with a mirror configured for the target"
skopeo inspect --tls-verify=false "docker://$P/rt/pm:1" >/dev/null 2>&1 &&
	! skopeo inspect --tls-verify=false "docker://$MIRROR/rt/pm:1" >/dev/null 2>&1 &&
	ok "mirrors: the image went to the registry, not to its mirror" || not_ok "mirrors: push used the mirror"
registry_stop "$REGISTRY_STATE"

# -- sharing, dedup and the proxy's request log ----------------------------
REGISTRY_URL=$P_URL # the proxy fronts the first plain registry
fault_proxy_start || { not_ok "fault proxy"; finish; }
FP=$FAULT_PROXY
mkimage "$TMP/c"
derive "$TMP/c" "$TMP/d"
D=$(layout_digest "$TMP/d")
SHARED=$(first_layer "$TMP/c")
clear_log
run tool --events --cache "$TMP/cache" push "$TMP/c:t" "$FP/rt/shared:c" + "$TMP/d:t" "$FP/rt/shared:d"
expect_status 0 "dedup: two images sharing a layer pushed in one call"
expect_result "uploaded=4 mounted=0 existing=0" "dedup: 2 configs + 2 distinct layers uploaded"
[ "$(count_log PUT "digest=$SHARED" 201)" -eq 1 ] && [ "$(count_log HEAD "/blobs/$SHARED" )" -eq 1 ] &&
	ok "dedup: the shared layer was checked and uploaded once" ||
	not_ok "dedup: shared layer PUT $(count_log PUT "digest=$SHARED") times"
copy_back "$P/rt/shared:d" "$D" "dedup: the second image reads back intact" --src-tls-verify=false
clear_log
run tool --events --cache "$TMP/cache" push "$TMP/c:t" "$FP/rt/shared:c" + "$TMP/d:t" "$FP/rt/shared:d"
expect_result "uploaded=0 mounted=0 existing=4" "dedup: a second push finds every blob"
[ "$(count_log POST '/blobs/uploads/')" -eq 0 ] && [ "$(count_log PUT '/blobs/uploads/')" -eq 0 ] &&
	ok "dedup: and sends no blob (proxy log)" || not_ok "dedup: upload requests were sent"

# -- blobs from sources ------------------------------------------------------
# on the same registry: mounted (and a mount the registry refuses)
mkimage "$TMP/e"
derive "$TMP/e" "$TMP/f"
E_L=$(first_layer "$TMP/e")
F=$(layout_digest "$TMP/f")
tool --cache "$TMP/cache" push "$TMP/e:t" "$P/src/e:1" >/dev/null 2>&1
clear_log
run tool --events --cache "$TMP/cache-f" push --source "$E_L=$FP/src/e" "$TMP/f:t" "$FP/rt/f:1"
expect_status 0 "sources: push with a layer only in another repository"
expect_result "uploaded=2 mounted=1" "sources: that layer mounted, the rest uploaded"
[ "$(count_log POST "mount=$E_L&from=src/e" 201)" -eq 1 ] && ok "sources: POST ?mount=&from= answered 201" ||
	not_ok "sources: no mount in the log"
[ ! -e "$TMP/cache-f/blobs/sha256/${E_L#sha256:}" ] && ok "sources: the mounted blob never came here" ||
	not_ok "sources: the mounted blob was downloaded"
copy_back "$P/rt/f:1" "$F" "sources: the image with a mounted layer reads back intact" --src-tls-verify=false
fault_proxy_rules '[{"method": "POST", "path": "mount=", "status": 403}]'
clear_log
run tool --events --cache "$TMP/cache-g" push --source "$E_L=$FP/src/e" "$TMP/f:t" "$FP/rt/g:1"
expect_status 0 "sources: a refused mount (403) falls back"
expect_result "uploaded=3 mounted=0" "sources: the layer fetched from the source and uploaded"
[ "$(count_log GET "/v2/src/e/blobs/$E_L" 200)" -eq 1 ] && ok "sources: fetched from the source repository" ||
	not_ok "sources: no GET of the source blob"
fault_proxy_rules '[]'
clear_log
run tool --cache "$TMP/cache-h" push --source "$E_L=$FP/src/empty" "$TMP/f:t" "$FP/rt/h:1"
expect_status 1 "sources: a source that lacks the blob fails the push"
expect_err_contains "BLOB_UNKNOWN" "sources: with the source's answer"
[ "$(count_log POST "mount=" 202)" -eq 1 ] && [ "$(count_log DELETE '/blobs/uploads/')" -eq 1 ] &&
	ok "sources: the 202 session the mount opened was deleted" || not_ok "sources: mount session not deleted"
run skopeo inspect --tls-verify=false "docker://$P/rt/h:1"
[ "$STATUS" -ne 0 ] && ok "sources: nothing was tagged" || not_ok "sources: the failed push left a tag"

# on another registry: fetched, then uploaded
registry_start plain || { not_ok "second registry"; finish; }
Q=$REGISTRY
mkimage "$TMP/i"
derive "$TMP/i" "$TMP/j"
I_L=$(first_layer "$TMP/i")
J=$(layout_digest "$TMP/j")
tool --cache "$TMP/cache" push "$TMP/i:t" "$Q/src/i:1" >/dev/null 2>&1
run tool --events --cache "$TMP/cache-j" push --source "$I_L=$Q/src/i" "$TMP/j:t" "$P/rt/j:1"
expect_status 0 "sources: a layer on another registry"
expect_result "uploaded=3 mounted=0" "sources: fetched from there and uploaded here"
copy_back "$P/rt/j:1" "$J" "sources: the image reads back intact" --src-tls-verify=false

# -- faults -----------------------------------------------------------------
fault() { # RULES-JSON NAME: push a fresh image through the proxy with these faults
	rm -rf "$TMP/k"
	mkimage "$TMP/k" "${FAULT_SIZE:-300000}"
	K=$(layout_digest "$TMP/k")
	fault_proxy_rules "$1"
	clear_log
	rm -rf "$TMP/cache-k"
	# shellcheck disable=SC2086 # TOOL_OPTS is a list of options
	run tool --events --cache "$TMP/cache-k" ${TOOL_OPTS:-} push "$TMP/k:t" "$FP/rt/fault:$3"
	expect_status 0 "faults: $2"
	copy_back "$P/rt/fault:$3" "$K" "faults: $2: the image is intact" --src-tls-verify=false
}
fault '[{"method": "PUT", "path": "/blobs/uploads/", "status": 500, "times": 2}]' "two 500s on blob PUTs" f500
[ "$(count_log PUT '/blobs/uploads/' 500)" -eq 2 ] && grep -q '^event retry' "$TMP/out" &&
	ok "faults: the 500s were met and retried" || not_ok "faults: no 500 met"
fault '[{"method": "HEAD", "path": "/blobs/", "status": 503, "times": 2}, {"method": "POST", "path": "/blobs/uploads/", "status": 503, "times": 1}]' "503 on HEAD and POST" f503
[ "$(count_log HEAD '/blobs/' 503)" -eq 2 ] && ok "faults: 503s met" || not_ok "faults: no 503 met"
start=$(date +%s)
fault '[{"method": "POST", "path": "/blobs/uploads/", "status": 429, "retry_after": 2, "times": 1}]' "429 with Retry-After: 2" f429
[ $(($(date +%s) - start)) -ge 2 ] && [ "$(count_log POST '/blobs/uploads/' 429)" -eq 1 ] &&
	ok "faults: Retry-After was honoured" || { not_ok "faults: Retry-After not honoured"; diag <"$FAULT_PROXY_LOG"; }
# one upload at a time: the config goes first, the layer second
TOOL_OPTS="--concurrency 1"
start=$(date +%s)
fault '[{"method": "PUT", "path": "/blobs/uploads/", "status": 429, "retry_after": 2, "times": 1}]' "429 with Retry-After: 2 on a blob PUT" f429put
[ $(($(date +%s) - start)) -ge 2 ] && [ "$(count_log PUT '/blobs/uploads/' 429)" -eq 1 ] &&
	ok "faults: the upload waited as told, then went up" || not_ok "faults: 429 on PUT not honoured"
fault '[{"method": "PUT", "path": "/blobs/uploads/", "cut_request_after": 100000, "skip": 1, "times": 1}]' "a connection cut in the middle of a blob upload" fcut
[ "$(count_log PUT '/blobs/uploads/' 000)" -eq 1 ] && [ "$(count_log DELETE '/blobs/uploads/')" -eq 1 ] &&
	[ "$(count_log POST '/blobs/uploads/')" -eq 3 ] &&
	ok "faults: the cut upload's session was dropped and the blob sent again" || { not_ok "faults: no cut met"; diag <"$FAULT_PROXY_LOG"; diag <"$TMP/out"; }
# the config's PUT cut after its whole body: the blob is in, the answer lost
fault '[{"method": "PUT", "path": "/blobs/uploads/", "cut_request_after": 100000, "times": 1}]' "the answer to a blob PUT lost" flost
CFG=$(skopeo inspect --raw "oci:$TMP/k:t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["digest"])')
[ "$(count_log PUT "digest=$CFG")" -eq 1 ] && [ "$(count_log HEAD "/blobs/$CFG" 200)" -eq 1 ] &&
	ok "faults: a HEAD found the blob committed; it was not sent again" || not_ok "faults: lost answer not recognised"
unset TOOL_OPTS
fault '[{"method": "*", "path": ".", "delay": 0.4}]' "a slow registry (0.4 s per request)" fslow

# a blob the registry keeps refusing: clear error, nothing else is sent
mkimage "$TMP/y"
fault_proxy_rules '[{"method": "PUT", "path": "/blobs/uploads/", "status": 500}]'
clear_log
run env ENVBUILD_HTTP_ATTEMPTS=2 "$REGISTRY_TOOL" --cache "$TMP/cache" push "$TMP/y:t" "$FP/rt/blobfail:v1"
expect_status 1 "faults: a persistent 500 on blob uploads fails the push"
expect_err_contains "the upload was tried 2 times" "faults: after the attempts allowed"
[ "$(count_log PUT '/manifests/')" -eq 0 ] && ok "faults: and no manifest or tag was sent" ||
	not_ok "faults: a manifest was sent after a failed blob"

# a manifest the registry keeps refusing: clear error, no tag
mkimage "$TMP/z"
fault_proxy_rules '[{"method": "PUT", "path": "/manifests/", "status": 500}]'
run env ENVBUILD_HTTP_ATTEMPTS=2 "$REGISTRY_TOOL" --cache "$TMP/cache" push "$TMP/z:t" "$FP/rt/broken:v1"
expect_status 1 "faults: a persistent 500 on the manifest PUT fails the push"
expect_err_contains "pushing manifest '$(layout_digest "$TMP/z")' to '$FP/rt/broken'" "faults: naming the manifest"
expect_err_contains "registry answered 500" "faults: and the answer"
expect_result "uploaded=2" "faults: the blobs went up first"
run skopeo inspect --tls-verify=false "docker://$P/rt/broken:v1"
[ "$STATUS" -ne 0 ] && ok "faults: the tag was not written" || not_ok "faults: the tag exists"
fault_proxy_rules '[{"method": "PUT", "path": "/manifests/v1$", "status": 500}]'
run env ENVBUILD_HTTP_ATTEMPTS=2 "$REGISTRY_TOOL" --cache "$TMP/cache" push "$TMP/z:t" "$FP/rt/broken:v1"
expect_status 1 "faults: a refused tag PUT fails the push"
expect_err_contains "tagging '$FP/rt/broken:v1'" "faults: naming the tag"

# -- chunked uploads ----------------------------------------------------------
FAULT_SIZE=450000
TOOL_OPTS="--chunk-size 100000"
fault '[]' "chunked upload (100000-byte PATCHes)" chunk
[ "$(count_log PATCH '/blobs/uploads/' 202)" -eq 5 ] && grep -q '^event progress' "$TMP/out" &&
	ok "chunked: five PATCHes with progress events" || not_ok "chunked: $(count_log PATCH '/blobs/uploads/' 202) PATCHes"
fault '[{"method": "PATCH", "path": "/blobs/uploads/", "cut_request_after": 0, "skip": 2, "times": 1}]' "chunked: a connection cut before the third chunk" chunkcut
BIG_SIZE=$(skopeo inspect --raw "oci:$TMP/k:t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["size"])')
patched=$(awk '$2 == "PATCH" && $4 == 202 { sub("in=", "", $5); n += $5 } END { print n + 0 }' "$FAULT_PROXY_LOG")
[ "$(count_log GET '/blobs/uploads/' 204)" -eq 1 ] && [ "$(count_log POST '/blobs/uploads/')" -eq 2 ] &&
	[ "$patched" -eq "$BIG_SIZE" ] &&
	ok "chunked: resumed from the registry's Range in the same session ($patched bytes patched)" ||
	not_ok "chunked: not resumed (GET 204: $(count_log GET '/blobs/uploads/' 204), patched $patched of $BIG_SIZE)"
fault '[{"method": "PATCH", "path": "/blobs/uploads/", "status": 503, "skip": 3, "times": 1}]' "chunked: a 503 on the fourth chunk" chunk503
[ "$(count_log GET '/blobs/uploads/' 204)" -eq 1 ] && grep -q 'event retry .* done=300000' "$TMP/out" &&
	ok "chunked: resumed at byte 300000" || not_ok "chunked: 503 not resumed"
# distribution cancels a session whose stored size no longer matches its
# _state, so half a chunk means starting over: slower, but still right.
fault '[{"method": "PATCH", "path": "/blobs/uploads/", "cut_request_after": 50000, "skip": 2, "times": 1}]' "chunked: a cut in the middle of a chunk" chunkhalf
unset FAULT_SIZE TOOL_OPTS
fault_proxy_rules '[]'

# -- TLS + basic auth ----------------------------------------------------------
registry_start basic || { not_ok "registry/start basic"; finish; }
S=$REGISTRY
mkimage "$TMP/s"
SD=$(layout_digest "$TMP/s")
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$REGISTRY_TOOL" --ca-file "$REGISTRY_CA" \
	--cache "$TMP/cache" push "$TMP/s:t" "$S/rt/s:v1"
expect_status 0 "tls+basic: push with the CA and a docker config.json"
copy_back "$S/rt/s:v1" "$SD" "tls+basic: skopeo reads it back" --src-cert-dir "$REGISTRY_CERT_DIR" \
	--src-creds "$REGISTRY_USER:$REGISTRY_PASSWORD"
run tool --cache "$TMP/cache" push "$TMP/s:t" "$S/rt/s:v2"
expect_status 1 "tls+basic: without the CA the push fails"
expect_err_contains "not trusted" "tls+basic: because the certificate is not trusted"
printf 'registries:\n  "%s":\n    ca_file: %s\n' "$S" "$REGISTRY_CA" >"$TMP/tls.yaml"
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$REGISTRY_TOOL" --mirrors "$TMP/tls.yaml" \
	--cache "$TMP/cache" push "$TMP/s:t" "$S/rt/s:v3"
expect_status 0 "tls+basic: ca_file from the registries file"
run tool --ca-file "$REGISTRY_CA" --cache "$TMP/cache" push "$TMP/s:t" "$S/rt/s:v4"
expect_status 1 "tls+basic: without credentials the push fails"
expect_err_contains "registry answered 401" "tls+basic: with the registry's 401"
cat "$TMP/out" "$TMP/err" | grep -qF "$REGISTRY_PASSWORD" && not_ok "tls+basic: the password was printed" ||
	ok "tls+basic: no password in any output"

# -- token auth -------------------------------------------------------------------
registry_start token || { not_ok "registry/start token"; finish; }
TK=$REGISTRY
mkimage "$TMP/t1"
derive "$TMP/t1" "$TMP/t2"
T1_L=$(first_layer "$TMP/t1")
T2=$(layout_digest "$TMP/t2")
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$REGISTRY_TOOL" --cache "$TMP/cache" \
	push "$TMP/t1:t" "$TK/rt/base:1"
expect_status 0 "token: push with bearer tokens"
grep -q 'scope=repository:rt/base:pull,push.* 200 user=envbuild' "$TOKEN_LOG" &&
	ok "token: a pull,push token for the repository" || not_ok "token: no push token requested"
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$REGISTRY_TOOL" --events --cache "$TMP/cache-t2" \
	push --source "$T1_L=$TK/rt/base" "$TMP/t2:t" "$TK/rt/app:1"
expect_status 0 "token: push with a layer mounted from another repository"
expect_result "mounted=1" "token: mounted"
grep 'repository:rt/app:pull,push' "$TOKEN_LOG" | grep -q 'repository:rt/base:pull' &&
	ok "token: the mount's token covers both repositories" || not_ok "token: no token for the mount's scopes"
copy_back "$TK/rt/app:1" "$T2" "token: skopeo reads the image back" --src-tls-verify=false \
	--src-creds "$REGISTRY_USER:$REGISTRY_PASSWORD"
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$REGISTRY_TOOL" pull --layers "$TK/rt/app:1" - "$TMP/pull6"
expect_status 0 "token: pull"
cat "$TMP/out" "$TMP/err" | grep -qF "$REGISTRY_PASSWORD" && not_ok "token: the password was printed" ||
	ok "token: no password in any output"

finish
