#!/bin/sh
# apt_build.sh - Debian packages through the real commands: a spec with
# apt_sources: and apt: pins on the real Debian test base, against a signed
# loopback repository (tests/helpers/apt-env.sh; the .debs are cached in
# /var/tmp/envbuild-test-debs across runs).  `envbuild lock` records every
# .deb and each source's Release; `envbuild build` makes a training image
# whose gcc compiles and runs a C program and an inference image where
# scikit-learn and numpy import (chroots of umoci unpacks); dpkg -l lists
# every pin; skopeo reads the layouts; a package both targets pin is one
# blob; a rebuild from the lock with the repository stopped (--frozen)
# gives the same digests; --locked and lock --check see apt:/apt_sources
# changes; a changed pin rebuilds only its layer (and the dpkg database
# layer) and reads no other .deb; bad input fails with
# exit 1 and writes nothing.  Needs root (chroot) and the machine's apt
# lists.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
BASE=/var/tmp/envbuild-test-base
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for chroot"
command -v umoci >/dev/null || skip "umoci not installed"
command -v skopeo >/dev/null || skip "skopeo not installed"
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || skip "no apt lists (apt-get update)"
"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/base.log" 2>&1 || skip "no test base: $(tail -n 1 "$TMP/base.log")"
LAYERS=$(apt_base_layers "$BASE")
# shellcheck disable=SC2086
"$TOOL" status $LAYERS >"$TMP/base-status" || skip "cannot read the base's dpkg status"
# gcc's libc6-dev is only a Recommends: pinned, or stdio.h is missing
apt_closure "$TMP/base-status" gcc libc6-dev >"$TMP/train"
apt_closure "$TMP/base-status" python3-sklearn >"$TMP/infer"
apt_closure "$TMP/base-status" hello >"$TMP/hello"
[ -s "$TMP/train" ] && [ -s "$TMP/infer" ] && [ -s "$TMP/hello" ] || skip "apt-get cannot compute the closures"
R=$TMP/repo
st=0
# shellcheck disable=SC2046
apt_repo_make "$R" bookworm $(sort -u "$TMP/train" "$TMP/infer" "$TMP/hello") >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st): $(tail -n 1 "$TMP/make.log")"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
plan 38

EB() { XDG_CACHE_HOME=$TMP/xdg "$ENVBUILD" "$@"; }
# spec DIR TRAIN-PINS-FILE INFER-PINS-FILE [SUITE] [KEYRING]
spec() {
	mkdir -p "$1"
	cp "$R/keyring.gpg" "$R/other-keyring.gpg" "$1/"
	{
		printf 'version: 1\nname: demo\napt_sources:\n  - url: %s\n    suite: %s\n' "$APT_URL" "${4:-bookworm}"
		printf '    components: [main]\n    signed_by: %s\ntargets:\n' "${5:-keyring.gpg}"
		printf '  training:\n    base: oci:%s:bookworm-python3\n    apt:\n' "$BASE"
		sed 's/^/      - /' "$2"
		if [ -n "$3" ]; then
			printf '  inference:\n    base: oci:%s:bookworm-python3\n    apt:\n' "$BASE"
			sed 's/^/      - /' "$3"
		fi
	} >"$1/envbuild.yaml"
}
digest_of() { sed -n "s/^$1 *\(sha256:[0-9a-f]*\).*/\1/p" "$TMP/out"; }
layers_of() { # LAYOUT TAG: layer digests of the image, bottom first
	python3 - "$1" <<'PY'
import json, sys
b = sys.argv[1]
idx = json.load(open(b + "/index.json"))
m = json.load(open(b + "/blobs/sha256/" + idx["manifests"][0]["digest"].split(":")[1]))
for layer in m["layers"]:
    print(layer["digest"])
PY
}

P=$TMP/p
spec "$P" "$TMP/train" "$TMP/infer"
(cd "$P" && git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm spec)
cd "$P" || exit 1
run EB lock
expect_status 0 "envbuild lock resolves and builds both targets"
TRAIN=$(digest_of training)
INFER=$(digest_of inference)
python3 - "$P/envbuild.lock" "$R" "$TMP/train" "$TMP/infer" <<'PY' >"$TMP/check" 2>&1 && ok "the lock records every .deb (sha256, size, url) and the Release digest and Date" || { not_ok "lock records"; diag <"$TMP/check"; }
import hashlib, json, os, sys, urllib.parse
lock, repo = json.load(open(sys.argv[1])), sys.argv[2]
rel = "sha256:" + hashlib.sha256(open(os.path.join(repo, "dists/bookworm/InRelease"), "rb").read()).hexdigest()
for t, pins in (("training", sys.argv[3]), ("inference", sys.argv[4])):
    want = [l.strip() for l in open(pins) if l.strip()]
    apt = lock["targets"][t]["apt"]
    got = apt["packages"]["linux/amd64"]
    assert sorted(p["name"] + "=" + p["version"] for p in got) == sorted(want), (t, len(got), len(want))
    for p in got:
        path = os.path.join(repo, urllib.parse.unquote(p["url"].split("/", 3)[3]))
        data = open(path, "rb").read()
        assert p["sha256"] == hashlib.sha256(data).hexdigest() and p["size"] == len(data), p
    s = apt["sources"][0]
    assert s["release"] == rel and s["date"] and s["suite"] == "bookworm", s
