#!/usr/bin/env bash
# setup.sh: install what attnviz needs, build it, then run it or test it.
#
#   tools/setup.sh run [ARGS...]   install, build, open the default lesson (or ARGS: attnviz ARGS)
#   tools/setup.sh test            install, build, run the whole test suite
#   tools/setup.sh build           install and build only
#   tools/setup.sh web             build attnviz for the browser into ./build-web (tools/web/build.sh)
#   tools/setup.sh web-test        the web build, then its test in headless Chromium (tools/web/test.sh)
#
# Debian and Ubuntu: missing packages are installed with apt-get (through sudo
# when not root). Elsewhere it prints the equivalent brew/dnf command and
# builds with whatever pkg-config finds. The build goes to ./build (or
# $ATTNVIZ_BUILD_DIR), the web build to ./build-web (or $ATTNVIZ_WEB_DIR).
# With CI=true, warnings are errors. The build shows its percentage as it
# goes; the first one takes a few minutes (README).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNVIZ_BUILD_DIR:-$here/build}
mode=${1:-run}
[ $# -gt 0 ] && shift

case "$mode" in
run | test | build | web | web-test) ;;
-h | --help)
    sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "setup.sh: unknown mode '$mode' (run, test, build, web or web-test)" >&2
    exit 2
    ;;
esac

# What the build, the program and the tests need, by Debian package name.
debian_packages=(
    build-essential cmake pkg-config help2man
    libsdl2-dev libsdl2-ttf-dev libcjson-dev libpng-dev libfontconfig-dev libcairo2-dev
    libcmocka-dev
    fonts-dejavu-core fonts-noto-cjk
    xvfb xauth xdotool x11-apps x11-utils imagemagick poppler-utils
)
# CI also checks formatting and compares every lesson with PyTorch.
if [ "${CI:-}" = "true" ]; then
    debian_packages+=(clang-format python3-torch python3-numpy)
fi
# The web build: Debian's emscripten and the tools that fetch and unpack
# Debian's source packages of the libraries (tools/web/deps.sh); its test
# drives Debian's Chromium through the DevTools protocol with node.
case "$mode" in
web) debian_packages=(cmake pkg-config dpkg-dev xz-utils emscripten node-acorn) ;;
web-test) debian_packages=(cmake pkg-config dpkg-dev xz-utils emscripten node-acorn chromium nodejs "${debian_packages[@]}") ;;
esac

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_debian() {
    local missing=()
    for p in "${debian_packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "all ${#debian_packages[@]} packages are installed"
        return 0
    fi
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "setup.sh: these packages are missing and this user cannot install them (no sudo):" >&2
            echo "  apt-get install ${missing[*]}" >&2
            exit 1
        fi
    fi
    say "installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
    install_debian
else
    cat >&2 <<'EOF'
setup.sh: not a Debian/Ubuntu system; install the dependencies yourself, then rerun:
  macOS (Homebrew):  brew install cmake pkg-config sdl2 sdl2_ttf cjson libpng fontconfig cairo cmocka
  Fedora (dnf):      sudo dnf install cmake gcc pkgconf-pkg-config SDL2-devel SDL2_ttf-devel cjson-devel \
                       libpng-devel fontconfig-devel cairo-devel libcmocka-devel dejavu-sans-fonts \
                       google-noto-sans-cjk-fonts xorg-x11-server-Xvfb xdotool ImageMagick
Trying to build with what is there.
EOF
fi

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
jobs=$(nproc 2>/dev/null || echo 2)

# "1 min 20 s" since the shell's start (bash's SECONDS) or $1
elapsed() {
    local s=$((SECONDS - ${1:-0}))
    if [ $s -ge 60 ]; then echo "$((s / 60)) min $((s % 60)) s"; else echo "$s s"; fi
}

# Reads a build's output and shows its progress: on a terminal one line
# rewritten in place ("building: 45%  src/engine/kernels.c"), elsewhere a
# line at every tenth. Warnings and errors pass through whole.
progress() {
    local line pct=0 shown=-10 tty=0 what
    [ -t 2 ] && tty=1
    while IFS= read -r line; do
        if [[ $line =~ ^\[\ *([0-9]+)%\]\ (.*)$ ]]; then # make: "[ 45%] Building C object ..."
            pct=${BASH_REMATCH[1]}
            what=${BASH_REMATCH[2]}
        elif [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\ (.*)$ ]]; then # ninja: "[12/345] ..."
            pct=$((100 * BASH_REMATCH[1] / BASH_REMATCH[2]))
            what=${BASH_REMATCH[3]}
        elif [[ $line =~ (warning|error|Error|undefined reference|\*\*\*) ]]; then
            [ $tty -eq 1 ] && printf '\r\033[K' >&2
            printf '%s\n' "$line" >&2
            continue
        else
            continue
        fi
        what=${what##* }
        if [ $tty -eq 1 ]; then
            printf '\r\033[K  building: %3d%%  %s' "$pct" "${what:0:60}" >&2
        elif [ "$pct" -ge $((shown + 10)) ]; then
            shown=$((pct - pct % 10))
            printf '  building: %3d%% after %s\n' "$pct" "$(elapsed "$start")" >&2
        fi
    done
    [ $tty -eq 1 ] && printf '\r\033[K' >&2
    return 0
}

# build_native: configure and build ./build, with the progress shown and
# the whole output kept in build/build.log.
build_native() {
    start=$SECONDS
    say "configuring in $build"
    cmake -S "$here" -B "$build" -DATTNVIZ_WERROR=$werror >/dev/null
    say "building (the first build takes 1 to 5 minutes on two cores, as busy as they are; later ones only what changed)"
    local rc
    set +e
    cmake --build "$build" -j "$jobs" 2>&1 | tee "$build/build.log" | progress
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -ne 0 ]; then
        echo "setup.sh: the build failed after $(elapsed "$start"); its whole output is in $build/build.log" >&2
        exit "$rc"
    fi
    say "built in $(elapsed "$start"): $build/attnviz"
}

case "$mode" in
build)
    build_native
    say "done"
    ;;
run)
    build_native
    say "opening attnviz"
    exec "$build/attnviz" show "$@"
    ;;
test)
    build_native
    say "running the tests"
    cd "$build"
    exec ctest --output-on-failure -j "$jobs"
    ;;
web)
    exec "$here/tools/web/build.sh" "${ATTNVIZ_WEB_DIR:-$here/build-web}"
    ;;
web-test)
    "$here/tools/web/build.sh" "${ATTNVIZ_WEB_DIR:-$here/build-web}"
    build_native
    exec "$here/tools/web/test.sh" "${ATTNVIZ_WEB_DIR:-$here/build-web}" "$build/attnviz"
    ;;
esac
