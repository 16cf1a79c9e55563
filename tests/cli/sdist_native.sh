#!/bin/sh
# sdist_native.sh - native builds in a builder target (`build_in:`): an
# sdist with a C extension, pinned by an inference target whose image has
# no compiler, is compiled in a training target that pins gcc, libc6-dev
# and python3.11-dev by apt: (real Debian .debs from a signed loopback
# repository, tests/helpers/apt-env.sh; the .debs cached in
# /var/tmp/envbuild-test-debs), and only the wheel goes into inference.
#
# Checks: the inference image has the extension's .so and no gcc, no
# Python.h; `python3 -c 'import ext'` works in a chroot of it as an
# unprivileged user; a build from an empty cache (--frozen, which checks
# the rebuilt wheel against the lock) gives the same digests; building
# only inference makes the builder's layers on demand, same digest; a
# change of the builder's image rebuilds the wheel (the cache key has the
# builder's layers); without build_in the build fails with the backend's
# output and a hint naming build_in; check refuses a build_in that names
# no target, the target itself, a cycle or a builder without the
# target's platform (EB257); a builder with another Python X.Y is refused
# (EB258); a native wheel for a platform the host cannot execute is
# refused, naming the host's wheel (EB254).  Needs root (chroot) and the
# machine's apt lists.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
HELPERS=$top_srcdir/tests/helpers
BASE=/var/tmp/envbuild-test-base
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for chroot"
command -v umoci >/dev/null || skip "umoci not installed"
command -v bwrap >/dev/null || skip "bubblewrap not installed"
[ -d /usr/share/python-wheels ] || skip "no Debian setuptools/wheel wheels (python3-setuptools-whl, python3-wheel-whl)"
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || skip "no apt lists (apt-get update)"
"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/base.log" 2>&1 || skip "no test base: $(tail -n 1 "$TMP/base.log")"
LAYERS=$(apt_base_layers "$BASE")
# shellcheck disable=SC2086
"$TOOL" status $LAYERS >"$TMP/base-status" || skip "cannot read the base's dpkg status"
apt_closure "$TMP/base-status" gcc libc6-dev python3.11-dev >"$TMP/train"
apt_closure "$TMP/base-status" hello >"$TMP/hello"
[ -s "$TMP/train" ] && [ -s "$TMP/hello" ] || skip "apt-get cannot compute the closures"
R=$TMP/repo
st=0
# shellcheck disable=SC2046
apt_repo_make "$R" bookworm $(sort -u "$TMP/train" "$TMP/hello") >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st): $(tail -n 1 "$TMP/make.log")"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
plan 23

EB() { XDG_CACHE_HOME=$TMP/xdg "$ENVBUILD" "$@"; }
digest_of() { sed -n "s/^$1 *\(sha256:[0-9a-f]*\).*/\1/p" "$TMP/out"; }

# the sdist: a C extension (ext.f() -> "native 42"), packed deterministically
P=$TMP/p
mkdir -p "$P/dists"
python3 - "$P/dists" <<'PY'
import gzip, io, sys, tarfile
files = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=40.8.0"]\n'
                      'build-backend = "setuptools.build_meta"\n\n'
                      '[project]\nname = "cext"\nversion = "1.0"\nrequires-python = ">=3.7"\n',
    "PKG-INFO": "Metadata-Version: 2.1\nName: cext\nVersion: 1.0\nRequires-Python: >=3.7\n",
    "setup.py": 'from setuptools import Extension, setup\n'
                'setup(ext_modules=[Extension("ext", ["ext.c"])])\n',
    "ext.c": '#include <Python.h>\n'
             'static PyObject *f(PyObject *self, PyObject *args)\n'
             '{ return PyUnicode_FromFormat("native %d", 6 * 7); }\n'
             'static PyMethodDef m[] = { { "f", f, METH_NOARGS, NULL }, { NULL, NULL, 0, NULL } };\n'
             'static struct PyModuleDef d = { PyModuleDef_HEAD_INIT, "ext", NULL, -1, m };\n'
             'PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&d); }\n',
}
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    for p in sorted(files):
        b = files[p].encode()
        ti = tarfile.TarInfo("cext-1.0/" + p)
        ti.size, ti.mtime, ti.mode, ti.uname, ti.gname = len(b), 0, 0o644, "root", "root"
        t.addfile(ti, io.BytesIO(b))
with open(sys.argv[1] + "/cext-1.0.tar.gz", "wb") as f:
    with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
        gz.write(raw.getvalue())
