#!/usr/bin/env bash
# install.sh BUILD_DIR: attnviz installed with `cmake --install` works with
# its source and build trees out of reach.
#
# Installs into a temporary prefix, then runs the installed program in a
# mount namespace where the source tree (which holds the build tree) and
# the system's fonts are hidden under empty folders: list, check, trace and
# export must find the lessons and the bundled fonts in PREFIX/share/attnviz
# beside the program, from another folder. Then the same through
# ATTNVIZ_DATA_DIR with the data moved elsewhere. Exit 77 (skipped) when
# this system cannot make a mount namespace (unshare).
set -euo pipefail
build=$(cd "${1:?usage: install.sh BUILD_DIR}" && pwd)
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
[ -d "$src" ] || { echo "FAIL: no source tree in $build/CMakeCache.txt" >&2; exit 1; }

if ! unshare --mount --map-root-user true 2>/dev/null; then
    echo "SKIP: cannot make a mount namespace here (unshare --mount --map-root-user), so the source tree cannot be hidden"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case "$tmp/" in "$src"/*) echo "FAIL: the temporary folder $tmp is inside the source tree" >&2; exit 1 ;; esac
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
fail() { echo "FAIL: $*" >&2; exit 1; }

for f in bin/attnviz share/attnviz/lessons/mhsa-wo-xihuan-paobu.json share/attnviz/lessons/FORMAT.md \
    share/attnviz/fonts/DejaVuSans.ttf share/attnviz/fonts/NotoSansCJKsc-Subset.otf \
    share/attnviz/fonts/LICENSE-NotoSansCJK.txt share/applications/attnviz.desktop \
    share/icons/hicolor/scalable/apps/attnviz.svg share/icons/hicolor/48x48/apps/attnviz.png; do
    [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
if grep -q "^ATTNVIZ_HELP2MAN:FILEPATH=/" "$build/CMakeCache.txt"; then
    [ -f "$prefix/share/man/man1/attnviz.1.gz" ] || fail "no man page installed"
    zcat "$prefix/share/man/man1/attnviz.1.gz" | grep -q '^\.SS "attnviz export"' || fail "the man page has no 'attnviz export' section"
fi
cp "$src/lessons/causal-mask-decoder.json" "$tmp/own-lesson.json"

# run DATA_ENV CMD...: the installed program in a namespace where the source
# tree and the system's fonts are empty folders, from the folder $tmp/work
run() {
    local data_env=$1
    shift
    mkdir -p "$tmp/work"
    unshare --mount --map-root-user bash -c '
        src=$1 data_env=$2; shift 2
        mount -t tmpfs none "$src"
        for d in /usr/share/fonts /usr/local/share/fonts /etc/fonts; do [ -d "$d" ] && mount -t tmpfs none "$d"; done
        cd "$0"
        if [ -n "$data_env" ]; then export ATTNVIZ_DATA_DIR=$data_env; fi
        exec "$@"' "$tmp/work" "$src" "$data_env" "$@"
}
check_all() {
    local data_env=$1 bin=$2 data=$3
    run "$data_env" sh -c '[ ! -e "$1/CMakeLists.txt" ]' _ "$src" || fail "the source tree is still visible"
    run "$data_env" "$bin" --help >"$tmp/help.txt"
    grep -qF "($data/lessons)" "$tmp/help.txt" || fail "--help does not name $data/lessons: $(grep -F lessons "$tmp/help.txt")"
    run "$data_env" "$bin" list >"$tmp/list.txt" || fail "attnviz list failed"
    n=$(wc -l <"$tmp/list.txt")
    want=$(ls "$src"/lessons/*.json | wc -l)
    [ "$n" -eq "$want" ] || fail "attnviz list shows $n lessons, the source tree has $want"
    run "$data_env" "$bin" check mhsa-wo-xihuan-paobu "$tmp/own-lesson.json" >/dev/null || fail "attnviz check failed"
    run "$data_env" "$bin" trace self-attention-xihuan-paobu >"$tmp/trace.json" || fail "attnviz trace failed"
    grep -q '"attnviz-trace/1"' "$tmp/trace.json" || fail "attnviz trace wrote no trace"
    rm -rf "$tmp/work/out"
    run "$data_env" "$bin" export mhsa-wo-xihuan-paobu -o out --steps 1-3 --lang zh --size 640x360 -q ||
        fail "attnviz export failed with only the installed fonts"
    [ "$(ls "$tmp/work/out"/*.png | wc -l)" -eq 3 ] || fail "attnviz export did not write 3 PNGs"
    rm -rf "$tmp/work"
}

check_all "" "$prefix/bin/attnviz" "$prefix/share/attnviz"
echo "installed: list, check, trace and export work with the source tree hidden"

# The data elsewhere, named by ATTNVIZ_DATA_DIR; the program alone in its prefix.
mv "$prefix/share/attnviz" "$tmp/data"
check_all "$tmp/data" "$prefix/bin/attnviz" "$tmp/data"
echo "ATTNVIZ_DATA_DIR: list, check, trace and export work with the data moved"
