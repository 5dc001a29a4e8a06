# Robustness tests: numerics that stay defined, the fuzz corpus
# replayed with any compiler, and the window under abuse.

attnviz_add_test(test_numerics
  SOURCES ${ATTNVIZ_TESTS_DIR}/test_numerics.c
  LIBS attnviz_lesson attnviz_engine)

# Every input of the committed fuzz corpus and every regression input, once,
# through the fuzz harness's checks (no libFuzzer needed).
add_executable(fuzz_lesson_replay ${ATTNVIZ_TESTS_DIR}/fuzz/fuzz_lesson.c ${ATTNVIZ_TESTS_DIR}/fuzz/replay_main.c)
target_compile_options(fuzz_lesson_replay PRIVATE -UNDEBUG)
target_link_libraries(fuzz_lesson_replay PRIVATE attnviz_view attnviz_lesson attnviz_engine m)
add_test(NAME fuzz_lesson_replay
         COMMAND fuzz_lesson_replay ${ATTNVIZ_TESTS_DIR}/fuzz/corpus ${ATTNVIZ_TESTS_DIR}/fuzz/regressions)

# The window under abuse: resizing to 1×1, minimising, key storms during an
# animation, reloading a corrupted lesson, no fonts from fontconfig, the
# software renderer. Needs an X server: xvfb-run gives it one. Skips (77)
# while `attnviz show` does not exist.
find_program(ATTNVIZ_XVFB_RUN xvfb-run)
if(ATTNVIZ_XVFB_RUN)
  add_test(NAME robust_window
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1920x1080x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/robust_window.sh $<TARGET_FILE:attnviz> ${PROJECT_SOURCE_DIR})
  # In a sanitizer build, ASan and UBSan watch the window, LSan does not: the
  # GL driver SDL loads (Mesa's swrast_dri) leaks and is unloaded at exit, so
  # its leaks cannot be told apart or suppressed by module, and slow
  # unwinding to find them deadlocks inside LLVM's JIT. Leaks of attnviz's
  # own rendering are checked by the export tests and under valgrind.
  set_tests_properties(robust_window PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 400 RUN_SERIAL TRUE
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
  # Random keys, mouse events and resizes (seeded) in edit mode, compare
  # mode, column notation and the log scale, in bursts that reach the window
  # at once; a sanitizer report, a crash, a hang or a saved lesson that
  # check refuses fails it. Thousands where the
  # sanitizers watch (tools/ci-robustness.sh), a quarter of them elsewhere.
  if(ATTNVIZ_SANITIZE)
    set(_events 3200)
  else()
    set(_events 800)
  endif()
  add_test(NAME robust_window_events
           COMMAND ${ATTNVIZ_XVFB_RUN} -a -s "-screen 0 1920x1080x24"
                   ${ATTNVIZ_TESTS_DIR}/e2e/window_events.sh $<TARGET_FILE:attnviz> 27 ${_events})
  set_tests_properties(robust_window_events PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endif()

# A lesson whose numbers overflow float32 is bad input for every command:
# exit status 2 and one line naming the step that overflowed, no output.
foreach(_cmd check trace)
  add_test(NAME robust_overflow_${_cmd}
           COMMAND sh -c "\"$0\" ${_cmd} \"$1\" >overflow-${_cmd}.out 2>overflow-${_cmd}.err; st=$?; cat overflow-${_cmd}.err; [ $st -eq 2 ] && [ ! -s overflow-${_cmd}.out ] && [ $(wc -l <overflow-${_cmd}.err) -eq 1 ] && grep -q 'scores_1.*float32' overflow-${_cmd}.err"
                   $<TARGET_FILE:attnviz> ${ATTNVIZ_TESTS_DIR}/e2e/overflow-lesson.json
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endforeach()

# A lesson whose single-head trace overflows while each head's does not:
# check passes and notes it, the multi-head view exports, and the views
# that need the single-head trace are refused with exit status 2.
add_test(NAME robust_single_overflow
         COMMAND sh -c "\"$0\" check \"$1\" 2>so.err && grep -q 'note: single-head and compare view disabled' so.err && \"$0\" export \"$1\" -o so-multi --size 320x200 --steps 1-3 && ! \"$0\" export \"$1\" -o so-single --size 320x200 --view single 2>so.err; st=$?; cat so.err; [ $st -eq 0 ] && grep -q 'single-head view' so.err && [ ! -e so-single/index.json ]"
                 $<TARGET_FILE:attnviz> ${ATTNVIZ_TESTS_DIR}/e2e/single-overflow-lesson.json
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(robust_single_overflow PROPERTIES ENVIRONMENT "SDL_VIDEODRIVER=dummy")

# FIFOs, devices, links and foreign files where attnviz reads and writes,
# folders used before, temporaries of a killed export, signals during one.
add_test(NAME robust_hostile_fs COMMAND ${ATTNVIZ_TESTS_DIR}/e2e/hostile_fs.sh $<TARGET_FILE:attnviz>)
set_tests_properties(robust_hostile_fs PROPERTIES TIMEOUT 600)
