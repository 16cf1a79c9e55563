#!/bin/sh
# sandbox.sh - src/sandbox/ (through tests/helpers/sandbox-tool): a program
# of a real image tree (the test base, unpacked by umoci) runs confined, as
# root and as an unprivileged user (uid 65534 via setpriv): not as uid 0,
# no network (a loopback canary on the host is unreachable), none of the
# host's files, writes only in the output bind, a cleared environment, the
# time limit and SIGTERM kill it; without bwrap the error names the cause.
. "$(dirname "$0")/lib.sh"
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (umoci unpack of the base, setpriv)"
command -v umoci >/dev/null || skip "umoci not installed"
command -v bwrap >/dev/null || skip "bubblewrap not installed"
need_base
plan 30

TOOL="$top_builddir/tests/helpers/sandbox-tool"
# a root-only directory holds the tree: the sandbox opens it as root and
# hands it over, 65534 could not open it itself
unpack_rootfs "$BASE:bookworm-python3" "$TMP/bundle" >/dev/null 2>&1
R="$TMP/bundle/rootfs"
[ -x "$R/usr/bin/python3" ] && ok "umoci unpacks the base" || not_ok "umoci unpack"
chmod 700 "$TMP"

run "$TOOL" "$R" /usr/bin/id -u
[ "$OUT" = 65534 ] && ok "as root: the program runs as uid 65534" || not_ok "as root: uid '$OUT' ($ERR)"
run "$TOOL" "$R" /bin/sh -c 'grep -E "^Uid:" /proc/self/status; cat /proc/self/uid_map'
expect_out_contains "65534" "the uid map maps the sandbox's user"
# the outer id: the host sees the process as 65534 too
"$TOOL" "$R" /bin/sleep 4343 2>/dev/null & sp=$!
sleep 1
hostuid=$(ps -eo uid=,args= | awk '($2 == "/bin/sleep" || $2 == "bwrap" || $2 ~ /\/bwrap$/) && $NF == 4343 { print $1 }' | sort -u | tr '\n' ' ')
kill $sp
wait $sp 2>/dev/null
[ "$hostuid" = "65534 " ] && ok "as root: unprivileged on the host too" || not_ok "host uid of the sandboxed sleep: '$hostuid'"

run "$TOOL" "$R" /usr/bin/python3 -c 'import sys; print(sys.version_info[:2])'
expect_status 0 "the image's python3 runs"

run "$TOOL" --stdin "fed through stdin" "$R" /bin/cat
[ "$OUT" = "fed through stdin" ] && ok "stdin is fed, stdout captured" || not_ok "stdin: '$OUT'"

# the streams: 8 MiB each way, far past a pipe's buffer and the capture
# bound, go through as they are; a feed that fails ends the run with its
# error
head -c 8388608 /dev/urandom >"$TMP/stream.in"
"$TOOL" --stream "$TMP/stream.in" "$R" /bin/cat >"$TMP/stream.out" 2>"$TMP/stream.err"
st=$?
[ "$st" = 0 ] && cmp -s "$TMP/stream.in" "$TMP/stream.out" &&
	ok "8 MiB streamed through the program's stdin and stdout unchanged" ||
	not_ok "stream: exit $st, $(wc -c <"$TMP/stream.out") bytes back; $(cat "$TMP/stream.err")"
"$TOOL" --stream "$TMP/stream.in" "$R" /bin/sh -c 'head -c 100 >/dev/null; sleep 0.2; printf done' \
	>"$TMP/stream.out" 2>"$TMP/stream.err"
st=$?
[ "$st" = 0 ] && [ "$(cat "$TMP/stream.out")" = done ] &&
	ok "a program that stops reading its streamed input ends normally" ||
	not_ok "stop reading: exit $st, '$(cat "$TMP/stream.out")' $(cat "$TMP/stream.err")"
"$TOOL" --stream "$TMP/stream.in" --fail-after 200000 "$R" /bin/cat >/dev/null 2>"$TMP/stream.err"
st=$?
[ "$st" = 2 ] && grep -q "the feed failed after" "$TMP/stream.err" &&
	ok "a failing feed ends the run with its error (exit $st)" ||
	not_ok "failing feed: exit $st: $(cat "$TMP/stream.err")"

# network: a canary server on the host's loopback
python3 -m http.server --bind 127.0.0.1 0 >"$TMP/canary.log" 2>&1 &
cp=$!
port=
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	port=$(ss -ltnp 2>/dev/null | awk -v p="pid=$cp," '$0 ~ p { sub(/.*:/, "", $4); print $4; exit }')
	[ -n "$port" ] && break
	sleep 0.2
done
python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/', timeout=5)" &&
	ok "the canary answers on the host (port $port)" || not_ok "no canary on the host"
run "$TOOL" "$R" /usr/bin/python3 -c "
import socket, urllib.request
try:
    urllib.request.urlopen('http://127.0.0.1:$port/', timeout=5)
    print('reached')
except Exception as e:
    print('unreachable', type(e).__name__)
