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
    import yaml  # noqa: F401  (probe_spec parses with it)
    from safetensors.torch import load as st_load
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device")
    sys.exit(77)

import probe_spec  # noqa: E402
from probe_torch_ops import bits, mismatches, run_op  # noqa: E402

DEV = "cuda"


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
        spec = probe_spec.load(os.path.join(args.probes, probe + ".yaml"))
        params = spec["params"]
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
                t, required = run_op(op, params_d, bufs, mine.dtype, DEV,
                                     lambda _op, saved=mine: saved)
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
