#!/bin/sh
# check_dockerfile.sh - Dockerfiles and Containerfiles: FROM rules and the
# pins of `RUN pip install`, with files named by -r checked too; installers
# that are not pip (uv, pipx, conda) and apt-get are warnings.
. "$(dirname "$0")/lib.sh"
plan 15
F=$top_srcdir/tests/fixtures/check/docker
G=$top_srcdir/tests/cli/golden

run sh -c "cd '$F' && '$ENVBUILD' check Containerfile.good"
expect_status 0 "tag + digest and pinned pip install"

run sh -c "cd '$F' && '$ENVBUILD' check Dockerfile"
expect_status 1 "Dockerfile findings"
expect_golden "$G/dockerfile.txt" "Dockerfile findings"

# recognised by content when the name says nothing
cp "$F/Dockerfile" "$TMP/build.def"
run sh -c "cd '$TMP' && '$ENVBUILD' check build.def"
expect_status 1 "a Dockerfile recognised by content"
expect_out_contains "build.def:7:13: error: image 'ubuntu:latest' uses the tag 'latest' without a digest [EB301]" "content-detected Dockerfile is checked as one"

# a file that cannot be read is an I/O error (exit 2), not a finding
mkdir "$TMP/dir.txt"
run "$ENVBUILD" check "$TMP/dir.txt"
expect_status 2 "a directory given as a file"

# what real ML Dockerfiles do and pip's rules do not cover: warnings of
# their own rules (EB306 apt, EB307 uv/pipx, EB308 conda), errors only with
# --strict; and pip lines that are pinned although they do not look it
cat >"$TMP/Dockerfile.tools" <<'DF'
FROM python:3.11.9-slim
ENV PYTORCH_VERSION=1.13.0
RUN apt-get update && apt-get install -y git
RUN uv venv && uv pip install torch==${PYTORCH_VERSION} torchvision "numpy>=1.26"
RUN pipx install --include-deps transformers
RUN conda install -y -c conda-forge scipy
RUN pip install torch==${PYTORCH_VERSION} --no-binary :all: pysam==0.23.2 >/tmp/pip.log 2>&1
DF
run "$ENVBUILD" check "$TMP/Dockerfile.tools"
expect_status 0 "uv, pipx, conda and apt-get findings are warnings"
expect_out_contains "Dockerfile.tools:3:42: warning: 'git' is installed without a version (apt-get install git=VERSION) [EB306]" "apt-get install git"
expect_out_contains "Dockerfile.tools:4:57: warning: 'torchvision' is not pinned (uv, not pip) [EB307]" "uv pip install"
expect_out_contains "Dockerfile.tools:4:75: warning: 'numpy>=1.26' is not an exact pin (uv, not pip) [EB307]" "a range in uv pip install"
expect_out_contains "Dockerfile.tools:5:33: warning: 'transformers' is not pinned (pipx, not pip) [EB307]" "pipx install"
expect_out_contains "Dockerfile.tools:6:37: warning: conda package 'scipy' in 'conda install' has no version [EB308]" "conda install"
if grep -q 'error:\|torch==\|pysam\|all:\|pip.log' "$TMP/out"; then
	not_ok "ENV-resolved pins, --no-binary :all: and redirects are not findings"
	diag <"$TMP/out"
else
	ok "ENV-resolved pins, --no-binary :all: and redirects are not findings"
fi
run "$ENVBUILD" check --strict "$TMP/Dockerfile.tools"
expect_status 1 "--strict fails on them"

# pip itself, however it is started, is held to the pin rules
printf 'FROM python:3.11.9-slim\nRUN python3 -m pip install flask\n' >"$TMP/Dockerfile.pip"
run "$ENVBUILD" check "$TMP/Dockerfile.pip"
expect_out_contains "Dockerfile.pip:2:28: error: 'flask' is not pinned [EB201]" "python3 -m pip install is pip"
finish
