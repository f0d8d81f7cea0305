"""The recorder's C extension (python/_bitprobe_rec.c, as $BITPROBE_TORCH_EXT
names it) writes the ledger its Python path writes: the Llama-style block
of llama_block.py, cache_check's views and writes in place (x.data
aliases, out=, freed memory reused, negative and conjugate views,
uninitialised memory), native_check's odd tensors, the strided kernels'
self-test views and more awkward cases (size-1 dims with odd strides,
inference tensors, complex, bool, empty, 0-dim, keyword arguments, lists
of tensors, results that are not tensors, a nan argument, a write the
recorder does not see), recorded with
the extension and without it, with the native helper and without it (the
extension then hands CPU hashes to Python), and with captures on (every
op goes to Python).  Every record must be the same text; the extension
must have recorded most ops itself (Core.stats) and the headers must say
which path ran (ops_path).  What the extension keeps per op until the
ledger is written must be out of the cyclic collector's sight (fewer new
tracked objects than half the ops, where one an op would show): tracked, it
cost ~2 us an op in collections.  Exit 1 on a difference, 77 when the extension
is not built (BITPROBE_TORCH_EXT unset or empty).

    python3 ext_check.py"""
import gc
import json
import os
import sys
import tempfile

import torch

import bitprobe_torch as bt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.argv = sys.argv[:1]  # cache_check reads its device from the command line
import cache_check  # noqa: E402
import native_check  # noqa: E402


def awkward(x):
    """What the common path must recognise as uncommon, or get right."""
    s = x[:, 2:3]                          # [6, 1] with strides [10, 1]
    s1 = s.t()[:, :1]                      # [1, 1], odd strides
    (s * 1, s1 + 0, x[4:5, ::3] * 2)
    with torch.inference_mode():
        inf = x * 3                        # no version counter
    inf + 1
    b = x > 0
    (b & b.t().t(), b[:, ::2].logical_not(), b.sum())
    c = torch.complex(x, -x)
    (c * c, c.conj().imag * 1, c.t().real + 0, torch.view_as_real(c) * 1)
    e = x[:0]
    (e + 1, e.t() * 2, torch.zeros(0, 3).sum(0))
    z = x.sum()                            # 0-dim
    (z * 2, z.item())                      # a result that is not a tensor
    (x.to(torch.float16), x.to(dtype=torch.float64), torch.cat([x, x, x[:1]], dim=0))
    (x * float("nan"), x.clamp(min=-1.0), x.sum(dim=1, keepdim=True))
    v = x.clone()
    v[1:3].add_(1)                         # in place through a view
    (v * 1, v.t() * 1)
    v.data.mul_(2)                         # through an alias
    (v + 0, v[::2] * 1)
    w = torch.empty(4, 4)
    w.copy_(torch.ones(4, 4))              # overwritten whole
    (w * 1, torch.stack([w, w]).unbind(0))
    p = torch.nn.Parameter(torch.ones(3))
    (p * 2, torch.add(p, p))
    big = torch.ones(600, 600)[::2, ::3]   # strided past the inline limit
    big + 0
    q = x.clone()
    (q * 1, q.view(-1) + 0)
    with cache_check.NoDispatch():
        q.add_(1)                          # a write the recorder does not see: only
    (q * 1, q.view(-1) + 0)                # the version counter says the bytes changed


def program():
    return native_check.mixed_program(awkward)


def record(path, extension, native=True, capture=None):
    run = program()
    rec = bt.Recorder(path, argv=["ext_check"], extension=extension, native=native,
                      capture=capture)
    with torch.no_grad():
        with rec:
            run()
    stats = rec.core.stats() if rec.core is not None else None
    return native_check.ledger_records(path) + (stats,)


def tracked_kept(path):
    """(ops recorded, objects the collector tracks that are new at the
    end of the recording) of the Llama-style block under the extension."""
    import llama_block
    a = llama_block.parser().parse_args("--dim 16 --heads 2 --hidden 16 --layers 4 --seq 4 "
                                        "--vocab 16 --device cpu".split())
    model, ids = llama_block.build(a)
    rec = bt.Recorder(path, argv=["ext_check"], extension=True)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = set(map(id, gc.get_objects()))
        with torch.no_grad():
            rec.__enter__()
            try:
                model(ids)
                n = sum(1 for o in gc.get_objects() if id(o) not in before)
            finally:
                rec.__exit__(None, None, None)
    finally:
        if was:
            gc.enable()
    return rec.seq, n


def main():
    if not os.environ.get("BITPROBE_TORCH_EXT"):
        print("SKIP: BITPROBE_TORCH_EXT names no C extension")
        return 77
    why = bt._core_check()
    if why is not None:
        print("FAIL: the C extension is not used: %s" % why)
        return 1
    tmp = tempfile.mkdtemp(prefix="ext_check.")
    bad = 0
    try:
        for what, kw in (("native helper", {}), ("torch ops", {"native": False}),
                         ("captures", {"capture": "aten::mul"})):
            p = os.path.join(tmp, "l.ledger")
            hp, want, _ = record(p, False, **kw)
            he, got, stats = record(p, True, **kw)
            # captures send every op to Python; else most are the extension's
            if stats is None or (stats["ops"] < len(got) // 2 if "capture" not in kw
                                 else stats["ops"]):
                print("FAIL %s: the extension recorded %s of %d ops" % (what, stats, len(got)))
                bad += 1
            if len(got) != len(want):
                print("FAIL %s: %d records with the extension, %d without" % (
                    what, len(got), len(want)))
                bad += 1
            diff = [k for k, (a, b) in enumerate(zip(got, want)) if a != b]
            for k in diff[:3]:
                print("FAIL %s, record %d:\n  extension: %s\n  python:    %s" % (
                    what, k, got[k], want[k]))
            bad += len(diff)
            hashed = sum(1 for r in got for e in json.loads(r)["in"] + json.loads(r)["out"]
                         if e.get("hash") not in (None, "?"))
            print("%s: %d records, %d hashes, %d ops by the extension: %s" % (
                what, len(got), hashed, stats["ops"] if stats else 0,
                "identical" if not diff and len(got) == len(want) else
                "%d records differ" % len(diff)))
            if not hashed:
                bad += 1
        ops, kept = tracked_kept(os.path.join(tmp, "gc.ledger"))
        print("tracked objects kept while recording %d ops: %d" % (ops, kept))
        if kept * 2 > ops:
            print("FAIL: the extension keeps %d objects the collector tracks for %d ops "
                  "(one an op would be half of them)" % (kept, ops))
            bad += 1
    finally:
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
