#!/bin/sh
# import.sh - `envbuild import`: a Dockerfile written here (accounts,
# dirs, COPY --chown/--chmod with a .dockerignore, ENV, LABEL, WORKDIR,
# USER, ENTRYPOINT, CMD, and a line that cannot be declared) is built by
# `buildah build` (vfs storage, chroot isolation, no network: only RUN
# lines that need none) and imported then built by envbuild: the two
# images have the same runtime config, the same new accounts lines and
# the same copied tree (owners, modes, types); the line left is named
# with its position and the exit status says so; nothing is overwritten
# without --force; --target adds a target to an existing spec and keeps
# its comments.  Needs root (buildah, umoci unpack).
. "$(dirname "$0")/lib.sh"

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (buildah --isolation chroot, umoci unpack)"
command -v buildah >/dev/null || skip "buildah not installed"
command -v umoci >/dev/null || skip "umoci not installed"
need_base
plan 21

P=$TMP/ctx
mkdir -p "$P/src/pkg" "$P/bin"
echo 'print("hi")' >"$P/src/main.py"
echo 'x = 1' >"$P/src/pkg/mod.py"
echo 'cache' >"$P/src/pkg/mod.pyc"
echo 'secret' >"$P/src/.env"
printf '#!/bin/sh\nexec python3 /srv/app/main.py "$@"\n' >"$P/bin/run.sh"
printf 'src/**/*.pyc\nsrc/.env\n' >"$P/.dockerignore"
cat >"$P/Dockerfile" <<DOCKERFILE
# a typical service image, minus what needs the network
ARG BASE=oci:$BASE:bookworm-python3
FROM \${BASE} AS service
ENV APP_HOME=/srv/app \\
    PYTHONUNBUFFERED=1
LABEL org.example.team="ml" version="1.0"
RUN groupadd -g 1000 app && useradd -m -u 1000 -g app -s /bin/sh app
RUN mkdir -p /models /var/cache/hf && chown app:0 /models && chmod 2775 /models \\
 && chmod 1777 /var/cache/hf
WORKDIR \$APP_HOME
COPY --chown=app:app src/ ./
COPY --chmod=0755 bin/run.sh /usr/local/bin/run.sh
RUN python3 -c "print('build step')"
USER app
ENTRYPOINT ["python3", "main.py"]
CMD ["--port", "8000"]
EXPOSE 8000 9090/udp
STOPSIGNAL SIGINT
DOCKERFILE

# the peer: buildah's build of the same Dockerfile
BR=$TMP/buildah
if buildah --root "$BR/root" --runroot "$BR/run" --storage-driver vfs build --isolation chroot \
	-q -t localhost/import-test:latest -f "$P/Dockerfile" "$P" >"$TMP/buildah.log" 2>&1 &&
	buildah --root "$BR/root" --runroot "$BR/run" --storage-driver vfs push -q \
		localhost/import-test:latest "oci:$TMP/peer:peer" >>"$TMP/buildah.log" 2>&1; then
	ok "buildah builds the Dockerfile"
else
	not_ok "buildah build"; tail -n 20 "$TMP/buildah.log" | diag
fi

run "$ENVBUILD" import "$P/Dockerfile"
expect_status 1 "import exits 1: a line was left"
expect_out_contains "$P/Dockerfile:13:5: not converted: RUN python3 -c \"print('build step')\"" \
	"the RUN left is named at its line and column"
[ "$(grep -c ': not converted: ' "$TMP/out")" = 1 ] && ok "nothing else is left" ||
	{ not_ok "more left"; diag <"$TMP/out"; }
cp "$P/envbuild.yaml" "$TMP/first.yaml"
run "$ENVBUILD" import "$P/Dockerfile"
[ "$STATUS" = 1 ] && grep -q "exists; not overwritten" "$TMP/err" && cmp -s "$P/envbuild.yaml" "$TMP/first.yaml" &&
	ok "an existing spec is not overwritten without --force" || { not_ok "overwrite: $STATUS"; diag <"$TMP/err"; }
