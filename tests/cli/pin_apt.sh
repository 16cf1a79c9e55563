#!/bin/sh
# pin_apt.sh - `envbuild pin` turns loose apt: names into name=version pins
# with their Depends closure, from the spec's signed apt_sources (a signed
# loopback repository, tests/helpers/apt-env.sh) and the base image's dpkg
# status (the real Debian test base).
#
# Checks: a loose gcc-12 becomes gcc-12=VERSION (the newest the repository
# has) and the closure apt-get would install on the base is added, no more
# and no less; an exact pin already there is kept; the rest of the spec
# (comments, other keys, other targets) is byte for byte what it was;
# --dry-run prints the change and writes nothing; `envbuild check` accepts
# the result and `envbuild lock` succeeds; a second pin is up to date; a
# name the sources lack is an error at the spec's apt: line.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
BASE=/var/tmp/envbuild-test-base
skip() { echo "1..0 # SKIP $*"; exit 0; }
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || skip "no apt lists (apt-get update)"
"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/base.log" 2>&1 || skip "no test base: $(tail -n 1 "$TMP/base.log")"
LAYERS=$(apt_base_layers "$BASE")
# shellcheck disable=SC2086
"$TOOL" status $LAYERS >"$TMP/base-status" || skip "cannot read the base's dpkg status"
apt_closure "$TMP/base-status" gcc-12 >"$TMP/want"
apt_closure "$TMP/base-status" hello >"$TMP/hello"
[ -s "$TMP/want" ] && [ -s "$TMP/hello" ] || skip "apt-get cannot compute the closures"
R=$TMP/repo
st=0
# shellcheck disable=SC2046
apt_repo_make "$R" bookworm $(sort -u "$TMP/want" "$TMP/hello") >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st): $(tail -n 1 "$TMP/make.log")"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
plan 20

EB() { XDG_CACHE_HOME=$TMP/xdg "$ENVBUILD" "$@"; }
HELLO=$(cat "$TMP/hello")
P=$TMP/p
mkdir -p "$P"
cp "$R/keyring.gpg" "$P/"
cat >"$P/envbuild.yaml" <<EOF
version: 1
name: pinapt   # a comment that stays
apt_sources:
  - url: $APT_URL
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  training:
    base: oci:$BASE:bookworm-python3
    apt:
      # the compiler, loose: envbuild pin pins it
      - gcc-12
      - $HELLO   # exact: kept
    env:
      CC: gcc-12
  inference:
    base: oci:$BASE:bookworm-python3
    apt: [hello]
EOF
cp "$P/envbuild.yaml" "$TMP/before.yaml"
cd "$P" || exit 1

run EB check
expect_status 1 "envbuild check refuses the loose names (EB231)"
expect_out_contains "hint: run \`envbuild pin\` to pin gcc-12 (and the Depends the base lacks) to the version apt_sources: has, or write gcc-12=VERSION as \`apt-cache policy gcc-12\` shows it" \
	"EB231's hint names envbuild pin and the finding's own package"

run EB pin --dry-run
expect_status 0 "pin --dry-run"
GCC=$(grep '^gcc-12=' "$TMP/want")
expect_out_contains "  training: gcc-12 → $GCC" "it prints the pin it would make, labelled with the target"
expect_out_contains "  inference: hello → $HELLO" "each target's apt: changes say their target"
cmp -s envbuild.yaml "$TMP/before.yaml" && ok "--dry-run writes nothing" || not_ok "--dry-run changed the spec"

