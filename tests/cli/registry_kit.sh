#!/bin/sh
# registry_kit.sh - the local registry kit (registry/start, registry/stop,
# tests/helpers/registry-env.sh, token-server.py, fault-proxy.py) proved
# with the real CNCF distribution registry and the real skopeo: push, read
# back and delete in the plain, basic (TLS + htpasswd) and token modes; wrong
# credentials, a missing CA and a pull-only user refused; OAuth2 token
# requests; and the fault proxy's 503, 429, cut-upload and delay faults as
# skopeo actually meets them, counted in the proxy's request log.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"

plan 50
# a missing tool is a failure, not a skip: scripts/install-deps installs them all
for t in docker-registry skopeo umoci openssl curl python3; do
	command -v "$t" >/dev/null 2>&1 || { not_ok "$t is not installed (scripts/install-deps)"; finish; }
done

# mkimage DIR: an OCI layout DIR:t with one layer of fresh random bytes, so
# that no registry (nor skopeo's blob info cache) has seen its blobs.
mkimage() {
	head -c 150000 /dev/urandom >"$TMP/rnd.bin"
	umoci init --layout "$1" >/dev/null 2>&1 &&
		umoci new --image "$1:t" >/dev/null 2>&1 &&
		umoci insert --image "$1:t" "$TMP/rnd.bin" /data/rnd.bin >/dev/null 2>&1
}
digest_of() { # skopeo inspect output on stdin
	sed -n 's/^ *"Digest": "\(sha256:[0-9a-f]*\)".*/\1/p' | head -n 1
}
now() { date +%s.%N; }
alive() { # PID: running (a zombie waiting for init to reap it is not)
	[ -r "/proc/$1/cmdline" ] && [ -n "$(tr -d '\0' <"/proc/$1/cmdline" 2>/dev/null)" ]
}
elapsed_ge() { # START SECONDS
	awk -v s="$1" -v e="$(now)" -v m="$2" 'BEGIN { exit !(e - s >= m) }'
}

mkimage "$TMP/img" || { not_ok "umoci: make a test image"; finish; }
IMG_DIGEST=$(skopeo inspect "oci:$TMP/img:t" | digest_of)
[ -n "$IMG_DIGEST" ] && ok "test image made with umoci ($IMG_DIGEST)" || not_ok "no digest for the test image"

# -- plain HTTP ---------------------------------------------------------------
run registry_start plain
expect_status 0 "registry/start plain"
# (run calls the function in this shell: the variables are set here)
PLAIN_STATE=$REGISTRY_STATE
case $REGISTRY in 127.0.0.1:[0-9]*) ok "REGISTRY=$REGISTRY is loopback with a port" ;;
*) not_ok "REGISTRY=$REGISTRY" ;; esac
code=$(curl -s -o /dev/null -w '%{http_code}' "$REGISTRY_URL/v2/")
[ "$code" = 200 ] && ok "plain: GET /v2/ answers 200" || not_ok "plain: GET /v2/ answered $code"

run skopeo copy -q --dest-tls-verify=false "oci:$TMP/img:t" "docker://$REGISTRY/kit/plain:t"
expect_status 0 "plain: skopeo copy oci -> registry"
run skopeo inspect --tls-verify=false "docker://$REGISTRY/kit/plain:t"
expect_status 0 "plain: skopeo inspect"
[ "$(printf '%s\n' "$OUT" | digest_of)" = "$IMG_DIGEST" ] &&
	ok "plain: the registry holds the same manifest digest" || not_ok "plain: digest differs"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$REGISTRY_URL/v2/kit/plain/manifests/$IMG_DIGEST")
[ "$code" = 202 ] && ok "plain: DELETE of the manifest is enabled (202)" || not_ok "plain: DELETE answered $code"
run skopeo inspect --tls-verify=false "docker://$REGISTRY/kit/plain:t"
[ "$STATUS" -ne 0 ] && ok "plain: the deleted image is gone" || not_ok "plain: still there after DELETE"

