#!/bin/sh
# copy_exclude.sh - `src: .` copies the project, not its secrets: never
# .git (a CI checkout's .git/config holds its token), the output directory
# or the lock; not what git ignores (.env, keys) unless .envbuildignore
# takes it back with "!"; .envbuildignore and `exclude` add to that; "**"
# matches at any depth including the root; a malformed pattern is an error.
# And a second build of the same project gives the same digest.
. "$(dirname "$0")/lib.sh"
plan 16
for t in git python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "1..0 # SKIP $t is not installed"; exit 77; }
done

P=$TMP/proj
mkdir -p "$P/app/__pycache__" "$P/app/sub/deep" "$P/docs"
git init -q "$P"
git -C "$P" config http.https://github.com/.extraheader "AUTHORIZATION: basic c2VjcmV0LXRva2Vu"
printf '.env\n*.key\nbuild/\n' >"$P/.gitignore"
echo "API_KEY=k-123" >"$P/.env"
echo "-----BEGIN KEY-----" >"$P/id.key"
echo "print(1)" >"$P/app/main.py"
echo "x" >"$P/app/__pycache__/main.pyc"
echo "x" >"$P/top.pyc"
echo "x" >"$P/app/sub/deep/z.pyc"
echo "keep" >"$P/docs/readme.md"
echo "drop" >"$P/docs/draft.md"
mkdir -p "$P/build" && echo "old" >"$P/build/keepme.txt"
printf '# comments and blank lines are fine\n\ndocs/draft.md\n!build/keepme.txt\n' >"$P/.envbuildignore"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: proj
targets:
  app:
    base: scratch
    files: [{ src: ., dest: /srv/, exclude: ["**/*.pyc", "**/__pycache__/"] }]
    cmd: [/srv/app/main.py]
YAML

# layer_names OUT: every path in every layer of the built layout
layer_names() {
	python3 - "$1" <<'PY'
import gzip, json, os, sys, tarfile
root = sys.argv[1]
for name in os.listdir(os.path.join(root, "blobs/sha256")):
    p = os.path.join(root, "blobs/sha256", name)
    try:
        with tarfile.open(fileobj=gzip.open(p)) as t:
            for m in t.getmembers():
                print(m.name)
    except Exception:
        pass
PY
}

run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache"
expect_status 0 "a src: . project builds"
layer_names "$P/out/app" >"$TMP/names"
has() { grep -qx "$1" "$TMP/names"; }
has srv/app/main.py && ok "project files are copied" || { not_ok "srv/app/main.py missing"; diag <"$TMP/names"; }
if grep -Eq '^srv/\.git(/|$)' "$TMP/names"; then not_ok ".git was copied"; else ok ".git is never copied"; fi
if grep -q '^srv/out' "$TMP/names"; then not_ok "out/ was copied"; else ok "the output directory is never copied"; fi
has srv/.env && not_ok ".env (git-ignored) was copied" || ok "git-ignored .env is not copied"
has srv/id.key && not_ok "id.key (git-ignored) was copied" || ok "git-ignored *.key is not copied"
has srv/docs/draft.md && not_ok ".envbuildignore did not exclude docs/draft.md" || ok ".envbuildignore excludes"
has srv/docs/readme.md && ok "what .envbuildignore does not name is copied" || not_ok "docs/readme.md missing"
has srv/build/keepme.txt && ok "'!' in .envbuildignore takes a git-ignored file back" || not_ok "build/keepme.txt missing"
has srv/top.pyc && not_ok "'**/*.pyc' missed the root" || ok "'**' matches at the root"
has srv/app/sub/deep/z.pyc && not_ok "'**/*.pyc' missed a deep file" || ok "'**' matches at any depth"
if grep -q __pycache__ "$TMP/names"; then not_ok "__pycache__ was copied"; else ok "a '**/dir/' pattern excludes directories"; fi
d1=$(cat "$P/out/app/index.json")

# out/ and the lock now exist: the next build must give the same image
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache"
expect_status 0 "a second build"
[ "$(cat "$P/out/app/index.json")" = "$d1" ] && ok "same digest with out/ and the lock present" ||
	not_ok "the second build's index differs"

# malformed patterns are errors, not silent no-ops
sed -i 's|"\*\*/\*.pyc"|"[*.pyc"|' "$P/envbuild.yaml"
run "$ENVBUILD" -C "$P" check
expect_out_contains "exclude pattern '[*.pyc' has an unclosed '[' [EB011]" "a malformed exclude is EB011"
sed -i 's|"\[\*.pyc"|"**/*.pyc"|' "$P/envbuild.yaml"
echo 'docs/[draft' >>"$P/.envbuildignore"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache"
expect_err_contains ".envbuildignore:5:1: error: pattern 'docs/[draft' has an unclosed '['" "a malformed .envbuildignore line is an error"
finish
