#!/usr/bin/python3
"""make_fixtures.py: PyTorch reference fixtures for the attnviz engine tests.

Regenerate (from the repository root; needs Debian's python3-torch, which the
`python3` first on PATH may lack, hence the explicit interpreter):

    /usr/bin/python3 tests/make_fixtures.py            # writes tests/fixtures/*.bin + MANIFEST, each changed file
    /usr/bin/python3 tests/make_fixtures.py --check    # recompute, cross-check, compare with the committed files
    /usr/bin/python3 tests/make_fixtures.py --only NAME  # write only that configuration's file (and MANIFEST)

then rebuild and run `ctest -R test_engine`. The files are committed so the
C tests need no Python. A step whose numbers agree with the committed file's
within rounding keeps the committed bytes, and a file left with nothing
changed is not written: another torch build, or a new step kind, rewrites only
what changed (the C test compares steps by name and skips those a fixture
lacks). Inputs come from torch.Generator seeded per
configuration, so the same script writes the same bytes on every machine with
the same torch build (the --check mode tells you if it does not).

What it computes. For every configuration below, every intermediate of the
forward pass, in float32 with plain torch ops, in the seeds' convention:
row vectors, Q = X·W_Q (+ b_Q) with W_Q of shape d_model × heads·d_k, head h
(1-based) takes columns [(h-1)·d_k, h·d_k), scores = Q_h·K_hᵀ, scaled =
scores / divisor, masked = scaled.masked_fill(mask == 0, fill) (or, in seed
003's order, masked = scores.masked_fill(mask == 0, fill) and scaled =
masked / divisor), weights = softmax(dim=-1), head_h = weights·V_h, concat, output = concat·W_O + b_O.
Additive (seed 004): hidden[(i·n_k + j)] = tanh([x_i ; y_j]·W_a + b_a),
scores = hidden·v_a, softmax over j, context = weights·Y.

How it checks itself, failing loudly (exit 1) on any disagreement:
  * against torch.nn.MultiheadAttention (need_weights=True,
    average_attn_weights=False, bool masks True = blocked) wherever its layout
    applies: d_k = d_v = d_model/heads and scale √d_k. Missing biases are
    zeros there; a missing W_O is the identity. Rows whose keys are all
    blocked are compared only for being NaN in both;
  * additive configurations against a direct transcription of seed 004's
    `Attention` module (its cat(hidden_dec, last_layer_enc), nn.Linear,
    torch.rand V, bmm, softmax);
  * every configuration against the same computation in float64, which must
    agree within half the C test's tolerance (1e-5 + 1e-4·|ref|): that proves
    the fixture is well-conditioned, so a correct float32 engine must pass.

The options of today's models, each checked against an independent
computation besides float64:
  * incremental decoding ("decode": "incremental"): after the whole causal
    forward, token by token, each token's rows of Q, K, V, per head its
    columns, the K/V caches with its row appended, one row of scores,
    scaled, weights and output, its rows of concat and output (names "@t"),
    then `decoded`, the rows stacked; checked against the whole causal
    forward's output.
  * grouped-query attention ("kv_heads": G): W_K and W_V have G heads'
    columns; query head h (0-based) reads K/V head h·G/heads, split as
    K_g, V_g (1-based g) with the first query head of its group; checked
    against ordinary attention on W_K, b_K, W_V, b_V with each K/V head's
    columns repeated (repeat_interleave), and nn.MultiheadAttention on those
    where its layout applies.
  * rotary position embeddings ("rope": {"base": b}): the angles p·b^(−2i/d_k)
    (`angles`), then each head's Q_h and each K/V head's K_g with the pair
    (2i, 2i+1) of row p rotated by angle [p][i] (Q_rot_h, K_rot_g), which the
    scores read; decoding rotates each token's rows (Q_rot_h@t, K_rot_g@t)
    and caches the rotated keys. Checked against the rotation written as
    LLaMA writes it, complex numbers (torch.view_as_complex times
    torch.polar(1, angle)), and for the property RoPE exists for: the score
    of a query at position m and a key at n depends only on n − m.
  * the sinusoidal positional encoding ("positional": "sinusoidal"):
    PE[p][2i] = sin(p / 10000^(2i/d_model)), PE[p][2i+1] = cos(...) (`PE`),
    and X + PE (`X_PE`), which Q, K and V are projected from; checked
    against the Annotated Transformer's PositionalEncoding (div_term =
    exp(arange(0, d, 2)·−ln(10000)/d)), and, decoding, each token's rows
    from its row of X + PE.
  * the tiled softmax ("tile": B, FlashAttention's): after each head's
    weighted sum, for each block b of B keys its columns of the softmax's
    input (`block_h@b`), the running maximum m (`m_h@b`), the rescale factor
    e^(m_old − m_new) (`rescale_h@b`, 0 at the first block), the running sum
    l = rescale·l_old + Σ e^(s − m) (`l_h@b`) and weighted sum acc =
    rescale·acc_old + Σ e^(s − m)·v (`acc_h@b`), then tiled_h = acc / l (0
    where l = 0: every key blocked); checked against the head's untiled
    output, which it equals.

A fully blocked row with the fill -inf is NaN in torch (softmax of all -inf).
The fixture keeps torch's NaN; the C test asserts that the engine gives exact
zeros there (and b_O in the output) and flags the row.

File format (little-endian), one file per configuration:

    char[8]  magic "ATVZFIX1"
    u32      version (1; 2 for a configuration that needs mask_order; 3 for one with options)
    str      name                       str = u32 length + bytes, no NUL
    i32      attention                  0 dot, 1 additive
    i32      cross                      0 self, 1 cross
    i32 × 9  n_q n_k d_model heads d_k d_v d_x d_y d_a   (unused ones 0)
    i32      has_W_O                    0 / 1
    i32      scale_kind                 0 sqrt_dk, 1 sqrt_dmodel, 2 none, 3 value
    f32      scale_value                the given divisor for kind 3, else 0
    f32      divisor                    what the scores were divided by
    i32      mask_kind                  0 none, 1 causal, 2 padding, 3 matrix
    f32      mask_fill                  -inf, -1e9, -1e20
    i32      mask_order                 version 2 and 3: 0 scale then mask, 1 mask then scale
    u32      n_options                  version 3 only: the options of OPTIONS below, then
             (str key; f64 value) × n_options
    u32      mask_len; u8[mask_len]     0, n_k (padding) or n_q·n_k (matrix); 1 attend, 0 blocked
    u32      n_inputs;  tensor × n_inputs   X, Y, W_*, b_*, v_a: what the engine is given
    u32      n_steps;   tensor × n_steps    every computed step, in the engine's order
    char[4]  "END!"

    tensor:  str name; str kind (the trace's kind name); i32 head (1-based, 0: none);
             i32 rows; i32 cols; u32 encoding;
             encoding 0: f32[rows·cols]
             encoding 1: i32 e; i8[rows·cols], value = q · 2^-e (exact in float32;
                         keeps the d_model = 512 weights under 1 MB)
"""
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

