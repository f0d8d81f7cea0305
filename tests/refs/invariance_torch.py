"""The invariance experiments written with PyTorch, on bitprobe's inputs
(`bitprobe invariance --save-inputs FILE`: the batch with the probed row
first), for comparison with bitprobe's maps.

  invariance_torch.py gemm INPUTS JSON [--dtype bf16] [--engine cublas]
      torch.mm(a[:m], b)[:1] against torch.mm(a[:1], b) for every m of the
      map bitprobe wrote to JSON (--json of `bitprobe invariance`): PyTorch's
      result groups, numbered in order of first appearance from the
      reference's (0), must be bitprobe's group at every m (same
      boundaries), and each group's FNV-1a 64 digest bitprobe's (same bits).
      Exit 1 when they differ.
  invariance_torch.py rows --op OP INPUTS [--dtype bf16] [--m 1:1024]
      PyTorch's own kernels under batch size: OP(x[:m])[:1] against
      OP(x[:1]) for rms_norm (torch.nn.functional.rms_norm, eps 1e-6, with
      w), softmax (torch.softmax), log_softmax (of x.float(), as samplers
      take logits), mean, sum (over the last axis).  Prints the map; exit 0
      (a finding, not a failure).
  invariance_torch.py attention INPUTS [--dtype bf16]
      one decoding query through scaled_dot_product_attention's math,
      flash and memory-efficient backends (whichever run): the bits each
      gives and how far apart they are.  Exit 0.

77 where torch or a CUDA device is missing (skip).  The standard library
and torch only (refio.py reads the safetensors file).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refio  # noqa: E402

try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device for torch")
    sys.exit(77)

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
          "tf32": torch.float32}
ST_TORCH = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def load(path, name):
    tensors, _ = refio.st_read(path)
    if name not in tensors:
        sys.exit("%s: no tensor %s (have %s)" % (path, name, ", ".join(sorted(tensors))))
    dt, shape, raw = tensors[name]
    as_int = {2: torch.int16, 4: torch.int32}[refio.ST_DTYPES[dt]]
    t = torch.frombuffer(bytearray(raw), dtype=as_int).view(ST_TORCH[dt])
    return t.reshape(shape)


def fnv1a64(raw):
    """bitprobe's digest (bp_inv_digest): FNV-1a 64 of the raw bytes."""
    h = 0xCBF29CE484222325
    for byte in raw:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def row_bytes(t):
    return refio.raw_bytes(t)


def values(spec):
    out = []
    for item in spec.split(","):
        parts = item.split(":")
        if len(parts) == 1:
            out.append(int(parts[0]))
            continue
        a, b = int(parts[0]), int(parts[1])
        if len(parts) == 3 and parts[2].startswith("x"):
            f, x = int(parts[2][1:]), a
            while x <= b:
                out.append(x)
                x *= f
        else:
            out.extend(range(a, b + 1, int(parts[2]) if len(parts) == 3 else 1))
    return sorted(set(out))


def sweep(fn, ms):
    """The result group of fn(m) at every m, groups numbered in order of
    first appearance with the reference fn(0)'s as 0; and one row's raw
    bytes per group."""
    ref = row_bytes(fn(0))
    groups, seq = [ref], []
    for m in ms:
        b = row_bytes(fn(m))
        if b not in groups:
            groups.append(b)
        seq.append(groups.index(b))
    return seq, groups


def intervals(ms, seq):
    out, start = [], 0
    for i in range(1, len(ms) + 1):
        if i == len(ms) or seq[i] != seq[start]:
            a, z = ms[start], ms[i - 1]
            out.append(("%d" % a if a == z else "%d-%d" % (a, z), seq[start]))
            start = i
    return out


def show(title, ms, seq):
    iv = intervals(ms, seq)
    print("%s: %d result group%s, %d boundar%s" % (
        title, len(set(seq) | {0}), "" if len(set(seq) | {0}) == 1 else "s", len(iv) - 1,
        "y" if len(iv) == 2 else "ies"))
    for span, g in iv[:40]:
        print("  M %-12s group %d%s" % (span, g, " = reference" if g == 0 else ""))
    if len(iv) > 40:
        print("  ... %d more intervals" % (len(iv) - 40))


def env_line():
    p = torch.cuda.get_device_properties(0)
    return "torch %s, CUDA %s, %s (sm%d%d)" % (torch.__version__, torch.version.cuda,
                                               p.name, p.major, p.minor)


def settings():
    """The matmul settings bitprobe's cublas engine mirrors, as this torch
    reports them."""
    def get(obj, name):
        try:
            v = getattr(obj, name)
            return v() if callable(v) else v
        except (AttributeError, AssertionError, RuntimeError):
            return "n/a"
    mm = torch.backends.cuda.matmul
    return ", ".join("%s=%s" % (n, get(o, n)) for o, n in (
        (mm, "allow_tf32"), (mm, "allow_bf16_reduced_precision_reduction"),
        (mm, "allow_fp16_reduced_precision_reduction"),
        (mm, "allow_fp16_accumulation"), (torch.backends.cuda, "preferred_blas_library")))


def canonical(seq):
    """seq renumbered in order of first appearance, 0 kept for the
    reference; and the new number -> old number map."""
    new, back = {0: 0}, {0: 0}
    out = []
    for g in seq:
        if g not in new:
            new[g] = len(new)
            back[new[g]] = g
        out.append(new[g])
    return out, back


