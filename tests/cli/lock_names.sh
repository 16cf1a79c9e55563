#!/bin/sh
# lock_names.sh - every spec has a lock of its own, next to it: the spec's
# name with .yaml/.yml/.json replaced by .lock.  Two specs in one directory
# (one.yaml and four.yaml, as bench/layers has) lock and build without
# re-locking each other; envbuild.yaml keeps envbuild.lock.  Offline
# (scratch base, files only).
. "$(dirname "$0")/lib.sh"
plan 12

P=$TMP/p
mkdir -p "$P/app"
echo one >"$P/app/one.txt"
echo four >"$P/app/four.txt"
spec() { # NAME FILE
	printf 'version: 1\nname: %s\ntargets:\n  app:\n    base: scratch\n    files: [{ src: app/%s, dest: /%s }]\n' \
		"$1" "$2" "$2"
}
spec one one.txt >"$P/one.yaml"
spec four four.txt >"$P/four.yaml"
E() { run "$ENVBUILD" -C "$P" "$@"; }

E lock --spec one.yaml --cache-dir "$TMP/cache"
expect_status 0 "lock one.yaml"
[ -f "$P/one.lock" ] && ok "one.yaml's lock is one.lock" || not_ok "no one.lock ($(ls "$P"))"
E lock --spec four.yaml --cache-dir "$TMP/cache"
expect_status 0 "lock four.yaml"
[ -f "$P/four.lock" ] && ok "four.yaml's lock is four.lock" || not_ok "no four.lock ($(ls "$P"))"
[ ! -e "$P/envbuild.lock" ] && ok "no shared envbuild.lock" || not_ok "envbuild.lock was written"
grep -q '"path": "one.yaml"' "$P/one.lock" && grep -q '"path": "four.yaml"' "$P/four.lock" &&
	ok "each lock names its spec" || not_ok "locks name $(grep -h '"path"' "$P"/*.lock)"

# locking four did not make one stale, and a --locked build of each works
E lock --check --spec one.yaml
expect_status 0 "one.lock is still fresh after locking four.yaml"
cp "$P/one.lock" "$TMP/one.before"
E build --locked --spec one.yaml --cache-dir "$TMP/cache" --output "$TMP/out1"
expect_status 0 "build --locked one.yaml"
E build --locked --spec four.yaml --cache-dir "$TMP/cache" --output "$TMP/out4"
expect_status 0 "build --locked four.yaml"
cmp -s "$P/one.lock" "$TMP/one.before" && ok "building four.yaml left one.lock alone" ||
	not_ok "one.lock changed"

# the default spec keeps its name
spec default one.txt >"$P/envbuild.yaml"
E lock --cache-dir "$TMP/cache"
expect_status 0 "lock envbuild.yaml"
[ -f "$P/envbuild.lock" ] && ok "envbuild.yaml's lock is envbuild.lock" || not_ok "no envbuild.lock"
finish