MAGIC = b"ATVZFIX1"
VERSION = 1
ABS_TOL, REL_TOL = 1e-5, 1e-4
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")

SCALE_KINDS = {"sqrt_dk": 0, "sqrt_dmodel": 1, "none": 2, "value": 3}
# a configuration's options and their values in the file (version 3): "decode" 1 = incremental,
# "kv_heads" G: grouped-query attention's K/V heads
# "rope_base" b: rotary position embeddings with base b
# "positional" 1 = sinusoidal
# "tile" B: the tiled softmax's keys per block
OPTIONS = {"decode": lambda v: {"incremental": 1.0}[v], "kv_heads": float, "rope_base": float,
           "positional": lambda v: {"sinusoidal": 1.0}[v], "tile": float}
MASK_KINDS = {"none": 0, "causal": 1, "padding": 2, "matrix": 3}

torch.set_num_threads(1)


class Fail(Exception):
    pass


# ---- inputs -----------------------------------------------------------------

def uniform(g, rows, cols, bound):
    """nn.Linear's initialiser: U(-bound, bound), bound = 1/sqrt(fan_in)."""
    return (torch.rand(rows, cols, generator=g, dtype=torch.float32) * 2 - 1) * bound


def int8_weight(g, rows, cols, e):
    """Integers in [-127, 127] times 2^-e: exact float32 values, stored as int8."""
    q = torch.randint(-127, 128, (rows, cols), generator=g, dtype=torch.int32)
    return q.to(torch.float32) * (2.0 ** -e)


def make_inputs(c):
    """Seeded inputs for config c; returns {name: tensor} and {name: int8 exponent}."""
    g = torch.Generator().manual_seed(c["seed"])
    t, enc = {}, {}
    if c["attention"] == "additive":
        dx, dy, da = c["d_x"], c["d_y"] if c["cross"] else c["d_x"], c["d_a"]
        t["X"] = torch.randn(c["n_q"], dx, generator=g) * c.get("x_scale", 1.0)
        if c["cross"]:
            t["Y"] = torch.randn(c["n_k"], dy, generator=g)
        t["W_a"] = uniform(g, dx + dy, da, 1 / math.sqrt(dx + dy))
        if c.get("b_a"):
            t["b_a"] = uniform(g, 1, da, 1 / math.sqrt(dx + dy))
        # seed 004: self.V = nn.Parameter(torch.rand(n_hidden_dec))
        t["v_a"] = torch.rand(da, 1, generator=g)
        return t, enc
    dm, H, dk, dv = c["d_model"], c["heads"], c["d_k"], c["d_v"]
    t["X"] = torch.randn(c["n_q"], dm, generator=g) * c.get("x_scale", 1.0)
    if c["cross"]:
        t["Y"] = torch.randn(c["n_k"], dm, generator=g) * c.get("x_scale", 1.0)
    e = c.get("int8_exp")

    def weight(name, rows, cols):
        if e is not None:
            t[name] = int8_weight(g, rows, cols, e)
            enc[name] = e
        else:
            t[name] = uniform(g, rows, cols, 1 / math.sqrt(rows))

    bias = c["bias"]
    weight("W_Q", dm, H * dk)
    if "Q" in bias:
        t["b_Q"] = uniform(g, 1, H * dk, 1 / math.sqrt(dm))
    G = c.get("kv_heads", H)  # grouped-query attention: G K/V heads
    weight("W_K", dm, G * dk)
    if "K" in bias:
        t["b_K"] = uniform(g, 1, G * dk, 1 / math.sqrt(dm))
    weight("W_V", dm, G * dv)
    if "V" in bias:
        t["b_V"] = uniform(g, 1, G * dv, 1 / math.sqrt(dm))
    if c["W_O"]:
        weight("W_O", H * dv, dm)
        if "O" in bias:
            t["b_O"] = uniform(g, 1, dm, 1 / math.sqrt(H * dv))
    return t, enc


def mask_values(c):
    """The 0/1 mask as the engine gets it (uint8 list), and the n_q × n_k allow matrix."""
    nq, nk, kind = c["n_q"], c["n_k"], c["mask"]
    if kind == "none":
        return [], torch.ones(nq, nk, dtype=torch.bool)
    if kind == "causal":
        return [], torch.ones(nq, nk, dtype=torch.bool).tril()
    if kind == "padding":
        m = c["mask_values"]
        assert len(m) == nk
        return list(m), torch.tensor(m, dtype=torch.bool).expand(nq, nk).clone()
    m = c["mask_values"]
    assert len(m) == nq and all(len(r) == nk for r in m)
    return [v for r in m for v in r], torch.tensor(m, dtype=torch.bool)


def divisor_of(c):
    if c["attention"] == "additive":
        return 1.0
    k = c["scale"]
    if k == "sqrt_dk":
        return math.sqrt(c["d_k"])
    if k == "sqrt_dmodel":
        return math.sqrt(c["d_model"])
    if k == "none":
        return 1.0
    return float(c["scale_value"])


# ---- the reference: plain torch ops in the seeds' convention -----------------

def rope_angles(n, d, base):
    """RoPE's angle of position p (row) and pair i (column): p·base^(−2i/d), in float64, then float32 as the
    engine records it."""
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    return (torch.arange(n, dtype=torch.float64)[:, None] * theta[None, :]).to(torch.float32)


def sinusoidal(n, d):
    """Vaswani et al.'s positional encoding, (n, d): sin(p / 10000^(2i/d)) in column 2i, cos in 2i + 1, in
    float64, then float32 as the engine records it."""
    p = torch.arange(n, dtype=torch.float64)[:, None]
    col = torch.arange(d, dtype=torch.float64)[None, :]
    a = p / 10000.0 ** ((col - col % 2) / d)
    return torch.where(col % 2 == 0, torch.sin(a), torch.cos(a)).to(torch.float32)


def rope_rotate(x, angles):
    """Each row's pairs (x[2i], x[2i+1]) rotated by the row's angles[i], in x's dtype."""
    a = angles.to(x.dtype)
    c, s = torch.cos(a), torch.sin(a)
    even, odd = x[:, 0::2], x[:, 1::2]
    return torch.stack((even * c - odd * s, even * s + odd * c), dim=2).reshape(x.shape)