run "$ENVBUILD" check --spec "$P/envbuild.yaml"
expect_status 0 "the imported spec passes envbuild check"

run "$ENVBUILD" -C "$P" build --cache-dir "$TMP/cache" --output "$TMP/img"
expect_status 0 "envbuild builds the imported spec"

cd "$TMP" || exit 1
umoci unpack --image "$TMP/peer:peer" "$TMP/pb" >"$TMP/u.log" 2>&1 || diag <"$TMP/u.log"
umoci unpack --image "$TMP/img/service:service" "$TMP/eb" >"$TMP/u.log" 2>&1 || diag <"$TMP/u.log"
umoci unpack --image "$BASE:bookworm-python3" "$TMP/base" >"$TMP/u.log" 2>&1 || diag <"$TMP/u.log"
# the runtime config: user, cwd, args, env, labels
rt() { python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/config.json"))
p = c["process"]
print(p["user"]["uid"], p["user"]["gid"], p["cwd"], p["args"], sorted(p["env"]))
print(sorted((k, v) for k, v in c.get("annotations", {}).items()
             if k in ("org.example.team", "version")))
PY
}
rt "$TMP/pb" >"$TMP/rt.peer" 2>&1; rt "$TMP/eb" >"$TMP/rt.eb" 2>&1
cmp -s "$TMP/rt.peer" "$TMP/rt.eb" && grep -q "ml" "$TMP/rt.eb" &&
	ok "same runtime config (user, cwd, args, env, labels)" ||
	{ not_ok "runtime configs differ"; diff "$TMP/rt.peer" "$TMP/rt.eb" | diag; }
# the image configs: ports and stop signal (not in the runtime config)
ic() { python3 - "$1" "$2" <<'PY'
import json, sys
b = sys.argv[1]
h = lambda d: b + "/blobs/sha256/" + d.split(":")[1]
idx = json.load(open(b + "/index.json"))
m = [x for x in idx["manifests"] if x.get("annotations", {}).get("org.opencontainers.image.ref.name") == sys.argv[2]][0]
c = json.load(open(h(json.load(open(h(m["digest"])))["config"]["digest"])))["config"]
print(sorted(c.get("ExposedPorts", {})), c.get("StopSignal"), c.get("User"), c.get("WorkingDir"), c.get("Entrypoint"), c.get("Cmd"))
PY
}
ic "$TMP/peer" peer >"$TMP/ic.peer" 2>&1; ic "$TMP/img/service" service >"$TMP/ic.eb" 2>&1
cmp -s "$TMP/ic.peer" "$TMP/ic.eb" && grep -q "9090/udp.*SIGINT" "$TMP/ic.eb" &&
	ok "same image config: $(cat "$TMP/ic.eb")" || { not_ok "image configs differ"; { cat "$TMP/ic.peer"; cat "$TMP/ic.eb"; } | diag; }
# the accounts lines the builds added (shadow's last-change day aside)
newlines() { tail -c +$(($(stat -c %s "$TMP/base/rootfs/etc/$2") + 1)) "$1/rootfs/etc/$2" | sed 's/^\([^:]*:[^:]*:\)[0-9]*:/\1DAY:/'; }
same=1
for f in passwd group shadow gshadow; do
	[ "$(newlines "$TMP/pb" $f)" = "$(newlines "$TMP/eb" $f)" ] ||
		{ same=0; { echo "$f:"; newlines "$TMP/pb" $f; echo "vs"; newlines "$TMP/eb" $f; } >>"$TMP/acct.diff"; }
