#!/usr/bin/env bash
# hostile_fs.sh: attnviz against a hostile file system and a hostile user:
# FIFOs, devices, symbolic links and foreign files where it reads and
# writes, folders used before, temporaries of a killed export, signals.
#
#   tests/e2e/hostile_fs.sh ATTNVIZ
#
# Every FIFO is made here, in a scratch folder removed at the end. Each
# command that could block runs under `timeout`: a hang is a failure, not a
# stuck test. Exit status: 0 all passed, 1 something failed.
set -uo pipefail

app=${1:?usage: hostile_fs.sh ATTNVIZ}
app=$(cd "$(dirname "$app")" && pwd)/$(basename "$app")
export SDL_VIDEODRIVER=dummy
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
ok() { echo "ok: $*"; }

printf '%s' '{"format":"attnviz-lesson/1","id":"t","title":{"en":"T"},"tokens":["a","b","c"],"d_model":4,"heads":2,"seed":7}' >ok.json

# run NAME SECONDS CMD...: runs CMD with a time limit; $st is its status,
# out and err its output. A time-out (124) is reported as a hang.
run() {
    local name=$1 secs=$2
    shift 2
    timeout -s KILL "$secs" "$@" >out 2>err
    st=$?
    if [ $st -eq 137 ] || [ $st -eq 124 ]; then
        fail "$name: still running after ${secs}s (a hang)"
        return 1
    fi
    return 0
}

# ---- reading: only regular files ----------------------------------------------
mkdir D
cp ok.json D/a.json
mkfifo D/b.json
if run "list with a FIFO" 20 "$app" list D; then
    if [ $st -eq 2 ] && grep -q "^ 1  t " out && grep -q "D/b.json: not a regular file" err; then
        ok "list D lists a.json and reports the FIFO b.json"
    else
        fail "list D: status $st, out '$(cat out)', err '$(cat err)'"
    fi
fi
for what in D/b.json /dev/zero; do
    if run "check $what" 20 "$app" check "$what"; then
        if [ $st -eq 2 ] && grep -q "^$what: not a regular file" err && [ "$(wc -l <err)" -eq 1 ]; then
            ok "check $what: not a regular file"
        else
            fail "check $what: status $st, err '$(cat err)'"
        fi
    fi
done
timeout -s KILL 20 sh -c "cat ok.json | '$app' check /dev/stdin" >out 2>err
st=$?
if [ $st -eq 2 ] && grep -q "not a regular file" err; then
    ok "a piped stdin as the lesson: not a regular file"
else
    fail "piped stdin: status $st, err '$(cat err)'"
fi

# ---- writing into -o DIR: never into a FIFO, a device or a link ----------------------
mkdir d
mkfifo d/001-input.png
if run "export into a folder with a FIFO" 60 "$app" export ok.json -o d --steps 1-3 --size 320x200; then
    if [ $st -eq 2 ] && grep -q "d/001-input.png: exists and is a FIFO" err && [ -p d/001-input.png ] &&
        [ ! -e d/index.json ]; then
        ok "export refuses the FIFO d/001-input.png before drawing, and leaves it"
    else
        fail "export with a FIFO: status $st, err '$(cat err)'"
    fi
fi
rm d/001-input.png
echo "not attnviz's" >target.txt
ln -s "$work/target.txt" d/002-weight.png
if run "export into a folder with a symlink" 60 "$app" export ok.json -o d --steps 1-3 --size 320x200; then
    if [ $st -eq 2 ] && grep -q "symbolic link" err && [ "$(cat target.txt)" = "not attnviz's" ] && [ -L d/002-weight.png ]; then
        ok "export refuses a symbolic link in its folder; the link's target is untouched"
    else
        fail "export with a symlink: status $st, err '$(cat err)', target '$(cat target.txt)'"
    fi
fi

