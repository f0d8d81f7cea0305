#!/usr/bin/env python3
"""PyTorch fidelity check: bitprobe's CUDA buffers against PyTorch on CUDA.

    torch_probe.py BUNDLE [--probes DIR] [--key cuda-sm90] [--probe NAME]...

BUNDLE is a directory written by `bitprobe run --device cuda --save BUNDLE
--intermediates`.  For every probe and dtype in it, each op of the probe's
YAML is executed with PyTorch on the GPU, written the way PyTorch code
states it (`a / 10`, `10 ** t`, `torch.arange(...)`, `torch.outer`,
`x.to(dtype)`, ...), on the inputs bitprobe used, and every buffer must be
bit-identical to bitprobe's (NaNs by class).  Ops with no PyTorch
counterpart take bitprobe's own buffer (the counter-based generator's
`uniform`); ops whose PyTorch kernel has no fixed order (matmul through
cuBLAS heuristics, the default-order sum) are reported, not required.

Exit: 0 all required buffers identical, 1 a mismatch, 2 bad input,
77 torch, safetensors, PyYAML or a CUDA device unavailable (skip).
"""
import argparse
import gzip
import json
import os
import sys

try:
    import torch
    import yaml
    from safetensors.torch import load as st_load
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device")
    sys.exit(77)

DEV = "cuda"
DT = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
      "fp64": torch.float64, "i64": torch.int64, "i32": torch.int32}
UNARY = {"reciprocal": torch.reciprocal, "exp": torch.exp, "log": torch.log,
         "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "neg": torch.neg}


def param(v, params):
    if isinstance(v, str) and v.startswith("$"):
        return params[v[1:]]
    return v


def operand(v, params, bufs):
    v = param(v, params)
    if isinstance(v, str):
        return bufs[v]
    return v


def seq_sum(x, axis):
    x = x.movedim(axis, -1) if axis is not None else x.reshape(-1)
    acc_dt = torch.float64 if x.dtype == torch.float64 else torch.float32
    xs = x.to(acc_dt)
    acc = xs[..., 0].clone()
    for i in range(1, xs.shape[-1]):
        acc = acc + xs[..., i]
    return acc.to(x.dtype)


def pair_sum(x, axis):
    x = x.movedim(axis, -1) if axis is not None else x.reshape(-1)
    acc_dt = torch.float64 if x.dtype == torch.float64 else torch.float32

    def rec(v):
        n = v.shape[-1]
        if n == 1:
            return v[..., 0]
        h = n // 2
        return rec(v[..., :h]) + rec(v[..., h:])
    return rec(x.to(acc_dt)).to(x.dtype)


def run_op(op, params, bufs, saved, dt_out):
    """Returns (tensor, required)."""
    k = op["op"]
    P = lambda key, d=None: param(op.get(key, d), params)
    if k == "tensor":
        t = torch.tensor(op["values"], dtype=dt_out, device=DEV)
        return t.reshape(op["shape"]) if "shape" in op else t, True
    if k == "arange":
        return torch.arange(P("start", 0), P("end"), P("step", 1), dtype=dt_out, device=DEV), True
    if k == "uniform":
        return saved.to(DEV), True
    if k == "cast":
        return operand(op["a"], params, bufs).to(dt_out), True
    if k in ("add", "sub", "mul", "div", "pow"):
        a = operand(op["a"], params, bufs)
        b = operand(op["b"], params, bufs)
        if k == "div":
            form = op.get("formulation", "default")
            if form is True:  # YAML 1.1 reads a bare `true` as a boolean
                form = "true"
            if form == "true" and not torch.is_tensor(b):
                # A divisor tensor of a's shape reaches DivFunctor (true
                # division), not the CPU-scalar reciprocal path.
                b = torch.full_like(a, b, dtype=torch.result_type(a, b))
            elif form == "reciprocal" and not torch.is_tensor(b):
                b32 = torch.tensor(b, dtype=torch.float32)
                return a * (1.0 / b32).item(), True
            elif form == "reciprocal":
                return a * torch.reciprocal(b), True
            return a / b, True
        fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "pow": torch.pow}[k]
        return fn(a, b), True
    if k in UNARY:
        return UNARY[k](operand(op["a"], params, bufs)), True
    if k == "outer":
        return torch.outer(operand(op["a"], params, bufs), operand(op["b"], params, bufs)), True
    if k == "concat":
        return torch.cat([bufs[n] for n in op["inputs"]], dim=P("axis", 0)), True
    if k == "slice":
        a = operand(op["a"], params, bufs)
        ax = P("axis", 0) % a.dim()
        idx = [slice(None)] * a.dim()
        idx[ax] = slice(P("start", None), P("end", None), P("step", 1))
        return a[tuple(idx)], True
    if k == "rotate_half":
        x = operand(op["a"], params, bufs)
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1), True
    if k == "matmul":
        return operand(op["a"], params, bufs) @ operand(op["b"], params, bufs), False
    if k == "sum":
        a = operand(op["a"], params, bufs)
        ax = op.get("axis")
        form = op.get("formulation", "default")
        if form == "sequential":
            return seq_sum(a, ax), True
        if form == "pairwise":
            return pair_sum(a, ax), True
        return (a.sum() if ax is None else a.sum(ax)), False
    raise ValueError(f"op '{k}' has no PyTorch counterpart here")


