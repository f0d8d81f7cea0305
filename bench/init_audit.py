"""bench/init_audit.sh's measurement: the reference (a bare construction of
MODEL with its parameters on meta, in a fresh process: what building the
model costs without bitprobe) against `bitprobe init-audit MODEL
--buffers-only` over every way, each way's wall time as the audit measured
it (its own fresh process: import, construction under the recorder,
capture), best of --repeat runs of each, interleaved."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REF = r'''
import sys, time
t0 = time.time()
import torch
sys.path.insert(0, sys.argv[2])
from bitprobe_init import spec, ways
b = spec.Builder(spec.parse(sys.argv[1]))
t1 = time.time()
with ways.params_on_meta(torch):
    m = b.build(None)
print(time.time() - t1, time.time() - t0)
'''


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--bitprobe", required=True)
    p.add_argument("--python-dir", required=True)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--target", type=float, default=60.0)
    p.add_argument("--ways")
    a = p.parse_args()
    best, ref = {}, None
    for k in range(a.repeat):
        r = subprocess.run([sys.executable, "-c", REF, a.model, a.python_dir],
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
        build, proc = (float(x) for x in r.stdout.split())
        ref = min(ref or proc, proc)
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "r.json")
            cmd = [a.bitprobe, "init-audit", a.model, "--buffers-only", "--json", js, "-q"]
            if a.ways:
                cmd += ["--ways", a.ways]
            t1 = time.time()
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
            total = time.time() - t1
            if rc not in (0, 1):
                print("the audit failed (exit %d)" % rc)
                return 2
            rep = json.load(open(js))
        for w in rep["ways"]:
            if w["status"] != "ok":
                continue
            s = w["seconds"]
            if w["name"] not in best or s < best[w["name"]][0]:
                best[w["name"]] = (s, w.get("build_seconds"))
        best.setdefault("(whole audit)", (total, None))
        best["(whole audit)"] = (min(best["(whole audit)"][0], total), None)
        print("run %d: reference %.2f s (construction %.2f s); audit %.1f s" % (k + 1, proc, build,
                                                                                 total))
    print("reference: a fresh process building the model, parameters on meta: %.2f s" % ref)
    print("%-14s %9s %14s %8s" % ("way", "seconds", "construction", "x ref"))
    over = []
    for w, (s, b) in best.items():
        print("%-14s %9.2f %14s %8.1f" % (w, s, "%.2f" % b if b is not None else "-", s / ref))
        if not w.startswith("(") and s > a.target:
            over.append(w)
    print("target: every way at most %.0f s: %s" % (a.target, "met" if not over else
                                                   "MISSED by " + ", ".join(over)))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
