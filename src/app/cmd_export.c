/* cmd_export.c: `attnviz export LESSON -o DIR [options]`: the lesson as PNG
 * files, headless (src/export does the work; this parses and reports). */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "app.h"
#include "export.h"
#include "lesson.h"

static void export_usage(FILE *out)
{
    fprintf(out,
            "usage: attnviz export LESSON -o DIR [options]\n"
            "       attnviz export LESSON --sheet FILE.png [options]\n"
            "\n"
            "Renders the lesson without a display and writes PNG files: by default one\n"
            "per step showing its final state, named NNN-kind[-hH].png, NNN the step's\n"
            "number from 1 (for example 008-softmax-h2.png), and DIR/index.json listing\n"
            "each file with its step number,\n"
            "kind, head, formula and narration. DIR is created when its parent exists.\n"
            "Each PNG carries the lesson title, the software and the step's kind, head\n"
            "and formula as text chunks.\n"
            "\n"
            "  -o, --output DIR   the folder to write into\n"
            "  --size WxH         layout size in pixels (default %dx%d)\n"
            "  --scale S          pixels per layout pixel, for high-DPI: --size 1280x720\n"
            "                     --scale 2 writes 2560x1440 of the same layout (default 1)\n"
            "  --lang en|zh       language of narration and labels (default en)\n"
            "  --theme light|dark|projector\n"
            "  --view multi|single|compare\n"
            "                     multi-head (default), single-head, or side by side\n"
            "  --head H           select head H; export only its per-head steps\n"
            "  --steps SPEC       ITEM or FROM-TO (also FROM- and -TO); each a step number\n"
            "                     from 1 as in the window and the file names, a step name\n"
            "                     (weights_2) or a kind (softmax); a lone kind selects all\n"
            "                     its steps\n"
            "  --weight-scale unit|row|log\n"
            "                     colours of attention weights: [0, 1] (default), each row\n"
            "                     divided by its largest weight, or log10 from 1e-4 to 1\n"
            "  --notation row|column  one token per row (Q = X·W_Q, default) or per column\n"
            "                     (Q = W_Q·X): every matrix and formula transposed\n"
            "  --text-scale X     text size factor (default 1)\n"
            "%s"
            "  --slides           slides: the step, its formula and its narration on the\n"
            "                     whole frame, without the status line and the timeline\n"
            "  --set 'NAME[i][j]=VALUE'\n"
            "                     change one number first (repeatable): NAME is X, Y,\n"
            "                     W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, W_a, b_a, v_a\n"
            "                     or mask; NAME[i] for a vector; indices from 0\n"
            "  --score-scale X    divide the scores by X (0.1·√d_k .. 10·√d_k); --scale\n"
            "                     is the pixel scale here\n"
            "  --tokens 'a b c'   replace the tokens; new rows of X come from the seed\n"
            "  --frames           every animation frame instead: 000000.png, 000001.png\n"
            "                     ... (ffmpeg -framerate 30 -i DIR/%%06d.png out.mp4); a\n"
            "                     step animating d s gets ceil((d + dwell) * fps / speed)\n"
            "                     frames, its final state held for the dwell\n"
            "  --fps N            frames per second with --frames (default %g)\n"
            "  --dwell S          seconds a finished step is held, --frames (default %g)\n"
            "  --speed X          animation speed with --frames (default 1)\n"
            "  --sheet FILE.png   also (without -o: only) a handout: A4 pages at 150 dpi,\n"
            "                     FILE.png, FILE-2.png, ..., each step's figure with its\n"
            "                     formula and narration below it; FILE.pdf: the same\n"
            "                     pages as one PDF (when built with cairo)\n"
            "  --threads N        PNG encoding threads (default: one per CPU)\n"
            "  --png-level N      zlib level 0-9 (default %d, chosen by measurement)\n"
            "  --png-filter F     none|sub|up|avg|paeth|fast|all (default %s)\n"
            "  --png-strategy S   default|filtered|rle|huffman|fixed (default %s)\n"
            "  --stats            print one line of timings to stderr at the end\n"
            "  -q, --quiet        no progress line (shown only when stderr is a terminal)\n"
            "\n"
            "Nothing is half-written: each file is written under a temporary name in\n"
            "its folder and renamed when complete; Ctrl-C stops after the files being\n"
            "written. Exporting again into DIR (or FILE.png) removes what the earlier\n"
            "export wrote there, as its index.json (or first page) recorded it, and\n"
            "only while each file is still what attnviz wrote; files attnviz did not\n"
            "write are never replaced or removed. Exit status: 0 done, 1 a runtime\n"
            "failure (a folder that cannot be created or written, a full disk), 2 bad\n"
            "input or usage.\n",
            EXPORT_DEFAULT_WIDTH, EXPORT_DEFAULT_HEIGHT,
            "  --big-text         big text for the back row: the step's caption instead of its\n"
            "                     narration, no text under 1/30 of the height\n",
            EXPORT_DEFAULT_FPS, VIEW_DWELL_SECONDS, EXPORT_PNG_DEFAULT_LEVEL, EXPORT_PNG_DEFAULT_FILTER,
            EXPORT_PNG_DEFAULT_STRATEGY);
}

