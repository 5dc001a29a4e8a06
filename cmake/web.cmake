# web.cmake: attnviz for the browser. tools/web/build.sh configures the
# project with Emscripten (emcmake) against the libraries tools/web/deps.sh
# built for WebAssembly, into build-web/:
#
#   index.html    the page (tools/web/index.html): the canvas, the URL's
#                 state, dropped and chosen lesson files, downloads
#   attnviz.js    Emscripten's loader, and attnviz.wasm, the program
#   attnviz.data  the lessons and the bundled fonts, preloaded into the
#                 page's memory at /attnviz (ATTNVIZ_DATA_DIR, set by the page)
#
# The program is the same C; the browser's differences are in
# src/app/web/show_web.c.
target_sources(attnviz PRIVATE ${PROJECT_SOURCE_DIR}/src/app/web/show_web.c)
target_include_directories(attnviz PRIVATE ${PROJECT_SOURCE_DIR}/src/app)
set_target_properties(attnviz PROPERTIES SUFFIX .js)
target_link_options(
  attnviz PRIVATE
  -sUSE_SDL=0 # SDL2 is linked as a library (deps.sh), not Emscripten's own SDL 1 in JavaScript
  -sENVIRONMENT=web
  -sALLOW_MEMORY_GROWTH=1
  -sINITIAL_MEMORY=67108864
  -sEXIT_RUNTIME=0
  -sEXPORTED_RUNTIME_METHODS=[FS,ENV,ccall]
  "SHELL:--preload-file ${PROJECT_SOURCE_DIR}/lessons@/attnviz/lessons"
  "SHELL:--preload-file ${PROJECT_SOURCE_DIR}/assets/fonts/DejaVuSans.ttf@/attnviz/fonts/DejaVuSans.ttf"
  "SHELL:--preload-file ${PROJECT_SOURCE_DIR}/assets/fonts/NotoSansCJKsc-Subset.otf@/attnviz/fonts/NotoSansCJKsc-Subset.otf"
)
set_property(TARGET attnviz APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/assets/fonts/DejaVuSans.ttf
                                                         ${PROJECT_SOURCE_DIR}/assets/fonts/NotoSansCJKsc-Subset.otf)

# The page and what it links to, beside the program.
foreach(f tools/web/index.html assets/icons/attnviz.svg assets/fonts/LICENSE-DejaVu.txt
          assets/fonts/LICENSE-NotoSansCJK.txt)
  get_filename_component(_name ${f} NAME)
  configure_file(${PROJECT_SOURCE_DIR}/${f} ${PROJECT_BINARY_DIR}/${_name} COPYONLY)
endforeach()
