#!/bin/sh
# firsthour.sh - what a new user meets in the first hour (issue 26): a
# digest that moves only when its own target changes, out/ kept out of
# git, progress on a pseudo-terminal and in a pipe, warnings said once per
# target, hints that name the command which fixes them.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"
plan 40

E=$ENVBUILD
CACHE=$TMP/cache
P=$TMP/p
for t in git script docker-registry python3; do
	command -v "$t" >/dev/null 2>&1 || { not_ok "$t is not installed (scripts/install-deps)"; finish; }
done
ESC=$(printf '\033')

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

# -- progress --------------------------------------------------------------
# layers big enough that compressing them takes a while: live lines to see,
# and long enough that a rate shows on a fast machine too: at level 9 the
# deflater's match search is slowest on repetitive text (4.6 MB of
# numbers took 0.25-0.6 s, too close to the 0.2 s before a rate shows: a
# run without one failed in CI; 6.9 MB take 1.2 s here)
seq 1 1000000 >"$P/a/big"
head -c 8000000 /dev/urandom >"$P/b/big"
git -C "$P" add -A
git -C "$P" commit -qm "big files"

# tty: script(1) runs envbuild on a real pseudo-terminal
TERM=xterm script -qfec "'$E' -C '$P' build --cache-dir '$TMP/c1' -j1 --level 9" /dev/null \
	>"$TMP/tty" 2>&1
grep -q "layer  *[0-9.]* MiB / [0-9.]* MiB .* training: files a/ -> /a/" "$TMP/tty" &&
	ok "tty: a live line per layer with its name and bytes done / total" ||
	{ not_ok "tty: no live layer line"; cat -v "$TMP/tty" | tail -5 | diag; }
grep -q "${ESC}\[[0-9]*A" "$TMP/tty" && ok "tty: the live lines are redrawn in place (cursor up)" ||
	not_ok "tty: no redraw"
grep -q "[0-9.]* [KMG]\{0,1\}i\{0,1\}B/s" "$TMP/tty" && ok "tty: with a rate" || not_ok "tty: no rate"
# what follows the last erase is the result alone: no live line in it
python3 - "$TMP/tty" <<'PY' && ok "tty: the live lines are gone before the result, never mixed into it" || not_ok "tty: result mixed with progress"
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
last = t.rfind("\x1b[J")
assert last >= 0, "no erase"
tail = t[last + 3:]
assert "\x1b" not in tail, repr(tail)
assert tail.lstrip("\r").startswith("training   sha256:"), repr(tail[:80])
assert "inference  sha256:" in tail and "layer " not in tail, repr(tail)
PY

# a pipe: one line per finished step, no control sequences
run sh -c "'$E' -C '$P' build --cache-dir '$TMP/c2' | cat"
expect_status 0 "build in a pipe"
grep -q "layer written .*[KM]iB  training: files a/ -> /a/\$" "$TMP/err" &&
	grep -q "layer written .*MiB  inference: files b/ -> /b/\$" "$TMP/err" &&
	ok "pipe: a line per layer written, with its target and size" ||
	{ not_ok "pipe: no layer lines"; diag <"$TMP/err"; }
grep -q "$ESC" "$TMP/err" && not_ok "pipe: control sequences in a log" || ok "pipe: no control sequences"
run sh -c "'$E' -C '$P' build --cache-dir '$TMP/c2' | cat"
[ "$(grep -c 'layer cached' "$TMP/err")" = 2 ] && ok "pipe: cached layers say so, once each" ||
	{ not_ok "pipe: cached lines"; diag <"$TMP/err"; }
run "$E" -C "$P" build --cache-dir "$TMP/c2" --quiet
grep -q "layer " "$TMP/err" && { not_ok "--quiet still shows progress"; diag <"$TMP/err"; } ||
	ok "--quiet: no progress"
