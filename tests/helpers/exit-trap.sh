# exit-trap.sh - one EXIT trap for the test kits (sourced).  Each kit that
# starts a process (the registry kit, apt-env's HTTP server) registers its
# cleanup with `at_exit CMD`; at exit the commands run newest first, then the
# EXIT trap that was in place before the first at_exit (lib.sh's rm -rf of
# $TMP), and the script exits with the status it was leaving with.  The
# status is taken before anything runs, so no cleanup's own status (a kill
# of a server already gone) can turn a passing test into a failing one.
# INT/TERM/HUP exit, so that EXIT runs.

# shellcheck disable=SC2034 # guarded re-sourcing
[ -n "${_at_exit_loaded:-}" ] && return 0
_at_exit_loaded=1
_at_exit_cmds=""
_at_exit_old=""
_at_exit_set=false

at_exit() {
	_at_exit_cmds="$1
$_at_exit_cmds"
	$_at_exit_set && return 0
	_at_exit_set=true
	# dash has no `trap -p`, but `trap` prints re-readable `trap -- 'CMD' SIG`
	_at_exit_tf=$(mktemp "${TMPDIR:-/tmp}/envbuild-trap.XXXXXX")
	trap >"$_at_exit_tf"
	while IFS= read -r _at_exit_l; do
		case $_at_exit_l in
		*" EXIT" | *" 0")
			eval "set -- $_at_exit_l"
			_at_exit_old=$3
			;;
		esac
	done <"$_at_exit_tf"
	rm -f "$_at_exit_tf"
	trap _at_exit_run EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

_at_exit_run() {
	_at_exit_st=$?
	trap - EXIT
	eval "$_at_exit_cmds"
	[ -z "$_at_exit_old" ] || eval "$_at_exit_old"
	exit "$_at_exit_st"
}
