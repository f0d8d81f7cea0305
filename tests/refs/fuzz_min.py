"""Minimising the fuzzer's failures and keeping them as regression probes.

A failure is (probe, run dtype, op, device): PyTorch's bits for that op,
replayed on bitprobe's inputs, differ from bitprobe's.  minimise() reduces
it by delta debugging, re-running bitprobe and the replay after each
step and keeping a step only while the same op still differs on the same
device:
  1. one run dtype, and only the op and what it reads (transitively);
  2. the op's tensor inputs become `tensor` literals holding bitprobe's
     values, so nothing upstream is needed;
  3. elements: ddmin over the literals' elements (elementwise ops, whose
     position still matters through ATen's vector/tail split), or halving
     each dimension (the others);
  4. scalars: simpler numbers where the failure survives them.

save() writes the result under a regression directory:
  NAME.yaml                 the probe (outputs: the failing op)
  NAME.cpu-ISA.safetensors  PyTorch's CPU bits of the output, ISA being
                            the ATen CPU capability they were taken with
  NAME.cuda.safetensors     PyTorch's CUDA bits
each container holding exactly the tensors `bitprobe run NAME --save`
writes, so that `bitprobe diff` compares them name by name; a device
where the op is not required (MKL on the CPU) gets no file.
cmd_regress() checks (or, with --write, computes) those files."""
import glob
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time

import torch

import fuzz_check
import fuzz_gen
import refio

LITERAL_MAX = 20000  # elements a literal may hold (the YAML file stays < 1 MiB)
MAX_TESTS = 250      # bitprobe runs per failure


