# The program's command line (src/app): one option syntax and one message
# shape in every subcommand, refusals, exit statuses into /dev/full, escaped
# control characters, dangling links as outputs. No display needed.
add_test(NAME app_cli
         COMMAND bash ${ATTNVIZ_TESTS_DIR}/e2e/cli.sh $<TARGET_FILE:attnviz> ${ATTNVIZ_TESTS_DIR}/lessons/mhsa-tiny.json)