# -- TLS + htpasswd Basic -----------------------------------------------------
registry_start basic
[ -n "$REGISTRY_USER" ] && [ -n "$REGISTRY_PASSWORD" ] && [ -f "$REGISTRY_CA" ] &&
	[ -f "$REGISTRY_CERT_DIR/ca.crt" ] && [ "$REGISTRY_SCHEME" = https ] &&
	ok "registry/start basic: https, a CA, a user and a password" ||
	not_ok "registry/start basic: env incomplete"
curl -s -D "$TMP/h" -o /dev/null --cacert "$REGISTRY_CA" "$REGISTRY_URL/v2/"
grep -qi '^HTTP/[0-9.]* 401' "$TMP/h" && grep -qi '^www-authenticate: Basic realm="envbuild-registry"' "$TMP/h" &&
	ok "basic: /v2/ over verified TLS (IP:127.0.0.1) challenges with Basic" ||
	{ not_ok "basic: /v2/ challenge"; diag <"$TMP/h"; }
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$REGISTRY_CA" \
	-u "$REGISTRY_USER:$REGISTRY_PASSWORD" "https://localhost:$REGISTRY_PORT/v2/")
[ "$code" = 200 ] && ok "basic: DNS:localhost verifies too, and the user gets 200" ||
	not_ok "basic: https://localhost answered $code"
run skopeo copy -q --dest-cert-dir="$REGISTRY_CERT_DIR" \
	--dest-creds="$REGISTRY_USER:$REGISTRY_PASSWORD" "oci:$TMP/img:t" "docker://$REGISTRY/kit/basic:t"
expect_status 0 "basic: skopeo copy with --dest-cert-dir and --dest-creds"
run skopeo inspect --cert-dir="$REGISTRY_CERT_DIR" --creds="$REGISTRY_USER:$REGISTRY_PASSWORD" \
	"docker://$REGISTRY/kit/basic:t"
[ "$STATUS" -eq 0 ] && [ "$(printf '%s\n' "$OUT" | digest_of)" = "$IMG_DIGEST" ] &&
	ok "basic: skopeo inspect reads the same digest back" || { not_ok "basic: inspect"; diag <"$TMP/err"; }
run skopeo inspect --cert-dir="$REGISTRY_CERT_DIR" --creds="$REGISTRY_USER:wrong" \
	"docker://$REGISTRY/kit/basic:t"
[ "$STATUS" -ne 0 ] && grep -qi 'unauthorized\|authentication required\|invalid username' "$TMP/err" &&
	ok "basic: a wrong password is refused" || { not_ok "basic: wrong password (exit $STATUS)"; diag <"$TMP/err"; }
run skopeo inspect --cert-dir="$REGISTRY_CERT_DIR" "docker://$REGISTRY/kit/basic:t"
[ "$STATUS" -ne 0 ] && ok "basic: no credentials is refused" || not_ok "basic: anonymous read allowed"
run skopeo inspect --creds="$REGISTRY_USER:$REGISTRY_PASSWORD" "docker://$REGISTRY/kit/basic:t"
[ "$STATUS" -ne 0 ] && grep -q 'certificate\|x509' "$TMP/err" &&
	ok "basic: without the kit's CA the certificate is not trusted" ||
	{ not_ok "basic: TLS without CA (exit $STATUS)"; diag <"$TMP/err"; }
b64=$(printf '%s:%s' "$REGISTRY_USER" "$REGISTRY_PASSWORD" | base64 | tr -d '\n')
grep -q "\"$REGISTRY\": {\"auth\": \"$b64\"}" "$REGISTRY_AUTH_JSON" &&
	ok "basic: a docker config.json for the registry is written" || not_ok "basic: config.json"
registry_stop

# -- Bearer tokens ------------------------------------------------------------
registry_start token
curl -s -D "$TMP/h" -o /dev/null "$REGISTRY_URL/v2/"
grep -qi "^www-authenticate: Bearer realm=\"$TOKEN_URL\",service=\"$TOKEN_SERVICE\"" "$TMP/h" &&
	ok "token: /v2/ challenges with Bearer realm=$TOKEN_URL" || { not_ok "token: challenge"; diag <"$TMP/h"; }
