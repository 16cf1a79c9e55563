# lib.sh - TAP helpers for the CLI tests (sourced).  Each test script calls
# `plan N`, then `ok`/`not_ok` through the helpers below.  ENVBUILD,
# top_srcdir and top_builddir come from `make check` (AM_TESTS_ENVIRONMENT);
# running a script by hand from the source tree works too.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${ENVBUILD:=$top_builddir/envbuild}"
export LC_ALL=C
# the shared test base lies outside every test project: the runner allows
# it as an oci: base (specs/envbuild-yaml.md, "base")
ENVBUILD_OCI_BASES=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
export ENVBUILD_OCI_BASES

_n=0
_failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/envbuild-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

plan() { echo "1..$1"; }

# unpack_rootfs IMAGE DIR: umoci's unpack of IMAGE's layers into DIR/rootfs,
# which a chroot needs.  `umoci unpack` also writes a runtime config and an
# mtree that hashes every file, which doubles its time; the tests that read
# DIR/config.json call it themselves.
unpack_rootfs() { mkdir -p "$2" && umoci --log error raw unpack --image "$1" "$2/rootfs"; }

# link_tree SRC DST: DST a copy of the tree SRC, hardlinked where both are
# on one file system (the test base lives in /var/tmp; TMP may be on a
# tmpfs, run-tests' scratch space); link_into DIR FILE...: the same for
# files into DIR (a name already there is replaced)
link_tree() { cp -al "$1" "$2" 2>/dev/null || { rm -rf "$2" && cp -a "$1" "$2"; }; }
link_into() {
	_d=$1
	shift
	for _f; do ln -f "$_f" "$_d/" 2>/dev/null || cp -f "$_f" "$_d/" || return 1; done
}

# need_base: the shared Debian test base (scripts/make-base: debootstrap
# bookworm + python3, packed by umoci) in $BASE, made here when missing
# (root only); without it the test cannot go on, and says so.
need_base() {
	BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
	[ -f "$BASE/.complete" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "no test base at $BASE and not root to make one (run scripts/make-base $BASE as root)"
		finish
	fi
	"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/make-base.log" 2>&1 ||
		{ not_ok "make-base failed"; diag <"$TMP/make-base.log"; finish; }
}
ok() { _n=$((_n + 1)); echo "ok $_n - $*"; }
not_ok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $*"; }
diag() { sed 's/^/# /'; }

# run CMD...: run and capture stdout/stderr/status into $OUT $ERR $STATUS
run() {
	STATUS=0
	"$@" >"$TMP/out" 2>"$TMP/err" || STATUS=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# expect_status WANT NAME
expect_status() {
	if [ "$STATUS" -eq "$1" ]; then
		ok "$2 (exit $1)"
	else
		not_ok "$2: exit $STATUS, want $1"
		{ echo "stdout:"; cat "$TMP/out"; echo "stderr:"; cat "$TMP/err"; } | diag
	fi
}

# expect_out_contains TEXT NAME  (stdout)
expect_out_contains() {
	if grep -qF -- "$1" "$TMP/out"; then ok "$2"; else
		not_ok "$2: stdout lacks '$1'"
		diag <"$TMP/out"
	fi
}

# expect_err_contains TEXT NAME  (stderr)
expect_err_contains() {
	if grep -qF -- "$1" "$TMP/err"; then ok "$2"; else
		not_ok "$2: stderr lacks '$1'"
		diag <"$TMP/err"
	fi
}

# expect_golden FILE NAME: stdout must equal the golden file byte for byte.
# With UPDATE_GOLDEN=1 the golden file is rewritten instead (review the diff).
expect_golden() {
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$TMP/out" "$1"
		ok "$2 (golden updated)"
	elif cmp -s "$TMP/out" "$1"; then
		ok "$2"
	else
		not_ok "$2: output differs from $(basename "$1")"
		diff -u "$1" "$TMP/out" | diag
	fi
}

finish() { exit $((_failed > 0)); }
