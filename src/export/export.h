/* export.h: headless export of a lesson to PNG files: one PNG per step (its
 * final state) with an index.json, or every animation frame for a video, or
 * A4 handout pages (PNG or PDF); and the window's "save this frame" (the S key).
 *
 * No window and no display: frames are drawn by src/render on
 * SDL_CreateSoftwareRenderer over an SDL_Surface, the same drawing code the
 * window uses, so a PNG has the window's pixels for the same View and size.
 * SDL_VIDEODRIVER may be "dummy" or "offscreen"; SDL_Init is not needed.
 * Frames are encoded and written on a pool of threads (export_pool.h) while
 * the next one is drawn, each through a temporary file renamed when complete
 * (png_write.h): a final name never holds a truncated PNG.
 *
 * Usage:
 *
 *     ExportOptions opt;
 *     export_options_init(&opt);                  // 1920×1080, English, light, multi-head
 *     export_parse_size("1280x720", &opt.width, &opt.height, err, sizeof err);
 *     opt.lang = LESSON_ZH;
 *     ExportResult res;
 *     if (export_lesson(&lesson, "out", &opt, &res, err, sizeof err) != 0) {
 *         fprintf(stderr, "%s\n", err);           // "out/007-softmax-h2.png: No space left on device"
 *         return res.usage_error ? 2 : 1;
 *     }
 *     printf("%d files\n", res.files);
 *
 * Files (default): DIR/NNN-kind[-hH].png for each selected step, NNN the
 * step's number as the window counts it, from 1 (view_step_ordinal; 3
 * digits, more when the trace has over 999 steps), kind as the trace format
 * spells it (attn_step_kind_name), -hH for per-head steps, e.g.
 * 008-softmax-h2.png; and DIR/index.json ("attnviz-export/1": the lesson,
 * the options, and for each file its step number (from 1), kind, name, head,
 * formula and narration in the chosen language).
 *
 * Frames (opt.frames): DIR/000000.png, 000001.png, ... for `ffmpeg -i
 * DIR/%06d.png`. A step whose animation lasts d seconds (view_step_duration,
 * 0 for inputs and weights) is shown for (d + dwell) / speed seconds of
 * video: export_step_frames = max(1, ceil((d + dwell) · fps / speed)) frames,
 * frame i at animation time min(d, i · speed / fps), so each step's final
 * state is held for the dwell as autoplay in the window holds it.
 * index.json then lists, per step, its first frame and frame count.
 *
 * The folder: attnviz writes only its own names there, each through a new
 * temporary renamed into place; a name taken by anything but a regular file
 * (a FIFO, a device, a symbolic link), by a file that is not attnviz's PNG,
 * an index.json that is not an export's, or a file under the journal's
 * name that is not a journal, is refused before drawing,
 * never opened or replaced. index.json records each file's size and
 * SHA-256 ("bytes", "sha256"; for frames, "frame_files": runs of identical
 * frames). An export removes what the earlier export into DIR recorded,
 * each file only while it is still exactly that and says attnviz in its
 * Software chunk (ExportResult.stale_removed counts those not written
 * again; earlier_left those recorded but changed since); and hidden
 * temporaries of attnviz's own naming (.NNN-kind.png.attnviz-XXXXXX) older
 * than this export, which a killed export left (temps_removed). The folder
 * is this process's alone meanwhile (flock), and always describes one
 * export: the earlier export's files and index.json go first, each new
 * file is listed in the journal (.index.json.attnviz-journal) before it
 * appears, and index.json is written last, the journal then removed. An
 * export stopped part-way leaves no index.json and the journal listing
 * what it wrote; the next export into DIR removes those files.
 *
 * Handout (opt.sheet): A4 portrait pages at 150 dpi, FILE.png, FILE-2.png,
 * ..., each selected step's final state (without status line, timeline or
 * narration, at the --size's aspect ratio) followed by its caption (step
 * number, title, kind and head, formula, narration, each once), wrapped by
 * render's text layer (render_wrap) as the window's text is; as many steps
 * to a page as fit; a caption longer than the rest of its page continues
 * on the next. The PNG pages carry a pHYs chunk of 150 dpi, so they print
 * at A4, and their number (attnviz:handout-page); the first page records
 * the later pages' sizes and SHA-256 (attnviz:handout-pages). The pages are
 * drawn whole before any is written; then an earlier handout's later pages
 * that this one does not replace are removed, as its first page recorded
 * them and only while each is still that page (pages_removed). FILE.pdf
 * (with cairo): the same pages, laid out by the same code, as images,
 * each caption over its text in render's fonts (render_text_runs), which
 * a PDF reader selects and searches, and a bookmark for each step.
 *
 * DPI: step PNGs and frames say EXPORT_SCREEN_DPI × opt.scale (pHYs).
 *
 * Size: opt.width × opt.height is the layout size; opt.scale (high-DPI)
 * multiplies the pixels: PNGs are round(width·scale) × round(height·scale)
 * and render draws the same layout at that resolution (render scales text
 * and cells with the frame height).
 *
 * Errors: every function returns 0 (or a pointer) on success and -1 (NULL)
 * with one line in err; ExportResult.usage_error tells bad options (exit 2)
 * from runtime failures (exit 1).
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <signal.h>
#include <stddef.h>

#include <SDL.h>

#include "attn.h"
#include "lesson.h"
#include "png_write.h"
#include "render.h"
#include "view.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXPORT_DEFAULT_WIDTH  1920
#define EXPORT_DEFAULT_HEIGHT 1080
#define EXPORT_MIN_SIDE       64    /* smaller is not a frame anyone can read */
#define EXPORT_MAX_SIDE       16384 /* per side, after --scale */
#define EXPORT_DEFAULT_FPS    30.0
#define EXPORT_MAX_FRAMES     1000000
#define EXPORT_FORMAT         "attnviz-export/1"
#define EXPORT_INDEX_NAME     "index.json"
#define EXPORT_SAVE_DIR       "attnviz-frames" /* the window's S key, relative to the working folder */
/* The DPI written into step and frame PNGs (their pHYs chunk) at --scale 1:
 * a layout pixel is a CSS pixel, 1/96 inch, as browsers and office programs
 * take a PNG without one; --scale S writes S × 96 dpi. Handout pages carry
 * their own 150 dpi. */