PY
[ -n "$TRAIN" ] && [ -n "$INFER" ] && [ ! -e "$P/out" ] && ok "lock reports both digests and writes no out/" || not_ok "lock output: $OUT"

run EB build --locked
expect_status 0 "envbuild build --locked"
[ -n "$TRAIN" ] && [ "$(digest_of training)" = "$TRAIN" ] && [ "$(digest_of inference)" = "$INFER" ] &&
	ok "the build gives the lock's digests" || not_ok "digests differ from the lock's: $OUT"
expect_err_contains "maintainer scripts of" "EB235 names the packages whose postinst is not run"
cp "$TMP/err" "$TMP/build.err"
# once per target, labelled with it, saying what the scripts would have done
[ "$(grep -c 'EB235' "$TMP/build.err")" = 2 ] &&
	grep -q "^envbuild.yaml: target 'training': warning: the maintainer scripts of [0-9]* packages\{0,1\} were not run; they would .*(.*) \[EB235\]$" "$TMP/build.err" &&
	grep -q "^envbuild.yaml: target 'inference': warning: .*\[EB235\]$" "$TMP/build.err" &&
	ok "EB235: once per target, labelled with the target, naming what was skipped" ||
	{ not_ok "EB235 lines"; grep -A1 EB235 "$TMP/build.err" | diag; }
for t in training inference; do
	run skopeo inspect "oci:$P/out/$t:$t"
	expect_status 0 "skopeo inspect oci:out/$t"
done
layers_of "$P/out/training" >"$TMP/tl"
layers_of "$P/out/inference" >"$TMP/il"
for l in $LAYERS; do echo "sha256:${l##*/}"; done >"$TMP/bl"
SHARED=$(grep -Fxf "$TMP/tl" "$TMP/il" | grep -vxFf "$TMP/bl" || true)
if [ -n "$SHARED" ] && python3 - "$P/out/training" "$SHARED" <<'PY'; then
import json, sys
b, d = sys.argv[1], sys.argv[2].split()[0]
idx = json.load(open(b + "/index.json"))
m = json.load(open(b + "/blobs/sha256/" + idx["manifests"][0]["digest"].split(":")[1]))
c = json.load(open(b + "/blobs/sha256/" + m["config"]["digest"].split(":")[1]))
hist = [h for h in c["history"] if not h.get("empty_layer")]
i = [l["digest"] for l in m["layers"]].index(d)
assert "gcc-12=" in hist[i]["created_by"], hist[i]
PY
	ok "gcc-12, pinned by both targets, is one shared layer blob"
else
	not_ok "no shared package layer between the targets"
fi

# run them: a chroot of each umoci unpack
unpack_rootfs "$P/out/training:training" "$TMP/train-b" >/dev/null 2>&1
unpack_rootfs "$P/out/inference:inference" "$TMP/infer-b" >/dev/null 2>&1
[ -d "$TMP/train-b/rootfs/usr" ] && [ -d "$TMP/infer-b/rootfs/usr" ] && ok "umoci unpacks both images" ||
	not_ok "umoci unpack"
printf '#include <stdio.h>\n#include <math.h>\nint main(void) { printf("sqrt2=%%.3f\\n", sqrt(2.0)); return 0; }\n' \
	>"$TMP/train-b/rootfs/tmp/t.c"
run chroot "$TMP/train-b/rootfs" /usr/bin/env -i PATH=/usr/bin:/bin sh -c 'cc -O2 -o /tmp/t /tmp/t.c -lm && /tmp/t'
expect_out_contains "sqrt2=1.414" "the training image's gcc compiles and runs a C program"
run chroot "$TMP/infer-b/rootfs" /usr/bin/env -i PATH=/usr/bin:/bin python3 -c \
	'import sklearn, numpy; from sklearn.linear_model import LogisticRegression as L; m = L().fit([[0], [1], [2], [3]], [0, 0, 1, 1]); print("sk", sklearn.__version__, m.predict([[2.5]])[0])'
