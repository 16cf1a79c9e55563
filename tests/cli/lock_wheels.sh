#!/bin/sh
# lock_wheels.sh - a wheel record edited in the lock (a hostile wheel of
# the same name and version, by URL and sha256) is not installed by
# `build --frozen`: a locked sha256 must be one the requirements file pins
# (--hash), or one this machine's cache saw the index serve for that file
# (a lock or --locked build writes the note; assemble/wheeltrust.h).  With
# a fresh cache, --frozen says nothing vouches for an unhashed pin, and one
# `build --locked` (which checks the lock against the index) makes it
# work.  `envbuild check` sees an edit of a hashed pin's record (EB041)
# and a record at odds with itself (EB040) offline.  Real wheels (tests/helpers/make-wheels.py) from a loopback index,
# on the Debian test base.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/index-env.sh"
HELPERS=$top_srcdir/tests/helpers
need_base
plan 14

W=$TMP/wheels
python3 "$HELPERS/make-wheels.py" "$W" >/dev/null 2>"$TMP/mw.err" || { not_ok "make-wheels"; diag <"$TMP/mw.err"; finish; }
python3 "$HELPERS/make-index.py" build "$TMP/simple" "$W" >/dev/null 2>&1
index_serve "$TMP/simple" || { not_ok "index server did not start"; diag <"$TMP/index.err"; finish; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

P=$TMP/p
mkdir -p "$P/evil"
echo "tinyextra==2.0.0 --hash=sha256:$(sha "$W/tinyextra-2.0.0-py3-none-any.whl")" >"$P/requirements.txt"
echo "tinydep==1.2.0" >"$P/requirements-plain.txt"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: tiny
python: "3.11"
index: $INDEX
targets:
  app:
    base: oci:$BASE:bookworm-python3
    requirements: [requirements.txt, requirements-plain.txt]
YAML
# hostile wheels: the same names and versions, one more module each
for w in tinydep-1.2.0 tinyextra-2.0.0; do
	python3 - "$W/$w-py3-none-any.whl" "$P/evil/$w-py3-none-any.whl" <<'PY'
import shutil, sys, zipfile
shutil.copy(sys.argv[1], sys.argv[2])
with zipfile.ZipFile(sys.argv[2], "a") as z:
    z.writestr("evil.py", "print('owned')\n")
PY
done
# edit NAME: point the lock's record of NAME at the hostile wheel
edit() {
	python3 - "$P/envbuild.lock" "$1" "$P/evil" <<'PY'
import glob, hashlib, json, os, sys
lock, name, evil = sys.argv[1:4]
l = json.load(open(lock))
for p in l["targets"]["app"]["packages"]["linux/amd64"]:
    if p["name"] == name:
        path = glob.glob(os.path.join(evil, name + "-*.whl"))[0]
        data = open(path, "rb").read()
        p["url"] = "evil/" + os.path.basename(path)
        p["sha256"] = hashlib.sha256(data).hexdigest()
        p["size"] = len(data)
open(lock, "w").write(json.dumps(l, indent=2, sort_keys=True) + "\n")
PY
}
cd "$P" || exit 1
EB() { "$ENVBUILD" "$@" --cache-dir "$TMP/cache"; }
run EB lock
expect_status 0 "envbuild lock"
cp envbuild.lock "$TMP/good.lock"
run "$ENVBUILD" check
expect_status 0 "envbuild check: the fresh lock's records agree with the spec"

edit tinydep
run EB build --frozen
expect_status 1 "build --frozen refuses a hostile wheel for an unhashed pin"
expect_err_contains "nothing vouches for the lock's sha256" "saying nothing vouches for it"
cp "$TMP/good.lock" envbuild.lock
edit tinyextra
run EB build --frozen
expect_status 1 "build --frozen refuses a hostile wheel for a hashed pin"
expect_err_contains "is none of the hashes the requirement pins" "saying the pin's hashes differ"
run "$ENVBUILD" check
expect_status 1 "envbuild check catches the edit offline (pre-commit, CI)"
expect_out_contains "is none of the pin's --hash values [EB041]" "as EB041"
python3 - envbuild.lock <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
for p in l["targets"]["app"]["packages"]["linux/amd64"]:
    p["filename"] = p["filename"].replace("-2.0.0-", "-2.0.1-")
open(sys.argv[1], "w").write(json.dumps(l, indent=2, sort_keys=True) + "\n")
PY
run "$ENVBUILD" check
expect_out_contains "[EB040]" "a record whose file is not its name and version is EB040"

cp "$TMP/good.lock" envbuild.lock
run EB build --frozen
expect_status 0 "build --frozen from the good lock (the cache saw the index serve it)"
run "$ENVBUILD" build --frozen --cache-dir "$TMP/fresh"
expect_status 1 "with a fresh cache, --frozen cannot vouch for the unhashed pin"
run "$ENVBUILD" build --locked --cache-dir "$TMP/fresh"
expect_status 0 "build --locked checks the lock against the index"
run "$ENVBUILD" build --frozen --cache-dir "$TMP/fresh"
expect_status 0 "then --frozen builds from that cache"
cmp -s envbuild.lock "$TMP/good.lock" && ok "the lock is left as it was" || not_ok "the lock changed"
finish