static volatile sig_atomic_t interrupted;
/* For the deadline's message: "attnviz export: TARGET: interrupted", made
 * before the signals are caught, and how far the export was (show_progress). */
static char *interrupted_line;
static size_t interrupted_len;
static volatile sig_atomic_t done_count, total_count, counting_steps;

/* Writes n in decimal to stderr; async-signal-safe. */
static void write_count(long n)
{
    char digits[24];
    int at = (int)sizeof digits;
    do digits[--at] = (char)('0' + n % 10);
    while ((n /= 10) > 0 && at > 0);
    ssize_t w = write(2, digits + at, sizeof digits - (size_t)at);
    (void)w;
}

/* The deadline: whatever the export is doing (a file system that does not
 * answer, a frame that takes long to draw), the process ends now, removing
 * the temporaries being written. Its line is the one an export stopped by
 * the signal gives (export_lesson: "TARGET: interrupted after N of M
 * files"). Only async-signal-safe calls. */
static void on_deadline(int sig)
{
    (void)sig;
    export_remove_temporaries();
    static const char fallback[] = "attnviz export: interrupted";
    ssize_t w =
        interrupted_line ? write(2, interrupted_line, interrupted_len) : write(2, fallback, sizeof fallback - 1);
    if (total_count > 0) {
        w = write(2, " after ", 7);
        write_count(done_count);
        w = write(2, " of ", 4);
        write_count(total_count);
        w = counting_steps ? write(2, " steps", 6) : write(2, " files", 6);
    }
    w = write(2, "\n", 1);
    (void)w;
    _exit(APP_RUNTIME);
}

/* Installs handler for sig until it is replaced: sigaction, since signal()
 * under POSIX resets the handler at the first signal, and a second Ctrl-C
 * then ended the export silently, without its line. */
