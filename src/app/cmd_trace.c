/* cmd_trace.c: `attnviz trace LESSON`, every intermediate as JSON on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "attn.h"
#include "lesson.h"

int cmd_trace(int argc, char **argv)
{
    static const AppOption opts[] = {APP_EDIT_OPTIONS, APP_EDIT_SCALE_OPTION, {0}};
    AppArgs args;
    app_args_init(&args, "trace", argc, argv, opts);
    const char *lesson_arg = NULL, *val;
    AppEdits edits = {.n_sets = 0};
    for (int id; (id = app_args_next(&args, &val)) != APP_ARGS_END;) {
        if (id == APP_ARGS_HELP) {
            printf("usage: attnviz trace LESSON [--set 'NAME[i][j]=VALUE']... [--scale X] [--tokens 'a b c']\n\n"
                   "Prints every intermediate of the lesson's forward pass as JSON (format attnviz-trace/1):\n"
                   "the config, then each step with its kind, name, head, shape, data and the steps it came "
                   "from.\n"
                   "\n"
                   "  --set 'NAME[i][j]=VALUE'  change one number before the forward pass (repeatable);\n"
                   "                            NAME is X, Y, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, W_a,\n"
                   "                            b_a, v_a or mask; NAME[i] for a vector; indices from 0\n"
                   "  --scale X                 divide the scores by X (0.1·√d_k .. 10·√d_k); also --score-scale\n"
                   "  --tokens 'a b c'          replace the tokens; new rows of X come from the lesson's seed\n");
            return APP_OK;
        }
        int took = app_edit_arg(&edits, &args, id, val);
        if (took < 0) return APP_USAGE;
        if (took) continue;
        if (id != APP_ARGS_OPERAND) return APP_USAGE;
        if (lesson_arg) return app_arg_extra(&args, "one lesson", lesson_arg, val);
        lesson_arg = val;
    }
    if (!lesson_arg)
        return app_cmd_fail("trace", APP_USAGE, "expected a lesson, found none (usage: attnviz trace LESSON)");
    Lesson lesson;
    if (app_load_lesson(lesson_arg, &lesson) != 0) return APP_USAGE;
    if (app_apply_edits(&edits, &lesson) != 0) {
        lesson_free(&lesson);
        return APP_USAGE;
    }
    char err[512];
    AttnTrace *t = attn_trace_create(&lesson.cfg, err, sizeof err);
    if (!t) {
        /* numbers too large for float32 are bad input; only memory is a runtime failure */
        int bad_input = errno != ENOMEM;
        int st = app_fail(bad_input ? APP_USAGE : APP_RUNTIME, "%s: %s", lesson.path, err);
        lesson_free(&lesson);
        return st;
    }
    /* Streamed: the trace is computed whole before the first byte is
     * written, so only an I/O error (a full disk, a closed pipe) can stop
     * the document half-way, and then the exit status says so. Memory: the
     * trace and a 64 KiB buffer, not a copy of the document. */
    static char buf[1 << 16];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    int st = APP_OK;
    if (trace_write_json(stdout, &lesson, t) != 0 || fflush(stdout) != 0)
        st = app_fail(APP_RUNTIME, "writing the trace: %s", strerror(errno ? errno : EIO));
    attn_trace_destroy(t);
    lesson_free(&lesson);
    return st;
}
