#!/usr/bin/env bash
# cli.sh: the command-line convention of every subcommand, end to end.
#
#   tests/e2e/cli.sh ATTNVIZ LESSON
#
# Checks that:
#   - `--opt value` and `--opt=value` both work (show, export);
#   - every complaint about an option or an operand is one line,
#     "attnviz CMD: ...", with exit status 2, in each subcommand;
#   - show refuses --head and --step beyond the lesson, as export does;
#   - output into /dev/full (check, list, --help, bench) exits 1 and says why;
#   - titles with control characters are refused, naming the character on
#     one line; file names with them print escaped, one line;
#   - a dangling symbolic link as -o or --sheet is named as such.
# Nothing here opens a window: show's refusals come before the display.
#
# Exit status: 0 passed, 1 failed.
set -uo pipefail

app=$(realpath "${1:?usage: cli.sh ATTNVIZ LESSON}")
lesson=$(realpath "${2:?usage: cli.sh ATTNVIZ LESSON}")
tmp=$(mktemp -d /tmp/attnviz-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
export SDL_VIDEODRIVER=dummy
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# expect STATUS NEEDLE CMD...: exit status STATUS, and stderr one line holding NEEDLE
expect() {
    local want=$1 needle=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local st=$?
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ "$st" -ne "$want" ]; then
        fail "$* exited $st, expected $want: $(cat "$tmp/err")"
    elif ! grep -qF -- "$needle" "$tmp/err"; then
        fail "$*: stderr lacks '$needle': $(cat "$tmp/err")"
    elif [ "$want" -ne 0 ] && [ "$lines" -ne 1 ]; then
        fail "$*: $lines lines on stderr, expected one: $(cat "$tmp/err")"
    else
        echo "ok: $* -> $st: $(head -n 1 "$tmp/err")"
    fi
}

# The one message shape, in every subcommand.
expect 2 "attnviz show: --lang: expected en or zh, found 'fr'" "$app" show "$lesson" --lang fr
expect 2 "attnviz show: --lang: expected en or zh, found 'fr'" "$app" show "$lesson" --lang=fr
expect 2 "attnviz show: --theme: expected light, dark or projector, found 'pink'" "$app" show --theme=pink
expect 2 "attnviz show: --size: expected a value, found the end of the command line" "$app" show --size
expect 2 "attnviz show: unknown option '--colour'" "$app" show --colour red
expect 2 "attnviz show: --autoplay: expected no value, found 'yes'" "$app" show --autoplay=yes
expect 2 "attnviz export: --view: expected multi, single or compare, found 'both'" \
    "$app" export "$lesson" -o "$tmp/x" --view=both
expect 2 "attnviz export: --fps: expected a number from 1 to 240, found '0'" \
    "$app" export "$lesson" -o "$tmp/x" --frames --fps 0
expect 2 "attnviz export: expected one lesson, found" "$app" export "$lesson" "$lesson" -o "$tmp/x"
expect 2 "attnviz bench: --reps: expected a whole number from 1 to 100000, found 'many'" "$app" bench --reps=many
# numbers are decimal only: strtod's hexadecimal forms are refused
expect 2 "attnviz export: --fps: expected a number from 1 to 240, found '0x1e'" \
    "$app" export "$lesson" -o "$tmp/x" --frames --fps 0x1e
expect 2 "attnviz trace: --scale: expected a positive number (the divisor of the scores), found '0x1p1'" \
    "$app" trace "$lesson" --scale 0x1p1
expect 2 "X[0][0]: expected a decimal number (such as -0.5 or 1e-3), found \"0x1p3\"" \
    "$app" trace "$lesson" --set 'X[0][0]=0x1p3'
expect 2 "attnviz list: expected at most one folder, found 'a' and 'b'" "$app" list a b
expect 2 "attnviz trace: expected one lesson, found" "$app" trace "$lesson" "$lesson"
expect 2 "attnviz check: expected at least one lesson, found none" "$app" check
expect 2 "attnviz check: unknown option '--strict'" "$app" check --strict "$lesson"

# Show refuses what the lesson does not have, as export does (two heads; 24 steps).
expect 2 "attnviz show: --head: expected a head from 1 to 2, found '3'" "$app" show "$lesson" --head 3
expect 2 "attnviz show: --head: expected a head from 1 to 2, found '3'" "$app" show "$lesson" --head=3
expect 2 "attnviz export: --head: expected a head from 1 to 2, found '3'" \
    "$app" export "$lesson" -o "$tmp/x" --head=3
expect 2 "attnviz show: --head: expected a head from 1 to 2, found '99'" "$app" show "$lesson" --head 99
expect 2 "attnviz export: --head: expected a head from 1 to 2, found '99'" "$app" export "$lesson" -o "$tmp/x" --head 99
expect 2 "attnviz show: --head: expected a whole number from 1, found '0'" "$app" show "$lesson" --head 0
expect 2 "attnviz show: --step: expected a step from 1 to " "$app" show "$lesson" --step 99999
expect 2 "attnviz show: --step: expected a step from 1 to " "$app" show "$lesson" --view single --step=20
expect 2 "attnviz show: --step: expected a whole number from 1, found '0'" "$app" show "$lesson" --step 0
expect 2 "attnviz show: --weight-scale: expected unit, row or log, found 'rows'" "$app" show "$lesson" --weight-scale rows
expect 2 "attnviz export: --notation: expected row or column, found 'col'" "$app" export "$lesson" -o "$tmp/x" --notation=col
# Compare mode needs two heads: a lesson of one is refused, nothing written.
one_head="$(dirname "$lesson")/../../lessons/self-attention-xihuan-paobu.json"
expect 2 "--view compare: $one_head has one head (heads = 1)" "$app" export "$one_head" -o "$tmp/one" --view compare
[ ! -e "$tmp/one" ] || fail "export --view compare of one head left $tmp/one behind"
expect 2 "attnviz show: --view compare: $one_head has one head" "$app" show "$one_head" --view compare

