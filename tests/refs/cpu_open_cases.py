"""What this PyTorch's CPU kernels give for the CPU differences the
differential fuzzer left open (probes/README.md, gelu and var rows):

  fp16-onednn   whether the host passes ATen's mkldnn_fp16_device_check,
                which sends fp16 gelu to oneDNN (Activation.cpp use_mkldnn)
  gelu-fp16     gelu of fp16 inf, -inf, +-65504, NaN (20 contiguous
                elements), with mkldnn enabled and disabled
  gelu-fp64     gelu of the fp64 0x1.02697cp+0 in vector lanes (32
                elements) and alone; ATen's formula with Debian's SLEEF 3.5
                and the exact value give 0x3feb3fffe6cb48fb, with the erf of
                PyTorch's bundled SLEEF 3.8/3.9 (bitprobe's sleef_erf.c)
                0x3feb3fffe6cb48fc, what PyTorch 2.11's AVX-512 lanes gave
  var-fp64      var(dim=1) of 257 rows of 64 fp64 values against Welford in
                double with and without the fused m2 update (m2 + delta *
                (x - mean)), and the two-pass sum of squares: how many rows
                each matches bit for bit

Usage: python3 cpu_open_cases.py (CPU only; any PyTorch)."""
import math
import struct

import torch


def h64(d):
    return "0x%016x" % struct.unpack("<Q", struct.pack("<d", d))[0]


def bits16(t):
    return " ".join("0x%04x" % (v & 0xFFFF) for v in t.view(torch.int16).tolist())


def fma(a, b, c):
    """a * b + c rounded once (exact rationals; math.fma is Python 3.13+)."""
    from fractions import Fraction
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def welford(row, fused):
    mean = m2 = 0.0
    for k, x in enumerate(row):
        delta = x - mean
        mean = mean + delta / float(k + 1)
        m2 = fma(delta, x - mean, m2) if fused else m2 + delta * (x - mean)
    return m2 / (len(row) - 1)


def two_pass(row):
    mean = sum(row) / len(row)
    return sum((x - mean) * (x - mean) for x in row) / (len(row) - 1)


def main():
    try:
        fp16 = bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())
    except (AttributeError, RuntimeError):
        fp16 = False
    print(f"torch {torch.__version__}")
    print(f"fp16-onednn {fp16}")
    x = torch.tensor([math.inf, -math.inf, 65504.0, -65504.0, math.nan] * 4, dtype=torch.float16)
    for enabled in (True, False):
        torch.backends.mkldnn.enabled = enabled
        try:
            print(f"gelu-fp16 mkldnn={enabled}: {bits16(torch.nn.functional.gelu(x)[:5])}")
        except RuntimeError as e:
            print(f"gelu-fp16 mkldnn={enabled}: {e}")
    torch.backends.mkldnn.enabled = True
    g = float.fromhex("0x1.02697cp+0")
    for n in (32, 1):
        r = torch.nn.functional.gelu(torch.full((n,), g, dtype=torch.float64))
        print(f"gelu-fp64 n={n}: {h64(r[0].item())}")
    rows = [[math.sin(0.7 * i + 1.3 * j) * 1000.0 + 524288.0 + (i % 7) for j in range(64)]
            for i in range(257)]
    v = torch.tensor(rows, dtype=torch.float64).var(dim=1).tolist()
    for name, f in (("welford-fused", lambda r: welford(r, True)),
                    ("welford-unfused", lambda r: welford(r, False)),
                    ("two-pass", two_pass)):
        same = sum(h64(f(r)) == h64(t) for r, t in zip(rows, v))
        print(f"var-fp64 {name}: {same} of {len(rows)} rows identical")


if __name__ == "__main__":
    main()
