#!/usr/bin/python3
"""bench_export.py: attnviz export against matplotlib, side by side, in one run.

Times, at the same size (default 1280x720):
  - matplotlib: imshow + savefig of one heatmap figure (colorbar, title) per
    frame, as the issue measures it; and, for comparison, matplotlib at its
    fastest (one figure, only the data replaced before each savefig);
  - attnviz: the whole `attnviz export LESSON --frames --dwell 0` run (process
    start, lesson, fonts, drawing, encoding, writing) divided by the frames
    written, every frame drawn and encoded; and the default `--frames` run (a
    video: each finished step held 1 s, held frames written as copies).
and prints one line each plus the ratios.

    /usr/bin/python3 tools/bench_export.py [--attnviz build/attnviz] [--lesson ID]
                                           [--size 1280x720] [--mpl-frames 30]
    /usr/bin/python3 tools/bench_export.py --sweep   # PNG level × filter × strategy table

--sweep exports the lesson's steps (one PNG each, final state) with one
encoding thread for each PNG setting and prints encode time and size per
frame: how EXPORT_PNG_DEFAULT_* in src/export/png_write.h were chosen.

Run it with /usr/bin/python3 (matplotlib is installed for that interpreter).
The machine is shared: run it when nothing else is compiling, or read the
numbers as noisy.
"""
import argparse
import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_attnviz():
    cands = [os.path.join(ROOT, "build", "attnviz")] + sorted(glob.glob(os.path.join(ROOT, "build*", "attnviz")))
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    sys.exit("bench_export.py: no attnviz binary found; build first or pass --attnviz PATH")


