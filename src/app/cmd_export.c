/* cmd_export.c: placeholder until its module lands. */
#include "app.h"

int cmd_export(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return app_fail(APP_RUNTIME, "'export' is not built yet");
}