def reference(c, t, allow):
    """Every computed step as a list of (name, kind, head, tensor), in order.
    Works in whatever dtype the inputs have (float32, or float64 for the check)."""
    steps = []
    fill = c["fill"]
    has_mask = c["mask"] != "none"
    blocked = ~allow

    def add(name, kind, head, x):
        steps.append((name, kind, head, x))
        return x

    if c["attention"] == "additive":
        X = t["X"]
        Y = t["Y"] if c["cross"] else X
        nq, nk = X.shape[0], Y.shape[0]
        pairs = torch.cat((X[:, None, :].expand(nq, nk, X.shape[1]),
                           Y[None, :, :].expand(nq, nk, Y.shape[1])), dim=2)   # (n_q, n_k, d_x + d_y)
        pre = pairs.reshape(nq * nk, -1) @ t["W_a"]
        if "b_a" in t:
            pre = pre + t["b_a"]
        hidden = add("hidden", "additive_hidden", 0, torch.tanh(pre))         # (n_q·n_k, d_a)
        s = add("scores", "scores", 0, (hidden @ t["v_a"]).reshape(nq, nk))
        if has_mask:
            s = add("masked", "masked", 0, s.masked_fill(blocked, fill))
        w = add("weights", "softmax", 0, torch.softmax(s, dim=-1))
        add("context", "weighted_sum", 0, w @ Y)
        return steps

    H, dk, dv = c["heads"], c["d_k"], c["d_v"]
    X = t["X"]
    if c.get("positional") == "sinusoidal":  # the positions added to X, which Q, K and V are made from
        pe = add("PE", "positional_encoding", 0, sinusoidal(X.shape[0], X.shape[1]).to(X.dtype))
        X = add("X_PE", "add_positional", 0, X + pe)
    src = t["Y"] if c["cross"] else X
    Q = X @ t["W_Q"] + t["b_Q"] if "b_Q" in t else X @ t["W_Q"]
    K = src @ t["W_K"] + t["b_K"] if "b_K" in t else src @ t["W_K"]
    V = src @ t["W_V"] + t["b_V"] if "b_V" in t else src @ t["W_V"]
    add("Q", "projection", 0, Q)
    add("K", "projection", 0, K)
    add("V", "projection", 0, V)
    rope = "rope_base" in c
    if rope:
        ang = add("angles", "rope_angles", 0, rope_angles(X.shape[0], dk, c["rope_base"]))
    div = divisor_of(c)
    G = c.get("kv_heads", H)
    heads = []
    for h in range(H):
        n = h + 1
        Qh = add(f"Q_{n}", "split", n, Q[:, h * dk:(h + 1) * dk])
        g = h * G // H  # the K/V head query head h reads, split with the first head of its group
        first = h == 0 or (h - 1) * G // H != g
        if first:
            Kh = add(f"K_{g + 1}", "split", g + 1, K[:, g * dk:(g + 1) * dk])
            Vh = add(f"V_{g + 1}", "split", g + 1, V[:, g * dv:(g + 1) * dv])
        if rope:  # queries and keys turned by their positions; the scores read the turned ones
            Qh = add(f"Q_rot_{n}", "rope", n, rope_rotate(Qh, ang))
            if first:
                Kr = add(f"K_rot_{g + 1}", "rope", g + 1, rope_rotate(Kh, ang))
        s = add(f"scores_{n}", "scores", n, Qh @ (Kr if rope else Kh).T)
        if has_mask and c["mask_order"] == "mask_then_scale":
            # seed 003: energy.masked_fill(mask == 0, -1e20), then / sqrt(embed_size)
            s = add(f"masked_{n}", "masked", n, s.masked_fill(blocked, fill))
            s = add(f"scaled_{n}", "scaled", n, s / div)
        else:
            s = add(f"scaled_{n}", "scaled", n, s / div)
            if has_mask:
                s = add(f"masked_{n}", "masked", n, s.masked_fill(blocked, fill))
        w = add(f"weights_{n}", "softmax", n, torch.softmax(s, dim=-1))
        heads.append(add(f"head_{n}", "weighted_sum", n, w @ Vh))
        if "tile" in c:
            tiled(n, s, Vh, c["tile"], add)
    cat = add("concat", "concat", 0, torch.cat(heads, dim=1))
    if c["W_O"]:
        out = cat @ t["W_O"] + t["b_O"] if "b_O" in t else cat @ t["W_O"]
        add("output", "output", 0, out)
    if c.get("decode") == "incremental":
        decode(c, t, X, div, add)
    return steps


def tiled(n, s, V, B, add):
    """FlashAttention's tiled softmax of head n: the logits s (n_q, n_k) and values V (n_k, d_v), B keys at a
    time, with the running maximum m, sum l and weighted sum acc, each block's rescaled by e^(m_old − m_new)."""
    inf = float("inf")
    m = torch.full((s.shape[0], 1), -inf, dtype=s.dtype)
    l = torch.zeros(s.shape[0], 1, dtype=s.dtype)
    acc = torch.zeros(s.shape[0], V.shape[1], dtype=s.dtype)
    for b, j0 in enumerate(range(0, s.shape[1], B)):
        at = f"_{n}@{b + 1}"
        blk = add("block" + at, "tile_scores", n, s[:, j0:j0 + B])
        m_new = add("m" + at, "tile_max", n, torch.maximum(m, blk.max(dim=1, keepdim=True).values))
        r = add("rescale" + at, "tile_rescale", n,
                torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new)))  # nothing summed before: 0
        p = torch.where(m_new == -inf, torch.zeros_like(blk), torch.exp(blk - m_new))  # every key blocked so far: 0
        l = add("l" + at, "tile_sum", n, r * l + p.sum(dim=1, keepdim=True))
        acc = add("acc" + at, "tile_accumulate", n, r * acc + p @ V[j0:j0 + B])
        m = m_new
    add(f"tiled_{n}", "tile_output", n, torch.where(l > 0, acc / torch.where(l > 0, l, torch.ones_like(l)),
                                                      torch.zeros_like(acc)))


