# apt-env.sh - a signed Debian repository on 127.0.0.1 for the apt tests
# (sourced after tests/cli/lib.sh; POSIX sh).
#
#   apt_repo_make DIR SUITE PKG...   take the .debs from $APT_DEB_CACHE
#                        (default /var/tmp/envbuild-test-debs, filled by
#                        scripts/fetch-test-debs; never downloaded here) and build a
#                        signed repository in DIR; returns 77 when apt-get,
#                        gpg or dpkg-scanpackages is missing or the machine's
#                        apt sources cannot serve a package
#   apt_repo_serve DIR   serve DIR with tests/helpers/make-index.py on a free
#                        loopback port; exports APT_URL (http://127.0.0.1:P/)
#                        and APT_SERVER_PID; the server stops with the test
#                        (exit-trap.sh's at_exit, shared with the registry
#                        kit: either may start first)
: "${APT_DEB_CACHE:=/var/tmp/envbuild-test-debs}"
# the tests never download: scripts/fetch-test-debs (run-tests' set-up)
# fetched every closure of tests/helpers/apt-test-roots
: "${APT_DEB_OFFLINE:=1}"
export APT_DEB_OFFLINE
APT_HELPERS=$top_srcdir/tests/helpers
. "$APT_HELPERS/exit-trap.sh"

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
	$_apt_trap_set || { _apt_trap_set=true; at_exit _apt_stop; }
}

_apt_trap_set=false
_apt_stop() { [ -z "${APT_SERVER_PID:-}" ] || kill "$APT_SERVER_PID" 2>/dev/null; }

# apt_base_layers LAYOUT: the layer blobs of the first image of an OCI
# layout, bottom first (for apt-tool status/layer)
apt_base_layers() {
	python3 - "$1" <<'PY'
import json, sys
b = sys.argv[1]
idx = json.load(open(b + "/index.json"))
m = json.load(open(b + "/blobs/sha256/" + idx["manifests"][0]["digest"].split(":")[1]))
for layer in m["layers"]:
    print(b + "/blobs/sha256/" + layer["digest"].split(":")[1])
PY
}

# apt_closure STATUS PKG...: NAME=VERSION of everything `apt-get install
# --no-install-recommends PKG...` would install on a system whose dpkg
# status is STATUS, from the machine's apt lists (the test's reference for
# what a complete set of pins is)
apt_closure() {
	_st=$1
	shift
	apt-get -s -o Dir::State::status="$_st" install --no-install-recommends "$@" 2>/dev/null |
		sed -n 's/^Inst \([^ ]*\) .*(\([^ ]*\) .*/\1=\2/p'
}

# apt_fake_deb OUT NAME VERSION KIND: a hand-made hostile .deb (python3
# tarfile + ar): KIND traversal | device | escape | hardlink | whiteout
# (a .wh. file) | opaque (.wh..wh..opq) | newline (in a path) | bigcontrol
# (three 12 MiB control members: 36 MiB in all, each under the member cap)
apt_fake_deb() {
	python3 - "$@" <<'PY'
import io, os, sys, tarfile, time
out, name, ver, kind = sys.argv[1:5]
def tgz(members):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w:gz") as t:
        for ti, data in members:
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return b.getvalue()
def reg(path, data):
    ti = tarfile.TarInfo(path); ti.size = len(data); ti.mode = 0o644; return (ti, data)
ctl = ("Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@t>\n"
       "Description: hostile\n" % (name, ver)).encode()
data = [reg("./usr/share/doc/%s/ok" % name, b"ok\n")]
if kind == "traversal":
    data.append(reg("./../../etc/evil", b"x"))
elif kind == "device":
    ti = tarfile.TarInfo("./dev/evil"); ti.type = tarfile.CHRTYPE; ti.devmajor = 1; ti.devminor = 3
    data.append((ti, None))
elif kind == "escape":
    ti = tarfile.TarInfo("./usr/evil"); ti.type = tarfile.SYMTYPE; ti.linkname = "../../../etc/shadow"
    data.append((ti, None))
elif kind == "hardlink":
    ti = tarfile.TarInfo("./usr/evil"); ti.type = tarfile.LNKTYPE; ti.linkname = "etc/shadow"
    data.append((ti, None))
elif kind == "whiteout":
    data.append(reg("./usr/bin/.wh.python3", b""))
elif kind == "opaque":
    data.append(reg("./usr/lib/.wh..wh..opq", b""))
elif kind == "newline":
    data.append(reg("./usr/share/doc/x\n/etc/shadow", b"x"))
controls = [reg("./control", ctl)]
if kind == "bigcontrol":
    controls += [reg("./extra%d" % i, b"\0" * (12 << 20)) for i in range(3)]
members = [(b"debian-binary", b"2.0\n"), (b"control.tar.gz", tgz(controls)),
           (b"data.tar.gz", tgz(data))]
with open(out, "wb") as f:
    f.write(b"!<arch>\n")
    for n, d in members:
        f.write(b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (n, 0, 0, 0, b"100644", len(d)))
        f.write(d)
        if len(d) % 2:
            f.write(b"\n")
PY
}
