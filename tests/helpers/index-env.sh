# index-env.sh - a Python package index on loopback for TAP tests (sourced,
# after tests/cli/lib.sh).
#
# index_serve DIR [ARGS]  serves DIR (tests/helpers/make-index.py build's
#                         output) on a free 127.0.0.1 port, each request
#                         logged as a JSON line in $TMP/index.log; sets
#                         INDEX_PORT, INDEX (its /simple/ URL) and INDEX_PID.
#                         ARGS go to the server (--no-json).  Returns 1,
#                         the server's stderr in $TMP/index.err, when it is
#                         not listening within 10 s.  The server stops at
#                         exit (exit-trap.sh) and after 900 s at the most.
. "$top_srcdir/tests/helpers/exit-trap.sh"

index_serve() {
	_ix_dir=$1
	shift
	python3 "$top_srcdir/tests/helpers/make-index.py" serve "$_ix_dir" --max-seconds 900 \
		--log "$TMP/index.log" "$@" >"$TMP/index.port" 2>"$TMP/index.err" &
	INDEX_PID=$!
	at_exit "kill $INDEX_PID 2>/dev/null"
	_ix_i=0
	while [ ! -s "$TMP/index.port" ] && [ $_ix_i -lt 100 ]; do
		sleep 0.1
		_ix_i=$((_ix_i + 1))
	done
	[ -s "$TMP/index.port" ] || return 1
	INDEX_PORT=$(cat "$TMP/index.port")
	INDEX=http://127.0.0.1:$INDEX_PORT/simple/
}
