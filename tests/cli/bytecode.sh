#!/bin/sh
# bytecode.sh - .pyc files for what envbuild installs (issue: images that
# start as fast as pip's), on the real Debian test base, run as uid 65534
# on a read-only tree (tests/helpers/sandbox-tool: the built image unpacked
# by umoci, mounted read-only as /):
#   wheels: __pycache__/*.cpython-311.pyc next to every module, in RECORD
#     with its hash, `python3 -v` loads them ("code object from ...pyc")
#     and compiles none of their modules from source; a module that does
#     not compile gets no .pyc and an EB240 warning naming it, the build
#     succeeds; two builds from empty caches (other directory, other
#     PYTHONHASHSEED and compression threads) give the same digest; a
#     rebuild compiles nothing (all reused); `bytecode: false` writes none;
#     a linux/arm64 target on this amd64 host gets an EB241 warning;
#   the base's gaps: a base without its standard library's .pyc is noted
#     (EB242); base_bytecode: true compiles it into a layer (imports from it);
#   apt: python3-numpy (with its BLAS/LAPACK/gfortran libraries) and
#     ca-certificates from a signed loopback repository: the replay layer
#     has numpy's .pyc (imported without compiling), an /etc/ld.so.cache
#     that lists the new libraries (ldconfig -p of the image), and
#     /etc/ssl/certs/ca-certificates.crt; EB235 no longer names them.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (umoci unpack keeps the image's owners)"
command -v umoci >/dev/null || skip "umoci not installed"
command -v bwrap >/dev/null || skip "bubblewrap not installed"
need_base
plan 36

