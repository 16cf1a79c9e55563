#!/bin/sh
# regcache.sh - the build cache shared through a registry (`cache:` in the
# spec, --cache-from/--cache-to), against the real distribution registry on
# loopback, with separate cache directories standing in for fresh CI
# runners.  The project: the Debian test base, one pinned wheel (tinydep
# from tests/helpers/make-wheels.py), two files layers (src/ and 1.5 MB of
# random model bytes), committed in git.
#
# Runner A pushes (filling the shared cache); runner B, with an empty cache,
# pushes the same commit: nothing built, no layer downloaded, 0 blob bytes
# uploaded; B writes a local layout from the shared cache too.  One pin
# changed: only the package layer is built and uploaded (once: to the shared
# cache, mounted from there into the image's repository; and the config).
# A record whose annotation names another blob is rejected (counted) and
# the layer rebuilt; a cached layer whose bytes in the registry were
# corrupted is rebuilt for a layout, and the result is the same image; a
# poisoned blob in the local cache is rebuilt on a push; two runners
# writing the cache at once lose nothing; records whose diff_id lies are
# rejected (the layer decompressed and hashed once) and the image is the
# same; the records used are named; records the registry refuses are a
# warning that names them, never a failed build.  About 40 s.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"

plan 39
for t in docker-registry git openssl curl python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "1..0 # SKIP $t is not installed"; exit 77; }
done
BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
if [ ! -f "$BASE/.complete" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "no test base at $BASE and not root to make one (run scripts/make-base $BASE as root)"
		finish
	fi
	"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/make-base.log" 2>&1 ||
		{ not_ok "make-base failed"; diag <"$TMP/make-base.log"; finish; }
fi
ENVBUILD_HTTP_BACKOFF_MS=100
export ENVBUILD_HTTP_BACKOFF_MS
unset REGISTRY_AUTH_FILE ENVBUILD_MIRRORS ENVBUILD_CERTS_D
DOCKER_CONFIG=$TMP/no-docker-config
export DOCKER_CONFIG
mkdir -p "$DOCKER_CONFIG"
GIT_AUTHOR_NAME=envbuild-test GIT_AUTHOR_EMAIL=test@envbuild.invalid
GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_CONFIG_NOSYSTEM

registry_start plain || { not_ok "registry/start plain"; finish; }
ok "registry on $REGISTRY"
REPO=$REGISTRY/ml/app
CREPO=$REGISTRY/ml/app-cache
WHEELS=$TMP/wheels
python3 "$top_srcdir/tests/helpers/make-wheels.py" "$WHEELS" >/dev/null 2>"$TMP/wheels.log" ||
	{ not_ok "make-wheels"; diag <"$TMP/wheels.log"; finish; }
pin() { # VERSION: a hashed pin of tinydep
	f=$WHEELS/tinydep-$1-py3-none-any.whl
	printf 'tinydep==%s \\\n    --hash=sha256:%s\n' "$1" "$(sha256sum "$f" | cut -d' ' -f1)"
}
P=$TMP/a
mkdir -p "$P/src" "$P/model"
cat >"$P/envbuild.yaml" <<EOF
version: 1
name: app
repository: $REPO
cache: $CREPO
platforms: [linux/amd64]
python: "3.11"
index: $WHEELS
targets:
  app:
    base: oci:$BASE:bookworm-python3
    requirements: [requirements.txt]
    files:
      - { src: src/, dest: /app/ }
      - { src: model/, dest: /models/ }
EOF
pin 1.2.0 >"$P/requirements.txt"
echo 'print("app")' >"$P/src/main.py"
head -c 1500000 /dev/urandom >"$P/model/weights.bin"
git init -q "$P" && git -C "$P" add -A && git -C "$P" commit -q -m app
git clone -q "$P" "$TMP/b"

eb() { "$ENVBUILD" "$@"; }
printed() { sed -n 's/^app \{1,\}[^ ]*@\(sha256:[0-9a-f]\{64\}\)$/\1/p' "$TMP/out"; }
# the image's own layers (not the base's), from `build --format json`
own_layers() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["targets"]:
    for p in t["platforms"]:
        for l in p["layers"]:
            if not l["fromBase"]:
                print(l["digest"])' "$1"
}
in_cache() { [ -f "$1/blobs/sha256/${2#sha256:}" ]; }

