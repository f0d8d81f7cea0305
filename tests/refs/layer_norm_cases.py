#!/usr/bin/env python3
"""Which formulation this PyTorch's CPU layer_norm computes, case by case.

    python3 tests/refs/layer_norm_cases.py [--rows N]

ATen's CPU layer_norm (native/cpu/layer_norm_kernel.cpp) takes each row's
mean and variance from RowwiseMoments (native/cpu/moments_utils.h: a
Welford cascade over registers of 8 floats, 4 doubles or 16 bf16 values
read as two float halves), then a second pass.  Where GCC contracts a * b
+ c into an fma depends on the build, so each variant is emulated here
exactly (Fractions) and counted against PyTorch's own results on random
rows (means near 0 and near 1000, spreads from 2^-12 to 2^12, lengths
around the register and chunk sizes):

  moments DT fused|unfused  K of N    RowwiseMoments' mean and rstd
                                      (native_layer_norm's) equal the
                                      emulation with every a*b+c fused,
                                      or none (bitprobe: none)
  second DT FORM K of N                y equals the second pass FORM on
                                      PyTorch's own mean and rstd:
                                      new-fma / new-unfused: 2.x's
                                      (x + (-mean)) * rstd * w + b with the
                                      last multiply-add fused or not
                                      (bitprobe: new-fma); old-fma /
                                      old-unfused: 1.13's
                                      (x * rstd + (-rstd * mean)) * w + b
  bf16 moments-M second-S K of N      bf16 rows: the emulated moments and
                                      mixed-type second pass (float, one
                                      rounding to bf16) for M, S in fused,
                                      unfused (bitprobe: unfused, fused)

"moments DT bitprobe K of N" counts the rows whose mean and rstd equal
be_cpu_moments.c's model.  PyTorch 2.11 (x86 wheel, AVX-512 host, either
capability) gives "second
fp32 new-fma 150 of 150", "second fp64 new-fma 150 of 150" and, for the
moments, neither uniform model (fused V8: 140 and 133 of 150; unfused: 83
and 91): its build contracts some sites and not others, which
be_cpu_moments.c models (checked there against --dump files of 1,100 rows:
548 of 550 fp32 and 546 of 550 fp64 rows).  --dump writes the rows with
PyTorch's mean and rstd (and y) for such offline fits; --dump-only skips
the emulation, --lengths sets the row lengths.  Runs on the CPU only,
single-threaded.
"""
import argparse
import math
import os
import random
import sys
from fractions import Fraction

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_check  # noqa: E402

torch.set_num_threads(1)


def rounder(dt):
    """Exact rounding of a Fraction (or float) to fp32 or fp64."""
    return lambda q: fuzz_check.round_to(q, dt)


class Arith:
    """a + b, a * b, a / b and a * b + c (fused or not) in one dtype."""

    def __init__(self, dt, fused):
        self.r, self.fused = rounder(dt), fused

    def add(self, a, b):
        return self.r(Fraction(a) + Fraction(b))

    def sub(self, a, b):
        return self.r(Fraction(a) - Fraction(b))

    def mul(self, a, b):
        return self.r(Fraction(a) * Fraction(b))

    def div(self, a, b):
        return self.r(Fraction(a) / Fraction(b))

    def mad(self, a, b, c):
        return self.fma(a, b, c) if self.fused else self.mad_unfused(a, b, c)

    def fma(self, a, b, c):
        return self.r(Fraction(a) * Fraction(b) + Fraction(c))

    def mad_unfused(self, a, b, c):
        return self.add(self.mul(a, b), c)


def ceil_log2(x):
    return 1 if x <= 2 else (x - 1).bit_length()


