#!/usr/bin/python3
"""Recompute every lesson with PyTorch and compare it with `attnviz trace`.

Run (after building):
    /usr/bin/python3 tools/lesson_tools/verify_lessons.py [--attnviz build/attnviz] [lessons/*.json]

For each lesson it runs `attnviz trace LESSON`, takes the inputs the trace
recorded (X, Y, W_*, b_*, so generated matrices are included) and the mask
from the lesson file, recomputes every intermediate in float32 torch the way
the seeds write it (Q = X·W_Q, split_heads by view + transpose, Q·Kᵀ / divisor,
masked_fill(mask == 0, fill), softmax, weights·V, concat, ·W_O + b_O; additive:
tanh(cat(dec, enc)·W_a + b_a)·v_a), and, where its layout applies, also with
torch.nn.MultiheadAttention (need_weights=True, average_attn_weights=False).
It prints the largest difference per lesson and overall, and exits 1 when any
difference exceeds 1e-5 + 1e-4·|ref| (the engine's tolerance against PyTorch).

The options of today's models are recomputed too: incremental decoding
("decode": "incremental") token by token with the K/V caches growing, each
step by its name ("scores_1@3"), and its `decoded` rows against the whole
forward; grouped-query attention ("kv_heads") with each K/V head repeated for
its query heads (repeat_interleave), also through nn.MultiheadAttention;
rotary position embeddings ("rope") as LLaMA writes them, each pair of a
head's features a complex number multiplied by torch.polar(1, angle);
the sinusoidal positional encoding ("positional") as the Annotated
Transformer computes it (div_term through exp and log), added to X; the
tiled softmax ("tile") block by block with the running maximum, sum and
weighted sum, its output against the untiled one as well.

Rows whose keys are all blocked under a -inf fill are NaN in torch; attnviz
defines them as zeros. Those rows are compared as zeros and counted.
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys

import torch

ABS_TOL, REL_TOL = 1e-5, 1e-4
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def tensor(data):
    return torch.tensor([[float(v) for v in row] for row in data], dtype=torch.float32)


def mask_matrix(lesson, n_q, n_k):
    """The lesson's mask as an n_q × n_k 0/1 tensor (1 = may attend)."""
    m = lesson.get("mask", "none")
    if m == "none":
        return None
    if m == "causal":
        return torch.tril(torch.ones(n_q, n_k))
    if isinstance(m, dict):
        pad = torch.tensor(m["padding"], dtype=torch.float32).expand(n_q, n_k).clone() if "padding" in m \
            else torch.ones(n_q, n_k)
        if "window" not in m:
            return pad
        # a sliding window: i − w < j ≤ i (causal), or |i − j| < w, as the diagonals of torch.tril/triu
        w, ones = m["window"], torch.ones(n_q, n_k)
        band = torch.tril(ones) * torch.triu(ones, diagonal=1 - w) if m.get("causal", True) \
            else torch.tril(ones, diagonal=w - 1) * torch.triu(ones, diagonal=1 - w)
        return band * pad
    return torch.tensor(m, dtype=torch.float32)


def sinusoidal(n, d):
    """PositionalEncoding of the Annotated Transformer: sin in the even columns, cos in the odd ones."""
    pe = torch.zeros(n, d, dtype=torch.float64)
    position = torch.arange(0, n, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[:d // 2])
    return pe.to(torch.float32)


def rope_angles(n, d, base):
    """RoPE's angle of position p and pair i, p·base^(−2i/d), in float64, kept as float32 as attnviz does."""
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    return (torch.arange(n, dtype=torch.float64)[:, None] * theta[None, :]).to(torch.float32)


def rope_turn(x, angles):
    """x (..., n, d) with the pair (2i, 2i+1) of row p as a complex number times e^(i·angles[p][i])."""
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], -1, 2).contiguous())
    a = angles.double()
    return torch.view_as_real(z * torch.polar(torch.ones_like(a), a)).reshape(x.shape).to(torch.float32)


