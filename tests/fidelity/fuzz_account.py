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

BEGIN = "<!-- fuzz-account:begin (tests/fidelity/fuzz_account.py writes this block) -->"
END = "<!-- fuzz-account:end -->"
CHECKED = ("identical", "differ", "mkl")  # compared and required (MKL: counted)


def block(summaries):
    runs, rows = [], collections.defaultdict(collections.Counter)
    dtypes = collections.defaultdict(set)
    totals = collections.Counter()
    for s in summaries:
        isa = " ".join(s.get("bitprobe_args", []))
        runs.append(f"{s.get('date', '')} seed {s['seed']}, {s['probes']} probes on "
                    f"{'/'.join(s.get('devices', []))} ({s['env']}"
                    f"{'; bitprobe ' + isa if isa else ''})")
        for dev, op, dt, verdict, n in s["counts"]:
            if verdict in CHECKED:
                dtypes[op].add(dt)
                rows[op][(dev, "checked")] += n
                totals[(dev, "checked")] += n
            if verdict in ("differ", "mkl", "unpinned"):
                rows[op][(dev, verdict)] += n
                totals[(dev, verdict)] += n
    devs = sorted({d for c in rows.values() for d, _ in c})
    out = [BEGIN, "", "Last runs: " + "; ".join(runs) + ".", ""]
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
    out += ["", END]
    return "\n".join(out)


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
