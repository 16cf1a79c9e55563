#!/bin/sh
# lock_base.sh - a base digest the tag no longer resolves to is drift,
# against the real distribution registry on loopback: the lock's digest
# swapped for another image of the same repository (the spec still names
# the tag), or the tag moved since the lock was written, is reported by
# `lock --check` and refused by `build --locked`, naming both digests;
# `base: NAME:TAG@sha256:...` accepts a digest (lock --check and --locked
# agree again), and a lock whose digest differs from the spec's own is
# refused even by --frozen, offline.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"
for t in docker-registry skopeo python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "1..0 # SKIP $t is not installed"; exit 77; }
done
need_base
unset REGISTRY_AUTH_FILE ENVBUILD_MIRRORS ENVBUILD_CERTS_D
DOCKER_CONFIG=$TMP/no-docker-config
export DOCKER_CONFIG
mkdir -p "$DOCKER_CONFIG"
plan 15
registry_start plain || { not_ok "registry/start plain"; finish; }
ok "registry on $REGISTRY"
R=$REGISTRY/lib/py
# two images of one repository: the base, and the same in Docker's format
# (another digest)
skopeo copy -q --dest-tls-verify=false "oci:$BASE:bookworm-python3" "docker://$R:good" >"$TMP/sk" 2>&1 &&
	skopeo copy -q --dest-tls-verify=false --format v2s2 "oci:$BASE:bookworm-python3" "docker://$R:other" >>"$TMP/sk" 2>&1 ||
	{ not_ok "skopeo copy"; diag <"$TMP/sk"; finish; }
dig() { skopeo inspect --raw --tls-verify=false "docker://$1" | sha256sum | sed 's/^/sha256:/; s/ .*//'; }
GOOD=$(dig "$R:good")
OTHER=$(dig "$R:other")
[ "$GOOD" != "$OTHER" ] && ok "two digests in $R: $GOOD, $OTHER" || not_ok "the same digest twice"

P=$TMP/p
mkdir -p "$P/app"
echo hi >"$P/app/a.txt"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: demo
targets:
  app:
    base: $R:good
    files: [{ src: app/, dest: /app/ }]
YAML
cd "$P" || exit 1
EB() { "$ENVBUILD" "$@" --cache-dir "$TMP/cache"; }
run EB lock
expect_status 0 "envbuild lock"
cp envbuild.lock "$TMP/good.lock"
setdigest() {
	python3 - envbuild.lock "$1" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["targets"]["app"]["base"]["digest"] = sys.argv[2]
open(sys.argv[1], "w").write(json.dumps(l, indent=2, sort_keys=True) + "\n")
PY
}

# the lock edited: another image of the same repository
setdigest "$OTHER"
run EB lock --check
expect_status 1 "lock --check reports a swapped base digest"
expect_err_contains "resolves to $GOOD now, the lock says $OTHER" "naming both digests"
run EB build --locked --output=none
expect_status 1 "build --locked refuses it"
expect_err_contains "resolves to $GOOD now, the lock says $OTHER" "naming both digests"

# the tag moved: the lock is as written, the registry is not
cp "$TMP/good.lock" envbuild.lock
skopeo copy -q --dest-tls-verify=false --format v2s2 "oci:$BASE:bookworm-python3" "docker://$R:good" >"$TMP/sk" 2>&1
run EB lock --check
expect_status 1 "lock --check reports a moved tag"
run EB lock --check --offline
expect_status 0 "lock --check --offline checks the files only"

# accepting the locked image: base with @sha256
sed -i "s|base: $R:good|base: $R:good@$GOOD|" envbuild.yaml
run EB lock
expect_status 0 "lock with base: NAME:TAG@sha256:..."
run EB build --locked --output=none
expect_status 0 "build --locked takes the spec's digest, whatever the tag says now"
setdigest "$OTHER"
run EB build --frozen --output=none
expect_status 1 "build --frozen refuses a lock whose base digest is not the spec's"
expect_err_contains "names $GOOD, the lock $OTHER" "saying so"
run "$ENVBUILD" check
expect_status 1 "envbuild check reports it offline"
expect_out_contains "the spec's base names $GOOD, the lock's digest is $OTHER [EB041]" "as EB041"
finish