def fill_value(lesson):
    f = lesson.get("mask_fill", "-inf")
    return float("-inf") if f == "-inf" else float(f)


def reference_dot(trace, lesson):
    """Every computed step of dot attention, by name, in float32 torch."""
    cfg = trace["config"]
    inp = {s["name"]: tensor(s["data"]) for s in trace["steps"] if s["kind"] in ("input", "weight", "bias")}
    H, dk, dv, nq, nk = cfg["heads"], cfg["d_k"], cfg["d_v"], cfg["n_q"], cfg["n_k"]
    X = inp["X"]
    ref = {}
    if cfg.get("positional") == "sinusoidal":  # the positions added to X before the projections
        ref["PE"] = pe = sinusoidal(nq, X.shape[1])
        X = ref["X_PE"] = X + pe
    src = inp.get("Y", X)
    Q = X @ inp["W_Q"] + (inp["b_Q"][0] if "b_Q" in inp else 0)
    K = src @ inp["W_K"] + (inp["b_K"][0] if "b_K" in inp else 0)
    V = src @ inp["W_V"] + (inp["b_V"][0] if "b_V" in inp else 0)
    ref["Q"], ref["K"], ref["V"] = Q, K, V
    # split_heads: view(seq, heads, d).transpose(0, 1), as seed 000; grouped-query attention's
    # G K/V heads repeated for the heads / G query heads of each group (repeat_interleave)
    G = cfg.get("kv_heads", H)
    Qh = Q.view(nq, H, dk).transpose(0, 1)
    Kg = K.view(nk, G, dk).transpose(0, 1)
    Vg = V.view(nk, G, dv).transpose(0, 1)
    Qs, Ks = Qh, Kg
    if "rope" in cfg:  # each head's queries and keys turned by their positions' angles
        ref["angles"] = angles = rope_angles(nq, dk, float(cfg["rope"]["base"]))
        Qh, Kg = rope_turn(Qh, angles), rope_turn(Kg, angles)
    Kh = Kg.repeat_interleave(H // G, dim=0)
    Vh = Vg.repeat_interleave(H // G, dim=0)
    scores = torch.matmul(Qh, Kh.transpose(-2, -1))
    divisor = torch.tensor(float(cfg["scale"]), dtype=torch.float32)
    mask = mask_matrix(lesson, nq, nk)
    if mask is not None and lesson.get("mask_order") == "mask_then_scale":
        # seed 003: energy.masked_fill(mask == 0, -1e20), then / sqrt(embed_size)
        masked = scores.masked_fill(mask == 0, fill_value(lesson))
        scaled = masked / divisor
        pre = scaled
    else:
        scaled = scores / divisor
        pre = scaled
        if mask is not None:
            pre = masked = scaled.masked_fill(mask == 0, fill_value(lesson))
    weights = torch.softmax(pre, dim=-1)
    nan_rows = int(torch.isnan(weights).any(dim=-1).sum())
    weights = torch.nan_to_num(weights, nan=0.0)  # attnviz: a fully blocked row is all zero
    out = torch.matmul(weights, Vh)
    if "tile" in cfg:
        for h in range(H):
            reference_tiles(h + 1, pre[h], Vh[h], cfg["tile"], ref)
            if not torch.allclose(ref[f"tiled_{h + 1}"], out[h], rtol=REL_TOL, atol=ABS_TOL):
                raise SystemExit("the tiled softmax differs from the untiled one in torch itself")
    for h in range(H):
        n = h + 1
        ref[f"Q_{n}"] = Qs[h]
        if h < G:
            ref[f"K_{n}"], ref[f"V_{n}"] = Ks[h], Vg[h]
        if "rope" in cfg:
            ref[f"Q_rot_{n}"] = Qh[h]
            if h < G:
                ref[f"K_rot_{n}"] = Kg[h]
        ref[f"scores_{n}"], ref[f"scaled_{n}"] = scores[h], scaled[h]
        if mask is not None:
            ref[f"masked_{n}"] = masked[h]
        ref[f"weights_{n}"], ref[f"head_{n}"] = weights[h], out[h]
    concat = out.transpose(0, 1).contiguous().view(nq, H * dv)  # combine_heads
    ref["concat"] = concat
    if "W_O" in inp:
        ref["output"] = concat @ inp["W_O"] + (inp["b_O"][0] if "b_O" in inp else 0)
    if cfg.get("decode") == "incremental":
        reference_decode(cfg, inp, X, divisor, ref)
    return ref, nan_rows, inp


def reference_tiles(n, s, V, B, ref):
    """FlashAttention's tiled softmax of head n over logits s (n_q, n_k), B keys at a time: the running
    maximum m, the rescale factor e^(m_old − m_new) (0 before any key), the running sum l and weighted sum
    acc, then acc / l (0 where every key is blocked)."""
    inf = float("inf")
    m = torch.full((s.shape[0], 1), -inf)
    l, acc = torch.zeros(s.shape[0], 1), torch.zeros(s.shape[0], V.shape[1])
    for b, j0 in enumerate(range(0, s.shape[1], B)):
        at = f"_{n}@{b + 1}"
        blk = ref["block" + at] = s[:, j0:j0 + B]
        m_new = ref["m" + at] = torch.maximum(m, blk.max(dim=1, keepdim=True).values)
        r = ref["rescale" + at] = torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new))
        p = torch.where(m_new == -inf, torch.zeros_like(blk), torch.exp(blk - m_new))
        l = ref["l" + at] = r * l + p.sum(dim=1, keepdim=True)
        acc = ref["acc" + at] = r * acc + p @ V[j0:j0 + B]
        m = m_new
    ref[f"tiled_{n}"] = torch.where(l > 0, acc / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(acc))


