# export tests: the PNG writer, headless export, golden images.
attnviz_add_test(test_export_png
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_export_png.c ${ATTNVIZ_TESTS_DIR}/test_export_read.c
  LIBS attnviz_export PkgConfig::PNG)
attnviz_add_test(test_export_pool
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_export_pool.c ${ATTNVIZ_TESTS_DIR}/test_export_read.c
  LIBS attnviz_export PkgConfig::PNG PkgConfig::SDL2)
attnviz_add_test(test_export
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_export.c ${ATTNVIZ_TESTS_DIR}/test_export_read.c
  LIBS attnviz_export PkgConfig::PNG PkgConfig::CJSON PkgConfig::SDL2 PkgConfig::SDL2_TTF)
# test_export also runs the real program, for exit statuses and messages.
target_compile_definitions(test_export PRIVATE ATTNVIZ_BIN="$<TARGET_FILE:attnviz>")
add_dependencies(test_export attnviz)
# Golden images (tests/golden/): see the top of test_export_golden.c for the
# tolerance and how to regenerate them.
attnviz_add_test(test_export_golden
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_export_golden.c ${ATTNVIZ_TESTS_DIR}/test_export_read.c
  LIBS attnviz_export PkgConfig::PNG PkgConfig::SDL2 PkgConfig::SDL2_TTF)
# Export pixels == the real window's pixels, under Xvfb (skipped, exit 77,
# without xvfb-run, xdotool or ImageMagick).
add_test(NAME test_export_window COMMAND sh ${ATTNVIZ_TESTS_DIR}/test_export_window.sh $<TARGET_FILE:attnviz>)
# detect_leaks=0 (sanitizer builds only): the window leaks inside libX11,
# libdbus and Mesa at exit, as for show_e2e (tests/render.cmake); ASan and
# UBSan still check every access.
set_tests_properties(test_export_window PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 RESOURCE_LOCK xvfb
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
