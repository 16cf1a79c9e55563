#!/bin/sh
# lock.sh - envbuild.lock end to end, in temporary git repositories holding
# examples/churn (built on the Debian test base with Debian's wheels, as in
# build.sh): the lock is canonical JSON; `lock --check`, `check` (EB013) and
# `build --locked` name the pin that changed and leave the lock alone;
# `lock` makes it fresh again and `--locked`/`--frozen` builds use it;
# `lock --commit` commits the lockfile alone; an ignored or untracked lock is
# warned about; a dirty tree blocks `push`, a clean one pushes to a real
# registry and records ref, digest and HEAD; `resolve` pins examples/churn's
# job.yaml to those digests; two clones at different paths lock
# byte-identically; and the commands of the example's CI pipeline run in a
# fresh clone.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/helpers/registry-env.sh"
plan 73

E=$ENVBUILD
need_base
CACHE=$TMP/cache

# git: identity from a private global config (lock --commit takes the
# author from it), nothing from the caller's environment
export HOME="$TMP/home" GIT_CONFIG_NOSYSTEM=1
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL \
	GIT_DIR GIT_WORK_TREE DOCKER_CONFIG REGISTRY_AUTH_FILE
mkdir -p "$HOME"
git config --global user.name "Lock Tester"
git config --global user.email "lock-tester@example.invalid"
git config --global init.defaultBranch main
git config --global advice.detachedHead false

# a plain registry on loopback for the push steps
REG=false
if registry_require 2>"$TMP/reg.err" && registry_start plain 2>>"$TMP/reg.err"; then
	REG=true
	REPO=$REGISTRY/ml/churn
else
	REPO=localhost:5000/ml/churn
	diag <"$TMP/reg.err"
fi

# mkproject DIR: examples/churn on the test base, Debian's wheels as the
# index, pushing to the test registry; a git repository, all committed
mkproject() {
	mkdir -p "$1"
	cp -r "$top_srcdir/tests/fixtures/churn-python/." "$1/"
	rm -rf "$1/out" "$1/envbuild.lock" "$1/job.resolved.yaml"
	sed -i -e "s|base: python:3.11-slim-bookworm|base: oci:$BASE:bookworm-python3|" \
		-e "s|^index: .*|index: /usr/share/python-wheels|" \
		-e "s|^repository: .*|repository: $REPO|" "$1/envbuild.yaml"
	git init -q "$1"
	git -C "$1" add -A
	git -C "$1" commit -qm "churn example"
}

# helpers ------------------------------------------------------------------
# expect_said TEXT NAME: stdout or stderr of the last run contains TEXT
expect_said() {
	if cat "$TMP/out" "$TMP/err" | grep -qF -- "$1"; then ok "$2"; else
		not_ok "$2: output lacks '$1'"
		{ echo "stdout:"; cat "$TMP/out"; echo "stderr:"; cat "$TMP/err"; } | diag
	fi
}
# same_file A B NAME
same_file() {
	if cmp -s "$1" "$2"; then ok "$3"; else
		not_ok "$3"
		diff -u "$2" "$1" | head -40 | diag
	fi
}
# canonical FILE: sorted keys, 2-space indent, LF, final newline
canonical() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d, indent=2, sort_keys=True))' \
		"$1" >"$TMP/canon" 2>&1 && cmp -s "$1" "$TMP/canon"
}
# lockq EXPR: evaluate a Python expression over the lock `d` of $P
lockq() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$P/envbuild.lock" "$1"
}
digest() { lockq "d['targets']['$1']['image']['digest']"; }
# add_pin FILE NAME VERSION WHEEL: append an exact pin, with its sha256 when
# the file is in hash mode (all or nothing, EB211)
add_pin() {
	if grep -q -- '--hash' "$1"; then
		printf '%s==%s \\\n    --hash=sha256:%s\n' "$2" "$3" "$(sha256sum "$4" | cut -d' ' -f1)" >>"$1"
	else
		printf '%s==%s\n' "$2" "$3" >>"$1"
	fi
}
eb() { run "$E" -C "$P" "$@"; }

P=$TMP/work/churn
mkproject "$P"

# -- 1. a first lock ----------------------------------------------------------
eb lock --cache-dir "$CACHE"
expect_status 0 "envbuild lock"
[ -f "$P/envbuild.lock" ] && ok "envbuild.lock written next to the spec" || not_ok "no envbuild.lock"
canonical "$P/envbuild.lock" && ok "the lock is canonical JSON (sorted keys, 2-space indent, LF, final newline)" ||
	{ not_ok "the lock is not canonical"; diff "$P/envbuild.lock" "$TMP/canon" | head -20 | diag; }
