#!/bin/sh
# bitprobe's CUDA layer_norm, rms_norm (kernels/layer_norm.cu), softmax,
# log_softmax (kernels/rows.cu, kernels/softmax_rows.cu) and logsumexp
# (kernels/logsumexp.cu around treereduce.cu's sum) against
# PyTorch's CUDA kernels, bit for bit, on the same inputs over a spread of
# shapes and dtypes (tests/refs/norms_torch.py says which): one line
# per (op, dtype, shape), "identical" or "N of M differ, first at i:
# bitprobe 0x.., PyTorch 0x..", then the differing lines again and a total
# line.  Exit 0 when every line is identical, 1 on any difference, 2 when
# bitprobe or PyTorch cannot run.
#
# Run from a configured and built tree with CUDA, after `. .devdeps/env.sh`
# (python3: PyTorch with CUDA):
#   OUT=/tmp/out sh tests/gpu/norms_gpu.sh
# OPS=layer_norm,rms_norm,... picks the ops; everything goes to
# $OUT/norms.txt as well.
set -u
OUT=${OUT:-/tmp/out}
B=${BITPROBE:-./src/bitprobe}
PY=${PYTHON3:-python3}
OPS=${OPS:-layer_norm,rms_norm,softmax,log_softmax,logsumexp}
mkdir -p "$OUT" || exit 2
"$PY" tests/refs/norms_torch.py --bitprobe "$B" --out "$OUT/norms" --ops "$OPS" \
    >"$OUT/norms.txt" 2>&1
rc=$?
grep -v '^total:' "$OUT/norms.txt"
if grep -q ' differ, first at \|: shapes differ\|: PyTorch refuses' "$OUT/norms.txt"; then
    echo "differing:"
    grep ' differ, first at \|: shapes differ\|: PyTorch refuses' "$OUT/norms.txt"
fi
grep '^total:' "$OUT/norms.txt"
exit $rc
