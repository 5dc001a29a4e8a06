#!/usr/bin/env bash
# show_e2e.sh: the real classroom window, end to end, in an X server.
#
#   tests/e2e/show_e2e.sh ATTNVIZ
#
# CTest runs it inside `xvfb-run` (tests/render.cmake). It starts `attnviz
# show` on the default lesson, presses keys with xdotool as a teacher would
# (→ next, 2 head two, W weight scale, N notation, M single-head, L Chinese,
# hover a cell, S save, C compare, T theme, ? help, a click on the timeline,
# Q quit), takes a
# screenshot of the screen after each with ImageMagick's `import -window
# root`, and checks that:
#   - the window appears with the lesson's title,
#   - every key changed what the window shows,
#   - L switches the window title to the Chinese one,
#   - S saved a PNG of the window's size into --frames-dir, and S again
#     while its notice shows saves the same pixels (no notice in a file),
#   - Q quits with status 0.
# Screenshots and the program's stderr stay in $ATTNVIZ_E2E_OUT (default a
# temporary folder that is removed on success).
#
# Exit status: 0 passed, 1 failed, 77 skipped (no X display, xdotool or import).
set -uo pipefail

app=${1:?usage: show_e2e.sh ATTNVIZ}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; echo "(screenshots and log kept in $out)"; exit 1; }

. "$(dirname "$0")/window_lib.sh"
need_window_tools

out=${ATTNVIZ_E2E_OUT:-$(mktemp -d /tmp/attnviz-e2e.XXXXXX)}
mkdir -p "$out"
frames="$out/frames"
rm -rf "$frames"
cd "$out" || exit 1

export SDL_VIDEODRIVER=x11
"$app" show --size 1024x640 --frames-dir "$frames" 2>"$out/stderr.log" &
pid=$!

wait_window
echo "window $wid: $title_en"
case "$title_en" in
    *"我喜欢跑步"*) ;;
    *) fail "the window title '$title_en' does not name the default lesson" ;;
esac
xdotool windowfocus --sync "$wid" 2>/dev/null || true

shot 00-start 1.5
press Right
shot 01-next 2.0 # the next step's animation lasts about a second
changed 00-start 01-next "→ next step"
press 2
shot 02-head2
changed 01-next 02-head2 "2 selects head 2"
press w
shot 02b-rowscale
changed 02-head2 02b-rowscale "W weight scale (the heads' weights recoloured)"
press n
shot 02c-column
changed 02b-rowscale 02c-column "N column notation"
press n
press w
press w
shot 02d-back
[ "$(digest 02d-back)" = "$(digest 02-head2)" ] || fail "N twice and W three times do not come back to the first picture"
echo "ok: N toggles, W cycles through three scales"
press m
shot 03-single
changed 02-head2 03-single "M single-head"
press l
shot 04-zh
changed 03-single 04-zh "L Chinese"
title_zh=""
for _ in $(seq 1 50); do # a loaded machine may handle the key late: wait up to 5 s for the new title
    win_id || fail "the window of attnviz show is gone"
    title_zh=$(title_of "$wid")
    [ -n "$title_zh" ] && [ "$title_zh" != "$title_en" ] && break
    sleep 0.1
done
[ -n "$title_zh" ] || fail "the window title could not be read after L (xprop: $(xprop -id "$wid" _NET_WM_NAME 2>&1 | head -c 300))"
[ "$title_zh" != "$title_en" ] || fail "L did not change the window title ('$title_zh')"
case "$title_zh" in
    *多头*|*注意力*) echo "ok: the title is Chinese: $title_zh" ;;
    *)
        echo "windows of the process: $(xdotool search --pid "$pid" 2>/dev/null | tr '\n' ' ')"
        xprop -id "$wid" WM_NAME _NET_WM_NAME 2>&1 | head -4
        fail "after L the title '$title_zh' is not the Chinese one" ;;
esac
# the mouse: hover the middle of the window (single-head mode centres the
# matrix there): the cell's explanation appears
win_id || fail "the window of attnviz show is gone"
xdotool mousemove --window "$wid" 512 330 2>/dev/null || fail "xdotool mousemove failed"
shot 04b-hover
changed 04-zh 04b-hover "hovering a cell shows how it was computed"
win_id
xdotool mousemove --window "$wid" 5 5 2>/dev/null
shot 04c-unhover
changed 04b-hover 04c-unhover "moving away hides the explanation"
press s
shot 05-saved 1.5
saved=$(ls "$frames"/*.png 2>/dev/null | head -n 1)
[ -n "$saved" ] || fail "S saved no PNG into $frames ($(cat "$out/stderr.log"))"
size=$(identify -format '%wx%h' "$saved" 2>/dev/null)
[ "$size" = "1024x640" ] || fail "the saved frame $saved is '$size', expected 1024x640"
echo "ok: S saved $saved ($size)"
changed 04c-unhover 05-saved "S shows a notice"
# S again while the first "saved" notice is on screen: the second file has
# the same pixels as the first, without that notice
press s
for _ in $(seq 1 50); do
    [ "$(ls "$frames"/*.png 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.1
done
saved2=$(ls "$frames"/*.png 2>/dev/null | grep -vxF "$saved" | head -n 1)
[ -n "$saved2" ] || fail "the second S saved no second PNG ($(ls "$frames"))"
pixels() { convert "$1" rgb:- | md5sum | cut -d' ' -f1; }
[ "$(pixels "$saved")" = "$(pixels "$saved2")" ] ||
    fail "the second saved frame differs from the first: the notice of the first is in it ($saved, $saved2)"
echo "ok: a second S saves no notice ($saved2)"
press c
shot 06-compare
changed 05-saved 06-compare "C compare"
press t
shot 07-theme
changed 06-compare 07-theme "T theme"
press question
shot 08-help
changed 07-theme 08-help "? help"
press question
shot 09-nohelp
changed 08-help 09-nohelp "? closes the help"
# the timeline along the bottom: a click at its right end jumps to the last step
win_id || fail "the window of attnviz show is gone"
xdotool mousemove --window "$wid" 1012 632 click 1 2>/dev/null || fail "xdotool click failed"
shot 10-timeline
changed 09-nohelp 10-timeline "a click on the timeline jumps"
press q
for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && fail "Q did not quit within 5 s"
wait "$pid"
status=$?
[ "$status" -eq 0 ] || fail "attnviz show exited with status $status: $(cat "$out/stderr.log")"
echo "ok: Q quit with status 0 ($n screenshots)"
[ -z "${ATTNVIZ_E2E_OUT:-}" ] && rm -rf "$out"
exit 0
