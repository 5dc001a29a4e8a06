#!/usr/bin/env python3
"""make_large_lesson.py: writes a large lesson for the benchmarks: by default
the one `attnviz bench --edits` times at the edit-latency target's size,
1024 tokens, d_model 64, 8 heads, a causal mask. Every matrix is generated
from the seed, so the file is a few kilobytes and is made here instead of
committed. tools/bench_scale.py also writes its 512-token lesson with it.

Usage: tools/make_large_lesson.py [OUT.json] [--tokens N] [--d-model D] [--heads H] [--mask causal|none]
       (default OUT: large-1024x64x8.json in the current folder)
then:  build/attnviz bench --edits 200 OUT.json
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default="large-1024x64x8.json")
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--mask", choices=["causal", "none"], default="causal")
    a = ap.parse_args()
    lesson = {
        "format": "attnviz-lesson/1",
        "id": f"large-{a.tokens}x{a.d_model}x{a.heads}",
        "title": {"en": f"{a.tokens} tokens, d_model {a.d_model}, {a.heads} heads" + (", causal" if a.mask == "causal" else ""),
                  "zh": f"{a.tokens} 个词元，d_model = {a.d_model}，{a.heads} 个头" + ("，因果掩码" if a.mask == "causal" else "")},
        "tokens": [f"t{i}" for i in range(a.tokens)],
        "d_model": a.d_model,
        "heads": a.heads,
        "seed": 1024,
    }
    if a.mask != "none":
        lesson["mask"] = a.mask
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(lesson, f, ensure_ascii=False)
        f.write("\n")
    print(a.out)


if __name__ == "__main__":
    main()
