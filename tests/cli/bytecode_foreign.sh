#!/bin/sh
# bytecode_foreign.sh - bytecode for a platform this machine cannot run
# (issue 20): a linux/arm64 target on this amd64 host is compiled by the
# same base's linux/amd64 python3.11 in the sandbox, never by the arm64
# interpreter (it cannot run here) nor by the host's python3.
#   The base: one oci layout whose index has two manifests, the amd64 test
#   base (scripts/make-base) and a real arm64 Debian rootfs (make-base
#   --arch arm64: debootstrap --foreign, its python3.11 an aarch64 ELF).
#   A target with platforms [linux/amd64, linux/arm64] and two pure wheels:
#   an arm64-only build from an empty cache compiles them with the amd64
#   interpreter (EB243 names it and what was compared; no EB241); then the
#   two-platform build, with the compiled-bytecode records dropped, has
#   amd64 compile its own: the arm64 image's __pycache__/*.cpython-311.pyc
#   are byte-identical to those, listed in its RECORD, and its python3.11 an
#   aarch64 ELF.  An arm64 image whose importlib states another magic, and a
#   base with only the arm64 manifest, get EB241 naming the target and why.
#   The same base pushed to a registry as a manifest list: the sibling is
#   pulled by the digest the build resolved.
. "$(dirname "$0")/lib.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v bwrap >/dev/null || skip "bubblewrap not installed"
[ "$(uname -m)" = x86_64 ] || skip "the fixture is an arm64 base built on an amd64 host"
need_base
ARM=${ENVBUILD_TEST_BASE_ARM64:-/var/tmp/envbuild-test-base-arm64}
if [ ! -f "$ARM/.complete" ]; then
	[ "$(id -u)" = 0 ] || { plan 1; not_ok "no arm64 base at $ARM and not root to make one (run scripts/make-base --arch arm64 $ARM as root)"; finish; }
	"$top_srcdir/scripts/make-base" --arch arm64 "$ARM" >"$TMP/make-base-arm64.log" 2>&1 ||
		{ plan 1; not_ok "make-base --arch arm64 failed"; diag <"$TMP/make-base-arm64.log"; finish; }
fi
plan 21

SITE=/usr/local/lib/python3.11/dist-packages
W=$TMP/wheels
python3 "$top_srcdir/tests/helpers/make-wheels.py" "$W" >/dev/null