SB=$top_builddir/tests/helpers/sandbox-tool
HELPERS=$top_srcdir/tests/helpers
SITE=/usr/local/lib/python3.11/dist-packages
W=$TMP/wheels
python3 "$HELPERS/make-wheels.py" "$W" >/dev/null
# a wheel with a module that does not compile (py2 syntax) next to one that does
python3 - "$W" <<'PY'
import base64, hashlib, sys, zipfile
out = sys.argv[1]
files = {
    "py2mod/__init__.py": b"VALUE = 1\n",
    "py2mod/old.py": b"print 'hello'\n",
    "py2mod-1.0.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: py2mod\nVersion: 1.0.0\n",
    "py2mod-1.0.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
rec = []
for p, d in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
    rec.append(f"{p},sha256={h},{len(d)}")
rec.append("py2mod-1.0.0.dist-info/RECORD,,")
with zipfile.ZipFile(f"{out}/py2mod-1.0.0-py3-none-any.whl", "w") as z:
    for p, d in files.items():
        z.writestr(p, d)
    z.writestr("py2mod-1.0.0.dist-info/RECORD", "\n".join(rec) + "\n")
PY

mkproject() {
	mkdir -p "$1"
	cp -r "$W" "$1/wheels"
	cat >"$1/envbuild.yaml" <<YAML
version: 1
name: bc
python: "3.11"
index: ./wheels
targets:
  app:
    base: oci:$BASE:bookworm-python3
    packages: ["tinyapp==1.0.0", "tinydep==1.2.0", "py2mod==1.0.0"]
YAML
}
digest_of() { sed -n "s/^$1 *\(sha256:[0-9a-f]*\).*/\1/p" "$TMP/out"; }
rootfs() { # LAYOUT TAG DEST
	rm -rf "$3"
	unpack_rootfs "$1:$2" "$3" >/dev/null 2>&1
	chmod 755 "$3"
}

P=$TMP/p
mkproject "$P"
run env PYTHONHASHSEED=1 "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache1"
expect_status 0 "a build with a module that does not compile succeeds"
expect_out_contains "bytecode: 3 modules compiled, 0 reused" "the build reports what it compiled"
expect_err_contains "no bytecode for '$SITE/py2mod/old.py'" "the module that does not compile is named"
expect_err_contains "[EB240]" "with its rule id"
D1=$(digest_of app)

rootfs "$P/out/app" app "$TMP/r1"
R=$TMP/r1/rootfs
for m in tinyapp/__init__ tinydep/__init__ py2mod/__init__; do
	f=$R$SITE/$(dirname $m)/__pycache__/$(basename $m).cpython-311.pyc
	[ -f "$f" ] || { not_ok "no $f"; continue; }
	ok "$(dirname $m): $(basename "$f")"
done
[ ! -e "$R$SITE/py2mod/__pycache__/old.cpython-311.pyc" ] && ok "no .pyc for the module that does not compile" ||
	not_ok "a .pyc for old.py"
grep -q "^tinyapp/__pycache__/__init__.cpython-311.pyc,sha256=" "$R$SITE/tinyapp-1.0.0.dist-info/RECORD" &&
	ok "RECORD lists the .pyc with its hash" || { not_ok "RECORD"; diag <"$R$SITE/tinyapp-1.0.0.dist-info/RECORD"; }
# RECORD's hash is the file's
python3 - "$R$SITE" <<'PY' && ok "RECORD's hashes and sizes match the .pyc files" || not_ok "RECORD hash mismatch"
import base64, csv, hashlib, os, sys
site = sys.argv[1]
for row in csv.reader(open(f"{site}/tinyapp-1.0.0.dist-info/RECORD")):
    if row[0].endswith(".pyc"):
        d = open(os.path.join(site, row[0]), "rb").read()
        h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
        assert row[1] == "sha256=" + h and int(row[2]) == len(d), row
PY

# import as 65534 on the read-only tree: nothing of the packages from source
run "$SB" "$R" /usr/bin/python3 -v -c 'import tinyapp, tinydep, py2mod; print("imported")'
expect_out_contains "imported" "the packages import as uid 65534 on a read-only root"
if grep -q "code object from '$SITE/tinyapp/__pycache__/__init__.cpython-311.pyc'" "$TMP/err" &&
	! grep -E "code object from '$SITE/[^']*\.py'" "$TMP/err" >/dev/null; then
	ok "python3 -v: every module of the packages from its .pyc, none compiled"
else
	not_ok "python3 -v shows modules compiled from source"; grep "$SITE" "$TMP/err" | diag
fi

# determinism: an empty cache, another directory, another hash seed and thread count
P2=$TMP/elsewhere/q
mkproject "$P2"
run env PYTHONHASHSEED=12345 ENVBUILD_THREADS=1 "$ENVBUILD" -C "$P2" build --cache-dir "$TMP/cache2"
expect_status 0 "a second build from an empty cache"
[ -n "$D1" ] && [ "$(digest_of app)" = "$D1" ] && ok "the same digest ($D1)" ||
	not_ok "digests differ: $D1 vs $(digest_of app)"

# a rebuild of another layout from the same cache: nothing compiled
rm -rf "$P/out"
sed -i 's/"py2mod==1.0.0"\]/"py2mod==1.0.0"]\n  other:\n    base: oci:'"$(echo "$BASE" | sed 's,/,\\/,g')"':bookworm-python3\n    packages: ["tinydep==1.2.0"]/' "$P/envbuild.yaml"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache1"
expect_status 0 "a second target from the same cache"
expect_out_contains "bytecode: 0 modules compiled, 1 reused" "its module's bytecode is reused, not compiled"

# bytecode: false
P3=$TMP/off
mkproject "$P3"
sed -i 's/^python: "3.11"/python: "3.11"\nbytecode: false/' "$P3/envbuild.yaml"
run "$ENVBUILD" -C "$P3" build --cache-dir "$TMP/cache1"
expect_status 0 "bytecode: false builds"
rootfs "$P3/out/app" app "$TMP/r3"
n=$(find "$TMP/r3/rootfs$SITE" -name '*.pyc' | wc -l)
[ "$n" = 0 ] && ok "bytecode: false: no .pyc" || not_ok "$n .pyc files with bytecode: false"
[ "$(digest_of app)" != "$D1" ] && ok "and another image" || not_ok "same digest as with bytecode"
sed -i 's/^bytecode: false/bytecode: 3/' "$P3/envbuild.yaml"
run "$ENVBUILD" -C "$P3" check
expect_out_contains "'bytecode' must be true or false" "a bytecode value that is not a boolean is refused"

# a foreign platform: warned, never silently skipped
# (the test base relabelled linux/arm64: its config and manifest rewritten,
# the layer blobs hardlinked; envbuild reads the platform from the config)
P4=$TMP/arm
mkproject "$P4"
mkdir -p "$TMP/armbase"
link_tree "$BASE/blobs" "$TMP/armbase/blobs"
cp "$BASE/oci-layout" "$BASE/index.json" "$TMP/armbase/"
python3 - "$TMP/armbase" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
def blob(dg): return json.load(open(f"{d}/blobs/sha256/{dg.split(':')[1]}"))
def put(obj):
    b = json.dumps(obj, separators=(",", ":")).encode()
    h = hashlib.sha256(b).hexdigest()
    p = f"{d}/blobs/sha256/{h}"
    if os.path.exists(p): os.unlink(p)
    open(p, "wb").write(b)
    return "sha256:" + h, len(b)
idx = json.load(open(f"{d}/index.json"))
m = blob(idx["manifests"][0]["digest"])
c = blob(m["config"]["digest"])
c["architecture"] = "arm64"
m["config"]["digest"], m["config"]["size"] = put(c)
md, ms = put(m)
idx["manifests"][0].update(digest=md, size=ms)
idx["manifests"][0].setdefault("platform", {}).update(architecture="arm64", os="linux")
json.dump(idx, open(f"{d}/index.json", "w"))
PY
sed -i -e 's/^python: "3.11"/python: "3.11"\nplatforms: [linux\/arm64]/' \
	-e "s|base: oci:[^:]*:|base: oci:$TMP/armbase:|" "$P4/envbuild.yaml"
run env ENVBUILD_OCI_BASES="$BASE:$TMP/armbase" "$ENVBUILD" -C "$P4" build --cache-dir "$TMP/cache1"
if grep -q "EB241" "$TMP/err" && grep -q "linux/arm64" "$TMP/err"; then ok "linux/arm64 on this host: EB241 names the target's platform"; else
	not_ok "no EB241 for arm64 (exit $STATUS)"; diag <"$TMP/err"; fi

# -- the base's own gaps: a "slim" base (the test base with the standard
# library's __pycache__ removed by a layer of its own, umoci repack)
mkdir -p "$TMP/slim"
link_tree "$BASE/blobs" "$TMP/slim/blobs"
cp "$BASE/oci-layout" "$BASE/index.json" "$TMP/slim/"
umoci unpack --image "$TMP/slim:bookworm-python3" "$TMP/slimb" >/dev/null 2>&1 # repacked below: the mtree is needed
find "$TMP/slimb/rootfs/usr/lib/python3.11" -name __pycache__ -type d -prune -exec rm -rf {} +
umoci repack --image "$TMP/slim:bookworm-python3" "$TMP/slimb" >/dev/null 2>&1
rm -rf "$TMP/slimb"
P5=$TMP/slimp
mkproject "$P5"
sed -i "s|base: oci:[^:]*:|base: oci:$TMP/slim:|" "$P5/envbuild.yaml"
export ENVBUILD_OCI_BASES="$BASE:$TMP/slim"
run "$ENVBUILD" -C "$P5" build --cache-dir "$TMP/cache1"
expect_err_contains "EB242" "a base without its standard library's bytecode is noted (EB242)"
sed -i 's/^python: "3.11"/python: "3.11"\nbase_bytecode: true/' "$P5/envbuild.yaml"
run "$ENVBUILD" -C "$P5" build --cache-dir "$TMP/cache1"
expect_status 0 "base_bytecode: true builds"
rootfs "$P5/out/app" app "$TMP/r5"
run "$SB" "$TMP/r5/rootfs" /usr/bin/python3 -v -c 'import json, email.parser, tinyapp'
if grep -q "code object from '/usr/lib/python3.11/json/__pycache__/" "$TMP/err" &&
	! grep -E "code object from '/usr/lib/python3.11/[^']*\.py'" "$TMP/err" >/dev/null; then
	ok "base_bytecode: the standard library imports from the new layer's .pyc"
else not_ok "the standard library compiles at import"; grep "code object" "$TMP/err" | head | diag; fi

# -- many modules: compiled on several runs at once (one a core, a share of
# the bytes each), each .pyc its own module's, the bytes the same as one
# run's (--jobs 1)
export ENVBUILD_OCI_BASES="$BASE"
python3 - "$W" <<'PY'
import base64, hashlib, sys, zipfile
files = {"manymods/__init__.py": b""}
for i in range(150):
    # sizes from 30 bytes to ~6 kB, so the runs get different counts
    files[f"manymods/m{i:03d}.py"] = (f"NAME = 'm{i:03d}'\n" + "x = 1\n" * ((i * 37) % 997)).encode()
files["manymods-1.0.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: manymods\nVersion: 1.0.0\n"
files["manymods-1.0.0.dist-info/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
rec = [f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
       for p, d in files.items()] + ["manymods-1.0.0.dist-info/RECORD,,"]
with zipfile.ZipFile(f"{sys.argv[1]}/manymods-1.0.0-py3-none-any.whl", "w") as z:
    for p, d in files.items():
        z.writestr(p, d)
    z.writestr("manymods-1.0.0.dist-info/RECORD", "\n".join(rec) + "\n")
PY
P6=$TMP/many
mkproject "$P6"
sed -i 's/packages: \[.*\]/packages: ["manymods==1.0.0"]/' "$P6/envbuild.yaml"
run "$ENVBUILD" -C "$P6" build --cache-dir "$TMP/cache6"
expect_out_contains "bytecode: 151 modules compiled, 0 reused" "151 modules compiled"
D6=$(digest_of app)
rm -rf "$P6/out"
run "$ENVBUILD" -C "$P6" build --jobs 1 --cache-dir "$TMP/cache7"
[ -n "$D6" ] && [ "$(digest_of app)" = "$D6" ] && ok "one run (--jobs 1) makes the same image ($D6)" ||
	not_ok "--jobs 1: $(digest_of app), several runs: $D6"
rootfs "$P6/out/app" app "$TMP/r6"
run "$SB" "$TMP/r6/rootfs" /usr/bin/python3 -v -c '
import importlib
bad = [i for i in range(150) if importlib.import_module("manymods.m%03d" % i).NAME != "m%03d" % i]
print("imported", len(bad))'
expect_out_contains "imported 0" "each of the 150 modules imports as itself"
n=$(grep -c "code object from '$SITE/manymods/__pycache__/" "$TMP/err")
if [ "$n" = 151 ] && ! grep -E "code object from '$SITE/manymods/[^']*\.py'" "$TMP/err" >/dev/null; then
	ok "python3 -v: all 151 from their .pyc, none compiled"
else not_ok "$n from .pyc"; grep "manymods" "$TMP/err" | grep -v pyc | head | diag; fi

# -- apt: python3-numpy and ca-certificates ---------------------------------
TOOL=$top_builddir/tests/helpers/apt-tool
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || { not_ok "no apt lists (apt-get update)"; finish; }
LAYERS=$(apt_base_layers "$BASE")
# shellcheck disable=SC2086
"$TOOL" status $LAYERS >"$TMP/base-status"
apt_closure "$TMP/base-status" python3-numpy ca-certificates >"$TMP/pins"
st=0
# shellcheck disable=SC2046
apt_repo_make "$TMP/repo" bookworm $(cat "$TMP/pins") >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || { not_ok "cannot make the test repository: $(tail -n 1 "$TMP/make.log")"; finish; }
apt_repo_serve "$TMP/repo" || { not_ok "cannot start the apt server"; finish; }
A=$TMP/apt
mkdir -p "$A"
cp "$TMP/repo/keyring.gpg" "$A/"
{
	printf 'version: 1\nname: aptbc\napt_sources:\n  - url: %s\n    suite: bookworm\n' "$APT_URL"
	printf '    components: [main]\n    signed_by: keyring.gpg\ntargets:\n'
	printf '  sci:\n    base: oci:%s:bookworm-python3\n    apt:\n' "$BASE"
	sed 's/^/      - /' "$TMP/pins"
} >"$A/envbuild.yaml"
run "$ENVBUILD" -C "$A" build --cache-dir "$TMP/cache1"
expect_status 0 "apt: python3-numpy and ca-certificates build"
expect_out_contains "modules compiled" "the build reports the packages' bytecode"
if grep -q "EB235" "$TMP/err" && grep "EB235" "$TMP/err" | grep -qE "ca-certificates|python3-numpy"; then
	not_ok "EB235 still names a replayed package"; grep EB235 "$TMP/err" | diag
else ok "EB235 does not name what was replayed"; fi
rootfs "$A/out/sci" sci "$TMP/ra"
RA=$TMP/ra/rootfs
DP=/usr/lib/python3/dist-packages
[ -f "$RA$DP/numpy/__pycache__/__init__.cpython-311.pyc" ] && ok "numpy has its .pyc" || not_ok "no numpy .pyc"
run "$SB" "$RA" /usr/bin/python3 -v -c 'import numpy; print(numpy.ones(3).sum())'
expect_out_contains "3.0" "numpy imports and computes as uid 65534 on a read-only root"
if grep -q "code object from '$DP/numpy/__pycache__/" "$TMP/err" && ! grep -E "code object from '$DP/numpy/[^']*\.py'" "$TMP/err" >/dev/null; then
	ok "python3 -v: numpy's modules from .pyc, none compiled"
else not_ok "numpy modules compiled at import"; grep -E "code object from '$DP" "$TMP/err" | head | diag; fi
run "$SB" "$RA" /sbin/ldconfig -p
if grep -q "libgfortran.so.5" "$TMP/out" && grep -q "libblas.so.3" "$TMP/out"; then
	ok "ld.so.cache lists the libraries the packages added"; else not_ok "ld.so.cache lacks them"; diag <"$TMP/out"; fi
[ -s "$RA/etc/ssl/certs/ca-certificates.crt" ] && grep -q "BEGIN CERTIFICATE" "$RA/etc/ssl/certs/ca-certificates.crt" &&
	ok "update-ca-certificates: /etc/ssl/certs/ca-certificates.crt" || not_ok "no CA bundle"
finish
