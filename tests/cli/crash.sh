#!/bin/sh
# crash.sh - SIGKILL at random moments during `envbuild build`, `envbuild
# lock` and `envbuild push` (the churn example on the Debian test base made
# by scripts/make-base, Debian's wheel directory as the index, a plain
# local registry), then check what a crash may leave:
#
#   - envbuild.lock is absent or a whole lockfile (valid JSON, lockVersion
#     1), never a truncated one;
#   - every out/<target> is absent or a complete OCI layout (skopeo reads
#     it);
#   - every blob in the cache hashes to its name;
#   - and after the last kill, the same command runs to completion;
#   - the blob temp files killed writers left in the cache's tmp/ are
#     removed by the next run once they are a minute old, but never one a
#     live writer holds locked.
#
# Bounded: CRASH_ITERATIONS kills per command (default 7, so 21 in all),
# each after a random delay between 0 and the time a cold run of that
# command takes (at least 2 s, at most 10 s); before about half of the
# iterations the cache (and out/) is wiped, so the slow paths (importing
# the base, compressing, uploading) are hit again.  CRASH_SEED fixes the
# random sequence (printed, for reproducing a failure).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"

ITER=${CRASH_ITERATIONS:-7}
# per command: ITER kills x 3 checks, a final run, its 3 checks; + setup
plan $((3 * (ITER * 3 + 4) + 5))
for t in docker-registry skopeo git sha256sum python3 od flock; do
	command -v "$t" >/dev/null 2>&1 || { not_ok "$t is not installed (scripts/install-deps)"; finish; }
done
need_base

unset REGISTRY_AUTH_FILE ENVBUILD_MIRRORS ENVBUILD_CERTS_D
DOCKER_CONFIG=$TMP/no-docker-config
mkdir -p "$DOCKER_CONFIG"
ENVBUILD_HTTP_BACKOFF_MS=100
GIT_AUTHOR_NAME=envbuild-test GIT_AUTHOR_EMAIL=test@envbuild.invalid
GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
GIT_CONFIG_NOSYSTEM=1
export DOCKER_CONFIG ENVBUILD_HTTP_BACKOFF_MS GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_CONFIG_NOSYSTEM

registry_start plain || { not_ok "registry/start plain"; finish; }
REPO=$REGISTRY/crash/churn

# The churn example on the test base, with a 20 MB files entry (so that
# compressing and uploading take a while), committed: push refuses a dirty
# tree.
P=$TMP/p
mkdir -p "$P/shared"
cp -r "$top_srcdir/tests/fixtures/churn-python/." "$P/"
head -c 20000000 /dev/urandom >"$P/shared/weights.bin"
sed -i -e "s|base: python:3.11-slim-bookworm|base: oci:$BASE:bookworm-python3|" \
	-e "s|^index: .*|index: /usr/share/python-wheels|" \
	-e "s|^repository: .*|repository: $REPO|" \
	-e 's|^\(      - { src: src/, dest: /app/ }\)$|\1\n      - { src: shared/, dest: /shared/ }|' \
	"$P/envbuild.yaml"
rm -f "$P/envbuild.lock"
if git init -q "$P" && git -C "$P" add -A && git -C "$P" commit -q -m churn >/dev/null; then
	ok "project: the churn example in a git repository"
else
	not_ok "project: git init/commit failed"
	finish
fi
CACHE=$TMP/cache

SEED=${CRASH_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
echo "# CRASH_SEED=$SEED"
RNG=$SEED
# rand N: R = a number in [0, N) (an LCG: reproducible from CRASH_SEED;
# not through $(...), whose subshell would lose the state)
rand() {
	RNG=$(((RNG * 1103515245 + 12345) % 2147483648))
	R=$(((RNG / 65536) % $1))
}

# the command line for a step
cmdline() {
	case $1 in
	build) echo "build --cache-dir $CACHE" ;;
	lock) echo "lock --cache-dir $CACHE" ;;
	push) echo "push --cache-dir $CACHE --allow-dirty" ;;
	esac
}

