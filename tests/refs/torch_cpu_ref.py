#!/usr/bin/env python3
"""PyTorch's CPU results for the CPU backend's tests: every PyTorch-derived
reference of tests/backends/cpu/check_be_cpu.c and tests/backends/cpu/check_be_cpu_torch.c.

usage: torch_cpu_ref.py OUTDIR

Writes
  OUTDIR/torch_cpu.json          per case: the PyTorch expression, dtype,
                                 shape, ATen CPU capability asked for and
                                 used, threads, role, and the FNV-1a 64 of
                                 the result's bits (NaNs as one pattern,
                                 tests/backends/cpu/be_cpu_ref.c's hash()); and the
                                 PyTorch version, build, CPU capability and
                                 CPU model of the run
  OUTDIR/torch_cpu.safetensors   every case's result tensor
The tests read the hashes from tests/data/torch/torch_cpu.json;
torch_compare.py checks a run's files against the stored ones bit for bit.

Each case runs with torch.set_num_threads(threads) under ATEN_CPU_CAPABILITY
(set before torch is imported, so each capability runs in a process of its
own).  Roles: "target" cases are what bitprobe's CPU backend reproduces bit
for bit; "evidence" cases record what PyTorch's x86 build computes where
bitprobe does not follow it (fp32 sin, cos, exp, log and tanh go to MKL VML
where PyTorch is built with MKL: aten/src/ATen/cpu/vml.h), for the record
and for explaining differences (tests/backends/cpu/check_torch_data.c).

Needs torch and numpy; exits 77 (SKIP) without them.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refio  # noqa: E402

N_ALL = 65536  # every bf16 / f16 bit pattern


def splitmix64(i):
    z = (i * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def cases():
    """(name, capability, threads, role, expression, thunk) for every case;
    the thunks import torch lazily (the capability is fixed by then)."""
    import numpy as np
    import torch

    f32, bf16, f16 = torch.float32, torch.bfloat16, torch.float16
    DT = {"f32": f32, "bf16": bf16, "f16": f16, "f64": torch.float64}

    def t50(dt):
        return (torch.arange(1, 51.) / 7).to(dt)

    def every(dt):  # all 65536 bit patterns of a 16-bit float
        return torch.from_numpy(np.arange(N_ALL, dtype=np.uint16).view(np.int16)).view(dt)

    def inv_freq():
        return 1.0 / (10000 ** (torch.arange(0, 128, 2).float() / 128))

    def emb():
        fr = torch.outer(torch.arange(4096, dtype=f32), inv_freq())
        return torch.cat((fr, fr), dim=-1)

    def pairs():  # tests/backends/cpu/check_be_cpu_torch.c's pow pairs (same formula)
        r = [splitmix64(i) for i in range(N_ALL)]
        xb = [((127 + (v >> 24) % 21 - 10) << 23) | (v & 0x7FFFFF) for v in r]
        x = torch.from_numpy(np.array(xb, dtype=np.uint32).view(np.int32)).view(f32)
        k = torch.tensor([(v >> 40) % 48001 - 24000 for v in r], dtype=torch.int32)
        return x, k.to(f32) / 2000.0

    def dense(lo, hi):  # every 2^15-th fp32 bit pattern, finite, in [lo, hi]
        u = np.arange(0, 1 << 32, 1 << 15, dtype=np.uint64).astype(np.uint32)
        x = u.view(np.float32)
        keep = np.isfinite(x) & (x >= lo) & (x <= hi)
        return torch.from_numpy(x[keep].copy())

    out = []

    def add(name, expr, thunk, cap="avx2", threads=1, role="target"):
        out.append((name, cap, threads, role, expr, thunk))

    add("seed-inv-freq.y.f32", "10 ** (torch.arange(0, 10) / 10)",
        lambda: 10 ** (torch.arange(0, 10) / 10))
    add("rope.inv_freq.f32", "1.0 / (10000 ** (torch.arange(0, 128, 2).float() / 128))", inv_freq)
    add("rope.cos.bf16", "emb.to(torch.bfloat16).cos(), emb = cat((f, f), -1), "
        "f = outer(arange(4096.), inv_freq)", lambda: emb().to(bf16).cos())
    # arange(start, step, n): torch.arange(start, start + step * (n - 0.5), step)
    for dt, start, step, n, threads in (
            ("f32", 0, 0.3, 334, 1), ("f64", 0, 0.3, 334, 1), ("bf16", -3.7, 1.1, 913, 1),
            ("f16", 0.3, 1.3, 539, 1), ("f32", -50, 0.37, 271, 1),
            ("f32", -0.1416, 0.0001, 30000, 1), ("f32", -2.9974, 1.8375, 57, 1),
            ("bf16", 0.1, 0.3, 4000, 1), ("f16", 0.3, 1.3, 4000, 1),
            ("f32", 0.05, 0.37, 100000, 1), ("f32", 0.05, 0.37, 100000, 16),
            ("bf16", 0.05, 0.37, 100000, 16)):
        def ar(dt=dt, start=start, step=step, n=n):
            r = torch.arange(start, start + step * (n - 0.5), step, dtype=DT[dt])
            assert r.numel() == n, (start, step, n, r.numel())
            return r
        add("arange.%s.%g.%g.%d.t%d" % (dt, start, step, n, threads),
            "torch.arange(%r, %r + %r * (%d - 0.5), %r, dtype=%s)" % (
                start, start, step, n, step, DT[dt]),
            ar, threads=threads)
    # t50 = (torch.arange(1, 51.) / 7).to(dtype)
    for dt, e, cap in (("f32", 0.9, "avx2"), ("f32", 0.9, "avx512"), ("bf16", -0.5, "avx2"),
                       ("bf16", -0.5, "avx512"), ("f16", 2.5, "avx2"), ("bf16", 2.001, "avx2"),
                       ("f32", -2.0, "avx2")):
        add("pow.%s.t50.%g.%s" % (dt, e, cap), "t50(%s) ** %r" % (dt, e),
            lambda dt=dt, e=e: t50(DT[dt]) ** e, cap=cap)
    add("pow.bf16.10000_t50", "10000 ** t50(bf16)", lambda: 10000 ** t50(bf16))
    add("pow.f16.3.7_t50", "3.7 ** t50(f16)", lambda: 3.7 ** t50(f16))
    add("pow.f32.t50_t50div3", "t50(f32) ** (t50(f32) / 3)", lambda: t50(f32) ** (t50(f32) / 3))
    add("pow.f32.pairs", "x ** y, tests/backends/cpu/check_be_cpu_torch.c's 65536 pairs (splitmix64)",
        lambda: torch.pow(*pairs()))
    add("rsqrt.bf16.t50", "torch.rsqrt(t50(bf16))", lambda: torch.rsqrt(t50(bf16)))
    add("rsqrt.f16.t50", "torch.rsqrt(t50(f16))", lambda: torch.rsqrt(t50(f16)))
    for name, expr, fn in (
            ("div.bf16.t50_10", "t50(bf16) / 10", lambda: t50(bf16) / 10),
            ("div.f16.t50_3", "t50(f16) / 3", lambda: t50(f16) / 3),
            ("rdiv.bf16.3_t50", "3 / t50(bf16)", lambda: 3 / t50(bf16)),
            ("rdiv.f32.3_t50", "3 / t50(f32)", lambda: 3 / t50(f32)),
            ("add.bf16.t50_0.3", "t50(bf16) + 0.3", lambda: t50(bf16) + 0.3),
            ("rsub.f16.0.3_t50", "0.3 - t50(f16)", lambda: 0.3 - t50(f16)),
            ("mul.bf16.t50_0.3", "t50(bf16) * 0.3", lambda: t50(bf16) * 0.3)):
        add(name, expr, fn)
    for op, dt in (("sin", "bf16"), ("cos", "bf16"), ("exp", "bf16"), ("log", "bf16"),
                   ("tanh", "bf16"), ("cos", "f16"), ("exp", "f16"), ("log", "f16"),
                   ("tanh", "f16"), ("rsqrt", "f16"), ("sqrt", "bf16"), ("reciprocal", "bf16")):
        add("%s.%s.all" % (op, dt), "torch.%s(every %s bit pattern)" % (op, dt),
            lambda op=op, dt=dt: getattr(torch, op)(every(DT[dt])))
    add("cast.bf16.arange70000", "torch.arange(70000).to(torch.bfloat16)",
        lambda: torch.arange(70000).to(bf16))
    add("cast.f16.arange70000", "torch.arange(70000).to(torch.float16)",
        lambda: torch.arange(70000).to(f16))
    # Evidence: fp32 transcendentals, MKL VML's on an MKL build.
    add("sin.f32.rope", "emb.sin() (fp32, [4096, 128])", lambda: emb().sin(), role="evidence")
    add("cos.f32.rope", "emb.cos() (fp32, [4096, 128])", lambda: emb().cos(), role="evidence")
    for op, lo in (("sin", -np.inf), ("cos", -np.inf), ("exp", -np.inf), ("log", 2.0 ** -149),
                   ("tanh", -np.inf)):
        add("%s.f32.dense" % op, "torch.%s(every 2^15-th finite fp32 >= %g)" % (op, lo),
            lambda op=op, lo=lo: getattr(torch, op)(dense(lo, np.inf)), role="evidence")
    return out


def run_part(cap, path):
    """Runs the cases of capability cap (this process was started with
    ATEN_CPU_CAPABILITY=cap); writes their tensors and records to path."""
    import torch
    used = refio.cpu_capability()
    tensors, rec = {}, {}
    for name, c, threads, role, expr, thunk in cases():
        if c != cap:
            continue
        torch.set_num_threads(threads)
        rec[name] = {"expr": expr, "capability": cap, "capability_used": used,
                     "threads": threads, "role": role}
        try:
            t = thunk()
        except Exception as e:  # an op this PyTorch lacks: recorded, compared as a difference
            rec[name]["error"] = "%s: %s" % (type(e).__name__, e)
            continue
        tensors[name] = t
        rec[name].update({"dtype": refio.st_name(t), "shape": list(t.shape),
                          "fnv1a64": "0x%016x" % refio.fnv1a64(refio.st_name(t),
                                                               refio.raw_bytes(t))})
    refio.st_write(path + ".safetensors", tensors)
    with open(path + ".json", "w") as f:
        json.dump(rec, f)


def main(argv):
    if len(argv) == 4 and argv[1] == "--part":
        run_part(argv[2], argv[3])
        return 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print("SKIP: %s" % e)
        return 77
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    cases_rec, tensors = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for cap in ("avx2", "avx512"):
            part = os.path.join(tmp, cap)
            env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--part", cap, part],
                               env=env)
            if r.returncode:
                print("torch_cpu_ref: the %s part failed (exit %d)" % (cap, r.returncode),
                      file=sys.stderr)
                return 1
            with open(part + ".json") as f:
                cases_rec.update(json.load(f))
            st, _ = refio.st_read(part + ".safetensors")
            tensors.update(st)
    import torch
    doc = {"generator": "tests/refs/torch_cpu_ref.py", "env": refio.torch_env(),
           "cases": dict(sorted(cases_rec.items()))}
    with open(os.path.join(out, "torch_cpu.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    # The tensors as read back (raw bytes): written again through torch.
    import numpy as np
    np_of = {"F32": np.int32, "F64": np.int64, "I64": np.int64, "I32": np.int32,
             "BF16": np.int16, "F16": np.int16}
    tt = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32,
          "BF16": torch.bfloat16, "F16": torch.float16}
    back = {n: torch.from_numpy(np.frombuffer(raw, dtype=np_of[d]).copy()).view(tt[d]).reshape(s)
            for n, (d, s, raw) in tensors.items()}
    refio.st_write(os.path.join(out, "torch_cpu.safetensors"), back,
                   {"generator": "tests/refs/torch_cpu_ref.py", "torch": torch.__version__})
    n_ev = sum(1 for c in cases_rec.values() if c["role"] == "evidence")
    errors = [n for n, c in cases_rec.items() if "error" in c]
    print("torch_cpu_ref: %d cases (%d evidence) with PyTorch %s, capability %s, %s -> %s" % (
        len(cases_rec), n_ev, torch.__version__, refio.cpu_capability(), refio.cpu_model(), out))
    for n in errors:
        print("torch_cpu_ref: %s: %s" % (n, cases_rec[n]["error"]), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