# == runner A: a cold push fills the shared cache ============================
run eb -C "$P" push --cache-dir "$TMP/cA"
expect_status 0 "A: push"
A_DIGEST=$(printed)
grep -Eq 'shared cache: 0 hits, [0-9]+ misses, 0 records rejected, [1-9][0-9]* pushed' "$TMP/err" &&
	ok "A: records pushed to the shared cache" || { not_ok "A: no records pushed"; diag <"$TMP/err"; }
curl -fsS "$REGISTRY_URL/v2/ml/app-cache/tags/list" >"$TMP/tags" 2>&1 &&
	grep -q '"layers-[0-9a-f]\{64\}"' "$TMP/tags" && grep -q '"pylayers-[0-9a-f]\{64\}"' "$TMP/tags" &&
	grep -q '"pytarget-[0-9a-f]\{64\}"' "$TMP/tags" &&
	ok "A: the cache repository has layers-, pylayers- and pytarget- records" ||
	{ not_ok "A: cache tags"; diag <"$TMP/tags"; }
tag=$(grep -o '"layers-[0-9a-f]*"' "$TMP/tags" | head -n 1 | tr -d '"')
curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
	"$REGISTRY_URL/v2/ml/app-cache/manifests/$tag" >"$TMP/record.json"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["artifactType"] == "application/vnd.envbuild.cache.record.v1+json", m
rec = json.loads(m["annotations"]["dev.envbuild.cache.record"])
assert rec["digest"] == m["layers"][0]["digest"] and rec["diff_id"].startswith("sha256:"), rec
' "$TMP/record.json" 2>"$TMP/py.err" && ok "A: a record is an OCI artifact naming its layer and diff_id" ||
	{ not_ok "A: record artifact"; diag <"$TMP/py.err"; diag <"$TMP/record.json"; }
eb -C "$P" build --cache-dir "$TMP/cA" --format json -o "$TMP/outA" >"$TMP/a.json" 2>"$TMP/a.err"
OWN=$(own_layers "$TMP/a.json")
[ "$(echo "$OWN" | wc -l)" -eq 3 ] && ok "A: three layers of its own (src, model, packages)" ||
	{ not_ok "A: own layers '$OWN'"; diag <"$TMP/a.err"; }

# == runner B: empty cache, same commit ======================================
run eb -C "$TMP/b" push --cache-dir "$TMP/cB"
expect_status 0 "B: push the same commit"
[ -n "$A_DIGEST" ] && [ "$(printed)" = "$A_DIGEST" ] && ok "B: the same image digest as A" ||
	not_ok "B: digest '$(printed)', A '$A_DIGEST'"
grep -q 'envbuild: 0 blobs uploaded (0.0 MiB)' "$TMP/err" && ok "B: 0 blob bytes uploaded" ||
	{ not_ok "B: uploaded blobs"; diag <"$TMP/err"; }
grep -Eq 'shared cache: [1-9][0-9]* hits, 0 misses, 0 records rejected, 0 pushed' "$TMP/err" &&
	ok "B: every lookup a hit, nothing to record" || { not_ok "B: cache counters"; diag <"$TMP/err"; }
found=""
for d in $OWN; do in_cache "$TMP/cB" "$d" && found="$found $d"; done
[ -z "$found" ] && ok "B: no layer of its own built or downloaded" || not_ok "B: in B's cache:$found"

run eb -C "$TMP/b" build --cache-dir "$TMP/cB2" -o "$TMP/outB"
expect_status 0 "B: a local layout from the shared cache"
grep -q '(layers: 1 base, 0 built, 3 cached)' "$TMP/out" && ok "B: layout: 0 layers built, 3 from the cache" ||
	{ not_ok "B: layout counts"; diag <"$TMP/out"; }
missing=""
for d in $OWN; do [ -f "$TMP/outB/app/blobs/sha256/${d#sha256:}" ] || missing="$missing $d"; done
[ -z "$missing" ] && grep -q "$A_DIGEST" "$TMP/out" && ok "B: the layout holds the fetched layers and A's digest" ||
	{ not_ok "B: layout missing:$missing"; diag <"$TMP/out"; }

# == one pin changed =========================================================
pin 1.3.0 >"$P/requirements.txt"
git -C "$P" commit -q -a -m "tinydep 1.3.0"
git -C "$TMP/b" pull -q
run eb -C "$TMP/b" push --cache-dir "$TMP/cB"
expect_status 0 "B: push with one pin changed"
NEW_DIGEST=$(printed)
# the new layer goes up once, to the shared cache, and is mounted from there
grep -Eq 'envbuild: 1 blob uploaded \(0\.[0-9] MiB\), 1 mounted, [0-9]+ already there' "$TMP/err" &&
	ok "B: one pin: only the package layer (mounted from the cache) and the config uploaded" ||
	{ not_ok "B: one pin: uploads"; diag <"$TMP/err"; }
