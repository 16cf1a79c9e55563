#!/bin/sh
# apt_owner.sh - a .deb's owners reach the image: a package built here
# with dpkg-deb (as root, so its data.tar carries the owners chown gave)
# holding a setgid file of group utmp (43), a directory of group mail (8)
# with mode 2775, a file owned by daemon (1:1), a hardlink to the setgid
# file and a root file, served from a signed loopback repository and
# installed by `envbuild build`: the Debian layer, read with GNU tar
# (--numeric-owner) and unpacked with umoci, has each entry's uid/gid and
# mode as the package has them, no user or group names, and the root
# file stays 0:0.  Its postinst only registers an alternative (made by
# envbuild) under an `if [ "$1" = configure ]`; a second package's
# postinst adds a user: the build's EB235 warning names that one alone.
# Needs root (chown, umoci unpack).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/apt-env.sh"

BASE=/var/tmp/envbuild-test-base
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (chown for dpkg-deb, umoci unpack)"
command -v dpkg-deb >/dev/null || skip "dpkg-deb not installed"
command -v umoci >/dev/null || skip "umoci not installed"
"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/base.log" 2>&1 || skip "no test base: $(tail -n 1 "$TMP/base.log")"

D=$TMP/pkg
mkdir -p "$D/DEBIAN" "$D/usr/bin" "$D/var/mail" "$D/var/spool/owned" "$D/usr/share/doc/owned-demo"
printf 'Package: owned-demo\nVersion: 1.0-1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: files with owners\n' >"$D/DEBIAN/control"
printf '#!/bin/sh\necho owned\n' >"$D/usr/bin/owned-tool"
ln "$D/usr/bin/owned-tool" "$D/usr/bin/owned-tool2"
echo spool >"$D/var/spool/owned/queue"
echo doc >"$D/usr/share/doc/owned-demo/README"
chown 0:43 "$D/usr/bin/owned-tool"
chmod 2755 "$D/usr/bin/owned-tool"
chown 0:8 "$D/var/mail"
chmod 2775 "$D/var/mail"
chown 1:1 "$D/var/spool/owned/queue"
cat >"$D/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = "configure" ]; then
	update-alternatives --install /usr/bin/owned owned /usr/bin/owned-tool 10
fi
# Automatically added by dh_installdeb
dpkg-maintscript-helper rm_conffile /etc/owned.conf 0.9 -- "$@"
exit 0
SH
chmod 0755 "$D/DEBIAN/postinst"
B=$TMP/busy
mkdir -p "$B/DEBIAN" "$B/usr/share/doc/busy-demo"
printf 'Package: busy-demo\nVersion: 2.0\nArchitecture: all\nMaintainer: t <t@t>\nDescription: a postinst with work\n' >"$B/DEBIAN/control"
printf '#!/bin/sh\nset -e\ncase "$1" in\nconfigure)\n\tadduser --system busy\n\t;;\nesac\n' >"$B/DEBIAN/postinst"
chmod 0755 "$B/DEBIAN/postinst"
echo doc >"$B/usr/share/doc/busy-demo/README"
mkdir -p "$TMP/debs"
dpkg-deb -Zgzip -b "$D" "$TMP/debs/owned-demo_1.0-1_all.deb" >"$TMP/deb.log" 2>&1 || skip "dpkg-deb -b failed: $(tail -n 1 "$TMP/deb.log")"
dpkg-deb -Zgzip -b "$B" "$TMP/debs/busy-demo_2.0_all.deb" >"$TMP/deb.log" 2>&1 || skip "dpkg-deb -b failed: $(tail -n 1 "$TMP/deb.log")"
R=$TMP/repo
st=0
"$APT_HELPERS/make-apt-repo.sh" build "$R" bookworm "$TMP/debs/owned-demo_1.0-1_all.deb" "$TMP/debs/busy-demo_2.0_all.deb" >"$TMP/make.log" 2>&1 || st=$?
[ "$st" = 0 ] || skip "cannot make the test repository (exit $st): $(tail -n 1 "$TMP/make.log")"
apt_repo_serve "$R" || skip "cannot start the HTTP server"
plan 9

# the reference: what the package itself says, read by dpkg-deb
dpkg-deb -c "$TMP/debs/owned-demo_1.0-1_all.deb" >"$TMP/deb-list"
grep -q '^-rwxr-sr-x root/utmp .* ./usr/bin/owned-tool$' "$TMP/deb-list" &&
	grep -q '^drwxrwsr-x root/mail .* ./var/mail/$' "$TMP/deb-list" ||
	{ echo "# the .deb does not carry the owners:"; sed 's/^/# /' "$TMP/deb-list"; }

P=$TMP/p
mkdir -p "$P"
cp "$R/keyring.gpg" "$P/"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: owners
apt_sources:
  - url: $APT_URL
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  tools:
    base: oci:$BASE:bookworm-python3
    apt: [owned-demo=1.0-1, busy-demo=2.0]
