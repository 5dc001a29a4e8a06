"""The Python generator printed in lessons/FORMAT.md gives exactly the numbers
attnviz generates. Run by CTest (tests/lesson.cmake):

    /usr/bin/python3 test_lesson_format.py lessons/FORMAT.md tests/lessons/mhsa-tiny.json

with $ATTNVIZ the built program. Takes the first ```python block after
"In Python" from FORMAT.md, runs it, then compares every matrix the lesson
leaves out with `attnviz trace` of that lesson, bit for bit (both sides are
float32 printed with %.9g, which round-trips)."""
import io, json, os, re, subprocess, sys, contextlib

fmt_path, lesson_path = sys.argv[1], sys.argv[2]
text = open(fmt_path, encoding="utf-8").read()
m = re.search(r"In Python.*?```python\n(.*?)```", text, re.S)
if not m:
    sys.exit("FORMAT.md has no ```python block after 'In Python'")
ns = {}
with contextlib.redirect_stdout(io.StringIO()):
    exec(m.group(1), ns)
generate = ns["generate"]

lesson = json.load(open(lesson_path, encoding="utf-8"))
trace = json.loads(subprocess.run([os.environ["ATTNVIZ"], "trace", lesson_path], check=True,
                                  capture_output=True).stdout)
cfg = trace["config"]
steps = {s["name"]: s for s in trace["steps"]}
seed = lesson.get("seed", 0)
dm, H, dk, dv = cfg["d_model"], cfg["heads"], cfg["d_k"], cfg["d_v"]
shapes = {"X": (cfg["n_q"], dm, None), "W_Q": (dm, H * dk, dm), "W_K": (dm, H * dk, dm),
          "W_V": (dm, H * dv, dm), "W_O": (H * dv, dm, H * dv)}
checked = 0
for name, (rows, cols, fan_in) in shapes.items():
    if name in lesson or name not in steps:
        continue
    want = generate(seed, name, rows, cols, fan_in)
    got = steps[name]["data"]
    for r in range(rows):
        for c in range(cols):
            if float("%.9g" % want[r][c]) != got[r][c]:
                sys.exit("%s[%d][%d]: python %.9g, attnviz %r" % (name, r, c, want[r][c], got[r][c]))
    checked += 1
if checked == 0:
    sys.exit("the lesson leaves no matrix out; nothing compared")
print("%d generated matrices of %s match the FORMAT.md generator" % (checked, lesson_path))