# -- the invariants -----------------------------------------------------------
check_lock() { # NAME
	if [ ! -e "$P/envbuild.lock" ]; then
		ok "$1: envbuild.lock absent"
	elif python3 - "$P/envbuild.lock" <<'PY' 2>"$TMP/lockerr"; then
import json, sys
d = json.load(open(sys.argv[1]))
assert d["lockVersion"] == 1 and isinstance(d["targets"], dict), "not a lockfile"
PY
		ok "$1: envbuild.lock is a whole lockfile"
	else
		not_ok "$1: envbuild.lock is broken"
		{ cat "$TMP/lockerr"; head -c 2000 "$P/envbuild.lock"; } | diag
	fi
}
check_layouts() { # NAME
	bad=""
	for t in training inference; do
		d=$P/out/$t
		[ -e "$d" ] || continue
		skopeo inspect "oci:$d:$t" >/dev/null 2>"$TMP/skerr" || bad="$bad $t"
	done
	if [ -z "$bad" ]; then
		ok "$1: every out/<target> is absent or a complete layout"
	else
		not_ok "$1: incomplete layout:$bad"
		{ cat "$TMP/skerr"; find "$P/out" -maxdepth 3 | head -n 30; } | diag
	fi
}
check_blobs() { # NAME
	bad=""
	if [ -d "$CACHE/blobs/sha256" ]; then
		for b in "$CACHE"/blobs/sha256/*; do
			[ -f "$b" ] || continue
			[ "$(sha256sum <"$b" | cut -c1-64)" = "$(basename "$b")" ] || bad="$bad $(basename "$b")"
		done
	fi
	[ -z "$bad" ] && ok "$1: every blob in the cache matches its name" ||
		not_ok "$1: blobs that do not match their names:$bad"
}

# cold_seconds STEP: how long the step takes from an empty cache (>= 2,
# <= 10), for the range of the random delays
cold_seconds() {
	rm -rf "$CACHE" "$P/out"
	t0=$(date +%s%N)
	# shellcheck disable=SC2046
	"$ENVBUILD" -C "$P" $(cmdline "$1") >/dev/null 2>&1
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $ms -lt 2000 ] && ms=2000
	[ $ms -gt 10000 ] && ms=10000
	echo $ms
}

for step in build lock push; do
	range=$(cold_seconds $step)
	echo "# $step: a cold run takes about $range ms; kills within [0, $range] ms"
	completed=0
	i=1
	while [ $i -le "$ITER" ]; do
		rand 2
		if [ "$R" -eq 0 ]; then
			rm -rf "$CACHE" "$P/out"
			[ $step = lock ] && rm -f "$P/envbuild.lock"
		fi
		rand "$range"
		delay=$R
		# shellcheck disable=SC2046
		"$ENVBUILD" -C "$P" $(cmdline $step) >"$TMP/kout" 2>"$TMP/kerr" &
		pid=$!
		sleep "$((delay / 1000)).$(printf '%03d' $((delay % 1000)))"
		kill -KILL "$pid" 2>/dev/null || completed=$((completed + 1))
		wait "$pid" 2>/dev/null
		name="$step kill $i after ${delay} ms"
		check_lock "$name"
		check_layouts "$name"
		check_blobs "$name"
		i=$((i + 1))
	done
	echo "# $step: $completed of $ITER runs had finished before their kill"
	# shellcheck disable=SC2046
	run "$ENVBUILD" -C "$P" $(cmdline $step)
	expect_status 0 "$step: a run after the kills succeeds"
	check_lock "$step: final"
	check_layouts "$step: final"
	check_blobs "$step: final"
done

# the pushed images are whole: skopeo reads them from the registry
ok=1
for t in training inference; do
	skopeo inspect --tls-verify=false "docker://$REPO:$t" >/dev/null 2>"$TMP/skerr" || ok=0
done
[ $ok -eq 1 ] && ok "push: skopeo reads both pushed images" ||
	{ not_ok "push: skopeo cannot read a pushed image"; diag <"$TMP/skerr"; }

# -- temp files of killed writers ------------------------------------------
T=$CACHE/tmp
mkdir -p "$T"
echo "# $(find "$T" -name 'blob.*' | wc -l) blob temp files left by the kills"
for f in stale locked fresh; do head -c 4096 /dev/urandom >"$T/blob.test-$f"; done
touch -d '2 hours ago' "$T/blob.test-stale" "$T/blob.test-locked"
# a live writer: holds an flock on its temp file, as envbuild's writers do
flock "$T/blob.test-locked" sleep 60 &
FLOCK_PID=$!
sleep 0.3
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "temps: a build over the leftovers"
[ ! -e "$T/blob.test-stale" ] && ok "temps: an old, unlocked blob temp file is removed" ||
	not_ok "temps: the stale temp file is still there"
[ -e "$T/blob.test-locked" ] && [ -e "$T/blob.test-fresh" ] &&
	ok "temps: a locked one and a recent one are kept" ||
	not_ok "temps: removed a temp file that may belong to a live writer"
kill "$FLOCK_PID" 2>/dev/null
wait "$FLOCK_PID" 2>/dev/null
finish