PY
python3 "$HELPERS/make-index.py" build "$P/simple" "$P/dists" >/dev/null || { not_ok "make-index"; finish; }
rm -rf "$P/dists"
SD=$(sha256sum "$P/simple/cext/cext-1.0.tar.gz" | cut -c1-64)
echo "cext==1.0 --hash=sha256:$SD" >"$P/requirements.txt"
for w in setuptools wheel; do
	f=$(ls /usr/share/python-wheels/$w-[0-9]*.whl)
	v=$(basename "$f" | cut -d- -f2)
	echo "$w==$v --hash=sha256:$(sha256sum "$f" | cut -c1-64)"
done >"$P/build-requirements.txt"
cp "$R/keyring.gpg" "$P/"
# spec TRAIN-PINS [INFERENCE-BUILD-IN] [EXTRA-YAML]: the spec of $P
spec() {
	{
		printf 'version: 1\nname: native\npython: "3.11"\nindex: file:simple\n'
		printf 'apt_sources:\n  - url: %s\n    suite: bookworm\n' "$APT_URL"
		printf '    components: [main]\n    signed_by: keyring.gpg\ntargets:\n'
		printf '  training:\n    base: oci:%s:bookworm-python3\n    bytecode: false\n    apt:\n' "$BASE"
		sed 's/^/      - /' "$1"
		printf '  inference:\n    base: oci:%s:bookworm-python3\n' "$BASE"
		[ -n "${2:-}" ] && printf '    build_in: %s\n' "$2"
		printf '    requirements: [requirements.txt]\n    build_requirements: [-r build-requirements.txt]\n'
		[ -n "${3:-}" ] && printf '%s\n' "$3"
	} >"$P/envbuild.yaml"
}
records() { ls "$TMP/xdg/envbuild/sdistwheel" 2>/dev/null | wc -l; }
spec "$TMP/train" training
cd "$P" || exit 1

run EB build
expect_status 0 "build: inference's sdist compiled in training (build_in)"
TRAIN=$(digest_of training)
INFER=$(digest_of inference)
python3 - envbuild.lock "$SD" <<'PY' >"$TMP/check" 2>&1 && ok "the lock records the sdist and the native wheel built from it" || { not_ok "lock records"; diag <"$TMP/check"; }
import json, sys
lock = json.load(open(sys.argv[1]))
pkgs = lock["targets"]["inference"]["packages"]
pkgs = pkgs.get("linux/amd64", pkgs) if isinstance(pkgs, dict) else pkgs
p = [x for x in pkgs if x["name"] == "cext"][0]
assert p["filename"] == "cext-1.0-cp311-cp311-linux_x86_64.whl", p
assert p["sdist"]["sha256"] == sys.argv[2], p
assert "packages" not in lock["targets"]["training"] or not lock["targets"]["training"]["packages"], lock["targets"]["training"]
PY
unpack_rootfs "$P/out/inference:inference" "$TMP/inf" >/dev/null 2>&1
I=$TMP/inf/rootfs
SO=$(find "$I/usr/local/lib" "$I/usr/lib/python3" -name 'ext.cpython-311-x86_64-linux-gnu.so' 2>/dev/null | head -n 1)
[ -n "$SO" ] && head -c 4 "$SO" | grep -q ELF && ok "the inference image has the extension's .so (${SO#"$I"})" ||
	{ not_ok "no ext .so in the inference image"; find "$I" -name 'ext*' | diag; }
