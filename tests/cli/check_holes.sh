#!/bin/sh
# check_holes.sh - smaller holes of `envbuild check` found on real files
# (issue: lock, cache and hostile inputs):
#   - WORKDIR /w, COPY requirements.txt ., RUN pip install -r
#     requirements.txt checks the file (was EB305 "not in the build
#     context");
#   - pip install "git+${REPO}" is a VCS install (EB206) whatever REPO
#     holds (was a warning);
#   - Compose image: ${REGISTRY}name/python has no tag (EB103; a variable
#     prefix cannot supply one; was silent);
#   - --format=github escapes error messages on stderr too: a file name
#     with a newline and "::error ...::" cannot spoof an annotation;
#   - the search for a Dockerfile's requirements file never reaches "/".
. "$(dirname "$0")/lib.sh"
plan 9

P=$TMP/p
mkdir -p "$P/sub"
cd "$P" || exit 1
cat >sub/Dockerfile <<'EOF2'
FROM python:3.11-slim-bookworm@sha256:0000000000000000000000000000000000000000000000000000000000000000
WORKDIR /workspace
COPY sub/requirements.txt .
RUN pip install -r requirements.txt
EOF2
printf 'numpy>=1.24\n' >sub/requirements.txt
run "$ENVBUILD" check sub/Dockerfile
expect_status 1 "WORKDIR + COPY FILE . + pip install -r FILE"
expect_out_contains "sub/requirements.txt:1:" "checks the copied file (its unpinned line)"
! grep -q EB305 "$TMP/out" && ok "and does not say it is not in the build context" || not_ok "EB305 still"

cat >Dockerfile <<'EOF2'
FROM python:3.11-slim-bookworm@sha256:0000000000000000000000000000000000000000000000000000000000000000
ARG REPO
RUN pip3 install "git+${REPO}"
EOF2
run "$ENVBUILD" check Dockerfile
expect_status 1 "pip install \"git+\${REPO}\" fails"
expect_out_contains "[EB206]" "as a VCS install (EB206)"

cat >docker-compose.yml <<'EOF2'
services:
  db:
    image: ${REGISTRY}databricksruntime/python
  ok:
    image: ${REGISTRY}library/python:3.11@sha256:0000000000000000000000000000000000000000000000000000000000000000
EOF2
run "$ENVBUILD" check docker-compose.yml
expect_status 1 "Compose image with a variable prefix and no tag"
expect_out_contains "docker-compose.yml:3:12: error: image '\${REGISTRY}databricksruntime/python' has no tag" "is EB103, and only that one"

# a file name that would forge an annotation
bad=$(printf 'x\n::error file=README.md,line=1::forged\n.txt')
run "$ENVBUILD" check --format=github "$bad"
if ! grep -q '^::error file=README.md' "$TMP/err" && ! grep -q '^::error file=README.md' "$TMP/out"; then
	ok "--format=github: no line of stdout or stderr starts a forged annotation"
else
	not_ok "--format=github: a forged annotation got through"; diag <"$TMP/err"
fi

# the requirements file search stops below "/"
mkdir -p "$TMP/deep/a"
cat >"$TMP/deep/a/Dockerfile" <<'EOF2'
FROM python:3.11-slim-bookworm@sha256:0000000000000000000000000000000000000000000000000000000000000000
RUN pip install -r no-such-requirements-file-xyz.txt
EOF2
run "$ENVBUILD" check "$TMP/deep/a/Dockerfile"
expect_out_contains "[EB305]" "a file in no directory up to the root is EB305, not read from elsewhere"
finish
