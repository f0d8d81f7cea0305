#!/usr/bin/env python3
"""Which summation order PyTorch's CPU GEMM takes: candidate orders fitted
to PyTorch's own results, offline (numpy only).

    gemm_fit.py DUMP.npz [DUMP.npz ...] [--json FILE]

A dump is what gemm_fit_torch.py dump writes on a host with PyTorch
(and what the gather of PyTorch 2.11 on the GPU host holds): for each
dtype (fp32: MKL's sgemm; bf16, fp16: oneDNN) and shape (M, K, N), the
inputs x [M, K] and w [N, K] as float32 and two results, F.linear(x, w)
(`lin`: x @ w.t(), the weight a transposed view: sgemm's 'T','N') and
torch.mm(x, w.t().contiguous()) (`mmc`: 'N','N'); and cancellation
probes (rows of 2^-30 with +2^30 at p and -2^30 at q, times ones: the
result counts the small terms that reach the sum after the spikes
cancel, so it shows which partial sums each product enters).

Every candidate order below is emulated exactly (fp32 fused multiply-adds
and additions, each rounded once; bf16/fp16 products are exact in fp32)
and compared bit for bit with every output element; a candidate that
matches every element of a shape is printed as fitting it.  Candidates:

  seq               bitprobe's fixed order: acc = fma(a_k, b_k, acc), k
                    ascending, from +0
  seq-nofma         the products rounded first, then added left to right
  pairwise          rounded products, sum(x[:n/2]) + sum(x[n/2:])
  kblock-B          K in blocks of B (4..1024), each an fma chain from +0,
                    the block sums added in order (MKL-style K panels)
  panel384          K panels of 384, the last full panel and the rest
                    balanced into two halves (K = 1024: 384, 320, 320),
                    each an fma chain from +0, C = panel 0, C += panel i
  lanes-V-TREE      V fma accumulators (lane = k mod V), then a tree:
                    halves (lane i + lane i + V/2, ...), pairs (2i + 2i+1,
                    ...), inorder (left to right)
  dot16             16 accumulators (lane = k mod 16) over the whole K; the
                    four 4-lane quarters added in order, then (l0 + l1) +
                    (l2 + l3)
  dpbf16-EO, -OE    16 lanes fed pairs of k as VDPBF16PS does (lane l of
                    step s: k = 32s + 2l, 2l + 1), the pair's products
                    added even-then-odd or odd-then-even, halves tree

Then a per-class summary: (dtype, call, M) with the fraction of elements
the best candidate matches.  The fitted fp32 orders are the CPU backend's
(src/backends/cpu/mkl_sgemm.c); this script is their independent check.
"""
import argparse
import json
import re
import sys

import numpy as np

F32, F64 = np.float32, np.float64


def _round_fix(s, e):
    """s (double) rounded to float32 as the exact s + e would round."""
    r = s.astype(F32)
    d = s - r.astype(F64)
    toward = np.where(d > 0, F32(np.inf), F32(-np.inf))
    n = np.nextafter(r, toward)
    tie = (d != 0) & ((n.astype(F64) - s) == d)
    past = tie & (e != 0) & (np.sign(e) == np.sign(d))
    return np.where(past, n, r)


def fma32(a, b, c):
    """round32(a * b + c) exactly: the product is exact in double, the sum's
    rounding error (TwoSum) settles a double rounding at a float32 tie."""
    p = a.astype(F64) * b.astype(F64)
    c64 = c.astype(F64)
    s = p + c64
    bb = s - p
    e = (p - (s - bb)) + (c64 - bb)
    return _round_fix(s, e)


def add32(a, b):
    return fma32(a, np.ones_like(a), b)


def mul32(a, b):
    return (a.astype(F64) * b.astype(F64)).astype(F32)


def chain(a, b, acc=None):
    """acc = fma(a[:, k], b[:, k], acc) for k ascending."""
    acc = np.zeros(a.shape[0], F32) if acc is None else acc
    for k in range(a.shape[1]):
        acc = fma32(a[:, k], b[:, k], acc)
    return acc


def blocks(a, b, bounds):
    c = None
    for s, e in bounds:
        p = chain(a[:, s:e], b[:, s:e])
        c = p if c is None else add32(c, p)
    return c


