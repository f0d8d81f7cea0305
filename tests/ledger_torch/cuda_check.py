"""The recorder's CUDA kernels against its torch-ops hash, on a GPU: the
same program (the Llama-style block, cache_check's cases, native_check's
odd tensors, the strided kernel's self-test views and random strided
views) recorded on CUDA with the kernels and with torch ops (which copy a
strided tensor contiguous and hash it with integer ops, each op recorded
in Python: the independent path), the kernels launched by the recorder's
C extension (python/_bitprobe_rec.c, where $BITPROBE_TORCH_EXT names it: it
must be used) and by its Python path; every record must be the same text.  Then random views, small and
large, hashed by the CUDA hasher against the native helper's hash of the
same values on the host, and against the plain-Python reference for the
small ones; and the strided kernel timed against the copy it replaces.
Exit 0 when all agree and the strided kernel was used, 1 otherwise, 77
without CUDA.

    python3 cuda_check.py [SEED]"""
import json
import os
import random
import sys
import tempfile
import time

import torch

import bitprobe_torch as bt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
seed = int(sys.argv[1]) if len(sys.argv) > 1 else int(time.time())
sys.argv = sys.argv[:1]  # cache_check reads its device from the command line
import cache_check  # noqa: E402
import llama_block  # noqa: E402
import native_check  # noqa: E402

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int8, torch.uint8, torch.bool,
          torch.float64, torch.int64, torch.int32, torch.complex64]


def random_view(rng, dev, max_elems, big=False):
    """A random strided view on dev: up to 6 dims, permuted, sliced with
    steps and offsets, some dims expanded; its base of at most max_elems
    elements (big: more than a quarter of that)."""
    dt = rng.choice(DTYPES)
    nd = rng.randint(1, 6)
    shape = [rng.randint(1, 9) for _ in range(nd)]
    while True:
        n = 1
        for s in shape:
            n *= s
        if n * 4 > max_elems or not big and rng.random() < 0.5:
            break
        shape[rng.randrange(nd)] *= rng.randint(2, 5)
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    base = (torch.randn(*shape, generator=g) * 50)
    base = base.to(dt) if not dt.is_complex else torch.complex(base, -base)
    t = base.to(dev)
    perm = list(range(nd))
    rng.shuffle(perm)
    t = t.permute(*perm)
    idx = []
    for s in t.shape:
        if s > 2 and rng.random() < 0.6:
            a = rng.randrange(s - 1)
            idx.append(slice(a, rng.randint(a + 1, s), rng.randint(1, 3)))
        else:
            idx.append(slice(None))
    t = t[tuple(idx)]
    if rng.random() < 0.3:
        ones = [d for d, s in enumerate(t.shape) if s == 1]
        if ones:
            sizes = list(t.shape)
            sizes[rng.choice(ones)] = rng.randint(2, 40)
            t = t.expand(*sizes)
    return t


def program(dev, rng):
    a = llama_block.parser().parse_args(["--dim", "64", "--heads", "4", "--hidden", "96",
                                         "--layers", "2", "--seq", "37", "--vocab", "50",
                                         "--device", dev])
    model, ids = llama_block.build(a)
    x, big = native_check.odd_inputs()
    x, big = x.to(dev), big.to(dev)
    views = bt.strided_cases(dev) + [random_view(rng, dev, 1 << 16) for _ in range(300)]

    def run():
        model(ids)
        cache_check.cases(dev)
        native_check.odd_ops(x, big)
        for v in views:
            v.clone()
    return run


def record(path, dev, fast, extension=True):
    run = program(dev, random.Random(seed))
    rec = bt.Recorder(path, argv=["cuda_check"], fast_cuda=fast, extension=extension)
    with torch.no_grad():
        with rec:
            run()
    if rec.core is not None:
        print("the C extension: %s" % rec.core.stats())
        if not rec.core.stats()["contiguous"]:
            print("FAIL: the C extension launched no kernel")
            record.bad += 1
        if fast and not rec.core.stats()["batches"]:
            print("FAIL: the C extension hashed no tensor in a batch")
            record.bad += 1
    elif extension and os.environ.get("BITPROBE_TORCH_EXT"):
        print("FAIL: the C extension is not used: %s" % bt._core_check())
        record.bad += 1
    lines = open(path).read().splitlines()
    out = []
    for line in lines[1:-1]:
        r = json.loads(line)
        if any(e.get("why") == "uninitialized" for e in r["in"]):
            for e in r["out"]:  # made of uninitialised memory: differs from run to run
                e["hash"] = "?"
            line = json.dumps(r)
        out.append(line)
    return out, json.loads(lines[-1])["end"]


record.bad = 0