run skopeo copy -q --dest-tls-verify=false --dest-creds="$REGISTRY_USER:$REGISTRY_PASSWORD" \
	"oci:$TMP/img:t" "docker://$REGISTRY/kit/token:t"
expect_status 0 "token: skopeo copy with a token from token-server.py"
grep -q "^GET /token?.*scope=repository:kit/token:pull,push.* 200 user=$REGISTRY_USER grant=repository:kit/token:pull,push" "$TOKEN_LOG" &&
	ok "token: the push got a pull,push token (token server log)" || { not_ok "token: no push grant logged"; diag <"$TOKEN_LOG"; }
run skopeo inspect --tls-verify=false --creds="$REGISTRY_RO_USER:$REGISTRY_RO_PASSWORD" \
	"docker://$REGISTRY/kit/token:t"
[ "$STATUS" -eq 0 ] && [ "$(printf '%s\n' "$OUT" | digest_of)" = "$IMG_DIGEST" ] &&
	ok "token: the pull-only user reads the image back" || { not_ok "token: read-only pull"; diag <"$TMP/err"; }
run skopeo copy -q --dest-tls-verify=false --dest-creds="$REGISTRY_RO_USER:$REGISTRY_RO_PASSWORD" \
	"oci:$TMP/img:t" "docker://$REGISTRY/kit/token:ro"
[ "$STATUS" -ne 0 ] && grep -qi 'denied\|unauthorized' "$TMP/err" &&
	ok "token: the pull-only user cannot push" || { not_ok "token: read-only push (exit $STATUS)"; diag <"$TMP/err"; }
grep -q "user=$REGISTRY_RO_USER grant=repository:kit/token:pull\$" "$TOKEN_LOG" &&
	ok "token: its push scope was cut down to pull" || { not_ok "token: ro grant"; diag <"$TOKEN_LOG"; }
n401=$(grep -c ' 401 ' "$TOKEN_LOG")
run skopeo inspect --tls-verify=false --creds="$REGISTRY_USER:wrong" "docker://$REGISTRY/kit/token:t"
[ "$STATUS" -ne 0 ] && [ "$(grep -c ' 401 ' "$TOKEN_LOG")" -eq $((n401 + 1)) ] &&
	ok "token: wrong credentials get one 401 from the token server" || { not_ok "token: wrong creds (exit $STATUS)"; diag <"$TOKEN_LOG"; }
! grep -q "$REGISTRY_PASSWORD\|$REGISTRY_RO_PASSWORD\|wrong" "$TOKEN_LOG" &&
	ok "token: no secret in the token server log" || not_ok "token: secret logged"
run skopeo inspect --tls-verify=false "docker://$REGISTRY/kit/token:t"
[ "$STATUS" -ne 0 ] && ok "token: anonymous pull is refused" || not_ok "token: anonymous pull allowed"

# GET with expires_in, and the JWT's claims
curl -s -u "$REGISTRY_USER:$REGISTRY_PASSWORD" \
	"$TOKEN_URL?service=$TOKEN_SERVICE&scope=repository:kit/token:pull" >"$TMP/tok.json"
if python3 - "$TMP/tok.json" "$TOKEN_SERVICE" "$TOKEN_ISSUER" >"$TMP/tok.out" 2>&1 <<'EOF'
import base64, json, sys
d = json.load(open(sys.argv[1]))
assert d["token"] == d["access_token"], "token != access_token"
h, c, _ = d["token"].split(".")
dec = lambda s: json.loads(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))
h, c = dec(h), dec(c)
assert h["alg"] == "RS256" and h["x5c"] and h["kid"].count(":") == 11, h
assert c["aud"] == sys.argv[2] and c["iss"] == sys.argv[3], c
assert c["exp"] - c["iat"] == d["expires_in"] == 300, (c, d)
assert c["access"] == [{"type": "repository", "name": "kit/token", "actions": ["pull"]}], c
print(d["token"])
EOF
then
	ok "token: GET answers token/access_token/expires_in; JWT has x5c, kid, aud, iss, exp"
