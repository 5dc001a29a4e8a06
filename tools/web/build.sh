#!/usr/bin/env bash
# build.sh: attnviz for the browser.
#
#   tools/web/build.sh [DIR]     (tools/setup.sh web runs it; DIR defaults to ./build-web)
#
# Builds the libraries for WebAssembly from Debian's source packages into
# DIR/deps (tools/web/deps.sh: once; later builds reuse them), then attnviz
# itself with Emscripten into DIR: index.html, attnviz.js, attnviz.wasm and
# attnviz.data (the lessons and fonts). Serve DIR with any static server:
#
#   python3 -m http.server -d build-web 8000    # then open http://localhost:8000/
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$here/build-web}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${ATTNVIZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
command -v emcc >/dev/null 2>&1 || {
    echo "build.sh: emcc is missing: apt-get install emscripten node-acorn (or run tools/setup.sh web)" >&2
    exit 1
}
start=$SECONDS

# shellcheck source=env.sh
. "$here/tools/web/env.sh"
web_env "$out"
"$here/tools/web/deps.sh" "$out/deps"

say "configuring attnviz for the browser in $out"
export PKG_CONFIG_LIBDIR=$out/deps/prefix/lib/pkgconfig PKG_CONFIG_PATH=
# with CI=true (or ATTNVIZ_WERROR=ON) warnings are errors, as in the native build
werror=${ATTNVIZ_WERROR:-OFF}
[ "${CI:-}" = "true" ] && werror=ON
emcmake cmake -S "$here" -B "$out" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF "-DATTNVIZ_WERROR=$werror" \
    "-DCMAKE_FIND_ROOT_PATH=$out/deps/prefix" >"$out/configure.log" 2>&1 || {
    cat "$out/configure.log" >&2
    exit 1
}
say "building attnviz for the browser"
set +e
cmake --build "$out" -j "$jobs" 2>&1 | tee "$out/build.log" | grep -E "warning|error|Error|%\] Linking" >&2
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "build.sh: the build failed; its output is in $out/build.log" >&2; exit 1; }
[ -f "$out/attnviz.wasm" ] || { echo "build.sh: no attnviz.wasm was made" >&2; exit 1; }
size() { du -k "$1" | cut -f1; }
say "built in $((SECONDS - start)) s: $out (attnviz.wasm $(size "$out/attnviz.wasm") KB, attnviz.data $(size "$out/attnviz.data") KB)"
say "serve it with: python3 -m http.server -d $out 8000, then open http://localhost:8000/"