# the two-platform base: both layouts' blobs (hardlinked when they can be)
# under one index
M=$TMP/multi
mkdir -p "$M/blobs/sha256"
cp "$BASE/oci-layout" "$M/"
link_into "$M/blobs/sha256" "$BASE"/blobs/sha256/* "$ARM"/blobs/sha256/* ||
	{ not_ok "cannot gather the two bases' blobs"; finish; }
python3 - "$M" "$BASE" "$ARM" <<'PY' || { not_ok "cannot make the two-platform base"; finish; }
import hashlib, json, sys
out, amd, arm = sys.argv[1:]
def manifest(layout):
    idx = json.load(open(f"{layout}/index.json"))
    (m,) = [d for d in idx["manifests"]
            if d.get("annotations", {}).get("org.opencontainers.image.ref.name") == "bookworm-python3"]
    return m
ms = []
for layout, arch in ((amd, "amd64"), (arm, "arm64")):
    m = manifest(layout)
    ms.append({"mediaType": m["mediaType"], "digest": m["digest"], "size": m["size"],
               "platform": {"architecture": arch, "os": "linux"}})
doc = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                  "manifests": ms}, separators=(",", ":")).encode()
h = hashlib.sha256(doc).hexdigest()
open(f"{out}/blobs/sha256/{h}", "wb").write(doc)
json.dump({"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.index.v1+json", "digest": "sha256:" + h,
    "size": len(doc), "annotations": {"org.opencontainers.image.ref.name": "bookworm-python3"}}]},
    open(f"{out}/index.json", "w"))
PY
export ENVBUILD_OCI_BASES="$BASE:$ARM:$M"

mkproject() { # DIR BASE PLATFORMS
	mkdir -p "$1"
	cp -r "$W" "$1/wheels"
	cat >"$1/envbuild.yaml" <<YAML
version: 1
name: bcf
python: "3.11"
index: ./wheels
platforms: [$3]
targets:
  app:
    base: $2
    packages: ["tinyapp==1.0.0", "tinydep==1.2.0"]
YAML
}
# files of one platform's image in a built layout, from its layers (newest
# first), into DEST (cheaper than unpacking whole trees)
extract() { # LAYOUT ARCH DEST PATH...
	python3 - "$@" <<'PY'
import json, os, sys, tarfile
d, arch, dest, *want = sys.argv[1:]
want = {p.lstrip("/") for p in want}
def blob(dg): return f"{d}/blobs/sha256/{dg.split(':')[1]}"
doc = json.load(open(blob(json.load(open(f"{d}/index.json"))["manifests"][0]["digest"])))
if "manifests" in doc:
    (m,) = [m for m in doc["manifests"] if m["platform"]["architecture"] == arch]
    doc = json.load(open(blob(m["digest"])))
for layer in reversed(doc["layers"]):
    with tarfile.open(blob(layer["digest"]), "r:*") as t:
        for e in t:
            name = e.name.lstrip("./")
            if name in want and e.isfile():
                os.makedirs(os.path.dirname(f"{dest}/{name}"), exist_ok=True)
                open(f"{dest}/{name}", "wb").write(t.extractfile(e).read())
                want.discard(name)
            if not want:
                break
    if not want:
        break
PY
}
# e_machine of an ELF file (183 aarch64, 62 x86-64)
e_machine() { od -An -tu2 -j18 -N2 "$1" | tr -d ' '; }
PYC=tinyapp/__pycache__/__init__.cpython-311.pyc
PYC2=tinydep/__pycache__/__init__.cpython-311.pyc
REC=tinyapp-1.0.0.dist-info/RECORD

# 1. arm64 alone, empty cache: compiled by the base's amd64 interpreter
P=$TMP/p
mkproject "$P" "oci:$M:bookworm-python3" "linux/amd64, linux/arm64"
run "$ENVBUILD" -C "$P" build --platform linux/arm64 --cache-dir "$TMP/cache"
expect_status 0 "linux/arm64 alone builds on this amd64 host"
expect_out_contains "bytecode: 2 modules compiled, 0 reused" "linux/arm64: its wheels' modules are compiled"
if grep -q "EB243" "$TMP/err" &&
	grep -q "bytecode for its wheels compiled by the base's linux/amd64 python3.11" "$TMP/err" &&
	grep "EB243" "$TMP/err" | grep -q "linux/arm64"; then
	ok "EB243 says the base's linux/amd64 python3.11 compiled the linux/arm64 bytecode"
else not_ok "no EB243 naming the interpreter"; diag <"$TMP/err"; fi
grep -q "magic a70d0d0a (its importlib/_bootstrap_external.py)" "$TMP/err" &&
	ok "and what it compared: the magic the arm64 image's own importlib states" ||
	{ not_ok "the comparison is not named"; diag <"$TMP/err"; }
if grep -q "EB241" "$TMP/err"; then not_ok "EB241 with a sibling"; diag <"$TMP/err"; else ok "no EB241"; fi

# 2. both platforms, the compiled-bytecode records dropped: amd64 compiles
# its own (natively), arm64's layer is the one of step 1
rm -rf "$TMP/cache/pyc"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache"
expect_status 0 "platforms [linux/amd64, linux/arm64] build"
expect_out_contains "bytecode: 2 modules compiled, 0 reused" "linux/amd64 compiles its own"
extract "$P/out/app" arm64 "$TMP/ra" usr/bin/python3.11 "$SITE/$PYC" "$SITE/$PYC2" "$SITE/$REC"
extract "$P/out/app" amd64 "$TMP/rx" usr/bin/python3.11 "$SITE/$PYC" "$SITE/$PYC2"
RA=$TMP/ra
RX=$TMP/rx
[ "$(e_machine "$RA/usr/bin/python3.11")" = 183 ] && [ "$(e_machine "$RX/usr/bin/python3.11")" = 62 ] &&
	ok "the arm64 image's python3.11 is an aarch64 ELF (e_machine 183), the amd64 one's x86-64" ||
	not_ok "e_machine: $(e_machine "$RA/usr/bin/python3.11") / $(e_machine "$RX/usr/bin/python3.11")"
for f in "$PYC" "$PYC2"; do
	if [ -f "$RA$SITE/$f" ] && cmp -s "$RA$SITE/$f" "$RX$SITE/$f"; then
		ok "arm64 $f: byte-identical to the one amd64 compiled"
	else not_ok "arm64 $f missing or different"; fi
done
grep -q "^$PYC,sha256=" "$RA$SITE/$REC" && ok "the arm64 RECORD lists the .pyc" ||
	{ not_ok "RECORD"; diag <"$RA$SITE/$REC"; }

# 3. the same index, but the arm64 image's importlib states another magic
# (a layer on top replaces _bootstrap_external.py): not the same Python
X=$TMP/othermagic
mkdir -p "$X/blobs/sha256"
cp "$M/oci-layout" "$M/index.json" "$X/"
ln "$M"/blobs/sha256/* "$X/blobs/sha256/"
python3 - "$X" <<'PY' || { not_ok "cannot make the other-magic base"; finish; }
import hashlib, io, json, sys, tarfile
d = sys.argv[1]
def path(dg): return f"{d}/blobs/sha256/{dg.split(':')[1]}"
def put(b):
    h = hashlib.sha256(b).hexdigest()
    open(f"{d}/blobs/sha256/{h}", "wb").write(b)
    return "sha256:" + h, len(b)
def putj(o): return put(json.dumps(o, separators=(",", ":")).encode())
f = io.BytesIO()
with tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as t:
    data = b"MAGIC_NUMBER = (3413).to_bytes(2, 'little') + b'\\r\\n'\n"
    e = tarfile.TarInfo("usr/lib/python3.11/importlib/_bootstrap_external.py")
    e.size, e.mode, e.mtime = len(data), 0o644, 0
    t.addfile(e, io.BytesIO(data))
layer = f.getvalue()
top = json.load(open(f"{d}/index.json"))
idx = json.load(open(path(top["manifests"][0]["digest"])))
arm = [m for m in idx["manifests"] if m["platform"]["architecture"] == "arm64"][0]
man = json.load(open(path(arm["digest"])))
cfg = json.load(open(path(man["config"]["digest"])))
ld, ls = put(layer)
cfg["rootfs"]["diff_ids"].append(ld)
cfg.setdefault("history", []).append({"created_by": "test: another magic"})
man["config"]["digest"], man["config"]["size"] = putj(cfg)
man["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ld, "size": ls})
arm["digest"], arm["size"] = putj(man)
top["manifests"][0]["digest"], top["manifests"][0]["size"] = putj(idx)
json.dump(top, open(f"{d}/index.json", "w"))
PY
export ENVBUILD_OCI_BASES="$ENVBUILD_OCI_BASES:$X"
P5=$TMP/p5
mkproject "$P5" "oci:$X:bookworm-python3" "linux/amd64, linux/arm64"
run "$ENVBUILD" -C "$P5" build --platform linux/arm64 --cache-dir "$TMP/cache"
if grep "EB241" "$TMP/err" | grep -q "target 'app' (linux/arm64)" &&
	grep -q "is cpython-311 3.11.[0-9]* (magic a70d0d0a), the linux/arm64 image's states cpython-311, magic 550d0d0a (its importlib/_bootstrap_external.py)" "$TMP/err"; then
	ok "another magic stated by the arm64 image's importlib: no sibling, EB241 says both"
else not_ok "no EB241 for another magic"; diag <"$TMP/err"; fi

# 4. a base with only the arm64 manifest: warned, naming the target and why
P3=$TMP/p3
mkproject "$P3" "oci:$ARM:bookworm-python3" "linux/arm64"
run "$ENVBUILD" -C "$P3" build --cache-dir "$TMP/cache"
expect_status 0 "an arm64-only base builds"
if grep -q "EB241" "$TMP/err" && grep "EB241" "$TMP/err" | grep -q "target 'app' (linux/arm64)" &&
	grep -q "no platform of the base it can run has the same Python: the base has no linux/amd64 image" "$TMP/err"; then
	ok "EB241 names the target, its platform and why"
else not_ok "no EB241 naming the target"; diag <"$TMP/err"; fi
grep -Eq "layers: 1 base, (1 built, 0|0 built, 1) cached" "$TMP/out" && ok "and its wheels are installed" ||
	{ not_ok "no wheel layer"; diag <"$TMP/out"; }
if grep -q "bytecode:" "$TMP/out"; then not_ok "bytecode without a sibling"; else ok "without bytecode"; fi

# 5. the two-platform base in a registry (a manifest list there): the
# sibling is pulled by the digest the build resolved; the interpreter's
# identity and the bytecode come from the cache, so nothing runs
. "$top_srcdir/tests/helpers/registry-env.sh"
DOCKER_CONFIG=$TMP/no-docker-config
export DOCKER_CONFIG
mkdir -p "$DOCKER_CONFIG"
if ! registry_require 2>/dev/null || ! command -v skopeo >/dev/null; then
	ok "# SKIP no docker-registry or skopeo"
	ok "# SKIP no docker-registry or skopeo"
elif ! registry_start plain >"$TMP/registry.log" 2>&1 ||
	! skopeo copy -q --all --format v2s2 --dest-tls-verify=false "oci:$M:bookworm-python3" \
		"docker://$REGISTRY/lib/python:3.11" >"$TMP/skopeo.log" 2>&1; then
	not_ok "cannot put the base in a registry"; diag <"$TMP/registry.log"; diag <"$TMP/skopeo.log"
	not_ok "(skipped)"
else
	P4=$TMP/p4
	mkproject "$P4" "$REGISTRY/lib/python:3.11" "linux/amd64, linux/arm64"
	run "$ENVBUILD" -C "$P4" build --platform linux/arm64 --cache-dir "$TMP/cache"
	expect_out_contains "bytecode: 0 modules compiled, 2 reused" "a registry base (a Docker manifest list): linux/arm64 gets its bytecode"
	grep "compiled by the base's linux/amd64 python3.11" "$TMP/err" | grep -q EB243 &&
		ok "by the linux/amd64 image pulled from the same manifest list" || { not_ok "no EB243"; diag <"$TMP/err"; }
fi
# the registry is done with: stopped before the apt server starts
registry_stop

# 6. apt: packages on a platform this machine cannot run: the replay layer
# (the image's own ldconfig, py3compile, update-ca-certificates) cannot
# run, so it is left out with a warning (EB244) and the build goes on
. "$top_srcdir/tests/helpers/apt-env.sh"
D=$TMP/deb/root
mkdir -p "$D/DEBIAN" "$D/usr/lib/aarch64-linux-gnu"
printf 'Package: eb244-lib\nVersion: 1.0\nArchitecture: arm64\nMaintainer: t <t@t>\nDescription: a library for ldconfig\n' >"$D/DEBIAN/control"
head -c 4096 /dev/zero >"$D/usr/lib/aarch64-linux-gnu/libeb244.so.1"
if ! dpkg-deb -Zgzip -b "$D" "$TMP/deb/eb244-lib_1.0_arm64.deb" >"$TMP/deb.log" 2>&1 ||
	! "$APT_HELPERS/make-apt-repo.sh" build "$TMP/repo" bookworm "$TMP/deb/eb244-lib_1.0_arm64.deb" >"$TMP/repo.log" 2>&1 ||
	! apt_repo_serve "$TMP/repo"; then
	not_ok "cannot make the arm64 apt repository"; diag <"$TMP/deb.log"; diag <"$TMP/repo.log"
	not_ok "(skipped)"; not_ok "(skipped)"
else
	P6=$TMP/p6
	mkdir -p "$P6"
	cp "$TMP/repo/keyring.gpg" "$P6/"
	cat >"$P6/envbuild.yaml" <<YAML
version: 1
name: bcapt
platforms: [linux/arm64]
apt_sources:
  - url: $APT_URL
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  app:
    base: oci:$M:bookworm-python3
    apt: [eb244-lib=1.0]
YAML
	run "$ENVBUILD" -C "$P6" build --cache-dir "$TMP/cache"
	expect_status 0 "an arm64 target with apt: packages builds on this amd64 machine"
	grep "EB244" "$TMP/err" | grep -q "target 'app' (linux/arm64): the maintainer-script replay" &&
		ok "EB244 says the replay needs the image's own programs, naming the target" ||
		{ not_ok "no EB244"; diag <"$TMP/err"; }
	python3 - "$P6/out/app" <<'PY' && ok "and the image has no replay layer" || not_ok "a replay layer in a foreign image"
import json, sys
d = sys.argv[1]
def blob(dg): return json.load(open(f"{d}/blobs/sha256/" + dg.split(":")[1]))
top = json.load(open(f"{d}/index.json"))["manifests"][0]
m = blob(top["digest"])
if "manifests" in m:
    m = blob(m["manifests"][0]["digest"])
hist = [h.get("created_by", "") for h in blob(m["config"]["digest"])["history"]]
assert not any("replay" in h for h in hist), hist
assert any("eb244-lib" in h for h in hist), hist
PY
fi
finish
