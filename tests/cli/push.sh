#!/bin/sh
# push.sh - `envbuild push` end to end against the real distribution
# registry (registry/start), checked with skopeo and the fault proxy's
# request log.  The project is a copy of examples/churn in a temporary git
# repository (push refuses uncommitted inputs): base = the local Debian
# layout made by scripts/make-base, index = Debian's wheel directory,
# repository = the test registry, plus one files entry `shared/` (fresh
# random bytes) in BOTH targets, so that the targets share two layers (the
# base's and that one) and no registry has seen it before this run.
#
# Sections: plain push (stdout, skopeo inspect/copy, the lock's `pushed`
# with the git revision); through the fault proxy, every distinct blob sent
# once and a second push sending none; a base pulled from the same registry
# whose layer must be mounted, not uploaded; faults (two 500s on a blob PUT,
# 429 + Retry-After on the upload POST, a connection cut mid-blob, a
# persistent 500 on the manifest PUT that must leave no tag); a dirty tree
# (an edited requirements file, then an edited src/ file: refused naming
# the file, then pushed with --allow-dirty); --format=json; TLS + basic auth
# (CA file, DOCKER_CONFIG, no password anywhere, wrong password, no CA).
# About 50 s.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"

plan 51
for t in docker-registry skopeo git openssl curl python3; do
	command -v "$t" >/dev/null 2>&1 || { not_ok "$t is not installed (scripts/install-deps)"; finish; }
done
need_base
ok "tools and the Debian test base are there"

# Retries wait 100 ms, not seconds; never the user's credentials or mirrors.
ENVBUILD_HTTP_BACKOFF_MS=100
export ENVBUILD_HTTP_BACKOFF_MS
unset REGISTRY_AUTH_FILE ENVBUILD_MIRRORS ENVBUILD_CERTS_D
DOCKER_CONFIG=$TMP/no-docker-config
export DOCKER_CONFIG
mkdir -p "$DOCKER_CONFIG"
GIT_AUTHOR_NAME=envbuild-test GIT_AUTHOR_EMAIL=test@envbuild.invalid
GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_CONFIG_NOSYSTEM
CACHE=$TMP/cache

commit() { # DIR MESSAGE
	git -C "$1" add -A && git -C "$1" commit -q -m "$2" >/dev/null
}
# mkproject DIR REPOSITORY: the churn example on the test base, committed
mkproject() {
	mkdir -p "$1"
	cp -r "$top_srcdir/tests/fixtures/churn-python/." "$1/"
	mkdir -p "$1/shared"
	head -c 1500000 /dev/urandom >"$1/shared/weights.bin"
	sed -i -e "s|base: python:3.11-slim-bookworm|base: oci:$BASE:bookworm-python3|" \
		-e "s|^index: .*|index: /usr/share/python-wheels|" \
		-e "s|^repository: .*|repository: $2|" \
		-e 's|^\(      - { src: src/, dest: /app/ }\)$|\1\n      - { src: shared/, dest: /shared/ }|' \
		-e 's|^\(      - { src: model/, dest: /models/ }\)$|\1\n      - { src: shared/, dest: /shared/ }|' \
		"$1/envbuild.yaml"
	git init -q "$1" && commit "$1" "churn example"
}
eb() { "$ENVBUILD" "$@"; }
digest_of() { sed -n 's/^ *"Digest": "\(sha256:[0-9a-f]*\)".*/\1/p' | head -n 1; }
remote_digest() { # REF [skopeo options]: the digest skopeo sees, or nothing
	_r=$1
	shift
	skopeo inspect "$@" "docker://$_r" 2>/dev/null | digest_of
}
printed() { # TARGET: the digest `envbuild push` printed for it (text output)
	sed -n "s/^$1 \{1,\}[^ ]*@\(sha256:[0-9a-f]\{64\}\)\$/\1/p" "$TMP/out"
}
clear_log() { : >"$FAULT_PROXY_LOG"; }
# distinct blobs of the pushed images (configs and layers), from the lock
lock_blobs() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = set()
for t in d["targets"].values():
    for p in t["image"]["platforms"].values():
        s.add(p["config"])
        s.update(l["digest"] for l in p["layers"])
