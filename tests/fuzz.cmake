# Fuzzing the lesson loader: libFuzzer, so clang only.
#
#   CC=clang cmake -S . -B build-fuzz -DATTNVIZ_FUZZ=ON -DATTNVIZ_SANITIZE=address,undefined
#   cmake --build build-fuzz --target fuzz_lesson
#   build-fuzz/fuzz_lesson -dict=tests/fuzz/lesson.dict NEW_DIR tests/fuzz/corpus tests/fuzz/regressions
#
# The harness is compiled together with the view, lesson and engine sources (read
# from their targets), so that libFuzzer's coverage instrumentation sees the
# code it fuzzes while the libraries themselves stay uninstrumented for the
# rest of the build. tools/ci-robustness.sh runs it for a bounded time.
if(ATTNVIZ_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ATTNVIZ_FUZZ needs clang (libFuzzer): configure with CC=clang")
  endif()
  set(_fuzz_sources ${ATTNVIZ_TESTS_DIR}/fuzz/fuzz_lesson.c)
  foreach(_lib attnviz_view attnviz_lesson attnviz_engine)
    get_target_property(_srcs ${_lib} SOURCES)
    get_target_property(_dir ${_lib} SOURCE_DIR)
    foreach(_s ${_srcs})
      if(IS_ABSOLUTE "${_s}")
        list(APPEND _fuzz_sources "${_s}")
      else()
        list(APPEND _fuzz_sources "${_dir}/${_s}")
      endif()
    endforeach()
  endforeach()
  set(_fuzz_san fuzzer)
  if(NOT ATTNVIZ_SANITIZE)
    set(_fuzz_san fuzzer,address,undefined)
  endif()
  add_executable(fuzz_lesson ${_fuzz_sources})
  target_include_directories(fuzz_lesson PRIVATE ${PROJECT_SOURCE_DIR}/src/engine ${PROJECT_SOURCE_DIR}/src/lesson
                           ${PROJECT_SOURCE_DIR}/src/view)
  target_compile_options(fuzz_lesson PRIVATE -fsanitize=${_fuzz_san} -fno-omit-frame-pointer -UNDEBUG)
  target_link_options(fuzz_lesson PRIVATE -fsanitize=${_fuzz_san})
  target_link_libraries(fuzz_lesson PRIVATE PkgConfig::CJSON m Threads::Threads)
  set_target_properties(fuzz_lesson PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  # Every committed input once, through libFuzzer itself (-runs=0 only loads
  # and runs the corpus): a quick regression test under CTest.
  add_test(NAME fuzz_lesson_corpus
           COMMAND fuzz_lesson -runs=0 -timeout=10 ${ATTNVIZ_TESTS_DIR}/fuzz/corpus ${ATTNVIZ_TESTS_DIR}/fuzz/regressions)
endif()
