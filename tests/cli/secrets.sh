#!/bin/sh
# secrets.sh - credentials never leak: with the registry kit in basic (TLS)
# and token modes and a password made for this run, envbuild lock, build,
# inspect, push (text and --format=json) and a push with a wrong password
# run against a base image and a repository on that registry; then every
# stdout/stderr, envbuild.lock, every file of the out/ layouts (layers
# decompressed) and every file of the cache (blobs decompressed) is
# searched for
#
#   - the password, and the base64 of user:password (the Basic header and
#     config.json's "auth");
#   - an issued token: the token server's JWT header and the start of its
#     claims are the same in every token it signs (learned by asking it for
#     a token with curl); and in the text outputs and the lock anything
#     that starts like a JWT at all ("eyJ", base64 of '{"').
#
# Also: TLS with an untrusted certificate fails with a message that says
# so; plain HTTP is never used for a non-loopback name: a name resolving to
# 127.0.0.1 that is not lexically loopback (this host's name when
# /etc/hosts maps it so) is refused plain HTTP unless --insecure-registry
# names it, and a push to registry.invalid:5000 fails before connecting.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"

plan 48
for t in docker-registry skopeo git openssl curl python3 base64 gzip; do
	command -v "$t" >/dev/null 2>&1 || { not_ok "$t is not installed (scripts/install-deps)"; finish; }
done
need_base

unset REGISTRY_AUTH_FILE ENVBUILD_MIRRORS ENVBUILD_CERTS_D
ENVBUILD_HTTP_BACKOFF_MS=100
GIT_AUTHOR_NAME=envbuild-test GIT_AUTHOR_EMAIL=test@envbuild.invalid
GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
GIT_CONFIG_NOSYSTEM=1
export ENVBUILD_HTTP_BACKOFF_MS GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
	GIT_COMMITTER_EMAIL GIT_CONFIG_NOSYSTEM
# nothing from the caller's own credentials
DOCKER_CONFIG=$TMP/no-docker-config
mkdir -p "$DOCKER_CONFIG"
export DOCKER_CONFIG

# a password no file on this machine holds by chance
PASS="eb-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')-pw"
REGISTRY_KIT_PASSWORD=$PASS
export REGISTRY_KIT_PASSWORD
LOGS=$TMP/logs
mkdir -p "$LOGS"

# ebrun NAME ARGS...: run envbuild, keeping stdout/stderr for the search
ebrun() {
	_name=$1
	shift
	run env DOCKER_CONFIG="$DC" ENVBUILD_CERTS_D="$CERTS" "$ENVBUILD" "$@"
	cp "$TMP/out" "$LOGS/$MODE-$_name.out"
	cp "$TMP/err" "$LOGS/$MODE-$_name.err"
}