else
	not_ok "token: token response"
	diag <"$TMP/tok.out"
fi
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(tail -n 1 "$TMP/tok.out")" \
	-H 'Accept: application/vnd.oci.image.manifest.v1+json' "$REGISTRY_URL/v2/kit/token/manifests/t")
[ "$code" = 200 ] && ok "token: the registry accepts that token for a manifest GET" || not_ok "token: bearer GET answered $code"

# OAuth2: POST grant_type=password (offline), then grant_type=refresh_token
curl -s -X POST --data-urlencode grant_type=password --data-urlencode "username=$REGISTRY_USER" \
	--data-urlencode "password=$REGISTRY_PASSWORD" --data-urlencode "service=$TOKEN_SERVICE" \
	--data-urlencode client_id=kit-test --data-urlencode access_type=offline \
	--data-urlencode "scope=repository:kit/token:pull" "$TOKEN_URL" >"$TMP/oauth1.json"
rt=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "token" not in d and d["access_token"]; print(d["refresh_token"])' "$TMP/oauth1.json" 2>/dev/null)
[ -n "$rt" ] && ok "token: OAuth2 password grant gives access_token and refresh_token" ||
	{ not_ok "token: OAuth2 password grant"; diag <"$TMP/oauth1.json"; }
curl -s -X POST --data-urlencode grant_type=refresh_token --data-urlencode "refresh_token=$rt" \
	--data-urlencode "service=$TOKEN_SERVICE" --data-urlencode client_id=kit-test \
	--data-urlencode "scope=repository:kit/token:pull" "$TOKEN_URL" >"$TMP/oauth2.json"
at=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["access_token"])' "$TMP/oauth2.json" 2>/dev/null)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $at" \
	-H 'Accept: application/vnd.oci.image.manifest.v1+json' "$REGISTRY_URL/v2/kit/token/manifests/t")
[ -n "$at" ] && [ "$code" = 200 ] && ok "token: refresh_token grant gives a token the registry accepts" ||
	{ not_ok "token: refresh grant ($code)"; diag <"$TMP/oauth2.json"; }
grep -q '^POST /token 200 user=.* grant_type=refresh_token client_id=kit-test' "$TOKEN_LOG" &&
	ok "token: POSTs are logged with their grant type" || { not_ok "token: POST log"; diag <"$TOKEN_LOG"; }
TOKEN_STATE=$REGISTRY_STATE
TOKEN_PID_WAS=$TOKEN_PID
REGISTRY_PID_WAS=$REGISTRY_PID
registry_stop
! alive "$TOKEN_PID_WAS" && ! alive "$REGISTRY_PID_WAS" && [ ! -d "$TOKEN_STATE" ] &&
	ok "registry_stop ends the registry and the token server and removes the state" ||
	not_ok "registry_stop left something behind"

# -- the fault proxy in front of the plain registry -----------------------------
set -a
. "$PLAIN_STATE/env"
set +a
fault_proxy_start
[ -n "$FAULT_PROXY" ] && ok "fault proxy up at $FAULT_PROXY in front of $REGISTRY" || not_ok "fault proxy did not start"

# a 503 on the first blob upload PUT: skopeo 1.9 does not retry it (c/image
# retries only 429 on bodiless requests); the next run succeeds
mkimage "$TMP/f1"
fault_proxy_rules '[{"method": "PUT", "path": "/blobs/uploads/", "status": 503, "times": 1}]'
run skopeo copy -q --dest-tls-verify=false "oci:$TMP/f1:t" "docker://$FAULT_PROXY/kit/f1:t"
[ "$STATUS" -ne 0 ] && grep -q '503' "$TMP/err" &&
	ok "503 on the first blob PUT: skopeo reports it and fails" || { not_ok "503 run (exit $STATUS)"; diag <"$TMP/err"; }
