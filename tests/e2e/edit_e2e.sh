#!/usr/bin/env bash
# edit_e2e.sh: editing in the real window with keys alone, end to end.
#
#   tests/e2e/edit_e2e.sh ATTNVIZ
#
# CTest runs it inside `xvfb-run` (tests/edit.cmake). It opens the default
# lesson on its first step, X, and with xdotool: E (edit mode: the cursor
# appears), ↓ → (the cursor moves to X[1][1]), types 7 (the typed value
# shows), Enter (X[1][1] becomes 7), Ctrl+S (save as), Esc, Q. It checks that
# each key changed the window, that the saved file is in --save-dir, that
# `attnviz check` accepts it, and that its trace has 7 in X[1][1] and
# different numbers downstream than the lesson as shipped, while the shipped
# lesson's own trace is unchanged.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no X display, xdotool or import).
set -uo pipefail

app=${1:?usage: edit_e2e.sh ATTNVIZ}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; echo "(screenshots and log kept in $out)"; exit 1; }

. "$(dirname "$0")/window_lib.sh"
need_window_tools
command -v python3 >/dev/null || skip "python3 is not installed (it reads the traces)"

out=${ATTNVIZ_E2E_OUT:-$(mktemp -d /tmp/attnviz-edit-e2e.XXXXXX)}
mkdir -p "$out"
# the save folder's name holds an escape sequence: what attnviz prints about
# it must not reach the terminal raw
saved="$out/saved$(printf '\033[31m')"
rm -rf "$saved"
# what a save killed part-way left there goes after the next save; a file of
# the user's under such a name stays
mkdir "$saved"
printf '{\n  "format": "attnviz-lesson/1",\n  "id": "x' >"$saved/.x.json.attnviz-Ab12Cd"
echo "my notes" >"$saved/.notes.json.attnviz-Zz9Zz9"
touch -d '1 hour ago' "$saved/.x.json.attnviz-Ab12Cd" "$saved/.notes.json.attnviz-Zz9Zz9"
cd "$out" || exit 1

export SDL_VIDEODRIVER=x11
"$app" show --size 1024x640 --step 1 --save-dir "$saved" >"$out/stdout.log" 2>"$out/stderr.log" &
pid=$!
wait_window
echo "window $wid: $title_en"
xdotool windowfocus --sync "$wid" 2>/dev/null || true

shot 00-x 1.5
press e
shot 01-edit
changed 00-x 01-edit "E shows the cell cursor"
press Down
press Right
shot 02-moved
changed 01-edit 02-moved "↓ → move the cursor"
press 7
shot 03-typed
changed 02-moved 03-typed "typing 7 shows it"
press Return
shot 04-set 1.5
changed 03-typed 04-set "Enter sets X[1][1] = 7"
press ctrl+s
file=""
for _ in $(seq 1 50); do
    file=$(ls "$saved"/*.json 2>/dev/null | head -n 1)
    [ -n "$file" ] && break
    sleep 0.1
done
[ -n "$file" ] || fail "Ctrl+S saved no lesson into $saved ($(cat "$out/stderr.log"))"
for _ in $(seq 1 50); do
    grep -q "saved as" "$out/stdout.log" && break
    sleep 0.1
done
grep -qF 'saved\x1b[31m/' "$out/stdout.log" || fail "'saved as' does not name the folder escaped: $(cat -v "$out/stdout.log")"
! grep -q "$(printf '\033')" "$out/stdout.log" "$out/stderr.log" || fail "a raw escape reached the terminal: $(cat -v "$out/stdout.log")"
echo "ok: the save folder's name is printed escaped"
[ ! -e "$saved/.x.json.attnviz-Ab12Cd" ] && [ -e "$saved/.notes.json.attnviz-Zz9Zz9" ] &&
    grep -q "removed 1 temporary of a save that did not finish" "$out/stdout.log" ||
    fail "a killed save's temporary: $(ls -A "$saved" | tr '\n' ' '), $(cat -v "$out/stdout.log")"
echo "ok: Ctrl+S removed a killed save's temporary, not the user's file of such a name"
shot 05-saved
changed 04-set 05-saved "Ctrl+S says where the lesson went"
press Escape
press q
for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && fail "Esc, Q did not quit within 5 s"
wait "$pid"
status=$?
[ "$status" -eq 0 ] || fail "attnviz show exited with status $status: $(cat "$out/stderr.log")"

"$app" check "$file" || fail "attnviz check refuses the saved lesson $file"
"$app" trace "$file" >"$out/edited.json" || fail "attnviz trace $file failed"
"$app" trace mhsa-wo-xihuan-paobu >"$out/shipped.json" || fail "attnviz trace of the shipped lesson failed"
python3 - "$out/edited.json" "$out/shipped.json" <<'PY' || fail "the saved lesson's trace is not the edit's"
import json, sys
edited = {s["name"]: s["data"] for s in json.load(open(sys.argv[1]))["steps"]}
shipped = {s["name"]: s["data"] for s in json.load(open(sys.argv[2]))["steps"]}
assert edited["X"][1][1] == 7, f"X[1][1] is {edited['X'][1][1]}, expected 7"
assert shipped["X"][1][1] != 7, "the shipped lesson changed"
diff = [n for n in ("Q", "scores_1", "weights_1", "concat", "output") if edited[n] != shipped[n]]
assert len(diff) == 5, f"only {diff} changed downstream"
print("ok: the saved trace has X[1][1] = 7 and", ", ".join(diff), "changed")
PY
echo "ok: $file passes attnviz check ($n screenshots)"
[ -z "${ATTNVIZ_E2E_OUT:-}" ] && rm -rf "$out"
exit 0
