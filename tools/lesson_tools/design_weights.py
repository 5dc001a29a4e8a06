#!/usr/bin/python3
"""Design the hand-made numbers of the attnviz lessons, and check the claims
their narration makes, in plain numpy (float64).

Run:  /usr/bin/python3 tools/lesson_tools/design_weights.py
It prints, per lesson, the matrices (as JSON rows, ready to paste into
lessons/<id>.json) and the pattern each lesson claims, with its margin. It
exits 1 if a claim fails, so a change to a design that breaks its story is
caught here before it reaches a lesson file. (tools/lesson_tools/verify_lessons.py
then checks the lesson files themselves against PyTorch.)

The design idea, used by every 我/喜欢/跑步 lesson: the embedding X has one
feature per word plus a fourth feature shared by the predicate 喜欢跑步
("is part of the predicate"):
      我   = [1, 0, 0, 0]
      喜欢 = [0, 1, 0, 1]
      跑步 = [0, 0, 1, 1]
With the fourth row of W_Q and W_K set to zero, Q = X·W_Q simply reads row
"word" of W_Q, so each token's query and key can be written down directly as
the rows of W_Q and W_K: that is what makes the head patterns designable and
checkable by hand.
"""
import json
import sys

import numpy as np

TOKENS = ["我", "喜欢", "跑步"]
X = np.array([[1, 0, 0, 0],
              [0, 1, 0, 1],
              [0, 0, 1, 1]], dtype=float)

failures = 0


def claim(ok, text):
    global failures
    print(("  ok    " if ok else "  FAIL  ") + text)
    if not ok:
        failures += 1


def softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def rows(m):
    """A matrix as JSON rows, integers without a trailing .0."""
    def num(v):
        v = float(v)
        return int(v) if v == int(v) else round(v, 6)
    return "[" + ", ".join(json.dumps([num(v) for v in r]) for r in np.atleast_2d(m)) + "]"


def mha(X, WQ, WK, WV, heads, dk, dv, div, mask=None, fill=-np.inf, Y=None):
    src = X if Y is None else Y
    Q, K, V = X @ WQ, src @ WK, src @ WV
    out = []
    for h in range(heads):
        s = Q[:, h * dk:(h + 1) * dk] @ K[:, h * dk:(h + 1) * dk].T / div
        if mask is not None:
            s = np.where(mask == 0, fill, s)
        out.append((s, softmax(s), None))
    return Q, K, V, out


def section(title):
    print("\n== " + title)


# --- seed002-x-to-qkv: the seed's X = [[1,2,3],[4,5,6]] through Q, K, V ------
section("seed002-x-to-qkv: X (2×3) → Q, K, V (2×2), one head")
X2 = np.array([[1, 2, 3], [4, 5, 6]], dtype=float)
# Small one-decimal weights keep Q·Kᵀ/√2 in a range where the softmax is not
# yet saturated, so both weights of a row are visible on the heatmap.
WQ2 = np.array([[0.1, 0], [0, 0.1], [0.1, 0.1]])
WK2 = np.array([[0.1, 0.1], [0.1, 0], [0, 0.1]])
WV2 = np.array([[1, 0], [0, 1], [0, 0]])
Q2, K2, V2 = X2 @ WQ2, X2 @ WK2, X2 @ WV2
S2 = Q2 @ K2.T / np.sqrt(2)
A2 = softmax(S2)
print("W_Q", rows(WQ2), "\nW_K", rows(WK2), "\nW_V", rows(WV2))
print("Q", rows(Q2), "K", rows(K2), "V", rows(V2))
print("scaled", rows(S2), "\nweights", rows(A2))
claim(np.all((A2 > 0.2) & (A2 < 0.8)), "no weight saturates: every weight in (0.2, 0.8)")

