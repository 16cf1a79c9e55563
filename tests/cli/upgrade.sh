#!/bin/sh
# upgrade.sh - a pinned package that the base already has, end to end on
# the real Debian base: a first image (Debian base + upgrademe 1.0.0 and
# samever 1.0.0, installed by envbuild, so with pip's RECORD) is the base of
# a second that pins upgrademe 2.0.0 and samever 1.0.0, then a third pins
# upgrademe 1.0.0 again over the second.  In a chroot of each image (umoci
# unpack) importlib.metadata reports the pinned version, exactly one
# upgrademe-*.dist-info exists, and the modules and script only the other
# version had are gone, as after `pip install`; samever, at the same
# version, is not installed again (EB225), and the lock says `replaces` and
# `in_base`.  Then `lock --pylock` exports image 2's set as
# pylock.new.toml: `envbuild check` accepts it, pip (Debian 12's 23.0.1)
# cannot read PEP 751 at all, and a target whose requirements are that file
# builds the same package layer on the same base.
. "$(dirname "$0")/lib.sh"
skip() { echo "1..0 # SKIP $*"; exit 77; }

BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
SITE=usr/local/lib/python3.11/dist-packages
[ -f "$BASE/.complete" ] || skip "no test base at $BASE (scripts/make-base $BASE)"
command -v umoci >/dev/null || skip "umoci not installed"
[ "$(id -u)" -eq 0 ] || skip "needs root for umoci unpack and chroot"
plan 28
# the images built here are bases of the next ones
ENVBUILD_OCI_BASES=$ENVBUILD_OCI_BASES:$TMP
export ENVBUILD_OCI_BASES

# -- wheels: upgrademe 1.0.0 has a module, a submodule and a script that
# 2.0.0 does not; samever is pinned at the base's version
W=$TMP/wheels
mkdir -p "$W"
run python3 - "$top_srcdir/tests/helpers/make-wheels.py" "$W" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mw", sys.argv[1])
mw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mw)
out = sys.argv[2]
mw.write_wheel(out, "upgrademe", "1.0.0", [
    ("upgrademe/__init__.py", b'__version__ = "1.0.0"\ndef main():\n    print("old")\n', False),
    ("upgrademe/oldonly.py", b"OLD = 1\n", False),
    ("upgrademe_legacy.py", b"LEGACY = 1\n", False),
], entry_points="[console_scripts]\nupgrademe-old = upgrademe:main\n")
mw.write_wheel(out, "upgrademe", "2.0.0", [
    ("upgrademe/__init__.py", b'__version__ = "2.0.0"\n', False),
    ("upgrademe/newonly.py", b"NEW = 2\n", False),
])
mw.simple(out, "samever", "1.0.0")
PY
expect_status 0 "test wheels written (upgrademe 1.0.0 and 2.0.0, samever 1.0.0)"

# project DIR TARGET BASE PINS...: a spec building TARGET on BASE
project() {
	_d=$1 _t=$2 _b=$3
	shift 3
	mkdir -p "$_d"
	{
		printf 'version: 1\nname: up\npython: "3.11"\nindex: %s\ntargets:\n  %s:\n    base: %s\n    packages: [' "$W" "$_t" "$_b"
		_sep=""
		for _p in "$@"; do printf '%s"%s"' "$_sep" "$_p"; _sep=", "; done
		printf ']\n'
	} >"$_d/envbuild.yaml"
}
# in_image DIR CMD: run CMD in a chroot of the image at DIR/out/TARGET
unpack() { # LAYOUT:REF DEST
	rm -rf "$2"
	unpack_rootfs "$1" "$2" >"$TMP/umoci.log" 2>&1 || { diag <"$TMP/umoci.log"; return 1; }
}
version_in() { # ROOTFS
	chroot "$1" python3 -c 'import importlib.metadata as m; print(m.version("upgrademe"))' 2>&1
}
import_ok() { # ROOTFS MODULE
	chroot "$1" python3 -c "import $2" >/dev/null 2>&1
}
dist_infos() { # ROOTFS
	(cd "$1/$SITE" && ls -d upgrademe-*.dist-info 2>/dev/null | tr '\n' ' ')
}

