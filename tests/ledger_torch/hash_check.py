"""bitprobe_torch's hash with torch ops against its plain-Python reference
(bitprobe_torch.hash_bytes, written from docs/ledger-format.md) on every
dtype the recorder names, on odd sizes, on views (transposed, sliced,
strided, expanded, at an odd storage offset; and bitprobe_torch.strided_cases
made on the device) and across the chunk
boundary of the torch-ops pass; on the CPU also by the native helper
(python/libbitprobe_torch.so) where it loads.  With --device cuda the
tensors are hashed on the GPU, by the compiled kernel and by torch ops,
both against the reference.  Prints its seed; exit 1 on any difference.

    python3 hash_check.py [SEED] [--device cuda]"""
import sys
import time

import torch

import bitprobe_torch as bt

args = [a for a in sys.argv[1:] if not a.startswith("--device")]
dev = "cpu"
if "--device" in sys.argv[1:]:
    dev = sys.argv[sys.argv.index("--device") + 1]
    args = [a for a in args if a != dev]
seed = int(args[0]) if args else int(time.time())
print("hash_check seed", seed)
g = torch.Generator().manual_seed(seed)
cases = []
for dt in list(bt._DTYPES):
    for n in (0, 1, 3, 7, 64, 1001):
        if dt.is_complex:
            x = torch.randn(n, 2, generator=g).to(torch.float64 if dt == torch.complex128
                                                     else torch.float32)
            x = torch.view_as_complex(x.contiguous())
        elif dt.is_floating_point:
            x = (torch.randn(n, generator=g) * 100).to(dt)
        elif dt == torch.bool:
            x = torch.randint(0, 2, (n,), generator=g).bool()
        else:
            try:
                x = torch.randint(-100, 100, (n,), generator=g).to(dt)
            except Exception:
                continue
        cases.append(x)
a = torch.randn(5, 7, generator=g)
cases += [a.t(), a[1:, 2:], a[:, ::2], a.expand(3, 5, 7)[1],
          torch.randn(1, generator=g).expand(10), a.to(torch.bfloat16)[1:, 1:],
          a.to(torch.float16).reshape(-1)[1:]]
# across the torch-ops pass's chunk boundaries: its chunk made small, so that
# a small tensor crosses two of them (the plain-Python reference takes
# seconds over the 2^22 words of the real chunk; the pass is the same code)
bt._CHUNK = 1 << 12
cases.append(torch.randint(-2**31, 2**31 - 1, (2 * bt._CHUNK + 5,), dtype=torch.int32,
                           generator=g))
# more tensors than the CUDA hasher has slots: a batch read back midway
# (on the GPU: a host hash has no slots)
if dev.startswith("cuda"):
    cases += [torch.full((3,), i, dtype=torch.int32) for i in range(bt._CudaHasher.SLOTS + 5)]


_refs = {}  # case index -> the reference hash (the plain-Python one is slow: once per case)


def reference(k, c):
    if k not in _refs:
        cc = c.contiguous()
        if cc.dtype.is_complex:
            cc = torch.view_as_real(cc).contiguous()
        raw = cc.reshape(-1).view(torch.uint8).numpy().tobytes() if cc.numel() else b""
        _refs[k] = bt.hash_bytes(raw)
    return _refs[k]


def check(cases, hs):
    bad = 0
    for k, (c, x) in enumerate(zip(cases, hs)):
        ref = reference(k, c)
        if ref != x.value:
            bad += 1
            print("MISMATCH %s %s: %016x, reference %016x" % (c.dtype, tuple(c.shape), x.value,
                                                              ref))
    return bad


bad = 0
runs = [("torch ops", False, False)]
runs += [("cuda kernel", True, False)] if dev.startswith("cuda") else []
runs += [("native helper", False, True)] if dev == "cpu" and bt._NATIVE is not None else []
for what, fast, native in runs:
    h = bt.Hasher(fast_cuda=fast, native=native)
    hs = [h.submit(c.to(dev)) for c in cases]
    h.resolve()
    print("%s on %s: %s%s" % (what, dev, h.paths, "; " + "; ".join(h.notes) if h.notes else ""))
    if fast and "cuda-kernel" not in h.paths.values():
        print("the CUDA kernel was not used")
        bad += 1
    if native and "native" not in h.paths.values():
        print("the native helper was not used")
        bad += 1
    if fast and any("strided" in n for n in h.notes):
        print("the strided CUDA kernel was not used")
        bad += 1
    bad += check(cases, hs)
    # views made on the device, read through their strides (the strided
    # kernel's self-test views, the first time on another hasher)
    views = bt.strided_cases(dev)
    hv = [h.submit(v) for v in views]
    h.resolve()
    for v, x in zip(views, hv):
        ref = bt.hash_bytes(bt._host_bytes(v))
        if ref != x.value:
            bad += 1
            print("MISMATCH %s view %s strides %s: %016x, reference %016x" % (
                v.dtype, tuple(v.shape), v.stride(), x.value, ref))
print("%d tensors and %d views, %d differ" % (len(cases), len(bt.strided_cases("cpu")), bad))
sys.exit(1 if bad else 0)