#define EXPORT_SCREEN_DPI 96.0

/* What export_lesson reports while it runs (for a progress line). */
typedef struct ExportProgress {
    const char *what;            /* "steps", "frames" or "sheet": what is being written */
    int steps_done, steps_total; /* selected steps fully drawn */
    int frames_done;             /* files written completely */
    int frames_total;
    double elapsed; /* seconds since the start of this part */
    double fps;     /* files per second so far */
    double eta;     /* seconds left, estimated; < 0 unknown */
} ExportProgress;
typedef void (*ExportProgressFn)(void *user, const ExportProgress *p);

typedef struct ExportOptions {
    int width, height; /* layout size, default 1920×1080 */
    float scale;       /* pixels per layout pixel, default 1 (2 for a high-DPI 2× image) */
    LessonLang lang;   /* narration, labels and title language */
    ViewTheme theme;
    ViewMode mode;                /* VIEW_MULTI (default), VIEW_SINGLE, VIEW_COMPARE */
    float text_scale;             /* View.text_scale, default 1 */
    int big_text;                 /* View.big_text: the caption instead of the narration, text ≥ 1/30 of the height */
    ViewWeightScale weight_scale; /* colours of attention weights, default VIEW_WEIGHTS_UNIT */
    ViewNotation notation;        /* VIEW_NOTATION_ROW (default) or VIEW_NOTATION_COLUMN */
    int slides;                   /* 1: slide frames (VIEW_OUTPUT_SLIDE): no status line, no timeline */
    int head;                     /* 0: every head's steps; H ≥ 1: only head H's per-head steps, H selected */
    const char *steps;            /* "FROM-TO", "FROM-", "-TO" or "ITEM", see export_select_steps; NULL: all */
    int frames;                   /* 1: every animation frame (000000.png ...) instead of one PNG per step */
    double fps;                   /* frames mode: frames per second, default 30 */
    double dwell;                 /* frames mode: seconds a finished step is held, default VIEW_DWELL_SECONDS */
    double speed;                 /* frames mode: animation speed factor, default 1 */
    const char *sheet;            /* a handout sheet PNG to write, or NULL */
    int write_steps;              /* 1 (default): write the per-step PNGs or frames into the folder */
    int threads;                  /* encoding threads, 0: one per CPU */
    ExportPngOptions png;
    RenderOptions render; /* fonts: the window's defaults unless a test pins them */
    int use_render_options;
    ExportProgressFn progress; /* called as each part begins (nothing done yet), after each file and at
                                * the end; NULL: silent */
    void *progress_user;
    /* When not NULL and set (by a signal handler, say), the export stops
     * after the files already queued are written, and fails "interrupted":
     * no temporary file is left behind. */
    const volatile sig_atomic_t *cancel;
} ExportOptions;