expect_err_contains "warning: envbuild.lock is not tracked" "an untracked lockfile: a warning"
TRAIN=$(digest training)
INFER=$(digest inference)
expect_out_contains "$TRAIN" "lock prints the training digest it recorded"
expect_out_contains "$INFER" "lock prints the inference digest it recorded"
lockq "sorted(p['name']+'=='+p['version'] for p in d['targets']['training']['packages']['linux/amd64'])" |
	grep -qx "\['pip==23.0.1', 'setuptools==66.1.1', 'wheel==0.38.4'\]" &&
	ok "training packages: every pin with its exact wheel" || not_ok "training packages wrong: $(lockq "d['targets']['training']['packages']")"

eb lock --check
expect_status 0 "lock --check: fresh"
[ -z "$OUT$ERR" ] && ok "lock --check prints nothing when fresh" || { not_ok "lock --check printed"; echo "$OUT$ERR" | diag; }
eb check
expect_status 0 "envbuild check passes with the lock"
git -C "$P" add envbuild.lock && git -C "$P" commit -qm "lock"

# -- 2. a changed pin makes the lock stale ------------------------------------
cp "$P/envbuild.lock" "$TMP/lock.before"
sed -i 's/^setuptools==66\.1\.1/setuptools==66.1.0/' "$P/requirements-train.txt"
line=$(grep -n '^setuptools==' "$P/requirements-train.txt" | cut -d: -f1)
eb lock --check
expect_status 1 "lock --check after setuptools 66.1.1 -> 66.1.0"
expect_said "requirements-train.txt:$line" "lock --check names the changed pin's file:line"
expect_said "66.1.0" "lock --check names the new version"
expect_said "66.1.1" "lock --check names the locked version"
eb build --locked --cache-dir "$CACHE"
expect_status 1 "build --locked refuses the stale lock"
expect_said "setuptools is pinned to 66.1.0 at requirements-train.txt:$line" "build --locked names the changed pin"
same_file "$P/envbuild.lock" "$TMP/lock.before" "build --locked left the lock byte-identical"
eb check
expect_status 1 "envbuild check fails on the stale lock"
expect_out_contains "[EB013]" "check reports EB013"
expect_out_contains "setuptools" "EB013 names the pin"
eb lock --cache-dir "$CACHE"
expect_status 1 "lock cannot resolve setuptools==66.1.0 (Debian ships one version)"
same_file "$P/envbuild.lock" "$TMP/lock.before" "a failed lock leaves the lock as it was"
git -C "$P" checkout -q requirements-train.txt

# a change that resolves: inference gets pip too
add_pin "$P/requirements-infer.txt" pip 23.0.1 /usr/share/python-wheels/pip-23.0.1-py3-none-any.whl
pline=$(grep -n '^pip==' "$P/requirements-infer.txt" | cut -d: -f1)
eb lock --check
expect_status 1 "lock --check after adding pip==23.0.1 to requirements-infer.txt"
expect_said "pip==23.0.1 (requirements-infer.txt:$pline)" "lock --check names the new pin at file:line"
eb build --locked --cache-dir "$CACHE"
expect_status 1 "build --locked refuses it"
expect_said "requirements-infer.txt:$pline" "build --locked names the new pin"
same_file "$P/envbuild.lock" "$TMP/lock.before" "build --locked left the lock byte-identical"
eb build --frozen --cache-dir "$CACHE"
expect_status 1 "build --frozen refuses a stale lock too"
eb check
expect_out_contains "[EB013]" "check reports EB013"

# -- 3. lock again: fresh ------------------------------------------------------
eb lock --cache-dir "$CACHE"
expect_status 0 "envbuild lock re-locks the stale lock"
if [ "$STATUS" -ne 0 ]; then
	echo "working around: removing envbuild.lock and locking from scratch" | diag
	rm -f "$P/envbuild.lock"
	"$E" -C "$P" lock --cache-dir "$CACHE" >/dev/null 2>&1
fi
eb lock --check
expect_status 0 "lock --check: fresh again"
lockq "[p['name'] for p in d['targets']['inference']['packages']['linux/amd64']]" | grep -qx "\['pip', 'wheel'\]" &&
	ok "the lock has pip for inference now" || not_ok "inference packages: $(lockq "d['targets']['inference']['packages']")"
