#!/bin/sh
# check_formats.sh - `envbuild check` on the formats recognised by name
# (issue 15): pyproject.toml, pylock.toml, uv.lock, poetry.lock,
# Pipfile.lock, conda environment.yml, Dockerfile heredocs/installers/-r
# paths/fragments, Helm values and templates, and an unsupported format.
. "$(dirname "$0")/lib.sh"
plan 40
F=$top_srcdir/tests/fixtures/check/formats
chk() { run sh -c "cd '$F' && '$ENVBUILD' check $*"; }

# pyproject.toml: an application's tables pinned, build-system a warning
chk app/pyproject.toml
expect_status 1 "pyproject.toml of an application"
expect_out_contains "app/pyproject.toml:2:24: warning: 'setuptools>=61' is not an exact pin [EB202]" "build-system.requires is a warning"
expect_out_contains "app/pyproject.toml:10:11: error: 'torch>=2.1' is not an exact pin [EB202]" "project.dependencies at the string's position"
expect_out_contains "app/pyproject.toml:19:14: error: 'ruff~=0.3' is not an exact pin [EB202]" "a dependency group"
if grep -q "pyproject.toml:\(1\|5\|6\|7\|9\|15\|18\):" "$TMP/out"; then
	not_ok "findings only on unpinned dependency strings"; diag <"$TMP/out"
else ok "findings only on unpinned dependency strings"; fi

# a library says its ranges are fine
chk lib/pyproject.toml
expect_status 0 "[tool.envbuild] pinned = [] makes a library's ranges warnings"
expect_out_contains "lib/pyproject.toml:3:33: warning: 'packaging' is not pinned [EB201]" "still reported as warnings"

# lock files: one finding per package
chk locks/pylock.toml
expect_status 1 "pylock.toml with an unhashed sdist"
expect_out_contains "locks/pylock.toml:11:1: error: package 'six' has a file without hashes [EB402]" "one finding at the package"
chk locks/uv.lock
expect_status 0 "uv.lock pinned by construction"
chk locks/Pipfile.lock
expect_status 0 "Pipfile.lock with versions and hashes"
chk locks/poetry.lock
expect_status 1 "poetry.lock with an unhashed package"
expect_out_contains "locks/poetry.lock:12:1: error: package 'unhashed' has no files with hashes [EB402]" "poetry.lock finding"

# a spec may name a pylock.toml: validated as a lock, not read as requirements
run sh -c "cd '$F/spec' && '$ENVBUILD' check"
expect_status 0 "a spec whose requirements are a valid pylock.toml"

# ... and lock and build install exactly what it pins (Debian's wheels as
# the index, on the shared test base)
BASE=${ENVBUILD_TEST_BASE:-/var/tmp/envbuild-test-base}
W=/usr/share/python-wheels/wheel-0.38.4-py3-none-any.whl
if [ -f "$BASE/.complete" ] && [ -f "$W" ]; then
	mkdir -p "$TMP/pl"
	{
		printf 'lock-version = "1.0"\ncreated-by = "check_formats.sh"\n[[packages]]\n'
		printf 'name = "wheel"\nversion = "0.38.4"\n'
		printf 'wheels = [{ url = "https://files.example/wheel-0.38.4-py3-none-any.whl", hashes = { sha256 = "%s" } }]\n' \
			"$(sha256sum "$W" | cut -d' ' -f1)"
	} >"$TMP/pl/pylock.toml"
	printf 'version: 1\nname: pl\nindex: /usr/share/python-wheels\ntargets:\n  app:\n    base: oci:%s:bookworm-python3\n    requirements: [pylock.toml]\n' "$BASE" >"$TMP/pl/envbuild.yaml"
	run sh -c "cd '$TMP/pl' && '$ENVBUILD' lock --cache-dir '$TMP/cache' && '$ENVBUILD' build --locked --cache-dir '$TMP/cache'"
	expect_status 0 "lock and build a target whose requirements are a pylock.toml"
	if grep -q '"filename": "wheel-0.38.4-py3-none-any.whl"' "$TMP/pl/envbuild.lock"; then
		ok "the lock pins the file the pylock names"
	else not_ok "the lock pins the file the pylock names"; diag <"$TMP/pl/envbuild.lock"; fi
else
	ok "# SKIP no test base at $BASE or no $W"
	ok "# SKIP no test base"
fi

# conda
chk conda/environment.yml
expect_status 1 "conda environment.yml"
expect_out_contains "conda/environment.yml:7:5: error: conda package 'scipy' in dependencies has no version [EB410]" "a bare conda package"
expect_out_contains "conda/environment.yml:8:5: error: conda package 'pandas' in dependencies is pinned with '='" "conda's '=' is a prefix match"
expect_out_contains "conda/environment.yml:11:19: error: 'transformers>=4.38' is not an exact pin [EB202]" "the pip: list follows the requirements rules"
if grep -q "environment.yml:\(5\|6\|10\):" "$TMP/out"; then
	not_ok "exact conda pins pass"; diag <"$TMP/out"
else ok "exact conda pins pass"; fi

# Dockerfiles
chk docker/Dockerfile
expect_status 1 "Dockerfile with heredocs, uv, pipx, conda"
expect_out_contains "docker/Dockerfile:8:14: warning: 'black' is not pinned (pipx, not pip) [EB307]" "pipx install inside a RUN heredoc"
expect_out_contains "docker/reqs/base.txt:2:1: error: 'requests' is not pinned [EB201]" "-r followed through WORKDIR and COPY"
expect_out_contains "docker/Dockerfile:10:78: warning: conda package 'numpy' in 'conda install' is pinned with '=', which conda reads as a prefix match [EB308]" "conda install"
expect_out_contains "docker/Dockerfile:11:20: warning: cannot check -r /opt/elsewhere.txt" "an -r path in the image is a warning with its position"
chk docker/fragment.dockerfile
expect_status 1 "a fragment without FROM"
expect_out_contains "docker/fragment.dockerfile:1:1: error: no FROM instruction [EB303]" "the no-FROM finding has a position"
expect_out_contains "docker/fragment.dockerfile:1:27: error: 'boto3' is not pinned [EB201]" "its RUN lines are checked (python -m pip)"

# a repository built from its root: ADD ./cmd/svc/ with WORKDIR there
chk repo/cmd/svc/Dockerfile
expect_status 1 "-r followed into a context rooted at an ancestor"
expect_out_contains "repo/cmd/svc/requirements.txt:1:7: error: 'grpcio>=1.64' is not an exact pin [EB202]" "the file is reported by its plain path"

# Helm
chk helm/values.yaml
expect_status 1 "Helm values.yaml"
expect_out_contains "helm/values.yaml:2:15: error: image 'org/app' (image.repository with image.tag) has no tag [EB103]" "image.repository without image.tag"
chk helm/deployment.yaml
expect_status 1 "a Helm template is checked where readable"
expect_out_contains "helm/deployment.yaml:4:9: warning: a template" "a warning says it is a template"
expect_out_contains "helm/deployment.yaml:13:24: error: image 'busybox:latest'" "the readable image is checked"

# includes: one normalised name per file, each line reported once
chk includes/a/requirements.txt
expect_status 1 "an include reached by two spellings"
if [ "$(grep -c "EB201" "$TMP/out")" = 1 ] && grep -q "^includes/b/x.txt:1:1: error" "$TMP/out"; then
	ok "reported once, as includes/b/x.txt"
else not_ok "reported once, as includes/b/x.txt"; diag <"$TMP/out"; fi

# a format envbuild does not read
chk Cargo.toml
expect_status 2 "unsupported format"
expect_err_contains "unsupported format" "named as such"
finish
