/* cmd_export.c: `attnviz export LESSON -o DIR [options]`: the lesson as PNG
 * files, headless (src/export does the work; this parses and reports). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
            "  --frames           every animation frame instead: 000000.png, 000001.png\n"
            "                     ... (ffmpeg -framerate 30 -i DIR/%%06d.png out.mp4); a\n"
            "                     step animating d s gets ceil((d + dwell) * fps / speed)\n"
            "                     frames, its final state held for the dwell; frames\n"
            "                     of an earlier, longer export that would follow ours in\n"
            "                     the sequence are removed\n"
            "  --fps N            frames per second with --frames (default %g)\n"
            "  --dwell S          seconds a finished step is held, --frames (default %g)\n"
            "  --speed X          animation speed with --frames (default 1)\n"
            "  --sheet FILE.png   also (without -o: only) one tall handout image, every\n"
            "                     step one below the other with its caption\n"
            "  --threads N        PNG encoding threads (default: one per CPU)\n"
            "  --png-level N      zlib level 0-9 (default %d, chosen by measurement)\n"
            "  --png-filter F     none|sub|up|avg|paeth|fast|all (default %s)\n"
            "  --png-strategy S   default|filtered|rle|huffman|fixed (default %s)\n"
            "  --stats            print one line of timings to stderr at the end\n"
            "  -q, --quiet        no progress line (shown only when stderr is a terminal)\n"
            "\n"
            "Nothing is half-written: each file is written under a temporary name in\n"
            "its folder and renamed when complete; Ctrl-C stops after the files being\n"
            "written. Exit status: 0 done, 1 a runtime failure (a folder that cannot be\n"
            "created or written, a full disk), 2 bad input or usage.\n",
            EXPORT_DEFAULT_WIDTH, EXPORT_DEFAULT_HEIGHT, EXPORT_DEFAULT_FPS, VIEW_DWELL_SECONDS,
            EXPORT_PNG_DEFAULT_LEVEL, EXPORT_PNG_DEFAULT_FILTER, EXPORT_PNG_DEFAULT_STRATEGY);
}

/* A whole-string number in [lo, hi]. */
static int parse_number(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
        app_fail(APP_USAGE, "%s: expected a number from %g to %g, found \"%s\"", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    double v;
    if (parse_number(opt, s, lo, hi, &v) != 0) return -1;
    if (v != floor(v)) {
        app_fail(APP_USAGE, "%s: expected a whole number from %d to %d, found \"%s\"", opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_choice(const char *opt, const char *s, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    app_fail(APP_USAGE, "%s: expected %s, found \"%s\"", opt, list, s);
    return -1;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct Progress {
    double last; /* when the line was last drawn */
    int shown;   /* a line is on screen */
    const char *what;
} Progress;

/* One line, redrawn in place at most ten times a second, on a terminal only. */
static void show_progress(void *user, const ExportProgress *p)
{
    Progress *pr = user;
    double now = attn_clock_seconds();
    int final = p->steps_done == p->steps_total && p->frames_done == p->frames_total;
    if (!final && now - pr->last < 0.1) return;
    if (pr->shown && pr->what && strcmp(pr->what, p->what) != 0) fputc('\n', stderr); /* a new part: a new line */
    pr->what = p->what;
    pr->last = now;
    char eta[32] = "";
    if (p->eta >= 0 && !final) snprintf(eta, sizeof eta, ", %.0f s left", ceil(p->eta));
    if (strcmp(p->what, "sheet") == 0)
        fprintf(stderr, "\r\033[Kexport: sheet, step %d/%d, %.1f steps/s%s", p->steps_done, p->steps_total, p->fps,
                eta);
    else
        fprintf(stderr, "\r\033[Kexport: step %d/%d, %d/%d %s, %.1f files/s%s", p->steps_done, p->steps_total,
                p->frames_done, p->frames_total, p->what, p->fps, eta);
    pr->shown = 1;
}

int cmd_export(int argc, char **argv)
{
    static const char *const langs[] = {"en", "zh"};
    static const char *const themes[] = {"light", "dark", "projector"};
    static const char *const views[] = {"multi", "single", "compare"};
    ExportOptions opt;
    export_options_init(&opt);
    const char *lesson_arg = NULL, *dir = NULL;
    int quiet = 0, stats = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            export_usage(stdout);
            return APP_OK;
        }
        if (strcmp(a, "--frames") == 0) {
            opt.frames = 1;
            continue;
        }
        if (strcmp(a, "--stats") == 0) {
            stats = 1;
            continue;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
            continue;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (lesson_arg)
                return app_fail(APP_USAGE, "export takes one lesson, found \"%s\" and \"%s\"", lesson_arg, a);
            lesson_arg = a;
            continue;
        }
        /* every other option takes a value: --opt VALUE or --opt=VALUE */
        const char *val = NULL;
        char name[32];
        const char *eq = strchr(a, '=');
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = 0;
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
            if (i + 1 >= argc) return app_fail(APP_USAGE, "%s needs a value (see attnviz export --help)", a);
            val = argv[++i];
        }
        int ok = 0;
        double d;
        int n;
        if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
            dir = val;
            if (!*val) ok = -1, app_fail(APP_USAGE, "%s: expected a folder, found \"\"", name);
        } else if (strcmp(name, "--size") == 0) {
            char err[256];
            if (export_parse_size(val, &opt.width, &opt.height, err, sizeof err) != 0)
                ok = -1, app_fail(APP_USAGE, "%s", err);
        } else if (strcmp(name, "--scale") == 0) {
            ok = parse_number(name, val, 0.25, 8, &d);
            opt.scale = (float)d;
        } else if (strcmp(name, "--text-scale") == 0) {
            ok = parse_number(name, val, VIEW_TEXT_SCALE_MIN, VIEW_TEXT_SCALE_MAX, &d);
            opt.text_scale = (float)d;
        } else if (strcmp(name, "--lang") == 0) {
            ok = parse_choice(name, val, langs, 2, &n);
            opt.lang = (LessonLang)n;
        } else if (strcmp(name, "--theme") == 0) {
            ok = parse_choice(name, val, themes, 3, &n);
            opt.theme = (ViewTheme)n;
        } else if (strcmp(name, "--view") == 0) {
            ok = parse_choice(name, val, views, 3, &n);
            opt.mode = (ViewMode)n;
        } else if (strcmp(name, "--weight-scale") == 0) {
            if ((n = view_weight_scale_from_name(val)) < 0)
                ok = -1, app_fail(APP_USAGE, "--weight-scale: expected unit, row or log, found \"%s\"", val);
            opt.weight_scale = (ViewWeightScale)n;
        } else if (strcmp(name, "--notation") == 0) {
            if ((n = view_notation_from_name(val)) < 0)
                ok = -1, app_fail(APP_USAGE, "--notation: expected row or column, found \"%s\"", val);
            opt.notation = (ViewNotation)n;
        } else if (strcmp(name, "--head") == 0) {
            ok = parse_int(name, val, 1, LESSON_MAX_HEADS, &opt.head);
        } else if (strcmp(name, "--steps") == 0) {
            opt.steps = val;
        } else if (strcmp(name, "--fps") == 0) {
            ok = parse_number(name, val, 1, 240, &opt.fps);
        } else if (strcmp(name, "--dwell") == 0) {
            ok = parse_number(name, val, 0, 60, &opt.dwell);
        } else if (strcmp(name, "--speed") == 0) {
            ok = parse_number(name, val, VIEW_SPEED_MIN, VIEW_SPEED_MAX, &opt.speed);
        } else if (strcmp(name, "--sheet") == 0) {
            opt.sheet = val;
            if (!*val) ok = -1, app_fail(APP_USAGE, "--sheet: expected a file name, found \"\"");
        } else if (strcmp(name, "--threads") == 0) {
            ok = parse_int(name, val, 1, 16, &opt.threads);
        } else if (strcmp(name, "--png-level") == 0) {
            ok = parse_int(name, val, 0, 9, &opt.png.level);
        } else if (strcmp(name, "--png-filter") == 0) {
            opt.png.filters = export_png_filter_from_name(val);
            if (opt.png.filters < 0)
                ok = -1,
                app_fail(APP_USAGE, "--png-filter: expected none|sub|up|avg|paeth|fast|all, found \"%s\"", val);
        } else if (strcmp(name, "--png-strategy") == 0) {
            opt.png.strategy = export_png_strategy_from_name(val);
            if (opt.png.strategy < 0)
                ok = -1,
                app_fail(APP_USAGE, "--png-strategy: expected default|filtered|rle|huffman|fixed, found \"%s\"", val);
        } else {
            return app_fail(APP_USAGE, "export: unknown option %s (see attnviz export --help)", name);
        }
        if (ok != 0) return APP_USAGE;
    }
    if (!lesson_arg) return app_fail(APP_USAGE, "export needs a lesson (usage: attnviz export LESSON -o DIR)");
    if (!dir && !opt.sheet)
        return app_fail(APP_USAGE, "export needs -o DIR or --sheet FILE.png (see attnviz export --help)");
    if (opt.frames && !dir) return app_fail(APP_USAGE, "--frames needs -o DIR");

    Lesson lesson;
    if (app_load_lesson(lesson_arg, &lesson) != 0) return APP_USAGE;

    Progress pr = {0, 0, NULL};
    if (!quiet && isatty(2)) {
        opt.progress = show_progress;
        opt.progress_user = &pr;
    }
    opt.write_steps = dir != NULL;
    /* A file-size limit (ulimit -f) must be an error message, not a kill:
     * write() then fails with EFBIG and the temporary file is removed. */
    signal(SIGXFSZ, SIG_IGN);
    /* Ctrl-C: finish the files being written, then stop, so that no
     * temporary file is left in the folder. */
    opt.cancel = &interrupted;
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    ExportResult res;
    char err[1024];
    int rc = export_lesson(&lesson, dir, &opt, &res, err, sizeof err);
    if (pr.shown) fputc('\n', stderr);
    lesson_free(&lesson);
    if (rc != 0) return app_fail(res.usage_error ? APP_USAGE : APP_RUNTIME, "%s", err);
    if (stats) {
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
