#!/usr/bin/env python3
"""Which summation order PyTorch's CPU GEMM takes: candidate orders fitted
to PyTorch's own results, offline (numpy only).

    gemm_fit.py DUMP.npz [DUMP.npz ...] [--json FILE] [--only REGEX]

A dump holds PyTorch's results of CPU GEMMs (fp32: MKL's sgemm; bf16 and
fp16: oneDNN) for three calls: `lin` F.linear(x, w) (x @ w.t(), the
weight a transposed view: sgemm's 'T','N'), `mmc` torch.mm(x,
w.t().contiguous()) ('N','N') and `linb` F.linear(x, w, b) (addmm, the
bias as C with beta 1).  Two layouts are read:

  the first gather's: x_/w_/lin_/mmc_<dtype>_<M>_<K>_<N> (inputs and
  results as float32) and canc_x_<K>/canc_y_<K> (fp32 cancellation rows
  through F.linear against ones(4, K));
  gemm_fit_torch.py's: gen_<dtype>_<call>_<M>_<K>_<N> (PyTorch's result
  at columns cols_<...>, inputs regenerated here from seed_<...> by
  hash_inputs) and cy_<dtype>_<call>_<M>_<K>_<N> (cancellation rows
  described by cpq_<...>: p, q and the window [w0, w1) of small terms;
  the rows reach PyTorch M at a time, against ones(N, K)).

A cancellation row holds +S at p, -S at q and s at the window's other
positions (fp32, bf16: S = 2^30, s = 2^-30; fp16: 2^15, 2^-12), 0
elsewhere: the result counts the small terms that reach the sum after
the spikes cancel, so it shows which partial sums each product enters.

Every candidate order is emulated exactly (fp32 fused multiply-adds and
additions, each rounded once; bf16/fp16 products are exact in fp32, the
sum rounds once to the dtype) and compared bit for bit with every
element.  Candidates:

  seq               bitprobe's fixed order: acc = fma(a_k, b_k, acc), k
                    ascending, from +0
  seq-nofma         the products rounded first, then added left to right
  pairwise          rounded products, sum(x[:n/2]) + sum(x[n/2:])
  kblock-B          K in blocks of B (4..1024), each an fma chain from +0,
                    the block sums added in order
  panel384          K panels of 384, the last full panel and the rest
                    balanced into two halves (K = 1024: 384, 320, 320),
                    each an fma chain from +0, C = panel 0, C += panel i
                    (MKL's sgemm, fitted: src/backends/cpu/mkl_sgemm.c)
  lanes-V-TREE      V fma accumulators (lane = k mod V), then a tree:
                    halves (lane i + lane i + V/2, ...), pairs (2i + 2i+1,
                    ...), inorder (left to right)
  dot16             16 accumulators (lane = k mod 16) over the whole K; the
                    four 4-lane quarters added in order, then (l0 + l1) +
                    (l2 + l3) (MKL's sgemm 'T','N' for n = 2..4, fitted)
  dpbf16-EO, -OE    16 lanes fed pairs of k as VDPBF16PS does (lane l of
                    step s: k = 32s + 2l, 2l + 1), the pair's products
                    added even-then-odd or odd-then-even, halves tree
With a bias (linb) each candidate is tried with the bias added last and,
for the blocked ones, as C's first value (C = bias, C += block i).

The report: per shape, the candidates that match every element; then per
class (dtype, call, M: 1, 2-4, 5-15, 16 and more) the candidate matching
most elements with its fraction, and how many elements tell the
candidates apart at all (a bf16 result rounds most differences away:
a class where few do is not determined, whatever fits).
"""
import argparse
import json
import re
import sys

import numpy as np

F32, F64 = np.float32, np.float64
BLOCKS = (4, 8, 16, 32, 64, 128, 256, 384, 512, 1024)


# ---- inputs both sides regenerate -------------------------------------

