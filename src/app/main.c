/* main.c: the attnviz command line. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "attn.h"

typedef struct Command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
    const char *summary;
} Command;

static const Command commands[] = {
    {"show", cmd_show, "show [LESSON] [options]", "open the classroom window (the default command)"},
    {"trace", cmd_trace, "trace LESSON", "print every intermediate of LESSON as JSON (attnviz-trace/1)"},
    {"check", cmd_check, "check LESSON...", "validate lesson files; one line per problem"},
    {"list", cmd_list, "list [DIR]", "list the lessons in teaching order with their titles"},
    {"export", cmd_export, "export LESSON -o DIR [options]", "render the lesson to PNG files, headless"},
    {"bench", cmd_bench, "bench [--n N] [--d-model D] [--heads H] [--reps R] [--threads T]",
     "time the traced multi-head forward pass"},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *out)
{
    fprintf(out,
            "attnviz %s: attention, step by step, for the classroom\n"
            "\n"
            "usage: attnviz [COMMAND] [ARGS]\n"
            "\n",
            ATTNVIZ_VERSION);
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  attnviz %s\n      %s\n", commands[i].usage, commands[i].summary);
    fprintf(out,
            "\n"
            "  attnviz --help       this text      attnviz COMMAND --help   that command's options\n"
            "  attnviz --version    the version\n"
            "\n"
            "LESSON is a lesson file, or the id or file name of a lesson in the lessons folder\n"
            "(%s). With no command, attnviz opens the default lesson.\n"
            "Every command takes --opt VALUE or --opt=VALUE, options and operands in any order.\n"
            "Exit status: 0 success, 1 a runtime failure, 2 bad input or usage.\n",
            app_lessons_dir());
}

static int run(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return APP_OK;
    }
    if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
        printf("attnviz %s\n", ATTNVIZ_VERSION);
        return APP_OK;
    }
    if (argc < 2 || argv[1][0] == '-') { /* no command, or options only: show */
        app_set_command("show");
        return cmd_show(argc, argv);
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            app_set_command(commands[i].name);
            return commands[i].run(argc - 1, argv + 1);
        }
    /* a lesson file or id as the first word means show it */
    if (strchr(argv[1], '.') || strchr(argv[1], '/')) {
        app_set_command("show");
        return cmd_show(argc, argv);
    }
    return app_fail(APP_USAGE, "unknown command '%s' (try 'attnviz --help')", argv[1]);
}

int main(int argc, char **argv)
{
    app_data_init(argc > 0 ? argv[0] : NULL);
    int status = app_finish(run(argc, argv));
    app_data_free();
    attn_shutdown(); /* the engine's threads and spare blocks: leak checkers see nothing left */
    return status;
}