static void catch_signal(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* SIGINT, SIGTERM, SIGHUP (the terminal closed): the export stops after
 * the frame being drawn and the files being written; if it has not ended
 * within a second, or at a second signal, the deadline ends it. */
static void on_interrupt(int sig)
{
    if (interrupted) on_deadline(sig);
    interrupted = 1;
    /* 0.4 s: the process, its memory unmapped, is gone within a second */
    struct itimerval deadline = {{0, 0}, {0, 400000}};
    setitimer(ITIMER_REAL, &deadline, NULL);
}

/* One line to stderr, whole however long its paths, escaped as every line
 * from outside is. */
static void export_note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void export_note(const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *line = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (line) vsnprintf(line, (size_t)n + 1, fmt, again);
    va_end(again);
    va_end(ap);
    if (line) app_print_line(stderr, line);
    free(line);
}

typedef struct Progress {
    double last; /* when the line was last drawn */
    int shown;   /* a line is on screen */
    int tty;     /* stderr is a terminal: the line is drawn */
    const char *what;
} Progress;

/* How far the export is, for the deadline's message; and one line, redrawn
 * in place at most ten times a second, on a terminal only. */
static void show_progress(void *user, const ExportProgress *p)
{
    Progress *pr = user;
    int sheet = strcmp(p->what, "sheet") == 0;
    counting_steps = sheet;
    done_count = sheet ? p->steps_done : p->frames_done;
    total_count = sheet ? p->steps_total : p->frames_total;
    if (!pr->tty) return;
    double now = attn_clock_seconds();
    int final = p->steps_done == p->steps_total && p->frames_done == p->frames_total;
    if (!final && now - pr->last < 0.1) return;
    if (pr->shown && pr->what && strcmp(pr->what, p->what) != 0) fputc('\n', stderr); /* a new part: a new line */
    pr->what = p->what;
    pr->last = now;
    char eta[32] = "";
    if (p->eta >= 0 && !final) snprintf(eta, sizeof eta, ", %.0f s left", ceil(p->eta));
    if (sheet)
        fprintf(stderr, "\r\033[Kexport: sheet, step %d/%d, %.1f steps/s%s", p->steps_done, p->steps_total, p->fps,
                eta);
    else
        fprintf(stderr, "\r\033[Kexport: step %d/%d, %d/%d %s, %.1f files/s%s", p->steps_done, p->steps_total,
                p->frames_done, p->frames_total, p->what, p->fps, eta);
    pr->shown = 1;
}

enum {
    OPT_OUTPUT = 1,
    OPT_SIZE,
    OPT_SCALE,
    OPT_TEXT_SCALE,
    OPT_BIG_TEXT,
    OPT_LANG,
    OPT_THEME,
    OPT_VIEW,
    OPT_HEAD,
    OPT_STEPS,
    OPT_WEIGHT_SCALE,
    OPT_NOTATION,
    OPT_FRAMES,
    OPT_FPS,
    OPT_DWELL,
    OPT_SPEED,
    OPT_SHEET,
    OPT_THREADS,
    OPT_PNG_LEVEL,
    OPT_PNG_FILTER,
    OPT_PNG_STRATEGY,
    OPT_STATS,
    OPT_QUIET,
    OPT_SLIDES,
};

static const AppOption export_options[] = {
    {"output", 'o', 1, OPT_OUTPUT},
    {"size", 0, 1, OPT_SIZE},
    {"scale", 0, 1, OPT_SCALE},
    {"text-scale", 0, 1, OPT_TEXT_SCALE},
    {"big-text", 0, 0, OPT_BIG_TEXT},
    {"lang", 0, 1, OPT_LANG},
    {"theme", 0, 1, OPT_THEME},
    {"view", 0, 1, OPT_VIEW},
    {"head", 0, 1, OPT_HEAD},
    {"steps", 0, 1, OPT_STEPS},
    {"weight-scale", 0, 1, OPT_WEIGHT_SCALE},
    {"notation", 0, 1, OPT_NOTATION},
    {"frames", 0, 0, OPT_FRAMES},
    {"fps", 0, 1, OPT_FPS},
    {"dwell", 0, 1, OPT_DWELL},
    {"speed", 0, 1, OPT_SPEED},
    {"sheet", 0, 1, OPT_SHEET},
    {"threads", 0, 1, OPT_THREADS},
    {"png-level", 0, 1, OPT_PNG_LEVEL},
    {"png-filter", 0, 1, OPT_PNG_FILTER},
    {"png-strategy", 0, 1, OPT_PNG_STRATEGY},
    {"stats", 0, 0, OPT_STATS},
    {"quiet", 'q', 0, OPT_QUIET},
    {"slides", 0, 0, OPT_SLIDES},
    APP_EDIT_OPTIONS,
    {0},
};

typedef struct ExportArgs {
    ExportOptions opt;
    const char *lesson, *dir;
    int quiet, stats;
    AppEdits edits;
} ExportArgs;

/* One option's value into x; 0, or -1 after the message. */
static int export_option(const AppArgs *a, int id, const char *val, ExportArgs *x)
{
    ExportOptions *opt = &x->opt;
    double d = 0;
    int n = 0, ok = 0;
    switch (id) {
    case OPT_OUTPUT:
        x->dir = val;
        return *val ? app_check_output_path("export", "--output", "a folder", val) : app_arg_bad(a, "a folder", val);
    case OPT_SIZE:
        return app_arg_size(a, val, &opt->width, &opt->height);
    case OPT_SCALE:
        ok = app_arg_number(a, val, 0.25, 8, &d);
        opt->scale = (float)d;
        return ok;
    case OPT_TEXT_SCALE:
        ok = app_arg_number(a, val, VIEW_TEXT_SCALE_MIN, VIEW_TEXT_SCALE_MAX, &d);
        opt->text_scale = (float)d;
        return ok;
    case OPT_BIG_TEXT:
        opt->big_text = 1;
        return 0;
    case OPT_LANG:
        ok = app_arg_choice(a, val, lesson_lang_names, LESSON_LANG_COUNT, &n);
        opt->lang = (LessonLang)n;
        return ok;
    case OPT_THEME:
        ok = app_arg_choice(a, val, view_theme_names, VIEW_THEME_COUNT, &n);
        opt->theme = (ViewTheme)n;
        return ok;
    case OPT_VIEW:
        ok = app_arg_choice(a, val, view_mode_names, VIEW_MODE_COUNT, &n);
        opt->mode = (ViewMode)n;
        return ok;
    case OPT_HEAD:
        return app_arg_int(a, val, 1, INT_MAX, &opt->head); /* the lesson decides the last (cmd_export) */
    case OPT_STEPS:
        opt->steps = val;
        return 0;
    case OPT_WEIGHT_SCALE:
        ok = app_arg_choice(a, val, view_weight_scale_names, VIEW_WEIGHTS_COUNT, &n);
        opt->weight_scale = (ViewWeightScale)n;
        return ok;
    case OPT_NOTATION:
        ok = app_arg_choice(a, val, view_notation_names, VIEW_NOTATION_COUNT, &n);
        opt->notation = (ViewNotation)n;
        return ok;
    case OPT_FRAMES:
        opt->frames = 1;
        return 0;
    case OPT_FPS:
        return app_arg_number(a, val, 1, 240, &opt->fps);
    case OPT_DWELL:
        return app_arg_number(a, val, 0, 60, &opt->dwell);
    case OPT_SPEED:
        return app_arg_number(a, val, VIEW_SPEED_MIN, VIEW_SPEED_MAX, &opt->speed);
    case OPT_SHEET:
        opt->sheet = val;
        return *val ? app_check_output_path("export", "--sheet", "a file name", val)
                    : app_arg_bad(a, "a file name", val);
    case OPT_THREADS:
        return app_arg_int(a, val, 1, 16, &opt->threads);
    case OPT_PNG_LEVEL:
        return app_arg_int(a, val, 0, 9, &opt->png.level);
    case OPT_PNG_FILTER:
        opt->png.filters = export_png_filter_from_name(val);
        return opt->png.filters < 0 ? app_arg_bad(a, "none, sub, up, avg, paeth, fast or all", val) : 0;
    case OPT_PNG_STRATEGY:
        opt->png.strategy = export_png_strategy_from_name(val);
        return opt->png.strategy < 0 ? app_arg_bad(a, "default, filtered, rle, huffman or fixed", val) : 0;
    case OPT_STATS:
        x->stats = 1;
        return 0;
    case OPT_QUIET:
        x->quiet = 1;
        return 0;
    case OPT_SLIDES:
        opt->slides = 1;
        return 0;
    default:
        return app_edit_arg(&x->edits, a, id, val) == 1 ? 0 : -1;
    }
}

int cmd_export(int argc, char **argv)
{
    ExportArgs x = {0};
    export_options_init(&x.opt);
    AppArgs args;
    app_args_init(&args, "export", argc, argv, export_options);
    const char *val;
    for (int id; (id = app_args_next(&args, &val)) != APP_ARGS_END;) {
        if (id == APP_ARGS_HELP) {
            export_usage(stdout);
            return APP_OK;
        } else if (id == APP_ARGS_OPERAND) {
            if (x.lesson) return app_arg_extra(&args, "one lesson", x.lesson, val);
            x.lesson = val;
        } else if (id == APP_ARGS_ERROR || export_option(&args, id, val, &x) != 0) {
            return APP_USAGE;
        }
    }
    ExportOptions opt = x.opt;
    const char *dir = x.dir;
    if (!x.lesson)
        return app_cmd_fail("export", APP_USAGE, "expected a lesson, found none (usage: attnviz export LESSON -o DIR)");
    if (!dir && !opt.sheet)
        return app_cmd_fail("export", APP_USAGE,
                            "expected -o DIR or --sheet FILE.png, found neither (see attnviz export --help)");
    if (opt.frames && !dir)
        return app_cmd_fail("export", APP_USAGE, "--frames: expected -o DIR as well, found only --sheet");

    Lesson lesson;
    if (app_load_lesson(x.lesson, &lesson) != 0) return APP_USAGE;
    if (app_apply_edits(&x.edits, &lesson) != 0) {
        lesson_free(&lesson);
        return APP_USAGE;
    }
    int heads = view_lesson_head_count(&lesson);
    if (opt.head > heads) {
        lesson_free(&lesson);
        return app_refuse_range("export", "--head", "a head", 1, heads, opt.head);
    }

    Progress pr = {0, 0, !x.quiet && isatty(2), NULL};
    opt.progress = show_progress;
    opt.progress_user = &pr;
    /* the deadline's line, escaped as every line is */
    FILE *line = open_memstream(&interrupted_line, &interrupted_len);
    if (line) {
        fputs("attnviz export: ", line);
        app_escape(line, dir ? dir : opt.sheet);
        fputs(": interrupted", line);
        if (fclose(line) != 0) interrupted_line = NULL;
    }
    opt.write_steps = dir != NULL;
    /* A file-size limit (ulimit -f) must be an error message, not a kill:
     * write() then fails with EFBIG and the temporary file is removed. */
    catch_signal(SIGXFSZ, SIG_IGN);
    /* Ctrl-C: finish the files being written, then stop, so that no
     * temporary file is left in the folder. */
    opt.cancel = &interrupted;
    catch_signal(SIGALRM, on_deadline);
    catch_signal(SIGINT, on_interrupt);
    catch_signal(SIGTERM, on_interrupt);
    catch_signal(SIGHUP, on_interrupt);
    ExportResult res;
    char err[EXPORT_ERR_MAX];
    int rc = export_lesson(&lesson, dir, &opt, &res, err, sizeof err);
    /* Stopped by a signal, the export is ending with its line: a further
     * signal now must not end it before that line is written. */
    void (*after)(int) = interrupted ? SIG_IGN : SIG_DFL;
    catch_signal(SIGINT, after);
    catch_signal(SIGTERM, after);
    catch_signal(SIGHUP, after);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    free(interrupted_line);
    interrupted_line = NULL;
    if (pr.shown) fputc('\n', stderr);
    lesson_free(&lesson);
    if (rc != 0) return app_cmd_fail("export", res.usage_error ? APP_USAGE : APP_RUNTIME, "%s", err);
    if (res.stale_removed || res.temps_removed)
        export_note("export: removed %d file%s of an earlier export and %d stale temporar%s from %s", res.stale_removed,
                    res.stale_removed == 1 ? "" : "s", res.temps_removed, res.temps_removed == 1 ? "y" : "ies", dir);
    if (res.earlier_left)
        export_note("export: left %d file%s an earlier export listed in %s: %s no longer what attnviz wrote (changed "
                    "since, or listed without a size and hash)",
                    res.earlier_left, res.earlier_left == 1 ? "" : "s", dir,
                    res.earlier_left == 1 ? "it is" : "they are");
    if (res.pages_removed)
        export_note("export: removed %d page%s of an earlier, longer handout after %s", res.pages_removed,
                    res.pages_removed == 1 ? "" : "s", opt.sheet);
    if (x.stats && res.files == 0 && res.pages > 0) {
        fprintf(stderr, "export: a handout of %d page%s (%d steps) in %.3f s: draw %.2f ms/step, %.1f KiB/page\n",
                res.pages, res.pages == 1 ? "" : "s", res.steps, res.seconds,
                1e3 * res.draw_seconds / (res.steps ? res.steps : 1), res.bytes / 1024.0 / res.pages);
    } else if (x.stats) {
        int n = res.files > 0 ? res.files : res.steps;
        fprintf(stderr,
                "export: %d files %dx%d in %.3f s: %.2f ms/frame wall, draw %.2f ms/frame, encode %.2f ms/frame "
                "and write %.2f ms/frame on %d threads, %.1f KiB/frame\n",
                n, res.width, res.height, res.seconds, 1e3 * res.seconds / (n ? n : 1),
                1e3 * res.draw_seconds / (n ? n : 1), 1e3 * res.encode_seconds / (n ? n : 1),
                1e3 * res.write_seconds / (n ? n : 1), res.threads, res.bytes / 1024.0 / (n ? n : 1));
    }
    return APP_OK;
}