def cmd_gemm(args):
    dt = DTYPES[args.dtype]
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    a = load(args.inputs, "a." + args.dtype).cuda()
    b = load(args.inputs, "b." + args.dtype).cuda()
    assert a.dtype == dt and b.dtype == dt
    rep = json.load(open(args.json))
    maps = [m for m in rep["invariance"]["maps"]
            if m["engine"] == args.engine and m["dtype"] == args.dtype and m["op"] == "matmul"]
    if not maps:
        sys.exit("%s: no %s %s matmul map" % (args.json, args.engine, args.dtype))
    m0 = maps[0]
    band = [bd for bd in m0["bands"] if bd["placement"] == "first"][0]
    ms = [c["value"] for c in band["configurations"]]
    bp_seq, bp_back = canonical([c["group"] for c in band["configurations"]])
    digests = {g["group"]: g["digest"] for g in m0["groups"]}
    bp_digest = {new: digests[old] for new, old in bp_back.items()}
    print("environment: %s" % env_line())
    print("torch settings: %s" % settings())
    with torch.no_grad():
        torch.mm(a[:1], b)  # cuBLAS handle and workspace before the clock
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        seq, groups = sweep(lambda m: torch.mm(a[:m], b)[:1] if m else torch.mm(a[:1], b), ms)
        torch.cuda.synchronize()
        dt_s = time.perf_counter() - t0
    print("pytorch sweep: %d values of M in %.2f s" % (len(ms), dt_s))
    show("pytorch torch.mm(a[:M], b)[:1] vs torch.mm(a[:1], b) %s" % args.dtype, ms, seq)
    show("bitprobe %s %s" % (args.engine, args.dtype), ms, bp_seq)
    ok = seq == bp_seq
    bad = [(m, x, y) for m, x, y in zip(ms, seq, bp_seq) if x != y]
    for m, x, y in bad[:10]:
        print("  M %d: pytorch group %d, bitprobe group %d" % (m, x, y))
    for g, raw in enumerate(groups):
        d = "%016x" % fnv1a64(raw)
        same = bp_digest.get(g) == d
        ok &= same
        print("  group %d digest: pytorch %s, bitprobe %s%s" % (
            g, d, bp_digest.get(g, "-"), "" if same else "  DIFFER"))
    print("boundaries and bits equal: %s" % ("yes" if ok else "NO"))
    return 0 if ok else 1


def cmd_rows(args):
    x = load(args.inputs, "x." + args.dtype).cuda()
    w = load(args.inputs, "w." + args.dtype).cuda().reshape(-1) if args.op == "rms_norm" \
        else None
    H = x.shape[1]
    ms = [m for m in values(args.m) if m <= x.shape[0]]
    F = torch.nn.functional
    ops = {
        "rms_norm": lambda t: F.rms_norm(t, (H,), weight=w, eps=1e-6),
        "softmax": lambda t: torch.softmax(t, dim=-1),
        "log_softmax": lambda t: torch.log_softmax(t.float(), dim=-1),
        "mean": lambda t: t.mean(dim=-1, keepdim=True),
        "sum": lambda t: t.sum(dim=-1, keepdim=True),
    }
    op = ops[args.op]
    print("environment: %s" % env_line())
    with torch.no_grad():
        t0 = time.perf_counter()
        seq, _ = sweep(lambda m: op(x[:m])[:1] if m else op(x[:1]), ms)
        torch.cuda.synchronize()
        dt_s = time.perf_counter() - t0
    show("pytorch %s over %d, %s, M %s (%.2f s)" % (args.op, H, args.dtype, args.m, dt_s),
         ms, seq)
    print("pytorch %s: %s under batch size" % (
        args.op, "INVARIANT" if set(seq) <= {0} else "NOT invariant"))
    return 0


def cmd_attention(args):
    q = load(args.inputs, "q." + args.dtype).cuda()
    k = load(args.inputs, "k." + args.dtype).cuda()
    v = load(args.inputs, "v." + args.dtype).cuda()
    L, HD = k.shape
    H = q.shape[1] // args.head_dim
    d = args.head_dim
    # [batch 1, heads, len, d]
    qq = q.reshape(1, H, 1, d)
    kk = k.reshape(L, H, d).permute(1, 0, 2).unsqueeze(0).contiguous()
    vv = v.reshape(L, H, d).permute(1, 0, 2).unsqueeze(0).contiguous()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    out = {}
    for name, be in (("math", SDPBackend.MATH), ("flash", SDPBackend.FLASH_ATTENTION),
                     ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                     ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            with sdpa_kernel(be), torch.no_grad():
                out[name] = torch.nn.functional.scaled_dot_product_attention(qq, kk, vv)
        except RuntimeError as e:
            print("%s: not run (%s)" % (name, str(e).splitlines()[0][:100]))
    print("environment: %s" % env_line())
    ref = out.get("math")
    for name, o in out.items():
        d64 = (o.double() - ref.double()).abs().max().item() if ref is not None else 0.0
        same = ref is not None and torch.equal(o.view(torch.int16 if o.element_size() == 2
                                                        else torch.int32),
                                               ref.view(torch.int16 if ref.element_size() == 2
                                                        else torch.int32))
        print("sdpa %-9s %d keys: %s the math path's bits; max |diff| %.3g" % (
            name, L, "=" if same else "!=", d64))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gemm")
    g.add_argument("inputs")
    g.add_argument("json")
    g.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    g.add_argument("--engine", default="cublas")
    r = sub.add_parser("rows")
    r.add_argument("inputs")
    r.add_argument("--op", required=True,
                   choices=["rms_norm", "softmax", "log_softmax", "mean", "sum"])
    r.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    r.add_argument("--m", default="1:1024")
    a = sub.add_parser("attention")
    a.add_argument("inputs")
    a.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    a.add_argument("--head-dim", type=int, default=128)
    args = ap.parse_args()
    return {"gemm": cmd_gemm, "rows": cmd_rows, "attention": cmd_attention}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
