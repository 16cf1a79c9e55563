#!/bin/sh
# make-apt-repo.sh - a real signed Debian repository for the apt tests.
#
#   make-apt-repo.sh debs CACHE PKG[=VER]...   fetch .debs into CACHE with
#       `apt-get download` from the machine's configured apt sources
#       (/etc/apt/sources.list*; no mirror is named here), reusing what
#       CACHE or /var/cache/apt/archives already holds.  Prints the files.
#       With APT_DEB_OFFLINE=1 (the tests') nothing is downloaded: a .deb
#       not there yet is an error (exit 3).
#   make-apt-repo.sh build DIR SUITE DEB...    DIR/pool/ + dists/SUITE/main/
#       binary-ARCH/Packages{,.gz,.xz} (dpkg-scanpackages), a Release with
#       SHA256 and Valid-Until, signed as InRelease and Release.gpg with a
#       throwaway ed25519 key made by gpg for this repository.  Writes
#       DIR/keyring.gpg (its public key), DIR/keyring.asc (armored) and
#       DIR/other-keyring.gpg (an unrelated key, for wrong-key tests).
#   make-apt-repo.sh resign DIR SUITE          re-sign after editing Release
#
# Environment: REPO_DATE (Release Date, RFC 2822; default now),
# REPO_VALID_DAYS (default 30).  Exit 77 when a tool is missing.
set -eu

need() {
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "make-apt-repo: $t not installed" >&2; exit 77; }
	done
}

debs() {
	need apt-get
	cache=$1
	shift
	mkdir -p "$cache"
	(
		cd "$cache"
		exec 9>"$cache/.lock"
		flock 9
		for spec in "$@"; do
			name=${spec%%=*}
			name=${name%%:*}
			ver=
			case $spec in *=*) ver=${spec#*=} ;; esac
			vfile=$(printf %s "$ver" | sed 's/:/%3a/')
			pat="${name}_${vfile:-*}_*.deb"
			# shellcheck disable=SC2086 # $pat is a glob
			found=$(ls $pat 2>/dev/null | head -n 1 || true)
			if [ -z "$found" ]; then
				# shellcheck disable=SC2086
				found=$(cd /var/cache/apt/archives && ls $pat 2>/dev/null | head -n 1 || true)
				[ -n "$found" ] && found=/var/cache/apt/archives/$found
				[ -n "$found" ] && cp "$found" . && found=$(basename "$found")
			fi
			if [ -z "$found" ] && [ "${APT_DEB_OFFLINE:-0}" = 1 ]; then
				echo "make-apt-repo: $spec is not in $cache, and tests never download (scripts/fetch-test-debs fetches what they serve: tests/helpers/apt-test-roots)" >&2
				exit 3
			fi
			if [ -z "$found" ]; then
				apt-get download -q "$spec" >/dev/null 2>"$cache/.err" || {
					cat "$cache/.err" >&2
					exit 77
				}
				# shellcheck disable=SC2086
				found=$(ls $pat | head -n 1)
			fi
			echo "$cache/$found"
		done
	)
}

keygen() { # HOMEDIR NAME
	mkdir -p "$1"
	chmod 700 "$1"
	gpg --homedir "$1" --batch --quiet --passphrase '' \
		--quick-gen-key "$2 <test@envbuild.invalid>" ed25519 sign 1y 2>/dev/null
}

sign() { # DIR SUITE
	d=$1/dists/$2
	rm -f "$d/InRelease" "$d/Release.gpg"
	gpg --homedir "$1/gnupg" --batch --quiet --yes --clearsign -o "$d/InRelease" "$d/Release"
	gpg --homedir "$1/gnupg" --batch --quiet --yes -abs -o "$d/Release.gpg" "$d/Release"
}

build() {
	need dpkg-scanpackages gpg gzip xz sha256sum
	dir=$1 suite=$2
	shift 2
	mkdir -p "$dir/pool/main"
	for deb in "$@"; do
		[ -e "$dir/pool/main/$(basename "$deb")" ] || cp "$deb" "$dir/pool/main/"
	done
	archs=
	(cd "$dir" && dpkg-scanpackages -m pool /dev/null 2>/dev/null) >"$dir/all.Packages"
	for a in $(awk '/^Architecture:/ { print $2 }' "$dir/all.Packages" | sort -u); do
		[ "$a" = all ] && continue
		archs="$archs $a"
	done
	[ -n "$archs" ] || archs=" amd64"
	for a in $archs; do
		p=$dir/dists/$suite/main/binary-$a
		mkdir -p "$p"
		(cd "$dir" && dpkg-scanpackages -m -a "$a" pool /dev/null 2>/dev/null) >"$p/Packages"
		gzip -9nc "$p/Packages" >"$p/Packages.gz"
		xz -c "$p/Packages" >"$p/Packages.xz"
	done
	rm -f "$dir/all.Packages"
	release "$dir" "$suite" "$archs"
	if [ ! -d "$dir/gnupg" ]; then
		keygen "$dir/gnupg" "envbuild test repository"
		keygen "$dir/gnupg-other" "someone else"
	fi
	gpg --homedir "$dir/gnupg" --batch --quiet --yes --export -o "$dir/keyring.gpg"
	gpg --homedir "$dir/gnupg" --batch --quiet --yes --export --armor -o "$dir/keyring.asc"
	gpg --homedir "$dir/gnupg-other" --batch --quiet --yes --export -o "$dir/other-keyring.gpg"
	sign "$dir" "$suite"
	stop_agents "$dir"
}

# gpg started an agent per home directory: stop the ones this script made
stop_agents() {
	for h in "$1/gnupg" "$1/gnupg-other"; do
		[ -d "$h" ] && gpgconf --homedir "$h" --kill gpg-agent 2>/dev/null || true
	done
}

release() { # DIR SUITE ARCHS
	d=$1/dists/$2
	date=${REPO_DATE:-$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S UTC')}
	now=$(date -u -d "$date" +%s)
	until=$(LC_ALL=C date -u -d "@$((now + ${REPO_VALID_DAYS:-30} * 86400))" \
		'+%a, %d %b %Y %H:%M:%S UTC')
	{
		echo "Origin: envbuild-test"
		echo "Suite: $2"
		echo "Codename: $2"
		echo "Date: $date"
		echo "Valid-Until: $until"
		echo "Architectures:$3"
		echo "Components: main"
		echo "SHA256:"
		(cd "$d" && find main -type f | sort | while read -r f; do
			printf ' %s %s %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "$f"
		done)
	} >"$d/Release"
}

case ${1:-} in
debs) shift; debs "$@" ;;
build) shift; build "$@" ;;
resign) sign "$2" "$3"; stop_agents "$2" ;;
*) echo "usage: make-apt-repo.sh debs CACHE PKG... | build DIR SUITE DEB... | resign DIR SUITE" >&2; exit 2 ;;
esac