done
[ $same = 1 ] && ok "same new lines in passwd, group, shadow, gshadow" || { not_ok "accounts lines differ"; diag <"$TMP/acct.diff"; }
# the copied tree and the dirs: type, owner, mode (the home's own entry
# only: useradd copies /etc/skel into it, envbuild does not; and not
# /srv/app itself: WORKDIR made it root's before COPY --chown, envbuild's
# files entry gives dest its chown)
tree() { (cd "$1/rootfs" && { find srv -mindepth 2 -print; echo usr/local/bin/run.sh; echo models; echo var/cache/hf; echo home/app; } |
	sort | while read -r p; do stat -c '%F %u:%g %a %n' "$p"; done); }
tree "$TMP/pb" >"$TMP/tree.peer" 2>&1; tree "$TMP/eb" >"$TMP/tree.eb" 2>&1
cmp -s "$TMP/tree.peer" "$TMP/tree.eb" && grep -q 'srv/app/pkg/mod.py$' "$TMP/tree.eb" && ! grep -q 'mod.pyc\|\.env' "$TMP/tree.eb" &&
	ok "same copied tree (types, owners, modes; .dockerignore honoured): $(wc -l <"$TMP/tree.eb") paths" ||
	{ not_ok "trees differ"; diff "$TMP/tree.peer" "$TMP/tree.eb" | diag; }

# RUN apt-get install: apt_sources from the base's own /etc/apt (a
# one-line sources.list with [signed-by=], a deb822 .sources, a disabled
# stanza, a deb-src), the keyrings copied into keys/
A=$TMP/aptctx
mkdir -p "$A" "$TMP/aptfs/sources.list.d" "$TMP/aptfs/keyrings"
cp -a "$BASE" "$A/base"
cp "$TMP/base/rootfs/usr/share/keyrings/debian-archive-keyring.gpg" "$TMP/aptfs/keyrings/team.gpg"
printf 'deb [arch=amd64 signed-by=/usr/share/keyrings/team.gpg] http://127.0.0.1:9/team bookworm main contrib\ndeb-src http://127.0.0.1:9/src bookworm main\n' \
	>"$TMP/aptfs/sources.list"
printf 'Types: deb\nURIs: http://127.0.0.1:9/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://127.0.0.1:9/off\nSuites: bookworm\nComponents: main\nEnabled: no\n' \
	>"$TMP/aptfs/sources.list.d/debian.sources"
# one layer of /etc/apt and a keyring on top of the base (umoci insert's
# layers end without tar's end blocks)
python3 - "$A/base" "$TMP/aptfs" <<'PY' >"$TMP/ins.log" 2>&1 || { not_ok "adding the apt layer"; diag <"$TMP/ins.log"; }
import gzip, hashlib, io, json, os, sys, tarfile
d, src = sys.argv[1], sys.argv[2]
blob = lambda h: os.path.join(d, "blobs", "sha256", h.split(":")[1])
def put(data):
    h = "sha256:" + hashlib.sha256(data).hexdigest()
    open(blob(h), "wb").write(data)
    return h
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    for a, b in (("sources.list", "etc/apt/sources.list"),
                 ("sources.list.d/debian.sources", "etc/apt/sources.list.d/debian.sources"),
                 ("keyrings/team.gpg", "usr/share/keyrings/team.gpg")):
        t.add(os.path.join(src, a), arcname=b)
raw = raw.getvalue()
gz = gzip.compress(raw, mtime=0)
idx = json.load(open(os.path.join(d, "index.json")))
m = json.load(open(blob(idx["manifests"][0]["digest"])))
c = json.load(open(blob(m["config"]["digest"])))
c["rootfs"]["diff_ids"].append("sha256:" + hashlib.sha256(raw).hexdigest())
c.setdefault("history", []).append({"created_by": "apt sources"})
cb = json.dumps(c).encode()
m["config"] = {"mediaType": m["config"]["mediaType"], "digest": put(cb), "size": len(cb)}
m["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": put(gz), "size": len(gz)})
mb = json.dumps(m).encode()
idx["manifests"][0].update(digest=put(mb), size=len(mb))
json.dump(idx, open(os.path.join(d, "index.json"), "w"))
PY
printf 'FROM oci:base:bookworm-python3\nRUN apt-get update && apt-get install -y --no-install-recommends tzdata=2024a-0+deb12u1 \\\n && rm -rf /var/lib/apt/lists/*\n' >"$A/Dockerfile"
run "$ENVBUILD" import "$A/Dockerfile"
expect_status 0 "import of RUN apt-get install: nothing left"
want='      - { url: "http://127.0.0.1:9/team", suite: "bookworm", components: ["main", "contrib"], signed_by: "keys/team.gpg" }
      - { url: "http://127.0.0.1:9/debian", suite: "bookworm", components: ["main"], signed_by: "keys/debian-archive-keyring.gpg" }
      - { url: "http://127.0.0.1:9/debian", suite: "bookworm-updates", components: ["main"], signed_by: "keys/debian-archive-keyring.gpg" }'
