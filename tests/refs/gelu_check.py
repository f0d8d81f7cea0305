#!/usr/bin/env python3
"""GELU's exact form on the CPU against PyTorch, as users call it:
F.gelu(x) on x normal(0, 3) of every length in 1..N, fp32, bf16 and fp16.

    gelu_check.py --bitprobe B [--max-len N] [--every K] [--seed S] [--std S]
                  [--bitprobe-arg ARG]... [--regress DIR]

bitprobe draws the inputs (its own normal stream, a probe per chunk of
lengths), computes gelu with --save --intermediates, and this script
replays F.gelu on bitprobe's inputs in this PyTorch, in this process's
environment: ATEN_CPU_CAPABILITY picks ATen's kernels, ONEDNN_MAX_CPU_ISA
caps oneDNN's, and bitprobe resolves both the same way (--cpu-isa and
--onednn-isa auto) unless --bitprobe-arg says otherwise.  One element takes
ATen's scalar lambda, more go to oneDNN where PyTorch sends them
(Activation.cpp use_mkldnn).  Lengths 1..N one by one (--every K: every
K-th beyond 256).  --std 3e-38 puts half of the results below FLT_MIN
(oneDNN's bf16 store flushes those to zero where its conversion is
native).  Prints per dtype the outputs, elements and elements
that differ, and the first differences; exit 1 when any differ.

With --regress DIR, writes the regression probes fid-gelu-erf-normal3-fp32
and -lowp (bf16, fp16; lengths 1, 2, 17, 33, 4099) with this PyTorch's
bits into DIR (fuzz_min.save: tag cpu-ISA+onednn-LEVEL).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import torch

import fuzz_gen
import fuzz_min
import refio

DTYPES = ("fp32", "bf16", "fp16")
TORCH = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
CHUNK = 400  # lengths per probe


def spec(name, lengths, seed, std=3):
    ops, outs = [], []
    for i, n in enumerate(lengths):
        ops.append({"out": f"x{i}", "op": "normal", "shape": [n], "seed": seed, "stream": n,
                    "mean": 0, "std": std, "dtype": "$dtype"})
        ops.append({"out": f"y{i}", "op": "gelu", "a": f"x{i}"})
        outs.append(f"y{i}")
    return {"name": name, "description": f"F.gelu(x), x normal(0, {std:g}) of lengths " +
            f"{lengths[0]}..{lengths[-1]}", "dtypes": list(DTYPES), "ops": ops,
            "outputs": outs}


def bits(t):
    iv = torch.int32 if t.dtype == torch.float32 else torch.int16
    return t.contiguous().view(iv)


def check_chunk(args, lengths, work, counts, firsts):
    pd = os.path.join(work, "p")
    shutil.rmtree(pd, ignore_errors=True)
    os.makedirs(pd)
    sp = spec("gelu-n3", lengths, args.seed, args.std)
    fuzz_gen.write(sp, pd)
    bundle = os.path.join(work, "b")
    shutil.rmtree(bundle, ignore_errors=True)
    p = subprocess.run([args.bitprobe, "run", "--probes", pd, "--device", "cpu", "--no-golden",
                        "--save", bundle, "--intermediates", "--quiet", *args.bitprobe_arg],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"bitprobe failed: {p.stderr.strip()}")
    path = fuzz_min.fuzz_check.container(bundle, "gelu-n3", "cpu")
    data = refio.st_tensors(path)
    for d in DTYPES:
        for i, n in enumerate(lengths):
            x, mine = data[f"x{i}.{d}"], data[f"y{i}.{d}"]
            c = counts[d]
            try:
                t = torch.nn.functional.gelu(x)
            except RuntimeError as e:  # PyTorch 1.13: no fp16 gelu on the CPU
                c[3] = str(e).splitlines()[0]
                continue
            bad = (bits(t) != bits(mine)) & ~(t.isnan() & mine.isnan())
            c[0] += 1
            c[1] += n
            k = int(bad.sum())
            c[2] += k
            if k and len(firsts) < 10:
                j = int(bad.nonzero()[0])
                firsts.append(f"{d} length {n}: {k} differ; first [{j}] x = {float(x[j])!r}: "
                              f"bitprobe {float(mine[j])!r}, PyTorch {float(t[j])!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bitprobe", required=True)
    ap.add_argument("--max-len", type=int, default=10000)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--std", type=float, default=3.0)
    ap.add_argument("--bitprobe-arg", action="append", default=[])
    ap.add_argument("--regress")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.regress:
        lengths = [1, 2, 17, 33, 4099]
        ok = True
        for suffix, dts in (("fp32", ["fp32"]), ("lowp", ["bf16", "fp16"])):
            sp = dict(spec(f"fid-gelu-erf-normal3-{suffix}", lengths, args.seed), dtypes=dts)
            try:
                tags = fuzz_min.save(sp, sp["name"], args.regress, args.bitprobe,
                                     args.bitprobe_arg, ["cpu"],
                                     "gelu_check.py: F.gelu of normal(0, 3)", print)
            except RuntimeError as e:  # PyTorch 1.13: no fp16 gelu on the CPU
                print(f"{sp['name']}: PyTorch refused it: {str(e).splitlines()[0]}")
                continue
            print(f"{sp['name']}: PyTorch's bits written for {', '.join(tags) or 'nothing'}")
            ok = ok and bool(tags)
        return 0 if ok else 1
    lengths = [n for n in range(1, args.max_len + 1)
               if n <= 256 or n == args.max_len or n % args.every == 0]
    print(f"gelu_check: torch {torch.__version__}, ATen CPU capability {refio.cpu_capability()}; mkldnn "
          f"{'on' if torch.backends.mkldnn.enabled else 'off'}, ONEDNN_MAX_CPU_ISA="
          f"{os.environ.get('ONEDNN_MAX_CPU_ISA', '(unset)')}; bitprobe oneDNN ISA "
          f"{fuzz_min.onednn_isa(args.bitprobe, args.bitprobe_arg)}; "
          f"{len(lengths)} lengths 1..{args.max_len}, seed {args.seed}, normal(0, {args.std:g})")
    counts = {d: [0, 0, 0, None] for d in DTYPES}
    firsts = []
    work = tempfile.mkdtemp(prefix="bitprobe-gelu-")
    try:
        for k in range(0, len(lengths), CHUNK):
            check_chunk(args, lengths[k:k + CHUNK], work, counts, firsts)
    finally:
        shutil.rmtree(work)
    for d in DTYPES:
        o, e, n, why = counts[d]
        print(f"gelu {d}: {o} outputs, {e} elements, {n} differ" +
              (f" (PyTorch refused the rest: {why})" if why else ""))
    for f in firsts:
        print("  " + f)
    return 1 if any(c[2] for c in counts.values()) or not any(c[0] for c in counts.values()) \
        else 0


if __name__ == "__main__":
    sys.exit(main())
