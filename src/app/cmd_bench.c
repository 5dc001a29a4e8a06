/* cmd_bench.c: placeholder until its module lands. */
#include "app.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return app_fail(APP_RUNTIME, "'bench' is not built yet");
}
