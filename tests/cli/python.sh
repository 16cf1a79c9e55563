#!/bin/sh
# python.sh - pinned Python wheels installed by `envbuild build` (no pip, no
# RUN), end to end on the real Debian base (bookworm + python3.11, made by
# scripts/make-base).  Wheels come from tests/helpers/make-wheels.py (pure
# ones written by the standard library, a real C extension built by
# setuptools) and Debian's own pip/setuptools/wheel wheels, served by
# tests/helpers/make-index.py on 127.0.0.1 (PEP 691 JSON and PEP 503 HTML,
# PEP 658 metadata).  The images are unpacked by umoci and run in a chroot.
#
# Checks: what is installed and where (console/gui/legacy scripts with the
# target's interpreter, data files, a C extension that imports, INSTALLER,
# RECORD, the .pyc of every module), pip's file set equal to what Debian's pip installs, the
# slim target without pip or extras, the same bytes from an HTTP, file://
# or wheel-directory index, `check --deep` through PEP 658 metadata,
# refusals that leave no layout (closure gap EB220, conflict EB221,
# requires-python, a RECORD mismatch, path traversal, a wrong --hash), and
# a one-pin change that rebuilds only the layer holding that package.
. "$(dirname "$0")/lib.sh"
plan 67

HELPERS=$top_srcdir/tests/helpers
BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
SYSWHEELS=/usr/share/python-wheels
SITE=usr/local/lib/python3.11/dist-packages
PIPWHL=$SYSWHEELS/pip-23.0.1-py3-none-any.whl
SETUPTOOLSWHL=$SYSWHEELS/setuptools-66.1.1-py3-none-any.whl
WHEELWHL=$SYSWHEELS/wheel-0.38.4-py3-none-any.whl
ROOT=0
[ "$(id -u)" -eq 0 ] && ROOT=1
SRV=""
SRV2=""
trap 'for p in $SRV $SRV2; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

if [ ! -f "$BASE/.complete" ]; then
	if [ "$ROOT" -ne 1 ]; then
		not_ok "no test base at $BASE and not root to make one (run scripts/make-base $BASE as root)"
		finish
	fi
	"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/make-base.log" 2>&1 ||
		{ not_ok "make-base failed"; diag <"$TMP/make-base.log"; finish; }
fi
ok "base image: debootstrap bookworm + python3, packed by umoci"

for f in "$PIPWHL" "$SETUPTOOLSWHL" "$WHEELWHL"; do
	[ -f "$f" ] || { not_ok "missing $f (apt-get install python3-pip-whl python3-setuptools-whl python3-wheel-whl)"; finish; }
done

# -- wheels and index ------------------------------------------------------
W=$TMP/wheels
run python3 "$HELPERS/make-wheels.py" "$W"
if [ "$STATUS" -eq 0 ] && [ -f "$W/tinyspeedup-1.0.0-cp311-cp311-linux_x86_64.whl" ]; then
	ok "make-wheels: pure wheels and a real cp311-cp311-linux_x86_64 C extension"
else
	not_ok "make-wheels failed (exit $STATUS)"; diag <"$TMP/err"; finish
fi
CEXT=$W/tinyspeedup-1.0.0-cp311-cp311-linux_x86_64.whl
run python3 "$HELPERS/make-index.py" build "$TMP/simple" "$W"
expect_status 0 "make-index: PEP 691 + PEP 503 tree with PEP 658 metadata"