run EB pin
expect_status 0 "pin the apt: names"
diag <envbuild.yaml
python3 - envbuild.yaml "$TMP/want" "$TMP/hello" <<'PY' >"$TMP/cmp" 2>&1 && ok "training: gcc-12 pinned with exactly apt-get's closure on the base; hello kept; inference: hello pinned" || { not_ok "apt pins differ from apt-get's closure"; diag <"$TMP/cmp"; diag <envbuild.yaml; }
import sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
want = sorted(l.strip() for l in open(sys.argv[2]) if l.strip())
hello = [l.strip() for l in open(sys.argv[3]) if l.strip()]
got = s["targets"]["training"]["apt"]
assert got[0] == [w for w in want if w.startswith("gcc-12=")][0], got[0]
assert got[1] == hello[0], got[1]
extra = sorted(set(got) - set(want) - set(hello))
missing = sorted(set(want) - set(got))
assert not extra and not missing, ("extra", extra, "missing", missing)
assert s["targets"]["inference"]["apt"] == hello, s["targets"]["inference"]["apt"]
PY
python3 - "$TMP/before.yaml" envbuild.yaml <<'PY' >"$TMP/cmp" 2>&1 && ok "only the apt: items changed: comments and the rest byte for byte" || { not_ok "the rest of the spec changed"; diag <"$TMP/cmp"; }
import sys
a = open(sys.argv[1]).read().splitlines(True)
b = open(sys.argv[2]).read().splitlines(True)
# drop the apt item lines (block items of training, the flow list of
# inference); what is left must be identical
def rest(lines):
    out = []
    for l in lines:
        s = l.strip()
        if s.startswith("- ") and ("=" in s or s == "- gcc-12") and "url" not in s:
            continue
        if s.startswith("apt: ["):
            out.append("apt: [...]\n")
            continue
        out.append(l)
    return out
ra, rb = rest(a), rest(b)
assert ra == rb, "".join(x for x in rb if x not in ra)
assert "# the compiler, loose: envbuild pin pins it" in "".join(b)
assert "# exact: kept" in "".join(b) and "# a comment that stays" in "".join(b)
PY

run EB check
expect_status 0 "envbuild check accepts the pinned spec"
run EB lock
expect_status 0 "envbuild lock succeeds with the pins"
cp envbuild.yaml "$TMP/after.yaml"
run EB pin
expect_out_contains "is up to date" "a second pin changes nothing"
cmp -s envbuild.yaml "$TMP/after.yaml" && ok "and writes the same bytes" || not_ok "the second pin changed the spec"

# an exact pin the sources no longer have is kept (an error), until upgraded
sed -i 's/^    apt: \[hello=.*\]$/    apt: [hello=2.10-1]/' envbuild.yaml
run EB pin
case "$STATUS:$ERR" in
0:*) not_ok "a stale exact pin passed" ;;
*"apt package hello=2.10-1 is not in the sources; they have $(echo "$HELLO" | cut -d= -f2)"*) ok "an exact pin the sources lack is kept, and fails with the version they have" ;;
*) not_ok "stale pin: exit $STATUS"; echo "$ERR" | diag ;;
esac
run EB pin --upgrade-package hello
expect_status 0 "pin --upgrade-package hello"
expect_out_contains "hello=2.10-1 → $HELLO" "the stale pin becomes the sources' version"
grep -q "^    apt: \[$HELLO\]\$" envbuild.yaml && ok "written in place" || { not_ok "hello not upgraded"; diag <envbuild.yaml; }
run EB pin --dry-run --upgrade-package 'libstdc++6'
expect_status 0 "--upgrade-package takes a Debian name as written (libstdc++6: '+' is no Python name)"
run EB pin --dry-run --upgrade-package 'no such!'
expect_status 2 "--upgrade-package with neither a Python nor a Debian name is a usage error"

sed -i 's/^    apt: \[hello=.*\]$/    apt: [no-such-package]/' envbuild.yaml
run EB pin
case "$STATUS:$ERR" in
1:*"envbuild.yaml:$(grep -n no-such-package envbuild.yaml | cut -d: -f1):"*"'no-such-package' is in none of the target's apt_sources"*) ok "a name the sources lack is an error at its apt: line" ;;
*) not_ok "unknown package: exit $STATUS"; echo "$ERR" | diag ;;
esac
finish
