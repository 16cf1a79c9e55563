#!/bin/sh
# leftovers.sh - nothing the quickstart or the test suite starts outlives
# it.  scripts/leftovers (which .ci/run wraps around ./quickstart and
# run-tests around every step) finds what a command left running, however
# detached, and fails; a command that cleans up passes.  The registry kit
# stops all it starts.  And ./quickstart, failing after it has cd'd into
# its project copy, still stops its registry and index (the bug: its
# cleanup called registry/stop by a relative path there, and `|| true` hid
# the failure, so the registry ran on for its hour).
. "$(dirname "$0")/lib.sh"
plan 12
L=$top_srcdir/scripts/leftovers
# a unique command line, so a process of someone else's is never counted
S=300.$$

run "$L" true
expect_status 0 "a command that starts nothing"
run "$L" sh -c 'exit 3'
expect_status 3 "the command's own status is kept"

run "$L" sh -c "sleep $S & exit 0"
expect_status 125 "a background job left running is found"
expect_err_contains "sleep $S" "... and named"
pgrep -fx "sleep $S" >/dev/null && not_ok "... but not stopped" || ok "... and stopped"

run "$L" sh -c "setsid sh -c 'sleep $S' </dev/null >/dev/null 2>&1 & exit 0"
expect_status 125 "a job in a session of its own (setsid) is found too"

run "$L" sh -c "'$top_srcdir/registry/start' plain '$TMP/reg1' >/dev/null && '$top_srcdir/registry/stop' '$TMP/reg1'"
expect_status 0 "registry/start then registry/stop: nothing left"
run "$L" sh -c "'$top_srcdir/registry/start' plain '$TMP/reg2' >/dev/null"
expect_status 125 "registry/start alone: its registry is found"
expect_err_contains "docker-registry" "... by name"

# The quickstart, made to fail at `git init` (a git that fails comes first
# on PATH), which runs after it has started the registry and the index and
# cd'd into the project copy.  The build is already there (scripts/build
# finds nothing to do) and so is the base (scripts/make-base keeps it).
# Root only: as anyone else the quickstart asks sudo.  In-tree builds only
# (as run-tests and CI build): the quickstart builds in its own directory.
if [ "$(id -u)" -ne 0 ]; then
	for _ in 1 2 3; do ok "# SKIP the quickstart's run needs root (it would ask sudo)"; done
elif [ "$(cd "$top_srcdir" && pwd -P)" != "$(cd "$top_builddir" && pwd -P)" ] ||
	[ ! -x "$top_srcdir/envbuild" ]; then
	for _ in 1 2 3; do ok "# SKIP the quickstart's run needs an in-tree build"; done
elif [ -f "${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}/.complete" ]; then
	mkdir -p "$TMP/bin" "$TMP/qs"
	printf '#!/bin/sh\necho "fake git: refusing" >&2\nexit 9\n' >"$TMP/bin/git"
	chmod +x "$TMP/bin/git"
	run env PATH="$TMP/bin:$PATH" TMPDIR="$TMP/qs" "$L" "$top_srcdir/quickstart"
	expect_status 9 "quickstart failing in its project copy: its status, nothing left running"
	grep -q '^== the project' "$TMP/out" && ok "... it got as far as the project copy" ||
		{ not_ok "... it stopped before the project copy"; diag <"$TMP/out"; diag <"$TMP/err"; }
	[ -z "$(ls -A "$TMP/qs")" ] && ok "... and removed its work directory" ||
		{ not_ok "... its work directory is left"; ls -la "$TMP/qs" | diag; }
else
	for _ in 1 2 3; do ok "# SKIP no test base (scripts/make-base; run-tests makes it)"; done
fi
finish