print(sorted(i[1] for i in socket.if_nameindex()))"
expect_out_contains "unreachable" "the host's loopback canary is not reachable inside"
expect_out_contains "['lo']" "the only interface is the sandbox's own loopback"
kill $cp 2>/dev/null

# host files
echo secret >"$TMP/host-secret"
run "$TOOL" "$R" /bin/sh -c "cat '$TMP/host-secret' 2>&1; ls /work /var/tmp/envbuild-test-base 2>&1; ls /proc | grep -c '^[0-9]'"
if ! grep -qx secret "$TMP/out" && grep -q "No such file" "$TMP/out"; then ok "host files are not visible"; else
	not_ok "host files visible"; diag <"$TMP/out"; fi
[ "$(tail -n 1 "$TMP/out")" -le 6 ] && ok "a pid namespace of its own" || not_ok "pids: $(tail -n 1 "$TMP/out")"

# writes: only the output bind
mkdir "$TMP/src" && echo data >"$TMP/src/in.txt"
run "$TOOL" --prepare "$TMP/outdir" --ro "$TMP/src:/tmp/src" --rw "$TMP/outdir:/tmp/out" "$R" /bin/sh -c '
	cp /tmp/src/in.txt /tmp/out/copied && echo out-ok
	touch /usr/x 2>/dev/null && echo usr-written
	touch /tmp/src/y 2>/dev/null && echo src-written
	touch /etc/z 2>/dev/null && echo etc-written
	touch /tmp/scratch && echo tmp-ok'
expect_out_contains "out-ok" "the output bind is writable"
[ "$(cat "$TMP/outdir/copied" 2>/dev/null)" = data ] && ok "what it wrote is in the output directory" || not_ok "no copied file"
if grep -q written "$TMP/out"; then not_ok "wrote outside the output: $OUT"; else ok "writes to /usr, /etc and the read-only bind fail"; fi
expect_out_contains "tmp-ok" "a private /tmp"
[ ! -e "$R/usr/x" ] && [ ! -e "$R/tmp/scratch" ] && [ ! -e "$TMP/src/y" ] && ok "nothing written into the tree" || not_ok "the tree changed"

# environment
run env SECRET_TOKEN=hunter2 "$TOOL" --env EXTRA=1 "$R" /usr/bin/env
if ! grep -q SECRET_TOKEN "$TMP/out" && grep -q "^EXTRA=1$" "$TMP/out" && grep -q "^SOURCE_DATE_EPOCH=1700000000$" "$TMP/out" &&
	grep -q "^HOME=/tmp$" "$TMP/out"; then ok "a cleared environment with only the given variables"; else
	not_ok "environment"; diag <"$TMP/out"; fi

# time limit and SIGTERM
start=$(date +%s)
run "$TOOL" --timeout 2 "$R" /bin/sleep 60
end=$(date +%s)
expect_status 2 "the time limit fails the run"
expect_err_contains "did not finish within 2 s" "and says so"
[ $((end - start)) -lt 15 ] && ok "the program is killed at the limit ($((end - start)) s)" || not_ok "took $((end - start)) s"
"$TOOL" "$R" /bin/sleep 4242 >/dev/null 2>"$TMP/term.err" & tp=$!
sleep 1
kill -TERM $tp
st=0
wait $tp || st=$?
sleep 0.5
[ "$st" = 3 ] && grep -q interrupted "$TMP/term.err" && ok "SIGTERM ends the run (interrupted)" || not_ok "SIGTERM: status $st"
pgrep -f "sleep 4242" >/dev/null && not_ok "the sandboxed program survived" || ok "and kills the sandboxed program"

# as an unprivileged invoker (its own tree, readable by it)
mkdir -p "$TMP/u/bin"
cp "$TOOL" "$TMP/u/bin/"
chmod a+rx "$TMP" "$TMP/u" "$TMP/u/bin" "$TMP/u/bin/sandbox-tool" "$TMP/bundle"
chmod 777 "$TMP/u"
run setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/u/bin/sandbox-tool" \
	--prepare "$TMP/u/out" --rw "$TMP/u/out:/tmp/out" "$R" /bin/sh -c 'id -u; touch /usr/x 2>/dev/null && echo usr-written; echo hi >/tmp/out/f'
[ "$(head -n 1 "$TMP/out")" = 65534 ] && [ "$(cat "$TMP/u/out/f" 2>/dev/null)" = hi ] &&
	ok "as uid 65534: runs and writes its output" || { not_ok "as uid 65534: $OUT"; diag <"$TMP/err"; }
expect_status 0 "as uid 65534: exit status 0"
grep -q usr-written "$TMP/out" && not_ok "as uid 65534: wrote /usr" || ok "as uid 65534: /usr is read-only"
chmod 700 "$TMP"

# no bwrap: a clear error naming it
mkdir -p "$TMP/nobw"
run env PATH="$TMP/nobw" "$TOOL" "$R" /usr/bin/true
expect_status 2 "without bwrap the run fails"
expect_err_contains "bubblewrap (bwrap) is not installed" "and names the missing tool"
finish
