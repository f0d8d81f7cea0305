"""bitprobe init-audit MODEL: the command (`bitprobe init-audit` runs this,
`python3 -m bitprobe_torch init-audit` too).

It builds the reference (cpu) first, in a process that also counts the
parameters on meta and decides whether they fit (else every way builds its
parameters on meta: buffers only), then every other way, each in a fresh
process (build.py), and a twin of the reference and of each way that takes
memory from to_empty(), with uninitialised allocations poisoned.  Then per
way: the comparison (compare.py), the ledger diff and the introducing op of
each differing buffer, one more build of that way capturing those ops'
tensors so that `bitprobe explain` can judge them, the oracle (rope.py),
and with --effect a forward (effect.py).  The report (report.py) goes to
stdout, --json and --markdown.

Exit status: 0 every way agrees with the reference, 1 a buffer differs (or
is uninitialised, or is on one side only), 2 trouble (a bad MODEL, no
torch, a way that could not be built, a bitprobe step that failed)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import compare, judge, report, rope, stio, ways
from . import spec as spec_mod

PROG = "bitprobe init-audit"
MARKER = ".bitprobe-init-audit"


class Trouble(Exception):
    """Exit 2 with this one-line message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Trouble("%s (bitprobe init-audit --help says more)" % message)


def parser():
    p = _Parser(prog=PROG, add_help=True, description=(
        "Build MODEL the ways users build it, each in a fresh process, and compare every "
        "buffer (and with --params every parameter) with the CPU fp32 build: the op that "
        "introduced each difference, the oracle's verdict on RoPE buffers, uninitialised "
        "memory, and with --effect what it does to a forward."))
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--ways", help="comma-separated: %s (default: every one available here)" %
                   ",".join(ways.WAYS))
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp16", "fp32"),
                   help="the model dtype: cpu-bf16's default dtype, zero.Init's dtype, the "
                        "dtype buffers are also compared in (default bf16)")
    p.add_argument("--params", action="store_true", help="compare the parameters too")
    p.add_argument("--effect", action="store_true",
                   help="a forward on fixed token ids with each way's buffers")
    p.add_argument("--buffers-only", dest="buffers_only", action="store_true",
                   help="build the parameters on meta in every way (the default when they do "
                        "not fit this host)")
    p.add_argument("-o", "--output", metavar="DIR", help="keep the bundles, ledgers, probes here")
    p.add_argument("--json", metavar="FILE", help="the report as JSON ('-': stdout)")
    p.add_argument("--markdown", metavar="FILE", help="a bug ticket in Markdown")
    p.add_argument("--first", type=int, default=5, metavar="K",
                   help="mismatches shown per buffer group (default 5)")
    p.add_argument("--reinit", metavar="MODULE:CALLABLE",
                   help="the re-initialisation after to_empty() (default: model.init_weights(), "
                        "else every reset_parameters())")
    p.add_argument("--positions", type=int, metavar="N",
                   help="positions of a rotary forward's cos/sin (default: max_position_"
                        "embeddings, at most 8192; 0: none)")
    p.add_argument("--tokens", type=int, default=512, metavar="N",
                   help="--effect's token count (default 512)")
    p.add_argument("-q", "--quiet", action="store_true", help="the verdict and the failures only")
    return p


class Progress:
    """A status line on stderr, only on a terminal and without --quiet."""

    def __init__(self, on):
        self.on = on
        self.shown = False

    def __call__(self, msg):
        if self.on:
            sys.stderr.write("\r\033[K" + PROG + ": " + msg)
            sys.stderr.flush()
            self.shown = True

    def clear(self):
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def _find_bitprobe():
    b = os.environ.get("BITPROBE")
    if b and os.access(b, os.X_OK):
        return b
    b = shutil.which("bitprobe")
    if b:
        return b
    raise Trouble("cannot find the bitprobe program (set BITPROBE=path/to/bitprobe, or put it "
                  "on PATH)")


def _check_output_file(opt, path):
    if path is None or path == "-":
        return
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise Trouble("%s '%s': a directory" % (opt, path))
    if not os.path.isdir(d) or not os.access(d, os.W_OK):
        raise Trouble("%s '%s': cannot write in '%s'" % (opt, path, d))


def _prepare_dir(d):
    if os.path.exists(d):
        if not os.path.isdir(d):
            raise Trouble("-o '%s': not a directory" % d)
        if os.listdir(d) and not os.path.exists(os.path.join(d, MARKER)):
            raise Trouble("-o '%s': holds files of something else (give a new or empty "
                          "directory, or one an earlier init-audit wrote)" % d)
        for e in os.listdir(d):  # an earlier audit's output: replaced whole
            if e != MARKER:
                p = os.path.join(d, e)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    else:
        os.makedirs(d)
    with open(os.path.join(d, MARKER), "w") as f:
        f.write("written by bitprobe init-audit\n")


