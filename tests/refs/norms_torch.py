#!/usr/bin/env python3
"""bitprobe's CUDA layer_norm, rms_norm, softmax, log_softmax and logsumexp
against PyTorch's CUDA kernels on the same inputs, bit for bit, over a
spread of shapes (row lengths 1 ... 128256, the kernels' thresholds on both
sides: 2048/2049, 9216/9217, the shared-memory limits, multiples of 4 and
8 and odd lengths; rows whose start is not 16-byte aligned; inner sizes
> 1 for the softmaxes) and every float dtype.

    norms_torch.py --bitprobe B --out DIR [--ops layer_norm,rms_norm,...]

Writes one probe per (op, shape) into DIR/probes, runs `bitprobe run
--device cuda --save DIR/bundle --intermediates` over them, then feeds the
saved inputs to PyTorch on the GPU and prints one line per (op, dtype,
shape): "identical" or "N of M differ, first at i: bitprobe 0x.., PyTorch
0x..", then a total line.  Exit 1 on any difference, 2 when a run fails.
Needs torch with CUDA; the probes' inputs are bitprobe's own (uniform), so
nothing but the op itself is compared."""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refio  # noqa: E402
from fuzz_check import container  # noqa: E402

DTYPES = ["bf16", "fp16", "fp32"]  # a probe's run dtypes; fp64 cases are probes of their own

# Row lengths of the last-dimension cases: the norms' vectorised path
# needs N % 4 == 0; softmax's persistent kernel ends at 2048 (1024 in
# fp64), cunn_SoftMaxForwardReg at 9 * 1024 = 9216, the shared-memory
# kernel at 48 KiB of the row (12256 fp32, 24512 bf16/fp16, 6112 fp64).
NORM_COLS = [1, 3, 4, 7, 64, 100, 127, 128, 768, 1000, 1023, 1024, 2047, 2048, 2049, 4096,
             4097, 5120, 8191, 8192, 32000, 65536, 70001]
SOFTMAX_COLS = [1, 2, 31, 33, 1000, 1024, 1025, 2047, 2048, 2049, 3000, 4096, 4097, 8192,
                9216, 9217, 10000, 12000, 12288, 16384, 24000, 24576, 32000, 32001, 50000,
                65536, 70000, 128256]
# [outer, len, inner], softmax over axis 1 (the spatial kernel).
SPATIAL = [[2, 100, 3], [3, 1000, 2], [2, 64, 64], [2, 63, 65], [1, 2049, 5], [4, 7, 100],
           [2, 5000, 1], [3, 300, 40], [2, 4, 1500]]


def probe(name, dtypes, ops, out):
    """The YAML text of a probe; dtypes None: one run (fp32) with every
    tensor fp64 (a probe runs in fp32, bf16 or fp16; fp64 is a tensor's)."""
    lines = [f"name: {name}", f'description: "{name}"',
             "dtypes: [" + ", ".join(dtypes or ["fp32"]) + "]", "ops:"]
    for op in ops:
        if dtypes is None and op.get("dtype") == "$dtype":
            op = dict(op, dtype="fp64")
        lines.append("  - {" + ", ".join(f"{k}: {v}" for k, v in op.items()) + "}")
    lines += ["outputs:", f"  - {{name: {out}}}"]
    return "\n".join(lines) + "\n"


def both(name, op, shape, variant, body):
    """The case in bf16, fp16, fp32 and, as a probe of its own, fp64."""
    yield name, op, shape, variant, probe(name, DTYPES, body, "y")
    yield name + "-f64", op, shape, variant, probe(name + "-f64", None, body, "y")


def uniform(out, shape, seed, low, high, stream=0):
    return {"out": out, "op": "uniform", "shape": "[" + ", ".join(map(str, shape)) + "]",
            "seed": seed, "stream": stream, "low": low, "high": high, "dtype": "$dtype"}


def cases(ops):
    """(probe name, op, shape, axis or variant, YAML text)"""
    seed = 1
    for op in ("layer_norm", "rms_norm"):
        if op not in ops:
            continue
        for cols in NORM_COLS:
            for rows in ([4] if cols > 4096 else [1, 4, 37]):
                seed += 1
                shape = [rows, cols]
                for variant in (("wb", "w", "none") if op == "layer_norm" else ("w", "w-eps")):
                    x = uniform("x", shape, seed, -3, 5) if op == "layer_norm" else \
                        uniform("x", shape, seed, -2, 2)
                    body = [x]
                    ins = ["x"]
                    if "w" in variant:
                        body.append(uniform("w", [cols], seed, 0.5, 1.5, 1))
                        ins.append("w")
                    if variant == "wb":
                        body.append(uniform("b", [cols], seed, -0.1, 0.1, 2))
                        ins.append("b")
                    if op == "layer_norm":
                        body.append({"out": "y", "op": "layer_norm",
                                     "inputs": "[" + ", ".join(ins) + "]", "eps": "1.0e-5"})
                    else:
                        y = {"out": "y", "op": "rms_norm", "a": "x", "b": "w"}
                        if variant == "w-eps":
                            y["eps"] = "1.0e-6"
                        body.append(y)
                    name = f"nt-{op.replace('_', '')}-{variant}-{rows}x{cols}"
                    yield from both(name, op, shape, variant, body)
    for op in ("softmax", "log_softmax"):
        if op not in ops:
            continue
        for cols in SOFTMAX_COLS:
            for rows in ([3] if cols > 4096 else [1, 5]):
                seed += 1
                shape = [rows, cols]
                name = f"nt-{op.replace('_', '')}-{rows}x{cols}"
                body = [uniform("x", shape, seed, -20, 20),
                        {"out": "y", "op": op, "a": "x", "axis": -1}]
                yield from both(name, op, shape, -1, body)
        for shape in SPATIAL:
            seed += 1
            name = f"nt-{op.replace('_', '')}-{'x'.join(map(str, shape))}-axis1"
            body = [uniform("x", shape, seed, -20, 20), {"out": "y", "op": op, "a": "x", "axis": 1}]
            yield from both(name, op, shape, 1, body)
        for shape in ([300, 40], [65, 70]):
            seed += 1
            name = f"nt-{op.replace('_', '')}-{'x'.join(map(str, shape))}-axis0"
            body = [uniform("x", shape, seed, -20, 20), {"out": "y", "op": op, "a": "x", "axis": 0}]
            yield from both(name, op, shape, 0, body)
    if "logsumexp" in ops:
        for shape, axis in ([[4, 1]], -1), ([[3, 1000]], -1), ([[3, 4097]], -1), \
                ([[2, 32000]], -1), ([[1, 128256]], -1), ([[300, 40]], 0), ([[2, 63, 65]], 1), \
                ([[5, 7, 9]], 2):
            shape = shape[0]
            seed += 1
            name = f"nt-logsumexp-{'x'.join(map(str, shape))}-axis{axis % len(shape)}"
            body = [uniform("x", shape, seed, -20, 20),
                    {"out": "y", "op": "logsumexp", "a": "x", "axis": axis}]
            yield from both(name, "logsumexp", shape, axis, body)