typedef struct ExportResult {
    int files;             /* PNG files written (not counting index.json or the sheet) */
    int steps;             /* steps exported */
    int pages;             /* handout pages written (PNG files or PDF pages) */
    int width, height;     /* pixel size of each PNG */
    double seconds;        /* wall time of the whole export */
    double draw_seconds;   /* time spent drawing and reading pixels (the calling thread) */
    double encode_seconds; /* CPU seconds of encoding, summed over the pool's threads */
    double write_seconds;  /* writing files, summed over the pool's threads */
    size_t bytes;          /* PNG bytes written */
    int threads;
    int stale_removed; /* files of an earlier export into the folder removed (see above) */
    int earlier_left;  /* files an earlier export recorded, no longer what it wrote: left in place (see above) */
    int temps_removed; /* stale temporaries of a killed export removed (see above) */
    int pages_removed; /* pages of an earlier, longer PNG handout removed: FILE-N.png after the last page (above) */
    int usage_error;   /* on failure: 1 when the options or the input were wrong (exit 2) */
} ExportResult;

/* The defaults listed in ExportOptions. */
void export_options_init(ExportOptions *opt);

/* "1280x720" or "1280×720" (and "1280X720"): both sides EXPORT_MIN_SIDE..EXPORT_MAX_SIDE. */
int export_parse_size(const char *text, int *width, int *height, char *err, size_t errlen);

/* Which steps of the trace to export. spec NULL or "": all. Otherwise ITEM,
 * FROM-TO, FROM- or -TO, where each of ITEM, FROM, TO is a step number
 * (from 1, as in the window and the file names), a step name ("weights_2") or a kind
 * ("softmax"). A single ITEM selects that step, or every step of that kind;
 * FROM is the first step it names, TO the last, both included. With head
 * H ≥ 1 the per-head steps of other heads are left out. selected[i] is set
 * to 1 or 0 for each of trace->n_steps; returns how many are selected, or
 * -1 with err naming what was expected and found. */
int export_select_steps(const AttnTrace *trace, const char *spec, int head, unsigned char *selected, char *err,
                        size_t errlen);

/* Frames a step of `duration` seconds gets in frames mode (see above). */
int export_step_frames(double duration, const ExportOptions *opt);

/* The file name of trace step `step` (an index) in the default mode:
 * "008-softmax-h2.png" for index 7, the number counted from 1. n_steps
 * decides the digits. */
void export_step_filename(const AttnTrace *trace, int step, char *buf, size_t len);

/* Exports the lesson into dir (created when its parent exists; it may be
 * NULL when only opt->sheet is written). 0, or -1 with err and
 * res->usage_error. res may be NULL. */
int export_lesson(const Lesson *lesson, const char *dir, const ExportOptions *opt, ExportResult *res, char *err,
                  size_t errlen);

/* Draws the view at width × height on a software renderer into pixels
 * (BGRX32, i.e. SDL_PIXELFORMAT_XRGB8888, pitch bytes per row): what
 * export writes for that view. For tests and for export_lesson itself. */
int export_draw_view(RenderCtx *rc, SDL_Renderer *sdl, const View *view, int width, int height, unsigned char *pixels,
                     size_t pitch, char *err, size_t errlen);

/* The S key: saves what `sdl` shows (its whole output, read back with
 * SDL_RenderReadPixels; call it after drawing and before presenting) as a
 * PNG in dir (NULL: EXPORT_SAVE_DIR; created when its parent exists) named
 * LESSONID-NNN-kind[-hH].png, or with -2, -3 ... when that exists, with the
 * same text chunks as export_lesson and a pHYs chunk of EXPORT_SCREEN_DPI
 * times the window's pixels per point (192 dpi on a 2× high-DPI screen).
 * Writes the path into path_out; a path longer than path_len - 1 bytes is
 * refused before anything is written. 0, or -1 with err. */
int export_save_frame(SDL_Renderer *sdl, const View *view, const char *dir, char *path_out, size_t path_len, char *err,
                      size_t errlen);
/* The same from pixels the caller already has, saying `dpi` in pHYs. */
int export_save_image(const ExportImage *img, const View *view, double dpi, const char *dir, char *path_out,
                      size_t path_len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
