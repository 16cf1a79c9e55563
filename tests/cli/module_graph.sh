#!/bin/sh
# module_graph.sh - the modules of src/ depend one way (scripts/module-graph:
# edges from #include lines, every edge to a lower floor, no cycle), and so
# do the files inside each module (no file circle); the checker itself
# catches an upward edge, a sideways edge, a cycle and file circles.
. "$(dirname "$0")/lib.sh"
plan 14

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

# a file circle planted in a copy of the real tree: reqfile.c includes
# lockfiles.h again (lockfiles.c includes reqfile.h)
rm -rf "$TMP/src"
(cd "$top_srcdir" && find src -name '*.[ch]') | while read -r f; do
	mkdir -p "$TMP/$(dirname "$f")" && cp "$top_srcdir/$f" "$TMP/$f"
done
run "$graph" "$TMP/src"
expect_status 0 "the copy of src/ is one-way, file by file"
sed 's|^#include "pin/reqfile.h"$|#include "pin/reqfile.h"\
#include "pin/lockfiles.h"|' "$TMP/src/pin/reqfile.c" >"$TMP/reqfile.c"
mv "$TMP/reqfile.c" "$TMP/src/pin/reqfile.c"
run "$graph" "$TMP/src"
expect_status 1 "a file circle planted in a copy of src/ fails"
expect_err_or_out_contains "file circle: pin/lockfiles and pin/reqfile include each other's headers" \
	"the two files are named"

# a longer loop among one module's files, through a header's include
rm -rf "$TMP/src"; mkdir -p "$TMP/src/util"
printf '#include "util/b.h"\n' >"$TMP/src/util/a.c"
printf '#include "util/c.h"\n' >"$TMP/src/util/b.h"
printf '#include "util/a.h"\n' >"$TMP/src/util/c.c"
run "$graph" "$TMP/src"
expect_status 1 "a loop of three files fails"
case "$OUT" in
*"file circle (a loop of includes)"*"util/a"*"util/b"*"util/c"*) ok "the loop's files are named" ;;
*) not_ok "the loop's files are named"; echo "$OUT" | diag ;;
esac

# the halves of a split share x_internal.h: one node, not a circle
rm -rf "$TMP/src"; mkdir -p "$TMP/src/util"
printf '#include "util/x.h"\n' >"$TMP/src/util/x_internal.h"
printf '#include "util/x.h"\n#include "util/x_internal.h"\n' >"$TMP/src/util/x.c"
printf '#include "util/x_internal.h"\n' >"$TMP/src/util/x_part.c"
printf '#include "util/x.h"\n' >"$TMP/src/util/y.c"
run "$graph" "$TMP/src"
expect_status 0 "a split sharing its _internal.h is no circle"
case "$OUT" in
*"no file circle"*) ok "the verdict says the files are one-way" ;;
*) not_ok "the verdict says the files are one-way"; echo "$OUT" | diag ;;
esac
finish
