#!/bin/sh
# check_dockerfile.sh - Dockerfiles and Containerfiles: FROM rules and the
# pins of `RUN pip install`, with files named by -r checked too.
. "$(dirname "$0")/lib.sh"
plan 6
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
finish
