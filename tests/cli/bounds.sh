#!/bin/sh
# bounds.sh - hostile inputs meet a limit with a clear error, not a crash,
# an out-of-memory abort or a run that does not end (scaled down where the
# full attack is slow: the limit is what is tested):
#   - env values with ${A:-${A:-...}} nested 50,000 deep (was SIGSEGV);
#   - a YAML stream of 200 documents, each an alias bomb of 100,000 nodes:
#     the 1M-node limit holds per file (EB042), not per document;
#   - a target with 100,000 `files` entries (check passed, build ran out of
#     memory);
#   - [dependency-groups] where each group includes the next twice, 60
#     levels (exponential: ran for ever, deaf to SIGTERM);
#   - a hostile index for `envbuild pin`: a project page of 60,000 files
#     (quadratic: 29 s, deaf to SIGINT) pins in seconds, and a real
#     `kill -INT` during the run stops it (exit 130) within seconds; a
#     METADATA with 20,000 Requires-Dist is refused.
. "$(dirname "$0")/lib.sh"
plan 10

P=$TMP/p
mkdir -p "$P"
cd "$P" || exit 1

# -- env nesting ---------------------------------------------------------------
python3 - <<'PY'
deep = 50000
v = "${A:-" * deep + "x" + "}" * deep
open("envbuild.yaml", "w").write(
    "version: 1\nname: demo\ntargets:\n  app:\n    base: scratch\n    env:\n      B: '%s'\n" % v)
PY
run timeout 60 "$ENVBUILD" check
expect_status 1 "check of an env value nested 50,000 deep ends with a finding"
expect_out_contains "nested more than 64 deep" "saying how deep it may nest"