def moments(x, ar, V, halves, bp=False):
    """RowwiseMomentsImpl on the values x (opmath floats), V lanes, each
    register of V * halves values; returns (mean, biased variance).  With
    bp, contracted as be_cpu_moments.c says PyTorch 2.11's build does
    (ar.fused is then ignored)."""
    N, W = len(x), V * halves
    n = N // W
    m = (n + 15) // 16
    depth = ceil_log2(m)
    s0 = [0] * depth
    s1 = [[0.0] * V for _ in range(depth)]
    s2 = [[0.0] * V for _ in range(depth)]
    recip = [ar.div(1, j + 1) for j in range(16)]

    def merge(n1, a1, b1, k, a0, b0, lanes):
        nn = k + n1
        c = 0.0 if nn == 0 else ar.div(n1, nn)
        for l in range(lanes):
            delta = ar.sub(a1[l], a0[l])
            if not bp:
                a0[l] = ar.mad(c, delta, a0[l])
                b0[l] = ar.add(b0[l], ar.mad(ar.mul(ar.mul(delta, delta), c), k, b1[l]))
            elif lanes > 1:  # AddMomentsVec (the lanes' final merges take one)
                cd = ar.mul(c, delta)
                a0[l] = ar.add(a0[l], cd)
                b0[l] = ar.fma(ar.mul(delta, k), cd, ar.add(b0[l], b1[l]))
            else:  # the scalar AddMoments of the lanes
                a0[l] = ar.fma(c, delta, a0[l])
                b0[l] = ar.add(b0[l], ar.fma(ar.mul(ar.mul(delta, delta), c), k, b1[l]))
        return nn

    chunk_mad = ar.fma if bp else ar.mad

    for i in range(m):
        base, cnt = i * 16 * W, min(16, n - i * 16)
        for h in range(halves):
            a, b = [0.0] * V, [0.0] * V
            for j in range(cnt):
                for l in range(V):
                    v = x[base + j * W + h * V + l]
                    d = ar.sub(v, a[l])
                    a[l] = chunk_mad(d, recip[j], a[l])
                    b[l] = chunk_mad(d, ar.sub(v, a[l]), b[l])
            s0[0] = merge(cnt, a, b, s0[0], s1[0], s2[0], V)
        mask, j = i + 1, 1
        while j < depth and mask & 1 == 0:
            s0[j] = merge(s0[j - 1], s1[j - 1], s2[j - 1], s0[j], s1[j], s2[j], V)
            s0[j - 1], s1[j - 1], s2[j - 1] = 0, [0.0] * V, [0.0] * V
            mask >>= 1
            j += 1
    for j in range(1, depth):
        s0[0] = merge(s0[j], s1[j], s2[j], s0[0], s1[0], s2[0], V)
    k, A, B = 0, [0.0], [0.0]
    for i in range(n * W, N):
        d = ar.sub(x[i], A[0])
        k += 1
        A[0] = ar.add(A[0], ar.div(d, k))
        if bp:  # fused for fp16 only, which this script does not draw
            B[0] = ar.mad_unfused(d, ar.sub(x[i], A[0]), B[0])
        else:
            B[0] = ar.mad(d, ar.sub(x[i], A[0]), B[0])
    for l in range(V):
        k = merge(n * W // V, [s1[0][l]], [s2[0][l]], k, A, B, 1)
    return A[0], ar.div(B[0], N)


LENGTHS = [3, 8, 9, 16, 17, 31, 40, 64, 100, 129, 257, 300]


def rows(rng, count, dt):
    out = []
    for i in range(count):
        n = rng.choice(LENGTHS)
        off = rng.choice([0.0, 1000.0, -37.0])
        vals = [off + rng.choice([-1, 1]) * rng.uniform(1, 2) * 2.0 ** rng.randint(-12, 12)
                for _ in range(n)]
        x = torch.tensor(vals, dtype=torch.float64).to(dt)
        w = torch.tensor([rng.uniform(0.5, 1.5) for _ in range(n)], dtype=torch.float64).to(dt)
        b = torch.tensor([rng.uniform(-0.1, 0.1) for _ in range(n)], dtype=torch.float64).to(dt)
        out.append((x, w, b))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=60)
    ap.add_argument("--lengths", help="row lengths to draw from, comma-separated "
                    f"(default {','.join(map(str, LENGTHS))})")
    ap.add_argument("--dump-only", action="store_true",
                    help="with --dump: PyTorch's results only, no emulation")
    ap.add_argument("--dump", help="write every row, with PyTorch's mean, rstd and y, "
                    "as JSON (hex floats) to this file")
    args = ap.parse_args()
    if args.lengths:
        LENGTHS[:] = [int(v) for v in args.lengths.split(",")]
    dump = []
    print(f"layer_norm_cases: torch {torch.__version__}")
    rng = random.Random(2026)
    cap = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", lambda: "unknown")()
    print(f"layer_norm_cases: CPU capability {cap}")
    for dt, name, V in ((torch.float32, "fp32", 8), (torch.float64, "fp64", 4)):
        data = rows(rng, args.rows, dt)
        keys = [f"{f} V{v}" for f in ("fused", "unfused") for v in (V, 2 * V)] + ["bitprobe"]
        hit = {k: 0 for k in keys + ["new-fma", "new-unfused", "old-fma", "old-unfused"]}
        for x, w, b in data:
            y, mean, rstd = torch.native_layer_norm(x[None], [x.numel()], w, b, 1e-5)
            mu, rs = float(mean.reshape(-1)[0]), float(rstd.reshape(-1)[0])
            xs = x.tolist()
            row = {"dtype": name, "x": [float(v).hex() for v in xs], "mean": mu.hex(),
                   "rstd": rs.hex()}
            if not args.dump_only:
                row.update({"w": [float(v).hex() for v in w.tolist()],
                            "b": [float(v).hex() for v in b.tolist()],
                            "y": [float(v).hex() for v in y.reshape(-1).tolist()]})
            dump.append(row)
            if args.dump_only:
                continue
            for fused in (True, False):
                for v in (V, 2 * V):
                    ar = Arith(dt, fused)
                    m, var = moments(xs, ar, v, 1)
                    r = ar.div(1, ar.r(Fraction(math.sqrt(ar.add(var, float(torch.tensor(
                        1e-5, dtype=dt)))))))
                    if m == mu and r == rs:
                        hit[f"{'fused' if fused else 'unfused'} V{v}"] += 1
            ar = Arith(dt, False)
            m, var = moments(xs, ar, V, 1, bp=True)
            r = ar.div(1, ar.r(Fraction(math.sqrt(ar.add(var, float(torch.tensor(
                1e-5, dtype=dt)))))))
            hit["bitprobe"] += m == mu and r == rs
            ys, ws, bs = y.reshape(-1).tolist(), w.tolist(), b.tolist()
            for form in ("new-fma", "new-unfused", "old-fma", "old-unfused"):
                ar = Arith(dt, form.endswith("fma"))
                ok = True
                for j, v in enumerate(xs):
                    if form.startswith("new"):
                        t = ar.mul(ar.sub(v, mu), rs)
                    else:
                        t = ar.mad(v, rs, ar.mul(-rs, mu))
                    if ar.mad(t, ws[j], bs[j]) != ys[j]:
                        ok = False
                        break
                hit[form] += ok
        for k in keys:
            print(f"moments {name} {k} {hit[k]} of {len(data)}")
        for form in ("new-fma", "new-unfused", "old-fma", "old-unfused"):
            print(f"second {name} {form} {hit[form]} of {len(data)}")
    try:
        if args.dump_only:
            raise StopIteration
        data = rows(rng, args.rows, torch.bfloat16)
        hit = {}
        for x, w, b in data:
            y = torch.nn.functional.layer_norm(x[None], [x.numel()], w, b, 1e-5).reshape(-1)
            xs = x.float().tolist()
            for mf, V in ((True, 8), (False, 8), (True, 16), (False, 16), ("bitprobe", 8)):
                ar = Arith(torch.float32, mf is True)
                m, var = moments(xs, ar, V, 2, bp=mf == "bitprobe")
                rs = ar.div(1, ar.r(Fraction(math.sqrt(ar.add(var, float(torch.tensor(
                    1e-5, dtype=torch.float32)))))))
                bias = ar.mul(-rs, m)
                for sf in (True, False):
                    a2 = Arith(torch.float32, sf)
                    got = [a2.mad(a2.mad(v, rs, bias), float(w[j]), float(b[j]))
                           for j, v in enumerate(xs)]
                    want = torch.tensor(got, dtype=torch.float32).to(torch.bfloat16)
                    key = (mf, V, sf)
                    hit[key] = hit.get(key, 0) + bool(torch.equal(want.view(torch.int16),
                                                                  y.view(torch.int16)))
        for (mf, V, sf), k in sorted(hit.items(), key=str, reverse=True):
            print(f"bf16 moments-{mf if isinstance(mf, str) else 'fused' if mf else 'unfused'}-V{V} "
                  f"second-{'fused' if sf else 'unfused'} {k} of {len(data)}")
    except StopIteration:
        pass
    except RuntimeError as e:
        print(f"bf16: this PyTorch cannot: {str(e).splitlines()[0]}")
    if args.dump:
        import json
        with open(args.dump, "w") as fh:
            json.dump({"torch": torch.__version__, "capability": cap, "rows": dump}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