def reference_decode(cfg, inp, X, divisor, ref):
    """Incremental decoding: for each token t its rows ("Q@t"), each head's columns, the K/V
    caches grown by one row, one row of attention per head; then the rows stacked (decoded),
    which must equal the whole forward's output."""
    H, dk, dv = cfg["heads"], cfg["d_k"], cfg["d_v"]
    G = cfg.get("kv_heads", H)

    def proj(x, m):
        return x @ inp["W_" + m] + (inp["b_" + m][0] if "b_" + m in inp else 0)

    caches = {}
    rows = []
    angles = ref.get("angles")
    for s in range(X.shape[0]):
        at = f"@{s + 1}"
        x = X[s:s + 1]
        q, k, v = ref[f"Q{at}"], ref[f"K{at}"], ref[f"V{at}"] = proj(x, "Q"), proj(x, "K"), proj(x, "V")
        heads = []
        for h in range(H):
            n = h + 1
            qh = ref[f"Q_{n}{at}"] = q[:, h * dk:(h + 1) * dk]
            g = h * G // H  # its K/V head, whose row and caches the group's first head adds
            m = g + 1
            if h == 0 or (h - 1) * G // H != g:
                kh = ref[f"K_{m}{at}"] = k[:, g * dk:(g + 1) * dk]
                vh = ref[f"V_{m}{at}"] = v[:, g * dv:(g + 1) * dv]
                if angles is not None:  # the key turned by its position; the cache keeps it turned
                    kh = ref[f"K_rot_{m}{at}"] = rope_turn(kh, angles[s:s + 1])
                caches[("K", m)] = kh if s == 0 else torch.cat((caches[("K", m)], kh))
                caches[("V", m)] = vh if s == 0 else torch.cat((caches[("V", m)], vh))
            K, V = caches[("K", m)], caches[("V", m)]
            ref[f"K_cache_{m}{at}"], ref[f"V_cache_{m}{at}"] = K, V
            if angles is not None:
                qh = ref[f"Q_rot_{n}{at}"] = rope_turn(qh, angles[s:s + 1])
            sc = ref[f"scores_{n}{at}"] = qh @ K.T
            a = ref[f"scaled_{n}{at}"] = sc / divisor
            w = ref[f"weights_{n}{at}"] = torch.softmax(a, dim=-1)
            heads.append(w @ V)
            ref[f"head_{n}{at}"] = heads[-1]
        row = ref[f"concat{at}"] = torch.cat(heads, dim=1)
        if "W_O" in inp:
            row = ref[f"output{at}"] = row @ inp["W_O"] + (inp["b_O"][0] if "b_O" in inp else 0)
        rows.append(row)
    ref["decoded"] = torch.cat(rows)
    # the check the step stands for: the rows are the whole forward's
    last = ref["output"] if "W_O" in inp else ref["concat"]
    if not torch.allclose(ref["decoded"], last, rtol=REL_TOL, atol=ABS_TOL):
        raise SystemExit("decoded rows differ from the whole forward in torch itself")