# start_server VAR LOG [ARGS]: a server on a free port (written to LOG.port),
# its PID into VAR
start_server() {
	_var=$1 _log=$2
	shift 2
	python3 "$HELPERS/make-index.py" serve "$TMP/simple" --max-seconds 600 --log "$_log" "$@" \
		>"$_log.port" 2>"$_log.err" &
	eval "$_var=$!"
	_i=0
	while [ ! -s "$_log.port" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
}
start_server SRV "$TMP/index.log"
PORT=$(cat "$TMP/index.log.port")
[ -n "$PORT" ] && ok "index server on 127.0.0.1:$PORT" || { not_ok "index server did not start"; diag <"$TMP/index.log.err"; finish; }
INDEX=http://127.0.0.1:$PORT/simple/

sha() { sha256sum "$1" | cut -d' ' -f1; }
hashline() { echo "$1 --hash=sha256:$(sha "$2")"; }

# -- the good project ------------------------------------------------------
P=$TMP/p
mkdir -p "$P/app"
echo 'print("app ok")' >"$P/app/main.py"
{
	echo "# training: everything hashed"
	hashline "tinyapp[fancy]==1.0.0" "$W/tinyapp-1.0.0-py3-none-any.whl"
	hashline "tinydep==1.2.0" "$W/tinydep-1.2.0-py3-none-any.whl"
	hashline "tinyextra==2.0.0" "$W/tinyextra-2.0.0-py3-none-any.whl"
	hashline "tinyspeedup==1.0.0" "$CEXT"
	hashline "pip==23.0.1" "$PIPWHL"
	hashline "setuptools==66.1.1" "$SETUPTOOLSWHL"
	hashline "wheel==0.38.4" "$WHEELWHL"
} >"$P/requirements-train.txt"
# large_package_mb: 1 puts pip and setuptools (several MiB installed) in
# layers of their own; the tiny wheels are grouped.
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: tiny
python: "3.11"
large_package_mb: 1
index: $INDEX
targets:
  training:
    base: oci:$BASE:bookworm-python3
    requirements: [requirements-train.txt]
    files: [{ src: app/, dest: /app/ }]
  inference:
    base: oci:$BASE:bookworm-python3
    packages: ["tinyapp==1.0.0", "tinydep==1.2.0"]
    files: [{ src: app/, dest: /app/ }]
YAML
CACHE=$TMP/cache

digest_of() { # target, from the last json build output
	python3 -c 'import json,sys; print({t["name"]: t["digest"] for t in json.load(open(sys.argv[1]))["targets"]}[sys.argv[2]])' "$TMP/out" "$1"
}
# layers DIR TARGET: the layer digests of out/TARGET, one a line
layers() {
	python3 - "$1/out/$2" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(f"{d}/index.json"))["manifests"][0]["digest"].split(":")[1]
for l in json.load(open(f"{d}/blobs/sha256/{m}"))["layers"]:
    print(l["digest"])
PY
}
unpack() { # LAYOUT:REF DEST
	if [ "$ROOT" -eq 1 ]; then unpack_rootfs "$1" "$2"; else mkdir -p "$2" && umoci raw unpack --rootless --image "$1" "$2/rootfs"; fi
}
# in_image ROOTFS CMD: run a shell command in the image (root, chroot)
in_image() {
	run chroot "$1" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 \
		LC_ALL=C.UTF-8 /bin/sh -c "$2"
}

run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE" --format=json
expect_status 0 "build training and inference from the HTTP index"
cp "$TMP/out" "$TMP/build1.json"
TRAIN=$(digest_of training 2>/dev/null)
INFER=$(digest_of inference 2>/dev/null)
if [ ! -d "$P/out/training" ] || [ ! -d "$P/out/inference" ]; then
	not_ok "no layouts in out/: the rest needs them"
	diag <"$TMP/err"
	finish
fi
T=$TMP/tb/rootfs
I=$TMP/ib/rootfs
# both at once: each unpack of the 68 MB base layer takes seconds
unpack "$P/out/training:training" "$TMP/tb" >"$TMP/unpack-t.log" 2>&1 &
UT=$!
unpack "$P/out/inference:inference" "$TMP/ib" >"$TMP/unpack-i.log" 2>&1 || UI=1
wait "$UT" && [ -z "${UI:-}" ] && ok "umoci unpacks both images" ||
	{ not_ok "umoci unpack failed"; cat "$TMP/unpack-t.log" "$TMP/unpack-i.log" | diag; finish; }

# before anything runs in the images (python would write __pycache__):
# every module installed has the .pyc envbuild compiled, and no other
python3 - "$T/$SITE" "$I/$SITE" <<'PY' >"$TMP/pyc" 2>&1 && ok "every installed module has its .pyc, and there is no other .pyc" || { not_ok ".pyc files"; diag <"$TMP/pyc"; }
import os, sys
bad = 0
for site in sys.argv[1:]:
    for d, _, fs in os.walk(site):
        for f in fs:
            p = os.path.join(d, f)
            if f.endswith(".py") and not os.path.exists(os.path.join(d, "__pycache__", f[:-3] + ".cpython-311.pyc")):
                print("no .pyc:", p); bad += 1
            if f.endswith(".pyc") and not os.path.exists(os.path.join(os.path.dirname(d), f.split(".")[0] + ".py")):
                print("stray .pyc:", p); bad += 1
