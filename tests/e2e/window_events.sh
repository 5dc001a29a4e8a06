#!/usr/bin/env bash
# window_events.sh: thousands of random keys and mouse events in the real
# window, in edit mode, compare mode, column notation and the log scale.
#
#   tests/e2e/window_events.sh ATTNVIZ [SEED] [EVENTS]
#
# Run inside an X server (CTest wraps it in xvfb-run; see tests/robust.cmake).
# Four scenarios each open `attnviz show` on a small lesson (two heads, a
# causal mask; or cross-attention with a padding mask) and send it EVENTS / 4
# events (default 3200 in all) drawn from a generator seeded with SEED
# (default 27): clicks, double-clicks, drags (with and without Shift), the
# wheel both ways, numbers and token names typed, Enter, Esc, Tab, arrows,
# Backspace, Ctrl+Z / Ctrl+Y, F2 / Insert / Delete, K, < and >, E, O, R
# (reload), Ctrl+S (save as), the view's keys (steps, heads, M, C, N, W,
# L, T, A, +, −, ?), and the window resized.
#
# The events go in bursts of 1 to 12. Before each burst the window is
# stopped (SIGSTOP) and after it continued, so that the whole burst reaches
# it at once, as events reach a window that is busy: it then handles them
# one after another with no frame drawn between them, and a change that
# replaces the lesson's numbers (a mask cell clicked, Enter, R) is followed
# by events aimed at the last frame's pixels. Which events and where is
# decided by the seed alone, so a failure reproduces with the same seed.
#
# A scenario fails when the window dies, exits with a status other than 0,
# stops drawing, or when stderr holds a sanitizer report (build with
# -DATTNVIZ_SANITIZE=address,undefined, as tools/ci-robustness.sh does). Esc
# or an edit that leaves the window may quit it with status 0: it is then
# opened again and the events go on.
#
# Every lesson Ctrl+S saved must then pass `attnviz check`.
#
# Exit status: 0 all passed, 1 a scenario failed, 77 skipped (no X server,
# no xdotool).
set -uo pipefail

app=${1:?usage: window_events.sh ATTNVIZ [SEED] [EVENTS]}
seed=${2:-27}
total=${3:-3200}

skip() {
    echo "SKIP: $*"
    exit 77
}
[ -n "${DISPLAY:-}" ] || skip "no DISPLAY (run under xvfb-run)"
command -v xdotool >/dev/null 2>&1 || skip "xdotool is not installed"

work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then
        kill -CONT "$pid" 2>/dev/null
        kill "$pid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT
export SDL_VIDEODRIVER=x11
# what the xdotool script runs to stop and continue the window (the shell's kill)
printf '#!/bin/sh\nkill -"$1" "$2"\n' >"$work/signal"

# Two heads, a causal mask, a condition that reads a token and a number.
cat >"$work/heads.json" <<'EOF'
{
  "format": "attnviz-lesson/1",
  "id": "window-events-heads",
  "title": {"en": "Random events: two heads", "zh": "随机事件：两个头"},
  "tokens": ["我", "喜欢", "跑步", "x", "y"],
  "d_model": 8,
  "heads": 2,
  "seed": 27,
  "mask": "causal",
  "narration": {
    "softmax": {"when": "{token:1} == 喜欢 && {value:X[0][0]} < 2",
                "en": "Row 0 puts {row_max_weight} on {row_max_token}.",
                "zh": "第 0 行把 {row_max_weight} 给了{row_max_token}。"},
    "scores": {"en": "Scores of head {head}: {value:scores[0][0]}.", "zh": "头 {head} 的分数：{value:scores[0][0]}。"}
  }
}
EOF
# Cross-attention: three queries, four keys behind a padding mask.
cat >"$work/cross.json" <<'EOF'
{
  "format": "attnviz-lesson/1",
  "id": "window-events-cross",
  "title": {"en": "Random events: cross-attention"},
  "tokens": ["I", "like", "running"],
  "source_tokens": ["我", "喜欢", "跑步", "<pad>"],
  "Y": [[0.1, 0.2, 0.3, 0.4], [0.5, -0.6, 0.7, 0.8], [-0.9, 1.0, 1.1, 1.2], [0, 0, 0, 0]],
  "d_model": 4,
  "heads": 2,
  "seed": 5,
  "mask": {"padding": [1, 1, 1, 0]}
}
EOF

