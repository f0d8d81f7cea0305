#!/usr/bin/env python3
"""Differential fuzzer: random probes over bitprobe's whole op table, run
by bitprobe on each device and replayed op by op in PyTorch.

    fuzz_torch.py run --bitprobe B --seed S [--probes N] [--ops M]
                      [--devices cpu,cuda] [--out DIR] [--regress DIR]
                      [--minimise] [--only I,J] [--small]
                      [--batch N] [--jobs J] [--budget-s S] [--models F]
    fuzz_torch.py regress --bitprobe B --dir tests/regress
                      [--devices cpu,cuda] [--write]

`run` generates N probes of about M ops each from seed S (probe i is a
pure function of S and i: fuzz_gen; with --models F, a fraction F of them
are model code as transformers writes it: fuzz_models), lets bitprobe run them N at a time,
J such batches at once (`run --device cpu,cuda --no-golden --save
--intermediates`, a progress line after each; no batch starts past S
seconds of --budget-s), replays every
op in PyTorch on the same device from bitprobe's own inputs (fuzz_check)
and requires bit identity: on CUDA for every op, on the CPU for every op
but those PyTorch takes from MKL (counted apart).  It prints the counts per
op kind and dtype, then every failure with its seed and probe; with
--minimise each failure is reduced by delta debugging (ops, shapes,
elements, scalars) to the smallest probe that still fails, and with
--regress DIR saved there with PyTorch's bits beside it (fuzz_min).

`regress` re-checks saved regression probes: PyTorch's stored bits against
bitprobe's on each device present (with --write: PyTorch's bits are
computed here and stored, on a machine with PyTorch and the devices).

Exit: 0 no failure, 1 failures (or ops without a PyTorch replay),
2 bad usage or a bitprobe error, 77 PyTorch or a requested device missing.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import refio  # noqa: E402

torch = refio.torch_for_script(sys.argv)

import fuzz_check  # noqa: E402
import fuzz_gen  # noqa: E402
import fuzz_ops  # noqa: E402


def log(msg):
    print(msg, flush=True)


def torch_env():
    import fuzz_min
    cap = fuzz_min.cpu_isa()
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return (f"torch {torch.__version__}, CPU capability {cap}, MKL "
            f"{'yes' if torch.backends.mkl.is_available() else 'no'}, {gpu}")


def bitprobe_run(bitprobe, probes, bundle, devices, extra=()):
    """Runs every probe in the directory; returns (exit status, stderr)."""
    if os.path.exists(bundle):
        shutil.rmtree(bundle)
    cmd = [bitprobe, "run", "--probes", probes, "--device", ",".join(devices), "--no-golden",
           "--save", bundle, "--intermediates", "--quiet", *extra]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr


def run_batch(args, specs, work, devices):
    """bitprobe over the specs, then the replay; probes bitprobe cannot run
    are reported and set aside.  Returns (specs run, Result, set aside)."""
    pdir = os.path.join(work, "probes")
    os.makedirs(pdir, exist_ok=True)
    for f in os.listdir(pdir):
        os.remove(os.path.join(pdir, f))
    specs, refused = fuzz_gen.validate(specs, pdir, args.bitprobe)
    aside = [(n, op, msg) for n, op, msg in refused]
    bundle = os.path.join(work, "bundle")
    for _ in range(len(specs) + 1):
        rc, err = bitprobe_run(args.bitprobe, pdir, bundle, devices, args.bitprobe_arg)
        if rc in (0, 1):
            break
        bad = [s for s in specs if f"'{s['name']}'" in err or f"/{s['name']}.yaml" in err
               or f" {s['name']} " in err]
        if not bad:
            raise RuntimeError(f"bitprobe run failed (exit {rc}): {err.strip()}")
        s = bad[0]
        m = re.search(r"/" + re.escape(s["name"]) + r"\.yaml:\d+: op '(?P<out>[^']+)'", err)
        msg = err.strip().splitlines()[-1]
        pruned = fuzz_gen.prune(s, [m["out"]]) if m else {"ops": []}
        kind = [op["op"] for op in s["ops"] if m and op["out"] == m["out"]]
        aside.append((s["name"], kind[0] if kind and pruned["ops"] else None, msg))
        specs.remove(s)
        if pruned["ops"]:  # only the op bitprobe cannot run goes, with what reads it
            specs.append(pruned)
            fuzz_gen.write(pruned, pdir)
        else:
            os.remove(os.path.join(pdir, s["name"] + ".yaml"))
    res = fuzz_check.Result()
    for s in specs:
        for dv in devices:
            if not fuzz_check.check_probe(s, bundle, dv, res):
                raise RuntimeError(f"no {dv} container for {s['name']} in {bundle}")
    return specs, res, aside


def _batch(args, idx, table, ops, extra, work, devices):
    """Probes idx drawn, run by bitprobe in their own directory under work
    and replayed: run_batch's answer.  A worker process's job."""
    torch.set_num_threads(1)  # bitprobe models ATen's chunking with one thread
    import fuzz_models
    names = {o["name"] for o in table}
    specs = [fuzz_models.probe(args.seed, i, names) if fuzz_models.chosen(args.seed, i,
                                                                           args.models)
             else fuzz_gen.probe(args.seed, i, table, args.ops, large=not args.small,
                                 extra_dtypes=extra,
                                 focus=ops[i % len(ops)] if args.each_op and ops else None)
             for i in idx]
    return run_batch(args, specs, os.path.join(work, f"batch-{idx[0]:05d}"), devices)


def run_batches(args, idx, table, ops, extra, work, devices, t0):
    """The probes idx in batches of --batch, --jobs at a time (worker
    processes), a progress line after each batch; past --budget-s seconds
    no further batch is started.  Returns (specs run, Result, set aside,
    probes drawn), in probe order whatever order the batches ended in."""
    batches = [idx[i:i + args.batch] for i in range(0, len(idx), args.batch)]
    done, res_all = {}, fuzz_check.Result()
    over = lambda: args.budget_s and time.time() - t0 >= args.budget_s  # noqa: E731

    def progress(k):
        res_all.merge(done[k][1])
        nprobes = sum(len(batches[j]) for j in done)
        cells = [f"{dv} {res_all.total(dv) - res_all.total(dv, 'own')} ops replayed, "
                 f"{res_all.total(dv, 'differ')} differ" for dv in devices]
        log(f"progress: {nprobes} of {len(idx)} probes, {time.time() - t0:.0f} s: "
            + "; ".join(cells))

    if args.jobs <= 1:
        for k, b in enumerate(batches):
            if over():
                break
            done[k] = _batch(args, b, table, ops, extra, work, devices)
            progress(k)
    else:
        import concurrent.futures as cf
        import multiprocessing
        spawn = multiprocessing.get_context("spawn")  # CUDA does not survive fork()
        with cf.ProcessPoolExecutor(args.jobs, mp_context=spawn) as ex:
            pending, nxt = {}, 0
            while nxt < len(batches) or pending:
                while nxt < len(batches) and len(pending) < args.jobs and not over():
                    pending[ex.submit(_batch, args, batches[nxt], table, ops, extra, work,
                                      devices)] = nxt
                    nxt += 1
                if not pending:
                    break
                for f in cf.as_completed(list(pending)):
                    k = pending.pop(f)
                    done[k] = f.result()
                    progress(k)
                    break
    specs, aside, res = [], [], fuzz_check.Result()
    for k in sorted(done):
        specs += done[k][0]
        res.merge(done[k][1])
        aside += done[k][2]
    return specs, res, aside, sum(len(batches[k]) for k in done)


def report(res, devices, seconds, out=log):
    ops = sorted({op for (_, op, _, _) in res.counts})
    dts = sorted({dt for (_, _, dt, _) in res.counts})
    for dv in devices:
        checked = res.total(dv) - res.total(dv, "own")
        out(f"{dv}: {checked} ops replayed: {res.total(dv, 'identical')} identical, "
            f"{res.total(dv, 'differ')} differ, {res.total(dv, 'mkl')} MKL (CPU, not required), "
            f"{res.total(dv, 'unpinned')} unpinned order (not required), "
            + (f"{res.total(dv, 'lookback')} cumsum beyond cub's fixed tiles (not "
               f"reproducible: look-back timing; not required), "
               if res.total(dv, 'lookback') else "") +
            (f"{res.total(dv, 'layout')} that PyTorch computes otherwise on its views (not "
             f"modelled: bitprobe computes on contiguous copies; not required), "
             if res.total(dv, 'layout') else "") +
            f"{res.total(dv, 'no-replay')} without a PyTorch replay, "
            f"{res.total(dv, 'unsupported')} this PyTorch cannot run, "
            f"{res.total(dv, 'refused')} PyTorch refuses"
            + (f", {res.total(dv, 'old-pytorch')} as PyTorch >= 2.1 computes them "
               f"(this PyTorch rounds the scalar first; not required)"
               if res.total(dv, 'old-pytorch') else ""))
    out("per op kind (identical/replayed; differ, mkl, unpinned where any):")
    for dv in devices:
        for op in ops:
            cells = []
            for dt in dts:
                c = {v: res.counts[(dv, op, dt, v)] for v in
                     ("identical", "differ", "mkl", "version", "unpinned", "lookback", "layout", "own",
                      "no-replay", "unsupported", "refused", "old-pytorch", "replay-error")}
                n = sum(c.values())
                if not n:
                    continue
                s = f"{dt} {c['identical']}/{n - c['own']}" if c["own"] < n else f"{dt} own {n}"
                s += "".join(f" {k} {c[k]}" for k in ("differ", "mkl", "version", "unpinned",
                                                      "lookback", "layout", "no-replay", "unsupported",
                                                      "refused", "old-pytorch", "replay-error")
                             if c[k])
                cells.append(s)
            if cells:
                out(f"  {dv:4} {op:12} " + "; ".join(cells))
    for dv in devices:
        diff = collections.Counter({(op, dt): n for (d2, op, dt, v), n in res.counts.items()
                                    if d2 == dv and v == "differ"})
        out(f"{dv} differences by op: " + (", ".join(f"{op} {dt} {n}" for (op, dt), n in
                                                     sorted(diff.items())) or "none"))
        if dv == "cpu":
            mkl = collections.Counter()
            for (d2, op, dt, v), n in res.counts.items():
                if d2 == "cpu" and fuzz_check.mkl_op({"op": op}, fuzz_check.DT.get(dt)):
                    mkl[(op, dt, v)] += n
            cells = sorted({(op, dt) for op, dt, _ in mkl})
            out("cpu MKL ops (not required): " + (", ".join(
                f"{op} {dt} {mkl[(op, dt, 'mkl')]} of "
                f"{sum(mkl[(op, dt, v)] for v in ('mkl', 'identical'))} differ"
                for op, dt in cells) or "none (this PyTorch has no MKL)"))
    mkl = torch.backends.mkl.is_available()
    if "cpu" in devices and any(dv == "cpu" for dv, *_ in res.rates) and not mkl:
        out("cpu GEMMs: this PyTorch takes its fp32 GEMMs from another BLAS than MKL: the "
            "rates below measure that BLAS, not the MKL orders bitprobe replays (no evidence "
            "either way; PyTorch 2.11's x86 wheel on an AVX-512 host checks those)")
    for (dv, op, dt, cls), (n, nd, el, eld) in sorted(res.rates.items()):
        # CUDA's GEMMs are required (cuBLAS's call as PyTorch makes it: a
        # difference is a failure, not counted here); the CPU's are not
        why = ("required: cuBLAS's call as PyTorch makes it" if dv != "cpu" else
               "not required: " + ("oneDNN" if dt != "fp32" else
                                   "MKL" if mkl else "this PyTorch's BLAS, not MKL,") + " order")
        out(f"{dv} {op} {dt} {cls or '(shape unknown)'}: {nd} of {n} ops differ, {eld} of {el} "
            f"elements ({100.0 * eld / el if el else 0:.3g}%) ({why})")
    out(f"time: {seconds:.1f} s")


def cmd_run(args):
    devices = args.devices.split(",")
    if "cuda" in devices and not torch.cuda.is_available():
        log("SKIP: PyTorch sees no CUDA device")
        return 77
    torch.set_num_threads(1)  # bitprobe models ATen's chunking with one thread
    import fuzz_min
    if "cpu" in devices and fuzz_min.isa_option(args.bitprobe) and not any(
            a.startswith("--cpu-isa") for a in args.bitprobe_arg):
        # the capability this PyTorch runs, which its build may cap below
        # what the CPU offers (and what bitprobe would detect)
        args.bitprobe_arg += ["--cpu-isa", fuzz_min.cpu_isa()]
    table, origin = fuzz_ops.load(args.bitprobe)
    missing = [o["name"] for o in table if not all(d in o["backends"] for d in devices)]
    if missing:  # an op a requested backend lacks would stop the whole batch
        log("fuzz: not drawn (no backend on every device asked for): " + ", ".join(missing))
        table = [o for o in table if o["name"] not in missing]
    ops = fuzz_gen.drawn(table)
    if args.focus_ops:
        want = args.focus_ops.split(",")
        unknown = [o for o in want if o not in ops]
        if unknown:
            log("fuzz: --focus-ops names ops the generator does not draw: " + ", ".join(unknown))
            return 2
        ops = want
    if args.each_op:
        args.probes = args.each_op * len(ops)
    log(f"fuzz: seed {args.seed}, {args.probes} probes of about {args.ops} ops, devices "
        f"{','.join(devices)}; op table from {origin}: {len(table)} ops")
    log(f"fuzz: compared against PyTorch {torch.__version__}: {torch_env()}; bitprobe "
        f"{' '.join(args.bitprobe_arg) or '(no options)'}; {args.models:.0%} of the probes "
        f"from model code (fuzz_models.py)")
    work = args.out or tempfile.mkdtemp(prefix="bitprobe-fuzz-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    idx = [int(i) for i in args.only.split(",")] if args.only else range(args.probes)
    # the extra dtypes bitprobe computes on every device and this torch has
    extra = [d for d in fuzz_gen.extra_dtypes(args.bitprobe, devices, work)
             if d in fuzz_check.DT]
    log("fuzz: cast targets beyond " + "/".join(fuzz_gen.DTYPES) + ": " +
        (", ".join(extra) or "none (no backend of the run computes them, or torch lacks them)"))
    specs, res, aside, drawn = run_batches(args, list(idx), table, ops, extra, work, devices, t0)
    if drawn < len(idx):
        log(f"fuzz: budget of {args.budget_s:g} s spent: {drawn} of {len(idx)} probes drawn, "
            f"the rest not drawn")
    for name, op, msg in aside:
        log(f"dropped (bitprobe refuses it): {name} {op or 'the whole probe'}: {msg}")
    report(res, devices, time.time() - t0)
    kinds = {o["name"] for o in table}
    seen = {op for (_, op, _, _) in res.counts}
    nogen = sorted(kinds & set(fuzz_gen.NOT_DRAWN))
    if nogen:
        log("never drawn (creation ops that need a file): " + ", ".join(nogen))
    undrawn = sorted((set(ops) if args.focus_ops else kinds) - seen - set(nogen))
    for op in undrawn:
        why = [msg for _, o, msg in aside if o == op] + \
            [msg for _, _, msg in aside if f"({op}" in msg]
        log(f"not drawn in this run: {op}" + (f" (bitprobe refused {len(why)} draws, e.g. "
                                               f"{why[0]})" if why else ""))
    noreplay = sorted({op for (_, op, _, v) in res.counts if v == "no-replay"})
    if noreplay:
        log("FAIL no PyTorch replay (add to tests/refs/probe_torch_ops.py): " + ", ".join(noreplay))
    for f in res.refusals[:10]:
        log(f"note: seed {args.seed} {f['probe']} {f['dtype']} op {f['index']} ({f['op']}) on "
            f"{f['device']}: {f['why']}")
    for f in res.failures:
        log(f"FAIL seed {args.seed} {f['probe']} {f['dtype']} op {f['index']} ({f['op']} -> "
            f"{f['out']}) on {f['device']}: {f['why']}")
    summary = {"seed": args.seed, "probes": len(specs), "env": torch_env(),
               "torch": torch.__version__, "models": args.models,
               "reasons": fuzz_check.REASONS,
               "rates": [[*k, *v] for k, v in sorted(res.rates.items())],
               "bitprobe_args": args.bitprobe_arg, "devices": devices,
               "date": time.strftime("%Y-%m-%d", time.gmtime()),
               "counts": [[*k, n] for k, n in sorted(res.counts.items())],
               "failures": res.failures, "refusals": res.refusals, "set_aside": aside}
    with open(os.path.join(work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(work, "specs.json"), "w") as f:
        json.dump(specs, f)
    if res.failures and args.minimise:
        import fuzz_min
        fuzz_min.minimise_all(args, res.failures, {s["name"]: s for s in specs}, work, log)
    short = coverage(res, devices, table, args.require) if args.require else []
    if args.each_op and undrawn:
        short.append("ops the generator drew no instance of that bitprobe runs: " +
                     ", ".join(undrawn) + " (a rule in tests/refs/fuzz_rules.py)")
    for line in short:
        log("FAIL coverage: " + line)
    log(f"fuzz: work files in {work}")
    return 1 if res.failures or noreplay or short else 0


def coverage(res, devices, table, need):
    """What this run left unchecked against --require N: fewer than N ops
    replayed on a device, an op kind of the table or a dtype never
    replayed there."""
    short = []
    # every op but those that need a file (load) and bitprobe's own
    # generators (uniform, randn, normal: nothing to replay)
    kinds = {o["name"] for o in table} - set(fuzz_gen.NOT_DRAWN) - set(fuzz_check.OWN)
    for dv in devices:
        n = res.total(dv) - res.total(dv, "own")
        if n < need:
            short.append(f"{dv}: {n} ops replayed, fewer than {need}")
        seen = {op for (d2, op, _, v), k in res.counts.items() if d2 == dv and v != "own"}
        if kinds - seen:
            short.append(f"{dv}: op kinds never replayed: {', '.join(sorted(kinds - seen))}")
        dts = {dt for (d2, _, dt, v), k in res.counts.items() if d2 == dv and v != "own"}
        if set(fuzz_gen.DTYPES) - dts:
            short.append(f"{dv}: dtypes never replayed: "
                         f"{', '.join(sorted(set(fuzz_gen.DTYPES) - dts))}")
    return short


def cmd_shipped(args):
    """The shipped probes (or any directory of them), op by op against
    PyTorch on each device: the same replay and verdicts as the fuzzer."""
    import glob
    import probe_spec
    devices = args.devices.split(",")
    if "cuda" in devices and not torch.cuda.is_available():
        log("SKIP: PyTorch sees no CUDA device")
        return 77
    torch.set_num_threads(1)
    import fuzz_min
    log(f"shipped: {torch_env()}; bitprobe {' '.join(args.bitprobe_arg) or '(no options)'}")
    specs = [probe_spec.load(p) for p in sorted(glob.glob(os.path.join(args.probes, "*.yaml")))]
    if args.probe:
        specs = [s for s in specs if s["name"] in args.probe]
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="bitprobe-shipped-")
    bundle = os.path.join(work, "b")
    rc, err = bitprobe_run(args.bitprobe, args.probes, bundle, devices, args.bitprobe_arg)
    if rc not in (0, 1):
        log(f"bitprobe run failed (exit {rc}): {err.strip()}")
        return 2
    res = fuzz_check.Result()
    for sp in specs:
        for dv in devices:
            fuzz_check.check_probe(sp, bundle, dv, res)
    if "cpu" in devices and specs:
        key = os.path.basename(fuzz_check.container(bundle, specs[0]["name"], "cpu"))
        log(f"bitprobe's CPU backend key: {key.split('.')[0]}; PyTorch's ATen CPU "
            f"capability: {fuzz_min.cpu_isa()}")
    report(res, devices, time.time() - t0)
    for f in res.failures:
        log(f"FAIL {f['probe']} {f['dtype']} {f['out']} ({f['op']}) on {f['device']}: {f['why']}")
    for f in res.refusals:
        log(f"note: {f['probe']} {f['dtype']} {f['out']} ({f['op']}) on {f['device']}: {f['why']}")
    shutil.rmtree(work)
    noreplay = sorted({op for (_, op, _, v) in res.counts if v == "no-replay"})
    if noreplay:
        log("FAIL no PyTorch replay (add to tests/refs/probe_torch_ops.py): " +
            ", ".join(noreplay))
    rc = 1 if res.failures or noreplay else 0
    log(f"shipped: {len(specs)} probes; exit {rc}")
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--bitprobe", required=True)
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--probes", type=int, default=50)
    r.add_argument("--ops", type=int, default=40)
    r.add_argument("--devices", default="cpu,cuda")
    r.add_argument("--out")
    r.add_argument("--regress")
    r.add_argument("--minimise", action="store_true")
    r.add_argument("--max-minimise", type=int, default=20)
    r.add_argument("--minimise-s", type=float, default=300,
                   help="seconds of minimising in all; later failures are saved unreduced")
    r.add_argument("--only")
    r.add_argument("--small", action="store_true", help="no tensors beyond a few thousand elements")
    r.add_argument("--each-op", type=int, default=0, metavar="K",
                   help="K probes per op of the table instead of --probes, each drawing "
                        "mostly that op; fails unless every op was drawn and replayed")
    r.add_argument("--focus-ops", metavar="LIST",
                   help="with --each-op: only these ops (comma-separated) are focused on and "
                        "must be drawn")
    r.add_argument("--require", type=int, default=0,
                   help="fail unless every device replayed N ops, every op kind and dtype")
    r.add_argument("--bitprobe-arg", action="append", default=[])
    r.add_argument("--aten-cpu-capability")
    r.add_argument("--models", type=float, default=0, metavar="F",
                   help="the fraction of probes drawn from real models (fuzz_models.py)")
    r.add_argument("--batch", type=int, default=20, metavar="N",
                   help="probes per bitprobe run (a progress line after each)")
    r.add_argument("--jobs", type=int, default=1, metavar="J",
                   help="batches run and replayed at once, each in its own process")
    r.add_argument("--budget-s", type=float, default=0, metavar="S",
                   help="start no further batch after S seconds (0: no limit); the "
                        "probes not drawn are said, --require still applies")
    sh = sub.add_parser("shipped")
    sh.add_argument("--bitprobe", required=True)
    sh.add_argument("--probes", default="probes")
    sh.add_argument("--probe", action="append")
    sh.add_argument("--devices", default="cpu,cuda")
    sh.add_argument("--bitprobe-arg", action="append", default=[])
    sh.add_argument("--aten-cpu-capability")
    g = sub.add_parser("regress")
    g.add_argument("--bitprobe", required=True)
    g.add_argument("--dir", required=True)
    g.add_argument("--devices", default="cpu,cuda")
    g.add_argument("--write", action="store_true")
    g.add_argument("--bitprobe-arg", action="append", default=[])
    g.add_argument("--aten-cpu-capability")
    args = ap.parse_args()
    if args.cmd == "run":
        return cmd_run(args)
    if args.cmd == "shipped":
        return cmd_shipped(args)
    import fuzz_min
    return fuzz_min.cmd_regress(args, log)


if __name__ == "__main__":
    sys.exit(main())
