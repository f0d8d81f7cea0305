"""bench/init_audit.sh's measurement: ONE `bitprobe init-audit MODEL
--buffers-only` over the ways asked, each way's wall time taken from the
audit's own report (the JSON's per-way "seconds": the wall time of that
way's fresh process, as the audit measured it around the process), against
the reference measured in the same run before it: a fresh process that
builds MODEL with its parameters on meta and nothing else (no recorder, no
capture), timed the same way, from outside.

It prints as it goes: the reference, then a progress line each time one of
the audit's builds finishes (seen in the audit's -o directory: a build's
directory appears when its process starts, its way.json when it ends; these
seconds are the bench's view, the figures come from the report), and at
the end one `figure:` line per way (bench/gpu.sh's table) and one for the
whole audit.  Within --budget seconds in all: when they are spent the audit
is stopped (with every build process under it) and every way without a
figure from the report is printed MISSED, with what the bench saw of it.

Exit status: 0 every way built within --target seconds; 1 a way over the
target, not built, or the budget spent; 2 the bench could not run (the
reference failed, no bitprobe, the audit ended in trouble or wrote no
report)."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# The reference: construction alone, with the audit's own model loader and
# its parameters-on-meta context, so that the difference to a way is what
# the way adds (its recorder, its capture, its hashes).  Prints the
# construction's seconds and whether a GPU is there (the default ways).
REF = r'''
import json, sys, time
import torch
sys.path.insert(0, sys.argv[2])
from bitprobe_init import spec, ways
b = spec.Builder(spec.parse(sys.argv[1]))
t1 = time.time()
with ways.params_on_meta(torch):
    m = b.build(None)
print(json.dumps({"construct": time.time() - t1, "cuda": torch.cuda.is_available()}))
'''

POLL_S = 0.25
# The audit's steps after its builds: a directory of -o DIR each
PHASES = (("oracle", "the oracle on the RoPE formulas"),
          ("compare", "comparing every way with cpu"),
          ("explain", "bitprobe explain on the introducing ops"))


class Budget:
    def __init__(self, seconds):
        self.t0 = time.time()
        self.seconds = seconds
        self.why = "the %.0f s budget is spent" % seconds

    def end_now(self, *_):
        """SIGTERM (a timeout around the bench): the budget ends here, and
        what was measured is still reported."""
        self.seconds = min(self.seconds, self.now())
        self.why = "stopped by SIGTERM"

    def now(self):
        return time.time() - self.t0

    def left(self):
        return self.seconds - self.now()


def say(budget, msg):
    print("progress: [%6.1f s] %s" % (budget.now(), msg), flush=True)


def figure(name, value, target, met):
    print("figure: %s | %s | %s | %s" % (name, value, target,
                                         {True: "met", False: "MISSED"}.get(met, "(no target)")),
          flush=True)


def run_reference(a, budget):
    """(wall seconds, construction seconds, cuda), or raises RuntimeError;
    None when the budget ran out."""
    t0 = time.time()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", REF, a.model, a.python_dir],
                                stdout=out, stderr=err, start_new_session=True)
        try:
            while proc.poll() is None:
                if budget.left() <= 0:
                    return None
                time.sleep(POLL_S / 5)
        finally:
            stop(proc)
        wall = time.time() - t0
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            lines = [l for l in err.read().splitlines() if l.strip()]
            raise RuntimeError("the reference (a bare build of %s) failed, exit %d: %s" % (
                a.model, proc.returncode, lines[-1] if lines else "no message"))
        d = json.loads(out.read().strip().splitlines()[-1])
    return wall, d["construct"], d["cuda"]


def builds(ways):
    """The audit's build directories under -o DIR, in its order, with what
    each is (audit.py: the reference, its poisoned twin, each way, the
    poisoned twin of a way that takes memory from to_empty(), then one more
    build of each differing way capturing its introducing ops)."""
    out = []
    for w in ways:
        out.append((w, w if w != "cpu" else "cpu (the reference way)"))
        if w in ("cpu", "meta", "fsdp2-meta"):
            out.append((w + "-poisoned", "%s's poisoned twin" % w))
    for w in ways:
        out.append((os.path.join(w, "capture"), "%s again, capturing its introducing ops" % w))
    return out


def stop(proc):
    """The audit and every build process under it (its own session)."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