def decode(c, t, X, div, add):
    """Incremental decoding: the steps of each token t ("@t"), then decoded."""
    H, dk, dv = c["heads"], c["d_k"], c["d_v"]
    G = c.get("kv_heads", H)

    def row(x, name):
        return x @ t["W_" + name] + t["b_" + name] if "b_" + name in t else x @ t["W_" + name]

    rope = "rope_base" in c
    ang = rope_angles(X.shape[0], dk, c["rope_base"]) if rope else None
    K_cache, V_cache, last = [None] * G, [None] * G, []
    for s in range(X.shape[0]):
        at = f"@{s + 1}"
        x = X[s:s + 1]
        q = add(f"Q{at}", "projection", 0, row(x, "Q"))
        k = add(f"K{at}", "projection", 0, row(x, "K"))
        v = add(f"V{at}", "projection", 0, row(x, "V"))
        heads = []
        for h in range(H):
            n = h + 1
            qh = add(f"Q_{n}{at}", "split", n, q[:, h * dk:(h + 1) * dk])
            g = h * G // H
            if h == 0 or (h - 1) * G // H != g:  # K/V head g's row and caches, with its group's first head
                m = g + 1
                kh = add(f"K_{m}{at}", "split", m, k[:, g * dk:(g + 1) * dk])
                vh = add(f"V_{m}{at}", "split", m, v[:, g * dv:(g + 1) * dv])
                if rope:  # the key turned by its position once; the cache keeps it turned
                    kh = add(f"K_rot_{m}{at}", "rope", m, rope_rotate(kh, ang[s:s + 1]))
                K_cache[g] = add(f"K_cache_{m}{at}", "kv_append", m, kh if s == 0 else torch.cat((K_cache[g], kh)))
                V_cache[g] = add(f"V_cache_{m}{at}", "kv_append", m, vh if s == 0 else torch.cat((V_cache[g], vh)))
            if rope:
                qh = add(f"Q_rot_{n}{at}", "rope", n, rope_rotate(qh, ang[s:s + 1]))
            sc = add(f"scores_{n}{at}", "scores", n, qh @ K_cache[g].T)
            sc = add(f"scaled_{n}{at}", "scaled", n, sc / div)
            w = add(f"weights_{n}{at}", "softmax", n, torch.softmax(sc, dim=-1))
            heads.append(add(f"head_{n}{at}", "weighted_sum", n, w @ V_cache[g]))
        cat = add(f"concat{at}", "concat", 0, torch.cat(heads, dim=1))
        if c["W_O"]:
            cat = add(f"output{at}", "output", 0, cat @ t["W_O"] + t["b_O"] if "b_O" in t else cat @ t["W_O"])
        last.append(cat)
    add("decoded", "decode_check", 0, torch.cat(last))


# ---- independent checks -------------------------------------------------------

def close(name, got, ref, tol_scale, what):
    """Elementwise got ≈ ref within tol_scale·(1e-5 + 1e-4·|ref|); NaN must match NaN.
    Returns the worst ratio |diff| / tolerance."""
    got64, ref64 = got.double(), ref.double()
    if got64.shape != ref64.shape:
        raise Fail(f"{what}: {name} shape {tuple(got64.shape)} vs {tuple(ref64.shape)}")
    nan_g, nan_r = torch.isnan(got64), torch.isnan(ref64)
    if not torch.equal(nan_g, nan_r):
        raise Fail(f"{what}: {name} NaN positions differ")
    same_inf = torch.isinf(ref64) & (got64 == ref64)
    ok = ~nan_r & ~same_inf
    if not ok.any():
        return 0.0
    tol = (ABS_TOL + REL_TOL * ref64.abs()) * tol_scale
    ratio = ((got64 - ref64).abs() / tol)[ok]
    worst = float(ratio.max())
    if not math.isfinite(worst) or worst > 1.0:
        i = int(torch.argmax(torch.where(ok, (got64 - ref64).abs() / tol, torch.zeros_like(tol))))
        r, col = divmod(i, ref64.shape[1]) if ref64.dim() == 2 else (0, i)
        raise Fail(f"{what}: {name}[{r},{col}] = {float(got64.flatten()[i])!r}, "
                   f"reference {float(ref64.flatten()[i])!r} (worst |diff|/tol {worst:.3g})")
    return worst


def check_mha(c, t, allow, steps):
    """The same configuration through torch.nn.MultiheadAttention."""
    dm, H = c["d_model"], c["heads"]
    mha = nn.MultiheadAttention(dm, H, bias=True, batch_first=True)
    mha.eval()
    zeros = torch.zeros(1, dm)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat((t["W_Q"].T, t["W_K"].T, t["W_V"].T), dim=0))
        mha.in_proj_bias.copy_(torch.cat((t.get("b_Q", zeros), t.get("b_K", zeros),
                                          t.get("b_V", zeros)), dim=1)[0])
        mha.out_proj.weight.copy_(t["W_O"].T if c["W_O"] else torch.eye(dm))
        mha.out_proj.bias.copy_(t.get("b_O", zeros)[0])
    by = {s[0]: s[3] for s in steps}
    x = by.get("X_PE", t["X"])[None]  # with the positional encoding, what the module is given is X + PE
    y = t["Y"][None] if c["cross"] else x
    kw = {}
    if c["mask"] == "padding":
        kw["key_padding_mask"] = ~allow[0][None]              # (1, n_k), True = blocked
    elif c["mask"] != "none":
        kw["attn_mask"] = ~allow                              # (n_q, n_k), True = blocked
    with torch.no_grad():
        out, w = mha(x, y, y, need_weights=True, average_attn_weights=False, **kw)
    out, w = out[0], w[0]                                     # (n_q, d_model), (H, n_q, n_k)
    by = {s[0]: s[3] for s in steps}
    live = allow.any(dim=1)                                   # rows with at least one key
    dead = ~live
    worst = 0.0
    for h in range(H):
        worst = max(worst, close(f"weights_{h + 1}", by[f"weights_{h + 1}"][live], w[h][live], 1.0, "vs MHA"))
        if dead.any() and not torch.isnan(w[h][dead]).all():
            raise Fail(f"vs MHA: expected NaN weights in fully blocked rows of head {h + 1}")
    last = by["output"] if c["W_O"] else by["concat"]
    worst = max(worst, close("output", last[live], out[live], 1.0, "vs MHA"))
    return worst