expect_out_contains "sk 1." "python3 -c 'import sklearn, numpy' and a fit in the inference image"
for t in train infer; do
	chroot "$TMP/$t-b/rootfs" dpkg-query -W -f '${db:Status-Abbrev} ${Package}=${Version}\n' >"$TMP/$t-dpkg" 2>&1
	chroot "$TMP/$t-b/rootfs" dpkg -l >"$TMP/$t-dpkgl" 2>&1
	miss=
	while read -r pin; do
		grep -qxF "ii  $pin" "$TMP/$t-dpkg" && grep -q "^ii  ${pin%%=*}[ :]" "$TMP/$t-dpkgl" || miss="$miss $pin"
	done <"$TMP/$t"
	[ -z "$miss" ] && ok "dpkg -l in the $t image lists every pin as installed" ||
		not_ok "dpkg -l in $t lacks$miss"
done

# a second, independent write of every layer, from the lock with the
# repository stopped: the .debs come from the blob store, nothing else
kill "$APT_SERVER_PID" 2>/dev/null
wait "$APT_SERVER_PID" 2>/dev/null
rm -rf "$TMP/xdg/envbuild/deblayers" "$TMP/xdg/envbuild/layers" "$TMP/xdg/envbuild/replay" out
run EB build --frozen
expect_status 0 "build --frozen with the repository stopped"
[ "$(digest_of training)" = "$TRAIN" ] && [ "$(digest_of inference)" = "$INFER" ] &&
	ok "the rewritten layers give the same digests (reproducible)" || not_ok "digests differ: $OUT"
grep -q "^training .*(layers: 1 base, [1-9][0-9]* built, 0 cached)" "$TMP/out" &&
	ok "the layers were really written again" || not_ok "nothing was rebuilt: $OUT"
rm -f "$TMP/apt-http.port"
apt_repo_serve "$R" || { not_ok "cannot restart the HTTP server"; finish; }
sed -i "s|url: http://127.0.0.1:[0-9]*/|url: $APT_URL|" "$P/envbuild.yaml"

# the spec's apt: and apt_sources: are lock inputs
run EB lock --check
expect_status 1 "a changed apt_sources url makes the lock stale"
run EB lock
expect_status 0 "re-lock with the new url"
[ "$(digest_of training)" = "$TRAIN" ] && ok "the url is no input of the image bytes" || not_ok "url changed the image: $OUT"
TL=$(layers_of "$P/out/training" | sed -n 2p)
cat "$TMP/hello" "$TMP/train" | sort -u >"$TMP/train2"
spec "$P" "$TMP/train2" "$TMP/infer"
run EB build --locked
expect_status 1 "build --locked fails when a pin is added"
expect_err_contains "is not up to date" "and says the lock is stale"
run EB lock --check
expect_status 1 "lock --check sees the apt: change"
# every .deb out of the cache: what the change needs is fetched again,
# and the server's log says which (a .deb whose layer is made is not read)
python3 - envbuild.lock <<'PY' | while read -r sha; do rm -f "$TMP/xdg/envbuild/blobs/sha256/$sha"; done
import json, sys
for t in json.load(open(sys.argv[1]))["targets"].values():
    for pkgs in t.get("apt", {}).get("packages", {}).values():
        for p in pkgs:
            print(p["sha256"])
PY
: >"$TMP/apt-http.log"
run EB build
expect_status 0 "build re-locks the changed apt: pins"
grep -o '"path": "[^"]*\.deb"' "$TMP/apt-http.log" | sed 's/.*pool\/[^"]*\/\([^_"]*\)_.*/\1/' | sort -u >"$TMP/fetched"
if grep -qx hello "$TMP/fetched" && ! grep -qx gcc-12 "$TMP/fetched" &&
	[ "$(wc -l <"$TMP/fetched")" -lt "$(wc -l <"$TMP/train")" ]; then
	ok "the change reads only the .debs of the layer it rebuilds ($(wc -l <"$TMP/fetched") of $(wc -l <"$TMP/train2"): $(tr '\n' ' ' <"$TMP/fetched"))"
else
	not_ok "the change fetched: $(tr '\n' ' ' <"$TMP/fetched")"
	diag <"$TMP/apt-http.log"
fi
expect_out_contains "inference  $INFER" "the inference image is unchanged"
# (not the replay layer above them: hello has no library, module or
# certificate, so what ldconfig reads is unchanged; tests/cli/apt_replay.sh)
grep -q "^training .*(layers: 1 base, 2 built, " "$TMP/out" && grep -q "^inference .*(layers: 1 base, 0 built, " "$TMP/out" &&
	ok "only the training layer with the new pin and its dpkg database layer are rebuilt" ||
	not_ok "more was rebuilt: $OUT"
