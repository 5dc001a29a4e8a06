#!/usr/bin/env bash
# show_stats.sh: `attnviz show LESSON --autoplay --quit-at-end --frame-stats`
# plays every step, quits by itself with status 0 and prints exactly the two
# lines the benchmark script reads:
#   frames: N p50: X ms p99: Y ms max: Z ms
#   first-frame: X ms
# Run inside an X server (CTest wraps it in xvfb-run). 77: skipped.
set -uo pipefail
app=${1:?usage: show_stats.sh ATTNVIZ [LESSON]}
shift
# no LESSON: the default lesson
[ -n "${DISPLAY:-}" ] || { echo "SKIP: no X display"; exit 77; }
export SDL_VIDEODRIVER=x11
out=$(timeout 120 "$app" show "$@" --autoplay --quit-at-end --frame-stats --speed 8 --size 800x600 2>/tmp/attnviz-stats.$$)
st=$?
err=$(cat /tmp/attnviz-stats.$$); rm -f /tmp/attnviz-stats.$$
[ $st -eq 0 ] || { echo "FAIL: exit status $st: $err"; exit 1; }
echo "$out"
echo "$out" | grep -Eq '^frames: [0-9]+ p50: [0-9.]+ ms p99: [0-9.]+ ms max: [0-9.]+ ms$' ||
    { echo "FAIL: no 'frames: N p50: X ms p99: Y ms max: Z ms' line"; exit 1; }
echo "$out" | grep -Eq '^first-frame: [0-9.]+ ms$' || { echo "FAIL: no 'first-frame: X ms' line"; exit 1; }
n=$(echo "$out" | sed -n 's/^frames: \([0-9]*\).*/\1/p')
[ "$n" -ge 30 ] || { echo "FAIL: only $n frames for a whole lesson"; exit 1; }
[ "$(echo "$out" | wc -l)" -eq 2 ] || { echo "FAIL: stdout has more than the two lines"; exit 1; }
echo "ok: $n frames, quit at the end with status 0"
