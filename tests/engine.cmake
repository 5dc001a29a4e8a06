# Engine tests: against PyTorch fixtures (tests/fixtures, written by
# tests/make_fixtures.py), the seeds' worked examples, invariants, and the
# fast kernels against their naive references. They link the engine only:
# no SDL, no Python.
attnviz_add_test(test_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_engine.c LIBS attnviz_engine)
attnviz_add_test(test_kernels SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kernels.c LIBS attnviz_engine)
