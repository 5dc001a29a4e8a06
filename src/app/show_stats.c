/* show_stats.c: --frame-stats and ATTNVIZ_FRAME_LOG (show.h). */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "attn.h"
#include "show.h"

/* Seconds since this process started: /proc/self/stat's start time (in clock
 * ticks since boot) against CLOCK_BOOTTIME; -1 when unavailable. */
static double process_age(void)
{
#ifdef CLOCK_BOOTTIME
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    char buf[2048];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    /* fields after the command: state is field 3, starttime is field 22 */
    int field = 2;
    unsigned long long start = 0;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        if (++field == 22) {
            start = strtoull(tok, NULL, 10);
            break;
        }
    }
    long hz = sysconf(_SC_CLK_TCK);
    if (!start || hz <= 0) return -1;
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    double boot = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return boot - (double)start / (double)hz;
#else
    return -1;
#endif
}

/* The frame log, written only as a new or existing regular file: never a
 * FIFO, a device or through a symbolic link. NULL (and one line) otherwise. */
static FILE *open_frame_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && ftruncate(fd, 0) == 0) {
        FILE *f = fdopen(fd, "w");
        if (f) return f;
    }
    app_fail(APP_OK, "ATTNVIZ_FRAME_LOG: cannot write %s as a regular file; no frame log", path);
    if (fd >= 0) close(fd);
    return NULL;
}

void show_stats_open(ShowStats *st, int enabled, double t_start)
{
    memset(st, 0, sizeof *st);
    st->enabled = enabled;
    st->t_start = t_start;
    st->age0 = process_age();
    st->first_frame = -1;
    /* ATTNVIZ_FRAME_LOG=FILE: one line per frame (start, draw and present
     * times, the step), to find what a slow frame was doing */
    const char *log_path = getenv("ATTNVIZ_FRAME_LOG");
    if (log_path && *log_path) st->log = open_frame_log(log_path);
}

/* This thread's CPU time in seconds: unlike the time between two clock
 * readings, it does not grow while other programs have the processor. */
static double thread_cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void show_stats_begin(ShowStats *st)
{
    if (st->log) st->cpu_begun = thread_cpu_seconds();
}

void show_stats_frame(ShowStats *st, const ShowWindow *w, const View *v, double t, double t_drawn,
                      unsigned long long sent)
{
    double now = attn_clock_seconds();
    if (st->enabled) {
        if (st->n_frames == st->cap_frames) {
            size_t nc = st->cap_frames ? st->cap_frames * 2 : 4096;
            double *p = realloc(st->frame_start, nc * sizeof *p);
            if (p) {
                st->frame_start = p;
                st->cap_frames = nc;
            }
        }
        if (st->n_frames < st->cap_frames) st->frame_start[st->n_frames++] = t;
    }
    if (st->log)
        fprintf(st->log,
                "%.3f draw %.2f ms present %.2f ms sent %llu px step %d %s t %.3f rects %d scan %.2f ms send %.2f ms "
                "cpu %.2f ms\n",
                (t - st->t_start) * 1000.0, (t_drawn - t) * 1000.0, (now - t_drawn) * 1000.0, sent, v->step,
                view_current(v)->name, v->t, w->scr.last_rects, w->scr.last_scan_ms, w->scr.last_send_ms,
                (thread_cpu_seconds() - st->cpu_begun) * 1000.0);
    if (st->first_frame < 0) {
        st->first_frame = now - st->t_start + (st->age0 > 0 ? st->age0 : 0);
        if (st->log) fprintf(st->log, "start-up: first frame shown at %.1f ms\n", st->first_frame * 1000.0);
    }
}

void show_stats_mark(ShowStats *st, const char *what)
{
    if (st->log)
        fprintf(st->log, "start-up: %s at %.1f ms\n", what,
                (attn_clock_seconds() - st->t_start + (st->age0 > 0 ? st->age0 : 0)) * 1000.0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, size_t n, double q)
{
    if (!n) return 0;
    size_t i = (size_t)ceil(q * (double)n) - 1;
    if (i >= n) i = n - 1;
    return sorted[i];
}

void show_stats_close(ShowStats *st, int report)
{
    if (st->enabled && report) {
        size_t n = st->n_frames > 1 ? st->n_frames - 1 : 0;
        double *d = n ? malloc(n * sizeof *d) : NULL;
        if (d) {
            for (size_t i = 0; i < n; i++) d[i] = (st->frame_start[i + 1] - st->frame_start[i]) * 1000.0;
            qsort(d, n, sizeof *d, cmp_double);
        }
        printf("frames: %zu p50: %.2f ms p99: %.2f ms max: %.2f ms\n", st->n_frames, d ? percentile(d, n, 0.5) : 0.0,
               d ? percentile(d, n, 0.99) : 0.0, d ? d[n - 1] : 0.0);
        printf("first-frame: %.1f ms\n", st->first_frame * 1000.0);
        fflush(stdout);
        free(d);
    }
    free(st->frame_start);
    if (st->log) fclose(st->log);
    memset(st, 0, sizeof *st);
}
