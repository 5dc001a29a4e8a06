#!/usr/bin/env bash
# ci-robustness.sh: the robustness half of CI. .ci/run calls it after
# the README's test command. Four stages; the sanitizers, the fuzzer and
# ThreadSanitizer each build in a folder of their own, valgrind runs the
# ordinary build (./build or $ATTNVIZ_BUILD_DIR) when there is one:
#
#   1. sanitizers  build the whole tree with -DATTNVIZ_SANITIZE=address,undefined
#                  (gcc, -Werror) and run the whole ctest suite under it, leak
#                  checking on
#   2. fuzz        build tests/fuzz/fuzz_lesson with clang + libFuzzer (+ASan,
#                  UBSan) and run it for a bounded time on a copy of the
#                  committed corpus; any crash, hang, leak or sanitizer report fails
#   3. valgrind    run `attnviz check`, `attnviz trace` and (once it exists)
#                  `attnviz export` of every lesson in lessons/ under valgrind
#                  memcheck: no errors, no definite leaks
#
#   4. threads     build the engine's tests and attnviz with ThreadSanitizer
#                  and run them, and `attnviz bench` on 2 and 4 threads: the
#                  engine's thread pool hands out work across threads
#
#   tools/ci-robustness.sh [sanitize|fuzz|valgrind|threads]...   (default: all four)
#
# Environment: ATTNVIZ_FUZZ_SECONDS (default 60), ATTNVIZ_ROBUST_PREFIX (the
# build folders' prefix, default ./build-robust), JOBS (default 2).
# Debian and Ubuntu: clang, libclang-rt-14-dev and valgrind are installed with
# apt-get when missing (through sudo when not root).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
prefix=${ATTNVIZ_ROBUST_PREFIX:-$here/build-robust}
fuzz_seconds=${ATTNVIZ_FUZZ_SECONDS:-60}
jobs=${JOBS:-2}
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(sanitize fuzz valgrind threads)

say() { printf '\033[1m==> robustness: %s\033[0m\n' "$*" >&2; }
die() {
    printf 'ci-robustness: %s\n' "$*" >&2
    exit 1
}

# ---- what the stages need ------------------------------------------------
need_packages=(clang libclang-rt-14-dev valgrind xvfb xauth xdotool)
if command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    missing=()
    for p in "${need_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        sudo=()
        if [ "$(id -u)" -ne 0 ]; then
            command -v sudo >/dev/null 2>&1 || die "missing ${missing[*]} and no sudo to install them"
            sudo=(sudo)
        fi
        say "installing ${missing[*]}"
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

start=$(date +%s)
elapsed() { echo $(($(date +%s) - start))s; }

# ---- 1. the whole suite under AddressSanitizer and UBSan -------------------
stage_sanitize() {
    local b=$prefix-asan
    say "1/4 sanitizers: configuring $b (address,undefined)"
    cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_WERROR=ON \
        -DATTNVIZ_SANITIZE=address,undefined >/dev/null
    say "1/4 sanitizers: building"
    cmake --build "$b" -j "$jobs"
    say "1/4 sanitizers: ctest under ASan+UBSan+LSan"
    # halt_on_error + -fno-sanitize-recover: a report is a failing test.
    (cd "$b" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        LSAN_OPTIONS=suppressions=$here/tools/lsan.supp:print_suppressions=0 \
        ctest --output-on-failure -j "$jobs" --timeout 600)
    say "1/4 sanitizers: clean ($(elapsed))"
}