# --sheet naming a file of the user's, or a step's PNG attnviz wrote:
# refused before drawing, the file kept; a handout attnviz wrote is replaced.
printf 'my thesis' >mine.pdf
printf 'my notes' >mine.png
"$app" export ok.json -o S --steps 1 --size 320x200 >/dev/null 2>&1
for f in mine.pdf mine.png S/001-input.png; do
    before=$(sha256sum "$f")
    if run "--sheet $f" 60 "$app" export ok.json --sheet "$f" --steps 1 --size 320x200; then
        if [ $st -eq 2 ] && grep -q "$f: exists and is not a" err && [ "$(sha256sum "$f")" = "$before" ] &&
            [ "$(wc -l <err)" -eq 1 ]; then
            ok "--sheet $f (not a handout of attnviz's): refused, kept"
        else
            fail "--sheet $f: status $st, err '$(cat err)'"
        fi
    fi
done
for ext in png pdf; do
    if run "--sheet own.$ext twice" 60 "$app" export ok.json --sheet "own.$ext" --steps 1 --size 320x200 &&
        [ $st -eq 0 ] && run "--sheet own.$ext again" 60 "$app" export ok.json --sheet "own.$ext" --steps 1-2 --size 320x200; then
        if [ $st -eq 0 ]; then
            ok "--sheet own.$ext: attnviz's own handout is replaced"
        else
            fail "--sheet own.$ext again: status $st, err '$(cat err)'"
        fi
    else
        fail "--sheet own.$ext: status $st, err '$(cat err)'"
    fi
done

# -o DIR with --sheet DIR/NAME, NAME one the export writes itself: refused
# before anything is drawn, naming the clash; the folder keeps what it held.
"$app" export ok.json -o C --steps 1-3 --size 320x200 >/dev/null 2>&1
for name in index.json 002-weight.png 000001.png .index.json.attnviz-journal; do
    before=$(cd C && sha256sum * | sha256sum)
    if run "-o C --sheet C/$name" 60 "$app" export ok.json -o C --steps 1-3 --size 320x200 --sheet "C/$name"; then
        if [ $st -eq 2 ] && grep -q "C/$name: page 1 of the handout would be $name, a name the export into C writes" err &&
            [ "$(cd C && sha256sum * | sha256sum)" = "$before" ] && [ ! -e "C/.$name.attnviz-journal" ]; then
            ok "-o C --sheet C/$name: refused, the export's folder unchanged"
        else
            fail "-o C --sheet C/$name: status $st, err '$(cat err)', $(ls -a C | tr '\n' ' ')"
        fi
    fi
done

# files of the user's under a temporary's name (.NAME.attnviz-XXXXXX), old
# enough to be a killed export's: kept, since attnviz did not write them
mkdir T
for f in .index.json.attnviz-ABCDEF .003-weight.png.attnviz-ABCDEF .999-x.png.attnviz-ABCDEF; do
    echo mine >"T/$f"
    touch -d '1 hour ago' "T/$f"
done
if run "export over look-alike temporaries" 60 "$app" export ok.json -o T --steps 1-3 --size 320x200; then
    kept=0
    for f in .index.json.attnviz-ABCDEF .003-weight.png.attnviz-ABCDEF .999-x.png.attnviz-ABCDEF; do
        [ "$(cat "T/$f" 2>/dev/null)" = mine ] && kept=$((kept + 1))
    done
    if [ $st -eq 0 ] && [ $kept -eq 3 ]; then
        ok "an export keeps the user's 3 files named like its temporaries"
    else
        fail "look-alike temporaries: status $st, kept $kept of 3, err '$(cat err)'"
    fi
fi

# --sheet naming a symbolic link to a file: refused before drawing; neither
# the link nor the file it points to is replaced.
for ext in png pdf; do
    ln -s "$work/target.txt" "link.$ext"
    if run "--sheet link.$ext" 60 "$app" export ok.json --sheet "link.$ext" --steps 1 --size 320x200; then
        if [ $st -eq 2 ] && grep -q "link.$ext: is a symbolic link to a file" err && [ -L "link.$ext" ] &&
            [ "$(cat target.txt)" = "not attnviz's" ]; then
            ok "--sheet link.$ext (a link to a file): refused, the link and its target kept"
        else
            fail "--sheet link.$ext: status $st, $(ls -l "link.$ext"), target '$(cat target.txt)', err '$(cat err)'"
        fi
    fi
    rm -f "link.$ext"
