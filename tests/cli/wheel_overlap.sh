#!/bin/sh
# wheel_overlap.sh - two pinned wheels that install the same path (issue
# 25): nvidia-* wheels sharing nvidia/__init__.py with the same bytes are
# one entry in the image and no message; opencv-python and
# opencv-python-headless shipping different cv2/ files give warning EB260
# naming both pins and the path, and the winner is pip's last writer
# (same depth: the first name, opencv-python) whether the wheels share a
# layer or have one each; the loser's RECORD still lists the path, and
# the image digest is the same on a second cold build.
. "$(dirname "$0")/lib.sh"
plan 12

need_base
HELPERS=$top_srcdir/tests/helpers
SITE=usr/local/lib/python3.11/dist-packages
W=$TMP/wheels
mkdir -p "$W"
python3 - "$HELPERS" "$W" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mw", sys.argv[1] + "/make-wheels.py")
mw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mw)
out = sys.argv[2]
ns = b"__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n"
rnd = __import__("random").Random(25)
# > 1 MiB of incompressible bytes each: with large_package_mb 1 every
# wheel gets a layer of its own
blob = lambda: bytes(rnd.getrandbits(8) for _ in range(1100 * 1024))
for lib in ("cublas", "cudnn"):
    mw.write_wheel(out, f"nvidia_{lib}_cu12", "12.1.0",
                   [("nvidia/__init__.py", b"", False),
                    (f"nvidia/{lib}/__init__.py", f"LIB = '{lib}'\n".encode(), False),
                    ("nvidia/shared.txt", ns, False),
                    (f"nvidia/{lib}/lib.so", blob(), False)])
for name, flavour in (("opencv_python", "gui"), ("opencv_python_headless", "headless")):
    mw.write_wheel(out, name, "4.8.0.76",
                   [("cv2/__init__.py", f"FLAVOUR = '{flavour}'\n".encode(), False),
                    ("cv2/config.py", f"BUILD = '{flavour}'\n".encode(), False),
                    ("cv2/data/haar.xml", b"<same/>\n", False),
                    (f"cv2/{flavour}.so", blob(), False)])
PY
hashline() { echo "$1 --hash=sha256:$(sha256sum "$2" | cut -d' ' -f1)"; }

# project LARGE_MB: both pairs pinned, wheels >= LARGE_MB MiB get a layer each
project() {
	P=$TMP/p$1
	mkdir -p "$P"
	{
		hashline "nvidia-cublas-cu12==12.1.0" "$W/nvidia_cublas_cu12-12.1.0-py3-none-any.whl"
		hashline "nvidia-cudnn-cu12==12.1.0" "$W/nvidia_cudnn_cu12-12.1.0-py3-none-any.whl"
		hashline "opencv-python-headless==4.8.0.76" "$W/opencv_python_headless-4.8.0.76-py3-none-any.whl"
		hashline "opencv-python==4.8.0.76" "$W/opencv_python-4.8.0.76-py3-none-any.whl"
	} >"$P/requirements.txt"
	cat >"$P/envbuild.yaml" <<YAML
version: 1
name: overlap
python: "3.11"
large_package_mb: $1
index: $W
targets:
  app:
    base: oci:$BASE:bookworm-python3
    requirements: [requirements.txt]
YAML
}

# entries LAYOUT: "layer-index path sha256" for every file of every layer
entries() {
	python3 - "$1" <<'PY'
import hashlib, json, os, sys, tarfile
d = sys.argv[1]
b = lambda dg: os.path.join(d, "blobs", *dg.split(":"))
m = json.load(open(b(json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"])))
for i, l in enumerate(m["layers"]):
    with tarfile.open(b(l["digest"])) as t:
        for e in t:
            if e.isfile():
                print(i, e.name, hashlib.sha256(t.extractfile(e).read()).hexdigest())
PY
}
# content LAYOUT PATH: the bytes the image shows at PATH (the last layer wins)
content() {
	python3 - "$1" "$2" <<'PY'
import json, os, sys, tarfile
d, want = sys.argv[1], sys.argv[2]
b = lambda dg: os.path.join(d, "blobs", *dg.split(":"))
m = json.load(open(b(json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"])))
got = None
for l in m["layers"]:
    with tarfile.open(b(l["digest"])) as t:
        for e in t:
            if e.name == want and e.isfile():
                got = t.extractfile(e).read().decode()
print(got)
PY
}

for large in 1000 1; do
	case $large in 1000) how="one layer for all" ;; *) how="a layer per wheel" ;; esac
	project $large
	run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/c$large"
	expect_status 0 "build ($how)"
	if grep -q "EB260" "$TMP/err" && grep -q "opencv-python==4.8.0.76" "$TMP/err" &&
		grep -q "opencv-python-headless==4.8.0.76" "$TMP/err" &&
		grep -q "$SITE/cv2/__init__.py" "$TMP/err"; then
		ok "$how: EB260 names both opencv pins and the path"
	else
		not_ok "$how: no EB260 naming both pins and the path"; diag <"$TMP/err"
	fi
	if grep "EB260" "$TMP/err" | grep -q "nvidia\|haar.xml"; then
		not_ok "$how: a warning for paths with the same bytes"; diag <"$TMP/err"
	else
		ok "$how: no message for nvidia/__init__.py and cv2/data/haar.xml (same bytes)"
	fi
	entries "$P/out/app" >"$TMP/e$large"
	n=$(grep -c " $SITE/nvidia/__init__.py " "$TMP/e$large")
	n2=$(grep -c " $SITE/cv2/__init__.py " "$TMP/e$large")
	[ "$n" = 1 ] && [ "$n2" = 1 ] && ok "$how: nvidia/__init__.py and cv2/__init__.py are one entry each" ||
		{ not_ok "$how: $n entries of nvidia/__init__.py, $n2 of cv2/__init__.py"; diag <"$TMP/e$large"; }
	c=$(content "$P/out/app" "$SITE/cv2/__init__.py")
	c2=$(content "$P/out/app" "$SITE/cv2/config.py")
	[ "$c" = "FLAVOUR = 'gui'" ] && [ "$c2" = "BUILD = 'gui'" ] &&
		ok "$how: opencv-python's files win (pip installs it last)" ||
		not_ok "$how: cv2/__init__.py is '$c', config.py '$c2'"
done
rec=$(content "$P/out/app" "$SITE/opencv_python_headless-4.8.0.76.dist-info/RECORD")
echo "$rec" | grep -q "^cv2/__init__.py,sha256=" && ok "the loser's RECORD still lists cv2/__init__.py (as pip's would)" ||
	{ not_ok "headless RECORD lacks cv2/__init__.py"; echo "$rec" | diag; }
d1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$P/out/app/index.json")
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/again"
d2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$P/out/app/index.json")
[ "$STATUS" -eq 0 ] && [ "$d1" = "$d2" ] && ok "a second cold build gives the same image ($d1)" ||
	not_ok "second cold build: exit $STATUS, $d2 vs $d1"
finish
