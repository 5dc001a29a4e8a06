/* args.c: the one command-line parser every subcommand uses (app.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "lesson.h"
#include "export.h"

/* getopt_long's `val` for the long option opts[i]: above every character. */
#define LONG_ID(i) (0x1000 + (i))

void app_args_init(AppArgs *a, const char *cmd, int argc, char **argv, const AppOption *opts)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
    a->opts = opts;
    while (opts && opts[a->n_opts].name && a->n_opts < APP_ARGS_MAX_OPTIONS) a->n_opts++;
    optind = 0; /* glibc: start again from argv[1] with a fresh state */
    opterr = 0; /* the messages are ours */
}

/* The option whose getopt_long result (a letter or LONG_ID) is c, or NULL. */
static const AppOption *option_of(const AppArgs *a, int c)
{
    for (int i = 0; i < a->n_opts; i++)
        if (c == LONG_ID(i) || (a->opts[i].letter && c == a->opts[i].letter)) return &a->opts[i];
    return NULL;
}

static int unknown(AppArgs *a, const char *arg)
{
    a->done = 1;
    app_cmd_fail(a->cmd, APP_USAGE, "unknown option '%s' (try 'attnviz %s --help')", arg, a->cmd);
    return APP_ARGS_ERROR;
}

int app_args_next(AppArgs *a, const char **val)
{
    *val = NULL;
    if (a->done) {
        /* after `--` every word is an operand */
        if (optind < a->argc) {
            *val = a->argv[optind++];
            return APP_ARGS_OPERAND;
        }
        return APP_ARGS_END;
    }
    struct option longs[APP_ARGS_MAX_OPTIONS + 2];
    char shorts[2 * APP_ARGS_MAX_OPTIONS + 8] = "-:h"; /* '-': operands in order; ':': a missing value is ':' */
    size_t ns = strlen(shorts);
    for (int i = 0; i < a->n_opts; i++) {
        longs[i] =
            (struct option){a->opts[i].name, a->opts[i].has_value ? required_argument : no_argument, NULL, LONG_ID(i)};
        if (a->opts[i].letter) {
            shorts[ns++] = a->opts[i].letter;
            if (a->opts[i].has_value) shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longs[a->n_opts] = (struct option){"help", no_argument, NULL, 'h'};
    longs[a->n_opts + 1] = (struct option){NULL, 0, NULL, 0};

    int c = getopt_long(a->argc, a->argv, shorts, longs, NULL);
    const char *arg = optind > 0 && optind <= a->argc ? a->argv[optind - 1] : "";
    switch (c) {
    case -1:
        a->done = 1;
        return app_args_next(a, val);
    case 1:
        *val = optarg;
        return APP_ARGS_OPERAND;
    case 'h':
        return APP_ARGS_HELP;
    case ':': {
        const AppOption *o = option_of(a, optopt);
        snprintf(a->option, sizeof a->option, "--%s", o ? o->name : "?");
        a->done = 1;
        app_cmd_fail(a->cmd, APP_USAGE, "%s: expected a value, found the end of the command line", a->option);
        return APP_ARGS_ERROR;
    }
    case '?': {
        const AppOption *o = option_of(a, optopt);
        if (o && !o->has_value && strchr(arg, '=')) { /* --quiet=1 */
            a->done = 1;
            app_cmd_fail(a->cmd, APP_USAGE, "--%s: expected no value, found '%s'", o->name, strchr(arg, '=') + 1);
            return APP_ARGS_ERROR;
        }
        if (optopt && !o) { /* an unknown letter inside "-xq" */
            char letter[3] = {'-', (char)optopt, '\0'};
            return unknown(a, letter);
        }
        return unknown(a, arg); /* an unknown or ambiguous long option */
    }
    default: {
        const AppOption *o = option_of(a, c);
        if (!o) return unknown(a, arg);
        snprintf(a->option, sizeof a->option, "--%s", o->name);
        *val = o->has_value ? optarg : NULL;
        return o->id;
    }
    }
}

int app_arg_bad(const AppArgs *a, const char *expected, const char *found)
{
    return app_cmd_fail(a->cmd, APP_USAGE, "%s: expected %s, found '%s'", a->option[0] ? a->option : "?", expected,
                        found ? found : "");
}

int app_arg_number(const AppArgs *a, const char *val, double lo, double hi, double *out)
{
    double d = 0;
    errno = 0;
    size_t n = lesson_read_decimal(val, &d);
    if (!n || val[n] || errno || !isfinite(d) || d < lo || d > hi) {
        char expected[96];
        snprintf(expected, sizeof expected, "a number from %g to %g", lo, hi);
        app_arg_bad(a, expected, val);
        return -1;
    }
    *out = d;
    return 0;
}

int app_arg_int(const AppArgs *a, const char *val, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long l = strtol(val, &end, 10);
    if (!*val || *end || errno || l < lo || l > hi) {
        char expected[96];
        if (hi == INT_MAX)
            snprintf(expected, sizeof expected, "a whole number from %d", lo);
        else
            snprintf(expected, sizeof expected, "a whole number from %d to %d", lo, hi);
        app_arg_bad(a, expected, val);
        return -1;
    }
    *out = (int)l;
    return 0;
}

int app_arg_choice(const AppArgs *a, const char *val, const char *const *names, int count, int *out)
{
    for (int i = 0; i < count; i++)
        if (strcmp(val, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char expected[256] = "";
    size_t at = 0;
    for (int i = 0; i < count && at < sizeof expected; i++) {
        const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        int n = snprintf(expected + at, sizeof expected - at, "%s%s", sep, names[i]);
        if (n < 0) break;
        at += (size_t)n;
    }
    app_arg_bad(a, expected, val);
    return -1;
}

int app_arg_size(const AppArgs *a, const char *val, int *width, int *height)
{
    char err[256];
    if (export_parse_size(val, width, height, err, sizeof err) == 0) return 0;
    app_cmd_fail(a->cmd, APP_USAGE, "%s", err);
    return -1;
}

int app_refuse_range(const char *cmd, const char *opt, const char *what, int lo, int hi, int value)
{
    return app_cmd_fail(cmd, APP_USAGE, "%s: expected %s from %d to %d, found '%d'", opt, what, lo, hi, value);
}

int app_arg_extra(const AppArgs *a, const char *what, const char *first, const char *extra)
{
    return app_cmd_fail(a->cmd, APP_USAGE, "expected %s, found '%s' and '%s'", what, first, extra);
}
