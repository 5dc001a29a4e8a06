#!/usr/bin/python3
"""bench_scale.py: how attnviz keeps up as lessons grow, from 3 to 1,024 tokens.

    /usr/bin/python3 tools/bench_scale.py --attnviz build/attnviz [--speed 8] [--out FILE]

For each lesson (3 tokens: self-attention-xihuan-paobu; 12: seed001-shapes-512;
512 and 1,024: written by tools/make_large_lesson.py into a scratch folder):
  window   `attnviz show LESSON --autoplay --quit-at-end --frame-stats
           --size 1920x1080 --speed S` under xvfb-run: frame time p50/p99/max
           and the time from process start to the first frame, with the peak
           resident set from /usr/bin/time -v;
  export   `attnviz export LESSON --frames --dwell 0 --fps 10 --size 1280x720`:
           wall time of the whole run divided by the frames written;
  edits    `attnviz bench --edits 200 LESSON`, where that subcommand exists;
  memory   the trace's bytes (`attnviz check LESSON` prints them) and whether
           the window's peak resident set is within 2 × trace + fixed, the
           fixed part being the peak of the 3-token lesson (whose trace is a
           few KiB): what `show` holds beyond its trace may not grow with the
           lesson, except for at most one more trace's worth (textures, the
           single-head trace, an edit's new trace beside the old).
and once, matplotlib's imshow + savefig of one 1024×1024 heatmap (viridis,
colorbar, title) at 1280×720, the same picture a 1,024-token weights step is.
Prints one line per measurement, `scale LESSON KEY: VALUE`, which
tools/bench.sh turns into its table. Nothing is estimated: a measurement that
fails prints `scale LESSON KEY: not available (why)`.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, timeout, env=None):
    """(returncode, stdout, stderr, peak RSS in KiB or None, wall seconds)."""
    with tempfile.NamedTemporaryFile(prefix="attnviz-time-", delete=False) as f:
        tfile = f.name
    t0 = time.perf_counter()
    try:
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tfile] + cmd, capture_output=True, text=True,
                           timeout=timeout, env=env)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = -1, "", "timed out after %d s" % timeout
    wall = time.perf_counter() - t0
    rss = None
    try:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(tfile).read())
        rss = int(m.group(1)) if m else None
    finally:
        os.unlink(tfile)
    return rc, out, err, rss, wall


def say(lesson, key, value):
    print("scale %s %s: %s" % (lesson, key, value))
    sys.stdout.flush()


def bench_window(attnviz, name, path, speed):
    if not shutil.which("xvfb-run"):
        say(name, "window", "not available (no xvfb-run)")
        return
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", attnviz, "show", path, "--autoplay",
           "--quit-at-end", "--frame-stats", "--size", "1920x1080", "--speed", str(speed)]
    rc, out, err, rss, _ = timed(cmd, 600)
    fs = re.search(r"frames: (\d+) p50: ([0-9.]+) ms p99: ([0-9.]+) ms max: ([0-9.]+) ms", out)
    first = re.search(r"first-frame: ([0-9.]+) ms", out)
    if rc != 0 or not fs:
        say(name, "window", "not available (%s)" % (err.strip().splitlines() or ["exit %d" % rc])[-1])
        return
    say(name, "window", "frames %s p50 %s p99 %s max %s" % fs.groups())
    say(name, "first-frame", first.group(1) if first else "not available")
    say(name, "show-rss-kib", rss if rss is not None else "not available")
    return rss


def trace_bytes(attnviz, path):
    """The bytes of the lesson's trace, from `attnviz check`'s ok line, or None."""
    p = subprocess.run([attnviz, "check", path], capture_output=True, text=True)
    m = re.search(r"trace (\d+) bytes", p.stdout)
    return int(m.group(1)) if p.returncode == 0 and m else None


def bench_memory(attnviz, lessons, peaks, fixed_lesson="3"):
    """Per lesson: its trace's bytes, and peak ≤ 2 × trace + fixed, with fixed
    the peak resident set of fixed_lesson's window (peaks: KiB by lesson)."""
    fixed = peaks.get(fixed_lesson)
    for name, path in lessons:
        tb = trace_bytes(attnviz, path)
        say(name, "trace-bytes", tb if tb is not None else "not available (attnviz check printed no size)")
        peak = peaks.get(name)
        if tb is None or peak is None or fixed is None:
            why = ("no trace size" if tb is None else "no peak resident set" if peak is None else
                   "no peak of the %s-token lesson, the fixed part" % fixed_lesson)
            say(name, "memory", "not available (%s)" % why)
            continue
        limit = 2 * tb / 1024 + fixed
        say(name, "memory", "peak %.0f MiB, trace %.1f MiB, fixed %.0f MiB, within 2 x trace + fixed (%.0f MiB): %s" %
            (peak / 1024, tb / 2**20, fixed / 1024, limit / 1024, "yes" if peak <= limit else "no"))


