# Performance paths: the fast kernels and the threaded forward that
# `attnviz bench` times, against the naive references on the benchmark's
# shapes, and 1 thread against 2 and 3 bit for bit. No timing assertions:
# tools/bench.sh measures.
attnviz_add_test(test_perf_paths SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_perf_paths.c LIBS attnviz_engine)