def repeat_kv(c, t):
    """Grouped-query attention's inputs as ordinary multi-head attention's: each K/V head's block
    of columns of W_K, b_K, W_V and b_V repeated for the heads / kv_heads query heads that read it
    (torch.repeat_interleave, as grouped-query implementations expand K and V)."""
    H, G = c["heads"], c["kv_heads"]
    out = dict(t)
    for name, w in (("K", c["d_k"]), ("V", c["d_v"])):
        for m in ("W_" + name, "b_" + name):
            if m in t:
                x = t[m]
                out[m] = x.reshape(x.shape[0], G, w).repeat_interleave(H // G, dim=1).reshape(x.shape[0], H * w)
    return out


def check_gqa(c, t, allow, steps):
    """Grouped-query attention against ordinary attention on K and V repeated: every query head's
    steps, concat and output are the same computation (then MHA on the repeated weights, where its
    layout applies)."""
    plain = {k: v for k, v in c.items() if k != "kv_heads"}
    t_rep = repeat_kv(c, t)
    rep_steps = reference(plain, t_rep, allow)
    by = {s[0]: s[3] for s in rep_steps}
    H, G = c["heads"], c["kv_heads"]
    worst = 0.0
    for name, _, head, x in steps:
        base = name.split("@")[0]
        if base.startswith(("K", "V")):  # K_g, V_g and the caches are numbered by K/V head
            g = head - 1
            h = g * H // G + 1  # the first query head reading it
            name = name.replace(f"_{head}", f"_{h}", 1)
            if base in ("K", "V"):
                continue
        worst = max(worst, close(name, x, by[name], 1.0, "vs K/V repeated"))
    if (c["d_k"] == c["d_v"] == c["d_model"] // H and c["d_model"] % H == 0 and c["scale"] == "sqrt_dk"
            and "rope_base" not in c):
        worst = max(worst, check_mha(plain, t_rep, allow, steps))
    return worst


def check_rope(c, steps):
    """RoPE as LLaMA writes it: a head's features as d/2 complex numbers x[2i] + i·x[2i+1], each times
    e^(i·angle) (torch.polar); then the relative-position property: Q_rot_h[m]·K_rot[n] equals the
    score of the unrotated pair with the key turned by angle(n − m) alone (positions m, n with n − m
    in range)."""
    by = {s[0]: s[3] for s in steps}
    ang = by["angles"].double()
    worst = 0.0
    for name, kind, head, x in steps:
        if kind != "rope" or "@" in name:
            continue
        src = by[name.replace("_rot", "")].double()
        z = torch.view_as_complex(src.reshape(src.shape[0], -1, 2).contiguous())
        turned = torch.view_as_real(z * torch.polar(torch.ones_like(ang), ang)).reshape(src.shape)
        worst = max(worst, close(name, x, turned, 1.0, "vs complex rotation"))
    H, G = c["heads"], c.get("kv_heads", c["heads"])
    for h in range(1, H + 1):
        g = (h - 1) * G // H + 1
        q, k = by[f"Q_{h}"].double(), by[f"K_{g}"].double()
        n = q.shape[0]
        rel = torch.empty(n, n, dtype=torch.float64)
        for m in range(n):
            for j in range(n):  # turn only the key, by the angle of the distance j − m (negative: backwards)
                d = j - m
                a = ang[abs(d)] * (1 if d >= 0 else -1)
                kz = torch.view_as_complex(k[j].reshape(-1, 2).contiguous())
                kt = torch.view_as_real(kz * torch.polar(torch.ones_like(a), a)).reshape(-1)
                rel[m, j] = q[m] @ kt
        worst = max(worst, close(f"scores_{h}", by[f"scores_{h}"], rel, 1.0, "scores vs relative position"))
    return worst


def check_positional(c, steps):
    """The encoding as the Annotated Transformer's PositionalEncoding computes it (div_term through exp and
    log), and X + PE."""
    by = {s[0]: s[3] for s in steps}
    n, d = by["PE"].shape
    pe = torch.zeros(n, d, dtype=torch.float64)
    position = torch.arange(0, n, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[:d // 2])
    return close("PE", by["PE"], pe, 1.0, "vs the Annotated Transformer")


def check_tiled(c, steps):
    """Each head's tiled output against its untiled one (rows whose keys are all blocked under a -inf fill
    are NaN untiled and zero tiled)."""
    by = {s[0]: s[3] for s in steps}
    worst = 0.0
    for h in range(1, c["heads"] + 1):
        plain, tiled_out = by[f"head_{h}"], by[f"tiled_{h}"]
        dead = torch.isnan(plain).any(dim=1)
        if not torch.equal(tiled_out[dead], torch.zeros_like(tiled_out[dead])):
            raise Fail(f"tiled_{h}: a fully blocked row is not zero")
        worst = max(worst, close(f"tiled_{h}", tiled_out[~dead], plain[~dead], 1.0, "tiled vs untiled"))
    return worst


def check_decode(c, steps):
    """Incremental decoding: the decoded rows are the whole causal forward's output."""
    by = {s[0]: s[3] for s in steps}
    last = by["output"] if c["W_O"] else by["concat"]
    return close("decoded", by["decoded"], last, 1.0, "decoded vs the whole forward")


class SeedAttention(nn.Module):
    """Seed 004's additive Attention, transcribed (comments translated). The
    only additions are keyword arguments: bias (the seed has bias=False) and
    n_a (the seed's W outputs n_hidden_dec features)."""

    def __init__(self, n_hidden_enc, n_hidden_dec, bias=False, n_a=None):
        super().__init__()
        # encoder / decoder hidden widths
        self.h_hidden_enc = n_hidden_enc
        self.h_hidden_dec = n_hidden_dec
        n_a = n_hidden_dec if n_a is None else n_a
        # the core linear layer: in = 2 * encoder width + decoder width, out = decoder width, no bias
        self.W = nn.Linear(2 * n_hidden_enc + n_hidden_dec, n_a, bias=bias)
        # learnable V: projects the transformed features to a score, randomly initialised
        self.V = nn.Parameter(torch.rand(n_a))

    def forward(self, hidden_dec, last_layer_enc):
        # step 1: sizes
        batch_size = last_layer_enc.size(0)
        src_seq_len = last_layer_enc.size(1)
        # step 2: repeat the decoder state along the encoder sequence
        hidden_dec = hidden_dec[:, -1, :].unsqueeze(1).repeat(1, src_seq_len, 1)
        # step 3: concatenate + linear + tanh
        tanh_W_s_h = torch.tanh(self.W(torch.cat((hidden_dec, last_layer_enc), dim=2)))
        # step 4: [b, n_hidden_dec, seq_len]
        tanh_W_s_h = tanh_W_s_h.permute(0, 2, 1)
        # step 5: V as [b, 1, n_hidden_dec]
        V = self.V.repeat(batch_size, 1).unsqueeze(1)
        # step 6: unnormalised scores e, [b, seq_len]
        e = torch.bmm(V, tanh_W_s_h).squeeze(1)
        att_weights = F.softmax(e, dim=1)
        return att_weights


def check_seed004(c, t, allow, steps):
    """Additive configurations through the seed's module: each query x_i is one
    batch element's last decoder state, the keys Y its encoder outputs."""
    X = t["X"]
    Y = t["Y"] if c["cross"] else X
    nq, dx, dy, da = X.shape[0], X.shape[1], Y.shape[1], t["W_a"].shape[1]
    if dy % 2:
        raise Fail("seed 004 layout needs an even encoder width (2 × n_hidden_enc)")
    m = SeedAttention(dy // 2, dx, bias="b_a" in t, n_a=da)
    with torch.no_grad():
        m.W.weight.copy_(t["W_a"].T)                          # nn.Linear stores the transpose
        if "b_a" in t:
            m.W.bias.copy_(t["b_a"][0])
        m.V.copy_(t["v_a"][:, 0])
        w = m(X[:, None, :], Y[None].expand(nq, -1, -1).contiguous())   # (n_q, n_k)
    # the seed has no mask: a padding mask renormalises the weights over the allowed keys
    w = torch.where(allow, w, torch.zeros_like(w))
    w = w / w.sum(dim=1, keepdim=True)
    by = {s[0]: s[3] for s in steps}
    worst = close("weights", by["weights"], w, 1.0, "vs seed 004")
    # step 2 of the seed's text: Output = score(Q, K) · V, with V = the encoder states
    return max(worst, close("context", by["context"], w @ Y, 1.0, "vs seed 004"))


# ---- the configurations ---------------------------------------------------------

def dot(name, seed, n_q, d_model, heads, **kw):
    c = dict(name=name, seed=seed, attention="dot", cross=False, n_q=n_q, n_k=n_q,
             d_model=d_model, heads=heads, d_k=d_model // heads, d_v=d_model // heads,
             bias="QKVO", W_O=True, scale="sqrt_dk", scale_value=0.0, mask="none",
             fill=-math.inf, mask_order="scale_then_mask")
    c.update(kw)
    if c["cross"] and "n_k" not in kw:
        raise ValueError(name + ": cross needs n_k")
    return c


def additive(name, seed, n_q, d_x, **kw):
    c = dict(name=name, seed=seed, attention="additive", cross=False, n_q=n_q, n_k=n_q,
             d_model=0, heads=1, d_k=0, d_v=0, d_x=d_x, d_y=0, d_a=d_x, W_O=False,
             scale="none", scale_value=0.0, mask="none", fill=-math.inf, mask_order="scale_then_mask")
    c.update(kw)
    return c


CONFIGS = [
    # 我喜欢跑步 as five characters; one head, every bias, W_O: the textbook case
    dot("self_1head", 101, 5, 4, 1),
    # seed 001's seq_len = 1: scores are 1 × 1 and softmax gives 1
    dot("single_token", 102, 1, 4, 2),
    dot("self_2head_nobias", 103, 5, 6, 2, bias="O"),
    dot("self_3head_noWO", 104, 4, 6, 3, W_O=False, bias="Q"),
    dot("bias_K_only", 105, 4, 4, 2, bias="K"),
    dot("bias_V_only_noWO", 106, 3, 4, 2, bias="V", W_O=False),
    dot("bias_none_noO", 107, 4, 4, 2, bias="", W_O=True),
    # cross-attention: Q from X (3 tokens), K and V from Y (5 tokens), n_q ≠ n_k
    dot("cross_2head", 108, 3, 8, 2, cross=True, n_k=5),
    dot("cross_1head_noWO", 109, 4, 3, 1, cross=True, n_k=2, W_O=False, bias="QK"),
    # seed 004: d_k ≠ d_v per head, no output projection
    dot("dk_ne_dv_noWO", 110, 4, 6, 2, d_k=3, d_v=5, W_O=False, bias=""),
    dot("dk_ne_dv_cross_WO", 111, 3, 5, 3, d_k=2, d_v=4, cross=True, n_k=4),
    # masks
    dot("mask_causal", 112, 5, 4, 2, mask="causal"),
    dot("mask_padding_cross", 113, 3, 4, 2, cross=True, n_k=5, mask="padding",
        mask_values=[1, 1, 0, 1, 0]),
    dot("mask_matrix", 114, 4, 4, 2, mask="matrix",
        mask_values=[[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 1, 1], [0, 0, 1, 0]]),
    # a fully blocked row (query 2, and every query of the cross one): torch gives NaN, the engine 0
    dot("mask_blocked_row", 115, 4, 4, 2, mask="matrix",
        mask_values=[[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 1]]),
    dot("mask_blocked_row_cross_noWO", 116, 3, 4, 1, cross=True, n_k=2, W_O=False, mask="matrix",
        mask_values=[[1, 0], [0, 0], [0, 1]]),
    dot("mask_padding_all_blocked", 117, 2, 4, 2, cross=True, n_k=3, mask="padding",
        mask_values=[0, 0, 0]),
    # finite fills: seed 000's -1e9 (with a fully blocked row: uniform, as torch gives) and seed 003's -1e20
    dot("fill_1e9_blocked_row", 118, 4, 4, 2, mask="matrix", fill=-1e9,
        mask_values=[[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 1], [1, 1, 1, 1]]),
    # seed 003: no bias on Q/K/V, bias on fc_out, divide by √embed_size (= d_model), fill -1e20
    dot("seed003_sqrt_dmodel_1e20", 119, 4, 8, 2, bias="O", scale="sqrt_dmodel", mask="causal",
        fill=-1e20),
    # seed 003's order: mask the raw scores with -1e20, then divide by √embed_size, so a
    # blocked score is -1e20/√8; a fully blocked row (query 1) is uniform either way
    dot("seed003_mask_then_scale_1e20", 123, 4, 8, 2, bias="O", scale="sqrt_dmodel", mask="matrix",
        fill=-1e20, mask_order="mask_then_scale",
        mask_values=[[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]),
    dot("scale_none", 120, 4, 4, 2, scale="none"),
    dot("scale_value", 121, 4, 4, 2, scale="value", scale_value=2.5),
    # logits around 1e4 (no scaling, large X): softmax must subtract the row max
    dot("logits_1e4", 122, 4, 4, 1, scale="none", x_scale=120.0, bias=""),
    # additive (Bahdanau), seed 004: decoder state x_i, encoder outputs y_j of width 2·n_hidden_enc
    additive("additive_self", 130, 4, 4),
    additive("additive_cross_bidir", 131, 3, 4, cross=True, n_k=5, d_y=6),
    additive("additive_cross_bias_da", 132, 2, 3, cross=True, n_k=4, d_y=4, d_a=5, b_a=True),
    additive("additive_cross_padding", 133, 3, 4, cross=True, n_k=4, d_y=6, mask="padding",
             mask_values=[1, 0, 1, 1]),
    # larger: d_model 64, 8 heads, 16 tokens, causal; seed 001's 512 / 8 / 12
    dot("large_64x8_n16", 140, 16, 64, 8, mask="causal", int8_exp=10),
    dot("seed001_512x8_n12", 141, 12, 512, 8, int8_exp=11),
    # incremental decoding with a K/V cache: one head with every bias, two heads without W_O,
    # seed 003's order and fill, and a long one
    dot("decode_1head", 150, 4, 4, 1, mask="causal", decode="incremental"),
    dot("decode_2head_noWO", 151, 5, 6, 2, mask="causal", decode="incremental", W_O=False, bias="QK"),
    dot("decode_mask_then_scale", 152, 3, 4, 2, mask="causal", decode="incremental", fill=-1e20,
        mask_order="mask_then_scale", scale="sqrt_dmodel"),
    dot("decode_16_tokens", 153, 16, 8, 2, mask="causal", decode="incremental", d_k=3, d_v=5),
    # grouped-query attention: 4 query heads on 2 K/V heads with every bias; multi-query (one K/V
    # head) with d_k ≠ d_v and no W_O; cross-attention with a padding mask; decoding with a K/V cache
    dot("gqa_4q_2kv", 160, 5, 8, 4, kv_heads=2),
    dot("mqa_3q_noWO", 161, 4, 6, 3, kv_heads=1, d_k=3, d_v=2, W_O=False, bias="QV"),
    dot("gqa_cross_padding", 162, 3, 8, 4, kv_heads=2, cross=True, n_k=5, mask="padding",
        mask_values=[1, 1, 0, 1, 1]),
    dot("gqa_decode", 163, 5, 8, 4, kv_heads=2, mask="causal", decode="incremental"),
    dot("mqa_decode_causal", 164, 4, 6, 2, kv_heads=1, mask="causal", decode="incremental", d_k=2, d_v=3),
    # rotary position embeddings: 我喜欢跑步 with two heads; a small base (angles turn fast) with no W_O; with
    # grouped K/V heads and a causal mask; decoding with a K/V cache of rotated keys; 16 tokens, d_k = 8
    dot("rope_2head", 170, 5, 8, 2, rope_base=10000.0),
    dot("rope_base100_noWO", 171, 6, 4, 1, rope_base=100.0, W_O=False, bias="QK"),
    dot("rope_gqa_causal", 172, 5, 8, 4, kv_heads=2, d_k=4, d_v=2, mask="causal", rope_base=10000.0),
    dot("rope_decode", 173, 4, 6, 3, kv_heads=1, mask="causal", decode="incremental", rope_base=500.0),
    dot("rope_16_tokens", 174, 16, 16, 2, mask="causal", rope_base=10000.0, int8_exp=8),
    # the sinusoidal positional encoding: 我喜欢跑步 with one head; an odd d_model (the last column a sine)
    # with two heads and a causal mask; decoding from X + PE; 32 positions of d_model 16 (the slow columns)
    dot("pe_1head", 180, 5, 4, 1, positional="sinusoidal"),
    dot("pe_odd_dmodel", 181, 4, 5, 2, d_k=2, d_v=3, mask="causal", positional="sinusoidal", W_O=False),
    dot("pe_decode", 182, 4, 6, 2, mask="causal", decode="incremental", positional="sinusoidal"),
    dot("pe_32_tokens", 183, 32, 16, 2, positional="sinusoidal", int8_exp=8),
    # the tiled softmax: 我喜欢跑步 in blocks of 2 (the last block 1 key); a fully blocked row and a row whose
    # first block is blocked, in blocks of 3; seed 003's order and fill with a blocked row; grouped K/V heads,
    # a causal mask and blocks of 1; 16 tokens of large logits in blocks of 5
    dot("tile_1head", 190, 5, 4, 1, tile=2),
    dot("tile_blocked_rows", 191, 5, 4, 2, tile=3, mask="matrix",
        mask_values=[[1, 1, 0, 1, 0], [0, 0, 0, 0, 0], [0, 0, 0, 1, 1], [1, 1, 1, 1, 1], [0, 1, 0, 0, 1]]),
    dot("tile_mask_then_scale", 192, 4, 8, 2, tile=2, bias="O", scale="sqrt_dmodel", mask="matrix", fill=-1e20,
        mask_order="mask_then_scale", mask_values=[[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]),
    dot("tile_gqa_causal", 193, 5, 8, 4, kv_heads=2, mask="causal", tile=1),
    dot("tile_16_tokens", 194, 16, 8, 2, tile=5, scale="none", x_scale=3.0, bias=""),
]


# ---- writing --------------------------------------------------------------------

def pack_str(s):
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def pack_tensor(name, kind, head, x, e=None):
    x = x.detach().to(torch.float32).contiguous()
    if x.dim() == 1:
        x = x[None]
    rows, cols = x.shape
    out = pack_str(name) + pack_str(kind) + struct.pack("<iii", head, rows, cols)
    if e is None:
        return out + struct.pack("<I", 0) + x.numpy().astype("<f4").tobytes()
    q = x * (2.0 ** e)
    if not torch.equal(q, q.round()) or q.abs().max() > 127:
        raise Fail(f"{name}: not int8 × 2^-{e}")
    return out + struct.pack("<Ii", 1, e) + q.to(torch.int8).numpy().tobytes()


INPUT_KINDS = {"X": "input", "Y": "input", "W_Q": "weight", "W_K": "weight", "W_V": "weight",
               "W_O": "weight", "W_a": "weight", "v_a": "weight", "b_Q": "bias", "b_K": "bias",
               "b_V": "bias", "b_O": "bias", "b_a": "bias"}
INPUT_ORDER = ["X", "Y", "W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O", "W_a", "b_a", "v_a"]


def serialise(c, t, enc, mask_list, steps):
    b = bytearray(MAGIC)
    # version 2 or 3 only where it is needed, so older files stay as they were written
    options = [(k, OPTIONS[k](c[k])) for k in OPTIONS if k in c]
    v2 = c["mask_order"] != "scale_then_mask"
    b += struct.pack("<I", 3 if options else 2 if v2 else VERSION)
    b += pack_str(c["name"])
    add = c["attention"] == "additive"
    b += struct.pack("<ii", 1 if add else 0, 1 if c["cross"] else 0)
    b += struct.pack("<9i", c["n_q"], c["n_k"], c["d_model"], c["heads"], c["d_k"], c["d_v"],
                     c.get("d_x", 0), (c.get("d_y", 0) if c["cross"] else c.get("d_x", 0)) if add else 0,
                     c.get("d_a", 0))
    b += struct.pack("<i", 1 if c["W_O"] else 0)
    b += struct.pack("<iff", SCALE_KINDS[c["scale"]], c["scale_value"], divisor_of(c))
    b += struct.pack("<if", MASK_KINDS[c["mask"]], c["fill"])
    if options:
        b += struct.pack("<iI", 1 if v2 else 0, len(options))
        for k, v in options:
            b += pack_str(k) + struct.pack("<d", v)
    elif v2:
        b += struct.pack("<i", 1)
    b += struct.pack("<I", len(mask_list)) + bytes(mask_list)
    names = [n for n in INPUT_ORDER if n in t]
    b += struct.pack("<I", len(names))
    for n in names:
        b += pack_tensor(n, INPUT_KINDS[n], 0, t[n], enc.get(n))
    b += struct.pack("<I", len(steps))
    for name, kind, head, x in steps:
        b += pack_tensor(name, kind, head, x)
    b += b"END!"
    return bytes(b)


def split_fixture(data):
    """A fixture's bytes as (everything before its steps, [(name, kind, head, rows, cols, values, raw)]),
    values a list of floats, raw the step's bytes as written."""
    at = [0]

    def take(fmt):
        v = struct.unpack_from(fmt, data, at[0])
        at[0] += struct.calcsize(fmt)
        return v

    def take_str():
        (n,) = take("<I")
        at[0] += n
        return data[at[0] - n:at[0]].decode("utf-8")

    def take_tensor():
        start = at[0]
        name, kind = take_str(), take_str()
        head, rows, cols = take("<iii")
        (encoding,) = take("<I")
        if encoding == 0:
            values = list(take(f"<{rows * cols}f"))
        else:
            (e,) = take("<i")
            values = [q * 2.0 ** -e for q in take(f"<{rows * cols}b")]
        return name, kind, head, rows, cols, values, data[start:at[0]]

    at[0] = len(MAGIC)
    (version,) = take("<I")
    take_str()
    take("<ii9iiiffif")
    if version == 2:
        take("<i")  # mask_order
    elif version == 3:
        (_, n_options) = take("<iI")  # mask_order, the options
        for _ in range(n_options):
            take_str()
            take("<d")
    (n_mask,) = take("<I")
    at[0] += n_mask
    (n_inputs,) = take("<I")
    for _ in range(n_inputs):
        take_tensor()
    prefix = data[:at[0]]
    (n_steps,) = take("<I")
    return prefix, [take_tensor() for _ in range(n_steps)]


def same_numbers(a, b):
    """The values of one step from two torch builds: equal but for rounding (a hundredth of the
    C test's tolerance), NaN where the other is NaN."""
    for x, y in zip(a, b):
        if math.isnan(x) or math.isnan(y):
            if not (math.isnan(x) and math.isnan(y)):
                return False
        elif abs(x - y) > 0.01 * (ABS_TOL + REL_TOL * abs(y)):
            return False
    return len(a) == len(b)


def keep_committed(data, old):
    """data, a fixture this torch computed, with each step that the committed file `old` holds with
    the same numbers (within rounding) kept byte for byte as committed: so that another torch build,
    or a new step kind, rewrites only what really changed. data itself when the inputs differ."""
    prefix, steps = split_fixture(data)
    old_prefix, old_steps = split_fixture(old)
    if prefix != old_prefix:
        return data
    committed = {s[:5]: s for s in old_steps}
    out = bytearray(prefix) + struct.pack("<I", len(steps))
    for s in steps:
        k = committed.get(s[:5])
        out += k[6] if k and same_numbers(s[5], k[5]) else s[6]
    return bytes(out + b"END!")


def build(c):
    t, enc = make_inputs(c)
    mask_list, allow = mask_values(c)
    steps = reference(c, t, allow)
    report = []
    # 1. float64 recomputation: the fixture must be well-conditioned at the C tolerance
    t64 = {k: v.double() for k, v in t.items()}
    steps64 = reference(c, t64, allow)
    worst64 = 0.0
    for (n, _, _, x), (_, _, _, x64) in zip(steps, steps64):
        worst64 = max(worst64, close(n, x, x64, 0.5, "float32 vs float64"))
    report.append(f"f32/f64 {worst64:.3f}")
    # 2. torch's own modules
    if c["attention"] == "additive":
        report.append(f"seed004 {check_seed004(c, t, allow, steps):.3f}")
    elif (c["d_k"] == c["d_v"] == c["d_model"] // c["heads"] and c["d_model"] % c["heads"] == 0
          and c["scale"] == "sqrt_dk" and "kv_heads" not in c and "rope_base" not in c):
        report.append(f"MHA {check_mha(c, t, allow, steps):.3f}")
    else:
        report.append("MHA n/a")
    if c.get("decode") == "incremental":
        report.append(f"decoded {check_decode(c, steps):.3f}")
    if "kv_heads" in c:
        report.append(f"K/V repeated {check_gqa(c, t, allow, steps):.3f}")
    if "rope_base" in c:
        report.append(f"RoPE as complex, relative {check_rope(c, steps):.3f}")
    if c.get("positional") == "sinusoidal":
        report.append(f"PE as the Annotated Transformer {check_positional(c, steps):.3f}")
    if "tile" in c:
        report.append(f"tiled vs untiled {check_tiled(c, steps):.3f}")
    # 3. what the C test relies on: NaN only in rows with no allowed key, and only with fill -inf
    dead = ~allow.any(dim=1)
    for n, _, _, x in steps:
        x2 = x if x.dim() == 2 else x[None]
        bad = torch.isnan(x2).any(dim=1)
        if n == "hidden":
            continue
        if bad.any() and not (bad <= dead).all():
            raise Fail(f"{n}: NaN outside the fully blocked rows")
        if bad.any() and c["fill"] != -math.inf:
            raise Fail(f"{n}: NaN with a finite fill")
    return serialise(c, t, enc, mask_list, steps), report


def main(argv):
    check_only = "--check" in argv[1:]
    # --only NAME[,NAME...]: build and write only these (the MANIFEST still lists every configuration)
    only = None
    if "--only" in argv[1:]:
        only = set(argv[argv.index("--only") + 1].split(","))
        unknown = only - {c["name"] for c in CONFIGS}
        if unknown:
            print("unknown configuration(s): " + ", ".join(sorted(unknown)), file=sys.stderr)
            return 2
    total, status, built = 0, 0, []
    for c in CONFIGS:
        if only is not None and c["name"] not in only:
            continue
        try:
            data, report = build(c)
        except Fail as e:
            print(f"FAIL {c['name']}: {e}", file=sys.stderr)
            status = 1
            continue
        fname = c["name"] + ".bin"
        total += len(data)
        built.append((fname, data))
        print(f"{fname:36s} {len(data):8d} B  " + ", ".join(report) + "  (worst |diff|/tol)")
    if status:
        print("nothing written: a reference disagrees with torch's own modules", file=sys.stderr)
        return status
    if check_only:
        for fname, data in built:
            path = os.path.join(OUT, fname)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                print(f"DIFFERS {fname}: the committed file is not what this torch writes", file=sys.stderr)
                status = 1
    else:
        os.makedirs(OUT, exist_ok=True)
        written = 0
        for fname, data in built:
            path = os.path.join(OUT, fname)
            old = open(path, "rb").read() if os.path.exists(path) else None
            if old is not None:
                data = keep_committed(data, old)
                if data == old:
                    continue
            with open(path, "wb") as f:
                f.write(data)
            written += 1
            print(f"wrote {fname}")
        with open(os.path.join(OUT, "MANIFEST"), "w") as f:
            f.write("# written by tests/make_fixtures.py; one fixture per line, read by tests/test_engine.c\n")
            for c in CONFIGS:
                f.write(c["name"] + ".bin\n")
    if check_only:
        print(f"{len(built)} fixtures, {total} bytes checked")
    else:
        print(f"{len(built)} fixtures, {written} of them written (the others' numbers are the committed ones)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
