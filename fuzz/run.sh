#!/bin/sh
# run.sh - run every libFuzzer target (or the ones named) for SECONDS
# each, starting from its committed seed corpus (copied to a temp dir, so
# fuzz/corpus/ stays as committed), after replaying every saved reproducer
# in fuzz/regressions/NAME/.  Builds the targets first (fuzz/build.sh).
#
# usage: fuzz/run.sh [-j N] [-k] [SECONDS] [NAME...]
#   SECONDS   per target (default 30); 0 only replays the regressions and
#             the seed corpora
#   -j N      run N targets at once (default 1)
#   -k        keep the temp corpora (to grow fuzz/corpus/ with -merge=1)
# env: FUZZ_NO_BUILD=1 skips the build; FUZZ_ARGS adds libFuzzer flags.
#
# Prints one line per target ("ok   NAME: EXECS execs in Ts, corpus N" or
# "FAIL NAME: ..."), then "N passed, N failed" (targets).  Exit status 0
# when nothing crashed; 1 when a target crashed, leaked, timed out or ran
# out of memory, or a saved input fails again; the reproducer's path is
# printed (copied under fuzz/bin/artifacts/NAME/).
set -u

here=$(cd "$(dirname "$0")" && pwd)
jobs=1
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	-k) keep=1; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) break ;;
	esac
done
secs=30
case ${1:-} in
'' | *[!0-9]*) ;;
*) secs=$1; shift ;;
esac
if [ $# -gt 0 ]; then
	names="$*"
else
	names=$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
	# shellcheck disable=SC2086
	"$here/build.sh" $names || { echo "run.sh: build failed" >&2; exit 1; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/envbuild-fuzz-run.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The longest input worth trying, by what each parser reads.
max_len() {
	case $1 in
	requirement | version | imageref | marker) echo 1024 ;;
	auth | wheel_meta) echo 4096 ;;
	index_json | index_html | metadata | lock) echo 65536 ;;
	*) echo 16384 ;;
	esac
}

# run_one NAME: replay, fuzz; writes $work/NAME.result
run_one() {
	n=$1
	b=$here/bin/$n
	res=$work/$n.result
	log=$work/$n.log
	art=$work/art-$n
	mkdir -p "$art" "$work/corpus-$n"
	if [ ! -x "$b" ]; then
		echo "FAIL $n: no binary $b" >"$res"
		return
	fi
	# saved reproducers and the seeds must all pass (a file argument is
	# run once, not fuzzed)
	set --
	[ -d "$here/regressions/$n" ] && for f in "$here/regressions/$n"/*; do [ -f "$f" ] && set -- "$@" "$f"; done
	[ -d "$here/corpus/$n" ] && for f in "$here/corpus/$n"/*; do [ -f "$f" ] && set -- "$@" "$f"; done
	if [ $# -gt 0 ]; then
		if ! "$b" -runs=1 -rss_limit_mb=2560 -timeout=25 "$@" >"$log.replay" 2>&1 </dev/null; then
			bad=$(grep -o 'Running: .*' "$log.replay" | tail -n 1 | sed 's/^Running: //')
			echo "FAIL $n: a saved input fails: ${bad:-see log}" >"$res"
			grep -E 'invariant failed|ERROR:|SUMMARY|runtime error| in (eb_|LLVMFuzzerTestOneInput)' \
				"$log.replay" | head -n 12 | sed 's/^/#   /' >>"$res"
			return
		fi
	fi
	[ -d "$here/corpus/$n" ] && cp -R "$here/corpus/$n/." "$work/corpus-$n/" 2>/dev/null
	if [ "$secs" -eq 0 ]; then
		echo "ok   $n: $# saved inputs replayed" >"$res"
		return
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086
	"$b" -max_total_time="$secs" -max_len="$(max_len "$n")" -timeout=25 -rss_limit_mb=2560 \
		-print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_ARGS:-} "$work/corpus-$n" \
		>"$log" 2>&1 </dev/null
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	size=$(ls "$work/corpus-$n" | wc -l)
	crash=$(ls "$art" 2>/dev/null | head -n 1)
	if [ "$rc" -ne 0 ] || [ -n "$crash" ]; then
		keepdir=$here/bin/artifacts/$n
		mkdir -p "$keepdir"
		cp "$art"/* "$keepdir/" 2>/dev/null
		cp "$log" "$keepdir/fuzz.log"
		echo "FAIL $n: exit $rc after ${took}s, ${execs:-?} execs; reproducer: $keepdir/${crash:-?}" >"$res"
		echo "#   replay: $b $keepdir/${crash:-CRASH-FILE}" >>"$res"
		grep -E 'invariant failed|ERROR:|SUMMARY|runtime error| in (eb_|LLVMFuzzerTestOneInput)' \
			"$log" | head -n 12 | sed 's/^/#   /' >>"$res"
		return
	fi
	echo "ok   $n: ${execs:-?} execs in ${took}s, corpus $size" >"$res"
}

# shellcheck disable=SC2086
set -- $names
status=0
passed=0
failed=0
while [ $# -gt 0 ]; do
	pids=""
	i=0
	batch=""
	while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
		run_one "$1" &
		pids="$pids $!"
		batch="$batch $1"
		i=$((i + 1))
		shift
	done
	for p in $pids; do wait "$p"; done
	for n in $batch; do
		cat "$work/$n.result"
		if grep -q '^FAIL' "$work/$n.result"; then
			status=1
			failed=$((failed + 1))
		else
			passed=$((passed + 1))
		fi
	done
done
[ "$keep" = 1 ] && echo "run.sh: corpora kept in $work (corpus-NAME)"
# one line per target above; this one for tools (run-tests counts it)
echo "$passed passed, $failed failed"
exit $status