# --- mhsa-wo-xihuan-paobu: two heads, designed --------------------------------
section("mhsa-wo-xihuan-paobu: 2 heads, d_k = d_v = 2, W_O")
# Head 1 (columns 0-1): verb-object. 喜欢 asks [2,0], 跑步 answers key [2,0];
#   跑步 asks [0,2], 喜欢 answers key [0,2]. 我 asks nothing ([0,0]).
# Head 2 (columns 2-3): subject-verb. 我 asks [2,0], 喜欢 answers [2,0];
#   喜欢 asks [0,2], 我 answers [0,2]. 跑步 asks nothing.
#                 head 1   head 2
WQ = np.array([[0, 0,    2, 0],    # 我
               [2, 0,    0, 2],    # 喜欢
               [0, 2,    0, 0],    # 跑步
               [0, 0,    0, 0]])   # predicate feature: not used by queries
WK = np.array([[0, 0,    0, 2],    # 我
               [0, 2,    2, 0],    # 喜欢
               [2, 0,    0, 0],    # 跑步
               [0, 0,    0, 0]])
# Values say what a head passes on. Head 1 (verb-object): 喜欢 passes
# [1,0] "a verb", 跑步 passes [0,1] "an activity". Head 2 (subject-verb):
# 我 passes [1,0] "a person", 喜欢 passes [0,1] "a verb". A word a head does
# not link passes [0,0] in that head.
WV = np.array([[0, 0,    1, 0],    # 我
               [1, 0,    0, 1],    # 喜欢
               [0, 1,    0, 0],    # 跑步
               [0, 0,    0, 0]])
# W_O mixes the heads: output columns 0-1 add head 1 and head 2, columns 2-3
# take head 1 minus head 2.
WO = np.array([[1, 0, 1, 0],
               [0, 1, 0, 1],
               [1, 0, -1, 0],
               [0, 1, 0, -1]])
Q, K, V, heads = mha(X, WQ, WK, WV, 2, 2, 2, np.sqrt(2))
print("W_Q", rows(WQ), "\nW_K", rows(WK), "\nW_V", rows(WV), "\nW_O", rows(WO))
for h, (s, a, _) in enumerate(heads, 1):
    print(f"head {h} scaled", rows(s), f"\nhead {h} weights", rows(np.round(a, 4)))
a1, a2 = heads[0][1], heads[1][1]
claim(a1[1].argmax() == 2, f"head 1: row 喜欢 puts its largest weight on 跑步 ({a1[1, 2]:.4f})")
claim(a1[2].argmax() == 1, f"head 1: row 跑步 puts its largest weight on 喜欢 ({a1[2, 1]:.4f})")
claim(a2[0].argmax() == 1, f"head 2: row 我 puts its largest weight on 喜欢 ({a2[0, 1]:.4f})")
claim(a2[1].argmax() == 0, f"head 2: row 喜欢 puts its largest weight on 我 ({a2[1, 0]:.4f})")
Vv = X @ WV
h1, h2 = a1 @ Vv[:, 0:2], a2 @ Vv[:, 2:4]
print("head_1", rows(np.round(h1, 4)), "\nhead_2", rows(np.round(h2, 4)))
claim(h1[1, 1] > 0.8 and h2[1, 0] > 0.8, "喜欢's head 1 output is mostly 跑步's value, its head 2 output mostly 我's")
claim(np.allclose(a1[0], 1 / 3) and np.allclose(a2[2], 1 / 3), "a zero query gives a uniform row (我 in head 1, 跑步 in head 2)")

section("single-vs-multi-head: the same weights, one head of width 4")
s = (X @ WQ) @ (X @ WK).T / 2
a = softmax(s)
print("scaled", rows(s), "\nweights", rows(np.round(a, 4)))
raw1, raw2 = heads[0][0] * np.sqrt(2), heads[1][0] * np.sqrt(2)
claim(np.allclose(s * 2, raw1 + raw2), "one head's raw scores are the sum of the two heads' raw scores")
claim(a[1, 0] < a2[1, 0] and a[1, 2] < a1[1, 2],
      f"row 喜欢 blends: 我 {a[1,0]:.4f} (< head 2's {a2[1,0]:.4f}), 跑步 {a[1,2]:.4f} (< head 1's {a1[1,2]:.4f})")