def hash_uniform(seed, idx):
    """Values in [-1, 1) with 24-bit significands, one per index, from
    splitmix64 of (seed << 32) + index: exact in fp32, the same in numpy
    everywhere (an int n stands for indices 0..n-1)."""
    idx = np.arange(idx, dtype=np.uint64) if np.isscalar(idx) else np.asarray(idx, np.uint64)
    with np.errstate(over="ignore"):
        z = (np.uint64(seed) << np.uint64(32)) + idx + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.int64) - (1 << 23)
    return (u.astype(F64) / (1 << 23)).astype(F32)


def hash_inputs(seed, m, k, n, dt, wrows=None):
    """x [m, k], w [n, k] (scaled by 2^-4; only the rows wrows when given)
    and bias [n] (by 2^-2), rounded to dt: what gemm_fit_torch.py feeds
    PyTorch."""
    rows = np.arange(n) if wrows is None else np.asarray(wrows)
    x = hash_uniform(seed, m * k).reshape(m, k)
    widx = (rows.astype(np.uint64)[:, None] * np.uint64(k) + np.arange(k, dtype=np.uint64)).reshape(-1)
    w = (hash_uniform(seed + 1, widx) * F32(1 / 16)).reshape(len(rows), k)
    b = hash_uniform(seed + 2, n)[rows] * F32(0.25)
    return to_dtype(x, dt), to_dtype(w, dt), to_dtype(b, dt)


SPIKES = {"float32": (2.0 ** 30, 2.0 ** -30), "bfloat16": (2.0 ** 30, 2.0 ** -30),
          "float16": (2.0 ** 15, 2.0 ** -12)}


def canc_rows(pq, k, dt):
    """The cancellation rows cpq describes: [R, k] float32."""
    big, small = SPIKES[dt]
    x = np.zeros((len(pq), k), F32)
    for r, (p, q, w0, w1) in enumerate(pq):
        x[r, w0:w1] = small
        x[r, p] = big
        x[r, q] = -big
    return x


def to_dtype(v, dt):
    """float32 values rounded once to bf16 or fp16 (nearest even), back
    as float32; fp32 unchanged."""
    v = np.asarray(v, F32)
    if dt == "float32":
        return v
    if dt == "float16":
        return v.astype(np.float16).astype(F32)
    u = v.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(F32)


# ---- exact fp32 arithmetic --------------------------------------------

def _round_fix(s, e):
    """s (double) rounded to float32 as the exact s + e rounds."""
    r = s.astype(F32)
    d = s - r.astype(F64)
    n = np.nextafter(r, np.where(d > 0, F32(np.inf), F32(-np.inf)))
    tie = (d != 0) & ((n.astype(F64) - s) == d)
    past = tie & (e != 0) & (np.sign(e) == np.sign(d))
    return np.where(past, n, r)


def fma32(a, b, c):
    """round32(a * b + c) exactly: the product is exact in double; the
    sum's rounding error (TwoSum) settles a double rounding at a tie."""
    p = a.astype(F64) * b.astype(F64)
    c64 = c.astype(F64)
    s = p + c64
    bb = s - p
    return _round_fix(s, (p - (s - bb)) + (c64 - bb))


def add32(a, b):
    a64, b64 = a.astype(F64), b.astype(F64)
    s = a64 + b64
    bb = s - a64
    return _round_fix(s, (a64 - (s - bb)) + (b64 - bb))


def mul32(a, b):
    return (a.astype(F64) * b.astype(F64)).astype(F32)


# ---- candidate orders -------------------------------------------------

def panel384_bounds(k, kc=384):
    """K panels of kc; where K > kc is not a multiple of kc, the last full
    panel and the rest split into two halves (an odd count: the first
    half the smaller)."""
    full, rest = divmod(k, kc)
    if k <= kc or rest == 0:
        return [(s, min(k, s + kc)) for s in range(0, k, kc)]
    out = [(i * kc, (i + 1) * kc) for i in range(full - 1)]
    s = (full - 1) * kc
    h = (k - s) // 2
    return out + [(s, s + h), (s + h, k)]


