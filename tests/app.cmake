# The program's command line (src/app): one option syntax and one message
# shape in every subcommand, refusals, exit statuses into /dev/full, escaped
# control characters, dangling links as outputs. No display needed.
add_test(NAME app_cli
         COMMAND bash ${ATTNVIZ_TESTS_DIR}/e2e/cli.sh $<TARGET_FILE:attnviz> ${ATTNVIZ_TESTS_DIR}/lessons/mhsa-tiny.json)
# `cmake --install` into a temporary prefix, then list, check, trace and
# export from the installed program with the source tree hidden.
add_test(NAME install_prefix COMMAND bash ${ATTNVIZ_TESTS_DIR}/e2e/install.sh ${PROJECT_BINARY_DIR})
set_tests_properties(install_prefix PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
