#!/bin/sh
# What adding an op costs, proved on a copy of the tree: a unary op backed
# by SLEEF (atan) and a binary one (atan2) are added by editing only the
# sites DEVELOPERS.md's "Adding an op" lists for such ops (op_list.h: a
# BP_OP line and a BP_FN or BP_FN2 line each); the copy is configured and
# built (the CUDA kernels too, where nvcc is), and a probe runs both ops on
# cpu and oracle (and cuda, where a GPU is): every output compared, in
# fp32, bf16 and fp16, within 1 ulp of MPFR's correctly rounded value.
# Not part of `make check` (it builds the whole tree again: minutes).
#   sh tests/layout/add_op.sh [WORKDIR]
# Exit 0 when the ops run and agree, 1 when not, 2 when the copy cannot be
# made or built.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/bitprobe-add-op.XXXXXX")}
mkdir -p "$work" && work=$(cd "$work" && pwd)
tree=$work/tree
rm -rf "$tree" && mkdir -p "$tree" || exit 2

# The working tree as it is (tracked files and untracked ones git does not
# ignore), no build outputs.
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\n" "$f"; done' sh) \
    >"$work/files" || exit 2
(cd "$top" && tar -cf - -T "$work/files") | (cd "$tree" && tar -xf -) || exit 2

# The only edits: one line per op in op_list.h's BP_OP section (appended:
# the order is part of every probe's hash) and one in BP_FN or BP_FN2.
BP_ADD_OP='BP_OP(ATAN, "atan", A, 0, 0, 0, SAME, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY, "torch.atan(a)")
BP_OP(ATAN2, "atan2", AB, 0, 0, 0, PROMOTE, ELEMWISE, BP_OPF_FLOAT_FN | BP_OPF_COSTLY, "torch.atan2(a, b)")'
BP_ADD_FN='BP_FN(ATAN, atan, u35, 1, atan, atan)'
BP_ADD_FN2='BP_FN2(ATAN2, atan2, u35, 0, atan2, atan2)'
export BP_ADD_OP BP_ADD_FN BP_ADD_FN2
list=$tree/src/ops/op_list.h
awk '/^#ifdef BP_OP$/ { sec = "BP_ADD_OP" }
     /^#ifdef BP_FN$/ { sec = "BP_ADD_FN" }
     /^#ifdef BP_FN2$/ { sec = "BP_ADD_FN2" }
     /^#endif/ && sec != "" { print ENVIRON[sec]; done[sec] = 1; sec = "" }
     { print }
     END { exit !(done["BP_ADD_OP"] && done["BP_ADD_FN"] && done["BP_ADD_FN2"]) }' \
    "$list" >"$list.new" && mv "$list.new" "$list" || {
    echo "add_op.sh: $list lacks a BP_OP, BP_FN or BP_FN2 section" >&2
    exit 2
}
(cd "$top" && git diff --no-index --stat src/ops/op_list.h "$list")

echo "add_op.sh: building the copy in $tree (log: $work/build.log)"
(cd "$tree" && autoreconf -fi && ./configure && make -j2 src/bitprobe) \
    >"$work/build.log" 2>&1 || {
    tail -30 "$work/build.log" >&2
    echo "add_op.sh: the copy does not build" >&2
    exit 2
}
if grep -q 'warning:' "$work/build.log"; then
    grep -A3 'warning:' "$work/build.log" >&2
    echo "add_op.sh: the copy builds with warnings" >&2
    exit 1
fi

# Exact inputs on every backend: integers times a power of two, cast
# (correctly rounded) to the dtype.
mkdir -p "$work/probes"
cat >"$work/probes/added-ops.yaml" <<'EOF'
name: added-ops
description: "torch.atan(a) and torch.atan2(a, b) on a grid"
dtypes: [fp32, bf16, fp16]
ops:
  - {out: i, op: arange, start: -700, end: 700}
  - {out: j, op: arange, start: -350, end: 1050}
  - {out: ga, op: mul, a: i, b: 0.0078125}
  - {out: gb, op: mul, a: j, b: 0.01171875}
  - {out: a, op: cast, a: ga, dtype: $dtype}
  - {out: b, op: cast, a: gb, dtype: $dtype}
  - {out: t, op: atan, a: a}
  - {out: t2, op: atan2, a: a, b: b}
outputs:
  - {name: t}
  - {name: t2}
EOF
devices=cpu,oracle
nvidia-smi -L >/dev/null 2>&1 && devices=$devices,cuda
"$tree/src/bitprobe" run "$work/probes/added-ops.yaml" --device "$devices" \
    --require "$devices" --no-golden --json "$work/report.json" >"$work/run.txt" 2>&1
rc=$?
cat "$work/run.txt"
[ $rc -le 1 ] || { echo "add_op.sh: the run failed (exit $rc)" >&2; exit 1; }
python3 - "$work/report.json" "$devices" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
devices = sys.argv[2].split(",")
want = {(o, d, b) for o in ("t", "t2") for d in ("fp32", "bf16", "fp16")
        for b in devices if b != "oracle"}
seen, bad = set(), []
for r in rep["results"]:
    if r.get("kind") != "cross" or not r.get("compared") or "oracle" not in (r["a"], r["b"]):
        continue
    other = r["b"] if r["a"] == "oracle" else r["a"]
    seen.add((r["output"], r["dtype"], other))
    if r.get("total", 0) == 0 or r.get("max_ulp", {}).get("value", 0) > 1:
        bad.append("%s %s %s: %s ulp" % (r["output"], r["dtype"], other,
                                        r.get("max_ulp", {}).get("value")))
missing = sorted(want - seen)
for m in missing:
    print("add_op.sh: not compared with the oracle: %s %s %s" % m)
for b in bad:
    print("add_op.sh: beyond 1 ulp of MPFR: " + b)
sys.exit(1 if missing or bad else 0)
EOF
rc=$?
[ $rc -eq 0 ] && echo "add_op.sh: atan and atan2 run on $devices, within 1 ulp of MPFR"
exit $rc
