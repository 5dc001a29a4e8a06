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
  interact (1,024 tokens) `attnviz show LESSON --step N --size 1920x1080` on the
           first head's weights under Xvfb, driven by xdotool as a teacher's
           mouse would: hover across the result's cells, zoom in with the
           wheel, drag to pan, hover the zoomed cells, zoom back out. Each
           frame's draw + present time comes from ATTNVIZ_FRAME_LOG; the
           line gives p50/p99/max over the frames those inputs drew (each
           hover frame shows the hovered cell's derivation), overall and per
           kind of input.
and once, matplotlib's imshow + savefig of one 1024×1024 heatmap (viridis,
colorbar, title) at 1280×720, the same picture a 1,024-token weights step is.
Prints one line per measurement, `scale LESSON KEY: VALUE`, which
tools/bench.sh turns into its table. Nothing is estimated: a measurement that
fails prints `scale LESSON KEY: not available (why)`.
"""
import argparse
import glob
import json
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


def first_softmax(attnviz, path, tmp):
    """(step number from 1, a box (x0, y0, x1, y1) of the result's blocked cells at
    1920×1080) of the first head's weights: from `attnviz export --steps weights_1` at
    the window's size (the export draws the window's pixels), the box from the grey of
    the causal mask's blocked cells (the whole upper triangle, or the top-right
    corner of an elided matrix)."""
    from PIL import Image
    out = os.path.join(tmp, "interact-probe")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([attnviz, "export", path, "-o", out, "--steps", "weights_1", "--size", "1920x1080", "--quiet"],
                   check=True, capture_output=True, timeout=300)
    index = json.load(open(os.path.join(out, "index.json")))
    entry = index["files"][0]
    png = os.path.join(out, entry["file"])
    im = Image.open(png).convert("RGB")
    w, h = im.size
    px = im.load()
    grey = (168, 168, 168)  # the light theme's blocked cells
    cols = [x for x in range(w) if any(px[x, y] == grey for y in range(0, h, 2))]
    shutil.rmtree(out, ignore_errors=True)
    if not cols:
        raise RuntimeError("no blocked cells found in the weights step")
    # runs of columns with grey: the masked scores, the weights and the heads'
    # thumbnails; the result is the rightmost of the widest (the operand is as wide)
    runs = []
    for x in cols:
        if runs and x == runs[-1][1] + 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    widest = max(b - a for a, b in runs)
    x0, x1 = [r for r in runs if r[1] - r[0] >= 0.9 * widest][-1]
    y0 = min(y for y in range(h) if px[x1, y] == grey)
    return entry["step"], (x0, y0, x1, y0 + (x1 - x0))


# The inputs bench_interact drives, in order, each after a pause of PAUSE
# seconds in which nothing is drawn: the frame log's timestamps are split at
# those pauses (the log is written in blocks, so its length cannot say when
# an input began).
INPUTS = ["hover", "zoom", "pan", "hover-zoomed", "zoom-out"]
PAUSE = 1.5


def drive(attnviz, path, step, box, log):
    """Inside an X server: opens the window, moves the mouse, quits."""
    env = dict(os.environ, SDL_VIDEODRIVER="x11", ATTNVIZ_FRAME_LOG=log)
    p = subprocess.Popen([attnviz, "show", path, "--step", str(step), "--size", "1920x1080"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def x(*args):
        subprocess.run(["xdotool"] + [str(a) for a in args], capture_output=True, timeout=30)

    try:
        x("search", "--sync", "--onlyvisible", "--pid", p.pid)
        x0, y0, x1, y1 = box
        side = x1 - x0
        # the window fills the screen from its origin; the pointer starts off the matrices
        x("mousemove", 5, 1075)
        time.sleep(3 * PAUSE)
        def sweep(n):  # across the panel's matrices and back, whatever the layout (whole or elided)
            for k in range(n):
                f = (k % (n // 2)) / (n / 2.0) if k < n // 2 else 1.0 - (k % (n // 2)) / (n / 2.0)
                x("mousemove", int(1920 * (0.05 + 0.8 * f)), int(1080 * (0.15 + 0.45 * f)))
                time.sleep(0.03)

        sweep(80)  # hover: each move over a cell shows its derivation
        time.sleep(PAUSE)
        x("mousemove", x0 + side // 3, y0 + side * 2 // 3)  # hovering here draws once more: zoom's first frame
        for _ in range(10):  # zoom: the wheel, 1.25× a click
            x("click", 4)
            time.sleep(0.08)
        time.sleep(PAUSE)
        x("mousedown", 1)  # pan: drag the zoomed cells about, a cell (60 px at 1080) a move
        for k in range(40):
            x("mousemove", x0 + side // 3 + 60 * (k % 10 if k % 20 < 10 else 10 - k % 10), y0 + side * 2 // 3 - k * 3)
            time.sleep(0.03)
        x("mouseup", 1)
        time.sleep(PAUSE)
        sweep(40)  # hover-zoomed: the zoomed cells' derivations
        time.sleep(PAUSE)
        x("mousemove", x0 + side // 2, y0 + side // 2)  # back over the result
        for _ in range(10):  # zoom-out
            x("click", 5)
            time.sleep(0.08)
        time.sleep(PAUSE)
        x("key", "q")
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def bench_interact(attnviz, name, path, tmp):
    """p50/p99/max of draw + present over the frames that hover, zoom and pan drew."""
    if not shutil.which("xvfb-run") or not shutil.which("xdotool"):
        say(name, "interact", "not available (needs xvfb-run and xdotool)")
        return
    try:
        step, box = first_softmax(attnviz, path, tmp)
    except Exception as e:  # no PIL, no grey: say so
        say(name, "interact", "not available (%s)" % e)
        return
    log = os.path.join(tmp, "interact-frames.log")
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", "/usr/bin/python3", os.path.abspath(__file__),
           "--drive", attnviz, path, str(step), ",".join(map(str, box)), log]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        say(name, "interact", "not available (timed out)")
        return
    frames = []  # (start in ms, draw + present in ms)
    for line in open(log) if os.path.exists(log) else []:
        m = re.match(r"([0-9.]+) draw ([0-9.]+) ms present ([0-9.]+) ms", line)
        if m:
            frames.append((float(m.group(1)), float(m.group(2)) + float(m.group(3))))
    if p.returncode != 0 or not frames:
        say(name, "interact", "not available (%s)" % (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1])
        return
    # runs of frames with less than a pause between them; the first run is the window's start
    runs = [[frames[0]]]
    for prev, f in zip(frames, frames[1:]):
        if f[0] - prev[0] > PAUSE * 1000 * 0.6:
            runs.append([])
        runs[-1].append(f)
    runs = runs[1:]

    def stats(fs):
        d = sorted(ms for _, ms in fs)
        if not d:
            return "n 0"
        return "n %d p50 %.2f p99 %.2f max %.2f" % (len(d), d[len(d) // 2], d[-(-len(d) * 99 // 100) - 1], d[-1])

    say(name, "interact", stats([f for r in runs for f in r]))
    if len(runs) != len(INPUTS):
        say(name, "interact-inputs", "not available (%d runs of frames for %d inputs)" % (len(runs), len(INPUTS)))
        return
    for what, r in zip(INPUTS, runs):
        say(name, "interact-" + what, stats(r))


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
    if len(sys.argv) == 7 and sys.argv[1] == "--drive":  # bench_interact, inside Xvfb
        drive(sys.argv[2], sys.argv[3], int(sys.argv[4]), tuple(int(v) for v in sys.argv[5].split(",")), sys.argv[6])
        return
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
                if name == "1024":
                    bench_interact(args.attnviz, name, path, tmp)
            bench_export(args.attnviz, name, path, tmp)
            bench_edits(args.attnviz, name, path)
        bench_memory(args.attnviz, lessons, peaks)
        if "1024" in chosen:
            say("1024", "matplotlib", "%.2f ms/frame" % bench_matplotlib())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