# Both spellings of a value do the same.
"$app" export "$lesson" -o "$tmp/a" --lang zh --size 320x180 --steps 1 2>"$tmp/err" || fail "export --lang zh: $(cat "$tmp/err")"
"$app" export "$lesson" --output="$tmp/b" --lang=zh --size=320x180 --steps=1 2>"$tmp/err" ||
    fail "export --lang=zh: $(cat "$tmp/err")"
if ! cmp -s "$tmp/a/001-input.png" "$tmp/b/001-input.png"; then
    fail "--opt value and --opt=value wrote different PNGs"
elif ! grep -q '"lang":[[:space:]]*"zh"' "$tmp/b/index.json"; then
    fail "--lang=zh did not reach index.json"
else
    echo "ok: --opt value and --opt=value export the same"
fi

# A cluster of one-letter options, the lesson after the options, and `--`.
if "$app" export -qo "$tmp/c" --size=320x180 --steps=1 "$lesson" 2>"$tmp/err" && [ -s "$tmp/c/001-input.png" ] &&
    "$app" check -- "$lesson" >/dev/null 2>>"$tmp/err"; then
    echo "ok: -qo DIR, the lesson last, and -- all parse"
else
    fail "-qo DIR / --: $(cat "$tmp/err")"
fi

# Standard output that cannot be written is a failure (exit 1), said on
# stderr with the reason of the write that failed.
for args in "check $lesson" "list" "--help" "show --help" "export --help" "trace $lesson" \
    "bench --n 8 --d-model 8 --heads 1 --reps 1" "bench --edits 2"; do
    # shellcheck disable=SC2086
    "$app" $args >/dev/full 2>"$tmp/err"
    st=$?
    if [ "$st" -ne 1 ] || ! grep -q "writing.*No space left on device" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        fail "attnviz $args >/dev/full exited $st: $(cat "$tmp/err")"
    else
        echo "ok: attnviz $args >/dev/full -> 1"
    fi
done

# A title is one line of printable text: control characters (C0, DEL, C1)
# are refused where the lesson is read, and the message names them.
mkdir "$tmp/lessons"
sed 's/"title": {"en": "[^"]*"/"title": {"en": "red \\u001b[31m"/' "$lesson" >"$tmp/lessons/t.json"
expect 2 'title.en: expected text on one line, found the control character 0x1b (escape)' \
    "$app" list "$tmp/lessons"
grep -q "$(printf '\033')" "$tmp/err" && fail "an ESC reached stderr"
sed 's/"title": {"en": "[^"]*"/"title": {"en": "csi \\u009b31m"/' "$lesson" >"$tmp/lessons/t.json"
expect 2 'title.en: expected text of printable characters, found the control character U+009B' \
    "$app" check "$tmp/lessons/t.json"
sed 's/"title": {"en": "[^"]*"/"title": {"en": "two\\nlines"/' "$lesson" >"$tmp/lessons/t.json"
expect 2 'title.en: expected text on one line, found the control character 0x0a (a line break)' \
    "$app" check "$tmp/lessons/t.json"
expect 2 'no\nsuch\x1b[2J.json: no such lesson file' "$app" check "$(printf 'no\nsuch\033[2J.json')"
grep -q "$(printf '\033')" "$tmp/err" && fail "an ESC reached stderr"
# a C1 control (U+009B, a CSI on some terminals) and a byte that is not UTF-8; 中 stays as it is
expect 2 'c1\u009bbad\xff中.json: no such lesson file' "$app" check "$(printf 'c1\302\233bad\377\344\270\255.json')"
# a right-to-left override, which would reorder the rest of the line on the terminal
expect 2 'rlo\u202enosj.json: no such lesson file' "$app" check "$(printf 'rlo\342\200\256nosj.json')"
# a library's message quotes a text with the same escapes as the program's own lines
sed 's/"summary": *{/"summary": {"when": "{n} <\\n", /' "$lesson" >"$tmp/lessons/t.json"
grep -q '"when"' "$tmp/lessons/t.json" || fail "no condition in the lesson made from $lesson"
expect 2 '"{n} <\n"' "$app" check "$tmp/lessons/t.json"

# A dangling symbolic link as the output says what it is.
ln -s "$tmp/missing/target" "$tmp/dangling"
expect 2 "attnviz export: --output: expected a folder, found '$tmp/dangling', a symbolic link to a missing target" \
    "$app" export "$lesson" -o "$tmp/dangling"
expect 2 "attnviz export: --sheet: expected a file name, found '$tmp/dangling', a symbolic link to a missing target" \
    "$app" export "$lesson" --sheet "$tmp/dangling"
expect 2 "attnviz show: --frames-dir: expected a folder, found '$tmp/dangling', a symbolic link" \
    "$app" show "$lesson" --frames-dir="$tmp/dangling"
[ -e "$tmp/missing" ] && fail "the dangling link's target was created"

[ "$failed" -eq 0 ] && echo "all passed"
exit "$failed"
