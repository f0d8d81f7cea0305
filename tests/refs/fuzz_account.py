#!/usr/bin/env python3
"""The fuzzer's account in probes/README.md: how many random ops of each
kind the last runs checked, on which GPU and PyTorch version.

    fuzz_account.py SUMMARY.json... [--readme probes/README.md]

Reads the summary.json of one or more `fuzz_torch.py run`s (fuzz_gpu.sh
copies them to $OUT/fuzz-summary-SEED.json) and prints the Markdown block;
with --readme it replaces the block between the fuzz-account markers of
that file instead.  Needs no PyTorch.
"""
import argparse
import collections
import json
import re
import sys

BEGIN = "<!-- fuzz-account:begin (tests/refs/fuzz_account.py writes this block) -->"
END = "<!-- fuzz-account:end -->"
CHECKED = ("identical", "differ", "mkl")  # compared and required (MKL: counted)


def block(summaries):
    runs, rows = [], collections.defaultdict(collections.Counter)
    dtypes = collections.defaultdict(set)
    totals = collections.Counter()
    for s in summaries:
        isa = " ".join(s.get("bitprobe_args", []))
        models = f", {s['models']:.0%} from model code" if s.get("models") else ""
        runs.append(f"{s.get('date', '')} seed {s['seed']}, {s['probes']} probes{models} on "
                    f"{'/'.join(s.get('devices', []))} ({s['env']}"
                    f"{'; bitprobe ' + isa if isa else ''})")
        for dev, op, dt, verdict, n in s["counts"]:
            if verdict in CHECKED:
                dtypes[op].add(dt)
                rows[op][(dev, "checked")] += n
                totals[(dev, "checked")] += n
            if verdict in ("differ", "mkl", "unpinned", "lookback", "layout"):
                # one column, rows of their own below
                v = "unpinned" if verdict in ("lookback", "layout") else verdict
                rows[op][(dev, v)] += n
                totals[(dev, v)] += n
    devs = sorted({d for c in rows.values() for d, _ in c})
    versions = sorted({s.get("torch") or s["env"].split(",")[0].replace("torch ", "")
                       for s in summaries})
    out = [BEGIN, "", "Compared against PyTorch " + ", ".join(versions) + ".", "",
           "Last runs: " + "; ".join(runs) + ".", ""]
    out.append("| op | dtypes | " + " | ".join(f"{d} checked | {d} differ" for d in devs) +
               " | cpu MKL (differ, not required) | unpinned order (not required) |")
    out.append("|---" * (2 + 2 * len(devs) + 2) + "|")
    for op in sorted(rows):
        c = rows[op]
        cells = [f"{c[(d, 'checked')]} | {c[(d, 'differ')]}" for d in devs]
        unp = sum(c[(d, "unpinned")] for d in devs)
        out.append(f"| `{op}` | {' '.join(sorted(dtypes[op]))} | " + " | ".join(cells) +
                   f" | {c[('cpu', 'mkl')] or ''} | {unp or ''} |")
    out.append("| **all** | | " + " | ".join(
        f"**{totals[(d, 'checked')]}** | **{totals[(d, 'differ')]}**" for d in devs) +
        f" | {totals[('cpu', 'mkl')]} | {sum(totals[(d, 'unpinned')] for d in devs)} |")
    out += exclusions(summaries) + rates(summaries) + ["", END]
    return "\n".join(out)


# Verdicts that are not "identical" or "differ": every op set aside, with
# its count and reason (fuzz_check.REASONS, carried in each summary).
ASIDE = ("mkl", "unpinned", "lookback", "layout", "version", "old-pytorch", "unsupported", "refused",
         "no-replay", "replay-error", "own")


def exclusions(summaries):
    rows, reasons = collections.Counter(), {}
    for s in summaries:
        reasons.update(s.get("reasons", {}))
        for dev, op, dt, verdict, n in s["counts"]:
            if verdict in ASIDE:
                rows[(verdict, dev, op)] += n
        for _name, op, _msg in s.get("set_aside", []):
            rows[("dropped", "all", op or "(whole probe)")] += 1
    reasons.setdefault("dropped", "bitprobe refused the drawn op or probe before any device "
                                  "ran it (the run's log gives each message): not compared")
    out = ["", "Every op not required to be identical, with its reason:", "",
           "| set aside as | device | op | count | reason |", "|---|---|---|---|---|"]
    for (verdict, dev, op), n in sorted(rows.items()):
        out.append(f"| {verdict} | {dev} | `{op}` | {n} | {reasons.get(verdict, '')} |")
    return out


def blas_mkl(s):
    """Whether the run's PyTorch takes its fp32 CPU GEMMs from MKL."""
    return "MKL yes" in s.get("env", "")


def rates(summaries):
    """How often a GEMM differs from PyTorch, per shape class (identical
    and unpinned ones: a required GEMM that differs is a failure)."""
    acc = collections.defaultdict(lambda: [0, 0, 0, 0])
    for s in summaries:
        for dev, op, dt, cls, n, nd, el, eld in s.get("rates", []):
            r = acc[(dev, op, dt, cls)]
            for i, v in enumerate((n, nd, el, eld)):
                r[i] += v
    if not acc:
        return []
    out = ["", "GEMMs, identical or not required (CPU: MKL's sgemm for fp32, whose fitted "
           "classes bitprobe replays on MKL's AVX-512 path, oneDNN for bf16/fp16; CUDA: "
           "cuBLAS's heuristics), measured against PyTorch per shape class (K, rows M, "
           "output features N, and the BLAS call of a 2-D product: TN a transposed view "
           "as F.linear's weight, NN contiguous):", ""]
    for s in summaries:
        if "cpu" in s.get("devices", []) and not blas_mkl(s):
            out += [f"Seed {s['seed']}: the CPU rows compare against a PyTorch whose fp32 "
                    f"GEMMs are not MKL's ({s['env']}): they measure that BLAS, not the MKL "
                    "orders bitprobe replays; they are no evidence either way.", ""]
    out += ["| device | op | dtype | shape class | ops differ | elements differ |",
            "|---|---|---|---|---|---|"]
    for (dev, op, dt, cls), (n, nd, el, eld) in sorted(acc.items()):
        out.append(f"| {dev} | `{op}` | {dt} | {cls} | {nd} of {n} | {eld} of {el} "
                   f"({100.0 * eld / el if el else 0:.3g}%) |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary", nargs="+")
    ap.add_argument("--readme")
    args = ap.parse_args()
    summaries = []
    for path in args.summary:
        with open(path) as f:
            summaries.append(json.load(f))
    text = block(summaries)
    if not args.readme:
        print(text)
        return 0
    with open(args.readme) as f:
        doc = f.read()
    pat = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pat.search(doc):
        print(f"{args.readme}: no fuzz-account markers", file=sys.stderr)
        return 2
    with open(args.readme, "w") as f:
        f.write(pat.sub(lambda _m: text, doc))
    print(f"{args.readme}: fuzz account rewritten from {len(summaries)} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