expect_out_contains "training   sha256:" "--quiet: the result is still printed"
run "$E" -C "$P" build --cache-dir "$TMP/c2" --progress=tty
grep -q "$ESC" "$TMP/err" && ok "--progress=tty draws even into a pipe" || not_ok "--progress=tty drew nothing"
TERM=xterm script -qfec "'$E' -C '$P' build --cache-dir '$TMP/c2' --progress=plain" /dev/null >"$TMP/tty" 2>&1
grep -q "layer cached" "$TMP/tty" && ! grep -q "$ESC" "$TMP/tty" &&
	ok "--progress=plain on a terminal: log lines" || { not_ok "--progress=plain on a tty"; cat -v "$TMP/tty" | diag; }
run "$E" -C "$P" build --cache-dir "$TMP/c2" --progress=fancy
expect_status 2 "--progress=fancy is a usage error"
run "$E" -C "$P" lock --cache-dir "$TMP/c2" --progress=plain
grep -q "layer cached" "$TMP/err" && ok "lock shows its layers too" || { not_ok "lock: no progress"; diag <"$TMP/err"; }

# push: blobs uploaded, then found there
registry_start plain
sed -i "s|^repository: .*|repository: $REGISTRY/x/two|" "$P/envbuild.yaml"
git -C "$P" commit -qam "push here"
run sh -c "'$E' -C '$P' push --cache-dir '$TMP/c2' --allow-dirty | cat"
expect_status 0 "push in a pipe"
grep -q "blob  uploaded .*[KM]iB  sha256:[0-9a-f]\{12\} (training: files a/ -> /a/)" "$TMP/err" &&
	ok "push: a line per blob uploaded, named by its layer" || { not_ok "push: no blob lines"; diag <"$TMP/err"; }
grep -q "put .*tag $REGISTRY/x/two:training\|put .*tag x/two:training" "$TMP/err" &&
	ok "push: the tags put" || { not_ok "push: no tag line"; diag <"$TMP/err"; }
run sh -c "'$E' -C '$P' push --cache-dir '$TMP/c2' --allow-dirty | cat"
grep -q "blob  exists" "$TMP/err" && ! grep -q "blob  uploaded" "$TMP/err" &&
	ok "push again: every blob already there, nothing uploaded" || { not_ok "push again"; diag <"$TMP/err"; }
# a fresh repository on a pty: live lines per blob, gone before the digests
sed -i "s|^repository: .*|repository: $REGISTRY/x/three|" "$P/envbuild.yaml"
git -C "$P" commit -qam "push there"
# (a wide terminal: at 80 columns the line is cut, figures first, name last)
TERM=xterm script -qfec "stty cols 160; '$E' -C '$P' push --cache-dir '$TMP/c2' --allow-dirty" /dev/null >"$TMP/tty" 2>&1
grep -q "push  .*  sha256:[0-9a-f]\{12\} (training: files a/ -> /a/)" "$TMP/tty" &&
	ok "push on a tty: a live line per blob" || { not_ok "push tty: no live blob line"; cat -v "$TMP/tty" | tail | diag; }
python3 - "$TMP/tty" <<'PY' && ok "push on a tty: the digests come after the live lines, clean" || not_ok "push tty: mixed"
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
tail = t[t.rfind("\x1b[J") + 3:]
assert "\x1b" not in tail and "/x/three@sha256:" in tail and "push " not in tail, repr(tail)
PY

# -- hints that name the command -------------------------------------------
H=$TMP/h
mkdir -p "$H"
cat >"$H/envbuild.yaml" <<'YAML'
version: 1
name: hints
python: "3.11"
index: wheels
targets:
  training:
    base: scratch
    requirements_in: [requirements-train.in]
    requirements: [requirements-train.txt]
YAML
mkdir -p "$H/wheels"
echo numpy >"$H/requirements-train.in"
run "$E" -C "$H" check
expect_out_contains "envbuild.yaml:9:20: error: requirements file 'requirements-train.txt' of target 'training' does not exist [EB012]" "EB012: the missing requirements file"
expect_out_contains "  hint: run \`envbuild pin --target training\` to write it from requirements-train.in" \
	"EB012 with requirements_in: the hint names envbuild pin"
