#!/bin/sh
# test_export_window.sh: what `attnviz export` writes is pixel for pixel what
# the real window shows. Starts `attnviz show` in a real X window under Xvfb
# at a step, lets its animation finish, presses S (the window saves what it
# shows, read back from its renderer), exports the same step with the same
# options and size, and compares every pixel (ImageMagick's compare, absolute
# error count: must be 0). Two states: Chinese on the light theme, English on
# the dark theme with head 2.
#
#     tests/test_export_window.sh build/attnviz
#
# Needs xvfb-run, xdotool and ImageMagick (the README's set-up installs
# them); exits 77 (CTest: skipped) without them. The window's default
# software renderer is compared; --gpu (SDL's accelerated renderer) is not
# promised to match.
set -u
BIN=${1:?usage: test_export_window.sh ATTNVIZ}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
for tool in xdotool compare identify; do
    command -v $tool >/dev/null 2>&1 || { echo "skip: $tool not installed"; exit 77; }
done
if [ -z "${DISPLAY:-}" ] || [ "${ATTNVIZ_XVFB_INNER:-0}" != 1 ]; then
    command -v xvfb-run >/dev/null 2>&1 || { echo "skip: xvfb-run not installed"; exit 77; }
    ATTNVIZ_XVFB_INNER=1 exec xvfb-run -a -s "-screen 0 1280x800x24" "$0" "$BIN"
fi
unset SDL_VIDEODRIVER # a real X window, not the dummy driver CTest sets

TMP=$(mktemp -d /tmp/attnviz-test-window.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail=0

# check NAME SHOW_AND_EXPORT_OPTIONS... : one state, window vs export
check() {
    name=$1
    shift
    mkdir -p "$TMP/$name"
    "$BIN" show mhsa-wo-xihuan-paobu --size 960x540 --frames-dir "$TMP/$name/saved" "$@" 2>"$TMP/$name/show.err" &
    pid=$!
    wid=$(timeout 20 xdotool search --sync --onlyvisible --pid $pid 2>/dev/null | head -1)
    if [ -z "$wid" ]; then
        echo "FAIL $name: no window appeared ($(tail -1 "$TMP/$name/show.err"))"
        kill $pid 2>/dev/null
        fail=1
        return
    fi
    xdotool mousemove 1279 799 # the pointer off the window: no hover highlight
    sleep 3                    # the step's animation (about a second) has finished
    xdotool key --window "$wid" s
    saved=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        saved=$(ls "$TMP/$name/saved/"*.png 2>/dev/null | head -1)
        [ -n "$saved" ] && break
        sleep 0.5
    done
    xdotool key --window "$wid" q 2>/dev/null
    sleep 0.5
    kill $pid 2>/dev/null
    wait $pid 2>/dev/null
    if [ -z "$saved" ]; then
        echo "FAIL $name: S saved nothing ($(tail -1 "$TMP/$name/show.err"))"
        fail=1
        return
    fi
    # the same state, exported (--step N in show is --steps N in export)
    eopts=$(echo "$*" | sed 's/--step /--steps /')
    # shellcheck disable=SC2086
    if ! "$BIN" export mhsa-wo-xihuan-paobu --size 960x540 -o "$TMP/$name/export" $eopts; then
        echo "FAIL $name: export failed"
        fail=1
        return
    fi
    exported=$(ls "$TMP/$name/export/"*.png | head -1)
    wsize=$(identify -format %wx%h "$saved")
    esize=$(identify -format %wx%h "$exported")
    ae=$(compare -metric AE "$saved" "$exported" "$TMP/$name/diff.png" 2>&1)
    if [ "$wsize" != 960x540 ] || [ "$esize" != 960x540 ] || [ "$ae" != 0 ]; then
        echo "FAIL $name: window $wsize, export $esize, $ae pixels differ ($saved vs $exported)"
        fail=1
        return
    fi
    echo "ok $name: $(basename "$saved") = $(basename "$exported"), 960x540, 0 pixels differ"
}

check zh-light --step 13 --lang zh --theme light
check en-dark-head2 --step 20 --lang en --theme dark --head 2
exit $fail