done

# ---- deleting: only attnviz's own files -------------------------------------------------
mkdir P
for i in 1 2 3; do echo photo >"P/00000$i.png"; done
if run "--frames over foreign NNNNNN.png" 120 "$app" export ok.json -o P --frames --fps 1 --dwell 0 --steps 1 --size 320x200; then
    n=$(grep -l photo P/00000?.png 2>/dev/null | wc -l)
    if [ $st -eq 0 ] && [ "$n" -eq 3 ]; then
        ok "--frames keeps 000001..3.png, which attnviz did not write"
    else
        fail "--frames: status $st, $n of 3 foreign files left, err '$(cat err)'"
    fi
fi
mkdir F G
"$app" export ok.json -o F --frames --fps 2 --dwell 0.5 --steps 1-4 --size 320x200 2>/dev/null
cp -p F/??????.png G/
long=$(ls F/??????.png | wc -l)
if run "a shorter --frames export" 120 "$app" export ok.json -o F --frames --fps 2 --dwell 0.5 --steps 1 --size 320x200; then
    short=$(ls F/??????.png | wc -l)
    if [ $st -eq 0 ] && [ "$short" -lt "$long" ] && grep -q "removed $((long - short)) files of an earlier export" err; then
        ok "a shorter --frames export removes the $((long - short)) frames attnviz wrote after its own, and says so"
    else
        fail "shorter frames: status $st, $long then $short frames, err '$(cat err)'"
    fi
fi
# attnviz's frames with no record of attnviz's listing them (copied in, or
# their index.json gone): not known as this folder's, so kept
if run "--frames over unrecorded frames" 120 "$app" export ok.json -o G --frames --fps 2 --dwell 0.5 --steps 1 --size 320x200; then
    if [ $st -eq 0 ] && [ "$(ls G/??????.png | wc -l)" -eq "$long" ] && ! grep -q removed err; then
        ok "frames of attnviz's that no record lists are kept"
    else
        fail "unrecorded frames: status $st, $(ls G/??????.png | wc -l) of $long frames, err '$(cat err)'"
    fi
fi

mkdir E
"$app" export ok.json -o E --steps 1-6 --size 320x200 2>/dev/null
echo mine >E/notes.png
echo mine >E/007-my-own.png # attnviz's spelling, but neither listed nor written by attnviz
# a killed export's temporaries carry attnviz's marker (.NAME.attnviz-XXXXXX)
touch -d '1 hour ago' E/.003-weight.png.attnviz-Ab12Cd E/.index.json.attnviz-Qw3rTy
# the user's own hidden files, some named like attnviz's files plus a suffix
for f in .other.png.Ab12Cd .index.json.backup .001-input.png.before .attnviz-probe.myfile .003-weight.png.Ab12Cd; do
    echo mine >"E/$f"
    touch -d '1 hour ago' "E/$f"
done
if run "re-export with other --steps" 60 "$app" export ok.json -o E --steps 2-3 --size 320x200; then
    left=$(cd E && ls -A | LC_ALL=C sort | tr '\n' ' ')
    want=".001-input.png.before .003-weight.png.Ab12Cd .attnviz-probe.myfile .index.json.backup .other.png.Ab12Cd 002-weight.png 003-weight.png 007-my-own.png index.json notes.png "
    if [ $st -eq 0 ] && [ "$left" = "$want" ] && grep -q "removed 4 files of an earlier export and 2 stale temporaries" err; then
        ok "a re-export removes the 4 files the earlier index listed and 2 stale temporaries, nothing else"
    else
        fail "re-export: status $st, left '$left', err '$(cat err)'"
    fi
fi