print("\n".join(sorted(s)))' "$1/envbuild.lock"
}
# blobs both targets contain
shared_blobs() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sets = [set(l["digest"] for p in t["image"]["platforms"].values() for l in p["layers"])
        for t in d["targets"].values()]
print("\n".join(sorted(set.intersection(*sets))))' "$1/envbuild.lock"
}

# == plain HTTP ==============================================================
registry_start plain || { not_ok "registry/start plain"; finish; }
P=$REGISTRY
REPO=$P/ml/churn
mkproject "$TMP/p" "$REPO"
run eb -C "$TMP/p" push --cache-dir "$CACHE"
expect_status 0 "plain: push training and inference"
grep -Eq "^training +$REPO@sha256:[0-9a-f]{64}\$" "$TMP/out" && ok "plain: prints 'training  $REPO@sha256:...'" ||
	{ not_ok "plain: no training line"; diag <"$TMP/out"; }
grep -Eq "^inference +$REPO@sha256:[0-9a-f]{64}\$" "$TMP/out" && ok "plain: prints 'inference  $REPO@sha256:...'" ||
	{ not_ok "plain: no inference line"; diag <"$TMP/out"; }
TRAIN=$(printed training)
INFER=$(printed inference)
for t in training inference; do
	want=$TRAIN
	[ $t = inference ] && want=$INFER
	got=$(remote_digest "$REPO:$t" --tls-verify=false)
	[ -n "$want" ] && [ "$got" = "$want" ] && ok "plain: skopeo inspect $REPO:$t gives the printed digest" ||
		not_ok "plain: skopeo inspect $REPO:$t: '$got', printed '$want'"
done
for t in training inference; do
	want=$TRAIN
	[ $t = inference ] && want=$INFER
	rm -rf "$TMP/back"
	if skopeo copy -q --src-tls-verify=false "docker://$REPO:$t" "oci:$TMP/back:$t" >"$TMP/sk.out" 2>&1 &&
		[ "$(skopeo inspect "oci:$TMP/back:$t" | digest_of)" = "$want" ]; then
		ok "plain: skopeo copy docker://$REPO:$t oci:DIR keeps the manifest digest (every blob verified)"
	else
		not_ok "plain: skopeo copy of $t"
		diag <"$TMP/sk.out"
	fi
done
HEAD=$(git -C "$TMP/p" rev-parse HEAD)
if python3 - "$TMP/p/envbuild.lock" "$REPO" "$TRAIN" "$INFER" "$HEAD" <<'PY'; then
import json, sys
lock, repo, train, infer, head = sys.argv[1:]
d = json.load(open(lock))
for t, dg in (("training", train), ("inference", infer)):
    img = d["targets"][t]["image"]
    assert img["digest"] == dg, (t, img["digest"], dg)
    want = {"ref": "%s:%s" % (repo, t), "digest": dg, "revision": head}
    assert want in img["pushed"], (t, img["pushed"], want)
PY
	ok "plain: envbuild.lock records both pushes with ref, digest and revision = HEAD"
else
	not_ok "plain: the lock's pushed entries are wrong"
	diag <"$TMP/p/envbuild.lock"
fi
BLOBS=$(lock_blobs "$TMP/p")
NBLOBS=$(printf '%s\n' "$BLOBS" | wc -l)
SHARED=$(shared_blobs "$TMP/p")
BASEL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"]["training"]["image"]["platforms"]["linux/amd64"]["layers"][0]["digest"])' "$TMP/p/envbuild.lock")

# == through the fault proxy: dedup ============================================
# (--no-attest here and in the fault sections: these count the image's own
# requests; SBOMs, provenance and signatures are tests/cli/trust.sh's)
fault_proxy_start || { not_ok "fault proxy"; finish; }
FP=$FAULT_PROXY
clear_log
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$FP/dedup/churn" --no-attest
expect_status 0 "proxy: push to an empty repository through the proxy"
bad=""
for b in $BLOBS; do
	[ "$(fault_proxy_count PUT "digest=$b" 201)" -eq 1 ] || bad="$bad $b:$(fault_proxy_count PUT "digest=$b")"
