#!/bin/sh
# interrupt.sh - Ctrl-C and SIGTERM in the middle of a long build: the
# exit status says so (130, 143), no temporary file or directory is left in
# the cache's tmp/ or next to out/, out/<target> is absent or a complete
# layout (the previous one when there was one), and the next build
# succeeds.  The build is long because its files tree is ~300 MB of random
# data (which compresses at disk speed, not faster), in two layers built in
# parallel.
. "$(dirname "$0")/lib.sh"
plan 30

# A background job of a non-interactive shell starts with SIGINT ignored
# (POSIX), and envbuild keeps an inherited "ignore" as shells expect;
# `env --default-signal` gives the job a Ctrl-C again.
if ! env --default-signal=INT true 2>/dev/null; then
	for _ in $(seq 30); do ok "# SKIP env --default-signal not available (coreutils >= 8.31)"; done
	finish
fi
MB=${INTERRUPT_TEST_MB:-300}

P=$TMP/p
mkdir -p "$P/big1" "$P/big2" "$P/small"
half=$((MB / 2))
for d in big1 big2; do
	for i in $(seq 1 $((half / 10))); do
		head -c 10485760 /dev/urandom >"$P/$d/chunk-$i.bin"
	done
done
echo "hello" >"$P/small/motd"
cat >"$P/envbuild.yaml" <<'YAML'
version: 1
name: interrupt
targets:
  app:
    base: scratch
    files:
      - { src: small/, dest: /etc/ }
      - { src: big1/, dest: /data/1/ }
      - { src: big2/, dest: /data/2/ }
    cmd: [/bin/true]
YAML

# leftovers DIR...: temporaries envbuild may have made, one per line
leftovers() {
	for c in "$@"; do
		[ -d "$c/tmp" ] && find "$c/tmp" -mindepth 1
	done
	# layouts are built in hidden siblings (".app.tmp-*", ".app.old-*")
	# and files written through hidden temps (".NAME.tmp.*"); out/.gitignore
	# is the build's, and stays
	find "$P" "$P/out" -maxdepth 1 -name '.*' ! -name . ! -path "$P/out/.gitignore" 2>/dev/null
}

# start_build CACHE: envbuild build in the background; sets BPID
start_build() {
	env --default-signal=INT "$ENVBUILD" -C "$P" build --cache-dir "$1" >"$TMP/bout" 2>"$TMP/berr" &
	BPID=$!
}

