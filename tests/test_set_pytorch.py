#!/usr/bin/python3
"""test_set_pytorch.py: `attnviz trace --set ... --scale X` against PyTorch.

For every configuration of tests/make_fixtures.py (the engine's PyTorch
fixtures), writes the configuration's inputs as a lesson file, runs

    attnviz trace LESSON --set 'X[i][j]=v' --set 'W_Q[i][j]=v' ... [--scale X]

with edits to the input, a weight, a bias and the mask where the lesson has
them, makes the same edits to the torch tensors, and compares every computed
step with make_fixtures.reference (plain torch ops) at the engine's tolerance,
1e-5 + 1e-4·|ref|. A row whose keys are all blocked is NaN in torch and all
zero in attnviz (the engine's documented choice), and is compared as such.

Usage: /usr/bin/python3 tests/test_set_pytorch.py ATTNVIZ [WORKDIR]
Exit status: 0 all agree, 1 a difference (printed), 77 no torch.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import torch
    import make_fixtures as mf
except ImportError as e:  # no torch: skipped
    print(f"SKIP: {e}")
    sys.exit(77)

ABS_TOL, REL_TOL = 1e-5, 1e-4


def rows(x):
    x = x.detach().to(torch.float32)
    if x.dim() == 1:
        x = x[None]
    return [[float(v) for v in r] for r in x]


def flat(x):
    return [float(v) for v in x.detach().to(torch.float32).reshape(-1)]


def lesson_of(c, t):
    """The configuration as an attnviz lesson with every number given."""
    L = {"format": "attnviz-lesson/1", "id": "set-" + c["name"].replace("_", "-").lower(),
         "title": {"en": c["name"]}, "tokens": [f"q{i}" for i in range(c["n_q"])]}
    if c["cross"]:
        L["source_tokens"] = [f"k{j}" for j in range(c["n_k"])]
        L["Y"] = rows(t["Y"])
    L["X"] = rows(t["X"])
    if c["attention"] == "additive":
        L["attention"] = "additive"
        L["W_a"] = rows(t["W_a"])
        L["v_a"] = flat(t["v_a"])
        if "b_a" in t:
            L["b_a"] = flat(t["b_a"])
    else:
        L.update(d_model=c["d_model"], heads=c["heads"], d_k=c["d_k"], d_v=c["d_v"])
        for n in ("W_Q", "W_K", "W_V"):
            L[n] = rows(t[n])
        L["W_O"] = rows(t["W_O"]) if c["W_O"] else None
        for n in ("b_Q", "b_K", "b_V", "b_O"):
            if n in t:
                L[n] = flat(t[n])
        L["scale"] = c["scale_value"] if c["scale"] == "value" else c["scale"]
    if c["mask"] == "causal":
        L["mask"] = "causal"
    elif c["mask"] == "padding":
        L["mask"] = {"padding": list(c["mask_values"])}
    elif c["mask"] == "matrix":
        L["mask"] = [list(r) for r in c["mask_values"]]
    L["mask_fill"] = "-inf" if c["fill"] == -math.inf else c["fill"]
    if c["mask"] != "none" and c.get("mask_order", "scale_then_mask") != "scale_then_mask":
        L["mask_order"] = c["mask_order"]
    # the options of today's models, as the lesson format writes them
    if "decode" in c:
        L["decode"] = c["decode"]
    if "kv_heads" in c:
        L["kv_heads"] = c["kv_heads"]
    if "rope_base" in c:
        L["rope"] = {"base": c["rope_base"]}
    if "positional" in c:
        L["positional"] = c["positional"]
    if "tile" in c:
        L["tile"] = c["tile"]
    return L


def edits_of(c, t):
    """(--set specs, a function applying them to the tensors and the allow matrix)."""
    specs, changes = [], []

    def cell(name, i, j, v, vector=False):
        specs.append(f"{name}[{j}]={v!r}" if vector else f"{name}[{i}][{j}]={v!r}")
        changes.append((name, i, j, v))

    nq = c["n_q"]
    cell("X", nq - 1, 0, 1.5)
    if c["cross"]:
        cell("Y", 0, t["Y"].shape[1] - 1, -0.625)
    if c["attention"] == "additive":
        cell("W_a", 0, t["W_a"].shape[1] - 1, 0.75)
        cell("v_a", 0, 0, 0.3, vector=True)
        if "b_a" in t:
            cell("b_a", 0, t["b_a"].shape[1] - 1, -0.2, vector=True)
    else:
        cell("W_Q", 0, t["W_Q"].shape[1] - 1, -0.75)
        cell("W_V", t["W_V"].shape[0] - 1, 0, 0.5)
        if c["W_O"]:
            cell("W_O", 1 % t["W_O"].shape[0], 0, 0.25)
        for n in ("b_Q", "b_K", "b_V", "b_O"):
            if n in t:
                cell(n, 0, 0, 0.3, vector=True)
                break
    mask_cell = None
    if c["mask"] == "padding":
        specs.append(f"mask[0]={1 - c['mask_values'][0]}")
        mask_cell = ("padding", 0)
    elif c["mask"] == "matrix":
        specs.append(f"mask[0][0]={1 - c['mask_values'][0][0]}")
        mask_cell = ("matrix", 0)

    def apply(t, allow):
        for name, i, j, v in changes:
            x = t[name]
            if x.dim() == 2 and x.shape[1] == 1 and name == "v_a":
                x[j, 0] = v
            elif x.dim() == 2 and x.shape[0] == 1:
                x[0, j] = v
            else:
                x[i, j] = v
        if mask_cell and mask_cell[0] == "padding":
            allow[:, 0] = ~allow[:, 0]
        elif mask_cell:
            allow[0, 0] = ~allow[0, 0]

    return specs, apply


def compare(name, got, ref, dead):
    ref = ref.detach().to(torch.float32)
    if ref.dim() == 1:
        ref = ref[None]
    g = torch.tensor([[(-math.inf if v == "-inf" else v) for v in r] for r in got], dtype=torch.float32)
    if g.shape != ref.shape:
        return f"{name}: shape {tuple(g.shape)} against torch's {tuple(ref.shape)}"
    for r in range(ref.shape[0]):
        nan_row = torch.isnan(ref[r]).any()
        if nan_row:
            if not (name.startswith(("weights", "head", "concat", "output", "context")) and dead[r]):
                return f"{name}[{r}]: torch gives NaN outside a fully blocked row"
            continue
        diff = (g[r] - ref[r]).abs()
        inf_same = torch.isinf(ref[r]) & (g[r] == ref[r])
        allowed = ABS_TOL + REL_TOL * ref[r].abs()
        bad = ~inf_same & ~(diff <= allowed)
        if bad.any():
            j = int(bad.nonzero()[0])
            return f"{name}[{r}][{j}]: attnviz {float(g[r, j])!r}, torch {float(ref[r, j])!r}"
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    attnviz = argv[1]
    work = argv[2] if len(argv) > 2 else tempfile.mkdtemp(prefix="attnviz-set-")
    os.makedirs(work, exist_ok=True)
    failures, checked = 0, 0
    for c in mf.CONFIGS:
        if c.get("d_model", 0) > 64:  # seed001's 512: the same code paths, a 30 MB trace
            continue
        t, _ = mf.make_inputs(c)
        mask_list, allow = mf.mask_values(c)
        lesson = lesson_of(c, t)
        path = os.path.join(work, c["name"] + ".json")
        with open(path, "w") as f:
            json.dump(lesson, f, ensure_ascii=False)
        specs, apply = edits_of(c, t)
        cmd = [attnviz, "trace", path]
        for s in specs:
            cmd += ["--set", s]
        c2 = dict(c)
        if c["attention"] == "dot" and c["scale"] == "sqrt_dk":
            div = 0.8 * math.sqrt(c["d_k"])
            cmd += ["--scale", repr(div)]
            c2["scale"], c2["scale_value"] = "value", float(torch.tensor(div, dtype=torch.float32))
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {c['name']}: attnviz exited {p.returncode}: {p.stderr.strip()}")
            failures += 1
            continue
        trace = {s["name"]: s["data"] for s in json.loads(p.stdout)["steps"]}
        t2 = {k: v.clone() for k, v in t.items()}
        allow2 = allow.clone()
        apply(t2, allow2)
        steps = mf.reference(c2, t2, allow2)
        dead = ~allow2.any(dim=1)
        problem = None
        for name, _, _, x in steps:
            if name not in trace:
                problem = f"{name}: missing from the trace"
                break
            problem = compare(name, trace[name], x, dead)
            if problem:
                break
        for n in t2:  # the edited inputs themselves
            if problem is None and n in trace:
                problem = compare(n, trace[n], t2[n], dead)
        if problem:
            print(f"FAIL {c['name']} ({' '.join(cmd[3:])}): {problem}")
            failures += 1
        else:
            checked += 1
            print(f"ok {c['name']}: {len(specs)} --set{'' if '--scale' not in cmd else ' and --scale'}, "
                  f"{len(steps)} steps agree with torch")
    print(f"{checked} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