done
nput=$(fault_proxy_count PUT '/blobs/uploads/')
npost=$(fault_proxy_count POST '/blobs/uploads/')
[ -z "$bad" ] && [ "$nput" -eq "$NBLOBS" ] && [ "$npost" -eq "$NBLOBS" ] &&
	ok "proxy: each of the $NBLOBS distinct blobs uploaded exactly once ($npost POST, $nput PUT)" ||
	{ not_ok "proxy: blob uploads: $npost POST, $nput PUT for $NBLOBS blobs; wrong:$bad"; diag <"$FAULT_PROXY_LOG"; }
bad=""
for b in $SHARED; do
	[ "$(fault_proxy_count PUT "digest=$b")" -eq 1 ] || bad="$bad $b"
done
[ "$(printf '%s\n' "$SHARED" | grep -c .)" -eq 2 ] && [ -z "$bad" ] &&
	ok "proxy: the 2 layers both targets share (base, shared/) went up once, not once per target" ||
	not_ok "proxy: shared layers: '$SHARED' uploaded more than once:$bad"
clear_log
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$FP/dedup/churn" --no-attest
expect_status 0 "proxy: second push of the same images"
other=$(awk '!($2 == "HEAD" && $3 ~ /\/blobs\/sha256:/) && !($2 == "PUT" && $3 ~ /\/manifests\//)' "$FAULT_PROXY_LOG" | wc -l)
[ "$(fault_proxy_count PUT '/blobs/')" -eq 0 ] && [ "$(fault_proxy_count POST '/blobs/')" -eq 0 ] &&
	[ "$other" -eq 0 ] && [ "$(fault_proxy_count HEAD '/blobs/' 200)" -eq "$NBLOBS" ] &&
	[ "$(fault_proxy_count PUT '/manifests/' 201)" -eq 4 ] &&
	ok "proxy: the second push sent no blob: $NBLOBS HEADs (200) and 4 manifest/tag PUTs only" ||
	{ not_ok "proxy: the second push sent more than HEADs and manifest PUTs"; diag <"$FAULT_PROXY_LOG"; }
expect_err_contains "0 blobs uploaded (0.0 MiB)" "proxy: the summary says 0 bytes sent"

# == a base pulled from the same registry: its layer is mounted ================
if skopeo copy -q --dest-tls-verify=false "oci:$BASE:bookworm-python3" \
	"docker://$P/library/python:3.11-slim-bookworm" >"$TMP/sk.out" 2>&1; then
	ok "base: skopeo pushed the Debian base as library/python:3.11-slim-bookworm"
else
	not_ok "base: skopeo copy of the base"
	diag <"$TMP/sk.out"
fi
mkdir -p "$TMP/q"
cp -r "$TMP/p/." "$TMP/q/"
rm -f "$TMP/q/envbuild.lock"
sed -i "s|base: oci:.*|base: $FP/library/python:3.11-slim-bookworm|" "$TMP/q/envbuild.yaml"
commit "$TMP/q" "base from the registry"
clear_log
# a fresh cache: nothing local but what the build itself fetches
run eb -C "$TMP/q" push --cache-dir "$TMP/cache-q" --repository "$FP/app/churn" --no-attest
expect_status 0 "base: push with base $FP/library/python:3.11-slim-bookworm to app/churn"
nmount=$(fault_proxy_count POST "mount=$BASEL&from=library/python" 201)
nbaseput=$(fault_proxy_count PUT "digest=$BASEL")
nbaseget=$(fault_proxy_count GET "/blobs/$BASEL")
if [ "$nmount" -ge 1 ]; then
	ok "base: the base layer was mounted (POST ?mount=$BASEL&from=library/python answered 201)"