CHANGED=$(digest_of training)
[ "$(layers_of "$P/out/training" | sed -n 2p)" = "$TL" ] && ok "the large gcc-12 layer keeps its digest" ||
	not_ok "the gcc-12 layer changed"
unpack_rootfs "$P/out/training:training" "$TMP/train-c" >/dev/null 2>&1
run chroot "$TMP/train-c/rootfs" hello
expect_out_contains "Hello, world!" "the new pin runs"
# the database written from cached records is the one every .deb gives
rm -rf "$TMP/xdg/envbuild/deblayers" "$TMP/xdg/envbuild/layers" "$TMP/xdg/envbuild/debinfo" out
run EB build --frozen
[ -n "$CHANGED" ] && [ "$(digest_of training)" = "$CHANGED" ] &&
	ok "the changed image is the one a build from scratch makes" ||
	{ not_ok "from scratch: $(digest_of training), after the change: $CHANGED"; diag <"$TMP/err"; }

# bad input: exit 1, a clear error, no lock and no out/ written
bad() { # NAME TEXT: after `run EB lock` in a fresh project
	if [ "$STATUS" = 1 ] && grep -qF -- "$2" "$TMP/err" && [ ! -e envbuild.lock ] && [ ! -e out ]; then
		ok "$1: exit 1, nothing written"
	else
		not_ok "$1: exit $STATUS"
		{ echo "want: $2"; cat "$TMP/err"; ls; } | diag
	fi
}
fresh() { rm -rf "$TMP/q"; spec "$TMP/q" "$@"; cd "$TMP/q" || exit 1; }
cp -r "$R/dists/bookworm" "$R/dists/unsigned"
rm -f "$R/dists/unsigned/InRelease" "$R/dists/unsigned/Release.gpg"
fresh "$TMP/hello" "" unsigned
run EB lock
bad "an unsigned Release" "Release"
fresh "$TMP/hello" "" bookworm other-keyring.gpg
run EB lock
bad "a Release signed by a key not in signed_by" "signed by a key that is not in"
cp -r "$R/dists/bookworm" "$R/dists/tampered"
for f in "$R"/dists/tampered/main/binary-amd64/Packages*; do
	rm -f "$f"
done
sed 's/^Maintainer: .*/Maintainer: someone else/' "$R/dists/bookworm/main/binary-amd64/Packages" |
	tee "$R/dists/tampered/main/binary-amd64/Packages" | xz -c >"$R/dists/tampered/main/binary-amd64/Packages.xz"
gzip -9nc "$R/dists/tampered/main/binary-amd64/Packages" >"$R/dists/tampered/main/binary-amd64/Packages.gz"
# a fresh cache: the Release is bookworm's bytes, so the cache by digest
# already holds the Packages index it signs and the tampered one on the
# server would never be read
fresh "$TMP/hello" "" tampered
run env XDG_CACHE_HOME="$TMP/xdg-tampered" "$ENVBUILD" lock
bad "a tampered Packages index" "does not match the signed Release"
echo "hello" >"$TMP/unpinned"
fresh "$TMP/unpinned" ""
run EB lock
bad "an unpinned apt: entry" "envbuild.yaml:"
grep '^gcc=' "$TMP/train" >"$TMP/lonegcc"
fresh "$TMP/lonegcc" ""
run EB lock
bad "a missing dependency" "add:"
miss=
for p in $(grep -v '^gcc=' "$TMP/train"); do
	case $p in libc6-dev=* | libc-dev-bin=* | linux-libc-dev=* | libcrypt-dev=* | libtirpc-dev=* | libnsl-dev=* | rpcsvc-proto=*) continue ;; esac
	grep -qF -- "$p" "$TMP/err" || miss="$miss $p"
done
[ -z "$miss" ] && ok "the error names every missing pin at once" || not_ok "the error lacks$miss"
# a .deb whose bytes differ from the lock's sha256: a fresh cache fetches it
fresh "$TMP/hello" ""
run EB lock
DEB=$(ls "$R"/pool/main/hello_*.deb)
cp "$DEB" "$TMP/hello.deb"
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[-100] ^= 1; open(p,"wb").write(b)' "$DEB"
run env XDG_CACHE_HOME="$TMP/xdg2" "$ENVBUILD" build --locked
cp "$TMP/hello.deb" "$DEB"
if [ "$STATUS" = 1 ] && grep -q "hello=" "$TMP/err" && [ ! -e out ]; then
	ok "a .deb whose sha256 differs from the lock's: exit 1, no out/"
else
	not_ok "a tampered .deb: exit $STATUS"
	diag <"$TMP/err"
fi
finish