[ "$(sed -n '/^    apt_sources:/,$p' "$A/envbuild.yaml" | sed 1d)" = "$want" ] &&
	cmp -s "$A/keys/team.gpg" "$TMP/aptfs/keyrings/team.gpg" &&
	cmp -s "$A/keys/debian-archive-keyring.gpg" "$TMP/base/rootfs/usr/share/keyrings/debian-archive-keyring.gpg" &&
	ok "apt_sources are the base's (one-line and deb822; deb-src and Enabled: no skipped), its keyrings in keys/" ||
	{ not_ok "apt_sources"; diag <"$A/envbuild.yaml"; ls -l "$A/keys" 2>&1 | diag; }
run "$ENVBUILD" check --spec "$A/envbuild.yaml"
[ "$STATUS" = 0 ] && ! grep -q EB232 "$TMP/out" "$TMP/err" && ok "the imported apt spec checks (no EB232)" ||
	{ not_ok "check: $STATUS"; diag <"$TMP/err"; diag <"$TMP/out"; }
echo changed >"$A/keys/team.gpg"
run "$ENVBUILD" import --force "$A/Dockerfile"
st=$STATUS
rm "$A/envbuild.yaml"
echo changed >"$A/keys/team.gpg"
run "$ENVBUILD" import "$A/Dockerfile"
[ "$st" = 0 ] && [ "$STATUS" = 1 ] && grep -q "keys/team.gpg' exists; not overwritten" "$TMP/err" &&
	[ "$(cat "$A/keys/team.gpg")" = changed ] && [ ! -e "$A/envbuild.yaml" ] &&
	ok "a keyring of the project is not overwritten without --force" ||
	{ not_ok "keyring overwrite: $st $STATUS"; diag <"$TMP/err"; }

# COPY --from a stage that only installs packages: they go to this
# target; a stage that does anything else stays reported
F=$TMP/fromctx
mkdir -p "$F"
echo 'six==1.16.0' >"$F/requirements.txt"
printf 'FROM scratch AS deps\nWORKDIR /w\nCOPY requirements.txt .\nRUN pip install --no-cache-dir --prefix=/install -r requirements.txt && pip install attrs==23.1.0\nFROM scratch AS tool\nRUN pip install x==1 && python3 -c 1\nFROM scratch\nCOPY --from=deps /install /usr/local\nCOPY --from=tool /x /x\n' \
	>"$F/Dockerfile"
run "$ENVBUILD" import "$F/Dockerfile"
[ "$STATUS" = 1 ] && [ "$(grep -c ': not converted: ' "$TMP/out")" = 1 ] &&
	grep -q "Dockerfile:9:6: not converted: COPY --from=tool" "$TMP/out" &&
	ok "COPY --from a stage that runs something else is reported; the packages-only one is not" ||
	{ not_ok "COPY --from: $STATUS"; diag <"$TMP/out"; }