class Trial:
    """Runs candidate probes on one device and says whether the target op
    still differs there."""

    def __init__(self, bitprobe, device, extra, work):
        self.bitprobe, self.device, self.extra = bitprobe, device, list(extra)
        self.work = work
        self.runs = 0

    def run(self, spec):
        """(ok, Result, bundle): ok False when bitprobe refuses the probe."""
        self.runs += 1
        d = tempfile.mkdtemp(dir=self.work)
        pd = os.path.join(d, "p")
        os.makedirs(pd)
        fuzz_gen.write(spec, pd)
        bundle = os.path.join(d, "b")
        p = subprocess.run([self.bitprobe, "run", "--probes", pd, "--device", self.device,
                            "--no-golden", "--save", bundle, "--intermediates", "--quiet",
                            *self.extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode not in (0, 1):
            shutil.rmtree(d)
            return False, None, None
        res = fuzz_check.Result()
        fuzz_check.check_probe(spec, bundle, self.device, res)
        return True, res, (d, bundle)

    def fails(self, spec, target):
        ok, res, d = self.run(spec)
        if d:
            shutil.rmtree(d[0])
        return ok and any(f["out"] == target for f in res.failures)


def _reads(op):
    return fuzz_gen.reads(op)


def _slice_to(spec, target):
    keep, need = [], {target}
    for op in reversed(spec["ops"]):
        if op["out"] in need:
            keep.append(op)
            need.update(_reads(op))
    return dict(spec, ops=list(reversed(keep)), outputs=[target])


def _values(t):
    """A saved tensor's elements as exact Python numbers, or None where a
    literal cannot hold them (integers beyond 2^53)."""
    flat = t.reshape(-1)
    if t.is_floating_point():
        return [float(v) for v in flat.double().tolist()]
    vals = [int(v) for v in flat.tolist()]
    return vals if all(abs(v) <= 2 ** 53 for v in vals) else None


def _materialise(spec, target, data, dtype):
    """The target's tensor inputs as literals of bitprobe's values."""
    ops = {op["out"]: op for op in spec["ops"]}
    top = ops[target]
    lit = []
    for name in dict.fromkeys(_reads(top)):
        t = data[f"{name}.{dtype}"]
        vals = _values(t) if t.numel() <= LITERAL_MAX else None
        if vals is None:
            return None
        lit.append({"out": name, "op": "tensor", "values": vals, "shape": list(t.shape),
                    "dtype": fuzz_check.NAMES[t.dtype]})
    return dict(spec, ops=lit + [top], outputs=[target])


def _with_elements(spec, target, keep):
    """Every literal reduced to the flat indices in keep, as 1-D."""
    ops = []
    for op in spec["ops"]:
        if op["op"] == "tensor" and op["out"] != target:
            v = [op["values"][i] for i in keep]
            op = dict(op, values=v, shape=[len(v)])
        ops.append(op)
    return dict(spec, ops=ops)


def _ddmin(items, test, budget):
    """Zeller's ddmin: a 1-minimal sublist of items for which test holds
    (within budget() more tests)."""
    n = 2
    while len(items) >= 2 and budget():
        size = math.ceil(len(items) / n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        reduced = False
        for i, c in enumerate(chunks):
            if not budget():
                break
            if len(chunks) > 1 and test(c):
                items, n, reduced = c, 2, True
                break
            rest = [x for j, ch in enumerate(chunks) if j != i for x in ch]
            if rest and test(rest):
                items, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), n * 2)
    return items


SIMPLE = [1, 2, 3, 10, -1, 0.5, 0.1, 2.5, 0.3, 0.001]


def minimise(failure, spec, bitprobe, extra, work, log, deadline=None):
    """The smallest probe found that still shows the failure, or None;
    past deadline (time.time()) it stops reducing and returns what it has."""
    dev, dtype, target = failure["device"], failure["dtype"], failure["out"]
    trial = Trial(bitprobe, dev, extra, work)
    budget = lambda: trial.runs < MAX_TESTS and (  # noqa: E731
        deadline is None or time.time() < deadline)
    s = _slice_to(dict(spec, dtypes=[dtype]), target)
    if not trial.fails(s, target):
        log(f"  {target}: does not fail alone in {dtype}; kept as generated")
        return None
    ok, _, (d, bundle) = trial.run(s)
    data = refio.st_tensors(fuzz_check.container(bundle, s["name"], dev))
    shutil.rmtree(d)
    m = _materialise(s, target, data, dtype)
    if m is not None and trial.fails(m, target):
        s = m
        top = s["ops"][-1]
        lits = [op for op in s["ops"] if op["op"] == "tensor"]
        n = math.prod(lits[0]["shape"]) if lits else 0
        same = all(math.prod(op["shape"]) == n for op in lits)
        if lits and same and n > 1 and top["op"] not in ("matmul", "outer", "concat", "slice",
                                                         "sum", "rotate_half"):
            flat = _with_elements(s, target, list(range(n)))
            if trial.fails(flat, target):
                keep = _ddmin(list(range(n)), lambda k: trial.fails(
                    _with_elements(flat, target, k), target), budget)
                s = _with_elements(flat, target, keep)
    for key in ("a", "b"):
        v = s["ops"][-1].get(key)
        if v is None or isinstance(v, str):
            continue
        for c in SIMPLE:
            if not budget() or len(repr(c)) >= len(repr(v)) or isinstance(c, int) != isinstance(v, int):
                continue
            cand = dict(s, ops=s["ops"][:-1] + [dict(s["ops"][-1], **{key: c})])
            if trial.fails(cand, target):
                s = cand
                break
    log(f"  {target}: minimised in {trial.runs} bitprobe runs to {len(s['ops'])} ops, "
        f"{sum(len(op.get('values', [])) for op in s['ops'])} literal elements")
    return s


def regress_name(seed, failure):
    base = f"fz{seed}-{failure['probe'].split('-')[-1]}-{failure['op']}-{failure['dtype']}-" \
        f"{failure['device']}"
    return re.sub(r"[^a-z0-9-]", "-", base.lower())


def torch_bits(spec, device, bundle):
    """PyTorch's bits of the probe's outputs on device, replayed on the
    inputs bitprobe saved; None when an output is not required there."""
    res = fuzz_check.Result()
    data = refio.st_tensors(fuzz_check.container(bundle, spec["name"], device))
    tdev = "cuda" if device == "cuda" else "cpu"
    out = {}
    outs = set(spec["outputs"])
    for d in spec["dtypes"]:
        bufs = {}
        for op in spec["ops"]:
            mine = data[f"{op['out']}.{d}"]
            if op["out"] in outs:
                t, required = fuzz_check.replay_op(op, bufs, fuzz_check._dt_out(op, d), tdev,
                                                   mine.to(tdev))
                if not required or (device == "cpu" and fuzz_check.mkl_op(op, t.dtype)):
                    return None
                out[f"{op['out']}.{d}"] = t.cpu()
            bufs[op["out"]] = mine.to(tdev)
    del res
    return out


def cpu_isa():
    """PyTorch's ATen CPU capability here, in --cpu-isa's words."""
    cap = refio.cpu_capability().upper()
    return {"AVX512": "avx512", "AVX2": "avx2"}.get(cap, "default")


def onednn_matters(spec):
    """Whether the probe has an op PyTorch may hand to oneDNN (gelu's erf
    form): its CPU bits then depend on oneDNN's ISA too."""
    return any(op["op"] == "gelu" and op.get("approximate", "none") == "none"
               for op in spec["ops"])


def onednn_isa(bitprobe, extra=()):
    """oneDNN's ISA as bitprobe resolves it here (ONEDNN_MAX_CPU_ISA capped
    by the CPU, or --onednn-isa in extra): the one PyTorch's oneDNN runs
    in this environment.  None for a bitprobe without the option."""
    p = subprocess.run([bitprobe, "fingerprint", "--device", "cpu", "--json", *extra],
                       capture_output=True, text=True)
    try:
        model = json.loads(p.stdout)["backends"][0].get("model") or {}
    except (ValueError, KeyError, IndexError):
        return None
    return model.get("onednn_isa")


def cpu_tag(spec, bitprobe, extra):
    """The CPU bits' tag: cpu-ISA, and +onednn-ISA where oneDNN matters."""
    tag = f"cpu-{cpu_isa()}"
    if onednn_matters(spec):
        isa = onednn_isa(bitprobe, [a for a in extra if not a.startswith("--cpu-isa")
                                    and a not in ("avx512", "avx2", "default")])
        if isa:
            tag += f"+onednn-{isa}"
    return tag


def tag_args(tag):
    """bitprobe's options for a CPU tag: --cpu-isa, and --onednn-isa where
    the tag names one (cpu-avx512+onednn-avx512_core)."""
    isa, _, onednn = tag[4:].partition("+onednn-")
    return ["--cpu-isa", isa] + (["--onednn-isa", onednn] if onednn else [])


def save(spec, name, directory, bitprobe, extra, devices, origin, log):
    """Writes the regression probe and PyTorch's bits for each device."""
    spec = dict(spec, name=name, description=f"fuzzer regression: {origin}", origin=origin)
    work = tempfile.mkdtemp()
    pd = os.path.join(work, "p")
    os.makedirs(pd)
    fuzz_gen.write(spec, pd)
    written = []
    for dev in devices:
        bundle = os.path.join(work, dev)
        p = subprocess.run([bitprobe, "run", "--probes", pd, "--device", dev, "--no-golden",
                            "--save", bundle, "--intermediates", "--quiet", *extra],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode not in (0, 1):
            log(f"  {name}: bitprobe cannot run it on {dev}: {p.stderr.strip()}")
            continue
        bits = torch_bits(spec, dev, bundle)
        if bits is None:
            continue
        tag = cpu_tag(spec, bitprobe, extra) if dev == "cpu" else "cuda"
        meta = {"torch": torch.__version__, "origin": origin,
                "device": torch.cuda.get_device_name(0) if dev == "cuda" else f"cpu {cpu_isa()}"}
        refio.st_write(os.path.join(directory, f"{name}.{tag}.safetensors"), bits, meta)
        written.append(tag)
    shutil.rmtree(work)
    if written:
        fuzz_gen.write(spec, directory)
    return written


def minimise_all(args, failures, specs, work, log):
    """Minimises failures (one per probe, op kind, dtype and device) and
    saves them under args.regress."""
    seen = set()
    todo = []
    for f in failures:
        key = (f["op"], f["dtype"], f["device"])
        if key in seen or "mismatched" not in f:
            continue
        seen.add(key)
        todo.append(f)
    mw = os.path.join(work, "minimise")
    os.makedirs(mw, exist_ok=True)
    deadline = time.time() + args.minimise_s
    for f in todo[:args.max_minimise]:
        if time.time() < deadline:
            log(f"minimising seed {args.seed} {f['probe']} {f['dtype']} {f['op']} on "
                f"{f['device']}")
            m = minimise(f, specs[f["probe"]], args.bitprobe, args.bitprobe_arg, mw, log,
                         deadline)
        else:  # out of time: the op and what it reads, unreduced
            log(f"not minimised (--minimise-s {args.minimise_s} spent): seed {args.seed} "
                f"{f['probe']} {f['dtype']} {f['op']} on {f['device']}")
            m = _slice_to(dict(specs[f["probe"]], dtypes=[f["dtype"]]), f["out"])
        if m is None or not args.regress:
            continue
        os.makedirs(args.regress, exist_ok=True)
        name = regress_name(args.seed, f)
        origin = f"seed {args.seed} probe {f['probe']}, {f['op']} {f['dtype']} on {f['device']}"
        tags = save(m, name, args.regress, args.bitprobe, args.bitprobe_arg,
                    args.devices.split(","), origin, log)
        log(f"  saved {os.path.join(args.regress, name)}.yaml with PyTorch's bits: "
            f"{', '.join(tags) or 'none'}")


def isa_option(bitprobe):
    p = subprocess.run([bitprobe, "run", "--help"], capture_output=True, text=True)
    return "--cpu-isa" in p.stdout + p.stderr


def cmd_regress(args, log):
    """Checks every regression probe: bitprobe against PyTorch's stored bits
    on each device present (with --write: stores PyTorch's bits first)."""
    ys = sorted(glob.glob(os.path.join(args.dir, "*.yaml")))
    if not ys:
        log(f"SKIP: no regression probes in {args.dir}")
        return 77
    # one thread, as the fuzzer's replay that stored them: ATen's CPU
    # chunking (fp16 softmax over a non-last axis, fz20261123-0090) depends
    # on the thread count, which bitprobe models at one
    torch.set_num_threads(1)
    bad = checked = 0
    for y in ys:
        name = os.path.basename(y)[:-5]
        with open(y) as fh:
            spec = fuzz_gen.from_yaml(fh.read(), y)
        for dev in args.devices.split(","):
            if dev == "cuda" and not torch.cuda.is_available():
                continue
            if args.write:
                extra = list(args.bitprobe_arg)
                if dev == "cpu" and isa_option(args.bitprobe) and not any(
                        a.startswith("--cpu-isa") for a in extra):
                    extra += ["--cpu-isa", cpu_isa()]  # the capability PyTorch runs
                tags = save(spec, name, args.dir, args.bitprobe, extra, [dev],
                            spec.get("origin", name), log)
                log(f"{name}: PyTorch's bits written for {', '.join(tags) or 'nothing'}")
                continue
            files = glob.glob(os.path.join(args.dir, f"{name}.{dev}*.safetensors"))
            for fpath in files:
                tag = os.path.basename(fpath)[len(name) + 1:-len(".safetensors")]
                extra = list(args.bitprobe_arg)
                if tag.startswith("cpu-"):
                    if isa_option(args.bitprobe):
                        extra += tag_args(tag)
                    elif tag != "cpu-avx2":  # a bitprobe that models AVX2 only
                        log(f"not checked: {name} {tag} (this bitprobe has no --cpu-isa)")
                        continue
                work = tempfile.mkdtemp()
                p = subprocess.run([args.bitprobe, "run", name, "--probes", args.dir, "--device",
                                    dev, "--no-golden", "--save", work + "/b", "--quiet", *extra],
                                   capture_output=True, text=True)
                got = glob.glob(os.path.join(work, "b", name, f"{dev}*.safetensors.gz"))
                if "which this CPU lacks" in p.stderr:
                    log(f"not checked: {name} {tag} (this CPU lacks {tag_args(tag)[1]})")
                    shutil.rmtree(work)
                    continue
                if p.returncode not in (0, 1) or not got:
                    log(f"FAIL {name} {tag}: bitprobe: {p.stderr.strip()}")
                    bad += 1
                    continue
                q = subprocess.run([args.bitprobe, "diff", got[0], fpath, "--quiet"],
                                   capture_output=True, text=True)
                checked += 1
                if q.returncode != 0:
                    bad += 1
                    log(f"FAIL {name} {tag}:\n{q.stdout}{q.stderr}")
                shutil.rmtree(work)
    log(f"regress: {checked} checked, {bad} failed")
    return 1 if bad else (0 if checked or args.write else 77)
