#!/bin/sh
# lock_trust.sh - the lock is an input of the pull request too: an edited
# .deb record (another .deb of the same name and version, served by the
# same loopback repository but listed in no signed Packages index) is
# refused by `build --locked` and `build --frozen`; --frozen verifies the
# lock's .debs offline from the signed InRelease and the Packages indexes
# `envbuild lock` kept in the cache, and with a cache that lacks them it
# fails naming what is missing (specs/lockfile.md, "What --locked and
# --frozen trust").  Needs root (the apt layer's dpkg database is built
# from the real base).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (the test base)"
need_base
R=$TMP/repo
st=0
apt_repo_make "$R" bookworm hello >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st)"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
HELLO=$(sed -n 's/^Version: //p' "$R/dists/bookworm/main/binary-amd64/Packages" | head -n 1)
plan 12

EB() { XDG_CACHE_HOME=$TMP/xdg "$ENVBUILD" "$@"; }
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
  tools:
    base: oci:$BASE:bookworm-python3
    apt: [hello=$HELLO]
YAML
cd "$P" || exit 1
run EB lock
expect_status 0 "envbuild lock"
cp envbuild.lock "$TMP/good.lock"
run EB build --frozen
expect_status 0 "build --frozen from the good lock"

# the hostile .deb: same name and version, in the repository's pool (the
# server serves it), in no index
apt_fake_deb "$R/pool/main/evil.deb" hello "$HELLO" traversal
python3 - "$P/envbuild.lock" "$R/pool/main/evil.deb" "$APT_URL" <<'PY'
import hashlib, json, os, sys
lock, deb, url = sys.argv[1:4]
l = json.load(open(lock))
p = l["targets"]["tools"]["apt"]["packages"]["linux/amd64"][0]
data = open(deb, "rb").read()
p["url"] = url + "pool/main/evil.deb"
p["sha256"] = hashlib.sha256(data).hexdigest()
p["size"] = len(data)
open(lock, "w").write(json.dumps(l, indent=2, sort_keys=True) + "\n")
PY
run EB build --locked
expect_status 1 "build --locked refuses a .deb record no signed index lists"
expect_err_contains "the lock's hello=$HELLO (amd64) is not what the signed index lists" "and says which record"
run EB build --frozen
expect_status 1 "build --frozen refuses it too"
expect_err_contains "is not what the signed index lists" "from the cached signed indexes"

# the same .deb claimed under the index's sha256 but another URL
cp "$TMP/good.lock" envbuild.lock
sed -i "s|pool/main/hello_|pool/main/../main/hello_|" envbuild.lock
run EB build --frozen
expect_status 1 "build --frozen refuses a record whose URL is not the index's"

# signed_by naming a fifo: refused at once (open(2) of a fifo blocked for
# ever, deaf to SIGTERM)
mkdir -p "$TMP/fifo"
cp envbuild.yaml "$TMP/fifo/"
mkfifo "$TMP/fifo/keyring.gpg"
run timeout 60 env XDG_CACHE_HOME="$TMP/xdg-fifo" "$ENVBUILD" -C "$TMP/fifo" lock
[ "$STATUS" = 1 ] && grep -q "is not a regular file" "$TMP/err" &&
	ok "signed_by naming a fifo: lock fails at once, saying it is not a regular file" ||
	{ not_ok "signed_by fifo: exit $STATUS"; diag <"$TMP/err"; }

# offline, with a cache that has not the signed indexes: says what is missing
cp "$TMP/good.lock" envbuild.lock
kill "$APT_SERVER_PID" 2>/dev/null
wait "$APT_SERVER_PID" 2>/dev/null
run env XDG_CACHE_HOME="$TMP/xdg-empty" "$ENVBUILD" build --frozen
expect_status 1 "build --frozen with an empty cache fails"
expect_err_contains "that the lock names is not in the cache" "naming the signed Release it lacks"
# and with the cache envbuild lock filled, the repository stopped: builds
run EB build --frozen
expect_status 0 "build --frozen verifies offline from the cached InRelease and Packages"
cmp -s envbuild.lock "$TMP/good.lock" && ok "the lock is left as it was" || not_ok "the lock changed"
finish
