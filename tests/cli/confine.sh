#!/bin/sh
# confine.sh - a hostile spec cannot make `envbuild check` (and so build,
# which checks first) read or print anything outside the project: its
# requirements files and -r/-c includes, an oci: base and the spec itself
# must be regular files (or a layout) inside the project directory; a file
# named as requirements that is not one is never quoted; ${VAR} expands
# only what the runner allows, never in a URL's host, and its value never
# appears in the output.
. "$(dirname "$0")/lib.sh"
plan 28

P=$TMP/proj
O=$TMP/outside
mkdir -p "$P/reqs" "$O/layout"
SECRET="s3cr3t-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
printf '[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = %s/abc+def\n' \
	"$SECRET" >"$O/credentials"
echo '{"imageLayoutVersion": "1.0.0"}' >"$O/layout/oci-layout"
echo '{"schemaVersion": 2, "manifests": []}' >"$O/layout/index.json"
printf 'numpy==1.26.4\n' >"$P/reqs/ok.txt"

# spec TARGET-YAML: write the project's spec with one target
spec() {
	printf 'version: 1\nname: x\ntargets:\n  a:\n%s\n' "$1" >"$P/envbuild.yaml"
}
# no_secret NAME: nothing printed holds the secret
no_secret() {
	if grep -qF "$SECRET" "$TMP/out" "$TMP/err"; then
		not_ok "$1: the secret was printed"
		cat "$TMP/out" "$TMP/err" | diag
	else
		ok "$1: the secret is not printed"
	fi
}

# requirements outside the project: absolute, climbing, through a symlink
for r in "$O/credentials" ../outside/credentials link.txt; do
	ln -sf "$O/credentials" "$P/link.txt"
	spec "    base: python:3.11-slim
    requirements: [$r]"
	run sh -c "cd '$P' && '$ENVBUILD' check envbuild.yaml"
	expect_status 1 "requirements '$r' refused"
	expect_out_contains "is outside the project directory [EB009]" "'$r' is EB009"
	no_secret "'$r'"
done

# /dev/stdin and a fifo are not regular files; reading them would hang
mkfifo "$P/fifo.txt"
spec "    base: python:3.11-slim
    requirements: [/dev/stdin, fifo.txt]"
run sh -c "cd '$P' && timeout 20 '$ENVBUILD' check envbuild.yaml </dev/null"
expect_status 1 "/dev/stdin and a fifo are refused without hanging"
expect_out_contains "'fifo.txt' is not a regular file [EB009]" "a fifo is EB009"

# an include climbing out
printf 'numpy==1.26.4\n-r ../../outside/credentials\n' >"$P/reqs/inc.txt"
spec "    base: python:3.11-slim
    requirements: [reqs/inc.txt]"
run sh -c "cd '$P' && '$ENVBUILD' check envbuild.yaml"
expect_status 1 "an -r include outside the project is refused"
expect_out_contains "reqs/inc.txt:2:4: error: 'reqs/../../outside/credentials' is outside the project directory [EB009]" \
	"the include is EB009 at its -r line"
no_secret "the include"

# a secrets file inside the project, named as requirements: not quoted
cp "$O/credentials" "$P/credentials"
spec "    base: python:3.11-slim
    requirements: [credentials]"
run sh -c "cd '$P' && '$ENVBUILD' check envbuild.yaml"
expect_status 1 "a file that is not a requirements file is an error"
expect_out_contains "'credentials' does not look like a requirements file; its content is not shown [EB218]" \
	"it is reported as EB218"
no_secret "a credentials file"
if grep -q AKIAEXAMPLE "$TMP/out"; then not_ok "a token of it was printed"; else ok "no token of it is printed"; fi

# a symlinked spec leading out of the project
printf 'version: 1\nname: x\ntargets:\n  a: {base: p:1}\nkey: %s\n' "$SECRET" >"$O/shadow.yaml"
ln -s "$O/shadow.yaml" "$P/other.envbuild.yaml"
run sh -c "cd '$P' && '$ENVBUILD' check other.envbuild.yaml"
expect_err_contains "'other.envbuild.yaml' is outside the project directory" "a symlinked spec leading out is refused"
no_secret "a symlinked spec"

# oci: bases outside the project
ln -s "$O/layout" "$P/layout-link"
unset ENVBUILD_OCI_BASES
for b in "oci:$O/layout" oci:../outside/layout oci:layout-link; do
	spec "    base: $b"
	run sh -c "cd '$P' && '$ENVBUILD' check envbuild.yaml"
	expect_out_contains "must be an OCI layout inside the project directory: '$b' [EB009]" "base '$b' is EB009"
done

# ... unless the runner names a directory for them
spec "    base: oci:$O/layout"
run sh -c "cd '$P' && ENVBUILD_OCI_BASES='/nonexistent:$O' '$ENVBUILD' check envbuild.yaml"
if grep -q EB009 "$TMP/out"; then not_ok "ENVBUILD_OCI_BASES did not allow '$O/layout'"; diag <"$TMP/out"; else ok "a base under ENVBUILD_OCI_BASES is allowed"; fi

# ${VAR}: not allowed, allowed (and redacted), in a URL's host
export SECRET
printf 'pandas==2.0.3\nnumpy==${SECRET}\n' >"$P/reqs/var.txt"
spec "    base: python:3.11-slim
    requirements: [reqs/var.txt]"
run sh -c "cd '$P' && '$ENVBUILD' check envbuild.yaml"
expect_out_contains "'\${SECRET}' is not expanded: the variable is not allowed [EB219]" "a variable nobody allowed is not expanded"
printf 'version: 1\nname: x\nrequirements_env: [SECRET]\ntargets:\n  a:\n    base: python:3.11-slim\n    requirements: [reqs/var.txt]\n' >"$P/envbuild.yaml"
run sh -c "cd '$P' && ENVBUILD_REQUIREMENTS_ENV=SECRET '$ENVBUILD' check envbuild.yaml"
expect_out_contains "\${SECRET}" "an allowed variable's value is shown as its name"
no_secret "an allowed variable"
printf 'pandas==2.0.3\nx @ https://${SECRET}.example/x-1.0-py3-none-any.whl#sha256=%064d\n' 0 >"$P/reqs/var.txt"
run sh -c "cd '$P' && ENVBUILD_REQUIREMENTS_ENV=SECRET '$ENVBUILD' check envbuild.yaml"
expect_out_contains "'\${SECRET}' is in the host of a URL and is not expanded [EB219]" "never in a URL's host"
finish
