#!/bin/sh
# resolve.sh - `envbuild resolve`: a training-job definition and a Kubernetes
# stream rewritten to the lock's pushed digests (golden files, byte for
# byte), several files as one stream, --lock, -i in place (atomic, only
# changed files, mode kept, nothing written on error), CRLF files, the
# errors (unknown or unpushed target at file:line:col, exit 1; usage and
# I/O, exit 2), and the EB103/EB104 image checker of `envbuild check`.
. "$(dirname "$0")/lib.sh"
plan 45
F=$top_srcdir/tests/fixtures/resolve

# expect_out_lacks TEXT NAME  (stdout)
expect_out_lacks() {
	if grep -qF -- "$1" "$TMP/out"; then
		not_ok "$2: stdout has '$1'"
		diag <"$TMP/out"
	else ok "$2"; fi
}

# same_file A B NAME: byte-identical files
same_file() {
	if cmp -s "$1" "$2"; then ok "$3"; else
		not_ok "$3: $(basename "$1") differs from $(basename "$2")"
		diff -u "$2" "$1" | diag
	fi
}

# ---- stdout ---------------------------------------------------------------
run sh -c "cd '$F' && '$ENVBUILD' resolve job.yaml"
expect_status 0 "training job"
expect_golden "$F/job.resolved.yaml" "job: envbuild://training and a pushed tag pinned, rest byte for byte"
[ -z "$ERR" ] && ok "nothing on stderr" || { not_ok "stderr: $ERR"; }

run sh -c "cd '$F' && '$ENVBUILD' resolve deployment.yaml"
expect_status 0 "Kubernetes Deployment, Service and CronJob"
expect_golden "$F/deployment.resolved.yaml" "deployment: containers, initContainers, annotations pinned"
expect_out_contains "image: prom/statsd-exporter:v0.26.1" "an image that is not ours is left alone"
expect_out_contains "image: registry.example.com/ml/churn:training@sha256:4444" "a reference pinned by digest is left alone"

run sh -c "cd '$F' && '$ENVBUILD' resolve job.yaml deployment.yaml"
expect_status 0 "two files"
expect_golden "$F/stream.resolved.yaml" "two files print as one --- stream, in order"

# --lock from elsewhere; the lock's directory does not matter
mkdir "$TMP/elsewhere"
run sh -c "cd '$TMP/elsewhere' && '$ENVBUILD' resolve --lock '$F/envbuild.lock' '$F/job.yaml'"
expect_status 0 "--lock FILE"
expect_golden "$F/job.resolved.yaml" "--lock FILE gives the same output"

# standard input
run sh -c "cd '$F' && '$ENVBUILD' resolve - <job.yaml"
expect_status 0 "standard input"
expect_golden "$F/job.resolved.yaml" "- reads standard input"

# CRLF line ends survive
sed 's/$/\r/' "$F/job.yaml" >"$TMP/elsewhere/crlf.yaml"
sed 's/$/\r/' "$F/job.resolved.yaml" >"$TMP/elsewhere/crlf.want"
run "$ENVBUILD" resolve --lock "$F/envbuild.lock" "$TMP/elsewhere/crlf.yaml"
expect_status 0 "CRLF file"
same_file "$TMP/out" "$TMP/elsewhere/crlf.want" "CRLF line ends kept, references pinned"

# ---- -i: in place ---------------------------------------------------------
W=$TMP/work
mkdir "$W"
cp "$F/envbuild.lock" "$F/job.yaml" "$F/deployment.yaml" "$W/"
printf 'image: nginx:1.25\n' >"$W/nothing.yaml"
chmod 640 "$W/job.yaml"
ino_nothing=$(stat -c %i "$W/nothing.yaml")
ino_job=$(stat -c %i "$W/job.yaml")
run sh -c "cd '$W' && '$ENVBUILD' resolve -i job.yaml deployment.yaml nothing.yaml"
expect_status 0 "-i"
[ -z "$OUT" ] && ok "-i prints nothing" || not_ok "-i printed: $OUT"
same_file "$W/job.yaml" "$F/job.resolved.yaml" "-i rewrote job.yaml"
same_file "$W/deployment.yaml" "$F/deployment.resolved.yaml" "-i rewrote deployment.yaml"
[ "$(stat -c %i "$W/job.yaml")" != "$ino_job" ] && ok "job.yaml replaced by rename (atomic)" ||
	not_ok "job.yaml was written in place, not replaced"
