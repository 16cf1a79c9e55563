#!/bin/sh
# image.sh - what ends up inside an image, checked in a umoci unpack of
# images built on the real Debian base (bookworm minbase + python3, where
# /bin, /lib and /sbin are symlinks into /usr): `files` destinations land
# as Docker's COPY puts them (symlinked parents followed, the base's
# parent directories keep their mode and owner), chown/chmod, and a
# destination that would replace a base file with a directory is refused
# at its position in the spec.  Then: env values expanded against the
# base's env ($PATH), `created` from the last commit that changed an
# input (a lock-only commit changes no digest), linux/arm64 variant v8,
# and history entries for the layers and the config settings.
. "$(dirname "$0")/lib.sh"
if ! command -v umoci >/dev/null; then
	echo "1..0 # SKIP umoci is not installed"
	exit 77
fi
plan 35

need_base
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
unpack_rootfs "$P/out/homebase:homebase" "$TMP/hb" >/dev/null 2>&1
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
# the base is another project's output: the runner allows it (specs alone
# may name only layouts inside their project)
ENVBUILD_OCI_BASES="$ENVBUILD_OCI_BASES:$TMP/homebase/out"
export ENVBUILD_OCI_BASES
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build files over the base"
run unpack_rootfs "$P/out/app:app" "$TMP/b"
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

# -- env: $PATH expands against the base's PATH ---------------------------
P=$TMP/envp
mkdir -p "$P/tools"
printf '#!/bin/sh\necho "mytool ran with PATH=$PATH"\n' >"$P/tools/mytool"
chmod 755 "$P/tools/mytool"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: envp
targets:
  app:
    base: oci:$BASE:bookworm-python3
    files: [{src: tools/, dest: /opt/tools/bin/}]
    env:
      PATH: "/opt/tools/bin:\$PATH"
      GREETING: '\\\$PATH is literal, \${NOPE:-default} is a default'
      LATER: "\${GREETING%%,*}"
      X: "\$UNDEFINED_ANYWHERE/x"
    entrypoint: [mytool]
YAML
# the syntax error first: an unsupported modifier, reported at the key
run "$ENVBUILD" -C "$P" check
expect_status 1 "check refuses an unsupported \${...} modifier"
expect_out_contains "envbuild.yaml:10:7: error: invalid value of LATER" "at its position"
sed -i '/LATER:/d' "$P/envbuild.yaml"
run "$ENVBUILD" -C "$P" check
expect_out_contains "envbuild.yaml:10:7: warning: X refers to \$UNDEFINED_ANYWHERE, which the spec does not set before it" "check warns about a variable the spec never sets"
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build with expanded env"
umoci unpack --image "$P/out/app:app" "$TMP/e" >/dev/null 2>&1
python3 - "$TMP/e/config.json" >"$TMP/env.txt" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["process"]["env"]:
    print(e)
PY
basepath=$(python3 -c 'import json,sys; print([e for e in json.load(open(sys.argv[1]))["config"]["Env"] if e.startswith("PATH=")][0][5:])' \
	"$BASE/blobs/sha256/$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["config"]["digest"][7:])' \
	"$BASE/blobs/sha256/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"][7:])' "$BASE/index.json")")")
grep -qx "PATH=/opt/tools/bin:$basepath" "$TMP/env.txt" && ok "PATH=/opt/tools/bin:\$PATH became /opt/tools/bin:$basepath" ||
	{ not_ok "PATH not expanded"; diag <"$TMP/env.txt"; }
grep -qxF 'GREETING=$PATH is literal, default is a default' "$TMP/env.txt" && ok "\\\$ is a literal \$, \${NOPE:-default} a default" ||
	{ not_ok "GREETING wrong"; diag <"$TMP/env.txt"; }
grep -qx "X=/x" "$TMP/env.txt" && ok "a variable set nowhere expands to nothing" || { not_ok "X wrong"; diag <"$TMP/env.txt"; }
if [ "$(id -u)" -eq 0 ]; then
	# sh and python3 are found only through the base's part of PATH
	run chroot "$TMP/e/rootfs" /usr/bin/env -i "$(grep '^PATH=' "$TMP/env.txt")" sh -c 'mytool && python3 -c "print(6 * 7)"'
	if [ "$STATUS" -eq 0 ] && grep -q "mytool ran with PATH=/opt/tools/bin:" "$TMP/out" && grep -qx 42 "$TMP/out"; then
		ok "the entrypoint and the base's programs are found through the expanded PATH"
	else
		not_ok "PATH lookups in the image: exit $STATUS"; cat "$TMP/out" "$TMP/err" | diag
	fi
else
	not_ok "chroot needs root"