else
	not_ok "base: the base layer was NOT mounted: $(fault_proxy_count POST 'mount=') POST with mount=, base layer GET $nbaseget time(s), PUT $nbaseput time(s)"
	grep -E "$BASEL|mount=" "$FAULT_PROXY_LOG" | cut -c1-160 | diag
	grep '^envbuild: .*blobs uploaded' "$TMP/err" | diag
fi
[ "$nbaseput" -eq 0 ] && ok "base: and not uploaded (no PUT of $BASEL)" ||
	not_ok "base: the base layer $BASEL was uploaded ($nbaseput PUT, after $nbaseget GET of it from library/python)"
QT=$(printed training)
[ -n "$QT" ] && [ "$(remote_digest "$P/app/churn:training" --tls-verify=false)" = "$QT" ] &&
	ok "base: skopeo sees the printed digest for app/churn:training" ||
	not_ok "base: app/churn:training digest differs"

# == faults ====================================================================
# fault_push RULES NAME [ENV...]: push through the proxy with these faults to
# fault/NAME (an empty repository, so every blob is uploaded)
fault_push() {
	_rules=$1 _name=$2
	shift 2
	fault_proxy_rules "$_rules"
	clear_log
	run env "$@" "$ENVBUILD" -C "$TMP/p" push --cache-dir "$CACHE" --repository "$FP/fault/$_name" --no-attest
}
digests_right() { # NAME
	if [ "$(printed training)" = "$TRAIN" ] && [ "$(printed inference)" = "$INFER" ] &&
		[ "$(remote_digest "$P/fault/$1:training" --tls-verify=false)" = "$TRAIN" ] &&
		[ "$(remote_digest "$P/fault/$1:inference" --tls-verify=false)" = "$INFER" ]; then
		ok "faults: $1: printed and registry digests are the plain push's"
	else
		not_ok "faults: $1: digests differ"
		diag <"$TMP/out"
	fi
}
fault_push '[{"method": "PUT", "path": "/blobs/uploads/", "status": 500, "times": 2}]' f500
expect_status 0 "faults: two 500s on blob PUTs, then OK"
digests_right f500
[ "$(fault_proxy_count PUT '/blobs/uploads/' 500)" -eq 2 ] &&
	[ "$(fault_proxy_count PUT '/blobs/uploads/' 201)" -eq "$NBLOBS" ] &&
	ok "faults: f500: both 500s met, then all $NBLOBS blobs committed" ||
	{ not_ok "faults: f500: 500s met: $(fault_proxy_count PUT '/blobs/uploads/' 500)"; diag <"$FAULT_PROXY_LOG"; }

start=$(date +%s)
fault_push '[{"method": "POST", "path": "/blobs/uploads/", "status": 429, "retry_after": 2, "times": 1}]' f429
end=$(date +%s)
expect_status 0 "faults: 429 with Retry-After: 2 on the upload POST"
digests_right f429
[ $((end - start)) -ge 2 ] && [ "$(fault_proxy_count POST '/blobs/uploads/' 429)" -eq 1 ] &&
	ok "faults: f429: met once and Retry-After honoured ($((end - start)) s)" ||
	{ not_ok "faults: f429: $((end - start)) s, $(fault_proxy_count POST '/blobs/uploads/' 429) 429s"; diag <"$FAULT_PROXY_LOG"; }

# the base layer (~65 MB) cut after 5 MB
fault_push "[{\"method\": \"PUT\", \"path\": \"digest=$BASEL\", \"cut_request_after\": 5000000, \"times\": 1}]" fcut
expect_status 0 "faults: a connection cut 5 MB into the base layer's upload"
digests_right fcut
rm -rf "$TMP/back"
[ "$(fault_proxy_count PUT "digest=$BASEL" 000)" -eq 1 ] && [ "$(fault_proxy_count PUT "digest=$BASEL" 201)" -eq 1 ] &&
	skopeo copy -q --src-tls-verify=false "docker://$P/fault/fcut:training" "oci:$TMP/back:t" >"$TMP/sk.out" 2>&1 &&
	[ "$(skopeo inspect "oci:$TMP/back:t" | digest_of)" = "$TRAIN" ] &&
	ok "faults: fcut: the cut upload was sent again whole; skopeo copies the image back, blobs verified" ||
	{ not_ok "faults: fcut: cut not met or image broken"; grep "$BASEL" "$FAULT_PROXY_LOG" | cut -c1-200 | diag; diag <"$TMP/sk.out"; }

