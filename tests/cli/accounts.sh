#!/bin/sh
# accounts.sh - accounts:, dirs: and user: by name on the real Debian
# test base: the image built has /etc/passwd, group, shadow and gshadow
# with the base's bytes first and the new lines after them, a home made
# as useradd -m makes it, a setgid /models group 0 may write, and files
# chowned by name; run in a chroot of umoci's unpack as uid 1000 (HOME
# unset, as a runtime derives it from passwd), getpass.getuser() is the
# name and Path.home() the writable home; umoci resolves `user: app`;
# pwck/grpck find nothing new; two builds give one digest, a change of
# accounts rebuilds that layer alone; each bad input is refused at its
# position with nothing written.  Needs root (umoci unpack, chroot).
. "$(dirname "$0")/lib.sh"

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (umoci unpack with owners, chroot)"
command -v umoci >/dev/null || skip "umoci not installed"
command -v pwck >/dev/null || skip "pwck not installed (passwd)"
need_base
plan 19

P=$TMP/p
mkdir -p "$P/app"
echo 'print("hi")' >"$P/app/main.py"
spec() {
	cat >"$P/envbuild.yaml" <<YAML
version: 1
name: acc
accounts:
  groups: [{ name: app, gid: 1000 }]
  users:  [{ name: app, uid: 1000, gid: 1000, shell: /bin/sh }]
targets:
  inference:
    base: oci:$BASE:bookworm-python3
    accounts:
      users: [$1]
    dirs:
      - { path: /models, owner: "app:0", mode: "2775" }
      - { path: /var/cache/hf, owner: app, mode: "1777" }
    files:
      - { src: app, dest: /app, chown: "app:app" }
    user: app
    workdir: /app
YAML
}
spec '{ name: svc, uid: 1001 }'
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache" --output "$TMP/img"
expect_status 0 "build with accounts, dirs and user: app"
D1=$(awk '{ print $2 }' "$TMP/out")
[ -n "$D1" ] || { diag <"$TMP/err"; finish; }

cd "$TMP" || exit 1
umoci unpack --image "$TMP/img/inference:inference" "$TMP/b" >"$TMP/umoci.log" 2>&1 || diag <"$TMP/umoci.log"
unpack_rootfs "$BASE:bookworm-python3" "$TMP/base" >"$TMP/umoci.log" 2>&1 || diag <"$TMP/umoci.log"
R=$TMP/b/rootfs
same=1
for f in passwd group shadow gshadow; do
	n=$(stat -c %s "$TMP/base/rootfs/etc/$f")
	head -c "$n" "$R/etc/$f" | cmp -s - "$TMP/base/rootfs/etc/$f" || same=0
done
[ $same = 1 ] && ok "the base's lines of passwd, group, shadow, gshadow are byte-identical" ||
	not_ok "the base's account lines changed"