def reference_mha(trace, lesson, inp):
    """torch.nn.MultiheadAttention where its layout applies, else None."""
    cfg = trace["config"]
    d, H = cfg["d_model"], cfg["heads"]
    if ("W_O" not in inp or cfg["d_k"] * H != d or cfg["d_v"] != cfg["d_k"]
            or lesson.get("scale", "sqrt_dk") != "sqrt_dk" or "rope" in cfg):
        return None
    mha = torch.nn.MultiheadAttention(d, H, bias=True, batch_first=True)
    zeros = lambda n: torch.zeros(n)
    # grouped-query attention: each K/V head's columns repeated for the query heads of its group
    G, dk = cfg.get("kv_heads", H), cfg["d_k"]

    def repeated(m):
        x = inp[m]
        return x.reshape(x.shape[0], G, dk).repeat_interleave(H // G, dim=1).reshape(x.shape[0], H * dk)

    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([inp["W_Q"].T, repeated("W_K").T, repeated("W_V").T]))
        mha.in_proj_bias.copy_(torch.cat([inp["b_Q"][0] if "b_Q" in inp else zeros(d),
                                          repeated("b_K")[0] if "b_K" in inp else zeros(d),
                                          repeated("b_V")[0] if "b_V" in inp else zeros(d)]))
        mha.out_proj.weight.copy_(inp["W_O"].T)
        mha.out_proj.bias.copy_(inp["b_O"][0] if "b_O" in inp else zeros(d))
    X = inp["X"] + sinusoidal(cfg["n_q"], d) if cfg.get("positional") == "sinusoidal" else inp["X"]
    src = inp.get("Y", X)[None]
    X = X[None]
    kw = {}
    m = lesson.get("mask", "none")
    nq, nk = cfg["n_q"], cfg["n_k"]
    if isinstance(m, dict) and "window" not in m:
        kw["key_padding_mask"] = torch.tensor(m["padding"])[None] == 0
    elif m != "none":
        kw["attn_mask"] = mask_matrix(lesson, nq, nk) == 0
    if m != "none" and fill_value(lesson) != float("-inf"):
        return None  # MultiheadAttention always fills with -inf
    with torch.no_grad():
        out, w = mha(X, src, src, need_weights=True, average_attn_weights=False, **kw)
    ref = {"output": out[0]}
    for h in range(H):
        ref[f"weights_{h + 1}"] = torch.nan_to_num(w[0, h], nan=0.0)
    return ref