class Operands:
    """Element e's operands are row ia[e] of A and row ib[e] of B (both
    [*, K] float32): gathered a column at a time."""

    def __init__(self, A, ia, B, ib):
        self.A, self.ia, self.B, self.ib = A, ia, B, ib
        self.E, self.K = len(ia), A.shape[1]

    def col(self, k):
        return self.A[self.ia, k], self.B[self.ib, k]

    def cols(self, s, e):
        return self.A[self.ia, s:e], self.B[self.ib, s:e]


def blocked(ops, starts, c0):
    """Every blocked candidate at once: column j restarts its fma chain at
    the k in starts[j], adding the finished block into C (C = c0 or the
    first block).  Returns [E, J]."""
    E, K = ops.E, ops.K
    J = len(starts)
    restart = np.zeros((K + 1, J), bool)
    for j, st in enumerate(starts):
        restart[list(st), j] = True
        restart[K, j] = True
    acc = np.zeros((E, J), F32)
    c = np.tile(c0[:, None], (1, J)) if c0 is not None else None
    have = np.zeros(J, bool) if c0 is None else np.ones(J, bool)
    for k in range(K + 1):
        r = restart[k] if k else np.zeros(J, bool)
        if r.any():
            if c is None:
                c = np.zeros((E, J), F32)
            first = r & ~have
            later = r & have
            c[:, first] = acc[:, first]
            if later.any():
                c[:, later] = add32(c[:, later], acc[:, later])
            have |= r
            acc[:, r] = 0
        if k < K:
            a, b = ops.col(k)
            acc = fma32(a[:, None], b[:, None], acc)
    return c


def lanes(ops, v):
    acc = np.zeros((ops.E, v), F32)
    for s in range(0, ops.K, v):
        a, b = ops.cols(s, min(ops.K, s + v))
        w = a.shape[1]
        acc[:, :w] = fma32(a, b, acc[:, :w])
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


def dot16_tree(acc):
    q = acc[:, 0:4]
    for j in (1, 2, 3):
        q = add32(q, acc[:, 4 * j:4 * j + 4])
    return add32(add32(q[:, 0], q[:, 1]), add32(q[:, 2], q[:, 3]))


def dpbf16(ops, odd_first):
    acc = np.zeros((ops.E, 16), F32)
    for s in range(0, ops.K, 32):
        a, b = ops.cols(s, min(ops.K, s + 32))
        p = mul32(a, b)
        if p.shape[1] < 32:
            p = np.concatenate([p, np.zeros((ops.E, 32 - p.shape[1]), F32)], 1)
        p = p.reshape(ops.E, 16, 2)
        first, second = (p[:, :, 1], p[:, :, 0]) if odd_first else (p[:, :, 0], p[:, :, 1])
        acc = add32(add32(acc, first), second)
    return tree(acc, "halves")


def pairwise(p):
    if p.shape[1] == 1:
        return p[:, 0]
    h = p.shape[1] // 2
    return add32(pairwise(p[:, :h]), pairwise(p[:, h:]))


def evaluate(ops, bias=None):
    """Every candidate's fp32 result for each element: {name: [E]}."""
    K = ops.K
    names, starts = ["seq"], [[0]]
    for bs in BLOCKS:
        if bs < K:
            names.append(f"kblock-{bs}")
            starts.append(list(range(0, K, bs)))
    names.append("panel384")
    starts.append([s for s, _ in panel384_bounds(K)])
    out = {}
    c = blocked(ops, starts, None)
    for j, n in enumerate(names):
        out[n] = c[:, j]
    if bias is not None:
        c = blocked(ops, starts, bias)
        for j, n in enumerate(names):
            out[n + "+bias-first"] = c[:, j]
    acc = np.zeros(ops.E, F32)
    for k in range(K):
        a, b = ops.col(k)
        acc = add32(acc, mul32(a, b))
    out["seq-nofma"] = acc
    if ops.E * K <= 1 << 24:
        a, b = ops.cols(0, K)
        out["pairwise"] = pairwise(mul32(a, b))
    for v in (8, 16, 32, 64):
        acc = lanes(ops, v)
        for how in ("halves", "pairs", "inorder"):
            out[f"lanes-{v}-{how}"] = tree(acc, how)
        if v == 16:
            out["dot16"] = dot16_tree(acc)
    out["dpbf16-EO"] = dpbf16(ops, False)
    out["dpbf16-OE"] = dpbf16(ops, True)
    if bias is not None:  # one final addition: first or last is the same
        out = {n if n.endswith("+bias-first") else n + "+bias-last":
               v if n.endswith("+bias-first") else add32(v, bias) for n, v in out.items()}
    return out


