# env.sh: sourced by the web build's scripts; sets up Debian's emscripten.
#
#   . tools/web/env.sh BUILD_DIR
#
# Debian's emscripten keeps its cache (the prebuilt C library for
# WebAssembly) read-only and frozen: a writable copy goes to
# BUILD_DIR/deps/em-cache, once. Linking with optimisation runs a JavaScript
# step that needs Debian's node-acorn, which lives in the folder of Debian's
# node modules: NODE_PATH names it.
web_env() {
    local build=$1
    local cache=$build/deps/em-cache
    if [ ! -f "$cache/.attnviz-copied" ]; then
        local system_cache=/usr/share/emscripten/cache
        rm -rf "$cache"
        mkdir -p "$cache"
        cp -r "$system_cache"/. "$cache"/
        rm -f "$cache/cache.lock"
        touch "$cache/.attnviz-copied"
    fi
    export EM_CACHE=$cache EM_FROZEN_CACHE=0
    export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
}
