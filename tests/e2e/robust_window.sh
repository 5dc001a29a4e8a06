#!/usr/bin/env bash
# robust_window.sh: the classroom window survives abuse.
#
#   tests/e2e/robust_window.sh ATTNVIZ [SOURCE_DIR]
#
# Run inside an X server (CTest wraps it in xvfb-run; see tests/robust.cmake).
# Each scenario starts `attnviz show`, does something unkind to the window
# with xdotool, checks the process is still alive, then presses q and expects
# exit status 0 within a few seconds:
#
#   resize     down to 1×1 (and 0-ish sizes in between) and back, repeatedly
#   minimise   windowminimize, unmap and map again
#   keys       hundreds of key presses per second while an animation plays
#   reload     a lesson copied to a temp file, corrupted, R pressed: the window
#              stays, the error is reported; fixed again, R: reloaded; replaced
#              by a FIFO, R: "not a regular file", the window does not block
#   font       FONTCONFIG_FILE pointing to an empty config (fontconfig finds no
#              font): falls back to assets/fonts and says so
#   software   SDL_RENDER_DRIVER=software, with keys and a resize
#
# Exit status: 0 all passed, 1 a scenario failed, 77 skipped (no X server,
# no xdotool, or `attnviz show` does not exist yet).
set -uo pipefail

