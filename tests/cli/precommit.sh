#!/bin/sh
# precommit.sh - the envbuild-check hook under the real pre-commit: in a
# temporary git repository, a commit adding `numpy>=1.26` is refused with
# the finding shown, and one with `numpy==1.26.4` goes through.
. "$(dirname "$0")/lib.sh"
plan 8
if ! command -v pre-commit >/dev/null 2>&1; then
	not_ok "pre-commit is not installed (scripts/install-deps installs it)"
	finish
fi
export PATH="$(dirname "$ENVBUILD"):$PATH"
export PRE_COMMIT_HOME="$TMP/pre-commit-home"
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid
export GIT_CONFIG_NOSYSTEM=1 HOME="$TMP"

# the hook repository: this project's .pre-commit-hooks.yaml at a commit
hooks="$TMP/hooks"
git init -q "$hooks"
cp "$top_srcdir/.pre-commit-hooks.yaml" "$hooks/"
git -C "$hooks" add .pre-commit-hooks.yaml
git -C "$hooks" commit -qm hooks
rev=$(git -C "$hooks" rev-parse HEAD)

work="$TMP/work"
git init -q "$work"
cd "$work"
cat >.pre-commit-config.yaml <<CFG
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: envbuild-check
CFG
git add .pre-commit-config.yaml
git commit -qm "pre-commit config" --no-verify
run pre-commit install
expect_status 0 "pre-commit install"

printf 'numpy>=1.26\n' >requirements.txt
git add requirements.txt
run git commit -m "add numpy (unpinned)"
expect_status 1 "a commit with numpy>=1.26 is refused"
if grep -qF "requirements.txt:1:6: error: 'numpy>=1.26' is not an exact pin [EB202]" "$TMP/out" "$TMP/err"; then
	ok "the finding is shown with file:line:col"
else
	not_ok "the finding is not shown"
	cat "$TMP/out" "$TMP/err" | diag
fi
[ "$(git rev-list --count HEAD)" -eq 1 ] && ok "no commit was made" || not_ok "a commit was made"

printf 'numpy==1.26.4\n' >requirements.txt
git add requirements.txt
run git commit -m "add numpy (pinned)"
expect_status 0 "a commit with numpy==1.26.4 goes through"
[ "$(git rev-list --count HEAD)" -eq 2 ] && ok "the commit is there" || not_ok "no commit"

printf 'FROM python:latest\n' >Dockerfile
git add Dockerfile
run git commit -m "add a Dockerfile on latest"
expect_status 1 "a Dockerfile on python:latest is refused"

# files the hook does not match never reach envbuild
printf 'numpy>=1.26 is what the docs say\n' >NOTES.md
git rm -q --cached Dockerfile
git add NOTES.md
run git commit -m "notes"
expect_status 0 "files outside the hook's pattern are not checked"
finish
