# registry-env.sh - local registries and fault proxies for TAP tests
# (sourced; POSIX sh).  Source it after tests/cli/lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$top_srcdir/tests/helpers/registry-env.sh"
#   registry_require || { plan 0 ...; }       # docker-registry etc. present?
#   registry_start plain        # or tls, basic, token, token-tls
#   skopeo copy --dest-tls-verify=false oci:L:t "docker://$REGISTRY/x/y:t"
#   fault_proxy_start --rule 'PUT /blobs/uploads/ status=503 times=1'
#   ... "docker://$FAULT_PROXY/x/y:t" ...
#   fault_proxy_count PUT '/blobs/uploads/' 503
#
# registry_start MODE   starts registry/start MODE in a fresh state dir and
#                       exports what registry/start writes to STATEDIR/env:
#                       REGISTRY (127.0.0.1:PORT), REGISTRY_URL, REGISTRY_CA,
#                       REGISTRY_CERT_DIR, REGISTRY_USER, REGISTRY_PASSWORD,
#                       REGISTRY_RO_USER, REGISTRY_RO_PASSWORD, TOKEN_URL,
#                       TOKEN_LOG, ... (see registry/README.md).  Several can
#                       run at once; the variables describe the newest.
# registry_stop [STATEDIR]  stops one (default: the newest) and removes its
#                       state dir (kept when REGISTRY_KEEP=1).
# fault_proxy_start [ARGS]  tests/helpers/fault-proxy.py in front of
#                       $REGISTRY_URL; exports FAULT_PROXY (127.0.0.1:PORT),
#                       FAULT_PROXY_URL, FAULT_PROXY_LOG, FAULT_PROXY_RULES (a
#                       JSON rules file the proxy re-reads when it changes),
#                       FAULT_PROXY_PID.  ARGS go to the proxy (--rule ...).
# fault_proxy_rules JSON    replaces the rules file (counters start again)
# fault_proxy_count METHOD ERE [STATUS]  prints how many logged requests
#                       have that method, a target matching ERE (and STATUS)
# fault_proxy_stop      stops the newest proxy.
#
# Everything started is stopped at exit (exit-trap.sh's at_exit, which runs
# the caller's EXIT trap, lib.sh's, afterwards); every process has a bounded
# life.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
REGISTRY_KIT=${REGISTRY_KIT:-$top_srcdir/registry}
_rk_helpers=$top_srcdir/tests/helpers
_rk_states=""
_rk_proxies=""
_rk_trap_set=false
. "$_rk_helpers/exit-trap.sh"

# registry_require: true when the tools the kit needs are installed;
# otherwise prints what is missing on stderr.
registry_require() {
	_rk_missing=""
	for _rk_t in docker-registry openssl curl "${PYTHON:-python3}"; do
		command -v "$_rk_t" >/dev/null 2>&1 || _rk_missing="$_rk_missing $_rk_t"
	done
	[ -z "$_rk_missing" ] && return 0
	echo "registry-env: missing:$_rk_missing" >&2
	return 1
}

_rk_cleanup() {
	for _rk_p in $_rk_proxies; do
		kill "$_rk_p" 2>/dev/null && wait "$_rk_p" 2>/dev/null
	done
	_rk_proxies=""
	for _rk_s in $_rk_states; do
		sh "$REGISTRY_KIT/stop" "$_rk_s" >/dev/null 2>&1
		[ "${REGISTRY_KEEP:-0}" = 1 ] || rm -rf "$_rk_s"
	done
	_rk_states=""
}

registry_start() {
	$_rk_trap_set || { _rk_trap_set=true; at_exit _rk_cleanup; }
	_rk_state=$(mktemp -d "${TMPDIR:-/tmp}/envbuild-registry.XXXXXX") || return 1
	_rk_states="$_rk_states $_rk_state"
	if ! sh "$REGISTRY_KIT/start" "$1" "$_rk_state" >"$_rk_state.out" 2>&1; then
		sed 's/^/# registry_start: /' "$_rk_state.out" >&2
		rm -f "$_rk_state.out"
		return 1
	fi
	rm -f "$_rk_state.out"
	set -a
	. "$_rk_state/env"
	set +a
}

