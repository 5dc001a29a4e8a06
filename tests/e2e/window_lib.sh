# window_lib.sh: what the window tests share, sourced once skip and fail
# are defined: the tools they need, finding the attnviz window (SDL may
# replace its first window), waiting for it, screenshots, comparing them,
# pressing keys. The functions use $app, $pid and $out.
#
#   . "$(dirname "$0")/window_lib.sh"
#   need_window_tools           # skips without a display, xdotool, import, xprop
#   ... start "$app" show ... &; pid=$!
#   wait_window                 # sets wid and title_en, or fails
#   shot 00-start 1.5; press e; shot 01-edit; changed 00-start 01-edit "E edit mode"

need_window_tools() {
    [ -n "${DISPLAY:-}" ] || skip "no X display (run under xvfb-run)"
    command -v xdotool >/dev/null || skip "xdotool is not installed (apt-get install xdotool)"
    command -v import >/dev/null || skip "ImageMagick's import is not installed (apt-get install imagemagick)"
    command -v xprop >/dev/null || skip "xprop is not installed (apt-get install x11-utils)"
    [ -x "$app" ] || fail "$app is not an executable"
}

# The window, by its title ("attnviz — <lesson title>").
wid=""
# The window's title as UTF-8: _NET_WM_NAME (SDL sets it), else WM_NAME.
title_of() {
    local t
    t=$(xprop -id "$1" _NET_WM_NAME 2>/dev/null | sed -n 's/^_NET_WM_NAME([A-Z0-9_]*) = "\(.*\)"$/\1/p')
    [ -n "$t" ] || t=$(LC_ALL=C.UTF-8 xdotool getwindowname "$1" 2>/dev/null)
    printf '%s' "$t"
}
# SDL may replace its first window with another (SDL_CreateRenderer recreates
# it when OpenGL needs another visual), so the id found first can be gone a
# moment later; on a loaded machine it was, and every X call on it then
# failed with BadWindow: the title read empty after L, and mousemove failed.
# So: wait until the id stays the same, and before each use check that the
# window still exists, finding it again by pid when it does not.
find_wid() { xdotool search --onlyvisible --pid "$pid" 2>/dev/null | tail -n 1; }
win_ok() { [ -n "$1" ] && xprop -id "$1" WM_NAME >/dev/null 2>&1; }
win_id() { # sets wid to the process's current window; 1 when there is none for 5 s
    win_ok "$wid" && return 0
    local old=$wid
    for _ in $(seq 1 50); do
        wid=$(find_wid)
        if win_ok "$wid"; then
            echo "(window $old was replaced by $wid)"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
wait_window() { # sets wid and title_en once the window is mapped, titled and stable
    title_en=""
    same=0
    for _ in $(seq 1 150); do
        # the window of this process, once mapped, titled, and the same id three polls running
        w=$(find_wid)
        if [ -n "$w" ] && [ "$w" = "$wid" ]; then same=$((same + 1)); else same=0; fi
        wid=$w
        [ -n "$wid" ] && title_en=$(title_of "$wid")
        [ -n "$title_en" ] && [ "$same" -ge 3 ] && break
        kill -0 "$pid" 2>/dev/null || fail "attnviz show exited early: $(cat "$out/stderr.log")"
        sleep 0.1
    done
    [ -n "$wid" ] && [ -n "$title_en" ] || fail "no titled attnviz window appeared within 15 s"
}

n=0
shot() { # shot NAME: a screenshot after the window has settled
    sleep "${2:-0.8}"
    import -window root "$out/$1.png" || fail "import failed"
    n=$((n + 1))
}
digest() { convert "$out/$1.png" rgb:- | md5sum | cut -d' ' -f1; }
changed() { # changed BEFORE AFTER WHAT [WINDOW]: AFTER is taken again of WINDOW (default: the screen)
    # AFTER is taken again, every 0.25 s for up to 10 s, while it still
    # equals BEFORE: on a loaded machine the window can take longer than
    # shot's pause to draw what a key changed
    local before after
    before=$(digest "$1")
    after=$(digest "$2")
    for _ in $(seq 1 40); do
        [ "$before" != "$after" ] && break
        sleep 0.25
        import -window "${4:-root}" "$out/$2.png" || fail "import failed"
        after=$(digest "$2")
    done
    [ "$before" != "$after" ] || fail "$3: the window did not change within 10 s ($1.png = $2.png)"
    echo "ok: $3"
}
press() { win_id; xdotool key --window "$wid" --clearmodifiers "$1" 2>/dev/null || xdotool key "$1"; }