new() { tail -c +$(($(stat -c %s "$TMP/base/rootfs/etc/$1") + 1)) "$R/etc/$1"; }
[ "$(new passwd)" = "app:x:1000:1000::/home/app:/bin/sh
svc:x:1001:1001::/home/svc:/bin/sh" ] && [ "$(new group)" = "app:x:1000:
svc:x:1001:" ] && ok "new passwd and group lines in spec order (svc gets its own group, gid = uid)" ||
	{ not_ok "new lines"; { new passwd; new group; } | diag; }
new shadow | grep -q '^app:!:[0-9]*:0:99999:7:::$' && [ "$(new gshadow)" = "app:!::
svc:!::" ] && ok "shadow and gshadow: locked passwords" || { not_ok "shadow lines"; { new shadow; new gshadow; } | diag; }
[ "$(stat -c '%u:%g %a' "$R/etc/shadow")" = "$(stat -c '%u:%g %a' "$TMP/base/rootfs/etc/shadow")" ] &&
	ok "/etc/shadow keeps the base's owner and mode ($(stat -c '%u:%g %a' "$R/etc/shadow"))" ||
	not_ok "/etc/shadow: $(stat -c '%u:%g %a' "$R/etc/shadow")"
[ "$(stat -c '%u:%g %a %F' "$R/home/app")" = "1000:1000 755 directory" ] &&
	[ "$(stat -c '%u:%g %a' "$R/models")" = "1000:0 2775" ] &&
	[ "$(stat -c '%u:%g %a' "$R/var/cache/hf")" = "1000:1000 1777" ] &&
	[ "$(stat -c '%u:%g' "$R/app/main.py")" = "1000:1000" ] &&
	ok "home 0755 (useradd -m with UMASK 022), /models 2775 app:0, sticky /var/cache/hf, /app chowned by name" ||
	not_ok "owners: $(stat -c '%n %u:%g %a' "$R/home/app" "$R/models" "$R/var/cache/hf" "$R/app/main.py" 2>&1)"
[ "$(stat -c '%u:%g %a' "$R/var/cache")" = "$(stat -c '%u:%g %a' "$TMP/base/rootfs/var/cache")" ] &&
	ok "the parents of dirs keep the base's metadata" || not_ok "/var/cache changed"
python3 -c 'import json,sys; u=json.load(open(sys.argv[1]))["process"]["user"]; sys.exit(0 if (u["uid"],u["gid"])==(1000,1000) else 1)' "$TMP/b/config.json" &&
	ok "umoci's runtime config resolves user: app to 1000:1000" ||
	not_ok "runtime user: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["user"])' "$TMP/b/config.json")"
python3 - "$TMP/img/inference" <<'PY' && ok "the config keeps User as written and sets no HOME" || not_ok "config User/Env"
import json, sys
b = sys.argv[1]
h = lambda d: b + "/blobs/sha256/" + d.split(":")[1]
m = json.load(open(h(json.load(open(b + "/index.json"))["manifests"][0]["digest"])))
c = json.load(open(h(m["config"]["digest"])))["config"]
sys.exit(0 if c["User"] == "app" and not any(e.startswith("HOME=") for e in c.get("Env", [])) else 1)
PY
run chroot --userspec=1000:1000 "$R" /usr/bin/env -u HOME /usr/bin/python3 -c '
import getpass, pathlib
h = pathlib.Path.home()
(h / "probe").write_text("x")
print(getpass.getuser(), h)'
[ "$STATUS" = 0 ] && [ "$OUT" = "app /home/app" ] &&
	ok "as uid 1000: getpass.getuser() is app, Path.home() is /home/app and writable" ||
	{ not_ok "chroot as 1000: $OUT"; diag <"$TMP/err"; }
run chroot --userspec=1001:0 "$R" /bin/sh -c 'touch /models/m && stat -c %g /models/m'
[ "$STATUS" = 0 ] && [ "$OUT" = 0 ] &&
	ok "/models is writable by a process in group 0 (setgid: new files get group 0)" ||
	{ not_ok "/models as 1001:0: $OUT"; diag <"$TMP/err"; }
pwck -r -R "$TMP/base/rootfs" >"$TMP/pwck.base" 2>&1; pst=$?
pwck -r -R "$R" >"$TMP/pwck.img" 2>&1; ist=$?
grpck -r -R "$R" >"$TMP/grpck" 2>&1; gst=$?
cmp -s "$TMP/pwck.base" "$TMP/pwck.img" && [ $pst = $ist ] && [ $gst = 0 ] &&
	ok "pwck -r -R reports nothing the base does not (exit $ist as the base's), grpck -r -R clean" ||
	{ not_ok "pwck $ist (base $pst), grpck $gst"; diff "$TMP/pwck.base" "$TMP/pwck.img" | diag; diag <"$TMP/grpck"; }

rm -f "$P/envbuild.lock"
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache2" --output "$TMP/img2"
[ "$(awk '{ print $2 }' "$TMP/out")" = "$D1" ] && ok "two builds (fresh caches) give one digest" ||
	not_ok "digests differ: $D1 / $(awk '{ print $2 }' "$TMP/out")"
spec '{ name: svc, uid: 1002 }'
run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache" --output "$TMP/out3"
expect_out_contains "1 built, 1 cached" "a change of accounts rebuilds the accounts layer alone"

# bad inputs: each refused at its position, nothing written
bad() { # NAME WANT-IN-STDERR USERS-ENTRY [sed on the spec]
	spec "$3"
	[ -n "${4:-}" ] && sed -i "$4" "$P/envbuild.yaml"
	rm -rf "$TMP/bad" "$P/envbuild.lock"
	run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache" --output "$TMP/bad"
	if [ "$STATUS" = 1 ] && grep -qF -- "$2" "$TMP/err" && [ ! -e "$TMP/bad" ] && [ ! -e "$P/envbuild.lock" ]; then
		ok "$1 refused at its position, nothing written"
	else
		not_ok "$1: exit $STATUS"; diag <"$TMP/err"
	fi
}
bad "an unknown chown name" "envbuild.yaml:15:41: error: chown 'app:nosuch': group 'nosuch'" '{ name: svc, uid: 1001 }' 's/chown: "app:app"/chown: "app:nosuch"/'
bad "a uid of another base user" "envbuild.yaml:10:15: error: uid 1 of user 'svc' is user 'daemon' in the base's /etc/passwd (line 2) [EB023]" '{ name: svc, uid: 1 }'
bad "a gid that is another base group" "error: gid 100 of group 'app' is group 'users' in the base's /etc/group" '{ name: svc, uid: 1001 }' 's/{ name: app, gid: 1000 }/{ name: app, gid: 100 }/'
bad "a home that is a base file" "envbuild.yaml:10:15: error: home '/etc/hostname' of user 'svc' is a file of the base, not a directory [EB024]" '{ name: svc, uid: 1001, home: /etc/hostname }'
bad "an invalid login name" "envbuild.yaml:10:23: error: invalid name 'Svc' [EB020]" '{ name: Svc, uid: 1001 }'
finish