sys.exit(bad > 0)
PY

python3 - "$T/$SITE" "$I/$SITE" <<'PY' >"$TMP/installer" 2>&1 && ok "every .dist-info/INSTALLER says envbuild" || { not_ok "INSTALLER wrong"; diag <"$TMP/installer"; }
import glob, sys
bad, n = [], 0
for site in sys.argv[1:]:
    for d in glob.glob(site + "/*.dist-info"):
        n += 1
        try:
            s = open(d + "/INSTALLER").read()
        except OSError as e:
            bad.append(f"{d}: {e}"); continue
        if s.strip() != "envbuild":
            bad.append(f"{d}: {s!r}")
assert n == 9, f"{n} dist-info directories, want 7 + 2"
assert not bad, bad
PY

# RECORD: every row with a hash matches the file on disk, and every file in
# site-packages, /usr/local/bin and /usr/local/share is claimed by a RECORD
cat >"$TMP/record.py" <<'PY'
import base64, csv, glob, hashlib, os, sys
root = sys.argv[1]
site = root + "/usr/local/lib/python3.11/dist-packages"
claimed, bad = set(), []
for rec in glob.glob(site + "/*.dist-info/RECORD"):
    for row in csv.reader(open(rec, newline="")):
        if not row:
            continue
        p = os.path.normpath(os.path.join(site, row[0]))
        claimed.add(p)
        if len(row) < 3 or not row[1]:
            if not p.endswith("/RECORD"):
                bad.append(f"{row[0]}: no hash in {rec}")
            continue
        algo, _, want = row[1].partition("=")
        try:
            data = open(p, "rb").read()
        except OSError as e:
            bad.append(f"{row[0]}: {e}"); continue
        got = base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()
        if got != want or int(row[2]) != len(data):
            bad.append(f"{row[0]}: RECORD says {row[1]},{row[2]}, file is {algo}={got},{len(data)}")
for top in (site, root + "/usr/local/bin", root + "/usr/local/share"):
    for dp, dn, fn in os.walk(top):
        for f in fn:
            p = os.path.join(dp, f)
            if p not in claimed:
                bad.append(f"{p[len(root):]}: not in any RECORD")
assert not bad, "\n".join(bad[:20])
PY
run python3 "$TMP/record.py" "$T"
expect_status 0 "training: every RECORD matches its files, every installed file is in a RECORD"
run python3 "$TMP/record.py" "$I"
expect_status 0 "inference: every RECORD matches its files, every installed file is in a RECORD"

# pip's files as Debian's own pip installs them (--prefix /usr/local gives
# .../local/local/... with Debian's scheme: both sides are normalised)
if PIP_CONFIG_FILE=/dev/null /usr/bin/python3 -m pip install -q --disable-pip-version-check \
	--ignore-installed --no-deps --no-compile --no-index --root "$TMP/pipref" --prefix /usr/local \
	"$PIPWHL" >"$TMP/pipref.log" 2>&1; then
	run python3 - "$TMP/pipref" "$T" <<'PY'
import hashlib, os, re, sys
SKIP = {"INSTALLER", "direct_url.json", "REQUESTED"}
def files(root):
    out = {}
    for dp, dn, fn in os.walk(root):
        for f in fn:
            p = os.path.join(dp, f)[len(root):]
            if f.endswith(".pyc") or "/__pycache__/" in p or f in SKIP:
                continue
            m = re.search(r"/lib/python3\.\d+/(?:site|dist)-packages/(.*)$", p)
            if m:
                if re.match(r"pip(/|-23\.0\.1\.dist-info/)", m.group(1)):
                    out["SITE/" + m.group(1)] = open(root + p, "rb").read()
                continue
            m = re.search(r"/bin/(pip[0-9.]*)$", p)
            if m:
                out["BIN/" + m.group(1)] = open(root + p, "rb").read()
    return out
