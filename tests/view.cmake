# view: the state of the classroom view (steps, clock, heads, modes), no display.
attnviz_add_test(test_view SOURCES ${ATTNVIZ_TESTS_DIR}/test_view.c LIBS attnviz_view)
# every lesson through the View in every mode: the compare view's panes agree,
# the single-head and compare views narrate what is drawn, formula labels
attnviz_add_test(test_view_lessons SOURCES ${ATTNVIZ_TESTS_DIR}/test_view_lessons.c LIBS attnviz_view)
# The edit model: changes, their recompute against the engine, undo, refusals.
attnviz_add_test(test_edit SOURCES ${ATTNVIZ_TESTS_DIR}/test_edit.c LIBS attnviz_view)
