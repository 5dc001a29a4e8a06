#!/bin/bash
# tools/bench.sh: attnviz against what a user would otherwise run, in one run
# on one machine. Prints one table and writes it as Markdown, with the machine
# it came from, to tools/bench-latest.md.
#
#   tools/bench.sh [--attnviz PATH] [--out FILE.md] [--show-speed X] [--skip-show] [--skip-export]
#                  [--shapes N,D,H[:N,D,H...]] [--readme]
#
# --readme also puts the table into docs/performance.md, between the lines
# <!-- BEGIN bench table ... --> and <!-- END bench table -->.
#
# Measures:
#   BLAS      PyTorch and NumPy run on OpenBLAS (libopenblas0-pthread, installed
#             if missing), one thread, with the kernel chosen from the CPU's
#             flags (SkylakeX with AVX-512, Haswell with AVX2 and FMA), after
#             tools/blas_check.py has checked its products against the
#             reference BLAS; the table names the BLAS and the kernel
#   peak      one core's arithmetic peak with and without fused multiply-add
#             (tools/peak_flops.c) and OpenBLAS's own sgemm rate at 1024³
#   forward   `attnviz bench` (1 and 2 threads, one configuration after the
#             other, 5 rounds each; each side's round with the lowest median
#             counts) vs PyTorch nn.MultiheadAttention
#             (1 thread, need_weights=True, average_attn_weights=False, eval,
#             no grad) vs plain NumPy (the same traced forward), at (n, d_model,
#             heads) = (5,8,2) (64,64,8) (512,512,8) (1024,512,8) (2048,512,8):
#             median ms per forward, the ratios, attnviz's GFLOP/s and its share
#             of the OpenBLAS sgemm rate, trace bytes and trace bytes / bytes of
#             the intermediates; and OpenBLAS doing only the same matrix
#             products (bench_reference.py products): the rate this BLAS
#             reaches on the forward's own shapes
#   memory    peak resident set (/usr/bin/time -v) of each of those runs
#   export    tools/bench_export.py: attnviz export --frames vs matplotlib
#             imshow+savefig, ms per frame at 1280×720
#   scale     tools/bench_scale.py on lessons of 3, 12, 512 and 1,024 tokens:
#             the window's frame times and first frame at 1920×1080 under
#             xvfb-run (--speed X, default 4, only shortens the autoplay), export
#             ms/frame, the window's peak memory, `attnviz bench --edits` where
#             it exists, hover, zoom and pan on the 1,024-token weights driven
#             by xdotool (draw + present per frame), and matplotlib on the same
#             1024×1024 heatmap
# A row whose tool is missing says "not available"; nothing is estimated.
#
# Without --attnviz it builds the tree in build-bench/ (the project's default
# RelWithDebInfo, -j2). Needs /usr/bin/python3 with torch, numpy, matplotlib;
# xvfb-run; xdotool and python3-pil for hover, zoom and pan; /usr/bin/time;
# OpenBLAS and the reference BLAS. On Debian, as root, it installs whichever
# of these are missing (elsewhere a missing one makes its row "not
# available", or stops the run with the command that installs it). About
# 10-15 minutes. The numbers are only as quiet as the
# machine: the load average at the start and the end is printed with them.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
OUT_MD=$ROOT/tools/bench-latest.md
BIN=
SKIP_SHOW=0
SKIP_EXPORT=0
SHOW_SPEED=4
SHAPES=5,8,2:64,64,8:512,512,8:1024,512,8:2048,512,8
README=
while [ $# -gt 0 ]; do
    case $1 in
    --attnviz) BIN=${2:?--attnviz needs a path}; shift 2 ;;
    --out) OUT_MD=${2:?--out needs a file}; shift 2 ;;
    --show-speed) SHOW_SPEED=${2:?--show-speed needs a number}; shift 2 ;;
    --skip-show) SKIP_SHOW=1; shift ;;
    --readme) README=$ROOT/docs/performance.md; shift ;;
    --skip-export) SKIP_EXPORT=1; shift ;;
    --shapes) SHAPES=${2:?--shapes needs N,D,H[:N,D,H...]}; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