# --- self-attention-xihuan-paobu: one head, W_Q = W_K = W_V = I -------------
section("self-attention-xihuan-paobu: W = I, attention = similarity of embeddings")
s = X @ X.T / 2
a = softmax(s)
print("scores", rows(X @ X.T), "\nweights", rows(np.round(a, 4)))
claim(all(a[i].argmax() == i for i in range(3)), "every row's largest weight is on the word itself")
claim(a[1, 2] > a[1, 0] and a[2, 1] > a[2, 0], "喜欢 and 跑步 prefer each other to 我 (shared predicate feature)")

# --- causal-mask-decoder -------------------------------------------------------
section("causal-mask-decoder: one head, d_k = d_v = 2, causal")
WQc = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
WKc = np.array([[1, 0], [0, 1], [2, 2], [0, 0]])
WVc = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
s = (X @ WQc) @ (X @ WKc).T / np.sqrt(2)
print("W_Q", rows(WQc), "\nW_K", rows(WKc), "\nW_V", rows(WVc))
print("scaled", rows(s))
claim(all(s[i].argmax() == 2 for i in range(3)), "without the mask every row would look hardest at 跑步 (the future for 我, 喜欢)")
m = np.tril(np.ones((3, 3)))
a = softmax(np.where(m == 0, -np.inf, s))
print("weights", rows(np.round(a, 4)))
claim(a[0, 0] == 1.0, "row 我 sees only itself: weight exactly 1")

section("mask-fill-values: <pad> 我 喜欢 跑步, causal and key padding, fill -1e9")
Xp = np.vstack([np.zeros(4), X])
mp = np.tril(np.ones((4, 4))) * np.array([0, 1, 1, 1])
print("mask", rows(mp))
s = (Xp @ WQc) @ (Xp @ WKc).T / np.sqrt(2)
for fill in (-1e9, -1e20):
    a = softmax(np.where(mp == 0, fill, s))
    claim(np.allclose(a[0], 0.25), f"fill {fill:g}: the fully blocked row <pad> becomes uniform 1/4")

# --- cross-attention-en-zh -------------------------------------------------------
section("cross-attention-en-zh: <s> I like running (shifted right) over 我 喜欢 跑步")
# The decoder input is the translation shifted right (teacher forcing):
# position t predicts token t+1, so each query should look at the source word
# of the word it is about to produce, as additive-bahdanau's states do.
# English features (a different space): one per token [<s>, I, like, running].
Xen = np.array([[1, 0, 0, 0],   # <s>: about to write "I"
                [0, 1, 0, 0],   # I: about to write "like"
                [0, 0, 1, 0],   # like: about to write "running"
                [0, 0, 0, 1]])  # running: only the end of the sentence follows
# W_Q maps <s>, I, like onto the Chinese axes [我, 喜欢, 跑步] of what they
# predict; W_K reads the Chinese word features as they are.
WQx = np.array([[3, 0, 0], [0, 3, 0], [0, 0, 3], [0, 0, 0]])
WKx = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])
s = (Xen @ WQx) @ (X @ WKx).T / np.sqrt(3)
a = softmax(s)
print("X", rows(Xen), "\nW_Q", rows(WQx), "\nW_K", rows(WKx))
print("weights", rows(np.round(a, 4)))
claim([a[i].argmax() for i in (0, 1, 2)] == [0, 1, 2], "<s>→我, I→喜欢, like→跑步 (the word each is about to produce)")
claim(np.allclose(a[3], 1 / 3), "running (a zero query) spreads evenly")

# --- seed002-embedding-two-heads ------------------------------------------------
section("seed002-embedding-two-heads: one-hot × W, and a second projection per head, folded")
# Vocabulary [我, 你, 喜欢, 跑步]; seed 002's embedding W, its W_q/W_k/W_v, and
# per-head second projections. The lesson's W_Q is W·W_q·[W^(q,1) | W^(q,2)].
Emb = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 0], [0, 1, 1]])
Wq2 = np.array([[1, 0], [0, 1], [1, 1]])
Wk2 = np.array([[0, 1], [1, 0], [1, 1]])
Wv2 = np.array([[1, 0], [0, 1], [0, 0]])
I2, S2 = np.eye(2), np.array([[0, 1], [1, 0]])
folded = {"W_Q": Emb @ Wq2 @ np.hstack([I2, S2]), "W_K": Emb @ Wk2 @ np.hstack([I2, I2]),
          "W_V": Emb @ Wv2 @ np.hstack([I2, S2])}
