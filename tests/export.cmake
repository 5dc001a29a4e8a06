# export tests: the PNG writer, headless export, golden images.
attnviz_add_test(test_export_png
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_export_png.c ${ATTNVIZ_TESTS_DIR}/test_export_read.c
  LIBS attnviz_export PkgConfig::PNG)
attnviz_add_test(test_export_pool
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_export_pool.c ${ATTNVIZ_TESTS_DIR}/test_export_read.c
  LIBS attnviz_export PkgConfig::PNG PkgConfig::SDL2)