[ "$(fault_proxy_count PUT '/blobs/uploads/' 503)" -eq 1 ] &&
	ok "proxy log: exactly one blob PUT answered 503" || { not_ok "proxy log 503 count"; diag <"$FAULT_PROXY_LOG"; }
puts=$(fault_proxy_count PUT '/blobs/uploads/' 201)
run skopeo copy -q --dest-tls-verify=false "oci:$TMP/f1:t" "docker://$FAULT_PROXY/kit/f1:t"
expect_status 0 "503 was for the first PUT only: the second skopeo copy succeeds"
[ "$(fault_proxy_count PUT '/blobs/uploads/' 201)" -eq $((puts + 2)) ] &&
	[ "$(fault_proxy_count PUT '/manifests/t$' 201)" -eq 1 ] &&
	ok "proxy log: then 2 blob PUTs (layer, config) and 1 manifest PUT answered 201" ||
	{ not_ok "proxy log PUT counts"; diag <"$FAULT_PROXY_LOG"; }
run skopeo inspect --tls-verify=false "docker://$REGISTRY/kit/f1:t"
[ "$STATUS" -eq 0 ] && ok "the image pushed through the proxy is in the registry" || not_ok "f1 missing"

# a 429 (Retry-After: 1) on the first upload session POST: skopeo waits and retries
mkimage "$TMP/f2"
fault_proxy_rules '[{"method": "POST", "path": "/blobs/uploads/$", "status": 429, "times": 1}]'
t0=$(now)
run skopeo copy -q --dest-tls-verify=false "oci:$TMP/f2:t" "docker://$FAULT_PROXY/kit/f2:t"
expect_status 0 "429 on the first upload POST: skopeo retries and succeeds"
elapsed_ge "$t0" 1 && [ "$(fault_proxy_count POST '/kit/f2/blobs/uploads/$' 429)" -eq 1 ] &&
	[ "$(fault_proxy_count POST '/kit/f2/blobs/uploads/$' 202)" -ge 2 ] &&
	ok "proxy log: one 429, then 202s, after honouring Retry-After: 1" ||
	{ not_ok "429 retry"; diag <"$FAULT_PROXY_LOG"; }

# the connection cut after 50000 bytes of the first PATCH body. skopeo
# --retry-times 1 starts the copy again when c/image classes the error as
# retryable; depending on when the cut reaches Go's HTTP client the error is
# a reset (retried) or "writing blob: Patch ...: EOF" (not retried), so a
# copy that stopped must have stopped on that PATCH, and the next copy,
# with the fault spent, must complete it.
mkimage "$TMP/f3"
fault_proxy_rules '[{"method": "PATCH", "path": "/kit/f3/blobs/uploads/", "cut_request_after": 50000, "times": 1}]'
run skopeo copy -q --retry-times 1 --dest-tls-verify=false "oci:$TMP/f3:t" "docker://$FAULT_PROXY/kit/f3:t"
if [ "$STATUS" -ne 0 ]; then
	grep -qi 'patch' "$TMP/err" &&
		ok "cut PATCH body at 50000 bytes: skopeo stopped on that PATCH (not retried: $(head -c 120 "$TMP/err" | tr '\n' ' '))" ||
		{ not_ok "cut PATCH: skopeo failed on something else"; diag <"$TMP/err"; }
	run skopeo copy -q --dest-tls-verify=false "oci:$TMP/f3:t" "docker://$FAULT_PROXY/kit/f3:t"
	[ "$STATUS" -eq 0 ] || { echo "cut PATCH: the second skopeo copy failed (exit $STATUS)" >&2; diag <"$TMP/err"; }
else
	ok "cut PATCH body at 50000 bytes: skopeo --retry-times 1 recovered"
fi
run skopeo inspect --tls-verify=false "docker://$REGISTRY/kit/f3:t"
[ "$STATUS" -eq 0 ] && ok "cut PATCH: the image is complete in the registry after the retry" ||
	{ not_ok "cut PATCH: kit/f3:t not in the registry"; diag <"$TMP/err"; }