# two misses, two records pushed: the new package layer and the bytecode
# of its module (a record of its own, keyed by source and interpreter)
grep -Eq 'shared cache: [1-9][0-9]* hits, 2 misses, 0 records rejected, 2 pushed' "$TMP/err" &&
	ok "B: one pin: the layer's and its bytecode's misses, their records pushed" || { not_ok "B: one pin: counters"; diag <"$TMP/err"; }
n=0
for d in $OWN; do in_cache "$TMP/cB" "$d" && n=$((n + 1)); done
built=$(find "$TMP/cB/pylayers" -name '*.json' 2>/dev/null | wc -l)
[ "$n" -eq 0 ] && [ "$built" -eq 1 ] && ok "B: one pin: one layer built, no other layer downloaded" ||
	not_ok "B: one pin: $n old layers local, $built package layers recorded"

# == a tampered record =======================================================
ltag=$(curl -fsS "$REGISTRY_URL/v2/ml/app-cache/tags/list" | grep -o '"layers-[0-9a-f]*"' | head -n 1 | tr -d '"')
curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
	"$REGISTRY_URL/v2/ml/app-cache/manifests/$ltag" >"$TMP/rec.json"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
rec = json.loads(m["annotations"]["dev.envbuild.cache.record"])
rec["digest"] = "sha256:" + "0" * 64
m["annotations"]["dev.envbuild.cache.record"] = json.dumps(rec)
sys.stdout.write(json.dumps(m))' "$TMP/rec.json" >"$TMP/rec-bad.json"
curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
	--data-binary @"$TMP/rec-bad.json" "$REGISTRY_URL/v2/ml/app-cache/manifests/$ltag" >/dev/null 2>&1 &&
	ok "tamper: a record rewritten to name another blob" || not_ok "tamper: PUT of the record"
git clone -q "$P" "$TMP/c"
run eb -C "$TMP/c" push --cache-dir "$TMP/cC" --cache-to ""
expect_status 0 "C: push with a tampered record"
grep -Eq 'shared cache: [0-9]+ hits?, 0 misses, 1 record rejected' "$TMP/err" &&
	[ "$(printed)" = "$NEW_DIGEST" ] && ok "C: the record rejected, the layer rebuilt, the same digest" ||
	{ not_ok "C: tampered record: digest '$(printed)' want '$NEW_DIGEST'"; diag <"$TMP/err"; }

# == corrupted bytes in the registry =========================================
# the model layer: the biggest of A's own layers
model=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ls = [l for t in d["targets"] for p in t["platforms"] for l in p["layers"] if not l["fromBase"]]
print(max(ls, key=lambda l: l["size"])["digest"])' "$TMP/a.json")
data=$(find "$REGISTRY_STATE/storage" -path "*/blobs/sha256/*/${model#sha256:}/data" | head -n 1)
if [ -n "$data" ]; then
	size=$(stat -c %s "$data")
	head -c "$size" /dev/urandom >"$data"
	ok "corrupt: the model layer's bytes in the registry replaced"
else
	not_ok "corrupt: no blob data for $model under $REGISTRY_STATE/storage"
fi
run eb -C "$TMP/c" build --cache-dir "$TMP/cD" -o "$TMP/outD" --cache-to ""
expect_status 0 "D: a layout with a corrupted layer in the registry"
grep -q '(layers: 1 base, [12] built, [12] cached)' "$TMP/out" && grep -q "$NEW_DIGEST" "$TMP/out" &&
	ok "D: the corrupted layer rebuilt, the same digest" || { not_ok "D: counts/digest"; diag <"$TMP/out"; }
