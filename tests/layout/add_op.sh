#!/bin/sh
# What adding an op costs, proved on a copy of the tree: a unary op backed
# by SLEEF (atan) and a binary one (atan2) are added by editing only the
# sites DEVELOPERS.md's "Adding an op" lists for such ops (op_list.h: a
# BP_OP line and a BP_FN or BP_FN2 line each); the copy is configured and
# built (the CUDA kernels too, where nvcc is), and a probe runs both ops on
# cpu and oracle (and cuda, where a GPU is): every output compared, in
# fp32, bf16 and fp16, within 1 ulp of MPFR's correctly rounded value
# (cuda: 3, CUDA's documented bound for atan2f);
# where PyTorch is installed, the CPU's bits at each ATen capability are
# torch.atan's and torch.atan2's (checked with PyTorch 1.13: identical at
# avx512, avx2 and default in fp32 and bf16).
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
BP_ADD_FN2='BP_FN2(ATAN2, atan2, u35, 1, atan2, atan2)'
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
    # SLEEF's u10 builds: 1 ulp; CUDA's atanf 2 and atan2f 3 (the CUDA C++
    # Programming Guide's table of single-precision functions)
    bound = 3 if other.startswith("cuda") else 1
    if r.get("total", 0) == 0 or r.get("max_ulp", {}).get("value", 0) > bound:
        bad.append("%s %s %s: %s ulp (bound %d)" % (r["output"], r["dtype"], other,
                                                   r.get("max_ulp", {}).get("value"), bound))
missing = sorted(want - seen)
for m in missing:
    print("add_op.sh: not compared with the oracle: %s %s %s" % m)
for b in bad:
    print("add_op.sh: beyond its bound from MPFR: " + b)
sys.exit(1 if missing or bad else 0)
EOF
rc=$?
[ $rc -eq 0 ] || exit $rc
echo "add_op.sh: atan and atan2 run on $devices, within their bounds of MPFR"

# PyTorch's own bits, where it is installed: the CPU backend at each ATen
# capability this CPU has against torch.atan and torch.atan2 under the
# same ATEN_CPU_CAPABILITY (a dtype PyTorch's CPU lacks is said and left).
py=${PYTHON3:-python3}
"$py" -c 'import torch' 2>/dev/null || py=/usr/bin/python3
"$py" -c 'import torch' 2>/dev/null || { echo "add_op.sh: no PyTorch: its bits not compared"; exit 0; }
isas="avx2 default"
grep -q avx512f /proc/cpuinfo 2>/dev/null && isas="avx512 $isas"
for isa in $isas; do
    rm -rf "$work/save-$isa"
    "$tree/src/bitprobe" run "$work/probes/added-ops.yaml" --device cpu --cpu-isa "$isa" \
        --no-golden --save "$work/save-$isa" >/dev/null 2>&1
    [ $? -le 1 ] || { echo "add_op.sh: run --cpu-isa $isa failed" >&2; exit 1; }
    ATEN_CPU_CAPABILITY=$isa "$py" - "$work/save-$isa" "$isa" <<'PY' || exit 1
import glob, gzip, json, struct, sys
import torch
save, isa = sys.argv[1], sys.argv[2]
(path,) = glob.glob(save + "/added-ops/*.safetensors.gz")
raw = gzip.open(path).read()
n = struct.unpack("<Q", raw[:8])[0]
hdr, data = json.loads(raw[8:8 + n]), raw[8 + n:]
a0 = torch.arange(-700, 700) * 0.0078125
b0 = torch.arange(-350, 1050) * 0.01171875
dts = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}
bad = compared = 0
for key, m in sorted(hdr.items()):
    out = key.split("/")[-1].split(".")[0]
    if key == "__metadata__" or out not in ("t", "t2"):
        continue
    a, b = a0.to(dts[m["dtype"]]), b0.to(dts[m["dtype"]])
    try:
        r = torch.atan(a) if out == "t" else torch.atan2(a, b)
    except RuntimeError as e:
        print("add_op.sh: %s %s: PyTorch %s has no such kernel (%s)"
              % (isa, key, torch.__version__, e))
        continue
    ref = r.contiguous().view(torch.uint8).numpy().tobytes()
    lo, hi = m["data_offsets"]
    mine, w = data[lo:hi], r.element_size()
    diff = sum(ref[k * w:(k + 1) * w] != mine[k * w:(k + 1) * w] for k in range(r.numel()))
    compared += 1
    print("add_op.sh: %s %s: %d of %d elements differ from PyTorch %s"
          % (isa, key, diff, r.numel(), torch.__version__))
    bad += diff != 0
sys.exit(1 if bad or not compared else 0)
PY
done
echo "add_op.sh: the CPU's bits are PyTorch's"
exit 0