app=${1:?usage: robust_window.sh ATTNVIZ [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
lesson=${ATTNVIZ_E2E_LESSON:-}

skip() {
    echo "SKIP: $*"
    exit 77
}
[ -n "${DISPLAY:-}" ] || skip "no DISPLAY (run under xvfb-run)"
command -v xdotool >/dev/null 2>&1 || skip "xdotool is not installed"
"$app" show --help >/dev/null 2>&1 || skip "'attnviz show --help' fails: the window is not built yet"

if [ -z "$lesson" ]; then
    for l in "$src"/lessons/*.json; do
        [ -f "$l" ] || continue
        if "$app" check "$l" >/dev/null 2>&1; then
            lesson=$l
            break
        fi
    done
fi
[ -n "$lesson" ] || skip "no valid lesson in $src/lessons"

work=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

failures=0
fail() {
    echo "FAIL [$scenario]: $*"
    echo "--- attnviz's stderr:"
    cat "$work/err" 2>/dev/null | tail -20
    failures=$((failures + 1))
}
alive() { kill -0 "$pid" 2>/dev/null; }

# Every X client call is bounded: a helper that hangs fails the scenario
# instead of the whole test timing out.
xdo() { timeout 10 xdotool "$@" 2>/dev/null; }

# start [ENV=VALUE...] -- ARGS...: starts attnviz show, waits for its window (sets pid, win)
start() {
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift
    : >"$work/err"
    env "${envs[@]}" "$app" show --frames-dir "$work/frames" "$@" >"$work/out" 2>"$work/err" &
    pid=$!
    # SDL may replace its first window when the renderer needs another
    # visual: wait for a visible window that has drawn something (slow under
    # sanitizers: up to 60 s)
    win=
    local up=0
    for _ in $(seq 1 120); do
        alive || break
        win=$(xdo search --onlyvisible --name "^attnviz" | tail -n 1)
        if [ -n "$win" ] && draws >/dev/null; then
            up=1
            break
        fi
        sleep 0.5
    done
    if ! alive; then
        wait "$pid"
        fail "attnviz exited (status $?) before its window was up"
        pid=
        return 1
    fi
    if [ $up = 0 ]; then
        fail "no window drew anything within 60 s (windows: $(xdo search --name attnviz | tr '\n' ' '))"
        if command -v gdb >/dev/null 2>&1; then # where is it stuck?
            timeout 30 gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E '^(#|Thread)' | head -60
        fi
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        pid=
        return 1
    fi
    # without a window manager, focus by hand so that XTEST keys reach it
    xdo windowfocus "$win"
    sleep 0.3
    return 0
}

# draws: a screenshot of the window is not one flat colour (it still renders).
# On failure the screenshot is kept as $keep/robust-window-SCENARIO.png.
keep=${TMPDIR:-/tmp}
draws() {
    command -v xwd >/dev/null 2>&1 && command -v convert >/dev/null 2>&1 || return 0
    if ! timeout 20 xwd -silent -id "$win" >"$work/shot.xwd" 2>"$work/xwd.err"; then
        echo "xwd could not capture window $win: $(head -c 200 "$work/xwd.err")"
        return 1
    fi
    local sd
    sd=$(timeout 20 convert "xwd:$work/shot.xwd" -colorspace gray -format '%[fx:standard_deviation]' info: 2>/dev/null || echo 0)
    if awk -v s="$sd" 'BEGIN { exit !(s > 0.01) }'; then return 0; fi
    [ "${1:-}" = keep ] && convert "xwd:$work/shot.xwd" "$keep/robust-window-$scenario.png" 2>/dev/null
    echo "the window is one flat colour (grey std dev $sd): $keep/robust-window-$scenario.png"
    return 1
}

# finish: the window must still be alive and drawing; q must end it with status 0
finish() {
    if ! alive; then
        wait "$pid"
        fail "attnviz died (exit status $?)"
        pid=
        return 1
    fi
    local why
    sleep 0.3
    why=$(draws keep) || fail "it stopped drawing: $why"
    xdo windowfocus "$win"
    xdo key --window "$win" q
    xdo key q
    for _ in $(seq 1 100); do
        alive || break
        sleep 0.1
    done
    if alive; then
        fail "still running 10 s after q"
        kill "$pid"
        wait "$pid" 2>/dev/null
        pid=
        return 1
    fi
    wait "$pid"
    local st=$?
    pid=
    if [ $st -ne 0 ]; then
        fail "exit status $st after q, expected 0"
        return 1
    fi
    if grep -qE 'AddressSanitizer|runtime error:|LeakSanitizer' "$work/err"; then
        fail "a sanitizer reported a problem"
        return 1
    fi
    echo "ok   [$scenario]"
    return 0
}

# ---- resize down to 1×1 and back --------------------------------------------
scenario=resize
if start -- "$lesson" --autoplay; then
    for size in "1 1" "2 1" "1 2" "640 480" "1 1" "3 3" "1280 720" "1 1" "1920 1080" "1 700" "700 1" "1280 720"; do
        xdo windowsize "$win" $size
        sleep 0.15
        alive || break
    done
    finish
fi

# ---- minimise, unmap, map ------------------------------------------------------
scenario=minimise
if start -- "$lesson" --autoplay; then
    xdo windowminimize "$win"
    sleep 0.5
    xdo windowunmap "$win"
    sleep 0.5
    xdo key Right Right space # keys while hidden go nowhere, harmlessly
    xdo windowmap "$win"
    sleep 0.3
    xdo windowactivate "$win"
    sleep 0.3
    finish
fi

# ---- a storm of keys during an animation -----------------------------------------
scenario=keys
if start -- "$lesson" --autoplay; then
    # everything but q, Escape (quit), f/F11 (fullscreen is tested by hand) and s (saves frames)
    keys=(Right Left space Tab p bracketright bracketleft 1 2 3 Home End m c l t plus minus Up Down
        question h Right Right Right BackSpace Next Prior 9 equal)
    list=()
    for _ in $(seq 1 20); do list+=("${keys[@]}"); done
    t0=$(date +%s.%N)
    timeout 60 xdotool key --delay 1 "${list[@]}" 2>/dev/null
    t1=$(date +%s.%N)
    n=${#list[@]}
    rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", n / (b - a) }')
    echo "     [$scenario] $n key presses at $rate per second"
    [ "$rate" -ge 100 ] || echo "     [$scenario] note: xdotool managed fewer than 100 keys/s here"
    sleep 0.5
    finish
fi

# ---- reloading a lesson that became invalid ----------------------------------------
scenario=reload
cp "$lesson" "$work/lesson.json"
if start -- "$work/lesson.json"; then
    printf '{"format": "attnviz-lesson/1", "id": "broken", "tokens": [' >"$work/lesson.json" # truncated
    xdo key r
    sleep 1
    if ! alive; then
        fail "died on reloading a corrupted lesson"
    else
        grep -q "lesson.json" "$work/err" || fail "reloading the corrupted lesson reported no error on stderr"
        cp "$lesson" "$work/lesson.json"
        xdo key r
        sleep 1
        printf '\xff\xfe not even text' >"$work/lesson.json"
        xdo key r
        sleep 0.5
        rm -f "$work/lesson.json"
        xdo key r
        sleep 0.5
        # the lesson file replaced by a FIFO: R reports "not a regular file"
        # and keeps the old lesson; the window never blocks opening it
        mkfifo "$work/lesson.json"
        xdo key r
        sleep 1
        if ! alive; then
            fail "died on reloading a FIFO"
        elif ! grep -q "lesson.json: not a regular file" "$work/err"; then
            fail "reloading a FIFO did not say 'not a regular file'"
            finish >/dev/null
        else
            finish
        fi
        rm -f "$work/lesson.json"
    fi
fi

# ---- no font from fontconfig: the bundled one, and a word about it --------------------
scenario=font
printf '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig></fontconfig>\n' >"$work/fonts.conf"
if start FONTCONFIG_FILE="$work/fonts.conf" FONTCONFIG_PATH="$work" -- "$lesson" --autoplay; then
    xdo key Right Right
    sleep 0.5
    if ! grep -qiE 'bundled|assets/fonts' "$work/err"; then
        fail "fell back without saying so: expected stderr to mention the bundled font (assets/fonts)"
        finish >/dev/null
    else
        finish
    fi
fi

# ---- the software renderer -----------------------------------------------------------
scenario=software
if start SDL_RENDER_DRIVER=software -- "$lesson" --autoplay; then
    xdo key --delay 5 Right Right Tab space Left
    xdo windowsize "$win" 1 1
    sleep 0.2
    xdo windowsize "$win" 1024 768
    sleep 0.3
    finish
fi

if [ $failures -gt 0 ]; then
    echo "$failures scenario(s) failed"
    exit 1
fi
echo "all window scenarios passed"
exit 0
