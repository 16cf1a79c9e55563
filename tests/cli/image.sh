#!/bin/sh
# image.sh - what ends up inside an image, checked in a umoci unpack of
# images built on the real Debian base (bookworm minbase + python3, where
# /bin, /lib and /sbin are symlinks into /usr): `files` destinations land
# as Docker's COPY puts them (symlinked parents followed, the base's
# parent directories keep their mode and owner), chown/chmod, and a
# destination that would replace a base file with a directory is refused
# at its position in the spec.
. "$(dirname "$0")/lib.sh"
plan 18

BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
if [ ! -f "$BASE/.complete" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "no test base at $BASE and not root to make one (run scripts/make-base $BASE as root)"
		finish
	fi
	"$top_srcdir/scripts/make-base" "$BASE" >"$TMP/make-base.log" 2>&1 ||
		{ not_ok "make-base failed"; diag <"$TMP/make-base.log"; finish; }
fi
if ! command -v umoci >/dev/null; then
	echo "1..0 # SKIP umoci is not installed"
	exit 77
fi
ok "base image: debootstrap bookworm + python3"
CACHE=$TMP/cache

# stat_is PATH "UID:GID MODE" NAME
stat_is() {
	got=$(stat -c '%u:%g %a' "$1" 2>&1)
	if [ "$got" = "$2" ]; then ok "$3"; else not_ok "$3: $got, want $2"; fi
}

# -- a base with /home/app owned 1000:1000 0750 (made by envbuild: chown/chmod)
P=$TMP/homebase
mkdir -p "$P/app"
echo keep >"$P/app/keep.txt"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: homebase
targets:
  homebase:
    base: oci:$BASE:bookworm-python3
    files:
      - {src: app/, dest: /home/app/, chown: "1000:1000", chmod: "0750"}
YAML
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build a base with /home/app 1000:1000 0750"
umoci unpack --image "$P/out/homebase:homebase" "$TMP/hb" >/dev/null 2>&1
stat_is "$TMP/hb/rootfs/home/app" "1000:1000 750" "chown/chmod apply to the directory copied into"
stat_is "$TMP/hb/rootfs/home/app/keep.txt" "1000:1000 750" "and to the files copied"
stat_is "$TMP/hb/rootfs/home" "0:0 755" "the base's /home is untouched"

# -- files over that base --------------------------------------------------
P=$TMP/proj
mkdir -p "$P/bin" "$P/data"
printf '#!/bin/sh\necho tool ok\n' >"$P/bin/run.sh"
chmod 755 "$P/bin/run.sh"
echo data >"$P/data/x.txt"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: proj
targets:
  app:
    base: oci:$TMP/homebase/out/homebase:homebase
    files:
      - {src: bin/run.sh, dest: /bin/tool.sh}
      - {src: data/, dest: /tmp/data/}
      - {src: data/, dest: /root/data/}
      - {src: data/, dest: /home/app/data/}
      - {src: data/x.txt, dest: /home/app/secret.txt, chown: "1000", chmod: "0640"}
YAML
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build files over the base"
run umoci unpack --image "$P/out/app:app" "$TMP/b"
expect_status 0 "umoci unpack"
R=$TMP/b/rootfs
stat_is "$R/tmp" "0:0 1777" "/tmp stays 1777"
stat_is "$R/root" "0:0 700" "/root stays 0700"
stat_is "$R/home/app" "1000:1000 750" "the base's /home/app keeps 1000:1000 0750"
stat_is "$R/tmp/data" "0:0 755" "a directory the base lacks is created 0755 root"
stat_is "$R/home/app/secret.txt" "1000:1000 640" "chown: \"1000\" is 1000:1000, chmod 0640"
[ -L "$R/bin" ] && [ "$(readlink "$R/bin")" = usr/bin ] && ok "/bin is still the base's symlink to usr/bin" ||
	not_ok "/bin was replaced: $(ls -ld "$R/bin")"
[ -f "$R/usr/bin/tool.sh" ] && ok "/bin/tool.sh landed in /usr/bin/tool.sh" || not_ok "no /usr/bin/tool.sh"
if [ "$(id -u)" -eq 0 ]; then
	run chroot "$R" /bin/sh -c 'tool.sh && /bin/sh -c "echo sh ok"'
	expect_status 0 "/bin/sh still works in a chroot, and so does /bin/tool.sh"
	expect_out_contains "sh ok" "/bin/sh ran"
else
	not_ok "chroot needs root"; not_ok "chroot needs root"
fi

# -- a destination that would replace a base file with a directory -------
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: proj
targets:
  app:
    base: oci:$BASE:bookworm-python3
    files:
      - {src: data/, dest: /etc/passwd/}
YAML
rm -rf "$P/out"
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 1 "build refuses a directory over the base's /etc/passwd"
expect_err_contains "envbuild.yaml:7:28: error: '/etc/passwd' would replace the file '/etc/passwd' of the base image with a directory" \
	"the error names the file and points at dest"
finish
