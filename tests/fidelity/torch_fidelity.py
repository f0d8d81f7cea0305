#!/usr/bin/env python3
"""Checks bitprobe's CUDA outputs against PyTorch on CUDA, bit for bit.

    torch_fidelity.py DIR [--allow-missing] [--probe NAME]... [--device N]

DIR holds index.json and one raw little-endian file per output:

    {"format": 1, "backend": "cuda-sm90", "fingerprint": {...},
     "entries": [{"probe": "seed-div", "output": "out", "dtype": "fp32",
                  "tensor_dtype": "fp32", "shape": [], "file":
                  "seed-div.out.fp32.bin"}, ...]}

(`BP_FIDELITY_DIR=DIR tests/check_be_cuda` writes such a directory for the
seed formulations.)  For every entry, the probe's formulation is computed
with PyTorch on the GPU (the PROBES table below, one expression per probe,
written as the PyTorch code the probe models) and must match bitprobe's
bits exactly; NaNs match by class.  Entries marked inexact (cuBLAS matmul,
whose kernel choice PyTorch makes differently) are reported, not required.

Exit status: 0 all identical; 1 a mismatch; 2 bad input, or a probe with no
expression here (unless --allow-missing); 77 torch or a CUDA device is not
available (the test is skipped).
"""

import argparse
import json
import os
import sys

SKIP = 77

try:
    import torch
except (ImportError, OSError) as e:  # a missing or broken install
    print(f"SKIP: torch is not importable ({e})")
    sys.exit(SKIP)

DEV = "cuda"

DTYPES = {
    "fp32": (torch.float32, torch.int32),
    "bf16": (torch.bfloat16, torch.int16),
    "fp16": (torch.float16, torch.int16),
    "fp64": (torch.float64, torch.int64),
    "i64": (torch.int64, torch.int64),
    "i32": (torch.int32, torch.int32),
}


def _rope_llama2(dt):
    # transformers 4.36 LlamaRotaryEmbedding (dim 128, base 10000, 4096
    # positions), computed in f32 and stored in the probe dtype.
    dim, base, positions = 128, 10000, 4096
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float().to(DEV) / dim))
    t = torch.arange(positions, device=DEV, dtype=inv_freq.dtype)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return {"inv_freq": inv_freq.to(dt), "cos": emb.cos().to(dt),
            "sin": emb.sin().to(dt)}


# probe name -> (function of the torch dtype returning {output: tensor},
#                exact).  One PyTorch expression per probe.
PROBES = {
    "seed-div": (
        lambda dt: {"out": torch.tensor(9.0, device=DEV, dtype=dt) / 10},
        True),
    "seed-inv-freq": (
        lambda dt: {"out": 10 ** (torch.arange(0, 10, device=DEV, dtype=dt)
                                  / 10)},
        True),
    "rope-llama2": (_rope_llama2, True),
    "arange-step": (
        lambda dt: {"out": torch.arange(0, 100, 0.3, device=DEV, dtype=dt)},
        True),
}


def fail_input(msg):
    print(f"torch_fidelity: {msg}", file=sys.stderr)
    sys.exit(2)


def load_index(d):
    path = os.path.join(d, "index.json")
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        fail_input(f"cannot read '{path}': {e}")
    if not isinstance(index, dict) or index.get("format") != 1 or \
            not isinstance(index.get("entries"), list):
        fail_input(f"'{path}': not a format-1 index with an 'entries' list")
    return index


def load_entry(d, e):
    for key in ("probe", "output", "dtype", "tensor_dtype", "shape", "file"):
        if key not in e:
            fail_input(f"index entry {e!r} lacks '{key}'")
    if e["tensor_dtype"] not in DTYPES or e["dtype"] not in DTYPES:
        fail_input(f"{e['file']}: unknown dtype {e['tensor_dtype']!r} "
                   f"or {e['dtype']!r}")
    fdt, idt = DTYPES[e["tensor_dtype"]]
    path = os.path.join(d, e["file"])
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as ex:
        fail_input(f"cannot read '{path}': {ex}")
    numel = 1
    for s in e["shape"]:
        numel *= s
    size = torch.empty(0, dtype=idt).element_size()
    if len(raw) != numel * size:
        fail_input(f"'{path}': {len(raw)} bytes, expected {numel * size} "
                   f"for shape {e['shape']} of {e['tensor_dtype']}")
    bits = torch.frombuffer(bytearray(raw), dtype=idt) if raw else \
        torch.empty(0, dtype=idt)
    return bits.reshape(e["shape"]), fdt, idt