[ "$(sed -n '/^  app:/,$p' "$F/envbuild.yaml")" = '  app:
    base: "scratch"
    requirements:
      - "requirements.txt"
    packages:
      - "attrs==23.1.0"' ] && ok "the packages of the COPY --from stage are the target's" ||
	{ not_ok "COPY --from packages"; diag <"$F/envbuild.yaml"; }

# the pinned requirements of an imported spec are installed: wheels on a
# loopback index, import --index URL, build, the dist-info in the image
W=$TMP/wheels
python3 "$top_srcdir/tests/helpers/make-wheels.py" "$W" >"$TMP/mw.log" 2>&1 &&
	python3 "$top_srcdir/tests/helpers/make-index.py" build "$TMP/simple" "$W" >>"$TMP/mw.log" 2>&1 || diag <"$TMP/mw.log"
python3 "$top_srcdir/tests/helpers/make-index.py" serve "$TMP/simple" --max-seconds 600 --log "$TMP/index.log" \
	>"$TMP/index.port" 2>"$TMP/index.err" &
SRV=$!
trap 'kill "$SRV" 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ ! -s "$TMP/index.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
INDEX=http://127.0.0.1:$(cat "$TMP/index.port")/simple/
R=$TMP/reqctx
mkdir -p "$R"
echo "tinydep==1.2.0 --hash=sha256:$(sha256sum "$W/tinydep-1.2.0-py3-none-any.whl" | cut -d' ' -f1)" >"$R/requirements.txt"
printf 'FROM oci:%s:bookworm-python3\nCOPY requirements.txt /tmp/requirements.txt\nRUN pip install --no-cache-dir -r /tmp/requirements.txt\n' \
	"$BASE" >"$R/Dockerfile"
run "$ENVBUILD" import --index "$INDEX" "$R/Dockerfile"
[ "$STATUS" = 0 ] && grep -q "^index: \"$INDEX\"\|^index: $INDEX" "$R/envbuild.yaml" &&
	grep -q '"requirements.txt"' "$R/envbuild.yaml" && ok "import --index: the index and the requirements file in the spec" ||
	{ not_ok "import --index: $STATUS"; diag <"$TMP/out"; diag <"$R/envbuild.yaml"; }
run "$ENVBUILD" -C "$R" build --cache-dir "$TMP/cache3" --output "$TMP/img3"
expect_status 0 "envbuild builds the imported spec from the loopback index"
unpack_rootfs "$TMP/img3/app:app" "$TMP/r3" >"$TMP/u.log" 2>&1 || diag <"$TMP/u.log"
d=$(find "$TMP/r3/rootfs" -type d -name 'tinydep-1.2.0.dist-info' 2>/dev/null | head -n 1)
[ -n "$d" ] && [ -f "$d/RECORD" ] && grep -q '"path": "/simple/tinydep/"\|tinydep' "$TMP/index.log" &&
	ok "the pinned requirement is installed: ${d#"$TMP"/r3/rootfs}" ||
	{ not_ok "no tinydep dist-info in the image"; find "$TMP/r3/rootfs" -name '*.dist-info' | diag; }

# --target adds a target to an existing spec, its comments kept
rm -f "$P/envbuild.lock" # the build's: of the spec replaced here
cat >"$P/envbuild.yaml" <<'YAML'
# the team's spec: keep this comment
version: 1
name: ctx
targets:
  # the old target
  old:
    base: scratch
YAML
run "$ENVBUILD" import --target svc2 --allow-partial "$P/Dockerfile"
st=$STATUS
run "$ENVBUILD" check --spec "$P/envbuild.yaml"
[ "$st" = 0 ] && [ "$STATUS" = 0 ] && grep -q "^# the team's spec: keep this comment" "$P/envbuild.yaml" &&
	grep -q '^  # the old target' "$P/envbuild.yaml" && grep -q '^  svc2:' "$P/envbuild.yaml" &&
	ok "--target appends svc2, keeps the comments, and the spec still checks (--allow-partial: exit 0)" ||
	{ not_ok "--target: import $st, check $STATUS"; diag <"$TMP/out"; diag <"$TMP/err"; }
finish