def torch_result(torch, op, variant, t, eps):
    x = t["x"]
    if op == "layer_norm":
        return torch.nn.functional.layer_norm(x, [x.shape[-1]], t.get("w"), t.get("b"), 1e-5)
    if op == "rms_norm":
        return torch.nn.functional.rms_norm(x, [x.shape[-1]], t["w"], eps)
    if op == "softmax":
        return torch.softmax(x, variant)
    if op == "log_softmax":
        return torch.log_softmax(x, variant)
    return torch.logsumexp(x, variant)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bitprobe", default="./src/bitprobe")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops", default="layer_norm,rms_norm,softmax,log_softmax,logsumexp")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help="cpu: bitprobe's cpu backend against PyTorch's CPU (a dry run of "
                    "this script where no GPU is)")
    args = ap.parse_args()
    dev = args.device
    import torch
    from probe_torch_ops import DT, bits
    if dev == "cuda" and not torch.cuda.is_available():
        print("no CUDA device for PyTorch", file=sys.stderr)
        return 2
    pdir = os.path.join(args.out, "probes")
    bundle = os.path.join(args.out, "bundle")
    os.makedirs(pdir, exist_ok=True)
    for f in os.listdir(pdir):
        os.remove(os.path.join(pdir, f))
    todo = list(cases(set(args.ops.split(","))))
    for name, _, _, _, text in todo:
        with open(os.path.join(pdir, name + ".yaml"), "w") as f:
            f.write(text)
    if os.path.exists(bundle):
        subprocess.run(["rm", "-rf", bundle], check=True)
    p = subprocess.run([args.bitprobe, "run", "--probes", pdir, "--device", dev,
                        "--require", dev, "--no-golden", "--save", bundle,
                        "--intermediates", "--quiet"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        print(f"bitprobe run failed (exit {p.returncode}): {p.stderr.strip()}", file=sys.stderr)
        return 2
    print(f"torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0) if dev == 'cuda' else 'CPU'}")
    lines = differ = 0
    for name, op, shape, variant, _ in todo:
        path = container(bundle, name, dev)
        if path is None:
            print(f"{op} {name}: no saved {dev} container", file=sys.stderr)
            return 2
        data = refio.st_tensors(path)
        for d in (["fp32"] if name.endswith("-f64") else DTYPES):
            t = {k.split(".")[0]: v.to(dev) for k, v in data.items() if k.endswith("." + d)}
            d = {v: k for k, v in DT.items()}[t["y"].dtype]  # the label
            eps = 1e-6 if variant == "w-eps" else None
            mine = t["y"]
            label = f"{op} {d} {'x'.join(map(str, shape))}" + \
                (f" axis {variant}" if op in ("softmax", "log_softmax", "logsumexp") else
                 f" {variant}")
            lines += 1
            try:
                ref = torch_result(torch, op, variant, t, eps)
            except RuntimeError as e:
                differ += 1
                print(f"{label}: PyTorch refuses: {str(e).splitlines()[0]}")
                continue
            ab, an = bits(mine)
            bb, bn = bits(ref.to(mine.dtype))
            if ab.shape != bb.shape:
                differ += 1
                print(f"{label}: shapes differ: bitprobe {list(ab.shape)}, PyTorch {list(bb.shape)}")
                continue
            bad = ((ab != bb) & ~(an & bn)).reshape(-1)
            n = int(bad.sum())
            if n == 0:
                print(f"{label}: identical")
                continue
            differ += 1
            i = int(bad.nonzero()[0])
            w = {2: 4, 4: 8, 8: 16}[mine.element_size()]
            a = int(ab.reshape(-1)[i]) & ((1 << (4 * w)) - 1)
            b = int(bb.reshape(-1)[i]) & ((1 << (4 * w)) - 1)
            print(f"{label}: {n} of {bad.numel()} differ, first at {i}: "
                  f"bitprobe 0x{a:0{w}x}, PyTorch 0x{b:0{w}x}")
    print(f"total: {lines - differ} of {lines} (op, dtype, shape) identical, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
