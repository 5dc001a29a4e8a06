# render: frames on a software renderer over a surface (no display): exact
# cell colours, legends, labels, real Chinese glyphs, determinism; and the
# font chain's coverage of every UI string and every lesson.
attnviz_add_test(test_render SOURCES ${ATTNVIZ_TESTS_DIR}/test_render.c
                 LIBS attnviz_render attnviz_view PkgConfig::SDL2 PkgConfig::SDL2_TTF)
attnviz_add_test(test_render_fonts SOURCES ${ATTNVIZ_TESTS_DIR}/test_render_fonts.c
                 LIBS attnviz_render attnviz_view PkgConfig::SDL2 PkgConfig::SDL2_TTF)
