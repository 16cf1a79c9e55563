#!/bin/sh
# build.sh - build the libFuzzer targets (fuzz/fuzz_*.c) into fuzz/bin/.
#
# The library sources are the ones Makefile.am lists in
# libenvbuild_la_SOURCES, compiled again with clang's coverage and
# sanitizer instrumentation into fuzz/bin/obj/ (only what changed since the
# last run), archived, and linked into one binary per target:
#
#   clang -g -O1 -fsanitize=fuzzer,address,undefined
#
# (the library objects get -fsanitize=fuzzer-no-link, the same
# instrumentation without libFuzzer's main).  UBSan findings abort, so they
# count as crashes.  Needs ./configure to have run (config.h) and the
# pkg-config files of the libraries envbuild links.
#
# Target NAME is fuzz/fuzz_NAME.c, built into fuzz/bin/NAME; its seeds are
# fuzz/corpus/NAME/ and its crash reproducers fuzz/regressions/NAME/.
#
# usage: fuzz/build.sh [NAME...]   (default: every fuzz/fuzz_*.c)
# env:   CC (default clang), JOBS (default: nproc), EXTRA_CFLAGS
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
bin=$here/bin
obj=$bin/obj
CC=${CC:-clang}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

[ -f "$top/config.h" ] || {
	echo "build.sh: $top/config.h is missing: run ./configure first" >&2
	exit 2
}
command -v "$CC" >/dev/null || { echo "build.sh: $CC not found" >&2; exit 2; }

PKGS="libarchive libcurl libssl libcrypto jansson libgit2 yaml-0.1 zlib libzstd"
# gzip layers are written and read with libdeflate when configure found it
grep -q '^#define HAVE_LIBDEFLATE 1' "$top/config.h" && PKGS="$PKGS libdeflate"
PKG_CFLAGS=$(pkg-config --cflags $PKGS)
PKG_LIBS=$(pkg-config --libs $PKGS)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
mkdir -p "$obj"
# ENVBUILD_VERSION through a header: a quoted -D does not survive xargs
printf '#define ENVBUILD_VERSION "fuzz"\n' >"$obj/version.h"
CFLAGS="-g -O1 -std=gnu11 -pthread $SAN -I$top -I$top/src -include $obj/version.h $PKG_CFLAGS ${EXTRA_CFLAGS:-}"

# libenvbuild_la_SOURCES: the continued assignment in Makefile.am, .c only
sources=$(awk '
	/^libenvbuild_la_SOURCES[ \t]*=/ { on = 1; sub(/^[^=]*=/, "") }
	on { line = $0; more = sub(/\\[ \t]*$/, "", line)
	     n = split(line, w, /[ \t]+/)
	     for (i = 1; i <= n; i++) if (w[i] ~ /\.c$/) print w[i]
	     if (!more) exit }' "$top/Makefile.am")
[ -n "$sources" ] || { echo "build.sh: no libenvbuild_la_SOURCES in Makefile.am" >&2; exit 2; }

mkdir -p "$obj"
# an object is rebuilt when its source, any header or config.h is newer
newest_header=$(find "$top/src" "$top/config.h" -name '*.h' -newer "$obj/.stamp" 2>/dev/null | head -n 1 || true)
[ -f "$obj/.stamp" ] || newest_header=all
echo "$CFLAGS" >"$obj/.flags.new"
cmp -s "$obj/.flags.new" "$obj/.flags" 2>/dev/null || newest_header=all
mv "$obj/.flags.new" "$obj/.flags"

todo=""
objs=""
for s in $sources; do
	o=$obj/$(echo "$s" | sed 's|/|_|g; s|\.c$|.o|')
	objs="$objs $o"
	if [ -n "$newest_header" ] || [ ! -f "$o" ] || [ "$top/$s" -nt "$o" ]; then
		todo="$todo $s"
	fi
done
if [ -n "$todo" ]; then
	echo "build.sh: compiling $(echo $todo | wc -w) library sources" >&2
	# shellcheck disable=SC2086
	printf '%s\n' $todo | xargs -P "$JOBS" -I{} sh -c '
		o="$1/$(echo "$2" | sed "s|/|_|g; s|\.c\$|.o|")"
		exec '"$CC"' '"$CFLAGS"' -fsanitize=fuzzer-no-link -c "$3/$2" -o "$o"' sh "$obj" {} "$top"
fi
touch "$obj/.stamp"
rm -f "$obj/libenvbuild-fuzz.a"
# shellcheck disable=SC2086
ar rcs "$obj/libenvbuild-fuzz.a" $objs

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi
for t in $targets; do
	t=${t%.c}
	t=${t##*/}
	t=${t#fuzz_}
	[ -f "$here/fuzz_$t.c" ] || { echo "build.sh: no target $t (fuzz/fuzz_$t.c)" >&2; exit 2; }
	extra=""
	# the requirements-file target keeps includes inside its own directory
	[ "$t" = reqfile ] && extra="-Wl,--wrap=open,--wrap=open64"
	echo "build.sh: $t" >&2
	# shellcheck disable=SC2086
	$CC $CFLAGS -Wall -Wextra -Werror -fsanitize=fuzzer "$here/fuzz_$t.c" "$obj/libenvbuild-fuzz.a" \
		$PKG_LIBS -lm $extra -o "$bin/$t"
done
echo "build.sh: binaries in $bin" >&2
