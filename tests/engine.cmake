# Engine tests: against PyTorch fixtures (tests/fixtures, written by
# tests/make_fixtures.py), the seeds' worked examples, invariants, and the
# fast kernels against their naive references. They link the engine only:
# no SDL, no Python.
attnviz_add_test(test_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_engine.c LIBS attnviz_engine)
attnviz_add_test(test_kernels SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kernels.c LIBS attnviz_engine)
# Every build computes the same bits: the engine as shipped (its kernels
# chosen by the CPU when the program loads: AVX-512 or AVX2 with FMA
# instructions, or baseline x86-64) against the engine built again without
# runtime dispatch (-DATTN_NO_TARGET_CLONES) for baseline x86-64 (its fused
# multiply-adds by libm's fmaf) and for x86-64-v3 (AVX2 and FMA: the clone
# an AVX2 CPU would run, which this one may not). digest/trace_digest.c
# prints a digest of every step of traces over a set of configurations on 1
# and 2 threads; digest/compare.cmake runs the programs and requires the
# same digests.
set(_engine_sources)
get_target_property(_srcs attnviz_engine SOURCES)
get_target_property(_dir attnviz_engine SOURCE_DIR)
foreach(_s ${_srcs})
  list(APPEND _engine_sources "${_dir}/${_s}")
endforeach()
set(_digest_programs trace_digest)
foreach(_arch baseline v3)
  add_library(attnviz_engine_${_arch} STATIC ${_engine_sources})
  target_include_directories(attnviz_engine_${_arch} PUBLIC ${_dir})
  target_link_libraries(attnviz_engine_${_arch} PUBLIC m Threads::Threads)
  target_compile_definitions(attnviz_engine_${_arch} PRIVATE ATTN_NO_TARGET_CLONES)
  # as src/engine/CMakeLists.txt builds it; -Wno-psabi for kernels.c's
  # 16-float vectors in a build without AVX-512
  target_compile_options(attnviz_engine_${_arch} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O3> -Wno-psabi)
  add_executable(trace_digest_${_arch} ${CMAKE_CURRENT_LIST_DIR}/digest/trace_digest.c)
  target_include_directories(trace_digest_${_arch} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(trace_digest_${_arch} PRIVATE attnviz_engine_${_arch})
endforeach()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
  target_compile_options(attnviz_engine_baseline PRIVATE -march=x86-64 -mtune=generic)
  target_compile_options(attnviz_engine_v3 PRIVATE -march=x86-64-v3 -mtune=generic)
  # the program itself stays baseline, and checks the CPU before the engine runs
  target_compile_definitions(trace_digest_v3 PRIVATE DIGEST_NEEDS_CPU="x86-64-v3")
  list(APPEND _digest_programs trace_digest_baseline trace_digest_v3)
else()
  list(APPEND _digest_programs trace_digest_baseline)
endif()
add_executable(trace_digest ${CMAKE_CURRENT_LIST_DIR}/digest/trace_digest.c)
target_include_directories(trace_digest PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(trace_digest PRIVATE attnviz_engine)
set(_digest_files)
foreach(_p ${_digest_programs})
  list(APPEND _digest_files $<TARGET_FILE:${_p}>)
endforeach()
string(REPLACE ";" "|" _digest_files "${_digest_files}")
add_test(NAME trace_digest_builds COMMAND ${CMAKE_COMMAND} "-DPROGRAMS=${_digest_files}" -P
                                          ${CMAKE_CURRENT_LIST_DIR}/digest/compare.cmake)
