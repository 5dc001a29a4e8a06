#!/usr/bin/env bash
# deps.sh: the libraries attnviz links, built for WebAssembly from Debian's
# source packages.
#
#   tools/web/deps.sh DIR
#
# Fetches the source packages of zlib, libpng, cJSON, FreeType, SDL2 and
# SDL2_ttf with `apt-get source` (a private deb-src list under DIR/apt: the
# system's apt configuration is not touched), unpacks them with Debian's
# patches, and compiles each with emcc into DIR/prefix (lib/*.a, include/,
# lib/pkgconfig/*.pc). A library already built from the same source version
# is kept, so a second run does nothing.
#
# Each library is compiled file by file with its own configuration header for
# Emscripten (SDL_config_emscripten.h, libpng's pnglibconf.h.prebuilt, and
# FreeType's ftmodule.h narrowed to the modules two fonts need), as
# Emscripten's own ports do: no configure step, which for SDL2 alone takes
# minutes on two cores.
#
# Needs: emcc (Debian's emscripten), dpkg-source (dpkg-dev), and Debian's
# package servers. EM_CACHE must name a writable cache (tools/setup.sh web
# sets it up).
set -euo pipefail

out=${1:?usage: deps.sh DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${ATTNVIZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
prefix=$out/prefix
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$out/src"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# ---- the sources: apt-get source against a private deb-src list ----

apt_dir=$out/apt
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1")
[ "$(id -u)" -eq 0 ] && apt_opts+=(-o "APT::Sandbox::User=root")

# The system's Debian entries, as deb-src (deb822 .sources files and
# one-line sources.list entries alike).
deb_src_list() {
    mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
    local f n=0
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        sed -E 's/^Types:.*$/Types: deb-src/' "$f" >"$apt_dir/sources.list.d/$n.sources"
        n=$((n + 1))
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        sed -nE 's/^deb(\s)/deb-src\1/p' "$f" >"$apt_dir/sources.list.d/$n.list"
        n=$((n + 1))
    done
}

# retry COMMAND...: a network step, tried three times (10 s, then 30 s
# apart), so that one dropped connection does not fail a build from nothing
retry() {
    local wait
    for wait in 10 30 0; do
        "$@" && return 0
        [ "$wait" -eq 0 ] && return 1
        echo "deps.sh: '$*' failed; again in $wait s" >&2
        sleep "$wait"
    done
}

# once a run (unpack runs in a subshell: the mark is a file)
rm -f "$apt_dir/.updated"
apt_update() {
    [ -f "$apt_dir/.updated" ] && return 0
    deb_src_list
    say "reading Debian's source package lists"
    retry apt-get "${apt_opts[@]}" -qq update || {
        echo "deps.sh: cannot read Debian's source package lists (apt-get update, above)" >&2
        exit 1
    }
    touch "$apt_dir/.updated"
}

# unpack PKG: the newest version of source package PKG whose files can be
# fetched (a mirror may list a security update it does not hold yet),
# unpacked with Debian's patches. Prints the source folder.
unpack() {
    local pkg=$1 v dir
    for dir in "$out/src/$pkg"-[0-9]*/; do # libsdl2-2.26.5, not libsdl2-ttf-2.20.1
        if [ -f "$dir/.attnviz-unpacked" ]; then
            echo "${dir%/}"
            return 0
        fi
    done
    apt_update
    local versions
    versions=$(apt-cache "${apt_opts[@]}" showsrc "$pkg" | sed -n 's/^Version: //p' | sort -rV | uniq)
    [ -n "$versions" ] || {
        echo "deps.sh: Debian has no source package '$pkg'" >&2
        exit 1
    }
    local dl=$out/src/.download wait
    # the newest version first; when none can be fetched, all again twice
    for wait in 0 10 30; do
        [ "$wait" -eq 0 ] || {
            echo "deps.sh: no version of '$pkg' could be fetched; again in $wait s" >&2
            sleep "$wait"
        }
        for v in $versions; do
            rm -rf "$dl"
            mkdir -p "$dl"
            (cd "$dl" && apt-get "${apt_opts[@]}" -qq source --download-only "$pkg=$v" >/dev/null 2>&1) || continue
            local upstream=${v#*:}
            upstream=${upstream%-*}
            dir=$out/src/$pkg-$upstream
            rm -rf "$dir"
            dpkg-source --no-check -x "$dl"/*.dsc "$dir" >/dev/null
            touch "$dir/.attnviz-unpacked"
            rm -rf "$dl" "$out/src"/*.orig*.tar.* # dpkg-source copies the tarballs beside the folder
            say "source: $pkg $v"
            echo "$dir"
            return 0
        done
    done
    echo "deps.sh: none of the versions of '$pkg' ($(echo $versions)) could be fetched" >&2
    exit 1
}

# ---- compiling ----

# compile_some FILE...: source files of the library being built (the
# variables below) into objects named after them, for xargs: one emcc for
# several files, since each emcc starts Python and reads its configuration.
compile_some() {
    local flags=() files=()
    [ -z "$DEPS_FLAGS" ] || mapfile -t flags <<<"$DEPS_FLAGS"
    for f in "$@"; do files+=("$DEPS_SRC/$f"); done
    cd "$DEPS_OBJ" && emcc -O2 -w -sUSE_SDL=0 -c "${files[@]}" "${flags[@]}"
}
export -f compile_some

# build NAME SRCDIR FLAGS... -- FILES...: compiles FILES (relative to SRCDIR)
# in parallel into lib NAME.a, unless it was built so already.
build() {
    local name=$1 src=$2
    shift 2
    local flags=()
    while [ "$1" != "--" ]; do
        flags+=("$1")
        shift
    done
    shift
    # the recipe names the source folder relative to DIR, so that a copied or
    # moved DIR keeps its libraries
    local stamp=$prefix/lib/.$name.from recipe
    recipe="${src#"$out"/} ${flags[*]//"$out"/DIR} $*"
    if [ -f "$prefix/lib/$name.a" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$recipe" ]; then
        return 0
    fi
    say "compiling $name ($# files) for WebAssembly"
    export DEPS_SRC=$src DEPS_OBJ=$out/obj/$name
    DEPS_FLAGS=$(printf '%s\n' "${flags[@]}" | sed '/^$/d')
    export DEPS_FLAGS
    rm -rf "$DEPS_OBJ"
    mkdir -p "$DEPS_OBJ"
    # one library's files have distinct names (emcc -c writes NAME.o)
    local dup
    dup=$(printf '%s\n' "$@" | xargs -n 1 basename | sort | uniq -d)
    [ -z "$dup" ] || { echo "deps.sh: $name: two sources named $dup" >&2; exit 1; }
    printf '%s\n' "$@" | xargs -P "$jobs" -n 12 bash -c 'compile_some "$@"' _
    rm -f "$prefix/lib/$name.a"
    emar rcs "$prefix/lib/$name.a" "$DEPS_OBJ"/*.o
    echo "$recipe" >"$stamp"
}

# pc NAME VERSION CFLAGS LIBS [REQUIRES]: a pkg-config file, so that
# attnviz's CMakeLists finds these libraries as it finds the system's.
pc() {
    cat >"$prefix/lib/pkgconfig/$1.pc" <<EOF
prefix=$prefix
Name: $1
Description: $1 for WebAssembly (attnviz's web build)
Version: $2
Requires: ${5:-}
Cflags: $3
Libs: $4
EOF
}

# zlib
src=$(unpack zlib)
build libz "$src" -- adler32.c compress.c crc32.c deflate.c inffast.c inflate.c inftrees.c trees.c uncompr.c zutil.c
cp "$src/zlib.h" "$src/zconf.h" "$prefix/include/"
pc zlib 1.2.13 "-I$prefix/include" "-L$prefix/lib -lz"

# libpng
src=$(unpack libpng1.6)
cp "$src/scripts/pnglibconf.h.prebuilt" "$src/pnglibconf.h"
build libpng16 "$src" "-I$prefix/include" -- png.c pngerror.c pngget.c pngmem.c pngpread.c pngread.c pngrio.c \
    pngrtran.c pngrutil.c pngset.c pngtrans.c pngwio.c pngwrite.c pngwtran.c pngwutil.c
cp "$src/png.h" "$src/pngconf.h" "$src/pnglibconf.h" "$prefix/include/"
pc libpng 1.6.39 "-I$prefix/include" "-L$prefix/lib -lpng16" zlib

# cJSON
src=$(unpack cjson)
build libcjson "$src" -- cJSON.c
mkdir -p "$prefix/include/cjson"
cp "$src/cJSON.h" "$prefix/include/cjson/"
pc libcjson 1.7.15 "-I$prefix/include -I$prefix/include/cjson" "-L$prefix/lib -lcjson"

# FreeType: TrueType (DejaVu Sans) and CFF (Noto Sans CJK) outlines,
# rendered with the smooth rasteriser and hinted by the autofitter; WOFF
# fonts unpacked with zlib
src=$(unpack freetype)
cat >"$src/include/attnviz-ftmodule.h" <<'EOF'
FT_USE_MODULE( FT_Module_Class, autofit_module_class )
FT_USE_MODULE( FT_Driver_ClassRec, tt_driver_class )
FT_USE_MODULE( FT_Driver_ClassRec, cff_driver_class )
FT_USE_MODULE( FT_Module_Class, psaux_module_class )
FT_USE_MODULE( FT_Module_Class, psnames_module_class )
FT_USE_MODULE( FT_Module_Class, pshinter_module_class )
FT_USE_MODULE( FT_Module_Class, sfnt_module_class )
FT_USE_MODULE( FT_Renderer_Class, ft_smooth_renderer_class )
EOF
build libfreetype "$src" -DFT2_BUILD_LIBRARY "-DFT_CONFIG_MODULES_H=<attnviz-ftmodule.h>" \
    -DFT_CONFIG_OPTION_SYSTEM_ZLIB "-I$src/include" "-I$prefix/include" -- src/gzip/ftgzip.c \
    src/base/ftbase.c src/base/ftbbox.c src/base/ftbitmap.c src/base/ftdebug.c src/base/ftfstype.c \
    src/base/ftgasp.c src/base/ftglyph.c src/base/ftinit.c src/base/ftmm.c src/base/ftstroke.c src/base/ftsynth.c \
    src/base/ftsystem.c src/autofit/autofit.c src/truetype/truetype.c src/cff/cff.c src/psaux/psaux.c \
    src/psnames/psnames.c src/pshinter/pshinter.c src/sfnt/sfnt.c src/smooth/smooth.c
rm -rf "$prefix/include/freetype2"
mkdir -p "$prefix/include/freetype2"
cp -r "$src/include/freetype" "$src/include/ft2build.h" "$prefix/include/freetype2/"
pc freetype2 2.12.1 "-I$prefix/include/freetype2" "-L$prefix/lib -lfreetype" zlib

# SDL2: the Emscripten video, audio and event back-ends, the software and
# GLES2 renderers; no threads (SDL_config_emscripten.h without pthreads)
src=$(unpack libsdl2)
sdl_files=$(cd "$src/src" && ls ./*.c atomic/*.c audio/*.c audio/emscripten/*.c audio/dummy/*.c audio/disk/*.c \
    cpuinfo/*.c dynapi/*.c events/*.c file/*.c filesystem/emscripten/*.c haptic/*.c haptic/dummy/*.c \
    joystick/*.c joystick/emscripten/*.c joystick/virtual/*.c libm/*.c loadso/dlopen/*.c locale/*.c \
    locale/emscripten/*.c misc/*.c misc/emscripten/*.c power/*.c power/emscripten/*.c render/*.c \
    render/software/*.c render/opengles2/*.c sensor/*.c sensor/dummy/*.c stdlib/*.c thread/*.c \
    thread/generic/*.c timer/*.c timer/unix/*.c video/*.c video/emscripten/*.c video/dummy/*.c \
    video/yuv2rgb/*.c | sed 's|^\./||; s|^|src/|')
# shellcheck disable=SC2086
build libSDL2 "$src" "-I$src/include" -- $sdl_files
mkdir -p "$prefix/include/SDL2"
cp "$src"/include/*.h "$prefix/include/SDL2/"
pc sdl2 2.26.5 "-I$prefix/include/SDL2" "-L$prefix/lib -lSDL2"

# SDL2_ttf, with FreeType and without HarfBuzz
src=$(unpack libsdl2-ttf)
build libSDL2_ttf "$src" "-I$prefix/include/SDL2" "-I$prefix/include/freetype2" -DTTF_USE_HARFBUZZ=0 -- SDL_ttf.c
cp "$src/SDL_ttf.h" "$prefix/include/SDL2/"
pc SDL2_ttf 2.20.1 "-I$prefix/include/SDL2" "-L$prefix/lib -lSDL2_ttf" "sdl2 freetype2"

say "the libraries for WebAssembly are in $prefix"
