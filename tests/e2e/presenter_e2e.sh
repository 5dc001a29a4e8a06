#!/usr/bin/env bash
# presenter_e2e.sh: `attnviz show --presenter` in a real X server, end to end.
#
#   tests/e2e/presenter_e2e.sh ATTNVIZ
#
# CTest runs it inside `xvfb-run` (tests/edit.cmake) on a screen wide enough
# for both windows side by side (one display: the audience's window at its
# top left, the presenter's at its bottom right). On the default lesson at
# 1024×768, projector theme, it checks that:
#   - two windows open, the audience's "attnviz — …" and the presenter's
#     "attnviz presenter — …";
#   - → in the audience's window, and PageDown (a clicker) in the
#     presenter's, each change both windows;
#   - with no key pressed, the presenter's clock changes its window and
#     the audience's stays as it was;
#   - B in the presenter's window blacks the audience's window (not the
#     presenter's), and B again brings it back;
#   - Z (the laser) and the mouse over the presenter's small frame put the
#     laser's dot on the audience's frame;
#   - the audience's frame shows the step's caption where the narration was:
#     S saves the frame the class sees, and it is `attnviz export --big-text`'s
#     frame of the step, not the plain export's with the whole narration
#     (which the presenter's window shows);
#   - Q quits both, with status 0.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no X display, xdotool or import).
set -uo pipefail

app=${1:?usage: presenter_e2e.sh ATTNVIZ}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; echo "(screenshots and log kept in $out)"; exit 1; }

. "$(dirname "$0")/window_lib.sh"
need_window_tools

out=${ATTNVIZ_E2E_OUT:-$(mktemp -d /tmp/attnviz-presenter-e2e.XXXXXX)}
mkdir -p "$out"
cd "$out" || exit 1
export SDL_VIDEODRIVER=x11

"$app" show --presenter --size 1024x768 --step 5 --theme projector --frames-dir "$out/frames" \
    >"$out/stdout.log" 2>"$out/stderr.log" &
pid=$!

# the two windows, told apart by their titles
aud=""
pres=""
for _ in $(seq 1 150); do
    aud=""
    pres=""
    for w in $(xdotool search --onlyvisible --pid "$pid" 2>/dev/null); do
        t=$(title_of "$w")
        case "$t" in
            "attnviz presenter — "*) pres=$w ;;
            "attnviz — "*) aud=$w ;;
        esac
    done
    [ -n "$aud" ] && [ -n "$pres" ] && break
    kill -0 "$pid" 2>/dev/null || fail "attnviz show --presenter exited early: $(cat "$out/stderr.log")"
    sleep 0.1
done
[ -n "$aud" ] && [ -n "$pres" ] || fail "two titled windows did not appear within 15 s (audience '$aud', presenter '$pres')"
echo "ok: two windows, the audience's ($aud) and the presenter's ($pres)"

grab() { # grab WINDOW NAME
    sleep "${3:-0.8}"
    import -window "$1" "$out/$2.png" || fail "import failed"
}
both() { # both NAME: the audience's window as NAME-aud, the presenter's as NAME-pres
    grab "$aud" "$1-aud" "${2:-0.8}"
    grab "$pres" "$1-pres" 0
}
key() { xdotool key --window "$1" --clearmodifiers "$2" 2>/dev/null || fail "xdotool could not press $2"; }
# the mean brightness of a screenshot, 0..1
mean() { convert "$out/$1.png" -colorspace gray -format '%[fx:mean]' info:; }

both 00-start 1.5
key "$aud" Right
both 01-right 2.0
changed 00-start-aud 01-right-aud "→ in the audience's window: the audience's window" "$aud"
changed 00-start-pres 01-right-pres "→ in the audience's window: the presenter's window" "$pres"
echo "ok: → in the audience's window moved both windows on"
key "$pres" Next
both 02-pagedown 2.0
changed 01-right-aud 02-pagedown-aud "PageDown in the presenter's window: the audience's window" "$aud"
changed 01-right-pres 02-pagedown-pres "PageDown in the presenter's window: the presenter's window" "$pres"
echo "ok: PageDown in the presenter's window moved both windows on"