grep -q ' PATCH /v2/kit/f3/blobs/uploads/[^ ]* 000 in=50000 out=0 fault=r1:cut-request ' "$FAULT_PROXY_LOG" &&
	[ "$(fault_proxy_count PATCH '/kit/f3/blobs/uploads/' 202)" -ge 1 ] &&
	ok "proxy log: the cut PATCH (000, in=50000), then complete ones" ||
	{ not_ok "cut PATCH log"; diag <"$FAULT_PROXY_LOG"; }
layer_size=$(stat -c %s "$TMP/f3/blobs/sha256/$(skopeo inspect "oci:$TMP/f3:t" | sed -n 's/.*"sha256:\([0-9a-f]*\)"$/\1/p' | tail -n 1)")
grep -q " PATCH /v2/kit/f3/blobs/uploads/[^ ]* 202 in=$layer_size " "$FAULT_PROXY_LOG" &&
	ok "proxy log: the retried PATCH carried the whole layer ($layer_size bytes)" ||
	{ not_ok "whole-layer PATCH not logged"; diag <"$FAULT_PROXY_LOG"; }

# a slow registry: /v2/ delayed by 1 s
fault_proxy_rules '[{"method": "GET", "path": "^/v2/$", "delay": 1, "times": 1}]'
t0=$(now)
code=$(curl -s -o /dev/null -w '%{http_code}' "$FAULT_PROXY_URL/v2/")
[ "$code" = 200 ] && elapsed_ge "$t0" 1 && ok "delay=1: GET /v2/ answers 200 after a second" ||
	not_ok "delay ($code)"

# faithful forwarding: a chunked streamed PATCH and PUT ?digest= by hand,
# following the rewritten Location headers
fault_proxy_rules '[]'
head -c 70000 /dev/urandom >"$TMP/blob"
bd=sha256:$(sha256sum "$TMP/blob" | cut -d' ' -f1)
loc=$(curl -s -D - -o /dev/null -X POST "$FAULT_PROXY_URL/v2/kit/raw/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
case $loc in "$FAULT_PROXY_URL"/v2/kit/raw/blobs/uploads/*_state=*) ok "POST: Location rewritten to the proxy, _state kept" ;;
*) not_ok "POST Location: $loc" ;; esac
curl -s -D "$TMP/h" -o /dev/null -X PATCH -H 'Transfer-Encoding: chunked' \
	-H 'Content-Type: application/octet-stream' --data-binary @"$TMP/blob" "$loc"
tr -d '\r' <"$TMP/h" >"$TMP/h2"
loc=$(sed -n 's/^[Ll]ocation: //p' "$TMP/h2")
grep -q '^HTTP/1.1 202' "$TMP/h2" && grep -q '^Range: 0-69999$' "$TMP/h2" && grep -qi '^Docker-Upload-UUID: ' "$TMP/h2" &&
	ok "chunked PATCH through the proxy: 202, Range: 0-69999, Docker-Upload-UUID" ||
	{ not_ok "chunked PATCH"; diag <"$TMP/h2"; }
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$loc&digest=$bd")
curl -s -I "$FAULT_PROXY_URL/v2/kit/raw/blobs/$bd" | tr -d '\r' >"$TMP/h3"
[ "$code" = 201 ] && grep -q "^Docker-Content-Digest: $bd\$" "$TMP/h3" && grep -q '^Content-Length: 70000$' "$TMP/h3" &&
	ok "PUT ?digest= 201; HEAD keeps Docker-Content-Digest and Content-Length" ||
	{ not_ok "PUT/HEAD ($code)"; diag <"$TMP/h3"; }
[ "$(curl -s -r 100-199 "$FAULT_PROXY_URL/v2/kit/raw/blobs/$bd" | od -An -tx1)" = \
	"$(tail -c +101 "$TMP/blob" | head -c 100 | od -An -tx1)" ] &&
	ok "a Range GET through the proxy returns the right bytes" || not_ok "Range GET"
fault_proxy_stop
finish
