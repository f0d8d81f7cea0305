#!/usr/bin/env python3
"""PyTorch's CPU GEMM results for gemm_fit.py to fit summation orders to.

    gemm_fit_torch.py --out FILE.npz [--threads T] [--quick]

PyTorch's x86 wheels take fp32 GEMMs from MKL's sgemm and bf16/fp16 from
oneDNN (ATen's CPUBlas.cpp gemm: mkldnn_bf16_gemm / mkldnn_fp16_gemm,
then sgemm_; LinearAlgebra.cpp addmm_impl_cpu_), in orders that depend on
the kernel each picks for the shape, the ISA (MKL_ENABLE_INSTRUCTIONS,
ONEDNN_MAX_CPU_ISA: ATEN_CPU_CAPABILITY does not reach them) and the
thread count.  For fp32, bf16 and fp16 this runs three calls (F.linear
on the weight's transposed view, torch.mm on a contiguous copy of it,
F.linear with a bias) over shapes of linear layers (M 1..64, K 256..16384,
N 256..4096) and writes into one npz:

  gen_<dtype>_<call>_<M>_<K>_<N>   PyTorch's result at the columns
                                   cols_<...> (as float32), inputs from
                                   seed_<...> (gemm_fit.hash_inputs: the
                                   fitter regenerates them bit for bit)
  cy_<dtype>_<call>_<M>_<K>_<N>    cancellation rows (gemm_fit.canc_rows
                                   of cpq_<...>: p, q, window) through
                                   the call, M rows at a time, against
                                   ones(N, K): first, middle and last
                                   columns
  meta                             JSON: versions, torch.__config__,
                                   threads, the ISA variables, MKL's and
                                   oneDNN's verbose lines for one call

--quick takes a few shapes (a smoke test); a full run takes about a
minute per thread count on a 16-core host.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_fit import canc_rows, hash_inputs  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# (M, K, N): every M of 1..64 that selects another kernel in the fits so
# far (1: gemv; 2-4: dot products; 16 up: packed panels) and between;
# K with each residue mod 384 (0, 128, 256) and odd ones; N up to 4096.
SHAPES = [
    (1, 256, 256), (1, 1024, 1024), (1, 4096, 4096), (1, 11008, 1024), (1, 16384, 256),
    (2, 384, 256), (2, 4096, 1024), (2, 16384, 512),
    (3, 1000, 1000), (3, 768, 4096),
    (4, 2048, 256), (4, 11008, 1024), (4, 1536, 2048),
    (5, 1024, 256), (6, 4096, 512), (8, 1024, 1024), (8, 16384, 256), (12, 768, 256),
    (15, 4096, 1024), (16, 384, 4096), (16, 4096, 1024), (24, 1000, 256), (32, 3072, 1024),
    (32, 11008, 512), (48, 2048, 2048), (64, 768, 4096), (64, 4096, 1024), (64, 16384, 256),
]
QUICK = [(1, 1024, 1024), (4, 2048, 256), (16, 4096, 1024)]
# cancellation rows for the classes not fitted yet: M 1 and 5-15 in fp32,
# every class in bf16/fp16
CANC = [("float32", "lin", 1, K) for K in (256, 1024, 4096, 16384)] + \
       [("float32", "lin", 8, K) for K in (1024, 4096)] + \
       [(dt, call, m, K) for dt in ("bfloat16", "float16") for call in ("lin", "mmc")
        for m in (1, 4, 16, 64) for K in (256, 1024, 4096)]
CANC_N = 256


def columns(n):
    """At most 48 columns: the first and last 16 and 16 between."""
    if n <= 48:
        return np.arange(n)
    mid = np.linspace(16, n - 17, 16).round().astype(int)
    return np.unique(np.concatenate([np.arange(16), mid, np.arange(n - 16, n)]))


def call(name, x, w, b):
    if name == "lin":
        return F.linear(x, w)
    if name == "mmc":
        return torch.mm(x, w.t().contiguous())
    return F.linear(x, w, b)


def pq_rows(k, m):
    """(p, q, w0, w1) rows: spikes on a grid and at the ends, each with
    the small terms over the whole row (fp32) or in windows of 255 around
    the later spike and the K-panel boundaries (bf16/fp16 results count
    exactly only up to 256)."""
    g = np.random.default_rng(k * 131 + m)
    ps = sorted(set(np.linspace(0, k - 1, 24).round().astype(int)) | {0, 1, 15, 16, 383, 384})
    ps = [p for p in ps if p < k]
    rows = []
    for p in ps:
        for q in (0, 7, 16, 31, 64, k // 2, k - 1, int(g.integers(k))):
            if q >= k or q == p:
                continue
            rows.append((p, q, 0, k))
            hi = max(p, q)
            for w0 in (max(0, hi - 128), int(g.integers(0, max(1, k - 255)))):
                rows.append((p, q, w0, min(k, w0 + 255)))
    while len(rows) % m:
        rows.append(rows[-1])
    return np.array(rows, np.int32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    env = {v: os.environ.get(v, "") for v in ("MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA",
                                              "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS",
                                              "MKL_CBWR")}
    meta = {"torch": torch.__version__, "config": torch.__config__.show(), "threads": args.threads,
            "env": env, "mkldnn": torch.backends.mkldnn.is_available(),
            "mkl": torch.backends.mkl.is_available(), "canc_n": CANC_N}
    outs = {}
    refused = []
    seed = 1
    for (m, k, n) in (QUICK if args.quick else SHAPES):
        seed += 3
        cols = columns(n)
        x32, w32, b32 = hash_inputs(seed, m, k, n, "float32")
        for dt, tdt in DTYPES.items():  # .to() rounds as gemm_fit.to_dtype does
            x, w, b = (torch.from_numpy(v).to(tdt) for v in (x32, w32, b32))
            for name in ("lin", "mmc", "linb"):
                key = f"{dt}_{name}_{m}_{k}_{n}"
                try:
                    y = call(name, x, w, b)
                except RuntimeError as e:  # PyTorch 1.13: no fp16 GEMM on the CPU
                    refused.append(f"{key}: {e}")
                    continue
                outs["gen_" + key] = y.float()[:, cols].numpy()
                outs["seed_" + key] = np.array(seed)
                outs["cols_" + key] = cols.astype(np.int32)
    for dt, name, m, k in CANC[:4] if args.quick else CANC:
        pq = pq_rows(k, m)
        tdt = DTYPES[dt]
        x = torch.from_numpy(canc_rows(pq, k, dt)).to(tdt)
        w = torch.ones(CANC_N, k, dtype=tdt)
        key = f"{dt}_{name}_{m}_{k}_{CANC_N}"
        try:
            y = torch.cat([call(name, x[s:s + m], w, None) for s in range(0, len(x), m)])
        except RuntimeError as e:
            refused.append(f"{key}: {e}")
            continue
        outs["cy_" + key] = y.float()[:, [0, CANC_N // 2, CANC_N - 1]].numpy()
        outs["cpq_" + key] = pq
    meta["refused"] = refused
    outs["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(args.out, **outs)
    print(f"gemm_fit_torch: torch {torch.__version__}, {args.threads} thread(s), "
          f"MKL_ENABLE_INSTRUCTIONS={env['MKL_ENABLE_INSTRUCTIONS'] or '(unset)'}, "
          f"ONEDNN_MAX_CPU_ISA={env['ONEDNN_MAX_CPU_ISA'] or '(unset)'}: "
          f"{sum(k.startswith('gen_') for k in outs)} results, "
          f"{sum(k.startswith('cy_') for k in outs)} cancellation sets, {len(refused)} refused "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