canonical "$P/envbuild.lock" && ok "still canonical" || not_ok "not canonical"
cp "$P/envbuild.lock" "$TMP/lock.fresh"
eb build --locked --cache-dir "$CACHE" --format=json
expect_status 0 "build --locked"
python3 -c 'import json,sys; b={t["name"]: t["digest"] for t in json.load(open(sys.argv[1]))["targets"]}; l=json.load(open(sys.argv[2]))["targets"]; assert all(b[t]==l[t]["image"]["digest"] for t in ("training","inference")), (b,)' \
	"$TMP/out" "$P/envbuild.lock" 2>"$TMP/py.err" && ok "build --locked gives the locked digests" || { not_ok "digests differ"; diag <"$TMP/py.err"; }
same_file "$P/envbuild.lock" "$TMP/lock.fresh" "build --locked did not change the lock"
eb build --frozen --cache-dir "$CACHE"
expect_status 0 "build --frozen"
same_file "$P/envbuild.lock" "$TMP/lock.fresh" "build --frozen did not change the lock"
git -C "$P" add -A && git -C "$P" commit -qm "inference: pip"

# -- 4. lock --commit ---------------------------------------------------------
OLD_INFER=$(digest inference)
printf '{"w": 2.05, "b": -0.1}\n' >"$P/model/model.json"        # modified, not staged
printf '\nA note that is staged, not committed.\n' >>"$P/README.md" # staged
git -C "$P" add README.md
before=$(git -C "$P" rev-parse HEAD)
eb lock --commit --cache-dir "$CACHE"
expect_status 0 "lock --commit after a change"
INFER=$(digest inference)
TRAIN=$(digest training)
[ "$INFER" != "$OLD_INFER" ] && ok "the new model changed the inference digest" || not_ok "inference digest unchanged"
[ "$(git -C "$P" rev-list --count "$before..HEAD")" = 1 ] && ok "one commit made" || not_ok "$(git -C "$P" rev-list --count "$before..HEAD") commits made"
files=$(git -C "$P" show --name-only --format= HEAD)
[ "$files" = envbuild.lock ] && ok "the commit holds envbuild.lock only" || { not_ok "the commit holds: $files"; }
git -C "$P" log -1 --format=%B >"$TMP/msg"
grep -q training "$TMP/msg" && grep -q inference "$TMP/msg" && grep -qF "$TRAIN" "$TMP/msg" && grep -qF "$INFER" "$TMP/msg" &&
	ok "the message lists the targets and their digests" || { not_ok "message lacks targets/digests"; diag <"$TMP/msg"; }
[ "$(git -C "$P" log -1 --format='%an <%ae>')" = "Lock Tester <lock-tester@example.invalid>" ] &&
	ok "author from git config" || not_ok "author: $(git -C "$P" log -1 --format='%an <%ae>')"
[ "$(git -C "$P" diff --cached --name-only)" = README.md ] && ok "the staged README.md is still staged, not committed" ||
	not_ok "staged: $(git -C "$P" diff --cached --name-only)"
[ "$(git -C "$P" diff --name-only)" = model/model.json ] && ok "the modified model stays modified" ||
	not_ok "modified: $(git -C "$P" diff --name-only)"
[ -z "$(git -C "$P" status --porcelain envbuild.lock)" ] && ok "the committed lock is the one on disk" || not_ok "envbuild.lock differs from HEAD"
git -C "$P" commit -qam "model v2"

# -- 5. an ignored lock -------------------------------------------------------
echo envbuild.lock >"$P/.gitignore"
git -C "$P" rm -q --cached envbuild.lock
eb lock --cache-dir "$CACHE"
expect_status 0 "lock with envbuild.lock in .gitignore"
expect_err_contains "warning: envbuild.lock is ignored by git" "an ignored lockfile: a warning"
rm "$P/.gitignore"
git -C "$P" reset -q -- envbuild.lock
[ -z "$(git -C "$P" status --porcelain)" ] || { echo "tree not clean:"; git -C "$P" status --porcelain; } | diag

# -- 6. two clones at different paths lock the same ----------------------------
git clone -q "$P" "$TMP/x/one"
git clone -q "$P" "$TMP/y/deeper/path/two"
rm "$TMP/x/one/envbuild.lock" "$TMP/y/deeper/path/two/envbuild.lock"
run "$E" -C "$TMP/x/one" lock --cache-dir "$CACHE"
expect_status 0 "lock in clone one"
cp "$TMP/out" "$TMP/one.out"
run "$E" -C "$TMP/y/deeper/path/two" lock --cache-dir "$TMP/cache-two"
expect_status 0 "lock in clone two (elsewhere, cold cache)"
same_file "$TMP/y/deeper/path/two/envbuild.lock" "$TMP/x/one/envbuild.lock" "the two clones' locks are byte-identical"
same_file "$TMP/out" "$TMP/one.out" "and report the same image digests"
same_file "$TMP/x/one/envbuild.lock" "$P/envbuild.lock" "and equal the committed lock"