# the clock: only the presenter's window changes while nobody touches a key
both 03-still 1.0
both 04-later 2.5
[ "$(digest 03-still-aud)" = "$(digest 04-later-aud)" ] || fail "the audience's window changed with no key pressed"
changed 03-still-pres 04-later-pres "the presenter's clock" "$pres"
echo "ok: the presenter's clock runs, the audience's window stays still"

key "$pres" b
both 05-black 1.0
m=$(mean 05-black-aud)
awk -v m="$m" 'BEGIN { exit !(m < 0.01) }' || fail "B in the presenter's window: the audience's window is not black (mean $m)"
m=$(mean 05-black-pres)
awk -v m="$m" 'BEGIN { exit !(m > 0.02) }' || fail "B blacked the presenter's window too (mean $m)"
key "$pres" b
both 06-back 1.0
[ "$(digest 06-back-aud)" = "$(digest 04-later-aud)" ] || fail "B again did not bring the audience's frame back"
echo "ok: B in the presenter's window blacks the audience's window only, and B brings it back"

# the laser over the presenter's small frame, at the top left of its window
key "$pres" z
sleep 3.5 # the notice fades
both 07-laser-on 0.5
xdotool mousemove --window "$pres" 200 250 || fail "xdotool mousemove failed"
both 08-laser 0.8
changed 07-laser-on-aud 08-laser-aud "the laser over the presenter's small frame: the audience's window" "$aud"
# the dot is the laser's red (255, 30, 30) on the audience's frame
share=$(convert "$out/08-laser-aud.png" -fill black +opaque "rgb(255,30,30)" -fill white -opaque "rgb(255,30,30)" \
    -format '%[fx:mean]' info:)
awk -v s="$share" 'BEGIN { exit !(s > 0.0001) }' || fail "no laser dot on the audience's frame (share of red $share)"
echo "ok: the laser over the presenter's small frame shows on the audience's frame"

# the class's frame: the caption in the narration's place (step 7: 5, then → and PageDown)
key "$pres" z
key "$pres" s
for _ in $(seq 1 50); do
    ls "$out"/frames/*.png >/dev/null 2>&1 && break
    sleep 0.1
done
saved=$(ls "$out"/frames/*.png 2>/dev/null | head -n 1)
[ -n "$saved" ] || fail "S saved no frame"
for kind in caption narration; do
    extra=""
    [ "$kind" = caption ] && extra=--big-text
    "$app" export mhsa-wo-xihuan-paobu -o "$out/export-$kind" --size 1024x768 --theme projector --step 7 $extra \
        >/dev/null 2>"$out/export-$kind.log" || fail "attnviz export ($kind) failed: $(cat "$out/export-$kind.log")"
done
ae() { compare -metric AE "$1" "$2" null: 2>&1 | cut -d' ' -f1; }
d=$(ae "$saved" "$out"/export-caption/007-*.png)
[ "$d" = 0 ] || fail "the class's frame is not the step's frame with its caption ($d pixels differ from export --big-text)"
d=$(ae "$saved" "$out"/export-narration/007-*.png)
[ "$d" != 0 ] || fail "the class's frame shows the whole narration (it equals the plain export)"
echo "ok: the class's frame shows the step's caption, not its whole narration"

# the window may be gone before xdotool has sent the key's release
xdotool key --window "$pres" --clearmodifiers q 2>/dev/null
for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && fail "Q did not quit within 5 s"
wait "$pid" || fail "attnviz show --presenter exited with status $?: $(cat "$out/stderr.log")"
[ -z "${ATTNVIZ_E2E_OUT:-}" ] && rm -rf "$out"
exit 0