YAML
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache" --output "$TMP/out-layout"
expect_status 0 "envbuild build installs the packages"
if grep 'EB235' "$TMP/err" | grep -q 'busy-demo' && ! grep 'EB235' "$TMP/err" | grep -q 'owned-demo'; then
	ok "EB235 names the postinst that adds a user, not the one envbuild replays"
else
	not_ok "EB235: $(grep EB235 "$TMP/err")"
fi
# owned-demo's layer: of the small packages' layers below the dpkg
# database, the one that has usr/bin/owned-tool
LAYER=$(python3 - "$TMP/out-layout/tools" <<'PY'
import json, sys
b = sys.argv[1]
idx = json.load(open(b + "/index.json"))
m = json.load(open(b + "/blobs/sha256/" + idx["manifests"][0]["digest"].split(":")[1]))
for l in m["layers"][1:-1]:
    print(b + "/blobs/sha256/" + l["digest"].split(":")[1])
PY
)
for l in $LAYER; do tar -tzf "$l" | grep -qx 'usr/bin/owned-tool' && LAYER=$l && break; done
tar --numeric-owner -tvzf "$LAYER" >"$TMP/tv" 2>"$TMP/tv.err" || { echo "# tar failed"; diag <"$TMP/tv.err"; }
owner_of() { awk -v p="$1" '$6 == p || $6 == p "/" { print $1, $2 }' "$TMP/tv"; }
[ "$(owner_of usr/bin/owned-tool)" = "-rwxr-sr-x 0/43" ] &&
	ok "the setgid file keeps group utmp (0/43) and mode 2755 in the layer (tar)" ||
	{ not_ok "usr/bin/owned-tool: '$(owner_of usr/bin/owned-tool)'"; diag <"$TMP/tv"; }
[ "$(owner_of var/mail)" = "drwxrwsr-x 0/8" ] &&
	ok "/var/mail keeps group mail (0/8) and mode 2775" ||
	{ not_ok "var/mail: '$(owner_of var/mail)'"; diag <"$TMP/tv"; }
[ "$(owner_of var/spool/owned/queue)" = "-rw-r--r-- 1/1" ] &&
	ok "a file owned by daemon keeps 1/1" || not_ok "var/spool/owned/queue: '$(owner_of var/spool/owned/queue)'"
[ "$(owner_of usr/share/doc/owned-demo/README)" = "-rw-r--r-- 0/0" ] &&
	ok "a root file stays 0/0" || not_ok "README: '$(owner_of usr/share/doc/owned-demo/README)'"
# no names: tar without --numeric-owner shows the ids where a header has no name
tar -tvzf "$LAYER" | grep -q ' root/utmp \| root/mail \| daemon/daemon ' &&
	not_ok "the layer carries user or group names" || ok "owners are numeric only (no uname/gname)"

# umoci's unpack (as root it applies the tar headers' owners)
cd "$TMP" || exit 1
unpack_rootfs "$TMP/out-layout/tools:tools" "$TMP/bundle" >"$TMP/umoci.log" 2>&1 || diag <"$TMP/umoci.log"
RF=$TMP/bundle/rootfs
if [ "$(stat -c '%u:%g %a' "$RF/usr/bin/owned-tool" 2>/dev/null)" = "0:43 2755" ] &&
	[ "$(stat -c '%u:%g %a' "$RF/usr/bin/owned-tool2" 2>/dev/null)" = "0:43 2755" ] &&
	[ "$(stat -c '%u:%g %a' "$RF/var/mail" 2>/dev/null)" = "0:8 2775" ] &&
	[ "$(stat -c '%u:%g' "$RF/var/spool/owned/queue" 2>/dev/null)" = "1:1" ]; then
	ok "umoci unpack gives the file, its hardlink, /var/mail and the daemon file their owners"
else
	not_ok "umoci unpack: owned-tool $(stat -c '%u:%g %a' "$RF/usr/bin/owned-tool" 2>&1), owned-tool2 $(stat -c '%u:%g %a' "$RF/usr/bin/owned-tool2" 2>&1), var/mail $(stat -c '%u:%g %a' "$RF/var/mail" 2>&1)"
	diag <"$TMP/umoci.log"
fi
[ "$(readlink "$RF/usr/bin/owned")" = /etc/alternatives/owned ] &&
	[ "$(readlink "$RF/etc/alternatives/owned")" = /usr/bin/owned-tool ] &&
	ok "the postinst's alternative is made (/usr/bin/owned -> /etc/alternatives/owned -> /usr/bin/owned-tool)" ||
	not_ok "alternative links: $(readlink "$RF/usr/bin/owned") $(readlink "$RF/etc/alternatives/owned")"
finish
