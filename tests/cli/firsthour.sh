#!/bin/sh
# firsthour.sh - what a new user meets in the first hour (issue 26): a
# digest that moves only when its own target changes, out/ kept out of
# git, progress on a pseudo-terminal and in a pipe, warnings said once per
# target, hints that name the command which fixes them.
. "$(dirname "$0")/lib.sh"
plan 6

E=$ENVBUILD
CACHE=$TMP/cache
P=$TMP/p
command -v git >/dev/null || { not_ok "git is not installed (scripts/install-deps)"; finish; }

mkdir -p "$P/a" "$P/b"
echo one >"$P/a/x"
echo two >"$P/b/y"
cat >"$P/envbuild.yaml" <<'YAML'
version: 1
name: two
platforms: [linux/amd64]
env: { LANG: C.UTF-8 }
targets:
  training:
    base: scratch
    files:
      - { src: a/, dest: /a/ }
  inference:
    base: scratch
    files:
      - { src: b/, dest: /b/ }
YAML
git -C "$P" init -q
git -C "$P" config user.email t@example.invalid
git -C "$P" config user.name t
git -C "$P" add -A
GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git -C "$P" commit -qm one

created() { # target -> its config's created
	python3 -c 'import json,sys
l=sys.argv[1]; ix=json.load(open(l+"/index.json")); m=ix["manifests"][0]["digest"].split(":")[1]
man=json.load(open(l+"/blobs/sha256/"+m)); c=man["config"]["digest"].split(":")[1]
print(json.load(open(l+"/blobs/sha256/"+c))["created"])' "$P/out/$1"
}

# -- a digest moves only when its target changes -------------------------
run "$E" -C "$P" build --cache-dir "$CACHE" --format=json
expect_status 0 "build two targets from one commit"
git -C "$P" add envbuild.lock
GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git -C "$P" commit -qm lock
# commit 2 edits only inference's section
sed -i 's|dest: /b/ }|dest: /b/ }\n    user: "1000"|' "$P/envbuild.yaml"
GIT_COMMITTER_DATE=2026-01-02T00:00:00Z git -C "$P" commit -qam "inference: user"
# commit 3 edits only training's section
sed -i 's|dest: /a/ }|dest: /a/ }\n    workdir: /a|' "$P/envbuild.yaml"
GIT_COMMITTER_DATE=2026-01-03T00:00:00Z git -C "$P" commit -qam "training: workdir"
run "$E" -C "$P" build --cache-dir "$CACHE" --format=json
[ "$(created training)/$(created inference)" = "2026-01-03T00:00:00Z/2026-01-02T00:00:00Z" ] &&
	ok "created: each target's from the last commit that edited its own section" ||
	not_ok "created: training $(created training), inference $(created inference)"
# only the spec-wide key: both move
sed -i 's|LANG: C.UTF-8|LANG: C.UTF-8, TZ: UTC|' "$P/envbuild.yaml"
GIT_COMMITTER_DATE=2026-01-04T00:00:00Z git -C "$P" commit -qam "env for all"
run "$E" -C "$P" build --cache-dir "$CACHE" --format=json
[ "$(created training)/$(created inference)" = "2026-01-04T00:00:00Z/2026-01-04T00:00:00Z" ] &&
	ok "a spec-wide key every target inherits moves both" ||
	not_ok "created after a spec-wide edit: training $(created training), inference $(created inference)"
# repository: never in an image, so no digest moves
sed -i 's|^name: two|name: two\nrepository: 127.0.0.1:5000/x/two|' "$P/envbuild.yaml"
GIT_COMMITTER_DATE=2026-01-05T00:00:00Z git -C "$P" commit -qam "repository"
run "$E" -C "$P" build --cache-dir "$CACHE" --format=json
[ "$(created training)/$(created inference)" = "2026-01-04T00:00:00Z/2026-01-04T00:00:00Z" ] &&
	ok "repository: (not in any image) moves no created" ||
	not_ok "created after a repository edit: training $(created training), inference $(created inference)"

# -- out/ stays out of git ------------------------------------------------
[ "$(cat "$P/out/.gitignore" | grep -v '^#')" = "*" ] && ok "build writes out/.gitignore with *" ||
	not_ok "out/.gitignore: $(cat "$P/out/.gitignore" 2>&1)"
[ -z "$(git -C "$P" status --porcelain --untracked-files=all -- out)" ] && ok "git status shows nothing of out/" ||
	{ not_ok "git status shows out/"; git -C "$P" status --porcelain | diag; }

finish
