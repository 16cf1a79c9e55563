#!/bin/sh
# apt_check.sh - `envbuild check` on Debian pins: the spec's apt: and
# apt_sources: rules (EB230-EB234) with file:line:col, a clean spec with
# exact pins, and apt-get/apt install without =VERSION in a Dockerfile
# (EB306, hadolint's DL3008: a warning, as there; --strict fails on it).
. "$(dirname "$0")/lib.sh"
plan 18

P=$TMP/p
mkdir -p "$P"
printf 'not really a keyring, but present\n' >"$P/keyring.gpg"
cat >"$P/envbuild.yaml" <<'YAML'
version: 1
name: demo
apt_sources:
  - url: http://127.0.0.1:1/debian
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  training:
    base: python:3.11-slim-bookworm
    apt:
      - gcc-12=12.2.0-14
      - python3-numpy=1:1.24.2-1+deb12u1
      - libgomp1:amd64=12.2.0-14
YAML
run "$ENVBUILD" check "$P/envbuild.yaml"
expect_status 0 "exact pins with a source pass"

cat >"$P/envbuild.yaml" <<'YAML'
version: 1
name: demo
apt_sources:
  - url: http://127.0.0.1:1/debian
    suite: bookworm
    components: [main]
    signed_by: keyring.gpg
targets:
  training:
    base: python:3.11-slim-bookworm
    apt:
      - gcc-12=12.2.0-14
      - make
      - git=*
      - curl=7.88.*
      - Foo=1.0
      - bar=v1.0
      - gcc-12=12.2.0-15
      - zlib1g>=1.2
  inference:
    base: python:3.11-slim-bookworm
    apt_sources:
      - url: ftp://x
        suite: bookworm
        components: [main]
        signed_by: nokey.gpg
        check_valid_until: false
    apt: [hello=2.10-3]
  other:
    base: python:3.11-slim-bookworm
    apt_sources: []
    apt: [hello=2.10-3]
YAML
run "$ENVBUILD" check "$P/envbuild.yaml"
expect_status 1 "bad pins fail"
expect_out_contains "envbuild.yaml:13:9: error: apt package 'make' is not pinned to an exact version [EB231]" "bare name"
expect_out_contains "envbuild.yaml:14:9: error: apt package 'git=*'" "name=*"
expect_out_contains "envbuild.yaml:15:9: error: apt package 'curl=7.88.*'" "version glob"
expect_out_contains "envbuild.yaml:16:9: error: invalid Debian package name 'Foo' [EB230]" "upper-case name"
expect_out_contains "envbuild.yaml:17:13: error: invalid Debian version 'v1.0'" "version syntax, column of the bad byte"
expect_out_contains "envbuild.yaml:18:9: error: 'gcc-12' is pinned twice" "pinned twice [EB234]"
expect_out_contains "envbuild.yaml:19:9: error: apt package 'zlib1g>=1.2'" "a relation is no pin"
expect_out_contains "envbuild.yaml:23:14: error: apt source 'url' must be an http(s):// URL" "source url [EB233]"
expect_out_contains "envbuild.yaml:26:20: error: keyring 'nokey.gpg' does not exist" "missing keyring [EB233]"
expect_out_contains "envbuild.yaml:32:11: error: target 'other' pins apt packages but names no apt source [EB232]" "no source"

cat >"$P/Dockerfile" <<'DF'
FROM debian:12.5
RUN apt-get update && apt-get install -y --no-install-recommends gcc make=4.3-4.1 \
    git
RUN apt install -y -o Foo=1 /tmp/x.deb curl && apt-get remove -y vim
DF
run "$ENVBUILD" check "$P/Dockerfile"
expect_status 0 "unpinned apt-get install in a Dockerfile is a warning"
expect_out_contains "Dockerfile:2:66: warning: 'gcc' is installed without a version (apt-get install gcc=VERSION) [EB306]" "gcc at its column"
expect_out_contains "Dockerfile:3:5: warning: 'git'" "a continuation line"
if grep -q "make\|/tmp/x.deb\|vim\|Foo" "$TMP/out"; then
	not_ok "pinned, .deb path, option values and apt-get remove are not reported"
	diag <"$TMP/out"
else
	ok "pinned, .deb path, option values and apt-get remove are not reported"
fi
run "$ENVBUILD" check --strict "$P/Dockerfile"
expect_status 1 "--strict fails on EB306"
expect_out_contains "Dockerfile:4:40: warning: 'curl'" "apt install after an option with a value"
finish
