# Robustness tests (issue 6): numerics that stay defined, the fuzz corpus
# replayed with any compiler, and the window under abuse.

attnviz_add_test(test_numerics
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_numerics.c
  LIBS attnviz_lesson attnviz_engine)

# Every input of the committed fuzz corpus and every regression input, once,
# through the fuzz harness's checks (no libFuzzer needed).
add_executable(fuzz_lesson_replay ${ATTNVIZ_TESTS_DIR}/fuzz/fuzz_lesson.c ${ATTNVIZ_TESTS_DIR}/fuzz/replay_main.c)
target_link_libraries(fuzz_lesson_replay PRIVATE attnviz_lesson attnviz_engine m)
add_test(NAME fuzz_lesson_replay
         COMMAND fuzz_lesson_replay ${ATTNVIZ_TESTS_DIR}/fuzz/corpus ${ATTNVIZ_TESTS_DIR}/fuzz/regressions)