# -- 7. push: a dirty tree is refused, a clean one pushed ---------------------
if $REG; then
	echo "# tuned, not committed" >>"$P/requirements-infer.txt"
	eb push --cache-dir "$CACHE"
	expect_status 1 "push with an uncommitted requirements change"
	expect_err_contains "requirements-infer.txt" "the dirty file is named"
	curl -s "$REGISTRY_URL/v2/ml/churn/tags/list" >"$TMP/tags"
	grep -q '"training"\|"inference"' "$TMP/tags" && { not_ok "the refused push pushed tags"; diag <"$TMP/tags"; } ||
		ok "nothing was tagged in the registry"
	git -C "$P" checkout -q requirements-infer.txt

	HEAD=$(git -C "$P" rev-parse HEAD)
	# committing model v2 moved the images' `created` (the last commit that
	# changed an input): the digests to expect are the lock's as of now
	TRAIN=$(digest training)
	INFER=$(digest inference)
	eb push --cache-dir "$CACHE"
	expect_status 0 "push from a clean tree (out/ untracked is fine)"
	expect_out_contains "$REPO@$TRAIN" "training pushed as REPO@digest"
	expect_out_contains "$REPO@$INFER" "inference pushed as REPO@digest"
	python3 - "$P/envbuild.lock" "$REPO" "$HEAD" >"$TMP/py.err" 2>&1 <<'PY' && ok "the lock records pushed: ref, digest, revision = HEAD" || { not_ok "pushed records wrong"; diag <"$TMP/py.err"; }
import json, sys
d = json.load(open(sys.argv[1]))
for t in ("training", "inference"):
    img = d["targets"][t]["image"]
    want = {"ref": f"{sys.argv[2]}:{t}", "digest": img["digest"], "revision": sys.argv[3]}
    assert want in img.get("pushed", []), (t, img.get("pushed"))
PY
	canonical "$P/envbuild.lock" && ok "the lock is still canonical after push" || not_ok "not canonical after push"
	run skopeo inspect --tls-verify=false "docker://$REPO:training"
	expect_out_contains "\"Digest\": \"$TRAIN\"" "the registry's training tag has the locked digest"

	# -- 8. resolve the example's job.yaml ------------------------------------
	run sh -c "cd '$P' && '$E' resolve job.yaml"
	expect_status 0 "resolve job.yaml"
	sed -e "s|^\( *image: \)envbuild://training\$|\1$REPO@$TRAIN|" \
		-e "s|^\( *image: \)envbuild://inference\$|\1$REPO@$INFER|" "$P/job.yaml" >"$TMP/job.want"
	[ "$(grep -c '^ *image: .*@sha256:' "$TMP/job.want")" = 2 ] && ok "the example's job.yaml has two envbuild:// images" ||
		not_ok "the example's job.yaml should have image: envbuild://training and envbuild://inference"
	same_file "$TMP/out" "$TMP/job.want" "envbuild://training and envbuild://inference become REPO@sha256:..., the rest byte for byte"
	run "$E" check "$P/job.yaml"
	expect_status 0 "envbuild check accepts the example's job.yaml"

	# -- 9. the example's CI pipeline, in a fresh clone -----------------------
	git -C "$P" commit -qm "record push" envbuild.lock
	git clone -q "$P" "$TMP/ci"
	C=$TMP/ci
	run "$E" -C "$C" check --format=github
	expect_status 0 "ci: check --format=github"
	run "$E" -C "$C" lock --check
	expect_status 0 "ci: lock --check"
	run "$E" -C "$C" build --locked --cache-dir "$TMP/cache-ci"
	expect_status 0 "ci: build --locked (cold cache)"
	run "$E" -C "$C" push --locked --cache-dir "$TMP/cache-ci"
	expect_status 0 "ci: push --locked"
	run sh -c "cd '$C' && '$E' resolve job.yaml"
	expect_status 0 "ci: resolve job.yaml"
	same_file "$TMP/out" "$TMP/job.want" "ci: the resolved job names the same digests"
else
	for _ in $(seq 1 19); do not_ok "no registry (docker-registry, openssl, curl needed)"; done
fi
finish