ref, img = files(sys.argv[1]), files(sys.argv[2])
print(f"pip files: debian pip {len(ref)}, envbuild {len(img)}")
only_ref = sorted(set(ref) - set(img))
only_img = sorted(set(img) - set(ref))
if only_ref or only_img:
    print("only in pip's install:", only_ref[:20])
    print("only in envbuild's:", only_img[:20])
    sys.exit(1)
diff = [k for k in ref if k.startswith("SITE/") and not k.endswith("/RECORD") and ref[k] != img[k]]
if diff:
    print("different contents:", diff[:20])
    sys.exit(2)
PY
	case $STATUS in
	0) ok "pip-23.0.1: the same file set as Debian's pip install (prefix normalised)"
	   ok "pip-23.0.1: the same bytes for every file but RECORD and the scripts" ;;
	2) ok "pip-23.0.1: the same file set as Debian's pip install (prefix normalised)"
	   not_ok "pip-23.0.1: file contents differ"; diag <"$TMP/out" ;;
	*) not_ok "pip-23.0.1: file set differs from Debian's pip install"; diag <"$TMP/out"
	   not_ok "pip-23.0.1: contents not compared" ;;
	esac
else
	not_ok "reference install with Debian's pip failed (/usr/bin/python3 -m pip; package python3-pip)"
	diag <"$TMP/pipref.log"
	not_ok "pip-23.0.1: contents not compared"
fi

