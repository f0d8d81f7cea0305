#!/usr/bin/env python3
"""Checks of `bitprobe invariance --collective` reports (JSON), for the GPU
scripts (bench/collectives.sh, tests/gpu/nccl_gpu.sh).

  coll_check.py maps REPORT.json
      One table per map: per interval of sizes with the same groups, each
      group's members, its inferred order and the oracle's verdict.  Fails
      (exit 1) when a reduction's group has no inferred order (beyond a
      message shorter than one probe block), when the order does not
      recompute the values' bits, when a size with two groups or more has
      no oracle verdict, when an all-gather is not a bit-exact copy or the
      ranks of a collective disagree (each exception named), or when
      nothing ran.
  coll_check.py stack STACK.json REPORT.json
      `stack --ranks W` against the map: for every pair of its collective
      configurations that ran, the bits are equal (same group) exactly when
      the map puts the two configurations in one group at the stack's
      message size (the partials' bytes, W ranks, its dtype).  Prints each
      configuration's drift against the unsharded result.  Fails on any
      disagreement, and when the pairs hold no equal pair or no differing
      pair (REQUIRE_BOTH=1).
"""
import json
import os
import sys


def size_name(b):
    for k, s in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b % k == 0:
            return "%d%s" % (b // k, s)
    return str(b)


def title(m):
    op = " " + m["op"] if m.get("op") else ""
    lib = ", " + m["library"] if m.get("library") else ""
    return "%s %s%s, %d ranks (%s%s)" % (m["collective"], m["dtype"], op, m["world"],
                                       m["engine"], lib)


def maps(path):
    r = json.load(open(path))
    cs = r["invariance"].get("collectives", [])
    problems = []
    ran = 0
    for m in cs:
        print("== " + title(m))
        reduces = m["collective"] != "all_gather"
        unavailable = {}
        for s in m["sizes"]:
            for c in s["cells"]:
                if c["state"] == "ran":
                    ran += 1
                    if c["ranks_differ"]:
                        problems.append("%s: %s at %s: %d ranks' outputs differ from rank 0's" % (
                            title(m), c["config"], size_name(s["bytes"]), c["ranks_differ"]))
                    if c["copy_differ"]:
                        problems.append("%s: %s at %s: NOT A COPY: %d elements differ" % (
                            title(m), c["config"], size_name(s["bytes"]), c["copy_differ"]))
                    if c["repeat_differ"] or c["process_differ"]:
                        print("  run to run: %s at %s: %d of %d repeats, %d of %d processes gave "
                              "other bits" % (c["config"], size_name(s["bytes"]), c["repeat_differ"],
                                              c["repeats"] - 1, c["process_differ"], c["processes"]))
                elif c["state"] in ("unavailable", "failed"):
                    unavailable.setdefault(c["config"], (size_name(s["bytes"]), c["why"]))
        for k, (at, why) in unavailable.items():
            print("  not available: %s (from %s): %s" % (k, at, why))
        prev = None
        for s in m["sizes"]:
            groups = s["groups"]
            if not groups:
                continue
            part = [tuple(g["members"]) for g in groups]
            line = "  %-6s %d group%s: %s" % (size_name(s["bytes"]), len(groups),
                                            "" if len(groups) == 1 else "s",
                                            " | ".join(", ".join(p) for p in part))
            new = part != prev or s is m["sizes"][-1]
            print(line if part != prev else "  %-6s (same groups)" % size_name(s["bytes"]))
            prev = part
            for g in groups:
                if reduces:
                    o = g.get("order") or {}
                    if not o.get("inferred"):
                        if "shorter than one probe block" not in o.get("why", ""):
                            problems.append("%s at %s: group %d has no inferred order: %s" % (
                                title(m), size_name(s["bytes"]), g["group"], o.get("why")))
                    else:
                        rc = o.get("recomputed")
                        if rc and rc["same"] != rc["checked"]:
                            problems.append("%s at %s: group %d: the order recomputes %d of %d "
                                            "elements" % (title(m), size_name(s["bytes"]),
                                                          g["group"], rc["same"], rc["checked"]))
                        if new:
                            print("      group %d order: %s" % (g["group"], o["summary"]))
                            em = o.get("emulation")
                            if em:
                                print("        %s: predicts %.1f%% of elements; same orders: %s" % (
                                    em["model"], 100 * em["agree"], em["same_set"]))
                if len(groups) > 1 and reduces:
                    orc = g.get("oracle")
                    if not orc:
                        problems.append("%s at %s: group %d has no oracle verdict" % (
                            title(m), size_name(s["bytes"]), g["group"]))
                    elif new:
                        print("      group %d: %s%d of %d sampled elements correctly rounded, max "
                              "%s ulp, mean %.3g%s" % (
                                  g["group"], "" if not g["group"] else "%d differ from group 0; " %
                                  g.get("mismatched", 0), orc["exact"], orc["sampled"],
                                  orc["max_ulp"], orc["mean_ulp"],
                                  "" if not g["group"] else "; nearer than group 0 on %d, farther on "
                                  "%d" % (orc["nearer"], orc["farther"])))
        for b in m["boundaries"]:
            if b["kind"] == "regroup":
                print("  boundary %s|%s: the configurations regroup" % (size_name(b["after"]),
                                                                       size_name(b["at"])))
            else:
                print("  boundary %s|%s: %s's orders change" % (size_name(b["after"]),
                                                               size_name(b["at"]), b["config"]))
    if not ran:
        problems.append("nothing ran")
    for p in problems:
        print("PROBLEM: " + p)
    print("%d collective maps, %d cells ran, %d problems" % (len(cs), ran, len(problems)))
    return 1 if problems else 0


def stack(spath, mpath):
    st = json.load(open(spath))
    r = json.load(open(mpath))
    tp = st["tp"]
    esize = {"fp32": 4, "bf16": 2, "fp16": 2}[st["dtype"]]
    nbytes = tp["rows"] * tp["n"] * esize
    world = st["world"]
    m = [x for x in r["invariance"]["collectives"]
         if x["collective"] == "all_reduce" and x["dtype"] == st["dtype"] and x["world"] == world
         and x.get("op") == "sum"]
    if not m:
        print("PROBLEM: the map has no all_reduce %s sum over %d ranks" % (st["dtype"], world))
        return 1
    sizes = [s for s in m[0]["sizes"] if s["bytes"] == nbytes]
    if not sizes:
        print("PROBLEM: the map has no message of %d bytes (the stack's partials)" % nbytes)
        return 1
    group = {}
    for c in sizes[0]["cells"]:
        if c["state"] == "ran":
            group[c["config"]] = c["group"]
    algos = [a for a in tp["algos"] if a["ran"]]
    print("stack --ranks %d, %s partials [%d, %d] (%s), NCCL %s; map at %s:" % (
        world, st["dtype"], tp["rows"], tp["n"], size_name(nbytes), st["nccl"], size_name(nbytes)))
    for a in algos:
        u = a["vs_unsharded"]
        print("  %-24s stack group %d, map group %s; vs unsharded: %d of %d differ, max %d ulp" % (
            a["algo"], a["group"], group.get(a["algo"], "-"), u["differ"], u["elements"],
            u["max_ulp"]))
    problems, equal, differ = [], 0, 0
    for i, a in enumerate(algos):
        for b in algos[i + 1:]:
            if a["algo"] not in group or b["algo"] not in group:
                continue
            same_stack = a["group"] == b["group"]
            same_map = group[a["algo"]] == group[b["algo"]]
            equal += same_map
            differ += not same_map
            drift_same = a["vs_unsharded"] == b["vs_unsharded"]
            if same_stack != same_map:
                problems.append("%s vs %s: the map says %s, the stack's bits are %s" % (
                    a["algo"], b["algo"], "equal" if same_map else "different",
                    "equal" if same_stack else "different"))
            elif same_map and not drift_same:
                problems.append("%s vs %s: equal bits, but different drift reported" % (
                    a["algo"], b["algo"]))
            else:
                print("  %s vs %s: %s bits, %s drift (as the map says)" % (
                    a["algo"], b["algo"], "equal" if same_map else "different",
                    "equal" if drift_same else "different"))
    if os.environ.get("REQUIRE_BOTH") == "1" and (not equal or not differ):
        problems.append("the configurations hold %d equal and %d differing pairs: both kinds are "
                        "needed" % (equal, differ))
    for p in problems:
        print("PROBLEM: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "maps":
        sys.exit(maps(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "stack":
        sys.exit(stack(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