fault_push '[{"method": "PUT", "path": "/manifests/", "status": 500}]' fman ENVBUILD_HTTP_ATTEMPTS=2
expect_status 1 "faults: a persistent 500 on the manifest PUT fails the push"
expect_err_contains "registry answered 500" "faults: fman: with the registry's answer"
[ -z "$(remote_digest "$P/fault/fman:training" --tls-verify=false)" ] &&
	[ -z "$(remote_digest "$P/fault/fman:inference" --tls-verify=false)" ] &&
	ok "faults: fman: no tag was written (skopeo inspect of both tags fails)" || not_ok "faults: fman: a tag exists"
grep -q "fault/fman" "$TMP/p/envbuild.lock" && not_ok "faults: fman: the lock records the failed push" ||
	ok "faults: fman: the lock does not record the failed push"
fault_proxy_rules '[]'

# == a dirty tree ==============================================================
cp "$TMP/p/requirements-infer.txt" "$TMP/req.orig"
echo "# a local edit" >>"$TMP/p/requirements-infer.txt"
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$P/dirty/churn"
expect_status 1 "dirty: an uncommitted requirements-infer.txt refuses the push"
expect_err_contains "requirements-infer.txt" "dirty: naming the file"
[ -z "$(remote_digest "$P/dirty/churn:training" --tls-verify=false)" ] && ok "dirty: nothing was pushed" ||
	not_ok "dirty: a tag was written"
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$P/dirty/churn" --allow-dirty
expect_status 0 "dirty: --allow-dirty pushes"
d=$(printed inference)
[ -n "$d" ] && [ "$(remote_digest "$P/dirty/churn:inference" --tls-verify=false)" = "$d" ] &&
	ok "dirty: --allow-dirty: the registry has the printed digest" ||
	not_ok "dirty: --allow-dirty: printed '$d', registry has '$(remote_digest "$P/dirty/churn:inference" --tls-verify=false)'"
cp "$TMP/req.orig" "$TMP/p/requirements-infer.txt"
# the same with a files input (not a lock input, so the lock stays fresh)
cp "$TMP/p/src/churn/serve.py" "$TMP/serve.orig"
echo "# a local edit" >>"$TMP/p/src/churn/serve.py"
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$P/dirty/src"
expect_status 1 "dirty: an uncommitted src/churn/serve.py refuses the push"
expect_err_contains "src/churn/serve.py" "dirty: naming the file"
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$P/dirty/src" --allow-dirty
expect_status 0 "dirty: --allow-dirty pushes the edited src/"
d=$(printed inference)
[ -n "$d" ] && [ "$d" != "$INFER" ] && [ "$(remote_digest "$P/dirty/src:inference" --tls-verify=false)" = "$d" ] &&
	ok "dirty: --allow-dirty: the registry has the printed (new) digest" || not_ok "dirty: --allow-dirty (src) digest wrong: '$d'"
cp "$TMP/serve.orig" "$TMP/p/src/churn/serve.py"

# == --format=json =============================================================
run eb -C "$TMP/p" push --cache-dir "$CACHE" --repository "$P/json/churn" --format=json
expect_status 0 "json: push --format=json"
if python3 - "$TMP/out" "$P/json/churn" "$TRAIN" "$INFER" >"$TMP/py.out" 2>&1 <<'PY'; then
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "no final newline"
evs = []
for n, l in enumerate(lines[:-1], 1):
    try:
        o = json.loads(l)
    except ValueError as e:
        raise SystemExit("line %d does not parse: %r (%s)" % (n, l, e))
    assert isinstance(o, dict) and "event" in o, "line %d: %r" % (n, l)
    evs.append(o)