def panel384_bounds(k, kc=384):
    """K panels of kc; where K > kc is not a multiple of kc, the last full
    panel and the rest are split into two halves (the first taking the
    smaller half of an odd count)."""
    full, rest = divmod(k, kc)
    if k <= kc or rest == 0:
        return [(s, min(k, s + kc)) for s in range(0, k, kc)]
    out = [(i * kc, (i + 1) * kc) for i in range(full - 1)]
    s = (full - 1) * kc
    h = (k - s) // 2
    return out + [(s, s + h), (s + h, k)]


def lanes(a, b, v):
    e, k = a.shape
    pad = (-k) % v
    if pad:
        a = np.concatenate([a, np.zeros((e, pad), F32)], 1)
        b = np.concatenate([b, np.zeros((e, pad), F32)], 1)
    a = a.reshape(e, -1, v)
    b = b.reshape(e, -1, v)
    acc = np.zeros((e, v), F32)
    for s in range(a.shape[1]):
        acc = fma32(a[:, s], b[:, s], acc)
    return acc


def tree(acc, how):
    v = acc
    if how == "inorder":
        o = v[:, 0]
        for j in range(1, v.shape[1]):
            o = add32(o, v[:, j])
        return o
    while v.shape[1] > 1:
        n = v.shape[1]
        v = add32(v[:, :n // 2], v[:, n // 2:]) if how == "halves" else add32(v[:, 0::2], v[:, 1::2])
    return v[:, 0]


def dot16(a, b):
    acc = lanes(a, b, 16)
    q = acc[:, 0:4]
    for j in (1, 2, 3):
        q = add32(q, acc[:, 4 * j:4 * j + 4])
    return add32(add32(q[:, 0], q[:, 1]), add32(q[:, 2], q[:, 3]))


def dpbf16(a, b, odd_first):
    e, k = a.shape
    pad = (-k) % 32
    if pad:
        a = np.concatenate([a, np.zeros((e, pad), F32)], 1)
        b = np.concatenate([b, np.zeros((e, pad), F32)], 1)
    p = mul32(a, b).reshape(e, -1, 16, 2)
    acc = np.zeros((e, 16), F32)
    for s in range(p.shape[1]):
        first, second = (p[:, s, :, 1], p[:, s, :, 0]) if odd_first else (p[:, s, :, 0], p[:, s, :, 1])
        acc = add32(add32(acc, first), second)
    return tree(acc, "halves")


def pairwise(p):
    if p.shape[1] == 1:
        return p[:, 0]
    h = p.shape[1] // 2
    return add32(pairwise(p[:, :h]), pairwise(p[:, h:]))


def candidates(k):
    c = {"seq": lambda a, b: chain(a, b)}

    def seq_nofma(a, b):
        p = mul32(a, b)
        acc = np.zeros(a.shape[0], F32)
        for j in range(k):
            acc = add32(acc, p[:, j])
        return acc
    c["seq-nofma"] = seq_nofma
    c["pairwise"] = lambda a, b: pairwise(mul32(a, b))
    for bs in (4, 8, 16, 32, 64, 128, 256, 384, 512, 1024):
        if bs < k:
            c[f"kblock-{bs}"] = lambda a, b, bs=bs: blocks(a, b, [(s, min(k, s + bs)) for s in range(0, k, bs)])
    c["panel384"] = lambda a, b: blocks(a, b, panel384_bounds(k))
    for v in (8, 16, 32, 64):
        for how in ("halves", "pairs", "inorder"):
            c[f"lanes-{v}-{how}"] = lambda a, b, v=v, how=how: tree(lanes(a, b, v), how)
    c["dot16"] = dot16
    c["dpbf16-EO"] = lambda a, b: dpbf16(a, b, False)
    c["dpbf16-OE"] = lambda a, b: dpbf16(a, b, True)
    return c


def to_dtype(v, dt):
    """float32 values rounded once to bf16 or fp16 (nearest even), back
    as float32; fp32 unchanged."""
    if dt == "float32":
        return v
    if dt == "float16":
        return v.astype(np.float16).astype(F32)
    u = v.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(F32)


def same_bits(x, y):
    return x.view(np.uint32) == y.view(np.uint32)


KEY = re.compile(r"^(lin|mmc)_(?:torch\.)?(float32|bfloat16|float16)_(\d+)_(\d+)_(\d+)$")


def informative(outs):
    """How many elements the candidates do not all agree on: only these can
    tell one order from another (a bf16 result rounds most differences
    away)."""
    first = outs[0]
    return int(np.any([o != first for o in outs[1:]], axis=0).sum())


def fit_dump(path, rows):
    d = np.load(path)
    tag = path.rsplit("/", 1)[-1]
    for key in sorted(d.files):
        m = KEY.match(key)
        if not m:
            continue
        call, dt, M, K, N = m.group(1), m.group(2), *map(int, m.groups()[2:])
        suffix = key[len(call):]
        x, w, y = d["x" + suffix], d["w" + suffix], d[key]
        a = np.repeat(x.astype(F32), N, axis=0)
        b = np.tile(w.astype(F32), (M, 1))
        want = y.astype(F32).reshape(-1)
        res, outs = {}, []
        for name, f in candidates(K).items():
            got = to_dtype(f(a, b), dt)
            res[name] = float(same_bits(got, want).mean())
            outs.append(got.view(np.uint32))
        rows.append({"dump": tag, "call": "TN (F.linear)" if call == "lin" else "NN (mm, contiguous)",
                     "dtype": dt, "M": M, "K": K, "N": N, "elements": int(want.size), "match": res,
                     "informative": informative(outs)})
    for key in sorted(d.files):
        m = re.match(r"^canc_x_(\d+)$", key)
        if not m:
            continue
        K = int(m.group(1))
        X = d[key].astype(F32)
        want = d[f"canc_y_{K}"].astype(F32)[:, 0]
        ones = np.ones_like(X)
        outs = {name: f(X, ones) for name, f in candidates(K).items()}
        res = {name: float(same_bits(v, want).mean()) for name, v in outs.items()}
        rows.append({"dump": tag, "call": "TN (F.linear) cancellation", "dtype": "float32",
                     "M": int(X.shape[0]), "K": K, "N": int(d[f"canc_y_{K}"].shape[1]),
                     "elements": int(want.size), "match": res,
                     "informative": informative([v.view(np.uint32) for v in outs.values()])})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump", nargs="+")
    ap.add_argument("--json", help="write every row's match fractions here")
    args = ap.parse_args()
    rows = []
    for p in args.dump:
        fit_dump(p, rows)
    for r in rows:
        best = max(r["match"].values())
        fits = [n for n, v in r["match"].items() if v == 1.0]
        top = sorted(r["match"].items(), key=lambda t: -t[1])[:3]
        print(f"{r['dump']}: {r['dtype']:8} {r['call']:27} M={r['M']:<4} K={r['K']:<6} N={r['N']:<3} "
              f"{r['elements']:5} elements ({r['informative']} telling): " +
              (f"fits {', '.join(fits)}" if fits else
               "no candidate fits; best " + ", ".join(f"{n} {v:.3f}" for n, v in top)))
        r["best"] = best
    print()
    print("per class (dtype, call, M): the candidate matching most elements over its shapes")
    for (dt, call, mc), group in sorted(classes(rows).items()):
        n = sum(r["elements"] for r in group)
        score = {c: sum(r["match"][c] * r["elements"] for r in group) for c in group[0]["match"]
                 if all(c in r["match"] for r in group)}
        best = max(score, key=score.get)
        fits = [c for c, v in score.items() if round(v) == n]
        inf = sum(r["informative"] for r in group)
        shapes = " ".join(f"({r['M']},{r['K']},{r['N']})" for r in group)
        verdict = ("" if not fits else " -- reproduced" if len(fits) == 1 else
                   f" -- not determined: {len(fits)} candidates fit ({', '.join(fits[:6])}"
                   f"{', ...' if len(fits) > 6 else ''})")
        print(f"  {dt:8} {call:27} {mc:7} {shapes}: {best} {round(score[best])} of {n} "
              f"({100.0 * score[best] / n:.1f}%), {inf} elements tell candidates apart{verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def classes(rows):
    """Rows grouped by dtype, call and M: 1, 2-4, 5-15, 16 and more."""
    out = {}
    for r in rows:
        m = r["M"]
        mc = "M=1" if m == 1 else "M 2-4" if m <= 4 else "M 5-15" if m < 16 else "M>=16"
        out.setdefault((r["dtype"], r["call"], mc), []).append(r)
    return out


if __name__ == "__main__":
    sys.exit(main())