class Audit:
    def __init__(self, a, bitprobe, workdir, progress):
        self.a, self.bitprobe, self.dir, self.progress = a, bitprobe, workdir, progress
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                    else "")
        env["BITPROBE"] = bitprobe
        env.pop("BITPROBE_QUIET", None)
        self.env = env
        self.ways = {}
        self.twins = {}

    # --- build processes
    def child(self, args, log):
        cmd = [sys.executable, "-m", "bitprobe_torch"] + args
        with open(log, "w") as f:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=self.env)
        return r.returncode

    def build(self, way, out, extra, label):
        os.makedirs(out, exist_ok=True)
        a = self.a
        args = ["init-build", "--way", way, "--model", a.model, "--out", out, "--dtype", a.dtype]
        if a.params:
            args.append("--params")
        if a.reinit:
            args += ["--reinit", a.reinit]
        if a.positions is not None:
            args += ["--positions", str(a.positions)]
        if way == "zero-init" and self.deepspeed:
            args.append("--deepspeed")
        args += extra
        t0 = time.time()
        self.progress(label)
        rc = self.child(args, os.path.join(out, "build.log"))
        wall = time.time() - t0
        if rc != 0 or not os.path.exists(os.path.join(out, "way.json")):
            tail = ""
            try:
                with open(os.path.join(out, "build.log")) as f:
                    lines = [l.strip() for l in f if l.strip()]
                tail = lines[-1] if lines else ""
            except OSError:
                pass
            why = ("the build process died (%s)" % (
                "signal %d" % -rc if rc < 0 else "exit %d" % rc)) + (": " + tail if tail else "")
            stio.write_json(os.path.join(out, "way.json"),
                            {"way": way, "status": "error", "why": why, "tensors": []})
        w = compare.Way(way, out)
        w.wall = wall
        return w

    def buffers_only_args(self):
        return ["--buffers-only"] if self.buffers_only else []


def _way_entry(w, how, note):
    i = w.info
    e = {"name": w.name, "status": i.get("status"), "why": i.get("why"), "how": how,
         "note": note, "seconds": round(getattr(w, "wall", 0.0), 2),
         "build_seconds": (i.get("seconds") or {}).get("construct"),
         "device": i.get("device"), "reinit": i.get("reinit"), "notes": i.get("notes", []),
         "tensors": len(i.get("tensors", [])), "buffers_only": i.get("buffers_only")}
    if i.get("deepspeed"):
        e["deepspeed"] = i["deepspeed"]
    return e


def _gb(b):
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= k:
            return "%.1f %s" % (b / k, unit)
    return "%d bytes" % b


def _cost(plan, forced):
    if forced:
        return "parameters built on meta in every way (--buffers-only): buffers only"
    if not plan or plan.get("fits", True):
        return None
    s = "the model's %s parameters take %s in fp32, more than half of this host's" % (
        "{:,}".format(plan["params"]), _gb(plan["param_bytes_fp32"]))
    if plan.get("mem_available") is not None:
        s += " available memory (%s" % _gb(plan["mem_available"])
        if plan.get("gpu_free") is not None:
            s += "; GPU %s free" % _gb(plan["gpu_free"])
        s += ")"
    return s + ": every way built its parameters on meta, buffers only (--params and " \
               "--effect are off)"


def _oracle_for(au, ref, probes):
    """Runs the oracle once for every way's dtypes: name -> {dtype: tensor}."""
    if not probes:
        return {}, None
    values, err = rope.run_oracle(au.bitprobe, probes, os.path.join(au.dir, "oracle"), au.env)
    return values, err


