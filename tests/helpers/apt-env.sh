# apt-env.sh - a signed Debian repository on 127.0.0.1 for the apt tests
# (sourced after tests/cli/lib.sh; POSIX sh).
#
#   apt_repo_make DIR SUITE PKG...   fetch the .debs (tests/helpers/
#                        make-apt-repo.sh debs, cached in $APT_DEB_CACHE,
#                        default /var/tmp/envbuild-test-debs) and build a
#                        signed repository in DIR; returns 77 when apt-get,
#                        gpg or dpkg-scanpackages is missing or the machine's
#                        apt sources cannot serve a package
#   apt_repo_serve DIR   serve DIR with tests/helpers/make-index.py on a free
#                        loopback port; exports APT_URL (http://127.0.0.1:P/)
#                        and APT_SERVER_PID; the server stops with the test
: "${APT_DEB_CACHE:=/var/tmp/envbuild-test-debs}"
APT_HELPERS=$top_srcdir/tests/helpers

apt_repo_make() {
	_dir=$1 _suite=$2
	shift 2
	_debs=$("$APT_HELPERS/make-apt-repo.sh" debs "$APT_DEB_CACHE" "$@") || return $?
	# shellcheck disable=SC2086 # one .deb path per word
	"$APT_HELPERS/make-apt-repo.sh" build "$_dir" "$_suite" $_debs
}

apt_repo_serve() {
	python3 "$APT_HELPERS/make-index.py" serve "$1" --max-seconds 900 --log "$TMP/apt-http.log" \
		>"$TMP/apt-http.port" 2>"$TMP/apt-http.err" &
	APT_SERVER_PID=$!
	_i=0
	while [ ! -s "$TMP/apt-http.port" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ -s "$TMP/apt-http.port" ] || return 1
	APT_URL=http://127.0.0.1:$(cat "$TMP/apt-http.port")/
	export APT_URL APT_SERVER_PID
	trap 'kill $APT_SERVER_PID 2>/dev/null; rm -rf "$TMP"' EXIT
}
