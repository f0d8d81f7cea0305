"""Linear layers as PyTorch computes them on CUDA, against bitprobe's cuda
backend on the same inputs, bit for bit.

  linear_torch.py shapes [--seed S] [--count N]
      the shapes `run` draws: N linear layers (M tokens 1..4096, K and N
      features 256..16384, log-uniform, seeded) and five fixed ones at the
      ends of the ranges and of Llama's MLP.
  linear_torch.py run --bitprobe B --work DIR [--seed S] [--count N]
                      [--dtypes fp32,bf16,fp16] [--setting KEY=VALUE ...]
                      [--variants] [--shape MxKxN ...]
      for every shape and dtype, x [M, K] ~ N(0, 1), weight [N, K] and bias
      [N] ~ N(0, 0.02) drawn by torch on the GPU; PyTorch computes
      F.linear(x, w, b), F.linear(x, w), torch.addmm(b, x, w.t()),
      x @ w.t(), and the same on x viewed as [B, M/B, K] (F.linear with and
      without bias, x3 @ w.t()) and as [M/B, B, K] transposed to
      [B, M/B, K] (leading dimensions that do not fold: matmul's bmm with
      the weight expanded); a probe loads x, w, b and PyTorch's
      results, computes each as `linear`, `addmm` and `transpose` then
      `matmul` (the transposed view, not a copy), and counts on the device
      the elements that differ (ne, cast, sum): every count must be 0, and
      a control (PyTorch's result with one bit flipped) must count 1.  One
      bitprobe process per dtype.  --setting applies a BLAS setting to both
      sides: allow_tf32, allow_bf16_reduced_precision_reduction,
      allow_fp16_reduced_precision_reduction (0/1), preferred_blas_library
      (cublas, cublaslt), DISABLE_ADDMM_CUDA_LT (an environment variable of
      both processes).  --variants adds torch.addmm(b, x, w.t(), beta=0.5,
      alpha=2) and torch.addmm(c [M, N], x, w.t()).  Exit 1 on any
      difference.
  linear_torch.py invariance --bitprobe B --work DIR [--dtypes ...]
      the invariance engine's torch.mm and the probe op `matmul` on the
      same inputs (`bitprobe invariance --save-inputs`): for every M of
      the sweep, the digest of the probe's first row equals the engine's
      (engine cublas with the default settings, engine cublaslt with
      preferred_blas_library=cublaslt).  Exit 1 on any difference.

77 where torch or a CUDA device is missing.  Inputs stay under --work (a
tmpfs is fastest: /dev/shm).
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refio  # noqa: E402

try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
FIXED = [(1, 4096, 4096), (5, 11008, 4096), (17, 4096, 11008), (4096, 16384, 256),
         (4096, 256, 4096)]


def shapes(seed, count):
    """count random (M, K, N) and FIXED; sizes bounded so that one layer's
    tensors stay within a few hundred MB."""
    r = random.Random(seed)
    out = []
    while len(out) < count:
        m = int(round(math.exp(r.uniform(0, math.log(4096)))))
        k, n = (int(round(math.exp(r.uniform(math.log(256), math.log(16384))))) for _ in "kn")
        if r.random() < 0.7:  # most layers are multiples of 64; some are not
            k, n = max(256, k // 64 * 64), max(256, n // 64 * 64)
        if n * k <= 1 << 26 and m * n <= 1 << 24 and m * k <= 1 << 26:
            out.append((m, k, n))
    return out + FIXED


def apply_settings(settings):
    mm = torch.backends.cuda.matmul
    for key, val in settings:
        if key in ("allow_tf32", "allow_bf16_reduced_precision_reduction",
                   "allow_fp16_reduced_precision_reduction"):
            setattr(mm, key, val in ("1", "true"))
        elif key == "preferred_blas_library":
            torch.backends.cuda.preferred_blas_library(val)
        elif key == "DISABLE_ADDMM_CUDA_LT":
            os.environ[key] = val
        else:
            sys.exit("unknown --setting %s" % key)


def torch_settings():
    mm = torch.backends.cuda.matmul

    def get(obj, name):
        try:
            v = getattr(obj, name)
            return v() if callable(v) else v
        except (AttributeError, AssertionError, RuntimeError):
            return "n/a"
    return ", ".join("%s=%s" % (n, get(o, n)) for o, n in (
        (mm, "allow_tf32"), (mm, "allow_bf16_reduced_precision_reduction"),
        (mm, "allow_fp16_reduced_precision_reduction"), (torch.backends.cuda,
                                                          "preferred_blas_library")))


def bits(t):
    return t.contiguous().view({4: torch.int32, 2: torch.int16}[t.element_size()])


def same(a, b):
    return a.shape == b.shape and torch.equal(bits(a), bits(b))


def write_st(path, tensors):
    try:
        from safetensors.torch import save_file
        save_file({k: v.contiguous().cpu() for k, v in tensors.items()}, path)
    except ImportError:
        refio.st_write(path, tensors)


def layer(i, shape, dtname, work, device, variants=False):
    """One layer's inputs, PyTorch's results and the probe; returns the
    probe's path and its outputs: {output: what it checks}.  variants adds
    addmm with beta 0.5 and alpha 2, and addmm of a 2-D input [M, N]."""
    m, k, n = shape
    dt = DTYPES[dtname]
    g = torch.Generator(device=device).manual_seed(1000 * i + 7)
    x = torch.randn(m, k, device=device, generator=g).to(dt)
    w = (0.02 * torch.randn(n, k, device=device, generator=g)).to(dt)
    b = (0.02 * torch.randn(n, device=device, generator=g)).to(dt)
    c2 = (0.02 * torch.randn(m, n, device=device, generator=g)).to(dt) if variants else None
    b3 = 2 if m % 2 == 0 else 1
    x3 = x.view(b3, m // b3, k)
    # leading dimensions that do not fold into [-1, K] (strides [K, B*K, 1]):
    # matmul's batched path, bmm with the weight expanded (batch stride 0)
    xt = x.view(m // b3, b3, k).transpose(0, 1)
    F = torch.nn.functional
    with torch.no_grad():
        refs = {
            "linear_b": F.linear(x, w, b), "linear": F.linear(x, w),
            "addmm": torch.addmm(b, x, w.t()), "matmul": x @ w.t(),
            "linear3_b": F.linear(x3, w, b).reshape(m, n),
            "linear3": F.linear(x3, w).reshape(m, n),
            "matmul3": (x3 @ w.t()).reshape(m, n),
            "matmul3t": (xt @ w.t()).reshape(m, n)}
        if variants:
            refs["addmm_ba"] = torch.addmm(b, x, w.t(), beta=0.5, alpha=2)
            refs["addmm_2d"] = torch.addmm(c2, x, w.t())
    if device == "cuda":
        torch.cuda.synchronize()
    # one stored tensor per distinct result (the same calls give the same bits)
    stored, ref_of = [], {}
    for name, t in refs.items():
        for j, s in enumerate(stored):
            if same(s, t):
                ref_of[name] = "r%d" % j
                break
        else:
            ref_of[name] = "r%d" % len(stored)
            stored.append(t)
    ctrl = bits(refs["linear_b"].clone()).flatten()
    ctrl[len(ctrl) // 2] ^= 1
    name = "lin-%d-%s" % (i, dtname)
    tensors = {"x": x, "w": w, "b": b, "ctrl": ctrl.view(dt).view(m, n)}
    if variants:
        tensors["c2"] = c2
    tensors.update({"r%d" % j: t for j, t in enumerate(stored)})
    write_st(os.path.join(work, name + ".safetensors"), tensors)
    dty = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16"}[dtname]
    ops = ["  - {out: x, op: load, dtype: %s, shape: [%d, %d]}" % (dty, m, k),
           "  - {out: w, op: load, dtype: %s, shape: [%d, %d]}" % (dty, n, k),
           "  - {out: b, op: load, dtype: %s, shape: [%d]}" % (dty, n),
           "  - {out: ctrl, op: load, dtype: %s, shape: [%d, %d]}" % (dty, m, n)]
    ops += ["  - {out: r%d, op: load, dtype: %s, shape: [%d, %d]}" % (j, dty, m, n)
            for j in range(len(stored))]
    ops += ["  - {out: wt, op: transpose, a: w, dim0: 0, dim1: 1}",
            "  - {out: x3, op: reshape, a: x, shape: [%d, %d, %d]}" % (b3, m // b3, k),
            "  - {out: xv, op: reshape, a: x, shape: [%d, %d, %d]}" % (m // b3, b3, k),
            "  - {out: xt, op: transpose, a: xv, dim0: 0, dim1: 1}",
            "  - {out: y_linear_b, op: linear, inputs: [x, w, b]}",
            "  - {out: y_linear, op: linear, inputs: [x, w]}",
            "  - {out: y_addmm, op: addmm, inputs: [b, x, wt]}",
            "  - {out: y_matmul, op: matmul, a: x, b: wt}",
            "  - {out: y3_linear_b, op: linear, inputs: [x3, w, b]}",
            "  - {out: y3_linear, op: linear, inputs: [x3, w]}",
            "  - {out: y3_matmul, op: matmul, a: x3, b: wt}",
            "  - {out: y3t_matmul, op: matmul, a: xt, b: wt}"]
    if variants:
        ops[4:4] = ["  - {out: c2, op: load, dtype: %s, shape: [%d, %d]}" % (dty, m, n)]
        ops += ["  - {out: y_addmm_ba, op: addmm, inputs: [b, x, wt], beta: 0.5, alpha: 2}",
                "  - {out: y_addmm_2d, op: addmm, inputs: [c2, x, wt]}"]
    checks = {}
    pairs = [("linear_b", "y_linear_b"), ("linear", "y_linear"), ("addmm", "y_addmm"),
             ("matmul", "y_matmul"), ("linear3_b", "y3_linear_b"),
             ("linear3", "y3_linear"), ("matmul3", "y3_matmul"),
             ("matmul3t", "y3t_matmul")]
    if variants:
        pairs += [("addmm_ba", "y_addmm_ba"), ("addmm_2d", "y_addmm_2d")]
    for ref, y in pairs + [("ctrl", "y_linear_b")]:
        src = y
        if y.startswith("y3"):
            ops.append("  - {out: f_%s_%s, op: reshape, a: %s, shape: [%d, %d]}" % (ref, y, y, m, n))
            src = "f_%s_%s" % (ref, y)
        against = "ctrl" if ref == "ctrl" else ref_of[ref]
        ops += ["  - {out: ne_%s, op: ne, a: %s, b: %s}" % (ref, src, against),
                "  - {out: c_%s, op: cast, a: ne_%s, dtype: i32}" % (ref, ref),
                "  - {out: n_%s, op: sum, a: c_%s}" % (ref, ref)]
        checks["n_" + ref] = ref
    text = ("name: %s\ndescription: \"F.linear, torch.addmm and x @ w.t() of [%d, %d] x [%d, %d] "
            "%s against PyTorch's\"\ndtypes: [fp32]\nops:\n%s\noutputs:\n%s\n" % (
                name, m, k, n, k, dtname, "\n".join(ops),
                "\n".join("  - {name: %s}" % o for o in checks)))
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path, checks


def read_bundle(out_dir, probe, device):
    d = os.path.join(out_dir, probe)
    files = [f for f in os.listdir(d) if f.startswith(device)]
    if not files:
        sys.exit("%s: no %s container" % (d, device))
    tensors, _ = refio.st_read(os.path.join(d, files[0]))
    vals = {}
    for key, (dt, shape, raw) in tensors.items():
        vals[key.rsplit(".", 1)[0]] = int.from_bytes(raw, "little", signed=True)
    return vals


def bitprobe(args, cmd, ok=(0,)):
    """Runs bitprobe; exit status among ok (invariance's 1 is a finding)."""
    r = subprocess.run([args.bitprobe] + cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode not in ok:
        print(r.stdout[-3000:])
        sys.exit("bitprobe %s: exit %d" % (" ".join(cmd[:2]), r.returncode))
    return r.stdout


def cmd_run(args):
    settings = [s.split("=", 1) for s in args.setting]
    apply_settings(settings)
    cuda_blas = ",".join("%s=%s" % (k, v) for k, v in settings)
    if args.device == "cuda":
        p = torch.cuda.get_device_properties(0)
        print("environment: torch %s, CUDA %s, %s (sm%d%d)" % (
            torch.__version__, torch.version.cuda, p.name, p.major, p.minor))
    print("torch settings: %s" % torch_settings())
    if cuda_blas:
        print("bitprobe --cuda-blas %s" % cuda_blas)
    sh = ([tuple(int(v) for v in x.split("x")) for x in args.shape] if args.shape
          else shapes(args.seed, args.count))
    print("%d shapes (seed %d): %s" % (len(sh), args.seed,
                                       " ".join("%dx%dx%d" % s for s in sh)))
    os.makedirs(args.work, exist_ok=True)
    total, bad = 0, 0
    t0 = time.time()
    for dtname in args.dtypes.split(","):
        probes, checks = [], {}
        for i, s in enumerate(sh):
            path, c = layer(i, s, dtname, args.work, args.device, args.variants)
            probes.append(path)
            checks[os.path.basename(path)[:-5]] = (s, c)
            if args.device == "cuda":
                torch.cuda.empty_cache()
        out = os.path.join(args.work, "out-" + dtname)
        cmd = ["run"] + probes + ["--device", args.device, "--no-golden", "--save", out,
                                  "--quiet"]
        if cuda_blas:
            cmd += ["--cuda-blas", cuda_blas]
        bitprobe(args, cmd)
        for probe, (s, c) in checks.items():
            vals = read_bundle(out, probe, args.device)
            diffs = []
            for o, ref in c.items():
                want = 1 if ref == "ctrl" else 0
                total += ref != "ctrl"
                if vals.get(o) != want:
                    diffs.append("%s %s (want %d)" % (ref, vals.get(o), want))
            bad += bool(diffs)
            print("%s %-18s %s" % (dtname, "%dx%dx%d" % s,
                                   "0 differ (%d forms)" % (len(c) - 1) if not diffs else
                                   "DIFFER: " + ", ".join(diffs)))
        for f in os.listdir(args.work):
            if f.endswith(".safetensors") and f.endswith("-%s.safetensors" % dtname):
                os.remove(os.path.join(args.work, f))
    print("%d comparisons of %d layers, %d layers differ (%.0f s)" % (
        total, len(sh) * len(args.dtypes.split(",")), bad, time.time() - t0))
    return 1 if bad else 0


def cmd_invariance(args):
    os.makedirs(args.work, exist_ok=True)
    ms = [1, 2, 3, 7, 8, 64, 513]
    bad = 0
    for engine, blas in (("cublas", ""), ("cublaslt", "preferred_blas_library=cublaslt")):
        for dtname in args.dtypes.split(","):
            tag = "%s-%s" % (engine, dtname)
            inputs = os.path.join(args.work, "inv-%s-inputs.safetensors" % tag)
            rep = os.path.join(args.work, "inv-%s.json" % tag)
            common = ["invariance", "--engine", engine, "--shape", "4096x4096",
                      "--m", ",".join(map(str, ms)), "--place", "first", "--dtype", dtname]
            # the inputs (--save-inputs sweeps nothing), then the sweep on them
            bitprobe(args, common + ["--save-inputs", inputs], ok=(0,))
            bitprobe(args, common + ["--no-oracle", "--json", rep], ok=(0, 1))
            t, _ = refio.st_read(inputs)
            name = "inv-" + tag
            ab = {}
            for key in ("a", "b"):
                dt, shape, raw = t["%s.%s" % (key, dtname)]
                ab[key] = (dt, shape, raw)
            # the engine's inputs, renamed for the probe's load ops
            head = {k: {"dtype": v[0], "shape": list(v[1])} for k, v in ab.items()}
            at, data = 0, []
            for k in sorted(head):
                raw = ab[k][2]
                head[k]["data_offsets"] = [at, at + len(raw)]
                at += len(raw)
                data.append(raw)
            h = json.dumps(head, separators=(",", ":"), sort_keys=True).encode()
            h += b" " * (-len(h) % 8)
            with open(os.path.join(args.work, name + ".safetensors"), "wb") as f:
                f.write(len(h).to_bytes(8, "little") + h + b"".join(data))
            mmax, kk = ab["a"][1]
            nn = ab["b"][1][1]
            ops = ["  - {out: a, op: load, dtype: %s, shape: [%d, %d]}" % (dtname, mmax, kk),
                   "  - {out: b, op: load, dtype: %s, shape: [%d, %d]}" % (dtname, kk, nn)]
            for m in ms:
                ops += ["  - {out: a%d, op: slice, a: a, axis: 0, start: 0, end: %d}" % (m, m),
                        "  - {out: y%d, op: matmul, a: a%d, b: b}" % (m, m),
                        "  - {out: row%d, op: slice, a: y%d, axis: 0, start: 0, end: 1}" % (m, m)]
            text = ("name: %s\ndescription: \"torch.mm(a[:M], b) as the invariance engine's\"\n"
                    "dtypes: [fp32]\nops:\n%s\noutputs:\n%s\n" % (
                        name, "\n".join(ops), "\n".join("  - {name: row%d}" % m for m in ms)))
            path = os.path.join(args.work, name + ".yaml")
            with open(path, "w") as f:
                f.write(text)
            out = os.path.join(args.work, "out-" + name)
            cmd = ["run", path, "--device", "cuda", "--no-golden", "--save", out, "--quiet"]
            if blas:
                cmd += ["--cuda-blas", blas]
            bitprobe(args, cmd)
            d = os.path.join(out, name)
            cont = [f for f in os.listdir(d) if f.startswith("cuda")][0]
            rows, _ = refio.st_read(os.path.join(d, cont))
            j = json.load(open(rep))
            mp = [x for x in j["invariance"]["maps"] if x["engine"] == engine and
                  x["dtype"] == dtname and x["op"] == "matmul"][0]
            band = [bd for bd in mp["bands"] if bd["placement"] == "first"][0]
            digests = {g["group"]: g["digest"] for g in mp["groups"]}
            mism = []
            for c in band["configurations"]:
                raw = rows["row%d.fp32" % c["value"]][2]
                h = 0xCBF29CE484222325
                for byte in raw:
                    h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
                if "%016x" % h != digests[c["group"]]:
                    mism.append(c["value"])
            bad += bool(mism)
            print("%-9s %s: M %s: probe op %s the engine" % (
                engine, dtname, ",".join(map(str, ms)),
                "= (same bits)" if not mism else "DIFFERS at M %s from" % mism))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shapes")
    s.add_argument("--seed", type=int, default=20261201)
    s.add_argument("--count", type=int, default=20)
    for name in ("run", "invariance"):
        r = sub.add_parser(name)
        r.add_argument("--bitprobe", required=True)
        r.add_argument("--work", required=True)
        r.add_argument("--seed", type=int, default=20261201)
        r.add_argument("--count", type=int, default=20)
        r.add_argument("--dtypes", default="fp32,bf16,fp16")
        r.add_argument("--setting", action="append", default=[])
        # cpu: the pipeline alone, where there is no GPU (the CPU's GEMM is
        # not PyTorch's: differences are expected there)
        r.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
        r.add_argument("--shape", action="append", default=[],
                       help="MxKxN instead of the drawn shapes (repeatable)")
        r.add_argument("--variants", action="store_true",
                       help="also addmm with beta 0.5, alpha 2 and with a 2-D input")
    args = ap.parse_args()
    if args.cmd == "shapes":
        for s in shapes(args.seed, args.count):
            print("M %d, K %d, N %d" % s)
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        print("SKIP: no CUDA device for torch")
        return 77
    return cmd_run(args) if args.cmd == "run" else cmd_invariance(args)


if __name__ == "__main__":
    sys.exit(main())
