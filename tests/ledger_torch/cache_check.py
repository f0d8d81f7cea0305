"""bitprobe_torch's hash caches against the bytes: a run of views, writes
in place (through views, through x.data, out=), freed and reused memory,
strided and dtype views, negative and conjugate views, recorded; a second
dispatch mode inside the recorder hashes every tensor operand and result
of every op from its bytes as the op sees them (bitprobe_torch.hash_bytes,
the plain-Python reference, on a host copy) and each ledger entry with a
hash must carry that hash.  Exit 1 on any difference.

    python3 cache_check.py [--device cuda]"""
import os
import sys
import tempfile

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import bitprobe_torch as bt

dev = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"


class NoDispatch:
    """No dispatch mode sees the ops run inside (a guard object in
    PyTorch 1.13, a context manager in 2.x)."""

    def __enter__(self):
        self.g = torch._C._DisableTorchDispatch()
        if hasattr(self.g, "__enter__"):
            self.g.__enter__()

    def __exit__(self, *exc):
        if hasattr(self.g, "__exit__"):
            self.g.__exit__(*exc)
        del self.g


def ref_hash(t):
    with NoDispatch():
        t = t.detach()
        if t.is_complex():
            t = torch.view_as_real(t.resolve_conj())
        if getattr(t, "is_neg", None) and t.is_neg():
            t = t.resolve_neg()
        t = t.contiguous().cpu().reshape(-1)
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
    return "%016x" % bt.hash_bytes(raw)


def op_name(func):
    s = func._schema
    ov = getattr(func, "_overloadname", "") or s.overload_name
    return s.name + ("." + ov if ov and ov != "default" else "")


def flat(v, out):
    if isinstance(v, torch.Tensor):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            flat(x, out)
    return out


class Reference(TorchDispatchMode):
    """Sees each op before the recorder (it is entered inside it)."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ins = flat(list(args), [])
        for v in kwargs.values():
            flat(v, ins)
        before = [ref_hash(t) for t in ins]
        out = func(*args, **kwargs)
        self.ops.append((before, [ref_hash(t) for t in flat(out, [])], op_name(func)))
        return out


def cases(d):
    x = torch.arange(12., device=d).reshape(3, 4)
    y = x.view(-1)              # contiguous view: the same bytes
    z = x.t()                   # strided view
    y + 1
    x.mul_(2)                   # written in place: y and z see it
    y + 1
    z * 1
    x.data.add_(1)              # through an alias with its own version counter
    y + 1
    z * 1
    x.view(4, 3).expand(2, 4, 3) * 1
    x[1:, 1:] * 1               # a strided view, twice: the same bytes
    x[1:, 1:] + 0
    x[0].zero_()                # through a view
    y * 1
    torch.mul(x, x)
    e = torch.empty(3, device=d)
    e.fill_(1)
    e + 1
    x.view(torch.int32) + 0     # the same bytes as another dtype
    if hasattr(torch, "_neg_view"):
        torch._neg_view(x) * 1  # shows other bytes than it holds
    c = x.to(torch.complex64)
    c.conj() * 1
    o = torch.zeros(12, device=d)
    torch.add(y, 1, out=o)
    o * 1
    torch.arange(7, dtype=torch.bfloat16, device=d)[1:] * 1  # odd offset
    for i in range(40):         # freed memory reused for other contents
        tmp = torch.full((16,), float(i), device=d)
        tmp * 1
        del tmp
    w = torch.ones(4, 4, device=d)
    v = w[:, :2]
    w.copy_(torch.full((4, 4), 3.0, device=d))  # overwritten whole
    v * 1
    u = torch.empty(5, device=d)  # uninitialised, read through an alias (zero.Init's
    u.data.to(torch.bfloat16)     # cast): no hash; then written, and hashed
    u.fill_(2)
    u.data.to(torch.bfloat16)


def main():
    tmp = tempfile.mkdtemp(prefix="cache_check.")
    path = os.path.join(tmp, "c.ledger")
    ref = Reference()
    with torch.no_grad():
        with bt.record(path):
            with ref:
                cases(dev)
    _, recs, end = bt.read_ledger(path)
    bad = checked = 0
    # The two modes may see an op or two differently (x.data is one detach
    # to the inner mode, two to the outer): the streams are paired in order
    # by op name; every op the inner mode saw must be found.
    k = 0
    for ins, outs, name in ref.ops:
        while k < len(recs) and recs[k]["op"] != name:
            k += 1
        if k == len(recs):
            print("%s: not in the ledger (in order)" % name)
            bad += 1
            break
        r = recs[k]
        k += 1
        for role, ents, want in (("in", r["in"], ins), ("out", r["out"], outs)):
            if len(ents) != len(want):
                print("#%d %s: %d %s entries, %d tensors" % (r["seq"], r["op"], len(ents), role,
                                                              len(want)))
                bad += 1
                continue
            for j, (e, h) in enumerate(zip(ents, want)):
                if e["hash"] is None:
                    continue
                checked += 1
                if e["hash"] != h:
                    bad += 1
                    print("#%d %s %s[%d] %s %s: ledger %s, bytes %s" % (
                        r["seq"], r["op"], role, j, e["dtype"], e["shape"], e["hash"], h))
    # memory nothing wrote, read through an alias: uninitialised, unhashed;
    # the same once written: hashed (and checked above)
    casts = [r["in"][0] for r in recs if r["op"] == "aten::_to_copy" and r["in"][0]["shape"] == [5]]
    if len(casts) != 2 or casts[0]["hash"] is not None or casts[0].get("why") != "uninitialized" \
            or casts[1]["hash"] is None:
        print("the alias of uninitialised memory: %s" % casts)
        bad += 1
    os.remove(path)
    os.rmdir(tmp)
    print("cache_check on %s (%s): %d ops, %d hashes checked against the bytes, %d differ" % (
        dev, ", ".join("%s %s" % kv for kv in end["hash_paths"].items()), len(recs), checked,
        bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