failures=0
scenario=
fail() {
    echo "FAIL [$scenario]: $*"
    echo "--- attnviz's stderr:"
    tail -40 "$work/err" 2>/dev/null
    failures=$((failures + 1))
}
alive() { kill -0 "$pid" 2>/dev/null; }
xdo() { timeout 20 xdotool "$@" >/dev/null 2>&1; }
sanitizer_said() { grep -qE 'AddressSanitizer|runtime error:|LeakSanitizer' "$work/err"; }

# open ARGS...: starts attnviz show and waits for its window (sets pid, win
# and the window's place wx, wy, ww, wh)
open_args=()
open() {
    open_args=("$@")
    "$app" show --size 1024x640 --frames-dir "$work/frames" --save-dir "$work/saved" "$@" >>"$work/out" 2>>"$work/err" &
    pid=$!
    win=
    for _ in $(seq 1 240); do
        alive || break
        win=$(xdotool search --onlyvisible --pid "$pid" 2>/dev/null | tail -n 1)
        [ -n "$win" ] && break
        sleep 0.25
    done
    if [ -z "$win" ]; then
        fail "no window within 60 s"
        return 1
    fi
    sleep 1 # SDL may replace its first window: take the one that stays
    win=$(xdotool search --onlyvisible --pid "$pid" 2>/dev/null | tail -n 1)
    eval "$(xdotool getwindowgeometry --shell "$win" 2>/dev/null | sed 's/^/w/')"
    wx=$wX wy=$wY ww=$wWIDTH wh=$wHEIGHT
    xdo windowfocus "$win"
    sleep 0.3
    return 0
}

# ended: the window is gone; 0 when it quit cleanly (status 0, no report)
ended() {
    wait "$pid"
    local st=$?
    pid=
    if [ $st -ne 0 ]; then
        fail "the window died (exit status $st)"
        return 1
    fi
    if sanitizer_said; then
        fail "a sanitizer reported a problem"
        return 1
    fi
    return 0
}

# The events, written as lines of an xdotool script (one process sends a
# whole chunk: starting xdotool for each burst is slow). Every choice comes
# from $RANDOM, seeded, in this shell (never in a subshell, which would not
# advance it).
numbers=(0 1 2 -1 0.5 -0.25 3.75 1e3 -2e-3 1e39 12345678 . - 1e 0.0001)
names=(a b 我 x 跑步 "<pad>" xy x7 ab_c)
keys=(Return Return Tab Up Down Left Right BackSpace F2 Insert Delete k less greater o e e
    ctrl+z ctrl+z ctrl+y ctrl+shift+z Right space Left Home End Prior Next 1 2 Tab m c n w l t a
    plus minus question r)
at() { echo "mousemove $((wx + RANDOM % ww)) $((wy + RANDOM % wh))"; }
click() { echo "click --delay 1 $1"; }
key() { echo "key --delay 1 $1"; }
typed() { echo "type --delay 1 $1"; }
event() {
    local shift
    case $((RANDOM % 40)) in
    0 | 1 | 2 | 3 | 4 | 5) at; click 1 ;;                    # a click (a mask cell toggles)
    6) at; echo "click --repeat 2 --delay 30 1" ;;            # a double-click (edit a cell)
    7 | 8 | 9 | 10) at; click $((4 + RANDOM % 3 / 2)) ;;      # the wheel, mostly up
    11 | 12) at; click 4; click 4; click 5 ;;
    13 | 14) # a drag, sometimes with Shift (finer)
        shift=$((RANDOM % 2))
        at
        [ $shift = 1 ] && echo "keydown shift"
        echo "mousedown 1"
        echo "mousemove_relative -- $((RANDOM % 21 - 10)) $((RANDOM % 61 - 30))"
        echo "mousemove_relative -- 0 $((RANDOM % 41 - 20))"
        echo "mouseup 1"
        [ $shift = 1 ] && echo "keyup shift"
        ;;
    15 | 16) at ;; # the pointer moves (hover)
    17 | 18 | 19 | 20) typed "${numbers[RANDOM % ${#numbers[@]}]}" ;;
    21 | 22) key F2; typed "${names[RANDOM % ${#names[@]}]}"; key Return ;;     # a token renamed
    23) key Insert; typed "${names[RANDOM % ${#names[@]}]}"; key Return ;; # a token added
    24) key e; key Escape ;; # Esc (in edit mode; else it may quit)
    25) key ctrl+s ;;
    26 | 27 | 28) key ctrl+z ;;
    29) # the window resized: the next frame's layout differs from the last one's
        ww=$((160 + RANDOM % 1100)) wh=$((120 + RANDOM % 700))
        echo "windowsize $win $ww $wh"
        ;;
    *) key "${keys[RANDOM % ${#keys[@]}]}" ;;
    esac
}