# ---- 2. the lesson fuzzer, bounded -------------------------------------------
stage_fuzz() {
    local b=$prefix-fuzz
    command -v clang >/dev/null 2>&1 || die "clang is needed for the fuzzer"
    say "2/4 fuzz: configuring $b (clang, libFuzzer, address,undefined)"
    CC=clang cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_WERROR=ON \
        -DATTNVIZ_FUZZ=ON -DATTNVIZ_SANITIZE=address,undefined >/dev/null
    cmake --build "$b" -j "$jobs" --target fuzz_lesson
    local work
    work=$(mktemp -d)
    # The committed corpus is read only; what the run finds goes to $work.
    mkdir -p "$work/corpus" "$work/artifacts"
    say "2/4 fuzz: ${fuzz_seconds}s on tests/fuzz/corpus ($(find tests/fuzz/corpus -type f | wc -l) inputs)"
    local st=0
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$b/fuzz_lesson" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -dict=tests/fuzz/lesson.dict -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" tests/fuzz/corpus >"$work/log" 2>&1 || st=$?
    grep -E '^(stat::|#[0-9]+ +DONE)' "$work/log" >&2 || true
    if [ $st -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/log"; then
        tail -n 80 "$work/log" >&2
        ls -l "$work/artifacts" >&2 || true
        for a in "$work"/artifacts/*; do
            [ -f "$a" ] || continue
            echo "--- $a (base64):" >&2
            base64 "$a" | head -c 4000 >&2
            echo >&2
        done
        die "the fuzzer found a problem (exit $st); the input is above"
    fi
    rm -rf "$work"
    say "2/4 fuzz: clean ($(elapsed))"
}

# ---- 3. attnviz under valgrind memcheck ---------------------------------------
stage_valgrind() {
    # the ordinary build (tools/setup.sh's, RelWithDebInfo: no sanitizers, with
    # debug information) when there is one, as in CI after the test command;
    # otherwise a build of its own
    local b=${ATTNVIZ_BUILD_DIR:-$here/build}
    command -v valgrind >/dev/null 2>&1 || die "valgrind is needed"
    if [ ! -f "$b/CMakeCache.txt" ]; then
        b=$prefix-valgrind
        say "3/4 valgrind: configuring $b (no sanitizers)"
        cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_WERROR=ON >/dev/null
    fi
    say "3/4 valgrind: attnviz of $b"
    cmake --build "$b" -j "$jobs" --target attnviz
    local app=$b/attnviz out
    out=$(mktemp -d)
    local vg=(valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite
        --show-leak-kinds=definite --suppressions="$here/tools/valgrind.supp")
    local export=0
    if "$app" export --help >/dev/null 2>&1; then export=1; fi
    local lessons=(lessons/*.json)
    [ -e "${lessons[0]}" ] || die "no lessons in lessons/ to run under valgrind"
    local fails=0
    for l in "${lessons[@]}"; do
        # check: exit 0 expected for every shipped lesson
        if ! "${vg[@]}" --log-file="$out/vg.log" "$app" check "$l" >/dev/null 2>"$out/err"; then
            echo "valgrind: attnviz check $l failed:" >&2
            cat "$out/err" "$out/vg.log" >&2
            fails=$((fails + 1))
        fi
        if ! "${vg[@]}" --log-file="$out/vg.log" "$app" trace "$l" >"$out/trace.json" 2>"$out/err"; then
            echo "valgrind: attnviz trace $l failed:" >&2
            cat "$out/err" "$out/vg.log" >&2
            fails=$((fails + 1))
        fi
        if [ $export = 1 ]; then
            rm -rf "$out/frames"
            # every step of every lesson, at a smaller layout than the default
            # 1920x1080: the same code paths, a third of the time under valgrind
            if ! SDL_VIDEODRIVER=dummy "${vg[@]}" --log-file="$out/vg.log" "$app" export "$l" --size 640x360 -o "$out/frames" \
                >/dev/null 2>"$out/err"; then
                echo "valgrind: attnviz export $l failed:" >&2
                cat "$out/err" "$out/vg.log" >&2
                fails=$((fails + 1))
            fi
        fi
    done
    if [ $export = 1 ]; then
        # the paged handout, PNG and PDF (cairo), of one lesson
        for sheet in "$out/handout.png" "$out/handout.pdf"; do
            if ! SDL_VIDEODRIVER=dummy "${vg[@]}" --num-callers=40 --log-file="$out/vg.log" "$app" export "${lessons[0]}" \
                --sheet "$sheet" >/dev/null 2>"$out/err"; then
                echo "valgrind: attnviz export --sheet $sheet failed:" >&2
                cat "$out/err" "$out/vg.log" >&2
                fails=$((fails + 1))
            fi
        done
    fi
    rm -rf "$out"
    [ $fails -eq 0 ] || die "$fails valgrind run(s) failed"
    if [ $export = 1 ]; then
        say "3/4 valgrind: check, trace and export of ${#lessons[@]} lessons, and a PNG and a PDF handout, clean ($(elapsed))"
    else
        say "3/4 valgrind: check and trace of ${#lessons[@]} lessons clean; export NOT covered (attnviz export --help fails) ($(elapsed))"
    fi
}

# ---- 4. the engine's threads under ThreadSanitizer ------------------------------
stage_threads() {
    local b=$prefix-tsan
    say "4/4 threads: configuring $b (-fsanitize=thread)"
    cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_WERROR=ON -DATTNVIZ_SANITIZE=thread >/dev/null
    cmake --build "$b" -j "$jobs" --target test_engine test_perf_paths test_numerics test_view attnviz
    export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
    local t
    # test_view: a View's trace computed on its worker while the test reads
    # what is published, stops it and waits for it
    for t in test_engine test_perf_paths test_numerics test_view; do
        "$b/tests/$t" >/dev/null || die "$t failed under ThreadSanitizer"
    done
    # every parallel phase (copies, projections, heads, output), with fewer
    # tasks than threads at times; n = 192 keeps it a few seconds under TSan
    "$b/attnviz" bench --n 192 --d-model 128 --heads 8 --threads 2 --reps 3 >/dev/null || die "bench --threads 2 failed"
    "$b/attnviz" bench --n 192 --d-model 128 --heads 4 --threads 4 --reps 3 >/dev/null || die "bench --threads 4 failed"
    # heads in blocks of rows, with K_h and V_h packed first (heads.c)
    "$b/attnviz" bench --n 600 --d-model 128 --heads 4 --threads 2 --reps 2 >/dev/null || die "bench (600) --threads 2 failed"
    # many short forwards: helpers that wake late and find the queue taken back
    "$b/attnviz" bench --n 64 --d-model 64 --heads 8 --threads 2 --reps 100 >/dev/null || die "bench (64) --threads 2 failed"
    say "4/4 threads: clean ($(elapsed))"
}

# Every stage runs even when an earlier one failed, so that one CI run tells
# everything; the script fails at the end if any stage did.
failed=()
for s in "${stages[@]}"; do
    case "$s" in
    sanitize | fuzz | valgrind | threads) ;;
    *) die "unknown stage '$s' (sanitize, fuzz, valgrind or threads)" ;;
    esac
    # not `if ! (stage)`: errexit is ignored inside a tested command; and
    # the subshell turns it back on, since it inherits the set +e
    set +e
    (
        set -e
        "stage_$s"
    )
    st=$?
    set -e
    if [ $st -ne 0 ]; then
        failed+=("$s")
        say "stage $s FAILED ($(elapsed))"
    fi
done
[ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]} (after $(elapsed))"
say "all clean in $(elapsed)"
