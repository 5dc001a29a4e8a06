#!/usr/bin/env bash
# corpus.sh: keep the committed fuzz corpus (tests/fuzz/corpus) small and useful.
#
#   tests/fuzz/corpus.sh seed                 copy lessons/*.json, tests/lessons/*.json and
#                                             tests/bad_lessons/* in, named by content (sha1)
#   tests/fuzz/corpus.sh merge FUZZER DIR...  add the inputs of DIR... that reach new
#                                             coverage (libFuzzer -merge=1), then re-minimise
#                                             the whole corpus into as few files as keep it
#   tests/fuzz/corpus.sh size                 files and bytes
#
# Inputs that found bugs live in tests/fuzz/regressions (named after the bug)
# and are never minimised away.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
corpus=$here/tests/fuzz/corpus
cmd=${1:-size}
[ $# -gt 0 ] && shift

add() { # file: copy into the corpus under its sha1
    local h
    h=$(sha1sum "$1" | cut -d' ' -f1)
    [ -e "$corpus/$h" ] || cp "$1" "$corpus/$h"
}

case "$cmd" in
seed)
    shopt -s nullglob
    for f in "$here"/lessons/*.json "$here"/tests/lessons/*.json "$here"/tests/bad_lessons/*; do
        case "$f" in *.expected) continue ;; esac
        [ -f "$f" ] && add "$f"
    done
    "$0" size
    ;;
merge)
    fuzzer=$1
    shift
    tmp=$(mktemp -d)
    # 1. snapshot the sources: a running fuzzer deletes files from its corpus
    #    as it reduces them, and -merge stops at the first missing file
    srcs=()
    i=0
    for d in "$@"; do
        i=$((i + 1))
        mkdir "$tmp.src$i"
        cp -r "$d"/. "$tmp.src$i"/
        srcs+=("$tmp.src$i")
    done
    # 2. the committed corpus first so its inputs are kept whenever they add coverage
    "$fuzzer" -merge=1 -timeout=10 -rss_limit_mb=2048 "$tmp" "$corpus" "${srcs[@]}" 2>"$tmp.log" ||
        { tail -20 "$tmp.log" >&2; exit 1; }
    rm -rf "${srcs[@]}"
    # 3. always keep the lessons themselves: they are the readable seeds
    find "$corpus" -type f -delete
    cp "$tmp"/* "$corpus"/
    rm -rf "$tmp" "$tmp.log"
    "$0" seed
    ;;
size)
    printf '%s files, %s bytes\n' "$(find "$corpus" -type f | wc -l)" "$(du -sb "$corpus" | cut -f1)"
    ;;
*)
    echo "corpus.sh: unknown command '$cmd' (seed, merge or size)" >&2
    exit 2
    ;;
esac