kinds = [e["event"] for e in evs]
assert {"blob_start", "blob_done", "manifest", "tag"} <= set(kinds), kinds
pushed = [e for e in evs if e["event"] == "pushed"]
assert kinds[-len(pushed):] == ["pushed"] * len(pushed), kinds
got = {e["target"]: (e["reference"], e["digest"]) for e in pushed}
assert len(pushed) == 2 and got == {"training": (sys.argv[2], sys.argv[3]),
                                    "inference": (sys.argv[2], sys.argv[4])}, got
print("%d lines" % len(evs))
PY
	ok "json: every stdout line is a JSON object; blob/manifest/tag events; a final 'pushed' per target with its digest ($(cat "$TMP/py.out"))"
else
	not_ok "json: $(cat "$TMP/py.out")"
	diag <"$TMP/out"
fi

# == TLS + basic auth ===========================================================
registry_start basic || { not_ok "registry/start basic"; finish; }
S=$REGISTRY
: >"$TMP/tls-all"
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$ENVBUILD" -C "$TMP/p" push --cache-dir "$CACHE" \
	--ca-file "$REGISTRY_CA" --repository "$S/sec/churn"
cat "$TMP/out" "$TMP/err" >>"$TMP/tls-all"
expect_status 0 "tls+basic: push with --ca-file and DOCKER_CONFIG"
[ "$(remote_digest "$S/sec/churn:training" --cert-dir "$REGISTRY_CERT_DIR" --creds "$REGISTRY_USER:$REGISTRY_PASSWORD")" = "$TRAIN" ] &&
	[ "$(remote_digest "$S/sec/churn:inference" --cert-dir "$REGISTRY_CERT_DIR" --creds "$REGISTRY_USER:$REGISTRY_PASSWORD")" = "$INFER" ] &&
	ok "tls+basic: skopeo (CA + credentials) sees both digests" || not_ok "tls+basic: digests differ"
mkdir -p "$TMP/wrongpw"
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$S" "$(printf '%s:wrong-%s' "$REGISTRY_USER" "$$" | base64)" \
	>"$TMP/wrongpw/config.json"
run env DOCKER_CONFIG="$TMP/wrongpw" "$ENVBUILD" -C "$TMP/p" push --cache-dir "$CACHE" \
	--ca-file "$REGISTRY_CA" --repository "$S/sec/wrong"
cat "$TMP/out" "$TMP/err" >>"$TMP/tls-all"
expect_status 1 "tls+basic: a wrong password fails the push"
grep -qF "$S" "$TMP/err" && grep -qi "credentials" "$TMP/err" &&
	ok "tls+basic: the message names $S and suggests credentials" || { not_ok "tls+basic: wrong-password message"; diag <"$TMP/err"; }
run env DOCKER_CONFIG="$REGISTRY_DOCKER_CONFIG" "$ENVBUILD" -C "$TMP/p" push --cache-dir "$CACHE" \
	--repository "$S/sec/noca"
cat "$TMP/out" "$TMP/err" >>"$TMP/tls-all"
[ "$STATUS" -ne 0 ] && ok "tls+basic: without the CA the push fails (exit $STATUS)" || not_ok "tls+basic: pushed without the CA"
grep -Eqi "TLS|certificate" "$TMP/err" && ok "tls+basic: with a TLS error" || { not_ok "tls+basic: no TLS error"; diag <"$TMP/err"; }
AUTH=$(printf '%s:%s' "$REGISTRY_USER" "$REGISTRY_PASSWORD" | base64)
cat "$TMP/p/envbuild.lock" >>"$TMP/tls-all"
grep -qF -e "$REGISTRY_PASSWORD" -e "$AUTH" "$TMP/tls-all" &&
	not_ok "tls+basic: the password (or its base64 auth) appears in output or envbuild.lock" ||
	ok "tls+basic: the password is in no stdout/stderr nor in envbuild.lock"
finish
