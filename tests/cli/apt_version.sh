#!/bin/sh
# apt_version.sh - envbuild's Debian version order equals dpkg's on
# thousands of real version pairs, and the Packages parser reads the
# machine's real indexes.  The pairs come from the Packages files apt
# downloaded (/var/lib/apt/lists; run `apt-get update` first): consecutive
# versions of one package across suites, plus neighbours in a shuffled
# list of every version (a fixed seed, so a failure reproduces).
. "$(dirname "$0")/lib.sh"

TOOL=$top_builddir/tests/helpers/apt-tool
lists=$(ls /var/lib/apt/lists/*_Packages* 2>/dev/null || true)
if [ -z "$lists" ] || ! command -v dpkg >/dev/null; then
	echo "1..0 # SKIP no apt lists in /var/lib/apt/lists or no dpkg"
	exit 0
fi
plan 4

: >"$TMP/all"
bad=0
for f in $lists; do
	if "$TOOL" packages "$f" >>"$TMP/all" 2>"$TMP/err"; then :; else
		bad=1
		diag <"$TMP/err"
	fi
done
n=$(wc -l <"$TMP/all")
if [ "$bad" = 0 ] && [ "$n" -gt 1000 ]; then
	ok "the machine's Packages indexes parse ($n entries)"
else
	not_ok "Packages indexes: $n entries, errors above"
fi

# pairs: the same package in different indexes, then shuffled neighbours
sort -u "$TMP/all" | awk '$1 == p && $2 != v { print v, $2 } { p = $1; v = $2 }' >"$TMP/pairs"
awk '{ print $2 }' "$TMP/all" | sort -u | awk 'BEGIN { srand(1) } { print rand(), $1 }' |
	sort -n | awk 'NR > 1 { print prev, $2 } { prev = $2 }' | head -n 2500 >>"$TMP/pairs"
# and each version against itself with an epoch and a tilde variant
awk 'NR % 50 == 0 { print $1, "1:" $1; print $1 "~x", $1; print "0:" $1, $1 }' "$TMP/pairs" >>"$TMP/pairs"
npairs=$(wc -l <"$TMP/pairs")
if [ "$npairs" -ge 2000 ]; then ok "$npairs version pairs from real indexes"; else
	not_ok "only $npairs version pairs"
fi

"$TOOL" vercmp <"$TMP/pairs" >"$TMP/ours"
while read -r a b; do
	if dpkg --compare-versions "$a" lt "$b" 2>/dev/null; then echo -1
	elif dpkg --compare-versions "$a" eq "$b" 2>/dev/null; then echo 0
	else echo 1; fi
done <"$TMP/pairs" >"$TMP/dpkg"
if cmp -s "$TMP/ours" "$TMP/dpkg"; then
	ok "eb_debver_cmp agrees with dpkg --compare-versions on all $npairs pairs"
else
	not_ok "eb_debver_cmp differs from dpkg"
	paste -d ' ' "$TMP/pairs" "$TMP/ours" "$TMP/dpkg" | awk '$3 != $4' | head -20 | diag
fi
# the comparison is not trivially constant: all three outcomes occur
if grep -qx -- -1 "$TMP/ours" && grep -qx 1 "$TMP/ours" && grep -qx 0 "$TMP/ours"; then
	ok "pairs cover <, = and >"
else
	not_ok "pairs do not cover every outcome"
fi
finish