def bench_export(attnviz, name, path, tmp):
    out = os.path.join(tmp, "export-" + name)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [attnviz, "export", path, "-o", out, "--frames", "--dwell", "0", "--fps", "10", "--size", "1280x720",
           "--quiet"]
    rc, _, err, rss, wall = timed(cmd, 900)
    n = len(glob.glob(os.path.join(out, "*.png")))
    shutil.rmtree(out, ignore_errors=True)
    if rc != 0 or n == 0:
        say(name, "export", "not available (%s)" % (err.strip().splitlines() or ["exit %d" % rc])[-1])
        return
    say(name, "export", "%.2f ms/frame over %d frames" % (wall * 1e3 / n, n))


def bench_edits(attnviz, name, path):
    probe = subprocess.run([attnviz, "bench", "--help"], capture_output=True, text=True)
    if "--edits" not in probe.stdout + probe.stderr:
        say(name, "edits", "not available (this attnviz has no bench --edits)")
        return
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")  # the frame is drawn on the software renderer
    rc, out, err, _, _ = timed([attnviz, "bench", "--edits", "200", path], 600, env)
    m = re.search(r"edits: (\d+) p50: ([0-9.]+) ms p99: ([0-9.]+) ms", out)
    if rc != 0 or not m:
        say(name, "edits", "not available (%s)" % (err.strip().splitlines() or ["exit %d" % rc])[-1])
        return
    say(name, "edits", "n %s p50 %s p99 %s" % m.groups())


def bench_matplotlib(reps=5):
    """ms per imshow+savefig of one 1024×1024 heatmap at 1280×720: the median of reps."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    rng = np.random.default_rng(0)
    data = rng.random((1024, 1024)).astype(np.float32)
    tmp = tempfile.mkdtemp(prefix="attnviz-mpl-")
    times = []
    try:
        for i in range(reps + 1):
            t0 = time.perf_counter()
            fig, ax = plt.subplots(figsize=(12.8, 7.2), dpi=100)
            im = ax.imshow(data, cmap="viridis", vmin=0, vmax=1, interpolation="antialiased")
            fig.colorbar(im, ax=ax)
            ax.set_title("weights (1024 × 1024)")
            fig.savefig(os.path.join(tmp, "w%d.png" % i), dpi=100)
            plt.close(fig)
            if i:  # the first is a warm-up
                times.append(time.perf_counter() - t0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    times.sort()
    return times[len(times) // 2] * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnviz", required=True)
    ap.add_argument("--speed", type=float, default=8)
    ap.add_argument("--skip-window", action="store_true")
    ap.add_argument("--lessons", default="3,12,512,1024",
                    help="which lessons, by token count (default all four; memory's fixed part needs 3)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="attnviz-scale-")
    try:
        make = ["/usr/bin/python3", os.path.join(ROOT, "tools", "make_large_lesson.py")]
        subprocess.run(make + [os.path.join(tmp, "scale-1024.json")], check=True, capture_output=True)
        subprocess.run(make + [os.path.join(tmp, "scale-512.json"), "--tokens", "512", "--d-model", "512", "--mask",
                               "none"], check=True, capture_output=True)
        lessons = [("3", os.path.join(ROOT, "lessons", "self-attention-xihuan-paobu.json")),
                   ("12", os.path.join(ROOT, "lessons", "seed001-shapes-512.json")),
                   ("512", os.path.join(tmp, "scale-512.json")),
                   ("1024", os.path.join(tmp, "scale-1024.json"))]
        peaks = {}
        chosen = args.lessons.split(",")
        lessons = [(name, path) for name, path in lessons if name in chosen]
        for name, path in lessons:
            print("   %s tokens" % name, file=sys.stderr)
            if not args.skip_window:
                peaks[name] = bench_window(args.attnviz, name, path, args.speed)
            bench_export(args.attnviz, name, path, tmp)
            bench_edits(args.attnviz, name, path)
        bench_memory(args.attnviz, lessons, peaks)
        if "1024" in chosen:
            say("1024", "matplotlib", "%.2f ms/frame" % bench_matplotlib())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
