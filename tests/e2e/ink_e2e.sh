#!/usr/bin/env bash
# ink_e2e.sh: the pointer's tools in the real window, end to end.
#
#   tests/e2e/ink_e2e.sh ATTNVIZ
#
# CTest runs it inside `xvfb-run` (tests/edit.cmake). On the default lesson
# at 1024×768, projector theme: I (ink), a drag with the left button draws
# (the frame changes); → and ← come back to the step with the stroke still
# there (the same frame); X clears it (the frame before the ink); S saves a
# frame with the ink drawn. G (spotlight) and Z (laser) change the frame
# around the pointer; B blacks the screen and B brings it back.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no X display, xdotool or import).
set -uo pipefail

app=${1:?usage: ink_e2e.sh ATTNVIZ}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; echo "(screenshots and log kept in $out)"; exit 1; }

. "$(dirname "$0")/window_lib.sh"
need_window_tools

out=${ATTNVIZ_E2E_OUT:-$(mktemp -d /tmp/attnviz-ink-e2e.XXXXXX)}
mkdir -p "$out"
cd "$out" || exit 1
export SDL_VIDEODRIVER=x11

"$app" show --size 1024x768 --step 12 --theme projector --frames-dir "$out/frames" >"$out/stdout.log" 2>"$out/stderr.log" &
pid=$!
wait_window
xdotool windowfocus --sync "$wid" 2>/dev/null || true
same() { [ "$(digest "$1")" = "$(digest "$2")" ]; }
settled() { # settled NAME: a screenshot once two in a row agree (the notice gone)
    local prev=""
    for _ in $(seq 1 30); do
        shot "$1" 0.5
        cur=$(digest "$1")
        [ "$cur" = "$prev" ] && return 0
        prev=$cur
    done
    return 0
}

settled 00-start
press i
sleep 4 # the notice fades
settled 01-ink-on
win_id
xdotool mousemove --window "$wid" 300 300 mousedown 1
for x in 340 380 420 460 500 540 580; do xdotool mousemove --window "$wid" "$x" $((300 + (x - 300) / 4)); sleep 0.05; done
xdotool mouseup 1
shot 02-drawn
changed 01-ink-on 02-drawn "ink and a drag draw a stroke"
press Right
sleep 2
press Left # the step plays backwards, then the step before is shown in its final state
sleep 1.5
settled 03-back
# the stroke is kept with its step: coming back shows it again
same 02-drawn 03-back || fail "the stroke did not come back with its step (02-drawn.png != 03-back.png)"
echo "ok: the stroke came back with its step"
press s
for _ in $(seq 1 50); do
    ls "$out"/frames/*.png >/dev/null 2>&1 && break
    sleep 0.1
done
saved=$(ls "$out"/frames/*.png 2>/dev/null | head -n 1)
[ -n "$saved" ] || fail "S saved no frame"
# the stroke's magenta (235, 0, 170) is in the saved frame
convert "$saved" -fill black +opaque "rgb(235,0,170)" -fill white -opaque "rgb(235,0,170)" -format '%[fx:mean]' info: >"$out/ink-share.txt"
share=$(cat "$out/ink-share.txt")
awk -v s="$share" 'BEGIN { exit !(s > 0.0005) }' || fail "the saved frame has no ink (share of ink pixels $share)"
echo "ok: S saved the frame with its ink ($saved, ink pixels $share of the frame)"
sleep 3.5
press x
sleep 3.5
settled 04-cleared
same 01-ink-on 04-cleared || fail "X did not clear the stroke (01-ink-on.png != 04-cleared.png)"
echo "ok: X cleared the step's ink"
press i
xdotool mousemove --window "$wid" 500 400
press g
shot 05-spotlight
changed 04-cleared 05-spotlight "G lights a spotlight"
press z
shot 06-laser
changed 05-spotlight 06-laser "Z shows the laser's dot"
press z
press b
shot 07-black
changed 06-laser 07-black "B blacks the screen"
press b
shot 08-back
changed 07-black 08-back "B brings the screen back"
press q
for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && fail "Q did not quit within 5 s"
wait "$pid" || fail "attnviz show exited with status $?: $(cat "$out/stderr.log")"
[ -z "${ATTNVIZ_E2E_OUT:-}" ] && rm -rf "$out"
exit 0