def bits(t):
    t = t.detach().cpu().contiguous()
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.view(torch.int16), t.isnan()
    if t.dtype == torch.float32:
        return t.view(torch.int32), t.isnan()
    if t.dtype == torch.float64:
        return t.view(torch.int64), t.isnan()
    return t, torch.zeros_like(t, dtype=torch.bool)


def mismatches(a, b):
    ab, an = bits(a)
    bb, bn = bits(b)
    if ab.shape != bb.shape:
        return -1
    return int(((ab != bb) & ~(an & bn)).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--probes", default="probes")
    ap.add_argument("--key", default=None)
    ap.add_argument("--probe", action="append")
    args = ap.parse_args()
    man = json.load(open(os.path.join(args.bundle, "manifest.json")))
    files = [f for f in man["files"] if "/cuda-" in f and (args.key is None or f"/{args.key}." in f)]
    if not files:
        print("no CUDA containers in the bundle", file=sys.stderr)
        return 2
    bad = checked = informative = 0
    for f in sorted(files):
        probe = f.split("/")[0]
        if args.probe and probe not in args.probe:
            continue
        spec = yaml.safe_load(open(os.path.join(args.probes, probe + ".yaml")))
        params = spec.get("params", {}) or {}
        data = st_load(gzip.open(os.path.join(args.bundle, f)).read())
        for dn in spec["dtypes"]:
            params_d = dict(params)
            bufs = {}
            for op in spec["ops"]:
                name = op["out"]
                key = f"{name}.{dn}"
                if key not in data:
                    print(f"{probe} {dn}: buffer '{name}' missing: save with --intermediates",
                          file=sys.stderr)
                    return 2
                mine = data[key]
                t, required = run_op(op, params_d, bufs, mine, mine.dtype)
                if t.dtype != mine.dtype:
                    print(f"FAIL {probe} {dn} {name}: PyTorch gives {t.dtype}, bitprobe {mine.dtype}")
                    bad += 1
                n = mismatches(mine, t)
                tag = "identical" if n == 0 else ("SHAPE" if n < 0 else f"{n} of {mine.numel()} differ")
                if required:
                    checked += 1
                    if n != 0:
                        bad += 1
                        print(f"FAIL {probe} {dn} {name} ({op['op']}): {tag}")
                else:
                    informative += 1
                    print(f"info {probe} {dn} {name} ({op['op']}, order not pinned in PyTorch): {tag}")
                # Carry on from bitprobe's buffer so one op's failure is not
                # counted again downstream.
                bufs[name] = mine.to(DEV)
    print(f"fidelity: {checked} buffers checked, {bad} mismatched, {informative} informative "
          f"(torch {torch.__version__}, {torch.cuda.get_device_name(0)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