def bench_matplotlib(width, height, frames, outdir, reuse):
    """Seconds per frame (wall, CPU) of writing `frames` heatmap PNGs.

    reuse False (the issue's measure): per frame a figure of width x height
    pixels, imshow of an 8x8 matrix with a colorbar and a title, savefig,
    close: what a script writing slides does.
    reuse True (matplotlib at its fastest): one figure, only the image's data
    replaced before each savefig."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rng = np.random.default_rng(0)
    dpi = 100

    def make(data):
        fig, ax = plt.subplots(figsize=(width / dpi, height / dpi), dpi=dpi)
        im = ax.imshow(data, cmap="viridis", vmin=0, vmax=1)
        fig.colorbar(im, ax=ax)
        ax.set_title("weights")
        return fig, im

    # one warm-up frame (font cache, first draw), not timed
    fig, im = make(rng.random((8, 8)))
    fig.savefig(os.path.join(outdir, "warmup.png"), dpi=dpi)
    if not reuse:
        plt.close(fig)
    t0 = time.perf_counter()
    c0 = time.process_time()
    for i in range(frames):
        if reuse:
            im.set_data(rng.random((8, 8)))
        else:
            fig, im = make(rng.random((8, 8)))
        fig.savefig(os.path.join(outdir, "mpl-%04d.png" % i), dpi=dpi)
        if not reuse:
            plt.close(fig)
    t1 = time.perf_counter()
    c1 = time.process_time()
    if reuse:
        plt.close(fig)
    from PIL import Image  # matplotlib depends on Pillow
    w, h = Image.open(os.path.join(outdir, "mpl-0000.png")).size
    if (w, h) != (width, height):
        sys.exit("bench_export.py: matplotlib wrote %dx%d, expected %dx%d" % (w, h, width, height))
    return (t1 - t0) / frames, (c1 - c0) / frames


def run_export(attnviz, lesson, size, outdir, extra):
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [attnviz, "export", lesson, "-o", outdir, "--size", size, "--stats", "--quiet"] + extra
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        sys.exit("bench_export.py: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    n = len(glob.glob(os.path.join(outdir, "*.png")))
    m = re.search(r"encode ([0-9.]+) ms/frame and write ([0-9.]+) ms/frame on (\d+) threads, ([0-9.]+) KiB/frame",
                  p.stderr)
    stats = None
    if m:
        stats = dict(encode=float(m.group(1)), write=float(m.group(2)), threads=int(m.group(3)),
                     kib=float(m.group(4)))
    if stats is not None:
        stats["cpu"] = cpu
    return t1 - t0, n, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnviz", default=None)
    ap.add_argument("--lesson", default=None, help="lesson id or file (default: the default lesson)")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--mpl-frames", type=int, default=30)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--reps", type=int, default=3, help="runs of each measurement; the median is reported")
    args = ap.parse_args()
    attnviz = args.attnviz or find_attnviz()
    lesson = args.lesson
    if not lesson:
        lesson = "mhsa-wo-xihuan-paobu"
        if not os.path.exists(os.path.join(ROOT, "lessons", lesson + ".json")):
            files = sorted(glob.glob(os.path.join(ROOT, "lessons", "*.json")))
            if not files:
                sys.exit("bench_export.py: no lessons in lessons/")
            lesson = files[0]
    width, height = (int(v) for v in args.size.lower().split("x"))
    tmp = tempfile.mkdtemp(prefix="attnviz-bench-")
    try:
        if args.sweep:
            sweep(attnviz, lesson, args.size, tmp, args.reps)
            return
        load0 = os.getloadavg()
        mpl, mpl_cpu, fast, fast_cpu = [], [], [], []
        video = []    # --frames as a teacher runs it: held final states are copies
        drawn, drawn_cpu = [], []  # --frames --dwell 0: every frame drawn and encoded
        n_video = n_drawn = 0
        mpl_dir = os.path.join(tmp, "mpl")
        os.makedirs(mpl_dir, exist_ok=True)
        for _ in range(args.reps):
            wall, cpu = bench_matplotlib(width, height, args.mpl_frames, mpl_dir, False)
            mpl.append(wall)
            mpl_cpu.append(cpu)
            wall, cpu = bench_matplotlib(width, height, args.mpl_frames, mpl_dir, True)
            fast.append(wall)
            fast_cpu.append(cpu)
            secs, n_video, _ = run_export(attnviz, lesson, args.size, os.path.join(tmp, "frames"), ["--frames"])
            video.append(secs / n_video)
            secs, n_drawn, st = run_export(attnviz, lesson, args.size, os.path.join(tmp, "frames"),
                                           ["--frames", "--dwell", "0"])
            drawn.append(secs / n_drawn)
            drawn_cpu.append(st["cpu"] / n_drawn)

        def median(v):
            return sorted(v)[len(v) // 2]
        m, mf, o_video, o_drawn = median(mpl), median(fast), median(video), median(drawn)
        name = os.path.basename(str(lesson))
        print("load average at the start: %.2f %.2f %.2f on %d CPUs (other work on the machine slows attnviz's "
              "threads more than matplotlib's one)" % (load0 + (os.cpu_count(),)))
        # tools/bench.sh reads the first "matplotlib imshow+savefig SIZE:" and
        # "attnviz export --frames SIZE:" lines: keep those two the issue's
        # measure and the conservative one (every frame drawn and encoded).
        print("matplotlib imshow+savefig %s: %.2f ms/frame (a figure per frame, as the issue measures; median of %d "
              "runs of %d frames)" % (args.size, m * 1e3, args.reps, args.mpl_frames))
        print("matplotlib at its fastest (one figure, set_data+savefig) %s: %.2f ms/frame" % (args.size, mf * 1e3))
        print("attnviz export --frames %s: %.2f ms/frame (--dwell 0: every frame drawn and encoded; median of %d "
              "whole runs of %d frames, %s)" % (args.size, o_drawn * 1e3, args.reps, n_drawn, name))
        print("attnviz export with held frames (--frames, default 1 s dwell) %s: %.2f ms/frame (held frames are "
              "copies; median of %d whole runs of %d frames)" % (args.size, o_video * 1e3, args.reps, n_video))
        print("ratio matplotlib/attnviz, every frame drawn: %.1fx (target: at least 10x)" % (m / o_drawn))
        print("ratio matplotlib at its fastest/attnviz, every frame drawn: %.1fx" % (mf / o_drawn))
        print("ratio matplotlib/attnviz, video with holds: %.1fx" % (m / o_video))
        print("CPU time per frame (user+sys, all threads): matplotlib %.2f ms (fastest %.2f), attnviz every frame "
              "drawn %.2f ms: ratio %.1fx (fastest %.1fx)"
              % (median(mpl_cpu) * 1e3, median(fast_cpu) * 1e3, median(drawn_cpu) * 1e3,
                 median(mpl_cpu) / median(drawn_cpu), median(fast_cpu) / median(drawn_cpu)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sweep(attnviz, lesson, size, tmp, reps):
    print("PNG settings on attnviz frames (%s, one PNG per step, 1 encoding thread, median of %d):" % (size, reps))
    print("%-6s %-7s %-9s %12s %12s" % ("level", "filter", "strategy", "encode ms", "KiB/frame"))
    for strategy in ["default", "rle", "filtered"]:
        for level in [0, 1, 2, 3, 6, 9]:
            for filt in ["none", "sub", "up", "paeth", "fast"]:
                if level == 0 and (filt != "none" or strategy != "default"):
                    continue
                enc = []
                kib = 0
                for _ in range(reps):
                    _, _, st = run_export(attnviz, lesson, size, os.path.join(tmp, "sweep"),
                                          ["--threads", "1", "--png-level", str(level), "--png-filter", filt,
                                           "--png-strategy", strategy])
                    enc.append(st["encode"])
                    kib = st["kib"]
                enc.sort()
                print("%-6d %-7s %-9s %12.2f %12.1f" % (level, filt, strategy, enc[len(enc) // 2], kib))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
