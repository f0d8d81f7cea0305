#!/bin/sh
# The CPU reductions against PyTorch's CPU kernels on the GPU machine's
# CPU (nothing runs on the GPU): tests/refs/order_torch.py's
# order-sensitive probes (sum, sum(dtype=fp32), mean, logsumexp,
# layer_norm, prod, var, rms_norm in fp32, bf16, fp16, fp64) with the
# host's ATen capability and again under ATEN_CPU_CAPABILITY=avx2 against
# --cpu-isa avx2, then the random fuzzer focused on the same ops.  Every op
# must be bit-identical (PyTorch 2.x: no version differences apply).
#
# Run from a configured and built tree:
#   OUT=/tmp/out sh tests/gpu/cpu_order_gpu.sh
# Expected: two lines "order_torch: N identical, 0 failing ops" per seed
# (SEEDS, default "1 2 3"), then "cpu: M ops replayed: ..., 0 differ, ..."
# and "cpu differences by op: none"; the last line "cpu_order_gpu: PASS".
# Exit 1 on a difference (the FAIL lines name probe, op and first element;
# the probes stay under $OUT), 77 without PyTorch.
set -u
OUT=${OUT:-/tmp/out}
SEEDS=${SEEDS:-1 2 3}
HERE=$(dirname "$0")
BP=${BITPROBE:-src/bitprobe}
PY=${PYTHON3:-python3}
mkdir -p "$OUT"
"$PY" -c 'import torch' 2>/dev/null || { echo "cpu_order_gpu: no PyTorch: SKIP"; exit 77; }
bad=0
for s in $SEEDS; do
    "$PY" "$HERE/../refs/order_torch.py" --bitprobe "$BP" --seed "$s" --probes 60 \
        --out "$OUT/order-host-$s" >"$OUT/order-host-$s.log" 2>&1
    rc=$?
    grep -v '^FAIL' "$OUT/order-host-$s.log"; grep '^FAIL' "$OUT/order-host-$s.log" | head -10
    [ $rc -eq 0 ] || bad=1
    "$PY" "$HERE/../refs/order_torch.py" --bitprobe "$BP" --seed "$s" --probes 60 \
        --aten-cpu-capability avx2 --bitprobe-arg=--cpu-isa --bitprobe-arg=avx2 \
        --out "$OUT/order-avx2-$s" >"$OUT/order-avx2-$s.log" 2>&1
    rc=$?
    grep -v '^FAIL' "$OUT/order-avx2-$s.log"; grep '^FAIL' "$OUT/order-avx2-$s.log" | head -10
    [ $rc -eq 0 ] || bad=1
done
"$PY" "$HERE/../refs/fuzz_torch.py" run --bitprobe "$BP" --seed "${FUZZ_SEED:-4242}" --devices cpu \
    --each-op 24 --focus-ops sum,mean,logsumexp,layer_norm,prod,var,rms_norm --ops 20 \
    --jobs "${JOBS:-4}" --batch 8 --out "$OUT/fuzz-order" >"$OUT/fuzz-order.log" 2>&1
rc=$?
grep -E '^cpu|^  cpu  (sum|mean|logsumexp|layer_norm|prod|var|rms_norm) |^FAIL' "$OUT/fuzz-order.log" | head -40
[ $rc -eq 0 ] || bad=1
if [ $bad -eq 0 ]; then echo "cpu_order_gpu: PASS"; else echo "cpu_order_gpu: FAIL"; fi
exit $bad
