#!/usr/bin/env python3
"""Reductions on order-sensitive values, bitprobe against this PyTorch.

    order_torch.py --bitprobe B [--seed S] [--probes N] [--ops sum,...]
                   [--devices cpu] [--bitprobe-arg A] [--aten-cpu-capability C]
                   [--out DIR]

The random fuzzer's values rarely tell one summation order from another:
sums of bf16 values in float are mostly exact, and a rounding that depends
on the order hides under the final rounding to the dtype.  This draws
probes whose tensors are spikes (+-2^11 .. 2^26, in fp16's range for fp16)
among small integers, or values spread over 2^-20 .. 2^20, in shapes that
reach each loop of ATen's kernels (rows shorter and longer than a
register, a register's multiples and tails, inner axes narrower and wider
than a register, several chunks of a Welford cascade), and runs the
reductions on them: sum (default order, and dtype=fp32), mean, logsumexp,
layer_norm (with and without weight and bias), prod, var (one output
and per row), rms_norm.  Each op is replayed in PyTorch from bitprobe's
own inputs (fuzz_check) and must be bit-identical; PyTorch's known
version differences and ops it cannot run are counted apart.

Prints per op and dtype `identical/replayed`, then every failure; exit 0
when nothing required differs, 1 otherwise, 2 on a bitprobe error, 77
without torch.  The probes are a pure function of --seed.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import refio  # noqa: E402

torch = refio.torch_for_script(sys.argv)

import fuzz_check  # noqa: E402
import fuzz_gen  # noqa: E402

OPS = ["sum", "sum32", "mean", "logsumexp", "layer_norm", "prod", "var", "rms_norm"]
LENGTHS = [1, 2, 5, 8, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 100, 127, 128, 129, 257, 520,
           1000, 2049]
INNER = [1, 3, 8, 15, 16, 17, 31, 32, 33, 40, 64, 70]


def values(r, n, dt):
    """n order-sensitive values for a tensor of dtype dt."""
    k = r.random()
    hi = [11, 12, 14, 15] if dt == "fp16" else [11, 12, 24, 25, 26]
    small = 2.0 ** -11 if dt == "fp16" else 1.0
    if k < 0.5:  # spikes among small integers: cancellation decides
        return [r.choice([-1.0, 1.0]) * 2.0 ** r.choice(hi) if r.random() < 0.15
                else r.choice([1, 1, 2, 3, -1]) * small for _ in range(n)]
    if k < 0.8:  # a wide spread of magnitudes
        return [r.choice([-1.0, 1.0]) * r.uniform(1, 2) * 2.0 ** r.randint(-20, 20)
                for _ in range(n)]
    # values near 1 with a large common offset (layer_norm's cancellation)
    off = r.choice([100.0, 1000.0, -3000.0])
    return [off + r.uniform(-1, 1) for _ in range(n)]


def shape(r):
    n = r.choice(LENGTHS)
    k = r.random()
    if k < 0.5:
        return [n], None
    if k < 0.8:
        return [r.choice([1, 2, 3]), n], r.choice([-1, 0, 1])
    return [r.choice([1, 2]), n, r.choice(INNER)], 1


def probe(seed, i, ops, dtypes):
    """The i-th probe of a seed: sources, then the ops on each."""
    r = random.Random(seed * 1000003 + i)
    spec_ops, total = [], 0
    for j in range(6):
        sh, ax = shape(r)
        numel = 1
        for d in sh:
            numel *= d
        if total + numel > 16000:  # bitprobe reads probe files up to 1 MiB
            continue
        total += 2 * numel if "prod" in ops else numel
        tdt = r.choice(dtypes)
        x = f"x{j}"
        spec_ops.append({"out": x, "op": "tensor", "values": values(r, numel, tdt),
                         "shape": sh, "dtype": tdt})
        for k in ops:
            o = {"out": f"{k}{j}", "op": k, "a": x}
            if k in ("sum", "sum32", "mean", "logsumexp", "prod", "var") and ax is not None:
                o["axis"] = ax
                if r.random() < 0.3:
                    o["keepdim"] = True
            if k == "sum32":
                o["op"] = "sum"
                if tdt in ("bf16", "fp16"):
                    o["dtype"] = "fp32"
            elif k == "logsumexp":  # exps that neither all vanish nor overflow
                spec_ops.append({"out": f"s{k}{j}", "op": "mul", "a": x,
                                 "b": 2.0 ** -22 if tdt != "fp16" else 2.0 ** -12})
                o["a"] = f"s{k}{j}"
            elif k == "prod":  # factors near 1, or the product is 0 or inf
                spec_ops.append({"out": f"p{j}", "op": "tensor",
                                 "values": [r.choice([1, -1]) * r.uniform(0.6, 1.6)
                                            for _ in range(numel)],
                                 "shape": sh, "dtype": tdt})
                o["a"] = f"p{j}"
            elif k == "var":
                o["correction"] = r.choice([0, 1, 1])
            elif k in ("layer_norm", "rms_norm"):
                h = sh[-1]
                w = {"out": f"w{k}{j}", "op": "tensor", "values":
                     [r.uniform(0.5, 1.5) for _ in range(h)], "dtype": tdt}
                b = {"out": f"b{k}{j}", "op": "tensor", "values":
                     [r.uniform(-0.1, 0.1) for _ in range(h)], "dtype": tdt}
                spec_ops += [w, b]
                if k == "rms_norm":
                    o = {"out": f"{k}{j}", "op": k, "a": x, "b": w["out"]}
                else:
                    ins = [x] + [w["out"], b["out"]][:r.choice([0, 1, 2, 2])]
                    o = {"out": f"{k}{j}", "op": k, "inputs": ins}
                    if r.random() < 0.3:
                        o["eps"] = r.choice([1e-6, 1e-12, 0.1])
            spec_ops.append(o)
    outs = [o["out"] for o in spec_ops if o["op"] not in ("tensor", "mul")]
    return {"name": f"ord{seed}-{i:04d}", "description": "order-sensitive reductions",
            "dtypes": ["fp32"], "ops": spec_ops, "outputs": outs,
            "origin": f"order_torch.py seed {seed} probe {i}"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bitprobe", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--probes", type=int, default=40)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default="fp32,bf16,fp16,fp64")
    ap.add_argument("--devices", default="cpu")
    ap.add_argument("--bitprobe-arg", action="append", default=[])
    ap.add_argument("--aten-cpu-capability")
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(1)  # bitprobe models ATen's kernels on one thread
    ops = args.ops.split(",")
    bad = [o for o in ops if o not in OPS]
    if bad:
        print(f"order_torch: unknown op {', '.join(bad)} (known: {', '.join(OPS)})")
        return 2
    devices = args.devices.split(",")
    if "cuda" in devices and not torch.cuda.is_available():
        print("SKIP: PyTorch sees no CUDA device")
        return 77
    import fuzz_min
    if "cpu" in devices and fuzz_min.isa_option(args.bitprobe) and not any(
            a.startswith("--cpu-isa") for a in args.bitprobe_arg):
        args.bitprobe_arg += ["--cpu-isa", fuzz_min.cpu_isa()]  # the capability torch runs
    work = args.out or tempfile.mkdtemp(prefix="bitprobe-order-")
    pdir, bundle = os.path.join(work, "probes"), os.path.join(work, "bundle")
    shutil.rmtree(pdir, ignore_errors=True)
    os.makedirs(pdir)
    specs = [probe(args.seed, i, ops, args.dtypes.split(",")) for i in range(args.probes)]
    for s in specs:
        fuzz_gen.write(s, pdir)
    shutil.rmtree(bundle, ignore_errors=True)
    p = subprocess.run([args.bitprobe, "run", "--probes", pdir, "--device", ",".join(devices),
                        "--no-golden", "--save", bundle, "--intermediates", "-v",
                        *args.bitprobe_arg], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode not in (0, 1):
        errs = [ln for ln in p.stdout.splitlines() if "error" in ln]
        print(f"order_torch: bitprobe run failed (exit {p.returncode}): " + "; ".join(errs[-3:]))
        return 2
    res = fuzz_check.Result()
    for s in specs:
        for dv in devices:
            fuzz_check.check_probe(s, bundle, dv, res)
    print(f"order_torch: seed {args.seed}, {len(specs)} probes; torch {torch.__version__}, "
          f"CPU capability {fuzz_min.cpu_isa()}; bitprobe "
          f"{' '.join(args.bitprobe_arg) or '(no options)'}")
    for dv in devices:
        for op in sorted({k[1] for k in res.counts if k[0] == dv} - {"tensor", "mul"}):
            cells = []
            for dt in sorted({k[2] for k in res.counts if k[:2] == (dv, op)}):
                c = {v: n for (d2, o2, t2, v), n in res.counts.items()
                     if (d2, o2, t2) == (dv, op, dt)}
                n = sum(c.values())
                cells.append(f"{dt} {c.get('identical', 0)}/{n}" + "".join(
                    f" {v} {m}" for v, m in sorted(c.items()) if v != "identical"))
            print(f"  {dv:4} {op:11} " + "; ".join(cells))
    for f in res.failures:
        print(f"FAIL {f['probe']} op {f['index']} ({f['op']} -> {f['out']}) on {f['device']}: "
              f"{f['why']}")
    print(f"order_torch: {sum(n for k, n in res.counts.items() if k[3] == 'identical')} "
          f"identical, {len(res.failures)} failing ops; probes in {pdir}")
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