in_cache "$TMP/cD" "$model" && [ -f "$TMP/outD/app/blobs/sha256/${model#sha256:}" ] &&
	[ "$(sha256sum "$TMP/outD/app/blobs/sha256/${model#sha256:}" | cut -d' ' -f1)" = "${model#sha256:}" ] &&
	ok "D: the layout's model layer has its digest's bytes" || not_ok "D: model layer bytes"

# == a poisoned local blob on a push ==========================================
# a push re-hashes a cached blob only when it uploads it; bad bytes then
# cost a rebuild, not the push
# (not the model layer: the registry's copy of that one was corrupted above)
other=$(echo "$OWN" | grep -v "$model" | head -n 1)
f=$TMP/cA/blobs/sha256/${other#sha256:}
chmod u+w "$f" && head -c "$(stat -c %s "$f")" /dev/urandom >"$f"
git -C "$P" checkout -q HEAD~1
run eb -C "$P" push --cache-dir "$TMP/cA" --cache-from "" --cache-to "" --repository "$REGISTRY/ml/other"
git -C "$P" checkout -q -
expect_status 0 "poison: push of commit 1 to a new repository with a poisoned cached layer"
got=$(curl -fsSL "$REGISTRY_URL/v2/ml/other/blobs/$other" | sha256sum | cut -d' ' -f1)
[ "$(printed)" = "$A_DIGEST" ] && [ "$got" = "${other#sha256:}" ] &&
	ok "poison: the layer rebuilt, A's digest, the registry holds the right bytes" ||
	{ not_ok "poison: digest '$(printed)' want '$A_DIGEST', blob $got"; diag <"$TMP/err"; }

# == two runners writing the shared cache at once ============================
# records are per key: neither loses the other's layers (each commit has
# new src/ and model/ layers, away from the records tampered with above)
git -C "$P" checkout -q -b f
head -c 300000 /dev/urandom >"$P/model/f.bin"
echo 'print("f")' >"$P/src/f.py"
git -C "$P" add -A && git -C "$P" commit -q -m f
git -C "$P" checkout -q -b g HEAD~1
head -c 300000 /dev/urandom >"$P/model/g.bin"
echo 'print("g")' >"$P/src/g.py"
git -C "$P" add -A && git -C "$P" commit -q -m g
git clone -q -b f "$P" "$TMP/f" && git clone -q -b g "$P" "$TMP/g"
"$ENVBUILD" -C "$TMP/f" push --cache-dir "$TMP/cF" --repository "$REGISTRY/ml/f" >"$TMP/f.out" 2>&1 &
pf=$!
"$ENVBUILD" -C "$TMP/g" push --cache-dir "$TMP/cG" --repository "$REGISTRY/ml/g" >"$TMP/g.out" 2>&1 &
pg=$!
sf=0 sg=0
wait $pf || sf=$?
wait $pg || sg=$?
[ $sf -eq 0 ] && [ $sg -eq 0 ] && ok "concurrent: two runners pushed at once" ||
	{ not_ok "concurrent: exits $sf $sg"; diag <"$TMP/f.out"; diag <"$TMP/g.out"; }
nf=0
: >"$TMP/third.log"
for b in f g; do
	run eb -C "$TMP/$b" build --cache-dir "$TMP/cH-$b" -o "$TMP/outH-$b" --cache-to ""
	grep -q '(layers: 1 base, 0 built, 3 cached)' "$TMP/out" ||
		{ nf=$((nf + 1)); { echo "== commit $b:"; cat "$TMP/out" "$TMP/err" "$TMP/$b.out"; } >>"$TMP/third.log"; }
done
# what it printed, and what the runner that pushed the commit printed,
# after the verdict (a CI excerpt starts at the "not ok" line)
[ $nf -eq 0 ] && ok "concurrent: a third runner builds both commits from the shared cache alone" ||
	{ not_ok "concurrent: $nf of 2 commits had to build"; diag <"$TMP/third.log"; }

# == a record whose diff_id lies ==============================================
# (every layers- record: its blob is right, its diff_id is not) a layout
# build rejects each one it meets and rebuilds the layer, and the image is
# the same; the records it did use are named
for t in $(curl -fsS "$REGISTRY_URL/v2/ml/app-cache/tags/list" | grep -o '"layers-[0-9a-f]*"' | tr -d '"'); do
	[ "$t" = "$ltag" ] && continue
	curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"$REGISTRY_URL/v2/ml/app-cache/manifests/$t" >"$TMP/rec.json" || continue
	python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
rec = json.loads(m["annotations"]["dev.envbuild.cache.record"])
rec["diff_id"] = "sha256:" + "1" * 64
m["annotations"]["dev.envbuild.cache.record"] = json.dumps(rec)
sys.stdout.write(json.dumps(m))' "$TMP/rec.json" >"$TMP/rec-bad.json"
	curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
		--data-binary @"$TMP/rec-bad.json" "$REGISTRY_URL/v2/ml/app-cache/manifests/$t" >/dev/null 2>&1
done
run eb -C "$TMP/c" build --cache-dir "$TMP/cI" -o "$TMP/outI" --cache-to ""
expect_status 0 "I: a layout build with records whose diff_id lies"
grep -Eq 'shared cache: [0-9]+ hits?, [0-9]+ miss(es)?, [1-9][0-9]* records? rejected' "$TMP/err" &&
	grep -q "$NEW_DIGEST" "$TMP/out" && ok "I: the lying records rejected, the layers rebuilt, the same digest" ||
	{ not_ok "I: diff_id records: want $NEW_DIGEST"; diag <"$TMP/out"; diag <"$TMP/err"; }
grep -q '^envbuild: from the shared cache: pylayers sha256:[0-9a-f]\{64\} (bytes checked)$' "$TMP/err" &&
	ok "I: the records used from the shared cache are named" || { not_ok "I: no note of the records used"; diag <"$TMP/err"; }

# == cache_from / cache_to: a pull-request job reads main's cache, writes its own
mkdir -p "$TMP/pr"
cp -r "$TMP/c/." "$TMP/pr/"
sed -i "s|^cache: .*|cache_from: $CREPO\ncache_to: $REGISTRY/ml/pr-cache|" "$TMP/pr/envbuild.yaml"
echo 'print("pr")' >"$TMP/pr/src/pr.py"
run eb -C "$TMP/pr" build --cache-dir "$TMP/cPR" -o "$TMP/outPR"
expect_status 0 "PR: build with cache_from (main's) and cache_to (its own)"
prt=$(curl -fsS "$REGISTRY_URL/v2/ml/pr-cache/tags/list" 2>/dev/null | grep -o '"layers-[0-9a-f]*"' | wc -l)
grep -Eq 'shared cache: [1-9][0-9]* hits?, [0-9]+ miss(es)?, [0-9]+ records? rejected, [1-9][0-9]* pushed' "$TMP/err" &&
	[ "$prt" -ge 1 ] && ok "PR: hits from main's cache, its new src/ layer recorded in its own ($prt)" ||
	{ not_ok "PR: cache_from/cache_to ($prt layers records in pr-cache)"; diag <"$TMP/err"; }
sed -i "/^cache_to: /d" "$TMP/pr/envbuild.yaml"
echo 'print("pr2")' >"$TMP/pr/src/pr.py"
before=$(curl -fsS "$REGISTRY_URL/v2/ml/app-cache/tags/list" | grep -o '"layers-[0-9a-f]*"' | wc -l)
run eb -C "$TMP/pr" build --cache-dir "$TMP/cPR" -o "$TMP/outPR"
after=$(curl -fsS "$REGISTRY_URL/v2/ml/app-cache/tags/list" | grep -o '"layers-[0-9a-f]*"' | wc -l)
[ "$STATUS" -eq 0 ] && [ "$before" -eq "$after" ] && ! grep -Eq '[1-9][0-9]* pushed' "$TMP/err" &&
	ok "PR: cache_from alone reads and writes nothing to main's cache" ||
	{ not_ok "PR: cache_from alone: exit $STATUS, layers records $before -> $after"; diag <"$TMP/err"; }

# a cache repository that refuses the records: the build goes on and says
# so (a silent loss would cost every other runner a rebuild, unexplained)
fault_proxy_start --rule 'PUT /v2/ml/refused-cache/manifests/ status=500' ||
	{ not_ok "fault proxy"; finish; }
echo 'print("refused")' >"$TMP/pr/src/pr.py"
run eb -C "$TMP/pr" build --cache-dir "$TMP/cRF" -o "$TMP/outRF" --cache-to "$FAULT_PROXY/ml/refused-cache"
expect_status 0 "RF: a cache_to that refuses every record still builds"
grep -Eq '^envbuild: warning: shared cache: [1-9][0-9]* records? not pushed \(.*500.*\); other runners build those layers again$' "$TMP/err" &&
	ok "RF: the records not pushed are counted and why is said" ||
	{ not_ok "RF: no warning for the refused records"; diag <"$TMP/err"; }

# --cache-from "" turns the spec's cache off
run eb -C "$TMP/c" build --cache-dir "$TMP/cE" -o "$TMP/outE" --cache-from "" --cache-to ""
expect_status 0 "E: --cache-from '' builds without the shared cache"
grep -Eq '\(layers: 1 base, 3 built, 0 cached[;)]' "$TMP/out" && ! grep -q 'shared cache' "$TMP/err" &&
	ok "E: every layer built, no shared cache" || { not_ok "E: counts"; diag <"$TMP/out"; diag <"$TMP/err"; }
finish
