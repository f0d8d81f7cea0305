#!/usr/bin/env python3
"""Can PyTorch's CPU GEMM order be reproduced?  Dumps and fits torch.mm's
summation order on cancellation probes, for the shapes of linear layers.

    gemm_fit_torch.py --out DIR [--threads T]

PyTorch's x86 wheels take fp32 GEMMs from MKL's sgemm and bf16/fp16 from
oneDNN (ATen's CPUBlas.cpp gemm: mkldnn_bf16_gemm / mkldnn_fp16_gemm
first, then cblas; at::mm's addmm_impl_cpu_), both closed to bitprobe's
replay: the order depends on the kernel each picks for the shape, the ISA
and the thread count.  A probe here is a row of A holding ones with +2^24
at position p and -2^24 at q (B all ones, or B's column j a one-hot at j),
so that C[i, j] counts the ones added after the two spikes cancel: which
partial sums a product enters, and in which order they are combined.
For each shape class (M 1..4096, K 64..16384, N 64..4096) and dtype
(fp32, bf16, fp16) it writes PyTorch's C for 64 (p, q) pairs to
DIR/gemm-M-K-N-dtype.safetensors (refio) and prints, per shape, whether
any candidate order fits every probe: bitprobe's (k ascending, one fma
each), V-lane accumulators (V = 4..64, lanes summed in order or as a
tree), and K panels of KC (128..1024) summed into C after each panel.  A
shape no candidate fits is one whose order bitprobe cannot claim; the
account's GEMM rows (fuzz_account.py) give how often such results differ.
"""
import argparse
import itertools
import os
import sys

import torch

import refio

SHAPES = [(1, 4096, 64), (7, 4096, 64), (16, 1024, 256), (128, 512, 512), (1, 16384, 64),
          (4, 16384, 16), (1024, 64, 64), (4096, 256, 32), (33, 2048, 128), (2, 11008, 32)]
SPIKE = 2.0 ** 24


def probes(k, n, m):
    """64 (p, q) spike pairs in rows of ones: A [64, K]."""
    g = torch.Generator().manual_seed(k)
    pq = torch.randint(0, k, (64, 2), generator=g)
    pq[:, 1] = torch.where(pq[:, 0] == pq[:, 1], (pq[:, 1] + 1) % k, pq[:, 1])
    a = torch.ones(64, k)
    a[torch.arange(64), pq[:, 0]] = SPIKE
    a[torch.arange(64), pq[:, 1]] = -SPIKE
    return a, pq


def lanes(a, v, tree):
    """Every row of a [R, K] summed in float: V accumulators, lane j taking
    k = j mod V in ascending k, then the lanes in order or as a tree."""
    r, k = a.shape
    pad = (-k) % v
    x = torch.cat([a, torch.zeros(r, pad)], 1).view(r, -1, v)
    acc = torch.zeros(r, v)
    for s in range(x.shape[1]):
        acc = acc + x[:, s]
    while tree and acc.shape[1] > 1:
        acc = acc[:, 0::2] + acc[:, 1::2]
    out = torch.zeros(r)
    for j in range(acc.shape[1]):
        out = out + acc[:, j]
    return out


def panels(a, kc, v):
    out = torch.zeros(a.shape[0])
    for s in range(0, a.shape[1], kc):
        out = out + lanes(a[:, s:s + kc], v, False)
    return out


def candidates(k):
    yield "bitprobe (k ascending)", lambda a: lanes(a, 1, False)
    for v, tree in itertools.product((4, 8, 16, 32, 64), (False, True)):
        yield f"{v} lanes, {'tree' if tree else 'in order'}", lambda a, v=v, t=tree: lanes(a, v, t)
    for kc, v in itertools.product((128, 256, 384, 512, 1024), (8, 16)):
        if kc < k:
            yield f"panels of {kc}, {v} lanes", lambda a, kc=kc, v=v: panels(a, kc, v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    print(f"gemm_fit: torch {torch.__version__}, ATen CPU capability {refio.cpu_capability()}, "
          f"MKL {torch.backends.mkl.is_available()}, mkldnn {torch.backends.mkldnn.enabled}, "
          f"{args.threads} thread(s)")
    fits_any = 0
    for (m, k, n), dt in itertools.product(SHAPES, (torch.float32, torch.bfloat16, torch.float16)):
        a, pq = probes(k, n, m)
        b = torch.ones(k, n).to(dt)
        try:  # 64 probe rows in products of M rows (M > 64: the rows repeated)
            rows = a if m <= 64 else a.repeat((m + 63) // 64, 1)[:m]
            c = torch.cat([torch.mm(rows[s:s + m].to(dt), b) for s in range(0, rows.shape[0], m)]
                          ).float()[:64]
            rows = rows[:64]
        except RuntimeError as e:  # PyTorch 1.13: no fp16 mm on the CPU
            print(f"  gemm-{m}-{k}-{n}-{str(dt)[6:]}: PyTorch refused it: {e}")
            continue
        name = f"gemm-{m}-{k}-{n}-{str(dt)[6:]}"
        refio.st_write(os.path.join(args.out, name + ".safetensors"),
                       {"a": rows.to(dt), "c": c.to(dt), "pq": pq[:rows.shape[0]]},
                       {"torch": torch.__version__, "threads": str(args.threads)})
        got = c[:, 0]
        fit = []
        if dt == torch.float32:  # the bf16/fp16 candidates would round B's products first
            for label, f in candidates(k):
                if torch.equal(f(rows), got):
                    fit.append(label)
        fits_any += bool(fit)
        print(f"  {name}: C[:, 0] over {len(got)} spike pairs: " +
              (f"fits {', '.join(fit)}" if fit else
               "no candidate fits (fp32)" if dt == torch.float32 else "dumped"))
    print(f"gemm_fit: {fits_any} of {len(SHAPES)} fp32 shapes fit a candidate order; the rest "
          f"are not PyTorch's bits in bitprobe (the 'not PyTorch's bits: MKL / oneDNN' status)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