# chunk N FILE: N events or a few more, in bursts of 1 to 12, each burst
# sent while the window is stopped; adds their number to $sent
chunk() {
    local end=$((sent + $1)) n i
    : >"$2"
    while [ "$sent" -lt "$end" ]; do
        n=$((1 + RANDOM % 12))
        echo "exec --sync /bin/sh $work/signal STOP $pid" >>"$2"
        for ((i = 0; i < n; i++)); do event >>"$2"; done
        echo "exec --sync /bin/sh $work/signal CONT $pid" >>"$2"
        echo "sleep 0.05" >>"$2"
        sent=$((sent + n))
    done
}

# run_scenario NAME EVENTS ARGS...: the events to a window opened with ARGS
run_scenario() {
    scenario=$1
    local events=$2
    shift 2
    : >"$work/err"
    open "$@" || return
    local opened=1
    sent=0
    while [ "$sent" -lt "$events" ]; do
        chunk 100 "$work/chunk.xdo"
        timeout 300 xdotool "$work/chunk.xdo" >/dev/null 2>&1
        kill -CONT "$pid" 2>/dev/null
        sleep 0.2
        if ! alive; then
            ended || return
            # quit by Esc or Q: open it again and go on
            open "${open_args[@]}" || return
            opened=$((opened + 1))
        fi
    done
    sleep 0.5
    if ! alive; then
        ended || return
    else
        # leave edit mode and the help, then quit
        xdo key Escape Escape
        sleep 0.3
        alive && xdo key q
        # with unsaved edits the first q shows a notice; q while it shows quits
        sleep 0.5
        alive && xdo key q
        for _ in $(seq 1 100); do
            alive || break
            sleep 0.1
        done
        if alive; then
            fail "still running 10 s after q"
            kill "$pid"
            wait "$pid" 2>/dev/null
            pid=
            return
        fi
        ended || return
    fi
    echo "ok   [$scenario] $sent events, window opened $opened time(s)"
}

RANDOM=$seed
per=$((total / 4))
masked=14 # masked_1: the masked scores, whose cells toggle the mask in edit mode
run_scenario edit "$per" "$work/heads.json" --step $masked
run_scenario compare "$per" "$work/heads.json" --view compare --step $masked
run_scenario column-log "$per" "$work/heads.json" --notation column --weight-scale log --step 15
run_scenario cross "$per" "$work/cross.json" --step 15

# What Ctrl+S saved is a lesson attnviz accepts (README: saved lessons check)
scenario=saved
saved=0
for f in "$work"/saved/*.json; do
    [ -e "$f" ] || continue
    saved=$((saved + 1))
    if ! "$app" check "$f" >/dev/null 2>"$work/err"; then
        fail "attnviz check refuses the saved lesson $(basename "$f")"
        cp "$f" "${TMPDIR:-/tmp}/window-events-refused-$(basename "$f")" && echo "(kept in ${TMPDIR:-/tmp})"
    fi
done
echo "ok   [saved] $saved saved lesson(s) pass check"

if [ $failures -gt 0 ]; then
    echo "$failures scenario(s) failed (seed $seed)"
    exit 1
fi
echo "all random-event scenarios passed (seed $seed, $total events)"
exit 0