def run(a, progress):
    bitprobe = _find_bitprobe()
    try:
        spec = spec_mod.parse(a.model)
    except spec_mod.SpecError as e:
        raise Trouble(str(e))
    if spec.kind == "hf":
        import importlib.util
        if importlib.util.find_spec("transformers") is None:
            raise Trouble("MODEL '%s' is a Hugging Face config, and this Python cannot import "
                          "transformers: install it, or name a MODULE:CALLABLE" % a.model)
    _check_output_file("--json", a.json)
    _check_output_file("--markdown", a.markdown)
    if a.first < 0 or a.tokens <= 0 or (a.positions is not None and a.positions < 0):
        raise Trouble("--first, --tokens and --positions take counts")
    if a.reinit:
        try:
            spec_mod.parse(a.reinit)
        except spec_mod.SpecError as e:
            raise Trouble("--reinit: %s" % e)
    import torch
    requested = None
    if a.ways:
        requested = [w.strip() for w in a.ways.split(",") if w.strip()]
        bad = [w for w in requested if w not in ways.WAYS]
        if bad:
            raise Trouble("--ways: unknown way '%s' (the ways: %s)" % (bad[0], ", ".join(ways.WAYS)))
        if len(set(requested)) != len(requested):
            raise Trouble("--ways: a way named twice")
    plan = []
    for w in ways.WAYS:
        ok, why = ways.availability(w, torch)
        if requested is not None and w not in requested and w != ways.REFERENCE:
            continue
        if not ok:
            if requested is not None and w in requested:
                raise Trouble("way '%s' cannot run here: %s (leave it out of --ways)" % (w, why))
            plan.append((w, False, why))
        else:
            plan.append((w, True, why))
    if a.output:
        _prepare_dir(a.output)
        workdir = a.output
        keep = True
    else:
        workdir = tempfile.mkdtemp(prefix="bitprobe-init-audit-")
        keep = False
    au = Audit(a, bitprobe, workdir, progress)
    au.deepspeed = dict((w, why) for w, ok, why in plan).get("zero-init", "") == \
        "DeepSpeed's zero.Init"
    au.ledgers = {}
    try:
        rep = _run(a, au, spec, plan, torch)
        if not keep:  # the files are gone: no paths to them in the report
            for c in rep["comparisons"]:
                for g in c["groups"]:
                    for d in judge.intros(g):
                        ex = d.get("explain") or {}
                        ex.pop("command", None)
                        if ex.get("json") and ex["json"].get("probe"):
                            ex["json"]["probe"] = os.path.basename(ex["json"]["probe"])
        return rep, workdir if keep else None
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _run(a, au, spec, plan, torch):
    D = a.dtype
    runnable = [w for w, ok, _ in plan if ok]
    total = len(runnable) + 1 + sum(1 for w in runnable if w in ways.TO_EMPTY)
    step = [0]

    def label(what):
        step[0] += 1
        return "[%d/%d] building %s ..." % (step[0], total, what)

    want_cuda = any(w in ("cuda", "zero-init", "meta", "fsdp2-meta") for w in runnable)
    extra = ["--plan"] + (["--want-cuda"] if want_cuda and torch.cuda.is_available() else [])
    if a.buffers_only:
        extra.append("--buffers-only")
    ref = au.build(ways.REFERENCE, os.path.join(au.dir, ways.REFERENCE), extra,
                   label(ways.REFERENCE + " (the reference)"))
    if not ref.ok:
        if ref.info.get("bad_model"):
            raise Trouble(ref.info.get("why"))
        raise Trouble("the reference build (cpu) failed: %s%s" % (
            ref.info.get("why"), "" if not a.output else " (see %s)" % os.path.join(
                ref.dir, "error.txt")))
    au.buffers_only = bool(ref.info.get("buffers_only"))
    bo = ["--buffers-only"] if au.buffers_only else []
    au.ways[ref.name] = ref
    twin = au.build(ways.REFERENCE, os.path.join(au.dir, ways.REFERENCE + "-poisoned"),
                    bo + ["--poison", "--no-record"], label("cpu's poisoned twin"))
    au.twins[ref.name] = twin
    built = [ref]
    for w, ok, why in plan:
        if w == ways.REFERENCE or not ok:
            continue
        way = au.build(w, os.path.join(au.dir, w), bo, label(w))
        built.append(way)
        au.ways[w] = way
        if w in ways.TO_EMPTY and way.ok:
            au.twins[w] = au.build(w, os.path.join(au.dir, w + "-poisoned"),
                                   bo + ["--poison", "--no-record"], label(w + "'s poisoned twin"))
    # the oracle: every dtype a way holds a RoPE tensor in, and the model dtype
    dts = {"fp32", D}
    for wy in built:
        for t in wy.info.get("tensors", []):
            k = rope.dtype_key(t["dtype"])
            if k:
                dts.add(k)
    probes, skipped = rope.plan(ref.info, dts)
    au.progress("running the RoPE formulas on the oracle ...")
    oracle_values, oerr = _oracle_for(au, ref, probes)
    probe_of = {}
    for pr in probes:
        for tname, o in pr["outs_all"].items():
            if o is not None:
                probe_of[tname] = pr
    rep = {"tool": "bitprobe", "command": "bitprobe init-audit " + " ".join(_argv_quote(a.argv)),
           "schema": "init-audit/1", "reference": ways.REFERENCE, "dtype": D,
           "model": {"spec": a.model, "kind": spec.kind, "class": (ref.info.get("model") or {})
                     .get("class"), "params": (ref.info.get("model") or {}).get("params"),
                     "config": ref.info.get("config")},
           "env": ref.info.get("env"), "plan": ref.info.get("plan"),
           "buffers_only": au.buffers_only, "cost": _cost(ref.info.get("plan"), a.buffers_only),
           "ways": [], "comparisons": [],
           "oracle": {"probes": [{"name": p["name"], "module": p["module"], "class": p["class"],
                                  "rope_type": p["rope_type"], "formula": p["desc"],
                                  "notes": p["notes"]} for p in probes],
                      "skipped": skipped, "error": oerr}}
    for w, ok, why in plan:
        if not ok:
            rep["ways"].append({"name": w, "status": "skipped", "why": why,
                                "how": ways.describe(w, D)})
            continue
        wy = au.ways[w]
        rep["ways"].append(_way_entry(wy, ways.describe(w, D), why))
    for name, tw in au.twins.items():
        if not tw.ok:
            e = next(w for w in rep["ways"] if w["name"] == name)
            e["status"], e["why"] = "error", "its poisoned twin (uninitialised memory filled " \
                "with 0xff) could not be built: %s" % tw.info.get("why")
    errors = [w for w in rep["ways"] if w["status"] == "error"]
    # the reference's own uninitialised tensors
    runi = []
    if twin.ok:
        for n, f in ref.facts.items():
            tf = twin.facts.get(n)
            if tf and tf.get("hash") and f.get("hash") and tf["hash"] != f["hash"]:
                runi.append(judge.uninit(ref, twin, n, ref))
    for wy in built[1:]:
        if not wy.ok:
            continue
        au.progress("comparing %s with %s ..." % (wy.name, ref.name))
        try:
            c = judge.analyse(au, ref, wy, oracle_values, probe_of, a)
        except Exception as ex:
            c = {"way": wy.name, "groups": [], "error": "%s: %s" % (type(ex).__name__, ex)}
        c["line"] = judge.group_line(c)
        rep["comparisons"].append(c)
    # explain the introducing ops: one more build of each way capturing them
    for c in rep["comparisons"]:
        seqs = sorted({d["seq"] for g in c["groups"] for d in judge.intros(g)})[:8]
        if not seqs:
            continue
        w = c["way"]
        cap = au.build(w, os.path.join(au.dir, w, "capture"),
                       bo + ["--capture-seqs", ",".join(map(str, seqs))],
                       "capturing %s's introducing ops for explain ..." % w)
        done = {}
        for s_ in seqs:
            if not cap.ok or not cap.ledger():
                done[s_] = {"error": "the capture build failed: %s" % cap.info.get("why")}
                continue
            au.progress("bitprobe explain %s op b%d ..." % (w, s_))
            done[s_] = compare.explain(au.bitprobe, ref.ledger(), cap.ledger(), s_,
                                       os.path.join(au.dir, "explain", w), au.env)
        for g in c["groups"]:
            ds = judge.intros(g)
            for d in ds:
                ex = done.get(d["seq"])
                if ex is not None:
                    d["explain"] = ex
                    judge.value_from_explain(d, ex)
    # effect
    if a.effect:
        if au.buffers_only:
            rep["effect"] = {"status": "off", "why": "parameters on meta (buffers only)"}
        else:
            au.progress("--effect: a forward with each way's buffers ...")
            toks = a.tokens
            for f in ref.info.get("tensors", []):
                if f.get("kind") == "buffer" and rope._CACHE.match(f.get("leaf", "")) \
                        and len(f["shape"]) >= 2:
                    toks = min(toks, f["shape"][-2])
            ok_ways = [w.name for w in built if w.ok]
            au.child(["init-effect", "--model", a.model, "--dir", au.dir, "--ways",
                      ",".join(ok_ways), "--dtype", D, "--tokens", str(toks)],
                     os.path.join(au.dir, "effect.log"))
            try:
                with open(os.path.join(au.dir, "effect.json")) as f:
                    rep["effect"] = json.load(f)
            except (OSError, ValueError):
                rep["effect"] = {"status": "error", "why": "the effect process wrote nothing"}
    # the verdict
    differ = sum(1 for c in rep["comparisons"] for g in c["groups"] if g["status"] != "identical")
    uninit = [(c["way"], g) for c in rep["comparisons"] for g in c["groups"]
              if g["status"] == "uninitialised"]
    cerr = [c for c in rep["comparisons"] if c.get("error")]
    bad_ways = [c["way"] for c in rep["comparisons"]
                if any(g["status"] != "identical" for g in c["groups"])]
    us, per = [], {}
    for w, g in uninit:
        per.setdefault(w, []).append(g["pattern"])
    for w, pats in per.items():
        us.append("%s: %s (the detail above)" % (w, ", ".join(pats)))
    for u in runi:
        us.append("cpu (the reference itself): %s" % u["code_path"])
    rep["uninitialised"] = [{"way": w, "pattern": g["pattern"], "names": g["names"],
                             **(g.get("uninit") or {})} for w, g in uninit] + \
        [dict(u, way=ways.REFERENCE) for u in runi]
    rep["uninitialised_summary"] = "; ".join(us) if us else (
        "none found (the reference%s built twice, its uninitialised allocations poisoned "
        "the second time)" % (" and " + ", ".join(w for w in au.twins if w != ref.name)
                              if len(au.twins) > 1 else ""))
    ncomp = len(rep["comparisons"])
    eerr = (rep.get("effect") or {}).get("status") == "error"
    if errors or cerr or oerr or eerr:
        status = 2
        what = "; ".join(["%s could not be built: %s" % (w["name"], w["why"]) for w in errors] +
                         ["%s: %s" % (c["way"], c["error"]) for c in cerr] +
                         (["the oracle: %s" % oerr] if oerr else []) +
                         (["--effect: %s" % rep["effect"].get("why")] if eerr else []))
        line = "error: %s" % what
        if bad_ways:
            line += "; and %d tensor groups differ in %s" % (differ, ", ".join(bad_ways))
    elif differ or runi:
        status = 1
        nt = sum(g["count"] for c in rep["comparisons"] for g in c["groups"]
                 if g["status"] != "identical")
        line = "drift: %s (%s) differ%s from %s in %s" % (
            _n(nt, "tensor"), _n(differ, "group"), "s" if nt == 1 else "", ref.name,
            ", ".join(bad_ways) or "the reference itself")
        if uninit or runi:
            line += ", %d uninitialised" % (sum(g["count"] for _, g in uninit) + len(runi))
        okw = [c["way"] for c in rep["comparisons"] if c["way"] not in bad_ways]
        if okw:
            line += "; %s agree%s" % (", ".join(okw), "s" if len(okw) == 1 else "")
    elif ncomp == 0:
        status = 2
        line = "error: nothing compared (no way but the reference could be built here)"
    else:
        status = 0
        line = "passed: every buffer of %s is bit-identical to %s's" % (
            ", ".join(c["way"] for c in rep["comparisons"]), ref.name)
    rep["verdict"] = {"line": "init-audit " + line, "exit_status": status,
                      "differing_groups": differ, "uninitialised": len(uninit) + len(runi)}
    rep["recommendation"] = judge.recommend(rep, ref.name)
    rep["files"] = {"dir": a.output}
    return rep