def hexbits(v, idt):
    width = torch.empty(0, dtype=idt).element_size() * 2
    return f"0x{int(v) & ((1 << (4 * width)) - 1):0{width}x}"


def compare(name, got_bits, want, fdt, idt, exact):
    """Returns True when bitprobe's bits equal PyTorch's (NaN by class)."""
    want = want.detach().contiguous().cpu()
    if tuple(want.shape) != tuple(got_bits.shape) or want.dtype != fdt:
        print(f"FAIL {name}: PyTorch gives {want.dtype} {list(want.shape)}, "
              f"bitprobe {fdt} {list(got_bits.shape)}")
        return False
    want_bits = want.view(idt)
    diff = want_bits != got_bits
    if fdt.is_floating_point:
        got = got_bits.view(fdt)
        diff &= ~(torch.isnan(got) & torch.isnan(want))
    n = int(diff.sum())
    total = want_bits.numel()
    if n == 0:
        print(f"PASS {name}: {total} elements bit-identical")
        return True
    flat = diff.reshape(-1).nonzero().reshape(-1)
    verdict = "FAIL" if exact else "NOTE"
    print(f"{verdict} {name}: {n} of {total} elements differ"
          + ("" if exact else " (inexact formulation: reported only)"))
    gf, wf = got_bits.reshape(-1), want_bits.reshape(-1)
    for i in flat[:8].tolist():
        g, w = gf[i], wf[i]
        gv = g.view(fdt).item() if fdt.is_floating_point else int(g)
        wv = w.view(fdt).item() if fdt.is_floating_point else int(w)
        print(f"     [{i}] bitprobe {gv!r} ({hexbits(g, idt)})  "
              f"torch {wv!r} ({hexbits(w, idt)})")
    return not exact


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--allow-missing", action="store_true",
                    help="skip probes with no PyTorch expression here")
    ap.add_argument("--probe", action="append",
                    help="check only this probe (repeatable)")
    ap.add_argument("--device", type=int, default=0, help="CUDA device")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return SKIP
    torch.cuda.set_device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    index = load_index(args.dir)
    fp = index.get("fingerprint", {})
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on "
          f"{torch.cuda.get_device_name()}; bitprobe {index.get('backend')}"
          f" (nvcc {fp.get('nvcc', '?')}, runtime {fp.get('runtime', '?')},"
          f" driver {fp.get('driver', '?')})")

    ok, missing, cache = True, set(), {}
    for e in index["entries"]:
        probe = e.get("probe")
        if args.probe and probe not in args.probe:
            continue
        if probe not in PROBES:
            missing.add(probe)
            continue
        got, fdt, idt = load_entry(args.dir, e)
        fn, exact = PROBES[probe]
        key = (probe, e["dtype"])
        if key not in cache:
            cache[key] = fn(DTYPES[e["dtype"]][0])
            torch.cuda.synchronize()
        outs = cache[key]
        name = f"{probe}.{e['output']} {e['dtype']}"
        if e["output"] not in outs:
            print(f"FAIL {name}: the table's expression has no output "
                  f"'{e['output']}' (it has {sorted(outs)})")
            ok = False
            continue
        ok &= compare(name, got, outs[e["output"]], fdt, idt, exact)

    for probe in sorted(missing):
        print(f"{'SKIP' if args.allow_missing else 'MISSING'} {probe}: no "
              f"PyTorch expression in {os.path.basename(__file__)}'s table")
    if missing and not args.allow_missing:
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
