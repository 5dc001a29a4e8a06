# render: frames on a software renderer over a surface (no display): exact
# cell colours, legends, labels, real Chinese glyphs, determinism; and the
# font chain's coverage of every UI string and every lesson.
attnviz_add_test(test_render SOURCES ${ATTNVIZ_TESTS_DIR}/test_render.c
                 LIBS attnviz_render attnviz_view PkgConfig::SDL2 PkgConfig::SDL2_TTF)
attnviz_add_test(test_render_fonts SOURCES ${ATTNVIZ_TESTS_DIR}/test_render_fonts.c
                 LIBS attnviz_render attnviz_view PkgConfig::SDL2 PkgConfig::SDL2_TTF)

# The real program in a real X window (Xvfb), driven by xdotool: keys change
# the window, S saves a PNG, Q quits with 0. Skipped, saying why, without
# xvfb-run; the script itself skips without xdotool or ImageMagick.
find_program(ATTNVIZ_XVFB_RUN xvfb-run)
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME show_e2e
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1280x800x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/show_e2e.sh $<TARGET_FILE:attnviz>)
else()
  add_test(NAME show_e2e COMMAND sh -c "echo 'SKIP: xvfb-run is not installed (apt-get install xvfb)'; exit 77")
endif()
# detect_leaks=0 (sanitizer builds only): at exit the X11 window leaks inside
# libX11, libdbus and Mesa's GL driver, which is unloaded so its leaks cannot
# be suppressed by module (see tests/robust.cmake); ASan and UBSan still run.
set_tests_properties(show_e2e PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK xvfb
                     ENVIRONMENT "SDL_VIDEODRIVER=x11;ASAN_OPTIONS=detect_leaks=0")

# --autoplay --quit-at-end --frame-stats: plays the lesson, quits with 0 and
# prints the two lines the benchmark reads.
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME show_frame_stats
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1280x800x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/show_stats.sh $<TARGET_FILE:attnviz>)
else()
  add_test(NAME show_frame_stats COMMAND sh -c "echo 'SKIP: xvfb-run is not installed (apt-get install xvfb)'; exit 77")
endif()
set_tests_properties(show_frame_stats PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK xvfb ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")

# The layout of every step of every lesson at three sizes, two languages and
# three themes, from the boxes the renderer records: text sizes, overlaps,
# boxes, square matrices, the share of the panel the matrices fill.
attnviz_add_test(test_layout SOURCES ${ATTNVIZ_TESTS_DIR}/test_layout.c
                 LIBS attnviz_render attnviz_view PkgConfig::SDL2 PkgConfig::SDL2_TTF)
set_tests_properties(test_layout PROPERTIES TIMEOUT 900)

# The heatmap rules (src/render/heatmap.c, no SDL): the cells each pixel
# shows, the max-pool of blocks, the pixels an animation frame changes.
attnviz_add_test(test_heatmap SOURCES ${ATTNVIZ_TESTS_DIR}/test_heatmap.c ${PROJECT_SOURCE_DIR}/src/render/heatmap.c)
target_include_directories(test_heatmap PRIVATE ${PROJECT_SOURCE_DIR}/src/render)