# wait_midway CACHE: until a blob temp in CACHE/tmp passed 20 MB (the
# build is compressing), or 60 s; 0 when seen
wait_midway() {
	i=0
	while [ $i -lt 600 ]; do
		if [ -d "$1/tmp" ] && [ -n "$(find "$1/tmp" -type f -size +20M 2>/dev/null | head -n 1)" ]; then
			return 0
		fi
		kill -0 "$BPID" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# stop_build SIGNAL: send it, wait; sets STATUS and SECS (time to exit)
stop_build() {
	t0=$(date +%s%N)
	kill -"$1" "$BPID" 2>/dev/null
	STATUS=0
	wait "$BPID" || STATUS=$?
	SECS=$((($(date +%s%N) - t0) / 1000000000))
}

# layout_ok DIR: a complete OCI layout for skopeo
layout_ok() {
	skopeo inspect "oci:$1:app" >/dev/null 2>&1
}

check_after() { # NAME CACHE
	if [ -z "$(leftovers "$2")" ]; then
		ok "$1: no temporary left in the cache or next to out/"
	else
		not_ok "$1: temporaries left behind"
		leftovers "$2" | diag
	fi
	if [ ! -e "$P/out/app" ] || layout_ok "$P/out/app"; then
		ok "$1: out/app is absent or a complete layout"
	else
		not_ok "$1: out/app is a partial layout"
		find "$P/out" | head -n 20 | diag
	fi
	if [ -z "$(find "$2/blobs" -type f 2>/dev/null | while read -r b; do
		[ "$(sha256sum <"$b" | cut -c1-64)" = "$(basename "$b")" ] || echo "$b"
	done)" ]; then
		ok "$1: every blob in the cache matches its name"
	else
		not_ok "$1: a blob does not match its name"
	fi
}

# -- Ctrl-C while the layers are being compressed ---------------------------
C1=$TMP/cache1
start_build "$C1"
if wait_midway "$C1"; then ok "the build is compressing layers"; else
	not_ok "the build never got to compressing (or ended first)"
	diag <"$TMP/berr"
fi
stop_build INT
[ "$STATUS" -eq 130 ] && ok "SIGINT: exit status 130" ||
	{ not_ok "SIGINT: exit status $STATUS, want 130"; diag <"$TMP/berr"; }
[ "$SECS" -le 10 ] && ok "SIGINT: stopped within 10 s ($SECS s)" ||
	not_ok "SIGINT: took $SECS s to stop"
grep -q "interrupted" "$TMP/berr" && ok "SIGINT: says it was interrupted" ||
	{ not_ok "SIGINT: no 'interrupted' on stderr"; diag <"$TMP/berr"; }
check_after "SIGINT" "$C1"
[ ! -e "$P/out/app" ] && ok "SIGINT before the layout: no out/app" || not_ok "out/app appeared"

run "$ENVBUILD" -C "$P" build --cache-dir "$C1"
expect_status 0 "the next build succeeds"
layout_ok "$P/out/app" && ok "the next build's layout is complete" || not_ok "skopeo cannot read out/app"
[ -z "$(leftovers "$C1")" ] && ok "a finished build leaves no temporaries" ||
	{ not_ok "temporaries after a finished build"; leftovers "$C1" | diag; }
OLD=$(skopeo inspect --format '{{.Digest}}' "oci:$P/out/app:app")

# -- SIGTERM, with a previous layout in out/ --------------------------------
# a new file in big2 changes its layer; a fresh cache makes every layer
# slow again
head -c 10485760 /dev/urandom >"$P/big2/extra.bin"
C2=$TMP/cache2
start_build "$C2"
wait_midway "$C2" && ok "second build compressing" || { not_ok "second build never got midway"; diag <"$TMP/berr"; }
stop_build TERM
[ "$STATUS" -eq 143 ] && ok "SIGTERM: exit status 143" ||
	{ not_ok "SIGTERM: exit status $STATUS, want 143"; diag <"$TMP/berr"; }
[ "$SECS" -le 10 ] && ok "SIGTERM: stopped within 10 s ($SECS s)" || not_ok "SIGTERM: took $SECS s"
check_after "SIGTERM" "$C2"
[ "$(skopeo inspect --format '{{.Digest}}' "oci:$P/out/app:app" 2>/dev/null)" = "$OLD" ] &&
	ok "SIGTERM: the previous out/app is untouched" || not_ok "SIGTERM: out/app changed"

# -- a second signal at once: do not wait for the unwinding ----------------
# (two SIGINTs sent together may merge into one; SIGINT then SIGTERM are
# both delivered, the second while the first is being handled, and the
# handler then removes the temporaries itself and exits)
C3=$TMP/cache3
start_build "$C3"
wait_midway "$C3" && ok "third build compressing" || { not_ok "third build never got midway"; diag <"$TMP/berr"; }
kill -INT "$BPID"
stop_build TERM
[ "$STATUS" -eq 130 ] || [ "$STATUS" -eq 143 ] && ok "SIGINT + SIGTERM: exit status $STATUS" ||
	{ not_ok "SIGINT + SIGTERM: exit status $STATUS, want 130 or 143"; diag <"$TMP/berr"; }
check_after "SIGINT + SIGTERM" "$C3"

# -- an ignored SIGINT stays ignored (nohup, background jobs) ----------------
C4=$TMP/cache4
(
	trap '' INT
	exec "$ENVBUILD" -C "$P" build --cache-dir "$C4" >"$TMP/bout" 2>"$TMP/berr"
) &
BPID=$!
wait_midway "$C4" && ok "fourth build compressing (SIGINT ignored)" || not_ok "fourth build never got midway"
kill -INT "$BPID" 2>/dev/null
sleep 1
if kill -0 "$BPID" 2>/dev/null; then ok "an inherited SIG_IGN for SIGINT is kept"; else
	not_ok "the build stopped on an ignored SIGINT"
fi
stop_build TERM
[ "$STATUS" -eq 143 ] || [ "$STATUS" -eq 0 ] && ok "SIGTERM still ends it (status $STATUS)" ||
	not_ok "SIGTERM: status $STATUS"

# -- the final build over everything ---------------------------------------
run "$ENVBUILD" -C "$P" build --cache-dir "$C2"
expect_status 0 "a build after the interrupted ones succeeds"
layout_ok "$P/out/app" && ok "its layout is complete" || not_ok "skopeo cannot read out/app"
[ "$(skopeo inspect --format '{{.Digest}}' "oci:$P/out/app:app")" != "$OLD" ] &&
	ok "and it is the new image" || not_ok "out/app is still the old image"
[ -z "$(leftovers "$C2")" ] && ok "no temporaries at the end" ||
	{ not_ok "temporaries at the end"; leftovers "$C2" | diag; }
finish
