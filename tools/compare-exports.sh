#!/usr/bin/env bash
# compare-exports.sh: exports every lesson of a folder in many configurations
# with two builds of attnviz and compares the files byte for byte, so that a
# change meant to keep the pixels can show that it does.
#
#   tools/compare-exports.sh export BIN LESSONS_DIR OUT_DIR [-j N] [--quick]
#   tools/compare-exports.sh compare DIR_A DIR_B
#
# export writes OUT_DIR/<configuration>/<lesson>/*.png (and index.json) with
# BIN for every lesson file LESSONS_DIR/*.json: at 1024x768, 1280x720 and
# 1920x1080, in English and Chinese, multi-head, single-head and compare mode
# (where the lesson has two heads or more; elsewhere the refusal's exit status
# is kept); column notation, the dark and projector themes, the row and log
# weight scales, slides, a larger text scale, animation frames and a handout
# sheet at one size. Each run's exit status is kept in OUT_DIR/<configuration>/
# <lesson>.status. --quick: only 1024x768 and 1920x1080 multi-head in English
# and the projector theme in Chinese. Runs N exports at once (default 2), each
# with one encoding thread, under nice.
#
# compare lists every file that differs or exists on one side only, and
# exits 1 when there is any; it prints how many files it compared.
#
# Keep LESSONS_DIR frozen (a copy) while comparing two builds: both must read
# the same lessons.
set -euo pipefail

usage() {
    sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
}

[ $# -ge 1 ] || usage
mode=$1
shift

case "$mode" in
export)
    [ $# -ge 3 ] || usage
    bin=$(realpath "$1")
    lessons=$(realpath "$2")
    out=$3
    shift 3
    jobs=2
    quick=0
    while [ $# -gt 0 ]; do
        case "$1" in
        -j) jobs=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        *) usage ;;
        esac
    done
    mkdir -p "$out"
    out=$(realpath "$out")
    # one configuration a line: its name, then its options
    configs=()
    if [ $quick = 1 ]; then
        configs+=("1024x768-en-multi --size 1024x768 --lang en"
            "1920x1080-en-multi --size 1920x1080 --lang en"
            "1024x768-zh-projector --size 1024x768 --lang zh --theme projector")
    else
        for size in 1024x768 1280x720 1920x1080; do
            for lang in en zh; do
                for view in multi single compare; do
                    configs+=("$size-$lang-$view --size $size --lang $lang --view $view")
                done
            done
        done
        for lang in en zh; do
            configs+=("1024x768-$lang-column --size 1024x768 --lang $lang --notation column"
                "1024x768-$lang-projector --size 1024x768 --lang $lang --theme projector"
                "1024x768-$lang-column-projector-row --size 1024x768 --lang $lang --notation column --theme projector --weight-scale row")
        done
        configs+=("1024x768-en-dark-log --size 1024x768 --lang en --theme dark --weight-scale log"
            "1280x720-en-slides --size 1280x720 --lang en --slides"
            "1280x720-zh-text1.5 --size 1280x720 --lang zh --text-scale 1.5"
            "1920x1080-en-compare-text1.3 --size 1920x1080 --lang en --view compare --text-scale 1.3")
    fi
    jobsfile=$(mktemp)
    trap 'rm -f "$jobsfile"' EXIT
    for c in "${configs[@]}"; do
        name=${c%% *}
        opts=${c#* }
        for f in "$lessons"/*.json; do
            l=$(basename "$f" .json)
            echo "$name/$l|$bin export $f -o $out/$name/$l $opts -q --threads 1" >>"$jobsfile"
        done
    done
    if [ $quick = 0 ]; then
        # animation frames (a few lessons: every frame of every step) and a handout sheet
        for l in mhsa-wo-xihuan-paobu causal-mask-decoder additive-bahdanau seed001-shapes-512 key-padding; do
            [ -f "$lessons/$l.json" ] || continue
            echo "frames-1024x768/$l|$bin export $lessons/$l.json -o $out/frames-1024x768/$l --size 1024x768 --frames --fps 6 --dwell 0 -q --threads 1" >>"$jobsfile"
            echo "frames-1280x720-column/$l|$bin export $lessons/$l.json -o $out/frames-1280x720-column/$l --size 1280x720 --notation column --lang zh --frames --fps 4 --dwell 0 -q --threads 1" >>"$jobsfile"
        done
        for l in mhsa-wo-xihuan-paobu seed001-shapes-512; do
            [ -f "$lessons/$l.json" ] || continue
            mkdir -p "$out/sheet"
            echo "sheet/$l|$bin export $lessons/$l.json --sheet $out/sheet/$l.png --size 1280x720 -q --threads 1" >>"$jobsfile"
        done
    fi
    # each job: run, keep the exit status beside the files
    export out
    # shellcheck disable=SC2016
    nice -n 10 xargs -P "$jobs" -d '\n' -n 1 sh -c '
        name=${1%%|*}; cmd=${1#*|}
        mkdir -p "$out/$(dirname "$name")"
        $cmd >/dev/null 2>"$out/$name.stderr"; echo $? >"$out/$name.status"' sh <"$jobsfile"
    n=$(find "$out" -type f -name '*.png' | wc -l)
    echo "compare-exports.sh: $n PNG files under $out"
    ;;
compare)
    [ $# -eq 2 ] || usage
    a=$1
    b=$2
    total=$( (cd "$a" && find . -type f) | wc -l)
    diffs=$(diff -rq "$a" "$b" || true)
    if [ -n "$diffs" ]; then
        echo "$diffs"
        echo "compare-exports.sh: $(echo "$diffs" | wc -l) of $total files differ" >&2
        exit 1
    fi
    echo "compare-exports.sh: $total files identical"
    ;;
*) usage ;;
esac
