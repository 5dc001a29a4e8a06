# The curriculum (issue 3): every lesson in lessons/ loads, is narrated in both
# languages, fills its placeholders, and makes a claim its own trace bears out
# (test_lessons); the placeholder filler itself (test_narrate).
attnviz_add_test(test_lessons SOURCES ${ATTNVIZ_TESTS_DIR}/test_lessons.c
                 LIBS attnviz_view attnviz_lesson attnviz_engine)
attnviz_add_test(test_narrate SOURCES ${ATTNVIZ_TESTS_DIR}/test_narrate.c
                 LIBS attnviz_view attnviz_lesson attnviz_engine)