# -- image 1: the old version, on the Debian base
project "$TMP/one" old "oci:$BASE:bookworm-python3" "upgrademe==1.0.0" "samever==1.0.0"
run "$ENVBUILD" -C "$TMP/one" build --cache-dir "$TMP/cache"
expect_status 0 "image 1 (upgrademe 1.0.0) builds on the Debian base"
unpack "$TMP/one/out/old:old" "$TMP/b1" && R1=$TMP/b1/rootfs
[ "$(version_in "$R1")" = "1.0.0" ] && ok "image 1: importlib.metadata says 1.0.0" ||
	{ not_ok "image 1: version $(version_in "$R1")"; }

# -- image 2: upgrade over image 1
project "$TMP/two" new "oci:$TMP/one/out/old:old" "upgrademe==2.0.0" "samever==1.0.0"
run "$ENVBUILD" -C "$TMP/two" lock --cache-dir "$TMP/cache"
expect_status 0 "lock over image 1"
run "$ENVBUILD" -C "$TMP/two" build --locked --cache-dir "$TMP/cache"
expect_status 0 "image 2 (upgrademe 2.0.0) builds on image 1"
if grep -F "EB226" "$TMP/out" "$TMP/err" | grep -qF "upgrading upgrademe 1.0.0 -> 2.0.0"; then
	ok "the build says it upgrades upgrademe 1.0.0 -> 2.0.0 (EB226)"
	grep -hF "EB22" "$TMP/out" "$TMP/err" | diag
else
	not_ok "no EB226 upgrade note"; cat "$TMP/out" "$TMP/err" | diag
fi
if grep -F "EB225" "$TMP/out" "$TMP/err" | grep -qF "samever 1.0.0 is already installed in the base"; then
	ok "the build says samever 1.0.0 is already in the base (EB225)"
else
	not_ok "no EB225 note for samever"; cat "$TMP/out" "$TMP/err" | diag
fi
run python3 - "$TMP/two/envbuild.lock" <<'PY'
import json, sys
pk = json.load(open(sys.argv[1]))["targets"]["new"]["packages"]["linux/amd64"]
by = {p["name"]: p for p in pk}
assert by["upgrademe"]["version"] == "2.0.0" and by["upgrademe"]["replaces"] == "1.0.0", by
assert by["samever"].get("in_base") is True and "replaces" not in by["samever"], by
print("ok")
PY
expect_status 0 "the lock records replaces: 1.0.0 and in_base: true"
unpack "$TMP/two/out/new:new" "$TMP/b2" && R2=$TMP/b2/rootfs
[ "$(version_in "$R2")" = "2.0.0" ] && ok "image 2: importlib.metadata says 2.0.0" ||
	{ not_ok "image 2: version $(version_in "$R2")"; }
[ "$(dist_infos "$R2")" = "upgrademe-2.0.0.dist-info " ] && ok "image 2: one dist-info (2.0.0)" ||
	not_ok "image 2 dist-infos: $(dist_infos "$R2")"
import_ok "$R2" upgrademe.newonly && ok "image 2: upgrademe.newonly imports" ||
	not_ok "image 2: upgrademe.newonly missing"
if import_ok "$R2" upgrademe.oldonly || import_ok "$R2" upgrademe_legacy; then
	not_ok "image 2: a module only 1.0.0 had is still importable"
else
	ok "image 2: upgrademe.oldonly and upgrademe_legacy (only in 1.0.0) are gone"
fi
[ ! -e "$R2/usr/local/bin/upgrademe-old" ] && ok "image 2: 1.0.0's console script is gone" ||
	not_ok "image 2: /usr/local/bin/upgrademe-old still there"
[ -f "$R2/$SITE/samever/__init__.py" ] && [ "$(cd "$R2/$SITE" && ls -d samever-*.dist-info)" = "samever-1.0.0.dist-info" ] &&
	ok "image 2: samever 1.0.0 from the base, once" || not_ok "image 2: samever is not the base's"
# the new layer holds the whiteouts and not samever
run python3 - "$TMP/two/out/new" <<'PY'
import json, sys, tarfile
d = sys.argv[1]
m = json.load(open(f"{d}/index.json"))["manifests"][0]["digest"].split(":")[1]
top = json.load(open(f"{d}/blobs/sha256/{m}"))["layers"][-1]["digest"].split(":")[1]
names = tarfile.open(f"{d}/blobs/sha256/{top}").getnames()
wh = sorted(n for n in names if "/.wh." in "/" + n)
print("\n".join(wh))
assert any(n.endswith(".wh.upgrademe-1.0.0.dist-info") for n in wh), wh
assert any(n.endswith(".wh.upgrademe_legacy.py") for n in wh), wh
assert not any("samever" in n for n in names), names
PY
expect_status 0 "image 2's package layer: whiteouts for 1.0.0, nothing of samever"

