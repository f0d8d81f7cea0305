"""The recorder's two host hashes write the same ledger: the Llama-style
block of llama_block.py and a run of strided, offset, complex, half and
empty tensors, recorded once with the native helper
(python/libbitprobe_torch.so, as $BITPROBE_TORCH_NATIVE names it) and once
with torch ops; every record must be the same text, and the end records
must name the two paths.  Exit 1 on a difference, 77 when the native
helper is not there to compare (BITPROBE_TORCH_NATIVE unset).

    python3 native_check.py"""
import json
import os
import sys
import tempfile

import torch

import bitprobe_torch as bt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_block  # noqa: E402


def odd_inputs():
    g = torch.Generator().manual_seed(7)
    return torch.randn(6, 10, generator=g), torch.randn(600, 600, generator=g)


def odd_ops(x, big):
    y = x.t() * 2                         # a transposed operand
    z = x[1:, ::3].contiguous()           # offset and stepped
    h = x.to(torch.float16).t()[2:] + 1   # half, strided
    c = torch.complex(x, x.flip(0)).conj() * 1j
    e = x[:0] * 3                         # empty
    b = (x > 0).t().logical_not()         # bool, strided
    big = big.t() * 0.5                   # strided past the helper's limit
    return y.sum() + z.sum() + h.float().sum() + c.real.sum() + e.sum() + b.sum() + big.sum()


def small_model():
    """The small Llama block (model, ids) the ledger checks record."""
    a = llama_block.parser().parse_args(["--dim", "16", "--heads", "2", "--hidden", "24",
                                         "--layers", "2", "--seq", "5", "--vocab", "17"])
    return llama_block.build(a)


def mixed_program(tail):
    """What the recorder's paths are compared on, built afresh each time
    (the same bits): the small model, cache_check's cases, the odd ops,
    bitprobe_torch.strided_cases, then tail(x) (x: the odd inputs' first)."""
    import cache_check  # (it does not import this module)
    model, ids = small_model()
    x, big = odd_inputs()
    views = bt.strided_cases("cpu")

    def run():
        model(ids)
        cache_check.cases("cpu")
        odd_ops(x, big)
        for v in views:
            v * 1
        tail(x)
    return run


def ledger_records(path):
    """(header, records) of the ledger at path, the records as text, the
    outputs of ops on uninitialised memory (which differ from run to run)
    hashed "?"."""
    lines = open(path).read().splitlines()
    out = []
    for line in lines[1:-1]:
        r = json.loads(line)
        if any(e.get("why") == "uninitialized" for e in r["in"]):
            for e in r["out"]:
                e["hash"] = "?"
            line = json.dumps(r)
        out.append(line)
    return json.loads(lines[0]), out


def record(path, native):
    model, ids = small_model()
    x, big = odd_inputs()
    with torch.no_grad():
        with bt.record(path, native=native, argv=["native_check"]):
            model(ids)
            odd_ops(x, big)
    lines = open(path).read().splitlines()
    return json.loads(lines[0]), lines[1:-1], json.loads(lines[-1])["end"]


def main():
    if not os.environ.get("BITPROBE_TORCH_NATIVE"):
        print("SKIP: BITPROBE_TORCH_NATIVE names no native helper")
        return 77
    if bt._NATIVE is None:
        print("FAIL: the native helper did not load")
        return 1
    d = tempfile.mkdtemp()
    _, recs_n, end_n = record(os.path.join(d, "n.ledger"), True)
    _, recs_t, end_t = record(os.path.join(d, "t.ledger"), False)
    bad = 0
    if end_n["hash_paths"].get("cpu") != "native" or end_t["hash_paths"].get("cpu") != "torch-ops":
        print("FAIL hash paths: %s and %s" % (end_n["hash_paths"], end_t["hash_paths"]))
        bad += 1
    if len(recs_n) != len(recs_t):
        print("FAIL: %d records with the native helper, %d with torch ops" % (
            len(recs_n), len(recs_t)))
        bad += 1
    for i, (a, b) in enumerate(zip(recs_n, recs_t)):
        if a != b:
            bad += 1
            if bad < 5:
                print("FAIL record %d:\n  native:    %s\n  torch ops: %s" % (i, a, b))
    hashed = sum(1 for r in recs_n for e in json.loads(r)["in"] + json.loads(r)["out"]
                 if e.get("hash"))
    print("%d records, %d tensor hashes: %s" % (
        len(recs_n), hashed, "identical" if not bad else "%d differ" % bad))
    for p in os.listdir(d):
        os.remove(os.path.join(d, p))
    os.rmdir(d)
    return 1 if bad or not hashed else 0


if __name__ == "__main__":
    sys.exit(main())
