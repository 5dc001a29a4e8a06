#!/usr/bin/env bash
# unsaved_e2e.sh: keys pressed by reflex never lose an edit, end to end.
#
#   tests/e2e/unsaved_e2e.sh ATTNVIZ
#
# CTest runs it inside `xvfb-run` (tests/edit.cmake). On the default lesson's
# first step, X: E, ↓ →, 7, Enter (X[1][1] = 7) writes the recovery file
# SAVE_DIR/.mhsa-wo-xihuan-paobu.attnviz-recovery.json, a lesson `attnviz
# check` accepts, with the mode of every file attnviz writes. Esc leaves edit
# mode; a second Esc does not quit but shows the unsaved-changes notice; Q
# then quits, and the recovery file stays. A second window on the same
# lesson offers it: Y restores the edit (the frame changes), Ctrl+S saves
# it, the recovery file goes, and Q quits at once. The saved lesson has
# X[1][1] = 7.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no X display, xdotool or import).
set -uo pipefail

app=${1:?usage: unsaved_e2e.sh ATTNVIZ}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; echo "(screenshots and log kept in $out)"; exit 1; }

. "$(dirname "$0")/window_lib.sh"
need_window_tools
command -v python3 >/dev/null || skip "python3 is not installed (it reads the traces)"

out=${ATTNVIZ_E2E_OUT:-$(mktemp -d /tmp/attnviz-unsaved-e2e.XXXXXX)}
mkdir -p "$out"
saved="$out/saved"
rm -rf "$saved"
recovery="$saved/.mhsa-wo-xihuan-paobu.attnviz-recovery.json"
cd "$out" || exit 1
export SDL_VIDEODRIVER=x11

alive_after() { # alive_after SECONDS: the window is still open then
    sleep "$1"
    kill -0 "$pid" 2>/dev/null
}
quits_within_5s() {
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    ! kill -0 "$pid" 2>/dev/null
}

umask 022
"$app" show --size 1024x768 --step 1 --save-dir "$saved" >"$out/stdout.log" 2>"$out/stderr.log" &
pid=$!
wait_window
xdotool windowfocus --sync "$wid" 2>/dev/null || true
shot 00-x 1.5
press e
press Down
press Right
press 7
press Return
shot 01-set 1.5
changed 00-x 01-set "E, ↓ →, 7, Enter sets X[1][1]"
for _ in $(seq 1 50); do
    [ -f "$recovery" ] && break
    sleep 0.1
done
[ -f "$recovery" ] || fail "no recovery file $recovery after the edit ($(ls -A "$saved" 2>&1))"
mode=$(stat -c %a "$recovery")
[ "$mode" = 644 ] || fail "the recovery file's mode is $mode, expected 644 (0666 less the umask 022)"
"$app" check "$recovery" >/dev/null || fail "attnviz check refuses the recovery file"
echo "ok: the edit is kept in $recovery (mode $mode, a valid lesson)"

press Escape
shot 02-left-edit
changed 01-set 02-left-edit "Esc leaves edit mode"
press Escape
shot 03-notice
alive_after 1.5 || fail "a second Esc quit with unsaved edits"
changed 02-left-edit 03-notice "a second Esc shows the unsaved-changes notice"
echo "ok: the second Esc left the window open"
press q
quits_within_5s || fail "Q while the notice shows did not quit within 5 s"
wait "$pid"
status=$?
[ "$status" -eq 0 ] || fail "attnviz show exited with status $status: $(cat "$out/stderr.log")"
[ -f "$recovery" ] || fail "quitting removed the recovery file of unsaved edits"
echo "ok: Q quit and the recovery file stayed"

"$app" show --size 1024x768 --step 1 --save-dir "$saved" >"$out/stdout2.log" 2>"$out/stderr2.log" &
pid=$!
wid=""
wait_window
xdotool windowfocus --sync "$wid" 2>/dev/null || true
shot 10-offer 1.5
press y
shot 11-restored 1.5
changed 10-offer 11-restored "Y restores the edits of last time"
press ctrl+s
file=""
for _ in $(seq 1 50); do
    file=$(ls "$saved"/*.json 2>/dev/null | head -n 1)
    [ -n "$file" ] && [ ! -e "$recovery" ] && break
    sleep 0.1
done
[ -n "$file" ] || fail "Ctrl+S saved no lesson into $saved"
[ ! -e "$recovery" ] || fail "the recovery file stayed after Ctrl+S saved the edits"
echo "ok: Ctrl+S saved $file and removed the recovery file"
press q
quits_within_5s || fail "Q with everything saved did not quit at once"
wait "$pid"
"$app" trace "$file" >"$out/saved-trace.json" || fail "attnviz trace $file failed"
python3 - "$out/saved-trace.json" <<'PY' || fail "the restored and saved lesson does not hold the edit"
import json, sys
steps = {s["name"]: s["data"] for s in json.load(open(sys.argv[1]))["steps"]}
assert steps["X"][1][1] == 7, f"X[1][1] is {steps['X'][1][1]}, expected 7"
print("ok: the lesson restored and saved has X[1][1] = 7")
PY
[ -z "${ATTNVIZ_E2E_OUT:-}" ] && rm -rf "$out"
exit 0