run "$E" lock --help
for w in "base tag" "Python pin" "apt_sources: suite's Release" ".deb of every apt: pin" "envbuild pin --upgrade"; do
	grep -qF "$w" "$TMP/out" || { not_ok "lock --help: --upgrade does not name '$w'"; diag <"$TMP/out"; break; }
done && ok "lock --help: --upgrade names everything it resolves again"

# -- local indexes: a directory, file: URLs relative to the project --------
need_base
Q=$TMP/q
mkdir -p "$Q/dist" "$Q/more"
mkwheel() { # DIR NAME VERSION TEXT
	python3 - "$top_srcdir/tests/helpers/make-wheels.py" "$@" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mw", sys.argv[1])
mw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mw)
out, name, version, text = sys.argv[2:6]
mw.write_wheel(out, name, version, [(f"{name}/__init__.py", f"TEXT = {text!r}\n".encode(), False)])
PY
}
mkwheel "$Q/dist" mylib 1.0.0 first
python3 "$top_srcdir/tests/helpers/make-index.py" build "$Q/more/simple" "$Q/dist" >/dev/null 2>&1
mkdir -p "$Q/other"
mkwheel "$Q/other" otherlib 2.0.0 other
qspec() { # INDEX EXTRA
	cat >"$Q/envbuild.yaml" <<YAML
version: 1
name: local
python: "3.11"
index: $1
extra_indexes: [$2]
targets:
  training:
    base: oci:$BASE:bookworm-python3
    packages: ["mylib==1.0.0", "otherlib==2.0.0"]
YAML
}
qspec dist '"file:other"'
run "$E" -C "$Q" build --cache-dir "$TMP/cq" -q
expect_status 0 "index: dist (a flat directory of wheels) and extra_indexes: [file:other]"
qspec '"file://more/simple"' '"file:./other"'
run "$E" -C "$Q" build --cache-dir "$TMP/cq" -q
expect_status 0 "file://more/simple (a PEP 503 tree in the project) and file:./other"
qspec dist '"file:../outside"'
run "$E" -C "$Q" check
expect_out_contains "envbuild.yaml:5:18: error: 'extra_indexes' must stay inside the project directory: 'file:../outside' [EB009]" \
	"file:../outside: refused at its position"
qspec dist '"file:missing"'
run "$E" -C "$Q" build --cache-dir "$TMP/cq" -q
expect_err_contains "envbuild: envbuild.yaml:5:18: error:" "a missing file: index: the error has its position"
expect_err_contains "missing" "... and names the directory"

# a wheel rebuilt with its version kept: say what to do, not "lock again"
qspec dist '"file:other"'
run "$E" -C "$Q" build --cache-dir "$TMP/cq" -q
rm "$Q/dist/mylib-1.0.0-py3-none-any.whl"
mkwheel "$Q/dist" mylib 1.0.0 second
run "$E" -C "$Q" build --cache-dir "$TMP/cq" -q
expect_err_contains "'mylib-1.0.0-py3-none-any.whl' on the index is not the file locked" "a rebuilt wheel of the same version: said so"
expect_err_contains "hint: give the rebuilt wheel a new version" "... with what to do"
expect_err_contains "'envbuild lock --upgrade'" "... naming lock --upgrade"
grep -q "to choose again" "$TMP/err" && not_ok "the old hint that fails again" || ok "no 'run envbuild lock to choose again'"
run "$E" -C "$Q" lock --upgrade --cache-dir "$TMP/cq" -q
expect_status 0 "lock --upgrade takes the rebuilt wheel"
run "$E" -C "$Q" build --cache-dir "$TMP/cq" -q
expect_status 0 "and the build goes on"

finish