# ---- the dumps ----------------------------------------------------------

def same_bits(x, y):
    return x.view(np.uint32) == y.view(np.uint32)


def score(row, outs, want, dt):
    res, bits = {}, []
    for name, v in outs.items():
        got = to_dtype(v, dt)
        res[name] = float(same_bits(got, want).mean())
        bits.append(got.view(np.uint32))
    row["match"] = res
    row["elements"] = int(want.size)
    row["informative"] = int(np.any([b != bits[0] for b in bits[1:]], axis=0).sum())
    return row


DT = {"torch.float32": "float32", "torch.bfloat16": "bfloat16", "torch.float16": "float16",
      "float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}
OLD = re.compile(r"^(lin|mmc)_(torch\.\w+)_(\d+)_(\d+)_(\d+)$")
GEN = re.compile(r"^gen_(\w+?)_(lin|mmc|linb)_(\d+)_(\d+)_(\d+)$")
CANC = re.compile(r"^cy_(\w+?)_(lin|mmc)_(\d+)_(\d+)_(\d+)$")
CALLS = {"lin": "TN (F.linear)", "mmc": "NN (mm, contiguous)", "linb": "TN+bias (F.linear, b)"}


def fit_dump(path, rows, only):
    d = np.load(path)
    tag = path.rsplit("/", 1)[-1]
    done = {}  # lin and mmc multiply the same inputs: one evaluation
    for key in sorted(d.files):
        if only and not re.search(only, key):
            continue
        m = OLD.match(key)
        if m:
            call, dt, M, K, N = m.group(1), DT[m.group(2)], *map(int, m.groups()[2:])
            suffix = key[len(call):]
            x, w = d["x" + suffix].astype(F32), d["w" + suffix].astype(F32)
            ia, ib = np.repeat(np.arange(M), N), np.tile(np.arange(N), M)
            outs = evaluate(Operands(x, ia, w, ib))
            rows.append(score({"dump": tag, "kind": "random", "call": CALLS[call], "dtype": dt,
                               "M": M, "K": K, "N": N}, outs, d[key].astype(F32).reshape(-1), dt))
            continue
        m = re.match(r"^canc_x_(\d+)$", key)
        if m:
            K = int(m.group(1))
            X = d[key].astype(F32)
            ones = np.ones((1, K), F32)
            outs = evaluate(Operands(X, np.arange(len(X)), ones, np.zeros(len(X), int)))
            rows.append(score({"dump": tag, "kind": "cancellation", "call": CALLS["lin"],
                               "dtype": "float32", "M": int(X.shape[0]), "K": K,
                               "N": int(d[f"canc_y_{K}"].shape[1])}, outs,
                              d[f"canc_y_{K}"].astype(F32)[:, 0], "float32"))
            continue
        m = GEN.match(key)
        if m:
            dt, call, M, K, N = DT[m.group(1)], m.group(2), *map(int, m.groups()[2:])
            rest = key[4:]
            seed = int(d["seed_" + rest])
            cols = d["cols_" + rest].astype(int)
            memo = (seed, dt, M, K, N, tuple(cols), call == "linb")
            if memo not in done:
                x, w, b = hash_inputs(seed, M, K, N, dt, cols)
                ia, ib = np.repeat(np.arange(M), len(cols)), np.tile(np.arange(len(cols)), M)
                done[memo] = evaluate(Operands(x, ia, w, ib), b[ib] if call == "linb" else None)
            outs = done[memo]
            rows.append(score({"dump": tag, "kind": "random", "call": CALLS[call], "dtype": dt,
                               "M": M, "K": K, "N": N}, outs, d[key].astype(F32).reshape(-1), dt))
            continue
        m = CANC.match(key)
        if m:
            dt, call, M, K, N = DT[m.group(1)], m.group(2), *map(int, m.groups()[2:])
            pq = d["cpq_" + key[3:]]
            X = canc_rows(pq, K, dt)
            y = d[key].astype(F32)
            ones = np.ones((1, K), F32)
            R, C = y.shape
            ia, ib = np.repeat(np.arange(R), C), np.zeros(R * C, int)
            outs = evaluate(Operands(X, ia, ones, ib))
            rows.append(score({"dump": tag, "kind": "cancellation", "call": CALLS[call], "dtype": dt,
                               "M": M, "K": K, "N": N}, outs, y.reshape(-1), dt))


def st_write(path, tensors, meta):
    """A safetensors file of float32 arrays (name -> array), with metadata."""
    head, off, blobs = {"__metadata__": meta}, 0, []
    for name, v in tensors.items():
        b = np.ascontiguousarray(v, F32).tobytes()
        head[name] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(head).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


REGRESS = "fid-gemm-mkl-matmul-fp32-cpu"


def write_regress(dump, out):
    """The regression probe REGRESS from the first gather's fp32 results:
    F.linear (a transposed view: 'T','N') and mm on the contiguous copy
    ('N','N') for (4, 256, 16) (dot16; a single panel) and (16, 1024, 32)
    (K panels 384, 320, 320), written as matmul of a transpose, as the
    `linear` op (x of 2-D, and of 3-D: F.linear folds it to the same
    sgemm) and as `addmm` on a zero input (beta 1: C = 0 first, exact),
    inputs loaded, PyTorch's bits beside (F.linear's for all but mm's)."""
    d = np.load(dump)
    ops, outs, inputs, bits = [], [], {}, {}
    for m, k, n in ((4, 256, 16), (16, 1024, 32)):
        sfx = f"torch.float32_{m}_{k}_{n}"
        x, w = d["x_" + sfx].astype(F32), d["w_" + sfx].astype(F32)
        lin = d["lin_" + sfx].astype(F32)
        t = f"{m}"
        inputs.update({f"x{t}": x, f"w{t}": w, f"wc{t}": np.ascontiguousarray(w.T)})
        ops += [f"  - {{out: x{t}, op: load, dtype: fp32, shape: [{m}, {k}]}}",
                f"  - {{out: w{t}, op: load, dtype: fp32, shape: [{n}, {k}]}}",
                f"  - {{out: wt{t}, op: transpose, a: w{t}, dim0: 0, dim1: 1}}",
                f"  - {{out: lin{t}, op: matmul, a: x{t}, b: wt{t}}}",
                f"  - {{out: wc{t}, op: load, dtype: fp32, shape: [{k}, {n}]}}",
                f"  - {{out: mmc{t}, op: matmul, a: x{t}, b: wc{t}}}",
                f"  - {{out: flin{t}, op: linear, inputs: [x{t}, w{t}]}}",
                f"  - {{out: x3d{t}, op: reshape, a: x{t}, shape: [2, {m // 2}, {k}]}}",
                f"  - {{out: flin3d{t}, op: linear, inputs: [x3d{t}, w{t}]}}",
                f"  - {{out: zero{t}, op: zeros, shape: [{n}]}}",
                f"  - {{out: addmm{t}, op: addmm, inputs: [zero{t}, x{t}, wt{t}]}}"]
        outs += [f"  - {{name: {o}{t}}}" for o in ("lin", "mmc", "flin", "flin3d", "addmm")]
        bits[f"lin{t}.fp32"] = lin
        bits[f"mmc{t}.fp32"] = d["mmc_" + sfx].astype(F32)
        bits[f"flin{t}.fp32"] = lin
        bits[f"flin3d{t}.fp32"] = lin.reshape(2, m // 2, n)
        bits[f"addmm{t}.fp32"] = lin
    why = ("PyTorch 2.11's CPU F.linear(x, w) and torch.mm(x, w.t().contiguous()), fp32: MKL "
           "2024.2's sgemm, AVX-512 path, one thread (the same bits under ATEN_CPU_CAPABILITY "
           "avx512 and avx2)")
    with open(f"{out}/{REGRESS}.yaml", "w") as f:
        f.write(f"# fidelity regression (tests/refs/gemm_fit.py --regress): {why}\n"
                f"name: {REGRESS}\n"
                "description: \"fidelity regression: x @ w.t(), x @ (contiguous w.t()), "
                "F.linear(x, w) of 2-D and 3-D x and addmm(0, x, w.t()) in fp32 on cpu, MKL's "
                "sgemm orders (dot16 for M 2-4 with the weight transposed, K panels of 384 "
                "otherwise)\"\n"
                "dtypes: [fp32]\nops:\n" + "\n".join(ops) + "\noutputs:\n" + "\n".join(outs) + "\n")
    st_write(f"{out}/{REGRESS}.safetensors", inputs, {"origin": why})
    st_write(f"{out}/{REGRESS}.cpu-avx2+mkl-avx512.safetensors", bits,
             {"device": "cpu avx2 (MKL avx512)", "origin": why, "torch": "2.11.0"})
    print(f"wrote {out}/{REGRESS}.yaml, its inputs and PyTorch's bits")


def classes(rows):
    """Rows grouped by dtype, call and M: 1, 2-4, 5-15, 16 and more."""
    out = {}
    for r in rows:
        m = r["M"]
        mc = "M=1" if m == 1 else "M 2-4" if m <= 4 else "M 5-15" if m < 16 else "M>=16"
        out.setdefault((r["dump"], r["dtype"], r["call"], mc), []).append(r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump", nargs="+")
    ap.add_argument("--json", help="write every row's match fractions here")
    ap.add_argument("--only", help="fit only the keys matching this regular expression")
    ap.add_argument("--regress", metavar="DIR",
                    help=f"write the regression probe {REGRESS} from the (first) dump into DIR "
                         "and stop")
    args = ap.parse_args()
    if args.regress:
        write_regress(args.dump[0], args.regress)
        return 0
    rows = []
    for p in args.dump:
        fit_dump(p, rows, args.only)
    for r in rows:
        fits = [n for n, v in r["match"].items() if v == 1.0]
        top = sorted(r["match"].items(), key=lambda t: -t[1])[:3]
        print(f"{r['dump']}: {r['dtype']:8} {r['call']:22} {r['kind']:12} M={r['M']:<4} K={r['K']:<6} "
              f"N={r['N']:<5} {r['elements']:5} elements ({r['informative']} telling): " +
              (f"fits {', '.join(fits)}" if fits else
               "no candidate fits; best " + ", ".join(f"{n} {v:.3f}" for n, v in top)))
    print()
    print("per class (dump, dtype, call, M): the candidate matching most elements over its shapes")
    for (dump, dt, call, mc), group in sorted(classes(rows).items()):
        n = sum(r["elements"] for r in group)
        names = [c for c in group[0]["match"] if all(c in r["match"] for r in group)]
        got = {c: sum(r["match"][c] * r["elements"] for r in group) for c in names}
        best = max(got, key=got.get)
        fits = [c for c, v in got.items() if round(v) == n]
        tell = sum(r["informative"] for r in group)
        shapes = " ".join(f"({r['M']},{r['K']},{r['N']}{'c' if r['kind'] == 'cancellation' else ''})"
                          for r in group)
        verdict = ("" if not fits else " -- reproduced" if len(fits) == 1 else
                   f" -- not determined: {len(fits)} candidates fit ({', '.join(fits[:5])}"
                   f"{', ...' if len(fits) > 5 else ''})")
        print(f"  {dump} {dt:8} {call:22} {mc:6} {shapes}: {best} {round(got[best])} of {n} "
              f"({100.0 * got[best] / n:.1f}%), {tell} telling{verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
