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
#     levels (exponential: ran for ever, deaf to SIGTERM).
. "$(dirname "$0")/lib.sh"
plan 7

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
finish