# -- lock --pylock: image 2's installed set as PEP 751
run "$ENVBUILD" -C "$TMP/two" lock --pylock --cache-dir "$TMP/cache"
expect_status 0 "lock --pylock"
expect_err_contains "pylock.new.toml written" "it names the file it wrote"
run sh -c "cd '$TMP/two' && '$ENVBUILD' check pylock.new.toml"
expect_status 0 "envbuild check accepts pylock.new.toml"
run python3 - "$TMP/two/pylock.new.toml" <<'PY'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
assert d["lock-version"] == "1.0" and d["created-by"] == "envbuild", d
assert d["requires-python"] == "==3.11.*", d
by = {p["name"]: p for p in d["packages"]}
assert set(by) == {"samever", "upgrademe"}, by
w = by["upgrademe"]["wheels"][0]
assert by["upgrademe"]["version"] == "2.0.0" and w["name"] == "upgrademe-2.0.0-py3-none-any.whl", w
assert len(w["hashes"]["sha256"]) == 64 and w["size"] > 0 and ("url" in w or "path" in w), w
PY
expect_status 0 "Python's tomllib reads it: lock-version 1.0, both packages, wheels with hashes and sizes"
mkdir -p "$TMP/four"
cp "$TMP/two/pylock.new.toml" "$TMP/four/"
printf 'version: 1\nname: up\npython: "3.11"\nindex: %s\ntargets:\n  new:\n    base: oci:%s\n    requirements: [pylock.new.toml]\n' \
	"$W" "$TMP/one/out/old:old" >"$TMP/four/envbuild.yaml"
run "$ENVBUILD" -C "$TMP/four" build --cache-dir "$TMP/cache"
expect_status 0 "a target whose requirements are the exported pylock builds on image 1"
top_layer() { python3 -c 'import json,sys; d=sys.argv[1]; m=json.load(open(d+"/index.json"))["manifests"][0]["digest"].split(":")[1]; print(json.load(open(d+"/blobs/sha256/"+m))["layers"][-1]["digest"])' "$1"; }
[ "$(top_layer "$TMP/four/out/new")" = "$(top_layer "$TMP/two/out/new")" ] &&
	ok "the same package layer as image 2's" || not_ok "the package layer differs from image 2's"

# -- image 3: back down to 1.0.0 over image 2
project "$TMP/three" down "oci:$TMP/two/out/new:new" "upgrademe==1.0.0"
run "$ENVBUILD" -C "$TMP/three" build --cache-dir "$TMP/cache"
expect_status 0 "image 3 (upgrademe 1.0.0) builds on image 2"
if grep -F "EB226" "$TMP/out" "$TMP/err" | grep -qF "downgrading upgrademe 2.0.0 -> 1.0.0"; then
	ok "the build says it downgrades (EB226)"
else
	not_ok "no EB226 downgrade note"; cat "$TMP/out" "$TMP/err" | diag
fi
unpack "$TMP/three/out/down:down" "$TMP/b3" && R3=$TMP/b3/rootfs
[ "$(version_in "$R3")" = "1.0.0" ] && ok "image 3: importlib.metadata says 1.0.0" ||
	not_ok "image 3: version $(version_in "$R3")"
[ "$(dist_infos "$R3")" = "upgrademe-1.0.0.dist-info " ] && ok "image 3: one dist-info (1.0.0)" ||
	not_ok "image 3 dist-infos: $(dist_infos "$R3")"
if import_ok "$R3" upgrademe.newonly; then not_ok "image 3: upgrademe.newonly (2.0.0 only) still imports"
else ok "image 3: upgrademe.newonly (2.0.0 only) is gone"; fi
import_ok "$R3" upgrademe.oldonly && import_ok "$R3" upgrademe_legacy &&
	ok "image 3: 1.0.0's modules are back" || not_ok "image 3: 1.0.0's modules missing"
chroot "$R3" /usr/local/bin/upgrademe-old >"$TMP/o3" 2>&1
grep -qx old "$TMP/o3" && ok "image 3: upgrademe-old runs" || { not_ok "upgrademe-old"; diag <"$TMP/o3"; }
finish