# -- running the images ----------------------------------------------------
if [ "$ROOT" -eq 1 ]; then
	in_image "$T" "python3 -c 'import tinyapp, tinydep, _speedup; print(_speedup.answer())'"
	[ "$STATUS" -eq 0 ] && [ "$OUT" = 42 ] && ok "training: tinyapp, tinydep and the C extension import; _speedup.answer() == 42" ||
		{ not_ok "training imports: exit $STATUS, out '$OUT'"; diag <"$TMP/err"; }
	in_image "$T" "tinyapp"
	[ "$STATUS" -eq 0 ] && [ "$OUT" = "tinyapp ok" ] && ok "training: console script 'tinyapp' prints 'tinyapp ok'" ||
		{ not_ok "tinyapp script: exit $STATUS, out '$OUT'"; diag <"$TMP/err"; }
	in_image "$T" "tinyapp-legacy"
	[ "$STATUS" -eq 0 ] && [ "$OUT" = "tinyapp-legacy 1.0.0" ] && ok "training: the .data/scripts script runs" ||
		{ not_ok "tinyapp-legacy: exit $STATUS, out '$OUT'"; diag <"$TMP/err"; }
	in_image "$T" "tinyapp-gui"
	[ "$STATUS" -eq 0 ] && [ "$OUT" = "tinyapp gui" ] && ok "training: gui script 'tinyapp-gui' runs" ||
		{ not_ok "tinyapp-gui: exit $STATUS, out '$OUT'"; diag <"$TMP/err"; }
	in_image "$T" "python3 -m pip --version"
	case "$STATUS:$OUT" in
	"0:pip 23.0.1 from /$SITE/pip (python 3.11)") ok "training: python3 -m pip --version works ($OUT)" ;;
	*) not_ok "pip --version: exit $STATUS, out '$OUT'"; diag <"$TMP/err" ;;
	esac
	in_image "$T" "python3 -c 'import setuptools, wheel, tinyextra; print(setuptools.__version__, wheel.__version__)'"
	[ "$STATUS" -eq 0 ] && [ "$OUT" = "66.1.1 0.38.4" ] && ok "training: setuptools, wheel and the extra tinyextra import" ||
		{ not_ok "setuptools/wheel/tinyextra: exit $STATUS, out '$OUT'"; diag <"$TMP/err"; }
	in_image "$I" "tinyapp && python3 -c 'import tinydep; print(tinydep.__version__)'"
	[ "$STATUS" -eq 0 ] && [ "$OUT" = "tinyapp ok
1.2.0" ] && ok "inference: tinyapp runs, tinydep 1.2.0 imports" ||
		{ not_ok "inference run: exit $STATUS, out '$OUT'"; diag <"$TMP/err"; }
	in_image "$I" "python3 -m pip --version"
	[ "$STATUS" -ne 0 ] && ok "inference: python3 -m pip fails (no pip)" || not_ok "inference has a working pip: $OUT"
	in_image "$I" "python3 -c 'import tinyextra'"
	[ "$STATUS" -ne 0 ] && ok "inference: tinyextra does not import (extra not asked for)" || not_ok "inference imports tinyextra"
else
	for i in 1 2 3 4 5 6 7 8 9; do not_ok "chroot needs root"; done
fi
head -n 1 "$T/usr/local/bin/tinyapp-legacy" | grep -qx '#!/usr/bin/python3.11' &&
	ok "'#!python' of .data/scripts rewritten to #!/usr/bin/python3.11" ||
	{ not_ok "tinyapp-legacy first line: $(head -n 1 "$T/usr/local/bin/tinyapp-legacy" 2>&1)"; }
[ -x "$T/usr/local/bin/tinyapp" ] && [ -x "$T/usr/local/bin/tinyapp-gui" ] && [ -x "$T/usr/local/bin/tinyapp-legacy" ] &&
	head -n 1 "$T/usr/local/bin/tinyapp" | grep -qx '#!/usr/bin/python3.11' &&
	ok "entry-point scripts are executable with the target's interpreter" || not_ok "scripts not executable or wrong shebang"
[ -f "$T/usr/local/share/tinyapp/README" ] && cmp -s "$T/usr/local/share/tinyapp/README" "$I/usr/local/share/tinyapp/README" &&
	ok ".data/data lands in /usr/local/share/tinyapp/" || not_ok ".data/data file missing"
absent=""
for p in "$SITE/pip" "$SITE/setuptools" "$SITE/wheel" "$SITE/tinyextra" "$SITE/_speedup.cpython-311-x86_64-linux-gnu.so" \
	usr/local/bin/pip usr/local/bin/pip3 usr/local/bin/wheel; do
	[ -e "$I/$p" ] && absent="$absent $p"
done
[ -z "$absent" ] && ok "inference has no pip, setuptools, wheel, tinyextra or C extension" || not_ok "inference holds:$absent"
[ -f "$T/$SITE/_speedup.cpython-311-x86_64-linux-gnu.so" ] && ok "training holds _speedup.cpython-311-x86_64-linux-gnu.so" ||
	not_ok "C extension not installed"

# the same package is the same bytes in both images
same=1
for p in "$SITE/tinyapp" "$SITE/tinyapp-1.0.0.dist-info" "$SITE/tinydep" "$SITE/tinydep-1.2.0.dist-info" \
	usr/local/bin/tinyapp usr/local/bin/tinyapp-gui usr/local/bin/tinyapp-legacy; do
	diff -r "$T/$p" "$I/$p" >/dev/null 2>&1 || { same=0; echo "$p differs" | diag; }
done
[ "$same" -eq 1 ] && ok "tinyapp and tinydep files are identical in both images" || not_ok "tinyapp/tinydep differ between images"
# RECORD lists scripts as ../../../bin/…: the same in both; RECORD itself compared above

python3 - "$TMP/build1.json" >"$TMP/lay" 2>&1 <<'PY' && ok "layers: base, pip, setuptools (own layers), grouped small wheels, app files" || { not_ok "layer plan"; diag <"$TMP/lay"; }
import json, sys
t = {t["name"]: t["platforms"][0]["layers"] for t in json.load(open(sys.argv[1]))["targets"]}
tr = [l["createdBy"] for l in t["training"] if not l["fromBase"]]
inf = [l["createdBy"] for l in t["inference"] if not l["fromBase"]]
print(tr, inf)
assert tr == ["envbuild: pip install pip==23.0.1", "envbuild: pip install setuptools==66.1.1",
              "envbuild: pip install tinyapp==1.0.0 tinydep==1.2.0 tinyextra==2.0.0 tinyspeedup==1.0.0 wheel==0.38.4",
              "envbuild: files app/ -> /app/"], tr
assert inf == ["envbuild: pip install tinyapp==1.0.0 tinydep==1.2.0", "envbuild: files app/ -> /app/"], inf
PY
python3 - "$TMP/build1.json" >"$TMP/lay" 2>&1 <<'PY' && ok "the app files layer is one blob in both images; the grouped package layers differ (tinydep is grouped, not a layer of its own)" || { not_ok "shared layers"; diag <"$TMP/lay"; }
import json, sys
t = {t["name"]: t["platforms"][0]["layers"] for t in json.load(open(sys.argv[1]))["targets"]}
assert t["training"][-1]["digest"] == t["inference"][-1]["digest"]
assert t["training"][0]["digest"] == t["inference"][0]["digest"]
assert t["training"][-2]["digest"] != t["inference"][-2]["digest"]
PY

# -- reproducible, whatever the index kind --------------------------------
mkdir -p "$TMP/p-cold"
cp -r "$P/app" "$P/requirements-train.txt" "$P/envbuild.yaml" "$TMP/p-cold/"
run "$ENVBUILD" -C "$TMP/p-cold" build --cache-dir "$TMP/cache-cold" --format=json
[ "$STATUS" -eq 0 ] && [ "$(digest_of training)" = "$TRAIN" ] && [ "$(digest_of inference)" = "$INFER" ] &&
	ok "a second build elsewhere with a cold cache gives the same digests" ||
	{ not_ok "cold rebuild: exit $STATUS, digests differ"; diag <"$TMP/err"; }

# inference_with INDEX NAME: build inference alone from another index
inference_with() {
	rm -rf "$TMP/px"
	mkdir -p "$TMP/px"
	cp -r "$P/app" "$P/requirements-train.txt" "$TMP/px/"
	sed "s|^index: .*|index: $1|" "$P/envbuild.yaml" >"$TMP/px/envbuild.yaml"
	run "$ENVBUILD" -C "$TMP/px" build --target inference --cache-dir "$TMP/cache-px-$3" --format=json
	if [ "$STATUS" -eq 0 ] && [ "$(digest_of inference)" = "$INFER" ]; then ok "$2: the same inference digest"; else
		not_ok "$2: exit $STATUS, digest $(digest_of inference 2>/dev/null) want $INFER"; diag <"$TMP/err"
	fi
}
inference_with "file://$TMP/simple" "a file:// simple tree (PEP 691 index.json on disk)" f
inference_with "$W" "a plain directory of wheels" d
start_server SRV2 "$TMP/index2.log" --no-json
PORT2=$(cat "$TMP/index2.log.port")
inference_with "http://127.0.0.1:$PORT2/simple/" "an HTML-only server (PEP 503)" h
grep -q '"path": "/simple/tinyapp/"' "$TMP/index2.log" 2>/dev/null && ok "the HTML-only server was asked" || not_ok "the HTML server saw no request"

# -- check --deep -----------------------------------------------------------
: >"$TMP/index.log"
run "$ENVBUILD" -C "$P" check --deep --cache-dir "$TMP/cache-deep"
expect_status 0 "check --deep: the good spec is clean"
if grep -q '\.whl"' "$TMP/index.log"; then
	not_ok "check --deep downloaded wheels although the index serves PEP 658 metadata"; grep '\.whl"' "$TMP/index.log" | diag
elif grep -q '\.whl\.metadata"' "$TMP/index.log"; then
	ok "check --deep read PEP 658 .metadata files, downloaded no wheel"
else
	not_ok "check --deep asked the index nothing"; diag <"$TMP/index.log"
fi

# -- refusals: a message that names the problem, no layout left ----------
# badproj NAME REQS-CONTENT: a one-target project pinning REQS-CONTENT in reqs.txt
badproj() {
	mkdir -p "$TMP/$1"
	printf '%s\n' "$2" >"$TMP/$1/reqs.txt"
	cat >"$TMP/$1/envbuild.yaml" <<YAML
version: 1
name: bad
python: "3.11"
index: $INDEX
targets:
  inference:
    base: oci:$BASE:bookworm-python3
    requirements: [reqs.txt]
YAML
}
nothing_left() {
	[ ! -e "$TMP/$1/out/inference" ] && ok "$1: no out/inference left behind" || not_ok "$1: out/inference was written"
}
expect_failure() {
	if [ "$STATUS" -ne 0 ]; then ok "$1 (exit $STATUS)"; else not_ok "$1: exit 0"; diag <"$TMP/out"; fi
}

badproj incomplete "# tinydep is not pinned
tinyapp==1.0.0"
run "$ENVBUILD" -C "$TMP/incomplete" check --deep --cache-dir "$TMP/cache-deep"
expect_status 1 "check --deep: a requirement of a pin not pinned"
expect_out_contains "reqs.txt:2:1: error: tinyapp==1.0.0 requires tinydep>=1.0; tinydep is not pinned [EB220]" "check --deep reports EB220 at the requirement"
[ ! -e "$TMP/incomplete/out" ] && ok "check --deep built nothing" || not_ok "check --deep created out/"
run "$ENVBUILD" -C "$TMP/incomplete" build --cache-dir "$CACHE"
expect_status 1 "build refuses tinyapp without tinydep"
if grep -qF "reqs.txt:2:1: error: tinyapp==1.0.0 requires tinydep>=1.0; tinydep is not pinned [EB220]" "$TMP/out" "$TMP/err"; then
	ok "EB220 at reqs.txt:2:1"; else not_ok "EB220 message missing"; cat "$TMP/out" "$TMP/err" | diag; fi
nothing_left incomplete

badproj conflict "tinyapp==1.0.0
tinydep==0.9.0"
run "$ENVBUILD" -C "$TMP/conflict" build --cache-dir "$CACHE"
expect_status 1 "build refuses tinydep==0.9.0 against tinydep>=1.0"
if grep -qF "reqs.txt:1:1: error: tinyapp==1.0.0 requires tinydep>=1.0, but tinydep is pinned to 0.9.0 at reqs.txt:2 [EB221]" "$TMP/out" "$TMP/err"; then
	ok "EB221 names both pins"; else not_ok "EB221 message missing"; cat "$TMP/out" "$TMP/err" | diag; fi
nothing_left conflict

# the base's python is 3.11.2 (bookworm): python_full_version >= 3.11.1
# holds, so tinydep is required (it was skipped when 3.11 meant 3.11.0)
badproj patch "patchdep==1.0.0"
run "$ENVBUILD" -C "$TMP/patch" build --cache-dir "$CACHE"
expect_status 1 "build refuses patchdep without tinydep on python 3.11.2"
if grep -qF "error: patchdep==1.0.0 requires tinydep>=1.0 (python_full_version >= '3.11.1'); tinydep is not pinned [EB220]" "$TMP/out" "$TMP/err"; then
	ok "python_full_version sees the base's patch level"; else not_ok "EB220 for python_full_version missing"; cat "$TMP/out" "$TMP/err" | diag; fi

# python_version ~= "3" cannot be evaluated (packaging raises): an error
# naming the wheel and the marker, not a dependency silently dropped
badproj badmarker "badmarker==1.0.0"
run "$ENVBUILD" -C "$TMP/badmarker" build --cache-dir "$CACHE"
expect_status 1 "build refuses a wheel whose Requires-Dist marker cannot be evaluated"
if grep -F "[EB224]" "$TMP/out" "$TMP/err" | grep -F "badmarker-1.0.0-py3-none-any.whl" | grep -qF "python_version ~= "; then
	ok "EB224 names the wheel and the marker"; else not_ok "EB224 message missing"; cat "$TMP/out" "$TMP/err" | diag; fi

badproj future "futureonly==1.0.0"
run "$ENVBUILD" -C "$TMP/future" build --cache-dir "$CACHE"
expect_failure "build refuses a pin whose only wheel requires python >=3.99"
expect_err_contains "reqs.txt:1:1: error: 'futureonly==1.0.0': no wheel of futureonly==1.0.0" "the requires-python refusal is at the requirement"
expect_err_contains "allows python 3.11; the index has: futureonly-1.0.0-py3-none-any.whl (requires-python >=3.99)" "it names requires-python and the file"
nothing_left future

badproj evil "evil==1.0.0"
run "$ENVBUILD" -C "$TMP/evil" build --cache-dir "$CACHE"
expect_failure "build refuses a wheel whose RECORD hash is wrong"
expect_err_contains "'evil/__init__.py' does not match its RECORD hash" "the file and RECORD are named"
nothing_left evil

badproj traversal "traversal==1.0.0"
run "$ENVBUILD" -C "$TMP/traversal" build --cache-dir "$CACHE"
expect_failure "build refuses a wheel with a ../../etc/evil entry"
expect_err_contains "path '../../etc/evil' climbs out of the install directory" "the traversal is named"
nothing_left traversal
[ ! -e /etc/evil ] && [ ! -e "$TMP/etc/evil" ] && [ ! -e "$CACHE/etc/evil" ] && ok "nothing was written outside" || not_ok "an 'evil' file was written"

badproj badhash "$(hashline tinyapp==1.0.0 "$W/tinyapp-1.0.0-py3-none-any.whl")
tinydep==1.2.0 --hash=sha256:$(printf '%064d' 0)"
run "$ENVBUILD" -C "$TMP/badhash" build --cache-dir "$CACHE"
expect_failure "build refuses tinydep with a wrong --hash"
expect_err_contains "reqs.txt:2:1: error: 'tinydep==1.2.0': no wheel of tinydep==1.2.0" "at the requirement"
expect_err_contains "has one of the requirement's hashes; the index has: tinydep-1.2.0-py3-none-any.whl (other hash)" "the hash mismatch is named"
nothing_left badhash

# -- one pin changed: only the layer holding it is rebuilt -----------------
mkdir -p "$TMP/p2"
cp -r "$P/app" "$P/envbuild.yaml" "$TMP/p2/"
sed "s|^tinydep==1.2.0 .*|$(hashline tinydep==1.3.0 "$W/tinydep-1.3.0-py3-none-any.whl")|" \
	"$P/requirements-train.txt" >"$TMP/p2/requirements-train.txt"
run "$ENVBUILD" -C "$TMP/p2" build --cache-dir "$CACHE" --format=json
expect_status 0 "rebuild with tinydep 1.2.0 -> 1.3.0 in training"
cp "$TMP/out" "$TMP/build2.json"
python3 - "$TMP/build1.json" "$TMP/build2.json" >"$TMP/lay" 2>&1 <<'PY' && ok "only the grouped package layer holding tinydep changed; base, pip, setuptools and app files layers identical" || { not_ok "layer diff wrong"; diag <"$TMP/lay"; }
import json, sys
def load(p):
    return {t["name"]: t["platforms"][0]["layers"] for t in json.load(open(p))["targets"]}
a, b = load(sys.argv[1]), load(sys.argv[2])
da = [l["digest"] for l in a["training"]]
db = [l["digest"] for l in b["training"]]
print(da, db)
assert len(da) == len(db)
diff = [i for i in range(len(da)) if da[i] != db[i]]
assert len(diff) == 1 and "tinydep==1.3.0" in b["training"][diff[0]]["createdBy"], diff
assert [l["digest"] for l in a["inference"]] == [l["digest"] for l in b["inference"]]
cached = [l["createdBy"] for l in b["training"] if l["cached"]]
print("cached:", cached)
assert len(cached) == 3, cached  # pip, setuptools, app files
PY
# the changed layer, read with tarfile (a third umoci unpack costs ~10 s)
python3 - "$TMP/p2/out/training" "$TMP/build1.json" "$TMP/build2.json" >"$TMP/lay" 2>&1 <<'PY' && ok "the new layer holds tinydep 1.3.0 and no trace of 1.2.0" || { not_ok "changed layer content"; diag <"$TMP/lay"; }
import json, sys, tarfile
def load(p):
    return [l["digest"] for l in json.load(open(p))["targets"][0]["platforms"][0]["layers"]]
old, new = load(sys.argv[2]), load(sys.argv[3])
changed = [d for d in new if d not in old]
assert len(changed) == 1, changed
site = "usr/local/lib/python3.11/dist-packages/"
with tarfile.open(sys.argv[1] + "/blobs/sha256/" + changed[0].split(":")[1]) as t:
    names = {m.name.lstrip("./").rstrip("/") for m in t.getmembers()}
    init = t.extractfile(t.getmember(next(m.name for m in t.getmembers() if m.name.lstrip("./") == site + "tinydep/__init__.py"))).read()
print(sorted(names))
assert site + "tinydep-1.3.0.dist-info/RECORD" in names
assert not any("tinydep-1.2.0" in n for n in names)
assert b'__version__ = "1.3.0"' in init, init
assert site + "tinyapp/__init__.py" in names and site + "_speedup.cpython-311-x86_64-linux-gnu.so" in names
PY
finish
