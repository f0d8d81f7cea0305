#!/usr/bin/env python3
"""The PyTorch script that bitprobe's suite replaces, for bench/suite.sh.

    suite_torch.py [--probes DIR]

Every probe under DIR (default: the shipped probes), in each of its dtypes,
computed with PyTorch on the CPU and on CUDA, op by op as PyTorch code
writes it (tests/refs/probe_torch_ops.py), and each output compared
with torch.equal.  Probes are read as bitprobe reads them
(tests/refs/probe_spec.py).  `uniform` inputs come from torch.rand with a CPU
generator seeded from the probe's seed and stream, copied to both devices.

Prints one line per probe and dtype, then its own phases on stderr
(import torch, CUDA start, probes); bench/suite.sh times the whole process
from outside, interpreter start and `import torch` included.
Exit: 0 when it ran (CPU/CUDA differences are findings, not failures),
77 when torch, PyYAML or a CUDA device is missing, 2 on bad input.
"""
import time

T0 = time.monotonic()

import argparse  # noqa: E402
import glob  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

try:
    import torch
    import yaml  # noqa: F401  (probe_spec parses with it)
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
T_IMPORT = time.monotonic()

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "refs"))
import probe_spec  # noqa: E402
from probe_torch_ops import DT, param, run_op  # noqa: E402


def out_dtype(op, run_dt):
    """The dtype an op is asked for: its `dtype:` (`$dtype`: the run's)."""
    d = op.get("dtype")
    if d is None:
        return None
    return run_dt if d == "$dtype" else DT[d]


def uniform(op, params, dt):
    """`uniform` the ordinary way: a seeded CPU generator, then the dtype."""
    shape = [int(param(s, params)) for s in op["shape"]]
    seed = int(param(op["seed"], params)) * 1000003 + int(param(op.get("stream", 0), params))
    lo = float(param(op.get("low", 0.0), params))
    hi = float(param(op.get("high", 1.0), params))
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dt or torch.float32)


def run_probe(spec, dn, device):
    params = spec["params"]
    run_dt = DT[dn]
    bufs = {}
    for op in spec["ops"]:
        dt = out_dtype(op, run_dt)
        t, _ = run_op(op, params, bufs, dt, device,
                      lambda o, dt=dt: uniform(o, params, dt))
        bufs[op["out"]] = t
    return {o: bufs[o] for o in spec["outputs"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probes", default=os.path.join(HERE, "..", "probes"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    t_cuda0 = time.monotonic()
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t_cuda = time.monotonic() - t_cuda0
    paths = sorted(glob.glob(os.path.join(args.probes, "*.yaml")))
    if not paths:
        print(f"no probes in {args.probes}", file=sys.stderr)
        return 2
    t_probes0 = time.monotonic()
    outputs = differ = 0
    for path in paths:
        spec = probe_spec.load(path)
        for dn in spec["dtypes"]:
            cpu = run_probe(spec, dn, "cpu")
            cuda = run_probe(spec, dn, "cuda")
            bad = [n for n in cpu if not torch.equal(cpu[n], cuda[n].cpu())]
            outputs += len(cpu)
            differ += len(bad)
            print(f"{spec['name']} {dn}: {len(cpu)} outputs, "
                  f"{len(bad)} differ{(' (' + ', '.join(bad) + ')') if bad else ''}")
    torch.cuda.synchronize()
    t_probes = time.monotonic() - t_probes0
    print(f"suite_torch: {len(paths)} probes, {outputs} outputs compared, {differ} differ "
          f"between CPU and CUDA (torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0)})")
    print(f"suite_torch: import torch {T_IMPORT - T0:.3f} s, CUDA start {t_cuda:.3f} s, "
          f"probes {t_probes:.3f} s, total in-process {time.monotonic() - T0:.3f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