die() { echo "bench.sh: $*" >&2; exit 1; }

# What the run uses, by Debian package name, installed when missing.
bench_packages=(python3 python3-torch python3-numpy python3-matplotlib python3-pil
    libopenblas0-pthread libblas3 time xvfb xauth xdotool)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
    missing=()
    for p in "${bench_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== installing ${missing[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
            die "could not install ${missing[*]}"
    fi
fi
[ -x "$PY" ] || die "$PY not found (Debian's python3 with python3-torch is needed)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found: apt-get install -y time"

if [ -z "$BIN" ]; then
    echo "== building attnviz in build-bench/" >&2
    cmake -S "$ROOT" -B "$ROOT/build-bench" >/dev/null || die "cmake configure failed"
    cmake --build "$ROOT/build-bench" -j2 --target attnviz >/dev/null || die "build failed"
    BIN=$ROOT/build-bench/attnviz
fi
[ -x "$BIN" ] || die "no attnviz binary at $BIN"

TMP=$(mktemp -d /tmp/attnviz-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo "$(cut -d' ' -f1-3 /proc/loadavg)" >"$TMP/load-start"

# ---- the BLAS PyTorch and NumPy run on ---------------------------------------
# Debian's torch and numpy call whatever libblas.so.3 the loader finds. The
# reference BLAS is 25-30x slower than OpenBLAS, so the comparison is made on
# OpenBLAS (installed if missing), loaded for the Python side only through
# LD_LIBRARY_PATH, single-threaded, with the kernel chosen from the CPU's flags
# rather than left to OpenBLAS's detection, which names some virtual CPUs
# wrongly. Its products are checked against the reference BLAS first.
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
OPENBLAS_DIR=/usr/lib/$MULTIARCH/openblas-pthread
REFBLAS_DIR=/usr/lib/$MULTIARCH/blas
if [ ! -e "$OPENBLAS_DIR/libblas.so.3" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "== installing OpenBLAS (libopenblas0-pthread)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libopenblas0-pthread >/dev/null ||
            die "could not install libopenblas0-pthread"
    else
        die "OpenBLAS is missing: apt-get install libopenblas0-pthread"
    fi
fi
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { case " $flags " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if has avx512f && has avx512bw && has avx512vl && has avx512dq && has avx512cd; then
    KERNEL=SkylakeX
elif has avx2 && has fma; then
    KERNEL=Haswell
else
    KERNEL=
fi
BLAS_ENV=(env -u OPENBLAS_L2_SIZE -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
          OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1)
[ -n "$KERNEL" ] && BLAS_ENV+=("OPENBLAS_CORETYPE=$KERNEL")
[ -e "$REFBLAS_DIR/libblas.so.3" ] || die "the reference BLAS is missing (apt-get install libblas3): nothing to check OpenBLAS against"
env "LD_LIBRARY_PATH=$REFBLAS_DIR" "$PY" "$ROOT/tools/blas_check.py" write "$TMP/blas-ref.npz" ||
    die "blas_check.py write failed under the reference BLAS"
"${BLAS_ENV[@]}" "$PY" "$ROOT/tools/blas_check.py" compare "$TMP/blas-ref.npz" >"$TMP/blas.check" ||
    die "$(cat "$TMP/blas.check"): OpenBLAS with OPENBLAS_CORETYPE=${KERNEL:-auto} miscomputes on this CPU"
echo "== $(cat "$TMP/blas.check")" >&2
echo "${KERNEL:-chosen by OpenBLAS}" >"$TMP/blas.kernel"
"${BLAS_ENV[@]}" "$PY" "$ROOT/tools/blas_check.py" name >"$TMP/blas.name"

# ---- one core's peak: FMA and multiply+add, and OpenBLAS's own product ------
echo "== one core's peak rate (tools/peak_flops.c) and OpenBLAS sgemm" >&2
: >"$TMP/peak.out"
: >"$TMP/gemm.out"
if cc -O2 -ffp-contract=off "$ROOT/tools/peak_flops.c" -o "$TMP/peak_flops" 2>"$TMP/peak.err"; then
    for _ in 1 2 3; do
        "$TMP/peak_flops" >>"$TMP/peak.out"
        "${BLAS_ENV[@]}" "$PY" "$ROOT/tools/blas_check.py" gemm 1024 >>"$TMP/gemm.out"
    done
else
    echo "peak_flops.c did not compile: $(tail -1 "$TMP/peak.err")" >&2
fi

# Runs a command under /usr/bin/time -v: stdout to $TMP/$1.out, the peak
# resident set in kB to $TMP/$1.rss, stderr to $TMP/$1.err.
timed() {
    local name=$1
    shift
    /usr/bin/time -v -o "$TMP/$name.time" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    local rc=$?
    sed -n 's/.*Maximum resident set size (kbytes): *//p' "$TMP/$name.time" >"$TMP/$name.rss"
    return $rc
}

# Configuration by configuration, every side within the same minute or so:
# attnviz on 1 and 2 threads alternately, in 5 rounds, then PyTorch and NumPy
# (bench_reference.py, 5 rounds of its own). A shared machine has slow spells
# of whole minutes: on the one docs/performance.md's table comes from, a 5-token
# forward took 0.66 us for a while, then 1.06 us for the next few minutes, in
# other processes too. Each side keeps its round with the lowest median, and
# the sides of one configuration are measured close together. The peak
# resident set of each side is the largest of its runs.
echo "== attnviz bench (1 and 2 threads, 5 rounds), PyTorch, NumPy: configuration by configuration" >&2
: >"$TMP/attnviz1.out"
: >"$TMP/attnviz2.out"
: >"$TMP/torch.out"
: >"$TMP/numpy.out"
: >"$TMP/products.out"
peak1=0 peak_torch=0 peak_numpy=0
# the larger of $1 and the number in file $2 (kB), or $1
max_rss() { local r; r=$(cat "$2" 2>/dev/null); [ -n "$r" ] && [ "$r" -gt "$1" ] && echo "$r" || echo "$1"; }
for shape in ${SHAPES//:/ }; do
    IFS=, read -r n d h <<<"$shape"
    echo "   ($shape)" >&2
    for threads in 1 2 1 2 1 2 1 2 1 2; do
        timed "run$threads" "$BIN" bench --n "$n" --d-model "$d" --heads "$h" --threads "$threads" ||
            die "attnviz bench --n $n --d-model $d --heads $h --threads $threads failed: $(cat "$TMP/run$threads.err")"
        cat "$TMP/run$threads.out" >>"$TMP/attnviz$threads.out"
    done
    peak1=$(max_rss "$peak1" "$TMP/run1.rss")
    for impl in torch numpy products; do
        if timed "ref" "${BLAS_ENV[@]}" "$PY" "$ROOT/tools/bench_reference.py" "$impl" "$shape"; then
            cat "$TMP/ref.out" >>"$TMP/$impl.out"
            if [ $impl = torch ]; then peak_torch=$(max_rss "$peak_torch" "$TMP/ref.rss"); elif [ $impl = numpy ]; then peak_numpy=$(max_rss "$peak_numpy" "$TMP/ref.rss"); fi
        else
            echo "$impl failed at ($shape): $(tail -1 "$TMP/ref.err")" >&2
        fi
    done
done
echo "$peak1" >"$TMP/attnviz1.rss"
[ "$peak_torch" -gt 0 ] && echo "$peak_torch" >"$TMP/torch.rss"
[ "$peak_numpy" -gt 0 ] && echo "$peak_numpy" >"$TMP/numpy.rss"

: >"$TMP/export.out"
if [ $SKIP_EXPORT = 0 ] && [ -f "$ROOT/tools/bench_export.py" ]; then
    echo "== export vs matplotlib (tools/bench_export.py)" >&2
    "$PY" "$ROOT/tools/bench_export.py" --attnviz "$BIN" --size 1280x720 >"$TMP/export.out" 2>"$TMP/export.err" ||
        echo "bench_export.py failed: $(tail -1 "$TMP/export.err")" >&2
fi

# 3, 12, 512 and 1,024 tokens: window, first frame, export, memory, edits
: >"$TMP/scale.out"
if [ $SKIP_SHOW = 0 ]; then
    echo "== lessons from 3 to 1,024 tokens (tools/bench_scale.py)" >&2
    "$PY" "$ROOT/tools/bench_scale.py" --attnviz "$BIN" --speed "$SHOW_SPEED" >"$TMP/scale.out" 2>"$TMP/scale.err" ||
        echo "bench_scale.py failed: $(tail -1 "$TMP/scale.err")" >&2
fi
echo "$(cut -d' ' -f1-3 /proc/loadavg)" >"$TMP/load-end"

# ---- the table -------------------------------------------------------------
"$PY" - "$TMP" "$OUT_MD" "$BIN" "$SHOW_SPEED" "$README" <<'EOF'
import datetime, os, platform, re, subprocess, sys

tmp, out_md, binary, show_speed, readme = sys.argv[1:6]
def read(name):
    p = os.path.join(tmp, name)
    return open(p, encoding="utf-8", errors="replace").read() if os.path.exists(p) else ""

LINE = re.compile(r"n=(\d+) d_model=(\d+) heads=(\d+) threads=(\d+) median: ([0-9.]+) ms min: ([0-9.]+) ms"
                  r"(?: trace: (\d+) bytes data: (\d+) bytes)?")
def parse(name):
    """Per configuration, the line (the round) with the lowest median."""
    rows = {}
    for m in LINE.finditer(read(name + ".out")):
        key = tuple(int(m.group(i)) for i in (1, 2, 3))
        row = dict(median=float(m.group(5)), min=float(m.group(6)),
                   trace=int(m.group(7)) if m.group(7) else None, data=int(m.group(8)) if m.group(8) else None)
        if key not in rows or row["median"] < rows[key]["median"]:
            rows[key] = row
    return rows

a1, a2, tor, npy, prod = parse("attnviz1"), parse("attnviz2"), parse("torch"), parse("numpy"), parse("products")
def rss(name):
    v = read(name + ".rss").strip()
    return "%.0f MiB" % (int(v) / 1024) if v.isdigit() else "not available"

def ms(v):
    """3 significant digits at least: 0.000684, 0.0712, 10.8, 2789.3."""
    if v is None:
        return "not available"
    return "%.3g" % v if v < 1 else "%.2f" % v if v < 100 else "%.1f" % v
def ms2(row):
    return "not available" if not row else "%s (%s)" % (ms(row["median"]), ms(row["min"]))
def ratio(a, b):
    return "not available" if a is None or b is None or b == 0 else "%.1f×" % (a / b)

def grab(pattern, text, conv=float):
    m = re.search(pattern, text)
    return conv(m.group(1)) if m else None
def best_of(pattern, text):
    vals = [float(v) for v in re.findall(pattern, text)]
    return (max(vals), min(vals)) if vals else (None, None)

# one core's yardsticks: OpenBLAS's own sgemm, and the arithmetic peak
gemm, gemm_low = best_of(r"sgemm \d+: ([0-9.]+) GFLOP/s", read("gemm.out"))
peak = read("peak.out")
fma512, _ = best_of(r"avx512 fma: ([0-9.]+)", peak)
mul512, _ = best_of(r"avx512 fma: [0-9.]+ GFLOP/s  mul\+add: ([0-9.]+)", peak)
fma256, _ = best_of(r"avx2 fma: ([0-9.]+)", peak)
mul256, _ = best_of(r"avx2 fma: [0-9.]+ GFLOP/s  mul\+add: ([0-9.]+)", peak)

def flops(n, d):
    """The forward's multiply-adds, counted as 2 flops each: Q, K, V (3·n·d·d),
    every head's scores and weighted sum (2·n·n·d over all heads), W_O (n·d·d)."""
    return 2.0 * (4 * n * d * d + 2 * n * n * d)

rows = []
for key in sorted(a1, key=lambda k: (k[0] * k[0] * k[1], k)):
    n, d, h = key
    t1 = a1[key]["median"]
    t2 = a2.get(key, {}).get("median")
    tt = tor.get(key, {}).get("median")
    tn = npy.get(key, {}).get("median")
    met = "yes" if tt is not None and tt / t1 >= 1.5 else "no"
    tr, da = a1[key]["trace"], a1[key]["data"]
    two = ratio(t1, t2)
    mem = "%.3f: %s" % (tr / da, "yes" if tr / da <= 1.5 else "no")
    rate = flops(n, d) / (t1 * 1e-3) / 1e9
    if gemm:
        share = "%.0f%%" % (100 * rate / gemm) + ((": yes" if rate / gemm >= 0.70 else ": no") if n >= 512 else "")
    else:
        share = "not available"
    # OpenBLAS doing only the same products: the rate the products alone reach
    tp = prod.get(key, {}).get("median")
    blas_only = "%s ms, %.0f%%" % (ms(tp), 100 * flops(n, d) / (tp * 1e-3) / 1e9 / gemm) if tp and gemm else "not available"
    rows.append(["(%d, %d, %d)" % key, ms2(a1[key]), ms2(a2.get(key)), ms2(tor.get(key)), ms2(npy.get(key)),
                 "%s: %s" % (ratio(tt, t1), met), ratio(tn, t1), two, "%.1f" % rate, share, blas_only,
                 "%d" % tr, mem])
head = ["(n, d_model, heads)", "attnviz 1 thread", "attnviz 2 threads", "PyTorch", "NumPy",
        "PyTorch / attnviz (≥ 1.5×)", "NumPy / attnviz", "2-thread speed-up", "attnviz GFLOP/s",
        "of OpenBLAS sgemm (≥ 70% from n = 512)", "OpenBLAS, the same products alone: ms, of sgemm",
        "trace bytes", "trace / intermediates (≤ 1.5)"]

exp = read("export.out")
mpl_ms = grab(r"matplotlib imshow\+savefig \S+: ([0-9.]+) ms/frame", exp)
our_ms = grab(r"attnviz export --frames \S+: ([0-9.]+) ms/frame", exp)
na = "not available"
def gf(v):
    return ("%.1f GFLOP/s" % v) if v else na
other = [
    ["export per frame, 1280×720, default lesson", ms(our_ms) + " ms" if our_ms else na,
     (ms(mpl_ms) + " ms (matplotlib)") if mpl_ms else na,
     ("%.1f× faster" % (mpl_ms / our_ms)) if mpl_ms and our_ms else na, "≥ 10×"],
    ["peak memory of the forward runs above (the largest configuration)", "attnviz 1 thread " + rss("attnviz1"),
     "PyTorch " + rss("torch") + ", NumPy " + rss("numpy"), "", ""],
]
machine_rows = [
    ["OpenBLAS sgemm 1024³, 1 thread (best of 3; lowest %s)" % gf(gemm_low), gf(gemm)],
    ["AVX-512, fused multiply-add", gf(fma512)],
    ["AVX-512, multiply then add", gf(mul512)],
    ["AVX2, fused multiply-add", gf(fma256)],
    ["AVX2, multiply then add", gf(mul256)],
]

# lessons from 3 to 1,024 tokens (tools/bench_scale.py)
sc = read("scale.out")
def sval(lesson, key):
    m = re.search(r"^scale %s %s: (.*)$" % (lesson, re.escape(key)), sc, re.M)
    return m.group(1).strip() if m else None
scale_rows = []
for lesson, what in (("3", "self-attention-xihuan-paobu"), ("12", "seed001-shapes-512"),
                     ("512", "512 tokens, d_model 512, 8 heads"), ("1024", "1,024 tokens, d_model 64, 8 heads, causal")):
    w = sval(lesson, "window") or na
    mw = re.match(r"frames (\d+) p50 ([0-9.]+) p99 ([0-9.]+) max ([0-9.]+)", w)
    p99 = ("%s ms: %s" % (mw.group(3), "yes" if float(mw.group(3)) < 16.7 else "no")) if mw else w
    frames = ("p50 %s ms, max %s ms, %s frames" % (mw.group(2), mw.group(4), mw.group(1))) if mw else ""
    ff = sval(lesson, "first-frame")
    ffs = ("%s ms: %s" % (ff, "yes" if float(ff) <= 300 else "no")) if ff and ff[0].isdigit() else (ff or na)
    ex = sval(lesson, "export") or na
    me = re.match(r"([0-9.]+) ms/frame over (\d+)", ex)
    exs = ("%s ms (%s frames): %s" % (me.group(1), me.group(2), "yes" if float(me.group(1)) < 15 else "no")) if me else ex
    r = sval(lesson, "show-rss-kib")
    rs = ("%.0f MiB" % (int(r) / 1024)) if r and r.isdigit() else (r or na)
    mm = re.match(r"peak (\d+) MiB, trace ([0-9.]+) MiB, fixed (\d+) MiB, within .*: (yes|no)$", sval(lesson, "memory") or "")
    if mm:
        rs = "%s MiB, trace %s MiB: %s" % (mm.group(1), mm.group(2), mm.group(4))
    ed = sval(lesson, "edits") or na
    mx = re.match(r"n (\d+) p50 ([0-9.]+) p99 ([0-9.]+)", ed)
    eds = ("p50 %s ms, p99 %s ms" % (mx.group(2), mx.group(3))) if mx else ed
    # hover, zoom and pan: draw + present of the frames they drew (1,024 tokens only)
    it = sval(lesson, "interact")
    mi = re.match(r"n (\d+) p50 ([0-9.]+) p99 ([0-9.]+) max ([0-9.]+)", it or "")
    parts = []
    for inp in ("hover", "zoom", "pan"):
        mp = re.match(r"n (\d+) p50 [0-9.]+ p99 ([0-9.]+)", sval(lesson, "interact-" + inp) or "")
        if mp:
            parts.append("%s %s" % (inp, mp.group(2)))
    its = ("%s ms: %s (%s frames; p99 %s)" % (mi.group(3), "yes" if float(mi.group(3)) < 16.7 else "no", mi.group(1),
                                             ", ".join(parts) or "by input: " + na)) if mi else (it or "—")
    scale_rows.append(["%s tokens (%s)" % (lesson, what), p99, frames, ffs, exs, rs, eds, its])
scale_head = ["lesson", "window p99 (< 16.7 ms)", "window frames", "first frame (≤ 300 ms)",
              "export ms/frame at 1280×720 (< 15 ms)", "show peak memory (≤ 2 × trace + the 3-token lesson's peak)",
              "edit, recompute, draw (bench --edits)", "hover, zoom, pan p99 (< 16.7 ms)"]
mpl_big = sval("1024", "matplotlib")

other_head = ["measure", "attnviz", "reference", "result", "target"]
machine_head = ["one core", "rate"]

def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()[0]
    except Exception:
        return "unknown"
pyver = version(["/usr/bin/python3", "-c",
                 "import torch, numpy, matplotlib; print('torch %s, numpy %s, matplotlib %s' % "
                 "(torch.__version__, numpy.__version__, matplotlib.__version__))"])
machine = [
    ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ("CPU", "%s, %d cores" % (cpu_model(), os.cpu_count() or 0)),
    ("kernel", platform.release()),
    ("compiler", version(["cc", "--version"])),
    ("Python side", pyver),
    ("BLAS of the Python side", "%s (OPENBLAS_CORETYPE %s from the CPU's flags; 1 thread); %s" % (
        read("blas.name").strip() or "unknown", read("blas.kernel").strip() or "?",
        read("blas.check").strip().split(": ", 1)[-1] or "not checked")),
    ("attnviz", binary),
    ("load average (1, 5, 15 min) at start / end", "%s / %s" % (read("load-start").strip(), read("load-end").strip())),
]

def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)

md = ["# attnviz benchmark (tools/bench.sh)", ""]
md += ["- **%s**: %s" % kv for kv in machine]
md += ["", "## Traced multi-head self-attention forward, ms per forward: median (min)", "",
       md_table(head, rows), "",
       "attnviz: `attnviz bench` (every intermediate recorded, the trace allocated and freed each time; "
       "the engine keeps the block of the last large trace for the next one, so a repeated forward does not "
       "wait for the kernel to zero fresh pages, as PyTorch's and NumPy's arrays under 32 MiB do not; "
       "below 2e5 floating-point operations the engine uses one thread whatever --threads says). "
       "PyTorch: `nn.MultiheadAttention`, `need_weights=True, average_attn_weights=False`, eval, no grad, "
       "`torch.set_num_threads(1)`. NumPy: the same traced forward in float32, one BLAS thread. "
       "Configuration by configuration, the three sides are measured one after the other; each side's time is its round "
       "(of 5, 1 s each; 1 round for a forward over 0.5 s) with the lowest median. "
       "Ratios (of medians) > 1× mean attnviz is faster. trace / intermediates = trace->alloc_bytes / trace->data_bytes.",
       "attnviz GFLOP/s counts the forward's products as 2·(4·n·d² + 2·n²·d) flops; the share is of the OpenBLAS "
       "sgemm rate below, measured in the same run. \"OpenBLAS, the same products alone\": those products and "
       "nothing else (no bias, scaling, softmax, copies or trace), each into an output allocated once, by NumPy "
       "on the OpenBLAS above (`tools/bench_reference.py products`), and that rate as a share of the sgemm rate: "
       "where it is under 70%, the BLAS itself does not reach the goal on this forward's shapes.",
       "", "## One core's yardsticks", "", md_table(machine_head, machine_rows), "",
       "`tools/peak_flops.c`: 24 independent accumulators in vector registers, acc·a + b, best of 7 runs; "
       "`tools/blas_check.py gemm 1024`: NumPy's float32 product on the OpenBLAS above.",
       "", "## From 3 to 1,024 tokens, at 1920×1080 under Xvfb", "", md_table(scale_head, scale_rows), "",
       "matplotlib imshow + savefig of the same 1024×1024 weights heatmap at 1280×720: %s." % (mpl_big or na),
       "Window: `attnviz show LESSON --autoplay --quit-at-end --frame-stats --speed %s` under xvfb-run (software "
       "rendering); export: `attnviz export LESSON --frames --dwell 0 --fps 10 --size 1280x720`, wall time per "
       "frame written; memory: peak resident set of the show run. The 512- and 1,024-token lessons are written by "
       "tools/make_large_lesson.py for the run." % show_speed,
       "", "## Export and memory", "", md_table(other_head, other), "",
       "The machine is shared: numbers taken while it was busy are noisy (see the load average above); "
       "rerun `tools/bench.sh` on a quiet machine for the figures to quote.", ""]
try:
    load_start = float(read("load-start").split()[0])
    autogroup = open("/proc/sys/kernel/sched_autogroup_enabled").read().strip() == "1"
except (ValueError, IndexError, OSError):
    load_start, autogroup = 0.0, False
if load_start >= 1.0:
    md += ["**This run is not quiet** (1-minute load %.2f at the start on %d cores)%s: "
           "read the 2-thread column as unmeasured." % (
               load_start, os.cpu_count() or 0,
               ", and with autogroup scheduling (kernel.sched_autogroup_enabled = 1) a busy machine gives "
               "this run one fixed share of the CPU whatever its number of threads" if autogroup else ""), ""]
text = "\n".join(md)
with open(out_md, "w", encoding="utf-8") as f:
    f.write(text)
print(text)
print("(written to %s)" % out_md, file=sys.stderr)
if readme:
    body = open(readme, encoding="utf-8").read()
    m = re.search(r"(<!-- BEGIN bench table[^\n]*-->\n)(.*?)(<!-- END bench table -->)", body, re.S)
    if not m:
        sys.exit("bench.sh: %s has no <!-- BEGIN bench table --> ... <!-- END bench table --> block" % readme)
    table = "\n".join(md[2:]).replace("\n## ", "\n### ")  # under the file's own "## The table"
    body = body[:m.start(2)] + table.strip() + "\n" + body[m.end(2):]
    with open(readme, "w", encoding="utf-8") as f:
        f.write(body)
    print("(and into %s)" % readme, file=sys.stderr)
EOF
