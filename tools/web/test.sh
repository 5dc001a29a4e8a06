#!/usr/bin/env bash
# test.sh: the browser build, tested in a real browser.
#
#   tools/web/test.sh [WEB_DIR] [NATIVE_ATTNVIZ]    (tools/setup.sh web-test runs it)
#
# Serves WEB_DIR (default ./build-web) on 127.0.0.1 and drives Debian's
# Chromium, headless, through the DevTools protocol (chrome-remote-interface
# from npm, installed into WEB_DIR/test-node the first time): tools/web/test.cjs
# says what it checks. NATIVE_ATTNVIZ (default ./build/attnviz) exports the
# frames the browser's are compared with. ATTNVIZ_WEB_MEASURE=1 also
# measures the budgets (first frame, bytes, frame times) and prints them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
web=$(cd "${1:-$here/build-web}" && pwd)
native=${2:-$here/build/attnviz}
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

[ -f "$web/attnviz.wasm" ] || { echo "test.sh: no $web/attnviz.wasm: run tools/setup.sh web first" >&2; exit 1; }
[ -x "$native" ] || { echo "test.sh: no native attnviz at $native: run tools/setup.sh build first" >&2; exit 1; }
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "test.sh: chromium is missing (apt-get install chromium)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "test.sh: npm is missing (apt-get install npm)" >&2; exit 1; }

modules=$web/test-node
if [ ! -d "$modules/node_modules/chrome-remote-interface" ]; then
    say "installing chrome-remote-interface from npm into $modules"
    mkdir -p "$modules"
    npm install --silent --no-audit --no-fund --prefix "$modules" chrome-remote-interface@0.34.0 >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-webtest.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The native frames the browser's are compared with: step 12 of the default
# lesson in Chinese at 1280x720, with the bundled fonts only (an empty
# fontconfig configuration), as the browser has them.
lesson=mhsa-wo-xihuan-paobu
step=12
printf '<?xml version="1.0"?>\n<fontconfig></fontconfig>\n' >"$work/fonts.conf"
FONTCONFIG_FILE=$work/fonts.conf "$native" export "$lesson" -o "$work/native" --steps "$step" --lang zh \
    --size 1280x720 -q
native_png=$(ls "$work/native"/*.png)

say "testing $web in $("$chromium" --version 2>/dev/null | head -1)"
NODE_PATH=$modules/node_modules ATTNVIZ_CHROMIUM=$chromium ATTNVIZ_WEB_DIR=$web ATTNVIZ_NATIVE_PNG=$native_png \
    ATTNVIZ_STEP=$step ATTNVIZ_LESSON=$lesson ATTNVIZ_WORK=$work node "$here/tools/web/test.cjs"