with open(__file__.rsplit("/tools/", 1)[0] + "/lessons/seed002-embedding-two-heads.json", encoding="utf-8") as f:
    emb_lesson = json.load(f)
for name, m in folded.items():
    print(name, rows(m.astype(int)))
    claim(np.array_equal(np.array(emb_lesson[name]), m), f"the lesson's {name} is W·{name[2].lower()}-chain multiplied out")
Xo = np.array(emb_lesson["X"])
claim(np.array_equal(Xo @ folded["W_Q"], folded["W_Q"][[0, 2, 3]]), "one-hot X · W_Q picks rows 0, 2, 3 (我, 喜欢, 跑步)")
q_two_steps = (Xo @ Emb @ Wq2) @ S2          # seed 002: embed, project, then head 2's second matrix
claim(np.allclose(q_two_steps, (Xo @ folded["W_Q"])[:, 2:4]), "head 2's query projected twice = columns 2-3 of Q")

# --- additive-bahdanau ------------------------------------------------------------
section("additive-bahdanau: decoder states (d_x 3) over encoder states (d_y 4)")
# Decoder half of W_a: state dimension a pushes every hidden unit except a
# down, so a state that "looks for" word a leaves unit a free to fire.
Wx = np.array([[0, -2, -2], [-2, 0, -2], [-2, -2, 0]])
# Encoder half: forward features [我, 喜欢, 跑步] to the three hidden units,
# the fourth (backward) feature plays no part in the score.
Wy = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])
Wa = np.vstack([Wx, Wy])
va = np.array([1, 1, 1])
Ya = np.array([[1, 0, 0, 0.5], [0, 1, 0, 0.5], [0, 0, 1, 0.5]])
Xa = np.array([[0.1, 0.9, 0.2],   # s1: after "I", about to say "like"
               [0.1, 0.2, 0.9]])  # s2: after "I like", about to say "running"
hidden = np.tanh((Xa @ Wx)[:, None, :] + (Ya @ Wy)[None, :, :])
sc = hidden @ va
a = softmax(sc)
print("W_a", rows(Wa), "\nv_a", rows(va), "\nX", rows(Xa), "\nY", rows(Ya))
print("scores", rows(np.round(sc, 4)), "\nweights", rows(np.round(a, 4)))
claim(a[0].argmax() == 1 and a[1].argmax() == 2, "s1 looks at 喜欢, s2 at 跑步")

# --- scaling-pitfalls --------------------------------------------------------------
section("scaling-pitfalls: d_model 8, 4 heads of d_k 2, W = I")
Xs = np.array([[2, 0, 1, 0, 2, 1, 1, 1],
               [0, 2, 1, 1, 1, 2, 1, 0],
               [1, 1, 0, 2, 0, 1, 2, 1]], dtype=float)
print("X", rows(Xs))
mx = {}
for name, div in (("sqrt_dmodel", np.sqrt(8)), ("sqrt_dk", np.sqrt(2)), ("none", 1.0)):
    w = [softmax(Xs[:, 2 * h:2 * h + 2] @ Xs[:, 2 * h:2 * h + 2].T / div) for h in range(4)]
    mx[name] = [float(x.max()) for x in w]
    print(f"{name:12s} max weight per head", np.round(mx[name], 4))
claim(all(mx["sqrt_dmodel"][h] < mx["sqrt_dk"][h] < mx["none"][h] for h in range(4)),
      "in every head: max weight √d_model < √d_k < none (flatter → sharper)")

print("\n%d claim(s) failed" % failures if failures else "\nall claims hold")
sys.exit(1 if failures else 0)