registry_stop() {
	_rk_s=${1:-${REGISTRY_STATE:-}}
	[ -n "$_rk_s" ] || return 0
	sh "$REGISTRY_KIT/stop" "$_rk_s" >/dev/null 2>&1
	[ "${REGISTRY_KEEP:-0}" = 1 ] || rm -rf "$_rk_s"
	_rk_rest=""
	for _rk_x in $_rk_states; do
		[ "$_rk_x" = "$_rk_s" ] || _rk_rest="$_rk_rest $_rk_x"
	done
	_rk_states=$_rk_rest
}

fault_proxy_start() {
	$_rk_trap_set || { _rk_trap_set=true; at_exit _rk_cleanup; }
	[ -n "${REGISTRY_URL:-}" ] || {
		echo "fault_proxy_start: no registry (registry_start first)" >&2
		return 1
	}
	_rk_pd=$(mktemp -d "${TMPDIR:-/tmp}/envbuild-proxy.XXXXXX") || return 1
	_rk_states="$_rk_states $_rk_pd" # removed by the cleanup (stop ignores it)
	: >"$_rk_pd/requests.log"
	set -- --upstream "$REGISTRY_URL" --log "$_rk_pd/requests.log" \
		--rules "$_rk_pd/rules.json" --port-file "$_rk_pd/port" \
		--max-seconds "${FAULT_PROXY_MAX_SECONDS:-600}" "$@"
	[ -n "${REGISTRY_CA:-}" ] && set -- --upstream-cafile "$REGISTRY_CA" "$@"
	"${PYTHON:-python3}" "$_rk_helpers/fault-proxy.py" "$@" \
		>"$_rk_pd/proxy.out" 2>&1 </dev/null &
	FAULT_PROXY_PID=$!
	_rk_proxies="$_rk_proxies $FAULT_PROXY_PID"
	_rk_i=0
	while [ ! -s "$_rk_pd/port" ]; do
		if ! kill -0 "$FAULT_PROXY_PID" 2>/dev/null || [ $_rk_i -ge 200 ]; then
			sed 's/^/# fault_proxy_start: /' "$_rk_pd/proxy.out" >&2
			return 1
		fi
		_rk_i=$((_rk_i + 1))
		sleep 0.05
	done
	FAULT_PROXY=127.0.0.1:$(cat "$_rk_pd/port")
	FAULT_PROXY_URL=http://$FAULT_PROXY
	FAULT_PROXY_LOG=$_rk_pd/requests.log
	FAULT_PROXY_RULES=$_rk_pd/rules.json
	export FAULT_PROXY FAULT_PROXY_URL FAULT_PROXY_LOG FAULT_PROXY_RULES FAULT_PROXY_PID
}

fault_proxy_rules() {
	printf '%s\n' "$1" >"$FAULT_PROXY_RULES.tmp" &&
		mv "$FAULT_PROXY_RULES.tmp" "$FAULT_PROXY_RULES"
}

fault_proxy_count() {
	awk -v m="$1" -v re="$2" -v st="${3:-}" \
		'$2 == m && $3 ~ re && (st == "" || $4 == st) { n++ } END { print n + 0 }' \
		"$FAULT_PROXY_LOG"
}

fault_proxy_stop() {
	[ -n "${FAULT_PROXY_PID:-}" ] || return 0
	kill "$FAULT_PROXY_PID" 2>/dev/null && wait "$FAULT_PROXY_PID" 2>/dev/null
	_rk_rest=""
	for _rk_x in $_rk_proxies; do
		[ "$_rk_x" = "$FAULT_PROXY_PID" ] || _rk_rest="$_rk_rest $_rk_x"
	done
	_rk_proxies=$_rk_rest
	FAULT_PROXY_PID=""
}