fi
# history: one entry per layer, then empty_layer entries for the settings
cfg=$TMP/e/config.json
python3 - "$P/out/app" >"$TMP/hist.txt" <<'PY'
import json, os, sys
d = sys.argv[1]
blob = lambda dg: json.load(open(os.path.join(d, "blobs", "sha256", dg[7:])))
m = blob(json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"])
c = blob(m["config"]["digest"])
print(len(m["layers"]), sum(1 for h in c["history"] if not h.get("empty_layer")))
for h in c["history"]:
    if h.get("empty_layer") and h.get("created_by", "").startswith("envbuild:"):
        print(h["created_by"].split(" ")[1])
PY
read nl nh <"$TMP/hist.txt"
[ "$nl" = "$nh" ] && ok "history has one non-empty entry per layer ($nl)" || { not_ok "history vs layers"; diag <"$TMP/hist.txt"; }
sed -n '2,$p' "$TMP/hist.txt" | tr '\n' ' ' | grep -qx "ENV ENTRYPOINT " && ok "empty_layer entries for ENV and ENTRYPOINT" ||
	{ not_ok "config history entries"; diag <"$TMP/hist.txt"; }

# -- linux/arm64: variant v8 in the index and the config ------------------
P=$TMP/arm
mkdir -p "$P/data"
echo x >"$P/data/x"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: arm
platforms: [linux/amd64, linux/arm64]
targets:
  app:
    base: scratch
    files: [{src: data/, dest: /data/}]
YAML
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
expect_status 0 "build linux/amd64 + linux/arm64 from scratch"
python3 - "$P/out/app" >"$TMP/arm.txt" <<'PY'
import json, os, sys
d = sys.argv[1]
blob = lambda dg: json.load(open(os.path.join(d, "blobs", "sha256", dg[7:])))
idx = blob(json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"])
for m in idx["manifests"]:
    c = blob(blob(m["digest"])["config"]["digest"])
    print(m["platform"].get("architecture"), m["platform"].get("variant", "-"), c.get("variant", "-"))
PY
grep -qx "arm64 v8 v8" "$TMP/arm.txt" && grep -qx "amd64 - -" "$TMP/arm.txt" &&
	ok "arm64 carries variant v8 in the index and the config, amd64 none" || { not_ok "variants"; diag <"$TMP/arm.txt"; }

# -- created: the last commit that changed an input ------------------------
P=$TMP/gitp
mkdir -p "$P/data"
echo one >"$P/data/x"
cat >"$P/envbuild.yaml" <<YAML
version: 1
name: gitp
targets:
  app:
    base: scratch
    # the whole project, lock included in the tree git sees: a commit of
    # the lock alone must still not count as an input change
    files: [{src: ., dest: /app/, exclude: [.git/, out/, envbuild.lock]}]
YAML
created_of() {
	python3 - "$P/out/app" <<'PY'
import json, os, sys
d = sys.argv[1]
blob = lambda dg: json.load(open(os.path.join(d, "blobs", "sha256", dg[7:])))
m = blob(json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"])
print(blob(m["config"]["digest"])["created"])
PY
}
gitc() { # DATE MESSAGE PATHS...
	d=$1; m=$2; shift 2
	git -C "$P" add "$@" && GIT_AUTHOR_DATE="$d" GIT_COMMITTER_DATE="$d" \
		git -C "$P" -c user.name=t -c user.email=t@example.com commit -q -m "$m" -- "$@"
}
git -C "$P" init -q
gitc "2024-03-01T10:00:00Z" "inputs" envbuild.yaml data
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE" --format=json
expect_status 0 "build in a git repository"
[ "$(created_of)" = "2024-03-01T10:00:00Z" ] && ok "created is the commit time of the inputs" ||
	not_ok "created is $(created_of), want 2024-03-01T10:00:00Z"
d1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["digest"])' "$TMP/out")
gitc "2024-04-01T10:00:00Z" "lock" envbuild.lock
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE" --format=json
d2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["digest"])' "$TMP/out")
[ -n "$d1" ] && [ "$d1" = "$d2" ] && ok "a commit of envbuild.lock alone changes no digest" ||
	not_ok "digest changed with a lock-only commit: $d1 -> $d2"
echo two >"$P/data/x"
gitc "2024-05-01T10:00:00Z" "data" data
run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
[ "$(created_of)" = "2024-05-01T10:00:00Z" ] && ok "a commit that changes a files source moves created" ||
	not_ok "created is $(created_of), want 2024-05-01T10:00:00Z"
# outside git: SOURCE_DATE_EPOCH, else 0
rm -rf "$P/.git" "$P/out"
SOURCE_DATE_EPOCH=86400 run "$ENVBUILD" -C "$P" build --cache-dir "$CACHE"
[ "$(created_of)" = "1970-01-02T00:00:00Z" ] && ok "outside git: SOURCE_DATE_EPOCH" || not_ok "created is $(created_of)"
finish