def main():
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device for PyTorch")
        return 77
    dev = "cuda"
    print("cuda_check seed", seed)
    bad = 0
    tmp = tempfile.mkdtemp(prefix="cuda_check.")
    kern, end_k = record(os.path.join(tmp, "k.ledger"), dev, True)
    kern_py, _ = record(os.path.join(tmp, "p.ledger"), dev, True, False)
    ops, end_t = record(os.path.join(tmp, "t.ledger"), dev, False, False)
    bad += record.bad
    diff = [k for k, (a, b) in enumerate(zip(kern_py, ops)) if a != b]
    for k in diff[:3]:
        print("FAIL record %d:\n  kernels (Python path): %s\n  torch ops: %s" % (
            k, kern_py[k], ops[k]))
    bad += len(diff) + (len(kern_py) != len(ops))
    print("ledger on CUDA, kernels launched from Python against torch ops: %d records, %s" % (
        len(kern_py), "identical" if not diff and len(kern_py) == len(ops) else "differ"))
    for p in os.listdir(tmp):
        os.remove(os.path.join(tmp, p))
    os.rmdir(tmp)
    print("kernels: %s %s; torch ops: %s" % (end_k["hash_paths"], end_k["notes"],
                                             end_t["hash_paths"]))
    if "cuda-kernel" not in end_k["hash_paths"].values() or any(
            "disagrees" in n or "unavailable" in n or "failed" in n for n in end_k["notes"]):
        print("FAIL: the CUDA kernels were not used as they should: %s" % end_k["notes"])
        bad += 1
    if len(kern) != len(ops):
        print("FAIL: %d records with the kernels, %d with torch ops" % (len(kern), len(ops)))
        bad += 1
    diff = [k for k, (a, b) in enumerate(zip(kern, ops)) if a != b]
    for k in diff[:5]:
        print("FAIL record %d:\n  kernels:   %s\n  torch ops: %s" % (k, kern[k], ops[k]))
    bad += len(diff)
    hashed = sum(1 for r in kern for e in json.loads(r)["in"] + json.loads(r)["out"]
                 if e.get("hash") and e["hash"] != "?")
    print("ledger on CUDA, kernels against torch ops: %d records, %d hashes, %s" % (
        len(kern), hashed, "identical" if not diff and len(kern) == len(ops) else
        "%d records differ" % len(diff)))

    # random views through the hasher (the strided kernel) against the host
    h = bt.Hasher(fast_cuda=True)
    ch = h._cuda_for(torch.device(dev, torch.cuda.current_device()))
    if ch is None or not ch.strided_ok():
        print("FAIL: no strided CUDA kernel (%s)" % h.notes)
        return 1
    host = bt.Hasher(fast_cuda=False)
    rng = random.Random(seed + 1)
    views = [random_view(rng, dev, 1 << 12) for _ in range(1500)]
    views += [random_view(rng, dev, 1 << 23, big=True) for _ in range(40)]
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(5632, 2048, generator=g).to(torch.bfloat16).to(dev)
    views += [w.t(), w[:, ::2], w[1:, 3:].t(), w.view(-1, 128, 16).permute(2, 0, 1),
              w[:1000, :7].t(), w.to(torch.float32).t()[::3]]
    got = [h.submit(v) for v in views]
    h.resolve()
    want = [host.submit(v.to("cpu")) for v in views]
    host.resolve()
    nd = 0
    for v, a, b in zip(views, got, want):
        ref = bt.hash_bytes(bt._host_bytes(v)) if v.numel() * v.element_size() <= 4096 else None
        if a.value != b.value or (ref is not None and ref != a.value):
            nd += 1
            if nd <= 5:
                print("FAIL %s view %s strides %s offset %d: cuda %016x, host %016x%s" % (
                    v.dtype, tuple(v.shape), v.stride(), v.storage_offset(), a.value, b.value,
                    "" if ref is None else ", reference %016x" % ref))
    bad += nd
    strided = sum(1 for v in views if not v.is_contiguous())
    print("random views on CUDA: %d (%d strided, up to %d MiB), %d differ from the host" % (
        len(views), strided, max(v.numel() * v.element_size() for v in views) >> 20, nd))

    # the strided kernel against the copy it replaces, on the large views
    for v in (w.t(), w[:, ::2], w.view(-1, 128, 16).permute(2, 0, 1)):
        nb = v.numel() * v.element_size()
        for what, fn in (("strided kernel", lambda: ch.hash_now(v)),
                         ("contiguous() + kernel", lambda: ch.hash_now(v.contiguous()))):
            fn()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            dt = (time.perf_counter() - t0) / 20
            print("  %s %s strides %s, %.1f MiB: %s %.0f us (with the read-back)" % (
                bt.dtype_name(v.dtype), tuple(v.shape), v.stride(), nb / 2 ** 20, what, 1e6 * dt))
    print("cuda_check: %s" % ("all agree" if not bad else "%d differences" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
