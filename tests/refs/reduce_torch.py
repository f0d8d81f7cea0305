"""bitprobe's CUDA sum, mean, var, prod and cumsum against PyTorch's, bit
for bit, over a spread of shapes: 1-D lengths from 1 to 2^20 (powers of
two, odd and prime sizes, the vectorisation threshold 128 and the global
reduction's range), 2-D and 3-D tensors reduced over their first, middle
and last axis, keepdim, a reduced axis of 1 and empty tensors; fp32, fp64,
bf16, fp16 (sum and mean also with dtype=torch.float32) and i32/i64 (sum,
prod, cumsum); and 1-D lengths around cub's tiles for cumsum (one less,
one more and the multiples up to 3 and 4 tiles of 1920 fp32, 896 fp64,
3840 bf16/fp16 values).

The probes are generated under OUT/probes, run by bitprobe once
(`run --device D --save --intermediates --no-golden`), and each result is
recomputed by PyTorch on the same device from bitprobe's own input
buffers.  One line per output: "identical" or "N of M differ, first at
i: bitprobe 0x.., PyTorch 0x..".  Outputs PyTorch computes in an order
that is not fixed (a floating-point cumsum whose axis holds the whole
tensor beyond 3 of cub's tiles: its look-back's order depends on timing,
probe_torch_ops._cumsum_required) are printed as "(not required)" and not
counted.  Exit 1 when a required output differs, 2 when bitprobe fails,
77 without torch or the device.

    python3 tests/refs/reduce_torch.py --bitprobe src/bitprobe --out DIR [--device cuda]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

import refio  # noqa: E402
from probe_torch_ops import CUB_FIXED_TILES, CUB_SCAN_TILE, _cumsum_required, bits  # noqa: E402

FLOATS = ["fp32", "fp64", "bf16", "fp16"]
INTS = ["i32", "i64"]

# (shape, axis (None: all), keepdim)
LENGTHS = [1, 2, 3, 7, 31, 32, 33, 127, 128, 129, 130, 255, 256, 257, 1000, 1023, 1024,
           1025, 4095, 4096, 4097, 16384, 65535, 65536, 65537, 100003, 262144, 1000003,
           1 << 20]
SHAPES = [((n,), None, False) for n in LENGTHS] + [
    ((n,), 0, True) for n in (5, 129, 4096)] + [
    ((64, 64), 0, False), ((64, 64), 1, False), ((64, 64), 1, True),
    ((7, 1000), 0, False), ((7, 1000), 1, False), ((1000, 7), 0, True), ((1000, 7), 1, False),
    ((3, 5, 7), 0, False), ((3, 5, 7), 1, True), ((3, 5, 7), 2, False), ((3, 5, 7), None, False),
    ((2, 129, 6), 1, False), ((16, 300, 4), 1, False), ((8, 4096, 3), 1, False),
    ((4, 1, 9), 1, False), ((33, 8192), 1, False), ((8192, 33), 0, False),
    ((2, 65537), 1, False), ((65537, 2), 0, False), ((3, 100003), 1, True),
    ((5, 0), 1, False), ((0,), None, False), ((6, 5, 4, 3), 2, False), ((1, 3000), 1, False),
    ((3000, 1), 0, False), ((257, 1, 2), 2, False)]
# cub's tiles (cumsum of a whole tensor on CUDA): around 1, 2, 3 and 4 tiles
TILE_LENGTHS = sorted({k * t + d for t in set(CUB_SCAN_TILE.values())
                       for k in range(1, CUB_FIXED_TILES + 2) for d in (-1, 0, 1)})
SHAPES += [((n,), 0, False) for n in TILE_LENGTHS if n not in LENGTHS]


def axis_key(ax, keep):
    s = "" if ax is None else f", axis: {ax}"
    return s + (", keepdim: true" if keep else "")


def probe_yaml(name, shape, ax, keep, dt):
    """One probe (run dtype fp32) on inputs of dt: every op on them."""
    sh = "[" + ", ".join(str(d) for d in shape) + "]"
    ints = dt in INTS
    lines = [f"name: {name}", f"description: \"reductions of {dt} {sh} over axis {ax}\"",
             "dtypes: [fp32]", "ops:"]
    if ints:
        lines += [f"  - {{out: u, op: uniform, shape: {sh}, seed: 11, low: -1000, high: 1000}}",
                  f"  - {{out: x, op: cast, a: u, dtype: {dt}}}",
                  f"  - {{out: q, op: uniform, shape: {sh}, seed: 12, low: -3, high: 4}}",
                  f"  - {{out: p, op: cast, a: q, dtype: {dt}}}"]
    else:
        lines += [f"  - {{out: x, op: uniform, shape: {sh}, seed: 11, low: -2, high: 3, dtype: {dt}}}",
                  f"  - {{out: p, op: uniform, shape: {sh}, seed: 12, low: 0.97, high: 1.03, dtype: {dt}}}",
                  f"  - {{out: v, op: uniform, shape: {sh}, seed: 13, low: 100, high: 101, dtype: {dt}}}"]
    k = axis_key(ax, keep)
    lines.append(f"  - {{out: sum, op: sum, a: x{k}}}")
    lines.append(f"  - {{out: prod, op: prod, a: p{k}}}")
    if ax is not None or len(shape) <= 1:
        lines.append(f"  - {{out: cumsum, op: cumsum, a: x, axis: {0 if ax is None else ax}}}")
    if not ints:
        lines.append(f"  - {{out: sum32, op: sum, a: x{k}, dtype: fp32}}")
        lines.append(f"  - {{out: mean, op: mean, a: x{k}}}")
        lines.append(f"  - {{out: mean32, op: mean, a: x{k}, dtype: fp32}}")
        lines.append(f"  - {{out: var, op: var, a: x{k}}}")
        lines.append(f"  - {{out: var0, op: var, a: v{k}, correction: 0}}")
    outs = [ln.split("out: ")[1].split(",")[0] for ln in lines if ", op: " in ln
            and " op: uniform" not in ln and " op: cast" not in ln]
    lines.append("outputs:")
    lines += [f"  - {{name: {o}}}" for o in outs]
    return "\n".join(lines) + "\n", outs


def torch_result(out, bufs, ax, keep):
    """PyTorch's value of output `out` from bitprobe's inputs; required."""
    x = bufs.get("x")
    dim = {} if ax is None else {"dim": ax}
    kd = {"keepdim": keep} if ax is not None else {}

    def full_keep(r, a):  # keepdim without an axis keeps every dimension as 1
        return r.reshape([1] * a.dim()) if keep and ax is None else r
    if out in ("sum", "sum32"):
        kw = {"dtype": torch.float32} if out == "sum32" else {}
        return full_keep(x.sum(**dim, **kd, **kw), x), True
    if out in ("mean", "mean32"):
        kw = {"dtype": torch.float32} if out == "mean32" else {}
        return full_keep(x.mean(**dim, **kd, **kw), x), True
    # torch.var over every dimension as a list (1.x has no dim=None form)
    vdim = {"dim": ax if ax is not None else list(range(x.dim()))}
    if out == "var":
        return full_keep(torch.var(x, **vdim, **kd, correction=1), x), True
    if out == "var0":
        v = bufs["v"]
        return full_keep(torch.var(v, **vdim, **kd, correction=0), v), True
    if out == "prod":
        p = bufs["p"]
        r = p.prod() if ax is None else p.prod(ax, keepdim=keep)
        return full_keep(r, p), True
    if out == "cumsum":
        a = 0 if ax is None else ax
        r = torch.cumsum(x, a)
        return r, _cumsum_required(r, a, x.device.type)
    raise ValueError(out)


def hexbits(t, i):
    b = bits(t)[0].reshape(-1)[i].item()
    width = {1: 2, 2: 4, 4: 8, 8: 16}[t.element_size()]
    return f"0x{b & ((1 << (4 * width)) - 1):0{width}x}"


def compare(mine, theirs):
    """None when identical, else (n, m, first index)."""
    if mine.dtype != theirs.dtype or tuple(mine.shape) != tuple(theirs.shape):
        return (f"bitprobe gives {mine.dtype} {list(mine.shape)}, PyTorch {theirs.dtype} "
                f"{list(theirs.shape)}")
    ab, an = bits(mine)
    bb, bn = bits(theirs.cpu())
    diff = ((ab != bb) & ~(an & bn)).reshape(-1)
    n = int(diff.sum())
    if n == 0:
        return None
    i = int(diff.nonzero()[0])
    return (f"{n} of {diff.numel()} differ, first at {i}: bitprobe {hexbits(mine, i)}, "
            f"PyTorch {hexbits(theirs.cpu(), i)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bitprobe", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    pdir = os.path.join(args.out, "probes")
    os.makedirs(pdir, exist_ok=True)
    for f in os.listdir(pdir):
        os.remove(os.path.join(pdir, f))
    cases = []
    for k, (shape, ax, keep) in enumerate(SHAPES):
        for dt in FLOATS + INTS:
            name = f"red{k:02d}-{dt}"
            text, outs = probe_yaml(name, shape, ax, keep, dt)
            with open(os.path.join(pdir, name + ".yaml"), "w") as f:
                f.write(text)
            cases.append((name, shape, ax, keep, dt, outs))
    bundle = os.path.join(args.out, "bundle")
    cmd = [args.bitprobe, "run", "--probes", pdir, "--device", args.device, "--no-golden",
           "--save", bundle, "--intermediates", "--quiet"]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        print(f"bitprobe run failed (exit {p.returncode}): {p.stderr.strip()}")
        return 2
    dev = args.device
    checked = bad = info = 0
    for name, shape, ax, keep, dt, outs in cases:
        path = os.path.join(bundle, name)
        fs = [f for f in os.listdir(path) if f.startswith(dev)] if os.path.isdir(path) else []
        if not fs:
            print(f"{name}: no {dev} container in {path}")
            return 2
        data = refio.st_tensors(os.path.join(path, fs[0]))
        bufs = {b: data[f"{b}.fp32"].to(dev) for b in ("x", "p", "v") if f"{b}.fp32" in data}
        for o in outs:
            mine = data[f"{o}.fp32"]
            try:
                t, required = torch_result(o, bufs, ax, keep)
                r = compare(mine, t)
            except (RuntimeError, TypeError) as e:
                required, r = True, f"PyTorch raised: {str(e).splitlines()[0]}"
            where = f"{dt} {o} {list(shape)} axis {ax}{' keepdim' if keep else ''}"
            tag = "identical" if r is None else r
            if not required:
                info += 1
                print(f"{where}: {tag} (not required: cub's look-back beyond "
                      f"{CUB_FIXED_TILES} tiles)")
                continue
            checked += 1
            if r is not None:
                bad += 1
            print(f"{where}: {tag}")
    print(f"reduce: {checked} outputs checked on {dev}, {bad} differ, {info} not required "
          f"(torch {torch.__version__}"
          f"{', ' + torch.cuda.get_device_name(0) if dev == 'cuda' else ''})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