# ---- what an earlier export recorded goes only while it is what attnviz wrote ---------------
# The user's own frames over attnviz's (ffmpeg's, say; here text, and PNGs
# of another attnviz export), then an export of one step into the folder.
mkdir V W
"$app" export ok.json -o V --frames --fps 2 --dwell 0.5 --steps 1-4 --size 320x200 2>/dev/null
"$app" export ok.json -o W --frames --fps 2 --dwell 0 --steps 5-6 --size 320x200 2>/dev/null
n=$(ls V/??????.png | wc -l)
for f in V/??????.png; do echo "my frame" >"$f"; done
cp W/000000.png V/000000.png
cp W/000001.png V/000001.png
if run "export over frames the user replaced" 60 "$app" export ok.json -o V --steps 1 --size 320x200; then
    mine=$(grep -l "my frame" V/??????.png | wc -l)
    if [ $st -eq 0 ] && [ "$(ls V/??????.png | wc -l)" -eq "$n" ] && [ "$mine" -eq $((n - 2)) ] &&
        cmp -s W/000000.png V/000000.png && grep -q "left $n files an earlier export listed" err; then
        ok "an export keeps the $n frames the user put over attnviz's, and says so"
    else
        fail "frames replaced by the user: status $st, $(ls V | wc -l) files, $mine of $((n - 2)) texts, err '$(cat err)'"
    fi
fi
# The count of what an earlier export listed and this one leaves is exact:
# a file changed since, a link and a folder under a listed name count; a
# listed file gone since, and one this export writes again, do not.
mkdir L
"$app" export ok.json -o L --steps 1-6 --size 320x200 2>/dev/null
rm L/003-*.png
f=$(ls L/004-*.png) && rm "$f" && ln -s 001-input.png "$f"
f=$(ls L/005-*.png) && rm "$f" && mkdir "$f"
echo changed >>"$(ls L/006-*.png)"
if run "export over changed, linked and missing files" 60 "$app" export ok.json -o L --steps 1 --size 320x200; then
    if [ $st -eq 0 ] && grep -q "removed 1 file of an earlier export" err &&
        grep -q "left 3 files an earlier export listed" err; then
        ok "an export counts the 3 listed names it leaves (changed, a link, a folder), not the one gone"
    else
        fail "changed, linked and missing files: status $st, $(ls -A L | tr '\n' ' '), err '$(cat err)'"
    fi
fi
# An older attnviz's index (no sizes or hashes): what is there is left and counted
mkdir O
"$app" export ok.json -o O --steps 1-2 --size 320x200 2>/dev/null
printf '{"format": "attnviz-export/1", "files": [{"file": "001-input.png"}, {"file": "002-weight.png"}, {"file": "009-softmax.png"}]}\n' >O/index.json
if run "export over an older attnviz's index" 60 "$app" export ok.json -o O --steps 1 --size 320x200; then
    if [ $st -eq 0 ] && [ -e O/002-weight.png ] && grep -q "left 1 file an earlier export listed" err; then
        ok "of an older index's 3 names, 1 is written again, 1 is gone: 1 left, and said so"
    else
        fail "older index: status $st, $(ls -A O | tr '\n' ' '), err '$(cat err)'"
    fi
fi
# A hand-written index.json: its frames and files are not attnviz's.
mkdir H
echo "my notes" >H/000001.png
echo "my notes" >H/000004.png
echo "my notes" >H/007-softmax.png
sum=$(sha256sum H/007-softmax.png | cut -d' ' -f1)
printf '{"format": "attnviz-export/1", "frame_count": 5, "files": [{"file": "007-softmax.png", "bytes": 9, "sha256": "%s"}]}\n' "$sum" >H/index.json
if run "export beside a hand-written index.json" 60 "$app" export ok.json -o H --steps 1 --size 320x200; then
    if [ $st -eq 0 ] && [ "$(cat H/000001.png H/000004.png H/007-softmax.png | grep -c 'my notes')" -eq 3 ] &&
        grep -q "left 3 files an earlier export listed" err; then
        ok "a hand-written index.json removes nothing of the user's, and the 3 files it names that are there are counted"
    else
        fail "hand-written index.json: status $st, $(ls H | tr '\n' ' '), err '$(cat err)'"
    fi
