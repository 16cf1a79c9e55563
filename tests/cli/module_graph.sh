#!/bin/sh
# module_graph.sh - the modules of src/ depend one way (scripts/module-graph:
# edges from #include lines, every edge to a lower floor, no cycle), and the
# checker itself catches an upward edge, a sideways edge and a cycle.
. "$(dirname "$0")/lib.sh"
plan 7

graph=$top_srcdir/scripts/module-graph

run "$graph" "$top_srcdir/src"
expect_status 0 "src/ is one-way"
echo "$OUT" | diag

# a made-up tree: oci includes stage (upward)
mk() { mkdir -p "$TMP/src/$1"; printf '#include "%s/x.h"\n' "$2" >>"$TMP/src/$1/x.c"; }
rm -rf "$TMP/src"; mk oci util; mk stage oci; mk oci stage
run "$graph" "$TMP/src"
expect_status 1 "an upward edge fails"
expect_err_or_out_contains() { case "$OUT$ERR" in *"$1"*) ok "$2" ;; *) not_ok "$2"; echo "$OUT" | diag ;; esac; }
expect_err_or_out_contains "oci (floor 3) includes stage (floor 6): upward" "the upward edge is named"

# sideways, and a module without a floor
rm -rf "$TMP/src"; mk python registry; mk registry util; mk newmod util
run "$graph" "$TMP/src"
expect_status 1 "a sideways edge and a module with no floor fail"
case "$OUT" in
*"python (floor 4) includes registry (floor 4): sideways"*"src/newmod has no floor"* | \
*"src/newmod has no floor"*"python (floor 4) includes registry (floor 4): sideways"*)
	ok "both are named" ;;
*) not_ok "both are named"; echo "$OUT" | diag ;;
esac

# a cycle between two modules the floor table does not know is still found
rm -rf "$TMP/src"; mk aa bb; mk bb aa
run "$graph" "$TMP/src"
expect_status 1 "a cycle fails"
expect_err_or_out_contains "input contains a loop" "the cycle is named"
finish