# (training's gcc compiles and runs C in a chroot: apt_build.sh)
if grep -q '"name": "gcc-12"' envbuild.lock && ls "$TMP"/xdg/envbuild/rootfs/*/usr/bin/x86_64-linux-gnu-gcc-12 >/dev/null 2>&1 &&
	[ ! -e "$I/usr/bin/gcc" ] && [ ! -e "$I/usr/bin/x86_64-linux-gnu-gcc-12" ] &&
	[ ! -e "$I/usr/include/python3.11/Python.h" ] && [ ! -e "$I/usr/include/stdio.h" ]; then
	ok "gcc, stdio.h and Python.h are in the builder's tree only, not in inference"
else
	not_ok "the compiler leaked into inference, or the builder lacks it"
	ls -ld "$I/usr/bin/"*gcc* "$I/usr/include/python3.11/Python.h" "$TMP/xdg/envbuild/rootfs/"*/usr/bin/*gcc* 2>&1 | diag
fi
run chroot --userspec=65534:65534 "$I" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp sh -c \
	'cd / && python3 -c "import ext; print(ext.f(), ext.__file__.endswith(\".so\"))"'
[ "$STATUS" = 0 ] && [ "$OUT" = "native 42 True" ] && ok "import ext in a chroot of inference, as uid 65534: '$OUT'" ||
	{ not_ok "import ext: exit $STATUS, '$OUT'"; diag <"$TMP/err"; }
[ "$(records)" = 1 ] && ok "one wheel built and cached" || not_ok "sdistwheel records: $(records)"

# a platform this host cannot execute: the native wheel is not made for
# it, and the error says the host's wheel of the sdist is native.  The
# stand-in arm64 base: the test base's layers, one more (an empty file)
# and an arm64 config
Q=$TMP/q
mkdir -p "$Q"
cp -r simple requirements.txt build-requirements.txt "$Q/"
python3 - "$BASE" "$Q/multi" <<'PY'
import hashlib, io, json, os, shutil, sys, tarfile
src, dst = sys.argv[1], sys.argv[2]
def link(a, b):  # hardlinks where one file system holds both (TMP may be a tmpfs)
    try:
        os.link(a, b)
    except OSError:
        shutil.copy2(a, b)
shutil.copytree(src + "/blobs", dst + "/blobs", copy_function=link)
open(dst + "/oci-layout", "w").write('{"imageLayoutVersion": "1.0.0"}')
def blob(b):
    d = hashlib.sha256(b).hexdigest()
    open(f"{dst}/blobs/sha256/{d}", "wb").write(b)
    return {"digest": "sha256:" + d, "size": len(b)}
def read(d):
    return open(f"{src}/blobs/sha256/{d.split(':')[1]}", "rb").read()
top = json.load(open(src + "/index.json"))["manifests"][0]
man = json.loads(read(top["digest"]))
cfg = json.loads(read(man["config"]["digest"]))
t = io.BytesIO()
with tarfile.open(fileobj=t, mode="w") as tf:
    ti = tarfile.TarInfo("etc/arm64-stand-in")
    tf.addfile(ti, io.BytesIO(b""))
extra = blob(t.getvalue())
man["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar", **extra})
cfg["rootfs"]["diff_ids"].append(extra["digest"])
cfg["architecture"], cfg["variant"] = "arm64", "v8"
man["config"] = dict(man["config"], **blob(json.dumps(cfg).encode()))
mt = top["mediaType"]
idx = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [
    {"mediaType": mt, "digest": top["digest"], "size": top["size"],
     "platform": {"architecture": "amd64", "os": "linux"}},
    dict(mediaType=mt, **blob(json.dumps(man).encode()),
         platform={"architecture": "arm64", "os": "linux", "variant": "v8"})]}
ib = blob(json.dumps(idx).encode())
json.dump({"schemaVersion": 2, "manifests": [dict(mediaType=idx["mediaType"], **ib,
           annotations={"org.opencontainers.image.ref.name": "multi"})]}, open(dst + "/index.json", "w"))
PY
printf 'version: 1\nname: foreign\npython: "3.11"\nindex: file:simple\ntargets:\n  app:\n    base: oci:multi:multi\n    platforms: [linux/arm64]\n    requirements: [requirements.txt]\n    build_requirements: [-r build-requirements.txt]\n' >"$Q/envbuild.yaml"
run EB -C "$Q" build
if [ "$STATUS" = 1 ] && grep -q "sdist 'cext-1.0.tar.gz' builds native code (its wheel on this x86_64 host is 'cext-1.0-cp311-cp311-linux_x86_64.whl', not py3-none-any): a wheel for aarch64 .*\[EB254\]" "$TMP/err" &&
	[ ! -e "$Q/out" ]; then
	ok "a native wheel for a platform this host cannot execute: EB254 names the host's wheel; nothing written"
else not_ok "foreign platform: exit $STATUS"; diag <"$TMP/err"; fi

# a second, independent build from an empty cache
run env XDG_CACHE_HOME="$TMP/xdg2" "$ENVBUILD" build --locked
expect_status 0 "build --locked from an empty cache"
[ -n "$INFER" ] && [ "$(digest_of inference)" = "$INFER" ] && [ "$(digest_of training)" = "$TRAIN" ] &&
	ok "the same digests: the native wheel is reproducible" ||
	{ not_ok "digests differ: $INFER/$TRAIN vs"; diag <"$TMP/out"; }
rm -rf "$TMP/xdg2"
# --frozen rebuilds the wheel (its record and blob gone) and checks it
# against the lock's sha256
WSHA=$(python3 -c 'import json,sys; l=json.load(open("envbuild.lock")); p=l["targets"]["inference"]["packages"]; p=p.get("linux/amd64",p) if isinstance(p,dict) else p; print([x for x in p if x["name"]=="cext"][0]["sha256"])')
rm -rf "$TMP/xdg/envbuild/sdistwheel" "$TMP/xdg/envbuild/blobs/sha256/$WSHA"
run EB build --frozen
expect_status 0 "build --frozen with the built wheel gone from the cache"
[ "$(digest_of inference)" = "$INFER" ] && [ "$(records)" = 1 ] && [ -f "$TMP/xdg/envbuild/blobs/sha256/$WSHA" ] &&
	ok "the wheel was built again, the lock's sha256, the same image" ||
	{ not_ok "--frozen rebuild: $(records) records"; diag <"$TMP/out"; }

# only inference: the builder's layers are made on demand, not its image
rm -rf out
run EB build --target inference
expect_status 0 "build --target inference"
[ "$(digest_of inference)" = "$INFER" ] && [ -z "$(digest_of training)" ] && [ ! -e out/training ] &&
	ok "the same inference image, and no training image" || { not_ok "--target inference"; diag <"$TMP/out"; }

# another builder image (hello added): the wheel is built again
cat "$TMP/train" "$TMP/hello" | sort -u >"$TMP/train2"
spec "$TMP/train2" training
run EB build
expect_status 0 "build with hello added to the builder"
[ "$(records)" = 2 ] && ok "a changed builder image builds the wheel again (the key has the builder's layers)" ||
	not_ok "sdistwheel records: $(records)"
[ "$(digest_of inference)" = "$INFER" ] && ok "and it is the same wheel, the same inference image" ||
	not_ok "inference changed: $(digest_of inference) vs $INFER"

# pins that are all wheels: the builder's layers are not made at all
sed -i 's/^    requirements: \[requirements.txt\]$/    requirements: [build-requirements.txt]/' envbuild.yaml
# (a layer made or taken from the cache is a progress line)
run EB build --target inference --progress=plain
if [ "$STATUS" = 0 ] && grep -q "inference: pip install" "$TMP/err" && ! grep -q "training" "$TMP/err"; then
	ok "a build_in target whose pins are all wheels makes nothing of its builder"
else not_ok "wheels only: exit $STATUS"; diag <"$TMP/err"; fi

# no build_in: inference's own base has no compiler
spec "$TMP/train"
rm -f envbuild.lock
run EB build --target inference
if [ "$STATUS" = 1 ] && grep -q "failed (exit [0-9]*); its output" "$TMP/err" &&
	grep -q "x86_64-linux-gnu-gcc" "$TMP/err" && grep -q "hint: .*build_in: NAME" "$TMP/err"; then
	ok "no build_in, no compiler: the backend's output and a hint naming build_in"
else not_ok "without build_in: exit $STATUS"; diag <"$TMP/err"; fi

# what check refuses (EB257)
bad_check() { # NAME TEXT
	run EB check
	if [ "$STATUS" = 1 ] && grep -qF -- "$2" "$TMP/out" "$TMP/err"; then
		ok "$1"
	else not_ok "$1: exit $STATUS"; cat "$TMP/out" "$TMP/err" | diag; fi
}
spec "$TMP/train" trainin
bad_check "build_in naming no target: EB257 with the targets" \
	"build_in of target 'inference' names 'trainin', which is not a target of the spec [EB257]"
spec "$TMP/train" inference
bad_check "build_in naming the target itself: EB257" "target 'inference' cannot be built in itself [EB257]"
spec "$TMP/train" training "    platforms: [linux/amd64, linux/arm64]"
bad_check "a builder without the target's platform: EB257" \
	"target 'inference' is built for linux/arm64, and its builder 'training' is not [EB257]"
spec "$TMP/train" training
sed -i 's/^  training:$/  training:\n    build_in: inference/' envbuild.yaml
bad_check "a cycle of builders: EB257" "build_in of target 'inference' is a cycle"

# a builder with another Python X.Y (its override says 3.12)
spec "$TMP/train" training
sed -i 's/^  training:$/  training:\n    python: "3.12"\n    interpreter: \/usr\/bin\/python3.11/' envbuild.yaml
run EB build --target inference
if [ "$STATUS" = 1 ] && grep -q "whose Python is 3.12; 'inference' has 3.11, and the builder must have the same Python X.Y \[EB258\]" "$TMP/err"; then
	ok "a builder with another Python X.Y: EB258"
else not_ok "another Python X.Y: exit $STATUS"; diag <"$TMP/err"; fi
finish