def run_audit(a, ways, budget, d):
    """Runs the audit, printing progress; returns (exit status or None
    when the budget ran out, its wall seconds, {build dir: seconds seen})."""
    odir, js = os.path.join(d, "o"), os.path.join(d, "report.json")
    cmd = [a.bitprobe, "init-audit", a.model, "--buffers-only", "--ways", ",".join(ways),
           "-o", odir, "--json", js, "-q"]
    print("audit: %s" % " ".join(cmd[:4] + ["--ways", ",".join(ways)]), flush=True)
    seen_start, seen = {}, {}
    phases = set()
    todo = builds(ways)
    t0 = time.time()
    with open(os.path.join(d, "audit.out"), "w") as out, \
            open(os.path.join(d, "audit.err"), "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            while True:
                done = proc.poll() is not None
                for sub, what in todo:
                    p = os.path.join(odir, sub)
                    if sub not in seen_start and os.path.isdir(p):
                        seen_start[sub] = time.time()
                    if sub in seen_start and sub not in seen and \
                            os.path.exists(os.path.join(p, "way.json")):
                        seen[sub] = time.time() - seen_start[sub]
                        try:
                            with open(os.path.join(p, "way.json")) as f:
                                st = json.load(f).get("status", "?")
                        except (OSError, ValueError):
                            st = "?"
                        say(budget, "built %s: %.1f s (%s)" % (what, seen[sub], st))
                for sub, what in PHASES:
                    if sub not in phases and os.path.isdir(os.path.join(odir, sub)):
                        phases.add(sub)
                        say(budget, what + " ...")
                if done:
                    break
                if budget.left() <= 0:
                    stop(proc)
                    say(budget, "%s: the audit stopped" % budget.why)
                    return None, time.time() - t0, seen, None
                time.sleep(POLL_S)
        finally:
            stop(proc)
    rc = proc.returncode
    wall = time.time() - t0
    say(budget, "the audit ended: exit %d after %.1f s" % (rc, wall))
    rep = None
    try:
        with open(js) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        pass
    if rep is None or rc not in (0, 1):
        with open(os.path.join(d, "audit.err")) as f:
            lines = [l.rstrip() for l in f if l.strip()]
        if rep is not None:
            lines.append(rep["verdict"]["line"])
        print("the audit failed (exit %d): %s" % (rc, lines[-1] if lines else "no report, "
                                                   "no message"))
    else:
        print("audit's verdict: %s" % rep["verdict"]["line"], flush=True)
    return rc, wall, seen, rep


def keep(prefix, d):
    """The audit's report (PREFIX.json), its text (.report.txt) and its
    stderr (.err), where they were written; False when they cannot be."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
        for f, suffix in (("report.json", ".json"), ("audit.out", ".report.txt"),
                          ("audit.err", ".err")):
            if os.path.exists(os.path.join(d, f)):
                shutil.copy(os.path.join(d, f), prefix + suffix)
    except OSError as e:
        print("cannot keep the audit's report as %s.*: %s" % (prefix, e))
        return False
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--bitprobe", required=True)
    p.add_argument("--python-dir", required=True)
    p.add_argument("--ways", help="default: cpu,meta,zero-init, and cuda where a GPU is")
    p.add_argument("--target", type=float, default=60.0)
    p.add_argument("--budget", type=float, default=540.0,
                   help="seconds for the whole bench (default 540)")
    p.add_argument("--keep", metavar="PREFIX",
                   help="keep the audit's report as PREFIX.json, its text as PREFIX.report.txt")
    p.add_argument("--label", help="the model's name in the figures (default: MODEL's last part)")
    a = p.parse_args()
    budget = Budget(a.budget)
    signal.signal(signal.SIGTERM, budget.end_now)
    if not os.access(a.bitprobe, os.X_OK):
        print("cannot run the audit: no bitprobe at '%s' (build it, or set BITPROBE)" % a.bitprobe)
        return 2
    label = a.label or os.path.basename(a.model.rstrip("/"))
    name = "init-audit %s, parameters on meta, way %%s: wall of its process" % label
    print("budget: %.0f s; target: every way at most %.0f s" % (a.budget, a.target), flush=True)
    try:
        ref = run_reference(a, budget)
    except (RuntimeError, ValueError, KeyError) as e:
        print(e)
        return 2
    if ref is None:
        say(budget, "%s before the reference ended" % budget.why)
        ways = (a.ways or "cpu,meta,zero-init").split(",")
        for w in ways:
            figure(name % w, "not built (%s during the reference)" % budget.why,
                   "<= %.0f s" % a.target, False)
        return 1
    rwall, rcons, cuda = ref
    say(budget, "reference (a fresh process building the model, parameters on meta): "
        "%.2f s (construction %.2f s)" % (rwall, rcons))
    ways = [w.strip() for w in (a.ways or "cpu,meta,zero-init" + (",cuda" if cuda else ""))
            .split(",") if w.strip()]
    if "cpu" not in ways:  # the audit builds its reference whatever --ways says
        ways.insert(0, "cpu")
    with tempfile.TemporaryDirectory(prefix="bench-init-audit-") as d:
        rc, wall, seen, rep = run_audit(a, ways, budget, d)
        kept = not a.keep or keep(a.keep, d)
    by = {w["name"]: w for w in (rep or {}).get("ways", [])}
    over, figs = [], []
    tgt = "<= %.0f s" % a.target
    print("%-12s %10s %14s %10s" % ("way", "seconds", "construction", "x ref"))
    for w in ways:
        e = by.get(w)
        if e is not None and e.get("status") == "ok":
            s = e["seconds"]
            c = e.get("build_seconds")
            print("%-12s %10.2f %14s %10.1f" % (w, s, "-" if c is None else "%.2f" % c, s / rwall))
            figs.append((name % w, "%.2f s (reference %.2f s)" % (s, rwall), tgt, s <= a.target))
            if s > a.target:
                over.append(w)
            continue
        over.append(w)
        if e is not None:
            why = "%s: %s" % (e.get("status"), e.get("why"))
        elif w in seen:
            why = "%.1f s seen, not in a report (%s)" % (
                seen[w], budget.why if rc is None else "the audit wrote none")
        else:
            why = "not built (%s)" % (budget.why if rc is None else "the audit failed"
                                      if rep is None else "not in the audit's report")
        print("%-12s %10s   %s" % (w, "-", why))
        figs.append((name % w, why + "; reference %.2f s" % rwall, tgt, False))
    for f in figs:
        figure(*f)
    nb = len(seen)
    figure("init-audit %s, parameters on meta: the whole audit (%d build%s, the oracle, the "
           "comparisons, explain)" % (label, nb, "" if nb == 1 else "s"),
           "%.1f s%s" % (wall, " (%s)" % budget.why if rc is None else ""), "-",
           None)
    if rc is None:
        print("%s: the figures above without a value from the audit's report are MISSED" %
              budget.why)
        return 1
    if rep is None or rc not in (0, 1) or not kept:
        return 2
    print("target: every way at most %.0f s: %s" % (
        a.target, "met" if not over else "MISSED by " + ", ".join(over)))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
