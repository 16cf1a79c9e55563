#!/bin/sh
# push_inputs.sh - push refuses uncommitted changes in EVERY input: a target
# with 10 requirements files (each with an -r and a -c include) and 9
# `files` entries; an edit to the last of each kind, and to the includes of
# the last requirements file, stops the push naming the file.  (push once
# looked at the first 8 requirements files and 7 files entries only, and
# never at includes.)  Offline: the push itself goes to a closed port, so a
# clean tree is shown by an error that is not about uncommitted changes.
. "$(dirname "$0")/lib.sh"
plan 11
command -v git >/dev/null 2>&1 || { echo "1..0 # SKIP git is not installed"; exit 77; }

GIT_AUTHOR_NAME=envbuild-test GIT_AUTHOR_EMAIL=test@envbuild.invalid
GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
GIT_CONFIG_NOSYSTEM=1 ENVBUILD_HTTP_ATTEMPTS=1
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_CONFIG_NOSYSTEM \
	ENVBUILD_HTTP_ATTEMPTS
unset ENVBUILD_MIRRORS

P=$TMP/p
mkdir -p "$P/req" "$P/inc" "$P/f"
{
	printf 'version: 1\nname: many\nrepository: 127.0.0.1:1/many\ntargets:\n  app:\n    base: scratch\n'
	printf '    requirements:\n'
	for i in 1 2 3 4 5 6 7 8 9 10; do
		printf '      - req/r%s.txt\n' "$i"
		printf -- '-r ../inc/i%s.txt\n-c ../inc/c%s.txt\n' "$i" "$i" >"$P/req/r$i.txt"
		printf '# included by r%s.txt\n' "$i" >"$P/inc/i$i.txt"
		printf '# constraints of r%s.txt\n' "$i" >"$P/inc/c$i.txt"
	done
	printf '    files:\n'
	for i in 1 2 3 4 5 6 7 8 9; do
		printf '      - { src: f/f%s.txt, dest: /f/f%s.txt }\n' "$i" "$i"
		echo "file $i" >"$P/f/f$i.txt"
	done
} >"$P/envbuild.yaml"
git -C "$P" init -q && git -C "$P" add -A && git -C "$P" commit -q -m project ||
	{ not_ok "git repository"; finish; }

push() { run "$ENVBUILD" -C "$P" push --cache-dir "$TMP/cache"; }

push
if [ "$STATUS" -ne 0 ] && ! grep -q uncommitted "$TMP/err"; then
	ok "a clean tree gets past the check (the push fails at the closed port)"
else
	not_ok "clean tree: exit $STATUS"
	diag <"$TMP/err"
fi

# dirty FILE: an edit to FILE stops the push naming it; then undone
dirty() {
	echo "# edited" >>"$P/$1"
	push
	expect_status 1 "an edit to $1 stops the push"
	expect_err_contains "'$1' has uncommitted changes" "the error names $1"
	git -C "$P" checkout -q -- "$1"
}
dirty req/r10.txt
dirty inc/i10.txt
dirty inc/c10.txt
dirty f/f9.txt

rm -f "$P/envbuild.lock"
push
if [ "$STATUS" -ne 0 ] && ! grep -q uncommitted "$TMP/err"; then
	ok "undone, the tree is clean again"
else
	not_ok "after undoing: exit $STATUS"
	diag <"$TMP/err"
fi
git -C "$P" status --porcelain | grep -v envbuild.lock | grep -q . &&
	not_ok "the test left changes: $(git -C "$P" status --porcelain)" || ok "nothing else changed"
finish
