# The lesson format: loader, generated matrices, lookups, trace JSON (test_lesson),
# and the catalogue of bad lessons (test_lesson_errors, tests/bad_lessons/).
attnviz_add_test(test_lesson SOURCES ${ATTNVIZ_TESTS_DIR}/test_lesson.c LIBS attnviz_lesson PkgConfig::CJSON)
attnviz_add_test(test_lesson_errors SOURCES ${ATTNVIZ_TESTS_DIR}/test_lesson_errors.c LIBS attnviz_lesson)

# The program end to end: `attnviz check` on every bad lesson exits 2 with
# exactly the catalogued line; `check` and `trace` on the good ones exit 0.
add_test(NAME lesson_cli
         COMMAND ${CMAKE_COMMAND} -DATTNVIZ=$<TARGET_FILE:attnviz> -DTESTS_DIR=${ATTNVIZ_TESTS_DIR}
                 -P ${ATTNVIZ_TESTS_DIR}/bad_lessons/check_all.cmake)

# The Python generator printed in lessons/FORMAT.md gives the same numbers as
# the C one (skipped when Debian's /usr/bin/python3 is not there).
add_test(NAME lesson_format_python
         COMMAND ${CMAKE_COMMAND} -E env ATTNVIZ=$<TARGET_FILE:attnviz>
                 sh -c "if [ -x /usr/bin/python3 ]; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exit 77; fi"
                 ${ATTNVIZ_TESTS_DIR}/test_lesson_format.py ${PROJECT_SOURCE_DIR}/lessons/FORMAT.md
                 ${ATTNVIZ_TESTS_DIR}/lessons/mhsa-tiny.json)
set_tests_properties(lesson_format_python PROPERTIES SKIP_RETURN_CODE 77)