def _n(k, what):
    return "%d %s%s" % (k, what, "" if k == 1 else "s")


def _argv_quote(argv):
    import shlex
    return [shlex.quote(x) for x in argv]


def main(argv):
    progress = Progress(sys.stderr.isatty() and "-q" not in argv and "--quiet" not in argv)
    try:
        a = parser().parse_args(argv)
        a.argv = argv
        rep, kept = run(a, progress)
    except Trouble as e:
        progress.clear()
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2
    except KeyboardInterrupt:
        progress.clear()
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
    except Exception as e:  # never a traceback: one line, exit 2
        progress.clear()
        sys.stderr.write("%s: %s: %s\n" % (PROG, type(e).__name__,
                                           (str(e).splitlines() or [""])[0][:300]))
        if os.environ.get("BITPROBE_DEBUG"):
            import traceback
            traceback.print_exc()
        return 2
    progress.clear()
    try:
        if a.json:
            js = json.dumps(rep, indent=1) + "\n"
            if a.json == "-":
                sys.stdout.write(js)
            else:
                with open(a.json, "w") as f:
                    f.write(js)
        if a.markdown:
            with open(a.markdown, "w") as f:
                f.write(report.markdown(rep, first=max(a.first, 1)))
        if a.json != "-":
            sys.stdout.write(report.text(rep, quiet=a.quiet, first=a.first))
        sys.stdout.flush()
    except OSError as e:
        sys.stderr.write("%s: cannot write the report: %s\n" % (PROG, e))
        return 2
    return rep["verdict"]["exit_status"]