def reference_additive(trace, lesson):
    cfg = trace["config"]
    inp = {s["name"]: tensor(s["data"]) for s in trace["steps"] if s["kind"] in ("input", "weight", "bias")}
    X = inp["X"]
    Y = inp.get("Y", X)
    nq, nk = X.shape[0], Y.shape[0]
    # seed 004: hidden_dec repeated over the source, cat((dec, enc), dim=2), W, tanh
    pairs = torch.cat([X[:, None, :].expand(nq, nk, X.shape[1]), Y[None].expand(nq, nk, Y.shape[1])], dim=2)
    hidden = torch.tanh(pairs @ inp["W_a"] + (inp["b_a"][0] if "b_a" in inp else 0))
    scores = hidden @ inp["v_a"][:, 0]
    mask = mask_matrix(lesson, nq, nk)
    pre = scores if mask is None else scores.masked_fill(mask == 0, fill_value(lesson))
    weights = torch.softmax(pre, dim=-1)
    nan_rows = int(torch.isnan(weights).any(dim=-1).sum())
    weights = torch.nan_to_num(weights, nan=0.0)
    ref = {"hidden": hidden.reshape(nq * nk, -1), "scores": scores, "weights": weights, "context": weights @ Y}
    if mask is not None:
        ref["masked"] = pre
    return ref, nan_rows


def compare(trace, ref, label):
    """Largest |diff| over the steps ref names, and how many cells are out of tolerance."""
    got = {s["name"]: s for s in trace["steps"]}
    worst, worst_at, bad, cells = 0.0, "", 0, 0
    for name, r in ref.items():
        if name not in got:
            print(f"  {label}: the trace has no step {name}")
            bad += 1
            continue
        g = got[name]["data"]
        r = r.reshape(len(g), -1).tolist()
        for i, row in enumerate(g):
            for j, v in enumerate(row):
                v = float(v)  # "-inf" strings become -inf
                rv = r[i][j]
                cells += 1
                if math.isinf(v) or math.isinf(rv):
                    if v != rv:
                        bad += 1
                        print(f"  {label} {name}[{i}][{j}]: attnviz {v}, torch {rv}")
                    continue
                d = abs(v - rv)
                if d > worst:
                    worst, worst_at = d, f"{name}[{i}][{j}]"
                if d > ABS_TOL + REL_TOL * abs(rv):
                    bad += 1
                    if bad <= 5:
                        print(f"  {label} {name}[{i}][{j}]: attnviz {v:.9g}, torch {rv:.9g}")
    return worst, worst_at, bad, cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnviz", default=None, help="the attnviz program (default: build*/attnviz, newest)")
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_args()
    exe = args.attnviz
    if not exe:
        found = sorted(glob.glob(os.path.join(ROOT, "build*", "attnviz")), key=os.path.getmtime)
        if not found:
            sys.exit("no attnviz found under build*/; build first or pass --attnviz")
        exe = found[-1]
    files = args.lessons or sorted(glob.glob(os.path.join(ROOT, "lessons", "*.json")))
    overall, failed = 0.0, 0
    print(f"attnviz: {exe}")
    for path in files:
        with open(path, encoding="utf-8") as f:
            lesson = json.load(f)
        out = subprocess.run([exe, "trace", path], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{path}: attnviz trace failed: {out.stderr.strip()}")
            failed += 1
            continue
        trace = json.loads(out.stdout)
        if trace["config"]["attention"] == "additive":
            ref, nan_rows = reference_additive(trace, lesson)
            mha = None
        else:
            ref, nan_rows, inp = reference_dot(trace, lesson)
            mha = reference_mha(trace, lesson, inp)
        worst, at, bad, cells = compare(trace, ref, "torch")
        line = f"{lesson['id']:30s} max |diff| {worst:.3g} at {at or '-'} over {cells} cells"
        if mha is not None:
            w2, at2, bad2, cells2 = compare(trace, mha, "nn.MultiheadAttention")
            line += f"; nn.MultiheadAttention {w2:.3g} over {cells2} cells"
            worst, bad = max(worst, w2), bad + bad2
        if nan_rows:
            line += f"; {nan_rows} fully blocked row(s): NaN in torch, zeros in attnviz"
        print(line + ("" if not bad else f"  FAILED ({bad} cells out of tolerance)"))
        overall = max(overall, worst)
        failed += bad > 0
    print(f"\n{len(files)} lessons, overall max |diff| {overall:.3g}; "
          + ("all within 1e-5 + 1e-4·|ref|" if not failed else f"{failed} lesson(s) FAILED"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