[ "$(stat -c %a "$W/job.yaml")" = 640 ] && ok "-i keeps the file mode" ||
	not_ok "mode is $(stat -c %a "$W/job.yaml"), want 640"
[ "$(stat -c %i "$W/nothing.yaml")" = "$ino_nothing" ] && ok "an unchanged file is not rewritten" ||
	not_ok "nothing.yaml was rewritten"
ls "$W" | grep -v -e '^envbuild.lock$' -e '^job.yaml$' -e '^deployment.yaml$' -e '^nothing.yaml$' >"$TMP/stray" || true
[ ! -s "$TMP/stray" ] && ok "no temporary files left" || { not_ok "stray files"; diag <"$TMP/stray"; }

run sh -c "cd '$W' && '$ENVBUILD' resolve -i job.yaml"
expect_status 0 "-i again"
same_file "$W/job.yaml" "$F/job.resolved.yaml" "resolving a resolved file changes nothing"

# an error in any file: nothing is written, nothing printed
cp "$F/job.yaml" "$W/job2.yaml"
cp "$F/unknown.yaml" "$W/unknown.yaml"
run sh -c "cd '$W' && '$ENVBUILD' resolve -i job2.yaml unknown.yaml"
expect_status 1 "-i with an unknown target"
same_file "$W/job2.yaml" "$F/job.yaml" "-i writes nothing when a later file fails"

# ---- errors ---------------------------------------------------------------
run sh -c "cd '$F' && '$ENVBUILD' resolve job.yaml unknown.yaml"
expect_status 1 "unknown target"
expect_err_contains "unknown.yaml:7:14: error: unknown target 'nosuch' in 'envbuild://nosuch'" "unknown target at file:line:col"
expect_err_contains "inference, notebook, training" "the hint lists the lock's targets"
[ -z "$OUT" ] && ok "nothing printed when a file fails" || not_ok "printed: $OUT"

run sh -c "cd '$F' && '$ENVBUILD' resolve unpushed.yaml"
expect_status 1 "target never pushed"
expect_err_contains "unpushed.yaml:2:10: error: target 'notebook' has no pushed reference in the lock; run envbuild push" "unpushed target named"

printf 'spec:\n  image: [envbuild://training\n' >"$TMP/broken.yaml"
run "$ENVBUILD" resolve --lock "$F/envbuild.lock" "$TMP/broken.yaml"
expect_status 1 "invalid YAML"
expect_err_contains "broken.yaml:3:1: error:" "YAML syntax error at file:line:col"

run sh -c "cd '$TMP/elsewhere' && '$ENVBUILD' resolve '$F/job.yaml'"
expect_status 2 "no lock"
expect_err_contains "envbuild.lock" "the missing lock is named"

run sh -c "cd '$F' && '$ENVBUILD' resolve"
expect_status 2 "no FILE"

run sh -c "cd '$F' && '$ENVBUILD' resolve -i - <job.yaml"
expect_status 2 "-i with standard input"

run sh -c "cd '$F' && '$ENVBUILD' resolve no-such-file.yaml"
expect_status 2 "a missing file"

# ---- envbuild check: image fields -----------------------------------------
run sh -c "cd '$F' && '$ENVBUILD' check images.yaml"
expect_status 1 "check: image findings"
expect_out_contains "images.yaml:4:12: error: image 'nginx' has no tag [EB103]" "EB103: no tag"
expect_out_contains "images.yaml:6:20: error: image 'python:latest' uses the tag 'latest' without a digest [EB104]" "EB104: latest without digest, at the tag"
expect_out_contains "images.yaml:18:27: error: image 'ghcr.io/org/sidecar' has no tag [EB103]" "EB103 in a flow mapping of a later document"
expect_out_lacks "images.yaml:10:" "envbuild://TARGET passes the check"
finish