# search_files PATTERNS FILES...: the files (gzip ones decompressed) in
# which any fixed string of the file PATTERNS occurs
search_files() {
	_pats=$1
	shift
	for _f in "$@"; do
		if [ "$(head -c 2 "$_f" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
			gzip -dc "$_f" 2>/dev/null | grep -qaF -f "$_pats" && echo "$_f (decompressed)"
		fi
		grep -qaF -f "$_pats" "$_f" && echo "$_f"
	done
	return 0
}

# mkproject DIR BASEREF REPO: the churn example on BASEREF, committed
mkproject() {
	mkdir -p "$1"
	cp -r "$top_srcdir/tests/fixtures/churn-python/." "$1/"
	rm -f "$1/envbuild.lock"
	sed -i -e "s|base: python:3.11-slim-bookworm|base: $2|" \
		-e "s|^index: .*|index: /usr/share/python-wheels|" \
		-e "s|^repository: .*|repository: $3|" "$1/envbuild.yaml"
	git init -q "$1" && git -C "$1" add -A && git -C "$1" commit -q -m churn >/dev/null
}

for MODE in basic token; do
	if ! registry_start $MODE; then
		not_ok "$MODE: registry/start $MODE"
		continue
	fi
	[ "$REGISTRY_PASSWORD" = "$PASS" ] && ok "$MODE: registry with this run's password" ||
		not_ok "$MODE: the kit did not take REGISTRY_KIT_PASSWORD"
	DC=$REGISTRY_DOCKER_CONFIG
	CERTS=$TMP/certs-$MODE
	mkdir -p "$CERTS"
	SKOPEO_TLS="--dest-tls-verify=false"
	if [ -n "${REGISTRY_CA:-}" ]; then
		mkdir -p "$CERTS/$REGISTRY"
		cp "$REGISTRY_CA" "$CERTS/$REGISTRY/ca.crt"
		SKOPEO_TLS="--dest-cert-dir $REGISTRY_CERT_DIR"
	fi
	PATS=$TMP/patterns-$MODE
	printf '%s\n%s\n' "$PASS" "$(printf '%s:%s' "$REGISTRY_USER" "$PASS" | base64 -w0)" >"$PATS"
	if [ $MODE = token ]; then
		# what every token of this server starts with: its JWT header
		# (kid, x5c) and the first claim
		curl -sf -u "$REGISTRY_USER:$PASS" \
			"$TOKEN_URL?service=$TOKEN_SERVICE&scope=repository:sec/probe:pull" >"$TMP/token.json"
		TOKHDR=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"].split(".")[0])' "$TMP/token.json" 2>/dev/null)
		CLAIMS=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["token"].split(".")[1]; print(t[:40])' "$TMP/token.json" 2>/dev/null)
		if [ "${#TOKHDR}" -gt 40 ] && [ "${#CLAIMS}" -eq 40 ]; then
			ok "token: learned the token shape (header ${#TOKHDR} chars)"
			printf '%s\n%s\n' "$TOKHDR" "$CLAIMS" >>"$PATS"
		else
			not_ok "token: could not get a token from $TOKEN_URL"
			diag <"$TMP/token.json"
		fi
	fi

	# the search itself works: it finds the auth in the kit's config.json
	# (and, in token mode, a token in a gzip stream)
	[ -n "$(search_files "$PATS" "$REGISTRY_DOCKER_CONFIG/config.json")" ] &&
		ok "$MODE: the search finds the auth where it belongs (config.json)" ||
		not_ok "$MODE: the search misses the auth in config.json"
	if [ $MODE = token ]; then
		gzip -c "$TMP/token.json" >"$TMP/token.json.gz"
		[ -n "$(search_files "$PATS" "$TMP/token.json.gz")" ] &&
			ok "token: the search finds a token inside a gzip stream" ||
			not_ok "token: the search misses a gzipped token"
	fi

	# the base, on the authenticated registry: lock and build must log in
	# to resolve and pull it
	# shellcheck disable=SC2086
	if skopeo copy -q $SKOPEO_TLS --dest-creds "$REGISTRY_USER:$PASS" \
		"oci:$BASE:bookworm-python3" "docker://$REGISTRY/sec/base:bookworm" >"$TMP/sk.out" 2>&1; then
		ok "$MODE: base image copied to $REGISTRY/sec/base:bookworm"
	else
		not_ok "$MODE: skopeo copy of the base"
		diag <"$TMP/sk.out"
	fi
	P=$TMP/p-$MODE
	CACHE=$TMP/cache-$MODE
	mkproject "$P" "$REGISTRY/sec/base:bookworm" "$REGISTRY/sec/churn"

	ebrun lock -C "$P" lock --cache-dir "$CACHE"
	expect_status 0 "$MODE: lock resolves the base on the registry"
	ebrun build -C "$P" build --cache-dir "$CACHE"
	expect_status 0 "$MODE: build"
	ebrun inspect -C "$P" inspect out/training
	expect_status 0 "$MODE: inspect"
	ebrun inspect-json -C "$P" inspect --format=json out/inference
	expect_status 0 "$MODE: inspect --format=json"
	ebrun push -C "$P" push --cache-dir "$CACHE" --allow-dirty
	expect_status 0 "$MODE: push"
	ebrun push-json -C "$P" push --cache-dir "$CACHE" --allow-dirty --tag again --format=json
	expect_status 0 "$MODE: push --format=json"
	# a wrong password: the same user, another password
	mkdir -p "$TMP/wrong-$MODE"
	printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$REGISTRY" \
		"$(printf '%s:wrong-%s' "$REGISTRY_USER" "$PASS" | base64 -w0)" >"$TMP/wrong-$MODE/config.json"
	printf '%s\n' "wrong-$PASS" "$(printf '%s:wrong-%s' "$REGISTRY_USER" "$PASS" | base64 -w0)" >>"$PATS"
	DC=$TMP/wrong-$MODE ebrun push-wrong -C "$P" push --cache-dir "$CACHE" --allow-dirty \
		--repository "$REGISTRY/sec/wrong"
	[ "$STATUS" -ne 0 ] && ok "$MODE: a wrong password fails the push (exit $STATUS)" ||
		not_ok "$MODE: pushed with a wrong password"
	grep -qiE "unauthori|credential|denied|401" "$TMP/err" &&
		ok "$MODE: the failure says the credentials were refused" ||
		{ not_ok "$MODE: no word about the credentials"; diag <"$TMP/err"; }
	DC=$REGISTRY_DOCKER_CONFIG

	# -- the search ------------------------------------------------------
	hits=$(search_files "$PATS" "$LOGS/$MODE"-*)
	[ -z "$hits" ] && ok "$MODE: no password, auth or token in any stdout/stderr" ||
		{ not_ok "$MODE: secrets in outputs"; echo "$hits" | diag; }
	hits=$(grep -l "eyJ" "$LOGS/$MODE"-* 2>/dev/null)
	[ -z "$hits" ] && ok "$MODE: nothing JWT-like ('eyJ') in any stdout/stderr" ||
		{ not_ok "$MODE: 'eyJ' in outputs"; grep -o ".\{0,20\}eyJ.\{0,20\}" $hits | diag; }
	hits=$(search_files "$PATS" "$P/envbuild.lock")
	[ -z "$hits" ] && ! grep -q "eyJ" "$P/envbuild.lock" &&
		ok "$MODE: envbuild.lock holds no password, auth or token" ||
		{ not_ok "$MODE: secrets in envbuild.lock"; echo "$hits" | diag; }
	n=$(find "$P/out" -type f | wc -l)
	# shellcheck disable=SC2046
	hits=$(search_files "$PATS" $(find "$P/out" -type f))
	[ "$n" -gt 5 ] && [ -z "$hits" ] && ok "$MODE: none in the $n files of out/ (layers decompressed)" ||
		{ not_ok "$MODE: secrets in out/ ($n files)"; echo "$hits" | diag; }
	n=$(find "$CACHE" -type f | wc -l)
	# shellcheck disable=SC2046
	hits=$(search_files "$PATS" $(find "$CACHE" -type f))
	[ "$n" -gt 5 ] && [ -z "$hits" ] && ok "$MODE: none in the $n files of the cache (blobs decompressed)" ||
		{ not_ok "$MODE: secrets in the cache ($n files)"; echo "$hits" | diag; }
	[ -z "$(ls "$CACHE/tmp" 2>/dev/null)" ] && ok "$MODE: no temporary left in the cache" ||
		not_ok "$MODE: temporaries left in $CACHE/tmp"

	if [ $MODE = basic ]; then
		# -- TLS: an untrusted certificate -------------------------------
		CERTS=$TMP/no-certs
		mkdir -p "$CERTS"
		ebrun untrusted -C "$P" push --cache-dir "$CACHE" --allow-dirty --repository "$REGISTRY/sec/untrusted"
		[ "$STATUS" -ne 0 ] && ok "tls: an untrusted certificate fails the push (exit $STATUS)" ||
			not_ok "tls: pushed to a registry whose certificate nobody trusts"
		grep -qi "certificate" "$TMP/err" && ok "tls: the message says it is about the certificate" ||
			{ not_ok "tls: no word about the certificate"; diag <"$TMP/err"; }
		grep -qiE "ca-file|certs\.d" "$TMP/err" && ok "tls: with a hint (--ca-file or certs.d)" ||
			{ not_ok "tls: no hint on trusting a CA"; diag <"$TMP/err"; }
		ebrun untrusted-lock -C "$P" lock --cache-dir "$TMP/cache-untrusted" --upgrade
		[ "$STATUS" -ne 0 ] && grep -qi "certificate" "$TMP/err" &&
			ok "tls: lock --upgrade against it fails the same way (exit $STATUS)" ||
			{ not_ok "tls: lock --upgrade with an untrusted certificate: exit $STATUS"; diag <"$TMP/err"; }
		ebrun cafile -C "$P" push --cache-dir "$CACHE" --allow-dirty --ca-file "$REGISTRY_CA" \
			--repository "$REGISTRY/sec/cafile"
		expect_status 0 "tls: --ca-file makes it trusted"
		hits=$(search_files "$PATS" "$LOGS/$MODE"-untrusted* "$LOGS/$MODE"-cafile*)
		[ -z "$hits" ] && ok "tls: no secret in those outputs either" || { not_ok "tls: secrets"; echo "$hits" | diag; }
		CERTS=$TMP/certs-$MODE
	fi
	registry_stop
done

# -- plain HTTP to a name that is not loopback ---------------------------------
MODE=plain
registry_start plain || { not_ok "plain: registry/start plain"; finish; }
fault_proxy_start || { not_ok "plain: fault proxy"; finish; }
DC=$DOCKER_CONFIG
CERTS=$TMP/no-certs
P=$TMP/p-plain
mkproject "$P" "oci:$BASE:bookworm-python3" "registry.invalid:5000/sec/churn"
ebrun invalid -C "$P" push --cache-dir "$TMP/cache-plain"
[ "$STATUS" -ne 0 ] && ok "plain: a push to registry.invalid:5000 fails (exit $STATUS)" ||
	not_ok "plain: pushed to registry.invalid:5000"
grep -q "registry.invalid" "$TMP/err" && ! grep -qi "http://registry.invalid" "$TMP/err" &&
	ok "plain: the message names the registry and no http:// URL was tried" ||
	{ not_ok "plain: unexpected message"; diag <"$TMP/err"; }

# a name that resolves to 127.0.0.1 without being a loopback name: the
# fault proxy (plain HTTP) behind it
H=$(hostname 2>/dev/null)
ADDR=$(getent hosts "$H" 2>/dev/null | awk '{print $1; exit}')
case $H:$ADDR in
*.localhost:* | localhost:* | :* | *:) USABLE=0 ;;
*:127.*) USABLE=1 ;;
*) USABLE=0 ;;
esac
if [ $USABLE -eq 1 ]; then
	NAME=$H:${FAULT_PROXY##*:}
	: >"$FAULT_PROXY_LOG"
	ebrun nonloop -C "$P" push --cache-dir "$TMP/cache-plain" --repository "$NAME/sec/churn"
	[ "$STATUS" -ne 0 ] && ok "plain: '$NAME' (resolves to $ADDR) is not spoken to in plain HTTP (exit $STATUS)" ||
		not_ok "plain: pushed over plain HTTP to '$NAME'"
	[ ! -s "$FAULT_PROXY_LOG" ] && ok "plain: no HTTP request reached the server" ||
		{ not_ok "plain: HTTP requests reached the server"; diag <"$FAULT_PROXY_LOG"; }
	grep -qiE "insecure|tls|ssl|https" "$TMP/err" && ok "plain: the message explains (TLS / --insecure-registry)" ||
		{ not_ok "plain: no explanation"; diag <"$TMP/err"; }
	ebrun nonloop-insecure -C "$P" push --cache-dir "$TMP/cache-plain" --repository "$NAME/sec/churn" \
		--insecure-registry "$NAME"
	expect_status 0 "plain: with --insecure-registry $NAME the same push goes through"
else
	for _ in 1 2 3 4; do ok "# SKIP this host's name ('$H') does not resolve to 127.x only by /etc/hosts"; done
fi
finish