fi
# A name the export writes, taken by a file that is not attnviz's: refused, kept.
mkdir X
echo "my picture" >X/001-input.png
if run "export over a foreign 001-input.png" 60 "$app" export ok.json -o X --steps 1-2 --size 320x200; then
    if [ $st -eq 2 ] && grep -q "X/001-input.png: exists and is not a PNG attnviz wrote" err &&
        [ "$(cat X/001-input.png)" = "my picture" ] && [ "$(ls -A X)" = "001-input.png" ]; then
        ok "export refuses to replace a file attnviz did not write, before writing anything"
    else
        fail "foreign 001-input.png: status $st, $(ls -A X | tr '\n' ' '), err '$(cat err)'"
    fi
fi

# A file under the journal's name that is not a journal: refused, kept.
mkdir J
echo "my notes" >J/.index.json.attnviz-journal
echo "my notes" >J/.h.png.attnviz-journal
for args in "-o J --steps 1" "--sheet J/h.png --steps 1"; do
    # shellcheck disable=SC2086 # the options are words
    if run "export beside a foreign journal ($args)" 60 "$app" export ok.json $args --size 320x200; then
        if [ $st -eq 2 ] && grep -q "attnviz-journal: exists and is not a journal of attnviz's" err &&
            [ "$(cat J/.index.json.attnviz-journal J/.h.png.attnviz-journal)" = "my notes
my notes" ] && [ "$(ls -A J | wc -l)" -eq 2 ]; then
            ok "export $args refuses to replace a foreign file named like its journal, and writes nothing"
        else
            fail "foreign journal ($args): status $st, $(ls -A J | tr '\n' ' '), err '$(cat err)'"
        fi
    fi
done

# ---- signals end an export at once, and leave no temporary ---------------------------------
# A second signal ends it at once (the deadline), with the same line as one
# the export stops at: "attnviz export: S: interrupted after N of M files".
for sig in TERM INT HUP INT-twice; do
    rm -rf S
    "$app" export ok.json -o S --size 4000x4000 --png-level 0 --threads 2 >/dev/null 2>err &
    pid=$!
    for _ in $(seq 300); do
        [ -n "$(ls -A S 2>/dev/null | grep -v probe)" ] && break
        sleep 0.1
    done
    if [ -z "$(ls -A S 2>/dev/null | grep -v probe)" ] || ! kill -0 $pid 2>/dev/null; then
        fail "SIG$sig: the export was not writing when the signal was to come: $(cat err)"
        kill -KILL $pid 2>/dev/null
        wait $pid
        continue
    fi
    kill -"${sig%-twice}" $pid
    [ "$sig" = INT-twice ] && kill -INT $pid 2>/dev/null
    # generous for a loaded machine; the export itself gives up after 0.4 s
    for _ in $(seq 100); do
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 $pid 2>/dev/null; then
        fail "SIG$sig: the export is still running 10 s later"
        kill -KILL $pid
        wait $pid
    else
        wait $pid
        st=$?
        # left: the PNGs written, each listed in the journal; no index.json
        temps=$(ls -A S | grep '^\.' | grep -vc '^\.index\.json\.attnviz-journal$' || true)
        unlisted=0
        for f in S/*.png; do
            [ -e "$f" ] && ! grep -q " ${f#S/}$" S/.index.json.attnviz-journal && unlisted=$((unlisted + 1))
        done
        if [ $st -eq 1 ] && grep -qE '^attnviz export: S: interrupted after [0-9]+ of [0-9]+ files$' err &&
            [ "$(wc -l <err)" -eq 1 ] && [ "$temps" -eq 0 ] && [ ! -e S/index.json ] && [ $unlisted -eq 0 ]; then
            ok "SIG$sig ends the export (status $st), leaves no temporary, and its journal lists what it wrote"
        else
            fail "SIG$sig: status $st, $temps temporaries, $unlisted PNGs unlisted: $(ls -A S | tr '\n' ' '), err '$(cat err)'"
        fi
    fi
done

# ---- a kill part-way: the journal lists what is there; the next export clears it -------------
mkdir K
"$app" export ok.json -o K --steps 1-12 --size 320x200 2>/dev/null
sed 's/"id":"t"/"id":"u"/' ok.json >u.json
"$app" export u.json -o K --frames --fps 30 --size 640x400 --threads 1 >/dev/null 2>err &
pid=$!
for _ in $(seq 600); do
    [ -n "$(ls K/00001?.png 2>/dev/null)" ] && break
    sleep 0.05
done
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
unlisted=0
for f in K/*.png; do
    [ -e "$f" ] && ! grep -q " ${f#K/}$" K/.index.json.attnviz-journal 2>/dev/null && unlisted=$((unlisted + 1))
done
olds=$(grep -la 'attnviz:lesson.t' K/*.png 2>/dev/null | wc -l)
if [ ! -e K/index.json ] && [ $unlisted -eq 0 ] && [ "$olds" -eq 0 ]; then
    ok "SIGKILL part-way: no index.json, no PNG of the earlier export, the journal lists every PNG"
else
    fail "SIGKILL part-way: index.json $([ -e K/index.json ] && echo left), $unlisted unlisted, $olds earlier: $(ls -A K | tr '\n' ' ')"
fi
if run "the export after a kill" 60 "$app" export u.json -o K --steps 1-2 --size 320x200; then
    left=$(cd K && ls -A | LC_ALL=C sort | tr '\n' ' ')
    if [ $st -eq 0 ] && [ "$left" = "001-input.png 002-weight.png index.json " ]; then
        ok "the next export removes what the killed one wrote, and leaves exactly its own files"
    else
        fail "after a kill: status $st, left '$left', err '$(cat err)'"
    fi
fi

# ---- long paths: written whole or refused, never cut -------------------------------------
# Folders of 200-byte names make --sheet's path 1,103 bytes long: cut at
# 1,100 bytes it would read .../handout, where a foreign file waits.
deep=$work/$(printf 'a%.0s' $(seq 200))/$(printf 'b%.0s' $(seq 200))/$(printf 'c%.0s' $(seq 200))/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))
deep=$deep/$(printf 'f%.0s' $(seq $((1103 - ${#deep} - 1 - 12))))
mkdir -p "$deep"
echo "not attnviz's" >"$deep/handout"
if run "--sheet with a 1,103-byte path" 120 "$app" export ok.json --sheet "$deep/handout.png" --steps 1-3 --size 320x200; then
    if [ $st -eq 0 ] && [ ${#deep} -eq 1091 ] && [ "$(cat "$deep/handout")" = "not attnviz's" ] &&
        [ -f "$deep/handout.png" ] && ! grep -q removed err; then
        ok "--sheet at a 1,103-byte path writes that file and leaves the foreign .../handout"
    else
        fail "--sheet at a long path: status $st, handout '$(cat "$deep/handout" 2>&1)', $(ls "$deep" | tr '\n' ' '), err '$(cat err)'"
    fi
fi
# A name whose temporary (.NAME.attnviz-XXXXXX) would pass NAME_MAX, and a
# path past PATH_MAX: refused before drawing, naming the limit.
name=$(printf 'n%.0s' $(seq 246)).png
if run "--sheet with a 250-byte name" 60 "$app" export ok.json --sheet "$name" --steps 1 --size 320x200; then
    if [ $st -eq 2 ] && grep -q "too long" err && [ -z "$(ls -A | grep '^\.n\|^nnn')" ]; then
        ok "--sheet with a 250-byte name: refused, nothing written"
    else
        fail "--sheet with a 250-byte name: status $st, err '$(cat err)'"
    fi
fi
# A name that fits, whose journal (.NAME.attnviz-journal, written through
# its own temporary) does not: refused, naming the handout and why.
name=$(printf 'j%.0s' $(seq 226)).png
if run "--sheet with a 230-byte name" 60 "$app" export ok.json --sheet "$name" --steps 1 --size 320x200; then
    if [ $st -eq 2 ] && grep -q "^attnviz export: $name: too long a name for a PNG handout, which keeps a journal" err &&
        [ -z "$(ls -A | grep 'jjj')" ]; then
        ok "--sheet with a 230-byte name: refused for its journal, nothing written"
    else
        fail "--sheet with a 230-byte name: status $st, err '$(cat err)'"
    fi
fi
far=$deep
while [ ${#far} -lt 4100 ]; do far=$far/$(printf 'g%.0s' $(seq 200)); done
if run "-o past PATH_MAX" 60 "$app" export ok.json -o "$far" --steps 1 --size 320x200; then
    if [ $st -ne 0 ] && grep -q "too long" err && [ "$(wc -l <err)" -eq 1 ]; then
        ok "-o past PATH_MAX: refused with one line"
    else
        fail "-o past PATH_MAX: status $st, err '$(cat err)'"
    fi
fi
rm -rf "$work/$(printf 'a%.0s' $(seq 200))"

# ---- long texts: cut only at a character, never dropped ----------------------------------
if ! command -v python3 >/dev/null 2>&1; then
    echo "skip: long texts (python3 reads index.json and the PNG chunks; not installed)"
else
# The issue's repro: an intro of 10 "x" and an input narration of 1365 "好"
# (4095 bytes); and a title of 1000 "好" (3000 bytes) on the sheet.
python3 - <<'PY' >long.json
import json
print(json.dumps({"format": "attnviz-lesson/1", "id": "long", "title": {"en": "好" * 1000},
                  "tokens": ["a", "b"], "d_model": 2,
                  "narration": {"intro": {"en": "x" * 10}, "input": {"en": "好" * 1365}}}, ensure_ascii=False))
PY
if run "export of long texts" 120 "$app" export long.json -o L --steps 1 --sheet sheet.png --size 320x200; then
    if [ $st -ne 0 ]; then
        fail "export of long texts: status $st, err '$(cat err)'"
    elif python3 - L/index.json L/001-input.png sheet.png <<'PY'; then
import json, struct, sys, zlib
idx = json.load(open(sys.argv[1], encoding="utf-8"))  # fails on a split character
narr = idx["files"][0]["narration"]
assert narr == "x" * 10 + "\n" + "好" * 1365, "step 0's narration is not the intro and the whole text"
def texts(path):
    data = open(path, "rb").read()
    at, out = 8, {}
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"iTXt":
            k, rest = body.split(b"\0", 1)
            flag, method = rest[0], rest[1]
            lang, rest = rest[2:].split(b"\0", 1)
            tk, v = rest.split(b"\0", 1)
            out[k.decode("latin-1")] = (zlib.decompress(v) if flag else v).decode("utf-8")  # strict
        at += 12 + n
    return out
assert texts(sys.argv[2])["Description"] == narr, "the PNG's Description is not the narration, whole"
assert texts(sys.argv[3])["Title"] == "好" * 1000, "the sheet's Title is cut"
PY
        ok "long narration and title: whole, valid UTF-8, in index.json and the PNG text chunks"
    else
        fail "long texts: index.json or a PNG text chunk is cut or invalid"
    fi
fi
fi

# ---- the trace streams, and says when it cannot be written -------------------------------
timeout -s KILL 60 "$app" trace ok.json >/dev/full 2>err
st=$?
if [ $st -eq 1 ] && grep -q "writing the trace" err; then
    ok "trace into /dev/full: exit 1"
else
    fail "trace into /dev/full: status $st, err '$(cat err)'"
fi

[ $failures -eq 0 ] || {
    echo "$failures failure(s)"
    exit 1
}
echo "all passed"
