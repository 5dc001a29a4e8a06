/* cmd_show.c: placeholder until its module lands. */
#include "app.h"

int cmd_show(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return app_fail(APP_RUNTIME, "'show' is not built yet");
}
