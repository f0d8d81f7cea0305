#!/usr/bin/env python3
"""Checks a generator run against the stored PyTorch references, bit for
bit.

usage: torch_compare.py STORED OUT      (e.g. tests/data/torch /tmp/out/torch)

- torch_cpu.json (torch_cpu_ref.py): every stored case must be in OUT with
  the same FNV-1a 64 of its bits; cases OUT has and STORED lacks are listed
  as new (with their hashes), not counted as differences.
- every *.safetensors(.gz) in STORED (torch_reference.py's RoPE caches):
  OUT must hold the same tensors (names, dtypes, shapes, bytes), gzip'd or
  not; the first differing elements are shown.
- info.json: the recorded results (rope_summary, seed_div_*_hex) must be
  equal; the environment (versions, GPU, CPU) is printed beside the stored
  one, a difference there is a note.
The evidence of PyTorch's fp32 sin at the two RoPE elements where the CPU
golden and rope_cpu differ ([4038, 26] and [4038, 90]) is printed when OUT
has it.

Exit: 0 identical, 1 any difference or anything missing, 2 bad usage.
Standard library only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refio  # noqa: E402

RESULT_KEYS = ("rope_summary", "seed_div_cuda_hex", "seed_div_cpu_hex")
problems = []


def problem(msg):
    problems.append(msg)
    print("DIFFERS: " + msg)


def find(out, name):
    for cand in (name, name[:-3] if name.endswith(".gz") else name + ".gz"):
        p = os.path.join(out, cand)
        if os.path.exists(p):
            return p
    return None


def compare_cases(stored, out):
    sp, op = os.path.join(stored, "torch_cpu.json"), os.path.join(out, "torch_cpu.json")
    if not os.path.exists(sp):
        return
    if not os.path.exists(op):
        problem("torch_cpu.json: not written by the run (%s)" % op)
        return
    s, o = json.load(open(sp)), json.load(open(op))
    sc, oc = s["cases"], o["cases"]
    same = 0
    for name, c in sorted(sc.items()):
        g = oc.get(name)
        if g is None:
            problem("torch_cpu.json: case %s not produced" % name)
        elif "error" in g:
            problem("torch_cpu.json: case %s failed: %s" % (name, g["error"]))
        elif g["fnv1a64"] != c["fnv1a64"]:
            problem("torch_cpu.json: case %s: %s, stored %s (%s)" % (
                name, g["fnv1a64"], c["fnv1a64"], c["expr"]))
        else:
            same += 1
    print("torch_cpu.json: %d of %d stored cases identical" % (same, len(sc)))
    for name in sorted(set(oc) - set(sc)):
        g = oc[name]
        print("  new (not stored): %s [%s] %s" % (name, g.get("role", "?"),
                                                   g.get("fnv1a64", g.get("error"))))
    print("  run: %s" % json.dumps(o.get("env", {}), sort_keys=True))
    print("  stored: %s" % json.dumps(s.get("env", {}), sort_keys=True))


def compare_tensors(stored, out):
    for fn in sorted(os.listdir(stored)):
        if not (fn.endswith(".safetensors") or fn.endswith(".safetensors.gz")):
            continue
        p = find(out, fn)
        if p is None:
            problem("%s: not written by the run" % fn)
            continue
        a, _ = refio.st_read(os.path.join(stored, fn))
        b, _ = refio.st_read(p)
        if sorted(a) != sorted(b):
            problem("%s: tensors %s, the run wrote %s" % (fn, sorted(a), sorted(b)))
            continue
        ok = True
        for name in sorted(a):
            (da, sa, ra), (db, sb, rb) = a[name], b[name]
            if (da, sa) != (db, sb):
                problem("%s %s: %s %s, the run wrote %s %s" % (fn, name, da, sa, db, sb))
                ok = False
            elif ra != rb:
                ea, eb = refio.elements(da, ra), refio.elements(db, rb)
                diff = [i for i in range(len(ea)) if ea[i] != eb[i]]
                problem("%s %s: %d of %d elements differ, first at %s" % (
                    fn, name, len(diff), len(ea),
                    ", ".join("[%d] 0x%x vs 0x%x" % (i, ea[i], eb[i]) for i in diff[:4])))
                ok = False
        if ok:
            print("%s: %d tensors identical" % (fn, len(a)))


def compare_info(stored, out):
    sp = os.path.join(stored, "info.json")
    if not os.path.exists(sp):
        return
    op = os.path.join(out, "info.json")
    if not os.path.exists(op):
        problem("info.json: not written by the run")
        return
    s, o = json.load(open(sp)), json.load(open(op))
    for k in RESULT_KEYS:
        if s.get(k) != o.get(k):
            problem("info.json %s: %s, stored %s" % (k, json.dumps(o.get(k)), json.dumps(s.get(k))))
    for k in sorted(set(s) | set(o)):
        if k not in RESULT_KEYS and s.get(k) != o.get(k):
            print("note: info.json %s: run %s, stored %s" % (
                k, json.dumps(o.get(k)), json.dumps(s.get(k))))


def evidence(out):
    p = find(out, "torch_cpu.safetensors")
    if p is None:
        return
    t, _ = refio.st_read(p)
    if "sin.f32.rope" not in t:
        return
    d, shape, raw = t["sin.f32.rope"]
    e = refio.elements(d, raw)
    for r, c in ((4038, 26), (4038, 90)):
        v = e[r * shape[1] + c]
        print("evidence: PyTorch's fp32 sin at [%d, %d] is 0x%08x (SLEEF's u10 and u35, AVX2 "
              "and AVX-512, give 0x3f7f8000: %s)" % (
                  r, c, v, "the same" if v == 0x3F7F8000 else "not SLEEF's"))


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    stored, out = argv[1], argv[2]
    if not os.path.isdir(stored) or not os.path.isdir(out):
        print("torch_compare: %s and %s must be directories" % (stored, out), file=sys.stderr)
        return 2
    compare_cases(stored, out)
    compare_tensors(stored, out)
    compare_info(stored, out)
    evidence(out)
    if problems:
        print("torch_compare: %d differences" % len(problems))
        return 1
    print("torch_compare: the run reproduces every stored reference bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