# -- a YAML stream of alias bombs ----------------------------------------------
python3 - <<'PY'
doc = ["apiVersion: v1", "kind: Pod", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
prev = "a"
for i in range(1, 5):
    doc.append("b%d: &b%d [%s]" % (i, i, ", ".join(["*" + prev] * 10)))
    prev = "b%d" % i
doc.append("spec: {containers: [{name: x, image: 'python:3.11@sha256:%s'}]}" % ("0" * 64))
open("k8s.yaml", "w").write("\n---\n".join("\n".join(doc) for _ in range(200)) + "\n")
PY
run timeout 60 "$ENVBUILD" check k8s.yaml
expect_status 1 "check of 200 alias-bomb documents ends"
expect_out_contains "[EB042]" "the file's node limit is reported (EB042)"

# -- 100,000 files entries -----------------------------------------------------
mkdir -p app
echo x >app/a
python3 - <<'PY'
with open("envbuild.yaml", "w") as f:
    f.write("version: 1\nname: demo\ntargets:\n  app:\n    base: scratch\n    files:\n")
    for i in range(100000):
        f.write("      - { src: app/a, dest: /f/%d }\n" % i)
PY
run timeout 120 "$ENVBUILD" check
expect_status 1 "check of 100,000 files entries fails"
expect_out_contains "'files' has 100000 entries, more than 1000" "naming the limit"

# -- [dependency-groups] including the next twice ------------------------------
python3 - <<'PY'
n = 60
with open("pyproject.toml", "w") as f:
    f.write('[project]\nname = "demo"\nversion = "1.0"\n\n[dependency-groups]\n')
    for i in range(n):
        f.write('g%d = [{include-group = "g%d"}, {include-group = "g%d"}]\n' % (i, i + 1, i + 1))
    f.write('g%d = ["requests==2.31.0"]\n' % n)
PY
run timeout 60 "$ENVBUILD" check pyproject.toml
[ "$STATUS" -ne 124 ] && ok "check of 60 levels of doubled group includes ends (exit $STATUS)" ||
	not_ok "check of doubled group includes did not end in 60 s"

# -- a hostile index for pin ---------------------------------------------------
mkdir -p "$TMP/pin"
cd "$TMP/pin" || exit 1
python3 - <<'PY'
import json, os
os.makedirs("simple/big", exist_ok=True)
files = [{"filename": "big-0.%d-py3-none-any.whl" % i, "url": "big-0.%d-py3-none-any.whl" % i,
          "hashes": {"sha256": "%064x" % i}} for i in range(60000)]
json.dump({"meta": {"api-version": "1.0"}, "name": "big", "files": files},
          open("simple/big/index.json", "w"))
open("envbuild.yaml", "w").write("""version: 1
name: p
python: "3.11"
index: file://%s/simple
targets:
  t:
    base: scratch
    libc: "glibc 2.36"
    requirements_in: [r.in]
    requirements: [r.txt]
""" % os.getcwd())
open("r.in", "w").write("big\n")
PY
run timeout 60 "$ENVBUILD" pin --cache-dir "$TMP/pcache"
[ "$STATUS" -ne 124 ] && grep -q "big-0.59999-py3-none-any.whl" "$TMP/err" &&
	ok "pin reads a page of 60,000 files and picks the newest (exit $STATUS)" ||
	{ not_ok "pin on a 60,000-file page: exit $STATUS"; diag <"$TMP/err"; }
# SIGINT while the resolver reads the page: many projects, each a big page
python3 - <<'PY'
import json, os
names = ["big%d" % k for k in range(40)]
for n in names:
    os.makedirs("simple/" + n, exist_ok=True)
    files = [{"filename": "%s-0.%d-py3-none-any.whl" % (n, i), "url": "%s-0.%d-py3-none-any.whl" % (n, i),
              "hashes": {"sha256": "%064x" % i}} for i in range(20000)]
    json.dump({"meta": {"api-version": "1.0"}, "name": n, "files": files},
              open("simple/%s/index.json" % n, "w"))
open("r.in", "w").write("\n".join(names) + "\n")
PY
# a background job of a non-interactive shell starts with SIGINT ignored
env --default-signal=INT "$ENVBUILD" pin --cache-dir "$TMP/pcache" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
sleep 3
kill -INT $pid
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
st=0
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; st=999; fi
wait $pid || st=$?
[ "$st" = 130 ] && grep -q "interrupted" "$TMP/int.err" && ok "kill -INT stops pin within 15 s (exit 130)" ||
	{ not_ok "kill -INT: exit $st"; diag <"$TMP/int.err"; }
# METADATA with 20,000 Requires-Dist: refused, not 20,000 page fetches
mkdir -p "$TMP/wide"
cd "$TMP/wide" || exit 1
python3 - <<'PY'
import base64, hashlib, io, json, os, zipfile
os.makedirs("simple/wide", exist_ok=True)
md = "Metadata-Version: 2.1\nName: wide\nVersion: 1.0\n" + "".join(
    "Requires-Dist: dep%d\n" % i for i in range(20000))
b = io.BytesIO()
with zipfile.ZipFile(b, "w") as z:
    z.writestr("wide-1.0.dist-info/METADATA", md)
    z.writestr("wide-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("wide-1.0.dist-info/RECORD", "")
data = b.getvalue()
open("simple/wide/wide-1.0-py3-none-any.whl", "wb").write(data)
json.dump({"meta": {"api-version": "1.0"}, "name": "wide", "files": [
    {"filename": "wide-1.0-py3-none-any.whl", "url": "wide-1.0-py3-none-any.whl",
     "hashes": {"sha256": hashlib.sha256(data).hexdigest()}}]}, open("simple/wide/index.json", "w"))
open("envbuild.yaml", "w").write(open("../pin/envbuild.yaml").read().replace("/pin/", "/wide/"))
open("r.in", "w").write("wide\n")
PY
run timeout 60 "$ENVBUILD" pin --cache-dir "$TMP/pcache"
[ "$STATUS" -ne 0 ] && [ "$STATUS" -ne 124 ] && grep -q "more than 2000 Requires-Dist" "$TMP/err" &&
	ok "a METADATA with 20,000 Requires-Dist is refused (exit $STATUS)" ||
	{ not_ok "20,000 Requires-Dist: exit $STATUS"; diag <"$TMP/err"; }
finish
